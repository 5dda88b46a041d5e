"""Narrow phase for convex hulls: plane-hull, sphere-hull, box-hull and hull-hull.

Kernel forms (see :mod:`tumble._core.collision.manifold_capsule` for the output contract)::

    collide_plane_hull(pa, Ra, sa, pb, Rb, hb, hulls, margin, normal, points, depths, features)
    collide_sphere_hull(pa, Ra, sa, pb, Rb, hb, hulls, margin, normal, points, depths, features)
    collide_box_hull(pa, Ra, sa, pb, Rb, hb, hulls, margin, normal, points, depths, features)
    collide_hull_hull(pa, Ra, ha, pb, Rb, hb, hulls, margin, normal, points, depths, features)

``hulls`` is a :class:`~tumble._core.collision.hull.HullArrays`; ``ha``/``hb`` index it, and a hull's
frame origin is its centre of mass. The box of ``collide_box_hull`` is turned into a polytope view on
the fly from its half extents ``sa`` (no registered hull needed).

Polytope against polytope (Gregorius, "The separating axis test between convex polyhedra", GDC
2013, in our own words): in A's frame, the candidate axes are A's face normals, B's face normals and
the cross products of an edge of A with an edge of B whose arcs on the Gauss maps of A and -B cross
(only those pairs make faces of the Minkowski difference). Along an axis n out of A the separation
is ``min_B n.x - max_A n.x``; the largest separation over all candidates is minus the penetration.
A face axis is kept unless an edge axis beats it by ``AXIS_REL_TOL |sep| + AXIS_ABS_TOL`` (and A's
face wins ties against B's) so that resting contact keeps its face manifold.

Face contact: the face of the other hull most anti-parallel to the reference normal (incident face)
is clipped against the side planes of the reference face (Sutherland-Hodgman); the clipped vertices
within ``margin`` of the reference plane are the points, reduced to at most four. Every polygon
vertex carries the two features it lies between (an incident edge i or a reference side k), which
makes the feature id of a point combinatorial and so stable under small motions:
``flip << 62 | ref_face << 41 | inc_face << 20 | in_feature << 10 | out_feature`` with feature codes
``i`` (incident edge, i < 512) and ``512 + k`` (reference side); ``flip`` is 1 when the reference face
is on B. Edge contact gives one point with the negative id ``-(1 + edge_a << 21 + edge_b)``.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core.collision.hull import box_view, hull_view
from tumble._core.collision.manifold_capsule import (
    AXIS_ABS_TOL,
    AXIS_REL_TOL,
    EDGE_FEATURE,
    add,
    axpy,
    closest_face_point,
    closest_point_segment,
    closest_segment_segment,
    col,
    collide_capsule_hull,
    cross,
    dot,
    emit_point,
    face_side,
    mat_t_vec,
    mat_vec,
    norm,
    points_to_world,
    row,
    scale,
    store,
    store_row,
    sub,
    vec,
)
from tumble._core.config import kernel

__all__ = ["collide_box_hull", "collide_capsule_hull", "collide_hull_hull", "collide_plane_hull",
           "collide_sphere_hull", "polytope_pair", "reduce_manifold"]

_REF_SIDE = 512  # feature code offset of a reference-face side plane in clip labels
#: Manifold reduction: candidates within this depth [m] of the deepest count as equally deep.
DEPTH_TIE_TOL = 1e-4
#: Manifold reduction: relative tolerance for equal distances and areas.
SPAN_TIE_TOL = 1e-3


# ---------------------------------------------------------------------------------------------------
# manifold reduction


@kernel
def _area(cp, i, j, k, n):
    """Twice the signed area of triangle (i, j, k) of candidate points, counter-clockwise about n."""
    a = row(cp, i)
    return dot(cross(sub(row(cp, j), a), sub(row(cp, k), a)), n)


@kernel
def _copy_chosen(cp, cd, cf, chosen, m, points, depths, features):
    """Copy candidates chosen[:m] to the outputs; returns m."""
    for k in range(m):
        i = chosen[k]
        store_row(points, k, row(cp, i))
        depths[k] = cd[i]
        features[k] = cf[i]
    return m


@kernel
def _first_near_max(values, count, tol):
    """Lowest index whose value is within tol of the largest: a tie-break by the (combinatorial)
    candidate order, so that nearly equal candidates do not swap under tiny motions."""
    best = -math.inf
    for k in range(count):
        best = max(best, values[k])
    for k in range(count):
        if values[k] >= best - tol:
            return k, best
    return 0, best


@kernel
def reduce_manifold(cp, cd, cf, count, n, points, depths, features):
    """Copy ``count`` candidates (points cp, depths cd, features cf) to the outputs, keeping at most
    four: the deepest, the one farthest from it, the one making the largest triangle with those two,
    and the one adding the most area outside that triangle (largest support polygon). Near ties
    (DEPTH_TIE_TOL in depth, a relative SPAN_TIE_TOL in distance and area) go to the earlier candidate."""
    chosen = np.arange(4)
    if count <= 4:
        return _copy_chosen(cp, cd, cf, chosen, count, points, depths, features)
    i0, _ = _first_near_max(cd, count, DEPTH_TIE_TOL)
    val = np.empty(count)
    for k in range(count):
        d = sub(row(cp, k), row(cp, i0))
        val[k] = dot(d, d)
    i1, best = _first_near_max(val, count, SPAN_TIE_TOL * val.max())
    for k in range(count):
        val[k] = abs(_area(cp, i0, i1, k, n))
    i2, best = _first_near_max(val, count, SPAN_TIE_TOL * val.max())
    chosen[0] = i0
    chosen[1] = i1
    if best <= 1e-14 * dot(sub(row(cp, i1), row(cp, i0)), sub(row(cp, i1), row(cp, i0))):
        return _copy_chosen(cp, cd, cf, chosen, 2, points, depths, features)  # one line: its ends
    if _area(cp, i0, i1, i2, n) < 0.0:  # make (i0, i1, i2) counter-clockwise about n
        i1, i2 = i2, i1
    for k in range(count):
        # area the candidate adds outside the triangle (largest over its edges, positive outside)
        val[k] = max(-_area(cp, i0, i1, k, n), max(-_area(cp, i1, i2, k, n), -_area(cp, i2, i0, k, n)))
    i3, best = _first_near_max(val, count, SPAN_TIE_TOL * max(val.max(), 0.0))
    chosen[1] = i1
    chosen[2] = i2
    chosen[3] = i3
    return _copy_chosen(cp, cd, cf, chosen, 3 if best <= 1e-14 else 4, points, depths, features)


# ---------------------------------------------------------------------------------------------------
# plane and sphere


@kernel
def collide_plane_hull(pa, Ra, sa, pb, Rb, hb, hulls, margin, normal, points, depths, features):
    """Half-space A against hull B: the hull vertices within ``margin`` of the plane (feature = vertex
    index), reduced to the four spanning the largest support polygon, the deepest first."""
    verts = hull_view(hulls, hb)[0]
    n = col(Ra, 2)
    nv = verts.shape[0]
    cp = np.empty((nv, 3))
    cd = np.empty(nv)
    cf = np.empty(nv, dtype=np.int64)
    count = 0
    for i in range(nv):
        w = add(vec(pb), mat_vec(Rb, row(verts, i)))
        s = dot(n, sub(w, vec(pa)))
        if s <= margin:
            emit_point(cp, cd, cf, count, axpy(w, -s, n), n, s, 0.0, 0.0, i)
            count += 1
    store(normal, n)
    return reduce_manifold(cp, cd, cf, count, n, points, depths, features)


@kernel
def point_polytope_distance(x, view):
    """Exact distance from a point outside the polytope: a face interior (x lies above the face and
    projects inside it) or an edge. Returns (dist, closest polytope point, feature)."""
    verts, edges = view[0], view[6]
    best, bq, feat = closest_face_point(x, view, math.inf)
    if feat < 0:
        feat = 0
    for e in range(edges.shape[0]):
        v0 = row(verts, edges[e, 0])
        v1 = row(verts, edges[e, 1])
        y = axpy(v0, closest_point_segment(x, v0, v1), sub(v1, v0))
        d = norm(sub(x, y))
        if d < best:
            best = d
            bq = y
            feat = EDGE_FEATURE + e
    return best, bq, feat


@kernel
def collide_sphere_hull(pa, Ra, sa, pb, Rb, hb, hulls, margin, normal, points, depths, features):
    """Sphere A (radius sa[0]) against hull B, in B's frame. Centre inside: the face of least
    penetration (feature = face). Outside: the exact closest point (face, or EDGE_FEATURE + edge)."""
    view = hull_view(hulls, hb)
    fn, fo = view[1], view[2]
    r = sa[0]
    c = mat_t_vec(Rb, sub(vec(pa), vec(pb)))
    sep = -math.inf
    bf = 0
    for f in range(fn.shape[0]):
        s = dot(row(fn, f), c) - fo[f]
        if s > sep:
            sep = s
            bf = f
    if sep - r > margin:
        return 0
    if sep <= 0.0:
        n = scale(row(fn, bf), -1.0)
        feat = bf
    else:
        sep, q, feat = point_polytope_distance(c, view)
        if sep - r > margin:
            return 0
        n = scale(sub(q, c), 1.0 / sep)
    emit_point(points, depths, features, 0, c, n, sep, r, 0.0, feat)
    store(normal, mat_vec(Rb, n))
    points_to_world(pb, Rb, points, 1)
    return 1


# ---------------------------------------------------------------------------------------------------
# polytope against polytope (both views in A's frame, A's centre of mass at the origin)


@kernel
def _view_to_frame(view, R, t):
    """The view with vertices x -> R x + t, normals n -> R n and offsets o -> o + (R n).t."""
    verts, fn, fo, fvs, fvc, fv, edges, ef = view
    v2 = np.empty_like(verts)
    for i in range(verts.shape[0]):
        store_row(v2, i, add(mat_vec(R, row(verts, i)), t))
    n2 = np.empty_like(fn)
    o2 = np.empty_like(fo)
    for f in range(fn.shape[0]):
        nf = mat_vec(R, row(fn, f))
        store_row(n2, f, nf)
        o2[f] = fo[f] + dot(nf, t)
    return (v2, n2, o2, fvs, fvc, fv, edges, ef)


@kernel
def _face_query(fn, fo, vq):
    """Best face axis of P (normals fn, offsets fo) against Q's vertices vq:
    max over faces f of (min_Q n_f.x - offset_f), and that face."""
    best = -math.inf
    bf = -1
    for f in range(fn.shape[0]):
        nf = row(fn, f)
        lo = math.inf
        for i in range(vq.shape[0]):
            lo = min(lo, dot(nf, row(vq, i)))
        if lo - fo[f] > best:
            best = lo - fo[f]
            bf = f
    return best, bf


@kernel
def is_minkowski_face(a, b, c, d):
    """Whether the Gauss-map arcs a-b (edge of A) and c-d (edge of -B) cross.

    c, d must lie on opposite sides of the plane of a, b; a, b on opposite sides of the plane of c, d;
    and the crossing must be on the same hemisphere (not the antipodal pair of great circles)."""
    bxa = cross(b, a)
    dxc = cross(d, c)
    cba = dot(c, bxa)
    dba = dot(d, bxa)
    adc = dot(a, dxc)
    bdc = dot(b, dxc)
    return cba * dba < 0.0 and adc * bdc < 0.0 and cba * bdc > 0.0


@kernel
def _edge_query(A, B):
    """Best edge-edge axis: (sep, edge of A, edge of B, axis out of A); sep = -inf if none."""
    va, fna, ea, efa = A[0], A[1], A[6], A[7]
    vb, fnb, eb, efb = B[0], B[1], B[6], B[7]
    best = -math.inf
    best_a = -1
    best_b = -1
    axis = (0.0, 0.0, 1.0)
    for i in range(ea.shape[0]):
        a0 = row(va, ea[i, 0])
        da = sub(row(va, ea[i, 1]), a0)
        na0 = row(fna, efa[i, 0])
        na1 = row(fna, efa[i, 1])
        la = norm(da)
        for j in range(eb.shape[0]):
            if not is_minkowski_face(na0, na1, scale(row(fnb, efb[j, 0]), -1.0),
                                     scale(row(fnb, efb[j, 1]), -1.0)):
                continue
            b0 = row(vb, eb[j, 0])
            db = sub(row(vb, eb[j, 1]), b0)
            ax = cross(da, db)
            lx = norm(ax)
            if lx <= 1e-9 * la * norm(db):  # parallel edges: covered by the face axes
                continue
            # point out of A (A's centre of mass, inside A, is the origin)
            ax = scale(ax, 1.0 / lx if dot(ax, a0) >= 0.0 else -1.0 / lx)
            s = dot(ax, sub(b0, a0))
            if s > best:
                best = s
                best_a = i
                best_b = j
                axis = ax
    return best, best_a, best_b, axis


@kernel
def _clip_polygon(xs, lin, lout, count, a, side, code, ys, yin, yout):
    """Sutherland-Hodgman: keep the part of polygon xs[:count] with side.(x - a) <= 0, into ys.

    A vertex carries the features it lies between (lin before it, lout after it); a new vertex where
    the edge p->q leaves the half-space lies between that edge (p's out feature) and the plane
    ``code``; where it enters, between ``code`` and that edge."""
    m = 0
    for i in range(count):
        j = (i + 1) % count
        p = row(xs, i)
        q = row(xs, j)
        dp = dot(side, sub(p, a))
        dq = dot(side, sub(q, a))
        if dp <= 0.0:
            store_row(ys, m, p)
            yin[m] = lin[i]
            yout[m] = lout[i]
            m += 1
        if (dp <= 0.0) != (dq <= 0.0):
            store_row(ys, m, axpy(p, dp / (dp - dq), sub(q, p)))
            yin[m] = lout[i] if dp <= 0.0 else code
            yout[m] = code if dp <= 0.0 else lout[i]
            m += 1
    return m


@kernel
def _incident_face(fn, nref):
    """Face whose outward normal is most anti-parallel to nref."""
    best = math.inf
    bf = 0
    for f in range(fn.shape[0]):
        c = dot(row(fn, f), nref)
        if c < best:
            best = c
            bf = f
    return bf


@kernel
def _face_contact(R, I, ref_f, flip, margin, points, depths, features):
    """Clip the incident face of I against reference face ref_f of R (see the module docstring);
    ``flip`` (bool) tells that R is B. Points are in the common frame; returns the count (0 only if
    nothing lies within margin)."""
    nref = row(R[1], ref_f)
    off = R[2][ref_f]
    vi, fvsi, fvci, fvi = I[0], I[3], I[4], I[5]
    inc_f = _incident_face(I[1], nref)
    m_inc = fvci[inc_f]
    cap = m_inc + R[4][ref_f] + 1  # each clip adds at most one vertex to a convex polygon
    xs = np.empty((cap, 3))
    ys = np.empty((cap, 3))
    lin = np.empty(cap, dtype=np.int64)
    lout = np.empty(cap, dtype=np.int64)
    yin = np.empty(cap, dtype=np.int64)
    yout = np.empty(cap, dtype=np.int64)
    for i in range(m_inc):
        store_row(xs, i, row(vi, fvi[fvsi[inc_f] + i]))
        lin[i] = (i + m_inc - 1) % m_inc  # incident edge i runs from vertex i to vertex i + 1
        lout[i] = i
    count = m_inc
    for k in range(R[4][ref_f]):
        a, side = face_side(R, ref_f, k)
        count = _clip_polygon(xs, lin, lout, count, a, side, _REF_SIDE + k, ys, yin, yout)
        xs, ys = ys, xs
        lin, yin = yin, lin
        lout, yout = yout, lout
        if count == 0:
            break
    head = (np.int64(1 if flip else 0) << 62) | (np.int64(ref_f) << 41)
    cp = np.empty((max(count, 1), 3))
    cd = np.empty(max(count, 1))
    cf = np.empty(max(count, 1), dtype=np.int64)
    n = 0
    for i in range(count):
        x = row(xs, i)
        s = dot(nref, x) - off
        if s <= margin:
            feat = head | (np.int64(inc_f) << 20) | (lin[i] << 10) | lout[i]
            emit_point(cp, cd, cf, n, axpy(x, -s, nref), nref, s, 0.0, 0.0, feat)
            n += 1
    if n == 0:
        # nothing of the incident face lies over the reference face: I's deepest vertex, if close
        lo = math.inf
        iv = 0
        for i in range(vi.shape[0]):
            s = dot(nref, row(vi, i))
            if s < lo:
                lo = s
                iv = i
        s = lo - off
        if s > margin:
            return 0
        feat = head | (np.int64(iv) << 20) | 0xFFFFF
        emit_point(cp, cd, cf, 0, axpy(row(vi, iv), -s, nref), nref, s, 0.0, 0.0, feat)
        n = 1
    return reduce_manifold(cp, cd, cf, n, nref, points, depths, features)


@kernel
def polytope_pair(pa, Ra, A, pb, Rb, view_b, margin, normal, points, depths, features):
    """Polytope A against polytope B. B is brought into A's frame (R = Ra^T Rb, t = Ra^T (pb - pa)),
    the separating axes are searched there and the manifold is mapped back to the world."""
    R = np.empty((3, 3))
    for k in range(3):
        store_row(R, k, mat_t_vec(Rb, col(Ra, k)))  # R[k, :] = (Ra[:, k])^T Rb
    B = _view_to_frame(view_b, R, mat_t_vec(Ra, sub(vec(pb), vec(pa))))
    sep_a, fa = _face_query(A[1], A[2], B[0])
    if sep_a > margin:
        return 0
    sep_b, fb = _face_query(B[1], B[2], A[0])
    if sep_b > margin:
        return 0
    sep_e, ea, eb, axis = _edge_query(A, B)
    if sep_e > margin:
        return 0
    use_b = sep_b > sep_a + AXIS_REL_TOL * abs(sep_a) + AXIS_ABS_TOL
    sep_face = sep_b if use_b else sep_a
    if ea >= 0 and sep_e > sep_face + AXIS_REL_TOL * abs(sep_face) + AXIS_ABS_TOL:
        a0 = row(A[0], A[6][ea, 0])
        a1 = row(A[0], A[6][ea, 1])
        b0 = row(B[0], B[6][eb, 0])
        b1 = row(B[0], B[6][eb, 1])
        s, t = closest_segment_segment(a0, a1, b0, b1)
        emit_point(points, depths, features, 0, axpy(a0, s, sub(a1, a0)), axis, sep_e, 0.0, 0.0,
                   -(1 + (np.int64(ea) << 21) + eb))
        count = 1
        n = axis
    elif use_b:
        count = _face_contact(B, A, fb, use_b, margin, points, depths, features)
        n = scale(row(B[1], fb), -1.0)
    else:
        count = _face_contact(A, B, fa, use_b, margin, points, depths, features)
        n = row(A[1], fa)
    if count > 0:
        store(normal, mat_vec(Ra, n))
        points_to_world(pa, Ra, points, count)
    return count


@kernel
def collide_box_hull(pa, Ra, sa, pb, Rb, hb, hulls, margin, normal, points, depths, features):
    """Box A (half extents sa, turned into a polytope view on the fly) against hull B."""
    return polytope_pair(pa, Ra, box_view(sa), pb, Rb, hull_view(hulls, hb), margin, normal, points,
                         depths, features)


@kernel
def collide_hull_hull(pa, Ra, ha, pb, Rb, hb, hulls, margin, normal, points, depths, features):
    """Hull A against hull B (both from ``hulls``)."""
    return polytope_pair(pa, Ra, hull_view(hulls, ha), pb, Rb, hull_view(hulls, hb), margin, normal,
                         points, depths, features)
