"""Command line: ``tumble scenes``, ``tumble run SCENE [--solver S] [--seconds T] [--dt DT] [--json]``,
``tumble bench`` (the benchmark suite, see benchmarks/run.py)."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time


def _parse_params(items):
    """``--param key=value`` pairs, values parsed as JSON when possible (numbers, true/false)."""
    out = {}
    for it in items or []:
        if "=" not in it:
            raise SystemExit(f"tumble: --param {it!r} must look like key=value")
        k, v = it.split("=", 1)
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def run_scene(name: str, solver: str = "pgs", seconds: float | None = None, dt: float | None = None,
              record: str | None = None, progress: bool = False, params: dict | None = None) -> dict:
    """Build scene ``name``, run it and return the metrics object of DESIGN.md's CLI contract."""
    from tumble import scenes
    from tumble.scenes.metrics import SceneMetrics

    spec = scenes.spec(name, **(params or {}))
    w = spec.build(solver=solver)
    dt = spec.dt if dt is None else dt
    seconds = spec.seconds if seconds is None else seconds
    metrics = SceneMetrics(spec)
    metrics.observe(w)
    # compile (or load from cache) before timing: one step on a throwaway copy of the scene
    t0 = time.perf_counter()
    spec.build(solver=solver).step(dt)
    warmup = time.perf_counter() - t0
    summary = w.run(seconds, dt, progress=progress, record=record, callback=metrics.observe)
    m = metrics.result()
    out = {
        "scene": name,
        "solver": solver,
        "bodies": w.body_count,
        "steps": summary["steps"],
        "dt": dt,
        "wall_s": summary["wall_s"],
        "ms_per_step": summary["ms_per_step"],
        "realtime_factor": summary["realtime_factor"],
        "warmup_s": warmup,
        "max_penetration": m["max_penetration"],
        "max_drift": m["max_drift"],
        "standing": m["standing"],
        "energy": m["energy"],
    }
    out.update({k: v for k, v in m.items() if k not in out})
    return out


def main(argv=None) -> int:
    from tumble.errors import TumbleError

    p = argparse.ArgumentParser(prog="tumble", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("scenes", help="list the scene library")
    r = sub.add_parser("run", help="run a library scene and print its metrics")
    r.add_argument("scene")
    r.add_argument("--solver", default="pgs")
    r.add_argument("--seconds", type=float, default=None)
    r.add_argument("--dt", type=float, default=None)
    r.add_argument("--record", default=None, help="write poses to this .npz")
    r.add_argument("--param", action="append", help="scene parameter key=value (repeatable)")
    r.add_argument("--json", action="store_true", help="print one JSON object of metrics")
    b = sub.add_parser("bench", help="run the benchmark suite (benchmarks/run.py) side by side with peers")
    b.add_argument("rest", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    try:
        if a.cmd == "scenes":
            from tumble import scenes

            for name, desc in scenes.describe():
                print(f"{name:18s} {desc}")
            return 0
        if a.cmd == "run":
            res = run_scene(a.scene, a.solver, a.seconds, a.dt, a.record, progress=not a.json,
                            params=_parse_params(a.param))
            if a.json:
                print(json.dumps(res, default=_jsonable))
            else:
                for k, v in res.items():
                    print(f"{k:18s} {v:.6g}" if isinstance(v, float) and math.isfinite(v) else f"{k:18s} {v}")
            return 0
        if a.cmd == "bench":
            import runpy
            from pathlib import Path

            script = Path.cwd() / "benchmarks" / "run.py"
            if not script.exists():
                print("tumble bench: run it from the repository root (benchmarks/run.py)", file=sys.stderr)
                return 2
            sys.argv = [str(script), *a.rest]
            runpy.run_path(str(script), run_name="__main__")
            return 0
    except TumbleError as e:
        print(f"tumble: {e}", file=sys.stderr)
        return 2
    return 1


def _jsonable(x):
    try:
        return x.item()
    except AttributeError:
        return str(x)


if __name__ == "__main__":
    sys.exit(main())
