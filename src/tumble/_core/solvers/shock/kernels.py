"""Velocity-based shock propagation (Erleben 000 §4, Figs. 12 and 14): the kernels.

One VSP step (Fig. 14), with the collision stage (``_core.stages.collide``) doing the detection:

    detect(t)
    dynamics(a dt)                                   eq. 45a-e on every row (the full system)
    shock_propagation(dynamics((1 - a) dt), correction())
    detect(t + dt)
    correction()                                     eq. 46 on the new contacts

``dynamics(h)`` is one velocity-level PGS solve (000 eq. 28-30) followed by the position update
s += h S u (eq. 45e). ``correction()`` is the projection of eq. 46: the friction rows are dropped and
the LCP  A lambda_c - d >= 0, lambda_c >= 0  (d the penetration depths) is solved by the same
Gauss-Seidel iteration; positions then move by S M^-1 J^T lambda_c and velocities are untouched.

Positions are not written during the step. Each body's displacement since ``detect(t)``,
``disp = (dx, dtheta)`` (linear [m], rotation vector [rad]), is accumulated instead and applied once
at the end (``apply_step_displacement``). This is what makes the correction of a layer consistent with the
moves already made: with the Jacobian J of detect(t), the depth after a displacement is
depth - J disp to first order, so "remove the penetration" is the LCP  J (disp + M^-1 J^T lambda_c)
>= depth - slop, which is exactly a PGS solve with the displacement in place of the velocity.

Shock propagation (Fig. 12) walks the stack layers bottom-up (contact.layers). In layer i the bodies
of height i are fixated -- infinite mass: their velocity and displacement are read but never written
-- and the layer is solved by PGS with its own diagonal (``layer_inv_diag``: the fixated side removed).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from tumble._core import types as T
from tumble._core.config import kernel, kernel_parallel
from tumble._core.contact.rows import fill_row
from tumble._core.dynamics.integrate import (
    MIDPOINT_MAX_ANGLE,
    rotate_body,
    rotate_free_body,
    turn_with_body,
)
from tumble._core.dynamics.joints.tree import tree_sweep
from tumble._core.math3d import quat_to_matrix
from tumble._core.merit import ncp_merit
from tumble._core.rows import (
    apply_movable,
    clamped_value,
    movable,
    pgs_sweep,
    row_velocity,
    solve_group,
    sweep_rows,
    warm_start,
)

#: ``row_kind`` of an ahead copy's normal row (``write_ahead_copies``): a velocity row like a contact's
#: normal, which ``correction_sweep`` skips (it is no position constraint).
ROW_AHEAD_COPY = 100

#: The correction's metric after a turn past ``ShockSettings.correction_max_turn``: diag(m, I / this)
#: (``turn_limited_correction``): turns cost 100 times as much as shifts, so a corner's push lifts the brick
#: instead of turning it. The joint projection's weight (``joint_projection_angular_weight``, measured there for
#: the same linearisation); other values not measured here
CORRECTION_TURN_WEIGHT = 0.01

#: A layer's blocks are solved in parallel only when it has at least this many (a parallel region
#: costs a thread wake-up and a barrier, more than a few small blocks take serially).
PARALLEL_MIN_BLOCKS = 8

#: ... and only when one sweep of the layer does at least this many row updates (its rows times
#: ``block_iterations`` for a dynamics sweep, its rows for a correction sweep) [issue 19]. Why: every
#: sweep of a parallel layer is a parallel region, and with the threads waiting passively
#: (``config``: OMP_WAIT_POLICY=PASSIVE) a region wakes a sleeping thread and joins it, tens of us on the
#: 2-core VM and far more when another process holds the second core. tower_roof's 40 courses (480
#: rows, 20 bricks each, no two touching: every layer independent) made ~120 regions per step of
#: ~80 us of work each: steps 50-150, 2 threads, CPU ms per step 14.2-18.0 with the regions against
#: 11.4-11.5 with every layer serial (alternating processes; the shock stage 8.3-22.8 against 5.6 ms
#: wall), the results bit for bit the same. large_pyramid (100 courses of 1200-2376 rows, the same
#: loaded VM, steps 2-22, three rounds): 94.6-95.9 ms median CPU per step with the regions against
#: 89.1-97.6 serial, wall alike: no gain measured there either, so the bound keeps its layers
#: (14 k-28 k updates a sweep) parallel only where a quiet machine may still gain and tower_roof's
#: (5.8 k) serial; a correction sweep (one update per row) stays serial in both.
PARALLEL_MIN_LAYER_UPDATES = 16384


@kernel
def block_sweep(order, start, stop, row_block, block_iterations, block_tolerance, layer, body_height, row_body, row_J,
                row_B, inv_diag, row_bias, row_lo, row_hi, row_link, row_mu, row_cfm, row_group, lam, v_lin, v_ang,
                cfm, fixed_part, other_kind, paired=False):
    """One sweep over ``order[start:stop]`` that visits the rows block by block (``row_block``: the
    body they move) and repeats each block's rows up to ``block_iterations`` times, until a pass
    changes no row velocity by more than ``block_tolerance`` [m/s].

    In a stack layer every block is one body on fixated supports, so the repeats solve that body's
    small problem to high accuracy while its data is in cache; the outer sweeps then only settle the
    coupling between siblings. With ``block_iterations = 1`` this is ``sweep_rows``. Returns the
    largest velocity change of the blocks' first passes [m/s].

    A block of scalar rows (no joint block among them) is solved by ``solve_body_block``, the same
    arithmetic with the body's velocity held in local variables; ``fixed_part`` (rows of ``order``, 2)
    and ``other_kind`` (rows of ``order``) are its scratch, indexed like ``order``.

    ``paired``: no row has two movable sides (the blocks share no movable body), so two consecutive
    scalar blocks are solved together, row by row in turn (``solve_block_pair``), each with exactly
    its own arithmetic and stopping test."""
    max_dv = 0.0
    k = start
    while k < stop:
        blk = row_block[order[k]]
        e = k + 1
        while e < stop and row_block[order[e]] == blk:
            e += 1
        if paired and e < stop and scalar_block(order, k, e, row_group):
            blk2 = row_block[order[e]]
            e2 = e + 1
            while e2 < stop and row_block[order[e2]] == blk2:
                e2 += 1
            if scalar_block(order, e, e2, row_group):
                dv = solve_block_pair(order, k, e, blk, e2, blk2, layer, block_iterations, block_tolerance,
                                      body_height, row_body, row_J, row_B, inv_diag, row_bias, row_lo, row_hi,
                                      row_link, row_mu, row_cfm, lam, v_lin, v_ang, cfm, fixed_part, other_kind)
                if dv > max_dv:
                    max_dv = dv
                k = e2
                continue
        if scalar_block(order, k, e, row_group):
            dv = solve_body_block(order, k, e, blk, layer, block_iterations, block_tolerance, body_height, row_body,
                                  row_J, row_B, inv_diag, row_bias, row_lo, row_hi, row_link, row_mu, row_cfm, lam,
                                  v_lin, v_ang, cfm, fixed_part, other_kind)
            if dv > max_dv:
                max_dv = dv
            k = e
            continue
        for it in range(block_iterations):
            dv = sweep_rows(order, k, e, layer, body_height, row_body, row_J, row_B, inv_diag, row_bias, row_lo,
                            row_hi, row_link, row_mu, row_cfm, row_group, lam, v_lin, v_ang, cfm)
            if it == 0 and dv > max_dv:
                max_dv = dv
            if dv <= block_tolerance:
                break
        k = e
    return max_dv


@kernel
def scalar_block(order, start, stop, row_group):
    """Whether every row of ``order[start:stop]`` is a scalar row (group 1: no joint block)."""
    for k in range(start, stop):
        if row_group[order[k]] != 1:
            return False
    return True


@kernel
def solve_body_block(order, start, stop, blk, layer, block_iterations, block_tolerance, body_height, row_body,
                     row_J, row_B, inv_diag, row_bias, row_lo, row_hi, row_link, row_mu, row_cfm, lam, v_lin, v_ang,
                     cfm, fixed_part, other_kind):
    """``block_iterations`` passes of ``sweep_rows`` over the scalar rows ``order[start:stop]`` of body
    ``blk`` (every row has ``blk`` on one side), bit for bit: the same operations in the same order,
    with two changes that save work without touching a result. The body's velocity lives in six local
    variables during the passes (written back at the end: no other row reads it meanwhile), and where
    the other side is fixed or fixated -- constant while the layer is solved, a fixated body takes no
    impulse -- its part of J v is computed once per visit into ``fixed_part[k]``: (its linear term,
    its angular term) when ``blk`` is side 0, whose terms come first in ``row_velocity``'s sum;
    (0 + linear) + angular, the sum's head, when ``blk`` is side 1. A sibling (the other side movable
    in this layer) is read and written in ``v_lin``/``v_ang`` as ``sweep_rows`` does.
    ``other_kind[k]``: 0 no other body, 1 fixated, 2 sibling (scratch indexed like ``order``, so blocks
    solved in parallel write disjoint parts). The repeats of a body's rows are most of the layer
    stage (tower_roof: 20 passes of ~24 rows per brick; pile1000 ~1 M row updates per step), so
    the per-row cost is what counts. Returns the largest velocity change of the first pass [m/s]
    (``block_sweep``'s stopping test)."""
    for k in range(start, stop):
        r = order[k]
        side = 1 if row_body[r, 0] == blk else 0        # the other side
        o = row_body[r, side]
        if o < 0:
            other_kind[k] = 0
            continue
        if movable(o, layer, body_height):
            other_kind[k] = 2
            continue
        other_kind[k] = 1
        lin = row_J[r, side, 0] * v_lin[o, 0] + row_J[r, side, 1] * v_lin[o, 1] + row_J[r, side, 2] * v_lin[o, 2]
        ang = row_J[r, side, 3] * v_ang[o, 0] + row_J[r, side, 4] * v_ang[o, 1] + row_J[r, side, 5] * v_ang[o, 2]
        if side == 1:
            fixed_part[k, 0] = lin
            fixed_part[k, 1] = ang
        else:
            s = 0.0
            s += lin
            s += ang
            fixed_part[k, 0] = s
    u0 = v_lin[blk, 0]
    u1 = v_lin[blk, 1]
    u2 = v_lin[blk, 2]
    w0 = v_ang[blk, 0]
    w1 = v_ang[blk, 1]
    w2 = v_ang[blk, 2]
    first_dv = 0.0
    for it in range(block_iterations):
        max_dv = 0.0
        for k in range(start, stop):
            r = order[k]
            inv_d = inv_diag[r]
            if inv_d == 0.0:
                continue
            side = 0 if row_body[r, 0] == blk else 1
            os = 1 - side
            ok = other_kind[k]
            lin = row_J[r, side, 0] * u0 + row_J[r, side, 1] * u1 + row_J[r, side, 2] * u2
            ang = row_J[r, side, 3] * w0 + row_J[r, side, 4] * w1 + row_J[r, side, 5] * w2
            # row_velocity's sum: side 0's linear and angular terms, then side 1's; a fixed side adds none
            if ok == 2:
                o = row_body[r, os]
                olin = row_J[r, os, 0] * v_lin[o, 0] + row_J[r, os, 1] * v_lin[o, 1] + row_J[r, os, 2] * v_lin[o, 2]
                oang = row_J[r, os, 3] * v_ang[o, 0] + row_J[r, os, 4] * v_ang[o, 1] + row_J[r, os, 5] * v_ang[o, 2]
                jv = 0.0
                if side == 0:
                    jv += lin
                    jv += ang
                    jv += olin
                    jv += oang
                else:
                    jv += olin
                    jv += oang
                    jv += lin
                    jv += ang
            elif ok == 0:
                jv = 0.0
                jv += lin
                jv += ang
            elif side == 0:
                jv = 0.0
                jv += lin
                jv += ang
                jv += fixed_part[k, 0]
                jv += fixed_part[k, 1]
            else:
                jv = fixed_part[k, 0]
                jv += lin
                jv += ang
            old = lam[r]
            lo = row_lo[r]
            hi = row_hi[r]
            link = row_link[r]
            if link >= 0:
                hi = row_mu[r] * lam[link]
                lo = -hi
            new = clamped_value(old, jv, inv_d, cfm + row_cfm[r], 1.0, row_bias[r], lo, hi)
            delta = new - old
            if delta != 0.0:
                lam[r] = new
                dv = abs(delta) / inv_d
                if dv > max_dv:
                    max_dv = dv
                u0 += delta * row_B[r, side, 0]
                u1 += delta * row_B[r, side, 1]
                u2 += delta * row_B[r, side, 2]
                w0 += delta * row_B[r, side, 3]
                w1 += delta * row_B[r, side, 4]
                w2 += delta * row_B[r, side, 5]
                if ok == 2:
                    o = row_body[r, os]
                    for c in range(3):
                        v_lin[o, c] += delta * row_B[r, os, c]
                        v_ang[o, c] += delta * row_B[r, os, 3 + c]
        if it == 0:
            first_dv = max_dv
        if max_dv <= block_tolerance:
            break
    v_lin[blk, 0] = u0
    v_lin[blk, 1] = u1
    v_lin[blk, 2] = u2
    v_ang[blk, 0] = w0
    v_ang[blk, 1] = w1
    v_ang[blk, 2] = w2
    return first_dv


@kernel
def fixed_parts(order, start, stop, blk, layer, body_height, row_body, row_J, v_lin, v_ang, fixed_part, other_kind):
    """``solve_body_block``'s first loop: per row of body ``blk`` among ``order[start:stop]``, the
    other side's kind (``other_kind``: 0 none, 1 fixated, 2 sibling) and a fixated side's part of J v
    (``fixed_part``), as that docstring describes."""
    for k in range(start, stop):
        r = order[k]
        side = 1 if row_body[r, 0] == blk else 0        # the other side
        o = row_body[r, side]
        if o < 0:
            other_kind[k] = 0
            continue
        if movable(o, layer, body_height):
            other_kind[k] = 2
            continue
        other_kind[k] = 1
        lin = row_J[r, side, 0] * v_lin[o, 0] + row_J[r, side, 1] * v_lin[o, 1] + row_J[r, side, 2] * v_lin[o, 2]
        ang = row_J[r, side, 3] * v_ang[o, 0] + row_J[r, side, 4] * v_ang[o, 1] + row_J[r, side, 5] * v_ang[o, 2]
        if side == 1:
            fixed_part[k, 0] = lin
            fixed_part[k, 1] = ang
        else:
            s = 0.0
            s += lin
            s += ang
            fixed_part[k, 0] = s


@kernel
def solve_block_pair(order, a0, a1, blk_a, b1, blk_b, layer, block_iterations, block_tolerance, body_height,
                     row_body, row_J, row_B, inv_diag, row_bias, row_lo, row_hi, row_link, row_mu, row_cfm, lam,
                     v_lin, v_ang, cfm, fixed_part, other_kind):
    """``solve_body_block`` on two blocks at once: body ``blk_a``'s scalar rows ``order[a0:a1]`` and body
    ``blk_b``'s ``order[a1:b1]``, in a layer where no row has two movable sides [tumble, issue 19]. Each
    pass visits row j of the first block, then row j of the second, j = 0, 1, ...; each block keeps its
    own velocity (six local variables), its own pass count and its own stopping test, so each computes
    bit for bit what ``solve_body_block`` computes for it (the blocks share no movable body: neither
    reads what the other writes; a friction row's normal is a row of its own block).

    Why: a row update waits for the previous one's velocity change (~40 dependent floating-point
    operations: J v, the clamp, V += B delta), so one block leaves the core idle most of the time; the
    other block's chain fills it. Returns the larger first-pass velocity change of the two [m/s]."""
    fixed_parts(order, a0, a1, blk_a, layer, body_height, row_body, row_J, v_lin, v_ang, fixed_part, other_kind)
    fixed_parts(order, a1, b1, blk_b, layer, body_height, row_body, row_J, v_lin, v_ang, fixed_part, other_kind)
    na = a1 - a0
    nb = b1 - a1
    m = na if na > nb else nb
    u0 = v_lin[blk_a, 0]
    u1 = v_lin[blk_a, 1]
    u2 = v_lin[blk_a, 2]
    w0 = v_ang[blk_a, 0]
    w1 = v_ang[blk_a, 1]
    w2 = v_ang[blk_a, 2]
    p0 = v_lin[blk_b, 0]
    p1 = v_lin[blk_b, 1]
    p2 = v_lin[blk_b, 2]
    q0 = v_ang[blk_b, 0]
    q1 = v_ang[blk_b, 1]
    q2 = v_ang[blk_b, 2]
    active_a = True
    active_b = True
    first_a = 0.0
    first_b = 0.0
    for it in range(block_iterations):
        max_a = 0.0
        max_b = 0.0
        for j in range(m):
            if active_a and j < na:
                k = a0 + j
                r = order[k]
                inv_d = inv_diag[r]
                if inv_d != 0.0:
                    side = 0 if row_body[r, 0] == blk_a else 1
                    lin = row_J[r, side, 0] * u0 + row_J[r, side, 1] * u1 + row_J[r, side, 2] * u2
                    ang = row_J[r, side, 3] * w0 + row_J[r, side, 4] * w1 + row_J[r, side, 5] * w2
                    if other_kind[k] == 0:
                        jv = 0.0
                        jv += lin
                        jv += ang
                    elif side == 0:
                        jv = 0.0
                        jv += lin
                        jv += ang
                        jv += fixed_part[k, 0]
                        jv += fixed_part[k, 1]
                    else:
                        jv = fixed_part[k, 0]
                        jv += lin
                        jv += ang
                    old = lam[r]
                    lo = row_lo[r]
                    hi = row_hi[r]
                    link = row_link[r]
                    if link >= 0:
                        hi = row_mu[r] * lam[link]
                        lo = -hi
                    new = clamped_value(old, jv, inv_d, cfm + row_cfm[r], 1.0, row_bias[r], lo, hi)
                    delta = new - old
                    if delta != 0.0:
                        lam[r] = new
                        dv = abs(delta) / inv_d
                        if dv > max_a:
                            max_a = dv
                        u0 += delta * row_B[r, side, 0]
                        u1 += delta * row_B[r, side, 1]
                        u2 += delta * row_B[r, side, 2]
                        w0 += delta * row_B[r, side, 3]
                        w1 += delta * row_B[r, side, 4]
                        w2 += delta * row_B[r, side, 5]
            if active_b and j < nb:
                k = a1 + j
                r = order[k]
                inv_d = inv_diag[r]
                if inv_d != 0.0:
                    side = 0 if row_body[r, 0] == blk_b else 1
                    lin = row_J[r, side, 0] * p0 + row_J[r, side, 1] * p1 + row_J[r, side, 2] * p2
                    ang = row_J[r, side, 3] * q0 + row_J[r, side, 4] * q1 + row_J[r, side, 5] * q2
                    if other_kind[k] == 0:
                        jv = 0.0
                        jv += lin
                        jv += ang
                    elif side == 0:
                        jv = 0.0
                        jv += lin
                        jv += ang
                        jv += fixed_part[k, 0]
                        jv += fixed_part[k, 1]
                    else:
                        jv = fixed_part[k, 0]
                        jv += lin
                        jv += ang
                    old = lam[r]
                    lo = row_lo[r]
                    hi = row_hi[r]
                    link = row_link[r]
                    if link >= 0:
                        hi = row_mu[r] * lam[link]
                        lo = -hi
                    new = clamped_value(old, jv, inv_d, cfm + row_cfm[r], 1.0, row_bias[r], lo, hi)
                    delta = new - old
                    if delta != 0.0:
                        lam[r] = new
                        dv = abs(delta) / inv_d
                        if dv > max_b:
                            max_b = dv
                        p0 += delta * row_B[r, side, 0]
                        p1 += delta * row_B[r, side, 1]
                        p2 += delta * row_B[r, side, 2]
                        q0 += delta * row_B[r, side, 3]
                        q1 += delta * row_B[r, side, 4]
                        q2 += delta * row_B[r, side, 5]
        if it == 0:
            first_a = max_a
            first_b = max_b
        if active_a and max_a <= block_tolerance:
            active_a = False
        if active_b and max_b <= block_tolerance:
            active_b = False
        if not active_a and not active_b:
            break
    v_lin[blk_a, 0] = u0
    v_lin[blk_a, 1] = u1
    v_lin[blk_a, 2] = u2
    v_ang[blk_a, 0] = w0
    v_ang[blk_a, 1] = w1
    v_ang[blk_a, 2] = w2
    v_lin[blk_b, 0] = p0
    v_lin[blk_b, 1] = p1
    v_lin[blk_b, 2] = p2
    v_ang[blk_b, 0] = q0
    v_ang[blk_b, 1] = q1
    v_ang[blk_b, 2] = q2
    return first_a if first_a > first_b else first_b


@kernel
def correction_sweep(order, start, stop, layer, body_height, row_body, row_J, row_B, inv_diag, row_kind,
                     row_owner, contact_depth, slop, row_group, row_cfm, joint_target, lam_c, disp_lin, disp_ang):
    """One Gauss-Seidel sweep of the projection LCP (000 eq. 46) over the rows among
    ``order[start:stop]`` (all rows ``start:stop`` if ``order`` is empty): J disp >= depth - slop,
    lambda_c >= 0 for contact normal rows; friction rows are dropped.

    Joint rows take part when ``joint_target`` is not empty [tumble, issue 18]: an equality row
    (types.ROW_JOINT, no constraint force mixing) asks J disp = joint_target (lambda_c free; a joint's
    rows of one group together, ``rows.solve_group``), a limit row J disp >= joint_target
    (lambda_c >= 0); motor and soft rows are not position constraints and are skipped. With the
    joint rows' velocity targets times the solve's duration as ``joint_target`` (0 for an equality row
    without Baumgarte feedback: the first-order change of C is J disp, so the projection leaves the
    joint error as it was), a contact that pushes a limb out of another body carries the limb's
    neighbours along instead of opening its joints by the depth: 000 eq. 46 with the joints'
    bilateral rows added to A, which the paper's correction leaves out (it has no joints).
    Returns (the largest penetration a contact row saw before its update [m], the largest
    displacement change along a row [m])."""
    use_order = order.shape[0] > 0
    joints = joint_target.shape[0] > 0
    worst = 0.0
    max_dx = 0.0
    for k in range(start, stop):
        r = order[k] if use_order else k
        inv_d = inv_diag[r]
        if inv_d == 0.0:
            continue
        kind = row_kind[r]
        if kind == T.ROW_CONTACT_NORMAL:
            jd = row_velocity(r, row_body, row_J, disp_lin, disp_ang)      # J disp: the same product
            residual = contact_depth[row_owner[r]] - slop - jd
            if residual > worst:
                worst = residual
            lower = 0.0
        elif joints and (kind == T.ROW_JOINT or kind == T.ROW_LIMIT) and row_cfm[r] == 0.0:
            g = row_group[r]
            if g == 0:              # solved by its group's head
                continue
            if g > 1:
                dx = solve_group(r, g, layer, body_height, row_body, row_J, row_B, joint_target, row_cfm, lam_c,
                                 disp_lin, disp_ang, 0.0)
                if dx > max_dx:
                    max_dx = dx
                continue
            residual = joint_target[r] - row_velocity(r, row_body, row_J, disp_lin, disp_ang)
            lower = 0.0 if kind == T.ROW_LIMIT else -math.inf
        else:
            continue
        old = lam_c[r]
        new = old + residual * inv_d
        if new < lower:
            new = lower
        delta = new - old
        if delta != 0.0:
            lam_c[r] = new
            dx = abs(delta) / inv_d
            if dx > max_dx:
                max_dx = dx
            apply_movable(r, delta, layer, body_height, row_body, row_B, disp_lin, disp_ang)
    return worst, max_dx


@kernel
def solve_dynamics(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                   row_cfm, row_group, row_lambda, v_lin, v_ang, iterations, tolerance, cfm, body_height,
                   merit_history):
    """dynamics(h) on the whole system (000 eq. 45c-d): warm start V += B lambda0, then up to
    ``iterations`` sweeps, fewer once a sweep changes no row velocity by more than ``tolerance``
    [m/s] (0: always all). ``merit_history`` (k >= iterations) receives theta after each sweep
    (000 Fig. 5); pass a zero-length array to skip. Returns (sweeps done, final merit theta)."""
    warm_start(row_count, row_body, row_B, row_lambda, v_lin, v_ang)
    record = merit_history.shape[0] >= iterations
    no_order = np.empty(0, dtype=np.int64)
    done = 0
    for it in range(iterations):
        dv = sweep_rows(no_order, 0, row_count, -1, body_height, row_body, row_J, row_B, row_inv_diag, row_bias,
                        row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang, cfm)
        done = it + 1
        if record:
            merit_history[it] = ncp_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi,
                                          row_link, row_mu, row_lambda, v_lin, v_ang)
        if dv <= tolerance:
            break
    theta = ncp_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                      row_lambda, v_lin, v_ang)
    return done, (theta if math.isfinite(theta) else math.inf)


