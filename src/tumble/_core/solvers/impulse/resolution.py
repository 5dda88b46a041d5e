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
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from tumble._core.solvers.impulse.heap import heap_push, heap_remove, heap_sift_down, heap_sift_up

#: |n_z| below this counts as n_z = 0 in the basis rule of Eq. 3.3.2 (the exact test is fragile)
BASIS_TOLERANCE = 1e-12
#: with max_iterations_factor 0 ("unlimited", the high-accuracy preset) a batch still stops after this
#: many iterations per contact: an elastic cluster can in principle exchange impulses forever
UNLIMITED_FACTOR = 1000.0


@njit(cache=True)
def contact_basis(n, B):
    """Columns x = n, y (Eq. 3.3.2: (n1, -n0, 0) if n2 = 0, else (0, n2, -n1), normalised),
    z = x cross y (Eq. 3.3.3, unit already). B^T is its inverse (Eq. 3.3.5)."""
    if abs(n[2]) < BASIS_TOLERANCE:
        y0, y1, y2 = n[1], -n[0], 0.0
    else:
        y0, y1, y2 = 0.0, n[2], -n[1]
    inv = 1.0 / math.sqrt(y0 * y0 + y1 * y1 + y2 * y2)
    y0 *= inv
    y1 *= inv
    y2 *= inv
    B[0, 0], B[1, 0], B[2, 0] = n[0], n[1], n[2]
    B[0, 1], B[1, 1], B[2, 1] = y0, y1, y2
    B[0, 2] = n[1] * y2 - n[2] * y1
    B[1, 2] = n[2] * y0 - n[0] * y2
    B[2, 2] = n[0] * y1 - n[1] * y0


@njit(cache=True)
def _add_body_block(K, r0, r1, r2, inv_mass, Ii):
    """K += (1/m) E - R I^-1 R with R = skew(r) (the point velocity change per unit impulse), written
    out: R = [[0, -r2, r1], [r2, 0, -r0], [-r1, r0, 0]], no temporaries."""
    # T = I^-1 R (3x3), then K -= R T
    t00 = Ii[0, 1] * r2 - Ii[0, 2] * r1
    t01 = -Ii[0, 0] * r2 + Ii[0, 2] * r0
    t02 = Ii[0, 0] * r1 - Ii[0, 1] * r0
    t10 = Ii[1, 1] * r2 - Ii[1, 2] * r1
    t11 = -Ii[1, 0] * r2 + Ii[1, 2] * r0
    t12 = Ii[1, 0] * r1 - Ii[1, 1] * r0
    t20 = Ii[2, 1] * r2 - Ii[2, 2] * r1
    t21 = -Ii[2, 0] * r2 + Ii[2, 2] * r0
    t22 = Ii[2, 0] * r1 - Ii[2, 1] * r0
    K[0, 0] += inv_mass - (-r2 * t10 + r1 * t20)
    K[0, 1] -= -r2 * t11 + r1 * t21
    K[0, 2] -= -r2 * t12 + r1 * t22
    K[1, 0] -= r2 * t00 - r0 * t20
    K[1, 1] += inv_mass - (r2 * t01 - r0 * t21)
    K[1, 2] -= r2 * t02 - r0 * t22
    K[2, 0] -= -r1 * t00 + r0 * t10
    K[2, 1] -= -r1 * t01 + r0 * t11
    K[2, 2] += inv_mass - (-r1 * t02 + r0 * t12)


@njit(cache=True)
def _inverse3(M, out):
    a, b, c = M[0, 0], M[0, 1], M[0, 2]
    d, e, f = M[1, 0], M[1, 1], M[1, 2]
    g, h, i = M[2, 0], M[2, 1], M[2, 2]
    A, Bc, C = e * i - f * h, -(d * i - f * g), d * h - e * g
    det = a * A + b * Bc + c * C
    inv = 1.0 / det
    out[0, 0], out[1, 0], out[2, 0] = A * inv, Bc * inv, C * inv
    out[0, 1] = -(b * i - c * h) * inv
    out[1, 1] = (a * i - c * g) * inv
    out[2, 1] = -(a * h - b * g) * inv
    out[0, 2] = (b * f - c * e) * inv
    out[1, 2] = -(a * f - c * d) * inv
    out[2, 2] = (a * e - b * d) * inv


