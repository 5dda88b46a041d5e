"""Fixed joint (weld): no relative motion.

    C_point = p_b - p_a                                  (3 rows, ball.point_rows)
    C_rot   = rotation vector of q_b (q_a q_rel)^-1      (3 rows, common.angular_lock_rows)

q_rel = q_a0^-1 q_b0 is the relative orientation at creation. A weld made of rows is as stiff as the
iterative solver makes it: a cantilever of welded bodies sags by the error the sweeps leave, which the
Baumgarte feedback then holds at a steady value (reported by the tests and the bench).
"""

from __future__ import annotations

from tumble._core.config import kernel
from tumble._core.dynamics.joints.ball import point_rows
from tumble._core.dynamics.joints.common import angular_lock_rows


@kernel
def weld_rows(r, j, slot, ia, ib, pa, pb, ra, rb, qa, qb, rel, jp, warm, body_inv_mass,
              body_inv_inertia_world, joint_impulse, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax,
              row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, d, err):
    """The six rows of a weld. Returns r + 6."""
    r = point_rows(r, j, slot, ia, ib, pa, pb, ra, rb, jp, warm, body_inv_mass, body_inv_inertia_world,
                   joint_impulse, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi,
                   row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, d)
    return angular_lock_rows(r, j, slot + 3, ia, ib, qa, qb, rel, jp, warm, body_inv_inertia_world,
                             joint_impulse, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo,
                             row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, err, d)
