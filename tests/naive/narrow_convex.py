"""Plain NumPy / SciPy references for the capsule and hull narrow phase (slow, simple, independent).

* closest points of two segments: a dense (s, t) grid, then a bounded quasi-Newton refinement;
* signed distance of a point to a convex polytope: inside, the largest face-plane distance (Qhull's
  equations); outside, the smallest point-triangle distance over Qhull's boundary triangles;
* distance of a segment to a polytope: the signed distance is convex along the segment, so dense
  sampling plus a bounded scalar minimisation finds its minimum;
* penetration of overlapping convex shapes: brute-force SAT over every face normal and every cross
  product of two edge directions (Qhull triangle edges, diagonals included: extra axes never lower
  the minimum below the true penetration), projecting all vertices.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.spatial import ConvexHull


def random_rotation(rng) -> np.ndarray:
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


# ---------------------------------------------------------------------------------------------------
# segments


def segment_ends(p, R, half_length):
    return p - half_length * R[:, 2], p + half_length * R[:, 2]


def closest_points_segments(a0, a1, b0, b1):
    """(point on a, point on b) by grid search and bounded refinement of |a(s) - b(t)|^2."""
    s = np.linspace(0.0, 1.0, 61)
    pa = a0 + s[:, None] * (a1 - a0)
    pb = b0 + s[:, None] * (b1 - b0)
    d2 = np.sum((pa[:, None, :] - pb[None, :, :]) ** 2, axis=2)
    i, j = np.unravel_index(np.argmin(d2), d2.shape)

    def f(x):
        d = a0 + x[0] * (a1 - a0) - b0 - x[1] * (b1 - b0)
        return float(d @ d)

    res = minimize(f, [s[i], s[j]], method="L-BFGS-B", bounds=[(0, 1), (0, 1)],
                   options={"ftol": 1e-16, "gtol": 1e-14, "maxiter": 500})
    x = res.x if res.fun <= d2[i, j] else np.array([s[i], s[j]])
    return a0 + x[0] * (a1 - a0), b0 + x[1] * (b1 - b0)


def point_segment(x, q0, q1):
    d = q1 - q0
    t = np.clip(np.dot(x - q0, d) / np.dot(d, d), 0.0, 1.0)
    return q0 + t * d


# ---------------------------------------------------------------------------------------------------
# polytopes in world pose


class WorldHull:
    """Vertices of a polytope in the world and Qhull's triangulation of them."""

    def __init__(self, local_vertices, p, R):
        self.verts = np.asarray(local_vertices) @ R.T + p
        self.qh = ConvexHull(self.verts)
        self.tris = self.verts[self.qh.simplices]  # (T, 3, 3)
        self.eq = self.qh.equations  # n . x + d <= 0 inside, n outward unit

    def edge_dirs(self):
        t = self.tris
        return np.concatenate([t[:, 1] - t[:, 0], t[:, 2] - t[:, 1], t[:, 0] - t[:, 2]])

    def signed_distance(self, x):
        """Exact signed distance (negative inside) and the closest surface point."""
        plane = self.eq[:, :3] @ x + self.eq[:, 3]
        if np.all(plane <= 0.0):
            f = int(np.argmax(plane))
            return float(plane[f]), x - plane[f] * self.eq[f, :3]
        q = closest_on_triangles(x, self.tris)
        d = np.linalg.norm(q - x, axis=1)
        k = int(np.argmin(d))
        return float(d[k]), q[k]

    def plane_value(self, x):
        """max over faces of n.x + d: 0 on the surface, the depth (negative) inside."""
        return float(np.max(self.eq[:, :3] @ x + self.eq[:, 3]))


def _closest_on_segments(x, a, b):
    d = b - a
    t = np.clip(np.sum((x - a) * d, axis=1) / np.sum(d * d, axis=1), 0.0, 1.0)
    return a + t[:, None] * d


def closest_on_triangles(x, tris):
    """Closest point of each triangle (T, 3, 3) to x: the projection on its plane when that lies
    inside the triangle, else the closest point of its three edges."""
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1)[:, None]
    y = x - np.sum((x - a) * n, axis=1)[:, None] * n
    inside = np.ones(len(tris), dtype=bool)
    for v0, v1 in ((a, b), (b, c), (c, a)):
        inside &= np.sum(np.cross(v1 - v0, y - v0) * n, axis=1) >= 0.0
    edge = [_closest_on_segments(x, v0, v1) for v0, v1 in ((a, b), (b, c), (c, a))]
    dist = np.stack([np.linalg.norm(e - x, axis=1) for e in edge])  # (3, T)
    best = np.take_along_axis(np.stack(edge), np.argmin(dist, axis=0)[None, :, None], axis=0)[0]
    return np.where(inside[:, None], y, best)


