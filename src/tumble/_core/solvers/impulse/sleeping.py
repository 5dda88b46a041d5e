"""Sleeping and the velocity update (004 §3.2, §3.8; digest §1.5-1.6).

Motion bound of a body: motion^2 <= 2 (v.v + (w.w) r_max^2) (Eq. 3.2.3), r_max the farthest surface
point from the centre of mass. Its recency-weighted average (Eq. 3.2.4)
rwa <- bias rwa + (1 - bias) motion^2 puts the body to sleep below threshold^2 (Alg. 5): v = w = 0,
rwa = threshold^2 (so a woken body does not fall straight back asleep), and rwa is capped at rwa_max
(a fast body need not wait long at rest). A sleeping body gets no position or velocity update.

Support test [tumble, issue 18]: Alg. 5 alone put a domino tilted past its tipping angle and released
at rest to sleep after one step (its motion bound starts at 0), so it never toppled. A body now falls
asleep only if it is also held: the projection of its centre of mass along gravity lies in the convex
hull of its supporting contact points (those with the other body in the direction of gravity, as in
wake rule 5), projected the same way, or within ``support_margin`` of it. Outside it, gravity has an
unbalanced torque about the support and the body must move (statics of a rigid body on point
supports). In zero gravity every body is held.

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


@kernel(exact=True)
def held_by_support(i, cs, ce, body_contacts, contact_body_a, contact_point, contact_normal, body_position, gravity,
                    margin, px, py, ang):
    """Whether body i's centre of mass, projected along gravity, lies in the convex hull of its supporting
    contact points (contacts body_contacts[cs:ce]) or within ``margin`` [m] of it. ``px``, ``py``,
    ``ang``: scratch of at least ce - cs."""
    gx, gy, gz = gravity[0], gravity[1], gravity[2]
    gg = math.sqrt(gx * gx + gy * gy + gz * gz)
    if gg == 0.0:
        return True
    gx /= gg
    gy /= gg
    gz /= gg
    # a basis (e1, e2) of the plane normal to gravity
    if abs(gx) < 0.9:
        e1x, e1y, e1z = 0.0, gz, -gy      # (1, 0, 0) x g
    else:
        e1x, e1y, e1z = -gz, 0.0, gx      # (0, 1, 0) x g
    n1 = math.sqrt(e1x * e1x + e1y * e1y + e1z * e1z)
    e1x /= n1
    e1y /= n1
    e1z /= n1
    e2x = gy * e1z - gz * e1y
    e2y = gz * e1x - gx * e1z
    e2z = gx * e1y - gy * e1x
    k = 0
    for j in range(cs, ce):
        c = body_contacts[j]
        ng = contact_normal[c, 0] * gx + contact_normal[c, 1] * gy + contact_normal[c, 2] * gz
        if contact_body_a[c] != i:
            ng = -ng                       # n points from a to b; from i it is -n when i is b
        if ng <= 0.0:
            continue                       # the other body is not below i
        dx = contact_point[c, 0] - body_position[i, 0]
        dy = contact_point[c, 1] - body_position[i, 1]
        dz = contact_point[c, 2] - body_position[i, 2]
        px[k] = dx * e1x + dy * e1y + dz * e1z      # the point relative to the centre of mass, projected
        py[k] = dx * e2x + dy * e2y + dz * e2z
        k += 1
    if k == 0:
        return False
    m2 = margin * margin
    # distance to the hull from outside = the least distance to a segment between two points (a hull edge is one)
    for a in range(k):
        if px[a] * px[a] + py[a] * py[a] <= m2:
            return True
        for b in range(a + 1, k):
            ex = px[b] - px[a]
            ey = py[b] - py[a]
            ee = ex * ex + ey * ey
            if ee == 0.0:
                continue
            t = -(px[a] * ex + py[a] * ey) / ee
            if 0.0 < t < 1.0:
                qx = px[a] + t * ex
                qy = py[a] + t * ey
                if qx * qx + qy * qy <= m2:
                    return True
    if k < 3:
        return False
    # inside the hull: the directions of the points seen from the centre leave no gap of pi or more
    for a in range(k):
        ang[a] = math.atan2(py[a], px[a])
    for a in range(1, k):                  # insertion sort (a body has a handful of support points)
        x = ang[a]
        b = a - 1
        while b >= 0 and ang[b] > x:
            ang[b + 1] = ang[b]
            b -= 1
        ang[b + 1] = x
    gap = ang[0] + 2.0 * math.pi - ang[k - 1]
    for a in range(1, k):
        d = ang[a] - ang[a - 1]
        if d > gap:
            gap = d
    return gap < math.pi


@kernel(exact=True)
def sleep_check(count, body_fixed, body_asleep, v, w, body_reach, rwa, threshold, bias, rwa_max):
    """Alg. 5 for every awake dynamic body. Returns the number asleep after it."""
    no_contacts = np.zeros(0, np.int64)
    return sleep_check_supported(count, body_fixed, body_asleep, v, w, body_reach, rwa, threshold, bias, rwa_max,
                                 False, 0, no_contacts, no_contacts, np.zeros((0, 3)), np.zeros((0, 3)), v,
                                 np.zeros(3), 0.0)


@kernel(exact=True)
def sleep_check_supported(count, body_fixed, body_asleep, v, w, body_reach, rwa, threshold, bias, rwa_max,
                          require_support, m, contact_body_a, contact_body_b, contact_point, contact_normal,
                          body_position, gravity, support_margin):
    """Alg. 5 for every awake dynamic body; with ``require_support`` a body below the threshold falls
    asleep only if ``held_by_support`` (else it stays awake, its average unchanged). Returns the number
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
    px = np.empty(most)
    py = np.empty(most)
    ang = np.empty(most)
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
        if r < t2 and require_support and not held_by_support(
                i, start[i], start[i + 1], listed, contact_body_a, contact_point, contact_normal, body_position,
                gravity, support_margin, px, py, ang):
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
