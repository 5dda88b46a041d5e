"""The generated block eliminations (``joints.tree_blocks``, tools/gen_tree_blocks.py) against the loop
version they unroll (``joints.tree._eliminate``): the same pivot factor, F, parent update and pivot
spread, bit for bit, on random definite blocks, with pivots dropped too; and the module is what the
generator writes now."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from tumble._core.dynamics.joints import tree_blocks as B
from tumble._core.dynamics.joints.tree import _eliminate

_GEN = Path(__file__).resolve().parents[2] / "tools" / "gen_tree_blocks.py"
_spec = importlib.util.spec_from_file_location("gen_tree_blocks", _GEN)
gen_tree_blocks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_tree_blocks)

SIZES = gen_tree_blocks.SIZES


def _pair(n, m):
    name = f"eliminate_{n}_{m}"
    gen = getattr(B, name)

    # plain njit, uncached: test-only closures over the sizes (the policy covers src/)
    @njit
    def loop_version(k, p, body, sd, r0, row_J, D, D_fac, F, tiny):
        E = np.empty((6, 6))
        S = np.empty((6, 6))
        d = np.empty(6)
        t = np.empty(6)
        return _eliminate(k, n, p, m, body, sd, r0, row_J, D, D_fac, F, E, S, d, t, tiny)

    @njit
    def generated(k, p, body, sd, r0, row_J, D, D_fac, F, tiny):
        return gen(k, p, body, sd, r0, row_J, D, D_fac, F, tiny)

    return loop_version, generated


def _case(rng, n, m, body, drop):
    """A node k = 1 under parent p = 0 (a root when m = 0): its pivot definite (positive for a body,
    negative for a joint), with ``drop`` a rank-deficient one whose dependent pivots fall below the
    threshold."""
    A = rng.normal(size=(n, n)) * rng.uniform(0.01, 100.0, size=n)
    if drop:
        A[:, -1] = A[:, 0]          # a repeated column: the last pivot is rounding
        if n > 3:
            A[:, 2] = 2.0 * A[:, 1]
    P = A @ A.T + (0.0 if drop else 1e-3) * np.eye(n)
    if not body:
        P = -P
    D = np.zeros((2, 6, 6))
    D[1, :n, :n] = P
    D[0] = rng.normal(size=(6, 6))
    row_J = rng.normal(size=(8, 2, 6))
    row_J[rng.random(size=row_J.shape) < 0.3] = 0.0   # structural zeros, as in joint rows
    return D, row_J


@pytest.mark.parametrize("n,m", SIZES)
def test_generated_elimination_is_the_loop_bit_for_bit(n, m):
    loop_version, generated = _pair(n, m)
    rng = np.random.default_rng(100 * n + m)
    for trial in range(60):
        body = n == 6 if m else bool(trial % 2)
        drop = trial % 3 == 0
        D, row_J = _case(rng, n, m, body, drop)
        p = 0 if m else -1
        sd = trial % 2
        tiny = 1e-9 if drop else (1e-15 if body else 1e-12)
        out = []
        for f in (loop_version, generated):
            Dc = D.copy()
            D_fac = np.full((2, 6, 6), 7.0)
            F = np.full((2, 6, 6), 7.0)
            hi, lo = f(1, p, body, sd, 1, row_J, Dc, D_fac, F, tiny)
            out.append((Dc, D_fac, F, hi, lo))
        (D1, L1, F1, hi1, lo1), (D2, L2, F2, hi2, lo2) = out
        for a, b in ((D1, D2), (L1, L2), (F1, F2)):
            assert a.tobytes() == b.tobytes()
        assert (hi1, lo1) == (hi2, lo2)
        if drop:
            assert np.count_nonzero(np.diagonal(L1[1, :n, :n]) == 0.0) >= 1


def test_module_is_the_generators_output(tmp_path, monkeypatch):
    out = tmp_path / "tree_blocks.py"
    monkeypatch.setattr(gen_tree_blocks, "OUT", out)
    gen_tree_blocks.main()
    assert out.read_text() == open(B.__file__).read()


def _substitutions(n, m):
    from tumble._core.dynamics.joints.tree import _back_node, _forward_node

    fwd = getattr(B, f"forward_{n}_{m}")
    back = getattr(B, f"back_{n}_{m}") if m else None

    @njit
    def loops(k, p, D_fac, F, y, x):
        _forward_node(k, n, p, m, D_fac, F, y, x)
        if p >= 0:
            _back_node(k, n, p, m, F, x)

    @njit
    def gen_fwd(k, p, D_fac, F, y, x):
        fwd(k, p, D_fac, F, y, x)

    if back is None:
        return loops, gen_fwd

    @njit
    def generated(k, p, D_fac, F, y, x):
        fwd(k, p, D_fac, F, y, x)
        back(k, p, F, x)

    return loops, generated


@pytest.mark.parametrize("n,m", SIZES)
def test_generated_substitutions_are_the_loops_bit_for_bit(n, m):
    """``forward_n_m`` / ``back_n_m`` against ``tree._forward_node`` / ``_back_node``."""
    loops, generated = _substitutions(n, m)
    rng = np.random.default_rng(7 * n + m)
    for _ in range(40):
        D_fac = rng.normal(size=(2, 6, 6))
        F = rng.normal(size=(2, 6, 6))
        y = rng.normal(size=(2, 6))
        x0 = rng.normal(size=(2, 6))
        p = 0 if m else -1
        out = []
        for f in (loops, generated):
            yc, xc = y.copy(), x0.copy()
            f(1, p, D_fac, F, yc, xc)
            out.append((yc, xc))
        assert out[0][0].tobytes() == out[1][0].tobytes()
        assert out[0][1].tobytes() == out[1][1].tobytes()
