"""Slider (prismatic) joint: b's anchor stays on the line through a's anchor along a's axis n_a, and
the bodies keep their relative orientation.

    delta = p_b - p_a,   C_i = t_i . delta,  t_1 = u_a, t_2 = n_a x u_a  (fixed in a)      (2 rows)
    rotation error of q_b against q_a q_rel                                      (3 rows, common.angular_lock_rows)

Because t_i turns with body a, dC_i/dt = t_i . (v_b + w_b x r_b - v_a - w_a x r_a) + (w_a x t_i) . delta,
which is the linear row along t_i with body a's lever r_a + delta (001 §3.4's recipe; Box2D's prismatic
joint has the same Jacobian): J = [-t, -((r_a + delta) x t), t, r_b x t].

The translation s = n_a . delta is the joint coordinate; its rate is the linear row along n_a with the
same levers, which carries the limits and the motor.
"""

from __future__ import annotations

from tumble._core.config import kernel
from tumble._core.dynamics.joints.common import linear_row, set_equality


@kernel
def line_rows(r, j, slot, ia, ib, na, ua, delta, ra_line, rb, jp, warm, body_inv_mass,
              body_inv_inertia_world, joint_impulse, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax,
              row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, t1, t2):
    """The two rows keeping p_b on a's line (``ra_line`` = r_a + delta), along t1 = u_a (a's reference
    direction, perpendicular to the axis) and t2 = n_a x u_a: both turn with body a, which the
    Jacobian assumes (a basis built from n_a alone would not turn with a rotation about n_a, and
    the rows would be exact only on the line). Returns r + 2."""
    for k in range(3):
        t1[k] = ua[k]
    t2[0] = na[1] * ua[2] - na[2] * ua[1]
    t2[1] = na[2] * ua[0] - na[0] * ua[2]
    t2[2] = na[0] * ua[1] - na[1] * ua[0]
    linear_row(r, ia, ib, t1, ra_line, rb, body_inv_mass, body_inv_inertia_world, row_body, row_J, row_B,
               row_inv_diag)
    set_equality(r, j, slot, t1[0] * delta[0] + t1[1] * delta[1] + t1[2] * delta[2], jp, warm,
                 joint_impulse, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind,
                 row_lambda,
                 row_owner, row_cfm)
    linear_row(r + 1, ia, ib, t2, ra_line, rb, body_inv_mass, body_inv_inertia_world, row_body, row_J, row_B,
               row_inv_diag)
    set_equality(r + 1, j, slot + 1, t2[0] * delta[0] + t2[1] * delta[1] + t2[2] * delta[2], jp,
                 warm, joint_impulse, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu,
                 row_kind,
                 row_lambda, row_owner, row_cfm)
    return r + 2
