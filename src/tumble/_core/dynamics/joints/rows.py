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

import math

import numpy as np
from numba import prange

from tumble._core import types as T
from tumble._core.config import kernel, kernel_parallel
from tumble._core.dynamics.joints.ball import put_point_rows
from tumble._core.dynamics.joints.common import (
    equality_target,
    limit_target,
    motor_target,
    put_angular,
    put_angular_lock,
    put_linear,
    side_frame,
    soft_coefficients,
    solver_body,
)
from tumble._core.dynamics.joints.distance import put_distance_row
from tumble._core.dynamics.joints.fixed import put_weld_rows
from tumble._core.dynamics.joints.hinge import hinge_angle, put_axis_rows, unwrap
from tumble._core.dynamics.joints.slider import put_line_rows

#: joints per parallel work item of ``prepare_joint_rows`` (one ``write_joint_rows`` call per run of
#: active joints in it): a call costs ~0.5 us in references to its array arguments, 32 joints' rows
#: ~6 us (chain50, 2-core VM)
JOINT_CHUNK = 32


@kernel
def update_joint_coordinates(joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref, joint_active,
                             body_position, body_orientation, joint_coord):
    """joint_coord = the hinge angle (unwrapped against its previous value) [rad] or the slider
    translation [m] of the current poses; other types keep 0."""
    for j in range(joint_count):
        if not joint_active[j]:
            continue
        t = joint_type[j]
        if t != T.JOINT_HINGE and t != T.JOINT_SLIDER:
            continue
        (_, _, _, _, pa0, pa1, pa2, _, _, _, na0, na1, na2, ua0, ua1, ua2) = side_frame(
            j, 0, joint_body, joint_anchor, joint_axis, joint_ref, body_position, body_orientation)
        (_, _, _, _, pb0, pb1, pb2, _, _, _, _, _, _, ub0, ub1, ub2) = side_frame(
            j, 1, joint_body, joint_anchor, joint_axis, joint_ref, body_position, body_orientation)
        if t == T.JOINT_HINGE:
            joint_coord[j] = unwrap(joint_coord[j], hinge_angle(na0, na1, na2, ua0, ua1, ua2, ub0, ub1, ub2))
        else:
            s = 0.0         # summed from 0 as before issue 19 (the same bits, signed zeros too)
            s += na0 * (pb0 - pa0)
            s += na1 * (pb1 - pa1)
            s += na2 * (pb2 - pa2)
            joint_coord[j] = s


