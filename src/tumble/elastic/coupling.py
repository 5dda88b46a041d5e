"""Elastic-rigid contact: penalty springs between elastic surface vertices and rigid geoms.

Method. Paper 003 only treats a rigid floor (§7.2: sticky contact springs tied where a vertex arrives).
Against a *moving* rigid body a sticky anchor would have to follow the body and its reaction would have to be
booked on it, so for rigid geoms other than the horizontal floor we use the penalty form of the same idea: a
surface vertex x inside a rigid geom at depth d >= 0 along the geom's outward normal n (the shortest way out)
feels the force

    f = k d n - c (v - u),      energy k d^2 / 2,

(u the geom's velocity at x; the damping c is the contact's dissipation and viscous friction, see
RIGID_CONTACT_DAMPING). The elastic part is the gradient of that energy: a zero-rest-length spring to the
nearest point on the geom surface, §7.2's spring with its anchor sliding along the surface. The elastic
integrator sees f like any other force (``ElasticSystem._forces``), so its adaptive step (RKF 4(5), §8.3)
resolves the stiff contact; the geoms start the elastic step where the rigid step left them (operator
splitting: rigid step, then elastic step).

Reaction. The rigid body receives -f at x (force and torque about its centre of mass) integrated over the
elastic step: for RKF the trapezoid rule over every accepted sub-step [t, t + h] (the sub-steps are short
next to the contact time, so the impulse matches the elastic momentum change to O(h^2)); for backward Euler
h f(x1), which is exactly what the implicit step applied to the vertices (Newton's third law: total momentum
is conserved up to that quadrature error). The rigid body responds inside the elastic step: after each
accepted sub-step its velocity changes by the sub-step's impulse and it moves by the velocity change so far
(symplectic Euler on the contact's share of its motion; the rigid solver already moved it with its own
velocity). A first version applied the whole impulse after the elastic step with the geom frozen: explicit
on the rigid side, it blew up once dt sqrt(K / m) > 2 (K the contact stiffness the body feels), e.g. a 1 kg
board between two jelly blocks at dt = 1/240 s; the sub-steps (a few 1e-5 s) resolve that frequency.

Geom types: sphere, box, capsule, plane (a plane other than the +z floor). Hulls are not coupled (yet).
Arrays (g obstacles): ``obstacle_type`` (g,) int (tumble._core.types.GEOM_*), ``obstacle_position`` (g, 3) m,
``obstacle_rotation`` (g, 3, 3) world from geom frame, ``obstacle_size`` (g, 3) m (the shapes' ``size``).
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core import types as T
from tumble._core.config import kernel

#: default penalty stiffness k of a vertex inside a rigid geom, N/m (the floor springs' default, §7.2)
RIGID_CONTACT_STIFFNESS = 2.0e4
#: default contact damping c, N s/m: a vertex inside a geom also feels -c (v - u), u the geom's velocity at the
#: vertex. Normal part: damps the chatter of a light body on the springs; tangential part: viscous friction,
#: without which a board on jelly slides off on the small lateral forces of an asymmetric tet mesh (the
#: floor's sticky springs hold tangentially, §7.2; penalty springs alone are frictionless). 50 N s/m is about
#: a third of critical for k = 2e4 N/m on a 0.3 kg vertex (2 sqrt(k m) = 155 N s/m).
RIGID_CONTACT_DAMPING = 50.0

_PLANE, _SPHERE, _CAPSULE, _BOX = T.GEOM_PLANE, T.GEOM_SPHERE, T.GEOM_CAPSULE, T.GEOM_BOX


@kernel
def _penetration(kind, centre, rotation, size, x, out_normal):
    """Depth (m, > 0 inside) of point x in one geom and the geom's outward normal there (written to
    out_normal); depth <= 0 means outside."""
    # the point in the geom frame: q = R^T (x - c)
    q0 = q1 = q2 = 0.0
    for c in range(3):
        d = x[c] - centre[c]
        q0 += rotation[c, 0] * d
        q1 += rotation[c, 1] * d
        q2 += rotation[c, 2] * d
    if kind == _SPHERE or kind == _CAPSULE:
        # capsule: distance to the segment |z| <= half_length along the local z axis; sphere: to the centre
        z = 0.0
        if kind == _CAPSULE:
            z = min(max(q2, -size[1]), size[1])
        r0, r1, r2 = q0, q1, q2 - z
        dist = math.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
        depth = size[0] - dist
        if depth <= 0.0:
            return depth
        if dist < 1e-12:  # at the centre: any direction is shortest; take +z of the geom
            r0, r1, r2, dist = 0.0, 0.0, 1.0, 1.0
        for c in range(3):
            out_normal[c] = (rotation[c, 0] * r0 + rotation[c, 1] * r1 + rotation[c, 2] * r2) / dist
        return depth
    if kind == _BOX:
        # inside iff |q_i| < h_i for every axis; the shortest way out is through the nearest face
        best = -1
        depth = math.inf
        sign = 1.0
        for axis in range(3):
            qa = q0 if axis == 0 else (q1 if axis == 1 else q2)
            gap = size[axis] - abs(qa)
            if gap <= 0.0:
                return gap
            if gap < depth:
                depth = gap
                best = axis
                sign = 1.0 if qa >= 0.0 else -1.0
        for c in range(3):
            out_normal[c] = sign * rotation[c, best]
        return depth
    if kind == _PLANE:
        # half-space below the geom's local xy plane; outward normal = local +z
        for c in range(3):
            out_normal[c] = rotation[c, 2]
        return -q2
    return -1.0  # hulls are not coupled


@kernel
def _contact_force(x, v, i, g, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size, obstacle_centre,
                   obstacle_velocity, obstacle_angular, stiffness, damping, normal, out):
    """Force on vertex i from obstacle g into ``out`` (3,): k d n - c (v_i - u(x_i)), u the geom's point velocity
    w x (x - centre) + v_body; return the depth d (<= 0: no contact, ``out`` untouched)."""
    depth = _penetration(obstacle_type[g], obstacle_position[g], obstacle_rotation[g], obstacle_size[g], x[i], normal)
    if depth > 0.0:
        w = obstacle_angular[g]
        r0 = x[i, 0] - obstacle_centre[g, 0]
        r1 = x[i, 1] - obstacle_centre[g, 1]
        r2 = x[i, 2] - obstacle_centre[g, 2]
        u0 = obstacle_velocity[g, 0] + w[1] * r2 - w[2] * r1
        u1 = obstacle_velocity[g, 1] + w[2] * r0 - w[0] * r2
        u2 = obstacle_velocity[g, 2] + w[0] * r1 - w[1] * r0
        out[0] = stiffness * depth * normal[0] - damping * (v[i, 0] - u0)
        out[1] = stiffness * depth * normal[1] - damping * (v[i, 1] - u1)
        out[2] = stiffness * depth * normal[2] - damping * (v[i, 2] - u2)
    return depth


@kernel
def obstacle_forces(x, v, vertices, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size,
                    obstacle_centre, obstacle_velocity, obstacle_angular, stiffness, damping, forces):
    """Add the contact force (``_contact_force``) to ``forces`` (n, 3) for every listed vertex (``vertices``,
    surface vertex indices) inside an obstacle; return (the penalty energy sum k d^2 / 2, J; the damping's
    heat rate sum c |v - u|^2, W). The damping force -c (v - u) = f - k d n, so |v - u|^2 = |f - k d n|^2 / c^2."""
    energy = 0.0
    power = 0.0
    normal = np.zeros(3)
    f = np.zeros(3)
    for a in range(vertices.shape[0]):
        i = vertices[a]
        for g in range(obstacle_type.shape[0]):
            depth = _contact_force(x, v, i, g, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size,
                                   obstacle_centre, obstacle_velocity, obstacle_angular, stiffness, damping, normal, f)
            if depth > 0.0:
                sq = 0.0
                for c in range(3):
                    forces[i, c] += f[c]
                    viscous = f[c] - stiffness * depth * normal[c]
                    sq += viscous * viscous
                energy += 0.5 * stiffness * depth * depth
                if damping > 0.0:
                    power += sq / damping
    return energy, power


@kernel
def obstacle_reactions(x, v, vertices, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size,
                       obstacle_centre, obstacle_velocity, obstacle_angular, stiffness, damping, weight, force_out,
                       torque_out):
    """Add ``weight`` times the reaction on each obstacle, minus the contact force at the vertex (force, and
    torque about ``obstacle_centre`` (g, 3), the owning body's centre of mass) to ``force_out`` / ``torque_out``
    (g, 3); return the number of (vertex, obstacle) pairs in contact."""
    touching = 0
    normal = np.zeros(3)
    f = np.zeros(3)
    for a in range(vertices.shape[0]):
        i = vertices[a]
        for g in range(obstacle_type.shape[0]):
            depth = _contact_force(x, v, i, g, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size,
                                   obstacle_centre, obstacle_velocity, obstacle_angular, stiffness, damping, normal, f)
            if depth > 0.0:
                touching += 1
                f0 = -weight * f[0]
                f1 = -weight * f[1]
                f2 = -weight * f[2]
                r0 = x[i, 0] - obstacle_centre[g, 0]
                r1 = x[i, 1] - obstacle_centre[g, 1]
                r2 = x[i, 2] - obstacle_centre[g, 2]
                force_out[g, 0] += f0
                force_out[g, 1] += f1
                force_out[g, 2] += f2
                torque_out[g, 0] += r1 * f2 - r2 * f1
                torque_out[g, 1] += r2 * f0 - r0 * f2
                torque_out[g, 2] += r0 * f1 - r1 * f0
    return touching


class Obstacles:
    """The rigid geoms an ElasticSystem pushes against during one elastic step, and the rigid bodies' response.

    Set by the World before each elastic step (``set``); the system calls ``forces`` inside its derivative and
    ``accumulate`` after every accepted sub-step. Per coupled rigid body (k of them): ``centre`` (k, 3) m and
    ``orientation`` (k, 4) its pose now, ``delta_velocity`` / ``delta_angular`` (k, 3) the velocity change the
    elastic contact gave it so far; ``impulse`` (k, 3) N s = m delta_velocity. Per geom (g): ``body`` (local
    body index), ``offset`` (g, 3) and ``local_rotation`` (g, 3, 3) in the body frame, ``kind``, ``size``.
    """

    def __init__(self, stiffness: float = RIGID_CONTACT_STIFFNESS, damping: float = RIGID_CONTACT_DAMPING):
        self.stiffness = float(stiffness)
        self.damping = float(damping)
        self.set(np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros((0, 3)),
                 np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 3)), np.zeros((0, 3)),
                 np.zeros(0), np.zeros((0, 3, 3)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))

    def set(self, kind, position, rotation, size, body, centre, orientation, velocity, angular_velocity, inv_mass,
            inv_inertia_local, bodies, vertices) -> None:
        """Geoms (kind, world position and rotation, size, local body index) and their bodies (centre of mass,
        orientation, 1/m, body-frame inverse inertia, world body ids ``bodies``); ``vertices``: the surface
        vertices that can touch them."""
        from tumble._core.math3d import quat_to_matrices

        self.kind = np.ascontiguousarray(kind, dtype=np.int64)
        self.size = np.ascontiguousarray(size, dtype=np.float64)
        self.body = np.asarray(body, dtype=np.int64)
        self.bodies = np.asarray(bodies, dtype=np.int64)
        self.centre = np.array(centre, dtype=np.float64).reshape(-1, 3)
        self.orientation = np.array(orientation, dtype=np.float64).reshape(-1, 4)
        self.velocity = np.array(velocity, dtype=np.float64).reshape(-1, 3)
        self.angular_velocity = np.array(angular_velocity, dtype=np.float64).reshape(-1, 3)
        self.inv_mass = np.asarray(inv_mass, dtype=np.float64)
        self.inv_inertia_local = np.asarray(inv_inertia_local, dtype=np.float64).reshape(-1, 3, 3)
        R = quat_to_matrices(self.orientation) if len(self.orientation) else np.zeros((0, 3, 3))
        rb = R[self.body]
        self.offset = np.einsum("nji,nj->ni", rb, np.asarray(position, dtype=np.float64).reshape(-1, 3)
                                - self.centre[self.body])
        self.local_rotation = np.einsum("nji,njk->nik", rb, np.asarray(rotation, dtype=np.float64).reshape(-1, 3, 3))
        self.vertices = np.ascontiguousarray(vertices, dtype=np.int64)
        self.delta_velocity = np.zeros((len(self.bodies), 3))
        self.delta_angular = np.zeros((len(self.bodies), 3))
        self.touching = 0
        self._previous = None  # reaction (force, torque) per body at the last accepted state
        self._pose()

    @property
    def count(self) -> int:
        return len(self.kind)

    @property
    def impulse(self) -> np.ndarray:
        """(k, 3) N s: the linear impulse the elastic contact gave each coupled body so far."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.inv_mass[:, None] > 0.0, self.delta_velocity / self.inv_mass[:, None], 0.0)

    def _pose(self) -> None:
        """World poses of the geoms from their bodies' current centre and orientation."""
        from tumble._core.math3d import quat_to_matrices

        R = quat_to_matrices(self.orientation)[self.body] if len(self.kind) else np.zeros((0, 3, 3))
        self.position = np.ascontiguousarray(self.centre[self.body] + np.einsum("nij,nj->ni", R, self.offset))
        self.rotation = np.ascontiguousarray(np.einsum("nij,njk->nik", R, self.local_rotation))
        self._geom_centre = np.ascontiguousarray(self.centre[self.body])
        self._geom_velocity = np.ascontiguousarray((self.velocity + self.delta_velocity)[self.body])
        self._geom_angular = np.ascontiguousarray((self.angular_velocity + self.delta_angular)[self.body])

    def forces(self, x: np.ndarray, v: np.ndarray, forces: np.ndarray) -> tuple[float, float]:
        """Add the contact forces at (x, v) to ``forces``; return (penalty energy J, damping heat rate W)."""
        if not len(self.kind):
            return 0.0, 0.0
        return obstacle_forces(x, v, self.vertices, self.kind, self.position, self.rotation, self.size,
                               self._geom_centre, self._geom_velocity, self._geom_angular, self.stiffness,
                               self.damping, forces)

    def _reaction(self, x: np.ndarray, v: np.ndarray):
        """Reaction force and torque about the centre (k, 3) on each coupled body at vertex positions x."""
        force = np.zeros((len(self.kind), 3))
        torque = np.zeros((len(self.kind), 3))
        self.touching = int(obstacle_reactions(x, v, self.vertices, self.kind, self.position, self.rotation,
                                               self.size, self._geom_centre, self._geom_velocity, self._geom_angular,
                                               self.stiffness, self.damping, 1.0, force, torque))
        body_force = np.zeros((len(self.bodies), 3))
        body_torque = np.zeros((len(self.bodies), 3))
        np.add.at(body_force, self.body, force)
        np.add.at(body_torque, self.body, torque)
        return body_force, body_torque

    def accumulate(self, x0: np.ndarray, v0: np.ndarray, x1: np.ndarray, v1: np.ndarray, h: float,
                   rule: str) -> None:
        """An accepted elastic sub-step from (x0, v0) to (x1, v1) of length h (s): the coupled bodies respond to the
        reaction. ``"trapezoid"`` (RKF): the velocity change h (R(x0) + R(x1)) / (2 m); ``"end"`` (backward
        Euler): h R(x1) / m, what the implicit step applied to the vertices. Then the bodies move by the velocity
        change they got (symplectic Euler over the sub-step: their own velocity already moved them in the rigid
        step), so a light body on a stiff contact stays stable (the sub-steps resolve its contact frequency)."""
        if not len(self.kind):
            return
        if rule == "trapezoid":
            f0, t0 = self._previous if self._previous is not None else self._reaction(x0, v0)
            f1, t1 = self._reaction(x1, v1)
            force, torque = 0.5 * (f0 + f1), 0.5 * (t0 + t1)
        else:
            f1, t1 = self._reaction(x1, v1)
            force, torque = f1, t1
        R = quat_to_body(self.orientation)
        inv_world = np.einsum("nij,njk,nlk->nil", R, self.inv_inertia_local, R)
        self.delta_velocity += h * force * self.inv_mass[:, None]
        self.delta_angular += h * np.einsum("nij,nj->ni", inv_world, torque)
        self.centre += h * self.delta_velocity
        w = self.delta_angular
        q = self.orientation   # q += h/2 (0, w) q, renormalised
        dq = 0.5 * h * np.stack([-(w * q[:, 1:]).sum(1), w[:, 0] * q[:, 0] + w[:, 1] * q[:, 3] - w[:, 2] * q[:, 2],
                                 w[:, 1] * q[:, 0] + w[:, 2] * q[:, 1] - w[:, 0] * q[:, 3],
                                 w[:, 2] * q[:, 0] + w[:, 0] * q[:, 2] - w[:, 1] * q[:, 1]], axis=1)
        q = q + dq
        self.orientation = q / np.linalg.norm(q, axis=1, keepdims=True)
        self._pose()
        self._previous = self._reaction(x1, v1)


def quat_to_body(q: np.ndarray) -> np.ndarray:
    from tumble._core.math3d import quat_to_matrices

    return quat_to_matrices(q)
