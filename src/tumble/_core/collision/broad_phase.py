"""Broad phase: incremental sweep-and-prune over axis-aligned bounding boxes.

Method (Baraff & Witkin / Lin & Manocha, 003 §6.3): the minimum and maximum coordinates of all
boxes are kept in three sorted endpoint lists, one per axis. Between two steps the bodies move
little (temporal coherence), so re-sorting each list with insertion sort needs only a few swaps,
and only the pairs whose endpoints were swapped can enter or leave the overlapping-pair set S.
The cost of one update is therefore O(n + swaps + |S|) instead of a full O(n log n) re-sort.

Conventions
-----------
* An endpoint is stored as ``(value, id)`` with ``id = 2 * geom + is_max``. The sort key is
  ``(value, is_max)``: at equal values a min endpoint precedes a max endpoint, so two boxes that
  touch exactly (``min_a == max_b``) count as overlapping, and "min_a precedes max_b in the list"
  is *exactly* the test ``min_a <= max_b``. That equivalence is what makes the event rules below
  exact, with no epsilon anywhere.
* A pair is stored as the int64 key ``(a << 32) | b`` with ``a < b``; numeric order on keys is
  lexicographic order on ``(a, b)``, so S is kept as a plain *sorted* key array.

Why no hash table
-----------------
The textbook variant keeps, per candidate pair, a 3-bit "overlaps on axis k" mask in a hash set.
That set must then hold every pair that overlaps on a *single* axis, which in a dense pile is
O(n^(5/3)) entries (millions at n = 10 000), and reporting the pairs sorted needs a sort of S
every step. Instead we keep the previous AABBs and decide each swap event exactly:

* a "start" event on axis k (a min passes left of another geom's max) can only happen for a pair
  that did not overlap on axis k before; the pair is added iff it overlaps on all three axes
  *now* and, for every axis j < k, it already overlapped on j *before*. Those j are exactly the
  axes that produce no start event, so the pair is added once, at its lowest event axis;
* a "stop" event on axis k (a max passes left of another geom's min) is the mirror image: the
  pair is removed iff it overlapped on all three axes *before* and, for every j < k, still
  overlaps on j *now*.

Insertion sort swaps exactly the inverted endpoint pairs, once each, so each inequality
``min_a <= max_b`` flips at most once per update and the two rules above add precisely the newly
overlapping pairs and remove precisely the pairs that stopped overlapping (proof sketch in the
comments of :func:`_sort_axis`). The added and removed keys of one step are few; they are sorted
(O(k log k)) and merged into the previous sorted S in one linear pass.

Geometry changes
----------------
When ``count`` changes (geoms appended or removed), or the owner/static flags of any geom
change, the structure is simply re-initialised: a stable merge sort of the 2n endpoints per axis
plus one sort-and-sweep pass, O(n log n + overlaps along the sweep axis). No ``remove(index)``.

Infinite extents (a plane: ``±inf`` or ``±1e30`` bounds) are fine: comparisons with infinities
are exact. NaN bounds and ``min > max`` are rejected with ``ValueError`` (a NaN compares false
with everything and would corrupt the sorted order).
"""

from __future__ import annotations

import numpy as np

from tumble._core.config import kernel

# --------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------


@kernel
def _push(buf, cnt, value):
    """Append ``value`` at ``buf[cnt]`` (int64), doubling ``buf`` when full; returns the buffer."""
    if cnt >= buf.shape[0]:
        grown = np.empty(2 * buf.shape[0] + 16, dtype=np.int64)
        for i in range(cnt):
            grown[i] = buf[i]
        buf = grown
    buf[cnt] = value
    return buf


@kernel
def _check_update(lo, hi, old_body, old_static, body, static, n, check_owners):
    """One call for the per-update checks (a kernel call costs ~0.7 us plus ~0.13 us per array
    argument): (the first geom with a bad box or -1, whether an owner changed -- looked at only
    when ``check_owners``)."""
    bad = _first_bad_box(lo, hi, n)
    changed = _owners_changed(old_body, old_static, body, static, n) if check_owners else False
    return bad, changed


