"""Incremental sweep-and-prune (003 §6.3) against the O(n^2) brute-force oracle.

After every update the reported pair set must equal the brute-force set exactly, under smooth
motion, teleports, growing/shrinking boxes, geoms added/removed mid-run, infinite planes and
exactly touching boxes. Same-body and static-static pairs must never appear; output is int64
(m, 2), a < b, lexicographically sorted.
"""

from __future__ import annotations

import numpy as np
import pytest

from tumble._core.collision.broad_phase import SweepAndPrune, brute_force_pairs, sweep_pairs


def _check_output(pairs: np.ndarray) -> None:
    assert pairs.dtype == np.int64
    assert pairs.ndim == 2 and pairs.shape[1] == 2
    if len(pairs):
        assert np.all(pairs[:, 0] < pairs[:, 1])
        keys = pairs[:, 0] * (1 << 32) + pairs[:, 1]
        assert np.all(np.diff(keys) > 0), "pairs not strictly sorted lexicographically"


def _assert_same(got: np.ndarray, lo, hi, body, static, n, step="") -> None:
    _check_output(got)
    want = brute_force_pairs(lo, hi, body, static, n)
    if not np.array_equal(got, want):
        g = {tuple(p) for p in got.tolist()}
        w = {tuple(p) for p in want.tolist()}
        raise AssertionError(
            f"step {step}: missing {sorted(w - g)[:10]}, extra {sorted(g - w)[:10]}"
        )


class Cloud:
    """Random boxes drifting smoothly inside a periodic-ish region (reflected at the walls)."""

    def __init__(self, rng, n, extent=10.0, size=(0.3, 1.5), speed=0.08):
        self.rng = rng
        self.extent = extent
        self.size_range = size
        self.speed = speed
        self.c = rng.uniform(0, extent, (n, 3))
        self.h = rng.uniform(*size, (n, 3)) / 2
        self.v = rng.normal(0, speed, (n, 3))

    def add(self, k):
        rng = self.rng
        self.c = np.vstack([self.c, rng.uniform(0, self.extent, (k, 3))])
        self.h = np.vstack([self.h, rng.uniform(*self.size_range, (k, 3)) / 2])
        self.v = np.vstack([self.v, rng.normal(0, self.speed, (k, 3))])

    def step(self):
        self.c += self.v
        out = (self.c < 0) | (self.c > self.extent)
        self.v[out] *= -1
        self.c = np.clip(self.c, 0, self.extent)

    def boxes(self):
        return self.c - self.h, self.c + self.h


def _with_planes(lo, hi, body, static, planes):
    """Prepend static planes (geoms 0..len(planes)-1) to the box arrays."""
    plo = np.array([p[0] for p in planes], dtype=np.float64).reshape(-1, 3)
    phi = np.array([p[1] for p in planes], dtype=np.float64).reshape(-1, 3)
    k = len(planes)
    return (
        np.vstack([plo, lo]),
        np.vstack([phi, hi]),
        np.concatenate([np.arange(-k, 0, dtype=np.int64) - 1000, body]),
        np.concatenate([np.ones(k, dtype=bool), static]),
    )


def test_empty_and_tiny():
    sap = SweepAndPrune(capacity=4)
    lo = np.zeros((4, 3))
    hi = np.ones((4, 3))
    body = np.arange(4, dtype=np.int64)
    static = np.zeros(4, dtype=bool)
    p = sap.update(lo, hi, body, static, 0)
    assert p.shape == (0, 2) and p.dtype == np.int64
    p = sap.update(lo, hi, body, static, 1)
    assert p.shape == (0, 2)
    p = sap.update(lo, hi, body, static, 2)
    assert p.tolist() == [[0, 1]]
    assert brute_force_pairs(lo, hi, body, static, 0).shape == (0, 2)
    assert sweep_pairs(lo, hi, body, static, 0).shape == (0, 2)


