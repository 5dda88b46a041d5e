"""Sweep specs: a TOML file (or a dict of the same shape) parsed and validated into a :class:`SweepSpec`.

    [sweep]
    scene = "tower_roof"          # a library scene (tumble scenes) or a .toml/.json scene file,
                                  # relative to the spec file
    solvers = ["pgs", "shock"]    # default ["pgs"]
    dts = [0.01, 0.02]            # [s]; default: the scene's dt
    seconds = 3.0                 # [s] simulated per run; default: the scene's seconds
    repeats = 1                   # runs per parameter point (each with its own seed); default 1
    seed = 0                      # base seed of the run seeds and of random sampling; default 0
    metrics = ["standing"]        # run metrics to keep (tumble run --json keys); default: all numeric
    timeout = 600                 # [s] wall time per run before it is recorded as a timeout; default 600
    retries = 2                   # re-submissions of a run whose worker died; default 2
    points = [{ratio = 0.1}]      # optional explicit parameter points (each a table)

    [fixed]                       # parameters held constant (scene parameters or overrides)
    courses = 5

    [grid]                        # every combination of these lists
    friction = [0.2, 0.4, 0.6]

    [random]                      # `samples` points drawn uniformly (seeded by sweep.seed)
    samples = 8
    friction = [0.1, 0.9]         # [low, high]

    [jitter]                      # per run, seeded uniform noise in [-a, +a] added to a parameter
    impact_height = 0.05

A parameter is a scene parameter (``tumble.scenes.defaults(scene)``), one of the material overrides
``friction`` / ``restitution`` (set on every body of the scene), or a solver setting (a field of the
solver's settings class, e.g. ``iterations``). The parameter points are the product of ``points`` x
``grid`` x ``random`` (a missing part counts as one empty point). Anything else raises SettingsError
(the spec's fields) or SceneError (the scene) naming the field and the value.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from tumble.errors import SceneError, SettingsError

#: Parameters applied to every body's material instead of the scene builder.
MATERIAL_OVERRIDES = ("friction", "restitution")

#: Metrics of a run (the keys of ``tumble run --json``; scene-dependent ones are None where absent).
RUN_METRICS = ("bodies", "steps", "ms_per_step", "realtime_factor", "max_penetration", "max_drift", "standing",
               "energy", "energy_initial", "energy_max_gain", "time", "max_joint_error", "joints_broken",
               "energy_budget", "displaced", "projectile_final_speed", "pre_spawn_max_drift",
               "pre_spawn_max_penetration", "observations", "first_spawn_time", "projectile_speeds")

#: Default wall-time limit per run [s] and default retries of a run whose worker died.
DEFAULT_TIMEOUT = 600.0
DEFAULT_RETRIES = 2

_SWEEP_KEYS = {"scene", "solvers", "dts", "seconds", "repeats", "seed", "metrics", "timeout", "retries", "points"}
_TOP_KEYS = {"sweep", "fixed", "grid", "random", "jitter"}


@dataclass
class SweepSpec:
    """A validated sweep. ``scene`` is a library name or an absolute scene-file path; ``metrics`` holds
    run-metric names and (from Python only) callables ``f(world, result) -> number | dict``."""

    scene: str
    solvers: list[str] = field(default_factory=lambda: ["pgs"])
    dts: list[float | None] = field(default_factory=lambda: [None])
    seconds: float | None = None
    repeats: int = 1
    seed: int = 0
    metrics: list = field(default_factory=list)
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    points: list[dict] = field(default_factory=list)
    fixed: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)
    random: dict = field(default_factory=dict)
    samples: int = 0
    jitter: dict = field(default_factory=dict)

    @property
    def is_file(self) -> bool:
        return self.scene.lower().endswith((".toml", ".json"))

    def scene_identity(self) -> str:
        """What names the scene in run ids: the library name, or a scene file's content hash (so an
        edited file gives new runs)."""
        if self.is_file:
            return "file:" + hashlib.sha256(Path(self.scene).read_bytes()).hexdigest()[:16]
        return self.scene

    def varied(self) -> list[str]:
        """Names of the parameters that vary between points, in spec order."""
        names = [k for p in self.points for k in p] + list(self.grid) + list(self.random)
        return list(dict.fromkeys(names))


def _err(field_name: str, value, why: str) -> SettingsError:
    return SettingsError(f"sweep spec: field {field_name}={value!r} {why}")


def _number(field_name, v, *, positive=False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or (positive and v <= 0):
        raise _err(field_name, v, "must be a finite number" + (" > 0" if positive else ""))
    return float(v)


def _int(field_name, v, *, minimum=0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise _err(field_name, v, f"must be an integer >= {minimum}")
    return int(v)


def _scalar(field_name, v):
    """A parameter value: a finite number, a bool or a string."""
    if isinstance(v, bool) or isinstance(v, str):
        return v
    if isinstance(v, (int, float)) and math.isfinite(v):
        return v
    raise _err(field_name, v, "must be a finite number, a bool or a string")


def load(path) -> SweepSpec:
    """Read and validate a sweep spec file (TOML); a scene file named in it is resolved relative to it."""
    path = Path(path)
    if not path.exists():
        raise SettingsError(f"sweep spec: file {str(path)!r} does not exist")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise SettingsError(f"sweep spec: {str(path)!r} is not valid TOML: {e}") from None
    return from_dict(data, base=path.parent)


def from_dict(data: dict, base: Path | None = None, user_metrics: list | None = None) -> SweepSpec:
    """Validate a spec of the TOML file's shape (``{"sweep": {...}, "grid": {...}, ...}``). ``base``: folder
    that relative scene-file paths are read from. ``user_metrics``: callables appended to the metrics."""
    if not isinstance(data, dict):
        raise _err("spec", data, "must be a table")
    for k in data:
        if k not in _TOP_KEYS:
            raise _err(k, data[k], f"is not a section of a sweep spec (known: {sorted(_TOP_KEYS)})")
    sw = data.get("sweep")
    if not isinstance(sw, dict) or "scene" not in sw:
        raise _err("sweep.scene", None, "is required: a library scene name or a scene file")
    for k in sw:
        if k not in _SWEEP_KEYS:
            raise _err(f"sweep.{k}", sw[k], f"is not a field of [sweep] (known: {sorted(_SWEEP_KEYS)})")
    scene = sw["scene"]
    if not isinstance(scene, str) or not scene:
        raise _err("sweep.scene", scene, "must be a library scene name or a .toml/.json scene file")
    spec = SweepSpec(scene=scene)
    if spec.is_file:
        p = Path(scene)
        if not p.is_absolute() and base is not None:
            p = base / p
        if not p.exists():
            raise SceneError(f"sweep spec: field sweep.scene={scene!r}: scene file {str(p)!r} does not exist")
        spec.scene = str(p.resolve())
    else:
        from tumble import scenes

        if scene not in scenes.names():
            raise SceneError(f"sweep spec: field sweep.scene={scene!r} is not a library scene "
                             f"(known: {', '.join(scenes.names())})")
    spec.solvers = _solvers(sw.get("solvers", ["pgs"]))
    if "dts" in sw:
        dts = sw["dts"]
        if not isinstance(dts, list) or not dts:
            raise _err("sweep.dts", dts, "must be a non-empty list of time steps [s]")
        spec.dts = [_number("sweep.dts", d, positive=True) for d in dts]
    if "seconds" in sw:
        spec.seconds = _number("sweep.seconds", sw["seconds"], positive=True)
    spec.repeats = _int("sweep.repeats", sw.get("repeats", 1), minimum=1)
    spec.seed = _int("sweep.seed", sw.get("seed", 0), minimum=0)
    spec.timeout = _number("sweep.timeout", sw.get("timeout", DEFAULT_TIMEOUT), positive=True)
    spec.retries = _int("sweep.retries", sw.get("retries", DEFAULT_RETRIES), minimum=0)
    spec.metrics = _metrics(sw.get("metrics", []), user_metrics or [])
    points = sw.get("points", [])
    if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
        raise _err("sweep.points", points, "must be a list of tables {parameter = value}")
    spec.points = [{k: _scalar(f"sweep.points.{k}", v) for k, v in p.items()} for p in points]
    spec.fixed = {k: _scalar(f"fixed.{k}", v) for k, v in _table(data, "fixed").items()}
    for k, v in _table(data, "grid").items():
        if not isinstance(v, list) or not v:
            raise _err(f"grid.{k}", v, "must be a non-empty list of values")
        spec.grid[k] = [_scalar(f"grid.{k}", x) for x in v]
    rnd = dict(_table(data, "random"))
    if rnd:
        spec.samples = _int("random.samples", rnd.pop("samples", None), minimum=1)
        for k, v in rnd.items():
            if not (isinstance(v, list) and len(v) == 2):
                raise _err(f"random.{k}", v, "must be [low, high]")
            lo, hi = (_number(f"random.{k}", x) for x in v)
            if not lo < hi:
                raise _err(f"random.{k}", v, "must have low < high")
            spec.random[k] = (lo, hi)
        if not spec.random:
            raise _err("random", data["random"], "names no parameter to sample")
    for k, v in _table(data, "jitter").items():
        spec.jitter[k] = _number(f"jitter.{k}", v)
        if spec.jitter[k] < 0:
            raise _err(f"jitter.{k}", v, "must be an amplitude >= 0")
    _check_parameters(spec)
    return spec


def _table(data, name) -> dict:
    t = data.get(name, {})
    if not isinstance(t, dict):
        raise _err(name, t, "must be a table")
    return t


def _solvers(v) -> list[str]:
    from tumble._core.solvers import registry

    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not v:
        raise _err("sweep.solvers", v, "must be a non-empty list of solver names")
    for s in v:
        if s not in registry.names():
            raise _err("sweep.solvers", s, f"is not a solver (known: {', '.join(registry.names())})")
    return list(dict.fromkeys(v))


def _metrics(names, user) -> list:
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list):
        raise _err("sweep.metrics", names, "must be a list of metric names")
    for m in names:
        if m not in RUN_METRICS:
            raise _err("sweep.metrics", m, f"is not a run metric (known: {', '.join(RUN_METRICS)})")
    out = list(dict.fromkeys(names))
    for f in user:
        if not callable(f):
            raise _err("metrics", f, "must be a run-metric name or a callable f(world, result)")
        out.append(f)
    return out


def settings_fields(solver: str) -> set[str]:
    """The setting names a World under ``solver`` accepts as keywords."""
    from tumble._core.solvers import registry

    cls = registry.solver_class(solver).settings_class
    return {f.name for f in dataclasses.fields(cls)}


def _check_parameters(spec: SweepSpec) -> None:
    """Every parameter must be a scene parameter, a material override or a setting of every solver."""
    from tumble import scenes

    scene_params = set() if spec.is_file else set(scenes.defaults(spec.scene))
    settings = {s: settings_fields(s) for s in spec.solvers}
    sources = [("fixed", spec.fixed), ("grid", spec.grid), ("random", spec.random), ("jitter", spec.jitter)]
    sources += [("sweep.points", p) for p in spec.points]
    for section, table in sources:
        for k in table:
            if k in scene_params or k in MATERIAL_OVERRIDES:
                continue
            missing = [s for s, f in settings.items() if k not in f]
            if missing:
                known = sorted(scene_params) + list(MATERIAL_OVERRIDES)
                raise SettingsError(f"sweep spec: field {section}.{k}={table[k]!r}: {k!r} is neither a parameter of "
                                    f"scene {spec.scene!r} ({', '.join(known)}) nor a setting of solver(s) "
                                    f"{missing}")
    for k in spec.jitter:
        if k in spec.grid or k in spec.random or any(k in p for p in spec.points) or k in spec.fixed:
            continue
        if spec.is_file or k not in scene_params:
            raise SettingsError(f"sweep spec: field jitter.{k}={spec.jitter[k]!r}: a jittered parameter needs a "
                                f"numeric value (in fixed, grid, random, points or the scene's defaults)")
