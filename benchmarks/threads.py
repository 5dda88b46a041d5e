"""Thread policy (issue 19): ms per step of a parallel scene under Numba's threading layers and OpenMP
wait policies, quiet and with another process spinning on one core. Each configuration runs in its
own process (the layer and the wait policy are fixed when the first parallel kernel runs); rounds
alternate the configurations so that a busy machine's drift hits all of them alike.

    .venv/bin/python benchmarks/threads.py [--scene balls_well] [--solver pgs] [--rounds 3]

Prints one line per configuration and round; writes nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import subprocess
import sys
import time

CONFIGS = {
    "omp, passive wait (tumble's default)": {"NUMBA_THREADING_LAYER": "omp", "OMP_WAIT_POLICY": "PASSIVE"},
    "omp, active wait": {"NUMBA_THREADING_LAYER": "omp", "OMP_WAIT_POLICY": "ACTIVE"},
    "workqueue": {"NUMBA_THREADING_LAYER": "workqueue"},
    "one thread": {"NUMBA_NUM_THREADS": "1"},
}


def _spin(stop):
    x = 0
    while not stop.is_set():
        x += 1


def measure(scene: str, solver: str, dt: float, steps: int) -> None:
    import numba

    import tumble.scenes as sc

    w = sc.build(scene, solver=solver)
    for _ in range(50):
        w.step(dt)

    def ms():
        t = time.perf_counter()
        for _ in range(steps):
            w.step(dt)
        return 1000.0 * (time.perf_counter() - t) / steps

    quiet = min(ms() for _ in range(2))
    stop = mp.Event()
    p = mp.Process(target=_spin, args=(stop,))
    p.start()
    try:
        busy = min(ms() for _ in range(2))
    finally:
        stop.set()
        p.join()
    print(f"{numba.threading_layer():9s} {numba.get_num_threads()} threads: quiet {quiet:.2f} ms/step, "
          f"one core busy {busy:.2f} ms/step", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default="balls_well")
    ap.add_argument("--solver", default="pgs")
    ap.add_argument("--dt", type=float, default=1 / 240)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        measure(a.scene, a.solver, a.dt, a.steps)
        return 0
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    for r in range(a.rounds):
        for name, env in CONFIGS.items():
            e = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "NUMBA_THREADING_LAYER")}
            e.update(env)
            out = subprocess.run([sys.executable, __file__, "--child", "--scene", a.scene, "--solver", a.solver,
                                  "--dt", str(a.dt), "--steps", str(a.steps)], env=e, capture_output=True, text=True)
            line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr.strip()[-200:]
            print(f"round {r + 1}: {name:38s} {line}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
