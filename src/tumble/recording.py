"""Recordings: a run's state every N steps and its per-step counters in one ``.npz`` file.

A recording holds enough to draw every body without the scene code (the geometry of every body,
its pose in every frame) and to plot where the run's time and error went (counters of every step).
``tumble render``, ``tumble view`` and ``tumble plot`` read nothing else.

Format (``FORMAT = "tumble-recording"``, ``VERSION = 1``); N bodies (the count at the end of the run),
G geometries, H hulls, F frames, C contact points over all frames, S steps, K timed stages. Every
array is plain NumPy (``np.load(..., allow_pickle=False)`` reads it); strings are unicode arrays.

* ``meta``: 0-d unicode array holding a JSON object: ``format``, ``version``, ``scene``, ``solver``,
  ``settings`` (the solver's settings as a dict), ``dt`` [s], ``every`` (steps per frame),
  ``gravity`` [m/s^2], ``stage_names`` (K names of ``step_ms``' columns), ``tumble_version``.
  The text is strict JSON (RFC 8259, which has no ``Infinity`` or ``NaN``): a non-finite float (a
  setting such as ``ShockSettings.max_correction = inf``) is written as the string ``"inf"``,
  ``"-inf"`` or ``"nan"``, and ``nonfinite`` lists where: one key path (a list of object keys and
  array indices) per such value, e.g. ``"nonfinite": [["settings", "max_correction"]]``. ``load``
  turns them back into floats and drops ``nonfinite``, so ``Recording.meta`` holds ``math.inf``.
  (Files written before this rule may hold the non-standard ``Infinity`` / ``NaN`` tokens; ``load``
  reads them too.) :func:`strict_json` is the encoder; the browser viewer sends its JSON the same way.
* bodies: ``body_mass`` (N,) [kg] (0 for fixed), ``body_fixed`` (N,) bool, ``body_name`` (N,) str,
  ``body_material`` (N,) str.
* geometry, in the body frame (the body origin is its centre of mass): ``geom_body`` (G,) int64,
  ``geom_type`` (G,) int64 (``tumble._core.types``: 0 plane, 1 sphere, 2 capsule, 3 box, 4 hull),
  ``geom_size`` (G, 3) [m] (sphere: radius; capsule: radius, half length along local z; box: half
  extents; plane: unused, its local +z is the normal), ``geom_local_position`` (G, 3) [m],
  ``geom_local_orientation`` (G, 4) (w, x, y, z), ``geom_hull`` (G,) int64 hull index or -1.
* hulls (centre-of-mass frame): ``hull_vertex_start`` / ``hull_vertex_count`` (H,) into
  ``hull_vertices`` (V, 3) [m]; ``hull_triangle_start`` / ``hull_triangle_count`` (H,) into
  ``hull_triangles`` (T, 3) int64, vertex indices local to the hull, counter-clockwise seen from outside.
* ``body_removed_step`` (N,) int64: a body removed by ``World.remove_body`` between steps k and k + 1
  has k + 1 here and is absent from the frames of step k + 1 on; -1 for the others (optional: files
  written before it read as all -1). :meth:`Recording.alive` combines it with ``frame_body_count``.
* frames: ``frame_time`` (F,) [s], ``frame_step`` (F,) int64, ``frame_body_count`` (F,) int64 (bodies
  spawned later are zero-padded before they exist), ``frame_position`` (F, N, 3) [m],
  ``frame_orientation`` (F, N, 4), ``frame_linear_velocity`` (F, N, 3) [m/s],
  ``frame_angular_velocity`` (F, N, 3) [rad/s], ``frame_sleeping`` (F, N) bool.
  Frame 0 is the state before the first step; frame k is the state after step ``frame_step[k]``.
* contacts of each frame (the points the last step solved): ``contact_start`` / ``contact_count``
  (F,) int64 into ``contact_body`` (C, 2) int64, ``contact_point`` (C, 3) [m], ``contact_normal``
  (C, 3) (from body a to body b), ``contact_depth`` (C,) [m], ``contact_impulse`` (C,) [N s]; float32.
* steps (every step, not only recorded ones): ``step_time`` (S,) [s] at the step's end,
  ``step_contacts``, ``step_iterations`` (S,) int64, ``step_merit``, ``step_max_penetration`` [m],
  ``step_kinetic_energy``, ``step_potential_energy`` [J] (S,) float64, ``step_ms`` (S, K) [ms] per
  stage (0 where a stage did not run in that step; the ``total`` column is the whole step).

* elastic bodies (optional: written for worlds with elastic bodies, read as none from other files); EB
  elastic bodies, EV elastic vertices, ET surface triangles: ``elastic_body_name`` (EB,) str,
  ``elastic_vertex_start`` / ``elastic_vertex_count`` (EB,) int64 into the vertex axis,
  ``elastic_triangles`` (ET, 3) int64 (outward surface triangles, indices into the vertex axis),
  ``elastic_triangle_body`` (ET,) int64 (the elastic body of each triangle),
  ``frame_elastic_vertex_count`` (F,) int64 (vertices that existed in the frame; the rest are zero),
  ``frame_elastic_position`` (F, EV, 3) [m], ``step_elastic_energy`` (S, 5) [J] (elastic, kinetic,
  potential, contact, dissipated so far: ``World.elastic_energies``), ``step_elastic_substeps`` (S,) int64
  (elastic integrator steps taken in the step).
  To resume (``Recording.world_at``; optional, zeros in older files): ``frame_elastic_velocity`` (F, EV, 3)
  [m/s], the floor springs ``frame_elastic_spring`` (F, EV) bool and ``frame_elastic_anchor`` (F, EV, 3) [m],
  ``frame_elastic_scalars`` (F, 3) (the RKF controller's next step [s], dissipated so far [J], max_step [s] or
  -1), and the springs between elastic bodies of each frame: ``frame_elastic_pair_start`` / ``_count`` (F,)
  into ``elastic_pair_kind`` (PS,) (0 vertex-face, 1 edge-edge), ``elastic_pair_index`` (PS, 4) vertex
  indices, ``elastic_pair_weight`` (PS, 4), ``elastic_pair_sign`` (PS,), ``elastic_pair_edge`` (PS, 2)
  (tumble.elastic.body_contact).

``Recording.load(path)`` checks all of this and raises :class:`RecordingError` naming the file, the
array and what is wrong, also for a file that is not a zip archive, is truncated or has corrupt bytes
(every member's CRC-32 is checked, so a flipped bit never loads as silently wrong numbers);
``Recording.save(path)`` writes it back unchanged (round trip).
"""

