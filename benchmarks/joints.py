"""``make bench-joints``: the joint scenes ``chain50`` and ``ragdolls`` in tumble (solvers ``pgs`` and
``shock``) side by side with PyBullet and MuJoCo: ms/step and joint drift for each engine.

    python benchmarks/joints.py [--quick] [--scenes chain50,ragdolls] [--out DIR] [--no-peers] [--tag TAG]
                                [--threads N]

Every engine steps the identical ``SceneSpec`` (bodies, masses, inertias, joints, dt, solver
iterations, friction; ``benchmarks/peers`` maps the spec) for the scene's own duration
(``spec.seconds``: chain50 10 s, ragdolls 6 s, at the scene's dt of 1/60 s and 10 iterations). Per
engine and scene:

* ms/step: mean, 95th percentile and max of the wall time of ``step()`` alone
  (``time.perf_counter``); tumble is warmed up first on a throw-away copy of the scene (2 steps) so
  Numba compilation is excluded; ratio = mean ms/step over tumble (pgs)'s;
* joint drift: after every step, the position error of every joint (anchor separation [m], tumble's
  ``World.joint_errors()``; the peers measure the same from their body poses with
  ``benchmarks.peers.anchor_errors``); reported as the max over joints and steps ("max"), the max
  over joints after the last step ("final") and the mean over joints after the last step; for
  chain50 also relative to the link length;
* through the ground: dynamic bodies whose centre is below a fixed ground plane, i.e. that sank or
  tunnelled at least half-way through it (max count over the steps and count at the end).

``--quick`` shrinks the scenes (``QUICK_PARAMS``) for smoke tests. Output (default
``benchmarks/results/<machine tag>/``, ``--quick``: ``benchmarks/results/<tag>-quick.tmp/``, which git
ignores): ``joints.md`` (tables and the settings), ``joints.json`` (summaries and the per-step drift
and ms series) and ``joints.png`` (joint drift over time, every engine, one panel per scene).
"""

from __future__ import annotations

import math
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import (  # noqa: E402
    benchmark_arguments,
    fmt,
    log,
    md_table,
    mean_p95,
    pyplot,
    rounded_series,
    run_meta,
    save_figure,
    setup_lines,
    start_run,
    warm_up_solvers,
    warmed_up_world,
    warmup_text,
    write_json,
    write_markdown,
)
from benchmarks.stacking import _bar  # noqa: E402

#: Scenes of the issue, in report order.
SCENES = ["chain50", "ragdolls"]
#: tumble solvers compared (a solver missing from tumble.settings.SOLVER_SETTINGS is skipped).
SOLVERS = ["pgs", "shock"]
#: The reference engine of the ratio column.
REFERENCE = "tumble (pgs)"
#: ``--quick``: scene parameters (those the scene has are used).
QUICK_PARAMS = {"chain50": {"links": 8, "seconds": 0.5}, "ragdolls": {"count": 2, "seconds": 0.5}}
#: Drift threshold [m] of the "first above" column: when a joint first comes this far apart.
DRIFT_THRESHOLD = 0.01
#: Drift values below this [mm] are drawn at it (log axis).
DRIFT_FLOOR_MM = 1e-3
#: Warm-up steps of tumble on a throw-away build (compilation).
WARMUP_STEPS = 2


# ------------------------------------------------------------------------------------------------
# scene helpers

def make_spec(name: str, quick: bool = False):
    """The scene's spec (default parameters; ``QUICK_PARAMS`` in quick mode)."""
    import tumble.scenes as scenes

    known = scenes.defaults(name)
    params = {k: v for k, v in (QUICK_PARAMS.get(name, {}) if quick else {}).items() if k in known}
    return scenes.spec(name, **params)


def link_length(spec) -> float | None:
    """The link length [m] of a chain scene (its ``link_length`` parameter); None for other scenes."""
    v = (spec.params or {}).get("link_length")
    return None if v is None else float(v)


