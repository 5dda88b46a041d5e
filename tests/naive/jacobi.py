"""Pure-NumPy oracle of the projected Jacobi sweep (Erleben 000 §3, eq. 28-30 with every row
updated from the same iterate), over the dense A = J M^-1 J^T:

    lambda <- clamp(lambda - omega (A lambda + b + Gamma lambda) / (A_ii + gamma_i), lo, hi),
    b = J u_pred - zeta, friction bounds +-mu lambda_n of the iterate the sweep starts from.
"""

import numpy as np


def dense_jacobi(J, Minv, u_pred, zeta, lo, hi, link, mu, lam0, iterations, omega, cfm=None):
    A = J @ Minv @ J.T
    b = J @ u_pred - zeta
    gamma = np.zeros(len(lam0)) if cfm is None else np.asarray(cfm, dtype=float)
    d = np.diag(A) + gamma
    lam = lam0.astype(float).copy()
    active = np.diag(A) > 0
    for _ in range(iterations):
        h = np.where(link >= 0, mu * lam[np.maximum(link, 0)], hi)
        low = np.where(link >= 0, -h, lo)
        new = lam - omega * (A @ lam + b + gamma * lam) / np.where(active, d, 1.0)
        new = np.minimum(np.maximum(new, low), h)
        lam = np.where(active, new, lam)
    return lam, u_pred + Minv @ J.T @ lam


def dense_row_relaxation(J, Minv, n_bodies, omega, bound):
    """The per-row relaxation of ``kernels.row_relaxation`` from the exact per-body eigenvalues:
    omega_r = min(omega, bound A_rr / D_rr), D_rr = sum over the bodies b of row r of lam_b g_rb with
    g_rb = J_rb M_b^-1 J_rb^T and lam_b = lambda_max(diag(G_b)^-1/2 G_b diag(G_b)^-1/2),
    G_b = J_b M_b^-1 J_b^T over the rows with g_rb > 0. Returns (omega_r, D_rr)."""
    s = J.shape[0]
    A = J @ Minv @ J.T
    D = np.zeros(s)
    for b in range(n_bodies):
        cols = slice(6 * b, 6 * b + 6)
        Jb = J[:, cols]
        G = Jb @ Minv[cols, cols] @ Jb.T
        g = np.diag(G).copy()
        on = g > 0
        if not on.any():
            continue
        scale = 1.0 / np.sqrt(g[on])
        lam = np.linalg.eigvalsh(G[np.ix_(on, on)] * scale[:, None] * scale[None, :]).max()
        D[on] += lam * g[on]
    a = np.diag(A)
    om = np.full(s, float(omega))
    if bound > 0:
        cap = np.where(D > 0, bound * a / np.where(D > 0, D, 1.0), np.inf)
        om = np.minimum(om, cap)
    return om, D
