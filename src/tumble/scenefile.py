"""Scene files: a declarative TOML / JSON format for :class:`tumble.scenes.spec.SceneSpec`.

    from tumble.scenefile import load_scene, save_scene
    spec = load_scene("examples/scenes/domino_row.toml")     # .toml or .json, by extension
    w = spec.build(solver="pgs")
    save_scene(tumble.scenes.spec("pyramid20"), "pyramid20.json")

``to_dict(spec)`` / ``from_dict(d, source)`` convert between a spec and the plain data of a file;
``load_scene`` / ``save_scene`` add the file formats (TOML read with the standard ``tomllib`` and
written with ``tomli_w``'s escaping; JSON with the ``json`` module). Writing a library scene and
reading it back is exact: every float is written with ``repr`` (shortest round-tripping form), so the
spec read back builds a world whose arrays are bit-identical to the original's.

Schema, version 1
=================

Only fields that differ from their defaults are written; reading fills the defaults. Units are SI
(m, kg, s, rad), quaternions are (w, x, y, z), vectors are arrays of numbers. Infinity is ``inf`` in
TOML and ``"inf"`` / ``"-inf"`` (strings) in JSON; NaN is never accepted.

Top level::

    format = "tumble-scene"        # required
    version = 1                    # required; files of a newer version are refused
    no_collide = [[1, 2], [3, 4]]  # optional: body pairs (ids or unique names) that do not collide

``[scene]`` (optional table)::

    name = "my_scene"              # default: the file name without extension ("scene" for a dict)
    description = "one line"       # default ""
    gravity = [0.0, 0.0, -9.81]    # [m/s^2]
    dt = 0.016666666666666666      # [s] default step (1/60), > 0
    seconds = 5.0                  # [s] default duration of `tumble run`, > 0
    solver = "pgs"                 # optional default solver (kept as the spec's ``solver`` attribute)
    settings = { iterations = 10 } # World keywords (solver settings), checked against the solver
    params = { count = 10 }        # free-form: the parameters the scene was made with
    gravity_schedule = [[0.0, [0.0, 0.0, 0.0]], [1.0, [0.0, 0.0, -10.0]]]
                                   # optional: [time [s], gravity [m/s^2]] pairs, times non-decreasing
                                   # (SceneSpec.gravity_schedule / World.schedule_gravity)

``[[materials]]`` (optional): each material is written once and referenced by name from bodies::

    name = "oak"                   # Material.name; also the reference key unless `id` is given
    id = "oak-2"                   # optional reference key (written when two materials share a name)
    density = 800.0                # [kg/m^3] default 1000
    friction = 0.5                 # default 0.5, >= 0
    restitution = 0.25             # default 0, in [0, 1]

A body's ``material = "oak"`` is looked up in this table first, then among the presets of
``tumble.materials.PRESETS`` (default, oak, iron, granite, rubber, ice, concrete, steel). A body may
also give an inline table ``material = { density = 800.0, friction = 0.3 }`` (name "default" unless
given). Bodies without ``material`` get ``tumble.materials.DEFAULT``.

``[[shapes]]`` (optional): shapes used by several bodies, written once and referenced by ``id``::

    id = "cube"
    type = "box"
    half_extents = [0.5, 0.5, 0.5]

Shape tables (inline in a body, ``shape = { type = "sphere", radius = 0.1 }``, or in ``[[shapes]]``):

=============  =================================================================================
type           fields
=============  =================================================================================
``sphere``     ``radius`` [m] > 0
``box``        ``half_extents`` [m]: 3 numbers > 0
``capsule``    ``radius`` [m] > 0, ``half_length`` [m] > 0 (segment along local z)
``plane``      ``normal`` (default [0, 0, 1]); fixed bodies only
``hull``       ``points`` [m]: N >= 4 points [x, y, z] (body origin at their hull's centre of mass)
``compound``   ``children``: array of ``{ shape = <table or id>, position = [..], orientation = [..] }``
               (position default 0, orientation default identity); children are not planes or
               compounds (no nesting)
=============  =================================================================================

``[[bodies]]``: one per body, in id order (body id = index)::

    shape = "cube"                 # required: a [[shapes]] id or an inline shape table
    name = "brick3"                # default ""
    tag = "stack"                  # default ""
    material = "oak"               # default: tumble.materials.DEFAULT
    position = [0.0, 0.0, 0.5]     # [m] default 0
    orientation = [1.0, 0.0, 0.0, 0.0]   # stored as given (the world normalises)
    linear_velocity = [0.0, 0.0, 0.0]    # [m/s]
    angular_velocity = [0.0, 0.0, 0.0]   # [rad/s]
    mass = 2.0                     # [kg] > 0, wins over density
    density = 700.0                # [kg/m^3] > 0, else the material's
    fixed = false
    spawn_time = 0.0               # [s] >= 0; spawned bodies last, in non-decreasing order
    asleep = false                 # starts asleep (solver "impulse"; a body at rest wakes when touched)

``[[elastic]]``: elastic bodies (``World.add_elastic_body``, elastic-body id = index), added after the bodies
and joints; ``[scene] elastic_options = { tol = 1e-4 }`` are ``World.set_elastic_options`` keywords::

    [[elastic]]
    name = "jelly"
    mesh = { generator = "box", size = [0.2, 0.2, 0.2], divisions = [2, 2, 2] }   # TetMesh.box/beam/cylinder/sphere
    material = { density = 1000.0, bulk_modulus = 2e5, shear_modulus = 6e4, shear_viscosity = 50.0 }  # [SI]
    position = [0.0, 0.0, 0.1]     # also orientation, linear_velocity, angular_velocity
    pin = [0, 1, 2]                # mesh vertices held where they start

``[[joints]]``: added in order after the bodies (joint id = index). ``a`` and ``b`` are body ids or
unique body names; leave ``a`` out (or null in JSON) to join ``b`` to the world. Anchors and axes
are world coordinates at the start pose::

    type = "hinge"                 # ball | hinge | slider | distance | fixed
    a = 0                          # default: the world
    b = "door"                     # required
    anchor = [0.0, 0.0, 1.0]       # ball, hinge, slider (required); fixed (optional)
    axis = [0.0, 0.0, 1.0]         # hinge, slider (required)
    limits = [-1.5, 0.0]           # hinge [rad], slider [m]; optional
    motor = { speed = 1.0, max_force = 50.0 }   # hinge, slider; or target/frequency/damping_ratio
    anchor_a = [..]                # distance (required)
    anchor_b = [..]                # distance (required)
    length = 1.0                   # distance: default the anchors' distance at the start
    frequency = 2.0                # distance: spring [Hz] (default: rigid)
    damping_ratio = 1.0            # distance: default 1
    collide = false                # the joined bodies still collide
    break_force = 1e4              # [N] default inf (unbreakable)
    break_torque = 2e3             # [N m] default inf
    name = "door hinge"

A motor table has ``speed`` and/or ``target`` (one is required), ``max_force`` (default inf),
``frequency`` [Hz] (default 2) and ``damping_ratio`` (default 1), as :class:`tumble.joints.Motor`.

Writing, and what makes the round trip exact
============================================

* Floats are written with ``repr`` (TOML and JSON readers return the same double); vectors are
  written as floats, so ``0`` and ``-0.0`` survive, and defaults are recognised bit for bit
  (``-0.0`` is not the default ``0.0`` and is written). Settings and params keep their int / float /
  bool / str types; numpy scalars and arrays, and tuples, become numbers and lists.
* Shapes equal in value and used by two or more bodies go to ``[[shapes]]`` with an id made from
  the first body's name without its digits ("cube0_3" -> "cube"), else the shape type.
* A plane normal or compound-child quaternion read from a file is kept bit for bit when it is
  already unit to rounding (re-normalising a unit vector may change its last bit); other values are
  normalised by the shape as usual.
* ``orientation`` of a body is stored as given; the world normalises it when the body is added.
* The TOML and JSON layouts are compact (one line per vector or small table, one ``[[bodies]]``
  per body); each text is parsed back before it is written, and should it differ the plain
  ``tomli_w.dumps`` / ``json.dumps(indent=2)`` text is written instead.
* TOML has no null: settings / params holding None can only be written as JSON. In JSON, infinite
  settings / params are written as ``Infinity`` (Python's json extension); elsewhere as strings.
* ``save_scene`` reads its data back (``from_dict``) before writing, so it never writes a file that
  would not load.

Errors
======

Every problem raises :class:`tumble.errors.SceneError` naming the file, the entry, the field and the
value, e.g. ``"wall.toml: bodies[3] (name 'brick'): field shape.half_extents=[0.1, -1, 0.1] must be 3
positive numbers [m]"`` or ``"bodies[2]: unknown field 'postion' (did you mean 'position'?)"``.
Errors from the tumble constructors (ShapeError, MaterialError, JointError, SettingsError) are
re-raised as SceneError with the entry's path in front.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
import math
import numbers
import re
import tomllib
from pathlib import Path

import numpy as np
import tomli_w

from tumble.errors import SceneError, TumbleError
from tumble.joints import Ball, Distance, Fixed, Hinge, Joint, Motor, Slider
from tumble.materials import DEFAULT, PRESETS, Material
from tumble.scenes.spec import BodySpec, SceneSpec
from tumble.shapes import Box, Capsule, Compound, ConvexHull, Plane, Shape, Sphere

__all__ = ["FORMAT", "VERSION", "dumps_json", "dumps_toml", "from_dict", "load_scene", "loads_scene", "save_scene",
           "to_dict"]

#: the value of the top-level ``format`` field
FORMAT = "tumble-scene"
#: the schema version this module writes (and the newest it reads)
VERSION = 1

TOP_KEYS = ("format", "version", "scene", "materials", "shapes", "bodies", "joints", "no_collide", "elastic")
SCENE_KEYS = ("name", "description", "gravity", "dt", "seconds", "solver", "settings", "params",
              "gravity_schedule", "elastic_options")
#: ``[[elastic]]`` entries (tumble.scenes.ElasticSpec): the mesh as a TetMesh generator and its parameters
ELASTIC_KEYS = ("name", "mesh", "material", "position", "orientation", "linear_velocity", "angular_velocity", "pin")
ELASTIC_MATERIAL_KEYS = ("density", "bulk_modulus", "shear_modulus", "bulk_viscosity", "shear_viscosity")
MATERIAL_KEYS = ("name", "id", "density", "friction", "restitution")
BODY_KEYS = ("name", "tag", "shape", "material", "position", "orientation", "linear_velocity",
             "angular_velocity", "mass", "density", "fixed", "spawn_time", "asleep")
SHAPE_KEYS = {"sphere": ("radius",), "box": ("half_extents",), "capsule": ("radius", "half_length"),
              "plane": ("normal",), "hull": ("points",), "compound": ("children",)}
CHILD_KEYS = ("shape", "position", "orientation")
JOINT_COMMON = ("type", "name", "a", "b", "collide", "break_force", "break_torque")
JOINT_KEYS = {"ball": ("anchor",), "hinge": ("anchor", "axis", "limits", "motor"),
              "slider": ("anchor", "axis", "limits", "motor"),
              "distance": ("anchor_a", "anchor_b", "length", "frequency", "damping_ratio"),
              "fixed": ("anchor",)}
MOTOR_KEYS = ("speed", "target", "max_force", "frequency", "damping_ratio")
JOINT_CLASSES = {"ball": Ball, "hinge": Hinge, "slider": Slider, "distance": Distance, "fixed": Fixed}
JOINT_TYPES = {cls: name for name, cls in JOINT_CLASSES.items()}

_ZERO3 = (0.0, 0.0, 0.0)
_IDENTITY = (1.0, 0.0, 0.0, 0.0)
_SPEC_DEFAULTS = {f.name: (f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default)
                  for f in dataclasses.fields(SceneSpec)}
_MATERIAL_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Material)}
_MOTOR_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Motor)}
#: a quaternion / normal read from a file is kept bit for bit when it is unit to within this
_UNIT_TOL = 8.0 * np.finfo(float).eps


# ==============================================================================================
# writing: spec -> plain dict


def _same(value, default) -> bool:
    """Bitwise default test on canonical values (``-0.0`` is not ``0.0``, ``1`` is not ``1.0``)."""
    return type(value) is type(default) and repr(value) == repr(default)


def _num_out(where: str, field: str, v) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.floating, np.integer)):
        raise SceneError(f"{where}: field {field}={v!r} is not a number")
    x = float(v)
    if math.isnan(x):
        raise SceneError(f"{where}: field {field}={v!r} is NaN")
    return x


def _vec_out(where: str, field: str, v, n: int | None = None) -> list:
    try:
        items = list(np.asarray(v, dtype=object).reshape(-1)) if isinstance(v, np.ndarray) else list(v)
    except TypeError:
        raise SceneError(f"{where}: field {field}={v!r} is not a sequence of numbers") from None
    if n is not None and len(items) != n:
        raise SceneError(f"{where}: field {field}={v!r} must have {n} components")
    return [_num_out(where, field, x) for x in items]


def _plain(where: str, field: str, v):
    """Free-form data (settings, params) as plain TOML/JSON values: numpy scalars and arrays become
    Python numbers and lists, tuples become lists."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if math.isnan(x):
            raise SceneError(f"{where}: field {field}={v!r} is NaN")
        return x
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [_plain(where, f"{field}[{i}]", x) for i, x in enumerate(v)]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if not isinstance(k, str):
                raise SceneError(f"{where}: field {field} has a non-string key {k!r}")
            out[k] = _plain(where, f"{field}.{k}", x)
        return out
    raise SceneError(f"{where}: field {field}={v!r} ({type(v).__name__}) cannot be written to a scene file")


