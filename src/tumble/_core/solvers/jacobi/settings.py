"""Settings of the jacobi solver: the shared contact model and row part (``solvers.settings_parts``)
plus the relaxation."""

from __future__ import annotations

from dataclasses import dataclass

from tumble._core.solvers.settings_parts import ContactSettings, RowSettings, SolverSettings, check_flag
from tumble.errors import SettingsError


@dataclass
class JacobiSettings(ContactSettings, RowSettings, SolverSettings):
    """Settings of the projected Jacobi solver (Erleben 000 §3: Jacobi against Gauss-Seidel for the
    LCP). The contact model (``ContactSettings``) and the rows (``RowSettings``: iterations -- here
    Jacobi sweeps --, baumgarte, slop, warm start, friction model, ...) are documented on their parts.
    No joints, so no ``JointSettings``.

    Attributes (its own):
        relaxation: omega in (0, 1], the fraction of each row's Jacobi update applied per sweep.
            Every row of a sweep sees the same velocities, so the k contacts pushing one body all
            correct the same error: omega = 1 applies it k times over.
            Damped Jacobi converges only for omega < 2 / rho(D^-1 A), and a box of a stack touches
            eight contact points (four below, four above), which puts the bound near 1/4.
            Default 0.2, measured (10 sweeps, warm start): stack10 resting (gap 0, 3 s) drifted
            0.21 / 0.13 / 4.5 m at omega 0.2 / 0.25 / 0.3 (pgs: 0.019 m), pyramid20 (2 s)
            0.42 / 0.94 / 9.2 m with up to 0.06 / 0.40 / 0.44 m penetration (pgs: 0.14 m), and
            omega >= 0.4 blew pyramid20 apart; 0.125-0.175 were stable but sank deeper (stack10:
            0.07-0.11 m penetration); 0.225 drifted less (0.14 / 0.30 m) but let pyramid20 sink
            0.13 m, so 0.2 keeps a margin below the bound. A box resting on a plane (four points,
            bound 1/2) stays within 1 mm over 2 s at 0.2. With 200 sweeps stack10 rests at 0.25
            (6 mm, merit 0.011): the method is sound, it converges slowly (000 §3), so raise
            ``iterations`` before omega.
        relax_iterations: Jacobi sweeps after the position update against the targets without
            Baumgarte feedback (pgs' relax stage, ``kernels.relax_jacobi``) [tumble, issue 18]: they take
            the push-out velocity back out of the bodies once it has moved them. Default 10;
            0 is the solver before issue 18. Measured: pile1000 (60 Hz) at rest (kinetic energy
            < 1 J) from step 177, 2e-5 J at step 900; with 0: 293 J at step 900 (302 J after 10^4
            steps); a 10 kg box released 3 cm into the ground leaves it at 0.027 m/s instead of
            0.28 m/s.
        relaxation_bound: kappa in [0, 2), the descent guard of the sweeps [tumble, issue 17]: a sweep
            (main, relax or pseudo-velocity) that raises its objective KE(V) - zeta^T lambda is undone
            and the rest of that solve runs with each row's relaxation capped, omega_r = min(omega,
            kappa A_rr / D_rr), D >= A = J M^-1 J^T a diagonal bound built per body from the largest
            eigenvalue of its rows' normalised block (``kernels.row_relaxation``), under which every
            sweep descends for kappa < 2 however many rows push one body. omega alone descends only
            below 2 / rho(D^-1 A), which a body with many contact points on long levers exceeds
            (test_fuzz's JACOBI_OVERSHOOT_CASES: a 118 m board with 20 contact points gained 2.0e8 J
            beyond the fuzz's energy bound). Where every sweep descends the solve is plain Jacobi, bit
            for bit. 0 switches the guard off (the solver before the fix). Default 1.8, measured with
            the cap on every solve: the largest D_rr / A_rr is 8.0 on stack10 and 6.0 on pile1000
            (rho(D^-1 A) 7.9 and 3.9), so at 1.8 the cap stays above omega = 0.2 there (at 1.5 it cut
            stack10's rows to 0.19 and stack10 ended 3 s with 496 J against 48 J); kappa 1.5 and 1.9
            held the fuzz's overshoot cases alike. 0.2 below the descent limit 2 leaves a margin for
            the bound being computed, not exact (it over-estimates lam_b by 0.5-7 %).
        pushed_energy_guard: a body the pseudo-velocity pass moves (a contact deeper than
            ``split_speed``) gains kinetic energy in that step only from the work gravity and its
            applied forces did along the way it actually went, velocity and push together
            (``integrate.guard_pushed_bodies``; as ``PGSSettings.pushed_energy_guard``) [tumble, issue 17].
            Default True. Measured: the 0.5 x 2 x 16 m box of PGSSettings' note, 8 m deep, 70 J beyond
            the fuzz's energy bound after 60 steps without it, 143 J below with it; ball_grid125 12 J of
            kinetic energy after 12 steps against 1631 J; pile1000, whose landing bodies sink up to 11 cm
            under jacobi (14 of its first 300 steps have a deep contact), 71 J after 100 steps against
            143 J, both at rest by step 200. False: the solver before it.
    """

    relaxation: float = 0.2
    relax_iterations: int = 10
    relaxation_bound: float = 1.8
    pushed_energy_guard: bool = True

    def validate(self) -> None:
        super().validate()
        k = self.relax_iterations
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise SettingsError(f"setting relax_iterations={k!r} must be an integer >= 0")
        v = self.relaxation_bound
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v < 2.0:
            raise SettingsError(f"setting relaxation_bound={v!r} must be in [0, 2) "
                                "(the Jacobi descent guard kappa; 0: off)")
        v = self.relaxation
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 < v <= 1.0:
            raise SettingsError(f"setting relaxation={v!r} must be in (0, 1] (the Jacobi relaxation omega)")
        check_flag("pushed_energy_guard", self.pushed_energy_guard)
