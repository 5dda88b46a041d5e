"""Shock: a body meets the neighbours of later stack layers in its own layer (issue 18).

A row joins the layer of its higher side (000 §4), so a body whose support has a greater stack height
than its own was solved without that support: it fell freely for the step in its layer, the layer's
projection lifted it back (paid by nobody) and its velocity kept the fall. In ``pile1000`` after 1500
steps this lifted ~75 spheres by > 0.5 mm every step (+6.7 J of potential energy per step) and the pile
never rested. ``ShockSettings.layer_ahead_copies`` copies such rows into the lower body's layer, the
higher body a static obstacle there (``kernels.count_ahead_copies``).

The smallest case: a column of three 0.2 m cubes with a 0.1 m sphere on top, off centre, touching a
tall box that stands on the ground beside the column. The tall box is a root, so the sphere has stack
height 2 while the top cube under it has 3. Oracle: the scene starts at rest in equilibrium (every
body on a flat face, nothing pushed), so nothing may move: the sphere stays on its cube and the
kinetic energy stays ~0.

Impacts are not copied (``ShockSettings.layer_ahead_max_speed``): in the copy the higher body is a static
wall, which stopped a fast lower body dead, and the higher body was then never pushed (tower_roof's
cannonball knocked no brick out). Oracle for the impact: momentum. A 5 kg ball at 8 m/s meeting 2 kg of
boxes gives them at most a perfectly inelastic hit's share: it keeps >= 8 * 5 / 7 = 5.7 m/s (less the
ground's friction over the step); and where no row is copied the world moves exactly as with the copies off.
"""

import pytest

import tumble as tb


def _column(steps=120, **settings):
    w = tb.World(solver="shock", **settings)
    w.add_body(tb.Plane(), fixed=True)
    for k in range(3):
        w.add_body(tb.Box((0.1, 0.1, 0.1)), position=(0, 0, 0.1 + 0.2 * k), mass=1.0)
    s = w.add_body(tb.Sphere(0.1), position=(0.05, 0, 0.7), mass=1.0)
    w.add_body(tb.Box((0.1, 0.1, 0.5)), position=(0.25, 0, 0.5), mass=5.0)    # touches the sphere only
    worst_layer, ke = 0.0, 0.0
    for i in range(steps):
        w.step(1 / 60)
        if i >= steps // 2:
            worst_layer = max(worst_layer, w.counters["layer_penetration"])
            ke = max(ke, w.kinetic_energy())
    return w, s, worst_layer, ke


def test_sphere_on_a_higher_support_stays():
    """Measured (2 s at 60 Hz, second half): sphere z 0.69999 m, kinetic energy <= 1e-6 J, the layers'
    deepest overlap 0 mm; without the copies the sphere fell off the column (z 0.4999 m), 1.6 J, 5.4 mm."""
    w, s, worst_layer, ke = _column()
    assert abs(w.position(s)[2] - 0.7) < 1e-3
    assert ke < 1e-3
    assert worst_layer < 1e-4
    assert w.counters["ahead_copies"] > 0


def test_without_the_copies_the_sphere_falls():
    """The contrast (the code before)."""
    w, s, worst_layer, ke = _column(layer_ahead_copies=False)
    assert w.position(s)[2] < 0.69 or ke > 0.1 or worst_layer > 1e-3


def _impact(**settings):
    """A 0.3 m ball (5 kg) on the ground (stack height 1) at 8 m/s into a column of two 0.2 m cubes (1 kg
    each): the top cube (height 2) is struck at its centre's height, the bottom one by the ball's lower
    side. Returns the ball's speed after each of the first 5 steps and the world after 30 (60 Hz)."""
    w = tb.World(solver="shock", **settings)
    w.add_body(tb.Plane(), fixed=True)
    w.add_body(tb.Box((0.1, 0.1, 0.1)), position=(0, 0, 0.1), mass=1.0)
    top = w.add_body(tb.Box((0.1, 0.1, 0.1)), position=(0, 0, 0.3), mass=1.0)
    ball = w.add_body(tb.Sphere(0.3), position=(-0.45, 0, 0.3), mass=5.0, linear_velocity=(8.0, 0, 0))
    speeds = []
    for i in range(30):
        w.step(1 / 60)
        if i < 5:
            speeds.append(float(w.linear_velocities[ball, 0]))
    return speeds, w, top


def test_an_impact_is_not_stopped_by_the_copies():
    """Measured: the ball 6.12, 4.95, 4.29, 4.22, 4.12 m/s after the first five steps, the top cube 2.49 m
    along after 0.5 s, every number as with the copies off; with every row copied (``layer_ahead_max_speed``
    inf) the ball kept 3.0 m/s after the hit step (the cubes static walls in its layer) and the top cube
    went 1.36 m. Before the approach test (closing speed and hit bodies only) the step after the hit, ball
    and cubes moving on together, stopped the ball: 4.95 -> 0.05 m/s."""
    speeds, w, top = _impact()
    off_speeds, off, _ = _impact(layer_ahead_copies=False)
    assert speeds[0] > 8.0 * 5.0 / 7.0 - 1e-6           # no more momentum given than a perfectly inelastic hit
    assert min(speeds) > 4.0
    assert speeds == off_speeds
    assert w.position(top)[0] == off.position(top)[0] and w.position(top)[0] > 2.0


def test_every_row_copied_stops_the_impact():
    """The contrast (the copies before ``layer_ahead_max_speed``)."""
    speeds, w, top = _impact(layer_ahead_max_speed=float("inf"))
    assert speeds[0] < 4.0


def test_a_bad_max_speed_names_the_setting():
    for bad in (-1.0, float("nan"), "fast"):
        with pytest.raises(tb.SettingsError, match="layer_ahead_max_speed"):
            tb.World(solver="shock", layer_ahead_max_speed=bad)
    tb.World(solver="shock", layer_ahead_max_speed=float("inf"))
