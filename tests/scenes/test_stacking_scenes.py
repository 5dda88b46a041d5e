"""The large structured-stacking scenes of paper 000 (tumble.scenes.stacking), timed body spawns
(BodySpec.spawn_time, World.spawn, the peers) and the metrics with absent (not yet spawned) bodies.

Geometry is checked in pure NumPy on the specs; a World is stepped only a few times, on small
versions of the scenes."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import tumble as tb
import tumble.scenes as scenes
from tumble._core.math3d import quat_to_matrices
from tumble.errors import BodyError, SceneError, TumbleError
from tumble.scenes import SceneSpec
from tumble.scenes.metrics import SceneMetrics, spec_aabbs
from tumble.scenes.stacking import (
    INCLINE_HALF,
    LETTER_RELIEF,
    TOWER_BRICK_HALF,
    TOWER_GAP,
    incline_pose,
    ring_outer_radius,
    ring_radius,
)
from tumble.shapes import Box, Plane, Sphere

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

G = 9.81
NAMES = ["box_stack25", "tower320", "ball_grid125", "falling_roof", "tower_roof", "inclined_letters"]
SMALL = {  # small versions for stepping a World
    "box_stack25": dict(count=3),
    "tower320": dict(courses=2, per_course=8),
    "ball_grid125": dict(n=2),
    "falling_roof": dict(courses=2, per_course=8, roof_time=0.02, cannon_time=0.03),
    "tower_roof": dict(courses=2, per_course=8, impact_time=0.33, cannon_time=0.03),
    "inclined_letters": dict(count=20, text="TU"),
}
EXPECTED_COUNTS = {  # name -> (stack, projectile, pile, fixed)
    "box_stack25": (25, 0, 0, 1),
    "tower320": (320, 0, 0, 1),
    "ball_grid125": (125, 0, 0, 1),
    "falling_roof": (640, 2, 0, 1),
    "tower_roof": (800, 2, 0, 1),
    "inclined_letters": (0, 0, 1000, 1 + 1 + 21),
}


def _spawned(s):
    return [i for i, b in enumerate(s.bodies) if b.spawn_time > 0]


# ------------------------------------------------------------------------------------------------
# registry, common conventions

@pytest.mark.parametrize("name", NAMES)
def test_registered_with_paper_conventions(name):
    assert name in scenes.names()
    s = scenes.spec(name)
    assert s.dt == 0.01 and tuple(s.gravity) == (0.0, 0.0, -9.81)
    assert s.settings == {"iterations": 10}
    stack, proj, pile, fixed = EXPECTED_COUNTS[name]
    assert (len(s.tagged("stack")), len(s.tagged("projectile")), len(s.tagged("pile"))) == (stack, proj, pile)
    assert sum(b.fixed for b in s.bodies) == fixed
    ground = s.tagged("ground")
    assert len(ground) == 1 and isinstance(s.bodies[ground[0]].shape, Plane)
    for b in s.bodies:
        assert isinstance(b.shape, (Box, Sphere, Plane))
        assert b.tag in {"ground", "wall", "stack", "projectile", "pile"}
        assert b.fixed == (b.tag in {"ground", "wall"})
        assert b.material.restitution == 0.0 or b.name == "block"
    from tumble.scenes import library

    assert library.REGISTRY[name].builder.__doc__ and "000" in library.REGISTRY[name].builder.__doc__


@pytest.mark.parametrize("name", NAMES)
def test_small_versions_build_and_step_under_pgs(name):
    s = scenes.spec(name, **SMALL[name])
    w = s.build(solver="pgs")
    present = [i for i, b in enumerate(s.bodies) if b.spawn_time == 0]
    assert w.body_count == len(present)
    assert len(w.pending_spawns) == len(_spawned(s))
    for _ in range(5):
        w.step()
    assert w.body_count == len(s.bodies)          # every small version spawns within 5 steps
    for i, b in enumerate(s.bodies):              # body id == spec index
        assert w.body_name(i) == b.name
    assert np.all(np.isfinite(w.positions))


def test_bad_parameters_name_themselves():
    with pytest.raises(SceneError, match="count"):
        scenes.spec("box_stack25", count=0)
    with pytest.raises(SceneError, match="per_course"):
        scenes.spec("tower320", per_course=2)
    with pytest.raises(SceneError, match="penetration"):
        scenes.spec("ball_grid125", penetration=1.0)
    with pytest.raises(SceneError, match="cannon_time"):
        scenes.spec("falling_roof", roof_time=2.0, cannon_time=1.0)
    with pytest.raises(SceneError, match="impact_time"):
        scenes.spec("tower_roof", impact_time=0.1)
    with pytest.raises(SceneError, match="seconds"):
        scenes.spec("tower_roof", seconds=math.nan)
    with pytest.raises(SceneError, match="text"):
        scenes.spec("inclined_letters", text="TUMBLE?")


# ------------------------------------------------------------------------------------------------
# geometry

def test_box_stack25_rests_exactly():
    s = scenes.spec("box_stack25")
    lo, hi = spec_aabbs(s)
    ids = s.tagged("stack")
    assert len(ids) == 25
    order = ids[np.argsort(lo[ids, 2])]
    assert lo[order[0], 2] == 0.0
    assert np.all(np.abs(lo[order[1:], 2] - hi[order[:-1], 2]) <= 1e-12)
    assert np.all(lo[ids, :2] == lo[ids[0], :2]) and np.all(hi[ids, :2] == hi[ids[0], :2])   # one column
    assert hi[order[-1], 2] == pytest.approx(12.5)


def _rect(b):
    """(corners (4,2), axes (2,2)) of a z-aligned box spec in the x-y plane."""
    R = quat_to_matrices(np.asarray(b.orientation, dtype=float)[None])[0]
    hx, hy, _ = b.shape.half_extents
    ax = R[:2, 0] / np.linalg.norm(R[:2, 0])
    ay = R[:2, 1] / np.linalg.norm(R[:2, 1])
    c = np.asarray(b.position[:2])
    corners = np.array([c + sx * hx * ax + sy * hy * ay for sx in (-1, 1) for sy in (-1, 1)])
    return corners, np.array([ax, ay])


def _separation_2d(a, b):
    """Largest separation [m] of two rectangles along their 4 face normals (> 0: disjoint; for
    rectangles this SAT value is exact unless the closest features are two corners)."""
    ca, axa = _rect(a)
    cb, axb = _rect(b)
    best = -np.inf
    for n in np.vstack([axa, axb]):
        pa, pb = ca @ n, cb @ n
        best = max(best, pb.min() - pa.max(), pa.min() - pb.max())
    return best


def _courses(s):
    ids = s.tagged("stack")
    z = np.array([s.bodies[i].position[2] for i in ids])
    k = np.round((z - TOWER_BRICK_HALF[2]) / (2 * TOWER_BRICK_HALF[2])).astype(int)
    return ids, k


@pytest.mark.parametrize("name,courses", [("tower320", 16), ("falling_roof", 32), ("tower_roof", 40)])
def test_ring_towers(name, courses):
    s = scenes.spec(name)
    n = 20
    ids, k = _courses(s)
    assert np.bincount(k).tolist() == [n] * courses
    R = ring_radius(n)
    hx, hy, hz = TOWER_BRICK_HALF
    assert R >= hx / math.tan(math.pi / n) + hy
    lo, hi = spec_aabbs(s)
    for c in range(courses):
        sel = ids[k == c]
        bricks = [s.bodies[i] for i in sel]
        # centres on the ring, long axis tangential, running bond (rotated by pi/n per course)
        p = np.array([b.position for b in bricks])
        assert np.allclose(np.hypot(p[:, 0], p[:, 1]), R, atol=1e-12)
        ang = np.sort(np.mod(np.arctan2(p[:, 1], p[:, 0]) - (c % 2) * math.pi / n + 1e-9, 2 * math.pi))
        assert np.allclose(ang - 1e-9, 2 * math.pi / n * np.arange(n), atol=1e-9)
        for b in bricks:
            corners, axes = _rect(b)
            radial = np.asarray(b.position[:2]) / R
            assert abs(axes[0] @ radial) < 1e-12                     # local x tangential
        # no two bricks of a course intersect; neighbours are TOWER_GAP apart at the inner corners
        seps = np.array([[_separation_2d(a, b) for b in bricks] for a in bricks])
        off = ~np.eye(n, dtype=bool)
        assert seps[off].min() > 0.0
        order = np.argsort(np.mod(np.arctan2(p[:, 1], p[:, 0]), 2 * math.pi))
        for j in range(n):
            a, b = bricks[order[j]], bricks[order[(j + 1) % n]]
            ca, _ = _rect(a)
            cb, _ = _rect(b)
            d = np.linalg.norm(ca[:, None, :] - cb[None, :, :], axis=2).min()
            assert d == pytest.approx(TOWER_GAP, abs=1e-9)          # the inner corners
        # courses rest exactly on each other (and course 0 on the ground)
        bottom = lo[sel, 2]
        assert np.all(np.abs(bottom - (0.0 if c == 0 else hi[ids[k == c - 1], 2].max())) <= 1e-12)
        assert np.ptp(hi[sel, 2]) <= 1e-12
    assert ring_outer_radius(n) == pytest.approx(math.hypot(R + hy, hx))


def test_ball_grid_initial_penetration_is_documented_value():
    r, p = 0.25, 0.2
    s = scenes.spec("ball_grid125")
    ids = s.tagged("stack")
    assert len(ids) == 125
    pos = np.array([s.bodies[i].position for i in ids])
    rad = np.array([s.bodies[i].shape.radius for i in ids])
    assert np.all(rad == r)
    d = np.linalg.norm(pos[:, None] - pos[None], axis=2) + np.eye(125) * 1e9
    ball_pen = (2 * r - d).max()
    ground_pen = (r - pos[:, 2]).max()
    assert ball_pen == pytest.approx(2 * p * r, abs=1e-12) == pytest.approx(0.1)     # documented 0.1 m
    assert ground_pen == pytest.approx(p * r, abs=1e-12) == pytest.approx(0.05)
    assert np.isclose(d, 0.8 * 2 * r).sum() == 2 * 3 * 5 * 5 * 4                      # grid neighbours
    s2 = scenes.spec("ball_grid125", penetration=0.0)
    pos2 = np.array([b.position for b in s2.bodies if b.tag == "stack"])
    d2 = np.linalg.norm(pos2[:, None] - pos2[None], axis=2) + np.eye(125) * 1e9
    assert d2.min() == pytest.approx(2 * r) and pos2[:, 2].min() == pytest.approx(r)


def test_falling_roof_timeline():
    s = scenes.spec("falling_roof")
    roof, ball = (s.bodies[i] for i in _spawned(s))
    assert (roof.name, ball.name) == ("roof", "cannonball") and roof.tag == ball.tag == "projectile"
    assert (roof.spawn_time, ball.spawn_time) == (1.0, 3.0)
    top = 32 * 0.2
    assert roof.position[2] - roof.shape.half_extents[2] == pytest.approx(top + 0.25)
    assert min(roof.shape.half_extents[:2]) > ring_outer_radius(20)                   # covers the tower
    m_brick = 0.4 * 0.2 * 0.2 * 2000
    assert np.prod(roof.shape.half_extents) * 8 * roof.material.density > 10 * m_brick
    _check_cannonball(ball, target=0.5 * top, speed=15.0, distance=3.0)


def test_tower_roof_timeline():
    s = scenes.spec("tower_roof")
    assert len(s.tagged("stack")) == 800
    block, ball = (s.bodies[i] for i in _spawned(s))
    top = 40 * 0.2
    fall = block.position[2] - block.shape.half_extents[2] - top
    assert fall == pytest.approx(0.5)
    assert block.spawn_time + math.sqrt(2 * fall / G) == pytest.approx(10.0)           # lands at impact_time
    assert min(block.shape.half_extents[:2]) > ring_outer_radius(20)
    m_block = np.prod(block.shape.half_extents) * 8 * block.material.density
    assert m_block == pytest.approx(16384.0) and block.material.restitution == 0.2
    assert ball.spawn_time == 13.0 and ball.material.density == 7874.0 and ball.shape.radius == 0.25
    _check_cannonball(ball, target=0.5 * top, speed=18.0, distance=4.0)
    assert s.seconds == 16.0


def _check_cannonball(ball, target, speed, distance):
    v = np.asarray(ball.linear_velocity)
    assert v[0] == speed and v[1] == 0 and v[2] == 0
    x_face = -ring_outer_radius(20)
    t = (x_face - ball.shape.radius - ball.position[0]) / speed
    assert t * speed == pytest.approx(distance)
    assert ball.position[2] - 0.5 * G * t * t == pytest.approx(target)                  # hits mid-height


def _sphere_box_distance(c, r, box_c, R, h):
    """Signed distance [m] from sphere surfaces (k,) to an oriented box (>0: apart)."""
    local = (c - box_c) @ R                                     # R^T (c - box_c)
    q = np.abs(local) - np.asarray(h)
    outside = np.linalg.norm(np.maximum(q, 0.0), axis=1)
    inside = np.minimum(q.max(axis=1), 0.0)
    return outside + inside - r


def test_inclined_letters_geometry():
    s = scenes.spec("inclined_letters")
    balls = [b for b in s.bodies if b.tag == "pile"]
    assert len(balls) == 1000
    c = np.array([b.position for b in balls])
    r = np.array([b.shape.radius for b in balls])
    assert r.min() >= 0.05 and r.max() <= 0.1 and np.ptp(r) > 0.04                     # mixed sizes
    gap = np.linalg.norm(c[:, None] - c[None], axis=2) - r[:, None] - r[None] + np.eye(1000) * 1e9
    assert gap.min() > 0.005                                                           # no two touch
    assert (c[:, 2] - r).min() > 0.0
    center, q, R = incline_pose(25.0)
    incline = next(b for b in s.bodies if b.name == "incline")
    assert np.allclose(incline.position, center) and np.allclose(incline.orientation, q)
    # the incline: its lowest edge on the ground, slope 25 deg descending to +x
    corners = np.array([center + R @ (np.array([sx, sy, sz]) * INCLINE_HALF)
                        for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    assert corners[:, 2].min() == pytest.approx(0.0, abs=1e-12)
    normal = R[:, 2]
    assert math.degrees(math.acos(normal[2])) == pytest.approx(25.0) and normal[0] > 0
    letters = [b for b in s.bodies if b.name.startswith("letter")]
    assert len(letters) == 21
    boxes = [incline] + letters
    for b in boxes:
        assert b.fixed and b.tag == "wall"
        d = _sphere_box_distance(c, r, np.asarray(b.position), R, b.shape.half_extents)
        assert d.min() > 0.1                                                           # balls start clear
    # letters sit on the incline's surface (rotated with it), inside its outline, and do not overlap
    rects = []
    for b in letters:
        assert np.allclose(b.orientation, q)
        local = R.T @ (np.asarray(b.position) - center)
        hu, hv, hn = b.shape.half_extents
        assert hn == pytest.approx(0.5 * LETTER_RELIEF)
        assert local[2] - hn == pytest.approx(INCLINE_HALF[2], abs=1e-12)
        assert abs(local[0]) + hu <= INCLINE_HALF[0] and abs(local[1]) + hv <= INCLINE_HALF[1]
        rects.append((local[0] - hu, local[0] + hu, local[1] - hv, local[1] + hv))
    rects = np.array(rects)
    for i in range(len(rects)):
        for j in range(i + 1, len(rects)):
            ov_u = min(rects[i, 1], rects[j, 1]) - max(rects[i, 0], rects[j, 0])
            ov_v = min(rects[i, 3], rects[j, 3]) - max(rects[i, 2], rects[j, 2])
            assert not (ov_u > 1e-12 and ov_v > 1e-12), (letters[i].name, letters[j].name)
    # the balls fall onto the incline: every ball is above its upper part
    assert c[:, 0].max() < 0.0 and c[:, 0].min() > corners[:, 0].min()


def test_inclined_letters_seed():
    a = scenes.spec("inclined_letters", count=50, seed=1)
    b = scenes.spec("inclined_letters", count=50, seed=1)
    c = scenes.spec("inclined_letters", count=50, seed=2)
    ra = [x.shape.radius for x in a.bodies if x.tag == "pile"]
    assert ra == [x.shape.radius for x in b.bodies if x.tag == "pile"]
    assert ra != [x.shape.radius for x in c.bodies if x.tag == "pile"]


# ------------------------------------------------------------------------------------------------
# timed spawns: SceneSpec validation, World.spawn

def _spawn_spec(t_ball=0.05, v=(3.0, 0.0, 0.0), z=2.0):
    s = SceneSpec("spawn", gravity=(0.0, 0.0, -G), dt=0.01, settings={"iterations": 10})
    s.add(Plane(), fixed=True, name="ground", tag="ground")
    s.add(Box((0.2, 0.2, 0.2)), (0.0, 0.0, 0.2), density=500.0, name="box", tag="stack")
    s.add(Sphere(0.1), (-3.0, 0.0, z), linear_velocity=v, density=1000.0, name="ball", tag="projectile",
          spawn_time=t_ball)
    return s


@pytest.mark.parametrize("bad,match", [
    ([0.0, 0.2, 0.0], "body 2 .'late'.*non-decreasing"),          # a t=0 body after a spawned one
    ([0.0, 0.2, 0.1], "body 2 .'late'.*non-decreasing"),          # out of order
    ([0.0, -0.1, 0.2], "body 1 .'early'.*finite and >= 0"),
    ([0.0, math.nan, 0.2], "body 1 .'early'.*finite and >= 0"),
    ([0.0, math.inf, math.inf], "body 1 .'early'.*finite"),
    ([0.0, "soon", 0.2], "body 1 .'early'.*not a number"),
])
def test_spawn_order_is_validated(bad, match):
    s = SceneSpec("bad")
    for t, name in zip(bad, ["ground", "early", "late"]):
        if name == "ground":
            s.add(Plane(), fixed=True, name=name, spawn_time=t)
        else:
            s.add(Sphere(0.1), (0.0, 0.0, 1.0), name=name, spawn_time=t)
    with pytest.raises(SceneError, match=match):
        s.validate()
    with pytest.raises(TumbleError, match=match):
        s.build()


def test_world_spawn_validates_at_queue_time():
    w = tb.World()
    for kw, match in [
        (dict(time=-1.0), "spawn 0 .'b'.*time=-1.0"),
        (dict(time=math.nan), "time=nan"),
        (dict(time=True), "time=True"),
        (dict(shape="ball"), "shape='ball'"),
        (dict(mass=-1.0), "mass=-1.0"),
        (dict(density=math.nan), "density=nan"),
        (dict(position=(0, 0, math.nan)), "position"),
        (dict(orientation=(0, 0, 0, 0)), "zero quaternion"),
        (dict(linear_velocity=(1, 2)), "linear_velocity"),
        (dict(material="iron"), "material"),
        (dict(colour="red"), "colour"),
        (dict(shape=Plane()), "Plane"),
    ]:
        args = dict(time=1.0, shape=Sphere(0.1), name="b")
        args.update(kw)
        with pytest.raises(BodyError, match=match):
            w.spawn(args.pop("time"), args.pop("shape"), **args)
    assert w.pending_spawns == ()
    w.spawn(0.5, Plane(), fixed=True, name="late ground")                 # a fixed plane is fine
    assert w.pending_spawns == ((0.5, "late ground"),)


def test_world_spawn_timing_and_queue_order():
    w = tb.World()
    w.add_body(Plane(), fixed=True)
    w.spawn(0.055, Sphere(0.1), (1.0, 0.0, 1.0), name="c")                 # off the step grid
    w.spawn(0.05, Sphere(0.1), (0.0, 0.0, 1.0), name="a", linear_velocity=(1.0, 0.0, 0.0))
    w.spawn(0.05, Sphere(0.1), (0.5, 0.0, 1.0), name="b", mass=2.0)
    counts = []
    for _ in range(8):
        start = w.time
        w.step(0.01)
        counts.append((round(start, 6), w.body_count))
    # a and b join in the step that starts at 0.05 (in queue order), c in the one at 0.06
    assert counts == [(0.0, 1), (0.01, 1), (0.02, 1), (0.03, 1), (0.04, 1), (0.05, 3), (0.06, 4), (0.07, 4)]
    assert [w.body_name(i) for i in range(4)] == ["", "a", "b", "c"]
    assert w.mass(2) == 2.0 and w.pending_spawns == ()
    assert w.position(1)[0] == pytest.approx(3 * 0.01, abs=1e-12)          # moved 3 steps at 1 m/s


def test_scene_spawns_appear_at_their_step_with_spec_ids():
    s = _spawn_spec(t_ball=0.05)
    w = s.build(solver="pgs")
    assert w.body_count == 2 and w.pending_spawns == ((0.05, "ball"),)
    for step in range(7):
        start = w.time
        w.step()
        assert w.body_count == (3 if start >= 0.05 - 1e-9 else 2), step
    assert w.body_name(2) == "ball"
    # it entered with the spec's velocity and has flown 2 steps (symplectic Euler over the pgs
    # substeps h = dt / k: z0 - g h^2 (1 + ... + 2k); k = 1 before issue 18's defaults)
    assert w.linear_velocity(2)[0] == pytest.approx(3.0)
    assert w.position(2)[0] == pytest.approx(-3.0 + 2 * 0.03, abs=1e-9)
    k = w.settings.substeps
    assert w.position(2)[2] == pytest.approx(2.0 - G * (0.01 / k) ** 2 * k * (2 * k + 1), abs=1e-9)


def test_tower_roof_spawns_in_a_small_world():
    s = scenes.spec("tower_roof", courses=2, per_course=8, impact_time=0.4, cannon_time=0.42)
    block, ball = _spawned(s)
    w = s.build(solver="pgs")
    n0 = w.body_count
    assert n0 == block
    seen = {}
    while w.time < 0.45:
        start = w.time
        w.step()
        for i in (block, ball):
            if w.body_count > i and i not in seen:
                seen[i] = start
    assert seen[block] == pytest.approx(math.ceil(s.bodies[block].spawn_time / 0.01 - 1e-6) * 0.01)
    assert seen[ball] == pytest.approx(0.42)
    assert w.body_name(block) == "block" and w.body_name(ball) == "cannonball"


# ------------------------------------------------------------------------------------------------
# peers

def _peer(kind):
    if kind == "pybullet":
        pytest.importorskip("pybullet")
        from benchmarks.peers.pybullet_peer import PyBulletPeer

        return PyBulletPeer()
    pytest.importorskip("mujoco")
    from benchmarks.peers.mujoco_peer import MuJoCoPeer

    return MuJoCoPeer()


@pytest.mark.parametrize("kind", ["pybullet", "mujoco"])
def test_peers_spawn_at_the_right_step(kind):
    s = _spawn_spec(t_ball=0.05, v=(3.0, 0.0, 0.0), z=2.0)
    peer = _peer(kind).build(s)
    m = SceneMetrics(s)
    try:
        for step in range(8):
            start = peer.time
            pos, quat, lin, ang = peer.state()
            assert pos.shape == (3, 3) and quat.shape == (3, 4)             # all spec bodies, spec order
            peer.step()
            pos, quat, lin, ang = peer.state()
            m.observe_arrays(peer.time, pos, quat, lin, ang, peer.max_penetration())
            if start < 0.05 - 1e-9:
                if kind == "mujoco":
                    assert pos[2, 2] < -999.0 and np.allclose(lin[2], 0.0, atol=1e-9)   # parked
                else:
                    assert np.allclose(pos[2], (-3.0, 0.0, 2.0))                        # not created yet
            else:
                k = round((peer.time - 0.05) / 0.01)                                   # steps flown
                assert pos[2, 0] == pytest.approx(-3.0 + 3.0 * 0.01 * k, abs=1e-6), step
                assert pos[2, 2] == pytest.approx(2.0, abs=0.01), step
                assert lin[2, 0] == pytest.approx(3.0, abs=1e-6)
        assert peer.time == pytest.approx(0.08)
    finally:
        peer.close()
    r = m.result()
    assert r["energy_max_gain"] < 1e-3 * abs(r["energy_budget"])
    assert r["projectile_speeds"]["ball"] == pytest.approx(math.hypot(3.0, 3 * G * 0.01), rel=1e-3)


@pytest.mark.parametrize("kind", ["pybullet", "mujoco"])
def test_peers_build_the_small_stacking_scenes(kind):
    s = scenes.spec("tower_roof", courses=2, per_course=8, impact_time=0.4, cannon_time=0.42)
    peer = _peer(kind).build(s)
    try:
        for _ in range(50):
            peer.step()
        pos, *_ = peer.state()
    finally:
        peer.close()
    assert pos.shape == (len(s.bodies), 3) and np.all(np.isfinite(pos))
    block, ball = _spawned(s)
    assert pos[block, 2] > 0.0 and pos[ball, 2] > 0.0                      # both released


# ------------------------------------------------------------------------------------------------
# metrics with absent bodies and the energy budget

def _free_fall(t_spawn, t, p0, v0):
    dt = t - t_spawn
    p = np.array(p0, dtype=float) + np.array(v0, dtype=float) * dt + np.array([0, 0, -0.5 * G * dt * dt])
    v = np.array(v0, dtype=float) + np.array([0, 0, -G * dt])
    return p, v


@pytest.mark.parametrize("layout", ["present_only", "all_bodies"])
def test_metrics_energy_budget_of_a_ball_spawned_in_free_fall(layout):
    dt = 0.01
    s = SceneSpec("ff", gravity=(0.0, 0.0, -G), dt=dt)
    s.add(Plane(), fixed=True, name="ground", tag="ground")
    s.add(Box((0.5, 0.5, 0.5)), (0.0, 0.0, 0.5), mass=10.0, name="box", tag="stack")
    p0, v0 = (-5.0, 0.0, 20.0), (4.0, 1.0, 2.0)
    s.add(Sphere(0.2), p0, linear_velocity=v0, mass=3.0, name="ball", tag="projectile", spawn_time=1.0)
    m = SceneMetrics(s)
    e_box = 10.0 * G * 0.5
    e_ball = 3.0 * G * 20.0 + 0.5 * 3.0 * (16 + 1 + 4)
    assert m.energy_initial == pytest.approx(e_box)
    q = np.tile([1.0, 0, 0, 0], (3, 1))
    w = np.zeros((3, 3))
    box = np.array([0.0, 0.0, 0.5])
    for k in range(1, 301):                                      # 3 s of observations after each step
        t = k * dt
        ball_present = (k - 1) * dt >= 1.0 - 1e-9                 # spawned at a step start >= 1 s
        pb, vb = _free_fall(1.0, t, p0, v0) if ball_present else (np.array([0.0, 0.0, -1000.0]), np.zeros(3))
        pos = np.array([[0, 0, 0], box, pb])
        vel = np.array([np.zeros(3), np.zeros(3), vb])
        if layout == "present_only":
            n = 3 if ball_present else 2
            m.observe_arrays(t, pos[:n], q[:n], vel[:n], w[:n], 0.0)
        else:                                                    # the parked ball is ignored
            m.observe_arrays(t, pos, q, vel, w, 0.0)
        if k == 100:
            assert m.energy_budget == pytest.approx(e_box)        # t = 1.00: not spawned yet
            assert m.result()["projectile_speeds"] == {"ball": None}
    r = m.result()
    assert r["energy_initial"] == pytest.approx(e_box)
    assert r["energy_budget"] == pytest.approx(e_box + e_ball)
    assert r["energy"] == pytest.approx(e_box + e_ball, rel=1e-12)  # conserved in free fall
    assert r["energy_max_gain"] < 1e-9 * (e_box + e_ball)
    assert r["max_drift"] == 0.0 and r["standing"] is True and r["displaced"] == 0
    assert r["first_spawn_time"] == 1.0
    assert r["pre_spawn_max_drift"] == 0.0 and r["pre_spawn_max_penetration"] == 0.0
    speed = np.linalg.norm(_free_fall(1.0, 3.0, p0, v0)[1])
    assert r["projectile_speeds"] == {"ball": pytest.approx(speed)} and r["projectile_final_speed"] == pytest.approx(
        speed)


def test_metrics_phases_displacement_and_invented_energy():
    dt = 0.01
    s = SceneSpec("ph", gravity=(0.0, 0.0, -G), dt=dt)
    s.add(Plane(), fixed=True, name="ground", tag="ground")
    s.add(Box((0.2, 0.1, 0.1)), (0.0, 0.0, 0.1), mass=1.0, name="b0", tag="stack")
    s.add(Box((0.2, 0.1, 0.1)), (0.0, 0.0, 0.3), mass=1.0, name="b1", tag="stack")
    s.add(Sphere(0.1), (0.0, 0.0, 1.0), mass=1.0, name="p", tag="projectile", spawn_time=0.5)
    m = SceneMetrics(s)
    base = np.array([[0, 0, 0], [0.0, 0.0, 0.1], [0.0, 0.0, 0.3]])
    q3, z3 = np.tile([1.0, 0, 0, 0], (3, 1)), np.zeros((3, 3))
    m.observe_arrays(0.3, base + [0.01, 0, 0], q3, z3, z3, 0.002)                     # pre-spawn: 3 bodies
    moved = np.array([[0, 0, 0], [0.05, 0.0, 0.1], [0.5, 0.0, 0.2], [0.0, 0.0, 1.0]])
    v = np.zeros((4, 3))
    v[3] = (0.0, 0.0, 10.0)                                                            # invented: +50 J
    m.observe_arrays(0.6, moved, np.tile([1.0, 0, 0, 0], (4, 1)), v, np.zeros((4, 3)), 0.01)
    r = m.result()
    assert r["pre_spawn_max_drift"] == pytest.approx(0.01) and r["pre_spawn_max_penetration"] == 0.002
    assert r["max_drift"] == pytest.approx(0.5) and r["max_penetration"] == 0.01
    assert r["displaced"] == 1                      # b1 moved 0.51 m > 0.1 m; b0 0.05 m < 0.1 m
    assert r["energy_max_gain"] == pytest.approx(50.0 - 1.0 * G * 0.1)
    assert r["projectile_final_speed"] == pytest.approx(10.0)
    # without spawned bodies the result keeps its old keys
    assert "displaced" not in SceneMetrics(scenes.spec("box_stack25", count=2)).result()


def test_world_metrics_count_present_bodies():
    s = _spawn_spec(t_ball=0.03)
    w = s.build(solver="pgs")
    m = SceneMetrics(s)
    m.observe(w)
    for _ in range(6):
        w.step()
        m.observe(w)
    r = m.result()
    assert r["energy_budget"] == pytest.approx(m.body_energy_initial[1:].sum())
    assert r["energy_max_gain"] < 1e-6 * abs(r["energy_budget"])
    assert r["projectile_speeds"]["ball"] == pytest.approx(math.hypot(3.0, 3 * G * 0.01))
