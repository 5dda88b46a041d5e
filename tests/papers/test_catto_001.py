"""Reproductions of Catto's experiments (001 §9): box stacking with and without contact caching,
and extreme mass ratios. Scenes are 001 Table 1 in SI units (tumble.scenes 'stack10' etc.).

Measured with this code (numbers quoted in the closing note of issue 2):
  stack10, caching, 60 s:              standing, max drift 0.3-0.6 m over perturbed starts, but it keeps
                                       rocking (kinetic energy 5-45 J, about 0.2 % of its potential
                                       energy): Catto's "motionless within a few seconds" does not
                                       reproduce at 10 sweeps and beta dt = 0.05
  stack3 without caching, 30 s:        falls with Catto's fixed friction bound (drift 1.6 m);
                                       with coupled Coulomb friction it stands (differs from Fig. 5)
  mass_ratio 3 %, caching, coulomb:    stands;  1 %: the top box falls off (drift 0.9 m)
  mass_ratio 1 %, no caching:          the top box sinks into the light one (penetration 0.42 m)
  light on heavy, 1 %, with/without:   stands
"""

import numpy as np
import pytest

import tumble as tb
from tumble.scenes.metrics import SceneMetrics

BOX_H = 0.35  # box height [m] in 001 Table 1 (100 units of 3.5 mm)


def run(name, seconds, settings=None, **params):
    spec = tb.scenes.spec(name, **params)
    w = spec.build(**(settings or {}))
    m = SceneMetrics(spec)
    m.observe(w)
    for _ in range(int(round(seconds / spec.dt))):
        w.step(spec.dt)
        m.observe(w)
    return w, m.result()


@pytest.mark.slow
@pytest.mark.parametrize("friction_model", ["coulomb", "fixed"])
def test_stack10_with_caching_comes_to_rest_and_stands_60s(friction_model):
    w, r = run("stack10", 60.0, {"friction_model": friction_model})
    assert r["standing"]
    assert r["max_drift"] < 2 * BOX_H        # teeters while forming (0.3-0.6 m), then holds
    # no energy is gained over the start (which includes the 3.5 cm drops), and what is left in
    # motion after a minute is a small rocking, not a collapse in progress
    assert r["energy_max_gain"] == 0.0
    assert w.kinetic_energy() < 0.005 * r["energy_initial"]


@pytest.mark.slow
def test_three_boxes_without_caching_slide_and_fall():
    # Catto's own friction model (fixed bound mu m_c g, 001 eq. 24-25)
    _, r = run("stack3_nocache", 30.0, {"friction_model": "fixed"})
    assert not r["standing"]
    assert r["max_drift"] > BOX_H


def test_mass_ratio_three_percent_is_stable_with_caching():
    _, r = run("mass_ratio", 20.0, ratio=0.03)
    assert r["standing"]
    assert r["max_drift"] < 0.5 * BOX_H


def test_mass_ratio_one_percent_top_box_falls_off_with_caching():
    w, r = run("mass_ratio", 20.0, ratio=0.01)
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
    np.testing.assert_array_less(0.0, w.contacts().impulse.sum())
