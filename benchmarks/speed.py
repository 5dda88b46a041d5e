"""Speed where users feel it (issue 19): every row of the issue's table measured in one run, tumble
next to PyBullet and MuJoCo where the scene exists for them, the contended rows with a reproducible
busy process, and the per-stage profile of every tumble run. Writes
benchmarks/results/<machine>/speed.md and speed.json.

    .venv/bin/python benchmarks/speed.py [--quick] [--cases well,pile300,...] [--threads N]

The rows (ms per step unless said; ``goal`` is the issue's):

* ``well_busy`` -- ``balls_well`` (324 balls, dt 1/240) under pgs, quiet and with one core busy: goal
  contended <= 1.5x tumble's own quiet figure; PyBullet and MuJoCo under the same load.
* ``pile300_busy`` -- ``pile1000(count=300)`` (dt 1/60) under pgs, the same measurement and goal.
* ``tower_roof`` -- under shock, dt 0.01, the whole 16 s: mean before the block's spawn (goal <= 10),
  mean over the run (goal <= 12) and the worst step (goal <= 40).
* ``large_pyramid`` -- 5050 cubes, dt 1/60, shock and pgs (does it stand?): goal a solver that holds it
  at <= 44.
* ``ragdolls`` -- 20 x 11 capsules, dt 1/60, 10 iterations, pgs: goal <= PyBullet.
* ``chain50`` -- pgs: goal <= 2x PyBullet.
* ``well_impulse`` -- ``balls_well`` under impulse: goal <= PyBullet (the PyBullet figure of the
  ``well_busy`` row's quiet phase, the same scene).
* ``pile1000`` -- dt 1/100 (the issue's; the scene's own is 1/60) under pgs, shock, impulse and
  jacobi (gauss, a QP per step, is left out): goal every solver <= PyBullet.
* ``cage2816`` -- I-CAGE2816 (004 §5.1) under impulse: ms per 33 1/3 ms of simulation (8 steps):
  goal <= 33 (real time); the thesis' 1482 ms (i7-940, 4 threads) for reference.

Timing: only ``step()`` is timed (``time.perf_counter``), after compiling on a throw-away copy of the
scene. Quiet and contended figures of a row come from one world stepped in alternating blocks
(quiet, busy, busy with one thread; ``ROUNDS`` rounds, the median of each), so that the load of
other processes on a shared machine falls on all of them alike. The busy process is one
``multiprocessing`` child spinning on pure-Python arithmetic (as ``fixed_cost.py``): it wants one core
for as long as a contended block runs. The CPU other processes used (busy process excluded: it is
this run's child and is counted as its own) is reported per row and for the whole run.

Per-stage profile: every tumble run keeps the mean of ``World.profile`` over its timed steps, and
then steps ``PROFILE_STEPS`` more with ``World.profile_stages = True`` (pgs fuses its substep loop
into one entry otherwise); tower_roof's is split before and after the block's spawn.
"""

from __future__ import annotations

import math
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.peers import Unsupported, available  # noqa: E402
from benchmarks.report import (  # noqa: E402
    benchmark_arguments,
    cpu_mark,
    fmt,
    log,
    md_table,
    other_cores,
    run_meta,
    set_numba_threads,
    setup_lines,
    start_run,
    write_json,
    write_markdown,
)

CASES = ["well_busy", "pile300_busy", "tower_roof", "large_pyramid", "ragdolls", "chain50", "well_impulse",
         "pile1000", "cage2816"]

#: Alternating quiet / busy rounds of a contended row (median of each).
ROUNDS = 3
#: Steps with ``profile_stages = True`` after a timed run (the per-stage profile).
PROFILE_STEPS = 20
#: Steps of the throw-away copy before a timed run of the smaller scenes (piles: past the first contacts;
#: large_pyramid and tower_roof take 2, their contacts exist from the start).
WARM_STEPS = 60
#: Contended goal of the issue: contended ms/step <= this times tumble's quiet figure.
BUSY_FACTOR = 1.5


