"""Contact cache: warm starting by (shape pair, feature id), Catto 001 §8, Algorithm 5.

After each step the solved impulses are kept with their key (geometry pair) and feature id
(from the clipping edges, 001 §8.2). The next step's points are matched to them: both lists are
sorted by pair key (the broad phase emits sorted pairs), so one merge pass finds each pair's old
points, and within a pair (at most 4 x 4 points) the feature ids are compared. A hit copies the
normal impulse and the world friction-impulse vector; a miss starts from zero.
"""

from __future__ import annotations

from tumble._core.config import kernel


@kernel
def match_cache(count, key, feature, normal_impulse, friction_impulse, aux_impulse, warm,
                prev_count, prev_key, prev_feature, prev_normal_impulse, prev_friction_impulse, prev_aux_impulse):
    """Fill ``normal_impulse``/``friction_impulse`` (and the solver-specific ``aux_impulse`` rows,
    e.g. the shock solver's layer impulses) of the new points from the previous step.
    Returns the number of hits."""
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
            for k in range(aux_impulse.shape[1]):
                aux_impulse[c, k] = 0.0
            for p in range(j, pstop):
                if prev_feature[p] == feature[c]:
                    normal_impulse[c] = prev_normal_impulse[p]
                    friction_impulse[c, 0] = prev_friction_impulse[p, 0]
                    friction_impulse[c, 1] = prev_friction_impulse[p, 1]
                    friction_impulse[c, 2] = prev_friction_impulse[p, 2]
                    for k in range(aux_impulse.shape[1]):
                        aux_impulse[c, k] = prev_aux_impulse[p, k]
                    warm[c] = True
                    hits += 1
                    break
        i = stop
        j = pstop
    return hits
