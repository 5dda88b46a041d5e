"""Ball-and-socket joint: the anchor points of both bodies coincide.

    C = p_b - p_a = (x_b + r_b) - (x_a + r_a)                     (3 equations)
    dC/dt = v_b + w_b x r_b - v_a - w_a x r_a

so each world axis e_k gives the linear row J = [-e_k, -(r_a x e_k), e_k, r_b x e_k] (001 eq. 11 with
d = e_k: the recipe of 001 §3.4 applied to one coordinate of the point constraint).
"""

from __future__ import annotations

from tumble._core.config import kernel
from tumble._core.dynamics.joints.common import linear_row, set_equality


@kernel
def point_rows(r, j, slot, ia, ib, pa, pb, ra, rb, jp, warm, body_inv_mass, body_inv_inertia_world,
               joint_impulse, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link,
               row_mu, row_kind, row_lambda, row_owner, row_cfm, d):
    """The three rows of p_b = p_a (rows r..r+2, impulse slots slot..slot+2). Returns r + 3."""
    for k in range(3):
        for c in range(3):
            d[c] = 0.0
        d[k] = 1.0
        linear_row(r + k, ia, ib, d, ra, rb, body_inv_mass, body_inv_inertia_world, row_body, row_J, row_B,
                   row_inv_diag)
        set_equality(r + k, j, slot + k, pb[k] - pa[k], jp, warm, joint_impulse, row_inv_diag, row_bias,
                     row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm)
    return r + 3
