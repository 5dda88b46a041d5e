"""Sweeps on Dask (issue 20): engine choice, per-run overhead, 1..N-worker scaling, and a 64-worker
estimate for the example sweeps. Writes benchmarks/results/<machine>/sweep.md and sweep.json.

    .venv/bin/python benchmarks/sweep.py [--quick] [--runs 24] [--seconds 20] [--engines dask,ray]

1. Engines: an embedded local cluster of Dask distributed and of Ray (when importable) with 2 worker
   processes: start-up (until a client can submit), the overhead of a trivial task (wall / tasks with
   every worker busy), a short tumble run (stack3_nocache, 0.1 s of pgs) through the engine against the
   same run in-process, and the resident memory of the processes the engine started.
2. tumble.sweep: the same sweep (``--runs`` runs of stack3_nocache for ``--seconds`` under pgs) on 1 and
   on 2 local workers (this machine has 2 cores): cluster start-up, warm-up per worker (kernels loaded
   from the shared Numba cache), the time from the first submission to the last result, the per-run
   overhead (that time x workers / runs minus the mean run time measured on the workers), speed-up
   and parallel efficiency.
3. The example sweeps (examples/sweeps/results/*/summary.csv, written by their drivers): runs and
   mean run time as measured here, and the model T(W) = N_runs * t_run / W + N_runs * t_over / W +
   t_start + t_warm (W = 64 workers; at least the longest run), from the numbers of 2.
"""

from __future__ import annotations