@kernel
def accumulate_displacement(body_fixed, count, v_lin, v_ang, h, disp_lin, disp_ang):
    """disp += h u for every dynamic body (000 eq. 45e / 26, kept as a displacement)."""
    for i in range(count):
        if body_fixed[i]:
            continue
        for c in range(3):
            disp_lin[i, c] += h * v_lin[i, c]
            disp_ang[i, c] += h * v_ang[i, c]


@kernel_parallel
def shock_propagation(layer_count, layer_row_start, layer_rows, layer_body_start, layer_bodies, body_height,
                      row_body, row_J, row_B, layer_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu, row_cfm,
                      row_group, row_kind, row_owner, contact_depth, slop, joint_target, lam, lam_c, v_lin, v_ang,
                      disp_lin, disp_ang, h, iterations,
                      correction_iterations, cfm, tolerance, correction_tolerance, row_block, block_iterations,
                      block_tolerance, collision_speed, target, max_turn=math.inf, turn_weight=1.0):
    """Fig. 12 with A = (dynamics(h), correction()) for every layer, bottom-up (Fig. 14).

    In layer i the bodies of height i are fixated; the layer's rows get ``iterations`` PGS sweeps
    from lambda = 0 (``lam``), its dynamic bodies (height i + 1) move by h u, then
    ``correction_iterations`` projection sweeps push them out of the fixated ones and each other.
    ``lam`` holds each row's warm-start impulse on entry (``load_layer_impulses``) and the layer
    solution on exit. A layer's sweeps stop early once a sweep changes no row by more than
    ``tolerance`` [m/s] (its corrections: ``correction_tolerance`` [m]); 0 runs them all.
    Returns (the largest penetration the corrections met [m], dynamics sweeps, correction sweeps),
    the sweeps summed over the layers.

    Parallelism: when no row of a layer has two movable sides (no two of its dynamic bodies touch,
    as in a tower course or a wall course), its blocks share no movable body, so each sweep runs
    the blocks in parallel (``prange``); every block computes exactly what the serial sweep
    computes, and the sweep's stopping test takes the max over blocks, so the result does not
    depend on the thread count. Layers with touching siblings run serially, and so do the sweeps of
    less than ``PARALLEL_MIN_LAYER_UPDATES`` row updates (a region per sweep costs more).

    Targets: the rows solve towards ``row_bias``. With ``collision_speed`` >= 0
    (``layer_targets="incremental"``) each layer's entries of ``row_bias`` are written when the layer
    starts by ``layer_row_targets``, from ``target`` (rows,: the rows' own targets, read only) and the
    fixated bases' velocities *as their own layer left them*; the caller passes a scratch copy as
    ``row_bias`` then. Below 0 ``row_bias`` is used as given (Fig. 14 as written; ``target`` unread).

    Turn limit (``max_turn`` [rad], ``ShockSettings.correction_max_turn``; inf: off): a layer whose
    correction sweeps turned one of its bodies by more than ``max_turn`` is corrected again from the
    displacement it had before them, in the metric diag(m, I / ``turn_weight``) (``turn_limited_correction``);
    only layers without joint rows in the correction (``joint_target`` empty)."""
    worst = 0.0
    sweeps = 0
    correction_sweeps = 0
    fixed_part = np.empty((layer_row_start[layer_count], 2))     # block_sweep's scratch, by position
    other_kind = np.empty(layer_row_start[layer_count], dtype=np.int64)
    limit = max_turn < math.inf and joint_target.shape[0] == 0 and correction_iterations > 0
    saved = np.empty((disp_lin.shape[0] if limit else 0, 6))       # the layer's displacement before its corrections
    for layer in range(layer_count):
        s0 = layer_row_start[layer]
        s1 = layer_row_start[layer + 1]
        for k in range(s0, s1):
            r = layer_rows[k]
            lam_c[r] = 0.0
            lam0 = lam[r]
            if lam0 == 0.0:
                continue
            # warm start of this layer (001 §8): V += B lambda0 on the movable sides only
            apply_movable(r, lam0, layer, body_height, row_body, row_B, v_lin, v_ang)
        if collision_speed >= 0.0:
            layer_row_targets(layer_rows, s0, s1, layer, body_height, row_body, row_J, row_kind, target, v_lin,
                              v_ang, collision_speed, row_bias)
        # block boundaries, and whether the blocks are independent
        nb = 0
        independent = True
        for k in range(s0, s1):
            r = layer_rows[k]
            if k == s0 or row_block[r] != row_block[layer_rows[k - 1]]:
                nb += 1
            if movable(row_body[r, 0], layer, body_height) and movable(row_body[r, 1], layer, body_height):
                independent = False
        starts = np.empty(nb + 1, dtype=np.int64)
        nb = 0
        for k in range(s0, s1):
            if k == s0 or row_block[layer_rows[k]] != row_block[layer_rows[k - 1]]:
                starts[nb] = k
                nb += 1
        starts[nb] = s1
        blocks_apart = independent and nb >= PARALLEL_MIN_BLOCKS
        parallel = blocks_apart and (s1 - s0) * block_iterations >= PARALLEL_MIN_LAYER_UPDATES
        parallel_c = blocks_apart and s1 - s0 >= PARALLEL_MIN_LAYER_UPDATES
        per_block = np.zeros(nb)
        per_block_w = np.zeros(nb)
        npairs = (nb + 1) // 2
        for _ in range(iterations):
            sweeps += 1
            if parallel:
                # the blocks two by two (``block_sweep``'s pairs: the layer is independent)
                for bi in prange(npairs):
                    per_block[bi] = block_sweep(layer_rows, starts[2 * bi], starts[min(2 * bi + 2, nb)], row_block,
                                                block_iterations, block_tolerance, layer, body_height, row_body,
                                                row_J, row_B, layer_inv_diag, row_bias, row_lo, row_hi, row_link,
                                                row_mu, row_cfm, row_group, lam, v_lin, v_ang, cfm, fixed_part,
                                                other_kind, True)
                dv = per_block[:npairs].max() if nb > 0 else 0.0
            else:
                dv = block_sweep(layer_rows, s0, s1, row_block, block_iterations, block_tolerance, layer,
                                 body_height, row_body, row_J, row_B, layer_inv_diag, row_bias, row_lo, row_hi,
                                 row_link, row_mu, row_cfm, row_group, lam, v_lin, v_ang, cfm, fixed_part, other_kind,
                                 independent)
            if dv <= tolerance:
                break
        for k in range(layer_body_start[layer], layer_body_start[layer + 1]):
            i = layer_bodies[k]
            for c in range(3):
                disp_lin[i, c] += h * v_lin[i, c]
                disp_ang[i, c] += h * v_ang[i, c]
            if limit:
                for c in range(3):
                    saved[i, c] = disp_lin[i, c]
                    saved[i, 3 + c] = disp_ang[i, c]
        for _ in range(correction_iterations):
            correction_sweeps += 1
            if parallel_c:
                for bi in prange(nb):
                    wb, db = correction_sweep(layer_rows, starts[bi], starts[bi + 1], layer, body_height, row_body,
                                              row_J, row_B, layer_inv_diag, row_kind, row_owner, contact_depth, slop,
                                              row_group, row_cfm, joint_target, lam_c, disp_lin, disp_ang)
                    per_block_w[bi] = wb
                    per_block[bi] = db
                w = per_block_w.max()
                dx = per_block.max()
            else:
                w, dx = correction_sweep(layer_rows, s0, s1, layer, body_height, row_body, row_J, row_B,
                                         layer_inv_diag, row_kind, row_owner, contact_depth, slop, row_group, row_cfm,
                                         joint_target, lam_c, disp_lin, disp_ang)
            if w > worst:
                worst = w
            if dx <= correction_tolerance:
                break
        if limit and largest_turn(layer_bodies, layer_body_start[layer], layer_body_start[layer + 1], saved,
                                  disp_ang) > max_turn:
            for k in range(layer_body_start[layer], layer_body_start[layer + 1]):
                i = layer_bodies[k]
                for c in range(3):
                    disp_lin[i, c] = saved[i, c]
                    disp_ang[i, c] = saved[i, 3 + c]
            w, done = turn_limited_correction(layer_rows, s0, s1, layer, body_height, row_body, row_J, row_B, row_kind,
                                              row_owner, contact_depth, slop, turn_weight, lam_c, disp_lin, disp_ang,
                                              correction_iterations, correction_tolerance)
            correction_sweeps += done
            if w > worst:
                worst = w
    return worst, sweeps, correction_sweeps


