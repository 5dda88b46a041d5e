"""pgs position_correction='split' (split impulse): pushing overlaps out never adds kinetic energy."""

import numpy as np

import tumble as tb


def _jam(mode):
    """Two unit spheres started 3.5 m and 3.0 m deep inside two fixed spheres of radius 5, facing each
    other across a gap too small for both: an overlap that cannot be fully resolved."""
    w = tb.World(solver="pgs", gravity=(0, 0, 0), position_correction=mode)
    w.add_body(tb.Sphere(5.0), position=(0, 0, 0), fixed=True)
    w.add_body(tb.Sphere(5.0), position=(12, 0, 0), fixed=True)
    w.add_body(tb.Sphere(1.0), position=(2.5, 0, 0))
    w.add_body(tb.Sphere(1.0), position=(9.0, 0.5, 0))
    return w


def test_split_releases_a_jam_without_kinetic_energy():
    w = _jam("split")
    for _ in range(120):
        w.step(1 / 60)
        assert w.kinetic_energy() == 0.0          # velocities untouched: no gravity, no other force
    # the overlaps with the fixed spheres are pushed out (depth 3.5 m -> below a few cm)
    d = np.linalg.norm(w.positions[2] - w.positions[0]) - 6.0
    assert d > -0.05


def test_split_settles_a_box_without_bounce():
    w = tb.World(solver="pgs", position_correction="split")
    w.add_body(tb.Plane(), fixed=True)
    b = w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0, 0, 0.3))   # 0.2 m into the ground
    top = 0.0
    for _ in range(120):
        w.step(1 / 60)
        top = max(top, w.position(b)[2])
    assert abs(w.position(b)[2] - 0.5) < 0.01 and top < 0.51          # pushed out, never thrown up
    assert np.linalg.norm(w.linear_velocity(b)) < 1e-6