def segment_hull_min_distance(a0, a1, hull: WorldHull):
    """min over the segment of the hull's signed distance, and where (segment point, hull point)."""
    def sd(t):
        return hull.signed_distance(a0 + t * (a1 - a0))[0]

    ts = np.linspace(0.0, 1.0, 21)
    vals = [sd(t) for t in ts]
    k = int(np.argmin(vals))
    lo, hi = ts[max(k - 1, 0)], ts[min(k + 1, len(ts) - 1)]
    res = minimize_scalar(sd, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    t = res.x if res.fun <= vals[k] else ts[k]
    x = a0 + t * (a1 - a0)
    d, q = hull.signed_distance(x)
    return d, x, q


def sat_overlap(pts_a, pts_b, axes):
    """Per axis (unit rows): overlap of the projections and the axis signed from A to B."""
    pa = pts_a @ axes.T
    pb = pts_b @ axes.T
    o1 = pa.max(0) - pb.min(0)  # overlap if B lies on the + side
    o2 = pb.max(0) - pa.min(0)  # overlap if B lies on the - side
    sign = np.where(o1 <= o2, 1.0, -1.0)
    return np.minimum(o1, o2), axes * sign[:, None]


def _unit_rows(v):
    n = np.linalg.norm(v, axis=1)
    keep = n > 1e-9 * max(1.0, float(n.max()))
    return v[keep] / n[keep, None]


def hull_hull_sat(ha: WorldHull, hb: WorldHull):
    """Brute-force SAT: (min overlap, its axis A->B, the second-best overlap along another axis)."""
    ea, eb = ha.edge_dirs(), hb.edge_dirs()
    cross = np.cross(ea[:, None, :], eb[None, :, :]).reshape(-1, 3)
    axes = _unit_rows(np.concatenate([ha.eq[:, :3], hb.eq[:, :3], cross]))
    over, signed = sat_overlap(ha.verts, hb.verts, axes)
    return _best_two(over, signed)


def segment_hull_sat(a0, a1, hb: WorldHull):
    """Brute-force SAT of a segment (A) against a hull (B)."""
    u = a1 - a0
    cross = np.cross(u[None, :], hb.edge_dirs())
    axes = _unit_rows(np.concatenate([hb.eq[:, :3], cross]))
    over, signed = sat_overlap(np.array([a0, a1]), hb.verts, axes)
    return _best_two(over, signed)


def _best_two(over, signed):
    k = int(np.argmin(over))
    other = np.abs(signed @ signed[k]) < 1.0 - 1e-9  # axes in a different direction
    second = float(over[other].min()) if np.any(other) else np.inf
    return float(over[k]), signed[k], second


# ---------------------------------------------------------------------------------------------------
# pair references: (depth, normal A->B) of the deepest point


def capsule_capsule(pa, Ra, sa, pb, Rb, sb):
    qa, qb = closest_points_segments(*segment_ends(pa, Ra, sa[1]), *segment_ends(pb, Rb, sb[1]))
    d = qb - qa
    dist = np.linalg.norm(d)
    return sa[0] + sb[0] - dist, d / dist


def sphere_capsule(pa, sa, pb, Rb, sb):
    q = point_segment(pa, *segment_ends(pb, Rb, sb[1]))
    d = q - pa
    dist = np.linalg.norm(d)
    return sa[0] + sb[0] - dist, d / dist


def capsule_hull(pa, Ra, sa, hb: WorldHull, far=None):
    """Capsule A against hull B: SAT penetration if the segment meets the hull, else the distance.
    With ``far``, a pair whose SAT separation alone shows depth < -far skips the exact distance
    (the returned depth is then only an upper bound)."""
    a0, a1 = segment_ends(pa, Ra, sa[1])
    over, axis, second = segment_hull_sat(a0, a1, hb)
    if over > 0.0:
        return sa[0] + over, axis, second - over
    if far is not None and sa[0] + over < -far:
        return sa[0] + over, axis, np.inf  # a separating axis already shows depth < -far
    d, x, q = segment_hull_min_distance(a0, a1, hb)
    return sa[0] - d, (q - x) / np.linalg.norm(q - x), np.inf


def sphere_hull(pa, sa, hb: WorldHull):
    d, q = hb.signed_distance(pa)
    n = (q - pa) / d if d > 0 else (pa - q) / abs(d)
    return sa[0] - d, n


def plane_points(pa, n, pts):
    """Depth of each point below the plane through pa with normal n."""
    return -(pts - pa) @ n
