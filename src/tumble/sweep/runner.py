"""One run, executed on a worker: build the scene with the run's parameters, step it, return a flat
record (metrics, wall time, error). Never raises for a bad run: an exception, a non-finite state
(``tumble.SimulationError``) or the per-run timeout becomes the record's ``error``, so one bad run
does not stop the sweep. The timeout is checked after every step: a single step that never returns is
not interrupted (the engine's worker would have to be killed; its retries then apply).
"""

from __future__ import annotations

import math
import os
import time

from tumble.sweep.expand import Run
from tumble.sweep.spec import MATERIAL_OVERRIDES, settings_fields

#: Numba threads a run may use (env TUMBLE_SWEEP_THREADS, default 1). One: the sweep's worker processes
#: already fill the cores (one per core by default), and parallel kernels on top oversubscribe them:
#: 25-40x slower runs measured with 2 threads x 2 workers on this 2-core machine (executor docstring).
THREADS_PER_RUN = int(os.environ.get("TUMBLE_SWEEP_THREADS", "1"))


class RunTimeout(Exception):
    """A run went past its wall-time limit (checked after every step)."""


def build_spec(run: Run, solver: str):
    """The SceneSpec of ``run`` and the World settings it passes, parameters split into scene
    parameters, material overrides (every body) and solver settings."""
    import dataclasses

    from tumble import scenes
    from tumble.scenefile import load_scene

    values = run.values()
    known = set() if _is_file(run.scene) else set(scenes.defaults(run.scene))
    scene_params = {k: v for k, v in values.items() if k in known}
    if "seed" in known:
        scene_params.setdefault("seed", run.seed)      # scenes with randomness take the run's seed
    material = {k: v for k, v in values.items() if k in MATERIAL_OVERRIDES and k not in known}
    settings = {k: v for k, v in values.items() if k not in known and k not in MATERIAL_OVERRIDES}
    allowed = settings_fields(solver)
    settings = {k: v for k, v in settings.items() if k in allowed}
    spec = load_scene(run.scene) if _is_file(run.scene) else scenes.spec(run.scene, **scene_params)
    if material:
        for b in spec.bodies:
            b.material = dataclasses.replace(b.material, **material)
    return spec, settings


def _is_file(scene: str) -> bool:
    return scene.lower().endswith((".toml", ".json"))


def _plain(v):
    """A metric value as a table cell: numbers and bools as float, None as NaN, anything else as text."""
    import json

    if v is None:
        return math.nan
    if isinstance(v, (bool, int, float)):
        return float(v)
    try:
        import numpy as np

        if isinstance(v, np.generic):
            return float(v)
    except ImportError:
        pass
    return json.dumps(v, sort_keys=True, default=str)


def execute(run: Run) -> dict:
    """Run ``run`` and return its record: ``run_id``, ``metrics`` (name -> value), ``wall_s``, ``steps``,
    ``error`` (None or "Type: message"), ``worker`` (host:pid), ``dt`` and ``seconds`` used."""
    from tumble.scenes.metrics import SceneMetrics
    from tumble.sweep.spec import RUN_METRICS

    rec = {"run_id": run.run_id, "metrics": {}, "wall_s": math.nan, "steps": 0, "error": None,
           "worker": f"{os.uname().nodename}:{os.getpid()}"}
    t0 = time.perf_counter()
    try:
        import numba

        numba.set_num_threads(min(THREADS_PER_RUN, numba.config.NUMBA_NUM_THREADS))
        spec, settings = build_spec(run, run.solver)
        w = spec.build(solver=run.solver, **settings)
        dt = spec.dt if run.dt is None else run.dt
        seconds = spec.seconds if run.seconds is None else run.seconds
        rec["dt"], rec["seconds"] = float(dt), float(seconds)
        metrics = SceneMetrics(spec)
        metrics.observe(w)
        deadline = t0 + run.timeout
        steps = [0]

        def after_step(world):
            metrics.observe(world)
            steps[0] += 1
            if time.perf_counter() > deadline:
                raise RunTimeout(f"run exceeded its timeout of {run.timeout:g} s at t={steps[0] * dt:.4g} s "
                                 f"(step {steps[0]})")

        try:
            summary = w.run(seconds, dt, callback=after_step)
        finally:
            rec["steps"] = steps[0]
        m = metrics.result()
        result = {"bodies": w.body_count, "steps": summary["steps"], "ms_per_step": summary["ms_per_step"],
                  "realtime_factor": summary["realtime_factor"], **m}
        names = [n for n in run.metrics if isinstance(n, str)] or [
            k for k in RUN_METRICS if k in result]
        for n in names:
            rec["metrics"][n] = _plain(result.get(n))
        for f in run.metrics:
            if callable(f):
                v = f(w, result)
                if isinstance(v, dict):
                    rec["metrics"].update({f"{f.__name__}.{k}": _plain(x) for k, x in v.items()})
                else:
                    rec["metrics"][f.__name__] = _plain(v)
    except Exception as e:  # noqa: BLE001  (a bad run is data: recorded, never fatal to the sweep)
        rec["error"] = f"{type(e).__name__}: {e}"
    rec["wall_s"] = time.perf_counter() - t0
    return rec


def warm_up(scene: str, params: dict, solvers: list[str], dt: float | None) -> dict:
    """Load (or compile) every kernel the sweep's scene needs, once per worker process: one step of the
    first run's scene under each solver. Returns {solver: seconds}."""
    out = {}
    for solver in solvers:
        t0 = time.perf_counter()
        try:
            run = Run(run_id="warm-up", scene=scene, solver=solver, dt=dt, seconds=None, repeat=0, seed=0,
                      params=params, varied=[])
            spec, settings = build_spec(run, solver)
            w = spec.build(solver=solver, **settings)
            w.step(spec.dt if dt is None else dt)
        except Exception:  # noqa: BLE001  (the run itself will record the error)
            pass
        out[solver] = time.perf_counter() - t0
    return out
