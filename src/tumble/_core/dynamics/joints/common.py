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

How the rows are written (issue 19): a joint's rows are rebuilt in every pgs substep (13 times a
step), so the writing is two passes over plain scalars and the row store, with no helper that takes
many arrays. The geometry of each joint type (its modules) gives per row the Jacobian (``put_linear``,
``put_angular``: J and the row's bodies) and the row's position value (the error C, a limit's gap or
the motor's coordinate, parked in ``row_bias``) with its kind (``row_kind``); ``finish_row`` then
computes B = M^-1 J^T and 1 / (J B) from J and turns the value into the target (``equality_target``,
``limit_target``, ``motor_target``). The helpers before issue 19 took 12-45 arrays each and were
called per row (the Numba calls reference and release every array argument; calls of 30 or more
arguments cannot be inlined): 82 us per rebuild of chain50's 50 joints, 1.6 us a joint. The
arithmetic is the same operation for operation, so the results are the same bit for bit.
"""

from __future__ import annotations

import math

from tumble._core import types as T
from tumble._core.config import kernel
from tumble._core.rows import write_pair_jacobian


@kernel(inline="always")
def rotate(q0, q1, q2, q3, v0, v1, v2):
    """R(q) v for a unit quaternion q = (w, x, y, z) as three scalars: t = 2 q_vec x v,
    R v = v + w t + q_vec x t."""
    tx = 2.0 * (q2 * v2 - q3 * v1)
    ty = 2.0 * (q3 * v0 - q1 * v2)
    tz = 2.0 * (q1 * v1 - q2 * v0)
    return (v0 + q0 * tx + (q2 * tz - q3 * ty), v1 + q0 * ty + (q3 * tx - q1 * tz),
            v2 + q0 * tz + (q1 * ty - q2 * tx))


@kernel(inline="always")
def side_frame(j, side, joint_body, joint_anchor, joint_axis, joint_ref, body_position, body_orientation):
    """World frame of one side of joint j as 16 scalars: its orientation q (4), the anchor point p [m]
    (3), the lever r = p - x from the centre of mass (3), the axis (3) and the reference direction
    (3). The world side (body -1) has the identity orientation and its anchor and axis stored in
    world coordinates."""
    body = joint_body[j, side]
    if body < 0:
        return (1.0, 0.0, 0.0, 0.0,
                joint_anchor[j, side, 0], joint_anchor[j, side, 1], joint_anchor[j, side, 2],
                0.0, 0.0, 0.0,
                joint_axis[j, side, 0], joint_axis[j, side, 1], joint_axis[j, side, 2],
                joint_ref[j, side, 0], joint_ref[j, side, 1], joint_ref[j, side, 2])
    q0 = body_orientation[body, 0]
    q1 = body_orientation[body, 1]
    q2 = body_orientation[body, 2]
    q3 = body_orientation[body, 3]
    r0, r1, r2 = rotate(q0, q1, q2, q3, joint_anchor[j, side, 0], joint_anchor[j, side, 1], joint_anchor[j, side, 2])
    a0, a1, a2 = rotate(q0, q1, q2, q3, joint_axis[j, side, 0], joint_axis[j, side, 1], joint_axis[j, side, 2])
    f0, f1, f2 = rotate(q0, q1, q2, q3, joint_ref[j, side, 0], joint_ref[j, side, 1], joint_ref[j, side, 2])
    return (q0, q1, q2, q3,
            body_position[body, 0] + r0, body_position[body, 1] + r1, body_position[body, 2] + r2,
            r0, r1, r2, a0, a1, a2, f0, f1, f2)


@kernel(inline="always")
def solver_body(j, side, joint_body, body_fixed):
    """The row's body index for side ``side``: -1 for the world and for fixed bodies."""
    b = joint_body[j, side]
    if b < 0 or body_fixed[b]:
        return -1
    return b


@kernel(inline="always")
def put_linear(r, ia, ib, d0, d1, d2, ra0, ra1, ra2, rb0, rb1, rb2, kind, value, row_body, row_J, row_kind,
               row_bias):
    """Row r: the linear row along d through a + r_a and b + r_b, J = [-d, -(r_a x d), d, r_b x d]
    (contact.rows.fill_row's J), of ``kind`` (T.ROW_JOINT, ROW_LIMIT, ROW_MOTOR) with the position
    ``value`` parked in ``row_bias`` for ``finish_row``."""
    write_pair_jacobian(r, ia, ib, d0, d1, d2, ra0, ra1, ra2, rb0, rb1, rb2, row_body, row_J)
    row_kind[r] = kind
    row_bias[r] = value


@kernel(inline="always")
def put_angular(r, ia, ib, t0, t1, t2, kind, value, row_body, row_J, row_kind, row_bias):
    """Row r: the angular row about t, J = [0, -t, 0, t]; ``kind`` and ``value`` as ``put_linear``."""
    row_body[r, 0] = ia
    row_body[r, 1] = ib
    row_J[r, 0, 0] = 0.0
    row_J[r, 0, 1] = 0.0
    row_J[r, 0, 2] = 0.0
    row_J[r, 1, 0] = 0.0
    row_J[r, 1, 1] = 0.0
    row_J[r, 1, 2] = 0.0
    row_J[r, 0, 3] = -t0
    row_J[r, 0, 4] = -t1
    row_J[r, 0, 5] = -t2
    row_J[r, 1, 3] = t0
    row_J[r, 1, 4] = t1
    row_J[r, 1, 5] = t2
    row_kind[r] = kind
    row_bias[r] = value


@kernel(inline="always")
def soft_coefficients(frequency, damping_ratio, h, inv_diag):
    """(beta' / h [1/s], gamma) of a spring of natural frequency ``frequency`` [Hz] and damping
    ratio ``damping_ratio`` along a row whose 1 / (J M^-1 J^T) is ``inv_diag`` (module docstring)."""
    omega = 2.0 * math.pi * frequency
    denom = h * omega * (2.0 * damping_ratio + h * omega)
    if inv_diag <= 0.0 or denom <= 0.0:
        return 0.0, 0.0
    return omega / (2.0 * damping_ratio + h * omega), 1.0 / (inv_diag * denom)


@kernel(inline="always")
def equality_target(error, beta, max_speed, frequency, damping_ratio, h, inv_diag):
    """(zeta, gamma) of an equality row with position error C = ``error``: with frequency 0 the row
    is rigid with Baumgarte feedback zeta = -beta C; otherwise a soft row (``soft_coefficients``);
    zeta capped at +-``max_speed``. Its relax target is 0 and its impulse unbounded."""
    gamma = 0.0
    if frequency > 0.0:
        k, gamma = soft_coefficients(frequency, damping_ratio, h, inv_diag)
        target = -k * error
    else:
        target = -beta * error
    if target > max_speed:
        target = max_speed
    elif target < -max_speed:
        target = -max_speed
    return target, gamma


@kernel(inline="always")
def limit_target(gap, dt, beta, max_speed):
    """(zeta, relax zeta) of a one-sided limit row, C = ``gap`` >= 0 wanted (001 §3.5: bounds (0, inf)).

    Inside the limit (gap > 0) the row is speculative, like a contact inside the margin: the joint may
    approach the limit by the gap in this step, no more (zeta = -gap / dt), so a fast joint stops at
    its limit instead of passing it. Past the limit the error is fed back (zeta = -beta gap)."""
    if gap > 0.0:
        target = -gap / dt
        return target, target
    return min(-beta * gap, max_speed), 0.0


@kernel(inline="always")
def motor_target(coord, dt, mode, speed, position, frequency, damping_ratio, inv_diag):
    """(zeta, gamma) of a motor row on the joint coordinate ``coord`` (001 §3.6: a bias row whose
    impulse is bounded by max_force dt). Velocity motor: zeta = speed. Position servo: the soft row
    zeta = speed - (beta'/h) (coord - position) with gamma of ``soft_coefficients``."""
    target = speed
    gamma = 0.0
    if mode == T.MOTOR_POSITION:
        k, gamma = soft_coefficients(frequency, damping_ratio, dt, inv_diag)
        target = speed - k * (coord - position)
    return target, gamma


@kernel(inline="always")
def rotation_error(qa0, qa1, qa2, qa3, qb0, qb1, qb2, qb3, rel0, rel1, rel2, rel3):
    """World rotation vector of q_b (q_a rel)^-1 (three scalars) -- zero when the bodies keep the
    relative orientation ``rel`` = q_a0^-1 q_b0 they had at creation; its rate is w_b - w_a (small
    errors)."""
    # qt = qa * rel
    tw = qa0 * rel0 - qa1 * rel1 - qa2 * rel2 - qa3 * rel3
    tx = qa0 * rel1 + qa1 * rel0 + qa2 * rel3 - qa3 * rel2
    ty = qa0 * rel2 - qa1 * rel3 + qa2 * rel0 + qa3 * rel1
    tz = qa0 * rel3 + qa1 * rel2 - qa2 * rel1 + qa3 * rel0
    # e = qb * conj(qt)
    ew = qb0 * tw + qb1 * tx + qb2 * ty + qb3 * tz
    ex = -qb0 * tx + qb1 * tw - qb2 * tz + qb3 * ty
    ey = -qb0 * ty + qb1 * tz + qb2 * tw - qb3 * tx
    ez = -qb0 * tz - qb1 * ty + qb2 * tx + qb3 * tw
    if ew < 0.0:
        ew = -ew
        ex = -ex
        ey = -ey
        ez = -ez
    s = math.sqrt(ex * ex + ey * ey + ez * ez)
    if s < 1e-12:
        return 2.0 * ex, 2.0 * ey, 2.0 * ez
    angle = 2.0 * math.atan2(s, ew)
    f = angle / s
    return f * ex, f * ey, f * ez


@kernel(inline="always")
def put_angular_lock(r, ia, ib, qa0, qa1, qa2, qa3, qb0, qb1, qb2, qb3, rel0, rel1, rel2, rel3, row_body, row_J,
                     row_kind, row_bias):
    """Rows r..r+2: three angular rows about the world axes that keep the relative orientation
    (slider, weld), C = the rotation vector of ``rotation_error``. Returns r + 3."""
    e0, e1, e2 = rotation_error(qa0, qa1, qa2, qa3, qb0, qb1, qb2, qb3, rel0, rel1, rel2, rel3)
    put_angular(r, ia, ib, 1.0, 0.0, 0.0, T.ROW_JOINT, e0, row_body, row_J, row_kind, row_bias)
    put_angular(r + 1, ia, ib, 0.0, 1.0, 0.0, T.ROW_JOINT, e1, row_body, row_J, row_kind, row_bias)
    put_angular(r + 2, ia, ib, 0.0, 0.0, 1.0, T.ROW_JOINT, e2, row_body, row_J, row_kind, row_bias)
    return r + 3
