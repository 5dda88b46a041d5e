"""The impulse solver's two hot stages alone (issue 19): the inputs of one step's penetration correction
and contact resolution (``driver.correct`` / ``driver.resolve``) are captured from a scene, then each
stage is timed on fresh copies of them (process CPU time, one thread), with variants of the resolution
that attribute its time (no shock propagation, first-in-list order, other caps), and a hash of each
stage's outputs. Two trees (old and new code, in alternating processes) can so be compared bit for bit
and in time without the rest of the step and without the drift of a whole run.

    .venv/bin/python benchmarks/impulse_kernels.py [--scene pile1000] [--dt 0.01] [--step 150] [--reps 8]
        [--variants] [--save FILE | --load FILE]

Prints one line per stage and variant; writes nothing (``--save`` writes the captured inputs, a pickle
that ``--load`` reads in another process or tree).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import pickle
import sys
import time

import numpy as np

#: resolution variants (positional argument of ``driver.resolve`` -> value): what the time is spent on
VARIANTS = {
    "as the scene": {},
    "no shock propagation": {19: False},
    "first-in-list order": {21: False},
    "global cap 1x contacts": {18: 1.0},
    "stage cap 3x contacts": {20: 3.0},
}


def capture(scene: str, dt: float | None, step: int) -> dict:
    """Step ``scene`` under impulse (one thread) and keep deep copies of the arguments of driver.correct and
    driver.resolve in step ``step`` (0-based)."""
    import tumble.scenes as sc
    from tumble._core.solvers.impulse import driver

    spec = sc.spec(scene)
    if dt:
        spec.dt = dt
    w = spec.build(solver="impulse")
    kept: dict = {}
    now = {"step": 0}
    originals = {name: getattr(driver, name) for name in ("correct", "resolve")}

    def keeping(name):
        def call(*args, **kw):
            if now["step"] == step:
                kept[name] = copy.deepcopy((args, kw))
            return originals[name](*args, **kw)
        return call

    try:
        for name in originals:
            setattr(driver, name, keeping(name))
        for k in range(step + 1):
            now["step"] = k
            w.step(spec.dt)
    finally:
        for name, fn in originals.items():
            setattr(driver, name, fn)
    kept["counters"] = {k: v for k, v in w.counters.items() if isinstance(v, (int, float))}
    return kept


def _digest(args, out) -> str:
    h = hashlib.sha256()
    for x in list(args) + [out]:
        if isinstance(x, np.ndarray):
            h.update(np.ascontiguousarray(x).tobytes())
    return h.hexdigest()[:12]


def time_stage(kept: dict, name: str, reps: int, override: dict | None = None) -> tuple[float, float, np.ndarray, str]:
    """(min, median) ms of ``reps`` calls of driver.<name> on fresh copies, its stats and the outputs' hash."""
    from tumble._core.solvers.impulse import driver

    fn = getattr(driver, name)
    ms = []
    for r in range(reps + 1):                 # the first call loads the kernels
        args, kw = copy.deepcopy(kept[name])
        args = list(args)
        for i, v in (override or {}).items():
            args[i] = v
        t = time.process_time()
        out = fn(*args, **kw)
        if r:
            ms.append(1e3 * (time.process_time() - t))
    return float(np.min(ms)), float(np.median(ms)), out, _digest(args, out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default="pile1000")
    ap.add_argument("--dt", type=float, default=None, help="time step (default: the scene's; pile1000: 0.01)")
    ap.add_argument("--step", type=int, default=150)
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--variants", action="store_true", help="also the resolution's variants (VARIANTS)")
    ap.add_argument("--save", default=None)
    ap.add_argument("--load", default=None)
    args = ap.parse_args(argv)
    import numba

    numba.set_num_threads(1)
    if args.load:
        with open(args.load, "rb") as f:
            kept = pickle.load(f)
    else:
        dt = args.dt if args.dt is not None else (0.01 if args.scene == "pile1000" else None)
        kept = capture(args.scene, dt, args.step)
        if args.save:
            with open(args.save, "wb") as f:
                pickle.dump(kept, f)
    k = kept["counters"]
    print(f"{args.scene} step {args.step}: {k.get('contacts')} contacts, {k.get('batches')} batches (largest "
          f"{k.get('largest_batch')}), {k.get('penetrating')} penetrating")
    for name in ("correct", "resolve"):
        if name not in kept:
            print(f"{name}: not called in that step")
            continue
        lo, med, st, h = time_stage(kept, name, args.reps)
        s = st.sum(axis=0)
        if name == "correct":
            what = f"penetrating {s[0]}, corrected {s[1]}, unresolvable {s[2]}, bodies moved {s[3]}"
        else:
            what = f"iterations {s[0]} + shock {s[3]}, stages {s[1]}, closing left {s[2]}"
        print(f"{name}: min {lo:.3f} ms, median {med:.3f} ms; {what}; outputs {h}")
    if args.variants and "resolve" in kept:
        for label, override in VARIANTS.items():
            lo, med, st, h = time_stage(kept, "resolve", args.reps, override)
            its = int(st[:, 0].sum() + st[:, 3].sum())
            print(f"  resolve, {label}: min {lo:.3f} ms, {its} iterations, {1e6 * lo / max(its, 1):.0f} ns per "
                  f"iteration, closing left {int(st[:, 2].sum())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
