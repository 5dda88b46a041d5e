"""Row assembly shared by the velocity-level solvers (DESIGN "Constraint rows").

Each contact point gives three rows, laid out [normal, tangent 1, tangent 2] (Catto 001 §4):

  normal    J_n = [-n^T, -(r_a x n)^T, n^T, (r_b x n)^T]          (001 eq. 18, 000 eq. 2)
  friction  J_u = [-u^T, -(r_a x u)^T, u^T, (r_b x u)^T], u in {u1, u2}, u1 x u2 = n (001 eq. 23)

B = M^-1 J^T is stored with J's sparsity (001 eq. 34), and d = (J B)_ii (Alg. 4). The velocity
target (the bias zeta of 001 eq. 15, in velocity units) of a normal row is the largest of

  Baumgarte   beta * max(depth - slop, 0) with beta = baumgarte / dt  (001 eq. 20: J v = -beta C_n)
  restitution -e * v_n if the approach speed -v_n exceeds the threshold (Newton, 000 eq. 21)
  speculative -separation / dt when the points are apart (they may close the gap, no more)

The solver works with impulses (lambda dt of 001 eq. 33), so bounds are in N s.
"""

from __future__ import annotations

import math

from numba import prange

from tumble._core import types as T
from tumble._core.config import kernel, kernel_parallel
from tumble._core.math3d import quat_rotation
from tumble._core.rows import write_pair_jacobian


@kernel(inline="always")
def tangent_basis(n, t1, t2):
    """Right-handed orthonormal tangents with t1 x t2 = n (Frisvad/Duff branchless basis)."""
    sign = 1.0 if n[2] >= 0.0 else -1.0
    a = -1.0 / (sign + n[2])
    b = n[0] * n[1] * a
    t1[0] = 1.0 + sign * n[0] * n[0] * a
    t1[1] = sign * b
    t1[2] = -sign * n[0]
    t2[0] = b
    t2[1] = sign + n[1] * n[1] * a
    t2[2] = -n[1]


@kernel
def count_body_contacts(contact_body_a, contact_body_b, contact_count, body_contact_count, body_count):
    for i in range(body_count):
        body_contact_count[i] = 0
    for c in range(contact_count):
        body_contact_count[contact_body_a[c]] += 1
        body_contact_count[contact_body_b[c]] += 1


@kernel(inline="always")
def fill_row(r, ia, ib, d, ra, rb, body_inv_mass, body_inv_inertia_world,
             row_body, row_J, row_B, row_inv_diag):
    """Write J, B = M^-1 J^T and 1/(J B) for the row along direction d through points a + ra, b + rb."""
    row_body[r, 0] = ia
    row_body[r, 1] = ib
    # J blocks: [-d, -(ra x d)] for a, [d, rb x d] for b
    row_J[r, 0, 0] = -d[0]
    row_J[r, 0, 1] = -d[1]
    row_J[r, 0, 2] = -d[2]
    row_J[r, 0, 3] = -(ra[1] * d[2] - ra[2] * d[1])
    row_J[r, 0, 4] = -(ra[2] * d[0] - ra[0] * d[2])
    row_J[r, 0, 5] = -(ra[0] * d[1] - ra[1] * d[0])
    row_J[r, 1, 0] = d[0]
    row_J[r, 1, 1] = d[1]
    row_J[r, 1, 2] = d[2]
    row_J[r, 1, 3] = rb[1] * d[2] - rb[2] * d[1]
    row_J[r, 1, 4] = rb[2] * d[0] - rb[0] * d[2]
    row_J[r, 1, 5] = rb[0] * d[1] - rb[1] * d[0]
    diag = 0.0
    for s in range(2):
        body = ia if s == 0 else ib
        if body < 0:
            for k in range(6):
                row_B[r, s, k] = 0.0
            continue
        im = body_inv_mass[body]
        Ii = body_inv_inertia_world[body]
        for k in range(3):
            row_B[r, s, k] = im * row_J[r, s, k]
            row_B[r, s, 3 + k] = Ii[k, 0] * row_J[r, s, 3] + Ii[k, 1] * row_J[r, s, 4] + Ii[k, 2] * row_J[r, s, 5]
        for k in range(6):
            diag += row_J[r, s, k] * row_B[r, s, k]
    row_inv_diag[r] = 1.0 / diag if diag > 1e-300 else 0.0


@kernel(inline="always")
def tangent_scalars(nx, ny, nz):
    """``tangent_basis`` of the unit normal (nx, ny, nz) as scalars: (t1, t2), same arithmetic."""
    sign = 1.0 if nz >= 0.0 else -1.0
    a = -1.0 / (sign + nz)
    b = nx * ny * a
    return 1.0 + sign * nx * nx * a, sign * b, -sign * nx, b, sign + ny * ny * a, -ny


