"""Settings of the pgs solver: the shared contact model, the row part and the joint part
(``solvers.settings_parts``) plus the relax stage."""

from __future__ import annotations

from dataclasses import dataclass

from tumble._core.solvers.settings_parts import (
    ContactSettings,
    JointSettings,
    RowSettings,
    SolverSettings,
    check_choice,
    check_count,
    check_flag,
    check_nonnegative,
)

#: ways the pgs step pushes overlaps out (PGSSettings.position_correction)
POSITION_CORRECTIONS = ("relax", "split")


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
        position_correction: how overlap is pushed out. "relax" (default): Baumgarte feedback in the
            velocity solve, then ``relax_iterations`` sweeps without it. "split": the velocity solve
            has no position feedback; a second PGS pass solves the Baumgarte targets into
            pseudo-velocities that only move the positions (split impulse), so releasing an overlap
            never adds kinetic energy (relax leaves what its sweeps do not remove: two spheres
            jammed 3.5 m deep between two fixed ones left at 21 m/s with max_correction_speed 4).
            Not the default: measured at the scenes' settings (dt 1/60, 10 iterations), split lets
            stack10 fall within 20 s (drift 5.4 m; relax 36 mm) and pyramid20 drift 58 mm in 5 s
            (relax 17 mm); the pseudo pass's angular corrections tip the boxes.
    """

    relax_iterations: int = 2
    position_correction: str = "relax"
    substeps: int = 1
    substep_iterations: int = 2
    warm_start_radius: float = 0.0
    normal_block_solve: bool = False

    def validate(self) -> None:
        super().validate()
        check_count("relax_iterations", self.relax_iterations, 0)
        check_count("substeps", self.substeps, 1)
        check_count("substep_iterations", self.substep_iterations, 1)
        check_nonnegative("warm_start_radius", self.warm_start_radius)
        check_flag("normal_block_solve", self.normal_block_solve)
        check_choice("position_correction", self.position_correction, POSITION_CORRECTIONS)
