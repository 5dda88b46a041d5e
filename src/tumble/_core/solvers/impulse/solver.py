"""The impulse step (Schornbaum 004 Alg. 6), in its order: positions move first with the velocities
of the end of the last step; detection sees that state; batches; penetration correction; wake rules
5-6 and the velocity update (gravity damping, Alg. 12); contact resolution (Alg. 9-11, shock
propagation Alg. 10); sleep check (Alg. 5).

Private state (``SleepStore``): each body's asleep flag, recency-weighted motion, support count and
reach |r_max| (004 §3.2).
"""

from __future__ import annotations

import math
import time

import numpy as np

from tumble._core import stages
from tumble._core.solvers.impulse import driver, fused
from tumble._core.solvers.impulse.counters import step_counters
from tumble._core.solvers.impulse.settings import ImpulseSettings
from tumble._core.solvers.impulse.sleeping import sleep_check_supported, velocity_update
from tumble._core.solvers.protocol import Capabilities, Solver
from tumble._core.storage import Store

#: the stages' statistics (batches x 4) and batch starts of a step without contacts (no batch)
_NO_STATS = np.zeros((0, 4), np.int64)
_NO_BATCHES = np.zeros(1, np.int64)


def _seed_dir(gravity, gg: float) -> np.ndarray:
    """The unit gravity (zeros in zero gravity; ``gg`` its norm): the direction in which shock
    propagation's first layer must find its fixed partner (``ImpulseSettings.shock_layers``)."""
    return np.asarray(gravity, np.float64) / gg if gg > 0.0 else np.zeros(3)


class SleepStore(Store):
    """The impulse solver's per-body state (004 §3.2), one row per body of the world.

    body_asleep (n,) bool; body_sleep_motion (n,) [m^2/s^2] the recency-weighted motion average
    (Eq. 3.2.4); body_support_count (n,) int, contacts in the direction of gravity last step (wake
    rule 5); body_reach (n,) [m] the largest distance from the centre of mass to the surface (|r_max|
    of Eq. 3.2.2, for the motion bound of sleeping and gravity damping).
    """

    FIELDS = {
        "body_asleep": ((), np.bool_, False),
        "body_sleep_motion": ((), np.float64, 0.0),
        "body_support_count": ((), np.int64, 0),
        "body_reach": ((), np.float64, 0.0),
    }