def test_smooth_motion_with_planes_bodies_statics():
    rng = np.random.default_rng(1)
    n = 160
    cloud = Cloud(rng, n)
    # several geoms share a body (compound bodies); a few static boxes
    body = rng.integers(0, 110, n).astype(np.int64)
    static = np.zeros(n, dtype=bool)
    static[rng.choice(n, 15, replace=False)] = True
    inf = np.inf
    planes = [
        ((-inf, -inf, -inf), (inf, inf, 0.5)),        # ground plane, infinite bounds
        ((-1e30, -1e30, -1e30), (0.7, 1e30, 1e30)),   # wall x <= 0.7 with 1e30 bounds
    ]
    sap = SweepAndPrune()
    incremental_steps = 0
    for step in range(200):
        lo, hi = cloud.boxes()
        alo, ahi, abody, astatic = _with_planes(lo, hi, body, static, planes)
        got = sap.update(alo, ahi, abody, astatic, len(alo))
        _assert_same(got, alo, ahi, abody, astatic, len(alo), step)
        incremental_steps += not sap.last_reinit
        cloud.step()
    assert incremental_steps == 199  # only the first call re-initialised
    assert sap.reinit_count == 1


def test_same_body_and_static_pairs_excluded():
    n = 6
    lo = np.zeros((n, 3))
    hi = np.ones((n, 3))  # everything overlaps everything
    body = np.array([0, 0, 1, 2, 3, 3], dtype=np.int64)
    static = np.array([False, False, False, True, True, True])
    want = {
        (a, b)
        for a in range(n)
        for b in range(a + 1, n)
        if body[a] != body[b] and not (static[a] and static[b])
    }
    sap = SweepAndPrune()
    got = sap.update(lo, hi, body, static, n)
    _check_output(got)
    assert {tuple(p) for p in got.tolist()} == want
    # moving things around incrementally keeps the exclusions
    lo2 = lo.copy()
    hi2 = hi.copy()
    lo2[0] += 5.0
    hi2[0] += 5.0
    got = sap.update(lo2, hi2, body, static, n)
    _assert_same(got, lo2, hi2, body, static, n)
    assert not sap.last_reinit
    assert not any(body[a] == body[b] or (static[a] and static[b]) for a, b in got.tolist())


def test_teleports_and_growing_shrinking_boxes():
    rng = np.random.default_rng(2)
    n = 140
    cloud = Cloud(rng, n, extent=8.0)
    body = np.arange(n, dtype=np.int64)
    static = np.zeros(n, dtype=bool)
    static[:10] = True
    sap = SweepAndPrune(capacity=8)
    for step in range(200):
        if step % 7 == 3:  # teleport a handful of boxes anywhere
            idx = rng.choice(n, 5, replace=False)
            cloud.c[idx] = rng.uniform(0, cloud.extent, (5, 3))
        if step % 5 == 1:  # grow / shrink some boxes (incl. to zero thickness)
            idx = rng.choice(n, 10, replace=False)
            cloud.h[idx] *= rng.uniform(0.0, 2.5, (10, 3))
            cloud.h[idx] = np.clip(cloud.h[idx], 0.0, 3.0)
        if step == 100:  # everything jumps at once (worst case for insertion sort)
            cloud.c = rng.uniform(0, cloud.extent, (n, 3))
        lo, hi = cloud.boxes()
        got = sap.update(lo, hi, body, static, n)
        _assert_same(got, lo, hi, body, static, n, step)
        cloud.step()
    assert sap.reinit_count == 1
    assert sap.capacity >= n


