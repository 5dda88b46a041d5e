"""The compact pairwise rows (``rows.pack_pair_rows``, ``rows.sweep_pair_rows``; issue 19): the table
against its NumPy twin (``tests/naive/pair_rows.py``), the sweep against ``pgs_sweep`` on J and B bit
for bit and against the dense projected Gauss-Seidel oracle (``tests/naive/pgs.py``), on the contact
rows of real scenes (fixed ground, spheres, capsules, anisotropic boxes turning)."""

import numpy as np
import pytest

import tumble as tb
from tests.naive.pair_rows import naive_pack, naive_unpack
from tests.naive.pgs import dense_from_rows, dense_pgs
from tumble._core import types as T
from tumble._core.rows import (
    PAIR_COLUMNS,
    pack_pair_rows,
    pgs_sweep,
    repack_changed_rows,
    sweep_pair_rows,
    warm_start,
    warm_start_pairs,
)
from tumble._core.solvers.pgs.kernels import (
    block_scratch,
    block_sweep_pair,
    block_sweep_with,
    manifold_blocks,
    manifold_starts_of,
)


def _mixed_world():
    """Boxes of three shapes on the ground, turning, a sphere and a capsule: contact rows with one side
    fixed and with two dynamic sides, anisotropic inverse inertias."""
    w = tb.World(solver="pgs", substeps=1, normal_block_solve=False)
    w.add_body(tb.Plane(), fixed=True)
    for k in range(4):
        w.add_body(tb.Box((0.6 - 0.1 * k, 0.4, 0.2 + 0.05 * k)), position=(0.03 * k, 0.0, 0.2 + 0.55 * k),
                   orientation=(1.0, 0.02 * k, 0.01, 0.0), angular_velocity=(0.0, 0.4 * k, 0.1))
    w.add_body(tb.Sphere(0.3), position=(2.0, 0.0, 0.29), linear_velocity=(0.5, 0.0, -1.0))
    w.add_body(tb.Capsule(0.2, 0.6), position=(-2.0, 0.0, 0.25), angular_velocity=(2.0, 1.0, 0.0))
    return w


def _rows_of(name):
    if name == "mixed":
        w, dt, steps = _mixed_world(), 1 / 60, 20
    else:
        spec = tb.scenes.spec(name)
        w, dt, steps = spec.build(solver="pgs"), spec.dt, 30
        w.settings.update(**w.settings.preset("catto"))
    for _ in range(steps):
        w.step(dt)
    r, b = w.rows, w.bodies
    s = r.count
    assert s > 0 and np.all(np.isin(r.row_kind[:s], (T.ROW_CONTACT_NORMAL, T.ROW_CONTACT_FRICTION)))
    return w, r, b, s


SCENES = ["stack10", "mixed", "pyramid20"]


@pytest.mark.parametrize("name", SCENES)
def test_pack_is_the_twins_table_and_carries_j_and_b(name):
    w, r, b, s = _rows_of(name)
    C = np.full((s, PAIR_COLUMNS), np.nan)
    pack_pair_rows(s, r.row_body, r.row_J, r.row_B, r.row_inv_diag, b.body_inv_mass, C)
    np.testing.assert_array_equal(C, naive_pack(r.row_body[:s], r.row_J[:s], r.row_B[:s], r.row_inv_diag[:s],
                                                b.body_inv_mass))
    # the facts the layout rests on (001 eq. 18, 34): J_a,lin = -J_b,lin, B_lin = m^-1 J_lin, exactly
    J, B = naive_unpack(r.row_body[:s], C)
    np.testing.assert_array_equal(J, r.row_J[:s])
    np.testing.assert_array_equal(B, r.row_B[:s])


@pytest.mark.parametrize("name", SCENES)
def test_sweep_pair_rows_is_pgs_sweep_bit_for_bit(name):
    w, r, b, s = _rows_of(name)
    C = np.empty((s, PAIR_COLUMNS))
    pack_pair_rows(s, r.row_body, r.row_J, r.row_B, r.row_inv_diag, b.body_inv_mass, C)
    rng = np.random.default_rng(3)
    n = b.count
    v0 = rng.normal(scale=0.3, size=(n, 3)), rng.normal(scale=0.3, size=(n, 3))     # far from the solution
    lam0 = r.row_lambda[:s] * rng.uniform(0.0, 2.0, s)
    ref = [lam0.copy(), v0[0].copy(), v0[1].copy()]
    new = [lam0.copy(), v0[0].copy(), v0[1].copy()]
    for _ in range(8):
        dv_ref = pgs_sweep(0, s, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_lo, r.row_hi,
                           r.row_link, r.row_mu, r.row_cfm, r.row_group, *ref)
        dv_new = sweep_pair_rows(0, s, r.row_body, C, r.row_bias, r.row_lo, r.row_hi, r.row_link, r.row_mu, *new)
        assert dv_new == dv_ref and dv_ref > 0.0
        for a, c in zip(ref, new):
            np.testing.assert_array_equal(a, c)


