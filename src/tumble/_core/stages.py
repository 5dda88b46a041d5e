"""The stages every solver composes its step from (the shared vocabulary of the step).

    collide:               body frames -> geoms -> broad phase -> narrow phase -> contact cache
    prepare_rows:          contact rows (normal + 2 friction per point) and the joint rows after them
    integrate_velocities:  u += h M^-1 (f_ext - w x I w)       (000 eq. 45d's external part)
    integrate_positions:   x += h v, the rotation over h (free rigid-body flow or q += h/2 w q)
    joint stages:          write_joint_rows, finish_joints, project_joints, joint_coordinates

Each stage takes the core state (``_core.state.CoreState``) and calls kernels; ``lap`` times a stage
into the step's profile [ms]. A solver's ``step`` (``_core/solvers/<name>/solver.py``) sequences
them; ``_core.step`` adds the shared finish.
"""

from __future__ import annotations

import math
import time

import numpy as np

from tumble._core.collision.geoms import pad_speculative, refresh_geoms
from tumble._core.collision.narrow_phase import NO_PAD, PARALLEL_MIN_PAIRS, narrow_phase
from tumble._core.collision.pair_filter import filter_pairs
from tumble._core.contact.cache import match_cache
from tumble._core.contact.layers import stack_heights
from tumble._core.contact.rows import count_body_contacts, prepare_contact_rows, prepare_contact_rows_small
from tumble._core.dynamics.integrate import free_flight as _free_flight
from tumble._core.dynamics.integrate import integrate_positions as _integrate_positions
from tumble._core.dynamics.integrate import integrate_positions_midpoint as _integrate_positions_midpoint
from tumble._core.dynamics.integrate import integrate_velocities as _integrate_velocities
from tumble._core.dynamics.integrate import update_body_frames
from tumble._core.dynamics.joints.projection import project_joints as _project_joints
from tumble._core.dynamics.joints.rows import (
    joint_reactions,
    prepare_joint_rows,
    store_joint_impulses,
    update_joint_coordinates,
)
from tumble._core.dynamics.joints.tree import project_tree as _project_tree
from tumble._core.fused import DETECTED, FALLBACK, PAIRS, detect, detect_or_fly, narrow_and_match
from tumble._core.types import FRICTION_COULOMB, FRICTION_FIXED, JOINT_BASE_ROWS

#: Broad-phase boxes are enlarged by this fraction of a geometry's bounding radius, at most FAT_MAX [m]
#: (see collision.geoms.refresh_fat_aabbs).
FAT_FRACTION = 0.1
#: [m] added to the contact margin for the tight boxes, so that bodies placed exactly touching (a
#: stack, a wall course) are not culled by rounding in the last bit of their bounds.
AABB_TOLERANCE = 1e-4
#: [m] added to the contact margin in the pair tests for the same reason: with a zero margin, two
#: boxes placed exactly on each other came out 1e-17 m apart and their contact was dropped.
CONTACT_TOLERANCE = 1e-6
FAT_MAX = 0.1
#: Fewer contact points than this get their rows on the calling thread (``.serial`` of the parallel
#: kernel): waking the second thread costs more than the rows of a small scene (config.kernel_parallel;
#: the impulse solver's batches use the same figure, driver.PARALLEL_MIN_CONTACTS).
PARALLEL_MIN_CONTACTS = 256
#: The same for joints (a joint writes up to 8 rows).
PARALLEL_MIN_JOINTS = 64


def lap(prof: dict, name: str, t: float) -> float:
    """Add the time since ``t`` to stage ``name`` of the profile [ms]; returns now."""
    now = time.perf_counter()
    prof[name] = prof.get(name, 0.0) + 1000.0 * (now - t)
    return now


# ---------------------------------------------------------------------------------------- collision
def refresh_frames(core) -> None:
    """R I^-1 R^T of every body at its current orientation (001 §5)."""
    b = core.bodies
    update_body_frames(b.body_orientation, b.body_inv_inertia_local, b.body_inv_inertia_world, b.count)


