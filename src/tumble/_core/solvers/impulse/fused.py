"""The impulse step's first stages in one kernel call, and with no pair the whole step (issue 14).

Alg. 6 moves the awake bodies first, then detects. ``move_and_detect`` runs the position update
(``integrate.integrate_positions`` or its midpoint twin, every body neither fixed nor asleep), the
detection's frames, geom poses and boxes (``geoms.refresh_geoms``) and the broad phase's steady update
(``broad_phase.checked_incremental_pairs``) in one call; when no pair overlaps there is no contact, so
no batch, correction or resolution (a batch is bodies joined by contacts, 004 §3.1), and the same call
runs the rest of the step: wake rules 5-6 and the velocity update (``sleeping.velocity_update``), the
sleep check (``sleeping.sleep_check_supported``) and the finish (``integrate.finish_bodies``' check and
force clearing; no contact, so no depth). The kernels are the staged step's, in its order, so the
result is the same bit for bit (``tests/determinism/test_free_steps.py`` holds it against
``World.profile_stages``). Measured: see ``ImpulseSolver.step``.
"""

from __future__ import annotations

import numpy as np

from tumble._core.collision.broad_phase import checked_incremental_pairs
from tumble._core.collision.geoms import refresh_geoms
from tumble._core.config import kernel
from tumble._core.dynamics.integrate import first_nonfinite_body, integrate_positions, integrate_positions_midpoint
from tumble._core.solvers.impulse.sleeping import sleep_check_supported, velocity_update

#: ``move_and_detect``'s outcomes: no pair (the step is done, finish included); pairs overlap (the broad
#: phase was updated; the narrow phase and the rest are the caller's); the steady update did not apply (a
#: bad box or a changed owner: the caller runs the broad phase's full update, which raises or re-initialises)
FLEW, PAIRS, FALLBACK = 0, 1, 2


@kernel(exact=True)
def move_and_detect(body_position, body_orientation, body_linear_velocity, body_angular_velocity, body_mass,
                    body_inv_mass, body_inertia_local, body_inv_inertia_local, body_inv_inertia_world, body_force,
                    body_torque, body_fixed, body_count, body_asleep, body_support_count, body_reach,
                    body_sleep_motion, midpoint, gyroscopic, dt, geom_body, geom_type, geom_size, geom_local_position,
                    geom_local_orientation, geom_count, margin, geom_world_position, geom_world_rotation,
                    geom_aabb_min, geom_aabb_max, hull_verts, hull_vert_start, hull_vert_count, geom_hull,
                    geom_radius, fat_fraction, fat_max, geom_fat_min, geom_fat_max, initialised, geom_static, ep_val,
                    ep_id, ep_aux, old_box, new_box, old_body, old_static, keys, m, contact_body_a, contact_body_b,
                    contact_point, contact_normal, contact_friction, gravity, gravity_damping, damping_threshold,
                    linear_damping, angular_damping, sleep_threshold, sleep_bias, rwa_max, require_support,
                    support_margin):
    """See the module docstring. The contact arrays are those of the store the detection would fill
    (none is read: no contact). Returns (outcome, keys, pair count, added, removed, swaps, pairs, bad,
    woken, damped, asleep, fixed): the broad phase's results for ``SweepAndPrune.adopt``; after FLEW
    the first non-finite body or -1 (then the user forces are cleared), the bodies woken by rule 6,
    gravity-damped, asleep, and the fixed bodies."""
    n = body_count
    frozen = np.empty(n, np.bool_)
    for i in range(n):
        frozen[i] = body_fixed[i] or body_asleep[i]
    if midpoint:
        integrate_positions_midpoint(body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                                     body_inertia_local, body_inv_inertia_local, frozen, n, dt)
    else:
        integrate_positions(body_position, body_orientation, body_linear_velocity, body_angular_velocity, frozen, n,
                            dt)
    refresh_geoms(body_orientation, body_inv_inertia_local, body_inv_inertia_world, n, body_position, geom_body,
                  geom_type, geom_size, geom_local_position, geom_local_orientation, geom_count, margin,
                  geom_world_position, geom_world_rotation, geom_aabb_min, geom_aabb_max, hull_verts,
                  hull_vert_start, hull_vert_count, geom_hull, geom_radius, fat_fraction, fat_max, geom_fat_min,
                  geom_fat_max, initialised)
    bad, changed, keys, m, added, removed, swaps, pairs = checked_incremental_pairs(
        ep_val, ep_id, ep_aux, geom_count, old_box, new_box, geom_fat_min, geom_fat_max, old_body, old_static,
        geom_body, geom_static, keys, m)
    if bad >= 0 or changed:
        return FALLBACK, keys, m, 0, 0, 0, np.empty((0, 2), dtype=np.int64), -1, 0, 0, 0, 0
    if m > 0:
        return PAIRS, keys, m, added, removed, swaps, pairs, -1, 0, 0, 0, 0
    woken, damped = velocity_update(
        0, contact_body_a, contact_body_b, contact_normal, n, body_fixed, body_asleep, body_support_count, body_mass,
        body_linear_velocity, body_angular_velocity, body_reach, body_force, body_torque, body_orientation,
        body_inv_mass, body_inertia_local, body_inv_inertia_world, gravity, dt, gravity_damping, damping_threshold,
        gyroscopic, linear_damping, angular_damping)
    asleep = sleep_check_supported(n, body_fixed, body_asleep, body_linear_velocity, body_angular_velocity,
                                   body_reach, body_sleep_motion, sleep_threshold, sleep_bias, rwa_max,
                                   require_support, 0, contact_body_a, contact_body_b, contact_point, contact_normal,
                                   contact_friction, body_position, gravity, support_margin)
    fixed = 0
    for i in range(n):
        if body_fixed[i]:
            fixed += 1
    # finish_bodies' work in its order: the check, then (only if none) the forces cleared
    bad = first_nonfinite_body(body_position, body_orientation, body_linear_velocity, body_angular_velocity, n)
    if bad < 0:
        for i in range(n):
            for k in range(3):
                body_force[i, k] = 0.0
                body_torque[i, k] = 0.0
    return FLEW, keys, m, added, removed, swaps, pairs, bad, woken, damped, asleep, fixed
