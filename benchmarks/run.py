"""``make bench``: tumble side by side with the installed peers on the library's benchmark scenes.

    python benchmarks/run.py [--scenes pyramid20,wall200] [--steps N] [--no-peers] [--out DIR]
                             [--warmup K] [--tag TAG] [--no-compile]

For every scene the identical ``SceneSpec`` (same bodies, masses, inertias, dt, iterations,
friction) is stepped by tumble and by each installed peer (PyBullet, MuJoCo). Only ``step()`` is
timed (``time.perf_counter`` around each call); the state read-back for the metrics is not.
tumble is warmed up first on a throw-away copy of the scene (``--warmup`` steps, default 3) so
Numba compilation is excluded, and then timed on a fresh build from t = 0.

Compile time is reported separately, from two subprocesses that import tumble and step a tiny scene
(plane + box) once with an empty temporary ``NUMBA_CACHE_DIR`` (cold) and then again with that same,
now filled, cache (cached).

The table per scene: engine, ms/step (mean and 95th percentile), ratio of the mean to PyBullet's,
and the metrics of ``tumble.scenes.metrics.SceneMetrics`` (max_penetration, max_drift, standing,
energy, energy_max_gain). Results go to ``<out>/bench.md`` and ``<out>/bench.csv``; the default
``out`` is ``benchmarks/results/<machine tag>`` with tag ``<ci|local>-<cores>core-<cpu model>``
(``--tag`` or ``TUMBLE_MACHINE_TAG`` override it).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tumble.progress import bar as progress_bar

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import (  # noqa: E402
    BUSY_CORES,
    ENGINE_COLUMNS,
    core_count,
    cpu_mark,
    cpu_model,
    engine_md_table,
    engine_rows,
    machine_tag,
    mean_p95,
    other_cores,
    results_dir,
    warmed_up_world,
    write_markdown,
)

SCENES = ["pyramid20", "wall200", "pile1000", "large_pyramid"]
DEFAULT_STEPS = {"large_pyramid": 60}      # others: 300
FALLBACK_STEPS = 300

COMPILE_SNIPPET = r"""
import json, time
t0 = time.perf_counter()
from tumble.world import World
from tumble.shapes import Box, Plane
w = World(gravity=(0.0, 0.0, -9.81))
w.add_body(Plane(), fixed=True)
w.add_body(Box((0.5, 0.5, 0.5)), position=(0.0, 0.0, 0.5), density=1000.0)
t1 = time.perf_counter()
w.step(1.0 / 60.0)
t2 = time.perf_counter()
print("COMPILE_JSON " + json.dumps({"import_build_s": t1 - t0, "first_step_s": t2 - t1, "total_s": t2 - t0}))
"""


# ------------------------------------------------------------------------------------------------
def compile_times() -> dict:
    """Cold and cached compile+first-step times [s] of tumble, from fresh subprocesses."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="tumble-numba-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
        for label in ("cold", "cached"):
            t = time.perf_counter()
            r = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, capture_output=True,
                               text=True, timeout=1800)
            wall = time.perf_counter() - t
            line = next((ln for ln in r.stdout.splitlines() if ln.startswith("COMPILE_JSON ")), None)
            if r.returncode != 0 or line is None:
                err = (r.stderr.strip().splitlines() or ["no output"])[-1]
                out[label] = {"error": err, "process_s": wall}
            else:
                d = json.loads(line[len("COMPILE_JSON "):])
                d["process_s"] = wall
                out[label] = d
    return out


def run_tumble(spec, steps: int, warmup: int) -> dict:
    from tumble.scenes.metrics import SceneMetrics

    w = warmed_up_world(spec.build, spec.dt, warmup)
    m = SceneMetrics(spec)
    times = []
    mark, t_start = cpu_mark(), time.perf_counter()
    bar = progress_bar(steps, f"{spec.name} tumble")
    for _ in range(steps):
        t = time.perf_counter()
        w.step(spec.dt)
        times.append(time.perf_counter() - t)
        m.observe(w)
        bar.update(1)
    bar.close()
    mean, p95 = mean_p95(1000.0 * np.asarray(times))
    return {"engine": "tumble (pgs)", "ms_mean": mean, "ms_p95": p95, **m.result(),
            "settings": dict(spec.settings), "notes": [],
            "other_cores": other_cores(mark, time.perf_counter() - t_start)}


def run_peer(peer_cls, spec, steps: int) -> dict:
    from benchmarks.peers import Unsupported

    from tumble.scenes.metrics import SceneMetrics

    peer = peer_cls()
    try:
        peer.build(spec)
    except Unsupported as e:
        return {"engine": peer.name, "error": f"unsupported: {e}"}
    m = SceneMetrics(spec)
    times = []
    mark, t_start = cpu_mark(), time.perf_counter()
    bar = progress_bar(steps, f"{spec.name} {peer.name}")
    try:
        for _ in range(steps):
            t = time.perf_counter()
            peer.step()
            times.append(time.perf_counter() - t)
            m.observe_arrays(peer.time, *peer.state(), peer.max_penetration())
            bar.update(1)
    finally:
        bar.close()
        peer.close()
    mean, p95 = mean_p95(1000.0 * np.asarray(times))
    return {"engine": peer.name, "ms_mean": mean, "ms_p95": p95, **m.result(), "settings": peer.settings,
            "notes": list(peer.notes), "other_cores": other_cores(mark, time.perf_counter() - t_start)}


# ------------------------------------------------------------------------------------------------
def text_table(rows: list[dict]) -> str:
    """The engines side by side as aligned text columns (the console's copy of the bench.md table)."""
    cells = [ENGINE_COLUMNS] + engine_rows(rows)
    widths = [max(len(c[i]) for c in cells) for i in range(len(ENGINE_COLUMNS))]
    return "\n".join("  ".join(c[i].ljust(widths[i]) for i in range(len(ENGINE_COLUMNS))) for c in cells)


