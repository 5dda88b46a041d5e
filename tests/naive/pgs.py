"""Pure-Python/NumPy oracles for the solver kernels, written from the papers' dense formulas.

Dense projected Gauss-Seidel (Erleben 000 eq. 27-30): A = J M^-1 J^T, b = J u_pred - zeta; for each
row i: lambda_i <- clamp(lambda_i - (A_i lambda + b_i) / A_ii, lo_i, hi_i), with friction bounds
+-mu lambda_n of the linked normal row (eq. 29). No sparsity, no velocity bookkeeping.
"""

import numpy as np


def dense_from_rows(row_body, row_J, n_bodies):
    """Assemble the dense s x 6n Jacobian from Catto's Jsp/Jmap layout (001 eq. 12-13)."""
    s = row_body.shape[0]
    J = np.zeros((s, 6 * n_bodies))
    for i in range(s):
        for side in range(2):
            b = row_body[i, side]
            if b >= 0:
                J[i, 6 * b: 6 * b + 6] += row_J[i, side]
    return J


def dense_pgs(J, Minv, u_pred, zeta, lo, hi, link, mu, lam0, iterations):
    A = J @ Minv @ J.T
    b = J @ u_pred - zeta
    lam = lam0.astype(float).copy()
    for _ in range(iterations):
        for i in range(len(lam)):
            if A[i, i] <= 0:
                continue
            l, h = lo[i], hi[i]
            if link[i] >= 0:
                h = mu[i] * lam[link[i]]
                l = -h
            lam[i] = min(max(lam[i] - (A[i] @ lam + b[i]) / A[i, i], l), h)
    u = u_pred + Minv @ J.T @ lam
    return lam, u


def dense_block_gs(J, Minv, u_pred, zeta, cfm, lam0, group, iterations):
    """Block Gauss-Seidel on the regularised bilateral system (A + Gamma) lambda = zeta - J u_pred
    (000 eq. 41 with a per-row gamma), blocks of ``group`` consecutive rows solved exactly in turn
    (np.linalg.solve): the oracle of solvers.pgs.solve_group. Starts from ``lam0`` (warm start)."""
    A = J @ Minv @ J.T + np.diag(cfm)
    b = zeta - J @ u_pred
    lam = lam0.astype(float).copy()
    for _ in range(iterations):
        for g0 in range(0, len(lam), group):
            idx = slice(g0, g0 + group)
            res = b[idx] - A[idx] @ lam
            lam[idx] += np.linalg.solve(A[idx, idx], res)
    return lam, u_pred + Minv @ J.T @ lam


def dense_merit(J, u, zeta, lam, lo, hi, link, mu, A_diag):
    """theta = 1/2 |min(lam - lo, max(lam - hi, w / A_ii))|^2 (000 eq. 37-38, w scaled to impulses)."""
    w = J @ u - zeta
    th = 0.0
    for i in range(len(lam)):
        if A_diag[i] <= 0:
            continue
        l, h = lo[i], hi[i]
        if link[i] >= 0:
            h = mu[i] * lam[link[i]]
            l = -h
        H = min(lam[i] - l, max(lam[i] - h, w[i] / A_diag[i]))
        th += 0.5 * H * H
    return th


def naive_cache_match(new_keys, new_feat, old_keys, old_feat, old_lam):
    """Dictionary lookup by (pair key, feature id) (Catto 001 Alg. 5)."""
    table = {(int(k), int(f)): l for k, f, l in zip(old_keys, old_feat, old_lam)}
    return np.array([table.get((int(k), int(f)), 0.0) for k, f in zip(new_keys, new_feat)])
