"""The shock step (Erleben 000 Fig. 14): detect(t), dynamics(a dt) on the whole system, shock
propagation of (dynamics((1 - a) dt), correction()) over the stack layers, detect(t + dt),
correction().

With ``shock_propagation=False`` the step is dynamics(dt) and correction() on the whole system,
then detect(t + dt) and correction() (a = 1; the "without shock propagation" case of Fig. 13).
Positions move once per stage through the accumulated displacement (``kernels``).

Private state: the layer solve's impulses per contact point (normal, friction world vector) and per
joint row, cached across steps like the shared impulses (``carry_matched`` follows the contact
cache's matches), and the key of the last final detection (``reuse_final_contacts``).
"""

from __future__ import annotations

import math
import time

import numpy as np

from tumble._core import stages
from tumble._core import types as T
from tumble._core.contact.cache import carry_matched
from tumble._core.contact.layers import articulated_heights, build_layers, rest_order_heights
from tumble._core.contact.rows import store_contact_impulses
from tumble._core.dynamics.integrate import correct_bodies
from tumble._core.dynamics.joints import tree as joint_tree
from tumble._core.dynamics.joints.rows import load_joint_impulses, store_joint_impulses
from tumble._core.dynamics.joints.tree import JointTree, factor_tree, mark_tree_rows
from tumble._core.solvers.protocol import Capabilities, Solver
from tumble._core.solvers.shock import fused, guard
from tumble._core.solvers.shock.kernels import (
    CORRECTION_TURN_WEIGHT,
    accumulate_displacement,
    apply_step_displacement,
    correction,
    correction_residual,
    count_ahead_copies,
    load_layer_impulses,
    no_energy_gain,
    prepare_normal_rows,
    settle_joint_tree,
    shock_propagation,
    solve_dynamics,
    stop_approach,
    store_layer_impulses,
    tree_correction,
    update_depths,
    write_ahead_copies,
)
from tumble._core.solvers.shock.settings import ShockSettings
from tumble._core.solvers.shock.spin import (
    restore_step_start,
    save_step_start,
    scale_warm_start,
    spin_substeps,
    substeps_on,
    turn_substeps,
)
from tumble._core.solvers.shock.undone import keep_free_momentum, stop_undone_motion
from tumble._core.types import JOINT_MAX_ROWS

_EMPTY = np.zeros(0)
#: per contact point: the layer solve's normal impulse, then its friction world vector [N s]
LAYER_IMPULSE_WIDTH = 4
#: the most sweeps of the final correction with the joint tree (``kernels.tree_correction``; at least
#: ``correction_iterations``). Its block Gauss-Seidel reaches a heavy jointed neighbour slowly: each sweep
#: lifted SHOCK_JOINED_SPHERES_CASE's three spheres by ~12 % of their depth, so 5 sweeps left it 0.36 J
#: beyond the fuzz's bound and 20 JOINT_TREE_SHOCK_JAM_CASE 0.16 J beyond; 50 holds both (0.39 and 0.13 J
#: below). Converged systems stop at ``correction_tolerance`` first
TREE_CORRECTION_SWEEPS = 50
#: [rad] the final correction with the joint tree stops after the sweep in which some body's correction
#: turned it this far: a link jammed between two capsules (linearised rows far past their validity) was
#: turned through wild angles by the sweeps, 7e19 J beyond the bound in 30 steps (0.5 rad: 3.7e17 J; 0.2:
#: 8.5 J below, the SHOCK_JOINTED_JAM_CASES as without the cap)
TREE_CORRECTION_MAX_TURN = 0.2