def test_geoms_added_and_removed_mid_run():
    rng = np.random.default_rng(3)
    cloud = Cloud(rng, 40)
    sap = SweepAndPrune(capacity=16)
    cap_arrays = 400
    for step in range(200):
        if step in (30, 60, 61, 120):
            cloud.add(25)
        n = len(cloud.c)
        if step >= 150:
            n = n - 30  # geoms removed at the end (count shrinks)
        lo, hi = cloud.boxes()
        # arrays larger than count: only the first `count` rows are valid
        blo = np.full((cap_arrays, 3), np.nan)
        bhi = np.full((cap_arrays, 3), np.nan)
        blo[: len(lo)] = lo
        bhi[: len(hi)] = hi
        body = np.arange(cap_arrays, dtype=np.int64) // 2  # geom pairs share a body
        static = np.zeros(cap_arrays, dtype=bool)
        got = sap.update(blo, bhi, body, static, n)
        _assert_same(got, blo, bhi, body, static, n, step)
        assert sap.count == n
        cloud.step()
    assert sap.reinit_count == 6  # first call, 4 additions (one per add step), one shrink


def test_exact_touching_on_integer_grid():
    """Unit boxes on an integer lattice: faces touch exactly, many equal endpoint values."""
    rng = np.random.default_rng(4)
    n = 120
    pos = rng.integers(0, 8, (n, 3)).astype(np.float64)
    body = np.arange(n, dtype=np.int64)
    static = np.zeros(n, dtype=bool)
    sap = SweepAndPrune()
    touching_seen = 0
    for step in range(200):
        lo = pos.copy()
        hi = pos + 1.0
        got = sap.update(lo, hi, body, static, n)
        _assert_same(got, lo, hi, body, static, n, step)
        # pairs where some axis touches exactly (min_a == max_b)
        if len(got):
            a, b = got[:, 0], got[:, 1]
            touching_seen += int(np.any((lo[a] == hi[b]) | (lo[b] == hi[a]), axis=1).sum())
        # integer moves of -1, 0, +1 on random axes (exact ties appear and disappear)
        move = rng.integers(-1, 2, (n, 3)) * (rng.random((n, 3)) < 0.2)
        pos = np.clip(pos + move, 0, 7)
    assert touching_seen > 100


def test_two_touching_boxes_explicit():
    lo = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    hi = np.array([[1.0, 1.0, 1.0], [2.0, 1.0, 1.0]])
    body = np.array([0, 1], dtype=np.int64)
    static = np.zeros(2, dtype=bool)
    sap = SweepAndPrune()
    assert sap.update(lo, hi, body, static, 2).tolist() == [[0, 1]]
    # separate by one ulp, then touch again, incrementally
    hi2 = hi.copy()
    hi2[0, 0] = np.nextafter(1.0, 0.0)
    assert sap.update(lo, hi2, body, static, 2).tolist() == []
    assert sap.update(lo, hi, body, static, 2).tolist() == [[0, 1]]
    assert sap.reinit_count == 1