def collide(core, prof: dict, t: float, warm: bool, margin: float | None = None, pad_dt: float = 0.0) -> int:
    """Frames, broad phase, narrow phase and the contact cache (001 §8: with ``warm`` the new
    points take the impulses of the previous step's points of the same pair and feature; every
    point's ``contact_match`` names its previous point or -1). ``margin`` [m] replaces the
    settings' contact_margin for this detection (gauss: a speculative margin grown with the
    speeds). ``pad_dt`` [s] > 0: each moving body's geoms are padded by how far they can move in
    that time at their current velocities (``geoms.pad_speculative``; shock), so contacts the
    step will close are detected now. Returns the contact count."""
    b, g, s = core.bodies, core.geoms, core.settings
    margin = s.contact_margin if margin is None else margin
    if pad_dt <= 0.0 and not core.profile_stages and core.broad_phase.steady(g.count):
        return _collide_fused(core, prof, t, warm, margin)
    h = core.hull_arrays
    # body frames, geom poses and tight boxes, then the fat boxes (rebuilt for every geometry whenever
    # geometries were added since the last step), in one kernel call
    refresh_geoms(b.body_orientation, b.body_inv_inertia_local, b.body_inv_inertia_world, b.count, b.body_position,
                  g.geom_body, g.geom_type, g.geom_size, g.geom_local_position, g.geom_local_orientation, g.count,
                  margin + AABB_TOLERANCE, g.geom_world_position, g.geom_world_rotation, g.geom_aabb_min,
                  g.geom_aabb_max, h.verts, h.vert_start, h.vert_count, g.geom_hull, g.geom_radius, FAT_FRACTION,
                  FAT_MAX, g.geom_fat_min, g.geom_fat_max, core.fat_count == g.count)
    core.fat_count = g.count
    pad = None
    if pad_dt > 0.0 and g.count:
        pad = np.empty(g.count)
        if not pad_speculative(g.geom_body, g.geom_local_position, g.geom_radius, g.count, b.body_fixed,
                               b.body_linear_velocity, b.body_angular_velocity, pad_dt, g.geom_aabb_min,
                               g.geom_aabb_max, g.geom_fat_min, g.geom_fat_max, pad):
            pad = None
    pairs = core.broad_phase.update(g.geom_fat_min, g.geom_fat_max, g.geom_body, g.geom_static, g.count)
    return collide_pairs(core, prof, t, warm, pairs, margin, pad)


def _collide_fused(core, prof: dict, t: float, warm: bool, margin: float) -> int:
    """``collide`` without padding, on a steady broad phase, in one kernel call (``fused.detect``: the
    same kernels in the same order, the pair filter of joined and excluded bodies included, bit for
    bit), unless the pairs are many or
    the contact store too small (then the narrow phase and the cache as ``collide_pairs``) or a box is
    bad or an owner changed (then the broad phase's full update first). The call's time goes to the
    profile's "narrow" (the broad phase and the cache included). Measured (stack10 after 300 steps, pgs
    catto preset, CPU time per ``collide`` call, median of 5 x 3000, old and new code in alternating
    processes, 3 rounds, 2-core VM under load): 22.9 us staged, 18.3 us fused (and the contact rows from
    scalars: ``prepare_rows`` 11.3 -> 8.2 us)."""
    b, g, bp, hull = core.bodies, core.geoms, core.broad_phase, core.hull_arrays
    n = g.count
    new, old = core.contacts_previous, core.contacts     # this detection fills the other store
    outcome, keys, m, added, removed, swaps, pairs, count, hits, kept = detect(
        b.body_orientation, b.body_inv_inertia_local, b.body_inv_inertia_world, b.count, b.body_position, g.geom_body,
        g.geom_type, g.geom_size, g.geom_local_position, g.geom_local_orientation, n, margin + AABB_TOLERANCE,
        g.geom_world_position, g.geom_world_rotation, g.geom_aabb_min, g.geom_aabb_max, g.geom_hull, g.geom_radius,
        FAT_FRACTION, FAT_MAX, g.geom_fat_min, g.geom_fat_max, core.fat_count == n, g.geom_static,
        *bp.steady_state(), g.geom_friction, g.geom_restitution, *hull, margin + CONTACT_TOLERANCE, NO_PAD,
        new.contact_geom_a, new.contact_geom_b, new.contact_body_a, new.contact_body_b, new.contact_key,
        new.contact_feature, new.contact_point, new.contact_normal, new.contact_depth, new.contact_friction,
        new.contact_restitution, new.contact_normal_impulse, new.contact_friction_impulse, new.contact_match,
        new.contact_warm, old.count if warm else 0, old.contact_key, old.contact_feature, old.contact_normal_impulse,
        old.contact_friction_impulse, old.contact_point, float(getattr(core.settings, "warm_start_radius", 0.0)),
        core.joint_layout.excluded_keys)
    core.fat_count = n
    if outcome == FALLBACK:     # a bad box (raises) or a changed owner (re-initialises)
        pairs = bp.update(g.geom_fat_min, g.geom_fat_max, g.geom_body, g.geom_static, n)
        return collide_pairs(core, prof, t, warm, pairs, margin)
    bp.adopt(keys, m, added, removed, swaps)
    if outcome != DETECTED:
        return collide_pairs(core, prof, t, warm, pairs, margin)
    core.contacts, core.contacts_previous = new, old
    new.count = count
    counters = core.counters
    counters["pairs"] = kept
    counters["cache_hits"] = hits
    lap(prof, "narrow", t)
    return count


