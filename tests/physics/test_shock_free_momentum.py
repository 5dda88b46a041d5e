"""A free jointed system keeps its linear momentum under shock as under pgs (issue 18).

Oracle: with nothing touching a chain (no plane, no fixed body), the only external force is gravity, so its
total linear momentum is P(t) = P(0) + M g t exactly; the joints' forces and corrections are internal.
shock's ``stop_undone_joint_motion`` stops, per body, the velocity a joint projection undid: on a free
chain thrown spinning at (1, 8, 25) rad/s in gravity (dt 1/60) those per-body stops moved the total
linear momentum by 17 % of its start within 100 steps (without the stops 8e-15; pgs 4e-14). Now
``undone.keep_free_momentum`` removes the rigid motion that carries the stops' momentum from a free
group. Measured after the fix: 9.7e-15.

Angular momentum about the centre of mass is not asserted: neither solver keeps it on this chain
(measured over the same 100 steps: pgs loses 4 % at (0.3, 2, 6) rad/s and 38 % at (1, 8, 25), shock 31 %
and 82 %, with or without the stops), which is the joints' and the rotation integrator's, not the stops'."""

import numpy as np
import pytest

import tumble as tb
from tumble._core.solvers.shock import solver as shock_solver

G = 9.81
LINKS = 10
#: the spin that makes the projection undo motion under shock (the stops act); at (0.3, 2, 6) rad/s they
#: never do
SPIN = (1.0, 8.0, 25.0)
DRIFT = (1.0, 0.5, 3.0)


def thrown_chain(solver, gravity, **settings):
    """A chain of LINKS 0.1 m boxes (1000 kg/m^3) on ball joints, thrown at DRIFT and spinning rigidly at SPIN
    about its centre, no plane."""
    w = tb.World(solver=solver, gravity=(0.0, 0.0, -G if gravity else 0.0), **settings)
    for i in range(LINKS):
        w.add_body(tb.Box((0.05, 0.02, 0.02)), position=(0.1 * i, 0.0, 5.0), density=1000.0)
    for i in range(LINKS - 1):
        w.add_joint(tb.Ball(i, i + 1, anchor=(0.1 * i + 0.05, 0.0, 5.0)))
    c = w.positions.mean(axis=0)
    for i in range(LINKS):
        w.set_linear_velocity(i, np.asarray(DRIFT) + np.cross(SPIN, w.position(i) - c))
        w.set_angular_velocity(i, SPIN)
    return w


def momentum_drift(w, gravity, steps=100, dt=1 / 60):
    """The largest |P(t) - P(0) - M g t| / |P(0)| over the steps."""
    m = w.masses
    p0 = (m[:, None] * w.linear_velocities).sum(axis=0)
    g = np.array([0.0, 0.0, -G if gravity else 0.0])
    worst = 0.0
    for k in range(steps):
        w.step(dt)
        p = (m[:, None] * w.linear_velocities).sum(axis=0)
        worst = max(worst, float(np.linalg.norm(p - p0 - m.sum() * g * (k + 1) * dt) / np.linalg.norm(p0)))
    return worst


@pytest.fixture
def stops(monkeypatch):
    """Counts the bodies ``stop_undone_motion`` changed during the test."""
    count = [0]
    inner = shock_solver.stop_undone_motion

    def counting(*args):
        k = inner(*args)
        count[0] += k
        return k

    monkeypatch.setattr(shock_solver, "stop_undone_motion", counting)
    return count


@pytest.mark.parametrize("gravity", [False, True])
@pytest.mark.parametrize("solver", ["pgs", "shock"])
def test_free_chain_keeps_its_linear_momentum(solver, gravity, stops):
    assert momentum_drift(thrown_chain(solver, gravity), gravity) < 1e-9
    if solver == "shock" and gravity:
        assert stops[0] > 0       # the stops acted on this chain: the test reaches them


def test_free_chain_loses_its_momentum_to_the_per_body_stops(stops, monkeypatch):
    """The contrast: without the momentum correction (the code before) the stops move P by > 10 %."""
    monkeypatch.setattr(shock_solver, "keep_free_momentum", lambda *args: 0)
    assert momentum_drift(thrown_chain("shock", True), True) > 0.1
    assert stops[0] > 0


def test_the_stops_keep_their_group_momentum_exactly():
    """keep_free_momentum on one free group: total linear and angular momentum (about the centre of mass,
    bodies' own spin included) before the stops equal those after, to rounding."""
    from tumble._core.solvers.shock.undone import keep_free_momentum

    w = thrown_chain("shock", True)
    b, js = w._core.bodies, w._core.joint_store
    n = b.count
    rng = np.random.default_rng(3)
    v0 = b.body_linear_velocity[:n].copy()
    b.body_linear_velocity[:n] += rng.normal(size=(n, 3))      # arbitrary per-body stops
    groups = keep_free_momentum(n, b.body_fixed, b.body_mass, b.body_position, b.body_orientation,
                                b.body_inertia_local, js.count, js.joint_active, js.joint_body, 0,
                                np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), v0,
                                b.body_linear_velocity, b.body_angular_velocity)
    assert groups == 1
    m = b.body_mass[:n]
    np.testing.assert_allclose((m[:, None] * (b.body_linear_velocity[:n] - v0)).sum(axis=0), 0.0, atol=1e-12)
    x = b.body_position[:n]
    c = (m[:, None] * x).sum(axis=0) / m.sum()
    # the stops changed v only; the correction changed v and w: the group's L must equal its value with v0
    lin = np.cross(x - c, m[:, None] * (b.body_linear_velocity[:n] - v0)).sum(axis=0)
    own = np.zeros(3)
    w_spin = np.asarray(SPIN)
    for i in range(n):
        q = w.orientations[i]
        qw, qx, qy, qz = q
        R = np.array([[1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy)],
                      [2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx)],
                      [2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy)]])
        own += R @ b.body_inertia_local[i] @ R.T @ (b.body_angular_velocity[i] - w_spin)
    np.testing.assert_allclose(lin + own, 0.0, atol=1e-10)
