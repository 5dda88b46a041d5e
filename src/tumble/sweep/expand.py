"""A sweep spec expanded into runs, each with a deterministic run id and seed.

A run is fully named by (scene, fixed parameters, parameter point, solver, dt, seconds, repeat, base
seed): its id is a hash of these, so the same spec gives the same ids on any machine and a sweep
can resume by skipping the ids already in its results. The seed of a run depends on the base seed,
the parameter point and the repeat, not on the solver or dt, so every solver and dt sees the same
jitter for a repeat (paired comparisons).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field

import numpy as np

from tumble.sweep.spec import SweepSpec


@dataclass
class Run:
    """One run. ``params``: the nominal values of the parameters (fixed + point); ``jitter``: the seeded
    offsets added to some of them for this run (the run uses params[k] + jitter[k])."""

    run_id: str
    scene: str
    solver: str
    dt: float | None
    seconds: float | None
    repeat: int
    seed: int
    params: dict
    varied: list[str]
    jitter: dict = field(default_factory=dict)
    metrics: list = field(default_factory=list)
    timeout: float = 600.0

    def values(self) -> dict:
        """The parameter values the run uses (nominal + jitter)."""
        out = dict(self.params)
        for k, a in self.jitter.items():
            out[k] = out[k] + a
        return out


def _canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def _digest(obj) -> str:
    return hashlib.sha256(_canonical(obj).encode()).hexdigest()


def points(spec: SweepSpec) -> list[dict]:
    """The parameter points: product of the explicit points, the grid and the random samples."""
    pts = spec.points or [{}]
    grid = [dict(zip(spec.grid, combo)) for combo in itertools.product(*spec.grid.values())] if spec.grid else [{}]
    rnd = [{}]
    if spec.random:
        # sampling seeded by the base seed alone, so the points do not change when solvers or dts do
        rng = np.random.default_rng([spec.seed, 0x5EED])
        rnd = [{k: float(rng.uniform(lo, hi)) for k, (lo, hi) in spec.random.items()} for _ in range(spec.samples)]
    return [{**a, **b, **c} for a in pts for b in grid for c in rnd]


def expand(spec: SweepSpec) -> list[Run]:
    """Every run of ``spec`` in a stable order: point, repeat, solver, dt."""
    from tumble import scenes

    scene_id = spec.scene_identity()
    defaults = {} if spec.is_file else scenes.defaults(spec.scene)
    varied = spec.varied()
    runs = []
    for point in points(spec):
        params = {**spec.fixed, **point}
        for k in sorted(spec.jitter):
            params.setdefault(k, defaults.get(k))     # a jittered scene default becomes explicit
        for repeat in range(spec.repeats):
            seed = int(_digest([spec.seed, scene_id, params, repeat])[:8], 16)
            jitter = {}
            if spec.jitter:
                rng = np.random.default_rng(seed)
                for k in sorted(spec.jitter):
                    jitter[k] = float(rng.uniform(-spec.jitter[k], spec.jitter[k]))
            for solver in spec.solvers:
                for dt in spec.dts:
                    key = [scene_id, params, solver, dt, spec.seconds, repeat, seed, jitter]
                    runs.append(Run(run_id=_digest(key)[:16], scene=spec.scene, solver=solver, dt=dt,
                                    seconds=spec.seconds, repeat=repeat, seed=seed, params=dict(params),
                                    varied=varied, jitter=dict(jitter), metrics=list(spec.metrics),
                                    timeout=spec.timeout))
    return runs
