"""``make bench-stacking``: the stacking experiments of Erleben 000 (issue 3), tumble's ``shock`` and
``pgs`` solvers side by side with PyBullet and MuJoCo.

    python benchmarks/stacking.py [--quick] [--experiments a,b,...] [--out DIR] [--no-peers] [--tag TAG]
                                  [--threads N]

Experiments (``--experiments`` takes their names or numbers; default: all):

1. ``box_stack``  -- ``box_stack25`` (000 Fig. 9): pgs with 10 and 100 iterations vs shock with 10, 4 s at
   dt = 0.01 s: max drift and max penetration over the run and at the end.
2. ``ball_grid``  -- ``ball_grid125`` (000 Fig. 13, severe initial penetration), iterations = 5 and
   correction_iterations = 5: max penetration per frame of shock with and without shock propagation
   (and pgs for reference) over the first frames.
3. ``tower_roof`` -- ``tower_roof``: quality under shock (pre-impact drift and penetration, the block's
   speed after landing, bricks displaced by the cannonball, energy gain) and the pre-impact ms/step with
   its per-stage breakdown, against pgs on the same scene.
4. ``fig18``      -- 000 Fig. 18: per step of every stacking scene (and pyramid20, pile1000) under shock,
   the contact count and the time of the step minus collision detection; least-squares lines overall
   and per scene.
5. ``merit``      -- 000 Figs. 5 and 6: the merit theta per PGS sweep (100 sweeps) at one step of
   box_stack25, wall200 and ball_grid125, and the effect of constraint force mixing gamma.
6. ``peers``      -- every stacking scene under shock, pgs, PyBullet and MuJoCo (same spec: dt,
   iterations, friction): ms/step and quality metrics, and snapshots of the same frames.

``--quick`` shrinks the scenes (where they have size parameters) and runs a few steps each, for smoke
tests (< 2 min with a warm Numba cache). Scenes or solvers that do not exist yet are skipped with a
message. Timing is as in ``benchmarks/run.py``: only ``step()`` is timed (``time.perf_counter``);
tumble is warmed up on a throw-away copy of each scene first, so compilation is excluded.

Output (default ``benchmarks/results/<machine tag>/``, ``--quick``: ``benchmarks/results/<tag>-quick.tmp/``,
which git ignores): ``stacking.md`` (every number, the settings, the machine), ``stacking.json`` (raw
numbers, per-step series included) and the PNGs ``stacking_*.png``.
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import (  # noqa: E402
    benchmark_arguments,
    engine_md_table,
    figure_lines,
    figure_path,
    fmt,
    legend,
    log,
    md_table,
    mean_p95,
    parse_experiments,
    pass_fail,
    pyplot,
    run_experiments,
    run_meta,
    setup_lines,
    start_run,
    to_jsonable,
    warm_up_solvers,
    warmed_up_world,
    warmup_text,
    write_json,
    write_markdown,
)

#: The paper's time step [s] (000 §5: "In all of our simulations, we have used a timestep of 0.01 seconds").
PAPER_DT = 0.01
#: Scenes of issue 3 (000's stacking configurations), in report order.
STACKING_SCENES = ["box_stack25", "wall200", "tower320", "ball_grid125", "falling_roof", "tower_roof",
                   "inclined_letters"]
#: Fig. 18 also gets these library scenes.
FIG18_SCENES = STACKING_SCENES + ["pyramid20", "pile1000"]
#: tumble solvers compared (a solver missing from tumble.settings.SOLVER_SETTINGS is skipped).
SOLVERS = ["shock", "pgs"]
#: Experiment names, in order (``--experiments`` also takes 1..6).
EXPERIMENTS = ["box_stack", "ball_grid", "tower_roof", "fig18", "merit", "peers"]
#: Stages of ``world.profile`` that are collision detection (000 Fig. 18 subtracts them).
COLLISION_STAGES = ("broad", "narrow", "cache")
#: "Fixed" penetration in the ball-grid and box-stack pass/fail lines [m] (000: "< 1 mm" reading of Fig. 9/13).
PEN_OK = 1e-3
#: A projectile "at rest" in the tower-roof line [m/s] (this report's threshold, not the paper's).
REST_SPEED = 0.05
#: Performance targets of issue 3.
TOWER_ROOF_MS_TARGET = 10.0
SHOCK_VS_PGS_TARGET = 3.0


@dataclass
class Budget:
    """How long everything runs."""

    quick: bool
    box_stack_seconds: float = 4.0           # Fig. 9: "after 4 secs"
    ball_grid_frames: int = 12               # Fig. 13: frames 1..6 matter
    merit_step: int = 50                     # the step whose sweeps are recorded (t = 0.5 s at dt 0.01)
    merit_sweeps: int = 100
    #: simulated seconds per scene for experiments 4 and 6 (None: the scene's own ``seconds``)
    scene_seconds: dict = field(default_factory=dict)
    #: scene parameters (only those the scene has are used)
    params: dict = field(default_factory=dict)
    quick_steps: int = 15
    quick_seconds: dict = field(default_factory=dict)   # quick mode: seconds for scenes with spawns
    frames: int = 4                          # snapshot columns

    def steps(self, spec) -> int:
        if self.quick:
            s = self.quick_seconds.get(spec.name)
            return self.quick_steps if s is None else max(1, int(round(s / spec.dt)))
        s = self.scene_seconds.get(spec.name)
        s = float(spec.seconds) if s is None else float(s)
        return max(1, int(round(s / spec.dt)))


FULL = Budget(quick=False,
              scene_seconds={"box_stack25": 4.0, "wall200": 4.0, "tower320": 4.0, "ball_grid125": 2.0,
                             "pyramid20": 4.0, "pile1000": 4.0, "falling_roof": None, "tower_roof": None,
                             "inclined_letters": None})
QUICK = Budget(quick=True, box_stack_seconds=0.3, ball_grid_frames=8, merit_step=3, merit_sweeps=30,
               quick_steps=15, frames=3, quick_seconds={"tower_roof": 0.4, "falling_roof": 0.3},
               params={"pyramid20": {"base": 6}, "pile1000": {"count": 120}, "wall200": {"rows": 6, "columns": 5},
                       "box_stack25": {"count": 8}, "tower320": {"courses": 4, "per_course": 8},
                       "ball_grid125": {"n": 3}, "inclined_letters": {"count": 100},
                       "falling_roof": {"courses": 4, "per_course": 6, "roof_time": 0.05, "roof_drop": 0.02,
                                        "cannon_time": 0.2},
                       "tower_roof": {"courses": 4, "per_course": 6, "impact_time": 0.2, "block_drop": 0.05,
                                      "cannon_time": 0.25}})


# ------------------------------------------------------------------------------------------------
# pure helpers

def linear_fit(x, y) -> dict:
    """Least-squares line ``y = slope x + intercept`` and its coefficient of determination.

    Returns ``{"slope", "intercept", "r2", "n"}``; nan where undefined (fewer than 2 points or no spread
    in x; ``r2`` is 1 when y has no spread and the fit is exact)."""
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = len(x)
    nan = {"slope": math.nan, "intercept": math.nan, "r2": math.nan, "n": int(n)}
    if n < 2:
        return nan
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    if sxx <= 0.0:
        return nan
    slope = float(((x - xm) * (y - ym)).sum() / sxx)
    intercept = float(ym - slope * xm)
    ss_res = float(((y - (slope * x + intercept)) ** 2).sum())
    ss_tot = float(((y - ym) ** 2).sum())
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0.0 else (1.0 if ss_res <= 1e-24 else math.nan)
    return {"slope": slope, "intercept": intercept, "r2": float(r2), "n": int(n)}


def snapshot_steps(steps: int, dt: float, spawn_times, count: int) -> list[int]:
    """Step indices (0 = initial state) of the snapshot columns: evenly spaced over the run, or, for
    scenes with spawned bodies, the start, just before the first spawn, 1 s after each spawn time, and
    the end (at most ``count + 1`` columns)."""
    ts = sorted({float(t) for t in spawn_times if float(t) > 0.0})
    if not ts:
        return sorted({int(round(k * steps / (count - 1))) for k in range(count)}) if count > 1 else [steps]
    out = [0, int(math.floor(ts[0] / dt))] + [int(round((t + 1.0) / dt)) for t in ts] + [steps]
    out = sorted({min(max(k, 0), steps) for k in out})
    return out[: count + 1] if len(out) > count + 1 else out


# ------------------------------------------------------------------------------------------------
# availability

def scene_names() -> list[str]:
    import tumble.scenes as scenes

    return scenes.names()


def solver_names() -> list[str]:
    from tumble.settings import SOLVER_SETTINGS

    return list(SOLVER_SETTINGS)


def solver_fields(solver: str) -> set[str]:
    from dataclasses import fields as dc_fields

    from tumble.settings import SOLVER_SETTINGS

    return {f.name for f in dc_fields(SOLVER_SETTINGS[solver])}


def make_spec(name: str, budget: Budget, dt: float | None = None):
    """The scene's spec with the budget's parameters (those the scene has) and optionally dt overridden."""
    import tumble.scenes as scenes

    known = scenes.defaults(name)
    params = {k: v for k, v in budget.params.get(name, {}).items() if k in known}
    s = scenes.spec(name, **params)
    if dt is not None:
        s.dt = float(dt)
    return s


# ------------------------------------------------------------------------------------------------
# runs

@dataclass
class Run:
    """One engine stepping one scene; per-step series and the final SceneMetrics."""

    scene: str
    engine: str
    solver: str | None
    settings: dict
    dt: float
    steps: int
    ms: np.ndarray = None                    # wall ms of step() (steps,)
    time: np.ndarray = None                  # simulated time after each step [s]
    contacts: np.ndarray = None
    penetration: np.ndarray = None           # engine-reported max penetration after each step [m]
    drift: np.ndarray = None                 # max horizontal drift of the judged bodies [m]
    profile: dict = field(default_factory=dict)    # stage -> (steps,) ms
    counters: dict = field(default_factory=dict)   # numeric counter -> (steps,)
    projectile_speed: dict = field(default_factory=dict)   # body id -> (steps,) m/s (nan before spawn)
    metrics: dict = field(default_factory=dict)
    frames: dict = field(default_factory=dict)     # step index -> (positions, orientations)
    final_drift: float = math.nan
    error: str | None = None
    notes: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and self.ms is not None and len(self.ms) > 0

    def ms_stats(self, upto: int | None = None) -> tuple[float, float]:
        a = self.ms[:upto] if upto is not None else self.ms
        return mean_p95(() if a is None else a)

    def summary(self) -> dict:
        mean, p95 = self.ms_stats() if self.ok else (math.nan, math.nan)
        d = {"scene": self.scene, "engine": self.engine, "solver": self.solver, "settings": self.settings,
             "dt": self.dt, "steps": self.steps, "ms_mean": mean, "ms_p95": p95, "final_drift": self.final_drift,
             "metrics": self.metrics, "error": self.error, "notes": self.notes}
        if self.ok and self.contacts is not None:
            d["contacts_mean"] = float(np.mean(self.contacts))
        return d


def _judged_drift(metrics, positions) -> float:
    j = metrics.judged
    j = j[j < len(positions)]
    if len(j) == 0:
        return 0.0
    d = np.asarray(positions)[j, :2] - metrics.initial_xy[j]
    return float(np.sqrt((d * d).sum(axis=1)).max())


class _Trace:
    """Per-step bookkeeping shared by the tumble and peer loops."""

    def __init__(self, run: Run, spec, frames):
        from tumble.scenes.metrics import SceneMetrics

        self.run = run
        self.metrics = SceneMetrics(spec)
        self.frames = set(int(k) for k in frames)
        self.proj = [int(i) for i in spec.tagged("projectile")]
        n = run.steps
        run.ms = np.full(n, np.nan)
        run.time = np.full(n, np.nan)
        run.contacts = np.full(n, np.nan)
        run.penetration = np.full(n, np.nan)
        run.drift = np.full(n, np.nan)
        run.projectile_speed = {i: np.full(n, np.nan) for i in self.proj}
        self.k = 0

    def frame(self, step_index: int, pos, quat) -> None:
        if step_index in self.frames:
            self.run.frames[step_index] = (np.array(pos, dtype=float), np.array(quat, dtype=float))

    def after_step(self, ms, t, pos, quat, lin, ang, pen, contacts=math.nan, profile=None, counters=None):
        r, k = self.run, self.k
        r.ms[k] = ms
        r.time[k] = t
        r.penetration[k] = pen
        r.contacts[k] = contacts
        self.metrics.observe_arrays(t, pos, quat, lin, ang, pen)
        r.drift[k] = _judged_drift(self.metrics, pos)
        for i in self.proj:
            if i < len(lin):
                r.projectile_speed[i][k] = float(np.linalg.norm(lin[i]))
        if profile:
            for key, v in profile.items():
                r.profile.setdefault(key, np.zeros(r.steps))[k] = v
        if counters:
            for key, v in counters.items():
                if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
                    r.counters.setdefault(key, np.full(r.steps, np.nan))[k] = float(v)
        self.k += 1
        self.frame(self.k, pos, quat)

    def finish(self, pos) -> None:
        r = self.run
        r.metrics = self.metrics.result()
        r.final_drift = _judged_drift(self.metrics, pos) if pos is not None else math.nan
        if self.k < r.steps:                     # failed part-way: keep what ran
            for name in ("ms", "time", "contacts", "penetration", "drift"):
                setattr(r, name, getattr(r, name)[: self.k])
            r.profile = {key: v[: self.k] for key, v in r.profile.items()}
            r.counters = {key: v[: self.k] for key, v in r.counters.items()}
            r.projectile_speed = {i: v[: self.k] for i, v in r.projectile_speed.items()}


def _bar(total: int, desc: str):
    from tumble.progress import bar

    return bar(total, desc)


def run_tumble(spec, solver: str, steps: int, settings: dict | None = None, frames=(), warmup: int = 2,
               label: str | None = None, keep_world: bool = False) -> Run:
    """Step ``spec`` under tumble's ``solver`` (settings override the scene's) for ``steps`` steps."""
    settings = dict(settings or {})
    merged = dict(spec.settings)
    merged.update(settings)
    run = Run(spec.name, label or f"tumble ({solver})", solver, merged, spec.dt, steps)
    try:
        w = warmed_up_world(lambda: spec.build(solver=solver, **settings), spec.dt, warmup)
    except Exception as e:
        run.error = f"{type(e).__name__}: {e}"
        return run
    tr = _Trace(run, spec, frames)
    tr.frame(0, w.positions, w.orientations)
    pos = w.positions
    bar = _bar(steps, f"{spec.name} {run.engine}")
    try:
        for _ in range(steps):
            t0 = time.perf_counter()
            w.step(spec.dt)
            ms = 1000.0 * (time.perf_counter() - t0)
            pos = w.positions
            tr.after_step(ms, w.time, pos, w.orientations, w.linear_velocities, w.angular_velocities,
                          w.counters.get("max_penetration", 0.0), w.counters.get("contacts", math.nan),
                          w.profile, w.counters)
            bar.update(1)
    except Exception as e:
        run.error = f"{type(e).__name__} after {tr.k} steps: {e}"
    finally:
        bar.close()
    tr.finish(np.array(pos))
    if keep_world:
        run.extra["world"] = w
    return run


def run_peer(peer_cls, spec, steps: int, frames=()) -> Run:
    """Step ``spec`` in a peer engine (benchmarks/peers) for ``steps`` steps."""
    from benchmarks.peers import Unsupported

    try:
        peer = peer_cls()
    except Exception as e:
        return Run(spec.name, getattr(peer_cls, "__name__", "peer"), None, {}, spec.dt, steps,
                   error=f"{type(e).__name__}: {e}")
    run = Run(spec.name, peer.name, None, {}, spec.dt, steps)
    try:
        peer.build(spec)
    except Unsupported as e:
        run.error = f"unsupported: {e}"
        return run
    except Exception as e:
        run.error = f"{type(e).__name__}: {e}"
        return run
    run.settings = dict(peer.settings)
    tr = _Trace(run, spec, frames)
    pos = None
    bar = _bar(steps, f"{spec.name} {peer.name}")
    try:
        st = peer.state()
        pos = st[0]
        tr.frame(0, st[0], st[1])
        for _ in range(steps):
            t0 = time.perf_counter()
            peer.step()
            ms = 1000.0 * (time.perf_counter() - t0)
            st = peer.state()
            pos = st[0]
            tr.after_step(ms, peer.time, *st, peer.max_penetration())
            bar.update(1)
    except Exception as e:
        run.error = f"{type(e).__name__} after {tr.k} steps: {e}"
    finally:
        bar.close()
        run.notes = list(getattr(peer, "notes", []))
        try:
            peer.close()
        except Exception:
            pass
    tr.finish(pos)
    return run


class RunCache:
    """Runs shared between experiments (the same scene, engine, settings and steps run once)."""

    def __init__(self):
        self.runs: dict = {}

    @staticmethod
    def _key(spec, engine, settings, steps):
        merged = dict(spec.settings)             # settings equal to the scene's own ones are the same run
        merged.update(settings or {})
        return (spec.name, json.dumps(to_jsonable(spec.params), sort_keys=True), float(spec.dt), engine,
                json.dumps(to_jsonable(merged), sort_keys=True), int(steps))

    def tumble(self, spec, solver, steps, settings=None, frames=()) -> Run:
        key = self._key(spec, ("tumble", solver), settings, steps)
        r = self.runs.get(key)
        if r is None or not set(frames) <= set(r.frames) and r.ok:
            if r is not None:
                log(f"  (re-running {spec.name} {solver} for snapshot frames)")
            r = run_tumble(spec, solver, steps, settings, frames)
            self.runs[key] = r
            log(f"  {spec.name:17s} {r.engine:28s} " + (f"{r.ms_stats()[0]:8.2f} ms/step" if r.ok else "")
                + (f"  ERROR {r.error}" if r.error else ""))
        return r

    def peer(self, peer_cls, spec, steps, frames=()) -> Run:
        key = self._key(spec, ("peer", peer_cls.__name__), None, steps)
        r = self.runs.get(key)
        if r is None:
            r = run_peer(peer_cls, spec, steps, frames)
            self.runs[key] = r
            log(f"  {spec.name:17s} {r.engine:28s} " + (f"{r.ms_stats()[0]:8.2f} ms/step" if r.ok else "")
                + (f"  ERROR {r.error}" if r.error else ""))
        return r


class PenetrationProbe:
    """Deepest penetration [m] of a given state of ``spec``, re-detected by tumble's collision stages on
    a private copy of the scene (so every engine and solver is measured the same way, on the state it
    shows at the end of a frame)."""

    def __init__(self, spec):
        self.w = spec.build(solver="pgs")
        self.dynamic = [i for i, b in enumerate(spec.bodies) if not b.fixed and float(b.spawn_time) <= 0.0]

    def __call__(self, positions, orientations) -> float:
        from tumble._core.stages import collide

        w = self.w
        pos = np.asarray(positions, dtype=float)
        quat = np.asarray(orientations, dtype=float)
        for i in self.dynamic:
            if i < len(pos):
                w.set_position(i, pos[i])
                w.set_orientation(i, quat[i])
        n = collide(w._core, {}, time.perf_counter(), w.settings.warm_start)
        d = w.contact_store.contact_depth[:n]
        return float(max(0.0, d.max())) if n else 0.0


# ------------------------------------------------------------------------------------------------
# plots

def _hidden_masks(spec, frame_steps):
    """Per frame (state after k steps), the bodies not present yet: a body of spawn time ts enters at the
    start of the first step starting at or after ts (``World.spawn``; the rule of ``SceneMetrics``)."""
    st = spec.spawn_times()
    if not np.any(st > 0):
        return [None for _ in frame_steps]
    return [(st > 0) & ((k - 1) * spec.dt < st - 1e-9) for k in frame_steps]


def snapshot_png(path, spec, runs: list[Run], frame_steps: list[int], title: str) -> str | None:
    from benchmarks.snapshots import side_by_side

    rows = []
    for r in runs:
        rows.append((f"{r.engine}" + ("" if r.error is None else "\n(failed)"),
                     [r.frames.get(k) for k in frame_steps]))
    if not any(s is not None for _, states in rows for s in states):
        return None
    shapes = [b.shape for b in spec.bodies]
    fixed = [b.fixed for b in spec.bodies]
    labels = [f"t = {k * spec.dt:.2f} s (step {k})" for k in frame_steps]
    side_by_side(path, shapes, fixed, rows, labels, hidden=_hidden_masks(spec, frame_steps), title=title)
    return str(path)


# ------------------------------------------------------------------------------------------------
# experiments: each returns (markdown lines, json dict, findings lines)

@dataclass
class Ctx:
    budget: Budget
    out: Path
    cache: RunCache
    peers: list
    scenes: list
    solvers: list
    figures: list = field(default_factory=list)

    def has_scene(self, name: str) -> bool:
        return name in self.scenes

    def skip_scene(self, name: str, what: str) -> list[str]:
        msg = f"skipped {what}: scene `{name}` is not in tumble.scenes.names() yet"
        log("  " + msg)
        return [f"_{msg}._", ""]

    def png(self, name: str) -> Path:
        return figure_path(self.out, "stacking", name, self.figures)


def _configs_available(ctx: Ctx, configs):
    ok, skipped = [], []
    for c in configs:
        (ok if c[1] in ctx.solvers else skipped).append(c)
    return ok, skipped


def exp_box_stack(ctx: Ctx):
    name = "box_stack25"
    md = ["## 1. Box stack (`box_stack25`, 000 Fig. 9)", ""]
    if not ctx.has_scene(name):
        return md + ctx.skip_scene(name, "experiment 1"), {"skipped": "scene missing"}, []
    spec = make_spec(name, ctx.budget, dt=PAPER_DT)
    steps = max(1, int(round(ctx.budget.box_stack_seconds / spec.dt)))
    configs = [("pgs, 10 iterations", "pgs", {"iterations": 10}), ("pgs, 100 iterations", "pgs", {"iterations": 100}),
               ("shock, 10 iterations", "shock", {"iterations": 10})]
    configs, skipped = _configs_available(ctx, configs)
    frames = snapshot_steps(steps, spec.dt, [], 4)
    probe = PenetrationProbe(spec)
    rows, data, runs = [], {}, []
    for label, solver, st in configs:
        r = ctx.cache.tumble(spec, solver, steps, st, frames)
        r = _relabel(r, f"tumble ({label})")
        runs.append(r)
        end_pen = probe(*r.frames[max(r.frames)]) if r.ok and r.frames else math.nan
        m = r.metrics
        rows.append([label, fmt(r.ms_stats()[0]), fmt(m.get("max_drift"), 3, 1000),
                     fmt(m.get("max_penetration"), 3, 1000), fmt(r.final_drift, 3, 1000), fmt(end_pen, 3, 1000),
                     fmt(m.get("standing")),
                     fmt(m.get("energy_max_gain")), r.error or ""])
        data[label] = {**r.summary(), "end_penetration_measured": end_pen,
                       "drift_series": r.drift, "penetration_series": r.penetration}
    md += [f"{len(spec.bodies)} bodies, {steps} steps of dt = {spec.dt:g} s ({steps * spec.dt:g} s); "
           f"scene settings `{spec.settings}`; the solver's other settings at their defaults.", "",
           "Max drift = largest horizontal distance of any stack box from its start (over the run / at the end); "
           "max pen. (run) = the solver's own contact depth, largest over all steps; pen. at end = the final state "
           "re-detected by tumble's collision stages (same measure for every run).", "",
           md_table(["run", "ms/step", "max drift [mm]", "max pen. (run) [mm]", "drift at end [mm]",
                     "pen. at end [mm]", "standing", "energy gain [J]", "error"], rows), ""]
    for _, solver, _ in skipped:
        md.append(f"_solver `{solver}` not available: skipped._")
    findings = []
    shock = data.get("shock, 10 iterations")
    if shock and shock.get("error") is None:
        m = shock["metrics"]
        ok = m["max_drift"] < PEN_OK and m["max_penetration"] < PEN_OK
        findings.append(f"- box_stack25, shock 10 it., {steps * spec.dt:g} s: "
                        f"max drift {1000 * m['max_drift']:.3g} mm, "
                        f"max penetration {1000 * m['max_penetration']:.3g} mm -> {pass_fail(ok)} "
                        f"(000 Fig. 9: both < 1 mm)")
    # plot
    if runs:
        plt = pyplot()
        fig, axs = plt.subplots(1, 2, figsize=(11, 4))
        for r in runs:
            if r.time is not None and len(r.time):
                axs[0].plot(r.time, 1000 * r.drift, label=r.engine)
                axs[1].plot(r.time, 1000 * r.penetration, label=r.engine)
        axs[0].set(xlabel="t [s]", ylabel="max drift [mm]", yscale="log", title="box_stack25: drift")
        axs[1].set(xlabel="t [s]", ylabel="max penetration [mm]", yscale="log",
                   title="box_stack25: penetration (solver)")
        for a in axs:
            a.grid(alpha=0.3)
            legend(a, fontsize=8)
        md += [""] + figure_lines(fig, ctx.png("box_stack25_drift"), "drift and penetration")
        s = snapshot_png(ctx.png("box_stack25_snapshots"), spec, runs, frames, "box_stack25 (dt 0.01 s)")
        if s:
            md += [f"![snapshots]({Path(s).name})", ""]
    return md, data, findings


def _relabel(r: Run, label: str) -> Run:
    import copy

    c = copy.copy(r)
    c.engine = label
    return c


def exp_ball_grid(ctx: Ctx):
    name = "ball_grid125"
    md = ["## 2. Ball grid (`ball_grid125`, 000 Fig. 13): penetration per frame", ""]
    if not ctx.has_scene(name):
        return md + ctx.skip_scene(name, "experiment 2"), {"skipped": "scene missing"}, []
    spec = make_spec(name, ctx.budget)
    nf = ctx.budget.ball_grid_frames
    base = {"iterations": 5}
    configs = [("shock, with shock propagation", "shock", {**base, "correction_iterations": 5,
                                                           "shock_propagation": True}),
               ("shock, without shock propagation", "shock", {**base, "correction_iterations": 5,
                                                              "shock_propagation": False}),
               ("pgs", "pgs", dict(base))]
    configs, skipped = _configs_available(ctx, configs)
    probe = PenetrationProbe(spec)
    frames = list(range(nf + 1))
    data, series, runs = {}, {}, []
    initial = probe(*_spec_state(spec))
    for label, solver, st in configs:
        r = run_tumble(spec, solver, nf, st, frames, label=f"tumble ({label})")
        log(f"  {name:17s} {r.engine:40s}" + (f"  ERROR {r.error}" if r.error else ""))
        runs.append(r)
        meas = [probe(*r.frames[k]) if k in r.frames else math.nan for k in range(1, nf + 1)]
        series[label] = meas
        data[label] = {**r.summary(), "measured_penetration": meas, "solver_penetration": r.penetration,
                       "final_penetration_counter": r.counters.get("final_penetration")}
    md += [f"{len(spec.bodies)} bodies, dt = {spec.dt:g} s, {nf} frames; iterations = 5 (dynamics sweeps) and "
           "correction_iterations = 5 for shock; scene settings "
           f"`{spec.settings}`.", "",
           "Penetration = the deepest contact of the state at the end of each frame, re-detected by tumble's "
           f"collision stages (the same measure for every run). Frame 0 (initial state): {1000 * initial:.3g} mm.", ""]
    headers = ["frame"] + [lbl for lbl in series]
    rows = [[str(k)] + [fmt(series[lbl][k - 1], 3, 1000) for lbl in series] for k in range(1, nf + 1)]
    md += ["max penetration [mm]:", "", md_table(headers, rows), ""]
    for _, solver, _ in skipped:
        md.append(f"_solver `{solver}` not available: skipped._")
    for r in runs:
        if r.error:
            md.append(f"- {r.engine}: {r.error}")
    findings = []

    def first_fixed(v):
        return next((k + 1 for k, x in enumerate(v) if x < PEN_OK), None)

    for lbl, v in series.items():
        f6 = v[5] if len(v) >= 6 else math.nan
        data[lbl]["first_frame_below_1mm"] = first_fixed(v)
        data[lbl]["frame6_penetration"] = f6
    sp = series.get("shock, with shock propagation")
    nsp = series.get("shock, without shock propagation")
    if sp is not None and len(sp) >= 6:
        findings.append("- ball_grid125, shock with shock propagation: penetration at frame 6 = "
                        f"{1000 * sp[5]:.3g} mm, "
                        f"first frame < 1 mm: {first_fixed(sp)} -> {pass_fail(sp[5] < PEN_OK)} (000 Fig. 13: fixed "
                        "within 6 frames)")
    if nsp is not None and len(nsp) >= 6:
        findings.append(f"- ball_grid125, shock without shock propagation: frame 6 = {1000 * nsp[5]:.3g} mm "
                        f"-> {'not fixed, as in' if nsp[5] >= PEN_OK else 'fixed, unlike'} 000 Fig. 13b")
    if series:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(7, 4))
        for lbl, v in series.items():
            ax.plot(range(0, nf + 1), 1000 * np.array([initial] + list(v)), marker="o", label=lbl)
        ax.axhline(1000 * PEN_OK, color="k", lw=0.8, ls=":", label="1 mm")
        ax.set(xlabel="frame", ylabel="max penetration [mm]", yscale="log",
               title="ball_grid125: penetration per frame (5 iterations)")
        ax.grid(alpha=0.3, which="both")
        legend(ax, fontsize=8)
        md += [""] + figure_lines(fig, ctx.png("ball_grid125_penetration"), "penetration per frame")
        snap = [k for k in (0, 1, 3, 6) if k <= nf]
        s = snapshot_png(ctx.png("ball_grid125_snapshots"), spec, runs, snap, "ball_grid125 frames (000 Fig. 13)")
        if s:
            md += [f"![snapshots]({Path(s).name})", ""]
    data["initial_penetration"] = initial
    return md, data, findings


def _spec_state(spec):
    from tumble.scenes.metrics import spec_initial_state

    p, q, _, _ = spec_initial_state(spec)
    return p, q


def _pre_impact_steps(spec, steps: int) -> int:
    st = spec.spawn_times()
    st = st[st > 0]
    if len(st) == 0:
        return steps
    return max(1, min(steps, int(math.floor(float(st.min()) / spec.dt + 1e-9))))


def _profile_means(r: Run, upto: int) -> dict:
    return {k: float(np.mean(v[:upto])) for k, v in r.profile.items() if len(v[:upto])}


def _extra_metric_keys(m: dict) -> list[str]:
    base = {"max_drift", "max_penetration", "standing", "energy", "energy_initial", "energy_max_gain",
            "observations", "time"}
    return [k for k in m if k not in base]


def _mm(key: str) -> bool:
    return key.endswith("drift") or key.endswith("penetration")


def extra_header(key: str) -> str:
    """Column title of a ``SceneMetrics`` extra with its unit (lengths shown in mm)."""
    if _mm(key):
        return f"{key} [mm]"
    if "speed" in key:
        return f"{key} [m/s]"
    if key.startswith("energy"):
        return f"{key} [J]"
    if key.endswith("time"):
        return f"{key} [s]"
    return key


def extra_cell(key: str, value) -> str:
    return fmt(value, 3, 1000.0 if _mm(key) else 1.0)


def exp_tower_roof(ctx: Ctx):
    name = "tower_roof"
    md = ["## 3. Tower and roof (`tower_roof`, 000 §5): quality and cost", ""]
    if not ctx.has_scene(name):
        return md + ctx.skip_scene(name, "experiment 3"), {"skipped": "scene missing"}, []
    spec = make_spec(name, ctx.budget)
    steps = ctx.budget.steps(spec)
    pre = _pre_impact_steps(spec, steps)
    spawn = sorted({float(t) for t in spec.spawn_times() if t > 0})
    frames = snapshot_steps(steps, spec.dt, spec.spawn_times(), ctx.budget.frames)
    data, findings = {"steps": steps, "pre_impact_steps": pre, "spawn_times": spawn}, []
    runs = {}
    for solver in ("shock", "pgs"):
        if solver not in ctx.solvers:
            md.append(f"_solver `{solver}` not available: skipped._")
            continue
        runs[solver] = ctx.cache.tumble(spec, solver, steps, None, frames)
    md += [f"{len(spec.bodies)} bodies ({sum(1 for b in spec.bodies if b.spawn_time > 0)} spawned later, at "
           f"t = {', '.join(f'{t:g}' for t in spawn) or '-'} s), {steps} steps of dt = {spec.dt:g} s; "
           f"pre-impact = the first {pre} steps (before the first spawn); scene settings `{spec.settings}`.", ""]
    # cost
    stages = sorted({k for r in runs.values() if r.ok for k in r.profile}, key=lambda k: (k == "total", k))
    prof = {s: _profile_means(r, pre) for s, r in runs.items() if r.ok}
    cost_rows = []
    for s, r in runs.items():
        if r.ok:
            mean, p95 = r.ms_stats(pre)
            cost_rows.append([f"tumble ({s})", fmt(mean), fmt(float(np.median(r.ms[:pre]))), fmt(p95),
                              fmt(float(np.mean(r.contacts[:pre])))])
    md += ["### Cost before impact", "",
           md_table(["solver", "ms/step (mean)", "ms/step (median)", "ms/step (p95)", "contacts (mean)"], cost_rows),
           "",
           "Mean ms per profile stage before impact (`world.profile`; the shock solver detects collisions twice per "
           "step, its broad/narrow/cache rows hold both):", "",
           md_table(["stage"] + [f"{s}" for s in prof], [[k] + [fmt(prof[s].get(k)) for s in prof] for k in stages]),
           ""]
    data["profile_pre_impact"] = prof
    sh, pg = runs.get("shock"), runs.get("pgs")
    if sh is not None and sh.ok:
        ms = sh.ms_stats(pre)[0]
        findings.append(f"- tower_roof, shock: {ms:.3g} ms per {spec.dt:g} s step before impact "
                        f"(target < {TOWER_ROOF_MS_TARGET:g}) -> {pass_fail(ms < TOWER_ROOF_MS_TARGET)}")
        data["shock_ms_pre_impact"] = ms
        if pg is not None and pg.ok:
            ratio = ms / pg.ms_stats(pre)[0]
            data["shock_over_pgs_pre_impact"] = ratio
            findings.append(f"- tower_roof, shock / pgs per step before impact: {ratio:.3g}x "
                            f"(target <= {SHOCK_VS_PGS_TARGET:g}x) -> {pass_fail(ratio <= SHOCK_VS_PGS_TARGET)}")
    # quality
    qrows = []
    extra_keys = sorted({k for r in runs.values() for k in _extra_metric_keys(r.metrics)})
    for s, r in runs.items():
        m = r.metrics
        pre_drift = float(np.nanmax(r.drift[:pre])) if r.ok else math.nan
        pre_pen = float(np.nanmax(r.penetration[:pre])) if r.ok else math.nan
        qrows.append([f"tumble ({s})", fmt(pre_drift, 3, 1000), fmt(pre_pen, 3, 1000), fmt(m.get("max_drift")),
                      fmt(m.get("max_penetration"), 3, 1000), fmt(m.get("energy_max_gain"))]
                     + [extra_cell(k, m.get(k)) for k in extra_keys] + [r.error or ""])
        data[s] = {**r.summary(), "pre_impact_max_drift": pre_drift, "pre_impact_max_penetration": pre_pen,
                   "projectile_speed": {str(i): v for i, v in r.projectile_speed.items()}}
    md += ["### Quality", "",
           "pre-impact drift / pen.: largest over the first steps (before the first spawn), from this runner's own "
           "per-step series (drift of the stack bodies, the solver's reported penetration); the other columns are "
           "`SceneMetrics.result()` over the whole run.", "",
           md_table(["solver", "pre-impact drift [mm]", "pre-impact pen. [mm]", "max drift [m]", "max pen. [mm]",
                     "energy gain [J]"] + [extra_header(k) for k in extra_keys] + ["error"], qrows), ""]
    # projectiles: speed just before the next spawn and at the end
    proj = [int(i) for i in spec.tagged("projectile")]
    if proj:
        prow = []
        st = spec.spawn_times()
        for s, r in runs.items():
            for i in proj:
                v = r.projectile_speed.get(i)
                if v is None or len(v) == 0:
                    continue
                later = [t for t in spawn if t > st[i]]
                k_next = min(len(v), int(math.floor(later[0] / spec.dt))) - 1 if later else len(v) - 1
                prow.append([f"tumble ({s})", f"{i} ({spec.bodies[i].name or '-'})", fmt(float(st[i])),
                             fmt(float(v[k_next]) if k_next >= 0 else math.nan),
                             fmt((k_next + 1) * spec.dt), fmt(float(v[-1]))])
                data[s][f"projectile_{i}_speed_before_next"] = float(v[k_next]) if k_next >= 0 else math.nan
        md += ["Projectile speeds (tag `projectile`): just before the next spawn (or at the end) and at the end "
               "of the run:", "",
               md_table(["solver", "body", "spawn t [s]", "speed before next spawn [m/s]", "at t [s]",
                         "speed at end [m/s]"], prow), ""]
        if sh is not None and sh.ok and len(proj) >= 1:
            v = data["shock"].get(f"projectile_{proj[0]}_speed_before_next")
            if v is not None and math.isfinite(v):
                findings.append(f"- tower_roof, shock: first projectile's speed before the next spawn {v:.3g} m/s "
                                f"(at rest: < {REST_SPEED:g} m/s, this report's threshold) -> "
                                f"{pass_fail(v < REST_SPEED)}")
    # plot: ms per step and contacts over time
    if runs:
        plt = pyplot()
        fig, axs = plt.subplots(1, 2, figsize=(12, 4))
        for s, r in runs.items():
            if r.ok:
                axs[0].plot(r.time, r.ms, lw=0.8, label=f"{s} ms/step")
                axs[1].plot(r.time, 1000 * r.drift, lw=0.8, label=f"{s}")
        ax2 = axs[0].twinx()
        for s, r in runs.items():
            if r.ok:
                ax2.plot(r.time, r.contacts, lw=0.6, ls=":", label=f"{s} contacts")
        for t in spawn:
            for a in axs:
                a.axvline(t, color="k", lw=0.6, ls="--")
        axs[0].set(xlabel="t [s]", ylabel="ms/step", title="tower_roof: cost per step (dotted: contacts)")
        ax2.set_ylabel("contacts")
        axs[1].set(xlabel="t [s]", ylabel="max drift [mm]", yscale="log", title="tower_roof: drift of stack bodies")
        legend(axs[0], fontsize=8, loc="upper left")
        legend(axs[1], fontsize=8)
        for a in axs:
            a.grid(alpha=0.3)
        md += figure_lines(fig, ctx.png("tower_roof_cost"), "cost and drift over time")
    return md, data, findings


def exp_fig18(ctx: Ctx):
    md = ["## 4. Time per step vs contacts (000 Fig. 18), shock", ""]
    if "shock" not in ctx.solvers:
        return md + ["_solver `shock` not available: skipped._", ""], {"skipped": "shock missing"}, []
    data, fits, rows, points = {}, {}, [], {}
    for name in FIG18_SCENES:
        if not ctx.has_scene(name):
            md += ctx.skip_scene(name, "Fig. 18 scene")[:1]
            continue
        spec = make_spec(name, ctx.budget)
        steps = ctx.budget.steps(spec)
        frames = snapshot_steps(steps, spec.dt, spec.spawn_times(), ctx.budget.frames)
        r = ctx.cache.tumble(spec, "shock", steps, None, frames)
        if not r.ok:
            md.append(f"- {name}: {r.error}")
            continue
        coll = sum(r.profile.get(k, np.zeros(len(r.ms))) for k in COLLISION_STAGES)
        dyn = r.profile["total"] - coll
        points[name] = (r.contacts, dyn, coll)
        f = linear_fit(r.contacts, dyn)
        fits[name] = f
        rows.append([name, str(len(spec.bodies)), str(len(r.ms)), f"{spec.dt:g}",
                     f"{int(np.min(r.contacts))}-{int(np.max(r.contacts))}", fmt(float(np.mean(dyn))),
                     fmt(1000 * f["slope"]), fmt(f["intercept"]), fmt(f["r2"])])
        data[name] = {"steps": len(r.ms), "dt": spec.dt, "contacts": r.contacts, "dynamics_ms": dyn,
                      "collision_ms": coll, "fit": f}
    if not points:
        return md + ["_no scene ran._", ""], data, []
    allx = np.concatenate([p[0] for p in points.values()])
    ally = np.concatenate([p[1] for p in points.values()])
    fo = linear_fit(allx, ally)
    data["overall_fit"] = fo
    rows.append(["**all**", "", str(len(allx)), "", f"{int(allx.min())}-{int(allx.max())}", fmt(float(ally.mean())),
                 fmt(1000 * fo["slope"]), fmt(fo["intercept"]), fmt(fo["r2"])])
    md += ["Per step: x = `counters['contacts']` (contacts detected at the start of the step), y = "
           "`profile['total']` minus the collision stages (" + ", ".join(COLLISION_STAGES) + ", both detections of "
           "the step) [ms]. Least squares y = slope x + intercept. A scene whose contact count never changes (a "
           "stack at rest) has no line of its own (R^2 '-'); its points still enter the overall fit.", "",
           md_table(["scene", "bodies", "steps", "dt [s]", "contacts", "mean ms (no collision)",
                     "slope [us/contact]", "intercept [ms]", "R^2"], rows), ""]
    plt = pyplot()
    fig, axs = plt.subplots(1, 2, figsize=(13, 5))
    cmap = plt.get_cmap("tab10")
    xs = np.linspace(0, allx.max() * 1.02, 50)
    for i, (name, (x, y, c)) in enumerate(points.items()):
        col = cmap(i % 10)
        axs[0].scatter(x, y, s=4, color=col, alpha=0.5, label=name)
        f = fits[name]
        if math.isfinite(f["slope"]):
            xx = np.linspace(x.min(), x.max(), 10)
            axs[0].plot(xx, f["slope"] * xx + f["intercept"], color=col, lw=1, ls="--")
        axs[1].scatter(x, c, s=4, color=col, alpha=0.5, label=name)
    if math.isfinite(fo["slope"]):
        axs[0].plot(xs, fo["slope"] * xs + fo["intercept"], color="k", lw=1.5,
                    label=f"all: {1000 * fo['slope']:.3g} us/contact, R^2 {fo['r2']:.3f}")
    axs[0].set(xlabel="contacts", ylabel="ms per step minus collision detection",
               title="000 Fig. 18: shock, time vs contacts")
    axs[1].set(xlabel="contacts", ylabel="collision detection ms per step", title="000 Fig. 19: collision detection")
    for a in axs:
        a.grid(alpha=0.3)
        legend(a, fontsize=7, markerscale=3)
    md += figure_lines(fig, ctx.png("fig18_time_vs_contacts"), "time vs contacts")
    findings = [f"- Fig. 18 (shock): overall {1000 * fo['slope']:.3g} us per contact + {fo['intercept']:.3g} ms, "
                f"R^2 = {fo['r2']:.3f}; per scene R^2: "
                + ", ".join(f"{n} {f['r2']:.2f}" for n, f in fits.items())]
    return md, data, findings


def _merit_at_step(spec, solver: str, step: int, sweeps: int, extra: dict) -> tuple[np.ndarray, str | None]:
    """theta per sweep at step ``step`` (1-based): ``step - 1`` steps at the scene's settings, then one
    with ``iterations = sweeps``, ``record_merit`` and ``extra``."""
    try:
        w = spec.build(solver=solver)
        for _ in range(step - 1):
            w.step(spec.dt)
        w.settings.update(iterations=int(sweeps), record_merit=True, **extra)
        if "tolerance" in solver_fields(solver):
            w.settings.update(tolerance=0.0)
        w.step(spec.dt)
        return np.asarray(w.merit_history, dtype=float).copy(), None
    except Exception as e:
        return np.zeros(0), f"{type(e).__name__}: {e}"


def convergence(h) -> dict:
    """Linear-convergence summary of theta per sweep: a least-squares line through log10 theta over the
    second half of the sweeps that are above the round-off floor (theta > 1e-12 theta after sweep 1);
    ``factor_per_sweep`` = 10**slope (the theta ratio per sweep), ``r2_log`` the R^2 of that line,
    ``floor_sweep`` the first sweep at or below the floor (None if none)."""
    h = np.asarray(h, dtype=float)
    k = np.arange(1, len(h) + 1)
    ok = np.isfinite(h) & (h > 0)
    if len(h) and h[0] > 0:
        below = np.nonzero(h <= 1e-12 * h[0])[0]
    else:
        below = np.zeros(0, dtype=int)
    floor = int(below[0]) + 1 if len(below) else None
    last = (floor - 1) if floor is not None else len(h)       # sweeps 1..last are above the floor
    use = ok & (k <= last) & (k > last // 2)
    f = linear_fit(k[use], np.log10(h[use])) if np.count_nonzero(use) >= 2 else linear_fit([], [])
    return {"theta_first": float(h[0]) if len(h) else math.nan, "theta_last": float(h[-1]) if len(h) else math.nan,
            "sweeps": int(len(h)), "floor_sweep": floor, "log10_slope": f["slope"],
            "factor_per_sweep": 10 ** f["slope"] if math.isfinite(f["slope"]) else math.nan, "r2_log": f["r2"]}


def exp_merit(ctx: Ctx):
    md = ["## 5. Merit per sweep (000 Figs. 5 and 6)", ""]
    b = ctx.budget
    step, sweeps = b.merit_step, b.merit_sweeps
    data, findings, hist = {}, [], {}
    rows = []
    if "pgs" not in ctx.solvers:
        return md + ["_solver `pgs` not available._", ""], {}, []
    for name in ("box_stack25", "wall200", "ball_grid125"):
        if not ctx.has_scene(name):
            md += ctx.skip_scene(name, "merit scene")[:1]
            continue
        spec = make_spec(name, b, dt=PAPER_DT if name == "box_stack25" else None)
        h, err = _merit_at_step(spec, "pgs", step, sweeps, {})
        log(f"  merit {name}: {len(h)} sweeps" + (f" ERROR {err}" if err else ""))
        c = convergence(h)
        hist[name] = h
        data[name] = {"dt": spec.dt, "step": step, "merit": h, **c, "error": err}
        rows.append([name, f"{spec.dt:g}", str(step), str(c["sweeps"]), fmt(c["theta_first"]), fmt(c["theta_last"]),
                     fmt(c["floor_sweep"]), fmt(c["factor_per_sweep"], 4), fmt(c["r2_log"], 3), err or ""])
    md += [f"pgs, the scene's settings for steps 1..{step - 1}, then step {step} with iterations = {sweeps} and "
           "`record_merit=True` (`world.merit_history`: theta of 000 eq. 38 after each sweep). Convergence factor = "
           "10^slope of a least-squares line through log10 theta over the second half of the sweeps above the "
           "round-off floor (theta > 1e-12 x theta after sweep 1; R^2 of that line: how linear the convergence is "
           "on a log scale); floor sweep = the first sweep at that floor.", "",
           md_table(["scene", "dt [s]", "step", "sweeps", "theta after sweep 1", "theta after last", "floor sweep",
                     "factor per sweep", "R^2 (log)", "error"], rows), ""]
    # Fig. 6: cfm gamma on box_stack25
    cfm_solver = "pgs" if "cfm" in solver_fields("pgs") else ("shock" if "shock" in ctx.solvers and
                                                               "cfm" in solver_fields("shock") else None)
    ghist = {}
    if cfm_solver is None:
        md += ["_no solver with a `cfm` setting: Fig. 6 skipped._", ""]
    elif not ctx.has_scene("box_stack25"):
        md += ctx.skip_scene("box_stack25", "Fig. 6")
    else:
        from tumble.scenes.metrics import spec_mass_properties

        spec = make_spec("box_stack25", b, dt=PAPER_DT)
        masses, _ = spec_mass_properties(spec)
        m = float(np.median(masses[masses > 0]))
        grow = []
        for f in (0.0, 0.01, 0.1):
            g = f / m
            h, err = _merit_at_step(spec, cfm_solver, step, sweeps, {"cfm": g})
            c = convergence(h)
            ghist[g] = h
            data.setdefault("cfm", {})[f"{g:.6g}"] = {"gamma": g, "gamma_times_mass": f, "merit": h, **c, "error": err}
            grow.append([fmt(g, 4), fmt(f), str(c["sweeps"]), fmt(c["theta_first"]), fmt(c["theta_last"]),
                         fmt(c["floor_sweep"]), fmt(c["factor_per_sweep"], 4), fmt(c["r2_log"], 3), err or ""])
        md += ["### Constraint force mixing (Fig. 6)", "",
               f"box_stack25 under `{cfm_solver}`"
               + (" (its merit history is the theta of the dynamics(a dt) solve on the whole system)"
                  if cfm_solver == "shock" else "")
               + f", step {step}, {sweeps} sweeps; gamma [1/kg] as multiples of 1 / (median box mass {m:.4g} kg).", "",
               md_table(["gamma [1/kg]", "gamma * m", "sweeps", "theta after sweep 1", "theta after last",
                         "floor sweep", "factor per sweep", "R^2 (log)", "error"], grow), ""]
    if hist or ghist:
        plt = pyplot()
        fig, axs = plt.subplots(1, 2, figsize=(12, 4.5))
        for name, h in hist.items():
            if len(h):
                axs[0].semilogy(np.arange(1, len(h) + 1), np.maximum(h, 1e-300), label=name)
        axs[0].set(xlabel="sweep", ylabel="theta", title=f"000 Fig. 5: pgs merit per sweep (step {step})")
        for g, h in ghist.items():
            if len(h):
                axs[1].semilogy(np.arange(1, len(h) + 1), np.maximum(h, 1e-300), label=f"gamma = {g:.3g} /kg")
        axs[1].set(xlabel="sweep", ylabel="theta", title=f"000 Fig. 6: box_stack25, cfm ({cfm_solver})")
        for a in axs:
            a.grid(alpha=0.3, which="both")
            legend(a, fontsize=8)
        md += figure_lines(fig, ctx.png("merit"), "merit per sweep")
    if hist:
        findings.append(f"- Fig. 5 (pgs, step {step}): theta factor per sweep "
                        + ", ".join(f"{n} {data[n]['factor_per_sweep']:.4g} (R^2 log {data[n]['r2_log']:.3f})"
                                    for n in hist))
    return md, data, findings


def exp_peers(ctx: Ctx):
    md = ["## 6. Side by side: tumble (shock, pgs), PyBullet, MuJoCo", ""]
    md += ["Every engine runs the same `SceneSpec` (bodies, masses, inertias, dt, iterations, friction; the peers "
           "map the spec's settings, see `benchmarks/peers`). Columns as in `bench.md` (ratio = mean ms/step over "
           "PyBullet's); the second table holds the drift in mm, the mean contact count (tumble), and the "
           "`SceneMetrics` extras of scenes with spawned bodies (defined in `src/tumble/scenes/metrics.py`; "
           "`displaced` = stack bodies moved farther than half their smallest extent).", ""]
    data, findings = {}, []
    engines = [("tumble", s) for s in SOLVERS if s in ctx.solvers] + [("peer", p) for p in ctx.peers]
    for name in STACKING_SCENES:
        if not ctx.has_scene(name):
            md += [f"### {name}", ""] + ctx.skip_scene(name, "side by side")
            continue
        spec = make_spec(name, ctx.budget)
        steps = ctx.budget.steps(spec)
        frames = snapshot_steps(steps, spec.dt, spec.spawn_times(), ctx.budget.frames)
        runs = []
        for kind, e in engines:
            runs.append(ctx.cache.tumble(spec, e, steps, None, frames) if kind == "tumble"
                        else ctx.cache.peer(e, spec, steps, frames))
        rows = []
        for r in runs:
            if r.ok:
                mean, p95 = r.ms_stats()
                rows.append({"engine": r.engine, "ms_mean": mean, "ms_p95": p95, **r.metrics})
            else:
                rows.append({"engine": r.engine, "error": r.error or "no steps"})
        extra_keys = sorted({k for r in runs for k in _extra_metric_keys(r.metrics)})
        erows = [[r.engine, fmt(r.metrics.get("max_drift"), 3, 1000), fmt(r.final_drift, 3, 1000),
                  fmt(float(np.nanmean(r.contacts)) if r.ok and np.any(np.isfinite(r.contacts)) else None)]
                 + [extra_cell(k, r.metrics.get(k)) for k in extra_keys] for r in runs]
        md += [f"### {name}", "", f"{spec.description}", "",
               f"{len(spec.bodies)} bodies, {steps} steps of dt = {spec.dt:g} s ({steps * spec.dt:g} s), "
               f"scene settings `{spec.settings}`" + (f", parameters `{spec.params}`" if ctx.budget.quick else ""), "",
               engine_md_table(rows), "",
               md_table(["engine", "max drift [mm]", "drift at end [mm]", "contacts (mean)"]
                        + [extra_header(k) for k in extra_keys], erows), ""]
        for r in runs:
            if r.error and r.ok:
                md.append(f"- {r.engine}: stopped early: {r.error}")
            if r.settings and r.solver is None:
                md.append(f"- {r.engine} settings: `{r.settings}`")
            for n in r.notes:
                md.append(f"- {r.engine}: {n}")
        s = snapshot_png(ctx.png(f"{name}_engines"), spec, runs, frames, f"{name}: same frames, every engine")
        if s:
            md += ["", f"![{name} snapshots]({Path(s).name})", ""]
        data[name] = {"steps": steps, "dt": spec.dt, "frames": frames, "runs": [r.summary() for r in runs]}
    return md, data, findings


RUNNERS = {"box_stack": exp_box_stack, "ball_grid": exp_ball_grid, "tower_roof": exp_tower_roof,
           "fig18": exp_fig18, "merit": exp_merit, "peers": exp_peers}


# ------------------------------------------------------------------------------------------------
def write_report(out: Path, tag: str, meta: dict, sections: list, findings: list, data: dict) -> None:
    md = [f"# tumble stacking experiments (Erleben 000, issue 3): `{tag}`", ""]
    md += setup_lines(meta, "shrunken scenes, a few steps")
    md += [f"- experiments: {', '.join(meta['experiments'])}; wall time {meta['wall_s']:.0f} s",
           f"- tumble solvers: {', '.join(meta['solvers'])}; peers: {', '.join(meta['peers']) or 'none'}",
           f"- scenes present: {', '.join(meta['scenes'])}",
           f"- warm-up (compile or load kernels): {meta['warmup']}",
           "- only `step()` is timed; tumble is warmed up on a throw-away copy of each scene (2 steps) first", "",
           "## Findings", "",
           "Computed from the numbers below against the paper's claims and the issue's targets:", ""]
    md += findings or ["- (no pass/fail line could be computed from the experiments that ran)"]
    md += ["", "Interpretation: written by hand after reading the numbers below (box stack, ball grid, tower "
           "roof, Fig. 18 linearity, merit / cfm, vs PyBullet / MuJoCo); a fresh run leaves it to the reader.", ""]
    for lines in sections:
        md += lines + [""]
    write_markdown(out / "stacking.md", md)
    write_json(out / "stacking.json", {"meta": meta, "findings": findings, **data})


def main(argv=None) -> int:
    ap = benchmark_arguments(__doc__.split("\n")[0], "small scenes, few steps (smoke test, < 2 min)",
                             "Numba threads for tumble (default: Numba's, one per core); 1 gives steadier timings "
                             "on a machine shared with other processes", EXPERIMENTS)
    ap.add_argument("--no-peers", action="store_true", help="tumble only")
    args = ap.parse_args(argv)
    exps = parse_experiments(args.experiments, EXPERIMENTS)
    budget = QUICK if args.quick else FULL
    start = start_run(args)
    out = start.out
    scenes_present = scene_names()
    solvers = [s for s in SOLVERS if s in solver_names()]
    for s in SOLVERS:
        if s not in solvers:
            log(f"solver {s!r} is not in tumble.settings.SOLVER_SETTINGS: its runs are skipped")
    missing = [n for n in FIG18_SCENES if n not in scenes_present]
    if missing:
        log(f"scenes not in the library (skipped): {', '.join(missing)}")
    peers = []
    if not args.no_peers and "peers" in exps:
        from benchmarks.peers import available

        peers = available()
    warm = warm_up_solvers(solvers)
    ctx = Ctx(budget=budget, out=out, cache=RunCache(), peers=peers, scenes=scenes_present, solvers=solvers)
    out.mkdir(parents=True, exist_ok=True)
    sections, findings, data = run_experiments(exps, EXPERIMENTS, RUNNERS, ctx)
    meta = run_meta(start, "benchmarks/stacking.py", argv, args.quick, experiments=exps, solvers=solvers,
                    peers=[getattr(p, "__name__", str(p)) for p in peers], scenes=scenes_present,
                    warmup=warmup_text(warm), figures=ctx.figures)
    write_report(out, start.tag, meta, sections, findings, data)
    log(f"\nwrote {out / 'stacking.md'}, {out / 'stacking.json'} and {len(ctx.figures)} PNGs "
        f"in {start.elapsed():.0f} s")
    print(out / "stacking.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
