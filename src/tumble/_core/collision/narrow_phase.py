"""Narrow phase: one manifold (up to 4 points with feature ids) per candidate geometry pair.

Pairs are dispatched with type_a <= type_b (types.GEOM_*), swapping the pair otherwise, so each
pair function has one argument order; the normal points from contact_geom_a to contact_geom_b.
The pair key (min geom, max geom) keeps the broad phase's sorted order, which the contact cache
merge relies on. Material mixing: friction sqrt(mu_a mu_b), restitution max(e_a, e_b).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from tumble._core import types as T
from tumble._core.collision.manifold_box import collide_box_box, collide_plane_box
from tumble._core.collision.manifold_capsule import (
    collide_capsule_box,
    collide_capsule_capsule,
    collide_capsule_hull,
    collide_plane_capsule,
    collide_sphere_capsule,
)
from tumble._core.collision.manifold_hull import (
    collide_box_hull,
    collide_hull_hull,
    collide_plane_hull,
    collide_sphere_hull,
)
from tumble._core.collision.manifold_sphere import (
    collide_plane_sphere,
    collide_sphere_box,
    collide_sphere_sphere,
)
from tumble._core.config import kernel, kernel_parallel

#: Pair keys pack (geom_a, geom_b) as geom_a * KEY_STRIDE + geom_b.
KEY_STRIDE = 1 << 31
#: Pairs per parallel work item of _collide_pairs (its scratch arrays are allocated per chunk).
PAIR_CHUNK = 64
#: Fewer pairs than this run on the calling thread (``_collide_pairs.serial``): the threads gain
#: nothing on fewer than four chunks, and waking them costs 2.5-40 us (config.kernel_parallel).
PARALLEL_MIN_PAIRS = 4 * PAIR_CHUNK


@kernel(inline="always")
def collide_pair(ta, tb, pa, Ra, sa, ha, pb, Rb, sb, hb, hulls, margin, normal, points, depths, features, scratch):
    """Dispatch on the (ordered) type pair; returns the point count (0 when unsupported).

    ``scratch`` is the box-box clipping work array (collide_box_box).
    """
    if ta == T.GEOM_PLANE:
        if tb == T.GEOM_SPHERE:
            return collide_plane_sphere(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features)
        if tb == T.GEOM_CAPSULE:
            return collide_plane_capsule(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features)
        if tb == T.GEOM_BOX:
            return collide_plane_box(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features)
        if tb == T.GEOM_HULL:
            return collide_plane_hull(pa, Ra, sa, pb, Rb, hb, hulls, margin, normal, points, depths, features)
        return 0
    if ta == T.GEOM_SPHERE:
        if tb == T.GEOM_SPHERE:
            return collide_sphere_sphere(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features)
        if tb == T.GEOM_CAPSULE:
            return collide_sphere_capsule(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features)
        if tb == T.GEOM_BOX:
            return collide_sphere_box(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features)
        return collide_sphere_hull(pa, Ra, sa, pb, Rb, hb, hulls, margin, normal, points, depths, features)
    if ta == T.GEOM_CAPSULE:
        if tb == T.GEOM_CAPSULE:
            return collide_capsule_capsule(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features)
        if tb == T.GEOM_BOX:
            return collide_capsule_box(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features)
        return collide_capsule_hull(pa, Ra, sa, pb, Rb, hb, hulls, margin, normal, points, depths, features)
    if ta == T.GEOM_BOX:
        if tb == T.GEOM_BOX:
            return collide_box_box(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features, scratch)
        return collide_box_hull(pa, Ra, sa, pb, Rb, hb, hulls, margin, normal, points, depths, features)
    return collide_hull_hull(pa, Ra, ha, pb, Rb, hb, hulls, margin, normal, points, depths, features)


_NO_PAD = np.zeros(0)


@kernel_parallel
def _collide_pairs(pairs, pair_count, geom_body, geom_type, geom_size, geom_hull, geom_world_position,
                   geom_world_rotation, geom_friction, geom_restitution, geom_aabb_min, geom_aabb_max, hulls,
                   margin, geom_pad, chunk_count, contact_geom_a, contact_geom_b, contact_body_a, contact_body_b,
                   contact_key, contact_feature, contact_point, contact_normal, contact_depth, contact_friction,
                   contact_restitution):
    """The pairs in chunks of PAIR_CHUNK (independent, so chunks run in parallel): chunk k writes the
    manifolds of its pairs one after the other from row 4 PAIR_CHUNK k on, in pair order, and their
    number to chunk_count[k] (dense blocks: fewer cache lines written, and ``_compact`` moves whole
    blocks). The scratch manifold is allocated once per chunk: a heap allocation per pair was a large
    part of the narrow phase's time. ``geom_pad`` (geoms,) [m]: a speculative pad per geom
    (``geoms.pad_speculative``), the pair's margin being margin + pad_a + pad_b; empty: no pads.
    """
    padded = geom_pad.shape[0] > 0
    chunks = (pair_count + PAIR_CHUNK - 1) // PAIR_CHUNK
    for chunk in prange(chunks):
        normal = np.empty(3)
        points = np.empty((T.MAX_MANIFOLD_POINTS, 3))
        depths = np.empty(T.MAX_MANIFOLD_POINTS)
        features = np.empty(T.MAX_MANIFOLD_POINTS, dtype=np.int64)
        scratch = np.empty((3, 8, 5))
        pa = np.empty(3)
        Ra = np.empty((3, 3))
        sa = np.empty(3)
        pb = np.empty(3)
        Rb = np.empty((3, 3))
        sb = np.empty(3)
        row = T.MAX_MANIFOLD_POINTS * PAIR_CHUNK * chunk
        for p in range(chunk * PAIR_CHUNK, min(pair_count, (chunk + 1) * PAIR_CHUNK)):
            g0 = pairs[p, 0]
            g1 = pairs[p, 1]
            # the broad phase works on enlarged boxes; skip pairs whose tight boxes are apart
            apart = False
            for k in range(3):
                if geom_aabb_min[g0, k] > geom_aabb_max[g1, k] or geom_aabb_min[g1, k] > geom_aabb_max[g0, k]:
                    apart = True
            if apart:
                continue
            ga = g0
            gb = g1
            if geom_type[g0] > geom_type[g1]:
                ga = g1
                gb = g0
            # the poses are copied into the chunk's own arrays instead of passing views such as
            # geom_world_position[ga]: each view increments the shared array's reference count
            for k in range(3):
                pa[k] = geom_world_position[ga, k]
                pb[k] = geom_world_position[gb, k]
                sa[k] = geom_size[ga, k]
                sb[k] = geom_size[gb, k]
                for j in range(3):
                    Ra[k, j] = geom_world_rotation[ga, k, j]
                    Rb[k, j] = geom_world_rotation[gb, k, j]
            pair_margin = margin + geom_pad[ga] + geom_pad[gb] if padded else margin
            n = collide_pair(geom_type[ga], geom_type[gb], pa, Ra, sa, geom_hull[ga], pb, Rb, sb, geom_hull[gb],
                             hulls, pair_margin, normal, points, depths, features, scratch)
            mu = math.sqrt(geom_friction[ga] * geom_friction[gb])
            e = max(geom_restitution[ga], geom_restitution[gb])
            key = min(ga, gb) * KEY_STRIDE + max(ga, gb)
            for i in range(n):
                c = row + i
                contact_geom_a[c] = ga
                contact_geom_b[c] = gb
                contact_body_a[c] = geom_body[ga]
                contact_body_b[c] = geom_body[gb]
                contact_key[c] = key
                contact_feature[c] = features[i]
                for k in range(3):
                    contact_point[c, k] = points[i, k]
                    contact_normal[c, k] = normal[k]
                contact_depth[c] = depths[i]
                contact_friction[c] = mu
                contact_restitution[c] = e
            row += n
        chunk_count[chunk] = row - T.MAX_MANIFOLD_POINTS * PAIR_CHUNK * chunk


@kernel
def _compact(chunks, chunk_count, contact_geom_a, contact_geom_b, contact_body_a, contact_body_b,
             contact_key, contact_feature, contact_point, contact_normal, contact_depth, contact_friction,
             contact_restitution):
    """Close the gaps between the chunks' blocks, keeping pair order (the cache merge needs it)."""
    count = 0
    for chunk in range(chunks):
        for i in range(chunk_count[chunk]):
            src = T.MAX_MANIFOLD_POINTS * PAIR_CHUNK * chunk + i
            if src != count:
                contact_geom_a[count] = contact_geom_a[src]
                contact_geom_b[count] = contact_geom_b[src]
                contact_body_a[count] = contact_body_a[src]
                contact_body_b[count] = contact_body_b[src]
                contact_key[count] = contact_key[src]
                contact_feature[count] = contact_feature[src]
                for k in range(3):
                    contact_point[count, k] = contact_point[src, k]
                    contact_normal[count, k] = contact_normal[src, k]
                contact_depth[count] = contact_depth[src]
                contact_friction[count] = contact_friction[src]
                contact_restitution[count] = contact_restitution[src]
            count += 1
    return count