class GroundCheck:
    """Counts the dynamic bodies whose centre is below a fixed ground plane (sank at least half-way through it)."""

    def __init__(self, spec):
        from benchmarks.peers import quat_matrices

        from tumble.shapes import Plane

        self.planes = []
        for b in spec.bodies:
            if b.fixed and isinstance(b.shape, Plane):
                n = quat_matrices(b.orientation)[0] @ np.asarray(b.shape.normal, dtype=float)
                self.planes.append((np.asarray(b.position, dtype=float), n))
        self.dynamic = np.array([i for i, b in enumerate(spec.bodies) if not b.fixed], dtype=np.int64)

    def __call__(self, positions) -> int:
        if not self.planes or len(self.dynamic) == 0:
            return 0
        x = np.asarray(positions, dtype=float)[self.dynamic]
        below = np.zeros(len(x), dtype=bool)
        for p0, n in self.planes:
            below |= (x - p0) @ n < 0.0
        return int(below.sum())


# ------------------------------------------------------------------------------------------------
# runs

@dataclass
class JointRun:
    """One engine stepping one scene: per-step series and the final joint errors."""

    scene: str
    engine: str
    solver: str | None                      # tumble's solver; None for a peer
    settings: dict
    dt: float
    steps: int
    link: float | None = None               # link length [m] (chain), for the relative drift
    ms: np.ndarray = None                   # wall ms of step() (steps,)
    drift: np.ndarray = None                # max over joints of the anchor separation after each step [m]
    mean_drift: np.ndarray = None           # mean over joints after each step [m]
    below: np.ndarray = None                # dynamic bodies below the ground after each step
    final_errors: np.ndarray = None         # (joints,) after the last step [m]
    error: str | None = None
    notes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.ms is not None and len(self.ms) > 0

    def summary(self) -> dict:
        d = {"scene": self.scene, "engine": self.engine, "solver": self.solver, "settings": self.settings,
             "dt": self.dt, "steps": self.steps, "steps_run": int(len(self.ms)) if self.ok else 0,
             "link_length": self.link, "error": self.error, "notes": list(self.notes)}
        if self.ok:
            mean, p95 = mean_p95(self.ms)
            d.update(ms_mean=mean, ms_p95=p95, ms_max=float(np.max(self.ms)),
                     drift_max=_nanmax(self.drift), drift_final=_nanmax(self.final_errors),
                     drift_mean_final=_nanmean(self.final_errors),
                     broken_joints=int(np.isnan(self.final_errors).sum()) if self.final_errors is not None else 0,
                     t_drift_over=_first_over(self.drift, DRIFT_THRESHOLD, self.dt),
                     below_ground_max=int(np.max(self.below)), below_ground_final=int(self.below[-1]))
            if self.link:
                d["drift_max_rel"] = d["drift_max"] / self.link
                d["drift_final_rel"] = d["drift_final"] / self.link
        return d


def _first_over(series, threshold: float, dt: float) -> float | None:
    """Simulated time [s] after the first step whose value exceeds ``threshold``; None if none does."""
    a = np.asarray(series, dtype=float)
    k = np.flatnonzero(a > threshold)
    return float((k[0] + 1) * dt) if len(k) else None


def _nanmax(a) -> float:
    a = np.asarray(a, dtype=float)
    return float(np.nanmax(a)) if a.size and np.any(np.isfinite(a)) else math.nan


def _nanmean(a) -> float:
    a = np.asarray(a, dtype=float)
    return float(np.nanmean(a)) if a.size and np.any(np.isfinite(a)) else math.nan


def _loop(run: JointRun, spec, step, errors, positions) -> JointRun:
    """Step ``steps`` times, timing ``step()`` only; record the joint errors and the ground check."""
    n = run.steps
    ms, drift, mean, below = (np.full(n, np.nan) for _ in range(4))
    ground = GroundCheck(spec)
    k = 0
    err = np.zeros(0)
    bar = _bar(n, f"{spec.name} {run.engine}")
    try:
        for k in range(n):
            t0 = time.perf_counter()
            step()
            ms[k] = 1000.0 * (time.perf_counter() - t0)
            err = np.asarray(errors(), dtype=float)
            drift[k] = _nanmax(err) if err.size else 0.0
            mean[k] = _nanmean(err) if err.size else 0.0
            below[k] = ground(positions())
            bar.update(1)
        k = n
    except Exception as e:
        run.error = f"{type(e).__name__} after {k} steps: {e}"
    finally:
        bar.close()
    run.ms, run.drift, run.mean_drift, run.below = ms[:k], drift[:k], mean[:k], below[:k]
    run.final_errors = err
    return run


