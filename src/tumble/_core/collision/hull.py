"""Convex hulls: construction, exact mass properties and flat storage for the kernels.

``build_hull(points)`` runs Qhull (scipy), merges coplanar boundary triangles into polygon faces
(vertices counter-clockwise about the outward normal), lists the unique edges with their two faces,
integrates the mass properties exactly and re-centres the vertices on the centre of mass.

Mass properties (uniform unit density). The solid is split into tetrahedra (0, a, b, c), one per
boundary triangle (a, b, c) counter-clockwise from outside, with 0 an interior reference point. For
one tetrahedron with signed volume ``v = det[a b c] / 6``:

* first moment   ``int x dV = v (a + b + c) / 4``,
* second moment  ``C = int x x^T dV = v / 20 (a a^T + b b^T + c c^T + s s^T)``, ``s = a + b + c``
  (the closed-form covariance of a simplex: ``v / 20 (sum_i x_i x_i^T + (sum_i x_i)(sum_i x_i)^T)``
  over its four vertices, one of which is 0 here).

Summing gives the volume ``V``, the centre of mass ``g`` and ``C``; about ``g`` the second moment is
``C_g = C - V g g^T`` and the inertia tensor is ``I = tr(C_g) 1 - C_g``.

``HullStore`` concatenates many hulls into the flat arrays of :class:`HullArrays`, a NamedTuple that
a Numba kernel takes as one argument; :func:`hull_view` and :func:`box_view` cut out the arrays of
one hull (or synthesise those of a box) as the tuple the narrow-phase kernels work on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.spatial import ConvexHull as _Qhull
from scipy.spatial import QhullError

from tumble._core.config import kernel
from tumble.errors import ShapeError

#: Adjacent boundary triangles whose unit normals differ by less than this (1 - cos) are merged into
#: one polygon face (about 4.5e-5 rad).
_MERGE_ONE_MINUS_COS = 1e-9
#: A point set whose thinnest extent is below this fraction of its largest extent is flat.
_FLAT_RATIO = 1e-9


@dataclass(frozen=True, eq=False)
class HullData:
    """One convex polyhedron in its centre-of-mass frame.

    Attributes (V vertices, F faces, K = total face-vertex references, E edges):

    * ``vertices`` (V, 3) [m], the centre of mass is at the origin;
    * ``centroid`` (3,) [m], where that centre of mass was in the frame of the input points;
    * ``volume`` [m^3]; ``inertia`` (3, 3) [m^5], per unit density about the centre of mass;
    * ``face_normal`` (F, 3) outward unit normals; ``face_offset`` (F,) with ``n . x = offset`` on
      the face plane (``n . x <= offset`` inside);
    * ``face_vert_start`` (F,), ``face_vert_count`` (F,), ``face_verts`` (K,) int64: the vertex
      indices of face f are ``face_verts[face_vert_start[f]:][:face_vert_count[f]]``,
      counter-clockwise about the outward normal;
    * ``edges`` (E, 2) int64 vertex indices, each undirected edge once; ``edge_faces`` (E, 2) int64:
      the two faces sharing it (the directed edge ``edges[e, 0] -> edges[e, 1]`` runs
      counter-clockwise in face ``edge_faces[e, 0]``).
    """

    vertices: np.ndarray
    centroid: np.ndarray
    volume: float
    inertia: np.ndarray
    face_normal: np.ndarray
    face_offset: np.ndarray
    face_vert_start: np.ndarray
    face_vert_count: np.ndarray
    face_verts: np.ndarray
    edges: np.ndarray
    edge_faces: np.ndarray

    @property
    def n_faces(self) -> int:
        return int(self.face_normal.shape[0])

    def face(self, f: int) -> np.ndarray:
        """Vertex indices of face ``f`` (counter-clockwise about its outward normal)."""
        s = int(self.face_vert_start[f])
        return self.face_verts[s:s + int(self.face_vert_count[f])]


# ---------------------------------------------------------------------------------------------------
# validation


def _validate_points(points) -> np.ndarray:
    try:
        p = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"ConvexHull: field points={points!r} is not a numeric array") from exc
    if p.ndim != 2 or p.shape[1] != 3:
        raise ShapeError(f"ConvexHull: field points has shape {p.shape}, need (N >= 4, 3)")
    bad = np.argwhere(~np.isfinite(p))
    if bad.size:
        i = int(bad[0, 0])
        raise ShapeError(f"ConvexHull: field points[{i}] = {p[i].tolist()} is not finite")
    distinct = np.unique(p, axis=0)
    if distinct.shape[0] < 4:
        raise ShapeError(f"ConvexHull: field points has {distinct.shape[0]} distinct points "
                         f"({distinct.tolist()}), need at least 4 non-coplanar points")
    # Thinnest extent of the cloud: smallest singular value of the centred points.
    sv = np.linalg.svd(distinct - distinct.mean(axis=0), compute_uv=False)
    if sv[2] <= _FLAT_RATIO * sv[0]:
        raise ShapeError(f"ConvexHull: field points spans no volume: all {p.shape[0]} points are "
                         f"coplanar or collinear (singular values {sv.tolist()})")
    return p


# ---------------------------------------------------------------------------------------------------
# faces from Qhull's triangles


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def _coplanar_groups(qh) -> list[list[int]]:
    """Union-find over neighbouring triangles whose planes agree: each group is one polygon face."""
    normals = qh.equations[:, :3]
    parent = list(range(len(normals)))
    for i, nbrs in enumerate(qh.neighbors):
        for j in nbrs:
            if 1.0 - float(np.dot(normals[i], normals[j])) < _MERGE_ONE_MINUS_COS:
                ri, rj = _find(parent, i), _find(parent, int(j))
                if ri != rj:
                    parent[ri] = rj
    groups: dict[int, list[int]] = {}
    for i in range(len(normals)):
        groups.setdefault(_find(parent, i), []).append(i)
    return list(groups.values())


def _polygon_ccw(pts: np.ndarray, ids: np.ndarray, normal: np.ndarray, scale: float,
                 drop_collinear: bool = True) -> list[int]:
    """Order the vertex ids of a convex planar polygon counter-clockwise about ``normal`` and (with
    ``drop_collinear``) drop vertices lying on the straight line through their neighbours."""
    u = np.cross(normal, [1.0, 0.0, 0.0] if abs(normal[0]) < 0.9 else [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    w = np.cross(normal, u)  # (u, w, normal) is right handed, so increasing angle is CCW
    q = pts[ids] - pts[ids].mean(axis=0)
    ang = np.arctan2(q @ w, q @ u)
    ordered = [int(i) for i in ids[np.argsort(ang)]]
    if not drop_collinear:
        return ordered
    keep = []
    n = len(ordered)
    for k in range(n):
        a, b, c = pts[ordered[k - 1]], pts[ordered[k]], pts[ordered[(k + 1) % n]]
        if float(np.dot(np.cross(b - a, c - b), normal)) > 1e-12 * scale * scale:
            keep.append(ordered[k])
    return keep


def _newell_plane(pts: np.ndarray, face: list[int]) -> tuple[np.ndarray, float]:
    """Plane of a polygon: Newell's normal (area weighted, robust for near-planar loops)."""
    v = pts[face]
    nxt = np.roll(v, -1, axis=0)
    n = np.sum(np.cross(v, nxt), axis=0)
    n /= np.linalg.norm(n)
    return n, float(np.mean(v @ n))


