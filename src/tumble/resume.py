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

4. elastic bodies (``meta["world"]["elastic"]``: rest vertices as placed, tets, material, fixed pins, options)
   are added again and the frame's elastic state written: vertex positions and velocities, floor springs,
   the springs between elastic bodies, the RKF controller's step, the step cap and the dissipated energy
   (``recording.ELASTIC_RESUME_SCHEMA``); without rigid contacts the continuation is bit-identical.
   Not restorable: a pin that follows a trajectory (a callable) and elastic bodies added after the frame.

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

    elastic = None
    if getattr(recorder.w, "elastic_body_count", 0):
        elastic = elastic_document(recorder.w)
        if isinstance(elastic, str):
            return {"error": elastic}
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
    return {"scene": scene, **({"elastic": elastic} if elastic is not None else {}),
            "body_first_time": [float(t) for *_rest, t in recorder.body_specs],
            "joint_rows": [row for _j, row, _step in recorder.joint_specs],
            "joint_first_step": [int(step) for _j, _row, step in recorder.joint_specs],
            "joint_removed_step": [int(recorder.joint_removed_step.get(j, -1))
                                   for j in range(len(recorder.joint_specs))]}


def elastic_document(w) -> dict | str:
    """The elastic bodies of a World as plain data (the ``elastic`` entry of ``meta["world"]``): per body its
    name, rest vertices as placed (``ElasticBody.initial_positions``, so the rebuilt body's rest shape is the
    same to the bit), tets, material and fixed pins (vertex ids and held positions); the ElasticSystem options
    and the rigid penalty stiffness. A string (why) when a pin follows a trajectory (a Python callable)."""
    from dataclasses import asdict

    owner = w._core.elastic
    bodies = []
    for i, body in enumerate(owner.bodies):
        pins = []
        for c in body.constraints:
            if c.velocity is None:  # World.pin with a trajectory: not plain data
                return (f"elastic body {i} has vertices pinned to a trajectory (a Python callable), which a "
                        "recording cannot hold")
            pins.append({"vertices": [int(v) for v in c.vertices], "held": np.asarray(c.trajectory(0.0)).tolist()})
        bodies.append({"name": owner.names[i], "vertices": body.initial_positions.tolist(),
                       "tets": body.mesh.tets.tolist(), "material": asdict(body.material), "pins": pins})
    options = {k: v for k, v in owner.options.items() if _plain(v)}
    if len(options) != len(owner.options):
        return "the elastic options hold a value that is not plain data"
    return {"bodies": bodies, "options": options, "rigid_contact_stiffness": float(owner.rigid_stiffness)}


def _restore_elastic(w, doc: dict, a: dict, f: int, where: str) -> None:
    """Add the recorded elastic bodies to ``w`` and write frame ``f``'s elastic state (positions, velocities,
    floor and pair springs, the RKF controller's step, the dissipated energy, the step cap)."""
    from tumble.elastic import ElasticMaterial, TetMesh
    from tumble.world import _constraint

    bodies = doc["bodies"]
    counts = a["elastic_vertex_count"]
    present = int(a["frame_elastic_vertex_count"][f])
    if len(bodies) != len(counts) or present != int(counts.sum()):
        raise RecordingError(f"{where}: field frame_elastic_vertex_count[{f}] = {present}: an elastic body enters "
                             "after this frame, which world_at cannot restore")
    scalars = a["frame_elastic_scalars"][f]
    if not scalars[0] > 0.0:
        raise RecordingError(f"{where}: the recording has no elastic resume state (frame_elastic_velocity ...): "
                             "it was written by a tumble that did not record it")
    for b in bodies:
        mesh = TetMesh(np.asarray(b["vertices"], dtype=np.float64), np.asarray(b["tets"], dtype=np.int64),
                       min_quality=0.0)
        w.add_elastic_body(mesh, material=ElasticMaterial(**b["material"]), name=b["name"])
    owner = w._core.elastic
    if doc["options"] or doc["rigid_contact_stiffness"] != owner.rigid_stiffness:
        w.set_elastic_options(rigid_contact_stiffness=doc["rigid_contact_stiffness"], **doc["options"])
    for body, b in zip(owner.bodies, bodies):
        for pin in b["pins"]:
            held = np.asarray(pin["held"], dtype=np.float64)
            still = (lambda fixed: (lambda t: fixed))(held)
            rest = (lambda zero: (lambda t: zero))(np.zeros_like(held))
            body.constraints.append(_constraint(np.asarray(pin["vertices"], dtype=np.int64), still, rest, rest))
    system = owner.system
    system.positions[:] = a["frame_elastic_position"][f, :present]
    system.velocities[:] = a["frame_elastic_velocity"][f, :present]
    system.spring_alive[:] = a["frame_elastic_spring"][f, :present]
    system.spring_anchor[:] = a["frame_elastic_anchor"][f, :present]
    system.dissipated = float(scalars[1])
    s, c = int(a["frame_elastic_pair_start"][f]), int(a["frame_elastic_pair_count"][f])
    if system.body_contacts is not None:
        state = {k: a[f"elastic_pair_{k}"][s: s + c] for k in ("kind", "index", "weight", "sign", "edge")}
        busy_v = np.zeros(present, dtype=np.bool_)
        busy_e = np.zeros(len(system.body_contacts.edges), dtype=np.bool_)
        busy_v[state["index"][state["kind"] == 0, 0]] = True
        busy_e[state["edge"][state["kind"] == 1].ravel()] = True
        system.body_contacts.set_state({**state, "vertex_busy": busy_v, "edge_busy": busy_e, "created": 0,
                                        "removed": 0})
    if any(b["pins"] for b in bodies):
        owner.rebuild(w.time, w.gravity, w._floor())  # the pins: the state above is carried over
        system = owner.system
    system._h = float(scalars[0])
    system.max_step = np.inf if scalars[2] < 0 else float(scalars[2])


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
    if "elastic" in doc:
        try:
            _restore_elastic(w, doc["elastic"], a, f, where)
        except (KeyError, TypeError, ValueError) as e:
            raise RecordingError(f"{where}: field meta.world.elastic is malformed ({type(e).__name__}: {e})") \
                from None
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

