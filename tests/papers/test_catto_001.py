"""Reproductions of Catto's experiments (001 §9): box stacking with and without contact caching,
and extreme mass ratios. Scenes are 001 Table 1 in SI units (tumble.scenes 'stack10' etc.) with the
paper's model: fixed friction bound mu m_c g (eq. 24-25), no inertial torque (§5), beta dt = 0.05,
10 sweeps. A stack is a chaotic system, so each claim is checked over three starts whose initial
gaps are the paper's 3.5 cm scaled by 0.9, 1.0 and 1.1.

Measured with this code (quoted in the closing note of issue 2):
  stack10, caching, 60 s:        stands in 3/3 starts, max drift 0.04-0.11 m, comes to rest
  stack3 without caching, 30 s:  falls in 2/3 starts (drift 2.0 m); stands at the nominal gap
  mass_ratio 3 %, caching:       stands (drift 5 cm); 1 %: the heavy box falls off (drift 0.9 m)
  mass_ratio 1 %, no caching:    the heavy box sinks into the light one (penetration 0.41 m)
  light on heavy:                stands at 1, 3 and 30 % with and without caching
"""

import pytest

import tumble as tb
from tumble.scenes.metrics import SceneMetrics

BOX_H = 0.35  # box height [m] in 001 Table 1 (100 units of 3.5 mm)
GAPS = (0.9 * 0.035, 0.035, 1.1 * 0.035)


def run(name, seconds, settings=None, **params):
    """The scene under 001's scheme (``PGSSettings.preset("catto")``: one solve of scalar sweeps per
    step, feature-id warm start; the 2 relax sweeps these reproductions were validated with) plus
    ``settings``."""
    spec = tb.scenes.spec(name, **params)
    w = spec.build(**{**tb.PGSSettings.preset("catto"), **(settings or {})})
    m = SceneMetrics(spec)
    m.observe(w)
    for _ in range(int(round(seconds / spec.dt))):
        w.step(spec.dt)
        m.observe(w)
    return w, m.result()


@pytest.mark.slow
@pytest.mark.parametrize("gap", GAPS)
def test_stack10_with_caching_comes_to_rest_and_stands_60s(gap):
    w, r = run("stack10", 60.0, gap=gap)
    assert r["standing"]
    assert r["max_drift"] < 0.5 * BOX_H      # teeters a little while forming, then holds
    assert r["energy_max_gain"] == 0.0
    # motionless without sleeping or damping: what moves is < 1 J of a 18 kJ stack
    assert w.kinetic_energy() < 1.0


@pytest.mark.slow
def test_three_boxes_without_caching_slide_and_fall():
    fallen = [not run("stack3_nocache", 30.0, gap=gap)[1]["standing"] for gap in GAPS]
    assert sum(fallen) >= 2


@pytest.mark.slow
def test_the_same_three_boxes_with_caching_stand():
    for gap in GAPS:
        _, r = run("stack3_nocache", 30.0, {"warm_start": True}, gap=gap)
        assert r["standing"] and r["max_drift"] < 0.1 * BOX_H


def test_mass_ratio_three_percent_is_stable_with_caching():
    _, r = run("mass_ratio", 20.0, ratio=0.03)
    assert r["standing"]
    assert r["max_drift"] < 0.5 * BOX_H


def test_mass_ratio_one_percent_top_box_falls_off_with_caching():
    _, r = run("mass_ratio", 20.0, ratio=0.01)
    assert not r["standing"]
    assert r["max_drift"] > BOX_H  # the heavy box left the light one sideways


def test_mass_ratio_one_percent_without_caching_sinks_in():
    _, r = run("mass_ratio", 20.0, ratio=0.01, warm_start=False)
    # the heavy box sinks more than half-way into the light one (001 Fig. 7)
    assert r["max_penetration"] > 0.5 * BOX_H


@pytest.mark.parametrize("warm_start", [True, False])
@pytest.mark.parametrize("ratio", [0.01, 0.03, 0.3])
def test_light_on_heavy_is_always_stable(ratio, warm_start):
    _, r = run("mass_ratio", 10.0, ratio=ratio, heavy_on_top=False, warm_start=warm_start)
    assert r["standing"]
    assert r["max_drift"] < 0.01
    assert r["max_penetration"] < 0.03


def test_caching_reuses_every_point_of_a_resting_stack():
    w, r = run("stack10", 10.0, count=3)
    assert r["standing"]
    assert w.counters["cache_hits"] == w.counters["contacts"] == 12
    assert w.contacts().impulse.sum() > 0.0
