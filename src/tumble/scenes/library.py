"""The scene library: named builders that return a :class:`SceneSpec`.

Every builder is a plain function of keyword parameters with defaults; ``@scene`` registers it under
a name with a one-line description, and the registry (``tumble.scenes.names()/spec()/build()``)
reads the parameter names and defaults from the function signature.

Body tags used here (``BodySpec.tag``):

* ``"ground"`` -- the fixed ground plane (z = 0, normal +z);
* ``"wall"``   -- other fixed bodies (the walls of the pile container);
* ``"stack"``  -- the bodies whose alignment is judged by ``SceneMetrics`` (drift, standing);
* ``"pile"``   -- loose bodies dropped into a container;
* ``"projectile"`` -- bodies thrown at a scene (none of the scenes below yet).

All scenes are inelastic (restitution 0 for every material), so energy can only be lost.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tumble.errors import SceneError
from tumble.materials import Material
from tumble.scenes.spec import SceneSpec
from tumble.shapes import Box, Plane, Sphere


@dataclass(frozen=True)
class SceneEntry:
    """One registered scene: its builder, description and default parameters."""

    name: str
    description: str
    builder: Callable[..., SceneSpec]
    defaults: dict


REGISTRY: dict[str, SceneEntry] = {}


def scene(name: str, description: str):
    """Decorator registering ``fn(**params) -> SceneSpec`` as scene ``name``."""

    def deco(fn):
        sig = inspect.signature(fn)
        defaults = {}
        for p in sig.parameters.values():
            if p.default is inspect.Parameter.empty or p.kind is not inspect.Parameter.KEYWORD_ONLY:
                raise TypeError(f"scene {name!r}: parameter {p.name!r} must be keyword-only with a default")
            defaults[p.name] = p.default
        REGISTRY[name] = SceneEntry(name, description, fn, defaults)
        return fn

    return deco


def entry(name: str) -> SceneEntry:
    """The registry entry of ``name``; ``SceneError`` naming the known scenes otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise SceneError(f"unknown scene {name!r}; known scenes: {known}") from None


def make(name: str, **params) -> SceneSpec:
    """Build the spec of scene ``name`` with ``params`` overriding its defaults."""
    e = entry(name)
    bad = sorted(set(params) - set(e.defaults))
    if bad:
        raise SceneError(f"scene {name!r}: unknown parameter(s) {', '.join(map(repr, bad))}; "
                         f"known parameters: {', '.join(sorted(e.defaults)) or '(none)'}")
    merged = dict(e.defaults)
    merged.update(params)
    s = e.builder(**merged)
    s.name = name
    s.description = e.description
    s.params = merged
    return s


# ----------------------------------------------------------------------------------------------
# helpers

def _ground(s: SceneSpec, material: Material) -> int:
    """The ground: a fixed plane through the origin with normal +z, tagged ``"ground"``."""
    return s.add(Plane((0.0, 0.0, 1.0)), (0.0, 0.0, 0.0), fixed=True, material=material, name="ground",
                 tag="ground")


# ----------------------------------------------------------------------------------------------
# Catto (001) section 9, Table 1, converted to SI.
#
# The paper's game units: 1 length unit = 3.5 mm and 1 time unit = 1/30 s, so
#   box 200 x 200 x 100 units   -> 0.70 x 0.70 x 0.35 m (half extents 0.35, 0.35, 0.175)
#   density 0.0000275 / unit^3  -> mass 0.0000275 * 4e6 = 110 kg per box (641.4 kg/m^3)
#   gravity 3 units / tu^2      -> 3 * 0.0035 * 30^2 = 9.45 m/s^2
#   time step 0.5 tu            -> 1/60 s
#   beta 0.1 per tu             -> beta * dt = 0.05 (fraction of penetration removed per step)
#   mu 0.2, 10 PGS iterations, initial separation 10 units -> 3.5 cm

T1_HALF = (0.35, 0.35, 0.175)
T1_MASS = 110.0
T1_GRAVITY = (0.0, 0.0, -9.45)
T1_DT = 1.0 / 60.0
T1_GAP = 0.035
T1_MATERIAL = Material(density=T1_MASS / (8.0 * T1_HALF[0] * T1_HALF[1] * T1_HALF[2]), friction=0.2,
                       restitution=0.0, name="catto-table1")


