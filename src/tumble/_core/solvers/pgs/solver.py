"""The pgs step (Catto 001): rows from contacts, v += dt M^-1 F_ext, PGS (Alg. 4), x += dt v,
relax sweeps, impulses cached for the next step's warm start, joint projection."""

from __future__ import annotations

import math
import time

import numpy as np

from tumble._core import stages
from tumble._core.contact.rows import (
    ROW_TURN_TOLERANCE,
    contact_reach,
    refresh_turned_rows,
    split_deep_rows,
    store_contact_impulses,
)
from tumble._core.dynamics.integrate import guard_pushed_bodies, pushed_start
from tumble._core.dynamics.joints import tree as joint_tree
from tumble._core.dynamics.joints.rows import load_joint_impulses
from tumble._core.dynamics.joints.tree import JointTree
from tumble._core.rows import PAIR_COLUMNS, repack_changed_rows
from tumble._core.solvers.pgs.fused_step import contact_step, contact_substep_step
from tumble._core.solvers.pgs.joint_step import joint_tree_step
from tumble._core.solvers.pgs.kernels import (
    accumulate_displacement,
    contact_joint_substeps,
    contact_substeps,
    forget_turned_rows,
    joint_substeps,
    manifold_starts_of,
    mark_turned_bodies,
    pseudo_correction,
    relax_pgs,
    relax_pgs_blocks,
    relax_pgs_pairs,
    solve_pgs,
    solve_pgs_blocks,
    solve_pgs_pairs,
    solve_with_tree,
    split_correction,
    substep_contact_targets,
    tree_inputs_unchanged,
)
from tumble._core.solvers.pgs.settings import PGSSettings
from tumble._core.solvers.protocol import Capabilities, Solver
from tumble._core.types import FRICTION_COULOMB, FRICTION_FIXED, JOINT_BASE_ROWS

_EMPTY = np.zeros(0)

#: [s] the longest (sub)step h = dt / substeps on which the joint tree solve is used; longer ones keep
#: every joint row in the sweeps. Measured on chain50 at dt 1/60 (10 s, final link stretch with the
#: tree): h 1/60 1900 % (torn), 1/120 29 %, 1/180 1.7 %, 1/240 0.000 %: the exact solve keeps the
#: chain's whip, and past h ~ 1/200 s one step's position error outgrows the linearised projection;
#: the sweeps' damping holds the same chain at 21 % with h = 1/60.
TREE_MAX_SUBSTEP = 1.0 / 240.0 + 1e-12
_EMPTY_INT = np.zeros(0, dtype=np.int64)
_NO_DISP = np.zeros((0, 3))


class _NoTree:
    """The joint tree's arrays for a kernel call without a tree (never read)."""
    count = 0
    kind = ref = parent = side = np.zeros(1, dtype=np.int64)
    D = D_fac = F = H_diag = np.zeros((1, 6, 6))
    y = x = z = np.zeros((1, 6))


_NO_TREE = _NoTree()
#: [m] how far a body's rotation may have moved its contact points since the step's contact rows were
#: built (|theta| times its longest lever arm) before a substep solves its contacts from zero impulses
#: instead of warm-starting them with the last substep's (``kernels.mark_turned_bodies``,
#: ``substep_contact_targets``; issue 17). Measured (pgs defaults): the library scenes' bodies move their
#: points at most 0.26 m in a step (ragdolls; tower_roof 0.12, soli3000 and cow_pile 0.10, the others
#: below 0.06 m; 2 s each), so none of them is cold-started; the fuzz's plates and capsules that gained
#: energy with every substep warm-started (FAST_SPIN_CASES) keep the bound with any value up to 2 m
#: (their levers move 1.5 m per substep)
TURN_TOLERANCE = 0.5


_NO_PUSHED = np.zeros(0, dtype=np.bool_)


class _PushedGuard:
    """The energy guard of the bodies the pseudo-velocity pass moves (``PGSSettings.pushed_energy_guard``,
    ``integrate.guard_pushed_bodies``): ``start`` before a (sub)step's velocity update, the pass marks
    ``pushed``, ``apply`` after its relax sweeps."""

    def __init__(self, core):
        n = core.bodies.count
        self.pushed = np.zeros(n, dtype=np.bool_)
        self.x0 = np.empty((n, 3))
        self.v_lin0 = np.empty((n, 3))
        self.w_body0 = np.empty((n, 3))
        self.start(core)

    def start(self, core):
        b = core.bodies
        pushed_start(b.count, b.body_fixed, b.body_position, b.body_orientation, b.body_linear_velocity,
                     b.body_angular_velocity, self.x0, self.v_lin0, self.w_body0)

    def apply(self, core, h):
        b = core.bodies
        guard_pushed_bodies(b.count, b.body_fixed, self.pushed, b.body_mass, b.body_inertia_local, core.gravity,
                            b.body_force, b.body_torque, h, self.x0, self.v_lin0, self.w_body0, b.body_position,
                            b.body_orientation, b.body_linear_velocity, b.body_angular_velocity)


