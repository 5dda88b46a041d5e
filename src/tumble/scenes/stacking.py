"""Large structured stacking: the scenes of Erleben 000 (velocity-based shock propagation), sections 4-5.

Every scene here steps with the paper's dt = 0.01 s, gravity (0, 0, -9.81) m/s^2 and 10 solver
iterations (``settings = {"iterations": 10}``; the paper never uses more than 10 for the dynamics).
The solver is the caller's choice (``build(name, solver="shock")`` or ``solver="pgs"``): nothing
solver-specific is in the scene settings, so every spec builds under every solver. Shapes are boxes,
spheres and the ground plane only, so the PyBullet and MuJoCo peers build the same scenes.

Tags (``BodySpec.tag``): ``"stack"`` bodies are judged by ``SceneMetrics`` (drift, standing,
displaced); ``"projectile"`` marks what is dropped or fired at a structure (roof, heavy block,
cannonball; ``projectile_speeds`` reports them by name); ``"pile"`` loose balls; ``"ground"`` the
fixed plane z = 0; ``"wall"`` other fixed bodies (the incline and its letters).

Round towers (``tower320``, ``falling_roof``, ``tower_roof``) share one ring: courses of
``per_course`` bricks 0.4 x 0.2 x 0.2 m (half extents ``TOWER_BRICK_HALF``, 2000 kg/m^3: 32 kg, mu
0.6, restitution 0), long axis tangential, brick centres on a circle of radius ``ring_radius``, so
that neighbouring bricks of a course are ``TOWER_GAP`` = 2 mm apart at their inner corners (the
narrowest place; 6.5 cm at the outer corners for 20 bricks). Course ``k`` (0 = bottom) has its
centres at z = hz (2k + 1), resting exactly on course ``k - 1`` (the ground for k = 0), and is
rotated by half the angular pitch, pi / n, against the course below (running bond: every brick
bridges a joint). For 20 bricks per course R = 1.36914 m, and the tower is 0.2 m per course tall.

Timed bodies use ``BodySpec.spawn_time``: they enter the world at the start of the first step that
starts at or after that time (``World.spawn``), with the spec's pose and velocity.
"""

from __future__ import annotations

import math

import numpy as np

from tumble.errors import SceneError
from tumble.materials import Material
from tumble.scenes.library import _ground, scene
from tumble.scenes.params import int_params as _positive_int
from tumble.scenes.params import num_params as _finite
from tumble.scenes.spec import SceneSpec
from tumble.shapes import Box, Sphere

#: The paper's time step [s] (000 section 5: "In all of our simulations, we have used a timestep of 0.01").
DT = 0.01
GRAVITY = (0.0, 0.0, -9.81)
SETTINGS = {"iterations": 10}

#: Tower brick: 0.4 x 0.2 x 0.2 m, long axis local x (tangential in the ring).
TOWER_BRICK_HALF = (0.2, 0.1, 0.1)
#: [m] clearance between neighbouring bricks of a course at their inner corners.
TOWER_GAP = 0.002
BRICK_MATERIAL = Material(density=2000.0, friction=0.6, restitution=0.0, name="brick")
#: Cannonball: iron (7874 kg/m^3, 004 section 5), restitution 0.
CANNON_MATERIAL = Material(density=7874.0, friction=0.4, restitution=0.0, name="iron")


def _spec(seconds: float) -> SceneSpec:
    return SceneSpec(name="", gravity=GRAVITY, dt=DT, seconds=float(seconds), settings=dict(SETTINGS))


def _quat_z(angle: float) -> tuple:
    """Unit quaternion (w, x, y, z) of a rotation by ``angle`` [rad] about +z."""
    return (math.cos(0.5 * angle), 0.0, 0.0, math.sin(0.5 * angle))


# ----------------------------------------------------------------------------------------------
# round towers

