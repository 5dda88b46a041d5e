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


# ---------------------------------------------------------------------------------------------
# plane-box
# ---------------------------------------------------------------------------------------------

@kernel
def _box_vertex_sep(pb, Rb, sb, k, nx, ny, nz, ox, oy, oz):
    """Signed height of box vertex k above the plane through o with normal n, and the vertex."""
    s0 = sb[0] if (k & 1) else -sb[0]
    s1 = sb[1] if (k & 2) else -sb[1]
    s2 = sb[2] if (k & 4) else -sb[2]
    vx = pb[0] + Rb[0, 0] * s0 + Rb[0, 1] * s1 + Rb[0, 2] * s2
    vy = pb[1] + Rb[1, 0] * s0 + Rb[1, 1] * s1 + Rb[1, 2] * s2
    vz = pb[2] + Rb[2, 0] * s0 + Rb[2, 1] * s1 + Rb[2, 2] * s2
    return nx * (vx - ox) + ny * (vy - oy) + nz * (vz - oz), vx, vy, vz


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
            s, _, _, _ = _box_vertex_sep(pb, Rb, sb, k, nx, ny, nz, pa[0], pa[1], pa[2])
            if s < best_s or (best_k < 0 and s <= best_s):
                best_s = s
                best_k = k
        if best_k < 0:
            break
        taken |= 1 << best_k
        s, vx, vy, vz = _box_vertex_sep(pb, Rb, sb, best_k, nx, ny, nz, pa[0], pa[1], pa[2])
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
def _cdot(Ra, i, Rb, j):
    """C_ij = a_i . b_j (column i of Ra with column j of Rb)."""
    return Ra[0, i] * Rb[0, j] + Ra[1, i] * Rb[1, j] + Ra[2, i] * Rb[2, j]


@kernel
def _box_box_sat(pa, Ra, sa, pb, Rb, sb):
    """Separations along the 15 SAT axes of two boxes (Gottschalk's OBB test).

    With d = pb - pa, C_ij = a_i . b_j:
      A face i:  |d.a_i| - (ha_i + sum_j hb_j |C_ij|)
      B face j:  |d.b_j| - (sum_i ha_i |C_ij| + hb_j)
      edge i,j:  n = a_i x b_j / |a_i x b_j|,  |d.n| - sum_k ha_k |a_k.n| - sum_l hb_l |b_l.n|
    Returns (max separation over all axes, best A face axis, its separation, best B face axis,
    its separation, best edge i, best edge j, its separation); i = -1 when every edge pair is
    (nearly) parallel. Ties keep the lowest index.
    """
    dx = pb[0] - pa[0]
    dy = pb[1] - pa[1]
    dz = pb[2] - pa[2]
    best_a = 0
    sep_a = -np.inf
    for i in range(3):
        di = dx * Ra[0, i] + dy * Ra[1, i] + dz * Ra[2, i]
        s = abs(di) - (sa[i] + sb[0] * abs(_cdot(Ra, i, Rb, 0)) + sb[1] * abs(_cdot(Ra, i, Rb, 1))
                       + sb[2] * abs(_cdot(Ra, i, Rb, 2)))
        if s > sep_a:
            sep_a = s
            best_a = i
    best_b = 0
    sep_b = -np.inf
    for j in range(3):
        dj = dx * Rb[0, j] + dy * Rb[1, j] + dz * Rb[2, j]
        s = abs(dj) - (sa[0] * abs(_cdot(Ra, 0, Rb, j)) + sa[1] * abs(_cdot(Ra, 1, Rb, j))
                       + sa[2] * abs(_cdot(Ra, 2, Rb, j)) + sb[j])
        if s > sep_b:
            sep_b = s
            best_b = j
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
            nx /= ln
            ny /= ln
            nz /= ln
            r = 0.0
            for k in range(3):
                r += sa[k] * abs(Ra[0, k] * nx + Ra[1, k] * ny + Ra[2, k] * nz)
                r += sb[k] * abs(Rb[0, k] * nx + Rb[1, k] * ny + Rb[2, k] * nz)
            s = abs(dx * nx + dy * ny + dz * nz) - r
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
def _reduce_to_four(cand, n):
    """Pick 4 of n > 4 candidate rows (x, y, z, id) spanning the largest area, deepest first.

    1. the deepest point (least z); 2. the point farthest from it; 3. the point farthest from the
    line through the first two (largest triangle); 4. the point adding the most area to that
    triangle, i.e. the largest outside area over its three edges. Returns the 4 row indices.
    """
    i1 = 0
    for i in range(1, n):
        if cand[i, 2] < cand[i1, 2]:
            i1 = i
    i2 = -1
    best = -1.0
    for i in range(n):
        if i == i1:
            continue
        ex = cand[i, 0] - cand[i1, 0]
        ey = cand[i, 1] - cand[i1, 1]
        d2 = ex * ex + ey * ey
        if d2 > best:
            best = d2
            i2 = i
    i3 = -1
    best = -1.0
    for i in range(n):
        if i == i1 or i == i2:
            continue
        a = abs(_area2(cand[i1, 0], cand[i1, 1], cand[i2, 0], cand[i2, 1], cand[i, 0], cand[i, 1]))
        if a > best:
            best = a
            i3 = i
    orient = _area2(cand[i1, 0], cand[i1, 1], cand[i2, 0], cand[i2, 1], cand[i3, 0], cand[i3, 1])
    sgn = 1.0 if orient >= 0.0 else -1.0
    i4 = -1
    best = -np.inf
    for i in range(n):
        if i == i1 or i == i2 or i == i3:
            continue
        # Area outside the triangle across each edge (positive = outside for orientation sgn).
        o12 = -sgn * _area2(cand[i1, 0], cand[i1, 1], cand[i2, 0], cand[i2, 1], cand[i, 0], cand[i, 1])
        o23 = -sgn * _area2(cand[i2, 0], cand[i2, 1], cand[i3, 0], cand[i3, 1], cand[i, 0], cand[i, 1])
        o31 = -sgn * _area2(cand[i3, 0], cand[i3, 1], cand[i1, 0], cand[i1, 1], cand[i, 0], cand[i, 1])
        a = max(o12, max(o23, o31))
        if a > best:
            best = a
            i4 = i
    return i1, i2, i3, i4


