"""Coulomb friction between elastic bodies and rigid geoms (tumble.elastic.coupling, "Friction").

Oracle: a block on a slope of angle theta with friction mu sticks when tan theta < mu (its centre creeps only by
the settling of the soft contact: the tangential springs stretch by m g sin theta / (N k) and the jelly shears
by tau / G, both well under a millimetre here), and slides otherwise with the acceleration
a = g (sin theta - mu cos theta) of Coulomb's law, which we measure from the distance travelled between two
times after the start (the block's deformation settles in the first ~0.1 s; 15 % tolerance for the soft
contact's normal force oscillating around m g cos theta)."""

import math

import numpy as np
import pytest

import tumble as tb

JELLY = tb.ElasticMaterial(1000.0, 2.0e5, 6.0e4, 0.0, 50.0)
MU = 0.5


def _block_on_slope(theta):
    """A fixed 1 m x 1 m x 0.1 m box turned by theta about x (its top face is the slope) and a 0.1 m jelly cube
    resting on it (1 mm above), no floor plane."""
    w = tb.World(gravity=(0.0, 0.0, -9.81))
    q = (math.cos(theta / 2), math.sin(theta / 2), 0.0, 0.0)
    w.add_body(tb.Box((0.5, 0.5, 0.05)), position=(0.0, 0.0, 0.0), orientation=q, fixed=True,
               material=tb.Material(friction=MU))
    normal = np.array([0.0, -math.sin(theta), math.cos(theta)])
    centre = normal * (0.05 + 0.05 + 0.001)
    e = w.add_elastic_body(tb.TetMesh.box((0.1, 0.1, 0.1), (2, 2, 2)), position=tuple(centre), orientation=q,
                           material=JELLY)
    w.set_elastic_options(tol=1e-6)  # the energy books below close to the integrator's error (see
    # tests/physics/test_elastic_energy_books.py; at the default 1e-4 m the contact's entry drifts ~1e-2 J)
    down_slope = np.array([0.0, -math.cos(theta), -math.sin(theta)])
    return w, e, down_slope


def _travel(w, e, down, seconds):
    start = w.elastic_vertices(e).mean(0)
    for _ in range(round(seconds * 240)):
        w.step(1.0 / 240.0)
    return float((w.elastic_vertices(e).mean(0) - start) @ down)


def test_block_sticks_below_the_friction_angle():
    theta = math.radians(15.0)  # tan 15 deg = 0.27 < 0.5
    w, e, down = _block_on_slope(theta)
    _travel(w, e, down, 0.1)  # settle
    creep = _travel(w, e, down, 0.4)
    assert abs(creep) < 5e-4, creep
    assert w.counters["elastic_rigid_contacts"] >= 4


@pytest.mark.parametrize("degrees", [35.0, 45.0])
def test_block_slides_above_the_friction_angle_with_coulomb_acceleration(degrees):
    theta = math.radians(degrees)  # tan 35 deg = 0.70 > 0.5
    w, e, down = _block_on_slope(theta)
    start = w.elastic_energies()
    _travel(w, e, down, 0.1)
    t1, t2 = 0.1, 0.3
    v1 = float(w.elastic_system.velocities.mean(0) @ down)
    d = _travel(w, e, down, t2 - t1)
    v2 = float(w.elastic_system.velocities.mean(0) @ down)
    a = (v2 - v1) / (t2 - t1)
    expected = 9.81 * (math.sin(theta) - MU * math.cos(theta))
    assert a == pytest.approx(expected, rel=0.15), (a, expected)
    assert d > 0.0
    # the books: the friction work (the slip's released spring energy) is dissipated, so elastic + kinetic +
    # potential + contact + dissipated holds; sliding dissipates mu m g cos theta per metre
    e_now = w.elastic_energies()
    assert e_now["dissipated"] > 0.5 * MU * 9.81 * math.cos(theta) * d
    assert abs(e_now["total"] - start["total"]) <= 0.02 * e_now["dissipated"], (e_now["total"] - start["total"])


def test_a_convex_hull_slope_acts_like_the_same_box():
    """Hull geoms are coupled too (depth through the nearest face plane): the slope as a ConvexHull of the box's
    8 corners gives the box's result (the same planes, up to Qhull's rounding of the face normals)."""
    theta = math.radians(35.0)
    results = []
    for hull in (False, True):
        w = tb.World(gravity=(0.0, 0.0, -9.81))
        q = (math.cos(theta / 2), math.sin(theta / 2), 0.0, 0.0)
        corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.05, 0.05)])
        shape = tb.ConvexHull(corners) if hull else tb.Box((0.5, 0.5, 0.05))
        w.add_body(shape, position=(0.0, 0.0, 0.0), orientation=q, fixed=True, material=tb.Material(friction=MU))
        normal = np.array([0.0, -math.sin(theta), math.cos(theta)])
        e = w.add_elastic_body(tb.TetMesh.box((0.1, 0.1, 0.1), (2, 2, 2)), position=tuple(normal * 0.101),
                               orientation=q, material=JELLY)
        for _ in range(48):
            w.step(1.0 / 240.0)
        assert w.counters["elastic_rigid_contacts"] >= 4
        results.append(w.elastic_vertices(e))
    assert np.abs(results[0] - results[1]).max() < 1e-6
