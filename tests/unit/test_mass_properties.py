"""Mass properties of every shape against closed forms and independent integrations."""

import math

import numpy as np
import pytest

import tumble as tb
from tumble._core.math3d import quat_from_axis_angle


def test_sphere_closed_form():
    v, c, inertia = tb.Sphere(0.3).mass_properties()
    assert v == pytest.approx(4 / 3 * math.pi * 0.027)
    np.testing.assert_allclose(inertia, np.eye(3) * 0.4 * v * 0.09)
    np.testing.assert_allclose(c, 0.0)


def test_box_closed_form():
    v, _, inertia = tb.Box(half_extents=(0.5, 0.2, 0.1)).mass_properties()
    a, b, d = 1.0, 0.4, 0.2  # full side lengths: I_xx = m (b^2 + d^2) / 12
    assert v == pytest.approx(a * b * d)
    np.testing.assert_allclose(np.diag(inertia), [v * (b * b + d * d) / 12, v * (a * a + d * d) / 12,
                                                  v * (a * a + b * b) / 12])


def _capsule_points(r, h, n=40):
    """Points on a capsule surface: two rings per latitude of each hemisphere plus the cylinder."""
    pts = []
    for i in range(n + 1):
        lat = math.pi / 2 * i / n
        for j in range(2 * n):
            lon = 2 * math.pi * j / (2 * n)
            x, y = r * math.cos(lat) * math.cos(lon), r * math.cos(lat) * math.sin(lon)
            z = r * math.sin(lat)
            pts.append((x, y, h + z))
            pts.append((x, y, -h - z))
    return np.array(pts)


@pytest.mark.parametrize("r, h", [(0.1, 0.3), (0.25, 0.05)])
def test_capsule_matches_a_fine_polyhedral_capsule(r, h):
    v, _, inertia = tb.Capsule(r, h).mass_properties()
    hull = tb.ConvexHull(_capsule_points(r, h))
    hv, _, hi = hull.mass_properties()
    assert v == pytest.approx(hv, rel=0.01)
    np.testing.assert_allclose(np.diag(inertia), np.diag(hi), rtol=0.015)


def test_compound_of_two_boxes_equals_one_box():
    half = tb.Box(half_extents=(0.25, 0.2, 0.1))
    comp = tb.Compound([(half, (-0.25, 0, 0)), (half, (0.25, 0, 0))])
    v, _, inertia = comp.mass_properties()
    bv, _, bi = tb.Box(half_extents=(0.5, 0.2, 0.1)).mass_properties()
    assert v == pytest.approx(bv)
    np.testing.assert_allclose(inertia, bi, atol=1e-12)
    np.testing.assert_allclose(comp.centroid, 0.0, atol=1e-15)


def test_compound_centroid_and_rotated_child():
    q = quat_from_axis_angle((0, 0, 1), math.pi / 2)
    comp = tb.Compound([(tb.Sphere(0.1), (1.0, 0, 0)), (tb.Box(half_extents=(0.3, 0.1, 0.1)), (0, 0, 0), q)])
    vs = 4 / 3 * math.pi * 0.001
    vb = 8 * 0.3 * 0.1 * 0.1
    np.testing.assert_allclose(comp.centroid, [vs / (vs + vb), 0, 0], atol=1e-12)
    # the rotated box contributes its long-axis inertia about y, not x
    _, _, inertia = comp.mass_properties()
    _, _, bi = tb.Box(half_extents=(0.3, 0.1, 0.1)).mass_properties()
    assert inertia[0, 0] > bi[1, 1]  # x now sees the box's long dimension


def test_compound_of_off_centre_hulls_keeps_their_centres():
    """Regression (issue 21): a hull child's mass sits at its own centroid (points not centred on 0, as a
    convex decomposition gives them), not at the child position. Oracle: two unit cubes as hulls at
    x in [0, 1] and [5, 6] equal two Box children at x = 0.5 and 5.5."""
    cube = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    hulls = tb.Compound([(tb.ConvexHull(cube + [5.0, 0, 0]), (0, 0, 0)), (tb.ConvexHull(cube), (0, 0, 0))])
    box = tb.Box((0.5, 0.5, 0.5))
    boxes = tb.Compound([(box, (5.5, 0.5, 0.5)), (box, (0.5, 0.5, 0.5))])
    np.testing.assert_allclose(hulls.centroid, [3.0, 0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(hulls.mass_properties()[2], boxes.mass_properties()[2], atol=1e-12)
    w = tb.World()
    b = w.add_body(hulls, mass=2.0)
    np.testing.assert_allclose(w.position(b), [3.0, 0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(w.inertia(b)[0, 0], 2.0 / 6.0, atol=1e-12)


def test_world_uses_density_mass_and_inertia():
    w = tb.World()
    b = w.add_body(tb.Box(half_extents=(0.5, 0.5, 0.5)), density=700.0)
    assert w.mass(b) == pytest.approx(700.0)
    np.testing.assert_allclose(w.inertia(b), np.eye(3) * 700.0 / 6.0)
    s = w.add_body(tb.Sphere(0.5), mass=np.int64(3), position=(5, 0, 0))  # NumPy scalars are numbers too
    np.testing.assert_allclose(w.inertia(s), np.eye(3) * 0.4 * 3.0 * 0.25)
    # a hull's body origin is its centre of mass
    pts = np.array([[0, 0, 0], [2, 0, 0], [0, 2, 0], [0, 0, 2.0]])
    h = w.add_body(tb.ConvexHull(pts), position=(10, 0, 0), mass=1.0)
    np.testing.assert_allclose(w.position(h), [10.5, 0.5, 0.5])
