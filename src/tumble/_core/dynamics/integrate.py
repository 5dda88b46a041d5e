"""Time integration: semi-implicit (symplectic) Euler, Catto 001 eq. 33, 36-37.

velocity:  v2 = v1 + dt (g + f / m);  w2 = w1 + dt I^-1 (tau - w x I w)  (gyroscopic term implicit)
position:  x2 = x1 + dt v2;  q2 = q1 + dt/2 [0, w2] * q1, then renormalised.

Angular velocity is stored in the world frame, so the quaternion rate is q' = 1/2 [0, w] q (the
world-frame form of 001 eq. 2/37, which writes the body-frame product q [0, w_body]).
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core.config import kernel
from tumble._core.math3d import quat_to_matrix


@kernel
def update_body_frames(body_orientation, body_inv_inertia_local, body_inv_inertia_world, count):
    """I^-1_world = R I^-1_body R^T for every body (Catto 001 §5)."""
    R = np.empty((3, 3))
    for i in range(count):
        quat_to_matrix(body_orientation[i], R)
        Il = body_inv_inertia_local[i]
        for r in range(3):
            for c in range(3):
                s = 0.0
                for k in range(3):
                    for m in range(3):
                        s += R[r, k] * Il[k, m] * R[c, m]
                body_inv_inertia_world[i, r, c] = s


@kernel(inline="always")
def _solve3(A, b, out):
    """out = A^-1 b for a 3x3 A by Cramer's rule (A is I + dt(...) here, well conditioned)."""
    c00 = A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]
    c01 = A[1, 2] * A[2, 0] - A[1, 0] * A[2, 2]
    c02 = A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]
    det = A[0, 0] * c00 + A[0, 1] * c01 + A[0, 2] * c02
    inv = 1.0 / det
    c10 = A[0, 2] * A[2, 1] - A[0, 1] * A[2, 2]
    c11 = A[0, 0] * A[2, 2] - A[0, 2] * A[2, 0]
    c12 = A[0, 1] * A[2, 0] - A[0, 0] * A[2, 1]
    c20 = A[0, 1] * A[1, 2] - A[0, 2] * A[1, 1]
    c21 = A[0, 2] * A[1, 0] - A[0, 0] * A[1, 2]
    c22 = A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]
    out[0] = (c00 * b[0] + c10 * b[1] + c20 * b[2]) * inv
    out[1] = (c01 * b[0] + c11 * b[1] + c21 * b[2]) * inv
    out[2] = (c02 * b[0] + c12 * b[1] + c22 * b[2]) * inv


