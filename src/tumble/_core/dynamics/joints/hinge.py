"""Hinge (revolute) joint: a ball joint whose bodies also keep their copies of the axis parallel.

    C_point = p_b - p_a                                            (3 rows, ball.point_rows)
    C_axis  = t_i . (n_a x n_b),  i = 1, 2,  t_1, t_2 _|_ n_a       (2 rows)

With n_b close to n_a, d/dt (n_a x n_b) = (w_b - w_a) minus its component along the axis, so the two
axis rows are the angular rows J = [0, -t_i, 0, t_i] (common.fill_angular_row).

The hinge angle is theta = atan2(n_a . (u_a x u_b), u_a . u_b) between the reference directions u_a,
u_b (perpendicular to the axis, equal at creation), unwrapped across turns (``unwrap``); its rate is
n_a . (w_b - w_a), the angular row about n_a, which carries the limits (two one-sided rows,
common.set_limit) and the motor (common.set_motor).
"""

from __future__ import annotations

import math

from tumble._core.config import kernel
from tumble._core.dynamics.joints.common import fill_angular_row, set_equality


@kernel
def hinge_angle(na, ua, ub):
    """Angle [rad] in (-pi, pi] from u_a to u_b about n_a."""
    cx = ua[1] * ub[2] - ua[2] * ub[1]
    cy = ua[2] * ub[0] - ua[0] * ub[2]
    cz = ua[0] * ub[1] - ua[1] * ub[0]
    return math.atan2(na[0] * cx + na[1] * cy + na[2] * cz, ua[0] * ub[0] + ua[1] * ub[1] + ua[2] * ub[2])


@kernel
def unwrap(previous, raw):
    """The angle equal to ``raw`` modulo 2 pi that is closest to ``previous`` (continuous across turns)."""
    d = raw - previous
    d = d - 2.0 * math.pi * math.floor((d + math.pi) / (2.0 * math.pi))
    return previous + d


@kernel
def axis_rows(r, j, slot, ia, ib, na, ua, nb, jp, warm, body_inv_inertia_world, joint_impulse, row_body,
              row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind,
              row_lambda, row_owner, row_cfm, t1, t2, e):
    """The two rows that keep n_b parallel to n_a (rows r, r+1), about t1 = u_a and t2 = n_a x u_a
    (perpendicular to the axis and turning with body a). Returns r + 2."""
    for k in range(3):
        t1[k] = ua[k]
    t2[0] = na[1] * ua[2] - na[2] * ua[1]
    t2[1] = na[2] * ua[0] - na[0] * ua[2]
    t2[2] = na[0] * ua[1] - na[1] * ua[0]
    e[0] = na[1] * nb[2] - na[2] * nb[1]
    e[1] = na[2] * nb[0] - na[0] * nb[2]
    e[2] = na[0] * nb[1] - na[1] * nb[0]
    fill_angular_row(r, ia, ib, t1, body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag)
    set_equality(r, j, slot, t1[0] * e[0] + t1[1] * e[1] + t1[2] * e[2], jp, warm, joint_impulse, row_inv_diag,
                 row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm)
    fill_angular_row(r + 1, ia, ib, t2, body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag)
    set_equality(r + 1, j, slot + 1, t2[0] * e[0] + t2[1] * e[1] + t2[2] * e[2], jp, warm,
                 joint_impulse, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind,
                 row_lambda,
                 row_owner, row_cfm)
    return r + 2
