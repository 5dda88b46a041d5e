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

from tumble._core import types as T
from tumble._core.config import kernel
from tumble._core.dynamics.joints.common import put_linear


@kernel(inline="always")
def put_distance_row(r, ia, ib, pa0, pa1, pa2, pb0, pb1, pb2, ra0, ra1, ra2, rb0, rb1, rb2, length, row_body, row_J,
                     row_kind, row_bias):
    """The one row of |p_b - p_a| = length, error |p_b - p_a| - length (the spring's soft target is
    set by rows.write_joint_rows from the row's 1 / (J M^-1 J^T)). Returns r + 1."""
    n0 = pb0 - pa0
    n1 = pb1 - pa1
    n2 = pb2 - pa2
    dist = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    if dist > 1e-12:
        n0 /= dist
        n1 /= dist
        n2 /= dist
    else:  # coincident points: any direction is as good; the error pushes them apart along it
        n0 = 0.0
        n1 = 0.0
        n2 = 1.0
    put_linear(r, ia, ib, n0, n1, n2, ra0, ra1, ra2, rb0, rb1, rb2, T.ROW_JOINT, dist - length, row_body, row_J,
               row_kind, row_bias)
    return r + 1