@kernel
def integrate_velocities(body_linear_velocity, body_angular_velocity, body_orientation, body_inv_mass,
                         body_inertia_local, body_inv_inertia_world, body_force, body_torque, body_fixed,
                         count, gravity, dt, gyroscopic, linear_damping, angular_damping):
    """v += dt (g + f/m); w += dt I^-1 tau, then the gyroscopic term w x I w.

    The gyroscopic term is integrated implicitly in the body frame with one Newton step
    (Catto, "Numerical methods", GDC 2015): solve f(w) = I (w - w0) + dt w x I w = 0 with
    Jacobian J = I + dt (skew(w0) I - skew(I w0)). The explicit form gains energy for bodies
    spinning near their intermediate axis; the implicit one dissipates slightly and stays bounded.
    Damping (1/s, default 0) multiplies velocities by 1 / (1 + dt c) (Box2D's Pade form).
    """
    R = np.empty((3, 3))
    wb = np.empty(3)
    Iw = np.empty(3)
    f = np.empty(3)
    Jm = np.empty((3, 3))
    dw = np.empty(3)
    ld = 1.0 / (1.0 + dt * linear_damping)
    ad = 1.0 / (1.0 + dt * angular_damping)
    for i in range(count):
        if body_fixed[i]:
            continue
        im = body_inv_mass[i]
        for k in range(3):
            body_linear_velocity[i, k] = (body_linear_velocity[i, k] + dt * (gravity[k] + im * body_force[i, k])) * ld
        Iinv = body_inv_inertia_world[i]
        t0 = body_torque[i, 0]
        t1 = body_torque[i, 1]
        t2 = body_torque[i, 2]
        for k in range(3):
            body_angular_velocity[i, k] += dt * (Iinv[k, 0] * t0 + Iinv[k, 1] * t1 + Iinv[k, 2] * t2)
        if gyroscopic:
            quat_to_matrix(body_orientation[i], R)
            # body-frame angular velocity w_b = R^T w
            for k in range(3):
                wb[k] = R[0, k] * body_angular_velocity[i, 0] + R[1, k] * body_angular_velocity[i, 1] \
                    + R[2, k] * body_angular_velocity[i, 2]
            Ib = body_inertia_local[i]
            for k in range(3):
                Iw[k] = Ib[k, 0] * wb[0] + Ib[k, 1] * wb[1] + Ib[k, 2] * wb[2]
            # f(w0) = dt * (w0 x I w0)
            f[0] = dt * (wb[1] * Iw[2] - wb[2] * Iw[1])
            f[1] = dt * (wb[2] * Iw[0] - wb[0] * Iw[2])
            f[2] = dt * (wb[0] * Iw[1] - wb[1] * Iw[0])
            # J = I + dt (skew(w) I - skew(I w))
            for r in range(3):
                for c in range(3):
                    # (skew(w) I)[r, c] = sum_k skew(w)[r, k] I[k, c]
                    sw = 0.0
                    if r == 0:
                        sw = -wb[2] * Ib[1, c] + wb[1] * Ib[2, c]
                    elif r == 1:
                        sw = wb[2] * Ib[0, c] - wb[0] * Ib[2, c]
                    else:
                        sw = -wb[1] * Ib[0, c] + wb[0] * Ib[1, c]
                    sIw = 0.0
                    if r == 0:
                        sIw = (-Iw[2] if c == 1 else (Iw[1] if c == 2 else 0.0))
                    elif r == 1:
                        sIw = (Iw[2] if c == 0 else (-Iw[0] if c == 2 else 0.0))
                    else:
                        sIw = (-Iw[1] if c == 0 else (Iw[0] if c == 1 else 0.0))
                    Jm[r, c] = Ib[r, c] + dt * (sw - sIw)
            _solve3(Jm, f, dw)
            for k in range(3):
                wb[k] -= dw[k]
            for k in range(3):
                body_angular_velocity[i, k] = R[k, 0] * wb[0] + R[k, 1] * wb[1] + R[k, 2] * wb[2]
        for k in range(3):
            body_angular_velocity[i, k] *= ad


@kernel
def integrate_positions(body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                        body_fixed, count, dt):
    """x += dt v;  q += dt/2 [0, w] q;  q /= |q|  (Catto 001 eq. 36-37, world-frame w)."""
    for i in range(count):
        if body_fixed[i]:
            continue
        for k in range(3):
            body_position[i, k] += dt * body_linear_velocity[i, k]
        wx = body_angular_velocity[i, 0]
        wy = body_angular_velocity[i, 1]
        wz = body_angular_velocity[i, 2]
        qw = body_orientation[i, 0]
        qx = body_orientation[i, 1]
        qy = body_orientation[i, 2]
        qz = body_orientation[i, 3]
        h = 0.5 * dt
        nw = qw + h * (-wx * qx - wy * qy - wz * qz)
        nx = qx + h * (wx * qw + wy * qz - wz * qy)
        ny = qy + h * (-wx * qz + wy * qw + wz * qx)
        nz = qz + h * (wx * qy - wy * qx + wz * qw)
        sq = nw * nw + nx * nx + ny * ny + nz * nz
        if not (1e-250 < sq < 1e250):
            # a huge spin (|w| dt ~ 1e150): the squares overflow and 1/|q| would be 0, leaving a zero
            # quaternion that passes the non-finite check and divides by zero in the next geometry
            # update. Scale by the largest component first (exact direction); normal steps
            # (|q| ~ 1) never take this branch, so their results are unchanged bit for bit.
            big = max(max(abs(nw), abs(nx)), max(abs(ny), abs(nz)))
            if big > 0.0 and big < math.inf:
                nw /= big
                nx /= big
                ny /= big
                nz /= big
                sq = nw * nw + nx * nx + ny * ny + nz * nz
        inv = 1.0 / math.sqrt(sq)
        body_orientation[i, 0] = nw * inv
        body_orientation[i, 1] = nx * inv
        body_orientation[i, 2] = ny * inv
        body_orientation[i, 3] = nz * inv