@kernel
def _box_face_contact(pr, Rr, hr, axis, pi, Ri, hi, owner, margin, normal, points, depths, features):
    """Face contact with the reference face on box r (normal axis `axis`), incident box i.

    Catto 001 §8.2 / Fig. 3: the reference face is the face of r whose outward normal m points
    toward box i; the incident face is the face of i most anti-parallel to m. The incident quad is
    written in reference coordinates (x, y along the face tangents u, v; z = height above the
    face, i.e. the separation) and clipped against the 4 side planes |x| <= hu, |y| <= hv
    (Fig. 4). Clipped vertices with z <= margin become contacts at the midpoint
    (x, y, z / 2) with depth -z. `owner` is 0 when box r is A (normal = m), 1 when it is B
    (normal = -m, so that it still points from A to B).
    """
    # Reference face: m = sigma r_axis, centre fc = pr + h_axis m, tangents U, V.
    u = (axis + 1) % 3
    v = (axis + 2) % 3
    dd = (pi[0] - pr[0]) * Rr[0, axis] + (pi[1] - pr[1]) * Rr[1, axis] + (pi[2] - pr[2]) * Rr[2, axis]
    sigma = 1.0 if dd >= 0.0 else -1.0
    ref_face = 2 * axis + (0 if sigma > 0.0 else 1)
    mx = sigma * Rr[0, axis]
    my = sigma * Rr[1, axis]
    mz = sigma * Rr[2, axis]
    fx = pr[0] + hr[axis] * mx
    fy = pr[1] + hr[axis] * my
    fz = pr[2] + hr[axis] * mz
    hu = hr[u]
    hv = hr[v]
    # Incident face: the axis j of box i with the largest |i_j . m|, on the side facing -m.
    j = 0
    best = -1.0
    for k in range(3):
        c = abs(Ri[0, k] * mx + Ri[1, k] * my + Ri[2, k] * mz)
        if c > best:
            best = c
            j = k
    tau = -1.0 if (Ri[0, j] * mx + Ri[1, j] * my + Ri[2, j] * mz) > 0.0 else 1.0
    inc_face = 2 * j + (0 if tau > 0.0 else 1)
    p = (j + 1) % 3
    q = (j + 2) % 3
    cx = pi[0] + tau * hi[j] * Ri[0, j]
    cy = pi[1] + tau * hi[j] * Ri[1, j]
    cz = pi[2] + tau * hi[j] * Ri[2, j]

    # buf[0], buf[1]: ping-pong polygons; buf[2]: the incident quad (kept for label snapping).
    buf = np.empty((3, 8, 5))
    for k in range(4):
        sp, sq = _corner_signs(k)
        wx = cx + sp * hi[p] * Ri[0, p] + sq * hi[q] * Ri[0, q] - fx
        wy = cy + sp * hi[p] * Ri[1, p] + sq * hi[q] * Ri[1, q] - fy
        wz = cz + sp * hi[p] * Ri[2, p] + sq * hi[q] * Ri[2, q] - fz
        buf[2, k, 0] = wx * Rr[0, u] + wy * Rr[1, u] + wz * Rr[2, u]
        buf[2, k, 1] = wx * Rr[0, v] + wy * Rr[1, v] + wz * Rr[2, v]
        buf[2, k, 2] = wx * mx + wy * my + wz * mz
        buf[2, k, 3] = (k + 3) % 4  # edge arriving at vertex k
        buf[2, k, 4] = k  # edge leaving vertex k
        for c in range(5):
            buf[0, k, c] = buf[2, k, c]
    n = 4
    cur = 0
    for side in range(4):
        n = _clip_side(buf[cur], n, buf[1 - cur], side, hu, hv)
        cur = 1 - cur
        if n == 0:
            return 0

    # Keep vertices within the margin, with canonical ids; a repeated id keeps the deeper point.
    poly = buf[cur]
    cand = buf[1 - cur]  # rows (x, y, z, id)
    tol = SNAP_FRAC * min(min(hu, hv), min(hi[p], hi[q]))
    face_code = (owner * 6 + ref_face) * 6 + inc_face
    m = 0
    for k in range(n):
        z = poly[k, 2]
        if z > margin:
            continue
        lo, hi_lab = _snap_pair(poly[k, 0], poly[k, 1], poly[k, 3], poly[k, 4], buf[2], hu, hv, tol)
        fid = FACE_BASE + (face_code * 8 + lo) * 8 + hi_lab
        dup = -1
        for r in range(m):
            if cand[r, 3] == fid:
                dup = r
        if dup >= 0:
            if z < cand[dup, 2]:
                cand[dup, 0] = poly[k, 0]
                cand[dup, 1] = poly[k, 1]
                cand[dup, 2] = z
            continue
        cand[m, 0] = poly[k, 0]
        cand[m, 1] = poly[k, 1]
        cand[m, 2] = z
        cand[m, 3] = fid
        m += 1
    if m == 0:
        return 0

    sign = 1.0 if owner == 0 else -1.0
    normal[0] = sign * mx
    normal[1] = sign * my
    normal[2] = sign * mz
    count = min(m, 4)
    k1, k2, k3, k4 = 0, 1, 2, 3
    if m > 4:
        k1, k2, k3, k4 = _reduce_to_four(cand, m)
    for k in range(count):
        r = k1 if k == 0 else (k2 if k == 1 else (k3 if k == 2 else k4))
        x = cand[r, 0]
        y = cand[r, 1]
        hz = 0.5 * cand[r, 2]
        for c in range(3):
            points[k, c] = pr[c] + (hr[axis] + hz) * sigma * Rr[c, axis] + x * Rr[c, u] + y * Rr[c, v]
        depths[k] = -cand[r, 2]
        features[k] = int(cand[r, 3])
    return count


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
def collide_box_box(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features):
    """Two boxes: SAT over 15 axes, then a clipped face manifold or an edge-edge point.

    Axis choice with hysteresis-free bias (tol = ABS_TOL_FRAC * smallest half extent):
    B's best face replaces A's when sep_B > REL_TOL sep_A + tol; the best edge axis replaces the
    face when sep_E > REL_TOL sep_face + tol. If the face clip leaves no point within the margin
    (a corner grazing past the face), the edge axis is used instead when it is within the margin.
    """
    sep_max, ia, sep_a, ib, sep_b, ei, ej, sep_e = _box_box_sat(pa, Ra, sa, pb, Rb, sb)
    if sep_max > margin:
        return 0
    tol = ABS_TOL_FRAC * min(_min3(sa), _min3(sb))
    use_b = sep_b > REL_TOL * sep_a + tol
    sep_face = sep_b if use_b else sep_a
    if ei >= 0 and sep_e > REL_TOL * sep_face + tol:
        return _box_edge_contact(pa, Ra, sa, pb, Rb, sb, ei, ej, margin, normal, points, depths, features)
    if use_b:
        n = _box_face_contact(pb, Rb, sb, ib, pa, Ra, sa, 1, margin, normal, points, depths, features)
    else:
        n = _box_face_contact(pa, Ra, sa, ia, pb, Rb, sb, 0, margin, normal, points, depths, features)
    if n == 0 and ei >= 0 and sep_e <= margin:
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