@njit(cache=True)
def contact_matrix(c, contact_body_a, contact_body_b, contact_point, body_position, body_inv_mass,
                   body_inv_inertia_world, rigid, basis, kinv, krow, r_a, r_b, K, Kc):
    """Fill r_a[c], r_b[c], kinv[c] = K_c^-1 and krow[c] = K_c[0, :] for contact c (basis[c] set).
    ``rigid[i]``: body i takes no impulse (fixed, or frozen by shock propagation). K, Kc: (3, 3)
    scratch of the caller (no allocation per contact)."""
    a, b = contact_body_a[c], contact_body_b[c]
    for k in range(3):
        r_a[c, k] = contact_point[c, k] - body_position[a, k]
        r_b[c, k] = contact_point[c, k] - body_position[b, k]
    for i in range(3):
        for j in range(3):
            K[i, j] = 0.0
    if not rigid[a]:
        _add_body_block(K, r_a[c, 0], r_a[c, 1], r_a[c, 2], body_inv_mass[a], body_inv_inertia_world[a])
    if not rigid[b]:
        _add_body_block(K, r_b[c, 0], r_b[c, 1], r_b[c, 2], body_inv_mass[b], body_inv_inertia_world[b])
    B = basis[c]
    for i in range(3):  # Kc = B^T K B, symmetrised (symmetric in exact arithmetic)
        for j in range(i, 3):
            acc = 0.0
            for p in range(3):
                kb = K[p, 0] * B[0, j] + K[p, 1] * B[1, j] + K[p, 2] * B[2, j]
                acc += B[p, i] * kb
            Kc[i, j] = acc
    for i in range(3):
        for j in range(i):
            Kc[i, j] = Kc[j, i]
    _inverse3(Kc, kinv[c])
    for k in range(3):
        krow[c, k] = Kc[0, k]


@njit(cache=True, inline="always")
def normal_velocity(c, contact_body_a, contact_body_b, basis, r_a, r_b, v, w):
    """u . n, the relative normal velocity of contact c (Eq. 3.4.2; < 0 closing)."""
    a, b = contact_body_a[c], contact_body_b[c]
    ra0, ra1, ra2 = r_a[c, 0], r_a[c, 1], r_a[c, 2]
    rb0, rb1, rb2 = r_b[c, 0], r_b[c, 1], r_b[c, 2]
    u_x = (v[b, 0] + w[b, 1] * rb2 - w[b, 2] * rb1) - (v[a, 0] + w[a, 1] * ra2 - w[a, 2] * ra1)
    u_y = (v[b, 1] + w[b, 2] * rb0 - w[b, 0] * rb2) - (v[a, 1] + w[a, 2] * ra0 - w[a, 0] * ra2)
    u_z = (v[b, 2] + w[b, 0] * rb1 - w[b, 1] * rb0) - (v[a, 2] + w[a, 0] * ra1 - w[a, 1] * ra0)
    return basis[c, 0, 0] * u_x + basis[c, 1, 0] * u_y + basis[c, 2, 0] * u_z


