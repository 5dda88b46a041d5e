"""The step, as an ordered list of timed stages (DESIGN "The step").

    frames -> broad phase -> narrow phase -> contact cache -> prepare rows -> integrate velocities
    -> solve -> integrate positions -> relax (optional) -> store impulses -> quarantine check

Each stage is a Numba kernel (or the sweep-and-prune object, whose work is kernels); this module
only sequences them and times each one into ``world.profile`` [ms]. The solver-specific part
(prepare, solve, integrate) is looked up by name in ``DYNAMICS`` so new solvers slot in.
"""

from __future__ import annotations

import math
import time

import numpy as np

from tumble._core.collision.geoms import refresh_fat_aabbs, update_geoms
from tumble._core.collision.narrow_phase import narrow_phase
from tumble._core.collision.pair_filter import filter_pairs
from tumble._core.contact.cache import match_cache
from tumble._core.contact.layers import articulated_heights, build_layers, stack_heights
from tumble._core.dynamics.integrate import (
    first_nonfinite_body,
    integrate_positions,
    integrate_velocities,
    update_body_frames,
)
from tumble._core.dynamics.joints.projection import project_joints
from tumble._core.dynamics.joints.rows import (
    joint_reactions,
    load_joint_impulses,
    prepare_joint_rows,
    store_joint_impulses,
    update_joint_coordinates,
)
from tumble._core.solvers.common import count_body_contacts, prepare_contact_rows, store_contact_impulses
from tumble._core.solvers.impulse import driver as impulse_driver
from tumble._core.solvers.impulse.counters import step_counters as impulse_step_counters
from tumble._core.solvers.impulse.sleeping import sleep_check as impulse_sleep_check
from tumble._core.solvers.impulse.sleeping import velocity_update as impulse_velocity_update
from tumble._core.solvers.pgs import relax_pgs, solve_pgs
from tumble._core.solvers.shock import (
    accumulate_displacement,
    apply_displacement,
    correction,
    layer_targets,
    load_layer_impulses,
    prepare_normal_rows,
    shock_propagation,
    solve_dynamics,
    store_layer_impulses,
    update_depths,
)
from tumble._core.types import FRICTION_COULOMB, FRICTION_FIXED

_EMPTY = np.zeros(0)

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


def _collide(w, prof, t):
    """Frames, broad phase, narrow phase, cache match. Returns the contact count."""
    b, g, s = w.bodies, w.geoms, w.settings
    update_body_frames(b.body_orientation, b.body_inv_inertia_local, b.body_inv_inertia_world, b.count)
    h = w.hulls_arrays
    update_geoms(g.geom_body, g.geom_type, g.geom_size, g.geom_local_position, g.geom_local_orientation,
                 b.body_position, b.body_orientation, g.count, s.contact_margin + AABB_TOLERANCE,
                 g.geom_world_position, g.geom_world_rotation, g.geom_aabb_min, g.geom_aabb_max,
                 h.verts, h.vert_start, h.vert_count, g.geom_hull)
    # fat boxes are rebuilt for every geometry whenever geometries were added since the last step
    refresh_fat_aabbs(g.geom_aabb_min, g.geom_aabb_max, g.geom_radius, g.count, FAT_FRACTION, FAT_MAX,
                      g.geom_fat_min, g.geom_fat_max, w.fat_count == g.count)
    w.fat_count = g.count
    pairs = w.broad_phase.update(g.geom_fat_min, g.geom_fat_max, g.geom_body, g.geom_static, g.count)
    if w._joints.excluded_keys.shape[0]:   # joined bodies and disable_collision pairs
        pairs = filter_pairs(pairs, g.geom_body, w._joints.excluded_keys)
    t = _lap(prof, "broad", t)

    # the previous step's contacts become the cache; the new ones go in the other store
    w.contact_store, w.cache_store = w.cache_store, w.contact_store
    c = w.contact_store
    c.reserve(4 * len(pairs) + 1)
    c.count = narrow_phase(pairs, len(pairs), g.geom_body, g.geom_type, g.geom_size, g.geom_hull,
                           g.geom_world_position, g.geom_world_rotation, g.geom_friction, g.geom_restitution,
                           g.geom_aabb_min, g.geom_aabb_max, h, s.contact_margin + CONTACT_TOLERANCE, c.contact_geom_a,
                           c.contact_geom_b, c.contact_body_a, c.contact_body_b, c.contact_key, c.contact_feature,
                           c.contact_point, c.contact_normal,
                           c.contact_depth, c.contact_friction, c.contact_restitution)
    w.counters["pairs"] = len(pairs)
    t = _lap(prof, "narrow", t)

    p = w.cache_store
    hits = match_cache(c.count, c.contact_key, c.contact_feature, c.contact_normal_impulse,
                       c.contact_friction_impulse, c.contact_aux_impulse, c.contact_warm,
                       p.count if s.warm_start else 0, p.contact_key, p.contact_feature, p.contact_normal_impulse,
                       p.contact_friction_impulse, p.contact_aux_impulse)
    w.counters["cache_hits"] = int(hits)
    _lap(prof, "cache", t)
    return c.count