def _table1_stack(masses: list[float], warm_start: bool, seconds: float, gap: float = T1_GAP) -> SceneSpec:
    """Boxes of Table 1 stacked bottom-up with ``masses``; each starts ``gap`` above the one below.

    The solver settings are Catto's model: fixed friction bound mu m_c g (001 eq. 24-25) and no
    inertial torque (001 §5 neglects w x I w), with a 1 mm slop (uneven sinking inside a 5 mm slop
    tilts each 0.7 m interface enough to topple ten boxes in 2 of 3 perturbed starts).
    """
    if not (math.isfinite(gap) and gap >= 0.0):
        raise SceneError(f"parameter gap={gap!r} must be a finite number >= 0 [m]")
    s = SceneSpec(name="", gravity=T1_GRAVITY, dt=T1_DT, seconds=float(seconds),
                  settings={"iterations": 10, "baumgarte": 0.05, "warm_start": bool(warm_start),
                            "slop": 0.001, "friction_model": "fixed", "gyroscopic": False})
    _ground(s, T1_MATERIAL)
    hz = T1_HALF[2]
    bottom = gap
    for i, m in enumerate(masses):
        s.add(Box(T1_HALF), (0.0, 0.0, bottom + hz), mass=float(m), material=T1_MATERIAL,
              name=f"box{i}", tag="stack")
        bottom += 2.0 * hz + gap
    return s


@scene("stack10", "Catto 001 Table 1: ten 110 kg boxes (0.7x0.7x0.35 m) stacked, mu 0.2, contact caching")
def stack10(*, count: int = 10, seconds: float = 60.0, warm_start: bool = True, gap: float = T1_GAP) -> SceneSpec:
    if int(count) < 1:
        raise SceneError(f"scene 'stack10': parameter count={count!r} must be >= 1")
    return _table1_stack([T1_MASS] * int(count), warm_start, seconds, float(gap))


@scene("stack3_nocache", "Catto 001 Fig. 5: three Table 1 boxes without contact caching (expected to fall)")
def stack3_nocache(*, count: int = 3, seconds: float = 60.0, warm_start: bool = False,
                   gap: float = T1_GAP) -> SceneSpec:
    if int(count) < 1:
        raise SceneError(f"scene 'stack3_nocache': parameter count={count!r} must be >= 1")
    return _table1_stack([T1_MASS] * int(count), warm_start, seconds, float(gap))


@scene("mass_ratio", "Catto 001 9.2: two Table 1 boxes, the bottom one's density scaled by ratio")
def mass_ratio(*, ratio: float = 0.03, warm_start: bool = True, heavy_on_top: bool = True,
               seconds: float = 20.0, gap: float = T1_GAP) -> SceneSpec:
    """Two boxes; the heavy one has 110 kg and the light one ``ratio`` * 110 kg.

    ``heavy_on_top=True`` (the paper's failing case): light bottom, heavy top.
    ``heavy_on_top=False``: heavy bottom, light top (the paper: always stable).
    """
    r = float(ratio)
    if not (math.isfinite(r) and r > 0.0):
        raise SceneError(f"scene 'mass_ratio': parameter ratio={ratio!r} must be a finite positive number")
    light, heavy = T1_MASS * r, T1_MASS
    masses = [light, heavy] if heavy_on_top else [heavy, light]
    return _table1_stack(masses, warm_start, seconds, float(gap))


# ----------------------------------------------------------------------------------------------
# Benchmark scenes

#: Horizontal gap [m] between neighbouring cubes of a pyramid row (1 % of the cube). Rows rest
#: exactly on each other (vertical gap 0) so a pyramid starts at rest, touching but not overlapping.
PYRAMID_GAP = 0.01
PYRAMID_MATERIAL = Material(density=1000.0, friction=0.6, restitution=0.0, name="pyramid")


