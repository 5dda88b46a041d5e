"""Sleeping and the velocity update (004 §3.2, §3.8; digest §1.5-1.6).

Motion bound of a body: motion^2 <= 2 (v.v + (w.w) r_max^2) (Eq. 3.2.3), r_max the farthest surface
point from the centre of mass. Its recency-weighted average (Eq. 3.2.4)
rwa <- bias rwa + (1 - bias) motion^2 puts the body to sleep below threshold^2 (Alg. 5): v = w = 0,
rwa = threshold^2 (so a woken body does not fall straight back asleep), and rwa is capped at rwa_max
(a fast body need not wait long at rest). A sleeping body gets no position or velocity update.

Support test [tumble, issue 18]: Alg. 5 alone put a domino tilted past its tipping angle and released
at rest to sleep after one step (its motion bound starts at 0), so it never toppled. A body now falls
asleep only if it is also held: some contact forces, each inside its friction pyramid, balance its
weight and leave no torque about its centre of mass (``held_by_contacts``: statics of a rigid body on
point contacts, a small non-negative least-squares problem). The first version asked only that the
centre of mass lie over the hull of the contacts below the body; a ball resting on another ball and a
wall, or in the valley of two balls, failed it, and the wells of 004 §5 (E-WELL324, I-WELL392) never
reached 95 % asleep (65 % and 83 % at 6 s; 100 % from 3.4 s and 95 % from 3.8 s with the test off).

Wake rules handled here: 5 (fewer contacts in the direction of gravity than last step: its support
moved away) and 6 (none at all); 1 is in World's setters, 2 in correction, 3 in resolution.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core.config import kernel
from tumble._core.dynamics.integrate import integrate_velocities


@kernel(exact=True)
def support_counts(ncontacts, contact_body_a, contact_body_b, contact_normal, gravity, count, out):
    """out[i]: contacts of body i in the direction of gravity (moving i along g would collide there:
    n_XY . g > 0 with n_XY from i to the other body; for body a n_XY = n, for b it is -n)."""
    for i in range(count):
        out[i] = 0
    for c in range(ncontacts):
        ng = contact_normal[c, 0] * gravity[0] + contact_normal[c, 1] * gravity[1] + contact_normal[c, 2] * gravity[2]
        if ng > 0.0:
            out[contact_body_a[c]] += 1
        elif ng < 0.0:
            out[contact_body_b[c]] += 1


@kernel(exact=True)
def wake_unsupported(count, body_fixed, body_asleep, support_now, body_support_count):
    """Wake rules 5 and 6, then remember this step's counts. Returns the number woken."""
    woken = 0
    for i in range(count):
        if body_fixed[i]:
            continue
        if body_asleep[i] and (support_now[i] < body_support_count[i] or support_now[i] == 0):
            body_asleep[i] = False
            woken += 1
        body_support_count[i] = support_now[i]
    return woken


@kernel(exact=True)
def damped_gravity_forces(count, body_fixed, body_asleep, body_mass, v, w, body_reach, body_force, gravity,
                          damping, threshold, force_out, frozen_out):
    """Alg. 12 as forces for the shared velocity integrator: a slow body (motion^2 < threshold^2,
    Eq. 3.2.3) gets only (1 - damping) of gravity, i.e. an extra force -damping m g. Also writes
    frozen_out = fixed or asleep (bodies the integrator leaves alone). Returns the damped count."""
    t2 = threshold * threshold
    damped = 0
    for i in range(count):
        frozen_out[i] = body_fixed[i] or body_asleep[i]
        for k in range(3):
            force_out[i, k] = body_force[i, k]
        if frozen_out[i] or damping <= 0.0:
            continue
        vv = v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2]
        ww = w[i, 0] * w[i, 0] + w[i, 1] * w[i, 1] + w[i, 2] * w[i, 2]
        if 2.0 * (vv + ww * body_reach[i] * body_reach[i]) < t2:
            for k in range(3):
                force_out[i, k] -= damping * body_mass[i] * gravity[k]
            damped += 1
    return damped


#: [-] force left unbalanced when a body still counts as held by its contacts, as a fraction of its weight:
#: 1e-3 (the contact points and normals are exact to rounding; a held body's best forces balance its weight
#: to ~1e-12 of it, a domino 0.1 mm past its tipping point leaves ~1e-3 of it in torque, see ``sleep_support_margin``)
SUPPORT_FORCE_TOLERANCE = 1e-3


