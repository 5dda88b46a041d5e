"""Narrow phase for capsules: plane-capsule, sphere-capsule, capsule-capsule, capsule-box and
capsule-hull, plus the small geometric helpers the hull kernels share.

Every ``collide_*`` kernel follows the contract of the narrow phase:

``collide_<a>_<b>(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features) -> count``

with A's and B's frame origins ``pa``/``pb`` (3,), rotations ``Ra``/``Rb`` (3, 3) (columns are the
local axes), sizes ``sa``/``sb`` (3,), the speculative ``margin`` [m] and the outputs: ``normal``
(3,) unit, from A to B; ``points`` (4, 3) world points midway between the two surfaces; ``depths``
(4,) penetration (positive = overlap, down to ``-margin``); ``features`` (4,) int64 ids, unique in the
manifold and unchanged by small motions. A capsule is the segment ``p +- h R[:, 2]`` swept by a
sphere of radius ``r``; its size is ``(r, h, 0)``. Hull pairs take ``(hb, hulls)`` in place of ``sb``.

A rounded shape (sphere, capsule) against a core shape touches where the cores are closest; with
``s`` the signed separation of the cores along the unit normal ``n`` (A to B) and radii ``ra``,
``rb``: ``depth = ra + rb - s`` and the midpoint between the surfaces is
``core_a + n (ra + s - rb) / 2``.

Inside the kernels 3-vectors are tuples of floats (no allocation, small compiled code); arrays are
read into tuples with :func:`vec`, :func:`row`, :func:`col`. Polytopes (boxes, hulls) are *views*:
``(verts, face_normal, face_offset, face_vert_start, face_vert_count, face_verts, edges, edge_faces)``
from :func:`tumble._core.collision.hull.hull_view` or :func:`~tumble._core.collision.hull.box_view`.
"""

from __future__ import annotations

import math

from tumble._core.collision.hull import box_view, hull_view
from tumble._core.config import kernel

#: Two capsule axes with |sin(angle)| below this are treated as parallel: two clipped points.
CAPSULE_PARALLEL_SIN = 1e-2
#: A closest-point direction within this (1 - cos, about 0.8 deg) of a polytope face normal makes a
#: face contact: the segment is clipped to the face (up to two points) instead of one point.
FACE_ONE_MINUS_COS = 1e-4
#: An edge axis (or B's face axis) must beat the incumbent face axis by this relative + absolute
#: [m] amount to be chosen (face axes give the stable multi-point manifolds of resting contact).
AXIS_REL_TOL = 0.02
AXIS_ABS_TOL = 1e-5
#: Feature id flag of a point generated on a polytope edge (single-point manifolds).
EDGE_FEATURE = 1 << 40
#: Feature id of a segment end over face f: f * FACE_FEATURE + end label.
FACE_FEATURE = 256

_TINY = 1e-12


# ---------------------------------------------------------------------------------------------------
# 3-vectors as tuples


@kernel
def vec(a):
    return (a[0], a[1], a[2])


@kernel
def row(a, i):
    return (a[i, 0], a[i, 1], a[i, 2])


@kernel
def col(R, j):
    return (R[0, j], R[1, j], R[2, j])


@kernel
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@kernel
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@kernel
def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@kernel
def axpy(a, s, b):
    """a + s b"""
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2])


@kernel
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@kernel
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@kernel
def norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@kernel
def mat_vec(R, v):
    """R v"""
    return (R[0, 0] * v[0] + R[0, 1] * v[1] + R[0, 2] * v[2],
            R[1, 0] * v[0] + R[1, 1] * v[1] + R[1, 2] * v[2],
            R[2, 0] * v[0] + R[2, 1] * v[1] + R[2, 2] * v[2])


@kernel
def mat_t_vec(R, v):
    """R^T v"""
    return (R[0, 0] * v[0] + R[1, 0] * v[1] + R[2, 0] * v[2],
            R[0, 1] * v[0] + R[1, 1] * v[1] + R[2, 1] * v[2],
            R[0, 2] * v[0] + R[1, 2] * v[1] + R[2, 2] * v[2])