def ring_radius(per_course: int, half=TOWER_BRICK_HALF, gap: float = TOWER_GAP) -> float:
    """Radius [m] of the circle of brick centres of a course of ``per_course`` tangential bricks.

    Two neighbouring bricks are mirror images in the plane through the axis at half the angular
    pitch ``a = pi / n``; the inner corner (radial R - hy, tangential hx) is at distance
    ``(R - hy) sin a - hx cos a`` from that plane, so the clearance ``gap`` (twice that) needs
    ``R = hy + hx / tan a + gap / (2 sin a)``; ``gap = 0`` is the touching ring
    ``R_min = hx / tan a + hy``."""
    n = int(per_course)
    if n < 3:
        raise SceneError(f"ring: per_course={per_course!r} must be >= 3")
    hx, hy, _ = half
    a = math.pi / n
    r = hy + hx / math.tan(a) + gap / (2.0 * math.sin(a))
    assert r >= hx / math.tan(a) + hy, "ring bricks would overlap at their inner corners"
    assert abs(2.0 * ((r - hy) * math.sin(a) - hx * math.cos(a)) - gap) < 1e-12
    return r


def ring_outer_radius(per_course: int, half=TOWER_BRICK_HALF, gap: float = TOWER_GAP) -> float:
    """Distance [m] from the tower axis to the outer corners of the bricks (the tower's outer radius)."""
    hx, hy, _ = half
    return math.hypot(ring_radius(per_course, half, gap) + hy, hx)


def _round_tower(s: SceneSpec, courses: int, per_course: int, material: Material) -> tuple[float, float]:
    """Add the ring tower (module docstring) to ``s``; returns (ring radius R [m], top z [m])."""
    hx, hy, hz = TOWER_BRICK_HALF
    n = int(per_course)
    R = ring_radius(n)
    brick = Box(TOWER_BRICK_HALF)
    pitch = 2.0 * math.pi / n
    for k in range(int(courses)):
        z = hz * (2 * k + 1)
        for i in range(n):
            phi = pitch * i + 0.5 * pitch * (k % 2)
            s.add(brick, (R * math.cos(phi), R * math.sin(phi), z), orientation=_quat_z(phi + 0.5 * math.pi),
                  density=material.density, material=material, name=f"brick{k}_{i}", tag="stack")
    return R, 2.0 * hz * int(courses)


def _cannonball(s: SceneSpec, *, spawn_time: float, radius: float, speed: float,
                distance: float, target_z: float, outer_radius: float) -> None:
    """A cannonball flying along +x at the tower (axis x = y = 0) from ``distance`` [m] in front of
    its outer face, spawned at ``spawn_time``; it starts higher by the ballistic drop over the
    flight to the face, 1/2 g (distance / speed)^2, so it arrives at ``target_z``."""
    t_flight = distance / speed
    drop = 0.5 * abs(GRAVITY[2]) * t_flight * t_flight
    x0 = -(outer_radius + distance + radius)
    s.add(Sphere(radius), (x0, 0.0, target_z + drop), linear_velocity=(speed, 0.0, 0.0),
          density=CANNON_MATERIAL.density, material=CANNON_MATERIAL, name="cannonball", tag="projectile",
          spawn_time=spawn_time)


@scene("box_stack25", "Erleben 000 Fig. 9: one column of 25 resting 0.5 m cubes (125 kg, mu 0.5), dt 0.01")
def box_stack25(*, count: int = 25, size: float = 0.5, density: float = 1000.0, friction: float = 0.5,
                seconds: float = 4.0) -> SceneSpec:
    """Box-stack (000 Fig. 9, "poor convergence rate for the iterative solver"; shown after 4 s).

    ``count`` cubes of edge ``size`` (0.5 m: 0.125 m^3, 125 kg at 1000 kg/m^3), mu ``friction``,
    restitution 0, stacked in one column on the ground plane: cube ``i`` (0 = bottom) has its centre
    at z = size (i + 1/2), so each rests exactly on the one below (no gap, no overlap) and the
    bottom one on the ground. The default column is 12.5 m tall. Timeline: it should just stand
    for ``seconds`` (4 s as in the paper's figure).
    """
    (n,) = _positive_int("box_stack25", count=count)
    a, rho, _ = _finite("box_stack25", size=size, density=density, seconds=seconds)
    (mu,) = _finite("box_stack25", strict=False, friction=friction)
    mat = Material(density=rho, friction=mu, restitution=0.0, name="box")
    s = _spec(seconds)
    _ground(s, mat)
    cube = Box((0.5 * a, 0.5 * a, 0.5 * a))
    for i in range(n):
        s.add(cube, (0.0, 0.0, a * (i + 0.5)), density=rho, material=mat, name=f"box{i}", tag="stack")
    return s


