"""Plain NumPy reference contacts for sphere / plane / box pairs (test oracles, not fast).

Written from the definitions, independently of the kernels in tumble._core.collision:

* separations along an axis come from projecting all 8 box vertices (not the |C_ij| formula);
* the incident face is found by trying all 6 faces, the clipping is a generic 3-D polygon clipper
  against planes (point-normal form), and the edge pair by trying all 4 parallel edges per box;
* box-box returns *every* clipped point within the margin (no reduction to 4), so a test can check
  that the kernel's points are a subset and that the deepest one survives.

Only the axis-selection rule is shared with the kernel, because it is part of the specification
(Catto 001 §8.2 / Box2D-Lite bias): relative tolerance 0.95, absolute 0.01 x smallest half
extent, edge pairs with |a x b| < 1e-5 skipped.
"""

from __future__ import annotations

import itertools

import numpy as np

REL_TOL = 0.95
ABS_TOL_FRAC = 0.01
PARALLEL_TOL = 1e-5


# --- shapes -----------------------------------------------------------------------------------

def box_vertices(p, R, h):
    """(8, 3) world vertices; vertex k = bx + 2 by + 4 bz has local signs 2 b - 1."""
    out = np.empty((8, 3))
    for k in range(8):
        signs = np.array([1.0 if k & (1 << i) else -1.0 for i in range(3)])
        out[k] = p + R @ (signs * h)
    return out


def sd_box(x, p, R, h):
    """Signed distance from x to the box surface (negative inside)."""
    q = np.abs(R.T @ (np.asarray(x) - p)) - h
    return float(np.linalg.norm(np.maximum(q, 0.0)) + min(q.max(), 0.0))


def sd_sphere(x, p, r):
    return float(np.linalg.norm(np.asarray(x) - p) - r)


def sd_halfspace(x, p, R):
    return float(R[:, 2] @ (np.asarray(x) - p))


def _result(normal, points, depths, kind="point", **info):
    return {"normal": np.asarray(normal, float), "points": np.asarray(points, float).reshape(-1, 3),
            "depths": np.asarray(depths, float), "kind": kind, **info}


def _empty():
    return _result(np.zeros(3), np.zeros((0, 3)), np.zeros(0), kind="none")


# --- sphere pairs -----------------------------------------------------------------------------

def sphere_sphere(pa, ra, pb, rb, margin):
    d = pb - pa
    dist = np.linalg.norm(d)
    sep = dist - ra - rb
    if sep > margin:
        return _empty()
    n = d / dist if dist > 1e-12 else np.array([0.0, 0.0, 1.0])
    surf_a = pa + ra * n
    surf_b = pb - rb * n
    return _result(n, [(surf_a + surf_b) / 2], [-sep])


def plane_sphere(pa, Ra, pb, rb, margin):
    n = Ra[:, 2]
    sep = n @ (pb - pa) - rb
    if sep > margin:
        return _empty()
    low = pb - rb * n
    proj = low - sep * n
    return _result(n, [(low + proj) / 2], [-sep])


def sphere_box(pa, ra, pb, Rb, hb, margin):
    """Closest box point by clamping; for a centre inside, the nearest of the 6 face planes."""
    local = Rb.T @ (pa - pb)
    if np.all(np.abs(local) <= hb):
        best = None
        for i, s in itertools.product(range(3), (1.0, -1.0)):
            gap = hb[i] - s * local[i]  # distance from the centre to face (i, s)
            if best is None or gap < best[0]:
                best = (gap, i, s)
        gap, i, s = best
        q = local.copy()
        q[i] = s * hb[i]
        n = -s * Rb[:, i]
        depth = ra + gap
    else:
        q = np.clip(local, -hb, hb)
        diff = Rb @ (q - local)
        dist = np.linalg.norm(diff)
        if dist - ra > margin:
            return _empty()
        n = diff / dist
        depth = ra - dist
    box_point = pb + Rb @ q
    return _result(n, [(pa + ra * n + box_point) / 2], [depth])


# --- plane-box --------------------------------------------------------------------------------

def plane_box(pa, Ra, pb, Rb, hb, margin):
    n = Ra[:, 2]
    verts = box_vertices(pb, Rb, hb)
    seps = (verts - pa) @ n
    order = [k for k in np.argsort(seps, kind="stable") if seps[k] <= margin][:4]
    points = [verts[k] - 0.5 * seps[k] * n for k in order]
    return _result(n, points, [-seps[k] for k in order], kind="plane", vertices=order,
                   all_seps=seps)


# --- box-box ----------------------------------------------------------------------------------

def _axis_sep(axis, va, vb):
    """Separation of the vertex sets along a unit axis (positive = gap)."""
    a = va @ axis
    b = vb @ axis
    return max(b.min() - a.max(), a.min() - b.max())


def clip_polygon(poly, normal, offset):
    """Sutherland-Hodgman: keep the part of a 3-D polygon with normal . x <= offset."""
    out = []
    n = len(poly)
    for i in range(n):
        cur = poly[i]
        prev = poly[i - 1]
        dc = normal @ cur - offset
        dp = normal @ prev - offset
        if (dc <= 0) != (dp <= 0):
            t = dp / (dp - dc)
            out.append(prev + t * (cur - prev))
        if dc <= 0:
            out.append(cur)
    return out


