"""PGS, merit and contact-cache kernels against the dense pure-NumPy oracles in tests/naive."""

import numpy as np
import pytest

from tests.naive.pgs import dense_block_gs, dense_from_rows, dense_merit, dense_pgs, naive_cache_match
from tumble._core.contact.cache import carry_matched, match_cache
from tumble._core.merit import ncp_merit
from tumble._core.solvers.pgs.kernels import solve_pgs


def _random_problem(rng, n_bodies=5, n_contacts=8, fixed=(0,)):
    """Random contact-like rows: normal + 2 friction rows per point, random inertia."""
    masses = rng.uniform(0.5, 5.0, n_bodies)
    Iinv = []
    for _ in range(n_bodies):
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        Iinv.append(Q @ np.diag(rng.uniform(0.2, 3.0, 3)) @ Q.T)
    s = 3 * n_contacts
    row_body = np.zeros((s, 2), dtype=np.int64)
    row_J = np.zeros((s, 2, 6))
    row_B = np.zeros((s, 2, 6))
    lo = np.zeros(s)
    hi = np.full(s, np.inf)
    link = -np.ones(s, dtype=np.int64)
    mu = np.zeros(s)
    zeta = np.zeros(s)
    for c in range(n_contacts):
        a, b = rng.choice(n_bodies, 2, replace=False)
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        t1 = np.cross(n, [1.0, 0, 0]) if abs(n[0]) < 0.9 else np.cross(n, [0, 1.0, 0])
        t1 /= np.linalg.norm(t1)
        t2 = np.cross(n, t1)
        ra, rb = rng.normal(scale=0.5, size=3), rng.normal(scale=0.5, size=3)
        for j, d in enumerate((n, t1, t2)):
            r = 3 * c + j
            row_body[r] = (-1 if a in fixed else a, -1 if b in fixed else b)
            row_J[r, 0] = np.r_[-d, -np.cross(ra, d)]
            row_J[r, 1] = np.r_[d, np.cross(rb, d)]
            for side, body in enumerate((a, b)):
                if body in fixed:
                    continue
                row_B[r, side, :3] = row_J[r, side, :3] / masses[body]
                row_B[r, side, 3:] = Iinv[body] @ row_J[r, side, 3:]
            if j == 0:
                zeta[r] = rng.uniform(0.0, 0.3)
            else:
                link[r] = 3 * c
                mu[r] = 0.5
                lo[r], hi[r] = -np.inf, np.inf
    diag = np.einsum("rsk,rsk->r", row_J, row_B)
    inv_diag = np.where(diag > 0, 1.0 / np.maximum(diag, 1e-300), 0.0)
    Minv = np.zeros((6 * n_bodies, 6 * n_bodies))
    for i in range(n_bodies):
        if i in fixed:
            continue
        Minv[6 * i: 6 * i + 3, 6 * i: 6 * i + 3] = np.eye(3) / masses[i]
        Minv[6 * i + 3: 6 * i + 6, 6 * i + 3: 6 * i + 6] = Iinv[i]
    u = rng.normal(size=(n_bodies, 6))
    for i in fixed:
        u[i] = 0.0
    return dict(row_body=row_body, row_J=row_J, row_B=row_B, inv_diag=inv_diag, zeta=zeta, lo=lo, hi=hi,
                link=link, mu=mu, Minv=Minv, u=u, diag=diag)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("iterations", [1, 4, 25])
