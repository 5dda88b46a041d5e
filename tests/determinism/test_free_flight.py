"""The pgs fast path for steps with no rows (``stages.free_flight``: the substeps' velocity and
position updates in one kernel call) is bit for bit the stage calls one by one, under both rotation
integrators, through free flight and the landing after it."""

import pytest

import tumble as tb
import tumble._core.stages as stages


def _hash(rotation_integrator):
    w = tb.World(rotation_integrator=rotation_integrator)
    w.add_body(tb.Plane(), fixed=True)
    w.add_body(tb.Box((0.1, 0.4, 0.9)), position=(0, 0, 3), angular_velocity=(0.1, 5, 0.1), linear_velocity=(1, 0, 2))
    w.add_body(tb.Sphere(0.2), position=(2, 0, 5), angular_velocity=(3, 1, 0))
    for _ in range(200):
        w.step(1 / 60)
    return w.state_hash()


@pytest.mark.parametrize("rotation_integrator", ["midpoint", "euler"])
def test_free_flight_is_the_stage_calls_bit_for_bit(rotation_integrator, monkeypatch):
    fused = _hash(rotation_integrator)

    def one_by_one(core, h, substeps):
        for _ in range(substeps):
            stages.integrate_velocities(core, h)
            stages.integrate_positions(core, h)

    monkeypatch.setattr(stages, "free_flight", one_by_one)
    assert _hash(rotation_integrator) == fused
