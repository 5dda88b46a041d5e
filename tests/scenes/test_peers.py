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
