"""Erleben 000 Figs. 29-30, the "long-term popcorn effect" (``benchmarks/papers.py --papers 000`` runs the
full experiment, paper_000.md): the tooth counter the pile row uses, on series whose teeth are known, and
the measured single-cow result (no saw-tooth: the cow comes to rest to well under a micrometre)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.papers import TOOTH_RISE, TOOTH_STEPS, saw_teeth, sawtooth  # noqa: E402


def test_saw_teeth_counts_slow_rises_that_drop_at_once():
    # three teeth: rise 1 mm over 10 steps, fall back in one step
    tooth = list(np.linspace(0.0, 1e-3, 11)) + [0.0]
    z = np.array(tooth * 3)
    runs, teeth, rises = saw_teeth(z)
    assert (runs, teeth) == (3, 3)
    assert np.allclose(rises, 1e-3)


def test_saw_teeth_ignores_short_small_and_slowly_undone_rises():
    short = [0.0] + [1e-3 * k for k in range(1, TOOTH_STEPS)] + [0.0]           # rises over too few steps
    small = list(np.linspace(0.0, 0.5 * TOOTH_RISE, 20)) + [0.0]                 # rises too little
    slow = list(np.linspace(0.0, 1e-3, 11)) + list(np.linspace(1e-3, 0.0, 20))   # undone slowly: a wave
    for z in (short, small, slow):
        runs, teeth, _ = saw_teeth(np.array(z))
        assert teeth == 0
    assert saw_teeth(np.array(slow))[0] == 1        # the wave's rise is a run, not a tooth


def test_a_cow_standing_on_the_ground_under_shock_has_no_saw_tooth():
    """Fig. 30's configuration at the paper's dt 0.01: measured < 0.2 um peak-to-peak over the second
    second (the paper plots a saw-tooth here)."""
    pp, drops = sawtooth(0.01, 1e-4, 2.0, "cow")
    assert pp < 1e-6
    assert drops == 0
