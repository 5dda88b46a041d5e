"""Every shape comes to rest on the ground (and on a box) at the height geometry predicts."""

import itertools
import math

import numpy as np
import pytest

import tumble as tb
from tumble._core.math3d import quat_from_axis_angle

CUBE = np.array(list(itertools.product((-0.2, 0.2), repeat=3)))


@pytest.mark.parametrize("shape, expected_z, orientation", [
    (tb.Sphere(0.2), 0.2, (1, 0, 0, 0)),
    (tb.Box(half_extents=(0.3, 0.2, 0.1)), 0.1, (1, 0, 0, 0)),
    (tb.Capsule(0.1, 0.3), 0.1, tuple(quat_from_axis_angle((1, 0, 0), math.pi / 2))),  # lying down
    (tb.ConvexHull(CUBE), 0.2, (1, 0, 0, 0)),
    (tb.Compound([(tb.Sphere(0.15), (-0.4, 0, 0)), (tb.Sphere(0.15), (0.4, 0, 0)),
                  (tb.Capsule(0.05, 0.4), (0, 0, 0), tuple(quat_from_axis_angle((0, 1, 0), math.pi / 2)))]),
     0.15, (1, 0, 0, 0)),
])
def test_shape_rests_on_ground(shape, expected_z, orientation, solver):
    w = tb.World(gravity=(0, 0, -9.81), solver=solver)
    w.add_body(tb.Plane(), fixed=True)
    b = w.add_body(shape, position=(0, 0, expected_z + 0.05), orientation=orientation, density=500.0)
    w.run(3.0, 1 / 120)
    assert w.position(b)[2] == pytest.approx(expected_z, abs=0.006)  # within the 5 mm slop
    assert np.linalg.norm(w.linear_velocity(b)) < 1e-2
    assert np.linalg.norm(w.position(b)[:2]) < 1e-2


def test_off_centre_hull_rests_on_its_face_where_its_points_say(solver):
    """A hull whose points are not centred on its centre of mass: a corner tetrahedron (0,0,0),
    (L,0,0), (0,L,0), (0,0,L) has its centroid at (L/4, L/4, L/4). Put with its frame at the origin
    it lies on its z = 0 face, so its centre of mass rests at height L/4 above the spot, and its
    collision box spans exactly the points. (The geometry used to be shifted by the centroid a
    second time: the centre of mass sat on the bottom face.)"""
    L = 0.4
    pts = np.array([[0, 0, 0], [L, 0, 0], [0, L, 0], [0, 0, L]], dtype=float)
    w = tb.World(gravity=(0, 0, -9.81), solver=solver)
    w.add_body(tb.Plane(), fixed=True)
    b = w.add_body(tb.ConvexHull(pts), position=(0.0, 0.0, 0.02), density=500.0)
    w.step(1e-9)
    g = 1  # the hull's geom (0 is the plane)
    pad = w.settings.contact_margin + 2e-4  # the tight boxes are padded by the contact margin
    np.testing.assert_allclose(w.geoms.geom_aabb_min[g], pts.min(0) + [0, 0, 0.02], atol=pad)
    np.testing.assert_allclose(w.geoms.geom_aabb_max[g], pts.max(0) + [0, 0, 0.02], atol=pad)
    w.run(2.0, 1 / 120)
    np.testing.assert_allclose(w.position(b), [L / 4, L / 4, L / 4], atol=0.006)
    assert np.linalg.norm(w.linear_velocity(b)) < 1e-2


LYING = tuple(quat_from_axis_angle((1, 0, 0), math.pi / 2))


@pytest.mark.parametrize("shape, half_h, orientation", [
    (tb.Sphere(0.2), 0.2, (1, 0, 0, 0)), (tb.Capsule(0.1, 0.2), 0.1, LYING), (tb.ConvexHull(CUBE), 0.2, (1, 0, 0, 0)),
    (tb.Box(half_extents=(0.2, 0.2, 0.2)), 0.2, (1, 0, 0, 0)),
])
def test_shape_rests_on_a_box(shape, half_h, orientation, solver):
    w = tb.World(gravity=(0, 0, -9.81), solver=solver)
    w.add_body(tb.Plane(), fixed=True)
    base = w.add_body(tb.Box(half_extents=(0.5, 0.5, 0.25)), position=(0, 0, 0.25), density=500.0)
    b = w.add_body(shape, position=(0, 0, 0.5 + half_h + 0.05), orientation=orientation, density=500.0)
    # 1 s, not longer: the base settles with a ~1e-3 rad tilt (sequential Gauss-Seidel over its four
    # ground points on the first step), on which a ball or a lying capsule slowly rolls away
    w.run(1.0, 1 / 120)
    assert w.position(b)[2] == pytest.approx(0.5 + half_h, abs=0.012)  # two slops
    assert np.linalg.norm(w.linear_velocity(b)) < 1e-2
    assert w.position(base)[2] == pytest.approx(0.25, abs=0.006)


def test_hull_on_hull_stack_of_three(solver):
    w = tb.World(gravity=(0, 0, -9.81), solver=solver)
    w.add_body(tb.Plane(), fixed=True)
    ids = [w.add_body(tb.ConvexHull(CUBE), position=(0, 0, 0.2 + 0.41 * i), density=500.0) for i in range(3)]
    w.run(4.0, 1 / 120)
    for i, b in enumerate(ids):
        assert w.position(b)[2] == pytest.approx(0.2 + 0.4 * i, abs=0.006 * (i + 1))
        assert np.linalg.norm(w.position(b)[:2]) < 5e-3