@kernel
def largest_turn(bodies, start, stop, saved, disp_ang):
    """max over ``bodies[start:stop]`` (all bodies ``start:stop`` if ``bodies`` is empty) of |disp_ang - saved[:, 3:]|
    [rad]: the largest turn a correction gave a body."""
    use = bodies.shape[0] > 0
    turn = 0.0
    for k in range(start, stop):
        i = bodies[k] if use else k
        d0 = disp_ang[i, 0] - saved[i, 3]
        d1 = disp_ang[i, 1] - saved[i, 4]
        d2 = disp_ang[i, 2] - saved[i, 5]
        t2 = d0 * d0 + d1 * d1 + d2 * d2
        if t2 > turn:
            turn = t2
    return math.sqrt(turn)


@kernel
def turn_limited_correction(order, start, stop, layer, body_height, row_body, row_J, row_B, row_kind, row_owner,
                            contact_depth, slop, weight, lam_c, disp_lin, disp_ang, iterations, tolerance):
    """correction() (000 eq. 46, contact normal rows only) over ``order[start:stop]`` (all rows ``start:stop`` if
    ``order`` is empty) in the metric diag(m, I / ``weight``) instead of the kinetic one [tumble, issue 18]: the
    rows' angular response B_ang = I^-1 J_ang is scaled by ``weight`` (< 1: turns cost more than shifts), the
    diagonal J B taken with it over the sides movable in ``layer``; from lambda_c = 0 and the current ``disp``,
    up to ``iterations`` sweeps, fewer once one moves no row by more than ``tolerance`` [m]. Any SPD metric
    gives a projection onto J disp >= depth - slop; this one keeps it where the rows' linearisation holds.

    Why: the rows are linear in the rotation (a point at lever r moves by dtheta x r, the exact move
    2 sin(dtheta / 2) r), and in the kinetic metric a push at a corner of a long brick is ~70 % rotation
    (r^2 / I = 2.4 / m at a 0.4 m brick's end). In a toppled column of running-bond bricks each brick's
    correction turn, fixated as the next layer's base, lifted the corner of the brick resting on it by
    dtheta r and turned that one further: falling_roof (step 393) 0.19 -> 0.25 -> 0.50 -> 0.78 -> 1.22 rad up
    five courses from a 27.5 mm overlap, the top brick thrown 179 mm up into the roof, 131 mm deep at the final
    detection. Returns (the largest penetration the sweeps met [m], sweeps done)."""
    use_order = order.shape[0] > 0
    for k in range(start, stop):
        lam_c[order[k] if use_order else k] = 0.0
    worst = 0.0
    done = 0
    for _ in range(iterations):
        done += 1
        max_dx = 0.0
        for k in range(start, stop):
            r = order[k] if use_order else k
            if row_kind[r] != T.ROW_CONTACT_NORMAL:
                continue
            diag = 0.0
            for side in range(2):
                if not movable(row_body[r, side], layer, body_height):
                    continue
                for c in range(3):
                    diag += row_J[r, side, c] * row_B[r, side, c]
                    diag += weight * row_J[r, side, 3 + c] * row_B[r, side, 3 + c]
            if not diag > 1e-300:
                continue
            residual = contact_depth[row_owner[r]] - slop - row_velocity(r, row_body, row_J, disp_lin, disp_ang)
            if residual > worst:
                worst = residual
            old = lam_c[r]
            new = old + residual / diag
            if new < 0.0:
                new = 0.0
            delta = new - old
            if delta != 0.0:
                lam_c[r] = new
                dx = abs(delta) * diag
                if dx > max_dx:
                    max_dx = dx
                for side in range(2):
                    b = row_body[r, side]
                    if not movable(b, layer, body_height):
                        continue
                    for c in range(3):
                        disp_lin[b, c] += delta * row_B[r, side, c]
                        disp_ang[b, c] += delta * weight * row_B[r, side, 3 + c]
        if max_dx <= tolerance:
            break
    return worst, done