@kernel
def store(out, v):
    out[0] = v[0]
    out[1] = v[1]
    out[2] = v[2]


@kernel
def store_row(out, k, v):
    out[k, 0] = v[0]
    out[k, 1] = v[1]
    out[k, 2] = v[2]


@kernel
def clamp(x, lo, hi):
    return lo if x < lo else (hi if x > hi else x)


@kernel
def unit_perpendicular(u):
    """Some unit vector perpendicular to the unit vector ``u``."""
    t = (1.0, 0.0, 0.0) if abs(u[0]) < 0.57 else (0.0, 1.0, 0.0)
    p = cross(u, t)
    return scale(p, 1.0 / norm(p))


# ---------------------------------------------------------------------------------------------------
# closest points, output


@kernel
def closest_segment_segment(p0, p1, q0, q1):
    """Parameters (s, t) in [0, 1] of the closest points p0 + s (p1 - p0), q0 + t (q1 - q0).

    Minimise |r + s d1 - t d2|^2 with r = p0 - q0: the stationary point of the lines is
    s = (b f - c e) / (a e - b^2) with a = d1.d1, b = d1.d2, c = d1.r, e = d2.d2, f = d2.r; s is
    clamped, t follows as t = (b s + f) / e, and if t leaves [0, 1] it is clamped and s recomputed
    as the projection s = (t b - c) / a (the squared distance is convex, so this is the minimum)."""
    d1 = sub(p1, p0)
    d2 = sub(q1, q0)
    r = sub(p0, q0)
    a = dot(d1, d1)
    e = dot(d2, d2)
    f = dot(d2, r)
    if a <= _TINY and e <= _TINY:
        return 0.0, 0.0
    if a <= _TINY:
        return 0.0, clamp(f / e, 0.0, 1.0)
    c = dot(d1, r)
    if e <= _TINY:
        return clamp(-c / a, 0.0, 1.0), 0.0
    b = dot(d1, d2)
    denom = a * e - b * b
    s = clamp((b * f - c * e) / denom, 0.0, 1.0) if denom > 1e-14 * a * e else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = clamp(-c / a, 0.0, 1.0)
    elif t > 1.0:
        t = 1.0
        s = clamp((b - c) / a, 0.0, 1.0)
    return s, t


@kernel
def closest_point_segment(x, q0, q1):
    """Parameter t in [0, 1] of the point of segment q0 q1 closest to x."""
    d = sub(q1, q0)
    e = dot(d, d)
    if e <= _TINY:
        return 0.0
    return clamp(dot(sub(x, q0), d) / e, 0.0, 1.0)


@kernel
def emit_point(points, depths, features, k, core_a, n, s, ra, rb, feature):
    """Write point k: cores separated by s along n (A to B) starting at core_a, radii ra and rb."""
    store_row(points, k, axpy(core_a, 0.5 * (ra + s - rb), n))
    depths[k] = ra + rb - s
    features[k] = feature


@kernel
def points_to_world(p, R, points, count):
    """Map ``count`` points from the frame (p, R) to the world, in place."""
    for k in range(count):
        store_row(points, k, add(vec(p), mat_vec(R, row(points, k))))


# ---------------------------------------------------------------------------------------------------
# plane, sphere, capsule


@kernel
def collide_plane_capsule(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features):
    """Half-space A (through pa, outward Ra[:, 2]) against capsule B: one point per segment end
    within ``margin`` (feature = end index, 0 for -h, 1 for +h)."""
    n = col(Ra, 2)
    r, h = sb[0], sb[1]
    axis = col(Rb, 2)
    count = 0
    for j in range(2):
        end = axpy(vec(pb), (2.0 * j - 1.0) * h, axis)
        s = dot(n, sub(end, vec(pa)))  # height of the segment end above the plane
        if s - r <= margin:
            # the plane's core point is the end's projection end - s n
            emit_point(points, depths, features, count, axpy(end, -s, n), n, s, 0.0, r, j)
            count += 1
    store(normal, n)
    return count


