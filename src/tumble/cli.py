"""Command line.

    tumble scenes                                   the scene library
    tumble solvers                                  the solvers (registry) and what each supports
    tumble run SCENE|FILE.toml|FILE.json [--solver S] [--seconds T] [--dt DT] [--param k=v]
               [--record run.npz [--record-every N]] [--json]
    tumble export SCENE -o FILE.toml|FILE.json [--param k=v]   a library scene as a scene file
    tumble render run.npz -o run.mp4 [--png DIR] [--camera P] [--color-by body|speed|sleeping]
               [--contacts] [--width W] [--height H] [--fps F]
    tumble view run.npz [--port P] [--open]         the browser viewer on http://127.0.0.1:P
    tumble plot run.npz [-o DIR]                    PNGs of energy, penetration, merit, contacts, ms per stage
    tumble bench                                    the benchmark suite (benchmarks/run.py)
    tumble sweep SPEC.toml [--address ADDR] [--workers N] -o results/
                                                    many runs on Dask (tumble.sweep): Parquet table, summary, PNGs

Progress bars (steps/s, ETA) go to stderr only when it is a terminal, and never under ``--json``.
"""

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


def _is_scene_file(name: str) -> bool:
    return name.lower().endswith((".toml", ".json"))


def load_spec(name: str, params: dict | None = None):
    """A library scene by name, or a scene file (``.toml`` / ``.json``, ``tumble.scenefile``)."""
    from tumble import scenes

    if _is_scene_file(name):
        from tumble.scenefile import load_scene

        if params:
            from tumble.errors import SceneError

            raise SceneError(f"{name}: --param applies to library scenes only; edit the file instead")
        return load_scene(name)
    return scenes.spec(name, **(params or {}))


