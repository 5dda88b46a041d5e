"""`make demo`: the flagship scene, tower_roof under shock propagation (Erleben 000), run, recorded,
rendered and plotted.

A tower of 800 bricks under a slab roof stands still for 9.7 s, then a block and a cannonball are
fired into it and it collapses. Writes into <out> (default ``demo/``):

* ``tower_roof.npz``   the recording (``tumble view demo/tower_roof.npz`` plays it in the browser)
* ``tower_roof.mp4``   the headless render (``tumble render``)
* ``plots/*.png``      energy, penetration, merit, contacts, ms per stage (``tumble plot``)
* ``metrics.json``     the run's metrics (``tumble run tower_roof --solver shock --json``)

Then a short elastic clip (paper 003 in the same World; ``--elastic-scene``, default ``jelly_on_boxes``: a
jelly slab on two fixed boxes with a rigid box dropped on it; ``--elastic-scene none`` skips it):
``<scene>.npz``, ``<scene>.mp4`` and ``plots_<scene>/*.png`` (with the elastic energy split and step size).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

SCENE, SOLVER = "tower_roof", "shock"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="demo")
    p.add_argument("--scene", default=SCENE)
    p.add_argument("--solver", default=SOLVER)
    p.add_argument("--seconds", type=float, default=None, help="default: the scene's")
    p.add_argument("--fps", type=float, default=25.0, help="video frame rate (frames recorded to match)")
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=720)
    p.add_argument("--elastic-scene", default="jelly_on_boxes", help="elastic clip after the main one ('none': skip)")
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)

    from tumble import scenes
    from tumble.cli import run_scene
    from tumble.recording import strict_json
    from tumble.viz.plots import plot
    from tumble.viz.render import render

    spec = scenes.spec(a.scene)
    every = max(1, round(1.0 / (a.fps * spec.dt)))
    record = out / f"{a.scene}.npz"
    print(f"running {a.scene} ({len(spec.bodies)} bodies) under {a.solver} ...", flush=True)
    t0 = time.perf_counter()
    metrics = run_scene(a.scene, a.solver, seconds=a.seconds, record=str(record), record_every=every,
                        progress=True)
    t_run = time.perf_counter() - t0
    (out / "metrics.json").write_text(strict_json(metrics, indent=2))   # RFC 8259 (no Infinity / NaN tokens)
    print(f"  {metrics['steps']} steps in {metrics['wall_s']:.1f} s ({metrics['ms_per_step']:.1f} ms/step), "
          f"max penetration {metrics['max_penetration'] * 1000:.1f} mm, "
          f"pre-impact drift {metrics.get('pre_spawn_max_drift', float('nan')) * 1000:.3f} mm", flush=True)

    t0 = time.perf_counter()
    video = out / f"{a.scene}.mp4"
    res = render(record, video, width=a.width, height=a.height, fps=1.0 / (every * spec.dt), progress=True)
    t_render = time.perf_counter() - t0
    plots = plot(record, out / "plots")
    print(f"  rendered {res.get('frames', '?')} frames in {t_render:.1f} s; run {t_run:.1f} s")
    extra = []
    if a.elastic_scene != "none":
        extra = elastic_clip(a.elastic_scene, out, a)
    print("wrote:")
    for f in (video, record, out / "metrics.json", *plots, *extra):
        print(f"  {f}")
    print(f"play it in the browser: tumble view {record}")
    return 0


def elastic_clip(name: str, out: Path, a) -> list[Path]:
    """Run, render and plot an elastic library scene (its own solver-independent elastic integrator)."""
    from tumble import scenes
    from tumble.viz.plots import plot
    from tumble.viz.render import render

    w = scenes.build(name)
    every = max(1, round(1.0 / (a.fps * w.scene.dt)))
    record = out / f"{name}.npz"
    print(f"running {name} ({w.elastic_body_count} elastic + {w.body_count} rigid bodies) ...", flush=True)
    summary = w.run(w.scene.seconds, record=str(record), record_every=every)
    c = w.elastic_counters()
    print(f"  {summary['steps']} steps in {summary['wall_s']:.1f} s; elastic integrator: {c['steps_taken']} steps "
          f"({c['steps_rejected']} rejected), min volume ratio {c['min_volume_ratio']:.3f}", flush=True)
    video = out / f"{name}.mp4"
    render(record, video, width=a.width, height=a.height, fps=1.0 / (every * w.scene.dt), progress=True)
    return [video, record, *plot(record, out / f"plots_{name}")]


if __name__ == "__main__":
    sys.exit(main())