@kernel(inline="always")
def fill_row_scalars(r, ia, ib, dx, dy, dz, rax, ray, raz, rbx, rby, rbz, body_inv_mass, body_inv_inertia_world,
                     row_body, row_J, row_B, row_inv_diag):
    """``fill_row`` with the direction and the lever arms as scalars (no scratch arrays), same arithmetic
    in the same order: J, B = M^-1 J^T and 1/(J B) of row ``r``."""
    write_pair_jacobian(r, ia, ib, dx, dy, dz, rax, ray, raz, rbx, rby, rbz, row_body, row_J)
    diag = 0.0
    for s in range(2):
        body = ia if s == 0 else ib
        if body < 0:
            for k in range(6):
                row_B[r, s, k] = 0.0
            continue
        im = body_inv_mass[body]
        for k in range(3):
            row_B[r, s, k] = im * row_J[r, s, k]
            row_B[r, s, 3 + k] = body_inv_inertia_world[body, k, 0] * row_J[r, s, 3] \
                + body_inv_inertia_world[body, k, 1] * row_J[r, s, 4] \
                + body_inv_inertia_world[body, k, 2] * row_J[r, s, 5]
        for k in range(6):
            diag += row_J[r, s, k] * row_B[r, s, k]
    row_inv_diag[r] = 1.0 / diag if diag > 1e-300 else 0.0


@kernel_parallel
def prepare_contact_rows(contact_count, contact_body_a, contact_body_b, contact_point, contact_normal,
                         contact_depth, contact_friction, contact_restitution, contact_normal_impulse,
                         contact_friction_impulse,
                         body_position, body_linear_velocity, body_angular_velocity, body_inv_mass,
                         body_mass, body_inv_inertia_world, body_fixed, body_contact_count,
                         dt, baumgarte, slop, max_correction_speed, restitution_threshold,
                         friction_model, gravity_norm, warm_start, row_offset,
                         row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link,
                         row_mu, row_kind, row_lambda, row_owner):
    """Rows 3c..3c+2 (offset by ``row_offset``) for contact point c. Returns the row count."""
    beta = baumgarte / dt
    for c in prange(contact_count):
        # scalars, not five (3,) scratch arrays per point: their allocation was ~40 % of stack10's rows
        # (40 points, issue 14); the arithmetic is fill_row's and tangent_basis', in their order
        a = contact_body_a[c]
        b = contact_body_b[c]
        ia = -1 if body_fixed[a] else a
        ib = -1 if body_fixed[b] else b
        nx = contact_normal[c, 0]
        ny = contact_normal[c, 1]
        nz = contact_normal[c, 2]
        rax = contact_point[c, 0] - body_position[a, 0]
        ray = contact_point[c, 1] - body_position[a, 1]
        raz = contact_point[c, 2] - body_position[a, 2]
        rbx = contact_point[c, 0] - body_position[b, 0]
        rby = contact_point[c, 1] - body_position[b, 1]
        rbz = contact_point[c, 2] - body_position[b, 2]
        t1x, t1y, t1z, t2x, t2y, t2z = tangent_scalars(nx, ny, nz)
        r0 = row_offset + 3 * c
        fill_row_scalars(r0, ia, ib, nx, ny, nz, rax, ray, raz, rbx, rby, rbz, body_inv_mass,
                         body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag)
        fill_row_scalars(r0 + 1, ia, ib, t1x, t1y, t1z, rax, ray, raz, rbx, rby, rbz, body_inv_mass,
                         body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag)
        fill_row_scalars(r0 + 2, ia, ib, t2x, t2y, t2z, rax, ray, raz, rbx, rby, rbz, body_inv_mass,
                         body_inv_inertia_world, row_body, row_J, row_B, row_inv_diag)
        # relative normal velocity v_n = J_n V (positive = separating), before this step's forces
        vn = 0.0
        for s in range(2):
            body = a if s == 0 else b
            if body_fixed[body]:
                continue
            for k in range(3):
                vn += row_J[r0, s, k] * body_linear_velocity[body, k] \
                    + row_J[r0, s, 3 + k] * body_angular_velocity[body, k]
        depth = contact_depth[c]
        rigid = 0.0  # target without position feedback, used by the relax pass
        if depth >= 0.0:
            target = min(beta * max(depth - slop, 0.0), max_correction_speed)
        else:
            target = depth / dt  # speculative: may approach by the gap, -separation / dt
            rigid = target
        e = contact_restitution[c]
        # bounce only if the points touch or will meet within this step (v_n dt <= -gap): a
        # speculative point still far apart must not push (Box2D applies restitution only to
        # points whose normal impulse is active, for the same reason)
        if e > 0.0 and vn < -restitution_threshold and vn * dt <= depth:
            target = max(target, -e * vn)
            rigid = max(rigid, -e * vn)
        row_bias[r0] = target
        row_bias_relax[r0] = rigid
        row_lo[r0] = 0.0
        row_hi[r0] = math.inf
        row_link[r0] = -1
        row_mu[r0] = contact_friction[c]
        row_kind[r0] = T.ROW_CONTACT_NORMAL
        row_owner[r0] = c
        mu = contact_friction[c]
        fixed_bound = 0.0
        if friction_model == T.FRICTION_FIXED:
            # Catto 001 eq. 24-25: |lambda_u| <= mu m_c g, m_c = a body's mass divided among its
            # contact points; of the two dynamic bodies the larger share is taken, so a heavy box
            # on a light one is held by its own weight share, not by the light box's
            mc = 0.0
            if ia >= 0:
                mc = max(mc, body_mass[a] / max(body_contact_count[a], 1))
            if ib >= 0:
                mc = max(mc, body_mass[b] / max(body_contact_count[b], 1))
            fixed_bound = mu * mc * gravity_norm * dt
        for j in range(1, 3):
            r = r0 + j
            row_bias[r] = 0.0
            row_bias_relax[r] = 0.0
            row_link[r] = -1 if friction_model == T.FRICTION_FIXED else r0
            row_mu[r] = mu
            row_lo[r] = -fixed_bound
            row_hi[r] = fixed_bound
            row_kind[r] = T.ROW_CONTACT_FRICTION
            row_owner[r] = c
        if warm_start:
            row_lambda[r0] = contact_normal_impulse[c]
            f0 = contact_friction_impulse[c, 0]
            f1 = contact_friction_impulse[c, 1]
            f2 = contact_friction_impulse[c, 2]
            row_lambda[r0 + 1] = f0 * t1x + f1 * t1y + f2 * t1z
            row_lambda[r0 + 2] = f0 * t2x + f1 * t2y + f2 * t2z
        else:
            row_lambda[r0] = 0.0
            row_lambda[r0 + 1] = 0.0
            row_lambda[r0 + 2] = 0.0
    return 3 * contact_count


