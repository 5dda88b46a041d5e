"""The pgs step (Catto 001): rows from contacts, v += dt M^-1 F_ext, PGS (Alg. 4), x += dt v,
relax sweeps, impulses cached for the next step's warm start, joint projection."""

from __future__ import annotations

import time

import numpy as np

from tumble._core import stages
from tumble._core.contact.rows import store_contact_impulses
from tumble._core.solvers.pgs.kernels import relax_pgs, solve_pgs, split_correction
from tumble._core.solvers.pgs.settings import PGSSettings
from tumble._core.solvers.protocol import Capabilities, Solver

_EMPTY = np.zeros(0)


class PGSSolver(Solver):
    name = "pgs"
    description = ("projected Gauss-Seidel / sequential impulses with contact caching (Catto, Iterative "
                   "dynamics with temporal coherence)")
    settings_class = PGSSettings
    capabilities = Capabilities(joints=True, counters=("iterations", "merit", "rows", "cache_hits", "joint_rows",
                                                       "joint_error", "joint_error_after"))

    def step(self, core, dt, prof, t):
        b, r, s = core.bodies, core.rows, core.settings
        contacts = stages.collide(core, prof, t, s.warm_start)
        t = time.perf_counter()
        offset = stages.prepare_rows(core, dt)
        stages.integrate_velocities(core, dt)
        t = stages.lap(prof, "prepare", t)

        history = np.zeros(s.iterations) if s.record_merit else _EMPTY
        split = s.position_correction == "split"
        if r.count == 0:     # nothing to solve: what solve_pgs returns for no rows, without the call
            iters, merit = (1 if s.tolerance > 0.0 else s.iterations), 0.0
        else:                # split: the velocity solve has no position feedback (split_correction has it)
            iters, merit = solve_pgs(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag,
                                     r.row_bias_relax if split else r.row_bias, r.row_lo,
                                     r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_lambda,
                                     b.body_linear_velocity, b.body_angular_velocity, s.iterations, s.tolerance,
                                     history)
        stages.solve_counters(core, iters, merit, history)
        t = stages.lap(prof, "solve", t)

        stages.integrate_positions(core, dt)
        t = stages.lap(prof, "integrate", t)

        c = core.contacts
        if split and r.count:
            split_correction(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_bias_relax,
                             r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group, b.body_position,
                             b.body_orientation, b.body_fixed, b.count, s.iterations, dt)
        elif s.relax_iterations > 0 and r.count:
            relax_pgs(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias_relax, r.row_lo, r.row_hi,
                      r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_lambda, b.body_linear_velocity,
                      b.body_angular_velocity, s.relax_iterations)
        if c.count:
            store_contact_impulses(c.count, 0, r.row_J, r.row_lambda, c.contact_normal_impulse,
                                   c.contact_friction_impulse)
        stages.finish_joints(core, offset, r.row_lambda, dt)
        t = stages.lap(prof, "relax", t)
        stages.project_joints(core, dt)
        stages.lap(prof, "joints", t)
        return contacts
