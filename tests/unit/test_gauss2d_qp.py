"""gauss2d QP back ends: closed-form QPs, polish, determinism, bad settings, the stability LP."""

import numpy as np
import pytest
import scipy.sparse as sp

from tumble.errors import SettingsError
from tumble.gauss2d import QPSettings, solve_qp
from tumble.gauss2d.qp import solve_lp_feasible


def _projection_qp():
    """min |x - c|^2 s.t. x0 + x1 = 1, x0 >= 0.8, x2 >= 0: closed form x = (0.8, 0.2, 0) for c = (0, 1, -1),
    multipliers: equality 2 * (0.8 - 0) - y_in0 ... solved by hand below."""
    c = np.array([0.0, 1.0, -1.0])
    P = sp.identity(3, format="csc") * 2.0
    q = -2.0 * c
    A_eq = sp.csc_matrix([[1.0, 1.0, 0.0]])
    A_in = sp.csc_matrix([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    return P, q, A_eq, np.array([1.0]), A_in, np.array([0.8, 0.0])


@pytest.mark.parametrize("solver", ["clarabel", "osqp"])
@pytest.mark.parametrize("polish", [False, True])
def test_closed_form_projection(solver, polish):
    res = solve_qp(*_projection_qp(), QPSettings(solver=solver, polish=polish))
    # KKT by hand: 2 (x - c) = y_eq (1, 1, 0) + y_in0 (1, 0, 0) + y_in1 (0, 0, 1)
    # x1 = 0.2: y_eq = 2 (0.2 - 1) = -1.6; x0 = 0.8: y_in0 = 1.6 + 1.6 = 3.2; x2 = 0: y_in1 = 2
    tol = 1e-12 if polish else 1e-7
    np.testing.assert_allclose(res.x, [0.8, 0.2, 0.0], atol=tol)
    np.testing.assert_allclose(res.y_eq, [-1.6], atol=1e-6)
    np.testing.assert_allclose(res.y_in, [3.2, 2.0], atol=1e-6)


@pytest.mark.parametrize("solver", ["clarabel", "osqp"])
def test_solvers_are_deterministic(solver):
    a = solve_qp(*_projection_qp(), QPSettings(solver=solver))
    b = solve_qp(*_projection_qp(), QPSettings(solver=solver))
    np.testing.assert_array_equal(a.x, b.x)


def test_bad_settings():
    with pytest.raises(SettingsError, match="solver"):
        QPSettings(solver="cplex")
    with pytest.raises(SettingsError, match="tol"):
        QPSettings(tol=0.0)


def test_lp_feasible_and_infeasible():
    ok, f = solve_lp_feasible(sp.csc_matrix([[1.0, 1.0]]), np.array([2.0]), np.array([1.0, 3.0]))
    assert ok and np.allclose(f, [2.0, 0.0])
    ok, _ = solve_lp_feasible(sp.csc_matrix([[1.0, 1.0]]), np.array([-1.0]), np.ones(2))
    assert not ok
