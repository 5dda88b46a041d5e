"""Settings of the gauss solver: the shared contact model (``settings_parts.ContactSettings``) plus the
quadratic program of Gauss' principle in position form (paper 002 §5, Fig. 7)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tumble._core.solvers.settings_parts import (
    ContactSettings,
    SolverSettings,
    check_choice,
    check_count,
    check_flag,
    check_nonnegative,
)
from tumble.errors import SettingsError

#: the QP solvers the step can call (both interior/first-order methods on a sparse CSC problem)
QP_SOLVERS = ("clarabel", "osqp")


@dataclass
class GaussSettings(ContactSettings, SolverSettings):
    """Settings of the position-based least-constraint solver (Gauss' principle, paper 002 Fig. 7).

    The contact model is ``ContactSettings`` (margin, gyroscopic term, damping; its
    ``restitution_threshold`` is accepted and unused: collisions are totally inelastic, 002 §7).
    No joints, so no ``JointSettings``; no PGS rows, so no ``RowSettings``.

    Attributes (its own, and the margin's default):
        contact_margin: [m] speculative distance, default 5 mm. Points closer than this enter the
            QP with their gap as the constraint's slack (002 §5: a constraint far from active is
            "effectively inactive", so including it early is safe); a falling body is caught if it
            moves less than the margin in one step (5 mm at 1/60 s: 0.3 m/s per step of approach
            beyond the detection; faster bodies are caught one step later, a little deeper).
        speculative_margin: grow the margin of each detection by dt times an upper bound of the
            approach speed (twice the largest |v| + |w| R of the step's free prediction), default
            True, so a fast body meets its constraint before it passes into the other body: the
            QP removes an overlap in one step and the removal becomes velocity (002 Fig. 7 d), so a
            deep overlap would throw the body back (a 9 m/s sphere bounced up at 7 m/s without it).
        qp_solver: "clarabel" (interior point, default: solves to high accuracy, which keeps a
            resting box within micrometres) or "osqp" (ADMM with solution polishing, warm-started
            from the previous step's velocities and multipliers when the problem has the same size).
            Measured (busy 2-core machine, mean per step): stack10 at rest (gap 0, 2 s) Clarabel 9
            iterations 6.5 ms (with the polish), OSQP 26 iterations 1.6 ms warm-started against 100
            iterations 2.3 ms cold, both drifting < 2e-15 m; pyramid20 (0.5 s) Clarabel 11
            iterations 645 ms, OSQP 736 iterations 1066 ms. Clarabel stays the default: its cost
            grows with the rows, OSQP's with their coupling.
        qp_tolerance: absolute and relative tolerance of the QP solver on the velocity-scaled
            problem [m/s], default 1e-9 (Clarabel's gap and feasibility tolerances; OSQP's eps_abs
            and eps_rel). A position error is this times dt.
        qp_max_iterations: iteration cap of the QP solver, default 200 (Clarabel typically needs
            10-30 interior-point iterations; OSQP up to thousands, so its cap is 100x this).
        polish_max_rows: an interior-point answer of at most this many rows is polished on its
            active set (``gauss.qp.polish``: the method of multipliers on the unknowns, one sparse
            LU of 6 x bodies), default 1 000 000 (always). An interior point stops with slack ~
            sqrt(qp_tolerance) on rows that are active with a zero multiplier, and here that slack
            is velocity: two spheres meeting exactly at a step's end drift apart at 3e-5 m/s
            without the polish, 1e-12 with it. Measured (busy 2-core machine): the polish costs
            13 ms per step on bricks5x5 (74 ms QP) and 34 ms on pyramid20 (620 ms QP), where it
            takes the 0.17 s drift from 1.3e-13 m to 4e-17 m. 0 = never polish.
        friction_edges: K, the edges of the polyhedral friction cone, default 8; 0 = frictionless.
            Each contact with mu > 0 gives K rows (n + mu t_k) . (relative displacement) >= -gap,
            t_k = cos(2 pi k / K) t1 + sin(2 pi k / K) t2: the linearised cone in displacement
            space whose dual (the contact impulses) is the cone spanned by the edges n + mu t_k,
            inscribed in Coulomb's cone (exact along the edge directions, mu cos(pi/K) between
            them: 0.92 mu for K = 8). Minimum 3 when friction is on. Measured (box sliding on a
            30 deg slope, mu 0.2, dt 1/240, tests/physics/test_gauss_solver.py): sliding along a
            cone edge the acceleration is g (sin - mu cos) to 1e-15 for K = 4 and 8; sliding
            between edges (slope falling along x = y) it is 0.14 % high for K = 8 and 15 % high
            for K = 4 (the square cone's 0.71 mu). The QP cost grows with the rows: pyramid20
            18880 rows (K = 8) against 9440 (K = 4), see benchmarks/results/*/gauss_world.md.
            While sliding, the box rides mu |slip per step| above the surface (3.3 mm at 4 m/s,
            dt 1/240, mu 0.2): the price of a convex friction model in displacement space.
        max_correction_speed: [m/s] cap on the separation speed one step may use to remove an
            overlap (depth / dt), default 10. 002 Fig. 7 removes any overlap in one step; a deep
            start overlap (a fuzz test, a spawned body) would then leave at depth / dt.
        split_speed: [m/s] an overlap whose push depth / dt exceeds this is a deep one: when the step
            has one, it solves the QP twice, the positions moving with the capped push and the
            velocities kept from the QP whose overlapping rows ask for no separation (h = 0), so a
            deep overlap is released without kinetic energy (the push's extra displacement turns w
            with the body: ``integrate.correct_bodies``). Shallower overlaps keep the one QP
            (their push, at most this speed, stays as velocity: 002's scheme). Default 1 m/s, as
            pgs (issue 17). Measured at dt 1/60: two unit spheres jammed 3.5 / 3.0 m deep in two fixed
            spheres left at 55 m/s with one QP (its push is infeasible: each overlap asks for 10 m/s)
            and at 0 now (pushed out in 2 s); four boxes started 0.4 m into each other threw the
            top one at 40 m/s (the pushes add up along the column), now 0. The library scenes never
            overlap that deep (speculative margin): their state hashes are unchanged, and with them
            the cost (the second QP runs only in steps with a deep overlap).
        pushed_energy_guard: a body the push of a deep overlap moves gains kinetic energy in that step
            only from the work gravity and its applied forces did along the way it actually went,
            velocity and push together (``integrate.guard_pushed_bodies``; as
            ``PGSSettings.pushed_energy_guard``) [tumble, issue 17]. Default True. gauss's velocities
            come from the second QP, whose overlapping rows hold the contact points as pgs's deep rows
            do; its push (10 m/s) outran the pivoting fall in every deep-lift world tried (278 gauss
            worlds of tests/physics/test_fuzz.py's deep_lift_worlds, none beyond the bound with the guard
            or without it), so here the guard is a safeguard, not a measured fix; the library scenes'
            state hashes are unchanged. False: the solver before it.
    """

    contact_margin: float = 0.005
    speculative_margin: bool = True
    qp_solver: str = "clarabel"
    qp_tolerance: float = 1e-9
    qp_max_iterations: int = 200
    polish_max_rows: int = 1_000_000
    friction_edges: int = 8
    max_correction_speed: float = 10.0
    split_speed: float = 1.0
    pushed_energy_guard: bool = True

    def validate(self) -> None:
        super().validate()
        check_flag("speculative_margin", self.speculative_margin)
        check_choice("qp_solver", self.qp_solver, QP_SOLVERS)
        v = self.qp_tolerance
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and 0.0 < v < 1.0):
            raise SettingsError(f"setting qp_tolerance={v!r} must be a number in (0, 1) [m/s]")
        check_count("qp_max_iterations", self.qp_max_iterations, 1)
        check_count("polish_max_rows", self.polish_max_rows, 0)
        check_count("friction_edges", self.friction_edges, 0)
        if self.friction_edges in (1, 2):
            raise SettingsError(f"setting friction_edges={self.friction_edges!r} must be 0 (no friction) or >= 3 "
                                "(the edges of the polyhedral friction cone)")
        check_nonnegative("max_correction_speed", self.max_correction_speed)
        check_nonnegative("split_speed", self.split_speed)
        check_flag("pushed_energy_guard", self.pushed_energy_guard)
        if self.max_correction_speed == 0:
            raise SettingsError("setting max_correction_speed=0 must be > 0 [m/s]")