@kernel
def _incremental_pairs(ep_val, ep_id, ep_aux, n, old_box, new_box, lo, hi, body, static, keys, m):
    """``_incremental_step`` and ``_keys_to_pairs`` in one call: (keys, m, added, removed, swaps, pairs)."""
    keys, m, n_add, n_rem, swaps = _incremental_step(ep_val, ep_id, ep_aux, n, old_box, new_box, lo, hi, body,
                                                     static, keys, m)
    return keys, m, n_add, n_rem, swaps, _keys_to_pairs(keys, m)


@kernel
def _checked_incremental_pairs(ep_val, ep_id, ep_aux, n, old_box, new_box, lo, hi, old_body, old_static, body,
                               static, keys, m):
    """``_check_update`` (owners checked) then, when every box is good and no owner changed,
    ``_incremental_pairs``, in one kernel call (issue 14: the two calls of a steady step cost ~20
    array arguments, ~3 us): (bad geom or -1, owners changed, keys, m, added, removed, swaps, pairs);
    with a bad box or a changed owner nothing moved and ``pairs`` is empty."""
    bad = _first_bad_box(lo, hi, n)
    changed = False if bad >= 0 else _owners_changed(old_body, old_static, body, static, n)
    if bad >= 0 or changed:
        return bad, changed, keys, m, 0, 0, 0, np.empty((0, 2), dtype=np.int64)
    keys, m, n_add, n_rem, swaps = _incremental_step(ep_val, ep_id, ep_aux, n, old_box, new_box, lo, hi, old_body,
                                                     old_static, keys, m)
    return bad, changed, keys, m, n_add, n_rem, swaps, _keys_to_pairs(keys, m)


#: ``_checked_incremental_pairs`` for kernels that run the broad phase's steady update inside a larger
#: call (``_core.fused.detect_or_fly``); its state arrays come from ``SweepAndPrune.steady_state``
checked_incremental_pairs = _checked_incremental_pairs


@kernel
def _first_bad_box(lo, hi, n):
    """The first geom < n whose box has a NaN bound or min > max, else -1 (one pass, no
    temporaries: this check runs every step)."""
    for g in range(n):
        for k in range(3):
            if not (lo[g, k] <= hi[g, k]):  # also true when either bound is NaN
                return g
    return -1


@kernel
def _owners_changed(old_body, old_static, body, static, n):
    """Whether any of the first n geoms changed owner body or static flag since the last update."""
    for g in range(n):
        if old_body[g] != body[g] or old_static[g] != static[g]:
            return True
    return False


@kernel
def _overlap_axis(lo, hi, a, b, k):
    """Closed-interval overlap of boxes ``a`` and ``b`` on axis ``k`` (touching counts)."""
    return lo[a, k] <= hi[b, k] and lo[b, k] <= hi[a, k]


@kernel
def _pair_allowed(body, static, a, b):
    """Pairs of one body, and pairs of two static geoms, are never reported."""
    return body[a] != body[b] and not (static[a] and static[b])


@kernel
def _make_key(a, b):
    if a < b:
        return (np.int64(a) << 32) | np.int64(b)
    return (np.int64(b) << 32) | np.int64(a)


# Hand-written stable bottom-up merge sorts. Numba's generic np.sort/np.argsort cost ~2 s of
# compile time per element type in every cold cache; these are small, O(n log n) worst case,
# and stable, which the endpoint initialisation relies on (see _init_endpoints).

_RUN = 16  # runs of this length are insertion-sorted before merging