# ---------------------------------------------------------------------------------------------------
# mass properties


def _mass_properties(pts: np.ndarray, faces: list[list[int]]) -> tuple[float, np.ndarray, np.ndarray]:
    """Exact volume, centre of mass and inertia (per unit density, about the COM) of the polyhedron.

    Each polygon face is fanned into triangles; each triangle with the reference point makes one
    tetrahedron (see the module docstring for the closed forms)."""
    ref = pts.mean(axis=0)  # interior point: keeps the integrals well conditioned
    vol = 0.0
    first = np.zeros(3)
    second = np.zeros((3, 3))
    for face in faces:
        a = pts[face[0]] - ref
        for k in range(1, len(face) - 1):
            b = pts[face[k]] - ref
            c = pts[face[k + 1]] - ref
            v = float(np.dot(a, np.cross(b, c))) / 6.0
            s = a + b + c
            vol += v
            first += v * s / 4.0
            second += v / 20.0 * (np.outer(a, a) + np.outer(b, b) + np.outer(c, c) + np.outer(s, s))
    g = first / vol
    cov = second - vol * np.outer(g, g)  # parallel-axis shift of the second moment to the COM
    inertia = np.trace(cov) * np.eye(3) - cov
    return vol, ref + g, 0.5 * (inertia + inertia.T)


