"""The joint stage of the step: every active joint's rows, written after the contact rows, plus the
joint coordinates, the warm-start impulses and the reactions (Catto 001 §3).

Row layout of joint j: rows ``row_offset + joint_row_start[j]`` onwards, in this order (the impulse
slot of a row is its index within the joint, so warm starting is by slot):

    ball      point x, y, z
    hinge     point x, y, z | axis t1, t2 | [lower, upper limit] | [motor]
    slider    line t1, t2 | rotation x, y, z | [lower, upper limit] | [motor]
    distance  distance
    fixed     point x, y, z | rotation x, y, z
"""

from __future__ import annotations

import numpy as np
from numba import prange

from tumble._core import types as T
from tumble._core.config import kernel, kernel_parallel
from tumble._core.dynamics.joints.ball import point_rows
from tumble._core.dynamics.joints.common import (
    angular_lock_rows,
    fill_angular_row,
    linear_row,
    set_limit,
    set_motor,
    side_frame,
    solver_body,
)
from tumble._core.dynamics.joints.distance import distance_row
from tumble._core.dynamics.joints.fixed import weld_rows
from tumble._core.dynamics.joints.hinge import axis_rows, hinge_angle, unwrap
from tumble._core.dynamics.joints.slider import line_rows


@kernel
def update_joint_coordinates(joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref, joint_active,
                             body_position, body_orientation, joint_coord):
    """joint_coord = the hinge angle (unwrapped against its previous value) [rad] or the slider
    translation [m] of the current poses; other types keep 0."""
    q = np.empty(4)
    p = np.empty((2, 3))
    lever = np.empty(3)
    ax = np.empty((2, 3))
    ref = np.empty((2, 3))
    for j in range(joint_count):
        if not joint_active[j]:
            continue
        t = joint_type[j]
        if t != T.JOINT_HINGE and t != T.JOINT_SLIDER:
            continue
        for side in range(2):
            side_frame(j, side, joint_body, joint_anchor, joint_axis, joint_ref, body_position, body_orientation, q,
                       p[side], lever, ax[side], ref[side])
        if t == T.JOINT_HINGE:
            joint_coord[j] = unwrap(joint_coord[j], hinge_angle(ax[0], ref[0], ref[1]))
        else:
            s = 0.0
            for k in range(3):
                s += ax[0, k] * (p[1, k] - p[0, k])
            joint_coord[j] = s


