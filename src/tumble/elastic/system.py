"""ElasticSystem: elastic bodies, gravity, a rigid floor; stepped by RKF 4(5) or backward Euler (paper 003).

Equations of motion (§2, eq. 2-4): M x'' = F with the constant consistent mass matrix M (mass.py) and
F = elastic (energy.py) + viscous (viscosity.py) + gravity + contact springs (contact.py) + constraint
forces (constraints.py). All bodies share one set of SoA arrays (vertices, tets) with per-tet material
constants, so every per-tet loop is one kernel call however many bodies there are; body i owns the vertex
rows ``body_vertex_start[i]:body_vertex_start[i + 1]``.

Discrete events (§6): after each proposed step the vertex-floor condition n . x - floor_z > 0 is checked
over the step by Hermite interpolation and Bernstein-Bezier bisection (events.py). A crossing at t_e inside
the step truncates the step to t_e (the step is redone from t_a, §6.1); a crossing at the very start of a
step (within ``contact_time_tolerance``) ties a contact spring to the vertex at its floor point (§7.2) and
the step is redone with it. After every accepted step the springs that pull are removed.

Integrators: ``"rkf45"`` (paper §8.3, adaptive, tolerance ``tol`` in m) and ``"implicit"`` (backward Euler,
Newton on the incremental potential with the exact sparse Hessian, implicit.py): one step per call of
``step(dt)`` unless an event truncates it.

Wiring into World (done: ``world_link.ElasticBodies``, docs/architecture.md "Elastic bodies in the step"): the
state is plain SoA arrays (``positions``, ``velocities`` (n, 3), ``tets``
(m, 4) and the per-tet constants, ``spring_alive`` / ``spring_anchor``), the bodies' rows are contiguous,
and ``step(dt)`` advances exactly dt, so a World can own one ElasticSystem, step it with its own dt and
read ``vertices(i)`` / ``energies()`` / ``counters()`` for recordings and metrics. Rigid-elastic contact is the
``obstacles`` hook (coupling.py): penalty forces in ``_forces`` and the rigid bodies' response after each
accepted sub-step.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from tumble.elastic.body import ElasticBody
from tumble.elastic.body_contact import BodyContacts
from tumble.elastic.constraints import LagrangeProjector
from tumble.elastic.contact import remove_pulling_springs, spring_forces
from tumble.elastic.energy import elastic_forces, rest_shape
from tumble.elastic.events import plane_crossings
from tumble.elastic.hessian import elastic_hessian_triplets
from tumble.elastic.implicit import backward_euler_step
from tumble.elastic.mass import MassSolver, consistent_mass_matrix
from tumble.elastic.rkf45 import next_step_size, rkf45_attempt
from tumble.elastic.sparse_pattern import HessianPattern
from tumble.elastic.viscosity import viscous_forces
from tumble.errors import ElasticError, SimulationError

INTEGRATORS = ("rkf45", "implicit")
CONSTRAINT_METHODS = ("lagrange", "springs")


class ElasticSystem:
    """Elastic bodies under gravity above an optional floor plane z = ``floor_z``.

    bodies                 list of ElasticBody.
    gravity                (3,) m/s^2, default (0, 0, -9.81).
    floor_z                m, height of the rigid floor (normal +z); None: no floor.
    integrator             "rkf45" (default) or "implicit".
    tol                    m, RKF local error tolerance on positions (default 1e-4 m; the paper used 1 mm).
    velocity_error_time    s, weight tau of velocity errors in the RKF error (default 0.01 s).
    initial_step           s, first RKF step (default 1e-4 s; the controller adapts it).
    min_step               s, smaller steps raise SimulationError (default 1e-12 s).
    contact_stiffness      N/m, stiffness k of the floor contact springs (default 2e4 N/m).
    contact_time_tolerance s, a crossing this close to the start of a step ties a spring (default 1e-6 s).
    event_u_tolerance      fraction of a step to which crossings are located (default 1e-6).
    constraint_method      "lagrange" (exact multipliers, default) or "springs" (§3.1).
    constraint_stiffness   N/m, stiffness of constraint springs (default 1e5 N/m).
    max_step               s, largest RKF step; "auto" (default): 3.0 / omega_max, with omega_max^2 the largest
                           eigenvalue of M^-1 K at rest (power iteration) plus the spring stiffnesses over the
                           smallest vertex mass. Fehlberg's 5th-order weights are stable on the imaginary axis up
                           to h omega ~ 3.6 (and slightly amplifying below ~2.9): without a cap the controller lets
                           h grow until round-off in the stiffest mode has grown to the tolerance. None: no cap.
    newton_tol             m, implicit: Newton stops when the largest update is below it (default 1e-9 m).
    max_newton             implicit: Newton iteration limit per step (default 30).
    body_contact           contact between different elastic bodies (body_contact.py: vertex-face and edge-edge
                           events over each step, sticky springs of stiffness ``contact_stiffness``; default True,
                           active with two or more bodies). Self-contact of one body is not modelled.
    """

    def __init__(self, bodies, gravity=(0.0, 0.0, -9.81), floor_z: float | None = None, integrator: str = "rkf45",
                 tol: float = 1e-4, velocity_error_time: float = 0.01, initial_step: float = 1e-4,
                 min_step: float = 1e-12, contact_stiffness: float = 2e4, contact_time_tolerance: float = 1e-6,
                 event_u_tolerance: float = 1e-6, constraint_method: str = "lagrange",
                 constraint_stiffness: float = 1e5, newton_tol: float = 1e-9, max_newton: int = 30,
                 max_step: float | str | None = "auto", body_contact: bool = True):
        bodies = list(bodies)
        if not bodies or not all(isinstance(b, ElasticBody) for b in bodies):
            raise ElasticError(f"ElasticSystem.bodies must be a non-empty list of ElasticBody, got {bodies!r}")
        if integrator not in INTEGRATORS:
            raise ElasticError(f"ElasticSystem.integrator must be one of {INTEGRATORS}, got {integrator!r}")
        if constraint_method not in CONSTRAINT_METHODS:
            raise ElasticError(f"ElasticSystem.constraint_method must be one of {CONSTRAINT_METHODS}, "
                               f"got {constraint_method!r}")
        for name, value in (("tol", tol), ("velocity_error_time", velocity_error_time), ("initial_step", initial_step),
                            ("min_step", min_step), ("contact_stiffness", contact_stiffness),
                            ("contact_time_tolerance", contact_time_tolerance),
                            ("event_u_tolerance", event_u_tolerance), ("constraint_stiffness", constraint_stiffness),
                            ("newton_tol", newton_tol)):
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ElasticError(f"ElasticSystem.{name} must be a finite number > 0, got {value!r}")
        if not isinstance(body_contact, (bool, np.bool_)):
            raise ElasticError(f"ElasticSystem.body_contact must be True or False, got {body_contact!r}")
        if not isinstance(max_newton, int) or max_newton < 1:
            raise ElasticError(f"ElasticSystem.max_newton must be an integer >= 1, got {max_newton!r}")
        gravity = np.asarray(gravity, dtype=np.float64)
        if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
            raise ElasticError(f"ElasticSystem.gravity must be 3 finite numbers, got {np.asarray(gravity).tolist()}")
        if floor_z is not None and (not isinstance(floor_z, (int, float)) or not math.isfinite(floor_z)):
            raise ElasticError(f"ElasticSystem.floor_z must be a finite number or None, got {floor_z!r}")
        self.bodies = bodies
        self.gravity = gravity
        self.floor_z = None if floor_z is None else float(floor_z)
        self.integrator = integrator
        self.tol = float(tol)
        self.velocity_error_time = float(velocity_error_time)
        self.min_step = float(min_step)
        self.contact_stiffness = float(contact_stiffness)
        self.contact_time_tolerance = float(contact_time_tolerance)
        self.event_u_tolerance = float(event_u_tolerance)
        self.constraint_method = constraint_method
        self.constraint_stiffness = float(constraint_stiffness)
        self.newton_tol = float(newton_tol)
        self.max_newton = max_newton
        self._h = float(initial_step)

        # --- SoA arrays over all bodies
        starts = np.cumsum([0] + [b.mesh.vertex_count for b in bodies])
        self.body_vertex_start = starts.astype(np.int64)
        self.positions = np.ascontiguousarray(np.concatenate([b.initial_positions for b in bodies]))
        self.velocities = np.ascontiguousarray(np.concatenate([b.initial_velocities for b in bodies]))
        self.tets = np.ascontiguousarray(np.concatenate([b.mesh.tets + s for b, s in zip(bodies, starts)]))
        rest = [rest_shape(b.initial_positions, b.mesh.tets) for b in bodies]
        self.rest_inverse = np.ascontiguousarray(np.concatenate([r[0] for r in rest]))
        self.rest_volume = np.ascontiguousarray(np.concatenate([r[1] for r in rest]))
        counts = [b.mesh.tet_count for b in bodies]
        self.tet_bulk = np.repeat([b.material.bulk_modulus for b in bodies], counts).astype(np.float64)
        self.tet_shear = np.repeat([b.material.shear_modulus for b in bodies], counts).astype(np.float64)
        self.tet_bulk_viscosity = np.repeat([b.material.bulk_viscosity for b in bodies], counts).astype(np.float64)
        self.tet_shear_viscosity = np.repeat([b.material.shear_viscosity for b in bodies], counts).astype(np.float64)
        self.viscous = bool(self.tet_bulk_viscosity.any() or self.tet_shear_viscosity.any())
        tet_mass = self.rest_volume * np.repeat([b.material.density for b in bodies], counts)
        self.mass = MassSolver(consistent_mass_matrix(len(self.positions), self.tets, tet_mass))
        self._mass_kron = sp.kron(self.mass.matrix, sp.identity(3), format="csr")

        # --- constraints (global vertex indices)
        self.constraints = [(c.vertices + s, c) for b, s in zip(bodies, starts) for c in b.constraints]
        self.constrained = (np.concatenate([idx for idx, _ in self.constraints]) if self.constraints
                            else np.zeros(0, dtype=np.int64))
        if len(np.unique(self.constrained)) != len(self.constrained):
            raise ElasticError("ElasticSystem: a vertex is held by two constraints")
        self._projector = (LagrangeProjector(self.mass, self.constrained)
                           if len(self.constrained) and constraint_method == "lagrange" else None)

        if len(self.constrained):  # start the constrained vertices on their trajectories (position and velocity)
            target, target_velocity, _ = self._constraint_targets(0.0)
            self.positions[self.constrained] = target
            self.velocities[self.constrained] = target_velocity

        # --- contact springs (§7.2), one per vertex at most
        n = len(self.positions)
        self.plane_normal = np.array([0.0, 0.0, 1.0])
        self.obstacles = None  # coupling.Obstacles: rigid geoms of a World (penalty springs), set by the World
        self.spring_alive = np.zeros(n, dtype=np.bool_)
        self.spring_anchor = np.zeros((n, 3))
        self._crossing_u = np.empty(n)
        self._hessian_rows = np.empty(144 * len(self.tets), dtype=np.int64)
        self._hessian_cols = np.empty(144 * len(self.tets), dtype=np.int64)
        self._hessian_values = np.empty(144 * len(self.tets))
        self._pattern = None
        # --- contact between elastic bodies (§6.3, §7.2): surface triangles of every body, owner = body
        self.body_contacts = None
        if body_contact and len(bodies) > 1:
            triangles = np.concatenate([b.mesh.surface + s for b, s in zip(bodies, starts)])
            owner = np.repeat(np.arange(len(bodies)), [len(b.mesh.surface) for b in bodies])
            self.body_contacts = BodyContacts(triangles, owner, n, self.contact_stiffness)

        if max_step == "auto":
            max_step = self._stability_step() if integrator == "rkf45" else None
        elif max_step is not None and (not isinstance(max_step, (int, float)) or not max_step > 0):
            raise ElasticError(f"ElasticSystem.max_step must be 'auto', None or a number > 0, got {max_step!r}")
        self.max_step = np.inf if max_step is None else float(max_step)
        self._h = min(self._h, self.max_step)

        # --- bookkeeping
        self.time = 0.0
        self.dissipated = 0.0  # J: viscous losses, rigid-contact damping heat, energy of removed contact springs
        self.steps_taken = 0
        self.steps_rejected = 0
        self.event_truncations = 0
        self.springs_created = 0
        self.springs_removed = 0
        self.last_tie_time = None  # s, when contact springs were last tied (§6: the located event time)
        self.last_tie_gap = None  # m, largest |height above the floor| of the vertices tied then
        self.newton_iterations = 0
        self.newton_unconverged = 0
        self.derivative_evaluations = 0
        self._stage_min_ratio = np.inf
        _, ratio = elastic_forces(self.positions, self.tets, self.rest_inverse, self.rest_volume, self.tet_bulk,
                                  self.tet_shear, np.zeros_like(self.positions))
        self.min_volume_ratio = float(ratio)  # smallest det C met in an accepted step so far

    # ------------------------------------------------------------------ queries
    @property
    def body_count(self) -> int:
        return len(self.bodies)

    @property
    def contact_springs_alive(self) -> int:
        return int(self.spring_alive.sum())

    def vertices(self, body: int) -> np.ndarray:
        """Current positions (n_i, 3) m of body ``body``'s vertices (a copy)."""
        start, stop = self._range(body)
        return self.positions[start:stop].copy()

    def vertex_velocities(self, body: int) -> np.ndarray:
        start, stop = self._range(body)
        return self.velocities[start:stop].copy()

    def _range(self, body: int) -> tuple[int, int]:
        if not isinstance(body, (int, np.integer)) or not 0 <= body < len(self.bodies):
            raise ElasticError(f"ElasticSystem: body index must be in 0..{len(self.bodies) - 1}, got {body!r}")
        return int(self.body_vertex_start[body]), int(self.body_vertex_start[body + 1])

    def volume_ratios(self) -> np.ndarray:
        """det C per tet (m,): current volume over rest volume."""
        p = self.positions[self.tets]
        edges = np.stack([p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]], axis=2)
        return np.linalg.det(edges) / 6.0 / self.rest_volume

    def momentum(self) -> np.ndarray:
        """Linear momentum sum_ij M_ij v_j (kg m/s) = sum_i m_i v_i (row sums of M, mass.py)."""
        return self.mass.lumped @ self.velocities

    def angular_momentum(self) -> np.ndarray:
        """Angular momentum about the origin, integral rho x x v dV = sum_ij M_ij x_i x v_j (kg m^2/s)."""
        return np.cross(self.positions, self.mass.matrix @ self.velocities).sum(axis=0)

    def energies(self) -> dict[str, float]:
        """Energies (J) of the current state: elastic, kinetic (1/2 v^T M v), potential (gravity),
        contact (live floor, pair and rigid penalty springs), constraint (constraint springs), dissipated (so far:
        viscous losses, the heat c |v - u|^2 of the rigid-contact damping (RKF only: backward Euler books the
        viscous loss alone, and damps numerically besides), the energy left in removed springs), and total =
        their sum (constant, to the integrator's tolerance, without prescribed motion and with fixed rigid geoms:
        a moving rigid body exchanges work with the elastic ones that this split does not see)."""
        forces = np.zeros_like(self.positions)
        elastic, _ = elastic_forces(self.positions, self.tets, self.rest_inverse, self.rest_volume, self.tet_bulk,
                                    self.tet_shear, forces)
        kinetic = 0.5 * float(np.sum(self.velocities * (self.mass.matrix @ self.velocities)))
        potential = -float(self.mass.lumped @ (self.positions @ self.gravity))
        contact = spring_forces(self.positions, self.spring_alive, self.spring_anchor, self.contact_stiffness, forces)
        if self.body_contacts is not None:
            contact += self.body_contacts.forces(self.positions, forces)
        if self.obstacles is not None:
            contact += self.obstacles.forces(self.positions, self.velocities, forces)[0]
        constraint = 0.0
        if self.constraint_method == "springs" and len(self.constrained):
            target, _, _ = self._constraint_targets(self.time)
            stretch = self.positions[self.constrained] - target
            constraint = 0.5 * self.constraint_stiffness * float(np.sum(stretch * stretch))
        parts = {"elastic": float(elastic), "kinetic": kinetic, "potential": potential, "contact": float(contact),
                 "constraint": constraint, "dissipated": self.dissipated}
        parts["total"] = sum(parts.values())
        return parts

    def constraint_violation(self) -> float:
        """Largest distance (m) of a constrained vertex from its target."""
        if not len(self.constrained):
            return 0.0
        target, _, _ = self._constraint_targets(self.time)
        return float(np.linalg.norm(self.positions[self.constrained] - target, axis=1).max())

    def floor_force(self) -> np.ndarray:
        """Total force (3,) N the live floor springs exert on the elastic vertices now (sum -k (x - anchor))."""
        if not self.spring_alive.any():
            return np.zeros(3)
        alive = self.spring_alive
        return -self.contact_stiffness * (self.positions[alive] - self.spring_anchor[alive]).sum(0)

    def counters(self) -> dict[str, float]:
        return {"time": self.time, "steps_taken": self.steps_taken, "steps_rejected": self.steps_rejected,
                "event_truncations": self.event_truncations, "contact_springs_alive": self.contact_springs_alive,
                "springs_created": self.springs_created, "springs_removed": self.springs_removed,
                "min_volume_ratio": self.min_volume_ratio, "newton_iterations": self.newton_iterations,
                "newton_unconverged": self.newton_unconverged, "derivative_evaluations": self.derivative_evaluations,
                "body_springs_alive": 0 if self.body_contacts is None else self.body_contacts.count,
                "body_springs_created": 0 if self.body_contacts is None else self.body_contacts.created}

    # ------------------------------------------------------------------ forces
    def _constraint_targets(self, t: float):
        parts = [c.targets(t) for _, c in self.constraints]
        return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))

    def _forces(self, t: float, x: np.ndarray, v: np.ndarray, forces: np.ndarray, with_viscosity: bool = True):
        """Add every non-constraint internal force at (t, x, v) to ``forces``: elastic, viscous, contact and
        constraint springs. Return (elastic + spring energy, min volume ratio, dissipated power: viscous (eq. 16)
        plus the rigid-contact damping's heat, W)."""
        energy, ratio = elastic_forces(x, self.tets, self.rest_inverse, self.rest_volume, self.tet_bulk,
                                       self.tet_shear, forces)
        power = 0.0
        if with_viscosity and self.viscous and ratio > 0.0:
            power = viscous_forces(x, v, self.tets, self.tet_bulk_viscosity, self.tet_shear_viscosity, forces)
        energy += spring_forces(x, self.spring_alive, self.spring_anchor, self.contact_stiffness, forces)
        if self.body_contacts is not None:  # springs between elastic bodies (body_contact.py)
            energy += self.body_contacts.forces(x, forces)
        if self.obstacles is not None:  # rigid geoms of a World (coupling.py): penalty springs and their damping
            penalty, heat = self.obstacles.forces(x, v, forces)
            energy += penalty
            if with_viscosity:
                power += heat
        if self.constraint_method == "springs" and len(self.constrained):
            target, _, _ = self._constraint_targets(t)
            stretch = x[self.constrained] - target
            forces[self.constrained] -= self.constraint_stiffness * stretch
            energy += 0.5 * self.constraint_stiffness * float(np.sum(stretch * stretch))
        return energy, ratio, power

    def _derivative(self, t: float, x: np.ndarray, v: np.ndarray):
        """Accelerations (n, 3) m/s^2 from eq. 7, the dissipated power (W), and whether the state is valid
        (every tet J > 0)."""
        self.derivative_evaluations += 1
        forces = np.zeros_like(x)
        _, ratio, power = self._forces(t, x, v, forces)
        if not ratio > 0.0:
            return forces, 0.0, False
        self._stage_min_ratio = min(self._stage_min_ratio, ratio)
        acceleration = self.mass.solve(forces)
        acceleration += self.gravity  # M^-1 (M 1 g) = g: the consistent gravity force is M_s 1 g
        if self._projector is not None:
            _, _, target_acceleration = self._constraint_targets(t)
            self._projector.correct(acceleration, target_acceleration)
        return acceleration, power, True

    def _stability_step(self, iterations: int = 30) -> float:
        """3.0 / omega_max (see ``max_step``): power iteration on M^-1 K at the initial state."""
        n = len(self.positions)
        self.hessian_triplets(self.positions)
        stiffness = sp.coo_matrix((self._hessian_values, (self._hessian_rows, self._hessian_cols)),
                                  shape=(3 * n, 3 * n)).tocsr()
        vector = np.random.default_rng(0).standard_normal((n, 3))
        estimate = 0.0
        for _ in range(iterations):
            image = self.mass.solve((stiffness @ vector.ravel()).reshape(n, 3))
            estimate = float(np.linalg.norm(image) / np.linalg.norm(vector))
            vector = image / np.linalg.norm(image)
        springs = self.contact_stiffness if self.floor_z is not None else 0.0
        if self.body_contacts is not None:  # a vertex can hold a floor, a vertex-face and edge-edge springs
            springs += 2.0 * self.contact_stiffness
        if self.obstacles is not None:
            springs += self.obstacles.stiffness
        if self.constraint_method == "springs" and len(self.constrained):
            springs += self.constraint_stiffness
        omega_squared = 1.05 * estimate + springs / float(self.mass.lumped.min())  # 5 %: power iteration is low
        return 3.0 / math.sqrt(omega_squared)

    def hessian_pattern(self):
        """The implicit integrator's fixed CSC pattern (sparse_pattern.py), built on first use."""
        if self._pattern is None:
            self.hessian_triplets(self.positions)
            fixed = (3 * self.constrained[:, None] + np.arange(3)).ravel() if self._projector is not None \
                else np.zeros(0, dtype=np.int64)
            self._pattern = HessianPattern(self._hessian_rows.copy(), self._hessian_cols.copy(), self._mass_kron,
                                           fixed)
        return self._pattern

    def hessian_triplets(self, x: np.ndarray) -> bool:
        """Fill the Hessian triplet buffers at positions x (hessian.py); False if some tet is inverted."""
        return elastic_hessian_triplets(x, self.tets, self.rest_inverse, self.rest_volume, self.tet_bulk,
                                        self.tet_shear, self._hessian_rows, self._hessian_cols, self._hessian_values)

    # ------------------------------------------------------------------ stepping
    def solve_static(self, pseudo_step: float = 1e4) -> bool:
        """Move to the static equilibrium under gravity, constraints and live springs: one backward Euler step
        of ``pseudo_step`` s from rest, whose inertia term M / h^2 is then a negligible regularization of
        Newton's minimization of the potential energy. Velocities are set to zero, time is unchanged.
        Return whether Newton converged."""
        x1, _, _, converged, iterations = backward_euler_step(self, self.time, self.positions,
                                                              np.zeros_like(self.velocities), pseudo_step)
        self.newton_iterations += iterations
        if converged is None:
            raise SimulationError("ElasticSystem.solve_static: no valid (non-inverted) equilibrium found")
        self.positions = np.ascontiguousarray(x1)
        self.velocities = np.zeros_like(x1)
        return bool(converged)

    def advance(self, t: float) -> None:
        """Step until time t (s)."""
        if t > self.time:
            self.step(t - self.time)

    def step(self, dt: float) -> None:
        """Advance the state by dt seconds (RKF: as many adaptive steps as needed; implicit: one backward Euler
        step, split where a contact event falls inside it)."""
        if not isinstance(dt, (int, float)) or not math.isfinite(dt) or dt <= 0:
            raise ElasticError(f"ElasticSystem.step dt must be a finite number > 0, got {dt!r}")
        t_end = self.time + dt
        while t_end - self.time > 1e-12 * max(1.0, abs(t_end)):
            self._substep(t_end)
        self.time = t_end

    def _propose(self, h: float):
        """One integrator step from the current state: (x1, v1, dissipated, error ratio)."""
        if self.integrator == "rkf45":
            return rkf45_attempt(self._derivative, self.time, self.positions, self.velocities, h, self.tol,
                                 self.velocity_error_time)
        x1, v1, dissipated, converged, iterations = backward_euler_step(self, self.time, self.positions,
                                                                        self.velocities, h)
        self.newton_iterations += iterations
        if converged is None:
            return x1, v1, 0.0, np.inf  # inverted or failed: halve
        if not converged:
            self.newton_unconverged += 1
        return x1, v1, dissipated, 0.0

    def _substep(self, t_end: float) -> None:
        remaining = t_end - self.time
        # the controller's step: lowered by rejections, not by event or end-of-call cuts
        h_control = min(self._h, self.max_step)
        h = min(h_control, remaining) if self.integrator == "rkf45" else remaining
        truncated = h < h_control
        for _ in range(10000):
            if h < self.min_step:
                raise SimulationError(f"ElasticSystem: step size {h:.3e} s fell below min_step={self.min_step:.1e} s "
                                      f"at t = {self.time:.6f} s (integrator {self.integrator})")
            self._stage_min_ratio = np.inf
            x1, v1, dissipated, error = self._propose(h)
            if not error <= 1.0:
                self.steps_rejected += 1
                h = min(next_step_size(h, error), self.max_step) if self.integrator == "rkf45" else 0.5 * h
                h_control = h
                h = min(h, remaining)
                truncated = h < h_control
                continue
            first = 2.0
            if self.floor_z is not None:
                first = plane_crossings(self.positions, self.velocities, x1, v1, h, self.plane_normal, self.floor_z,
                                        self.spring_alive, self.event_u_tolerance, self._crossing_u)
            if self.body_contacts is not None:
                first = min(first, self.body_contacts.crossings(self.positions, self.velocities, x1, v1, h,
                                                                self.event_u_tolerance, self.contact_time_tolerance))
            if first <= 1.0:
                if first * h <= self.contact_time_tolerance:
                    self._tie_springs(h)
                    continue  # redo the step with the new springs
                self.event_truncations += 1
                h = first * h
                truncated = True
                continue
            break
        else:
            raise SimulationError(f"ElasticSystem: no acceptable step from t = {self.time:.6f} s")
        if self.obstacles is not None:  # the rigid geoms' reaction impulse over this sub-step (coupling.py)
            self.obstacles.accumulate(self.positions, self.velocities, x1, v1, h,
                                      "trapezoid" if self.integrator == "rkf45" else "end")
        self.positions = x1
        self.velocities = v1
        self.time += h
        self.dissipated += dissipated
        self.steps_taken += 1
        self.min_volume_ratio = min(self.min_volume_ratio, self._stage_min_ratio)
        if self.integrator == "rkf45":
            proposal = next_step_size(h, error)
            self._h = min(self.max_step, max(h_control, proposal) if truncated else proposal)
        if self.floor_z is not None:
            removed, released = remove_pulling_springs(self.positions, self.spring_alive, self.spring_anchor,
                                                       self.contact_stiffness, self.plane_normal)
            self.springs_removed += removed
            self.dissipated += released
        if self.body_contacts is not None:
            self.dissipated += self.body_contacts.remove_pulling(self.positions)
        if self.obstacles is not None:  # Coulomb friction against rigid geoms: anchors tied, slid, dropped
            self.dissipated += self.obstacles.update_friction(self.positions)

    def _tie_springs(self, h: float) -> None:
        """Tie a contact spring (§7.2) to every vertex whose crossing falls within contact_time_tolerance of
        the step start, anchored at the vertex's projection on the floor."""
        if self.body_contacts is not None:
            self.body_contacts.tie()
        if self.floor_z is None:
            self.last_tie_time = self.time
            return
        ties = np.flatnonzero(self._crossing_u * h <= self.contact_time_tolerance)
        if not len(ties):
            self.last_tie_time = self.time
            return
        anchors = self.positions[ties].copy()
        anchors[:, 2] = self.floor_z
        self.spring_anchor[ties] = anchors
        self.spring_alive[ties] = True
        self.springs_created += len(ties)
        self.last_tie_time = self.time
        self.last_tie_gap = float(np.abs(self.positions[ties, 2] - self.floor_z).max())
