"""CPU time per step of a library scene under shock, with or without the spin substeps (issue 18,
``ShockSettings.spin_substep_angle``), and the deepest overlap (``max_penetration``) over its duration.

    PYTHONPATH=src python tools/shock_spin_cost.py silo new     # spin_substep_angle=0.1 (the measured value)
    PYTHONPATH=src python tools/shock_spin_cost.py silo old     # spin_substep_angle=inf (the default, off)
    PYTHONPATH=src python tools/shock_spin_cost.py silo spin_substep_arc=0.02 spin_substep_angle=inf  # any settings

Run old and new in alternating processes, several rounds: the first step (kernel loading) is left out,
``time.process_time`` covers the rest.
"""

from __future__ import annotations

import ast
import json
import math
import sys
import time

import tumble.scenes as scenes


def main(argv=None) -> int:
    name, *rest = argv or sys.argv[1:]
    setting = " ".join(rest)
    if rest in (["new"], ["old"]):
        kw = {"spin_substep_angle": 0.1 if rest == ["new"] else math.inf}
    else:       # name=value (Python literals; inf for math.inf)
        kw = {k: ast.literal_eval(v) if v != "inf" else math.inf for k, v in (a.split("=", 1) for a in rest)}
    w = scenes.build(name, solver="shock", **kw)
    steps = int(math.ceil(scenes.spec(name).seconds / w.default_dt - 1e-9))
    w.step(w.default_dt)
    t0 = time.process_time()
    substepped = 0
    deepest = w.counters.get("max_penetration", 0.0)
    for _ in range(steps - 1):
        w.step(w.default_dt)
        substepped += w.counters.get("spin_substeps", 1) > 1
        deepest = max(deepest, w.counters.get("max_penetration", 0.0))
    print(json.dumps({"scene": name, "setting": setting, "steps": steps,
                      "cpu_ms_per_step": 1000 * (time.process_time() - t0) / (steps - 1),
                      "substepped_steps": substepped, "max_pen_mm": 1000 * deepest}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
