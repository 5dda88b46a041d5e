"""Elastic-rigid contact: penalty springs between elastic surface vertices and rigid geoms.

Method. Paper 003 only treats a rigid floor (§7.2: sticky contact springs tied where a vertex arrives).
Against a *moving* rigid body a sticky anchor would have to follow the body and its reaction would have to be
booked on it, so for rigid geoms other than the horizontal floor we use the penalty form of the same idea: a
surface vertex x inside a rigid geom at depth d >= 0 along the geom's outward normal n (the shortest way out)
feels the force

    f = k d n,      energy k d^2 / 2,

the gradient of that energy (a zero-rest-length spring to the nearest point on the geom surface, §7.2's
spring with its anchor sliding along the surface: frictionless). The elastic integrator sees f like any other
force (``ElasticSystem._forces``), so its adaptive step (RKF 4(5), §8.3) resolves the stiff contact; the geom
is held still at its pose at the end of the rigid step for the duration of the elastic step (operator
splitting: rigid step, then elastic step against the frozen geoms).

Reaction. The rigid body receives -f at x (force and torque about its centre of mass) integrated over the
elastic step: for RKF the trapezoid rule over every accepted sub-step [t, t + h] (the sub-steps are short
next to the contact time, so the impulse matches the elastic momentum change to O(h^2)); for backward Euler
h f(x1), which is exactly what the implicit step applied to the vertices. The World adds the impulse to the
body's velocities after the elastic step (Newton's third law: total momentum is conserved up to that
quadrature error). The coupling is explicit on the rigid side, stable while dt sqrt(K / m) < 2, with m the
rigid mass and K the stiffness it feels (the contact springs in series with the elastic body under it).

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
def obstacle_forces(x, vertices, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size, stiffness,
                    forces):
    """Add k d n to ``forces`` (n, 3) for every listed vertex (``vertices``, surface vertex indices) inside an
    obstacle; return the penalty energy sum k d^2 / 2 (J)."""
    energy = 0.0
    normal = np.zeros(3)
    for a in range(vertices.shape[0]):
        i = vertices[a]
        for g in range(obstacle_type.shape[0]):
            depth = _penetration(obstacle_type[g], obstacle_position[g], obstacle_rotation[g], obstacle_size[g],
                                 x[i], normal)
            if depth > 0.0:
                for c in range(3):
                    forces[i, c] += stiffness * depth * normal[c]
                energy += 0.5 * stiffness * depth * depth
    return energy


@kernel
def obstacle_reactions(x, vertices, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size, stiffness,
                       obstacle_centre, weight, force_out, torque_out):
    """Add ``weight`` times the reaction on each obstacle, -k d n at the vertex (force, and torque about
    ``obstacle_centre`` (g, 3), the owning body's centre of mass) to ``force_out`` / ``torque_out`` (g, 3);
    return the number of (vertex, obstacle) pairs in contact."""
    touching = 0
    normal = np.zeros(3)
    for a in range(vertices.shape[0]):
        i = vertices[a]
        for g in range(obstacle_type.shape[0]):
            depth = _penetration(obstacle_type[g], obstacle_position[g], obstacle_rotation[g], obstacle_size[g],
                                 x[i], normal)
            if depth > 0.0:
                touching += 1
                f0 = -weight * stiffness * depth * normal[0]
                f1 = -weight * stiffness * depth * normal[1]
                f2 = -weight * stiffness * depth * normal[2]
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
    """The rigid geoms an ElasticSystem pushes against during one elastic step, and the impulse it gives them.

    Set by the World before each elastic step (``set``); the system calls ``forces`` inside its derivative and
    ``accumulate`` after every accepted sub-step. ``impulse`` / ``angular_impulse`` (g, 3) N s, about each
    geom's body centre of mass, are what the World then applies to the rigid bodies.
    """

    def __init__(self, stiffness: float = RIGID_CONTACT_STIFFNESS):
        self.stiffness = float(stiffness)
        self.set(np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros((0, 3)),
                 np.zeros((0, 3)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))

    def set(self, kind, position, rotation, size, centre, body, vertices) -> None:
        self.kind = np.ascontiguousarray(kind, dtype=np.int64)
        self.position = np.ascontiguousarray(position, dtype=np.float64)
        self.rotation = np.ascontiguousarray(rotation, dtype=np.float64)
        self.size = np.ascontiguousarray(size, dtype=np.float64)
        self.centre = np.ascontiguousarray(centre, dtype=np.float64)
        self.body = np.asarray(body, dtype=np.int64)
        self.vertices = np.ascontiguousarray(vertices, dtype=np.int64)
        self.impulse = np.zeros((len(self.kind), 3))
        self.angular_impulse = np.zeros((len(self.kind), 3))
        self._start_state = None
        self.touching = 0

    @property
    def count(self) -> int:
        return len(self.kind)

    def forces(self, x: np.ndarray, forces: np.ndarray) -> float:
        if not len(self.kind):
            return 0.0
        return obstacle_forces(x, self.vertices, self.kind, self.position, self.rotation, self.size,
                               self.stiffness, forces)

    def accumulate(self, x0: np.ndarray, x1: np.ndarray, h: float, rule: str) -> None:
        """Add the reaction impulse of an accepted sub-step from x0 to x1 of length h (s): ``"trapezoid"``
        h (R(x0) + R(x1)) / 2 (RKF) or ``"end"`` h R(x1) (backward Euler)."""
        if not len(self.kind):
            return
        if rule == "trapezoid":
            self._reaction(x0, 0.5 * h)
            self.touching = self._reaction(x1, 0.5 * h)
        else:
            self.touching = self._reaction(x1, h)

    def _reaction(self, x: np.ndarray, weight: float) -> int:
        return int(obstacle_reactions(x, self.vertices, self.kind, self.position, self.rotation, self.size,
                                      self.stiffness, self.centre, weight, self.impulse, self.angular_impulse))