@kernel
def _sort_keys(keys, n):
    """Sort ``keys[:n]`` (int64) ascending in place."""
    for s in range(0, n, _RUN):
        e = min(s + _RUN, n)
        for i in range(s + 1, e):
            v = keys[i]
            j = i - 1
            while j >= s and keys[j] > v:
                keys[j + 1] = keys[j]
                j -= 1
            keys[j + 1] = v
    if n <= _RUN:
        return
    src = keys
    dst = np.empty(n, dtype=np.int64)
    width = _RUN
    in_keys = True
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            o = lo
            while i < mid and j < hi:
                if src[j] < src[i]:
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < mid:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < hi:
                dst[o] = src[j]
                j += 1
                o += 1
        src, dst = dst, src
        in_keys = not in_keys
        width *= 2
    if not in_keys:
        for i in range(n):
            keys[i] = src[i]


@kernel
def _sort_by_value(vals, ids, n):
    """Stable sort of ``vals[:n]`` ascending, permuting ``ids[:n]`` alongside, in place."""
    for s in range(0, n, _RUN):
        e = min(s + _RUN, n)
        for i in range(s + 1, e):
            v = vals[i]
            d = ids[i]
            j = i - 1
            while j >= s and vals[j] > v:
                vals[j + 1] = vals[j]
                ids[j + 1] = ids[j]
                j -= 1
            vals[j + 1] = v
            ids[j + 1] = d
    if n <= _RUN:
        return
    sv = vals
    si = ids
    dv = np.empty(n, dtype=np.float64)
    di = np.empty(n, dtype=np.int64)
    width = _RUN
    in_place = True
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            o = lo
            while i < mid and j < hi:
                if sv[j] < sv[i]:  # strict: equal values keep their order (stable)
                    dv[o] = sv[j]
                    di[o] = si[j]
                    j += 1
                else:
                    dv[o] = sv[i]
                    di[o] = si[i]
                    i += 1
                o += 1
            while i < mid:
                dv[o] = sv[i]
                di[o] = si[i]
                i += 1
                o += 1
            while j < hi:
                dv[o] = sv[j]
                di[o] = si[j]
                j += 1
                o += 1
        sv, dv = dv, sv
        si, di = di, si
        in_place = not in_place
        width *= 2
    if not in_place:
        for i in range(n):
            vals[i] = sv[i]
            ids[i] = si[i]


@kernel
def _keys_to_pairs(keys, m):
    out = np.empty((m, 2), dtype=np.int64)
    for i in range(m):
        out[i, 0] = keys[i] >> 32
        out[i, 1] = keys[i] & 0xFFFFFFFF
    return out


# --------------------------------------------------------------------------------------------
# oracles / full re-sort
# --------------------------------------------------------------------------------------------


@kernel
def brute_force_pairs(aabb_min, aabb_max, geom_body, geom_static, count):
    """All overlapping pairs by the O(n^2) double loop (test oracle, tiny scenes).

    Returns an int64 ``(m, 2)`` array, ``a < b``, sorted lexicographically (the loop order).
    """
    buf = np.empty(64, dtype=np.int64)
    m = 0
    for a in range(count):
        for b in range(a + 1, count):
            if not _pair_allowed(geom_body, geom_static, a, b):
                continue
            if (
                _overlap_axis(aabb_min, aabb_max, a, b, 0)
                and _overlap_axis(aabb_min, aabb_max, a, b, 1)
                and _overlap_axis(aabb_min, aabb_max, a, b, 2)
            ):
                buf = _push(buf, m, (np.int64(a) << 32) | np.int64(b))
                m += 1
    return _keys_to_pairs(buf, m)


@kernel
def _sweep_axis_choice(lo, hi, n):
    """Sweep axis for sort-and-sweep: the axis with the largest spread of (finite) centres.

    Fewer boxes overlap along a long axis, so the sweep visits fewer candidate pairs.
    """
    best_axis = 0
    best_var = -1.0
    for k in range(3):
        s = 0.0
        s2 = 0.0
        c = 0
        for g in range(n):
            x = 0.5 * (lo[g, k] + hi[g, k])
            if np.isfinite(x) and abs(x) < 1e29:
                s += x
                s2 += x * x
                c += 1
        if c > 0:
            mean = s / c
            var = s2 / c - mean * mean
            if var > best_var:
                best_var = var
                best_axis = k
    return best_axis