@kernel(exact=True)
def held_by_contacts(i, cs, ce, body_contacts, contact_body_a, contact_point, contact_normal, contact_friction,
                     body_position, gravity, margin, A, x, z, passive, idx, M, sol, Q):
    """Whether body i's contacts (body_contacts[cs:ce]) can hold it at rest: statics of a rigid body on point
    contacts. Each contact pushes i along its normal (towards i) with a force f_c >= 0 inside the friction
    pyramid |f_t| <= mu f_n (four edges n +- mu t1, n +- mu t2, inscribed in Coulomb's cone); held iff some
    such forces balance the weight m g and give no torque about the centre of mass (gravity has none there):

        min over f >= 0 of  |sum f - m|g| up|^2 / (tol m|g|)^2 + |sum r x f|^2 / (margin m|g|)^2  <=  1,

    a non-negative least-squares problem in the edges' magnitudes (``nnls6``), tol = SUPPORT_FORCE_TOLERANCE
    and margin [m] = ``sleep_support_margin`` (the torque left over, as the weight's lever arm). A body
    on a point or an edge outside its centre of mass, or on a slope steeper than atan(mu), is not held; a
    ball resting on two balls and a wall is (the old test, the centre over the hull of the contacts below,
    kept such balls awake: the wells of 004 never slept). In zero gravity every body is held. Scratch: A
    (6, >= 4 (ce - cs)), x, z, idx, passive, sol of as many columns, M (k, k), Q (6, k)."""
    gx, gy, gz = gravity[0], gravity[1], gravity[2]
    gg = math.sqrt(gx * gx + gy * gy + gz * gz)
    if gg == 0.0:
        return True
    fs = 1.0 / SUPPORT_FORCE_TOLERANCE     # forces in units of the weight, scaled by 1/tol
    ts = 1.0 / margin                      # torques in units of weight x metre, scaled by 1/margin
    ncol = 0
    for j in range(cs, ce):
        c = body_contacts[j]
        sgn = 1.0 if contact_body_a[c] != i else -1.0    # n points from a to b: the push on b is +n, on a -n
        nx = sgn * contact_normal[c, 0]
        ny = sgn * contact_normal[c, 1]
        nz = sgn * contact_normal[c, 2]
        if abs(nx) < 0.9:                  # t1 = e_x x n, normalised; t2 = n x t1
            t1x, t1y, t1z = 0.0, -nz, ny
        else:
            t1x, t1y, t1z = nz, 0.0, -nx
        tn = math.sqrt(t1x * t1x + t1y * t1y + t1z * t1z)
        t1x /= tn
        t1y /= tn
        t1z /= tn
        t2x = ny * t1z - nz * t1y
        t2y = nz * t1x - nx * t1z
        t2z = nx * t1y - ny * t1x
        rx = contact_point[c, 0] - body_position[i, 0]
        ry = contact_point[c, 1] - body_position[i, 1]
        rz = contact_point[c, 2] - body_position[i, 2]
        mu = contact_friction[c]
        edges = 4 if mu > 0.0 else 1
        for q in range(edges):
            sx, sy = 0.0, 0.0              # the edge d = n + sx t1 + sy t2
            if edges == 4:
                if q == 0:
                    sx = mu
                elif q == 1:
                    sx = -mu
                elif q == 2:
                    sy = mu
                else:
                    sy = -mu
            dx = nx + sx * t1x + sy * t2x
            dy = ny + sx * t1y + sy * t2y
            dz = nz + sx * t1z + sy * t2z
            A[0, ncol] = fs * dx
            A[1, ncol] = fs * dy
            A[2, ncol] = fs * dz
            A[3, ncol] = ts * (ry * dz - rz * dy)
            A[4, ncol] = ts * (rz * dx - rx * dz)
            A[5, ncol] = ts * (rx * dy - ry * dx)
            ncol += 1
    if ncol == 0:
        return False
    # the target: the contacts carry the weight upwards (-g / |g| in weights), no torque
    return nnls6(A, ncol, -fs * gx / gg, -fs * gy / gg, -fs * gz / gg, x, z, passive, idx, M, sol, Q) <= 1.0