def collide_or_fly(core, prof: dict, t: float, warm: bool, h: float, substeps: int) -> tuple[int, bool]:
    """``collide`` (contact margin from the settings, no padding), and when nothing overlaps and no
    joint has rows, ``free_flight(h, substeps)`` and the finish's body check too (``core.finished``):
    (contact count, whether the bodies flew). The caller then has no rows to build or solve and
    must not move the bodies. Small worlds take one kernel call for all of it
    (``fused.detect_or_fly``, same arithmetic bit for bit) when the last step had no pair either and
    the broad phase's update is the steady one; otherwise, and with ``profile_stages``, the stages
    one by one (``collide``; the caller integrates). Measured (a free box under pgs at its defaults,
    12 substeps; thread CPU time per World.step, median of 7 x 3000, 2-core VM under load):
    ~22 us staged, ~13 us fused."""
    b, g, s, bp = core.bodies, core.geoms, core.settings, core.broad_phase
    n = g.count
    if core.profile_stages or core.joint_layout.row_total or bp.num_pairs or not bp.steady(n):
        return collide(core, prof, t, warm), False
    hull = core.hull_arrays
    outcome, keys, m, added, removed, swaps, pairs, bad = detect_or_fly(
        b.body_position, b.body_orientation, b.body_linear_velocity, b.body_angular_velocity, b.body_inv_mass,
        b.body_inertia_local, b.body_inv_inertia_local, b.body_inv_inertia_world, b.body_force, b.body_torque,
        b.body_fixed, b.count, g.geom_body, g.geom_type, g.geom_size, g.geom_local_position, g.geom_local_orientation,
        n, s.contact_margin + AABB_TOLERANCE, g.geom_world_position, g.geom_world_rotation, g.geom_aabb_min,
        g.geom_aabb_max, hull.verts, hull.vert_start, hull.vert_count, g.geom_hull, g.geom_radius, FAT_FRACTION,
        FAT_MAX, g.geom_fat_min, g.geom_fat_max, core.fat_count == n, g.geom_static, *bp.steady_state(),
        core.gravity, h, substeps, velocity_gyroscopic(s), free_rotation(s), s.linear_damping, s.angular_damping)
    core.fat_count = n
    if outcome == FALLBACK:     # a bad box (raises) or a changed owner (re-initialises)
        pairs = bp.update(g.geom_fat_min, g.geom_fat_max, g.geom_body, g.geom_static, n)
        return collide_pairs(core, prof, t, warm, pairs, s.contact_margin), False
    bp.adopt(keys, m, added, removed, swaps)
    if outcome == PAIRS:
        return collide_pairs(core, prof, t, warm, pairs, s.contact_margin), False
    # what collide_pairs does with no pair: the contacts of this step (none) in the other store
    core.contacts, core.contacts_previous = core.contacts_previous, core.contacts
    core.contacts.count = 0
    core.counters["pairs"] = 0
    core.counters["cache_hits"] = 0
    core.finished = (bad, 0.0)      # step.finish's check and clearing are done (no contact: depth 0)
    lap(prof, "free_step", t)
    return 0, True


