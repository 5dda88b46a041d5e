"""Convex QP and LP back ends (Clarabel, OSQP, HiGHS) behind one small interface.

The QPs of this package have the form

    minimise 1/2 x^T P x + q^T x   subject to   A_eq x = b_eq,   A_in x >= b_in,

with P sparse symmetric positive definite (diagonal masses plus the §8.4 penalty), all matrices
scipy.sparse. Clarabel is an interior-point method (no warm start; solves to a relative gap); OSQP is
ADMM (warm start from a previous x, y; ``polish`` refines the solution by one KKT solve on the guessed
active set, which makes it exact up to round-off when the guess is right).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tumble.errors import SettingsError, SimulationError

QP_SOLVERS = ("clarabel", "osqp")


@dataclass
class QPSettings:
    """Solver choice and tolerances. ``tol`` is the feasibility / optimality tolerance handed to the
    solver (Clarabel: tol_feas, tol_gap_abs, tol_gap_rel; OSQP: eps_abs, eps_rel)."""

    solver: str = "clarabel"
    tol: float = 1e-10
    max_iter: int = 200
    osqp_polish: bool = True
    osqp_max_iter: int = 20000
    warm_start: bool = True
    polish: bool = True  # active-set KKT refinement after the solver (polish_kkt)
    polish_active_tol: float = 1e-9  # a row with slack below this is taken as active

    def __post_init__(self):
        if self.solver not in QP_SOLVERS:
            raise SettingsError(f"solver={self.solver!r}: expected one of {QP_SOLVERS}")
        if not (np.isfinite(self.tol) and 0 < self.tol < 1):
            raise SettingsError(f"tol={self.tol!r}: must be in (0, 1)")


@dataclass
class QPResult:
    x: np.ndarray
    y_eq: np.ndarray  # multipliers of the equalities (sign: force on x along the row)
    y_in: np.ndarray  # multipliers of the inequalities, >= 0
    iterations: int
    seconds: float
    status: str


def _stack_rows(*mats) -> sp.csr_matrix:
    """Row-stack sparse matrices by concatenating their CSR arrays (sp.vstack costs ~0.5 ms of checks)."""
    mats = [sp.csr_matrix(m) for m in mats]
    n = mats[0].shape[1]
    offsets = np.cumsum([0] + [m.nnz for m in mats])
    indptr = np.concatenate([m.indptr[:-1] + off for m, off in zip(mats, offsets)] + [offsets[-1:]])
    data = np.concatenate([m.data for m in mats])
    indices = np.concatenate([m.indices for m in mats])
    return sp.csr_matrix((data, indices, indptr), shape=(sum(m.shape[0] for m in mats), n))


def _upper(P) -> sp.csc_matrix:
    """Upper triangle of P in CSC (what Clarabel and OSQP read); a diagonal P (no penalty bars) as is."""
    P = sp.csc_matrix(P)
    if P.nnz == P.shape[0] and np.array_equal(P.indices, np.arange(P.shape[0])):
        return P
    return sp.triu(P, format="csc")


def solve_qp(P, q, A_eq, b_eq, A_in, b_in, settings: QPSettings, warm: QPResult | None = None,
             scale: float = 1.0) -> QPResult:
    """Solve the QP (see module doc). ``warm`` (OSQP only) is a previous result of the same size.

    ``scale`` is the expected size of x. The solvers' absolute tolerances (and an interior point's x
    error, about sqrt(gap)) are relative to O(1) numbers; a position step moves points by only
    g dt^2 ~ 4e-5 m, so the QP is solved in x' = x / scale (objective divided by scale^2, right sides
    by scale) and mapped back: x = scale x', multipliers y = scale y'."""
    if not (np.isfinite(scale) and scale > 0):
        raise SettingsError(f"scale={scale!r}: must be finite and > 0")
    if scale != 1.0:
        out = solve_qp(P, q / scale, A_eq, b_eq / scale, A_in, b_in / scale, settings, None if warm is None else
                       QPResult(warm.x / scale, warm.y_eq / scale, warm.y_in / scale, 0, 0.0, ""), 1.0)
        return QPResult(out.x * scale, out.y_eq * scale, out.y_in * scale, out.iterations, out.seconds, out.status)
    n = P.shape[0]
    m_eq, m_in = A_eq.shape[0], A_in.shape[0]
    t0 = time.perf_counter()
    if settings.solver == "clarabel":
        import clarabel

        # Clarabel: A x + s = b, s in cones. Equalities: s in {0}; A_in x >= b_in  <=>  -A_in x + s = -b_in, s >= 0
        A = _stack_rows(A_eq, -A_in).tocsc()
        b = np.concatenate([b_eq, -b_in])
        cones = []
        if m_eq:
            cones.append(clarabel.ZeroConeT(m_eq))
        if m_in:
            cones.append(clarabel.NonnegativeConeT(m_in))
        st = clarabel.DefaultSettings()
        st.verbose = False
        st.tol_feas = settings.tol
        st.tol_gap_abs = settings.tol
        st.tol_gap_rel = settings.tol
        st.tol_ktratio = 1e-8
        st.max_iter = settings.max_iter
        st.max_threads = 1
        solver = clarabel.DefaultSolver(_upper(P), q, A, b, cones, st)
        sol = solver.solve()
        status = str(sol.status)
        if status != "Solved":
            raise SimulationError(f"clarabel: QP not solved, status={status} ({n} variables, {m_eq + m_in} rows)")
        z = np.asarray(sol.z)
        res = QPResult(np.asarray(sol.x), -z[:m_eq], z[m_eq:], int(sol.iterations), 0.0, status)
        if settings.polish:
            res = polish_kkt(P, q, A_eq, b_eq, A_in, b_in, res, settings.polish_active_tol)
        res.seconds = time.perf_counter() - t0
        return res
    import osqp

    A = _stack_rows(A_eq, A_in).tocsc()
    lo = np.concatenate([b_eq, b_in])
    hi = np.concatenate([b_eq, np.full(m_in, np.inf)])
    prob = osqp.OSQP(algebra="builtin")  # naming it skips a per-call probe of the optional algebras
    prob.setup(_upper(P), q, A, lo, hi, verbose=False, eps_abs=settings.tol, eps_rel=settings.tol,
               polishing=settings.osqp_polish, max_iter=settings.osqp_max_iter, polish_refine_iter=10)
    if warm is not None and settings.warm_start and len(warm.x) == n:
        prob.warm_start(x=warm.x)
    res = prob.solve(raise_error=False)
    status = str(res.info.status)
    if status != "solved":
        raise SimulationError(f"osqp: QP not solved, status={status} ({n} variables, {m_eq + m_in} rows)")
    y = np.asarray(res.y)
    # OSQP's y is the multiplier of l <= A x <= u with the sign convention y > 0 at the upper bound
    out = QPResult(np.asarray(res.x), -y[:m_eq], -y[m_eq:], int(res.info.iter), 0.0, status)
    if settings.osqp_polish and res.info.status_polish == 1:
        out.status += "+osqp-polished"  # OSQP's own active-set polish succeeded: ours would repeat it
    elif settings.polish:
        out = polish_kkt(P, q, A_eq, b_eq, A_in, b_in, out, settings.polish_active_tol)
    out.seconds = time.perf_counter() - t0
    return out


def polish_kkt(P, q, A_eq, b_eq, A_in, b_in, res: QPResult, active_tol: float, gap_tol: float = 1e-6,
               delta: float = 1e-11, refine: int = 8) -> QPResult:
    """Active-set polish: take the guessed active inequality rows (see below) as equalities and solve
    the KKT system  P x - A^T y = -q,  A x = b  exactly, by a sparse LU of the quasi-definite matrix
    [[P, A^T], [A, -delta I]] plus iterative refinement against delta = 0 (the regularisation makes it
    non-singular when active rows are redundant, e.g. the duplicated contacts of aligned bricks; the
    refinement removes its bias). An interior-point x is only accurate to about sqrt(gap), so this turns
    ~1e-5 into ~1e-13 when the active set is right. The polished point is kept only if it is primal
    feasible (1e-12 relative) and its objective is not above the solver's by more than ``gap_tol``
    (relative); otherwise ``res`` is returned unchanged."""
    slack = A_in @ res.x - b_in
    # active set guess 1, complementarity ratio (scale free): an interior point has y_i s_i ~ mu, so a
    # row is active when its multiplier is large relative to the largest one while its slack is small
    # relative to the size of the step; guess 2 (fallback): slack below an absolute threshold
    y_scale = max(float(res.y_in.max(initial=0.0)), 1e-300)
    x_scale = max(float(np.abs(res.x).max(initial=0.0)), 1e-300)
    for active in (res.y_in / y_scale > slack / x_scale, slack < active_tol):
        # rows the polished point violates join the active set (at most 3 rounds): this repairs guesses
        # that missed a weakly active row (multiplier and slack both ~0, e.g. two bodies just touching)
        for _ in range(3):
            out = _polish_on(P, q, A_eq, b_eq, A_in, b_in, res, active, gap_tol, delta, refine)
            if isinstance(out, QPResult):
                return out
            if out is None or not np.any(out & ~active):
                break
            active = active | out
    return res


def _polish_on(P, q, A_eq, b_eq, A_in, b_in, res, active, gap_tol, delta, refine):
    import scipy.sparse.linalg as spla

    A = _stack_rows(A_eq, sp.csr_matrix(A_in)[active]).tocoo()
    b = np.concatenate([b_eq, b_in[active]])
    n, m = P.shape[0], A.shape[0]
    Pc = P.tocoo()
    # K = [[P, A^T], [A, -delta I]] assembled from COO triplets in one go (bmat is slow for small K)
    diag = np.arange(n, n + m)
    K = sp.csc_matrix((np.concatenate([Pc.data, A.data, A.data, np.full(m, -delta)]),
                       (np.concatenate([Pc.row, A.row + n, A.col, diag]),
                        np.concatenate([Pc.col, A.col, A.row + n, diag]))), shape=(n + m, n + m))
    Ac = A.tocsr()
    AcT = Ac.T.tocsr()
    rhs = np.concatenate([-q, b])
    try:
        lu = spla.splu(K)
    except RuntimeError:
        return None
    z = lu.solve(rhs)
    last = np.inf
    for _ in range(refine):
        # residual against delta = 0: [P x + A^T w, A x] with z = (x, w); stop when it stalls
        r = rhs - np.concatenate([P @ z[:n] + AcT @ z[n:], Ac @ z[:n]])
        size = np.abs(r).max()
        if size <= 1e-14 * max(1.0, np.abs(rhs).max()) or size > 0.5 * last:
            break
        last = size
        z += lu.solve(r)
    x = z[:n]
    y = -z[n:]
    y_in_act = y[A_eq.shape[0]:]
    slack_new = A_in @ x - b_in
    feas_tol = 1e-12 * max(1.0, np.abs(b_in).max(initial=0.0))
    if not np.all(np.isfinite(x)):
        return None
    if np.any(slack_new < -feas_tol):
        return slack_new < -feas_tol  # the violated rows, for the caller to add
    # With redundant active rows the multipliers are not unique (the regularised solve picks one that
    # may be negative), but x is: accept x when it is feasible and its objective is not worse than the
    # solver's by more than the solver's own gap (a wrong active set costs a finite amount).
    def objective(v):
        return 0.5 * v @ (P @ v) + q @ v

    f_res, f_new = objective(res.x), objective(x)
    if f_new > f_res + gap_tol * abs(f_res) + 1e-300:
        return None
    y_in = np.zeros(A_in.shape[0])
    y_in[active] = np.maximum(y_in_act, 0.0)
    return QPResult(x, y[:A_eq.shape[0]], y_in, res.iterations, res.seconds, res.status + "+polished")


def solve_lp_feasible(A_eq, b_eq, cost) -> tuple[bool, np.ndarray]:
    """HiGHS: minimise cost^T f subject to A_eq f = b_eq, f >= 0. Returns (feasible, f)."""
    import highspy

    from tumble.highs import quiet_highs

    A = sp.csc_matrix(A_eq)
    m, n = A.shape
    h = quiet_highs()
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = m
    lp.col_cost_ = np.asarray(cost, dtype=float)
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.full(n, highspy.kHighsInf)
    lp.row_lower_ = np.asarray(b_eq, dtype=float)
    lp.row_upper_ = np.asarray(b_eq, dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data.astype(float)
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        return True, np.asarray(h.getSolution().col_value)
    if status == highspy.HighsModelStatus.kInfeasible:
        return False, np.zeros(n)
    raise SimulationError(f"highs: stability LP ended with status {h.modelStatusToString(status)}")
