"""The pgs solver's kernels: warm start, PGS sweeps (Catto 001 Alg. 4) and the relax sweeps.

The row update itself (``rows.sweep_rows``) is shared with the shock solver and the joint projection.
"""

from __future__ import annotations

import numpy as np

from tumble._core.config import kernel
from tumble._core.dynamics.integrate import displace_body
from tumble._core.merit import final_merit, ncp_merit
from tumble._core.rows import pgs_sweep, warm_start


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
                     iterations, dt):
    """Position correction by pseudo-velocities (split impulse, as Bullet's ``splitImpulse``; the
    position pass of Catto's later work): the Baumgarte part of each row's target,
    b_pos = row_bias - row_bias_relax (001 eq. 20, capped by max_correction_speed), is solved by PGS
    sweeps into separate velocities v_p (from zero, own accumulated impulses lambda_p >= 0, the same
    friction cone), and every dynamic body is displaced by dt v_p (``displace_body``). v_p is then
    dropped: position correction moves bodies but never enters the real velocities, so separating an
    overlap cannot release kinetic energy however deep or jammed it is."""
    bias_p = np.empty(row_count)
    lam_p = np.zeros(row_count)
    for r in range(row_count):
        bias_p[r] = row_bias[r] - row_bias_relax[r]
    vp_lin = np.zeros((body_count, 3))
    vp_ang = np.zeros((body_count, 3))
    for _ in range(iterations):
        pgs_sweep(0, row_count, row_body, row_J, row_B, row_inv_diag, bias_p, row_lo, row_hi, row_link, row_mu,
                  row_cfm, row_group, lam_p, vp_lin, vp_ang)
    for i in range(body_count):
        for k in range(3):
            vp_lin[i, k] *= dt
            vp_ang[i, k] *= dt
        if not body_fixed[i]:
            displace_body(i, vp_lin, vp_ang, body_position, body_orientation)
