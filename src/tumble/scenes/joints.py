"""Joint scenes: pendulum, hanging chain, hinged bridge, ragdoll pile, motorised car, welded wall.

Every scene uses SI units and gravity (0, 0, -9.81) m/s^2; joints are ``tumble.joints`` definitions
between body ids of the spec (``SceneSpec.joint``), anchors and axes in world coordinates at the
start pose. Joined bodies do not collide with each other (the joints' default ``collide=False``).
Nothing solver-specific is in the scene settings, so every spec builds under every solver
(``build(name, solver="pgs")`` or ``solver="shock"``).

Tags (``BodySpec.tag``): ``"ground"`` the fixed plane z = 0; ``"wall"`` other fixed bodies
(bridge abutments, the ragdoll pen); ``"bob"`` the pendulum bob; ``"link"`` chain links;
``"plank"`` bridge planks; ``"load"`` the boxes dropped on the bridge; ``"ragdoll"`` ragdoll parts;
``"chassis"`` / ``"wheel"`` the car; ``"brick"`` wall bricks; ``"projectile"`` the ball thrown at
the wall.
"""

from __future__ import annotations

import math

import numpy as np

from tumble.errors import SceneError
from tumble.joints import Ball, Fixed, Hinge, Motor
from tumble.materials import Material
from tumble.scenes.library import _ground, scene
from tumble.scenes.params import int_params as _int
from tumble.scenes.params import num_params as _num
from tumble.scenes.spec import SceneSpec
from tumble.shapes import Box, Capsule, Sphere

GRAVITY = (0.0, 0.0, -9.81)
G = 9.81

# ----------------------------------------------------------------------------------------------
# helpers


def _spec(dt: float, seconds: float) -> SceneSpec:
    return SceneSpec(name="", gravity=GRAVITY, dt=dt, seconds=float(seconds), settings={"iterations": 10})


def _quat_axis(axis, angle: float) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a rotation by ``angle`` [rad] about ``axis``."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    s = math.sin(0.5 * angle)
    return np.array([math.cos(0.5 * angle), s * a[0], s * a[1], s * a[2]])


def _quat_mul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = p
    w2, x2, y2, z2 = q
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def _quat_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _quat_z_to(direction) -> np.ndarray:
    """Quaternion turning local +z onto ``direction`` (a capsule's segment axis)."""
    d = np.asarray(direction, dtype=float)
    d = d / np.linalg.norm(d)
    z = np.array([0.0, 0.0, 1.0])
    c = float(z @ d)
    if c > 1.0 - 1e-12:
        return np.array([1.0, 0.0, 0.0, 0.0])
    if c < -1.0 + 1e-12:
        return np.array([0.0, 1.0, 0.0, 0.0])
    axis = np.cross(z, d)
    return _quat_axis(axis, math.acos(c))


def _tuple(v) -> tuple:
    return tuple(float(x) for x in v)


# ----------------------------------------------------------------------------------------------
# pendulum

#: Pendulum bob: a 5 cm sphere of 1 kg on a massless rod (ball joint to the world point PIVOT).
PENDULUM_PIVOT = (0.0, 0.0, 2.0)
PENDULUM_BOB_RADIUS = 0.05
PENDULUM_BOB_MASS = 1.0
PENDULUM_MATERIAL = Material(density=1000.0, friction=0.5, restitution=0.0, name="pendulum")


