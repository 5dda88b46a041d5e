"""Dynamics of elastic bodies (paper 003): energy and momentum balances, non-inversion under hard impact,
contact springs, constraints by Lagrange multipliers against constraints as springs, both integrators."""

import numpy as np
import pytest

from tumble.elastic import ElasticBody, ElasticMaterial, ElasticSystem, TetMesh
from tumble.errors import ElasticError

SOFT = ElasticMaterial(1000.0, 2.0e4, 8.0e3)


def _stretched_box(material=SOFT, spin=(0.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0)):
    mesh = TetMesh.box((0.2, 0.15, 0.1), (2, 2, 1))
    body = ElasticBody(mesh, material, position=(0.0, 0.0, 1.0), velocity=velocity, angular_velocity=spin)
    return body


def _deform(system, factor=(1.15, 0.95, 1.05)):
    centre = system.positions.mean(axis=0)
    system.positions = np.ascontiguousarray(centre + (system.positions - centre) * np.array(factor))


def test_total_energy_is_conserved_without_viscosity():
    system = ElasticSystem([_stretched_box(spin=(0.0, 2.0, 1.0))], tol=1e-8)
    _deform(system)
    start = system.energies()
    assert start["elastic"] > 0.01 * start["kinetic"]
    totals = []
    for _ in range(20):
        system.step(0.05)
        totals.append(system.energies()["total"])
    scale = start["elastic"] + start["kinetic"]
    assert max(abs(t - start["total"]) for t in totals) <= 1e-4 * scale
    assert system.steps_taken > 50


def test_viscosity_dissipates_monotonically_and_the_books_balance():
    material = ElasticMaterial(1000.0, 2.0e4, 8.0e3, bulk_viscosity=20.0, shear_viscosity=20.0)
    system = ElasticSystem([_stretched_box(material)], gravity=(0.0, 0.0, 0.0), tol=1e-8)
    _deform(system)
    start = system.energies()
    mechanical = [start["elastic"] + start["kinetic"]]
    for _ in range(40):
        system.step(0.025)
        e = system.energies()
        mechanical.append(e["elastic"] + e["kinetic"])
        assert e["total"] == pytest.approx(start["total"], rel=1e-5)
    assert all(b < a for a, b in zip(mechanical, mechanical[1:]))
    assert mechanical[-1] < 0.5 * mechanical[0]


def test_momentum_of_a_free_body_is_conserved():
    system = ElasticSystem([_stretched_box(spin=(1.0, -2.0, 3.0), velocity=(0.3, 0.1, -0.2))],
                           gravity=(0.0, 0.0, 0.0), tol=1e-6)
    _deform(system)
    p0, l0 = system.momentum(), system.angular_momentum()
    system.step(0.5)
    assert np.abs(system.momentum() - p0).max() <= 1e-10 * np.abs(p0).max()
    assert np.abs(system.angular_momentum() - l0).max() <= 1e-6 * np.abs(l0).max()


@pytest.mark.parametrize("integrator", ["rkf45", "implicit"])
def test_hard_impact_never_inverts_a_tet_and_no_spring_pulls(integrator):
    mesh = TetMesh.box((0.1, 0.1, 0.1), (2, 2, 2))
    body = ElasticBody(mesh, SOFT, position=(0.0, 0.0, 0.06), velocity=(0.5, 0.0, -6.0))
    system = ElasticSystem([body], floor_z=0.0, integrator=integrator, contact_stiffness=2e5, tol=1e-4)
    dt = 0.002 if integrator == "rkf45" else 5e-4
    alive_seen = 0
    for _ in range(int(0.15 / dt)):
        system.step(dt)
        alive = system.spring_alive
        alive_seen = max(alive_seen, int(alive.sum()))
        # no contact spring that pulls survives a step (§7.2)
        assert np.all(system.positions[alive, 2] <= system.spring_anchor[alive, 2])
        assert system.volume_ratios().min() > 0.0
    assert alive_seen >= 4
    assert 0.0 < system.min_volume_ratio < 0.6  # a hard compression, and still no inverted tet
    assert system.springs_created >= alive_seen


def test_resting_body_settles_on_its_springs():
    mesh = TetMesh.box((0.1, 0.1, 0.1), (1, 1, 1))
    material = ElasticMaterial(1000.0, 2.0e4, 8.0e3, 5.0, 5.0)
    system = ElasticSystem([ElasticBody(mesh, material, position=(0.0, 0.0, 0.051))], floor_z=0.0,
                           integrator="implicit", contact_stiffness=1e4)
    for _ in range(400):
        system.step(0.005)
    weight = 1000.0 * 1e-3 * 9.81
    bottom = system.spring_alive
    assert bottom.sum() == 4
    support = 1e4 * (system.spring_anchor[bottom, 2] - system.positions[bottom, 2]).sum()
    assert support == pytest.approx(weight, rel=1e-3)
    assert np.abs(system.velocities).max() < 1e-3


