"""Distance joint (Catto 001 eq. 8-11): the anchor points stay L apart.

The paper writes C = 1/2 ((p_b - p_a)^2 - L^2) with the Jacobian [-d, -(r_a x d), d, r_b x d],
d = p_b - p_a (eq. 11). Dividing by |d| gives the same constraint surface with a row of unit
direction n = d / |d| and an error in metres, C = |d| - L, which keeps the row's scale (and the
Baumgarte feedback) independent of the length:

    J = [-n^T, -(r_a x n)^T, n^T, (r_b x n)^T],   J v = d|d|/dt.

With a frequency it is a spring-damper instead (a soft row, common.soft_coefficients).
"""

from __future__ import annotations

import math

from tumble._core.config import kernel
from tumble._core.dynamics.joints.common import linear_row, set_equality, soft_coefficients


@kernel
def distance_row(r, j, slot, ia, ib, pa, pb, ra, rb, length, frequency, damping_ratio, dt, jp, warm,
                 body_inv_mass, body_inv_inertia_world, joint_impulse, row_body, row_J, row_B, row_inv_diag, row_bias,
                 row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, n):
    """The one row of |p_b - p_a| = length. Returns r + 1."""
    dist = 0.0
    for k in range(3):
        n[k] = pb[k] - pa[k]
        dist += n[k] * n[k]
    dist = math.sqrt(dist)
    if dist > 1e-12:
        for k in range(3):
            n[k] /= dist
    else:  # coincident points: any direction is as good; the error pushes them apart along it
        n[0] = 0.0
        n[1] = 0.0
        n[2] = 1.0
    linear_row(r, ia, ib, n, ra, rb, body_inv_mass, body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag)
    error = dist - length
    set_equality(r, j, slot, error, jp, warm, joint_impulse, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi,
                 row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm)
    if frequency > 0.0:
        k, gamma = soft_coefficients(frequency, damping_ratio, dt, row_inv_diag[r])
        row_bias[r] = -k * error
        row_bias_relax[r] = row_bias[r]
        row_cfm[r] = gamma
    return r + 1
