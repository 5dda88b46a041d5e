"""Contact between two elastic bodies: events over the step and sticky contact springs (paper 003 §6.3, §7.2).

Conditions (§6.3: only vertex-face and edge-edge pairs of different bodies can start a contact; every other
coincidence has probability zero). With positions x(t) of the surface vertices:

* vertex p against face (a, b, c) (outward, mesh.surface_triangles):
      g = n . (p - a),  n = (b - a) x (c - a)                     (6 x the signed volume of tet (a, b, c, p))
      g' = n' . (p - a) + n . (p' - a'),  n' = (b' - a') x (c - a) + (b - a) x (c' - a')
  the vertex is in front of the face for g > 0; a sign change counts as a collision only if the vertex's
  projection at the crossing lies inside the triangle (barycentric coordinates >= -BARYCENTRIC_SLACK).
* edge (p0, p1) against edge (q0, q1):
      g = s0 n . (p0 - q0),  n = (p1 - p0) x (q1 - q0),  s0 = sign of n . (p0 - q0) at the step start
  g = 0 when the two lines are coplanar; a crossing counts if the closest points of the two lines at that
  moment lie on both segments (parameters in [-slack, 1 + slack]).

Both are functions of the positions only, so each is checked over the step by the first-order Hermite
cubic of g (eq. 19) in the Bernstein basis (eq. 20-21) and de Casteljau bisection (events.first_crossing).
The positions at a crossing u are the Hermite cubics of the vertex coordinates at u.

Candidates (§6.3): the box of every surface vertex's path over the step (events.trajectory_boxes, Bernstein
range of each coordinate), the box of every surface triangle = union of its vertices' boxes, and the
incremental sweep and prune of the rigid broad phase (collision.broad_phase.SweepAndPrune, owner = elastic
body, so pairs inside one body are never reported) over the triangle boxes. A triangle pair (T of body A,
T' of body B) gives the 3 + 3 vertex-face tests (vertices of T against T' and back) and the 3 x 3 edge-edge
tests of their edges. Self-contact (two parts of one body) is not modelled.

Springs (§7.2): a zero-rest-length spring of stiffness k between two material points of the surfaces,
fixed at the moment of detection ("sticky"). Both kinds are written as one stretch
      d = sum_k w_k x_(i_k),  k = 0..3,  sum_k w_k = 0
  vertex-face: i = (p, a, b, c), w = (1, -beta_a, -beta_b, -beta_c)   (beta: barycentric coordinates)
  edge-edge:   i = (p0, p1, q0, q1), w = (1 - s, s, -(1 - t), -t)     (s, t: the closest-point parameters)
with energy k/2 |d|^2 and forces f_(i_k) = -k w_k d. Because sum w_k = 0 the forces sum to zero (momentum
is kept) and their moment sum_k x_(i_k) x (-k w_k d) = -k d x d = 0 (so is angular momentum).
A spring is removed when it pulls, i.e. when the two points are back on the side they came from:
sigma n . d > 0 with n the current face normal (vertex-face, sigma = 1) or edge cross product (edge-edge,
sigma = s0). The energy it still held is booked as dissipated (as for the floor springs, contact.py).
One spring per vertex (vertex-face) and per edge (edge-edge) at a time.
"""

from __future__ import annotations

import numpy as np

from tumble._core.collision.broad_phase import SweepAndPrune
from tumble._core.config import kernel
from tumble.elastic.events import _MAX_DEPTH, first_crossing, trajectory_boxes, triangle_boxes

#: barycentric / segment-parameter slack of the inside tests at a crossing. A vertex that crosses a face
#: plane exactly on a shared edge must be claimed by one of the two faces; 1e-3 of the edge length is far
#: above round-off (1e-16 relative) and far below a mesh cell.
BARYCENTRIC_SLACK = 1e-3

#: event kinds
VERTEX_FACE = 0
EDGE_EDGE = 1