@kernel
def collide_sphere_capsule(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features):
    """Sphere A against capsule B: the sphere centre against the closest point of the segment."""
    ra, rb, h = sa[0], sb[0], sb[1]
    axis = col(Rb, 2)
    c = vec(pa)
    q0 = axpy(vec(pb), -h, axis)
    q1 = axpy(vec(pb), h, axis)
    q = axpy(q0, closest_point_segment(c, q0, q1), sub(q1, q0))
    d = sub(q, c)
    dist = norm(d)
    if dist - ra - rb > margin:
        return 0
    n = scale(d, 1.0 / dist) if dist > _TINY else unit_perpendicular(axis)
    emit_point(points, depths, features, 0, c, n, dist, ra, rb, 0)
    store(normal, n)
    return 1


@kernel
def _capsule_capsule_normal(qa, qb, ua, ub, ca, cb):
    """Unit normal A->B between the closest points qa, qb; when they coincide (crossing axes) the
    axes' common perpendicular, oriented from centre ca towards centre cb."""
    d = sub(qb, qa)
    dist = norm(d)
    if dist > _TINY:
        return scale(d, 1.0 / dist)
    c = cross(ua, ub)
    lc = norm(c)
    n = scale(c, 1.0 / lc) if lc > _TINY else unit_perpendicular(ua)
    if dot(n, sub(cb, ca)) < 0.0:
        n = scale(n, -1.0)
    return n


@kernel
def _parallel_capsules(ca, ua, ra, ha, cb, ub, rb, hb, n, margin, points, depths, features):
    """Two points at the ends of the overlap of nearly parallel segments (see collide_capsule_capsule)."""
    # B's ends projected on A's axis, as A's parameter in [-ha, ha]
    sb0 = dot(sub(axpy(cb, -hb, ub), ca), ua)
    sb1 = dot(sub(axpy(cb, hb, ub), ca), ua)
    lo_b, lo_lab = (sb0, 3) if sb0 <= sb1 else (sb1, 4)
    hi_b, hi_lab = (sb1, 4) if sb0 <= sb1 else (sb0, 3)
    lo, lab0 = (-ha, 1) if -ha >= lo_b else (lo_b, lo_lab)
    hi, lab1 = (ha, 2) if ha <= hi_b else (hi_b, hi_lab)
    if hi - lo <= 1e-9 * (ha + hb):
        return 0
    count = 0
    for k in range(2):
        qa = axpy(ca, lo if k == 0 else hi, ua)
        qb = axpy(cb, clamp(dot(sub(qa, cb), ub), -hb, hb), ub)
        sep = dot(n, sub(qb, qa))
        if sep - ra - rb <= margin:
            emit_point(points, depths, features, count, qa, n, sep, ra, rb, lab0 if k == 0 else lab1)
            count += 1
    return count


