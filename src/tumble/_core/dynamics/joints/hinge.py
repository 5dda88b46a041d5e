"""Hinge (revolute) joint: a ball joint whose bodies also keep their copies of the axis parallel.

    C_point = p_b - p_a                                            (3 rows, ball.put_point_rows)
    C_axis  = t_i . (n_a x n_b),  i = 1, 2,  t_1, t_2 _|_ n_a       (2 rows)

With n_b close to n_a, d/dt (n_a x n_b) = (w_b - w_a) minus its component along the axis, so the two
axis rows are the angular rows J = [0, -t_i, 0, t_i] (common.put_angular).

The hinge angle is theta = atan2(n_a . (u_a x u_b), u_a . u_b) between the reference directions u_a,
u_b (perpendicular to the axis, equal at creation), unwrapped across turns (``unwrap``); its rate is
n_a . (w_b - w_a), the angular row about n_a, which carries the limits (two one-sided rows,
common.limit_target) and the motor (common.motor_target).
"""

from __future__ import annotations

import math

from tumble._core import types as T
from tumble._core.config import kernel
from tumble._core.dynamics.joints.common import put_angular


@kernel(inline="always")
def hinge_angle(na0, na1, na2, ua0, ua1, ua2, ub0, ub1, ub2):
    """Angle [rad] in (-pi, pi] from u_a to u_b about n_a."""
    cx = ua1 * ub2 - ua2 * ub1
    cy = ua2 * ub0 - ua0 * ub2
    cz = ua0 * ub1 - ua1 * ub0
    return math.atan2(na0 * cx + na1 * cy + na2 * cz, ua0 * ub0 + ua1 * ub1 + ua2 * ub2)


@kernel(inline="always")
def unwrap(previous, raw):
    """The angle equal to ``raw`` modulo 2 pi that is closest to ``previous`` (continuous across turns)."""
    d = raw - previous
    d = d - 2.0 * math.pi * math.floor((d + math.pi) / (2.0 * math.pi))
    return previous + d


@kernel(inline="always")
def put_axis_rows(r, ia, ib, na0, na1, na2, ua0, ua1, ua2, nb0, nb1, nb2, row_body, row_J, row_kind, row_bias):
    """The two rows that keep n_b parallel to n_a (rows r, r+1), about t1 = u_a and t2 = n_a x u_a
    (perpendicular to the axis and turning with body a), errors t_i . (n_a x n_b). Returns r + 2."""
    t20 = na1 * ua2 - na2 * ua1
    t21 = na2 * ua0 - na0 * ua2
    t22 = na0 * ua1 - na1 * ua0
    e0 = na1 * nb2 - na2 * nb1
    e1 = na2 * nb0 - na0 * nb2
    e2 = na0 * nb1 - na1 * nb0
    put_angular(r, ia, ib, ua0, ua1, ua2, T.ROW_JOINT, ua0 * e0 + ua1 * e1 + ua2 * e2, row_body, row_J, row_kind,
                row_bias)
    put_angular(r + 1, ia, ib, t20, t21, t22, T.ROW_JOINT, t20 * e0 + t21 * e1 + t22 * e2, row_body, row_J,
                row_kind, row_bias)
    return r + 2
