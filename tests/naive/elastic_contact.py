"""Pure-NumPy oracles for contact between elastic bodies (tumble.elastic.body_contact), written from geometry
and independent of the kernels: point-in-tetrahedron by barycentric coordinates, point-triangle distance by
the closest point on the triangle (interior, edges, corners), and the zero-rest-length pair springs."""

import numpy as np


def barycentric_in_tets(points, vertices, tets):
    """(p, m, 4) barycentric coordinates of every point in every tet: solve [x1-x0, x2-x0, x3-x0] l = p - x0."""
    x = vertices[tets]
    A = np.stack([x[:, 1] - x[:, 0], x[:, 2] - x[:, 0], x[:, 3] - x[:, 0]], axis=2)  # (m, 3, 3)
    rhs = points[:, None, :] - x[None, :, 0, :]  # (p, m, 3)
    lam = np.einsum("mij,pmj->pmi", np.linalg.inv(A), rhs)
    return np.concatenate([1.0 - lam.sum(axis=2, keepdims=True), lam], axis=2)


def points_inside(points, vertices, tets, margin=0.0):
    """(p,) bool: the point lies inside some tet with every barycentric coordinate > margin."""
    return (barycentric_in_tets(points, vertices, tets).min(axis=2) > margin).any(axis=1)


def _segment_distance(p, a, b):
    ab = b - a
    t = np.clip(np.einsum("...i,...i->...", p - a, ab) / np.einsum("...i,...i->...", ab, ab), 0.0, 1.0)
    return np.linalg.norm(p - (a + t[..., None] * ab), axis=-1)


def point_triangle_distance(points, vertices, triangles):
    """(p,) distance of every point to the nearest triangle: the plane distance where the projection falls
    inside the triangle, otherwise the nearest of the three edges."""
    a, b, c = (vertices[triangles[:, k]][None] for k in range(3))
    p = points[:, None, :]
    n = np.cross(b - a, c - a)
    n = n / np.linalg.norm(n, axis=-1, keepdims=True)
    height = np.einsum("pti,pti->pt", p - a, n)
    q = p - height[..., None] * n
    inside = np.ones(height.shape, dtype=bool)
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("pti,pti->pt", np.cross(v - u, q - u), n) >= 0.0
    edge = np.minimum(np.minimum(_segment_distance(p, a, b), _segment_distance(p, b, c)), _segment_distance(p, c, a))
    return np.where(inside, np.abs(height), edge).min(axis=1)


def penetration_depth(points, vertices, tets, triangles):
    """(p,) how deep each point lies inside the body (vertices, tets) with surface ``triangles``: 0 outside,
    the distance to the surface inside."""
    inside = points_inside(points, vertices, tets)
    depth = np.zeros(len(points))
    if inside.any():
        depth[inside] = point_triangle_distance(points[inside], vertices, triangles)
    return depth


def pair_spring_forces(positions, index, weight, stiffness):
    """d = sum_k w_k x_(i_k) per spring, f_(i_k) = -k w_k d, energy k/2 |d|^2 (np.add.at over the corners)."""
    d = np.einsum("sk,ski->si", weight, positions[index])
    forces = np.zeros_like(positions)
    np.add.at(forces, index.ravel(), (-stiffness * weight[:, :, None] * d[:, None, :]).reshape(-1, 3))
    return forces, 0.5 * stiffness * float((d * d).sum())
