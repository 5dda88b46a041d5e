"""What every joint type shares: world frames of the anchors and axes, the two row shapes, and the
row targets (Catto 001 §3.4-3.6).

A joint row is a pairwise row of the common layout (contact.rows): J = [J_a (6), J_b (6)] with
Jmap (a, b), bounds lo/hi on the impulse, a velocity target zeta (001 eq. 15: J v = zeta), and for a
soft row its own constraint force mixing gamma. Two row shapes cover every joint type:

  linear row along d through points p_a = x_a + r_a, p_b = x_b + r_b:
      J = [-d^T, -(r_a x d)^T, d^T, (r_b x d)^T]                          (001 eq. 11 and 18)
  angular row about t:
      J = [0, -t^T, 0, t^T]                 J v = t . (w_b - w_a)

Position-error feedback (001 eq. 20, Baumgarte) sets the target of an equality row with error C to
zeta = -beta C, beta = ``baumgarte`` / dt (the fraction of the error removed per step), at most
``max_speed`` in magnitude; the relax pass (Box2D v3's relax stage) aims at zeta = 0 instead.

A soft row (position servo, distance spring) is a spring k and damper c acting along the row,
written as a regularised constraint (Catto, "Soft Constraints", GDC 2011): with h the step,
omega = 2 pi f and the row's effective mass m = 1 / (J M^-1 J^T), k = m omega^2 and c = 2 m zeta omega,

  J v + gamma lambda = -(beta'/h) C,   gamma = 1 / (h (c + h k)),   beta'/h = k / (c + h k),

so  beta'/h = omega / (2 zeta + h omega)  and  gamma = (J M^-1 J^T) / (h omega (2 zeta + h omega)):
the spring's frequency does not depend on the bodies' masses.
"""

from __future__ import annotations

import math

from tumble._core import types as T
from tumble._core.config import kernel
from tumble._core.contact.rows import fill_row


@kernel
def quat_rotate(q, v, out):
    """out = R(q) v for a unit quaternion q = (w, x, y, z)."""
    w = q[0]
    x = q[1]
    y = q[2]
    z = q[3]
    # t = 2 q_vec x v;  out = v + w t + q_vec x t
    tx = 2.0 * (y * v[2] - z * v[1])
    ty = 2.0 * (z * v[0] - x * v[2])
    tz = 2.0 * (x * v[1] - y * v[0])
    out[0] = v[0] + w * tx + (y * tz - z * ty)
    out[1] = v[1] + w * ty + (z * tx - x * tz)
    out[2] = v[2] + w * tz + (x * ty - y * tx)


@kernel
def side_frame(j, side, joint_body, joint_anchor, joint_axis, joint_ref, body_position, body_orientation,
               q, p, r, ax, ref):
    """World frame of one side of joint j: q its orientation, p the anchor point [m], r = p - x the
    lever from the centre of mass, ax the axis and ref the reference direction. The world side
    (body -1) has the identity orientation and its anchor and axis stored in world coordinates."""
    body = joint_body[j, side]
    if body < 0:
        q[0] = 1.0
        q[1] = 0.0
        q[2] = 0.0
        q[3] = 0.0
        for k in range(3):
            r[k] = 0.0
            p[k] = joint_anchor[j, side, k]
            ax[k] = joint_axis[j, side, k]
            ref[k] = joint_ref[j, side, k]
        return
    for k in range(4):
        q[k] = body_orientation[body, k]
    quat_rotate(q, joint_anchor[j, side], r)
    quat_rotate(q, joint_axis[j, side], ax)
    quat_rotate(q, joint_ref[j, side], ref)
    for k in range(3):
        p[k] = body_position[body, k] + r[k]


@kernel
def solver_body(j, side, joint_body, body_fixed):
    """The row's body index for side ``side``: -1 for the world and for fixed bodies."""
    b = joint_body[j, side]
    if b < 0 or body_fixed[b]:
        return -1
    return b