def _prepare_rows(w, dt):
    """Rows of every contact point (normal + 2 friction, solvers.common), then the rows of every
    active joint (dynamics.joints.rows) from row ``3 * contacts`` on. Returns that offset."""
    b, c, r, s = w.bodies, w.contact_store, w.rows, w.settings
    js = w.joint_store
    count_body_contacts(c.contact_body_a, c.contact_body_b, c.count, b.body_contact_count, b.count)
    offset = 3 * c.count
    r.reserve(offset + w._joints.row_total + 1)
    fm = FRICTION_FIXED if s.friction_model == "fixed" else FRICTION_COULOMB
    r.count = prepare_contact_rows(
        c.count, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal, c.contact_depth,
        c.contact_friction, c.contact_restitution, c.contact_normal_impulse, c.contact_friction_impulse,
        b.body_position, b.body_linear_velocity, b.body_angular_velocity, b.body_inv_mass, b.body_mass,
        b.body_inv_inertia_world, b.body_fixed, b.body_contact_count, dt, s.baumgarte, s.slop,
        s.max_correction_speed, s.restitution_threshold, fm, float(np.linalg.norm(w.gravity)), s.warm_start, 0,
        r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_bias_relax, r.row_lo, r.row_hi, r.row_link,
        r.row_mu, r.row_kind, r.row_lambda, r.row_owner)
    r.row_cfm[:offset] = 0.0
    r.row_group[:offset] = 1
    if w._joints.row_total:
        update_joint_coordinates(js.count, js.joint_type, js.joint_body, js.joint_anchor, js.joint_axis, js.joint_ref,
                                 js.joint_active, b.body_position, b.body_orientation, js.joint_coord)
        _write_joint_rows(w, offset, dt, dt, s.warm_start)
        r.count = offset + w._joints.row_total
    w.counters["joint_rows"] = int(w._joints.row_total)
    w.joint_row_offset = offset
    return offset


def _project_joints(w, dt):
    """Joint position projection (dynamics.joints.projection) at the current poses, when enabled."""
    s, b, js = w.settings, w.bodies, w.joint_store
    if not w._joints.row_total or s.joint_correction != "projection" or s.joint_correction_iterations == 0:
        return
    update_body_frames(b.body_orientation, b.body_inv_inertia_local, b.body_inv_inertia_world, b.count)
    update_joint_coordinates(js.count, js.joint_type, js.joint_body, js.joint_anchor, js.joint_axis, js.joint_ref,
                             js.joint_active, b.body_position, b.body_orientation, js.joint_coord)
    # joint graph heights from the fixed bodies (contact.layers), on the joint rows of this step
    r = w.rows
    off = w.joint_row_offset
    height = np.zeros(b.count, dtype=np.int64)
    stack_heights(w._joints.row_total, r.row_body[off: off + w._joints.row_total], b.count, b.body_fixed, height)
    n = js.count
    jh = np.maximum(height[np.maximum(js.joint_body[:n, 0], 0)], height[js.joint_body[:n, 1]])
    order = np.argsort(jh, kind="stable")
    if not s.joint_projection_fixation:
        height[:] = 1      # every body at the same height: each joint moves both its bodies
    first, last = project_joints(
        order, height, js.count, js.joint_type, js.joint_body, js.joint_anchor, js.joint_axis, js.joint_ref,
        js.joint_rel_q,
        js.joint_length, js.joint_soft, js.joint_has_limits, js.joint_limit, js.joint_motor_mode, js.joint_motor,
        js.joint_active, js.joint_row_count, js.joint_impulse, js.joint_coord, js.joint_lever,
        b.body_position[: b.count], b.body_orientation, b.body_inv_mass, b.body_inv_inertia_world, b.body_fixed, dt,
        s.joint_correction_iterations, s.joint_correction_tolerance, s.joint_max_correction, s.joint_block_solve,
        s.joint_correction_fraction)
    w.counters["joint_error"] = float(first)
    w.counters["joint_error_after"] = float(last)


