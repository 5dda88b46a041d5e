"""The whole of a pgs step whose rows are all equality rows of the joint tree, in one kernel call
(issue 19): ``kernels.joint_substeps`` (the substep loop) and then ``kernels.finish_tree_step`` (the
impulses stored, the reactions, the tree's Newton projection), the two calls ``PGSSolver._joint_substeps``
made one after the other, in the same order on the same arrays, so the result is the same bit for bit.

Why one call: a kernel call costs ~0.13 us per array argument in Numba's dispatch (``kernels``'
docstrings); finish_tree_step's 45 arguments took 3.97 us a call with nothing to project (timeit, chain50's
arrays, 2-core VM), on chain50's ~0.24 ms step."""

from __future__ import annotations

from tumble._core.config import kernel
from tumble._core.solvers.pgs.kernels import finish_tree_step, joint_substeps


@kernel
def joint_tree_step(substeps, h, dt, row_count, warm_scale, fraction, max_speed, joint_frequency, joint_damping,
                    block_solve, sweeps, tolerance, relax_iterations, active_set, merits, total, project,
                    projection_iterations, projection_tolerance, no_loops, joint_row_total, joint_count, joint_type,
                    joint_body, joint_anchor, joint_axis, joint_ref, joint_rel_q, joint_length, joint_soft,
                    joint_has_limits, joint_limit, joint_motor_mode, joint_motor, joint_active, joint_row_start,
                    joint_row_count, joint_impulse, joint_coord, joint_lever, joint_force, joint_torque, node_count,
                    node_kind, node_ref, node_parent, node_side, D, D_fac, F, H_diag, y, x, z, refine_spread,
                    refine_steps, body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                    body_mass, body_inv_mass, body_inertia_local, body_inv_inertia_local, body_inv_inertia_world,
                    body_force, body_torque, body_fixed, body_count, gravity, gyroscopic, midpoint, linear_damping,
                    angular_damping, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi,
                    row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, row_group, all_merits):
    """``joint_substeps`` with the tree (``use_tree`` True), then ``finish_tree_step`` on the step's impulses
    ``total`` (``project``: the Newton projection, ``projection_iterations`` steps until
    ``projection_tolerance``). Returns (sweeps done, the projection's largest error before, after, whether
    a Newton step was undone)."""
    iters = joint_substeps(substeps, h, dt, row_count, True, warm_scale, fraction, max_speed, joint_frequency,
                           joint_damping, block_solve, sweeps, tolerance, relax_iterations, active_set, merits, total,
                           joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref, joint_rel_q,
                           joint_length, joint_soft, joint_has_limits, joint_limit, joint_motor_mode, joint_motor,
                           joint_active, joint_row_start, joint_row_count, joint_impulse, joint_coord, joint_lever,
                           node_count, node_kind, node_ref, node_parent, node_side, D, D_fac, F, H_diag, y, x, z,
                           refine_spread, refine_steps, body_position, body_orientation, body_linear_velocity,
                           body_angular_velocity, body_mass, body_inv_mass, body_inertia_local,
                           body_inv_inertia_local, body_inv_inertia_world, body_force, body_torque, body_fixed,
                           body_count, gravity, gyroscopic, midpoint, linear_damping, angular_damping, row_body,
                           row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu,
                           row_kind, row_lambda, row_owner, row_cfm, row_group, all_merits)
    # the live bodies only, as the caller passed them to finish_tree_step (project_tree sizes its work by them)
    first, last, undone = finish_tree_step(
        project, total, dt, projection_iterations, projection_tolerance, no_loops, node_count, node_kind, node_ref,
        node_parent, node_side, joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref, joint_rel_q,
        joint_length, joint_soft, joint_has_limits, joint_limit, joint_motor_mode, joint_motor, joint_active,
        joint_row_start, joint_row_count, joint_row_total, joint_impulse, joint_coord, joint_lever, joint_force,
        joint_torque, row_J, body_position[:body_count], body_orientation, body_mass, body_inv_mass,
        body_inv_inertia_local, body_inv_inertia_world, body_fixed, body_count)
    return iters, first, last, undone