def run_scene(name: str, solver: str | None = None, seconds: float | None = None, dt: float | None = None,
              record: str | None = None, progress: bool = False, params: dict | None = None,
              record_every: int = 1) -> dict:
    """Build scene ``name`` (library name or scene file), run it and return the metrics object of
    DESIGN.md's CLI contract. ``solver`` None: the scene file's solver, else "pgs"."""
    from tumble.scenes.metrics import SceneMetrics

    spec = load_spec(name, params)
    solver = solver or getattr(spec, "solver", None) or "pgs"
    w = spec.build(solver=solver)
    dt = spec.dt if dt is None else dt
    seconds = spec.seconds if seconds is None else seconds
    metrics = SceneMetrics(spec)
    metrics.observe(w)
    # compile (or load from cache) before timing: one step on a throwaway copy of the scene
    t0 = time.perf_counter()
    spec.build(solver=solver).step(dt)
    warmup = time.perf_counter() - t0
    summary = w.run(seconds, dt, progress=progress, record=record, record_every=record_every,
                    callback=metrics.observe)
    m = metrics.result()
    out = {
        "scene": spec.name,
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
    if w.elastic_body_count:  # the elastic integrator's counters and energy split at the end (tumble.elastic)
        out["elastic_bodies"] = w.elastic_body_count
        out.update({f"elastic_{k}": v for k, v in w.elastic_counters().items() if k != "time"})
        out.update({f"elastic_energy_{k}": v for k, v in w.elastic_energies().items()})
    if record:
        out["record"] = summary["record"]
    return out


def main(argv=None) -> int:
    from tumble.errors import TumbleError
    from tumble.recording import strict_json

    p = argparse.ArgumentParser(prog="tumble", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("scenes", help="list the scene library")
    sub.add_parser("solvers", help="list the solvers and what each supports (joints, sleeping, ...)")
    r = sub.add_parser("run", help="run a library scene or a scene file and print its metrics")
    r.add_argument("scene", help="library scene name (tumble scenes) or a .toml/.json scene file")
    r.add_argument("--solver", default=None, help="a solver of `tumble solvers` (default: the scene file's, else pgs)")
    r.add_argument("--seconds", type=float, default=None)
    r.add_argument("--dt", type=float, default=None)
    r.add_argument("--record", default=None, help="write a recording (.npz) of the run")
    r.add_argument("--record-every", type=int, default=1, help="steps per recorded frame (default 1)")
    r.add_argument("--param", action="append", help="scene parameter key=value (repeatable)")
    r.add_argument("--json", action="store_true", help="print one JSON object of metrics")
    e = sub.add_parser("export", help="write a library scene as a scene file (.toml or .json)")
    e.add_argument("scene")
    e.add_argument("-o", "--output", required=True)
    e.add_argument("--param", action="append", help="scene parameter key=value (repeatable)")
    d = sub.add_parser("render", help="render a recording to MP4 (and/or PNG frames), headless")
    d.add_argument("recording")
    d.add_argument("-o", "--output", default=None, help="output .mp4 (default: the recording's name)")
    d.add_argument("--png", default=None, help="also write PNG frames into this folder")
    d.add_argument("--camera", default=None, help="camera preset (default: the scene's, else a fit)")
    d.add_argument("--color-by", default="body", choices=("body", "speed", "sleeping"))
    d.add_argument("--contacts", action="store_true", help="draw contact points and normals")
    d.add_argument("--width", type=int, default=1280)
    d.add_argument("--height", type=int, default=720)
    d.add_argument("--fps", type=float, default=None, help="frames per second (default: real time, <= 60)")
    v = sub.add_parser("view", help="play a recording in the browser viewer")
    v.add_argument("recording")
    v.add_argument("--port", type=int, default=8765)
    v.add_argument("--open", action="store_true", help="open the system browser")
    pl = sub.add_parser("plot", help="PNG plots of a recording's counters")
    pl.add_argument("recording")
    pl.add_argument("-o", "--output", default=None, help="folder (default: <recording>_plots)")
    b = sub.add_parser("bench", help="run the benchmark suite (benchmarks/run.py) side by side with peers")
    b.add_argument("rest", nargs=argparse.REMAINDER)
    sw = sub.add_parser("sweep", help="a parameter sweep / ensemble on Dask distributed (see tumble.sweep)")
    sw.add_argument("spec", help="sweep spec (.toml): scene, parameters (grid/random/points), solvers, dts")
    sw.add_argument("-o", "--output", required=True, help="results folder (results.parquet, summary, PNGs)")
    sw.add_argument("--address", default=None, help="an existing Dask scheduler (default: a local cluster)")
    sw.add_argument("--workers", type=int, default=None, help="local cluster worker processes (default: cores)")
    sw.add_argument("--no-resume", action="store_true", help="run every run again, ignoring existing results")
    sw.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    a = p.parse_args(argv)
    try:
        if a.cmd == "scenes":
            from tumble import scenes

            for name, desc in scenes.describe():
                print(f"{name:18s} {desc}")
            return 0
        if a.cmd == "solvers":
            import tumble

            for info in tumble.solvers():
                caps = ", ".join(k for k in ("joints", "sleeping", "restitution", "elastic_bodies") if info[k])
                print(f"{info['name']:10s} {info['description']}\n{'':10s} supports: {caps or '-'}; "
                      f"overlaps released at <= {info['release_speed']:g} m/s")
            return 0
        if a.cmd == "run":
            res = run_scene(a.scene, a.solver, a.seconds, a.dt, a.record, progress=not a.json,
                            params=_parse_params(a.param), record_every=a.record_every)
            if a.json:
                print(strict_json(res))       # RFC 8259: non-finite numbers as "inf"/"nan" + "nonfinite"
            else:
                for k, v in res.items():
                    print(f"{k:18s} {v:.6g}" if isinstance(v, float) and math.isfinite(v) else f"{k:18s} {v}")
            return 0
        if a.cmd == "export":
            from tumble.scenefile import save_scene

            path = save_scene(load_spec(a.scene, _parse_params(a.param)), a.output)
            print(f"wrote {path or a.output}")
            return 0
        if a.cmd == "render":
            from pathlib import Path

            from tumble.viz.render import render

            out = a.output or str(Path(a.recording).with_suffix(".mp4"))
            res = render(a.recording, out, width=a.width, height=a.height, fps=a.fps, camera=a.camera,
                         color_by=a.color_by, contacts=a.contacts, png_dir=a.png, progress=True)
            print(f"wrote {out}" + (f" and PNG frames in {a.png}" if a.png else "")
                  + (f" ({res['frames']} frames)" if isinstance(res, dict) and "frames" in res else ""))
            return 0
        if a.cmd == "view":
            from tumble.viz.viewer.server import view

            view(a.recording, port=a.port, open_browser=a.open)
            return 0
        if a.cmd == "plot":
            from pathlib import Path

            from tumble.viz.plots import plot

            out = a.output or str(Path(a.recording).with_suffix("")) + "_plots"
            for f in plot(a.recording, out):
                print(f"wrote {f}")
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
        if a.cmd == "sweep":
            from tumble.sweep import sweep

            if a.workers is not None and a.workers < 1:
                print(f"tumble: sweep: --workers {a.workers} must be >= 1", file=sys.stderr)
                return 2
            res = sweep(a.spec, a.output, address=a.address, workers=a.workers, resume=not a.no_resume,
                        plots=not a.no_plots, progress=True)
            print(f"{len(res.rows)} runs ({res.ran} run now, {res.skipped} resumed), {res.errors} with errors, "
                  f"{res.wall_s:.1f} s")
            for f in res.files:
                print(f"wrote {f}")
            return 0                          # bad runs are data: listed in the table's error column
    except TumbleError as e:
        print(f"tumble: {e}", file=sys.stderr)
        return 2
    return 1


if __name__ == "__main__":
    sys.exit(main())