@kernel
def fill_angular_row(r, ia, ib, t, body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag):
    """J = [0, -t, 0, t] (an angular row), B = M^-1 J^T and 1 / (J B)."""
    row_body[r, 0] = ia
    row_body[r, 1] = ib
    for k in range(3):
        row_J[r, 0, k] = 0.0
        row_J[r, 1, k] = 0.0
        row_J[r, 0, 3 + k] = -t[k]
        row_J[r, 1, 3 + k] = t[k]
    diag = 0.0
    for s in range(2):
        body = ia if s == 0 else ib
        for k in range(3):
            row_B[r, s, k] = 0.0
        if body < 0:
            for k in range(3):
                row_B[r, s, 3 + k] = 0.0
            continue
        Ii = body_inv_inertia_world[body]
        for k in range(3):
            row_B[r, s, 3 + k] = Ii[k, 0] * row_J[r, s, 3] + Ii[k, 1] * row_J[r, s, 4] + Ii[k, 2] * row_J[r, s, 5]
        for k in range(3, 6):
            diag += row_J[r, s, k] * row_B[r, s, k]
    row_inv_diag[r] = 1.0 / diag if diag > 1e-300 else 0.0


@kernel
def linear_row(r, ia, ib, d, ra, rb, body_inv_mass, body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag):
    """A linear row along d through a + ra and b + rb (contact.rows.fill_row)."""
    fill_row(r, ia, ib, d, ra, rb, body_inv_mass, body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag)


@kernel
def set_equality(r, j, slot, error, jp, warm, joint_impulse, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi,
                 row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm):
    """Targets of an equality row with position error C = ``error``, relax target 0, unbounded
    impulse, warm-started from slot ``slot``. ``jp`` = (beta [1/s], max_speed [m/s], frequency [Hz],
    damping ratio, dt [s]): with frequency 0 the row is rigid with Baumgarte feedback zeta = -beta C
    (capped at max_speed); otherwise it is a soft row (``soft_coefficients``)."""
    max_speed = jp[1]
    gamma = 0.0
    if jp[2] > 0.0:
        k, gamma = soft_coefficients(jp[2], jp[3], jp[4], row_inv_diag[r])
        target = -k * error
    else:
        target = -jp[0] * error
    if target > max_speed:
        target = max_speed
    elif target < -max_speed:
        target = -max_speed
    row_bias[r] = target
    row_bias_relax[r] = 0.0
    row_lo[r] = -math.inf
    row_hi[r] = math.inf
    row_link[r] = -1
    row_mu[r] = 0.0
    row_kind[r] = T.ROW_JOINT
    row_owner[r] = j
    row_cfm[r] = gamma
    row_lambda[r] = joint_impulse[j, slot] if warm else 0.0


@kernel
def set_limit(r, j, slot, gap, dt, jp, warm, joint_impulse, row_bias, row_bias_relax, row_lo, row_hi,
              row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm):
    """Targets of a one-sided limit row, C = ``gap`` >= 0 wanted (001 §3.5: bounds (0, inf)).

    Inside the limit (gap > 0) the row is speculative, like a contact inside the margin: the joint may
    approach the limit by the gap in this step, no more (zeta = -gap / dt), so a fast joint stops at
    its limit instead of passing it. Past the limit the error is fed back (zeta = -beta gap)."""
    if gap > 0.0:
        target = -gap / dt
        relax = target
    else:
        target = min(-jp[0] * gap, jp[1])
        relax = 0.0
    row_bias[r] = target
    row_bias_relax[r] = relax
    row_lo[r] = 0.0
    row_hi[r] = math.inf
    row_link[r] = -1
    row_mu[r] = 0.0
    row_kind[r] = T.ROW_LIMIT
    row_owner[r] = j
    row_cfm[r] = 0.0
    row_lambda[r] = joint_impulse[j, slot] if warm else 0.0


@kernel
def soft_coefficients(frequency, damping_ratio, h, inv_diag):
    """(beta' / h [1/s], gamma) of a spring of natural frequency ``frequency`` [Hz] and damping
    ratio ``damping_ratio`` along a row whose 1 / (J M^-1 J^T) is ``inv_diag`` (module docstring)."""
    omega = 2.0 * math.pi * frequency
    denom = h * omega * (2.0 * damping_ratio + h * omega)
    if inv_diag <= 0.0 or denom <= 0.0:
        return 0.0, 0.0
    return omega / (2.0 * damping_ratio + h * omega), 1.0 / (inv_diag * denom)


