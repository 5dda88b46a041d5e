"""Side-by-side peers: the same ``SceneSpec`` built and stepped in other engines.

Every peer has the interface of :class:`Peer`:

* ``name`` -- engine name and version, e.g. ``"pybullet 3.2.7"``;
* ``build(spec)`` -- make the engine's model of the scene (raises :class:`Unsupported` for shapes the
  peer cannot represent: convex hulls, compounds);
* ``step()`` -- advance one step of ``spec.dt``;
* ``state()`` -- ``(positions (n,3), orientations (n,4) (w,x,y,z), linear velocities (n,3),
  angular velocities (n,3) in world coordinates)`` over all bodies in spec order (fixed ones too);
* ``max_penetration()`` -- the deepest penetration [m] in the engine's current contact list;
* ``time`` -- simulated seconds; ``settings`` -- a dict of what was set (for the report);
  ``notes`` -- mismatches with tumble that could not be removed.

``available()`` lists the peer classes whose engine imports.
"""

from __future__ import annotations

import importlib.util


class Unsupported(Exception):
    """The scene holds something the peer cannot build (the message says what)."""


class Peer:
    """Interface shared by the peers (see the module docstring)."""

    name = "peer"

    def __init__(self):
        self.spec = None
        self.time = 0.0
        self.settings: dict = {}
        self.notes: list[str] = []

    def build(self, spec) -> Peer:
        raise NotImplementedError

    def step(self) -> None:
        raise NotImplementedError

    def state(self):
        raise NotImplementedError

    def max_penetration(self) -> float:
        raise NotImplementedError

    def close(self) -> None:
        pass


def check_supported(spec, peer_name: str) -> None:
    """Raise :class:`Unsupported` naming the first body whose shape is not box/sphere/capsule/plane."""
    from tumble.shapes import Box, Capsule, Plane, Sphere

    for i, b in enumerate(spec.bodies):
        if not isinstance(b.shape, (Box, Sphere, Capsule, Plane)):
            raise Unsupported(f"{peer_name}: body {i} ({b.name or 'unnamed'}) has shape "
                              f"{type(b.shape).__name__}; only Box, Sphere, Capsule and Plane are supported")
        if isinstance(b.shape, Plane) and not b.fixed:
            raise Unsupported(f"{peer_name}: body {i} is a non-fixed plane")


def available() -> list[type[Peer]]:
    """Peer classes whose engine is installed, PyBullet first."""
    out = []
    if importlib.util.find_spec("pybullet") is not None:
        from benchmarks.peers.pybullet_peer import PyBulletPeer

        out.append(PyBulletPeer)
    if importlib.util.find_spec("mujoco") is not None:
        from benchmarks.peers.mujoco_peer import MuJoCoPeer

        out.append(MuJoCoPeer)
    return out
