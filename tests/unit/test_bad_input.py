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


# ---------------------------------------------------------------------------------------------- issue 17
# a string, None, a bool ... where a number belongs: a ShapeError / MaterialError naming the shape or
# material, the field and the value (was a bare ValueError / TypeError from float() or a comparison)
_SPHERE = tb.Sphere(0.5)
_TETRA = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]


@pytest.mark.parametrize("make, words", [
    (lambda: tb.Sphere("abc"), ["Sphere", "radius", "'abc'"]),
    (lambda: tb.Sphere(None), ["Sphere", "radius", "None"]),
    (lambda: tb.Sphere("0.5"), ["Sphere", "radius", "'0.5'"]),
    (lambda: tb.Sphere(True), ["Sphere", "radius", "True"]),
    (lambda: tb.Sphere([0.5]), ["Sphere", "radius", "[0.5]"]),
    (lambda: tb.Sphere(1 + 2j), ["Sphere", "radius", "(1+2j)"]),
    (lambda: tb.Sphere(10**400), ["Sphere", "radius"]),
    (lambda: tb.Box("abc"), ["Box", "half_extents", "'abc'"]),
    (lambda: tb.Box(None), ["Box", "half_extents", "None"]),
    (lambda: tb.Box((0.5, "wide", 0.5)), ["Box", "half_extents.y", "'wide'"]),
    (lambda: tb.Box((0.5, 0.5, None)), ["Box", "half_extents.z", "None"]),
    (lambda: tb.Box(np.array(["a", "b", "c"])), ["Box", "half_extents.x", "'a'"]),
    (lambda: tb.Capsule(None, 1), ["Capsule", "radius", "None"]),
    (lambda: tb.Capsule(0.1, "long"), ["Capsule", "half_length", "'long'"]),
    (lambda: tb.Plane("up"), ["Plane", "normal", "'up'"]),
    (lambda: tb.Plane((0, 0, None)), ["Plane", "normal", "None"]),
    (lambda: tb.ConvexHull("abc"), ["ConvexHull", "points", "'abc'"]),
    (lambda: tb.ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, "z"]]), ["ConvexHull", "points", "'z'"]),
    (lambda: tb.ConvexHull(None), ["ConvexHull", "points"]),
    (lambda: tb.Compound(None), ["Compound", "children", "None"]),
    (lambda: tb.Compound(5), ["Compound", "children", "5"]),
    (lambda: tb.Compound([5]), ["Compound", "child 0", "5"]),
    (lambda: tb.Compound([(_SPHERE,)]), ["Compound", "child 0"]),
    (lambda: tb.Compound([(_SPHERE, (0, 0, 0), (1, 0, 0, 0), 9)]), ["Compound", "child 0"]),
    (lambda: tb.Compound([(_SPHERE, "here")]), ["Compound", "children[0].position", "'here'"]),
    (lambda: tb.Compound([(_SPHERE, (0, 0, 0), "up")]), ["Compound", "children[0].orientation", "'up'"]),
    (lambda: tb.Compound([(_SPHERE, (0, None, 0))]), ["Compound", "children[0].position", "None"]),
])
def test_non_numbers_in_shapes_raise_shape_error(make, words):
    with pytest.raises(tb.ShapeError) as e:
        make()
    assert isinstance(e.value, tb.TumbleError)
    for word in words:
        assert word in str(e.value)


# sizes outside [SIZE_MIN, SIZE_MAX] = [1e-6, 1e6] m: refused up front with the range in the message
# (a radius of 1e-200 was accepted and broke stepping with ZeroDivisionError; 1e200 raised OverflowError)
_RANGE = "[1e-06, 1e+06] m"


