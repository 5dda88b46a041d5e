"""Solver ``shock``: velocity-based shock propagation with projection error correction (Erleben 000)."""

from tumble._core.solvers.shock.settings import ShockSettings
from tumble._core.solvers.shock.solver import ShockSolver as SOLVER

__all__ = ["SOLVER", "ShockSettings"]
