"""Side-by-side peers: the same ``SceneSpec`` built and stepped in other engines.

Every peer has the interface of :class:`Peer`:

* ``name`` -- engine name and version, e.g. ``"pybullet 3.2.7"``;
* ``build(spec)`` -- make the engine's model of the scene (raises :class:`Unsupported` for shapes the
  peer cannot represent: convex hulls, compounds);
* ``step()`` -- advance one step of ``spec.dt``;
* ``state()`` -- ``(positions (n,3), orientations (n,4) (w,x,y,z), linear velocities (n,3),
  angular velocities (n,3) in world coordinates)`` over all bodies in spec order (fixed ones too);
* ``max_penetration()`` -- the deepest penetration [m] in the engine's current contact list;
* ``joint_errors()`` -- (joints,) position error [m] of every joint of ``spec.joints`` now, measured
  exactly as tumble's ``World.joint_errors()`` (anchor separation; see :func:`anchor_errors`) from
  the peer's body poses, whatever constraints the peer uses internally; ``joint_anchors()`` --
  (joints, 2, 3) the world positions of each joint's anchor on a and on b;
* ``time`` -- simulated seconds; ``settings`` -- a dict of what was set (for the report);
  ``notes`` -- mismatches with tumble that could not be removed.

``available()`` lists the peer classes whose engine imports.

Joints (``spec.joints``): the definitions give anchors and axes in world coordinates at the initial
pose. :func:`joint_frames` converts them once into each body's frame (``R(q0)^T (p - x0)``, the
world frame for ``a=None``, as ``World.add_joint`` does) and :func:`world_anchors` maps them back
with the current poses (``x + R(q) p_local``), so every engine's joint drift is measured the same
way. :func:`hinge_points` gives the two points ``anchor +- h axis`` by which the peers model a hinge
with two ball (point-to-point) constraints (``h``: :func:`hinge_arm`).
"""

from __future__ import annotations

import copy
import importlib.util
from typing import NamedTuple

import numpy as np

#: Joint kinds (``Joint.kind``) the peers build: ball, hinge (two point constraints) and fixed (weld).
PEER_JOINT_KINDS = ("ball", "hinge", "fixed")


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

    def joint_anchors(self) -> np.ndarray:
        """(joints, 2, 3) world positions of every joint's anchor on a and on b now [m]."""
        pos, quat = self.state()[:2]
        return world_anchors(self.frames, pos, quat)[0]

    def joint_errors(self) -> np.ndarray:
        """(joints,) position error of every joint now [m], as tumble's ``World.joint_errors()``."""
        pos, quat = self.state()[:2]
        return anchor_errors(self.frames, pos, quat)

    @property
    def frames(self) -> JointFrames:
        f = getattr(self, "_frames", None)
        if f is None:
            f = self._frames = joint_frames(self.spec)
        return f

    def close(self) -> None:
        pass


def check_supported(spec, peer_name: str, joint_kinds=PEER_JOINT_KINDS) -> None:
    """Raise :class:`Unsupported` naming the first body whose shape is not box/sphere/capsule/plane,
    or the first joint whose type is not in ``joint_kinds``."""
    from tumble.shapes import Box, Capsule, Plane, Sphere

    for i, b in enumerate(spec.bodies):
        if not isinstance(b.shape, (Box, Sphere, Capsule, Plane)):
            raise Unsupported(f"{peer_name}: body {i} ({b.name or 'unnamed'}) has shape "
                              f"{type(b.shape).__name__}; only Box, Sphere, Capsule and Plane are supported")
        if isinstance(b.shape, Plane) and not b.fixed:
            raise Unsupported(f"{peer_name}: body {i} is a non-fixed plane")
    for k, j in enumerate(getattr(spec, "joints", ()) or ()):
        kind = getattr(j, "kind", type(j).__name__)
        if kind not in joint_kinds:
            raise Unsupported(f"{peer_name}: joint {k} is a {type(j).__name__}; only "
                              f"{', '.join(joint_kinds)} joints are supported")


# ------------------------------------------------------------------------------------------------
# joint frames shared by the peers (the math of tumble's joint registry, in numpy)

