"""Shock: a correction's turn carried up a column of bricks under a heavy lid (issue 18).

falling_roof under shock (step 393) had a brick thrown 179 mm up into the roof by the layer corrections,
131 mm deep at the final detection: the projection rows are linear in the rotation, and in the kinetic
metric a push near a brick's end is mostly a turn. A turned brick, fixated as the next layer's base,
lifted the end of the brick resting on it by dtheta r and turned that one further: 0.19 -> 0.25 -> 0.50 ->
0.78 -> 1.22 rad up five courses from a 27.5 mm overlap. ``ShockSettings.correction_max_turn`` (0.1 rad)
solves such a correction again in the metric diag(m, I / 0.01).

The world: six bricks (0.4 x 0.2 x 0.2 m, 32 kg) in a column whose courses overlap by their last 0.1 m
(centres at x = 0 and 0.3 alternately, a corbelled column), a 1.5 t lid on top, and a fixed stone 30 mm
up into the bottom brick near its +x end. Oracle: resolving a 30 mm overlap needs no body lifted by more
than 30 mm (pushing the bottom brick and everything it carries straight up does it; gravity only lowers
them), so in the first step no body may rise more than that plus 1 cm. Measured: 195.6 mm before
(correction_max_turn = inf, the kinetic metric of 000 eq. 46 always), 33.3 mm with the limit.
"""

import math

import numpy as np
import pytest

import tumble as tb
from tumble.errors import SettingsError

DEPTH = 0.03


def _column(**settings):
    w = tb.World(solver="shock", **settings)
    w.add_body(tb.Plane(), fixed=True)
    w.add_body(tb.Box((0.05, 0.1, 0.05)), position=(0.15, 0, -0.05 + DEPTH), fixed=True)    # the stone
    bodies = [w.add_body(tb.Box((0.2, 0.1, 0.1)), position=(0.0 if k % 2 == 0 else 0.3, 0, 0.1 + 0.2 * k),
                         density=2000.0) for k in range(6)]
    bodies.append(w.add_body(tb.Box((0.6, 0.4, 0.1)), position=(0.15, 0, 1.3), mass=1500.0))     # the lid
    return w, bodies


def _largest_rise(**settings):
    w, bodies = _column(**settings)
    z0 = np.array([w.position(b)[2] for b in bodies])
    w.step(1 / 100)
    return float((np.array([w.position(b)[2] for b in bodies]) - z0).max()), w


def test_a_corner_overlap_lifts_the_column_no_more_than_its_depth():
    rise, w = _largest_rise()
    assert rise < DEPTH + 0.01
    depth = w.contacts().depth
    assert float(np.max(depth)) < 0.01 if len(depth) else True


def test_without_the_turn_limit_the_turn_climbs_the_column():
    """The contrast (the code before): 195.6 mm measured."""
    rise, _ = _largest_rise(correction_max_turn=math.inf)
    assert rise > 0.1


def test_the_limit_does_not_touch_a_resting_column():
    """A level column on the ground (no overlap to turn anything) steps bit for bit as without the limit."""
    def run(turn):
        w = tb.World(solver="shock", correction_max_turn=turn)
        w.add_body(tb.Plane(), fixed=True)
        bodies = [w.add_body(tb.Box((0.2, 0.1, 0.1)), position=(0.0 if k % 2 == 0 else 0.1, 0, 0.1 + 0.2 * k),
                             density=2000.0) for k in range(6)]
        for _ in range(30):
            w.step(1 / 100)
        return np.array([w.position(b) for b in bodies])
    assert np.array_equal(run(0.1), run(math.inf))


@pytest.mark.parametrize("bad", [0.0, -0.1, float("nan"), True, "0.1"])
def test_bad_turn_limits_are_refused(bad):
    with pytest.raises(SettingsError, match="correction_max_turn"):
        tb.World(solver="shock", correction_max_turn=bad)
