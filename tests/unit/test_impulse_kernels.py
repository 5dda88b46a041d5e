"""The Numba kernels of solver ``impulse`` against the pure-Python oracle of the thesis
(``tests/naive/impulse.py``, written from 004 independently of the kernels): the same batches, the same
resolution sequence and velocities, the same penetration corrections, and the parallel run equal to
the serial one bit for bit (004 §4: batches are independent)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.naive import impulse as I
from tests.unit.test_impulse_oracle import HP, copy_bodies, packed_cluster, pyramid, settings, tower
from tumble._core.solvers.impulse import driver


def _arrays(bodies, contacts):
    m = len(contacts["depth"])
    return dict(m=m, body_a=contacts["body_a"].astype(np.int64), body_b=contacts["body_b"].astype(np.int64),
                point=contacts["point"].copy(), normal=contacts["normal"].copy(), depth=contacts["depth"].copy())


def _resolve(bodies, contacts, s, order="closing_speed", parallel=False):
    """Run driver.resolve on copies; returns (v, w, stats, normal impulse)."""
    b = copy_bodies(bodies)
    a = _arrays(b, contacts)
    n = len(b["inv_mass"])
    bt = driver.batches(n, b["fixed"], a["m"], a["body_a"], a["body_b"])
    ni = np.zeros(a["m"])
    imp = np.zeros((a["m"], 3))
    factor = s["max_iterations_factor"]
    stats = driver.resolve(bt, a["m"], a["body_a"], a["body_b"], a["point"], a["normal"], contacts["restitution"],
                           contacts["mu_s"], contacts["mu_k"], b["position"], b["inv_mass"], b["inv_inertia"],
                           b["fixed"], np.zeros(n, bool), b["v"], b["w"], s["resolution_threshold"],
                           s["restitution_threshold"], float(factor), bool(s["shock_propagation"]),
                           float(s["shock_iterations_factor"]), order == "closing_speed", ni, imp, parallel)
    return b["v"], b["w"], stats, ni


def test_batches_match_the_oracle():
    rng = np.random.default_rng(7)
    n = 40
    fixed = rng.random(n) < 0.15
    pairs = rng.integers(0, n, size=(60, 2))
    pairs = pairs[(pairs[:, 0] != pairs[:, 1]) & ~(fixed[pairs[:, 0]] & fixed[pairs[:, 1]])]
    a, b = pairs[:, 0].astype(np.int64), pairs[:, 1].astype(np.int64)
    bt = driver.batches(n, fixed, len(a), a, b)
    want = I.batches(n, fixed, a, b)
    assert bt.count == len(want)
    for k, (bodies, contacts) in enumerate(want):
        got_b = bt.batch_bodies[bt.batch_body_start[k]:bt.batch_body_start[k + 1]]
        got_c = bt.batch_contacts[bt.batch_contact_start[k]:bt.batch_contact_start[k + 1]]
        assert list(got_b) == list(bodies) and list(got_c) == list(contacts)


def _jittered(bodies, rng, scale=1e-3):
    """Break the exact ties of a symmetric scene: with equal closing speeds the pick depends on the
    last bit, which the oracle (NumPy, other operation order) and the kernel need not share."""
    b = copy_bodies(bodies)
    dyn = ~b["fixed"]
    b["v"][dyn] += scale * rng.normal(size=(int(dyn.sum()), 3))
    return b


@pytest.mark.parametrize("order", ["closing_speed", "arbitrary"])
@pytest.mark.parametrize("case", ["pyramid", "tower", "cluster"])
@pytest.mark.parametrize("shock", [True, False])
def test_resolution_matches_the_oracle(case, order, shock):
    """Alg. 9 (+ Alg. 10 when the cap is hit): same iteration counts and the same velocities. The
    oracle recomputes every quantity in NumPy, so agreement is to rounding (1e-12), not bits; the
    symmetric scenes get tiny random velocities so that no two contacts close equally fast."""
    rng = np.random.default_rng(11)
    bodies, contacts = {"pyramid": lambda: pyramid(5), "tower": lambda: tower(6),
                        "cluster": lambda: packed_cluster(rng, overlap=0.0005)}[case]()
    if case != "cluster":
        bodies = _jittered(bodies, rng)
    s = settings(shock_propagation=shock)
    v, w, stats, ni = _resolve(bodies, contacts, s, order)
    ref = copy_bodies(bodies)
    results = I.resolve_contacts(ref, contacts, s, order=order)
    assert int(stats[:, 0].sum()) == sum(st["iterations"] for _, st in results)
    assert int(stats[:, 3].sum()) == sum(st["shock_iterations"] for _, st in results)
    np.testing.assert_allclose(v, ref["v"], atol=1e-12)
    np.testing.assert_allclose(w, ref["w"], atol=1e-12)
    want_ni = np.sum([st["normal_impulse"] for _, st in results], axis=0)
    np.testing.assert_allclose(ni, want_ni, atol=1e-12)


@pytest.mark.parametrize("order", ["closing_speed", "arbitrary"])
def test_resolution_of_a_large_cluster_matches_the_oracle(order):
    """A 75-sphere packed cluster (~300 contacts in one batch): each resolved contact changes up to ~20 others,
    so ``_resolve_loop``'s side list fills past ``SIDE_FLUSH`` and is flushed into the heap many times, and the
    picks alternate between the heap's top and the list (issue 19). The sequence must stay the oracle's (a
    linear scan for the lowest (key, id)): same iteration counts, the same velocities to rounding."""
    from tumble._core.solvers.impulse.resolution import SIDE_FLUSH

    rng = np.random.default_rng(5)
    bodies, contacts = packed_cluster(rng, nx=5, ny=5, nz=3, overlap=0.0005)
    assert len(contacts["depth"]) > 10 * SIDE_FLUSH
    s = settings()
    v, w, stats, ni = _resolve(bodies, contacts, s, order)
    ref = copy_bodies(bodies)
    results = I.resolve_contacts(ref, contacts, s, order=order)
    assert int(stats[:, 0].sum()) == sum(st["iterations"] for _, st in results)
    assert int(stats[:, 3].sum()) == sum(st["shock_iterations"] for _, st in results)
    np.testing.assert_allclose(v, ref["v"], atol=1e-12)
    np.testing.assert_allclose(w, ref["w"], atol=1e-12)


def test_shock_propagation_runs_when_the_cap_is_hit():
    bodies, contacts = tower(6)
    s = settings()  # high performance: cap 2 x contacts, shock propagation on
    _, _, stats, _ = _resolve(bodies, contacts, s)
    assert stats[0, 1] > 0, "the 6-sphere tower hits the cap and runs the shock stages"
    s_off = settings(shock_propagation=False)
    _, _, stats_off, _ = _resolve(bodies, contacts, s_off)
    assert stats_off[0, 1] == 0 and stats_off[0, 2] > 0  # closing contacts left without it


@pytest.mark.parametrize("seed", range(4))
def test_penetration_correction_matches_the_oracle(seed):
    rng = np.random.default_rng(400 + seed)
    bodies, contacts = packed_cluster(rng)
    s = settings()
    dt = s["dt"]
    ref_disp, ref_depth, ref_stats = I.correct_penetrations(copy_bodies(bodies), contacts,
                                                            range(len(contacts["depth"])), dt, s)
    b = copy_bodies(bodies)
    a = _arrays(b, contacts)
    n = len(b["inv_mass"])
    bt = driver.batches(n, b["fixed"], a["m"], a["body_a"], a["body_b"])
    x0 = b["position"].copy()
    stats = driver.correct(bt, a["m"], a["body_a"], a["body_b"], a["point"], a["normal"], a["depth"], b["position"],
                           b["fixed"], np.zeros(n, bool), b["v"], b["w"], dt, s["penetration_threshold"],
                           s["remaining_penetration_fraction"], False)
    assert int(stats[:, 0].sum()) == len(ref_stats["penetrating_before"]) > 0
    np.testing.assert_allclose(b["position"] - x0, ref_disp, atol=1e-12)
    np.testing.assert_allclose(a["depth"], ref_depth, atol=1e-12)
    np.testing.assert_allclose(a["point"], ref_stats["points"], atol=1e-12)
    assert np.all(a["depth"] <= s["penetration_threshold"] + 1e-12) or stats[:, 2].sum() > 0


def test_parallel_equals_serial_bit_for_bit():
    """Many independent batches (separate clusters), solved on one thread and on all: identical."""
    rng = np.random.default_rng(5)
    scs = [packed_cluster(rng, nx=2, ny=2, nz=3, overlap=0.0005) for _ in range(30)]
    # place the clusters side by side in one body/contact list
    bodies = {k: np.concatenate([sc[0][k] for sc in scs]) for k in scs[0][0]}
    offs = np.cumsum([0] + [len(sc[0]["inv_mass"]) for sc in scs[:-1]])
    contacts = {k: np.concatenate([sc[1][k] + (o if k in ("body_a", "body_b") else 0) for sc, o in zip(scs, offs)])
                for k in scs[0][1]}
    assert len(contacts["depth"]) >= driver.PARALLEL_MIN_CONTACTS
    s = settings()
    v1, w1, st1, n1 = _resolve(bodies, contacts, s, parallel=False)
    v2, w2, st2, n2 = _resolve(bodies, contacts, s, parallel=True)
    np.testing.assert_array_equal(v1, v2)
    np.testing.assert_array_equal(w1, w2)
    np.testing.assert_array_equal(st1, st2)
    np.testing.assert_array_equal(n1, n2)
    assert HP["dt"] > 0


def _column_on_ground(count, ground_depth, inner_depth):
    """``count`` spheres (r 0.1 m, 1 kg) in a column on a fixed ground body, at rest: the ground contact
    ``ground_depth`` deep, the ones between spheres ``inner_depth`` deep."""
    n = count + 1
    fixed = np.zeros(n, bool)
    fixed[0] = True
    pos = np.zeros((n, 3))
    pos[0, 2] = -1.0
    z = 0.1 - ground_depth
    for i in range(1, n):
        pos[i, 2] = z
        z += 0.2 - inner_depth
    a, b = np.arange(0, count), np.arange(1, n)
    normal = np.tile([0.0, 0.0, 1.0], (count, 1))
    depth = np.array([ground_depth] + [inner_depth] * (count - 1))
    point = np.zeros((count, 3))
    point[:, 2] = pos[b, 2] - 0.1 + 0.5 * depth
    point[0, 2] = 0.5 * (pos[1, 2] - 0.1)
    return n, fixed, pos, a, b, normal, depth, point


def test_correction_max_bodies_rejects_moves_that_displace_more_bodies():
    """``correction_max_bodies`` (issue 19; 0 = Alg. 2's unbounded search): the ground contact of a
    10-sphere column is 3 mm deep (> t_pen 1.74 mm), the others 1 mm (< t_pen, so none is corrected
    itself, but each passes a push on whole, Eq. 2.3.6). The one valid move lifts the bottom sphere and
    with it all ten; bounded at 4 bodies it is rejected and the contact counts as unresolvable."""
    for max_bodies, corrected, moved in ((0, 1, 10), (10, 1, 10), (9, 0, 0), (4, 0, 0)):
        n, fixed, pos, a, b, normal, depth, point = _column_on_ground(10, 3e-3, 1e-3)
        bt = driver.batches(n, fixed, len(a), a, b)
        x0 = pos.copy()
        stats = driver.correct(bt, len(a), a, b, point, normal, depth, pos, fixed, np.zeros(n, bool),
                               np.zeros((n, 3)), np.zeros((n, 3)), 1 / 240, 1.74e-3, 0.5, False,
                               max_bodies=max_bodies)
        assert tuple(stats[0]) == (1, corrected, 1 - corrected, moved), (max_bodies, stats)
        lifted = pos[1:, 2] - x0[1:, 2]
        if moved:
            np.testing.assert_allclose(lifted, 3e-3 - 0.5 * 1.74e-3)   # to f_rem t_pen of overlap (Eq. 2.5.4)
        else:
            assert not lifted.any()


def _wedged_sphere(depth_between=3e-3):
    """Ground (0, fixed), sphere 1 on it, sphere 2 leaning on sphere 1 at 40 deg from the vertical and pressed
    into a wall (3, fixed) on its +x side; everything at rest. Sphere 1 - 2 overlap ``depth_between``."""
    n = 4
    fixed = np.array([True, False, False, True])
    pos = np.zeros((n, 3))
    c, s = math.cos(math.radians(40.0)), math.sin(math.radians(40.0))
    pos[1] = (0.0, 0.0, 0.1 - 0.5e-3)
    pos[2] = pos[1] + (0.2 - depth_between) * np.array([s, 0.0, c])
    pos[3] = (pos[2, 0] + 0.1 - 1e-3 + 0.05, 0.0, 1.0)
    a, b = np.array([0, 1, 2]), np.array([1, 2, 3])
    normal = np.array([[0.0, 0.0, 1.0], [s, 0.0, c], [1.0, 0.0, 0.0]])
    depth = np.array([0.5e-3, depth_between, 1e-3])
    point = np.array([[0.0, 0.0, 0.0], pos[1] + (0.1 - 0.5 * depth_between) * normal[1], pos[2] + [0.1, 0.0, 0.0]])
    return n, fixed, pos, a, b, normal, depth, point


def test_correction_lift_undoes_a_penetration_whose_every_move_reaches_a_fixed_body():
    """Issue 18 (``ImpulseSettings.correction_lift``): the upper sphere's N move (along the 40 deg normal)
    pushes it into the wall, the lower sphere's into the ground, and neither moved (no V move): Alg. 2
    leaves the 3 mm overlap (Fig. 8). The lift moves the upper sphere straight up by
    (3 - 0.87) mm / cos 40 deg, which leaves the wall contact as it was and the overlap at f_rem t_pen."""
    for lift, expected in ((None, (1, 0, 1, 0)), ((0.0, 0.0, 1.0), (1, 1, 0, 1))):
        n, fixed, pos, a, b, normal, depth, point = _wedged_sphere()
        x0 = pos.copy()
        bt = driver.batches(n, fixed, 3, a, b)
        stats = driver.correct(bt, 3, a, b, point, normal, depth, pos, fixed, np.zeros(n, bool), np.zeros((n, 3)),
                               np.zeros((n, 3)), 1 / 60, 1.74e-3, 0.5, False, lift_dir=lift)
        assert tuple(stats[0]) == expected, (lift, stats)
        if lift is None:
            assert (pos == x0).all()
            continue
        lifted = pos - x0
        assert lifted[[0, 1, 3]].tolist() == [[0.0] * 3] * 3 and lifted[2, 0] == 0.0 and lifted[2, 1] == 0.0
        np.testing.assert_allclose(lifted[2, 2], (3e-3 - 0.87e-3) / math.cos(math.radians(40.0)), rtol=1e-12)
        np.testing.assert_allclose(depth, [0.5e-3, 0.87e-3, 1e-3], rtol=1e-12)


def test_correction_energy_budget_gives_back_only_the_height_the_step_took():
    """Issue 18 (``ImpulseSettings.correction_energy_budget``): the one valid move for a 10-sphere column whose
    ground contact is 3 mm deep lifts all ten spheres by 2.13 mm. At rest (the position update released no
    potential energy) or with only the bottom sphere having moved down 2.5 mm, the move would raise more
    potential energy than the step released and is rejected; with the whole column having moved down 2.5 mm it
    is taken. Without the budget (Alg. 2) it is always taken. In every case the potential energy the moves
    add is at most what the position update released."""
    dt, g = 1 / 240, np.array([0.0, 0.0, -9.81])
    for budget, moving, corrected in ((False, "none", 1), (True, "none", 0), (True, "bottom", 0), (True, "all", 1)):
        n, fixed, pos, a, b, normal, depth, point = _column_on_ground(10, 3e-3, 1e-3)
        inv_mass = np.where(fixed, 0.0, 0.5)
        v = np.zeros((n, 3))
        if moving == "bottom":
            v[1, 2] = -2.5e-3 / dt
        elif moving == "all":
            v[1:, 2] = -2.5e-3 / dt
        x0 = pos.copy()
        bt = driver.batches(n, fixed, len(a), a, b)
        stats = driver.correct(bt, len(a), a, b, point, normal, depth, pos, fixed, np.zeros(n, bool), v,
                               np.zeros((n, 3)), dt, 1.74e-3, 0.5, False, inv_mass=inv_mass if budget else None,
                               gravity=g if budget else None)
        assert stats[0, 1] == corrected, (budget, moving, stats)
        raised = 9.81 * 2.0 * float((pos[1:, 2] - x0[1:, 2]).sum())
        released = 9.81 * 2.0 * float(-v[1:, 2].sum()) * dt
        if budget:
            assert raised <= released + 1e-12
