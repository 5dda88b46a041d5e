"""Geometry world poses and bounding boxes, refreshed once per step."""

from __future__ import annotations

import math

import numpy as np

from tumble._core import types as T
from tumble._core.config import kernel
from tumble._core.dynamics.integrate import update_body_frames
from tumble._core.math3d import quat_mul, quat_to_matrix

#: Half extent [m] used for the unbounded directions of a plane's box.
PLANE_EXTENT = 1.0e18
#: A fat box reaching farther than this many fat margins beyond its tight box on a side is refit
#: (refresh_fat_aabbs): 4 is the most a box kept by the snapped refit reaches while its body moves inside
#: it, so only boxes grown by the speculative pad (or a tight box shrunk by a turn) are refit.
FAT_REFIT_GAP = 4.0


@kernel
def update_geoms(geom_body, geom_type, geom_size, geom_local_position, geom_local_orientation,
                 body_position, body_orientation, count, margin,
                 geom_world_position, geom_world_rotation, geom_aabb_min, geom_aabb_max, hull_verts,
                 hull_vert_start, hull_vert_count, geom_hull):
    """World pose p = x + R_b p_local, R = R(q_b q_local); AABB enlarged by ``margin`` [m].

    Boxes use the exact extent sum_k |R[:, k]| h_k; hulls the exact extent of their vertices;
    spheres and capsules their analytic extents; planes an enormous box open on the half-space side.
    """
    Rb = np.empty((3, 3))
    q = np.empty(4)
    for g in range(count):
        b = geom_body[g]
        quat_to_matrix(body_orientation[b], Rb)
        for k in range(3):
            geom_world_position[g, k] = body_position[b, k] + Rb[k, 0] * geom_local_position[g, 0] \
                + Rb[k, 1] * geom_local_position[g, 1] + Rb[k, 2] * geom_local_position[g, 2]
        quat_mul(body_orientation[b], geom_local_orientation[g], q)
        n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
        for k in range(4):
            q[k] /= n
        R = geom_world_rotation[g]
        quat_to_matrix(q, R)
        p = geom_world_position[g]
        t = geom_type[g]
        for k in range(3):
            e = 0.0
            if t == T.GEOM_SPHERE:
                e = geom_size[g, 0]
            elif t == T.GEOM_BOX:
                e = abs(R[k, 0]) * geom_size[g, 0] + abs(R[k, 1]) * geom_size[g, 1] + abs(R[k, 2]) * geom_size[g, 2]
            elif t == T.GEOM_CAPSULE:
                e = abs(R[k, 2]) * geom_size[g, 1] + geom_size[g, 0]
            elif t == T.GEOM_PLANE:
                e = PLANE_EXTENT
            if t == T.GEOM_HULL:
                h = geom_hull[g]
                lo = 1e300
                hi = -1e300
                for v in range(hull_vert_start[h], hull_vert_start[h] + hull_vert_count[h]):
                    x = R[k, 0] * hull_verts[v, 0] + R[k, 1] * hull_verts[v, 1] + R[k, 2] * hull_verts[v, 2]
                    lo = min(lo, x)
                    hi = max(hi, x)
                geom_aabb_min[g, k] = p[k] + lo - margin
                geom_aabb_max[g, k] = p[k] + hi + margin
            elif t == T.GEOM_PLANE:
                # a horizontal plane (normal +z) only reaches up to its surface on z; tilted planes
                # stay unbounded on every axis
                nz = R[k, 2]
                if abs(nz) > 1.0 - 1e-12:
                    if nz > 0.0:
                        geom_aabb_min[g, k] = -PLANE_EXTENT
                        geom_aabb_max[g, k] = p[k] + margin
                    else:
                        geom_aabb_min[g, k] = p[k] - margin
                        geom_aabb_max[g, k] = PLANE_EXTENT
                else:
                    geom_aabb_min[g, k] = -PLANE_EXTENT
                    geom_aabb_max[g, k] = PLANE_EXTENT
            else:
                geom_aabb_min[g, k] = p[k] - e - margin
                geom_aabb_max[g, k] = p[k] + e + margin


