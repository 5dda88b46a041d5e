"""Sanity of the benchmark peers' scene builders: a box dropped on a plane comes to rest."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tumble.materials import Material
from tumble.scenes import SceneSpec
from tumble.scenes.metrics import SceneMetrics
from tumble.shapes import Box, Plane

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

HALF = (0.2, 0.3, 0.1)


def _drop_scene() -> SceneSpec:
    m = Material(friction=0.5, restitution=0.0)
    s = SceneSpec("drop", gravity=(0.0, 0.0, -9.81), dt=1 / 60, settings={"iterations": 10})
    s.add(Plane(), fixed=True, material=m, tag="ground")
    s.add(Box(HALF), (0.0, 0.0, 0.5), density=500.0, material=m, tag="stack")
    return s


def _peer(kind):
    if kind == "pybullet":
        pytest.importorskip("pybullet")
        from benchmarks.peers.pybullet_peer import PyBulletPeer

        return PyBulletPeer()
    pytest.importorskip("mujoco")
    from benchmarks.peers.mujoco_peer import MuJoCoPeer

    return MuJoCoPeer()


@pytest.mark.parametrize("kind", ["pybullet", "mujoco"])
def test_box_dropped_on_plane_comes_to_rest(kind):
    s = _drop_scene()
    peer = _peer(kind).build(s)
    metrics = SceneMetrics(s)
    try:
        for _ in range(120):                         # 2 s
            peer.step()
            metrics.observe_arrays(peer.time, *peer.state(), peer.max_penetration())
        pos, quat, lin, ang = peer.state()
    finally:
        peer.close()
    assert pos.shape == (2, 3) and quat.shape == (2, 4)
    assert abs(pos[1, 2] - HALF[2]) < 0.01
    assert np.linalg.norm(lin[1]) < 0.05 and np.linalg.norm(ang[1]) < 0.1
    assert abs(abs(quat[1, 0]) - 1.0) < 1e-3             # still face down, (w, x, y, z) order
    r = metrics.result()
    assert r["standing"] is True and r["max_drift"] < 0.03   # Bullet slides ~1 cm on impact
    assert peer.time == pytest.approx(2.0)


@pytest.mark.parametrize("kind", ["pybullet", "mujoco"])
def test_initial_state_round_trips(kind):
    s = SceneSpec("spin", gravity=(0.0, 0.0, 0.0), dt=1 / 60)
    q = (np.cos(0.3), 0.0, np.sin(0.3), 0.0)
    s.add(Box(HALF), (1.0, 2.0, 3.0), orientation=q, linear_velocity=(0.5, 0.0, 0.0),
          angular_velocity=(0.0, 0.0, 1.0), density=500.0)
    peer = _peer(kind).build(s)
    try:
        pos, quat, lin, ang = peer.state()
    finally:
        peer.close()
    assert np.allclose(pos[0], (1.0, 2.0, 3.0))
    assert np.allclose(quat[0] * np.sign(quat[0, 0]), q, atol=1e-9)
    assert np.allclose(lin[0], (0.5, 0.0, 0.0), atol=1e-9)
    assert np.allclose(ang[0], (0.0, 0.0, 1.0), atol=1e-9)


def test_hulls_are_unsupported():
    pytest.importorskip("pybullet")
    from benchmarks.peers import Unsupported, check_supported

    from tumble.shapes import Compound, Sphere

    s = SceneSpec("c")
    s.add(Compound([(Sphere(0.1), (0.0, 0.0, 0.0)), (Sphere(0.1), (0.3, 0.0, 0.0))]), (0, 0, 1))
    with pytest.raises(Unsupported, match="Compound"):
        check_supported(s, "pybullet")


# ------------------------------------------------------------------------------------------------
# joints

CHAIN_TOP = 2.0
LINK_R, LINK_HALF = 0.03, 0.07                         # capsule: tip-to-tip 0.2 m
LINK = 2.0 * (LINK_R + LINK_HALF)


def _chain_scene(links: int = 5, hinge: bool = False) -> SceneSpec:
    """``links`` capsules along +x at height CHAIN_TOP joined end to end by ball joints (hinges about
    y with ``hinge``), the first one's free end joined to the world point (0, 0, CHAIN_TOP)."""
    import tumble as tb
    from tumble.shapes import Capsule

    m = Material(friction=0.5, restitution=0.0)
    s = SceneSpec("chain", gravity=(0.0, 0.0, -9.81), dt=1 / 60, settings={"iterations": 10})
    s.add(Plane(), fixed=True, material=m, tag="ground")
    q = (np.cos(np.pi / 4), 0.0, np.sin(np.pi / 4), 0.0)     # capsule segment (local z) along +x
    prev = None
    for k in range(links):
        i = s.add(Capsule(LINK_R, LINK_HALF), ((k + 0.5) * LINK, 0.0, CHAIN_TOP), orientation=q, mass=0.2,
                  material=m)
        anchor = (k * LINK, 0.0, CHAIN_TOP)
        s.joint(tb.Hinge(prev, i, anchor=anchor, axis=(0.0, 1.0, 0.0)) if hinge else tb.Ball(prev, i, anchor=anchor))
        prev = i
    return s