@scene("tower320", "Erleben 000 Fig. 11: round tower of 16 courses x 20 bricks 0.4x0.2x0.2 m (running bond), dt 0.01")
def tower320(*, courses: int = 16, per_course: int = 20, friction: float = 0.6, density: float = 2000.0,
             seconds: float = 4.0) -> SceneSpec:
    """Tower (000 Fig. 11: 320 bricks, "acceptable convergence rate"; shown after 4 s).

    The ring tower of the module docstring: ``courses`` x ``per_course`` bricks 0.4 x 0.2 x 0.2 m,
    ``density`` 2000 kg/m^3 (32 kg), mu ``friction``, restitution 0. Default: 320 bricks on a ring
    of radius 1.369 m (outer radius 1.483 m), 3.2 m tall. Timeline: it should just stand.
    """
    c, n = _positive_int("tower320", courses=courses, per_course=per_course)
    if n < 3:
        raise SceneError(f"scene 'tower320': parameter per_course={per_course!r} must be >= 3")
    rho, _ = _finite("tower320", density=density, seconds=seconds)
    (mu,) = _finite("tower320", strict=False, friction=friction)
    mat = BRICK_MATERIAL.with_(density=rho, friction=mu)
    s = _spec(seconds)
    _ground(s, mat)
    _round_tower(s, c, n, mat)
    return s


@scene("ball_grid125", "Erleben 000 Fig. 13: 5x5x5 grid of 0.5 m balls starting in severe penetration (0.1 m)")
def ball_grid125(*, n: int = 5, radius: float = 0.25, penetration: float = 0.2, density: float = 1000.0,
                 friction: float = 0.5, seconds: float = 1.0) -> SceneSpec:
    """Ball-grid (000 Fig. 13: 125 balls, "1st frame with severe penetrations", judged at frame 6).

    ``n`` x ``n`` x ``n`` spheres of ``radius`` (0.25 m: 65.4 kg at 1000 kg/m^3), mu ``friction``,
    restitution 0, on a simple cubic grid centred on the z axis with centre spacing
    ``(1 - penetration) * 2 radius`` in x, y and z (0.4 m, i.e. 0.8 diameters), the bottom layer's
    centres at z = ``(1 - penetration) * radius`` (0.2 m).

    Initial penetration: neighbours overlap by ``2 penetration radius`` (0.1 m) and the bottom layer
    sinks into the ground by ``penetration radius`` (0.05 m); the maximum, ``2 penetration radius``,
    is 0.1 m for the defaults. Timeline: the grid is released at t = 0; within 6 steps a solver with
    projection / shock propagation should have pushed it apart (the paper's Fig. 13 c).
    """
    (k,) = _positive_int("ball_grid125", n=n)
    r, rho, _ = _finite("ball_grid125", radius=radius, density=density, seconds=seconds)
    (p, mu) = _finite("ball_grid125", strict=False, penetration=penetration, friction=friction)
    if p >= 1.0:
        raise SceneError(f"scene 'ball_grid125': parameter penetration={penetration!r} must be < 1")
    mat = Material(density=rho, friction=mu, restitution=0.0, name="ball")
    s = _spec(seconds)
    _ground(s, mat)
    sphere = Sphere(r)
    pitch = (1.0 - p) * 2.0 * r
    for iz in range(k):
        for iy in range(k):
            for ix in range(k):
                pos = ((ix - 0.5 * (k - 1)) * pitch, (iy - 0.5 * (k - 1)) * pitch, (1.0 - p) * r + iz * pitch)
                s.add(sphere, pos, density=rho, material=mat, name=f"ball{iz}_{iy}_{ix}", tag="stack")
    return s


#: Roof of ``falling_roof``: a timber slab 3.4 x 3.4 x 0.2 m at 600 kg/m^3 (1387 kg, 43 bricks).
ROOF_HALF = (1.7, 1.7, 0.1)
ROOF_MATERIAL = Material(density=600.0, friction=0.6, restitution=0.0, name="timber")