def run_tumble(spec, solver: str, steps: int, warmup: int = WARMUP_STEPS) -> JointRun:
    """``spec`` under tumble's ``solver`` for ``steps`` steps of ``spec.dt``."""
    run = JointRun(spec.name, f"tumble ({solver})", solver, dict(spec.settings), spec.dt, steps, link_length(spec))
    try:
        w = warmed_up_world(lambda: spec.build(solver=solver), spec.dt, warmup)
    except Exception as e:
        run.error = f"{type(e).__name__}: {e}"
        return run
    return _loop(run, spec, lambda: w.step(spec.dt), w.joint_errors, lambda: w.positions)


def run_peer(peer_cls, spec, steps: int) -> JointRun:
    """``spec`` in a peer engine (``benchmarks/peers``) for ``steps`` steps."""
    from benchmarks.peers import Unsupported

    try:
        peer = peer_cls()
    except Exception as e:
        return JointRun(spec.name, getattr(peer_cls, "__name__", "peer"), None, {}, spec.dt, steps,
                        error=f"{type(e).__name__}: {e}")
    run = JointRun(spec.name, peer.name, None, {}, spec.dt, steps, link_length(spec))
    try:
        peer.build(spec)
    except Unsupported as e:
        run.error = f"unsupported: {e}"
        return run
    except Exception as e:
        run.error = f"{type(e).__name__}: {e}"
        return run
    run.settings = dict(peer.settings)
    run.notes = list(peer.notes)
    try:
        _loop(run, spec, peer.step, peer.joint_errors, lambda: peer.state()[0])
    finally:
        try:
            peer.close()
        except Exception:
            pass
    return run


# ------------------------------------------------------------------------------------------------
# report

HEADERS = ["engine", "ms/step", "p95 ms", "max ms", f"vs {REFERENCE}", "max drift [mm]", "final drift [mm]",
           "mean final drift [mm]", "max drift / link", "final drift / link",
           f"drift > {1000 * DRIFT_THRESHOLD:g} mm from [s]", "centre below ground (max / end)"]


def _reference_ms(summaries: list[dict]) -> float | None:
    for s in summaries:
        if s["engine"] == REFERENCE and s.get("ms_mean") is not None:
            return s["ms_mean"]
    return None


def table_rows(summaries: list[dict]) -> list[list[str]]:
    """One row per engine (``HEADERS``); the relative columns are '-' without a link length, the ratio
    '-' without a tumble (pgs) run."""
    ref = _reference_ms(summaries)
    rows = []
    for s in summaries:
        if s.get("ms_mean") is None:
            rows.append([s["engine"], f"failed: {s.get('error') or 'no steps'}"] + [""] * (len(HEADERS) - 2))
            continue
        ratio = f"{s['ms_mean'] / ref:.3g}x" if ref else "-"
        rows.append([s["engine"], fmt(s["ms_mean"]), fmt(s["ms_p95"]), fmt(s["ms_max"]), ratio,
                     fmt(s["drift_max"], 3, 1000), fmt(s["drift_final"], 3, 1000), fmt(s["drift_mean_final"], 3, 1000),
                     fmt(s.get("drift_max_rel")), fmt(s.get("drift_final_rel")),
                     "never" if s.get("t_drift_over") is None else fmt(s["t_drift_over"]),
                     f"{s['below_ground_max']} / {s['below_ground_final']}"])
    return rows


def scene_section(name: str, spec_info: dict, summaries: list[dict]) -> list[str]:
    md = [f"## {name}", "", spec_info.get("description", ""), "",
          f"{spec_info['bodies']} bodies, {spec_info['joints']} joints ({spec_info['joint_kinds']}), "
          f"{spec_info['steps']} steps of dt = {spec_info['dt']:.6g} s ({spec_info['steps'] * spec_info['dt']:g} s), "
          f"scene settings `{spec_info['settings']}`, parameters `{spec_info['params']}`"
          + (f", link length {spec_info['link_length']:g} m" if spec_info.get("link_length") else ""), "",
          md_table(HEADERS, table_rows(summaries)), ""]
    for s in summaries:
        if s.get("error") and s.get("ms_mean") is not None:
            md.append(f"- {s['engine']}: stopped early: {s['error']}")
        if s.get("broken_joints"):
            md.append(f"- {s['engine']}: {s['broken_joints']} joints broken or removed at the end")
        if s.get("solver") is None and s.get("settings"):
            md.append(f"- {s['engine']} settings: `{s['settings']}`")
    md.append("")
    return md