def _pyramid(base: int, density: float, friction: float, seconds: float, iterations: int) -> SceneSpec:
    """A planar pyramid of unit cubes in the x-z plane (y = 0).

    Row ``r`` (0 = bottom) holds ``base - r`` cubes centred on x = 0 with centre spacing
    ``1 + PYRAMID_GAP``, so each row is offset by half a cube from the one below; the cubes of row
    ``r`` have their centre at z = 0.5 + r (resting exactly on the row below / the ground).
    """
    if int(base) < 1:
        raise SceneError(f"pyramid: parameter base={base!r} must be >= 1")
    mat = PYRAMID_MATERIAL.with_(density=float(density), friction=float(friction))
    s = SceneSpec(name="", gravity=(0.0, 0.0, -9.81), dt=1.0 / 60.0, seconds=float(seconds),
                  settings={"iterations": int(iterations), "warm_start": True})
    _ground(s, mat)
    cube = Box((0.5, 0.5, 0.5))
    pitch = 1.0 + PYRAMID_GAP
    for r in range(int(base)):
        n = int(base) - r
        for i in range(n):
            x = (i - 0.5 * (n - 1)) * pitch
            s.add(cube, (x, 0.0, 0.5 + r), density=float(density), material=mat, name=f"cube{r}_{i}",
                  tag="stack")
    return s


@scene("pyramid20", "planar pyramid of 210 unit cubes (base 20), 1000 kg/m^3, mu 0.6, dt 1/60, 10 iterations")
def pyramid20(*, base: int = 20, density: float = 1000.0, friction: float = 0.6, seconds: float = 5.0,
              iterations: int = 10) -> SceneSpec:
    return _pyramid(base, density, friction, seconds, iterations)


@scene("large_pyramid", "Box3D-style large planar pyramid: base 100, 5050 unit cubes, density 100, dt 1/60")
def large_pyramid(*, base: int = 100, density: float = 100.0, friction: float = 0.6, seconds: float = 5.0,
                  iterations: int = 10) -> SceneSpec:
    return _pyramid(base, density, friction, seconds, iterations)


#: Brick of the wall scene: 0.2 x 0.1 x 0.1 m, long axis along x, 2000 kg/m^3 (4 kg, clay brick).
BRICK_HALF = (0.1, 0.05, 0.05)
#: Gap [m] between the ends of neighbouring bricks in a course (1 % of the brick length).
WALL_GAP = 0.002
WALL_MATERIAL = Material(density=2000.0, friction=0.6, restitution=0.0, name="brick")


@scene("wall200", "running-bond wall: 20 courses of bricks 0.2x0.1x0.1 m (half bricks at the ends of odd courses), "
                  "mu 0.6, dt 1/60")
def wall200(*, rows: int = 20, columns: int = 10, friction: float = 0.6, density: float = 2000.0,
            seconds: float = 5.0, iterations: int = 10) -> SceneSpec:
    """Course ``r`` (0 = bottom) has its brick centres at z = 0.05 + 0.1 r (courses rest exactly on
    each other). Even courses hold ``columns`` full bricks at x = (i - (columns - 1) / 2) * pitch,
    pitch = 0.2 + gap. Odd courses are shifted by half a brick (running bond): ``columns - 1`` full
    bricks at x = (i - (columns - 2) / 2) * pitch and a closing half brick at each end, flush with
    the even courses, as a mason lays it. (A wall of equal courses shifted by half a pitch puts the
    centre of every odd course's last brick 1 mm beyond the edge of the course below: it topples in
    every engine, which is the physics, not the solver.) Default: 190 full + 20 half bricks = 200
    bricks' worth, 210 bodies."""
    if int(rows) < 1 or int(columns) < 2:
        raise SceneError(f"scene 'wall200': parameters rows={rows!r} must be >= 1, columns={columns!r} >= 2")
    mat = WALL_MATERIAL.with_(density=float(density), friction=float(friction))
    s = SceneSpec(name="", gravity=(0.0, 0.0, -9.81), dt=1.0 / 60.0, seconds=float(seconds),
                  settings={"iterations": int(iterations), "warm_start": True})
    _ground(s, mat)
    brick = Box(BRICK_HALF)
    hx, hy, hz = BRICK_HALF
    pitch = 2.0 * hx + WALL_GAP
    cols = int(columns)
    # the closing half brick spans from one gap past the last full brick to the even course's end
    inner = (0.5 * (cols - 2)) * pitch + hx + WALL_GAP
    outer = 0.5 * (cols * pitch - WALL_GAP)
    half = Box((0.5 * (outer - inner), hy, hz))
    for r in range(int(rows)):
        z = hz + 2.0 * hz * r
        if r % 2 == 0:
            for i in range(cols):
                s.add(brick, ((i - 0.5 * (cols - 1)) * pitch, 0.0, z), density=float(density), material=mat,
                      name=f"brick{r}_{i}", tag="stack")
            continue
        s.add(half, (-0.5 * (inner + outer), 0.0, z), density=float(density), material=mat,
              name=f"brick{r}_left", tag="stack")
        for i in range(cols - 1):
            s.add(brick, ((i - 0.5 * (cols - 2)) * pitch, 0.0, z), density=float(density), material=mat,
                  name=f"brick{r}_{i}", tag="stack")
        s.add(half, (0.5 * (inner + outer), 0.0, z), density=float(density), material=mat,
              name=f"brick{r}_right", tag="stack")
    return s