@pytest.mark.parametrize("make, words", [
    (lambda: tb.Sphere(1e-200), ["Sphere", "radius", "1e-200", _RANGE]),
    (lambda: tb.Sphere(1e-7), ["Sphere", "radius", "1e-07", _RANGE]),
    (lambda: tb.Sphere(1e200), ["Sphere", "radius", "1e+200", _RANGE]),
    (lambda: tb.Sphere(math.inf), ["Sphere", "radius", "inf", _RANGE]),
    (lambda: tb.Box((1e-120, 1.0, 1.0)), ["Box", "half_extents.x", "1e-120", _RANGE]),
    (lambda: tb.Box((1.0, 1.0, 1e200)), ["Box", "half_extents.z", "1e+200", _RANGE]),
    (lambda: tb.Capsule(1e-300, 1.0), ["Capsule", "radius", "1e-300", _RANGE]),
    (lambda: tb.Capsule(0.1, 2e6), ["Capsule", "half_length", "2000000.0", _RANGE]),
    (lambda: tb.ConvexHull(np.array(_TETRA) * 1e-200), ["ConvexHull", "points", _RANGE]),
    (lambda: tb.ConvexHull(np.array(_TETRA) * 1e200), ["ConvexHull", "points[1]", "1e+200", "1e+06"]),
    # a slab 1e-7 m thick, tilted so that no axis shows it
    (lambda: tb.ConvexHull(np.array([[0, 0, 0], [1, 1, 0], [0, 1, 1], [1e-7, 0, 0]]) @ np.array(
        [[0.6, 0.8, 0], [-0.8, 0.6, 0], [0, 0, 1]])), ["ConvexHull", "points", "thick", _RANGE]),
    (lambda: tb.Compound([(_SPHERE, (2e6, 0, 0))]), ["Compound", "position", "2000000.0", "1e+06"]),
    (lambda: tb.Compound([(tb.Sphere(1e-100), (0, 0, 0))]), ["Sphere", "radius", "1e-100", _RANGE]),
])
def test_sizes_outside_the_range_raise_shape_error(make, words):
    with pytest.raises(tb.ShapeError) as e:
        make()
    for word in words:
        assert word in str(e.value)


def test_documented_ranges():
    from tumble import materials, shapes

    assert (shapes.SIZE_MIN, shapes.SIZE_MAX) == (1e-6, 1e6)
    assert (materials.DENSITY_MIN, materials.DENSITY_MAX) == (1e-3, 1e6)
    assert "1e-6, 1e6] m" in shapes.__doc__ and "1e-3, 1e6] kg/m^3" in materials.__doc__


@pytest.mark.parametrize("size", [1e-6, 1e6])
@pytest.mark.parametrize("density", [1e-3, 1e6])
def test_range_edges_give_finite_invertible_mass_properties(size, density):
    # the reason for the range: at both ends, with both density extremes, mass and inertia (and the
    # inertia's inverse) stay finite and positive in float64 (1e-200 underflowed to mass 0)
    # a tetrahedron as large as allowed (coordinates <= SIZE_MAX) or just above the smallest (half thickness
    # across its slanted face 0.29 x its edge)
    tetra = np.array(_TETRA, dtype=float) * min(tb.shapes.SIZE_MAX, 4.0 * size)
    shapes = [tb.Sphere(size), tb.Box((size, size, size)), tb.Box((size, tb.shapes.SIZE_MAX, size)),
              tb.Capsule(size, size), tb.ConvexHull(tetra),
              tb.Compound([(tb.Sphere(size), (0, 0, 0)), (tb.Box((size, size, size)), (0, 0, size))])]
    for shape in shapes:
        v, _, inertia = shape.mass_properties()
        m, big_i = density * v, density * inertia
        assert math.isfinite(m) and m > 0.0, shape
        assert np.all(np.isfinite(big_i)) and np.all(np.linalg.eigvalsh(big_i) > 0.0), shape
        inv = np.linalg.inv(big_i)
        assert np.all(np.isfinite(inv)) and math.isfinite(1.0 / m), shape


@pytest.mark.parametrize("size", [1e-6, 1e6])
def test_range_edges_step(size):
    w = tb.World()
    w.add_body(tb.Plane(), fixed=True)
    mats = [tb.Material(density=1e-3), tb.Material(density=1e6)]
    for k, mat in enumerate(mats):
        w.add_body(tb.Sphere(size), position=(3 * size * k, 0.0, 2 * size), material=mat)
        w.add_body(tb.Box((size, size, size)), position=(3 * size * k, 3 * size, 2 * size), material=mat)
    for _ in range(5):
        w.step(1 / 60)
    assert np.all(np.isfinite(w.positions)) and np.all(np.isfinite(w.linear_velocities))