@kernel
def _sweep_keys(lo, hi, body, static, n):
    """Sort-and-sweep from scratch: sorted key array of all overlapping pairs, and its length.

    Sort the boxes by their min on one axis; each box then only needs checking against the
    boxes that start before its max on that axis. O(n log n + overlaps along that axis).
    """
    ax = _sweep_axis_choice(lo, hi, n)
    svals = np.empty(n, dtype=np.float64)
    order = np.empty(n, dtype=np.int64)
    for g in range(n):
        svals[g] = lo[g, ax]
        order[g] = g
    _sort_by_value(svals, order, n)
    buf = np.empty(max(16, 2 * n), dtype=np.int64)
    m = 0
    for i in range(n):
        a = order[i]
        hi_a = hi[a, ax]
        for j in range(i + 1, n):
            b = order[j]
            if lo[b, ax] > hi_a:
                break
            if not _pair_allowed(body, static, a, b):
                continue
            o1 = (ax + 1) % 3
            o2 = (ax + 2) % 3
            if _overlap_axis(lo, hi, a, b, o1) and _overlap_axis(lo, hi, a, b, o2):
                buf = _push(buf, m, _make_key(a, b))
                m += 1
    _sort_keys(buf, m)
    return buf, m


@kernel
def sweep_pairs(aabb_min, aabb_max, geom_body, geom_static, count):
    """All overlapping pairs by a full sort-and-sweep (no state; the "re-sort every step" path).

    Same output contract as :func:`brute_force_pairs`.
    """
    keys, m = _sweep_keys(aabb_min, aabb_max, geom_body, geom_static, count)
    return _keys_to_pairs(keys, m)


# --------------------------------------------------------------------------------------------
# incremental state
# --------------------------------------------------------------------------------------------


@kernel
def _init_endpoints(lo, hi, n, ep_val, ep_id, ep_aux):
    """Fill the three sorted endpoint lists from scratch (stable merge sort, O(n log n)).

    Mins are laid out before maxes before the *stable* sort, so at equal values a min precedes
    a max: the ``(value, is_max)`` key order the incremental sort maintains.
    """
    vals = np.empty(2 * n, dtype=np.float64)
    ids = np.empty(2 * n, dtype=np.int64)
    for k in range(3):
        for g in range(n):
            vals[g] = lo[g, k]
            ids[g] = 2 * g
            vals[n + g] = hi[g, k]
            ids[n + g] = 2 * g + 1
        _sort_by_value(vals, ids, 2 * n)
        k1 = (k + 1) % 3
        k2 = (k + 2) % 3
        for p in range(2 * n):
            ep_val[k, p] = vals[p]
            ep_id[k, p] = ids[p]
            g = ids[p] >> 1
            ep_aux[k, p, 0] = lo[g, k1]
            ep_aux[k, p, 1] = hi[g, k1]
            ep_aux[k, p, 2] = lo[g, k2]
            ep_aux[k, p, 3] = hi[g, k2]
            for q in range(4):
                ep_aux[k, p, 4 + q] = ep_aux[k, p, q]