class Budget:
    """Steps of every row (full run or ``--quick``)."""

    def __init__(self, quick: bool):
        self.quick = quick
        q = quick
        self.block = 20 if q else 200                # steps per quiet / busy block (well, pile300)
        self.rounds = 1 if q else ROUNDS
        self.pyramid_steps = 2 if q else 40
        self.joint_steps = 10 if q else 360          # ragdolls, chain50 (6 s at 1/60)
        self.well_impulse_steps = 10 if q else 720   # 3 s at 1/240
        self.pile_steps = 10 if q else 300           # 3 s at 1/100
        self.peer_steps = 10 if q else 300           # peers' steps on tower_roof (before impact)
        self.cage_wall_cap = 5.0 if q else 90.0      # [s] of timed wall time for I-CAGE2816
        self.cage_seconds = 0.1 if q else 8.0
        self.profile_steps = 2 if q else PROFILE_STEPS

    def spec(self, name: str, **params):
        """The scene's spec; in quick mode a small version of the large scenes (QUICK_PARAMS)."""
        import tumble.scenes as sc

        if self.quick:
            params = {**params, **QUICK_PARAMS.get(name, {})}
        return sc.spec(name, **params)


#: Small versions of the scenes for ``--quick`` (a smoke run; the tower is benchmarks/stacking.py's quick one).
QUICK_PARAMS = {"balls_well": {"balls": 30}, "pile1000": {"count": 60}, "large_pyramid": {"base": 6},
                "ragdolls": {"count": 2}, "chain50": {"links": 8},
                "tower_roof": {"courses": 4, "per_course": 6, "impact_time": 0.2, "block_drop": 0.05,
                               "cannon_time": 0.25, "seconds": 0.4}}


# ------------------------------------------------------------------------------------------------
# the busy process

def _spin(stop):
    """The busy process: one core of pure Python arithmetic until told to stop."""
    x = 0
    while not stop.is_set():
        for i in range(10000):
            x = (x + i) % 1000003


class Busy:
    """``with Busy():`` one spinning child process for the duration of the block."""

    def __enter__(self):
        self.stop = multiprocessing.Event()
        self.proc = multiprocessing.Process(target=_spin, args=(self.stop,), daemon=True)
        self.proc.start()
        time.sleep(0.05)                     # let it get going
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.proc.join()
        return False


BUSY_TEXT = ("one Python process (a `multiprocessing` child of this run) spinning on integer arithmetic, which "
             "wants one core for as long as the contended block runs")


# ------------------------------------------------------------------------------------------------
# stepping and timing

def timed_steps(step, steps: int) -> np.ndarray:
    """ms of each of ``steps`` calls of ``step()``."""
    ms = np.empty(steps)
    for k in range(steps):
        t = time.perf_counter()
        step()
        ms[k] = 1000.0 * (time.perf_counter() - t)
    return ms


def tumble_world(spec, solver: str, settings: dict | None = None, warm: int = 2):
    """A fresh world of ``spec`` under ``solver`` after stepping a throw-away copy ``warm`` times: the
    kernels it needs are compiled or loaded before anything is timed (a pile needs its first contacts
    for the parallel twins above their work size: a jacobi step that loaded one took 0.9 s)."""
    w = spec.build(solver=solver, **(settings or {}))
    for _ in range(warm):
        w.step(spec.dt)
    del w
    return spec.build(solver=solver, **(settings or {}))


class ProfileSum:
    """Mean of ``World.profile`` over the steps it observes."""

    def __init__(self):
        self.sum: dict[str, float] = {}
        self.n = 0

    def add(self, profile: dict) -> None:
        for k, v in profile.items():
            self.sum[k] = self.sum.get(k, 0.0) + float(v)
        self.n += 1

    def mean(self) -> dict:
        return {k: v / self.n for k, v in self.sum.items()} if self.n else {}


def stage_profile(w, dt: float, steps: int) -> dict:
    """Mean ms per stage over ``steps`` more steps with ``profile_stages = True`` (restored after)."""
    if steps <= 0:
        return {}
    old = w.profile_stages
    w.profile_stages = True
    p = ProfileSum()
    try:
        for _ in range(steps):
            w.step(dt)
            p.add(w.profile)
    finally:
        w.profile_stages = old
    return p.mean()