@pytest.mark.parametrize("kw, words", [
    (dict(friction="high"), ["'default'", "friction", "'high'"]),
    (dict(friction=None), ["friction", "None"]),
    (dict(density="heavy", name="lead"), ["'lead'", "density", "'heavy'"]),
    (dict(density=None), ["density", "None"]),
    (dict(restitution="bouncy"), ["restitution", "'bouncy'"]),
    (dict(restitution=True), ["restitution", "True"]),
    (dict(friction=[0.5]), ["friction", "[0.5]"]),
    (dict(density=1e-200), ["density", "1e-200", "[0.001, 1e+06] kg/m^3"]),
    (dict(density=1e200), ["density", "1e+200", "[0.001, 1e+06] kg/m^3"]),
    (dict(density=0.0), ["density", "0.0"]),
    (dict(density=math.inf), ["density", "inf"]),
    (dict(friction=math.inf), ["friction", "inf", ">= 0"]),
    (dict(friction=math.nan), ["friction", "nan"]),
    (dict(restitution=-0.1), ["restitution", "-0.1", "[0, 1]"]),
    (dict(restitution=math.nan), ["restitution", "nan"]),
    (dict(name=None), ["name", "None"]),
])
def test_bad_material_fields(kw, words):
    with pytest.raises(tb.MaterialError) as e:
        tb.Material(**kw)
    for word in words:
        assert word in str(e.value)
    with pytest.raises(tb.MaterialError):
        tb.materials.OAK.with_(**kw)


def test_material_numbers_are_stored_as_floats():
    m = tb.Material(density=np.float32(800), friction=1, restitution=np.float64(0.25))
    assert (m.density, m.friction, m.restitution) == (800.0, 1.0, 0.25)
    assert all(type(x) is float for x in (m.density, m.friction, m.restitution))
    assert m == tb.Material(density=800.0, friction=1.0, restitution=0.25)


def test_rejected_world_calls_change_nothing():
    """Issue 17: a call that raises leaves the world as it was (forces, settings, state), and run()
    checks dt and record_every before it starts."""
    w = tb.World()
    b = w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0, 0, 1))
    with pytest.raises(tb.BodyError, match="point"):
        w.apply_force(b, (1.0, 0.0, 0.0), point=(float("nan"), 0.0, 0.0))
    assert not w.bodies.body_force[b].any() and not w.bodies.body_torque[b].any()
    with pytest.raises(tb.BodyError, match="torque"):
        w.apply_torque(b, (float("inf"), 0.0, 0.0))
    assert not w.bodies.body_torque[b].any()
    with pytest.raises(tb.SettingsError, match="iterations=-1"):
        w.settings.update(iterations=-1)
    assert w.settings.iterations == 10
    for bad in (0, -1.0, float("nan"), "x"):
        with pytest.raises(tb.SettingsError, match="dt="):
            w.run(1.0, dt=bad)
    with pytest.raises(tb.RecordingError, match="record_every=0"):
        w.run(0.1, dt=0.01, record="x.npz", record_every=0)
    assert w.step_count == 0
    w.step(1 / 60)
    assert w.step_count == 1


@pytest.mark.parametrize("solver", ["pgs", "shock", "impulse", "jacobi"])
@pytest.mark.parametrize("kind", ["force", "torque", "velocity", "spin"])
def test_extreme_loads_end_in_a_simulation_error_naming_the_body(solver, kind):
    """Issue 17: 1e300 N, N m, m/s or rad/s on one box of a stack: the run either stays finite or
    stops with SimulationError naming that box -- never ZeroDivisionError deep in a kernel (a torque
    of 1e300 used to overflow the quaternion update into a zero quaternion)."""
    w = tb.scenes.build("stack10", solver=solver)
    b = 3
    {"force": lambda: w.apply_force(b, (1e300, 0.0, 0.0)), "torque": lambda: w.apply_torque(b, (0.0, 1e300, 0.0)),
     "velocity": lambda: w.set_linear_velocity(b, (1e300, 0.0, 0.0)),
     "spin": lambda: w.set_angular_velocity(b, (0.0, 1e300, 0.0))}[kind]()
    try:
        for _ in range(5):
            w.step()
    except tb.SimulationError as e:
        assert f"body {b} " in str(e)
    else:
        q = w.orientations
        assert np.all(np.isfinite(q)) and np.allclose(np.linalg.norm(q, axis=1), 1.0)
