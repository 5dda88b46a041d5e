"""The gauss solver (paper 002 Fig. 7 in 3-D, issue 15) against shock and pgs on the stacking scenes.

    python benchmarks/gauss_world.py [--quick] [--seconds S] [--out DIR] [--tag TAG] [--threads N]

For stack10 (Catto's ten boxes dropped from 3.5 cm gaps), pyramid20 (210 cubes) and wall200 (210
bricks), each under gauss (K = 8 friction-cone edges, the default, and K = 4), shock and pgs with the
scene's settings, run ``--seconds`` (default 2 s) at the scene's dt: ms/step (mean and p95 of the
timed ``step()`` calls; the first step of a throw-away copy compiles the kernels first), the largest
horizontal drift of a stacked body from its start and the deepest penetration over the run (``SceneMetrics``),
whether the stack stands, and for gauss the QP's rows, iterations and ms.

Output: ``gauss_world.md`` and ``gauss_world.json`` in ``benchmarks/results/<machine tag>/``
(``--quick``: 0.1 s per run into a git-ignored ``<tag>-quick.tmp``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import (  # noqa: E402
    benchmark_arguments,
    log,
    md_table,
    mean_p95,
    run_meta,
    setup_lines,
    start_run,
    write_json,
    write_markdown,
)

SCENES = ("stack10", "pyramid20", "wall200")
#: (label, solver, settings on top of the scene's)
ENGINES = (("gauss", "gauss", {}), ("gauss K=4", "gauss", {"friction_edges": 4}), ("shock", "shock", {}),
           ("pgs", "pgs", {}))


def run_one(scene: str, solver: str, settings: dict, seconds: float) -> dict:
    from tumble import scenes
    from tumble.scenes.metrics import SceneMetrics

    spec = scenes.spec(scene)
    warm = spec.build(solver=solver, **settings)
    warm.step(spec.dt)                            # compile / load the kernels outside the timing
    w = spec.build(solver=solver, **settings)
    metrics = SceneMetrics(spec)
    ms, qp_ms, rows, iters = [], [], [], []
    steps = max(1, int(round(seconds / spec.dt)))
    for _ in range(steps):
        t = time.perf_counter()
        w.step(spec.dt)
        ms.append(1000.0 * (time.perf_counter() - t))
        metrics.observe(w)
        if "qp_ms" in w.counters:
            qp_ms.append(w.counters["qp_ms"])
            rows.append(w.counters["rows"])
            iters.append(w.counters["qp_iterations"])
    mean, p95 = mean_p95(ms)
    out = {"scene": scene, "engine_solver": solver, "settings": settings, "steps": steps, "ms_mean": mean,
           "ms_p95": p95, **metrics.result()}
    if qp_ms:
        out.update(qp_ms_mean=float(np.mean(qp_ms)), rows_max=int(max(rows)), qp_iterations_mean=float(np.mean(iters)))
    return out


def main(argv=None) -> None:
    ap = benchmark_arguments(__doc__.splitlines()[0], "0.1 s per run, for a smoke test",
                             "Numba threads (default: all)")
    ap.add_argument("--seconds", type=float, default=2.0, help="simulated seconds per run (default 2)")
    args = ap.parse_args(argv)
    start = start_run(args)
    seconds = 0.1 if args.quick else args.seconds
    results = []
    for scene in SCENES:
        for label, solver, settings in ENGINES:
            log(f"{scene} / {label} ...")
            r = run_one(scene, solver, settings, seconds)
            r["engine"] = label
            results.append(r)
            log(f"  {r['ms_mean']:.1f} ms/step, drift {r['max_drift']:.3g} m, penetration "
                f"{r['max_penetration']:.3g} m")
    meta = run_meta(start, "benchmarks/gauss_world.py", argv, args.quick, seconds=seconds)
    rows = [[r["scene"], r["engine"], r["ms_mean"], r["ms_p95"], r["max_drift"], 1000.0 * r["max_penetration"],
             "yes" if r["standing"] else ("no" if r["standing"] is not None else "-"),
             r.get("rows_max", "-"), r.get("qp_iterations_mean", "-"), r.get("qp_ms_mean", "-")]
            for r in results]
    lines = ["# gauss vs shock vs pgs (issue 15: paper 002 in the 3-D World)", "",
             *setup_lines(meta, "0.1 s per run"), "",
             f"Each run: {seconds:g} s of the scene at its dt (1/60 s) with the scene's settings; gauss with its "
             "defaults (Clarabel, tolerance 1e-9, K = 8 cone edges, 5 mm margin) and with K = 4. max_drift: "
             "the largest horizontal (x-y) distance of a stacked body from its start (SceneMetrics); max_pen: "
             "the deepest contact over the run.", "",
             md_table(["scene", "engine", "ms/step", "p95 ms", "max_drift [m]", "max_pen [mm]", "standing",
                       "QP rows", "QP iterations", "QP ms"], rows), ""]
    out = start.out
    out.mkdir(parents=True, exist_ok=True)
    write_markdown(out / "gauss_world.md", lines)
    write_json(out / "gauss_world.json", {"meta": meta, "results": results})
    log(f"wrote {out / 'gauss_world.md'}")


if __name__ == "__main__":
    main()
