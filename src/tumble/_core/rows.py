"""Gauss-Seidel row kernels shared by every row-based solver (pgs, shock) and the joint projection:
projected Gauss-Seidel on J B lambda = eta (Catto 001 Alg. 4; Erleben 000 eq. 28-30).

The kernel keeps the body velocities V (6 per body) current instead of Catto's a = B lambda:
with V = V_pred + B lambda, the row update of Alg. 4,

    d_i = (eta_i - J_i a) / d_ii,   eta_i = zeta_i - J_i V_pred        (001 eq. 35, impulse form)

is the same as  d_i = (zeta_i - J_i V) / d_ii.  The new lambda_i is clamped to its bounds (for a
friction row the bounds are +-mu lambda_n of its normal row at that moment, 000 eq. 29) and the
actually applied increment is scattered back through B (Alg. 4's a update).
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core.config import kernel


@kernel(inline="always")
def write_pair_jacobian(r, ia, ib, dx, dy, dz, rax, ray, raz, rbx, rby, rbz, row_body, row_J):
    """Row r between bodies ia and ib along the direction d through the points a + r_a and b + r_b:
    J = [-d, -(r_a x d), d, r_b x d] (001 §3: the relative velocity of the two points along d is J v).
    Shared by the contact rows (``contact.rows.fill_row_scalars``) and the joints' linear rows
    (``joints.common.put_linear``)."""
    row_body[r, 0] = ia
    row_body[r, 1] = ib
    row_J[r, 0, 0] = -dx
    row_J[r, 0, 1] = -dy
    row_J[r, 0, 2] = -dz
    row_J[r, 0, 3] = -(ray * dz - raz * dy)
    row_J[r, 0, 4] = -(raz * dx - rax * dz)
    row_J[r, 0, 5] = -(rax * dy - ray * dx)
    row_J[r, 1, 0] = dx
    row_J[r, 1, 1] = dy
    row_J[r, 1, 2] = dz
    row_J[r, 1, 3] = rby * dz - rbz * dy
    row_J[r, 1, 4] = rbz * dx - rbx * dz
    row_J[r, 1, 5] = rbx * dy - rby * dx


#: columns of a compact pairwise row (``pack_pair_rows``): d (3, the b side's linear J; the a side's
#: is -d), the a and b sides' angular J (3 + 3), their angular B = I_w^-1 J_ang^T (3 + 3), the two
#: inverse masses (0 on a fixed side) and 1 / (J B)
PAIR_COLUMNS = 18


@kernel(inline="always")
def pack_pair_row(r, row_body, row_J, row_B, row_inv_diag, body_inv_mass, row_C):
    """Row r of ``row_C`` from row r of the pairwise layout. A contact row (``write_pair_jacobian``)
    has J_a,lin = -J_b,lin = -d and B_lin = m^-1 J_lin (001 eq. 34), so d, the two angular J, the two
    angular B and the two inverse masses carry it: 17 doubles (+ 1 / (J B)) where J and B take 24. Every
    product of the sweep keeps its factors: (-d_k) v_k is J_a,k v_k, and m^-1 (-d_k) is B_a,k as
    ``fill_row_scalars`` computed it (negation is exact in IEEE arithmetic), so ``pair_rows_scalar``
    gives the same bits as ``sweep_rows`` on these rows."""
    for c in range(3):
        row_C[r, c] = row_J[r, 1, c]
        row_C[r, 3 + c] = row_J[r, 0, 3 + c]
        row_C[r, 6 + c] = row_J[r, 1, 3 + c]
        row_C[r, 9 + c] = row_B[r, 0, 3 + c]
        row_C[r, 12 + c] = row_B[r, 1, 3 + c]
    ia = row_body[r, 0]
    ib = row_body[r, 1]
    row_C[r, 15] = body_inv_mass[ia] if ia >= 0 else 0.0
    row_C[r, 16] = body_inv_mass[ib] if ib >= 0 else 0.0
    row_C[r, 17] = row_inv_diag[r]


@kernel
def pack_pair_rows(row_count, row_body, row_J, row_B, row_inv_diag, body_inv_mass, row_C):
    """``row_C`` (>= row_count, PAIR_COLUMNS): the compact copy of rows [0, row_count), all pairwise rows
    with B = M^-1 J^T of the bodies' inverse masses now (contact rows; ``pack_pair_row``). The sweeps of
    a step read it instead of J and B (issue 19: 144 bytes a row instead of 200, and a sweep with no
    branches for groups, fixation or constraint force mixing)."""
    for r in range(row_count):
        pack_pair_row(r, row_body, row_J, row_B, row_inv_diag, body_inv_mass, row_C)


@kernel
def repack_changed_rows(row_count, row_body, row_J, row_B, row_inv_diag, body_inv_mass, changed, row_C):
    """``pack_pair_row`` again for the rows of [0, row_count) with a side in ``changed`` (the bodies
    ``contact.rows.refresh_turned_rows`` gave a new B and 1 / (J B))."""
    for r in range(row_count):
        ia = row_body[r, 0]
        ib = row_body[r, 1]
        if (ia >= 0 and changed[ia]) or (ib >= 0 and changed[ib]):
            pack_pair_row(r, row_body, row_J, row_B, row_inv_diag, body_inv_mass, row_C)


@kernel(inline="always")
def projected_step(old, zeta, jv, inv_d, lo, hi):
    """``clamped_update`` of a rigid row (gamma = 0, omega = 1) from scalars: lambda + (zeta - J v) / A_ii
    projected on [lo, hi], the same operations (1.0 x is exact), so the same bits."""
    new = old + (zeta - jv) * inv_d
    if new < lo:
        new = lo
    elif new > hi:
        new = hi
    return new


@kernel(inline="always")
def pair_rows_scalar(start, stop, which, row_body, row_C, row_bias, row_lo, row_hi, row_link, row_mu, lam, v_lin,
                     v_ang):
    """The projected Gauss-Seidel update of ``sweep_rows`` on the compact rows start..stop-1
    (``pack_pair_rows``; ``which`` 0: every row, 1: the friction rows (r % 3 != 0 in the contact layout),
    2: the normal rows), for rows with no constraint force mixing and no groups (contact rows):
    d_i = (zeta_i - J_i v) / (J B)_ii clamped (``clamped_value``), V += B d_i on the movable sides,
    with the same operations in the same order, so the same bits. Returns the largest velocity change
    |delta| (J B)_ii [m/s].

    Written out, with no helper that takes arrays (kernel rule 2): each inlined call of one
    (``row_velocity``, the old ``clamped_update``, ``apply_movable``) takes and drops a reference per array
    argument for every row. Measured on stack10's 120 rows (CPU ns a row update, this machine):
    ``pgs_sweep`` 22, the compact rows read through such helpers 35, the same with J v and B delta
    written out 17, and with the update written out too 8."""
    max_dv = 0.0
    for r in range(start, stop):
        if (which == 1 and r % 3 == 0) or (which == 2 and r % 3 != 0):
            continue
        inv_d = row_C[r, 17]
        if inv_d == 0.0:
            continue
        ia = row_body[r, 0]
        ib = row_body[r, 1]
        dx = row_C[r, 0]
        dy = row_C[r, 1]
        dz = row_C[r, 2]
        jv = 0.0        # row_velocity's sum, term by term ((-d_k) v_k is J_a,k v_k bit for bit)
        if ia >= 0:
            jv += -dx * v_lin[ia, 0] + -dy * v_lin[ia, 1] + -dz * v_lin[ia, 2]
            jv += row_C[r, 3] * v_ang[ia, 0] + row_C[r, 4] * v_ang[ia, 1] + row_C[r, 5] * v_ang[ia, 2]
        if ib >= 0:
            jv += dx * v_lin[ib, 0] + dy * v_lin[ib, 1] + dz * v_lin[ib, 2]
            jv += row_C[r, 6] * v_ang[ib, 0] + row_C[r, 7] * v_ang[ib, 1] + row_C[r, 8] * v_ang[ib, 2]
        lo = row_lo[r]
        hi = row_hi[r]
        link = row_link[r]
        if link >= 0:       # a friction row: +-mu lambda of its normal row (000 eq. 29)
            hi = row_mu[r] * lam[link]
            lo = -hi
        old = lam[r]
        new = projected_step(old, row_bias[r], jv, inv_d, lo, hi)
        delta = new - old
        if delta != 0.0:
            lam[r] = new
            dv = abs(delta) / inv_d
            if dv > max_dv:
                max_dv = dv
            if ia >= 0:     # V += B delta, B_lin = m^-1 J_lin as fill_row_scalars formed it
                im = row_C[r, 15]
                v_lin[ia, 0] += delta * (im * -dx)
                v_lin[ia, 1] += delta * (im * -dy)
                v_lin[ia, 2] += delta * (im * -dz)
                v_ang[ia, 0] += delta * row_C[r, 9]
                v_ang[ia, 1] += delta * row_C[r, 10]
                v_ang[ia, 2] += delta * row_C[r, 11]
            if ib >= 0:
                im = row_C[r, 16]
                v_lin[ib, 0] += delta * (im * dx)
                v_lin[ib, 1] += delta * (im * dy)
                v_lin[ib, 2] += delta * (im * dz)
                v_ang[ib, 0] += delta * row_C[r, 12]
                v_ang[ib, 1] += delta * row_C[r, 13]
                v_ang[ib, 2] += delta * row_C[r, 14]
    return max_dv


@kernel
def warm_start_pairs(row_count, row_body, row_C, row_lambda, v_lin, v_ang):
    """``warm_start`` on the compact rows: V += B lambda0 (001 §8), the same bits."""
    for r in range(row_count):
        lam = row_lambda[r]
        if lam == 0.0:
            continue
        ia = row_body[r, 0]
        ib = row_body[r, 1]
        dx = row_C[r, 0]
        dy = row_C[r, 1]
        dz = row_C[r, 2]
        if ia >= 0:
            im = row_C[r, 15]
            v_lin[ia, 0] += lam * (im * -dx)
            v_lin[ia, 1] += lam * (im * -dy)
            v_lin[ia, 2] += lam * (im * -dz)
            v_ang[ia, 0] += lam * row_C[r, 9]
            v_ang[ia, 1] += lam * row_C[r, 10]
            v_ang[ia, 2] += lam * row_C[r, 11]
        if ib >= 0:
            im = row_C[r, 16]
            v_lin[ib, 0] += lam * (im * dx)
            v_lin[ib, 1] += lam * (im * dy)
            v_lin[ib, 2] += lam * (im * dz)
            v_ang[ib, 0] += lam * row_C[r, 12]
            v_ang[ib, 1] += lam * row_C[r, 13]
            v_ang[ib, 2] += lam * row_C[r, 14]


@kernel
def sweep_pair_rows(start, stop, row_body, row_C, row_bias, row_lo, row_hi, row_link, row_mu, lam, v_lin, v_ang):
    """One projected Gauss-Seidel sweep over the compact rows [start, stop) (``pair_rows_scalar``):
    ``pgs_sweep`` on contact rows, bit for bit. Returns the largest velocity change [m/s]."""
    return pair_rows_scalar(start, stop, 0, row_body, row_C, row_bias, row_lo, row_hi, row_link, row_mu, lam, v_lin,
                            v_ang)


@kernel(inline="always")
def row_velocity(r, row_body, row_J, v_lin, v_ang):
    s = 0.0
    for side in range(2):
        b = row_body[r, side]
        if b < 0:
            continue
        s += row_J[r, side, 0] * v_lin[b, 0] + row_J[r, side, 1] * v_lin[b, 1] + row_J[r, side, 2] * v_lin[b, 2]
        s += row_J[r, side, 3] * v_ang[b, 0] + row_J[r, side, 4] * v_ang[b, 1] + row_J[r, side, 5] * v_ang[b, 2]
    return s


@kernel
def warm_start(row_count, row_body, row_B, row_lambda, v_lin, v_ang):
    """V += B lambda0 (the cached impulses of the previous step, 001 §8)."""
    none = np.empty(0, dtype=np.int64)
    for r in range(row_count):
        lam = row_lambda[r]
        if lam != 0.0:
            apply_movable(r, lam, -1, none, row_body, row_B, v_lin, v_ang)


@kernel(inline="always")
def movable(b, layer, body_height):
    """Whether side body ``b`` takes impulses in ``layer`` (-1: the whole system, no fixation): in stack
    layer i the bodies of height i + 1 move and every lower side is fixated (height i, or lower when the
    heights follow the "rests on" order, ``contact.layers.rest_order_heights``)."""
    return b >= 0 and (layer < 0 or body_height[b] > layer)


@kernel(inline="always")
def apply_movable(r, delta, layer, body_height, row_body, row_B, v_lin, v_ang):
    """V += B_r delta on the sides of row r that are movable in ``layer`` (fixated sides keep V)."""
    for side in range(2):
        b = row_body[r, side]
        if not movable(b, layer, body_height):
            continue
        for c in range(3):
            v_lin[b, c] += delta * row_B[r, side, c]
            v_ang[b, c] += delta * row_B[r, side, 3 + c]


@kernel
def solve_group(r0, g, layer, body_height, row_body, row_J, row_B, row_bias, row_cfm, lam, v_lin, v_ang, cfm):
    """Block Gauss-Seidel step for the ``g`` consecutive unbounded rows r0..r0+g-1 of one body pair
    (a joint's equality rows): solve  (K + Gamma) dlambda = zeta - J v - Gamma lambda  exactly, with
    K = J M^-1 J^T restricted to the sides movable in ``layer`` (K_ik = sum_side J_i,side . B_k,side)
    and Gamma the rows' constraint force mixing, then V += B dlambda (Box2D's block solve of a
    joint's point constraint, generalised to all of a joint's equality rows). The rows of a joint are
    strongly coupled through the lever arms (r x e_k), which scalar sweeps resolve slowly: a
    five-box welded cantilever oscillated and broke loose under 10 scalar sweeps with warm starting.
    Returns the largest velocity change along a row [m/s]."""
    K = np.zeros((6, 6))
    res = np.zeros(6)
    ia = row_body[r0, 0]
    ib = row_body[r0, 1]
    ma = movable(ia, layer, body_height)
    mb = movable(ib, layer, body_height)
    for i in range(g):
        ri = r0 + i
        gam = cfm + row_cfm[ri]
        res[i] = row_bias[ri] - row_velocity(ri, row_body, row_J, v_lin, v_ang) - gam * lam[ri]
        for k in range(i + 1):
            rk = r0 + k
            s = 0.0
            if ma:
                for c in range(6):
                    s += row_J[ri, 0, c] * row_B[rk, 0, c]
            if mb:
                for c in range(6):
                    s += row_J[ri, 1, c] * row_B[rk, 1, c]
            K[i, k] = s
            K[k, i] = s
        K[i, i] += gam
    # Cholesky K = L L^T in place (lower triangle); a pivot that vanishes (a row with no movable
    # freedom) drops that row from this visit
    scale = 0.0
    for i in range(g):
        scale = max(scale, K[i, i])
    if scale <= 0.0:
        return 0.0
    ok = np.ones(6, dtype=np.bool_)
    for i in range(g):
        for k in range(i + 1):
            s = K[i, k]
            for m in range(k):
                s -= K[i, m] * K[k, m]
            if i == k:
                if s <= 1e-12 * scale or not ok[i]:
                    ok[i] = False
                    K[i, i] = 1.0
                    for m in range(i):
                        K[i, m] = 0.0
                    break
                K[i, i] = math.sqrt(s)
            elif ok[k]:
                K[i, k] = s / K[k, k]
            else:
                K[i, k] = 0.0
    # forward and back substitution: res <- K^-1 res
    for i in range(g):
        if not ok[i]:
            res[i] = 0.0
            continue
        s = res[i]
        for m in range(i):
            s -= K[i, m] * res[m]
        res[i] = s / K[i, i]
    for i in range(g - 1, -1, -1):
        if not ok[i]:
            res[i] = 0.0
            continue
        s = res[i]
        for m in range(i + 1, g):
            s -= K[m, i] * res[m]
        res[i] = s / K[i, i]
    max_dv = 0.0
    for i in range(g):
        d = res[i]
        if d == 0.0:
            continue
        ri = r0 + i
        lam[ri] += d
        apply_movable(ri, d, layer, body_height, row_body, row_B, v_lin, v_ang)
        diag = 0.0
        for side in range(2):
            if (ma if side == 0 else mb):
                for c in range(6):
                    diag += row_J[ri, side, c] * row_B[ri, side, c]
        dv = abs(d) * diag
        if dv > max_dv:
            max_dv = dv
    return max_dv


@kernel(inline="always")
def clamped_value(old, jv, inv_d, gamma, omega, zeta, lo, hi):
    """A row's new multiplier in a projected Gauss-Seidel sweep (000 eq. 28-30), from scalars: lambda + (zeta -
    J v) / A_ii, with constraint force mixing gamma > 0 (000 eq. 41, A' = A + gamma I) lambda + (zeta - J v -
    gamma lambda) / (A_ii + gamma), projected on [lo, hi]. ``old`` = lambda, ``inv_d`` = 1 / A_ii; ``omega``
    scales the step (projected Jacobi's relaxation; 1.0 for Gauss-Seidel, exact in IEEE arithmetic). The one
    copy of the update that ``sweep_rows``, shock's body blocks, pgs's inlined contact sweep and jacobi's
    sweeps share; each reads the row's bounds (a friction row's are +-mu lambda of its normal row
    ``row_link``) itself. Scalars only (kernel rule 2): the same update through an array form
    (``clamped_update``, removed) took the reference counts of six arrays per row update. Measured (CPU ms per
    step, 200 steps of tower_roof under shock before the impact; pile1000 at dt 1/100 under jacobi, 300 steps;
    the code before and after in alternating processes, same bits): tower_roof 24.5, 19.1, 26.8, 32.9 -> 14.7,
    14.9, 22.8, 22.9; pile1000 jacobi 5.2, 5.1, 5.0, 5.9 -> 3.2, 3.1, 3.1, 3.9 (it was 2.8 ms wall before the
    update was shared, git 663c010's speed.md)."""
    if gamma > 0.0:
        new = old + omega * (zeta - jv - gamma * old) / (1.0 / inv_d + gamma)
    else:
        new = old + omega * (zeta - jv) * inv_d
    if new < lo:
        new = lo
    elif new > hi:
        new = hi
    return new


@kernel
def sweep_rows(order, start, stop, layer, body_height, row_body, row_J, row_B, inv_diag, row_bias, row_lo,
               row_hi, row_link, row_mu, row_cfm, row_group, lam, v_lin, v_ang, cfm):
    """One projected Gauss-Seidel sweep (000 eq. 28-30) over rows ``order[start:stop]`` (or the rows
    ``start:stop`` themselves when ``order`` is empty).

    Both bodies' velocities enter J v; only the movable sides receive B delta (fixation). With
    constraint force mixing gamma > 0 (000 eq. 41, A' = A + gamma I) the update is
    lambda += (zeta - J v - gamma lambda) / (A_ii + gamma); gamma is the solver-wide ``cfm`` plus the
    row's own ``row_cfm`` (a soft row: a spring-damper written as a regularised constraint).
    A row with ``row_group`` g >= 2 is solved together with the g - 1 rows after it (``solve_group``);
    rows with group 0 are skipped (their head solves them).
    Returns the largest velocity change along a row, |delta lambda| (J B)_ii [m/s].
    """
    use_order = order.shape[0] > 0
    max_dv = 0.0
    for k in range(start, stop):
        r = order[k] if use_order else k
        inv_d = inv_diag[r]
        if inv_d == 0.0:
            continue
        grp = row_group[r]
        if grp != 1:
            if grp > 1:
                dv = solve_group(r, grp, layer, body_height, row_body, row_J, row_B, row_bias, row_cfm, lam, v_lin,
                                 v_ang, cfm)
                if dv > max_dv:
                    max_dv = dv
            continue
        jv = row_velocity(r, row_body, row_J, v_lin, v_ang)
        old = lam[r]
        lo = row_lo[r]
        hi = row_hi[r]
        link = row_link[r]
        if link >= 0:
            hi = row_mu[r] * lam[link]
            lo = -hi
        new = clamped_value(old, jv, inv_d, cfm + row_cfm[r], 1.0, row_bias[r], lo, hi)
        delta = new - old
        if delta != 0.0:
            lam[r] = new
            dv = abs(delta) / inv_d
            if dv > max_dv:
                max_dv = dv
            apply_movable(r, delta, layer, body_height, row_body, row_B, v_lin, v_ang)
    return max_dv


@kernel
def pgs_sweep(row_start, row_stop, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link,
              row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang):
    """One Gauss-Seidel sweep over rows [row_start, row_stop) of the whole system (no fixation, no
    solver-wide constraint force mixing; soft rows keep their ``row_cfm``). Returns max |applied
    velocity change|."""
    none = np.empty(0, dtype=np.int64)
    return sweep_rows(none, row_start, row_stop, -1, none, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo,
                      row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang, 0.0)