@kernel
def write_joint_rows(j, r0, jp, warm, block_solve, scratch, joint_type, joint_body, joint_anchor, joint_axis,
                     joint_ref, joint_rel_q, joint_length, joint_soft, joint_has_limits, joint_limit, joint_motor_mode,
                     joint_motor,
                     joint_impulse, joint_coord, joint_lever, body_position, body_orientation, body_inv_mass,
                     body_inv_inertia_world, body_fixed, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax,
                     row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, row_group):
    """The rows of joint j from row r0 on (module docstring for the layout), at the current poses.
    ``jp`` = (beta [1/s], max speed [m/s], soft frequency [Hz], soft damping ratio, h [s] the duration
    of the solve these rows serve, dt [s] the whole step: a limit may be approached by its gap per
    step, whatever part of the step a solve spans). ``scratch`` (14, 4): work space, so a caller
    visiting many joints allocates once."""
    dt = jp[4]
    qa = scratch[0]
    qb = scratch[1]
    pa = scratch[2, :3]
    pb = scratch[3, :3]
    ra = scratch[4, :3]
    rb = scratch[5, :3]
    na = scratch[6, :3]
    nb = scratch[7, :3]
    ua = scratch[8, :3]
    ub = scratch[9, :3]
    d = scratch[10, :3]
    t1 = scratch[11, :3]
    t2 = scratch[12, :3]
    e = scratch[13, :3]
    side_frame(j, 0, joint_body, joint_anchor, joint_axis, joint_ref, body_position, body_orientation, qa, pa, ra,
               na, ua)
    side_frame(j, 1, joint_body, joint_anchor, joint_axis, joint_ref, body_position, body_orientation, qb, pb, rb,
               nb, ub)
    for k in range(3):
        joint_lever[j, k] = rb[k]
    ia = solver_body(j, 0, joint_body, body_fixed)
    ib = solver_body(j, 1, joint_body, body_fixed)
    r = r0
    typ = joint_type[j]
    if typ == T.JOINT_BALL:
        r = point_rows(r, j, 0, ia, ib, pa, pb, ra, rb, jp, warm, body_inv_mass,
                       body_inv_inertia_world, joint_impulse, row_body, row_J, row_B, row_inv_diag, row_bias,
                       row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, d)
    elif typ == T.JOINT_FIXED:
        r = weld_rows(r, j, 0, ia, ib, pa, pb, ra, rb, qa, qb, joint_rel_q[j], jp, warm,
                      body_inv_mass, body_inv_inertia_world, joint_impulse, row_body, row_J, row_B, row_inv_diag,
                      row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner,
                      row_cfm, d, e)
    elif typ == T.JOINT_DISTANCE:
        r = distance_row(r, j, 0, ia, ib, pa, pb, ra, rb, joint_length[j], joint_soft[j, 0], joint_soft[j, 1], dt,
                         jp, warm, body_inv_mass, body_inv_inertia_world, joint_impulse, row_body,
                         row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu,
                         row_kind, row_lambda, row_owner, row_cfm, d)
    elif typ == T.JOINT_HINGE:
        r = point_rows(r, j, 0, ia, ib, pa, pb, ra, rb, jp, warm, body_inv_mass,
                       body_inv_inertia_world, joint_impulse, row_body, row_J, row_B, row_inv_diag, row_bias,
                       row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, d)
        r = axis_rows(r, j, 3, ia, ib, na, ua, nb, jp, warm, body_inv_inertia_world, joint_impulse,
                      row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link,
                      row_mu, row_kind, row_lambda, row_owner, row_cfm, t1, t2, e)
        theta = joint_coord[j]
        if joint_has_limits[j]:
            fill_angular_row(r, ia, ib, na, body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag)
            set_limit(r, j, r - r0, theta - joint_limit[j, 0], jp[5], jp, warm, joint_impulse, row_bias,
                      row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm)
            for k in range(3):
                d[k] = -na[k]
            fill_angular_row(r + 1, ia, ib, d, body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag)
            set_limit(r + 1, j, r + 1 - r0, joint_limit[j, 1] - theta, jp[5], jp, warm, joint_impulse,
                      row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner,
                      row_cfm)
            r += 2
        if joint_motor_mode[j] != T.MOTOR_NONE:
            fill_angular_row(r, ia, ib, na, body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag)
            set_motor(r, j, r - r0, theta, dt, joint_motor_mode, joint_motor, warm, joint_impulse, row_inv_diag,
                      row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner,
                      row_cfm)
            r += 1
    elif typ == T.JOINT_SLIDER:
        for k in range(3):
            e[k] = pb[k] - pa[k]          # delta
            ub[k] = ra[k] + e[k]          # a's lever to b's anchor (b's reference is not used here)
        r = line_rows(r, j, 0, ia, ib, na, ua, e, ub, rb, jp, warm, body_inv_mass,
                      body_inv_inertia_world, joint_impulse, row_body, row_J, row_B, row_inv_diag, row_bias,
                      row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm,
                      t1, t2)
        r = angular_lock_rows(r, j, 2, ia, ib, qa, qb, joint_rel_q[j], jp, warm,
                              body_inv_inertia_world, joint_impulse, row_body, row_J, row_B, row_inv_diag, row_bias,
                              row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner,
                              row_cfm, t1, d)
        s = joint_coord[j]
        if joint_has_limits[j]:
            linear_row(r, ia, ib, na, ub, rb, body_inv_mass, body_inv_inertia_world, row_body, row_J, row_B,
                       row_inv_diag)
            set_limit(r, j, r - r0, s - joint_limit[j, 0], jp[5], jp, warm, joint_impulse, row_bias,
                      row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm)
            for k in range(3):
                d[k] = -na[k]
            linear_row(r + 1, ia, ib, d, ub, rb, body_inv_mass, body_inv_inertia_world, row_body, row_J, row_B,
                       row_inv_diag)
            set_limit(r + 1, j, r + 1 - r0, joint_limit[j, 1] - s, jp[5], jp, warm, joint_impulse,
                      row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner,
                      row_cfm)
            r += 2
        if joint_motor_mode[j] != T.MOTOR_NONE:
            linear_row(r, ia, ib, na, ub, rb, body_inv_mass, body_inv_inertia_world, row_body, row_J, row_B,
                       row_inv_diag)
            set_motor(r, j, r - r0, s, dt, joint_motor_mode, joint_motor, warm, joint_impulse, row_inv_diag,
                      row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner,
                      row_cfm)
            r += 1
    # the equality rows come first in every layout; limits and motors are bounded, so scalar
    n_eq = T.JOINT_BASE_ROWS[typ]
    for k in range(r - r0):
        row_group[r0 + k] = 1
    if block_solve and n_eq > 1:
        row_group[r0] = n_eq
        for k in range(1, n_eq):
            row_group[r0 + k] = 0


