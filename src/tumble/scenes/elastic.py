"""Elastic scenes (paper 003): soft bodies alone and together with rigid ones, in the same World.

Every scene uses SI units, gravity (0, 0, -9.81) m/s^2 and the ground plane z = 0 (tag ``"ground"``), which is
the elastic bodies' floor (003 §7.2 contact springs). Elastic bodies are ``SceneSpec.elastic`` entries
(``ElasticSpec``: a ``TetMesh`` generator and its parameters, pose, material, pinned vertices). Elastic bodies
touch each other through the events and sticky springs of ``tumble.elastic.body_contact`` (``jelly_pile``) and
rigid bodies through ``tumble.elastic.coupling`` (``jelly_stack``, ``jelly_on_boxes``).

Tags: ``"ground"`` the plane; ``"lid"`` rigid boards lying on jelly; ``"support"`` fixed boxes under jelly.
"""

from __future__ import annotations

import math

import numpy as np

from tumble.elastic.material import ElasticMaterial
from tumble.elastic.mesh import TetMesh
from tumble.errors import SceneError
from tumble.materials import Material
from tumble.scenes.library import _ground, scene
from tumble.scenes.spec import ElasticSpec, SceneSpec
from tumble.shapes import Box

GRAVITY = (0.0, 0.0, -9.81)
GROUND = Material(name="ground", friction=0.5, restitution=0.0)
#: soft rubber (benchmarks/fem.py): K = 1 MPa, mu = 0.3 MPa (Poisson ratio 0.36), light shear viscosity
RUBBER = ElasticMaterial(density=1100.0, bulk_modulus=1.0e6, shear_modulus=3.0e5, bulk_viscosity=0.0,
                         shear_viscosity=2.0)
#: jelly: water density, K = 200 kPa, mu = 60 kPa, shear viscosity 50 Pa s (settles in a fraction of a second)
JELLY = ElasticMaterial(density=1000.0, bulk_modulus=2.0e5, shear_modulus=6.0e4, bulk_viscosity=0.0,
                        shear_viscosity=50.0)


def _quat_x(angle: float) -> tuple:
    """Rotation by ``angle`` [rad] about +x as a quaternion (w, x, y, z)."""
    return (math.cos(0.5 * angle), math.sin(0.5 * angle), 0.0, 0.0)


def _positive(name: str, **values) -> None:
    for key, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise SceneError(f"scene {name!r}: parameter {key}={v!r} must be a finite number > 0")


@scene("rubber_cylinders", "003 §9: two soft rubber cylinders (462 tets, 192 vertices) dropped on a hard floor")
def rubber_cylinders(*, seconds: float = 1.0, radius: float = 0.05, height: float = 0.15) -> SceneSpec:
    """One cylinder lying (axis along y, 2 cm above the floor, spinning at 1 rad/s about z), one standing
    tilted 20 degrees about x (4 cm up); 96 vertices and 231 tets each (the paper: 462 tets, 191 vertices)."""
    _positive("rubber_cylinders", seconds=seconds, radius=radius, height=height)
    spec = SceneSpec(name="", gravity=GRAVITY, dt=1.0 / 100.0, seconds=float(seconds))
    _ground(spec, GROUND)
    mesh = {"radius": float(radius), "height": float(height), "segments": 11, "rings": 1, "layers": 7}
    # TetMesh.cylinder is centred on its origin (axis z); turned -90 degrees about x its axis is +y
    spec.elastic.append(ElasticSpec("cylinder", mesh, position=(-0.15, 0.0, radius + 0.02),
                                    orientation=_quat_x(-0.5 * math.pi), angular_velocity=(0.0, 0.0, 1.0),
                                    material=RUBBER, name="lying"))
    tilt = math.radians(20.0)
    lowest = 0.5 * height * math.cos(tilt) + radius * math.sin(tilt)   # centre height above the lowest point
    spec.elastic.append(ElasticSpec("cylinder", mesh, position=(0.15, 0.0, 0.04 + lowest),
                                    orientation=_quat_x(tilt), material=RUBBER, name="standing"))
    return spec