def findings(data: dict) -> list[str]:
    """Pass-through lines computed from the numbers (no judgement beyond the comparison)."""
    out = []
    for name, d in data.items():
        sums = [s for s in d["runs"] if s.get("ms_mean") is not None]
        if not sums:
            continue
        ref = _reference_ms(sums)
        by_drift = sorted(sums, key=lambda s: (math.inf if math.isnan(s["drift_max"]) else s["drift_max"]))
        drift = ", ".join(f"{s['engine']} {fmt(s['drift_max'], 3, 1000)} mm" for s in by_drift)
        line = f"- **{name}**: max joint drift (smallest first): {drift}"
        if d.get("link_length"):
            line += f" (link length {1000 * d['link_length']:g} mm)"
        out.append(line + ".")
        if ref:
            out.append(f"- **{name}**: mean ms/step relative to {REFERENCE} ({fmt(ref)} ms): "
                       + ", ".join(f"{s['engine']} {s['ms_mean'] / ref:.3g}x" for s in sums) + ".")
        over = [f"{s['engine']} {fmt(s['t_drift_over'])} s" for s in sums if s.get("t_drift_over") is not None]
        if over:
            out.append(f"- **{name}**: a joint first drifts more than {1000 * DRIFT_THRESHOLD:g} mm at: "
                       + ", ".join(over) + (" (never: " + ", ".join(s["engine"] for s in sums
                                                                    if s.get("t_drift_over") is None) + ")"
                                            if len(over) < len(sums) else "") + ".")
        fell = [s["engine"] for s in sums if s["below_ground_max"] > 0]
        out.append(f"- **{name}**: a body's centre below the ground plane at some step: "
                   + (", ".join(fell) if fell else "none, in every engine") + ".")
    return out


def settings_lines(meta: dict, peer_notes: dict) -> list[str]:
    md = ["## Settings and approximations", "",
          "- **Same scene everywhere.** Each engine gets the identical `SceneSpec`: bodies, masses and diagonal "
          "inertias, joints (anchors and axes in world coordinates at the start pose), dt (the scene's, 1/60 s) and "
          "solver iterations (the scene's `iterations`, 10: tumble's PGS sweeps, PyBullet's `numSolverIterations`, "
          "MuJoCo's `iterations`), friction; peers map the spec as documented in `benchmarks/peers/*.py`.",
          "- **Maximal coordinates in every engine.** All bodies stay free rigid bodies and every joint is a "
          "constraint between two of them (PyBullet: `createConstraint` with `useMaximalCoordinates`; MuJoCo: "
          "`<freejoint/>` bodies with `<equality>` constraints), as in tumble; no engine uses a reduced-coordinate "
          "articulation, which would have no drift at all.",
          "- **Ball** joints: PyBullet `JOINT_POINT2POINT` (maxForce 1e9 N; the default 500 N would let chains sag), "
          "MuJoCo `<connect>`.",
          "- **Hinge** joints (ragdoll spine, neck, elbows, knees): approximated in both peers by two point-to-point "
          "constraints at `anchor -+ h axis`, with h = half the smaller bounding radius of the two links "
          "(`benchmarks.peers.hinge_arm`): the same 5 constrained degrees of freedom, with the angular error "
          "weighted by h. PyBullet refuses `JOINT_REVOLUTE` between maximal-coordinate bodies; a MuJoCo hinge joint "
          "needs the kinematic tree. **Hinge limits are not modelled in the peers** (their elbows and knees bend "
          "freely both ways; tumble enforces the limits), and motors would not be either.",
          "- **Drift measure.** The drift of every engine is the distance between the joint's two anchor points, "
          "each carried by its body from the start pose (`World.joint_errors()`; the peers: the same formula on "
          "their body poses, `benchmarks.peers.anchor_errors`). For the peers' hinges it is measured at the "
          "definition's anchor, i.e. the mean of their two constraint points' errors. Angular errors of the "
          "hinges are not included.",
          "- **Collisions between joined bodies** are off in every engine (tumble: the joints' `collide=False`; "
          "PyBullet: `setCollisionFilterPair`; MuJoCo: `<contact><exclude>`); other pairs (links of a chain two "
          "apart, ragdoll against ragdoll) collide.",
          "- **Softness.** MuJoCo's equality constraints and contacts are soft (default `solref`/`solimp`, time "
          "constant clamped to 2 dt): a steady stretch under load is part of its model, there is no Baumgarte "
          "fraction to match. PyBullet corrects joint error with `erp` = 0.2 (tumble's `baumgarte`), contacts "
          "without split impulse.",
          "- tumble `shock` runs the same scene with its shock-propagation solver defaults "
          "(`tumble.settings`); `iterations` as in the scene.", ""]
    if peer_notes:
        md += ["Notes reported by the peers:", ""]
        for engine, notes in peer_notes.items():
            for n in notes:
                md.append(f"- {engine}: {n}")
        md.append("")
    return md


