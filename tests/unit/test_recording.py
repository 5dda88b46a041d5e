"""Recordings (issue 5): what a run writes is the world's state at the recorded steps, the file round
trips exactly, and a malformed file is refused with an error naming the file and the array."""

from __future__ import annotations

import io
import json
import math
import zipfile
from pathlib import Path

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
    # pgs with contact rows only runs its substep loop as one kernel ("substeps"; issue 14's fixed cost),
    # the staged loop ("solve", ...) with w.profile_stages or joints
    assert names[-1] == "total" and ("solve" in names or "substeps" in names)
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


# ---------------------------------------------------------------------------------------------- issue 17
def _strict_loads(text: str):
    """json.loads that refuses the non-standard Infinity / NaN tokens (as a browser's JSON.parse does)."""
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


def _same(a: Recording, b: Recording) -> bool:
    return set(a.arrays) == set(b.arrays) and all(
        a.arrays[k].dtype == b.arrays[k].dtype and np.array_equal(a.arrays[k], b.arrays[k]) for k in a.arrays)


def test_truncated_files_raise_recording_error(recorded, tmp_path):
    _, _, _, good = recorded
    raw = good.read_bytes()
    n = len(raw)
    bad = tmp_path / "cut.npz"
    for cut in sorted({0, 1, 4, 30, 100, 1000, n // 4, n // 2, 3 * n // 4, n - 100, n - 22, n - 1}):
        bad.write_bytes(raw[:cut])
        with pytest.raises(tb.RecordingError) as e:
            Recording.load(bad)
        assert str(bad) in str(e.value), cut


def test_bit_flips_raise_recording_error_or_load_identical_data(recorded, tmp_path):
    # a flipped bit either breaks the file (RecordingError naming it: bad CRC, bad deflate stream, bad
    # header ...) or lands where it changes nothing read (a timestamp, an unused field): never another
    # exception (zlib.error, BadZipFile, EOFError, KeyError ...) and never silently different numbers
    rec, _, _, good = recorded
    raw = good.read_bytes()
    n = len(raw)
    rng = np.random.default_rng(17)
    offsets = sorted(set(np.linspace(0, n - 1, 80).astype(int).tolist()) | set(rng.integers(0, n, 80).tolist())
                     | set(range(0, 64, 3)) | set(range(n - 120, n, 5)))
    bad = tmp_path / "flip.npz"
    refused = 0
    for off in offsets:
        for bit in (0, 5):
            b = bytearray(raw)
            b[off] ^= 1 << bit
            bad.write_bytes(bytes(b))
            try:
                again = Recording.load(bad)
            except tb.RecordingError as e:
                assert str(bad) in str(e), (off, bit, str(e))
                refused += 1
            else:
                assert _same(again, rec) and again.meta == rec.meta, (off, bit)
    assert refused > len(offsets)  # most flips land in compressed data and are caught


@pytest.mark.parametrize("case, needle", [
    ("empty", "not a zip archive"),
    ("directory", "not a file"),
    ("pickle", "field frame_time"),
    ("member", "'notes.txt'"),
    ("meta number", "field meta has dtype"),
    ("meta list", "meta=[1, 2] is not a JSON object"),
    ("meta bad json", "field meta is not valid JSON"),
    ("every", "meta.every='x'"),
    ("stage_names", "meta.stage_names=5"),
    ("gravity", "meta.gravity="),
    ("settings", "meta.settings="),
    ("nonfinite path", "meta.nonfinite entry ['settings', 'nope']"),
    ("nonfinite value", "meta.nonfinite entry ['scene']"),
    ("npy header", "field frame_time has shape"),
])
def test_malformed_files_raise_recording_error(recorded, tmp_path, case, needle):
    _, _, _, good = recorded
    bad = tmp_path / "bad.npz"
    if case == "empty":
        bad.write_bytes(b"")
    elif case == "directory":
        bad.mkdir()
    elif case == "pickle":
        with np.load(good, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
        data["frame_time"] = np.array([object(), 1], dtype=object)[1:]
        np.savez(bad, **data)
    elif case == "member":
        with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
            for info in src.infolist():
                dst.writestr(info, src.read(info))
            dst.writestr("notes.txt", "hello")
    elif case.startswith("meta") or case in ("every", "stage_names", "gravity", "settings") \
            or case.startswith("nonfinite"):
        with np.load(good, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
        m = json.loads(str(data["meta"]))
        if case == "meta number":
            data["meta"] = np.array(5.0)
        elif case == "meta list":
            data["meta"] = np.array(json.dumps([1, 2]))
        elif case == "meta bad json":
            data["meta"] = np.array('{"format": ')
        else:
            m.update({"every": {"every": "x"}, "stage_names": {"stage_names": 5}, "gravity": {"gravity": [0, 0]},
                      "settings": {"settings": [1]}, "nonfinite path": {"nonfinite": [["settings", "nope"]]},
                      "nonfinite value": {"nonfinite": [["scene"]]}}[case])
            data["meta"] = np.array(json.dumps(m))
        np.savez(bad, **data)
    elif case == "npy header":
        # a member whose .npy header claims more elements than it holds (CRC intact): no huge allocation
        with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
            for info in src.infolist():
                body = src.read(info)
                if info.filename == "frame_time.npy":
                    f = io.BytesIO(body)
                    np.lib.format.read_magic(f)
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
                    head = io.BytesIO()
                    np.lib.format.write_array_header_1_0(head, {"descr": np.lib.format.dtype_to_descr(dtype),
                                                                "fortran_order": fortran, "shape": (10**12,)})
                    body = head.getvalue() + body[f.tell():]
                dst.writestr(info, body)
    with pytest.raises(tb.RecordingError) as e:
        Recording.load(bad)
    assert needle in str(e.value)
    assert str(bad) in str(e.value)


def _shock_recording(tmp_path) -> tuple[Recording, Path]:
    w = tb.World(solver="shock")
    assert w.settings.max_correction == math.inf
    w.add_body(tb.Plane(), fixed=True)
    w.add_body(tb.Box((0.2, 0.2, 0.2)), position=(0, 0, 0.5))
    path = tmp_path / "shock.npz"
    w.run(0.05, 1 / 60, record=str(path))
    return Recording.load(path), path


def test_non_finite_settings_are_written_as_strict_json(tmp_path):
    rec, path = _shock_recording(tmp_path)
    assert rec.meta["settings"]["max_correction"] == math.inf  # read back as a float
    with np.load(path, allow_pickle=False) as z:
        text = str(z["meta"])
    assert "Infinity" not in text and "NaN" not in text
    doc = _strict_loads(text)
    assert doc["settings"]["max_correction"] == "inf"
    assert doc["settings"]["spin_substep_angle"] == "inf"   # off by default (ShockSettings)
    # the settings, and their copy in the world description (Recording.world_at, tumble.resume)
    off = ("max_correction", "spin_substep_angle", "spin_substep_arc")
    assert sorted(doc["nonfinite"]) == [["settings", k] for k in off] + [
        ["world", "scene", "scene", "settings", k] for k in off]

    # any non-finite value anywhere in meta round trips, and the file stays strict JSON
    rec.meta["settings"].update(tolerance=math.nan, cfm=-math.inf, name="inf")  # a plain string "inf" stays one
    rec.meta["extra"] = {"list": [1.0, math.inf, np.float64(-math.inf)], "n": np.int64(3)}
    again = Recording.load(rec.save(tmp_path / "again.npz"))
    s = again.meta["settings"]
    assert s["max_correction"] == math.inf and s["cfm"] == -math.inf and math.isnan(s["tolerance"])
    assert s["name"] == "inf" and again.meta["extra"] == {"list": [1.0, math.inf, -math.inf], "n": 3}
    with np.load(tmp_path / "again.npz", allow_pickle=False) as z:
        _strict_loads(str(z["meta"]))


def test_legacy_recordings_with_infinity_tokens_still_load(tmp_path):
    # recordings written before the strict rule hold `Infinity` (Python's json extension): still readable
    rec, path = _shock_recording(tmp_path)
    with np.load(path, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    m = json.loads(str(data["meta"]))
    m.pop("nonfinite")
    m["settings"]["max_correction"] = math.inf
    data["meta"] = np.array(json.dumps(m))
    assert "Infinity" in str(data["meta"])
    legacy = tmp_path / "legacy.npz"
    np.savez_compressed(legacy, **data)
    assert Recording.load(legacy).meta["settings"]["max_correction"] == math.inf


def test_strict_json_helper():
    from tumble.recording import json_safe, strict_json

    text = strict_json({"a": math.inf, "b": [math.nan, -math.inf, 1.5], "c": np.float32(2.5), "d": np.arange(2),
                        "e": np.bool_(True), "f": None})
    doc = _strict_loads(text)
    assert doc == {"a": "inf", "b": ["nan", "-inf", 1.5], "c": 2.5, "d": [0, 1], "e": True, "f": None,
                   "nonfinite": [["a"], ["b", 0], ["b", 1]]}
    assert json_safe([math.inf]) == ["inf"] and strict_json({"x": 1}) == '{"x": 1}'