@scene("pendulum", "simple pendulum: 1 kg bob on a 1 m massless rod (ball joint to the world), released at 0.2 rad")
def pendulum(*, length: float = 1.0, angle: float = 0.2, seconds: float = 10.0) -> SceneSpec:
    """A sphere bob (radius 5 cm, 1 kg) held by a ``tumble.Ball`` joint whose world-side anchor is
    the pivot (0, 0, 2) and whose body-side anchor is ``length`` [m] from the bob's centre, i.e. a
    massless rod. Released from rest ``angle`` [rad] from the vertical in the x-z plane.

    Small-angle period 2 pi sqrt(l_eff / g) with the physical-pendulum correction
    l_eff = L + 2/5 r^2 / L (2.007 s for the defaults). The joint error (bob centre off the
    sphere of radius ``length`` about the pivot) is ``w.joint_errors()[0]``. dt 1/240 s.
    """
    (L,) = _num("pendulum", length=length)
    (a,) = _num("pendulum", lo=None, angle=angle)
    (secs,) = _num("pendulum", seconds=seconds)
    if L >= PENDULUM_PIVOT[2] - PENDULUM_BOB_RADIUS:
        raise SceneError(f"scene 'pendulum': parameter length={length!r} must be < "
                         f"{PENDULUM_PIVOT[2] - PENDULUM_BOB_RADIUS} m (the bob would start in the ground)")
    s = _spec(1.0 / 240.0, secs)
    _ground(s, PENDULUM_MATERIAL)
    px, py, pz = PENDULUM_PIVOT
    bob = s.add(Sphere(PENDULUM_BOB_RADIUS), (px + L * math.sin(a), py, pz - L * math.cos(a)),
                mass=PENDULUM_BOB_MASS, material=PENDULUM_MATERIAL, name="bob", tag="bob")
    # the joint's anchor is the pivot: on the world side it is fixed in space, on the bob's side it
    # is carried at ``length`` from the bob's centre -- a rigid massless rod.
    s.joint(Ball(None, bob, PENDULUM_PIVOT, name="rod"))
    return s


# ----------------------------------------------------------------------------------------------
# chain

#: Chain link: capsule of radius 2 cm whose tip-to-tip length is ``link_length``; 0.1 kg.
CHAIN_LINK_RADIUS = 0.02
CHAIN_LINK_MASS = 0.1
#: [m] clearance between the fully hung chain's lowest tip and the ground.
CHAIN_CLEARANCE = 0.5
CHAIN_MATERIAL = Material(density=1000.0, friction=0.5, restitution=0.0, name="chain")


@scene("chain50", "50 capsule links (0.1 m, 0.1 kg) on ball joints hanging from a fixed point, released horizontally")
def chain50(*, links: int = 50, link_length: float = 0.1, seconds: float = 10.0, iterations: int = 10) -> SceneSpec:
    """A chain of ``links`` capsules (radius 2 cm, tip-to-tip ``link_length`` [m], 0.1 kg each)
    joined by ``tumble.Ball`` joints at their shared ends, the first link's free end joined to the
    world point (0, 0, H) with H = links * link_length + 0.5 m, so the hanging chain clears the
    ground by 0.5 m.

    The chain starts straight and horizontal along +x at height H, at rest, and swings down: the
    demanding case for joint drift (the outer links reach ~sqrt(2 g H) = 10 m/s for the defaults
    and the tension grows along the chain). Joint ``k`` joins link ``k - 1`` (the world for k = 0)
    to link ``k`` at x = k * link_length; ``w.joint_errors()`` gives the anchor separations.
    dt 1/60 s, ``iterations`` solver sweeps (10).
    """
    (n, iters) = _int("chain50", links=links, iterations=iterations)
    (L, secs) = _num("chain50", link_length=link_length, seconds=seconds)
    r = CHAIN_LINK_RADIUS
    if L <= 2.0 * r:
        raise SceneError(f"scene 'chain50': parameter link_length={link_length!r} must be > {2 * r} m "
                         "(twice the link radius)")
    s = _spec(1.0 / 60.0, secs)
    s.settings["iterations"] = iters
    _ground(s, CHAIN_MATERIAL)
    H = n * L + CHAIN_CLEARANCE
    link = Capsule(r, 0.5 * L - r)                  # tip-to-tip length L
    q = _tuple(_quat_z_to((1.0, 0.0, 0.0)))         # segment along +x
    prev = None
    for k in range(n):
        i = s.add(link, ((k + 0.5) * L, 0.0, H), orientation=q, mass=CHAIN_LINK_MASS, material=CHAIN_MATERIAL,
                  name=f"link{k}", tag="link")
        s.joint(Ball(prev, i, (k * L, 0.0, H), name=f"ball{k}"))
        prev = i
    return s


