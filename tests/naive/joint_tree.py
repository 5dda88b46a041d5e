"""Dense NumPy oracles of the joint tree solve (``_core.dynamics.joints.tree``), written from the
definitions, with no tree, no ordering and no sparsity:

    velocity:  (J M^-1 J^T + Gamma) dlambda = zeta - J v - Gamma lambda,   v' = v + M^-1 J^T dlambda
    position:  one Newton step  J M^-1 J^T lambda = -C,   dx = M^-1 J^T lambda
"""

import numpy as np

from tests.naive.pgs import dense_from_rows


def dense_inverse_mass(body_inv_mass, body_inv_inertia_world, body_fixed, n_bodies):
    """The 6n x 6n M^-1 (fixed bodies: zero blocks)."""
    Minv = np.zeros((6 * n_bodies, 6 * n_bodies))
    for b in range(n_bodies):
        if body_fixed[b]:
            continue
        Minv[6 * b: 6 * b + 3, 6 * b: 6 * b + 3] = body_inv_mass[b] * np.eye(3)
        Minv[6 * b + 3: 6 * b + 6, 6 * b + 3: 6 * b + 6] = body_inv_inertia_world[b]
    return Minv


def dense_equality_solve(rows, row_body, row_J, row_bias, row_cfm, row_lambda, Minv, v):
    """The exact solve of the equality rows ``rows`` at velocities v (6n,): returns (v', lambda')."""
    J = dense_from_rows(row_body[rows], row_J[rows], Minv.shape[0] // 6)
    K = J @ Minv @ J.T + np.diag(row_cfm[rows])
    dlam = np.linalg.solve(K, row_bias[rows] - J @ v - row_cfm[rows] * row_lambda[rows])
    lam = row_lambda.copy()
    lam[rows] += dlam
    return v + Minv @ J.T @ dlam, lam


def dense_newton_displacement(rows, row_body, row_J, error, Minv):
    """One Newton step's displacement (6n,) for the position errors ``error`` of ``rows``."""
    J = dense_from_rows(row_body[rows], row_J[rows], Minv.shape[0] // 6)
    lam = np.linalg.solve(J @ Minv @ J.T, -error)
    return Minv @ J.T @ lam
