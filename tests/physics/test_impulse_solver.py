"""Solver ``impulse`` (Schornbaum 004) in whole steps: the thesis' scenario-level claims (digest §5.2
tests 18-21, 29, 30) and closed-form physics."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

import tumble as tb
from tumble._core.math3d import quat_from_axis_angle

G = (0.0, 0.0, -10.0)
HP_DT = 1.0 / 240.0


def _box_on_ground(**settings):
    w = tb.World(gravity=G, solver="impulse", **settings)
    w.add_body(tb.Plane(), fixed=True, material=tb.materials.GRANITE)
    b = w.add_body(tb.Box((0.05, 0.05, 0.05)), position=(0, 0, 0.05), material=tb.materials.OAK)
    return w, b


def test_resting_box_never_moves_more_than_the_threshold_and_falls_asleep():
    """Test 18 (Fig. 16): positions first, then detection, so resolution cancels gravity's velocity
    in the same step; the box stays within |t_pen| and sleeps."""
    w, b = _box_on_ground()
    z0 = w.position(b)[2]
    slept_at = None
    for k in range(int(2.0 / HP_DT)):
        w.step(HP_DT)
        assert abs(w.position(b)[2] - z0) <= w.settings.penetration_threshold
        if not w.sleeping[b]:
            assert np.linalg.norm(w.linear_velocity(b)) < 1e-9
        elif slept_at is None:
            slept_at = k
    assert slept_at is not None and slept_at < 10, slept_at
    assert w.counters["iterations"] == 0  # asleep: nothing to resolve


def test_sleeping_body_wakes_when_its_state_is_set():
    """Wake rule 1."""
    w, b = _box_on_ground()
    for _ in range(20):
        w.step(HP_DT)
    assert w.sleeping[b]
    w.set_linear_velocity(b, (1.0, 0.0, 0.0))
    assert not w.sleeping[b]
    w.step(HP_DT)
    assert w.linear_velocity(b)[0] > 0.5


def test_wakes_when_its_support_is_removed():
    """Wake rule 5/6: the box under a sleeping box is teleported away; the upper one wakes and falls."""
    w = tb.World(gravity=G, solver="impulse")
    w.add_body(tb.Plane(), fixed=True)
    lower = w.add_body(tb.Box((0.05, 0.05, 0.05)), position=(0, 0, 0.05))
    upper = w.add_body(tb.Box((0.05, 0.05, 0.05)), position=(0, 0, 0.15))
    for _ in range(40):
        w.step(HP_DT)
    assert w.sleeping[lower] and w.sleeping[upper]
    w.set_position(lower, (5.0, 0.0, 0.05))
    z0 = w.position(upper)[2]
    for _ in range(30):
        w.step(HP_DT)
    assert not w.sleeping[upper] or w.position(upper)[2] < z0 - 0.04
    assert w.position(upper)[2] < z0 - 0.04


def _box_on_slope(angle_deg, mu):
    th = math.radians(angle_deg)
    q = quat_from_axis_angle((0, 1, 0), th)  # the box sits flat on the tilted plane
    normal = (math.sin(th), 0.0, math.cos(th))
    mat = tb.Material(friction=mu, restitution=0.0)
    w = tb.World(gravity=G, solver="impulse", gravity_damping=0.0)
    w.add_body(tb.Plane(normal=normal), fixed=True, material=mat)
    h = 0.05
    b = w.add_body(tb.Box((h, h, h)), position=(h * normal[0], 0.0, h * normal[2]), orientation=tuple(q),
                   material=mat)
    return w, b, th


def test_box_on_a_slope_stays_when_tan_theta_is_below_mu():
    """Test 19, static case: 15 degrees, mu 0.5: no drift over 2 s, and it falls asleep."""
    w, b, _ = _box_on_slope(15.0, 0.5)
    x0 = w.position(b).copy()
    for _ in range(int(2.0 / HP_DT)):
        w.step(HP_DT)
    assert np.linalg.norm(w.position(b) - x0) < 1e-3
    assert w.sleeping[b]


def test_sliding_box_feels_mu_times_the_normal_impulse():
    """Test 19, sliding case: 30 degrees, mu 0.2. Each step the contacts' friction impulses sum to
    mu x their normal impulses, and the normal impulses to m g cos(th) dt (Alg. 8's kinetic branch
    keeps the normal row exact on the cone)."""
    w, b, th = _box_on_slope(30.0, 0.2)
    for _ in range(100):
        w.step(HP_DT)
    c = w.contacts()
    assert c.impulse.sum() == pytest.approx(w.mass(b) * 10.0 * math.cos(th) * HP_DT, rel=0.01)
    assert np.linalg.norm(c.friction_impulse, axis=1).sum() == pytest.approx(0.2 * c.impulse.sum(), rel=1e-6)


@pytest.mark.xfail(strict=True, reason="measured: the box slides 1.750 m in 1 s instead of g (sin th - mu cos th) "
                   "/ 2 = 1.634 m (+7 %). Alg. 8's kinetic impulse points along the static solution's tangential "
                   "impulse, not against the slip, so with one corner contact resolved at a time the box spins up "
                   "(0.43 rad/s after 200 steps) and the friction vectors of its corners no longer add up along "
                   "the slope. pgs slides 1.641 m.")
def test_sliding_box_acceleration_closed_form():
    """Test 19: a = g (sin th - mu cos th) within 2 % (the digest's criterion)."""
    w, b, th = _box_on_slope(30.0, 0.2)
    x0 = w.position(b).copy()
    for _ in range(int(1.0 / HP_DT)):
        w.step(HP_DT)
    a = 10.0 * (math.sin(th) - 0.2 * math.cos(th))
    assert np.linalg.norm(w.position(b) - x0) == pytest.approx(0.5 * a, rel=0.02)


def test_ten_box_tower_stands_and_sleeps():
    """Test 20: a tower of 10 oak 10 cm boxes under the high-performance preset: drift < 1 mm, all asleep
    within 2 s."""
    w = tb.World(gravity=G, solver="impulse")
    w.add_body(tb.Plane(), fixed=True, material=tb.materials.GRANITE)
    ids = [w.add_body(tb.Box((0.05, 0.05, 0.05)), position=(0, 0, 0.05 + 0.1 * k), material=tb.materials.OAK)
           for k in range(10)]
    x0 = w.positions[ids].copy()
    for _ in range(int(2.0 / HP_DT)):
        w.step(HP_DT)
    assert np.abs(w.positions[ids] - x0).max() < 1e-3
    assert w.sleeping[ids].all()


@pytest.mark.parametrize("pulled", [1, 2])
def test_newtons_cradle_sends_out_as_many_balls_as_came_in(pulled):
    """Test 21 (§5.6): sequential impulses in closing-speed order give 1 in / 1 out (2 / 2); energy kept."""
    spec = tb.scenes.spec("newtons_cradle", pulled=pulled)
    w = spec.build(solver="impulse")
    ke0 = w.kinetic_energy()
    for _ in range(int(0.3 / spec.dt)):
        w.step()
    v = w.linear_velocities[:, 0]
    dyn = ~w.fixed
    moving = np.flatnonzero(dyn & (np.abs(v) > 1e-9))
    assert len(moving) == pulled and np.allclose(v[moving], 1.0, atol=1e-9)
    assert moving.max() == np.flatnonzero(dyn).max()  # the far end leaves
    assert w.kinetic_energy() == pytest.approx(ke0, rel=1e-9)


def test_spin_down_matches_the_closed_form():
    """A ball put down spinning slides until t* = 2 r w0 / (7 mu g), then rolls at 2/7 w0 (§5.6)."""
    spec = tb.scenes.spec("spin_down")
    p = spec.params
    w = spec.build(solver="impulse")
    ball = next(i for i, b in enumerate(spec.bodies) if not b.fixed)
    for _ in range(int(0.5 / spec.dt)):
        w.step()
    w0, r = p["omega0"], p["radius"]
    assert np.linalg.norm(w.angular_velocity(ball)) == pytest.approx(2.0 / 7.0 * w0, rel=1e-6)
    assert np.linalg.norm(w.linear_velocity(ball)) == pytest.approx(2.0 / 7.0 * w0 * r, rel=1e-6)


def test_parallel_batches_equal_serial_run():
    """Test 30: batches are independent, so one thread and all threads give the same bits."""
    def run(threads):
        old = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            w = tb.scenes.build("bullet_stacks", solver="impulse", stacks=2)
            for _ in range(int(1.2 / w.default_dt)):
                w.step()
            return w.positions.copy(), w.linear_velocities.copy(), w.counters["iterations"]
        finally:
            numba.set_num_threads(old)

    p1, v1, _ = run(1)
    p2, v2, _ = run(numba.config.NUMBA_NUM_THREADS)
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(v1, v2)


def test_presets_and_bad_settings():
    w = tb.World(solver="impulse", preset="high_accuracy", sleep_threshold=1e-3)
    s = w.settings
    assert s.penetration_threshold == 1e-4 and s.max_iterations_factor == 0 and not s.shock_propagation
    assert s.gravity_damping == 0.0 and s.sleep_threshold == 1e-3  # the keyword wins over the preset
    with pytest.raises(tb.SettingsError, match="preset='fast'"):
        tb.World(solver="impulse", preset="fast")
    with pytest.raises(tb.SettingsError, match="contact_order='random'"):
        tb.World(solver="impulse", contact_order="random")
    # a solver without joints (capabilities.joints False) rejects the joint when it is added, and
    # the world, unchanged, still steps
    w = tb.World(solver="impulse")
    a = w.add_body(tb.Sphere(0.1), position=(0, 0, 1))
    assert not w.capabilities.joints
    with pytest.raises(tb.JointError, match="solver 'impulse' has no joints"):
        w.add_joint(tb.Ball(None, a, anchor=(0, 0, 1.2)))
    assert w.joint_count == 0
    w.step(HP_DT)
    assert w.step_count == 1


def test_bodies_built_asleep_cost_nothing_until_touched():
    """``add_body(asleep=True)``: a stack built at rest is not integrated or resolved (zero iterations)
    until something hits it (wake rule 3), then behaves as any body; a sleeping body must be at rest."""
    w = tb.World(gravity=G, solver="impulse")
    w.add_body(tb.Plane(), fixed=True)
    boxes = [w.add_body(tb.Box((0.05, 0.05, 0.05)), position=(0, 0, 0.05 + 0.1 * k), asleep=True) for k in range(3)]
    for _ in range(10):
        w.step(HP_DT)
        assert w.counters["iterations"] == 0 and w.sleeping[boxes].all()
    ball = w.add_body(tb.Sphere(0.05), position=(0.0, 0.0, 0.4), linear_velocity=(0, 0, -2.0))
    woke = False
    for _ in range(30):
        w.step(HP_DT)
        woke |= not w.sleeping[boxes[-1]]
    assert woke  # the hit woke the top box (it may sleep again once all is still)
    assert w.position(ball)[2] > 0.3  # it landed on the stack, did not pass through
    with pytest.raises(tb.BodyError, match="asleep=True, but the body has a velocity"):
        w.add_body(tb.Sphere(0.1), position=(2, 0, 1), linear_velocity=(1, 0, 0), asleep=True)
    with pytest.raises(tb.BodyError, match="field asleep='yes'"):
        w.add_body(tb.Sphere(0.1), position=(2, 0, 1), asleep="yes")
    assert not tb.World(solver="pgs").sleeping.any()


def test_a_preset_named_for_a_scene_replaces_the_scenes_own_values():
    """The scenes set the HP restitution threshold; building with preset="high_accuracy" must give the
    HA value (the caller's settings go on top of the scene's), and an explicit keyword still wins."""
    w = tb.scenes.build("spin_down", solver="impulse", preset="high_accuracy")
    assert w.settings.restitution_threshold == tb.settings.IMPULSE_PRESETS["high_accuracy"]["restitution_threshold"]
    w = tb.scenes.build("spin_down", solver="impulse", preset="high_accuracy", restitution_threshold=0.02)
    assert w.settings.restitution_threshold == 0.02