@kernel
def correction(row_count, body_height, row_body, row_J, row_B, row_inv_diag, row_kind, row_owner, contact_depth,
               slop, row_group, row_cfm, joint_target, lam_c, disp_lin, disp_ang, iterations, tolerance,
               max_turn=math.inf, turn_weight=1.0):
    """correction() on the whole system (000 eq. 46), from lambda_c = 0 and the current ``disp``;
    up to ``iterations`` sweeps, fewer once one moves no row by more than ``tolerance`` [m]; joint
    rows take part when ``joint_target`` is not empty (``correction_sweep``). With ``max_turn`` < inf and no
    joint rows: sweeps that turned a body by more than ``max_turn`` [rad] are undone and the projection is
    solved again in the metric diag(m, I / ``turn_weight``) (``turn_limited_correction``).
    Returns (the largest penetration the sweeps met [m], sweeps done)."""
    no_order = np.empty(0, dtype=np.int64)
    limit = max_turn < math.inf and joint_target.shape[0] == 0 and iterations > 0
    n = disp_lin.shape[0]
    saved = np.empty((n if limit else 0, 6))
    if limit:
        for i in range(n):
            for c in range(3):
                saved[i, c] = disp_lin[i, c]
                saved[i, 3 + c] = disp_ang[i, c]
    for r in range(row_count):
        lam_c[r] = 0.0
    worst = 0.0
    done = 0
    for _ in range(iterations):
        done += 1
        w, dx = correction_sweep(no_order, 0, row_count, -1, body_height, row_body, row_J, row_B, row_inv_diag,
                                 row_kind, row_owner, contact_depth, slop, row_group, row_cfm, joint_target, lam_c,
                                 disp_lin, disp_ang)
        if w > worst:
            worst = w
        if dx <= tolerance:
            break
    if limit and largest_turn(no_order, 0, n, saved, disp_ang) > max_turn:
        for i in range(n):
            for c in range(3):
                disp_lin[i, c] = saved[i, c]
                disp_ang[i, c] = saved[i, 3 + c]
        w, again = turn_limited_correction(no_order, 0, row_count, -1, body_height, row_body, row_J, row_B, row_kind,
                                           row_owner, contact_depth, slop, turn_weight, lam_c, disp_lin, disp_ang,
                                           iterations, tolerance)
        done += again
        if w > worst:
            worst = w
    return worst, done