def _shape_out(where: str, field: str, shape) -> dict:
    """The table of one shape (without an id)."""
    t = type(shape)
    if t is Sphere:
        return {"type": "sphere", "radius": _num_out(where, f"{field}.radius", shape.radius)}
    if t is Box:
        return {"type": "box", "half_extents": _vec_out(where, f"{field}.half_extents", shape.half_extents, 3)}
    if t is Capsule:
        return {"type": "capsule", "radius": _num_out(where, f"{field}.radius", shape.radius),
                "half_length": _num_out(where, f"{field}.half_length", shape.half_length)}
    if t is Plane:
        d = {"type": "plane"}
        n = _vec_out(where, f"{field}.normal", shape.normal, 3)
        if not _same(n, list(Plane.normal)):
            d["normal"] = n
        return d
    if t is ConvexHull:
        pts = np.asarray(shape.points, dtype=np.float64)
        return {"type": "hull", "points": [[float(x) for x in p] for p in pts]}
    if t is Compound:
        kids = []
        for i, (s, pos, quat) in enumerate(shape.children):
            f = f"{field}.children[{i}]"
            c = {"shape": _shape_out(where, f"{f}.shape", s)}
            p = _vec_out(where, f"{f}.position", pos, 3)
            q = _vec_out(where, f"{f}.orientation", quat, 4)
            if not _same(p, list(_ZERO3)):
                c["position"] = p
            if not _same(q, list(_IDENTITY)):
                c["orientation"] = q
            kids.append(c)
        return {"type": "compound", "children": kids}
    raise SceneError(f"{where}: field {field}={shape!r}: shape type {t.__name__} has no scene-file form")


def _material_out(m: Material) -> dict:
    d = {"name": m.name}
    for k in ("density", "friction", "restitution"):
        v = _num_out(f"material {m.name!r}", k, getattr(m, k))
        if not _same(v, float(_MATERIAL_DEFAULTS[k])):
            d[k] = v
    return d


