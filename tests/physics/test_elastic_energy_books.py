"""The elastic energy split balances (issue 16): elastic + kinetic + potential + contact + dissipated is constant,
where dissipated collects the viscous losses (003 §5.4), the heat c |v - u|^2 of the rigid-contact damping
(tumble.elastic.coupling) and the energy left in removed contact springs (floor and pair springs, §7.2).

Tolerance: RKF 4(5) keeps the local position error below ``tol`` per accepted step; the energy error of a step
is then at most |F| tol with |F| the largest force on a vertex (here the weight plus a few contact springs at
mm stretch, ~20 N), i.e. ~1e-3 J per step at tol = 1e-4 m; errors of opposite signs largely cancel. We run at
tol = 1e-6 m (bound ~2e-5 J per step, a few 1e-3 J over the few hundred steps of a run) and hold the drift of
the total to 2 % of the energy that changed form (the initial potential energy above rest).
"""

import numpy as np

import tumble as tb
from tumble.elastic import ElasticBody, ElasticSystem, TetMesh

JELLY = tb.ElasticMaterial(1000.0, 2.0e5, 6.0e4, 0.0, 50.0)


def _drift(totals):
    return max(abs(t - totals[0]) for t in totals)


def test_damped_rigid_contact_books_its_heat_and_the_total_is_conserved():
    """A viscous jelly cube dropped 2 cm onto a fixed rigid box (no floor): the penalty spring is conservative,
    its damping heat goes to ``dissipated``."""
    w = tb.World()
    w.add_body(tb.Box((0.2, 0.2, 0.05)), position=(0.0, 0.0, 0.05), fixed=True)
    w.add_elastic_body(TetMesh.box((0.1, 0.1, 0.1), (2, 2, 2)), position=(0.0, 0.0, 0.175), material=JELLY)
    w.set_elastic_options(tol=1e-6)
    start = w.elastic_energies()
    totals, heat = [start["total"]], []
    for _ in range(72):
        w.step(1.0 / 240.0)
        e = w.elastic_energies()
        totals.append(e["total"])
        heat.append(e["dissipated"])
    assert w.counters["elastic_rigid_contacts"] > 0
    drop = 1.0 * 9.81 * 0.02  # J: the energy above rest (mass 1 kg, 2 cm gap)
    assert heat[-1] > 0.5 * drop  # most of the fall's energy was dissipated (the cube came to rest)
    assert np.all(np.diff(heat) >= -1e-12)  # dissipation only grows
    assert _drift(totals) <= 0.02 * drop, (_drift(totals), drop)


def test_without_the_damping_heat_the_books_would_not_balance():
    """Control for the test above: the same run with the heat taken out of the books loses energy by more than
    the tolerance (so the test measures the booking, not a coincidence)."""
    w = tb.World()
    w.add_body(tb.Box((0.2, 0.2, 0.05)), position=(0.0, 0.0, 0.05), fixed=True)
    w.add_elastic_body(TetMesh.box((0.1, 0.1, 0.1), (2, 2, 2)), position=(0.0, 0.0, 0.175),
                       material=tb.ElasticMaterial(1000.0, 2.0e5, 6.0e4, 0.0, 0.0))
    w.set_elastic_options(tol=1e-6)
    start = w.elastic_energies()
    for _ in range(72):
        w.step(1.0 / 240.0)
    e = w.elastic_energies()
    mechanical = e["total"] - e["dissipated"]
    drop = 1.0 * 9.81 * 0.02
    assert e["dissipated"] > 0.1 * drop  # no viscosity: this is the contact damping alone
    assert start["total"] - mechanical > 0.02 * drop


def test_pair_springs_and_viscosity_balance_between_two_jelly_cubes():
    """Two viscous jelly cubes colliding without gravity: viscous losses + released pair springs = the loss."""
    cube = TetMesh.box((0.1, 0.1, 0.1), (2, 2, 2))
    a = ElasticBody(cube, JELLY, position=(-0.06, 0.013, 0.007), velocity=(1.0, 0.0, 0.0))
    b = ElasticBody(cube, JELLY, position=(0.06, 0.0, 0.0), velocity=(-1.0, 0.0, 0.0))
    system = ElasticSystem([a, b], gravity=(0.0, 0.0, 0.0), tol=1e-6)
    start = system.energies()
    totals = [start["total"]]
    for _ in range(40):
        system.step(1.0 / 600.0)
        totals.append(system.energies()["total"])
    assert system.body_contacts.removed > 0
    assert system.dissipated > 0.05 * start["kinetic"]
    assert _drift(totals) <= 0.02 * system.dissipated, (_drift(totals), system.dissipated)