class JointFrames(NamedTuple):
    """The joints of a spec in body frames (see the module docstring); m = number of joints."""

    kinds: list            # Joint.kind of each joint ("ball", "hinge", ...)
    bodies: np.ndarray     # (m, 2) int: spec body index of a and b; -1 for the world (a=None)
    local: np.ndarray      # (m, 2, 3) anchor in each body's frame (world coordinates for the world)
    local_axis: np.ndarray  # (m, 2, 3) axis in each body's frame (hinge, slider; +z otherwise)
    anchor: np.ndarray     # (m, 2, 3) world anchors at creation (the definition's)
    axis: np.ndarray       # (m, 3) world axis at creation (unit; +z for joints without one)
    length: np.ndarray     # (m,) rest length of distance joints, 0 otherwise
    defs: list             # validated copies of the joint definitions


def quat_matrices(q) -> np.ndarray:
    """Rotation matrices (n, 3, 3) of quaternions (n, 4) in (w, x, y, z) order (normalised first)."""
    q = np.asarray(q, dtype=np.float64).reshape(-1, 4)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                     np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                     np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], 1)


def to_local(point, position, orientation) -> np.ndarray:
    """World point -> the frame of a body at ``position`` with quaternion ``orientation`` (w, x, y, z)."""
    R = quat_matrices(orientation)[0]
    return R.T @ (np.asarray(point, dtype=float) - np.asarray(position, dtype=float))


def to_world(local, position, orientation) -> np.ndarray:
    """Body-frame point -> world, for a body at ``position`` with quaternion ``orientation``."""
    R = quat_matrices(orientation)[0]
    return np.asarray(position, dtype=float) + R @ np.asarray(local, dtype=float)


def joint_frames(spec) -> JointFrames:
    """Convert the world-frame joint definitions of ``spec`` (initial pose) into body frames.

    Anchors: ball, hinge, slider: ``anchor`` on both sides; fixed: ``anchor`` or b's initial centre;
    distance: ``anchor_a`` / ``anchor_b``. Raises ``JointError`` for a bad definition."""
    defs = []
    m = len(spec.joints)
    bodies = np.full((m, 2), -1, dtype=np.int64)
    local = np.zeros((m, 2, 3))
    local_axis = np.zeros((m, 2, 3))
    anchor = np.zeros((m, 2, 3))
    axis = np.tile(np.array([0.0, 0.0, 1.0]), (m, 1))
    length = np.zeros(m)
    kinds = []
    for k, j0 in enumerate(spec.joints):
        j = copy.deepcopy(j0)
        j.validate(j.owner(k))
        defs.append(j)
        kinds.append(j.kind)
        b = spec.bodies[int(j.b)]
        if j.kind == "distance":
            pa, pb = j.anchor_a, j.anchor_b
            length[k] = float(j.length)
        elif j.kind == "fixed":
            pa = pb = np.asarray(b.position, dtype=float) if j.anchor is None else j.anchor
        else:
            pa = pb = j.anchor
        if getattr(j, "axis", None) is not None:
            axis[k] = j.axis
        anchor[k] = (pa, pb)
        for side, (body, p) in enumerate(((j.a, pa), (j.b, pb))):
            if body is None:
                local[k, side] = p
                local_axis[k, side] = axis[k]
                continue
            bs = spec.bodies[int(body)]
            bodies[k, side] = int(body)
            R = quat_matrices(bs.orientation)[0]
            local[k, side] = R.T @ (np.asarray(p, dtype=float) - np.asarray(bs.position, dtype=float))
            local_axis[k, side] = R.T @ axis[k]
    return JointFrames(kinds, bodies, local, local_axis, anchor, axis, length, defs)


def world_anchors(frames: JointFrames, positions, orientations) -> tuple[np.ndarray, np.ndarray]:
    """World positions (m, 2, 3) of every joint's anchors on a and on b and (m, 2, 3) of its two copies
    of the axis, from body poses ``positions`` (n, 3) and ``orientations`` (n, 4) in spec order."""
    p = frames.local.copy()
    ax = frames.local_axis.copy()
    if len(p) == 0:
        return p, ax
    pos = np.asarray(positions, dtype=float)
    quat = np.asarray(orientations, dtype=float)
    for side in range(2):
        body = frames.bodies[:, side]
        real = body >= 0
        if not real.any():
            continue
        R = quat_matrices(quat[body[real]])
        p[real, side] = pos[body[real]] + np.einsum("nij,nj->ni", R, frames.local[real, side])
        ax[real, side] = np.einsum("nij,nj->ni", R, frames.local_axis[real, side])
    return p, ax


