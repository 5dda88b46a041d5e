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


def test_the_policy_compiles_with_fastmath_unless_exact():
    from tumble._core.config import FASTMATH, kernel

    def add(a, b):
        return a + b

    fast = kernel(add)
    exact = kernel(add, exact=True)
    assert fast.targetoptions["fastmath"] == FASTMATH
    assert exact.targetoptions["fastmath"] is False
    assert fast(1.0, 2.0) == exact(1.0, 2.0) == 3.0
