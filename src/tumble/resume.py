"""Resuming a run from a recording: ``Recording.world_at(frame)``.

A recording's frames hold every body's pose and velocity; its ``meta["world"]`` document (written by
the recorder, :func:`world_document`) holds what the frames do not: each body's shape, material and
mass as given to ``add_body``, the joints (their definitions and body-frame rows), gravity, its
schedule and the settings at the start of the recording, and when each body and joint appeared and
went. :func:`world_at` rebuilds a ``World`` from the two:

1. the bodies present in the frame are added (same order, so same ids) with the recorded shape,
   material and mass arguments (so masses and inertias are bit-identical), then their centre of mass,
   orientation and velocities are written from the frame exactly;
2. the joints present then are added and their body-frame definition rows (anchors, axes, reference
   directions, relative rotation, limits, motors) overwritten with the recorded ones, so a joint added
   at any earlier pose keeps its frames;
3. bodies and joints removed by then are removed again (ids stay as in the original run), bodies that
   enter later are queued with ``World.spawn`` at the time they entered, pending gravity changes are
   queued, and the time and step count are the frame's.

Not in a recording, so not restored: the warm-start impulses and the solvers' private state (layer
impulses, sleep counters; a body asleep in the frame with zero velocity starts asleep), a hinge or
slider coordinate beyond one turn, motors changed during the run (their first definition is used).
The continuation is close to the original (exactly equal without contacts or joints), not bit-identical;
``World.save_state`` / ``restore_state`` is the exact tool within one process.
"""

from __future__ import annotations

import math

import numpy as np

from tumble.errors import RecordingError, TumbleError

#: the joint store fields that define a joint (body frames; tumble._core.storage.JointStore)
JOINT_DEFINITION_FIELDS = ("joint_anchor", "joint_axis", "joint_ref", "joint_rel_q", "joint_length", "joint_soft",
                           "joint_has_limits", "joint_limit", "joint_motor_mode", "joint_motor", "joint_break",
                           "joint_collide")


def world_document(recorder) -> dict:
    """The ``meta["world"]`` object of a recording (plain data; the recorder's strict JSON writes
    non-finite floats as strings). ``{"error": why}`` when the world cannot be described (a shape or
    setting a scene file cannot hold): the recording is still written, only ``world_at`` refuses."""
    from tumble import scenefile
    from tumble.scenes.spec import BodySpec, SceneSpec

    if getattr(recorder.w, "elastic_body_count", 0):
        # the elastic state (deformed vertices, floor springs, integrator step) is not in the scene file
        return {"error": "the world has elastic bodies, which Recording.world_at does not rebuild yet"}
    start = recorder.world_start
    spec = SceneSpec(name=start["scene"] or "recorded", gravity=tuple(float(x) for x in start["gravity"]),
                     dt=float(start["dt"]),
                     settings={k: v for k, v in start["settings"].items() if _plain(v)},
                     gravity_schedule=[(float(t), tuple(float(x) for x in g)) for t, g in start["gravity_schedule"]])
    for shape, material, (mass, density), fixed, name, _t in recorder.body_specs:
        spec.bodies.append(BodySpec(shape=shape, fixed=fixed, mass=mass, density=density, material=material,
                                    name=name))
    spec.joints = [j for j, _row, _step in recorder.joint_specs]
    try:
        scene = scenefile.to_dict(spec)
    except TumbleError as e:
        return {"error": str(e)}
    return {"scene": scene,
            "body_first_time": [float(t) for *_rest, t in recorder.body_specs],
            "joint_rows": [row for _j, row, _step in recorder.joint_specs],
            "joint_first_step": [int(step) for _j, _row, step in recorder.joint_specs],
            "joint_removed_step": [int(recorder.joint_removed_step.get(j, -1))
                                   for j in range(len(recorder.joint_specs))]}


def _plain(v) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