def collide_pairs(core, prof: dict, t: float, warm: bool, pairs, margin: float, pad=None) -> int:
    """The part of ``collide`` after the broad phase: the pair filter, the narrow phase on ``pairs``
    and the contact cache (``fused.detect_or_fly`` runs the part before it). Returns the contact count."""
    g, s, h = core.geoms, core.settings, core.hull_arrays
    excluded = core.joint_layout.excluded_keys
    if excluded.shape[0]:   # joined bodies and disable_collision pairs
        pairs = filter_pairs(pairs, g.geom_body, excluded)
    t = lap(prof, "broad", t)

    # the previous step's contacts become the cache; the new ones go in the other store
    core.contacts, core.contacts_previous = core.contacts_previous, core.contacts
    c = core.contacts
    core.counters["pairs"] = len(pairs)
    if not len(pairs):      # nothing touches: no narrow phase, no cache to match
        c.count = 0
        core.counters["cache_hits"] = 0
        lap(prof, "narrow", t)
        return 0
    c.reserve(4 * len(pairs) + 1)
    if len(pairs) < PARALLEL_MIN_PAIRS and not core.profile_stages:
        # the serial narrow phase and the cache in one kernel call (fused.narrow_and_match), bit for bit
        p = core.contacts_previous
        c.count, hits = narrow_and_match(
            pairs, len(pairs), g.geom_body, g.geom_type, g.geom_size, g.geom_hull, g.geom_world_position,
            g.geom_world_rotation, g.geom_friction, g.geom_restitution, g.geom_aabb_min, g.geom_aabb_max, *h,
            margin + CONTACT_TOLERANCE, NO_PAD if pad is None else pad, c.contact_geom_a, c.contact_geom_b,
            c.contact_body_a, c.contact_body_b, c.contact_key, c.contact_feature, c.contact_point, c.contact_normal,
            c.contact_depth, c.contact_friction, c.contact_restitution, c.contact_normal_impulse,
            c.contact_friction_impulse, c.contact_match, c.contact_warm, p.count if warm else 0, p.contact_key,
            p.contact_feature, p.contact_normal_impulse, p.contact_friction_impulse, p.contact_point,
            float(getattr(s, "warm_start_radius", 0.0)))
        core.counters["cache_hits"] = hits
        lap(prof, "narrow", t)
        return c.count
    args = (pairs, len(pairs), g.geom_body, g.geom_type, g.geom_size, g.geom_hull, g.geom_world_position,
            g.geom_world_rotation, g.geom_friction, g.geom_restitution, g.geom_aabb_min, g.geom_aabb_max, h,
            margin + CONTACT_TOLERANCE, c.contact_geom_a, c.contact_geom_b, c.contact_body_a, c.contact_body_b,
            c.contact_key, c.contact_feature, c.contact_point, c.contact_normal, c.contact_depth, c.contact_friction,
            c.contact_restitution)
    c.count = narrow_phase(*args) if pad is None else narrow_phase(*args, geom_pad=pad)
    t = lap(prof, "narrow", t)

    p = core.contacts_previous
    hits = match_cache(c.count, c.contact_key, c.contact_feature, c.contact_normal_impulse,
                       c.contact_friction_impulse, c.contact_match, c.contact_warm,
                       p.count if warm else 0, p.contact_key, p.contact_feature, p.contact_normal_impulse,
                       p.contact_friction_impulse, c.contact_point, p.contact_point,
                       float(getattr(s, "warm_start_radius", 0.0)))
    core.counters["cache_hits"] = int(hits)
    lap(prof, "cache", t)
    return c.count


# ---------------------------------------------------------------------------------------- rows
def prepare_rows(core, dt: float, joint_rows_now: bool = True) -> int:
    """Rows of every contact point (normal + 2 friction, contact.rows), then the rows of every
    active joint (dynamics.joints.rows) from row ``3 * contacts`` on. Returns that offset.
    ``joint_rows_now`` False: the joint coordinates are updated and the joint rows counted but not
    written, for a caller that writes every one of them before reading any (pgs's substeps rebuild
    them at each substep's poses, the first included: issue 19, the step-start rows were never read;
    ragdolls' 200 joints took the parallel kernel, 0.4 ms a step on the shared 2-core machine)."""
    c, r, s = core.contacts, core.rows, core.settings
    joint_rows = core.joint_layout.row_total
    offset = 3 * c.count
    r.reserve(offset + joint_rows + 1)
    r.count = 0
    if c.count:
        _contact_rows(core, dt)
    if joint_rows:
        joint_coordinates(core)     # kept (hinge angles are unwrapped against the last value: not idempotent)
        if joint_rows_now:
            write_joint_rows(core, offset, dt, dt, s.warm_start)
        r.count = offset + joint_rows
    core.counters["joint_rows"] = int(joint_rows)
    core.joint_row_offset = offset
    return offset