#: Pile container: interior 2 x 2 m (x, y in [-1, 1]), walls 0.1 m thick and 2 m high.
PILE_HALF_WIDTH = 1.0
PILE_WALL_THICKNESS = 0.1
PILE_WALL_HEIGHT = 2.0


@scene("pile1000", "1000 spheres r 0.1 m dropped from a jittered grid into a 2x2 m open box, mu 0.5")
def pile1000(*, count: int = 1000, radius: float = 0.1, friction: float = 0.5, density: float = 1000.0,
             seed: int = 0, seconds: float = 5.0, iterations: int = 10) -> SceneSpec:
    """Spheres start on a grid of 9 x 9 per layer (for r = 0.1: pitch 2r + 1 cm = 0.21 m in x and y,
    2r + 5 cm = 0.25 m in z, the lowest layer's centres at z = 0.5 m, 13 layers, the top one partial),
    each jittered by a uniform +-4 mm in x, y and z (``seed``), so no two spheres touch (the closest
    gap is >= 2 mm). The grid is centred in the container. Walls are
    fixed boxes standing on the ground: the +-x walls span y in [-1, 1], the +-y walls span
    x in [-1.1, 1.1], so they meet at the corners without overlapping."""
    n = int(count)
    r = float(radius)
    if n < 1 or not (r > 0.0):
        raise SceneError(f"scene 'pile1000': parameters count={count!r}, radius={radius!r} must be positive")
    mat = Material(density=float(density), friction=float(friction), restitution=0.0, name="pile")
    s = SceneSpec(name="", gravity=(0.0, 0.0, -9.81), dt=1.0 / 60.0, seconds=float(seconds),
                  settings={"iterations": int(iterations), "warm_start": True})
    _ground(s, mat)
    a, t, h = PILE_HALF_WIDTH, PILE_WALL_THICKNESS, PILE_WALL_HEIGHT
    x_wall = Box((0.5 * t, a, 0.5 * h))
    y_wall = Box((a + t, 0.5 * t, 0.5 * h))
    for sx in (-1.0, 1.0):
        s.add(x_wall, (sx * (a + 0.5 * t), 0.0, 0.5 * h), fixed=True, material=mat,
              name=f"wall{'-+'[sx > 0]}x", tag="wall")
    for sy in (-1.0, 1.0):
        s.add(y_wall, (0.0, sy * (a + 0.5 * t), 0.5 * h), fixed=True, material=mat,
              name=f"wall{'-+'[sy > 0]}y", tag="wall")
    jitter = 0.004                      # [m] uniform +- per axis
    pitch_xy = 2.0 * r + 0.01           # 1 cm nominal gap -> >= 2 mm after jitter
    pitch_z = 2.0 * r + 0.05
    per_row = max(1, int(math.floor((2.0 * (a - r) - 2.0 * jitter) / pitch_xy)) + 1)
    rng = np.random.default_rng(int(seed))
    sphere = Sphere(r)
    for k in range(n):
        layer, rem = divmod(k, per_row * per_row)
        iy, ix = divmod(rem, per_row)
        p = np.array([(ix - 0.5 * (per_row - 1)) * pitch_xy, (iy - 0.5 * (per_row - 1)) * pitch_xy,
                      0.5 + layer * pitch_z])
        p += rng.uniform(-jitter, jitter, 3)
        s.add(sphere, p, density=float(density), material=mat, name=f"sphere{k}", tag="pile")
    return s