def drift_png(path: Path, runs_by_scene: dict) -> str | None:
    """Joint drift (max over joints, mm, log scale) over simulated time, one panel per scene."""
    scenes = [s for s, runs in runs_by_scene.items() if any(r.ok for r in runs)]
    if not scenes:
        return None
    plt = pyplot()
    fig, axes = plt.subplots(1, len(scenes), figsize=(6.5 * len(scenes), 4.2), squeeze=False)
    for ax, name in zip(axes[0], scenes):
        for r in runs_by_scene[name]:
            if not r.ok:
                continue
            t = r.dt * np.arange(1, len(r.drift) + 1)
            y = np.maximum(1000.0 * r.drift, DRIFT_FLOOR_MM)
            ax.plot(t, y, lw=1.2, label=r.engine)
        ax.set_yscale("log")
        ax.set_ylim(bottom=0.5 * DRIFT_FLOOR_MM)
        ax.set_xlabel("simulated time [s]")
        ax.set_ylabel(f"max joint drift [mm] (floor {DRIFT_FLOOR_MM:g})")
        link = next((r.link for r in runs_by_scene[name] if r.link), None)
        if link:
            ax.axhline(1000.0 * link, color="0.5", ls="--", lw=0.8, label=f"link length {1000 * link:g} mm")
        ax.set_title(name)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    return str(save_figure(fig, path))


def write_report(out: Path, tag: str, meta: dict, spec_infos: dict, runs_by_scene: dict) -> dict:
    """Write ``joints.md``, ``joints.json`` and ``joints.png`` into ``out``; returns the JSON data."""
    out.mkdir(parents=True, exist_ok=True)
    png = drift_png(out / "joints.png", runs_by_scene)
    data, peer_notes = {}, {}
    for name, runs in runs_by_scene.items():
        data[name] = {**spec_infos[name], "runs": [r.summary() for r in runs],
                      "series": {r.engine: {"drift_mm": rounded_series(r.drift, 4, 1000.0),
                                            "mean_drift_mm": rounded_series(r.mean_drift, 4, 1000.0),
                                            "ms": rounded_series(r.ms, 4)} for r in runs if r.ok}}
        for r in runs:
            if r.solver is None and r.notes:
                peer_notes.setdefault(r.engine, [])
                peer_notes[r.engine] += [n for n in r.notes if n not in peer_notes[r.engine]]
    lines = findings({k: v for k, v in data.items()})
    md = [f"# tumble joint benchmarks: `{tag}`", "",
          "`chain50` and `ragdolls` in tumble (solvers pgs and shock) side by side with PyBullet and MuJoCo, the "
          "same dt and solver iterations: ms/step, its ratio to tumble (pgs), and joint drift (anchor separation) "
          "for each engine.", ""]
    md += setup_lines(meta, "shrunken scenes, a few steps")
    md += [f"- tumble solvers: {', '.join(meta['solvers'])}; peers: {', '.join(meta['peers']) or 'none'}; "
           f"wall time {meta['wall_s']:.0f} s",
           f"- warm-up (compile or load kernels): {meta['warmup']}",
           f"- only `step()` is timed; tumble is warmed up on a throw-away copy of each scene ({WARMUP_STEPS} steps) "
           "first; the joint errors and the ground check are read after each step, outside the timing", "",
           "Columns: ms/step = mean wall time of one `step()`; vs tumble (pgs) = that mean over tumble (pgs)'s; max "
           "drift = largest anchor separation of any joint at any step; final drift = largest after the last step; "
           "mean final drift = mean over the joints after the last step; / link = relative to the chain's link "
           f"length; drift > {1000 * DRIFT_THRESHOLD:g} mm from = simulated time when some joint first came that far "
           "apart; centre below ground = dynamic bodies whose centre is below the ground plane, i.e. that sank or "
           "tunnelled at least half-way through it (largest count at "
           "any step / count at the end).", "",
           "## Findings", ""]
    md += lines or ["- (no engine completed a run)"]
    md.append("")
    if png:
        md += [f"![joint drift over time, every engine]({Path(png).name})", ""]
    md += settings_lines(meta, peer_notes)
    for name in runs_by_scene:
        md += scene_section(name, spec_infos[name], data[name]["runs"])
    write_markdown(out / "joints.md", md + [""])
    payload = {"meta": meta, "findings": lines, **data}
    write_json(out / "joints.json", payload)
    return payload


