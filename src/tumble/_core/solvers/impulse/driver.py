"""Array-level entry points of the impulse solver's stages, shared by the solver's step (solver.py) and the tests:
each takes plain arrays (body and contact fields), sizes the scratch, shares the batches among the
cores and calls the serial or parallel kernel. No per-body or per-contact Python loop."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from tumble._core.solvers.impulse.batches import assign_bins, awake_batches, build_batches
from tumble._core.solvers.impulse.correction import correct_bins_parallel, correct_bins_serial, penetrating_batches
from tumble._core.solvers.impulse.resolution import resolve_bins_parallel, resolve_bins_serial

#: steps with fewer contacts than this run on one thread (no thread wake-ups for small scenes)
PARALLEL_MIN_CONTACTS = 256
#: [-] a lift (``correction.lift_candidates``) needs the contact normal within acos(0.5) = 60 deg of the vertical,
#: so it moves its body at most twice as far as the N move it replaces
LIFT_MIN_COS = 0.5


class Batches(NamedTuple):
    """``build_batches``' output: count, body_batch (n,), contact_batch (m,), batch_contact_start
    (count + 1,) into batch_contacts (m,), batch_body_start (count + 1,) into batch_bodies, and the
    dynamic bodies' contact lists body_contact_start (n + 1,) into body_contacts."""

    count: int
    body_batch: np.ndarray
    contact_batch: np.ndarray
    batch_contact_start: np.ndarray
    batch_contacts: np.ndarray
    batch_body_start: np.ndarray
    batch_bodies: np.ndarray
    body_contact_start: np.ndarray
    body_contacts: np.ndarray


def batches(n, fixed, m, body_a, body_b) -> Batches:
    """Groups of bodies joined by contacts, split at fixed bodies (004 §3.1)."""
    out = (np.empty(n, np.int64), np.empty(m, np.int64), np.empty(n + 1, np.int64), np.empty(m, np.int64),
           np.empty(n + 1, np.int64), np.empty(n, np.int64), np.empty(n + 1, np.int64), np.empty(2 * m, np.int64))
    nb = build_batches(n, fixed, m, body_a, body_b, *out)
    return Batches(int(nb), *out)


def _schedule(bt: Batches, active, parallel: bool, m: int, min_contacts: int):
    """Whether to use the threads (``parallel``, at least ``min_contacts`` contacts, > 1 thread) and
    the active batches shared among them (``assign_bins``): (use, nbins, bin_start, bin_batches)."""
    import numba

    threads = numba.get_num_threads()
    use = bool(parallel) and m >= min_contacts and threads > 1
    nbins = threads if use else 1
    bin_start = np.empty(nbins + 1, np.int64)
    bin_batches = np.empty(max(bt.count, 1), np.int64)
    assign_bins(bt.count, bt.batch_contact_start, active, nbins, bin_start, bin_batches)
    return use, nbins, bin_start, bin_batches


def correct(bt: Batches, m, body_a, body_b, point, normal, depth, position, fixed, asleep, v, w, dt, threshold,
            f_rem, parallel=True, min_contacts=PARALLEL_MIN_CONTACTS, max_bodies=0, lift_dir=None,
            lift_min_cos=None, inv_mass=None, gravity=None) -> np.ndarray:
    """Penetration correction (Alg. 2) of every batch with a contact deeper than ``threshold``;
    ``max_bodies`` > 0 rejects a move that would displace more bodies (0: unbounded, Alg. 2).
    ``lift_dir`` (3,): unit vector against gravity; a contact with no valid move of Alg. 2 then tries to lift
    its upper body along it (``correction.lift_candidates``); None or zeros: Alg. 2 alone. ``inv_mass`` (n,) and
    ``gravity`` (3,) given: the moves of a batch may raise the potential energy by at most what its bodies released
    in this step's position update (``correction.correct_batches``' budget); None: unbounded (Alg. 2).
    Moves ``position``, updates ``point`` and ``depth``, wakes moved bodies. Returns stats (count, 4):
    penetrating contacts, corrected, unresolvable, bodies moved."""
    n = position.shape[0]
    stats = np.zeros((bt.count, 4), np.int64)
    active = penetrating_batches(bt.count, bt.batch_contact_start, bt.batch_contacts, depth, threshold,
                                 np.empty(bt.count, np.bool_))
    if not active.any():
        return stats
    use, nbins, bin_start, bin_batches = _schedule(bt, active, parallel, m, min_contacts)
    run = correct_bins_parallel if use else correct_bins_serial
    run(nbins, bin_start, bin_batches, bt.batch_contact_start, bt.batch_contacts, bt.batch_body_start,
        bt.batch_bodies, bt.body_contact_start, bt.body_contacts, body_a, body_b, point, normal, depth, position,
        fixed, asleep, v, w, dt, threshold, f_rem, int(max_bodies),
        np.zeros(3) if lift_dir is None else np.asarray(lift_dir, np.float64),
        float(LIFT_MIN_COS if lift_min_cos is None else lift_min_cos), np.zeros(n) if inv_mass is None else inv_mass,
        np.zeros(3) if gravity is None else np.asarray(gravity, np.float64),
        gravity is not None and inv_mass is not None,
        np.zeros(n, np.int64), np.zeros((n, 3)),
        np.empty(n, np.int64), np.zeros(m, np.bool_), np.zeros(n, np.bool_), stats)
    return stats


