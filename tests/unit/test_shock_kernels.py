"""Stack heights, layers and the shock-propagation kernel against the dense oracles in tests/naive."""

import numpy as np
import pytest

from tests.naive.shock import naive_heights, naive_shock_propagation, row_blocks
from tests.unit.test_solver_kernels import _random_problem
from tumble._core import types as T
from tumble._core.contact.layers import articulated_heights, build_layers, stack_heights
from tumble._core.rows import sweep_rows
from tumble._core.solvers.shock.kernels import block_sweep, correction, shock_propagation


def _layered(P, n_bodies, fixed):
    s = P["row_body"].shape[0]
    fixed_mask = np.zeros(n_bodies, dtype=np.bool_)
    fixed_mask[list(fixed)] = True
    height = np.zeros(n_bodies, dtype=np.int64)
    layers = stack_heights(s, P["row_body"], n_bodies, fixed_mask, height)
    out = dict(height=height, layers=layers, fixed=fixed_mask, row_layer=np.empty(s, dtype=np.int64),
               row_block=np.empty(s, dtype=np.int64),
               layer_row_start=np.empty(layers + 1, dtype=np.int64), layer_rows=np.empty(s, dtype=np.int64),
               layer_inv_diag=np.empty(s), layer_body_start=np.empty(layers + 1, dtype=np.int64),
               layer_bodies=np.empty(n_bodies, dtype=np.int64))
    build_layers(s, P["row_body"], P["row_J"], P["row_B"], height, n_bodies, fixed_mask, layers, out["row_layer"],
                 out["row_block"], out["layer_row_start"], out["layer_rows"], out["layer_inv_diag"],
                 out["layer_body_start"], out["layer_bodies"])
    return out


@pytest.mark.parametrize("seed", range(12))
def test_stack_heights_equal_breadth_first_search(seed):
    rng = np.random.default_rng(seed)
    n = 10
    fixed = tuple(rng.choice(n, size=rng.integers(0, 3), replace=False).tolist())
    P = _random_problem(rng, n_bodies=n, n_contacts=9, fixed=fixed)
    L = _layered(P, n, fixed)
    ref, layers = naive_heights(P["row_body"], n, set(fixed))
    np.testing.assert_array_equal(L["height"], ref)
    assert L["layers"] == layers


@pytest.mark.parametrize("seed", range(12))
def test_layers_partition_rows_and_bodies(seed):
    rng = np.random.default_rng(100 + seed)
    n = 10
    P = _random_problem(rng, n_bodies=n, n_contacts=12, fixed=(0, 1))
    L = _layered(P, n, (0, 1))
    h = L["height"]
    ref_block = row_blocks(P["row_body"], h)
    s = P["row_body"].shape[0]
    # every row with a dynamic side is in exactly one layer, in its original relative order, and joins
    # heights i and i + 1; rows between two fixed bodies are in none
    movable = [r for r in range(s) if P["row_body"][r].max() >= 0]
    assert len(movable) < s or seed != 1          # seed 1 draws a fixed-fixed pair: the case is covered
    assert sorted(L["layer_rows"][: L["layer_row_start"][-1]].tolist()) == movable
    for layer in range(L["layers"]):
        rows = L["layer_rows"][L["layer_row_start"][layer]: L["layer_row_start"][layer + 1]]
        # grouped by the body each row moves, rows in index order inside a group
        keys = [(ref_block[r], r) for r in rows]
        assert keys == sorted(keys)
        assert all(L["row_block"][r] == ref_block[r] for r in rows)
        for r in rows:
            hs = [0 if b < 0 else h[b] for b in P["row_body"][r]]
            assert max(hs) == layer + 1 and min(hs) >= layer
            # the layer diagonal counts only the sides that are not fixated
            d = sum(P["row_J"][r, k] @ P["row_B"][r, k] for k in range(2)
                    if P["row_body"][r, k] >= 0 and h[P["row_body"][r, k]] == layer + 1)
            assert L["layer_inv_diag"][r] == pytest.approx(1.0 / d, rel=1e-12)
        bodies = L["layer_bodies"][L["layer_body_start"][layer]: L["layer_body_start"][layer + 1]]
        assert all(h[b] == layer + 1 for b in bodies)
    assert sorted(L["layer_bodies"][: L["layer_body_start"][-1]].tolist()) == list(range(2, n))