def _write_joint_rows(w, offset, dt, h, warm):
    """The joint rows (dynamics.joints.rows) from row ``offset`` for a solve spanning ``h`` seconds of
    a step of ``dt``: soft rows (servos, springs) and motor bounds depend on h, Baumgarte feedback
    (when on) keeps removing its fraction of the error per step dt."""
    b, r, s, js = w.bodies, w.rows, w.settings, w.joint_store
    fraction = s.joint_baumgarte * h / dt if s.joint_correction == "baumgarte" else 0.0
    prepare_joint_rows(js.count, js.joint_type, js.joint_body, js.joint_anchor, js.joint_axis, js.joint_ref,
                       js.joint_rel_q, js.joint_length, js.joint_soft, js.joint_has_limits, js.joint_limit,
                       js.joint_motor_mode, js.joint_motor, js.joint_active, js.joint_row_start, js.joint_impulse,
                       js.joint_coord, js.joint_lever, b.body_position, b.body_orientation, b.body_inv_mass,
                       b.body_inv_inertia_world, b.body_fixed, h, fraction, s.max_correction_speed, s.joint_frequency,
                       s.joint_damping_ratio, warm, s.joint_block_solve, offset, dt, r.row_body, r.row_J, r.row_B,
                       r.row_inv_diag, r.row_bias, r.row_bias_relax, r.row_lo, r.row_hi, r.row_link, r.row_mu,
                       r.row_kind, r.row_lambda, r.row_owner, r.row_cfm, r.row_group)


def _finish_joints(w, offset, lam, dt, reaction_lam=None):
    """Cache the joint impulses ``lam`` (per step: the warm start of the next one) and compute the
    reactions from ``reaction_lam`` (the rows' impulses over the whole step; default ``lam``)."""
    js, r = w.joint_store, w.rows
    if not w._joints.row_total:
        return
    store_joint_impulses(js.count, js.joint_active, js.joint_row_start, js.joint_row_count, offset, lam, 1.0,
                         js.joint_impulse)
    joint_reactions(js.count, js.joint_active, js.joint_row_start, js.joint_row_count, offset, r.row_J,
                    lam if reaction_lam is None else reaction_lam, dt, js.joint_lever, js.joint_force, js.joint_torque)


def _joint_coordinates(w):
    js, b = w.joint_store, w.bodies
    if w._joints.row_total:
        update_joint_coordinates(js.count, js.joint_type, js.joint_body, js.joint_anchor, js.joint_axis, js.joint_ref,
                                 js.joint_active, b.body_position, b.body_orientation, js.joint_coord)


def _dynamics_pgs(w, dt, prof, t):
    """Catto 001: rows from contacts, v += dt M^-1 F_ext, PGS (Alg. 4), x += dt v."""
    b, c, r, s = w.bodies, w.contact_store, w.rows, w.settings
    offset = _prepare_rows(w, dt)
    _integrate_velocities(w, dt)
    t = _lap(prof, "prepare", t)

    history = np.zeros(s.iterations) if s.record_merit else _EMPTY
    iters, merit = solve_pgs(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_lo,
                             r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_lambda,
                             b.body_linear_velocity,
                             b.body_angular_velocity, s.iterations, s.tolerance, history)
    w.counters["iterations"] = int(iters)
    w.counters["merit"] = float(merit)
    w.counters["rows"] = int(r.count)
    if s.record_merit:
        w.merit_history = history[:iters].copy()
    t = _lap(prof, "solve", t)

    integrate_positions(b.body_position, b.body_orientation, b.body_linear_velocity, b.body_angular_velocity,
                        b.body_fixed, b.count, dt)
    t = _lap(prof, "integrate", t)

    if s.relax_iterations > 0:
        relax_pgs(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias_relax, r.row_lo, r.row_hi,
                  r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_lambda, b.body_linear_velocity,
                  b.body_angular_velocity,
                  s.relax_iterations)
    store_contact_impulses(c.count, 0, r.row_J, r.row_lambda, c.contact_normal_impulse, c.contact_friction_impulse)
    _finish_joints(w, offset, r.row_lambda, dt)
    t = _lap(prof, "relax", t)
    _project_joints(w, dt)
    _lap(prof, "joints", t)


