"""Writes src/tumble/_core/dynamics/joints/tree_blocks.py: ``joints.tree._eliminate`` (node k's step of the
joint tree's block LDL^T) unrolled for the common block sizes, over scalar locals.

    .venv/bin/python tools/gen_tree_blocks.py        (then ruff check; the module is committed)

Why (issue 19): ``factor_tree`` was 60 % of a chain50 pgs substep (29 us of ~50 for 100 nodes; ragdolls
164 us of ~350). ``_eliminate`` with literal sizes already had constant trip counts, but every entry of
the pivot's factor, F and S lived in arrays that LLVM cannot prove distinct (D, D_fac, F, the work
arrays), so each store forced the next loads from memory. Here every entry is a named local (a
register), read once from D / row_J and written once to D_fac / F / D[parent], and every entry is
computed by the same operations in the same order as ``_eliminate`` (IEEE arithmetic: the same bits;
tests/unit/test_tree_blocks.py holds the two equal bit for bit on random blocks, dropped pivots included).
"""

from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "tumble" / "_core" / "dynamics" / "joints" / "tree_blocks.py"

#: (n, m): a body (6) under a ball (3), hinge or slider (5) or fixed (6) joint, such a joint under a body,
#: and the roots (m = 0)
SIZES = [(6, 3), (3, 6), (6, 5), (5, 6), (6, 6), (6, 0), (3, 0), (5, 0)]


def gen(n: int, m: int) -> str:
    L = []
    w = L.append
    w("")
    w("")
    w('@kernel(inline="always", error_model="numpy")')
    w(f"def eliminate_{n}_{m}(k, p, body, sd, r0, row_J, D, D_fac, F, rel_tiny):")
    w(f'    """``tree._eliminate`` for n = {n}, m = {m} (generated: tools/gen_tree_blocks.py)."""')
    # the lower triangle of the pivot
    for a in range(n):
        for c in range(a + 1):
            w(f"    D{a}{c} = D[k, {a}, {c}]")
    w("    scale = 0.0")
    for a in range(n):
        w(f"    scale = max(scale, abs(D{a}{a}))")
    w("    tiny = rel_tiny * scale")
    for c in range(n):
        # s = D_cc - sum_q L_cq L_cq d_q
        w(f"    s = D{c}{c}")
        for q in range(c):
            w(f"    s -= l{c}{q} * l{c}{q} * d{q}")
        w("    if abs(s) <= tiny:")
        w(f"        d{c} = 0.0")
        w(f"        i{c} = 0.0")
        for a in range(c + 1, n):
            w(f"        l{a}{c} = 0.0")
        w("    else:")
        w(f"        d{c} = s")
        w(f"        i{c} = 1.0 / s")
        for a in range(c + 1, n):
            w(f"        t{a} = D{a}{c}")
        for q in range(c):
            w(f"        lc = l{c}{q}")
            w(f"        dq = d{q}")
            for a in range(c + 1, n):
                w(f"        t{a} -= l{a}{q} * lc * dq")
        for a in range(c + 1, n):
            w(f"        l{a}{c} = t{a} / s")
    # D_fac: 1 / d on the diagonal, L below
    for c in range(n):
        w(f"    D_fac[k, {c}, {c}] = i{c}")
        for a in range(c + 1, n):
            w(f"    D_fac[k, {a}, {c}] = l{a}{c}")
    w("    lo = math.inf")
    w("    hi = 0.0")
    for a in range(n):
        w(f"    if d{a} != 0.0:")
        w(f"        lo = min(lo, abs(d{a}))")
        w(f"        hi = max(hi, abs(d{a}))")
    if m == 0:
        w("    return hi, lo")
        return "\n".join(L)
    w("    if p < 0:")
    w("        return hi, lo")
    # E (n x m): a body under a joint: the joint's J block of the body, transposed; a joint under a body:
    # its J block of that body
    w("    if body:")
    for a in range(n):
        for c in range(m):
            w(f"        e{a}_{c} = row_J[r0 + {c}, sd, {a}]")
    w("    else:")
    for a in range(n):
        for c in range(m):
            w(f"        e{a}_{c} = row_J[r0 + {a}, sd, {c}]")
    # F = D^-1 E: L z = e, z / d, L^T f = z
    for a in range(n):
        for c in range(m):
            w(f"    f{a}_{c} = e{a}_{c}")
        for q in range(a):
            w(f"    lq = l{a}{q}")
            for c in range(m):
                w(f"    f{a}_{c} -= lq * f{q}_{c}")
    for a in range(n):
        w(f"    piv = i{a}")
        for c in range(m):
            w(f"    f{a}_{c} *= piv")
    for a in range(n - 1, -1, -1):
        for q in range(a + 1, n):
            w(f"    lq = l{q}{a}")
            for c in range(m):
                w(f"    f{a}_{c} -= lq * f{q}_{c}")
    for a in range(n):
        for c in range(m):
            w(f"    F[k, {a}, {c}] = f{a}_{c}")
    # D_p -= E^T F (the lower triangle, summed over q in order from 0.0; mirrored)
    for a in range(m):
        for c in range(a + 1):
            w(f"    s{a}_{c} = 0.0")
    for q in range(n):
        for a in range(m):
            w(f"    e = e{q}_{a}")
            for c in range(a + 1):
                w(f"    s{a}_{c} += e * f{q}_{c}")
    for a in range(m):
        for c in range(a + 1):
            w(f"    D[p, {a}, {c}] -= s{a}_{c}")
            if c != a:
                w(f"    D[p, {c}, {a}] -= s{a}_{c}")
    w("    return hi, lo")
    return "\n".join(L)


