"""Pure-Python oracles for the shock-propagation kernels (Erleben 000 §4), written from the paper's
definitions with dense matrices: a dict-and-deque breadth-first search for the stack heights, and the
layer loop of Fig. 12 with A = (dynamics(h), correction()) where "fixate" means zeroing the bottom
bodies' blocks of M^-1 (infinite mass)."""

from collections import deque

import numpy as np

from tests.naive.pgs import dense_from_rows


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


def row_blocks(row_body, heights):
    """The body each row moves in its layer (the lower index of two dynamic siblings), -1 if none."""
    out = []
    for a, b in row_body:
        ha = 0 if a < 0 else heights[a]
        hb = 0 if b < 0 else heights[b]
        top = max(ha, hb)
        movers = [x for x, hx in ((a, ha), (b, hb)) if x >= 0 and hx == top and top > 0]
        out.append(min(movers) if movers else -1)
    return np.array(out)


def naive_shock_propagation(row_body, row_J, Minv, zeta, lo, hi, link, mu, normal, depth, slop, u, lam0, disp, h,
                            iterations, correction_iterations, heights, layers, block_iterations=1):
    """Fig. 12 bottom-up over the layers; returns (lam, u, disp) as flat arrays (u, disp: 6 per body).

    Inside a layer the rows are visited body by body (row_blocks, then row index), each body's rows
    ``block_iterations`` times per sweep, with explicit dense rows: lambda_i += (zeta_i - J_i u) / A_ii,
    clamped, u += M_L^-1 J_i^T delta, where M_L^-1 has the fixated bodies' blocks zeroed."""
    n = len(heights)
    u = u.astype(float).copy()
    disp = disp.astype(float).copy()
    lam = lam0.astype(float).copy()
    J = dense_from_rows(row_body, row_J, n)
    hb = np.array([[0 if b < 0 else heights[b] for b in pair] for pair in row_body])
    row_layer = hb.max(axis=1) - 1
    block = row_blocks(row_body, heights)
    for layer in range(layers):
        rows = sorted((r for r in range(len(row_layer)) if row_layer[r] == layer), key=lambda r: (block[r], r))
        ML = _fixate(Minv, [i for i in range(n) if heights[i] == layer])
        for r in rows:                                    # warm start on the movable sides
            u += ML @ J[r] * lam[r]
        groups = {}
        for r in rows:
            groups.setdefault(block[r], []).append(r)
        for _ in range(iterations):
            for b in sorted(groups):
                for _ in range(block_iterations):
                    for r in groups[b]:
                        A = J[r] @ ML @ J[r]
                        if A <= 0:
                            continue
                        lo_r, hi_r = lo[r], hi[r]
                        if link[r] >= 0:
                            hi_r = mu[r] * lam[link[r]]
                            lo_r = -hi_r
                        new = min(max(lam[r] + (zeta[r] - J[r] @ u) / A, lo_r), hi_r)
                        u += ML @ J[r] * (new - lam[r])
                        lam[r] = new
        for i in range(n):
            if heights[i] == layer + 1:
                disp[6 * i: 6 * i + 6] += h * u[6 * i: 6 * i + 6]
        nrows = [r for r in rows if normal[r]]
        if nrows and correction_iterations:
            Jn = J[nrows]
            A = Jn @ ML @ Jn.T
            b = Jn @ disp - (depth[nrows] - slop)
            lc = np.zeros(len(nrows))
            for _ in range(correction_iterations):
                for i in range(len(nrows)):
                    if A[i, i] > 0:
                        lc[i] = max(0.0, lc[i] - (A[i] @ lc + b[i]) / A[i, i])
            disp = disp + ML @ Jn.T @ lc
    return lam, u, disp


def naive_articulated_heights(row_body, row_is_joint, n_bodies, fixed):
    """Dijkstra over the body graph with joint edges of length 0 and contact edges of length 1,
    from the fixed bodies (0) and the bodies touching them (1); unreached dynamic bodies get the
    largest height found (1 if none). The oracle of contact.layers.articulated_heights."""
    import heapq

    INF = 10**9
    h = [0 if fixed[i] else INF for i in range(n_bodies)]
    edges = [[] for _ in range(n_bodies)]
    heap = []
    for (a, b), joint in zip(row_body, row_is_joint):
        if a >= 0 and b >= 0:
            edges[a].append((b, 0 if joint else 1))
            edges[b].append((a, 0 if joint else 1))
        else:
            i = a if a >= 0 else b
            if i >= 0 and h[i] > 1:
                h[i] = 1
    heap = [(h[i], i) for i in range(n_bodies) if h[i] == 1]
    heapq.heapify(heap)
    while heap:
        d, i = heapq.heappop(heap)
        if d > h[i]:
            continue
        for j, wgt in edges[i]:
            if d + wgt < h[j]:
                h[j] = d + wgt
                heapq.heappush(heap, (h[j], j))
    reached = [x for i, x in enumerate(h) if x < INF and not fixed[i]]
    top = max(reached) if reached else 1
    return [top if x == INF else x for x in h], top
