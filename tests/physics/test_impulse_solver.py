"""Solver ``impulse`` (Schornbaum 004) in whole steps: the thesis' scenario-level claims (digest §5.2
tests 18-21, 29, 30) and closed-form physics."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

import tumble as tb
from tumble._core.math3d import quat_from_axis_angle, quat_to_matrix_py

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
    # This test found issue 17's determinism defect: with fastmath contraction the sum came out 0.03648
    # when the kernels were compiled in the running process and 0.03635 when loaded from the cache
    # (tests/determinism/test_cold_compile.py now guards that class); IEEE kernels give 0.03635 in both.
    w, b, th = _box_on_slope(30.0, 0.2)
    for _ in range(100):
        w.step(HP_DT)
    c = w.contacts()
    normal = float(c.impulse.sum())
    friction = float(np.linalg.norm(c.friction_impulse, axis=1).sum())
    mass = w.mass(b)
    assert normal == pytest.approx(mass * 10.0 * math.cos(th) * HP_DT, rel=0.01)
    # rel 1e-4: a contact resolved several times in a step gets kinetic impulses against its slip after
    # each, whose directions differ slightly, so |sum| <= mu sum j0 (measured 6e-6 below; Alg. 8's static
    # direction, kinetic_friction_direction="static": 1e-7)
    assert friction == pytest.approx(0.2 * normal, rel=1e-4)


def test_sliding_box_acceleration_closed_form():
    """Test 19: the distance slid in 1 s is g (sin th - mu cos th) / 2 = 1.634 m within 1 % (the digest's
    criterion is 2 %). Alg. 8 literally (kinetic impulse along the static solution's tangential impulse,
    ``kinetic_friction_direction="static"``) slid 1.750 m (+7 %, the box spun up to 0.35 rad/s and its
    corners' friction vectors no longer added up along the slope); opposing the slip: 1.633 m."""
    w, b, th = _box_on_slope(30.0, 0.2)
    x0 = w.position(b).copy()
    for _ in range(int(1.0 / HP_DT)):
        w.step(HP_DT)
    a = 10.0 * (math.sin(th) - 0.2 * math.cos(th))
    assert np.linalg.norm(w.position(b) - x0) == pytest.approx(0.5 * a, rel=0.01)


def test_thesis_literal_kinetic_direction_slides_too_far():
    """The thesis-literal option is kept and still measures +7 % (so the default's fix is what passes)."""
    w, b, th = _box_on_slope(30.0, 0.2)
    w.settings.update(kinetic_friction_direction="static")
    x0 = w.position(b).copy()
    for _ in range(int(1.0 / HP_DT)):
        w.step(HP_DT)
    a = 10.0 * (math.sin(th) - 0.2 * math.cos(th))
    assert np.linalg.norm(w.position(b) - x0) > 1.05 * 0.5 * a


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


@pytest.mark.parametrize("warm", [0.0, 0.9])
def test_parallel_batches_equal_serial_run(warm):
    """Test 30: batches are independent, so one thread and all threads give the same bits (also with
    warm-started impulses, which each batch applies and takes back on its own)."""
    def run(threads):
        old = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            w = tb.scenes.build("bullet_stacks", solver="impulse", stacks=2, warm_impulse_fraction=warm)
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


# ---------------------------------------------------------------- issue 18: only a held body sleeps
def _tilted_on_ground(shape, tilt_deg, **settings):
    """``shape`` tilted by ``tilt_deg`` about y, resting on its lowest point(s) on the ground, at rest."""
    w = tb.World(gravity=G, solver="impulse", **settings)
    w.add_body(tb.Plane(), fixed=True)
    q = quat_from_axis_angle((0, 1, 0), math.radians(tilt_deg))
    R = quat_to_matrix_py(q)
    if isinstance(shape, tb.Box):
        corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * shape.half_extents
        z = -(corners @ R.T)[:, 2].min()
    else:   # capsule: the lower end cap's sphere touches
        z = shape.radius + shape.half_length * R[2, 2]
    b = w.add_body(shape, position=(0.0, 0.0, z), orientation=tuple(q), mass=1.0)
    return w, b


def _tilt(w, b):
    return math.degrees(math.acos(min(1.0, abs(quat_to_matrix_py(w.orientation(b))[2, 2]))))


@pytest.mark.parametrize("shape, tilt", [
    (tb.Box((0.01, 0.05, 0.1)), 7.0),       # 2 x 10 x 20 cm domino, tipping angle atan(0.1) = 5.7 deg
    (tb.Box((0.01, 0.05, 0.1)), 15.0),
    (tb.Box((0.025, 0.1, 0.2)), 10.0),      # the example scenes' 5 x 20 x 40 cm domino, tips at 7.1 deg
    (tb.Box((0.1, 0.1, 0.1)), 50.0),        # a cube on an edge, past 45 deg
    (tb.Capsule(0.02, 0.1), 10.0),          # a capsule on its end cap: no tilt is held
])
def test_body_tilted_past_its_tipping_angle_falls_instead_of_sleeping(shape, tilt):
    """Measured before: every one of these fell asleep after the first step and stayed tilted forever
    (Alg. 5 alone: released at rest, its motion bound is 0). Its centre of mass is outside its support,
    so it must topple: lying down (tilt > 80 deg) within 2 s."""
    w, b = _tilted_on_ground(shape, tilt)
    w.step(HP_DT)
    assert not w.sleeping[b]
    w.run(2.0, HP_DT)
    assert _tilt(w, b) > 80.0


def test_thesis_literal_sleep_keeps_the_tilted_domino_up():
    """``sleep_requires_support=False`` is Alg. 5 alone: the 7 deg domino sleeps at once and stays tilted."""
    w, b = _tilted_on_ground(tb.Box((0.01, 0.05, 0.1)), 7.0, sleep_requires_support=False)
    w.step(HP_DT)
    assert w.sleeping[b]
    w.run(1.0, HP_DT)
    assert _tilt(w, b) == pytest.approx(7.0, abs=1e-6)


def test_tilt_below_the_tipping_angle_does_not_topple():
    """3 deg on a 2 x 20 cm domino (tips at 5.7 deg): gravity turns it back towards its base; it never
    passes 3 deg. (Measured: it then rocks about upright, |w| ~ 0.2 rad/s, tilt 0-2 deg for 8 s, and stays
    awake: the sequential corner impulses of the landing edge do not take the rocking out.)"""
    w, b = _tilted_on_ground(tb.Box((0.01, 0.05, 0.1)), 3.0)
    most = 0.0
    for _ in range(int(4.0 / HP_DT)):
        w.step(HP_DT)
        most = max(most, _tilt(w, b))
    assert most < 3.0 + 1e-6
    assert _tilt(w, b) < 2.5


@pytest.mark.parametrize("shape, z", [(tb.Sphere(0.05), 0.05), (tb.Capsule(0.02, 0.1), 0.02),
                                      (tb.Box((0.05, 0.05, 0.05)), 0.05)])
def test_held_bodies_still_fall_asleep(shape, z):
    """A sphere (one support point under its centre), a capsule lying down (two), a box on its face."""
    w = tb.World(gravity=G, solver="impulse")
    w.add_body(tb.Plane(), fixed=True)
    q = quat_from_axis_angle((0, 1, 0), math.pi / 2) if isinstance(shape, tb.Capsule) else (1.0, 0.0, 0.0, 0.0)
    b = w.add_body(shape, position=(0.0, 0.0, z), orientation=tuple(q), mass=1.0)
    w.run(0.25, HP_DT)
    assert w.sleeping[b]


def test_domino_chain_falls_with_sleeping_on():
    """12 dominoes 2 x 10 x 20 cm, 12 cm apart, the first tilted 10 deg: all fall (measured before: none;
    with sleeping off: all)."""
    w = tb.World(gravity=G, solver="impulse")
    w.add_body(tb.Plane(), fixed=True)
    ids = []
    for k in range(12):
        th = 10.0 if k == 0 else 0.0
        q = quat_from_axis_angle((0, 1, 0), math.radians(th))
        R = quat_to_matrix_py(q)
        corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * (0.01, 0.05, 0.1)
        ids.append(w.add_body(tb.Box((0.01, 0.05, 0.1)), position=(0.12 * k, 0.0, -(corners @ R.T)[:, 2].min()),
                              orientation=tuple(q), mass=0.1))
    w.run(3.0, HP_DT)
    assert all(_tilt(w, i) > 45.0 for i in ids)


@pytest.mark.xfail(strict=True, reason="open (issue 18): the capped resolution leaves the pile sinking (shock stages "
                   "stop at their caps with contacts closing) and the correction's moves run into the walls")
def test_pile_of_300_spheres_at_60_hz_comes_to_rest():
    """Issue 18, pile1000 under impulse at dt 1/60 (1000 spheres gain up to 2.1 kJ in one step, spheres
    leave the box over the 2 m walls): the same scene with 300 spheres (3-4 layers) after 150 steps
    still has KE 4.2 J and 52.7 mm of overlap, growing (11 / 33 / 53 mm at steps 50 / 100 / 150).

    Energy: the step of Alg. 6 moves positions with the old velocities before gravity acts, so a free body
    gains 1/2 m g^2 dt^2 of kinetic + potential energy per step (300 spheres at dt 1/60: 16.8 J, the
    "largest one-step gain" an earlier version of this test reported); the gain is measured above that
    term. So measured no step gains anything (the pumping is pile1000's: see correction_energy_budget).

    Measured causes (impulsepile, 2nd pass): (1) the resolution is capped before it converges: after
    step 120, 497 of ~750 contacts are still closing (worst 70 mm/s) and the layers sink at 0 / 26 / 74 mm/s;
    shock stages do not help at dt 1/60 (their caps at 60x or 600x their contacts instead of 6x: 179 left
    closing either way: sticking to frozen bodies that move differently has no solution); the same state solved
    without a cap converges after 44016 iterations (58x the contacts), none closing, and over 150 steps
    (max_iterations_factor=0) the overlap stops growing (21 mm, KE 1.5 J) at 4-5x the time per step.
    (2) The correction cannot undo what is left: at step 100, 243 of 281 penetrating contacts have no valid
    move, every failing move reaching a wall or the ground (96 % of them oblique: Eq. 2.3.6 passes a whole
    move on through every contact deeper than f_rem t_pen). correction_lift=True with the uncapped
    resolution: 13.7 mm (6 contacts within 30 deg of horizontal), KE 1.4 J."""
    w = tb.scenes.build("pile1000", solver="impulse", count=300)
    dyn = ~w.fixed
    m = w.masses[dyn]
    dt = 1 / 60
    free_fall = 0.5 * 9.81 ** 2 * dt ** 2 * float(m.sum())

    def total():
        return w.kinetic_energy() + 9.81 * float((m * w.positions[dyn, 2]).sum())

    gain = 0.0
    for _ in range(150):
        e0 = total()
        w.step(dt)
        gain = max(gain, total() - e0 - free_fall)
    assert w.kinetic_energy() < 1.0
    assert w.counters["penetration_before"] < 5e-3
    assert gain < 1.0


def _column_against_a_wall(seed_dir):
    """Three unit-mass spheres (r 0.1 m) stacked on the ground, the top one also touching a wall beside it,
    all moving down at g dt (240 Hz) as after the velocity update; resolution with no global iterations
    (max_iterations_factor 0.01: the cap is 0), so shock propagation does the whole solve. Returns the
    normal velocities of the four contacts after it and the bodies' velocities."""
    from tumble._core.solvers.impulse import driver

    pos = np.array([[0.0, 0, -1], [1.1, 0, 0.5], [0, 0, 0.1], [0, 0, 0.3], [0, 0, 0.5]])
    fixed = np.array([True, True, False, False, False])
    inv_mass = np.where(fixed, 0.0, 1.0)
    inv_inertia = np.zeros((5, 3, 3))
    inv_inertia[2:] = np.eye(3) / (0.4 * 0.1 ** 2)
    a, b = np.array([0, 2, 3, 4]), np.array([2, 3, 4, 1])
    normal = np.array([[0.0, 0, 1], [0, 0, 1], [0, 0, 1], [1, 0, 0]])
    point = np.array([[0.0, 0, 0], [0, 0, 0.2], [0, 0, 0.4], [0.1, 0, 0.5]])
    v = np.zeros((5, 3))
    v[2:, 2] = -9.81 / 240
    w = np.zeros((5, 3))
    bt = driver.batches(5, fixed, 4, a, b)
    driver.resolve(bt, 4, a, b, point, normal, np.zeros(4), np.full(4, 0.5), np.full(4, 0.5), pos, inv_mass,
                   inv_inertia, fixed, np.zeros(5, np.bool_), v, w, 83.4e-6, 0.0458, 0.01, True, 6.0, True, np.zeros(4),
                   np.zeros((4, 3)), False, 0, seed_dir=seed_dir)
    u = np.einsum("ij,ij->i", normal, v[b] - v[a])   # spheres' contacts: w x r has no normal part
    return u, v


def test_shock_layers_start_at_the_supports_not_at_a_wall():
    """Issue 18: Alg. 10 seeds its first stage with every body touching a fixed body, so a sphere high in a
    pile that touches a wall is frozen in stage 1 with the downward velocity it still has, and the body
    under it (a later stage, which must "move out of the way") is squeezed between two frozen bodies: the
    contact stays closing and the pile sinks (pile1000 at 240 Hz: 109 mm overlap and KE 112 J at 4 s).
    Seeded from the supports (``shock_layers="support"``, the default) the stages are the column's layers
    bottom-up. Measured: thesis-literal, the column ends moving down at 2.7-4.1 mm/s (ground contact closing
    at 2.7 mm/s); seeded, at 0.64 mm/s, all of it the ground contact's: stage 1 resolves the ground contact
    and the one to the (free) middle sphere in turn, the residual halving per round, and its cap (6 x 2
    contacts) stops it there (the residual that still lets piles creep, see the 300-sphere xfail)."""
    u, v = _column_against_a_wall(np.array([0.0, 0.0, -1.0]))
    assert u.min() > -1e-3 and np.abs(v[2:]).max() < 1e-3
    assert u[1:].min() > -83.4e-6                 # only the ground contact is left closing
    u_lit, v_lit = _column_against_a_wall(None)   # the thesis-literal layering
    assert u_lit.min() < -2e-3 and v_lit[2:, 2].min() < -4e-3


def test_shock_layers_setting():
    w = tb.World(solver="impulse")
    assert w.settings.shock_layers == "support"
    w.settings.update(shock_layers="fixed")
    with pytest.raises(tb.TumbleError, match="shock_layers"):
        w.settings.update(shock_layers="ground")


def _sphere_column(count, **settings):
    w = tb.World(gravity=(0.0, 0.0, -9.81), solver="impulse", sleep_threshold=0.0, **settings)
    w.add_body(tb.Plane(), fixed=True)
    for i in range(count):
        w.add_body(tb.Sphere(0.1), position=(0, 0, 0.0995 + 0.199 * i), mass=1.0)
    return w


def test_warm_impulses_cut_the_iterations_of_a_resting_column():
    """``warm_impulse_fraction`` (issue 18/19; 0, the default, is 004's cold start): a 5-sphere column at
    rest on the ground (240 Hz, sleeping off), 2 s. Each contact first takes 0.9 of last step's normal
    impulse; the loop then corrects the rest. Measured: 59.0 -> 45.1 resolution iterations per step; the
    column stays within t_pen of where it started and at rest."""
    runs = {}
    for f in (0.0, 0.9):
        w = _sphere_column(5, warm_impulse_fraction=f)
        z0 = w.positions[1:, 2].copy()
        its, ke = 0, 0.0
        for _ in range(480):
            w.step(HP_DT)
            its += w.counters["iterations"]
            ke = max(ke, w.kinetic_energy())
        assert np.abs(w.positions[1:, 2] - z0).max() < w.settings.penetration_threshold
        assert ke < 1e-6
        runs[f] = its / 480
    assert runs[0.9] < 0.8 * runs[0.0], runs


def test_warm_impulses_are_not_taken_from_an_impact():
    """A sphere (restitution 0) hitting the ground at 3 m/s takes a 3 N s impulse; warmed with it the
    next step, it would leave the ground at ~2.7 m/s. Only resting contacts (closing at most 2 |g| dt)
    are warmed, and a warm impulse the contact no longer needs is taken back, so it stays down."""
    w = tb.World(gravity=(0.0, 0.0, -9.81), solver="impulse", sleep_threshold=0.0, warm_impulse_fraction=0.9)
    w.add_body(tb.Plane(), fixed=True)
    s = w.add_body(tb.Sphere(0.1), position=(0, 0, 0.11), mass=1.0, linear_velocity=(0, 0, -3.0))
    up = 0.0
    for _ in range(240):
        w.step(HP_DT)
        up = max(up, w.linear_velocity(s)[2])
    assert up < 9.81 * HP_DT, up
    assert w.position(s)[2] < 0.1 + 1e-3


def test_warm_and_correction_settings():
    w = tb.World(solver="impulse")
    assert w.settings.warm_impulse_fraction == 0.0 and w.settings.correction_max_bodies == 0
    for bad in (-0.1, 1.5, True):
        with pytest.raises(tb.TumbleError, match="warm_impulse_fraction"):
            w.settings.update(warm_impulse_fraction=bad)
    for bad in (-1, 2.5, True):
        with pytest.raises(tb.TumbleError, match="correction_max_bodies"):
            w.settings.update(correction_max_bodies=bad)
