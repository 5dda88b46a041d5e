"""The fixed cost of a step (issue 14): one free body and `stack10`, every tumble solver next to
PyBullet and MuJoCo in the same run, ms per step (median of repeats), quiet and with another process
busy on one core. Writes benchmarks/results/<machine>/fixed_cost.md and .json.

    .venv/bin/python benchmarks/fixed_cost.py [--quick] [--threads N]

The scenes: ``one`` -- a 1 m box falling freely (no contacts: the step's overhead alone); ``stack10``
-- Catto's ten-box column at rest (001 Table 1, 40 contact points, dt 1/60, 10 iterations).
"""

from __future__ import annotations

import multiprocessing
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.peers import Unsupported, available  # noqa: E402
from benchmarks.report import (  # noqa: E402
    benchmark_arguments,
    log,
    machine_tag,
    md_table,
    results_dir,
    run_meta,
    setup_lines,
    start_run,
    write_json,
    write_markdown,
)

import tumble as tb  # noqa: E402
from tumble.scenes.spec import BodySpec, SceneSpec  # noqa: E402

SOLVERS = ("pgs", "shock", "impulse")


def one_body_spec() -> SceneSpec:
    s = SceneSpec(name="one", gravity=(0.0, 0.0, -9.81), dt=1 / 60, seconds=1.0, settings={"iterations": 10})
    s.bodies.append(BodySpec(shape=tb.Box((0.5, 0.5, 0.5)), position=(0.0, 0.0, 1000.0)))
    return s


def specs() -> dict:
    return {"one": one_body_spec(), "stack10": tb.scenes.spec("stack10")}


def ms_per_step(step, steps: int, repeats: int, warm: int = 100) -> float:
    """Median over ``repeats`` runs of ``steps`` steps, after ``warm`` steps [ms]."""
    for _ in range(warm):
        step()
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(steps):
            step()
        runs.append(1000.0 * (time.perf_counter() - t) / steps)
    return statistics.median(runs)


def _spin(stop):
    """The busy process: one core of pure Python arithmetic until told to stop."""
    x = 0
    while not stop.is_set():
        for i in range(10000):
            x = (x + i) % 1000003


def measure(steps: int, repeats: int) -> list[dict]:
    rows = []
    for name, spec in specs().items():
        for solver in SOLVERS:
            w = spec.build(solver=solver)
            ms = ms_per_step(lambda w=w, dt=spec.dt: w.step(dt), steps, repeats)
            rows.append({"scene": name, "engine": f"tumble {solver}", "ms": ms})
            log(f"{name:8s} tumble {solver:8s} {ms:.4f} ms/step")
        for peer_cls in available():
            try:
                peer = peer_cls().build(spec)
            except Unsupported as e:
                log(f"{name}: {peer_cls.__name__} unsupported: {e}")
                continue
            ms = ms_per_step(peer.step, steps, repeats)
            rows.append({"scene": name, "engine": peer.name, "ms": ms})
            log(f"{name:8s} {peer.name:15s} {ms:.4f} ms/step")
            peer.close()
    return rows


def main(argv=None) -> int:
    args = benchmark_arguments(__doc__, "fewer steps (a smoke run)", "Numba threads (default: all)").parse_args(argv)
    start = start_run(args)
    steps, repeats = (200, 3) if args.quick else (2000, 7)
    quiet = measure(steps, repeats)
    stop = multiprocessing.Event()
    busy = multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
    busy.start()
    try:
        contended = measure(steps, repeats)
    finally:
        stop.set()
        busy.join()
    out = results_dir(args.tag or machine_tag(), args.quick, args.out)
    meta = run_meta(start, "benchmarks/fixed_cost.py", argv if argv is not None else sys.argv[1:], args.quick)
    table = []
    for q, c in zip(quiet, contended):
        ref = next((r["ms"] for r in quiet if r["scene"] == q["scene"] and r["engine"].startswith("pybullet")), None)
        table.append([q["scene"], q["engine"], f"{q['ms']:.4f}", f"{c['ms']:.4f}",
                      f"{q['ms'] / ref:.2f}" if ref else "-"])
    lines = ["# Fixed cost per step (issue 14)", "", *setup_lines(meta, "quick run: few steps"), "",
             "Median ms per step of repeated runs; 'contended': the same with a Python process spinning on one core.",
             "", md_table(["scene", "engine", "ms/step quiet", "ms/step contended", "quiet / PyBullet"], table)]
    write_markdown(out / "fixed_cost.md", lines)
    write_json(out / "fixed_cost.json", {"meta": meta, "quiet": quiet, "contended": contended})
    log(f"wrote {out / 'fixed_cost.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
