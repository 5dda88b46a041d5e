"""Consecutive stages in one kernel call, for the steps of small worlds where the calls' fixed cost
(Python glue and ~0.07 us per array argument of each Numba dispatch) outweighs their work (issue 14).

``detect``: the whole collision stage of a steady step (``stages.collide``): ``refresh_geoms``, the
broad phase's steady update, the narrow phase and the contact cache in one call; ``narrow_and_match``:
the narrow phase and the cache (``stages.collide_pairs``). Both take the hull arrays one by one and
pack them into ``HullArrays`` inside the kernel: a NamedTuple of 15 arrays as one argument cost
2.4 us per dispatch, the 15 arrays ~1 us.

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
from tumble._core.collision.hull import HullArrays
from tumble._core.collision.narrow_phase import PAIR_CHUNK, PARALLEL_MIN_PAIRS, collide_pairs_serial, compact_chunks
from tumble._core.collision.pair_filter import filter_pairs
from tumble._core.config import kernel
from tumble._core.contact.cache import match_cache
from tumble._core.dynamics.integrate import first_nonfinite_body, free_flight

#: detect_or_fly's outcomes: the bodies flew (no pair: the step's dynamics are done); pairs overlap
#: (the broad phase was updated, the narrow phase is the caller's); the steady update did not apply
#: (a bad box or a changed owner: nothing was updated after the boxes, the caller runs the broad
#: phase's full update, which raises or re-initialises)
FLEW, PAIRS, FALLBACK = 0, 1, 2
#: ``detect``'s outcome when it ran the narrow phase and the cache too (its other outcomes: PAIRS, the
#: narrow phase left to the caller; FALLBACK)
DETECTED = 3


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


@kernel
def _narrow_and_match(pairs, pair_count, geom_body, geom_type, geom_size, geom_hull, geom_world_position,
                      geom_world_rotation, geom_friction, geom_restitution, geom_aabb_min, geom_aabb_max, hulls, margin,
                      geom_pad, contact_geom_a, contact_geom_b, contact_body_a, contact_body_b, contact_key,
                      contact_feature, contact_point, contact_normal, contact_depth, contact_friction,
                      contact_restitution, contact_normal_impulse, contact_friction_impulse, contact_match,
                      contact_warm, prev_count, prev_key, prev_feature, prev_normal_impulse, prev_friction_impulse,
                      prev_point, radius):
    """``narrow_phase`` on the calling thread (``pair_count`` < PARALLEL_MIN_PAIRS: the serial pair
    tests, then ``_compact`` when there is more than one chunk) and ``match_cache``: (points, hits)."""
    chunks = (pair_count + PAIR_CHUNK - 1) // PAIR_CHUNK
    chunk_count = np.zeros(chunks, dtype=np.int64)
    collide_pairs_serial(pairs, pair_count, geom_body, geom_type, geom_size, geom_hull, geom_world_position,
                         geom_world_rotation, geom_friction, geom_restitution, geom_aabb_min, geom_aabb_max, hulls,
                         margin, geom_pad, chunk_count, contact_geom_a, contact_geom_b, contact_body_a,
                         contact_body_b, contact_key, contact_feature, contact_point, contact_normal, contact_depth,
                         contact_friction, contact_restitution)
    if chunks == 1:
        count = chunk_count[0]
    else:
        count = compact_chunks(chunks, chunk_count, contact_geom_a, contact_geom_b, contact_body_a, contact_body_b,
                         contact_key, contact_feature, contact_point, contact_normal, contact_depth, contact_friction,
                         contact_restitution)
    hits = match_cache(count, contact_key, contact_feature, contact_normal_impulse, contact_friction_impulse,
                       contact_match, contact_warm, prev_count, prev_key, prev_feature, prev_normal_impulse,
                       prev_friction_impulse, contact_point, prev_point, radius)
    return count, hits


@kernel
def narrow_and_match(pairs, pair_count, geom_body, geom_type, geom_size, geom_hull, geom_world_position,
                     geom_world_rotation, geom_friction, geom_restitution, geom_aabb_min, geom_aabb_max, vert_start,
                     vert_count, verts, face_start, face_count, face_normal, face_offset, face_vert_start,
                     face_vert_count, face_verts, edge_start, edge_count, edges, edge_faces, hull_radius, margin,
                     geom_pad, contact_geom_a, contact_geom_b, contact_body_a, contact_body_b, contact_key,
                     contact_feature, contact_point, contact_normal, contact_depth, contact_friction,
                     contact_restitution, contact_normal_impulse, contact_friction_impulse, contact_match,
                     contact_warm, prev_count, prev_key, prev_feature, prev_normal_impulse, prev_friction_impulse,
                     prev_point, radius):
    """The narrow phase (serial, ``pair_count`` >= 1 and < PARALLEL_MIN_PAIRS) and the contact cache in
    one call, the hull arrays one by one (``HullArrays``' field order): (points, hits)."""
    hulls = HullArrays(vert_start, vert_count, verts, face_start, face_count, face_normal, face_offset,
                       face_vert_start, face_vert_count, face_verts, edge_start, edge_count, edges, edge_faces,
                       hull_radius)
    return _narrow_and_match(pairs, pair_count, geom_body, geom_type, geom_size, geom_hull, geom_world_position,
                             geom_world_rotation, geom_friction, geom_restitution, geom_aabb_min, geom_aabb_max, hulls,
                             margin, geom_pad, contact_geom_a, contact_geom_b, contact_body_a, contact_body_b,
                             contact_key, contact_feature, contact_point, contact_normal, contact_depth,
                             contact_friction, contact_restitution, contact_normal_impulse, contact_friction_impulse,
                             contact_match, contact_warm, prev_count, prev_key, prev_feature, prev_normal_impulse,
                             prev_friction_impulse, prev_point, radius)


@kernel
def detect(body_orientation, body_inv_inertia_local, body_inv_inertia_world, body_count, body_position, geom_body,
           geom_type, geom_size, geom_local_position, geom_local_orientation, geom_count, box_margin,
           geom_world_position, geom_world_rotation, geom_aabb_min, geom_aabb_max, geom_hull, geom_radius,
           fat_fraction, fat_max, geom_fat_min, geom_fat_max, initialised, geom_static, ep_val, ep_id, ep_aux, old_box,
           new_box, old_body, old_static, keys, m, geom_friction, geom_restitution, vert_start, vert_count, verts,
           face_start, face_count, face_normal, face_offset, face_vert_start, face_vert_count, face_verts, edge_start,
           edge_count, edges, edge_faces, hull_radius, margin, geom_pad, contact_geom_a, contact_geom_b,
           contact_body_a, contact_body_b, contact_key, contact_feature, contact_point, contact_normal, contact_depth,
           contact_friction, contact_restitution, contact_normal_impulse, contact_friction_impulse, contact_match,
           contact_warm, prev_count, prev_key, prev_feature, prev_normal_impulse, prev_friction_impulse, prev_point,
           radius, excluded):
    """The collision stage of a steady step in one call: ``refresh_geoms`` (boxes grown by
    ``box_margin``), the broad phase's steady update on the fat boxes, ``filter_pairs`` when ``excluded``
    (sorted body pair keys: joined bodies, disable_collision) is not empty, and when the pairs are fewer than
    PARALLEL_MIN_PAIRS and the contact arrays hold 4 per pair + 1 (what ``stages.collide_pairs``
    reserves), the serial narrow phase (``margin``) and ``match_cache`` (``_narrow_and_match``): the
    kernels ``stages.collide`` calls, in its order, so bit for bit the same. Returns (outcome, keys,
    pair count, added, removed, swaps, pairs, points, hits, kept): ``kept`` the pairs left after the
    filter (the narrow phase's pairs, ``pairs``' rows). DETECTED (all done), PAIRS (the broad phase
    updated, the narrow phase is the caller's: too many pairs or too small a contact store) or FALLBACK
    (a bad box or a changed owner: nothing after the boxes was done; the caller runs the broad phase's
    full update)."""
    refresh_geoms(body_orientation, body_inv_inertia_local, body_inv_inertia_world, body_count, body_position,
                  geom_body, geom_type, geom_size, geom_local_position, geom_local_orientation, geom_count, box_margin,
                  geom_world_position, geom_world_rotation, geom_aabb_min, geom_aabb_max, verts, vert_start,
                  vert_count, geom_hull, geom_radius, fat_fraction, fat_max, geom_fat_min, geom_fat_max, initialised)
    bad, changed, keys, m, added, removed, swaps, pairs = checked_incremental_pairs(
        ep_val, ep_id, ep_aux, geom_count, old_box, new_box, geom_fat_min, geom_fat_max, old_body, old_static,
        geom_body, geom_static, keys, m)
    if bad >= 0 or changed:
        return FALLBACK, keys, m, 0, 0, 0, pairs, 0, 0, 0
    kept_pairs = filter_pairs(pairs, geom_body, excluded)    # all of them when nothing is excluded
    kept = kept_pairs.shape[0]
    if kept >= PARALLEL_MIN_PAIRS or 4 * kept + 1 > contact_key.shape[0]:
        return PAIRS, keys, m, added, removed, swaps, kept_pairs, 0, 0, kept
    if kept == 0:      # nothing touches: no narrow phase, no cache to match
        return DETECTED, keys, m, added, removed, swaps, kept_pairs, 0, 0, 0
    hulls = HullArrays(vert_start, vert_count, verts, face_start, face_count, face_normal, face_offset,
                       face_vert_start, face_vert_count, face_verts, edge_start, edge_count, edges, edge_faces,
                       hull_radius)
    count, hits = _narrow_and_match(kept_pairs, kept, geom_body, geom_type, geom_size, geom_hull, geom_world_position,
                                    geom_world_rotation, geom_friction, geom_restitution, geom_aabb_min,
                                    geom_aabb_max, hulls, margin, geom_pad, contact_geom_a, contact_geom_b,
                                    contact_body_a, contact_body_b, contact_key, contact_feature, contact_point,
                                    contact_normal, contact_depth, contact_friction, contact_restitution,
                                    contact_normal_impulse, contact_friction_impulse, contact_match, contact_warm,
                                    prev_count, prev_key, prev_feature, prev_normal_impulse, prev_friction_impulse,
                                    prev_point, radius)
    return DETECTED, keys, m, added, removed, swaps, kept_pairs, count, hits, kept
