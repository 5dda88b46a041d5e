"""Second derivative of the elastic energy (energy.py) per tet, for the implicit integrator's Newton steps.

Differentiating P = a cof C + beta J^(-2/3) C - beta/3 d1 J^(-5/3) cof C, a = alpha/2 (1 - J^-2), along a
direction dC (dJ = cof C : dC, d d1 = 2 C : dC, d cof C columns: dC1 x C2 + C1 x dC2, and cyclically):

    dP = (alpha J^-3 dJ) cof C + a dcof
         + beta (J^(-2/3) dC - 2/3 J^(-5/3) dJ C)
         - beta/3 (d d1 J^(-5/3) - 5/3 d1 J^(-8/3) dJ) cof C - beta/3 d1 J^(-5/3) dcof

Moving vertex k along axis c gives dC = e_c g_k^T (g_k as in energy.py), and the row of the tet's 12 x 12
Hessian for vertex k', axis c' is V0 (dP g_k')_c'. The exact Hessian is used (not a positive-definite
projection); the Newton driver falls back to a mass-matrix direction where it is not a descent direction.
"""

from __future__ import annotations

import numpy as np

from tumble._core.config import kernel


@kernel
def elastic_hessian_triplets(positions, tets, rest_inverse, rest_volume, tet_bulk, tet_shear, rows, cols, values):
    """Write the 144 entries of every tet's energy Hessian (N/m) as COO triplets: rows/cols are global
    degrees of freedom 3 * vertex + axis; duplicates are summed by the caller's sparse conversion.
    Return False when some tet has J <= 0 (no Hessian there)."""
    F = np.empty((3, 3))
    cof = np.empty((3, 3))
    dF = np.empty((3, 3))
    dcof = np.empty((3, 3))
    dP = np.empty((3, 3))
    g = np.empty((4, 3))
    for t in range(tets.shape[0]):
        i0 = tets[t, 0]
        for r in range(3):
            b1 = positions[tets[t, 1], r] - positions[i0, r]
            b2 = positions[tets[t, 2], r] - positions[i0, r]
            b3 = positions[tets[t, 3], r] - positions[i0, r]
            for c in range(3):
                F[r, c] = b1 * rest_inverse[t, 0, c] + b2 * rest_inverse[t, 1, c] + b3 * rest_inverse[t, 2, c]
        for c in range(3):
            a = (c + 1) % 3
            b = (c + 2) % 3
            cof[0, c] = F[1, a] * F[2, b] - F[2, a] * F[1, b]
            cof[1, c] = F[2, a] * F[0, b] - F[0, a] * F[2, b]
            cof[2, c] = F[0, a] * F[1, b] - F[1, a] * F[0, b]
        J = F[0, 0] * cof[0, 0] + F[1, 0] * cof[1, 0] + F[2, 0] * cof[2, 0]
        if J <= 0.0:
            return False
        d1 = 0.0
        for r in range(3):
            for c in range(3):
                d1 += F[r, c] * F[r, c]
        alpha = tet_bulk[t]
        beta = tet_shear[t]
        j23 = J ** (-2.0 / 3.0)
        j53 = j23 / J
        j83 = j53 / J
        a_vol = 0.5 * alpha * (1.0 - 1.0 / (J * J))
        for c in range(3):
            g[1, c] = rest_inverse[t, 0, c]
            g[2, c] = rest_inverse[t, 1, c]
            g[3, c] = rest_inverse[t, 2, c]
            g[0, c] = -(g[1, c] + g[2, c] + g[3, c])
        v0 = rest_volume[t]
        base = t * 144
        for k in range(4):
            for axis in range(3):
                # dF = e_axis g_k^T
                for r in range(3):
                    for c in range(3):
                        dF[r, c] = g[k, c] if r == axis else 0.0
                dJ = 0.0
                dd1 = 0.0
                for c in range(3):
                    dJ += cof[axis, c] * dF[axis, c]
                    dd1 += 2.0 * F[axis, c] * dF[axis, c]
                for c in range(3):
                    a = (c + 1) % 3
                    b = (c + 2) % 3
                    # d(F_a x F_b) = dF_a x F_b + F_a x dF_b
                    dcof[0, c] = (dF[1, a] * F[2, b] - dF[2, a] * F[1, b]) + (F[1, a] * dF[2, b] - F[2, a] * dF[1, b])
                    dcof[1, c] = (dF[2, a] * F[0, b] - dF[0, a] * F[2, b]) + (F[2, a] * dF[0, b] - F[0, a] * dF[2, b])
                    dcof[2, c] = (dF[0, a] * F[1, b] - dF[1, a] * F[0, b]) + (F[0, a] * dF[1, b] - F[1, a] * dF[0, b])
                cof_coef = alpha * dJ / (J * J * J) - beta / 3.0 * (dd1 * j53 - 5.0 / 3.0 * d1 * j83 * dJ)
                dcof_coef = a_vol - beta / 3.0 * d1 * j53
                for r in range(3):
                    for c in range(3):
                        dP[r, c] = (cof_coef * cof[r, c] + dcof_coef * dcof[r, c]
                                    + beta * (j23 * dF[r, c] - 2.0 / 3.0 * j53 * dJ * F[r, c]))
                col = 3 * tets[t, k] + axis
                for k2 in range(4):
                    for r in range(3):
                        entry = base + (k * 3 + axis) * 12 + k2 * 3 + r
                        rows[entry] = 3 * tets[t, k2] + r
                        cols[entry] = col
                        values[entry] = v0 * (dP[r, 0] * g[k2, 0] + dP[r, 1] * g[k2, 1] + dP[r, 2] * g[k2, 2])
    return True