@scene("falling_roof", "Erleben 000 Fig. 16: roof slab dropped on a 640-brick round tower, then a cannonball")
def falling_roof(*, courses: int = 32, per_course: int = 20, roof_time: float = 1.0, roof_drop: float = 0.25,
                 cannon_time: float = 3.0, cannon_speed: float = 15.0, cannon_radius: float = 0.25,
                 cannon_distance: float = 3.0, seconds: float = 5.0) -> SceneSpec:
    """Falling roof (000 Fig. 16: "Roof falling onto a tower of 640 bricks followed by a canon-ball").

    * Tower: the ring tower of the module docstring, ``courses`` x ``per_course`` (32 x 20 = 640
      bricks of 32 kg, mu 0.6), 6.4 m tall.
    * Roof (tag "projectile", name "roof"): a flat timber slab 3.4 x 3.4 x 0.2 m (``ROOF_HALF``),
      600 kg/m^3 = 1387 kg (43 bricks' mass), mu 0.6, restitution 0, wider than the tower (outer
      radius 1.483 m). It enters at ``roof_time`` (1 s) at rest, level, centred on the axis, its
      bottom ``roof_drop`` (0.25 m) above the top course, and lands about 0.23 s later.
    * Cannonball (tag "projectile", name "cannonball"): iron sphere of ``cannon_radius`` (0.25 m:
      515 kg), enters at ``cannon_time`` (3 s) ``cannon_distance`` (3 m) in front of the tower's
      outer face on the -x side, flying along +x at ``cannon_speed`` (15 m/s), starting higher by
      its ballistic drop so it strikes at mid-height (3.2 m).
    * Runs ``seconds`` (5 s).
    """
    c, n = _positive_int("falling_roof", courses=courses, per_course=per_course)
    if n < 3:
        raise SceneError(f"scene 'falling_roof': parameter per_course={per_course!r} must be >= 3")
    t_roof, t_ball, speed, rb, dist, _ = _finite(
        "falling_roof", roof_time=roof_time, cannon_time=cannon_time, cannon_speed=cannon_speed,
        cannon_radius=cannon_radius, cannon_distance=cannon_distance, seconds=seconds)
    (drop,) = _finite("falling_roof", strict=False, roof_drop=roof_drop)
    if t_ball < t_roof:
        raise SceneError(f"scene 'falling_roof': parameter cannon_time={cannon_time!r} must be >= "
                         f"roof_time={roof_time!r}")
    s = _spec(seconds)
    _ground(s, BRICK_MATERIAL)
    _, top = _round_tower(s, c, n, BRICK_MATERIAL)
    s.add(Box(ROOF_HALF), (0.0, 0.0, top + drop + ROOF_HALF[2]), density=ROOF_MATERIAL.density,
          material=ROOF_MATERIAL, name="roof", tag="projectile", spawn_time=t_roof)
    _cannonball(s, spawn_time=t_ball, radius=rb, speed=speed, distance=dist, target_z=0.5 * top,
                outer_radius=ring_outer_radius(n))
    return s


#: Heavy block of ``tower_roof``: 3.2 x 3.2 x 0.8 m (8 x 16 x 4 bricks), wider than the tower.
BLOCK_HALF = (1.6, 1.6, 0.4)
#: Block-brick restitution (the block's; bricks have 0 and a pair takes the max): 000 section 5 has
#: the block's impact "transfer large impulses down through the tower due to restitution".
BLOCK_RESTITUTION = 0.2


