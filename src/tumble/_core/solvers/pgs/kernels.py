"""The pgs solver's kernels: warm start, PGS sweeps (Catto 001 Alg. 4) and the relax sweeps.

The row update itself (``rows.sweep_rows``) is shared with the shock solver and the joint projection.
"""

from __future__ import annotations

from tumble._core.config import kernel
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
