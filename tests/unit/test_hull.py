"""Hull construction: mass properties against closed forms, face / edge structure, flat storage and
the ShapeError messages for degenerate input."""

from __future__ import annotations

import numpy as np
import pytest

from tumble._core.collision.hull import HullStore, box_hull, build_hull, hull_view
from tumble.errors import ShapeError
from tumble.shapes import ConvexHull


def corners(h):
    return np.array([[sx * h[0], sy * h[1], sz * h[2]] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])


def box_inertia(h):
    v = 8.0 * h[0] * h[1] * h[2]
    return v, np.diag([v / 3 * (h[1] ** 2 + h[2] ** 2), v / 3 * (h[0] ** 2 + h[2] ** 2),
                       v / 3 * (h[0] ** 2 + h[1] ** 2)])


@pytest.mark.parametrize("make", [lambda h: box_hull(h), lambda h: build_hull(corners(h))])
def test_box_mass_properties_closed_form(make):
    h = (0.3, 0.7, 1.1)
    data = make(h)
    v, inertia = box_inertia(h)
    assert data.volume == pytest.approx(v, rel=1e-12)
    np.testing.assert_allclose(data.inertia, inertia, rtol=1e-12, atol=1e-14)
    assert data.n_faces == 6 and data.edges.shape == (12, 2) and data.vertices.shape == (8, 3)
    assert np.all(data.face_vert_count == 4)


def test_rotated_offset_box_recovers_centroid_and_rotated_inertia():
    h = (0.5, 0.2, 0.9)
    c = np.array([3.0, -2.0, 7.5])
    a = 0.7
    R = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1.0]])
    data = build_hull(corners(h) @ R.T + c)
    _, inertia = box_inertia(h)
    np.testing.assert_allclose(data.centroid, c, atol=1e-12)
    np.testing.assert_allclose(data.inertia, R @ inertia @ R.T, atol=1e-12)
    np.testing.assert_allclose(data.vertices.mean(axis=0), 0.0, atol=1e-12)


def test_tetrahedron_closed_form():
    # right tetrahedron 0, a e_x, b e_y, c e_z: V = abc/6, centroid (a, b, c)/4,
    # second moments about the centroid: int x^2 = V 3 a^2 / 80, int xy = -V a b / 80
    a, b, c = 1.0, 2.0, 3.0
    pts = np.array([[0, 0, 0], [a, 0, 0], [0, b, 0], [0, 0, c]], dtype=float)
    data = build_hull(pts)
    vol = a * b * c / 6
    assert data.volume == pytest.approx(vol, rel=1e-13)
    np.testing.assert_allclose(data.centroid, [a / 4, b / 4, c / 4], atol=1e-14)
    s = np.array([a, b, c])
    cov = vol / 80.0 * (-np.outer(s, s))
    np.fill_diagonal(cov, vol * 3.0 / 80.0 * s * s)
    np.testing.assert_allclose(data.inertia, np.trace(cov) * np.eye(3) - cov, atol=1e-14)
    assert data.n_faces == 4 and data.edges.shape == (6, 2)


def test_offset_point_cloud_recovers_shifted_centroid():
    # interior points do not change the hull; the centroid of a translated cloud moves with it
    rng = np.random.default_rng(3)
    pts = rng.normal(size=(60, 3))
    base = build_hull(pts)
    moved = build_hull(pts + [10.0, -4.0, 2.5])
    np.testing.assert_allclose(moved.centroid, base.centroid + [10.0, -4.0, 2.5], atol=1e-10)
    np.testing.assert_allclose(moved.inertia, base.inertia, atol=1e-10)
    interior = np.vstack([pts, 0.01 * rng.normal(size=(30, 3))])
    assert build_hull(interior).volume == pytest.approx(base.volume, rel=1e-12)


