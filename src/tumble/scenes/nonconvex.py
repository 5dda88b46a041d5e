"""Non-convex bodies: the cow pile, the silo and the 3000-object pile of Erleben 000 (Figs. 1 and 15).

The paper's cows are "basically an ellipsoidal object with long thin tentacles" (000 §6), collided
through signed distance maps with sphere trees (§5). Here a non-convex body is a ``Compound`` of convex
pieces, so every solver and every narrow-phase pair of tumble handles it unchanged:

* the **cow** (``cow_mesh``): a procedural mesh generated in the repository, no download: the union
  (manifold3d, through trimesh) of an ellipsoid body, an ellipsoid head, a neck, four legs, a tail and
  two horns (capsules), 2.26 m long and 1.57 m tall, 0.507 m^3 (507 kg at 1000 kg/m^3). Its convex
  decomposition (CoACD 1.0.14, Wei et al. 2022, ``decompose``) is shipped as
  ``data/cow_hulls.npz`` (``tools/make_nonconvex_hulls.py`` writes it; ~20-50 s of CoACD on this
  2-core machine, too slow for every build) and loaded by ``cow_shape``; the hull points are stored
  with the pieces' common centre of mass at the origin, so a ``BodySpec`` position is the cow's
  centre of mass;
* the **jack**, **dumbbell** and **L-brick** (``jack``, ``dumbbell``, ``l_brick``): non-convex bodies
  whose decomposition into primitives is exact (three crossed boxes; a capsule bar with two spheres;
  two boxes), cheap enough for 3000 of them.

Why convex decomposition and not the paper's signed distance fields: measured in
``benchmarks/nonconvex.py`` (its ``sdf_estimate``: a 64^3 grid of the cow's distance, the point samples
a sphere-tree query would test per pair) against the compound; the numbers and the choice are written
in ``benchmarks/results/<machine>/nonconvex.md``.

Scenes (all dt = 0.01 s, the paper's step, 10 iterations, restitution 0):

* ``cow_pile`` (Fig. 15): ``count`` cows on a jittered grid of layers, random orientations, dropped onto
  the ground from ``drop`` m above the pile's start height;
* ``silo``: a square hopper (vertical bin over a funnel, fixed boxes) filled with spheres, boxes and jacks
  that flow out of its bottom opening onto the ground;
* ``soli3000`` (Fig. 1): 3000 non-convex bodies (jacks, dumbbells, L-bricks and, by default, 5 % small
  cows) dropped into an open box.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from tumble.errors import SceneError
from tumble.materials import Material
from tumble.scenes.library import _ground, scene
from tumble.scenes.spec import SceneSpec
from tumble.shapes import Box, Capsule, Compound, ConvexHull, Sphere

#: The paper's time step [s] (000 §5) and iteration count.
DT = 0.01
SETTINGS = {"iterations": 10}
DATA = Path(__file__).resolve().parent / "data"
COW_HULLS = DATA / "cow_hulls.npz"

#: The cow's parts [m], +x forward, +z up, hooves at z ~ 0. Ellipsoids: (centre, semi-axes); capsules:
#: (end a, end b, radius). The mesh is their union; the decomposition is of that union.
COW_ELLIPSOIDS = (((0.0, 0.0, 1.0), (0.8, 0.38, 0.38)),      # body
                  ((1.02, 0.0, 1.28), (0.26, 0.15, 0.17)))   # head
COW_CAPSULES = (((0.65, 0.0, 1.1), (0.95, 0.0, 1.3), 0.15),   # neck
                *(((0.52 * sx, 0.2 * sy, 0.95), (0.55 * sx, 0.2 * sy, 0.07), 0.07)
                  for sx in (-1.0, 1.0) for sy in (-1.0, 1.0)),  # legs
                ((-0.78, 0.0, 1.15), (-0.95, 0.0, 0.55), 0.03),  # tail: the thin "tentacle"
                *(((1.0, 0.08 * sy, 1.42), (1.0, 0.28 * sy, 1.55), 0.025) for sy in (-1.0, 1.0)))  # horns
#: Mesh resolution: icosphere subdivisions of the ellipsoids, segments of the capsules. Coarse on
#: purpose: CoACD's pieces inherit the mesh's vertices and a hull's SAT cost grows with its faces x edges.
COW_SUBDIVISIONS = 1
COW_SEGMENTS = 8
#: CoACD settings of the shipped decomposition (``threshold``: its concavity bound, relative to the
#: mesh's bounding box; the seed makes the run repeatable).
COACD_THRESHOLD = 0.05
COACD_SEED = 1

COW_MATERIAL = Material(density=1000.0, friction=0.5, restitution=0.0, name="cow")
PILE_MATERIAL = Material(density=1000.0, friction=0.5, restitution=0.0, name="nonconvex")


# ----------------------------------------------------------------------------------------------
# the cow: mesh, decomposition, shape

def cow_mesh():
    """The cow as a watertight ``trimesh.Trimesh`` (the union of ``COW_ELLIPSOIDS`` and ``COW_CAPSULES``,
    computed by manifold3d), in the frame of the part tables (hooves at z ~ 0)."""
    import trimesh

    parts = []
    for centre, axes in COW_ELLIPSOIDS:
        m = trimesh.creation.icosphere(subdivisions=COW_SUBDIVISIONS, radius=1.0)
        m.apply_scale(axes)
        m.apply_translation(centre)
        parts.append(m)
    for a, b, r in COW_CAPSULES:
        a, b = np.asarray(a, float), np.asarray(b, float)
        d = b - a
        length = float(np.linalg.norm(d))
        m = trimesh.creation.capsule(height=length, radius=r, count=(COW_SEGMENTS, COW_SEGMENTS))
        m.apply_transform(trimesh.geometry.align_vectors([0.0, 0.0, 1.0], d / length))
        m.apply_translation(0.5 * (a + b) - m.bounds.mean(axis=0))  # the capsule is symmetric about its centre
        parts.append(m)
    union = trimesh.boolean.union(parts, engine="manifold")
    if not union.is_watertight:  # pragma: no cover - manifold3d always returns a manifold
        raise SceneError("cow_mesh: the union of the cow's parts is not watertight")
    return union


def decompose(mesh, threshold: float = COACD_THRESHOLD, seed: int = COACD_SEED) -> list[np.ndarray]:
    """CoACD's convex decomposition of ``mesh`` (a watertight trimesh): the vertex array (k, 3) of each
    convex piece, in the mesh frame."""
    import coacd

    coacd.set_log_level("error")
    parts = coacd.run_coacd(coacd.Mesh(np.asarray(mesh.vertices), np.asarray(mesh.faces)),
                            threshold=float(threshold), seed=int(seed))
    return [np.asarray(v, dtype=np.float64) for v, _f in parts]


def pack_hulls(pieces: list[np.ndarray]) -> dict:
    """The arrays of a hull file: ``points`` (all pieces' vertices, shifted so that the pieces' common
    centre of mass is the origin), ``counts`` (vertices per piece), ``offset`` (the shift [m])."""
    shapes = [ConvexHull(p) for p in pieces]
    vol = sum(s.data.volume for s in shapes)
    com = sum(s.data.volume * s.centroid for s in shapes) / vol
    return {"points": np.concatenate(pieces) - com, "counts": np.array([len(p) for p in pieces], np.int64),
            "offset": -com}


def load_hulls(path: Path = COW_HULLS) -> list[np.ndarray]:
    """The pieces of a hull file written by ``pack_hulls`` (``tools/make_nonconvex_hulls.py``)."""
    with np.load(path) as f:
        points, counts = f["points"], f["counts"]
    return np.split(points, np.cumsum(counts)[:-1])


@functools.lru_cache(maxsize=16)
def cow_shape(scale: float = 1.0) -> Compound:
    """The cow: a ``Compound`` of the shipped CoACD hulls scaled by ``scale``, centre of mass at the
    origin. Cached per scale: one Qhull build per piece, shared by every cow body."""
    return Compound([(ConvexHull(p * float(scale)), (0.0, 0.0, 0.0)) for p in load_hulls()])


# ----------------------------------------------------------------------------------------------
# exact decompositions into primitives

def jack(size: float) -> Compound:
    """Three crossed boxes, each 2 ``size`` long and ``size`` / 2.5 thick (a six-armed jack)."""
    t = size / 5.0
    return Compound([Box((size, t, t)), Box((t, size, t)), Box((t, t, size))])


def dumbbell(size: float) -> Compound:
    """A capsule bar (radius ``size`` / 5, half length 0.6 ``size``) with a sphere of radius ``size`` / 2.5
    at each end."""
    r = size / 2.5
    return Compound([(Capsule(size / 5.0, 0.6 * size), (0.0, 0.0, 0.0)),
                     (Sphere(r), (0.0, 0.0, 0.6 * size + 0.5 * r)), (Sphere(r), (0.0, 0.0, -0.6 * size - 0.5 * r))])


def l_brick(size: float) -> Compound:
    """An L of two boxes (legs 2 ``size`` and 1.2 ``size`` long, ``size`` / 2 thick), centroid at the origin."""
    t = size / 4.0
    parts = [(Box((size, t, t)), np.zeros(3)), (Box((t, t, 0.6 * size - t)), np.array([size - t, 0.0, 0.6 * size]))]
    com = Compound(parts).centroid  # centred: a BodySpec position is then the centre of mass (as metrics read it)
    return Compound([(b, p - com) for b, p in parts])


def _random_quat(rng: np.random.Generator) -> tuple:
    """A uniformly random unit quaternion (w, x, y, z) (Shoemake's method)."""
    u1, u2, u3 = rng.uniform(0.0, 1.0, 3)
    a, b = math.sqrt(1.0 - u1), math.sqrt(u1)
    return (a * math.sin(2 * math.pi * u2), a * math.cos(2 * math.pi * u2), b * math.sin(2 * math.pi * u3),
            b * math.cos(2 * math.pi * u3))


def _check(name: str, **params) -> None:
    for k, v in params.items():
        if not (isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(float(v)) and float(v) > 0):
            raise SceneError(f"scene {name!r}: parameter {k}={v!r} must be a finite number > 0")


def drop_pitch(shapes) -> float:
    """Grid pitch [m] at which ``_grid_drop``'s bodies cannot touch, whatever their turn and jitter:
    2 R_max + 2 cm after the +-10 % jitter, R_max the largest bounding radius about the body origin."""
    r = max(s.bounding_radius() + float(np.linalg.norm(getattr(s, "centroid", np.zeros(3)))) for s in set(shapes))
    return (2.0 * r + 0.02) / 0.8


def _grid_drop(s: SceneSpec, shapes: list, pitch: float, per_row: int, z0: float, rng: np.random.Generator,
               material: Material, names: list[str]) -> None:
    """Add ``shapes`` on a grid of ``per_row`` x ``per_row`` per layer (centre spacing ``pitch`` in x, y
    and z, the lowest layer at z = ``z0``), each turned at random and jittered in x and y by +-10 % of the
    pitch (so ``pitch = drop_pitch(shapes)`` keeps them apart)."""
    free = 0.1 * pitch
    for k, (shape, name) in enumerate(zip(shapes, names)):
        layer, rem = divmod(k, per_row * per_row)
        iy, ix = divmod(rem, per_row)
        p = np.array([(ix - 0.5 * (per_row - 1)) * pitch, (iy - 0.5 * (per_row - 1)) * pitch, z0 + layer * pitch])
        p[:2] += rng.uniform(-free, free, 2)
        s.add(shape, p, orientation=_random_quat(rng), material=material, name=name, tag="pile")


def _open_box(s: SceneSpec, half_width: float, height: float, material: Material, thickness: float = 0.1) -> None:
    """Four fixed walls around x, y in [-half_width, half_width], standing on the ground."""
    a, t, h = half_width, thickness, height
    for sx in (-1.0, 1.0):
        s.add(Box((0.5 * t, a, 0.5 * h)), (sx * (a + 0.5 * t), 0.0, 0.5 * h), fixed=True, material=material,
              name=f"wall{'-+'[sx > 0]}x", tag="wall")
    for sy in (-1.0, 1.0):
        s.add(Box((a + t, 0.5 * t, 0.5 * h)), (0.0, sy * (a + 0.5 * t), 0.5 * h), fixed=True, material=material,
              name=f"wall{'-+'[sy > 0]}y", tag="wall")


# ----------------------------------------------------------------------------------------------
# scenes

@scene("cow_pile", "Erleben 000 Fig. 15: procedural cows (CoACD hulls) dropped onto the ground into a pile, dt 0.01")
def cow_pile(*, count: int = 250, per_row: int = 5, drop: float = 0.0, friction: float = 0.5,
             density: float = 1000.0, seed: int = 0, seconds: float = 5.0) -> SceneSpec:
    """Cows on a grid of ``per_row`` x ``per_row`` per layer, layers above each other, ``drop_pitch`` apart
    (3.24 m: no two overlap whatever their turn), the lowest at half a pitch + ``drop`` above the ground,
    each turned at random (``seed``). The paper dropped 250 cows "from several hundred meters"; ``drop`` adds height."""
    _check("cow_pile", count=count, per_row=per_row, friction=friction, density=density, seconds=seconds)
    if not (math.isfinite(float(drop)) and float(drop) >= 0.0):
        raise SceneError(f"scene 'cow_pile': parameter drop={drop!r} must be a finite number >= 0 [m]")
    mat = COW_MATERIAL.with_(density=float(density), friction=float(friction))
    s = SceneSpec(name="", dt=DT, seconds=float(seconds), settings=dict(SETTINGS))
    _ground(s, mat)
    cow = cow_shape()
    n = int(count)
    pitch = drop_pitch([cow])
    _grid_drop(s, [cow] * n, pitch, int(per_row), 0.5 * pitch + float(drop), np.random.default_rng(int(seed)), mat,
               [f"cow{k}" for k in range(n)])
    return s


#: Silo: a square bin of inner half width ``SILO_HALF`` [m] from z = ``SILO_NECK`` to ``SILO_TOP`` over a
#: funnel narrowing to an opening of half width ``opening`` at z = ``SILO_OUTLET``.
SILO_HALF = 1.0
SILO_OUTLET = 1.5
SILO_NECK = 3.0
SILO_TOP = 6.0
SILO_WALL = 0.06  # [m] half thickness of the walls


@scene("silo", "Erleben 000 §5 silo: spheres, boxes and jacks flow out of a hopper's bottom opening onto the ground")
def silo(*, count: int = 400, opening: float = 0.35, size: float = 0.1, friction: float = 0.4,
         density: float = 1000.0, seed: int = 0, seconds: float = 5.0) -> SceneSpec:
    """The funnel's four walls are fixed boxes tilted by atan((SILO_HALF - opening) / (neck - outlet)) from
    the vertical (23.4 degrees for the defaults), each as wide as the bin so neighbours overlap at the
    corners (fixed bodies do not collide with each other); the bin's walls stand on the funnel's top.
    Bodies (spheres radius ``size``, cubes half ``size``, jacks of arm ``1.3 size``, in turn) start on a
    grid inside the bin and fall through the opening."""
    _check("silo", count=count, opening=opening, size=size, friction=friction, density=density, seconds=seconds)
    a, h = float(opening), float(size)
    if not a < SILO_HALF - 2 * SILO_WALL:
        raise SceneError(f"scene 'silo': parameter opening={opening!r} must be < {SILO_HALF - 2 * SILO_WALL} m")
    mat = PILE_MATERIAL.with_(density=float(density), friction=float(friction))
    s = SceneSpec(name="", dt=DT, seconds=float(seconds), settings=dict(SETTINGS))
    _ground(s, mat)
    run, rise = SILO_HALF - a, SILO_NECK - SILO_OUTLET
    tilt = math.atan2(run, rise)  # from the vertical
    half_len = 0.5 * math.hypot(run, rise)
    ext = 2.0 * SILO_WALL  # the funnel walls reach this far [m] past the neck along the slope, under the bin's
    wall = Box((SILO_WALL, SILO_HALF + 2 * SILO_WALL, half_len + 0.5 * ext))
    # the +x wall: turned by +tilt about y (its long axis leans outwards at the top), centred so that its
    # inner face (normal (-cos, 0, sin)) runs through the rim points (opening, outlet) and (SILO_HALF, neck)
    cx = 0.5 * (SILO_HALF + a) + SILO_WALL * math.cos(tilt) + 0.5 * ext * math.sin(tilt)
    cz = 0.5 * (SILO_NECK + SILO_OUTLET) - SILO_WALL * math.sin(tilt) + 0.5 * ext * math.cos(tilt)
    sy, cy = math.sin(0.5 * tilt), math.cos(0.5 * tilt)
    for k in range(4):
        yaw = 0.5 * math.pi * k
        sz, cz_ = math.sin(0.5 * yaw), math.cos(0.5 * yaw)
        q = (cz_ * cy, -sz * sy, cz_ * sy, sz * cy)  # q_z(yaw) * q_y(tilt)
        s.add(wall, (cx * math.cos(yaw), cx * math.sin(yaw), cz), orientation=q, fixed=True, material=mat,
              name=f"funnel{k}", tag="wall")
    n = int(count)
    kinds = (Sphere(h), Box((h, h, h)), jack(1.3 * h))
    pitch = drop_pitch(kinds)
    per_row = max(1, int((2.0 * SILO_HALF - pitch) / pitch) + 1)
    layers = -(-n // (per_row * per_row))
    top = max(SILO_TOP, SILO_NECK + (layers + 1) * pitch)
    bin_h = 0.5 * (top - SILO_NECK)
    for sx in (-1.0, 1.0):
        s.add(Box((SILO_WALL, SILO_HALF + 2 * SILO_WALL, bin_h)),
              (sx * (SILO_HALF + SILO_WALL), 0.0, SILO_NECK + bin_h), fixed=True, material=mat,
              name=f"bin{'-+'[sx > 0]}x", tag="wall")
        s.add(Box((SILO_HALF, SILO_WALL, bin_h)), (0.0, sx * (SILO_HALF + SILO_WALL), SILO_NECK + bin_h),
              fixed=True, material=mat, name=f"bin{'-+'[sx > 0]}y", tag="wall")
    _grid_drop(s, [kinds[k % 3] for k in range(n)], pitch, per_row, SILO_NECK + 0.5 * pitch,
               np.random.default_rng(int(seed)), mat, [f"{('sphere', 'box', 'jack')[k % 3]}{k}" for k in range(n)])
    return s


@scene("soli3000", "Erleben 000 Fig. 1: 3000 non-convex bodies (jacks, dumbbells, L-bricks, small cows) into a box")
def soli3000(*, count: int = 3000, size: float = 0.1, cow_fraction: float = 0.05, half_width: float = 2.0,
             friction: float = 0.5, density: float = 1000.0, seed: int = 0, seconds: float = 5.0) -> SceneSpec:
    """Bodies in turn: jack (arm ``size``), dumbbell, L-brick, and every 1 / ``cow_fraction``-th body a cow
    scaled to the same ~2 ``size`` length, on a ``drop_pitch`` grid inside an open box of inner half width
    ``half_width`` m (walls 3 m high), the lowest layer half a pitch above the ground."""
    _check("soli3000", count=count, size=size, half_width=half_width, friction=friction, density=density,
           seconds=seconds)
    if not (math.isfinite(float(cow_fraction)) and 0.0 <= float(cow_fraction) <= 1.0):
        raise SceneError(f"scene 'soli3000': parameter cow_fraction={cow_fraction!r} must be in [0, 1]")
    mat = PILE_MATERIAL.with_(density=float(density), friction=float(friction))
    s = SceneSpec(name="", dt=DT, seconds=float(seconds), settings=dict(SETTINGS))
    _ground(s, mat)
    _open_box(s, float(half_width), 3.0, mat)
    h = float(size)
    cow = cow_shape(round(2.0 * h / 2.26, 12)) if float(cow_fraction) > 0 else None
    kinds = (jack(h), dumbbell(h), l_brick(h))
    every = int(round(1.0 / float(cow_fraction))) if float(cow_fraction) > 0 else 0
    shapes, names = [], []
    for k in range(int(count)):
        if every and k % every == every - 1:
            shapes.append(cow)
            names.append(f"cow{k}")
        else:
            shapes.append(kinds[k % 3])
            names.append(f"{('jack', 'dumbbell', 'lbrick')[k % 3]}{k}")
    pitch = drop_pitch(shapes)
    per_row = max(1, int((2.0 * float(half_width) - pitch) / pitch) + 1)
    _grid_drop(s, shapes, pitch, per_row, 0.5 * pitch, np.random.default_rng(int(seed)), mat, names)
    return s
