"""Pure-NumPy oracle of the elastic energy and forces of paper 003 (tumble.elastic.energy), written from the
formulas, vectorized over tets and independent of the kernel:

    C = B A^-1 (edges as columns), J = det C, d1 = |C|_F^2,
    psi = alpha/2 (J + 1/J - 2) + beta/2 (d1 J^(-2/3) - 3),  E = sum V0 psi,
    P = alpha/2 (1 - J^-2) J C^-T + beta J^(-2/3) (C - d1/3 C^-T),  f_k = -V0 P A^-T e_k.
"""

import numpy as np


def strains(positions, tets, rest_positions):
    def edges(x):
        p = x[tets]
        return np.stack([p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]], axis=2)

    A = edges(rest_positions)
    return edges(positions) @ np.linalg.inv(A), np.linalg.det(A) / 6.0, np.linalg.inv(A)


def energy_and_forces(positions, tets, rest_positions, bulk, shear):
    C, V0, Ainv = strains(positions, tets, rest_positions)
    J = np.linalg.det(C)
    d1 = np.einsum("tij,tij->t", C, C)
    psi = 0.5 * bulk * (J + 1 / J - 2) + 0.5 * shear * (d1 * J ** (-2 / 3) - 3)
    CinvT = np.transpose(np.linalg.inv(C), (0, 2, 1))
    P = (0.5 * bulk * (1 - J ** -2) * J)[:, None, None] * CinvT \
        + (shear * J ** (-2 / 3))[:, None, None] * (C - (d1 / 3)[:, None, None] * CinvT)
    H = -V0[:, None, None] * P @ np.transpose(Ainv, (0, 2, 1))  # columns: forces on vertices 1..3
    forces = np.zeros_like(positions)
    for k in range(3):
        np.add.at(forces, tets[:, k + 1], H[:, :, k])
        np.add.at(forces, tets[:, 0], -H[:, :, k])
    return float(np.sum(V0 * psi)), forces
