"""Recordings (issue 5): what a run writes is the world's state at the recorded steps, the file round
trips exactly, and a malformed file is refused with an error naming the file and the array."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

import tumble as tb
from tumble.recording import SCHEMA, Recording


def _world():
    w = tb.World()
    w.add_body(tb.Plane(), fixed=True, name="ground")
    w.add_body(tb.Box((0.2, 0.3, 0.1)), position=(0, 0, 0.5), name="box")
    w.add_body(tb.Sphere(0.15), position=(0.8, 0, 0.6), linear_velocity=(-1, 0, 0), name="ball")
    w.add_body(tb.ConvexHull([[0, 0, 0], [0.3, 0, 0], [0, 0.3, 0], [0, 0, 0.3]]), position=(-0.8, 0, 0.4))
    w.add_body(tb.Compound([(tb.Box((0.1, 0.1, 0.1)), (0, 0, 0), (1, 0, 0, 0)),
                            (tb.Capsule(0.05, 0.2), (0.2, 0, 0), (1, 0, 0, 0))]), position=(0, 0.9, 0.5))
    w.spawn(0.1, tb.Sphere(0.1), position=(0, 0, 2.0), name="late")
    return w


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A run recorded every 3 steps, and the state of a twin world at every step (the oracle)."""
    path = tmp_path_factory.mktemp("rec") / "run.npz"
    dt, n = 1 / 60, 20
    twin = _world()
    states = [(twin.time, twin.positions.copy(), twin.orientations.copy(), twin.linear_velocities.copy())]
    for _ in range(n):
        twin.step(dt)
        states.append((twin.time, twin.positions.copy(), twin.orientations.copy(), twin.linear_velocities.copy()))
    w = _world()
    summary = w.run(n * dt, dt, record=str(path), record_every=3)
    return Recording.load(summary["record"]), states, w, path


def test_frames_hold_the_state_of_the_recorded_steps(recorded):
    rec, states, w, _ = recorded
    assert list(rec.frame_step) == [0, 3, 6, 9, 12, 15, 18]
    for k, s in enumerate(rec.frame_step):
        t, pos, quat, vel = states[s]
        m = len(pos)
        assert rec.frame_body_count[k] == m
        assert rec.frame_time[k] == pytest.approx(t)
        np.testing.assert_array_equal(rec.frame_position[k, :m], pos)
        np.testing.assert_array_equal(rec.frame_orientation[k, :m], quat)
        np.testing.assert_array_equal(rec.frame_linear_velocity[k, :m], vel)
        # a body not yet spawned is a zero-padded identity pose
        assert np.all(rec.frame_position[k, m:] == 0) and np.all(rec.frame_orientation[k, m:, 0] == 1)
    assert rec.frame_body_count[0] == 5 and rec.frame_body_count[-1] == 6
    assert list(rec.body_name) == ["ground", "box", "ball", "", "", "late"]
    np.testing.assert_array_equal(rec.body_mass, w.masses)


def test_geometry_is_enough_to_draw_every_body(recorded):
    rec, _, w, _ = recorded
    # compound: two geoms of body 4; hull: one geom whose triangles close a tetrahedron
    assert list(rec.geom_body) == [0, 1, 2, 3, 4, 4, 5]
    assert list(rec.geom_type) == [0, 3, 1, 4, 3, 2, 1]
    np.testing.assert_allclose(rec.geom_size[1], [0.2, 0.3, 0.1])
    verts, tris = rec.hull(rec.geom_hull[3])
    assert verts.shape == (4, 3) and tris.shape == (4, 3)
    # closed surface with outward counter-clockwise triangles: the divergence theorem gives the volume
    a, b, c = verts[tris[:, 0]], verts[tris[:, 1]], verts[tris[:, 2]]
    volume = np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0
    assert volume == pytest.approx(0.3 ** 3 / 6.0)


