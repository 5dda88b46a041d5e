"""ElasticSystem's public surface: SoA layout over several bodies, queries, counters, energies, errors."""

import numpy as np
import pytest

from tumble.elastic import ElasticBody, ElasticMaterial, ElasticSystem, TetMesh
from tumble.errors import ElasticError, SimulationError

MATERIAL = ElasticMaterial(1000.0, 2.0e4, 8.0e3)


def _two_bodies(**settings):
    a = ElasticBody(TetMesh.box((0.1, 0.1, 0.1), (1, 1, 1)), MATERIAL, position=(0.0, 0.0, 0.2))
    b = ElasticBody(TetMesh.cylinder(0.05, 0.1, segments=6, layers=2), MATERIAL, position=(1.0, 0.0, 0.3),
                    velocity=(0.0, 0.0, -1.0))
    return ElasticSystem([a, b], **settings)


def test_bodies_share_one_set_of_arrays():
    system = _two_bodies()
    assert system.body_count == 2
    assert system.body_vertex_start.tolist() == [0, 8, 8 + 21]
    assert system.tets.max() == len(system.positions) - 1
    assert system.vertices(1)[:, 0].mean() == pytest.approx(1.0)
    assert np.all(system.vertex_velocities(1)[:, 2] == -1.0)
    assert np.all(system.vertex_velocities(0) == 0.0)
    with pytest.raises(ElasticError, match="body index"):
        system.vertices(2)


def test_free_fall_is_exact_and_counters_count():
    system = _two_bodies(floor_z=-10.0)
    start = system.vertices(0)
    energies = system.energies()
    assert energies["elastic"] == pytest.approx(0.0, abs=1e-12)
    assert set(energies) == {"elastic", "kinetic", "potential", "contact", "constraint", "dissipated", "total"}
    system.step(0.1)
    # a rigid body in uniform gravity: RKF integrates the parabola exactly, no strain
    assert system.vertices(0) - start == pytest.approx(np.tile([0.0, 0.0, -0.5 * 9.81 * 0.01], (8, 1)), abs=1e-9)
    counters = system.counters()
    assert counters["time"] == pytest.approx(0.1)
    assert counters["steps_taken"] >= 1 and counters["contact_springs_alive"] == 0
    assert counters["min_volume_ratio"] == pytest.approx(1.0)
    system.advance(0.25)
    assert system.time == pytest.approx(0.25)


def test_too_small_a_step_is_a_simulation_error():
    system = _two_bodies(min_step=1.0)
    with pytest.raises(SimulationError, match="min_step"):
        system.step(0.1)


def test_body_arguments_are_validated():
    mesh = TetMesh.box()
    with pytest.raises(ElasticError, match="material"):
        ElasticBody(mesh, "rubber")
    with pytest.raises(ElasticError, match="rotation"):
        ElasticBody(mesh, MATERIAL, rotation=np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ElasticError, match="position"):
        ElasticBody(mesh, MATERIAL, position=(0.0, np.nan, 0.0))
    body = ElasticBody(mesh, MATERIAL)
    with pytest.raises(ElasticError, match="callable"):
        body.prescribe([0], "up")
    body.pin([0, 1])
    body.pin([1])
    with pytest.raises(ElasticError, match="two constraints"):
        ElasticSystem([body])