def _contact_rows(core, dt: float) -> None:
    """The three rows of every contact point (contact.rows.prepare_contact_rows)."""
    b, c, r, s = core.bodies, core.contacts, core.rows, core.settings
    fm = FRICTION_FIXED if s.friction_model == "fixed" else FRICTION_COULOMB
    g = core.gravity
    if c.count < PARALLEL_MIN_CONTACTS:     # the three steps below in one call on this thread, bit for bit
        r.count = prepare_contact_rows_small(
            c.count, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal, c.contact_depth,
            c.contact_friction, c.contact_restitution, c.contact_normal_impulse, c.contact_friction_impulse,
            b.body_position, b.body_linear_velocity, b.body_angular_velocity, b.body_inv_mass, b.body_mass,
            b.body_inv_inertia_world, b.body_fixed, b.body_contact_count, b.count, dt, s.baumgarte, s.slop,
            s.max_correction_speed, s.restitution_threshold, fm, math.sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]),
            s.warm_start, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_bias_relax, r.row_lo,
            r.row_hi, r.row_link, r.row_mu, r.row_kind, r.row_lambda, r.row_owner, r.row_cfm, r.row_group)
        return
    count_body_contacts(c.contact_body_a, c.contact_body_b, c.count, b.body_contact_count, b.count)
    offset = 3 * c.count
    prepare = prepare_contact_rows
    r.count = prepare(
        c.count, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal, c.contact_depth,
        c.contact_friction, c.contact_restitution, c.contact_normal_impulse, c.contact_friction_impulse,
        b.body_position, b.body_linear_velocity, b.body_angular_velocity, b.body_inv_mass, b.body_mass,
        b.body_inv_inertia_world, b.body_fixed, b.body_contact_count, dt, s.baumgarte, s.slop,
        s.max_correction_speed, s.restitution_threshold, fm, math.sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]),
        s.warm_start, 0, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_bias_relax, r.row_lo,
        r.row_hi, r.row_link, r.row_mu, r.row_kind, r.row_lambda, r.row_owner)
    r.row_cfm[:offset] = 0.0
    r.row_group[:offset] = 1


def solve_counters(core, iterations: int, merit: float, history) -> None:
    """The counters of a row solve (sweeps done, final merit theta, rows) and, with ``record_merit``,
    theta after each sweep (000 Fig. 5) as ``merit_history``."""
    core.counters["iterations"] = int(iterations)
    core.counters["merit"] = float(merit)
    core.counters["rows"] = int(core.rows.count)
    if core.settings.record_merit:
        core.merit_history = history[:iterations].copy()


# ---------------------------------------------------------------------------------------- integration
def integrate_velocities(core, h: float) -> None:
    """u += h M^-1 (f_ext - w x I w) for every dynamic body (000 eq. 45d's external part)."""
    b, s = core.bodies, core.settings
    _integrate_velocities(b.body_linear_velocity, b.body_angular_velocity, b.body_orientation, b.body_inv_mass,
                          b.body_inertia_local, b.body_inv_inertia_world, b.body_force, b.body_torque, b.body_fixed,
                          b.count, core.gravity, h, velocity_gyroscopic(s), s.linear_damping, s.angular_damping)


def velocity_gyroscopic(s) -> bool:
    """Whether the velocity update applies -w x I w: only the "euler" rotation integrator (the
    "midpoint" one applies it in the position update, ``free_rotation``)."""
    return bool(s.gyroscopic) and s.rotation_integrator == "euler"


def free_rotation(s) -> bool:
    """Whether the position update is the free rigid body's flow (``integrate_positions_midpoint``)."""
    return bool(s.gyroscopic) and s.rotation_integrator == "midpoint"