def _motor_out(where: str, m) -> dict:
    if not isinstance(m, Motor):
        raise SceneError(f"{where}: field motor={m!r} is not a tumble.Motor")
    d = {}
    for k in MOTOR_KEYS:
        v = getattr(m, k)
        if v is None:
            continue
        v = _num_out(where, f"motor.{k}", v)
        default = _MOTOR_DEFAULTS[k]
        if default is None or not _same(v, float(default)):
            d[k] = v
    return d


def _joint_out(k: int, j) -> dict:
    cls = type(j)
    if cls not in JOINT_TYPES:
        raise SceneError(f"joints[{k}]: {j!r} is not a tumble joint (Ball, Hinge, Slider, Distance, Fixed)")
    kind = JOINT_TYPES[cls]
    where = f"joints[{k}]" + (f" (name {j.name!r})" if isinstance(getattr(j, "name", None), str) and j.name else "")
    known = set(JOINT_COMMON) | set(JOINT_KEYS[kind])
    extra = sorted(set(vars(j)) - known)
    if extra:
        raise SceneError(f"{where}: field(s) {extra} of {cls.__name__} have no scene-file form "
                         f"(scene file version {VERSION})")
    d: dict = {"type": kind}
    if j.name != "":
        d["name"] = str(j.name)
    for side in ("a", "b"):
        v = getattr(j, side)
        if v is None:
            if side == "b":
                raise SceneError(f"{where}: field b=None; only a may be the world")
            continue
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise SceneError(f"{where}: field {side}={v!r} is not a body id")
        d[side] = int(v)
    for f in JOINT_KEYS[kind]:
        v = getattr(j, f)
        if f == "motor":
            if v is not None:
                d["motor"] = _motor_out(where, v)
        elif f == "limits":
            if v is not None:
                d["limits"] = _vec_out(where, "limits", v, 2)
        elif f in ("anchor", "axis", "anchor_a", "anchor_b"):
            if v is not None:
                d[f] = _vec_out(where, f, v, 3)
        elif v is not None:       # length, frequency, damping_ratio
            x = _num_out(where, f, v)
            if not (f == "damping_ratio" and _same(x, 1.0)):
                d[f] = x
    if not isinstance(j.collide, (bool, np.bool_)):
        raise SceneError(f"{where}: field collide={j.collide!r} must be True or False")
    if bool(j.collide):
        d["collide"] = True
    for f in ("break_force", "break_torque"):
        x = _num_out(where, f, getattr(j, f))
        if not _same(x, math.inf):
            d[f] = x
    return d


def _body_ref_out(where: str, field: str, v, n: int) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) < n:
        raise SceneError(f"{where}: field {field}={v!r} is not a body id of the scene ({n} bodies)")
    return int(v)


def _shape_id(body_name: str) -> str:
    """A shared shape's id from the name of its first body without the numbers: "cube0_3" -> "cube",
    "brick1_left" -> "brick_left", "ragdoll0.pelvis" -> "ragdoll.pelvis"."""
    s = re.sub(r"\d+", "", body_name)
    s = re.sub(r"([._\- ])[._\- ]+", r"\1", s)
    return s.strip("._- ")


def to_dict(spec: SceneSpec) -> dict:
    """The scene-file data of ``spec`` (plain dicts, lists, str, int, float, bool; see the module
    docstring): ``format``, ``version``, ``scene``, and, when not empty, ``materials``, ``shapes``,
    ``bodies``, ``joints`` and ``no_collide``. Fields at their defaults are left out.

    Shapes equal in value and used by two or more bodies go to ``shapes`` (referenced by id);
    materials other than ``DEFAULT`` go to ``materials`` (referenced by id, which is the material's
    name unless two different materials share it). Raises :class:`SceneError` for what a file cannot
    hold (NaN, unknown shape or joint types, non-serialisable settings)."""
    if not isinstance(spec, SceneSpec):
        raise SceneError(f"to_dict: {spec!r} is not a SceneSpec")
    known = {f.name for f in dataclasses.fields(SceneSpec)}
    extra = sorted(set(vars(spec)) - known - {"solver"})
    if extra:
        raise SceneError(f"scene {spec.name!r}: attribute(s) {extra} have no scene-file form")
    for f in dataclasses.fields(BodySpec):
        if f.name not in BODY_KEYS:  # a field added to BodySpec must be added to the schema too
            raise SceneError(f"BodySpec field {f.name!r} has no scene-file form (scene file version {VERSION})")

    scene: dict = {"name": str(spec.name)}
    if spec.description != "":
        scene["description"] = str(spec.description)
    g = _vec_out("scene", "gravity", spec.gravity, 3)
    if not _same(g, list(_SPEC_DEFAULTS["gravity"])):
        scene["gravity"] = g
    for f in ("dt", "seconds"):
        x = _num_out("scene", f, getattr(spec, f))
        if not _same(x, float(_SPEC_DEFAULTS[f])):
            scene[f] = x
    solver = getattr(spec, "solver", None)
    if solver is not None:
        scene["solver"] = str(solver)
    if spec.settings:
        scene["settings"] = _plain("scene", "settings", dict(spec.settings))
    if spec.params:
        scene["params"] = _plain("scene", "params", dict(spec.params))
    if spec.gravity_schedule:
        scene["gravity_schedule"] = [[_num_out("scene", f"gravity_schedule[{k}].time", t),
                                      _vec_out("scene", f"gravity_schedule[{k}].gravity", g, 3)]
                                     for k, (t, g) in enumerate(spec.gravity_schedule)]

    # materials: one entry per distinct material (DEFAULT stays implicit)
    materials: list[dict] = []
    mat_ids: dict[Material, str] = {}
    used_ids: set[str] = set()
    # shapes: count value-equal shapes; those used twice or more become [[shapes]] entries
    bodies = []
    shape_tables = []
    counts: dict[str, int] = {}
    for i, b in enumerate(spec.bodies):
        where = f"bodies[{i}]" + (f" (name {b.name!r})" if isinstance(b.name, str) and b.name else "")
        if not isinstance(b, BodySpec):
            raise SceneError(f"{where}: {b!r} is not a BodySpec")
        if not isinstance(b.shape, Shape):
            raise SceneError(f"{where}: field shape={b.shape!r} is not a tumble shape")
        st = _shape_out(where, "shape", b.shape)
        key = repr(st)
        counts[key] = counts.get(key, 0) + 1
        shape_tables.append((st, key))
        d: dict = {}
        for f in ("name", "tag"):
            v = getattr(b, f)
            if not isinstance(v, str):
                raise SceneError(f"{where}: field {f}={v!r} is not a string")
            if v != "":
                d[f] = v
        d["shape"] = None                   # placeholder keeps the key order readable
        m = b.material
        if not isinstance(m, Material):
            raise SceneError(f"{where}: field material={m!r} is not a tumble.Material")
        if m != DEFAULT:
            if m not in mat_ids:
                mid = m.name
                k = 2
                while mid in used_ids:
                    mid = f"{m.name}-{k}"
                    k += 1
                used_ids.add(mid)
                mat_ids[m] = mid
                entry = _material_out(m)
                if mid != m.name:
                    entry = {"name": m.name, "id": mid, **{k: v for k, v in entry.items() if k != "name"}}
                materials.append(entry)
            d["material"] = mat_ids[m]
        for f, n, default in (("position", 3, _ZERO3), ("orientation", 4, _IDENTITY),
                              ("linear_velocity", 3, _ZERO3), ("angular_velocity", 3, _ZERO3)):
            v = _vec_out(where, f, getattr(b, f), n)
            if not _same(v, list(default)):
                d[f] = v
        for f in ("mass", "density"):
            v = getattr(b, f)
            if v is not None:
                d[f] = _num_out(where, f, v)
        if not isinstance(b.fixed, (bool, np.bool_)):
            raise SceneError(f"{where}: field fixed={b.fixed!r} must be True or False")
        if bool(b.fixed):
            d["fixed"] = True
        t = _num_out(where, "spawn_time", b.spawn_time)
        if not _same(t, 0.0):
            d["spawn_time"] = t
        if not isinstance(b.asleep, (bool, np.bool_)):
            raise SceneError(f"{where}: field asleep={b.asleep!r} must be True or False")
        if bool(b.asleep):
            d["asleep"] = True
        bodies.append(d)

    shapes: list[dict] = []
    shape_ids: dict[str, str] = {}
    for (st, key), d, b in zip(shape_tables, bodies, spec.bodies):
        if counts[key] < 2:
            d["shape"] = st
            continue
        if key not in shape_ids:
            base = _shape_id(b.name) or st["type"]
            sid, n = base, 2
            while sid in shape_ids.values():
                sid = f"{base}-{n}"
                n += 1
            shape_ids[key] = sid
            shapes.append({"id": sid, **st})
        d["shape"] = shape_ids[key]

    out: dict = {"format": FORMAT, "version": VERSION, "scene": scene}
    if materials:
        out["materials"] = materials
    if shapes:
        out["shapes"] = shapes
    if bodies:
        out["bodies"] = bodies
    if spec.joints:
        out["joints"] = [_joint_out(k, j) for k, j in enumerate(spec.joints)]
    if spec.elastic:
        out["elastic"] = [_elastic_out(k, e) for k, e in enumerate(spec.elastic)]
    if spec.elastic_options:
        scene["elastic_options"] = _plain("scene", "elastic_options", dict(spec.elastic_options))
    if spec.no_collide:
        n = len(spec.bodies)
        pairs = []
        for k, pair in enumerate(spec.no_collide):
            try:
                a, b = pair
            except (TypeError, ValueError):
                raise SceneError(f"no_collide[{k}]: {pair!r} is not a pair of body ids") from None
            pairs.append([_body_ref_out(f"no_collide[{k}]", "a", a, n), _body_ref_out(f"no_collide[{k}]", "b", b, n)])
        out["no_collide"] = pairs
    return out


