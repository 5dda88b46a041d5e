"""Settings of the impulse solver (Schornbaum 004): the shared contact model of
``solvers.settings_parts`` plus the thesis' thresholds, caps and presets."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from tumble._core.solvers.settings_parts import ContactSettings, JointSettings, RowSettings, SolverSettings
from tumble.errors import SettingsError

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
class ImpulseSettings(ContactSettings, SolverSettings):
    """Settings of impulse-based collision response (Schornbaum 004; digest
    ``shared/notes/seed-impulse-thesis.md``). Defaults are the thesis' high-performance preset;
    ``World(solver="impulse", preset="high_accuracy")`` switches every preset value at once (keywords
    given with it override single values). Of the shared parts it has only the contact model
    (``ContactSettings``: restitution threshold, margin, gyroscopic term, dampings); the fields of the
    row solvers (iterations, baumgarte, slop, warm start, joints...) it never read are accepted with a
    DeprecationWarning and ignored (``IGNORED``).

    Attributes (its own, and the shared ones whose default differs here):
        preset: "high_performance" (default) or "high_accuracy" (``IMPULSE_PRESETS``).
        penetration_threshold: [m] a contact penetrates when its depth exceeds this (t_pen of §2.2,
            as a positive depth); default 1.74 mm [004].
        remaining_penetration: f_rem of Eq. 2.5.4, the fraction of ``penetration_threshold`` left as
            overlap on purpose so the contact stays detected next step. The thesis gives no value
            [tumble]: 0.5, the middle of (0, 1): the residual (0.87 mm) sits halfway between touching
            and the threshold.
        correction_max_bodies: a penetration-correction move (Alg. 2) that would displace more than this many
            bodies counts as invalid, like one that reaches a fixed body (Fig. 8) [tumble, issue 19]; 0
            (default) is the thesis' unbounded search. In a walled pile nearly every move ends at a wall or
            the ground anyway (pile1000 at dt 1/100, 3 s: 2239 of 2248 penetrating contacts unresolvable),
            after searching much of the pile. Measured (one step from the same state, 1 thread, median
            of 5, process CPU time): 8 bodies cut that step from 19.9 to 17.2 ms (-13 %; 32 and 64 bodies:
            -3 % and -2 %); at 1 s, while the pile still falls, 10.8 -> 9.6 ms, with 173 instead of 206
            contacts corrected. Over 3 s at 240 Hz (worlds stepped in turn): overlap 40.8 mm vs 39.5 mm,
            KE 5.5 vs 4.6 J, the same CPU time per step within noise; not the default.
        correction_lift: a penetrating contact for which every move of Alg. 2 is invalid (Fig. 8) tries to lift
            its upper body straight up (against gravity) by the overlap over the cosine of the contact normal with
            the vertical (``correction.lift_candidates``, normals within 60 deg of the vertical) before it is
            left [tumble, issue 18; not in 004]. Default False (004). Measured, pile1000's box with 300
            spheres at dt 1/60, step 100: 243 of 281 penetrating contacts had no valid move, every one blocked
            by a wall or the ground (96 % of the failing moves oblique: Eq. 2.3.6 passes the whole move on
            through every contact deeper than f_rem t_pen, so a sideways part runs across the pile into a wall).
            With the lift, 150 steps (worlds stepped in turn, process CPU time): unresolvable at the end 147 of
            178 vs 349 of 359 penetrating, deepest overlap 54 vs 53 mm, KE 9.7 vs 4.2 J, 3.3 vs 3.6 ms per step;
            with max_iterations_factor=0 (unlimited) 6 unresolvable (all normals > 60 deg from the vertical),
            13.7 vs 21.0 mm, KE 1.4 vs 1.5 J. pile1000 (1000 spheres, dt 1/60, 200 steps, both with
            correction_energy_budget): overlap 330 vs 148 mm, KE 3.6 vs 3.9 kJ. Lifts down to cos 0.2 / 0.05 instead
            of 0.5 (300 spheres, unlimited, budget on): 22 / 8 mm, KE 0.16 / 5.8 J (``driver.LIFT_MIN_COS``).
            At 240 Hz (300 spheres, 4 s) the lift alone pumps (one step gained 5.4 J above Alg. 6's free-fall
            term; KE 1.4 vs 0.44 J, 27 vs 21 mm), with ``correction_energy_budget`` it does not (0.0 J; KE
            0.013 J, 21 mm, 265 vs 261 of 300 asleep): use the two together. Not better everywhere: not the
            default.
        correction_energy_budget: a correction move (Alg. 2, lifts included) may raise the potential energy of
            the bodies it moves by at most what its batch's bodies released in this step's position update
            (sum m g . v dt, less what earlier moves of the batch raised); a move over budget is invalid
            (``correction.correct_batches``) [tumble, issue 18; not in 004]. Default False (004). Measured,
            pile1000 at dt 1/60, 600 steps (worlds stepped in turn, process CPU time): KE 2.0 vs 3.0 kJ at
            10 s, the largest one-step rise of kinetic + potential energy above the free-fall term of Alg. 6
            (sum 1/2 m g^2 dt^2) 461 vs 1778 J, deepest overlap 152 vs 150 mm, 13.4 vs 6.0 ms per step (every
            candidate over budget is searched to its end); 300 spheres, 150 steps: KE 2.9 vs 4.2 J, 58 vs 53 mm.
            It bounds the potential energy, not the total: the position update's release is paid out again as
            kinetic energy by the velocity update (m g . v dt), so a move that gives the height back creates
            that energy unless the resolution then removes it, which the capped resolution does not where it
            leaves contacts closing (pile1000, 100 steps: 83.6 kJ of potential energy restored by correction). With
            ``correction_lift`` too, pile1000 at dt 1/60, 600 steps: KE 1.8 vs 3.0 kJ, largest one-step rise
            577 vs 1778 J, but one overlap of 330 mm stays (vs 150 mm), 16.0 vs 6.4 ms per step.
        warm_impulse_fraction: each resting contact (closing at most 2 |g| dt after the velocity update)
            first takes this fraction of the normal impulse its point took last step (matched by the
            contact cache, 001 §8), and warm impulses the contacts no longer need are taken back before
            the resolution loop (``resolution.resolve_batches``) [tumble, issue 18; not in 004, which starts
            every step cold]. 0 (default) is the thesis' cold start. Measured (1 thread, the worlds
            stepped in turn in one process, process CPU time), 0.9 vs 0: pile1000 at 240 Hz, 10 s: overlap
            37.0 vs 54.1 mm, KE 0.18 vs 0.63 J, 361 vs 260 asleep, 18.2 vs 19.1 ms per step (but at 4-6 s
            KE 2.2 / 1.0 vs 1.2 / 0.1 J); pile1000 at dt 1/100, 3 s: 49 vs 80 mm, KE 6 vs 19 J, no
            speed-up (every shock stage still stops at its cap); balls_well at 240 Hz, 3 s: 2.6 vs 4.0 mm,
            the same time; balls_well under high_accuracy (960 Hz), 2 s: the same time within noise. A
            resting 5-sphere column: 45 instead of 59 iterations per step. One chaotic run each, so not
            the default. The friction impulse is not warmed (see driver.resolve).
        sleep_threshold: [m/s] a body whose recency-weighted motion stays below this falls asleep
            (Alg. 5); default 8.33 mm/s [004]; 0 turns sleeping off.
        sleep_bias: bias of the recency-weighted average (Eq. 3.2.4) [tumble]: 0.5 (pe's sleep
            bias, digest §3): the average forgets a step in about two steps.
        sleep_requires_support: a slow body falls asleep only if its contacts can hold it: forces inside
            their friction pyramids balance its weight with no torque about its centre of mass
            (``sleeping.held_by_contacts``) [tumble, issue 18]. Default True; False is Alg. 5 alone, which
            put a domino tilted past its tipping angle and released at rest to sleep after one step (it
            never toppled).
        sleep_support_margin: [m] the torque those forces may leave unbalanced, as a lever arm of the
            weight, default 0.1 mm (rounding of contact points; a box 0.05 mm past its tipping edge is
            still held, 1 mm past it is not: tests/physics/test_impulse_sleep_support.py).
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
        shock_layers: which bodies form shock propagation's first stage. "fixed": every body touching a fixed
            body (Alg. 10 lines 3-5, walls included); "support" (default) [tumble, issue 18]: only those
            whose fixed partner lies in the direction of gravity (contact normal within ~84 deg of g: the
            ground, not a wall); a batch with none falls back to "fixed", and zero gravity is "fixed".
            Measured, pile1000 at 240 Hz (one process, both worlds stepped in turn, 1 thread): "fixed" KE
            1147 / 244 / 108 / 112 J at 1-4 s, overlap 109 mm at 4 s, none asleep; "support" 620 / 33 / 4.6 /
            1.2 J, 42 mm, 197 asleep, and 0.6 J, 54 mm, 260 asleep at 10 s; the same CPU time per step
            (19.6 vs 19.7 ms at 3-4 s). Not better everywhere: its 300-sphere version ends with more overlap
            (22 mm vs 10 mm at 4 s, KE 1.2 vs 0.3 J), and neither rests pile1000 at 60 Hz (004 §5.6: at
            least 180 steps/s under standard gravity).
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
        kinetic_friction_direction: "slip" (default): a contact outside the friction cone that already
            slides faster than |g| dt gets the kinetic impulse mu_k dj0 against its slip after the
            impulse (Coulomb, maximal dissipation) [tumble, issue 18]; one starting to slip keeps Alg. 8's
            direction. "static": always along the static solution's tangential impulse, as Alg. 8
            writes it. Measured, a 0.4 x 0.4
            x 0.2 m box on a 30 deg slope (mu 0.2, 240 Hz) slides in 1 s: "static" 1.750 m (+7 %),
            "slip" 1.633 m (-0.06 %); closed form g (sin th - mu cos th) / 2 = 1.634 m. Where the
            iteration for the slip direction does not settle (it alternates when the normal impulse itself
            reverses the slip: a 12 m box on its corner) the contact takes Alg. 8's direction (issue 17).
            With either, an impulse that would raise the kinetic energy is blended towards the
            frictionless one (resolution.py's energy guard; not in 004).
        parallel_batches: solve independent batches on all cores (prange over batches grouped
            into one bin per thread, largest first); the result is the same as serial. Default True.
        contact_margin: [m] default 0: the thesis resolves the contacts detection reports; a
            positive margin would make resolution stop bodies before they touch.
    """

    preset: str = "high_performance"
    penetration_threshold: float = 1.74e-3
    remaining_penetration: float = 0.5
    correction_max_bodies: int = 0
    correction_lift: bool = False
    correction_energy_budget: bool = False
    warm_impulse_fraction: float = 0.0
    sleep_threshold: float = 8.33e-3
    sleep_bias: float = 0.5
    sleep_rwa_max_factor: float = 10.0
    sleep_requires_support: bool = True
    sleep_support_margin: float = 1e-4
    resolution_threshold: float = 83.4e-6
    max_iterations_factor: float = 2.0
    shock_propagation: bool = True
    shock_iterations_factor: float = 6.0
    shock_stage_contacts: str = "all"
    shock_layers: str = "support"
    restitution_threshold: float = 0.0458
    gravity_damping: float = 0.7
    gravity_damping_threshold: float = 0.0833
    contact_order: str = "closing_speed"
    kinetic_friction_ratio: float = 1.0
    kinetic_friction_direction: str = "slip"
    parallel_batches: bool = True
    contact_margin: float = 0.0

    #: the fields of the row solvers that ImpulseSettings carried before (issue 14) and never read
    IGNORED = {**{f.name: f.default for f in fields(RowSettings)}, **{f.name: f.default for f in fields(JointSettings)},
               "relax_iterations": 2, "warm_start": False}

    def update(self, **kw) -> None:
        if "preset" in kw:  # the preset's values first, so keywords given with it override single values
            name = kw["preset"]
            if not isinstance(name, str) or name not in IMPULSE_PRESETS:
                raise SettingsError(f"setting preset={name!r} is unknown; choose one of {sorted(IMPULSE_PRESETS)}")
            kw = {**{k: v for k, v in IMPULSE_PRESETS[name].items() if k != "dt"}, **kw}
        super().update(**kw)

    def validate(self) -> None:
        super().validate()
        if self.preset not in IMPULSE_PRESETS:
            raise SettingsError(f"setting preset={self.preset!r} is unknown; choose one of {sorted(IMPULSE_PRESETS)}")
        for name in ("penetration_threshold", "sleep_threshold", "sleep_support_margin", "resolution_threshold",
                     "max_iterations_factor",
                     "shock_iterations_factor", "gravity_damping_threshold", "sleep_rwa_max_factor"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise SettingsError(f"setting {name}={v!r} must be a finite number >= 0")
        for name in ("remaining_penetration", "sleep_bias", "gravity_damping", "kinetic_friction_ratio",
                     "warm_impulse_fraction"):
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
        if self.shock_layers not in ("support", "fixed"):
            raise SettingsError(f"setting shock_layers={self.shock_layers!r} is unknown; choose 'support' or 'fixed'")
        if self.kinetic_friction_direction not in ("slip", "static"):
            raise SettingsError(f"setting kinetic_friction_direction={self.kinetic_friction_direction!r} is unknown; "
                                "choose 'slip' or 'static'")
        if self.contact_order not in ("closing_speed", "arbitrary"):
            raise SettingsError(f"setting contact_order={self.contact_order!r} is unknown; choose 'closing_speed' "
                                "or 'arbitrary'")
        v = self.correction_max_bodies
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise SettingsError(f"setting correction_max_bodies={v!r} must be an integer >= 0")
        for name in ("shock_propagation", "parallel_batches", "sleep_requires_support", "correction_lift",
                     "correction_energy_budget"):
            if not isinstance(getattr(self, name), bool):
                raise SettingsError(f"setting {name}={getattr(self, name)!r} must be True or False")
