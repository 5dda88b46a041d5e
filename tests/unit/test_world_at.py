"""Recording.world_at(frame) (issue 17): a run resumed from any frame of its recording.

Oracle: the frame's state is restored exactly, and stepping on from it is bit-identical to stepping
the original world on from the same step with the one thing a recording does not hold cleared (the
warm-start cache: contact and joint impulses)."""

import numpy as np
import pytest

import tumble as tb
import tumble.scenes as sc
from tumble.errors import RecordingError
from tumble.recording import Recording


def _clear_caches(w):
    w._core.contacts.count = 0
    w.joint_store.joint_impulse[:] = 0.0
    w._core.solver.state_changed()


@pytest.mark.parametrize("scene,solver", [("stack3_nocache", "pgs"), ("stack10", "shock"), ("stack10", "jacobi"),
                                          ("chain50", "pgs")])
def test_resumed_run_matches_the_original(tmp_path, scene, solver):
    w = sc.build(scene, solver=solver)
    w.run(30 * w.default_dt, record=str(tmp_path / "r.npz"))
    rec = Recording.load(tmp_path / "r.npz")
    k = 12
    resumed = rec.world_at(k)
    assert resumed.step_count == rec.frame_step[k] and resumed.time == rec.frame_time[k]
    assert np.array_equal(resumed.positions, rec.frame_position[k])
    assert np.array_equal(resumed.orientations, rec.frame_orientation[k])
    assert np.array_equal(resumed.linear_velocities, rec.frame_linear_velocity[k])
    original = sc.build(scene, solver=solver)
    for _ in range(k):
        original.step()
    assert np.array_equal(resumed.masses, original.masses)
    n = original.body_count
    assert np.array_equal(resumed.bodies.body_inertia_local[:n], original.bodies.body_inertia_local[:n])
    assert resumed.joint_count == original.joint_count
    _clear_caches(original)
    for _ in range(15):
        resumed.step()
        original.step()
    assert resumed.state_hash() == original.state_hash()


def test_spawns_removals_and_joints_at_any_frame(tmp_path):
    w = tb.World(solver="pgs")
    w.add_body(tb.Plane(), fixed=True, name="ground")
    top = w.add_body(tb.Box((0.1, 0.1, 0.1)), position=(0, 0, 2), fixed=True, name="hook")
    bob = w.add_body(tb.Sphere(0.1), position=(0.5, 0, 2), mass=2.5, name="bob")
    w.add_joint(tb.Distance(top, bob, anchor_a=(0, 0, 2), anchor_b=(0.5, 0, 2)))
    crate = w.add_body(tb.Box((0.2, 0.2, 0.2)), position=(2, 0, 0.2), name="crate")
    w.spawn(0.1, tb.Sphere(0.2), position=(-2, 0, 1.0), name="late")

    def remove(world):
        if world.step_count == 15:
            world.remove_body(crate)

    w.run(0.5, dt=1 / 60, record=str(tmp_path / "r.npz"), callback=remove)
    rec = Recording.load(tmp_path / "r.npz")

    early = rec.world_at(3)                      # t = 0.05 s: "late" not there yet, the crate is
    assert early.body_count == 4 and [t for t, _ in early.pending_spawns] == [pytest.approx(0.1)]
    assert not early.removed.any() and early.joint_active(0)
    assert early.mass(bob) == 2.5
    for _ in range(4):
        early.step(1 / 60)
    assert early.body_count == 5 and early.body_name(4) == "late"

    late = rec.world_at(-1)                      # the last frame: the crate is gone
    assert late.removed.tolist() == [False, False, False, True, False]
    np.testing.assert_array_equal(late.positions[[0, 1, 2, 4]], rec.frame_position[-1][[0, 1, 2, 4]])
    # the distance joint keeps its recorded length although it is added at another pose
    assert np.linalg.norm(late.position(bob) - late.position(top)) == pytest.approx(0.5, abs=2e-3)
    late.step(1 / 60)
    assert np.linalg.norm(late.position(bob) - late.position(top)) == pytest.approx(0.5, abs=2e-3)


def test_world_at_rejects_bad_frames_and_old_files(tmp_path):
    w = sc.build("stack3_nocache")
    w.run(3 * w.default_dt, record=str(tmp_path / "r.npz"))
    rec = Recording.load(tmp_path / "r.npz")
    for bad in (4, -5, "1", 1.0, True):
        with pytest.raises(RecordingError, match="frame"):
            rec.world_at(bad)
    del rec.meta["world"]
    rec.save(tmp_path / "old.npz")
    with pytest.raises(RecordingError, match="no world description"):
        Recording.load(tmp_path / "old.npz").world_at(0)