from __future__ import annotations

import io
import json
import math
import numbers
import struct
import zipfile
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from tumble.errors import RecordingError

FORMAT = "tumble-recording"
VERSION = 1

#: name -> (dtype kind, shape with symbolic dims) of every array of the format
SCHEMA: dict[str, tuple[str, tuple]] = {
    "body_mass": ("f", ("N",)),
    "body_fixed": ("b", ("N",)),
    "body_name": ("U", ("N",)),
    "body_material": ("U", ("N",)),
    "geom_body": ("i", ("G",)),
    "geom_type": ("i", ("G",)),
    "geom_size": ("f", ("G", 3)),
    "geom_local_position": ("f", ("G", 3)),
    "geom_local_orientation": ("f", ("G", 4)),
    "geom_hull": ("i", ("G",)),
    "hull_vertex_start": ("i", ("H",)),
    "hull_vertex_count": ("i", ("H",)),
    "hull_vertices": ("f", ("V", 3)),
    "hull_triangle_start": ("i", ("H",)),
    "hull_triangle_count": ("i", ("H",)),
    "hull_triangles": ("i", ("T", 3)),
    "frame_time": ("f", ("F",)),
    "frame_step": ("i", ("F",)),
    "frame_body_count": ("i", ("F",)),
    "frame_position": ("f", ("F", "N", 3)),
    "frame_orientation": ("f", ("F", "N", 4)),
    "frame_linear_velocity": ("f", ("F", "N", 3)),
    "frame_angular_velocity": ("f", ("F", "N", 3)),
    "frame_sleeping": ("b", ("F", "N")),
    "contact_start": ("i", ("F",)),
    "contact_count": ("i", ("F",)),
    "contact_body": ("i", ("C", 2)),
    "contact_point": ("f", ("C", 3)),
    "contact_normal": ("f", ("C", 3)),
    "contact_depth": ("f", ("C",)),
    "contact_impulse": ("f", ("C",)),
    "step_time": ("f", ("S",)),
    "step_contacts": ("i", ("S",)),
    "step_iterations": ("i", ("S",)),
    "step_merit": ("f", ("S",)),
    "step_max_penetration": ("f", ("S",)),
    "step_kinetic_energy": ("f", ("S",)),
    "step_potential_energy": ("f", ("S",)),
    "step_ms": ("f", ("S", "K")),
}

#: arrays a recording may lack (files written before they existed): name -> (kind, shape, fill of a row)
OPTIONAL_SCHEMA: dict[str, tuple[str, tuple, int]] = {
    "body_removed_step": ("i", ("N",), -1),
}
SCHEMA.update({k: v[:2] for k, v in OPTIONAL_SCHEMA.items()})
#: elastic-body arrays (optional; absent: no elastic bodies): name -> (kind, shape)
ELASTIC_SCHEMA: dict[str, tuple[str, tuple]] = {
    "elastic_body_name": ("U", ("EB",)),
    "elastic_vertex_start": ("i", ("EB",)),
    "elastic_vertex_count": ("i", ("EB",)),
    "elastic_triangles": ("i", ("ET", 3)),
    "elastic_triangle_body": ("i", ("ET",)),
    "frame_elastic_vertex_count": ("i", ("F",)),
    "frame_elastic_position": ("f", ("F", "EV", 3)),
    "step_elastic_energy": ("f", ("S", 5)),
    "step_elastic_substeps": ("i", ("S",)),
}
ELASTIC_ENERGY_COLUMNS = ("elastic", "kinetic", "potential", "contact", "dissipated")
SCHEMA.update(ELASTIC_SCHEMA)
#: what ``Recording.world_at`` needs to resume elastic bodies (optional: files written before it read as
#: zeros, and world_at then refuses their elastic frames); PS pair springs over all frames
ELASTIC_RESUME_SCHEMA: dict[str, tuple[str, tuple]] = {
    "frame_elastic_velocity": ("f", ("F", "EV", 3)),
    "frame_elastic_spring": ("b", ("F", "EV")),
    "frame_elastic_anchor": ("f", ("F", "EV", 3)),
    "frame_elastic_scalars": ("f", ("F", 3)),
    "frame_elastic_pair_start": ("i", ("F",)),
    "frame_elastic_pair_count": ("i", ("F",)),
    "elastic_pair_kind": ("i", ("PS",)),
    "elastic_pair_index": ("i", ("PS", 4)),
    "elastic_pair_weight": ("f", ("PS", 4)),
    "elastic_pair_sign": ("f", ("PS",)),
    "elastic_pair_edge": ("i", ("PS", 2)),
}
#: columns of frame_elastic_scalars: the RKF controller's next step [s], the dissipated energy so far [J], the
#: step cap max_step [s] (-1: none)
ELASTIC_SCALAR_COLUMNS = ("step", "dissipated", "max_step")
SCHEMA.update(ELASTIC_RESUME_SCHEMA)

META_KEYS = ("format", "version", "scene", "solver", "settings", "dt", "every", "gravity", "stage_names")
#: the meta key listing the key paths of non-finite floats written as strings (see the module docstring)
NONFINITE_KEY = "nonfinite"
_NONFINITE_TEXT = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