@kernel_parallel
def prepare_joint_rows(joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref, joint_rel_q,
                       joint_length, joint_soft, joint_has_limits, joint_limit, joint_motor_mode, joint_motor,
                       joint_active, joint_row_start, joint_impulse, joint_coord, joint_lever,
                       body_position, body_orientation, body_inv_mass, body_inv_inertia_world, body_fixed,
                       dt, baumgarte, max_speed, soft_frequency, soft_damping, warm, block_solve, row_offset, step_dt,
                       row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link,
                       row_mu, row_kind, row_lambda, row_owner, row_cfm, row_group):
    """Write the rows of every active joint (``write_joint_rows``), joint j from row
    ``row_offset + joint_row_start[j]``. ``baumgarte`` is the fraction of a joint's position error
    removed per solve (001 eq. 20, beta = baumgarte / dt; 0 when the projection corrects it
    instead); ``dt`` is the duration of the solve, ``step_dt`` the whole step's;
    ``soft_frequency`` > 0 makes every equality row a spring of that frequency [Hz] and damping
    ratio. ``joint_coord`` must be current (``update_joint_coordinates``). Stores b's lever (anchor
    minus centre of mass) in ``joint_lever`` for the reactions. With ``block_solve`` a joint's
    equality rows form one group (``row_group``, solved together by rows.solve_group);
    otherwise every row is swept on its own (Catto's scalar PGS)."""
    jp = np.array([baumgarte / dt, max_speed, soft_frequency, soft_damping, dt, step_dt])
    for j in prange(joint_count):
        if not joint_active[j]:
            continue
        scratch = np.empty((14, 4))
        write_joint_rows(j, row_offset + joint_row_start[j], jp, warm, block_solve, scratch, joint_type, joint_body,
                         joint_anchor, joint_axis, joint_ref, joint_rel_q, joint_length, joint_soft, joint_has_limits,
                         joint_limit, joint_motor_mode, joint_motor, joint_impulse, joint_coord, joint_lever,
                         body_position, body_orientation, body_inv_mass, body_inv_inertia_world, body_fixed, row_body,
                         row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu,
                         row_kind, row_lambda, row_owner, row_cfm, row_group)


@kernel
def store_joint_impulses(joint_count, joint_active, joint_row_start, joint_row_count, row_offset, lam, scale, out):
    """out[j, k] = scale * lam of row k of joint j (warm start of the next step)."""
    for j in range(joint_count):
        if not joint_active[j]:
            continue
        r0 = row_offset + joint_row_start[j]
        for k in range(joint_row_count[j]):
            out[j, k] = scale * lam[r0 + k]


@kernel
def load_joint_impulses(joint_count, joint_active, joint_row_start, joint_row_count, row_offset, stored, scale, lam):
    """lam of row k of joint j = scale * stored[j, k] (the inverse of ``store_joint_impulses``)."""
    for j in range(joint_count):
        if not joint_active[j]:
            continue
        r0 = row_offset + joint_row_start[j]
        for k in range(joint_row_count[j]):
            lam[r0 + k] = scale * stored[j, k]


@kernel
def joint_reactions(joint_count, joint_active, joint_row_start, joint_row_count, row_offset, row_J, lam, dt,
                    joint_lever, joint_force, joint_torque):
    """Reaction on body b, averaged over the step (001 eq. 7: F_c = J^T lambda, impulses / dt):
    force f = sum_k lam_k J_k,b,lin / dt and torque about b's anchor sum_k lam_k J_k,b,ang / dt - r_b x f
    (r_b the lever the rows were built with), so a ball joint reports no torque."""
    for j in range(joint_count):
        if not joint_active[j]:
            continue
        f0 = 0.0
        f1 = 0.0
        f2 = 0.0
        m0 = 0.0
        m1 = 0.0
        m2 = 0.0
        r0 = row_offset + joint_row_start[j]
        for k in range(joint_row_count[j]):
            r = r0 + k
            lk = lam[r] / dt
            f0 += lk * row_J[r, 1, 0]
            f1 += lk * row_J[r, 1, 1]
            f2 += lk * row_J[r, 1, 2]
            m0 += lk * row_J[r, 1, 3]
            m1 += lk * row_J[r, 1, 4]
            m2 += lk * row_J[r, 1, 5]
        rx = joint_lever[j, 0]
        ry = joint_lever[j, 1]
        rz = joint_lever[j, 2]
        joint_force[j, 0] = f0
        joint_force[j, 1] = f1
        joint_force[j, 2] = f2
        joint_torque[j, 0] = m0 - (ry * f2 - rz * f1)
        joint_torque[j, 1] = m1 - (rz * f0 - rx * f2)
        joint_torque[j, 2] = m2 - (rx * f1 - ry * f0)