_prepare_contact_rows_serial = prepare_contact_rows.serial


@kernel
def prepare_contact_rows_small(contact_count, contact_body_a, contact_body_b, contact_point, contact_normal,
                               contact_depth, contact_friction, contact_restitution, contact_normal_impulse,
                               contact_friction_impulse, body_position, body_linear_velocity, body_angular_velocity,
                               body_inv_mass, body_mass, body_inv_inertia_world, body_fixed, body_contact_count,
                               body_count, dt, baumgarte, slop, max_correction_speed, restitution_threshold,
                               friction_model, gravity_norm, warm_start, row_body, row_J, row_B, row_inv_diag,
                               row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind, row_lambda,
                               row_owner, row_cfm, row_group):
    """The contact rows of a small world in one kernel call on the calling thread: the contacts per
    body (``count_body_contacts``), ``prepare_contact_rows.serial`` from row 0, and the rows' cfm 0
    and group 1 (``stages._contact_rows`` did these as two more calls and two NumPy slice
    assignments: issue 14's fixed cost, each call ~1 us plus ~0.1 us per array argument). The same
    kernels in the same order, so the rows are the same bit for bit. Returns the row count."""
    count_body_contacts(contact_body_a, contact_body_b, contact_count, body_contact_count, body_count)
    rows = _prepare_contact_rows_serial(
        contact_count, contact_body_a, contact_body_b, contact_point, contact_normal, contact_depth, contact_friction,
        contact_restitution, contact_normal_impulse, contact_friction_impulse, body_position, body_linear_velocity,
        body_angular_velocity, body_inv_mass, body_mass, body_inv_inertia_world, body_fixed, body_contact_count, dt,
        baumgarte, slop, max_correction_speed, restitution_threshold, friction_model, gravity_norm, warm_start, 0,
        row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link, row_mu, row_kind,
        row_lambda, row_owner)
    for r in range(rows):
        row_cfm[r] = 0.0
        row_group[r] = 1
    return rows


