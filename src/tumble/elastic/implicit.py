"""Backward Euler with Newton's method, for stiff contact springs (paper 003 §10 names the stiffness of
the contact springs as the main cost of the explicit RKF integrator).

Backward Euler, M (v1 - v0) / h = F(x1) with v1 = (x1 - x0) / h, is the stationarity condition of the
incremental potential

    E(x) = 1/(2 h^2) (x - x0 - h v0)^T M (x - x0 - h v0) - x . F_g + Psi(x) + springs(x) - x . F_visc

(Psi: elastic energy, F_g = M 1 g: gravity, springs: contact and constraint springs). Newton minimizes E with
its exact sparse Hessian M/h^2 + d^2 Psi/dx^2 (hessian.py) + spring stiffnesses, solved by sparse LU
(scipy ``splu``; constrained degrees of freedom as identity rows, sparse_pattern.py), reusing the factors
for chord steps while the updates shrink at least fourfold per iteration, and a backtracking (Armijo) line
search on E, which is +inf where a tet has J <= 0: no accepted iterate is inverted. Where the Hessian is
indefinite (strong compression) and the Newton direction is not a descent direction, the mass-matrix
direction -h^2 M^-1 dE/dx is used instead.

Approximations (documented): the viscous force is taken explicitly at (x0, v0) (F_visc constant over the
step) and the dissipated energy booked is h F_visc . v1 (sign: loss); backward Euler itself damps (it does
not conserve energy). Lagrange-constrained vertices are eliminated: their positions are set to the
prescribed p(t + h), which is what the multipliers enforce.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from tumble.elastic.mass import SYMMETRIC_LU
from tumble.elastic.viscosity import viscous_forces

#: Armijo sufficient-decrease constant and line-search halvings
ARMIJO = 1e-4
MAX_HALVINGS = 40
#: Newton reuses its LU factors (a chord step) while each update is below this fraction of the previous one
REFACTOR_RATIO = 0.25


def backward_euler_step(system, t: float, x0: np.ndarray, v0: np.ndarray, h: float):
    """One backward Euler step. Return (x1, v1, dissipated energy, converged: True/False, or None when no
    valid state was found, Newton iterations)."""
    n = len(x0)
    visc = np.zeros_like(x0)
    if system.viscous:
        viscous_forces(x0, v0, system.tets, system.tet_bulk_viscosity, system.tet_shear_viscosity, visc)
    inertial = x0 + h * v0
    gravity_force = system.mass.lumped[:, None] * system.gravity[None, :]
    x = inertial.copy()
    fixed_velocity = None
    if system._projector is not None:
        target, fixed_velocity, _ = system._constraint_targets(t + h)
        x[system.constrained] = target

    last_ratio = [np.inf]  # volume ratio of the last valid iterate

    def objective(x):
        forces = np.zeros_like(x)
        energy, ratio, _ = system._forces(t + h, x, v0, forces, with_viscosity=False)
        if not ratio > 0.0:
            return np.inf, None
        last_ratio[0] = ratio
        d = (x - inertial).ravel()
        md = system._mass_kron @ d
        value = 0.5 * float(d @ md) / (h * h) - float(np.sum((gravity_force + visc) * x)) + energy
        gradient = md / (h * h) - (gravity_force + visc + forces).ravel()
        return value, gradient

    value, gradient = objective(x)
    if gradient is None:  # the predictor inverted a tet: start from x0 (valid) instead
        x = x0.copy()
        if system._projector is not None:
            x[system.constrained] = target
        value, gradient = objective(x)
        if gradient is None:
            return x0, v0, 0.0, None, 0
    spring_diagonal = np.zeros((n, 3))
    spring_diagonal[system.spring_alive] = system.contact_stiffness
    if system.constraint_method == "springs" and len(system.constrained):
        spring_diagonal[system.constrained] += system.constraint_stiffness
    pattern = system.hessian_pattern()
    pair_hessian = _pair_spring_hessian(system, pattern.fixed, 3 * n)
    gradient[pattern.fixed] = 0.0
    converged = False
    iterations = 0
    factors = None
    previous_update = np.inf
    for iterations in range(1, system.max_newton + 1):
        if factors is None:
            if not system.hessian_triplets(x):
                return x0, v0, 0.0, None, iterations
            try:
                matrix = pattern.assemble(system._hessian_values, 1.0 / (h * h), spring_diagonal.ravel())
                if pair_hessian is not None:
                    matrix = (matrix + pair_hessian).tocsc()
                factors = splu(matrix, **SYMMETRIC_LU)
            except RuntimeError:  # singular: the fallback direction below
                factors = None
        direction = -factors.solve(gradient) if factors is not None else np.full(3 * n, np.nan)
        slope = float(direction @ gradient)
        if not slope < 0.0 or not np.all(np.isfinite(direction)):
            direction = -(h * h) * system.mass.solve(gradient.reshape(n, 3)).ravel()
            direction[pattern.fixed] = 0.0
            slope = float(direction @ gradient)
            factors = None
        step = 1.0
        for _ in range(MAX_HALVINGS):
            trial = x + step * direction.reshape(n, 3)
            trial_value, trial_gradient = objective(trial)
            if trial_gradient is not None and trial_value <= value + ARMIJO * step * slope:
                break
            step *= 0.5
        else:
            break  # no decrease possible at this precision: take x as it is
        trial_gradient[pattern.fixed] = 0.0
        x, value, gradient = trial, trial_value, trial_gradient
        update = step * float(np.abs(direction).max())
        if update <= system.newton_tol:
            converged = True
            break
        # chord steps: keep the factors while the updates shrink fast, refactor when they do not
        if step < 1.0 or update > REFACTOR_RATIO * previous_update:
            factors = None
        previous_update = update
    objective(x)
    system._stage_min_ratio = min(system._stage_min_ratio, last_ratio[0])
    v1 = (x - x0) / h
    if fixed_velocity is not None:
        v1[system.constrained] = fixed_velocity
    dissipated = -h * float(np.sum(visc * v1))
    return x, v1, dissipated, converged, iterations


def _pair_spring_hessian(system, fixed: np.ndarray, size: int):
    """Hessian of the springs between elastic bodies (body_contact.py), None without any: the energy
    k/2 |sum_a w_a x_(i_a)|^2 has the blocks k w_a w_b I_3 between vertices i_a and i_b (they couple two bodies,
    outside the tets' fixed pattern, so the matrix is added to the assembled one); fixed dofs' rows and columns
    zero (they are identity rows there)."""
    pairs = system.body_contacts
    if pairs is None or not pairs.count:
        return None
    c = pairs.count
    index, weight = pairs.index[:c], pairs.weight[:c]
    values = system.contact_stiffness * weight[:, :, None] * weight[:, None, :]  # (c, 4, 4)
    rows = np.broadcast_to(index[:, :, None], (c, 4, 4))
    cols = np.broadcast_to(index[:, None, :], (c, 4, 4))
    coord = np.arange(3)
    r = (3 * rows[..., None] + coord).ravel()
    q = (3 * cols[..., None] + coord).ravel()
    v = np.broadcast_to(values[..., None], (c, 4, 4, 3)).ravel()
    if len(fixed):
        free = np.ones(size, dtype=np.bool_)
        free[fixed] = False
        keep = free[r] & free[q]
        r, q, v = r[keep], q[keep], v[keep]
    return sp.coo_matrix((v, (r, q)), shape=(size, size)).tocsc()
