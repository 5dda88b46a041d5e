"""Solver ``jacobi``: projected Jacobi iteration on the contact rows of pgs (Erleben 000 §3)."""

from tumble._core.solvers.jacobi.settings import JacobiSettings
from tumble._core.solvers.jacobi.solver import JacobiSolver as SOLVER

__all__ = ["SOLVER", "JacobiSettings"]