def _pendulum(method, **kwargs):
    mesh = TetMesh.beam(0.3, 0.04, 0.04, (6, 1, 1))
    body = ElasticBody(mesh, ElasticMaterial(1000.0, 2e5, 8e4), position=(0.0, 0.0, 1.0))
    body.pin(np.flatnonzero(mesh.vertices[:, 0] < 1e-9))
    return ElasticSystem([body], constraint_method=method, **kwargs)


def test_lagrange_pins_hold_exactly_and_springs_only_approximately():
    exact = _pendulum("lagrange", tol=1e-5)
    springs = _pendulum("springs", tol=1e-5, constraint_stiffness=1e6)
    worst = {"lagrange": 0.0, "springs": 0.0}
    for _ in range(6):
        exact.step(0.03)
        springs.step(0.03)
        worst["lagrange"] = max(worst["lagrange"], exact.constraint_violation())
        worst["springs"] = max(worst["springs"], springs.constraint_violation())
    assert worst["lagrange"] < 1e-9
    assert worst["springs"] > 1e-5  # violated by about force / stiffness
    # both swing down the same way to first order
    assert exact.positions[:, 2].min() == pytest.approx(springs.positions[:, 2].min(), abs=0.005)
    assert exact.positions[:, 2].min() < 0.95
    assert springs.steps_taken > exact.steps_taken  # the stiff springs cost steps (§3.1)


def test_prescribed_trajectory_is_followed():
    mesh = TetMesh.beam(0.3, 0.04, 0.04, (6, 1, 1))
    body = ElasticBody(mesh, ElasticMaterial(1000.0, 2e5, 8e4))
    held = np.flatnonzero(mesh.vertices[:, 0] < 1e-9)
    rest = mesh.vertices[held]
    body.prescribe(held, lambda t: rest + [0.0, 0.05 * np.sin(4.0 * t), 0.0])
    system = ElasticSystem([body], gravity=(0.0, 0.0, 0.0), tol=1e-6)
    for _ in range(10):
        system.step(0.05)
        assert system.constraint_violation() < 1e-7
    tip = mesh.vertices[:, 0] > 0.3 - 1e-9
    assert np.abs(system.positions[tip, 1]).max() > 1e-3  # the free end was dragged along


def test_system_rejects_bad_settings():
    body = _stretched_box()
    with pytest.raises(ElasticError, match="integrator"):
        ElasticSystem([body], integrator="euler")
    with pytest.raises(ElasticError, match="tol"):
        ElasticSystem([body], tol=-1.0)
    with pytest.raises(ElasticError, match="floor_z"):
        ElasticSystem([body], floor_z=float("nan"))
    with pytest.raises(ElasticError, match="dt"):
        ElasticSystem([body]).step(0.0)
    with pytest.raises(ElasticError, match="vertices"):
        body.pin([999])


@pytest.mark.parametrize("integrator", ["rkf45", "implicit"])
def test_floor_contact_is_located_in_time(integrator):
    """A body falling from rest with its base 5 cm up meets the floor at t = sqrt(2 h / g) (§6.2: Hermite
    interpolation of a parabola is exact, the step is cut at the crossing): the springs are tied then, with
    the base on the floor."""
    mesh = TetMesh.box((0.1, 0.1, 0.1), (1, 1, 1))
    system = ElasticSystem([ElasticBody(mesh, SOFT, position=(0.0, 0.0, 0.1))], floor_z=0.0, integrator=integrator)
    while system.last_tie_time is None:
        system.step(1e-3)
    # RKF integrates the parabola exactly; backward Euler's fall is off by O(dt)
    assert system.last_tie_time == pytest.approx(np.sqrt(2 * 0.05 / 9.81), abs=1e-6 if integrator == "rkf45" else 1e-3)
    assert system.last_tie_gap < 1e-7
    assert system.springs_created == 4  # the four base corners, at once


def test_implicit_holds_constraints_and_conserves_momentum():
    pinned = _pendulum("lagrange", integrator="implicit")
    for _ in range(20):
        pinned.step(0.005)
    assert pinned.constraint_violation() == 0.0
    assert pinned.positions[:, 2].min() < 0.99
    free = ElasticSystem([_stretched_box(spin=(1.0, -2.0, 3.0), velocity=(0.3, 0.1, -0.2))],
                         gravity=(0.0, 0.0, 0.0), integrator="implicit")
    _deform(free)
    p0 = free.momentum()
    start = free.energies()["total"]
    for _ in range(20):
        free.step(0.01)
    assert np.abs(free.momentum() - p0).max() <= 1e-9 * np.abs(p0).max()
    assert free.energies()["total"] < start  # backward Euler damps
