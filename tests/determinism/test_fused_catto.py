"""The one-solve pgs step of a small world with contact rows only runs its stages after the collision in one
kernel call (``pgs.fused_step.contact_step``, issue 14's fixed cost); with ``World.profile_stages`` the
solver calls the same kernels one by one. Both must give the same state bit for bit and the same
counters, under the settings that take the fused step's branches: the pseudo-velocity pass of deep
overlaps with and without its energy guard, both rotation integrators, restitution, no relax sweeps,
an early stop by tolerance, fixed friction bounds, no warm start."""

import pytest

import tumble as tb

CATTO = tb.PGSSettings.preset("catto")


def _world(profile_stages, **settings):
    w = tb.World(solver="pgs", **{**CATTO, **settings})
    w.profile_stages = profile_stages
    w.add_body(tb.Plane(), fixed=True)
    for k in range(4):          # a column of boxes, the lowest 5 cm into the ground (a deep overlap)
        w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0.02 * k, 0.0, 0.45 + 1.0 * k),
                   orientation=(1.0, 0.01 * k, 0.0, 0.0), angular_velocity=(0.0, 0.3 * k, 0.0))
    w.add_body(tb.Sphere(0.3), position=(3.0, 0.0, 2.0), linear_velocity=(0.0, 0.0, -4.0),
               material=tb.Material(restitution=0.5))
    w.add_body(tb.Capsule(0.2, 0.6), position=(-3.0, 0.0, 1.0), angular_velocity=(2.0, 1.0, 0.0))
    # a thin board spinning fast: its rows' B is rebuilt before the relax sweeps (refresh_turned_rows)
    w.add_body(tb.Box((1.5, 0.1, 0.02)), position=(0.0, 3.0, 0.5), angular_velocity=(0.0, 0.0, 20.0))
    return w


def _run(profile_stages, steps=90, **settings):
    w = _world(profile_stages, **settings)
    fused = 0
    for _ in range(steps):
        w.step(1 / 60)
        fused += "contact_step" in w.profile
    counters = {k: w.counters[k] for k in ("iterations", "merit", "rows", "contacts", "max_penetration",
                                            "joint_rows")}
    return w.state_hash(), counters, fused


CASES = [
    {},
    {"split_speed": 0.05},
    {"split_speed": 0.05, "pushed_energy_guard": False},
    {"rotation_integrator": "euler"},
    {"relax_iterations": 0},
    {"tolerance": 1e-3},
    {"friction_model": "fixed"},
    {"warm_start": False},
]


@pytest.mark.parametrize("settings", CASES, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "catto")
def test_fused_contact_step_is_the_stage_calls_bit_for_bit(settings):
    fused_hash, fused_counters, fused_steps = _run(False, **settings)
    staged_hash, staged_counters, staged_steps = _run(True, **settings)
    assert fused_steps > 60 and staged_steps == 0     # the fused call ran (steps with contacts)
    assert fused_hash == staged_hash
    assert fused_counters == staged_counters