@njit(cache=True, inline="always")
def resolve_contact(c, contact_body_a, contact_body_b, basis, kinv, krow, r_a, r_b, restitution, mu_s, mu_k,
                    restitution_threshold, rigid, body_inv_mass, body_inv_inertia_world, v, w, impulse):
    """Alg. 8 with Alg. 11: the impulse that gives contact c its wanted velocity change.

    Wanted change in contact space: (-(1 + e) u0, -u1, -u2), with e := 0 when the closing speed -u0
    is below the restitution threshold (resting contacts never bounce, Eq. 3.8.1). dj = K_c^-1 of it
    is static friction; outside the cone |dj_t| > mu_s dj0 the kinetic impulse keeps the normal row
    exact on the cone of mu_k (Eq. 3.5.5-3.5.8). Adds the world impulse to ``impulse[c]``; returns
    its normal part dj0."""
    a, b = contact_body_a[c], contact_body_b[c]
    ra0, ra1, ra2 = r_a[c, 0], r_a[c, 1], r_a[c, 2]
    rb0, rb1, rb2 = r_b[c, 0], r_b[c, 1], r_b[c, 2]
    u_x = (v[b, 0] + w[b, 1] * rb2 - w[b, 2] * rb1) - (v[a, 0] + w[a, 1] * ra2 - w[a, 2] * ra1)
    u_y = (v[b, 1] + w[b, 2] * rb0 - w[b, 0] * rb2) - (v[a, 1] + w[a, 2] * ra0 - w[a, 0] * ra2)
    u_z = (v[b, 2] + w[b, 0] * rb1 - w[b, 1] * rb0) - (v[a, 2] + w[a, 0] * ra1 - w[a, 1] * ra0)
    B = basis[c]
    u0 = B[0, 0] * u_x + B[1, 0] * u_y + B[2, 0] * u_z
    u1 = B[0, 1] * u_x + B[1, 1] * u_y + B[2, 1] * u_z
    u2 = B[0, 2] * u_x + B[1, 2] * u_y + B[2, 2] * u_z
    e = restitution[c] if -u0 >= restitution_threshold else 0.0
    t0, t1, t2 = -(1.0 + e) * u0, -u1, -u2
    Ki = kinv[c]
    j0 = Ki[0, 0] * t0 + Ki[0, 1] * t1 + Ki[0, 2] * t2
    j1 = Ki[1, 0] * t0 + Ki[1, 1] * t1 + Ki[1, 2] * t2
    j2 = Ki[2, 0] * t0 + Ki[2, 1] * t1 + Ki[2, 2] * t2
    alpha = j1 * j1 + j2 * j2
    ms = mu_s[c]
    if alpha > ms * ms * j0 * j0:
        beta = mu_k[c] / math.sqrt(alpha)
        j0 = t0 / (krow[c, 0] + beta * (krow[c, 1] * j1 + krow[c, 2] * j2))
        lam = beta * j0
        j1 *= lam
        j2 *= lam
    p0 = B[0, 0] * j0 + B[0, 1] * j1 + B[0, 2] * j2
    p1 = B[1, 0] * j0 + B[1, 1] * j1 + B[1, 2] * j2
    p2 = B[2, 0] * j0 + B[2, 1] * j1 + B[2, 2] * j2
    impulse[c, 0] += p0
    impulse[c, 1] += p1
    impulse[c, 2] += p2
    if not rigid[b]:
        _apply(b, p0, p1, p2, rb0, rb1, rb2, 1.0, body_inv_mass, body_inv_inertia_world, v, w)
    if not rigid[a]:
        _apply(a, p0, p1, p2, ra0, ra1, ra2, -1.0, body_inv_mass, body_inv_inertia_world, v, w)
    return j0


@njit(cache=True, inline="always")
def _apply(i, p0, p1, p2, r0, r1, r2, sign, body_inv_mass, body_inv_inertia_world, v, w):
    """v += sign P / m;  w += sign I^-1 (r x P)  (Eq. 3.4.4)."""
    m = body_inv_mass[i] * sign
    tx = r1 * p2 - r2 * p1
    ty = r2 * p0 - r0 * p2
    tz = r0 * p1 - r1 * p0
    Ii = body_inv_inertia_world[i]
    v[i, 0] += m * p0
    v[i, 1] += m * p1
    v[i, 2] += m * p2
    for k in range(3):
        w[i, k] += sign * (Ii[k, 0] * tx + Ii[k, 1] * ty + Ii[k, 2] * tz)


@njit(cache=True, inline="always")
def _affected_update(c, stamp, want, body, body_contact_start, body_contacts, rigid, contact_body_a, contact_body_b,
                     basis, r_a, r_b, v, w, unormal, hkey, closing_speed_order, threshold, heap, base, size, pos):
    """Re-evaluate the contacts of ``body`` after a resolution (§3.8's affected list) and keep the
    heap of closing contacts in step. Only contacts whose ``stamp`` equals ``want`` take part."""
    for j in range(body_contact_start[body], body_contact_start[body + 1]):
        t = body_contacts[j]
        if stamp[t] != want:
            continue
        u = normal_velocity(t, contact_body_a, contact_body_b, basis, r_a, r_b, v, w)
        unormal[t] = u
        if u < -threshold:
            if pos[t] < 0:
                if closing_speed_order:
                    hkey[t] = u
                size = heap_push(heap, base, size, pos, hkey, t)
            elif closing_speed_order:  # only the way the key moved needs sifting
                old = hkey[t]
                hkey[t] = u
                if u < old:
                    heap_sift_up(heap, base, pos, hkey, pos[t])
                elif u > old:
                    heap_sift_down(heap, base, size, pos, hkey, pos[t])
        elif pos[t] >= 0:
            size = heap_remove(heap, base, size, pos, hkey, t)
    return size