def _dynamics_shock(w, dt, prof, t):
    """Erleben 000 Fig. 14 after detect(t): dynamics(a dt) on the whole system, shock propagation of
    (dynamics((1 - a) dt), correction()) over the stack layers, detect(t + dt), correction().

    With ``shock_propagation=False`` the step is dynamics(dt) and correction() on the whole system,
    then detect(t + dt) and correction() (a = 1; the "without shock propagation" case of Fig. 13).
    Positions move once per stage through the accumulated displacement (solvers.shock)."""
    b, c, r, s = w.bodies, w.contact_store, w.rows, w.settings
    n = b.count
    a = s.dynamics_fraction if s.shock_propagation else 1.0
    offset = _prepare_rows(w, dt)
    rows = r.count
    # the cache holds impulses per full step (force x dt); the a dt solve starts from a of them, and
    # bounded contact rows (Catto's fixed friction) may apply their force for a dt only; the joint
    # rows are rebuilt for a solve of a dt (motor bounds, soft rows)
    if a < 1.0 and w._joints.row_total:
        _write_joint_rows(w, offset, dt, a * dt, s.warm_start)
    r.row_lambda[:rows] *= a
    r.row_lo[:offset] *= a
    r.row_hi[:offset] *= a
    height = np.zeros(n, dtype=np.int64)
    disp_lin = np.zeros((n, 3))
    disp_ang = np.zeros((n, 3))
    _integrate_velocities(w, a * dt)
    t = _lap(prof, "prepare", t)

    # dynamics(a dt) on the whole system (eq. 45)
    history = np.zeros(s.iterations) if s.record_merit else _EMPTY
    sweeps, merit = solve_dynamics(rows, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_lo,
                                   r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_lambda,
                                   b.body_linear_velocity,
                                   b.body_angular_velocity, s.iterations, s.tolerance, s.cfm, height, history)
    accumulate_displacement(b.body_fixed, n, b.body_linear_velocity, b.body_angular_velocity, a * dt, disp_lin,
                            disp_ang)
    lam_step = r.row_lambda[:rows].copy()    # impulses of the whole step: a dt now, (1 - a) dt added below
    r.row_lambda[:rows] *= 1.0 / a
    store_contact_impulses(c.count, 0, r.row_J, r.row_lambda, c.contact_normal_impulse, c.contact_friction_impulse)
    w.counters["iterations"] = int(sweeps)
    w.counters["merit"] = float(merit)
    w.counters["rows"] = int(rows)
    if s.record_merit:
        w.merit_history = history[:sweeps].copy()
    t = _lap(prof, "solve", t)

    lam = np.empty(rows)
    lam_c = np.empty(rows)
    h = (1.0 - a) * dt
    if s.shock_propagation:
        layers = articulated_heights(rows, r.row_body, r.row_kind, n, b.body_fixed, height)
        row_layer = np.empty(rows, dtype=np.int64)
        row_block = np.empty(rows, dtype=np.int64)
        layer_row_start = np.empty(layers + 1, dtype=np.int64)
        layer_rows = np.empty(rows, dtype=np.int64)
        layer_inv_diag = np.empty(rows)
        layer_body_start = np.empty(layers + 1, dtype=np.int64)
        layer_bodies = np.empty(n, dtype=np.int64)
        build_layers(rows, r.row_body, r.row_J, r.row_B, height, n, b.body_fixed, layers, row_layer, row_block,
                     layer_row_start, layer_rows, layer_inv_diag, layer_body_start, layer_bodies)
        w.counters["layers"] = int(layers)
        if s.layer_targets == "incremental":
            bias = np.empty(rows)
            layer_targets(rows, r.row_body, r.row_J, r.row_kind, r.row_bias, row_layer, height,
                          b.body_linear_velocity, b.body_angular_velocity, s.layer_collision_speed, bias)
        else:
            bias = r.row_bias
        t = _lap(prof, "graph", t)
        _integrate_velocities(w, h)
        # the layer impulses are cached per full step like the others; this solve spans (1 - a) dt
        load_layer_impulses(c.count, r.row_J, c.contact_aux_impulse, (1.0 - a) if s.warm_start else 0.0, lam)
        js = w.joint_store
        load_joint_impulses(js.count, js.joint_active, js.joint_row_start, js.joint_row_count, offset,
                            js.joint_aux_impulse, (1.0 - a) if s.warm_start else 0.0, lam)
        r.row_lo[:offset] *= (1.0 - a) / a
        r.row_hi[:offset] *= (1.0 - a) / a
        if w._joints.row_total:   # joint rows for the (1 - a) dt solve; the a dt impulses are kept
            kept = r.row_lambda[offset:rows].copy()
            _write_joint_rows(w, offset, dt, h, False)
            r.row_lambda[offset:rows] = kept
            if bias is not r.row_bias:
                bias[offset:rows] = r.row_bias[offset:rows]   # layer_targets copied the a dt targets
        worst, layer_sweeps, layer_corrections = shock_propagation(
            layers, layer_row_start, layer_rows, layer_body_start, layer_bodies, height, r.row_body, r.row_J, r.row_B,
            layer_inv_diag, bias, r.row_lo, r.row_hi, r.row_link, r.row_mu, r.row_cfm, r.row_group, r.row_kind,
            r.row_owner,
            _correction_target(c, s), 0.0, lam, lam_c, b.body_linear_velocity, b.body_angular_velocity, disp_lin,
            disp_ang, h, s.iterations, s.correction_iterations, s.cfm, s.tolerance, s.correction_tolerance, row_block,
            s.block_iterations, s.block_tolerance)
        w.counters["layer_sweeps"] = int(layer_sweeps)
        w.counters["layer_correction_sweeps"] = int(layer_corrections)
        store_layer_impulses(c.count, r.row_J, lam, 1.0 / (1.0 - a) if a < 1.0 else 0.0, c.contact_aux_impulse)
        store_joint_impulses(js.count, js.joint_active, js.joint_row_start, js.joint_row_count, offset, lam,
                             1.0 / (1.0 - a) if a < 1.0 else 0.0, js.joint_aux_impulse)
        lam_step[offset:] += lam[offset:rows]
    else:
        w.counters["layers"] = 1
        worst, _ = correction(rows, height, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_kind, r.row_owner,
                              _correction_target(c, s), 0.0, lam_c, disp_lin, disp_ang, s.correction_iterations,
                              s.correction_tolerance)
    apply_displacement(b.body_position, b.body_orientation, b.body_fixed, n, disp_lin, disp_ang)
    # warm start of the a dt solve: its per-step impulse; reactions: the whole step's impulses
    _finish_joints(w, offset, r.row_lambda, dt, lam_step)
    w.counters["layer_penetration"] = float(worst)
    t = _lap(prof, "shock", t)
    if w._joints.row_total:
        _project_joints(w, dt)
        t = _lap(prof, "joints", t)

    if s.final_correction and s.correction_iterations > 0:
        _collide(w, prof, t)
        t = time.perf_counter()
        c = w.contact_store
        r.reserve(c.count + 1)
        r.count = prepare_normal_rows(c.count, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal,
                                      b.body_position, b.body_inv_mass, b.body_inv_inertia_world, b.body_fixed,
                                      r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_kind, r.row_owner)
        disp_lin[:] = 0.0
        disp_ang[:] = 0.0
        lam_c = np.empty(r.count)
        worst, _ = correction(r.count, height, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_kind,
                              r.row_owner, _correction_target(c, s), 0.0, lam_c, disp_lin, disp_ang,
                              s.correction_iterations, s.correction_tolerance)
        apply_displacement(b.body_position, b.body_orientation, b.body_fixed, n, disp_lin, disp_ang)
        w.counters["final_penetration"] = float(worst)
        moved = max(float(np.abs(disp_lin).max()), float(np.abs(disp_ang).max())) if n else 0.0
        if s.reuse_final_contacts and moved <= s.reuse_max_correction:
            # depth after the correction, to first order: depth - J_n disp (the rows are the normals)
            update_depths(c.count, r.row_body, r.row_J, disp_lin, disp_ang, c.contact_depth)
            w.final_state = _state_key(w)
        _lap(prof, "correction", t)