def _elastic_out(k: int, e) -> dict:
    """An ``[[elastic]]`` entry: fields at their defaults left out."""
    from tumble.elastic.material import ElasticMaterial

    where = f"elastic[{k}]" + (f" (name {e.name!r})" if e.name else "")
    d: dict = {}
    if e.name:
        d["name"] = str(e.name)
    d["mesh"] = {"generator": str(e.mesh_generator), **_plain(where, "mesh", dict(e.mesh_params))}
    if e.material is not None:
        if not isinstance(e.material, ElasticMaterial):
            raise SceneError(f"{where}: field material={e.material!r} is not a tumble.ElasticMaterial")
        d["material"] = {f: _num_out(where, f"material.{f}", getattr(e.material, f)) for f in ELASTIC_MATERIAL_KEYS}
    for f, default in (("position", (0.0, 0.0, 0.0)), ("orientation", (1.0, 0.0, 0.0, 0.0)),
                       ("linear_velocity", (0.0, 0.0, 0.0)), ("angular_velocity", (0.0, 0.0, 0.0))):
        v = getattr(e, f)
        if not _same(v, default):
            d[f] = _vec_out(where, f, v, len(default))
    if len(e.pin):
        d["pin"] = [int(i) for i in e.pin]
    return d


def _elastic_in(loc: _Loc, v):
    """An ElasticSpec from an ``[[elastic]]`` entry (the mesh is made by ``spec.build``; bad parameters then
    raise there, naming the entry)."""
    from tumble.elastic.material import ElasticMaterial
    from tumble.scenes.spec import MESH_GENERATORS, ElasticSpec

    _table(loc, "", v, ELASTIC_KEYS, required=("mesh",))
    mesh = _table(loc, "mesh", v["mesh"], _MeshKeys(), required=("generator",))
    generator = _string(loc, "mesh.generator", mesh["generator"])
    if generator not in MESH_GENERATORS:
        raise loc.error("mesh.generator", generator, f"must be one of {list(MESH_GENERATORS)}")
    params = {}
    for key, x in mesh.items():
        if key == "generator":
            continue
        if isinstance(x, list):
            params[key] = tuple(_scalar(loc, f"mesh.{key}", y) if not isinstance(y, int) else y for y in x)
        elif isinstance(x, (bool, str)) or not isinstance(x, (int, float)):
            raise loc.error(f"mesh.{key}", x, "must be a number or an array of numbers")
        else:
            params[key] = x
    kw: dict = {"mesh_generator": generator, "mesh_params": params}
    if "name" in v:
        kw["name"] = _string(loc, "name", v["name"])
    if "material" in v:
        m = _table(loc, "material", v["material"], ELASTIC_MATERIAL_KEYS)
        try:
            kw["material"] = ElasticMaterial(**{f: _scalar(loc, f"material.{f}", x) for f, x in m.items()})
        except TumbleError as e:
            raise loc.wrap(e, "material") from None
    for f, n in (("position", 3), ("orientation", 4), ("linear_velocity", 3), ("angular_velocity", 3)):
        if f in v:
            kw[f] = _vector(loc, f, v[f], n, nonzero=f == "orientation")
    if "pin" in v:
        pins = _list(loc, "pin", v["pin"])
        if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in pins):
            raise loc.error("pin", v["pin"], "must be an array of vertex indices >= 0")
        kw["pin"] = tuple(pins)
    return ElasticSpec(**kw)


class _MeshKeys:
    """Any key is allowed in a mesh table (the generator's parameters are checked by the generator)."""

    def __contains__(self, key) -> bool:
        return isinstance(key, str)

    def __iter__(self):
        return iter(("generator", "<the generator's parameters>"))


# ==============================================================================================
# reading: plain dict -> spec


class _Loc:
    """Where a value is: the source, the entry (``bodies[3] (name 'brick')``) and a field prefix."""

    def __init__(self, source: str, entry: str, prefix: str = ""):
        self.source, self.entry, self.prefix = source, entry, prefix

    def sub(self, prefix: str) -> _Loc:
        return _Loc(self.source, self.entry, self.prefix + prefix)

    def head(self) -> str:
        return f"{self.source}: {self.entry}" if self.entry else self.source

    def error(self, field: str, value, msg: str) -> SceneError:
        return SceneError(f"{self.head()}: field {self.prefix}{field}={value!r} {msg}")

    def say(self, msg: str) -> SceneError:
        return SceneError(f"{self.head()}: {msg}")

    def wrap(self, e: Exception, field: str = "") -> SceneError:
        at = f"field {self.prefix}{field}: " if (self.prefix or field) else ""
        return SceneError(f"{self.head()}: {at}{e}")


def _suggest(key: str, allowed) -> str:
    close = difflib.get_close_matches(str(key), list(allowed), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _table(loc: _Loc, field: str, v, allowed, required=()) -> dict:
    """``v`` must be a table with keys among ``allowed`` and the ``required`` ones present."""
    if not isinstance(v, dict):
        if field:
            raise loc.error(field, v, "must be a table")
        raise loc.say(f"{v!r} must be a table")
    pre = loc.prefix + (field + "." if field else "")
    for k in v:
        if k not in allowed:
            raise loc.say(f"unknown field {pre + str(k)!r}{_suggest(k, allowed)}; known fields: {', '.join(allowed)}")
    for k in required:
        if k not in v:
            raise loc.say(f"missing field {pre + k!r}")
    return v


_INF_STRINGS = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf, "infinity": math.inf,
                "+infinity": math.inf, "-infinity": -math.inf}