@kernel
def tree_correction(row_count, body_height, row_body, row_J, row_B, row_inv_diag, row_kind, row_owner, contact_depth,
                    slop, row_group, row_cfm, joint_target, lam_c, disp_lin, disp_ang, iterations, tolerance,
                    node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start, row_offset, D_fac, F,
                    H_diag, refine, y, x, z, max_turn):
    """correction() (000 eq. 46 with the joint rows, ``correction_sweep``) with the tree joints' equality
    rows solved exactly [tumble, issue 17]: each Gauss-Seidel sweep over the other rows (contacts,
    limits; the tree's rows carry ``row_group`` 0 here and are skipped) is followed by one exact
    solve of the tree's rows for the displacement, J disp = ``joint_target`` (``joints.tree.tree_sweep``
    with disp in place of the velocity: the same kinetic metric, J M^-1 J^T dlambda = target - J disp),
    from ``lambda_c`` = 0 and the current ``disp``; up to ``iterations`` sweeps, fewer once one moves no
    row by more than ``tolerance`` [m]. Why: with the joint rows among the Gauss-Seidel sweeps, a
    contact's push reaches a jointed neighbour by about one joint per sweep, and through a light body
    (a 0.5 kg sphere levering a 33 kg one) hardly at all; the joint projection after the correction then
    closed the joints by pulling the pushed body back into the ground, and the next step pushed it out
    again: three ball-jointed spheres started in the ground took 10 steps to leave it while the top
    sphere's fall built up in its velocity with its pose held (SHOCK_JOINED_SPHERES_CASE in
    tests/physics/test_fuzz.py). Returns (the largest penetration the sweeps met [m], sweeps done)."""
    no_order = np.empty(0, dtype=np.int64)
    for r in range(row_count):
        lam_c[r] = 0.0
    worst = 0.0
    done = 0
    for _ in range(iterations):
        done += 1
        w, dx = correction_sweep(no_order, 0, row_count, -1, body_height, row_body, row_J, row_B, row_inv_diag,
                                 row_kind, row_owner, contact_depth, slop, row_group, row_cfm, joint_target, lam_c,
                                 disp_lin, disp_ang)
        if w > worst:
            worst = w
        dt = tree_sweep(node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start, row_offset,
                        row_body, row_J, joint_target, row_cfm, row_inv_diag, lam_c, D_fac, F, H_diag, refine, y, x,
                        z, disp_lin, disp_ang)
        if max(dx, dt) <= tolerance:
            break
        turn = 0.0
        for i in range(disp_ang.shape[0]):
            a2 = disp_ang[i, 0] * disp_ang[i, 0] + disp_ang[i, 1] * disp_ang[i, 1] + disp_ang[i, 2] * disp_ang[i, 2]
            if a2 > turn:
                turn = a2
        if turn > max_turn * max_turn:
            break
    return worst, done


@kernel
def correction_residual(contact_count, row_body, row_J, contact_target, slop, disp_lin, disp_ang):
    """The largest depth left after the displacement ``disp``, to first order: max over the normal rows
    c (``prepare_normal_rows`` layout) of contact_target[c] - slop - J_c disp [m] (0 when none is left)."""
    left = 0.0
    for c in range(contact_count):
        d = contact_target[c] - slop - row_velocity(c, row_body, row_J, disp_lin, disp_ang)
        if d > left:
            left = d
    return left


