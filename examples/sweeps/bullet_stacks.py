"""bullet_stacks.toml run from Python, with two user metrics evaluated on the worker after each run.

    python examples/sweeps/bullet_stacks.py [--workers 2] [--out examples/sweeps/results/bullet_stacks]

* ``boxes_in_place``: wall boxes whose centre ended within ``IN_PLACE`` of where it started;
* ``bullet_x``: where the bullet ended along its flight (+x) [m].
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import tumble as tb

HERE = Path(__file__).resolve().parent
#: [m] a box that moved less than this counts as in place (half a box edge).
IN_PLACE = 0.05


def boxes_in_place(world, result) -> int:
    bodies = world.scene.bodies
    ids = [i for i, b in enumerate(bodies) if b.tag == "stack"]
    start = np.array([bodies[i].position for i in ids])
    moved = np.linalg.norm(np.asarray(world.positions)[ids] - start, axis=1)
    return int(np.sum(moved < IN_PLACE))


def bullet_x(world, result) -> float:
    i = next(i for i, b in enumerate(world.scene.bodies) if b.name == "bullet")
    return float(world.positions[i, 0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--out", default=str(HERE / "results" / "bullet_stacks"))
    a = ap.parse_args()
    res = tb.sweep(HERE / "bullet_stacks.toml", a.out, workers=a.workers, metrics=[boxes_in_place, bullet_x],
                   title="bullet_stacks (2 walls)")
    print(f"{len(res.rows)} runs ({res.ran} now, {res.skipped} resumed), {res.errors} errors, {res.wall_s:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