def anchor_errors(frames: JointFrames, positions, orientations) -> np.ndarray:
    """(m,) position error of every joint [m], as ``World.joint_errors()``: the anchor separation for
    ball, hinge and fixed joints, |distance - length| for distance joints, the distance of b's anchor
    from a's line for sliders. Angular errors are not included."""
    p, ax = world_anchors(frames, positions, orientations)
    d = p[:, 1] - p[:, 0]
    err = np.linalg.norm(d, axis=1)
    kinds = np.asarray(frames.kinds, dtype=object)
    dist = kinds == "distance"
    err[dist] = np.abs(err[dist] - frames.length[dist])
    sl = kinds == "slider"
    if sl.any():
        along = np.einsum("ni,ni->n", d[sl], ax[sl, 0])
        err[sl] = np.linalg.norm(d[sl] - along[:, None] * ax[sl, 0], axis=1)
    return err


def hinge_arm(spec, joint) -> float:
    """Half-distance ``h`` [m] between the two point constraints of a peer's hinge: half the smaller
    bounding radius of the joined bodies (capsule: radius + half length), i.e. a characteristic size
    of the link, so the pair of points spans the joint without reaching far outside the bodies."""
    radii = [spec.bodies[int(i)].shape.bounding_radius() for i in (joint.a, joint.b) if i is not None]
    radii = [r for r in radii if np.isfinite(r) and r > 0]
    return 0.5 * min(radii) if radii else 0.1


def hinge_points(spec, frames: JointFrames, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The two world points (initial pose) ``anchor -+ h axis`` of hinge ``k``."""
    h = hinge_arm(spec, frames.defs[k])
    a = frames.anchor[k, 0]
    return a - h * frames.axis[k], a + h * frames.axis[k]


def weld_points(spec, frames: JointFrames, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three non-collinear world points (initial pose) ``anchor``, ``anchor + h u``, ``anchor + h v`` of
    fixed joint ``k`` (``u``, ``v`` perpendicular unit vectors, ``h``: :func:`hinge_arm`); three ball
    constraints at them weld two bodies (used where the engine's own weld cannot)."""
    h = hinge_arm(spec, frames.defs[k])
    a = frames.anchor[k, 0]
    return a, a + h * np.array([1.0, 0.0, 0.0]), a + h * np.array([0.0, 1.0, 0.0])


def excluded_pairs(spec) -> list[tuple[int, int]]:
    """Body pairs that must not collide: joined bodies (``collide=False``, both real bodies) and
    ``spec.no_collide``; sorted, without duplicates."""
    out = set()
    for j in getattr(spec, "joints", ()) or ():
        if j.a is not None and not j.collide:
            out.add(tuple(sorted((int(j.a), int(j.b)))))
    for a, b in getattr(spec, "no_collide", ()) or ():
        out.add(tuple(sorted((int(a), int(b)))))
    return sorted(out)


def joint_notes(spec) -> list[str]:
    """Notes on what of ``spec.joints`` the peers do not model (limits, motors, breaking)."""
    notes = []
    kinds = [j.kind for j in spec.joints]
    if "hinge" in kinds:
        notes.append("hinge = two ball (point-to-point) constraints at anchor +- h axis, h = half the smaller "
                     "bounding radius of the two links (capsule: radius + half length); same 5 constrained "
                     "degrees of freedom, the angular error weighted by h")
    if any(getattr(j, "limits", None) is not None for j in spec.joints):
        notes.append("joint limits not modelled (the hinges swing freely)")
    if any(getattr(j, "motor", None) is not None for j in spec.joints):
        notes.append("joint motors not modelled")
    if any(np.isfinite(getattr(j, "break_force", np.inf)) or np.isfinite(getattr(j, "break_torque", np.inf))
           for j in spec.joints):
        notes.append("breakable joints not modelled (they never break)")
    return notes


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
