"""The fixed cost of a step (issue 14): one free body and `stack10`, every tumble solver next to
PyBullet and MuJoCo in the same run, ms per step (median of repeats), quiet and with another process
busy on one core. Writes benchmarks/results/<machine>/fixed_cost.md and .json.

    .venv/bin/python benchmarks/fixed_cost.py [--quick] [--threads N]

The scenes: ``one`` -- a 1 m box falling freely (no contacts: the step's overhead alone); ``stack10``
-- Catto's ten-box column at rest (001 Table 1, 40 contact points, dt 1/60, 10 iterations). Every
solver at its defaults, and pgs with ``PGSSettings.preset("catto")`` (one solve of 10 sweeps per step,
as PyBullet runs it; the defaults run 12 substeps of 1 sweep + 1 relax sweep).
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
#: (solver, settings preset or None): every solver at its defaults, and pgs as 001 and PyBullet run it
#: (one solve of the scene's 10 sweeps per step, ``PGSSettings.preset("catto")``)
RUNS = tuple((s, None) for s in SOLVERS) + (("pgs", "catto"),)


def one_body_spec() -> SceneSpec:
    s = SceneSpec(name="one", gravity=(0.0, 0.0, -9.81), dt=1 / 60, seconds=1.0, settings={"iterations": 10})
    s.bodies.append(BodySpec(shape=tb.Box((0.5, 0.5, 0.5)), position=(0.0, 0.0, 1000.0)))
    return s


def specs() -> dict:
    return {"one": one_body_spec(), "stack10": tb.scenes.spec("stack10")}


def ms_per_step(step, steps: int, repeats: int, warm: int = 100) -> float:
    """Median over ``repeats`` runs of ``steps`` steps, after ``warm`` steps [ms]."""
    return timed_steps(step, steps, repeats, warm)[0]


def timed_steps(step, steps: int, repeats: int, warm: int = 100) -> tuple[float, float]:
    """(wall, CPU) ms per step: medians over ``repeats`` runs of ``steps`` steps after ``warm``.
    CPU is the calling thread's CPU time (time.thread_time): on a machine other processes load it
    counts the step's own work only, where the wall time also counts the waits for a core (the
    Numba kernels of these small scenes run on the calling thread)."""
    for _ in range(warm):
        step()
    runs, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.thread_time()
        for _ in range(steps):
            step()
        runs.append(1000.0 * (time.perf_counter() - t) / steps)
        cpu.append(1000.0 * (time.thread_time() - c) / steps)
    return statistics.median(runs), statistics.median(cpu)


def _spin(stop):
    """The busy process: one core of pure Python arithmetic until told to stop."""
    x = 0
    while not stop.is_set():
        for i in range(10000):
            x = (x + i) % 1000003


def measure(steps: int, repeats: int) -> list[dict]:
    rows = []
    for name, spec in specs().items():
        for solver, preset in RUNS:
            w = spec.build(solver=solver)
            if preset:
                w.settings.update(**w.settings.preset(preset))
            ms, cpu = timed_steps(lambda w=w, dt=spec.dt: w.step(dt), steps, repeats)
            engine = f"tumble {solver}" + (f" ({preset})" if preset else "")
            rows.append({"scene": name, "engine": engine, "ms": ms, "cpu_ms": cpu})
            log(f"{name:8s} {engine:20s} {ms:.4f} ms/step, CPU {cpu:.4f}")
        for peer_cls in available():
            try:
                peer = peer_cls().build(spec)
            except Unsupported as e:
                log(f"{name}: {peer_cls.__name__} unsupported: {e}")
                continue
            ms, cpu = timed_steps(peer.step, steps, repeats)
            rows.append({"scene": name, "engine": peer.name, "ms": ms, "cpu_ms": cpu})
            log(f"{name:8s} {peer.name:20s} {ms:.4f} ms/step, CPU {cpu:.4f}")
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
        ref = next((r for r in quiet if r["scene"] == q["scene"] and r["engine"].startswith("pybullet")), None)
        table.append([q["scene"], q["engine"], f"{q['ms']:.4f}", f"{c['ms']:.4f}",
                      f"{q['ms'] / ref['ms']:.2f}" if ref else "-", f"{q['cpu_ms']:.4f}",
                      f"{q['cpu_ms'] / ref['cpu_ms']:.2f}" if ref else "-"])
    lines = ["# Fixed cost per step (issue 14)", "", *setup_lines(meta, "quick run: few steps"), "",
             "Median ms per step of repeated runs; 'contended': the same with a Python process spinning on one core; "
             "CPU: the stepping thread's CPU time (the step's own work when other processes load the machine).",
             "", md_table(["scene", "engine", "ms/step quiet", "ms/step contended", "quiet / PyBullet",
                           "CPU ms/step quiet", "CPU / PyBullet"], table)]
    write_markdown(out / "fixed_cost.md", lines)
    write_json(out / "fixed_cost.json", {"meta": meta, "quiet": quiet, "contended": contended})
    log(f"wrote {out / 'fixed_cost.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
