"""The pgs fast paths for steps with no rows are bit for bit the stage calls one by one, under both
rotation integrators, with substeps and without, through free flight and the landing after it:
``stages.collide_or_fly`` (detection and the free flight in one kernel call, ``fused.detect_or_fly``)
and ``stages.free_flight`` (the substeps' velocity and position updates in one call) against
``World.profile_stages`` with the updates called one by one. Counters and merit history agree too."""

import pytest

import tumble as tb
import tumble._core.stages as stages


def _world(scene, rotation_integrator, profile_stages, settings):
    w = tb.World(rotation_integrator=rotation_integrator, **settings)
    w.profile_stages = profile_stages
    if scene == "ground":   # the plane's box pairs with a body from a little above it until the landing
        w.add_body(tb.Plane(), fixed=True)
        w.add_body(tb.Box((0.1, 0.4, 0.9)), position=(0, 0, 3), angular_velocity=(0.1, 5, 0.1),
                   linear_velocity=(1, 0, 2))
        w.add_body(tb.Sphere(0.2), position=(2, 0, 5), angular_velocity=(3, 1, 0))
    else:                   # no ground: no pair until the two meet (~step 40), none again once they part
        w.add_body(tb.Box((0.1, 0.4, 0.9)), position=(0, 0, 0), angular_velocity=(0.1, 5, 0.1),
                   linear_velocity=(1, 0, 0.1))
        w.add_body(tb.Sphere(0.2), position=(2, 0, 0), angular_velocity=(3, 1, 0), linear_velocity=(-1, 0, 0))
    return w


def _hash(scene, rotation_integrator, profile_stages=False, **settings):
    w = _world(scene, rotation_integrator, profile_stages, settings)
    seen, fused_steps = [], 0
    for k in range(200):
        if k % 3 == 0:      # user forces on some steps: the finish must clear them after each step
            w.apply_force(w.bodies.count - 1, (0.0, 0.5, 0.0), point=(0.0, 0.0, 0.1) if scene == "space" else None)
            w.apply_torque(0 if scene == "space" else 1, (0.0, 0.0, 0.01))
        w.step(1 / 60)
        seen.append((dict(w.counters), w.merit_history.tolist()))
        fused_steps += "free_step" in w.profile
    return w.state_hash(), seen, fused_steps


@pytest.mark.parametrize("settings", [{}, {"substeps": 1, "record_merit": True}, {"record_merit": True}],
                         ids=["defaults", "one_substep,record_merit", "record_merit"])
@pytest.mark.parametrize("rotation_integrator", ["midpoint", "euler"])
@pytest.mark.parametrize("scene", ["ground", "space"])
def test_free_flight_is_the_stage_calls_bit_for_bit(scene, rotation_integrator, settings, monkeypatch):
    state, seen, fused_steps = _hash(scene, rotation_integrator, **settings)
    # the fused call flies the steps without a pair (after the first, and after one with pairs), and
    # the run takes the other paths too: pairs without points, contacts
    pairs = sum(c["pairs"] > 0 for c, _ in seen)
    contacts = sum(c["contacts"] > 0 for c, _ in seen)
    assert 20 < fused_steps < 200 - pairs and 0 < contacts < pairs

    def one_by_one(core, h, substeps):
        for _ in range(substeps):
            stages.integrate_velocities(core, h)
            stages.integrate_positions(core, h)

    monkeypatch.setattr(stages, "free_flight", one_by_one)
    assert _hash(scene, rotation_integrator, True, **settings) == (state, seen, 0)
