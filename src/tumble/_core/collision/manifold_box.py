"""Contact manifolds for plane-box and box-box (Catto 001 §8.2, Fig. 3 and 4).

Signature of every pair function (type_a <= type_b, normal from A to B):

    collide_<a>_<b>(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features) -> count

Box conventions (all local to the box, half extents h = (hx, hy, hz)):

* vertex k = bx + 2 by + 4 bz has coordinates ((2 bx - 1) hx, (2 by - 1) hy, (2 bz - 1) hz);
* face f = 2 i + (0 for the +e_i face, 1 for the -e_i face);
* edge e = 4 i + 2 bu + bv is the edge along axis i at sign (2 bu - 1) on axis u = (i + 1) % 3 and
  (2 bv - 1) on axis v = (i + 2) % 3;
* the 4 edges of a face with normal axis j are numbered 0..3 around it: face vertex k has tangent
  signs (s_p, s_q) = (+,+), (-,+), (-,-), (+,-) on p = (j + 1) % 3, q = (j + 2) % 3, and face edge k
  runs from face vertex k to k + 1;
* the 4 side planes of a reference face with tangents u, v are 0: +u, 1: +v, 2: -u, 3: -v, so
  reference corner c (between sides c and c + 1) has signs (+,+), (-,+), (-,-), (+,-).

Feature ids (unique within a manifold, see :func:`describe_box_feature`):

* plane-box: the box vertex index 0..7;
* box-box face contact: FACE_BASE + ((((owner * 6 + ref_face) * 6 + inc_face) * 8 + lo) * 8 + hi)
  where owner is 0 when A owns the reference face and 1 when B does, and lo < hi are the labels of
  the two lines that meet at the clipped vertex: 0..3 the incident face edges, 4..7 the reference
  side planes (Catto 001 §8.2: "the combination of the indices of these two edges");
* box-box edge-edge: EDGE_BASE + 12 * edge_a + edge_b.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core.config import kernel

FACE_BASE = 0
EDGE_BASE = 8192

#: SAT bias (Catto's Box2D-Lite rule): a candidate axis replaces the current one only when its
#: separation exceeds REL_TOL * current + ABS_TOL_FRAC * (smallest half extent). This keeps the
#: reference face from flickering between A's face, B's face and edge axes for resting contacts.
REL_TOL = 0.95
ABS_TOL_FRAC = 0.01
#: Edge pairs with |a_i x b_j| below this are (nearly) parallel: their axis is ill-defined and
#: the face axes already bound the separation, so they are skipped.
PARALLEL_TOL = 1e-5
#: Label canonicalisation radius, as a fraction of the smallest face half extent (see _snap_pair).
SNAP_FRAC = 0.01
#: Manifold reduction (see _reduce_to_four): depths within DEPTH_BAND_FRAC * (hu + hv) of the
#: deepest count as equally deep; distances and areas within SCORE_REL_TOL of the best are ties.
#: Ties go to the smaller feature id, which does not change under jitter.
DEPTH_BAND_FRAC = 0.005
SCORE_REL_TOL = 0.02


# ---------------------------------------------------------------------------------------------
# plane-box
# ---------------------------------------------------------------------------------------------

@kernel
def _box_vertex_sep(p, R, h, k, nx, ny, nz, ox, oy, oz):
    """Signed height of box vertex k above the plane through o with normal n, and the vertex.

    The box comes as tuples of scalars (_box_tuples): Numba passes those by value, whereas every
    array argument costs a reference count increment and decrement per call.
    """
    s0 = h[0] if (k & 1) else -h[0]
    s1 = h[1] if (k & 2) else -h[1]
    s2 = h[2] if (k & 4) else -h[2]
    vx = p[0] + R[0][0] * s0 + R[0][1] * s1 + R[0][2] * s2
    vy = p[1] + R[1][0] * s0 + R[1][1] * s1 + R[1][2] * s2
    vz = p[2] + R[2][0] * s0 + R[2][1] * s1 + R[2][2] * s2
    return nx * (vx - ox) + ny * (vy - oy) + nz * (vz - oz), vx, vy, vz


@kernel(inline="always")
def _box_tuples(p, R, h):
    """Position, rotation (R[i][j] = R[i, j]) and half extents of a box as tuples of scalars."""
    rows = ((R[0, 0], R[0, 1], R[0, 2]), (R[1, 0], R[1, 1], R[1, 2]), (R[2, 0], R[2, 1], R[2, 2]))
    return (p[0], p[1], p[2]), rows, (h[0], h[1], h[2])


@kernel
def collide_plane_box(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features):
    """Half-space (A, normal Ra[:, 2] through pa) against a box (B): up to 4 deepest vertices.

    Vertex k at height s_k = n.(v_k - pa) is reported when s_k <= margin; the contact point is the
    midpoint v_k - (s_k / 2) n of the vertex and its projection, the depth -s_k, the feature k.
    Vertices are taken deepest first (ties by index), so a box resting flat gives its 4 bottom
    corners whatever the margin.
    """
    nx = Ra[0, 2]
    ny = Ra[1, 2]
    nz = Ra[2, 2]
    ox = pa[0]
    oy = pa[1]
    oz = pa[2]
    p, R, h = _box_tuples(pb, Rb, sb)
    normal[0] = nx
    normal[1] = ny
    normal[2] = nz
    taken = 0  # bit mask of chosen vertices
    count = 0
    while count < 4:
        best_k = -1
        best_s = margin
        for k in range(8):
            if taken & (1 << k):
                continue
            s, _, _, _ = _box_vertex_sep(p, R, h, k, nx, ny, nz, ox, oy, oz)
            if s < best_s or (best_k < 0 and s <= best_s):
                best_s = s
                best_k = k
        if best_k < 0:
            break
        taken |= 1 << best_k
        s, vx, vy, vz = _box_vertex_sep(p, R, h, best_k, nx, ny, nz, ox, oy, oz)
        points[count, 0] = vx - 0.5 * s * nx
        points[count, 1] = vy - 0.5 * s * ny
        points[count, 2] = vz - 0.5 * s * nz
        depths[count] = -s
        features[count] = best_k
        count += 1
    return count


# ---------------------------------------------------------------------------------------------
# box-box: separating axis test
# ---------------------------------------------------------------------------------------------

@kernel
def _min3(v):
    return min(v[0], min(v[1], v[2]))


@kernel
def _axis_sep(dx, dy, dz, nx, ny, nz, Ra, sa, Rb, sb):
    """Separation of two boxes along the unit axis n: |d.n| - r_A(n) - r_B(n).

    r(n) = sum_k h_k |R[:, k] . n| is the projected half-width of a box (Gottschalk's OBB test);
    d = pb - pa. Positive = gap.
    """
    r = 0.0
    for k in range(3):
        r += sa[k] * abs(Ra[0, k] * nx + Ra[1, k] * ny + Ra[2, k] * nz)
        r += sb[k] * abs(Rb[0, k] * nx + Rb[1, k] * ny + Rb[2, k] * nz)
    return abs(dx * nx + dy * ny + dz * nz) - r


@kernel
def _box_box_sat(pa, Ra, sa, pb, Rb, sb):
    """Separations along the 15 SAT axes of two boxes: 3 face normals a_i of A, 3 b_j of B and
    the 9 edge directions n = a_i x b_j / |a_i x b_j| (pairs with |a_i x b_j| < PARALLEL_TOL are
    skipped: nearly parallel edges are bounded by the face axes).

    Returns (max separation over all axes, best A face axis, its separation, best B face axis,
    its separation, best edge i, best edge j, its separation); i = -1 when every edge pair is
    (nearly) parallel. Ties keep the lowest index.
    """
    dx = pb[0] - pa[0]
    dy = pb[1] - pa[1]
    dz = pb[2] - pa[2]
    best_a = 0
    sep_a = -np.inf
    best_b = 0
    sep_b = -np.inf
    for i in range(3):
        s = _axis_sep(dx, dy, dz, Ra[0, i], Ra[1, i], Ra[2, i], Ra, sa, Rb, sb)
        if s > sep_a:
            sep_a = s
            best_a = i
        s = _axis_sep(dx, dy, dz, Rb[0, i], Rb[1, i], Rb[2, i], Ra, sa, Rb, sb)
        if s > sep_b:
            sep_b = s
            best_b = i
    edge_i = -1
    edge_j = -1
    sep_e = -np.inf
    for i in range(3):
        for j in range(3):
            # n = a_i x b_j
            nx = Ra[1, i] * Rb[2, j] - Ra[2, i] * Rb[1, j]
            ny = Ra[2, i] * Rb[0, j] - Ra[0, i] * Rb[2, j]
            nz = Ra[0, i] * Rb[1, j] - Ra[1, i] * Rb[0, j]
            ln = math.sqrt(nx * nx + ny * ny + nz * nz)
            if ln < PARALLEL_TOL:
                continue
            s = _axis_sep(dx, dy, dz, nx / ln, ny / ln, nz / ln, Ra, sa, Rb, sb)
            if s > sep_e:
                sep_e = s
                edge_i = i
                edge_j = j
    sep_max = max(sep_a, max(sep_b, sep_e))
    return sep_max, best_a, sep_a, best_b, sep_b, edge_i, edge_j, sep_e


# ---------------------------------------------------------------------------------------------
# box-box: face contact (reference face, incident face, Sutherland-Hodgman with edge labels)
# ---------------------------------------------------------------------------------------------

@kernel
def _corner_signs(k):
    """Tangent signs of corner k of a face: (+,+), (-,+), (-,-), (+,-) (counter-clockwise)."""
    su = 1.0 if (k == 0 or k == 3) else -1.0
    sv = 1.0 if k < 2 else -1.0
    return su, sv


@kernel
def _side_value(x, y, side, hu, hv):
    """Signed distance to reference side plane `side` (<= 0 inside): +u, +v, -u, -v."""
    if side == 0:
        return x - hu
    if side == 1:
        return y - hv
    if side == 2:
        return -x - hu
    return -y - hv


@kernel
def _clip_side(src, n, dst, side, hu, hv):
    """One Sutherland-Hodgman pass of polygon src[:n] against a reference side plane.

    Rows are (x, y, z, in_label, out_label): the labels name the lines of the polygon edge that
    arrives at and leaves the vertex (Catto 001 Fig. 4). The edge prev -> cur lies on line
    cur.in; a crossing point leaving the half-space gets (cur.in, side), one entering gets
    (side, cur.in). Returns the new vertex count (at most n + 1).
    """
    m = 0
    side_label = 4.0 + side
    for i in range(n):
        p = i - 1 if i > 0 else n - 1
        dp = _side_value(src[p, 0], src[p, 1], side, hu, hv)
        dc = _side_value(src[i, 0], src[i, 1], side, hu, hv)
        if (dp <= 0.0) != (dc <= 0.0):
            t = dp / (dp - dc)
            for c in range(3):
                dst[m, c] = src[p, c] + t * (src[i, c] - src[p, c])
            if dc <= 0.0:  # entering
                dst[m, 3] = side_label
                dst[m, 4] = src[i, 3]
            else:  # leaving
                dst[m, 3] = src[i, 3]
                dst[m, 4] = side_label
            m += 1
        if dc <= 0.0:
            for c in range(5):
                dst[m, c] = src[i, c]
            m += 1
    return m


@kernel
def _snap_pair(x, y, lab_in, lab_out, quad, hu, hv, tol):
    """Canonical (lo, hi) label pair of a clipped vertex.

    Catto's labels change when a vertex slides across a side plane by a hair (an incident corner
    just inside the reference face is (e_{k-1}, e_k); just outside, the two crossing points are
    (e_{k-1}, side) and (side, e_k)). Vertices within `tol` of incident corner k (first) or of
    reference corner c therefore take that corner's labels, so equal boxes stacked flush keep
    their ids under jitter; the points themselves are not moved.
    """
    for k in range(4):
        ex = x - quad[k, 0]
        ey = y - quad[k, 1]
        if ex * ex + ey * ey <= tol * tol:
            a = (k + 3) % 4  # edge arriving at incident vertex k
            return min(a, k), max(a, k)
    for c in range(4):
        su, sv = _corner_signs(c)
        ex = x - su * hu
        ey = y - sv * hv
        if ex * ex + ey * ey <= tol * tol:
            a = 4 + c
            b = 4 + (c + 1) % 4
            return min(a, b), max(a, b)
    a = int(lab_in)
    b = int(lab_out)
    return min(a, b), max(a, b)


@kernel
def _area2(ax, ay, bx, by, cx, cy):
    """Twice the signed area of triangle (a, b, c) in the reference plane."""
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


@kernel
def _pick(cand, n, tol):
    """Row with the best score (column 4), near-ties (within tol) going to the smallest id.

    Rows already chosen carry score -inf and are never picked while another row remains.
    """
    top = -np.inf
    for i in range(n):
        top = max(top, cand[i, 4])
    pick = -1
    for i in range(n):
        if cand[i, 4] > -np.inf and cand[i, 4] >= top - tol:
            if pick < 0 or cand[i, 3] < cand[pick, 3]:
                pick = i
    return pick


@kernel
def _reduce_to_four(cand, n, band):
    """Pick 4 of n > 4 candidate rows (x, y, z, id, scratch) spanning a large area, deepest first.

    1. the deepest point (least z); 2. the point farthest from it; 3. the point farthest from the
    line through the first two (largest triangle); 4. the point adding the most area to that
    triangle, i.e. the largest area outside any of its three edges. Returns the 4 row indices.

    Every step is an argmax with a tolerance whose near-ties go to the smaller feature id
    (_pick): a box resting flat has all its clipped points at nearly the same depth, and an
    overlap polygon with a symmetry has equal distances/areas, so a plain argmax would flip
    with every 1e-3 rad wobble and take the contact ids with it. The ids themselves are stable,
    so breaking ties by id keeps the chosen set stable. Step 1 uses the absolute depth `band`,
    steps 2-4 a relative tolerance SCORE_REL_TOL.
    """
    for i in range(n):
        cand[i, 4] = -cand[i, 2]
    i1 = _pick(cand, n, band)
    top = 0.0
    for i in range(n):
        ex = cand[i, 0] - cand[i1, 0]
        ey = cand[i, 1] - cand[i1, 1]
        cand[i, 4] = ex * ex + ey * ey if i != i1 else -np.inf
        top = max(top, cand[i, 4])
    i2 = _pick(cand, n, SCORE_REL_TOL * top)
    top = 0.0
    for i in range(n):
        a = abs(_area2(cand[i1, 0], cand[i1, 1], cand[i2, 0], cand[i2, 1], cand[i, 0], cand[i, 1]))
        cand[i, 4] = a if (i != i1 and i != i2) else -np.inf
        top = max(top, cand[i, 4])
    i3 = _pick(cand, n, SCORE_REL_TOL * top)
    orient = _area2(cand[i1, 0], cand[i1, 1], cand[i2, 0], cand[i2, 1], cand[i3, 0], cand[i3, 1])
    sgn = 1.0 if orient >= 0.0 else -1.0
    top = 0.0
    for i in range(n):
        # Area outside the triangle across each edge (positive = outside for orientation sgn).
        o12 = -sgn * _area2(cand[i1, 0], cand[i1, 1], cand[i2, 0], cand[i2, 1], cand[i, 0], cand[i, 1])
        o23 = -sgn * _area2(cand[i2, 0], cand[i2, 1], cand[i3, 0], cand[i3, 1], cand[i, 0], cand[i, 1])
        o31 = -sgn * _area2(cand[i3, 0], cand[i3, 1], cand[i1, 0], cand[i1, 1], cand[i, 0], cand[i, 1])
        a = max(o12, max(o23, o31))
        cand[i, 4] = a if (i != i1 and i != i2 and i != i3) else -np.inf
        top = max(top, cand[i, 4])
    i4 = _pick(cand, n, SCORE_REL_TOL * top)
    return i1, i2, i3, i4


@kernel
def _incident_quad(pi, Ri, hi, mx, my, mz, fx, fy, fz, Rr, u, v, quad):
    """Incident face of box i for reference normal m, written into quad in reference coordinates.

    Catto 001 §8.2: the incident face is the face most anti-parallel to m, i.e. axis j with the
    largest |i_j . m| on the side tau = -sign(i_j . m). Row k of quad is face vertex k as
    (x, y, z, in_label, out_label) with x, y along the reference tangents U = Rr[:, u],
    V = Rr[:, v] and z the height above the reference face through f; vertex k sits between face
    edges k - 1 (arriving) and k (leaving). Returns (incident face index, its two half extents).
    """
    j = 0
    best = -1.0
    for k in range(3):
        c = abs(Ri[0, k] * mx + Ri[1, k] * my + Ri[2, k] * mz)
        if c > best:
            best = c
            j = k
    tau = -1.0 if (Ri[0, j] * mx + Ri[1, j] * my + Ri[2, j] * mz) > 0.0 else 1.0
    p = (j + 1) % 3
    q = (j + 2) % 3
    for k in range(4):
        sp, sq = _corner_signs(k)
        wx = pi[0] + tau * hi[j] * Ri[0, j] + sp * hi[p] * Ri[0, p] + sq * hi[q] * Ri[0, q] - fx
        wy = pi[1] + tau * hi[j] * Ri[1, j] + sp * hi[p] * Ri[1, p] + sq * hi[q] * Ri[1, q] - fy
        wz = pi[2] + tau * hi[j] * Ri[2, j] + sp * hi[p] * Ri[2, p] + sq * hi[q] * Ri[2, q] - fz
        quad[k, 0] = wx * Rr[0, u] + wy * Rr[1, u] + wz * Rr[2, u]
        quad[k, 1] = wx * Rr[0, v] + wy * Rr[1, v] + wz * Rr[2, v]
        quad[k, 2] = wx * mx + wy * my + wz * mz
        quad[k, 3] = (k + 3) % 4
        quad[k, 4] = k
    return 2 * j + (0 if tau > 0.0 else 1), hi[p], hi[q]


@kernel
def _clip_to_reference(buf, hu, hv):
    """Clip the incident quad buf[2] to the reference rectangle |x| <= hu, |y| <= hv.

    Sutherland-Hodgman over the 4 side planes, ping-ponging between buf[0] and buf[1].
    Returns (vertex count, index of the buffer holding the result).
    """
    for k in range(4):
        for c in range(5):
            buf[0, k, c] = buf[2, k, c]
    n = np.int64(4)  # typed int64, not Literal[4]: avoids a second compiled copy of _clip_side
    cur = 0
    for side in range(4):
        n = _clip_side(buf[cur], n, buf[1 - cur], side, hu, hv)
        cur = 1 - cur
        if n == 0:
            break
    return n, cur


@kernel
def _collect_contacts(poly, n, cand, quad, hu, hv, tol, face_code, margin):
    """Rows of poly with z <= margin go to cand as (x, y, z, id); returns how many.

    The id is face_code with the canonical label pair (_snap_pair); when two vertices get the
    same id (both near one corner) only the deeper one is kept, so ids are unique.
    """
    m = 0
    for k in range(n):
        z = poly[k, 2]
        if z > margin:
            continue
        lo, hi = _snap_pair(poly[k, 0], poly[k, 1], poly[k, 3], poly[k, 4], quad, hu, hv, tol)
        fid = FACE_BASE + (face_code * 8 + lo) * 8 + hi
        row = m
        for r in range(m):
            if cand[r, 3] == fid:
                row = r
        if row < m and z >= cand[row, 2]:
            continue
        cand[row, 0] = poly[k, 0]
        cand[row, 1] = poly[k, 1]
        cand[row, 2] = z
        cand[row, 3] = fid
        if row == m:
            m += 1
    return m


@kernel
def _box_face_contact(pr, Rr, hr, axis, pi, Ri, hi, owner, margin, normal, points, depths, features, buf):
    """Face contact with the reference face on box r (normal axis `axis`), incident box i.

    Catto 001 §8.2 / Fig. 3: the reference face is the face of r whose outward normal m points
    toward box i; the incident face is the face of i most anti-parallel to m. The incident quad is
    written in reference coordinates (x, y along the face tangents u, v; z = height above the
    face, i.e. the separation) and clipped against the 4 side planes |x| <= hu, |y| <= hv
    (Fig. 4). Clipped vertices with z <= margin become contacts at the midpoint
    (x, y, z / 2) with depth -z. `owner` is 0 when box r is A (normal = m), 1 when it is B
    (normal = -m, so that it still points from A to B).
    """
    # Reference face: m = sigma r_axis, centre f = pr + h_axis m, tangents U, V.
    u = (axis + 1) % 3
    v = (axis + 2) % 3
    dd = (pi[0] - pr[0]) * Rr[0, axis] + (pi[1] - pr[1]) * Rr[1, axis] + (pi[2] - pr[2]) * Rr[2, axis]
    sigma = 1.0 if dd >= 0.0 else -1.0
    ref_face = 2 * axis + (0 if sigma > 0.0 else 1)
    mx = sigma * Rr[0, axis]
    my = sigma * Rr[1, axis]
    mz = sigma * Rr[2, axis]
    hu = hr[u]
    hv = hr[v]

    # buf (3, 8, 5): buf[0], buf[1] ping-pong polygons; buf[2] the incident quad (kept for label snapping).
    inc_face, hp, hq = _incident_quad(pi, Ri, hi, mx, my, mz, pr[0] + hr[axis] * mx, pr[1] + hr[axis] * my,
                                      pr[2] + hr[axis] * mz, Rr, u, v, buf[2])
    n, cur = _clip_to_reference(buf, hu, hv)
    tol = SNAP_FRAC * min(min(hu, hv), min(hp, hq))
    face_code = (owner * 6 + ref_face) * 6 + inc_face
    cand = buf[1 - cur]  # rows (x, y, z, id, scratch)
    m = _collect_contacts(buf[cur], n, cand, buf[2], hu, hv, tol, face_code, margin)
    if m == 0:
        return 0

    sign = 1.0 if owner == 0 else -1.0
    normal[0] = sign * mx
    normal[1] = sign * my
    normal[2] = sign * mz
    if m > 4:
        k1, k2, k3, k4 = _reduce_to_four(cand, m, DEPTH_BAND_FRAC * (hu + hv))
    else:
        k1, k2, k3, k4 = np.int64(0), np.int64(1), np.int64(2), np.int64(3)
    for k in range(min(m, 4)):
        r = k1 if k == 0 else (k2 if k == 1 else (k3 if k == 2 else k4))
        hz = 0.5 * cand[r, 2]
        for c in range(3):
            points[k, c] = pr[c] + (hr[axis] + hz) * sigma * Rr[c, axis] + cand[r, 0] * Rr[c, u] \
                + cand[r, 1] * Rr[c, v]
        depths[k] = -cand[r, 2]
        features[k] = int(cand[r, 3])
    return min(m, 4)


# ---------------------------------------------------------------------------------------------
# box-box: edge-edge contact
# ---------------------------------------------------------------------------------------------

@kernel
def _support_edge(p, R, h, i, nx, ny, nz, toward):
    """Edge of a box along axis i that is extreme in direction toward * n.

    Returns its centre (world) and its edge index 4 i + 2 bu + bv.
    """
    u = (i + 1) % 3
    v = (i + 2) % 3
    su = 1.0 if toward * (R[0, u] * nx + R[1, u] * ny + R[2, u] * nz) >= 0.0 else -1.0
    sv = 1.0 if toward * (R[0, v] * nx + R[1, v] * ny + R[2, v] * nz) >= 0.0 else -1.0
    ex = p[0] + su * h[u] * R[0, u] + sv * h[v] * R[0, v]
    ey = p[1] + su * h[u] * R[1, u] + sv * h[v] * R[1, v]
    ez = p[2] + su * h[u] * R[2, u] + sv * h[v] * R[2, v]
    index = 4 * i + (2 if su > 0.0 else 0) + (1 if sv > 0.0 else 0)
    return ex, ey, ez, index


@kernel
def _box_edge_contact(pa, Ra, sa, pb, Rb, sb, i, j, margin, normal, points, depths, features):
    """Edge-edge contact on axis n = a_i x b_j (oriented A -> B): one point.

    The edges are A's edge along a_i extreme in +n and B's edge along b_j extreme in -n. Their
    closest points follow from minimising |w + s a - t b|^2, w = eA - eB, c = a.b:
      t = (b.w - c a.w) / (1 - c^2),  s = (c b.w - a.w) / (1 - c^2),
    clamped to the segments (t clamped, s recomputed and clamped, t recomputed and clamped).
    The point is their midpoint, the depth -n.(qB - qA), the feature EDGE_BASE + 12 eA + eB.
    """
    nx = Ra[1, i] * Rb[2, j] - Ra[2, i] * Rb[1, j]
    ny = Ra[2, i] * Rb[0, j] - Ra[0, i] * Rb[2, j]
    nz = Ra[0, i] * Rb[1, j] - Ra[1, i] * Rb[0, j]
    ln = math.sqrt(nx * nx + ny * ny + nz * nz)
    nx /= ln
    ny /= ln
    nz /= ln
    if nx * (pb[0] - pa[0]) + ny * (pb[1] - pa[1]) + nz * (pb[2] - pa[2]) < 0.0:
        nx = -nx
        ny = -ny
        nz = -nz
    ax, ay, az, ea = _support_edge(pa, Ra, sa, i, nx, ny, nz, 1.0)
    bx, by, bz, eb = _support_edge(pb, Rb, sb, j, nx, ny, nz, -1.0)
    wx = ax - bx
    wy = ay - by
    wz = az - bz
    c = Ra[0, i] * Rb[0, j] + Ra[1, i] * Rb[1, j] + Ra[2, i] * Rb[2, j]
    aw = Ra[0, i] * wx + Ra[1, i] * wy + Ra[2, i] * wz
    bw = Rb[0, j] * wx + Rb[1, j] * wy + Rb[2, j] * wz
    den = 1.0 - c * c
    t = (bw - c * aw) / den
    t = min(max(t, -sb[j]), sb[j])
    s = min(max(c * t - aw, -sa[i]), sa[i])  # s minimising for fixed t
    t = min(max(bw + c * s, -sb[j]), sb[j])  # t minimising for fixed s
    qax = ax + s * Ra[0, i]
    qay = ay + s * Ra[1, i]
    qaz = az + s * Ra[2, i]
    qbx = bx + t * Rb[0, j]
    qby = by + t * Rb[1, j]
    qbz = bz + t * Rb[2, j]
    sep = nx * (qbx - qax) + ny * (qby - qay) + nz * (qbz - qaz)
    if sep > margin:
        return 0
    normal[0] = nx
    normal[1] = ny
    normal[2] = nz
    points[0, 0] = 0.5 * (qax + qbx)
    points[0, 1] = 0.5 * (qay + qby)
    points[0, 2] = 0.5 * (qaz + qbz)
    depths[0] = -sep
    features[0] = EDGE_BASE + 12 * ea + eb
    return 1


# ---------------------------------------------------------------------------------------------
# box-box: driver
# ---------------------------------------------------------------------------------------------

@kernel
def collide_box_box(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features, scratch=None):
    """Two boxes: SAT over 15 axes, then a clipped face manifold or an edge-edge point.

    Axis choice with a stateless bias (tol = ABS_TOL_FRAC * smallest half extent):
    B's best face replaces A's when sep_B > REL_TOL sep_A + tol; the best edge axis replaces the
    face when sep_E > REL_TOL sep_face + tol. If the face clip leaves no point within the margin
    (a corner grazing past the face), the edge axis is used instead when it is within the margin.
    ``scratch`` is an optional (3, 8, 5) work array for the face clipping (the narrow phase passes one
    per chunk of pairs so that no pair allocates); without it one is allocated.
    """
    sep_max, ia, sep_a, ib, sep_b, ei, ej, sep_e = _box_box_sat(pa, Ra, sa, pb, Rb, sb)
    if sep_max > margin:
        return 0
    tol = ABS_TOL_FRAC * min(_min3(sa), _min3(sb))
    use_b = sep_b > REL_TOL * sep_a + tol
    sep_face = sep_b if use_b else sep_a
    use_edge = ei >= 0 and sep_e > REL_TOL * sep_face + tol
    n = 0
    if not use_edge:
        # Reference box r and incident box i (one call site, so one compiled specialisation).
        owner = 1 if use_b else 0
        axis = ib if use_b else ia
        pr, Rr, hr = (pb, Rb, sb) if use_b else (pa, Ra, sa)
        pi, Ri, hi = (pa, Ra, sa) if use_b else (pb, Rb, sb)
        buf = np.empty((3, 8, 5)) if scratch is None else scratch
        n = _box_face_contact(pr, Rr, hr, axis, pi, Ri, hi, owner, margin, normal, points, depths, features, buf)
        use_edge = n == 0 and ei >= 0 and sep_e <= margin
    if use_edge:
        n = _box_edge_contact(pa, Ra, sa, pb, Rb, sb, ei, ej, margin, normal, points, depths, features)
    return n


def describe_box_feature(fid: int) -> dict:
    """Python helper: decode a box-box feature id (for tests and debugging)."""
    fid = int(fid)
    if fid >= EDGE_BASE:
        e = fid - EDGE_BASE
        return {"kind": "edge", "edge_a": e // 12, "edge_b": e % 12}
    f = fid - FACE_BASE
    hi = f % 8
    f //= 8
    lo = f % 8
    f //= 8
    inc_face = f % 6
    f //= 6
    ref_face = f % 6
    owner = f // 6
    return {"kind": "face", "owner": "A" if owner == 0 else "B", "ref_face": ref_face,
            "inc_face": inc_face, "labels": (lo, hi)}
