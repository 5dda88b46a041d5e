"""The jacobi step: rows from contacts (warm-started from the contact cache, Catto 001 §8),
v += dt M^-1 F_ext, projected Jacobi sweeps (Erleben 000 §3), x += dt v, relax sweeps without
Baumgarte feedback (as pgs), impulses cached."""

from __future__ import annotations

import time

import numpy as np

from tumble._core import stages
from tumble._core.contact.rows import ROW_TURN_TOLERANCE, refresh_turned_rows, split_deep_rows, store_contact_impulses
from tumble._core.dynamics.integrate import guard_pushed_bodies, pushed_start
from tumble._core.solvers.jacobi.kernels import jacobi_pseudo_correction, relax_jacobi, solve_jacobi
from tumble._core.solvers.jacobi.settings import JacobiSettings
from tumble._core.solvers.protocol import Capabilities, Solver

_EMPTY = np.zeros(0)
_NO_PUSHED = np.zeros(0, dtype=np.bool_)


class JacobiSolver(Solver):
    name = "jacobi"
    description = ("projected Jacobi iteration on the contact rows, every row updated from the same "
                   "velocities (Erleben 000 §3; compare pgs)")
    settings_class = JacobiSettings
    capabilities = Capabilities(joints=False, counters=("iterations", "merit", "rows", "cache_hits"))

    @classmethod
    def release_speed(cls, settings) -> float:
        """max_correction_speed: Baumgarte pushes up to ``split_speed`` are velocity (the relax sweeps
        then take most of it back), deeper overlaps move by dropped pseudo-velocities."""
        return float(settings.max_correction_speed)

    def step(self, core, dt, prof, t):
        b, r, s = core.bodies, core.rows, core.settings
        contacts = stages.collide(core, prof, t, s.warm_start)
        t = time.perf_counter()
        stages.prepare_rows(core, dt)
        c = core.contacts
        # deep overlaps (push above split_speed) leave the velocity solve for the pseudo-velocity pass
        deep, pseudo = 0, _EMPTY
        if c.count:
            pseudo = np.zeros(r.count)
            deep = split_deep_rows(c.count, c.contact_depth, s.baumgarte / dt, s.slop, s.max_correction_speed,
                                   s.split_speed, r.row_bias, r.row_bias_relax, pseudo)
        n = b.count
        guard = deep and s.pushed_energy_guard
        if guard:   # the state the energy guard of the pushed bodies measures the step from
            pushed = np.zeros(n, dtype=np.bool_)
            x0, v_lin0, w_body0 = np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3))
            pushed_start(n, b.body_fixed, b.body_position, b.body_orientation, b.body_linear_velocity,
                         b.body_angular_velocity, x0, v_lin0, w_body0)
        stages.integrate_velocities(core, dt)
        t = stages.lap(prof, "prepare", t)

        history = np.zeros(s.iterations) if s.record_merit else _EMPTY
        iters, merit = solve_jacobi(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_lo,
                                    r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_lambda,
                                    b.body_linear_velocity, b.body_angular_velocity, s.iterations,
                                    float(s.relaxation), float(s.relaxation_bound), b.count, s.tolerance, history)
        stages.solve_counters(core, iters, merit, history)
        t = stages.lap(prof, "solve", t)

        relax = s.relax_iterations > 0 and r.count
        row_orientation = b.body_orientation[:b.count].copy() if relax else None
        stages.integrate_positions(core, dt)
        if deep:
            jacobi_pseudo_correction(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, pseudo, r.row_lo,
                                     r.row_hi, r.row_link, r.row_mu, r.row_cfm, b.body_position, b.body_orientation,
                                     b.body_fixed, b.count, s.iterations, float(s.relaxation),
                                     float(s.relaxation_bound), dt,
                                     b.body_angular_velocity, pushed if guard else _NO_PUSHED)
        t = stages.lap(prof, "integrate", t)
        if relax:
            # B = M^-1 J^T at the orientations after the move (issue 17: a 168 m capsule spinning at
            # 11 rad/s gained 4.1 kJ in the relax sweeps with the rows' inverse inertia of before it)
            refresh_turned_rows(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, b.body_orientation,
                                row_orientation, b.body_inv_inertia_local, b.body_inv_inertia_world, b.body_fixed,
                                b.count, np.zeros(b.count, dtype=np.bool_), ROW_TURN_TOLERANCE)
            relax_jacobi(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias_relax, r.row_lo, r.row_hi,
                         r.row_link, r.row_mu, r.row_cfm, r.row_lambda, b.body_linear_velocity,
                         b.body_angular_velocity, s.relax_iterations, float(s.relaxation),
                         float(s.relaxation_bound), b.count)
            t = stages.lap(prof, "relax", t)
        if guard:
            # a pushed body gains kinetic energy only from the work its forces did along the way it
            # went, push included (``JacobiSettings.pushed_energy_guard``, issue 17)
            guard_pushed_bodies(n, b.body_fixed, pushed, b.body_mass, b.body_inertia_local, core.gravity,
                                b.body_force, b.body_torque, dt, x0, v_lin0, w_body0, b.body_position,
                                b.body_orientation, b.body_linear_velocity, b.body_angular_velocity)
        c = core.contacts
        store_contact_impulses(c.count, 0, r.row_J, r.row_lambda, c.contact_normal_impulse, c.contact_friction_impulse)
        stages.lap(prof, "store", t)
        return contacts