#: [m, m/s, rad/s] beyond this a body's state counts as lost like a NaN (tumble.nonfinite.STATE_LIMIT
#: explains the figure); the comparison ``not |x| <= limit`` is also true for NaN
STATE_LIMIT = 1e100


@kernel
def first_nonfinite_body(body_position, body_orientation, body_linear_velocity, body_angular_velocity, count):
    """Index of the first body whose state is NaN, infinite or beyond ``STATE_LIMIT``, or whose
    quaternion is no rotation; -1 for none (the check behind World.on_nonfinite)."""
    for i in range(count):
        for k in range(3):
            if not (abs(body_position[i, k]) <= STATE_LIMIT and abs(body_linear_velocity[i, k]) <= STATE_LIMIT
                    and abs(body_angular_velocity[i, k]) <= STATE_LIMIT):
                return i
        q2 = 0.0
        for k in range(4):
            q2 += body_orientation[i, k] * body_orientation[i, k]
        if not (q2 > 0.5 and q2 < 2.0):    # a zero, NaN or overflowing quaternion is no orientation
            return i
    return -1


@kernel(inline="always")
def displace_body(i, disp_lin, disp_ang, body_position, body_orientation):
    """Body i: x += dx;  q <- exp(dtheta / 2) q  (exact rotation by the rotation vector dtheta,
    then renormalised)."""
    for c in range(3):
        body_position[i, c] += disp_lin[i, c]
    tx = disp_ang[i, 0]
    ty = disp_ang[i, 1]
    tz = disp_ang[i, 2]
    angle = math.sqrt(tx * tx + ty * ty + tz * tz)
    if angle < 1e-300:
        return
    s = math.sin(0.5 * angle) / angle
    dw = math.cos(0.5 * angle)
    dx = s * tx
    dy = s * ty
    dz = s * tz
    qw = body_orientation[i, 0]
    qx = body_orientation[i, 1]
    qy = body_orientation[i, 2]
    qz = body_orientation[i, 3]
    nw = dw * qw - dx * qx - dy * qy - dz * qz
    nx = dw * qx + dx * qw + dy * qz - dz * qy
    ny = dw * qy - dx * qz + dy * qw + dz * qx
    nz = dw * qz + dx * qy - dy * qx + dz * qw
    inv = 1.0 / math.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
    body_orientation[i, 0] = nw * inv
    body_orientation[i, 1] = nx * inv
    body_orientation[i, 2] = ny * inv
    body_orientation[i, 3] = nz * inv


@kernel
def finish_bodies(body_position, body_orientation, body_linear_velocity, body_angular_velocity, body_force,
                  body_torque, count, contact_depth, contact_count):
    """The shared end of a step in one call: the first body with a non-finite state (then nothing
    else is done), else the user forces cleared and the deepest overlap of the contacts (>= 0) [m].
    Returns (bad body or -1, deepest)."""
    bad = first_nonfinite_body(body_position, body_orientation, body_linear_velocity, body_angular_velocity, count)
    if bad >= 0:
        return bad, 0.0
    for i in range(count):
        for k in range(3):
            body_force[i, k] = 0.0
            body_torque[i, k] = 0.0
    deepest = 0.0
    for c in range(contact_count):
        if contact_depth[c] > deepest:
            deepest = contact_depth[c]
    return -1, deepest


@kernel
def copy_body_state(src_position, src_orientation, src_linear_velocity, src_angular_velocity, dst_position,
                    dst_orientation, dst_linear_velocity, dst_angular_velocity, count):
    """Copy the first ``count`` bodies' position, orientation and velocities (13 doubles each): the
    step's rollback copy (``tumble.nonfinite``) is taken and written back with it."""
    for i in range(count):
        for k in range(3):
            dst_position[i, k] = src_position[i, k]
            dst_linear_velocity[i, k] = src_linear_velocity[i, k]
            dst_angular_velocity[i, k] = src_angular_velocity[i, k]
        for k in range(4):
            dst_orientation[i, k] = src_orientation[i, k]