@scene("tower_roof", "Erleben 000 section 5: 800-brick tower stands 10 s, a 16 t block lands on it, then a cannonball")
def tower_roof(*, courses: int = 40, per_course: int = 20, impact_time: float = 10.0, block_drop: float = 0.5,
               block_density: float = 2000.0, block_restitution: float = BLOCK_RESTITUTION,
               cannon_time: float = 13.0, cannon_speed: float = 18.0, cannon_radius: float = 0.25,
               cannon_distance: float = 4.0, seconds: float = 16.0) -> SceneSpec:
    """Tower-roof comparison (000 section 5, Figs. 20-27: VSP against Maya, ISP, Novodex, ODE).

    * Tower: the ring tower of the module docstring, ``courses`` x ``per_course`` (40 x 20 = 800
      bricks of 32 kg, mu 0.6, restitution 0), 8 m tall, standing alone until ``impact_time``
      (10 s): the paper's "tower standing still for a long time".
    * Heavy block (tag "projectile", name "block"): a box 3.2 x 3.2 x 0.8 m (``BLOCK_HALF``),
      ``block_density`` 2000 kg/m^3 (the bricks' material) = 16384 kg, 512 bricks' mass (the
      paper's "badly conditioned ... due to the large mass of the large block"), mu 0.6,
      restitution ``block_restitution`` 0.2 (a block-brick pair bounces with 0.2: the impulse
      transferred down and back up the tower "due to restitution"; PyBullet multiplies
      restitutions, giving 0, MuJoCo has none). It enters at rest, level, centred, its bottom
      ``block_drop`` (0.5 m) above the top, at ``impact_time - sqrt(2 block_drop / g)`` (9.681 s),
      so it lands at ``impact_time``.
    * Cannonball (tag "projectile", name "cannonball"): iron sphere of ``cannon_radius`` (0.25 m:
      515 kg), enters at ``cannon_time`` (13 s) ``cannon_distance`` (4 m) in front of the tower's
      outer face on the -x side, flying along +x at ``cannon_speed`` (18 m/s), starting higher by
      its ballistic drop so it strikes at mid-height (4 m).
    * Runs ``seconds`` (16 s = impact_time + 6).
    """
    c, n = _positive_int("tower_roof", courses=courses, per_course=per_course)
    if n < 3:
        raise SceneError(f"scene 'tower_roof': parameter per_course={per_course!r} must be >= 3")
    t_hit, drop, rho, t_ball, speed, rb, dist, _ = _finite(
        "tower_roof", impact_time=impact_time, block_drop=block_drop, block_density=block_density,
        cannon_time=cannon_time, cannon_speed=cannon_speed, cannon_radius=cannon_radius,
        cannon_distance=cannon_distance, seconds=seconds)
    (e,) = _finite("tower_roof", strict=False, block_restitution=block_restitution)
    if e > 1.0:
        raise SceneError(f"scene 'tower_roof': parameter block_restitution={block_restitution!r} must be <= 1")
    t_block = t_hit - math.sqrt(2.0 * drop / abs(GRAVITY[2]))
    if t_block <= 0.0:
        raise SceneError(f"scene 'tower_roof': parameter impact_time={impact_time!r} must exceed the block's "
                         f"fall time {t_hit - t_block:.3f} s from block_drop={block_drop!r}")
    if t_ball < t_block:
        raise SceneError(f"scene 'tower_roof': parameter cannon_time={cannon_time!r} must be >= the block's "
                         f"spawn time {t_block:.3f} s")
    s = _spec(seconds)
    _ground(s, BRICK_MATERIAL)
    _, top = _round_tower(s, c, n, BRICK_MATERIAL)
    block_mat = BRICK_MATERIAL.with_(density=rho, restitution=e, name="block")
    s.add(Box(BLOCK_HALF), (0.0, 0.0, top + drop + BLOCK_HALF[2]), density=rho, material=block_mat,
          name="block", tag="projectile", spawn_time=t_block)
    _cannonball(s, spawn_time=t_ball, radius=rb, speed=speed, distance=dist, target_z=0.5 * top,
                outer_radius=ring_outer_radius(n))
    return s


# ----------------------------------------------------------------------------------------------
# inclined plane with raised letters (Fig. 17)

