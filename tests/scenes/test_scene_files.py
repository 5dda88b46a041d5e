"""Scene files (tumble.scenefile): exact round trip of every library scene through TOML and JSON,
schema errors that name the entry, field and value, and the hand-written examples."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

import tumble as tb
import tumble.scenefile as scenefile
import tumble.scenes as scenes
from tumble.errors import SceneError
from tumble.scenefile import dumps_json, dumps_toml, from_dict, load_scene, loads_scene, save_scene, to_dict

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "scenes"
STEPS = 3


# ----------------------------------------------------------------------------------------------
# world comparison


def _bytes(a) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def _stores(w):
    return {"bodies": w.bodies, "geoms": w.geoms, "joints": w.joint_store}


def assert_worlds_identical(w1, w2, label: str) -> None:
    """Every live row of the body, geom and joint stores bit for bit, the hulls, the spawn queue,
    the settings, gravity and default dt."""
    for kind, s1 in _stores(w1).items():
        s2 = _stores(w2)[kind]
        assert s1.count == s2.count, f"{label}: {kind} count {s1.count} != {s2.count}"
        for name in type(s1).FIELDS:
            a, b = getattr(s1, name)[: s1.count], getattr(s2, name)[: s2.count]
            assert a.dtype == b.dtype and _bytes(a) == _bytes(b), f"{label}: {name} differs"
    assert _bytes(w1.gravity) == _bytes(w2.gravity), f"{label}: gravity"
    assert w1.solver == w2.solver
    assert repr(dataclasses.asdict(w1.settings)) == repr(dataclasses.asdict(w2.settings)), f"{label}: settings"
    assert repr(w1.default_dt) == repr(w2.default_dt)
    assert len(w1.hulls._hulls) == len(w2.hulls._hulls)
    if w1.hulls._hulls:
        h1, h2 = w1.hulls_arrays, w2.hulls_arrays
        for name, a, b in zip(h1._fields, h1, h2):
            assert _bytes(a) == _bytes(b), f"{label}: hull {name}"
    assert len(w1._spawns) == len(w2._spawns), f"{label}: spawn queue"
    for (t1, sh1, kw1), (t2, sh2, kw2) in zip(w1._spawns, w2._spawns):
        assert repr(t1) == repr(t2)
        assert type(sh1) is type(sh2) and _bytes(sh1.size) == _bytes(sh2.size)
        assert kw1.keys() == kw2.keys()
        for k, v in kw1.items():
            if isinstance(v, (np.ndarray, tuple, list)):
                assert _bytes(np.asarray(v, dtype=float)) == _bytes(np.asarray(kw2[k], dtype=float)), k
            else:
                assert v == kw2[k] and repr(v) == repr(kw2[k]), k


def assert_states_identical(w1, w2, label: str) -> None:
    for name in ("body_position", "body_orientation", "body_linear_velocity", "body_angular_velocity"):
        n = w1.bodies.count
        assert w2.bodies.count == n
        assert _bytes(getattr(w1.bodies, name)[:n]) == _bytes(getattr(w2.bodies, name)[:n]), f"{label}: {name}"


# ----------------------------------------------------------------------------------------------
# every library scene, both formats

_ORIGINAL: dict = {}
#: smaller versions of the scenes whose defaults take a minute to write, build and step here (3000
#: compound bodies of soli3000, 250 cows of 19 hulls each); the round trip is the same code at any size
_SMALL = {"cow_pile": {"count": 8, "per_row": 2}, "soli3000": {"count": 200, "half_width": 0.8}}


def _state(w) -> dict:
    return {name: _bytes(getattr(w.bodies, name)[: w.bodies.count]) for name in
            ("body_position", "body_orientation", "body_linear_velocity", "body_angular_velocity")}


def _original(name):
    """(spec, its dict, its unstepped world, the state bytes after STEPS steps), built once per scene
    for both formats."""
    if name not in _ORIGINAL:
        spec = scenes.spec(name, **_SMALL.get(name, {}))
        d = to_dict(spec)
        w = spec.build(solver="pgs")
        w0 = copy.deepcopy(w)                  # kept unstepped for the array comparison
        for _ in range(STEPS):
            w.step(spec.dt)
        _ORIGINAL[name] = (spec, d, w0, _state(w))
    return _ORIGINAL[name]


@pytest.mark.parametrize("fmt", ["toml", "json"])
@pytest.mark.parametrize("name", scenes.names())
def test_library_scene_round_trip(name, fmt, tmp_path):
    spec, d, w0, stepped = _original(name)
    path = save_scene(spec, tmp_path / f"{name}.{fmt}")
    text = path.read_text()
    assert text.startswith('format = "tumble-scene"\nversion = 1\n' if fmt == "toml" else '{\n  "format"')
    back = load_scene(path)
    # (a) the data is the same, to the bit (no -0.0 / int-float drift either)
    db = to_dict(back)
    assert db == d and repr(db) == repr(d)
    assert len(back.joints) == len(spec.joints) and back.no_collide == [tuple(p) for p in spec.no_collide]
    # (b) the worlds are bit-identical
    w1 = back.build(solver="pgs")
    assert_worlds_identical(w0, w1, name)
    assert w1.joint_count == w0.joint_count
    # (c) and so are STEPS steps of them
    for _ in range(STEPS):
        w1.step(back.dt)
    assert _state(w1) == stepped, f"{name}: state after {STEPS} steps differs"


def test_defaults_are_left_out_and_shared_entries_written_once(tmp_path):
    text = save_scene(scenes.spec("pyramid20"), tmp_path / "p.toml").read_text()
    assert text.count("[[materials]]") == 1 and text.count("[[shapes]]") == 1
    assert text.count("[[bodies]]") == 211
    for default_field in ("orientation", "linear_velocity", "angular_velocity", "spawn_time", "fixed = false",
                          "\ndt =", "gravity"):
        assert default_field not in text
    d = tomllib.loads(text)
    assert d["bodies"][1] == {"name": "cube0_0", "tag": "stack", "shape": "cube", "material": "pyramid",
                              "position": [-9.595, 0.0, 0.5], "density": 1000.0}
    # reading fills the defaults
    b = load_scene(tmp_path / "p.toml").bodies[1]
    assert b.orientation == (1.0, 0.0, 0.0, 0.0) and b.linear_velocity == (0.0, 0.0, 0.0) and b.fixed is False


@pytest.mark.parametrize("make", [lambda: scenes.spec("ragdolls"), lambda: scenes.spec("motor_car"),
                                  lambda: kitchen_sink()], ids=["ragdolls", "motor_car", "kitchen_sink"])
def test_compact_writers_need_no_fallback(make):
    """The compact layouts (vectors on one line) parse back to the same data by themselves, so
    dumps_toml / dumps_json never fall back to tomli_w's / json's one-number-per-line layout."""
    d = to_dict(make())
    text = scenefile._toml_text(d)
    assert tomllib.loads(text) == d and dumps_toml(d) == text
    assert "position = [" in text and "\n    0.0,\n" not in text
    data = scenefile._json_safe(d)
    text = scenefile._json_text(data) + "\n"
    assert json.loads(text) == data and dumps_json(d) == text


def test_export_convenience(tmp_path):
    p = scenes.export("pendulum", tmp_path / "pendulum.json", length=0.5)
    spec = load_scene(p)
    assert spec.params["length"] == 0.5 and spec.name == "pendulum" and len(spec.joints) == 1
    assert to_dict(spec) == to_dict(scenes.spec("pendulum", length=0.5))


# ----------------------------------------------------------------------------------------------
# every feature of the schema in one scene


def kitchen_sink() -> scenes.SceneSpec:
    """Every shape type (tilted plane, compound with rotated children, hull), every joint type with
    limits, motors (velocity and servo), springs, break thresholds and collide, materials that share
    a name, presets, -0.0, int masses, a spawned body, no_collide pairs, settings, params, solver."""
    s = scenes.SceneSpec(name="sink", gravity=(0.0, -0.0, -9.5), dt=1.0 / 240.0, seconds=2.0,
                         settings={"iterations": 12, "warm_start": False}, description="every feature",
                         params={"n": 3, "label": "x", "flag": True, "values": [1, 2.5], "nested": {"a": 1}})
    s.solver = "pgs"
    oak2 = tb.materials.OAK.with_(friction=0.3)                  # same name as the preset, other values
    s.add(tb.Plane((0.1, 0.2, 1.0)), fixed=True, material=tb.materials.GRANITE, name="ground", tag="ground")
    comp = tb.Compound([(tb.Box((0.2, 0.1, 0.05)), (0.1, 0.0, 0.0), (0.9, 0.1, 0.2, 0.3)),
                        (tb.Sphere(0.1), (-0.2, 0.0, 0.0)),
                        (tb.Capsule(0.05, 0.1), (0.0, 0.2, 0.0), (0.5, 0.5, 0.5, 0.5)),
                        (tb.ConvexHull([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]), (0.0, -0.2, 0.1))])
    rng = np.random.default_rng(1)
    hull = tb.ConvexHull(rng.normal(size=(12, 3)) * 0.2)
    c = s.add(comp, (0.0, 0.0, 1.0), orientation=(0.7, 0.1, -0.0, 0.2), material=tb.materials.OAK, name="comp")
    h = s.add(hull, np.array([1.0, 0.0, 1.0]), linear_velocity=(1.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, -0.0),
              material=oak2, mass=3, name="hull")
    cap = s.add(tb.Capsule(0.1, 0.2), (-1.0, 0.0, 1.0), density=500, name="cap", tag="t")
    box = s.add(tb.Box((0.1, 0.1, 0.1)), (2.0, 0.0, 1.0), name="box",
                material=tb.Material(friction=0.0, restitution=1.0, name="x"))
    b5 = s.add(tb.Sphere(0.1), (3.0, 0.0, 1.0), name="ball", material=tb.materials.RUBBER)
    b6 = s.add(tb.Sphere(0.1), (3.0, 1.0, 1.0), name="ball2", material=tb.materials.DEFAULT.with_(density=999.0))
    s.add(tb.Box((0.1, 0.1, 0.1)), (0.0, 2.0, 1.0), name="late", spawn_time=0.01)
    s.add(tb.Box((0.1, 0.1, 0.1)), (0.0, 3.0, 1.0), name="later", spawn_time=0.5, fixed=True)
    s.joint(tb.Ball(None, b5, (3.0, 0.0, 2.0), name="rod"))
    s.joint(tb.Hinge(c, h, (0.5, 0.0, 1.0), (0.0, 1.0, 1.0), limits=(-math.inf, 0.5),
                     motor=tb.Motor(target=0.2, frequency=3.0, damping_ratio=0.5, max_force=10.0),
                     break_torque=100.0, collide=True, name="h"))
    s.joint(tb.Slider(cap, box, (0.5, 0.0, 1.0), (1.0, 0.0, 0.0), limits=(-0.1, 0.1), motor=tb.Motor(speed=-1.0)))
    s.joint(tb.Distance(b5, b6, (3.0, 0.0, 1.0), (3.0, 1.0, 1.0), length=1.2, frequency=4.0, damping_ratio=0.3))
    s.joint(tb.Distance(h, b6, np.array([1.0, 0.0, 1.0]), (3.0, 1.0, 1.0)))
    s.joint(tb.Fixed(cap, b6, break_force=50.0))
    s.joint(tb.Fixed(box, b6, anchor=(2.5, 0.5, 1.0)))
    s.no_collide.append((c, cap))
    s.no_collide.append((np.int64(h), box))
    return s


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_every_feature_round_trips_exactly(fmt, tmp_path):
    spec = kitchen_sink()
    d = to_dict(spec)
    # the shared-name materials get distinct ids; the body's own material name is kept
    assert [(m["name"], m.get("id")) for m in d["materials"]] == [
        ("granite", None), ("oak", None), ("oak", "oak-2"), ("x", None), ("rubber", None), ("default", None)]
    path = save_scene(spec, tmp_path / f"sink.{fmt}")
    text = path.read_text()
    if fmt == "json":
        assert "Infinity" not in text and '"-inf"' in text     # standard JSON
        json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard constant {c}"))
    back = load_scene(path)
    assert repr(to_dict(back)) == repr(d)
    assert back.solver == "pgs" and back.params == {"n": 3, "label": "x", "flag": True, "values": [1, 2.5],
                                                    "nested": {"a": 1}}
    assert back.bodies[2].material.name == "oak" and back.bodies[2].material.friction == 0.3
    w0, w1 = spec.build(solver="pgs"), back.build(solver="pgs")
    assert_worlds_identical(w0, w1, "sink")
    for _ in range(5):
        w0.step(spec.dt)
        w1.step(back.dt)
    assert w0.bodies.count == w1.bodies.count == 8                # "late" spawned in both, "later" not yet
    assert_states_identical(w0, w1, "sink")


def test_hand_written_references():
    """Bodies by name in joints and no_collide, presets, inline materials, shape ids in compound
    children, "inf" strings, the world as the default joint side, the name from the source."""
    d = {"format": "tumble-scene", "version": 1,
         "scene": {"settings": {"iterations": 7}},
         "shapes": [{"id": "pebble", "type": "sphere", "radius": 0.05}],
         "bodies": [{"name": "floor", "shape": {"type": "plane", "normal": [0, 0, 2]}, "fixed": True},
                    {"name": "a", "shape": "pebble", "material": "iron", "position": [0, 0, 1]},
                    {"name": "b", "shape": {"type": "compound", "children": [
                        {"shape": "pebble"}, {"shape": "pebble", "position": [0.1, 0, 0]}]},
                     "material": {"friction": 0.1}, "position": [1, 0, 1]}],
         "joints": [{"type": "ball", "b": "a", "anchor": [0, 0, 2], "break_force": "inf"},
                    {"type": "hinge", "a": "a", "b": "b", "anchor": [0.5, 0, 1], "axis": [0, 0, 3],
                     "limits": ["-inf", 1], "motor": {"speed": 1, "max_force": "inf"}}],
         "no_collide": [["floor", "b"]]}
    spec = from_dict(d, "dir/hand.json")
    assert spec.name == "hand" and spec.settings == {"iterations": 7}
    assert spec.bodies[0].shape.normal == (0.0, 0.0, 1.0)
    assert spec.bodies[1].material is tb.materials.IRON
    assert spec.bodies[2].material == tb.Material(friction=0.1)
    assert spec.bodies[1].shape is spec.bodies[2].shape.children[0][0]
    j0, j1 = spec.joints
    assert j0.a is None and j0.b == 1 and j0.break_force == math.inf
    assert (j1.a, j1.b, j1.limits, j1.motor) == (1, 2, (-math.inf, 1.0), tb.Motor(speed=1.0))
    assert spec.no_collide == [(0, 2)]
    assert d["joints"][0]["b"] == "a"                                       # the input is not modified
    w = spec.build()
    w.step(spec.dt)
    assert w.joint_count == 2


# ----------------------------------------------------------------------------------------------
# schema errors


def base() -> dict:
    return {"format": "tumble-scene", "version": 1,
            "scene": {"name": "t", "settings": {"iterations": 10}},
            "materials": [{"name": "oak", "density": 800.0}],
            "shapes": [{"id": "cube", "type": "box", "half_extents": [0.1, 0.1, 0.1]}],
            "bodies": [{"name": "ground", "shape": {"type": "plane"}, "fixed": True},
                       {"name": "brick", "shape": {"type": "box", "half_extents": [0.1, 0.1, 0.1]},
                        "material": "oak", "position": [0, 0, 0.1]},
                       {"name": "ball", "shape": {"type": "sphere", "radius": 0.1}, "position": [0, 0, 1]}],
            "joints": [{"type": "hinge", "name": "h", "a": 1, "b": 2, "anchor": [0, 0, 0.5], "axis": [0, 1, 0]}]}


def _set(path, value):
    def f(d):
        *head, last = path
        for k in head:
            d = d[k]
        d[last] = value
    return f


def _del(path):
    def f(d):
        *head, last = path
        for k in head:
            d = d[k]
        del d[last]
    return f


def _rename(path, new):
    def f(d):
        *head, last = path
        for k in head:
            d = d[k]
        d[new] = d.pop(last)
    return f


B1 = "bodies[1] (name 'brick')"
J0 = "joints[0] (name 'h')"
NAN = float("nan")
ERRORS = [
    ("half_extents", _set(["bodies", 1, "shape", "half_extents"], [0.1, -1, 0.1]),
     [B1, "field shape.half_extents=[0.1, -1, 0.1] must be 3 positive numbers"]),
    ("misspelt field", _rename(["bodies", 1, "position"], "postion"),
     [B1, "unknown field 'postion' (did you mean 'position'?)"]),
    ("misspelt top-level", _rename(["bodies"], "bodys"), ["unknown top-level field 'bodys' (did you mean 'bodies'?)"]),
    ("misspelt scene field", _set(["scene", "gravty"], [0, 0, -1]), ["unknown field 'scene.gravty'", "'gravity'"]),
    ("misspelt shape field", _rename(["bodies", 1, "shape", "half_extents"], "half_extent"),
     [B1, "unknown field 'shape.half_extent'", "did you mean 'half_extents'"]),
    ("misspelt joint field", _rename(["joints", 0, "anchor"], "ancor"), [J0, "'ancor'", "'anchor'"]),
    ("misspelt motor field", _set(["joints", 0, "motor"], {"sped": 1.0}), [J0, "'motor.sped'", "'speed'"]),
    ("unknown shape type", _set(["bodies", 1, "shape", "type"], "cube"),
     [B1, "field shape.type='cube' is not a shape type", "box"]),
    ("missing shape type", _del(["bodies", 1, "shape", "type"]), [B1, "missing field 'shape.type'"]),
    ("missing shape", _del(["bodies", 1, "shape"]), [B1, "missing field 'shape'"]),
    ("unknown shape id", _set(["bodies", 1, "shape"], "cub"), [B1, "field shape='cub'", "did you mean 'cube'"]),
    ("unknown material", _set(["bodies", 1, "material"], "oka"),
     [B1, "field material='oka'", "did you mean 'oak'"]),
    ("material type", _set(["bodies", 1, "material"], 3), [B1, "field material=3"]),
    ("joint body id", _set(["joints", 0, "b"], 7), [J0, "field b=7 is not a body of the scene (3 bodies"]),
    ("joint body name", _set(["joints", 0, "b"], "bal"), [J0, "field b='bal' names no body", "'ball'"]),
    ("joint body type", _set(["joints", 0, "a"], 1.5), [J0, "field a=1.5"]),
    ("joint same body", _set(["joints", 0, "b"], 1), [J0, "same body"]),
    ("joint both fixed", _set(["joints", 0, "a"], 0), None),  # replaced below
    ("joint type", _set(["joints", 0, "type"], "hing"), [J0, "field type='hing'", "did you mean 'hinge'"]),
    ("joint missing b", _del(["joints", 0, "b"]), [J0, "missing field 'b'"]),
    ("joint missing axis", _del(["joints", 0, "axis"]), [J0, "missing field 'axis'"]),
    ("joint zero axis", _set(["joints", 0, "axis"], [0, 0, 0]), [J0, "field axis=[0, 0, 0]"]),
    ("joint limits reversed", _set(["joints", 0, "limits"], [1, 0]), [J0, "field limits=[1, 0] is reversed"]),
    ("joint limits shape", _set(["joints", 0, "limits"], [1]), [J0, "field limits=[1]"]),
    ("joint break force", _set(["joints", 0, "break_force"], 0), [J0, "field break_force=0"]),
    ("joint collide type", _set(["joints", 0, "collide"], "no"), [J0, "field collide='no' must be true or false"]),
    ("motor empty", _set(["joints", 0, "motor"], {"max_force": 1.0}), [J0, "field motor=", "speed", "target"]),
    ("motor max_force", _set(["joints", 0, "motor"], {"speed": 1.0, "max_force": -1}), [J0, "motor.max_force=-1"]),
    ("motor type", _set(["joints", 0, "motor"], 5), [J0, "field motor=5 must be a table"]),
    ("position type", _set(["bodies", 1, "position"], "up"), [B1, "field position='up' must be 3 finite numbers"]),
    ("position length", _set(["bodies", 1, "position"], [0, 0]), [B1, "field position=[0, 0]"]),
    ("position bool", _set(["bodies", 1, "position"], [0, True, 0]), [B1, "field position=[0, True, 0]"]),
    ("position nan", _set(["bodies", 1, "position"], [NAN, 0, 0.1]), [B1, "field position=[nan, 0, 0.1]"]),
    ("orientation zero", _set(["bodies", 1, "orientation"], [0, 0, 0, 0]), [B1, "field orientation=[0, 0, 0, 0]"]),
    ("mass type", _set(["bodies", 1, "mass"], "heavy"), [B1, "field mass='heavy' must be a finite number > 0"]),
    ("mass negative", _set(["bodies", 1, "mass"], -2.0), [B1, "field mass=-2.0"]),
    ("mass nan", _set(["bodies", 1, "mass"], NAN), [B1, "field mass=nan", "NaN"]),
    ("density inf", _set(["bodies", 1, "density"], float("inf")), [B1, "field density=inf"]),
    ("fixed type", _set(["bodies", 1, "fixed"], 1), [B1, "field fixed=1 must be true or false"]),
    ("name type", _set(["bodies", 1, "name"], 5), ["bodies[1]", "field name=5 must be a string"]),
    ("body not a table", _set(["bodies", 1], 5), ["bodies[1]", "must be a table"]),
    ("bodies not an array", _set(["bodies"], 5), ["field bodies=5 must be an array"]),
    ("radius nan", _set(["bodies", 2, "shape", "radius"], NAN), ["bodies[2] (name 'ball')", "shape.radius=nan"]),
    ("dt nan", _set(["scene", "dt"], NAN), ["scene: field dt=nan"]),
    ("dt zero", _set(["scene", "dt"], 0), ["scene: field dt=0 must be a finite number > 0"]),
    ("seconds string", _set(["scene", "seconds"], "5"), ["scene: field seconds='5'"]),
    ("gravity length", _set(["scene", "gravity"], [0, -9.81]), ["scene: field gravity=[0, -9.81]"]),
    ("scene name type", _set(["scene", "name"], 3), ["scene: field name=3 must be a string"]),
    ("scene not a table", _set(["scene"], "x"), ["field scene='x' must be a table"]),
    ("solver", _set(["scene", "solver"], "pgss"), ["scene: field solver='pgss' is not a solver", "'pgs'"]),
    ("setting name", _rename(["scene", "settings", "iterations"], "iteratons"),
     ["scene: unknown field 'settings.iteratons'", "did you mean 'iterations'"]),
    ("setting value", _set(["scene", "settings", "iterations"], -1), ["scene: field settings:", "iterations"]),
    ("setting nan", _set(["scene", "settings", "baumgarte"], NAN), ["scene: field settings.baumgarte=nan"]),
    ("params type", _set(["scene", "params"], [1]), ["scene: field params=[1] must be a table"]),
    ("bad version", _set(["version"], 2), ["field version=2 is newer than this tumble reads (version 1)"]),
    ("version string", _set(["version"], "1"), ["field version='1' must be an integer"]),
    ("missing version", _del(["version"]), ["missing field 'version'"]),
    ("bad format", _set(["format"], "tumble"), ["field format='tumble' is not 'tumble-scene'"]),
    ("missing format", _del(["format"]), ["missing field 'format'"]),
    ("material friction", _set(["materials", 0, "friction"], -1), ["materials[0] (name 'oak')", "field friction=-1"]),
    ("material restitution", _set(["materials", 0, "restitution"], 2.0), ["materials[0] (name 'oak')",
                                                                        "field restitution=2.0"]),
    ("material no name", _del(["materials", 0, "name"]), ["materials[0]", "missing field 'name'"]),
    ("material twice", lambda d: d["materials"].append({"name": "oak"}),
     ["materials[1] (name 'oak')", "defined twice"]),
    ("shape no id", _del(["shapes", 0, "id"]), ["shapes[0]", "missing field 'id'"]),
    ("shape bad", _set(["shapes", 0, "half_extents"], [1, 1]), ["shapes[0] (id 'cube')", "field half_extents=[1, 1]"]),
    ("plane not fixed", _del(["bodies", 0, "fixed"]), ["bodies[0] (name 'ground')", "field fixed=False",
                                                      "plane can only belong to a fixed body"]),
    ("plane zero normal", _set(["bodies", 0, "shape", "normal"], [0, 0, 0]), ["bodies[0]", "shape.normal=[0, 0, 0]"]),
    ("spawn order", _set(["bodies", 1, "spawn_time"], 1.0), ["bodies[2] (name 'ball')", "spawn_time"]),
    ("spawn negative", _set(["bodies", 2, "spawn_time"], -1.0), ["bodies[2] (name 'ball')", "field spawn_time=-1.0"]),
    ("joint to spawned body", _set(["bodies", 2, "spawn_time"], 1.0), [J0, "field b=2 is spawned"]),
    ("hull coplanar (ShapeError)", _set(["bodies", 1, "shape"], {"type": "hull", "points": [[0, 0, 0], [1, 0, 0],
                                                                                         [0, 1, 0], [1, 1, 0]]}),
     [B1, "field shape: ConvexHull", "coplanar"]),
    ("hull few points", _set(["bodies", 1, "shape"], {"type": "hull", "points": [[0, 0, 0]]}),
     [B1, "field shape.points=[[0, 0, 0]] must hold at least 4 points"]),
    ("hull point", _set(["bodies", 1, "shape"], {"type": "hull", "points": [[0, 0, 0], [1, 0]]}),
     [B1, "field shape.points[1]=[1, 0]"]),
    ("compound nested", _set(["bodies", 1, "shape"], {"type": "compound", "children": [
        {"shape": {"type": "compound", "children": []}}]}),
     [B1, "field shape.children[0].shape.type='compound' cannot be a compound child"]),
    ("compound plane child", _set(["bodies", 1, "shape"], {"type": "compound", "children": [
        {"shape": {"type": "plane"}}]}), [B1, "shape.children[0].shape.type='plane'"]),
    ("compound empty", _set(["bodies", 1, "shape"], {"type": "compound", "children": []}),
     [B1, "field shape.children=[] must hold at least one child"]),
    ("compound child field", _set(["bodies", 1, "shape"], {"type": "compound", "children": [
        {"shape": {"type": "sphere", "radius": 1}, "positon": [0, 0, 0]}]}),
     [B1, "unknown field 'shape.children[0].positon'", "'position'"]),
    ("distance zero length (JointError)", _set(["joints", 0], {"type": "distance", "a": 1, "b": 2,
                                                              "anchor_a": [0, 0, 1], "anchor_b": [0, 0, 1]}),
     ["joints[0]", "distance joint", "length"]),
    ("no_collide body", _set(["no_collide"], [[1, 9]]), ["no_collide[0]", "field b=9"]),
    ("no_collide pair", _set(["no_collide"], [[1, 2, 0]]), ["no_collide[0]", "must be a pair"]),
]
ERRORS = [e for e in ERRORS if e[2] is not None] + [
    ("joint both fixed", lambda d: (_set(["joints", 0, "a"], 0)(d), _set(["bodies", 2, "fixed"], True)(d)),
     [J0, "both are fixed"]),
    ("joint ambiguous name", lambda d: (_set(["bodies", 2, "name"], "brick")(d), _set(["joints", 0, "b"], "brick")(d)),
     [J0, "field b='brick' names 2 bodies"]),
]


def test_base_is_valid():
    spec = from_dict(base(), "my_scene.toml")
    assert spec.name == "t" and len(spec.bodies) == 3 and len(spec.joints) == 1


@pytest.mark.parametrize("case", ERRORS, ids=[e[0] for e in ERRORS])
def test_schema_errors_name_entry_field_and_value(case):
    _, mutate, expected = case
    d = base()
    mutate(d)
    with pytest.raises(SceneError) as info:
        from_dict(d, "my_scene.toml")
    assert type(info.value) is SceneError
    msg = str(info.value)
    assert msg.startswith("my_scene.toml: "), msg
    for part in expected:
        assert part in msg, f"{part!r} not in {msg!r}"


def _paths(v, path=()):
    """Every key path of ``v``; in arrays of numbers or of points only the first element."""
    yield path
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, (*path, k))
    elif isinstance(v, list):
        leafy = all(not isinstance(x, dict) for x in v)
        for i, x in enumerate(v[:1] if leafy else v):
            yield from _paths(x, (*path, i))


def test_no_raw_exceptions_for_any_bad_value(monkeypatch):
    """Replace every value of two full scene files by wrong things: each load either succeeds or
    raises SceneError -- never KeyError, TypeError, IndexError, AttributeError ..."""
    import tumble._core.collision.hull as hull_module

    built = {}
    build = hull_module.build_hull

    def cached_build(points):          # the same hull is rebuilt thousands of times here: 17 ms each
        p = np.asarray(points, dtype=np.float64)
        key = (p.shape, p.tobytes())
        if key not in built:
            built[key] = build(points)
        return built[key]

    monkeypatch.setattr(hull_module, "build_hull", cached_build)
    bad_values = [None, "x", [], {}, -1, float("nan"), True, [1, 2]]
    for d0 in (to_dict(kitchen_sink()), base()):
        for path in list(_paths(d0))[1:]:
            for bad in bad_values:
                d = json.loads(json.dumps(d0))
                target = d
                for k in path[:-1]:
                    target = target[k]
                target[path[-1]] = bad
                try:
                    from_dict(d, "f.json")
                except SceneError:
                    pass


def test_file_level_errors(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('format = "tumble-scene"\nversion = 1\n[scene\n')
    with pytest.raises(SceneError, match=r"bad.toml: not valid TOML"):
        load_scene(p)
    p = tmp_path / "bad.json"
    p.write_text('{"format": "tumble-scene", "version": 1,}')
    with pytest.raises(SceneError, match=r"bad.json: not valid JSON"):
        load_scene(p)
    p.write_text('{"format": "tumble-scene", "version": 1, "version": 1}')
    with pytest.raises(SceneError, match="duplicate key 'version'"):
        load_scene(p)
    p.write_text('[1, 2]')
    with pytest.raises(SceneError, match="top level"):
        load_scene(p)
    with pytest.raises(SceneError, match=r"unknown scene-file extension '.yaml'"):
        load_scene(tmp_path / "scene.yaml")
    with pytest.raises(SceneError, match=r"unknown scene-file extension"):
        save_scene(scenes.spec("pendulum"), tmp_path / "scene.txt")
    with pytest.raises(SceneError, match=r"x.toml: bodies\[1\] \(name 'brick'\): field mass=-1.0"):
        loads_scene('format = "tumble-scene"\nversion = 1\n[[bodies]]\nname = "ground"\nshape = {type = "plane"}\n'
                    'fixed = true\n[[bodies]]\nname = "brick"\nshape = {type = "sphere", radius = 1}\nmass = -1.0\n',
                    "toml", "x.toml")


def test_write_errors(tmp_path):
    spec = scenes.spec("pendulum")
    spec.params["none"] = None                       # TOML has no null; JSON does
    with pytest.raises(SceneError, match="params.none=None cannot be written to TOML"):
        save_scene(spec, tmp_path / "p.toml")
    assert load_scene(save_scene(spec, tmp_path / "p.json")).params["none"] is None
    spec = scenes.spec("pendulum")
    spec.bodies[1].position = (float("nan"), 0.0, 0.0)
    with pytest.raises(SceneError, match=r"bodies\[1\] \(name 'bob'\): field position=.* is NaN"):
        to_dict(spec)
    spec = scenes.spec("pendulum")
    spec.bodies[1].shape = object()
    with pytest.raises(SceneError, match=r"bodies\[1\].*not a tumble shape"):
        to_dict(spec)
    spec = scenes.spec("pendulum")
    spec.bodies[1].spawn_time = 1.0                  # a joint to a spawned body: never written
    with pytest.raises(SceneError, match="spawned"):
        save_scene(spec, tmp_path / "q.toml")
    assert not (tmp_path / "q.toml").exists()


# ----------------------------------------------------------------------------------------------
# hand-written examples


@pytest.mark.parametrize("name", ["domino_row.toml", "hinged_door.toml", "pyramid.json"])
def test_examples_load_and_step(name):
    spec = load_scene(EXAMPLES / name)
    assert spec.name == Path(name).stem and spec.description
    w = spec.build(solver="pgs")
    p0 = w.positions.copy()
    for _ in range(10):
        w.step(spec.dt)
    assert np.all(np.isfinite(w.positions)) and w.positions.shape == p0.shape
    # a second trip through the writer changes nothing
    assert to_dict(from_dict(json.loads(dumps_json(to_dict(spec))))) == to_dict(spec)


def test_example_contents():
    dom = load_scene(EXAMPLES / "domino_row.toml")
    assert sum(b.tag == "stack" for b in dom.bodies) == 12 and isinstance(dom.bodies[1].shape, tb.Sphere)
    assert len({id(b.shape) for b in dom.bodies if b.tag == "stack"}) == 1          # one shared shape
    door = load_scene(EXAMPLES / "hinged_door.toml")
    (hinge,) = door.joints
    assert isinstance(hinge, tb.Hinge) and hinge.limits == (0.0, math.pi / 2) and hinge.motor.speed == 1.0
    assert (hinge.a, hinge.b) == (1, 2) and door.solver == "pgs"
    pyr = load_scene(EXAMPLES / "pyramid.json")
    assert len(pyr.bodies) == 11 and pyr.bodies[0].material is tb.materials.GRANITE
