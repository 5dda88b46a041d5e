"""The jacobi solver's kernel: warm start, then projected Jacobi sweeps (Erleben 000 §3, eq. 28-30
with every row updated from the same iterate).

One sweep, with V = V_pred + B lambda kept current as in ``rows.sweep_rows``:

    delta_i = clamp(lambda_i + omega (zeta_i - J_i V - gamma_i lambda_i) / (A_ii + gamma_i),
                    lo_i, hi_i) - lambda_i          for every row i, from the SAME V and lambda,
    lambda += delta,   V += B delta                  all at once afterwards.

Friction bounds +-mu lambda_n use the normal impulse at the start of the sweep. omega in (0, 1] is
the relaxation (``JacobiSettings.relaxation``); gamma_i the row's constraint force mixing (0 for
contact rows). Rows of a group (joints) are not handled: the solver declares no joints.
"""

from __future__ import annotations

import numpy as np

from tumble._core.config import kernel
from tumble._core.dynamics.integrate import apply_pseudo_velocities
from tumble._core.merit import final_merit, ncp_merit
from tumble._core.rows import apply_movable, clamped_update, row_velocity, warm_start


@kernel
def jacobi_sweep(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                 row_cfm, row_lambda, v_lin, v_ang, relaxation, delta):
    """One projected Jacobi sweep over rows [0, row_count); ``delta`` (>= row_count,) is scratch.
    Returns the largest velocity change along a row, |delta_i| (J B)_ii [m/s]."""
    # phase 1: every update from the velocities and impulses at the start of the sweep
    for r in range(row_count):
        inv_d = row_inv_diag[r]
        if inv_d == 0.0:
            delta[r] = 0.0
            continue
        jv = row_velocity(r, row_body, row_J, v_lin, v_ang)
        old = row_lambda[r]
        new = clamped_update(r, old, jv, inv_d, row_cfm[r], relaxation, row_bias, row_lo, row_hi, row_link, row_mu,
                             row_lambda)
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
def solve_jacobi(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                 row_cfm, row_lambda, v_lin, v_ang, iterations, relaxation, tolerance, merit_history):
    """Warm start (V += B lambda0), then up to ``iterations`` Jacobi sweeps; stops early when the
    largest velocity change of a sweep is below ``tolerance`` [m/s] (0 = fixed count).

    ``merit_history`` (k,) receives theta(lambda) after each sweep when k >= iterations (000 Fig. 5);
    pass a zero-length array to skip that cost. Returns (sweeps done, final merit theta)."""
    warm_start(row_count, row_body, row_B, row_lambda, v_lin, v_ang)
    delta = np.zeros(max(row_count, 1))     # scratch, once per solve
    done = 0
    record = merit_history.shape[0] >= iterations
    for it in range(iterations):
        dv = jacobi_sweep(row_count, row_body, row_J, row_B, row_inv_diag, row_bias, row_lo, row_hi, row_link,
                          row_mu, row_cfm, row_lambda, v_lin, v_ang, relaxation, delta)
        done = it + 1
        if record:
            merit_history[it] = ncp_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi,
                                          row_link, row_mu, row_lambda, v_lin, v_ang)
        if tolerance > 0.0 and dv < tolerance:
            break
    return done, final_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                             row_lambda, v_lin, v_ang)


@kernel
def relax_jacobi(row_count, row_body, row_J, row_B, row_inv_diag, row_bias_relax, row_lo, row_hi, row_link, row_mu,
                 row_cfm, row_lambda, v_lin, v_ang, iterations, relaxation):
    """``iterations`` Jacobi sweeps against the targets without Baumgarte feedback (``row_bias_relax``),
    after the positions moved: the relax stage of pgs (Box2D v3's) in Jacobi form. The push-out
    velocity of the main sweeps has moved the positions; these sweeps take it out of the velocities
    again, continuing from the main solve's impulses (no second warm start). Without them the
    Baumgarte velocity stayed in the bodies as kinetic energy [tumble, issue 18]."""
    delta = np.zeros(max(row_count, 1))
    for _ in range(iterations):
        jacobi_sweep(row_count, row_body, row_J, row_B, row_inv_diag, row_bias_relax, row_lo, row_hi, row_link,
                     row_mu, row_cfm, row_lambda, v_lin, v_ang, relaxation, delta)


@kernel
def jacobi_pseudo_correction(row_count, row_body, row_J, row_B, row_inv_diag, bias_pseudo, row_lo, row_hi, row_link,
                             row_mu, row_cfm, body_position, body_orientation, body_fixed, body_count, iterations,
                             relaxation, dt, v_ang):
    """The deep overlaps' pseudo-velocity pass (``RowSettings.split_speed``) in Jacobi sweeps: from
    zero velocities and impulses, ``iterations`` sweeps solve J v_p = bias_pseudo (the deep
    contacts' pushes, 0 on every other row, lambda_p in the rows' own bounds), every dynamic body
    is displaced by dt v_p (``displace_body``) and v_p is dropped, so separating a deep overlap
    moves bodies without giving them the push as velocity; a body it turns keeps its body-frame
    angular velocity (``turn_with_body``)."""
    lam_p = np.zeros(row_count)
    delta = np.zeros(row_count)
    vp_lin = np.zeros((body_count, 3))
    vp_ang = np.zeros((body_count, 3))
    for _ in range(iterations):
        jacobi_sweep(row_count, row_body, row_J, row_B, row_inv_diag, bias_pseudo, row_lo, row_hi, row_link, row_mu,
                     row_cfm, lam_p, vp_lin, vp_ang, relaxation, delta)
    apply_pseudo_velocities(body_count, body_fixed, vp_lin, vp_ang, dt, body_position, body_orientation, v_ang)
