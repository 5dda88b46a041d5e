"""Runge-Kutta-Fehlberg 4(5) with error control (paper 003 §8.3).

The state is y = (x, v, E_diss): positions, velocities and the dissipated energy (integrated alongside,
dE_diss/dt = viscous power). Fehlberg's six stages give a 4th- and a 5th-order solution; their difference
estimates the local error. We keep the 5th-order solution (local extrapolation; the paper does not say
which one it keeps). The error measure is max(|dx|_inf, tau |dv|_inf) / tol with tau =
``velocity_error_time`` (s): ``tol`` is a length, as in the paper (1 mm there). A step whose error exceeds
1, or that passes through a state where some tet has J <= 0, is rejected and retried shorter.
"""

from __future__ import annotations

import numpy as np

# Fehlberg's tableau
_C = (0.0, 1.0 / 4.0, 3.0 / 8.0, 12.0 / 13.0, 1.0, 1.0 / 2.0)
_A = (
    (),
    (1.0 / 4.0,),
    (3.0 / 32.0, 9.0 / 32.0),
    (1932.0 / 2197.0, -7200.0 / 2197.0, 7296.0 / 2197.0),
    (439.0 / 216.0, -8.0, 3680.0 / 513.0, -845.0 / 4104.0),
    (-8.0 / 27.0, 2.0, -3544.0 / 2565.0, 1859.0 / 4104.0, -11.0 / 40.0),
)
_B4 = (25.0 / 216.0, 0.0, 1408.0 / 2565.0, 2197.0 / 4104.0, -1.0 / 5.0, 0.0)
_B5 = (16.0 / 135.0, 0.0, 6656.0 / 12825.0, 28561.0 / 56430.0, -9.0 / 50.0, 2.0 / 55.0)

#: step size controller: h_new = h * clamp(SAFETY * err^(-1/5), SHRINK_MIN, GROW_MAX)
SAFETY = 0.9
SHRINK_MIN = 0.2
GROW_MAX = 5.0


def rkf45_attempt(derivative, t: float, x: np.ndarray, v: np.ndarray, h: float, tol: float,
                  velocity_error_time: float):
    """One Fehlberg step of size h from (t, x, v). ``derivative(t, x, v)`` returns (a, power, valid).
    Return (x1, v1, dissipated energy over the step, error ratio; inf when a stage state was invalid)."""
    kx, kv, kp = [], [], []
    for stage in range(6):
        xs = x.copy()
        vs = v.copy()
        for j, coef in enumerate(_A[stage]):
            if coef != 0.0:
                xs += (h * coef) * kx[j]
                vs += (h * coef) * kv[j]
        a, power, valid = derivative(t + _C[stage] * h, xs, vs)
        if not valid:
            return x, v, 0.0, np.inf
        kx.append(vs)
        kv.append(a)
        kp.append(power)
    x1 = x.copy()
    v1 = v.copy()
    ex = np.zeros_like(x)
    ev = np.zeros_like(v)
    dissipated = 0.0
    for j in range(6):
        if _B5[j] != 0.0:
            x1 += (h * _B5[j]) * kx[j]
            v1 += (h * _B5[j]) * kv[j]
            dissipated += h * _B5[j] * kp[j]
        diff = _B5[j] - _B4[j]
        if diff != 0.0:
            ex += (h * diff) * kx[j]
            ev += (h * diff) * kv[j]
    error = max(float(np.abs(ex).max()), velocity_error_time * float(np.abs(ev).max())) / tol
    return x1, v1, dissipated, error


def next_step_size(h: float, error: float) -> float:
    """The controller's next step size after a step of size h with error ratio ``error``."""
    if not np.isfinite(error):
        return h * 0.5
    if error == 0.0:
        return h * GROW_MAX
    return h * min(GROW_MAX, max(SHRINK_MIN, SAFETY * error ** -0.2))
