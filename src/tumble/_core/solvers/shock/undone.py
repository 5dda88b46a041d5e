"""The velocity a position projection undid, removed [tumble, issue 18].

The joint projection (``stages.project_joints``) moves positions only. Where its linearised velocity
solve lets a body move along a direction the joints' curvature forbids (``bridge``'s nearly taut deck:
the first-order rows allow a plank to drop, the pose after the drop stretches the joints at second
order), the velocity keeps pointing along the move the projection undoes every step: under the 20 kg
load the planks kept -0.57 and -1.29 m/s while the projection lifted them back 23-24 mm a step (joint
error 2.7 mm before it), straight into the load above, which the projection does not see (22.8 mm deep
at step 77). ``stop_undone_motion`` removes, per body, the part of its linear velocity that points
against the projection's move d (v . d < 0), at most |d| / dt of it (the speed that would redo the undone
move in one step): an inelastic stop along d, so no body's kinetic energy rises. On a free jointed group
(no contact with anything outside it, no joint to a fixed body) ``keep_free_momentum`` then removes the
rigid motion carrying the stops' total linear and angular momentum: a joint's internal correction must
not move a free system's momentum.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core.config import kernel
from tumble._core.math3d import quat_rotation


@kernel
def stop_undone_motion(count, body_fixed, position_before, position_after, dt, min_move, min_cos, v_lin):
    """For every dynamic body whose projection moved it by d = after - before, |d| > ``min_move`` [m]:
    s = v . d / |d|; where the move points back against the velocity, s <= -``min_cos`` |v| (s < 0 at
    ``min_cos`` 0), v += min(-s, |d| / dt) d / |d|. Returns the number of bodies changed.
    The body's kinetic energy 1/2 m |v|^2 only falls: the component along d shrinks toward 0, never past it."""
    changed = 0
    for i in range(count):
        if body_fixed[i]:
            continue
        d0 = position_after[i, 0] - position_before[i, 0]
        d1 = position_after[i, 1] - position_before[i, 1]
        d2 = position_after[i, 2] - position_before[i, 2]
        m = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        if m <= min_move:
            continue
        d0 /= m
        d1 /= m
        d2 /= m
        s = v_lin[i, 0] * d0 + v_lin[i, 1] * d1 + v_lin[i, 2] * d2
        if s >= 0.0:
            continue
        vv = math.sqrt(v_lin[i, 0] ** 2 + v_lin[i, 1] ** 2 + v_lin[i, 2] ** 2)
        if s > -min_cos * vv:
            continue
        k = min(-s, m / dt)
        v_lin[i, 0] += k * d0
        v_lin[i, 1] += k * d1
        v_lin[i, 2] += k * d2
        changed += 1
    return changed