@kernel
def _sort_axis(k, ep_val, ep_id, ep_aux, n2, old_box, new_box, body, static,
               add_buf, n_add, rem_buf, n_rem):
    """Refresh axis ``k``'s endpoint values from the new AABBs and insertion-sort them.

    Memory layout matters more than arithmetic here: the two geoms of a swapped pair are far
    apart in memory, and at n ~ 10^4 a random access costs ~50-100 ns against ~3 ns for a
    shift. So each endpoint carries, in ``ep_aux[k, p]``, its geom's intervals on the two
    other axes ``k1, k2``: ``[lo_k1, hi_k1, lo_k2, hi_k2]`` now and the same four values from
    the previous step. The other endpoint of a swap is the list entry being shifted, so the
    necessary condition "overlap on k1 and k2 (now for an add, before for a removal)" is
    decided from data already in cache; it rejects nearly all events, and only survivors read
    the packed AABB rows ``old_box``/``new_box`` (``min xyz, max xyz, pad``, 64 B per geom)
    for the exact test.

    Every swap of a min with another geom's max is an overlap event for that pair on this axis
    (003 §6.3: "only the corresponding pairs of boxes may have to be added or deleted from S").

    Correctness sketch. Insertion sort performs exactly one swap per inverted endpoint pair, so
    a swap of ``min_a`` with ``max_b`` happens iff the truth of ``min_a <= max_b`` differs
    between the old and the new values (the key order encodes that test exactly). Hence:
      - a start event on axis k implies the pair did not overlap on k before;
      - for a pair that overlaps now but did not before, the axes with a start event are
        exactly the axes where it did not overlap before; adding only when all lower axes
        overlapped before adds it exactly once (at its lowest such axis);
      - a pair that does not overlap now is never added (the "overlaps now" check);
      - removal is the mirror image (stop events, old/new exchanged), so only pairs that were
        in S are removed, each exactly once; a pair that overlaps now has no stop event.
    A pair whose boxes pass right through each other on one axis gets a start and a stop event
    on that axis, but it overlaps on that axis neither before nor after, so neither rule fires.

    Events go to ``add_buf``/``rem_buf`` (fixed size; events past it are counted, not stored: the
    caller then sweeps from scratch). Returns (n_add, n_rem, swaps).
    """
    swaps = 0
    vals = ep_val[k]  # views of this axis' endpoint list
    ids = ep_id[k]
    aux = ep_aux[k]
    k1 = (k + 1) % 3
    k2 = (k + 2) % 3
    # refresh values in place (order unchanged, values new); aux: previous <- current <- new
    for p in range(n2):
        e = ids[p]
        g = e >> 1
        vals[p] = new_box[g, k + 3 * (e & 1)]
        for q in range(4):
            aux[p, 4 + q] = aux[p, q]
        aux[p, 0] = new_box[g, k1]
        aux[p, 1] = new_box[g, k1 + 3]
        aux[p, 2] = new_box[g, k2]
        aux[p, 3] = new_box[g, k2 + 3]
    # insertion sort on (value, is_max); the moving endpoint is shifted, not swapped
    for i in range(1, n2):
        v = vals[i]
        e = ids[i]
        e_max = e & 1
        c0 = aux[i, 0]
        c1 = aux[i, 1]
        c2 = aux[i, 2]
        c3 = aux[i, 3]
        p0 = aux[i, 4]
        p1 = aux[i, 5]
        p2 = aux[i, 6]
        p3 = aux[i, 7]
        j = i - 1
        while j >= 0:
            w = vals[j]
            f = ids[j]
            f_max = f & 1
            if not (w > v or (w == v and f_max > e_max)):
                break
            swaps += 1
            # only a min passing a max (or vice versa) changes an overlap; the tests are
            # written out (no helper calls, no loops): this is the hot path of the update
            if e_max != f_max:
                a = e >> 1
                b = f >> 1
                if e_max == 0 and (
                    c0 <= aux[j, 1] and aux[j, 0] <= c1 and c2 <= aux[j, 3] and aux[j, 2] <= c3
                ):
                    # min of a moved left of max of b: start of overlap on axis k.
                    # add iff overlapping on all axes now and on all axes < k before
                    if (
                        new_box[a, k1] <= new_box[b, k1 + 3] and new_box[b, k1] <= new_box[a, k1 + 3]
                        and new_box[a, k2] <= new_box[b, k2 + 3] and new_box[b, k2] <= new_box[a, k2 + 3]
                        and new_box[a, k] <= new_box[b, k + 3] and new_box[b, k] <= new_box[a, k + 3]
                        and (k < 1 or (old_box[a, 0] <= old_box[b, 3] and old_box[b, 0] <= old_box[a, 3]))
                        and (k < 2 or (old_box[a, 1] <= old_box[b, 4] and old_box[b, 1] <= old_box[a, 4]))
                        and body[a] != body[b]
                        and not (static[a] and static[b])
                    ):
                        if n_add < add_buf.shape[0]:
                            add_buf[n_add] = _make_key(a, b)
                        n_add += 1
                elif e_max == 1 and (
                    p0 <= aux[j, 5] and aux[j, 4] <= p1 and p2 <= aux[j, 7] and aux[j, 6] <= p3
                ):
                    # max of a moved left of min of b: end of overlap on axis k.
                    # remove iff overlapping on all axes before and on all axes < k now
                    if (
                        old_box[a, k1] <= old_box[b, k1 + 3] and old_box[b, k1] <= old_box[a, k1 + 3]
                        and old_box[a, k2] <= old_box[b, k2 + 3] and old_box[b, k2] <= old_box[a, k2 + 3]
                        and old_box[a, k] <= old_box[b, k + 3] and old_box[b, k] <= old_box[a, k + 3]
                        and (k < 1 or (new_box[a, 0] <= new_box[b, 3] and new_box[b, 0] <= new_box[a, 3]))
                        and (k < 2 or (new_box[a, 1] <= new_box[b, 4] and new_box[b, 1] <= new_box[a, 4]))
                        and body[a] != body[b]
                        and not (static[a] and static[b])
                    ):
                        if n_rem < rem_buf.shape[0]:
                            rem_buf[n_rem] = _make_key(a, b)
                        n_rem += 1
            vals[j + 1] = w
            ids[j + 1] = f
            for q in range(8):
                aux[j + 1, q] = aux[j, q]
            j -= 1
        vals[j + 1] = v
        ids[j + 1] = e
        aux[j + 1, 0] = c0
        aux[j + 1, 1] = c1
        aux[j + 1, 2] = c2
        aux[j + 1, 3] = c3
        aux[j + 1, 4] = p0
        aux[j + 1, 5] = p1
        aux[j + 1, 6] = p2
        aux[j + 1, 7] = p3
    return n_add, n_rem, swaps


