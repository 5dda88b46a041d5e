"""Elastic energy of paper 003 (eq. 10-15) and its hand-derived gradient (the elastic forces), per tet.

Strain (eq. 10, §5.3). Within a tet the configuration is affine, so its Jacobian is constant:
C = B A^-1, with B = [p1 - p0, p2 - p0, p3 - p0] the current edge vectors and A the rest ones, written as
*columns* (the paper prints them as rows; with rows B A^-1 is similar to C^T, not C, and C^T C would not
have the invariants of eq. 12-14 in general). D = C^T C is the metric tensor, with the coefficients of its
characteristic polynomial (eq. 11-14): d1 = tr D = sum C_ij^2, d2 = tr cof D, d3 = det D = (det C)^2.

Energy density (eq. 15). The printed formula is garbled; we reconstruct it from the properties the paper
states for it: (i) zero, and minimum, at D = I (d1 = d2 = 3, d3 = 1); (ii) -> infinity as the volume goes to
zero, d3 -> 0, so elements never turn inside out; (iii) for small strain alpha and beta are the bulk and
shear moduli (Hooke). With J = det C = sqrt(d3) > 0:

    psi(C) = alpha/2 (J + 1/J - 2) + beta/2 (d1 J^(-2/3) - 3)

* (i): at C = I both brackets vanish; J + 1/J >= 2 and d1 J^(-2/3) >= 3 (AM-GM on the squared singular
  values), so psi >= 0.
* (ii): J + 1/J -> infinity as J -> 0+.
* (iii): with C = I + e (e small, symmetric part s): J + 1/J - 2 = (tr s)^2 + O(|e|^3) and
  d1 J^(-2/3) - 3 = 2 |dev s|^2 + O(|e|^3), so psi = alpha/2 (tr s)^2 + beta |dev s|^2: linear elasticity
  with bulk modulus alpha and shear modulus beta.
* psi depends on D only through d1 and d3 (rotation invariance and isotropy, §4.1).

A state with some J <= 0 has infinite energy: the kernels report it (``min_volume_ratio <= 0``) and the
integrators reject the step (RKF halves it, Newton backtracks), which is how "never inverts" is enforced
for a discrete integrator.

Forces: P = d psi / d C (first Piola stress) with d J / d C = cof C (the cofactor matrix, J C^-T) and
d d1 / d C = 2 C:
    P = alpha/2 (1 - J^-2) cof C + beta (J^(-2/3) C - d1/3 J^(-5/3) cof C).
Since C = B A^-1, d psi / d p_k = P g_k with g_k = A^-T e_k (k = 1..3) and g_0 = -(g_1 + g_2 + g_3);
the tet's energy is V0 psi (V0 = rest volume, §5.3), so the force on vertex k is f_k = -V0 P g_k.
"""

from __future__ import annotations

import numpy as np

from tumble._core.config import kernel


def rest_shape(vertices: np.ndarray, tets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rest data per tet: ``rest_inverse`` (m, 3, 3) = A^-1 (A: rest edges as columns) and
    ``rest_volume`` (m,) m^3 = det A / 6. Done once per body, vectorized."""
    p = vertices[tets]
    edges = np.stack([p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]], axis=2)  # columns
    return np.ascontiguousarray(np.linalg.inv(edges)), np.linalg.det(edges) / 6.0


@kernel
def elastic_forces(positions, tets, rest_inverse, rest_volume, tet_bulk, tet_shear, forces):
    """Add the elastic forces (N) of every tet to ``forces`` (n, 3); return (elastic energy J, the smallest
    volume ratio J = det C over the tets). When some J <= 0 the energy is +inf and the forces are not
    meaningful (the caller rejects the state)."""
    energy = 0.0
    min_ratio = np.inf
    F = np.empty((3, 3))
    cof = np.empty((3, 3))
    P = np.empty((3, 3))
    g = np.empty((4, 3))
    for t in range(tets.shape[0]):
        i0 = tets[t, 0]
        # C = B A^-1 (eq. 10), B columns = current edges from vertex 0
        for r in range(3):
            b1 = positions[tets[t, 1], r] - positions[i0, r]
            b2 = positions[tets[t, 2], r] - positions[i0, r]
            b3 = positions[tets[t, 3], r] - positions[i0, r]
            for c in range(3):
                F[r, c] = b1 * rest_inverse[t, 0, c] + b2 * rest_inverse[t, 1, c] + b3 * rest_inverse[t, 2, c]
        # cofactor columns: cof[:, 0] = F1 x F2, cof[:, 1] = F2 x F0, cof[:, 2] = F0 x F1 (Fj = column j)
        for c in range(3):
            a = (c + 1) % 3
            b = (c + 2) % 3
            cof[0, c] = F[1, a] * F[2, b] - F[2, a] * F[1, b]
            cof[1, c] = F[2, a] * F[0, b] - F[0, a] * F[2, b]
            cof[2, c] = F[0, a] * F[1, b] - F[1, a] * F[0, b]
        J = F[0, 0] * cof[0, 0] + F[1, 0] * cof[1, 0] + F[2, 0] * cof[2, 0]
        if J < min_ratio:
            min_ratio = J
        if J <= 0.0:
            energy = np.inf
            continue
        d1 = 0.0
        for r in range(3):
            for c in range(3):
                d1 += F[r, c] * F[r, c]
        alpha = tet_bulk[t]
        beta = tet_shear[t]
        j23 = J ** (-2.0 / 3.0)
        energy += rest_volume[t] * (0.5 * alpha * (J + 1.0 / J - 2.0) + 0.5 * beta * (d1 * j23 - 3.0))
        vol_coef = 0.5 * alpha * (1.0 - 1.0 / (J * J)) - beta * d1 * j23 / (3.0 * J)
        for r in range(3):
            for c in range(3):
                P[r, c] = vol_coef * cof[r, c] + beta * j23 * F[r, c]
        # g_k = A^-T e_k = row k-1 of A^-1; g_0 = -(g_1 + g_2 + g_3)
        for c in range(3):
            g[1, c] = rest_inverse[t, 0, c]
            g[2, c] = rest_inverse[t, 1, c]
            g[3, c] = rest_inverse[t, 2, c]
            g[0, c] = -(g[1, c] + g[2, c] + g[3, c])
        v0 = rest_volume[t]
        for k in range(4):
            vk = tets[t, k]
            for r in range(3):
                forces[vk, r] -= v0 * (P[r, 0] * g[k, 0] + P[r, 1] * g[k, 1] + P[r, 2] * g[k, 2])
    return energy, min_ratio


def energy_density(strain: np.ndarray, bulk_modulus: float, shear_modulus: float) -> float:
    """psi(C) of eq. 15 as reconstructed above, J/m^3 (+inf for det C <= 0). Reference, not for hot loops."""
    d1 = invariants(strain)[0]
    J = float(np.linalg.det(strain))  # sqrt(d3) with its sign: an inverted tet is not the mirror of a valid one
    if J <= 0.0:
        return np.inf
    return 0.5 * bulk_modulus * (J + 1.0 / J - 2.0) + 0.5 * shear_modulus * (d1 * J ** (-2.0 / 3.0) - 3.0)


def invariants(strain: np.ndarray) -> tuple[float, float, float]:
    """Coefficients d1, d2, d3 of the characteristic polynomial of D = C^T C (eq. 11-14)."""
    D = strain.T @ strain
    d1 = float(np.trace(D))
    d2 = float(0.5 * (np.trace(D) ** 2 - np.trace(D @ D)))  # sum of the 2x2 principal minors = tr cof D
    d3 = float(np.linalg.det(D))
    return d1, d2, d3
