"""The impulse step's counters (``World.counters``) from the stages' outputs, in one kernel call:
a dozen small NumPy reductions per step cost more than the stages of a small scene."""

from __future__ import annotations

from tumble._core.config import kernel


@kernel(exact=True)
def step_counters(nbatches, batch_contact_start, correction_stats, resolution_stats, count, body_fixed):
    """Returns (largest batch's contacts; penetrating, corrected, unresolvable, bodies moved: the sums
    of correction_stats' columns; global iterations, closing contacts left, shock iterations: the
    sums of resolution_stats' columns 0, 2, 3; batches with a shock stage; fixed bodies)."""
    largest = 0
    for k in range(nbatches):
        largest = max(largest, batch_contact_start[k + 1] - batch_contact_start[k])
    pen = corr = unres = moved = its = left = shock_its = shock_batches = 0
    for k in range(correction_stats.shape[0]):
        pen += correction_stats[k, 0]
        corr += correction_stats[k, 1]
        unres += correction_stats[k, 2]
        moved += correction_stats[k, 3]
    for k in range(resolution_stats.shape[0]):
        its += resolution_stats[k, 0]
        left += resolution_stats[k, 2]
        shock_its += resolution_stats[k, 3]
        if resolution_stats[k, 1] != 0:
            shock_batches += 1
    fixed = 0
    for i in range(count):
        if body_fixed[i]:
            fixed += 1
    return largest, pen, corr, unres, moved, its, left, shock_its, shock_batches, fixed
