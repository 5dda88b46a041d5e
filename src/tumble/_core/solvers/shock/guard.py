"""Energy guards of the shock step for jointed jams [tumble, issue 18].

Two ways the shock step gained energy on jointed bodies jammed into the ground and each other
(``tests/physics/test_fuzz.py``, ``jointed_jams``), each guarded per island (bodies connected by the
rows or joints concerned, found with a union-find inside the kernel), so a bad island never slows or
damps the rest of a scene:

* ``guard_warm_start``: the warm start of the whole-system velocity solve (000 eq. 45c-d starts from
  the cached impulses, 001 §8). Impulses that cancelled on every body in the last step (a loop of a
  fixed joint, a ball joint and a contact between parts of one welded assembly; two boxes welded
  through a 2.8e-5 kg link) grow without bound in the null space of J^T while the step's sweeps feed
  them; once a contact point moves they no longer cancel, and 10 Gauss-Seidel sweeps at mass ratios
  of 1e8 never undo them: +2.7 MJ in one velocity solve.
* ``guard_lifted_groups``: a jointed group that the step's projections (the corrections, the joint
  projections) lifted while its velocities fell (a rod standing 1.3 m deep in the ground welded to a
  17 t sphere: the final correction lifted the sphere 0.1-0.2 m per step while it toppled about the
  rod's tip in velocity): the kinetic energy came from a fall its position never made. Same rule as
  pgs's ``pushed_energy_guard`` (``dynamics.integrate.guard_pushed_bodies``), per jointed group so the
  joints' velocity constraints stay satisfied (the blend of two velocities that satisfy J v = 0 does).
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core.config import kernel
from tumble._core.dynamics.integrate import pushed_start
from tumble._core.math3d import quat_rotation
from tumble._core.types import MOTOR_NONE, ROW_JOINT, ROW_MOTOR


@kernel(inline="always")
def _root(parent, i):
    """The union-find root of ``i`` (path halving)."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@kernel(inline="always")
def _join(parent, i, k):
    """Unite the sets of ``i`` and ``k`` (the smaller root index wins: deterministic)."""
    ri = _root(parent, i)
    rk = _root(parent, k)
    if ri < rk:
        parent[rk] = ri
    elif rk < ri:
        parent[ri] = rk


