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
"""

import tumble as tb


def _column(steps=120, **settings):
    w = tb.World(solver="shock", **{"layer_ahead_copies": True, **settings})
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