def integrate_positions(core, h: float, frozen=None) -> None:
    """x += h v and the rotation over h for every body that is neither fixed nor in ``frozen``
    ((n,) bool): q += h/2 w q ("euler", or no gyroscopic term), else the free rigid body's flow,
    which also turns w (its world angular momentum kept; ``dynamics.integrate``)."""
    b = core.bodies
    held = b.body_fixed if frozen is None else frozen
    if free_rotation(core.settings):
        _integrate_positions_midpoint(b.body_position, b.body_orientation, b.body_linear_velocity,
                                      b.body_angular_velocity, b.body_inertia_local, b.body_inv_inertia_local, held,
                                      b.count, h)
    else:
        _integrate_positions(b.body_position, b.body_orientation, b.body_linear_velocity, b.body_angular_velocity,
                             held, b.count, h)


def free_flight(core, h: float, substeps: int) -> None:
    """``substeps`` x (integrate_velocities(h), integrate_positions(h)) in one kernel call, for a step
    with no rows: the same arithmetic as the calls one by one (``dynamics.integrate.free_flight``)."""
    b, s = core.bodies, core.settings
    _free_flight(b.body_position, b.body_orientation, b.body_linear_velocity, b.body_angular_velocity, b.body_inv_mass,
                 b.body_inertia_local, b.body_inv_inertia_local, b.body_inv_inertia_world, b.body_force,
                 b.body_torque, b.body_fixed, b.count, core.gravity, h, substeps, velocity_gyroscopic(s),
                 free_rotation(s), s.linear_damping, s.angular_damping)


# ---------------------------------------------------------------------------------------- joints
def joint_coordinates(core) -> None:
    """Each hinge's angle and slider's translation at the current poses."""
    js, b = core.joint_store, core.bodies
    update_joint_coordinates(js.count, js.joint_type, js.joint_body, js.joint_anchor, js.joint_axis, js.joint_ref,
                             js.joint_active, b.body_position, b.body_orientation, js.joint_coord)


def write_joint_rows(core, offset: int, dt: float, h: float, warm: bool, serial: bool = False,
                     fraction: float | None = None) -> None:
    """The joint rows (dynamics.joints.rows) from row ``offset`` for a solve spanning ``h`` seconds of
    a step of ``dt``: soft rows (servos, springs) and motor bounds depend on h, Baumgarte feedback
    (when on) keeps removing its fraction of the error per step dt. ``serial``: one thread whatever
    the joint count (pgs substeps rebuild the rows several times a step; on the 2-core benchmark
    machine shared with other processes the parallel call made ``ragdolls``' (200 joints) prepare
    stage 12 ms per step, the serial one 0.7 ms). ``fraction``: the share of each joint's position error
    the rows' targets ask to remove over h (default: the Baumgarte setting's, 0 under projection)."""
    b, r, s, js = core.bodies, core.rows, core.settings, core.joint_store
    if fraction is None:
        fraction = s.joint_baumgarte * h / dt if s.joint_correction == "baumgarte" else 0.0
    prepare = prepare_joint_rows if (js.count >= PARALLEL_MIN_JOINTS and not serial) else prepare_joint_rows.serial
    prepare(js.count, js.joint_type, js.joint_body, js.joint_anchor, js.joint_axis, js.joint_ref,
                       js.joint_rel_q, js.joint_length, js.joint_soft, js.joint_has_limits, js.joint_limit,
                       js.joint_motor_mode, js.joint_motor, js.joint_active, js.joint_row_start, js.joint_impulse,
                       js.joint_coord, js.joint_lever, b.body_position, b.body_orientation, b.body_inv_mass,
                       b.body_inv_inertia_world, b.body_fixed, h, fraction, s.max_correction_speed, s.joint_frequency,
                       s.joint_damping_ratio, warm, s.joint_block_solve, offset, dt, r.row_body, r.row_J, r.row_B,
                       r.row_inv_diag, r.row_bias, r.row_bias_relax, r.row_lo, r.row_hi, r.row_link, r.row_mu,
                       r.row_kind, r.row_lambda, r.row_owner, r.row_cfm, r.row_group)


def finish_joints(core, offset: int, lam, dt: float, reaction_lam=None) -> None:
    """Cache the joint impulses ``lam`` (per step: the warm start of the next one) and compute the
    reactions from ``reaction_lam`` (the rows' impulses over the whole step; default ``lam``)."""
    js, r = core.joint_store, core.rows
    if not core.joint_layout.row_total:
        return
    store_joint_impulses(js.count, js.joint_active, js.joint_row_start, js.joint_row_count, offset, lam, 1.0,
                         js.joint_impulse)
    joint_reactions(js.count, js.joint_active, js.joint_row_start, js.joint_row_count, offset, r.row_J,
                    lam if reaction_lam is None else reaction_lam, dt, js.joint_lever, js.joint_force, js.joint_torque)


