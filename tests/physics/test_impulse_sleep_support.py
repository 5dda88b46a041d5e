"""Issue 18: under the impulse solver a slow body sleeps only if its contacts can hold it
(``sleeping.held_by_contacts``: contact forces inside the friction pyramids balance its weight with no
torque about its centre of mass). Checked against SciPy's NNLS (``tests/naive/impulse.py``) and on
bodies whose statics is known: a ball held by a ball and a wall, the same ball without the wall."""

import math

import numpy as np
import pytest
from scipy.optimize import nnls

import tumble as tb
from tests.naive import impulse as naive
from tumble._core.solvers.impulse import sleeping

G = (0.0, 0.0, -9.81)
HP_DT = 1.0 / 240.0


def _scratch(n):
    return (np.empty(n), np.empty(n), np.empty(n, np.bool_), np.empty(n, np.int64), np.empty((n, n)), np.empty(n),
            np.empty((6, n)))


def test_nnls6_matches_scipy():
    """Random 6 x n problems (rows 1, 1e3 and 1e4 apart as the held test's are; a third of them with
    near-duplicate columns): the kernel's residual is SciPy's to 1e-5 of |b|, and its x is feasible."""
    rng = np.random.default_rng(7)
    for trial in range(600):
        n = int(rng.integers(1, 30))
        A = rng.normal(size=(6, n)) * rng.choice([1.0, 1e3, 1e4], size=(6, 1))
        if trial % 3 == 0 and n > 1:
            A[:, n // 2:] = A[:, :n - n // 2] * (1.0 + 1e-7)
        b = rng.normal(size=3) * 1e3
        bb = np.r_[b, 0.0, 0.0, 0.0]
        _, ref = nnls(A, bb, maxiter=10_000)
        x, z, passive, idx, M, sol, Q = _scratch(n)
        r2 = sleeping.nnls6(A.copy(), n, b[0], b[1], b[2], x, z, passive, idx, M, sol, Q)
        assert np.all(x >= 0.0)
        assert math.sqrt(r2) <= ref + 1e-5 * np.linalg.norm(bb)


def _held_kernel(i, a, b, point, normal, friction, position, gravity, margin):
    m = len(a)
    x, z, passive, idx, M, sol, Q = _scratch(max(4 * m, 1))
    listed = np.arange(m, dtype=np.int64)
    pos = np.zeros((max(a.max(initial=0), b.max(initial=0), i) + 1, 3))
    pos[i] = position
    return sleeping.held_by_contacts(i, 0, m, listed, a, point, normal, friction, pos, np.asarray(gravity, float),
                                     margin, np.empty((6, max(4 * m, 1))), x, z, passive, idx, M, sol, Q)


def test_held_by_contacts_matches_its_numpy_twin():
    """Random contact sets on body 0 (1-6 contacts, random normals biased upwards, friction 0-1): the
    kernel's verdict is the NNLS twin's, except where the twin's residual lies within 1e-3 of the border."""
    rng = np.random.default_rng(3)
    held = 0
    for _ in range(400):
        m = int(rng.integers(1, 7))
        normal = rng.normal(size=(m, 3)) + np.array([0.0, 0.0, 1.5])
        normal /= np.linalg.norm(normal, axis=1)[:, None]
        a = np.where(rng.random(m) < 0.5, 0, 1).astype(np.int64)
        b = np.where(a == 0, 1, 0).astype(np.int64)
        normal[a == 0] *= -1.0           # the normal points a -> b: from the other body into body 0 it is up
        point = rng.normal(size=(m, 3)) * 0.05 + np.array([0.0, 0.0, -0.05])
        friction = rng.choice([0.0, 0.3, 1.0], size=m)
        want = naive.held_by_contacts(0, a, point, normal, friction, (0.0, 0.0, 0.0), G, 1e-4)
        got = _held_kernel(0, a, b, point, normal, friction, np.zeros(3), G, 1e-4)
        held += want
        assert got == want
    assert 20 < held < 380                 # both verdicts occur


def _ball_on_ball(wall: bool):
    """A 5 cm ball resting on a fixed 5 cm ball, its centre 30 deg off the vertical, and (``wall``) a
    fixed wall touching its other side. With the wall the forces N_ball = 2/sqrt(3) m g along the
    centre line and N_wall = m g / sqrt(3) hold it even without friction; without it, it rolls off."""
    w = tb.World(gravity=G, solver="impulse")
    w.add_body(tb.Plane(), fixed=True)
    w.add_body(tb.Sphere(0.05), position=(0.0, 0.0, 0.05), fixed=True)
    c = (0.1 * math.sin(math.radians(30.0)), 0.0, 0.05 + 0.1 * math.cos(math.radians(30.0)))
    ball = w.add_body(tb.Sphere(0.05), position=c, mass=1.0)
    if wall:
        w.add_body(tb.Box((0.05, 0.2, 0.2)), position=(c[0] + 0.05 + 0.05, 0.0, 0.2), fixed=True)
    return w, ball


def test_ball_held_by_a_ball_and_a_wall_falls_asleep():
    """Measured before (centre over the hull of the contacts below): the ball's only contact below is
    25 mm off its centre, so it never slept; the wells of 004 (E-WELL324, I-WELL392) never reached 95 %
    asleep. Now it sleeps within 0.5 s and stays where it was."""
    w, ball = _ball_on_ball(wall=True)
    start = np.array(w.position(ball))
    w.run(0.5, HP_DT)
    assert w.sleeping[ball]
    assert np.linalg.norm(np.array(w.position(ball)) - start) < 1e-3


def test_the_same_ball_without_the_wall_rolls_off():
    w, ball = _ball_on_ball(wall=False)
    w.step(HP_DT)
    assert not w.sleeping[ball]
    w.run(1.0, HP_DT)
    assert w.position(ball)[2] < 0.06      # down on the ground beside the fixed ball


@pytest.mark.parametrize("deg, mu, held", [(20.0, 0.5, True), (30.0, 0.2, False)])
def test_friction_decides_on_a_slope(deg, mu, held):
    """A box on a slope is held iff tan(slope) <= mu (Coulomb): the pyramid's edges n +- mu t span it."""
    s = math.radians(deg)
    n = np.array([[-math.sin(s), 0.0, math.cos(s)]] * 4)     # from the slope (a, body 1) up into the box (b, 0)
    pts = np.array([[x, y, -0.05] for x in (-0.05, 0.05) for y in (-0.05, 0.05)])
    a = np.ones(4, np.int64)
    b = np.zeros(4, np.int64)
    assert _held_kernel(0, a, b, pts, n, np.full(4, mu), np.zeros(3), G, 1e-4) == held


@pytest.mark.parametrize("past, held", [(0.5e-4, True), (1e-3, False), (1e-2, False)])
def test_margin_is_the_lever_arm_left_unbalanced(past, held):
    """A box on one edge (two contact points along y at x = 0), its centre ``past`` [m] beyond the edge:
    gravity's torque about the edge is m g past. Within ``sleep_support_margin`` (0.1 mm) of lever arm it
    counts as held; 1 mm and 1 cm past it do not. Without friction the weighted least squares has the
    closed form residual^2 = c / (1 + c tol^2), c = (past / margin)^2, the verdict flips at past ~ margin;
    friction at the edge can trade torque for unbalanced force (by the edge's height), a little slack."""
    pts = np.array([[-past, -0.05, -0.1], [-past, 0.05, -0.1]])    # relative to the centre of mass
    n = np.array([[0.0, 0.0, 1.0]] * 2)
    a = np.ones(2, np.int64)
    b = np.zeros(2, np.int64)
    assert _held_kernel(0, a, b, pts, n, np.full(2, 0.5), np.zeros(3), G, 1e-4) == held