# ----------------------------------------------------------------------------------------------
# ragdolls

RAGDOLL_MATERIAL = Material(density=1000.0, friction=0.6, restitution=0.0, name="flesh")

#: Ragdoll parts in the standing T-pose (feet at z = 0, facing +x, left side +y):
#: (name, shape, centre [m], segment direction of a capsule or None). Total mass 54.7 kg at 1000 kg/m^3.
RAGDOLL_PARTS = (
    ("pelvis", Capsule(0.10, 0.08), (0.0, 0.0, 0.95), (0.0, 1.0, 0.0)),
    ("torso", Capsule(0.11, 0.14), (0.0, 0.0, 1.30), (0.0, 0.0, 1.0)),
    ("head", Sphere(0.10), (0.0, 0.0, 1.72), None),
    ("upper_arm_l", Capsule(0.045, 0.10), (0.0, 0.33, 1.45), (0.0, 1.0, 0.0)),
    ("lower_arm_l", Capsule(0.040, 0.10), (0.0, 0.62, 1.45), (0.0, 1.0, 0.0)),
    ("upper_arm_r", Capsule(0.045, 0.10), (0.0, -0.33, 1.45), (0.0, 1.0, 0.0)),
    ("lower_arm_r", Capsule(0.040, 0.10), (0.0, -0.62, 1.45), (0.0, 1.0, 0.0)),
    ("thigh_l", Capsule(0.070, 0.15), (0.0, 0.10, 0.68), (0.0, 0.0, 1.0)),
    ("shin_l", Capsule(0.055, 0.15), (0.0, 0.10, 0.24), (0.0, 0.0, 1.0)),
    ("thigh_r", Capsule(0.070, 0.15), (0.0, -0.10, 0.68), (0.0, 0.0, 1.0)),
    ("shin_r", Capsule(0.055, 0.15), (0.0, -0.10, 0.24), (0.0, 0.0, 1.0)),
)

#: Ragdoll joints in the T-pose frame: (kind, parent, child, anchor [m], hinge axis, limits [rad]).
#: Hinge angles are measured from the T-pose; a positive angle bends forward (+x) for the spine and
#: neck, flexes the elbows (forearm towards +x) and knees (shin towards -x).
RAGDOLL_JOINTS = (
    ("hinge", "pelvis", "torso", (0.0, 0.0, 1.05), (0.0, 1.0, 0.0), (-0.3, 0.8)),       # spine
    ("hinge", "torso", "head", (0.0, 0.0, 1.60), (0.0, 1.0, 0.0), (-0.5, 0.5)),         # neck
    ("ball", "torso", "upper_arm_l", (0.0, 0.18, 1.45), None, None),                    # shoulders
    ("ball", "torso", "upper_arm_r", (0.0, -0.18, 1.45), None, None),
    ("hinge", "upper_arm_l", "lower_arm_l", (0.0, 0.475, 1.45), (0.0, 0.0, -1.0), (0.0, 2.4)),  # elbows
    ("hinge", "upper_arm_r", "lower_arm_r", (0.0, -0.475, 1.45), (0.0, 0.0, 1.0), (0.0, 2.4)),
    ("ball", "pelvis", "thigh_l", (0.0, 0.10, 0.90), None, None),                       # hips
    ("ball", "pelvis", "thigh_r", (0.0, -0.10, 0.90), None, None),
    ("hinge", "thigh_l", "shin_l", (0.0, 0.10, 0.46), (0.0, 1.0, 0.0), (0.0, 2.4)),     # knees
    ("hinge", "thigh_r", "shin_r", (0.0, -0.10, 0.46), (0.0, 1.0, 0.0), (0.0, 2.4)),
)
#: T-pose point about which a ragdoll is placed (between the hips) [m].
RAGDOLL_ORIGIN = np.array([0.0, 0.0, 0.90])
#: Half of the ragdoll's thickness when lying down (its largest radius, the torso's) [m].
RAGDOLL_HALF_THICKNESS = 0.11
#: Vertical pitch of the dropped ragdolls [m]: the lowest one's origin starts at RAGDOLL_FIRST_Z.
RAGDOLL_PITCH = 0.3
RAGDOLL_FIRST_Z = 0.3
#: [m] uniform +- horizontal jitter of each ragdoll's origin.
RAGDOLL_JITTER = 0.3
#: Pen: interior half width [m], wall thickness, wall height.
RAGDOLL_PEN_HALF = 1.5
RAGDOLL_PEN_THICKNESS = 0.1
RAGDOLL_PEN_HEIGHT = 0.5