#: no loop joints (``_tree_newton``)
_NO_JOINTS = np.zeros(0, dtype=np.int64)


def _tree_newton(core, dt: float, tree, angular_weight: float, loop_joints=_NO_JOINTS):
    """``project_tree`` on the core state (frames and joint coordinates refreshed first), with the
    ``loop_joints`` closed in each Newton step (empty: the tree alone): returns (largest error before,
    after, whether a step was undone)."""
    s, b, js = core.settings, core.bodies, core.joint_store
    refresh_frames(core)
    joint_coordinates(core)
    return _project_tree(
        tree.count, tree.kind, tree.ref, tree.parent, tree.side, js.joint_type, js.joint_body, js.joint_anchor,
        js.joint_axis, js.joint_ref, js.joint_rel_q, js.joint_length, js.joint_soft, js.joint_has_limits,
        js.joint_limit, js.joint_motor_mode, js.joint_motor, js.joint_row_start, core.joint_layout.row_total,
        js.joint_impulse, js.joint_coord, js.joint_lever, b.body_position[: b.count], b.body_orientation, b.body_mass,
        b.body_inv_mass, b.body_inv_inertia_world if angular_weight == 1.0 else
        b.body_inv_inertia_world * angular_weight, b.body_fixed, dt, s.joint_correction_iterations,
        s.joint_correction_tolerance, loop_joints)


#: the most equality rows of loop joints that ``project_joints(close_loops=True)`` closes in the tree's
#: Newton steps (one tree solve per row and a dense factor of their Schur complement, ``tree._close_loops``);
#: with more the loop joints stay with the Gauss-Seidel passes. The bridge has 5 (one hinge), breakable_wall's
#: wall of fixed joints 420 (70 loop joints: 421 tree solves per Newton step), which stays with the passes
LOOP_ROWS_MAX = 30


def closable_loops(core, tree) -> np.ndarray:
    """The active joints outside ``tree`` (they close loops) when their equality rows number at most
    ``LOOP_ROWS_MAX`` (``project_joints(close_loops=True)`` solves them exactly), else none. Kept on the
    tree (``tree.loops``): a tree is built per step, from joints that do not change within it."""
    loops = getattr(tree, "loops", None)
    if loops is not None:
        return loops
    js = core.joint_store
    loops = np.flatnonzero(js.joint_active[: js.count] & ~tree.in_tree)
    if not len(loops) or sum(JOINT_BASE_ROWS[t] for t in js.joint_type[loops]) > LOOP_ROWS_MAX:
        loops = _NO_JOINTS
    tree.loops = loops
    return loops


def project_joints(core, dt: float, tree=None, angular_weight: float = 1.0, close_tree: bool = False,
                   close_loops: bool = False, skip_settled: bool = False) -> None:
    """Joint position projection at the current poses, when enabled: with a joint ``tree``
    (``dynamics.joints.tree.JointTree``, the pgs direct joint solve) Newton steps of the exact tree
    solve on its joints' equality rows first (``project_tree``), then the non-linear Gauss-Seidel
    passes (``dynamics.joints.projection``) over the joints left: those outside the tree (loops) and
    those with limits; without a tree the passes over every joint. ``angular_weight`` w: the tree
    Newton steps use the metric diag(m, I / w) instead of the kinetic one (w = 1; shock passes
    ``joint_projection_angular_weight``): the inverse inertias of the rows and the factor times w.
    ``close_tree`` (shock): after the passes over limited joints, the tree's Newton steps once more,
    so the limits' corrections do not leave the neighbouring tree joints open. ``close_loops`` (shock):
    the joints outside the tree (loops) are solved in the same Newton steps, exactly
    (``tree._close_loops``), when their equality rows number at most ``LOOP_ROWS_MAX``; the passes then
    visit the limited joints only. ``skip_settled`` (pgs's ``joint_pass_skip_settled``): the passes skip a
    tree joint while its bodies are unmoved by them and its coordinate is within its limits
    (``projection.project_joints``'s ``settled``)."""
    s, js = core.settings, core.joint_store
    joint_rows = core.joint_layout.row_total
    if not joint_rows or s.joint_correction != "projection" or s.joint_correction_iterations == 0:
        return
    first = last = 0.0
    rest = None
    undone = True
    loops = closable_loops(core, tree) if tree is not None and close_loops else _NO_JOINTS
    if tree is not None:
        first, last, undone = _tree_newton(core, dt, tree, angular_weight, loops)
        core.counters["joint_error"] = float(first)
        core.counters["joint_error_after"] = float(last)
        if not undone:
            closed = np.zeros(js.count, dtype=np.bool_)
            closed[loops] = True
            rest = js.joint_active[: js.count] & ((~tree.in_tree & ~closed) | js.joint_has_limits[: js.count])
            if not rest.any():
                return
        else:     # Newton diverged (far from the joints' manifold): the capped passes over every joint
            rest = js.joint_active[: js.count].copy()
    joint_passes(core, dt, rest, tree.in_tree if skip_settled and tree is not None and not undone else None, tree)
    if close_tree and tree is not None and not undone:
        _, last, _ = _tree_newton(core, dt, tree, angular_weight, loops)
        core.counters["joint_error_after"] = float(last)


