"""The gauss step (paper 002 Fig. 7, the purely position-based iteration, in 3-D body coordinates):

    collide                          contacts of the current poses (within the margin)
    u* = v + dt M^-1 (f - w x I w)   the free prediction (Fig. 7 a-b: x* = x + dt v + dt^2 M^-1 f)
    QP                               min 1/2 (u - u*)^T M (u - u*)  s.t. linearised non-penetration
                                     (+ polyhedral friction cone), gauss.qp
    v = Delta / dt                   totally inelastic by construction (002 §7, Thm 7.1)
    x += dt v, q += dt/2 w q, |q| = 1   the linearised rotation projected back onto unit quaternions

Bodies that touch no contact keep u* (no QP unknowns): free flight is the scheme's closed form.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from tumble._core import stages
from tumble._core.dynamics.integrate import STATE_LIMIT, correct_bodies, guard_pushed_bodies, pushed_start
from tumble._core.solvers.gauss import qp as gqp
from tumble._core.solvers.gauss.settings import GaussSettings
from tumble._core.solvers.protocol import Capabilities, Solver


class GaussSolver(Solver):
    name = "gauss"
    description = ("Gauss' principle of least constraint as a position-based QP per step (paper 002 Fig. 7, "
                   "3-D bodies, polyhedral friction cone; Clarabel/OSQP)")
    settings_class = GaussSettings
    capabilities = Capabilities(joints=False, sleeping=False, restitution=False,
                                counters=("qp_iterations", "qp_ms", "qp_solved", "rows", "variables"))

    def __init__(self, core) -> None:
        super().__init__(core)
        self._warm = None       # (u, z) of the last OSQP solve (its warm start)

    @classmethod
    def release_speed(cls, settings) -> float:
        """max_correction_speed: an overlap pushed at depth / dt up to ``split_speed`` keeps that as
        velocity (002's scheme); deeper ones move with the capped push while the velocities come
        from the QP without it."""
        return float(settings.max_correction_speed)

    def step(self, core, dt, prof, t):
        b, s = core.bodies, core.settings
        n = b.count
        # u* (gravity, user forces, gyroscopic term) in the frames of the current orientations: the
        # detection below would refresh them too late for the prediction (R I^-1 R^T of this pose)
        stages.refresh_frames(core)
        guard = None
        if s.pushed_energy_guard and n:
            # the state the energy guard of the pushed bodies measures the step from (whether some contact
            # is deep is known only after the detection below)
            guard = (np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3)))
            pushed_start(n, b.body_fixed, b.body_position, b.body_orientation, b.body_linear_velocity,
                         b.body_angular_velocity, *guard)
        stages.integrate_velocities(core, dt)
        margin = s.contact_margin
        if s.speculative_margin and n:
            margin += dt * self._approach_speed(core)
        t = stages.lap(prof, "prepare", t)
        contacts = stages.collide(core, prof, t, False, margin)
        t = time.perf_counter()
        c = core.contacts
        problem = gqp.assemble(b.body_position, b.body_orientation, b.body_mass, b.body_inertia_local, b.body_fixed,
                               n, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal,
                               c.contact_depth, c.contact_friction, c.count, b.body_linear_velocity,
                               b.body_angular_velocity, dt, s.friction_edges, s.max_correction_speed)
        t = stages.lap(prof, "prepare", t)
        cnt = core.counters
        push, sane = None, False
        c.contact_normal_impulse[: c.count] = 0.0
        c.contact_friction_impulse[: c.count] = 0.0
        if problem is None:
            cnt.update(qp_iterations=0, qp_ms=0.0, qp_solved=1, rows=0, variables=0)
        else:
            # a deep overlap (push depth / dt above split_speed): the positions take the QP with the
            # capped push, the velocities the QP whose overlapping rows ask for no separation (h = 0;
            # always feasible: u = 0 satisfies it), so the overlap is released without its push as
            # kinetic energy (a jam of two spheres between two fixed ones left at 55 m/s with one QP)
            depth = c.contact_depth[problem.row_contact]
            push = None
            if np.any(depth > s.split_speed * dt):
                pushed = gqp.solve(problem, s.qp_solver, s.qp_tolerance, s.qp_max_iterations, None,
                                   s.polish_max_rows)
                if pushed.solved and np.all(np.isfinite(pushed.u)):    # a jam's push has no solution
                    push = pushed.u.reshape(-1, 6)
                problem = dataclasses.replace(problem, h=np.where(depth > 0.0, 0.0, problem.h))
            res = gqp.solve(problem, s.qp_solver, s.qp_tolerance, s.qp_max_iterations,
                            self._warm if s.qp_solver == "osqp" else None, s.polish_max_rows)
            cnt.update(qp_iterations=res.iterations, qp_ms=res.ms, qp_solved=int(res.solved),
                       rows=int(problem.h.shape[0]), variables=int(problem.q.shape[0]))
            with np.errstate(invalid="ignore"):
                sane = (np.all(np.abs(b.body_linear_velocity[problem.active]) <= STATE_LIMIT)
                        and np.all(np.abs(b.body_angular_velocity[problem.active]) <= STATE_LIMIT))
            if not sane:
                # the prediction itself is NaN or beyond STATE_LIMIT (an extreme load): whatever the QP
                # returned, the prediction is left in place, the step's check fails, and World rolls
                # the step back and names the origin
                self._warm = None
            elif np.all(np.isfinite(res.u)):
                u = res.u.reshape(-1, 6)
                b.body_linear_velocity[problem.active] = u[:, :3]
                b.body_angular_velocity[problem.active] = u[:, 3:]
                self._warm = (res.u, res.z)
                self._store_impulses(core, problem, res.z)
            else:                                   # no usable answer to a sane problem: the touching bodies stop
                b.body_linear_velocity[problem.active] = 0.0
                b.body_angular_velocity[problem.active] = 0.0
                self._warm = None
            t = stages.lap(prof, "solve", t)
        stages.integrate_positions(core, dt)             # Delta = dt u, quaternions renormalised
        if problem is not None and push is not None and sane:
            # the push's extra displacement dt (u_push - u) as a pure position correction: a body it
            # turns keeps its body-frame w (turned with the world-frame one kept, a 2 x 4 x 102 m box
            # started 51 m into the ground spinning at (5, 4, 0) rad/s gained 0.8 % of its 12 MJ a step)
            disp_lin = np.zeros((n, 3))
            disp_ang = np.zeros((n, 3))
            disp_lin[problem.active] = dt * (push[:, :3] - b.body_linear_velocity[problem.active])
            disp_ang[problem.active] = dt * (push[:, 3:] - b.body_angular_velocity[problem.active])
            correct_bodies(n, b.body_fixed, disp_lin, disp_ang, b.body_position, b.body_orientation,
                           b.body_angular_velocity)
            if guard is not None:
                # a pushed body gains kinetic energy only from the work its forces did along the way it
                # went, push included (``GaussSettings.pushed_energy_guard``, issue 17)
                pushed = np.any(disp_lin != 0.0, axis=1) | np.any(disp_ang != 0.0, axis=1)
                guard_pushed_bodies(n, b.body_fixed, pushed, b.body_mass, b.body_inertia_local, core.gravity,
                                    b.body_force, b.body_torque, dt, *guard, b.body_position, b.body_orientation,
                                    b.body_linear_velocity, b.body_angular_velocity)
        stages.lap(prof, "integrate", t)
        return contacts

    @staticmethod
    def _approach_speed(core) -> float:
        """An upper bound of how fast two surfaces can approach this step [m/s]: twice the largest
        |v*| + |w*| R over the dynamic bodies (R the largest bounding radius of a finite geom)."""
        b, g = core.bodies, core.geoms
        dyn = ~b.body_fixed[: b.count]
        if not dyn.any():
            return 0.0
        v = np.sqrt(np.max(np.einsum("ij,ij->i", b.body_linear_velocity[: b.count][dyn],
                                     b.body_linear_velocity[: b.count][dyn])))
        w = np.sqrt(np.max(np.einsum("ij,ij->i", b.body_angular_velocity[: b.count][dyn],
                                     b.body_angular_velocity[: b.count][dyn])))
        radius = g.geom_radius[: g.count]
        finite = radius[np.isfinite(radius)]
        r = float(finite.max()) if finite.shape[0] else 0.0
        return 2.0 * (float(v) + float(w) * r)

    @staticmethod
    def _store_impulses(core, problem, z) -> None:
        """Contact impulses from the multipliers: row r pushes along e_r = n + mu t_k with impulse
        mass_scale z_r [N s]; its n part is normal, the rest friction (World.contacts reports them)."""
        c = core.contacts
        imp = problem.mass_scale * np.maximum(z, 0.0)
        vec = imp[:, None] * problem.row_direction                                # (rows, 3)
        contact = problem.row_contact
        total = np.zeros((c.count, 3))
        np.add.at(total, contact, vec)
        normal = np.zeros(c.count)
        np.add.at(normal, contact, imp)
        c.contact_normal_impulse[: c.count] = normal
        c.contact_friction_impulse[: c.count] = total - normal[:, None] * c.contact_normal[: c.count]

