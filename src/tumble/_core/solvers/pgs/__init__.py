"""Solver ``pgs``: projected Gauss-Seidel / sequential impulses with contact caching (Catto 001)."""

from tumble._core.solvers.pgs.settings import PGSSettings
from tumble._core.solvers.pgs.solver import PGSSolver as SOLVER

__all__ = ["SOLVER", "PGSSettings"]