def _add_ragdoll(s: SceneSpec, rot: np.ndarray, origin: np.ndarray, prefix: str) -> None:
    """Add one ragdoll, the T-pose rotated by the quaternion ``rot`` about RAGDOLL_ORIGIN and moved to
    ``origin``."""
    R = _quat_matrix(rot)
    ids = {}
    for name, shape, centre, direction in RAGDOLL_PARTS:
        p = origin + R @ (np.asarray(centre) - RAGDOLL_ORIGIN)
        q = rot if direction is None else _quat_mul(rot, _quat_z_to(direction))
        ids[name] = s.add(shape, _tuple(p), orientation=_tuple(q / np.linalg.norm(q)), density=RAGDOLL_MATERIAL.density,
                          material=RAGDOLL_MATERIAL, name=f"{prefix}{name}", tag="ragdoll")
    for kind, parent, child, anchor, axis, limits in RAGDOLL_JOINTS:
        a = _tuple(origin + R @ (np.asarray(anchor) - RAGDOLL_ORIGIN))
        jn = f"{prefix}{parent}-{child}"
        if kind == "ball":
            s.joint(Ball(ids[parent], ids[child], a, name=jn))
        else:
            s.joint(Hinge(ids[parent], ids[child], a, _tuple(R @ np.asarray(axis)), limits=limits, name=jn))


@scene("ragdolls", "pile of 20 ragdolls (11 capsules/spheres, ball + limited hinge joints) dropped into a low pen")
def ragdolls(*, count: int = 20, seed: int = 0, pen: bool = True, seconds: float = 6.0) -> SceneSpec:
    """``count`` ragdolls of 11 parts each (pelvis, torso, head sphere, upper/lower arms, thighs,
    shins; 1000 kg/m^3, 54.7 kg per ragdoll, mu 0.6) joined by 10 joints: ball joints
    at the shoulders and hips, hinges with limits at the spine, neck, elbows and knees
    (``RAGDOLL_JOINTS``).

    Each ragdoll lies on its back or front (``seed``: random flip and yaw, numpy
    ``default_rng(seed)``), its hip point jittered by +-0.3 m horizontally, one above the other:
    ragdoll k's hip point starts at z = 0.3 + 0.3 k (the lying bodies are 0.22 m thick, so nothing
    overlaps), and they fall into a pile. ``pen``: fixed walls 0.5 m high around a 3 x 3 m floor.
    dt 1/60 s, 10 iterations.
    """
    (n,) = _int("ragdolls", count=count)
    (secs,) = _num("ragdolls", seconds=seconds)
    s = _spec(1.0 / 60.0, secs)
    _ground(s, RAGDOLL_MATERIAL)
    if pen:
        a, t, h = RAGDOLL_PEN_HALF, RAGDOLL_PEN_THICKNESS, RAGDOLL_PEN_HEIGHT
        x_wall = Box((0.5 * t, a, 0.5 * h))
        y_wall = Box((a + t, 0.5 * t, 0.5 * h))
        for sx in (-1.0, 1.0):
            s.add(x_wall, (sx * (a + 0.5 * t), 0.0, 0.5 * h), fixed=True, material=RAGDOLL_MATERIAL,
                  name=f"pen{'-+'[sx > 0]}x", tag="wall")
        for sy in (-1.0, 1.0):
            s.add(y_wall, (0.0, sy * (a + 0.5 * t), 0.5 * h), fixed=True, material=RAGDOLL_MATERIAL,
                  name=f"pen{'-+'[sy > 0]}y", tag="wall")
    rng = np.random.default_rng(int(seed))
    # lying on the back: the T-pose's +x (front) turned up, its head towards -x
    lie = _quat_axis((0.0, 1.0, 0.0), -0.5 * math.pi)
    for k in range(n):
        flip = math.pi * int(rng.integers(0, 2))       # face down: turn about the body's long axis
        yaw = rng.uniform(0.0, 2.0 * math.pi)
        rot = _quat_mul(_quat_axis((0.0, 0.0, 1.0), yaw), _quat_mul(_quat_axis((1.0, 0.0, 0.0), flip), lie))
        xy = rng.uniform(-RAGDOLL_JITTER, RAGDOLL_JITTER, 2)
        origin = np.array([xy[0], xy[1], RAGDOLL_FIRST_Z + RAGDOLL_PITCH * k])
        _add_ragdoll(s, rot, origin, f"ragdoll{k}.")
    return s