def _correction_target(c, s):
    """Per contact, how far correction() must separate the points: depth - slop, at most
    ``max_correction`` per step (a deep overlap is undone over several steps)."""
    return np.minimum(c.contact_depth[: c.count] - s.correction_slop, s.max_correction)


def _state_key(w):
    """What must be unchanged for the contacts of the last detection to serve the next step."""
    b, g = w.bodies, w.geoms
    return (b.count, g.count, w.solver, b.body_position[: b.count].copy(), b.body_orientation[: b.count].copy(),
            b.body_fixed[: b.count].copy(), (w.settings.contact_margin, w._joints.version))


def _final_contacts_still_valid(w) -> bool:
    """True when the last step ended with detect(t + dt) + correction() and nothing (a user's
    set_position, a new body, a settings change) has touched the bodies since."""
    key = getattr(w, "final_state", None)
    if key is None or w.solver != "shock" or not getattr(w.settings, "reuse_final_contacts", False):
        return False
    now = _state_key(w)
    return (key[:3] == now[:3] and key[6] == now[6] and np.array_equal(key[3], now[3])
            and np.array_equal(key[4], now[4]) and np.array_equal(key[5], now[5]))


def _integrate_velocities(w, h):
    """u += h M^-1 (f_ext - w x I w) for every dynamic body (000 eq. 45d's external part)."""
    b, s = w.bodies, w.settings
    integrate_velocities(b.body_linear_velocity, b.body_angular_velocity, b.body_orientation, b.body_inv_mass,
                         b.body_inertia_local, b.body_inv_inertia_world, b.body_force, b.body_torque, b.body_fixed,
                         b.count, w.gravity, h, s.gyroscopic, s.linear_damping, s.angular_damping)


