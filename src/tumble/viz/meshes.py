"""Unit meshes of the renderer, as float32 vertex arrays and int32 triangle indices.

Every primitive mesh has the vertex layout ``position (3), normal (3), cap (1)``; the vertex shader
places a vertex at ``position * scale + cap * half_length * z`` in the geom frame, so one mesh serves
every size:

* box: the cube [-1, 1]^3 with flat face normals, scaled by the half extents;
* sphere: an icosphere of radius 1 (smooth normals), scaled by the radius;
* capsule: a unit sphere cut at its equator, the upper half carrying cap = +1 and the lower half
  cap = -1 (the equator ring appears twice, once in each half, so the quads between the two copies
  are the cylinder's side); with scale = radius and half_length the vertices land on the capsule of
  that radius and half length along local z.

Triangles are counter-clockwise seen from outside (checked by :func:`orient_outward`). Hulls get their
own flat-shaded triangle soup (:func:`hull_soup`).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np


def orient_outward(pos: np.ndarray, tris: np.ndarray, outward: np.ndarray) -> np.ndarray:
    """Flip the triangles whose geometric normal (v1-v0) x (v2-v0) points against ``outward`` (t, 3)."""
    a, b, c = pos[tris[:, 0]], pos[tris[:, 1]], pos[tris[:, 2]]
    n = np.cross(b - a, c - a)
    flip = np.einsum("ij,ij->i", n, outward) < 0
    out = tris.copy()
    out[flip] = out[flip][:, ::-1]
    return out


def _pack(pos, normal, cap, tris):
    v = np.zeros((len(pos), 7), np.float32)
    v[:, 0:3], v[:, 3:6], v[:, 6] = pos, normal, cap
    return v, np.ascontiguousarray(tris, dtype=np.int32)


@cache
def box() -> tuple[np.ndarray, np.ndarray]:
    """Cube [-1, 1]^3: 24 vertices (4 per face, flat normals), 12 triangles."""
    pos, nrm, tris = [], [], []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis] = sign
            u, v = (axis + 1) % 3, (axis + 2) % 3
            base = len(pos)
            for du, dv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                p = np.zeros(3)
                p[axis], p[u], p[v] = sign, du, dv
                pos.append(p)
                nrm.append(n)
            tris += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
    pos, nrm, tris = np.array(pos), np.array(nrm), np.array(tris)
    tris = orient_outward(pos, tris, nrm[tris[:, 0]])
    return _pack(pos, nrm, np.zeros(len(pos)), tris)


def _icosphere_raw(subdivisions: int) -> tuple[np.ndarray, np.ndarray]:
    t = (1.0 + math.sqrt(5.0)) / 2.0
    verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
             (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
             (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11),
             (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    verts = [np.array(v, float) / np.linalg.norm(v) for v in verts]
    for _ in range(subdivisions):
        cache: dict[tuple[int, int], int] = {}

        def mid(i, j, cache=cache):
            key = (min(i, j), max(i, j))
            if key not in cache:
                m = verts[i] + verts[j]
                verts.append(m / np.linalg.norm(m))
                cache[key] = len(verts) - 1
            return cache[key]

        new = []
        for a, b, c in faces:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = new
    pos = np.array(verts)
    tris = np.array(faces)
    return pos, orient_outward(pos, tris, pos[tris].mean(axis=1))


@cache
def sphere(subdivisions: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Unit icosphere: 20 * 4^subdivisions triangles, normals = positions."""
    pos, tris = _icosphere_raw(subdivisions)
    return _pack(pos, pos, np.zeros(len(pos)), tris)


@cache
def capsule(segments: int = 24, rings: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Unit-radius capsule template: ``segments`` around z, ``rings`` latitude bands per hemisphere.

    Rows from the top pole to the bottom pole; each row is (latitude phi, cap): the upper hemisphere's
    phi = 90..0 degrees with cap +1, the lower's 0..-90 degrees with cap -1.
    """
    rows = [(math.pi / 2 * (1 - k / rings), 1.0) for k in range(rings + 1)]
    rows += [(-math.pi / 2 * k / rings, -1.0) for k in range(rings + 1)]
    th = np.linspace(0.0, 2 * math.pi, segments + 1)[:-1]
    pos, cap = [], []
    for phi, c in rows:
        for t in th:
            pos.append((math.cos(phi) * math.cos(t), math.cos(phi) * math.sin(t), math.sin(phi)))
            cap.append(c)
    pos, cap = np.array(pos), np.array(cap)
    tris = []
    for r in range(len(rows) - 1):
        a0, b0 = r * segments, (r + 1) * segments
        for j in range(segments):
            j1 = (j + 1) % segments
            tris += [(a0 + j, b0 + j, b0 + j1), (a0 + j, b0 + j1, a0 + j1)]
    tris = np.array(tris)
    # drop the degenerate triangles at the poles (two vertices at the same pole point)
    placed = pos + cap[:, None] * np.array([0.0, 0.0, 1.0])
    area = np.linalg.norm(np.cross(placed[tris[:, 1]] - placed[tris[:, 0]], placed[tris[:, 2]] - placed[tris[:, 0]]),
                          axis=1)
    tris = tris[area > 1e-9]
    tris = orient_outward(placed, tris, placed[tris].mean(axis=1))
    return _pack(pos, pos, cap, tris)


def hull_soup(vertices: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flat-shaded triangle soup of a convex hull: positions (3t, 3) and face normals (3t, 3), each
    triangle counter-clockwise seen from outside (re-oriented against the vertex centroid if needed)."""
    v = np.asarray(vertices, np.float64)
    t = np.asarray(triangles, np.int64).reshape(-1, 3)
    if len(t) == 0:
        return np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)
    t = orient_outward(v, t, v[t].mean(axis=1) - v.mean(axis=0))
    p = v[t]  # (t, 3, 3)
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)
    return p.reshape(-1, 3).astype(np.float32), np.repeat(n, 3, axis=0).astype(np.float32)


#: levels of detail: (mesh, largest projected radius [px] the level is used for)
def sphere_levels() -> list[tuple[tuple[np.ndarray, np.ndarray], float]]:
    """Icospheres of 20, 80, 320 and 1280 triangles for projected radii up to 3, 14, 56 px and above
    (silhouette error r (1 - cos(edge/2)) below about 0.7 px)."""
    return [(sphere(0), 3.0), (sphere(1), 14.0), (sphere(2), 56.0), (sphere(3), math.inf)]


def capsule_levels() -> list[tuple[tuple[np.ndarray, np.ndarray], float]]:
    """Capsule templates of 8, 16 and 32 segments for projected radii up to 6, 30 px and above."""
    return [(capsule(8, 2), 6.0), (capsule(16, 4), 30.0), (capsule(32, 8), math.inf)]


def box_levels() -> list[tuple[tuple[np.ndarray, np.ndarray], float]]:
    return [(box(), math.inf)]


def quad() -> np.ndarray:
    """Two triangles covering [-1, 1]^2 (6 vertices, uv only)."""
    return np.array([(-1, -1), (1, -1), (1, 1), (-1, -1), (1, 1), (-1, 1)], np.float32)
