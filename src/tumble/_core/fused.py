"""Consecutive stages in one kernel call, for the steps of small worlds where the calls' fixed cost
(Python glue and ~0.07 us per array argument of each Numba dispatch) outweighs their work (issue 14).

``detect_or_fly``: the collision stage's frames, geom poses and boxes (``geoms.refresh_geoms``) and
the broad phase's steady update (``broad_phase.checked_incremental_pairs``); when no pair overlaps,
the free flight of the step's substeps (``integrate.free_flight``) and the step's finish
(``integrate.finish_bodies``' check and force clearing; no contact, so no depth) in the same call. The kernels it
calls are the ones the stages call, in the same order, so the results are the same bit for bit
(IEEE arithmetic, ``config``); ``tests/determinism/test_free_flight.py`` holds it against the
stages called one by one (``World.profile_stages``). Measured (a free box, pgs at its defaults,
thread CPU time per ``World.step``, median of 7 x 3000, 2-core VM under load): see
``stages.collide_or_fly``.
"""

from __future__ import annotations

import numpy as np

from tumble._core.collision.broad_phase import checked_incremental_pairs
from tumble._core.collision.geoms import refresh_geoms
from tumble._core.config import kernel
from tumble._core.dynamics.integrate import first_nonfinite_body, free_flight

#: detect_or_fly's outcomes: the bodies flew (no pair: the step's dynamics are done); pairs overlap
#: (the broad phase was updated, the narrow phase is the caller's); the steady update did not apply
#: (a bad box or a changed owner: nothing was updated after the boxes, the caller runs the broad
#: phase's full update, which raises or re-initialises)
FLEW, PAIRS, FALLBACK = 0, 1, 2


@kernel
def detect_or_fly(body_position, body_orientation, body_linear_velocity, body_angular_velocity, body_inv_mass,
                  body_inertia_local, body_inv_inertia_local, body_inv_inertia_world, body_force, body_torque,
                  body_fixed, body_count, geom_body, geom_type, geom_size, geom_local_position, geom_local_orientation,
                  geom_count, margin, geom_world_position, geom_world_rotation, geom_aabb_min, geom_aabb_max,
                  hull_verts, hull_vert_start, hull_vert_count, geom_hull, geom_radius, fat_fraction, fat_max,
                  geom_fat_min, geom_fat_max, initialised, geom_static, ep_val, ep_id, ep_aux, old_box, new_box,
                  old_body, old_static, keys, m, gravity, h, substeps, gyroscopic, midpoint, linear_damping,
                  angular_damping):
    """refresh_geoms, the broad phase's steady update on the fat boxes and, with no pair, ``substeps``
    free-flight substeps of ``h`` and the finish (see the module docstring). Returns (outcome, keys,
    pair count, added, removed, swaps, pairs, bad): the broad phase's results for
    ``SweepAndPrune.adopt``, and when the bodies flew the first body whose state became non-finite or
    -1 (then the user forces are cleared), as ``finish_bodies`` returns it."""
    refresh_geoms(body_orientation, body_inv_inertia_local, body_inv_inertia_world, body_count, body_position,
                  geom_body, geom_type, geom_size, geom_local_position, geom_local_orientation, geom_count, margin,
                  geom_world_position, geom_world_rotation, geom_aabb_min, geom_aabb_max, hull_verts,
                  hull_vert_start, hull_vert_count, geom_hull, geom_radius, fat_fraction, fat_max, geom_fat_min,
                  geom_fat_max, initialised)
    bad, changed, keys, m, added, removed, swaps, pairs = checked_incremental_pairs(
        ep_val, ep_id, ep_aux, geom_count, old_box, new_box, geom_fat_min, geom_fat_max, old_body, old_static,
        geom_body, geom_static, keys, m)
    if bad >= 0 or changed:
        return FALLBACK, keys, m, 0, 0, 0, np.empty((0, 2), dtype=np.int64), -1
    if m > 0:
        return PAIRS, keys, m, added, removed, swaps, pairs, -1
    free_flight(body_position, body_orientation, body_linear_velocity, body_angular_velocity, body_inv_mass,
                body_inertia_local, body_inv_inertia_local, body_inv_inertia_world, body_force, body_torque,
                body_fixed, body_count, gravity, h, substeps, gyroscopic, midpoint, linear_damping, angular_damping)
    # finish_bodies' work, in its order: the non-finite check first, then (only if none) the forces cleared
    bad = first_nonfinite_body(body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                               body_count)
    if bad < 0:
        for i in range(body_count):
            for k in range(3):
                body_force[i, k] = 0.0
                body_torque[i, k] = 0.0
    return FLEW, keys, m, added, removed, swaps, pairs, bad