#: no settled joints (``joint_passes``)
_NO_SETTLED = np.zeros(0, dtype=np.bool_)


def joint_passes(core, dt: float, rest=None, settled=None, tree=None) -> None:
    """The non-linear Gauss-Seidel passes of ``project_joints`` (``dynamics.joints.projection``) over the
    joints ``rest`` ((joints,) bool; None: every joint, no tree solve before) in order of their height over
    the joint graph; the counters ``joint_error`` / ``joint_error_after`` get the passes' errors (with
    ``rest``: the larger of theirs and the tree's already there). ``settled`` ((joints,) bool; None: none):
    the joints whose equality rows the tree's Newton steps closed, skipped while unmoved and within their
    limits (``projection.project_joints``). ``tree``: the step's joint tree, which keeps the passes' order
    and heights while it is reused."""
    s, b, js = core.settings, core.bodies, core.joint_store
    joint_rows = core.joint_layout.row_total
    refresh_frames(core)
    joint_coordinates(core)
    # joint graph heights from the fixed bodies (contact.layers), on the joint rows of this step
    # (kept on ``tree``: its joints, their bodies and the fixed bodies are those it was built from; pgs
    # keeps a tree over steps, and ragdolls spent ~20 us a step here)
    fixation = bool(s.joint_projection_fixation)
    cached = getattr(tree, "pass_order", None)
    if cached is not None and cached[0] == fixation:
        height, order = cached[1], cached[2]
    else:
        r = core.rows
        off = core.joint_row_offset
        height = np.zeros(b.count, dtype=np.int64)
        stack_heights(joint_rows, r.row_body[off: off + joint_rows], b.count, b.body_fixed, height)
        n = js.count
        jh = np.maximum(height[np.maximum(js.joint_body[:n, 0], 0)], height[js.joint_body[:n, 1]])
        order = np.argsort(jh, kind="stable")
        if not fixation:
            height[:] = 1      # every body at the same height: each joint moves both its bodies
        if tree is not None:
            tree.pass_order = (fixation, height, order)
    if rest is not None:
        order = order[rest[order]]
    first, last = _project_joints(
        order, height, js.count, js.joint_type, js.joint_body, js.joint_anchor, js.joint_axis, js.joint_ref,
        js.joint_rel_q,
        js.joint_length, js.joint_soft, js.joint_has_limits, js.joint_limit, js.joint_motor_mode, js.joint_motor,
        js.joint_active, js.joint_row_count, js.joint_impulse, js.joint_coord, js.joint_lever,
        b.body_position[: b.count], b.body_orientation, b.body_inv_mass, b.body_inv_inertia_world, b.body_fixed, dt,
        s.joint_correction_iterations, s.joint_correction_tolerance, s.joint_max_correction, s.joint_block_solve,
        s.joint_correction_fraction, _NO_SETTLED if settled is None else settled)
    core.counters["joint_error"] = max(float(first), core.counters["joint_error"] if rest is not None else 0.0)
    core.counters["joint_error_after"] = max(float(last), core.counters["joint_error_after"] if rest is not None
                                             else 0.0)