class ShockSolver(Solver):
    name = "shock"
    description = ("velocity-based shock propagation with projection error correction (Erleben, Velocity-based "
                   "shock propagation for multibody dynamics animation)")
    settings_class = ShockSettings
    capabilities = Capabilities(joints=True, counters=(
        "iterations", "merit", "rows", "cache_hits", "layers", "layer_sweeps", "layer_correction_sweeps",
        "layer_penetration", "final_penetration", "joint_rows", "joint_error", "joint_error_after",
        "settle_scaled", "settle_joint_sweeps", "ahead_copies", "spin_substeps"))

    def __init__(self, core) -> None:
        super().__init__(core)
        self.contact_layer_impulse = np.zeros((16, LAYER_IMPULSE_WIDTH))
        self.contact_layer_impulse_previous = np.zeros((16, LAYER_IMPULSE_WIDTH))
        self.joint_layer_impulse = np.zeros((0, JOINT_MAX_ROWS))
        # the reuse key: the scalars of ``_scalar_key`` (None: no reuse) and the bodies' poses and fixed
        # flags at the last final correction (``fused.save_state``), rows grown with the body store
        self.final_state = None
        self.key_position = np.zeros((0, 3))
        self.key_orientation = np.zeros((0, 4))
        self.key_fixed = np.zeros(0, dtype=np.bool_)
        # [s] while ``_substeps`` runs: the whole step's dt, the speculative pad of every detection (None: the
        # solve's own dt)
        self.pad_dt = None

    # ---------------------------------------------------------------- hooks
    def state_changed(self) -> None:
        self.final_state = None

    def contacts_compacted(self, core, keep) -> None:
        # the layer impulses are row-aligned with the contact store (the next step's cache)
        m = keep.shape[0]
        self.contact_layer_impulse[:m] = self.contact_layer_impulse[keep]
        self.final_state = None

    # ---------------------------------------------------------------- detection
    def _detect(self, core, prof, t, dt) -> int:
        """``stages.collide`` plus the layer impulses of the matched points (the contact cache); with
        ``speculative_contacts`` every moving body's geoms padded by how far they move in dt."""
        s = core.settings
        if self.pad_dt is not None:      # inside ``_substeps``: the whole step's reach
            dt = self.pad_dt
        count = stages.collide(core, prof, t, s.warm_start, None, dt if s.speculative_contacts else 0.0)
        self._carry_layer_impulses(core, count)
        return count

    def _carry_layer_impulses(self, core, count) -> None:
        """After a detection of ``count`` points: the layer impulses of the matched points carried over."""
        self.contact_layer_impulse, self.contact_layer_impulse_previous = (self.contact_layer_impulse_previous,
                                                                           self.contact_layer_impulse)
        if self.contact_layer_impulse.shape[0] < core.contacts.capacity:
            self.contact_layer_impulse = np.zeros((core.contacts.capacity, LAYER_IMPULSE_WIDTH))
        if count:
            carry_matched(count, core.contacts.contact_match, self.contact_layer_impulse_previous,
                          self.contact_layer_impulse)

    def _final_contacts_still_valid(self, core) -> bool:
        """True when the last step ended with detect(t + dt) + correction() and nothing (a user's
        set_position, a new body, a settings change) has touched the bodies since."""
        key = self.final_state
        if key is None or not core.settings.reuse_final_contacts or key != _scalar_key(core):
            return False
        b = core.bodies
        return fused.same_state(b.count, b.body_position, b.body_orientation, b.body_fixed, self.key_position,
                                self.key_orientation, self.key_fixed)

    def _save_key(self, core) -> tuple:
        """The reuse key of the state now (``_final_contacts_still_valid``): the bodies' poses and fixed
        flags copied into the key arrays (one kernel call; grown with the body store), the scalars returned."""
        b = core.bodies
        if self.key_position.shape[0] < b.count:
            self.key_position = np.zeros((b.capacity, 3))
            self.key_orientation = np.zeros((b.capacity, 4))
            self.key_fixed = np.zeros(b.capacity, dtype=np.bool_)
        fused.save_state(b.count, b.body_position, b.body_orientation, b.body_fixed, self.key_position,
                         self.key_orientation, self.key_fixed)
        return _scalar_key(core)

    # ---------------------------------------------------------------- the step
    @classmethod
    def release_speed(cls, settings) -> float:
        """0: correction() projects positions (000 eq. 46) and never writes velocities; with
        ``baumgarte`` > 0 (not the default) the velocity solve pushes too, up to max_correction_speed."""
        return float(settings.max_correction_speed) if settings.baumgarte > 0.0 else 0.0

    def step(self, core, dt, prof, t):
        if self._contact_free(core) and self._contact_free_step(core, dt, prof, t):
            return 0
        if self._final_contacts_still_valid(core):
            # detect(t + dt) of the last step, depths updated by its final correction, is detect(t)
            # of this one; only the body frames need refreshing
            stages.refresh_frames(core)
            contacts = core.contacts.count
            core.counters["pairs"] = 0
            core.counters["cache_hits"] = contacts
            prof["reuse"] = 1000.0 * (time.perf_counter() - t)
        else:
            contacts = self._detect(core, prof, t, dt)
        self.final_state = None
        k = spin_substeps(core, dt)
        if k == 1:
            # the step whole, unless its velocity solve spins a body in contact past spin_substep_angle: then
            # it is undone before the bodies move and taken in substeps
            k = self._dynamics(core, dt, prof, time.perf_counter(), turn_check=True)
        core.counters["spin_substeps"] = k
        if k > 1:
            self._substeps(core, dt, k, prof)
        return contacts

    def _substeps(self, core, dt, k, prof) -> None:
        """The step as ``k`` shock steps of dt / k (``spin.spin_substeps``: a body in contact turns more than
        ``spin_substep_angle`` in dt), each with its own detection (or the last substep's final one reused)
        and final correction. The cached impulses are per step: 1 / k of them warm-start the first
        substep, and the last substep's k times are kept for the next step. ``final_penetration``: the
        deepest of the substeps' final detections."""
        h = dt / k
        scale_warm_start(core, self, 1.0 / k)
        # every detection pads by the whole step's reach, dt (|v| + |w| r), not h: the last final detection
        # is the next step's detect(t), and a next step that finds no point there flies free
        # (``_contact_free_step``). Padded by h, a hull turning 0.4 rad a step had its point 0.25 m away
        # dropped and the free step after landed it 94 mm deep
        self.pad_dt = dt
        try:
            self._dynamics(core, h, prof, time.perf_counter())
            deepest = float(core.counters.get("final_penetration", 0.0))
            for _ in range(1, k):
                t = time.perf_counter()
                if self._final_contacts_still_valid(core):
                    stages.refresh_frames(core)
                else:
                    self._detect(core, prof, t, h)
                self.final_state = None
                self._dynamics(core, h, prof, time.perf_counter())
                deepest = max(deepest, float(core.counters.get("final_penetration", 0.0)))
        finally:
            self.pad_dt = None
        scale_warm_start(core, self, float(k))
        core.counters["final_penetration"] = deepest

    def _contact_free(self, core) -> bool:
        """Whether ``fused.contact_free_step`` may take this step: the last step's final detection found no
        point, the reuse key's scalars still hold (the kernel checks the poses), no joint rows, the
        broad phase's steady update applies, and the settings take the staged step's path through it
        (shock propagation, the final correction; no merit history, no per-stage profile)."""
        s = core.settings
        return (self.final_state is not None and not core.contacts.count and not core.joint_layout.row_total
                and not core.profile_stages and s.reuse_final_contacts and s.shock_propagation
                and s.final_correction and s.correction_iterations > 0 and not s.record_merit
                and self.final_state == _scalar_key(core) and core.broad_phase.steady(core.geoms.count))

    def _contact_free_step(self, core, dt, prof, t) -> bool:
        """The step with no contact at its start (``_contact_free``) in one kernel call
        (``fused.contact_free_step``; staged, ~20 kernel calls and their glue: a free box's step took
        157-201 us thread CPU on the loaded 2-core VM, 18-19 us fused, alternating processes; issue 14,
        benchmarks/results/local-2core-amd-epyc/fixed_cost.md). The counters are what the staged stages write with
        no row. When the final detection finds pairs, its narrow phase and correction() follow as
        staged. Returns False when the poses changed since the key (nothing done: the staged step)."""
        b, g, s, bp, hull = core.bodies, core.geoms, core.settings, core.broad_phase, core.hull_arrays
        n = b.count
        outcome, keys, m, added, removed, swaps, pairs, pad, padded, bad, layers = fused.contact_free_step(
            self.key_position, self.key_orientation, self.key_fixed, b.body_position, b.body_orientation,
            b.body_linear_velocity, b.body_angular_velocity, b.body_inv_mass, b.body_inertia_local,
            b.body_inv_inertia_local, b.body_inv_inertia_world, b.body_force, b.body_torque, b.body_fixed, n,
            core.gravity, dt, s.dynamics_fraction, stages.velocity_gyroscopic(s), stages.free_rotation(s),
            s.linear_damping, s.angular_damping, g.geom_body, g.geom_type, g.geom_size, g.geom_local_position,
            g.geom_local_orientation, g.count, s.contact_margin + stages.AABB_TOLERANCE, g.geom_world_position,
            g.geom_world_rotation, g.geom_aabb_min, g.geom_aabb_max, hull.verts, hull.vert_start, hull.vert_count,
            g.geom_hull, g.geom_radius, stages.FAT_FRACTION, stages.FAT_MAX, g.geom_fat_min, g.geom_fat_max,
            core.fat_count == g.count, dt if s.speculative_contacts else 0.0, g.geom_static, *bp.steady_state())
        if outcome == fused.STALE:
            return False
        core.fat_count = g.count
        key, self.final_state = self.final_state, None      # its scalars hold (_contact_free) and the step keeps them
        # what the staged stages write with no row: prepare_rows, solve_dynamics (one sweep, merit 0),
        # the propagation over its one layer (one dynamics and one correction sweep each), no penetration
        r, k = core.rows, core.counters
        r.reserve(1)
        r.count = 0
        core.joint_row_offset = 0
        sweeps = min(int(s.iterations), 1)
        k["joint_rows"] = 0
        k["iterations"], k["merit"], k["rows"] = sweeps, 0.0, 0
        k["layers"], k["layer_sweeps"], k["layer_correction_sweeps"] = int(layers), int(layers) * sweeps, int(layers)
        k["layer_penetration"] = 0.0
        k["spin_substeps"] = 1
        if outcome == fused.FLEW:
            bp.adopt(keys, m, added, removed, swaps)
            # collide_pairs with no pair: this detection's contacts (none) in the other store
            core.contacts, core.contacts_previous = core.contacts_previous, core.contacts
            core.contacts.count = 0
            k["pairs"] = 0
            k["cache_hits"] = 0
            self._carry_layer_impulses(core, 0)
            k["final_penetration"] = 0.0
            k["settle_scaled"] = 0
            core.finished = (bad, 0.0)      # step.finish's check and clearing are done (no contact: depth 0)
            self.final_state = key
            stages.lap(prof, "free_step", t)
            return True
        if outcome == fused.PAIRS:
            bp.adopt(keys, m, added, removed, swaps)
        else:       # a bad box (raises) or a changed owner (re-initialises), as stages.collide
            pairs = bp.update(g.geom_fat_min, g.geom_fat_max, g.geom_body, g.geom_static, g.count)
        t = stages.lap(prof, "free_step", t)
        count = stages.collide_pairs(core, prof, t, s.warm_start, pairs, s.contact_margin, pad if padded else None)
        self._carry_layer_impulses(core, count)
        # the final correction as staged, with the heights of the one layer (fixed 0, dynamic 1)
        height = (~b.body_fixed[:n]).astype(np.int64)
        seen = np.zeros(n + 1, dtype=np.bool_) if s.stop_unseen_contacts else None
        self._final_correction(core, dt, height, np.zeros((n, 3)), np.zeros((n, 3)), prof, t, seen, detected=True)
        return True

    def _dynamics(self, core, dt, prof, t, turn_check=False) -> int:
        """The step after detect(t) (000 Fig. 14). Returns 1, or with ``turn_check`` the substeps the step
        needs (``spin.turn_substeps``: a body of a contact point turns more than ``spin_substep_angle``),
        having undone its velocity stage (the bodies not moved yet)."""
        b, c, r, s = core.bodies, core.contacts, core.rows, core.settings
        n = b.count
        turn_check = turn_check and c.count > 0 and substeps_on(s)
        saved = save_step_start(core, self) if turn_check else None
        joint_rows = core.joint_layout.row_total
        a = s.dynamics_fraction if s.shock_propagation else 1.0
        offset = stages.prepare_rows(core, dt)
        rows = r.count
        # the cache holds impulses per full step (force x dt); the a dt solve starts from a of them, and
        # bounded contact rows (Catto's fixed friction) may apply their force for a dt only; the joint
        # rows are rebuilt for a solve of a dt (motor bounds, soft rows)
        if a < 1.0 and joint_rows:
            stages.write_joint_rows(core, offset, dt, a * dt, s.warm_start)
        r.row_lambda[:rows] *= a
        r.row_lo[:offset] *= a
        r.row_hi[:offset] *= a
        height = np.zeros(n, dtype=np.int64)
        disp_lin = np.zeros((n, 3))
        disp_ang = np.zeros((n, 3))
        start = guard.guard_start(core)
        stages.integrate_velocities(core, a * dt)
        guard.guard_warm(core, rows)
        t = stages.lap(prof, "prepare", t)

        # dynamics(a dt) on the whole system (eq. 45)
        history = np.zeros(s.iterations) if s.record_merit else _EMPTY
        sweeps, merit = solve_dynamics(rows, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_lo,
                                       r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_lambda,
                                       b.body_linear_velocity, b.body_angular_velocity, s.iterations, s.tolerance,
                                       s.cfm, height, history)
        accumulate_displacement(b.body_fixed, n, b.body_linear_velocity, b.body_angular_velocity, a * dt, disp_lin,
                                disp_ang)
        guard.guard_solved(core, start, a * dt)
        flow_ang = disp_ang.copy()     # the a dt u_1 rotation: the corrections' part is told apart at the end
        lam_step = r.row_lambda[:rows].copy()    # impulses of the whole step: a dt now, (1 - a) dt added below
        r.row_lambda[:rows] *= 1.0 / a
        store_contact_impulses(c.count, 0, r.row_J, r.row_lambda, c.contact_normal_impulse,
                               c.contact_friction_impulse)
        stages.solve_counters(core, sweeps, merit, history)
        t = stages.lap(prof, "solve", t)

        lam = np.empty(rows)
        lam_c = np.empty(rows)
        h = (1.0 - a) * dt
        tree = _joint_tree(core)
        if s.shock_propagation:
            worst, t = self._propagate(core, dt, a, h, offset, rows, height, lam, lam_c, lam_step, disp_lin,
                                       disp_ang, prof, t, tree)
        else:
            core.counters["layers"] = 1
            worst, _ = correction(rows, height, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_kind,
                                  r.row_owner, _correction_target(c, s), 0.0, r.row_group, r.row_cfm,
                                  _joint_targets(core, rows, dt), lam_c, disp_lin, disp_ang,
                                  s.correction_iterations, s.correction_tolerance, s.correction_max_turn,
                                  CORRECTION_TURN_WEIGHT)
        if turn_check:
            k = turn_substeps(core, flow_ang, h)
            if k > 1:
                restore_step_start(core, self, saved)
                return k
        # the velocity flow (a dt u_1 + (1 - a) dt u_2) and the corrections' rotation applied apart: the
        # corrections as a pure position change that keeps each body's kinetic energy
        apply_step_displacement(b.body_position, b.body_orientation, b.body_angular_velocity, b.body_inertia_local,
                                b.body_inv_inertia_local, b.body_fixed, n, disp_lin, disp_ang, flow_ang,
                                h, dt, stages.free_rotation(s))
        # warm start of the a dt solve: its per-step impulse; reactions: the whole step's impulses
        stages.finish_joints(core, offset, r.row_lambda, dt, lam_step)
        core.counters["layer_penetration"] = float(worst)
        t = stages.lap(prof, "shock", t)
        guard.guard_flowed(core, start, h)
        if joint_rows:
            # the limits' passes here without the second tree pass: the final projection below closes
            # what they leave (10 ragdolls, 2.5 s, CPU ms/step interleaved: 13.8 against 14.4 with it,
            # largest joint error 0.24 against 0.98 um)
            _project_joints(core, dt, tree, close_tree=False)
            t = stages.lap(prof, "joints", t)

        if s.final_correction and s.correction_iterations > 0:
            seen = None
            if s.stop_unseen_contacts:     # bodies with a contact row in this step's dynamics
                seen = np.zeros(n + 1, dtype=np.bool_)
                seen[r.row_body[:offset].ravel()] = True     # index -1 (a fixed side) marks the spare slot
            self._final_correction(core, dt, height, disp_lin, disp_ang, prof, t, seen, tree=tree)
            if joint_rows and s.joint_aware_correction:
                # the joint projection once more, at the corrected poses: the linear correction leaves
                # part of a joint's error (its rows are linearised, its sweeps few); the final contacts
                # are then no longer those of these poses, so the next step detects afresh. Measured on
                # 20 ragdolls (6 s) while the correction asked -C of the joints: largest joint error
                # 32.5 mm without this pass, 9.6 mm with it; with the targets 0 used now, 26 mm
                t = time.perf_counter()
                _project_joints(core, dt, tree)
                self.final_state = None
                stages.lap(prof, "joints", t)
        if tree is not None and s.close_joint_loops:
            loops = stages.closable_loops(core, tree)
            if len(loops):
                # a loop of joints: the velocities onto the joints' rows at the step's end poses, exactly
                # (a loopless tree has _settle_joints in the final correction): the velocity the projections
                # did not pay for removed (without it the bridge gained 48 J above its start in 0.1 s)
                t = time.perf_counter()
                _settle_loops(core, dt, tree, loops)
                stages.lap(prof, "joints", t)
        guard.guard_lifted(core, dt, start, disp_lin if s.final_correction and s.correction_iterations > 0 else None)
        return 1

    def _propagate(self, core, dt, a, h, offset, rows, height, lam, lam_c, lam_step, disp_lin, disp_ang, prof, t,
                   tree=None):
        """Shock propagation (Fig. 12): dynamics((1 - a) dt) and correction() layer by layer, bottom-up,
        the bottom of each layer fixated. Returns (the worst penetration a layer saw, the time)."""
        b, c, r, s, js = core.bodies, core.contacts, core.rows, core.settings, core.joint_store
        # "incremental": the targets are taken layer by layer inside the propagation
        # (kernels.layer_row_targets), from the bases' velocities as their own layer left them
        collision_speed = float(s.layer_collision_speed) if s.layer_targets == "incremental" else -1.0
        t = stages.lap(prof, "graph", t)
        stages.integrate_velocities(core, h)
        if tree is not None and s.close_joint_loops:
            loops = stages.closable_loops(core, tree)
            if len(loops):
                # a loop of joints: the velocities with gravity's (1 - a) dt onto the joints' rows, exactly,
                # before the layers' Gauss-Seidel sweeps, which hold a loop of n joints about one joint per
                # sweep (the bridge sagged ~2 mm a step in velocity and the projection lifted it back:
                # +0.39 J above its start energy in the first 0.1 s with the end-of-step projection alone,
                # 0.0075 J with this one too)
                _settle_loops(core, dt, tree, loops)
        # the layer impulses are cached per full step like the others; this solve spans (1 - a) dt
        if self.joint_layer_impulse.shape[0] < js.count:     # joints added since: their impulses start at 0
            grown = np.zeros((js.capacity, JOINT_MAX_ROWS))
            grown[: self.joint_layer_impulse.shape[0]] = self.joint_layer_impulse
            self.joint_layer_impulse = grown
        warm = (1.0 - a) if s.warm_start else 0.0
        load_layer_impulses(c.count, r.row_J, self.contact_layer_impulse, warm, lam)
        load_joint_impulses(js.count, js.joint_active, js.joint_row_start, js.joint_row_count, offset,
                            self.joint_layer_impulse, warm, lam)
        if warm and s.layer_warm_start < 1.0 and offset:
            # the contact rows start from this share of their cached layer impulse; joint rows from all
            # of theirs. Contact loops (bodies wedged between others and fixed walls, ragdolls lying
            # across each other) carry impulses that cancel on every body; the warm start kept them and
            # the sweeps fed them step after step until the balance broke: 10 ragdolls reached normal
            # impulses of 1000-3800 N s on a 7 kg torso, then +4.5 kJ in one step, and pile1000
            # churned at ~3 kJ. Starting the contacts from 0 (Fig. 12) ends both
            lam[:offset] *= s.layer_warm_start
        guard.guard_warm(core, rows, lam)
        r.row_lo[:offset] *= (1.0 - a) / a
        r.row_hi[:offset] *= (1.0 - a) / a
        if core.joint_layout.row_total:   # joint rows for the (1 - a) dt solve; the a dt impulses are kept
            kept = r.row_lambda[offset:rows].copy()
            stages.write_joint_rows(core, offset, dt, h, False)
            r.row_lambda[offset:rows] = kept
        (layers, layer_height, row_block, layer_row_start, layer_rows, layer_inv_diag, layer_body_start,
         layer_bodies, total, row_body, _) = self._layers_of(core, r.row_body, rows, rest_order=s.layer_rest_order)
        height[:] = layer_height        # the caller's array: the final correction fixates by these heights
        core.counters["layers"] = int(layers)
        core.counters["ahead_copies"] = total - rows
        if total > rows:                # the ahead copies' rows (``_layers_of``) start from 0
            lam = np.concatenate((lam, np.zeros(total - rows)))
            lam_c = np.empty(total)
        # the layers' blocks run in parallel only in big scenes (waking the threads costs more than a
        # small scene's layers; the result does not depend on the thread count)
        propagate = shock_propagation if c.count >= stages.PARALLEL_MIN_CONTACTS else shock_propagation.serial
        worst, layer_sweeps, layer_corrections = propagate(
            layers, layer_row_start, layer_rows, layer_body_start, layer_bodies, height, row_body, r.row_J, r.row_B,
            layer_inv_diag, r.row_bias[:total].copy() if collision_speed >= 0.0 else r.row_bias, r.row_lo, r.row_hi,
            r.row_link, r.row_mu, r.row_cfm, r.row_group,
            r.row_kind, r.row_owner, _correction_target(c, s), 0.0, _joint_targets(core, rows, h), lam, lam_c,
            b.body_linear_velocity, b.body_angular_velocity,
            disp_lin, disp_ang, h, s.iterations, s.correction_iterations, s.cfm, s.tolerance, s.correction_tolerance,
            row_block, s.block_iterations, s.block_tolerance, collision_speed, r.row_bias, s.correction_max_turn,
            CORRECTION_TURN_WEIGHT)
        core.counters["layer_sweeps"] = int(layer_sweeps)
        core.counters["layer_correction_sweeps"] = int(layer_corrections)
        scale = 1.0 / (1.0 - a) if a < 1.0 else 0.0
        store_layer_impulses(c.count, r.row_J, lam, scale, self.contact_layer_impulse)
        store_joint_impulses(js.count, js.joint_active, js.joint_row_start, js.joint_row_count, offset, lam, scale,
                             self.joint_layer_impulse)
        lam_step[offset:] += lam[offset:rows]
        return worst, t

    def _final_correction(self, core, dt, height, disp_lin, disp_ang, prof, t, seen=None, detected=False,
                          tree=None):
        """detect(t + dt) (unless ``detected``: done by the caller) and correction() on the new contacts
        (the last two lines of Fig. 14)."""
        b, r, s = core.bodies, core.rows, core.settings
        n = b.count
        if not detected:
            self._detect(core, prof, t, dt)
        t = time.perf_counter()
        c = core.contacts
        joint_rows = core.joint_layout.row_total if s.joint_aware_correction else 0
        r.reserve(c.count + joint_rows + 1)
        prepare = prepare_normal_rows if c.count >= stages.PARALLEL_MIN_CONTACTS else prepare_normal_rows.serial
        r.count = prepare(c.count, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal,
                                      b.body_position, b.body_inv_mass, b.body_inv_inertia_world, b.body_fixed,
                                      r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_kind, r.row_owner)
        if joint_rows:
            # the joint rows at the poses after the step (frames refreshed by the detection), after the
            # contacts' normal rows: the projection moves a jointed group as one (correction_sweep)
            stages.joint_coordinates(core)
            # targets 0 (fraction 0): the correction keeps each joint's error as it is, the joint projection
            # after it closes it. Measured: asking -C here instead (fraction 1, the linearised closure) tore
            # chain50 to 105 mm (21 mm at 0; 29 mm before issue 18): the linear step lifted the swinging
            # links against their velocity, as joint_correction_fraction's note describes
            stages.write_joint_rows(core, c.count, dt, dt, False, fraction=0.0)
            r.count = c.count + joint_rows
            core.joint_row_offset = c.count
        disp_lin[:] = 0.0
        disp_ang[:] = 0.0
        lam_c = np.empty(r.count)
        target = _correction_target(c, s)
        tree = self._factor_final_tree(core, tree, c.count) if joint_rows and s.final_joint_tree else None
        if tree is not None:
            group = r.row_group[: r.count].copy()
            mark_tree_rows(tree.count, tree.kind, tree.ref, core.joint_store.joint_type,
                           core.joint_store.joint_row_start, c.count, group)
            group[group < 0] = 0         # the tree's rows: solved by tree_sweep, skipped by the sweeps
            worst, _ = tree_correction(r.count, height, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_kind,
                                       r.row_owner, target, 0.0, group, r.row_cfm,
                                       _joint_targets(core, r.count, dt, c.count), lam_c, disp_lin, disp_ang,
                                       max(s.correction_iterations, TREE_CORRECTION_SWEEPS), s.correction_tolerance,
                                       tree.count, tree.kind,
                                       tree.ref, tree.parent, core.joint_store.joint_type,
                                       core.joint_store.joint_row_start, c.count, tree.D_fac, tree.F, tree.H_diag,
                                       tree.refine, tree.y, tree.x, tree.z, TREE_CORRECTION_MAX_TURN)
        else:
            worst, _ = correction(r.count, height, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_kind,
                                  r.row_owner, target, 0.0, r.row_group, r.row_cfm,
                                  _joint_targets(core, r.count, dt, c.count) if joint_rows else _EMPTY, lam_c,
                                  disp_lin, disp_ang, s.correction_iterations, s.correction_tolerance,
                                  s.correction_max_turn, CORRECTION_TURN_WEIGHT)
        if s.layered_final_correction_depth < math.inf and r.count:
            left = correction_residual(c.count, r.row_body, r.row_J, target, 0.0, disp_lin, disp_ang)
            if left > s.layered_final_correction_depth:
                # the whole-system sweeps left a contact this deep: the same projection once more, layer by
                # layer over the final contacts' stack layers with each layer's bottom fixated (Fig. 12 with
                # A = correction(), as inside the step), from the displacement reached. Why: 5 Gauss-Seidel
                # sweeps of eq. 46 on a 32 kg brick under the 16 t block in tower_roof move the block by
                # 1/500 of the brick's push, and the brick stayed 21-23 cm inside the ground (000 Fig. 13:
                # "the correction completely fails to converge without shock propagation")
                rows = r.count
                L = self._layers_of(core, r.row_body, rows, copies=False)    # a projection: no ahead copies
                lam_l = np.zeros(rows)
                propagate = (shock_propagation if c.count >= stages.PARALLEL_MIN_CONTACTS
                             else shock_propagation.serial)
                w2, _, _ = propagate(
                    L[0], L[3], L[4], L[6], L[7], L[1], r.row_body, r.row_J, r.row_B, L[5], _EMPTY_ROWS(rows),
                    r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_kind, r.row_owner, target,
                    0.0, _joint_targets(core, rows, dt, c.count) if joint_rows else _EMPTY, np.zeros(rows), lam_l,
                    b.body_linear_velocity, b.body_angular_velocity, disp_lin, disp_ang, 0.0, 0,
                    s.correction_iterations, 0.0, s.tolerance, s.correction_tolerance, L[2], 1, 0.0, -1.0, _EMPTY,
                    s.correction_max_turn, CORRECTION_TURN_WEIGHT)
                np.maximum(lam_c, lam_l, out=lam_c)     # the rows either pass pushed: the settle pass's set
        # a pure position correction: a body it turns keeps its body-frame w, so its kinetic energy
        # (with the world w kept, a spinning body's 1/2 w^T I(q) w changed with the turn; issue 17)
        correct_bodies(n, b.body_fixed, disp_lin, disp_ang, b.body_position, b.body_orientation,
                       b.body_angular_velocity)
        core.counters["final_penetration"] = float(worst)
        if seen is not None and r.count:
            # the contacts of bodies the velocity solve did not see: stop their approach (projection
            # alone moves them out and leaves the velocity, which then grows under gravity each step)
            unseen = np.empty(c.count, dtype=np.bool_)
            if fused.unseen_contacts(c.count, r.row_body, seen, unseen):
                stop_approach(c.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, unseen, c.contact_restitution,
                              s.restitution_threshold, b.body_linear_velocity, b.body_angular_velocity, s.iterations)
        core.counters["settle_scaled"] = 0
        core.counters["settle_joint_sweeps"] = 0
        if s.settle_pushed_contacts and r.count:
            self._settle(core, lam_c, c.count, joint_rows)
        if tree is not None:
            self._settle_joints(core, tree, lam_c, c.count, joint_rows)
        moved = fused.largest_displacement(n, disp_lin, disp_ang) if n else 0.0
        if s.reuse_final_contacts and moved <= s.reuse_max_correction:
            # depth after the correction, to first order: depth - J_n disp (the rows are the normals)
            update_depths(c.count, r.row_body, r.row_J, disp_lin, disp_ang, c.contact_depth)
            self.final_state = self._save_key(core)
        stages.lap(prof, "correction", t)

    def _layers_of(self, core, row_body, rows, copies=True, rest_order=False):
        """The stack layers (000 §4) of the rows ``row_body[:rows]`` at the current rows' Jacobians: heights
        (``articulated_heights``; shared by ``_propagate`` and ``_settle``), the ahead copies and
        ``build_layers``' arrays, as the arguments ``shock_propagation`` takes them: (layers, height,
        row_block, layer_row_start, layer_rows, layer_inv_diag, layer_body_start, layer_bodies, total,
        row_body, copy_of).

        Ahead copies (``ShockSettings.layer_ahead_copies``, ``kernels.count_ahead_copies``): every contact
        row between bodies of two heights (but the rows of a body resting on the lower one, and the rows
        of impacts: closing faster than ``layer_ahead_max_speed`` at the current velocities, or of a
        body with such a row) is copied, seen from the lower side only (the higher one a static
        obstacle), into rows ``rows:total`` of ``core.rows`` (grown if needed), so a body meets the
        neighbours of later layers in its own layer. ``row_body`` returned is the one to pass on:
        ``core.rows.row_body`` when that was given, else the given rows followed by the copies' (``_settle``
        masks rows in a copy of its own). ``copy_of`` (rows,): the copy's index per row, -1 for none."""
        b, r, s = core.bodies, core.rows, core.settings
        n = b.count
        g = np.asarray(core.gravity, dtype=np.float64)
        gn = float(np.linalg.norm(g))
        up = -g / gn if gn > 0.0 and s.root_support_cos > -1.0 else np.zeros(3)
        gravity_up = -g / gn if gn > 0.0 else np.zeros(3)
        height = np.zeros(n, dtype=np.int64)
        layers = articulated_heights(rows, row_body, r.row_kind, r.row_J, up, s.root_support_cos, n, b.body_fixed,
                                     height)
        if rest_order and gn > 0.0:
            layers = rest_order_heights(rows, row_body, r.row_kind, r.row_J, gravity_up, s.root_support_cos, n,
                                        b.body_fixed, b.body_position, height)
        copy_of = np.full(rows, -1, dtype=np.int64)
        extra = 0
        if copies and s.layer_ahead_copies and layers > 1:
            extra = count_ahead_copies(rows, row_body, r.row_kind, r.row_link, r.row_J, height, gravity_up,
                                       float(s.layer_ahead_min_push), b.body_linear_velocity, b.body_angular_velocity,
                                       float(s.layer_ahead_max_speed), np.empty(n, dtype=np.bool_), copy_of)
        total = rows + extra
        if extra:
            shared = row_body is r.row_body
            r.reserve(total)
            write_ahead_copies(rows, copy_of, height, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias,
                                 r.row_bias_relax, r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_kind,
                                 r.row_lambda, r.row_owner, r.row_cfm, r.row_group)
            if shared:
                row_body = r.row_body
            else:
                row_body = np.concatenate((row_body[:rows], r.row_body[rows:total]))
        row_layer = np.empty(total, dtype=np.int64)
        row_block = np.empty(total, dtype=np.int64)
        layer_row_start = np.empty(layers + 1, dtype=np.int64)
        layer_rows = np.empty(total, dtype=np.int64)
        layer_inv_diag = np.empty(total)
        layer_body_start = np.empty(layers + 1, dtype=np.int64)
        layer_bodies = np.empty(n, dtype=np.int64)
        build_layers(total, row_body, r.row_J, r.row_B, height, n, b.body_fixed, layers, row_layer, row_block,
                     layer_row_start, layer_rows, layer_inv_diag, layer_body_start, layer_bodies)
        return (layers, height, row_block, layer_row_start, layer_rows, layer_inv_diag, layer_body_start,
                layer_bodies, total, row_body, copy_of)

    def _settle(self, core, lam_c, contacts, joint_rows):
        """The velocity the final correction did not pay for, removed [tumble, issue 18].

        correction() (000 eq. 46) moves positions only. Where it pushed two bodies apart (lambda_c > 0)
        their approach along that normal is left in the velocities: a body held up by the projection
        (jammed between overlaps, pushed out of the ground each step) keeps falling in velocity, and
        when the jam resolves the speed is there with no fall that paid for it (a 29 m sphere resting
        on a unit sphere buried in the ground: +251 J beyond the fuzz's bound in two steps at 240 Hz;
        a jointed group lifted 14 cm out of the ground kept its 1.35 m/s fall). So the pushed contacts'
        normal rows get one more velocity solve, J v >= 0 with lambda >= 0 (an inelastic stop, no
        bias: every row update toward a target <= 0 lowers the kinetic energy), together with the
        joints' equality and limit rows (a jointed body stopped without its neighbours would keep
        them falling), solved as dynamics(0) layer by layer over the stack layers of these rows alone
        (``shock_propagation`` with h = 0 and no correction sweeps): the heavy body on a light one
        fixated under it stops in one block, where Gauss-Seidel on the whole jam converges at the mass
        ratio (1 : 25 000 in that world). The targets are the "incremental" layer targets
        (``kernels.layer_row_targets``) whatever ``layer_targets`` says, so a fixated base moving into the
        body above stops that body's own approach without launching it."""
        b, r, s = core.bodies, core.rows, core.settings
        n = b.count
        rows = r.count
        keep = np.zeros(rows, dtype=np.bool_)
        keep[:contacts] = lam_c[:contacts] > 0.0
        if not keep.any():
            return
        if joint_rows:
            kind = r.row_kind[contacts:rows]
            keep[contacts:rows] = (((kind == T.ROW_JOINT) | (kind == T.ROW_LIMIT))
                                   & (r.row_cfm[contacts:rows] == 0.0))
        row_body = r.row_body[:rows].copy()
        row_body[~keep] = -1           # a row between two fixed sides: no edge, no layer
        r.row_lo[:contacts] = 0.0
        r.row_hi[:contacts] = np.inf
        r.row_link[:contacts] = -1
        r.row_mu[:contacts] = 0.0
        r.row_cfm[:contacts] = 0.0
        r.row_group[:contacts] = 1
        bias = np.zeros(rows)
        bias[contacts:rows] = r.row_bias[contacts:rows]
        (layers, height, row_block, layer_row_start, layer_rows, layer_inv_diag, layer_body_start, layer_bodies, total,
         row_body, _) = self._layers_of(core, row_body, rows)
        if total > rows:                # the ahead copies: contact rows, target 0
            bias = np.concatenate((bias, np.zeros(total - rows)))
        lam = np.zeros(total)
        scratch = np.zeros(total)
        disp = np.zeros((n, 3))
        v_lin0 = b.body_linear_velocity[:n].copy()
        v_ang0 = b.body_angular_velocity[:n].copy()
        propagate = shock_propagation if contacts >= stages.PARALLEL_MIN_CONTACTS else shock_propagation.serial
        propagate(layers, layer_row_start, layer_rows, layer_body_start, layer_bodies, height, row_body, r.row_J,
                  r.row_B, layer_inv_diag, bias.copy(), r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_cfm,
                  r.row_group, r.row_kind, r.row_owner, core.contacts.contact_depth, 0.0, _EMPTY, lam, scratch,
                  b.body_linear_velocity, b.body_angular_velocity, disp, disp, 0.0, s.iterations, 0, 0.0,
                  s.tolerance, s.correction_tolerance, row_block, s.block_iterations, s.block_tolerance,
                  float(s.layer_collision_speed), bias)
        core.counters["settle_scaled"] = int(no_energy_gain(n, b.body_fixed, b.body_mass, b.body_orientation,
                                                            b.body_inertia_local, v_lin0, v_ang0,
                                                            b.body_linear_velocity, b.body_angular_velocity))

    def _factor_final_tree(self, core, tree, contacts):
        """The joint tree of the final correction and the settle (``ShockSettings.final_joint_tree``),
        factored at the final correction's joint rows (from row ``contacts`` on) in the kinetic metric;
        ``tree``: this step's (``_joint_tree``), built here when the tree projection is off. None when
        no joint is in a tree or a joint closes a loop (as ``_joint_tree``)."""
        b, js = core.bodies, core.joint_store
        if tree is not None and _has_loop(core, tree):
            # a loop (``close_joint_loops``): the velocities are projected on the loop's and the tree's
            # rows at the step's end instead (``_settle_loops``)
            return None
        if tree is None:
            tree = _loopless_tree(core)
            if tree is None:
                return None
        # springs are no position constraints: an enormous compliance keeps their multipliers at zero
        spread = factor_tree(tree.count, tree.kind, tree.ref, tree.parent, tree.side, js.joint_type,
                             js.joint_row_start, contacts, core.rows.row_J, core.rows.row_cfm, b.body_mass,
                             b.body_inv_inertia_world, 1e200, tree.D, tree.D_fac, tree.F, tree.H_diag)
        tree.refine = joint_tree.REFINE_STEPS if spread > joint_tree.REFINE_SPREAD else 0
        return tree

    def _settle_joints(self, core, tree, lam_c, contacts, joint_rows):
        """The joints' velocity settle (``ShockSettings.final_joint_tree``, ``kernels.settle_joint_tree``)
        on the final correction's rows and the factored ``tree`` (``_factor_final_tree``): the tree
        joints' equality rows solved exactly, with the pushed contacts' normal rows (lambda_c > 0, as
        ``_settle`` takes them) and the joints' limit rows by Gauss-Seidel."""
        b, r, s, js = core.bodies, core.rows, core.settings, core.joint_store
        rows = contacts + joint_rows
        group = np.zeros(rows, dtype=np.int64)      # 0: not swept
        group[:contacts][lam_c[:contacts] > 0.0] = 1
        kind = r.row_kind[contacts:rows]
        limit = (kind == T.ROW_LIMIT) & (r.row_cfm[contacts:rows] == 0.0)
        group[contacts:rows][limit] = 1
        bias = np.zeros(rows)
        bias[contacts:rows][limit] = np.minimum(r.row_bias[contacts:rows][limit], 0.0)
        lo = r.row_lo[:rows].copy()
        hi = r.row_hi[:rows].copy()
        lo[:contacts] = 0.0
        hi[:contacts] = np.inf
        link = r.row_link[:rows].copy()
        link[:contacts] = -1
        sweeps, scaled = settle_joint_tree(
            rows, r.row_body, r.row_J, r.row_B, r.row_inv_diag, bias, lo, hi, link, r.row_mu, r.row_cfm, group,
            tree.count, tree.kind, tree.ref, tree.parent, js.joint_type, js.joint_row_start, contacts, tree.D_fac,
            tree.F, tree.H_diag, tree.refine, tree.y, tree.x, tree.z, b.count, b.body_fixed, b.body_mass,
            b.body_orientation, b.body_inertia_local, b.body_linear_velocity, b.body_angular_velocity, s.iterations,
            s.tolerance)
        core.counters["settle_joint_sweeps"] = int(sweeps)
        core.counters["settle_scaled"] += int(scaled)


