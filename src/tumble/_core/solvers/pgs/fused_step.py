"""The one-solve pgs step of a small world with contact rows only, after the collision, in one kernel call.

``contact_step`` is what ``PGSSolver.step`` does one stage at a time for a step of one solve
(``substeps`` 1, the catto preset) with no joint, scalar sweeps (``normal_block_solve`` off), no
``record_merit``, position correction "relax" and fewer than ``stages.PARALLEL_MIN_CONTACTS`` points:

    rows             count_body_contacts + prepare_contact_rows (contact.rows.prepare_contact_rows_small)
    deep split       split_deep_rows: pushes above split_speed leave the velocity solve
    guard start      pushed_start, when a contact is deep and pushed_energy_guard is on
    velocities       v += dt M^-1 (f_ext - w x I w)                      (integrate_velocities)
    solve            pack, warm start and sweeps on the compact rows      (kernels.solve_pgs_pairs)
    positions        x += dt v, q over dt                                 (integrate_positions[_midpoint])
    pseudo pass      pseudo_correction of the deep contacts
    refresh          refresh_turned_rows / repack_changed_rows (relax sweeps only)
    relax            relax_pgs_pairs
    guard            guard_pushed_bodies
    impulses         store_contact_impulses (the next step's warm start)
    finish           finish_bodies: the non-finite check, the user forces cleared, the deepest overlap

the same kernels in the same order on the same arrays, so the result is the same bit for bit (IEEE
arithmetic, ``config``); ``tests/determinism/test_fused_catto.py`` holds it against the stages called
one by one (``World.profile_stages``). Issue 14's fixed cost: the staged path makes 11 kernel calls
(~340 array arguments at ~0.05 us each on this machine, measured: a 60-array call costs 2.9 us) and
~15 us of Python around them (profile laps, NumPy work arrays, settings reads) for stack10's 120 rows.
"""

from __future__ import annotations

import numpy as np

from tumble._core.config import kernel
from tumble._core.contact.rows import (
    prepare_contact_rows_small,
    refresh_turned_rows,
    split_deep_rows,
    store_contact_impulses,
)
from tumble._core.dynamics.integrate import (
    finish_bodies,
    guard_pushed_bodies,
    integrate_positions,
    integrate_positions_midpoint,
    integrate_velocities,
    pushed_start,
)
from tumble._core.rows import PAIR_COLUMNS, repack_changed_rows
from tumble._core.solvers.pgs.kernels import contact_substeps, pseudo_correction, relax_pgs_pairs, solve_pgs_pairs


@kernel
def contact_step(contact_count, contact_body_a, contact_body_b, contact_point, contact_normal, contact_depth,
                 contact_friction, contact_restitution, contact_normal_impulse, contact_friction_impulse,
                 body_position, body_orientation, body_linear_velocity, body_angular_velocity, body_mass,
                 body_inv_mass, body_inertia_local, body_inv_inertia_local, body_inv_inertia_world, body_force,
                 body_torque, body_fixed, body_contact_count, body_count, gravity, dt, baumgarte, slop,
                 max_correction_speed, restitution_threshold, friction_model, gravity_norm, warm_start, split_speed,
                 gyroscopic, midpoint, linear_damping, angular_damping, iterations, tolerance, relax_iterations,
                 active_set, guard, row_turn_tolerance, row_body, row_J, row_B, row_inv_diag, row_bias,
                 row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm,
                 row_group):
    """The step of the module docstring for ``contact_count`` > 0 points (rows [0, 3 contact_count) of
    the row store, whose capacity the caller reserved). Returns (rows, sweeps done, final merit theta,
    first body whose state became non-finite or -1, deepest overlap [m]) -- the last two as
    ``finish_bodies`` returns them."""
    rows = prepare_contact_rows_small(
        contact_count, contact_body_a, contact_body_b, contact_point, contact_normal, contact_depth, contact_friction,
        contact_restitution, contact_normal_impulse, contact_friction_impulse, body_position, body_linear_velocity,
        body_angular_velocity, body_inv_mass, body_mass, body_inv_inertia_world, body_fixed, body_contact_count,
        body_count, dt, baumgarte, slop, max_correction_speed, restitution_threshold, friction_model, gravity_norm,
        warm_start, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu,
        row_kind, row_lambda, row_owner, row_cfm, row_group)
    # deep overlaps (push above split_speed) leave the velocity solve for the pseudo-velocity pass
    pseudo = np.zeros(rows)
    deep = split_deep_rows(contact_count, contact_depth, baumgarte / dt, slop, max_correction_speed, split_speed,
                           row_bias, row_bias_relax, pseudo)
    guarded = body_count if (deep > 0 and guard) else 0     # the energy guard's state (zero-length without it)
    pushed = np.zeros(guarded, dtype=np.bool_)
    x0 = np.empty((guarded, 3))
    v_lin0 = np.empty((guarded, 3))
    w_body0 = np.empty((guarded, 3))
    if guarded:
        pushed_start(body_count, body_fixed, body_position, body_orientation, body_linear_velocity,
                     body_angular_velocity, x0, v_lin0, w_body0)
    integrate_velocities(body_linear_velocity, body_angular_velocity, body_orientation, body_inv_mass,
                         body_inertia_local, body_inv_inertia_world, body_force, body_torque, body_fixed, body_count,
                         gravity, dt, gyroscopic, linear_damping, angular_damping)
    row_orientation = np.empty((body_count, 4))     # where the rows' inverse inertia was taken
    for i in range(body_count):
        for k in range(4):
            row_orientation[i, k] = body_orientation[i, k]
    row_C = np.empty((rows, PAIR_COLUMNS))
    iters, merit = solve_pgs_pairs(rows, row_body, row_J, row_B, row_inv_diag, body_inv_mass, row_C, row_bias, row_lo,
                                   row_hi, row_link, row_mu, row_lambda, body_linear_velocity, body_angular_velocity,
                                   iterations, tolerance)
    if midpoint:
        integrate_positions_midpoint(body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                                     body_inertia_local, body_inv_inertia_local, body_fixed, body_count, dt)
    else:
        integrate_positions(body_position, body_orientation, body_linear_velocity, body_angular_velocity, body_fixed,
                            body_count, dt)
    if deep > 0:
        pseudo_correction(np.zeros(0, dtype=np.int64), 0, rows, row_body, row_J, row_B, row_inv_diag, pseudo, row_lo,
                          row_hi, row_link, row_mu, row_cfm, row_group, body_position, body_orientation, body_fixed,
                          body_count, iterations, dt, np.zeros((0, 3)), body_angular_velocity, active_set, pushed)
    if relax_iterations > 0:
        # the contact rows' B = M^-1 J^T at the orientations after the move, for the relax sweeps
        changed = np.zeros(body_count, dtype=np.bool_)
        if refresh_turned_rows(rows, row_body, row_J, row_B, row_inv_diag, body_orientation, row_orientation,
                               body_inv_inertia_local, body_inv_inertia_world, body_fixed, body_count, changed,
                               row_turn_tolerance):
            repack_changed_rows(rows, row_body, row_J, row_B, row_inv_diag, body_inv_mass, changed, row_C)
        relax_pgs_pairs(rows, row_body, row_C, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_lambda,
                        body_linear_velocity, body_angular_velocity, relax_iterations)
    if guarded:
        guard_pushed_bodies(body_count, body_fixed, pushed, body_mass, body_inertia_local, gravity, body_force,
                            body_torque, dt, x0, v_lin0, w_body0, body_position, body_orientation, body_linear_velocity,
                            body_angular_velocity)
    store_contact_impulses(contact_count, 0, row_J, row_lambda, contact_normal_impulse, contact_friction_impulse)
    bad, deepest = finish_bodies(body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                                 body_force, body_torque, body_count, contact_depth, contact_count)
    return rows, iters, merit, bad, deepest


