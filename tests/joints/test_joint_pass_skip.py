"""The joint projection's passes skip the settled tree joints (``PGSSettings.joint_pass_skip_settled``,
issue 19): after the tree's Newton steps a limited hinge whose coordinate is within its limits and whose
bodies the passes have not moved would only be moved by a share of the Newton steps' residual, so skipping
it must leave the projection where the full passes leave it. The oracle is the full passes themselves, from
the same state, step after step (a pile of ragdolls is chaotic: whole runs diverge from any difference)."""

import numpy as np
import pytest

import tumble as tb
from tumble.errors import SettingsError


def _limits_passed(w) -> int:
    """Limited joints whose coordinate is outside their limits at the current poses."""
    js = w._core.joint_store
    n = js.count
    c = js.joint_coord[:n]
    lim = js.joint_has_limits[:n]
    return int(np.sum(lim & ((c < js.joint_limit[:n, 0]) | (c > js.joint_limit[:n, 1]))))


def test_skipping_settled_joints_projects_as_the_full_passes():
    spec = tb.scenes.spec("ragdolls", count=3, seed=1)
    w = spec.build(solver="pgs", joint_pass_skip_settled=False)
    worst_move, worst_error_gain, passed = 0.0, 0.0, 0
    for _ in range(150):
        state = w.save_state()
        w.step(spec.dt)
        full, full_error = w.positions.copy(), float(np.max(w.joint_errors()))
        passed += _limits_passed(w)
        w.restore_state(state)
        w.settings.joint_pass_skip_settled = True
        w.step(spec.dt)
        worst_move = max(worst_move, float(np.max(np.abs(w.positions - full))))
        worst_error_gain = max(worst_error_gain, float(np.max(w.joint_errors())) - full_error)
        w.restore_state(state)      # on along the full passes' trajectory
        w.step(spec.dt)
    # the passes had limits to correct (measured: limits past after most steps once the ragdolls land)
    assert passed > 20
    # a skipped joint keeps the Newton steps' residual, at most joint_correction_tolerance (1e-6), which the
    # full passes would shrink by joint_correction_fraction per visit; measured here 9.5e-8 m and 2.3e-7; a
    # skip that also skipped the neighbours a correction moved leaves their joints open by the correction (mm)
    assert worst_move < 2e-6
    assert worst_error_gain < w.settings.joint_correction_tolerance


def test_skip_setting_is_checked():
    with pytest.raises(SettingsError, match="joint_pass_skip_settled"):
        tb.World(solver="pgs", joint_pass_skip_settled="yes")