@njit(cache=True)
def _resolve_loop(size, cap, stamp, want, heap, base, pos, hkey, closing_speed_order, threshold, contact_body_a,
                  contact_body_b, basis, kinv, krow, r_a, r_b, restitution, mu_s, mu_k, restitution_threshold, rigid,
                  body_fixed, body_asleep, body_inv_mass, body_inv_inertia_world, v, w, unormal, impulse,
                  normal_impulse, body_contact_start, body_contacts):
    """Alg. 9's loop: resolve the heap's top, update the affected contacts, until the heap is empty
    or ``cap`` iterations. Returns (iterations, contacts still closing)."""
    it = 0
    while size > 0 and it < cap:
        c = heap[base]
        normal_impulse[c] += resolve_contact(c, contact_body_a, contact_body_b, basis, kinv, krow, r_a, r_b,
                                             restitution, mu_s, mu_k, restitution_threshold, rigid, body_inv_mass,
                                             body_inv_inertia_world, v, w, impulse)
        a, b = contact_body_a[c], contact_body_b[c]
        if not body_fixed[a]:
            body_asleep[a] = False  # wake rule 3: a contact of it was processed
        if not body_fixed[b]:
            body_asleep[b] = False
        if not rigid[a]:
            size = _affected_update(c, stamp, want, a, body_contact_start, body_contacts, rigid, contact_body_a,
                                    contact_body_b, basis, r_a, r_b, v, w, unormal, hkey, closing_speed_order,
                                    threshold, heap, base, size, pos)
        if not rigid[b] and b != a:
            size = _affected_update(c, stamp, want, b, body_contact_start, body_contacts, rigid, contact_body_a,
                                    contact_body_b, basis, r_a, r_b, v, w, unormal, hkey, closing_speed_order,
                                    threshold, heap, base, size, pos)
        if pos[c] >= 0 and rigid[a] and rigid[b]:  # cannot happen for a stage contact; never loop on it
            size = heap_remove(heap, base, size, pos, hkey, c)
        it += 1
    return it, size


@njit(cache=True)
def _clear_heap(heap, base, size, pos):
    for i in range(size):
        pos[heap[base + i]] = -1


@njit(cache=True)
def resolve_batch(k, batch_contact_start, batch_contacts, batch_body_start, batch_bodies, body_contact_start,
                  body_contacts, contact_body_a, contact_body_b, contact_point, contact_normal, restitution, mu_s, mu_k,
                  body_position, body_inv_mass, body_inv_inertia_world, body_fixed, body_asleep, v, w,
                  resolution_threshold, restitution_threshold, max_iterations_factor, shock_propagation,
                  shock_iterations_factor, stage_below_only, closing_speed_order, basis, kinv, krow, r_a, r_b,
                  unormal, hkey, heap, pos, stamp, rigid, body_mark, layer, impulse, normal_impulse, stats):
    """Resolve batch k: Alg. 9, then Alg. 10 if the cap left closing contacts.

    Scratch (sized for all contacts / bodies; batch k only touches its own entries, so batches can
    run in parallel): heap (m,) (this batch uses heap[cs:ce]), pos (m,) = -1, stamp (m,) = 0, hkey (m,),
    rigid (n,) = body_fixed, body_mark (n,) = 0, layer (n,) (this batch uses layer[bs:be]).
    stats[k] = (iterations, shock stages, closing contacts left, shock iterations)."""
    cs, ce = batch_contact_start[k], batch_contact_start[k + 1]
    bs, be = batch_body_start[k], batch_body_start[k + 1]
    ncont = ce - cs
    size = 0
    K = np.empty((3, 3))
    Kc = np.empty((3, 3))
    for j in range(cs, ce):  # initialisation: basis, K_c^-1, velocities; the closing set
        c = batch_contacts[j]
        contact_basis(contact_normal[c], basis[c])
        contact_matrix(c, contact_body_a, contact_body_b, contact_point, body_position, body_inv_mass,
                       body_inv_inertia_world, rigid, basis, kinv, krow, r_a, r_b, K, Kc)
        for q in range(3):
            impulse[c, q] = 0.0
        normal_impulse[c] = 0.0
        u = normal_velocity(c, contact_body_a, contact_body_b, basis, r_a, r_b, v, w)
        unormal[c] = u
        hkey[c] = u if closing_speed_order else float(c)
        stamp[c] = 1
        if u < -resolution_threshold:
            size = heap_push(heap, cs, size, pos, hkey, c)
    factor = max_iterations_factor if max_iterations_factor > 0.0 else UNLIMITED_FACTOR
    cap = int(factor * ncont) + 1 if max_iterations_factor <= 0.0 else int(factor * ncont)
    it, size = _resolve_loop(size, cap, stamp, 1, heap, cs, pos, hkey, closing_speed_order, resolution_threshold,
                             contact_body_a, contact_body_b, basis, kinv, krow, r_a, r_b, restitution, mu_s, mu_k,
                             restitution_threshold, rigid, body_fixed, body_asleep, body_inv_mass,
                             body_inv_inertia_world, v, w, unormal, impulse, normal_impulse, body_contact_start,
                             body_contacts)
    stats[k, 0] = it
    stats[k, 1] = 0
    stats[k, 3] = 0
    _clear_heap(heap, cs, size, pos)
    if size > 0 and shock_propagation:
        size = _shock_propagation(k, cs, bs, be, batch_bodies, body_contact_start, body_contacts, contact_body_a,
                                  contact_body_b, contact_point, body_position, restitution, mu_s, mu_k, body_inv_mass,
                                  body_inv_inertia_world, body_fixed, body_asleep, v, w, resolution_threshold,
                                  restitution_threshold, shock_iterations_factor, stage_below_only,
                                  closing_speed_order, basis, kinv, krow, r_a, r_b, unormal, hkey, heap, pos, stamp,
                                  rigid, body_mark, layer, impulse, normal_impulse, stats)
    stats[k, 2] = size
    for j in range(cs, ce):
        stamp[batch_contacts[j]] = 0


