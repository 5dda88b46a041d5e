"""World.remove_body (issue 17): contacts, cached impulses, joints, exclusions and sleep state go with
the body; ids stay stable; the rest of the world goes on as if the body had never been there."""

import numpy as np
import pytest

import tumble as tb
from tumble.errors import BodyError, JointError

SOLVERS = [s["name"] for s in tb.solvers()]
DT = 1.0 / 60.0


def _column(solver, count=3, far_sphere=True):
    """Ground, a far-away sphere (id 1) when ``far_sphere``, then a column of unit boxes."""
    w = tb.World(solver=solver)
    w.add_body(tb.Plane(), fixed=True, name="ground")
    if far_sphere:
        w.add_body(tb.Sphere(0.3), position=(5.0, 0.0, 0.3), name="far")
    ids = [w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0.0, 0.0, 0.5 + 1.0 * k), name=f"box{k}")
           for k in range(count)]
    return w, ids


@pytest.mark.parametrize("solver", SOLVERS)
def test_column_falls_onto_the_ground_when_its_bottom_box_is_removed(solver):
    w, ids = _column(solver)
    for _ in range(30):
        w.step(DT)
    w.remove_body(ids[0])
    assert w.removed.tolist() == [False, False, True, False, False]
    # the others drop 1 m: free fall takes sqrt(2 / 9.81) = 0.45 s; 2 s is time enough to settle
    for _ in range(120):
        w.step(DT)
    z = w.positions[:, 2]
    assert abs(z[ids[1]] - 0.5) < 0.02 and abs(z[ids[2]] - 1.5) < 0.04, z
    assert np.all(np.isfinite(w.positions))
    c = w.contacts()
    assert not np.any(c.body_a == ids[0]) and not np.any(c.body_b == ids[0])


@pytest.mark.parametrize("solver", SOLVERS)
def test_removed_body_is_a_stable_tombstone(solver):
    w, ids = _column(solver)
    w.step(DT)
    n = w.body_count
    w.remove_body(ids[1])
    assert w.body_count == n                       # ids stay taken
    for call in (lambda: w.position(ids[1]), lambda: w.set_linear_velocity(ids[1], (1, 0, 0)),
                 lambda: w.apply_force(ids[1], (1, 0, 0)), lambda: w.remove_body(ids[1]),
                 lambda: w.disable_collision(ids[1], ids[0]), lambda: w.mass(ids[1])):
        with pytest.raises(BodyError, match=f"body {ids[1]} .*was removed"):
            call()
    new = w.add_body(tb.Sphere(0.1), position=(0, 3, 1))
    assert new == n                                # never reused
    assert w.kinetic_energy() >= 0.0 and w.masses[ids[1]] == 0.0
    w.step(DT)


@pytest.mark.parametrize("solver", SOLVERS)
def test_removing_an_untouched_body_changes_nothing_else(solver):
    """Removing the far sphere (it touches only the ground, away from the column) leaves a world whose
    column moves bit for bit as in a world built without the sphere."""
    a, ids_a = _column(solver)
    b, ids_b = _column(solver, far_sphere=False)
    a.remove_body(1)
    for _ in range(90):
        a.step(DT)
        b.step(DT)
    assert np.array_equal(a.positions[ids_a], b.positions[ids_b])
    assert np.array_equal(a.orientations[ids_a], b.orientations[ids_b])


def test_other_pairs_keep_their_warm_start():
    """The cache keeps every point that does not touch the removed body (pgs counts the hits)."""
    w, ids = _column("pgs")
    for _ in range(60):
        w.step(DT)
    before = w.counters["contacts"]
    far_points = int(np.sum((w.contacts().body_a == 1) | (w.contacts().body_b == 1)))
    top_points = int(np.sum((w.contacts().body_a == ids[2]) | (w.contacts().body_b == ids[2])))
    assert far_points > 0 and top_points > 0
    w.remove_body(ids[2])            # the top box: the points below it stay where they were
    w.step(DT)
    assert w.counters["contacts"] == before - top_points
    assert w.counters["cache_hits"] == w.counters["contacts"]


def test_joints_of_a_removed_body_go_with_it():
    w = tb.World(solver="pgs")
    a = w.add_body(tb.Box((0.1, 0.1, 0.1)), position=(0, 0, 2), fixed=True)
    b = w.add_body(tb.Box((0.1, 0.1, 0.1)), position=(0, 0, 1.7))
    c = w.add_body(tb.Box((0.1, 0.1, 0.1)), position=(0, 0, 1.4))
    j0 = w.add_joint(tb.Ball(a, b, anchor=(0, 0, 1.85)))
    j1 = w.add_joint(tb.Ball(b, c, anchor=(0, 0, 1.55)))
    w.disable_collision(a, c)
    w.disable_collision(b, c)
    w.step(DT)
    w.remove_body(b)
    assert not w.joint_active(j0) and not w.joint_active(j1)
    assert not w.collides(a, c)                   # exclusions of other pairs stay
    keys = w._core.joint_layout.excluded_keys     # none of the removed body's pairs is left
    assert not np.any(((keys >> 32) == b) | ((keys & 0xFFFFFFFF) == b))
    with pytest.raises(JointError, match="removed body"):
        w.add_joint(tb.Ball(a, b, anchor=(0, 0, 1.85)))
    z = w.position(c)[2]
    for _ in range(30):
        w.step(DT)
    # c is free now: it falls as a free body (0.5 s: 1.226 m, to the step scheme's first order)
    assert w.position(c)[2] < z - 1.0


def test_impulse_wakes_what_stood_on_the_removed_body():
    """004 §3.2 wake-up rule 4: a sleeping body whose support disappears wakes and falls."""
    w, ids = _column("impulse", far_sphere=False)
    for _ in range(240):
        w.step(1.0 / 240.0)
    assert w.sleeping[ids[1]] and w.sleeping[ids[2]]
    w.remove_body(ids[0])
    assert not w.sleeping[ids[1]]
    for _ in range(240):
        w.step(1.0 / 240.0)
    assert abs(w.position(ids[1])[2] - 0.5) < 0.02


@pytest.mark.parametrize("solver", SOLVERS)
def test_save_restore_spans_a_removal(solver):
    w, ids = _column(solver)
    for _ in range(10):
        w.step(DT)
    s = w.save_state()
    w.remove_body(ids[0])
    for _ in range(20):
        w.step(DT)
    h = w.state_hash()
    w.restore_state(s)
    assert not w.removed.any()
    w.remove_body(ids[0])
    for _ in range(20):
        w.step(DT)
    assert w.state_hash() == h


def test_a_recording_draws_a_removed_body_until_its_removal(tmp_path):
    from tumble.recording import Recording
    from tumble.viz.scene import SceneData

    w, ids = _column("pgs")

    def remove_at_20(world):
        if world.step_count == 20:
            world.remove_body(ids[2])

    w.run(40 * DT, DT, record=str(tmp_path / "r.npz"), callback=remove_at_20)
    rec = Recording.load(tmp_path / "r.npz")
    assert rec.body_removed_step.tolist() == [-1, -1, -1, -1, 21]
    assert np.sum(rec.geom_body == ids[2]) == 1 and rec.body_mass[ids[2]] == pytest.approx(1000.0)
    alive = rec.alive()
    steps = rec.frame_step
    assert alive[steps <= 20, ids[2]].all() and not alive[steps > 20, ids[2]].any()
    assert alive[:, ids[1]].all()
    scene = SceneData(rec)
    g = np.flatnonzero(rec.geom_body == ids[2])
    assert scene.geom_poses(20, g)[2].all() and not scene.geom_poses(21, g)[2].any()