def gen_forward(n: int, m: int) -> str:
    """``tree._forward_node`` for literal n, m over scalar locals (the same operations in the same order)."""
    L = []
    w = L.append
    w("")
    w("")
    w('@kernel(inline="always")')
    w(f"def forward_{n}_{m}(k, p, D_fac, F, y, x):")
    w(f'    """``tree._forward_node`` for n = {n}, m = {m} (generated: tools/gen_tree_blocks.py)."""')
    for a in range(n):
        w(f"    y{a} = y[k, {a}]")
    for a in range(n):
        w(f"    s = y{a}")
        for q in range(a):
            w(f"    s -= D_fac[k, {a}, {q}] * x{q}")
        w(f"    x{a} = s")
    for a in range(n):
        w(f"    x{a} *= D_fac[k, {a}, {a}]")
    for a in range(n - 1, -1, -1):
        w(f"    s = x{a}")
        for q in range(a + 1, n):
            w(f"    s -= D_fac[k, {q}, {a}] * x{q}")
        w(f"    x{a} = s")
    for a in range(n):
        w(f"    x[k, {a}] = x{a}")
    if m == 0:
        return "\n".join(L)
    w("    if p < 0:")
    w("        return")
    for c in range(m):
        w("    s = 0.0")
        for a in range(n):
            w(f"    s += F[k, {a}, {c}] * y{a}")
        w(f"    y[p, {c}] -= s")
    return "\n".join(L)


def gen_back(n: int, m: int) -> str:
    """``tree._back_node`` for literal n, m over scalar locals."""
    L = []
    w = L.append
    w("")
    w("")
    w('@kernel(inline="always")')
    w(f"def back_{n}_{m}(k, p, F, x):")
    w(f'    """``tree._back_node`` for n = {n}, m = {m} (generated: tools/gen_tree_blocks.py)."""')
    for c in range(m):
        w(f"    xp{c} = x[p, {c}]")
    for a in range(n):
        w("    s = 0.0")
        for c in range(m):
            w(f"    s += F[k, {a}, {c}] * xp{c}")
        w(f"    x[k, {a}] -= s")
    return "\n".join(L)


def main() -> None:
    head = ('"""``joints.tree._eliminate`` unrolled for the common block sizes over scalar locals. GENERATED by\n'
            'tools/gen_tree_blocks.py (its docstring says why); do not edit by hand."""\n\n'
            "# ruff: noqa: E501\n"
            "from __future__ import annotations\n\nimport math\n\nfrom tumble._core.config import kernel\n")
    body = "\n".join(gen(n, m) for n, m in SIZES)
    body += "\n".join(gen_forward(n, m) for n, m in SIZES)
    body += "\n".join(gen_back(n, m) for n, m in SIZES if m)
    OUT.write_text(head + body + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
