"""Viscous forces of paper 003 (§4.2 eq. 16, §5.4).

Velocity gradient: h = f' o f^-1, V = J h = (J f')(J f)^-1; per tet J f = B A^-1 and J f' = B' A^-1, so
V = B' B^-1 (§5.4; B, B' = current edge vectors and their rates, as columns). The power loss density may
only depend on the symmetric part S = (V + V^T)/2 (a rigid spin, skew V, loses nothing). Eq. 16 is garbled in
our copy; we take the isotropic form with one coefficient for the rate of volume change (gamma_1, bulk
viscosity) and one for the rate of shape change (gamma_2, shear viscosity):

    omega = gamma_1 (tr S)^2 + 2 gamma_2 |dev S|^2      (W/m^3, >= 0)

which is the power of the Newtonian viscous stress sigma = gamma_1 tr S I + 2 gamma_2 dev S on S.
The tet loses V_T omega (V_T = current volume, §5.4). The forces come from Rayleigh's dissipation function
R = V_T omega / 2 (quadratic in the velocities): f_k = -dR/dv_k = -V_T sigma B^-T e_k (k = 1..3),
f_0 = -(f_1 + f_2 + f_3), and then -sum_k f_k . v_k = V_T omega exactly (the power loss).
(Lagrange's eq. 1 writes dW/dq' with W the loss rate itself; with W quadratic that would double the loss,
so we use W/2, the usual Rayleigh convention, to make the dissipated power equal to omega.)
"""

from __future__ import annotations

import numpy as np

from tumble._core.config import kernel


@kernel
def viscous_forces(positions, velocities, tets, tet_bulk_viscosity, tet_shear_viscosity, forces):
    """Add the viscous forces (N) of every tet to ``forces`` (n, 3); return the dissipated power (W)."""
    power = 0.0
    B = np.empty((3, 3))
    Bdot = np.empty((3, 3))
    Binv = np.empty((3, 3))
    V = np.empty((3, 3))
    sigma = np.empty((3, 3))
    for t in range(tets.shape[0]):
        g1 = tet_bulk_viscosity[t]
        g2 = tet_shear_viscosity[t]
        if g1 == 0.0 and g2 == 0.0:
            continue
        i0 = tets[t, 0]
        for c in range(3):
            ic = tets[t, c + 1]
            for r in range(3):
                B[r, c] = positions[ic, r] - positions[i0, r]
                Bdot[r, c] = velocities[ic, r] - velocities[i0, r]
        # B^-1 = cof(B)^T / det B
        for c in range(3):
            a = (c + 1) % 3
            b = (c + 2) % 3
            Binv[c, 0] = B[1, a] * B[2, b] - B[2, a] * B[1, b]
            Binv[c, 1] = B[2, a] * B[0, b] - B[0, a] * B[2, b]
            Binv[c, 2] = B[0, a] * B[1, b] - B[1, a] * B[0, b]
        det = B[0, 0] * Binv[0, 0] + B[1, 0] * Binv[0, 1] + B[2, 0] * Binv[0, 2]
        if det <= 0.0:
            continue  # inverted: the elastic kernel reports it and the state is rejected
        for r in range(3):
            for c in range(3):
                Binv[r, c] /= det
        for r in range(3):
            for c in range(3):
                V[r, c] = Bdot[r, 0] * Binv[0, c] + Bdot[r, 1] * Binv[1, c] + Bdot[r, 2] * Binv[2, c]
        trace = V[0, 0] + V[1, 1] + V[2, 2]
        dev_sq = 0.0
        for r in range(3):
            for c in range(3):
                s = 0.5 * (V[r, c] + V[c, r])
                if r == c:
                    s -= trace / 3.0
                    sigma[r, c] = g1 * trace + 2.0 * g2 * s
                else:
                    sigma[r, c] = 2.0 * g2 * s
                dev_sq += s * s
        volume = det / 6.0
        power += volume * (g1 * trace * trace + 2.0 * g2 * dev_sq)
        # f_k = -V_T sigma B^-T e_k: column k of B^-T is row k of B^-1
        for k in range(1, 4):
            vk = tets[t, k]
            for r in range(3):
                f = -volume * (sigma[r, 0] * Binv[k - 1, 0] + sigma[r, 1] * Binv[k - 1, 1]
                               + sigma[r, 2] * Binv[k - 1, 2])
                forces[vk, r] += f
                forces[i0, r] -= f
    return power
