"""The step: the solver's own stages, then the finish every solver shares.

    solver.step        detection, rows, solve, integration: each solver composes ``_core.stages``
                       in its algorithm's order, timing every stage (``_core/solvers/<name>/solver.py``)
    finish             non-finite check, user forces cleared, deepest overlap (one kernel,
                       dynamics.integrate.finish_bodies; a solver step whose last kernel call did it,
                       ``stages.collide_or_fly``, leaves its result in ``core.finished``), joint
                       coordinates, counters, time advanced

``step`` receives the core state (``_core.state.CoreState``) only; ``World.step`` validates first
and turns the non-finite body it may report into a ``SimulationError`` naming it.
"""

from __future__ import annotations

import math
import time

from tumble._core import stages
from tumble._core.dynamics.integrate import finish_bodies


def step(core, dt: float) -> int:
    """Advance ``core`` by ``dt`` seconds. Returns -1, or the first body whose state became
    non-finite (the step is then not finished: time, forces and counters stay as they were)."""
    prof: dict[str, float] = {}
    t_start = time.perf_counter()
    contacts = core.solver.step(core, dt, prof, t_start)
    return finish(core, dt, prof, contacts, t_start)


def finish(core, dt: float, prof: dict, contacts: int, t_start: float) -> int:
    """The shared end of every step (see the module docstring)."""
    b, c = core.bodies, core.contacts
    if core.finished is None:
        bad, deepest = finish_bodies(b.body_position, b.body_orientation, b.body_linear_velocity,
                                     b.body_angular_velocity, b.body_force, b.body_torque, b.count, c.contact_depth,
                                     c.count)
    else:   # a fused call did it after the step's last motion (stages.collide_or_fly)
        (bad, deepest), core.finished = core.finished, None
    if bad >= 0:
        return int(bad)
    if core.joint_layout.row_total:
        stages.joint_coordinates(core)
    # contacts: points the dynamics solved; max_penetration: the deepest point of the last detection
    # (for shock that is detect(t + dt), before the final correction: the conservative figure)
    core.counters["contacts"] = int(contacts)
    core.counters["max_penetration"] = float(deepest)
    core.counters["bodies"] = int(b.count)
    prof["total"] = 1000.0 * (time.perf_counter() - t_start)
    core.profile = prof
    core.time += dt
    core.step_count += 1
    if not math.isfinite(core.time):
        raise ValueError("time overflow")
    return -1