def _EMPTY_ROWS(rows):
    """Zero velocity targets for a propagation that runs no dynamics sweeps (read by none)."""
    return np.zeros(rows)


def _correction_target(c, s):
    """Per contact, how far correction() must separate the points: depth - slop, at most
    ``max_correction`` per step (a deep overlap is undone over several steps)."""
    return np.minimum(c.contact_depth[: c.count] - s.correction_slop, s.max_correction)


def _joint_targets(core, rows, h, offset=None):
    """Per row, the position target of the joint rows in correction() (``kernels.correction_sweep``):
    the rows' velocity targets zeta times the span h of the solve they were built for, so zeta h is
    the displacement the velocity solve asked for: 0 on an equality row without Baumgarte feedback
    (the correction leaves the joint error as it is; the joint projection closes it), the gap of a
    limit row not reached (the correction may close it, no more), 0 on a violated limit (no further).
    Empty (contact rows only, the paper's correction) without joint rows or with
    ``joint_aware_correction`` off."""
    s = core.settings
    if not core.joint_layout.row_total or not s.joint_aware_correction:
        return _EMPTY
    off = core.joint_row_offset if offset is None else offset
    target = np.zeros(rows)
    target[off:rows] = core.rows.row_bias[off:rows] * h
    return target


def _joint_tree(core):
    """The joint tree of this step (``dynamics.joints.tree.JointTree``, built from the core state as
    pgs builds it) for the tree projection (``ShockSettings.joint_tree_projection``); None without
    joints, with the setting off, when no joint is in a tree, or when a joint closes a loop that the
    projection does not close exactly: ``close_joint_loops`` off, or more than
    ``stages.LOOP_ROWS_MAX`` loop rows (``stages.closable_loops``). Why: a loop joint left to the capped
    Gauss-Seidel passes after the tree's Newton steps moved its bodies grew its error on ``bridge``
    (a plank chain held by the world at both ends) to 122 mm (9.6 mm with the passes alone)."""
    if not core.joint_layout.row_total or not core.settings.joint_tree_projection:
        return None
    if not core.settings.close_joint_loops:
        return _loopless_tree(core)
    tree = JointTree(core)
    if not tree.count or (_has_loop(core, tree) and not len(stages.closable_loops(core, tree))):
        return None
    return tree


