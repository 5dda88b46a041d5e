"""The shock and impulse steps of contact-free worlds in one kernel call (issue 14) are bit for bit
the stages called one by one (``World.profile_stages`` turns the fused calls off): shock's
``solvers/shock/fused.contact_free_step`` (a step starting with no contact, no joint and the last
final detection still valid) and impulse's ``solvers/impulse/fused.move_and_detect`` (the position
update and detection in one call, and with no pair the whole step). Checked through free flight, pairs
without points, landings, contacts and lift-off, user forces, a body moved by the user between steps
(shock's reuse key), sleeping bodies (impulse) and both rotation integrators; the counters agree too."""

import pytest

import tumble as tb


def _world(scene, solver, profile_stages, settings):
    gravity = (0.0, 0.0, 0.0) if scene == "still" else (0.0, 0.0, -9.81)
    w = tb.World(gravity=gravity, solver=solver, **settings)
    w.profile_stages = profile_stages
    if scene == "ground":   # the plane pairs with every body; the box lands and bounces, the sphere lands later
        w.add_body(tb.Plane(), fixed=True)
        w.add_body(tb.Box((0.1, 0.4, 0.9)), position=(0, 0, 3), angular_velocity=(0.1, 5, 0.1),
                   linear_velocity=(1, 0, 2))
        w.add_body(tb.Sphere(0.2), position=(2, 0, 5), angular_velocity=(3, 1, 0))
    elif scene == "space":  # no pair until the two meet (~step 40), none again once they part
        w.add_body(tb.Box((0.1, 0.4, 0.9)), position=(0, 0, 0), angular_velocity=(0.1, 5, 0.1),
                   linear_velocity=(1, 0, 0.1))
        w.add_body(tb.Sphere(0.2), position=(2, 0, 0), angular_velocity=(3, 1, 0), linear_velocity=(-1, 0, 0))
    else:                   # "still": no gravity, two bodies at rest apart and one drifting slowly (sleep)
        w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0, 0, 0))
        w.add_body(tb.Sphere(0.2), position=(3, 0, 0), linear_velocity=(1e-3, 0, 0))
        w.add_body(tb.Sphere(0.2), position=(0, 3, 0), fixed=True)
    return w


def _run(scene, solver, profile_stages=False, **settings):
    w = _world(scene, solver, profile_stages, settings)
    seen, fused_steps = [], 0
    for k in range(200):
        if k % 3 == 0 and scene != "still":   # user forces: the finish must clear them after each step
            w.apply_force(w.bodies.count - 1, (0.0, 0.5, 0.0))
            w.apply_torque(0 if scene == "space" else 1, (0.0, 0.0, 0.01))
        if k == 120:        # moved by the user: shock's reuse key must notice
            w.set_position(0, w.positions[0] + (0.0, 0.0, 1e-3))
        w.step(1 / 60)
        seen.append(dict(w.counters))
        fused_steps += "free_step" in w.profile
    return w.state_hash(), seen, fused_steps


CASES = [("shock", {}), ("shock", {"rotation_integrator": "euler"}), ("shock", {"speculative_contacts": False}),
         ("impulse", {}), ("impulse", {"rotation_integrator": "euler"}), ("impulse", {"sleep_requires_support": False})]


@pytest.mark.parametrize("solver,settings", CASES, ids=[f"{s}-{','.join(k) or 'defaults'}" for s, k in CASES])
@pytest.mark.parametrize("scene", ["ground", "space", "still"])
def test_fused_step_is_the_stage_calls_bit_for_bit(scene, solver, settings):
    state, seen, fused_steps = _run(scene, solver, **settings)
    assert fused_steps > 20       # the fused calls took part (impulse: every step; shock: the contact-free ones)
    assert _run(scene, solver, True, **settings) == (state, seen, 0)


@pytest.mark.parametrize("solver", ["shock", "impulse"])
def test_free_body_takes_one_call(solver):
    """A free body's step after the first is the fused call (shock's used to be ~20 kernel calls)."""
    w = tb.World(solver=solver)
    w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0, 0, 10))
    for _ in range(3):
        w.step(1 / 60)
        assert w.counters["contacts"] == 0
    assert set(w.profile) == {"free_step", "total"}