@kernel
def store_contact_impulses(contact_count, row_offset, row_J, row_lambda, contact_normal_impulse,
                           contact_friction_impulse):
    """Copy the solved impulses back to the contacts (normal scalar, friction as a world vector,
    so the next step can project it onto whatever tangent basis it builds)."""
    for c in range(contact_count):
        r0 = row_offset + 3 * c
        contact_normal_impulse[c] = row_lambda[r0]
        for k in range(3):
            # the b-side linear block of a friction row is +u
            contact_friction_impulse[c, k] = row_lambda[r0 + 1] * row_J[r0 + 1, 1, k] \
                + row_lambda[r0 + 2] * row_J[r0 + 2, 1, k]


@kernel
def split_deep_rows(contact_count, contact_depth, beta, slop, max_correction_speed, split_speed, row_bias,
                    row_bias_relax, bias_pseudo):
    """The deep-overlap split for one solve per step (``substep_contact_targets`` does it per
    substep): every contact whose push beta (depth - slop), capped at ``max_correction_speed`` as in
    ``prepare_contact_rows``, exceeds ``split_speed`` leaves the velocity solve with its target
    without position feedback (``row_bias_relax``: 0, or the bounce) and gets the push as its
    target in the pseudo-velocity pass (``bias_pseudo``, whose other entries must be 0).
    Returns the number of such contacts."""
    deep = 0
    for c in range(contact_count):
        r = 3 * c
        depth = contact_depth[c]
        if depth >= 0.0:
            push = min(beta * max(depth - slop, 0.0), max_correction_speed)
            if push > split_speed:
                row_bias[r] = row_bias_relax[r]
                bias_pseudo[r] = push
                deep += 1
    return deep


#: relative error of a row's angular B = I_w^-1 J_ang^T [-] above which ``refresh_turned_rows``
#: rebuilds it at the body's current orientation. A body turned by theta since its rows were built has
#: |I_w(q)^-1 - I_w(q0)^-1| <= theta (a_max - a_min) (a_i: the eigenvalues of its local I^-1), against
#: |I_w^-1 tau| >= a_min |tau| for the row's own response: the relative error is at most
#: theta (a_max - a_min) / a_min. Isotropic bodies (spheres, cubes: a_max = a_min) are never rebuilt. At
#: 1e-3 a thin board (a_max / a_min ~ 1e4) is rebuilt once it turned 1e-7 rad, a 2:1 brick after
#: 3e-4 rad; resting bodies mostly not (measured, 12-step state hashes: 1e-6 changed stack10, stack3,
#: mass_ratio, catapult and wall200 under pgs by rebuilds of resting bodies, 1e-3 of these wall200 only;
#: the fuzz's fast-spin cases keep the bound with 1e-6, 1e-3 and 1e-2 alike)
ROW_TURN_TOLERANCE = 1e-3