@kernel
def no_energy_gain(count, body_fixed, body_mass, body_orientation, body_inertia_local, v_lin0, v_ang0, v_lin, v_ang):
    """Per dynamic body, scale its velocity change (v0 -> v) back so its kinetic energy does not rise:
    with dv = v - v0, KE(s) = KE(v0) + s B + s^2 A (A = KE(dv) >= 0, B = m v0 . dv + w0^T I dw, I the
    world inertia R I_body R^T) the body keeps v0 + s dv with s = 1 when KE(1) <= KE(0), else
    s = max(0, -B / A), the largest s in [0, 1] with KE(s) <= KE(0). For ``ShockSolver._settle``, whose
    fixated bases make it no exact impulse pair: a base moving into its top faster than
    ``layer_collision_speed`` stops only the top's approach, but a slower one, or a joint row to a moving
    base, can push the top (measured: a 190 m board joined to a fixed box inside a fixed sphere, +9977 J
    beyond the fuzz's bound over 40 steps without this guard). Returns how many bodies were scaled."""
    scaled = 0
    R = np.empty((3, 3))
    q = np.empty(4)
    for i in range(count):
        if body_fixed[i]:
            continue
        m = body_mass[i]
        dv0 = v_lin[i, 0] - v_lin0[i, 0]
        dv1 = v_lin[i, 1] - v_lin0[i, 1]
        dv2 = v_lin[i, 2] - v_lin0[i, 2]
        dw0 = v_ang[i, 0] - v_ang0[i, 0]
        dw1 = v_ang[i, 1] - v_ang0[i, 1]
        dw2 = v_ang[i, 2] - v_ang0[i, 2]
        if dv0 == 0.0 and dv1 == 0.0 and dv2 == 0.0 and dw0 == 0.0 and dw1 == 0.0 and dw2 == 0.0:
            continue
        for k in range(4):
            q[k] = body_orientation[i, k]
        quat_to_matrix(q, R)
        # body-frame dw and w0: I_world x . y = (R^T x) . I_body (R^T y)
        a0 = R[0, 0] * dw0 + R[1, 0] * dw1 + R[2, 0] * dw2
        a1 = R[0, 1] * dw0 + R[1, 1] * dw1 + R[2, 1] * dw2
        a2 = R[0, 2] * dw0 + R[1, 2] * dw1 + R[2, 2] * dw2
        b0 = R[0, 0] * v_ang0[i, 0] + R[1, 0] * v_ang0[i, 1] + R[2, 0] * v_ang0[i, 2]
        b1 = R[0, 1] * v_ang0[i, 0] + R[1, 1] * v_ang0[i, 1] + R[2, 1] * v_ang0[i, 2]
        b2 = R[0, 2] * v_ang0[i, 0] + R[1, 2] * v_ang0[i, 1] + R[2, 2] * v_ang0[i, 2]
        I = body_inertia_local
        ia0 = I[i, 0, 0] * a0 + I[i, 0, 1] * a1 + I[i, 0, 2] * a2
        ia1 = I[i, 1, 0] * a0 + I[i, 1, 1] * a1 + I[i, 1, 2] * a2
        ia2 = I[i, 2, 0] * a0 + I[i, 2, 1] * a1 + I[i, 2, 2] * a2
        A = 0.5 * (m * (dv0 * dv0 + dv1 * dv1 + dv2 * dv2) + a0 * ia0 + a1 * ia1 + a2 * ia2)
        B = m * (v_lin0[i, 0] * dv0 + v_lin0[i, 1] * dv1 + v_lin0[i, 2] * dv2) + b0 * ia0 + b1 * ia1 + b2 * ia2
        if B + A <= 0.0:
            continue
        f = -B / A if B < 0.0 and A > 0.0 else 0.0
        if f > 1.0:
            f = 1.0
        scaled += 1
        v_lin[i, 0] = v_lin0[i, 0] + f * dv0
        v_lin[i, 1] = v_lin0[i, 1] + f * dv1
        v_lin[i, 2] = v_lin0[i, 2] + f * dv2
        v_ang[i, 0] = v_ang0[i, 0] + f * dw0
        v_ang[i, 1] = v_ang0[i, 1] + f * dw1
        v_ang[i, 2] = v_ang0[i, 2] + f * dw2
    return scaled


@kernel
def settle_joint_tree(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                      row_cfm, row_group, node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start,
                      row_offset, D_fac, F, H_diag, refine, y, x, z, body_count, body_fixed, body_mass,
                      body_orientation, body_inertia_local, v_lin, v_ang, iterations, tolerance):
    """The joints' share of ``ShockSolver._settle`` [tumble, issue 17]: the velocities projected, in the
    kinetic metric, on the rows the final correction and the joint projection hold at the position
    level -- the tree joints' equality rows J v = 0 (exact, ``joints.tree.tree_sweep`` on the factor
    the caller made) together with the rows of ``row_group`` 1 (the pushed contacts' normal rows,
    J v >= 0 with lambda >= 0; the limits, J v >= min(zeta, 0)) -- by Gauss-Seidel over the latter,
    each sweep followed by one exact tree solve, from lambda = 0 (block Gauss-Seidel on the LCP, as
    pgs's ``solve_with_tree``), at most ``iterations`` sweeps, stopping once a sweep changes no row
    velocity by more than ``tolerance``.

    Why exact: a body held through a light one (a 28 kg box hung from the world by a 2.8e-5 kg link) is
    held by the tree projection (positions, exact), while the velocity solves, Gauss-Seidel on the joint
    rows, move the light side only (a row's effective mass is the light body's): the box kept falling
    in velocity at g from step to step with its pose held, and the speed was there with no fall to
    pay for it. Every update here lowers the kinetic energy: with no bias a row update Delta lambda =
    t (-J v / A_rr), t in [0, 1] by the clamp, changes it by A_rr u^2 t (t / 2 - 1) <= 0 (u the
    unclamped update); the tree solve is the M-orthogonal projection on J v = 0 (a target zeta <= 0 on
    a limit: the same for the approaching rows it touches). A rounding-level gain (the tree factor of a
    1:1e9 chain) is scaled back over all bodies together: with dv the change, KE(v0 + s dv) = KE(v0) +
    s B + s^2 A, s = -B / A when s = 1 gains (the per-body ``no_energy_gain`` would break the momentum
    exchange the joints make). Returns (sweeps done, whether the guard scaled)."""
    n = body_count
    v_lin0 = np.empty((n, 3))
    v_ang0 = np.empty((n, 3))
    for i in range(n):
        for c in range(3):
            v_lin0[i, c] = v_lin[i, c]
            v_ang0[i, c] = v_ang[i, c]
    swept = False
    for r in range(row_count):
        if row_group[r] == 1:
            swept = True
            break
    lam = np.zeros(row_count)
    done = 0
    for it in range(iterations):
        dv = 0.0
        if swept:
            dv = pgs_sweep(0, row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link,
                           row_mu, row_cfm, row_group, lam, v_lin, v_ang)
        dt = tree_sweep(node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start, row_offset,
                        row_body, row_J, row_bias, row_cfm, row_inv_diag, lam, D_fac, F, H_diag, refine, y, x, z,
                        v_lin, v_ang)
        done = it + 1
        if not swept or max(dv, dt) < tolerance:
            break
    # the guard: total A = KE(dv) and B = sum m v0 . dv + w0^T I dw (I = R I_body R^T, in body frames)
    A = 0.0
    B = 0.0
    R = np.empty((3, 3))
    q = np.empty(4)
    for i in range(n):
        if body_fixed[i]:
            continue
        for k in range(4):
            q[k] = body_orientation[i, k]
        quat_to_matrix(q, R)
        m = body_mass[i]
        I = body_inertia_local
        for c in range(3):
            d = v_lin[i, c] - v_lin0[i, c]
            A += 0.5 * m * d * d
            B += m * v_lin0[i, c] * d
        for a in range(3):
            da = 0.0
            wa = 0.0
            for c in range(3):
                da += R[c, a] * (v_ang[i, c] - v_ang0[i, c])
                wa += R[c, a] * v_ang0[i, c]
            for e in range(3):
                de = 0.0
                for c in range(3):
                    de += R[c, e] * (v_ang[i, c] - v_ang0[i, c])
                A += 0.5 * da * I[i, a, e] * de
                B += wa * I[i, a, e] * de
    if B + A <= 0.0:
        return done, False
    f = -B / A if B < 0.0 and A > 0.0 else 0.0
    if f > 1.0:
        f = 1.0
    for i in range(n):
        if body_fixed[i]:
            continue
        for c in range(3):
            v_lin[i, c] = v_lin0[i, c] + f * (v_lin[i, c] - v_lin0[i, c])
            v_ang[i, c] = v_ang0[i, c] + f * (v_ang[i, c] - v_ang0[i, c])
    return done, True


@kernel
def stop_approach(row_count, row_body, row_J, row_B, row_inv_diag, row_unseen, restitution, restitution_threshold,
                  v_lin, v_ang, iterations):
    """Gauss-Seidel on the normal rows r with ``row_unseen[r]`` (row r is contact r): lambda_r >= 0
    accumulated, target J v = e u0- (Newton restitution e = ``restitution[r]`` when the approach speed
    -u0 before the solve exceeds ``restitution_threshold`` [m/s], else 0; 001 Alg. 4 without bias or
    friction), ``iterations`` sweeps. For the contacts that the final detection found on bodies the
    step's velocity solve never saw (their approach is otherwise never stopped: projection moves them
    out, gravity keeps accelerating). Returns the total impulse [N s]."""
    lam = np.zeros(row_count)
    target = np.zeros(row_count)
    for r in range(row_count):
        if row_unseen[r]:
            u0 = row_velocity(r, row_body, row_J, v_lin, v_ang)
            if -u0 > restitution_threshold:
                target[r] = -restitution[r] * u0
    total = 0.0
    for _ in range(iterations):
        for r in range(row_count):
            if not row_unseen[r]:
                continue
            u = row_velocity(r, row_body, row_J, v_lin, v_ang)
            new = lam[r] + (target[r] - u) * row_inv_diag[r]
            if new < 0.0:
                new = 0.0
            d = new - lam[r]
            if d == 0.0:
                continue
            lam[r] = new
            for side in range(2):
                b = row_body[r, side]
                if b < 0:
                    continue
                for c in range(3):
                    v_lin[b, c] += d * row_B[r, side, c]
                    v_ang[b, c] += d * row_B[r, side, 3 + c]
    for r in range(row_count):
        total += lam[r]
    return total