def manifold_starts(c) -> np.ndarray:
    """(m + 1,) the first contact of each manifold (a run of one shape pair's points: the contact
    store is sorted by pair key) and the contact count last (``kernels.manifold_starts_of``)."""
    return manifold_starts_of(c.count, c.contact_key)


class PGSSolver(Solver):
    name = "pgs"
    description = ("projected Gauss-Seidel / sequential impulses with contact caching (Catto, Iterative "
                   "dynamics with temporal coherence)")
    settings_class = PGSSettings
    capabilities = Capabilities(joints=True, counters=("iterations", "merit", "rows", "cache_hits", "joint_rows",
                                                       "joint_error", "joint_error_after"))

    @classmethod
    def release_speed(cls, settings) -> float:
        """max_correction_speed: a contact pushes with the Baumgarte target beta (depth - slop) up to
        ``split_speed`` in the velocity solve (the relax sweeps remove most of it); deeper ones move
        by pseudo-velocities that are dropped ("split": every contact so)."""
        return float(settings.max_correction_speed)

    def step(self, core, dt, prof, t):
        b, r, s = core.bodies, core.rows, core.settings
        # every step substeps, with rows or without: integrating contact-free steps over dt at once
        # (tried) made stack10's boxes land differently and the stack fall in 2 of 3 perturbed starts
        # at the defaults, against 3 of 3 standing (drift 2-13 mm) when the free flight substeps too
        substeps = s.substeps > 1 and s.position_correction == "relax"
        n = s.substeps if substeps else 1
        contacts, flew = stages.collide_or_fly(core, prof, t, s.warm_start, dt / n, n)
        if flew:    # no pair, no joint: what the paths below leave for a step with no rows
            r.count = 0
            core.joint_row_offset = 0
            iters = 1 if s.tolerance > 0.0 else s.iterations
            k = core.counters
            k["joint_rows"] = 0
            k["iterations"], k["merit"], k["rows"] = iters, 0.0, 0
            if s.record_merit:
                core.merit_history = np.zeros(0 if substeps else iters)
            return contacts
        c = core.contacts
        t = time.perf_counter()
        if substeps:
            self._substeps(core, dt, prof, t)
            return contacts
        if 0 < c.count < stages.PARALLEL_MIN_CONTACTS and not core.profile_stages and not core.joint_layout.row_total \
                and s.position_correction == "relax" and not s.normal_block_solve and not s.record_merit:
            self._contact_step(core, dt, prof, t)
            return contacts
        offset = stages.prepare_rows(core, dt)
        split = s.position_correction == "split"
        tree = None if split else self._tree(core, dt)
        if tree is not None:
            tree.factor(core, offset)
        # deep overlaps (push above split_speed) leave the velocity solve for the pseudo-velocity pass
        deep, pseudo = 0, _EMPTY
        if not split and c.count:
            pseudo = np.zeros(r.count)
            deep = split_deep_rows(c.count, c.contact_depth, s.baumgarte / dt, s.slop, s.max_correction_speed,
                                   s.split_speed, r.row_bias, r.row_bias_relax, pseudo)
        guard = _PushedGuard(core) if deep and s.pushed_energy_guard else None
        stages.integrate_velocities(core, dt)
        row_orientation = b.body_orientation[:b.count].copy() if c.count else None
        t = stages.lap(prof, "prepare", t)

        history = np.zeros(s.iterations) if s.record_merit else _EMPTY
        row_C = None        # the compact contact rows (rows.pack_pair_rows), when the solve below made them
        if r.count == 0:     # nothing to solve: what solve_pgs returns for no rows, without the call
            iters, merit = (1 if s.tolerance > 0.0 else s.iterations), 0.0
        elif tree is not None:
            starts = manifold_starts(c) if (s.normal_block_solve and c.count) else _EMPTY_INT
            iters, merit = self._solve_tree(core, tree, starts, offset, r.row_bias, s.iterations, s.tolerance, True,
                                            True)
            if s.record_merit:   # as the block sweeps: the final theta only
                history = np.array([merit])
        elif s.normal_block_solve and not split and c.count:
            starts = manifold_starts(c)
            iters, merit = solve_pgs_blocks(starts, starts.shape[0] - 1, r.count, r.row_body, r.row_J, r.row_B,
                                            r.row_inv_diag, r.row_bias, r.row_lo, r.row_hi, r.row_link, r.row_mu,
                                            r.row_cfm, r.row_group, r.row_lambda, b.body_linear_velocity,
                                            b.body_angular_velocity, s.iterations, s.tolerance,
                                            s.normal_block_active_set)
            if s.record_merit:   # the block sweeps record the final theta only
                history = np.array([merit])
        elif not split and not s.record_merit and r.count == 3 * c.count:     # contact rows only: compact
            row_C = np.empty((r.count, PAIR_COLUMNS))
            iters, merit = solve_pgs_pairs(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, b.body_inv_mass,
                                           row_C, r.row_bias, r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_lambda,
                                           b.body_linear_velocity, b.body_angular_velocity, s.iterations, s.tolerance)
        else:                # split: the velocity solve has no position feedback (split_correction has it)
            iters, merit = solve_pgs(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag,
                                     r.row_bias_relax if split else r.row_bias, r.row_lo,
                                     r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_lambda,
                                     b.body_linear_velocity, b.body_angular_velocity, s.iterations, s.tolerance,
                                     history)
        stages.solve_counters(core, iters, merit, history)
        t = stages.lap(prof, "solve", t)

        stages.integrate_positions(core, dt)
        if deep:
            starts = manifold_starts(c) if s.normal_block_solve else _EMPTY_INT
            pseudo_correction(starts, max(starts.shape[0] - 1, 0), r.count, r.row_body, r.row_J, r.row_B,
                              r.row_inv_diag, pseudo, r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_cfm,
                              r.row_group, b.body_position, b.body_orientation, b.body_fixed, b.count, s.iterations,
                              dt, _NO_DISP, b.body_angular_velocity, s.normal_block_active_set,
                              guard.pushed if guard is not None else _NO_PUSHED)
        if c.count and s.relax_iterations > 0 and not split:
            # the contact rows' B = M^-1 J^T at the orientations after the move, for the relax sweeps
            changed = np.zeros(b.count, dtype=np.bool_)
            if refresh_turned_rows(3 * c.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, b.body_orientation,
                                   row_orientation, b.body_inv_inertia_local, b.body_inv_inertia_world, b.body_fixed,
                                   b.count, changed, ROW_TURN_TOLERANCE) and row_C is not None:
                repack_changed_rows(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, b.body_inv_mass, changed,
                                    row_C)
        t = stages.lap(prof, "integrate", t)

        if split and r.count:
            split_correction(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_bias_relax,
                             r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group, b.body_position,
                             b.body_orientation, b.body_fixed, b.count, s.iterations, dt, b.body_angular_velocity)
        elif s.relax_iterations > 0 and tree is not None:
            starts = manifold_starts(c) if (s.normal_block_solve and c.count) else _EMPTY_INT
            self._solve_tree(core, tree, starts, offset, r.row_bias_relax, s.relax_iterations, 0.0, False, False)
        elif s.relax_iterations > 0 and r.count and s.normal_block_solve and c.count:
            starts = manifold_starts(c)
            relax_pgs_blocks(starts, starts.shape[0] - 1, r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag,
                             r.row_bias_relax, r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group,
                             r.row_lambda, b.body_linear_velocity, b.body_angular_velocity, s.relax_iterations,
                             s.normal_block_active_set)
        elif s.relax_iterations > 0 and row_C is not None:
            relax_pgs_pairs(r.count, r.row_body, row_C, r.row_bias_relax, r.row_lo, r.row_hi, r.row_link, r.row_mu,
                            r.row_lambda, b.body_linear_velocity, b.body_angular_velocity, s.relax_iterations)
        elif s.relax_iterations > 0 and r.count:
            relax_pgs(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias_relax, r.row_lo, r.row_hi,
                      r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_lambda, b.body_linear_velocity,
                      b.body_angular_velocity, s.relax_iterations)
        if guard is not None:
            guard.apply(core, dt)
        if c.count:
            store_contact_impulses(c.count, 0, r.row_J, r.row_lambda, c.contact_normal_impulse,
                                   c.contact_friction_impulse)
        stages.finish_joints(core, offset, r.row_lambda, dt)
        t = stages.lap(prof, "relax", t)
        stages.project_joints(core, dt, tree, skip_settled=s.joint_pass_skip_settled)
        stages.lap(prof, "joints", t)
        return contacts

    def _contact_substep_step(self, core, dt, prof, t):
        """``_substeps`` for a small world's contact rows only: the rows, the substep loop, the impulses and
        the finish's body check in one kernel call (``fused_step.contact_substep_step``, bit for bit;
        ``core.finished`` carries the check's result)."""
        b, c, r, s = core.bodies, core.contacts, core.rows, core.settings
        g = core.gravity
        self._joint_tree = None
        r.reserve(3 * c.count + 1)
        rows, iters, merit, merits, bad, deepest = contact_substep_step(
            c.count, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal, c.contact_depth,
            c.contact_friction, c.contact_restitution, c.contact_normal_impulse, c.contact_friction_impulse,
            c.contact_key, b.body_position, b.body_orientation, b.body_linear_velocity, b.body_angular_velocity,
            b.body_mass, b.body_inv_mass, b.body_inertia_local, b.body_inv_inertia_local, b.body_inv_inertia_world,
            b.body_force, b.body_torque, b.body_fixed, b.body_contact_count, b.count, g, dt, s.substeps, s.baumgarte,
            s.slop, s.max_correction_speed, s.restitution_threshold,
            FRICTION_FIXED if s.friction_model == "fixed" else FRICTION_COULOMB,
            math.sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]), bool(s.warm_start), s.split_speed,
            stages.velocity_gyroscopic(s), stages.free_rotation(s), s.linear_damping, s.angular_damping,
            bool(s.normal_block_solve), s.substep_iterations, s.tolerance, s.relax_iterations, bool(s.record_merit),
            bool(s.normal_block_active_set), bool(s.pushed_energy_guard), ROW_TURN_TOLERANCE, TURN_TOLERANCE,
            r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_bias_relax, r.row_lo, r.row_hi,
            r.row_link, r.row_mu, r.row_kind, r.row_lambda, r.row_owner, r.row_cfm, r.row_group)
        r.count = rows
        core.joint_row_offset = rows
        core.counters["joint_rows"] = 0
        stages.solve_counters(core, iters, merit, merits if s.record_merit else _EMPTY)
        core.finished = (bad, deepest)
        stages.lap(prof, "substeps", t)

    @staticmethod
    def _contact_step(core, dt, prof, t):
        """The rest of ``step`` for a small world's contact rows only, one solve, scalar sweeps: the
        stages below ``step``'s collision in one kernel call, the finish's body check included
        (``fused_step.contact_step``, bit for bit; ``core.finished`` carries its result)."""
        b, c, r, s = core.bodies, core.contacts, core.rows, core.settings
        g = core.gravity
        r.reserve(3 * c.count + 1)
        rows, iters, merit, bad, deepest = contact_step(
            c.count, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal, c.contact_depth,
            c.contact_friction, c.contact_restitution, c.contact_normal_impulse, c.contact_friction_impulse,
            b.body_position, b.body_orientation, b.body_linear_velocity, b.body_angular_velocity, b.body_mass,
            b.body_inv_mass, b.body_inertia_local, b.body_inv_inertia_local, b.body_inv_inertia_world, b.body_force,
            b.body_torque, b.body_fixed, b.body_contact_count, b.count, g, dt, s.baumgarte, s.slop,
            s.max_correction_speed, s.restitution_threshold,
            FRICTION_FIXED if s.friction_model == "fixed" else FRICTION_COULOMB,
            math.sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]), bool(s.warm_start), s.split_speed,
            stages.velocity_gyroscopic(s), stages.free_rotation(s), s.linear_damping, s.angular_damping, s.iterations,
            s.tolerance, s.relax_iterations, bool(s.normal_block_active_set), bool(s.pushed_energy_guard),
            ROW_TURN_TOLERANCE, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_bias_relax, r.row_lo,
            r.row_hi, r.row_link, r.row_mu, r.row_kind, r.row_lambda, r.row_owner, r.row_cfm, r.row_group)
        r.count = rows
        core.joint_row_offset = rows
        k = core.counters
        k["joint_rows"] = 0
        k["iterations"], k["merit"], k["rows"] = int(iters), float(merit), int(rows)
        core.finished = (bad, deepest)
        stages.lap(prof, "contact_step", t)

    def _tree(self, core, h):
        """The joint tree of this step (``joints.tree``) when the joints' equality rows are solved
        directly (``joint_direct_solve``), the solve's (sub)step ``h`` is at most ``TREE_MAX_SUBSTEP``
        and some joint is in it; else None. The tree is kept while its inputs are unchanged
        (``kernels.tree_inputs_unchanged``: active joints, their bodies, fixed flags, masses; issue 19:
        rebuilt per step it cost chain50 ~30 us of a ~0.6 ms step in node lists, work arrays and the
        build); its arrays are work space every use writes before it reads."""
        if not core.joint_layout.row_total or not core.settings.joint_direct_solve or h > TREE_MAX_SUBSTEP:
            return None
        b, js = core.bodies, core.joint_store
        cached = getattr(self, "_tree_cache", None)
        if cached is not None and tree_inputs_unchanged(js.count, js.joint_active, js.joint_body, b.body_fixed,
                                                        b.body_mass, b.count, *cached[1]):
            tree = cached[0]
        else:
            tree = JointTree(core)
            key = (js.joint_active[: js.count].copy(), js.joint_body[: js.count].copy(), b.body_fixed[: b.count].copy(),
                   b.body_mass[: b.count].copy())
            self._tree_cache = (tree, key)
        return tree if tree.count else None

    def _joint_only_substeps(self, core, dt):
        """The substeps of a step whose rows are all joint rows: fewer than ``substeps`` when
        ``joint_substep`` > 0 and every joint row is an equality row of the joint tree (no loop, limit or
        motor row), so each substep solves all of them exactly: n = ceil(dt / joint_substep), at most
        ``substeps``, and only while the substep stays within ``TREE_MAX_SUBSTEP`` (the tree is used).
        Else ``substeps``."""
        s = core.settings
        n = s.substeps
        self._joint_tree = None
        if s.joint_substep <= 0.0 or not s.joint_direct_solve:
            return n
        # dt / joint_substep within rounding of an integer (1/60 over 1/240) is that integer
        k = max(1, math.ceil(dt / s.joint_substep * (1.0 - 1e-12)))
        if k >= n or dt / k > TREE_MAX_SUBSTEP:
            return n
        tree = self._tree(core, dt / k)
        if tree is None:
            return n
        self._joint_tree = tree     # what ``_tree(core, dt / n)`` gives for either n (both within TREE_MAX_SUBSTEP)
        return k if self._tree_only(core, tree) else n

    @staticmethod
    def _tree_only(core, tree) -> bool:
        """Whether every joint row is an equality row of ``tree`` (no loop, limit or motor row): the
        tree's equality rows (``types.JOINT_BASE_ROWS`` per joint, counted once per tree) against the joint
        layout's ``row_total``."""
        rows = getattr(tree, "equality_rows", None)
        if rows is None:
            js = core.joint_store
            rows = int(np.asarray(JOINT_BASE_ROWS, dtype=np.int64)[js.joint_type[: js.count][tree.in_tree]].sum())
            tree.equality_rows = rows
        return rows == core.joint_layout.row_total

    @staticmethod
    def _solve_tree(core, tree, starts, offset, bias, iterations, tolerance, warm, merit):
        """``solve_with_tree`` on the core's rows: sweeps over the rows outside the tree (manifold
        blocks when ``starts`` lists manifolds), each followed by the exact tree solve."""
        b, r, js = core.bodies, core.rows, core.joint_store
        blocks = starts.shape[0] > 0
        return solve_with_tree(warm, blocks, merit, starts if blocks else _EMPTY_INT,
                               starts.shape[0] - 1 if blocks else 0, r.count, r.row_body, r.row_J, r.row_B,
                               r.row_inv_diag, bias, r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group,
                               r.row_lambda, b.body_linear_velocity, b.body_angular_velocity, iterations, tolerance,
                               tree.count, tree.kind, tree.ref, tree.parent, js.joint_type, js.joint_row_start, offset,
                               tree.D_fac, tree.F, tree.H_diag, tree.refine, tree.y, tree.x, tree.z,
                               core.settings.normal_block_active_set)

    @staticmethod
    def _joint_substeps(core, tree, dt, n, rows, prof, t, relax):
        """``_substeps`` for a step whose rows are joint rows only: its loop as one
        ``kernels.joint_substeps`` call (``relax`` relax sweeps per substep), then the impulses stored, the
        reactions and the projection."""
        b, r, s, js = core.bodies, core.rows, core.settings, core.joint_store
        h = dt / n
        merits = np.zeros(n)
        total = np.zeros(rows)
        fraction = s.joint_baumgarte * h / dt if s.joint_correction == "baumgarte" else 0.0
        if tree is not None and PGSSolver._tree_only(core, tree):
            # the substeps, the impulses, reactions and the tree's Newton projection in one call
            # (joint_step.joint_tree_step: kernels.joint_substeps then kernels.finish_tree_step, bit for bit): no
            # loop or limit leaves anything to the passes unless a Newton step was undone; its time is all in
            # the "substeps" lap
            project = s.joint_correction == "projection" and s.joint_correction_iterations > 0
            iters, first, last, undone = joint_tree_step(
                n, h, dt, rows, (1.0 / n) if s.warm_start else 0.0, fraction, s.max_correction_speed,
                s.joint_frequency, s.joint_damping_ratio, s.joint_block_solve, s.substep_iterations, s.tolerance,
                relax, s.normal_block_active_set, merits, total, project, s.joint_correction_iterations,
                s.joint_correction_tolerance, _EMPTY_INT, core.joint_layout.row_total, js.count, js.joint_type,
                js.joint_body, js.joint_anchor, js.joint_axis, js.joint_ref, js.joint_rel_q, js.joint_length,
                js.joint_soft, js.joint_has_limits, js.joint_limit, js.joint_motor_mode, js.joint_motor,
                js.joint_active, js.joint_row_start, js.joint_row_count, js.joint_impulse, js.joint_coord,
                js.joint_lever, js.joint_force, js.joint_torque, tree.count, tree.kind, tree.ref, tree.parent,
                tree.side, tree.D, tree.D_fac, tree.F, tree.H_diag, tree.y, tree.x, tree.z, joint_tree.REFINE_SPREAD,
                joint_tree.REFINE_STEPS, b.body_position, b.body_orientation, b.body_linear_velocity,
                b.body_angular_velocity, b.body_mass, b.body_inv_mass, b.body_inertia_local,
                b.body_inv_inertia_local, b.body_inv_inertia_world, b.body_force, b.body_torque, b.body_fixed,
                b.count, core.gravity, stages.velocity_gyroscopic(s), stages.free_rotation(s), s.linear_damping,
                s.angular_damping, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_bias_relax,
                r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_kind, r.row_lambda, r.row_owner, r.row_cfm,
                r.row_group, bool(s.record_merit))
            stages.solve_counters(core, iters, merits[n - 1], merits if s.record_merit else _EMPTY)
            t = stages.lap(prof, "substeps", t)
            if project:
                core.counters["joint_error"] = float(first)
                core.counters["joint_error_after"] = float(last)
                if undone:      # as stages.project_joints: the capped passes over every joint
                    stages.joint_passes(core, dt, js.joint_active[: js.count].copy())
                    stages.lap(prof, "joints", t)
            return
        tr = tree if tree is not None else _NO_TREE
        iters = joint_substeps(
            n, h, dt, rows, tree is not None, (1.0 / n) if s.warm_start else 0.0, fraction, s.max_correction_speed,
            s.joint_frequency, s.joint_damping_ratio, s.joint_block_solve, s.substep_iterations, s.tolerance,
            relax, s.normal_block_active_set, merits, total, js.count, js.joint_type, js.joint_body,
            js.joint_anchor, js.joint_axis, js.joint_ref, js.joint_rel_q, js.joint_length, js.joint_soft,
            js.joint_has_limits, js.joint_limit, js.joint_motor_mode, js.joint_motor, js.joint_active,
            js.joint_row_start, js.joint_row_count, js.joint_impulse, js.joint_coord, js.joint_lever, tr.count,
            tr.kind, tr.ref, tr.parent, tr.side, tr.D, tr.D_fac, tr.F, tr.H_diag, tr.y, tr.x, tr.z,
            joint_tree.REFINE_SPREAD, joint_tree.REFINE_STEPS, b.body_position, b.body_orientation,
            b.body_linear_velocity, b.body_angular_velocity, b.body_mass, b.body_inv_mass, b.body_inertia_local,
            b.body_inv_inertia_local, b.body_inv_inertia_world, b.body_force, b.body_torque, b.body_fixed, b.count,
            core.gravity, stages.velocity_gyroscopic(s), stages.free_rotation(s), s.linear_damping,
            s.angular_damping, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_bias_relax, r.row_lo,
            r.row_hi, r.row_link, r.row_mu, r.row_kind, r.row_lambda, r.row_owner, r.row_cfm, r.row_group,
            bool(s.record_merit))
        stages.solve_counters(core, iters, merits[n - 1], merits if s.record_merit else _EMPTY)
        stages.finish_joints(core, 0, total, dt)
        t = stages.lap(prof, "substeps", t)
        stages.project_joints(core, dt, tree, skip_settled=s.joint_pass_skip_settled)
        stages.lap(prof, "joints", t)

    def _substeps(self, core, dt, prof, t):
        """One step of ``substeps`` solves of h = dt / n each over one collision (Box2D v3's "soft
        step", Catto's later sequential-impulse scheme): the rows are built once, then per substep
        v += h M^-1 F_ext, warm start with the previous substep's impulses and ``substep_iterations``
        sweeps, x += h v, ``relax_iterations`` sweeps without position feedback. The contact normals
        and lever arms stay those of the collision; each substep's penetration comes from the bodies'
        displacement since (``substep_contact_targets``); the joint rows are rebuilt at every
        substep's poses (their anchors are body-fixed, so this is exact); restitution (a target
        -e v_n from before the step) acts in the first substep only. Impulses are per substep;
        the cache and the reported impulses hold their sum over the step, the next step's warm start
        divides it by n again."""
        b, r, s, c = core.bodies, core.rows, core.settings, core.contacts
        if 0 < c.count < stages.PARALLEL_MIN_CONTACTS and not core.joint_layout.row_total and not core.profile_stages:
            self._contact_substep_step(core, dt, prof, t)
            return
        offset = stages.prepare_rows(core, dt, joint_rows_now=False)    # every substep writes the joint rows
        rows = r.count
        joint_rows = rows - offset
        self._joint_tree = None
        n = s.substeps if offset or not joint_rows else self._joint_only_substeps(core, dt)
        h = dt / n
        # the relax sweeps of a joint-only step on the joint substeps: none when its rows' targets are their relax
        # targets (projection, rigid rows), see ``joint_substep``
        relax = s.relax_iterations
        if n < s.substeps and s.joint_correction == "projection" and s.joint_frequency == 0.0:
            relax = 0
        if rows == 0:   # no contact, no joint: the substeps' two stages in one kernel call, same arithmetic
            t = stages.lap(prof, "prepare", t)
            stages.free_flight(core, h, n)
            stages.solve_counters(core, 1 if s.tolerance > 0.0 else s.iterations, 0.0, _EMPTY)
            stages.lap(prof, "integrate", t)
            return
        if offset and not joint_rows and not core.profile_stages:
            # contact rows only: the loop below in one kernel call, bit for bit (kernels.contact_substeps)
            t = stages.lap(prof, "prepare", t)
            merits = np.zeros(n)
            iters, merit, total = contact_substeps(
                n, h, c.count, bool(s.normal_block_solve), r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias,
                r.row_bias_relax, r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_lambda,
                c.contact_key, c.contact_depth, b.body_position, b.body_orientation, b.body_linear_velocity,
                b.body_angular_velocity, b.body_mass, b.body_inv_mass, b.body_inertia_local, b.body_inv_inertia_local,
                b.body_inv_inertia_world, b.body_force, b.body_torque, b.body_fixed, b.count, core.gravity,
                stages.velocity_gyroscopic(s), stages.free_rotation(s), s.linear_damping, s.angular_damping,
                s.baumgarte / dt, s.slop, s.max_correction_speed, s.split_speed, s.substep_iterations, s.tolerance,
                s.relax_iterations, bool(s.record_merit), merits, bool(s.normal_block_active_set), ROW_TURN_TOLERANCE,
                TURN_TOLERANCE, bool(s.pushed_energy_guard))
            stages.solve_counters(core, iters, merit, merits if s.record_merit else _EMPTY)
            store_contact_impulses(c.count, 0, r.row_J, total, c.contact_normal_impulse, c.contact_friction_impulse)
            stages.lap(prof, "substeps", t)
            return
        if not offset and not core.profile_stages:
            # joint rows only: the loop below in one kernel call, bit for bit (kernels.joint_substeps), without the
            # contact work arrays below
            tree = self._joint_tree if self._joint_tree is not None else self._tree(core, h)
            t = stages.lap(prof, "prepare", t)
            self._joint_substeps(core, tree, dt, n, rows, prof, t, relax)
            return
        inv_n = 1.0 / n
        if offset:
            r.row_lambda[:offset] *= inv_n          # per-step impulses -> per-substep
            r.row_lo[:offset] *= inv_n              # the fixed friction bound mu m g dt, too
            r.row_hi[:offset] *= inv_n
            restitution = np.maximum(r.row_bias_relax[0:offset:3], 0.0)
            no_bounce = np.zeros_like(restitution)
            depth = c.contact_depth[: c.count].copy()
            pseudo = np.zeros(rows)     # the pseudo pass's targets: the deep contacts' pushes, 0 elsewhere
        nb = b.count
        row_orientation = b.body_orientation[:nb].copy()     # where the contact rows' I_w^-1 was taken
        changed = np.zeros(nb, dtype=np.bool_)
        turned = np.zeros(nb, dtype=np.bool_)
        reach = np.zeros(nb)
        if offset:
            contact_reach(c.count, r.row_body, r.row_J, reach)
        start = b.body_position[:nb].copy()
        disp_lin = np.zeros((nb, 3))
        disp_ang = np.zeros((nb, 3))
        total = np.zeros(rows)
        history = _EMPTY
        iters, merit, sweeps, merits = 0, 0.0, s.substep_iterations, []
        js = core.joint_store
        beta = s.baumgarte / dt
        starts = manifold_starts(c) if (s.normal_block_solve and offset) else _EMPTY_INT
        tree = self._tree(core, h) if joint_rows else None
        t = stages.lap(prof, "prepare", t)
        if not core.profile_stages:
            # contact and joint rows: the loop below in one kernel call on the arrays set up above, bit
            # for bit (kernels.contact_joint_substeps)
            merits = np.zeros(n)
            fraction = s.joint_baumgarte * h / dt if s.joint_correction == "baumgarte" else 0.0
            tr = tree if tree is not None else _NO_TREE
            iters, merit = contact_joint_substeps(
                n, h, dt, offset, rows, c.count, tree is not None, inv_n if s.warm_start else 0.0, fraction,
                s.max_correction_speed, s.joint_frequency, s.joint_damping_ratio, s.joint_block_solve, sweeps,
                s.tolerance, s.relax_iterations, s.normal_block_active_set, beta, s.slop, s.split_speed,
                ROW_TURN_TOLERANCE, TURN_TOLERANCE, merits, total, starts, restitution, no_bounce, depth, pseudo,
                row_orientation, changed, turned, reach, start, disp_lin, disp_ang, js.count, js.joint_type,
                js.joint_body, js.joint_anchor, js.joint_axis, js.joint_ref, js.joint_rel_q, js.joint_length,
                js.joint_soft, js.joint_has_limits, js.joint_limit, js.joint_motor_mode, js.joint_motor,
                js.joint_active, js.joint_row_start, js.joint_row_count, js.joint_impulse, js.joint_coord,
                js.joint_lever, tr.count, tr.kind, tr.ref, tr.parent, tr.side, tr.D, tr.D_fac, tr.F, tr.H_diag, tr.y,
                tr.x, tr.z, joint_tree.REFINE_SPREAD, joint_tree.REFINE_STEPS, b.body_position, b.body_orientation,
                b.body_linear_velocity, b.body_angular_velocity, b.body_mass, b.body_inv_mass, b.body_inertia_local,
                b.body_inv_inertia_local, b.body_inv_inertia_world, b.body_force, b.body_torque, b.body_fixed, nb,
                core.gravity, stages.velocity_gyroscopic(s), stages.free_rotation(s), s.linear_damping,
                s.angular_damping, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_bias_relax,
                r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_kind, r.row_lambda, r.row_owner, r.row_cfm,
                r.row_group, bool(s.pushed_energy_guard))
            stages.solve_counters(core, iters, merit, merits if s.record_merit else _EMPTY)
            store_contact_impulses(c.count, 0, r.row_J, total, c.contact_normal_impulse, c.contact_friction_impulse)
            stages.finish_joints(core, offset, total, dt)
            t = stages.lap(prof, "substeps", t)
            stages.project_joints(core, dt, tree, skip_settled=s.joint_pass_skip_settled)
            stages.lap(prof, "joints", t)
            return
        deep = 0
        guard = None    # the energy guard of the pushed bodies, made at the first substep with a deep contact
        for k in range(n):
            if offset:
                # the bounce target only in the first substep (Box2D v3 applies restitution once per
                # step): repeated, it re-launched a Newton's cradle's balls and gained energy
                deep = substep_contact_targets(c.count, r.row_body, r.row_J, depth,
                                               restitution if k == 0 else no_bounce, disp_lin, disp_ang, beta, s.slop,
                                               s.max_correction_speed, s.split_speed, h, r.row_bias, r.row_bias_relax,
                                               pseudo, turned, r.row_lambda)
                if deep and s.pushed_energy_guard:
                    if guard is None:
                        guard = _PushedGuard(core)      # (its start state taken)
                    else:
                        guard.start(core)
            if joint_rows:
                kept = r.row_lambda[offset:rows].copy()
                if k > 0:
                    stages.refresh_frames(core)
                stages.joint_coordinates(core)
                stages.write_joint_rows(core, offset, dt, h, False, serial=True)
                if k == 0:
                    load_joint_impulses(js.count, js.joint_active, js.joint_row_start, js.joint_row_count, offset,
                                        js.joint_impulse, inv_n if s.warm_start else 0.0, r.row_lambda)
                else:
                    r.row_lambda[offset:rows] = kept
                    if offset:      # a turned body's joint rows start from zero with its contacts
                        forget_turned_rows(offset, rows, r.row_body, turned, r.row_lambda)
                if tree is not None:
                    tree.factor(core, offset)
            stages.integrate_velocities(core, h)
            t = stages.lap(prof, "prepare", t)
            if tree is not None:
                done, merit = self._solve_tree(core, tree, starts, offset, r.row_bias, sweeps, s.tolerance, True, True)
                iters += done
                merits.append(merit)
            elif rows and starts.shape[0]:
                done, merit = solve_pgs_blocks(starts, starts.shape[0] - 1, rows, r.row_body, r.row_J, r.row_B,
                                               r.row_inv_diag, r.row_bias, r.row_lo, r.row_hi, r.row_link, r.row_mu,
                                               r.row_cfm, r.row_group, r.row_lambda, b.body_linear_velocity,
                                               b.body_angular_velocity, sweeps, s.tolerance,
                                               s.normal_block_active_set)
                iters += done
                merits.append(merit)
            elif rows:
                done, merit = solve_pgs(rows, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_lo,
                                        r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_lambda,
                                        b.body_linear_velocity, b.body_angular_velocity, sweeps, s.tolerance, history)
                iters += done
                merits.append(merit)
            t = stages.lap(prof, "solve", t)
            if offset:
                accumulate_displacement(nb, b.body_fixed, b.body_position, start, b.body_angular_velocity, h,
                                        disp_lin, disp_ang)
            stages.integrate_positions(core, h)
            if deep:        # the deep overlaps pushed apart by pseudo-velocities, which are then dropped
                pseudo_correction(starts, max(starts.shape[0] - 1, 0), rows, r.row_body, r.row_J, r.row_B,
                                  r.row_inv_diag, pseudo, r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_cfm,
                                  r.row_group, b.body_position, b.body_orientation, b.body_fixed, nb, sweeps, h,
                                  disp_ang, b.body_angular_velocity, s.normal_block_active_set,
                                  guard.pushed if guard is not None else _NO_PUSHED)
            if offset:
                disp_lin[:] = b.body_position[:nb] - start
                # the contact rows' B = M^-1 J^T at the orientations now (the joint rows are rebuilt per substep)
                refresh_turned_rows(offset, r.row_body, r.row_J, r.row_B, r.row_inv_diag, b.body_orientation,
                                    row_orientation, b.body_inv_inertia_local, b.body_inv_inertia_world, b.body_fixed,
                                    nb, changed, ROW_TURN_TOLERANCE)
                mark_turned_bodies(nb, b.body_fixed, disp_ang, reach, TURN_TOLERANCE, turned)
            t = stages.lap(prof, "integrate", t)
            if relax > 0 and tree is not None:
                self._solve_tree(core, tree, starts, offset, r.row_bias_relax, relax, 0.0, False, False)
            elif s.relax_iterations > 0 and rows and starts.shape[0]:
                relax_pgs_blocks(starts, starts.shape[0] - 1, rows, r.row_body, r.row_J, r.row_B, r.row_inv_diag,
                                 r.row_bias_relax, r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group,
                                 r.row_lambda, b.body_linear_velocity, b.body_angular_velocity, s.relax_iterations,
                             s.normal_block_active_set)
            elif s.relax_iterations > 0 and rows:
                relax_pgs(rows, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias_relax, r.row_lo, r.row_hi,
                          r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_lambda, b.body_linear_velocity,
                          b.body_angular_velocity, s.relax_iterations)
            if deep and guard is not None:
                guard.apply(core, h)
            total += r.row_lambda[:rows]
            t = stages.lap(prof, "relax", t)
        if s.record_merit:      # with substeps: theta after each substep's solve
            history = np.array(merits)
        stages.solve_counters(core, iters if rows else (1 if s.tolerance > 0.0 else s.iterations), merit, history)
        if c.count:
            store_contact_impulses(c.count, 0, r.row_J, total, c.contact_normal_impulse, c.contact_friction_impulse)
        stages.finish_joints(core, offset, total, dt)
        t = stages.lap(prof, "relax", t)
        stages.project_joints(core, dt, tree, skip_settled=s.joint_pass_skip_settled)
        stages.lap(prof, "joints", t)