# ---------------------------------------------------------------------------------------------------
# assembly


def _assemble(pts: np.ndarray, faces: list[list[int]], what: str) -> HullData:
    """HullData from vertices and CCW polygon faces (vertex ids into ``pts``)."""
    used = sorted({i for f in faces for i in f})
    remap = {old: new for new, old in enumerate(used)}
    verts = pts[used]
    faces = [[remap[i] for i in f] for f in faces]

    vol, com, inertia = _mass_properties(verts, faces)
    scale = float(np.max(np.ptp(verts, axis=0)))
    if not np.isfinite(vol) or vol <= 1e-12 * scale**3:
        raise ShapeError(f"{what}: field volume={vol!r} must be positive (degenerate hull)")
    verts = verts - com

    normals = np.empty((len(faces), 3))
    offsets = np.empty(len(faces))
    for f, face in enumerate(faces):
        normals[f], offsets[f] = _newell_plane(verts, face)
    counts = np.array([len(f) for f in faces], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    flat = np.array([i for f in faces for i in f], dtype=np.int64)

    first_face: dict[tuple[int, int], int] = {}
    edges, edge_faces = [], []
    for f, face in enumerate(faces):
        for k in range(len(face)):
            i, j = face[k], face[(k + 1) % len(face)]
            if (j, i) in first_face:  # the twin directed edge was seen in the neighbouring face
                edges.append((j, i))
                edge_faces.append((first_face.pop((j, i)), f))
            else:
                first_face[(i, j)] = f
    if first_face:
        raise ShapeError(f"{what}: field faces does not close: unmatched edges {list(first_face)[:4]}")

    return HullData(vertices=verts, centroid=com, volume=vol, inertia=inertia, face_normal=normals,
                    face_offset=offsets, face_vert_start=starts, face_vert_count=counts,
                    face_verts=flat, edges=np.array(edges, dtype=np.int64).reshape(-1, 2),
                    edge_faces=np.array(edge_faces, dtype=np.int64).reshape(-1, 2))


def build_hull(points) -> HullData:
    """Convex hull of ``points`` (N, 3) with polygon faces and exact mass properties.

    Raises :class:`ShapeError` (naming the field and value) for non-finite input, fewer than 4
    distinct points, coplanar or collinear points, or a hull of zero volume.
    """
    p = _validate_points(points)
    try:
        qh = _Qhull(p)
    except QhullError as exc:
        raise ShapeError(f"ConvexHull: field points is degenerate for Qhull: {exc}".split("\n")[0]) from exc
    scale = float(np.max(np.ptp(p, axis=0)))
    try:
        return _assemble(p, _faces(qh, p, scale, True), "ConvexHull")
    except ShapeError as exc:
        if "does not close" not in str(exc):
            raise
    # A vertex dropped as collinear from one merged polygon can still be a corner of a neighbouring
    # face that was not merged (nearly flat but bent regions of a tessellated curved surface: 4 of the
    # 19 CoACD pieces of the procedural cow, issue 21), which leaves the boundary open. Keep every
    # vertex of every polygon then: a near-collinear vertex only adds a short edge.
    return _assemble(p, _faces(qh, p, scale, False), "ConvexHull")


def _faces(qh, p: np.ndarray, scale: float, drop_collinear: bool) -> list[list[int]]:
    """Polygon faces (CCW vertex ids into ``p``) from Qhull's triangles, coplanar ones merged."""
    faces = []
    for group in _coplanar_groups(qh):
        ids = np.unique(qh.simplices[group].ravel())
        # plane of the group: the equation of its largest triangle
        tri = qh.simplices[group]
        areas = np.linalg.norm(np.cross(p[tri[:, 1]] - p[tri[:, 0]], p[tri[:, 2]] - p[tri[:, 0]]), axis=1)
        normal = qh.equations[group[int(np.argmax(areas))], :3]
        face = _polygon_ccw(p, ids, normal, scale, drop_collinear)
        if len(face) >= 3:
            faces.append(face)
    return faces


def box_hull(half_extents) -> HullData:
    """A box of ``half_extents`` (hx, hy, hz) as a hull: 8 vertices, 6 quads, 12 edges.

    Vertex ``i`` has coordinate ``k`` equal to ``+h_k`` when bit ``k`` of ``i`` is set; faces are
    +x, -x, +y, -y, +z, -z in that order.
    """
    h = np.asarray(half_extents, dtype=np.float64).reshape(-1)
    if h.shape != (3,) or not np.all(np.isfinite(h)) or np.any(h <= 0.0):
        raise ShapeError(f"box_hull: field half_extents={half_extents!r} must be 3 finite positive numbers")
    verts = np.array([[h[k] if (i >> k) & 1 else -h[k] for k in range(3)] for i in range(8)])
    faces = []
    for a in range(3):
        b, c = (a + 1) % 3, (a + 2) % 3  # e_b x e_c = e_a: (b, c) order is CCW about +e_a
        for side in (1, 0):
            loop = [(0, 0), (1, 0), (1, 1), (0, 1)]
            if not side:
                loop = loop[::-1]
            faces.append([(side << a) | (sb << b) | (sc << c) for sb, sc in loop])
    return _assemble(verts, faces, "box_hull")


# ---------------------------------------------------------------------------------------------------
# flat storage for kernels


class HullArrays(NamedTuple):
    """Many hulls in flat arrays (H hulls; NV, NF, NK, NE totals). One argument to a kernel.

    Per hull h (H,) int64: ``vert_start``, ``vert_count``, ``face_start``, ``face_count``,
    ``edge_start``, ``edge_count``; ``radius`` (H,) float64, the largest vertex distance from the COM.
    ``verts`` (NV, 3) float64, COM frame of each hull. ``face_normal`` (NF, 3), ``face_offset`` (NF,).
    ``face_vert_start`` (NF,) int64 indexes ``face_verts`` globally; ``face_vert_count`` (NF,);
    ``face_verts`` (NK,) int64 holds vertex indices LOCAL to the hull (0 .. vert_count - 1).
    ``edges`` (NE, 2) int64 local vertex indices; ``edge_faces`` (NE, 2) int64 local face indices.
    """

    vert_start: np.ndarray
    vert_count: np.ndarray
    verts: np.ndarray
    face_start: np.ndarray
    face_count: np.ndarray
    face_normal: np.ndarray
    face_offset: np.ndarray
    face_vert_start: np.ndarray
    face_vert_count: np.ndarray
    face_verts: np.ndarray
    edge_start: np.ndarray
    edge_count: np.ndarray
    edges: np.ndarray
    edge_faces: np.ndarray
    radius: np.ndarray


class HullStore:
    """Registry of hulls; ``add`` returns the hull index the kernels use."""

    def __init__(self):
        self._hulls: list[HullData] = []

    def __len__(self) -> int:
        return len(self._hulls)

    def add(self, data: HullData) -> int:
        self._hulls.append(data)
        return len(self._hulls) - 1

    def add_box(self, half_extents) -> int:
        """Register a box (as :func:`box_hull`) and return its hull index."""
        return self.add(box_hull(half_extents))

    def __getitem__(self, i: int) -> HullData:
        return self._hulls[i]

    def arrays(self) -> HullArrays:
        hs = self._hulls

        def counts(get):
            return np.array([get(h) for h in hs], dtype=np.int64)

        def starts(c):
            return np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64) if len(c) else c.copy()

        def cat(get, shape, dtype):
            parts = [np.asarray(get(h), dtype=dtype).reshape(shape) for h in hs]
            return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros((0,) + shape[1:], dtype))

        nv = counts(lambda h: h.vertices.shape[0])
        nf = counts(lambda h: h.face_normal.shape[0])
        ne = counts(lambda h: h.edges.shape[0])
        nk = counts(lambda h: h.face_verts.shape[0])
        fvs = [h.face_vert_start + s for h, s in zip(hs, starts(nk))]  # local -> global into face_verts
        return HullArrays(
            vert_start=starts(nv), vert_count=nv, verts=cat(lambda h: h.vertices, (-1, 3), np.float64),
            face_start=starts(nf), face_count=nf,
            face_normal=cat(lambda h: h.face_normal, (-1, 3), np.float64),
            face_offset=cat(lambda h: h.face_offset, (-1,), np.float64),
            face_vert_start=np.ascontiguousarray(np.concatenate(fvs) if fvs else np.zeros(0, np.int64),
                                                 dtype=np.int64),
            face_vert_count=cat(lambda h: h.face_vert_count, (-1,), np.int64),
            face_verts=cat(lambda h: h.face_verts, (-1,), np.int64),
            edge_start=starts(ne), edge_count=ne,
            edges=cat(lambda h: h.edges, (-1, 2), np.int64),
            edge_faces=cat(lambda h: h.edge_faces, (-1, 2), np.int64),
            radius=np.array([float(np.max(np.linalg.norm(h.vertices, axis=1))) for h in hs],
                            dtype=np.float64),
        )


