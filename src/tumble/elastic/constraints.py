"""Equality constraints on vertex positions (paper 003 §3): pinned vertices and vertices on prescribed
trajectories, phi_r(q, t) = x_i(t) - p_i(t) = 0.

Lagrange multipliers (§3.2-3.3, eq. 5-8). N = d phi / dq selects the constrained coordinates and the
constraint forces act along G = N^T, so eq. 7 becomes (N M^-1 N^T) lambda = gamma - N M^-1 F with
gamma = p''(t) (eq. 6: phi is linear in q, so only -d^2 phi / dt^2 = p'' remains). With the scalar mass
matrix M_s (mass.py) and S the selection of the k constrained vertices this is, per axis,
(S M_s^-1 S^T) lambda = p'' - (M_s^-1 F)_S, and the constrained acceleration is a = M_s^-1 F + X lambda with
X = M_s^-1 S^T (n x k, dense). X and the k x k Schur matrix S X (symmetric positive definite) are computed
and factored once; each evaluation costs O(n k).

Constraints as springs (§3.1) are the alternative: energy k_c/2 |x_i - p_i(t)|^2 per constrained vertex (the
paper's K phi^2 with K = k_c/2); violated by about |F| / k_c, and stiff.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from tumble.errors import ElasticError

#: time step of the central differences that give p' and p'' when a trajectory has no derivative callables
TRAJECTORY_DIFFERENCE_STEP = 1e-4


@dataclass
class VertexConstraint:
    """Vertices (indices into one body's mesh) held at ``trajectory(t)`` -> (k, 3) positions, m.
    ``velocity``/``acceleration``: optional callables t -> (k, 3); otherwise central differences of
    ``trajectory`` with step TRAJECTORY_DIFFERENCE_STEP s."""

    vertices: np.ndarray
    trajectory: Callable[[float], np.ndarray]
    velocity: Callable[[float], np.ndarray] | None = None
    acceleration: Callable[[float], np.ndarray] | None = None

    def targets(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions, velocities and accelerations (k, 3) of the constrained vertices at time t."""
        k = len(self.vertices)
        p = _checked(self.trajectory(t), k, "trajectory", t)
        h = TRAJECTORY_DIFFERENCE_STEP
        ahead = behind = None
        if self.velocity is None or self.acceleration is None:
            ahead = _checked(self.trajectory(t + h), k, "trajectory", t + h)
            behind = _checked(self.trajectory(t - h), k, "trajectory", t - h)
        if self.velocity is not None:
            v = _checked(self.velocity(t), k, "velocity", t)
        else:
            v = (ahead - behind) / (2.0 * h)
        if self.acceleration is not None:
            a = _checked(self.acceleration(t), k, "acceleration", t)
        else:
            a = (ahead - 2.0 * p + behind) / (h * h)
        return p, v, a


def _checked(value, k: int, name: str, t: float) -> np.ndarray:
    value = np.asarray(value, dtype=np.float64)
    if value.shape == (3,):
        value = np.broadcast_to(value, (k, 3))
    if value.shape != (k, 3) or not np.all(np.isfinite(value)):
        raise ElasticError(f"VertexConstraint.{name}({t}) must return {k} finite positions (k, 3), got shape "
                           f"{value.shape}")
    return np.array(value)


class LagrangeProjector:
    """Exact constraint forces by Lagrange multipliers for the constrained vertices ``indices`` (global)."""

    def __init__(self, mass_solver, indices: np.ndarray):
        self.indices = indices
        n = len(mass_solver.lumped)
        selection = np.zeros((n, len(indices)))
        selection[indices, np.arange(len(indices))] = 1.0
        self.response = mass_solver.solve(selection)  # X = M_s^-1 S^T
        self._schur = cho_factor(self.response[indices])  # S M_s^-1 S^T

    def correct(self, acceleration: np.ndarray, target_acceleration: np.ndarray) -> np.ndarray:
        """Add X lambda to ``acceleration`` (n, 3) in place so that the constrained rows equal the targets;
        return lambda (k, 3), the constraint forces on the constrained vertices, N."""
        multipliers = cho_solve(self._schur, target_acceleration - acceleration[self.indices])
        acceleration += self.response @ multipliers
        return multipliers