def test_flag_change_triggers_reinit():
    rng = np.random.default_rng(5)
    n = 60
    cloud = Cloud(rng, n, extent=5.0)
    body = np.arange(n, dtype=np.int64)
    static = np.zeros(n, dtype=bool)
    sap = SweepAndPrune()
    for step in range(30):
        if step == 10:
            static = static.copy()
            static[: n // 2] = True
        if step == 20:
            body = body.copy()
            body[::3] = 0
        lo, hi = cloud.boxes()
        got = sap.update(lo, hi, body, static, n)
        _assert_same(got, lo, hi, body, static, n, step)
        cloud.step()
    assert sap.reinit_count == 3


def test_sweep_pairs_matches_brute_force():
    rng = np.random.default_rng(6)
    for trial in range(20):
        n = int(rng.integers(2, 300))
        c = rng.uniform(0, 10, (n, 3))
        h = rng.uniform(0.1, 1.5, (n, 3))
        lo, hi = c - h, c + h
        if trial % 3 == 0:
            lo[0] = -np.inf
            hi[0] = [np.inf, np.inf, 1.0]
        body = rng.integers(0, n, n).astype(np.int64)
        static = rng.random(n) < 0.2
        assert np.array_equal(
            sweep_pairs(lo, hi, body, static, n), brute_force_pairs(lo, hi, body, static, n)
        )


def test_invalid_aabb_rejected():
    sap = SweepAndPrune()
    lo = np.zeros((3, 3))
    hi = np.ones((3, 3))
    body = np.arange(3, dtype=np.int64)
    static = np.zeros(3, dtype=bool)
    lo[1, 2] = np.nan
    with pytest.raises(ValueError, match="geom 1"):
        sap.update(lo, hi, body, static, 3)
    lo[1, 2] = 2.0  # min > max
    with pytest.raises(ValueError, match="geom 1"):
        sap.update(lo, hi, body, static, 3)
    # rows past `count` are not inspected
    lo[1, 2] = 0.0
    lo[2] = np.nan
    assert sap.update(lo, hi, body, static, 2).tolist() == [[0, 1]]


def test_few_swaps_under_coherent_motion():
    """Temporal coherence: small motion means far fewer swaps than a re-sort's n log n."""
    rng = np.random.default_rng(7)
    n = 1000
    cloud = Cloud(rng, n, extent=25.0, speed=0.01)
    body = np.arange(n, dtype=np.int64)
    static = np.zeros(n, dtype=bool)
    sap = SweepAndPrune()
    swaps = []
    for _ in range(20):
        lo, hi = cloud.boxes()
        sap.update(lo, hi, body, static, n)
        swaps.append(sap.last_swaps)
        cloud.step()
    assert max(swaps[1:]) < 3 * 2 * n  # < one swap per endpoint; a re-sort is ~n log n
    lo, hi = cloud.boxes()
    got = sap.update(lo, hi, body, static, n)
    _assert_same(got, lo, hi, body, static, n)


@pytest.mark.parametrize("bad", ["nan_min", "nan_max", "min_above_max"])
def test_an_invalid_box_is_named_not_sorted(bad):
    # a NaN compares false with everything and would corrupt the sorted endpoint lists
    lo = np.zeros((4, 3)) + np.arange(4)[:, None]
    hi = lo + 0.5
    if bad == "nan_min":
        lo[2, 1] = np.nan
    elif bad == "nan_max":
        hi[2, 0] = np.nan
    else:
        lo[2, 2] = hi[2, 2] + 1.0
    sp = SweepAndPrune()
    with pytest.raises(ValueError, match="geom 2 has an invalid AABB"):
        sp.update(lo, hi, np.arange(4), np.zeros(4, bool), 4)
    lo2, hi2 = np.zeros((4, 3)) + np.arange(4)[:, None], np.zeros((4, 3)) + np.arange(4)[:, None] + 0.5
    sp.update(lo2, hi2, np.arange(4), np.zeros(4, bool), 4)  # a good update first, then the bad one
    with pytest.raises(ValueError, match="geom 2 has an invalid AABB"):
        sp.update(lo, hi, np.arange(4), np.zeros(4, bool), 4)


def test_more_events_than_the_buffers_fall_back_to_a_full_sweep():
    """The incremental update records its add/remove events in buffers of 4 n + 64; a step with
    more events (here 40 scattered boxes all moved onto one spot: 780 new pairs against 224
    slots, then scattered again: 780 removals) must still report exactly the brute-force set."""
    n = 40
    rng = np.random.default_rng(7)
    scattered = rng.uniform(0, 100, (n, 3))
    half = np.full((n, 3), 0.5)
    body = np.arange(n, dtype=np.int64)
    static = np.zeros(n, dtype=np.bool_)
    sap = SweepAndPrune()
    for step, c in enumerate([scattered, np.zeros((n, 3)) + rng.uniform(0, 0.1, (n, 3)), scattered]):
        lo, hi = c - half, c + half
        got = sap.update(lo, hi, body, static, n)
        _assert_same(got, lo, hi, body, static, n, step)
        assert not sap.last_reinit or step == 0
    assert sap.last_removed > 4 * n + 64  # the scatter step really overflowed the buffer
