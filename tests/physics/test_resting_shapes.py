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