def test_step_counters_cover_every_step(recorded):
    rec, states, w, _ = recorded
    assert rec.step_count == 20 and rec.frame_count == 7
    np.testing.assert_allclose(rec.step_time, [s[0] for s in states[1:]])
    assert rec.step_kinetic_energy[-1] == pytest.approx(w.kinetic_energy())
    assert rec.step_potential_energy[-1] == pytest.approx(w.potential_energy())
    names = rec.meta["stage_names"]
    assert names[-1] == "total" and "solve" in names
    parts = rec.step_ms[:, :-1].sum(axis=1)
    assert np.all(parts <= rec.step_ms[:, -1] + 1e-9)  # the stages are inside the step's total
    assert rec.meta["solver"] == "pgs" and rec.meta["every"] == 3 and rec.dt == pytest.approx(1 / 60)
    assert rec.meta["settings"]["iterations"] == w.settings.iterations
    # contacts of the last frame are the world's contacts after that step (step 18), in store order
    last = rec.contacts(rec.frame_count - 1)
    assert len(last["point"]) == rec.contact_count[-1] > 0
    assert np.all((last["body"] >= 0) & (last["body"] < 6) | (last["body"] == -1))


def test_round_trip_is_exact(recorded, tmp_path):
    rec, _, _, _ = recorded
    again = Recording.load(rec.save(tmp_path / "copy.npz"))
    assert again.meta == rec.meta
    assert set(again.arrays) == set(SCHEMA) == set(rec.arrays)
    for k in SCHEMA:
        assert again.arrays[k].dtype == rec.arrays[k].dtype, k
        np.testing.assert_array_equal(again.arrays[k], rec.arrays[k], err_msg=k)


def _rewrite(src, dst, drop=(), meta=None, **replace):
    with np.load(src, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files if k not in drop}
    if meta is not None:
        m = json.loads(str(data["meta"]))
        m.update(meta)
        data["meta"] = np.array(json.dumps(m))
    data.update(replace)
    np.savez(dst, **data)
    return dst


@pytest.mark.parametrize("case, needle", [
    ("missing", "no such recording file"),
    ("text", "not a zip archive"),
    ("nometa", "field meta is missing"),
    ("format", "meta.format='something-else'"),
    ("version", "meta.version=99 is not supported"),
    ("array", "field frame_position is missing"),
    ("shape", "field frame_orientation has shape"),
    ("nan", "field frame_position[2, 1, 2] = nan is not finite"),
    ("geom", "field geom_body[1] = 17 is outside"),
    ("quat", "field frame_orientation[1, 2] has norm"),
    ("extra", "field velocity is not part of format version 1"),
])
def test_bad_files_are_named(recorded, tmp_path, case, needle):
    _, _, _, good = recorded
    bad = tmp_path / "bad.npz"
    with np.load(good, allow_pickle=False) as z:
        pos, quat, gb = z["frame_position"].copy(), z["frame_orientation"].copy(), z["geom_body"].copy()
    if case == "missing":
        bad = tmp_path / "nothing.npz"
    elif case == "text":
        bad.write_text("hello")
    elif case == "nometa":
        _rewrite(good, bad, drop=("meta",))
    elif case == "format":
        _rewrite(good, bad, meta={"format": "something-else"})
    elif case == "version":
        _rewrite(good, bad, meta={"version": 99})
    elif case == "array":
        _rewrite(good, bad, drop=("frame_position",))
    elif case == "shape":
        _rewrite(good, bad, frame_orientation=quat[:, :, :3])
    elif case == "nan":
        pos[2, 1, 2] = np.nan
        _rewrite(good, bad, frame_position=pos)
    elif case == "geom":
        gb[1] = 17
        _rewrite(good, bad, geom_body=gb)
    elif case == "quat":
        quat[1, 2] *= 2.0
        _rewrite(good, bad, frame_orientation=quat)
    elif case == "extra":
        _rewrite(good, bad, velocity=np.zeros(3))
    with pytest.raises(tb.RecordingError) as e:
        Recording.load(bad)
    assert needle in str(e.value)
    assert str(bad) in str(e.value)
    assert zipfile  # (imported for the zip check the loader does)


def test_record_every_must_be_a_positive_integer():
    w = _world()
    with pytest.raises(tb.RecordingError, match="record_every=0"):
        w.run(0.1, 1 / 60, record="x.npz", record_every=0)
