"""Sparse rows of the length and sidedness constraints (paper 002, §4, §5, §8.3, §8.4).

Every QP of this package is written in a displacement variable d (2N,), interleaved (x0, y0, x1, ...):
the unknown u (positions, accelerations or velocities) is u = u0 + d with a given reference u0 (the
extrapolated positions of Fig. 7, g for the accelerations of Fig. 6, the old velocities of Thm. 7.1).
The objective sum_i m_i |u_i - u0_i|^2 is then sum_i m_i |d_i|^2, centred at 0, which keeps the round-off
of the solvers relative to the (small) correction, not to the absolute coordinates.

Rows are assembled with index arrays, vectorised over bars and triples (no per-brick Python loop).
Static points (corners of the ground and table) carry no variable: their value moves to the right side.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .contacts import Triples


def rot_out(v: np.ndarray) -> np.ndarray:
    """(v_y, -v_x): the outward normal of a counter-clockwise edge direction v (rotation by -90 deg)."""
    return np.stack([v[..., 1], -v[..., 0]], axis=-1)


def area_out(xi: np.ndarray, xj: np.ndarray, xk: np.ndarray) -> np.ndarray:
    """Doubled signed area <x_k - x_i, rot_out(x_j - x_i)>, positive when x_k is outside the edge
    i -> j; equals the paper's A(x_j, x_i, x_k) (§2, the 3x3 determinant with a row of ones)."""
    return np.einsum("tx,tx->t", xk - xi, rot_out(xj - xi))


def hull_variable(system) -> np.ndarray:
    """(nbodies * 4,) dynamic point index of each hull point, -1 for the corners of static bodies."""
    return np.concatenate([system.hull_points.ravel(), np.full(4 * len(system.static_hulls), -1)])


def bar_rows(system, p_ref: np.ndarray, target: np.ndarray, mask: np.ndarray, unit: bool):
    """Rows <d_i - d_j, e_b> = target_b - <u0_i - u0_j, e_b> for the bars in ``mask``, with e_b the bar
    direction at the current positions ``p_ref`` (unit if ``unit``). Returns (A (nb, 2N) csr, rhs)."""
    bars = system.bars[mask]
    e = p_ref[bars[:, 0]] - p_ref[bars[:, 1]]
    if unit:
        e = e / np.linalg.norm(e, axis=1)[:, None]
    nb, n = len(bars), len(p_ref)
    rows = np.repeat(np.arange(nb), 4)
    cols = np.stack([2 * bars[:, 0], 2 * bars[:, 0] + 1, 2 * bars[:, 1], 2 * bars[:, 1] + 1], axis=1).ravel()
    vals = np.concatenate([e, -e], axis=1).ravel()
    return sp.csr_matrix((vals, (rows, cols)), shape=(nb, 2 * n)), target[mask], e


def side_rows(system, triples: Triples, u0: np.ndarray, static_u: np.ndarray, rhs: np.ndarray):
    """Rows <u_k - (1 - alpha) u_i - alpha u_j, n> >= rhs of the triples, in d = u - u0; ``static_u``
    (ns * 4, 2) are the values of the static hull points (positions or zero rates).
    Returns (A (T, 2N) csr, b (T,))."""
    hv = hull_variable(system)
    t = len(triples)
    n = len(u0)
    pts = np.stack([triples.edge_start, triples.edge_end, triples.vertex], axis=1)  # (T, 3) hull ids
    w = np.stack([-(1.0 - triples.alpha), -triples.alpha, np.ones(t)], axis=1)  # (T, 3)
    var = hv[pts]  # (T, 3)
    n_static = 4 * system.n_bodies
    # value of each of the three points at the reference (u0 for dynamic points, fixed for static)
    static_pad = np.vstack([static_u, np.zeros((1, 2))])  # a valid row to gather from when there is no static body
    ref = np.where((var >= 0)[..., None], u0[np.maximum(var, 0)], static_pad[np.maximum(pts - n_static, 0)])
    const = np.einsum("ts,tsx,tx->t", w, ref, triples.normal)
    dyn = var >= 0
    tt, ss = np.nonzero(dyn)
    coef = w[tt, ss][:, None] * triples.normal[tt]  # (E, 2)
    rows = np.repeat(tt, 2)
    cols = (2 * var[tt, ss][:, None] + np.arange(2)).ravel()
    A = sp.csr_matrix((coef.ravel(), (rows, cols)), shape=(t, 2 * n))
    return A, rhs - const


def mass_matrix(system) -> sp.csc_matrix:
    """P = 2 diag(m) over the interleaved coordinates: the Hessian of sum_i m_i |d_i|^2."""
    n = 2 * len(system.masses)
    idx = np.arange(n, dtype=np.int32)
    return sp.csc_matrix((np.repeat(2.0 * system.masses, 2), idx, np.arange(n + 1, dtype=np.int32)), shape=(n, n))
