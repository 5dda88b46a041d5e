"""Direct (exact) solve of the joints' equality rows over the joint tree, in linear time (Baraff 1996,
"Linear-time dynamics using Lagrange multipliers", §4-5).

The joints' equality rows (``types.JOINT_BASE_ROWS`` of each joint: a ball's point, a hinge's point and
axis, ...) couple the bodies along the joint graph. Gauss-Seidel sweeps propagate a load through a
chain of n links by about one link per sweep, so a 50-link chain released at 60 Hz stretched by 7 %
under 4 x 2 sweeps. Solving the rows exactly is cheap when the graph is a tree: the symmetric system

    H x = b,   H = [[M, J^T], [J, -Gamma]],   x = [dv; -dlambda],   b = [0; zeta - J v - Gamma lambda]

(its first block row is M dv = J^T dlambda, the second (J M^-1 J^T + Gamma) dlambda = zeta - J v -
Gamma lambda, the update of ``rows.solve_group`` for all joints at once) has one block per body (6 x 6,
M = diag(m I, I_world)) and per joint (g x g, the joint's rows), and an off-diagonal block only
between a joint and each of its (dynamic) bodies. This body-joint graph is a tree when the joints
form no loop, and block LDL^T elimination in an order that takes every node before its parent
creates no fill-in (Baraff §5):

    factor (leaves first):   D_i = H_ii - sum_{children c} E_c^T D_c^-1 E_c,   F_i = D_i^-1 E_i
    forward (leaves first):  y_i = b_i - sum_{children c} F_c^T y_c
    back (root first):       x_i = D_i^-1 y_i - F_i x_parent(i)

with E_i = H[i, parent(i)] (a body under a joint: that joint's J block of the body, transposed; a joint
under a body: its J block of that body). Cost O(nodes) with 6 x 6 blocks.

A joint's pivot D_j = -Gamma - J D_c^-1 J^T needs a child body; a joint with only one dynamic body
(to the world or a fixed body) therefore has to be a root. The world is one vertex of the graph for
this reason: a joint that closes a loop -- between two bodies already connected, or a second joint
from one connected group to the world -- is left out of the tree and stays with the Gauss-Seidel
sweeps (``rows.sweep_rows``), as do limit and motor rows (inequalities). ``build_joint_tree`` picks the
tree (union-find in joint order), roots every group at its world joint (or at its heaviest body when it
has none) and lists the nodes in breadth-first order; factor and solves walk that list backwards and
forwards.

Numerics (issue 17). Eliminating a heavy body into a light one makes the light body's pivot its own M
plus the heavy one's effective mass, J^T (J M_h^-1 J^T)^-1 J: for a 2.8e-5 kg box jointed to a 3 t plate
its eigenvalues spread 9.8e-9 .. 4.2e3 (4e11). The joint impulse is then the heavy side's effective mass
times the light body's anchor velocity (x_j = D_j^-1 y_j - F_j x_light), so an error of 1e-8 m/s there
is an error of 3e-5 N s in an impulse of 1e-7 N s: the impulse no longer moves the bodies as the solve
did (M dv != J^T dlambda). Velocities are still right within the solve, but the next substep warm-starts
the impulses, which spun the box at 14000 rad/s, and the errors grew with the velocities to 1e112 J
(tests/physics/test_fuzz.py, JOINT_TREE_CASE). Three measures, each measured on that class (chains of
2-5 bodies, one 1e6-1e9 times heavier than the others, resting in or up to 3 m into the ground,
free or hung from the world):

- no explicit inverse: each pivot is factored as L diag(d) L^T (``_eliminate``; a body pivot is
  positive definite, a joint pivot negative definite, so no pivoting is needed and the factor is
  backward stable) and every D_k^-1 v is two substitutions. The explicit inverse of the box's pivot was
  wrong by 78 in entries of 7e7 and the impulse came out 500 times too large; the substitutions give
  it to 1e-8 (a NumPy twin of the pair: relative error 106 with the inverse, 1.2e-8 with the factor);
- a group without a world joint is rooted at its heaviest body, so every other body is eliminated
  into a heavier side and each joint's impulse is computed from its light side (the same twin: 1.3e-14).
  Before, 60 of 96 such chains under pgs broke the energy bound (every one whose heavy body was not the
  root); after these two, the 15 whose heavy body sits between a light one and the world (the world
  joint has to be the root: a joint pivot needs a child body);
- those last are held by iterative refinement (x += H^-1 (b - H x) with the same factor,
  ``tree_sweep``'s ``refine`` steps) whenever some pivot's spread max |d| / min |d| passes
  ``REFINE_SPREAD``; each step shrinks the error by about eps times the spread. A body pivot drops only
  a rounding-level d (``PIVOT_ROUNDING``): it is positive definite however small the body's own M is.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core import types as T
from tumble._core.config import kernel
from tumble._core.dynamics.integrate import displace_body
from tumble._core.dynamics.joints.rows import write_joint_rows
from tumble._core.dynamics.joints.tree_blocks import (
    back_3_6,
    back_5_6,
    back_6_3,
    back_6_5,
    back_6_6,
    eliminate_3_0,
    eliminate_3_6,
    eliminate_5_0,
    eliminate_5_6,
    eliminate_6_0,
    eliminate_6_3,
    eliminate_6_5,
    eliminate_6_6,
    forward_3_0,
    forward_3_6,
    forward_5_0,
    forward_5_6,
    forward_6_0,
    forward_6_3,
    forward_6_5,
    forward_6_6,
)
from tumble._core.rows import row_velocity

#: node kinds in the tree's node list
NODE_BODY = 0
NODE_JOINT = 1
#: the pivot spread (largest max |d| / min |d| of a pivot's factor, ``factor_tree``) above which every
#: ``tree_sweep`` of pgs refines its solution (module docstring, "Numerics"), and the steps it takes.
#: Measured (largest spread over the first 120 steps at the pgs defaults): chain50 2.7e5, ragdolls 1.3e3,
#: bridge 4.7e3, so the library's scenes never refine (no cost); JOINT_TREE_CASE (rooted at the plate)
#: 1.5e4; a 2.8e-5 kg box between the world and a 2.8e4 kg box (1:1e9, JOINT_TREE_WORLD_CASE) 1.0e12,
#: which breaks the energy bound without the refinement (1e142 J in 20 steps) and holds with it. The light
#: body's momentum balance |M dv - J^T dlambda| / |M dv| after one unrefined solve of that chain grows
#: about as the spread squared (tests/unit/test_joint_tree_mass_ratio.py's chains, 1:1e4 .. 1:1e9):
#: spread 9.2e5 2.3e-8, 9.2e6 4.4e-7, 9.2e7 9.5e-5, 9.2e8 0.016, 9.2e10 91; one refinement step
#: 5e-14 .. 0.017, two 2e-12 .. 9e-9 (REFINE_STEPS). So 1e6, below which an unrefined solve keeps the
#: balance to ~3e-8
REFINE_SPREAD = 1e6
REFINE_STEPS = 2
#: a body pivot's |d| at most this fraction of its block's scale is rounding noise (a few eps) and dropped
#: (``factor_tree``)
PIVOT_ROUNDING = 1e-15


@kernel(inline="always")
def _vertex(j, side, joint_body, body_fixed, world):
    """The graph vertex of side ``side`` of joint j: its body, or ``world`` for the world and fixed bodies."""
    b = joint_body[j, side]
    if b < 0 or body_fixed[b]:
        return world
    return b


@kernel(inline="always")
def _find(uf, a):
    while uf[a] != a:
        uf[a] = uf[uf[a]]
        a = uf[a]
    return a


@kernel
def build_joint_tree(joint_count, joint_active, joint_body, body_fixed, body_mass, body_count, joint_in_tree,
                     node_kind, node_ref, node_parent, node_side):
    """The spanning forest of the active joints and its node list (module docstring).

    Writes ``joint_in_tree`` (joint_count,) and, for nodes k = 0..count-1 in breadth-first order from
    the roots, ``node_kind`` (NODE_BODY / NODE_JOINT), ``node_ref`` (body or joint index),
    ``node_parent`` (index of the parent node, -1 at a root) and ``node_side`` (the side, 0 or 1, of
    the body in the joint's rows on the edge to the parent; -1 at a root). The node arrays hold
    body_count + joint_count entries. Returns the node count."""
    world = body_count
    uf = np.empty(body_count + 1, dtype=np.int64)
    for i in range(body_count + 1):
        uf[i] = i
    degree = np.zeros(body_count + 2, dtype=np.int64)
    for j in range(joint_count):
        joint_in_tree[j] = False
        if not joint_active[j]:
            continue
        a = _vertex(j, 0, joint_body, body_fixed, world)
        b = _vertex(j, 1, joint_body, body_fixed, world)
        if a == b:
            continue
        ra = _find(uf, a)
        rb = _find(uf, b)
        if ra == rb:          # closes a loop (through the world, too): left to the sweeps
            continue
        uf[ra] = rb
        joint_in_tree[j] = True
        degree[a + 1] += 1
        degree[b + 1] += 1
    # adjacency vertex -> tree joints (CSR)
    for i in range(body_count + 1):
        degree[i + 1] += degree[i]
    fill = np.zeros(body_count + 1, dtype=np.int64)
    adj = np.empty(max(degree[body_count + 1], 1), dtype=np.int64)
    for j in range(joint_count):
        if not joint_in_tree[j]:
            continue
        for side in range(2):
            v = _vertex(j, side, joint_body, body_fixed, world)
            adj[degree[v] + fill[v]] = j
            fill[v] += 1
    # the heaviest body of each group (at its union-find root; the first of equal masses)
    heaviest = np.full(body_count + 1, -1, dtype=np.int64)
    for i in range(body_count):
        if degree[i + 1] > degree[i]:
            g = _find(uf, i)
            if heaviest[g] < 0 or body_mass[i] > body_mass[heaviest[g]]:
                heaviest[g] = i
    seen_body = np.zeros(body_count + 1, dtype=np.bool_)
    seen_joint = np.zeros(joint_count, dtype=np.bool_)
    count = 0
    seen_body[world] = True
    for q in range(degree[world], degree[world + 1]):    # the world's joints are roots
        j = adj[q]
        seen_joint[j] = True
        node_kind[count] = NODE_JOINT
        node_ref[count] = j
        node_parent[count] = -1
        node_side[count] = -1
        count += 1
    head = 0
    seed = 0
    while True:
        while head < count:
            k = head
            head += 1
            if node_kind[k] == NODE_JOINT:
                j = node_ref[k]
                for side in range(2):
                    v = _vertex(j, side, joint_body, body_fixed, world)
                    if not seen_body[v]:
                        seen_body[v] = True
                        node_kind[count] = NODE_BODY
                        node_ref[count] = v
                        node_parent[count] = k
                        node_side[count] = side
                        count += 1
            else:
                v = node_ref[k]
                for q in range(degree[v], degree[v + 1]):
                    j = adj[q]
                    if seen_joint[j]:
                        continue
                    seen_joint[j] = True
                    node_kind[count] = NODE_JOINT
                    node_ref[count] = j
                    node_parent[count] = k
                    node_side[count] = 0 if _vertex(j, 0, joint_body, body_fixed, world) == v else 1
                    count += 1
        # the next group without a world joint, rooted at its heaviest body (the first of equal ones;
        # module docstring, "Numerics")
        while seed < body_count and (seen_body[seed] or degree[seed + 1] == degree[seed]):
            seed += 1
        if seed >= body_count:
            break
        root = heaviest[_find(uf, seed)]
        seen_body[root] = True
        node_kind[count] = NODE_BODY
        node_ref[count] = root
        node_parent[count] = -1
        node_side[count] = -1
        count += 1
    return count


@kernel(inline="always")
def node_size(k, node_kind, node_ref, joint_type):
    if node_kind[k] == NODE_BODY:
        return 6
    return T.JOINT_BASE_ROWS[joint_type[node_ref[k]]]


@kernel
def mark_tree_rows(node_count, node_kind, node_ref, joint_type, joint_row_start, row_offset, row_group):
    """row_group = -1 on the equality rows of the tree's joints: the sweeps skip them
    (``rows.sweep_rows`` visits groups >= 1 only), ``tree_sweep`` solves them."""
    for k in range(node_count):
        if node_kind[k] != NODE_JOINT:
            continue
        j = node_ref[k]
        r0 = row_offset + joint_row_start[j]
        for c in range(T.JOINT_BASE_ROWS[joint_type[j]]):
            row_group[r0 + c] = -1


@kernel(inline="always")
def _eliminate(k, n, p, m, body, sd, r0, row_J, D, D_fac, F, E, S, d, t, rel_tiny):
    """Node k's step of the block LDL^T (``factor_tree``).

    D_fac[k] = the factor L diag(d) L^T of the definite pivot D[k, :n, :n] (its lower triangle): L's
    strictly lower part in D_fac's lower triangle, 1 / d_a on its diagonal. No pivoting: a body pivot
    is positive definite and a joint pivot negative definite (the quasi-definite H of the module
    docstring), for which the factor is backward stable as it is (Cholesky's). A pivot |d_a| at most
    ``rel_tiny`` times the block's scale (a redundant row) is dropped: 1 / d_a = 0 and its column of L
    zero, so that unknown of a solve is 0 (its row's multiplier stays zero). Then, under a parent p
    (m = its size; p < 0: a root), F[k] = D_k^-1 E_k and D_p -= E_k^T F_k.

    Speed (issue 19): every entry is computed by the same operations in the same order as the
    column-by-column loops before (bit for bit), but the loops over independent entries are the
    innermost ones, so the short recurrences of the triangular solves overlap, and ``factor_tree``
    passes n and m as literals for the common block sizes, so that every loop has a constant trip
    count and is unrolled: chain50's factor (100 nodes) 29.2 -> 19.8 us, ragdolls' (420) 167 -> 115 us
    (minimum over 15 rounds of 200 calls in a compiled loop). With n and m left variable in one inlined
    copy the same loops took 32 us. ``body``: k is a body (its E_k the joint's J block transposed),
    else a joint; ``E`` (6, 6), ``S`` (6, 6), ``d``, ``t`` (6,) work space. Returns the largest and
    smallest |d| of the pivot's factor (0 and inf when every d is dropped)."""
    scale = 0.0
    for a in range(n):
        scale = max(scale, abs(D[k, a, a]))
    tiny = rel_tiny * scale
    for c in range(n):
        s = D[k, c, c]
        for q in range(c):
            s -= D_fac[k, c, q] * D_fac[k, c, q] * d[q]
        if abs(s) <= tiny:
            d[c] = 0.0
            D_fac[k, c, c] = 0.0
            for a in range(c + 1, n):
                D_fac[k, a, c] = 0.0
            continue
        d[c] = s
        D_fac[k, c, c] = 1.0 / s
        for a in range(c + 1, n):
            t[a] = D[k, a, c]
        for q in range(c):
            lc = D_fac[k, c, q]
            dq = d[q]
            for a in range(c + 1, n):
                t[a] -= D_fac[k, a, q] * lc * dq
        for a in range(c + 1, n):
            D_fac[k, a, c] = t[a] / s
    lo = math.inf
    hi = 0.0
    for a in range(n):
        if d[a] != 0.0:
            lo = min(lo, abs(d[a]))
            hi = max(hi, abs(d[a]))
    if p < 0:
        return hi, lo
    # E_k = H[k, parent] (n x m): a body under a joint is that joint's J block of the body,
    # transposed; a joint under a body is its J block of that body
    if body:
        for a in range(n):
            for c in range(m):
                E[a, c] = row_J[r0 + c, sd, a]
    else:
        for a in range(n):
            for c in range(m):
                E[a, c] = row_J[r0 + a, sd, c]
    # F_k = D_k^-1 E_k, all m columns at once: L z = e, z / d, L^T f = z (never D_k^-1 itself: module
    # docstring, "Numerics")
    for a in range(n):
        for c in range(m):
            F[k, a, c] = E[a, c]
        for q in range(a):
            lq = D_fac[k, a, q]
            for c in range(m):
                F[k, a, c] -= lq * F[k, q, c]
    for a in range(n):
        piv = D_fac[k, a, a]
        for c in range(m):
            F[k, a, c] *= piv
    for a in range(n - 1, -1, -1):
        for q in range(a + 1, n):
            lq = D_fac[k, q, a]
            for c in range(m):
                F[k, a, c] -= lq * F[k, q, c]
    # D_p -= E_k^T F_k (symmetric: the lower triangle summed, mirrored)
    for a in range(m):
        for c in range(a + 1):
            S[a, c] = 0.0
    for q in range(n):
        for a in range(m):
            e = E[q, a]
            for c in range(a + 1):
                S[a, c] += e * F[k, q, c]
    for a in range(m):
        for c in range(a + 1):
            s = S[a, c]
            D[p, a, c] -= s
            if c != a:
                D[p, c, a] -= s
    return hi, lo


@kernel(error_model="numpy")
def factor_tree(node_count, node_kind, node_ref, node_parent, node_side, joint_type, joint_row_start, row_offset,
                row_J, row_cfm, body_mass, body_inv_inertia_world, soft_compliance, D, D_fac, F, H_diag):
    """Block LDL^T of H over the tree (module docstring): D_fac[k] = the factor L diag(d) L^T of the
    pivot D_k (n_k x n_k, ``_eliminate``) and F[k] = D_k^-1 E_k (n_k x n_parent, solved with it);
    H_diag[k] = H_kk (the body's M, the joint's -Gamma) for the refinement of ``tree_sweep``. ``D``
    (>= node_count, 6, 6) is work space. A row with constraint force mixing gamma > 0 (a soft row)
    gets -gamma on its diagonal, or -``soft_compliance`` when that is > 0 (the projection: a spring is
    no position constraint, so an enormous compliance keeps its multiplier at zero). Returns the
    largest spread max |d| / min |d| of a pivot's factor (module docstring, "Numerics": how
    ill-conditioned the worst pivot is). ``error_model="numpy"``: every division is guarded (1 / d_a
    and L's entries only for |d_a| above the drop threshold, the spread only for max |d| > 0, the
    inertia's adjugate only for det > 1e-300), so Python's zero-division checks never fired and only
    cost (~1 us of chain50's 20)."""
    d = np.empty(6)
    t = np.empty(6)
    spread = 1.0
    E = np.empty((6, 6))
    S = np.empty((6, 6))
    size = np.empty(max(node_count, 1), dtype=np.int64)
    for k in range(node_count):
        n = node_size(k, node_kind, node_ref, joint_type)
        size[k] = n
        for a in range(n):          # only the n x n block is ever read (D, D_fac, H_diag)
            for c in range(n):
                D[k, a, c] = 0.0
        if node_kind[k] == NODE_BODY:
            i = node_ref[k]
            mass = body_mass[i]
            for a in range(3):
                D[k, a, a] = mass
            # I_world = (I_world^-1)^-1 by the adjugate (a dynamic body's inverse inertia is positive definite)
            A = body_inv_inertia_world
            c00 = A[i, 1, 1] * A[i, 2, 2] - A[i, 1, 2] * A[i, 2, 1]
            c01 = A[i, 0, 2] * A[i, 2, 1] - A[i, 0, 1] * A[i, 2, 2]
            c02 = A[i, 0, 1] * A[i, 1, 2] - A[i, 0, 2] * A[i, 1, 1]
            c10 = A[i, 1, 2] * A[i, 2, 0] - A[i, 1, 0] * A[i, 2, 2]
            c11 = A[i, 0, 0] * A[i, 2, 2] - A[i, 0, 2] * A[i, 2, 0]
            c12 = A[i, 0, 2] * A[i, 1, 0] - A[i, 0, 0] * A[i, 1, 2]
            c20 = A[i, 1, 0] * A[i, 2, 1] - A[i, 1, 1] * A[i, 2, 0]
            c21 = A[i, 0, 1] * A[i, 2, 0] - A[i, 0, 0] * A[i, 2, 1]
            c22 = A[i, 0, 0] * A[i, 1, 1] - A[i, 0, 1] * A[i, 1, 0]
            det = A[i, 0, 0] * c00 + A[i, 0, 1] * c10 + A[i, 0, 2] * c20
            inv = 1.0 / det if det > 1e-300 else 1e30
            D[k, 3, 3] = c00 * inv
            D[k, 3, 4] = c01 * inv
            D[k, 3, 5] = c02 * inv
            D[k, 4, 3] = c10 * inv
            D[k, 4, 4] = c11 * inv
            D[k, 4, 5] = c12 * inv
            D[k, 5, 3] = c20 * inv
            D[k, 5, 4] = c21 * inv
            D[k, 5, 5] = c22 * inv
        else:
            r0 = row_offset + joint_row_start[node_ref[k]]
            for a in range(n):
                g = row_cfm[r0 + a]
                if g > 0.0 and soft_compliance > 0.0:
                    g = soft_compliance
                D[k, a, a] = -g
        for a in range(n):
            for c in range(n):
                H_diag[k, a, c] = D[k, a, c]
    for k in range(node_count - 1, -1, -1):
        n = size[k]
        # a joint's rows may be redundant (-Gamma - J D_c^-1 J^T only semidefinite): 1e-12 of the scale;
        # a body's pivot M + sum J^T (-D_j)^-1 J is positive definite however small M is against what
        # its children add, so only rounding (PIVOT_ROUNDING) is dropped there. Measured: at 1e-12 a
        # 1e-5 kg box (smallest moment 1.9e-9 kg m^2) between the world and a 2.8e4 kg box had its
        # turning pivots dropped (scale 5e4) and the world tore the pair apart (1e162 J in 20 steps)
        body = node_kind[k] == NODE_BODY
        tiny = PIVOT_ROUNDING if body else 1e-12
        p = node_parent[k]
        m = size[p] if p >= 0 else 0
        sd = node_side[k]
        r0 = row_offset + joint_row_start[node_ref[p] if body else node_ref[k]] if p >= 0 else 0
        # the common block sizes as literals (constant trip counts: ``_eliminate``): a body under a
        # ball or hinge / slider joint and such a joint under a body
        # (issue 19: ``tree_blocks``, the same arithmetic over scalar locals, 2-3x faster)
        if n == 6 and m == 3:
            hi, lo = eliminate_6_3(k, p, body, sd, r0, row_J, D, D_fac, F, tiny)
        elif n == 3 and m == 6:
            hi, lo = eliminate_3_6(k, p, body, sd, r0, row_J, D, D_fac, F, tiny)
        elif n == 6 and m == 5:
            hi, lo = eliminate_6_5(k, p, body, sd, r0, row_J, D, D_fac, F, tiny)
        elif n == 5 and m == 6:
            hi, lo = eliminate_5_6(k, p, body, sd, r0, row_J, D, D_fac, F, tiny)
        elif n == 6 and m == 6:
            hi, lo = eliminate_6_6(k, p, body, sd, r0, row_J, D, D_fac, F, tiny)
        elif n == 6 and p < 0:
            hi, lo = eliminate_6_0(k, p, body, sd, r0, row_J, D, D_fac, F, tiny)
        elif n == 3 and p < 0:
            hi, lo = eliminate_3_0(k, p, body, sd, r0, row_J, D, D_fac, F, tiny)
        elif n == 5 and p < 0:
            hi, lo = eliminate_5_0(k, p, body, sd, r0, row_J, D, D_fac, F, tiny)
        else:
            hi, lo = _eliminate(k, n, p, m, body, sd, r0, row_J, D, D_fac, F, E, S, d, t, tiny)
        if hi > 0.0:
            spread = max(spread, hi / lo)
    return spread


@kernel(inline="always")
def _forward_node(k, n, p, m, D_fac, F, y, x):
    """Node k's forward step of ``_tree_solve``: x_k = D_k^-1 y_k by the factor's substitutions, then
    y_p -= F_k^T y_k (p >= 0). The callers pass n and m as literals for the common block sizes
    (constant trip counts, as ``_eliminate``); the arithmetic of every entry is unchanged."""
    for a in range(n):
        s = y[k, a]
        for q in range(a):
            s -= D_fac[k, a, q] * x[k, q]
        x[k, a] = s
    for a in range(n):
        x[k, a] *= D_fac[k, a, a]
    for a in range(n - 1, -1, -1):
        s = x[k, a]
        for q in range(a + 1, n):
            s -= D_fac[k, q, a] * x[k, q]
        x[k, a] = s
    if p < 0:
        return
    for c in range(m):
        s = 0.0
        for a in range(n):
            s += F[k, a, c] * y[k, a]
        y[p, c] -= s


@kernel(inline="always")
def _back_node(k, n, p, m, F, x):
    """Node k's back step of ``_tree_solve``: x_k -= F_k x_parent (literal n, m as ``_forward_node``)."""
    for a in range(n):
        s = 0.0
        for c in range(m):
            s += F[k, a, c] * x[p, c]
        x[k, a] -= s


@kernel
def _tree_solve(node_count, node_kind, node_ref, node_parent, joint_type, D_fac, F, y, x):
    """x = H^-1 y by the factor (``factor_tree``): the forward and back substitution of the module
    docstring. ``y`` (>= node_count, 6) is overwritten."""
    # forward, leaves first: w_k = D_k^-1 y_k by the factor's substitutions (y_k complete: its
    # children come later in the list), then y_parent -= F_k^T y_k
    for k in range(node_count - 1, -1, -1):
        n = node_size(k, node_kind, node_ref, joint_type)
        p = node_parent[k]
        m = node_size(p, node_kind, node_ref, joint_type) if p >= 0 else 0
        # (issue 19: ``tree_blocks``, the same arithmetic over scalar locals)
        if n == 6 and m == 3:
            forward_6_3(k, p, D_fac, F, y, x)
        elif n == 3 and m == 6:
            forward_3_6(k, p, D_fac, F, y, x)
        elif n == 6 and m == 5:
            forward_6_5(k, p, D_fac, F, y, x)
        elif n == 5 and m == 6:
            forward_5_6(k, p, D_fac, F, y, x)
        elif n == 6 and m == 6:
            forward_6_6(k, p, D_fac, F, y, x)
        elif n == 6 and m == 0:
            forward_6_0(k, p, D_fac, F, y, x)
        elif n == 3 and m == 0:
            forward_3_0(k, p, D_fac, F, y, x)
        elif n == 5 and m == 0:
            forward_5_0(k, p, D_fac, F, y, x)
        else:
            _forward_node(k, n, p, m, D_fac, F, y, x)
    # back, root first: x_k = w_k - F_k x_parent
    for k in range(node_count):
        p = node_parent[k]
        if p < 0:
            continue
        n = node_size(k, node_kind, node_ref, joint_type)
        m = node_size(p, node_kind, node_ref, joint_type)
        if n == 6 and m == 3:
            back_6_3(k, p, F, x)
        elif n == 3 and m == 6:
            back_3_6(k, p, F, x)
        elif n == 6 and m == 5:
            back_6_5(k, p, F, x)
        elif n == 5 and m == 6:
            back_5_6(k, p, F, x)
        elif n == 6 and m == 6:
            back_6_6(k, p, F, x)
        else:
            _back_node(k, n, p, m, F, x)


@kernel(inline="always")
def _tree_rhs(node_count, node_kind, node_ref, joint_type, joint_row_start, row_offset, row_body, row_J, row_bias,
              row_cfm, row_lambda, v_lin, v_ang, y):
    """y = b = [0; zeta - J v - Gamma lambda] (module docstring) at the current velocities."""
    for k in range(node_count):
        for a in range(6):
            y[k, a] = 0.0
        if node_kind[k] == NODE_JOINT:
            r0 = row_offset + joint_row_start[node_ref[k]]
            for a in range(T.JOINT_BASE_ROWS[joint_type[node_ref[k]]]):
                r = r0 + a
                y[k, a] = row_bias[r] - row_velocity(r, row_body, row_J, v_lin, v_ang) - row_cfm[r] * row_lambda[r]


@kernel
def tree_sweep(node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start, row_offset, row_body,
               row_J, row_bias, row_cfm, row_inv_diag, row_lambda, D_fac, F, H_diag, refine, y, x, z, v_lin, v_ang):
    """One exact solve of the tree's equality rows at the current velocities: H x = b with
    b = [0; zeta - J v - Gamma lambda] (``_tree_solve``), then ``refine`` steps of iterative
    refinement (module docstring, "Numerics": x += H^-1 (b - H x), the residual from ``H_diag`` and
    the rows' J), then v += dv and lambda += dlambda (the rows' accumulated impulses; equality rows
    are unbounded). ``y``, ``x``, ``z`` (>= node_count, 6): work space. Returns the largest velocity
    change along a row, |dlambda| (J B)_ii [m/s], as ``rows.sweep_rows`` does."""
    _tree_rhs(node_count, node_kind, node_ref, joint_type, joint_row_start, row_offset, row_body, row_J, row_bias,
              row_cfm, row_lambda, v_lin, v_ang, y)
    _tree_solve(node_count, node_kind, node_ref, node_parent, joint_type, D_fac, F, y, x)
    for _ in range(refine):
        # the residual y = b - H x: the diagonal blocks, then each edge k - parent p, H[k, p] = E_k
        # (a body under a joint: that joint's J block of the body, transposed; a joint under a body:
        # its J block of that body)
        _tree_rhs(node_count, node_kind, node_ref, joint_type, joint_row_start, row_offset, row_body, row_J,
                  row_bias, row_cfm, row_lambda, v_lin, v_ang, y)
        for k in range(node_count):
            n = node_size(k, node_kind, node_ref, joint_type)
            for a in range(n):
                s = 0.0
                for c in range(n):
                    s += H_diag[k, a, c] * x[k, c]
                y[k, a] -= s
            p = node_parent[k]
            if p < 0:
                continue
            bn = k if node_kind[k] == NODE_BODY else p
            jn = p if node_kind[k] == NODE_BODY else k
            g = T.JOINT_BASE_ROWS[joint_type[node_ref[jn]]]
            r0 = row_offset + joint_row_start[node_ref[jn]]
            sd = 0 if row_body[r0, 0] == node_ref[bn] else 1
            for a in range(g):          # joint row a, body coordinate c
                for c in range(6):
                    e = row_J[r0 + a, sd, c]
                    y[jn, a] -= e * x[bn, c]
                    y[bn, c] -= e * x[jn, a]
        _tree_solve(node_count, node_kind, node_ref, node_parent, joint_type, D_fac, F, y, z)
        for k in range(node_count):
            for a in range(6):
                x[k, a] += z[k, a]
    max_dv = 0.0
    for k in range(node_count):
        n = node_size(k, node_kind, node_ref, joint_type)
        if node_kind[k] == NODE_BODY:
            i = node_ref[k]
            for a in range(3):
                v_lin[i, a] += x[k, a]
                v_ang[i, a] += x[k, 3 + a]
        else:
            r0 = row_offset + joint_row_start[node_ref[k]]
            for a in range(n):
                d = -x[k, a]          # x holds -dlambda
                row_lambda[r0 + a] += d
                inv_d = row_inv_diag[r0 + a]
                if inv_d > 0.0:
                    max_dv = max(max_dv, abs(d) / inv_d)
    return max_dv


#: a pivot of the loops' Schur complement (``_close_loops``) at most this fraction of its row's diagonal is a
#: row the tree already implies (a planar hinge chain held at both ends: the closing hinge's axis rows and its
#: out-of-plane point row) and is dropped, its multiplier 0
LOOP_PIVOT_DROP = 1e-9


@kernel(inline="always")
def _tree_response(node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start, row_offset, row_body,
                   row_J, row_cfm, row_inv_diag, zero_bias, scratch_lambda, D_fac, F, H_diag, y, x, w_lin, w_ang):
    """w <- P w with P the displacement the tree's rows allow: the tree solve with targets 0 applied to the
    displacement w (``tree_sweep``: w += M^-1 J_T^T dlambda with J_T (w + dw) = 0). The tree's bodies only
    are touched (the loop joints' bodies are tree bodies)."""
    for k in range(node_count):
        if node_kind[k] == NODE_JOINT:
            r0 = row_offset + joint_row_start[node_ref[k]]
            for a in range(T.JOINT_BASE_ROWS[joint_type[node_ref[k]]]):
                scratch_lambda[r0 + a] = 0.0
    tree_sweep(node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start, row_offset, row_body, row_J,
               zero_bias, row_cfm, row_inv_diag, scratch_lambda, D_fac, F, H_diag, 0, y, x, x, w_lin, w_ang)


@kernel(inline="always")
def _clear_tree_bodies(node_count, node_kind, node_ref, w_lin, w_ang):
    for k in range(node_count):
        if node_kind[k] == NODE_BODY:
            i = node_ref[k]
            for c in range(3):
                w_lin[i, c] = 0.0
                w_ang[i, c] = 0.0


@kernel
def _close_loops(loop_rows, loop_row, node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start,
                 row_offset, row_body, row_J, row_B, row_bias, row_cfm, row_inv_diag, zero_bias, scratch_lambda,
                 D_fac, F, H_diag, y, x, w_lin, w_ang, schur, schur_fac, loop_rhs, loop_mu, disp_lin, disp_ang):
    """The loop joints' rows J_L added to one Newton step of ``project_tree`` exactly [tumble, issue 18].

    The step's displacement is the least-metric dx with J_T dx = -C_T (the tree) and J_L dx = -C_L (the
    loops). ``disp`` holds the tree's own step dx_0 (J_T dx_0 = -C_T); every dx with J_T dx = -C_T is
    dx_0 + P M^-1 J_L^T mu, P the tree's projection (``_tree_response``), so the loops ask

        S mu = -C_L - J_L dx_0,    S = J_L P M^-1 J_L^T  (the Schur complement of the tree's block in the
                                                          KKT matrix of all rows; Baraff 1996 splits loops
                                                          off the tree the same way)

    S (loop rows x loop rows, symmetric semidefinite) is built column by column, one tree solve per loop
    row (w = B_l = M^-1 J_l^T, then P w), factored L diag(d) L^T with the rows the tree already implies
    dropped (``LOOP_PIVOT_DROP``), and the step gets P M^-1 J_L^T mu (one more tree solve). Cost: (loop
    rows + 1) tree solves and a dense factor of S per Newton step. Rows with compliance (springs) are no
    position constraints: their multiplier stays 0. Before, a loop joint was left to the capped
    Gauss-Seidel passes (fraction 0.3, 4 passes), which close a loop over a chain about one link per pass:
    the bridge's joints kept 3-4 mm open at rest under shock (pgs 0.02-0.1 mm)."""
    for q in range(loop_rows):
        loop_rhs[q] = row_bias[loop_row[q]] - row_velocity(loop_row[q], row_body, row_J, disp_lin, disp_ang)
    for col in range(loop_rows):
        r = loop_row[col]
        _clear_tree_bodies(node_count, node_kind, node_ref, w_lin, w_ang)
        if row_cfm[r] == 0.0:
            for side in range(2):
                b = row_body[r, side]
                if b < 0:
                    continue
                for c in range(3):
                    w_lin[b, c] += row_B[r, side, c]
                    w_ang[b, c] += row_B[r, side, 3 + c]
            _tree_response(node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start, row_offset,
                           row_body, row_J, row_cfm, row_inv_diag, zero_bias, scratch_lambda, D_fac, F, H_diag, y, x,
                           w_lin, w_ang)
        for q in range(loop_rows):
            schur[q, col] = row_velocity(loop_row[q], row_body, row_J, w_lin, w_ang) if row_cfm[r] == 0.0 else 0.0
    # L diag(d) L^T of the symmetrised S; d stored on the diagonal of schur_fac (0: dropped)
    for c in range(loop_rows):
        for a in range(c + 1):
            v = 0.5 * (schur[c, a] + schur[a, c])
            for k in range(a):
                v -= schur_fac[c, k] * schur_fac[a, k] * schur_fac[k, k]
            if a < c:
                schur_fac[c, a] = v / schur_fac[a, a] if schur_fac[a, a] > 0.0 else 0.0
            else:
                schur_fac[c, c] = v if v > LOOP_PIVOT_DROP * schur[c, c] and v > 0.0 else 0.0
    for a in range(loop_rows):          # forward: L z = rhs, then z / d
        v = loop_rhs[a]
        for k in range(a):
            v -= schur_fac[a, k] * loop_mu[k]
        loop_mu[a] = v
    for a in range(loop_rows):
        loop_mu[a] = loop_mu[a] / schur_fac[a, a] if schur_fac[a, a] > 0.0 else 0.0
    for a in range(loop_rows - 1, -1, -1):      # back: L^T mu = z
        v = loop_mu[a]
        for k in range(a + 1, loop_rows):
            v -= schur_fac[k, a] * loop_mu[k]
        loop_mu[a] = v if schur_fac[a, a] > 0.0 else 0.0
    _clear_tree_bodies(node_count, node_kind, node_ref, w_lin, w_ang)
    for q in range(loop_rows):
        r = loop_row[q]
        for side in range(2):
            b = row_body[r, side]
            if b < 0:
                continue
            for c in range(3):
                w_lin[b, c] += row_B[r, side, c] * loop_mu[q]
                w_ang[b, c] += row_B[r, side, 3 + c] * loop_mu[q]
    _tree_response(node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start, row_offset, row_body,
                   row_J, row_cfm, row_inv_diag, zero_bias, scratch_lambda, D_fac, F, H_diag, y, x, w_lin, w_ang)
    for k in range(node_count):
        if node_kind[k] == NODE_BODY:
            i = node_ref[k]
            for c in range(3):
                disp_lin[i, c] += w_lin[i, c]
                disp_ang[i, c] += w_ang[i, c]


@kernel(inline="always")
def joint_row_scratch(rows):
    """Scratch for ``rows`` joint rows in the row store's layout (body pair, J and B per side, 1/(J B),
    biases, bounds, friction link and mu, kind, lambda, owner, cfm, group), for the kernels that write
    the joint rows themselves (``project_tree``, ``settle_loop_velocities``). J, lambda and cfm start at
    zero: rows a joint type leaves unwritten stay inert."""
    return (np.empty((rows, 2), dtype=np.int64), np.zeros((rows, 2, 6)), np.empty((rows, 2, 6)), np.empty(rows),
            np.empty(rows), np.empty(rows), np.empty(rows), np.empty(rows), np.empty(rows, dtype=np.int64),
            np.empty(rows), np.empty(rows, dtype=np.int64), np.zeros(rows), np.empty(rows, dtype=np.int64),
            np.zeros(rows), np.empty(rows, dtype=np.int64))


@kernel(inline="always")
def tree_factor_scratch(nodes):
    """Scratch of the tree factor and solve over ``nodes`` nodes: D, its factor, F, H's diagonal blocks
    (6 x 6 each) and the two 6-vectors y, x per node."""
    return (np.empty((nodes, 6, 6)), np.empty((nodes, 6, 6)), np.empty((nodes, 6, 6)), np.empty((nodes, 6, 6)),
            np.empty((nodes, 6)), np.empty((nodes, 6)))


@kernel
def project_tree(node_count, node_kind, node_ref, node_parent, node_side, joint_type, joint_body, joint_anchor,
                 joint_axis, joint_ref, joint_rel_q, joint_length, joint_soft, joint_has_limits, joint_limit,
                 joint_motor_mode, joint_motor, joint_row_start, joint_row_total, joint_impulse, joint_coord,
                 joint_lever, body_position, body_orientation, body_mass, body_inv_mass, body_inv_inertia_world,
                 body_fixed, dt, iterations, tolerance, loop_joints):
    """Newton's method on the tree joints' position errors C(x) = 0, each iteration one exact tree
    solve: the rows J and errors C at the current poses (``write_joint_rows`` with beta = 1 / dt and
    no speed cap, so the target times dt is -C), then the displacement of least kinetic metric that
    removes the linearised error, J M^-1 J^T lambda = -C, dx = M^-1 J^T lambda (the tree solve with
    b = [0; -C]), applied to every tree body (the position and the exact rotation of the rotation
    vector, ``displace_body``). Converges quadratically: the error left is second order in the
    rotations. Velocities are untouched. Stops before ``iterations`` once the largest equality error
    is at most ``tolerance`` [m or rad]. A step that leaves a larger error than it found (and above
    the tolerance: not rounding) is undone and ends the projection: far from the constraint manifold
    (rotations of a large fraction of a radian) the linearisation overshoots; the caller then runs the
    capped Gauss-Seidel passes. Soft rows (springs) are not position constraints (an
    enormous compliance keeps their multipliers at zero). ``loop_joints`` (int64): active joints outside
    the tree (they close loops) whose equality rows each Newton step also solves exactly, by the Schur
    complement of the tree (``_close_loops``); empty: the tree alone (pgs). Returns (largest error
    before, after, whether a step was undone), the loops' rows included."""
    rows = max(joint_row_total, 1)
    (row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind,
     row_lambda, row_owner, row_cfm, row_group) = joint_row_scratch(rows)
    D, D_fac, F, H_diag, y, x = tree_factor_scratch(max(node_count, 1))
    n = body_position.shape[0]
    disp_lin = np.zeros((n, 3))
    disp_ang = np.zeros((n, 3))
    jp = np.array([1.0 / dt, math.inf, 0.0, 1.0, dt, dt])
    save_x = np.empty((max(node_count, 1), 3))
    save_q = np.empty((max(node_count, 1), 4))
    first = 0.0
    worst = 0.0
    prev = math.inf
    undone = False
    # the tree's joints (active) in runs of consecutive indices, whose rows follow each other (the
    # registry's layout): one write_joint_rows call per run, not per joint (a call references and
    # releases its 36 array arguments: ~0.46 us, 200 of them per Newton step on ragdolls)
    in_tree = np.zeros(joint_type.shape[0], dtype=np.bool_)
    for k in range(node_count):
        if node_kind[k] == NODE_JOINT:
            in_tree[node_ref[k]] = True
    # the loop joints' rows are written with the tree's (``in_tree`` here only selects the rows to write)
    loop_rows = 0
    for q in range(loop_joints.shape[0]):
        in_tree[loop_joints[q]] = True
        loop_rows += T.JOINT_BASE_ROWS[joint_type[loop_joints[q]]]
    lr = max(loop_rows, 1)
    loop_row = np.empty(lr, dtype=np.int64)
    schur = np.empty((lr, lr))
    schur_fac = np.empty((lr, lr))
    loop_rhs = np.empty(lr)
    loop_mu = np.empty(lr)
    zero_bias = np.zeros(rows)
    scratch_lambda = np.zeros(rows)
    w_lin = np.zeros((n, 3))
    w_ang = np.zeros((n, 3))
    q = 0
    for t_ in range(loop_joints.shape[0]):
        j = loop_joints[t_]
        for a in range(T.JOINT_BASE_ROWS[joint_type[j]]):
            loop_row[q] = joint_row_start[j] + a
            q += 1
    for it in range(iterations + 1):
        worst = 0.0
        j = 0
        while j < in_tree.shape[0]:
            if not in_tree[j]:
                j += 1
                continue
            e = j + 1
            while e < in_tree.shape[0] and in_tree[e]:
                e += 1
            write_joint_rows(j, e, joint_row_start[j], jp, False, True, joint_type, joint_body, joint_anchor,
                             joint_axis, joint_ref, joint_rel_q, joint_length, joint_soft, joint_has_limits,
                             joint_limit, joint_motor_mode, joint_motor, joint_impulse, joint_coord, joint_lever,
                             body_position, body_orientation, body_inv_mass, body_inv_inertia_world, body_fixed,
                             row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link,
                             row_mu, row_kind, row_lambda, row_owner, row_cfm, row_group)
            j = e
        for k in range(node_count):
            if node_kind[k] != NODE_JOINT:
                continue
            j = node_ref[k]
            r0 = joint_row_start[j]
            for a in range(T.JOINT_BASE_ROWS[joint_type[j]]):
                r = r0 + a
                t = row_bias[r] * dt          # -C
                row_bias[r] = t
                row_lambda[r] = 0.0
                if row_cfm[r] == 0.0 and abs(t) > worst:
                    worst = abs(t)
        for q in range(loop_rows):
            r = loop_row[q]
            t = row_bias[r] * dt          # -C of the loop joint's row
            row_bias[r] = t
            if row_cfm[r] == 0.0 and abs(t) > worst:
                worst = abs(t)
        if it == 0:
            first = worst
        if worst > prev and worst > tolerance:
            # the last step made the error larger (a linearisation far from valid: rotations of
            # a large fraction of a radian): undo it and leave the rest to the caller
            for k in range(node_count):
                if node_kind[k] == NODE_BODY:
                    i = node_ref[k]
                    for c in range(3):
                        body_position[i, c] = save_x[k, c]
                    for c in range(4):
                        body_orientation[i, c] = save_q[k, c]
            worst = prev
            undone = True
            break
        if it == iterations or worst <= tolerance:
            break
        prev = worst
        for k in range(node_count):
            if node_kind[k] == NODE_BODY:
                i = node_ref[k]
                for c in range(3):
                    save_x[k, c] = body_position[i, c]
                for c in range(4):
                    save_q[k, c] = body_orientation[i, c]
        factor_tree(node_count, node_kind, node_ref, node_parent, node_side, joint_type, joint_row_start, 0, row_J,
                    row_cfm, body_mass, body_inv_inertia_world, 1e200, D, D_fac, F, H_diag)
        tree_sweep(node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start, 0, row_body, row_J,
                   row_bias, row_cfm, row_inv_diag, row_lambda, D_fac, F, H_diag, 0, y, x, x, disp_lin, disp_ang)
        if loop_rows:
            _close_loops(loop_rows, loop_row, node_count, node_kind, node_ref, node_parent, joint_type,
                         joint_row_start, 0, row_body, row_J, row_B, row_bias, row_cfm, row_inv_diag, zero_bias,
                         scratch_lambda, D_fac, F, H_diag, y, x, w_lin, w_ang, schur, schur_fac, loop_rhs, loop_mu,
                         disp_lin, disp_ang)
        for k in range(node_count):
            if node_kind[k] == NODE_BODY:
                i = node_ref[k]
                displace_body(i, disp_lin, disp_ang, body_position, body_orientation)
                for c in range(3):
                    disp_lin[i, c] = 0.0
                    disp_ang[i, c] = 0.0
    return first, worst, undone


@kernel
def settle_loop_velocities(node_count, node_kind, node_ref, node_parent, node_side, joint_type, joint_body,
                           joint_anchor, joint_axis, joint_ref, joint_rel_q, joint_length, joint_soft, joint_has_limits,
                           joint_limit, joint_motor_mode, joint_motor, joint_row_start, joint_row_total, joint_impulse,
                           joint_coord, joint_lever, body_position, body_orientation, body_mass, body_inv_mass,
                           body_inertia_local, body_inv_inertia_world, body_fixed, v_lin, v_ang, dt, loop_joints):
    """The velocities projected onto the joints' equality rows in the kinetic metric [tumble, issue 18]:
    v <- v + M^-1 J^T lambda with J v = 0 on the tree's rows and the ``loop_joints``' rows (the tree
    solve with targets 0, then the loops by ``_close_loops``), the rows at the current poses. The
    M-orthogonal projection onto {J v = 0} never raises the kinetic energy; should rounding or a dropped
    pivot make it do so, the velocities are restored. Returns whether they were.

    Why: shock's velocity solves are Gauss-Seidel on the joint rows, which carry a correction around a
    loop of n joints about one joint per sweep; the bridge's planks (a chain held at both ends) kept
    falling in velocity while the joint projection, once exact on the loop (``project_tree`` with
    ``loop_joints``), lifted them back each step: +48 J above the bridge's start energy in its first
    0.1 s (no motor), where this projection leaves none. The loopless trees have ``settle_joint_tree``."""
    rows = max(joint_row_total, 1)
    (row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind,
     row_lambda, row_owner, row_cfm, row_group) = joint_row_scratch(rows)
    m = max(node_count, 1)
    D, D_fac, F, H_diag, y, x = tree_factor_scratch(m)
    n = body_position.shape[0]
    jp = np.array([1.0 / dt, math.inf, 0.0, 1.0, dt, dt])
    write = np.zeros(joint_type.shape[0], dtype=np.bool_)
    for k in range(node_count):
        if node_kind[k] == NODE_JOINT:
            write[node_ref[k]] = True
    loop_rows = 0
    for q in range(loop_joints.shape[0]):
        write[loop_joints[q]] = True
        loop_rows += T.JOINT_BASE_ROWS[joint_type[loop_joints[q]]]
    j = 0
    while j < write.shape[0]:
        if not write[j]:
            j += 1
            continue
        e = j + 1
        while e < write.shape[0] and write[e]:
            e += 1
        write_joint_rows(j, e, joint_row_start[j], jp, False, True, joint_type, joint_body, joint_anchor,
                         joint_axis, joint_ref, joint_rel_q, joint_length, joint_soft, joint_has_limits,
                         joint_limit, joint_motor_mode, joint_motor, joint_impulse, joint_coord, joint_lever,
                         body_position, body_orientation, body_inv_mass, body_inv_inertia_world, body_fixed,
                         row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link,
                         row_mu, row_kind, row_lambda, row_owner, row_cfm, row_group)
        j = e
    zero_bias = np.zeros(rows)
    lr = max(loop_rows, 1)
    loop_row = np.empty(lr, dtype=np.int64)
    q = 0
    for t_ in range(loop_joints.shape[0]):
        j = loop_joints[t_]
        for a in range(T.JOINT_BASE_ROWS[joint_type[j]]):
            loop_row[q] = joint_row_start[j] + a
            q += 1
    # the velocities before, and their kinetic energy (the guard)
    save_lin = np.empty((m, 3))
    save_ang = np.empty((m, 3))
    before = 0.0
    for k in range(node_count):
        if node_kind[k] == NODE_BODY:
            i = node_ref[k]
            for c in range(3):
                save_lin[k, c] = v_lin[i, c]
                save_ang[k, c] = v_ang[i, c]
            before += _kinetic(i, body_mass, body_orientation, body_inertia_local, v_lin, v_ang)
    factor_tree(node_count, node_kind, node_ref, node_parent, node_side, joint_type, joint_row_start, 0, row_J,
                row_cfm, body_mass, body_inv_inertia_world, 1e200, D, D_fac, F, H_diag)
    tree_sweep(node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start, 0, row_body, row_J,
               zero_bias, row_cfm, row_inv_diag, row_lambda, D_fac, F, H_diag, 0, y, x, x, v_lin, v_ang)
    if loop_rows:
        _close_loops(loop_rows, loop_row, node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start,
                     0, row_body, row_J, row_B, zero_bias, row_cfm, row_inv_diag, zero_bias, np.zeros(rows), D_fac, F,
                     H_diag, y, x, np.zeros((n, 3)), np.zeros((n, 3)), np.empty((lr, lr)), np.empty((lr, lr)),
                     np.empty(lr), np.empty(lr), v_lin, v_ang)
    after = 0.0
    for k in range(node_count):
        if node_kind[k] == NODE_BODY:
            after += _kinetic(node_ref[k], body_mass, body_orientation, body_inertia_local, v_lin, v_ang)
    if after <= before:
        return False
    for k in range(node_count):
        if node_kind[k] == NODE_BODY:
            i = node_ref[k]
            for c in range(3):
                v_lin[i, c] = save_lin[k, c]
                v_ang[i, c] = save_ang[k, c]
    return True


@kernel(inline="always")
def _kinetic(i, body_mass, body_orientation, body_inertia_local, v_lin, v_ang):
    """Body i's kinetic energy 1/2 m v^2 + 1/2 w_b^T I_b w_b (w_b = R^T w, the body frame)."""
    qw = body_orientation[i, 0]
    qx = body_orientation[i, 1]
    qy = body_orientation[i, 2]
    qz = body_orientation[i, 3]
    wx = v_ang[i, 0]
    wy = v_ang[i, 1]
    wz = v_ang[i, 2]
    # R^T w for q = (w, x, y, z)
    b0 = (1 - 2 * (qy * qy + qz * qz)) * wx + 2 * (qx * qy + qw * qz) * wy + 2 * (qx * qz - qw * qy) * wz
    b1 = 2 * (qx * qy - qw * qz) * wx + (1 - 2 * (qx * qx + qz * qz)) * wy + 2 * (qy * qz + qw * qx) * wz
    b2 = 2 * (qx * qz + qw * qy) * wx + 2 * (qy * qz - qw * qx) * wy + (1 - 2 * (qx * qx + qy * qy)) * wz
    I = body_inertia_local
    e = body_mass[i] * (v_lin[i, 0] ** 2 + v_lin[i, 1] ** 2 + v_lin[i, 2] ** 2)
    e += (b0 * (I[i, 0, 0] * b0 + I[i, 0, 1] * b1 + I[i, 0, 2] * b2) + b1 * (I[i, 1, 0] * b0 + I[i, 1, 1] * b1
          + I[i, 1, 2] * b2) + b2 * (I[i, 2, 0] * b0 + I[i, 2, 1] * b1 + I[i, 2, 2] * b2))
    return 0.5 * e


class JointTree:
    """The joint tree of one step (``build_joint_tree``) and its factor's work space: built once per
    step from the core state (O(bodies + joints), so joints added, broken or removed and bodies made
    fixed between steps need no bookkeeping), factored whenever the joint rows are rebuilt."""

    def __init__(self, core):
        b, js = core.bodies, core.joint_store
        n = b.count + js.count
        self.kind = np.empty(n, dtype=np.int64)
        self.ref = np.empty(n, dtype=np.int64)
        self.parent = np.empty(n, dtype=np.int64)
        self.side = np.empty(n, dtype=np.int64)
        self.in_tree = np.zeros(js.count, dtype=np.bool_)
        self.count = int(build_joint_tree(js.count, js.joint_active, js.joint_body, b.body_fixed, b.body_mass,
                                          b.count, self.in_tree, self.kind, self.ref, self.parent, self.side))
        m = max(self.count, 1)
        self.D = np.empty((m, 6, 6))
        self.D_fac = np.empty((m, 6, 6))
        self.F = np.empty((m, 6, 6))
        self.H_diag = np.empty((m, 6, 6))
        self.y = np.empty((m, 6))
        self.x = np.empty((m, 6))
        self.z = np.empty((m, 6))
        #: refinement steps of each ``tree_sweep`` on the current factor (``factor``)
        self.refine = 0
        #: the loop joints the projections close exactly (``stages.closable_loops``; None: not asked yet)
        self.loops = None

    def factor(self, core, offset: int) -> None:
        """Mark the tree's rows (from row ``offset`` on) for the sweeps to skip and factor H at them;
        ``refine`` = REFINE_STEPS when a pivot's spread passes REFINE_SPREAD, else 0."""
        js, r, b = core.joint_store, core.rows, core.bodies
        mark_tree_rows(self.count, self.kind, self.ref, js.joint_type, js.joint_row_start, offset, r.row_group)
        spread = factor_tree(self.count, self.kind, self.ref, self.parent, self.side, js.joint_type,
                             js.joint_row_start, offset, r.row_J, r.row_cfm, b.body_mass, b.body_inv_inertia_world,
                             0.0, self.D, self.D_fac, self.F, self.H_diag)
        self.refine = REFINE_STEPS if spread > REFINE_SPREAD else 0