def spec_info(spec, steps: int) -> dict:
    kinds: dict = {}
    for j in spec.joints:
        kinds[j.kind] = kinds.get(j.kind, 0) + 1
    return {"description": spec.description, "bodies": len(spec.bodies), "joints": len(spec.joints),
            "joint_kinds": ", ".join(f"{v} {k}" for k, v in kinds.items()) or "none", "steps": steps,
            "dt": spec.dt, "settings": dict(spec.settings), "params": dict(spec.params or {}),
            "link_length": link_length(spec)}


# ------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = benchmark_arguments(__doc__.split("\n")[0], "small scenes, short runs (smoke test)",
                             "Numba threads for tumble (default: Numba's)")
    ap.add_argument("--scenes", default=",".join(SCENES), help="comma-separated scene names")
    ap.add_argument("--no-peers", action="store_true", help="tumble only")
    args = ap.parse_args(argv)
    start = start_run(args)
    import tumble.scenes as scenes
    from tumble.settings import SOLVER_SETTINGS

    names = [s.strip() for s in args.scenes.split(",") if s.strip()]
    present = scenes.names()
    for n in names:
        if n not in present:
            log(f"scene {n!r} is not in tumble.scenes.names(): skipped")
    names = [n for n in names if n in present]
    solvers = [s for s in SOLVERS if s in SOLVER_SETTINGS]
    peers = []
    if not args.no_peers:
        from benchmarks.peers import available

        peers = available()
    warm = warm_up_solvers(solvers)
    runs_by_scene, infos = {}, {}
    for name in names:
        spec = make_spec(name, args.quick)
        steps = max(1, int(round(float(spec.seconds) / spec.dt)))
        log(f"\n== {name}: {len(spec.bodies)} bodies, {len(spec.joints)} joints, {steps} steps of {spec.dt:.6g} s")
        infos[name] = spec_info(spec, steps)
        runs = []
        for s in solvers:
            runs.append(run_tumble(spec, s, steps))
        for P in peers:
            try:
                runs.append(run_peer(P, spec, steps))
            except Exception as e:                   # report, keep going
                log(traceback.format_exc())
                runs.append(JointRun(name, getattr(P, "__name__", "peer"), None, {}, spec.dt, steps,
                                     error=f"{type(e).__name__}: {e}"))
        for r in runs:
            s = r.summary()
            log(f"  {r.engine:24s} " + (f"{s['ms_mean']:8.2f} ms/step  max drift {1000 * s['drift_max']:9.2f} mm  "
                                       f"final {1000 * s['drift_final']:9.2f} mm" if r.ok else "")
                + (f"  ERROR {r.error}" if r.error else ""))
        runs_by_scene[name] = runs
    meta = run_meta(start, "benchmarks/joints.py", argv, args.quick, solvers=solvers,
                    peers=[getattr(p, "__name__", str(p)) for p in peers], scenes=names, warmup=warmup_text(warm))
    out = start.out
    write_report(out, start.tag, meta, infos, runs_by_scene)
    log(f"\nwrote {out / 'joints.md'}, {out / 'joints.json'} and {out / 'joints.png'} in {start.elapsed():.0f} s")
    print(out / "joints.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