def _number(loc: _Loc, field: str, v, *, what: str = "a number") -> float:
    if isinstance(v, str) and v.strip().lower() in _INF_STRINGS:
        return _INF_STRINGS[v.strip().lower()]
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.floating, np.integer)):
        raise loc.error(field, v, f"must be {what}")
    x = float(v)
    if math.isnan(x):
        raise loc.error(field, v, f"must be {what}, not NaN")
    return x


def _scalar(loc: _Loc, field: str, v, *, lo=None, lo_open=False, hi=None, finite=True, what="") -> float:
    """A number in [lo, hi] (``lo_open``: > lo), finite unless ``finite=False``."""
    desc = what or _range_text(lo, lo_open, hi, finite)
    x = _number(loc, field, v, what=desc)
    if (finite and not math.isfinite(x)) or (lo is not None and (x <= lo if lo_open else x < lo)) or \
            (hi is not None and x > hi):
        raise loc.error(field, v, f"must be {desc}")
    return x


def _range_text(lo, lo_open, hi, finite) -> str:
    base = "a finite number" if finite else "a number"
    if lo == 0.0 and lo_open and hi is None:
        return "a finite positive number" if finite else "a positive number (inf allowed)"
    if lo is not None and hi is not None:
        return f"{base} in [{lo}, {hi}]"
    if lo is not None:
        return f"{base} {'>' if lo_open else '>='} {lo}" + ("" if finite else " (inf allowed)")
    return base


def _vector(loc: _Loc, field: str, v, n: int, *, positive=False, nonzero=False, unit="") -> tuple:
    what = f"{n} {'positive' if positive else 'finite'} numbers" + (f" [{unit}]" if unit else "")
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if not isinstance(v, (list, tuple)) or len(v) != n:
        raise loc.error(field, v, f"must be {what}")
    out = []
    for x in v:
        if isinstance(x, str) or isinstance(x, (bool, np.bool_)) or \
                not isinstance(x, (numbers.Real, np.floating, np.integer)):
            raise loc.error(field, v, f"must be {what}")
        x = float(x)
        if not math.isfinite(x) or (positive and x <= 0.0):
            raise loc.error(field, v, f"must be {what}")
        out.append(x)
    if nonzero and math.sqrt(sum(x * x for x in out)) < 1e-12:
        raise loc.error(field, v, f"must be {n} finite numbers, not all zero")
    return tuple(out)


def _string(loc: _Loc, field: str, v) -> str:
    if not isinstance(v, str):
        raise loc.error(field, v, "must be a string")
    return v


def _boolean(loc: _Loc, field: str, v) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise loc.error(field, v, "must be true or false")
    return bool(v)


def _list(loc: _Loc, field: str, v) -> list:
    if isinstance(v, tuple):
        v = list(v)
    if not isinstance(v, list):
        raise loc.error(field, v, "must be an array")
    return v


def _keep_unit(original: np.ndarray | tuple, given: tuple) -> tuple | None:
    """``given`` when it is a unit vector to within rounding (so a normal or quaternion written from a
    normalised one is kept bit for bit instead of being normalised a second time), else None."""
    n = math.sqrt(math.fsum(x * x for x in given))
    if abs(n - 1.0) <= _UNIT_TOL and all(abs(float(a) - b) <= _UNIT_TOL for a, b in zip(original, given)):
        return given
    return None


def _shape_in(loc: _Loc, field: str, v, shapes: dict | None, *, child: bool = False) -> Shape:
    """A shape from an inline table or (when ``shapes`` is given) a [[shapes]] id."""
    if isinstance(v, str) and shapes is not None:
        if v not in shapes:
            known = ", ".join(map(repr, shapes)) or "none"
            raise loc.error(field, v, f"names no [[shapes]] entry{_suggest(v, shapes)}; known shapes: {known}")
        return shapes[v]
    if not isinstance(v, dict):
        raise loc.error(field, v, "must be a shape table { type = ..., ... }" +
                        (" or a [[shapes]] id" if shapes is not None else ""))
    f = f"{field}." if field else ""
    t = v.get("type")
    if "type" not in v:
        raise loc.say(f"missing field {loc.prefix + f + 'type'!r} (one of {', '.join(SHAPE_KEYS)})")
    if not isinstance(t, str) or t not in SHAPE_KEYS:
        raise loc.error(f + "type", t, f"is not a shape type{_suggest(t, SHAPE_KEYS)}; known: "
                        f"{', '.join(SHAPE_KEYS)}")
    if child and t in ("plane", "compound"):
        raise loc.error(f + "type", t, "cannot be a compound child (sphere, box, capsule or hull only)")
    allowed = ("type", *SHAPE_KEYS[t]) + (("id",) if field == "" else ())
    required = () if t == "plane" else SHAPE_KEYS[t]
    _table(loc, field, v, allowed, required)
    try:
        if t == "sphere":
            return Sphere(_scalar(loc, f + "radius", v["radius"], lo=0.0, lo_open=True, what="a positive number [m]"))
        if t == "box":
            return Box(_vector(loc, f + "half_extents", v["half_extents"], 3, positive=True, unit="m"))
        if t == "capsule":
            return Capsule(_scalar(loc, f + "radius", v["radius"], lo=0.0, lo_open=True, what="a positive number [m]"),
                           _scalar(loc, f + "half_length", v["half_length"], lo=0.0, lo_open=True,
                                   what="a positive number [m]"))
        if t == "plane":
            if "normal" not in v:
                return Plane()
            n = _vector(loc, f + "normal", v["normal"], 3, nonzero=True)
            p = Plane(n)
            keep = _keep_unit(p.normal, n)
            if keep is not None:
                object.__setattr__(p, "normal", keep)
            return p
        if t == "hull":
            pts = _list(loc, f + "points", v["points"])
            rows = [_vector(loc, f"{f}points[{i}]", p, 3, unit="m") for i, p in enumerate(pts)]
            if len(rows) < 4:
                raise loc.error(f + "points", v["points"], "must hold at least 4 points [x, y, z]")
            return ConvexHull(np.array(rows, dtype=np.float64))
        # compound
        kids_in = _list(loc, f + "children", v["children"])
        if not kids_in:
            raise loc.error(f + "children", kids_in, "must hold at least one child")
        kids = []
        for i, c in enumerate(kids_in):
            cf = f"{f}children[{i}]"
            _table(loc, cf, c, CHILD_KEYS, ("shape",))
            s = _shape_in(loc, cf + ".shape", c["shape"], shapes, child=True)
            if isinstance(s, (Plane, Compound)):
                raise loc.error(cf + ".shape", c["shape"], "cannot be a compound child (sphere, box, capsule or hull)")
            pos = _vector(loc, cf + ".position", c.get("position", _ZERO3), 3, unit="m")
            quat = _vector(loc, cf + ".orientation", c.get("orientation", _IDENTITY), 4, nonzero=True)
            kids.append((s, pos, quat))
        comp = Compound(kids)
        exact = []
        for (s, pos, q_norm), (_, _, q_file) in zip(comp.children, kids):
            keep = _keep_unit(q_norm, q_file)
            exact.append((s, pos, np.array(keep) if keep is not None else q_norm))
        object.__setattr__(comp, "children", tuple(exact))
        return comp
    except SceneError:
        raise
    except (TumbleError, ValueError) as e:
        raise loc.wrap(e, field) from e


def _material_in(loc: _Loc, v: dict) -> Material:
    _table(loc, "", v, MATERIAL_KEYS, ("name",))
    name = _string(loc, "name", v["name"])
    kw = {"name": name}
    for k, lo, lo_open, hi in (("density", 0.0, True, None), ("friction", 0.0, False, None),
                               ("restitution", 0.0, False, 1.0)):
        if k in v:
            kw[k] = _scalar(loc, k, v[k], lo=lo, lo_open=lo_open, hi=hi)
    try:
        return Material(**kw)
    except TumbleError as e:
        raise loc.wrap(e) from e


