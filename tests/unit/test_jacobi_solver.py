"""The jacobi solver (projected Jacobi, Erleben 000 §3): its kernel against the dense NumPy oracle
(tests/naive/jacobi.py), its settings, and the plug-in (World, scenes, CLI, recordings, joints)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tumble as tb
from tests.naive.jacobi import dense_jacobi, dense_row_relaxation
from tests.naive.pgs import dense_from_rows, dense_merit
from tests.unit.test_solver_kernels import _random_problem
from tumble._core.solvers import registry
from tumble._core.solvers.jacobi.kernels import jacobi_sweep, row_relaxation, solve_jacobi
from tumble.errors import SettingsError

SRC = Path(__file__).resolve().parents[2] / "src"


def _solve(P, lam0, iterations, omega, cfm=None, history=None, bound=0.0):
    s = P["row_body"].shape[0]
    v_lin = np.ascontiguousarray(P["u"][:, :3])
    v_ang = np.ascontiguousarray(P["u"][:, 3:])
    lam = lam0.copy()
    done, theta = solve_jacobi(s, P["row_body"], P["row_J"], P["row_B"], P["inv_diag"], P["zeta"], P["lo"], P["hi"],
                               P["link"], P["mu"], np.zeros(s) if cfm is None else cfm, lam, v_lin, v_ang,
                               iterations, omega, bound, P["u"].shape[0], 0.0,
                               np.zeros(0) if history is None else history)
    return done, theta, lam, np.hstack([v_lin, v_ang]).reshape(-1)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("iterations", [1, 4, 25])
@pytest.mark.parametrize("omega", [1.0, 0.5, 0.2])
def test_jacobi_matches_dense_oracle(seed, iterations, omega):
    rng = np.random.default_rng(seed)
    P = _random_problem(rng)
    s = P["row_body"].shape[0]
    lam0 = np.abs(rng.normal(size=s)) * 0.1
    lam0[P["link"] >= 0] = rng.normal(size=int((P["link"] >= 0).sum())) * 0.01
    J = dense_from_rows(P["row_body"], P["row_J"], P["u"].shape[0])
    lam_ref, u_ref = dense_jacobi(J, P["Minv"], P["u"].reshape(-1), P["zeta"], P["lo"], P["hi"], P["link"], P["mu"],
                                  lam0, iterations, omega)
    done, theta, lam, u = _solve(P, lam0, iterations, omega)
    assert done == iterations
    # 1e-12 of the problem's scale (omega = 1 over-relaxes and grows the impulses to ~1e3)
    np.testing.assert_allclose(lam, lam_ref, rtol=0, atol=1e-12 * max(1.0, np.abs(lam_ref).max()))
    np.testing.assert_allclose(u, u_ref, rtol=0, atol=1e-12 * max(1.0, np.abs(u_ref).max()))
    theta_ref = dense_merit(J, u_ref, P["zeta"], lam_ref, P["lo"], P["hi"], P["link"], P["mu"], P["diag"])
    assert theta == pytest.approx(theta_ref, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("seed", range(3))
def test_jacobi_with_constraint_force_mixing_matches_oracle(seed):
    rng = np.random.default_rng(50 + seed)
    P = _random_problem(rng)
    s = P["row_body"].shape[0]
    cfm = rng.uniform(0.0, 0.5, s)
    lam0 = np.zeros(s)
    J = dense_from_rows(P["row_body"], P["row_J"], P["u"].shape[0])
    lam_ref, u_ref = dense_jacobi(J, P["Minv"], P["u"].reshape(-1), P["zeta"], P["lo"], P["hi"], P["link"], P["mu"],
                                  lam0, 7, 0.4, cfm)
    _, _, lam, u = _solve(P, lam0, 7, 0.4, cfm)
    np.testing.assert_allclose(lam, lam_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(u, u_ref, rtol=0, atol=1e-12)


def test_one_sweep_uses_the_velocities_at_its_start():
    """Two rows on one body, both stopping the same approach: Gauss-Seidel's second row sees the
    first one's work and does nothing, Jacobi's both act (each pushes the full correction)."""
    row_body = np.array([[-1, 0], [-1, 0]], dtype=np.int64)
    row_J = np.zeros((2, 2, 6))
    row_J[:, 1, 2] = 1.0          # both rows along +z on body 0, mass 1
    row_B = row_J.copy()
    inv_diag = np.ones(2)
    lam = np.zeros(2)
    v_lin = np.array([[0.0, 0.0, -1.0]])
    v_ang = np.zeros((1, 3))
    delta = np.zeros(2)
    jacobi_sweep(2, row_body, row_J, row_B, inv_diag, np.zeros(2), np.zeros(2), np.full(2, np.inf),
                 -np.ones(2, dtype=np.int64), np.zeros(2), np.zeros(2), lam, v_lin, v_ang, np.ones(2), delta)
    np.testing.assert_array_equal(lam, [1.0, 1.0])
    assert v_lin[0, 2] == 1.0     # overshoot: the reason for relaxation


def test_merit_history_is_recorded_and_falls():
    rng = np.random.default_rng(42)
    P = _random_problem(rng, n_bodies=8, n_contacts=20)
    s = P["row_body"].shape[0]
    hist = np.zeros(200)
    _, theta, _, _ = _solve(P, np.zeros(s), 200, 0.2, history=hist)
    assert hist[-1] < 1e-3 * hist[0]
    assert hist[-1] == theta
    # with the descent guard (here a sweep raises f where the friction bounds follow the normal
    # impulses, and the cap takes over) the merit falls as well
    hist2 = np.zeros(200)
    _, theta2, _, _ = _solve(P, np.zeros(s), 200, 0.2, history=hist2, bound=1.8)
    assert hist2[-1] < 1e-3 * hist2[0]


# ------------------------------------------------------------------------------------------ relaxation bound
def _relaxation(P, omega, bound):
    s = P["row_body"].shape[0]
    out = np.empty(s)
    row_relaxation(s, P["row_body"], P["row_J"], P["row_B"], P["inv_diag"], P["u"].shape[0], omega, bound, out)
    return out


def _objective(J, Minv, u, zeta, lam):
    """f(lambda) = 1/2 lambda^T A lambda - lambda^T (zeta - J u): KE(V) - KE(u) - zeta^T lambda."""
    A = J @ Minv @ J.T
    return 0.5 * lam @ A @ lam - lam @ (zeta - J @ u)


@pytest.mark.parametrize("seed", range(8))
def test_row_relaxation_bound_matches_exact_eigenvalues(seed):
    """D_rr = sum_b lam_b g_rb from the kernel's tr(P^8)^(1/8) lies between the exact per-body bound
    (dense eigenvalues, tests/naive/jacobi.py) and 6^(1/8) = 1.25 times it, and D - A is PSD."""
    rng = np.random.default_rng(200 + seed)
    P = _random_problem(rng, n_bodies=4, n_contacts=int(rng.integers(1, 25)))
    nb = P["u"].shape[0]
    J = dense_from_rows(P["row_body"], P["row_J"], nb)
    om_ref, D_ref = dense_row_relaxation(J, P["Minv"], nb, 1e300, 1.0)
    D = P["diag"] / _relaxation(P, 1e300, 1.0)          # omega_r = A_rr / D_rr when the cap binds everywhere
    assert np.all(D >= D_ref * (1 - 1e-9)) and np.all(D <= 6 ** 0.125 * D_ref * (1 + 1e-9))
    A = J @ P["Minv"] @ J.T
    assert np.linalg.eigvalsh(np.diag(D) - A).min() >= -1e-9 * D.max()
    # with omega 0.3 (bodies whose tr(P^2)^(1/2) <= 1.5 / 0.3 keep that looser bound): omega caps, the cap is
    # a valid one (omega_r D_ref_rr <= 1.5 A_rr), and no tighter than the 8th-root bound's
    om = _relaxation(P, 0.3, 1.5)
    assert np.all(om <= 0.3) and np.all(om * D_ref <= 1.5 * P["diag"] * (1 + 1e-9))
    assert np.all(om <= np.minimum(0.3, 1.5 * P["diag"] / D) * (1 + 1e-12))
    np.testing.assert_array_equal(_relaxation(P, 0.3, 0.0), np.full(len(om), 0.3))


@pytest.mark.parametrize("seed", range(6))
def test_bounded_sweeps_descend_where_plain_jacobi_overshoots(seed):
    """Issue 17: many rows on few bodies (40 contact points on 5 bodies), omega 1. With the guard (bound 1.9:
    a sweep that raises the objective f = KE(V) - KE(u) - zeta^T lambda is undone and the solve goes on
    with the rows' relaxation capped, the projected-gradient descent lemma for fixed bounds) 30 sweeps
    from lambda = 0 end below f(0) = 0; plain Jacobi (bound 0) grows f 1000-fold."""
    rng = np.random.default_rng(300 + seed)
    P = _random_problem(rng, n_bodies=5, n_contacts=40)
    s = P["row_body"].shape[0]
    fric = P["link"] >= 0
    P["lo"][fric], P["hi"][fric] = -0.05, 0.05          # a fixed box: the lemma's setting
    P["link"][:] = -1
    nb = P["u"].shape[0]
    J = dense_from_rows(P["row_body"], P["row_J"], nb)
    u0 = P["u"].reshape(-1)
    _, _, lam1, u1 = _solve(P, np.zeros(s), 1, 1.0)
    f1 = _objective(J, P["Minv"], u0, P["zeta"], lam1)
    _, _, lam, u = _solve(P, np.zeros(s), 30, 1.0, bound=1.9)
    np.testing.assert_allclose(u, u0 + P["Minv"] @ J.T @ lam, atol=1e-9 * max(1.0, np.abs(u).max()))
    assert _objective(J, P["Minv"], u0, P["zeta"], lam) <= 0.0
    _, _, lam, _ = _solve(P, np.zeros(s), 30, 1.0)
    assert _objective(J, P["Minv"], u0, P["zeta"], lam) > 1e3 * abs(f1)


@pytest.mark.parametrize("seed", range(4))
def test_guard_leaves_descending_sweeps_bit_for_bit(seed):
    """Without friction links (fixed bounds) and at omega 0.2 plain Jacobi descends on these problems:
    the guarded solve (bound 1.8) is then the plain one (bound 0), bit for bit."""
    rng = np.random.default_rng(400 + seed)
    P = _random_problem(rng)
    fric = P["link"] >= 0
    P["lo"][fric], P["hi"][fric] = -0.05, 0.05
    P["link"][:] = -1
    s = P["row_body"].shape[0]
    _, _, lam0, u0 = _solve(P, np.zeros(s), 25, 0.2)
    _, _, lam1, u1 = _solve(P, np.zeros(s), 25, 0.2, bound=1.8)
    np.testing.assert_array_equal(lam1, lam0)
    np.testing.assert_array_equal(u1, u0)


# ------------------------------------------------------------------------------------------ settings
def test_settings_and_capabilities():
    cls = registry.settings_class("jacobi")
    assert "relaxation" in cls.field_names() and "iterations" in cls.field_names()
    assert not any(n.startswith("joint_") for n in cls.field_names())
    assert registry.capabilities("jacobi").joints is False
    assert "jacobi" in registry.names()
    for bad in (0.0, -0.1, 1.5, float("nan"), True, "half"):
        with pytest.raises(SettingsError, match="relaxation"):
            tb.World(solver="jacobi", relaxation=bad)
    for bad in (-0.1, 2.0, float("inf"), float("nan"), True, "x"):
        with pytest.raises(SettingsError, match="relaxation_bound"):
            tb.World(solver="jacobi", relaxation_bound=bad)
    assert tb.World(solver="jacobi", relaxation_bound=0.0).settings.relaxation_bound == 0.0
    w = tb.World(solver="jacobi", relaxation=1.0)
    assert w.settings.relaxation == 1.0
    assert type(w.settings) is cls and w.capabilities == registry.capabilities("jacobi")
    listed = {d["name"]: d for d in tb.solvers()}
    assert listed["jacobi"]["joints"] is False and listed["jacobi"]["settings"] is cls


# ------------------------------------------------------------------------------------------ plug-in
def test_world_steps_and_reports_counters():
    w = tb.World(gravity=(0, 0, -9.81), solver="jacobi", record_merit=True)
    w.add_body(tb.Plane(normal=(0, 0, 1)), fixed=True)
    w.add_body(tb.Box(half_extents=(0.5, 0.5, 0.5)), position=(0, 0, 0.5), mass=1.0)
    w.step(1 / 60)
    c = w.counters
    assert c["contacts"] == 4 and c["rows"] == 12 and c["iterations"] == w.settings.iterations
    assert np.isfinite(c["merit"]) and len(w.merit_history) == w.settings.iterations


def test_pyramid20_steps():
    w = tb.scenes.build("pyramid20", solver="jacobi")
    for _ in range(5):
        w.step()
    assert w.counters["contacts"] > 0 and np.isfinite(w.positions).all()


def test_add_joint_raises_joint_error():
    w = tb.World(solver="jacobi")
    a = w.add_body(tb.Box(half_extents=(0.1, 0.1, 0.1)), position=(0, 0, 1), mass=1.0)
    b = w.add_body(tb.Box(half_extents=(0.1, 0.1, 0.1)), position=(0, 0, 1.5), mass=1.0)
    with pytest.raises(tb.JointError, match="jacobi"):
        w.add_joint(tb.Ball(a, b, anchor=(0, 0, 1.25)))


def test_recording_loads(tmp_path):
    w = tb.scenes.build("stack10", solver="jacobi", count=3)
    path = tmp_path / "jacobi.npz"
    w.run(0.2, record=path)
    rec = tb.Recording.load(path)
    assert rec.solver == "jacobi"
    assert rec.meta["settings"]["relaxation"] == w.settings.relaxation


def test_cli_runs_stack10(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "tumble.cli", "run", "stack10", "--solver", "jacobi", "--seconds", "0.5",
                        "--json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["solver"] == "jacobi"
