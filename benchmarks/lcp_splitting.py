"""Matrix-splitting solvers for the boxed LCP of one contact step, in NumPy (Erleben 000 §3-3.2), for the
paper table's convergence rows (``benchmarks/papers.py`` paper 000): projected Gauss-Seidel, projected
SOR and projected Jacobi, with diagonal scaling (eq. 39-40) and constraint force mixing (eq. 41).

The problem (000 eq. 27, with the friction coupling of eq. 29):

    w = A lambda + b,   lo <= lambda <= hi,   complementarity of w and lambda on the box,

where a friction row i (``link[i] >= 0``) has the bounds hi_i = mu_i lambda_link(i), lo_i = -hi_i of its
normal row (a square limit surface). A = J M^-1 J^T, b = J V_pred - zeta (the constraint velocity before
the solve minus its target), so V = V_pred + M^-1 J^T lambda after it.

These are reference implementations: plain Python loops over the rows with NumPy columns, seconds for
a few hundred rows and sweeps, not the engine's solvers (those are Numba kernels in ``tumble._core``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class BoxedLCP:
    """A (n, n) symmetric positive semidefinite, b (n,); lo, hi (n,) the bounds of rows without a link;
    link (n,) int, -1 or the normal row a friction row is bounded by; mu (n,) its friction coefficient."""

    A: np.ndarray
    b: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    link: np.ndarray
    mu: np.ndarray
    _cols: list = field(default=None, init=False, repr=False)

    def __post_init__(self):
        n = len(self.b)
        self.A = np.asarray(self.A, float)
        self.b = np.asarray(self.b, float)
        self.lo = np.asarray(self.lo, float)
        self.hi = np.asarray(self.hi, float)
        self.link = np.asarray(self.link, np.int64)
        self.mu = np.asarray(self.mu, float)
        assert self.A.shape == (n, n) and all(len(x) == n for x in (self.lo, self.hi, self.link, self.mu))

    @property
    def n(self) -> int:
        return len(self.b)

    def columns(self) -> list:
        """The nonzeros of each column of A: [(rows, values)] (A is sparse: 12 nonzeros per row of J)."""
        if self._cols is None:
            scale = np.abs(self.A).max() if self.n else 0.0
            self._cols = []
            for i in range(self.n):
                idx = np.flatnonzero(np.abs(self.A[:, i]) > 1e-15 * scale)
                self._cols.append((idx, self.A[idx, i].copy()))
        return self._cols

    def bounds(self, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """lo, hi at the impulses ``lam`` (000 eq. 29: a friction row's bound is mu lambda of its normal)."""
        lo, hi = self.lo.copy(), self.hi.copy()
        f = self.link >= 0
        hi[f] = self.mu[f] * lam[self.link[f]]
        lo[f] = -hi[f]
        return lo, hi

    def damped(self, gamma: float) -> BoxedLCP:
        """The constraint-force-mixing problem A' = A + gamma I (000 eq. 41)."""
        return BoxedLCP(self.A + gamma * np.eye(self.n), self.b, self.lo, self.hi, self.link, self.mu)

    def scaled(self) -> tuple[BoxedLCP, np.ndarray]:
        """Diagonal scaling (000 eq. 39-40 with C^2 = 1/diag(A)): A' = C A C, b' = C b, lambda = C lambda'.
        The bounds scale with lambda: lo' = lo / C; a friction row's mu becomes mu C_link / C_i so that
        hi'_i = mu'_i lambda'_link. Rows with A_ii = 0 keep C = 1. Returns (the problem, C)."""
        d = np.diag(self.A).copy()
        c = np.where(d > 0, 1.0 / np.sqrt(np.where(d > 0, d, 1.0)), 1.0)
        mu = self.mu.copy()
        f = self.link >= 0
        mu[f] = self.mu[f] * c[self.link[f]] / c[f]
        return BoxedLCP(c[:, None] * self.A * c[None, :], c * self.b, self.lo / c, self.hi / c, self.link, mu), c


def merit(p: BoxedLCP, lam: np.ndarray) -> float:
    """theta = 1/2 |H|^2, H = min(lambda - lo, max(lambda - hi, w)), w = A lambda + b (000 eq. 37-38);
    0 exactly at a solution. Unscaled, as the paper writes it: lambda in N s, w in m/s."""
    lo, hi = p.bounds(lam)
    w = p.A @ lam + p.b
    with np.errstate(invalid="ignore"):
        h = np.minimum(lam - lo, np.maximum(lam - hi, w))
    return float(0.5 * h @ h)


def sor_sweep(p: BoxedLCP, lam: np.ndarray, w: np.ndarray, omega: float) -> None:
    """One projected SOR sweep in row order, in place (Cottle et al.'s splitting with a projection,
    000 eq. 28-30 with the step scaled by omega): lambda_i <- proj(lambda_i - omega w_i / A_ii), with the
    friction bounds from the normal impulse as it is at that moment; ``w`` = A lambda + b is kept current
    (w += delta A_col_i). omega = 1 is projected Gauss-Seidel."""
    d = np.diag(p.A)
    cols = p.columns()
    lo, hi, link, mu = p.lo, p.hi, p.link, p.mu
    for i in range(p.n):
        if d[i] <= 0.0:
            continue
        old = lam[i]
        new = old - omega * w[i] / d[i]
        j = link[i]
        if j >= 0:
            h = mu[i] * lam[j]
            lo_i, hi_i = -h, h
        else:
            lo_i, hi_i = lo[i], hi[i]
        new = min(max(new, lo_i), hi_i)
        delta = new - old
        if delta != 0.0:
            lam[i] = new
            idx, val = cols[i]
            w[idx] += delta * val


def jacobi_sweep(p: BoxedLCP, lam: np.ndarray, omega: float) -> np.ndarray:
    """One projected Jacobi sweep: every row's update from the same iterate, lambda <- proj(lambda - omega
    D^-1 (A lambda + b)); friction bounds from the normal impulses at the start of the sweep (as
    ``tumble``'s jacobi solver, ``solvers.jacobi.kernels.jacobi_sweep``). Returns the new impulses."""
    d = np.diag(p.A)
    safe = np.where(d > 0, d, 1.0)
    w = p.A @ lam + p.b
    new = np.where(d > 0, lam - omega * w / safe, lam)
    lo, hi = p.bounds(lam)
    return np.minimum(np.maximum(new, lo), hi)


def solve(p: BoxedLCP, method: str, sweeps: int, omega: float = 1.0, lam0: np.ndarray | None = None,
          stop: float = 0.0, measure: BoxedLCP | None = None, on_sweep=None) -> tuple[np.ndarray, np.ndarray]:
    """Run ``sweeps`` sweeps of ``method`` ("gs": projected SOR, omega = 1 is Gauss-Seidel; "jacobi")
    from ``lam0`` (default 0: a cold start). Returns (lambda, theta) with theta[k] the merit after k
    sweeps (theta[0] at the start); stops early once theta <= ``stop`` (the rest of theta is not filled)
    or theta is no longer finite (a diverging iteration). ``measure``: the problem whose merit theta is
    (default ``p``; e.g. the undamped problem while iterating on the damped one). ``on_sweep(lam)`` is
    called with the impulses after each sweep (e.g. to record the kinetic energy)."""
    if method not in ("gs", "jacobi"):
        raise ValueError(f"method {method!r}: 'gs' or 'jacobi'")
    lam = np.zeros(p.n) if lam0 is None else np.array(lam0, float)
    q = p if measure is None else measure
    thetas = [merit(q, lam)]
    w = p.A @ lam + p.b
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging iteration ends at inf, reported as such
        lam, thetas = _iterate(p, q, method, sweeps, omega, lam, w, thetas, stop, on_sweep)
    return lam, np.array(thetas)


def _iterate(p, q, method, sweeps, omega, lam, w, thetas, stop, on_sweep):
    for _ in range(sweeps):
        if method == "gs":
            sor_sweep(p, lam, w, omega)
        else:
            lam = jacobi_sweep(p, lam, omega)
        if on_sweep is not None:
            on_sweep(lam)
        t = merit(q, lam)
        thetas.append(t)
        if not np.isfinite(t) or t > 1e200 or t <= stop:
            break
    return lam, thetas


def linear_rate(theta: np.ndarray, skip: float = 0.1, floor: float = 1e-26) -> tuple[float, float]:
    """Fit log theta = a + k log r over the sweeps k after the first ``skip`` fraction, down to where
    theta reaches ``floor`` times its start (round-off); returns (r: the merit's factor per sweep, R^2 of
    the fit on log theta). A linear convergence (000 §3.1, Fig. 5) is a straight line, R^2 near 1."""
    theta = np.asarray(theta, float)
    ok = np.isfinite(theta) & (theta > 0)
    last = len(theta)
    if theta[0] > 0:
        below = np.flatnonzero(theta <= floor * theta[0])
        if below.size:
            last = int(below[0])
    k0 = int(skip * last)
    k = np.arange(len(theta))[k0:last]
    y = theta[k0:last]
    sel = ok[k0:last]
    k, y = k[sel], np.log(y[sel])
    if len(k) < 3:
        return float("nan"), float("nan")
    slope, icpt = np.polyfit(k, y, 1)
    ss = np.sum((y - y.mean()) ** 2)
    r2 = 1.0 - np.sum((y - (slope * k + icpt)) ** 2) / ss if ss > 0 else 1.0
    return float(np.exp(slope)), float(r2)


def kinetic_energy(v: np.ndarray, mass: np.ndarray, inertia: np.ndarray) -> float:
    """1/2 V^T M V for V (6 per body: linear, angular), body masses (nb,) and world inertia tensors
    (nb, 3, 3) [J]."""
    v = np.asarray(v, float).reshape(-1, 6)
    lin = 0.5 * np.sum(mass * np.sum(v[:, :3] ** 2, axis=1))
    ang = 0.5 * np.einsum("bi,bij,bj->", v[:, 3:], inertia, v[:, 3:])
    return float(lin + ang)
