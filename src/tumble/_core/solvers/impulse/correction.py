"""Penetration correction (004 chapter 2; digest §1.4): linear moves that undo penetrations, each
moving one body of the contact and pushing whatever it then runs into, choosing among up to four
candidate moves the one that displaces the fewest bodies. No rotations, fixed bodies never move.

Conventions: contact c joins bodies a and b, normal n from a to b, depth > 0 overlap; the thesis'
signed distance is d = -depth and its threshold t_pen < 0 is ``-threshold`` here. The thesis' A is
our b (its normal points B -> A, ours a -> b, so the two normals are the same vector).

For a penetrating contact (depth > threshold), with the stability-adjusted distance
d_corr = d - f_rem t_pen = -(depth - f_rem threshold) (Eq. 2.5.4, so f_rem threshold of overlap is
left on purpose, Fig. 12), the candidates are (Eq. 2.3.1-2.3.3):

* N-b: move b by -d_corr n;  N-a: move a by +d_corr n  (along the normal);
* V-b: move b back along its last displacement s_b = v_b dt by -(d_corr / s_b.n) s_b, allowed when
  s_b.n <= d_corr (b moved into a at least that far along n);
* V-a: move a by (d_corr / s_a.n) s_a, allowed when s_a.n >= -d_corr.

Each candidate is propagated depth-first (Alg. 1 in the explicit-stack form of Alg. 3): a body X
moved by dX pushes each body Y it touches when s = dX . n_XY exceeds the contact's adjusted
distance dC' = d_Cx - f_rem t_pen: Y is moved by ((s - dC') / s) dX (intercept theorem, Eq. 2.3.6;
dX itself when dC' <= 0); a body keeps the longest move it is given; the candidate is invalid if a
push reaches a fixed body or the contact's other body. Candidates are tried in the order: the body
with the higher closing speed at the contact first (Eq. 2.5.1), V before N for each body; a search
stops as soon as it has displaced as many bodies as the best so far (§2.5's early abort). The
thesis' tie rule is ambiguous (digest §1.4): here the fewest displaced bodies win, and among equal
counts a velocity-based move beats a normal one, then the earlier candidate.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from tumble._core.config import kernel

KIND_NORMAL = 0
KIND_VELOCITY = 1


@kernel(exact=True, error_model="numpy")
def _propagate(x0, d00, d01, d02, z, best, best_is_velocity, is_velocity, stamp_value, body_stamp, disp, visited,
               body_contact_start, body_contacts, slot_other, slot_normal, depth, body_fixed, f_threshold, stack_body,
               stack_disp):
    """Alg. 3 for the candidate (x0, d0) of a contact whose other body is z. Fills disp[] of the
    visited bodies (body_stamp == stamp_value marks them; visited[0:count] lists them). Returns the
    number of displaced bodies, or -1 when the candidate is invalid (a push reached a fixed body or
    z) or -2 when it stopped early: it cannot beat ``best`` (a count, or a large number for none).
    stack_body (cap,), stack_disp (cap, 3): the caller's scratch for the depth-first stack (grown
    locally if a search needs more). slot_other / slot_normal: per entry q of the contact lists, the other
    body of contact body_contacts[q] and its normal from the listed body towards it (``correct_batches``).
    Arrays are indexed element by element, never sliced into views: in Numba each view or helper call with
    arrays costs atomic reference counting."""
    if 1 > best or (1 == best and not (is_velocity and not best_is_velocity)):
        return -2  # the moved body alone already ties the best: it cannot win (§2.5 early abort)
    cap = stack_body.shape[0]
    stack_body[0] = x0
    stack_disp[0, 0], stack_disp[0, 1], stack_disp[0, 2] = d00, d01, d02
    top = 1
    body_stamp[x0] = stamp_value
    disp[x0, 0], disp[x0, 1], disp[x0, 2] = d00, d01, d02
    visited[0] = x0
    count = 1
    while top > 0:
        top -= 1
        x = stack_body[top]
        dx0, dx1, dx2 = stack_disp[top, 0], stack_disp[top, 1], stack_disp[top, 2]
        for q in range(body_contact_start[x], body_contact_start[x + 1]):
            y = slot_other[q]
            # s = dX . n_XY, n_XY from x towards y (the list's copy, sign applied: the same bits as
            # sign * (dX . n), since negation is exact)
            s = dx0 * slot_normal[q, 0] + dx1 * slot_normal[q, 1] + dx2 * slot_normal[q, 2]
            dc = -depth[body_contacts[q]] + f_threshold  # dC' = d - f_rem t_pen (Eq. 2.5.5)
            if not (s > 0.0 and s > dc):
                continue
            if body_fixed[y] or y == z:  # Fig. 8 (a), (b)
                return -1
            scale = (s - dc) / s if dc > 0.0 else 1.0  # Eq. 2.3.6
            dy0, dy1, dy2 = scale * dx0, scale * dx1, scale * dx2
            if body_stamp[y] == stamp_value:
                old = disp[y, 0] * disp[y, 0] + disp[y, 1] * disp[y, 1] + disp[y, 2] * disp[y, 2]
                if dy0 * dy0 + dy1 * dy1 + dy2 * dy2 <= old:
                    continue
            else:
                body_stamp[y] = stamp_value
                visited[count] = y
                count += 1
                # §2.5 early abort: no better than the best so far (ties: velocity-based beats normal)
                if count > best or (count == best and not (is_velocity and not best_is_velocity)):
                    return -2
            disp[y, 0], disp[y, 1], disp[y, 2] = dy0, dy1, dy2
            if top == cap:
                cap *= 2
                nb = np.empty(cap, np.int64)
                nd = np.empty((cap, 3))
                nb[:top] = stack_body[:top]
                nd[:top] = stack_disp[:top]
                stack_body, stack_disp = nb, nd
            stack_body[top] = y
            stack_disp[top, 0], stack_disp[top, 1], stack_disp[top, 2] = dy0, dy1, dy2
            top += 1
    return count


@kernel(exact=True, error_model="numpy")
def _candidates(c, contact_body_a, contact_body_b, contact_point, contact_normal, depth, body_position, body_fixed,
                v, w, dt, threshold, f_rem, cand_body, cand_disp, cand_vel):
    """The valid candidate moves of contact c in trial order. Returns their number (<= 4)."""
    a, b = contact_body_a[c], contact_body_b[c]
    n0, n1, n2 = contact_normal[c, 0], contact_normal[c, 1], contact_normal[c, 2]
    d_corr = -(depth[c] - f_rem * threshold)  # Eq. 2.5.4, < 0
    # closing speed of each body at the contact (Eq. 2.5.1): b's towards a is along -n
    sp_b = 0.0
    sp_a = 0.0
    for k in range(3):
        k1, k2 = (k + 1) % 3, (k + 2) % 3
        rb1 = contact_point[c, k1] - body_position[b, k1]
        rb2 = contact_point[c, k2] - body_position[b, k2]
        ra1 = contact_point[c, k1] - body_position[a, k1]
        ra2 = contact_point[c, k2] - body_position[a, k2]
        nk = contact_normal[c, k]
        sp_b -= (v[b, k] + w[b, k1] * rb2 - w[b, k2] * rb1) * nk
        sp_a += (v[a, k] + w[a, k1] * ra2 - w[a, k2] * ra1) * nk
    order = (b, a) if sp_b > sp_a else (a, b)
    m = 0
    for x in order:
        if body_fixed[x]:
            continue
        sn = dt * (v[x, 0] * n0 + v[x, 1] * n1 + v[x, 2] * n2)  # s_x . n
        if x == b:
            if sn <= d_corr and sn < 0.0:  # V-b (Eq. 2.3.2a / 2.3.3a)
                f = -d_corr / sn
                for k in range(3):
                    cand_disp[m, k] = f * dt * v[x, k]
                cand_body[m] = x
                cand_vel[m] = True
                m += 1
            for k in range(3):  # N-b (Eq. 2.3.1a)
                cand_disp[m, k] = -d_corr * contact_normal[c, k]
            cand_body[m] = x
            cand_vel[m] = False
            m += 1
        else:
            if sn >= -d_corr and sn > 0.0:  # V-a (Eq. 2.3.2b / 2.3.3b)
                f = d_corr / sn
                for k in range(3):
                    cand_disp[m, k] = f * dt * v[x, k]
                cand_body[m] = x
                cand_vel[m] = True
                m += 1
            for k in range(3):  # N-a (Eq. 2.3.1b)
                cand_disp[m, k] = d_corr * contact_normal[c, k]
            cand_body[m] = x
            cand_vel[m] = False
            m += 1
    return m


@kernel(exact=True, error_model="numpy")
def _raised(cnt, vis, disp, body_inv_mass, gravity):
    """[J] the potential energy a move raises: sum over its cnt bodies vis[0:cnt] of m (-g . d)."""
    e = 0.0
    for q in range(cnt):
        x = vis[q]
        if body_inv_mass[x] > 0.0:
            e -= (gravity[0] * disp[x, 0] + gravity[1] * disp[x, 1] + gravity[2] * disp[x, 2]) / body_inv_mass[x]
    return e


@kernel(exact=True, error_model="numpy")
def lift_candidates(c, m, contact_body_a, contact_body_b, contact_normal, depth, body_fixed, threshold, f_rem, lift_dir,
                    lift_min_cos, cand_body, cand_disp, cand_vel):
    """The lifts of contact c, written after its m candidates of Alg. 2; returns the new count [tumble, issue 18;
    not in 004]. The upper body x of the contact (the one whose normal away from its partner, n_x, rises:
    n_x . u >= ``lift_min_cos``, u = ``lift_dir`` against gravity) moves straight up by

        delta = (-d_corr / (n_x . u)) u,      so that delta . n_x = -d_corr,

    the same normal separation as its N move (Eq. 2.3.1) but along u. Why: in a pile packed from wall to
    wall every N or V move has a sideways part, and Eq. 2.3.6 passes the whole move on through every
    contact deeper than f_rem t_pen, so the chain reaches a wall or the ground and the move is invalid
    (Fig. 8). Measured, 300 spheres in pile1000's box at dt 1/60, step 100: 243 of 281 penetrating contacts
    had no valid candidate, every failure at a fixed body, 96 % of the failing moves oblique. A move along u
    pushes the bodies above straight up: it never runs into a vertical wall or the ground, so it is valid
    unless it reaches the contact's other body. Bounding n_x . u from below bounds the lift at
    -d_corr / lift_min_cos."""
    a, b = contact_body_a[c], contact_body_b[c]
    nu = contact_normal[c, 0] * lift_dir[0] + contact_normal[c, 1] * lift_dir[1] + contact_normal[c, 2] * lift_dir[2]
    d_corr = -(depth[c] - f_rem * threshold)  # Eq. 2.5.4, < 0
    x = -1
    if nu >= lift_min_cos and not body_fixed[b]:   # n from a to b rises: b is the upper body
        x = b
    elif -nu >= lift_min_cos and not body_fixed[a]:
        x = a
        nu = -nu
    if x < 0:
        return m
    f = -d_corr / nu
    for k in range(3):
        cand_disp[m, k] = f * lift_dir[k]
    cand_body[m] = x
    cand_vel[m] = False
    return m + 1


@kernel(exact=True, error_model="numpy")
def correct_batches(j0, j1, bin_batches, batch_contact_start, batch_contacts, batch_body_start, batch_bodies,
                    body_contact_start, body_contacts, contact_body_a, contact_body_b, contact_point, contact_normal,
                    depth, body_position, body_fixed, body_asleep, v, w, dt, threshold, f_rem, max_bodies, lift_dir,
                    lift_min_cos, body_inv_mass, gravity, budget, body_stamp, disp, visited, in_list, moved,
                    stats):
    """Alg. 2 on each batch k of bin_batches[j0:j1]: every contact deeper than ``threshold`` is
    handled once, in index order. (One call for a run of batches: a Numba call with this many
    arrays costs ~1 us of reference counting.)

    Moves body_position, wakes moved bodies (wake rule 2), updates contact_point and depth of every
    contact of a moved body (Eq. 2.3.7a/b). Scratch: body_stamp (n,) int (reset for the batch's
    bodies here; each trial stamps the bodies it visits with its own number), disp (n, 3), visited
    (n,) (batch k uses visited[bs:be]), in_list (m,) bool, moved (n,) bool (False at start and end).
    stats[k] = (penetrating contacts, corrected, unresolvable, bodies moved).

    ``max_bodies`` > 0: a candidate that would displace more than this many bodies counts as invalid
    (``ImpulseSettings.correction_max_bodies``; not in 004): its search is cut off there by §2.5's
    early abort, started as if a move of max_bodies bodies had already been found; 0 is Alg. 2's
    unbounded search.

    ``lift_dir`` (3,): a unit vector against gravity, or zeros. When no candidate of Alg. 2 is valid (Fig. 8)
    and it is not zero, the contact tries lifts before it is left unresolvable (``lift_candidates``;
    ``ImpulseSettings.correction_lift``, not in 004). stats[k, 1] counts the corrections, lifts included.

    ``budget`` [tumble, issue 18; not in 004]: a move may raise the potential energy of the bodies it moves,
    sum m_i (-g . d_i), by at most what is left of the batch's budget: the potential energy its bodies
    released in this step's position update, sum m_i g . (v_i dt) (the v_i that moved them, Alg. 6), less
    what earlier moves of the batch raised (a move that lowers bodies adds to it). A move over budget counts
    as invalid, like one reaching a fixed body (Fig. 8). So correction and the position update together never
    raise the potential energy: the correction can only give back the height the step's motion took. Why:
    without it the moves pump energy into a pile whose resolution leaves it sinking (pile1000 at dt 1/60:
    150.9 kJ of potential energy added by correction in 120 steps, up to 4.19 kJ in one step, the kinetic
    energy at 37.5 kJ and spheres thrown over the 2 m walls)."""
    # the early abort rejects count >= best, and count == best unless the candidate is velocity-based and
    # the best is not: starting from (max_bodies + 1, velocity-based) admits exactly count <= max_bodies
    best0 = max_bodies + 1 if max_bodies > 0 else 1 << 62
    cand_body = np.empty(6, np.int64)
    cand_disp = np.empty((6, 3))
    cand_vel = np.empty(6, np.bool_)
    lifting = lift_dir[0] != 0.0 or lift_dir[1] != 0.0 or lift_dir[2] != 0.0
    stack_body = np.empty(256, np.int64)
    stack_disp = np.empty((256, 3))
    # the searches' view of the contact lists, entry by entry: the other body and the normal towards it. The
    # search reads these in list order instead of each contact's bodies and normal scattered by contact id
    # (pile1000 at dt 1/100, step 150: 2526 searches, 27274 bodies popped, 105109 contacts tested)
    slot_other = np.empty(body_contacts.shape[0], np.int64)
    slot_normal = np.empty((body_contacts.shape[0], 3))
    for jb in range(j0, j1):
        k = bin_batches[jb]
        cs, ce = batch_contact_start[k], batch_contact_start[k + 1]
        bs, be = batch_body_start[k], batch_body_start[k + 1]
        npen = 0
        for j in range(cs, ce):
            c = batch_contacts[j]
            in_list[c] = depth[c] > threshold
            if in_list[c]:
                npen += 1
        stats[k, 0] = npen
        stats[k, 1] = 0
        stats[k, 2] = 0
        stats[k, 3] = 0
        if npen == 0:
            continue
        f_threshold = f_rem * threshold
        vis = visited[bs:]
        pool = 0.0   # [J] the potential energy this step's position update released (``budget``)
        for j in range(bs, be):
            x = batch_bodies[j]
            body_stamp[x] = 0
            for q in range(body_contact_start[x], body_contact_start[x + 1]):
                t = body_contacts[q]
                x_is_a = contact_body_a[t] == x
                slot_other[q] = contact_body_b[t] if x_is_a else contact_body_a[t]
                for kk in range(3):
                    slot_normal[q, kk] = contact_normal[t, kk] if x_is_a else -contact_normal[t, kk]
            if budget and not body_fixed[x] and not body_asleep[x] and body_inv_mass[x] > 0.0:
                pool += dt * (gravity[0] * v[x, 0] + gravity[1] * v[x, 1] + gravity[2] * v[x, 2]) / body_inv_mass[x]
        trial = 0
        for j in range(cs, ce):
            c = batch_contacts[j]
            if not in_list[c]:
                continue
            a, b = contact_body_a[c], contact_body_b[c]
            m = _candidates(c, contact_body_a, contact_body_b, contact_point, contact_normal, depth, body_position,
                            body_fixed, v, w, dt, threshold, f_rem, cand_body, cand_disp, cand_vel)
            best, best_i, best_vel = best0, -1, max_bodies > 0
            for i in range(m):
                trial += 1
                z = b if cand_body[i] == a else a
                cnt = _propagate(cand_body[i], cand_disp[i, 0], cand_disp[i, 1], cand_disp[i, 2], z, best, best_vel,
                                 cand_vel[i], trial, body_stamp, disp, vis, body_contact_start, body_contacts,
                                 slot_other, slot_normal, depth, body_fixed, f_threshold, stack_body, stack_disp)
                if cnt > 0 and (not budget or _raised(cnt, vis, disp, body_inv_mass, gravity) <= pool):
                    best, best_i, best_vel = cnt, i, cand_vel[i]
            if best_i < 0 and lifting:   # Fig. 8 everywhere: try the lifts (each moves one body against gravity)
                m2 = lift_candidates(c, m, contact_body_a, contact_body_b, contact_normal, depth, body_fixed, threshold,
                                     f_rem, lift_dir, lift_min_cos, cand_body, cand_disp, cand_vel)
                for i in range(m, m2):
                    trial += 1
                    z = b if cand_body[i] == a else a
                    cnt = _propagate(cand_body[i], cand_disp[i, 0], cand_disp[i, 1], cand_disp[i, 2], z, best,
                                     best_vel, cand_vel[i], trial, body_stamp, disp, vis, body_contact_start,
                                     body_contacts, slot_other, slot_normal, depth, body_fixed, f_threshold,
                                     stack_body, stack_disp)
                    if cnt > 0 and (not budget or _raised(cnt, vis, disp, body_inv_mass, gravity) <= pool):
                        best, best_i, best_vel = cnt, i, cand_vel[i]
            in_list[c] = False
            if best_i < 0:  # no valid move (Fig. 8): the penetration stays
                stats[k, 2] += 1
                continue
            trial += 1  # re-run the winner to get its moves back
            z = b if cand_body[best_i] == a else a
            cnt = _propagate(cand_body[best_i], cand_disp[best_i, 0], cand_disp[best_i, 1], cand_disp[best_i, 2], z,
                             1 << 62, False, True, trial, body_stamp, disp, vis, body_contact_start, body_contacts,
                             slot_other, slot_normal, depth, body_fixed, f_threshold, stack_body, stack_disp)
            stats[k, 1] += 1
            if budget:
                pool -= _raised(cnt, vis, disp, body_inv_mass, gravity)
            for q in range(cnt):
                x = vis[q]
                moved[x] = True
            for q in range(cnt):  # Eq. 2.3.7 on every contact of a moved body (each once)
                x = vis[q]
                for r in range(body_contact_start[x], body_contact_start[x + 1]):
                    t = body_contacts[r]
                    ta, tb = contact_body_a[t], contact_body_b[t]
                    other = tb if ta == x else ta
                    if other != x and moved[other] and other < x:
                        continue  # already updated from the other body's list
                    da0 = disp[ta, 0] if moved[ta] else 0.0
                    da1 = disp[ta, 1] if moved[ta] else 0.0
                    da2 = disp[ta, 2] if moved[ta] else 0.0
                    db0 = disp[tb, 0] if moved[tb] else 0.0
                    db1 = disp[tb, 1] if moved[tb] else 0.0
                    db2 = disp[tb, 2] if moved[tb] else 0.0
                    contact_point[t, 0] += 0.5 * (da0 + db0)
                    contact_point[t, 1] += 0.5 * (da1 + db1)
                    contact_point[t, 2] += 0.5 * (da2 + db2)
                    depth[t] -= ((db0 - da0) * contact_normal[t, 0] + (db1 - da1) * contact_normal[t, 1]
                                 + (db2 - da2) * contact_normal[t, 2])
                    if in_list[t] and depth[t] <= threshold:
                        in_list[t] = False
            for q in range(cnt):
                x = vis[q]
                for kk in range(3):
                    body_position[x, kk] += disp[x, kk]
                body_asleep[x] = False  # wake rule 2
                moved[x] = False
            stats[k, 3] += cnt


@kernel(exact=True, parallel=True, error_model="numpy")
def correct_bins_parallel(nbins, bin_start, bin_batches, batch_contact_start, batch_contacts, batch_body_start,
                          batch_bodies, body_contact_start, body_contacts, contact_body_a, contact_body_b,
                          contact_point, contact_normal, depth, body_position, body_fixed, body_asleep, v, w, dt,
                          threshold, f_rem, max_bodies, lift_dir, lift_min_cos, body_inv_mass, gravity, budget,
                          body_stamp, disp, visited, in_list, moved, stats):
    for t in prange(nbins):
        correct_batches(bin_start[t], bin_start[t + 1], bin_batches, batch_contact_start, batch_contacts,
                        batch_body_start, batch_bodies, body_contact_start, body_contacts, contact_body_a,
                        contact_body_b, contact_point, contact_normal, depth, body_position, body_fixed, body_asleep,
                        v, w, dt, threshold, f_rem, max_bodies, lift_dir, lift_min_cos, body_inv_mass, gravity,
                        budget, body_stamp, disp, visited, in_list, moved, stats)


@kernel(exact=True, error_model="numpy")
def correct_bins_serial(nbins, bin_start, bin_batches, batch_contact_start, batch_contacts, batch_body_start,
                        batch_bodies, body_contact_start, body_contacts, contact_body_a, contact_body_b, contact_point,
                        contact_normal, depth, body_position, body_fixed, body_asleep, v, w, dt, threshold, f_rem,
                        max_bodies, lift_dir, lift_min_cos, body_inv_mass, gravity, budget, body_stamp, disp,
                        visited, in_list, moved, stats):
    correct_batches(bin_start[0], bin_start[nbins], bin_batches, batch_contact_start, batch_contacts,
                    batch_body_start, batch_bodies, body_contact_start, body_contacts, contact_body_a, contact_body_b,
                    contact_point, contact_normal, depth, body_position, body_fixed, body_asleep, v, w, dt, threshold,
                    f_rem, max_bodies, lift_dir, lift_min_cos, body_inv_mass, gravity, budget, body_stamp, disp,
                    visited, in_list, moved, stats)


@kernel(exact=True)
def penetrating_batches(nbatches, batch_contact_start, batch_contacts, depth, threshold, out):
    """out[k]: batch k has a contact deeper than ``threshold``."""
    for k in range(nbatches):
        out[k] = False
        for j in range(batch_contact_start[k], batch_contact_start[k + 1]):
            if depth[batch_contacts[j]] > threshold:
                out[k] = True
                break
    return out

