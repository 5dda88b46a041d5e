"""save_state / restore_state / state_hash (issue 17): stepping after a restore is bit-identical to
stepping the original, under every solver, with warm-start caches, sleep counters, shock's layer
impulses and reuse key, joints, pending spawns and gravity schedules in play."""

import numpy as np
import pytest

import tumble as tb
from tumble._core.solvers import registry

#: (scene, parameters, solvers): contacts and warm starts everywhere; joints for the row solvers;
#: spawns and a cannonball in the tower; sleeping piles under impulse
#: (scene, parameters, solvers, steps before the save, steps after it)
CASES = [
    ("stack10", {}, registry.names(), 15, 20),
    ("bullet_stacks", {}, ["impulse", "pgs"], 15, 40),     # 275 bodies built asleep (impulse)
    ("chain50", {}, ["pgs", "shock"], 15, 20),
    # saved at t = 0.01 s: the block spawns at 0.0107 s and the cannonball at 0.4 s, both after the save
    ("tower_roof", {"courses": 6, "impact_time": 0.33, "cannon_time": 0.4, "cannon_distance": 0.5}, ["shock", "pgs"],
     1, 42),
    ("cage", {"balls": 30, "boxes": 30, "per_row": 5}, ["impulse"], 15, 20),
]


def _params():
    for name, params, solvers, pre, post in CASES:
        for solver in solvers:
            yield pytest.param(name, params, solver, pre, post, id=f"{name}-{solver}")


@pytest.mark.parametrize("name, params, solver, pre, post", _params())
def test_restore_then_step_is_bit_identical(name, params, solver, pre, post):
    w = tb.scenes.build(name, solver=solver, **params)
    dt = w.default_dt
    for _ in range(pre):
        w.step(dt)
    snap = w.save_state()
    h0 = w.state_hash()
    n0 = w.body_count
    for _ in range(post):
        w.step(dt)
    h_run = w.state_hash()
    pos = w.positions.copy()
    # the original goes on; a restore brings it back, and the same steps give the same bits
    w.restore_state(snap)
    assert w.state_hash() == h0 and w.step_count == pre and w.body_count == n0
    for _ in range(post):
        w.step(dt)
    assert w.state_hash() == h_run
    np.testing.assert_array_equal(w.positions, pos)
    # the snapshot is reusable, and a fresh world of the same solver takes it too
    other = tb.World(solver=solver)
    other.restore_state(snap)
    for _ in range(post):
        other.step(dt)
    assert other.state_hash() == h_run


def test_state_hash_tracks_the_dynamic_state():
    w = tb.scenes.build("stack10")
    h = w.state_hash()
    assert h == tb.scenes.build("stack10").state_hash() and len(h) == 64
    w.set_linear_velocity(3, (0.0, 1e-12, 0.0))
    assert w.state_hash() != h


def test_restore_rejects_another_solver_and_changes_nothing():
    w = tb.scenes.build("stack10", solver="pgs")
    snap = w.save_state()
    s = tb.scenes.build("stack10", solver="shock")
    s.step()
    h = s.state_hash()
    with pytest.raises(tb.SettingsError, match="solver 'pgs'"):
        s.restore_state(snap)
    with pytest.raises(tb.SettingsError, match="not a snapshot"):
        s.restore_state("state")
    assert s.state_hash() == h
    s.step()
