"""The narrow phase's chunked layout (pairs in chunks of PAIR_CHUNK, written as dense blocks and
compacted afterwards) against the same narrow phase run one pair at a time: the contacts of a
scene's ~1000 candidate pairs (many chunks, spheres, boxes and a plane) must be the per-pair
manifolds, concatenated in pair order, value for value."""

from __future__ import annotations

import numpy as np

import tumble as tb
from tumble._core import stages
from tumble._core.collision.narrow_phase import PAIR_CHUNK, narrow_phase

OUTPUTS = 11  # contact_geom_a ... contact_restitution


def _outputs(rows):
    return (np.empty(rows, np.int64), np.empty(rows, np.int64), np.empty(rows, np.int64), np.empty(rows, np.int64),
            np.empty(rows, np.int64), np.empty(rows, np.int64), np.empty((rows, 3)), np.empty((rows, 3)),
            np.empty(rows), np.empty(rows), np.empty(rows))


def test_chunked_contacts_equal_the_per_pair_manifolds_in_pair_order():
    spec = tb.scenes.spec("cage", balls=60, boxes=60, per_row=6, gravity_time=0.0)
    w = spec.build(solver="impulse")
    captured = []
    real = stages.narrow_phase

    def grab(*args):
        captured.append(args[:14])
        return real(*args)

    for _ in range(240):  # let the bodies fall into a pile: many touching pairs
        w.step(spec.dt)
    stages.narrow_phase = grab
    try:
        w.step(spec.dt)
    finally:
        stages.narrow_phase = real
    pairs, pair_count, *geometry = captured[0]
    assert pair_count > 4 * PAIR_CHUNK  # several chunks, and a partial last one
    out = _outputs(4 * pair_count + 1)
    count = narrow_phase(pairs, pair_count, *geometry, *out)
    want = [[] for _ in range(OUTPUTS)]
    for p in range(pair_count):
        one = _outputs(4)
        n = narrow_phase(pairs[p:p + 1].copy(), 1, *geometry, *one)
        for k in range(OUTPUTS):
            want[k].append(one[k][:n])
    assert count > pair_count // 4  # a pile: most candidate pairs touch
    for k in range(OUTPUTS):
        np.testing.assert_array_equal(out[k][:count], np.concatenate(want[k]))