# ----------------------------------------------------------------------------------------------
# bridge

#: Plank: 0.25 m along the span (x) x 1.0 m wide (y) x 5 cm thick, oak-like 600 kg/m^3 (7.5 kg).
PLANK_HALF = (0.125, 0.5, 0.025)
BRIDGE_MATERIAL = Material(density=600.0, friction=0.6, restitution=0.0, name="wood")
#: Height [m] of the abutment tops, where the end hinges sit (plank centre line).
BRIDGE_HEIGHT = 2.0
#: [rad] tilt of the end planks at the start: the deck starts as a shallow sagging polygon (tilts
#: varying linearly from -SAG_TILT to +SAG_TILT along the span) so the hinge chain has slack; a
#: straight deck exactly as long as the gap would be a taut chain that can only carry load by
#: infinite tension. With 0.15 rad (0.19 m sag) the loaded deck's tension (~4 kN) stretched the
#: 21 hinges ~1 cm each and under pgs the deck bounced +-0.2 m for 8 s; 0.4 rad (0.49 m) settles
#: (measured before commit 2f02c78 made the joint projection remove 0.3 of the error per visit).
BRIDGE_SAG_TILT = 0.4
#: Abutment: a fixed concrete block 1 x 1.2 m, BRIDGE_HEIGHT tall, on each side.
ABUTMENT_HALF = (0.5, 0.6, 0.5 * BRIDGE_HEIGHT)
ABUTMENT_MATERIAL = Material(density=2400.0, friction=0.6, restitution=0.0, name="concrete")
#: Load boxes: 0.3 m cubes of 20 kg, dropped from LOAD_DROP m above the deck at LOAD_TIME s.
LOAD_HALF = 0.15
LOAD_MASS = 20.0
LOAD_DROP = 0.3
LOAD_TIME = 1.0
LOAD_MATERIAL = Material(density=LOAD_MASS / (2 * LOAD_HALF) ** 3, friction=0.6, restitution=0.0, name="crate")


