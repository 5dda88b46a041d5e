"""A step that makes a body's state non-finite (issue 17): rolled back, the origin named (raise) or
frozen (quarantine) while the rest of the world goes on."""

import numpy as np
import pytest

import tumble as tb
from tumble.errors import SettingsError, SimulationError

SOLVERS = [s["name"] for s in tb.solvers()]
DT = 1.0 / 60.0


def _column(solver, mode):
    """Ground, an innocent box (1) carrying the culprit box (2), a sphere far away (3)."""
    w = tb.World(solver=solver)
    w.on_nonfinite = mode
    w.add_body(tb.Plane(), fixed=True, name="ground")
    w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0, 0, 0.5), name="innocent")
    w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0, 0, 1.5), name="culprit")
    w.add_body(tb.Sphere(0.3), position=(3, 0, 0.3), name="bystander")
    for _ in range(10):
        w.step(DT)
    return w


LOADS = {
    "force": lambda w: w.apply_force(2, (0.0, 1e300, 0.0)),
    "torque": lambda w: w.apply_torque(2, (1e300, 0.0, 0.0)),
    "velocity": lambda w: w.set_linear_velocity(2, (0.0, 0.0, -1e300)),
    "spin": lambda w: w.set_angular_velocity(2, (0.0, 1e300, 1e300)),
}


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("load", sorted(LOADS))
def test_raise_names_the_origin_and_rolls_the_step_back(solver, load):
    w = _column(solver, "raise")
    LOADS[load](w)
    before = w.state_hash()
    with pytest.raises(SimulationError, match=r"body 2 \('culprit'\) made step 11 fail") as e:
        w.step(DT)
    assert "rolled back" in str(e.value)
    assert w.state_hash() == before and w.step_count == 10    # the failed step changed nothing
    w.remove_body(2)                                           # the user deals with it; the world goes on
    for _ in range(20):
        w.step(DT)
    assert np.all(np.isfinite(w.positions)) and abs(w.position(1)[2] - 0.5) < 0.01


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("load", sorted(LOADS))
def test_quarantine_freezes_the_origin_and_goes_on(solver, load):
    w = _column(solver, "quarantine")
    LOADS[load](w)
    where = w.positions[2].copy()
    w.step(DT)
    assert [(e.body, e.name, e.step) for e in w.events] == [(2, "culprit", 11)]
    assert w.step_count == 11 and w.fixed[2]
    for _ in range(30):
        w.step(DT)
    assert np.all(np.isfinite(w.positions)) and np.array_equal(w.positions[2], where)   # frozen where it was
    assert abs(w.position(1)[2] - 0.5) < 0.01 and abs(w.position(3)[2] - 0.3) < 0.01
    assert w.events == []


def test_on_nonfinite_is_checked():
    w = tb.World()
    with pytest.raises(SettingsError, match="on_nonfinite='ignore'"):
        w.on_nonfinite = "ignore"
    assert w.on_nonfinite == "raise"


def test_a_failed_elastic_step_rolls_the_whole_step_back(monkeypatch):
    """The elastic bodies step after the rigid solver: when they fail, the rigid step is undone too
    (state, user forces, time) and the elastic vertices are as before."""
    from tumble.errors import ElasticError

    w = tb.World(solver="pgs")
    w.add_body(tb.Plane(), fixed=True, name="ground")
    box = w.add_body(tb.Box((0.2, 0.2, 0.2)), position=(2.0, 0.0, 1.0), name="box")
    e = w.add_elastic_body(tb.TetMesh.box((0.4, 0.4, 0.4), (2, 2, 2)), position=(0.0, 0.0, 0.5),
                           material=tb.ElasticMaterial(density=1000.0, bulk_modulus=1e5, shear_modulus=5e4))
    for _ in range(3):
        w.step(1 / 240)
    w.apply_force(box, (5.0, 0.0, 0.0))
    before = (w.state_hash(), w.time, w.step_count, w.elastic_vertices(e).copy(), w.bodies.body_force[box].copy())
    system = w.elastic_system
    real_step = system.step

    def failing_step(dt):
        real_step(dt)                        # the elastic state moves ...
        raise ElasticError("tet 3 inverted")  # ... then fails

    monkeypatch.setattr(system, "step", failing_step)
    with pytest.raises(SimulationError, match="elastic bodies failed in step 4.*rolled back"):
        w.step(1 / 240)
    assert (w.state_hash(), w.time, w.step_count) == before[:3]
    assert np.array_equal(w.elastic_vertices(e), before[3]) and np.array_equal(w.bodies.body_force[box], before[4])
    monkeypatch.setattr(system, "step", real_step)
    w.step(1 / 240)                          # and the world steps on
    assert w.step_count == 4