def resolve(bt: Batches, m, body_a, body_b, point, normal, restitution, mu_s, mu_k, position, inv_mass,
            inv_inertia_world, fixed, asleep, v, w, resolution_threshold, restitution_threshold,
            max_iterations_factor, shock_propagation, shock_iterations_factor, closing_speed_order,
            normal_impulse, impulse, parallel=True, min_contacts=PARALLEL_MIN_CONTACTS,
            stage_below_only=False, slip_speed=math.inf, seed_dir=None, warm_fraction=0.0,
            warm_speed=0.0) -> np.ndarray:
    """Contact resolution (Alg. 9-11, shock propagation Alg. 10) of every batch with an awake body.
    Changes ``v``, ``w``, wakes bodies whose contacts are processed, writes the step's impulses
    (``normal_impulse``: along n; ``impulse``: the tangential (friction) part, world frame).
    ``stage_below_only``: a shock stage resolves only its bodies' contacts with frozen or fixed bodies
    and among themselves (Guendelman et al.'s layers), not those with the next layer (the wider
    reading of Alg. 10: every contact of the stage's bodies). ``seed_dir`` (3,): the first shock stage holds
    only bodies with a fixed partner along it (the unit gravity: the supports, not walls); None or zero:
    every body touching a fixed one (Alg. 10). ``slip_speed`` [m/s]: a contact sliding faster
    gets the kinetic friction impulse against its slip (inf: always Alg. 8's direction, the static
    solution's; see ``ImpulseSettings.kinetic_friction_direction``). ``warm_fraction`` > 0: each contact
    first takes this fraction of the impulses ``normal_impulse`` / ``impulse`` hold on entry (the previous
    step's, matched by the contact cache; ``ImpulseSettings.warm_impulse_fraction``), if its normal velocity
    lies in [-``warm_speed``, resolution_threshold] (a resting contact). Returns stats (count, 4): iterations,
    shock stages, closing contacts left, shock iterations."""
    n = position.shape[0]
    stats = np.zeros((bt.count, 4), np.int64)
    active = np.empty(bt.count, np.bool_)
    if warm_fraction > 0.0:
        # the normal part only (warm_t zero): warming the friction impulse too was unstable in the one run
        # measured (pile1000 at dt 1/100, with 2 take-back sweeps: KE grew to 2e4 J); not measured since
        warm_n, warm_t = warm_fraction * normal_impulse[:m], np.zeros((m, 3))
    else:
        warm_n, warm_t = np.empty(0), np.empty((0, 3))
    normal_impulse[:m] = 0.0
    impulse[:m] = 0.0
    if awake_batches(bt.count, bt.batch_body_start, bt.batch_bodies, asleep, active) == 0:
        return stats
    use, nbins, bin_start, bin_batches = _schedule(bt, active, parallel, m, min_contacts)
    run = resolve_bins_parallel if use else resolve_bins_serial
    run(nbins, bin_start, bin_batches, bt.batch_contact_start, bt.batch_contacts, bt.batch_body_start,
        bt.batch_bodies, bt.body_contact_start, bt.body_contacts, body_a, body_b, point, normal, restitution, mu_s,
        mu_k, position, inv_mass, inv_inertia_world, fixed, asleep, v, w, resolution_threshold,
        restitution_threshold, max_iterations_factor, shock_propagation, shock_iterations_factor, stage_below_only,
        np.zeros(3) if seed_dir is None else np.asarray(seed_dir, np.float64), closing_speed_order, slip_speed,
        np.empty((m, 3, 3)), np.empty((m, 3, 3)), np.empty((m, 3)), np.empty((m, 3)),
        np.empty((m, 3)), np.empty((m, 9)), np.empty(m), np.empty(m), np.empty(m, np.int64), np.full(m, -1, np.int64),
        np.zeros(m, np.int64), fixed[:n].copy(), np.zeros(n, np.int64), np.empty(n, np.int64), impulse,
        normal_impulse, warm_n, warm_t, float(warm_speed), stats)
    return stats


def warm() -> None:
    """Compile (or load from the cache) every kernel of the solver, serial and parallel: two spheres
    overlapping above a fixed one, corrected and resolved once each way (``make warm``)."""
    pos = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.19], [0.0, 0.0, 0.38]])
    fixed = np.array([True, False, False])
    inv_mass = np.array([0.0, 1.0, 1.0])
    inv_inertia = np.zeros((3, 3, 3))
    inv_inertia[1:] = np.eye(3) * 250.0
    a, b = np.array([0, 1]), np.array([1, 2])
    normal = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    for parallel in (False, True):
        x, v, w = pos.copy(), np.array([[0.0, 0, 0], [0, 0, -1.0], [0, 0, -1.0]]), np.zeros((3, 3))
        point, depth = np.array([[0.0, 0, 0.095], [0, 0, 0.285]]), np.array([0.01, 0.01])
        bt = batches(3, fixed, 2, a, b)
        correct(bt, 2, a, b, point, normal, depth, x, fixed, np.zeros(3, np.bool_), v, w, 1 / 240, 1.74e-3, 0.5,
                parallel, 0)
        resolve(bt, 2, a, b, point, normal, np.full(2, 0.25), np.full(2, 0.5), np.full(2, 0.5), x, inv_mass,
                inv_inertia, fixed, np.zeros(3, np.bool_), v, w, 83.4e-6, 0.0458, 2.0, True, 6.0, True, np.zeros(2),
                np.zeros((2, 3)), parallel, 0)