def _motor_in(loc: _Loc, v) -> Motor:
    _table(loc, "motor", v, MOTOR_KEYS)
    if "speed" not in v and "target" not in v:
        raise loc.error("motor", v, "needs speed (velocity motor) or target (position servo)")
    m = loc.sub("motor.")
    kw = {}
    for k in ("speed", "target"):
        if k in v:
            kw[k] = _scalar(m, k, v[k])
    if "max_force" in v:
        kw["max_force"] = _scalar(m, "max_force", v["max_force"], lo=0.0, finite=False)
    if "frequency" in v:
        kw["frequency"] = _scalar(m, "frequency", v["frequency"], lo=0.0, lo_open=True, what="a finite number > 0 [Hz]")
    if "damping_ratio" in v:
        kw["damping_ratio"] = _scalar(m, "damping_ratio", v["damping_ratio"], lo=0.0)
    return Motor(**kw)


class _Bodies:
    """Resolves body references (ids or unique names) of joints and no_collide pairs."""

    def __init__(self, bodies: list[BodySpec]):
        self.n = len(bodies)
        self.by_name: dict[str, list[int]] = {}
        for i, b in enumerate(bodies):
            if b.name:
                self.by_name.setdefault(b.name, []).append(i)

    def ref(self, loc: _Loc, field: str, v) -> int:
        if isinstance(v, str):
            ids = self.by_name.get(v)
            if not ids:
                raise loc.error(field, v, f"names no body{_suggest(v, self.by_name)}")
            if len(ids) > 1:
                raise loc.error(field, v, f"names {len(ids)} bodies (ids {ids[:5]}); use the body id")
            return ids[0]
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise loc.error(field, v, "must be a body id (integer) or a body name")
        if not 0 <= int(v) < self.n:
            raise loc.error(field, v, f"is not a body of the scene ({self.n} bodies, ids 0..{self.n - 1})")
        return int(v)


def _joint_in(loc: _Loc, v, bodies: list[BodySpec], refs: _Bodies) -> Joint:
    if not isinstance(v, dict):
        raise loc.say(f"{v!r} must be a table")
    if "type" not in v:
        raise loc.say(f"missing field 'type' (one of {', '.join(JOINT_CLASSES)})")
    t = v["type"]
    if not isinstance(t, str) or t not in JOINT_CLASSES:
        raise loc.error("type", t, f"is not a joint type{_suggest(t, JOINT_CLASSES)}; known: "
                        f"{', '.join(JOINT_CLASSES)}")
    required = {"ball": ("anchor",), "hinge": ("anchor", "axis"), "slider": ("anchor", "axis"),
                "distance": ("anchor_a", "anchor_b"), "fixed": ()}[t]
    _table(loc, "", v, JOINT_COMMON + JOINT_KEYS[t], ("b", *required))
    kw: dict = {}
    if "name" in v:
        kw["name"] = _string(loc, "name", v["name"])
    a = refs.ref(loc, "a", v["a"]) if v.get("a") is not None else None      # JSON may say null
    b = refs.ref(loc, "b", v["b"])
    if a == b:
        raise loc.say(f"fields a={v['a']!r} and b={v['b']!r} name the same body; a joint needs two bodies")
    if (a is None or bodies[a].fixed) and bodies[b].fixed:
        raise loc.say(f"fields a={v.get('a')!r} and b={v['b']!r}: both are fixed (or the world); the joint would "
                      "do nothing")
    if "collide" in v:
        kw["collide"] = _boolean(loc, "collide", v["collide"])
    for f in ("break_force", "break_torque"):
        if f in v:
            kw[f] = _scalar(loc, f, v[f], lo=0.0, lo_open=True, finite=False)
    for f in ("anchor", "axis", "anchor_a", "anchor_b"):
        if f in v:
            kw[f] = _vector(loc, f, v[f], 3, nonzero=(f == "axis"), unit="" if f == "axis" else "m")
    if "limits" in v:
        lim = v["limits"]
        if not isinstance(lim, (list, tuple)) or len(lim) != 2:
            raise loc.error("limits", lim, "must be [lower, upper]")
        lo = _scalar(loc, "limits", lim[0], finite=False, what="[lower, upper] (numbers, inf allowed)")
        hi = _scalar(loc, "limits", lim[1], finite=False, what="[lower, upper] (numbers, inf allowed)")
        if lo > hi:
            raise loc.error("limits", lim, f"is reversed: lower {lo} > upper {hi}")
        kw["limits"] = (lo, hi)
    if "motor" in v:
        kw["motor"] = _motor_in(loc, v["motor"])
    if "length" in v:
        kw["length"] = _scalar(loc, "length", v["length"], lo=0.0, lo_open=True, what="a finite number > 0 [m]")
    if "frequency" in v:
        kw["frequency"] = _scalar(loc, "frequency", v["frequency"], lo=0.0, lo_open=True,
                                  what="a finite number > 0 [Hz]")
    if "damping_ratio" in v:
        kw["damping_ratio"] = _scalar(loc, "damping_ratio", v["damping_ratio"], lo=0.0)
    cls = JOINT_CLASSES[t]
    try:
        j = cls(a, b, **kw)
        copy.deepcopy(j).validate(j.owner())      # validate mutates (normalises): check a copy
    except SceneError:
        raise
    except (TumbleError, ValueError, TypeError) as e:
        raise loc.wrap(e) from e
    return j


def _settings_in(loc: _Loc, settings, solver: str | None) -> dict:
    """A scene's settings serve every solver (``SceneSpec.build`` gives each solver those that are
    fields of its settings class): every key must be a setting of some registered solver, and each
    value must pass the validation of a solver that has it (the named ``solver``'s first)."""
    from tumble._core.solvers import registry

    classes = [registry.settings_class(n) for n in registry.names()]
    if solver is not None:
        own = registry.settings_class(solver)
        classes = [own] + [c for c in classes if c is not own]

    def names_of(c) -> set:   # a class's fields and the deprecated names it still accepts (IGNORED)
        return {f.name for f in dataclasses.fields(c)} | set(getattr(c, "IGNORED", ()))

    if not isinstance(settings, dict):
        raise loc.error("settings", settings, "must be a table of solver settings")
    for k, x in settings.items():
        if isinstance(x, float) and math.isnan(x):
            raise loc.error(f"settings.{k}", x, "must be a number, not NaN")
    known = sorted({n for c in classes for n in names_of(c)})
    for k in settings:
        if k not in known:
            where = f"solver {solver!r} or any other solver" if solver else "any solver"
            raise loc.say(f"unknown field 'settings.{k}'{_suggest(k, known)}: not a setting of {where}")
    left = dict(settings)
    for cls in classes:      # each key validated by the first class that has it as a real field
        mine = {k: v for k, v in left.items() if k in cls.field_names()}
        if not mine:
            continue
        try:
            cls().update(**copy.deepcopy(mine))
        except (TumbleError, ValueError, TypeError) as e:
            raise loc.wrap(e, "settings") from e
        left = {k: v for k, v in left.items() if k not in mine}
    return dict(settings)


