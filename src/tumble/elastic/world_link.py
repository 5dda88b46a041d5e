"""The World's elastic bodies: one ElasticSystem owned by the core state, stepped after the rigid step.

``World.add_elastic_body`` appends an :class:`ElasticBody` here; the system (``ElasticSystem``, system.py) is
(re)built whenever the set of bodies, their constraints, the floor or the options change, carrying the state of
the bodies it already had (positions, velocities, floor springs, time, counters), so adding a body between
steps is allowed. The owner lives on the core state (``CoreState.elastic``), so ``World.save_state`` /
``restore_state`` deep-copy it with the rest (``MassSolver`` shares its immutable LU factors on copy).

World.step(dt) = rigid solver step over [t, t + dt], then ``ElasticBodies.step(core, dt)``:
  1. the floor: the highest fixed ``Plane`` whose world normal is +z becomes the system's floor (paper 003 §7.2
     sticky contact springs, events §6); every other plane, sphere, box, capsule and hull geom near the elastic
     bodies becomes a penalty obstacle at its end-of-rigid-step pose (coupling.py);
  2. the elastic system steps exactly dt (adaptive RKF 4(5) sub-steps, §8.3, or backward Euler);
  3. the coupled rigid bodies respond inside the elastic sub-steps (coupling.Obstacles.accumulate: the
     reaction changes their velocities, J / m and I_world^-1 L, and moves them by that change), then the World
     writes the new velocities and poses back and the sleeping solver is told the bodies were pushed.
The elastic integrator is separate from the rigid one, so elastic bodies work under every rigid solver.
"""

from __future__ import annotations

import numpy as np

from tumble._core import types as T
from tumble._core.math3d import quat_to_matrices
from tumble.elastic.coupling import RIGID_CONTACT_STIFFNESS, Obstacles
from tumble.elastic.system import ElasticSystem
from tumble.errors import ElasticError

#: geom types an elastic body collides with (coupling.py)
COUPLED_TYPES = (T.GEOM_SPHERE, T.GEOM_CAPSULE, T.GEOM_BOX, T.GEOM_PLANE, T.GEOM_HULL)
#: m, obstacles are gathered whose bounding sphere comes within this distance (plus the elastic bodies' largest
#: vertex speed times dt) of the elastic bodies' bounding box
GATHER_MARGIN = 0.05
#: the state an ElasticSystem rebuild carries over besides positions, velocities and springs
_CARRIED = ("time", "dissipated", "steps_taken", "steps_rejected", "event_truncations", "springs_created",
            "springs_removed", "newton_iterations", "newton_unconverged", "derivative_evaluations", "_h",
            "last_tie_time", "last_tie_gap")