def surface_edges(triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique edges (e, 2) of a triangle list (k, 3), and per triangle the indices of its three edges (k, 3):
    edge j of triangle t joins its corners j and (j + 1) % 3."""
    pairs = np.stack([triangles, np.roll(triangles, -1, axis=1)], axis=2).reshape(-1, 2)
    keys = np.sort(pairs, axis=1)
    edges, inverse = np.unique(keys, axis=0, return_inverse=True)
    return np.ascontiguousarray(edges.astype(np.int64)), np.ascontiguousarray(inverse.reshape(-1, 3).astype(np.int64))


@kernel(inline="always")
def _bezier(p1, p2, p3, p4, u):
    """The cubic sum P_k B_k(u) of eq. 20."""
    s = 1.0 - u
    return p1 * s * s * s + 3.0 * p2 * u * s * s + 3.0 * p3 * u * u * s + p4 * u * u * u


@kernel(inline="always")
def _at(xa, va, xb, vb, h, i, c, u):
    """Coordinate c of vertex i at step fraction u: its Hermite cubic (eq. 19-21)."""
    return _bezier(xa[i, c], xa[i, c] + h / 3.0 * va[i, c], xb[i, c] - h / 3.0 * vb[i, c], xb[i, c], u)


@kernel(inline="always")
def _vf_g(x, v, p, a, b, c):
    """g = n . (p - a) and g' (module docstring) at one state."""
    e1x = x[b, 0] - x[a, 0]
    e1y = x[b, 1] - x[a, 1]
    e1z = x[b, 2] - x[a, 2]
    e2x = x[c, 0] - x[a, 0]
    e2y = x[c, 1] - x[a, 1]
    e2z = x[c, 2] - x[a, 2]
    rx = x[p, 0] - x[a, 0]
    ry = x[p, 1] - x[a, 1]
    rz = x[p, 2] - x[a, 2]
    d1x = v[b, 0] - v[a, 0]
    d1y = v[b, 1] - v[a, 1]
    d1z = v[b, 2] - v[a, 2]
    d2x = v[c, 0] - v[a, 0]
    d2y = v[c, 1] - v[a, 1]
    d2z = v[c, 2] - v[a, 2]
    drx = v[p, 0] - v[a, 0]
    dry = v[p, 1] - v[a, 1]
    drz = v[p, 2] - v[a, 2]
    nx = e1y * e2z - e1z * e2y
    ny = e1z * e2x - e1x * e2z
    nz = e1x * e2y - e1y * e2x
    # n' = e1' x e2 + e1 x e2'
    mx = d1y * e2z - d1z * e2y + e1y * d2z - e1z * d2y
    my = d1z * e2x - d1x * e2z + e1z * d2x - e1x * d2z
    mz = d1x * e2y - d1y * e2x + e1x * d2y - e1y * d2x
    g = nx * rx + ny * ry + nz * rz
    dg = mx * rx + my * ry + mz * rz + nx * drx + ny * dry + nz * drz
    return g, dg


@kernel(inline="always")
def _ee_g(x, v, p0, p1, q0, q1):
    """g = n . (p0 - q0), n = (p1 - p0) x (q1 - q0), and g' at one state (without the sign s0)."""
    e1x = x[p1, 0] - x[p0, 0]
    e1y = x[p1, 1] - x[p0, 1]
    e1z = x[p1, 2] - x[p0, 2]
    e2x = x[q1, 0] - x[q0, 0]
    e2y = x[q1, 1] - x[q0, 1]
    e2z = x[q1, 2] - x[q0, 2]
    rx = x[p0, 0] - x[q0, 0]
    ry = x[p0, 1] - x[q0, 1]
    rz = x[p0, 2] - x[q0, 2]
    d1x = v[p1, 0] - v[p0, 0]
    d1y = v[p1, 1] - v[p0, 1]
    d1z = v[p1, 2] - v[p0, 2]
    d2x = v[q1, 0] - v[q0, 0]
    d2y = v[q1, 1] - v[q0, 1]
    d2z = v[q1, 2] - v[q0, 2]
    drx = v[p0, 0] - v[q0, 0]
    dry = v[p0, 1] - v[q0, 1]
    drz = v[p0, 2] - v[q0, 2]
    nx = e1y * e2z - e1z * e2y
    ny = e1z * e2x - e1x * e2z
    nz = e1x * e2y - e1y * e2x
    mx = d1y * e2z - d1z * e2y + e1y * d2z - e1z * d2y
    my = d1z * e2x - d1x * e2z + e1z * d2x - e1x * d2z
    mz = d1x * e2y - d1y * e2x + e1x * d2y - e1y * d2x
    g = nx * rx + ny * ry + nz * rz
    dg = mx * rx + my * ry + mz * rz + nx * drx + ny * dry + nz * drz
    return g, dg


@kernel
def body_crossings(pairs, triangles, tri_edges, edges, xa, va, xb, vb, h, vertex_busy, edge_busy, u_tolerance,
                   tie_u, slack, ev_kind, ev_index, ev_weight, ev_sign):
    """Vertex-face and edge-edge crossings (module docstring) of the triangle pairs ``pairs`` (m, 2) over the
    step of length h from (xa, va) to (xb, vb). Return (first crossing fraction, 2.0 if none; the number of
    events recorded). Every event at a fraction <= ``tie_u`` (the start of the step) is written to the event
    buffers (capacity 15 m): kind, the 4 vertex indices i_k, the weights w_k and the sign sigma of its spring.
    Vertices in ``vertex_busy`` and edges in ``edge_busy`` (they hold a spring) are not tested."""
    first = 2.0
    count = 0
    stack = np.empty((2 * _MAX_DEPTH + 2, 6))
    third = h / 3.0
    for k in range(pairs.shape[0]):
        for side in range(2):
            t_v = pairs[k, side]
            t_f = pairs[k, 1 - side]
            a = triangles[t_f, 0]
            b = triangles[t_f, 1]
            c = triangles[t_f, 2]
            for corner in range(3):
                p = triangles[t_v, corner]
                if vertex_busy[p]:
                    continue
                g0, dg0 = _vf_g(xa, va, p, a, b, c)
                if not g0 > 0.0:
                    continue  # behind the face's plane at the start: not approaching it from outside
                g1, dg1 = _vf_g(xb, vb, p, a, b, c)
                p2 = g0 + third * dg0
                p3 = g1 - third * dg1
                if p2 > 0.0 and p3 > 0.0 and g1 > 0.0:
                    continue
                u = first_crossing(g0, p2, p3, g1, u_tolerance, stack)
                if u > 1.0:
                    continue
                # barycentric coordinates of the vertex's projection at the crossing
                e1x = _at(xa, va, xb, vb, h, b, 0, u) - _at(xa, va, xb, vb, h, a, 0, u)
                e1y = _at(xa, va, xb, vb, h, b, 1, u) - _at(xa, va, xb, vb, h, a, 1, u)
                e1z = _at(xa, va, xb, vb, h, b, 2, u) - _at(xa, va, xb, vb, h, a, 2, u)
                e2x = _at(xa, va, xb, vb, h, c, 0, u) - _at(xa, va, xb, vb, h, a, 0, u)
                e2y = _at(xa, va, xb, vb, h, c, 1, u) - _at(xa, va, xb, vb, h, a, 1, u)
                e2z = _at(xa, va, xb, vb, h, c, 2, u) - _at(xa, va, xb, vb, h, a, 2, u)
                rx = _at(xa, va, xb, vb, h, p, 0, u) - _at(xa, va, xb, vb, h, a, 0, u)
                ry = _at(xa, va, xb, vb, h, p, 1, u) - _at(xa, va, xb, vb, h, a, 1, u)
                rz = _at(xa, va, xb, vb, h, p, 2, u) - _at(xa, va, xb, vb, h, a, 2, u)
                d11 = e1x * e1x + e1y * e1y + e1z * e1z
                d12 = e1x * e2x + e1y * e2y + e1z * e2z
                d22 = e2x * e2x + e2y * e2y + e2z * e2z
                r1 = rx * e1x + ry * e1y + rz * e1z
                r2 = rx * e2x + ry * e2y + rz * e2z
                den = d11 * d22 - d12 * d12
                if not den > 0.0:
                    continue
                beta_b = (d22 * r1 - d12 * r2) / den
                beta_c = (d11 * r2 - d12 * r1) / den
                beta_a = 1.0 - beta_b - beta_c
                if beta_a < -slack or beta_b < -slack or beta_c < -slack:
                    continue
                if u < first:
                    first = u
                if u <= tie_u:
                    beta_a = max(beta_a, 0.0)
                    beta_b = max(beta_b, 0.0)
                    beta_c = max(beta_c, 0.0)
                    total = beta_a + beta_b + beta_c
                    ev_kind[count] = 0
                    ev_index[count, 0] = p
                    ev_index[count, 1] = a
                    ev_index[count, 2] = b
                    ev_index[count, 3] = c
                    ev_weight[count, 0] = 1.0
                    ev_weight[count, 1] = -beta_a / total
                    ev_weight[count, 2] = -beta_b / total
                    ev_weight[count, 3] = -beta_c / total
                    ev_sign[count] = 1.0
                    count += 1
        for i in range(3):
            ei = tri_edges[pairs[k, 0], i]
            if edge_busy[ei]:
                continue
            p0 = edges[ei, 0]
            p1 = edges[ei, 1]
            for j in range(3):
                ej = tri_edges[pairs[k, 1], j]
                if edge_busy[ej]:
                    continue
                q0 = edges[ej, 0]
                q1 = edges[ej, 1]
                g0, dg0 = _ee_g(xa, va, p0, p1, q0, q1)
                if g0 == 0.0:
                    continue
                s0 = 1.0 if g0 > 0.0 else -1.0
                g1, dg1 = _ee_g(xb, vb, p0, p1, q0, q1)
                P1 = s0 * g0
                P2 = s0 * (g0 + third * dg0)
                P3 = s0 * (g1 - third * dg1)
                P4 = s0 * g1
                if P2 > 0.0 and P3 > 0.0 and P4 > 0.0:
                    continue
                u = first_crossing(P1, P2, P3, P4, u_tolerance, stack)
                if u > 1.0:
                    continue
                # closest points of the two lines at the crossing
                e1x = _at(xa, va, xb, vb, h, p1, 0, u) - _at(xa, va, xb, vb, h, p0, 0, u)
                e1y = _at(xa, va, xb, vb, h, p1, 1, u) - _at(xa, va, xb, vb, h, p0, 1, u)
                e1z = _at(xa, va, xb, vb, h, p1, 2, u) - _at(xa, va, xb, vb, h, p0, 2, u)
                e2x = _at(xa, va, xb, vb, h, q1, 0, u) - _at(xa, va, xb, vb, h, q0, 0, u)
                e2y = _at(xa, va, xb, vb, h, q1, 1, u) - _at(xa, va, xb, vb, h, q0, 1, u)
                e2z = _at(xa, va, xb, vb, h, q1, 2, u) - _at(xa, va, xb, vb, h, q0, 2, u)
                wx = _at(xa, va, xb, vb, h, p0, 0, u) - _at(xa, va, xb, vb, h, q0, 0, u)
                wy = _at(xa, va, xb, vb, h, p0, 1, u) - _at(xa, va, xb, vb, h, q0, 1, u)
                wz = _at(xa, va, xb, vb, h, p0, 2, u) - _at(xa, va, xb, vb, h, q0, 2, u)
                aa = e1x * e1x + e1y * e1y + e1z * e1z
                bb = e1x * e2x + e1y * e2y + e1z * e2z
                cc = e2x * e2x + e2y * e2y + e2z * e2z
                dd = e1x * wx + e1y * wy + e1z * wz
                ee = e2x * wx + e2y * wy + e2z * wz
                den = aa * cc - bb * bb
                if not den > 1e-12 * aa * cc:
                    continue  # (nearly) parallel edges: their contact is a vertex-face one
                s = (bb * ee - cc * dd) / den
                t = (aa * ee - bb * dd) / den
                if s < -slack or s > 1.0 + slack or t < -slack or t > 1.0 + slack:
                    continue
                if u < first:
                    first = u
                if u <= tie_u:
                    s = min(max(s, 0.0), 1.0)
                    t = min(max(t, 0.0), 1.0)
                    ev_kind[count] = 1
                    ev_index[count, 0] = p0
                    ev_index[count, 1] = p1
                    ev_index[count, 2] = q0
                    ev_index[count, 3] = q1
                    ev_weight[count, 0] = 1.0 - s
                    ev_weight[count, 1] = s
                    ev_weight[count, 2] = -(1.0 - t)
                    ev_weight[count, 3] = -t
                    ev_sign[count] = s0
                    count += 1
    return first, count


@kernel
def tie_events(ev_kind, ev_index, ev_weight, ev_sign, ev_edge, n_events, vertex_busy, edge_busy, sp_kind, sp_index,
               sp_weight, sp_sign, sp_edge, n_springs):
    """Append a spring for every event whose vertex (vertex-face) or edges (edge-edge) hold none yet, in
    order; mark them busy. Return the new spring count (the caller sized the store for n_springs + n_events)."""
    for e in range(n_events):
        if ev_kind[e] == 0:
            if vertex_busy[ev_index[e, 0]]:
                continue
            vertex_busy[ev_index[e, 0]] = True
        else:
            if edge_busy[ev_edge[e, 0]] or edge_busy[ev_edge[e, 1]]:
                continue
            edge_busy[ev_edge[e, 0]] = True
            edge_busy[ev_edge[e, 1]] = True
        sp_kind[n_springs] = ev_kind[e]
        for k in range(4):
            sp_index[n_springs, k] = ev_index[e, k]
            sp_weight[n_springs, k] = ev_weight[e, k]
        sp_sign[n_springs] = ev_sign[e]
        sp_edge[n_springs, 0] = ev_edge[e, 0]
        sp_edge[n_springs, 1] = ev_edge[e, 1]
        n_springs += 1
    return n_springs


@kernel
def pair_spring_forces(positions, sp_index, sp_weight, n_springs, stiffness, forces):
    """Add f_(i_k) = -k w_k d, d = sum_k w_k x_(i_k), of every spring to ``forces``; return their energy (J)."""
    energy = 0.0
    for s in range(n_springs):
        for c in range(3):
            d = 0.0
            for k in range(4):
                d += sp_weight[s, k] * positions[sp_index[s, k], c]
            energy += 0.5 * stiffness * d * d
            for k in range(4):
                forces[sp_index[s, k], c] -= stiffness * sp_weight[s, k] * d
    return energy


@kernel
def remove_pulling_pair_springs(positions, sp_kind, sp_index, sp_weight, sp_sign, sp_edge, n_springs, stiffness,
                                vertex_busy, edge_busy):
    """Remove (compacting the store in order) every spring with sigma n . d > 0 (it pulls); free its vertex or
    edges. Return (springs left, springs removed, the energy they held, J)."""
    kept = 0
    released = 0.0
    for s in range(n_springs):
        dx = 0.0
        dy = 0.0
        dz = 0.0
        for k in range(4):
            i = sp_index[s, k]
            dx += sp_weight[s, k] * positions[i, 0]
            dy += sp_weight[s, k] * positions[i, 1]
            dz += sp_weight[s, k] * positions[i, 2]
        if sp_kind[s] == 0:  # face (a, b, c) = indices 1..3: n = (b - a) x (c - a)
            o = sp_index[s, 1]
            i1 = sp_index[s, 2]
            i2 = sp_index[s, 3]
            o2 = o
        else:  # n = (p1 - p0) x (q1 - q0)
            o = sp_index[s, 0]
            i1 = sp_index[s, 1]
            o2 = sp_index[s, 2]
            i2 = sp_index[s, 3]
        ax = positions[i1, 0] - positions[o, 0]
        ay = positions[i1, 1] - positions[o, 1]
        az = positions[i1, 2] - positions[o, 2]
        bx = positions[i2, 0] - positions[o2, 0]
        by = positions[i2, 1] - positions[o2, 1]
        bz = positions[i2, 2] - positions[o2, 2]
        nx = ay * bz - az * by
        ny = az * bx - ax * bz
        nz = ax * by - ay * bx
        if sp_sign[s] * (nx * dx + ny * dy + nz * dz) > 0.0:
            released += 0.5 * stiffness * (dx * dx + dy * dy + dz * dz)
            if sp_kind[s] == 0:
                vertex_busy[sp_index[s, 0]] = False
            else:
                edge_busy[sp_edge[s, 0]] = False
                edge_busy[sp_edge[s, 1]] = False
            continue
        if kept != s:
            sp_kind[kept] = sp_kind[s]
            for k in range(4):
                sp_index[kept, k] = sp_index[s, k]
                sp_weight[kept, k] = sp_weight[s, k]
            sp_sign[kept] = sp_sign[s]
            sp_edge[kept, 0] = sp_edge[s, 0]
            sp_edge[kept, 1] = sp_edge[s, 1]
        kept += 1
    return kept, n_springs - kept, released


@kernel
def event_edges(ev_kind, ev_index, n_events, edge_lookup_keys, n, ev_edge):
    """The surface-edge ids of the edge-edge events' two edges (binary search of the sorted edge keys
    min * (n + 1) + max, n the vertex count); -1 for vertex-face events."""
    m = edge_lookup_keys.shape[0]
    for e in range(n_events):
        ev_edge[e, 0] = -1
        ev_edge[e, 1] = -1
        if ev_kind[e] != 1:
            continue
        for side in range(2):
            a = ev_index[e, 2 * side]
            b = ev_index[e, 2 * side + 1]
            lo_v = min(a, b)
            hi_v = max(a, b)
            key = lo_v * (n + 1) + hi_v
            lo = 0
            hi = m
            while lo < hi:
                mid = (lo + hi) // 2
                if edge_lookup_keys[mid] < key:
                    lo = mid + 1
                else:
                    hi = mid
            ev_edge[e, side] = lo
    return 0


class BodyContacts:
    """Elastic-elastic contact state of one ElasticSystem: the surface features, the broad phase and the
    pair-spring store (module docstring).

    triangles (k, 3), triangle_body (k,), edges (e, 2), triangle_edges (k, 3): global vertex indices.
    Spring store (first ``count`` rows live): kind (0 vertex-face, 1 edge-edge), index (c, 4), weight (c, 4),
    sign (c,), edge (c, 2) (the edge ids of an edge-edge spring); vertex_busy (n,), edge_busy (e,).
    """

    def __init__(self, triangles: np.ndarray, triangle_body: np.ndarray, vertex_count: int, stiffness: float):
        self.triangles = np.ascontiguousarray(triangles, dtype=np.int64)
        self.triangle_body = np.ascontiguousarray(triangle_body, dtype=np.int64)
        self.edges, self.triangle_edges = surface_edges(self.triangles)
        self._edge_keys = np.ascontiguousarray(self.edges[:, 0] * (vertex_count + 1) + self.edges[:, 1])
        self.stiffness = float(stiffness)
        self.vertex_count = int(vertex_count)
        self.vertex_busy = np.zeros(vertex_count, dtype=np.bool_)
        self.edge_busy = np.zeros(len(self.edges), dtype=np.bool_)
        self._static = np.zeros(len(self.triangles), dtype=np.bool_)
        self._alloc(16)
        self.count = 0
        self.created = 0
        self.removed = 0
        self.broad_phase = SweepAndPrune(max(len(self.triangles), 1))
        self._vertex_boxes = np.empty((vertex_count, 6))
        self._triangle_boxes = np.empty((len(self.triangles), 6))
        self._events = None
        self._event_count = 0
        self.last_pairs = 0

    def _alloc(self, capacity: int) -> None:
        old = getattr(self, "kind", None)
        kind = np.zeros(capacity, dtype=np.int64)
        index = np.zeros((capacity, 4), dtype=np.int64)
        weight = np.zeros((capacity, 4))
        sign = np.zeros(capacity)
        edge = np.zeros((capacity, 2), dtype=np.int64)
        if old is not None:
            c = self.count
            kind[:c], index[:c], weight[:c] = self.kind[:c], self.index[:c], self.weight[:c]
            sign[:c], edge[:c] = self.sign[:c], self.edge[:c]
        self.kind, self.index, self.weight, self.sign, self.edge = kind, index, weight, sign, edge

    def state(self) -> dict:
        """The spring store (copies), for snapshots and rebuilds."""
        c = self.count
        return {"kind": self.kind[:c].copy(), "index": self.index[:c].copy(), "weight": self.weight[:c].copy(),
                "sign": self.sign[:c].copy(), "edge": self.edge[:c].copy(), "vertex_busy": self.vertex_busy.copy(),
                "edge_busy": self.edge_busy.copy(), "created": self.created, "removed": self.removed}

    def set_state(self, state: dict) -> None:
        """Load a ``state()``; the vertex and edge arrays may be shorter (bodies added since): a prefix."""
        c = len(state["kind"])
        self.count = 0
        if c > len(self.kind):
            self._alloc(2 * c)
        self.kind[:c], self.index[:c], self.weight[:c] = state["kind"], state["index"], state["weight"]
        self.sign[:c], self.edge[:c] = state["sign"], state["edge"]
        self.count = c
        self.vertex_busy[:] = False
        self.edge_busy[:] = False
        self.vertex_busy[:len(state["vertex_busy"])] = state["vertex_busy"]
        self.edge_busy[:len(state["edge_busy"])] = state["edge_busy"]
        self.created, self.removed = state["created"], state["removed"]

    # ------------------------------------------------------------------ the step
    def crossings(self, xa, va, xb, vb, h: float, u_tolerance: float, tie_time: float) -> float:
        """First crossing fraction of the step (2.0: none); the events at its start are kept for ``tie``."""
        trajectory_boxes(xa, va, xb, vb, h, self._vertex_boxes)
        triangle_boxes(self.triangles, self._vertex_boxes, self._triangle_boxes)
        boxes = self._triangle_boxes
        pairs = self.broad_phase.update(boxes[:, :3], boxes[:, 3:], self.triangle_body, self._static,
                                        len(self.triangles))
        self.last_pairs = len(pairs)
        self._event_count = 0
        if not len(pairs):
            return 2.0
        m = 15 * len(pairs)
        events = (np.empty(m, dtype=np.int64), np.empty((m, 4), dtype=np.int64), np.empty((m, 4)), np.empty(m))
        first, count = body_crossings(pairs, self.triangles, self.triangle_edges, self.edges, xa, va, xb, vb, h,
                                      self.vertex_busy, self.edge_busy, u_tolerance, tie_time / h,
                                      BARYCENTRIC_SLACK, *events)
        self._events = events
        self._event_count = int(count)
        return float(first)

    def tie(self) -> int:
        """Tie springs for the events found at the start of the last ``crossings`` step; return how many."""
        n = self._event_count
        if n == 0:
            return 0
        kind, index, weight, sign = self._events
        edge = np.empty((n, 2), dtype=np.int64)
        event_edges(kind, index, n, self._edge_keys, self.vertex_count, edge)
        if self.count + n > len(self.kind):
            self._alloc(2 * (self.count + n))
        before = self.count
        self.count = int(tie_events(kind, index, weight, sign, edge, n, self.vertex_busy, self.edge_busy, self.kind,
                                    self.index, self.weight, self.sign, self.edge, self.count))
        self._event_count = 0
        self.created += self.count - before
        return self.count - before

    def forces(self, positions, forces) -> float:
        """Add the springs' forces to ``forces`` (n, 3); return their energy (J)."""
        if self.count == 0:
            return 0.0
        return pair_spring_forces(positions, self.index, self.weight, self.count, self.stiffness, forces)

    def remove_pulling(self, positions) -> float:
        """Remove the springs that pull; return the energy they held (J, booked as dissipated)."""
        if self.count == 0:
            return 0.0
        kept, removed, released = remove_pulling_pair_springs(positions, self.kind, self.index, self.weight,
                                                              self.sign, self.edge, self.count, self.stiffness,
                                                              self.vertex_busy, self.edge_busy)
        self.count = int(kept)
        self.removed += int(removed)
        return float(released)
