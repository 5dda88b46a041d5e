"""Contact between two elastic bodies (paper 003 §6.3 events, §7.2 sticky springs; tumble.elastic.body_contact).

Oracles: an independent NumPy point-in-tet test and point-triangle distance (tests/naive/elastic_contact.py)
for interpenetration, momentum balance (the pair springs' forces sum to zero, and Runge-Kutta methods keep
linear invariants exactly, so only round-off remains), the spring pull rule evaluated in NumPy, and the energy
books (with viscosity the mechanical energy never rises beyond the integrator's error).

Penetration bound (§7.2: "the polyhedra ... will interpenetrate to some extent"): a zero-rest-length spring of
stiffness k holding a surface point at depth delta stores k delta^2 / 2. If the whole relative kinetic energy
E_rel = mu v_rel^2 / 2 (mu the reduced mass) and the weight W of the upper body went into a single spring,
k delta^2 / 2 = E_rel + W delta, so delta <= W / k + sqrt((W / k)^2 + 2 E_rel / k): no vertex may lie deeper
inside the other body than that. Several springs share the load, so the measured depth is well below it.
"""

import numpy as np
import pytest

from tests.naive.elastic_contact import pair_spring_forces as naive_pair_forces
from tests.naive.elastic_contact import penetration_depth, points_inside
from tumble.elastic import ElasticBody, ElasticMaterial, ElasticSystem, TetMesh
from tumble.elastic.body_contact import pair_spring_forces, surface_edges

JELLY = ElasticMaterial(density=1000.0, bulk_modulus=2.0e5, shear_modulus=6.0e4, shear_viscosity=50.0)
CUBE = TetMesh.box((0.1, 0.1, 0.1), (2, 2, 2))
MASS = 1000.0 * 0.1 ** 3  # kg
SURFACE = np.unique(CUBE.surface)


def _depths(system):
    """Deepest surface vertex of each body inside the other (m), by the NumPy oracle."""
    x0, x1 = system.vertices(0), system.vertices(1)
    return (penetration_depth(x0[SURFACE], x1, CUBE.tets, CUBE.surface).max(),
            penetration_depth(x1[SURFACE], x0, CUBE.tets, CUBE.surface).max())


def _pulling(system):
    """Live pair springs whose stretch points back to the side the points came from (sigma n . d > 0)."""
    bc = system.body_contacts
    x = system.positions
    idx, w = bc.index[:bc.count], bc.weight[:bc.count]
    d = np.einsum("sk,ski->si", w, x[idx])
    face = bc.kind[:bc.count] == 0
    n = np.where(face[:, None], np.cross(x[idx[:, 2]] - x[idx[:, 1]], x[idx[:, 3]] - x[idx[:, 1]]),
                 np.cross(x[idx[:, 1]] - x[idx[:, 0]], x[idx[:, 3]] - x[idx[:, 2]]))
    return int(np.sum(bc.sign[:bc.count] * np.einsum("si,si->s", n, d) > 0.0))


def test_surface_edges_and_pair_spring_kernel_match_the_oracle():
    edges, tri_edges = surface_edges(CUBE.surface)
    # a closed triangulated surface: every edge in exactly two triangles, Euler V - E + F = 2
    assert np.all(np.bincount(tri_edges.ravel(), minlength=len(edges)) == 2)
    assert len(SURFACE) - len(edges) + len(CUBE.surface) == 2
    for t, tri in enumerate(CUBE.surface):
        for j in range(3):
            assert sorted(edges[tri_edges[t, j]]) == sorted((tri[j], tri[(j + 1) % 3]))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((20, 3))
    index = rng.integers(0, 20, size=(7, 4))
    beta = rng.random((7, 3))
    weight = np.concatenate([np.ones((7, 1)), -beta / beta.sum(1, keepdims=True)], axis=1)
    forces = np.zeros_like(x)
    energy = pair_spring_forces(x, index, weight, 7, 2.0e4, forces)
    expected, expected_energy = naive_pair_forces(x, index, weight, 2.0e4)
    assert np.allclose(forces, expected, rtol=1e-12, atol=1e-9)
    assert abs(energy - expected_energy) <= 1e-12 * expected_energy
    assert np.allclose(forces.sum(0), 0.0, atol=1e-9)  # sum w_k = 0: no net force
    assert np.allclose(np.cross(x, forces).sum(0), 0.0, atol=1e-9)  # nor moment


