"""Rendering benchmark (issue 5): 600 frames of a 1000-body run rendered headless to MP4 at 1280x720.

Target: under 2 minutes on the 2-core reference machine. Scenes: ``pile1000`` (1000 spheres into a
box, the sphere-heavy case) and ``large_pyramid`` with a 44-box base (990 boxes); each is recorded for
600 steps at dt 1/60 (every step a frame, played at 60 fps so all 600 are drawn), then
``tumble.viz.render.render`` writes the MP4. Writes ``benchmarks/results/<machine>/render.md`` and
``render.json``.

    python benchmarks/render.py [--frames 600] [--quick] [--tag T] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import log, start_run  # noqa: E402

#: (label, scene name, scene parameters)
CASES = [("pile1000 (1000 spheres)", "pile1000", {}),
         ("large_pyramid base 44 (990 boxes)", "large_pyramid", {"base": 44})]
TARGET_S = 120.0


def record(name: str, params: dict, frames: int, path: Path) -> dict:
    from tumble import scenes

    spec = scenes.spec(name, **params)
    w = spec.build()
    t0 = time.perf_counter()
    w.run(frames * spec.dt, spec.dt, record=str(path), record_every=1, progress=True)
    return {"bodies": w.body_count, "record_s": time.perf_counter() - t0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--quick", action="store_true", help="60 frames (smoke test)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--tag", default=None)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.frames = 60
    tag, out, _t, load_start, _cpu = start_run(args)
    from tumble.viz.render import render

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, name, params in CASES:
            rec = Path(tmp) / f"{name}.npz"
            info = record(name, params, args.frames, rec)
            log(f"{label}: recorded {args.frames} steps in {info['record_s']:.1f} s")
            t0 = time.perf_counter()
            res = render(rec, Path(tmp) / f"{name}.mp4", width=1280, height=720, fps=60, progress=True)
            seconds = time.perf_counter() - t0
            rows.append({"case": label, "scene": name, "bodies": info["bodies"], "frames": res["frames"],
                         "render_s": seconds, "frames_per_s": res["frames"] / seconds,
                         "under_target": seconds < TARGET_S * args.frames / 600})
            log(f"{label}: {res['frames']} frames in {seconds:.1f} s ({res['frames'] / seconds:.1f} frames/s)")
    out.mkdir(parents=True, exist_ok=True)
    (out / "render.json").write_text(json.dumps({"tag": tag, "load_start": load_start, "rows": rows}, indent=2))
    lines = ["# Headless rendering (`make bench-render`)", "",
             f"Machine `{tag}`, 1280x720, moderngl on EGL (Mesa llvmpipe, software), MP4 via imageio-ffmpeg "
             f"(libx264). Load average at start {load_start[0]:.2f}. Target: 600 frames of a 1000-body run in "
             f"under {TARGET_S:.0f} s.", "",
             "| case | bodies | frames | render s | frames/s | under target |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['case']} | {r['bodies']} | {r['frames']} | {r['render_s']:.1f} | {r['frames_per_s']:.1f} | "
              f"{'yes' if r['under_target'] else 'no'} |" for r in rows]
    (out / "render.md").write_text("\n".join(lines) + "\n")
    log(f"wrote {out / 'render.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
