"""Substeps for fast-turning bodies in contact (issue 18, ``ShockSettings.spin_substep_angle``).

The contact rows of a shock step are built from the points detect(t) found (the narrow phase's closest
features, plus the speculative points within dt (|v| + |w| r)) and are linear in the rotation: a row's
J v is the normal speed of its point at the start pose, ``v + w x r``. A body turning theta in one step
moves its points along arcs, not along those tangents (the error of a point at r is r (1 - cos theta)
~ r theta^2 / 2 across the normal, r (theta - sin theta) along it), and brings down features no row
describes (a plate's corner, a capsule's other end). Measured before this module: a 0.25 x 0.15 m
plate turning 0.27 rad in its landing step met the ground 28.3 mm deep; a capsule turning 0.7 rad a
step gained 1.1 mJ after its landing; library scenes 16-40 mm (ragdolls, silo, cage, cow_pile, bridge,
soli3000; ``benchmarks/results/local-2core-amd-epyc/shock_depth_survey.md``).

The remedy here: such a step is taken as k shock steps of dt / k (detection, rows, layers, final
correction each), k = ceil(theta / ``spin_substep_angle``) with theta = |w| dt of the fastest-turning
dynamic body with a contact point at the step's start (at most ``spin_substeps_max``), or, when the velocity
solves spin a body up within the step, by the turn they are about to make (``turn_substeps``: the velocity
stage undone from copies, ``save_step_start``, before the bodies move). Balls (spheres centred on their
centre of mass) are left out: their turn moves no point of their surface. Bodies that turn
fast far from everything cost nothing (no point, no substep); a step without such a body is unchanged
bit for bit.

The arc (``spin_substep_arc``, issue 18): the depth a turn leaves is a length, not an angle. The
speculative row of two separated polytopes is one point when their separating axis is an edge-edge
axis (``collision.manifold_hull``): the rows stop that point and the body pivots about it, so the rest
of the edge or face comes down by up to R theta (R the body's reach from its centre of mass, theta
its turn in the step), to first order, with no row that sees it. Measured: cow_pile (cows of reach
1.29 m) at step 202 with ``spin_substep_angle`` 0.1: a cow falling at 8.9 m/s turning 0.18 rad a step
(2 substeps of 0.09 rad) was stopped at its one point 1.6 mm from its neighbour and met it 21.4 mm
deep at a point 76 mm from every point of the substep's start, along a normal 7 degrees from that
point's. So k also reaches ceil(R theta / ``spin_substep_arc``), R = max over the body's geoms of
|local position| + bounding radius (as ``collision.geoms.pad_speculative``): big bodies take more
substeps at the same angle, small ones (a ragdoll's hand) fewer.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core import types as T


def _turning_ends(core):
    """The dynamic bodies of the contact points whose turn moves their surface: every body but the fixed
    ones and those made of spheres centred on their centre of mass alone (a ball's turn moves no point of
    its surface, and the rows' lever arms stay along the normal: spin_down's ball, pile1000's spheres
    would be substepped for nothing). Empty when no point."""
    c, b, g = core.contacts, core.bodies, core.geoms
    m = c.count
    ends = np.concatenate((c.contact_body_a[:m], c.contact_body_b[:m]))
    ends = ends[ends >= 0]
    ends = ends[~b.body_fixed[ends]]
    if not ends.shape[0]:
        return ends
    gc = g.count
    off = np.einsum("ij,ij->i", g.geom_local_position[:gc], g.geom_local_position[:gc])
    shaped = np.zeros(b.count, dtype=np.bool_)
    owner = g.geom_body[:gc]
    mask = (owner >= 0) & ((g.geom_type[:gc] != T.GEOM_SPHERE) | (off > 0.0))
    shaped[owner[mask]] = True
    return ends[shaped[ends]]


def substeps_on(s) -> bool:
    """Whether the settings ask for spin substeps at all (a finite angle or arc, more than 1 substep)."""
    return (math.isfinite(s.spin_substep_angle) or math.isfinite(s.spin_substep_arc)) and s.spin_substeps_max > 1


def _reach(core, ends):
    """[m] per body of ``ends``: the farthest any point of its geoms lies from its centre of mass, bounded by
    max over its geoms of |local position| + bounding radius (``collision.geoms.pad_speculative``'s r)."""
    b, g = core.bodies, core.geoms
    gc = g.count
    r = np.sqrt(np.einsum("ij,ij->i", g.geom_local_position[:gc], g.geom_local_position[:gc])) + g.geom_radius[:gc]
    owner = g.geom_body[:gc]
    ok = (owner >= 0) & np.isfinite(r)
    reach = np.zeros(b.count)
    np.maximum.at(reach, owner[ok], r[ok])
    return reach[ends]


def _substeps_of_turns(turn, core, ends) -> int:
    """k for the turns ``turn`` [rad] (one per body of ``ends``) in the step: the angle's and the arc's."""
    s = core.settings
    k = _substeps_of(float(np.max(turn)), s)
    if math.isfinite(s.spin_substep_arc):
        arc = float(np.max(turn * _reach(core, ends)))
        if arc > s.spin_substep_arc:
            k = max(k, int(min(math.ceil(arc / s.spin_substep_arc), s.spin_substeps_max)))
    return k


def spin_substeps(core, dt: float) -> int:
    """How many substeps this step takes (1: none): the largest |w| dt among the dynamic bodies of the
    detected contact points, over ``spin_substep_angle``, rounded up (and their |w| dt R over
    ``spin_substep_arc``), at most ``spin_substeps_max``."""
    s, c, b = core.settings, core.contacts, core.bodies
    if not c.count or not substeps_on(s):
        return 1
    ends = _turning_ends(core)
    if not ends.shape[0]:
        return 1
    w = b.body_angular_velocity[ends]
    return _substeps_of_turns(np.sqrt(np.einsum("ij,ij->i", w, w)) * dt, core, ends)


def scale_warm_start(core, solver, factor: float) -> None:
    """The cached impulses (per step: the warm start of the next one) times ``factor``: 1 / k before k
    substeps (an impulse of dt / k each), k after them (per full step again for the next step and the
    reported reactions)."""
    c, js = core.contacts, core.joint_store
    m = c.count
    c.contact_normal_impulse[:m] *= factor
    c.contact_friction_impulse[:m] *= factor
    solver.contact_layer_impulse[:m] *= factor
    if js.count:
        js.joint_impulse[: js.count] *= factor
        solver.joint_layer_impulse[: js.count] *= factor


def _substeps_of(turn: float, s) -> int:
    """k for a largest turn of ``turn`` [rad] in the step by the angle alone (1: none)."""
    if turn <= s.spin_substep_angle:
        return 1
    return int(min(math.ceil(turn / s.spin_substep_angle), s.spin_substeps_max))


def turn_substeps(core, flow_ang, h: float) -> int:
    """After the step's velocity solves, before the positions move: the substeps the step needs by the turn
    its velocities are about to make, |a dt u_1 + (1 - a) dt u_2| (``flow_ang`` the first part, h = (1 - a) dt
    times the angular velocity now the second), of the dynamic bodies of this step's contact points (1: none).
    The corrections' rotation is left out: a projection out of a deep jam turned a 2.8e-5 kg link past the angle
    (test_fuzz's SHOCK_WORLD_GROUND_JAM_CASE), and substeps do not make a projection's turn smaller. A body stopped at
    one point by its contact rows is spun up by them within the step, past the |w| dt that ``spin_substeps`` saw at the
    start (the spinning plate: 16 rad/s after the rows of a corner 20 mm away stopped that corner).
    """
    s, c = core.settings, core.contacts
    if not c.count or not substeps_on(s):
        return 1
    ends = _turning_ends(core)
    if not ends.shape[0]:
        return 1
    d = flow_ang[ends] + h * core.bodies.body_angular_velocity[ends]
    return _substeps_of_turns(np.sqrt(np.einsum("ij,ij->i", d, d)), core, ends)


def save_step_start(core, solver) -> tuple:
    """What a shock step's velocity stage writes before the positions move (velocities, the cached contact
    and layer impulses), copied, for ``restore_step_start`` when ``turn_substeps`` asks for substeps."""
    b, c = core.bodies, core.contacts
    n, m = b.count, c.count
    return (b.body_linear_velocity[:n].copy(), b.body_angular_velocity[:n].copy(), c.contact_normal_impulse[:m].copy(),
            c.contact_friction_impulse[:m].copy(), solver.contact_layer_impulse[:m].copy(),
            solver.joint_layer_impulse.copy())


def restore_step_start(core, solver, saved) -> None:
    """``save_step_start``'s copies written back (the bodies have not moved yet)."""
    b, c = core.bodies, core.contacts
    n, m = b.count, c.count
    v, w, cn, cf, li, ji = saved
    b.body_linear_velocity[:n] = v
    b.body_angular_velocity[:n] = w
    c.contact_normal_impulse[:m] = cn
    c.contact_friction_impulse[:m] = cf
    solver.contact_layer_impulse[:m] = li
    solver.joint_layer_impulse = ji
