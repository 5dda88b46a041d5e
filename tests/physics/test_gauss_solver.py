"""The gauss solver (paper 002 Fig. 7 in 3-D) and tb.stability (002 §1) against closed forms:
free fall of the scheme, totally inelastic impact (002 §7 Thm 7.1), resting contact, Coulomb
friction on a slope, the initial collapse of a tipping box and the critical harmonic overhang."""

import math

import numpy as np
import pytest

import tumble as tb
from tumble import scenes
from tumble._core.math3d import quat_from_axis_angle, quat_to_matrix_py
from tumble.errors import JointError

G = 9.81


def _world(**kw):
    return tb.World(gravity=(0.0, 0.0, -G), solver="gauss", **kw)


def test_free_fall_is_the_schemes_closed_form():
    # u_k = v0 + k dt g and x_k = x_{k-1} + dt u_k: x_n = x0 + n dt v0 + g dt^2 n (n + 1) / 2
    w = _world()
    w.add_body(tb.Plane(), fixed=True)
    x0, v0 = np.array([0.3, -0.2, 50.0]), np.array([1.0, 0.5, 2.0])
    b = w.add_body(tb.Sphere(0.2), position=x0, linear_velocity=v0)
    dt = 1 / 60
    g = np.array([0.0, 0.0, -G])
    for n in range(1, 121):
        w.step(dt)
        expect = x0 + n * dt * v0 + g * dt * dt * n * (n + 1) / 2
        assert np.allclose(w.position(b), expect, rtol=0, atol=1e-12)
    assert np.allclose(w.linear_velocity(b), v0 + 120 * dt * g, atol=1e-12)


def test_head_on_spheres_end_with_the_common_velocity():
    # totally inelastic (002 §7): momentum conserved, relative normal velocity 0 after the impact
    w = tb.World(gravity=(0.0, 0.0, 0.0), solver="gauss")
    m1, m2, v1, v2 = 1.0, 3.0, 2.0, -1.0
    a = w.add_body(tb.Sphere(0.2), position=(-1.0, 0.0, 0.0), linear_velocity=(v1, 0, 0), mass=m1)
    b = w.add_body(tb.Sphere(0.3), position=(1.0, 0.0, 0.0), linear_velocity=(v2, 0, 0), mass=m2)
    p0 = m1 * v1 + m2 * v2
    common = p0 / (m1 + m2)
    for _ in range(90):
        w.step(1 / 60)
        p = m1 * w.linear_velocity(a) + m2 * w.linear_velocity(b)
        assert np.allclose(p, (p0, 0, 0), atol=1e-9)
        assert w.position(b)[0] - w.position(a)[0] >= 0.5 - 1e-7        # never overlapping
    assert w.linear_velocity(a)[0] == pytest.approx(common, abs=1e-7)
    assert w.linear_velocity(b)[0] == pytest.approx(common, abs=1e-7)


def test_falling_sphere_lands_without_bounce_or_penetration():
    w = _world()
    w.add_body(tb.Plane(), fixed=True)
    s = w.add_body(tb.Sphere(0.3), position=(0.0, 0.0, 5.0))
    top = 0.0
    for i in range(120):
        w.step(1 / 60)
        assert w.counters["max_penetration"] <= 1e-7
        if i > 70:
            top = max(top, w.position(s)[2])
    assert top == pytest.approx(0.3, abs=1e-7)


def test_resting_box_stays_within_a_micrometre_for_two_seconds():
    w = _world()
    w.add_body(tb.Plane(), fixed=True)
    b = w.add_body(tb.Box(half_extents=(0.5, 0.3, 0.2)), position=(0.1, 0.2, 0.2))
    x0 = w.position(b).copy()
    for _ in range(120):
        w.step(1 / 60)
        assert np.linalg.norm(w.position(b) - x0) < 1e-6
    assert w.counters["qp_solved"] == 1 and w.counters["rows"] == 32      # 4 points x 8 cone edges


def test_resting_box_with_osqp():
    w = _world(qp_solver="osqp")
    w.add_body(tb.Plane(), fixed=True)
    b = w.add_body(tb.Box(half_extents=(0.5, 0.3, 0.2)), position=(0.0, 0.0, 0.2))
    for _ in range(60):
        w.step(1 / 60)
    assert np.linalg.norm(w.position(b) - (0, 0, 0.2)) < 1e-5


def test_contact_impulses_carry_the_weight():
    w = _world()
    w.add_body(tb.Plane(), fixed=True)
    b = w.add_body(tb.Box(half_extents=(0.5, 0.5, 0.5)), position=(0.0, 0.0, 0.5), mass=10.0)
    dt = 1 / 60
    for _ in range(10):
        w.step(dt)
    c = w.contact_store
    assert c.contact_normal_impulse[: c.count].sum() == pytest.approx(10.0 * G * dt, rel=1e-6)
    # four points under one box are statically indeterminate: the split may carry self-equilibrated
    # friction, but the resultant is zero and every point's impulse lies in its friction cone
    friction = c.contact_friction_impulse[: c.count]
    assert np.abs(friction.sum(axis=0)).max() < 1e-9
    bound = c.contact_friction[: c.count] * c.contact_normal_impulse[: c.count]
    assert np.all(np.linalg.norm(friction, axis=1) <= bound + 1e-12)
    assert w.position(b)[2] == pytest.approx(0.5, abs=1e-8)


