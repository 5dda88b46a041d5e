"""benchmarks/lcp_splitting.py (the NumPy splitting solvers of the paper-000 rows, issue 21) against
closed forms: Jacobi solves a diagonal system in one sweep (000 §3.2), a 2x2 LCP with a known
solution and GS's known rate, SOR with omega 1 is GS, the friction coupling of eq. 29, diagonal
scaling (eq. 39-40) leaves the GS iterates unchanged, constraint force mixing (eq. 41) in 1-D."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import lcp_splitting as ls  # noqa: E402

INF = np.inf


def lcp(A, b, lo=None, hi=None, link=None, mu=None):
    n = len(b)
    return ls.BoxedLCP(np.array(A, float), np.array(b, float),
                       np.zeros(n) if lo is None else np.array(lo, float),
                       np.full(n, INF) if hi is None else np.array(hi, float),
                       -np.ones(n, int) if link is None else np.array(link),
                       np.zeros(n) if mu is None else np.array(mu, float))


def test_jacobi_solves_a_diagonal_system_in_one_sweep():
    # 000 §3.2: "Jacobi on a diagonal system ... T is the identity ... the solution in a single iteration"
    p = lcp(np.diag([2.0, 0.5, 4.0]), [-4.0, 1.0, -2.0], lo=[0, 0, -INF], hi=[INF, INF, 0.25])
    lam, th = ls.solve(p, "jacobi", 1)
    assert np.allclose(lam, [2.0, 0.0, 0.25])          # -b/a projected on [lo, hi]
    assert th[0] > 0 and th[1] == 0.0


def test_gs_on_a_2x2_lcp_reaches_the_known_solution_at_the_known_rate():
    # A = [[2, 1], [1, 2]], b = (-3, -3): lambda = (1, 1) (both rows active). The GS iteration matrix
    # T = -(D + L)^-1 U has eigenvalues 0 and a12 a21 / (a11 a22) = 1/4: the error shrinks 4x per
    # sweep, theta (quadratic in the error) 16x.
    p = lcp([[2, 1], [1, 2]], [-3, -3])
    lam, th = ls.solve(p, "gs", 30)
    assert np.allclose(lam, [1.0, 1.0], atol=1e-12)
    rate, r2 = ls.linear_rate(th)
    assert rate == pytest.approx(1 / 16, rel=1e-3) and r2 > 0.999


def test_gs_finds_the_active_bound_of_a_2x2_lcp():
    # b = (-3, 1): the unconstrained solution (7/3, -5/3) is infeasible; the LCP's is lambda = (3/2, 0)
    # with w = (0, 5/2) >= 0
    p = lcp([[2, 1], [1, 2]], [-3, 1])
    lam, th = ls.solve(p, "gs", 5)
    assert np.allclose(lam, [1.5, 0.0])
    assert th[-1] == 0.0
    assert ls.merit(p, np.array([1.0, 0.0])) > 0


def test_sor_with_omega_one_is_gauss_seidel():
    rng = np.random.default_rng(3)
    J = rng.normal(size=(6, 4))
    p = lcp(J @ J.T + 0.1 * np.eye(6), rng.normal(size=6))
    a, ta = ls.solve(p, "gs", 20)
    b, tb = ls.solve(p, "gs", 20, omega=1.0)
    assert np.array_equal(a, b) and np.array_equal(ta, tb)
    c, tc = ls.solve(p, "gs", 20, omega=1.5)
    assert np.allclose(a, c, atol=1e-5)                 # the same solution ...
    assert not np.allclose(ls.solve(p, "gs", 2)[0], ls.solve(p, "gs", 2, omega=1.5)[0])  # ... other steps


def test_friction_bound_follows_the_normal_impulse():
    # a 1 kg point mass hitting a plane at 1 m/s while sliding at 2 m/s, mu 0.5: A = I, lambda_n = 1,
    # the friction rows clamp at +-mu lambda_n (000 eq. 29): lambda_t = -0.5, lambda_s = 0.
    p = lcp(np.eye(3), [-1.0, 2.0, 0.0], lo=[0, -INF, -INF], hi=[INF, INF, INF], link=[-1, 0, 0],
            mu=[0, 0.5, 0.5])
    lam, th = ls.solve(p, "gs", 1)                     # the normal row comes first: one sweep
    assert np.allclose(lam, [1.0, -0.5, 0.0]) and th[1] == 0.0
    lam, th = ls.solve(p, "jacobi", 1)                 # bounds from the sweep's start (lambda_n = 0)
    assert np.allclose(lam, [1.0, 0.0, 0.0]) and th[1] > 0
    lam, th = ls.solve(p, "jacobi", 2)
    assert np.allclose(lam, [1.0, -0.5, 0.0]) and th[2] == 0.0


def test_diagonal_scaling_leaves_the_gs_and_jacobi_iterates_unchanged():
    # eq. 39-40 with C^2 = 1/diag(A): GS divides each row's residual by its diagonal, so on C A C it
    # takes the same steps: C lambda' = lambda (the paper's "small displacement" is theta's units)
    rng = np.random.default_rng(7)
    J = rng.normal(size=(9, 5)) * rng.uniform(0.1, 10, size=(9, 1))
    link = np.array([-1, 0, 0, -1, 3, 3, -1, 6, 6])
    lo = np.where(link < 0, 0.0, -INF)
    p = lcp(J @ J.T, rng.normal(size=9), lo=lo, hi=np.full(9, INF), link=link, mu=np.where(link < 0, 0, 0.4))
    ps, c = p.scaled()
    assert np.allclose(np.diag(ps.A), 1.0)
    for method in ("gs", "jacobi"):
        om = 1.0 if method == "gs" else 0.3
        lam, _ = ls.solve(p, method, 25, omega=om)
        lam_s, th_s = ls.solve(ps, method, 25, omega=om)
        assert np.allclose(c * lam_s, lam, rtol=1e-9, atol=1e-12 * np.abs(lam).max())


def test_constraint_force_mixing_in_one_dimension():
    # A' = A + gamma I (eq. 41): the 1-D solution -b / (a + gamma), one GS sweep; the undamped merit at it
    # is the damping's residual
    p = lcp([[2.0]], [-4.0])
    pd = p.damped(0.5)
    lam, th = ls.solve(pd, "gs", 1)
    assert lam[0] == pytest.approx(4.0 / 2.5) and th[1] == 0.0
    _, th_u = ls.solve(pd, "gs", 1, measure=p)
    assert th_u[1] == pytest.approx(0.5 * (2.0 * 1.6 - 4.0) ** 2)


def test_jacobi_with_omega_one_fails_where_the_bound_is_below_one():
    # three rows on one body (A = ones + 0.1 I): D^-1 A has eigenvalue 3.1 / 1.1, so Jacobi with
    # omega 1 diverges without bounds (damped Jacobi needs omega < 2 / rho(D^-1 A)) and, projected on
    # lambda >= 0, flips between all rows pushing and none; omega 0.5 < 2.2 / 3.1 and GS converge
    A = np.ones((3, 3)) + 0.1 * np.eye(3)
    free = lcp(A, [-1.0, -1.0, -1.0], lo=[-INF] * 3)
    _, th = ls.solve(free, "jacobi", 200)
    assert not np.isfinite(th[-1]) or th[-1] > 1e100
    p = lcp(A, [-1.0, -1.0, -1.0])
    _, th = ls.solve(p, "jacobi", 200)
    assert th[-1] > 0.1 * th[0]
    _, th = ls.solve(p, "jacobi", 200, omega=0.5)
    assert th[-1] < 1e-10 * th[0]
    _, th = ls.solve(p, "gs", 200)
    assert th[-1] < 1e-10 * th[0]


def test_linear_rate_of_a_geometric_sequence():
    th = 3.0 * 0.9 ** np.arange(100)
    r, r2 = ls.linear_rate(th)
    assert r == pytest.approx(0.9) and r2 == pytest.approx(1.0)


def test_kinetic_energy_closed_form():
    v = np.array([1.0, 0, 0, 0, 0, 2.0, 0, 3.0, 0, 0, 0, 0])
    mass = np.array([2.0, 4.0])
    inertia = np.array([np.diag([1.0, 1.0, 0.5]), np.eye(3)])
    assert ls.kinetic_energy(v, mass, inertia) == pytest.approx(0.5 * 2 * 1 + 0.5 * 0.5 * 4 + 0.5 * 4 * 9)


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="method"):
        ls.solve(lcp([[1.0]], [1.0]), "newton", 1)


def qp_objective_per_sweep(p, omega, sweeps=30):
    fs = []
    ls.solve(p, "gs", sweeps, omega=omega, on_sweep=lambda lam: fs.append(lam @ p.b + 0.5 * lam @ p.A @ lam))
    return np.array(fs)


def test_projected_sor_with_fixed_bounds_never_raises_the_qp_objective_but_the_friction_coupling_can():
    # with zeta = 0 the kinetic energy after the solve is KE_pred + f(lambda), f = lambda^T b + lambda^T A
    # lambda / 2. With fixed bounds a projected row step of 0 < omega < 2 changes f by
    # delta w_i + A_ii delta^2 / 2 < 0; with friction bounds +-mu lambda_n (eq. 29) an overrelaxed normal
    # impulse that falls back leaves its friction rows outside their box, and clamping them raises f:
    # SOR's energy gain within one solve
    rng = np.random.default_rng(11)
    J = rng.normal(size=(9, 6))
    A, b = J @ J.T, rng.normal(size=9)
    fixed = lcp(A, b, lo=[0, -0.1, -0.1] * 3, hi=[INF, 0.1, 0.1] * 3)
    for omega in (1.0, 1.5, 1.9):
        fs = qp_objective_per_sweep(fixed, omega)
        assert fs[0] <= 0.0 and np.all(np.diff(fs) <= 1e-12)
    link = np.array([-1, 0, 0, -1, 3, 3, -1, 6, 6])
    coupled = lcp(A, b, lo=np.where(link < 0, 0.0, -INF), hi=np.full(9, INF), link=link,
                  mu=np.where(link < 0, 0, 0.5))
    assert np.all(np.diff(qp_objective_per_sweep(coupled, 1.0)) <= 1e-12)
    assert np.diff(qp_objective_per_sweep(coupled, 1.9)).max() > 1e-3