def run_tumble(spec, solver: str, steps: int, budget: Budget, settings: dict | None = None,
               metrics: bool = False, warm: int = 2) -> dict:
    """``steps`` timed steps of ``spec`` under ``solver``: mean / median / max ms, the mean profile, the
    per-stage profile after, the CPU others used, and (``metrics``) SceneMetrics (standing)."""
    from tumble.scenes.metrics import SceneMetrics

    log(f"  tumble {solver} {spec.name} ({steps} steps) ...")
    w = tumble_world(spec, solver, settings, min(warm, steps))
    m = SceneMetrics(spec) if metrics else None
    prof = ProfileSum()
    ms = np.empty(steps)
    mark, t0 = cpu_mark(), time.perf_counter()
    for k in range(steps):
        t = time.perf_counter()
        w.step(spec.dt)
        ms[k] = 1000.0 * (time.perf_counter() - t)
        prof.add(w.profile)
        if m is not None:
            m.observe(w)
    others = other_cores(mark, time.perf_counter() - t0)
    out = {"engine": f"tumble {solver}", "solver": solver, "steps": steps, "ms_mean": float(ms.mean()),
           "ms_median": float(np.median(ms)), "ms_max": float(ms.max()), "profile": prof.mean(),
           "other_cores": others, "counters": {k: v for k, v in w.counters.items() if isinstance(v, (int, float))}}
    out["stage_profile"] = stage_profile(w, spec.dt, budget.profile_steps)
    if m is not None:
        r = m.result()
        out["standing"] = r.get("standing")
        out["max_drift"] = r.get("max_drift")
    log(f"    {out['ms_mean']:.3f} ms/step (max {out['ms_max']:.1f}; others used {others:.2f} cores)")
    return out


def run_peer(peer_cls, spec, steps: int, metrics: bool = False, wall_cap: float | None = None) -> dict:
    """``steps`` timed steps of the peer (stopping after ``wall_cap`` s of stepping)."""
    from tumble.scenes.metrics import SceneMetrics

    peer = peer_cls()
    try:
        peer.build(spec)
    except Unsupported as e:
        return {"engine": peer.name, "error": f"unsupported: {e}"}
    log(f"  {peer.name} {spec.name} ({steps} steps) ...")
    m = SceneMetrics(spec) if metrics else None
    ms = []
    mark, t0 = cpu_mark(), time.perf_counter()
    try:
        for _ in range(steps):
            t = time.perf_counter()
            peer.step()
            ms.append(1000.0 * (time.perf_counter() - t))
            if m is not None:
                m.observe_arrays(peer.time, *peer.state(), peer.max_penetration())
            if wall_cap is not None and sum(ms) > 1000.0 * wall_cap:
                break
    finally:
        peer.close()
    a = np.asarray(ms)
    out = {"engine": peer.name, "steps": len(a), "ms_mean": float(a.mean()), "ms_median": float(np.median(a)),
           "ms_max": float(a.max()), "other_cores": other_cores(mark, time.perf_counter() - t0)}
    if m is not None:
        r = m.result()
        out["standing"] = r.get("standing")
        out["max_drift"] = r.get("max_drift")
    log(f"    {out['ms_mean']:.3f} ms/step")
    return out


def peers_on(spec, steps: int, metrics: bool = False, wall_cap: float | None = None) -> list[dict]:
    out = []
    for P in available():
        try:
            out.append(run_peer(P, spec, steps, metrics, wall_cap))
        except Exception as e:                              # report and go on
            out.append({"engine": getattr(P, "__name__", "peer"), "error": f"{type(e).__name__}: {e}"})
    return out


# ------------------------------------------------------------------------------------------------
# the rows