@kernel
def keep_free_momentum(count, body_fixed, body_mass, body_position, body_orientation, body_inertia_local, joint_count,
                       joint_active, joint_body, contact_count, contact_body_a, contact_body_b, v_before, v_lin, v_ang):
    """After ``stop_undone_motion``: per free jointed group (bodies joined by active joints, none fixed
    or jointed to a fixed body or the world, none in a contact with a body outside the group), the rigid
    motion that carries the stops' total linear and angular momentum removed from the group, so the stops
    change its internal motion only.
    With dv_i = v_i - v_before_i (the stops' change; their angular velocities are untouched), M the
    group's mass, c its centre of mass, dP = sum m_i dv_i, dL = sum (x_i - c) x m_i dv_i and I_c the group's
    inertia about c (sum of R_i I_i R_i^T + m_i (|r_i|^2 1 - r_i r_i^T)): every body's v -= dP / M +
    dW x (x_i - c) and w -= dW with dW = I_c^-1 dL. A rigid motion of the whole group keeps its joints'
    velocity rows. Why: the stops are per body, so on a free chain they changed its total momentum (a
    10-link chain thrown spinning at (1, 8, 25) rad/s in gravity, dt 1/60: linear momentum off by 17 %
    of its start within 100 steps; without the stops 8e-15). Returns the number of groups corrected."""
    parent = np.empty(count, dtype=np.int64)
    free = np.ones(count, dtype=np.bool_)
    for i in range(count):
        parent[i] = i
    for j in range(joint_count):
        if not joint_active[j]:
            continue
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        if a < 0 or b < 0 or body_fixed[a] or body_fixed[b]:
            continue
        ra = a
        while parent[ra] != ra:
            ra = parent[ra]
        rb = b
        while parent[rb] != rb:
            rb = parent[rb]
        if ra < rb:
            parent[rb] = ra
        elif rb < ra:
            parent[ra] = rb
    for i in range(count):       # roots flattened: parent[i] is i's root from here on
        r = i
        while parent[r] != r:
            r = parent[r]
        parent[i] = r
    for j in range(joint_count):
        if not joint_active[j]:
            continue
        for side in range(2):
            b = joint_body[j, side]
            o = joint_body[j, 1 - side]
            if b >= 0 and not body_fixed[b] and (o < 0 or body_fixed[o]):
                free[parent[b]] = False
    for k in range(contact_count):       # a contact inside a group is internal; any other ties it
        a = contact_body_a[k]
        b = contact_body_b[k]
        da = a >= 0 and not body_fixed[a]
        db = b >= 0 and not body_fixed[b]
        if da and db and parent[a] == parent[b]:
            continue
        if da:
            free[parent[a]] = False
        if db:
            free[parent[b]] = False
    mass = np.zeros(count)
    com = np.zeros((count, 3))
    dp = np.zeros((count, 3))
    changed = np.zeros(count, dtype=np.bool_)
    for i in range(count):
        if body_fixed[i]:
            continue
        g = parent[i]
        m = body_mass[i]
        mass[g] += m
        for c in range(3):
            com[g, c] += m * body_position[i, c]
            d = v_lin[i, c] - v_before[i, c]
            dp[g, c] += m * d
            if d != 0.0:
                changed[g] = True
    inertia = np.zeros((count, 3, 3))
    dl = np.zeros((count, 3))
    for i in range(count):
        if body_fixed[i]:
            continue
        g = parent[i]
        if not (free[g] and changed[g]):
            continue
        m = body_mass[i]
        r0 = body_position[i, 0] - com[g, 0] / mass[g]
        r1 = body_position[i, 1] - com[g, 1] / mass[g]
        r2 = body_position[i, 2] - com[g, 2] / mass[g]
        d0 = m * (v_lin[i, 0] - v_before[i, 0])
        d1 = m * (v_lin[i, 1] - v_before[i, 1])
        d2 = m * (v_lin[i, 2] - v_before[i, 2])
        dl[g, 0] += r1 * d2 - r2 * d1
        dl[g, 1] += r2 * d0 - r0 * d2
        dl[g, 2] += r0 * d1 - r1 * d0
        q00, q01, q02, q10, q11, q12, q20, q21, q22 = quat_rotation(
            body_orientation[i, 0], body_orientation[i, 1], body_orientation[i, 2], body_orientation[i, 3])
        rr = r0 * r0 + r1 * r1 + r2 * r2
        for p in range(3):
            rp = r0 if p == 0 else (r1 if p == 1 else r2)
            qp0 = q00 if p == 0 else (q10 if p == 1 else q20)
            qp1 = q01 if p == 0 else (q11 if p == 1 else q21)
            qp2 = q02 if p == 0 else (q12 if p == 1 else q22)
            for s in range(3):
                rs = r0 if s == 0 else (r1 if s == 1 else r2)
                qs0 = q00 if s == 0 else (q10 if s == 1 else q20)
                qs1 = q01 if s == 0 else (q11 if s == 1 else q21)
                qs2 = q02 if s == 0 else (q12 if s == 1 else q22)
                own = 0.0       # (R I R^T)_ps = sum_ab R_pa I_ab R_sb
                for a in range(3):
                    qa = qp0 if a == 0 else (qp1 if a == 1 else qp2)
                    for b in range(3):
                        qb = qs0 if b == 0 else (qs1 if b == 1 else qs2)
                        own += qa * body_inertia_local[i, a, b] * qb
                inertia[g, p, s] += own + m * ((rr if p == s else 0.0) - rp * rs)
    groups = 0
    dw = np.zeros((count, 3))
    for g in range(count):
        if parent[g] != g or body_fixed[g] or not (free[g] and changed[g]):
            continue
        groups += 1
        a = inertia[g]
        det = (a[0, 0] * (a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1]) - a[0, 1] * (a[1, 0] * a[2, 2] - a[1, 2] * a[2, 0])
               + a[0, 2] * (a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0]))
        if not abs(det) > 0.0:
            continue
        i00 = (a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1]) / det
        i01 = (a[0, 2] * a[2, 1] - a[0, 1] * a[2, 2]) / det
        i02 = (a[0, 1] * a[1, 2] - a[0, 2] * a[1, 1]) / det
        i10 = (a[1, 2] * a[2, 0] - a[1, 0] * a[2, 2]) / det
        i11 = (a[0, 0] * a[2, 2] - a[0, 2] * a[2, 0]) / det
        i12 = (a[0, 2] * a[1, 0] - a[0, 0] * a[1, 2]) / det
        i20 = (a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0]) / det
        i21 = (a[0, 1] * a[2, 0] - a[0, 0] * a[2, 1]) / det
        i22 = (a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]) / det
        dw[g, 0] = i00 * dl[g, 0] + i01 * dl[g, 1] + i02 * dl[g, 2]
        dw[g, 1] = i10 * dl[g, 0] + i11 * dl[g, 1] + i12 * dl[g, 2]
        dw[g, 2] = i20 * dl[g, 0] + i21 * dl[g, 1] + i22 * dl[g, 2]
    if groups == 0:
        return 0
    for i in range(count):
        if body_fixed[i]:
            continue
        g = parent[i]
        if not (free[g] and changed[g]):
            continue
        r0 = body_position[i, 0] - com[g, 0] / mass[g]
        r1 = body_position[i, 1] - com[g, 1] / mass[g]
        r2 = body_position[i, 2] - com[g, 2] / mass[g]
        v_lin[i, 0] -= dp[g, 0] / mass[g] + dw[g, 1] * r2 - dw[g, 2] * r1
        v_lin[i, 1] -= dp[g, 1] / mass[g] + dw[g, 2] * r0 - dw[g, 0] * r2
        v_lin[i, 2] -= dp[g, 2] / mass[g] + dw[g, 0] * r1 - dw[g, 1] * r0
        for c in range(3):
            v_ang[i, c] -= dw[g, c]
    return groups