@scene("bridge", "bridge: 20 planks hinged edge to edge between two abutments, 5 boxes of 20 kg dropped on it")
def bridge(*, planks: int = 20, loads: int = 5, load_mass: float = LOAD_MASS, seconds: float = 8.0) -> SceneSpec:
    """``planks`` planks (``PLANK_HALF``: 0.25 x 1.0 x 0.05 m, 7.5 kg) in a row along x, each joined
    to the next by a ``tumble.Hinge`` about y at their shared edge (on the planks' centre line), and
    the end planks hinged the same way to two fixed abutment blocks whose inner top edges are the
    end hinges, at z = 2 m.

    The deck starts as a sagging polygon (plank tilts from -0.4 to +0.4 rad along the span, a span of
    4.8 m and 0.49 m sag for 20 planks) and is released at rest; it swings into its hanging shape. At
    t = 1 s, ``loads`` boxes (0.3 m cubes of ``load_mass`` kg, tag ``"load"``) appear 0.3 m above
    the deck, spread evenly over the middle 60 % of the span, and fall onto it. dt 1/60 s,
    10 iterations.
    """
    (n,) = _int("bridge", planks=planks)
    (nl,) = _int("bridge", lo=0, loads=loads)
    (m_load, secs) = _num("bridge", load_mass=load_mass, seconds=seconds)
    s = _spec(1.0 / 60.0, secs)
    _ground(s, ABUTMENT_MATERIAL)
    lp = 2.0 * PLANK_HALF[0]
    tilts = [BRIDGE_SAG_TILT * (2.0 * i + 1.0 - n) / n for i in range(n)]     # negative: going down
    # hinge points P_0 .. P_n along the deck, P_0 at the left abutment's edge (x = 0 for now)
    pts = [np.zeros(3)]
    for th in tilts:
        pts.append(pts[-1] + lp * np.array([math.cos(th), 0.0, math.sin(th)]))
    span = float(pts[-1][0])
    shift = np.array([-0.5 * span, 0.0, BRIDGE_HEIGHT])
    pts = [p + shift for p in pts]
    ax, ay, az = ABUTMENT_HALF
    left = s.add(Box(ABUTMENT_HALF), (pts[0][0] - ax, 0.0, az), fixed=True, material=ABUTMENT_MATERIAL,
                 name="abutment_left", tag="wall")
    right = s.add(Box(ABUTMENT_HALF), (pts[-1][0] + ax, 0.0, az), fixed=True, material=ABUTMENT_MATERIAL,
                  name="abutment_right", tag="wall")
    plank = Box(PLANK_HALF)
    ids = []
    for i, th in enumerate(tilts):
        c = 0.5 * (pts[i] + pts[i + 1])
        # a rotation by -th about y turns the plank's +x onto (cos th, 0, sin th)
        ids.append(s.add(plank, _tuple(c), orientation=_tuple(_quat_axis((0.0, 1.0, 0.0), -th)),
                         density=BRIDGE_MATERIAL.density, material=BRIDGE_MATERIAL, name=f"plank{i}", tag="plank"))
    y = (0.0, 1.0, 0.0)
    chain = [left, *ids, right]
    for k in range(n + 1):
        s.joint(Hinge(chain[k], chain[k + 1], _tuple(pts[k]), y, name=f"hinge{k}"))
    if nl:
        box = Box((LOAD_HALF, LOAD_HALF, LOAD_HALF))
        for j in range(nl):
            # even spread over the middle 60 % of the span; each box above its plank's centre
            f = 0.5 if nl == 1 else 0.2 + 0.6 * j / (nl - 1)
            i = min(n - 1, int(f * n))
            c = 0.5 * (pts[i] + pts[i + 1])
            z = c[2] + PLANK_HALF[2] + LOAD_HALF + LOAD_DROP
            s.add(box, (float(c[0]), 0.0, float(z)), mass=m_load, material=LOAD_MATERIAL, name=f"load{j}", tag="load",
                  spawn_time=LOAD_TIME)
    return s


# ----------------------------------------------------------------------------------------------
# motor car