def from_dict(d: dict, source: str = "<dict>") -> SceneSpec:
    """The :class:`SceneSpec` described by scene-file data ``d`` (see the module docstring).

    ``source`` (a file name) starts every error message. Missing fields get their defaults. The data
    is checked completely: the result builds unless the world itself refuses it. Raises
    :class:`SceneError` naming the entry, field and value of the first problem."""
    top = _Loc(str(source), "")
    if not isinstance(d, dict):
        raise top.say(f"the scene file must hold a table at the top level, not {type(d).__name__}")
    for k in d:
        if k not in TOP_KEYS:
            raise top.say(f"unknown top-level field {k!r}{_suggest(k, TOP_KEYS)}; known fields: {', '.join(TOP_KEYS)}")
    if "format" not in d:
        raise top.say(f"missing field 'format' (= {FORMAT!r}); is this a tumble scene file?")
    if d["format"] != FORMAT:
        raise top.error("format", d["format"], f"is not {FORMAT!r}; is this a tumble scene file?")
    if "version" not in d:
        raise top.say(f"missing field 'version' (= {VERSION})")
    ver = d["version"]
    if isinstance(ver, bool) or not isinstance(ver, int) or ver < 1:
        raise top.error("version", ver, f"must be an integer >= 1 (this tumble reads version {VERSION})")
    if ver > VERSION:
        raise top.error("version", ver, f"is newer than this tumble reads (version {VERSION}); update tumble")

    # [scene]
    sc = d.get("scene", {})
    sloc = _Loc(str(source), "scene")
    _table(_Loc(str(source), ""), "scene", sc, SCENE_KEYS)
    default_name = "scene" if str(source).startswith("<") else Path(str(source)).stem
    name = _string(sloc, "name", sc["name"]) if "name" in sc else default_name
    kw: dict = {"name": name}
    if "description" in sc:
        kw["description"] = _string(sloc, "description", sc["description"])
    if "gravity" in sc:
        kw["gravity"] = _vector(sloc, "gravity", sc["gravity"], 3, unit="m/s^2")
    for f in ("dt", "seconds"):
        if f in sc:
            kw[f] = _scalar(sloc, f, sc[f], lo=0.0, lo_open=True, what="a finite number > 0 [s]")
    solver = None
    if "solver" in sc:
        from tumble._core.solvers import registry

        solver = _string(sloc, "solver", sc["solver"])
        if solver not in registry.names():
            raise sloc.error("solver", solver, f"is not a solver{_suggest(solver, registry.names())}; known: "
                             f"{', '.join(registry.names())}")
    if "settings" in sc:
        kw["settings"] = _settings_in(sloc, sc["settings"], solver)
    if "params" in sc:
        if not isinstance(sc["params"], dict):
            raise sloc.error("params", sc["params"], "must be a table")
        kw["params"] = copy.deepcopy(sc["params"])
    if "gravity_schedule" in sc:
        sched = []
        for k, e in enumerate(_list(sloc, "gravity_schedule", sc["gravity_schedule"])):
            if not isinstance(e, (list, tuple)) or len(e) != 2:
                raise sloc.error(f"gravity_schedule[{k}]", e, "must be [time [s], [gx, gy, gz] [m/s^2]]")
            t = _scalar(sloc, f"gravity_schedule[{k}].time", e[0], lo=0.0, what="a finite number >= 0 [s]")
            sched.append((t, _vector(sloc, f"gravity_schedule[{k}].gravity", e[1], 3, unit="m/s^2")))
        kw["gravity_schedule"] = sched

    # [[materials]]
    materials: dict[str, Material] = {}
    for i, m in enumerate(_list(top, "materials", d.get("materials", []))):
        label = f"materials[{i}]" + (f" (name {m['name']!r})" if isinstance(m, dict) and isinstance(
            m.get("name"), str) else "")
        loc = _Loc(str(source), label)
        mat = _material_in(loc, m)
        mid = _string(loc, "id", m["id"]) if "id" in m else mat.name
        if mid in materials:
            raise loc.error("id" if "id" in m else "name", mid, "is defined twice; give one of them another id = ...")
        materials[mid] = mat

    # [[shapes]]
    shapes: dict[str, Shape] = {}
    for i, s in enumerate(_list(top, "shapes", d.get("shapes", []))):
        label = f"shapes[{i}]" + (f" (id {s['id']!r})" if isinstance(s, dict) and isinstance(s.get("id"), str) else "")
        loc = _Loc(str(source), label)
        if not isinstance(s, dict):
            raise loc.say(f"{s!r} must be a table")
        if "id" not in s:
            raise loc.say("missing field 'id' (the name bodies use to refer to this shape)")
        sid = _string(loc, "id", s["id"])
        if sid in shapes:
            raise loc.error("id", sid, "is defined twice")
        shapes[sid] = _shape_in(loc, "", s, None)

    # [[bodies]]
    bodies: list[BodySpec] = []
    last_spawn = 0.0
    for i, b in enumerate(_list(top, "bodies", d.get("bodies", []))):
        label = f"bodies[{i}]" + (f" (name {b['name']!r})" if isinstance(b, dict) and isinstance(
            b.get("name"), str) and b["name"] else "")
        loc = _Loc(str(source), label)
        _table(loc, "", b, BODY_KEYS, ("shape",))
        bkw: dict = {}
        for f in ("name", "tag"):
            if f in b:
                bkw[f] = _string(loc, f, b[f])
        shape = _shape_in(loc, "shape", b["shape"], shapes)
        bkw["shape"] = shape
        if "material" in b:
            m = b["material"]
            if isinstance(m, str):
                if m in materials:
                    bkw["material"] = materials[m]
                elif m in PRESETS:
                    bkw["material"] = PRESETS[m]
                else:
                    known = [*materials, *(p for p in PRESETS if p not in materials)]
                    raise loc.error("material", m, f"names no [[materials]] entry or preset{_suggest(m, known)}; "
                                    f"known: {', '.join(known)}")
            elif isinstance(m, dict):
                bkw["material"] = _material_in(loc.sub("material."), {"name": "default", **m})
            else:
                raise loc.error("material", m, "must be a material name or a material table")
        for f, n, unit, nz in (("position", 3, "m", False), ("orientation", 4, "", True),
                               ("linear_velocity", 3, "m/s", False), ("angular_velocity", 3, "rad/s", False)):
            if f in b:
                bkw[f] = _vector(loc, f, b[f], n, unit=unit, nonzero=nz)
        for f, unit in (("mass", "kg"), ("density", "kg/m^3")):
            if f in b:
                bkw[f] = _scalar(loc, f, b[f], lo=0.0, lo_open=True, what=f"a finite number > 0 [{unit}]")
        if "fixed" in b:
            bkw["fixed"] = _boolean(loc, "fixed", b["fixed"])
        if "asleep" in b:
            bkw["asleep"] = _boolean(loc, "asleep", b["asleep"])
        if isinstance(shape, Plane) and not bkw.get("fixed", False):
            raise loc.error("fixed", bkw.get("fixed", False), "but a plane can only belong to a fixed body "
                            "(add fixed = true)")
        if "spawn_time" in b:
            t = bkw["spawn_time"] = _scalar(loc, "spawn_time", b["spawn_time"], lo=0.0, what="a finite number >= 0 [s]")
            if t < last_spawn:
                raise loc.error("spawn_time", b["spawn_time"], f"comes after a body spawned at t={last_spawn!r}; "
                                "bodies must be in non-decreasing spawn-time order (spawned bodies last)")
            last_spawn = t
        elif last_spawn > 0.0:
            raise loc.say(f"field spawn_time=0 (the default) comes after a body spawned at t={last_spawn!r}; "
                          "bodies present from the start must come first")
        bodies.append(BodySpec(**bkw))
    kw["bodies"] = bodies

    # [[joints]]
    refs = _Bodies(bodies)
    joints = []
    for k, j in enumerate(_list(top, "joints", d.get("joints", []))):
        label = f"joints[{k}]" + (f" (name {j['name']!r})" if isinstance(j, dict) and isinstance(
            j.get("name"), str) and j["name"] else "")
        loc = _Loc(str(source), label)
        jo = _joint_in(loc, j, bodies, refs)
        for side in ("a", "b"):
            i = getattr(jo, side)
            if i is not None and bodies[i].spawn_time > 0.0:
                raise loc.error(side, j[side], f"is spawned at t={bodies[i].spawn_time!r}; joints must join bodies "
                                "present from the start")
        joints.append(jo)
    kw["joints"] = joints

    # no_collide
    pairs = []
    for k, p in enumerate(_list(top, "no_collide", d.get("no_collide", []))):
        loc = _Loc(str(source), f"no_collide[{k}]")
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            raise loc.say(f"{p!r} must be a pair [a, b] of body ids or names")
        a, b = refs.ref(loc, "a", p[0]), refs.ref(loc, "b", p[1])
        if a == b:
            raise loc.say(f"{p!r} names the same body twice")
        pairs.append((a, b))
    kw["no_collide"] = pairs

    # [[elastic]]
    kw["elastic"] = [_elastic_in(_Loc(str(source), f"elastic[{k}]"), e)
                     for k, e in enumerate(_list(top, "elastic", d.get("elastic", [])))]
    if "elastic_options" in sc:
        opts = _table(sloc, "elastic_options", sc["elastic_options"], _MeshKeys())
        kw["elastic_options"] = dict(opts)

    spec = SceneSpec(**kw)
    if solver is not None:
        spec.solver = solver
    try:
        spec.validate()
    except SceneError as e:
        raise SceneError(f"{source}: {e}") from e
    return spec