@kernel
def set_motor(r, j, slot, coord, dt, joint_motor_mode, joint_motor, warm, joint_impulse, row_inv_diag, row_bias,
              row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm):
    """Targets of a motor row on the joint coordinate ``coord`` (001 §3.6: a bias row whose
    impulse is bounded by max_force dt). Velocity motor: zeta = speed. Position servo: the soft row
    zeta = speed - (beta'/h) (coord - target) with gamma of ``soft_coefficients``."""
    speed = joint_motor[j, 0]
    bound = joint_motor[j, 2] * dt
    target = speed
    gamma = 0.0
    if joint_motor_mode[j] == T.MOTOR_POSITION:
        k, gamma = soft_coefficients(joint_motor[j, 3], joint_motor[j, 4], dt, row_inv_diag[r])
        target = speed - k * (coord - joint_motor[j, 1])
    row_bias[r] = target
    row_bias_relax[r] = target
    row_lo[r] = -bound
    row_hi[r] = bound
    row_link[r] = -1
    row_mu[r] = 0.0
    row_kind[r] = T.ROW_MOTOR
    row_owner[r] = j
    row_cfm[r] = gamma
    row_lambda[r] = joint_impulse[j, slot] if warm else 0.0


@kernel
def rotation_error(qa, qb, rel, out):
    """World rotation vector of q_b (q_a rel)^-1 -- zero when the bodies keep the relative
    orientation ``rel`` = q_a0^-1 q_b0 they had at creation; its rate is w_b - w_a (small errors)."""
    # qt = qa * rel
    tw = qa[0] * rel[0] - qa[1] * rel[1] - qa[2] * rel[2] - qa[3] * rel[3]
    tx = qa[0] * rel[1] + qa[1] * rel[0] + qa[2] * rel[3] - qa[3] * rel[2]
    ty = qa[0] * rel[2] - qa[1] * rel[3] + qa[2] * rel[0] + qa[3] * rel[1]
    tz = qa[0] * rel[3] + qa[1] * rel[2] - qa[2] * rel[1] + qa[3] * rel[0]
    # e = qb * conj(qt)
    ew = qb[0] * tw + qb[1] * tx + qb[2] * ty + qb[3] * tz
    ex = -qb[0] * tx + qb[1] * tw - qb[2] * tz + qb[3] * ty
    ey = -qb[0] * ty + qb[1] * tz + qb[2] * tw - qb[3] * tx
    ez = -qb[0] * tz - qb[1] * ty + qb[2] * tx + qb[3] * tw
    if ew < 0.0:
        ew = -ew
        ex = -ex
        ey = -ey
        ez = -ez
    s = math.sqrt(ex * ex + ey * ey + ez * ez)
    if s < 1e-12:
        out[0] = 2.0 * ex
        out[1] = 2.0 * ey
        out[2] = 2.0 * ez
        return
    angle = 2.0 * math.atan2(s, ew)
    f = angle / s
    out[0] = f * ex
    out[1] = f * ey
    out[2] = f * ez


@kernel
def angular_lock_rows(r, j, slot, ia, ib, qa, qb, rel, jp, warm, body_inv_inertia_world,
                      joint_impulse, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi,
                      row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, err, t):
    """Three angular rows about the world axes that keep the relative orientation (slider, weld):
    C = the rotation vector of ``rotation_error``. Returns the next free row."""
    rotation_error(qa, qb, rel, err)
    for k in range(3):
        for c in range(3):
            t[c] = 0.0
        t[k] = 1.0
        fill_angular_row(r + k, ia, ib, t, body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag)
        set_equality(r + k, j, slot + k, err[k], jp, warm, joint_impulse, row_inv_diag, row_bias, row_bias_relax,
                     row_lo, row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm)
    return r + 3