def world_at(rec, frame, solver: str | None, settings: dict):
    """See ``Recording.world_at``."""
    from tumble import scenefile

    where = f"world_at({frame!r})"
    if isinstance(frame, bool) or not isinstance(frame, (int, np.integer)):
        raise RecordingError(f"{where}: field frame={frame!r} is not an integer")
    F = rec.frame_count
    f = int(frame) + (F if frame < 0 else 0)
    if not 0 <= f < F:
        raise RecordingError(f"{where}: field frame={frame} is outside the recording's {F} frames")
    doc = rec.meta.get("world")
    if not isinstance(doc, dict):
        raise RecordingError(f"{where}: the recording has no world description (meta.world): it was written "
                             "by a tumble that did not record one")
    if "error" in doc:
        raise RecordingError(f"{where}: the recorded world could not be described: {doc['error']}")
    try:
        spec = scenefile.from_dict(doc["scene"], source="recording meta.world")
        first_time = np.asarray(doc["body_first_time"], dtype=np.float64)
        joint_rows = doc["joint_rows"]
        joint_first = np.asarray(doc["joint_first_step"], dtype=np.int64)
        joint_gone = np.asarray(doc["joint_removed_step"], dtype=np.int64)
    except (KeyError, TypeError, ValueError, TumbleError) as e:
        raise RecordingError(f"{where}: field meta.world is malformed ({type(e).__name__}: {e})") from None
    N = rec.body_count
    if len(spec.bodies) != N or first_time.shape != (N,) or len(joint_rows) != len(spec.joints):
        raise RecordingError(f"{where}: field meta.world describes {len(spec.bodies)} bodies and "
                             f"{len(spec.joints)} joints; the frames have {N} bodies")

    from tumble.world import World

    a = rec.arrays
    step = int(a["frame_step"][f])
    now = float(a["frame_time"][f])
    present = int(a["frame_body_count"][f])
    chosen = rec.solver if solver is None else solver
    from tumble._core.solvers import registry

    own = set(registry.settings_class(chosen).field_names())
    w = World(gravity=spec.gravity, solver=chosen, **{k: v for k, v in spec.settings.items() if k in own})
    if settings:
        w.settings.update(**settings)
    sleeping = a["frame_sleeping"][f]
    for i, b in enumerate(spec.bodies):
        kw = dict(fixed=b.fixed, mass=b.mass, density=b.density, material=b.material, name=b.name)
        if i < present:
            at_rest = not np.any(a["frame_linear_velocity"][f, i]) and not np.any(a["frame_angular_velocity"][f, i])
            w.add_body(b.shape, asleep=bool(sleeping[i] and at_rest and not b.fixed), **kw)
            _write_state(w, i, a, f)
        else:
            w.spawn(max(float(first_time[i]), now), b.shape, **kw)
    js = w.joint_store
    for j, joint in enumerate(spec.joints):
        if joint_first[j] > step:      # added later in the run: not part of this frame's world
            break
        ends = [x for x in (joint.a, joint.b) if x is not None]
        if any(x >= present for x in ends):
            raise RecordingError(f"{where}: joint {j} joins a body that enters after frame {f}; "
                                 "world_at cannot restore it")
        k = w.add_joint(joint)         # same id as in the run: joints are added in their order
        for name in JOINT_DEFINITION_FIELDS:
            getattr(js, name)[k] = np.asarray(_floats(joint_rows[j][name]))
        if 0 <= joint_gone[j] <= step:
            w.remove_joint(k)          # gone by then (removed or broken): added and removed, ids kept
    w._joints.layout()
    gone = a["body_removed_step"]
    for i in range(present):
        if 0 <= gone[i] <= step:
            w.remove_body(i)
    w._gravity_schedule = [(t, np.asarray(g, dtype=np.float64)) for t, g in spec.gravity_schedule if t > now + 1e-9]
    due = [g for t, g in spec.gravity_schedule if t <= now + 1e-9]
    if due:
        w.gravity = due[-1]
    w._core.time = now
    w._core.step_count = step
    w.scene = spec if rec.scene else None
    if rec.scene:
        spec.name = rec.scene
    w.default_dt = rec.dt
    w._core.solver.state_changed()
    return w


def _floats(v):
    """A JSON row back to numbers (the strict-JSON writer turns inf into the string "inf")."""
    if isinstance(v, list):
        return [_floats(x) for x in v]
    if isinstance(v, str):
        return {"inf": math.inf, "-inf": -math.inf}[v]
    return v


def _write_state(w, i: int, a: dict, f: int) -> None:
    """Body ``i``'s centre of mass, orientation and velocities exactly as in frame ``f``."""
    b = w.bodies
    b.body_position[i] = a["frame_position"][f, i]
    b.body_orientation[i] = a["frame_orientation"][f, i]
    if not b.body_fixed[i]:
        b.body_linear_velocity[i] = a["frame_linear_velocity"][f, i]
        b.body_angular_velocity[i] = a["frame_angular_velocity"][f, i]