def test_sweep_pair_rows_is_dense_pgs():
    """Against the oracle written from 000 eq. 27-30 (dense A = J M^-1 J^T, no velocity bookkeeping)."""
    w, r, b, s = _rows_of("mixed")
    n = b.count
    C = np.empty((s, PAIR_COLUMNS))
    pack_pair_rows(s, r.row_body, r.row_J, r.row_B, r.row_inv_diag, b.body_inv_mass, C)
    Minv = np.zeros((6 * n, 6 * n))
    for i in range(n):
        if not b.body_fixed[i]:
            Minv[6 * i: 6 * i + 3, 6 * i: 6 * i + 3] = np.eye(3) * b.body_inv_mass[i]
            Minv[6 * i + 3: 6 * i + 6, 6 * i + 3: 6 * i + 6] = b.body_inv_inertia_world[i]
    rows = slice(0, s)
    J = dense_from_rows(r.row_body[rows], r.row_J[rows], n)
    rng = np.random.default_rng(5)
    v_lin, v_ang = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    v_lin[b.body_fixed[:n]] = 0.0
    v_ang[b.body_fixed[:n]] = 0.0
    u = np.hstack([v_lin, v_ang]).ravel()
    lam = np.zeros(s)
    lam_ref, u_ref = dense_pgs(J, Minv, u, r.row_bias[rows], r.row_lo[rows], r.row_hi[rows], r.row_link[rows],
                               r.row_mu[rows], lam, 6)
    for _ in range(6):
        sweep_pair_rows(0, s, r.row_body, C, r.row_bias, r.row_lo, r.row_hi, r.row_link, r.row_mu, lam, v_lin, v_ang)
    np.testing.assert_allclose(lam, lam_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.hstack([v_lin, v_ang]).ravel(), u_ref, rtol=1e-9, atol=1e-12)


def test_repack_changed_rows_rewrites_exactly_the_rows_of_changed_bodies():
    w, r, b, s = _rows_of("mixed")
    C = np.empty((s, PAIR_COLUMNS))
    pack_pair_rows(s, r.row_body, r.row_J, r.row_B, r.row_inv_diag, b.body_inv_mass, C)
    old = C.copy()
    target = int(r.row_body[0, 1] if r.row_body[0, 1] >= 0 else r.row_body[0, 0])
    B = r.row_B[:s].copy()
    inv_diag = r.row_inv_diag[:s].copy()
    touched = (r.row_body[:s, 0] == target) | (r.row_body[:s, 1] == target)
    B[touched, :, 3:] *= 1.5            # a new angular B (as refresh_turned_rows writes) on the body's rows
    inv_diag[touched] *= 0.75
    changed = np.zeros(b.count, dtype=np.bool_)
    changed[target] = True
    repack_changed_rows(s, r.row_body, r.row_J, B, inv_diag, b.body_inv_mass, changed, C)
    np.testing.assert_array_equal(C[~touched], old[~touched])
    np.testing.assert_array_equal(C[touched], naive_pack(r.row_body[:s], r.row_J[:s], B, inv_diag,
                                                         b.body_inv_mass)[touched])
    assert touched.any() and not np.array_equal(C[touched], old[touched])


@pytest.mark.parametrize("name", SCENES)
@pytest.mark.parametrize("active_set", [True, False])
def test_block_sweep_pair_is_block_sweep_with_bit_for_bit(name, active_set):
    """The manifold block sweep (the pgs defaults' sweep) on the compact rows against the same on J and
    B, and the warm start with them, from velocities far from the solution (negative block impulses:
    the active-set passes and the scalar fallback are taken)."""
    w, r, b, s = _rows_of(name)
    c = w.contact_store
    assert 3 * c.count == s
    starts = manifold_starts_of(c.count, c.contact_key)
    manifolds = starts.shape[0] - 1
    assert np.any(np.diff(starts) >= 2)
    C = np.empty((s, PAIR_COLUMNS))
    pack_pair_rows(s, r.row_body, r.row_J, r.row_B, r.row_inv_diag, b.body_inv_mass, C)
    rng = np.random.default_rng(7)
    n = b.count
    v0 = rng.normal(scale=0.5, size=(n, 3)), rng.normal(scale=0.5, size=(n, 3))
    lam0 = r.row_lambda[:s] * rng.uniform(0.0, 2.0, s)
    ref = [lam0.copy(), v0[0].copy(), v0[1].copy()]
    new = [lam0.copy(), v0[0].copy(), v0[1].copy()]
    warm_start(s, r.row_body, r.row_B, ref[0], ref[1], ref[2])
    warm_start_pairs(s, r.row_body, C, new[0], new[1], new[2])
    K, W, vec, ind = block_scratch()
    block_K, block_L = np.empty((manifolds, 4, 4)), np.empty((manifolds, 4, 4))
    block_scale = np.zeros(manifolds)
    manifold_blocks(starts, manifolds, r.row_body, C, np.zeros(0, dtype=np.bool_), block_K, block_L, block_scale)
    for _ in range(6):
        dv_ref = block_sweep_with(starts, manifolds, s, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias,
                                  r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group, *ref, active_set,
                                  K, W, vec, ind)
        dv_new = block_sweep_pair(starts, manifolds, s, r.row_body, C, r.row_bias, r.row_lo, r.row_hi, r.row_link,
                                  r.row_mu, *new, active_set, block_K, block_L, block_scale, W, vec, ind)
        assert dv_new == dv_ref and dv_ref > 0.0
        for a, x in zip(ref, new):
            np.testing.assert_array_equal(a, x)


def _catto_run(record_merit, steps=120):
    """The catto preset (one solve of 10 sweeps + 2 relax sweeps per step) on the mixed world: without
    ``record_merit`` the solve and relax sweeps run on the compact rows (``solve_pgs_pairs``), with it
    on J and B (``solve_pgs``, which records theta after each sweep and changes nothing else)."""
    w = _mixed_world()
    w.settings.update(**w.settings.preset("catto"), record_merit=record_merit)
    for _ in range(steps):
        w.step(1 / 60)
    return w.state_hash(), w.counters["iterations"], w.counters["merit"]


def test_catto_step_on_compact_rows_is_the_step_on_j_and_b_bit_for_bit():
    assert _catto_run(False) == _catto_run(True)