def _has_loop(core, tree) -> bool:
    """Whether an active joint is outside ``tree`` (closes a loop)."""
    js = core.joint_store
    return bool((js.joint_active[: js.count] & ~tree.in_tree).any())


def _loopless_tree(core):
    """``JointTree(core)``, or None when no joint is in it or an active joint closes a loop."""
    tree = JointTree(core)
    if not tree.count or _has_loop(core, tree):
        return None
    return tree


def _settle_loops(core, dt, tree, loops):
    """``joint_tree.settle_loop_velocities`` on the core state (frames refreshed first): the velocities
    projected onto the equality rows of the tree's joints and the ``loops`` in the kinetic metric."""
    b, js = core.bodies, core.joint_store
    stages.refresh_frames(core)
    stages.joint_coordinates(core)
    joint_tree.settle_loop_velocities(
        tree.count, tree.kind, tree.ref, tree.parent, tree.side, js.joint_type, js.joint_body, js.joint_anchor,
        js.joint_axis, js.joint_ref, js.joint_rel_q, js.joint_length, js.joint_soft, js.joint_has_limits,
        js.joint_limit, js.joint_motor_mode, js.joint_motor, js.joint_row_start, core.joint_layout.row_total,
        js.joint_impulse, js.joint_coord, js.joint_lever, b.body_position[: b.count], b.body_orientation,
        b.body_mass, b.body_inv_mass, b.body_inertia_local, b.body_inv_inertia_world, b.body_fixed,
        b.body_linear_velocity, b.body_angular_velocity, dt, loops)