@njit(cache=True)
def _shock_propagation(k, cs, bs, be, batch_bodies, body_contact_start, body_contacts, contact_body_a, contact_body_b,
                       contact_point, body_position, restitution, mu_s, mu_k, body_inv_mass, body_inv_inertia_world,
                       body_fixed, body_asleep, v, w, resolution_threshold, restitution_threshold,
                       shock_iterations_factor, stage_below_only, closing_speed_order, basis, kinv, krow, r_a, r_b,
                       unormal, hkey, heap, pos, stamp, rigid, body_mark, layer, impulse, normal_impulse, stats):
    """Alg. 10: layer by layer from the bodies touching a fixed body, each stage resolves the contacts
    of its bodies (cap ``shock_iterations_factor`` x the stage's contacts), then freezes them
    (infinite mass: they take no more impulses, keep their velocity) so the layers above must get out
    of their way. Returns the closing contacts left in the last stage. body_mark: 0 unseen, 1 queued,
    2 frozen; restored to 0 (and ``rigid`` to ``body_fixed``) at the end."""
    K = np.empty((3, 3))
    Kc = np.empty((3, 3))
    nsub = 0
    for j in range(bs, be):  # first layer: bodies sharing a contact with a fixed body
        x = batch_bodies[j]
        for q in range(body_contact_start[x], body_contact_start[x + 1]):
            c = body_contacts[q]
            y = contact_body_b[c] if contact_body_a[c] == x else contact_body_a[c]
            if body_fixed[y]:
                layer[bs + nsub] = x
                body_mark[x] = 1
                nsub += 1
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
                u = normal_velocity(c, contact_body_a, contact_body_b, basis, r_a, r_b, v, w)
                unormal[c] = u
                if closing_speed_order:
                    hkey[c] = u
                if u < -resolution_threshold:
                    size = heap_push(heap, cs, size, pos, hkey, c)
        cap = int(shock_iterations_factor * nstage)
        it, size = _resolve_loop(size, cap, stamp, want, heap, cs, pos, hkey, closing_speed_order,
                                 resolution_threshold, contact_body_a, contact_body_b, basis, kinv, krow, r_a, r_b,
                                 restitution, mu_s, mu_k, restitution_threshold, rigid, body_fixed, body_asleep,
                                 body_inv_mass, body_inv_inertia_world, v, w, unormal, impulse, normal_impulse,
                                 body_contact_start, body_contacts)
        shock_it += it
        left = size
        _clear_heap(heap, cs, size, pos)
        for s in range(nsub):  # freeze this layer
            x = layer[bs + s]
            body_mark[x] = 2
            rigid[x] = True
        # next layer: unprocessed dynamic neighbours; contacts between a frozen and an unfrozen body get
        # their K recomputed with the frozen side rigid
        nnext = 0
        for s in range(nsub):
            x = layer[bs + s]
            for q in range(body_contact_start[x], body_contact_start[x + 1]):
                c = body_contacts[q]
                y = contact_body_b[c] if contact_body_a[c] == x else contact_body_a[c]
                if body_fixed[y] or body_mark[y] == 2:
                    continue
                contact_matrix(c, contact_body_a, contact_body_b, contact_point, body_position, body_inv_mass,
                               body_inv_inertia_world, rigid, basis, kinv, krow, r_a, r_b, K, Kc)
                if body_mark[y] == 0:
                    body_mark[y] = 1
                    layer[bs + nsub + nnext] = y  # after the current layer: no overlap while we read it
                    nnext += 1
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