@kernel
def write_joint_rows(first, last, r0, jp, warm, block_solve, joint_type, joint_body, joint_anchor, joint_axis,
                     joint_ref, joint_rel_q, joint_length, joint_soft, joint_has_limits, joint_limit, joint_motor_mode,
                     joint_motor, joint_impulse, joint_coord, joint_lever, body_position, body_orientation,
                     body_inv_mass, body_inv_inertia_world, body_fixed, row_body, row_J, row_B, row_inv_diag, row_bias,
                     row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm,
                     row_group):
    """The rows of the active joints ``first`` .. ``last - 1``, one after the other from row r0 (the
    registry's layout: an active joint's rows follow the previous one's), at the current poses
    (module docstring for a joint's layout). ``jp`` = (beta [1/s], max speed [m/s], soft frequency
    [Hz], soft damping ratio, h [s] the duration of the solve these rows serve, dt [s] the whole
    step: a limit may be approached by its gap per step, whatever part of the step a solve spans).
    Returns the row after the last joint's.

    A range, not one joint per call: a call references and releases each of its 36 array arguments
    (issue 19: chain50's 50 joints took 33 us a rebuild with a call per joint, 10 us in one loop).
    Per joint two passes (common's docstring): the joint type's geometry writes each row's J, bodies,
    kind and position value; then per row B = M^-1 J^T, 1 / (J B) (contact.rows.fill_row's
    arithmetic) and the target from the value."""
    r = r0
    for j in range(first, last):
        rs = r          # joint j's first row
        (qa0, qa1, qa2, qa3, pa0, pa1, pa2, ra0, ra1, ra2, na0, na1, na2, ua0, ua1, ua2) = side_frame(
            j, 0, joint_body, joint_anchor, joint_axis, joint_ref, body_position, body_orientation)
        (qb0, qb1, qb2, qb3, pb0, pb1, pb2, rb0, rb1, rb2, nb0, nb1, nb2, ub0, ub1, ub2) = side_frame(
            j, 1, joint_body, joint_anchor, joint_axis, joint_ref, body_position, body_orientation)
        joint_lever[j, 0] = rb0
        joint_lever[j, 1] = rb1
        joint_lever[j, 2] = rb2
        ia = solver_body(j, 0, joint_body, body_fixed)
        ib = solver_body(j, 1, joint_body, body_fixed)
        typ = joint_type[j]
        # pass 1: J, bodies, kind and position value of every row
        if typ == T.JOINT_BALL:
            r = put_point_rows(r, ia, ib, pa0, pa1, pa2, pb0, pb1, pb2, ra0, ra1, ra2, rb0, rb1, rb2, row_body, row_J,
                               row_kind, row_bias)
        elif typ == T.JOINT_FIXED:
            r = put_weld_rows(r, ia, ib, j, pa0, pa1, pa2, pb0, pb1, pb2, ra0, ra1, ra2, rb0, rb1, rb2, qa0, qa1, qa2,
                              qa3, qb0, qb1, qb2, qb3, joint_rel_q, row_body, row_J, row_kind, row_bias)
        elif typ == T.JOINT_DISTANCE:
            r = put_distance_row(r, ia, ib, pa0, pa1, pa2, pb0, pb1, pb2, ra0, ra1, ra2, rb0, rb1, rb2, joint_length[j],
                                 row_body, row_J, row_kind, row_bias)
        elif typ == T.JOINT_HINGE:
            r = put_point_rows(r, ia, ib, pa0, pa1, pa2, pb0, pb1, pb2, ra0, ra1, ra2, rb0, rb1, rb2, row_body, row_J,
                               row_kind, row_bias)
            r = put_axis_rows(r, ia, ib, na0, na1, na2, ua0, ua1, ua2, nb0, nb1, nb2, row_body, row_J, row_kind,
                              row_bias)
            theta = joint_coord[j]
            if joint_has_limits[j]:     # the angular row about n_a, one side each
                put_angular(r, ia, ib, na0, na1, na2, T.ROW_LIMIT, theta - joint_limit[j, 0], row_body, row_J, row_kind,
                            row_bias)
                put_angular(r + 1, ia, ib, -na0, -na1, -na2, T.ROW_LIMIT, joint_limit[j, 1] - theta, row_body, row_J,
                            row_kind, row_bias)
                r += 2
            if joint_motor_mode[j] != T.MOTOR_NONE:
                put_angular(r, ia, ib, na0, na1, na2, T.ROW_MOTOR, theta, row_body, row_J, row_kind, row_bias)
                r += 1
        elif typ == T.JOINT_SLIDER:
            de0 = pb0 - pa0           # delta
            de1 = pb1 - pa1
            de2 = pb2 - pa2
            rl0 = ra0 + de0           # a's lever to b's anchor
            rl1 = ra1 + de1
            rl2 = ra2 + de2
            r = put_line_rows(r, ia, ib, na0, na1, na2, ua0, ua1, ua2, de0, de1, de2, rl0, rl1, rl2, rb0, rb1, rb2,
                              row_body, row_J, row_kind, row_bias)
            r = put_angular_lock(r, ia, ib, qa0, qa1, qa2, qa3, qb0, qb1, qb2, qb3, joint_rel_q[j, 0],
                                 joint_rel_q[j, 1], joint_rel_q[j, 2], joint_rel_q[j, 3], row_body, row_J, row_kind,
                                 row_bias)
            s = joint_coord[j]
            if joint_has_limits[j]:     # the linear row along n_a, one side each
                put_linear(r, ia, ib, na0, na1, na2, rl0, rl1, rl2, rb0, rb1, rb2, T.ROW_LIMIT, s - joint_limit[j, 0],
                           row_body, row_J, row_kind, row_bias)
                put_linear(r + 1, ia, ib, -na0, -na1, -na2, rl0, rl1, rl2, rb0, rb1, rb2, T.ROW_LIMIT,
                           joint_limit[j, 1] - s, row_body, row_J, row_kind, row_bias)
                r += 2
            if joint_motor_mode[j] != T.MOTOR_NONE:
                put_linear(r, ia, ib, na0, na1, na2, rl0, rl1, rl2, rb0, rb1, rb2, T.ROW_MOTOR, s, row_body, row_J,
                           row_kind, row_bias)
                r += 1
        # pass 2: B = M^-1 J^T, 1 / (J B) and the targets (the equality rows come first in every layout;
        # limits and motors are bounded, so scalar)
        h = jp[4]
        soft = typ == T.JOINT_DISTANCE and joint_soft[j, 0] > 0.0
        for rr in range(rs, r):
            diag = 0.0
            for side in range(2):
                body = ia if side == 0 else ib
                if body < 0:
                    for k in range(6):
                        row_B[rr, side, k] = 0.0
                    continue
                # J and B of this side as scalars (issue 19: each store to row_B made the next loads of
                # row_J go to memory, LLVM cannot tell the arrays apart); the same products and sums in
                # the same order as the loops before (bit for bit)
                im = body_inv_mass[body]
                j0 = row_J[rr, side, 0]
                j1 = row_J[rr, side, 1]
                j2 = row_J[rr, side, 2]
                j3 = row_J[rr, side, 3]
                j4 = row_J[rr, side, 4]
                j5 = row_J[rr, side, 5]
                b0 = im * j0
                b1 = im * j1
                b2 = im * j2
                b3 = (body_inv_inertia_world[body, 0, 0] * j3 + body_inv_inertia_world[body, 0, 1] * j4
                      + body_inv_inertia_world[body, 0, 2] * j5)
                b4 = (body_inv_inertia_world[body, 1, 0] * j3 + body_inv_inertia_world[body, 1, 1] * j4
                      + body_inv_inertia_world[body, 1, 2] * j5)
                b5 = (body_inv_inertia_world[body, 2, 0] * j3 + body_inv_inertia_world[body, 2, 1] * j4
                      + body_inv_inertia_world[body, 2, 2] * j5)
                row_B[rr, side, 0] = b0
                row_B[rr, side, 1] = b1
                row_B[rr, side, 2] = b2
                row_B[rr, side, 3] = b3
                row_B[rr, side, 4] = b4
                row_B[rr, side, 5] = b5
                diag += j0 * b0
                diag += j1 * b1
                diag += j2 * b2
                diag += j3 * b3
                diag += j4 * b4
                diag += j5 * b5
            inv_diag = 1.0 / diag if diag > 1e-300 else 0.0
            row_inv_diag[rr] = inv_diag
            kind = row_kind[rr]
            value = row_bias[rr]
            if kind == T.ROW_JOINT:
                target, gamma = equality_target(value, jp[0], jp[1], jp[2], jp[3], h, inv_diag)
                relax = 0.0
                if soft:        # a distance spring: its own frequency and damping (distance.py)
                    rate, gamma = soft_coefficients(joint_soft[j, 0], joint_soft[j, 1], h, inv_diag)
                    target = -rate * value
                    relax = target
                row_lo[rr] = -math.inf
                row_hi[rr] = math.inf
            elif kind == T.ROW_LIMIT:
                target, relax = limit_target(value, jp[5], jp[0], jp[1])
                gamma = 0.0
                row_lo[rr] = 0.0
                row_hi[rr] = math.inf
            else:
                target, gamma = motor_target(value, h, joint_motor_mode[j], joint_motor[j, 0], joint_motor[j, 1],
                                             joint_motor[j, 3], joint_motor[j, 4], inv_diag)
                relax = target
                bound = joint_motor[j, 2] * h
                row_lo[rr] = -bound
                row_hi[rr] = bound
            row_bias[rr] = target
            row_bias_relax[rr] = relax
            row_link[rr] = -1
            row_mu[rr] = 0.0
            row_owner[rr] = j
            row_cfm[rr] = gamma
            row_lambda[rr] = joint_impulse[j, rr - rs] if warm else 0.0
        n_eq = T.JOINT_BASE_ROWS[typ]
        for k in range(r - rs):
            row_group[rs + k] = 1
        if block_solve and n_eq > 1:
            row_group[rs] = n_eq
            for k in range(1, n_eq):
                row_group[rs + k] = 0
    return r


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
    # runs of consecutive active joints, one write_joint_rows call each (all of them, usually), in
    # chunks of JOINT_CHUNK joints for the threads
    for c in prange((joint_count + JOINT_CHUNK - 1) // JOINT_CHUNK):
        j = c * JOINT_CHUNK
        end = min(j + JOINT_CHUNK, joint_count)
        while j < end:
            if not joint_active[j]:
                j += 1
                continue
            k = j + 1
            while k < end and joint_active[k]:
                k += 1
            write_joint_rows(j, k, row_offset + joint_row_start[j], jp, warm, block_solve, joint_type, joint_body,
                             joint_anchor, joint_axis, joint_ref, joint_rel_q, joint_length, joint_soft,
                             joint_has_limits, joint_limit, joint_motor_mode, joint_motor, joint_impulse, joint_coord,
                             joint_lever, body_position, body_orientation, body_inv_mass, body_inv_inertia_world,
                             body_fixed, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi,
                             row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, row_group)
            j = k


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