def _project_joints(core, dt, tree, close_tree=True):
    """``_project_joints_positions`` and, with ``ShockSettings.stop_undone_joint_motion``, the velocity
    the projection undid removed (``undone.stop_undone_motion``, moves over ``UNDONE_MIN_MOVE``)."""
    s, b = core.settings, core.bodies
    if not s.stop_undone_joint_motion:
        _project_joints_positions(core, dt, tree, close_tree)
        return
    n = b.count
    before = b.body_position[:n].copy()
    _project_joints_positions(core, dt, tree, close_tree)
    v0 = b.body_linear_velocity[:n].copy()
    if stop_undone_motion(n, b.body_fixed, before, b.body_position, dt, UNDONE_MIN_MOVE, UNDONE_MIN_COS,
                          b.body_linear_velocity):
        js, c = core.joint_store, core.contacts     # a free group's stops keep its momentum
        keep_free_momentum(n, b.body_fixed, b.body_mass, b.body_position, b.body_orientation, b.body_inertia_local,
                           js.count, js.joint_active, js.joint_body, c.count, c.contact_body_a, c.contact_body_b, v0,
                           b.body_linear_velocity, b.body_angular_velocity)


#: [m] a joint projection's move below this leaves the body's velocity as it is (``stop_undone_motion``):
#: far above the projection's tolerance (1e-6 m); the deck's moves it is for were 23-24 mm (other values not
#: measured)
UNDONE_MIN_MOVE = 1e-3
#: the move must point back against the velocity within acos(this) (45 degrees)
UNDONE_MIN_COS = 0.7


def _project_joints_positions(core, dt, tree, close_tree=True):
    """``stages.project_joints`` with shock's tree projection: Newton steps of the exact tree solve
    in the metric diag(m, I / w), w = ``joint_projection_angular_weight`` (translations preferred:
    whole 1/60 s steps leave centimetre gaps that the kinetic metric closes by turning thin links
    past its linearisation), then the Gauss-Seidel passes over the limited joints and (``close_tree``)
    the Newton steps again; without a tree the passes over every joint [tumble, issue 18]."""
    stages.project_joints(core, dt, tree, core.settings.joint_projection_angular_weight, close_tree=close_tree,
                          close_loops=core.settings.close_joint_loops)


def _scalar_key(core):
    """What must be unchanged, besides the bodies' poses and fixed flags (``ShockSolver.key_position``,
    ...), for the contacts of the last detection to serve the next step."""
    return (core.bodies.count, core.geoms.count, core.settings.contact_margin, core.joint_layout.version)