# ---------------------------------------------------------------------------------------------------
# views for kernels: (verts, face_normal, face_offset, face_vert_start, face_vert_count, face_verts,
# edges, edge_faces), all with hull-local indices except face_vert_start, which indexes face_verts.

_UNIT_BOX = box_hull((1.0, 1.0, 1.0))
_BOX_VERTS = np.ascontiguousarray(_UNIT_BOX.vertices)
_BOX_NORMALS = np.ascontiguousarray(_UNIT_BOX.face_normal)
_BOX_FVS = np.ascontiguousarray(_UNIT_BOX.face_vert_start)
_BOX_FVC = np.ascontiguousarray(_UNIT_BOX.face_vert_count)
_BOX_FV = np.ascontiguousarray(_UNIT_BOX.face_verts)
_BOX_EDGES = np.ascontiguousarray(_UNIT_BOX.edges)
_BOX_EDGE_FACES = np.ascontiguousarray(_UNIT_BOX.edge_faces)


@kernel
def hull_view(hulls, h):
    """The arrays of hull ``h`` of ``hulls`` (a HullArrays), as slices (no copies)."""
    v0 = hulls.vert_start[h]
    v1 = v0 + hulls.vert_count[h]
    f0 = hulls.face_start[h]
    f1 = f0 + hulls.face_count[h]
    e0 = hulls.edge_start[h]
    e1 = e0 + hulls.edge_count[h]
    return (hulls.verts[v0:v1], hulls.face_normal[f0:f1], hulls.face_offset[f0:f1],
            hulls.face_vert_start[f0:f1], hulls.face_vert_count[f0:f1], hulls.face_verts,
            hulls.edges[e0:e1], hulls.edge_faces[e0:e1])


@kernel
def box_view(half):
    """A box of half extents ``half`` (3,) in the same form as :func:`hull_view` (fresh arrays)."""
    verts = np.empty((8, 3))
    for i in range(8):
        for k in range(3):
            verts[i, k] = _BOX_VERTS[i, k] * half[k]
    normals = _BOX_NORMALS.copy()
    offsets = np.empty(6)
    for f in range(6):
        offsets[f] = (abs(normals[f, 0]) * half[0] + abs(normals[f, 1]) * half[1]
                      + abs(normals[f, 2]) * half[2])
    return (verts, normals, offsets, _BOX_FVS.copy(), _BOX_FVC.copy(), _BOX_FV.copy(),
            _BOX_EDGES.copy(), _BOX_EDGE_FACES.copy())