@scene("beam_sag", "003: a soft cantilever beam pinned at one end sags under gravity")
def beam_sag(*, seconds: float = 2.0, length: float = 0.4, thickness: float = 0.05,
             shear_modulus: float = 2.0e5) -> SceneSpec:
    _positive("beam_sag", seconds=seconds, length=length, thickness=thickness, shear_modulus=shear_modulus)
    spec = SceneSpec(name="", gravity=GRAVITY, dt=1.0 / 60.0, seconds=float(seconds))
    _ground(spec, GROUND)
    params = {"length": float(length), "width": float(thickness), "height": float(thickness),
              "divisions": (8, 1, 1)}
    mesh = TetMesh.beam(**params)
    root = np.flatnonzero(mesh.vertices[:, 0] <= mesh.vertices[:, 0].min() + 1e-9)
    material = ElasticMaterial(density=1000.0, bulk_modulus=2.5 * shear_modulus, shear_modulus=shear_modulus,
                               bulk_viscosity=0.0, shear_viscosity=20.0)
    spec.elastic.append(ElasticSpec("beam", params, position=(0.0, 0.0, 0.5), material=material, name="beam",
                                    pin=tuple(int(i) for i in root)))
    return spec


@scene("jelly_stack", "jelly blocks stacked with rigid boards between them, on the floor")
def jelly_stack(*, count: int = 3, seconds: float = 2.0, board_mass: float = 1.0) -> SceneSpec:
    """``count`` jelly blocks (0.2 m cubes, 2x2x2 cells) each capped by a rigid board (0.24 x 0.24 x 0.05 m);
    the boards carry each block onto the one below (elastic on elastic directly: ``jelly_pile``)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise SceneError(f"scene 'jelly_stack': parameter count={count!r} must be an integer >= 1")
    _positive("jelly_stack", seconds=seconds, board_mass=board_mass)
    spec = SceneSpec(name="", gravity=GRAVITY, dt=1.0 / 240.0, seconds=float(seconds))
    _ground(spec, GROUND)
    size, board = 0.2, 0.05
    z = 0.001
    for k in range(count):
        mesh = {"size": (size, size, size), "divisions": (2, 2, 2)}
        spec.elastic.append(ElasticSpec("box", mesh, position=(0.0, 0.0, z + 0.5 * size), material=JELLY,
                                        name=f"jelly{k}"))
        z += size + 0.002
        spec.add(Box((0.12, 0.12, 0.5 * board)), (0.0, 0.0, z + 0.5 * board), mass=float(board_mass),
                 name=f"board{k}", tag="lid")
        z += board + 0.002
    return spec


@scene("jelly_pile", "jelly cubes stacked directly on each other (elastic-elastic contact, 003 §6.3, §7.2)")
def jelly_pile(*, count: int = 3, seconds: float = 1.0, size: float = 0.1) -> SceneSpec:
    """``count`` jelly cubes (edge ``size``, 2x2x2 cells, 27 vertices, 48 tets each) dropped one on the other
    from 2 mm gaps, each shifted sideways by 10 % and 5 % of the edge against the one below so that vertices
    meet faces rather than vertices (the contact springs of ``tumble.elastic.body_contact``)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise SceneError(f"scene 'jelly_pile': parameter count={count!r} must be an integer >= 1")
    _positive("jelly_pile", seconds=seconds, size=size)
    spec = SceneSpec(name="", gravity=GRAVITY, dt=1.0 / 240.0, seconds=float(seconds))
    _ground(spec, GROUND)
    z = 0.001
    for k in range(count):
        shift = (0.1 * size * (k % 2), 0.05 * size * (k % 3))
        mesh = {"size": (size, size, size), "divisions": (2, 2, 2)}
        spec.elastic.append(ElasticSpec("box", mesh, position=(shift[0], shift[1], z + 0.5 * size),
                                        material=JELLY, name=f"jelly{k}"))
        z += size + 0.002
    return spec


@scene("jelly_on_boxes", "a jelly slab dropped across two fixed boxes, a rigid box dropped on top of it")
def jelly_on_boxes(*, seconds: float = 2.0, drop_mass: float = 1.0) -> SceneSpec:
    _positive("jelly_on_boxes", seconds=seconds, drop_mass=drop_mass)
    spec = SceneSpec(name="", gravity=GRAVITY, dt=1.0 / 240.0, seconds=float(seconds))
    _ground(spec, GROUND)
    for x in (-0.2, 0.2):
        spec.add(Box((0.08, 0.15, 0.1)), (x, 0.0, 0.1), fixed=True, name=f"support{'LR'[x > 0]}", tag="support")
    # surface vertices 5 cm apart: the coupling is vertex against geom, so a rigid corner narrower than the
    # vertex spacing could pass between the vertices (tumble.elastic.coupling)
    mesh = {"size": (0.6, 0.2, 0.06), "divisions": (12, 4, 2)}
    spec.elastic.append(ElasticSpec("box", mesh, position=(0.0, 0.0, 0.2 + 0.03 + 0.01), material=JELLY,
                                    name="slab"))
    spec.add(Box((0.06, 0.06, 0.06)), (0.0, 0.0, 0.45), mass=float(drop_mass), name="drop", tag="lid")
    return spec
