"""The scene library: names, counts, non-overlapping initial layouts, the registry's errors, and the
metrics on synthetic trajectories (no World needed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tumble.scenes as scenes
from tumble.errors import SceneError
from tumble.scenes.metrics import SceneMetrics, spec_aabbs, spec_initial_state
from tumble.shapes import Box, Plane, Sphere

EXPECTED = {  # name -> (dynamic body count, tag of the counted bodies, shape type)
    "stack10": (10, "stack", Box),
    "stack3_nocache": (3, "stack", Box),
    "mass_ratio": (2, "stack", Box),
    "pyramid20": (210, "stack", Box),
    "wall200": (210, "stack", Box),
    "pile1000": (1000, "pile", Sphere),
    "large_pyramid": (5050, "stack", Box),
}


def test_names_and_descriptions():
    assert set(EXPECTED) <= set(scenes.names())
    assert scenes.names() == sorted(scenes.names())
    for name, desc in scenes.describe():
        assert desc and "\n" not in desc, name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts_and_tags(name):
    s = scenes.spec(name)
    n, tag, shape_type = EXPECTED[name]
    dyn = [b for b in s.bodies if not b.fixed]
    assert len(dyn) == n
    assert len(s.tagged(tag)) == n
    assert all(isinstance(b.shape, shape_type) for b in dyn)
    ground = s.tagged("ground")
    assert len(ground) == 1 and isinstance(s.bodies[ground[0]].shape, Plane) and s.bodies[ground[0]].fixed
    for b in s.bodies:
        assert b.tag in {"ground", "wall", "stack", "projectile", "pile"}
        assert b.fixed == (b.tag in {"ground", "wall"})
    assert s.name == name and s.description and s.dt > 0 and s.seconds > 0
    assert s.params == scenes.defaults(name)


def _overlaps(s, tol=1e-9):
    """Pairs of non-plane bodies whose initial AABBs overlap by more than ``tol`` on every axis."""
    lo, hi = spec_aabbs(s)
    finite = np.all(np.isfinite(lo), axis=1) & np.all(np.isfinite(hi), axis=1)
    idx = np.flatnonzero(finite)
    lo, hi = lo[idx], hi[idx]
    order = np.argsort(lo[:, 0])                  # sweep and prune along x
    bad = []
    for a_pos, a in enumerate(order):
        for b in order[a_pos + 1:]:
            if lo[b, 0] >= hi[a, 0] - tol:
                break
            if np.all(np.minimum(hi[a], hi[b]) - np.maximum(lo[a], lo[b]) > tol):
                bad.append((int(idx[a]), int(idx[b])))
    return bad


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_initial_bodies_do_not_overlap(name):
    s = scenes.spec(name)
    assert _overlaps(s) == []
    lo, _ = spec_aabbs(s)
    for i, b in enumerate(s.bodies):        # nothing below the ground plane
        if not isinstance(b.shape, Plane):
            assert lo[i, 2] >= -1e-9, (name, i)


def test_stack10_is_table1_in_si():
    s = scenes.spec("stack10")
    boxes = [s.bodies[i] for i in s.tagged("stack")]
    assert s.gravity == (0.0, 0.0, -9.45)
    assert math.isclose(s.dt, 1 / 60)
    assert s.settings == {"iterations": 10, "baumgarte": 0.05, "warm_start": True, "slop": 0.001,
                          "friction_model": "fixed", "gyroscopic": False}
    assert s.seconds == 60.0
    for k, b in enumerate(boxes):
        assert b.shape.half_extents == (0.35, 0.35, 0.175)
        assert b.mass == 110.0
        assert b.material.friction == 0.2 and b.material.restitution == 0.0
        assert math.isclose(b.position[2], 0.035 + 0.175 + k * (0.35 + 0.035))
    ground = s.bodies[s.tagged("ground")[0]]
    assert ground.material.friction == 0.2
    assert scenes.spec("stack3_nocache").settings["warm_start"] is False


def test_mass_ratio_orders_the_boxes():
    heavy_top = [b.mass for b in scenes.spec("mass_ratio", ratio=0.01).bodies if not b.fixed]
    assert heavy_top == pytest.approx([1.1, 110.0])
    light_top = [b.mass for b in scenes.spec("mass_ratio", ratio=0.01, heavy_on_top=False).bodies
                 if not b.fixed]
    assert light_top == pytest.approx([110.0, 1.1])
    assert scenes.spec("mass_ratio", warm_start=False).settings["warm_start"] is False


def test_pyramid_rows_offset_by_half_a_cube():
    s = scenes.spec("pyramid20")
    pos = np.array([s.bodies[i].position for i in s.tagged("stack")])
    assert np.all(pos[:, 1] == 0.0)
    rows = np.round(pos[:, 2] - 0.5).astype(int)
    assert sorted(np.bincount(rows).tolist()) == list(range(1, 21))
    x0 = np.sort(pos[rows == 0, 0])
    x1 = np.sort(pos[rows == 1, 0])
    assert np.allclose(x1 - x0[:-1], 0.5 * (x0[1] - x0[0]))


def test_wall_running_bond():
    s = scenes.spec("wall200")
    ids = s.tagged("stack")
    pos = np.array([s.bodies[i].position for i in ids])
    half_x = np.array([s.bodies[i].shape.half_extents[0] for i in ids])
    rows = np.round((pos[:, 2] - 0.05) / 0.1).astype(int)
    assert np.bincount(rows).tolist() == [10, 11] * 10
    full = np.isclose(half_x, 0.1)
    assert (~full).sum() == 20                           # a half brick at each end of every odd course
    shift = np.sort(pos[(rows == 1) & full, 0])[0] - np.sort(pos[rows == 0, 0])[0]
    assert shift == pytest.approx(0.5 * 0.202)
    # every course spans the same length, and every brick above the first course has its centre
    # inside the span of the bricks it rests on (a wall that can stand)
    for r in range(20):
        sel = rows == r
        assert (pos[sel, 0] - half_x[sel]).min() == pytest.approx(-0.5 * (10 * 0.202 - 0.002))
        assert (pos[sel, 0] + half_x[sel]).max() == pytest.approx(0.5 * (10 * 0.202 - 0.002))
        if r:
            below = rows == r - 1
            lo, hi = pos[below, 0] - half_x[below], pos[below, 0] + half_x[below]
            for x, hx in zip(pos[sel, 0], half_x[sel]):
                under = (lo < x + hx) & (hi > x - hx)
                assert lo[under].min() < x < hi[under].max()
    # bricks in a course do not touch (2 mm joints)
    for r in range(20):
        sel = np.argsort(pos[rows == r, 0])
        xs, hs = pos[rows == r, 0][sel], half_x[rows == r][sel]
        np.testing.assert_allclose(xs[1:] - hs[1:] - (xs[:-1] + hs[:-1]), 0.002, atol=1e-12)


def test_params_override_and_counts_follow():
    assert len(scenes.spec("stack10", count=4).tagged("stack")) == 4
    assert len(scenes.spec("pyramid20", base=5).tagged("stack")) == 15
    assert len(scenes.spec("pile1000", count=50).tagged("pile")) == 50


def test_unknown_scene_raises_scene_error_naming_it():
    with pytest.raises(SceneError) as ei:
        scenes.spec("no_such_scene")
    msg = str(ei.value)
    assert "no_such_scene" in msg and "stack10" in msg and "pyramid20" in msg
    with pytest.raises(SceneError, match="no_such_scene"):
        scenes.build("no_such_scene")


def test_unknown_param_raises_scene_error_naming_it():
    with pytest.raises(SceneError) as ei:
        scenes.spec("stack10", bogus=3)
    assert "bogus" in str(ei.value) and "stack10" in str(ei.value) and "count" in str(ei.value)


def test_build_splits_params_from_settings():
    params, settings = scenes.split_params("stack10", {"count": 3, "iterations": 20, "warm_start": False})
    assert params == {"count": 3, "warm_start": False}
    assert settings == {"iterations": 20}


# -- metrics on synthetic trajectories ------------------------------------------------------------

def _initial(s):
    return [np.array(a, dtype=float) for a in spec_initial_state(s)]


def test_drift_of_a_body_moved_sideways():
    s = scenes.spec("stack10")
    m = SceneMetrics(s)
    p, q, v, w = _initial(s)
    top = s.tagged("stack")[-1]
    for k in range(1, 11):
        p2 = p.copy()
        p2[top, 0] += 0.01 * k
        m.observe_arrays(k / 60, p2, q, v, w, 0.001 * k)
    r = m.result()
    assert r["max_drift"] == pytest.approx(0.1)
    assert r["max_penetration"] == pytest.approx(0.01)
    assert r["observations"] == 10


def test_settled_stack_stands_and_toppled_does_not():
    s = scenes.spec("stack10")
    ids = s.tagged("stack")
    p, q, v, w = _initial(s)
    settled = p.copy()
    settled[ids, 2] = 0.175 + 0.35 * np.arange(len(ids))
    m = SceneMetrics(s)
    m.observe_arrays(1.0, settled, q, v, w, 0.0)
    assert m.result()["standing"] is True
    # toppled: the top five boxes lie on the ground beside the stack, rotated 90 degrees about x
    toppled = settled.copy()
    qt = q.copy()
    for k, i in enumerate(ids[5:]):
        toppled[i] = (2.0 + 0.8 * k, 0.0, 0.35)
        qt[i] = (math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0)
    m2 = SceneMetrics(s)
    m2.observe_arrays(1.0, toppled, qt, v, w, 0.0)
    r = m2.result()
    assert r["standing"] is False
    assert r["max_drift"] > 2.0
    # tilted only: right heights but 20 degrees of tilt on one box
    qt2 = q.copy()
    qt2[ids[3]] = (math.cos(math.radians(10)), 0.0, math.sin(math.radians(10)), 0.0)
    m3 = SceneMetrics(s)
    m3.observe_arrays(1.0, settled, qt2, v, w, 0.0)
    assert m3.result()["standing"] is False


def test_energy_definitions():
    s = scenes.spec("stack10", count=1)
    p, q, v, w = _initial(s)
    m = SceneMetrics(s)
    z0 = s.bodies[1].position[2]
    assert m.result()["energy"] == pytest.approx(110.0 * 9.45 * z0)
    p2, v2, w2 = p.copy(), v.copy(), w.copy()
    p2[1, 2] = 0.175
    v2[1] = (1.0, 0.0, 0.0)
    w2[1] = (0.0, 0.0, 2.0)
    m.observe_arrays(0.5, p2, q, v2, w2, 0.0)
    izz = 110.0 / 3.0 * (0.35**2 + 0.35**2)
    expect = 110.0 * 9.45 * 0.175 + 0.5 * 110.0 + 0.5 * izz * 4.0
    r = m.result()
    assert r["energy"] == pytest.approx(expect)
    assert r["energy_max_gain"] == pytest.approx(max(0.0, expect - 110.0 * 9.45 * z0))
    p3 = p.copy()
    p3[1, 2] = z0 + 1.0
    m.observe_arrays(1.0, p3, q, v, w, 0.0)
    assert m.result()["energy_max_gain"] == pytest.approx(110.0 * 9.45)


def test_scenes_without_stack_judge_all_dynamic_bodies():
    s = scenes.spec("pile1000", count=20)
    m = SceneMetrics(s)
    p, q, v, w = _initial(s)
    p2 = p.copy()
    p2[s.tagged("pile")[7], 1] += 0.3
    m.observe_arrays(0.1, p2, q, v, w, 0.0)
    r = m.result()
    assert r["max_drift"] == pytest.approx(0.3)
    assert r["standing"] is None
