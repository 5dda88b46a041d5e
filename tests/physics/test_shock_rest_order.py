"""Shock: a brick pinched between two bodies of a lower stack height (issue 18).

Stack heights by contact distance from the ground (000 §4) can put a body resting on another at the
same or a lower height than its support: in tower_roof's collapse brick 476 (height 23) lay on brick
457 with bricks 496/497 lying on it, all three of height 22, all fixated in 476's layer, and the layer
correction pushed 476 70 mm into 457 (107.5 mm deepest overlap). ``ShockSettings.layer_rest_order``
raises the heights so that a body resting on another is above it (``contact.layers.rest_order_heights``).

The world: two slabs stacked on the ground (heights 1, 2), a brick on them (height 3), and a heavy plank
(500 kg) with its lower end on a pad on the ground (pad height 1, plank height 2) lying across the brick's
edge 30 mm into it. In the brick's layer the slab under it and the plank are both fixated; the brick
cannot satisfy both. Oracle: a 30 mm overlap needs nothing pushed deeper than it into anything else, and
the goal of issue 18 is no overlap > 1 cm under shock. Measured (60 steps of 1/60 s, deepest overlap at
the final detections): 22.2 mm (the brick into the slab at the first step, shoved 0.109 m sideways)
without the rest order, 0.10 mm with it.
"""

import math

import numpy as np
import pytest

import tumble as tb
from tumble._core import types as T
from tumble._core.contact.layers import articulated_heights, rest_order_heights
from tumble.errors import SettingsError

JAM = 0.03
THETA = math.radians(15.0)
PAD = 0.1


def _pinch(rest_order, steps=60):
    w = tb.World(solver="shock", layer_rest_order=rest_order)
    w.add_body(tb.Plane(), fixed=True)
    w.add_body(tb.Box((0.5, 0.5, 0.1)), position=(0, 0, 0.1), mass=50.0)           # height 1
    slab = w.add_body(tb.Box((0.4, 0.4, 0.1)), position=(0, 0, 0.3), mass=40.0)    # height 2
    brick = w.add_body(tb.Box((0.2, 0.2, 0.1)), position=(0, 0, 0.5), mass=10.0)   # height 3
    half, thick = 1.5, 0.05
    d = np.array([math.cos(THETA), 0.0, math.sin(THETA)])
    n = np.array([-math.sin(THETA), 0.0, math.cos(THETA)])
    # the plank's lower bottom edge on a pad on the ground (height 1; the plank height 2), its bottom face
    # 30 mm below the brick's top edge at x = -0.2
    foot = np.array([-0.2 - (0.6 - PAD - JAM) / math.tan(THETA), 0.0, PAD])
    w.add_body(tb.Box((0.3, 0.3, PAD / 2)), position=(foot[0] + 0.2, 0, PAD / 2), mass=20.0)
    plank = w.add_body(tb.Box((half, 0.2, thick)), position=tuple(foot + half * d + thick * n),
                       orientation=(math.cos(-THETA / 2), 0.0, math.sin(-THETA / 2), 0.0), mass=500.0)
    deepest = []
    for _ in range(steps):
        w.step(1 / 60)
        depth = w.contacts().depth
        deepest.append(float(np.max(depth)) if len(depth) else 0.0)
    return w, np.array(deepest), (slab, brick, plank)


def test_a_pinched_brick_is_not_pushed_into_its_support():
    w, deepest, (slab, brick, plank) = _pinch(True)
    assert deepest.max() < 0.01
    assert abs(w.position(brick)[0]) < 0.01          # not squeezed out sideways


def test_without_the_rest_order_the_pinched_brick_is_pushed_down():
    """The contrast (the code before, heights by contact distance): 22.2 mm measured."""
    _, deepest, _ = _pinch(False)
    assert deepest.max() > 0.015


def test_a_resting_stack_keeps_its_heights():
    """A column of boxes on the ground: the distance heights already follow the rest order, so the
    world steps bit for bit as without it."""
    def column(rest_order):
        w = tb.World(solver="shock", layer_rest_order=rest_order)
        w.add_body(tb.Plane(), fixed=True)
        bodies = [w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0.01 * k, 0, 0.5 + 1.0 * k)) for k in range(6)]
        for _ in range(60):
            w.step(1 / 60)
        return np.array([w.position(b) for b in bodies])
    assert np.array_equal(column(True), column(False))


def _row(a, b, n):
    J = np.zeros((2, 6))
    J[0, :3] = n
    J[1, :3] = -np.asarray(n)
    return a, b, J


def test_rest_order_heights_by_hand():
    """Six bodies: 0 and 5 on the ground (roots), 5 also lying on 0; 1 on 0; 2 on 5 and lying on 1 (the
    pinch); 3 on 2; 4 beside 0 (a sideways row, normal horizontal) and tied to 0 by a joint. Distance
    heights 1, 2, 2, 3, 2, 1; rest order: 2 rests on 1 -> 3, 3 on 2 -> 4; 4 keeps its height (a joint;
    sideways rows order nothing), 5 its (a root)."""
    up = np.array([0.0, 0.0, 1.0])
    ground = np.array([[0, 0, 1, 0, 0, 0], [0] * 6], float)
    rows = [(0, -1, ground), (5, -1, ground), _row(5, 0, (0, 0, 1)), _row(1, 0, (0, 0, 1)),
            _row(2, 5, (0, 0, 1)), _row(2, 1, (0, 0.6, 0.8)), _row(3, 2, (0, 0, 1)), _row(4, 0, (1, 0, 0)),
            _row(4, 0, (0, 0, 1))]
    kinds = [T.ROW_CONTACT_NORMAL] * 8 + [T.ROW_JOINT]
    row_body = np.array([[a, b] for a, b, _ in rows], dtype=np.int64)
    row_J = np.array([J for _, _, J in rows])
    row_kind = np.array(kinds, dtype=np.int64)
    position = np.array([[0, 0, 0.1], [0, 0, 0.3], [-0.5, 0, 0.4], [-0.5, 0, 0.6], [1.0, 0, 0.1], [-0.5, 0, 0.2]])
    fixed = np.zeros(6, dtype=np.bool_)
    height = np.zeros(6, dtype=np.int64)
    # distance heights from the contact rows only (the joint row would give 4 its partner's height)
    assert articulated_heights(8, row_body, row_kind, row_J, up, 0.5, 6, fixed, height) == 3
    assert height.tolist() == [1, 2, 2, 3, 2, 1]
    assert rest_order_heights(9, row_body, row_kind, row_J, up, 0.5, 6, fixed, position, height) == 4
    assert height.tolist() == [1, 2, 3, 4, 2, 1]


def test_a_bad_value_names_the_setting():
    with pytest.raises(SettingsError, match="layer_rest_order"):
        tb.World(solver="shock", layer_rest_order=1)
