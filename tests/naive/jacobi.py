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
