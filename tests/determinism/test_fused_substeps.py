"""The pgs substep loop of a step with contact rows only runs in one kernel call
(``pgs.kernels.contact_substeps``, issue 14's fixed cost); with ``World.profile_stages`` the solver
calls the same kernels one by one, timing each stage. Both must give the same state bit for bit, the
same counters and merit history, under the settings that take the loop's other branches: manifold
blocks or scalar sweeps, the pseudo-velocity pass of deep overlaps, both rotation integrators,
restitution, record_merit and an early stop by tolerance."""

import numpy as np
import pytest

import tumble as tb
from tumble.errors import SettingsError


def _world(profile_stages, **settings):
    w = tb.World(solver="pgs", **settings)
    w.profile_stages = profile_stages
    w.add_body(tb.Plane(), fixed=True)
    for k in range(4):          # a column of boxes, the lowest 5 cm into the ground (a deep overlap)
        w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0.02 * k, 0.0, 0.45 + 1.0 * k),
                   orientation=(1.0, 0.01 * k, 0.0, 0.0), angular_velocity=(0.0, 0.3 * k, 0.0))
    w.add_body(tb.Sphere(0.3), position=(3.0, 0.0, 2.0), linear_velocity=(0.0, 0.0, -4.0),
               material=tb.Material(restitution=0.5))
    w.add_body(tb.Capsule(0.2, 0.6), position=(-3.0, 0.0, 1.0), angular_velocity=(2.0, 1.0, 0.0))
    return w


def _run(profile_stages, steps=90, **settings):
    w = _world(profile_stages, **settings)
    merits = []
    for _ in range(steps):
        w.step(1 / 60)
        merits.append(np.array(w.merit_history))
    counters = {k: w.counters[k] for k in ("iterations", "merit", "rows", "contacts")}
    return w.state_hash(), counters, merits, w.profile


CASES = [
    {},
    {"normal_block_solve": False},
    {"rotation_integrator": "euler"},
    {"record_merit": True},
    {"tolerance": 1e-3, "substeps": 3},
    {"split_speed": 0.05},
]


@pytest.mark.parametrize("settings", CASES, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "defaults")
def test_fused_substeps_are_the_stage_calls_bit_for_bit(settings):
    fused_hash, fused_counters, fused_merits, fused_profile = _run(False, **settings)
    staged_hash, staged_counters, staged_merits, staged_profile = _run(True, **settings)
    assert fused_hash == staged_hash
    assert fused_counters == staged_counters
    assert all(np.array_equal(a, b) for a, b in zip(fused_merits, staged_merits, strict=True))
    assert "substeps" in fused_profile and "substeps" not in staged_profile
    assert {"solve", "integrate", "relax"} <= set(staged_profile)


def test_profile_stages_rejects_a_non_bool():
    w = tb.World()
    with pytest.raises(SettingsError, match="profile_stages"):
        w.profile_stages = "yes"
    assert w.profile_stages is False