class ElasticBodies:
    """The elastic bodies of one World and their ElasticSystem.

    bodies, names      ElasticBody and name per elastic-body id.
    options            ElasticSystem keywords (integrator, tol, contact_stiffness, ... see system.py), checked
                       by building the system.
    rigid_stiffness    N/m, penalty stiffness against rigid geoms (coupling.RIGID_CONTACT_STIFFNESS).
    system             the ElasticSystem (None before the first body).
    last_impulse       (body count, 3) N s: the linear impulse the last step gave each rigid body.
    """

    def __init__(self):
        self.bodies: list = []
        self.names: list[str] = []
        self.options: dict = {}
        self.rigid_stiffness = RIGID_CONTACT_STIFFNESS
        self.system: ElasticSystem | None = None
        self.floor: float | None = None
        self.surface_vertices = np.zeros(0, dtype=np.int64)
        self.last_touching = 0
        self.last_impulse = np.zeros((0, 3))

    # ------------------------------------------------------------------ building
    def rebuild(self, time: float, gravity: np.ndarray, floor: float | None) -> None:
        """Build the system for the current bodies/options/floor, carrying over the old system's state; on an
        error the old system stays (the caller undoes its own change)."""
        new = ElasticSystem(self.bodies, gravity=np.array(gravity, dtype=np.float64), floor_z=floor,
                            **self.options)
        old = self.system
        if old is not None:
            n = len(old.positions)
            new.positions[:n] = old.positions
            new.velocities[:n] = old.velocities
            new.spring_alive[:n] = old.spring_alive
            new.spring_anchor[:n] = old.spring_anchor
            for name in _CARRIED:
                setattr(new, name, getattr(old, name))
            new.min_volume_ratio = min(new.min_volume_ratio, old.min_volume_ratio)
            if old.body_contacts is not None and new.body_contacts is not None:
                new.body_contacts.set_state(old.body_contacts.state())  # vertices and edges only appended
            new._h = min(new._h, new.max_step)
        else:
            new.time = float(time)
        if len(new.constrained):  # constrained vertices on their trajectories at the current time
            target, target_velocity, _ = new._constraint_targets(new.time)
            new.positions[new.constrained] = target
            new.velocities[new.constrained] = target_velocity
        new.obstacles = Obstacles(self.rigid_stiffness)
        if old is not None and old.obstacles is not None:  # the friction anchors (vertices only appended)
            n = len(old.obstacles.anchor_geom)
            new.obstacles.anchor_geom = np.full(len(new.positions), -1, dtype=np.int64)
            new.obstacles.anchor_local = np.zeros((len(new.positions), 3))
            new.obstacles.anchor_geom[:n] = old.obstacles.anchor_geom
            new.obstacles.anchor_local[:n] = old.obstacles.anchor_local
        if new.integrator == "rkf45" and self.options.get("max_step", "auto") == "auto":
            new.max_step = new._stability_step()  # now with the penalty springs' stiffness
            new._h = min(new._h, new.max_step)
        starts = new.body_vertex_start
        self.surface_vertices = np.unique(np.concatenate(
            [np.unique(b.mesh.surface) + s for b, s in zip(self.bodies, starts[:-1])])).astype(np.int64)
        self.system = new
        self.floor = floor

    # ------------------------------------------------------------------ stepping
    #: the ElasticSystem attributes that change during a step (arrays copied, scalars kept): what
    #: ``snapshot`` / ``restore`` save so that World.step can roll a failed step back
    _STEP_STATE = ("positions", "velocities", "spring_alive", "spring_anchor", "time", "dissipated", "_h",
                   "steps_taken", "steps_rejected", "event_truncations", "springs_created", "springs_removed",
                   "last_tie_time")

    def snapshot(self) -> dict:
        """The elastic bodies' step state (cheap: the vertex arrays and a few numbers)."""
        sysm = self.system
        out = {}
        for k in self._STEP_STATE:
            if hasattr(sysm, k):
                v = getattr(sysm, k)
                out[k] = v.copy() if isinstance(v, np.ndarray) else v
        out["_link"] = (self.last_touching, self.last_impulse.copy())
        if sysm.body_contacts is not None:
            out["_body_contacts"] = sysm.body_contacts.state()
        out["_anchors"] = (sysm.obstacles.anchor_geom.copy(), sysm.obstacles.anchor_local.copy())
        return out

    def restore(self, snap: dict) -> None:
        """Undo a step from its ``snapshot``."""
        sysm = self.system
        for k, v in snap.items():
            if k == "_link":
                self.last_touching, self.last_impulse = v
            elif k == "_body_contacts":
                sysm.body_contacts.set_state(v)
            elif k == "_anchors":
                sysm.obstacles.anchor_geom, sysm.obstacles.anchor_local = v[0].copy(), v[1].copy()
            elif isinstance(v, np.ndarray):
                getattr(sysm, k)[...] = v
            else:
                setattr(sysm, k, v)

    def step(self, core, dt: float) -> None:
        """Step the elastic bodies by dt against the rigid geoms (module docstring)."""
        system = self.system
        system.gravity = np.array(core.gravity, dtype=np.float64)
        obstacles = system.obstacles
        self._gather(core, dt, obstacles)
        system.step(dt)
        self.last_touching = obstacles.touching
        b = core.bodies
        self.last_impulse = np.zeros((b.count, 3))
        moving = obstacles.bodies[obstacles.inv_mass > 0.0]
        if len(moving):
            # the contact's share of the step (coupling.Obstacles.accumulate): velocity change and displacement
            keep = obstacles.inv_mass > 0.0
            b.body_linear_velocity[moving] += obstacles.delta_velocity[keep]
            b.body_angular_velocity[moving] += obstacles.delta_angular[keep]
            b.body_position[moving] = obstacles.centre[keep]
            b.body_orientation[moving] = obstacles.orientation[keep]
            R = quat_to_matrices(b.body_orientation[moving])
            b.body_inv_inertia_world[moving] = np.einsum("nij,njk,nlk->nil", R, b.body_inv_inertia_local[moving], R)
            self.last_impulse[moving] = obstacles.impulse[keep]
            for i in moving:
                core.solver.wake(int(i))
            core.solver.state_changed()
        core.counters.update(self.counters())

    def _gather(self, core, dt: float, obstacles) -> None:
        """Hand the obstacles near the elastic bodies to the system, posed from their bodies' current state."""
        system = self.system
        g, b = core.geoms, core.bodies
        n = g.count
        kind = g.geom_type[:n]
        body = g.geom_body[:n]
        idx = np.flatnonzero(np.isin(kind, COUPLED_TYPES) & ~b.body_removed[body])
        rotation = np.zeros((0, 3, 3))
        position = np.zeros((0, 3))
        if len(idx):
            Rb = quat_to_matrices(b.body_orientation[body[idx]])
            Rl = quat_to_matrices(g.geom_local_orientation[idx])
            rotation = np.einsum("nij,njk->nik", Rb, Rl)
            position = b.body_position[body[idx]] + np.einsum("nij,nj->ni", Rb, g.geom_local_position[idx])
            # the +z floor plane is the system's own floor (sticky springs, §7.2), not a penalty obstacle
            plane = kind[idx] == T.GEOM_PLANE
            floor = plane & (rotation[:, 2, 2] > 1.0 - 1e-12) & (self.floor is not None)
            floor &= np.abs(position[:, 2] - (self.floor if self.floor is not None else 0.0)) < 1e-12
            # near: bounding sphere against the elastic bounding box grown by the margin and the motion
            x = system.positions
            reach = GATHER_MARGIN + dt * float(np.sqrt((system.velocities ** 2).sum(1).max()))
            lo, hi = x.min(0) - reach, x.max(0) + reach
            radius = g.geom_radius[idx]
            gap = np.maximum(np.maximum(lo - position, position - hi), 0.0)
            near = np.sqrt((gap ** 2).sum(1)) <= np.where(np.isfinite(radius), radius, 0.0)
            if np.any(plane):  # a plane is near when the box reaches below it
                corners = np.array([[cx, cy, cz] for cx in (lo[0], hi[0]) for cy in (lo[1], hi[1])
                                    for cz in (lo[2], hi[2])])
                heights = np.einsum("nk,mk->nm", rotation[:, :, 2], corners) \
                    - np.einsum("nk,nk->n", rotation[:, :, 2], position)[:, None]
                near = np.where(plane, heights.min(1) <= 0.0, near)
            keep = near & ~floor
            idx, rotation, position = idx[keep], rotation[keep], position[keep]
        # hull geoms: their face planes (n, offset) in the geom frame, one block per geom
        planes = np.zeros((0, 4))
        plane_range = np.zeros((len(idx), 2), dtype=np.int64)
        hull = kind[idx] == T.GEOM_HULL
        if np.any(hull):
            arrays = core.hull_arrays
            h = g.geom_hull[idx[hull]]
            start, count = arrays.face_start[h], arrays.face_count[h]
            first = np.concatenate([[0], np.cumsum(count)[:-1]])
            rows = np.repeat(start - first, count) + np.arange(int(count.sum()))  # the hulls' face rows, in order
            planes = np.concatenate([arrays.face_normal[rows], arrays.face_offset[rows, None]], axis=1)
            plane_range[hull, 0] = first
            plane_range[hull, 1] = count
        bodies, local = np.unique(body[idx], return_inverse=True)
        obstacles.set(kind[idx], position, rotation, g.geom_size[idx], local.reshape(-1), b.body_position[bodies],
                      b.body_orientation[bodies], b.body_linear_velocity[bodies], b.body_angular_velocity[bodies],
                      b.body_inv_mass[bodies], b.body_inv_inertia_local[bodies], bodies,
                      self.surface_vertices, idx, g.geom_friction[idx], len(system.positions), planes, plane_range)

    # ------------------------------------------------------------------ queries
    def check(self, body) -> int:
        if isinstance(body, (bool, np.bool_)) or not isinstance(body, (int, np.integer)):
            raise ElasticError(f"elastic body id {body!r} is not an integer")
        if not 0 <= body < len(self.bodies):
            raise ElasticError(f"elastic body id {body} does not exist (the world has {len(self.bodies)} "
                               "elastic bodies)")
        return int(body)

    def counters(self) -> dict:
        s = self.system
        return {"elastic_steps_taken": s.steps_taken, "elastic_steps_rejected": s.steps_rejected,
                "elastic_contact_springs": s.contact_springs_alive, "elastic_min_volume_ratio": s.min_volume_ratio,
                "elastic_rigid_contacts": self.last_touching,
                "elastic_body_springs": 0 if s.body_contacts is None else s.body_contacts.count}