def test_pgs_matches_dense_gauss_seidel(seed, iterations):
    rng = np.random.default_rng(seed)
    P = _random_problem(rng)
    s = P["row_body"].shape[0]
    lam0 = np.abs(rng.normal(size=s)) * 0.1
    lam0[P["link"] >= 0] = 0.0
    J = dense_from_rows(P["row_body"], P["row_J"], P["u"].shape[0])
    # the kernel starts from lam0 with V = V_pred + B lam0 (warm start), the oracle from lam0 directly
    lam_ref, u_ref = dense_pgs(J, P["Minv"], P["u"].reshape(-1), P["zeta"], P["lo"], P["hi"], P["link"], P["mu"],
                               lam0, iterations)
    v_lin = np.ascontiguousarray(P["u"][:, :3])
    v_ang = np.ascontiguousarray(P["u"][:, 3:])
    lam = lam0.copy()
    done, theta = solve_pgs(s, P["row_body"], P["row_J"], P["row_B"], P["inv_diag"], P["zeta"], P["lo"], P["hi"],
                            P["link"], P["mu"], np.zeros(s), np.ones(s, dtype=np.int64), lam, v_lin, v_ang,
                            iterations, 0.0,
                            np.zeros(0))
    assert done == iterations
    np.testing.assert_allclose(lam, lam_ref, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.hstack([v_lin, v_ang]).reshape(-1), u_ref, rtol=1e-9, atol=1e-10)
    theta_ref = dense_merit(J, u_ref, P["zeta"], lam_ref, P["lo"], P["hi"], P["link"], P["mu"], P["diag"])
    assert theta == pytest.approx(theta_ref, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("iterations", [1, 3])
def test_grouped_rows_match_dense_block_gauss_seidel(seed, iterations):
    """Joint-like rows (unbounded, groups of three on one body pair, some with constraint force
    mixing) solved by solve_group against the dense block Gauss-Seidel oracle."""
    rng = np.random.default_rng(100 + seed)
    P = _random_problem(rng)
    s = P["row_body"].shape[0]
    lo = np.full(s, -np.inf)
    hi = np.full(s, np.inf)
    link = -np.ones(s, dtype=np.int64)
    group = np.zeros(s, dtype=np.int64)
    group[0::3] = 3
    cfm = np.where(np.arange(s) % 6 < 3, 0.0, rng.uniform(0.0, 0.5, s))
    lam0 = rng.normal(size=s) * 0.1
    J = dense_from_rows(P["row_body"], P["row_J"], P["u"].shape[0])
    lam_ref, u_ref = dense_block_gs(J, P["Minv"], P["u"].reshape(-1), P["zeta"], cfm, lam0, 3, iterations)
    v_lin = np.ascontiguousarray(P["u"][:, :3])
    v_ang = np.ascontiguousarray(P["u"][:, 3:])
    lam = lam0.copy()
    solve_pgs(s, P["row_body"], P["row_J"], P["row_B"], P["inv_diag"], P["zeta"], lo, hi, link, P["mu"], cfm, group,
              lam, v_lin, v_ang, iterations, 0.0, np.zeros(0))
    np.testing.assert_allclose(lam, lam_ref, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(np.hstack([v_lin, v_ang]).reshape(-1), u_ref, rtol=1e-8, atol=1e-9)


def test_merit_decreases_and_history_is_recorded():
    rng = np.random.default_rng(42)
    P = _random_problem(rng, n_bodies=8, n_contacts=20)
    s = P["row_body"].shape[0]
    hist = np.zeros(60)
    lam = np.zeros(s)
    v_lin = np.ascontiguousarray(P["u"][:, :3])
    v_ang = np.ascontiguousarray(P["u"][:, 3:])
    solve_pgs(s, P["row_body"], P["row_J"], P["row_B"], P["inv_diag"], P["zeta"], P["lo"], P["hi"], P["link"],
              P["mu"], np.zeros(s), np.ones(s, dtype=np.int64), lam, v_lin, v_ang, 60, 0.0, hist)
    assert hist[-1] < 1e-3 * hist[0]
    # the merit at the end equals an independent evaluation
    assert hist[-1] == pytest.approx(ncp_merit(s, P["row_body"], P["row_J"], P["inv_diag"], P["zeta"], P["lo"],
                                               P["hi"], P["link"], P["mu"], lam, v_lin, v_ang))


def test_tolerance_stops_early():
    rng = np.random.default_rng(3)
    P = _random_problem(rng)
    s = P["row_body"].shape[0]
    lam = np.zeros(s)
    done, _ = solve_pgs(s, P["row_body"], P["row_J"], P["row_B"], P["inv_diag"], P["zeta"], P["lo"], P["hi"],
                        P["link"], P["mu"], np.zeros(s), np.ones(s, dtype=np.int64), lam, P["u"][:, :3].copy(),
                        P["u"][:, 3:].copy(), 500, 1e-6, np.zeros(0))
    assert done > 1
    assert done < 500


def test_cache_match_equals_dictionary_lookup():
    rng = np.random.default_rng(1)
    for _ in range(20):
        old_keys = np.sort(rng.integers(0, 30, size=40)).astype(np.int64)
        old_feat = rng.integers(0, 6, size=40).astype(np.int64)
        # make (key, feature) unique in the old cache, as the narrow phase guarantees within a manifold
        _, idx = np.unique(old_keys * 100 + old_feat, return_index=True)
        old_keys, old_feat = old_keys[np.sort(idx)], old_feat[np.sort(idx)]
        old_lam = rng.uniform(0, 1, size=len(old_keys))
        old_fr = rng.normal(size=(len(old_keys), 3))
        new_keys = np.sort(rng.integers(0, 30, size=35)).astype(np.int64)
        new_feat = rng.integers(0, 6, size=35).astype(np.int64)
        lam = np.zeros(35)
        fr = np.zeros((35, 3))
        warm = np.zeros(35, dtype=np.bool_)
        old_aux = rng.normal(size=(len(old_keys), 4))
        aux = np.full((35, 4), np.nan)
        match = np.full(35, -7, dtype=np.int64)
        hits = match_cache(35, new_keys, new_feat, lam, fr, match, warm, len(old_keys), old_keys, old_feat, old_lam,
                           old_fr, np.zeros((35, 3)), np.zeros((len(old_keys), 3)), 0.0)
        carry_matched(35, match, old_aux, aux)   # a solver's own per-contact values follow the matches
        ref = naive_cache_match(new_keys, new_feat, old_keys, old_feat, old_lam)
        np.testing.assert_array_equal(lam, ref)
        # every auxiliary column is matched exactly like the normal impulse
        for k in range(4):
            np.testing.assert_array_equal(aux[:, k], naive_cache_match(new_keys, new_feat, old_keys, old_feat,
                                                                       old_aux[:, k]))
        assert hits == int(warm.sum())
        assert hits == sum((int(k), int(f)) in set(zip(old_keys.tolist(), old_feat.tolist()))
                           for k, f in zip(new_keys, new_feat))