@kernel
def apply_step_displacement(body_position, body_orientation, body_angular_velocity, body_inertia_local,
                            body_inv_inertia_local, body_fixed, count, disp_lin, disp_ang, flow_ang, h, dt, free):
    """The step's accumulated displacement, split into its two kinds of rotation [tumble, issues 17/18]:

    - the flow, flow_ang + h w (the a dt u_1 of ``accumulate_displacement``, passed in as
      ``flow_ang``, plus the (1 - a) dt u_2 that ``shock_propagation`` added with each body's final
      w; h = 0 without shock propagation). With ``free`` (the "midpoint" rotation integrator) it is
      the free rigid body's flow (``dynamics.integrate.rotate_free_body``) driven by the step's mean
      angular velocity (flow_ang + h w) / dt, which also turns the end-of-step w (its world momentum
      kept). Without it the two sub-steps each applied the gyroscopic term at the start-of-step
      orientation: a torque-free 0.1 x 0.4 x 0.9 m box spun about (0.1, 5, 0.1) rad/s flipped 5 times
      in 10 s at 60 Hz (4 at 1 kHz) where the exact motion flips 3 times. A body touching nothing
      (disp_ang = dt w) rotates as under pgs.
    - the rest, disp_ang - (flow_ang + h w): the projections' rotation (000 eq. 46), a pure position
      change: q <- exp(dtheta_c / 2) q and w turned with the body (``turn_with_body``), so the body
      keeps its body-frame angular velocity and with it its kinetic energy 1/2 w^T R I R^T w.
      Driving the flow with the whole disp_ang / dt (before issue 17) kept the world momentum L while
      the correction turned the inertia under it, so 1/2 L^T I(q)^-1 L changed: a 2 x 2 x 14 m box
      started 7 m into the ground spinning at 1 rad/s gained 42 J on 467 J in its first step
      (dt 1/240; "euler", which kept the world w, lost 107 J).

    The split is exact for a body the projections did not move: shock_propagation forms
    disp = flow_ang + h w with the same operations (each body's layer adds h w once, before any
    correction touches it, and its w is fixated afterwards), so the rest is 0.0 and the step is bit for
    bit the earlier one. x += disp_lin (a linear correction changes no kinetic energy)."""
    for i in range(count):
        if body_fixed[i]:
            continue
        for c in range(3):
            body_position[i, c] += disp_lin[i, c]
        fx = flow_ang[i, 0]
        fy = flow_ang[i, 1]
        fz = flow_ang[i, 2]
        if h != 0.0:
            fx += h * body_angular_velocity[i, 0]
            fy += h * body_angular_velocity[i, 1]
            fz += h * body_angular_velocity[i, 2]
        # the projections' rotation, kept in flow_ang[i] (scratch from here on)
        flow_ang[i, 0] = disp_ang[i, 0] - fx
        flow_ang[i, 1] = disp_ang[i, 1] - fy
        flow_ang[i, 2] = disp_ang[i, 2] - fz
        if free:
            wx = fx / dt
            wy = fy / dt
            wz = fz / dt
            ww = wx * wx + wy * wy + wz * wz
            if ww != 0.0:
                if ww * dt * dt < MIDPOINT_MAX_ANGLE * MIDPOINT_MAX_ANGLE:
                    rotate_free_body(i, dt, wx, wy, wz, body_orientation, body_angular_velocity, body_inertia_local,
                                     body_inv_inertia_local)
                else:
                    rotate_body(i, fx, fy, fz, body_orientation)
            rotate_body(i, flow_ang[i, 0], flow_ang[i, 1], flow_ang[i, 2], body_orientation)
        else:
            # first-order update: one rotation by the whole disp_ang, as before (w stays in the world
            # frame for the flow part, as ``integrate_positions`` leaves it)
            rotate_body(i, disp_ang[i, 0], disp_ang[i, 1], disp_ang[i, 2], body_orientation)
        turn_with_body(i, flow_ang, body_angular_velocity)


@kernel_parallel
def prepare_normal_rows(contact_count, contact_body_a, contact_body_b, contact_point, contact_normal, body_position,
                        body_inv_mass, body_inv_inertia_world, body_fixed, row_body, row_J, row_B, row_inv_diag,
                        row_kind, row_owner):
    """Row c = the normal row of contact c (000 eq. 2), for the final correction(): friction rows
    are dropped there, so only these are built. Returns the row count."""
    for c in prange(contact_count):
        ra = np.empty(3)
        rb = np.empty(3)
        n = np.empty(3)
        a = contact_body_a[c]
        b = contact_body_b[c]
        for k in range(3):
            n[k] = contact_normal[c, k]
            ra[k] = contact_point[c, k] - body_position[a, k]
            rb[k] = contact_point[c, k] - body_position[b, k]
        fill_row(c, -1 if body_fixed[a] else a, -1 if body_fixed[b] else b, n, ra, rb, body_inv_mass,
                 body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag)
        row_kind[c] = T.ROW_CONTACT_NORMAL
        row_owner[c] = c
    return contact_count


@kernel
def load_layer_impulses(contact_count, row_J, contact_aux_impulse, scale, lam):
    """lam of the three rows of contact c from the cached layer impulse (normal, friction world
    vector) times ``scale``, the friction vector projected on this step's tangents."""
    for c in range(contact_count):
        r0 = 3 * c
        lam[r0] = scale * contact_aux_impulse[c, 0]
        for j in range(1, 3):
            s = 0.0
            for k in range(3):
                s += contact_aux_impulse[c, 1 + k] * row_J[r0 + j, 1, k]
            lam[r0 + j] = scale * s


@kernel
def store_layer_impulses(contact_count, row_J, lam, scale, contact_aux_impulse):
    """The inverse of ``load_layer_impulses``: cache the layer impulses times ``scale``."""
    for c in range(contact_count):
        r0 = 3 * c
        contact_aux_impulse[c, 0] = scale * lam[r0]
        for k in range(3):
            f = lam[r0 + 1] * row_J[r0 + 1, 1, k] + lam[r0 + 2] * row_J[r0 + 2, 1, k]
            contact_aux_impulse[c, 1 + k] = scale * f


@kernel
def update_depths(contact_count, row_body, row_J, disp_lin, disp_ang, contact_depth):
    """depth_c -= J_c disp for the normal row c of every contact (``prepare_normal_rows`` layout):
    the first-order change of the separation along n after the bodies moved by ``disp``."""
    for c in range(contact_count):
        contact_depth[c] -= row_velocity(c, row_body, row_J, disp_lin, disp_ang)


@kernel
def layer_row_targets(layer_rows, start, stop, layer, body_height, row_body, row_J, row_kind, row_bias, v_lin, v_ang,
                      threshold, out):
    """``layer_targets`` for the rows ``layer_rows[start:stop]`` of ``layer``, from the fixated bases'
    velocities now: called by ``shock_propagation`` when the layer starts, after the layers below
    have set its bases' velocities [tumble, issue 18]. Why not once before the propagation: a base's
    velocity changes in its own layer, and a brick that its supports sent into the body above after
    the targets were taken launched it: in tower_roof, after the cannonball, the 16 t block went up
    at 3.9 m/s (+135 kJ in one step) when the targets came from the velocities after dynamics(a dt).
    ``threshold`` < 0: out = row_bias (the paper's targets)."""
    for k in range(start, stop):
        r = layer_rows[k]
        t = row_bias[r]
        if threshold >= 0.0 and row_kind[r] == T.ROW_CONTACT_NORMAL:
            jb = 0.0
            bases = 0
            for side in range(2):
                b = row_body[r, side]
                if b < 0 or body_height[b] > layer:       # not a fixated base
                    continue
                bases += 1
                for c in range(3):
                    jb += row_J[r, side, c] * v_lin[b, c] + row_J[r, side, 3 + c] * v_ang[b, c]
            if bases == 1 and jb < -threshold and jb < t:
                t = jb
        out[r] = t