def test_stack10_holds_under_gauss():
    # Catto's ten boxes, dropped from 3.5 cm gaps: they land (inelastic) and stand
    w = scenes.build("stack10", solver="gauss")
    ids = np.arange(1, 11)
    x0 = w.bodies.body_position[ids].copy()
    for _ in range(180):
        w.step(1 / 60)
        assert w.counters["max_penetration"] < 1e-6
    x = w.bodies.body_position[ids]
    assert np.abs(x[:, :2] - x0[:, :2]).max() < 1e-6
    # each box rests on the one below: z = 0.175 + 0.35 i
    assert np.allclose(x[:, 2], 0.175 + 0.35 * np.arange(10), atol=1e-6)


def _incline(theta, mu):
    w = _world()
    n = np.array([math.sin(theta), 0.0, math.cos(theta)])
    w.add_body(tb.Plane(normal=n), fixed=True, material=tb.Material(friction=mu))
    q = quat_from_axis_angle((0, 1, 0), theta)
    b = w.add_body(tb.Box(half_extents=(0.2, 0.2, 0.1)), position=n * 0.1, orientation=q, mass=1.0,
                   material=tb.Material(friction=mu))
    return w, b, np.array([math.cos(theta), 0.0, -math.sin(theta)])


@pytest.mark.parametrize("theta_deg, mu", [(20.0, 0.5), (30.0, 0.7)])
def test_box_sticks_below_the_friction_angle(theta_deg, mu):
    theta = math.radians(theta_deg)
    w, b, down = _incline(theta, mu)
    x0 = w.position(b).copy()
    w.run(2.0, 1 / 60)
    assert np.linalg.norm(w.position(b) - x0) < 1e-6


@pytest.mark.parametrize("theta_deg, mu", [(30.0, 0.2), (40.0, 0.5)])
def test_box_slides_with_the_coulomb_acceleration(theta_deg, mu):
    theta = math.radians(theta_deg)
    w, b, down = _incline(theta, mu)
    dt = 1 / 240
    w.run(0.25, dt)
    v1 = w.linear_velocity(b) @ down
    w.run(1.0, dt)
    v2 = w.linear_velocity(b) @ down
    assert v2 - v1 == pytest.approx(G * (math.sin(theta) - mu * math.cos(theta)), rel=0.03)


@pytest.mark.parametrize("edges, tolerance", [(8, 0.05), (4, 0.2)])
def test_sliding_between_cone_edges_is_bounded_by_the_inscribed_cone(edges, tolerance):
    # the slope falls along x = y: between the edges of the polyhedral cone, whose friction there is
    # between mu cos(pi / K) and mu, so the acceleration lies between the exact one and that bound
    theta, mu = math.radians(30.0), 0.2
    w = _world(friction_edges=edges)
    q = quat_from_axis_angle(np.array([-1.0, 1.0, 0.0]) / math.sqrt(2.0), theta)
    n = quat_to_matrix_py(q) @ np.array([0.0, 0.0, 1.0])
    w.add_body(tb.Plane(normal=n), fixed=True, material=tb.Material(friction=mu))
    b = w.add_body(tb.Box(half_extents=(0.2, 0.2, 0.1)), position=n * 0.1, orientation=q, mass=1.0,
                   material=tb.Material(friction=mu))
    down = np.array([0.0, 0.0, -1.0]) - (-n[2]) * n
    down /= np.linalg.norm(down)
    dt = 1 / 240
    w.run(0.25, dt)
    v1 = w.linear_velocity(b) @ down
    w.run(1.0, dt)
    a = w.linear_velocity(b) @ down - v1
    exact = G * (math.sin(theta) - mu * math.cos(theta))
    loosest = G * (math.sin(theta) - mu * math.cos(math.pi / edges) * math.cos(theta))
    assert exact * (1 - 1e-6) <= a <= loosest * (1 + 1e-6)
    assert a == pytest.approx(exact, rel=tolerance)


def test_add_joint_is_rejected_and_changes_nothing():
    w = _world()
    a = w.add_body(tb.Sphere(0.2), position=(0, 0, 1))
    b = w.add_body(tb.Sphere(0.2), position=(1, 0, 1))
    with pytest.raises(JointError, match="gauss"):
        w.add_joint(tb.Ball(a, b, anchor=(0.5, 0, 1)))
    assert w.joint_count == 0
    assert not w.capabilities.joints and not w.capabilities.restitution and not w.capabilities.sleeping


