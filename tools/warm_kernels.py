"""Compile tumble's kernels into the Numba cache in one process, before the parallel test workers
start (``make warm``), so that each worker only loads them.

A cache written under another math policy holds other code under the same keys (Numba's index is
keyed by signature and source file stamp, not by compile options), so a stamp of the policy is kept in
the cache folder and a project-private cache (the Makefile's ``.numba_cache``) written under another
policy is emptied first. (Why the policy is IEEE arithmetic: config.py's docstring;
``tests/determinism/test_cold_compile.py`` checks that freshly compiled and cached kernels agree.)
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import numba

import tumble as tb
import tumble.scenes as s
from tumble._core import config

POLICY = "tumble_kernel_policy.json"


def warm_worlds() -> Iterator[tuple[str, tb.World]]:
    """The warm-up worlds, each after its steps: every solver's kernels, joints with limits and a
    motor, the impulse solver's warm-up and its kinetic friction on a slope, elastic bodies under both
    integrators."""
    for solver in ("pgs", "shock", "impulse", "jacobi", "gauss"):
        w = s.build("stack3_nocache", solver=solver)
        for _ in range(3):
            w.step(1 / 60 if solver != "impulse" else 1 / 240)
        yield f"stack3_nocache/{solver}", w
    w = tb.World()
    b = w.add_body(tb.Box((0.1, 0.1, 0.1)), position=(0, 0, 1), angular_velocity=(0.1, 5.0, 0.1))
    w.add_joint(tb.Hinge(None, b, anchor=(0, 0, 1.1), axis=(0, 1, 0), limits=(-1, 1), motor=tb.Motor(speed=1.0)))
    w.step(1 / 60)
    yield "hinged_box", w
    from tumble._core.solvers.impulse.driver import warm

    warm()
    # the impulse solver's kinetic friction on a slope (tests/physics/test_impulse_solver.py)
    th = math.radians(30.0)
    mat = tb.Material(friction=0.2, restitution=0.0)
    w = tb.World(solver="impulse")
    w.add_body(tb.Plane(normal=(math.sin(th), 0.0, math.cos(th))), fixed=True, material=mat)
    w.add_body(tb.Box((0.05, 0.05, 0.05)), position=(0.05 * math.sin(th), 0.0, 0.05 * math.cos(th)),
               orientation=(math.cos(th / 2), 0.0, math.sin(th / 2), 0.0), material=mat)
    for _ in range(20):
        w.step(1 / 240)
    yield "impulse_slope", w
    # an elastic body on the floor under a rigid box, both integrators
    for integrator in ("rkf45", "implicit"):
        w = tb.World()
        w.add_body(tb.Plane(), fixed=True)
        w.add_elastic_body(tb.TetMesh.box((0.3, 0.3, 0.2), (2, 2, 2)), position=(0, 0, 0.101),
                           material=tb.ElasticMaterial(density=1000.0, bulk_modulus=2e5, shear_modulus=6e4))
        w.add_body(tb.Box((0.1, 0.1, 0.05)), position=(0, 0, 0.26), mass=2.0)
        w.set_elastic_options(integrator=integrator)
        for _ in range(3):
            w.step(1 / 240)
        yield f"elastic_{integrator}", w


def cache_dir() -> Path | None:
    d = os.environ.get("NUMBA_CACHE_DIR")
    return Path(d) if d else None


def _cache_files(d: Path | None) -> int:
    return 0 if d is None or not d.exists() else sum(1 for _ in d.rglob("*.nbi"))


def _policy() -> dict:
    return {"fastmath": sorted(config.FASTMATH) if config.FASTMATH else False, "numba": numba.__version__}


def _check_policy(d: Path | None) -> None:
    """Empty a project-private cache written under another kernel policy (see the module docstring)."""
    if d is None:
        return
    stamp = d / POLICY
    old = json.loads(stamp.read_text()) if stamp.exists() else None
    stale = old != _policy() and _cache_files(d) > 0
    private = d.resolve() == (Path(__file__).resolve().parent.parent / ".numba_cache")
    if stale and private:
        print(f"warm_kernels: {d} was written under kernel policy {old}, now {_policy()}: emptied", file=sys.stderr)
        shutil.rmtree(d)
    d.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps(_policy()))


def main() -> None:
    _check_policy(cache_dir())
    for _name, _world in warm_worlds():
        pass


if __name__ == "__main__":
    main()