@pytest.mark.parametrize("kind", ["pybullet", "mujoco"])
@pytest.mark.parametrize("hinge", [False, True], ids=["ball", "hinge"])
def test_hanging_chain_holds_its_joints(kind, hinge):
    s = _chain_scene(hinge=hinge)
    peer = _peer(kind).build(s)
    try:
        assert np.nanmax(peer.joint_errors()) < 1e-9               # anchors coincide at the start
        anchors0 = peer.joint_anchors()
        z0 = peer.state()[0][1:, 2].min()
        lowest = z0
        for _ in range(60):                                         # 1 s
            peer.step()
            lowest = min(lowest, peer.state()[0][1:, 2].min())
        err = peer.joint_errors()
        anchors = peer.joint_anchors()
        pos = peer.state()[0]
    finally:
        peer.close()
    assert err.shape == (5,)
    assert err[0] < 0.01                                            # first link stays on the world point
    assert np.allclose(anchors[0, 0], (0.0, 0.0, CHAIN_TOP)) and np.allclose(anchors0[0, 1], anchors0[0, 0])
    assert np.linalg.norm(anchors[0, 1] - (0.0, 0.0, CHAIN_TOP)) < 0.01
    assert lowest < z0 - 0.5                                        # the chain swung down (1 m long)
    assert np.all(pos[1:, 2] > 0.0)


@pytest.mark.parametrize("kind", ["pybullet", "mujoco"])
def test_weld_keeps_the_relative_orientation(kind):
    """A Fixed joint between two differently oriented bodies (one hung from the world by a ball joint)
    holds their relative orientation while they swing (PyBullet's own JOINT_FIXED would not)."""
    from benchmarks.peers import quat_matrices

    import tumble as tb

    s = SceneSpec("weld", gravity=(0.0, 0.0, -9.81), dt=1 / 240, settings={"iterations": 20})
    qa = np.array([0.9, 0.3, -0.2, 0.1])
    qb = np.array([0.5, -0.4, 0.6, 0.3])
    a = s.add(Box((0.2, 0.1, 0.05)), (0.0, 0.0, 2.0), orientation=tuple(qa / np.linalg.norm(qa)), density=500.0)
    b = s.add(Box((0.1, 0.1, 0.1)), (0.3, 0.1, 2.1), orientation=tuple(qb / np.linalg.norm(qb)), density=500.0)
    s.joint(tb.Ball(None, a, anchor=(-0.1, 0.0, 2.05)))
    s.joint(tb.Fixed(a, b, anchor=(0.15, 0.05, 2.05)))
    peer = _peer(kind).build(s)

    def rel():
        R = quat_matrices(peer.state()[1])
        return R[0].T @ R[1]

    try:
        R0 = rel()
        worst = 0.0
        for _ in range(240):
            peer.step()
            c = np.clip((np.trace(R0.T @ rel()) - 1.0) / 2.0, -1.0, 1.0)
            worst = max(worst, float(np.degrees(np.arccos(c))))
        err = peer.joint_errors()
    finally:
        peer.close()
    assert worst < 5.0
    assert err.max() < 0.02


def test_peer_joint_frames_match_tumble():
    """The peers' anchor math (benchmarks.peers) gives tumble's joint_anchors / joint_errors for the
    same poses."""
    from benchmarks.peers import anchor_errors, joint_frames, world_anchors

    import tumble as tb

    s = _chain_scene(links=3, hinge=True)
    s.joint(tb.Fixed(2, 3, anchor=(2 * LINK + 0.05, 0.0, CHAIN_TOP)))
    w = s.build()
    for _ in range(20):
        w.step(s.dt)
    f = joint_frames(s)
    p, _ = world_anchors(f, w.positions, w.orientations)
    assert np.allclose(p, w.joint_anchors(), atol=1e-9)
    assert np.allclose(anchor_errors(f, w.positions, w.orientations), w.joint_errors(), atol=1e-9)


def test_joint_scene_builds_and_excludes_joined_pairs():
    pytest.importorskip("mujoco")
    from benchmarks.peers.mujoco_peer import scene_mjcf

    s = _chain_scene(links=3)
    s.no_collide.append((1, 3))
    xml = scene_mjcf(s)
    assert xml.count("<connect ") == 3 and 'body1="b1" anchor=' in xml      # first joint: to the world
    for u, v in [(1, 2), (2, 3), (1, 3)]:
        assert f'<exclude body1="b{u}" body2="b{v}"/>' in xml


def test_unsupported_joints_are_refused():
    from benchmarks.peers import Unsupported, check_supported

    import tumble as tb

    s = _chain_scene(links=2)
    s.joint(tb.Slider(1, 2, anchor=(LINK, 0.0, CHAIN_TOP), axis=(1.0, 0.0, 0.0)))
    with pytest.raises(Unsupported, match="Slider"):
        check_supported(s, "pybullet")