def test_free_floating_bodies_get_the_largest_height():
    # 0 fixed; 1 on 0; 2 on 1; bodies 3-4 touch only each other; body 5 touches nothing
    row_body = np.array([[-1, 1], [1, 2], [3, 4]], dtype=np.int64)
    fixed = np.array([True, False, False, False, False, False])
    h = np.zeros(6, dtype=np.int64)
    assert stack_heights(3, row_body, 6, fixed, h) == 2
    assert h.tolist() == [0, 1, 2, 2, 2, 2]
    # nothing touches a fixed body: everything is one layer
    h[:] = 0
    assert stack_heights(1, np.array([[3, 4]], dtype=np.int64), 6, fixed, h) == 1
    assert h.tolist() == [0, 1, 1, 1, 1, 1]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("iterations, corr, blocks", [(1, 1, 1), (10, 5, 1), (3, 5, 4)])
def test_shock_propagation_equals_dense_layer_loop(seed, iterations, corr, blocks):
    rng = np.random.default_rng(200 + seed)
    n = 9
    fixed = (0,)
    P = _random_problem(rng, n_bodies=n, n_contacts=14, fixed=fixed)
    L = _layered(P, n, fixed)
    s = P["row_body"].shape[0]
    kind = np.array([T.ROW_CONTACT_NORMAL if r % 3 == 0 else T.ROW_CONTACT_FRICTION for r in range(s)])
    owner = np.arange(s) // 3
    depth = rng.uniform(-0.01, 0.05, s // 3)
    lam0 = np.where(kind == T.ROW_CONTACT_NORMAL, rng.uniform(0, 0.2, s), 0.0)
    disp0 = rng.normal(scale=0.01, size=(n, 6))
    disp0[list(fixed)] = 0.0
    h = 0.01
    lam_ref, u_ref, disp_ref = naive_shock_propagation(
        P["row_body"], P["row_J"], P["Minv"], P["zeta"], P["lo"], P["hi"], P["link"], P["mu"],
        kind == T.ROW_CONTACT_NORMAL, depth[owner], 1e-4, P["u"].reshape(-1), lam0, disp0.reshape(-1), h,
        iterations, corr, L["height"], L["layers"], blocks)
    v_lin = np.ascontiguousarray(P["u"][:, :3])
    v_ang = np.ascontiguousarray(P["u"][:, 3:])
    d_lin = np.ascontiguousarray(disp0[:, :3])
    d_ang = np.ascontiguousarray(disp0[:, 3:])
    lam = lam0.copy()
    lam_c = np.zeros(s)
    shock_propagation(L["layers"], L["layer_row_start"], L["layer_rows"], L["layer_body_start"], L["layer_bodies"],
                      L["height"], P["row_body"], P["row_J"], P["row_B"], L["layer_inv_diag"], P["zeta"], P["lo"],
                      P["hi"], P["link"], P["mu"], np.zeros(s), np.ones(s, dtype=np.int64), kind, owner, depth, 1e-4,
                      np.zeros(0), lam, lam_c, v_lin, v_ang, d_lin, d_ang,
                      h, iterations, corr, 0.0, 0.0, 0.0, L["row_block"], blocks, 0.0, -1.0, np.empty(s))
    np.testing.assert_allclose(lam, lam_ref, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.hstack([v_lin, v_ang]).reshape(-1), u_ref, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.hstack([d_lin, d_ang]).reshape(-1), disp_ref, rtol=1e-9, atol=1e-12)


def test_some_random_problems_have_several_layers():
    # guards the oracle comparison above against testing only one-layer systems
    counts = []
    for seed in range(8):
        rng = np.random.default_rng(200 + seed)
        P = _random_problem(rng, n_bodies=9, n_contacts=14, fixed=(0,))
        counts.append(_layered(P, 9, (0,))["layers"])
    assert max(counts) >= 3


def test_correction_removes_penetration_of_a_single_contact_exactly():
    # one normal row between a fixed body and a unit-mass body, pure translation along z:
    # J disp >= depth - slop is met with equality after one sweep, lambda_c = m (depth - slop)
    row_body = np.array([[-1, 0]], dtype=np.int64)
    row_J = np.zeros((1, 2, 6))
    row_J[0, 0, 2] = -1.0
    row_J[0, 1, 2] = 1.0
    row_B = np.zeros((1, 2, 6))
    row_B[0, 1, 2] = 1.0 / 2.0                  # mass 2 kg
    inv_diag = np.array([2.0])
    kind = np.array([T.ROW_CONTACT_NORMAL])
    d_lin = np.zeros((1, 3))
    d_ang = np.zeros((1, 3))
    lam_c = np.zeros(1)
    correction(1, np.zeros(1, dtype=np.int64), row_body, row_J, row_B, inv_diag, kind, np.zeros(1, dtype=np.int64),
               np.array([0.03]), 1e-4, np.ones(1, dtype=np.int64), np.zeros(1), np.zeros(0), lam_c, d_lin, d_ang, 3,
               0.0)
    assert d_lin[0, 2] == pytest.approx(0.03 - 1e-4, rel=1e-12)
    assert lam_c[0] == pytest.approx(2.0 * (0.03 - 1e-4), rel=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_articulated_heights_equal_zero_one_shortest_paths(seed):
    """Joint rows are length-0 edges, contact rows length-1 (tests.naive.shock oracle)."""
    from tests.naive.shock import naive_articulated_heights

    rng = np.random.default_rng(500 + seed)
    n = 14
    fixed = np.zeros(n, dtype=np.bool_)
    fixed[rng.choice(n, 2, replace=False)] = True
    rows = []
    kinds = []
    for _ in range(18):
        a, b = rng.choice(n, 2, replace=False)
        joint = rng.random() < 0.4
        for _ in range(3):   # a pair's rows are contiguous, as in the row store
            rows.append((-1 if fixed[a] else a, -1 if fixed[b] else b))
            kinds.append(T.ROW_JOINT if joint else T.ROW_CONTACT_NORMAL)
    row_body = np.array(rows, dtype=np.int64)
    row_kind = np.array(kinds, dtype=np.int64)
    h = np.empty(n, dtype=np.int64)
    layers = articulated_heights(len(rows), row_body, row_kind, np.zeros((len(rows), 2, 6)), np.zeros(3), 0.0, n,
                                 fixed, h)
    ref, top = naive_articulated_heights(row_body, row_kind == T.ROW_JOINT, n, fixed)
    assert h.tolist() == ref
    assert layers == top


def test_walls_do_not_root_the_stack_layers():
    """Issue 18: with gravity a contact with a fixed body roots its body only if it supports it
    (n . up > support_cos). Bodies: 0 ground, 1 wall (fixed); 2 rests on the ground; 3 rests on 2
    and leans on the wall; 4 only touches the wall (a horizontal normal) and rests on 3."""
    up = np.array([0.0, 0.0, 1.0])
    rows = [(-1, 2, (0, 0, 1)),        # ground under 2: J on 2 = +z (pushes it up)
            (2, 3, (0, 0, 1)),
            (3, -1, (-1, 0, 0)),       # 3 against the wall: J on 3 = +x, horizontal
            (-1, 4, (1, 0, 0)),        # 4 against the wall
            (3, 4, (0, 0, 1))]
    row_body = np.array([(a, b) for a, b, _ in rows], dtype=np.int64)
    row_J = np.zeros((len(rows), 2, 6))
    for r, (a, b, n) in enumerate(rows):
        side = 1 if b >= 0 and a < 0 else 0
        row_J[r, side, :3] = n if side == 1 or b < 0 else -np.asarray(n)
        if a >= 0 and b >= 0:
            row_J[r, 0, :3] = -np.asarray(n)
            row_J[r, 1, :3] = n
    kind = np.full(len(rows), T.ROW_CONTACT_NORMAL, dtype=np.int64)
    fixed = np.array([True, True, False, False, False])
    h = np.zeros(5, dtype=np.int64)
    assert articulated_heights(len(rows), row_body, kind, row_J, up, 0.5, 5, fixed, h) == 3
    assert h.tolist() == [0, 0, 1, 2, 3]
    # 000 §4 as written (no up vector): every fixed contact roots; 3 and 4 get height 1
    assert articulated_heights(len(rows), row_body, kind, row_J, np.zeros(3), 0.5, 5, fixed, h) == 1
    assert h.tolist() == [0, 0, 1, 1, 1]


def _block_sweep_by_rows(order, start, stop, row_block, block_iterations, block_tolerance, layer, height, P, inv_diag,
                         cfm, lam, v_lin, v_ang):
    """``block_sweep`` as it was before the per-body kernel: each block's rows by ``sweep_rows``."""
    ones = np.ones(P["row_body"].shape[0], dtype=np.int64)
    max_dv = 0.0
    k = start
    while k < stop:
        e = k + 1
        while e < stop and row_block[order[e]] == row_block[order[k]]:
            e += 1
        for it in range(block_iterations):
            dv = sweep_rows(order, k, e, layer, height, P["row_body"], P["row_J"], P["row_B"], inv_diag, P["zeta"],
                            P["lo"], P["hi"], P["link"], P["mu"], P["cfm_rows"], ones, lam, v_lin, v_ang, cfm)
            if it == 0 and dv > max_dv:
                max_dv = dv
            if dv <= block_tolerance:
                break
        k = e
    return max_dv


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("cfm", [0.0, 0.05])
def test_block_sweep_is_bit_identical_to_row_sweeps(seed, cfm):
    # solve_body_block keeps a block's body velocity in local variables and the fixated sides' part of
    # J v per visit; the layer solve must stay bit for bit what sweep_rows computes (state hashes)
    rng = np.random.default_rng(500 + seed)
    n = 9
    P = _random_problem(rng, n_bodies=n, n_contacts=14, fixed=(0,))
    s = P["row_body"].shape[0]
    P["cfm_rows"] = np.where(rng.random(s) < 0.3, 0.01, 0.0)
    L = _layered(P, n, (0,))
    ones = np.ones(s, dtype=np.int64)
    for layer in range(L["layers"]):
        s0, s1 = L["layer_row_start"][layer], L["layer_row_start"][layer + 1]
        lam = np.where(np.arange(s) % 3 == 0, rng.uniform(0, 0.2, s), rng.uniform(-0.05, 0.05, s))
        v_lin = rng.normal(size=(n, 3))
        v_ang = rng.normal(size=(n, 3))
        ref = [lam.copy(), v_lin.copy(), v_ang.copy()]
        dv_ref = _block_sweep_by_rows(L["layer_rows"], s0, s1, L["row_block"], 7, 1e-9, layer, L["height"], P,
                                      L["layer_inv_diag"], cfm, *ref)
        dv = block_sweep(L["layer_rows"], s0, s1, L["row_block"], 7, 1e-9, layer, L["height"], P["row_body"],
                         P["row_J"], P["row_B"], L["layer_inv_diag"], P["zeta"], P["lo"], P["hi"], P["link"], P["mu"],
                         P["cfm_rows"], ones, lam, v_lin, v_ang, cfm, np.empty((s, 2)), np.empty(s, dtype=np.int64))
        assert dv == dv_ref
        for got, want in zip((lam, v_lin, v_ang), ref):
            assert np.array_equal(got, want)


def _launch(collision_speed):
    """Two unit bodies stacked on the ground (rows: ground-A, A-B, normals up, at the centres); the
    ground row asks A for 5 m/s up (a brick its supports send up in its own layer), the A-B row for 0.
    Returns B's vertical velocity after ``shock_propagation``."""
    row_body = np.array([[-1, 0], [0, 1]], dtype=np.int64)
    row_J = np.zeros((2, 2, 6))
    row_J[:, 0, 2] = -1.0
    row_J[:, 1, 2] = 1.0
    row_B = row_J.copy()          # unit masses
    row_B[0, 0] = 0.0             # the fixed side
    P = dict(row_body=row_body, row_J=row_J, row_B=row_B)
    L = _layered(P, 2, ())
    assert L["layers"] == 2
    v_lin = np.zeros((2, 3))
    v_ang = np.zeros((2, 3))
    d = np.zeros((2, 3))
    kind = np.full(2, T.ROW_CONTACT_NORMAL, dtype=np.int64)
    shock_propagation(L["layers"], L["layer_row_start"], L["layer_rows"], L["layer_body_start"], L["layer_bodies"],
                      L["height"], row_body, row_J, row_B, L["layer_inv_diag"], np.array([5.0, 0.0]),
                      np.zeros(2), np.full(2, np.inf), np.full(2, -1, dtype=np.int64), np.zeros(2), np.zeros(2),
                      np.ones(2, dtype=np.int64), kind, np.arange(2), np.zeros(2), 0.0, np.zeros(0), np.zeros(2),
                      np.zeros(2), v_lin, v_ang, d, d.copy(), 0.01, 10, 0, 0.0, 0.0, 0.0, L["row_block"], 1, 0.0,
                      collision_speed, np.array([5.0, 0.0]))
    assert v_lin[0, 2] == pytest.approx(5.0)
    return v_lin[1, 2]


def test_a_base_sent_up_in_its_own_layer_does_not_launch_the_body_above():
    """Issue 18: the "incremental" targets are taken when the layer starts, from the base's velocity as
    its own layer left it. Taken before the propagation (A still at rest then) they asked B to get out
    of A's way: in tower_roof the bricks the cannonball sent up threw the 16 t block up at 3.9 m/s
    (+135 kJ in one step). Fig. 14 as written (collision_speed < 0) launches B, the contrast."""
    assert _launch(0.05) == pytest.approx(0.0)
    assert _launch(-1.0) == pytest.approx(5.0)


def _course_problem(rng, pairs, n_bodies, fixed):
    """Contact rows (normal + 2 friction rows per point, random normals, levers, masses and inertias) on the
    given body ``pairs`` (one point each, in that order), fixed bodies -1; the layout of ``_random_problem``."""
    masses = rng.uniform(0.5, 5.0, n_bodies)
    Iinv = []
    for _ in range(n_bodies):
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        Iinv.append(Q @ np.diag(rng.uniform(0.2, 3.0, 3)) @ Q.T)
    s = 3 * len(pairs)
    P = dict(row_body=np.zeros((s, 2), dtype=np.int64), row_J=np.zeros((s, 2, 6)), row_B=np.zeros((s, 2, 6)),
             lo=np.zeros(s), hi=np.full(s, np.inf), link=-np.ones(s, dtype=np.int64), mu=np.zeros(s),
             zeta=np.zeros(s), cfm_rows=np.zeros(s))
    for c, (a, b) in enumerate(pairs):
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        t1 = np.cross(n, [1.0, 0, 0]) if abs(n[0]) < 0.9 else np.cross(n, [0, 1.0, 0])
        t1 /= np.linalg.norm(t1)
        t2 = np.cross(n, t1)
        ra, rb = rng.normal(scale=0.5, size=3), rng.normal(scale=0.5, size=3)
        for j, d in enumerate((n, t1, t2)):
            r = 3 * c + j
            P["row_body"][r] = (-1 if a in fixed else a, -1 if b in fixed else b)
            P["row_J"][r, 0] = np.r_[-d, -np.cross(ra, d)]
            P["row_J"][r, 1] = np.r_[d, np.cross(rb, d)]
            for side, body in enumerate((a, b)):
                if body not in fixed:
                    P["row_B"][r, side, :3] = P["row_J"][r, side, :3] / masses[body]
                    P["row_B"][r, side, 3:] = Iinv[body] @ P["row_J"][r, side, 3:]
            if j == 0:
                P["zeta"][r] = rng.uniform(0.0, 0.3)
            else:
                P["link"][r] = 3 * c
                P["mu"][r] = 0.5
                P["lo"][r], P["hi"][r] = -np.inf, np.inf
    return P


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("cfm", [0.0, 0.05])
def test_paired_blocks_are_bit_identical_to_one_block_at_a_time(seed, cfm):
    """Issue 19: in a layer where no row has two movable sides (a tower course) ``block_sweep(paired=True)``
    solves two blocks together, row by row in turn (``solve_block_pair``); each block must come out bit for
    bit as solved alone (the state hashes), whatever its row count and however many passes it takes. Two
    courses of 5 bodies on the ground (body 0), bodies of the upper course resting on one or two of the lower
    one's (their fixated bases in layer 1), 1 to 4 points per pair."""
    rng = np.random.default_rng(700 + seed)
    n = 11
    pairs = []
    for i in range(1, 6):
        pairs += [(0, i)] * int(rng.integers(1, 5))
    for i in range(6, 11):
        pairs += [(i - 5, i)] * int(rng.integers(1, 5))
        if i < 10 and rng.random() < 0.5:
            pairs += [(i, i - 4)] * int(rng.integers(1, 3))      # the base beside, the upper body on side 0
    P = _course_problem(rng, pairs, n, (0,))
    s = P["row_body"].shape[0]
    P["cfm_rows"] = np.where(rng.random(s) < 0.3, 0.01, 0.0)
    L = _layered(P, n, (0,))
    assert L["layers"] == 2
    ones = np.ones(s, dtype=np.int64)
    for layer in range(2):
        s0, s1 = L["layer_row_start"][layer], L["layer_row_start"][layer + 1]
        lam = np.where(np.arange(s) % 3 == 0, rng.uniform(0, 0.2, s), rng.uniform(-0.05, 0.05, s))
        v_lin = rng.normal(size=(n, 3))
        v_ang = rng.normal(size=(n, 3))
        out = {}
        for paired in (False, True):
            state = [lam.copy(), v_lin.copy(), v_ang.copy()]
            dv = block_sweep(L["layer_rows"], s0, s1, L["row_block"], 7, 1e-9, layer, L["height"], P["row_body"],
                             P["row_J"], P["row_B"], L["layer_inv_diag"], P["zeta"], P["lo"], P["hi"], P["link"],
                             P["mu"], P["cfm_rows"], ones, *state, cfm, np.empty((s, 2)), np.empty(s, dtype=np.int64),
                             paired)
            out[paired] = (dv, state)
        assert out[True][0] == out[False][0]
        for got, want in zip(out[True][1], out[False][1]):
            assert np.array_equal(got, want)


def _propagate(P, L, lam, v_lin, v_ang, d_lin, d_ang, depth, kernel):
    """``kernel`` (``shock_propagation`` or its serial twin) on a problem of ``_course_problem`` /
    ``_layered``: 3 dynamics sweeps of 12 block passes and 2 correction sweeps per layer, tolerances 0 (every
    sweep runs). Returns (worst, sweeps, correction sweeps)."""
    s = P["row_body"].shape[0]
    kind = np.where(np.arange(s) % 3 == 0, T.ROW_CONTACT_NORMAL, T.ROW_CONTACT_FRICTION).astype(np.int64)
    return kernel(L["layers"], L["layer_row_start"], L["layer_rows"], L["layer_body_start"], L["layer_bodies"],
                  L["height"], P["row_body"], P["row_J"], P["row_B"], L["layer_inv_diag"], P["zeta"], P["lo"],
                  P["hi"], P["link"], P["mu"], P["cfm_rows"], np.ones(s, dtype=np.int64), kind, np.arange(s) // 3,
                  depth, 1e-4, np.zeros(0), lam, np.zeros(s), v_lin, v_ang, d_lin, d_ang, 0.01, 3, 2, 0.0, 0.0, 0.0,
                  L["row_block"], 12, 1e-9, -1.0, np.empty(s))


def test_a_parallel_course_equals_its_bodies_solved_one_by_one():
    """Issue 19: a layer of independent blocks above ``PARALLEL_MIN_LAYER_UPDATES`` runs its sweeps in parallel,
    two blocks per task (``solve_block_pair``; an odd count leaves one alone). With the sweep tolerances 0 every
    body's rows are a problem of their own, so each body must come out bit for bit as its rows solved alone."""
    from tumble._core.solvers.shock.kernels import PARALLEL_MIN_BLOCKS, PARALLEL_MIN_LAYER_UPDATES

    rng = np.random.default_rng(900)
    n = 132                         # the ground and 131 bodies on it, 4 points each
    pairs = [(0, i) for i in range(1, n) for _ in range(4)]
    P = _course_problem(rng, pairs, n, (0,))
    s = P["row_body"].shape[0]
    L = _layered(P, n, (0,))
    assert L["layers"] == 1 and s * 12 >= PARALLEL_MIN_LAYER_UPDATES and n - 1 >= PARALLEL_MIN_BLOCKS
    lam0 = np.where(np.arange(s) % 3 == 0, rng.uniform(0, 0.2, s), 0.0)
    v0 = rng.normal(size=(n, 6))
    v0[0] = 0.0
    depth = rng.uniform(0.0, 0.01, s // 3)
    lam = lam0.copy()
    v_lin, v_ang = np.ascontiguousarray(v0[:, :3]), np.ascontiguousarray(v0[:, 3:])
    d_lin, d_ang = np.zeros((n, 3)), np.zeros((n, 3))
    _propagate(P, L, lam, v_lin, v_ang, d_lin, d_ang, depth, shock_propagation)
    for i in range(1, n):
        r0, r1 = 12 * (i - 1), 12 * i
        Q = {k: v[r0:r1].copy() for k, v in P.items()}
        Q["link"] = np.where(Q["link"] >= 0, Q["link"] - r0, -1)
        Li = _layered(Q, n, (0,))
        lam_i = lam0[r0:r1].copy()
        vl, va = np.ascontiguousarray(v0[:, :3]), np.ascontiguousarray(v0[:, 3:])
        dl, da = np.zeros((n, 3)), np.zeros((n, 3))
        _propagate(Q, Li, lam_i, vl, va, dl, da, depth[r0 // 3:r1 // 3], shock_propagation.serial)
        assert np.array_equal(lam[r0:r1], lam_i)
        for got, want in ((v_lin, vl), (v_ang, va), (d_lin, dl), (d_ang, da)):
            assert np.array_equal(got[i], want[i])
