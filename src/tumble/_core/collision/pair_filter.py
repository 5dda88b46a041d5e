"""Body pairs that must not collide (joined bodies, user exclusions), applied to the broad phase's
candidate pairs before the narrow phase."""

from __future__ import annotations

import numpy as np

from tumble._core.config import kernel


@kernel
def filter_pairs(pairs, geom_body, excluded):
    """The rows of ``pairs`` (k, 2) of geometry ids whose body pair key min * 2^32 + max is not in
    ``excluded`` (sorted int64); binary search per pair, order kept."""
    out = np.empty_like(pairs)
    m = 0
    ne = excluded.shape[0]
    for i in range(pairs.shape[0]):
        a = geom_body[pairs[i, 0]]
        b = geom_body[pairs[i, 1]]
        key = (np.int64(min(a, b)) << 32) | np.int64(max(a, b))
        lo = 0
        hi = ne
        while lo < hi:
            mid = (lo + hi) >> 1
            if excluded[mid] < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < ne and excluded[lo] == key:
            continue
        out[m, 0] = pairs[i, 0]
        out[m, 1] = pairs[i, 1]
        m += 1
    return out[:m]


def pair_key(a: int, b: int) -> int:
    """The key ``filter_pairs`` looks up for bodies a and b (either order)."""
    lo, hi = (a, b) if a < b else (b, a)
    return (int(lo) << 32) | int(hi)
