"""Solver ``gauss``: Gauss' principle of least constraint as a position-based QP per step (paper 002
§5 Fig. 7, in 3-D body coordinates), with a polyhedral friction cone."""

from tumble._core.solvers.gauss.settings import GaussSettings
from tumble._core.solvers.gauss.solver import GaussSolver as SOLVER

__all__ = ["SOLVER", "GaussSettings"]