#: Block letters on a 5 x 5 grid: rectangles (col0, row0, col1, row1), row 0 at the letter's foot
#: (downhill). The strokes of a letter do not overlap.
FONT = {
    "T": [(0, 4, 5, 5), (2, 0, 3, 4)],
    "U": [(0, 1, 1, 5), (4, 1, 5, 5), (0, 0, 5, 1)],
    "M": [(0, 0, 1, 5), (4, 0, 5, 5), (1, 4, 4, 5), (2, 2, 3, 4)],
    "B": [(0, 0, 1, 5), (1, 4, 4, 5), (1, 2, 4, 3), (1, 0, 4, 1), (4, 3, 5, 4), (4, 1, 5, 2)],
    "L": [(0, 1, 1, 5), (0, 0, 5, 1)],
    "E": [(0, 0, 1, 5), (1, 4, 5, 5), (1, 2, 4, 3), (1, 0, 5, 1)],
    "I": [(0, 4, 5, 5), (2, 1, 3, 4), (0, 0, 5, 1)],
    "D": [(0, 0, 1, 5), (1, 4, 4, 5), (1, 0, 4, 1), (4, 1, 5, 4)],
    "K": [(0, 0, 1, 5), (1, 2, 3, 3), (3, 3, 4, 4), (4, 4, 5, 5), (3, 1, 4, 2), (4, 0, 5, 1)],
    " ": [],
}
#: Incline: a fixed box 8 m along the slope x 5 m wide x 0.2 m thick.
INCLINE_HALF = (4.0, 2.5, 0.1)
#: Letters: 5 x 5 grid cells of 0.12 m (letters 0.6 m square), 0.12 m apart, raised 0.15 m.
LETTER_UNIT = 0.12
LETTER_RELIEF = 0.15
#: Distance [m] along the slope from the incline's lower edge to the letters' foot.
LETTER_BASE = 2.0
LETTER_MATERIAL = Material(density=2400.0, friction=0.5, restitution=0.0, name="concrete")
BALL_MATERIAL = Material(density=1000.0, friction=0.5, restitution=0.0, name="ball")


def incline_pose(angle_deg: float) -> tuple[np.ndarray, tuple, np.ndarray]:
    """(centre [m] (3,), quaternion (w,x,y,z), rotation matrix (3,3)) of the incline box.

    The box is rotated about +y by ``angle``: its local +x (along the slope) points down toward
    +x, local +z is the surface normal. The centre is at x = y = 0 and at the height that puts the
    lowest edge of the box (local x = +hx, z = -hz) exactly on the ground (z = 0)."""
    th = math.radians(angle_deg)
    hx, _, hz = INCLINE_HALF
    q = (math.cos(0.5 * th), 0.0, math.sin(0.5 * th), 0.0)
    R = np.array([[math.cos(th), 0.0, math.sin(th)], [0.0, 1.0, 0.0], [-math.sin(th), 0.0, math.cos(th)]])
    c = np.array([0.0, 0.0, hx * math.sin(th) + hz * math.cos(th)])
    return c, q, R


def letter_strokes(text: str) -> list[tuple[float, float, float, float]]:
    """Strokes of ``text`` in incline-surface coordinates: (u0, v0, u1, v1) [m], u along the slope
    (downhill +, 0 at the incline centre), v across; the line of text is centred across the
    incline, letters upright (their top uphill), their foot ``LETTER_BASE`` above the lower edge."""
    hx = INCLINE_HALF[0]
    a = LETTER_UNIT
    width = len(text) * 5 * a + (len(text) - 1) * a
    foot = hx - LETTER_BASE
    out = []
    for k, ch in enumerate(text):
        v_left = -0.5 * width + k * 6 * a
        for c0, r0, c1, r1 in FONT[ch]:
            # a reader at the foot of the slope looking uphill (-x) has +y (= +v) on the right
            v0, v1 = v_left + c0 * a, v_left + c1 * a
            u0, u1 = foot - r1 * a, foot - r0 * a
            out.append((u0, v0, u1, v1))
    return out


@scene("inclined_letters", "Erleben 000 Fig. 17: 1000 balls r 0.05-0.1 m dropped on a 25 deg incline with "
                           "raised letters")
