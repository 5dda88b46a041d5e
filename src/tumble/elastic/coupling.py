"""Elastic-rigid contact: penalty springs between elastic surface vertices and rigid geoms.

Method. Paper 003 only treats a rigid floor (§7.2: sticky contact springs tied where a vertex arrives).
Against a *moving* rigid body a sticky anchor would have to follow the body and its reaction would have to be
booked on it, so for rigid geoms other than the horizontal floor we use the penalty form of the same idea: a
surface vertex x inside a rigid geom at depth d >= 0 along the geom's outward normal n (the shortest way out)
feels the force

    f = k d n - c ((v - u) . n) n + f_t,      energy k d^2 / 2 + E_t,

(u the geom's velocity at x; the damping c acts on the normal approach speed, see RIGID_CONTACT_DAMPING; f_t
is Coulomb friction, below). The elastic part is the gradient of that energy: a zero-rest-length spring to the
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

Friction (Coulomb, beyond the paper's sticky-only §7.2 springs): a vertex that enters a geom whose material
has friction mu > 0 is tied to the material point of the geom where it is (the anchor, kept in the geom's
frame, so it moves with the rigid body) by a tangential spring of the same stiffness k. With s the tangential
part of x - anchor (normal n), the force is capped at the cone: f_t = -k s while k |s| <= mu k d (sticking),
f_t = -mu k d s / |s| beyond (sliding at mu times the normal spring force). f_t is the gradient of
E_t(s) = k |s|^2 / 2 for |s| <= mu d, k (mu d)^2 / 2 + mu k d (|s| - mu d) beyond, so within a step the force is
conservative and the integrator sees a continuous force. After each accepted sub-step an anchor stretched
past the cone slides along s until k |s| = mu k d (the slip), and the energy this releases, E_t(s) - E_t(s'),
is booked as dissipated (the friction work); a vertex that leaves every geom drops its anchor (at d = 0 the
cap and E_t are 0). One anchor per vertex (on the first frictional geom it touches). A block on a slope
therefore sticks for tan theta < mu and slides with a = g (sin theta - mu cos theta) otherwise
(tests/physics/test_elastic_friction.py). mu is the rigid geom's material friction (elastic materials carry
none).

Geom types: sphere, box, capsule, plane (a plane other than the +z floor), convex hull (depth = the smallest
distance to a face plane, through that face).
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
#: default contact damping c, N s/m: a vertex inside a geom also feels -c ((v - u) . n) n, u the geom's velocity
#: at the vertex: it damps the chatter of a light body on the springs. (Until issue 16's friction it acted on
#: the tangential velocity too, as viscous friction; Coulomb friction below now holds boards on jelly.) 50 N s/m
#: is about a third of critical for k = 2e4 N/m on a 0.3 kg vertex (2 sqrt(k m) = 155 N s/m).
RIGID_CONTACT_DAMPING = 50.0

_PLANE, _SPHERE, _CAPSULE, _BOX, _HULL = T.GEOM_PLANE, T.GEOM_SPHERE, T.GEOM_CAPSULE, T.GEOM_BOX, T.GEOM_HULL


@kernel
def _penetration(kind, centre, rotation, size, x, out_normal, planes, plane_start, plane_count):
    """Depth (m, > 0 inside) of point x in one geom and the geom's outward normal there (written to
    out_normal); depth <= 0 means outside. A hull is given by its face planes ``planes[plane_start:][:plane_count]``
    (rows n_x, n_y, n_z, offset in the geom frame, n . q <= offset inside)."""
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
    if kind == _HULL:
        # inside iff n_f . q < offset_f for every face; the shortest way out is through the face with the
        # largest n_f . q - offset_f (exact for a point inside a convex polyhedron: the distance to the
        # boundary is the smallest distance to a face plane)
        best = -1
        worst = -math.inf
        for f in range(plane_start, plane_start + plane_count):
            dist = planes[f, 0] * q0 + planes[f, 1] * q1 + planes[f, 2] * q2 - planes[f, 3]
            if dist >= 0.0:
                return -dist
            if dist > worst:
                worst = dist
                best = f
        if best < 0:
            return -1.0
        for c in range(3):
            out_normal[c] = rotation[c, 0] * planes[best, 0] + rotation[c, 1] * planes[best, 1] \
                + rotation[c, 2] * planes[best, 2]
        return -worst
    return -1.0


@kernel
def _contact_force(x, v, i, g, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size, obstacle_planes,
                   obstacle_plane_range, obstacle_centre, obstacle_velocity, obstacle_angular, stiffness, damping,
                   obstacle_geom, obstacle_friction,
                   anchor_geom, anchor_local, normal, out):
    """Contact of vertex i with obstacle g (module docstring, "Friction"). Writes into ``out`` (5,): the force
    (0:3) k d n - c ((v - u) . n) n + f_t, the friction spring's energy E_t (3) and the damping's heat rate
    c ((v - u) . n)^2 (4); u the geom's point velocity w x (x - centre) + v_body. Return the depth d (<= 0: no
    contact, ``out`` untouched)."""
    depth = _penetration(obstacle_type[g], obstacle_position[g], obstacle_rotation[g], obstacle_size[g], x[i], normal,
                         obstacle_planes, obstacle_plane_range[g, 0], obstacle_plane_range[g, 1])
    if depth > 0.0:
        w = obstacle_angular[g]
        r0 = x[i, 0] - obstacle_centre[g, 0]
        r1 = x[i, 1] - obstacle_centre[g, 1]
        r2 = x[i, 2] - obstacle_centre[g, 2]
        u0 = obstacle_velocity[g, 0] + w[1] * r2 - w[2] * r1
        u1 = obstacle_velocity[g, 1] + w[2] * r0 - w[0] * r2
        u2 = obstacle_velocity[g, 2] + w[0] * r1 - w[1] * r0
        vn = (v[i, 0] - u0) * normal[0] + (v[i, 1] - u1) * normal[1] + (v[i, 2] - u2) * normal[2]
        push = stiffness * depth - damping * vn
        out[0] = push * normal[0]
        out[1] = push * normal[1]
        out[2] = push * normal[2]
        out[3] = 0.0
        out[4] = damping * vn * vn
        cap = obstacle_friction[g] * stiffness * depth  # mu |k d n|
        if cap > 0.0 and anchor_geom[i] == obstacle_geom[g]:
            # tangential stretch s from the anchor (a material point of the geom): a = p_g + R_g a_local
            e0 = x[i, 0] - obstacle_position[g, 0]
            e1 = x[i, 1] - obstacle_position[g, 1]
            e2 = x[i, 2] - obstacle_position[g, 2]
            for c in range(3):
                a = (obstacle_rotation[g, c, 0] * anchor_local[i, 0] + obstacle_rotation[g, c, 1] * anchor_local[i, 1]
                     + obstacle_rotation[g, c, 2] * anchor_local[i, 2])
                if c == 0:
                    e0 -= a
                elif c == 1:
                    e1 -= a
                else:
                    e2 -= a
            en = e0 * normal[0] + e1 * normal[1] + e2 * normal[2]
            s0 = e0 - en * normal[0]
            s1 = e1 - en * normal[1]
            s2 = e2 - en * normal[2]
            length = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
            limit = cap / stiffness  # |s| where k |s| reaches the cap
            if length <= limit:
                scale = stiffness
                out[3] = 0.5 * stiffness * length * length
            else:
                scale = cap / length
                out[3] = 0.5 * stiffness * limit * limit + cap * (length - limit)
            out[0] -= scale * s0
            out[1] -= scale * s1
            out[2] -= scale * s2
    return depth


@kernel
def obstacle_forces(x, v, vertices, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size,
                    obstacle_planes, obstacle_plane_range, obstacle_centre, obstacle_velocity, obstacle_angular,
                    stiffness, damping, obstacle_geom,
                    obstacle_friction, anchor_geom, anchor_local, forces):
    """Add the contact force (``_contact_force``) to ``forces`` (n, 3) for every listed vertex (``vertices``,
    surface vertex indices) inside an obstacle; return (the energy sum k d^2 / 2 + E_t, J; the damping's heat
    rate, W)."""
    energy = 0.0
    power = 0.0
    normal = np.zeros(3)
    f = np.zeros(5)
    for a in range(vertices.shape[0]):
        i = vertices[a]
        for g in range(obstacle_type.shape[0]):
            depth = _contact_force(x, v, i, g, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size,
                                   obstacle_planes, obstacle_plane_range, obstacle_centre, obstacle_velocity,
                                   obstacle_angular, stiffness, damping, obstacle_geom, obstacle_friction, anchor_geom,
                                   anchor_local, normal, f)
            if depth > 0.0:
                for c in range(3):
                    forces[i, c] += f[c]
                energy += 0.5 * stiffness * depth * depth + f[3]
                power += f[4]
    return energy, power


@kernel
def obstacle_reactions(x, v, vertices, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size,
                       obstacle_planes, obstacle_plane_range, obstacle_centre, obstacle_velocity, obstacle_angular,
                       stiffness, damping, obstacle_geom,
                       obstacle_friction, anchor_geom, anchor_local, weight, force_out, torque_out):
    """Add ``weight`` times the reaction on each obstacle, minus the contact force at the vertex (force, and
    torque about ``obstacle_centre`` (g, 3), the owning body's centre of mass) to ``force_out`` / ``torque_out``
    (g, 3); return the number of (vertex, obstacle) pairs in contact."""
    touching = 0
    normal = np.zeros(3)
    f = np.zeros(5)
    for a in range(vertices.shape[0]):
        i = vertices[a]
        for g in range(obstacle_type.shape[0]):
            depth = _contact_force(x, v, i, g, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size,
                                   obstacle_planes, obstacle_plane_range, obstacle_centre, obstacle_velocity,
                                   obstacle_angular, stiffness, damping, obstacle_geom, obstacle_friction, anchor_geom,
                                   anchor_local, normal, f)
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


@kernel
def update_friction_anchors(x, vertices, obstacle_type, obstacle_position, obstacle_rotation, obstacle_size,
                            obstacle_planes, obstacle_plane_range, stiffness, obstacle_geom, obstacle_friction,
                            anchor_geom, anchor_local):
    """After an accepted sub-step (module docstring, "Friction"): a vertex that touches a geom with friction and
    has no anchor on it gets one where it is; an anchor stretched past the cone (k |s| > mu k d) slides so that
    k |s| = mu k d (Coulomb: sliding at the cap); a vertex touching no geom with its anchor loses it. Return the
    friction energy released, sum E_t(s) - E_t(s'), J (booked as dissipated)."""
    released = 0.0
    normal = np.zeros(3)
    for a in range(vertices.shape[0]):
        i = vertices[a]
        kept = False
        first = -1
        for g in range(obstacle_type.shape[0]):
            if not obstacle_friction[g] > 0.0:
                continue
            depth = _penetration(obstacle_type[g], obstacle_position[g], obstacle_rotation[g], obstacle_size[g], x[i],
                                 normal, obstacle_planes, obstacle_plane_range[g, 0], obstacle_plane_range[g, 1])
            if depth <= 0.0:
                continue
            if first < 0:
                first = g
            if anchor_geom[i] != obstacle_geom[g]:
                continue
            kept = True
            e0 = x[i, 0] - obstacle_position[g, 0]
            e1 = x[i, 1] - obstacle_position[g, 1]
            e2 = x[i, 2] - obstacle_position[g, 2]
            # anchor in world coordinates relative to the geom origin, a = R a_local
            a0 = (obstacle_rotation[g, 0, 0] * anchor_local[i, 0] + obstacle_rotation[g, 0, 1] * anchor_local[i, 1]
                  + obstacle_rotation[g, 0, 2] * anchor_local[i, 2])
            a1 = (obstacle_rotation[g, 1, 0] * anchor_local[i, 0] + obstacle_rotation[g, 1, 1] * anchor_local[i, 1]
                  + obstacle_rotation[g, 1, 2] * anchor_local[i, 2])
            a2 = (obstacle_rotation[g, 2, 0] * anchor_local[i, 0] + obstacle_rotation[g, 2, 1] * anchor_local[i, 1]
                  + obstacle_rotation[g, 2, 2] * anchor_local[i, 2])
            d0 = e0 - a0
            d1 = e1 - a1
            d2 = e2 - a2
            dn = d0 * normal[0] + d1 * normal[1] + d2 * normal[2]
            s0 = d0 - dn * normal[0]
            s1 = d1 - dn * normal[1]
            s2 = d2 - dn * normal[2]
            length = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
            cap = obstacle_friction[g] * stiffness * depth
            limit = cap / stiffness
            if length > limit:
                # E_t(s) - E_t(s') with |s'| = limit: cap (|s| - limit)
                released += cap * (length - limit)
                shift = 1.0 - limit / length  # move the anchor along s by (|s| - limit)
                a0 += shift * s0
                a1 += shift * s1
                a2 += shift * s2
                # back to the geom frame: a_local = R^T a
                for c in range(3):
                    anchor_local[i, c] = (obstacle_rotation[g, 0, c] * a0 + obstacle_rotation[g, 1, c] * a1
                                          + obstacle_rotation[g, 2, c] * a2)
            break
        if kept:
            continue
        if first >= 0:  # a new contact: anchored where the vertex is (no tangential stretch)
            g = first
            for c in range(3):
                anchor_local[i, c] = ((x[i, 0] - obstacle_position[g, 0]) * obstacle_rotation[g, 0, c]
                                      + (x[i, 1] - obstacle_position[g, 1]) * obstacle_rotation[g, 1, c]
                                      + (x[i, 2] - obstacle_position[g, 2]) * obstacle_rotation[g, 2, c])
            anchor_geom[i] = obstacle_geom[g]
        elif anchor_geom[i] >= 0:
            anchor_geom[i] = -1  # left the geom: at depth 0 the cap and with it E_t are 0
    return released


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
        # friction anchors (module docstring, "Friction"), per elastic vertex: the world geom id it is anchored
        # on (-1: none) and the anchor in that geom's frame, m; they outlive the per-step ``set``
        self.anchor_geom = np.full(0, -1, dtype=np.int64)
        self.anchor_local = np.zeros((0, 3))
        self.set(np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros((0, 3)),
                 np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 3)), np.zeros((0, 3)),
                 np.zeros(0), np.zeros((0, 3, 3)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))

    def set(self, kind, position, rotation, size, body, centre, orientation, velocity, angular_velocity, inv_mass,
            inv_inertia_local, bodies, vertices, geom_ids=None, friction=None, vertex_count: int = 0, planes=None,
            plane_range=None) -> None:
        """Geoms (kind, world position and rotation, size, local body index) and their bodies (centre of mass,
        orientation, 1/m, body-frame inverse inertia, world body ids ``bodies``); ``vertices``: the surface
        vertices that can touch them; ``geom_ids`` the geoms' world ids and ``friction`` their Coulomb
        coefficients (default: none, frictionless); ``vertex_count`` the elastic vertices (sizes the anchors);
        ``planes`` (P, 4) the hull geoms' face planes (n, offset; geom frame) and ``plane_range`` (g, 2) each
        geom's first plane and plane count (0 for the other shapes)."""
        from tumble._core.math3d import quat_to_matrices

        n_geoms = len(kind)
        self.geom_ids = np.ascontiguousarray(np.arange(n_geoms) if geom_ids is None else geom_ids, dtype=np.int64)
        self.friction = np.ascontiguousarray(np.zeros(n_geoms) if friction is None else friction, dtype=np.float64)
        if len(self.anchor_geom) < vertex_count:
            grown = np.full(vertex_count, -1, dtype=np.int64)
            grown[: len(self.anchor_geom)] = self.anchor_geom
            local = np.zeros((vertex_count, 3))
            local[: len(self.anchor_local)] = self.anchor_local
            self.anchor_geom, self.anchor_local = grown, local
        self.kind = np.ascontiguousarray(kind, dtype=np.int64)
        self.planes = np.zeros((0, 4)) if planes is None else np.ascontiguousarray(planes, dtype=np.float64)
        self.plane_range = (np.zeros((n_geoms, 2), dtype=np.int64) if plane_range is None
                            else np.ascontiguousarray(plane_range, dtype=np.int64).reshape(n_geoms, 2))
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
        return obstacle_forces(x, v, self.vertices, self.kind, self.position, self.rotation, self.size, self.planes,
                               self.plane_range, self._geom_centre, self._geom_velocity, self._geom_angular,
                               self.stiffness,
                               self.damping, self.geom_ids, self.friction, self.anchor_geom, self.anchor_local,
                               forces)

    def update_friction(self, x: np.ndarray) -> float:
        """Tie, slide and drop the friction anchors at the accepted positions x; return the friction energy
        released (J, booked as dissipated)."""
        if not len(self.kind) and not np.any(self.anchor_geom >= 0):
            return 0.0
        return update_friction_anchors(x, self.vertices, self.kind, self.position, self.rotation, self.size,
                                       self.planes, self.plane_range, self.stiffness, self.geom_ids, self.friction,
                                       self.anchor_geom,
                                       self.anchor_local)

    def _reaction(self, x: np.ndarray, v: np.ndarray):
        """Reaction force and torque about the centre (k, 3) on each coupled body at vertex positions x."""
        force = np.zeros((len(self.kind), 3))
        torque = np.zeros((len(self.kind), 3))
        self.touching = int(obstacle_reactions(x, v, self.vertices, self.kind, self.position, self.rotation,
                                               self.size, self.planes, self.plane_range, self._geom_centre,
                                               self._geom_velocity, self._geom_angular,
                                               self.stiffness, self.damping, self.geom_ids, self.friction,
                                               self.anchor_geom, self.anchor_local, 1.0, force, torque))
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