# ==============================================================================================
# files

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")
_LINE = 100


def _toml_str(s: str) -> str:
    return tomli_w.dumps({"s": s})[4:-1]         # 's = "..."\n' -> '"..."' (tomli_w's escaping)


def _toml_key(k: str) -> str:
    return k if _BARE_KEY.match(k) else _toml_str(k)


def _toml_value(v, depth: int = 0) -> str:
    """One TOML value on one line (arrays of numbers stay on one line, unlike tomli_w's layout)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x, depth + 1) for x in v) + "]"
    if isinstance(v, dict):
        if not v:
            return "{}"
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(x, depth + 1)}" for k, x in v.items()) + " }"
    raise SceneError(f"cannot write {v!r} ({type(v).__name__}) to TOML")


def _toml_item(k: str, v) -> str:
    """``key = value``; long arrays of arrays / tables go one element per line."""
    one = f"{_toml_key(k)} = {_toml_value(v)}"
    if len(one) <= _LINE or not isinstance(v, list) or not v or not all(isinstance(x, (list, dict)) for x in v):
        return one
    return f"{_toml_key(k)} = [\n" + "".join(f"    {_toml_value(x)},\n" for x in v) + "]"


def _toml_table(name: str, t: dict, header: str) -> list[str]:
    lines = [header] if header else []
    subs = []
    for k, v in t.items():
        if isinstance(v, dict) and (len(_toml_item(k, v)) > _LINE or not v):
            subs.append((k, v))
        else:
            lines.append(_toml_item(k, v))
    for k, v in subs:
        full = f"{name}.{_toml_key(k)}" if name else _toml_key(k)
        lines += ["", *_toml_table(full, v, f"[{full}]")]
    return lines


def _toml_text(d: dict) -> str:
    """Compact TOML for scene data: top-level values, the [scene] table, then one [[...]] per entry."""
    lines = []
    tables, aots = [], []
    for k, v in d.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            aots.append((k, v))
        elif isinstance(v, dict):
            tables.append((k, v))
        else:
            lines.append(_toml_item(k, v))
    for k, v in tables:
        lines += ["", *_toml_table(_toml_key(k), v, f"[{_toml_key(k)}]")]
    for k, entries in aots:
        for e in entries:
            lines += ["", *_toml_table(_toml_key(k), e, f"[[{_toml_key(k)}]]")]
    return "\n".join(lines) + "\n"


def _check_none(where: str, v) -> None:
    if v is None:
        raise SceneError(f"{where}=None cannot be written to TOML (it has no null); use a .json file or drop it")
    if isinstance(v, dict):
        for k, x in v.items():
            _check_none(f"{where}.{k}", x)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _check_none(f"{where}[{i}]", x)


def dumps_toml(d: dict) -> str:
    """TOML text of scene data ``d``. The compact layout is checked by parsing it back; should it
    ever differ, ``tomli_w.dumps`` (one number per line, but always right) is used instead."""
    _check_none("scene file field", d)
    text = _toml_text(d)
    try:
        ok = tomllib.loads(text) == d
    except tomllib.TOMLDecodeError:
        ok = False
    return text if ok else tomli_w.dumps(d)


def _json_safe(v, free: bool = False):
    """Infinite floats of schema fields as the strings "inf" / "-inf" (standard JSON has no infinity);
    free-form ``settings`` / ``params`` keep Python's ``Infinity``."""
    if isinstance(v, float) and math.isinf(v) and not free:
        return "inf" if v > 0 else "-inf"
    if isinstance(v, dict):
        return {k: _json_safe(x, free or k in ("settings", "params")) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_safe(x, free) for x in v]
    return v


def _json_text(v, level: int = 0) -> str:
    one = json.dumps(v, ensure_ascii=False)
    if not isinstance(v, (dict, list)) or len(one) + 2 * level <= _LINE and level > 0:
        return one
    if isinstance(v, list) and not any(isinstance(x, (dict, list)) for x in v):
        return one                                      # numbers stay on one line
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(v, list):
        if not v:
            return "[]"
        return "[\n" + ",\n".join(inner + _json_text(x, level + 1) for x in v) + "\n" + pad + "]"
    if not v:
        return "{}"
    return "{\n" + ",\n".join(f"{inner}{json.dumps(k, ensure_ascii=False)}: {_json_text(x, level + 1)}"
                              for k, x in v.items()) + "\n" + pad + "}"


def dumps_json(d: dict) -> str:
    """JSON text of scene data ``d``: indented, with short arrays and tables on one line."""
    data = _json_safe(d)
    text = _json_text(data) + "\n"
    try:
        ok = json.loads(text) == data
    except ValueError:
        ok = False
    return text if ok else json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _kind(path: Path) -> str:
    ext = path.suffix.lower()
    if ext not in (".toml", ".json"):
        raise SceneError(f"{path}: unknown scene-file extension {path.suffix!r}; use .toml or .json")
    return ext[1:]


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def loads_scene(text: str, kind: str, source: str = "<string>") -> SceneSpec:
    """The spec in ``text`` of ``kind`` "toml" or "json"; ``source`` names it in errors."""
    if kind == "toml":
        try:
            d = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SceneError(f"{source}: not valid TOML: {e}") from None
    elif kind == "json":
        try:
            d = json.loads(text, object_pairs_hook=_no_duplicates)
        except ValueError as e:
            raise SceneError(f"{source}: not valid JSON: {e}") from None
    else:
        raise SceneError(f"{source}: unknown scene-file kind {kind!r}; use 'toml' or 'json'")
    return from_dict(d, source)


def load_scene(path) -> SceneSpec:
    """Read the scene file ``path`` (``.toml`` or ``.json``, by extension) into a :class:`SceneSpec`.
    The scene's name defaults to the file name without its extension; a ``[scene] solver`` becomes
    the spec's ``solver`` attribute. Raises :class:`SceneError` for a bad, missing or unreadable file."""
    p = Path(path)
    kind = _kind(p)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SceneError(f"{path}: no such scene file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SceneError(f"{path}: cannot read the scene file ({type(e).__name__}: {e})") from None
    return loads_scene(text, kind, str(path))


def save_scene(spec: SceneSpec, path) -> Path:
    """Write ``spec`` to ``path`` as TOML or JSON (by extension); returns the path.

    The data is read back (``from_dict``) before writing, so a file that would not load is never
    written."""
    p = Path(path)
    kind = _kind(p)
    d = to_dict(spec)
    from_dict(d, str(path))
    text = dumps_toml(d) if kind == "toml" else dumps_json(d)
    p.write_text(text, encoding="utf-8")
    return p