#: Chassis: a 1.2 x 0.6 x 0.2 m box of 20 kg whose centre rides CHASSIS_LIFT above the wheel axles.
CHASSIS_HALF = (0.6, 0.3, 0.1)
CHASSIS_MASS = 20.0
CHASSIS_LIFT = 0.05
#: Wheels: spheres of radius 0.2 m, 2 kg, at x = +-WHEEL_BASE / 2, y = +-TRACK / 2 (outside the chassis).
WHEEL_RADIUS = 0.2
WHEEL_MASS = 2.0
WHEEL_BASE = 0.9
TRACK = 0.8
CAR_MATERIAL = Material(density=500.0, friction=1.0, restitution=0.0, name="rubber")


@scene("motor_car", "car: 20 kg box chassis on 4 sphere wheels (r 0.2 m) on motorised hinges, driving +x, mu 1")
def motor_car(*, wheel_speed: float = 10.0, max_torque: float = 20.0, seconds: float = 5.0) -> SceneSpec:
    """A chassis box (``CHASSIS_HALF``, 20 kg) on four sphere wheels (radius 0.2 m, 2 kg) joined to it
    by ``tumble.Hinge`` joints about +y through the wheel centres, each with a velocity motor
    ``Motor(speed=wheel_speed, max_force=max_torque)`` [rad/s, N m]. A wheel spinning at +w about
    +y rolls towards +x (v = w x r with r = (0, 0, -R) from the centre to the contact point gives
    the contact point (-w R, 0, 0) relative to the centre, so it is at rest when the centre moves at
    +w R): the car drives +x at ``wheel_speed * 0.2`` m/s (2 m/s by default) once up to speed.
    Ground and wheels have mu 1 (the car's 28 kg can push with up to 275 N; the motors' 4 x 20 N m /
    0.2 m = 400 N would spin the wheels, so the start is friction-limited: mu g ~ 10 m/s^2, 2 m/s
    after ~0.2 s).
    The wheels start resting on the ground. dt 1/120 s, 10 iterations.
    """
    (speed,) = _num("motor_car", lo=None, wheel_speed=wheel_speed)
    (torque, secs) = _num("motor_car", max_torque=max_torque, seconds=seconds)
    s = _spec(1.0 / 120.0, secs)
    _ground(s, CAR_MATERIAL)
    R = WHEEL_RADIUS
    chassis = s.add(Box(CHASSIS_HALF), (0.0, 0.0, R + CHASSIS_LIFT), mass=CHASSIS_MASS, material=CAR_MATERIAL,
                    name="chassis", tag="chassis")
    motor = Motor(speed=speed, max_force=torque)
    for sx, fb in ((1.0, "front"), (-1.0, "rear")):
        for sy, lr in ((1.0, "left"), (-1.0, "right")):
            c = (0.5 * sx * WHEEL_BASE, 0.5 * sy * TRACK, R)
            wheel = s.add(Sphere(R), c, mass=WHEEL_MASS, material=CAR_MATERIAL, name=f"wheel_{fb}_{lr}", tag="wheel")
            s.joint(Hinge(chassis, wheel, c, (0.0, 1.0, 0.0), motor=motor, name=f"axle_{fb}_{lr}"))
    return s


# ----------------------------------------------------------------------------------------------
# breakable wall

#: Brick: 0.4 (x) x 0.2 (y, the wall's thickness) x 0.2 m, 2000 kg/m^3 (32 kg), stacked in columns.
WALL_BRICK_HALF = (0.2, 0.1, 0.1)
WALL_BRICK_MATERIAL = Material(density=2000.0, friction=0.6, restitution=0.0, name="brick")
#: [m] mortar gap between neighbouring bricks (and the welds' anchors at its middle).
WALL_MORTAR = 0.002
#: Default weld strength: break force [N] and torque [N m]. The wall's static load is at most
#: 8 bricks x 32 kg x 9.81 = 2.5 kN on a bottom weld (if a column carried its own weight only; the
#: welded grid spreads it); the defaults are ~4x that and 0.2 m (a brick height) x that force.
WALL_BREAK_FORCE = 1.0e4
WALL_BREAK_TORQUE = 2.0e3
#: Ball: iron (7874 kg/m^3), radius 0.25 m (515 kg), thrown along +y at the wall's middle.
BALL_MATERIAL = Material(density=7874.0, friction=0.4, restitution=0.0, name="iron")
BALL_RADIUS = 0.25
#: [m] distance from the wall's face at which the ball appears, and when [s].
BALL_DISTANCE = 1.0
BALL_TIME = 1.0


