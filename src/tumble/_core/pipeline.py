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
from tumble._core.contact.cache import match_cache
from tumble._core.dynamics.integrate import (
    first_nonfinite_body,
    integrate_positions,
    integrate_velocities,
    update_body_frames,
)
from tumble._core.solvers.common import count_body_contacts, prepare_contact_rows, store_contact_impulses
from tumble._core.solvers.pgs import relax_pgs, solve_pgs
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
                       c.contact_friction_impulse, c.contact_warm, p.count if s.warm_start else 0, p.contact_key,
                       p.contact_feature, p.contact_normal_impulse, p.contact_friction_impulse)
    w.counters["cache_hits"] = int(hits)
    _lap(prof, "cache", t)
    return c.count


def _dynamics_pgs(w, dt, prof, t):
    """Catto 001: rows from contacts, v += dt M^-1 F_ext, PGS (Alg. 4), x += dt v."""
    b, c, r, s = w.bodies, w.contact_store, w.rows, w.settings
    count_body_contacts(c.contact_body_a, c.contact_body_b, c.count, b.body_contact_count, b.count)
    r.reserve(3 * c.count + 1)
    fm = FRICTION_FIXED if s.friction_model == "fixed" else FRICTION_COULOMB
    r.count = prepare_contact_rows(
        c.count, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal, c.contact_depth,
        c.contact_friction, c.contact_restitution, c.contact_normal_impulse, c.contact_friction_impulse,
        b.body_position, b.body_linear_velocity, b.body_angular_velocity, b.body_inv_mass, b.body_mass,
        b.body_inv_inertia_world, b.body_fixed, b.body_contact_count, dt, s.baumgarte, s.slop,
        s.max_correction_speed, s.restitution_threshold, fm, float(np.linalg.norm(w.gravity)), s.warm_start, 0,
        r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_bias_relax, r.row_lo, r.row_hi, r.row_link,
        r.row_mu, r.row_kind, r.row_lambda, r.row_owner)
    integrate_velocities(b.body_linear_velocity, b.body_angular_velocity, b.body_orientation, b.body_inv_mass,
                         b.body_inertia_local, b.body_inv_inertia_world, b.body_force, b.body_torque, b.body_fixed,
                         b.count, w.gravity, dt, s.gyroscopic, s.linear_damping, s.angular_damping)
    t = _lap(prof, "prepare", t)

    history = np.zeros(s.iterations) if s.record_merit else _EMPTY
    iters, merit = solve_pgs(r.count, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_lo,
                             r.row_hi, r.row_link, r.row_mu, r.row_lambda, b.body_linear_velocity,
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
                  r.row_link, r.row_mu, r.row_lambda, b.body_linear_velocity, b.body_angular_velocity,
                  s.relax_iterations)
    store_contact_impulses(c.count, 0, r.row_J, r.row_lambda, c.contact_normal_impulse, c.contact_friction_impulse)
    _lap(prof, "relax", t)


#: solver name -> dynamics stage (prepare, solve, integrate)
DYNAMICS = {"pgs": _dynamics_pgs}


def _lap(prof, name, t):
    now = time.perf_counter()
    prof[name] = prof.get(name, 0.0) + 1000.0 * (now - t)
    return now


def step(w, dt: float) -> None:
    """Advance ``w`` by ``dt`` seconds."""
    prof: dict[str, float] = {}
    t_start = time.perf_counter()
    ncontacts = _collide(w, prof, t_start)
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
    c = w.contact_store
    depth = c.contact_depth[: c.count]
    w.counters["contacts"] = int(ncontacts)
    w.counters["max_penetration"] = float(depth.max()) if ncontacts and depth.max() > 0 else 0.0
    w.counters["bodies"] = int(b.count)
    prof["total"] = 1000.0 * (time.perf_counter() - t_start)
    w.profile = prof
    w.time += dt
    w.step_count += 1
    if not math.isfinite(w.time):
        raise ValueError("time overflow")