@kernel
def refresh_fat_aabbs(geom_aabb_min, geom_aabb_max, geom_radius, count, fat_fraction, fat_max,
                      fat_min_out, fat_max_out, initialised):
    """Keep an enlarged, grid-snapped box per geometry and move it only when the tight box leaves it.

    This is how the broad phase exploits temporal coherence (Box2D's fat AABBs): a body resting or
    jittering inside its fat box presents identical bounds step after step, so the incremental
    sweep-and-prune sees no endpoint move at all. The fat margin is ``fat_fraction`` of the bounding
    radius, at most ``fat_max`` [m]; bounds are snapped outward to a grid of that size so that
    bodies of one size in one row (a pyramid layer, a wall course) share identical bounds and
    their order never churns. Returns the number of boxes that moved.

    A box is also refit when it reaches farther than FAT_REFIT_GAP m beyond the tight box on a side
    (m the fat margin): the snapped refit leaves a gap in [m, 2m) per side and a body moving inside
    its box (by less than 2m, or it leaves it) keeps each gap under 4m, so a larger gap means that
    something else grew the box: ``pad_speculative`` grows it to hold the padded tight box, and a
    body that kept moving inside its last padded reach kept every box it was ever padded to. In
    tower_roof under shock (issue 19) each fallen brick's box spanned its fall (median 1.54 m tall
    for a 0.2 m tight box at t = 15.8 s): 43 k broad-phase pairs for 2.5 k overlapping tight boxes,
    and the contact stores, reserved at 4 points a pair, doubled to 345 k rows in the slow steps.
    The refit only drops pairs whose tight boxes are apart, which the narrow phase skips anyway.
    """
    moved = 0
    for g in range(count):
        r = geom_radius[g]
        m = fat_fraction * r
        if not (m < fat_max):  # also catches inf radius (planes)
            m = fat_max
        need = not initialised
        if not need:
            gap = FAT_REFIT_GAP * m
            for k in range(3):
                lo = geom_aabb_min[g, k]
                hi = geom_aabb_max[g, k]
                if lo < fat_min_out[g, k] or hi > fat_max_out[g, k] or lo - fat_min_out[g, k] > gap \
                        or fat_max_out[g, k] - hi > gap:
                    need = True
                    break
        if need:
            moved += 1
            for k in range(3):
                lo = geom_aabb_min[g, k]
                hi = geom_aabb_max[g, k]
                if abs(lo) > 1e17 or abs(hi) > 1e17:
                    fat_min_out[g, k] = lo
                    fat_max_out[g, k] = hi
                else:
                    fat_min_out[g, k] = math.floor((lo - m) / m) * m
                    fat_max_out[g, k] = math.ceil((hi + m) / m) * m
    return moved


@kernel
def refresh_geoms(body_orientation, body_inv_inertia_local, body_inv_inertia_world, body_count, body_position,
                  geom_body, geom_type, geom_size, geom_local_position, geom_local_orientation, geom_count, margin,
                  geom_world_position, geom_world_rotation, geom_aabb_min, geom_aabb_max, hull_verts, hull_vert_start,
                  hull_vert_count, geom_hull, geom_radius, fat_fraction, fat_max, geom_fat_min, geom_fat_max,
                  initialised):
    """The collision stage's first three kernels in one call (one dispatch instead of three: each
    call costs ~0.7 us plus ~0.13 us per array argument, the bulk of a small scene's step):
    ``update_body_frames``, ``update_geoms``, ``refresh_fat_aabbs``. Returns the boxes moved."""
    update_body_frames(body_orientation, body_inv_inertia_local, body_inv_inertia_world, body_count)
    update_geoms(geom_body, geom_type, geom_size, geom_local_position, geom_local_orientation, body_position,
                 body_orientation, geom_count, margin, geom_world_position, geom_world_rotation, geom_aabb_min,
                 geom_aabb_max, hull_verts, hull_vert_start, hull_vert_count, geom_hull)
    return refresh_fat_aabbs(geom_aabb_min, geom_aabb_max, geom_radius, geom_count, fat_fraction, fat_max,
                             geom_fat_min, geom_fat_max, initialised)


@kernel
def pad_speculative(geom_body, geom_local_position, geom_radius, count, body_fixed, v_lin, v_ang, dt, geom_aabb_min,
                    geom_aabb_max, geom_fat_min, geom_fat_max, geom_pad):
    """Speculative padding of each geom of a moving body [tumble, issue 18]: pad = dt (|v| + |w| r),
    r = |local position| + bounding radius, an upper bound of how far any point of the geom moves in
    the next step at the body's current velocities (linear over the step). The tight box grows by the
    pad on every side and the fat box to contain it, so the broad phase pairs what may meet within the
    step; the narrow phase then reports points up to margin + pad_a + pad_b apart (speculative rows:
    they may close their gap, no more). Fixed bodies and geoms with an infinite radius get 0.
    Returns the number of padded geoms."""
    padded = 0
    for g in range(count):
        geom_pad[g] = 0.0
        b = geom_body[g]
        if body_fixed[b]:
            continue
        rad = geom_radius[g]
        if not math.isfinite(rad):
            continue
        r = math.sqrt(geom_local_position[g, 0] ** 2 + geom_local_position[g, 1] ** 2
                      + geom_local_position[g, 2] ** 2) + rad
        v = math.sqrt(v_lin[b, 0] ** 2 + v_lin[b, 1] ** 2 + v_lin[b, 2] ** 2)
        w = math.sqrt(v_ang[b, 0] ** 2 + v_ang[b, 1] ** 2 + v_ang[b, 2] ** 2)
        p = dt * (v + w * r)
        if p <= 0.0:
            continue
        geom_pad[g] = p
        padded += 1
        for k in range(3):
            geom_aabb_min[g, k] -= p
            geom_aabb_max[g, k] += p
            if geom_fat_min[g, k] > geom_aabb_min[g, k]:
                geom_fat_min[g, k] = geom_aabb_min[g, k]
            if geom_fat_max[g, k] < geom_aabb_max[g, k]:
                geom_fat_max[g, k] = geom_aabb_max[g, k]
    return padded