import csv
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import (  # noqa: E402
    benchmark_arguments,
    fmt,
    log,
    md_table,
    run_meta,
    setup_lines,
    start_run,
    write_json,
    write_markdown,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "sweeps" / "results"
#: Workers of the cluster the example sweeps are projected onto.
BIG_CLUSTER = 64
#: [s] compiling every solver's kernels into an empty NUMBA_CACHE_DIR on this machine (the `make warm`
#: set: stack3_nocache one step under pgs, shock, jacobi, impulse + the impulse driver's warm()),
#: measured once on 2026-11-23 while the machine was busy; what each worker would pay per sweep
#: without the shared on-disk cache.
COLD_COMPILE_S = 299.0


def _trivial(i):
    return i


def _short_run(i):
    import tumble.scenes as s

    w = s.build("stack3_nocache", solver="pgs")
    for _ in range(6):
        w.step(1 / 60)
    return i


def _children_rss_mb() -> float:
    import psutil

    me = psutil.Process(os.getpid())
    total = 0
    for c in me.children(recursive=True):
        try:
            total += c.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def _engine_dask(tasks: int, workers: int) -> dict:
    from distributed import Client, LocalCluster

    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    start = time.perf_counter() - t0
    client.run(_short_run, 0)
    t0 = time.perf_counter()
    client.gather(client.map(_trivial, range(tasks), pure=False))
    trivial = (time.perf_counter() - t0) / tasks
    t0 = time.perf_counter()
    client.gather(client.map(_short_run, range(tasks // 4), pure=False))
    short = (time.perf_counter() - t0) / (tasks // 4)
    rss = _children_rss_mb()
    client.close()
    cluster.close()
    return {"engine": "dask", "start_s": start, "trivial_ms": trivial * 1e3, "short_ms": short * 1e3, "rss_mb": rss}


def _engine_ray(tasks: int, workers: int) -> dict:
    import ray

    t0 = time.perf_counter()
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    start = time.perf_counter() - t0
    trivial_r = ray.remote(num_cpus=1)(_trivial)
    short_r = ray.remote(num_cpus=1)(_short_run)
    ray.get([short_r.remote(i) for i in range(workers)])
    t0 = time.perf_counter()
    ray.get([trivial_r.remote(i) for i in range(tasks)])
    trivial = (time.perf_counter() - t0) / tasks
    t0 = time.perf_counter()
    ray.get([short_r.remote(i) for i in range(tasks // 4)])
    short = (time.perf_counter() - t0) / (tasks // 4)
    rss = _children_rss_mb()
    ray.shutdown()
    return {"engine": "ray", "start_s": start, "trivial_ms": trivial * 1e3, "short_ms": short * 1e3, "rss_mb": rss}


def engines(names: list[str], tasks: int, workers: int, reps: int) -> tuple[float, list[dict]]:
    """Each engine ``reps`` times, the engines alternating (the shared machine's load drifts); returns
    the in-process short run [ms] and one row per engine with the median of every number and the range
    of the task times."""
    import statistics

    _short_run(0)
    t0 = time.perf_counter()
    for i in range(10):
        _short_run(i)
    inproc = (time.perf_counter() - t0) / 10 * 1e3
    samples: dict[str, list[dict]] = {}
    for rep in range(reps):
        for name in names:
            try:
                r = (_engine_dask if name == "dask" else _engine_ray)(tasks, workers)
            except ImportError as e:
                log(f"engine {name}: not installed ({e})")
                continue
            samples.setdefault(name, []).append(r)
            log(f"engine {name} #{rep + 1}: {r}")
    out = []
    for name, rs in samples.items():
        row = {"engine": name, "reps": len(rs)}
        for k in ("start_s", "trivial_ms", "short_ms", "rss_mb"):
            vals = [r[k] for r in rs]
            row[k], row[k + "_min"], row[k + "_max"] = statistics.median(vals), min(vals), max(vals)
        out.append(row)
    return inproc, out


def scaling(runs: int, seconds: float, workers: list[int], reps: int) -> list[dict]:
    """The same sweep on each worker count, ``reps`` times alternating; per count the repetition with
    the median time from submission to last result, and the speed-up/efficiency from those medians."""
    import tumble as tb

    spec = {"sweep": {"scene": "stack3_nocache", "seconds": seconds, "repeats": runs, "seed": 1,
                      "metrics": ["standing", "max_penetration"]}}
    samples: dict[int, list[dict]] = {}
    for rep in range(reps):
        for w in workers:
            res = tb.sweep(spec, workers=w, progress=False)
            walls = [r["wall_s"] for r in res.rows]
            t_run = sum(walls) / len(walls)
            r = {"workers": w, "runs": len(walls), "start_s": res.start_s,
                 "warm_up_s": max(v for v in res.warm_up_s.values() if v is not None),
                 "map_s": res.map_s, "t_run_s": t_run, "t_run_max_s": max(walls),
                 "overhead_s": res.map_s * w / len(walls) - t_run, "total_s": res.wall_s, "errors": res.errors}
            samples.setdefault(w, []).append(r)
            log(f"scaling {w} workers #{rep + 1}: {r}")
    out = []
    for w in workers:
        rs = sorted(samples[w], key=lambda r: r["map_s"])
        row = dict(rs[len(rs) // 2])
        row["map_s_all"] = [r["map_s"] for r in samples[w]]
        out.append(row)
    t1 = out[0]["map_s"] * out[0]["workers"]
    for r in out:
        r["speedup"] = t1 / r["map_s"]
        r["efficiency"] = r["speedup"] / r["workers"]
    return out


def examples(over_s: float, start_s: float, warm_s: float) -> list[dict]:
    out = []
    for f in sorted(EXAMPLES.glob("*/summary.csv")):
        with open(f) as fh:
            groups = list(csv.DictReader(fh))
        n = sum(int(g["runs"]) for g in groups)
        walls = [(float(g["wall_s"]), int(g["runs"])) for g in groups if g["wall_s"] not in ("", "nan")]
        if not n or not walls:
            continue
        t_run = sum(w * k for w, k in walls) / sum(k for _, k in walls)
        t_max = max(w for w, _ in walls)
        def model(W, n=n, t_run=t_run, t_max=t_max):
            return max(n * (t_run + over_s) / W, t_max) + start_s + warm_s

        out.append({"sweep": f.parent.name, "runs": n, "t_run_s": t_run, "t_run_max_s": t_max,
                    "T1_s": model(1), "T2_s": model(2), f"T{BIG_CLUSTER}_s": model(BIG_CLUSTER)})
    return out


def choice_lines(eng: list[dict], shortest_run_s: float) -> list[str]:
    """Why Dask, from the engine table's medians (both engines measured), else nothing.
    ``shortest_run_s``: the shortest mean run of the example sweeps."""
    by = {e["engine"]: e for e in eng}
    if not {"dask", "ray"} <= set(by):
        return []
    d, r = by["dask"], by["ray"]
    extra_ms = 2 * (d["trivial_ms"] - r["trivial_ms"])     # per task-slot: 2 tasks ran at a time
    return [f"Choice: **Dask distributed**. Ray's tasks cost less ({fmt(extra_ms)} ms more per task for "
            f"Dask, in a worker's time), but the example sweeps' mean runs take {fmt(shortest_run_s)} s or "
            f"more, so that is at most {fmt(100 * extra_ms / (1000 * shortest_run_s))} % of a run; Ray's local "
            f"start-up is {fmt(r['start_s'] / d['start_s'])}x Dask's ({fmt(r['start_s'])} s against "
            f"{fmt(d['start_s'])} s, paid by every `tumble sweep` without --address) and its processes "
            f"hold {fmt(r['rss_mb'] / d['rss_mb'])}x the memory ({fmt(r['rss_mb'])} against "
            f"{fmt(d['rss_mb'])} MiB: GCS, raylet and agents besides the workers). Dask is also plain pip "
            "packages with a client that connects to any existing scheduler (`--address`)."]


def bound_lines(ex: list[dict], over_s: float, fixed_s: float) -> list[str]:
    """What bounds each example sweep on BIG_CLUSTER workers: the work, its longest run, or the fixed
    start-up + warm-up."""
    out = []
    for e in ex:
        work = e["runs"] * (e["t_run_s"] + over_s) / BIG_CLUSTER
        parts = {"the work spread over the workers": work, "its longest run": e["t_run_max_s"],
                 "cluster start-up + warm-up": fixed_s}
        what = max(parts, key=parts.get)
        out.append(f"- {e['sweep']}: {e['runs']} runs; work / {BIG_CLUSTER} = {fmt(work)} s, longest run "
                   f"{fmt(e['t_run_max_s'])} s, start-up + warm-up {fmt(fixed_s)} s: bound by {what}.")
    return out


def main() -> None:
    ap = benchmark_arguments(__doc__.splitlines()[0], "4 runs of 0.1 s, 40 trivial tasks", "unused")
    ap.add_argument("--runs", type=int, default=24)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--engines", default="dask,ray")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each engine and worker count (median)")
    ap.add_argument("--from-json", default=None, help="re-render the report from this sweep.json (no measuring)")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.seconds, a.tasks, a.reps = 4, 0.1, 40, 1
    start = start_run(a)
    if a.from_json:
        # re-render the report from a previous run's measurements (the examples' table is re-read)
        import json

        saved = json.loads(Path(a.from_json).read_text())
        meta, inproc, eng, sc = saved["meta"], saved["in_process_short_run_ms"], saved["engines"], saved["scaling"]
        a.reps, a.runs, a.seconds = saved.get("reps", a.reps), sc[0]["runs"], saved.get("seconds", a.seconds)
    else:
        inproc, eng = engines([e for e in a.engines.split(",") if e], a.tasks, 2, a.reps)
        sc = scaling(a.runs, a.seconds, [int(w) for w in a.workers.split(",")], a.reps)
        meta = run_meta(start, "benchmarks/sweep.py", None, a.quick)
    one = sc[0]
    ex = examples(one["overhead_s"], max(r["start_s"] for r in sc), max(r["warm_up_s"] for r in sc))
    write_json(start.out / "sweep.json", {"meta": meta, "in_process_short_run_ms": inproc, "engines": eng,
                                           "scaling": sc, "examples": ex, "reps": a.reps, "seconds": a.seconds})
    lines = ["# Sweeps on Dask distributed (issue 20)", "", *setup_lines(meta, "4 runs"), "",
             "## Engine: Dask distributed vs Ray, 2 local worker processes", "",
             f"A short tumble run (stack3_nocache, 6 steps of pgs) takes {fmt(inproc)} ms in-process.", "",
             md_table(["engine", "start-up [s]", "trivial task [ms]", "short run via engine [ms]",
                       "processes' RSS [MiB]"],
                      [[e["engine"]] + [f"{fmt(e[k])} ({fmt(e[k + '_min'])}-{fmt(e[k + '_max'])})"
                                        for k in ("start_s", "trivial_ms", "short_ms", "rss_mb")] for e in eng]), "",
             f"Median (min-max) of {a.reps} repetitions, engines alternating. Task times are wall / tasks with "
             "both workers busy (2 tasks at a time), so a task costs 2x that of a worker's time; the short run "
             "through an engine minus half the in-process time is the engine's cost per run.", "",
             *choice_lines(eng, min((e["t_run_s"] for e in ex), default=0.1)), "",
             f"## tumble.sweep: {a.runs} runs of stack3_nocache ({a.seconds:g} s, pgs), 1 and 2 workers", "",
             md_table(["workers", "start-up [s]", "warm-up/worker [s]", "submit->last [s]", "run on worker [s]",
                       "longest run [s]", "overhead/run [s]", "speed-up", "efficiency"],
                      [[r["workers"], fmt(r["start_s"]), fmt(r["warm_up_s"]), fmt(r["map_s"]), fmt(r["t_run_s"]),
                        fmt(r["t_run_max_s"]), fmt(r["overhead_s"]), fmt(r["speedup"]), fmt(r["efficiency"])]
                       for r in sc]), "",
             f"Each row: the repetition with the median submit->last time of {a.reps} (all: "
             + "; ".join(f"{r['workers']} workers " + ", ".join(fmt(x) for x in r["map_s_all"]) + " s" for r in sc)
             + "). Speed-up and efficiency from submit->last (start-up and warm-up are once per sweep).", "",
             "overhead/run = (submit->last) x workers / runs - mean run time on the worker: scheduling, "
             "pickling, result transfer, and any time a worker waits for the next task.", "",
             f"Kernels: each worker's warm-up loads them from the shared Numba cache in {fmt(one['warm_up_s'])} s "
             f"(median row, 1 worker); compiling them into an empty cache took {COLD_COMPILE_S:.0f} s here "
             f"(every solver), which a worker without the shared cache would pay once per process. The runs "
             f"then take {fmt(one['t_run_s'])} s on average and {fmt(one['t_run_max_s'])} s at most: no run "
             "compiles.", "",
             f"Scaling: both workers share the 2 cores with the other processes of this machine (see the CPU "
             f"line above), so a run takes longer with 2 workers ({fmt(sc[-1]['t_run_s'])} s against "
             f"{fmt(one['t_run_s'])} s alone): the efficiency below 1 is the cores' contention, not the "
             "engine's overhead, which is the overhead/run column.", "",
             f"## Example sweeps: measured here, and the model for {BIG_CLUSTER} workers", "",
             f"T(W) = max(N_runs x (t_run + t_over) / W, longest run) + t_start + t_warm, with t_over = "
             f"{fmt(one['overhead_s'])} s, t_start and t_warm from the table above.", "",
             md_table(["sweep", "runs", "mean run [s]", "longest run [s]", "T(1) [s]", "T(2) [s]",
                       f"T({BIG_CLUSTER}) [s]"],
                      [[e["sweep"], e["runs"], fmt(e["t_run_s"]), fmt(e["t_run_max_s"]), fmt(e["T1_s"]),
                        fmt(e["T2_s"]), fmt(e[f"T{BIG_CLUSTER}_s"])] for e in ex]), "",
             f"Mean and longest run: the examples' summary.csv (group means of the runs' wall time on 2 "
             f"workers of this machine, their kernels already in the shared cache). On {BIG_CLUSTER} workers:", "",
             *bound_lines(ex, one["overhead_s"], max(r["start_s"] for r in sc) + max(r["warm_up_s"] for r in sc)),
             "",
             "Sweeps this small do not use 64 workers; one of N_runs >> 64 does, at about T(1) / 64. The model "
             "assumes the cluster's cores run a run as fast as these, a start-up like the local cluster's (with "
             "--address it is a connection, the workers are already up), per-run overhead as measured here (a "
             "remote scheduler adds network round trips of ~ms per task), kernels in the shared cache (a "
             "cold cache adds a compile per worker) and one Numba thread per run (runner.THREADS_PER_RUN: "
             "2 threads x 2 workers made the tower_roof runs 25-40x slower here, examples/sweeps/README.md)."]
    write_markdown(start.out / "sweep.md", lines)
    log(f"wrote {start.out / 'sweep.md'}")


if __name__ == "__main__":
    main()
