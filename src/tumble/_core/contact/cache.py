"""Contact cache: warm starting by (shape pair, feature id), Catto 001 §8, Algorithm 5.

After each step the solved impulses are kept with their key (geometry pair) and feature id
(from the clipping edges, 001 §8.2). The next step's points are matched to them: both lists are
sorted by pair key (the broad phase emits sorted pairs), so one merge pass finds each pair's old
points, and within a pair (at most 4 x 4 points) the feature ids are compared. With a ``radius``
> 0, a point whose feature id found no old point then takes the nearest unclaimed old point of its
pair closer than ``radius`` [m] (a persistent manifold matched by distance): two boxes resting
face on face have two equally good reference faces, and the clipping's choice, so the feature ids,
flips with every tiny tilt; each flip dropped the warm start of the whole interface (a column of
ten unit boxes at the pgs defaults missed 441 of 2400 points in 10 s and rocked until it fell). A hit copies the
normal impulse and the world friction-impulse vector and records which old point it matched
(``match``, so a solver can carry its own per-contact values, e.g. ``carry_matched``); a miss starts
from zero with match -1.
"""

from __future__ import annotations

import numpy as np

from tumble._core.config import kernel


@kernel
def match_cache(count, key, feature, normal_impulse, friction_impulse, match, warm,
                prev_count, prev_key, prev_feature, prev_normal_impulse, prev_friction_impulse,
                point, prev_point, radius):
    """Fill ``normal_impulse``/``friction_impulse`` of the new points from the previous step and
    ``match`` (the index of the previous point each one continues, -1 for none); ``radius`` [m] > 0
    adds the match by distance for points whose feature id found nothing (module docstring).
    Returns the number of hits."""
    claimed = np.zeros(prev_count if radius > 0.0 else 0, dtype=np.bool_)
    hits = 0
    j = 0
    i = 0
    while i < count:
        k = key[i]
        stop = i
        while stop < count and key[stop] == k:
            stop += 1
        while j < prev_count and prev_key[j] < k:
            j += 1
        pstop = j
        while pstop < prev_count and prev_key[pstop] == k:
            pstop += 1
        for c in range(i, stop):
            warm[c] = False
            normal_impulse[c] = 0.0
            friction_impulse[c, 0] = 0.0
            friction_impulse[c, 1] = 0.0
            friction_impulse[c, 2] = 0.0
            match[c] = -1
            for p in range(j, pstop):
                if prev_feature[p] == feature[c]:
                    normal_impulse[c] = prev_normal_impulse[p]
                    friction_impulse[c, 0] = prev_friction_impulse[p, 0]
                    friction_impulse[c, 1] = prev_friction_impulse[p, 1]
                    friction_impulse[c, 2] = prev_friction_impulse[p, 2]
                    match[c] = p
                    warm[c] = True
                    hits += 1
                    if radius > 0.0:
                        claimed[p] = True
                    break
        if radius > 0.0:
            for c in range(i, stop):
                if match[c] >= 0:
                    continue
                best = -1
                best_d2 = radius * radius
                for p in range(j, pstop):
                    if claimed[p]:
                        continue
                    d2 = 0.0
                    for k3 in range(3):
                        e = point[c, k3] - prev_point[p, k3]
                        d2 += e * e
                    if d2 < best_d2:
                        best_d2 = d2
                        best = p
                if best >= 0:
                    claimed[best] = True
                    normal_impulse[c] = prev_normal_impulse[best]
                    friction_impulse[c, 0] = prev_friction_impulse[best, 0]
                    friction_impulse[c, 1] = prev_friction_impulse[best, 1]
                    friction_impulse[c, 2] = prev_friction_impulse[best, 2]
                    match[c] = best
                    warm[c] = True
                    hits += 1
        i = stop
        j = pstop
    return hits


@kernel
def carry_matched(count, match, previous, current):
    """A solver's own per-contact values across steps: row c of ``current`` takes row ``match[c]``
    of ``previous`` (zeros for a new point). ``previous``/``current`` are (capacity, k)."""
    for c in range(count):
        p = match[c]
        for k in range(current.shape[1]):
            current[c, k] = previous[p, k] if p >= 0 else 0.0
