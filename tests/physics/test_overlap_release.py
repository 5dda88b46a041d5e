"""Issue 17: bodies started deeply overlapping leave with at most the solver's release speed
(``Solver.release_speed``: max_correction_speed for pgs, jacobi and gauss, 0 for shock and impulse)
plus what gravity adds, under every solver.

Oracles: with gravity off, nothing but the contacts can give a body speed, so every body's speed is
bounded by the release speed c at all times; with gravity, a body's speed is bounded by c plus the
free-fall speed sqrt(2 g H) from the highest point of the scene (energy: no body can fall further).
Before the fix (pgs, c = 4 m/s) the jam left at 23 m/s and the column's top box at 12 m/s; jacobi 24
and 18 m/s; gauss (c = 10) 55 and 40 m/s.
"""

import math

import numpy as np
import pytest

import tumble as tb
from tumble._core.solvers import registry

G = 9.81
SOLVERS = ["pgs", "jacobi", "gauss", "shock", "impulse"]


def jam(w):
    """Two unit spheres 3.5 m and 3.0 m deep in two fixed spheres of radius 5 with room for one."""
    w.add_body(tb.Sphere(5.0), position=(0, 0, 0), fixed=True)
    w.add_body(tb.Sphere(5.0), position=(12, 0, 0), fixed=True)
    w.add_body(tb.Sphere(1.0), position=(2.5, 0, 0))
    w.add_body(tb.Sphere(1.0), position=(9.0, 0.5, 0))


def box_in_box(w):
    """A box whose centre is 0.8 m inside a fixed 4 m box."""
    w.add_body(tb.Box((2.0, 2.0, 2.0)), position=(0, 0, 0), fixed=True)
    w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0.8, 0.3, 0.2))


def box_in_dynamic_box(w):
    """A box inside a heavier dynamic box."""
    w.add_body(tb.Box((1.0, 1.0, 1.0)), position=(0, 0, 0))
    w.add_body(tb.Box((0.5, 0.4, 0.3)), position=(0.3, 0.1, 0.2))


def column(w):
    """Four unit boxes each 0.4 m into the one below, the lowest 0.3 m into the ground (top at 2.3 m)."""
    w.add_body(tb.Plane(), fixed=True)
    for i in range(4):
        w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0.05 * i, 0, 0.2 + 0.6 * i))


def sphere_pile(w):
    """Five balls of radius 0.5 started 0.2 m into each other above the ground (top at 2.0 m)."""
    w.add_body(tb.Plane(), fixed=True)
    for i in range(5):
        w.add_body(tb.Sphere(0.5), position=(0.1 * i, 0.05 * i, 0.3 + 0.3 * i))


# name -> (builder, gravity on, highest point H [m] a body can fall from after being pushed out)
CASES = {"jam": (jam, False, 0.0), "box_in_box": (box_in_box, False, 0.0),
         "box_in_dynamic_box": (box_in_dynamic_box, False, 0.0),
         "column": (column, True, 2.3 + 4 * 0.4), "sphere_pile": (sphere_pile, True, 2.0 + 5 * 0.2)}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("solver", SOLVERS)
def test_deep_overlaps_leave_with_at_most_the_release_speed(solver, case):
    build, gravity, top = CASES[case]
    w = tb.World(solver=solver, gravity=(0, 0, -G if gravity else 0.0))
    build(w)
    c = registry.solver_class(solver).release_speed(w.settings)
    # with gravity: H is the top of the scene plus every overlap pushed out upwards (a generous height)
    bound = c + math.sqrt(2.0 * G * top) + 1e-3
    dt = 1 / 240 if solver == "impulse" else 1 / 60
    fastest = 0.0
    for _ in range(int(2.0 / dt)):
        w.step(dt)
        fastest = max(fastest, float(np.linalg.norm(w.linear_velocities, axis=1).max()))
    assert fastest <= bound, f"{solver} {case}: {fastest:.3f} m/s > {bound:.3f} m/s"
    if not gravity:     # and the overlaps are gone (within a few cm: slop, the last steps' push)
        assert w.counters["max_penetration"] < 0.05


@pytest.mark.parametrize("solver", ["pgs", "jacobi", "gauss"])
def test_the_old_single_pass_releases_the_jam_too_fast(solver):
    """The contrast: split_speed above every push (the code before issue 17) breaks the bound."""
    w = tb.World(solver=solver, gravity=(0, 0, 0), split_speed=1e9)
    jam(w)
    c = registry.solver_class(solver).release_speed(w.settings)
    fastest = 0.0
    for _ in range(120):
        w.step(1 / 60)
        fastest = max(fastest, float(np.linalg.norm(w.linear_velocities, axis=1).max()))
    assert fastest > 2.0 * c
