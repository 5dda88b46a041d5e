"""Contact resolution (004 chapter 3; digest §1.7-1.12): one closing contact at a time, always the
one closing fastest, until none is closing; shock propagation when an iteration cap stops it.

Conventions (tumble's): a contact joins body a and body b, its unit normal n points from a to b, so
the thesis' A is our b and its B our a (its normal points B -> A). The relative contact velocity is
u = (v_b + w_b x r_b) - (v_a + w_a x r_a), r = p - x_com; u . n < 0 is closing. An impulse P acts
+P on b and -P on a.

Per contact and step (Alg. 9's initialisation, constant while the batch is solved): the contact
basis B = [n | y | z] (Eq. 3.3.1-3.3.4), the collision matrix in contact space
K_c = B^T (sum over a, b of (1/m) E - R I^-1 R) B (Eq. 3.4.7-3.4.12, R = skew(r)), its inverse and
its first row (Eq. 3.5.6).

Where the time goes (issue 19; ``benchmarks/impulse_kernels.py``, pile1000 at dt 1/100, step 150: 2258
contacts, one batch of 2250, one thread, process CPU time on the busy 2-core VM): 6.7 ms for 4503 global
iterations (~560 ns each, the batch's rows and its heap over the whole batch included) and 21778 in 17
shock stages (~200 ns each). Perf samples: the affected contacts' re-evaluation ~50 %, the heap's sifts
~20 %. The closing-speed order costs ~40 % (first-in-list order: 4.1 ms for as many iterations, but the
pile ends 3 s with 14.6 kJ of kinetic energy against 15 J). Tried without a measurable gain (< 3 %,
results bit for bit the same, old and new code in alternating processes): each list slot with its own
copy of the row (no jrow gather), v and w packed into one 64-byte row per body, every per-contact array
in one record, a 4-ary heap, branch-free sifts, and skipping b's contacts with a in the affected loop.
The iteration counts are the thesis' caps (2x the batch's contacts, 6x each stage's); both bind there.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from tumble._core.config import kernel

#: |n_z| below this counts as n_z = 0 in the basis rule of Eq. 3.3.2 (the exact test is fragile)
BASIS_TOLERANCE = 1e-12
#: with max_iterations_factor 0 ("unlimited", the high-accuracy preset) a batch still stops after this
#: many iterations per contact: an elastic cluster can in principle exchange impulses forever
UNLIMITED_FACTOR = 1000.0
#: [m/s] post-impulse tangential speed below which a kinetic contact counts as not slipping (its
#: direction is then kept); 1e-6 m/s is 4e-9 m per 240 Hz step, far below any contact tolerance
SLIP_SPEED = 1e-6
#: a fixed body seeds the first shock stage (seeded layering) when the contact normal from the body to it
#: makes less than ~84 deg with the seed direction (gravity): cos > 0.1, so a wall (cos 0) does not
SEED_COS = 0.1
#: fixed-point iterations for the direction of the kinetic impulse against the post-impulse slip
SLIP_ITERATIONS = 8
#: the iteration counts as settled when its last step turned mu_k d by less than this x mu_k (1e-3 rad);
#: a non-settled one alternates between directions about 1 rad or more apart (issue 17's 12 m box: 1.1
#: rad) and falls back to Alg. 8's direction
SLIP_SETTLED = 1e-3
#: Gauss-Seidel sweeps that take back warm impulses larger than their contacts need (``resolve_batches``).
#: Measured, pile1000 at dt 1/100 with warm_impulse_fraction 0.9: 2 sweeps that left contacts separating
#: below resolution_threshold alone let KE grow to 1.9e4 J in 3 s; 8 sweeps down to u0 = 0: 6 J (cold: 19 J)
WARM_SWEEPS = 8
#: the side list of ``_resolve_loop`` goes into the heap when it holds more than this many contacts (the
#: sequence is the same for any value; pile1000 at dt 1/100, step 150: the global phase took 2.19-2.36 ms
#: with 4, 16 or 64 and 2.32 ms without the list, so the value is not critical; 16: a scan of the list
#: stays within two cache lines)
SIDE_FLUSH = 16


@kernel(exact=True, inline="always", error_model="numpy")
def _basis_y(n0, n1, n2):
    """The basis' second column for the unit normal n (Eq. 3.3.2): (n1, -n0, 0) if n2 = 0, else
    (0, n2, -n1), normalised. The third is z = n x y (Eq. 3.3.3, unit already); B = [n | y | z],
    B^T its inverse (Eq. 3.3.5)."""
    if abs(n2) < BASIS_TOLERANCE:
        y0, y1, y2 = n1, -n0, 0.0
    else:
        y0, y1, y2 = 0.0, n2, -n1
    inv = 1.0 / math.sqrt(y0 * y0 + y1 * y1 + y2 * y2)
    return y0 * inv, y1 * inv, y2 * inv


@kernel(exact=True, inline="always", error_model="numpy")
def _k_rows(k00, k01, k02, k10, k11, k12, k20, k21, k22):
    """Rows 1 and 2 of K_c = (K_c^-1)^-1 from the stored inverse, by cofactors over its determinant
    (K10, K11, K12, K20, K21, K22); zeros if the stored inverse is singular."""
    kdet = k00 * (k11 * k22 - k12 * k21) - k01 * (k10 * k22 - k12 * k20) + k02 * (k10 * k21 - k11 * k20)
    if kdet == 0.0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    kd = 1.0 / kdet
    return ((k12 * k20 - k10 * k22) * kd, (k00 * k22 - k02 * k20) * kd, (k02 * k10 - k00 * k12) * kd,
            (k10 * k21 - k11 * k20) * kd, (k01 * k20 - k00 * k21) * kd, (k00 * k11 - k01 * k10) * kd)


@kernel(exact=True, inline="always", error_model="numpy")
def _body_block(r0, r1, r2, inv_mass, i00, i01, i02, i10, i11, i12, i20, i21, i22):
    """One body's part of the collision matrix, (1/m) E - R I^-1 R with R = skew(r) (the point
    velocity change per unit impulse; I^-1 = [[i00, i01, i02], ...]), written out:
    R = [[0, -r2, r1], [r2, 0, -r0], [-r1, r0, 0]], T = I^-1 R. Returned as the diagonal entries
    (1/m - (R T)_ii) and the off-diagonal (R T)_ij, which the caller subtracts."""
    t00 = i01 * r2 - i02 * r1
    t01 = -i00 * r2 + i02 * r0
    t02 = i00 * r1 - i01 * r0
    t10 = i11 * r2 - i12 * r1
    t11 = -i10 * r2 + i12 * r0
    t12 = i10 * r1 - i11 * r0
    t20 = i21 * r2 - i22 * r1
    t21 = -i20 * r2 + i22 * r0
    t22 = i20 * r1 - i21 * r0
    return (inv_mass - (-r2 * t10 + r1 * t20), -r2 * t11 + r1 * t21, -r2 * t12 + r1 * t22,
            r2 * t00 - r0 * t20, inv_mass - (r2 * t01 - r0 * t21), r2 * t02 - r0 * t22,
            -r1 * t00 + r0 * t10, -r1 * t01 + r0 * t11, inv_mass - (-r1 * t02 + r0 * t12))


@kernel(exact=True, error_model="numpy")
def contact_rows(j0, j1, order, starts, ids, contact_body_a, contact_body_b, contact_point, contact_normal,
                 body_position, body_inv_mass, body_inv_inertia_world, rigid, basis, kinv, krow, r_a, r_b, jrow):
    """Per contact (Alg. 9's initialisation, constant while the batch is solved) c = ids[j] for j in
    [starts[g], starts[g + 1]), g = order[jb], jb in [j0, j1): basis[c] = B (Eq. 3.3.1-3.3.4),
    r_a[c], r_b[c], jrow[c] = (n, r_a x n, r_b x n), kinv[c] = K_c^-1 and krow[c] = K_c[0, :] with
    K_c = B^T (sum over a, b of (1/m) E - R I^-1 R) B (Eq. 3.4.7-3.4.12, 3.5.6). ``rigid[i]``: body
    i takes no impulse (fixed, or frozen by shock propagation).

    Written out in one loop over many contacts, with scalar helpers only: an inlined helper that
    binds the arrays (and has a branch) makes Numba take and drop a reference to each of them per
    contact (measured: 10 pairs of atomic operations per contact, ~0.15 us)."""
    for jb in range(j0, j1):
        g = order[jb]
        for j in range(starts[g], starts[g + 1]):
            c = ids[j]
            a, b = contact_body_a[c], contact_body_b[c]
            n0, n1, n2 = contact_normal[c, 0], contact_normal[c, 1], contact_normal[c, 2]
            y0, y1, y2 = _basis_y(n0, n1, n2)
            z0, z1, z2 = n1 * y2 - n2 * y1, n2 * y0 - n0 * y2, n0 * y1 - n1 * y0
            basis[c, 0, 0], basis[c, 1, 0], basis[c, 2, 0] = n0, n1, n2
            basis[c, 0, 1], basis[c, 1, 1], basis[c, 2, 1] = y0, y1, y2
            basis[c, 0, 2], basis[c, 1, 2], basis[c, 2, 2] = z0, z1, z2
            ra0 = contact_point[c, 0] - body_position[a, 0]
            ra1 = contact_point[c, 1] - body_position[a, 1]
            ra2 = contact_point[c, 2] - body_position[a, 2]
            rb0 = contact_point[c, 0] - body_position[b, 0]
            rb1 = contact_point[c, 1] - body_position[b, 1]
            rb2 = contact_point[c, 2] - body_position[b, 2]
            r_a[c, 0], r_a[c, 1], r_a[c, 2] = ra0, ra1, ra2
            r_b[c, 0], r_b[c, 1], r_b[c, 2] = rb0, rb1, rb2
            jrow[c, 0], jrow[c, 1], jrow[c, 2] = n0, n1, n2
            jrow[c, 3] = ra1 * n2 - ra2 * n1
            jrow[c, 4] = ra2 * n0 - ra0 * n2
            jrow[c, 5] = ra0 * n1 - ra1 * n0
            jrow[c, 6] = rb1 * n2 - rb2 * n1
            jrow[c, 7] = rb2 * n0 - rb0 * n2
            jrow[c, 8] = rb0 * n1 - rb1 * n0
            k00 = k01 = k02 = k10 = k11 = k12 = k20 = k21 = k22 = 0.0
            for side in range(2):  # world-frame K: the bodies that take impulses
                i = a if side == 0 else b
                if rigid[i]:
                    continue
                r0, r1, r2 = (ra0, ra1, ra2) if side == 0 else (rb0, rb1, rb2)
                e = _body_block(r0, r1, r2, body_inv_mass[i], body_inv_inertia_world[i, 0, 0],
                                body_inv_inertia_world[i, 0, 1], body_inv_inertia_world[i, 0, 2],
                                body_inv_inertia_world[i, 1, 0], body_inv_inertia_world[i, 1, 1],
                                body_inv_inertia_world[i, 1, 2], body_inv_inertia_world[i, 2, 0],
                                body_inv_inertia_world[i, 2, 1], body_inv_inertia_world[i, 2, 2])
                k00 += e[0]
                k01 -= e[1]
                k02 -= e[2]
                k10 -= e[3]
                k11 += e[4]
                k12 -= e[5]
                k20 -= e[6]
                k21 -= e[7]
                k22 += e[8]
            # K_c = B^T K B (upper triangle; symmetric in exact arithmetic, mirrored): entry (i, j) =
            # sum_p B[p, i] (K B)[p, j], summed in the order p = 0, 1, 2
            kb00 = k00 * n0 + k01 * n1 + k02 * n2
            kb10 = k10 * n0 + k11 * n1 + k12 * n2
            kb20 = k20 * n0 + k21 * n1 + k22 * n2
            kb01 = k00 * y0 + k01 * y1 + k02 * y2
            kb11 = k10 * y0 + k11 * y1 + k12 * y2
            kb21 = k20 * y0 + k21 * y1 + k22 * y2
            kb02 = k00 * z0 + k01 * z1 + k02 * z2
            kb12 = k10 * z0 + k11 * z1 + k12 * z2
            kb22 = k20 * z0 + k21 * z1 + k22 * z2
            m00 = 0.0 + n0 * kb00 + n1 * kb10 + n2 * kb20
            m01 = 0.0 + n0 * kb01 + n1 * kb11 + n2 * kb21
            m02 = 0.0 + n0 * kb02 + n1 * kb12 + n2 * kb22
            m11 = 0.0 + y0 * kb01 + y1 * kb11 + y2 * kb21
            m12 = 0.0 + y0 * kb02 + y1 * kb12 + y2 * kb22
            m22 = 0.0 + z0 * kb02 + z1 * kb12 + z2 * kb22
            # K_c^-1: cofactors over the determinant (K_c is symmetric positive definite)
            ca = m11 * m22 - m12 * m12
            cb = -(m01 * m22 - m12 * m02)
            cc = m01 * m12 - m11 * m02
            inv = 1.0 / (m00 * ca + m01 * cb + m02 * cc)
            kinv[c, 0, 0], kinv[c, 1, 0], kinv[c, 2, 0] = ca * inv, cb * inv, cc * inv
            kinv[c, 0, 1] = -(m01 * m22 - m02 * m12) * inv
            kinv[c, 1, 1] = (m00 * m22 - m02 * m02) * inv
            kinv[c, 2, 1] = -(m00 * m12 - m01 * m02) * inv
            kinv[c, 0, 2] = (m01 * m12 - m02 * m11) * inv
            kinv[c, 1, 2] = -(m00 * m12 - m02 * m01) * inv
            kinv[c, 2, 2] = (m00 * m11 - m01 * m01) * inv
            krow[c, 0], krow[c, 1], krow[c, 2] = m00, m01, m02


@kernel(exact=True, inline="always", error_model="numpy")
def normal_velocity(c, contact_body_a, contact_body_b, jrow, v, w):
    """u . n, the relative normal velocity of contact c (Eq. 3.4.2; < 0 closing), from its packed
    row jrow[c] = (n, r_a x n, r_b x n): u . n = n . (v_b - v_a) + (r_b x n) . w_b - (r_a x n) . w_a,
    since (w x r) . n = w . (r x n). One contiguous row per contact: this is the inner loop of
    every iteration (each affected contact is re-evaluated)."""
    a, b = contact_body_a[c], contact_body_b[c]
    return (jrow[c, 0] * (v[b, 0] - v[a, 0]) + jrow[c, 1] * (v[b, 1] - v[a, 1]) + jrow[c, 2] * (v[b, 2] - v[a, 2])
            + jrow[c, 6] * w[b, 0] + jrow[c, 7] * w[b, 1] + jrow[c, 8] * w[b, 2]
            - jrow[c, 3] * w[a, 0] - jrow[c, 4] * w[a, 1] - jrow[c, 5] * w[a, 2])


@kernel(exact=True, error_model="numpy")
def _closing_left(heap, base, size, unormal, threshold):
    """Entries of the lazy heap that still close (the others are stale)."""
    left = 0
    for i in range(size):
        if unormal[heap[base + i]] < -threshold:
            left += 1
    return left


@kernel(exact=True, error_model="numpy")
def _resolve_loop(jb0, jb1, bin_batches, batch_contact_start, batch_contacts, max_iterations_factor, stats, size, cap,
                  stamp, want, heap, base, pos, hkey, closing_speed_order, slip_speed,
                  threshold, contact_body_a, contact_body_b,
                  basis, kinv, krow, r_a, r_b, jrow, restitution, mu_s, mu_k, restitution_threshold, rigid, body_fixed,
                  body_asleep, body_inv_mass, body_inv_inertia_world, v, w, unormal, impulse, normal_impulse,
                  body_contact_start, links):
    """Alg. 9's loop: resolve the fastest-closing contact, re-evaluate the contacts it affects (the
    contacts of its two bodies whose ``stamp`` is ``want``: §3.8's affected list), until none closes
    or ``cap`` iterations. Two uses of the one loop:

    - ``jb1 > jb0``: the global phase of batches bin_batches[jb0:jb1], one after the other: the
      initialisation (Alg. 9's: basis, K_c^-1, normal velocities, the closing set; stamp 1), the loop
      with cap ``max_iterations_factor`` x the batch's contacts, then stats[k] = (iterations, 0,
      closing contacts left, 0); the caller runs shock propagation where some are left. ``size``,
      ``cap``, ``want``, ``base`` are set per batch (the arguments are ignored). One call for a run of
      batches: a call with this many arrays costs ~0.4 us of reference counting (measured), more
      than a one-contact batch's whole solve.
    - ``jb1 == jb0``: one shock stage (Alg. 10): heap[base:base + size] holds the stage's closing
      contacts in any order (``pos`` of each set). Returns (iterations, heap size); at the cap the
      heap may hold stale entries (``_closing_left`` counts the closing ones).

    The heap (ids in heap[base + i], their keys beside them in hkey[base + i], so a sift compares
    neighbouring memory, not keys scattered by contact id; ordered by (key, id): the most negative
    normal velocity first, Eq. 3.6.1, ties by the lower id, so the order equals a linear scan's;
    in "arbitrary" order the key is the id) is *lazy*: an entry's key may be more urgent than its
    contact's current speed (key <= ``unormal[t]``), never less. A contact that closes
    faster is pushed or sifted up at once; one that closes slower, or no longer closes, keeps its
    place until it reaches the top, where it is re-keyed or dropped. The top is then the
    fastest-closing contact (every entry's true key >= its stored key >= the top's), so the
    resolved sequence equals an eager heap's, with one sift per entry that surfaces stale instead
    of one per change. Since the order is total, the sequence does not depend on the heap's layout
    either (the initialisation and the stages append their contacts and heapify here).

    A contact that must be pushed or sifted up waits in a *side list* first (``waiting[0:ns]``, flag
    ``is_waiting``; issue 19): the next contact is the lowest (key, id) of the heap's valid top and the
    list's entries (a linear scan, their keys read fresh), and the list goes into the heap (push or
    sift up, the eager moves) only when it holds more than ``SIDE_FLUSH`` contacts or the loop ends.
    The invariant: every closing contact is in the list, or in the heap with key <= its speed; so the
    pick is the fastest-closing contact as before and the sequence is bit for bit the same. It pays
    because the contacts a resolution speeds up are the ones resolved next: pile1000 at dt 1/100, step
    150 (one batch of 2250 contacts): 2786 of the global phase's 4500 picks came from the list (a
    contact picked there is never sifted in, and one changed several times is sifted once), the step
    8.73-8.94 ms instead of 9.41-9.56 (process CPU time, one thread, 300 steps, old and new code in
    alternating processes, 3 rounds); balls_well 1.086-1.099 instead of 1.105-1.131 ms.

    The heap's sifts are written out in this one function on purpose: a helper taking the heap
    arrays, inlined or called, makes Numba take and drop a reference to each array per call (an
    atomic add each), and those calls cost as much as the rest of the iteration (measured with
    perf: NRT_incref/NRT_decref held ~45 % of the resolution time)."""
    global_phase = jb1 > jb0
    it = 0
    waiting = np.empty(unormal.shape[0], np.int64)  # the side list (see above); a contact is in it at most once
    is_waiting = np.zeros(unormal.shape[0], np.bool_)
    for jb in range(jb0, jb1 if global_phase else jb0 + 1):
        if global_phase:
            kb = bin_batches[jb]  # (not k: the loop below uses k for coordinates)
            cs, ce = batch_contact_start[kb], batch_contact_start[kb + 1]
            base = cs
            want = 1
            size = 0
            for j in range(cs, ce):  # initialisation: basis, K_c^-1, velocities; the closing set
                c = batch_contacts[j]
                for q in range(3):
                    impulse[c, q] = 0.0
                normal_impulse[c] = 0.0
                u = normal_velocity(c, contact_body_a, contact_body_b, jrow, v, w)
                unormal[c] = u
                stamp[c] = 1
                if u < -threshold:  # appended; heapified below
                    heap[cs + size] = c
                    hkey[cs + size] = u if closing_speed_order else float(c)
                    pos[c] = size
                    size += 1
            ncont = ce - cs
            factor = max_iterations_factor if max_iterations_factor > 0.0 else UNLIMITED_FACTOR
            cap = int(factor * ncont) + 1 if max_iterations_factor <= 0.0 else int(factor * ncont)
        heapify = size // 2 - 1  # Floyd's heapify first: the inner nodes, last to first, sifted down
        it = 0
        ns = 0
        ending = False
        while True:
            if ns > SIDE_FLUSH or ending:
                # the side list into the heap: each contact that closes and is not in the heap is pushed, one
                # that closes faster than its heap key is sifted up (the eager heap's moves, once per contact
                # however often it changed while it waited)
                for sq in range(ns):
                    t = waiting[sq]
                    is_waiting[t] = False
                    ut = unormal[t]
                    # One branch: the tests are combined with & and | (data-dependent branches mispredict);
                    # hkey[base + i] is read even for i = -1 (a valid slot, unused then)
                    i = pos[t]
                    push = i < 0
                    if not ((ut < -threshold) & (push | (closing_speed_order & (ut < hkey[base + i])))):
                        continue
                    if push:
                        i = size
                        size += 1
                        kt = ut if closing_speed_order else float(t)
                    else:
                        kt = ut
                    while i > 0:  # sift t up
                        par = (i - 1) >> 1
                        d = heap[base + par]
                        kd = hkey[base + par]
                        if not (kt < kd or (kt == kd and t < d)):
                            break
                        heap[base + i] = d
                        hkey[base + i] = kd
                        pos[d] = i
                        i = par
                    heap[base + i] = t
                    hkey[base + i] = kt
                    pos[t] = i
                ns = 0
                if ending:
                    break
            if heapify >= 0:
                i = heapify
                heapify -= 1
                c = heap[base + i]
                kc = hkey[base + i]
            else:
                top = False
                u = 0.0
                if size > 0:
                    c = heap[base]
                    u = unormal[c]
                    top = u < -threshold and not (closing_speed_order and hkey[base] != u)
                if top or size == 0:
                    # the next contact: the lowest (key, id) of the heap's top and the side list's entries
                    # (those no longer closing leave the list here)
                    pick = c if top else -1
                    pk = hkey[base] if top else 0.0
                    from_side = -1
                    sq = 0
                    while sq < ns:
                        t = waiting[sq]
                        ut = unormal[t]
                        if not (ut < -threshold):
                            is_waiting[t] = False
                            ns -= 1
                            waiting[sq] = waiting[ns]
                            continue
                        kt = ut if closing_speed_order else float(t)
                        if pick < 0 or kt < pk or (kt == pk and t < pick):
                            pick = t
                            pk = kt
                            from_side = sq
                        sq += 1
                    if pick < 0 or it >= cap:
                        ending = True
                        continue
                    if from_side >= 0:  # (its heap entry, if any, is stale now and handled when it surfaces)
                        is_waiting[pick] = False
                        ns -= 1
                        waiting[from_side] = waiting[ns]
                    c = pick
                    # Alg. 8 with Alg. 11: the impulse that gives contact c its wanted velocity change. Wanted
                    # change in contact space: (-(1 + e) u0, -u1, -u2), with e := 0 when the closing speed -u0
                    # is below the restitution threshold (resting contacts never bounce, Eq. 3.8.1). dj = K_c^-1
                    # of it is static friction; outside the cone |dj_t| > mu_s dj0 the kinetic impulse keeps the
                    # normal row exact on the cone of mu_k (Eq. 3.5.5-3.5.8). P = B dj acts +P on b, -P on a.
                    a, b = contact_body_a[c], contact_body_b[c]
                    ra0, ra1, ra2 = r_a[c, 0], r_a[c, 1], r_a[c, 2]
                    rb0, rb1, rb2 = r_b[c, 0], r_b[c, 1], r_b[c, 2]
                    u_x = (v[b, 0] + w[b, 1] * rb2 - w[b, 2] * rb1) - (v[a, 0] + w[a, 1] * ra2 - w[a, 2] * ra1)
                    u_y = (v[b, 1] + w[b, 2] * rb0 - w[b, 0] * rb2) - (v[a, 1] + w[a, 2] * ra0 - w[a, 0] * ra2)
                    u_z = (v[b, 2] + w[b, 0] * rb1 - w[b, 1] * rb0) - (v[a, 2] + w[a, 0] * ra1 - w[a, 1] * ra0)
                    u0 = basis[c, 0, 0] * u_x + basis[c, 1, 0] * u_y + basis[c, 2, 0] * u_z
                    u1 = basis[c, 0, 1] * u_x + basis[c, 1, 1] * u_y + basis[c, 2, 1] * u_z
                    u2 = basis[c, 0, 2] * u_x + basis[c, 1, 2] * u_y + basis[c, 2, 2] * u_z
                    e = restitution[c] if -u0 >= restitution_threshold else 0.0
                    t0, t1, t2 = -(1.0 + e) * u0, -u1, -u2
                    j0 = kinv[c, 0, 0] * t0 + kinv[c, 0, 1] * t1 + kinv[c, 0, 2] * t2
                    j1 = kinv[c, 1, 0] * t0 + kinv[c, 1, 1] * t1 + kinv[c, 1, 2] * t2
                    j2 = kinv[c, 2, 0] * t0 + kinv[c, 2, 1] * t1 + kinv[c, 2, 2] * t2
                    alpha = j1 * j1 + j2 * j2
                    ms = mu_s[c]
                    guard = e > 0.0  # static with restitution may gain energy (see the guard below)
                    if alpha > ms * ms * j0 * j0:
                        # kinetic: dj = dj0 (e_n + mu_k d), d a unit tangent, dj0 from the normal row
                        # krow . dj = t0. Alg. 8 takes d along the static solution's (j1, j2). A contact
                        # that already slides faster than ``slip_speed`` [m/s] (the caller's |g| dt: more
                        # than one step of gravity could have started) instead gets d against its slip
                        # after the impulse (Coulomb's law with maximal dissipation, an implicit
                        # condition): u_t' = u_t + (K dj)_t, d = -u_t' / |u_t'|, by fixed-point iteration
                        # from Alg. 8's direction. Alg. 8's direction is off the slip for a corner contact
                        # of a rotating box: on a 30 deg slope with mu 0.2 the box spun up and slid 1.750 m
                        # in 1 s, not the closed form's 1.634 m. A contact starting to slip (a box at rest
                        # on a slope within its friction angle, corner by corner) keeps Alg. 8's, which
                        # lets the contacts together stop it (opposing the slip there left it creeping).
                        # The iteration need not converge: where the normal impulse's own tangential
                        # effect (K_t0 dj0, a long lever: a 12 m box on its corner) outweighs the slip,
                        # every d reverses the slip and no d opposes it (the iterates alternate between
                        # two directions). Issue 17: stopping there at the last iterate pushed the
                        # contact along its slip and gained 63 J in one impulse. Then Alg. 8's direction.
                        guard = True
                        beta = mu_k[c] / math.sqrt(alpha)
                        algo8 = t1 * t1 + t2 * t2 <= slip_speed * slip_speed or mu_k[c] <= 0.0
                        if not algo8:
                            d1 = j1 * beta
                            d2 = j2 * beta           # mu_k d
                            den = krow[c, 0] + krow[c, 1] * d1 + krow[c, 2] * d2
                            k00, k01, k02 = kinv[c, 0, 0], kinv[c, 0, 1], kinv[c, 0, 2]
                            k10, k11, k12 = kinv[c, 1, 0], kinv[c, 1, 1], kinv[c, 1, 2]
                            k20, k21, k22 = kinv[c, 2, 0], kinv[c, 2, 1], kinv[c, 2, 2]
                            K10, K11, K12, K20, K21, K22 = _k_rows(k00, k01, k02, k10, k11, k12, k20, k21, k22)
                            converged = False
                            change = 0.0
                            for _ in range(SLIP_ITERATIONS):
                                if den <= 0.0:
                                    break
                                g0 = t0 / den
                                s1 = -t1 + K10 * g0 + g0 * (K11 * d1 + K12 * d2)   # u_t' = u_t + (K dj)_t
                                s2 = -t2 + K20 * g0 + g0 * (K21 * d1 + K22 * d2)
                                ss = math.sqrt(s1 * s1 + s2 * s2)
                                if ss <= SLIP_SPEED:
                                    converged = True
                                    break
                                e1 = -mu_k[c] * s1 / ss
                                e2 = -mu_k[c] * s2 / ss
                                dn = krow[c, 0] + krow[c, 1] * e1 + krow[c, 2] * e2
                                if dn <= 0.0:      # a lever so long friction would pull the point in
                                    break
                                change = abs(e1 - d1) + abs(e2 - d2)
                                d1 = e1
                                d2 = e2
                                den = dn
                                if change <= 1e-12 * mu_k[c]:
                                    converged = True
                                    break
                            if converged or (den > 0.0 and change <= SLIP_SETTLED * mu_k[c]):
                                j0 = t0 / den
                                j1 = j0 * d1
                                j2 = j0 * d2
                            else:
                                algo8 = True
                        if algo8:  # Alg. 8, Eq. 3.5.7-3.5.8
                            den = krow[c, 0] + beta * (krow[c, 1] * j1 + krow[c, 2] * j2)
                            if den > 0.0:
                                j0 = t0 / den
                                lam = beta * j0
                                j1 *= lam
                                j2 *= lam
                            else:  # friction on the cone would pull the point in (Painlevé): no dj0 > 0 fits
                                j0 = t0 / krow[c, 0]
                                j1 = 0.0
                                j2 = 0.0
                    if guard:
                        # Energy guard (tumble, issue 17; not in 004): one contact's impulse dj changes the
                        # kinetic energy by dE = dj . u + 1/2 dj . K dj (u the contact velocity before,
                        # K = K_c). The frictionless impulse dj_n = t0 / K_00 e_n gives
                        # dE_n = -(1 - e^2) u0^2 / (2 K_00) <= 0, but with friction dE can be > 0: a
                        # kinetic impulse whose d does not oppose the slip after it, or the static impulse
                        # with e > 0 (then dE = (e^2 u0^2 (K^-1)_00 - u . K^-1 u) / 2, > 0 for long levers).
                        # Such an impulse is blended towards dj_n: dj(l) = dj_n + l (dj - dj_n) keeps the
                        # normal row (krow . dj(l) = t0) and stays in the friction cone (convex), and
                        # dE(l) = dE_n + l b + l^2 c / 2 is convex with dE(0) <= 0, so the largest l in
                        # [0, 1] with dE(l) <= 0 is the root l = (-b + sqrt(b^2 - 2 c dE_n)) / c.
                        k00, k01, k02 = kinv[c, 0, 0], kinv[c, 0, 1], kinv[c, 0, 2]
                        k10, k11, k12 = kinv[c, 1, 0], kinv[c, 1, 1], kinv[c, 1, 2]
                        k20, k21, k22 = kinv[c, 2, 0], kinv[c, 2, 1], kinv[c, 2, 2]
                        K10, K11, K12, K20, K21, K22 = _k_rows(k00, k01, k02, k10, k11, k12, k20, k21, k22)
                        K00, K01, K02 = krow[c, 0], krow[c, 1], krow[c, 2]
                        kj0 = K00 * j0 + K01 * j1 + K02 * j2
                        kj1 = K10 * j0 + K11 * j1 + K12 * j2
                        kj2 = K20 * j0 + K21 * j1 + K22 * j2
                        de = j0 * u0 + j1 * u1 + j2 * u2 + 0.5 * (j0 * kj0 + j1 * kj1 + j2 * kj2)
                        if de > 0.0:
                            n0 = t0 / K00
                            de_n = n0 * u0 + 0.5 * n0 * n0 * K00
                            q0, q1, q2 = j0 - n0, j1, j2          # dj - dj_n
                            kq0 = K00 * q0 + K01 * q1 + K02 * q2
                            kq1 = K10 * q0 + K11 * q1 + K12 * q2
                            kq2 = K20 * q0 + K21 * q1 + K22 * q2
                            bq = q0 * u0 + q1 * u1 + q2 * u2 + n0 * kq0   # dq . u + dq . K dj_n (K symmetric)
                            cq = q0 * kq0 + q1 * kq1 + q2 * kq2
                            disc = bq * bq - 2.0 * cq * min(de_n, 0.0)
                            lam = (-bq + math.sqrt(max(disc, 0.0))) / cq if cq > 0.0 else 0.0
                            lam = min(max(lam, 0.0), 1.0)
                            j0 = n0 + lam * q0
                            j1 = lam * q1
                            j2 = lam * q2
                    p0 = basis[c, 0, 0] * j0 + basis[c, 0, 1] * j1 + basis[c, 0, 2] * j2
                    p1 = basis[c, 1, 0] * j0 + basis[c, 1, 1] * j1 + basis[c, 1, 2] * j2
                    p2 = basis[c, 2, 0] * j0 + basis[c, 2, 1] * j1 + basis[c, 2, 2] * j2
                    impulse[c, 0] += p0
                    impulse[c, 1] += p1
                    impulse[c, 2] += p2
                    normal_impulse[c] += j0
                    for side in range(2):  # v += s P / m, w += s I^-1 (r x P) (Eq. 3.4.4), s = +1 on b, -1 on a
                        i = b if side == 0 else a
                        if rigid[i]:
                            continue
                        sg = 1.0 if side == 0 else -1.0
                        r0, r1, r2 = (rb0, rb1, rb2) if side == 0 else (ra0, ra1, ra2)
                        im = body_inv_mass[i] * sg
                        tx = r1 * p2 - r2 * p1
                        ty = r2 * p0 - r0 * p2
                        tz = r0 * p1 - r1 * p0
                        v[i, 0] += im * p0
                        v[i, 1] += im * p1
                        v[i, 2] += im * p2
                        for k in range(3):
                            w[i, k] += sg * (body_inv_inertia_world[i, k, 0] * tx + body_inv_inertia_world[i, k, 1] * ty
                                             + body_inv_inertia_world[i, k, 2] * tz)
                    if not body_fixed[a]:
                        body_asleep[a] = False  # wake rule 3: a contact of it was processed
                    if not body_fixed[b]:
                        body_asleep[b] = False
                    if rigid[a] and rigid[b]:
                        unormal[c] = 0.0  # cannot happen for a stage contact; never loop on it
                    for side in range(2):  # the affected contacts: those of a, then those of b
                        body = a if side == 0 else b
                        if rigid[body] or (side == 1 and b == a):
                            continue
                        for j in range(body_contact_start[body], body_contact_start[body + 1]):
                            t = links[j, 0]
                            if stamp[t] != want:
                                continue
                            e = links[j, 1]  # the other body, ~it when body is the contact's b
                            ta = body if e >= 0 else ~e  # normal_velocity(t), written out
                            tb = e if e >= 0 else body
                            ut = (jrow[t, 0] * (v[tb, 0] - v[ta, 0]) + jrow[t, 1] * (v[tb, 1] - v[ta, 1])
                                  + jrow[t, 2] * (v[tb, 2] - v[ta, 2]) + jrow[t, 6] * w[tb, 0] + jrow[t, 7] * w[tb, 1]
                                  + jrow[t, 8] * w[tb, 2] - jrow[t, 3] * w[ta, 0] - jrow[t, 4] * w[ta, 1]
                                  - jrow[t, 5] * w[ta, 2])
                            unormal[t] = ut
                            # to the side list if it closes and is not in the heap, or closes faster than its
                            # heap key; otherwise lazy: a slower or no longer closing entry is handled when it
                            # surfaces. One branch (see the flush)
                            i = pos[t]
                            push = i < 0
                            if not ((ut < -threshold) & (push | (closing_speed_order & (ut < hkey[base + i])))):
                                continue
                            if is_waiting[t]:
                                continue
                            is_waiting[t] = True
                            waiting[ns] = t
                            ns += 1
                    it += 1
                    continue
                # stale top: drop it (no longer closing: the last entry takes the root) or re-key it
                if u >= -threshold:
                    pos[c] = -1
                    size -= 1
                    if size == 0:
                        continue  # the side list may still hold closing contacts
                    c = heap[base + size]
                    kc = hkey[base + size]
                else:
                    kc = u
                i = 0
            while True:  # sift (c, kc) down from slot i (the one sift-down of the heapify and the top)
                ch = 2 * i + 1
                if ch >= size:
                    break
                if ch + 1 < size:
                    k0, k1 = hkey[base + ch], hkey[base + ch + 1]
                    if k1 < k0 or (k1 == k0 and heap[base + ch + 1] < heap[base + ch]):
                        ch += 1
                d = heap[base + ch]
                kd = hkey[base + ch]
                if not (kd < kc or (kd == kc and d < c)):
                    break
                heap[base + i] = d
                hkey[base + i] = kd
                pos[d] = i
                i = ch
            heap[base + i] = c
            hkey[base + i] = kc
            pos[c] = i
        if global_phase:
            left = 0
            for i in range(size):  # the closing entries (the lazy heap may hold stale ones); clear it
                c = heap[cs + i]
                if unormal[c] < -threshold:
                    left += 1
                pos[c] = -1
            stats[kb, 0] = it
            stats[kb, 1] = 0
            stats[kb, 2] = left
            stats[kb, 3] = 0
    return it, size


@kernel(exact=True, error_model="numpy")
def _clear_heap(heap, base, size, pos):
    for i in range(size):
        pos[heap[base + i]] = -1


@kernel(exact=True, error_model="numpy")
def resolve_batches(j0, j1, bin_batches, batch_contact_start, batch_contacts, batch_body_start, batch_bodies,
                    body_contact_start, body_contacts, contact_body_a, contact_body_b, contact_point, contact_normal,
                    restitution, mu_s, mu_k, body_position, body_inv_mass, body_inv_inertia_world, body_fixed,
                    body_asleep, v, w, resolution_threshold, restitution_threshold, max_iterations_factor,
                    shock_propagation, shock_iterations_factor, stage_below_only, seed_dir, closing_speed_order,
                    slip_speed, basis, kinv,
                    krow, r_a, r_b, jrow, unormal, hkey, heap, pos, stamp, rigid, body_mark, layer, impulse,
                    normal_impulse, warm_n, warm_t, warm_speed, stats):
    """Resolve batches bin_batches[j0:j1], each on its own: Alg. 9, then Alg. 10 if the cap left
    closing contacts. One call for a run of batches, and one ``_resolve_loop`` call for all their
    global phases: a call with this many arrays costs ~0.4-1 us of reference counting, more than a
    one-contact batch's whole solve.

    Scratch (sized for all contacts / bodies; batch k only touches its own entries, so batches can
    run in parallel): heap (m,) (batch k uses heap[cs:ce]), hkey (m,) (the keys of heap[cs:ce], slot
    by slot), pos (m,) = -1, stamp (m,) = 0, rigid (n,) = body_fixed, body_mark (n,) = 0, layer (n,)
    (batch k uses layer[bs:be]).
    stats[k] = (iterations, shock stages, closing contacts left, shock iterations)."""
    if j1 <= j0:
        return
    # the contacts' bases and matrices, then the global phase (Alg. 9) of every batch of the run, each
    # in one call (scratch per batch: see above)
    # the affected lists with the other body beside each contact (links[j] = (t, other body, or ~it
    # when the listed body is t's b)): the hot loop reads one row instead of t, then t's two bodies
    links = np.empty((body_contacts.shape[0], 2), np.int64)
    for jb in range(j0, j1):
        k = bin_batches[jb]
        for q in range(batch_body_start[k], batch_body_start[k + 1]):
            x = batch_bodies[q]
            for j in range(body_contact_start[x], body_contact_start[x + 1]):
                t = body_contacts[j]
                links[j, 0] = t
                links[j, 1] = contact_body_b[t] if contact_body_a[t] == x else ~contact_body_a[t]
    contact_rows(j0, j1, bin_batches, batch_contact_start, batch_contacts, contact_body_a, contact_body_b,
                 contact_point, contact_normal, body_position, body_inv_mass, body_inv_inertia_world, rigid, basis,
                 kinv, krow, r_a, r_b, jrow)
    # Warm start (tumble, issue 18; not in 004, which starts every step from zero impulses): the impulse
    # P0 = warm_n n + warm_t (the caller's fraction of what the contact's matched point took last step, 001
    # §8's contact cache) is applied to both bodies before the closing set is formed: v_b += P0 / m_b,
    # w_b += I_b^-1 (r_b x P0), and the opposite on a. A resting contact then starts near the impulse that
    # holds it and the loop only corrects the change, where from zero each of a pile's stages stopped at its
    # cap with ~60 % of its contacts still closing (pile1000, dt 1/100, 2 s). Impulses stay one-sided: a
    # warm impulse that is too large leaves the contact separating, never pulling. Contacts with a sleeping
    # body take none (a sleeping body keeps its zero velocity), fixed bodies none (rigid).
    # Only resting contacts take one: those whose normal velocity before any warm impulse (after gravity)
    # lies in [-warm_speed, resolution_threshold] (warm_speed: the caller's 2 |g| dt: a contact under a
    # load closes at most at about |g| dt). An impact's impulse (pile1000 falling: ~20 N s) or one of a
    # contact now opening is not the next step's, and warming with it launched the pile (KE 4e3 -> 2e4 J).
    if warm_n.shape[0] > 0:
        for jb in range(j0, j1):
            k = bin_batches[jb]
            for j in range(batch_contact_start[k], batch_contact_start[k + 1]):
                c = batch_contacts[j]
                u = normal_velocity(c, contact_body_a, contact_body_b, jrow, v, w)
                if u < -warm_speed or u > resolution_threshold:
                    warm_n[c] = 0.0
        for jb in range(j0, j1):
            k = bin_batches[jb]
            for j in range(batch_contact_start[k], batch_contact_start[k + 1]):
                c = batch_contacts[j]
                a, b = contact_body_a[c], contact_body_b[c]
                if body_asleep[a] or body_asleep[b] or warm_n[c] <= 0.0:
                    warm_n[c] = 0.0
                    warm_t[c, 0] = 0.0
                    warm_t[c, 1] = 0.0
                    warm_t[c, 2] = 0.0
                    continue
                p0 = warm_n[c] * contact_normal[c, 0] + warm_t[c, 0]
                p1 = warm_n[c] * contact_normal[c, 1] + warm_t[c, 1]
                p2 = warm_n[c] * contact_normal[c, 2] + warm_t[c, 2]
                for side in range(2):
                    i = a if side == 0 else b
                    if rigid[i]:
                        continue
                    sg = -1.0 if side == 0 else 1.0
                    q0, q1, q2 = sg * p0, sg * p1, sg * p2
                    if side == 0:
                        r0, r1, r2 = r_a[c, 0], r_a[c, 1], r_a[c, 2]
                    else:
                        r0, r1, r2 = r_b[c, 0], r_b[c, 1], r_b[c, 2]
                    im = body_inv_mass[i]
                    v[i, 0] += im * q0
                    v[i, 1] += im * q1
                    v[i, 2] += im * q2
                    t0 = r1 * q2 - r2 * q1
                    t1 = r2 * q0 - r0 * q2
                    t2 = r0 * q1 - r1 * q0
                    for kk in range(3):
                        w[i, kk] += (body_inv_inertia_world[i, kk, 0] * t0 + body_inv_inertia_world[i, kk, 1] * t1
                                     + body_inv_inertia_world[i, kk, 2] * t2)
        # The loop below can only add impulses, so a warm impulse larger than the contact now needs (it
        # was taken in an impact, or the load moved) would push the bodies apart and, stored again, keep
        # doing so every step. WARM_SWEEPS Gauss-Seidel sweeps take such impulses back: a contact that
        # separates (u0 > 0) scales its warm impulse by s in [0, 1] so u0 returns to 0:
        # u0 + (s - 1) D = 0 with D = krow . (P0 in contact space) the normal speed P0 gives the contact
        # (K_c's first row, Eq. 3.5.6), the accumulated warm impulse never below zero (projected GS).
        for _ in range(WARM_SWEEPS):
            for jb in range(j0, j1):
                k = bin_batches[jb]
                for j in range(batch_contact_start[k], batch_contact_start[k + 1]):
                    c = batch_contacts[j]
                    if warm_n[c] <= 0.0:
                        continue
                    u0 = normal_velocity(c, contact_body_a, contact_body_b, jrow, v, w)
                    if u0 <= 0.0:
                        continue
                    p0 = warm_n[c] * contact_normal[c, 0] + warm_t[c, 0]
                    p1 = warm_n[c] * contact_normal[c, 1] + warm_t[c, 1]
                    p2 = warm_n[c] * contact_normal[c, 2] + warm_t[c, 2]
                    dd = 0.0
                    for q in range(3):
                        dd += krow[c, q] * (basis[c, 0, q] * p0 + basis[c, 1, q] * p1 + basis[c, 2, q] * p2)
                    if dd <= 0.0:
                        continue
                    sc = max(0.0, 1.0 - u0 / dd)
                    warm_n[c] *= sc
                    for q in range(3):
                        warm_t[c, q] *= sc
                    a, b = contact_body_a[c], contact_body_b[c]
                    for side in range(2):
                        i = a if side == 0 else b
                        if rigid[i]:
                            continue
                        sg = (sc - 1.0) * (-1.0 if side == 0 else 1.0)
                        q0, q1, q2 = sg * p0, sg * p1, sg * p2
                        if side == 0:
                            r0, r1, r2 = r_a[c, 0], r_a[c, 1], r_a[c, 2]
                        else:
                            r0, r1, r2 = r_b[c, 0], r_b[c, 1], r_b[c, 2]
                        im = body_inv_mass[i]
                        v[i, 0] += im * q0
                        v[i, 1] += im * q1
                        v[i, 2] += im * q2
                        t0 = r1 * q2 - r2 * q1
                        t1 = r2 * q0 - r0 * q2
                        t2 = r0 * q1 - r1 * q0
                        for kk in range(3):
                            w[i, kk] += (body_inv_inertia_world[i, kk, 0] * t0
                                         + body_inv_inertia_world[i, kk, 1] * t1
                                         + body_inv_inertia_world[i, kk, 2] * t2)
    _resolve_loop(j0, j1, bin_batches, batch_contact_start, batch_contacts, max_iterations_factor, stats, 0, 0, stamp,
                  1, heap, 0, pos, hkey, closing_speed_order, slip_speed,
                  resolution_threshold, contact_body_a, contact_body_b,
                  basis, kinv, krow, r_a, r_b, jrow, restitution, mu_s, mu_k, restitution_threshold, rigid, body_fixed,
                  body_asleep, body_inv_mass, body_inv_inertia_world, v, w, unormal, impulse, normal_impulse,
                  body_contact_start, links)
    for jb in range(j0, j1):
        k = bin_batches[jb]
        cs, ce = batch_contact_start[k], batch_contact_start[k + 1]
        if stats[k, 2] > 0 and shock_propagation:  # the cap left closing contacts: Alg. 10
            stats[k, 2] = _shock_propagation(
                k, cs, batch_body_start[k], batch_body_start[k + 1], bin_batches, batch_contact_start, batch_contacts,
                batch_bodies, body_contact_start, body_contacts, contact_body_a, contact_body_b, contact_point,
                contact_normal, body_position, restitution, mu_s, mu_k, body_inv_mass, body_inv_inertia_world,
                body_fixed, body_asleep, v, w, resolution_threshold, restitution_threshold, shock_iterations_factor,
                stage_below_only, seed_dir, closing_speed_order, slip_speed,
                basis, kinv, krow, r_a, r_b, jrow, unormal, hkey, heap, pos,
                stamp, rigid, body_mark, layer, impulse, normal_impulse, stats, links)
            # closing_left counts every contact of the batch still closing after all stages (an earlier
            # stage that hit its cap leaves closing contacts under frozen bodies, which the last stage's
            # heap never sees)
            left = 0
            for j in range(cs, ce):
                u = normal_velocity(batch_contacts[j], contact_body_a, contact_body_b, jrow, v, w)
                if u < -resolution_threshold:
                    left += 1
            stats[k, 2] = left
        for j in range(cs, ce):
            c = batch_contacts[j]
            stamp[c] = 0
            if warm_n.shape[0] > 0:  # the step's impulse is the warm one plus the loop's
                normal_impulse[c] += warm_n[c]
                for q in range(3):
                    impulse[c, q] += warm_n[c] * contact_normal[c, q] + warm_t[c, q]
            pn = impulse[c, 0] * basis[c, 0, 0] + impulse[c, 1] * basis[c, 1, 0] + impulse[c, 2] * basis[c, 2, 0]
            for q in range(3):  # keep the tangential (friction) part: the normal part is normal_impulse
                impulse[c, q] -= pn * basis[c, q, 0]


@kernel(exact=True, error_model="numpy")
def _shock_propagation(k, cs, bs, be, bin_batches, batch_contact_start, batch_contacts, batch_bodies,
                       body_contact_start, body_contacts, contact_body_a, contact_body_b, contact_point, contact_normal,
                       body_position, restitution, mu_s, mu_k, body_inv_mass, body_inv_inertia_world,
                       body_fixed, body_asleep, v, w, resolution_threshold, restitution_threshold,
                       shock_iterations_factor, stage_below_only, seed_dir, closing_speed_order, slip_speed,
                       basis, kinv, krow, r_a, r_b,
                       jrow, unormal, hkey, heap, pos, stamp, rigid, body_mark, layer, impulse, normal_impulse, stats,
                       links):
    """Alg. 10: layer by layer from the bodies touching a fixed body (along ``seed_dir`` if it is not
    zero: see below), each stage resolves the contacts
    of its bodies (cap ``shock_iterations_factor`` x the stage's contacts), then freezes them
    (infinite mass: they take no more impulses, keep their velocity) so the layers above must get out
    of their way. Returns the closing contacts left in the last stage. body_mark: 0 unseen, 1 queued,
    2 frozen; restored to 0 (and ``rigid`` to ``body_fixed``) at the end."""
    span = np.empty(2, np.int64)  # contact_rows' list: heap[span[0]:span[1]]
    first = np.zeros(1, np.int64)
    nsub = 0
    # First layer. Alg. 10 line 3-5: every body sharing a contact with a fixed body. With a seed
    # direction s (the unit gravity; tumble, issue 18) only those whose fixed partner lies along s:
    # n_XY . s > 0 with n_XY from the body X to the fixed one (the ground under it, not a wall beside
    # it). Why: a wall seeds a sphere high up in a pile into the first stage; frozen with the downward
    # velocity the global phase left it, it then drives the bodies under it (later stages, which
    # "have to move out of the way") into the frozen layers below them, where no impulse can stop
    # the approach (a 3-sphere column touching a wall: it ends moving down at 4 mm/s, 0.6 mm/s seeded;
    # pile1000 at 240 Hz: 109 mm overlap and KE 112 J at 4 s, 42 mm and 1.2 J seeded). Seeding from
    # the supports makes the stages the bottom-up layers of Fig. 23 and of Guendelman et al.'s contact graph; walls join
    # in the stage that reaches their bodies. A batch with no such support falls back to Alg. 10's.
    seeded = seed_dir[0] != 0.0 or seed_dir[1] != 0.0 or seed_dir[2] != 0.0
    for attempt in range(2):
        for j in range(bs, be):
            x = batch_bodies[j]
            for q in range(body_contact_start[x], body_contact_start[x + 1]):
                c = body_contacts[q]
                x_is_a = contact_body_a[c] == x
                y = contact_body_b[c] if x_is_a else contact_body_a[c]
                if not body_fixed[y]:
                    continue
                if seeded and attempt == 0:
                    ns = (contact_normal[c, 0] * seed_dir[0] + contact_normal[c, 1] * seed_dir[1]
                          + contact_normal[c, 2] * seed_dir[2])
                    if (ns if x_is_a else -ns) <= SEED_COS:
                        continue
                layer[bs + nsub] = x
                body_mark[x] = 1
                nsub += 1
                break
        if nsub > 0 or not seeded:
            break
    stage = 0
    left = 0
    shock_it = 0
    while nsub > 0:
        stage += 1
        want = stage + 1  # stamp of this stage's contacts (1 was the global phase)
        size = 0
        nstage = 0
        for s in range(nsub):
            x = layer[bs + s]
            for q in range(body_contact_start[x], body_contact_start[x + 1]):
                c = body_contacts[q]
                if stamp[c] == want or (rigid[contact_body_a[c]] and rigid[contact_body_b[c]]):
                    continue
                y = contact_body_b[c] if contact_body_a[c] == x else contact_body_a[c]
                if stage_below_only and not (rigid[y] or body_mark[y] == 1):
                    continue  # a contact with the next layer waits for that layer's stage
                stamp[c] = want
                nstage += 1
                u = normal_velocity(c, contact_body_a, contact_body_b, jrow, v, w)
                unormal[c] = u
                if u < -resolution_threshold:  # appended; _resolve_loop heapifies
                    heap[cs + size] = c
                    hkey[cs + size] = u if closing_speed_order else float(c)
                    pos[c] = size
                    size += 1
        cap = int(shock_iterations_factor * nstage)
        it, size = _resolve_loop(0, 0, bin_batches, batch_contact_start, batch_contacts, 0.0, stats, size, cap, stamp,
                                 want, heap, cs, pos, hkey, closing_speed_order, slip_speed,
                                 resolution_threshold, contact_body_a,
                                 contact_body_b, basis, kinv, krow, r_a, r_b, jrow, restitution, mu_s, mu_k,
                                 restitution_threshold, rigid, body_fixed, body_asleep, body_inv_mass,
                                 body_inv_inertia_world, v, w, unormal, impulse, normal_impulse, body_contact_start,
                                 links)
        shock_it += it
        left = _closing_left(heap, cs, size, unormal, resolution_threshold)
        _clear_heap(heap, cs, size, pos)
        for s in range(nsub):  # freeze this layer
            x = layer[bs + s]
            body_mark[x] = 2
            rigid[x] = True
        # next layer: unprocessed dynamic neighbours; contacts between a frozen and an unfrozen body get
        # their K recomputed with the frozen side rigid
        nnext = 0
        nrows = 0
        for s in range(nsub):
            x = layer[bs + s]
            for q in range(body_contact_start[x], body_contact_start[x + 1]):
                c = body_contacts[q]
                y = contact_body_b[c] if contact_body_a[c] == x else contact_body_a[c]
                if body_fixed[y] or body_mark[y] == 2:
                    continue
                heap[cs + nrows] = c  # (the heap is empty between stages: its slots list these contacts)
                nrows += 1
                if body_mark[y] == 0:
                    body_mark[y] = 1
                    layer[bs + nsub + nnext] = y  # after the current layer: no overlap while we read it
                    nnext += 1
        span[0], span[1] = cs, cs + nrows
        contact_rows(0, 1, first, span, heap, contact_body_a, contact_body_b, contact_point, contact_normal,
                     body_position, body_inv_mass, body_inv_inertia_world, rigid, basis, kinv, krow, r_a, r_b, jrow)
        for s in range(nnext):
            layer[bs + s] = layer[bs + nsub + s]
        nsub = nnext
    for j in range(bs, be):  # restore the masses (Alg. 10's last line)
        x = batch_bodies[j]
        body_mark[x] = 0
        rigid[x] = body_fixed[x]
    stats[k, 1] = stage
    stats[k, 3] = shock_it
    return left


@kernel(exact=True, parallel=True, error_model="numpy")
def resolve_bins_parallel(nbins, bin_start, bin_batches, batch_contact_start, batch_contacts, batch_body_start,
                          batch_bodies, body_contact_start, body_contacts, contact_body_a, contact_body_b,
                          contact_point, contact_normal, restitution, mu_s, mu_k, body_position, body_inv_mass,
                          body_inv_inertia_world, body_fixed, body_asleep, v, w, resolution_threshold,
                          restitution_threshold, max_iterations_factor, shock_propagation, shock_iterations_factor,
                          stage_below_only, seed_dir, closing_speed_order, slip_speed,
                          basis, kinv, krow, r_a, r_b, jrow, unormal, hkey, heap,
                          pos, stamp, rigid, body_mark, layer, impulse, normal_impulse, warm_n, warm_t, warm_speed,
                          stats):
    """Every active batch, one bin of batches per thread (``batches.assign_bins``)."""
    for t in prange(nbins):
        resolve_batches(bin_start[t], bin_start[t + 1], bin_batches, batch_contact_start, batch_contacts,
                        batch_body_start, batch_bodies, body_contact_start, body_contacts, contact_body_a,
                        contact_body_b, contact_point, contact_normal, restitution, mu_s, mu_k, body_position,
                        body_inv_mass, body_inv_inertia_world, body_fixed, body_asleep, v, w, resolution_threshold,
                        restitution_threshold, max_iterations_factor, shock_propagation, shock_iterations_factor,
                        stage_below_only, seed_dir, closing_speed_order, slip_speed,
                        basis, kinv, krow, r_a, r_b, jrow, unormal, hkey, heap,
                        pos, stamp, rigid, body_mark, layer, impulse, normal_impulse, warm_n, warm_t, warm_speed, stats)


@kernel(exact=True, error_model="numpy")
def resolve_bins_serial(nbins, bin_start, bin_batches, batch_contact_start, batch_contacts, batch_body_start,
                        batch_bodies, body_contact_start, body_contacts, contact_body_a, contact_body_b,
                        contact_point, contact_normal, restitution, mu_s, mu_k, body_position, body_inv_mass,
                        body_inv_inertia_world, body_fixed, body_asleep, v, w, resolution_threshold,
                        restitution_threshold, max_iterations_factor, shock_propagation, shock_iterations_factor,
                        stage_below_only, seed_dir, closing_speed_order, slip_speed,
                        basis, kinv, krow, r_a, r_b, jrow, unormal, hkey, heap,
                        pos, stamp, rigid, body_mark, layer, impulse, normal_impulse, warm_n, warm_t, warm_speed,
                        stats):
    """The same on one thread (small scenes: no thread wake-ups)."""
    resolve_batches(bin_start[0], bin_start[nbins], bin_batches, batch_contact_start, batch_contacts,
                    batch_body_start, batch_bodies, body_contact_start, body_contacts, contact_body_a,
                    contact_body_b, contact_point, contact_normal, restitution, mu_s, mu_k, body_position,
                    body_inv_mass, body_inv_inertia_world, body_fixed, body_asleep, v, w, resolution_threshold,
                    restitution_threshold, max_iterations_factor, shock_propagation, shock_iterations_factor,
                    stage_below_only, seed_dir, closing_speed_order, slip_speed,
                    basis, kinv, krow, r_a, r_b, jrow, unormal, hkey, heap,
                    pos, stamp, rigid, body_mark, layer, impulse, normal_impulse, warm_n, warm_t, warm_speed, stats)
