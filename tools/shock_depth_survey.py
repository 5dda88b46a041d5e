"""Survey of the deepest overlaps under shock (issue 18): every library scene run for its duration at its
default dt under ``solver="shock"``, reporting the scene metrics' ``max_penetration`` and
``energy_max_gain`` and where the deepest overlap was (step, body, partner; -1: a fixed body or the
ground plane).

    PYTHONPATH=src python tools/shock_depth_survey.py                 # every scene
    PYTHONPATH=src python tools/shock_depth_survey.py bridge silo     # some
    PYTHONPATH=src python tools/shock_depth_survey.py --json out.json --set speculative_contacts=False

``max_penetration`` is the engine's counter (``step.finish``): the deepest point of the step's last
detection, for shock detect(t + dt) before the final correction (depths moved to first order by the
correction when its contacts are kept for the next step). Scenes shock cannot build (elastic bodies)
are listed as skipped.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import sys
import time

import numpy as np

import tumble.scenes as scenes
from tumble.scenes.metrics import SceneMetrics


def survey(name: str, settings: dict, seconds: float | None = None) -> dict:
    """One scene under shock: the metrics and the deepest overlap's step, bodies and depth."""
    spec = scenes.spec(name)
    if spec.elastic:
        return {"scene": name, "skipped": "elastic bodies"}
    w = scenes.build(name, solver="shock", **settings)
    m = SceneMetrics(spec)
    dt = w.default_dt
    steps = int(math.ceil((spec.seconds if seconds is None else seconds) / dt - 1e-9))
    core = w._core
    deepest = (0.0, -1, -1, -1)
    t0 = time.perf_counter()
    for k in range(steps):
        w.step(dt)
        m.observe(w)
        c = core.contacts
        if c.count:
            i = int(np.argmax(c.contact_depth[: c.count]))
            d = float(c.contact_depth[i])
            if d > deepest[0]:
                deepest = (d, k, int(c.contact_body_a[i]), int(c.contact_body_b[i]))
    r = m.result()
    return {"scene": name, "steps": steps, "dt": dt, "max_penetration_mm": 1e3 * r["max_penetration"],
            "energy_max_gain_J": r["energy_max_gain"], "deepest_mm": 1e3 * deepest[0], "deepest_step": deepest[1],
            "deepest_bodies": [deepest[2], deepest[3]], "wall_s": time.perf_counter() - t0}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("scenes", nargs="*", help="scene names (default: every library scene)")
    p.add_argument("--set", action="append", default=[], help="a shock setting, name=value (Python literal)")
    p.add_argument("--seconds", type=float, default=None, help="run this long instead of the scene's duration")
    p.add_argument("--json", default=None, help="also write the rows to this file")
    a = p.parse_args(argv)
    settings = {}
    for item in a.set:
        k, v = item.split("=", 1)
        settings[k] = ast.literal_eval(v)
    rows = []
    print(f"{'scene':18s} {'steps':>6s} {'max_pen mm':>10s} {'E gain J':>10s} {'step':>6s} {'bodies':>12s} {'s':>6s}")
    for name in a.scenes or scenes.names():
        try:
            row = survey(name, settings, a.seconds)
        except Exception as e:     # a scene shock cannot run: reported, the survey goes on
            row = {"scene": name, "skipped": f"{type(e).__name__}: {e}"}
        rows.append(row)
        if "skipped" in row:
            print(f"{name:18s} skipped ({row['skipped']})")
        else:
            print(f"{name:18s} {row['steps']:6d} {row['max_penetration_mm']:10.2f} {row['energy_max_gain_J']:10.4g} "
                  f"{row['deepest_step']:6d} {str(row['deepest_bodies']):>12s} {row['wall_s']:6.1f}")
        sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
