"""The broad phase's fat boxes (``geoms.refresh_fat_aabbs``) against a NumPy twin written from the rule, and
the invariant that a box grown by shock's speculative pad does not keep its old reach (issue 19).

Rule (Box2D's fat AABBs plus the gap bound): a geom's fat box is its tight box grown by the fat margin
m = min(fat_fraction r, fat_max) and snapped outward to the grid of step m; it is kept as long as it holds
the tight box and reaches no farther than FAT_REFIT_GAP m beyond it on any side, and refit otherwise.

Before the gap bound, a brick falling from the top of ``tower_roof`` under shock kept in its fat box every
padded box of its fall (the next step's tight box lies inside the last padded one): 43 k broad-phase pairs
for 2.5 k overlapping tight boxes after the collapse, and the contact stores, reserved at 4 points a pair,
doubled to 345 k rows in the steps that ran over 80 ms. Both tests failed before the gap rule: the twin
(147 boxes refit where it refits 211) and the drop (the resting brick's fat box kept 0.226 m beyond its tight
box, the reach of its last padded step, where 4 fat margins are 0.092 m).
"""

from __future__ import annotations

import math

import numpy as np

import tumble as tb
from tumble._core import stages
from tumble._core.collision.geoms import FAT_REFIT_GAP, refresh_fat_aabbs


def twin_fat_boxes(tight_min, tight_max, radius, fat_fraction, fat_max, fat_min_in, fat_max_in, initialised):
    """NumPy twin: (fat_min, fat_max, boxes refit)."""
    fat_lo = fat_min_in.copy()
    fat_hi = fat_max_in.copy()
    m = np.minimum(fat_fraction * radius, fat_max)
    m = np.where(np.isfinite(m), m, fat_max)
    if initialised:
        holds = np.all((tight_min >= fat_lo) & (tight_max <= fat_hi), axis=1)
        near = np.all((tight_min - fat_lo <= FAT_REFIT_GAP * m[:, None])
                      & (fat_hi - tight_max <= FAT_REFIT_GAP * m[:, None]), axis=1)
        refit = ~(holds & near)
    else:
        refit = np.ones(len(radius), dtype=bool)
    for g in np.flatnonzero(refit):
        for k in range(3):
            lo, hi = tight_min[g, k], tight_max[g, k]
            if abs(lo) > 1e17 or abs(hi) > 1e17:
                fat_lo[g, k], fat_hi[g, k] = lo, hi
            else:
                fat_lo[g, k] = math.floor((lo - m[g]) / m[g]) * m[g]
                fat_hi[g, k] = math.ceil((hi + m[g]) / m[g]) * m[g]
    return fat_lo, fat_hi, int(refit.sum())


def test_fat_boxes_equal_the_numpy_twin():
    """Random boxes moved, grown and shrunk about their fat boxes: kept, moved and refit as the twin says."""
    rng = np.random.default_rng(19)
    n = 400
    radius = rng.uniform(0.05, 2.0, n)
    radius[:5] = np.inf                                  # planes: fat margin fat_max, their huge bounds kept
    centre = rng.uniform(-5, 5, (n, 3))
    half = rng.uniform(0.02, 1.0, (n, 3))
    tight_min, tight_max = centre - half, centre + half
    tight_min[:5, :2], tight_max[:5, :2] = -1e18, 1e18
    tight_min[:5, 2] = -1e18
    fat_min, fat_max = np.empty((n, 3)), np.empty((n, 3))
    moved = refresh_fat_aabbs(tight_min, tight_max, radius, n, 0.1, 0.1, fat_min, fat_max, False)
    want = twin_fat_boxes(tight_min, tight_max, radius, 0.1, 0.1, fat_min, fat_max, False)
    assert moved == want[2] == n
    np.testing.assert_array_equal(fat_min, want[0])
    np.testing.assert_array_equal(fat_max, want[1])
    refit_by_gap = 0
    for _ in range(30):
        m = np.minimum(0.1 * radius, 0.1)
        step = rng.normal(0.0, 1.0, (n, 3)) * m[:, None] * rng.choice([0.1, 1.0, 3.0], (n, 1))
        grow = rng.uniform(0.0, 8.0, (n, 1)) * m[:, None] * (rng.random((n, 1)) < 0.3)
        # some fat boxes grown as pad_speculative grows them (the padded tight box united in)
        fat_min = np.minimum(fat_min, tight_min - grow)
        fat_max = np.maximum(fat_max, tight_max + grow)
        tight_min[5:] += step[5:]
        tight_max[5:] += step[5:]
        before = (fat_min.copy(), fat_max.copy())
        want = twin_fat_boxes(tight_min, tight_max, radius, 0.1, 0.1, fat_min, fat_max, True)
        moved = refresh_fat_aabbs(tight_min, tight_max, radius, n, 0.1, 0.1, fat_min, fat_max, True)
        assert moved == want[2]
        np.testing.assert_array_equal(fat_min, want[0])
        np.testing.assert_array_equal(fat_max, want[1])
        holds = np.all((tight_min >= before[0]) & (tight_max <= before[1]), axis=1)
        refit_by_gap += int(np.sum(holds & np.any(fat_min != before[0], axis=1)))
    assert refit_by_gap > 100                             # the gap rule itself was exercised


def test_a_box_padded_down_its_fall_keeps_a_fat_box_near_its_tight_box():
    """A brick (tower_roof's size) dropped 8 m under shock with speculative contacts, then resting: after every
    step each side of its fat box lies within FAT_REFIT_GAP fat margins of its (padded) tight box, and at rest
    it pairs with none of the bricks it fell past (a fixed column beside its path, 20 cm away), only the ground."""
    w = tb.World(solver="shock", speculative_contacts=True)
    w.add_body(tb.Plane(), fixed=True)
    half = (0.2, 0.1, 0.05)
    for k in range(40):       # a fixed column beside the path: x from 0.4 (the brick's side is at 0.2)
        w.add_body(tb.Box(half), position=(0.6, 0.0, 0.05 + 0.1 * k), fixed=True)
    b = w.add_body(tb.Box(half), position=(0.0, 0.0, 8.0), mass=32.0)
    core = w._core
    g = core.geoms
    gb = int(np.flatnonzero(g.geom_body[:g.count] == b)[0])
    m = min(stages.FAT_FRACTION * float(g.geom_radius[gb]), stages.FAT_MAX)
    worst = 0.0
    for _ in range(200):      # 1.28 s falling, then resting on the ground
        w.step(0.01)
        gap = max(float(np.max(g.geom_aabb_min[gb] - g.geom_fat_min[gb])),
                  float(np.max(g.geom_fat_max[gb] - g.geom_aabb_max[gb])))
        worst = max(worst, gap)
    assert w.position(b)[2] < 0.1                         # it fell and rests on the ground
    assert worst <= FAT_REFIT_GAP * m + 1e-12
    assert core.counters["pairs"] == 1                    # the ground