class ImpulseSolver(Solver):
    name = "impulse"
    description = ("impulse-based collision response (Schornbaum, A real-time capable impulse-based collision "
                   "response algorithm): penetration correction, closing-speed order, shock propagation, "
                   "sleeping, gravity damping, parallel batches")
    settings_class = ImpulseSettings
    capabilities = Capabilities(
        joints=False, sleeping=True,
        sleeping_meaning="bodies whose recency-weighted motion stayed below sleep_threshold (004 Alg. 5): no "
                         "position or velocity update until a wake rule fires",
        counters=("batches", "largest_batch", "penetration_before", "penetrating", "corrected", "unresolvable",
                  "bodies_moved", "global_iterations", "shock_iterations", "iterations", "shock_batches",
                  "closing_left", "woken_unsupported", "gravity_damped", "asleep", "awake", "merit"))

    def __init__(self, core) -> None:
        super().__init__(core)
        self.sleep = SleepStore()

    # ---------------------------------------------------------------- hooks
    def add_body(self, core, body, asleep):
        sl = self.sleep
        sl.reserve(core.bodies.capacity)   # kernels size their scratch by the body store's capacity
        i = sl.append()
        fixed = bool(core.bodies.body_fixed[body])
        sl.body_asleep[i] = bool(asleep) and not fixed
        # the recency-weighted motion starts at its cap, so a woken body must be still a few steps to
        # fall asleep again (sleeping.sleep_check caps it at rwa_max)
        sl.body_sleep_motion[i] = math.inf if sl.body_asleep[i] else 0.0
        if not fixed:   # |r_max| of 004 Eq. 3.2.2: the farthest surface point from the centre of mass
            g = core.geoms
            mine = g.geom_body[: g.count] == body
            sl.body_reach[i] = float(np.max(np.linalg.norm(g.geom_local_position[: g.count][mine], axis=1)
                                            + g.geom_radius[: g.count][mine]))

    def wake(self, body):
        self.sleep.body_asleep[body] = False

    def sleeping(self, core):
        v = self.sleep.body_asleep[: core.bodies.count].view()
        v.setflags(write=False)
        return v

    # ---------------------------------------------------------------- the step
    def _move_and_detect(self, core, dt, prof, t, warm) -> int:
        """The position update and the detection in one kernel call (``fused.move_and_detect``), and with
        no pair the rest of the step too (then -1 is returned and the counters are written as the staged
        stages write them with no contact); else the narrow phase and the cache (``stages.collide_pairs``)
        and the contact count. Measured (a free box, thread CPU per step, old and new code in alternating
        processes, 2-core VM under load): 29-31 us staged, 18-19 us fused (pgs's fused free step: 17-19 us;
        benchmarks/results/local-2core-amd-epyc/fixed_cost.md)."""
        b, g, s, sl, bp, hull = core.bodies, core.geoms, core.settings, self.sleep, core.broad_phase, core.hull_arrays
        n = b.count
        p = core.contacts_previous      # the store this detection fills (collide_pairs swaps them)
        outcome, keys, m, added, removed, swaps, pairs, bad, woken, damped, asleep, fixed = fused.move_and_detect(
            b.body_position, b.body_orientation, b.body_linear_velocity, b.body_angular_velocity, b.body_mass,
            b.body_inv_mass, b.body_inertia_local, b.body_inv_inertia_local, b.body_inv_inertia_world, b.body_force,
            b.body_torque, b.body_fixed, n, sl.body_asleep, sl.body_support_count, sl.body_reach,
            sl.body_sleep_motion, stages.free_rotation(s), stages.velocity_gyroscopic(s), dt, g.geom_body,
            g.geom_type, g.geom_size, g.geom_local_position, g.geom_local_orientation, g.count,
            s.contact_margin + stages.AABB_TOLERANCE, g.geom_world_position, g.geom_world_rotation, g.geom_aabb_min,
            g.geom_aabb_max, hull.verts, hull.vert_start, hull.vert_count, g.geom_hull, g.geom_radius,
            stages.FAT_FRACTION, stages.FAT_MAX, g.geom_fat_min, g.geom_fat_max, core.fat_count == g.count,
            g.geom_static, *bp.steady_state(), p.contact_body_a, p.contact_body_b, p.contact_point, p.contact_normal,
            p.contact_friction, core.gravity, s.gravity_damping, s.gravity_damping_threshold, s.linear_damping,
            s.angular_damping, s.sleep_threshold, s.sleep_bias, s.sleep_rwa_max_factor * s.sleep_threshold ** 2,
            s.sleep_requires_support, s.sleep_support_margin)
        core.fat_count = g.count
        if outcome == fused.FALLBACK:   # a bad box (raises) or a changed owner (re-initialises)
            pairs = bp.update(g.geom_fat_min, g.geom_fat_max, g.geom_body, g.geom_static, g.count)
            return stages.collide_pairs(core, prof, t, warm, pairs, s.contact_margin)
        bp.adopt(keys, m, added, removed, swaps)
        if outcome == fused.PAIRS:
            return stages.collide_pairs(core, prof, t, warm, pairs, s.contact_margin)
        # collide_pairs with no pair: this step's contacts (none) in the other store
        core.contacts, core.contacts_previous = p, core.contacts
        p.count = 0
        k = core.counters
        k["pairs"] = 0
        k["cache_hits"] = 0
        k["batches"] = k["largest_batch"] = 0
        k["penetration_before"] = 0.0
        k["penetrating"] = k["corrected"] = k["unresolvable"] = k["bodies_moved"] = 0
        k["global_iterations"] = k["shock_iterations"] = k["iterations"] = k["shock_batches"] = 0
        k["closing_left"] = 0
        k["woken_unsupported"] = woken
        k["gravity_damped"] = damped
        k["asleep"] = asleep
        k["awake"] = n - asleep - fixed
        k["merit"] = 0.0
        core.finished = (bad, 0.0)      # step.finish's check and clearing are done (no contact: depth 0)
        stages.lap(prof, "free_step", t)
        return -1

    @classmethod
    def release_speed(cls, settings) -> float:
        """0: penetrations are undone by linear moves (004 chapter 2), never by velocities."""
        return 0.0

    def step(self, core, dt, prof, t):
        b, s, sl = core.bodies, core.settings, self.sleep
        n = b.count
        v, om = b.body_linear_velocity, b.body_angular_velocity
        warm = s.warm_impulse_fraction > 0.0        # warm: the cache carries the impulses
        if core.profile_stages or not core.broad_phase.steady(core.geoms.count):
            stages.integrate_positions(core, dt, b.body_fixed[:n] | sl.body_asleep[:n])
            t = stages.lap(prof, "integrate", t)
            m = stages.collide(core, prof, t, warm)
        else:
            m = self._move_and_detect(core, dt, prof, t, warm)
            if m < 0:       # no pair: the whole step was taken
                return 0
        t = time.perf_counter()
        c = core.contacts
        if m:
            bt = driver.batches(n, b.body_fixed, m, c.contact_body_a, c.contact_body_b)
            nbatches, batch_contact_start = bt.count, bt.batch_contact_start
            t = stages.lap(prof, "batches", t)
            pen_before = float(c.contact_depth[:m].max())
            cstats = driver.correct(bt, m, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal,
                                    c.contact_depth, b.body_position, b.body_fixed, sl.body_asleep, v, om, dt,
                                    s.penetration_threshold, s.remaining_penetration, s.parallel_batches,
                                    max_bodies=s.correction_max_bodies,
                                    lift_dir=-_seed_dir(core.gravity, float(np.linalg.norm(core.gravity)))
                                    if s.correction_lift else None,
                                    inv_mass=b.body_inv_mass if s.correction_energy_budget else None,
                                    gravity=core.gravity if s.correction_energy_budget else None)
            t = stages.lap(prof, "correction", t)
        else:
            # no contact: no batch (a batch is bodies joined by contacts, 004 §3.1), nothing to correct or
            # resolve; these are the empty statistics the stages return then (issue 14: batches, correction
            # and resolution cost ~15 us of a free body's ~50 us step in glue and scratch)
            nbatches, batch_contact_start, pen_before, cstats = 0, _NO_BATCHES, 0.0, _NO_STATS

        # wake rules 5 and 6, then the velocity update of awake bodies with gravity damping (Alg. 12)
        woken, damped = velocity_update(
            m, c.contact_body_a, c.contact_body_b, c.contact_normal, n, b.body_fixed, sl.body_asleep,
            sl.body_support_count, b.body_mass, v, om, sl.body_reach, b.body_force, b.body_torque, b.body_orientation,
            b.body_inv_mass, b.body_inertia_local, b.body_inv_inertia_world, core.gravity, dt, s.gravity_damping,
            s.gravity_damping_threshold, stages.velocity_gyroscopic(s), s.linear_damping, s.angular_damping)
        t = stages.lap(prof, "velocities", t)

        if m:
            mu = c.contact_friction[:m]
            gg = float(np.linalg.norm(core.gravity))     # once per step (was: up to three NumPy norms)
            rstats = driver.resolve(bt, m, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal,
                                    c.contact_restitution, mu, s.kinetic_friction_ratio * mu, b.body_position,
                                    b.body_inv_mass, b.body_inv_inertia_world, b.body_fixed, sl.body_asleep, v, om,
                                    s.resolution_threshold, s.restitution_threshold, s.max_iterations_factor,
                                    s.shock_propagation, s.shock_iterations_factor, s.contact_order == "closing_speed",
                                    c.contact_normal_impulse, c.contact_friction_impulse, s.parallel_batches,
                                    stage_below_only=s.shock_stage_contacts == "below",
                                    seed_dir=_seed_dir(core.gravity, gg) if s.shock_layers == "support" else None,
                                    slip_speed=(gg * dt
                                                if s.kinetic_friction_direction == "slip" else math.inf),
                                    warm_fraction=s.warm_impulse_fraction,
                                    warm_speed=2.0 * gg * dt)
            t = stages.lap(prof, "resolution", t)
        else:
            rstats = _NO_STATS

        asleep = sleep_check_supported(n, b.body_fixed, sl.body_asleep, v, om, sl.body_reach, sl.body_sleep_motion,
                                       s.sleep_threshold, s.sleep_bias, s.sleep_rwa_max_factor * s.sleep_threshold ** 2,
                                       s.sleep_requires_support, m, c.contact_body_a, c.contact_body_b, c.contact_point,
                                       c.contact_normal, c.contact_friction, b.body_position, core.gravity,
                                       s.sleep_support_margin)
        stages.lap(prof, "sleeping", t)
        (largest, pen, corr, unres, moved, its, left, shock_its, shock_batches,
         fixed) = step_counters(nbatches, batch_contact_start, cstats, rstats, n, b.body_fixed)
        k = core.counters
        k["batches"] = nbatches
        k["largest_batch"] = largest
        k["penetration_before"] = pen_before
        k["penetrating"], k["corrected"], k["unresolvable"], k["bodies_moved"] = pen, corr, unres, moved
        k["global_iterations"] = its
        k["shock_iterations"] = shock_its
        k["iterations"] = its + shock_its
        k["shock_batches"] = shock_batches
        k["closing_left"] = left
        k["woken_unsupported"] = woken
        k["gravity_damped"] = damped
        k["asleep"] = asleep
        k["awake"] = n - asleep - fixed
        k["merit"] = 0.0
        return m