@kernel
def refresh_turned_rows(row_count, row_body, row_J, row_B, row_inv_diag, body_orientation, row_orientation,
                        body_inv_inertia_local, body_inv_inertia_world, body_fixed, body_count, changed, tolerance):
    """Rebuild B = M^-1 J^T and 1/(J B) of rows [0, row_count) for the bodies that turned since their
    rows' inverse inertia was taken (issue 17's fast-spin class).

    The rows of a step (or of a substep loop) are built once, with I_w^-1 = R I^-1 R^T at the
    orientation q0 of that moment (``row_orientation``, (n, 4)), while the body turns on (a board
    spinning at 25 rad/s: 0.1 rad in a 1/240 s step). Kinetic energy is 1/2 w^T I_w(q) w at the current
    q, so a row update dw = I_w(q0)^-1 J_ang^T delta is no longer the response to an impulse: the
    sweeps' energy argument (a scalar update to a target zeta changes the energy by
    (zeta^2 - (J v)^2) / (2 J B) <= 0 for zeta = 0, 001 Alg. 4) fails by the inertia's error. For a thin
    body the error is amplified by its largest inverse moment: a torque perpendicular to the long
    axis e picks up theta |tau| along the old e times 1/I_long; the 24 m board of test_fuzz's
    FAST_SPIN_CASES left a tip impact spinning about its long axis at 356 rad/s, +380 J in the step.

    For each dynamic body: theta = the angle from ``row_orientation`` to the current orientation;
    when theta (a_max - a_min) > ``tolerance`` a_min (Gershgorin bounds of the local I^-1's
    eigenvalues: the bound on the relative error of B, ``ROW_TURN_TOLERANCE``) its I_w^-1 is taken
    again at the current orientation (``body_inv_inertia_world``, ``row_orientation`` updated) and
    ``changed`` (n,) marks it; then every row with a changed side gets B's angular part and 1/(J B)
    anew. J keeps the collision's lever arms (the rows are still those of the contact detection, a
    consistent impulse at the detected point). Returns the number of bodies refreshed."""
    refreshed = 0
    for i in range(body_count):
        changed[i] = False
        if body_fixed[i]:
            continue
        Il = body_inv_inertia_local[i]
        hi = -math.inf
        lo = math.inf
        for a in range(3):
            off = 0.0
            for k in range(3):
                if k != a:
                    off += abs(Il[a, k])
            hi = max(hi, Il[a, a] + off)
            lo = min(lo, Il[a, a] - off)
        spread = hi - lo
        if not spread > 0.0:
            continue
        # the rotation from row_orientation to the orientation now: d = q0^* q, angle 2 atan2(|d_v|, |d_w|)
        pw = row_orientation[i, 0]
        px = row_orientation[i, 1]
        py = row_orientation[i, 2]
        pz = row_orientation[i, 3]
        qw = body_orientation[i, 0]
        qx = body_orientation[i, 1]
        qy = body_orientation[i, 2]
        qz = body_orientation[i, 3]
        dw = pw * qw + px * qx + py * qy + pz * qz
        dx = pw * qx - px * qw - py * qz + pz * qy
        dy = pw * qy + px * qz - py * qw - pz * qx
        dz = pw * qz - px * qy + py * qx - pz * qw
        s = math.sqrt(dx * dx + dy * dy + dz * dz)
        if s == 0.0:
            continue
        theta = 2.0 * math.atan2(s, abs(dw))
        if not theta * spread > tolerance * lo:
            continue
        # I_w^-1 = R I^-1 R^T at the current orientation
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = quat_rotation(qw, qx, qy, qz)
        for a in range(3):
            ra0 = r00 if a == 0 else (r10 if a == 1 else r20)
            ra1 = r01 if a == 0 else (r11 if a == 1 else r21)
            ra2 = r02 if a == 0 else (r12 if a == 1 else r22)
            m0 = ra0 * Il[0, 0] + ra1 * Il[1, 0] + ra2 * Il[2, 0]      # (R I^-1)[a, :]
            m1 = ra0 * Il[0, 1] + ra1 * Il[1, 1] + ra2 * Il[2, 1]
            m2 = ra0 * Il[0, 2] + ra1 * Il[1, 2] + ra2 * Il[2, 2]
            body_inv_inertia_world[i, a, 0] = m0 * r00 + m1 * r01 + m2 * r02
            body_inv_inertia_world[i, a, 1] = m0 * r10 + m1 * r11 + m2 * r12
            body_inv_inertia_world[i, a, 2] = m0 * r20 + m1 * r21 + m2 * r22
        for k in range(4):
            row_orientation[i, k] = body_orientation[i, k]
        changed[i] = True
        refreshed += 1
    if refreshed == 0:
        return 0
    for r in range(row_count):
        ia = row_body[r, 0]
        ib = row_body[r, 1]
        if not ((ia >= 0 and changed[ia]) or (ib >= 0 and changed[ib])):
            continue
        diag = 0.0
        for side in range(2):
            body = ia if side == 0 else ib
            if body < 0:
                continue
            if changed[body]:
                for k in range(3):
                    row_B[r, side, 3 + k] = body_inv_inertia_world[body, k, 0] * row_J[r, side, 3] \
                        + body_inv_inertia_world[body, k, 1] * row_J[r, side, 4] \
                        + body_inv_inertia_world[body, k, 2] * row_J[r, side, 5]
            for k in range(6):
                diag += row_J[r, side, k] * row_B[r, side, k]
        row_inv_diag[r] = 1.0 / diag if diag > 1e-300 else 0.0
    return refreshed


@kernel
def contact_reach(contact_count, row_body, row_J, reach):
    """reach[i] = the longest lever arm |r| of body i's contact points [m] (0 without contacts; fixed
    sides skipped). The three rows of a point are along the orthonormal n, u1, u2, so
    |r x n|^2 + |r x u1|^2 + |r x u2|^2 = 2 |r|^2: the lever comes from the rows' J alone."""
    for i in range(reach.shape[0]):
        reach[i] = 0.0
    for c in range(contact_count):
        r0 = 3 * c
        for side in range(2):
            b = row_body[r0, side]
            if b < 0:
                continue
            s = 0.0
            for r in range(r0, r0 + 3):
                for k in range(3, 6):
                    s += row_J[r, side, k] * row_J[r, side, k]
            lever = math.sqrt(0.5 * s)
            if lever > reach[b]:
                reach[b] = lever