@kernel
def layer_targets(row_count, row_body, row_J, row_kind, row_bias, row_layer, body_height, v_lin, v_ang, threshold,
                  out):
    """Velocity targets of the layer solves that do not let a fixated body launch the one above.

    For a normal row of layer i, J u = J_top u_top + J_base u_base, the base being the side of
    height i (fixated in that layer). When the base itself moves into the top faster than
    ``threshold`` [m/s] after dynamics(a dt) (J_base u_base < -threshold: a tumbling brick
    hitting the block above it), the top is only asked to keep J u >= min(zeta, J_base u_base),
    i.e. to stop its own approach but not to get out of the base's way; the overlap this leaves is
    the correction's. Falling onto a base (the top's approach) is stopped as in the paper. Rows
    between siblings and friction rows keep zeta."""
    for r in range(row_count):
        out[r] = row_bias[r]
        if row_kind[r] != T.ROW_CONTACT_NORMAL or row_layer[r] < 0:
            continue
        jb = 0.0
        bases = 0
        for side in range(2):
            b = row_body[r, side]
            if b < 0 or body_height[b] > row_layer[r]:
                continue
            bases += 1
            for k in range(3):
                jb += row_J[r, side, k] * v_lin[b, k] + row_J[r, side, 3 + k] * v_ang[b, k]
        if bases == 1 and jb < -threshold and jb < out[r]:
            out[r] = jb


@kernel
def count_ahead_copies(row_count, row_body, row_kind, row_link, row_J, body_height, up, min_push, v_lin, v_ang,
                       max_speed, hit, copy_of):
    """The rows that ``write_ahead_copies`` copies into the layer of their lower side [tumble, issue 18]:
    every contact normal row between two dynamic bodies x (height h) and y of a greater height
    (solved in a later layer) whose push on x, the row's linear Jacobian n on x's side, has
    n . up >= ``min_push`` (``ShockSettings.layer_ahead_min_push``, -0.5: y not resting on top of x, its
    normal more than 60 degrees from straight down), whose x approaches y's pose at most at
    ``max_speed`` (``ShockSettings.layer_ahead_max_speed``; -J_x v_x, x's side alone: what the copy
    stops) and neither of whose bodies is hit (has a contact row, with any body, fixed ones included,
    closing faster than ``max_speed``: -J v, both sides); all at the velocities ``v_lin``, ``v_ang``
    the layers start from; and the friction rows linked to such a row. ``up`` zero: every such push.
    Why not the rows of bodies resting on x: the common case of a stack (every course on the one
    below), where the copy only doubles the rows (tower_roof ~25 -> ~48 ms per step with them) and
    keeps x from moving up into a body that will be solved after it anyway.

    Why: a row belongs to the layer of its higher side (``contact.layers.build_layers``), so x is
    solved in layer h - 1 without y, which joins the layers only at h, with x fixated. Whatever y
    does for x -- holds it up, or holds it sideways where a sphere sits between spheres on steep
    normals -- x's own layer does not see: x slides or falls into y, the layer's projection pushes
    it back out (a lift nobody paid for), and the fall stays in its velocity; meanwhile x, moving,
    pushes the bodies of its later layers. Measured in ``pile1000`` under shock after 1500 steps
    (60 Hz): the layer projections lifted ~75 spheres by > 0.5 mm every step (+6.7 J of potential
    energy per step), their velocities after the layers -0.05 to -0.14 m/s; the pile never rested
    (kinetic energy of the spheres in the box 2-7 J). Copying only the rows whose y holds x up
    (n . up > 0.5) changed nothing measurable (+7 J per step): the sideways contacts matter.

    Why not the fast rows and the bodies hit: an impact is no resting contact. In the copy y is a
    static wall, so an x that moves into y fast is stopped dead in its own layer, and y, solved after
    x with x fixated and stopped, is never pushed. Measured in tower_roof (4 courses, dt 0.01): the
    cannonball lies on the ground (height 1) and meets the bricks (height 2) at 5.6-10.6 m/s; with
    every row copied it was stopped (0.35 m/s at the end) and no brick was knocked out (25 without
    copies, 19 with the closing-speed and hit tests, 23 with x's approach test too). A brick the ball
    hits is pushed into its neighbours of later layers, which as copies would hold it as walls. The
    approach of x alone, beside the closing speed: the step after a hit x and y move on together
    (closing < 1 m/s) and a copy stopped x against y's pose (tests/physics/test_shock_ahead_rows.py,
    a 5 kg ball at 8 m/s into two stacked boxes: 4.95 -> 0.05 m/s in one step). The copies are for
    resting piles: in pile1000 (60 Hz) the copied rows close at <= 1.44 m/s and x approaches at <=
    1.78 m/s while the spheres fall in (steps 0-60), <= 0.75 / 1.26 m/s in steps 60-120 and <= 0.45 /
    0.61 m/s in steps 200-300.

    ``hit`` (bodies,) bool: scratch. ``copy_of`` (rows,) int64 receives -1, or for a row to copy the
    index its copy will have (``row_count``, ``row_count + 1``, ...: the normals first, then the
    friction rows, each in the rows' order). Returns the number of copies. Reads only (but ``hit``)."""
    for b in range(hit.shape[0]):
        hit[b] = False
    for r in range(row_count):
        if row_kind[r] != T.ROW_CONTACT_NORMAL:
            continue
        jv = 0.0
        for side in range(2):
            b = row_body[r, side]
            if b >= 0:
                for k in range(3):
                    jv += row_J[r, side, k] * v_lin[b, k] + row_J[r, side, 3 + k] * v_ang[b, k]
        if jv < -max_speed:
            for side in range(2):
                b = row_body[r, side]
                if b >= 0:
                    hit[b] = True
    n = 0
    for r in range(row_count):
        copy_of[r] = -1
        if row_kind[r] != T.ROW_CONTACT_NORMAL:
            continue
        a = row_body[r, 0]
        b = row_body[r, 1]
        if a < 0 or b < 0 or body_height[a] == body_height[b] or hit[a] or hit[b]:
            continue
        side = 0 if body_height[a] < body_height[b] else 1      # x, the lower side
        x = row_body[r, side]
        push = row_J[r, side, 0] * up[0] + row_J[r, side, 1] * up[1] + row_J[r, side, 2] * up[2]
        jx = 0.0                        # x's approach to y's pose, what the copy stops
        for k in range(3):
            jx += row_J[r, side, k] * v_lin[x, k] + row_J[r, side, 3 + k] * v_ang[x, k]
        if push >= min_push and jx >= -max_speed:
            copy_of[r] = row_count + n
            n += 1
    for r in range(row_count):
        if row_kind[r] == T.ROW_CONTACT_FRICTION and 0 <= row_link[r] < row_count and copy_of[row_link[r]] >= 0:
            copy_of[r] = row_count + n
            n += 1
    return n


@kernel
def write_ahead_copies(row_count, copy_of, body_height, row_body, row_J, row_B, row_inv_diag, row_bias,
                       row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm,
                       row_group):
    """Row ``copy_of[r]`` = row r seen from its lower side x only (``count_ahead_copies``): the same
    Jacobian, velocity target, bounds and owner, with the higher side y replaced by a fixed body (-1),
    and a normal copy's kind ``ROW_AHEAD_COPY``: a velocity row only, which the layer's projection
    skips. Why: as a position row the static y pushed x out of an existing overlap towards x's own
    supports; in tests/physics/test_shock_jams.py a 1 kg box under a 10 t box was pushed into the
    ground (67 mm deep, when the rows of bodies resting on x were copied too; the overlap is y's to
    leave, in its own layer). The copy joins x's layer (h - 1) as a row to a wall would: in that
    layer y is a static obstacle at its pose of ``detect(t)`` that takes no impulse and lends no
    velocity. Why not y's velocity: y is not solved yet, and after the step's gravity it
    falls at g (1 - a) dt; x next to a falling y would be dragged along, the motion these copies
    remove. When y's own layer comes, row r moves y with x fixated (000 §4, unchanged). A friction
    copy links to its normal's copy; ``row_lambda`` of a copy is 0."""
    for r in range(row_count):
        k = copy_of[r]
        if k < 0:
            continue
        src = r if row_kind[r] == T.ROW_CONTACT_NORMAL else row_link[r]
        keep = 0 if body_height[row_body[src, 0]] < body_height[row_body[src, 1]] else 1   # the lower side
        for side in range(2):
            row_body[k, side] = row_body[r, side] if side == keep else -1
            for c in range(6):
                row_J[k, side, c] = row_J[r, side, c]
                row_B[k, side, c] = row_B[r, side, c] if side == keep else 0.0
        row_inv_diag[k] = row_inv_diag[r]
        row_bias[k] = row_bias[r]
        row_bias_relax[k] = row_bias_relax[r]
        row_lo[k] = row_lo[r]
        row_hi[k] = row_hi[r]
        row_link[k] = copy_of[row_link[r]] if row_kind[r] != T.ROW_CONTACT_NORMAL else -1
        row_mu[k] = row_mu[r]
        row_kind[k] = ROW_AHEAD_COPY if row_kind[r] == T.ROW_CONTACT_NORMAL else row_kind[r]
        row_lambda[k] = 0.0
        row_owner[k] = row_owner[r]
        row_cfm[k] = row_cfm[r]
        row_group[k] = 1
