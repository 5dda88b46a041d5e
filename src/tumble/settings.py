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
        joint_baumgarte: beta * dt for joint rows, the fraction of a joint's position error (anchor
            separation, axis misalignment, limit overshoot) removed per step (001 eq. 20), default 0.2
            for both solvers (the shock solver's projection handles contacts only, so joints keep
            their feedback there too).
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

    def __setattr__(self, name, value):
        # any assignment (``w.settings.iterations = 20``, ``update``) marks the settings unchecked
        object.__setattr__(self, name, value)
        if name != "_checked":
            object.__setattr__(self, "_checked", False)

    def check(self) -> None:
        """``validate()`` once after each change: ``World.step`` calls this every step, so a bad
        value set between steps is still caught before the kernels see it, without re-checking
        ~30 fields (~10 us) per step."""
        if not self.__dict__.get("_checked", False):
            self.validate()
            object.__setattr__(self, "_checked", True)

    def validate(self) -> None:
        if not isinstance(self.iterations, int) or isinstance(self.iterations, bool) or self.iterations < 1:
            raise SettingsError(f"setting iterations={self.iterations!r} must be an integer >= 1")
        r = self.relax_iterations
        if not isinstance(r, int) or isinstance(r, bool) or r < 0:
            raise SettingsError(f"setting relax_iterations={r!r} must be an integer >= 0")
        for name in ("tolerance", "slop", "max_correction_speed", "contact_margin", "restitution_threshold",
                     "linear_damping", "angular_damping", "joint_frequency", "joint_damping_ratio",
                     "joint_correction_tolerance", "joint_max_correction"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise SettingsError(f"setting {name}={v!r} must be a finite number >= 0")
        for name in ("baumgarte", "joint_baumgarte", "joint_correction_fraction"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= v <= 1.0):
                raise SettingsError(f"setting {name}={v!r} must be in [0, 1] (a fraction of the error per step)")
        if self.joint_correction not in ("projection", "baumgarte"):
            raise SettingsError(f"setting joint_correction={self.joint_correction!r} is unknown; choose 'projection' "
                                f"or 'baumgarte'")
        c = self.joint_correction_iterations
        if not isinstance(c, int) or isinstance(c, bool) or c < 0:
            raise SettingsError(f"setting joint_correction_iterations={c!r} must be an integer >= 0")
        if not isinstance(self.joint_projection_fixation, bool):
            raise SettingsError(f"setting joint_projection_fixation={self.joint_projection_fixation!r} must be True "
                                "or False")
        if not isinstance(self.joint_block_solve, bool):
            raise SettingsError(f"setting joint_block_solve={self.joint_block_solve!r} must be True or False")
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


@dataclass
class ShockSettings(PGSSettings):
    """Settings of velocity-based shock propagation (Erleben 000, Fig. 14); the contact model
    (friction, restitution, warm start, margin, gyroscopic term) is shared with ``PGSSettings``.

    Attributes (besides those of ``PGSSettings``):
        iterations: PGS sweeps of each dynamics() solve -- the a dt solve of the whole system and
            the (1 - a) dt solve of every stack layer; default 10 (000 §4: "never more than 10").
        correction_iterations: sweeps of each correction() (the projection LCP of eq. 46), per
            layer and in the final correction; default 5 (000 §4).
        dynamics_fraction: a of Fig. 14, the share of the step solved on the whole system before
            shock propagation takes the rest layer by layer. The paper uses 0 < a <= 0.01; a = 0
            would let bodies at rest never feel each other's weight. Default 0.01.
        shock_propagation: solve dynamics((1 - a) dt) and correction() layer by layer with the
            bottom of each layer fixated (Fig. 12). False runs dynamics(dt) and correction() on
            the whole system instead (the "without shock propagation" case of Fig. 13).
        final_correction: detect contacts again at t + dt and run correction() on them (the last
            two lines of Fig. 14); default True.
        cfm: gamma [1/kg] of constraint force mixing, A' = A + gamma I (eq. 41), in every dynamics
            solve; default 0 (none). It damps the impulses and speeds up convergence (Figs. 6-7).
        correction_slop: [m] penetration the projection leaves in place, so resting contacts stay
            detected from step to step instead of separating and falling back (the saw-tooth
            "popcorn" of §6.1); default 1e-4.
        tolerance: [m/s] a dynamics solve (the whole system's, or one layer's) stops before
            ``iterations`` sweeps once a sweep changes no row velocity by more than this; 0 always
            runs them all. Default 1e-5 (tower_roof before impact: 24 ms/step and 0.014 mm drift in
            3 s, against 40 ms and 0.023 mm at 1e-6; the per-body repeats do the fine work).
        correction_tolerance: [m] the same for correction() sweeps (displacement per row); default 1e-6.
        block_iterations: inside each layer sweep, repeat the rows of one body (its contacts with
            the fixated bodies below and its siblings) up to this many times before moving to the
            next body; 1 is the paper's plain PGS. Default 20. Why: a fixated layer passes every
            velocity error of its bodies on to the layer above as a prescribed motion, so errors grow
            with height. With plain PGS at 10 sweeps per layer the 40-course tower of tower_roof
            rocked from the first step (0.14 rad/s at the top, 7 cm drift in 2 s, +80 J); with the
            body's rows repeated to 1e-9 m/s it stood with 1 um drift (30 plain sweeps did too, at
            three times the cost).
        block_tolerance: [m/s] stop repeating a body's rows once a pass changes none of them by more
            than this; default 1e-9.
        layer_targets: "paper" -- each layer solve enforces the contacts' velocity targets against
            its fixated (infinitely heavy) bottom bodies, as Fig. 14 reads; "incremental" (default)
            -- where a fixated body itself moves into the body above it faster than
            ``layer_collision_speed`` (after dynamics(a dt)), the layer asks the upper body only to
            stop its own approach, not to get out of the way (the correction removes the overlap);
            a body falling onto its base is stopped as in "paper". Why: a fixated body moving into
            the one above launches it whatever the masses; in tower_roof (cannon at 2 s) the
            tumbling 32 kg bricks threw the 16 t block 3 m up (+0.5 MJ) under "paper".
        layer_collision_speed: [m/s] see ``layer_targets``; default 0.05 (a resting contact's
            residual approach after dynamics(a dt) is about a g dt = 1 mm/s at dt 0.01).
        max_correction: [m] the most one correction() may separate a contact in one step
            (depth - slop is capped at this); default inf, the paper's full projection.
        reuse_final_contacts: the contacts of detect(t + dt) serve as detect(t) of the next step,
            their depths moved to first order by the final correction (depth - J_n disp), so each
            step runs the narrow phase once instead of the paper's twice. Any change to the bodies
            between steps (set_position, a new body, a setting) makes the next step detect afresh.
            False runs Fig. 14 literally. Default True.
        reuse_max_correction: [m, and rad] the contacts are reused only when the final correction
            moved no body by more than this (linear, and rotation angle): the first-order depths and
            the unmoved points are then accurate. After larger moves the next step detects afresh:
            in tower_roof, reusing after the cannonball's deep penetrations let the stale contacts
            throw the 16 t block up at 3 m/s (+11 kJ in a 12-course version). Default 1e-3.
        baumgarte: the position error is corrected by projection, so the velocity solve has no
            Baumgarte feedback: default 0 (a value > 0 adds it on top, for experiments).
        relax_iterations: unused by this solver (kept 0).
        contact_margin: [m] default 1 mm. The projection leaves touching faces within micrometres
            of each other, and a face resting on another at a 1e-5 rad tilt has corners apart by more
            than the narrow phase's 1e-6 m tolerance: with a zero margin they dropped out of the
            manifold and bricks of wall200 rocked on 3 of their 8 points (1.2 rad/s after two steps).
            Points inside the margin are speculative rows (they may close the gap, no more).
    """

    baumgarte: float = 0.0
    relax_iterations: int = 0
    contact_margin: float = 0.001
    correction_iterations: int = 5
    dynamics_fraction: float = 0.01
    shock_propagation: bool = True
    final_correction: bool = True
    cfm: float = 0.0
    correction_slop: float = 1e-4
    max_correction: float = math.inf
    layer_targets: str = "incremental"
    layer_collision_speed: float = 0.05
    reuse_final_contacts: bool = True
    reuse_max_correction: float = 1e-3
    tolerance: float = 1e-5
    correction_tolerance: float = 1e-6
    block_iterations: int = 20
    block_tolerance: float = 1e-9

    def validate(self) -> None:
        super().validate()
        c = self.correction_iterations
        if not isinstance(c, int) or isinstance(c, bool) or c < 0:
            raise SettingsError(f"setting correction_iterations={c!r} must be an integer >= 0")
        a = self.dynamics_fraction
        if not (isinstance(a, (int, float)) and not isinstance(a, bool) and 0.0 < a <= 1.0):
            raise SettingsError(f"setting dynamics_fraction={a!r} must be in (0, 1] (a of 000 Fig. 14)")
        bi = self.block_iterations
        if not isinstance(bi, int) or isinstance(bi, bool) or bi < 1:
            raise SettingsError(f"setting block_iterations={bi!r} must be an integer >= 1")
        for name in ("cfm", "correction_slop", "correction_tolerance", "block_tolerance", "reuse_max_correction",
                     "layer_collision_speed"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise SettingsError(f"setting {name}={v!r} must be a finite number >= 0")
        if self.layer_targets not in ("paper", "incremental"):
            raise SettingsError(f"setting layer_targets={self.layer_targets!r} is unknown; choose 'paper' or "
                                f"'incremental'")
        mc = self.max_correction
        if not isinstance(mc, (int, float)) or math.isnan(mc) or mc <= 0:
            raise SettingsError(f"setting max_correction={mc!r} must be a number > 0 [m] (inf: no cap)")
        for name in ("shock_propagation", "final_correction", "reuse_final_contacts"):
            if not isinstance(getattr(self, name), bool):
                raise SettingsError(f"setting {name}={getattr(self, name)!r} must be True or False")


#: The two configurations of the impulse thesis (004 §5.1 and §5.5, digest §1.15). Values the thesis
#: states are marked [004]; values it leaves open are tumble's choices, marked [tumble] with the reason.
#: ``dt`` is the time step the preset is meant for (240 resp. 960 steps per second).
IMPULSE_PRESETS: dict[str, dict] = {
    "high_performance": {
        "dt": 1.0 / 240.0,                      # [004] 240 steps/s, 8 per 33 1/3 ms "simulation step"
        "penetration_threshold": 1.74e-3,       # [004] |t_pen| [m]
        "sleep_threshold": 8.33e-3,             # [004] [m/s], < |g| dt (Eq. 3.2.5)
        "resolution_threshold": 83.4e-6,        # [004] |t_res| [m/s]
        "max_iterations_factor": 2.0,           # [004] cap = 2 x contacts of the batch
        "shock_propagation": True,              # [004] Alg. 10 when the cap is hit
        "shock_iterations_factor": 6.0,         # [004] cap = 6 x contacts of the stage
        "restitution_threshold": 0.0458,        # [004] |g| dt + eps (Eq. 3.8.1)
        "gravity_damping": 0.7,                 # [004] 70 % of g withheld from slow bodies
        "gravity_damping_threshold": 0.0833,    # [004] [m/s] (§5.3)
    },
    "high_accuracy": {
        "dt": 1.0 / 960.0,                      # [004] 960 steps/s
        "penetration_threshold": 1.0e-4,        # [004]
        "sleep_threshold": 0.52e-3,             # [004]
        "resolution_threshold": 5.2e-6,         # [004]
        "max_iterations_factor": 0.0,           # [004] unlimited (0)
        "shock_propagation": False,             # [004] off
        "shock_iterations_factor": 6.0,         # (unused: shock propagation is off)
        "restitution_threshold": 0.0115,        # [004]
        "gravity_damping": 0.0,                 # [004] off
        "gravity_damping_threshold": 0.0833,    # (unused: damping is off)
    },
}


@dataclass
class ImpulseSettings(PGSSettings):
    """Settings of impulse-based collision response (Schornbaum 004; digest
    ``shared/notes/seed-impulse-thesis.md``). Defaults are the thesis' high-performance preset;
    ``World(solver="impulse", preset="high_accuracy")`` switches every preset value at once (keywords
    given with it override single values). The contact model fields of ``PGSSettings`` that this
    solver reads: ``restitution_threshold``, ``contact_margin``, ``gyroscopic``, the dampings; the
    others (iterations, baumgarte, slop, warm start, joints...) are not used by it.

    Attributes (besides those of ``PGSSettings``):
        preset: "high_performance" (default) or "high_accuracy" (``IMPULSE_PRESETS``).
        penetration_threshold: [m] a contact penetrates when its depth exceeds this (t_pen of §2.2,
            as a positive depth); default 1.74 mm [004].
        remaining_penetration: f_rem of Eq. 2.5.4, the fraction of ``penetration_threshold`` left as
            overlap on purpose so the contact stays detected next step. The thesis gives no value
            [tumble]: 0.5, the middle of (0, 1): the residual (0.87 mm) sits halfway between touching
            and the threshold.
        sleep_threshold: [m/s] a body whose recency-weighted motion stays below this falls asleep
            (Alg. 5); default 8.33 mm/s [004]; 0 turns sleeping off.
        sleep_bias: bias of the recency-weighted average (Eq. 3.2.4) [tumble]: 0.5 (pe's sleep
            bias, digest §3): the average forgets a step in about two steps.
        sleep_rwa_max_factor: the average is capped at this times ``sleep_threshold``^2 [tumble]: 10,
            so a fast body may fall asleep at most ~4 steps (log(1/10)/log(0.5)) after it stops.
        resolution_threshold: [m/s] a contact is closing when its normal velocity is below
            -resolution_threshold (Eq. 3.4.3); default 83.4 um/s [004].
        max_iterations_factor: the global resolution (Alg. 9) stops after this times the batch's
            contacts; 0 is unlimited (a safety stop at 1000x remains); default 2 [004].
        shock_propagation: run Alg. 10 when the cap is hit with closing contacts left; default True.
        shock_iterations_factor: each shock stage stops after this times its contacts; default 6.
        shock_stage_contacts: which contacts a shock stage resolves (Alg. 10's "all contacts caused by
            the bodies in subset" reads two ways): "all" -- every contact of the stage's bodies,
            including those with the next layer, which still has finite mass; "below" -- only those
            with frozen or fixed bodies and among the stage's bodies (Guendelman et al.'s layers: the
            next layer's contacts wait for its own stage). Default "all" (see the measurements in
            benchmarks/results/<machine>/impulse.md).
        restitution_threshold: [m/s] approach speeds below this do not bounce (Alg. 11); default
            4.58 cm/s [004], just above |g| dt at 240 Hz.
        gravity_damping: the fraction of gravity withheld from bodies whose motion bound is below
            ``gravity_damping_threshold`` (Alg. 12); default 0.7 [004].
        gravity_damping_threshold: [m/s] default 8.33 cm/s [004].
        contact_order: "closing_speed" (default, Eq. 3.6.1: always the fastest-closing contact) or
            "arbitrary" (the closing contact of lowest index: the §5.4 comparison).
        kinetic_friction_ratio: mu_k = this x mu_s, where mu_s is the contact's combined friction;
            the thesis' Table 1 values are lost [tumble]: 1 (one Coulomb coefficient, as the other
            solvers).
        parallel_batches: solve independent batches on all cores (prange over batches grouped
            into one bin per thread, largest first); the result is the same as serial. Default True.
        contact_margin: [m] default 0: the thesis resolves the contacts detection reports; a
            positive margin would make resolution stop bodies before they touch.
    """

    preset: str = "high_performance"
    penetration_threshold: float = 1.74e-3
    remaining_penetration: float = 0.5
    sleep_threshold: float = 8.33e-3
    sleep_bias: float = 0.5
    sleep_rwa_max_factor: float = 10.0
    resolution_threshold: float = 83.4e-6
    max_iterations_factor: float = 2.0
    shock_propagation: bool = True
    shock_iterations_factor: float = 6.0
    shock_stage_contacts: str = "all"
    restitution_threshold: float = 0.0458
    gravity_damping: float = 0.7
    gravity_damping_threshold: float = 0.0833
    contact_order: str = "closing_speed"
    kinetic_friction_ratio: float = 1.0
    parallel_batches: bool = True
    contact_margin: float = 0.0
    warm_start: bool = False

    def update(self, **kw) -> None:
        if "preset" in kw:  # the preset first, so keywords given with it override single values
            name = kw.pop("preset")
            if name not in IMPULSE_PRESETS:
                raise SettingsError(f"setting preset={name!r} is unknown; choose one of {sorted(IMPULSE_PRESETS)}")
            self.preset = name
            for k, v in IMPULSE_PRESETS[name].items():
                if k != "dt":
                    setattr(self, k, v)
        super().update(**kw)

    def validate(self) -> None:
        super().validate()
        if self.preset not in IMPULSE_PRESETS:
            raise SettingsError(f"setting preset={self.preset!r} is unknown; choose one of {sorted(IMPULSE_PRESETS)}")
        for name in ("penetration_threshold", "sleep_threshold", "resolution_threshold", "max_iterations_factor",
                     "shock_iterations_factor", "gravity_damping_threshold", "sleep_rwa_max_factor"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise SettingsError(f"setting {name}={v!r} must be a finite number >= 0")
        for name in ("remaining_penetration", "sleep_bias", "gravity_damping", "kinetic_friction_ratio"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
                raise SettingsError(f"setting {name}={v!r} must be in [0, 1]")
        if self.sleep_bias >= 1.0:
            raise SettingsError(f"setting sleep_bias={self.sleep_bias!r} must be < 1 (Eq. 3.2.4)")
        if self.sleep_rwa_max_factor < 1.0:
            raise SettingsError(f"setting sleep_rwa_max_factor={self.sleep_rwa_max_factor!r} must be >= 1")
        if self.shock_stage_contacts not in ("all", "below"):
            raise SettingsError(f"setting shock_stage_contacts={self.shock_stage_contacts!r} is unknown; choose "
                                "'all' or 'below'")
        if self.contact_order not in ("closing_speed", "arbitrary"):
            raise SettingsError(f"setting contact_order={self.contact_order!r} is unknown; choose 'closing_speed' "
                                "or 'arbitrary'")
        for name in ("shock_propagation", "parallel_batches"):
            if not isinstance(getattr(self, name), bool):
                raise SettingsError(f"setting {name}={getattr(self, name)!r} must be True or False")


#: solver name -> settings class
SOLVER_SETTINGS = {"pgs": PGSSettings, "shock": ShockSettings, "impulse": ImpulseSettings}