def write_results(out: Path, tag: str, comp: dict | None, results: list[tuple], args) -> None:
    import numba

    out.mkdir(parents=True, exist_ok=True)
    md = [f"# tumble benchmarks: `{tag}`", "",
          f"- date: {time.strftime('%Y-%m-%d %H:%M:%S')}",
          f"- machine: {platform.machine()}, {core_count()} cores, CPU `{cpu_model()}`",
          f"- python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}",
          f"- tumble warm-up: {args.warmup} steps on a throw-away build (compilation excluded)",
          "- only `step()` is timed; ratio = mean ms/step / PyBullet's mean ms/step", ""]
    if comp:
        md.append("## Compile time (plane + box, one step, fresh process)")
        md.append("")
        for label, d in comp.items():
            if "error" in d:
                md.append(f"- {label}: failed ({d['error']})")
            else:
                md.append(f"- {label} cache: {d['total_s']:.2f} s in tumble (import+build "
                          f"{d['import_build_s']:.2f} s, first step {d['first_step_s']:.2f} s), "
                          f"process {d['process_s']:.2f} s")
        md.append("")
    rows_csv = []
    for spec, steps, rows in results:
        md += [f"## {spec.name} ({len(spec.bodies)} bodies, {steps} steps of dt = {spec.dt:.6g} s)", "",
               f"{spec.description}", "", f"scene settings: `{spec.settings}`", "", engine_md_table(rows), ""]
        busy = [f"{r['engine']} {r['other_cores']:.2f}" for r in rows if r.get("other_cores") is not None]
        if busy:
            md.append("- cores other processes kept busy while each engine was timed (above "
                      f"{BUSY_CORES:g}: its time is inflated): " + ", ".join(busy))
        for r in rows:
            if r.get("settings") and not r["engine"].startswith("tumble"):
                md.append(f"- {r['engine']} settings: `{r['settings']}`")
            for n in r.get("notes", []):
                md.append(f"- {r['engine']}: {n}")
            rows_csv.append({"scene": spec.name, "bodies": len(spec.bodies), "steps": steps, "dt": spec.dt,
                             "engine": r["engine"], "ms_mean": r.get("ms_mean"), "ms_p95": r.get("ms_p95"),
                             "max_penetration": r.get("max_penetration"), "max_drift": r.get("max_drift"),
                             "standing": r.get("standing"), "energy": r.get("energy"),
                             "energy_max_gain": r.get("energy_max_gain"), "error": r.get("error", "")})
        md.append("")
    write_markdown(out / "bench.md", md)
    with open(out / "bench.csv", "w", newline="") as f:
        fields = ["scene", "bodies", "steps", "dt", "engine", "ms_mean", "ms_p95", "max_penetration",
                  "max_drift", "standing", "energy", "energy_max_gain", "error"]
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        wr.writerows(rows_csv)
    if comp:                                     # compile times as rows of a pseudo-scene "compile"
        with open(out / "bench.csv", "a", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=fields)
            for label, d in comp.items():
                wr.writerow({"scene": "compile", "engine": f"tumble ({label} cache)",
                             "ms_mean": 1000.0 * d["total_s"] if "total_s" in d else None,
                             "error": d.get("error", "")})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", default=",".join(SCENES), help="comma-separated scene names")
    ap.add_argument("--steps", type=int, default=None,
                    help=f"steps per scene (default {FALLBACK_STEPS}, "
                         f"large_pyramid {DEFAULT_STEPS['large_pyramid']})")
    ap.add_argument("--warmup", type=int, default=3, help="tumble warm-up steps (compilation)")
    ap.add_argument("--no-peers", action="store_true", help="run tumble only")
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-time subprocesses")
    ap.add_argument("--out", default=None, help="output folder (default benchmarks/results/<machine tag>)")
    ap.add_argument("--tag", default=None, help="machine tag (default <ci|local>-<cores>core-<cpu>)")
    args = ap.parse_args(argv)

    import tumble.scenes as scenes

    names = [s.strip() for s in args.scenes.split(",") if s.strip()]
    for n in names:
        scenes.defaults(n)                      # SceneError naming an unknown scene, early
    tag = args.tag or machine_tag()
    out = results_dir(tag, out=args.out)
    peers = []
    if not args.no_peers:
        from benchmarks.peers import available

        peers = available()

    comp = None
    if not args.no_compile:
        print("compile time (fresh processes) ...", flush=True)
        comp = compile_times()
        for label, d in comp.items():
            print(f"  {label}: " + (f"failed: {d['error']}" if "error" in d else f"{d['total_s']:.2f} s"))

    results = []
    for n in names:
        spec = scenes.spec(n)
        steps = args.steps if args.steps is not None else DEFAULT_STEPS.get(n, FALLBACK_STEPS)
        print(f"\n== {n}: {len(spec.bodies)} bodies, {steps} steps, dt {spec.dt:.6g} s, {spec.settings}",
              flush=True)
        rows = []
        try:
            rows.append(run_tumble(spec, steps, args.warmup))
        except Exception as e:                   # report, keep going with the peers
            rows.append({"engine": "tumble (pgs)", "error": f"{type(e).__name__}: {e}"})
        for P in peers:
            try:
                rows.append(run_peer(P, spec, steps))
            except Exception as e:
                rows.append({"engine": getattr(P, "__name__", "peer"), "error": f"{type(e).__name__}: {e}"})
        print(text_table(rows), flush=True)
        results.append((spec, steps, rows))

    write_results(out, tag, comp, results, args)
    print(f"\nwrote {out / 'bench.md'} and {out / 'bench.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
