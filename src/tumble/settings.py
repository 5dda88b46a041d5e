"""Solver settings: SI units, documented defaults (DESIGN rule: tunables in physical units).

``World(solver="pgs", iterations=20, baumgarte=0.1)`` or ``w.settings.iterations = 20``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from tumble.errors import SettingsError

FRICTION_MODELS = ("coulomb", "fixed")


@dataclass
class PGSSettings:
    """Settings of the projected Gauss-Seidel solver (Catto 001) and of the shared contact model.

    Attributes:
        iterations: PGS sweeps per step (001 §7: "a fixed number of iterations"), default 10.
        relax_iterations: sweeps after the position update against targets without Baumgarte
            feedback (Box2D v3's relax stage): the push-out velocity moves the positions but is
            then removed, so position correction cannot pump energy into a resting stack.
            0 is Catto's plain scheme (001); default 2.
        tolerance: [m/s] stop early when no row changed a velocity by more than this in a sweep;
            0 keeps the fixed iteration count (default).
        baumgarte: beta * dt, the fraction of penetration (beyond ``slop``) removed per step
            (001 eq. 20; stable for 0 < beta dt <= 1, smooth decay for <= 1), default 0.2.
        slop: [m] penetration left uncorrected so resting contacts persist, default 0.005 (Box2D's,
            for bodies around 1 m). Uneven sinking inside the slop tilts each interface of a stack by
            up to slop / face width, so it must be small against the bodies: the 001 scenes use
            1 mm (with 5 mm Catto's 0.7 m boxes fell in 2 of 3 perturbed starts), while a 1 mm
            slop let the 1 m cubes of pyramid20 drift 0.86 m instead of 0.16 m in 10 s.
        max_correction_speed: [m/s] cap on the Baumgarte push-out speed, default 4.
        contact_margin: [m] speculative distance: points closer than this become rows before they
            touch (they may close the gap in one step but not pass it). Default 0: with Baumgarte
            stabilisation and 10 sweeps, speculative rows made Catto's ten-box stack sway and fall
            (stack10 max drift 1.6 m with a 2 mm margin); raise it for fast small bodies.
        restitution_threshold: [m/s] approach speeds below this do not bounce, default 0.5.
        warm_start: carry impulses across steps by (pair, feature id) (001 §8), default True.
        friction_model: "coulomb" couples |lambda_t| <= mu lambda_n each sweep (000 eq. 29);
            "fixed" uses Catto's constant bound mu m_c g (001 eq. 24-25). Default "coulomb".
        gyroscopic: include w x I w, integrated implicitly (stable form), default True.
        linear_damping, angular_damping: [1/s] velocity damping, default 0 (none).
        record_merit: keep theta(lambda) after every sweep in ``world.merit_history`` (000 Fig. 5).
    """

    iterations: int = 10
    relax_iterations: int = 2
    tolerance: float = 0.0
    baumgarte: float = 0.2
    slop: float = 0.005
    max_correction_speed: float = 4.0
    contact_margin: float = 0.0
    restitution_threshold: float = 0.5
    warm_start: bool = True
    friction_model: str = "coulomb"
    gyroscopic: bool = True
    linear_damping: float = 0.0
    angular_damping: float = 0.0
    record_merit: bool = False

    def validate(self) -> None:
        if not isinstance(self.iterations, int) or isinstance(self.iterations, bool) or self.iterations < 1:
            raise SettingsError(f"setting iterations={self.iterations!r} must be an integer >= 1")
        r = self.relax_iterations
        if not isinstance(r, int) or isinstance(r, bool) or r < 0:
            raise SettingsError(f"setting relax_iterations={r!r} must be an integer >= 0")
        for name in ("tolerance", "slop", "max_correction_speed", "contact_margin", "restitution_threshold",
                     "linear_damping", "angular_damping"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise SettingsError(f"setting {name}={v!r} must be a finite number >= 0")
        if not (isinstance(self.baumgarte, (int, float)) and 0.0 <= self.baumgarte <= 1.0):
            raise SettingsError(f"setting baumgarte={self.baumgarte!r} must be in [0, 1] (it is beta*dt)")
        if self.friction_model not in FRICTION_MODELS:
            raise SettingsError(f"setting friction_model={self.friction_model!r} is unknown; "
                                f"choose one of {FRICTION_MODELS}")

    def update(self, **kw) -> None:
        names = {f.name for f in fields(self)}
        for k, v in kw.items():
            if k not in names:
                raise SettingsError(f"unknown setting {k!r} for solver settings; known: {sorted(names)}")
            setattr(self, k, v)
        self.validate()


#: solver name -> settings class
SOLVER_SETTINGS = {"pgs": PGSSettings}