@kernel
def _merge_keys(keys, m, added, n_add, removed, n_rem):
    """New sorted S = (old S minus removed) merged with added; all inputs sorted; O(m + k)."""
    out = np.empty(max(16, m - n_rem + n_add), dtype=np.int64)
    o = 0
    ai = 0
    ri = 0
    for i in range(m):
        c = keys[i]
        if ri < n_rem and removed[ri] == c:
            ri += 1
            continue
        while ai < n_add and added[ai] < c:
            out[o] = added[ai]
            o += 1
            ai += 1
        out[o] = c
        o += 1
    while ai < n_add:
        out[o] = added[ai]
        o += 1
        ai += 1
    return out, o


@kernel
def _pack_boxes(lo, hi, n, box):
    """Pack AABBs into one 64-byte row per geom: ``min xyz, max xyz, 0, 0``."""
    for g in range(n):
        for k in range(3):
            box[g, k] = lo[g, k]
            box[g, 3 + k] = hi[g, k]
        box[g, 6] = 0.0
        box[g, 7] = 0.0


@kernel
def _incremental_step(ep_val, ep_id, ep_aux, n, old_box, new_box, lo, hi, body, static, keys, m):
    """One incremental update; returns (keys, m, n_added, n_removed, swaps).

    ``old_box`` holds the previous AABBs (packed); ``new_box`` is overwritten with ``lo``/``hi``.
    """
    _pack_boxes(lo, hi, n, new_box)
    # event buffers of fixed size, passed down and never re-bound: a growable buffer re-assigned
    # inside the sort loop made Numba take and drop two references per endpoint (measured: ~3/4 of
    # this function's time). More events than this (bodies teleported across the scene) fall back
    # to a sweep from scratch, which is exact.
    cap = 4 * n + 64
    add_buf = np.empty(cap, dtype=np.int64)
    rem_buf = np.empty(cap, dtype=np.int64)
    n_add = 0
    n_rem = 0
    swaps = 0
    for k in range(3):
        n_add, n_rem, s = _sort_axis(
            k, ep_val, ep_id, ep_aux, 2 * n, old_box, new_box, body, static,
            add_buf, n_add, rem_buf, n_rem,
        )
        swaps += s
    if n_add > cap or n_rem > cap:
        keys, m = _sweep_keys(lo, hi, body, static, n)
    elif n_add > 0 or n_rem > 0:
        _sort_keys(add_buf, n_add)
        _sort_keys(rem_buf, n_rem)
        keys, m = _merge_keys(keys, m, add_buf, n_add, rem_buf, n_rem)
    return keys, m, n_add, n_rem, swaps


