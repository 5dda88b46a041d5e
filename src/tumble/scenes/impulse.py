"""Benchmark scenes of the impulse-based thesis (paper 004: F. Schornbaum, "A Real-time Capable
Impulse-based Collision Response Algorithm for Rigid Body Dynamics", Erlangen 2010), chapter 5.

Common setup (004 §5, §5.1 "high performance solver settings"): SI units, z up, gravity
g = (0, 0, -10) m/s^2, 240 time steps per second (dt = 1/240 s; the thesis writes its state every
8 steps = 33 1/3 ms, one "simulation step"), coefficient of restitution 0.25 for every contact, and
the ground is always granite. Materials are the presets of ``tumble.materials``: ``OAK`` (800
kg/m^3), ``IRON`` (7874), ``GRANITE`` (2800), all with restitution 0.25. Table 1 of the thesis (the
material constants) is lost in the text dump; the densities are those of the public pe release
(pe/core/Materials.h), and the friction coefficients (oak 0.5, iron 0.4, granite 0.6; a contact gets
the geometric mean, ``tumble.materials.combine_friction``) are tumble's assumptions, not the thesis's.

The scenes are data for the impulse solver still to be written; nothing solver-specific is in their
``settings`` except ``restitution_threshold`` = 4.58 cm/s, the thesis's HP value (≈ 1.1 g dt: a
resting contact's gravity-induced approach g dt = 4.17 cm/s never bounces), which the existing
``pgs`` and ``shock`` settings share, so every scene builds under every solver. The other HP
parameters of §5.1 are in :data:`THESIS_HP` for that solver to pick up.

Scenes (thesis IDs of the seed digest, §2.1):

* ``bullet_stacks`` -- E-STACK5 (Fig. 27a, 28a; 276 bodies) and, with ``stacks=8``, I-STACK8
  (Fig. 29a; 441 bodies);
* ``balls_well`` -- E-WELL324 (Fig. 27b, 28b) and, with :data:`I_WELL392`, I-WELL392 (Fig. 29b);
* ``cage`` -- E-CAGE384 (Fig. 27c, 28c) and, with :data:`I_CAGE2816`, I-CAGE2816 (Fig. 29c);
* ``newtons_cradle`` -- §5.6 (no figure): n equal balls, restitution 1;
* ``spin_down`` -- §5.6's friction claim ("friction slows the spinning until the ball stops")
  reduced to a case with a closed form: a spinning ball put down on the ground.

Tags (``BodySpec.tag``): ``"ground"`` the granite plane z = 0; ``"wall"`` other fixed bodies (well
walls, the cage's walls and ceiling); ``"stack"`` the oak boxes of the stacks (judged by
``SceneMetrics``); ``"projectile"`` the iron bullet and the pulled cradle balls; ``"ball"`` / ``"box"``
loose oak balls and boxes.

Gravity switch (cage): ``SceneSpec`` has one gravity vector, so :func:`cage` sets the final gravity
(0, 0, -10) statically (the scene runs as is, but falls from the start) and the switch is the
schedule ((0.0, (0, 0, 0)), (``gravity_time`` = 1.0, (0, 0, -10))): entry ``(t, g)`` sets the gravity
at the start of the first step whose start time is >= t - 1e-9 (the rule of ``World.spawn``).
:func:`gravity_schedule` reads it from the spec: from the field ``SceneSpec.gravity_schedule`` once
that exists (proposed patch: spec.py, world.py, scenefile.py; then ``cage`` fills it and the World
applies it by itself), and until then from the cage's parameters (``spec.params["gravity_time"]``,
which scene files keep; an extra spec attribute would make ``tumble.scenefile.to_dict`` refuse the
spec). :func:`apply_gravity_schedule` (call it before every ``world.step``) or :func:`step_scheduled`
applies it to a World meanwhile.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from tumble.errors import SceneError
from tumble.joints import Distance
from tumble.materials import GRANITE, IRON, OAK, Material
from tumble.scenes.library import _ground, scene
from tumble.scenes.params import int_params as _int
from tumble.scenes.params import num_params as _num
from tumble.scenes.spec import SceneSpec
from tumble.shapes import Box, Sphere

#: 004 §5: "gravity ... 10 m/s^2" in all benchmarks.
G = 10.0
GRAVITY = (0.0, 0.0, -G)
#: 004 §5.1: 240 time steps per simulated second (high-performance preset).
DT = 1.0 / 240.0
#: 004 §5.1: restitution threshold 4.58 cm/s (approach speeds below it do not bounce).
RESTITUTION_THRESHOLD = 0.0458
SETTINGS = {"restitution_threshold": RESTITUTION_THRESHOLD}

#: The §5.1 "high performance solver settings" (seed digest §1.15), for the impulse solver. Lengths
#: in m, speeds in m/s. The thesis quotes the penetration threshold as a positive length; the
#: algorithm uses it as a negative distance. ``*_factor``: iteration caps as multiples of the
#: number of contacts (global resolution; each shock-propagation stage). ``gravity_damping`` is the
#: share of g removed for bodies slower than ``gravity_damping_threshold`` (70 %: 0.3 g is kept).
THESIS_HP = {
    "dt": DT,
    "penetration_threshold": 0.00174,
    "sleep_threshold": 0.00833,
    "resolution_threshold": 83.4e-6,
    "max_iterations_factor": 2,
    "shock_iterations_factor": 6,
    "restitution_threshold": RESTITUTION_THRESHOLD,
    "gravity_damping": 0.7,
    "gravity_damping_threshold": 0.0833,
}
#: The §5.5 "high accuracy solver settings" (unlimited iterations, no shock propagation, no damping).
THESIS_HA = {
    "dt": 1.0 / 960.0,
    "penetration_threshold": 0.0001,
    "sleep_threshold": 0.00052,
    "resolution_threshold": 5.2e-6,
    "max_iterations_factor": None,
    "shock_iterations_factor": None,
    "restitution_threshold": 0.0115,
    "gravity_damping": 0.0,
    "gravity_damping_threshold": 0.0,
}

#: Parameters of the i7-940 versions (004 §5.1, Fig. 29): pass as ``scenes.spec(name, **I_...)``.
I_STACK8 = {"stacks": 8}
I_WELL392 = {"balls": 392, "diameter": 0.114, "height": 0.095}
I_CAGE2816 = {"balls": 1536, "boxes": 1280, "ball_diameter": 0.10, "box_size": 0.10, "cage_width": 3.31,
              "cage_height": 2.31, "per_row": 16, "pitch": 0.2}


# ----------------------------------------------------------------------------------------------
# helpers


def _spec(seconds: float, settings: dict | None = None) -> SceneSpec:
    return SceneSpec(name="", gravity=GRAVITY, dt=DT, seconds=float(seconds),
                     settings=dict(SETTINGS if settings is None else settings))


def _random_quaternion(rng: np.random.Generator) -> tuple:
    """A uniformly distributed unit quaternion (w, x, y, z): a normalised 4-D Gaussian sample."""
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    return tuple(float(x) for x in q)


def _random_vector(rng: np.random.Generator, magnitude: float) -> tuple:
    """Uniform direction on the unit sphere times a magnitude uniform in [0, ``magnitude``]."""
    d = rng.normal(size=3)
    d /= np.linalg.norm(d)
    return tuple(float(x) for x in d * rng.uniform(0.0, magnitude))


def _open_box_walls(s: SceneSpec, half_width: float, height: float, thickness: float, material: Material,
                    prefix: str) -> None:
    """Four fixed wall boxes standing on the ground around the square x, y in [-a, a] (a =
    ``half_width``), ``height`` tall and ``thickness`` thick: the +-x walls span y in [-a, a], the
    +-y walls span x in [-a - t, a + t], so they meet at the corners without overlapping."""
    a, t, h = half_width, thickness, height
    x_wall = Box((0.5 * t, a, 0.5 * h))
    y_wall = Box((a + t, 0.5 * t, 0.5 * h))
    for sx in (-1.0, 1.0):
        s.add(x_wall, (sx * (a + 0.5 * t), 0.0, 0.5 * h), fixed=True, material=material,
              name=f"{prefix}{'-+'[sx > 0]}x", tag="wall")
    for sy in (-1.0, 1.0):
        s.add(y_wall, (0.0, sy * (a + 0.5 * t), 0.5 * h), fixed=True, material=material,
              name=f"{prefix}{'-+'[sy > 0]}y", tag="wall")


# ----------------------------------------------------------------------------------------------
# gravity schedule (until SceneSpec / World carry it; see the module docstring)


#: True once ``SceneSpec`` has the ``gravity_schedule`` field of the proposed patch.
SPEC_HAS_SCHEDULE = "gravity_schedule" in {f.name for f in dataclasses.fields(SceneSpec)}


def _cage_schedule(gravity_time: float) -> list:
    """004 Fig. 27c / 28c: no gravity, then g = 10 m/s^2 from ``gravity_time`` (1 s, sim step 30) on."""
    return [(0.0, (0.0, 0.0, 0.0)), (float(gravity_time), GRAVITY)]


def gravity_schedule(spec: SceneSpec) -> list:
    """The gravity changes ``[(time [s], gravity (3,)), ...]`` of ``spec``: its ``gravity_schedule``
    field when ``SceneSpec`` has one and it is set, else, for a ``cage`` spec (from the library or a
    scene file), the switch its ``gravity_time`` parameter describes; [] otherwise."""
    sched = getattr(spec, "gravity_schedule", None)
    if sched:
        return [(float(t), tuple(float(x) for x in g)) for t, g in sched]
    if spec.name == "cage" and "gravity_time" in spec.params:
        return _cage_schedule(spec.params["gravity_time"])
    return []


def gravity_at(spec: SceneSpec, time: float) -> np.ndarray:
    """The gravity [m/s^2] of the step that starts at ``time`` [s]: the last entry ``(t, g)`` of
    :func:`gravity_schedule` with ``time >= t - 1e-9``, else ``spec.gravity``."""
    g = np.asarray(spec.gravity, dtype=float)
    for t, gv in gravity_schedule(spec):
        if time >= t - 1e-9:
            g = np.asarray(gv, dtype=float)
    return g.copy()


def apply_gravity_schedule(world) -> None:
    """Set ``world.gravity`` for the step about to start (``world.time``) from its scene's schedule.
    Call it before every ``world.step``; a world without a scene or schedule is left alone (with the
    patched World, whose ``step`` applies the schedule itself, this only repeats what it does)."""
    spec = getattr(world, "scene", None)
    if spec is None or not gravity_schedule(spec):
        return
    world.gravity = gravity_at(spec, world.time)


def step_scheduled(world, dt: float | None = None) -> None:
    """``apply_gravity_schedule(world)`` then ``world.step(dt)``."""
    apply_gravity_schedule(world)
    world.step(dt)


# ----------------------------------------------------------------------------------------------
# E-STACK5 / I-STACK8

#: Oak box of the stacks: 10 x 10 x 10 cm (004 Fig. 27a), 0.8 kg.
STACK_BOX_HALF = (0.05, 0.05, 0.05)
#: Rows of a stack: 10 + 9 + ... + 1 = 55 boxes (the triangular pyramid, see ``bullet_stacks``).
STACK_ROWS = 10
#: [m] gap between neighbouring boxes of a row (1 % of the box); rows rest exactly on each other.
STACK_GAP = 0.001
#: Iron bullet diameter 26.4 cm (004 Fig. 27a): radius 0.132 m, 7874 kg/m^3 -> 75.9 kg.
BULLET_RADIUS = 0.132


def stack_box_positions(stacks: int, spacing: float) -> np.ndarray:
    """Centres (stacks * 55, 3) of the boxes of ``bullet_stacks``: stack k is a triangular pyramid wall
    in the plane x = k * spacing; row r (0 = bottom) holds 10 - r boxes at
    y = (i - (10 - r - 1) / 2) * (0.1 + gap), z = 0.05 + 0.1 r."""
    hx, hy, hz = STACK_BOX_HALF
    pitch = 2.0 * hy + STACK_GAP
    out = []
    for k in range(int(stacks)):
        for r in range(STACK_ROWS):
            n = STACK_ROWS - r
            for i in range(n):
                out.append((k * spacing, (i - 0.5 * (n - 1)) * pitch, hz + 2.0 * hz * r))
    return np.array(out, dtype=float)


def bullet_launch(impact_time: float, speed: float, impact_height: float) -> tuple[tuple, tuple]:
    """Launch point and velocity of the bullet so that, flying ballistically under g = 10 m/s^2, its
    front (x + radius) reaches the face x = -0.05 m of the first stack at ``impact_time`` with its
    centre at height ``impact_height`` (y = 0, the middle of the wall).

    Symmetric arc (a cannon at the height of its target): z0 = impact_height and vz0 = g T / 2, so
    z(T) = z0 + vz0 T - g T^2 / 2 = z0; x0 = -0.05 - R - vx T with vx = ``speed``. The apex,
    z0 + g T^2 / 8, is reached at T / 2; the bullet arrives descending at g T / 2."""
    t, vx, zc = impact_time, speed, impact_height
    x0 = -STACK_BOX_HALF[0] - BULLET_RADIUS - vx * t
    return (x0, 0.0, zc), (vx, 0.0, 0.5 * G * t)


@scene("bullet_stacks", "Schornbaum 004 Fig. 27a: an iron bullet (26.4 cm) smashes through 5 stacks of 55 oak "
                        "10 cm boxes, e 0.25, g 10, dt 1/240")
def bullet_stacks(*, stacks: int = 5, spacing: float = 1.2, speed: float = 12.0, impact_time: float = 0.7,
                  impact_height: float = 0.35, seconds: float = 6.0) -> SceneSpec:
    """E-STACK5 (004 §5.1, Fig. 27a, Fig. 28a, Table 2; 276 bodies, 6 s) and I-STACK8 (Fig. 29a,
    Fig. 30a, Table 3; ``stacks=8``, 441 bodies, 6 s).

    Stated by the thesis: ``stacks`` stacks of 55 oak boxes 10 x 10 x 10 cm, an iron bullet of
    diameter 26.4 cm (a sphere), granite ground, the bullet "hits the first stack at ~700 ms", the
    stacks are at rest before (all bodies asleep, sim steps 0-20), the bullet smashes through all
    stacks "one after another" (steps 20-65), everything is at rest after about 4 s, and "two
    smaller stacks of boxes remain standing in the front" (Fig. 35).

    Assumed (lost in the dump):

    * Layout of a stack: a triangular pyramid *wall*, one box deep, rows of 10, 9, ..., 1 boxes
      (55 = T(10)), not a square pyramid 5x5 + 4x4 + ... + 1 (55 = P(5)). Why: the thesis's own
      pictures of a "stack" (Fig. 19, Fig. 23: three blocks at the bottom, two on them, one on top)
      are this running-bond triangle; and a bullet through the middle of such a wall leaves its two
      sides standing, which reads as the "two smaller stacks ... in the front" of Fig. 35 (under
      ``pgs`` the walls mostly collapse; what stands is up to the solver and the friction). Row r
      (0 = bottom) holds 10 - r boxes 1 mm apart, shifted half a box against the row below, resting
      exactly on it (the bottom row on the ground); the wall is 1.0 m tall and 1.009 m wide.
    * Arrangement: the walls stand in the planes x = k ``spacing`` (k = 0 .. stacks - 1, default
      1.2 m apart, more than a wall's height, so a toppling wall does not domino into the next),
      facing the bullet, which flies along +x through their middles (y = 0).
    * Bullet: a ballistic shot (:func:`bullet_launch`) whose front reaches the first wall's face at
      ``impact_time`` = 0.7 s with its centre at ``impact_height`` = 0.35 m (rows 2 to 4): launched
      from (-8.582, 0, 0.35) m with (12, 0, 3.5) m/s (horizontal ``speed`` 12 m/s, vz0 = g T / 2),
      apex 0.96 m at 0.35 s, arriving at 12.5 m/s descending at 16 degrees; 75.9 kg, 5.9 kJ,
      against 44 kg per stack. The speed is chosen so that the bullet breaks all the walls "one
      after another" within the thesis's busy phase (sim steps 20-65, 0.67-2.2 s). Measured under
      ``pgs`` (10 iterations, dt 1/240): the five walls are first disturbed at 0.73, 0.83, 1.0, 1.2
      and 1.4 s and the bullet leaves at 2.9 m/s; at 6 m/s it stalled in the rubble of the third
      wall, at 10 m/s it never reached the fifth.

    Timeline to check against (Fig. 28a): at rest until 0.7 s; walls broken one after another;
    all at rest after about 4 s. The boxes start asleep (``BodySpec.asleep``; the thesis' first 20
    simulation steps are "at rest with all bodies asleep"), so under ``impulse`` the stacks cost
    nothing until the bullet wakes them.
    """
    (n,) = _int("bullet_stacks", stacks=stacks)
    sp, vx, t_hit, zc, secs = _num("bullet_stacks", spacing=spacing, speed=speed, impact_time=impact_time,
                                   impact_height=impact_height, seconds=seconds)
    if sp <= 2.0 * STACK_BOX_HALF[0]:
        raise SceneError(f"scene 'bullet_stacks': parameter spacing={spacing!r} must be > 0.1 m (the walls "
                         "would overlap)")
    if not BULLET_RADIUS <= zc <= 2.0 * STACK_BOX_HALF[2] * STACK_ROWS:
        raise SceneError(f"scene 'bullet_stacks': parameter impact_height={impact_height!r} must be in "
                         f"[{BULLET_RADIUS}, {2.0 * STACK_BOX_HALF[2] * STACK_ROWS}] m (on the wall, above ground)")
    s = _spec(secs)
    _ground(s, GRANITE)
    box = Box(STACK_BOX_HALF)
    per = STACK_ROWS * (STACK_ROWS + 1) // 2
    for j, p in enumerate(stack_box_positions(n, sp)):
        k, m = divmod(j, per)
        # built at rest and asleep, as in the thesis ("the first 20 sim steps are at rest with all bodies
        # asleep", Fig. 28a); the other solvers ignore the flag
        s.add(box, p, density=OAK.density, material=OAK, name=f"stack{k}_box{m}", tag="stack", asleep=True)
    p0, v0 = bullet_launch(t_hit, vx, zc)
    s.add(Sphere(BULLET_RADIUS), p0, linear_velocity=v0, density=IRON.density, material=IRON, name="bullet",
          tag="projectile")
    return s


# ----------------------------------------------------------------------------------------------
# E-WELL324 / I-WELL392

#: [m] wall thickness of the well (not given; any value works, the walls are fixed).
WELL_WALL_THICKNESS = 0.1
#: [m] nominal gap between neighbouring balls of the drop grid (horizontal and vertical).
WELL_GAP = 0.02
#: [m] uniform jitter (+-) of every ball centre per axis; < WELL_GAP / 2, so no two balls touch.
WELL_JITTER = 0.004
#: [m] height of the lowest balls' bottoms above the ground: they land after sqrt(2 h / g) = 0.283 s,
#: i.e. in sim step 8-9 (004 Fig. 28b: "at simulation step 8, after about 300 ms").
WELL_DROP_HEIGHT = 0.4


def well_grid(balls: int, diameter: float, width: float) -> tuple[int, int]:
    """(balls per row, layers) of the drop grid: the largest square grid of pitch ``diameter`` + 2 cm
    inside the well's inner ``width``, and as many layers as the balls need (the top one partial)."""
    pitch = diameter + WELL_GAP
    per_row = int(math.floor(width / pitch))
    return per_row, -(-int(balls) // max(per_row * per_row, 1))


@scene("balls_well", "Schornbaum 004 Fig. 27b: 324 oak balls (13.3 cm) dropped into a granite well "
                     "1.0 x 1.0 x 0.11 m, e 0.25, g 10, dt 1/240")
def balls_well(*, balls: int = 324, diameter: float = 0.133, width: float = 1.0, height: float = 0.11,
               seed: int = 0, seconds: float = 6.0) -> SceneSpec:
    """E-WELL324 (004 §5.1, Fig. 27b, Fig. 28b, Table 2; 324 balls of 13.3 cm, well 1.0 x 1.0 x
    0.11 m, 6 s) and I-WELL392 (Fig. 29b, Fig. 30b, Table 3; ``**I_WELL392``: 392 balls of 11.4 cm,
    well 1.0 x 1.0 x 0.095 m, 6 s).

    Stated: oak balls fall into a "small well" with granite walls; the first balls hit the ground at
    sim step 8 (about 300 ms); "some of the balls pile up within the well"; the pile is at rest
    after about 4.4 s (step 132). Note the well holds far fewer balls than are dropped (0.11 m^3
    against 0.40 m^3 of balls), so most spill over the walls.

    Assumed (lost in the dump):

    * Well: ``width`` x ``width`` is the *inner* floor, ``height`` the wall height; the walls are
      fixed granite boxes 0.1 m thick standing on the granite ground (:func:`_open_box_walls`).
    * Initial positions ("not stated"): a column of balls over the well on a square grid of pitch
      d + 2 cm in x, y and z, as many per row as fit inside the well (:func:`well_grid`): 6 x 6 x 9
      layers = 324 for 13.3 cm and 7 x 7 x 8 = 392 for 11.4 cm, i.e. both thesis counts fill whole
      layers, which supports the reconstruction. The column is centred over the well, the lowest
      balls' bottoms 0.4 m above the ground (landing after 0.283 s, sim step 8.5); every centre is
      jittered by a uniform +-4 mm per axis (``seed``), so no two balls touch (gap >= 12 mm) and the
      column is not perfectly symmetric. All start at rest.
    """
    (n,) = _int("balls_well", balls=balls)
    (sd,) = _int("balls_well", lo=0, seed=seed)
    d, w, h, secs = _num("balls_well", diameter=diameter, width=width, height=height, seconds=seconds)
    r = 0.5 * d
    per_row, layers = well_grid(n, d, w)
    if per_row < 1:
        raise SceneError(f"scene 'balls_well': parameter diameter={diameter!r} leaves no room in a well of "
                         f"width={width!r} (pitch d + {WELL_GAP} m)")
    s = _spec(secs)
    _ground(s, GRANITE)
    _open_box_walls(s, 0.5 * w, h, WELL_WALL_THICKNESS, GRANITE, "well")
    pitch = d + WELL_GAP
    z0 = max(WELL_DROP_HEIGHT, h + WELL_GAP) + r
    rng = np.random.default_rng(sd)
    sphere = Sphere(r)
    for k in range(n):
        layer, rem = divmod(k, per_row * per_row)
        iy, ix = divmod(rem, per_row)
        p = np.array([(ix - 0.5 * (per_row - 1)) * pitch, (iy - 0.5 * (per_row - 1)) * pitch, z0 + layer * pitch])
        p += rng.uniform(-WELL_JITTER, WELL_JITTER, 3)
        s.add(sphere, p, density=OAK.density, material=OAK, name=f"ball{k}", tag="ball")
    return s


# ----------------------------------------------------------------------------------------------
# E-CAGE384 / I-CAGE2816

#: [m] thickness of the cage's wall and ceiling boxes (invisible in the thesis; any value works).
CAGE_WALL_THICKNESS = 0.1


def cage_layout(balls: int, boxes: int, per_row: int) -> list[str]:
    """The kind ("ball" or "box") of every grid slot, bottom layer first, row-major in a layer:
    layers alternate, balls first; when one kind runs out its layers are filled with the other."""
    nb, nx = int(balls), int(boxes)
    slots = per_row * per_row
    kinds: list[str] = []
    layer = 0
    while nb + nx > 0:
        first = "ball" if layer % 2 == 0 else "box"
        for _ in range(slots):
            if nb + nx == 0:
                break
            kind = first if (nb if first == "ball" else nx) > 0 else ("box" if first == "ball" else "ball")
            kinds.append(kind)
            if kind == "ball":
                nb -= 1
            else:
                nx -= 1
        layer += 1
    return kinds


@scene("cage", "Schornbaum 004 Fig. 27c: 192 oak balls + 192 oak boxes (16 cm) floating in an invisible cage "
               "3.45 x 3.45 x 2.65 m, gravity 10 switched on at 1 s, dt 1/240")
def cage(*, balls: int = 192, boxes: int = 192, ball_diameter: float = 0.16, box_size: float = 0.16,
         cage_width: float = 3.45, cage_height: float = 2.65, per_row: int = 8, pitch: float = 0.4,
         speed: float = 2.0, spin: float = 2.0 * math.pi, gravity_time: float = 1.0, seed: int = 0,
         seconds: float = 8.0) -> SceneSpec:
    """E-CAGE384 (004 §5.1, Fig. 27c, Fig. 28c, Table 2; 8 s) and I-CAGE2816 (Fig. 29c, Fig. 30c,
    Table 3; ``**I_CAGE2816``: 1536 balls of 10 cm and 1280 boxes of 10 cm in 3.31 x 3.31 x 2.31 m).

    Stated: oak balls and oak cubes "evenly distributed inside of an invisible cage", "randomly
    moving around" without gravity; "after one second of simulation time, gravity is activated"
    (sim step 30) and everything falls and piles up in the corners of the cage; 8 s in all.

    Assumed (lost in the dump):

    * "Evenly distributed": a square grid of ``per_row`` x ``per_row`` bodies per layer at
      ``pitch``, centred in the cage. Both thesis versions fit such a grid exactly:
      384 = 8 x 8 x 6 with 3.45 = 8 x 0.4 + 0.25 and 2.65 = 6 x 0.4 + 0.25, and
      2816 = 16 x 16 x 11 with 3.31 = 16 x 0.2 + 0.11 and 2.31 = 11 x 0.2 + 0.11 (the same margin
      in width and height); and the kinds split by whole layers: 192 = 8 x 8 x 3 of each, and
      1536 = 16 x 16 x 6 balls with 1280 = 16 x 16 x 5 boxes, i.e. layers alternating balls / boxes,
      balls at the bottom (:func:`cage_layout`). So the defaults are 8 per row at 0.4 m and
      :data:`I_CAGE2816` uses 16 per row at 0.2 m.
    * Random motion (``seed``): every body gets a velocity of uniformly random direction and a
      magnitude uniform in [0, ``speed``] (2 m/s), an angular velocity of random direction and
      magnitude uniform in [0, ``spin``] (one turn per second), and the boxes a uniformly random
      orientation. The pitch exceeds a box's circumscribed diameter (0.277 m for 16 cm, 0.173 m
      for 10 cm), so nothing overlaps at the start.
    * Cage: the inner box ``cage_width`` x ``cage_width`` x ``cage_height`` over x, y in
      [-w/2, w/2], z in [0, h]; its floor is the granite ground plane, its four walls and ceiling
      are fixed granite boxes 0.1 m thick ("invisible"; the material is not given), tagged "wall".
    * Gravity switch: the spec's gravity is (0, 0, -10) (what the scene ends with, and what a World
      without a schedule uses from the start); the schedule ((0, (0, 0, 0)), (``gravity_time``,
      (0, 0, -10))) -- :func:`gravity_schedule` -- turns it off until 1 s: apply it with
      :func:`apply_gravity_schedule` / :func:`step_scheduled` (module docstring).
    """
    nb, nx = _int("cage", lo=0, balls=balls, boxes=boxes)
    (nrow,) = _int("cage", per_row=per_row)
    (sd,) = _int("cage", lo=0, seed=seed)
    d, a, cw, ch, p, secs = _num("cage", ball_diameter=ball_diameter, box_size=box_size, cage_width=cage_width,
                                 cage_height=cage_height, pitch=pitch, seconds=seconds)
    v_max, w_max, t_on = _num("cage", strict=False, speed=speed, spin=spin, gravity_time=gravity_time)
    if nb + nx < 1:
        raise SceneError("scene 'cage': parameters balls + boxes must be >= 1")
    layers = -(-(nb + nx) // (nrow * nrow))
    reach = max(0.5 * d, math.sqrt(3.0) * 0.5 * a)            # bounding radius of a ball / a box
    if p < 2.0 * reach or nrow * p > cw or layers * p > ch:
        raise SceneError(f"scene 'cage': the grid ({nrow} x {nrow} x {layers} at pitch={pitch!r}) must fit the cage "
                         f"({cage_width!r} x {cage_width!r} x {cage_height!r} m) with pitch >= {2.0 * reach:.4g} m "
                         "(bounding diameter of the bodies)")
    s = _spec(secs)
    if SPEC_HAS_SCHEDULE:
        s.gravity_schedule = _cage_schedule(t_on)
    _ground(s, GRANITE)
    hw = 0.5 * cw
    t = CAGE_WALL_THICKNESS
    _open_box_walls(s, hw, ch, t, GRANITE, "cage")
    s.add(Box((hw + t, hw + t, 0.5 * t)), (0.0, 0.0, ch + 0.5 * t), fixed=True, material=GRANITE, name="ceiling",
          tag="wall")
    rng = np.random.default_rng(sd)
    ball, cube = Sphere(0.5 * d), Box((0.5 * a, 0.5 * a, 0.5 * a))
    z_first = 0.5 * (ch - layers * p) + 0.5 * p
    counts = {"ball": 0, "box": 0}
    for k, kind in enumerate(cage_layout(nb, nx, nrow)):
        layer, rem = divmod(k, nrow * nrow)
        iy, ix = divmod(rem, nrow)
        pos = ((ix - 0.5 * (nrow - 1)) * p, (iy - 0.5 * (nrow - 1)) * p, z_first + layer * p)
        q = _random_quaternion(rng) if kind == "box" else (1.0, 0.0, 0.0, 0.0)
        v = _random_vector(rng, v_max)
        w = _random_vector(rng, w_max)
        s.add(ball if kind == "ball" else cube, pos, orientation=q, linear_velocity=v, angular_velocity=w,
              density=OAK.density, material=OAK, name=f"{kind}{counts[kind]}", tag=kind)
        counts[kind] += 1
    return s


# ----------------------------------------------------------------------------------------------
# Newton's cradle

#: Cradle balls: iron, 5 cm diameter (0.515 kg), restitution 1 and no friction (004 §5.6: "all
#: coefficients of restitution are set to 1"; friction is not mentioned -- zero makes the ground a
#: pure normal support and keeps every ball from spinning).
CRADLE_RADIUS = 0.025
CRADLE_MATERIAL = IRON.with_(restitution=1.0, friction=0.0, name="cradle-iron")
#: [m] how far the pulled balls start from the row on the ground line (impact after gap / speed).
CRADLE_GAP = 0.05
#: Strings variant: anchors at this height [m], strings of this length [m].
CRADLE_ANCHOR_Z = 0.6
CRADLE_STRING = 0.4


def cradle_pull_angle(speed: float, length: float = CRADLE_STRING) -> float:
    """Release angle [rad] of a pendulum of ``length`` that reaches ``speed`` at the bottom:
    energy, g L (1 - cos theta) = v^2 / 2, so theta = acos(1 - v^2 / (2 g L))."""
    c = 1.0 - speed * speed / (2.0 * G * length)
    if c < -1.0:
        raise SceneError(f"newtons_cradle: speed={speed!r} needs more than a half turn of a {length} m string")
    return math.acos(c)


@scene("newtons_cradle", "Schornbaum 004 §5.6: Newton's cradle, n touching iron balls (5 cm) with restitution 1, "
                         "one pulled ball hitting the row at 1 m/s, dt 1/240")
def newtons_cradle(*, balls: int = 5, pulled: int = 1, pulled_far: int = 0, speed: float = 1.0,
                   strings: bool = False, seconds: float = 2.0) -> SceneSpec:
    """Newton's cradle (004 §5.6, no figure; digest test 21). Stated: n identical balls, "all
    coefficients of restitution are set to 1"; pulling 1, 2 or 3 balls sends 1, 2 or 3 out at the
    far end and the incoming balls stop dead; pulls at both ends work too; with 5 balls and 3 pulled
    the central ball keeps swinging. How the strings are modelled is not described.

    Layout: ``balls`` iron balls of 5 cm along x, each touching the next (centres 2 r apart, gap 0),
    centred on x = 0. The first ``pulled`` balls (touching each other) start ``CRADLE_GAP`` = 5 cm
    to the left of the row moving at +``speed``, the last ``pulled_far`` balls 5 cm to the right
    moving at -``speed`` (tag "projectile"; the rest "ball"). Every contact has restitution 1
    (``CRADLE_MATERIAL``; the combined restitution is the max) and friction 0 (the geometric mean
    with 0).

    ``strings=False`` (default): the balls lie on the frictionless granite ground (z = r) and the
    pulled ones slide in; impact at t = gap / speed = 0.05 s. Chosen as the measurable version:
    the ground pushes only along z, so the x momentum and the kinetic energy along x are exactly
    the conserved quantities, and the closed form is read straight off the velocities (k pulled
    balls in at v: afterwards the far k move at v, all others 0, for as long as you like). Resting
    ground contacts approach at g dt = 4.17 cm/s < the 4.58 cm/s restitution threshold, so the
    balls do not hop despite e = 1.

    ``strings=True``: the visual cradle. Each ball hangs on a ``Distance`` joint (a massless rod,
    ``CRADLE_STRING`` = 0.4 m) from a fixed world anchor at z = 0.6 m above its rest position; the
    pulled balls are swung out about their anchors by ``cradle_pull_angle(speed)`` (29.0 degrees for
    1 m/s) and released from rest, so they hit at ``speed`` after a quarter period
    (about 0.32 s). Here gravity and the joints also act during the impact, so the transfer is only
    approximately the closed form.
    """
    (n,) = _int("newtons_cradle", balls=balls)
    k_near, k_far = _int("newtons_cradle", lo=0, pulled=pulled, pulled_far=pulled_far)
    v, secs = _num("newtons_cradle", speed=speed, seconds=seconds)
    if k_near + k_far > n:
        raise SceneError(f"scene 'newtons_cradle': parameters pulled={pulled!r} + pulled_far={pulled_far!r} "
                         f"exceed balls={balls!r}")
    r = CRADLE_RADIUS
    s = _spec(secs)
    _ground(s, GRANITE)
    sphere = Sphere(r)
    theta = cradle_pull_angle(v) if strings else 0.0
    for i in range(n):
        x_rest = (2 * i - (n - 1)) * r
        side = -1.0 if i < k_near else (1.0 if i >= n - k_far else 0.0)
        tag = "ball" if side == 0.0 else "projectile"
        if strings:
            anchor = (x_rest, 0.0, CRADLE_ANCHOR_Z)
            x = x_rest + side * CRADLE_STRING * math.sin(theta)
            z = CRADLE_ANCHOR_Z - CRADLE_STRING * math.cos(theta if side else 0.0)
            b = s.add(sphere, (x, 0.0, z), density=CRADLE_MATERIAL.density, material=CRADLE_MATERIAL,
                      name=f"ball{i}", tag=tag)
            s.joint(Distance(None, b, anchor, (x, 0.0, z), name=f"string{i}"))
        else:
            vx = -side * v if side else 0.0
            s.add(sphere, (x_rest + side * CRADLE_GAP, 0.0, r), linear_velocity=(vx, 0.0, 0.0),
                  density=CRADLE_MATERIAL.density, material=CRADLE_MATERIAL, name=f"ball{i}", tag=tag)
    return s


# ----------------------------------------------------------------------------------------------
# friction: spin-down of a ball put down spinning


def spin_down_closed_form(mu: float, omega0: float, radius: float, speed: float = 0.0) -> dict:
    """Closed form of ``spin_down`` (solid sphere, point contact, Coulomb friction mu, gravity g).

    Ball along +x with centre speed v and spin w about +y; the contact point (at -r e_z) slips at
    u = v - r w. While it slips, friction F = -mu m g sign(u) e_x, so
        dv/dt = -mu g sign(u),   dw/dt = -r F_x / I = 5 mu g sign(u) / (2 r)   (I = 2/5 m r^2),
        du/dt = -(7/2) mu g sign(u):
    the slip vanishes at t* = 2 |u0| / (7 mu g) and the ball then rolls (no rolling resistance) with
        v_f = (5 v0 + 2 r w0) / 7,   w_f = v_f / r.
    For v0 = 0 (put down spinning): t* = 2 r w0 / (7 mu g), w_f = 2/7 w0, v_f = 2/7 r w0; the spin
    falls linearly at 5 mu g / (2 r) until then."""
    u0 = speed - radius * omega0
    t_star = 2.0 * abs(u0) / (7.0 * mu * G)
    v_f = (5.0 * speed + 2.0 * radius * omega0) / 7.0
    return {"t_star": t_star, "v_final": v_f, "omega_final": v_f / radius,
            "omega_rate": 2.5 * mu * G / radius * (1.0 if u0 > 0 else -1.0), "slip0": u0}


@scene("spin_down", "Schornbaum 004 §5.6 friction: an oak ball (20 cm) put down spinning at 30 rad/s, mu 0.3; "
                    "slides until t* = 2 r w0 / (7 mu g), then rolls at 2/7 w0")
def spin_down(*, mu: float = 0.3, omega0: float = 30.0, radius: float = 0.1, speed: float = 0.0,
              seconds: float = 1.0) -> SceneSpec:
    """Friction spin-down (004 §5.6: a ball set spinning "starts spinning around its own axis ...
    friction slows down this spinning motion"; digest test 29). The thesis gives no setup or
    numbers, so this is the cleanest case with a closed form: an oak ball of ``radius`` resting on
    the granite ground (centre at z = r), spinning at ``omega0`` [rad/s] about +y (topspin for
    motion along +x), centre speed ``speed`` along +x (0: put down spinning). Friction mu = ``mu``
    for this contact (both materials get friction mu; the geometric mean is mu), restitution 0.25.

    Closed form (:func:`spin_down_closed_form`): the spin decays linearly at 5 mu g / (2 r)
    (75 rad/s^2) until t* = 2 r w0 / (7 mu g) = 0.2857 s (69 steps), then the ball rolls at
    w_f = 2/7 w0 = 8.571 rad/s, v_f = 0.857 m/s. (A ball spinning about the *vertical* would be a
    poor test: with a point contact its friction torque is zero. A box spinning on its face has
    torque mu m g <|r|> with <|r|> = a (sqrt 2 + ln(1 + sqrt 2)) / 6 = 0.383 a for a uniformly
    pressed face of side a, but a/sqrt(2) = 0.707 a for four corner contacts, so its stop time
    tests the contact discretisation rather than friction.)
    """
    m_u, w0, r, secs = _num("spin_down", mu=mu, omega0=omega0, radius=radius, seconds=seconds)
    (v0,) = _num("spin_down", lo=None, speed=speed)
    s = _spec(secs)
    _ground(s, GRANITE.with_(friction=m_u))
    ball_mat = OAK.with_(friction=m_u)
    s.add(Sphere(r), (0.0, 0.0, r), linear_velocity=(v0, 0.0, 0.0), angular_velocity=(0.0, w0, 0.0),
          density=ball_mat.density, material=ball_mat, name="ball", tag="ball")
    return s


# ----------------------------------------------------------------------------------------------
# catapult (seesaw) of Fig. 37

#: Oak plank of the seesaw: 2.0 x 0.2 x 0.03 m (9.6 kg). The thesis gives no size ("a wooden plank").
CATAPULT_PLANK_HALF = (1.0, 0.1, 0.015)
#: [rad] resting tilt of the plank (the loaded end on the ground): 4 degrees. Low enough that the
#: 7-box column (tips over beyond atan(0.05 / 0.35) = 8.1 degrees) stands on it.
CATAPULT_TILT = math.radians(4.0)
#: Fig. 37a: 7 oak boxes of 10 cm (0.8 kg each, 5.6 kg); Fig. 37b: 15 oak boxes of 6.4 cm (0.21 kg
#: each, 3.15 kg); the large oak box of 20 cm (6.4 kg).
CATAPULT_LOADS = {7: 0.05, 15: 0.032}
CATAPULT_BIG_HALF = 0.1
#: [rad] Fig. 37a: "slightly twisted around the z-axis": box k of the column is turned by
#: (-1)^k * 3 degrees about the plank's normal.
CATAPULT_TWIST = math.radians(3.0)
#: [m] along the plank from its centre: where the load stands (left) and where the large box lands.
CATAPULT_LOAD_AT = -0.75
CATAPULT_HIT_AT = 0.8
#: [m] gap between neighbouring boxes of a pyramid row (1 mm, as the stacks of ``bullet_stacks``).
CATAPULT_GAP = 0.001


def _quat_mul(a, b) -> tuple:
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


def catapult_frame(tilt: float = CATAPULT_TILT) -> dict:
    """The resting seesaw: the fulcrum's top edge height ``hf`` [m], the plank's centre, orientation
    and unit axes (ex along the plank, ez its upper normal) with the -x end on the ground.

    The plank's bottom face rests on the fulcrum edge (y axis through (0, 0, hf)) at its midpoint and
    its -x bottom edge on the ground, so sin(tilt) = hf / (L / 2). A turn by -tilt about +y takes
    x to ex = (cos t, 0, sin t) and z to ez = (-sin t, 0, cos t); centre = (0, 0, hf) + h ez (h: half
    thickness); quaternion (cos(-t/2), 0, sin(-t/2), 0)."""
    hl, _, ht = CATAPULT_PLANK_HALF
    hf = hl * math.sin(tilt)
    ex = np.array([math.cos(tilt), 0.0, math.sin(tilt)])
    ez = np.array([-math.sin(tilt), 0.0, math.cos(tilt)])
    centre = np.array([0.0, 0.0, hf]) + ht * ez
    q = (math.cos(-0.5 * tilt), 0.0, math.sin(-0.5 * tilt), 0.0)
    return {"hf": hf, "centre": centre, "q": q, "ex": ex, "ez": ez}


@scene("catapult", "Schornbaum 004 Fig. 37: an oak seesaw plank loaded with 7 oak boxes of 10 cm (or 15 of "
                   "6.4 cm) catapults them when a 20 cm oak box lands on its other end, dt 1/240")
def catapult(*, load: int = 7, drop_height: float = 1.0, drop_time: float = 1.0, seconds: float = 3.0) -> SceneSpec:
    """The catapult of 004 §5.6, Fig. 37 ("correct and stable handling of weight and balance in all
    scenarios that include some sort of seesaw or catapult"). Stated: (a) 7 small boxes of 10 cm,
    "slightly twisted around the z-axis", at rest on a wooden plank; "when the large box (20 cm) hits
    the plank, the small boxes are tossed into the air"; (b) 15 boxes of 6.4 cm "dropped onto the
    plank", then the large box hits, and "since the total weight of these 15 boxes is less than the
    total weight of the 7 boxes ..., the 15 small boxes are tossed higher and farther"; both in real
    time on the E6400. ``load`` = 7 builds (a), 15 builds (b).

    Assumed (lost in the dump; the thesis's catapult has no joint -- the impulse solver has none --
    so the plank is a free body on a fixed fulcrum):

    * Plank: oak, 2.0 x 0.2 x 0.03 m (9.6 kg), its middle on the top edge of a fixed oak fulcrum (a
      square prism lying along y, turned 45 degrees, so its top is an edge; ``catapult_frame``), the
      -x end on the granite ground: tilt 4 degrees, fulcrum edge 6.98 cm high.
    * Load (a): a column of 7 boxes on the plank at 0.75 m left of its middle, perpendicular to the
      plank, box k turned by (-1)^k 3 degrees about the plank normal, resting exactly on each other,
      at rest (awake). Load (b): a running-bond pyramid wall of 5 + 4 + 3 + 2 + 1 = 15 boxes (rows
      along the plank, 1 mm gaps, the layout of ``bullet_stacks``' walls), its bottom row 5 cm above
      the plank, dropped. (A column of 15 boxes of 6.4 cm, 0.96 m tall, would tip over on a 4 degree
      plank: atan(0.032 / 0.48) = 3.8 degrees.)
    * Large box: oak, 20 cm (6.4 kg), world-aligned, enters (``spawn_time``) at ``drop_time`` = 1 s
      (the load has settled), its bottom ``drop_height`` = 1 m above the plank's top surface at
      0.8 m right of the middle: it lands at sqrt(2 g h) = 4.47 m/s after 0.45 s.

    Tags: "plank", "box" (the load), "projectile" (the large box), "wall" (the fulcrum), "ground".
    """
    (n,) = _int("catapult", load=load)
    if n not in CATAPULT_LOADS:
        raise SceneError(f"scene 'catapult': parameter load={load!r} must be 7 (Fig. 37a) or 15 (Fig. 37b)")
    h_drop, t_drop, secs = _num("catapult", drop_height=drop_height, drop_time=drop_time, seconds=seconds)
    f = catapult_frame()
    ex, ez, q = f["ex"], f["ez"], f["q"]
    hl, hw, ht = CATAPULT_PLANK_HALF
    s = _spec(secs)
    _ground(s, GRANITE)
    a = f["hf"] / math.sqrt(2.0)                     # the prism's half side: its top edge at a sqrt(2) = hf
    s.add(Box((a, 1.5 * hw, a)), (0.0, 0.0, 0.0), orientation=(math.cos(math.pi / 8), 0.0, math.sin(math.pi / 8), 0.0),
          fixed=True, material=OAK, name="fulcrum", tag="wall")
    s.add(Box(CATAPULT_PLANK_HALF), tuple(f["centre"]), orientation=q, density=OAK.density, material=OAK,
          name="plank", tag="plank")
    top = f["centre"] + ht * ez                        # the plank's top surface at its middle
    h = CATAPULT_LOADS[n]
    if n == 7:
        for k in range(7):
            tw = (-1.0) ** k * CATAPULT_TWIST
            qk = _quat_mul(q, (math.cos(0.5 * tw), 0.0, 0.0, math.sin(0.5 * tw)))
            p = top + CATAPULT_LOAD_AT * ex + (h + 2.0 * h * k) * ez
            s.add(Box((h, h, h)), tuple(p), orientation=qk, density=OAK.density, material=OAK, name=f"box{k}",
                  tag="box")
    else:
        pitch = 2.0 * h + CATAPULT_GAP
        j = 0
        for r in range(5):
            m = 5 - r
            for i in range(m):
                u = CATAPULT_LOAD_AT + (i - 0.5 * (m - 1)) * pitch
                p = top + u * ex + (0.05 + h + 2.0 * h * r) * ez
                s.add(Box((h, h, h)), tuple(p), orientation=q, density=OAK.density, material=OAK, name=f"box{j}",
                      tag="box")
                j += 1
    hit = top + CATAPULT_HIT_AT * ex
    big = CATAPULT_BIG_HALF
    s.add(Box((big, big, big)), (float(hit[0]), 0.0, float(hit[2]) + h_drop + big), density=OAK.density,
          material=OAK, name="large box", tag="projectile", spawn_time=t_drop)
    return s