# ---------------------------------------------------------------------------------------------- strict JSON
def json_safe(obj, path: tuple = (), nonfinite: list | None = None):
    """``obj`` as plain JSON data that strict JSON can hold: dicts (keys as strings), lists, str, int,
    finite float, bool, None. A non-finite float becomes the string ``"inf"``, ``"-inf"`` or ``"nan"``
    and, when ``nonfinite`` is a list, its key path (a list) is appended to it. NumPy scalars and
    arrays become Python numbers and lists; anything else its ``str``."""
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, (numbers.Integral, np.integer)):
        return int(obj)
    if isinstance(obj, (numbers.Real, np.floating)):
        v = float(obj)
        if math.isfinite(v):
            return v
        if nonfinite is not None:
            nonfinite.append(list(path))
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(obj, dict):
        return {str(k): json_safe(v, path + (str(k),), nonfinite) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        obj = obj.tolist()
        if not isinstance(obj, list):
            return json_safe(obj, path, nonfinite)
    if isinstance(obj, (list, tuple)):
        return [json_safe(v, path + (i,), nonfinite) for i, v in enumerate(obj)]
    return str(obj)


def strict_json(obj, **kw) -> str:
    """``json.dumps`` of :func:`json_safe` (``obj``) with ``allow_nan=False``: text every JSON parser reads
    (a browser's ``JSON.parse`` included). A dict gets a ``nonfinite`` key listing the paths of the
    non-finite floats written as strings (only when there are any)."""
    paths: list = []
    data = json_safe(obj, (), paths)
    if paths and isinstance(data, dict):
        data[NONFINITE_KEY] = paths
    return json.dumps(data, allow_nan=False, **kw)


def _decode_nonfinite(meta: dict, where: str) -> dict:
    """Undo :func:`strict_json` on a loaded meta: the strings at the ``nonfinite`` paths back to floats."""
    paths = meta.pop(NONFINITE_KEY, [])
    if not isinstance(paths, list):
        raise RecordingError(f"{where}: field meta.{NONFINITE_KEY}={paths!r} must be a list of key paths")
    for path in paths:
        node, ok = meta, isinstance(path, list) and len(path) > 0
        for key in path[:-1] if ok else ():
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                ok = False
                break
        if ok:
            key = path[-1]
            try:
                ok = node[key] in _NONFINITE_TEXT
            except (KeyError, IndexError, TypeError):
                ok = False
        if not ok:
            raise RecordingError(f"{where}: field meta.{NONFINITE_KEY} entry {path!r} does not lead to one of "
                                 f"'inf', '-inf', 'nan'")
        node[key] = _NONFINITE_TEXT[node[key]]
    return meta


def hull_triangles(data) -> np.ndarray:
    """Fan triangulation (T, 3) of a hull's polygon faces (``HullData``), counter-clockwise outside."""
    tris = []
    for f in range(len(data.face_vert_count)):
        s, c = int(data.face_vert_start[f]), int(data.face_vert_count[f])
        v = data.face_verts[s:s + c]
        tris.extend((v[0], v[k], v[k + 1]) for k in range(1, c - 1))
    return np.array(tris, dtype=np.int64).reshape(-1, 3)


@dataclass
class Recording:
    """A loaded (or just recorded) run: ``meta`` (dict) and the arrays of the format as attributes."""

    meta: dict
    arrays: dict

    def __getattr__(self, name):
        arrays = self.__dict__.get("arrays")
        if arrays is not None and name in arrays:
            return arrays[name]
        raise AttributeError(f"Recording has no field {name!r}")

    # ---------------------------------------------------------------- convenience
    @property
    def elastic_body_count(self) -> int:
        """Elastic bodies in the recording (0 for files without the elastic arrays)."""
        return len(self.arrays.get("elastic_vertex_start", ()))

    def elastic_mesh(self, frame: int, body: int) -> tuple[np.ndarray, np.ndarray]:
        """Elastic body ``body`` in frame ``frame``: vertices (n, 3) [m] and its outward surface triangles
        (k, 3), indices into those vertices."""
        a = self.arrays
        start, count = int(a["elastic_vertex_start"][body]), int(a["elastic_vertex_count"][body])
        tris = a["elastic_triangles"][a["elastic_triangle_body"] == body] - start
        return a["frame_elastic_position"][frame, start: start + count], tris

    @property
    def scene(self) -> str:
        return self.meta["scene"]

    @property
    def solver(self) -> str:
        return self.meta["solver"]

    @property
    def dt(self) -> float:
        return float(self.meta["dt"])

    @property
    def frame_count(self) -> int:
        return int(self.arrays["frame_time"].shape[0])

    @property
    def body_count(self) -> int:
        return int(self.arrays["body_mass"].shape[0])

    @property
    def step_count(self) -> int:
        return int(self.arrays["step_time"].shape[0])

    def world_at(self, frame: int, solver: str | None = None, **settings):
        """A new ``World`` in the state of ``frame``, ready to step on: the bodies present then (with
        their shapes, materials, masses, poses, velocities), the joints active then, gravity and its
        schedule, the settings, time and step count; bodies spawned later are queued again. Solver
        caches (warm-start impulses, sleep counters) are not in a recording and start empty, so the
        continuation is close to the original run, not bit-identical (``World.save_state`` is exact).
        ``solver``/``settings`` override the recorded ones. See ``tumble.resume``."""
        from tumble.resume import world_at

        return world_at(self, frame, solver, settings)

    def alive(self) -> np.ndarray:
        """(F, N) bool: which bodies are in the world in each frame (spawned and not removed)."""
        return alive_mask(self.arrays)

    def stage_ms(self, stage: str) -> np.ndarray:
        """(S,) [ms] spent in ``stage`` in every step."""
        names = self.meta["stage_names"]
        if stage not in names:
            raise RecordingError(f"recording has no stage {stage!r}; stages: {names}")
        return self.arrays["step_ms"][:, names.index(stage)]

    def contacts(self, frame: int) -> dict:
        """The contact points of ``frame``: body (c, 2), point, normal (c, 3), depth, impulse (c,)."""
        s = int(self.arrays["contact_start"][frame])
        c = int(self.arrays["contact_count"][frame])
        return {k: self.arrays[f"contact_{k}"][s:s + c] for k in ("body", "point", "normal", "depth", "impulse")}

    def hull(self, h: int) -> tuple[np.ndarray, np.ndarray]:
        """Vertices (v, 3) and triangles (t, 3) of hull ``h``."""
        a = self.arrays
        vs, vc = int(a["hull_vertex_start"][h]), int(a["hull_vertex_count"][h])
        ts, tc = int(a["hull_triangle_start"][h]), int(a["hull_triangle_count"][h])
        return a["hull_vertices"][vs:vs + vc], a["hull_triangles"][ts:ts + tc]

    # ---------------------------------------------------------------- file I/O
    def save(self, path) -> Path:
        """Write the recording to ``path`` (.npz, compressed)."""
        if NONFINITE_KEY in self.meta:
            raise RecordingError(f"{path}: field meta.{NONFINITE_KEY} is reserved (the file format's list of "
                                 "non-finite values); rename it")
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_suffix(path.suffix + ".npz") if path.suffix else path.with_suffix(".npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, meta=np.array(strict_json(self.meta)), **self.arrays)
        return path

    @classmethod
    def load(cls, path) -> Recording:
        """Read and validate a recording; :class:`RecordingError` names the file and what is wrong."""
        path = Path(path)
        where = str(path)
        if not path.exists():
            raise RecordingError(f"{where}: no such recording file")
        if not path.is_file():
            raise RecordingError(f"{where}: not a tumble recording (.npz): not a file")
        if not zipfile.is_zipfile(path):
            raise RecordingError(f"{where}: not a tumble recording (.npz): the file is not a zip archive")
        data = _read_npz(path, where)
        if "meta" not in data:
            raise RecordingError(f"{where}: field meta is missing: not a tumble recording")
        m = data.pop("meta")
        if m.dtype.kind != "U" or m.ndim != 0:
            raise RecordingError(f"{where}: field meta has dtype {m.dtype} and shape {m.shape}, expected one "
                                 "string (0-d str array) of JSON")
        try:
            meta = json.loads(str(m))
        except (json.JSONDecodeError, RecursionError) as e:
            raise RecordingError(f"{where}: field meta is not valid JSON ({e})") from None
        if isinstance(meta, dict):
            meta = _decode_nonfinite(meta, where)
        rec = cls(meta, data)
        try:
            validate(rec, where)
        except (TypeError, ValueError, IndexError, KeyError, OverflowError) as e:  # RecordingError passes through
            if isinstance(e, RecordingError):
                raise
            raise RecordingError(f"{where}: malformed recording ({type(e).__name__}: {e})") from None
        return rec


#: what reading a damaged zip / .npy raises (zlib: corrupt deflate stream; BadZipFile: bad CRC or header;
#: EOFError: truncated member; NotImplementedError: a flipped compression method; RuntimeError: a
#: flipped "encrypted" flag; ValueError: a bad .npy header; ...)
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError, IndexError, TypeError,
                NotImplementedError, RuntimeError, struct.error, OverflowError, UnicodeDecodeError, MemoryError)


def _read_npz(path: Path, where: str) -> dict:
    """Every array of the .npz ``path``; each member is read whole first, which checks its CRC-32."""
    data: dict[str, np.ndarray] = {}
    member = None
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                member = info.filename
                if not member.endswith(".npy"):
                    raise RecordingError(f"{where}: member {member!r} of the archive is not a NumPy array "
                                         "(.npy): not a tumble recording")
                key = member[:-4]
                if key in data:
                    raise RecordingError(f"{where}: field {key} is stored twice in the archive")
                data[key] = _read_npy(zf.read(info), where, key)
    except RecordingError:
        raise
    except _READ_ERRORS as e:
        what = f"field {member[:-4] if member.endswith('.npy') else member}" if member else "the zip directory"
        raise RecordingError(f"{where}: the file is corrupt or truncated: cannot read {what} "
                             f"({type(e).__name__}: {e})") from None
    return data


def _read_npy(raw: bytes, where: str, key: str) -> np.ndarray:
    """One .npy member's array; the header must describe exactly the bytes that follow it."""
    f = io.BytesIO(raw)
    version = np.lib.format.read_magic(f)
    if version in ((1, 0), (2, 0)):
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _fortran, dtype = read_header(f)
        if dtype.hasobject:
            raise RecordingError(f"{where}: field {key} holds Python objects (dtype {dtype}); a recording holds "
                                 "plain arrays only")
        need = math.prod(shape) * dtype.itemsize
        have = len(raw) - f.tell()
        if need != have:
            raise RecordingError(f"{where}: the file is corrupt: field {key} has shape {shape} ({need} bytes of "
                                 f"{dtype}) but {have} bytes of data")
    f.seek(0)
    return np.lib.format.read_array(f, allow_pickle=False)


def validate(rec: Recording, where: str = "recording") -> None:
    """Check a recording's meta, array names, dtypes, shapes, index ranges and finiteness."""
    meta = rec.meta
    if not isinstance(meta, dict):
        raise RecordingError(f"{where}: field meta={meta!r} is not a JSON object")
    if meta.get("format") != FORMAT:
        raise RecordingError(f"{where}: field meta.format={meta.get('format')!r} is not {FORMAT!r}")
    if meta.get("version") != VERSION:
        raise RecordingError(f"{where}: field meta.version={meta.get('version')!r} is not supported "
                             f"(this tumble reads version {VERSION})")
    for k in META_KEYS:
        if k not in meta:
            raise RecordingError(f"{where}: field meta.{k} is missing")
    dt = meta["dt"]
    if isinstance(dt, bool) or not isinstance(dt, (int, float)) or not math.isfinite(dt) or dt <= 0:
        raise RecordingError(f"{where}: field meta.dt={dt!r} must be a finite number > 0 [s]")
    every = meta["every"]
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise RecordingError(f"{where}: field meta.every={every!r} must be an integer >= 1")
    for k in ("scene", "solver"):
        if not isinstance(meta[k], str):
            raise RecordingError(f"{where}: field meta.{k}={meta[k]!r} must be a string")
    if not isinstance(meta["settings"], dict):
        raise RecordingError(f"{where}: field meta.settings={meta['settings']!r} must be a JSON object")
    g = meta["gravity"]
    if not (isinstance(g, list) and len(g) == 3 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                         and math.isfinite(x) for x in g)):
        raise RecordingError(f"{where}: field meta.gravity={g!r} must be 3 finite numbers [m/s^2]")
    names = meta["stage_names"]
    if not (isinstance(names, list) and all(isinstance(x, str) for x in names)):
        raise RecordingError(f"{where}: field meta.stage_names={names!r} must be a list of strings")
    a = rec.arrays
    if "body_mass" in a:
        for k, (_kind, shape, fill) in OPTIONAL_SCHEMA.items():
            if k not in a:
                a[k] = np.full(a["body_mass"].shape[:1] + tuple(shape[1:]), fill, dtype=np.int64)
    if "frame_time" in a and "step_time" in a and not any(k in a for k in ELASTIC_SCHEMA):
        sizes = {"F": len(a["frame_time"]), "S": len(a["step_time"])}
        for k, (kind, shape) in ELASTIC_SCHEMA.items():
            dtype = {"f": np.float64, "i": np.int64, "U": "U1"}[kind]
            a[k] = np.zeros(tuple(d if isinstance(d, int) else sizes.get(d, 0) for d in shape), dtype=dtype)
    if "frame_time" in a and "frame_elastic_position" in a and not any(k in a for k in ELASTIC_RESUME_SCHEMA):
        sizes = {"F": len(a["frame_time"]), "EV": a["frame_elastic_position"].shape[1], "PS": 0}
        for k, (kind, shape) in ELASTIC_RESUME_SCHEMA.items():
            dtype = {"f": np.float64, "i": np.int64, "b": np.bool_}[kind]
            a[k] = np.zeros(tuple(d if isinstance(d, int) else sizes[d] for d in shape), dtype=dtype)
    missing = [k for k in SCHEMA if k not in a]
    if missing:
        raise RecordingError(f"{where}: field {missing[0]} is missing ({len(missing)} arrays missing)")
    unknown = [k for k in a if k not in SCHEMA]
    if unknown:
        raise RecordingError(f"{where}: field {unknown[0]} is not part of format version {VERSION}")
    dims: dict[str, int] = {"K": len(meta["stage_names"])}
    for name, (kind, shape) in SCHEMA.items():
        x = a[name]
        ok_kind = {"f": "f", "i": "iu", "b": "b", "U": "U"}[kind]
        if x.dtype.kind not in ok_kind:
            raise RecordingError(f"{where}: field {name} has dtype {x.dtype}, expected "
                                 f"{ {'f': 'float', 'i': 'integer', 'b': 'bool', 'U': 'str'}[kind]}")
        if x.ndim != len(shape):
            raise RecordingError(f"{where}: field {name} has shape {x.shape}, expected {len(shape)} dimensions "
                                 f"({', '.join(map(str, shape))})")
        for axis, d in enumerate(shape):
            n = x.shape[axis]
            if isinstance(d, int):
                if n != d:
                    raise RecordingError(f"{where}: field {name} has shape {x.shape}, axis {axis} must be {d}")
            elif dims.setdefault(d, n) != n:
                raise RecordingError(f"{where}: field {name} has shape {x.shape}: its {d} = {n} disagrees with "
                                     f"{dims[d]} in the other arrays")
        if kind == "f" and not np.all(np.isfinite(x)):
            bad = np.argwhere(~np.isfinite(x))[0]
            raise RecordingError(f"{where}: field {name}{bad.tolist()} = {x[tuple(bad)]} is not finite")
    N, F = dims["N"], dims["F"]
    if F == 0:
        raise RecordingError(f"{where}: the recording has no frames")
    _in_range(where, "geom_body", a["geom_body"], 0, N)
    _in_range(where, "geom_type", a["geom_type"], 0, 5)
    _in_range(where, "geom_hull", a["geom_hull"], -1, dims["H"])
    hull_geoms = a["geom_type"] == 4
    if np.any(a["geom_hull"][hull_geoms] < 0):
        g = int(np.argmax(hull_geoms & (a["geom_hull"] < 0)))
        raise RecordingError(f"{where}: field geom_hull[{g}] = -1, but geom {g} is a hull")
    for kind, total in (("vertex", dims["V"]), ("triangle", dims["T"])):
        s, c = a[f"hull_{kind}_start"], a[f"hull_{kind}_count"]
        if np.any(s < 0) or np.any(c < 0) or np.any(s + c > total):
            h = int(np.argmax((s < 0) | (c < 0) | (s + c > total)))
            raise RecordingError(f"{where}: field hull_{kind}_start/count[{h}] = {s[h]}/{c[h]} runs past the "
                                 f"{total} hull {kind}s")
    for h in range(dims["H"]):
        t = a["hull_triangles"][a["hull_triangle_start"][h]:][: a["hull_triangle_count"][h]]
        _in_range(where, f"hull_triangles of hull {h}", t, 0, a["hull_vertex_count"][h])
    _in_range(where, "frame_body_count", a["frame_body_count"], 0, N + 1)
    _in_range(where, "body_removed_step", a["body_removed_step"], -1, np.iinfo(np.int64).max)
    s, c = a["contact_start"], a["contact_count"]
    if np.any(s < 0) or np.any(c < 0) or np.any(s + c > dims["C"]):
        f = int(np.argmax((s < 0) | (c < 0) | (s + c > dims["C"])))
        raise RecordingError(f"{where}: field contact_start/count[{f}] = {s[f]}/{c[f]} runs past the "
                             f"{dims['C']} contact points")
    _in_range(where, "contact_body", a["contact_body"], -1, N)
    ev = dims["EV"]
    _in_range(where, "elastic_triangles", a["elastic_triangles"], 0, ev)
    _in_range(where, "elastic_triangle_body", a["elastic_triangle_body"], 0, dims["EB"])
    _in_range(where, "frame_elastic_vertex_count", a["frame_elastic_vertex_count"], 0, ev + 1)
    s, c = a["elastic_vertex_start"], a["elastic_vertex_count"]
    if np.any(s < 0) or np.any(c < 0) or np.any(s + c > ev):
        e = int(np.argmax((s < 0) | (c < 0) | (s + c > ev)))
        raise RecordingError(f"{where}: field elastic_vertex_start/count[{e}] = {s[e]}/{c[e]} runs past the "
                             f"{ev} elastic vertices")
    s, c = a["frame_elastic_pair_start"], a["frame_elastic_pair_count"]
    if np.any(s < 0) or np.any(c < 0) or np.any(s + c > dims["PS"]):
        f = int(np.argmax((s < 0) | (c < 0) | (s + c > dims["PS"])))
        raise RecordingError(f"{where}: field frame_elastic_pair_start/count[{f}] = {s[f]}/{c[f]} runs past the "
                             f"{dims['PS']} pair springs")
    _in_range(where, "elastic_pair_index", a["elastic_pair_index"], 0, ev)
    q = np.linalg.norm(a["frame_orientation"], axis=2)
    live = alive_mask(a)
    bad = live & (np.abs(q - 1.0) > 1e-6)
    if np.any(bad):
        f, b = np.argwhere(bad)[0]
        raise RecordingError(f"{where}: field frame_orientation[{f}, {b}] has norm {q[f, b]:.6g}, not a unit "
                             "quaternion")