@kernel
def collide_capsule_capsule(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features):
    """Capsule A against capsule B.

    One point at the closest points of the two segments (feature 0). When the axes are parallel
    within CAPSULE_PARALLEL_SIN, B's segment is clipped to the extent of A's along A's axis and the
    two ends of the overlap become the points, both measured along the common normal (for parallel
    lines the separation along their common perpendicular is the same everywhere). Their feature is
    1 / 2 when the end comes from A's -h / +h end and 3 / 4 when from B's -h / +h end.
    """
    ra, ha = sa[0], sa[1]
    rb, hb = sb[0], sb[1]
    ca = vec(pa)
    cb = vec(pb)
    ua = col(Ra, 2)
    ub = col(Rb, 2)
    a0 = axpy(ca, -ha, ua)
    a1 = axpy(ca, ha, ua)
    b0 = axpy(cb, -hb, ub)
    b1 = axpy(cb, hb, ub)
    s, t = closest_segment_segment(a0, a1, b0, b1)
    qa = axpy(a0, s, sub(a1, a0))
    qb = axpy(b0, t, sub(b1, b0))
    if norm(sub(qb, qa)) - ra - rb > margin:
        return 0
    n = _capsule_capsule_normal(qa, qb, ua, ub, ca, cb)
    store(normal, n)
    if norm(cross(ua, ub)) < CAPSULE_PARALLEL_SIN:
        count = _parallel_capsules(ca, ua, ra, ha, cb, ub, rb, hb, n, margin, points, depths, features)
        if count > 0:
            return count
    emit_point(points, depths, features, 0, qa, n, dot(n, sub(qb, qa)), ra, rb, 0)
    return 1


# ---------------------------------------------------------------------------------------------------
# segment against a polytope view (all in the polytope's frame)


@kernel
def face_side(view, f, k):
    """Start vertex a and outward normal (b - a) x n of the side plane over edge k (a -> b) of face f
    (counter-clockwise about the face normal n, so (b - a) x n points out of the polygon)."""
    verts, fn, fvs, fvc, fv = view[0], view[1], view[3], view[4], view[5]
    m = fvc[f]
    a = row(verts, fv[fvs[f] + k])
    b = row(verts, fv[fvs[f] + (k + 1) % m])
    return a, cross(sub(b, a), row(fn, f))


@kernel
def inside_face(view, f, x):
    """Whether the point x projects inside the polygon of face f (within a relative 1e-12)."""
    for k in range(view[4][f]):
        a, side = face_side(view, f, k)
        if dot(side, sub(x, a)) > 1e-12 * norm(side):
            return False
    return True


@kernel
def best_face_along(fn, n):
    """Face whose outward normal is closest to the unit direction n, and that cosine."""
    best = -2.0
    bf = 0
    for f in range(fn.shape[0]):
        c = dot(row(fn, f), n)
        if c > best:
            best = c
            bf = f
    return bf, best


@kernel
def _segment_sat(p0, p1, view):
    """SAT of segment p0 p1 against the polytope: best face (sep, f) and best edge (sep, e, axis).

    The Minkowski sum of the polytope and the reversed segment has as faces the polytope's faces and
    the parallelograms of each edge whose two face normals a, b lie on opposite sides of the plane
    normal to the segment direction u ((u.a)(u.b) < 0); that face's normal is +-(u x edge), signed
    towards a + b. Along an axis n the separation is min_segment(n.x) - max_polytope(n.x)."""
    verts, fn, fo, edges, ef = view[0], view[1], view[2], view[6], view[7]
    sep_f = -math.inf
    best_f = -1
    for f in range(fn.shape[0]):
        nf = row(fn, f)
        s = min(dot(nf, p0), dot(nf, p1)) - fo[f]
        if s > sep_f:
            sep_f = s
            best_f = f
    d = sub(p1, p0)
    u = scale(d, 1.0 / norm(d))
    sep_e = -math.inf
    best_e = -1
    axis_e = (0.0, 0.0, 1.0)
    for e in range(edges.shape[0]):
        a = row(fn, ef[e, 0])
        b = row(fn, ef[e, 1])
        if dot(u, a) * dot(u, b) >= 0.0:
            continue
        v0 = row(verts, edges[e, 0])
        ev = sub(row(verts, edges[e, 1]), v0)
        ax = cross(u, ev)
        la = norm(ax)
        if la <= 1e-9 * norm(ev):
            continue
        ax = scale(ax, 1.0 / la if dot(ax, add(a, b)) > 0.0 else -1.0 / la)
        s = dot(ax, sub(p0, v0))
        if s > sep_e:
            sep_e = s
            best_e = e
            axis_e = ax
    return sep_f, best_f, sep_e, best_e, axis_e


