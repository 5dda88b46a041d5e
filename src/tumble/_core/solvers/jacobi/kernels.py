"""The jacobi solver's kernel: warm start, then projected Jacobi sweeps (Erleben 000 §3, eq. 28-30
with every row updated from the same iterate).

One sweep, with V = V_pred + B lambda kept current as in ``rows.sweep_rows``:

    delta_i = clamp(lambda_i + omega (zeta_i - J_i V - gamma_i lambda_i) / (A_ii + gamma_i),
                    lo_i, hi_i) - lambda_i          for every row i, from the SAME V and lambda,
    lambda += delta,   V += B delta                  all at once afterwards.

Friction bounds +-mu lambda_n use the normal impulse at the start of the sweep. omega_i in (0, 1] is
row i's relaxation: ``JacobiSettings.relaxation``; once a sweep raises its objective it is undone
and the rows' relaxations are capped by ``row_relaxation``, under which every sweep descends however
many rows act on one body (``guarded_sweeps``, issue 17). gamma_i is the row's constraint force
mixing (0 for contact rows). Rows of a group (joints) are not handled: the solver declares no joints.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core.config import kernel
from tumble._core.dynamics.integrate import apply_pseudo_velocities, keep_grounded_pushes, mark_pushed
from tumble._core.merit import final_merit, ncp_merit
from tumble._core.rows import apply_movable, clamped_value, row_velocity, warm_start


@kernel
def jacobi_sweep(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                 row_cfm, row_lambda, v_lin, v_ang, row_omega, delta):
    """One projected Jacobi sweep over rows [0, row_count) with row r's relaxation ``row_omega[r]``
    (``row_relaxation``); ``delta`` (>= row_count,) is scratch.
    Returns the largest velocity change along a row, |delta_i| (J B)_ii [m/s]."""
    # phase 1: every update from the velocities and impulses at the start of the sweep
    for r in range(row_count):
        inv_d = row_inv_diag[r]
        if inv_d == 0.0:
            delta[r] = 0.0
            continue
        jv = row_velocity(r, row_body, row_J, v_lin, v_ang)
        old = row_lambda[r]
        lo = row_lo[r]
        hi = row_hi[r]
        link = row_link[r]
        if link >= 0:
            hi = row_mu[r] * row_lambda[link]
            lo = -hi
        new = clamped_value(old, jv, inv_d, row_cfm[r], row_omega[r], row_bias[r], lo, hi)
        delta[r] = new - old
    # phase 2: apply them all
    none = np.empty(0, dtype=np.int64)
    max_dv = 0.0
    for r in range(row_count):
        d = delta[r]
        if d == 0.0:
            continue
        row_lambda[r] += d
        dv = abs(d) / row_inv_diag[r]
        if dv > max_dv:
            max_dv = dv
        apply_movable(r, d, -1, none, row_body, row_B, v_lin, v_ang)
    return max_dv


@kernel
def guarded_sweeps(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                   row_cfm, row_lambda, v_lin, v_ang, iterations, omega, bound, body_count, tolerance, merit_history):
    """Up to ``iterations`` projected Jacobi sweeps at relaxation ``omega``, each checked for descent of
    the sweeps' objective (``row_relaxation``'s f = KE(V) - zeta^T lambda, with constraint force mixing
    + 1/2 lambda^T Gamma lambda) [tumble, issue 17]. Sweep k's change of f needs no masses: with
    d = its increments, r_i = zeta_i - J_i V - gamma_i lambda_i the residuals it started from and
    J_i dV the change of row i's velocity that the next sweep's J_i V shows,

        df = sum_i d_i (1/2 J_i dV + 1/2 gamma_i d_i - r_i)       (f is quadratic in lambda),

    so it is summed in the next sweep's first phase. When a sweep raised f (by more than 1e-9 of
    sum |d_i r_i|, rounding), it is undone and the solve goes on with every row's relaxation capped
    by ``row_relaxation`` (``bound`` > 0), under which every sweep descends. The last sweep is not
    checked (one more pass over the rows cost 4 % of a 10-sweep solve on pile1000): an overshoot
    raises f in every sweep once it dominates, so it shows in an earlier one (the fuzz's
    JACOBI_OVERSHOOT_CASES are held the same with and without that pass). Cost of the check: 5-8 %
    of a 10-sweep ``solve_jacobi`` on pile1000 (2.41-2.47 against 2.29 ms, interleaved minimum of 40
    calls; checking only every other sweep measured no cheaper within the noise).
    Plain Jacobi descends unless the rows on a body overshoot together (omega rho(D^-1 A) >= 2) or
    the friction bounds move with the normal impulses; where it descends this is the plain solve,
    bit for bit; ``bound`` = 0 is the plain solve always. Stops early when a sweep's largest velocity
    change along a row is below ``tolerance`` [m/s] (0 = fixed count); records theta after each sweep
    in ``merit_history`` when it has >= ``iterations`` entries. Returns (sweeps done, whether the cap was taken)."""
    n = max(row_count, 1)
    row_omega = np.empty(n)             # scratch, once per call; filled when the cap is taken
    delta = np.zeros((2, n))            # this sweep's increments and the previous sweep's (alternating)
    jv = np.zeros(n)                    # J_i V at the start of the previous sweep
    none = np.empty(0, dtype=np.int64)
    record = merit_history.shape[0] >= iterations
    check = bound > 0.0
    have_prev = False
    capped = False
    done = 0
    while done < iterations:
        cur = done % 2
        last = 1 - cur
        # phase 1: every update from the velocities and impulses at the start of the sweep, and the
        # previous sweep's change of f: d_i (1/2 J_i (V + V_old) - zeta_i + gamma_i (lambda_old_i + d_i / 2))
        rise = 0.0
        scale = 0.0
        watch = have_prev and check and not capped
        for r in range(row_count):
            inv_d = row_inv_diag[r]
            if inv_d == 0.0:
                delta[cur, r] = 0.0
                continue
            v = row_velocity(r, row_body, row_J, v_lin, v_ang)
            gamma = row_cfm[r]
            old = row_lambda[r]
            if watch:
                p = delta[last, r]
                if p != 0.0:
                    before = old - p
                    rise += p * (0.5 * (v + jv[r]) - row_bias[r] + gamma * (before + 0.5 * p))
                    scale += abs(p * (row_bias[r] - jv[r] - gamma * before))
            jv[r] = v
            lo = row_lo[r]
            hi = row_hi[r]
            link = row_link[r]
            if link >= 0:
                hi = row_mu[r] * row_lambda[link]
                lo = -hi
            new = clamped_value(old, v, inv_d, gamma, row_omega[r] if capped else omega, row_bias[r], lo, hi)
            delta[cur, r] = new - old
        if watch and rise > 1e-9 * scale:
            # the previous sweep raised f: undo it, cap the relaxation, and sweep again from there
            for r in range(row_count):
                p = delta[last, r]
                if p != 0.0:
                    row_lambda[r] -= p
                    apply_movable(r, -p, -1, none, row_body, row_B, v_lin, v_ang)
            row_relaxation(row_count, row_body, row_J, row_B, row_inv_diag, body_count, omega, bound, row_omega)
            capped = True
            have_prev = False
            continue
        # phase 2: apply them all
        max_dv = 0.0
        for r in range(row_count):
            d = delta[cur, r]
            if d == 0.0:
                continue
            row_lambda[r] += d
            dv = abs(d) / row_inv_diag[r]
            if dv > max_dv:
                max_dv = dv
            apply_movable(r, d, -1, none, row_body, row_B, v_lin, v_ang)
        have_prev = True
        done += 1
        if record:
            merit_history[done - 1] = ncp_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi,
                                                row_link, row_mu, row_lambda, v_lin, v_ang)
        if tolerance > 0.0 and max_dv < tolerance:
            break
    return done, capped


@kernel
def solve_jacobi(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                 row_cfm, row_lambda, v_lin, v_ang, iterations, omega, bound, body_count, tolerance, merit_history):
    """Warm start (V += B lambda0), then up to ``iterations`` guarded Jacobi sweeps (``guarded_sweeps``:
    relaxation ``omega``, capped by ``bound`` where a sweep would raise its objective); stops early when
    the largest velocity change of a sweep is below ``tolerance`` [m/s] (0 = fixed count).

    ``merit_history`` (k,) receives theta(lambda) after each sweep when k >= iterations (000 Fig. 5);
    pass a zero-length array to skip that cost. Returns (sweeps done, final merit theta)."""
    warm_start(row_count, row_body, row_B, row_lambda, v_lin, v_ang)
    done, _ = guarded_sweeps(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link,
                             row_mu, row_cfm, row_lambda, v_lin, v_ang, iterations, omega, bound, body_count, tolerance,
                             merit_history)
    return done, final_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                             row_lambda, v_lin, v_ang)


@kernel
def relax_jacobi(row_count, row_body, row_J, row_B, row_inv_diag, row_bias_relax, row_lo, row_hi, row_link, row_mu,
                 row_cfm, row_lambda, v_lin, v_ang, iterations, omega, bound, body_count):
    """``iterations`` guarded Jacobi sweeps against the targets without Baumgarte feedback (``row_bias_relax``),
    after the positions moved: the relax stage of pgs (Box2D v3's) in Jacobi form. The push-out
    velocity of the main sweeps has moved the positions; these sweeps take it out of the velocities
    again, continuing from the main solve's impulses (no second warm start). Without them the
    Baumgarte velocity stayed in the bodies as kinetic energy [tumble, issue 18]."""
    guarded_sweeps(row_count, row_body, row_J, row_B, row_inv_diag, row_bias_relax, row_lo, row_hi, row_link, row_mu,
                   row_cfm, row_lambda, v_lin, v_ang, iterations, omega, bound, body_count, 0.0, np.zeros(0))


@kernel
def jacobi_pseudo_correction(row_count, row_body, row_J, row_B, row_inv_diag, bias_pseudo, row_lo, row_hi, row_link,
                             row_mu, row_cfm, body_position, body_orientation, body_fixed, body_count, iterations,
                             omega, bound, dt, v_ang, pushed):
    """The deep overlaps' pseudo-velocity pass (``RowSettings.split_speed``) in guarded Jacobi sweeps:
    from zero velocities and impulses, ``iterations`` sweeps solve J v_p = bias_pseudo (the deep
    contacts' pushes, 0 on every other row, lambda_p in the rows' own bounds), every dynamic body
    is displaced by dt v_p (``displace_body``) and v_p is dropped, so separating a deep overlap
    moves bodies without giving them the push as velocity; a body it turns keeps its body-frame
    angular velocity (``turn_with_body``). ``pushed`` (n,) gets the bodies the pass moved
    (``mark_pushed``; zero-length: not recorded), for the energy guard (``integrate.guard_pushed_bodies``)."""
    lam_p = np.zeros(row_count)
    vp_lin = np.zeros((body_count, 3))
    vp_ang = np.zeros((body_count, 3))
    guarded_sweeps(row_count, row_body, row_J, row_B, row_inv_diag, bias_pseudo, row_lo, row_hi, row_link, row_mu,
                   row_cfm, lam_p, vp_lin, vp_ang, iterations, omega, bound, body_count, 0.0, np.zeros(0))
    mark_pushed(body_count, body_fixed, vp_lin, vp_ang, pushed)
    keep_grounded_pushes(row_count, row_body, bias_pseudo, body_fixed, pushed)
    apply_pseudo_velocities(body_count, body_fixed, vp_lin, vp_ang, dt, body_position, body_orientation, v_ang)


@kernel
def row_relaxation(row_count, row_body, row_J, row_B, row_inv_diag, body_count, omega, bound, row_omega):
    """row_omega[r] = min(omega, bound A_rr / D_rr): each row's relaxation, capped so that the sweep
    descends its objective however many rows push one body [tumble, issue 17].

    Why: a sweep minimises f(lambda) = 1/2 lambda^T A lambda - lambda^T (zeta - J V_pred), A = J M^-1 J^T
    (f = KE(V) - KE(V_pred) - zeta^T lambda: the kinetic energy less the work of the targets), by the
    projected step lambda <- clamp(lambda + T (zeta - J V)) with T = diag(omega_r / A_rr). Clamping to
    a box is the projection in the T^-1 metric, so (the projected-gradient descent lemma)

        f(lambda') <= f(lambda) - d^T (T^-1 - A / 2) d,     d = lambda' - lambda,

    and f falls in every sweep when 2 T^-1 > A. omega alone gives that only for omega < 2 / rho(D^-1 A)
    (D = diag A); rho grows with the rows on a body (the k rows of a body all correct the same error,
    000 §3), so a default omega for stacks fails on a body with 20 contact points at 60 m levers
    (test_fuzz's JACOBI_OVERSHOOT_CASES: 2e8 J gained).

    The bound D >= A, per body: A = sum_b J_b M_b^-1 J_b^T over the bodies b; body b's block
    G_b = J_b M_b^-1 J_b^T over its k_b rows satisfies G_b <= lam_b diag(G_b) with lam_b the largest
    eigenvalue of diag(G_b)^-1/2 G_b diag(G_b)^-1/2, whose non-zero eigenvalues are those of the 6 x 6

        P_b = sum_{rows r on b} B_rb J_rb^T / g_rb,     g_rb = J_rb . B_rb  (B = M^-1 J^T),

    so D_rr = sum_{sides b of r} lam_b g_rb >= A's row r in the PSD sense (sum_b lam_b D_b >= sum_b G_b).
    lam_b <= min(k_b, tr(P_b^8)^(1/8)): tr P^p = sum lambda^p over the (real, >= 0) eigenvalues, so the
    8th root over-estimates the largest by at most rank^(1/8) <= 6^(1/8) = 1.25. Then T^-1 >= D / bound
    > A / 2 for bound < 2; bound = 0 switches the cap off. Measured, the mean D_rr / A_rr of the
    candidate bounds (stack10 after 2 s / pyramid20 after 2 s / pile1000 after 2 s; rho(D^-1 A) 7.9 /
    9.2 / 3.9): exact lam_b 7.72 / 13.5 / 3.93, this one 7.76 / 13.5 / 4.20, the Gershgorin row sums of A
    (sum_j |A_rj|, which need every pair of rows on a body) 8.06 / 14.0 / 5.98, tr(P^2)^(1/2) 10.8 /
    18.9 / 7.4, and tr P = k_b, mass splitting (each body's update from its k rows scaled by 1/k),
    23.4 / 41.2 / 17.6: 3-4x too cautious (with it and bound 1 stack10's rows were capped to omega 0.04 and
    pyramid20 drifted 2.7 m in 2 s).
    Cost: one pass over the rows' J and B (36 multiply-adds a side) and, only for the bodies whose
    cheaper tr(P^2)^(1/2) could cap a row, two 6 x 6 products: 0.12 of a 10-sweep ``solve_jacobi`` on
    pile1000 (interleaved minimum of 40 calls each), so ``guarded_sweeps`` computes it only once a
    sweep has raised f: capping every solve changed tower320 (16 courses of bricks, rho(D^-1 A) below
    10, the per-body bound above it) from resting (7e-4 J after 1.2 s) to 400 J of jitter.
    ``row_omega`` (row_count,) is written; g, P, k, lam are scratch, allocated here once per call."""
    for r in range(row_count):
        row_omega[r] = omega
    if bound <= 0.0:
        return
    g = np.zeros((row_count, 2))        # g_rb; scratch, once per call
    P = np.zeros((body_count, 36))
    k = np.zeros(body_count)
    for r in range(row_count):
        if row_inv_diag[r] == 0.0:
            continue
        for side in range(2):
            b = row_body[r, side]
            if b < 0:
                continue
            gs = 0.0
            for c in range(6):
                gs += row_J[r, side, c] * row_B[r, side, c]
            if gs <= 0.0:       # a fixed side (B = 0)
                continue
            g[r, side] = gs
            k[b] += 1.0
            inv_g = 1.0 / gs
            for c in range(6):
                f = row_B[r, side, c] * inv_g
                for e in range(6):
                    P[b, 6 * c + e] += f * row_J[r, side, e]
    # lam_b; the 8th-root bound only where the 2nd-root one, tr(P^2)^(1/2) >= tr(P^8)^(1/8), could cap a
    # row: with every lam_b <= bound / omega no row is capped (D_rr <= (bound / omega) A_rr)
    enough = bound / omega
    lam = np.zeros(body_count)
    Q = np.zeros(36)
    R = np.zeros(36)
    for b in range(body_count):
        if k[b] == 0.0:
            continue
        t = 0.0                         # tr P^2
        for c in range(6):
            for e in range(6):
                t += P[b, 6 * c + e] * P[b, 6 * e + c]
        est = math.sqrt(t) if t > 0.0 else 0.0
        if min(k[b], est) > enough:
            for c in range(6):          # Q = P^2
                for e in range(6):
                    s = 0.0
                    for m in range(6):
                        s += P[b, 6 * c + m] * P[b, 6 * m + e]
                    Q[6 * c + e] = s
            for c in range(6):          # R = P^4
                for e in range(6):
                    s = 0.0
                    for m in range(6):
                        s += Q[6 * c + m] * Q[6 * m + e]
                    R[6 * c + e] = s
            t = 0.0                     # tr P^8 = tr R R
            for c in range(6):
                for e in range(6):
                    t += R[6 * c + e] * R[6 * e + c]
            est = math.sqrt(math.sqrt(math.sqrt(t))) if t > 0.0 else 0.0
        lam[b] = min(k[b], est)
    for r in range(row_count):
        dd = lam[row_body[r, 0]] * g[r, 0] if g[r, 0] > 0.0 else 0.0
        if g[r, 1] > 0.0:
            dd += lam[row_body[r, 1]] * g[r, 1]
        if dd > 0.0:
            cap = bound / (dd * row_inv_diag[r])
            if cap < omega:
                row_omega[r] = cap