@kernel(exact=True)
def nnls6(A, ncol, b0, b1, b2, x, z, passive, idx, M, sol, Q):
    """min |A x - b|^2 over x >= 0 for A (6, ncol) and b = (b0, b1, b2, 0, 0, 0) by Lawson and Hanson's
    active-set method (Solving Least Squares Problems, 1974, ch. 23): a column enters while its gradient
    A^T (b - A x) is positive; the least-squares solution on the passive set (QR by modified
    Gram-Schmidt; unit columns) replaces x when it is
    positive, else x moves towards it until a component reaches 0, which leaves the set. Scratch: x, z,
    passive, idx, sol of ncol; M (ncol, ncol) for R; Q (6, ncol). Finite in exact
    arithmetic; capped at 3 ncol + 6 entries against rounding (x stays feasible, so the residual returned
    bounds the minimum from above). Returns the squared residual."""
    # columns scaled to unit length (the minimum residual does not change: x_j absorbs the scale), so
    # the entering test and the normal equations see the columns' directions, not their units
    for j in range(ncol):
        x[j] = 0.0
        passive[j] = False
        nj = 0.0
        for k in range(6):
            nj += A[k, j] * A[k, j]
        nj = math.sqrt(nj)
        if nj > 0.0:
            for k in range(6):
                A[k, j] /= nj
    # a column enters only if it lowers the residual by more than rounding: gradient > 1e-10 |b|
    gtol = 1e-10 * math.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
    for _outer in range(3 * ncol + 6):
        r0, r1, r2, r3, r4, r5 = b0, b1, b2, 0.0, 0.0, 0.0
        for j in range(ncol):
            if x[j] != 0.0:
                r0 -= A[0, j] * x[j]
                r1 -= A[1, j] * x[j]
                r2 -= A[2, j] * x[j]
                r3 -= A[3, j] * x[j]
                r4 -= A[4, j] * x[j]
                r5 -= A[5, j] * x[j]
        best = -1
        wbest = gtol
        for j in range(ncol):
            if not passive[j]:
                wj = A[0, j] * r0 + A[1, j] * r1 + A[2, j] * r2 + A[3, j] * r3 + A[4, j] * r4 + A[5, j] * r5
                if wj > wbest:
                    wbest = wj
                    best = j
        if best < 0:
            break
        passive[best] = True
        for _inner in range(ncol + 1):
            p = 0
            for j in range(ncol):
                if passive[j]:
                    idx[p] = j
                    p += 1
            # least squares on the passive columns by modified Gram-Schmidt, orthogonalised twice (QR:
            # the normal equations square the condition number; rows in units 1e3 and 1e4 apart need QR)
            for a in range(p):
                ja = idx[a]
                for k in range(6):
                    Q[k, a] = A[k, ja]
                for cc in range(a):
                    M[cc, a] = 0.0
                for _rep in range(2):
                    for cc in range(a):
                        d = Q[0, cc] * Q[0, a] + Q[1, cc] * Q[1, a] + Q[2, cc] * Q[2, a] \
                            + Q[3, cc] * Q[3, a] + Q[4, cc] * Q[4, a] + Q[5, cc] * Q[5, a]
                        M[cc, a] += d
                        for k in range(6):
                            Q[k, a] -= d * Q[k, cc]
                nrm = math.sqrt(Q[0, a] * Q[0, a] + Q[1, a] * Q[1, a] + Q[2, a] * Q[2, a]
                                + Q[3, a] * Q[3, a] + Q[4, a] * Q[4, a] + Q[5, a] * Q[5, a])
                if nrm <= 1e-12:           # dependent on the earlier ones (rounding): it gets no share
                    M[a, a] = 0.0
                    for k in range(6):
                        Q[k, a] = 0.0
                else:
                    M[a, a] = nrm
                    for k in range(6):
                        Q[k, a] /= nrm
                sol[a] = Q[0, a] * b0 + Q[1, a] * b1 + Q[2, a] * b2
            for a in range(p - 1, -1, -1):
                if M[a, a] == 0.0:
                    sol[a] = 0.0
                    continue
                acc = sol[a]
                for cc in range(a + 1, p):
                    acc -= M[a, cc] * sol[cc]
                sol[a] = acc / M[a, a]
            for j in range(ncol):
                z[j] = 0.0
            positive = True
            for a in range(p):
                z[idx[a]] = sol[a]
                if sol[a] <= 0.0:
                    positive = False
            if positive:
                for j in range(ncol):
                    x[j] = z[j]
                break
            alpha = 1.0
            blocking = idx[0]
            for a in range(p):
                j = idx[a]
                if z[j] <= 0.0:
                    t = x[j] / (x[j] - z[j]) if x[j] > 0.0 else 0.0
                    if t <= alpha:
                        alpha = t
                        blocking = j
            for j in range(ncol):
                x[j] += alpha * (z[j] - x[j])
            x[blocking] = 0.0              # the component that reached 0 (exactly, not to rounding) leaves
            for a in range(p):
                j = idx[a]
                if x[j] <= 0.0:
                    x[j] = 0.0
                    passive[j] = False
    r0, r1, r2, r3, r4, r5 = b0, b1, b2, 0.0, 0.0, 0.0
    for j in range(ncol):
        r0 -= A[0, j] * x[j]
        r1 -= A[1, j] * x[j]
        r2 -= A[2, j] * x[j]
        r3 -= A[3, j] * x[j]
        r4 -= A[4, j] * x[j]
        r5 -= A[5, j] * x[j]
    return r0 * r0 + r1 * r1 + r2 * r2 + r3 * r3 + r4 * r4 + r5 * r5


