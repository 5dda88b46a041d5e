"""The scenes of paper 002 (bricks5x5, overhang, gauss_stack): layout, the harmonic offsets' closed
form, and a few steps under every solver."""

from __future__ import annotations

import numpy as np
import pytest

import tumble.scenes as scenes
from tumble._core.solvers import registry
from tumble.errors import SceneError
from tumble.scenes.gauss import BRICK_HALF, overhang_offsets
from tumble.scenes.metrics import spec_aabbs
from tumble.shapes import Box

NEW = {"bricks5x5": 25, "overhang": 4, "gauss_stack": 6}


def _overlapping_pairs(s, tol=1e-9):
    """Pairs of finite bodies whose initial boxes overlap by more than ``tol`` on every axis."""
    lo, hi = spec_aabbs(s)
    idx = np.flatnonzero(np.all(np.isfinite(lo), axis=1) & np.all(np.isfinite(hi), axis=1))
    return [(int(a), int(b)) for i, a in enumerate(idx) for b in idx[i + 1:]
            if np.all(np.minimum(hi[a], hi[b]) - np.maximum(lo[a], lo[b]) > tol)]


@pytest.mark.parametrize("name", sorted(NEW))
def test_layout(name):
    s = scenes.spec(name)
    dyn = [b for b in s.bodies if not b.fixed]
    assert len(dyn) == NEW[name] == len(s.tagged("stack"))
    assert all(isinstance(b.shape, Box) for b in dyn)
    assert _overlapping_pairs(s) == []
    assert s.params == scenes.defaults(name) and s.description


@pytest.mark.parametrize("count", [1, 2, 4, 7])
def test_harmonic_offsets_put_each_centre_of_mass_on_its_edge(count):
    # shift 1: the top k bricks' centre of mass lies over the right edge of brick k + 1 (the table's
    # edge x = 0 for k = count): 002 Fig. 1's critical overhang
    L = 2.0 * BRICK_HALF[0]
    xs = overhang_offsets(count, 1.0)            # bottom first
    edges = [0.0] + [x + 0.5 * L for x in xs[:-1]]
    for j in range(count):                        # bricks j.. (from the bottom) rest on edge j
        assert np.mean(xs[j:]) == pytest.approx(edges[j], abs=1e-12)
    total = sum(L / (2.0 * k) for k in range(1, count + 1))
    assert xs[-1] + 0.5 * L == pytest.approx(total)


@pytest.mark.parametrize("name", sorted(NEW))
@pytest.mark.parametrize("solver", registry.names())
def test_runs_under_every_solver(name, solver):
    w = scenes.build(name, solver=solver)
    for _ in range(3):
        w.step()
    assert np.all(np.isfinite(w.positions))


def test_bad_parameters_name_the_scene_and_value():
    with pytest.raises(SceneError, match="overhang.*count"):
        scenes.spec("overhang", count=0)
    with pytest.raises(SceneError, match="bricks5x5.*shift"):
        scenes.spec("bricks5x5", shift=-0.1)
    with pytest.raises(SceneError, match="gauss_stack.*ratio"):
        scenes.spec("gauss_stack", ratio=float("nan"))
