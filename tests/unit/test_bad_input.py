"""Bad input raises a TumbleError whose message names the body, field and value."""

import math

import numpy as np
import pytest

import tumble as tb


@pytest.mark.parametrize("make, words", [
    (lambda: tb.Box(half_extents=(0.5, 0.0, 0.5)), ["Box", "half_extents.y", "0.0"]),
    (lambda: tb.Box(half_extents=(0.5, -1.0, 0.5)), ["Box", "half_extents.y", "-1.0"]),
    (lambda: tb.Box(half_extents=(0.5, 0.5)), ["Box", "half_extents"]),
    (lambda: tb.Sphere(-0.1), ["Sphere", "radius", "-0.1"]),
    (lambda: tb.Sphere(math.nan), ["Sphere", "radius", "nan"]),
    (lambda: tb.Capsule(0.1, 0.0), ["Capsule", "half_length", "0.0"]),
    (lambda: tb.Plane(normal=(0, 0, 0)), ["Plane", "normal"]),
    (lambda: tb.ConvexHull(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.0]])), ["ConvexHull"]),
    (lambda: tb.ConvexHull(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, np.nan]])), ["ConvexHull", "nan"]),
])
def test_bad_shapes(make, words):
    with pytest.raises(tb.ShapeError) as e:
        make()
    for word in words:
        assert word.lower() in str(e.value).lower()


@pytest.mark.parametrize("kw, words", [
    (dict(mass=0.0), ["body 1", "'crate'", "mass", "0.0"]),
    (dict(mass=-2.0), ["body 1", "mass", "-2.0"]),
    (dict(mass=math.inf), ["body 1", "mass", "inf"]),
    (dict(density=-5.0), ["body 1", "density", "-5.0"]),
    (dict(position=(0, math.nan, 0)), ["body 1", "position", "nan"]),
    (dict(position=(0, 0, math.inf)), ["body 1", "position", "inf"]),
    (dict(orientation=(0, 0, 0, 0)), ["body 1", "orientation"]),
    (dict(orientation=(1, 0, math.nan, 0)), ["body 1", "orientation", "nan"]),
    (dict(linear_velocity=(math.nan, 0, 0)), ["body 1", "linear_velocity", "nan"]),
    (dict(angular_velocity=(0, 0, math.inf)), ["body 1", "angular_velocity", "inf"]),
])
def test_bad_bodies(kw, words):
    w = tb.World()
    w.add_body(tb.Plane(), fixed=True)
    with pytest.raises(tb.BodyError) as e:
        w.add_body(tb.Box(half_extents=(0.5, 0.5, 0.5)), name="crate", **kw)
    for word in words:
        assert word.lower() in str(e.value).lower()
    assert w.body_count == 1  # nothing half-added


def test_dynamic_plane_and_unknown_ids():
    w = tb.World()
    with pytest.raises(tb.BodyError, match="Plane"):
        w.add_body(tb.Plane())
    with pytest.raises(tb.BodyError, match="body id 3"):
        w.position(3)


def test_unknown_solver_and_settings():
    with pytest.raises(tb.SettingsError, match="'magic'"):
        tb.World(solver="magic")
    with pytest.raises(tb.SettingsError, match="iteratons"):
        tb.World(iteratons=5)
    with pytest.raises(tb.SettingsError, match="iterations=0"):
        tb.World(iterations=0)
    with pytest.raises(tb.SettingsError, match="friction_model='viscous'"):
        tb.World(friction_model="viscous")
    w = tb.World()
    with pytest.raises(tb.SettingsError, match="dt"):
        w.step(-1.0)
    with pytest.raises(tb.SettingsError, match="dt=nan"):
        w.step(math.nan)


@pytest.mark.parametrize("solver, field, value", [("pgs", "iterations", 0), ("shock", "slop", -1.0),
                                                  ("impulse", "sleep_threshold", math.nan)])
def test_a_bad_setting_assigned_between_steps_stops_the_next_step(solver, field, value):
    # settings are checked once per change (World.step -> settings.check), not re-validated every
    # step: an assignment after a good step must still be caught before the kernels run
    w = tb.World(solver=solver)
    w.add_body(tb.Sphere(0.1), position=(0.0, 0.0, 1.0))
    w.step(0.01)
    setattr(w.settings, field, value)
    with pytest.raises(tb.SettingsError, match=field):
        w.step(0.01)
    assert w.step_count == 1


def test_unknown_scene():
    with pytest.raises(tb.SceneError) as e:
        tb.scenes.build("no_such_scene")
    assert "no_such_scene" in str(e.value)
    assert "stack10" in str(e.value)


def test_nan_during_simulation_is_caught_and_named():
    w = tb.World(gravity=(0, 0, -9.81))
    w.add_body(tb.Plane(), fixed=True)
    b = w.add_body(tb.Sphere(0.1), position=(0, 0, 1), mass=1.0, name="ball")
    w.bodies.body_force[b] = (np.nan, 0.0, 0.0)  # a corrupt force slipped past the API
    with pytest.raises(tb.SimulationError) as e:
        w.step(1 / 60)
    assert "body 1" in str(e.value) and "'ball'" in str(e.value)


def test_bad_material():
    with pytest.raises(tb.MaterialError, match="friction=-0.1"):
        tb.Material(friction=-0.1)
    with pytest.raises(tb.MaterialError, match="restitution=1.5"):
        tb.Material(restitution=1.5)