def inclined_letters(*, count: int = 1000, seed: int = 0, angle_deg: float = 25.0, text: str = "TUMBLE",
                     r_min: float = 0.05, r_max: float = 0.1, seconds: float = 4.0) -> SceneSpec:
    """Inclined plane with letters (000 Fig. 17, "DIKU": "1000 balls of various sizes falling onto an
    inclined plane with engraved letters"; here the letters are raised, spelling ``text``).

    * Ground plane z = 0 (concrete, mu 0.5).
    * Incline (tag "wall", fixed): a box 8 x 5 x 0.2 m (``INCLINE_HALF``), tilted by ``angle_deg``
      (25 deg) about +y so that it descends toward +x, its lower edge resting on the ground
      (``incline_pose``); mu 0.5, restitution 0. The top edge is 3.56 m high at 25 deg.
    * Letters (tag "wall", fixed, names "letter<j>"): block capitals on a 5 x 5 grid of
      0.12 m cells (0.6 m letters, 0.12 m apart; ``FONT``), each stroke a box on the incline surface
      (rotated with it), raised 0.15 m, the line centred across the slope, the letters' foot 2 m
      up the slope from the lower edge. "TUMBLE" has 21 strokes over 4.2 m.
    * Balls (tag "pile", names "ball<k>"): ``count`` (1000) spheres, radius uniform in
      [``r_min``, ``r_max``] (0.05-0.1 m, ``seed``), 1000 kg/m^3 (0.52-4.2 kg), mu 0.5,
      restitution 0, on a grid over the upper part of the incline (x in [-3.4, -1.2] m, y in
      [-2.2, 2.2] m; pitch 2 r_max + 2 cm across, 2 r_max + 5 cm up, 11 x 21 per layer for the
      defaults), each jittered by up to 4 mm per axis (``seed``), so no two touch; the lowest layer's
      centres are 0.5 m + r_max above the incline's top edge. All are released at t = 0 and roll down into the
      letters.
    * Runs ``seconds`` (4 s).
    """
    (n,) = _positive_int("inclined_letters", count=count)
    th, r0, r1, _ = _finite("inclined_letters", angle_deg=angle_deg, r_min=r_min, r_max=r_max, seconds=seconds)
    if not (th < 80.0 and r0 <= r1):
        raise SceneError(f"scene 'inclined_letters': parameters angle_deg={angle_deg!r} must be in (0, 80) and "
                         f"r_min={r_min!r} <= r_max={r_max!r}")
    bad = sorted({ch for ch in str(text).upper() if ch not in FONT})
    if bad:
        raise SceneError(f"scene 'inclined_letters': parameter text={text!r} has letters {bad} not in the font "
                         f"({''.join(sorted(FONT)).strip()})")
    text = str(text).upper()
    s = _spec(seconds)
    _ground(s, LETTER_MATERIAL)
    c, q, R = incline_pose(th)
    hx, hy, hz = INCLINE_HALF
    s.add(Box(INCLINE_HALF), c, orientation=q, fixed=True, material=LETTER_MATERIAL, name="incline", tag="wall")
    strokes = letter_strokes(text)
    if strokes:
        span = max(max(abs(v0), abs(v1)) for _, v0, _, v1 in strokes)
        if span > hy:
            raise SceneError(f"scene 'inclined_letters': text={text!r} is {2 * span:.2f} m wide; the incline is "
                             f"{2 * hy:.2f} m wide")
    for j, (u0, v0, u1, v1) in enumerate(strokes):
        half = (0.5 * (u1 - u0), 0.5 * (v1 - v0), 0.5 * LETTER_RELIEF)
        local = np.array([0.5 * (u0 + u1), 0.5 * (v0 + v1), hz + 0.5 * LETTER_RELIEF])
        s.add(Box(half), c + R @ local, orientation=q, fixed=True, material=LETTER_MATERIAL,
              name=f"letter{j}", tag="wall")
    # balls: a jittered grid above the upper part of the incline
    rng = np.random.default_rng(int(seed))
    radii = rng.uniform(r0, r1, n)
    jitter = 0.004
    pitch_xy = 2.0 * r1 + 0.02
    pitch_z = 2.0 * r1 + 0.05
    x_lo, x_hi, y_half = -3.4, -1.0, 2.2
    nx = int(math.floor((x_hi - x_lo) / pitch_xy)) + 1
    ny = int(math.floor(2.0 * y_half / pitch_xy)) + 1
    top = 2.0 * hx * math.sin(math.radians(th)) + 2.0 * hz * math.cos(math.radians(th))
    z0 = top + 0.5 + r1
    for k in range(n):
        layer, rem = divmod(k, nx * ny)
        iy, ix = divmod(rem, nx)
        p = np.array([x_lo + ix * pitch_xy, (iy - 0.5 * (ny - 1)) * pitch_xy, z0 + layer * pitch_z])
        p += rng.uniform(-jitter, jitter, 3)
        s.add(Sphere(float(radii[k])), p, density=BALL_MATERIAL.density, material=BALL_MATERIAL,
              name=f"ball{k}", tag="pile")
    return s
