"""The velocity a position projection undid, removed [tumble, issue 18].

The joint projection (``stages.project_joints``) moves positions only. Where its linearised velocity
solve lets a body move along a direction the joints' curvature forbids (``bridge``'s nearly taut deck:
the first-order rows allow a plank to drop, the pose after the drop stretches the joints at second
order), the velocity keeps pointing along the move the projection undoes every step: under the 20 kg
load the planks kept -0.57 and -1.29 m/s while the projection lifted them back 23-24 mm a step (joint
error 2.7 mm before it), straight into the load above, which the projection does not see (22.8 mm deep
at step 77). ``stop_undone_motion`` removes, per body, the part of its linear velocity that points
against the projection's move d (v . d < 0), at most |d| / dt of it (the speed that would redo the undone
move in one step): an inelastic stop along d, so no body's kinetic energy rises.
"""

from __future__ import annotations

import math

from tumble._core.config import kernel


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