# ------------------------------------------------------------------------------------- stability (002 §1)
def test_box_resting_flat_is_stable():
    w = tb.World(solver="pgs")
    w.add_body(tb.Plane(), fixed=True)
    w.add_body(tb.Box(half_extents=(0.5, 0.5, 0.5)), position=(0, 0, 0.5), mass=2.0)
    r = tb.stability(w)
    assert r.stable and r.moving_bodies == []
    assert r.forces.sum(axis=0) == pytest.approx((0, 0, 2.0 * G), abs=1e-9)
    assert w.contact_store.count == 0            # the world itself is untouched


def test_box_tipping_over_an_edge_is_unstable_with_the_pivot_acceleration():
    # a unit cube standing on one edge, tilted 30 deg: its centre of mass is beyond the edge. With
    # friction enough to pivot, the first QP gives alpha = m g l sin(45 - 30 deg) / (I_cm + m l^2),
    # l = a / sqrt 2, I_cm = m a^2 / 6 (the paper's exact initial collapse)
    th = math.radians(30.0)
    w = _world()
    w.add_body(tb.Plane(), fixed=True, material=tb.Material(friction=0.8))
    q = (math.cos(th / 2), 0.0, math.sin(th / 2), 0.0)
    b = w.add_body(tb.Box(half_extents=(0.5, 0.5, 0.5)), position=(0, 0, 0.5 * (math.cos(th) + math.sin(th))),
                   orientation=q, mass=1.0, material=tb.Material(friction=0.8))
    r = tb.stability(w)
    assert not r.stable and r.moving_bodies == [b]
    lever = math.sqrt(0.5)
    alpha = G * lever * math.sin(math.radians(15.0)) / (1 / 6 + lever * lever)
    assert abs(r.angular_acceleration[b][1]) == pytest.approx(alpha, rel=1e-4)
    assert np.allclose(r.rotation[b], r.angular_acceleration[b] * r.probe_dt ** 2)
    assert np.linalg.norm(r.displacement[b]) > 0 and not r.displacement[0].any()
    # the simulation agrees: it falls over
    w.run(0.5, 1 / 60)
    assert np.linalg.norm(w.position(b)[:2]) > 0.05


@pytest.mark.parametrize("shift, stable", [(0.95, True), (1.05, False)])
def test_two_box_overhang_is_critical_at_the_harmonic_offsets(shift, stable):
    # closed form (002 Fig. 1): top brick reaching L/2 beyond the lower one, the lower L/4 beyond the
    # table puts each centre of mass exactly over its supporting edge; shift scales the offsets
    w = scenes.build("overhang", solver="gauss", count=2, shift=shift)
    r = tb.stability(w)
    assert r.stable is stable
    bricks = [2, 3]
    x0 = w.bodies.body_position[bricks].copy()
    w.run(1.0, 1 / 60)
    moved = np.abs(w.bodies.body_position[bricks] - x0).max()
    if stable:
        assert r.moving_bodies == []
        assert moved < 1e-6
    else:
        assert 3 in r.moving_bodies
        assert moved > 0.01


def test_bricks5x5_unstable_at_its_default_and_stable_as_columns():
    assert not tb.stability(scenes.build("bricks5x5", solver="gauss")).stable
    assert tb.stability(scenes.build("bricks5x5", solver="gauss", shift=0.0)).stable


def test_stability_rejects_bad_arguments():
    w = _world()
    with pytest.raises(tb.SettingsError, match="friction_edges"):
        tb.stability(w, friction_edges=2)
    with pytest.raises(tb.SettingsError, match="probe_dt"):
        tb.stability(w, probe_dt=-1.0)
    with pytest.raises(tb.SettingsError, match="world"):
        tb.stability(None)


@pytest.mark.parametrize("name, params", [("bricks5x5", {}), ("overhang", {"count": 4, "shift": 1.1})])
def test_initial_motion_names_the_bodies_the_simulation_moves(name, params):
    # the first least-constraint QP (002: "an exact description of initial infinitesimal collapse")
    # against 0.1 s of gauss: the same bodies leave their places, the others stay within 1e-6 m
    w = scenes.build(name, solver="gauss", **params)
    r = tb.stability(w)
    assert not r.stable
    x0 = w.bodies.body_position[: w.body_count].copy()
    for _ in range(6):
        w.step(1 / 60)
    moved = np.linalg.norm(w.bodies.body_position[: w.body_count] - x0, axis=1) > 1e-6
    assert np.nonzero(moved)[0].tolist() == r.moving_bodies


def test_cli_runs_a_scene_under_gauss(capsys):
    import json

    from tumble.cli import main

    assert main(["run", "overhang", "--solver", "gauss", "--seconds", "0.5", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["solver"] == "gauss" and res["standing"] is True and res["max_drift"] < 1e-6
