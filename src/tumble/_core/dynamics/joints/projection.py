"""Position projection of the joints: after the positions moved, remove the joints' position error
directly instead of feeding it back through the velocities.

This is Erleben's correction() (000 eq. 46) for joint rows, done as non-linear Gauss-Seidel (the
position pass Box2D runs for its joints): for each joint in turn, its rows J and errors C are built at
the current poses, the displacement  J disp = -C  (equality rows, lambda free; all of a joint's
equality rows in one block) and  J disp >= -gap  (limit rows, lambda >= 0), disp = M^-1 J^T lambda_c,
is solved, and the two bodies are moved at once (position, and the exact rotation of the rotation
vector) before the next joint reads them. Velocities are untouched, so the correction adds no kinetic
energy.

Why not Baumgarte: with warm starting, the feedback impulse of one step is carried into the next;
on a welded cantilever of five boxes under 10 sweeps (240 Hz) the two fed each other and the tip
swung 0.7 m. Why not a linear projection (rows built once, several sweeps, one move): a hanging chain
of thin capsules needs rotations of ~1 rad to close 5 cm gaps at 5 cm levers, where the linearisation
overshoots; the chain of 10 links flew apart within 40 steps. Rebuilding the rows of each joint at the
current poses, and capping each correction at ``max_correction``, removes both problems.

The rows come from the joint kernel with beta = 1 / dt and no speed cap, so their velocity target
times dt is exactly -C (or -gap); motor rows and soft rows (springs) are not position constraints and
are skipped.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core import types as T
from tumble._core.config import kernel
from tumble._core.dynamics.integrate import displace_body
from tumble._core.dynamics.joints.rows import write_joint_rows
from tumble._core.rows import apply_movable, movable, row_velocity, solve_group


@kernel
def _layer_inv_diag(r, layer, body_height, row_body, row_J, row_B):
    """1 / (J B) of row r counting only the sides movable in ``layer``."""
    d = 0.0
    for side in range(2):
        if movable(row_body[r, side], layer, body_height):
            for c in range(6):
                d += row_J[r, side, c] * row_B[r, side, c]
    return 1.0 / d if d > 1e-300 else 0.0


@kernel
def _move_body(i, disp_lin, disp_ang, body_position, body_orientation):
    """Move body i by its accumulated displacement (dynamics.integrate.displace_body), then clear it."""
    displace_body(i, disp_lin, disp_ang, body_position, body_orientation)
    for c in range(3):
        disp_lin[i, c] = 0.0
        disp_ang[i, c] = 0.0


@kernel
def project_joints(order, body_height, joint_count, joint_type, joint_body, joint_anchor, joint_axis, joint_ref,
                   joint_rel_q, joint_length,
                   joint_soft, joint_has_limits, joint_limit, joint_motor_mode, joint_motor, joint_active,
                   joint_row_count, joint_impulse, joint_coord, joint_lever, body_position, body_orientation,
                   body_inv_mass, body_inv_inertia_world, body_fixed, dt, iterations, tolerance, max_correction,
                   block_solve, fraction, settled):
    """Up to ``iterations`` non-linear Gauss-Seidel passes over the joints in ``order`` (module
    docstring), fewer once a pass meets no error above ``tolerance`` [m or rad]; each row's
    correction is capped at ``max_correction`` [m or rad] per visit. ``joint_coord`` must be current.

    Optional shock propagation of the correction (Erleben 000 §4, Fig. 12, applied to joints;
    setting ``joint_projection_fixation``): with ``body_height`` the distance of each body from the
    fixed bodies over the joint graph and the joints ordered by it, a joint between heights h and
    h + 1 moves only the body of height h + 1 -- the one nearer the fixed world is fixated -- so a
    chain hanging from a fixed point is closed in a single pass. Joints between bodies of equal
    height move both (with all heights equal this is plain NGS, the default).

    ``settled`` (joints,) bool, or empty for none: the joints whose equality rows the joint tree's
    Newton steps just closed (``stages.project_joints``, setting ``joint_pass_skip_settled``). A pass
    skips such a joint while neither of its bodies has moved in these passes and its coordinate is
    within its limits: its visit would find its equality errors at the tree's residual and its limit
    rows inactive (lambda clamped to 0), and only move its bodies by ``fraction`` of that residual.
    Returns (the largest error of the first pass, the largest error of the last pass)."""
    n = body_position.shape[0]
    m = 8  # types.JOINT_MAX_ROWS
    row_body = np.empty((m, 2), dtype=np.int64)
    row_J = np.empty((m, 2, 6))
    row_B = np.empty((m, 2, 6))
    row_inv_diag = np.empty(m)
    row_bias = np.empty(m)
    row_bias_relax = np.empty(m)
    row_lo = np.empty(m)
    row_hi = np.empty(m)
    row_link = np.empty(m, dtype=np.int64)
    row_mu = np.empty(m)
    row_kind = np.empty(m, dtype=np.int64)
    row_lambda = np.empty(m)
    row_owner = np.empty(m, dtype=np.int64)
    row_cfm = np.empty(m)
    row_group = np.empty(m, dtype=np.int64)
    target = np.empty(m)
    zero = np.zeros(m)
    lam = np.empty(m)
    disp_lin = np.zeros((n, 3))
    disp_ang = np.zeros((n, 3))
    moved = np.zeros(n, dtype=np.bool_)       # bodies these passes have moved (``settled``)
    skip = settled.shape[0] > 0
    jp = np.array([1.0 / dt, math.inf, 0.0, 1.0, dt, dt])
    first = 0.0
    worst = 0.0
    for it in range(iterations):
        worst = 0.0
        for jj in range(order.shape[0]):
            j = order[jj]
            if not joint_active[j]:
                continue
            if skip and settled[j]:
                ja = joint_body[j, 0]
                jb = joint_body[j, 1]
                if not ((ja >= 0 and moved[ja]) or (jb >= 0 and moved[jb])) and (
                        not joint_has_limits[j] or joint_limit[j, 0] <= joint_coord[j] <= joint_limit[j, 1]):
                    continue
            write_joint_rows(j, j + 1, 0, jp, False, block_solve, joint_type, joint_body, joint_anchor,
                             joint_axis, joint_ref, joint_rel_q, joint_length, joint_soft, joint_has_limits,
                             joint_limit, joint_motor_mode, joint_motor, joint_impulse, joint_coord, joint_lever,
                             body_position, body_orientation, body_inv_mass, body_inv_inertia_world, body_fixed,
                             row_body, row_J, row_B, row_inv_diag, row_bias, row_bias_relax, row_lo, row_hi, row_link,
                             row_mu, row_kind, row_lambda, row_owner, row_cfm, row_group)
            cnt = joint_row_count[j]
            ha = body_height[row_body[0, 0]] if row_body[0, 0] >= 0 else 0
            hb = body_height[row_body[0, 1]] if row_body[0, 1] >= 0 else 0
            layer = max(ha, hb) - 1 if ha != hb else -1
            for r in range(cnt):
                lam[r] = 0.0
                t = row_bias[r] * dt
                kind = row_kind[r]
                if kind == T.ROW_JOINT and row_cfm[r] == 0.0 and abs(t) > worst:
                    worst = abs(t)
                elif kind == T.ROW_LIMIT and t > worst:
                    worst = t      # a limit row's target is -gap: positive only when violated
                target[r] = min(max(fraction * t, -max_correction), max_correction)
            for r in range(cnt):
                kind = row_kind[r]
                if kind == T.ROW_MOTOR or row_cfm[r] > 0.0 or row_inv_diag[r] == 0.0:
                    continue
                g = row_group[r]
                if g == 0:
                    continue
                if g > 1:
                    solve_group(r, g, layer, body_height, row_body, row_J, row_B, target, zero, lam, disp_lin, disp_ang,
                                0.0)
                    continue
                inv_d = _layer_inv_diag(r, layer, body_height, row_body, row_J, row_B)
                if inv_d == 0.0:
                    continue
                old = lam[r]
                new = old + (target[r] - row_velocity(r, row_body, row_J, disp_lin, disp_ang)) * inv_d
                if kind == T.ROW_LIMIT and new < 0.0:
                    new = 0.0
                if new != old:
                    lam[r] = new
                    apply_movable(r, new - old, layer, body_height, row_body, row_B, disp_lin, disp_ang)
            for side in range(2):
                b = row_body[0, side]
                if movable(b, layer, body_height):
                    _move_body(b, disp_lin, disp_ang, body_position, body_orientation)
                    moved[b] = True
        if it == 0:
            first = worst
        if worst <= tolerance:
            break
    return first, worst
