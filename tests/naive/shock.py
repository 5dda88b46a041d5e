"""Pure-Python oracles for the shock-propagation kernels (Erleben 000 §4), written from the paper's
definitions with dense matrices: a dict-and-deque breadth-first search for the stack heights, and the
layer loop of Fig. 12 with A = (dynamics(h), correction()) where "fixate" means zeroing the bottom
bodies' blocks of M^-1 (infinite mass)."""

from collections import deque

import numpy as np

from tests.naive.pgs import dense_from_rows, dense_pgs


def naive_heights(row_body, n_bodies, fixed):
    """Stack height per body: 0 fixed, BFS distance from the fixed bodies over the rows' pairs,
    unreachable dynamic bodies get the largest height found (1 if none). Returns (heights, layers)."""
    adj = {i: set() for i in range(n_bodies)}
    root = set()
    for a, b in row_body:
        if a >= 0 and b >= 0:
            adj[a].add(b)
            adj[b].add(a)
        elif a >= 0:
            root.add(a)
        elif b >= 0:
            root.add(b)
    h = {i: 0 for i in range(n_bodies) if i in fixed}
    q = deque()
    for i in sorted(root):
        if i not in fixed:
            h[i] = 1
            q.append(i)
    while q:
        i = q.popleft()
        for j in sorted(adj[i]):
            if j not in h:
                h[j] = h[i] + 1
                q.append(j)
    top = max([v for v in h.values()] + [1])
    heights = np.array([h.get(i, top) for i in range(n_bodies)], dtype=np.int64)
    dynamic = [i for i in range(n_bodies) if i not in fixed]
    return heights, (max(heights[dynamic]) if dynamic else 0)


def _fixate(Minv, bodies):
    M = Minv.copy()
    for b in bodies:
        M[6 * b: 6 * b + 6, :] = 0.0
        M[:, 6 * b: 6 * b + 6] = 0.0
    return M


def naive_shock_propagation(row_body, row_J, Minv, zeta, lo, hi, link, mu, normal, depth, slop, u, lam0, disp, h,
                            iterations, correction_iterations, heights, layers):
    """Fig. 12 bottom-up over the layers; returns (lam, u, disp) as flat arrays (u, disp: 6 per body)."""
    n = len(heights)
    u = u.copy()
    disp = disp.copy()
    lam = lam0.copy()
    hb = np.array([[0 if b < 0 else heights[b] for b in pair] for pair in row_body])
    row_layer = hb.max(axis=1) - 1
    for layer in range(layers):
        rows = [r for r in range(len(row_layer)) if row_layer[r] == layer]
        ML = _fixate(Minv, [i for i in range(n) if heights[i] == layer])
        moving = [i for i in range(n) if heights[i] == layer + 1]
        if rows:
            J = dense_from_rows(row_body[rows], row_J[rows], n)
            local = {r: k for k, r in enumerate(rows)}
            lk = np.array([local[link[r]] if link[r] >= 0 else -1 for r in rows])
            lam_l, u = dense_pgs(J, ML, u, zeta[rows], lo[rows], hi[rows], lk, mu[rows], lam0[rows], iterations)
            lam[rows] = lam_l
        for i in moving:
            disp[6 * i: 6 * i + 6] += h * u[6 * i: 6 * i + 6]
        nrows = [r for r in rows if normal[r]]
        if nrows and correction_iterations:
            J = dense_from_rows(row_body[nrows], row_J[nrows], n)
            A = J @ ML @ J.T
            b = J @ disp - (depth[nrows] - slop)
            lc = np.zeros(len(nrows))
            for _ in range(correction_iterations):
                for i in range(len(nrows)):
                    if A[i, i] > 0:
                        lc[i] = max(0.0, lc[i] - (A[i] @ lc + b[i]) / A[i, i])
            disp = disp + ML @ J.T @ lc
    return lam, u, disp