def test_polyhedral_sphere_inertia_within_one_percent():
    # Fibonacci sphere: 800 points on the unit sphere
    k = np.arange(800) + 0.5
    phi = np.arccos(1 - 2 * k / 800)
    th = np.pi * (1 + 5**0.5) * k
    pts = np.column_stack([np.cos(th) * np.sin(phi), np.sin(th) * np.sin(phi), np.cos(phi)])
    data = build_hull(pts)
    m = data.volume
    assert m == pytest.approx(4 / 3 * np.pi, rel=1e-2)
    np.testing.assert_allclose(np.diag(data.inertia), 0.4 * m, rtol=1e-2)
    assert abs(data.inertia[0, 1]) < 1e-3


def test_faces_are_ccw_planar_and_edges_shared_by_two_faces():
    rng = np.random.default_rng(5)
    data = build_hull(rng.normal(size=(40, 3)))
    v = data.vertices
    for f in range(data.n_faces):
        ids = data.face(f)
        n = data.face_normal[f]
        np.testing.assert_allclose(v[ids] @ n, data.face_offset[f], atol=1e-9)
        assert np.all(v @ n <= data.face_offset[f] + 1e-9)  # outward, convex
        for k in range(len(ids)):
            a, b, c = v[ids[k - 1]], v[ids[k]], v[ids[(k + 1) % len(ids)]]
            assert np.dot(np.cross(b - a, c - b), n) > 0.0  # counter-clockwise about n
    # Euler: V - E + F = 2, every edge in the two faces it lists
    assert v.shape[0] - data.edges.shape[0] + data.n_faces == 2
    for (i, j), (f0, f1) in zip(data.edges, data.edge_faces):
        assert {i, j} <= set(data.face(f0).tolist()) and {i, j} <= set(data.face(f1).tolist())


def test_coplanar_cube_faces_merged_from_dense_points():
    g = np.linspace(-1, 1, 4)
    pts = np.array([[x, y, z] for x in g for y in g for z in g])
    data = build_hull(pts)
    assert data.n_faces == 6 and data.vertices.shape == (8, 3)


def test_store_arrays_and_view():
    store = HullStore()
    a = store.add(box_hull((1, 2, 3)))
    b = store.add(build_hull(np.random.default_rng(0).normal(size=(20, 3))))
    c = store.add_box((0.5, 0.5, 0.5))
    arr = store.arrays()
    assert (a, b, c) == (0, 1, 2) and arr.vert_start.tolist()[0] == 0
    for h in range(3):
        verts, fn, fo, fvs, fvc, fv, edges, ef = hull_view(arr, h)
        data = store[h]
        np.testing.assert_array_equal(verts, data.vertices)
        np.testing.assert_array_equal(fn, data.face_normal)
        np.testing.assert_array_equal(edges, data.edges)
        for f in range(data.n_faces):
            np.testing.assert_array_equal(fv[fvs[f]:fvs[f] + fvc[f]], data.face(f))
        assert arr.radius[h] == pytest.approx(np.max(np.linalg.norm(data.vertices, axis=1)))


def test_convex_hull_shape_uses_build_hull():
    shape = ConvexHull(corners((1, 1, 1)) + 5.0)
    np.testing.assert_allclose(shape.centroid, 5.0)
    assert shape.mass_properties()[0] == pytest.approx(8.0)


@pytest.mark.parametrize("points, words", [
    (np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0.5, 0.2, 0]]), ["points", "coplanar"]),
    (np.array([[1.0, 2.0, 3.0]] * 6), ["points", "1 distinct", "[[1.0, 2.0, 3.0]]"]),
    (np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, np.nan]]), ["points[3]", "nan"]),
    (np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3]]), ["points", "collinear"]),
    (np.zeros((4, 2)), ["points", "(4, 2)"]),
])
def test_degenerate_input_raises_shape_error_naming_field_and_value(points, words):
    with pytest.raises(ShapeError) as err:
        build_hull(points)
    for w in words:
        assert w in str(err.value)


def test_box_hull_rejects_bad_half_extents():
    with pytest.raises(ShapeError, match=r"half_extents=\(1, -1, 1\)"):
        box_hull((1, -1, 1))
