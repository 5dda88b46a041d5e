"""Sidedness triples: which vertex must stay on which side of which edge (paper 002, §2 (ii), §8.5).

A triple (edge i -> j of body A, vertex k of body B) says that k stays outside A across the edge.
With counter-clockwise corners the outward normal of the edge e = p_j - p_i is n = (e_y, -e_x), and
the (doubled) signed area A_out(p_i, p_j, p_k) = <p_k - p_i, n> >= 0 is the paper's A(p_j, p_i, p_k)
(the paper orders the edge so that the outside is on its left).

Selection (§8.5): for each pair of bodies, the best separating edge of A is the edge whose minimum
signed distance to the corners of B is largest, and vice versa; the pair's separation is the larger of
the two (the separating-axis distance). The paper keeps one critical edge per pair and constrains all
vertices of the other body against the line through it. For face-to-face contact of offset bricks
(the overhang stacks) both best edges have separation 0 and the choice matters: a corner of the upper
brick that overhangs the lower brick's top edge lies on the extension of that edge, and a line
constraint on it forbids the brick from tipping about the lower brick's corner. We therefore keep every
best edge whose separation is within ``tie_tol`` of the pair's separation, and constrain only the
vertices whose projection falls on the edge segment (0 <= alpha <= 1, widened by ``alpha_tol``):
exactly the vertex-on-segment condition of (S2). The edges of both bodies together still cover every
vertex-on-edge contact of two convex polygons.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Triples:
    """T sidedness triples over hull points. Hull point ids index the flattened (nbodies * 4) hull
    array of ``BrickSystem.hulls``; ``alpha`` is the projection parameter of p_k on the edge at the
    current positions (p_k ~ (1 - alpha) p_i + alpha p_j), ``normal`` the outward unit normal, ``gap``
    the signed distance of p_k from the edge line [m]."""

    edge_start: np.ndarray  # (T,) hull point id of p_i
    edge_end: np.ndarray  # (T,) hull point id of p_j
    vertex: np.ndarray  # (T,) hull point id of p_k
    alpha: np.ndarray  # (T,)
    normal: np.ndarray  # (T, 2) outward unit normal of the edge
    edge_length: np.ndarray  # (T,) |p_j - p_i| [m]
    gap: np.ndarray  # (T,) [m]
    edge_body: np.ndarray  # (T,)
    vertex_body: np.ndarray  # (T,)

    def __len__(self) -> int:
        return len(self.vertex)


def candidate_pairs(hulls: np.ndarray, n_dynamic: int, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """Body pairs (a < b, at least one dynamic) whose axis-aligned boxes, grown by ``margin``, overlap.
    A sort-free all-pairs test, vectorised: fine for the few hundred bodies of the benchmarks."""
    lo = hulls.min(axis=1) - margin
    hi = hulls.max(axis=1) + margin
    nb = len(hulls)
    a, b = np.triu_indices(nb, k=1)
    keep = a < n_dynamic
    a, b = a[keep], b[keep]
    overlap = np.all((lo[a] <= hi[b]) & (lo[b] <= hi[a]), axis=1)
    return a[overlap], b[overlap]


def _edge_frames(hulls: np.ndarray):
    start = hulls
    end = np.roll(hulls, -1, axis=1)
    e = end - start
    length = np.linalg.norm(e, axis=2)
    normal = np.stack([e[..., 1], -e[..., 0]], axis=2) / length[..., None]
    return start, e, length, normal


def sidedness_triples(hulls: np.ndarray, n_dynamic: int, *, margin: float, tie_tol: float,
                      alpha_tol: float = 1e-9) -> Triples:
    """Triples for all body pairs within ``margin`` [m] (separating-axis distance), see module doc."""
    a, b = candidate_pairs(hulls, n_dynamic, margin)
    start, e, length, normal = _edge_frames(hulls)
    parts = []
    if len(a):
        # dist_ab[p, c, k]: signed distance of corner k of b from the line of edge c of a
        dist_ab = np.einsum("pckx,pcx->pck", hulls[b][:, None, :, :] - start[a][:, :, None, :], normal[a])
        dist_ba = np.einsum("pckx,pcx->pck", hulls[a][:, None, :, :] - start[b][:, :, None, :], normal[b])
        best_a = dist_ab.min(axis=2)  # (P, 4) per edge of a: worst corner of b
        best_b = dist_ba.min(axis=2)
        edge_a = best_a.argmax(axis=1)
        edge_b = best_b.argmax(axis=1)
        sep_a = best_a.max(axis=1)
        sep_b = best_b.max(axis=1)
        sep = np.maximum(sep_a, sep_b)
        near = sep < margin
        for edge_body, vert_body, edge, sep_e, dist in ((a, b, edge_a, sep_a, dist_ab), (b, a, edge_b, sep_b, dist_ba)):
            use = near & (sep_e >= sep - tie_tol)
            p = np.nonzero(use)[0]
            if not len(p):
                continue
            eb, vb, c = edge_body[p], vert_body[p], edge[p]
            ps = start[eb, c]  # (P', 2)
            ev = e[eb, c]
            el = length[eb, c]
            verts = hulls[vb]  # (P', 4, 2)
            alpha = np.einsum("pkx,px->pk", verts - ps[:, None, :], ev) / (el * el)[:, None]
            on = (alpha >= -alpha_tol) & (alpha <= 1.0 + alpha_tol)
            # a vertex farther than the margin beyond the edge cannot reach it within the step
            on &= dist[p][np.arange(len(p)), c] < margin
            pi, k = np.nonzero(on)
            parts.append(dict(edge_start=4 * eb[pi] + c[pi], edge_end=4 * eb[pi] + (c[pi] + 1) % 4,
                              vertex=4 * vb[pi] + k, alpha=alpha[pi, k], normal=normal[eb[pi], c[pi]],
                              edge_length=el[pi], gap=dist[p[pi], c[pi], k], edge_body=eb[pi], vertex_body=vb[pi]))
    if not parts:
        z = np.zeros(0)
        zi = np.zeros(0, dtype=np.int64)
        return Triples(zi, zi, zi, z, np.zeros((0, 2)), z, z, zi, zi)
    return Triples(**{key: np.concatenate([d[key] for d in parts]) for key in parts[0]})


def rest_contacts(hulls: np.ndarray, n_dynamic: int, *, tol: float) -> Triples:
    """Vertex-on-edge contacts of bodies at rest: every vertex within ``tol`` [m] of an edge segment of
    another body (both directions, all edges, no critical-edge selection): the contact set of the
    stability LP (§1) and of the first QP (initial collapse)."""
    a, b = candidate_pairs(hulls, n_dynamic, tol)
    start, e, length, normal = _edge_frames(hulls)
    parts = []
    for eb_all, vb_all in ((a, b), (b, a)):
        if not len(eb_all):
            continue
        rel = hulls[vb_all][:, None, :, :] - start[eb_all][:, :, None, :]  # (P, 4 edges, 4 verts, 2)
        dist = np.einsum("pckx,pcx->pck", rel, normal[eb_all])
        alpha = np.einsum("pckx,pcx->pck", rel, e[eb_all]) / (length[eb_all] ** 2)[:, :, None]
        # a vertex touching the edge from outside; the slack in alpha accepts corner-on-corner contact
        slack = tol / length[eb_all][:, :, None]
        hit = (np.abs(dist) <= tol) & (alpha >= -slack) & (alpha <= 1 + slack)
        # a vertex at an end of the edge (corner on corner) is a contact only when the two bodies meet
        # face to face there, i.e. one edge of the vertex's body at k is anti-parallel to edge c (CCW
        # polygons touching along a face run in opposite directions). Otherwise the vertex only touches
        # the corner, and the adjacent, collinear edge (A's side below the corner of a stacked brick)
        # would add a spurious sideways contact.
        unit = e / length[..., None]
        out_dir = unit[vb_all]  # (P, 4, 2): edge k of the vertex body leaves vertex k
        in_dir = np.roll(unit[vb_all], 1, axis=1)  # edge k - 1 arrives at vertex k
        dot_out = np.einsum("pcx,pkx->pck", unit[eb_all], out_dir)
        dot_in = np.einsum("pcx,pkx->pck", unit[eb_all], in_dir)
        face = np.minimum(dot_out, dot_in) < -1.0 + 1e-9
        inner = (alpha > slack) & (alpha < 1 - slack)
        hit &= inner | face
        p, c, k = np.nonzero(hit)
        eb, vb = eb_all[p], vb_all[p]
        parts.append(dict(edge_start=4 * eb + c, edge_end=4 * eb + (c + 1) % 4, vertex=4 * vb + k,
                          alpha=np.clip(alpha[p, c, k], 0.0, 1.0), normal=normal[eb, c], edge_length=length[eb, c],
                          gap=dist[p, c, k], edge_body=eb, vertex_body=vb))
    if not parts:
        z = np.zeros(0)
        zi = np.zeros(0, dtype=np.int64)
        return Triples(zi, zi, zi, z, np.zeros((0, 2)), z, z, zi, zi)
    return Triples(**{key: np.concatenate([d[key] for d in parts]) for key in parts[0]})
