"""Settings by composition: the parts a solver's settings class is assembled from.

A solver's settings dataclass inherits the parts it uses and adds its own fields
(``class PGSSettings(SolverSettings, ContactSettings, RowSettings, JointSettings)``), so no solver
carries a field it ignores. Every part is SI units with documented defaults. ``SolverSettings``
is the machinery (validation once per change, ``update``, the deprecation path for fields a solver
used to accept and never read).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, fields

from tumble.errors import SettingsError

FRICTION_MODELS = ("coulomb", "fixed")


def check_count(name: str, v, lo: int) -> None:
    """An integer setting >= lo."""
    if not isinstance(v, int) or isinstance(v, bool) or v < lo:
        raise SettingsError(f"setting {name}={v!r} must be an integer >= {lo}")


def check_nonnegative(name: str, v) -> None:
    """A finite number >= 0."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise SettingsError(f"setting {name}={v!r} must be a finite number >= 0")


def check_fraction(name: str, v, what: str = "") -> None:
    """A number in [0, 1]."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
        raise SettingsError(f"setting {name}={v!r} must be in [0, 1]{what}")


def check_flag(name: str, v) -> None:
    if not isinstance(v, bool):
        raise SettingsError(f"setting {name}={v!r} must be True or False")


def check_choice(name: str, v, choices: tuple) -> None:
    if v not in choices:
        raise SettingsError(f"setting {name}={v!r} is unknown; choose one of {choices}")


class SolverSettings:
    """The machinery every settings dataclass inherits (no fields of its own).

    ``IGNORED``: names a solver once accepted (when every settings class carried the PGS fields)
    and never read. ``update`` still accepts them, with a ``DeprecationWarning``, and drops them;
    reading one returns its old default with the same warning. ``fields_of`` lists the real ones.
    """

    IGNORED: dict = {}

    def __setattr__(self, name, value):
        # any assignment (``w.settings.iterations = 20``, ``update``) marks the settings unchecked
        object.__setattr__(self, name, value)
        if name != "_checked":
            object.__setattr__(self, "_checked", False)

    def __getattr__(self, name):
        # only called when normal lookup fails: a deprecated, ignored field
        ignored = type(self).IGNORED
        if name in ignored:
            warnings.warn(f"setting {name!r} is not used by this solver ({type(self).__name__}); it reads as its "
                          f"old default {ignored[name]!r}", DeprecationWarning, stacklevel=2)
            return ignored[name]
        raise AttributeError(f"{type(self).__name__} has no setting {name!r}")

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def check(self) -> None:
        """``validate()`` once after each change: ``World.step`` calls this every step, so a bad
        value set between steps is still caught before the kernels see it, without re-checking
        ~30 fields (~10 us) per step."""
        if not self.__dict__.get("_checked", False):
            self.validate()
            object.__setattr__(self, "_checked", True)

    def validate(self) -> None:
        """Each part validates its own fields (cooperative ``super().validate()``)."""

    def update(self, **kw) -> None:
        """Set several fields at once; a value that fails validation leaves the settings as they
        were (the whole call is rejected)."""
        names = set(self.field_names())
        ignored = type(self).IGNORED
        for k in kw:
            if k not in names and k not in ignored:
                raise SettingsError(f"unknown setting {k!r} for {type(self).__name__}; known: {sorted(names)}")
        before = {k: getattr(self, k) for k in names}
        for k, v in kw.items():
            if k in names:
                setattr(self, k, v)
            else:
                warnings.warn(f"setting {k!r} is not used by {type(self).__name__} and is ignored (deprecated: "
                              "it will become an error)", DeprecationWarning, stacklevel=2)
        try:
            self.validate()
        except SettingsError:
            for k, v in before.items():
                object.__setattr__(self, k, v)
            raise


#: ContactSettings.rotation_integrator choices
ROTATION_INTEGRATORS = ("midpoint", "euler")


@dataclass
class ContactSettings:
    """The contact and integration model every solver shares.

    Attributes:
        contact_margin: [m] speculative distance: points closer than this become contacts before
            they touch (row solvers: they may close the gap in one step but not pass it). Default 0:
            with Baumgarte stabilisation and 10 sweeps, speculative rows made Catto's ten-box stack
            sway and fall (stack10 max drift 1.6 m with a 2 mm margin); raise it for fast small
            bodies. Solvers may set their own default (shock: 1 mm).
        restitution_threshold: [m/s] approach speeds below this do not bounce, default 0.5.
        gyroscopic: include w x I w, default True (False: w stays constant between contacts).
        rotation_integrator: how a body's rotation is integrated (``dynamics.integrate``), default
            "midpoint": the free rigid body's flow over each step by the implicit midpoint rule on the
            body-frame angular momentum with a Cayley rotation (conserves a torque-free body's world
            angular momentum and kinetic energy up to rounding: a 0.1 x 0.4 x 0.9 m box spinning near
            its intermediate axis at 60 Hz keeps both to 4e-13 over 10 s and flips as often as the
            exact motion). "euler": the implicit gyroscopic velocity update and the first-order
            quaternion update used until issue 18 (it loses 17 % of that box's |L| in 10 s at 60 Hz).
        linear_damping, angular_damping: [1/s] velocity damping, default 0 (none).
    """

    contact_margin: float = 0.0
    restitution_threshold: float = 0.5
    gyroscopic: bool = True
    linear_damping: float = 0.0
    angular_damping: float = 0.0
    rotation_integrator: str = "midpoint"

    def validate(self) -> None:
        super().validate()
        check_choice("rotation_integrator", self.rotation_integrator, ROTATION_INTEGRATORS)
        for name in ("contact_margin", "restitution_threshold", "linear_damping", "angular_damping"):
            check_nonnegative(name, getattr(self, name))


@dataclass
class RowSettings:
    """Velocity-level constraint rows solved by projected Gauss-Seidel sweeps (001 Alg. 4, 000
    eq. 28-30): the part ``pgs`` and ``shock`` share.

    Attributes:
        iterations: PGS sweeps per step (001 §7: "a fixed number of iterations"), default 10.
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
        split_speed: [m/s] (pgs, jacobi; issue 17) a contact whose Baumgarte push beta (depth - slop)
            exceeds this is a deep overlap: its velocity row gets no position feedback and the push
            (capped at ``max_correction_speed``) is solved as a pseudo-velocity that moves the bodies
            and is then dropped (split impulse for the deep contacts only); shallower contacts keep
            Baumgarte feedback (and pgs' relax sweeps). Default 1, measured at dt 1/60 (2 s, defaults;
            docs/architecture.md "Position correction"): two unit spheres jammed 3.5 / 3.0 m deep in two
            fixed spheres left pgs at 1.2 m/s (before: 22.9) and jacobi at 1.1 (23.9); four boxes
            started 0.4 m into each other threw the top one at 1.5 m/s (pgs; before 11.8) and 2.4
            (jacobi; 18.1). Pushing only the capped contacts apart this way (split_speed just below
            max_correction_speed) left the jam at 3.3 m/s but the column at 7.0 m/s: the shallow
            overlaps of a column add their pushes up. stack10, pyramid20 and pile1000 never push
            faster than 1 m/s (the depth must exceed slop + split_speed dt / baumgarte, 8.8 cm at
            60 Hz): their runs are bit for bit those of split_speed >= max_correction_speed, which
            is the scheme before issue 17.
        warm_start: carry impulses across steps by (pair, feature id) (001 §8), default True.
        friction_model: "coulomb" couples |lambda_t| <= mu lambda_n each sweep (000 eq. 29);
            "fixed" uses Catto's constant bound mu m_c g (001 eq. 24-25). Default "coulomb".
        record_merit: keep theta(lambda) after every sweep in ``world.merit_history`` (000 Fig. 5).
    """

    iterations: int = 10
    tolerance: float = 0.0
    baumgarte: float = 0.2
    slop: float = 0.005
    max_correction_speed: float = 4.0
    split_speed: float = 1.0
    warm_start: bool = True
    friction_model: str = "coulomb"
    record_merit: bool = False

    def validate(self) -> None:
        super().validate()
        check_count("iterations", self.iterations, 1)
        for name in ("tolerance", "slop", "max_correction_speed", "split_speed"):
            check_nonnegative(name, getattr(self, name))
        check_fraction("baumgarte", self.baumgarte, " (a fraction of the error per step)")
        check_flag("warm_start", self.warm_start)
        check_flag("record_merit", self.record_merit)
        check_choice("friction_model", self.friction_model, FRICTION_MODELS)


@dataclass
class JointSettings:
    """Joint rows and their position correction (001 §3 rows next to the contacts; 000 eq. 46's
    projection for joints): the part of every solver with ``capabilities.joints``.

    Attributes:
        joint_baumgarte: beta * dt for joint rows, the fraction of a joint's position error (anchor
            separation, axis misalignment, limit overshoot) removed per step (001 eq. 20), default 0.2
            (used with ``joint_correction="baumgarte"``).
        joint_correction: how joint position error is removed. "projection" (default): after the
            positions move, non-linear Gauss-Seidel passes over the joints move the bodies to close
            it, velocities untouched (000 eq. 46's correction() for joint rows; Box2D's joint
            position pass). "baumgarte": velocity feedback -joint_baumgarte / dt * C (001 eq. 20).
            Why: with warm starting, Baumgarte on a welded 5-box cantilever (10 sweeps, 240 Hz)
            oscillated with growing amplitude (tip swung 0.7 m); projected, it settles at 0.15 mm sag.
        joint_correction_iterations: projection passes per step, default 4 (stops early below
            ``joint_correction_tolerance`` [m or rad], default 1e-6).
        joint_max_correction: [m or rad] the most one projection visit corrects one row, default 0.2
            (Box2D's cap): a joint torn far apart is closed over several steps.
        joint_correction_fraction: the share of each joint error one projection visit removes,
            default 0.3. Measured on chains of 0.1 m capsule links released horizontally (10
            sweeps, 2 s): the largest gap is about the error the sweeps leave per step divided by
            this fraction (10 links at 240 Hz: 0.79 mm at 1, 2.4 mm at 0.3; at 480 Hz 0.91 mm at
            0.3); but at 60 Hz a 50-link chain tore apart at 1 and at 0.5 (the projection lifted
            the links against their falling velocities every step: kinetic energy 1768 J from
            147 J) and held at 0.3 (43 mm gaps, no energy gained). Box2D's position pass removes
            0.2 of the error per iteration for the same reason. 1 is more accurate at small steps.
        joint_projection_fixation: in the projection, a joint moves only its body farther (over the
            joint graph) from the fixed bodies (shock propagation of 000 §4 for joints). False by
            default: measured on a 50-link chain released horizontally (10 sweeps), it closed every
            gap at 240 Hz but at 120 Hz it lifted the outer links each step against their falling
            velocity and the chain gained 678 J, where the shared (mass-weighted) move lost energy
            and kept gaps under 1.1 cm (0.4 cm at 240 Hz).
        joint_frequency, joint_damping_ratio: [Hz], [-]: > 0 makes every joint's equality rows
            springs of that stiffness (soft constraints) instead of rigid rows; default 0 (rigid).
        joint_block_solve: solve each joint's equality rows (3 to 6) together, one small dense
            solve per visit (block Gauss-Seidel), instead of one scalar row at a time (Catto's
            PGS). The rows of one joint are coupled through its lever arms, which scalar sweeps
            resolve slowly. Default True (measured on a five-box welded cantilever, 10 sweeps at
            240 Hz, 2 s: final tip sag 0.15 mm block vs 0.31 mm scalar).
    """

    joint_baumgarte: float = 0.2
    joint_block_solve: bool = True
    joint_frequency: float = 0.0
    joint_damping_ratio: float = 1.0
    joint_correction: str = "projection"
    joint_correction_iterations: int = 4
    joint_correction_tolerance: float = 1e-6
    joint_max_correction: float = 0.2
    joint_projection_fixation: bool = False
    joint_correction_fraction: float = 0.3

    def validate(self) -> None:
        super().validate()
        for name in ("joint_frequency", "joint_damping_ratio", "joint_correction_tolerance", "joint_max_correction"):
            check_nonnegative(name, getattr(self, name))
        for name in ("joint_baumgarte", "joint_correction_fraction"):
            check_fraction(name, getattr(self, name), " (a fraction of the error per step)")
        check_choice("joint_correction", self.joint_correction, ("projection", "baumgarte"))
        check_count("joint_correction_iterations", self.joint_correction_iterations, 0)
        check_flag("joint_projection_fixation", self.joint_projection_fixation)
        check_flag("joint_block_solve", self.joint_block_solve)
