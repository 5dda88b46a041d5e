"""Every Numba kernel under src/ goes through the one JIT policy (``tumble._core.config.kernel``):
no raw ``njit``/``jit`` decorator or call anywhere else, so fastmath, caching and bounds checking are
decided in one place (issue 14, docs/architecture.md "Kernel rules")."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "tumble"
POLICY = SRC / "_core" / "config.py"
RAW = {"njit", "jit", "generated_jit", "vectorize", "guvectorize", "cfunc"}


def _raw_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "numba":
            found += [f"{path.name}:{node.lineno} imports {a.name}" for a in node.names if a.name in RAW]
        elif isinstance(node, ast.Attribute) and node.attr in RAW and isinstance(node.value, ast.Name) \
                and node.value.id in ("numba", "nb"):
            found.append(f"{path.name}:{node.lineno} uses numba.{node.attr}")
    return found


def test_no_raw_njit_under_src():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path != POLICY:
            offenders += _raw_uses(path)
    assert offenders == [], "kernels must use tumble._core.config.kernel: " + "; ".join(offenders)


def test_the_check_finds_a_raw_njit(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from numba import njit, prange\nimport numba\n@njit\ndef f(x):\n    return x\n"
                   "g = numba.njit(cache=True)(f)\n")
    assert len(_raw_uses(bad)) == 2


def test_the_policy_compiles_ieee_arithmetic():
    """No fastmath flag may change a result: contraction (FMA) and reciprocal approximation made cold-
    compiled and cache-loaded kernels disagree (config.py's docstring has the measurement)."""
    from tumble._core.config import FASTMATH, kernel

    def axpy(a, x, y):
        return a * x + y

    policy = kernel(axpy)
    marked = kernel(axpy, exact=True)
    assert FASTMATH is False
    assert policy.targetoptions["fastmath"] is False
    assert marked.targetoptions["fastmath"] is False
    # a * x + y rounded twice (IEEE), not fused: 1e16 * (1 + 2^-52) + -1e16 is 2 after the product
    # rounds; a fused multiply-add would keep the product exact and give 2.220446049250313
    a, x, y = 1e16, 1.0 + 2.0 ** -52, -1e16
    assert policy(a, x, y) == (a * x) + y == 2.0