#: solver name -> dynamics stage (prepare, solve, integrate)
DYNAMICS = {"pgs": _dynamics_pgs, "shock": _dynamics_shock}

#: solver name -> the whole step's stages (detection included), for solvers whose order differs
FULL_STEPS: dict = {}

def _step_impulse(w, dt, prof, t):
    """Schornbaum 004 Alg. 6, in its order: positions move first with the velocities of the end of
    the last step; detection sees that state; batches; penetration correction; wake rules 5-6 and
    the velocity update (gravity damping, Alg. 12); contact resolution (Alg. 9-11, shock
    propagation Alg. 10); sleep check (Alg. 5). Returns the contact count."""
    b, s = w.bodies, w.settings
    if w.joint_count:
        from tumble.errors import SettingsError

        raise SettingsError("solver 'impulse' has no joints (004 resolves contacts only); this world has "
                            f"{w.joint_count} joints: use solver 'pgs' or 'shock'")
    n = b.count
    v, om = b.body_linear_velocity, b.body_angular_velocity
    integrate_positions(b.body_position, b.body_orientation, v, om, b.body_fixed[:n] | b.body_asleep[:n], n, dt)
    t = _lap(prof, "integrate", t)
    m = _collide(w, prof, t)
    t = time.perf_counter()
    c = w.contact_store
    bt = impulse_driver.batches(n, b.body_fixed, m, c.contact_body_a, c.contact_body_b)
    t = _lap(prof, "batches", t)

    pen_before = float(c.contact_depth[:m].max()) if m else 0.0
    cstats = impulse_driver.correct(bt, m, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal,
                                    c.contact_depth, b.body_position, b.body_fixed, b.body_asleep, v, om, dt,
                                    s.penetration_threshold, s.remaining_penetration, s.parallel_batches)
    t = _lap(prof, "correction", t)

    # wake rules 5 and 6, then the velocity update of awake bodies with gravity damping (Alg. 12)
    woken, damped = impulse_velocity_update(
        m, c.contact_body_a, c.contact_body_b, c.contact_normal, n, b.body_fixed, b.body_asleep, b.body_support_count,
        b.body_mass, v, om, b.body_reach, b.body_force, b.body_torque, b.body_orientation, b.body_inv_mass,
        b.body_inertia_local, b.body_inv_inertia_world, w.gravity, dt, s.gravity_damping, s.gravity_damping_threshold,
        s.gyroscopic, s.linear_damping, s.angular_damping)
    t = _lap(prof, "velocities", t)

    mu = c.contact_friction[:m]
    rstats = impulse_driver.resolve(bt, m, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal,
                                    c.contact_restitution, mu, s.kinetic_friction_ratio * mu, b.body_position,
                                    b.body_inv_mass, b.body_inv_inertia_world, b.body_fixed, b.body_asleep, v, om,
                                    s.resolution_threshold, s.restitution_threshold, s.max_iterations_factor,
                                    s.shock_propagation, s.shock_iterations_factor, s.contact_order == "closing_speed",
                                    c.contact_normal_impulse, c.contact_friction_impulse, s.parallel_batches,
                                    stage_below_only=s.shock_stage_contacts == "below")
    t = _lap(prof, "resolution", t)

    asleep = impulse_sleep_check(n, b.body_fixed, b.body_asleep, v, om, b.body_reach, b.body_sleep_motion,
                                 s.sleep_threshold, s.sleep_bias, s.sleep_rwa_max_factor * s.sleep_threshold ** 2)
    _lap(prof, "sleeping", t)
    (largest, pen, corr, unres, moved, its, left, shock_its, shock_batches,
     fixed) = impulse_step_counters(bt.count, bt.batch_contact_start, cstats, rstats, n, b.body_fixed)
    k = w.counters
    k["batches"] = bt.count
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