@scene("breakable_wall", "wall of 10x8 bricks welded by breakable fixed joints, smashed by a 515 kg iron ball at t=1 s")
def breakable_wall(*, columns: int = 10, rows: int = 8, break_force: float = WALL_BREAK_FORCE,
                   break_torque: float = WALL_BREAK_TORQUE, ball_speed: float = 10.0,
                   seconds: float = 4.0) -> SceneSpec:
    """``columns`` x ``rows`` bricks (``WALL_BRICK_HALF``: 0.4 x 0.2 x 0.2 m, 32 kg) in straight
    columns in the x-z plane (wall thickness along y), 2 mm apart; every brick is welded
    (``tumble.Fixed``, anchor at the middle of the gap between the faces) to its right-hand and
    upper neighbours, and the bottom row to the ground, each weld breaking above ``break_force`` [N]
    or ``break_torque`` [N m] (``w.events`` lists ``JointBreak``).

    At t = 1 s an iron ball (radius 0.25 m, 515 kg, tag ``"projectile"``) appears 1 m in front of the
    wall (y < 0) flying along +y at ``ball_speed`` [m/s], aimed at the wall's centre (it starts
    higher by the ballistic drop over its flight). Before it arrives the wall just stands
    (no weld breaks); the impact breaks welds around the hit. dt 1/120 s, 10 iterations.
    """
    (nc, nr) = _int("breakable_wall", columns=columns, rows=rows)
    (bf, bt, v, secs) = _num("breakable_wall", break_force=break_force, break_torque=break_torque,
                             ball_speed=ball_speed, seconds=seconds)
    s = _spec(1.0 / 120.0, secs)
    ground = _ground(s, WALL_BRICK_MATERIAL)
    hx, hy, hz = WALL_BRICK_HALF
    px, pz = 2.0 * hx + WALL_MORTAR, 2.0 * hz + WALL_MORTAR
    brick = Box(WALL_BRICK_HALF)
    ids = np.zeros((nr, nc), dtype=np.int64)
    for r in range(nr):
        for c in range(nc):
            ids[r, c] = s.add(brick, ((c - 0.5 * (nc - 1)) * px, 0.0, hz + r * pz), density=WALL_BRICK_MATERIAL.density,
                              material=WALL_BRICK_MATERIAL, name=f"brick{r}_{c}", tag="brick")
    kw = dict(break_force=bf, break_torque=bt)
    for r in range(nr):
        for c in range(nc):
            x = (c - 0.5 * (nc - 1)) * px
            z = hz + r * pz
            b = int(ids[r, c])
            if r == 0:
                s.joint(Fixed(ground, b, (x, 0.0, 0.0), name=f"weld_ground_{c}", **kw))
            else:
                s.joint(Fixed(int(ids[r - 1, c]), b, (x, 0.0, z - 0.5 * pz), name=f"weld{r - 1}_{c}-{r}_{c}", **kw))
            if c > 0:
                s.joint(Fixed(int(ids[r, c - 1]), b, (x - 0.5 * px, 0.0, z), name=f"weld{r}_{c - 1}-{r}_{c}", **kw))
    target_z = 0.5 * nr * pz
    t_flight = BALL_DISTANCE / v
    drop = 0.5 * G * t_flight * t_flight
    s.add(Sphere(BALL_RADIUS), (0.0, -(hy + BALL_DISTANCE + BALL_RADIUS), target_z + drop),
          linear_velocity=(0.0, v, 0.0), density=BALL_MATERIAL.density, material=BALL_MATERIAL, name="ball",
          tag="projectile", spawn_time=BALL_TIME)
    return s