@kernel
def closest_face_point(x, view, best):
    """The face whose interior is nearest to a point x above it, if nearer than ``best``: x must lie
    above the face (positive plane distance) and its projection inside the face polygon.
    Returns (dist, projected point, face), or (best, x, -1) when no face beats ``best``."""
    fn, fo = view[1], view[2]
    bq = x
    bf = -1
    for f in range(fn.shape[0]):
        nf = row(fn, f)
        s = dot(nf, x) - fo[f]
        if s > 0.0 and s < best:
            y = axpy(x, -s, nf)
            if inside_face(view, f, y):
                best = s
                bq = y
                bf = f
    return best, bq, bf


@kernel
def segment_polytope_distance(p0, p1, view):
    """Exact distance from a segment outside the polytope to it.

    The closest pair is either a segment end against a face interior (the end lies above the face
    and projects inside it) or the segment against a polytope edge (which covers the vertices).
    Returns (dist, point on segment, point on polytope, feature)."""
    verts, edges = view[0], view[6]
    best = math.inf
    bp = p0
    bq = p0
    feat = 0
    for j in range(2):
        x = p0 if j == 0 else p1
        d, y, f = closest_face_point(x, view, best)
        if f >= 0:
            best = d
            bp = x
            bq = y
            feat = f * FACE_FEATURE + j
    for e in range(edges.shape[0]):
        v0 = row(verts, edges[e, 0])
        v1 = row(verts, edges[e, 1])
        s, t = closest_segment_segment(p0, p1, v0, v1)
        x = axpy(p0, s, sub(p1, p0))
        y = axpy(v0, t, sub(v1, v0))
        d = norm(sub(x, y))
        if d < best:
            best = d
            bp = x
            bq = y
            feat = EDGE_FEATURE + e
    return best, bp, bq, feat


@kernel
def clip_segment_to_face(p0, p1, view, f):
    """Clip p0 + t (p1 - p0) to the prism over face f (inside every side plane).

    Returns (ok, t0, t1, label0, label1); a label is 0 / 1 for an original end, 2 + k when the end
    was cut by the side plane of the face's k-th edge."""
    d = sub(p1, p0)
    t0, t1 = 0.0, 1.0
    lab0, lab1 = 0, 1
    for k in range(view[4][f]):
        a, side = face_side(view, f, k)
        h0 = dot(side, sub(p0, a))  # side distance (scaled) at t = 0, inside when <= 0
        dh = dot(side, d)
        if abs(dh) <= _TINY * norm(side):
            if h0 > 0.0:
                return False, t0, t1, lab0, lab1
            continue
        tc = -h0 / dh
        if dh > 0.0:
            if tc < t1:
                t1 = tc
                lab1 = 2 + k
        elif tc > t0:
            t0 = tc
            lab0 = 2 + k
    return t0 <= t1, t0, t1, lab0, lab1


@kernel
def _segment_face_contact(p0, p1, r, view, f, margin, points, depths, features):
    """Points of a segment (radius r) on face f: the ends of the segment clipped to the face, each
    measured along the face normal (points in the polytope frame)."""
    nf = row(view[1], f)
    ok, t0, t1, lab0, lab1 = clip_segment_to_face(p0, p1, view, f)
    if not ok:
        return 0
    m = scale(nf, -1.0)  # normal from the segment (A) to the polytope (B)
    count = 0
    for k in range(2):
        if k == 1 and t1 - t0 <= 1e-9:
            break
        x = axpy(p0, t0 if k == 0 else t1, sub(p1, p0))
        s = dot(nf, x) - view[2][f]
        if s - r <= margin:
            emit_point(points, depths, features, count, x, m, s, r, 0.0,
                       f * FACE_FEATURE + (lab0 if k == 0 else lab1))
            count += 1
    return count