FULL_STEPS["impulse"] = _step_impulse


def _lap(prof, name, t):
    now = time.perf_counter()
    prof[name] = prof.get(name, 0.0) + 1000.0 * (now - t)
    return now


def step(w, dt: float) -> None:
    """Advance ``w`` by ``dt`` seconds."""
    prof: dict[str, float] = {}
    t_start = time.perf_counter()
    if w.solver in FULL_STEPS:  # solvers with their own stage order (impulse: positions first)
        ncontacts = FULL_STEPS[w.solver](w, float(dt), prof, t_start)
    elif _final_contacts_still_valid(w):
        # shock: detect(t + dt) of the last step, depths updated by its final correction, is
        # detect(t) of this one (see _dynamics_shock); only the body frames need refreshing
        b = w.bodies
        update_body_frames(b.body_orientation, b.body_inv_inertia_local, b.body_inv_inertia_world, b.count)
        ncontacts = w.contact_store.count
        w.counters["pairs"] = 0
        w.counters["cache_hits"] = ncontacts
        prof["reuse"] = 1000.0 * (time.perf_counter() - t_start)
    else:
        ncontacts = _collide(w, prof, t_start)
    w.final_state = None
    if w.solver not in FULL_STEPS:
        DYNAMICS[w.solver](w, dt, prof, time.perf_counter())

    b = w.bodies
    bad = first_nonfinite_body(b.body_position, b.body_orientation, b.body_linear_velocity,
                               b.body_angular_velocity, b.count)
    if bad >= 0:
        from tumble.errors import SimulationError

        raise SimulationError(f"body {bad} ({w.body_name(bad)!r}) has a non-finite state after step "
                              f"{w.step_count + 1}: position={b.body_position[bad].tolist()}, "
                              f"velocity={b.body_linear_velocity[bad].tolist()}")
    b.body_force[: b.count] = 0.0
    b.body_torque[: b.count] = 0.0
    _joint_coordinates(w)
    # contacts: points the dynamics solved; max_penetration: the deepest point of the last detection
    # (for shock that is detect(t + dt), before the final correction: the conservative figure)
    c = w.contact_store
    depth = c.contact_depth[: c.count]
    w.counters["contacts"] = int(ncontacts)
    w.counters["max_penetration"] = float(max(depth.max(), 0.0)) if c.count else 0.0
    w.counters["bodies"] = int(b.count)
    prof["total"] = 1000.0 * (time.perf_counter() - t_start)
    w.profile = prof
    w.time += dt
    w.step_count += 1
    if not math.isfinite(w.time):
        raise ValueError("time overflow")
    w.events = w._joints.break_overloaded()