def _segment_closest(p0, u, lu, q0, v, lv):
    """Closest points of segments p0 + s u (|s| <= lu) and q0 + t v (|t| <= lv), unit u, v.

    The minimum is either the interior stationary point or lies on the boundary of the
    (s, t) rectangle, where one parameter is fixed and the other is a clamped projection.
    """
    cands = []
    A = np.column_stack([u, -v])
    st, *_ = np.linalg.lstsq(A, q0 - p0, rcond=None)
    if abs(st[0]) <= lu and abs(st[1]) <= lv:
        cands.append((st[0], st[1]))
    for s in (-lu, lu):
        cands.append((s, np.clip(v @ (p0 + s * u - q0), -lv, lv)))
    for t in (-lv, lv):
        cands.append((np.clip(u @ (q0 + t * v - p0), -lu, lu), t))
    best = min(cands, key=lambda c: np.linalg.norm(p0 + c[0] * u - q0 - c[1] * v))
    return p0 + best[0] * u, q0 + best[1] * v


def _edges_along(verts, i):
    """The 4 edges of a box parallel to local axis i, as (vertex_lo, vertex_hi) pairs."""
    return [(k, k | (1 << i)) for k in range(8) if not k & (1 << i)]


def _edge_contact(pa, Ra, ha, pb, Rb, hb, i, j, margin, va, vb):
    n = np.cross(Ra[:, i], Rb[:, j])
    n /= np.linalg.norm(n)
    if n @ (pb - pa) < 0:
        n = -n
    ea = max(_edges_along(va, i), key=lambda e: n @ (va[e[0]] + va[e[1]]))
    eb = min(_edges_along(vb, j), key=lambda e: n @ (vb[e[0]] + vb[e[1]]))
    ca = (va[ea[0]] + va[ea[1]]) / 2
    cb = (vb[eb[0]] + vb[eb[1]]) / 2
    qa, qb = _segment_closest(ca, Ra[:, i], ha[i], cb, Rb[:, j], hb[j])
    sep = n @ (qb - qa)
    if sep > margin:
        return _empty()
    return _result(n, [(qa + qb) / 2], [-sep], kind="edge", axes=(i, j))


def box_box(pa, Ra, ha, pb, Rb, hb, margin):
    """Reference box-box manifold (all clipped points, unreduced) plus decision diagnostics.

    ``decision_gaps`` holds how far each discrete choice (A vs B face, face vs edge, best axis
    within a box, incident face) was from flipping; a test treats tiny gaps as ambiguous.
    """
    va = box_vertices(pa, Ra, ha)
    vb = box_vertices(pb, Rb, hb)
    seps_a = [_axis_sep(Ra[:, i], va, vb) for i in range(3)]
    seps_b = [_axis_sep(Rb[:, j], va, vb) for j in range(3)]
    edges = {}
    for i, j in itertools.product(range(3), range(3)):
        c = np.cross(Ra[:, i], Rb[:, j])
        if np.linalg.norm(c) >= PARALLEL_TOL:
            edges[(i, j)] = _axis_sep(c / np.linalg.norm(c), va, vb)
    all_seps = seps_a + seps_b + list(edges.values())
    if max(all_seps) > margin:
        return _empty()
    tol = ABS_TOL_FRAC * min(ha.min(), hb.min())
    ia = int(np.argmax(seps_a))
    ib = int(np.argmax(seps_b))
    gaps = [np.sort(seps_a)[-1] - np.sort(seps_a)[-2], np.sort(seps_b)[-1] - np.sort(seps_b)[-2]]
    use_b = seps_b[ib] > REL_TOL * seps_a[ia] + tol
    gaps.append(abs(seps_b[ib] - (REL_TOL * seps_a[ia] + tol)))
    sep_face = seps_b[ib] if use_b else seps_a[ia]
    edge_key = max(edges, key=edges.get) if edges else None
    use_edge = False
    if edge_key is not None:
        sep_e = edges[edge_key]
        use_edge = sep_e > REL_TOL * sep_face + tol
        gaps.append(abs(sep_e - (REL_TOL * sep_face + tol)))
        vals = sorted(edges.values())
        if len(vals) > 1:
            gaps.append(vals[-1] - vals[-2])
    if use_edge:
        res = _edge_contact(pa, Ra, ha, pb, Rb, hb, *edge_key, margin, va, vb)
        res["decision_gaps"] = gaps
        return res

    # Face contact: reference box r, incident box i.
    if use_b:
        pr, Rr, hr, axis, pi, Ri, hi, owner = pb, Rb, hb, ib, pa, Ra, ha, "B"
    else:
        pr, Rr, hr, axis, pi, Ri, hi, owner = pa, Ra, ha, ia, pb, Rb, hb, "A"
    m = Rr[:, axis] * (1.0 if Rr[:, axis] @ (pi - pr) >= 0 else -1.0)
    face_centre = pr + hr[axis] * m
    faces = [(k, s) for k in range(3) for s in (1.0, -1.0)]
    dots = [s * Ri[:, k] @ m for k, s in faces]
    order = np.argsort(dots)
    gaps.append(dots[order[1]] - dots[order[0]])
    k, s = faces[order[0]]
    p, q = (k + 1) % 3, (k + 2) % 3
    inc_centre = pi + s * hi[k] * Ri[:, k]
    poly = [inc_centre + a * hi[p] * Ri[:, p] + b * hi[q] * Ri[:, q]
            for a, b in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
    for t in ((axis + 1) % 3, (axis + 2) % 3):
        for sgn in (1.0, -1.0):
            side = sgn * Rr[:, t]
            poly = clip_polygon(poly, side, side @ face_centre + hr[t])
    points, depths = [], []
    for x in poly:
        sep = (x - face_centre) @ m
        if sep <= margin:
            points.append(x - 0.5 * sep * m)
            depths.append(-sep)
    if not points:
        if edge_key is not None and edges[edge_key] <= margin:
            res = _edge_contact(pa, Ra, ha, pb, Rb, hb, *edge_key, margin, va, vb)
            res["decision_gaps"] = gaps
            return res
        return _empty()
    normal = m if owner == "A" else -m
    return _result(normal, points, depths, kind="face", owner=owner, decision_gaps=gaps)
