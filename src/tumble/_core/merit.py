"""NCP merit function of the boxed complementarity problem (Erleben 000 eq. 37-38).

    H(lambda) = min(lambda - lo, max(lambda - hi, w)),   theta = 1/2 H^T H

with w the constraint velocity residual w = J V - zeta (000 eq. 20: w = A lambda + b). Here w is
scaled by each row's effective mass 1 / (J B)_ii, so both arguments of min/max are impulses [N s]
and theta is in (N s)^2; a positive diagonal scaling of w leaves the zero set, i.e. the solutions,
unchanged. theta = 0 exactly when every row satisfies its complementarity condition (001 §7.3).
Friction bounds are the coupled ones, +-mu lambda_n (000 eq. 29).
"""

from __future__ import annotations

import math

from tumble._core.config import kernel


@kernel
def ncp_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
              row_lambda, v_lin, v_ang):
    theta = 0.0
    for r in range(row_count):
        inv_d = row_inv_diag[r]
        if inv_d == 0.0:
            continue
        jv = 0.0
        for side in range(2):
            b = row_body[r, side]
            if b < 0:
                continue
            for k in range(3):
                jv += row_J[r, side, k] * v_lin[b, k] + row_J[r, side, 3 + k] * v_ang[b, k]
        w = (jv - row_bias[r]) * inv_d
        lo = row_lo[r]
        hi = row_hi[r]
        if row_link[r] >= 0:
            hi = row_mu[r] * row_lambda[row_link[r]]
            lo = -hi
        lam = row_lambda[r]
        h = min(lam - lo, max(lam - hi, w))
        theta += 0.5 * h * h
    return theta


@kernel
def final_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu, row_lambda,
                v_lin, v_ang):
    """theta after a solve, as the row solvers report it: inf where it is not finite (a diverged
    solve), so counters and plots never carry a NaN."""
    theta = ncp_merit(row_count, row_body, row_J, row_inv_diag, row_bias, row_lo, row_hi, row_link, row_mu,
                      row_lambda, v_lin, v_ang)
    return theta if math.isfinite(theta) else math.inf
