"""Sleeping and the velocity update (004 §3.2, §3.8; digest §1.5-1.6).

Motion bound of a body: motion^2 <= 2 (v.v + (w.w) r_max^2) (Eq. 3.2.3), r_max the farthest surface
point from the centre of mass. Its recency-weighted average (Eq. 3.2.4)
rwa <- bias rwa + (1 - bias) motion^2 puts the body to sleep below threshold^2 (Alg. 5): v = w = 0,
rwa = threshold^2 (so a woken body does not fall straight back asleep), and rwa is capped at rwa_max
(a fast body need not wait long at rest). A sleeping body gets no position or velocity update.

Wake rules handled here: 5 (fewer contacts in the direction of gravity than last step: its support
moved away) and 6 (none at all); 1 is in World's setters, 2 in correction, 3 in resolution.
"""

from __future__ import annotations

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
def sleep_check(count, body_fixed, body_asleep, v, w, body_reach, rwa, threshold, bias, rwa_max):
    """Alg. 5 for every awake dynamic body. Returns the number asleep after it."""
    t2 = threshold * threshold
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
        if r < t2:
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
