"""Sweeps on Dask (issue 20): engine choice, per-run overhead, 1..N-worker scaling, and a 64-worker
estimate for the example sweeps. Writes benchmarks/results/<machine>/sweep.md and sweep.json.

    .venv/bin/python benchmarks/sweep.py [--quick] [--runs 16] [--seconds 0.5] [--engines dask,ray]

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


def engines(names: list[str], tasks: int, workers: int) -> tuple[float, list[dict]]:
    _short_run(0)
    t0 = time.perf_counter()
    for i in range(10):
        _short_run(i)
    inproc = (time.perf_counter() - t0) / 10 * 1e3
    out = []
    for name in names:
        try:
            out.append((_engine_dask if name == "dask" else _engine_ray)(tasks, workers))
        except ImportError as e:
            log(f"engine {name}: not installed ({e})")
        log(f"engine {name}: {out[-1] if out else ''}")
    return inproc, out


def scaling(runs: int, seconds: float, workers: list[int]) -> list[dict]:
    import tumble as tb

    spec = {"sweep": {"scene": "stack3_nocache", "seconds": seconds, "repeats": runs, "seed": 1,
                      "metrics": ["standing", "max_penetration"]}}
    out = []
    for w in workers:
        res = tb.sweep(spec, workers=w, progress=False)
        walls = [r["wall_s"] for r in res.rows]
        t_run = sum(walls) / len(walls)
        out.append({"workers": w, "runs": len(walls), "start_s": res.start_s,
                    "warm_up_s": max(v for v in res.warm_up_s.values() if v is not None),
                    "map_s": res.map_s, "t_run_s": t_run, "t_run_max_s": max(walls),
                    "overhead_s": res.map_s * w / len(walls) - t_run, "total_s": res.wall_s,
                    "errors": res.errors})
        log(f"scaling {w} workers: {out[-1]}")
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


def main() -> None:
    ap = benchmark_arguments(__doc__.splitlines()[0], "4 runs of 0.1 s, 40 trivial tasks", "unused")
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--engines", default="dask,ray")
    ap.add_argument("--workers", default="1,2")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.seconds, a.tasks = 4, 0.1, 40
    start = start_run(a)
    inproc, eng = engines([e for e in a.engines.split(",") if e], a.tasks, 2)
    sc = scaling(a.runs, a.seconds, [int(w) for w in a.workers.split(",")])
    one = sc[0]
    ex = examples(one["overhead_s"], max(r["start_s"] for r in sc), max(r["warm_up_s"] for r in sc))
    meta = run_meta(start, "benchmarks/sweep.py", None, a.quick)
    write_json(start.out / "sweep.json", {"meta": meta, "in_process_short_run_ms": inproc, "engines": eng,
                                           "scaling": sc, "examples": ex})
    lines = ["# Sweeps on Dask distributed (issue 20)", "", *setup_lines(meta, "4 runs"), "",
             "## Engine: Dask distributed vs Ray, 2 local worker processes", "",
             f"A short tumble run (stack3_nocache, 6 steps of pgs) takes {fmt(inproc)} ms in-process.", "",
             md_table(["engine", "start-up [s]", "trivial task [ms]", "short run via engine [ms]",
                       "processes' RSS [MiB]"],
                      [[e["engine"], fmt(e["start_s"]), fmt(e["trivial_ms"]), fmt(e["short_ms"]), fmt(e["rss_mb"])]
                       for e in eng]), "",
             "Task times are wall / tasks with both workers busy (2 tasks at a time).", "",
             f"## tumble.sweep: {a.runs} runs of stack3_nocache ({a.seconds:g} s, pgs), 1 and 2 workers", "",
             md_table(["workers", "start-up [s]", "warm-up/worker [s]", "submit->last [s]", "run on worker [s]",
                       "longest run [s]", "overhead/run [s]", "speed-up", "efficiency"],
                      [[r["workers"], fmt(r["start_s"]), fmt(r["warm_up_s"]), fmt(r["map_s"]), fmt(r["t_run_s"]),
                        fmt(r["t_run_max_s"]), fmt(r["overhead_s"]), fmt(r["speedup"]), fmt(r["efficiency"])]
                       for r in sc]), "",
             "overhead/run = (submit->last) x workers / runs - mean run time on the worker: scheduling, "
             "pickling, result transfer, and any time a worker waits for the next task.", "",
             f"## Example sweeps: measured here, and the model for {BIG_CLUSTER} workers", "",
             f"T(W) = max(N_runs x (t_run + t_over) / W, longest run) + t_start + t_warm, with t_over = "
             f"{fmt(one['overhead_s'])} s, t_start and t_warm from the table above.", "",
             md_table(["sweep", "runs", "mean run [s]", "longest run [s]", "T(1) [s]", "T(2) [s]",
                       f"T({BIG_CLUSTER}) [s]"],
                      [[e["sweep"], e["runs"], fmt(e["t_run_s"]), fmt(e["t_run_max_s"]), fmt(e["T1_s"]),
                        fmt(e["T2_s"]), fmt(e[f"T{BIG_CLUSTER}_s"])] for e in ex])]
    write_markdown(start.out / "sweep.md", lines)
    log(f"wrote {start.out / 'sweep.md'}")


if __name__ == "__main__":
    main()
