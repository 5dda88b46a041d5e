"""What a step does when a body's state becomes non-finite (NaN, inf, a zero quaternion).

Every ``World.step`` keeps a copy of the bodies' kinematic state (13 doubles per body, one kernel
call: ``_core.dynamics.integrate.copy_body_state``). When the shared finish finds a non-finite body,
the step is rolled back: the copy is written back, the contact and joint warm-start caches (which the
failed step may have filled with NaN) are emptied, time and step count stay. A rejected step changes
nothing else, so the simulation is never lost. Then, by ``World.on_nonfinite``:

* ``"raise"`` (default): ``SimulationError`` naming the body the trouble started in (see
  :func:`origins`) with the offending field and value; the world is as it was before the step.
* ``"quarantine"``: the origin bodies are frozen where they were (fixed, zero velocity, still solid
  for the others), a :class:`BodyQuarantined` event per body goes to ``World.events``, and the step
  is taken again without them; up to ``MAX_RETRIES`` times, then ``SimulationError``.

The origin: the NaN of one body spreads through contacts and joints within the step, so the first
non-finite body after the step is often an innocent neighbour. The input of the step tells the
culprit: a body whose state, force or torque is non-finite or beyond ``STATE_LIMIT``, or whose
velocity after the external forces (v + dt (F / m + g), w + dt I^-1 tau) is beyond it. Only when
no input is suspicious (the solver itself diverged) are the bodies found non-finite after the step
named instead.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tumble._core.dynamics.integrate import STATE_LIMIT

# STATE_LIMIT = 1e100 [m, m/s, rad/s]: a magnitude no physical body in a tumble world reaches (the
# largest accepted size is 1e6 m; 1e100 leaves room for any run while products of two such values
# still fit in a double, which the step needs): a state beyond it fails the step like a NaN, and an
# input beyond it (state, or velocity after the step's forces) marks the origin of a failure
#: quarantine mode: how many times a step is retried after freezing the origin bodies
MAX_RETRIES = 4
MODES = ("raise", "quarantine")


class BodyQuarantined(NamedTuple):
    """Body ``body`` (``name``) was frozen during the step that ends at ``time`` [s] (step ``step``):
    ``reason`` says which field of it was non-finite or beyond ``STATE_LIMIT``."""

    body: int
    name: str
    step: int
    time: float
    reason: str


def origins(bodies, dt: float, gravity: np.ndarray, after_bad: np.ndarray) -> list[tuple[int, str]]:
    """The bodies a failed step's trouble started in, with the reason: those whose pre-step input is
    non-finite or beyond ``STATE_LIMIT`` (``bodies`` hold the rolled-back state and the user forces of
    the step), else ``after_bad``, the bodies the failed step left non-finite."""
    b = bodies
    n = b.count
    dyn = ~b.body_fixed[:n]
    fields = {
        "position": b.body_position[:n],
        "orientation": b.body_orientation[:n],
        "linear_velocity": b.body_linear_velocity[:n],
        "angular_velocity": b.body_angular_velocity[:n],
        "force": b.body_force[:n],
        "torque": b.body_torque[:n],
    }
    with np.errstate(all="ignore"):
        v_next = b.body_linear_velocity[:n] + dt * (b.body_force[:n] * b.body_inv_mass[:n, None] + gravity)
        w_next = b.body_angular_velocity[:n] + dt * np.einsum("nij,nj->ni", b.body_inv_inertia_world[:n],
                                                              b.body_torque[:n])
        fields["velocity after the forces"] = v_next
        fields["angular velocity after the torques"] = w_next
        found: dict[int, str] = {}
        for name, x in fields.items():
            bad = dyn & ~np.all(np.isfinite(x) & (np.abs(x) <= STATE_LIMIT), axis=1)
            for i in np.flatnonzero(bad):
                found.setdefault(int(i), f"{name}={x[i].tolist()}")
        q2 = np.sum(b.body_orientation[:n] ** 2, axis=1)
        for i in np.flatnonzero(dyn & ~(q2 > 0.5)):
            found.setdefault(int(i), f"orientation={b.body_orientation[i].tolist()} is no rotation")
    if found:
        return sorted(found.items())
    return [(int(i), "non-finite after the step (the solve diverged)") for i in after_bad]


def nonfinite_bodies(bodies) -> np.ndarray:
    """Ids of the bodies whose state the step's check rejects now (``first_nonfinite_body``: NaN, inf,
    beyond ``STATE_LIMIT``, or no rotation)."""
    b = bodies
    n = b.count
    with np.errstate(all="ignore"):
        ok = np.ones(n, dtype=bool)
        for a in (b.body_position, b.body_linear_velocity, b.body_angular_velocity):
            ok &= np.all(np.abs(a[:n]) <= STATE_LIMIT, axis=1)
        q2 = np.sum(b.body_orientation[:n] ** 2, axis=1)
        ok &= (q2 > 0.5) & (q2 < 2.0)
    return np.flatnonzero(~ok)


def freeze(core, body: int) -> None:
    """Quarantine: ``body`` becomes fixed where it is (zero velocity, no load), still solid for the others."""
    b, g = core.bodies, core.geoms
    b.body_fixed[body] = True
    b.body_inv_mass[body] = 0.0
    b.body_inv_inertia_local[body] = 0.0
    b.body_inv_inertia_world[body] = 0.0
    for a in (b.body_linear_velocity, b.body_angular_velocity, b.body_force, b.body_torque):
        a[body] = 0.0
    g.geom_static[: g.count][g.geom_body[: g.count] == body] = True


def forget_caches(core) -> None:
    """After a rollback: the body frames (R I^-1 R^T) are recomputed from the restored orientations, and
    the warm-start caches the failed step wrote, which may hold NaN, start empty."""
    from tumble._core import stages

    stages.refresh_frames(core)
    core.contacts.count = 0
    core.contacts_previous.count = 0
    core.joint_store.joint_impulse[: core.joint_store.count] = 0.0
    core.solver.state_changed()
