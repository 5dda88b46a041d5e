"""The pgs solver's kernels: warm start, PGS sweeps (Catto 001 Alg. 4) and the relax sweeps.

The row update itself (``rows.sweep_rows``) is shared with the shock solver and the joint projection.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core.config import kernel
from tumble._core.contact.rows import contact_reach, refresh_turned_rows
from tumble._core.dynamics.integrate import (
    apply_pseudo_velocities,
    guard_pushed_bodies,
    integrate_positions,
    integrate_positions_midpoint,
    integrate_velocities,
    keep_grounded_pushes,
    mark_pushed,
    pushed_start,
    update_body_frames,
)
from tumble._core.dynamics.joints.rows import (
    joint_reactions,
    load_joint_impulses,
    prepare_joint_rows,
    store_joint_impulses,
    update_joint_coordinates,
)
from tumble._core.dynamics.joints.tree import factor_tree, mark_tree_rows, project_tree, tree_sweep
from tumble._core.merit import final_merit, ncp_merit
from tumble._core.rows import (
    PAIR_COLUMNS,
    apply_movable,
    clamped_value,
    pack_pair_rows,
    pair_rows_scalar,
    pgs_sweep,
    repack_changed_rows,
    row_velocity,
    sweep_pair_rows,
    sweep_rows,
    warm_start,
    warm_start_pairs,
)


@kernel
def solve_pgs(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
              row_cfm, row_group, row_lambda, v_lin, v_ang, iterations, tolerance, merit_history):
    """Warm start, then up to ``iterations`` sweeps; stops early when the largest velocity change
    of a sweep is below ``tolerance`` [m/s] (0 = fixed iteration count, Catto's choice).

    ``merit_history`` (k,) receives theta(lambda) after each sweep when k >= iterations (000 Fig. 5);
    pass a zero-length array to skip that cost. Returns (sweeps done, final merit theta).
    """
    warm_start(row_count, row_body, row_B, row_lambda, v_lin, v_ang)
    done = 0
    record = merit_history.shape[0] >= iterations
    for it in range(iterations):
        dv = pgs_sweep(0, row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link,
                       row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang)
        done = it + 1
        if record:
            merit_history[it] = ncp_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi,
                                          row_link, row_mu, row_lambda, v_lin, v_ang)
        if tolerance > 0.0 and dv < tolerance:
            break
    return done, final_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                             row_lambda, v_lin, v_ang)


@kernel
def solve_pgs_pairs(row_count, row_body, row_J, row_B, row_inv_diag, body_inv_mass, row_C, row_bias, row_lo, row_hi,
                    row_link, row_mu, row_lambda, v_lin, v_ang, iterations, tolerance):
    """``solve_pgs`` (no merit history) for a system of contact rows only, on their compact copy: packs
    ``row_C`` (``rows.pack_pair_rows``; the relax sweeps read it too, ``relax_pgs_pairs``), warm start
    and sweeps on it, the same bits as ``solve_pgs``. Returns (sweeps done, final merit theta)."""
    pack_pair_rows(row_count, row_body, row_J, row_B, row_inv_diag, body_inv_mass, row_C)
    warm_start_pairs(row_count, row_body, row_C, row_lambda, v_lin, v_ang)
    done = 0
    for it in range(iterations):
        dv = sweep_pair_rows(0, row_count, row_body, row_C, row_bias, row_lo, row_hi, row_link, row_mu, row_lambda,
                             v_lin, v_ang)
        done = it + 1
        if tolerance > 0.0 and dv < tolerance:
            break
    return done, final_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                             row_lambda, v_lin, v_ang)


@kernel
def relax_pgs_pairs(row_count, row_body, row_C, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_lambda, v_lin,
                    v_ang, iterations):
    """``relax_pgs`` on the compact rows of ``solve_pgs_pairs`` (repacked where refresh_turned_rows
    changed B: ``rows.repack_changed_rows``)."""
    for _ in range(iterations):
        sweep_pair_rows(0, row_count, row_body, row_C, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_lambda,
                        v_lin, v_ang)


@kernel
def relax_pgs(row_count, row_body, row_J, row_B, row_inv_diag, row_bias_relax, row_lo, row_hi, row_link, row_mu,
              row_cfm, row_group, row_lambda, v_lin, v_ang, iterations):
    """Sweeps against the targets without Baumgarte feedback, after the positions moved
    (Box2D v3's relax stage). The push-out velocity has done its work on the positions; removing
    it here keeps position correction from feeding kinetic energy into resting stacks. The
    accumulated impulses continue from the main solve, so nothing is warm-started twice."""
    for _ in range(iterations):
        pgs_sweep(0, row_count, row_body, row_J, row_B, row_inv_diag, row_bias_relax, row_lo, row_hi, row_link,
                  row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang)


@kernel
def split_correction(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi,
                     row_link, row_mu, row_cfm, row_group, body_position, body_orientation, body_fixed, body_count,
                     iterations, dt, v_ang):
    """Position correction by pseudo-velocities (split impulse, as Bullet's ``splitImpulse``; the
    position pass of Catto's later work): the Baumgarte part of each row's target,
    b_pos = row_bias - row_bias_relax (001 eq. 20, capped by max_correction_speed), is solved by PGS
    sweeps into separate velocities v_p (from zero, own accumulated impulses lambda_p >= 0, the same
    friction cone), and every dynamic body is displaced by dt v_p (``displace_body``). v_p is then
    dropped: position correction moves bodies but never enters the real velocities, so separating an
    overlap cannot release kinetic energy however deep or jammed it is; a body it turns keeps its
    body-frame angular velocity (``turn_with_body``), so its rotational energy stays too."""
    bias_p = np.empty(row_count)
    lam_p = np.zeros(row_count)
    for r in range(row_count):
        bias_p[r] = row_bias[r] - row_bias_relax[r]
    vp_lin = np.zeros((body_count, 3))
    vp_ang = np.zeros((body_count, 3))
    for _ in range(iterations):
        pgs_sweep(0, row_count, row_body, row_J, row_B, row_inv_diag, bias_p, row_lo, row_hi, row_link, row_mu,
                  row_cfm, row_group, lam_p, vp_lin, vp_ang)
    apply_pseudo_velocities(body_count, body_fixed, vp_lin, vp_ang, dt, body_position, body_orientation, v_ang)


@kernel
def mark_turned_bodies(body_count, body_fixed, disp_ang, reach, tolerance, turned):
    """turned[i] = whether body i's contact points have moved more than ``tolerance`` [m] by its
    rotation since the step's rows were built: |theta_i| reach_i > tolerance, with theta_i the
    rotation since the step began (``disp_ang``, first order) and reach_i its longest lever arm
    (``contact_reach``). Returns the number of turned bodies."""
    count = 0
    t2 = tolerance * tolerance
    for i in range(body_count):
        turned[i] = False
        if body_fixed[i] or reach[i] == 0.0:
            continue
        a2 = disp_ang[i, 0] * disp_ang[i, 0] + disp_ang[i, 1] * disp_ang[i, 1] + disp_ang[i, 2] * disp_ang[i, 2]
        if a2 * reach[i] * reach[i] > t2:
            turned[i] = True
            count += 1
    return count


@kernel
def forget_turned_rows(start, stop, row_body, turned, row_lambda):
    """row_lambda = 0 on rows [start, stop) with a side in ``turned`` (``mark_turned_bodies``): the joint
    rows of a body whose contacts start a substep from zero (``substep_contact_targets``) do too, so
    that no warm-started impulse meets a contact impulse that is no longer there."""
    for r in range(start, stop):
        for side in range(2):
            b = row_body[r, side]
            if b >= 0 and turned[b]:
                row_lambda[r] = 0.0


@kernel
def substep_contact_targets(contact_count, row_body, row_J, contact_depth, restitution_target, disp_lin, disp_ang,
                            beta, slop, max_correction_speed, split_speed, h, row_bias, row_bias_relax, bias_pseudo,
                            turned, row_lambda):
    """The normal rows' targets for a substep of ``h`` seconds (Box2D v3's "soft step": the contact
    rows are built once per step, the separation is updated every substep from the bodies' motion
    since the collision instead of a new detection).

    The penetration now is depth0 - J_n D, with D the displacement of each body since the step began
    (linear: x - x0; angular: the sum of h w over the substeps) and J_n the normal row, whose product
    with a displacement is the relative normal displacement (positive = separating; 001 eq. 18 with
    v dt in place of v). Then, as in ``prepare_contact_rows``: Baumgarte beta max(depth - slop, 0)
    capped at ``max_correction_speed`` (beta = baumgarte / dt of the whole step, so the correction
    rate per second does not change with the substep count) or, for a gap, -gap / h (it may close
    within this substep, no more); ``restitution_target`` (> 0: -e v_n from before the step) is
    kept as the floor of both targets.

    A contact whose push beta (depth - slop) exceeds ``split_speed`` is a deep overlap: its velocity
    target is the one without position feedback (0, or the bounce) and the push goes to
    ``bias_pseudo`` for the pseudo-velocity pass (``pseudo_correction``) instead, which moves the
    bodies without giving them the velocity. Returns the number of such contacts.

    A contact with a side in ``turned`` (``mark_turned_bodies``) starts this substep's solve from
    zero impulses instead of the last substep's (issue 17): its rows are the collision's, with the
    lever arms of the detected point, and a body that turned since then (a 190 m plate spinning at
    11 rad/s: 0.25 rad about its long axis in one substep of 1/720 s after its tip hit the ground)
    no longer has that point there; the last substep's impact impulse, warm-started at the stale
    point against a contact at rest (J v ~ 0), added its 1/2 lambda^2 J B of energy (2.2e7 J), and one
    sweep coupled through the plate's friction rows gave back only part of it. From zero, every
    update of a sweep to a target <= 0 loses energy (``refresh_turned_rows``)."""
    deep = 0
    for c in range(contact_count):
        r = 3 * c
        dn = 0.0
        for side in range(2):
            b = row_body[r, side]
            if b < 0:
                continue
            if turned[b]:
                row_lambda[r] = 0.0
                row_lambda[r + 1] = 0.0
                row_lambda[r + 2] = 0.0
            for k in range(3):
                dn += row_J[r, side, k] * disp_lin[b, k] + row_J[r, side, 3 + k] * disp_ang[b, k]
        depth = contact_depth[c] - dn
        pseudo = 0.0
        if depth >= 0.0:
            target = min(beta * max(depth - slop, 0.0), max_correction_speed)
            rigid = 0.0
            if target > split_speed:
                pseudo = target
                target = 0.0
                deep += 1
        else:
            target = depth / h
            rigid = target
        e = restitution_target[c]
        if e > 0.0:
            target = max(target, e)
            rigid = max(rigid, e)
        row_bias[r] = target
        row_bias_relax[r] = rigid
        bias_pseudo[r] = pseudo
    return deep


@kernel
def accumulate_displacement(body_count, body_fixed, body_position, start_position, v_ang, h, disp_lin, disp_ang):
    """disp_lin = x - x0, disp_ang += h w (the rotation of each body since the step began, to first
    order: what ``substep_contact_targets`` needs)."""
    for i in range(body_count):
        if body_fixed[i]:
            continue
        for k in range(3):
            disp_lin[i, k] = body_position[i, k] - start_position[i, k]
            disp_ang[i, k] += h * v_ang[i, k]


@kernel(inline="always")
def contact_rows_scalar(start, stop, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link,
                        row_mu, row_lambda, v_lin, v_ang, none):
    """The scalar projected Gauss-Seidel update (``rows.sweep_rows``) of contact rows start..stop-1,
    inlined: contact rows have no constraint force mixing and no groups, and a call per manifold
    of the non-inlined ``sweep_rows`` (20 array arguments, each referenced and released) made the
    block sweep 5x slower than a plain sweep on pile1000's one-point manifolds. Returns the largest
    velocity change [m/s]."""
    max_dv = 0.0
    for r in range(start, stop):
        inv_d = row_inv_diag[r]
        if inv_d == 0.0:
            continue
        jv = row_velocity(r, row_body, row_J, v_lin, v_ang)
        old = row_lambda[r]
        lo = row_lo[r]
        hi = row_hi[r]
        link = row_link[r]
        if link >= 0:
            hi = row_mu[r] * row_lambda[link]
            lo = -hi
        new = clamped_value(old, jv, inv_d, 0.0, 1.0, row_bias[r], lo, hi)
        delta = new - old
        if delta != 0.0:
            row_lambda[r] = new
            max_dv = max(max_dv, abs(delta) / inv_d)
            apply_movable(r, delta, -1, none, row_body, row_B, v_lin, v_ang)
    return max_dv


@kernel
def block_scratch():
    """The work arrays of ``block_sweep_with``: K and W (4, 4), res / y / x as rows of (3, 4), the
    point indices idx / act as rows of (2, 4) int. Allocated once per solve (or per substep loop),
    not per sweep: seven small heap allocations per sweep were ~5 % of a stack10 step at the pgs
    defaults (24 block sweeps per step)."""
    return np.zeros((4, 4)), np.zeros((4, 4)), np.zeros((3, 4)), np.zeros((2, 4), dtype=np.int64)


@kernel
def block_sweep(manifold_start, manifold_count, row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo,
                row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang, active_set):
    """``block_sweep_with`` with its own work arrays (``block_scratch``)."""
    K, W, vec, ind = block_scratch()
    return block_sweep_with(manifold_start, manifold_count, row_count, row_body, row_J, row_B, row_inv_diag, row_bias,
                            row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang, active_set,
                            K, W, vec, ind)


@kernel(inline="always")
def manifold_lcp(g, scale, active_set, K, W, res, y, x, idx, act):
    """The LCP of one manifold's g normal rows, K x - res >= 0, x >= 0, complementary
    (``block_sweep_with``): solve the points of the active set ``act`` (all, on entry) together, K
    regularised by 1e-9 ``scale`` (max K_ii: the least-norm impulses); with ``active_set`` drop every
    point whose impulse came out negative and solve again (at most g passes); accepted when the
    impulses are >= 0 and the dropped points do not approach (K x - res >= 0 there). Returns whether
    it was accepted; x (g,) the impulses. W, y, idx: work arrays."""
    solved = False
    for _attempt in range(g if active_set else 1):
        n_a = 0
        for i in range(g):
            if act[i]:
                idx[n_a] = i
                n_a += 1
        if n_a == 0:
            break
        for a in range(n_a):
            for q in range(a + 1):
                W[a, q] = K[idx[a], idx[q]]
            W[a, a] += 1e-9 * scale
            y[a] = res[idx[a]]
        # Cholesky W = L L^T (lower triangle, in place), then y <- W^-1 y
        for a in range(n_a):
            for q in range(a + 1):
                s = W[a, q]
                for p in range(q):
                    s -= W[a, p] * W[q, p]
                if a == q:
                    W[a, a] = math.sqrt(max(s, 1e-300))
                else:
                    W[a, q] = s / W[q, q]
        for a in range(n_a):
            s = y[a]
            for p in range(a):
                s -= W[a, p] * y[p]
            y[a] = s / W[a, a]
        for a in range(n_a - 1, -1, -1):
            s = y[a]
            for p in range(a + 1, n_a):
                s -= W[p, a] * y[p]
            y[a] = s / W[a, a]
        negative = False
        for i in range(g):
            x[i] = 0.0
        for a in range(n_a):
            x[idx[a]] = y[a]
            if y[a] < 0.0:
                negative = True
                act[idx[a]] = 0
        if negative:
            continue        # (the last pass, without active_set: the caller's scalar updates)
        solved = True
        for i in range(g):
            if not act[i]:
                s = -res[i]
                for k in range(g):
                    s += K[i, k] * x[k]
                if s < -1e-9 * (abs(res[i]) + 1e-300):
                    solved = False
        break
    return solved


@kernel
def block_sweep_with(manifold_start, manifold_count, row_count, row_body, row_J, row_B, row_inv_diag, row_bias,
                     row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang, active_set, K, W,
                     vec, ind):
    """One Gauss-Seidel sweep in which the normal rows of each contact manifold (the 2 to 4 points of
    one shape pair, contacts ``manifold_start[m]`` to ``manifold_start[m + 1] - 1``) are solved
    together, as Box2D's block solver does for the two points of a 2-D manifold (Catto, "Box2D block
    solver", 2009), then each point's friction rows one at a time; single-point manifolds and the
    rows after the contacts (joints, from 3 * contacts on) take the ordinary sweep (``sweep_rows``).

    The block: with K = J_n M^-1 J_n^T (g x g, K_ik = sum_side J_i . B_k) and the residuals
    res = zeta - J_n v, the new impulses solve K lambda' = res + K lambda, the whole manifold's
    impulses at once. The 4 coplanar points of two faces carry only 3 independent normal impulses
    (a force and two torques), so K is singular; it is regularised by 1e-9 max K_ii, which picks the
    impulses of least norm: the even share a resting face should carry, where a scalar sweep leaves
    the first point of the face with more than the last, a torque that rocks a stack (a column of ten
    unit boxes at dt 1/60 fell within 20 s). When some lambda'_i < 0 (a point about to separate) the
    block is not a solution of the manifold's LCP (K lambda' - r >= 0, lambda' >= 0, complementary,
    r = res + K lambda). ``active_set`` (``PGSSettings.normal_block_active_set``) then solves that
    LCP by active sets, as Box2D enumerates the cases of its 2-point block: every point whose
    impulse came out negative leaves the set, the remaining points are solved together again (at
    most g passes), and the result is taken when its impulses are >= 0 and no dropped point
    approaches (K lambda' - r >= 0 there; else the scalar updates). The points of a face that is
    tipping off its support's edge thus drop out together and the others share the load evenly;
    without ``active_set`` the manifold's normals take scalar updates in point order, which load the
    first points of the face more than the last (the torque that rocked the column, now out of the
    pyramid's plane: pyramid20 at the defaults leaned 28 mm out of its plane, 33 mm max drift in
    60 s, against 18.6 mm with the active set). Contact rows carry no constraint force mixing
    (``stages._contact_rows`` sets row_cfm 0, group 1). Returns the largest velocity change along a
    row [m/s]. ``K``, ``W``, ``vec``, ``ind``: the work arrays (``block_scratch``; every entry read is
    written first in the same manifold's visit, so their contents between calls do not matter)."""
    none = np.empty(0, dtype=np.int64)
    res = vec[0]
    y = vec[1]
    x = vec[2]
    idx = ind[0]
    act = ind[1]
    max_dv = 0.0
    contacts = manifold_start[manifold_count]
    for m in range(manifold_count):
        c0 = manifold_start[m]
        g = manifold_start[m + 1] - c0
        if g < 2 or g > 4:
            dv = contact_rows_scalar(3 * c0, 3 * (c0 + g), row_body, row_J, row_B, row_inv_diag, row_bias, row_lo,
                                     row_hi, row_link, row_mu, row_lambda, v_lin, v_ang, none)
            max_dv = max(max_dv, dv)
            continue
        for c in range(c0, c0 + g):    # friction first, bounded by the normal impulses of the last visit
            dv = contact_rows_scalar(3 * c + 1, 3 * c + 3, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo,
                                     row_hi, row_link, row_mu, row_lambda, v_lin, v_ang, none)
            max_dv = max(max_dv, dv)
        scale = 0.0
        for i in range(g):
            ri = 3 * (c0 + i)
            for k in range(i + 1):
                rk = 3 * (c0 + k)
                s = 0.0
                for side in range(2):
                    if row_body[ri, side] >= 0:
                        for q in range(6):
                            s += row_J[ri, side, q] * row_B[rk, side, q]
                K[i, k] = s
                K[k, i] = s
            scale = max(scale, K[i, i])
        if scale <= 0.0:
            continue
        for i in range(g):
            ri = 3 * (c0 + i)
            s = row_bias[ri] - row_velocity(ri, row_body, row_J, v_lin, v_ang)
            for k in range(g):
                s += K[i, k] * row_lambda[3 * (c0 + k)]
            res[i] = s
            act[i] = 1
            x[i] = 0.0
        solved = manifold_lcp(g, scale, active_set, K, W, res, y, x, idx, act)
        if solved:
            for i in range(g):
                ri = 3 * (c0 + i)
                delta = x[i] - row_lambda[ri]
                if delta != 0.0:
                    row_lambda[ri] = x[i]
                    max_dv = max(max_dv, abs(delta) / row_inv_diag[ri] if row_inv_diag[ri] > 0.0 else 0.0)
                    apply_movable(ri, delta, -1, none, row_body, row_B, v_lin, v_ang)
        else:
            for c in range(c0, c0 + g):
                dv = contact_rows_scalar(3 * c, 3 * c + 1, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo,
                                         row_hi, row_link, row_mu, row_lambda, v_lin, v_ang, none)
                max_dv = max(max_dv, dv)
    if row_count > 3 * contacts:
        dv = sweep_rows(none, 3 * contacts, row_count, -1, none, row_body, row_J, row_B, row_inv_diag, row_bias,
                        row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang, 0.0)
        max_dv = max(max_dv, dv)
    return max_dv


@kernel
def manifold_blocks(manifold_start, manifold_count, row_body, row_C, changed, block_K, block_L, block_scale):
    """Each manifold's normal block for ``block_sweep_pair``, from the compact rows: K = J_n M^-1 J_n^T
    (g x g, 2 <= g <= 4 points; ``block_K[m]``), its largest diagonal entry (``block_scale[m]``) and the
    Cholesky factor L of K + 1e-9 max K_ii I (lower triangle of ``block_L[m]``), which is what
    ``manifold_lcp`` factors on its first pass (every point active). K depends on the rows' J and B only,
    which stay those of the packing for all the sweeps of a step's substeps (``rows.pack_pair_rows``)
    until ``repack_changed_rows`` rebuilds some: the sweeps formed K and the factor at every visit of
    every sweep (24 visits per step at the pgs defaults) from the same numbers, so the same operations
    here give the same bits. ``changed`` (bodies,) bool: only the manifolds with a body marked there
    (the rows repack_changed_rows repacked; a manifold's points share their two bodies); zero-length:
    every manifold."""
    every = changed.shape[0] == 0
    for m in range(manifold_count):
        c0 = manifold_start[m]
        g = manifold_start[m + 1] - c0
        if g < 2 or g > 4:
            continue
        r0 = 3 * c0
        if not every:
            ia = row_body[r0, 0]
            ib = row_body[r0, 1]
            if not ((ia >= 0 and changed[ia]) or (ib >= 0 and changed[ib])):
                continue
        scale = 0.0
        for i in range(g):
            ri = 3 * (c0 + i)
            for k in range(i + 1):
                rk = 3 * (c0 + k)
                # K_ik = sum over the dynamic sides of J_i . B_k, the 12 products in (side, column) order
                s = 0.0
                if row_body[ri, 0] >= 0:
                    im = row_C[rk, 15]
                    s += -row_C[ri, 0] * (im * -row_C[rk, 0])
                    s += -row_C[ri, 1] * (im * -row_C[rk, 1])
                    s += -row_C[ri, 2] * (im * -row_C[rk, 2])
                    s += row_C[ri, 3] * row_C[rk, 9]
                    s += row_C[ri, 4] * row_C[rk, 10]
                    s += row_C[ri, 5] * row_C[rk, 11]
                if row_body[ri, 1] >= 0:
                    im = row_C[rk, 16]
                    s += row_C[ri, 0] * (im * row_C[rk, 0])
                    s += row_C[ri, 1] * (im * row_C[rk, 1])
                    s += row_C[ri, 2] * (im * row_C[rk, 2])
                    s += row_C[ri, 6] * row_C[rk, 12]
                    s += row_C[ri, 7] * row_C[rk, 13]
                    s += row_C[ri, 8] * row_C[rk, 14]
                block_K[m, i, k] = s
                block_K[m, k, i] = s
            scale = max(scale, block_K[m, i, i])
        block_scale[m] = scale
        # manifold_lcp's first pass with every point active: W = K + 1e-9 scale I, W = L L^T in place
        for a in range(g):
            for q in range(a + 1):
                block_L[m, a, q] = block_K[m, a, q]
            block_L[m, a, a] += 1e-9 * scale
        for a in range(g):
            for q in range(a + 1):
                s = block_L[m, a, q]
                for p in range(q):
                    s -= block_L[m, a, p] * block_L[m, q, p]
                if a == q:
                    block_L[m, a, a] = math.sqrt(max(s, 1e-300))
                else:
                    block_L[m, a, q] = s / block_L[m, q, q]


@kernel(inline="always")
def manifold_lcp_cached(g, m, scale, active_set, block_K, block_L, W, res, y, x, idx, act):
    """``manifold_lcp`` for manifold ``m`` with K and the first pass's factor from ``manifold_blocks``
    (``block_K[m]``, ``block_L[m]``): the first pass (every point active) only substitutes; a later pass
    (points dropped) factors its K as ``manifold_lcp`` does. The same operations on the same numbers,
    so the same bits."""
    solved = False
    for attempt in range(g if active_set else 1):
        n_a = 0
        for i in range(g):
            if act[i]:
                idx[n_a] = i
                n_a += 1
        if n_a == 0:
            break
        if attempt == 0:     # every point active (the caller sets act): idx is 0..g-1, the factor is cached
            for a in range(n_a):
                y[a] = res[a]
            for a in range(n_a):
                s = y[a]
                for p in range(a):
                    s -= block_L[m, a, p] * y[p]
                y[a] = s / block_L[m, a, a]
            for a in range(n_a - 1, -1, -1):
                s = y[a]
                for p in range(a + 1, n_a):
                    s -= block_L[m, p, a] * y[p]
                y[a] = s / block_L[m, a, a]
        else:
            for a in range(n_a):
                for q in range(a + 1):
                    W[a, q] = block_K[m, idx[a], idx[q]]
                W[a, a] += 1e-9 * scale
                y[a] = res[idx[a]]
            # Cholesky W = L L^T (lower triangle, in place), then y <- W^-1 y
            for a in range(n_a):
                for q in range(a + 1):
                    s = W[a, q]
                    for p in range(q):
                        s -= W[a, p] * W[q, p]
                    if a == q:
                        W[a, a] = math.sqrt(max(s, 1e-300))
                    else:
                        W[a, q] = s / W[q, q]
            for a in range(n_a):
                s = y[a]
                for p in range(a):
                    s -= W[a, p] * y[p]
                y[a] = s / W[a, a]
            for a in range(n_a - 1, -1, -1):
                s = y[a]
                for p in range(a + 1, n_a):
                    s -= W[p, a] * y[p]
                y[a] = s / W[a, a]
        negative = False
        for i in range(g):
            x[i] = 0.0
        for a in range(n_a):
            x[idx[a]] = y[a]
            if y[a] < 0.0:
                negative = True
                act[idx[a]] = 0
        if negative:
            continue        # (the last pass, without active_set: the caller's scalar updates)
        solved = True
        for i in range(g):
            if not act[i]:
                s = -res[i]
                for k in range(g):
                    s += block_K[m, i, k] * x[k]
                if s < -1e-9 * (abs(res[i]) + 1e-300):
                    solved = False
        break
    return solved


@kernel
def block_sweep_pair(manifold_start, manifold_count, row_count, row_body, row_C, row_bias, row_lo, row_hi, row_link,
                     row_mu, row_lambda, v_lin, v_ang, active_set, block_K, block_L, block_scale, W, vec, ind):
    """``block_sweep_with`` on the compact rows (``rows.pack_pair_rows``) of a system of contact rows
    only (no constraint force mixing, no groups; rows after the manifolds' take scalar updates): the
    same operations in the same order (``rows.pair_rows_scalar``; J v and B delta below are the J / B
    reads of the pairwise layout term by term; each manifold's K, max K_ii and the Cholesky factor of
    its full active set come from ``manifold_blocks``, computed when the rows were packed), so the same
    bits, with 144 bytes read a row instead of 200 and no array-taking helper per row (issue 19; kernel
    rule 2). Returns the largest velocity change along a row [m/s]."""
    res = vec[0]
    y = vec[1]
    x = vec[2]
    idx = ind[0]
    act = ind[1]
    max_dv = 0.0
    contacts = manifold_start[manifold_count]
    for m in range(manifold_count):
        c0 = manifold_start[m]
        g = manifold_start[m + 1] - c0
        if g < 2 or g > 4:
            dv = pair_rows_scalar(3 * c0, 3 * (c0 + g), 0, row_body, row_C, row_bias, row_lo, row_hi, row_link, row_mu,
                                  row_lambda, v_lin, v_ang)
            max_dv = max(max_dv, dv)
            continue
        # friction first, bounded by the normal impulses of the last visit
        dv = pair_rows_scalar(3 * c0, 3 * (c0 + g), 1, row_body, row_C, row_bias, row_lo, row_hi, row_link, row_mu,
                              row_lambda, v_lin, v_ang)
        max_dv = max(max_dv, dv)
        scale = block_scale[m]
        if scale <= 0.0:
            continue
        for i in range(g):
            ri = 3 * (c0 + i)
            ia = row_body[ri, 0]
            ib = row_body[ri, 1]
            dx = row_C[ri, 0]
            dy = row_C[ri, 1]
            dz = row_C[ri, 2]
            jv = 0.0        # rows.row_velocity's sum, term by term
            if ia >= 0:
                jv += -dx * v_lin[ia, 0] + -dy * v_lin[ia, 1] + -dz * v_lin[ia, 2]
                jv += row_C[ri, 3] * v_ang[ia, 0] + row_C[ri, 4] * v_ang[ia, 1] + row_C[ri, 5] * v_ang[ia, 2]
            if ib >= 0:
                jv += dx * v_lin[ib, 0] + dy * v_lin[ib, 1] + dz * v_lin[ib, 2]
                jv += row_C[ri, 6] * v_ang[ib, 0] + row_C[ri, 7] * v_ang[ib, 1] + row_C[ri, 8] * v_ang[ib, 2]
            s = row_bias[ri] - jv
            for k in range(g):
                s += block_K[m, i, k] * row_lambda[3 * (c0 + k)]
            res[i] = s
            act[i] = 1
            x[i] = 0.0
        if manifold_lcp_cached(g, m, scale, active_set, block_K, block_L, W, res, y, x, idx, act):
            for i in range(g):
                ri = 3 * (c0 + i)
                delta = x[i] - row_lambda[ri]
                if delta != 0.0:
                    row_lambda[ri] = x[i]
                    inv_d = row_C[ri, 17]
                    max_dv = max(max_dv, abs(delta) / inv_d if inv_d > 0.0 else 0.0)
                    ia = row_body[ri, 0]        # rows.apply_movable with no fixation, term by term
                    ib = row_body[ri, 1]
                    dx = row_C[ri, 0]
                    dy = row_C[ri, 1]
                    dz = row_C[ri, 2]
                    if ia >= 0:
                        im = row_C[ri, 15]
                        v_lin[ia, 0] += delta * (im * -dx)
                        v_lin[ia, 1] += delta * (im * -dy)
                        v_lin[ia, 2] += delta * (im * -dz)
                        v_ang[ia, 0] += delta * row_C[ri, 9]
                        v_ang[ia, 1] += delta * row_C[ri, 10]
                        v_ang[ia, 2] += delta * row_C[ri, 11]
                    if ib >= 0:
                        im = row_C[ri, 16]
                        v_lin[ib, 0] += delta * (im * dx)
                        v_lin[ib, 1] += delta * (im * dy)
                        v_lin[ib, 2] += delta * (im * dz)
                        v_ang[ib, 0] += delta * row_C[ri, 12]
                        v_ang[ib, 1] += delta * row_C[ri, 13]
                        v_ang[ib, 2] += delta * row_C[ri, 14]
        else:
            dv = pair_rows_scalar(3 * c0, 3 * (c0 + g), 2, row_body, row_C, row_bias, row_lo, row_hi, row_link,
                                  row_mu, row_lambda, v_lin, v_ang)
            max_dv = max(max_dv, dv)
    if row_count > 3 * contacts:
        dv = pair_rows_scalar(3 * contacts, row_count, 0, row_body, row_C, row_bias, row_lo, row_hi, row_link, row_mu,
                              row_lambda, v_lin, v_ang)
        max_dv = max(max_dv, dv)
    return max_dv


@kernel
def solve_pgs_blocks(manifold_start, manifold_count, row_count, row_body, row_J, row_B, row_inv_diag, row_bias,
                     row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang, iterations,
                     tolerance, active_set):
    """``solve_pgs`` with the manifold block sweep (``block_sweep``); no merit history.
    Returns (sweeps done, final merit theta)."""
    warm_start(row_count, row_body, row_B, row_lambda, v_lin, v_ang)
    K, W, vec, ind = block_scratch()
    done = 0
    for it in range(iterations):
        dv = block_sweep_with(manifold_start, manifold_count, row_count, row_body, row_J, row_B, row_inv_diag,
                              row_bias, row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang,
                              active_set, K, W, vec, ind)
        done = it + 1
        if tolerance > 0.0 and dv < tolerance:
            break
    return done, final_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                             row_lambda, v_lin, v_ang)


@kernel
def relax_pgs_blocks(manifold_start, manifold_count, row_count, row_body, row_J, row_B, row_inv_diag, row_bias_relax,
                     row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang, iterations,
                     active_set):
    """``relax_pgs`` with the manifold block sweep."""
    K, W, vec, ind = block_scratch()
    for _ in range(iterations):
        block_sweep_with(manifold_start, manifold_count, row_count, row_body, row_J, row_B, row_inv_diag,
                         row_bias_relax, row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang,
                         active_set, K, W, vec, ind)



@kernel
def solve_with_tree(warm, blocks, merit, manifold_start, manifold_count, row_count, row_body, row_J, row_B,
                    row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, v_lin,
                    v_ang, iterations, tolerance, node_count, node_kind, node_ref, node_parent, joint_type,
                    joint_row_start, row_offset, D_fac, F, H_diag, refine, y, x, z, active_set):
    """``solve_pgs`` / ``solve_pgs_blocks`` (``blocks``) / the relax sweeps (``warm`` False) when the
    joints' equality rows are solved over the joint tree: each sweep is the Gauss-Seidel sweep over
    the other rows (contacts, limits, motors, loop-closing joints; the tree's rows carry group -1 and
    are skipped) followed by one exact solve of the tree's rows (``joints.tree.tree_sweep``), so the
    joints hold exactly at the velocities the contacts leave. Returns (sweeps done, final merit theta,
    or 0 without ``merit``)."""
    if warm:
        warm_start(row_count, row_body, row_B, row_lambda, v_lin, v_ang)
    done = 0
    for it in range(iterations):
        if blocks:
            dv = block_sweep(manifold_start, manifold_count, row_count, row_body, row_J, row_B, row_inv_diag, row_bias,
                             row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang, active_set)
        else:
            dv = pgs_sweep(0, row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link,
                           row_mu, row_cfm, row_group, row_lambda, v_lin, v_ang)
        dv = max(dv, tree_sweep(node_count, node_kind, node_ref, node_parent, joint_type, joint_row_start, row_offset,
                                row_body, row_J, row_bias, row_cfm, row_inv_diag, row_lambda, D_fac, F, H_diag,
                                refine, y, x, z, v_lin, v_ang))
        done = it + 1
        if tolerance > 0.0 and dv < tolerance:
            break
    if not merit:
        return done, 0.0
    return done, final_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                             row_lambda, v_lin, v_ang)


@kernel
def pseudo_correction(manifold_start, manifold_count, row_count, row_body, row_J, row_B, row_inv_diag, bias_pseudo,
                      row_lo, row_hi, row_link, row_mu, row_cfm, row_group, body_position, body_orientation,
                      body_fixed, body_count, iterations, h, disp_ang, v_ang, active_set, pushed):
    """The pseudo-velocity pass of position_correction="hybrid" (split impulse for the deep
    contacts only): PGS sweeps from zero (own accumulated impulses lambda_p >= 0 and the rows' own
    friction cones) solve J v_p = bias_pseudo -- the capped push ``max_correction_speed`` on the deep
    contacts' normal rows, 0 on every other row, so shallow contacts and joints carry the push on
    instead of being driven into -- then every dynamic body is displaced by h v_p and v_p is
    dropped; a body it turns keeps its body-frame angular velocity (``turn_with_body``). The real
    velocities never see the push: a deep overlap is separated at
    ``max_correction_speed`` without kinetic energy, however jammed it is (a jam is an infeasible
    LCP; its impulses grow from sweep to sweep, but they start from zero each pass and are never
    kept). ``manifold_count`` > 0 uses the manifold block sweep (``block_sweep``), 0 scalar sweeps.
    disp_ang += h w_p: the rotation since the step began, for ``substep_contact_targets``. ``pushed``
    (n,) gets the bodies the pass moved (``mark_pushed``; zero-length: not recorded), for the energy
    guard (``integrate.guard_pushed_bodies``)."""
    lam_p = np.zeros(row_count)
    vp_lin = np.zeros((body_count, 3))
    vp_ang = np.zeros((body_count, 3))
    for _ in range(iterations):
        if manifold_count > 0:
            block_sweep(manifold_start, manifold_count, row_count, row_body, row_J, row_B, row_inv_diag, bias_pseudo,
                        row_lo, row_hi, row_link, row_mu, row_cfm, row_group, lam_p, vp_lin, vp_ang, active_set)
        else:
            pgs_sweep(0, row_count, row_body, row_J, row_B, row_inv_diag, bias_pseudo, row_lo, row_hi, row_link,
                      row_mu, row_cfm, row_group, lam_p, vp_lin, vp_ang)
    mark_pushed(body_count, body_fixed, vp_lin, vp_ang, pushed)
    keep_grounded_pushes(row_count, row_body, bias_pseudo, body_fixed, pushed)
    apply_pseudo_velocities(body_count, body_fixed, vp_lin, vp_ang, h, body_position, body_orientation, v_ang)
    for i in range(min(body_count, disp_ang.shape[0])):
        if not body_fixed[i]:
            for k in range(3):
                disp_ang[i, k] += vp_ang[i, k]


@kernel
def manifold_starts_of(contact_count, contact_key):
    """(m + 1,) the first contact of each manifold (a run of one shape pair's points: the contact
    store is sorted by pair key) and the contact count last; [0] for no contacts. One kernel call
    in place of four NumPy calls (flatnonzero of a concatenated comparison: ~5 us on stack10)."""
    out = np.empty(contact_count + 1, dtype=np.int64)
    m = 0
    out[0] = 0
    for c in range(1, contact_count):
        if contact_key[c] != contact_key[c - 1]:
            m += 1
            out[m] = c
    if contact_count > 0:
        m += 1
        out[m] = contact_count
    return out[: m + 1].copy()


@kernel
def contact_substeps(substeps, h, contact_count, block, row_body, row_J, row_B, row_inv_diag, row_bias,
                     row_bias_relax, row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, contact_key,
                     contact_depth, body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                     body_mass, body_inv_mass, body_inertia_local, body_inv_inertia_local, body_inv_inertia_world,
                     body_force, body_torque, body_fixed, body_count, gravity, gyroscopic, midpoint, linear_damping,
                     angular_damping, beta, slop, max_correction_speed, split_speed, sweeps, tolerance,
                     relax_iterations, record_merit, merits, active_set, row_turn_tolerance, turn_tolerance, guard):
    """The whole substep loop of a pgs step whose rows are contact rows only (no joint rows), in one
    kernel call: the same kernels in the same order as ``PGSSolver._substeps`` calls them one by one
    (and it still does with joints, or with ``profile_stages``), so the result is bit for bit the
    same (IEEE arithmetic, config.py). Issue 14's fixed cost: the loop made ~25 kernel calls per
    stack10 step, each ~0.7 us plus ~0.13 us per array argument, and as many profile laps.

    Per step: the contact rows' impulses and fixed friction bounds per step -> per substep (x 1/n);
    the bounce targets (the relax targets' positive part, first substep only); then ``substeps``
    times with h = dt / n: ``substep_contact_targets``, v += h M^-1 F_ext, warm start and ``sweeps``
    sweeps (manifold blocks with ``block``), the displacement since the step began, x += h v,
    the pseudo-velocity pass when some contact is deep, ``relax_iterations`` relax sweeps, with
    ``guard`` (``PGSSettings.pushed_energy_guard``) the energy guard of the bodies the pass moved
    (``integrate.guard_pushed_bodies``, from the state before the substep's velocity update), and the
    substep's impulses added to the step's. ``merits`` (substeps,) gets theta after each solve with
    ``record_merit``, else after the last one only (the ``merit`` counter).
    Returns (sweeps done, last theta, (3 contacts,) impulses summed over the substeps)."""
    rows = 3 * contact_count
    inv_n = 1.0 / substeps
    for r in range(rows):
        row_lambda[r] *= inv_n
        row_lo[r] *= inv_n
        row_hi[r] *= inv_n
    restitution = np.empty(contact_count)
    for c in range(contact_count):
        e = row_bias_relax[3 * c]
        restitution[c] = e if not e < 0.0 else 0.0     # np.maximum(e, 0): NaN and -0.0 kept
    no_bounce = np.zeros(contact_count)
    pseudo = np.zeros(rows)
    start = np.empty((body_count, 3))
    for i in range(body_count):
        for k in range(3):
            start[i, k] = body_position[i, k]
    disp_lin = np.zeros((body_count, 3))
    disp_ang = np.zeros((body_count, 3))
    total = np.zeros(rows)
    if block:
        starts = manifold_starts_of(contact_count, contact_key)
    else:
        starts = np.zeros(0, dtype=np.int64)
    manifolds = max(starts.shape[0] - 1, 0)
    row_orientation = np.empty((body_count, 4))    # where the rows' inverse inertia was taken
    for i in range(body_count):
        for k in range(4):
            row_orientation[i, k] = body_orientation[i, k]
    changed = np.zeros(body_count, dtype=np.bool_)
    reach = np.empty(body_count)
    contact_reach(contact_count, row_body, row_J, reach)
    turned = np.zeros(body_count, dtype=np.bool_)
    K, W, vec, ind = block_scratch()
    guarded = body_count if guard else 0        # the energy guard's state (zero-length without it)
    pushed = np.zeros(guarded, dtype=np.bool_)
    x0 = np.empty((guarded, 3))
    v_lin0 = np.empty((guarded, 3))
    w_body0 = np.empty((guarded, 3))
    iters = 0
    merit = 0.0
    # the compact copy of the rows the sweeps read (rows.pack_pair_rows; kept in step with
    # refresh_turned_rows below): the same bits as pgs_sweep on J and B, ~20 % less time a row
    row_C = np.empty((rows, PAIR_COLUMNS))
    pack_pair_rows(rows, row_body, row_J, row_B, row_inv_diag, body_inv_mass, row_C)
    # each manifold's normal block K and the factor of its full active set, for every sweep of the step
    # (kept in step with repack_changed_rows below)
    block_K = np.empty((manifolds, 4, 4))
    block_L = np.empty((manifolds, 4, 4))
    block_scale = np.zeros(manifolds)
    manifold_blocks(starts, manifolds, row_body, row_C, np.zeros(0, dtype=np.bool_), block_K, block_L, block_scale)
    for sub in range(substeps):
        deep = substep_contact_targets(contact_count, row_body, row_J, contact_depth,
                                       restitution if sub == 0 else no_bounce, disp_lin, disp_ang, beta, slop,
                                       max_correction_speed, split_speed, h, row_bias, row_bias_relax, pseudo,
                                       turned, row_lambda)
        if deep and guard:
            pushed_start(body_count, body_fixed, body_position, body_orientation, body_linear_velocity,
                         body_angular_velocity, x0, v_lin0, w_body0)
        integrate_velocities(body_linear_velocity, body_angular_velocity, body_orientation, body_inv_mass,
                             body_inertia_local, body_inv_inertia_world, body_force, body_torque, body_fixed,
                             body_count, gravity, h, gyroscopic, linear_damping, angular_damping)
        # solve_pgs_blocks / solve_pgs, with theta (a pass over the rows, ~half a sweep) computed only
        # where it is reported: after the last substep, or after each with ``record_merit``
        warm_start_pairs(rows, row_body, row_C, row_lambda, body_linear_velocity, body_angular_velocity)
        for _ in range(sweeps):
            if manifolds > 0:
                dv = block_sweep_pair(starts, manifolds, rows, row_body, row_C, row_bias, row_lo, row_hi, row_link,
                                      row_mu, row_lambda, body_linear_velocity, body_angular_velocity, active_set,
                                      block_K, block_L, block_scale, W, vec, ind)
            else:
                dv = sweep_pair_rows(0, rows, row_body, row_C, row_bias, row_lo, row_hi, row_link, row_mu, row_lambda,
                                     body_linear_velocity, body_angular_velocity)
            iters += 1
            if tolerance > 0.0 and dv < tolerance:
                break
        if record_merit or sub == substeps - 1:
            merit = final_merit(rows, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                                row_lambda, body_linear_velocity, body_angular_velocity)
            merits[sub] = merit
        accumulate_displacement(body_count, body_fixed, body_position, start, body_angular_velocity, h, disp_lin,
                                disp_ang)
        if midpoint:
            integrate_positions_midpoint(body_position, body_orientation, body_linear_velocity,
                                         body_angular_velocity, body_inertia_local, body_inv_inertia_local,
                                         body_fixed, body_count, h)
        else:
            integrate_positions(body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                                body_fixed, body_count, h)
        if deep:
            pseudo_correction(starts, manifolds, rows, row_body, row_J, row_B, row_inv_diag, pseudo, row_lo, row_hi,
                              row_link, row_mu, row_cfm, row_group, body_position, body_orientation, body_fixed,
                              body_count, sweeps, h, disp_ang, body_angular_velocity, active_set, pushed)
        for i in range(body_count):
            for k in range(3):
                disp_lin[i, k] = body_position[i, k] - start[i, k]
        # B = M^-1 J^T at the bodies' orientations now, for the relax sweeps and the next substep
        if refresh_turned_rows(rows, row_body, row_J, row_B, row_inv_diag, body_orientation, row_orientation,
                               body_inv_inertia_local, body_inv_inertia_world, body_fixed, body_count, changed,
                               row_turn_tolerance) > 0:
            repack_changed_rows(rows, row_body, row_J, row_B, row_inv_diag, body_inv_mass, changed, row_C)
            manifold_blocks(starts, manifolds, row_body, row_C, changed, block_K, block_L, block_scale)
        mark_turned_bodies(body_count, body_fixed, disp_ang, reach, turn_tolerance, turned)
        if relax_iterations > 0:
            if manifolds > 0:     # relax_pgs_blocks with this loop's work arrays, on the compact rows
                for _ in range(relax_iterations):
                    block_sweep_pair(starts, manifolds, rows, row_body, row_C, row_bias_relax, row_lo, row_hi,
                                     row_link, row_mu, row_lambda, body_linear_velocity, body_angular_velocity,
                                     active_set, block_K, block_L, block_scale, W, vec, ind)
            else:       # relax_pgs on the compact rows
                for _ in range(relax_iterations):
                    sweep_pair_rows(0, rows, row_body, row_C, row_bias_relax, row_lo, row_hi, row_link, row_mu,
                                    row_lambda, body_linear_velocity, body_angular_velocity)
        if deep and guard:
            guard_pushed_bodies(body_count, body_fixed, pushed, body_mass, body_inertia_local, gravity, body_force,
                                body_torque, h, x0, v_lin0, w_body0, body_position, body_orientation,
                                body_linear_velocity, body_angular_velocity)
        for r in range(rows):
            total[r] += row_lambda[r]
    return iters, merit, total


#: the one-thread twin, as a global a kernel can call (an attribute of a dispatcher cannot be typed)
_prepare_joint_rows_serial = prepare_joint_rows.serial


@kernel
def joint_substeps(substeps, h, dt, row_count, use_tree, warm_scale, fraction, max_speed, joint_frequency,
                   joint_damping, block_solve, sweeps, tolerance, relax_iterations, active_set, merits, total,
                   joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref, joint_rel_q, joint_length,
                   joint_soft, joint_has_limits, joint_limit, joint_motor_mode, joint_motor, joint_active,
                   joint_row_start, joint_row_count, joint_impulse, joint_coord, joint_lever,
                   node_count, node_kind, node_ref, node_parent, node_side, D, D_fac, F, H_diag, y, x, z,
                   refine_spread, refine_steps, body_position, body_orientation, body_linear_velocity,
                   body_angular_velocity, body_mass,
                   body_inv_mass, body_inertia_local, body_inv_inertia_local, body_inv_inertia_world, body_force,
                   body_torque, body_fixed, body_count, gravity, gyroscopic, midpoint, linear_damping,
                   angular_damping, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi,
                   row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, row_group, all_merits):
    """The substep loop of a pgs step whose rows are joint rows only (no contact rows), in one kernel
    call: the kernels ``PGSSolver._substeps`` calls one by one (and still does with contacts, or with
    ``profile_stages``), in the same order, so the result is the same bit for bit (IEEE arithmetic,
    config.py). Issue 19: chain50's loop made ~14 calls per substep (12 substeps) and as many laps.

    Per substep k with h = dt / n: the bodies' world inverse inertias (k > 0), the joint coordinates,
    the joint rows at the poses now (``prepare_joint_rows``, no warm start), their impulses (k = 0: the
    last step's per step times ``warm_scale``; else the last substep's), the tree's factor
    (``use_tree``), v += h M^-1 F_ext, the solve (``solve_with_tree`` or ``solve_pgs``), x += h v,
    ``relax_iterations`` relax sweeps, the substep's impulses added to ``total``. ``merits``
    (substeps,) gets theta after each solve (``all_merits``; else after the last one only, the others 0:
    theta moves nothing). Returns the sweeps done."""
    kept = np.empty(row_count)
    refine = 0
    no_history = np.zeros(0)
    no_manifolds = np.zeros(0, dtype=np.int64)
    iters = 0
    for sub in range(substeps):
        for r in range(row_count):
            kept[r] = row_lambda[r]
        if sub > 0:
            update_body_frames(body_orientation, body_inv_inertia_local, body_inv_inertia_world, body_count)
        update_joint_coordinates(joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref,
                                 joint_active, body_position, body_orientation, joint_coord)
        _prepare_joint_rows_serial(joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref,
                                   joint_rel_q, joint_length, joint_soft, joint_has_limits, joint_limit,
                                   joint_motor_mode, joint_motor, joint_active, joint_row_start, joint_impulse,
                                   joint_coord, joint_lever, body_position, body_orientation, body_inv_mass,
                                   body_inv_inertia_world, body_fixed, h, fraction, max_speed, joint_frequency,
                                   joint_damping, False, block_solve, 0, dt, row_body, row_J, row_B, row_inv_diag,
                                   row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda,
                                   row_owner, row_cfm, row_group)
        if sub == 0:
            load_joint_impulses(joint_count, joint_active, joint_row_start, joint_row_count, 0, joint_impulse,
                                warm_scale, row_lambda)
        else:
            for r in range(row_count):
                row_lambda[r] = kept[r]
        if use_tree:
            mark_tree_rows(node_count, node_kind, node_ref, joint_type, joint_row_start, 0, row_group)
            spread = factor_tree(node_count, node_kind, node_ref, node_parent, node_side, joint_type,
                                 joint_row_start, 0, row_J, row_cfm, body_mass, body_inv_inertia_world, 0.0, D, D_fac,
                                 F, H_diag)
            refine = refine_steps if spread > refine_spread else 0     # as JointTree.factor
        integrate_velocities(body_linear_velocity, body_angular_velocity, body_orientation, body_inv_mass,
                             body_inertia_local, body_inv_inertia_world, body_force, body_torque, body_fixed,
                             body_count, gravity, h, gyroscopic, linear_damping, angular_damping)
        with_merit = all_merits or sub == substeps - 1
        if use_tree:
            done, merit = solve_with_tree(True, False, with_merit, no_manifolds, 0, row_count,
                                          row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link,
                                          row_mu, row_cfm, row_group, row_lambda, body_linear_velocity,
                                          body_angular_velocity, sweeps, tolerance, node_count, node_kind, node_ref,
                                          node_parent, joint_type, joint_row_start, 0, D_fac, F, H_diag, refine, y, x,
                                          z, active_set)
        else:
            done, merit = solve_pgs(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi,
                                    row_link, row_mu, row_cfm, row_group, row_lambda, body_linear_velocity,
                                    body_angular_velocity, sweeps, tolerance, no_history)
        iters += done
        merits[sub] = merit
        if midpoint:
            integrate_positions_midpoint(body_position, body_orientation, body_linear_velocity,
                                         body_angular_velocity, body_inertia_local, body_inv_inertia_local,
                                         body_fixed, body_count, h)
        else:
            integrate_positions(body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                                body_fixed, body_count, h)
        if relax_iterations > 0 and use_tree:
            solve_with_tree(False, False, False, no_manifolds, 0, row_count, row_body, row_J, row_B, row_inv_diag,
                            row_bias_relax, row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda,
                            body_linear_velocity, body_angular_velocity, relax_iterations, 0.0, node_count, node_kind,
                            node_ref, node_parent, joint_type, joint_row_start, 0, D_fac, F, H_diag, refine, y, x, z,
                            active_set)
        elif relax_iterations > 0:
            relax_pgs(row_count, row_body, row_J, row_B, row_inv_diag, row_bias_relax, row_lo, row_hi, row_link,
                      row_mu, row_cfm, row_group, row_lambda, body_linear_velocity, body_angular_velocity,
                      relax_iterations)
        for r in range(row_count):
            total[r] += row_lambda[r]
    return iters


@kernel
def contact_joint_substeps(substeps, h, dt, offset, row_count, contact_count, use_tree, warm_scale, fraction,
                           max_speed, joint_frequency, joint_damping, block_solve, sweeps, tolerance, relax_iterations,
                           active_set, beta, slop, split_speed, row_turn_tolerance, turn_tolerance, merits, total,
                           starts, restitution, no_bounce, depth, pseudo, row_orientation, changed, turned, reach,
                           start, disp_lin, disp_ang, joint_count, joint_type, joint_body, joint_anchor, joint_axis,
                           joint_ref, joint_rel_q, joint_length, joint_soft, joint_has_limits, joint_limit,
                           joint_motor_mode, joint_motor, joint_active, joint_row_start, joint_row_count,
                           joint_impulse, joint_coord, joint_lever, node_count, node_kind, node_ref, node_parent,
                           node_side, D, D_fac, F, H_diag, y, x, z, refine_spread, refine_steps, body_position,
                           body_orientation, body_linear_velocity, body_angular_velocity, body_mass, body_inv_mass,
                           body_inertia_local, body_inv_inertia_local, body_inv_inertia_world, body_force,
                           body_torque, body_fixed, body_count, gravity, gyroscopic, midpoint, linear_damping,
                           angular_damping, row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo,
                           row_hi, row_link, row_mu, row_kind, row_lambda, row_owner, row_cfm, row_group, guard):
    """The substep loop of a pgs step with contact rows (0 .. ``offset``) and joint rows (``offset`` ..
    ``row_count``), in one kernel call: the kernels ``PGSSolver._substeps`` calls one by one (and still
    does with ``profile_stages``), in the same order and on the same arrays, so the result is the same
    bit for bit (IEEE arithmetic, config.py). The caller has done the loop's set-up (the contact rows'
    per-substep impulses and bounds, ``restitution``, ``depth``, the work arrays ``pseudo`` ..
    ``disp_ang``, ``starts`` the manifolds or none). Issue 19: ragdolls' loop made ~14 kernel calls per
    substep (12 substeps), each ~0.7 us plus ~0.13 us per array argument, as many laps and NumPy copies.

    Per substep k: the contacts' targets (``substep_contact_targets``); the bodies' world inverse
    inertias (k > 0), the joint coordinates and the joint rows at the poses now, their impulses (k = 0:
    the last step's per step times ``warm_scale``; else the last substep's, zero on a turned body's),
    the tree's factor (``use_tree``); v += h M^-1 F_ext; the solve (``solve_with_tree``, or the
    manifold blocks / plain sweeps); the displacement since the step began, x += h v, the
    pseudo-velocity pass when some contact is deep, the contact rows' B at the orientations now and
    the turned bodies; the relax sweeps; the substep's impulses added to ``total``. ``merits``
    (substeps,) gets theta after each solve. With ``guard`` (``PGSSettings.pushed_energy_guard``) the
    energy guard of the bodies the pseudo-velocity pass moved, as in ``contact_substeps``.
    Returns (sweeps done, last theta)."""
    kept = np.empty(max(row_count - offset, 0))
    refine = 0
    no_history = np.zeros(0)
    manifolds = max(starts.shape[0] - 1, 0)
    blocks = starts.shape[0] > 0
    iters = 0
    merit = 0.0
    deep = 0
    guarded = body_count if guard else 0        # the energy guard's state (zero-length without it)
    pushed = np.zeros(guarded, dtype=np.bool_)
    x0 = np.empty((guarded, 3))
    v_lin0 = np.empty((guarded, 3))
    w_body0 = np.empty((guarded, 3))
    for sub in range(substeps):
        deep = substep_contact_targets(contact_count, row_body, row_J, depth, restitution if sub == 0 else no_bounce,
                                       disp_lin, disp_ang, beta, slop, max_speed, split_speed, h, row_bias,
                                       row_bias_relax, pseudo, turned, row_lambda)
        if deep and guard:
            pushed_start(body_count, body_fixed, body_position, body_orientation, body_linear_velocity,
                         body_angular_velocity, x0, v_lin0, w_body0)
        for r in range(offset, row_count):
            kept[r - offset] = row_lambda[r]
        if sub > 0:
            update_body_frames(body_orientation, body_inv_inertia_local, body_inv_inertia_world, body_count)
        update_joint_coordinates(joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref,
                                 joint_active, body_position, body_orientation, joint_coord)
        _prepare_joint_rows_serial(joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref,
                                   joint_rel_q, joint_length, joint_soft, joint_has_limits, joint_limit,
                                   joint_motor_mode, joint_motor, joint_active, joint_row_start, joint_impulse,
                                   joint_coord, joint_lever, body_position, body_orientation, body_inv_mass,
                                   body_inv_inertia_world, body_fixed, h, fraction, max_speed, joint_frequency,
                                   joint_damping, False, block_solve, offset, dt, row_body, row_J, row_B,
                                   row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind,
                                   row_lambda, row_owner, row_cfm, row_group)
        if sub == 0:
            load_joint_impulses(joint_count, joint_active, joint_row_start, joint_row_count, offset, joint_impulse,
                                warm_scale, row_lambda)
        else:
            for r in range(offset, row_count):
                row_lambda[r] = kept[r - offset]
            forget_turned_rows(offset, row_count, row_body, turned, row_lambda)
        if use_tree:
            mark_tree_rows(node_count, node_kind, node_ref, joint_type, joint_row_start, offset, row_group)
            spread = factor_tree(node_count, node_kind, node_ref, node_parent, node_side, joint_type,
                                 joint_row_start, offset, row_J, row_cfm, body_mass, body_inv_inertia_world, 0.0, D,
                                 D_fac, F, H_diag)
            refine = refine_steps if spread > refine_spread else 0     # as JointTree.factor
        integrate_velocities(body_linear_velocity, body_angular_velocity, body_orientation, body_inv_mass,
                             body_inertia_local, body_inv_inertia_world, body_force, body_torque, body_fixed,
                             body_count, gravity, h, gyroscopic, linear_damping, angular_damping)
        if use_tree:
            done, merit = solve_with_tree(True, blocks, True, starts, manifolds, row_count, row_body, row_J, row_B,
                                          row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu, row_cfm,
                                          row_group, row_lambda, body_linear_velocity, body_angular_velocity, sweeps,
                                          tolerance, node_count, node_kind, node_ref, node_parent, joint_type,
                                          joint_row_start, offset, D_fac, F, H_diag, refine, y, x, z, active_set)
        elif blocks:
            done, merit = solve_pgs_blocks(starts, manifolds, row_count, row_body, row_J, row_B, row_inv_diag,
                                           row_bias, row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda,
                                           body_linear_velocity, body_angular_velocity, sweeps, tolerance, active_set)
        else:
            done, merit = solve_pgs(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi,
                                    row_link, row_mu, row_cfm, row_group, row_lambda, body_linear_velocity,
                                    body_angular_velocity, sweeps, tolerance, no_history)
        iters += done
        merits[sub] = merit
        accumulate_displacement(body_count, body_fixed, body_position, start, body_angular_velocity, h, disp_lin,
                                disp_ang)
        if midpoint:
            integrate_positions_midpoint(body_position, body_orientation, body_linear_velocity,
                                         body_angular_velocity, body_inertia_local, body_inv_inertia_local,
                                         body_fixed, body_count, h)
        else:
            integrate_positions(body_position, body_orientation, body_linear_velocity, body_angular_velocity,
                                body_fixed, body_count, h)
        if deep:
            pseudo_correction(starts, manifolds, row_count, row_body, row_J, row_B, row_inv_diag, pseudo, row_lo,
                              row_hi, row_link, row_mu, row_cfm, row_group, body_position, body_orientation,
                              body_fixed, body_count, sweeps, h, disp_ang, body_angular_velocity, active_set, pushed)
        for i in range(body_count):
            for c in range(3):
                disp_lin[i, c] = body_position[i, c] - start[i, c]
        refresh_turned_rows(offset, row_body, row_J, row_B, row_inv_diag, body_orientation, row_orientation,
                            body_inv_inertia_local, body_inv_inertia_world, body_fixed, body_count, changed,
                            row_turn_tolerance)
        mark_turned_bodies(body_count, body_fixed, disp_ang, reach, turn_tolerance, turned)
        if relax_iterations > 0 and use_tree:
            solve_with_tree(False, blocks, False, starts, manifolds, row_count, row_body, row_J, row_B, row_inv_diag,
                            row_bias_relax, row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda,
                            body_linear_velocity, body_angular_velocity, relax_iterations, 0.0, node_count, node_kind,
                            node_ref, node_parent, joint_type, joint_row_start, offset, D_fac, F, H_diag, refine, y,
                            x, z, active_set)
        elif relax_iterations > 0 and blocks:
            relax_pgs_blocks(starts, manifolds, row_count, row_body, row_J, row_B, row_inv_diag, row_bias_relax,
                             row_lo, row_hi, row_link, row_mu, row_cfm, row_group, row_lambda, body_linear_velocity,
                             body_angular_velocity, relax_iterations, active_set)
        elif relax_iterations > 0:
            relax_pgs(row_count, row_body, row_J, row_B, row_inv_diag, row_bias_relax, row_lo, row_hi, row_link,
                      row_mu, row_cfm, row_group, row_lambda, body_linear_velocity, body_angular_velocity,
                      relax_iterations)
        if deep and guard:
            guard_pushed_bodies(body_count, body_fixed, pushed, body_mass, body_inertia_local, gravity, body_force,
                                body_torque, h, x0, v_lin0, w_body0, body_position, body_orientation,
                                body_linear_velocity, body_angular_velocity)
        for r in range(row_count):
            total[r] += row_lambda[r]
    return iters, merit


@kernel
def finish_tree_step(project, total, dt, iterations, tolerance, no_loops, node_count, node_kind, node_ref, node_parent,
                     node_side, joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref, joint_rel_q,
                     joint_length, joint_soft, joint_has_limits, joint_limit, joint_motor_mode, joint_motor,
                     joint_active, joint_row_start, joint_row_count, joint_row_total, joint_impulse, joint_coord,
                     joint_lever, joint_force, joint_torque, row_J, body_position, body_orientation, body_mass,
                     body_inv_mass, body_inv_inertia_local, body_inv_inertia_world, body_fixed, body_count):
    """The end of a joint-only pgs step whose joint rows are all the tree's (``PGSSolver._joint_substeps``)
    in one call, issue 19: what ``stages.finish_joints`` (the step's impulses ``total`` stored, the
    reactions) and, with ``project``, ``stages.project_joints`` (frames and joint coordinates refreshed,
    ``joints.tree.project_tree``'s Newton steps; no loop joint, no limit: nothing left for the passes)
    call, in their order, so bit for bit. ``body_position``: the live rows. Returns project_tree's
    (largest error before, after, whether a step was undone: then the caller runs the passes over every
    joint), or (0, 0, False) without ``project``."""
    store_joint_impulses(joint_count, joint_active, joint_row_start, joint_row_count, 0, total, 1.0, joint_impulse)
    joint_reactions(joint_count, joint_active, joint_row_start, joint_row_count, 0, row_J, total, dt, joint_lever,
                    joint_force, joint_torque)
    if not project:
        return 0.0, 0.0, False
    update_body_frames(body_orientation, body_inv_inertia_local, body_inv_inertia_world, body_count)
    update_joint_coordinates(joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref, joint_active,
                             body_position, body_orientation, joint_coord)
    return project_tree(node_count, node_kind, node_ref, node_parent, node_side, joint_type, joint_body, joint_anchor,
                        joint_axis, joint_ref, joint_rel_q, joint_length, joint_soft, joint_has_limits, joint_limit,
                        joint_motor_mode, joint_motor, joint_row_start, joint_row_total, joint_impulse, joint_coord,
                        joint_lever, body_position, body_orientation, body_mass, body_inv_mass,
                        body_inv_inertia_world, body_fixed, dt, iterations, tolerance, no_loops)


@kernel
def tree_inputs_unchanged(joint_count, joint_active, joint_body, body_fixed, body_mass, body_count, key_active,
                          key_body, key_fixed, key_mass):
    """Whether the inputs of ``joints.tree.build_joint_tree`` (the active joints, their bodies, which
    bodies are fixed and their masses) equal the copies ``key_*`` taken when the cached tree was built
    (``PGSSolver._tree``): then the tree is the same and is reused. Counts are compared by the keys'
    lengths."""
    if key_active.shape[0] != joint_count or key_fixed.shape[0] != body_count:
        return False
    for j in range(joint_count):
        if key_active[j] != joint_active[j] or key_body[j, 0] != joint_body[j, 0] or key_body[j, 1] != joint_body[j, 1]:
            return False
    for i in range(body_count):
        if key_fixed[i] != body_fixed[i] or key_mass[i] != body_mass[i]:
            return False
    return True
