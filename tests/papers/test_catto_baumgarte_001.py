"""Catto 001 §4.2, Baumgarte stabilisation (eq. 20: J V = -beta C). The paper's own analysis: a body whose
centre of mass is held at p (J = identity, no inertia or external force) under the Euler rule has the error
C(k dt) = (1 - dt beta)^k C(0): smooth decay for 0 < beta <= 1/dt. ``benchmarks/papers.py --papers 001``
reports it (paper_001.md); measured there: exactly (1 - beta dt)^k to 1.7e-16 C0 for beta dt 0.1-1 with a
ball joint under Catto's plain scheme, and on a contact only the first step follows it (the box keeps the
push-out velocity beta d0 / dt and leaves the ground)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tumble as tb

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.papers import baumgarte_contact_depths, baumgarte_joint_errors  # noqa: E402


@pytest.mark.parametrize("beta_dt", [0.1, 0.5, 0.9, 1.0])
def test_point_constraint_error_decays_as_one_minus_beta_dt_to_the_k(beta_dt):
    c = baumgarte_joint_errors(beta_dt)
    k = np.arange(len(c))
    assert c == pytest.approx(0.01 * (1.0 - beta_dt) ** k, abs=1e-12)
    assert np.all(np.diff(c) <= 1e-15)                     # smooth: no overshoot for beta dt <= 1


def test_beta_dt_above_one_is_refused():
    with pytest.raises(tb.TumbleError, match="baumgarte=1.5"):
        tb.World(solver="pgs", baumgarte=1.5)


def test_contact_keeps_the_push_out_velocity():
    d, vz = baumgarte_contact_depths(0.2)
    assert d[1] == pytest.approx(0.008, abs=1e-6)          # first step: (1 - beta dt) d0
    assert vz == pytest.approx(0.2 * 0.01 * 60.0, rel=1e-3)  # then it leaves at beta d0 / dt
    assert d[-1] < d[1] - 0.005