@njit(cache=True, parallel=True)
def resolve_bins_parallel(nbins, bin_start, bin_batches, batch_contact_start, batch_contacts, batch_body_start,
                          batch_bodies, body_contact_start, body_contacts, contact_body_a, contact_body_b,
                          contact_point, contact_normal, restitution, mu_s, mu_k, body_position, body_inv_mass,
                          body_inv_inertia_world, body_fixed, body_asleep, v, w, resolution_threshold,
                          restitution_threshold, max_iterations_factor, shock_propagation, shock_iterations_factor,
                          stage_below_only, closing_speed_order, basis, kinv, krow, r_a, r_b, unormal, hkey, heap,
                          pos, stamp, rigid, body_mark, layer, impulse, normal_impulse, stats):
    """Every active batch, one bin of batches per thread (``batches.assign_bins``)."""
    for t in prange(nbins):
        for j in range(bin_start[t], bin_start[t + 1]):
            resolve_batch(bin_batches[j], batch_contact_start, batch_contacts, batch_body_start, batch_bodies,
                          body_contact_start, body_contacts, contact_body_a, contact_body_b, contact_point,
                          contact_normal, restitution, mu_s, mu_k, body_position, body_inv_mass,
                          body_inv_inertia_world, body_fixed, body_asleep, v, w, resolution_threshold,
                          restitution_threshold, max_iterations_factor, shock_propagation, shock_iterations_factor,
                          stage_below_only, closing_speed_order, basis, kinv, krow, r_a, r_b, unormal, hkey, heap,
                          pos, stamp, rigid, body_mark, layer, impulse, normal_impulse, stats)


@njit(cache=True)
def resolve_bins_serial(nbins, bin_start, bin_batches, batch_contact_start, batch_contacts, batch_body_start,
                        batch_bodies, body_contact_start, body_contacts, contact_body_a, contact_body_b,
                        contact_point, contact_normal, restitution, mu_s, mu_k, body_position, body_inv_mass,
                        body_inv_inertia_world, body_fixed, body_asleep, v, w, resolution_threshold,
                        restitution_threshold, max_iterations_factor, shock_propagation, shock_iterations_factor,
                        stage_below_only, closing_speed_order, basis, kinv, krow, r_a, r_b, unormal, hkey, heap, pos,
                        stamp, rigid, body_mark, layer, impulse, normal_impulse, stats):
    """The same on one thread (small scenes: no thread wake-ups)."""
    for t in range(nbins):
        for j in range(bin_start[t], bin_start[t + 1]):
            resolve_batch(bin_batches[j], batch_contact_start, batch_contacts, batch_body_start, batch_bodies,
                          body_contact_start, body_contacts, contact_body_a, contact_body_b, contact_point,
                          contact_normal, restitution, mu_s, mu_k, body_position, body_inv_mass,
                          body_inv_inertia_world, body_fixed, body_asleep, v, w, resolution_threshold,
                          restitution_threshold, max_iterations_factor, shock_propagation, shock_iterations_factor,
                          stage_below_only, closing_speed_order, basis, kinv, krow, r_a, r_b, unormal, hkey, heap,
                          pos, stamp, rigid, body_mark, layer, impulse, normal_impulse, stats)
