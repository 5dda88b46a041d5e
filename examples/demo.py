"""`make demo`: run the flagship scenes, print their metrics, write a height-vs-time plot.

Until the shock-propagation solver lands, the flagship scenes are Catto's ten-box stack (001 §9.1)
and the 20-row pyramid. Writes <out>/heights.png and <out>/metrics.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import tumble as tb
from tumble.scenes.metrics import SceneMetrics


def run(name: str, seconds: float):
    spec = tb.scenes.spec(name)
    spec.build().step(spec.dt)  # compile (or load the kernels from the cache) before timing
    w = spec.build()
    metrics = SceneMetrics(spec)
    metrics.observe(w)
    stack = spec.tagged("stack")
    top = stack[np.argmax([spec.bodies[i].position[2] for i in stack])]
    times, heights = [], []

    def watch(world):
        metrics.observe(world)
        times.append(world.time)
        heights.append(world.positions[top, 2])

    t0 = time.perf_counter()
    summary = w.run(seconds, spec.dt, progress=True, callback=watch)
    result = {"scene": name, "bodies": w.body_count, "seconds": seconds, **summary, **metrics.result(),
              "wall_with_compile_s": time.perf_counter() - t0}
    return result, np.array(times), np.array(heights)


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="demo")
    p.add_argument("--seconds", type=float, default=10.0)
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    results = []
    for name in ("stack10", "pyramid20"):
        res, t, h = run(name, a.seconds)
        results.append(res)
        ax.plot(t, h - h[0] if len(h) else h, label=f"{name}: top body")
        print(f"{name:10s} bodies={res['bodies']:4d} ms/step={res['ms_per_step']:.2f} "
              f"max_drift={res['max_drift'] * 1000:.2f} mm max_penetration={res['max_penetration'] * 1000:.2f} mm "
              f"standing={res['standing']}")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("height change of the top body [m]")
    ax.set_title("tumble pgs: Catto's ten-box stack and a 20-row pyramid")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "heights.png", dpi=120)
    (out / "metrics.json").write_text(json.dumps(results, indent=2, default=float))
    print(f"wrote {out / 'heights.png'} and {out / 'metrics.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