def contended(spec, solver: str, budget: Budget) -> dict:
    """One world of ``spec`` stepped in alternating blocks: quiet, busy, busy on one Numba thread; the
    peers likewise (quiet, busy). Medians of the rounds' block means."""
    import numba

    threads = numba.get_num_threads()
    w = tumble_world(spec, solver)
    step = lambda: w.step(spec.dt)                           # noqa: E731
    # an untimed block on each thread count first: the first contacts load kernels (parallel twins
    # above their work size) that the throw-away copy's two steps did not reach
    timed_steps(step, budget.block // 2)
    set_numba_threads(1)
    timed_steps(step, budget.block // 2)
    set_numba_threads(threads)
    blocks = {"quiet": [], "busy": [], "busy_1thread": [], "quiet_1thread": []}
    others = {"quiet": [], "busy": []}
    prof = {"quiet": ProfileSum(), "busy": ProfileSum()}
    for r in range(budget.rounds):
        for label in ("quiet", "busy", "busy_1thread", "quiet_1thread"):
            set_numba_threads(1 if label.endswith("1thread") else threads)
            mark, t0 = cpu_mark(), time.perf_counter()
            if label.startswith("busy"):
                with Busy():
                    ms = timed_steps(step, budget.block)
            else:
                ms = timed_steps(step, budget.block)
            if label in others:
                others[label].append(other_cores(mark, time.perf_counter() - t0))
                prof[label].add(w.profile)
            blocks[label].append(float(ms.mean()))
            log(f"  {spec.name} {solver} round {r + 1} {label:13s} {ms.mean():.3f} ms/step")
    set_numba_threads(threads)
    out = {"engine": f"tumble {solver}", "threads": threads, "block_steps": budget.block, "rounds": budget.rounds,
           **{f"ms_{k}": statistics.median(v) for k, v in blocks.items()}, "blocks": blocks,
           "other_cores_quiet": statistics.median(others["quiet"]),
           "stage_profile": stage_profile(w, spec.dt, budget.profile_steps)}
    peers = []
    for P in available():
        try:
            peer = P().build(spec)
        except Unsupported as e:
            peers.append({"engine": P.__name__, "error": f"unsupported: {e}"})
            continue
        for _ in range(budget.block // 4):
            peer.step()
        pq, pb = [], []
        for _ in range(budget.rounds):
            pq.append(float(timed_steps(peer.step, budget.block).mean()))
            with Busy():
                pb.append(float(timed_steps(peer.step, budget.block).mean()))
        peer.close()
        peers.append({"engine": peer.name, "ms_quiet": statistics.median(pq), "ms_busy": statistics.median(pb)})
        log(f"  {spec.name} {peer.name}: quiet {peers[-1]['ms_quiet']:.3f}, busy {peers[-1]['ms_busy']:.3f} ms/step")
    out["peers"] = peers
    return out


def row_contended(name: str, spec, budget: Budget, issue_now: str) -> dict:
    d = contended(spec, "pgs", budget)
    ratio = d["ms_busy"] / d["ms_quiet"]
    return {"case": name, "data": d, "issue_now": issue_now,
            "tumble": f"pgs {d['ms_busy']:.3g} busy, {d['ms_quiet']:.3g} quiet ({ratio:.2f}x); one thread "
                      f"{d['ms_busy_1thread']:.3g} busy, {d['ms_quiet_1thread']:.3g} quiet",
            "peers": {p["engine"]: (f"{p['ms_busy']:.3g} busy, {p['ms_quiet']:.3g} quiet "
                                    f"({p['ms_busy'] / p['ms_quiet']:.2f}x)" if "error" not in p
                                    else p["error"]) for p in d["peers"]},
            "goal": f"busy <= {BUSY_FACTOR}x tumble's quiet", "met": bool(ratio <= BUSY_FACTOR)}


def case_well_busy(budget, ctx):
    r = row_contended("balls_well (324 balls, dt 1/240, pgs), one core busy", budget.spec("balls_well"), budget,
                      "13.3 busy, 0.64 quiet; PyBullet 1.8 busy")
    ctx["well_peers_quiet"] = {p["engine"]: p.get("ms_quiet") for p in r["data"]["peers"]}
    return [r]


def case_pile300_busy(budget, ctx):
    return [row_contended("pile1000(count=300) (dt 1/60, pgs), one core busy", budget.spec("pile1000", count=300),
                          budget, "14 busy (1.3 with one thread)")]


def tower_spec(budget):
    return budget.spec("tower_roof")


def case_tower_roof(budget, ctx):
    from tumble.scenes.metrics import SceneMetrics  # noqa: F401  (imported for the same warm-up as the others)

    spec = tower_spec(budget)
    steps = int(round(spec.seconds / spec.dt))
    st = spec.spawn_times()
    st = st[st > 0]
    pre = steps if len(st) == 0 else max(1, min(steps, int(math.floor(float(st.min()) / spec.dt + 1e-9))))
    log(f"  tumble shock tower_roof ({steps} steps, {pre} before the block) ...")
    w = tumble_world(spec, "shock")
    ms = np.empty(steps)
    p_pre, p_post = ProfileSum(), ProfileSum()
    contacts = np.zeros(steps)
    mark, t0 = cpu_mark(), time.perf_counter()
    for k in range(steps):
        t = time.perf_counter()
        w.step(spec.dt)
        ms[k] = 1000.0 * (time.perf_counter() - t)
        (p_pre if k < pre else p_post).add(w.profile)
        contacts[k] = float(w.counters.get("contacts", math.nan))
    others = other_cores(mark, time.perf_counter() - t0)
    worst = int(np.argmax(ms))
    per_s = max(1, int(round(1.0 / spec.dt)))
    d = {"steps": steps, "pre_steps": pre, "ms_pre": float(ms[:pre].mean()), "ms_mean": float(ms.mean()),
         "ms_post": float(ms[pre:].mean()) if steps > pre else math.nan, "ms_max": float(ms.max()),
         "worst_step": worst, "worst_t": (worst + 1) * spec.dt, "steps_over_40": int((ms > 40.0).sum()),
         "profile_pre": p_pre.mean(), "profile_post": p_post.mean(), "other_cores": others,
         "ms_per_second": [float(ms[i:i + per_s].mean()) for i in range(0, steps, per_s)],
         "contacts_max": float(np.nanmax(contacts))}
    log(f"    before impact {d['ms_pre']:.2f}, whole {d['ms_mean']:.2f}, worst {d['ms_max']:.1f} ms "
        f"(t {d['worst_t']:.2f} s)")
    peers = peers_on(spec, min(budget.peer_steps, pre), wall_cap=30.0)
    ctx["tower_peers"] = peers
    pe = {p["engine"]: (f"{p['ms_mean']:.3g} (first {p['steps']} steps)" if "error" not in p else p["error"])
          for p in peers}
    return [{"case": "tower_roof under shock, before impact (0-9.68 s)", "data": d, "issue_now": "14.3",
             "tumble": f"shock {d['ms_pre']:.3g}", "peers": pe, "goal": "<= 10", "met": bool(d["ms_pre"] <= 10.0)},
            {"case": f"tower_roof under shock, whole {spec.seconds:g} s with the collapse", "data": d,
             "issue_now": "23.8 (collapse phase ~40)",
             "tumble": f"shock {d['ms_mean']:.3g} mean, after the spawn {d['ms_post']:.3g}, worst {d['ms_max']:.3g} "
                       f"(t {d['worst_t']:.2f} s), {d['steps_over_40']} steps over 40",
             "peers": {}, "goal": "<= 12 mean, no step over 40",
             "met": bool(d["ms_mean"] <= 12.0 and d["ms_max"] <= 40.0)}]


def case_large_pyramid(budget, ctx):
    spec = budget.spec("large_pyramid")
    n = budget.pyramid_steps
    runs = [run_tumble(spec, s, n, budget, metrics=True) for s in ("shock", "pgs")]
    peers = peers_on(spec, n, metrics=True)

    def cell(r):
        return f"{r['ms_mean']:.3g}, " + ("stands" if r.get("standing") else "falls")

    ok = any(r.get("standing") and r["ms_mean"] <= 44.0 for r in runs)
    return [{"case": f"large_pyramid (5050 cubes, dt 1/60, {n} steps)", "data": {"tumble": runs, "peers": peers},
             "issue_now": "shock 259, stands; pgs 53, falls; Box3D 21.9 (C, 4 substeps), stands",
             "tumble": "; ".join(f"{r['solver']} {cell(r)}" for r in runs),
             "peers": {p["engine"]: (cell(p) if "error" not in p else p["error"]) for p in peers},
             "goal": "a solver that holds it at <= 44", "met": bool(ok)}]


def _vs_pybullet(name, spec, solver, steps, budget, factor, issue_now, goal):
    # the throw-away copy runs the whole timed run: the jointed scenes meet their first contacts late
    # (ragdolls at steps 33 and 98, chain50 at 184), and the contact kernels loaded from the Numba cache
    # there (50-150 ms per step) were in the timed mean: chain50 1.45 ms/step on the first run of a
    # process, 1.01 on the next (CPU, 360 steps)
    r = run_tumble(spec, solver, steps, budget, warm=steps)
    peers = peers_on(spec, steps)
    pb = next((p["ms_mean"] for p in peers if p["engine"].startswith("pybullet") and "error" not in p), None)
    return {"case": name, "data": {"tumble": [r], "peers": peers}, "issue_now": issue_now,
            "tumble": f"{solver} {r['ms_mean']:.3g}",
            "peers": {p["engine"]: (f"{p['ms_mean']:.3g}" if "error" not in p else p["error"]) for p in peers},
            "goal": goal, "met": None if pb is None else bool(r["ms_mean"] <= factor * pb)}


def case_ragdolls(budget, ctx):
    return [_vs_pybullet("ragdolls (20 x 11 capsules, dt 1/60, 10 it.)", budget.spec("ragdolls"), "pgs",
                         budget.joint_steps, budget, 1.0, "pgs 6.05; PyBullet 2.58", "<= PyBullet")]


def case_chain50(budget, ctx):
    return [_vs_pybullet("chain50", budget.spec("chain50"), "pgs", budget.joint_steps, budget, 2.0,
                         "pgs 1.38; PyBullet 0.22", "<= 2x PyBullet")]


def case_well_impulse(budget, ctx):
    spec = budget.spec("balls_well")
    r = run_tumble(spec, "impulse", budget.well_impulse_steps, budget, warm=WARM_STEPS)
    peers = ctx.get("well_peers_quiet")
    if peers is None:                        # well_busy not run: time the peers here
        peers = {p["engine"]: p.get("ms_mean") for p in peers_on(spec, budget.well_impulse_steps)}
        src = f"first {budget.well_impulse_steps} steps"
    else:
        src = "quiet blocks of the well_busy row"
    pb = next((v for k, v in peers.items() if k.startswith("pybullet") and v is not None), None)
    return [{"case": "324-ball well (balls_well, dt 1/240), impulse", "data": {"tumble": [r], "peers": peers},
             "issue_now": "impulse 16.7; PyBullet 1.5", "tumble": f"impulse {r['ms_mean']:.3g}",
             "peers": {k: (f"{v:.3g} ({src})" if v is not None else "-") for k, v in peers.items()},
             "goal": "<= PyBullet", "met": None if pb is None else bool(r["ms_mean"] <= pb)}]


def case_pile1000(budget, ctx):
    spec = budget.spec("pile1000")
    spec.dt = 0.01                            # the issue's dt (the scene's own is 1/60)
    n = budget.pile_steps
    runs = [run_tumble(spec, s, n, budget, warm=WARM_STEPS) for s in ("pgs", "shock", "impulse", "jacobi")]
    peers = peers_on(spec, n)
    pb = next((p["ms_mean"] for p in peers if p["engine"].startswith("pybullet") and "error" not in p), None)
    return [{"case": f"pile1000 (dt 1/100, {n} steps)", "data": {"tumble": runs, "peers": peers},
             "issue_now": "impulse 40, shock 39, pgs 4.7; PyBullet 12.9",
             "tumble": ", ".join(f"{r['solver']} {r['ms_mean']:.3g}" for r in runs),
             "peers": {p["engine"]: (f"{p['ms_mean']:.3g}" if "error" not in p else p["error"]) for p in peers},
             "goal": "every solver <= PyBullet", "met": None if pb is None else all(r["ms_mean"] <= pb for r in runs)}]


def case_cage2816(budget, ctx):
    from benchmarks.impulse import simulate

    from tumble.scenes.impulse import I_CAGE2816

    params = dict(I_CAGE2816)
    if budget.quick:                          # a small cage of the same build
        params = {"balls": 8, "boxes": 8, "per_row": 4, "gravity_time": 0.05}
    run = simulate("cage", params, {}, budget.cage_seconds, wall_cap=budget.cage_wall_cap, label="I-CAGE2816")
    if not run.ok:
        return [{"case": "I-CAGE2816 (004), impulse", "data": {"error": run.error}, "issue_now": "507",
                 "tumble": run.error, "peers": {}, "goal": "<= 33 per 33 ms simulated", "met": None}]
    sim = run.sim_ms()
    prof = {k: float(np.mean(v)) for k, v in run.profile.items()}
    d = {"steps": len(run.ms), "simulated_s": run.simulated, "ms_per_step": float(np.mean(run.ms)),
         "ms_per_sim_step": float(np.mean(sim)) if len(sim) else math.nan,
         "ms_per_sim_step_max": float(np.max(sim)) if len(sim) else math.nan, "stopped": run.stopped,
         "profile": prof, "other_cores": run.other_cores, "threads": run.threads}
    cover = f" (first {run.simulated:.3g} s of {budget.cage_seconds:g} s: wall cap {budget.cage_wall_cap:g} s)" \
        if run.stopped else ""
    return [{"case": "I-CAGE2816 (004), impulse, ms per 33 ms simulated", "data": d,
             "issue_now": "507 per 33 ms; thesis 1482 (i7-940, 4 threads)",
             "tumble": f"impulse {d['ms_per_sim_step']:.4g}{cover}", "peers": {},
             "goal": "<= 33 (real time)", "met": bool(d["ms_per_sim_step"] <= 100.0 / 3.0)}]


RUNNERS = {"well_busy": case_well_busy, "pile300_busy": case_pile300_busy, "tower_roof": case_tower_roof,
           "large_pyramid": case_large_pyramid, "ragdolls": case_ragdolls, "chain50": case_chain50,
           "well_impulse": case_well_impulse, "pile1000": case_pile1000, "cage2816": case_cage2816}


# ------------------------------------------------------------------------------------------------
# report

def _profile_line(p: dict, top: int = 8) -> str:
    if not p:
        return "-"
    total = p.get("total", sum(v for k, v in p.items() if k != "total"))
    items = sorted(((k, v) for k, v in p.items() if k != "total"), key=lambda kv: -kv[1])[:top]
    return f"total {total:.3g}: " + ", ".join(f"{k} {v:.3g}" for k, v in items)


def profile_lines(rows: list[dict]) -> list[str]:
    out = ["## Per-stage profile (ms per step)", "",
           "Mean of `World.profile` over the timed steps (pgs reports its substep loop as one `substeps` entry "
           "there), and the per-stage figures of the steps after with `profile_stages = True` (each stage timed "
           "on its own).", ""]
    seen = set()
    table = []
    for r in rows:
        d = r.get("data") or {}
        if id(d) in seen:
            continue
        seen.add(id(d))
        if "profile_pre" in d:
            table.append([r["case"].split(",")[0] + " (shock), before the block", _profile_line(d["profile_pre"])])
            table.append([r["case"].split(",")[0] + " (shock), after its spawn", _profile_line(d["profile_post"])])
        if "stage_profile" in d:
            table.append([r["case"] + f" ({d['engine']}, after the blocks)", _profile_line(d["stage_profile"])])
        if "profile" in d and "steps" in d and "ms_per_sim_step" in d:
            table.append([r["case"] + " (per time step)", _profile_line(d["profile"])])
        for t in d.get("tumble", []) if isinstance(d.get("tumble"), list) else []:
            table.append([f"{r['case'].split(' (')[0]}, {t['engine']} (timed steps)", _profile_line(t["profile"])])
            if t.get("stage_profile"):
                table.append([f"{r['case'].split(' (')[0]}, {t['engine']} (profile_stages)",
                              _profile_line(t["stage_profile"])])
    unique, labels = [], set()
    for row in table:                        # rows sharing one run (tower_roof's two) list it once
        if row[0] not in labels:
            labels.add(row[0])
            unique.append(row)
    return out + [md_table(["run", "stages (largest first)"], unique), ""]


def write_report(out: Path, meta: dict, rows: list[dict], block: int, rounds: int) -> None:
    engines = []
    for r in rows:
        for k in r["peers"]:
            e = k.split(" ")[0]
            if e not in engines:
                engines.append(e)
    head = ["case", "tumble now (ms/step)", *[f"{e}" for e in engines], "goal", "met?", "issue's figure"]
    table = []
    for r in rows:
        pe = {k.split(" ")[0]: v for k, v in r["peers"].items()}
        table.append([r["case"], r["tumble"], *[pe.get(e, "-") for e in engines], r["goal"],
                      "n/a" if r["met"] is None else ("yes" if r["met"] else "**no**"), r["issue_now"]])
    lines = ["# Speed where users feel it (issue 19)", "",
             *setup_lines(meta, "a few steps per row", busy_note="every figure is inflated by their load"), "",
             "ms per step of `step()` alone unless said, the same scene in each engine (same dt, iterations, "
             "friction). Contended rows: tumble and the peers stepped in alternating blocks of "
             f"{block} steps, quiet / with the busy process ({rounds} rounds, the median block); the "
             f"busy process: {BUSY_TEXT}. 'one thread': the same blocks with `tb.set_num_threads(1)`.", ""]
    if meta.get("busy"):
        lines += ["**This run shared the machine with other jobs** (other processes kept "
                  f"{fmt(meta.get('other_cores'))} cores busy on average): 'quiet' means without this run's busy "
                  "process, not an idle machine, and "
                  "every figure is inflated by that load. The peers' own busy / quiet ratio in the contended rows "
                  "(single-threaded engines) shows what the load alone does to a step.", ""]
    lines += [md_table(head, table), ""]
    lines += ["## CPU used by other processes, per row", "",
              md_table(["case", "other cores (average over the row's timed steps)"],
                       [[r["case"], _others(r)] for r in rows]), ""]
    lines += profile_lines(rows)
    tower = next((r["data"] for r in rows if "ms_per_second" in (r.get("data") or {})), None)
    if tower:
        lines += ["## tower_roof under shock, ms/step per simulated second", "",
                  md_table(["second", *[str(i) for i in range(len(tower["ms_per_second"]))]],
                           [["ms/step", *[f"{v:.3g}" for v in tower["ms_per_second"]]]]), ""]
    write_markdown(out / "speed.md", lines)
    write_json(out / "speed.json", {"meta": meta, "rows": rows})


def _others(r: dict) -> str:
    d = r.get("data") or {}
    if "other_cores_quiet" in d:
        return f"{fmt(d['other_cores_quiet'])} during the quiet blocks"
    if "other_cores" in d:
        return fmt(d["other_cores"])
    vals = [t.get("other_cores") for t in d.get("tumble", []) if isinstance(t, dict)] if isinstance(
        d.get("tumble"), list) else []
    return ", ".join(f"{t['engine']} {fmt(t.get('other_cores'))}" for t in d["tumble"]) if vals else "-"


def main(argv=None) -> int:
    ap = benchmark_arguments(__doc__.splitlines()[0], "a few steps per row (a smoke run)",
                             "Numba threads (default: all)")
    ap.add_argument("--cases", default=None, help=f"comma-separated: {','.join(CASES)}")
    ap.add_argument("--from-json", default=None,
                    help="rewrite speed.md next to this speed.json from its data (no stepping)")
    args = ap.parse_args(argv)
    if args.from_json:
        import json

        path = Path(args.from_json)
        data = json.loads(path.read_text())
        rows, meta = data["rows"], data["meta"]
        d0 = next((r["data"] for r in rows if "block_steps" in (r.get("data") or {})), {})
        write_report(path.parent, meta, rows, meta.get("block", d0.get("block_steps", 0)),
                     meta.get("rounds", d0.get("rounds", 0)))
        print(path.parent / "speed.md")
        return 0
    cases = CASES if not args.cases else [c.strip() for c in args.cases.split(",") if c.strip()]
    for c in cases:
        if c not in RUNNERS:
            raise SystemExit(f"unknown case {c!r}; choose from {', '.join(CASES)}")
    start = start_run(args)
    budget = Budget(args.quick)
    ctx: dict = {}
    rows: list[dict] = []
    if {"well_impulse", "pile1000", "cage2816"} & set(cases):
        # every kernel of the impulse solver, serial and parallel: its parallel kernels switch on above
        # a contact count that the throw-away warm-up steps may not reach (benchmarks/impulse.py does the same)
        from tumble._core.solvers.impulse.driver import warm as warm_impulse

        warm_impulse()
    for c in CASES:
        if c not in cases:
            continue
        log(f"== {c}")
        t = time.perf_counter()
        try:
            rows += RUNNERS[c](budget, ctx)
        except Exception as e:                                # report and go on with the next row
            import traceback

            log(traceback.format_exc())
            rows.append({"case": c, "data": {"error": f"{type(e).__name__}: {e}"}, "issue_now": "-",
                         "tumble": f"failed: {type(e).__name__}: {e}", "peers": {}, "goal": "-", "met": None})
        log(f"   {c}: {time.perf_counter() - t:.0f} s")
    meta = run_meta(start, "benchmarks/speed.py", argv if argv is not None else sys.argv[1:], args.quick,
                    cases=cases)
    start.out.mkdir(parents=True, exist_ok=True)
    meta.update(block=budget.block, rounds=budget.rounds)
    write_report(start.out, meta, rows, budget.block, budget.rounds)
    log(f"wrote {start.out / 'speed.md'}")
    print(start.out / "speed.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
