"""The shock step of a world with nothing to solve, in one kernel call (issue 14).

When the last step ended with a final detection that found no contact point, no joint has rows and
nothing has touched the bodies since (the reuse key, ``ShockSolver._final_contacts_still_valid``),
Fig. 14's step has no row anywhere until its final detect(t + dt): dynamics(a dt) and the shock
propagation's one layer (every dynamic body at height 1, 000 §4: "free-floating bodies are simply
assigned the maximum stack-height") reduce to the external-force updates and the displacement
a dt u_1 + (1 - a) dt u_2, and correction() to a zero displacement. ``contact_free_step`` runs that
and the final detection's frames, boxes, speculative padding and broad phase in one call: ~20 kernel
calls and their NumPy glue become one. It calls the stages' own kernels in the staged step's order
(``integrate_velocities``, ``apply_step_displacement``, ``refresh_geoms``, ``pad_speculative``,
``checked_incremental_pairs``, ``correct_bodies``, ``finish_bodies``' check and clearing) and writes
the displacement exactly as ``accumulate_displacement`` and ``shock_propagation`` accumulate it
(0.0 + a dt u, then + h u), so the state is the staged step's bit for bit
(``tests/determinism/test_free_steps.py`` holds it against ``World.profile_stages``).
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core.collision.broad_phase import checked_incremental_pairs
from tumble._core.collision.geoms import pad_speculative, refresh_geoms
from tumble._core.config import kernel
from tumble._core.dynamics.integrate import (
    correct_bodies,
    first_nonfinite_body,
    integrate_velocities,
    update_body_frames,
)
from tumble._core.solvers.shock.kernels import apply_step_displacement

#: ``contact_free_step``'s outcomes: the state changed since the key was taken (nothing was done: the
#: caller runs the staged step); the bodies moved and the final detection found no pair (the step is
#: done, finish included); they moved and pairs overlap, or the broad phase's steady update did not
#: apply (a bad box or a changed owner) -- the caller runs the final detection's rest and correction()
STALE, FLEW, PAIRS, FALLBACK = 0, 1, 2, 3


@kernel
def same_state(count, body_position, body_orientation, body_fixed, key_position, key_orientation, key_fixed):
    """Whether the first ``count`` bodies' positions, orientations and fixed flags equal the key's
    (element by element with ``==``, as ``np.array_equal``: -0.0 equals 0.0, NaN nothing)."""
    for i in range(count):
        if body_fixed[i] != key_fixed[i]:
            return False
        for k in range(3):
            if body_position[i, k] != key_position[i, k]:
                return False
        for k in range(4):
            if body_orientation[i, k] != key_orientation[i, k]:
                return False
    return True


@kernel
def save_state(count, body_position, body_orientation, body_fixed, key_position, key_orientation, key_fixed):
    """The key of ``same_state``: the first ``count`` bodies' positions, orientations and fixed flags."""
    for i in range(count):
        key_fixed[i] = body_fixed[i]
        for k in range(3):
            key_position[i, k] = body_position[i, k]
        for k in range(4):
            key_orientation[i, k] = body_orientation[i, k]


