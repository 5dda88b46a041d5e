"""Shock: a light body squeezed between the ground and a heavy one (issue 18).

A 10 t box (half extents 1, 1, 0.5 m) falling at 20 m/s onto a 1 kg box (0.2, 0.2, 0.1) resting on the
ground, dt 1/60: the step closes the contact, so only the final detection sees it, 33 cm deep. The
final correction's whole-system Gauss-Seidel sweeps (000 eq. 46, 5 of them) move the heavy box by
1/10^4 of each push on the light one, which stayed 67 mm inside the ground or the heavy box. The
layered final correction (``layered_final_correction_depth``) projects layer by layer with the light
box fixated under the heavy one: 0.1 mm. Oracle: the light box's overlap with the ground or the heavy
box after every step (exact for these axis-aligned boxes), under 1 cm.
"""

import tumble as tb


def _squeeze(**settings):
    settings.setdefault("speculative_contacts", False)     # the step closes the contact: the final detection sees it
    w = tb.World(solver="shock", **settings)
    w.add_body(tb.Plane(), fixed=True)
    a = w.add_body(tb.Box((0.2, 0.2, 0.1)), position=(0, 0, 0.1), mass=1.0)
    b = w.add_body(tb.Box((1.0, 1.0, 0.5)), position=(0, 0, 0.95), mass=10000.0, linear_velocity=(0, 0, -20.0))
    worst = 0.0
    for _ in range(30):
        w.step(1 / 60)
        za, zb = w.position(a)[2], w.position(b)[2]
        worst = max(worst, 0.1 - za, (za + 0.1) - (zb - 0.5))
    return w, b, worst


def test_light_box_under_a_heavy_one_leaves_the_ground():
    w, b, worst = _squeeze()
    assert worst < 0.01
    assert abs(w.position(b)[2] - 0.7) < 0.005          # resting on the light box
    assert abs(w.linear_velocity(b)[2]) < 0.05


def test_without_the_layered_final_correction_it_stays_inside():
    """The contrast (the code before): 67 mm measured."""
    _, _, worst = _squeeze(layered_final_correction_depth=float("inf"))
    assert worst > 0.03