@kernel(inline="always")
def _kinetic_dot(m, body_orientation, body_inertia_local, i, u0, u1, u2, a0, a1, a2, v0, v1, v2, b0, b1, b2):
    """(u, a)^T M (v, b) of body i: m u . v + a^T I_world b, I_world = R I_body R^T (as (R^T a)^T I (R^T b))."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = quat_rotation(
        body_orientation[i, 0], body_orientation[i, 1], body_orientation[i, 2], body_orientation[i, 3])
    p0 = r00 * a0 + r10 * a1 + r20 * a2
    p1 = r01 * a0 + r11 * a1 + r21 * a2
    p2 = r02 * a0 + r12 * a1 + r22 * a2
    q0 = r00 * b0 + r10 * b1 + r20 * b2
    q1 = r01 * b0 + r11 * b1 + r21 * b2
    q2 = r02 * b0 + r12 * b1 + r22 * b2
    I = body_inertia_local
    iq0 = I[i, 0, 0] * q0 + I[i, 0, 1] * q1 + I[i, 0, 2] * q2
    iq1 = I[i, 1, 0] * q0 + I[i, 1, 1] * q1 + I[i, 1, 2] * q2
    iq2 = I[i, 2, 0] * q0 + I[i, 2, 1] * q1 + I[i, 2, 2] * q2
    return m * (u0 * v0 + u1 * v1 + u2 * v2) + p0 * iq0 + p1 * iq1 + p2 * iq2


@kernel
def guard_warm_start(row_count, row_body, row_B, row_kind, row_cfm, row_lambda, count, body_fixed, body_mass,
                     body_orientation, body_inertia_local, v_lin, v_ang):
    """Scale the warm-start impulses ``row_lambda[:row_count]`` per island so that applying them alone
    does not raise the kinetic energy. With du = M^-1 J^T lambda = sum_r B_r lambda_r over an island's
    rows and v its velocities before the warm start (after the external forces), the warm start s lambda
    changes its kinetic energy by f(s) = s b + s^2 a / 2, a = du^T M du >= 0, b = v^T M du. Where
    f(1) > 0 the island's impulses are scaled by s = max(0, -b / a), the minimiser of f on [0, 1]
    (f(s) = -b^2 / 2a <= 0); elsewhere they stay as they are (a resting stack's warm start, the gravity
    impulse against gravity's approach, has f(1) ~ -a / 2). The velocity solve is a descent method on
    f from there (each row update or joint block solve minimises it exactly along its rows), so with
    targets 0 the solve no longer ends above the energy it started from, whatever its sweep count.
    Islands: bodies joined by rows; only islands with a joint row (kind ``ROW_JOINT`` or after) with an
    impulse and a contact row are guarded: the loops it is for close through a contact
    (chain50, hung in the air, had its warm start scaled in 38 of 305 steps without this condition), and
    contact-only islands keep their warm start bit for bit (a resting stack's friction impulses give
    f(1) > 0 by rounding-sized amounts, and scaling them changed every stacked library scene); none with
    a motor row or a soft row (``row_cfm`` > 0) with an impulse: a motor's or a spring's warm start does
    work the energy test cannot tell from a loop's.
    Returns the number of islands scaled."""
    parent = np.empty(count, dtype=np.int64)
    du_lin = np.zeros((count, 3))
    du_ang = np.zeros((count, 3))
    jointed = np.zeros(count, dtype=np.bool_)
    touching = np.zeros(count, dtype=np.bool_)
    driven = np.zeros(count, dtype=np.bool_)
    for i in range(count):
        parent[i] = i
    for r in range(row_count):
        ba = row_body[r, 0]
        bb = row_body[r, 1]
        if ba >= 0 and bb >= 0 and not body_fixed[ba] and not body_fixed[bb]:
            _join(parent, ba, bb)
        lam = row_lambda[r]
        if lam == 0.0:
            continue
        for side in range(2):
            b = row_body[r, side]
            if b < 0 or body_fixed[b]:
                continue
            for c in range(3):
                du_lin[b, c] += lam * row_B[r, side, c]
                du_ang[b, c] += lam * row_B[r, side, 3 + c]
    for r in range(row_count):
        b = row_body[r, 0]
        if b < 0 or body_fixed[b]:
            b = row_body[r, 1]
        if b < 0 or body_fixed[b]:
            continue
        if row_kind[r] < ROW_JOINT:
            touching[_root(parent, b)] = True
        elif row_lambda[r] == 0.0:
            continue
        else:
            if row_kind[r] == ROW_MOTOR or row_cfm[r] > 0.0:
                driven[_root(parent, b)] = True
            else:
                jointed[_root(parent, b)] = True
    quad = np.zeros(count)
    lin = np.zeros(count)
    for i in range(count):
        if body_fixed[i]:
            continue
        root = _root(parent, i)
        u0 = du_lin[i, 0]
        u1 = du_lin[i, 1]
        u2 = du_lin[i, 2]
        a0 = du_ang[i, 0]
        a1 = du_ang[i, 1]
        a2 = du_ang[i, 2]
        quad[root] += _kinetic_dot(body_mass[i], body_orientation, body_inertia_local, i, u0, u1, u2, a0, a1, a2,
                                   u0, u1, u2, a0, a1, a2)
        lin[root] += _kinetic_dot(body_mass[i], body_orientation, body_inertia_local, i, v_lin[i, 0], v_lin[i, 1],
                                  v_lin[i, 2], v_ang[i, 0], v_ang[i, 1], v_ang[i, 2], u0, u1, u2, a0, a1, a2)
    scale = np.ones(count)
    islands = 0
    for i in range(count):
        if body_fixed[i] or parent[i] != i or not jointed[i] or not touching[i] or driven[i]:
            continue
        if quad[i] > 0.0 and lin[i] + 0.5 * quad[i] > 0.0:
            scale[i] = max(0.0, -lin[i] / quad[i])
            islands += 1
    if islands == 0:
        return 0
    for r in range(row_count):
        if row_lambda[r] == 0.0:
            continue
        b = row_body[r, 0]
        if b < 0 or body_fixed[b]:
            b = row_body[r, 1]
        if b < 0 or body_fixed[b]:
            continue
        row_lambda[r] *= scale[_root(parent, b)]
    return islands


@kernel
def guard_lifted_groups(count, body_fixed, joint_count, joint_active, joint_body, joint_motor_mode, joint_soft,
                        body_mass, body_orientation, body_inertia_local, gravity, body_force, body_torque, dt, x0,
                        v_lin0, w_body0, lifted, body_position, v_lin, v_ang):
    """The energy guard of the projections' lift, per jointed group (bodies joined by active joints,
    a lone body its own group): a group with a body the step's projections moved (``lifted[i]``)
    ends the step with at most the kinetic energy that the work of the applied forces along the way its
    bodies actually went pays for,

        KE(v) - KE(v0) <= W = sum_i (m_i g + f_i) . (x_i - x0_i) + dt tau_i . w_i,

    pgs's rule (``dynamics.integrate.guard_pushed_bodies``) summed over the group, but with W < 0 kept:
    a lift is paid from the group's kinetic energy. ``x0``, ``v_lin0``, ``w_body0``: the step's start
    (``dynamics.integrate.pushed_start``: angular velocity in the body frame, so the step's turn does not
    enter the comparison). With dv = v - v0 and da = R^T w - w_body0, KE(s) = KE(v0) + s B + s^2 A along
    v0 + s dv (A = KE(dv, da) >= 0, B = m v0 . dv + w_body0^T I da, sums over the group); where
    KE(1) - KE(v0) > W the group keeps v0 + s dv (body-frame w_body0 + s da) with
    s = (-B + sqrt(B^2 + 4 A W)) / 2A, the largest s in [0, 1] with A s^2 + B s <= W; where no s >= 0
    reaches it (W < 0 below the segment's least energy) the group keeps k v0, k^2 = max(0, KE(v0) + W) /
    KE(v0). One s (and k) per group: a blend or a scaling of motions that keep the group's joints keeps
    them to first order. Why W < 0 is kept: the group of ``jointed_jams`` whose members overlap each other
    2 m deep levitated at 4 m on its own contacts, falling a little in position and being lifted back each
    step; with the gain clamped at 0 per step its fall speed still ratcheted up over the steps (72 kJ
    beyond the fuzz's bound after 25 steps). A group with a motor or a soft (spring) joint is left alone:
    their work is not in W. Returns the number of groups scaled."""
    parent = np.empty(count, dtype=np.int64)
    driven = np.zeros(count, dtype=np.bool_)
    for i in range(count):
        parent[i] = i
    for j in range(joint_count):
        if not joint_active[j]:
            continue
        ba = joint_body[j, 0]
        bb = joint_body[j, 1]
        if ba >= 0 and bb >= 0 and not body_fixed[ba] and not body_fixed[bb]:
            _join(parent, ba, bb)
    for j in range(joint_count):
        if not joint_active[j] or (joint_motor_mode[j] == MOTOR_NONE and joint_soft[j, 0] <= 0.0):
            continue
        for side in range(2):
            b = joint_body[j, side]
            if b >= 0 and not body_fixed[b]:
                driven[_root(parent, b)] = True
    quad = np.zeros(count)
    lin = np.zeros(count)
    work = np.zeros(count)
    ke0 = np.zeros(count)
    moved = np.zeros(count, dtype=np.bool_)
    da = np.zeros((count, 3))
    for i in range(count):
        if body_fixed[i]:
            continue
        root = _root(parent, i)
        if lifted[i]:
            moved[root] = True
        m = body_mass[i]
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = quat_rotation(
            body_orientation[i, 0], body_orientation[i, 1], body_orientation[i, 2], body_orientation[i, 3])
        wx = v_ang[i, 0]
        wy = v_ang[i, 1]
        wz = v_ang[i, 2]
        a0 = r00 * wx + r10 * wy + r20 * wz - w_body0[i, 0]
        a1 = r01 * wx + r11 * wy + r21 * wz - w_body0[i, 1]
        a2 = r02 * wx + r12 * wy + r22 * wz - w_body0[i, 2]
        da[i, 0] = a0
        da[i, 1] = a1
        da[i, 2] = a2
        u0 = v_lin[i, 0] - v_lin0[i, 0]
        u1 = v_lin[i, 1] - v_lin0[i, 1]
        u2 = v_lin[i, 2] - v_lin0[i, 2]
        I = body_inertia_local
        ia0 = I[i, 0, 0] * a0 + I[i, 0, 1] * a1 + I[i, 0, 2] * a2
        ia1 = I[i, 1, 0] * a0 + I[i, 1, 1] * a1 + I[i, 1, 2] * a2
        ia2 = I[i, 2, 0] * a0 + I[i, 2, 1] * a1 + I[i, 2, 2] * a2
        quad[root] += 0.5 * (m * (u0 * u0 + u1 * u1 + u2 * u2) + a0 * ia0 + a1 * ia1 + a2 * ia2)
        e0 = w_body0[i, 0]
        e1 = w_body0[i, 1]
        e2 = w_body0[i, 2]
        ke0[root] += 0.5 * (m * (v_lin0[i, 0] ** 2 + v_lin0[i, 1] ** 2 + v_lin0[i, 2] ** 2)
                            + e0 * (I[i, 0, 0] * e0 + I[i, 0, 1] * e1 + I[i, 0, 2] * e2)
                            + e1 * (I[i, 1, 0] * e0 + I[i, 1, 1] * e1 + I[i, 1, 2] * e2)
                            + e2 * (I[i, 2, 0] * e0 + I[i, 2, 1] * e1 + I[i, 2, 2] * e2))
        lin[root] += (m * (v_lin0[i, 0] * u0 + v_lin0[i, 1] * u1 + v_lin0[i, 2] * u2)
                      + w_body0[i, 0] * ia0 + w_body0[i, 1] * ia1 + w_body0[i, 2] * ia2)
        w = dt * (body_torque[i, 0] * wx + body_torque[i, 1] * wy + body_torque[i, 2] * wz)
        for c in range(3):
            w += (m * gravity[c] + body_force[i, c]) * (body_position[i, c] - x0[i, c])
        work[root] += w
    scale = np.ones(count)
    shrink = np.ones(count)
    groups = 0
    for i in range(count):
        if body_fixed[i] or parent[i] != i or not moved[i] or driven[i]:
            continue
        A = quad[i]
        B = lin[i]
        W = work[i]
        if not A > 0.0 or A + B <= W:
            continue
        disc = B * B + 4.0 * A * W
        root_s = (-B + math.sqrt(disc)) / (2.0 * A) if disc >= 0.0 else -1.0
        if root_s >= 0.0:
            scale[i] = min(root_s, 1.0)
        else:
            scale[i] = 0.0
            shrink[i] = math.sqrt(max(ke0[i] + W, 0.0) / ke0[i]) if ke0[i] > 0.0 else 0.0
        groups += 1
    if groups == 0:
        return 0
    for i in range(count):
        if body_fixed[i]:
            continue
        root = _root(parent, i)
        s = scale[root]
        k = shrink[root]
        if s == 1.0:
            continue
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = quat_rotation(
            body_orientation[i, 0], body_orientation[i, 1], body_orientation[i, 2], body_orientation[i, 3])
        c0 = k * w_body0[i, 0] + s * da[i, 0]
        c1 = k * w_body0[i, 1] + s * da[i, 1]
        c2 = k * w_body0[i, 2] + s * da[i, 2]
        v_ang[i, 0] = r00 * c0 + r01 * c1 + r02 * c2
        v_ang[i, 1] = r10 * c0 + r11 * c1 + r12 * c2
        v_ang[i, 2] = r20 * c0 + r21 * c1 + r22 * c2
        for c in range(3):
            v_lin[i, c] = k * v_lin0[i, c] + s * (v_lin[i, c] - v_lin0[i, c])
    return groups


#: [m] a body the step's contact corrections (the layers', the final one) moved less than this does not put
#: its group under ``guard_lifted_groups``: resting contacts' corrections are micrometres and their
#: rounding-level energy changes stay untouched (with every group guarded, breakable_wall's resting wall of
#: fixed joints changed within 12 steps); the lifts of the jams it is for were 0.1-0.2 m a step. The same
#: figure as ``solver.UNDONE_MIN_MOVE`` (other values not measured)
LIFT_MIN_MOVE = 1e-3


def guard_start(core):
    """What ``guard_lifted`` measures the step from: (x0, v_lin0, w_body0) of every body at the step's
    start (``dynamics.integrate.pushed_start``); None with ``ShockSettings.lifted_energy_guard`` off or
    without joints (a lone body lifted out of an overlap: ``settle_pushed_contacts`` and the fuzz's
    single-body worlds hold it) or without a contact at the step's start (speculative: a landing this step
    is among them; chain50, hung in the air, pays nothing for the guard)."""
    if not core.settings.lifted_energy_guard or not core.joint_layout.row_total or not core.contacts.count:
        return None
    b = core.bodies
    n = b.count
    x0 = np.zeros((n, 3))      # fixed bodies' rows stay 0 (pushed_start skips them)
    v0 = np.zeros((n, 3))
    w0 = np.zeros((n, 3))
    pushed_start(n, b.body_fixed, b.body_position, b.body_orientation, b.body_linear_velocity,
                 b.body_angular_velocity, x0, v0, w0)
    return x0, v0, w0, np.empty((n, 3)), np.zeros(n, dtype=np.bool_)


def guard_solved(core, start, h) -> None:
    """After the whole-system solve: the flow it gives over its ``h`` = a dt (x0 + h v_a) kept in ``start``
    (nothing when None), the base of ``guard_flowed``."""
    if start is not None:
        n = start[3].shape[0]
        np.add(start[0], h * core.bodies.body_linear_velocity[:n], out=start[3])


def guard_flowed(core, start, h) -> None:
    """After the layers and the step's displacement (before the joint projections and the final
    correction): the bodies the layers' corrections moved more than ``LIFT_MIN_MOVE`` off their velocity
    flow x0 + a dt v_a + (1 - a) dt v (``h`` = (1 - a) dt; the layers leave a body's velocity as its own
    layer's dynamics set it, which its flow used) marked in ``start`` (nothing when None)."""
    if start is None:
        return
    b = core.bodies
    n = start[3].shape[0]
    flow = start[3] + h * b.body_linear_velocity[:n]
    start[4][:] = np.sqrt(((b.body_position[:n] - flow) ** 2).sum(axis=1)) > LIFT_MIN_MOVE


def guard_lifted(core, dt, start, disp_lin) -> int:
    """``guard_lifted_groups`` over the step that began at ``start`` (``guard_start``; nothing when None),
    the groups of the bodies that the layers' corrections (``guard_flowed``) or the final correction
    (``disp_lin``: its linear displacement; None when it did not run) moved by more than
    ``LIFT_MIN_MOVE``. The joint projections' moves do not count: chain50 (no contact) had its energy
    scaled in 60 of 305 steps when they did."""
    if start is None:
        return 0
    b, js = core.bodies, core.joint_store
    x0, v0, w0, _, lifted = start
    n = lifted.shape[0]
    if disp_lin is not None:
        lifted |= np.sqrt((disp_lin[:n] ** 2).sum(axis=1)) > LIFT_MIN_MOVE
    if not lifted.any():
        return 0
    return int(guard_lifted_groups(b.count, b.body_fixed, js.count, js.joint_active, js.joint_body,
                                   js.joint_motor_mode, js.joint_soft, b.body_mass,
                                   b.body_orientation, b.body_inertia_local, np.asarray(core.gravity, dtype=np.float64),
                                   b.body_force, b.body_torque, dt, x0, v0, w0, lifted, b.body_position,
                                   b.body_linear_velocity, b.body_angular_velocity))


def guard_warm(core, rows, lam=None) -> int:
    """``guard_warm_start`` on the first ``rows`` rows of the core's row store, before the velocity solve
    applies their impulses (``ShockSettings.warm_start_energy_guard``): the whole-system solve's
    (``row_lambda``) or, given ``lam``, the layers' (``ShockSolver._propagate``: the joint rows start from
    their cached layer impulses; measured without the layers' fixation). Why the layers' too: a group of
    ``jointed_jams`` (a 2.8e-5 kg link ball-jointed between two boxes jammed in each other) gained 6e7 ..
    2e13 J in the layers a step from its joint rows' layer warm start once the other guards held the rest."""
    s = core.settings
    if not s.warm_start_energy_guard or not s.warm_start or not rows or not core.joint_row_offset:
        return 0      # (joint_row_offset: the contact rows; an island without one is not guarded)
    b, r = core.bodies, core.rows
    return int(guard_warm_start(rows, r.row_body, r.row_B, r.row_kind, r.row_cfm,
                                r.row_lambda if lam is None else lam, b.count,
                                b.body_fixed, b.body_mass, b.body_orientation, b.body_inertia_local,
                                b.body_linear_velocity, b.body_angular_velocity))