@kernel
def contact_free_step(key_position, key_orientation, key_fixed, body_position, body_orientation,
                      body_linear_velocity, body_angular_velocity, body_inv_mass, body_inertia_local,
                      body_inv_inertia_local, body_inv_inertia_world, body_force, body_torque, body_fixed, body_count,
                      gravity, dt, a, gyroscopic, free, linear_damping, angular_damping, geom_body, geom_type,
                      geom_size, geom_local_position, geom_local_orientation, geom_count, margin, geom_world_position,
                      geom_world_rotation, geom_aabb_min, geom_aabb_max, hull_verts, hull_vert_start,
                      hull_vert_count, geom_hull, geom_radius, fat_fraction, fat_max, geom_fat_min, geom_fat_max,
                      initialised, pad_dt, geom_static, ep_val, ep_id, ep_aux, old_box, new_box, old_body,
                      old_static, keys, m):
    """The step of a contact-free, joint-free world (see the module docstring), from the reuse key's
    check to the finish. ``a``: the dynamics fraction; ``pad_dt`` > 0: the final detection's
    speculative padding (``ShockSettings.speculative_contacts``). Returns (outcome, keys, pair count,
    added, removed, swaps, pairs, geom_pad, padded, bad, layers): the broad phase's results for
    ``SweepAndPrune.adopt`` (PAIRS), the padding the narrow phase takes (PAIRS, FALLBACK; only when
    ``padded``: with no geom padded ``stages.collide`` passes none), after FLEW the first non-finite
    body or -1 (then the user forces are cleared and the key holds the new state), and the layer
    count of the propagation (1, or 0 without a dynamic body)."""
    no_pairs = np.empty((0, 2), dtype=np.int64)
    if not same_state(body_count, body_position, body_orientation, body_fixed, key_position, key_orientation,
                      key_fixed):
        return STALE, keys, m, 0, 0, 0, no_pairs, np.empty(0), False, -1, 0
    n = body_count
    # detect(t) is the last step's detect(t + dt): only the frames are refreshed (ShockSolver.step)
    update_body_frames(body_orientation, body_inv_inertia_local, body_inv_inertia_world, n)
    # dynamics(a dt) without rows: u_1 = u + a dt M^-1 f_ext (000 eq. 45d), disp = 0 + a dt u_1
    integrate_velocities(body_linear_velocity, body_angular_velocity, body_orientation, body_inv_mass,
                         body_inertia_local, body_inv_inertia_world, body_force, body_torque, body_fixed, n, gravity,
                         a * dt, gyroscopic, linear_damping, angular_damping)
    disp_lin = np.zeros((n, 3))
    disp_ang = np.zeros((n, 3))
    ad = a * dt
    for i in range(n):
        if body_fixed[i]:
            continue
        for c in range(3):
            disp_lin[i, c] += ad * body_linear_velocity[i, c]
            disp_ang[i, c] += ad * body_angular_velocity[i, c]
    flow_ang = disp_ang.copy()
    layers = 0      # articulated_heights with no row: 1 when any body is dynamic
    for i in range(n):
        if not body_fixed[i]:
            layers = 1
    # shock propagation's one layer (every dynamic body, height 1): u_2 = u_1 + h M^-1 f_ext, disp += h u_2
    h = (1.0 - a) * dt
    integrate_velocities(body_linear_velocity, body_angular_velocity, body_orientation, body_inv_mass,
                         body_inertia_local, body_inv_inertia_world, body_force, body_torque, body_fixed, n, gravity,
                         h, gyroscopic, linear_damping, angular_damping)
    for i in range(n):
        if body_fixed[i]:
            continue
        for c in range(3):
            disp_lin[i, c] += h * body_linear_velocity[i, c]
            disp_ang[i, c] += h * body_angular_velocity[i, c]
    apply_step_displacement(body_position, body_orientation, body_angular_velocity, body_inertia_local,
                            body_inv_inertia_local, body_fixed, n, disp_lin, disp_ang, flow_ang, h, dt, free)
    # detect(t + dt): frames, boxes, speculative padding, broad phase (stages.collide)
    refresh_geoms(body_orientation, body_inv_inertia_local, body_inv_inertia_world, n, body_position, geom_body,
                  geom_type, geom_size, geom_local_position, geom_local_orientation, geom_count, margin,
                  geom_world_position, geom_world_rotation, geom_aabb_min, geom_aabb_max, hull_verts,
                  hull_vert_start, hull_vert_count, geom_hull, geom_radius, fat_fraction, fat_max, geom_fat_min,
                  geom_fat_max, initialised)
    pad = np.empty(geom_count)
    padded = False
    if pad_dt > 0.0 and geom_count:
        padded = pad_speculative(geom_body, geom_local_position, geom_radius, geom_count, body_fixed,
                                 body_linear_velocity, body_angular_velocity, pad_dt, geom_aabb_min, geom_aabb_max,
                                 geom_fat_min, geom_fat_max, pad) > 0
    bad, changed, keys, m, added, removed, swaps, pairs = checked_incremental_pairs(
        ep_val, ep_id, ep_aux, geom_count, old_box, new_box, geom_fat_min, geom_fat_max, old_body, old_static,
        geom_body, geom_static, keys, m)
    if bad >= 0 or changed:
        return FALLBACK, keys, m, 0, 0, 0, no_pairs, pad, padded, -1, layers
    if m > 0:
        return PAIRS, keys, m, added, removed, swaps, pairs, pad, padded, -1, layers
    # correction() with no row: the displacement is zero (x += 0.0 as the staged call adds it)
    for i in range(n):
        for c in range(3):
            disp_lin[i, c] = 0.0
            disp_ang[i, c] = 0.0
    correct_bodies(n, body_fixed, disp_lin, disp_ang, body_position, body_orientation, body_angular_velocity)
    # finish_bodies' work in its order: the check, then (only if none) the forces cleared; no contact: depth 0
    bad = first_nonfinite_body(body_position, body_orientation, body_linear_velocity, body_angular_velocity, n)
    if bad < 0:
        for i in range(n):
            for k in range(3):
                body_force[i, k] = 0.0
                body_torque[i, k] = 0.0
    save_state(n, body_position, body_orientation, body_fixed, key_position, key_orientation, key_fixed)
    return FLEW, keys, m, added, removed, swaps, pairs, pad, padded, bad, layers


# ---------------------------------------------------------------- the staged step's glue as kernels
@kernel
def unseen_contacts(count, row_body, seen, unseen):
    """unseen[c] for the final contacts' normal rows c < ``count``: a side is a dynamic body (index >= 0)
    that ``seen`` (n + 1,) does not mark (no row in the step's dynamics). Returns whether any is. (Was
    eight NumPy temporaries per step, ``ShockSolver._final_correction``.)"""
    found = False
    for c in range(count):
        a = row_body[c, 0]
        b = row_body[c, 1]
        u = (a >= 0 and not seen[a]) or (b >= 0 and not seen[b])
        unseen[c] = u
        if u:
            found = True
    return found


@kernel
def largest_displacement(count, disp_lin, disp_ang):
    """max(max |disp_lin|, max |disp_ang|) over the first ``count`` rows, as the NumPy expression
    ``max(float(np.abs(disp_lin).max()), float(np.abs(disp_ang).max()))`` gives it: a NaN in disp_lin
    gives NaN; one in disp_ang only (Python's max keeps its first argument against a NaN) gives the
    linear part's maximum."""
    lin = 0.0
    ang = 0.0
    lin_nan = False
    ang_nan = False
    for i in range(count):
        for k in range(3):
            x = abs(disp_lin[i, k])
            if x != x:
                lin_nan = True
            elif x > lin:
                lin = x
            y = abs(disp_ang[i, k])
            if y != y:
                ang_nan = True
            elif y > ang:
                ang = y
    if lin_nan:
        return math.nan
    if ang_nan:
        return lin
    return ang if ang > lin else lin