@kernel
def _segment_polytope_local(p0, p1, r, view, margin, points, depths, features):
    """Capsule (segment p0 p1, radius r) = A against the polytope view = B, in B's frame.
    Returns (count, normal A->B).

    SAT first (exact penetration of an intersecting segment, a lower bound of the distance
    otherwise); a disjoint segment then gets its exact distance. Face contacts (the SAT face, or the
    closest direction within FACE_ONE_MINUS_COS of a face normal) clip the segment to the face: up
    to two points, feature face * 256 + end label. Otherwise one point: an edge (feature
    EDGE_FEATURE + edge) or a segment end over a face (face * 256 + end)."""
    fn = view[1]
    sep_f, best_f, sep_e, best_e, axis_e = _segment_sat(p0, p1, view)
    use_edge = best_e >= 0 and sep_e > sep_f + AXIS_REL_TOL * abs(sep_f) + AXIS_ABS_TOL
    sep = sep_e if use_edge else sep_f
    if sep - r > margin:
        return 0, axis_e
    if sep > 0.0:
        dist, x, y, feat = segment_polytope_distance(p0, p1, view)
        if dist - r > margin:
            return 0, axis_e
        nout = scale(sub(x, y), 1.0 / dist)  # out of the polytope, towards the segment
        f, c = best_face_along(fn, nout)
        if c >= 1.0 - FACE_ONE_MINUS_COS:
            count = _segment_face_contact(p0, p1, r, view, f, margin, points, depths, features)
            if count > 0:
                return count, scale(row(fn, f), -1.0)
        emit_point(points, depths, features, 0, x, scale(nout, -1.0), dist, r, 0.0, feat)
        return 1, scale(nout, -1.0)
    if not use_edge:
        n = row(fn, best_f)
        count = _segment_face_contact(p0, p1, r, view, best_f, margin, points, depths, features)
        if count > 0:
            return count, scale(n, -1.0)
        # the deepest end lies outside the face's prism: one point at that end
        j = 0 if dot(n, p0) <= dot(n, p1) else 1
        emit_point(points, depths, features, 0, p0 if j == 0 else p1, scale(n, -1.0), sep_f, r, 0.0,
                   best_f * FACE_FEATURE + j)
        return 1, scale(n, -1.0)
    verts, edges = view[0], view[6]
    v0 = row(verts, edges[best_e, 0])
    v1 = row(verts, edges[best_e, 1])
    s, t = closest_segment_segment(p0, p1, v0, v1)
    m = scale(axis_e, -1.0)
    emit_point(points, depths, features, 0, axpy(p0, s, sub(p1, p0)), m, sep_e, r, 0.0, EDGE_FEATURE + best_e)
    return 1, m


@kernel
def capsule_polytope(pa, Ra, sa, pb, Rb, view, margin, normal, points, depths, features):
    """Capsule A against polytope view B: the segment is brought into B's frame, collided there and
    the results mapped back to the world."""
    r, h = sa[0], sa[1]
    c = mat_t_vec(Rb, sub(vec(pa), vec(pb)))
    u = mat_t_vec(Rb, col(Ra, 2))
    count, n = _segment_polytope_local(axpy(c, -h, u), axpy(c, h, u), r, view, margin, points, depths,
                                       features)
    if count > 0:
        store(normal, mat_vec(Rb, n))
        points_to_world(pb, Rb, points, count)
    return count


@kernel
def collide_capsule_box(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features):
    """Capsule A against box B (half extents sb), the box taken as a polytope on the fly."""
    return capsule_polytope(pa, Ra, sa, pb, Rb, box_view(sb), margin, normal, points, depths, features)


@kernel
def collide_capsule_hull(pa, Ra, sa, pb, Rb, hb, hulls, margin, normal, points, depths, features):
    """Capsule A against hull ``hb`` of ``hulls`` (B's frame origin at the hull's centre of mass)."""
    return capsule_polytope(pa, Ra, sa, pb, Rb, hull_view(hulls, hb), margin, normal, points, depths,
                            features)
