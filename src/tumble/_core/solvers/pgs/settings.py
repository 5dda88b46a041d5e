"""Settings of the pgs solver: the shared contact model, the row part and the joint part
(``solvers.settings_parts``) plus the relax stage."""

from __future__ import annotations

from dataclasses import dataclass

from tumble._core.solvers.settings_parts import (
    ContactSettings,
    JointSettings,
    RowSettings,
    SolverSettings,
    check_count,
)


@dataclass
class PGSSettings(ContactSettings, RowSettings, JointSettings, SolverSettings):
    """Settings of the projected Gauss-Seidel solver (Catto 001). The contact model
    (``ContactSettings``), the PGS rows (``RowSettings``: iterations, baumgarte, slop, warm start,
    friction model, ...) and the joints (``JointSettings``) are documented on their parts.

    Attributes (its own):
        relax_iterations: sweeps after the position update against targets without Baumgarte
            feedback (Box2D v3's relax stage): the push-out velocity moves the positions but is
            then removed, so position correction cannot pump energy into a resting stack.
            0 is Catto's plain scheme (001); default 2.
    """

    relax_iterations: int = 2

    def validate(self) -> None:
        super().validate()
        check_count("relax_iterations", self.relax_iterations, 0)
