"""The bad-input catalogue (issue 17): every kind of bad input tried, as code a user would write, with
the error and message it gets. ``tests/unit/test_bad_input_catalogue.py`` runs every case (a
``TumbleError`` subclass, a message, and the world unchanged by the rejected call) and checks that
``docs/bad_input.md`` is this module's current output; ``python tests/bad_input_catalogue.py`` rewrites
it.

Each case is ``(area, code)``: ``code`` runs with ``tb`` (tumble), ``np``, ``math``, ``scenes``
(``tumble.scenes``), ``tmp`` (a temporary folder, ``pathlib.Path``) and ``w``, a fresh world of the
default solver holding a ground plane (body 0), a box ``b`` (body 1, name "crate") resting on it, a
sphere ``s`` (body 2) and a hinge ``j`` (joint 0) between them, stepped once.
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

import numpy as np

CASES: list[tuple[str, str]] = [
    # shapes
    ("shape", "tb.Sphere(-0.1)"),
    ("shape", "tb.Sphere(math.nan)"),
    ("shape", "tb.Sphere('abc')"),
    ("shape", "tb.Sphere(None)"),
    ("shape", "tb.Sphere(True)"),
    ("shape", "tb.Sphere(1e-200)"),
    ("shape", "tb.Sphere(1e200)"),
    ("shape", "tb.Sphere(10**400)"),
    ("shape", "tb.Box((0.5, 0.0, 0.5))"),
    ("shape", "tb.Box((0.5, 0.5))"),
    ("shape", "tb.Box((0.5, 'wide', 0.5))"),
    ("shape", "tb.Box('abc')"),
    ("shape", "tb.Box((1e-120, 1, 1))"),
    ("shape", "tb.Capsule(0.1, 0.0)"),
    ("shape", "tb.Capsule(None, 1)"),
    ("shape", "tb.Plane(normal=(0, 0, 0))"),
    ("shape", "tb.Plane('up')"),
    ("shape", "tb.ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]])"),
    ("shape", "tb.ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, math.nan]])"),
    ("shape", "tb.ConvexHull('abc')"),
    ("shape", "tb.Compound(None)"),
    ("shape", "tb.Compound([5])"),
    ("shape", "tb.Compound([(tb.Sphere(0.5), 'here')])"),
    # materials
    ("material", "tb.Material(friction=-0.1)"),
    ("material", "tb.Material(friction='high')"),
    ("material", "tb.Material(restitution=1.5)"),
    ("material", "tb.Material(density=1e200)"),
    ("material", "tb.Material(density=None)"),
    ("material", "tb.Material(name=None)"),
    # adding bodies
    ("add_body", "w.add_body(tb.Box((0.5, 0.5, 0.5)), mass=0.0)"),
    ("add_body", "w.add_body(tb.Box((0.5, 0.5, 0.5)), mass=math.inf)"),
    ("add_body", "w.add_body(tb.Box((0.5, 0.5, 0.5)), density=-5.0)"),
    ("add_body", "w.add_body(tb.Box((0.5, 0.5, 0.5)), density=1e-200)"),
    ("add_body", "w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0, math.nan, 0))"),
    ("add_body", "w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0, 0))"),
    ("add_body", "w.add_body(tb.Box((0.5, 0.5, 0.5)), orientation=(0, 0, 0, 0))"),
    ("add_body", "w.add_body(tb.Box((0.5, 0.5, 0.5)), linear_velocity=(math.inf, 0, 0))"),
    ("add_body", "w.add_body(tb.Box((0.5, 0.5, 0.5)), asleep=True, linear_velocity=(1, 0, 0))"),
    ("add_body", "w.add_body(tb.Plane())"),
    ("add_body", "w.add_body('box')"),
    ("add_body", "w.add_body(tb.Sphere(0.5), material='oak')"),
    ("add_body", "w.spawn(-1.0, tb.Sphere(0.5))"),
    ("add_body", "w.spawn(1.0, tb.Sphere(0.5), mass=-1.0)"),
    # per-body calls
    ("body call", "w.position(7)"),
    ("body call", "w.position('crate')"),
    ("body call", "w.set_position(b, (0, 0, math.nan))"),
    ("body call", "w.set_orientation(b, (0, 0, 0, 0))"),
    ("body call", "w.set_linear_velocity(b, (1, 2))"),
    ("body call", "w.apply_force(b, (1, 0, 0), point=(math.nan, 0, 0))"),
    ("body call", "w.apply_torque(b, (math.inf, 0, 0))"),
    ("body call", "w.remove_body(9)"),
    ("body call", "w.remove_body(b); w.position(b)"),
    ("body call", "w.disable_collision(b, b)"),
    # joints
    ("joint", "w.add_joint(tb.Ball(b, b, anchor=(0, 0, 1)))"),
    ("joint", "w.add_joint(tb.Ball(None, 9, anchor=(0, 0, 1)))"),
    ("joint", "w.add_joint(tb.Hinge(b, s, anchor=(0, 0, 1), axis=(0, 0, 0)))"),
    ("joint", "w.add_joint(tb.Hinge(b, s, anchor=(0, 0, 1), axis=(0, 1, 0), limits=(1, -1)))"),
    ("joint", "w.add_joint(tb.Distance(b, s, anchor_a=(0, 0, 1), anchor_b=(0, 0, 1), length=-1))"),
    ("joint", "w.add_joint(tb.Ball(0, 0, anchor=(0, 0, 0)))"),
    ("joint", "w.add_joint('hinge')"),
    ("joint", "w.remove_joint(5)"),
    ("joint", "w.set_motor(j, tb.Motor(speed=math.nan))"),
    ("joint", "tb.World(solver='impulse').add_joint(tb.Ball(None, 0, anchor=(0, 0, 0)))"),
    # elastic bodies
    ("elastic", "tb.ElasticMaterial(density=-1.0)"),
    ("elastic", "tb.TetMesh.box((0.1, 0.0, 0.1))"),
    ("elastic", "w.add_elastic_body('cube')"),
    ("elastic", "w.add_elastic_body(tb.TetMesh.box(), material=tb.Material())"),
    ("elastic", "w.add_elastic_body(tb.TetMesh.box(), position=(0, math.nan, 0))"),
    ("elastic", "w.elastic_vertices(0)"),
    ("elastic", "e = w.add_elastic_body(tb.TetMesh.box(), position=(0, 0, 3)); w.pin(e, [0, 999])"),
    ("elastic", "e = w.add_elastic_body(tb.TetMesh.box(), position=(0, 0, 3)); w.set_elastic_options(tol=-1)"),
    ("elastic", "e = w.add_elastic_body(tb.TetMesh.box(), position=(0, 0, 3)); w.set_elastic_options(tool=1e-3)"),
    ("elastic", "e = w.add_elastic_body(tb.TetMesh.box(), position=(0, 0, 3)); "
                "w.set_elastic_options(body_contact='yes')"),
    # world, settings, stepping
    ("world", "tb.World(solver='magic')"),
    ("world", "tb.World(iteratons=5)"),
    ("world", "tb.World(gravity=(0, 0))"),
    ("world", "w.settings.update(iterations=-1)"),
    ("world", "w.settings.update(friction_model='viscous')"),
    ("world", "w.step(0.0)"),
    ("world", "w.step(math.nan)"),
    ("world", "w.run(1.0, dt=0)"),
    ("world", "w.run(-1.0)"),
    ("world", "w.run(0.1, dt=0.01, record=str(tmp / 'r.npz'), record_every=0)"),
    ("world", "w.schedule_gravity(1.0, (0, math.nan, 0))"),
    ("world", "w.on_nonfinite = 'ignore'"),
    ("world", "w.restore_state('snapshot')"),
    ("world", "w.restore_state(tb.World(solver='shock').save_state())"),
    ("world", "w.apply_force(b, (1e300, 0, 0)); w.step()"),
    # scenes and scene files
    ("scene", "scenes.build('stack11')"),
    ("scene", "scenes.build('stack10', count=-3)"),
    ("scene", "tb.scenefile.loads_scene('format = \"tumble-scene\"\\nversion = 9', 'toml')"),
    ("scene", "tb.scenefile.loads_scene('{\"format\": \"tumble-scene\", \"version\": 1, "
              "\"bodies\": [{\"shape\": {\"type\": \"sphere\", \"radius\": -1}}]}', 'json')"),
    ("scene", "tb.load_scene(tmp / 'missing.toml')"),
    # recordings
    ("recording", "tb.Recording.load(tmp / 'missing.npz')"),
    ("recording", "(tmp / 'junk.npz').write_bytes(b'not a zip'); tb.Recording.load(tmp / 'junk.npz')"),
    ("recording", "w.run(0.05, record=str(tmp / 'r.npz')); tb.Recording.load(tmp / 'r.npz').world_at(99)"),
]


def fresh_world():
    import tumble as tb

    w = tb.World()
    w.add_body(tb.Plane(), fixed=True, name="ground")
    b = w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0, 0, 0.5), name="crate")
    s = w.add_body(tb.Sphere(0.25), position=(0, 0, 1.6), name="ball")
    j = w.add_joint(tb.Hinge(b, s, anchor=(0, 0, 1.2), axis=(0, 1, 0)))
    w.step(1 / 60)
    return w, b, s, j


def fingerprint(w) -> tuple:
    """What a rejected call must not change: the dynamic state, counts, settings, forces, time."""
    from dataclasses import asdict

    n = w.body_count
    return (w.state_hash(), n, w.joint_count, repr(asdict(w.settings)), w.bodies.body_force[:n].tobytes(),
            w.bodies.body_torque[:n].tobytes(), w.step_count, w.on_nonfinite, len(w.pending_spawns),
            len(w.pending_gravity), w.elastic_body_count,
            None if w.elastic_system is None else (w.elastic_system.positions.tobytes(),
                                                   w.elastic_system.constrained.tobytes(), w.elastic_system.tol))


def run_case(code: str):
    """Run ``code``; returns (the exception or None, the world, its fingerprint before the call).
    A case with ``;`` runs its setup statements first and fingerprints before the last one."""
    import tumble as tb
    import tumble.scenefile  # noqa: F401  (tb.scenefile in the cases)
    import tumble.scenes as scenes

    w, b, s, j = fresh_world()
    with tempfile.TemporaryDirectory() as d:
        env = {"tb": tb, "np": np, "math": math, "scenes": scenes, "tmp": Path(d), "w": w, "b": b, "s": s, "j": j}
        *setup, last = [part.strip() for part in code.split("; ")]
        for stmt in setup:
            exec(stmt, env)
        before = fingerprint(w)
        try:
            exec(last, env)
        except Exception as e:      # the catalogue records whatever is raised
            return e, w, before
    return None, w, before


def table() -> str:
    """The catalogue as markdown (``docs/bad_input.md``)."""
    lines = ["# Bad input: what every kind of mistake gets", "",
             "Generated by `python tests/bad_input_catalogue.py` from the cases in `tests/bad_input_catalogue.py`;",
             "`tests/unit/test_bad_input_catalogue.py` runs each of them on every CI run: each raises a subclass",
             "of `tumble.TumbleError` with a message naming what is wrong, and a rejected call changes nothing",
             "(the world's state hash, bodies, joints, settings, forces and queues are as before it).",
             "In the code, `w` is a world with a ground (body 0), a box `b` (body 1, \"crate\"), a ball `s`",
             "(body 2, \"ball\") and a hinge `j` between them, stepped once; `tmp` is an empty folder.", "",
             f"{len(CASES)} cases.", ""]
    area = None
    for a, code in CASES:
        if a != area:
            lines += ["", f"## {a}", "", "| code | error | message |", "|---|---|---|"]
            area = a
        e, _w, _before = run_case(code)
        err = type(e).__name__ if e is not None else "**none**"
        msg = str(e).replace("|", "\\|").replace("\n", " ") if e is not None else ""
        msg = msg.replace(str(Path(tempfile.gettempdir())), "/tmp")
        import re

        msg = re.sub(r"/tmp/tmp[\w]+", "tmp", msg)
        code_cell = code.replace("|", "\\|")
        lines.append(f"| `{code_cell}` | {err} | {msg} |")
    return "\n".join(lines) + "\n"


DOC = Path(__file__).resolve().parent.parent / "docs" / "bad_input.md"

if __name__ == "__main__":
    DOC.write_text(table())
    print(f"wrote {DOC}", file=sys.stderr)