@kernel
def contact_substep_step(contact_count, contact_body_a, contact_body_b, contact_point, contact_normal, contact_depth,
                         contact_friction, contact_restitution, contact_normal_impulse, contact_friction_impulse,
                         contact_key, body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                         body_mass, body_inv_mass, body_inertia_local, body_inv_inertia_local, body_inv_inertia_world,
                         body_force, body_torque, body_fixed, body_contact_count, body_count, gravity, dt, substeps,
                         baumgarte, slop, max_correction_speed, restitution_threshold, friction_model, gravity_norm,
                         warm_start, split_speed, gyroscopic, midpoint, linear_damping, angular_damping, block,
                         sweeps, tolerance, relax_iterations, record_merit, active_set, guard, row_turn_tolerance,
                         turn_tolerance, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi,
                         row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, row_group):
    """The substepped pgs step (``PGSSolver._substeps``) of a small world with contact rows only, after the
    collision, in one kernel call: the contact rows (``prepare_contact_rows_small``), the substep loop
    (``kernels.contact_substeps``, ``substeps`` of dt / substeps), the step's impulses stored for the next
    warm start (``store_contact_impulses``) and the finish's body check (``finish_bodies``): the calls the
    staged path makes, in its order, so the same bits (``tests/determinism/test_fused_substeps.py``).
    Returns (rows, sweeps done, last theta, (substeps,) theta per substep as ``contact_substeps`` fills
    it, first non-finite body or -1, deepest overlap [m])."""
    rows = prepare_contact_rows_small(
        contact_count, contact_body_a, contact_body_b, contact_point, contact_normal, contact_depth, contact_friction,
        contact_restitution, contact_normal_impulse, contact_friction_impulse, body_position, body_linear_velocity,
        body_angular_velocity, body_inv_mass, body_mass, body_inv_inertia_world, body_fixed, body_contact_count,
        body_count, dt, baumgarte, slop, max_correction_speed, restitution_threshold, friction_model, gravity_norm,
        warm_start, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu,
        row_kind, row_lambda, row_owner, row_cfm, row_group)
    merits = np.zeros(substeps)
    iters, merit, total = contact_substeps(
        substeps, dt / substeps, contact_count, block, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax,
        row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, contact_key, contact_depth, body_position,
        body_orientation, body_linear_velocity, body_angular_velocity, body_mass, body_inv_mass, body_inertia_local,
        body_inv_inertia_local, body_inv_inertia_world, body_force, body_torque, body_fixed, body_count, gravity,
        gyroscopic, midpoint, linear_damping, angular_damping, baumgarte / dt, slop, max_correction_speed, split_speed,
        sweeps, tolerance, relax_iterations, record_merit, merits, active_set, row_turn_tolerance, turn_tolerance,
        guard)
    store_contact_impulses(contact_count, 0, row_J, total, contact_normal_impulse, contact_friction_impulse)
    bad, deepest = finish_bodies(body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                                 body_force, body_torque, body_count, contact_depth, contact_count)
    return rows, iters, merit, merits, bad, deepest