@kernel(exact=True)
def sleep_check(count, body_fixed, body_asleep, v, w, body_reach, rwa, threshold, bias, rwa_max):
    """Alg. 5 for every awake dynamic body. Returns the number asleep after it."""
    no_contacts = np.zeros(0, np.int64)
    return sleep_check_supported(count, body_fixed, body_asleep, v, w, body_reach, rwa, threshold, bias, rwa_max,
                                 False, 0, no_contacts, no_contacts, np.zeros((0, 3)), np.zeros((0, 3)),
                                 np.zeros(0), v, np.zeros(3), 0.0)


@kernel(exact=True)
def sleep_check_supported(count, body_fixed, body_asleep, v, w, body_reach, rwa, threshold, bias, rwa_max,
                          require_support, m, contact_body_a, contact_body_b, contact_point, contact_normal,
                          contact_friction, body_position, gravity, support_margin):
    """Alg. 5 for every awake dynamic body; with ``require_support`` a body below the threshold falls
    asleep only if ``held_by_contacts`` (else it stays awake, its average unchanged). Returns the number
    asleep after it."""
    t2 = threshold * threshold
    # contacts per body (CSR), only when some body may need the support test
    start = np.zeros(count + 1, np.int64)
    listed = np.empty(2 * m, np.int64)
    if require_support:
        for c in range(m):
            start[contact_body_a[c] + 1] += 1
            start[contact_body_b[c] + 1] += 1
        for i in range(count):
            start[i + 1] += start[i]
        fill = start[:count].copy()
        for c in range(m):
            a = contact_body_a[c]
            b = contact_body_b[c]
            listed[fill[a]] = c
            fill[a] += 1
            listed[fill[b]] = c
            fill[b] += 1
    most = 0
    for i in range(count):
        if start[i + 1] - start[i] > most:
            most = start[i + 1] - start[i]
    cols = 4 * most                        # four friction-pyramid edges per contact
    A = np.empty((6, cols))
    x = np.empty(cols)
    z = np.empty(cols)
    passive = np.empty(cols, np.bool_)
    idx = np.empty(cols, np.int64)
    M = np.empty((cols, cols))
    sol = np.empty(cols)
    Q = np.empty((6, cols))
    asleep = 0
    for i in range(count):
        if body_fixed[i]:
            continue
        if body_asleep[i]:
            asleep += 1
            continue
        if threshold <= 0.0:
            continue
        vv = v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2]
        ww = w[i, 0] * w[i, 0] + w[i, 1] * w[i, 1] + w[i, 2] * w[i, 2]
        m2 = 2.0 * (vv + ww * body_reach[i] * body_reach[i])
        r = bias * rwa[i] + (1.0 - bias) * m2
        if r < t2 and require_support and not held_by_contacts(
                i, start[i], start[i + 1], listed, contact_body_a, contact_point, contact_normal, contact_friction,
                body_position, gravity, support_margin, A, x, z, passive, idx, M, sol, Q):
            r = t2                         # unbalanced: awake; it will move (and must be still again to sleep)
        elif r < t2:
            for k in range(3):
                v[i, k] = 0.0
                w[i, k] = 0.0
            r = t2
            body_asleep[i] = True
            asleep += 1
        elif r > rwa_max:
            r = rwa_max
        rwa[i] = r
    return asleep


@kernel(exact=True)
def velocity_update(m, contact_body_a, contact_body_b, contact_normal, count, body_fixed, body_asleep,
                    body_support_count, body_mass, v, w, body_reach, body_force, body_torque, body_orientation,
                    body_inv_mass, body_inertia_local, body_inv_inertia_world, gravity, dt, damping, threshold,
                    gyroscopic, linear_damping, angular_damping):
    """Alg. 6's middle: wake rules 5 and 6 (``support_counts``, ``wake_unsupported``), then the
    velocity update of the awake bodies with gravity damping (Alg. 12: ``damped_gravity_forces``
    and the shared integrator). One call instead of four (each call from Python costs a few us of
    argument unboxing). Returns (woken, damped)."""
    support = np.empty(count, np.int64)
    support_counts(m, contact_body_a, contact_body_b, contact_normal, gravity, count, support)
    woken = wake_unsupported(count, body_fixed, body_asleep, support, body_support_count)
    force = np.empty((count, 3))
    still = np.empty(count, np.bool_)
    damped = damped_gravity_forces(count, body_fixed, body_asleep, body_mass, v, w, body_reach, body_force, gravity,
                                   damping, threshold, force, still)
    integrate_velocities(v, w, body_orientation, body_inv_mass, body_inertia_local, body_inv_inertia_world, force,
                         body_torque, still, count, gravity, dt, gyroscopic, linear_damping, angular_damping)
    return woken, damped