def alive_mask(a: dict) -> np.ndarray:
    """(F, N) bool: body b is in the world in frame f: spawned (``b < frame_body_count[f]``) and not
    removed (``body_removed_step[b]`` is -1, or the frame's step is before it)."""
    n = a["body_mass"].shape[0]
    spawned = np.arange(n)[None, :] < a["frame_body_count"][:, None]
    gone = a["body_removed_step"]
    return spawned & ((gone[None, :] < 0) | (a["frame_step"][:, None] < gone[None, :]))


def _in_range(where, name, x, lo, hi):
    if x.size and (x.min() < lo or x.max() >= hi):
        i = np.argwhere((x < lo) | (x >= hi))[0]
        raise RecordingError(f"{where}: field {name}{i.tolist()} = {x[tuple(i)]} is outside [{lo}, {hi})")


class Recorder:
    """Collects a world's frames (every ``every`` steps) and every step's counters during a run.

    ``capture()`` after each step (``World.run`` calls it); ``recording()`` builds the
    :class:`Recording`. Frame 0 is taken when the recorder is made.
    """

    def __init__(self, world, every: int = 1, dt: float | None = None):
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise RecordingError(f"record_every={every!r} must be an integer >= 1")
        self.w, self.every = world, int(every)
        self.dt = float(world.default_dt if dt is None else dt)
        self.frames: dict[str, list] = {k: [] for k in ("time", "step", "position", "orientation",
                                                         "linear_velocity", "angular_velocity", "sleeping")}
        self.contacts: dict[str, list] = {k: [] for k in ("body", "point", "normal", "depth", "impulse")}
        self.contact_count: list[int] = []
        self.steps: dict[str, list] = {k: [] for k in ("time", "contacts", "iterations", "merit",
                                                        "max_penetration", "kinetic_energy", "potential_energy")}
        self.step_ms: list[dict] = []
        self.elastic_frames: list[np.ndarray] = []        # (EV_f, 3) per frame
        self.elastic_resume: list = []                    # (velocities, springs, anchors, scalars, pairs) per frame
        self.elastic_steps: list[tuple] = []              # (energy row (5,), integrator steps) per step
        self._elastic_taken = 0
        # each body's description (mass, fixed, name, material, geometry) as first seen, so a body
        # removed during the run (World.remove_body) is still drawn in the frames before its removal
        self.body_info: list[tuple] = []
        self.geom_rows: list[dict] = []
        self.removed_step: dict[int, int] = {}
        self._geom_count = -1
        # what Recording.world_at needs to rebuild the world at any frame (tumble.resume)
        self.world_start = {"gravity": world.gravity.copy(), "settings": asdict(world.settings),
                            "gravity_schedule": [(t, g.copy()) for t, g in world._gravity_schedule],
                            "dt": self.dt, "scene": world.scene.name if world.scene is not None else ""}
        self.body_specs: list[tuple] = []      # (shape, material, (mass, density), fixed, name, time first seen)
        self.joint_specs: list[tuple] = []     # (definition, its store row, step first seen)
        self.joint_removed_step: dict[int, int] = {}
        self._bodies_seen()
        self._frame()

    def _bodies_seen(self):
        """Describe the bodies added since the last call; note the ones removed since: removed between
        steps k and k + 1, a body is absent from the frames of step k + 1 on (``body_removed_step``)."""
        w = self.w
        n = w.body_count
        removed = w.removed if hasattr(w, "removed") else np.zeros(n, bool)
        for i in np.flatnonzero(removed):
            self.removed_step.setdefault(int(i), w.step_count)
        self._joints_seen()
        if n == len(self.body_info) and w.geoms.count == self._geom_count:
            return
        g = w.geoms
        ng = g.count
        new = np.arange(len(self.body_info), n)
        for i in new:
            self.body_info.append((float(w.bodies.body_mass[i]), bool(w.bodies.body_fixed[i]), w._names[i],
                                   w._materials[i].name))
            mass_args, added = w._body_args[i]
            self.body_specs.append((w._shapes[i], w._materials[i], mass_args, bool(w.bodies.body_fixed[i]),
                                    w._names[i], added))
        rows = np.flatnonzero(np.isin(g.geom_body[:ng], new))
        if rows.size:
            self.geom_rows.append({k: getattr(g, k)[rows].copy() for k in (
                "geom_body", "geom_type", "geom_size", "geom_local_position", "geom_local_orientation", "geom_hull")})
        self._geom_count = ng

    def _frame(self):
        w = self.w
        f = self.frames
        f["time"].append(w.time)
        f["step"].append(w.step_count)
        f["position"].append(w.positions.copy())
        f["orientation"].append(w.orientations.copy())
        f["linear_velocity"].append(w.linear_velocities.copy())
        f["angular_velocity"].append(w.angular_velocities.copy())
        sleeping = getattr(w, "sleeping", None)
        f["sleeping"].append(np.zeros(w.body_count, bool) if sleeping is None else np.array(sleeping, bool))
        system = getattr(w, "elastic_system", None)
        self.elastic_frames.append(np.zeros((0, 3)) if system is None else system.positions.copy())
        if system is not None:  # what world_at needs to resume the elastic bodies
            pairs = None if system.body_contacts is None else system.body_contacts.state()
            self.elastic_resume.append((system.velocities.copy(), system.spring_alive.copy(),
                                        system.spring_anchor.copy(),
                                        (system._h, system.dissipated,
                                         system.max_step if math.isfinite(system.max_step) else -1.0), pairs))
        else:
            self.elastic_resume.append(None)
        c = w.contact_store
        n = c.count
        self.contact_count.append(n)
        self.contacts["body"].append(np.stack([c.contact_body_a[:n], c.contact_body_b[:n]], axis=1))
        self.contacts["point"].append(c.contact_point[:n].astype(np.float32))
        self.contacts["normal"].append(c.contact_normal[:n].astype(np.float32))
        self.contacts["depth"].append(c.contact_depth[:n].astype(np.float32))
        self.contacts["impulse"].append(c.contact_normal_impulse[:n].astype(np.float32))

    def _joints_seen(self):
        """Each joint's definition and body-frame store row when first seen; the step from which a
        removed or broken joint is gone (as for bodies)."""
        w = self.w
        js = w.joint_store
        from tumble.resume import JOINT_DEFINITION_FIELDS

        for j in range(len(self.joint_specs), js.count):
            row = {k: getattr(js, k)[j].tolist() for k in JOINT_DEFINITION_FIELDS}
            self.joint_specs.append((w._joints.specs[j], row, w.step_count))
        for j in np.flatnonzero(~js.joint_active[: js.count]):
            self.joint_removed_step.setdefault(int(j), w.step_count)

    def capture(self):
        """Record the step just taken (counters always, the state every ``every`` steps)."""
        w = self.w
        s, c = self.steps, w.counters
        s["time"].append(w.time)
        s["contacts"].append(int(c.get("contacts", 0)))
        s["iterations"].append(int(c.get("iterations", 0)))
        s["merit"].append(float(c.get("merit", math.nan)))
        s["max_penetration"].append(float(c.get("max_penetration", 0.0)))
        s["kinetic_energy"].append(w.kinetic_energy())
        s["potential_energy"].append(w.potential_energy())
        self.step_ms.append(dict(w.profile))
        system = getattr(w, "elastic_system", None)
        if system is None:
            self.elastic_steps.append((np.zeros(5), 0))
        else:
            e = system.energies()
            self.elastic_steps.append((np.array([e[k] for k in ELASTIC_ENERGY_COLUMNS]),
                                       system.steps_taken - self._elastic_taken))
            self._elastic_taken = system.steps_taken
        self._bodies_seen()
        if w.step_count % self.every == 0:
            self._frame()

    def recording(self) -> Recording:
        """Everything captured so far as a :class:`Recording`."""
        import tumble

        w = self.w
        n = w.body_count
        f = self.frames

        def padded(key, width, dtype):
            out = np.zeros((len(f[key]), n) + width, dtype=dtype)
            for k, x in enumerate(f[key]):
                out[k, : len(x)] = x
            return out

        orient = padded("orientation", (4,), np.float64)
        counts = np.array([len(x) for x in f["position"]], dtype=np.int64)
        for k, m in enumerate(counts):  # bodies not yet spawned: identity, so every quaternion is unit
            orient[k, m:, 0] = 1.0
        self._bodies_seen()
        hulls = w.hulls
        geoms = {k: np.concatenate([r[k] for r in self.geom_rows]) for k in self.geom_rows[0]} if self.geom_rows \
            else {k: getattr(w.geoms, k)[:0] for k in ("geom_body", "geom_type", "geom_size", "geom_local_position",
                                                       "geom_local_orientation", "geom_hull")}
        order = np.argsort(geoms["geom_body"], kind="stable")   # by body, each body's geoms in their order
        geoms = {k: v[order] for k, v in geoms.items()}
        info = self.body_info
        tris = [hull_triangles(hulls[h]) for h in range(len(hulls))]
        verts = [hulls[h].vertices for h in range(len(hulls))]
        stages = sorted({k for p in self.step_ms for k in p}, key=lambda k: (k == "total", k))
        step_ms = np.array([[p.get(k, 0.0) for k in stages] for p in self.step_ms], dtype=np.float64)
        step_ms = step_ms.reshape(len(self.step_ms), len(stages))
        cc = np.array(self.contact_count, dtype=np.int64)
        merit = np.array(self.steps["merit"], dtype=np.float64)
        settings = {k: (v if isinstance(v, (bool, int, float, str)) or v is None else str(v))
                    for k, v in asdict(w.settings).items()}
        meta = {"format": FORMAT, "version": VERSION, "scene": w.scene.name if w.scene is not None else "",
                "solver": w.solver, "settings": settings, "dt": self.dt, "every": self.every,
                "gravity": [float(x) for x in w.gravity], "stage_names": stages,
                "tumble_version": tumble.__version__}
        from tumble.resume import world_document

        doc = world_document(self)      # None (and why) for a world a scene file cannot describe
        meta["world"] = doc
        arrays = {
            "body_mass": np.array([x[0] for x in info], dtype=np.float64).reshape(n),
            "body_fixed": np.array([x[1] for x in info], dtype=bool).reshape(n),
            "body_name": np.array([x[2] for x in info], dtype=str).reshape(n),
            "body_material": np.array([x[3] for x in info], dtype=str).reshape(n),
            "body_removed_step": np.array([self.removed_step.get(i, -1) for i in range(n)], dtype=np.int64),
            "geom_body": geoms["geom_body"].astype(np.int64),
            "geom_type": geoms["geom_type"].astype(np.int64),
            "geom_size": geoms["geom_size"].copy(),
            "geom_local_position": geoms["geom_local_position"].copy(),
            "geom_local_orientation": geoms["geom_local_orientation"].copy(),
            "geom_hull": geoms["geom_hull"].astype(np.int64),
            "hull_vertex_count": np.array([len(v) for v in verts], dtype=np.int64),
            "hull_vertices": np.concatenate(verts).reshape(-1, 3) if verts else np.zeros((0, 3)),
            "hull_triangle_count": np.array([len(t) for t in tris], dtype=np.int64),
            "hull_triangles": np.concatenate(tris).reshape(-1, 3) if tris else np.zeros((0, 3), np.int64),
            "frame_time": np.array(f["time"], dtype=np.float64),
            "frame_step": np.array(f["step"], dtype=np.int64),
            "frame_body_count": counts,
            "frame_position": padded("position", (3,), np.float64),
            "frame_orientation": orient,
            "frame_linear_velocity": padded("linear_velocity", (3,), np.float64),
            "frame_angular_velocity": padded("angular_velocity", (3,), np.float64),
            "frame_sleeping": padded("sleeping", (), bool),
            "contact_start": np.concatenate([[0], np.cumsum(cc)[:-1]]).astype(np.int64),
            "contact_count": cc,
            "step_time": np.array(self.steps["time"], dtype=np.float64),
            "step_contacts": np.array(self.steps["contacts"], dtype=np.int64),
            "step_iterations": np.array(self.steps["iterations"], dtype=np.int64),
            "step_merit": np.where(np.isfinite(merit), merit, 0.0),
            "step_max_penetration": np.array(self.steps["max_penetration"], dtype=np.float64),
            "step_kinetic_energy": np.array(self.steps["kinetic_energy"], dtype=np.float64),
            "step_potential_energy": np.array(self.steps["potential_energy"], dtype=np.float64),
            "step_ms": step_ms,
        }
        for kind in ("vertex", "triangle"):
            c = arrays[f"hull_{kind}_count"]
            arrays[f"hull_{kind}_start"] = np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64)[: len(c)]
        for k, shape, dtype in (("body", (2,), np.int64), ("point", (3,), np.float32), ("normal", (3,), np.float32),
                                ("depth", (), np.float32), ("impulse", (), np.float32)):
            parts = self.contacts[k]
            arrays[f"contact_{k}"] = (np.concatenate(parts).astype(dtype) if parts
                                      else np.zeros((0,) + shape, dtype))
        arrays.update(self._elastic_arrays())
        return Recording(meta, arrays)

    def _elastic_arrays(self) -> dict:
        """The optional elastic-body arrays (empty dict for a world without elastic bodies)."""
        system = getattr(self.w, "elastic_system", None)
        if system is None:
            return {}
        owner = self.w._core.elastic
        starts = system.body_vertex_start
        ev = int(starts[-1])
        frames = np.zeros((len(self.elastic_frames), ev, 3))
        for k, x in enumerate(self.elastic_frames):
            frames[k, : len(x)] = x
        tris = [b.mesh.surface + s for b, s in zip(owner.bodies, starts[:-1])]
        return {
            "elastic_body_name": np.array(owner.names, dtype=str).reshape(len(owner.names)),
            "elastic_vertex_start": starts[:-1].astype(np.int64),
            "elastic_vertex_count": np.diff(starts).astype(np.int64),
            "elastic_triangles": np.concatenate(tris).astype(np.int64),
            "elastic_triangle_body": np.repeat(np.arange(len(tris)), [len(t) for t in tris]).astype(np.int64),
            "frame_elastic_vertex_count": np.array([len(x) for x in self.elastic_frames], dtype=np.int64),
            "frame_elastic_position": frames,
            "step_elastic_energy": np.array([r[0] for r in self.elastic_steps], dtype=np.float64).reshape(-1, 5),
            "step_elastic_substeps": np.array([r[1] for r in self.elastic_steps], dtype=np.int64),
            **self._elastic_resume_arrays(ev),
        }

    def _elastic_resume_arrays(self, ev: int) -> dict:
        F = len(self.elastic_frames)
        velocity, anchor = np.zeros((F, ev, 3)), np.zeros((F, ev, 3))
        spring, scalars = np.zeros((F, ev), dtype=np.bool_), np.zeros((F, 3))
        start, count = np.zeros(F, dtype=np.int64), np.zeros(F, dtype=np.int64)
        pairs = {"kind": [], "index": [], "weight": [], "sign": [], "edge": []}
        total = 0
        for k, r in enumerate(self.elastic_resume):
            if r is None:
                continue
            v, alive, anchors, numbers, state = r
            velocity[k, : len(v)], spring[k, : len(v)], anchor[k, : len(v)] = v, alive, anchors
            scalars[k] = numbers
            start[k] = total
            if state is not None:
                count[k] = len(state["kind"])
                total += count[k]
                for name in pairs:
                    pairs[name].append(state[name])
        shapes = {"kind": (), "index": (4,), "weight": (4,), "sign": (), "edge": (2,)}
        types = {"kind": np.int64, "index": np.int64, "weight": np.float64, "sign": np.float64, "edge": np.int64}
        out = {"frame_elastic_velocity": velocity, "frame_elastic_spring": spring, "frame_elastic_anchor": anchor,
               "frame_elastic_scalars": scalars, "frame_elastic_pair_start": start, "frame_elastic_pair_count": count}
        for name in pairs:
            out[f"elastic_pair_{name}"] = (np.concatenate(pairs[name]).astype(types[name]) if pairs[name]
                                           else np.zeros((0,) + shapes[name], dtype=types[name]))
        return out

    def save(self, path) -> Path:
        return self.recording().save(path)
