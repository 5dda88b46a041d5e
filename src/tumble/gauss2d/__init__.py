"""Planar rigid bricks by Gauss' principle of least constraint (paper 002, Rote et al.).

Bricks are bar-and-joint frameworks of point masses (model), kept apart by sidedness constraints
(contacts); each time step is one convex QP in the new positions (step, Fig. 7) or accelerations
(Fig. 6), solved by Clarabel or OSQP (qp); the stability of a tower at rest is an LP (stability, HiGHS).
"""

from .model import BrickSystem, brick_layout, build_bricks, minimally_rigid_subset
from .qp import QPSettings, solve_qp
from .scenes import bricks5x5, critical_shift, overhang, overhang_centres
from .stability import StabilityReport, stability
from .step import GaussSettings, Trajectory, simulate, step_acceleration, step_position

__all__ = ["BrickSystem", "GaussSettings", "QPSettings", "StabilityReport", "Trajectory", "brick_layout",
           "bricks5x5", "build_bricks", "critical_shift", "minimally_rigid_subset", "overhang", "overhang_centres",
           "simulate", "solve_qp", "stability", "step_acceleration", "step_position"]
