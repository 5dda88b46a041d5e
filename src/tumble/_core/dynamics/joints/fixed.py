"""Fixed joint (weld): no relative motion.

    C_point = p_b - p_a                                  (3 rows, ball.put_point_rows)
    C_rot   = rotation vector of q_b (q_a q_rel)^-1      (3 rows, common.put_angular_lock)

q_rel = q_a0^-1 q_b0 is the relative orientation at creation. A weld made of rows is as stiff as the
iterative solver makes it: a cantilever of welded bodies sags by the error the sweeps leave, which the
Baumgarte feedback then holds at a steady value (reported by the tests and the bench).
"""

from __future__ import annotations

from tumble._core.config import kernel
from tumble._core.dynamics.joints.ball import put_point_rows
from tumble._core.dynamics.joints.common import put_angular_lock


@kernel(inline="always")
def put_weld_rows(r, ia, ib, j, pa0, pa1, pa2, pb0, pb1, pb2, ra0, ra1, ra2, rb0, rb1, rb2, qa0, qa1, qa2, qa3, qb0,
                  qb1, qb2, qb3, joint_rel_q, row_body, row_J, row_kind, row_bias):
    """The six rows of weld j (q_rel = ``joint_rel_q[j]``). Returns r + 6."""
    r = put_point_rows(r, ia, ib, pa0, pa1, pa2, pb0, pb1, pb2, ra0, ra1, ra2, rb0, rb1, rb2, row_body, row_J,
                       row_kind, row_bias)
    return put_angular_lock(r, ia, ib, qa0, qa1, qa2, qa3, qb0, qb1, qb2, qb3, joint_rel_q[j, 0], joint_rel_q[j, 1],
                            joint_rel_q[j, 2], joint_rel_q[j, 3], row_body, row_J, row_kind, row_bias)
