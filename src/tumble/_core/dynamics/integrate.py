"""Time integration: semi-implicit (symplectic) Euler, Catto 001 eq. 33, 36-37.

velocity:  v2 = v1 + dt (g + f / m);  w2 = w1 + dt I^-1 (tau - w x I w)  (gyroscopic term implicit)
position:  x2 = x1 + dt v2;  q2 = q1 + dt/2 [0, w2] * q1, then renormalised.

Angular velocity is stored in the world frame, so the quaternion rate is q' = 1/2 [0, w] q (the
world-frame form of 001 eq. 2/37, which writes the body-frame product q [0, w_body]).

Rotation integrators (``ContactSettings.rotation_integrator``):

- "euler" (until issue 18): the gyroscopic term -w x I w in the velocity update (one implicit Newton
  step, ``integrate_velocities``), then the first-order quaternion update above. It dissipates: a
  torque-free box spinning near its intermediate axis lost 17 % of |L| in 10 s at 60 Hz.
- "midpoint" (default): no gyroscopic term in the velocity update; the position update is the free
  rigid body's flow over dt (``rotate_free_body``): the implicit midpoint rule on the body-frame
  angular momentum, Euler's equations L' = L x I^-1 L, with the orientation moved by the Cayley
  rotation of the midpoint angular velocity. It conserves the world-frame angular momentum exactly
  (by construction), and |L| and the kinetic energy L.I^-1 L / 2 up to the Newton tolerance (the
  midpoint rule keeps quadratic invariants; Austin, Krishnaprasad & Wang, "Almost Poisson
  integration of rigid body systems", J. Comput. Phys. 107 (1993); Hairer, Lubich & Wanner,
  "Geometric Numerical Integration", §IV.2 and §VII.5 for the rigid body). Forces and contact
  impulses act in the velocity stages as before (a kick), so the step is kick + free drift.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core.config import kernel
from tumble._core.math3d import quat_rotation, quat_to_matrix


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


@kernel(inline="always")
def _quaternion_step(i, dt, wx, wy, wz, body_orientation):
    """q += dt/2 [0, w] q, renormalised (Catto 001 eq. 37, world-frame w)."""
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
        _quaternion_step(i, dt, wx, wy, wz, body_orientation)


#: Newton iterations of the midpoint rule at most; at 60 Hz and |w| dt < 1 it takes 2-4
MIDPOINT_MAX_NEWTON = 12
#: Newton stops once an update is below this times |L|: convergence is quadratic, so the error left is
#: of the order of its square (1e-18 |L|, i.e. rounding); a tolerance at rounding level (1e-15) was
#: rarely met and ran every iteration (2.7x the cost of the "euler" kernels per spinning body)
MIDPOINT_TOLERANCE = 1e-9


@kernel(inline="always")
def rotate_free_body(i, h, wx, wy, wz, body_orientation, body_angular_velocity, body_inertia_local,
                     body_inv_inertia_local):
    """Body i's free rotation over h: the implicit midpoint rule on Euler's equations for the body-frame
    angular momentum, with the Cayley rotation of the midpoint angular velocity.

    (w_x, w_y, w_z) [rad/s] (world) drives the rotation; ``body_angular_velocity[i]`` carries the
    momentum (the same vector for every solver but shock, whose rotation is the mean of its two
    sub-steps' velocities). With R the orientation, A = I_body^-1 and L = I_body R^T w:

        x = L + h/2 x X (A x)                   (x = (L + L')/2, solved by Newton from x = L)
        Q = cay(h A x) = (1 - h/2 [Ax])^-1 (1 + h/2 [Ax]),   R' = R Q,   L' = Q^T L

    L' = Q^T L is the midpoint rule itself (L' - L = h x X A x), and it makes R' L' = R L: the world
    momentum is conserved to rounding whatever the Newton residual. |L'| = |L|, and
    L'.A L' = L.A L because L' - L is orthogonal to A x. The carried velocity becomes
    w' = R' A Q^T I R^T w_carried (its world momentum kept, re-expressed with the new inertia).
    A spin about a principal axis keeps its axis and turns by 2 atan(h |w| / 2), the same angle as the
    normalised first-order quaternion update. If Newton does not converge (|w| h >> 1) the last
    iterate is used: the momentum is still conserved, the energy only to the residual."""
    qw = body_orientation[i, 0]
    qx = body_orientation[i, 1]
    qy = body_orientation[i, 2]
    qz = body_orientation[i, 3]
    # R (columns: body axes in the world)
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = quat_rotation(qw, qx, qy, qz)
    # body-frame driving velocity and momentum L = I R^T w
    b0 = r00 * wx + r10 * wy + r20 * wz
    b1 = r01 * wx + r11 * wy + r21 * wz
    b2 = r02 * wx + r12 * wy + r22 * wz
    L0 = body_inertia_local[i, 0, 0] * b0 + body_inertia_local[i, 0, 1] * b1 + body_inertia_local[i, 0, 2] * b2
    L1 = body_inertia_local[i, 1, 0] * b0 + body_inertia_local[i, 1, 1] * b1 + body_inertia_local[i, 1, 2] * b2
    L2 = body_inertia_local[i, 2, 0] * b0 + body_inertia_local[i, 2, 1] * b1 + body_inertia_local[i, 2, 2] * b2
    a00 = body_inv_inertia_local[i, 0, 0]
    a01 = body_inv_inertia_local[i, 0, 1]
    a02 = body_inv_inertia_local[i, 0, 2]
    a10 = body_inv_inertia_local[i, 1, 0]
    a11 = body_inv_inertia_local[i, 1, 1]
    a12 = body_inv_inertia_local[i, 1, 2]
    a20 = body_inv_inertia_local[i, 2, 0]
    a21 = body_inv_inertia_local[i, 2, 1]
    a22 = body_inv_inertia_local[i, 2, 2]
    x0 = L0
    x1 = L1
    x2 = L2
    g = 0.5 * h
    tol = MIDPOINT_TOLERANCE * math.sqrt(L0 * L0 + L1 * L1 + L2 * L2)
    for _ in range(MIDPOINT_MAX_NEWTON):
        y0 = a00 * x0 + a01 * x1 + a02 * x2      # y = A x
        y1 = a10 * x0 + a11 * x1 + a12 * x2
        y2 = a20 * x0 + a21 * x1 + a22 * x2
        # F(x) = x - L - g x X y
        f0 = x0 - L0 - g * (x1 * y2 - x2 * y1)
        f1 = x1 - L1 - g * (x2 * y0 - x0 * y2)
        f2 = x2 - L2 - g * (x0 * y1 - x1 * y0)
        # dF/dx = 1 - g ([x] A - [y]);  [x] A row r: (x X A[:, c])_r
        m00 = 1.0 - g * ((x1 * a20 - x2 * a10) - 0.0)
        m01 = -g * ((x1 * a21 - x2 * a11) + y2)
        m02 = -g * ((x1 * a22 - x2 * a12) - y1)
        m10 = -g * ((x2 * a00 - x0 * a20) - y2)
        m11 = 1.0 - g * ((x2 * a01 - x0 * a21) - 0.0)
        m12 = -g * ((x2 * a02 - x0 * a22) + y0)
        m20 = -g * ((x0 * a10 - x1 * a00) + y1)
        m21 = -g * ((x0 * a11 - x1 * a01) - y0)
        m22 = 1.0 - g * ((x0 * a12 - x1 * a02) - 0.0)
        c00 = m11 * m22 - m12 * m21
        c01 = m12 * m20 - m10 * m22
        c02 = m10 * m21 - m11 * m20
        det = m00 * c00 + m01 * c01 + m02 * c02
        if not (abs(det) > 1e-300) or not math.isfinite(det):
            break
        inv = 1.0 / det
        d0 = (c00 * f0 + (m02 * m21 - m01 * m22) * f1 + (m01 * m12 - m02 * m11) * f2) * inv
        d1 = (c01 * f0 + (m00 * m22 - m02 * m20) * f1 + (m02 * m10 - m00 * m12) * f2) * inv
        d2 = (c02 * f0 + (m01 * m20 - m00 * m21) * f1 + (m00 * m11 - m01 * m10) * f2) * inv
        if not (math.isfinite(d0) and math.isfinite(d1) and math.isfinite(d2)):
            break
        x0 -= d0
        x1 -= d1
        x2 -= d2
        if abs(d0) + abs(d1) + abs(d2) <= tol:
            break
    # midpoint angular velocity (body frame) and the Cayley rotation Q as a quaternion (1, h/2 w)
    u0 = g * (a00 * x0 + a01 * x1 + a02 * x2)
    u1 = g * (a10 * x0 + a11 * x1 + a12 * x2)
    u2 = g * (a20 * x0 + a21 * x1 + a22 * x2)
    s = 1.0 / math.sqrt(1.0 + u0 * u0 + u1 * u1 + u2 * u2)
    pw = s
    px = s * u0
    py = s * u1
    pz = s * u2
    # q' = q * p (body-frame increment), renormalised
    nw = qw * pw - qx * px - qy * py - qz * pz
    nx = qw * px + qx * pw + qy * pz - qz * py
    ny = qw * py - qx * pz + qy * pw + qz * px
    nz = qw * pz + qx * py - qy * px + qz * pw
    inv = 1.0 / math.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
    nw *= inv
    nx *= inv
    ny *= inv
    nz *= inv
    body_orientation[i, 0] = nw
    body_orientation[i, 1] = nx
    body_orientation[i, 2] = ny
    body_orientation[i, 3] = nz
    # carried momentum: world M = R I R^T w_c; in the new body frame R'^T M = Q^T (I R^T w_c)
    cx = body_angular_velocity[i, 0]
    cy = body_angular_velocity[i, 1]
    cz = body_angular_velocity[i, 2]
    if cx != wx or cy != wy or cz != wz:
        b0 = r00 * cx + r10 * cy + r20 * cz
        b1 = r01 * cx + r11 * cy + r21 * cz
        b2 = r02 * cx + r12 * cy + r22 * cz
        L0 = body_inertia_local[i, 0, 0] * b0 + body_inertia_local[i, 0, 1] * b1 + body_inertia_local[i, 0, 2] * b2
        L1 = body_inertia_local[i, 1, 0] * b0 + body_inertia_local[i, 1, 1] * b1 + body_inertia_local[i, 1, 2] * b2
        L2 = body_inertia_local[i, 2, 0] * b0 + body_inertia_local[i, 2, 1] * b1 + body_inertia_local[i, 2, 2] * b2
    # Q^T L with Q the rotation of p: Q^T L = L - 2 pw (u x L) s... written out from the matrix of p
    q00 = 1.0 - 2.0 * (py * py + pz * pz)
    q01 = 2.0 * (px * py - pw * pz)
    q02 = 2.0 * (px * pz + pw * py)
    q10 = 2.0 * (px * py + pw * pz)
    q11 = 1.0 - 2.0 * (px * px + pz * pz)
    q12 = 2.0 * (py * pz - pw * px)
    q20 = 2.0 * (px * pz - pw * py)
    q21 = 2.0 * (py * pz + pw * px)
    q22 = 1.0 - 2.0 * (px * px + py * py)
    k0 = q00 * L0 + q10 * L1 + q20 * L2
    k1 = q01 * L0 + q11 * L1 + q21 * L2
    k2 = q02 * L0 + q12 * L1 + q22 * L2
    # w' = R' A L'
    e0 = a00 * k0 + a01 * k1 + a02 * k2
    e1 = a10 * k0 + a11 * k1 + a12 * k2
    e2 = a20 * k0 + a21 * k1 + a22 * k2
    body_angular_velocity[i, 0] = (1.0 - 2.0 * (ny * ny + nz * nz)) * e0 + 2.0 * (nx * ny - nw * nz) * e1 \
        + 2.0 * (nx * nz + nw * ny) * e2
    body_angular_velocity[i, 1] = 2.0 * (nx * ny + nw * nz) * e0 + (1.0 - 2.0 * (nx * nx + nz * nz)) * e1 \
        + 2.0 * (ny * nz - nw * nx) * e2
    body_angular_velocity[i, 2] = 2.0 * (nx * nz - nw * ny) * e0 + 2.0 * (ny * nz + nw * nx) * e1 \
        + (1.0 - 2.0 * (nx * nx + ny * ny)) * e2


#: |w| h above which the free-body flow is not attempted [rad] (a spin this fast is no physics: the
#: fuzz tests' 1e300 rad/s); the first-order update with its overflow guard takes it instead
MIDPOINT_MAX_ANGLE = 1e6


@kernel
def integrate_positions_midpoint(body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                                 body_inertia_local, body_inv_inertia_local, body_fixed, count, dt):
    """x += dt v; the orientation and angular velocity by ``rotate_free_body`` (the "midpoint"
    rotation integrator). Bodies at rest (w = 0) are left as they are."""
    for i in range(count):
        if body_fixed[i]:
            continue
        for k in range(3):
            body_position[i, k] += dt * body_linear_velocity[i, k]
        wx = body_angular_velocity[i, 0]
        wy = body_angular_velocity[i, 1]
        wz = body_angular_velocity[i, 2]
        ww = wx * wx + wy * wy + wz * wz
        if ww == 0.0:
            continue
        if ww * dt * dt < MIDPOINT_MAX_ANGLE * MIDPOINT_MAX_ANGLE:
            rotate_free_body(i, dt, wx, wy, wz, body_orientation, body_angular_velocity, body_inertia_local,
                             body_inv_inertia_local)
        else:
            _quaternion_step(i, dt, wx, wy, wz, body_orientation)


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


@kernel
def correct_bodies(count, body_fixed, disp_lin, disp_ang, body_position, body_orientation, body_angular_velocity):
    """A pure position correction of every dynamic body i by (disp_lin[i], disp_ang[i]) [m, rad]
    (``displace_body``), turning its angular velocity with it (``turn_with_body``) so that the
    correction changes no body's kinetic energy."""
    for i in range(count):
        if not body_fixed[i]:
            displace_body(i, disp_lin, disp_ang, body_position, body_orientation)
            turn_with_body(i, disp_ang, body_angular_velocity)


@kernel
def apply_pseudo_velocities(count, body_fixed, vp_lin, vp_ang, h, body_position, body_orientation,
                            body_angular_velocity):
    """The end of a split-impulse pass (pgs ``split_correction`` and ``pseudo_correction``, jacobi
    ``jacobi_pseudo_correction``): the pseudo-velocities (v_p, w_p) become displacements h v_p, h w_p
    in place, and every dynamic body moves by them as a pure correction (``correct_bodies``); v_p is
    then dropped by the caller."""
    for i in range(count):
        for k in range(3):
            vp_lin[i, k] *= h
            vp_ang[i, k] *= h
    correct_bodies(count, body_fixed, vp_lin, vp_ang, body_position, body_orientation, body_angular_velocity)


@kernel(inline="always")
def turn_with_body(i, disp_ang, v_ang):
    """w_i <- R(dtheta_i) w_i: body i's angular velocity turned by the rotation vector dtheta_i
    (Rodrigues: w cos a + (k x w) sin a + k (k . w)(1 - cos a), a = |dtheta|, k = dtheta / a), so a
    body rotated by a pure position correction keeps its body-frame angular velocity and with it its
    rotational kinetic energy 1/2 w^T R I R^T w (a world-frame w kept under a turned inertia gained
    energy: a spinning thin bar pushed out of the ground by pseudo-velocities went from 620 J to 659 J
    in 40 steps)."""
    tx = disp_ang[i, 0]
    ty = disp_ang[i, 1]
    tz = disp_ang[i, 2]
    a = math.sqrt(tx * tx + ty * ty + tz * tz)
    if a < 1e-300:
        return
    kx = tx / a
    ky = ty / a
    kz = tz / a
    wx = v_ang[i, 0]
    wy = v_ang[i, 1]
    wz = v_ang[i, 2]
    ca = math.cos(a)
    sa = math.sin(a)
    kw = (kx * wx + ky * wy + kz * wz) * (1.0 - ca)
    v_ang[i, 0] = wx * ca + (ky * wz - kz * wy) * sa + kx * kw
    v_ang[i, 1] = wy * ca + (kz * wx - kx * wz) * sa + ky * kw
    v_ang[i, 2] = wz * ca + (kx * wy - ky * wx) * sa + kz * kw


@kernel(inline="always")
def displace_body(i, disp_lin, disp_ang, body_position, body_orientation):
    """Body i: x += dx;  q <- exp(dtheta / 2) q  (exact rotation by the rotation vector dtheta,
    then renormalised; ``rotate_body``)."""
    for c in range(3):
        body_position[i, c] += disp_lin[i, c]
    rotate_body(i, disp_ang[i, 0], disp_ang[i, 1], disp_ang[i, 2], body_orientation)


@kernel(inline="always")
def rotate_body(i, tx, ty, tz, body_orientation):
    """q_i <- exp(dtheta / 2) q_i for the world-frame rotation vector dtheta = (tx, ty, tz) [rad],
    renormalised; nothing for |dtheta| < 1e-300."""
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


@kernel
def free_flight(body_position, body_orientation, body_linear_velocity, body_angular_velocity, body_inv_mass,
                body_inertia_local, body_inv_inertia_local, body_inv_inertia_world, body_force, body_torque,
                body_fixed, count, gravity, h, substeps, gyroscopic, midpoint, linear_damping, angular_damping):
    """``substeps`` substeps of h of a step with no rows (no contact, no joint): each
    ``integrate_velocities`` then ``integrate_positions_midpoint`` (``midpoint``) or
    ``integrate_positions``, the same kernels in the same order as the pgs substep loop calls them
    one by one, so the result is bit for bit the same (IEEE arithmetic, config.py); one call instead
    of 2 x substeps cuts the fixed cost of a contact-free step (issue 14; a free box's World.step,
    median of 2000, busy 2-core VM: 25 us fused, 34 us with the two kernels called per substep).
    ``tests/determinism/test_free_flight.py`` holds the bit-for-bit equality."""
    for _ in range(substeps):
        integrate_velocities(body_linear_velocity, body_angular_velocity, body_orientation, body_inv_mass,
                             body_inertia_local, body_inv_inertia_world, body_force, body_torque, body_fixed,
                             count, gravity, h, gyroscopic, linear_damping, angular_damping)
        if midpoint:
            integrate_positions_midpoint(body_position, body_orientation, body_linear_velocity,
                                         body_angular_velocity, body_inertia_local, body_inv_inertia_local,
                                         body_fixed, count, h)
        else:
            integrate_positions(body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                                body_fixed, count, h)


@kernel
def pushed_start(count, body_fixed, body_position, body_orientation, v_lin, v_ang, x0, v_lin0, w_body0):
    """The state ``guard_pushed_bodies`` measures a (sub)step from: x0 = x, v_lin0 = v and the angular
    velocity in the body frame, w_body0 = R(q)^T w (rotational energy 1/2 w_b^T I_body w_b does not
    depend on the orientation, so the step's turn does not enter the comparison)."""
    for i in range(count):
        if body_fixed[i]:
            continue
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = quat_rotation(
            body_orientation[i, 0], body_orientation[i, 1], body_orientation[i, 2], body_orientation[i, 3])
        wx = v_ang[i, 0]
        wy = v_ang[i, 1]
        wz = v_ang[i, 2]
        w_body0[i, 0] = r00 * wx + r10 * wy + r20 * wz
        w_body0[i, 1] = r01 * wx + r11 * wy + r21 * wz
        w_body0[i, 2] = r02 * wx + r12 * wy + r22 * wz
        for k in range(3):
            x0[i, k] = body_position[i, k]
            v_lin0[i, k] = v_lin[i, k]


@kernel
def guard_pushed_bodies(count, body_fixed, pushed, body_mass, body_inertia_local, gravity, body_force, body_torque,
                        h, x0, v_lin0, w_body0, body_position, body_orientation, v_lin, v_ang):
    """The energy guard of the split-impulse passes [tumble, issue 17]: a body that a pseudo-velocity
    pass moved in this (sub)step of ``h`` seconds (``pushed[i]``) gains kinetic energy only from the work
    the applied forces did along the way it actually went, velocity and push together:

        KE(v) - KE(v0) <= W = max(0, (m g + f) . (x - x0) + h tau . w)

    (``pushed_start`` took x0, v0 and the body-frame w0 before the velocity update). Why: the push moves
    positions only, so a body held or lifted by it while its velocity falls keeps the speed gravity gave
    for a fall its position never made; gravity's work m g |v_z| h is counted on the velocity, the
    potential energy m g h v_p,z of the lift on the position (a 0.5 x 2 x 16 m box standing 8 m deep,
    turning at 1 rad/s: the contact rows hold its lowest corners, J v = 0, while it pivots on them and its
    centre falls with the tilt at up to 8 w sin(theta); lifted 0.07 m per step it fell at 5 m/s in the
    velocities after 40 steps, 2.5 J beyond the fuzz's energy bound, 70 J after 60). With
    dv = v - v0 and da = R^T w - w0 (body frame), KE(s) = KE(v0) + s B + s^2 A along v0 + s dv, with
    A = KE(dv, da) >= 0 and B = m v0 . dv + w0^T I da; when KE(1) - KE(v0) > W the body keeps v0 + s dv
    with s = (-B + sqrt(B^2 + 4 A W)) / 2A, the largest s in [0, 1] with A s^2 + B s <= W (W >= 0, so
    s >= 0; W = 0 is shock's ``no_energy_gain``). The guard only ever lowers a body's kinetic energy
    and touches no body the push did not move. Returns how many bodies were scaled."""
    scaled = 0
    for i in range(count):
        if body_fixed[i] or not pushed[i]:
            continue
        m = body_mass[i]
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = quat_rotation(
            body_orientation[i, 0], body_orientation[i, 1], body_orientation[i, 2], body_orientation[i, 3])
        wx = v_ang[i, 0]
        wy = v_ang[i, 1]
        wz = v_ang[i, 2]
        b0 = w_body0[i, 0]
        b1 = w_body0[i, 1]
        b2 = w_body0[i, 2]
        a0 = r00 * wx + r10 * wy + r20 * wz - b0
        a1 = r01 * wx + r11 * wy + r21 * wz - b1
        a2 = r02 * wx + r12 * wy + r22 * wz - b2
        dv0 = v_lin[i, 0] - v_lin0[i, 0]
        dv1 = v_lin[i, 1] - v_lin0[i, 1]
        dv2 = v_lin[i, 2] - v_lin0[i, 2]
        ia0 = body_inertia_local[i, 0, 0] * a0 + body_inertia_local[i, 0, 1] * a1 + body_inertia_local[i, 0, 2] * a2
        ia1 = body_inertia_local[i, 1, 0] * a0 + body_inertia_local[i, 1, 1] * a1 + body_inertia_local[i, 1, 2] * a2
        ia2 = body_inertia_local[i, 2, 0] * a0 + body_inertia_local[i, 2, 1] * a1 + body_inertia_local[i, 2, 2] * a2
        A = 0.5 * (m * (dv0 * dv0 + dv1 * dv1 + dv2 * dv2) + a0 * ia0 + a1 * ia1 + a2 * ia2)
        B = m * (v_lin0[i, 0] * dv0 + v_lin0[i, 1] * dv1 + v_lin0[i, 2] * dv2) + b0 * ia0 + b1 * ia1 + b2 * ia2
        work = h * (body_torque[i, 0] * wx + body_torque[i, 1] * wy + body_torque[i, 2] * wz)
        for k in range(3):
            work += (m * gravity[k] + body_force[i, k]) * (body_position[i, k] - x0[i, k])
        if work < 0.0:
            work = 0.0
        if not A > 0.0 or A + B <= work:
            continue
        s = (-B + math.sqrt(B * B + 4.0 * A * work)) / (2.0 * A)
        s = min(max(s, 0.0), 1.0)
        scaled += 1
        v_lin[i, 0] = v_lin0[i, 0] + s * dv0
        v_lin[i, 1] = v_lin0[i, 1] + s * dv1
        v_lin[i, 2] = v_lin0[i, 2] + s * dv2
        c0 = b0 + s * a0
        c1 = b1 + s * a1
        c2 = b2 + s * a2
        v_ang[i, 0] = r00 * c0 + r01 * c1 + r02 * c2
        v_ang[i, 1] = r10 * c0 + r11 * c1 + r12 * c2
        v_ang[i, 2] = r20 * c0 + r21 * c1 + r22 * c2
    return scaled


@kernel
def mark_pushed(count, body_fixed, vp_lin, vp_ang, pushed):
    """pushed[i] = whether a split-impulse pass gave dynamic body i a pseudo-velocity (or displacement)
    (vp_lin, vp_ang) other than zero: the bodies ``guard_pushed_bodies`` checks. A zero-length
    ``pushed`` marks nothing (no guard)."""
    if pushed.shape[0] == 0:
        return
    for i in range(count):
        pushed[i] = False
        if body_fixed[i]:
            continue
        for k in range(3):
            if vp_lin[i, k] != 0.0 or vp_ang[i, k] != 0.0:
                pushed[i] = True


@kernel
def keep_grounded_pushes(row_count, row_body, bias_pseudo, body_fixed, pushed):
    """pushed[i] stays set only for a body with a deep row (bias_pseudo > 0: the split-impulse pass's
    push) against a fixed side (index < 0 or a fixed body): the energy guard (``guard_pushed_bodies``)
    is for bodies lifted out of the ground or a fixed wall, a lift the velocities never paid for.
    Between two dynamic bodies the velocity solve's energy exchange is momentum-conserving, and scaling
    one body's velocity change broke the balance: 12 free bodies started overlapping without gravity
    (tests/physics/test_closed_form.py) ended with their momentum off by 1.8 % under pgs. A zero-length
    ``pushed`` marks nothing (no guard)."""
    n = pushed.shape[0]
    if n == 0:
        return
    grounded = np.zeros(n, dtype=np.bool_)
    for r in range(row_count):
        if not bias_pseudo[r] > 0.0:
            continue
        a = row_body[r, 0]
        b = row_body[r, 1]
        a_fixed = a < 0 or body_fixed[a]
        b_fixed = b < 0 or body_fixed[b]
        if a_fixed and not b_fixed:
            grounded[b] = True
        elif b_fixed and not a_fixed:
            grounded[a] = True
    for i in range(n):
        pushed[i] = pushed[i] and grounded[i]
