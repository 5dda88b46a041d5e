"""Slider (prismatic) joint: b's anchor stays on the line through a's anchor along a's axis n_a, and
the bodies keep their relative orientation.

    delta = p_b - p_a,   C_i = t_i . delta,  t_1 = u_a, t_2 = n_a x u_a  (fixed in a)      (2 rows)
    rotation error of q_b against q_a q_rel                                      (3 rows, common.put_angular_lock)

Because t_i turns with body a, dC_i/dt = t_i . (v_b + w_b x r_b - v_a - w_a x r_a) + (w_a x t_i) . delta,
which is the linear row along t_i with body a's lever r_a + delta (001 §3.4's recipe; Box2D's prismatic
joint has the same Jacobian): J = [-t, -((r_a + delta) x t), t, r_b x t].

The translation s = n_a . delta is the joint coordinate; its rate is the linear row along n_a with the
same levers, which carries the limits and the motor.
"""

from __future__ import annotations

from tumble._core import types as T
from tumble._core.config import kernel
from tumble._core.dynamics.joints.common import put_linear


@kernel(inline="always")
def put_line_rows(r, ia, ib, na0, na1, na2, ua0, ua1, ua2, de0, de1, de2, rl0, rl1, rl2, rb0, rb1, rb2, row_body,
                  row_J, row_kind, row_bias):
    """The two rows keeping p_b on a's line (lever ``rl`` = r_a + delta for a, ``de`` = delta), along
    t1 = u_a (a's reference direction, perpendicular to the axis) and t2 = n_a x u_a: both turn with
    body a, which the Jacobian assumes (a basis built from n_a alone would not turn with a rotation
    about n_a, and the rows would be exact only on the line); errors t_i . delta. Returns r + 2."""
    t20 = na1 * ua2 - na2 * ua1
    t21 = na2 * ua0 - na0 * ua2
    t22 = na0 * ua1 - na1 * ua0
    put_linear(r, ia, ib, ua0, ua1, ua2, rl0, rl1, rl2, rb0, rb1, rb2, T.ROW_JOINT, ua0 * de0 + ua1 * de1 + ua2 * de2,
               row_body, row_J, row_kind, row_bias)
    put_linear(r + 1, ia, ib, t20, t21, t22, rl0, rl1, rl2, rb0, rb1, rb2, T.ROW_JOINT,
               t20 * de0 + t21 * de1 + t22 * de2, row_body, row_J, row_kind, row_bias)
    return r + 2
