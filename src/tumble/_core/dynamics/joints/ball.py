"""Ball-and-socket joint: the anchor points of both bodies coincide.

    C = p_b - p_a = (x_b + r_b) - (x_a + r_a)                     (3 equations)
    dC/dt = v_b + w_b x r_b - v_a - w_a x r_a

so each world axis e_k gives the linear row J = [-e_k, -(r_a x e_k), e_k, r_b x e_k] (001 eq. 11 with
d = e_k: the recipe of 001 §3.4 applied to one coordinate of the point constraint).
"""

from __future__ import annotations

from tumble._core import types as T
from tumble._core.config import kernel
from tumble._core.dynamics.joints.common import put_linear


@kernel(inline="always")
def put_point_rows(r, ia, ib, pa0, pa1, pa2, pb0, pb1, pb2, ra0, ra1, ra2, rb0, rb1, rb2, row_body, row_J, row_kind,
                   row_bias):
    """The three rows of p_b = p_a (rows r..r+2, errors p_b - p_a; common.put_linear). Returns r + 3."""
    put_linear(r, ia, ib, 1.0, 0.0, 0.0, ra0, ra1, ra2, rb0, rb1, rb2, T.ROW_JOINT, pb0 - pa0, row_body, row_J,
               row_kind, row_bias)
    put_linear(r + 1, ia, ib, 0.0, 1.0, 0.0, ra0, ra1, ra2, rb0, rb1, rb2, T.ROW_JOINT, pb1 - pa1, row_body, row_J,
               row_kind, row_bias)
    put_linear(r + 2, ia, ib, 0.0, 0.0, 1.0, ra0, ra1, ra2, rb0, rb1, rb2, T.ROW_JOINT, pb2 - pa2, row_body, row_J,
               row_kind, row_bias)
    return r + 3
