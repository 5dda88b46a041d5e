"""pgs keeps its joint tree between steps while the tree's inputs are unchanged (issue 19,
``PGSSolver._tree``): a world whose joints and bodies change between steps (a joint removed, a body
removed, a joint added) steps bit for bit like one that builds the tree afresh every step."""

import numpy as np

import tumble as tb


def _chain_world():
    w = tb.World(gravity=(0, 0, -9.81), solver="pgs")
    prev = None
    for k in range(6):
        i = w.add_body(tb.Capsule(0.02, 0.03), position=(0.1 * k + 0.05, 0, 2), orientation=(0.7071067811865476, 0,
                       0.7071067811865476, 0), mass=0.1 + 0.05 * k)
        w.add_joint(tb.Ball(prev, i, (0.1 * k, 0, 2)))
        prev = i
    return w


def _state(w):
    return np.concatenate([w.positions.ravel(), w.orientations.ravel(), w.linear_velocities.ravel(),
                           w.angular_velocities.ravel()]).tobytes()


def _run(fresh_tree: bool):
    w = _chain_world()
    solver = w._core.solver
    events = {5: lambda: w.remove_joint(3), 10: lambda: w.add_joint(tb.Ball(2, 4, (0.3, 0, 1.9))),
              15: lambda: w.remove_body(5)}
    states = []
    for k in range(24):
        if k in events:
            events[k]()
        if fresh_tree:
            solver._tree_cache = None
        w.step(1.0 / 60.0)
        states.append(_state(w))
    return states


def test_kept_tree_steps_as_a_fresh_one():
    kept = _run(False)
    fresh = _run(True)
    assert kept == fresh