#: the serial pair tests and the chunks' compaction, for kernels that run the narrow phase inside a larger
#: call (``_core.fused``: same kernels, so the same points bit for bit)
collide_pairs_serial = _collide_pairs.serial
compact_chunks = _compact
NO_PAD = _NO_PAD


def narrow_phase(pairs, pair_count, geom_body, geom_type, geom_size, geom_hull, geom_world_position,
                 geom_world_rotation, geom_friction, geom_restitution, geom_aabb_min, geom_aabb_max, hulls,
                 margin, contact_geom_a, contact_geom_b, contact_body_a, contact_body_b, contact_key, contact_feature,
                 contact_point, contact_normal, contact_depth, contact_friction, contact_restitution, geom_pad=None):
    """Run the pair tests (in parallel) and compact; returns the number of contact points.
    ``geom_pad``: per-geom speculative pads added to the pair's margin (``_collide_pairs``).

    The contact arrays must hold 4 * pair_count rows. The result is identical to a serial loop.
    """
    chunks = (pair_count + PAIR_CHUNK - 1) // PAIR_CHUNK
    chunk_count = np.zeros(chunks, dtype=np.int64)
    args = (contact_geom_a, contact_geom_b, contact_body_a, contact_body_b, contact_key, contact_feature,
            contact_point, contact_normal, contact_depth, contact_friction, contact_restitution)
    collide_pairs = _collide_pairs if pair_count >= PARALLEL_MIN_PAIRS else _collide_pairs.serial
    collide_pairs(pairs, pair_count, geom_body, geom_type, geom_size, geom_hull, geom_world_position,
                   geom_world_rotation, geom_friction, geom_restitution, geom_aabb_min, geom_aabb_max, hulls,
                   margin, _NO_PAD if geom_pad is None else geom_pad, chunk_count, *args)
    if chunks == 1:     # one block from row 0: nothing to close (a kernel call with 13 arguments saved)
        return int(chunk_count[0])
    return _compact(chunks, chunk_count, *args)