# --------------------------------------------------------------------------------------------
# Python facade (state holder; all per-step work happens in the kernels above)
# --------------------------------------------------------------------------------------------


def _aligned_rows(rows: int) -> np.ndarray:
    """A C-contiguous ``(rows, 8)`` float64 array whose rows start on 64-byte boundaries."""
    raw = np.empty(rows * 8 + 8, dtype=np.float64)
    off = (-raw.ctypes.data % 64) // 8
    return raw[off : off + rows * 8].reshape(rows, 8)


class SweepAndPrune:
    """Incremental sweep-and-prune broad phase (Baraff & Witkin / Lin & Manocha, 003 §6.3).

    ``update`` returns the overlapping geom pairs as an int64 ``(m, 2)`` array with ``a < b``,
    sorted lexicographically. It re-initialises (O(n log n) sort-and-sweep) on the first call,
    whenever ``count`` changes, and whenever ``geom_body``/``geom_static`` of a live geom
    changes; otherwise it does an O(n + swaps + |S|) incremental update.

    Statistics of the last call: ``last_swaps``, ``last_added``, ``last_removed``,
    ``last_reinit`` (bool); ``reinit_count`` counts re-initialisations.
    """

    def __init__(self, capacity: int = 64):
        if capacity < 1:
            raise ValueError(f"SweepAndPrune capacity must be >= 1, got {capacity}")
        self._alloc(int(capacity))
        self._n = -1  # -1: not initialised
        self._keys = np.empty(16, dtype=np.int64)
        self._m = 0
        self.last_swaps = 0
        self.last_added = 0
        self.last_removed = 0
        self.last_reinit = False
        self.reinit_count = 0

    def _alloc(self, capacity: int) -> None:
        self._capacity = capacity
        self._ep_val = np.empty((3, 2 * capacity), dtype=np.float64)
        self._ep_id = np.empty((3, 2 * capacity), dtype=np.int64)
        # per endpoint: its geom's intervals on the two other axes, now and one step ago
        self._ep_aux = np.empty((3, 2 * capacity, 8), dtype=np.float64)
        # two packed AABB buffers (previous / current), swapped after every update
        self._box = _aligned_rows(capacity)
        self._box_next = _aligned_rows(capacity)
        self._body = np.empty(capacity, dtype=np.int64)
        self._static = np.empty(capacity, dtype=np.bool_)

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def count(self) -> int:
        """Number of geoms in the structure (0 before the first update)."""
        return max(self._n, 0)

    @property
    def num_pairs(self) -> int:
        return self._m

    def reset(self) -> None:
        """Forget all state; the next ``update`` re-initialises from scratch."""
        self._n = -1
        self._m = 0

    def pairs(self) -> np.ndarray:
        """The current pair set (same array layout as ``update`` returns)."""
        return _keys_to_pairs(self._keys, self._m)

    def steady(self, count: int) -> bool:
        """Whether an ``update`` with ``count`` geoms is the steady case: no re-initialisation due
        (same count, within capacity), so one kernel call checks the boxes and owners and updates."""
        return self._n == count and count <= self._capacity

    def steady_state(self) -> tuple:
        """The arrays and pair count the steady update reads (``checked_incremental_pairs``'s
        arguments after ``n``: endpoints, old and new packed boxes, owners, keys and pair count) for
        a kernel that runs it inside a larger call; ``adopt`` takes its results back."""
        return (self._ep_val, self._ep_id, self._ep_aux, self._box, self._box_next, self._body, self._static,
                self._keys, self._m)

    def adopt(self, keys, m: int, added: int, removed: int, swaps: int) -> None:
        """Take the results of a steady update that succeeded (no bad box, no owner changed): the
        pair keys and count, the statistics, and the packed boxes swapped (new becomes old)."""
        self._keys, self._m = keys, m
        self.last_added, self.last_removed, self.last_swaps = added, removed, swaps
        self._box, self._box_next = self._box_next, self._box
        self.last_reinit = False

    def update(self, aabb_min, aabb_max, geom_body, geom_static, count: int) -> np.ndarray:
        n = int(count)
        lo = np.asarray(aabb_min, dtype=np.float64)
        hi = np.asarray(aabb_max, dtype=np.float64)
        body = np.asarray(geom_body, dtype=np.int64)
        static = np.asarray(geom_static, dtype=np.bool_)
        if n < 0 or lo.shape[0] < n or hi.shape[0] < n or body.shape[0] < n or static.shape[0] < n:
            raise ValueError(f"SweepAndPrune.update: count={n} exceeds the arrays given")
        if n >= 2**31:
            raise ValueError(f"SweepAndPrune.update: count={n} too large for 32-bit pair keys")
        if self._n == n and n <= self._capacity:    # the steady case: checks and update in one call
            g, owners_changed, keys, m, added, removed, swaps, pairs = _checked_incremental_pairs(
                self._ep_val, self._ep_id, self._ep_aux, n, self._box, self._box_next, lo, hi, self._body,
                self._static, body, static, self._keys, self._m)
            if g < 0 and not owners_changed:
                self.adopt(keys, m, added, removed, swaps)
                return pairs
        else:
            g, owners_changed = _check_update(lo, hi, self._body, self._static, body, static, n, False)
        if g >= 0:
            raise ValueError(
                f"SweepAndPrune.update: geom {g} has an invalid AABB "
                f"min={lo[g].tolist()} max={hi[g].tolist()} (NaN or min > max)"
            )

        if n > self._capacity:
            cap = self._capacity
            while cap < n:
                cap *= 2
            self._alloc(cap)
            self._n = -1
        reinit = self._n != n or owners_changed
        if reinit:
            self._body[:n] = body[:n]
            self._static[:n] = static[:n]
            if n > 0:
                _pack_boxes(lo, hi, n, self._box)
                _init_endpoints(lo, hi, n, self._ep_val, self._ep_id, self._ep_aux)
                self._keys, self._m = _sweep_keys(lo, hi, self._body, self._static, n)
            else:
                self._m = 0
            self._n = n
            self.reinit_count += 1
            self.last_swaps = self.last_added = self.last_removed = 0
        else:
            self._keys, self._m, self.last_added, self.last_removed, self.last_swaps, pairs = (
                _incremental_pairs(
                    self._ep_val, self._ep_id, self._ep_aux, n, self._box, self._box_next, lo, hi,
                    self._body, self._static, self._keys, self._m,
                )
            )
            self._box, self._box_next = self._box_next, self._box
            self.last_reinit = False
            return pairs
        self.last_reinit = reinit
        return _keys_to_pairs(self._keys, self._m)
