"""Erleben 000 §3-3.2 (Figs. 5-7, eq. 39-41) on the boxed LCP of a scene's first step, with the NumPy
splitting solvers of benchmarks/lcp_splitting.py: the fast versions of the paper-000 rows that
``python benchmarks/papers.py --papers 000 --rows splitting`` reports on the taller stacks, the ball grid
and the wall (issue 21)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import lcp_splitting as ls  # noqa: E402
from benchmarks.papers import cfm_runs, first_step_lcp  # noqa: E402


@pytest.fixture(scope="module")
def stack():
    return first_step_lcp("box_stack25", {"count": 6})


@pytest.fixture(scope="module")
def grid():
    return first_step_lcp("ball_grid125", {"n": 3})


def ke(P, lam):
    return ls.kinetic_energy(P["vp"] + P["B"].T @ lam, P["mass"], P["inertia"])


def test_fig5_gs_merit_converges_linearly_each_configuration_at_its_own_rate(stack, grid):
    # a fast drop over the first sweeps, then a straight line in log theta (the stack's slow mode
    # dominates after ~100 sweeps: over sweeps 50-300 of the 6-box stack R^2 is only 0.5)
    rates = []
    for P in (stack, grid):
        p = P["lcp"]
        _, th = ls.solve(p, "gs", 1000, stop=1e-28 * ls.merit(p, np.zeros(p.n)))
        assert th[-1] < 1e-5 * th[0]
        rate, r2 = ls.linear_rate(th, skip=0.5)     # the asymptotic part
        assert r2 > 0.999 and rate < 1.0
        rates.append(rate)
    assert rates[1] < 0.8 and rates[0] > 0.99       # each configuration at its own rate


def test_jacobi_converges_terribly_against_gauss_seidel(stack):
    p = stack["lcp"]
    _, gs = ls.solve(p, "gs", 60)
    _, j1 = ls.solve(p, "jacobi", 60)
    _, j2 = ls.solve(p, "jacobi", 60, omega=0.2)    # tumble's jacobi relaxation
    assert not np.isfinite(j1[-1]) or j1[-1] > 1e3 * j1[0]   # omega 1 diverges on a stack (8 points per box)
    assert j2[-1] > 10 * gs[-1]


def test_diagonal_scaling_only_displaces_the_merit(stack):
    # eq. 39-40: the GS iterates on C A C are C^-1 times the plain ones; theta moves, its slope does not
    p = stack["lcp"]
    ps, c = p.scaled()
    lam, th = ls.solve(p, "gs", 80)
    lam_s, th_s = ls.solve(ps, "gs", 80)
    assert np.allclose(c * lam_s, lam, rtol=1e-8, atol=1e-10 * np.abs(lam).max())
    assert not np.allclose(th, th_s)
    r0, r1 = ls.linear_rate(th, skip=0.5)[0], ls.linear_rate(th_s, skip=0.5)[0]
    assert abs(r1 - r0) < 0.01


def test_sor_cannot_gain_energy_on_a_resting_stack_but_overshoots_a_push_out(stack, grid):
    # zeta = 0: KE(lambda) = KE_pred + lambda^T b + lambda^T A lambda / 2, which every projected SOR row step
    # with 0 < omega < 2 decreases; the ball grid's overlaps (push-out targets) let omega 1.8 overshoot
    p = stack["lcp"]
    kes = []
    ls.solve(p, "gs", 40, omega=1.8, on_sweep=lambda lam: kes.append(ke(stack, lam)))
    assert np.all(np.diff(kes) <= 1e-9 * kes[0]) and kes[0] <= ke(stack, np.zeros(p.n))
    q = grid["lcp"]
    ref, th = ls.solve(q, "gs", 300, stop=1e-26 * ls.merit(q, np.zeros(q.n)))
    assert th[-1] <= 1e-20 * th[0]
    kes = []
    ls.solve(q, "gs", 40, omega=1.8, on_sweep=lambda lam: kes.append(ke(grid, lam)))
    assert max(kes) > 1.1 * max(ke(grid, ref), ke(grid, np.zeros(q.n)))


def test_fig6_7_constraint_force_mixing_damps_the_solution(stack):
    p = stack["lcp"]
    amax = np.diag(p.A).max()
    norms, sink = [], []
    for g in (0.0, 1e-3, 1e-2):
        pd = p.damped(g * amax)
        lam, _ = ls.solve(pd, "gs", 2000, stop=1e-24 * ls.merit(pd, np.zeros(p.n)))
        w = p.A @ lam + p.b
        norms.append(np.linalg.norm(lam))
        sink.append(-np.min(np.where((p.link < 0) & (lam > 0), w, 0.0)))
    assert norms[0] > norms[1] > norms[2]          # gamma |lambda|^2 in the QP (eq. 42) shrinks the impulses
    assert sink[2] > 10 * sink[0] and sink[2] > 1e-3   # ... and leaves the loaded contacts approaching [m/s]


def test_fig6_constraint_force_mixing_steepens_the_convergence(stack):
    # Fig. 6 with gamma = 1e-2 max diag(A): theta of the damped problem falls 1e6-fold in a fraction of the
    # sweeps the undamped one needs (the paper-000 rows: 6-box stack 1032 -> 270 sweeps)
    p = stack["lcp"]
    amax = np.diag(p.A).max()
    needed = []
    for g in (0.0, 1e-2):
        pd = p.damped(g * amax)
        _, th = ls.solve(pd, "gs", 2000, stop=1e-6 * ls.merit(pd, np.zeros(p.n)))
        needed.append(len(th) - 1)
    assert needed[1] < 0.5 * needed[0]


def test_fig7_cfm_in_a_run_deepens_the_penetration():
    runs = {(it, g): r for it, g, r, _ in cfm_runs(True, 0.064)}   # 10-box stack, 1 s
    assert runs[(100, 1e-2)]["max_penetration"] > 2 * runs[(100, 0.0)]["max_penetration"]