def test_head_on_collision_keeps_momentum_and_never_interpenetrates():
    a = ElasticBody(CUBE, JELLY, position=(-0.06, 0.013, 0.007), velocity=(1.0, 0.0, 0.0))
    b = ElasticBody(CUBE, JELLY, position=(0.06, 0.0, 0.0), velocity=(-1.0, 0.0, 0.0))
    system = ElasticSystem([a, b], gravity=(0.0, 0.0, 0.0))
    p0 = system.momentum()
    start = system.energies()
    k = system.contact_stiffness
    e_rel = 0.5 * (MASS / 2) * 2.0 ** 2
    bound = np.sqrt(2.0 * e_rel / k)  # no weight
    deepest = 0.0
    mechanical = []
    for _ in range(40):
        system.step(1.0 / 600.0)
        deepest = max(deepest, *_depths(system))
        assert _pulling(system) == 0
        e = system.energies()
        mechanical.append(e["total"] - e["dissipated"])
    assert system.body_contacts.created > 0 and system.body_contacts.removed > 0
    assert deepest <= bound, (deepest, bound)
    # momentum: |p| = 2 kg m/s of opposite momenta; ~200 steps x 6 stages of sums of O(1) terms at 1e-16
    assert np.all(np.abs(system.momentum() - p0) <= 1e-12 * MASS * 1.0 * system.steps_taken)
    # the cubes separate along x (they bounced)
    assert system.vertices(0).mean(0)[0] < system.vertices(1).mean(0)[0]
    velocity = system.vertex_velocities(0).mean(0)[0]
    assert velocity < 0.5
    # energy: viscous losses and released springs only leave; the RKF error per accepted step is bounded by
    # (largest force ~ k x 1 mm x springs ~ 400 N) x (position tolerance 1e-4 m) ~ 0.04 J over the run, far above
    # what we measure; we hold it to 1 % of the initial kinetic energy
    assert max(mechanical) <= start["total"] + 0.01 * start["kinetic"]
    assert mechanical[-1] < 0.9 * start["kinetic"]


@pytest.mark.parametrize("integrator", ["rkf45", "implicit"])
def test_jelly_cube_dropped_on_another_rests_on_it(integrator):
    below = ElasticBody(CUBE, JELLY, position=(0.0, 0.0, 0.05))
    above = ElasticBody(CUBE, JELLY, position=(0.02, 0.01, 0.152))  # 2 mm gap, offset sideways
    system = ElasticSystem([below, above], floor_z=0.0, integrator=integrator)
    k = system.contact_stiffness
    weight = MASS * 9.81
    e_rel = MASS * 9.81 * 0.002
    bound = weight / k + np.sqrt((weight / k) ** 2 + 2.0 * e_rel / k)
    deepest = 0.0
    for _ in range(30):
        system.step(0.01)
        deepest = max(deepest, *_depths(system))
        assert _pulling(system) == 0
    assert deepest <= bound, (deepest, bound)
    # at rest on the lower cube: its centre ~ 0.15 m up, (not fallen through), slow
    centre = system.vertices(1).mean(0)
    assert 0.13 < centre[2] < 0.16
    assert np.abs(system.vertex_velocities(1)).max() < 0.2
    assert system.body_contacts.count > 0
    # no vertex of the upper cube inside the lower one by the plain point-in-tet test beyond the bound
    inside = points_inside(system.vertices(1), system.vertices(0), CUBE.tets)
    depth = penetration_depth(system.vertices(1)[inside], system.vertices(0), CUBE.tets, CUBE.surface)
    assert np.all(depth <= bound)
    # implicit: the pair springs' Hessian blocks are in Newton's matrix, so Newton converges every step
    assert system.newton_unconverged == 0


def test_without_body_contact_the_cubes_pass_through_each_other():
    """The control: the same head-on collision with body_contact=False interpenetrates deeply (so the test
    above measures the contact model, not a miss)."""
    a = ElasticBody(CUBE, JELLY, position=(-0.06, 0.013, 0.007), velocity=(1.0, 0.0, 0.0))
    b = ElasticBody(CUBE, JELLY, position=(0.06, 0.0, 0.0), velocity=(-1.0, 0.0, 0.0))
    system = ElasticSystem([a, b], gravity=(0.0, 0.0, 0.0), body_contact=False)
    system.step(0.04)
    assert max(_depths(system)) > 0.02
