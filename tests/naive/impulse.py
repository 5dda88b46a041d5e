"""Pure-Python/NumPy reference (test oracle) of impulse-based collision response, written directly
from F. Schornbaum, "A Real-time Capable Impulse-based Collision Response Algorithm for Rigid Body
Dynamics", diploma thesis, Erlangen 2010 (paper 004; digest ``shared/notes/seed-impulse-thesis.md``).
Plain loops over contacts and bodies, 3-vectors and 3x3 matrices in NumPy; clarity over speed.

Conventions (tumble's; the thesis' are mirrored):

* A contact joins body ``a`` and body ``b``; its unit ``normal`` points FROM a TO b and ``depth`` > 0
  means overlap. The thesis' contact (A, B, n, d) has n pointing B -> A and d < 0 for overlap, so
  thesis A = our b, thesis B = our a, thesis n = our normal (the same vector), thesis d = -depth.
* Relative contact velocity u = (v_b + w_b x r_b) - (v_a + w_a x r_a), r_x = point - position_x; in
  contact coordinates theta = B^T u, so theta_0 = u.n is the thesis' Delta-theta_AB,0 (< 0: closing).
* An impulse P (world) is applied +P to b and -P to a (thesis Eq. 3.4.4a/b: +Delta-i to A, -Delta-i
  to B).
* Fixed bodies (``fixed[i]``) have inverse mass 0 and inverse inertia 0, never move and never get a
  velocity; contacts between two fixed bodies are dropped everywhere.
* Thresholds are stored as positive numbers (as the thesis quotes them) and negated where the thesis
  uses a negative one: t_pen = -penetration_threshold (a distance), t_res = -resolution_threshold.

Data: ``bodies`` is a dict of arrays ``position`` (n,3) (centre of mass), ``inv_mass`` (n,),
``inv_inertia`` (n,3,3) (world frame), ``v`` (n,3), ``w`` (n,3), ``fixed`` (n,) bool, and for the
sleeping functions ``r_max`` (n,), ``rwa`` (n,), ``asleep`` (n,) bool (when ``asleep`` is present the
resolution and correction wake the bodies they touch: wake conditions 2 and 3). ``contacts`` is a dict
of arrays ``body_a``, ``body_b`` (m,) int, ``point`` (m,3), ``normal`` (m,3), ``depth`` (m,),
``restitution``, ``mu_s``, ``mu_k`` (m,). ``settings`` is a dict with the keys of :data:`PRESETS`.

Choices where the thesis is silent or ambiguous (each is repeated at its function):

* Contact basis: the "x2 = 0" test of Eq. 3.3.2 is ``abs(x2) < 1e-12``.
* Batches: only bodies with at least one contact form batches; batches are ordered by their smallest
  body index, bodies and contacts ascending inside a batch.
* Contact selection ties (equal Delta-theta_0): the lowest contact index.
* Affected contacts of a contact: those of the batch sharing a NON-fixed body with it (a fixed body's
  velocity never changes, so linking through the ground would only cost time).
* Shock stage: the contacts with at least one body in the current subset, minus contacts whose two
  bodies are both frozen or fixed; its cap is shock_iterations_factor x its contacts (0: unlimited).
* Iteration cap 0 = unlimited, with a safety stop at 10**6 iterations (reported, never silent).
* Penetration correction: the work list is taken in ascending contact index ("an arbitrary contact");
  the try order is [V fast, N fast, V slow, N slow] where "fast" is the body with the greater contact
  closing speed (b iff speed_b > speed_a); the winner is the smallest (displaced-body count, N after V,
  try position) - i.e. velocity-based ALWAYS wins a tie on the count (Fig. 9b), also against an
  earlier normal-based approach of the faster body. The early abort of §2.5 is adapted so that it never
  changes that outcome: a run stops when its count reaches the best count if it could not win a tie,
  and when it exceeds the best count otherwise.
"""

import math

import numpy as np

#: Iterations after which an "unlimited" resolution (factor 0) stops anyway (reported in the stats).
SAFETY_ITERATIONS = 10 ** 6

#: Eq. 3.3.2's "x2 = 0" test: |x2| below this takes the first branch (choice, not from the thesis).
BASIS_TOLERANCE = 1e-12

#: The two configurations of the thesis (digest §1.15; §5.1 high performance, §5.5 high accuracy). Lengths in
#: m, speeds in m/s, thresholds as positive numbers (used negated where the thesis' are negative).
#: Values marked "not from the thesis" are this oracle's choices:
#:
#: * remaining_penetration_fraction f_rem (Eq. 2.5.4, 0 < f < 1) = 0.5: the residual overlap f |t_pen| is then
#:   orders of magnitude above rounding (so detection keeps the contact next step, the reason for f_rem in §2.5)
#:   and still (1 - f) |t_pen| away from the threshold (so it is not corrected again); the middle of (0, 1).
#: * sleep_bias (Eq. 3.2.4) = 0.5 per time step: the sleep bias of the public pe engine the thesis extends
#:   (digest §3); Millington's own 0.5**dt per step would need > 3.3 s of rest from the cap, hard to reconcile
#:   with the thesis' timelines (stacks hit at 0.7 s start sleeping around 2 s, §5.1).
#: * sleep_rwa_max = 10 x sleep_threshold**2: the cap of Millington's recency-weighted average ([Mil07], which the
#:   thesis cites for it: ``motion > 10 * sleepEpsilon``, sleepEpsilon being a squared speed); with bias 0.5 a
#:   body at the cap is asleep after ceil(log(1/10)/log(0.5)) = 4 quiet steps.
PRESETS = {
    "high_performance": {
        "dt": 1.0 / 240.0,
        "gravity": (0.0, 0.0, -10.0),             # 004 §5: 10 m/s^2, z up
        "penetration_threshold": 1.74e-3,
        "remaining_penetration_fraction": 0.5,    # not from the thesis (see above)
        "sleep_threshold": 8.33e-3,
        "sleep_bias": 0.5,                        # not from the thesis (see above)
        "sleep_rwa_max": 10.0 * 8.33e-3 ** 2,     # not from the thesis (see above)
        "resolution_threshold": 83.4e-6,
        "max_iterations_factor": 2,
        "shock_propagation": True,
        "shock_iterations_factor": 6,
        "restitution_threshold": 0.0458,
        "gravity_damping": 0.7,
        "gravity_damping_threshold": 0.0833,
    },
    "high_accuracy": {
        "dt": 1.0 / 960.0,
        "gravity": (0.0, 0.0, -10.0),
        "penetration_threshold": 1e-4,
        "remaining_penetration_fraction": 0.5,    # not from the thesis (see above)
        "sleep_threshold": 0.52e-3,
        "sleep_bias": 0.5,                        # not from the thesis (see above)
        "sleep_rwa_max": 10.0 * 0.52e-3 ** 2,     # not from the thesis (see above)
        "resolution_threshold": 5.2e-6,
        "max_iterations_factor": 0,               # unlimited
        "shock_propagation": False,
        "shock_iterations_factor": 6,             # unused (shock propagation off)
        "restitution_threshold": 0.0115,
        "gravity_damping": 0.0,                   # off
        "gravity_damping_threshold": 0.0833,      # unused (damping off)
    },
}


# ----------------------------------------------------------------------------------------------------------------
# Contact space (§3.3, §3.4)
# ----------------------------------------------------------------------------------------------------------------

def skew(r):
    """R with R @ v = r x v (Eq. 3.4.9: rows [0, -r2, r1], [r2, 0, -r0], [-r1, r0, 0])."""
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def contact_basis(n):
    """B = [x | y | z] (Eq. 3.3.1-3.3.4): x = n; y' = (x1, -x0, 0) if x2 = 0 else (0, x2, -x1), y = y'/|y'|;
    z = x cross y (unit already, not normalised). The "x2 = 0" test is ``abs(x2) < BASIS_TOLERANCE`` (1e-12):
    exact zero would send x2 = 1e-300 into the second branch, whose y' = (0, x2, -x1) can then be tiny or
    subnormal; with the tolerance |y'| >= 1e-12 in the second branch and |y'| = sqrt(1 - x2^2) in the first."""
    x = np.asarray(n, dtype=float)
    if abs(x[2]) < BASIS_TOLERANCE:
        y = np.array([x[1], -x[0], 0.0])
    else:
        y = np.array([0.0, x[2], -x[1]])
    y = y / math.sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2])
    z = np.cross(x, y)
    B = np.empty((3, 3))
    B[:, 0] = x
    B[:, 1] = y
    B[:, 2] = z
    return B


def lever_arms(bodies, contacts, c):
    """(a, b, r_a, r_b) with r_x = point - position_x (Eq. 3.4.1)."""
    a = int(contacts["body_a"][c])
    b = int(contacts["body_b"][c])
    p = contacts["point"][c]
    return a, b, p - bodies["position"][a], p - bodies["position"][b]


def collision_matrix(bodies, contacts, c, basis=None):
    """(K_world, K_c) of contact c (Eq. 3.4.7-3.4.11, 3.4.12c): K_world = M_a - R_a I_a^-1 R_a + M_b - R_b I_b^-1 R_b
    with M_x = inv_mass_x E and R_x = skew(r_x); K_c = B^T K_world B. Uses the bodies' CURRENT inverse masses and
    inertias (so frozen bodies of the shock propagation count as infinite mass). Delta-u = K_world P for an impulse
    P applied +P to b and -P to a (the formula is symmetric in a and b)."""
    a, b, r_a, r_b = lever_arms(bodies, contacts, c)
    K = np.zeros((3, 3))
    for x, r in ((a, r_a), (b, r_b)):
        R = skew(r)
        K += bodies["inv_mass"][x] * np.eye(3) - R @ bodies["inv_inertia"][x] @ R
    B = contact_basis(contacts["normal"][c]) if basis is None else basis
    return K, B.T @ K @ B


def relative_velocity(bodies, contacts, c):
    """u = (v_b + w_b x r_b) - (v_a + w_a x r_a) (world; Eq. 3.4.1a/b, 3.4.2 with thesis A = our b)."""
    a, b, r_a, r_b = lever_arms(bodies, contacts, c)
    v, w = bodies["v"], bodies["w"]
    return (v[b] + np.cross(w[b], r_b)) - (v[a] + np.cross(w[a], r_a))


def contact_velocity(bodies, contacts, c, basis=None):
    """theta = B^T u, the relative contact velocity in contact coordinates: theta_0 = Delta-theta_AB,0 (Eq. 3.4.2;
    < 0 closing), theta_1, theta_2 the slip in the contact plane."""
    B = contact_basis(contacts["normal"][c]) if basis is None else basis
    return B.T @ relative_velocity(bodies, contacts, c)


def apply_impulse(bodies, contacts, c, P):
    """+P on b, -P on a at the contact point (Eq. 3.4.4a/b); a fixed (or frozen) body has inverse mass and inverse
    inertia 0 and is unchanged."""
    a, b, r_a, r_b = lever_arms(bodies, contacts, c)
    v, w, im, ii = bodies["v"], bodies["w"], bodies["inv_mass"], bodies["inv_inertia"]
    v[b] += im[b] * P
    w[b] += ii[b] @ np.cross(r_b, P)
    v[a] -= im[a] * P
    w[a] -= ii[a] @ np.cross(r_a, P)


# ----------------------------------------------------------------------------------------------------------------
# Single contact (Algorithm 8 with Algorithm 11; Eqs. 3.5.3-3.5.8)
# ----------------------------------------------------------------------------------------------------------------

def single_impulse(theta, K_c, K_c_inv, cor, mu_s, mu_k, restitution_threshold):
    """The contact-space impulse of Algorithm 8 (lines 1-10) with Algorithm 11 in place of line 1.

    Returns (dj, ddtheta, kinetic, lam): ddtheta is the desired change of theta (Eq. 3.5.3; cor := 0 when the
    closing speed -theta_0 < restitution_threshold, i.e. theta_0 > -threshold, Alg. 11), dj = K_c^-1 ddtheta
    (Eq. 3.4.13); if dj1^2 + dj2^2 > mu_s^2 dj0^2 (static cone 3.5.4 violated) the kinetic impulse (Eq. 3.5.5a,
    3.5.7, 3.5.8): beta = mu_k / sqrt(alpha), dj0 = ddtheta_0 / (K0 + beta (K1 dj1 + K2 dj2)), lam = beta dj0,
    dj1 *= lam, dj2 *= lam, with (K0, K1, K2) the first row of K_c. lam is None in the static case."""
    if theta[0] > -restitution_threshold:
        dd = np.array([-theta[0], -theta[1], -theta[2]])
    else:
        dd = np.array([-(1.0 + cor) * theta[0], -theta[1], -theta[2]])
    dj = K_c_inv @ dd
    alpha = dj[1] * dj[1] + dj[2] * dj[2]
    lam = None
    if alpha > mu_s * mu_s * dj[0] * dj[0]:
        beta = mu_k / math.sqrt(alpha)
        dj[0] = dd[0] / (K_c[0, 0] + beta * (K_c[0, 1] * dj[1] + K_c[0, 2] * dj[2]))
        lam = beta * dj[0]
        dj[1] = lam * dj[1]
        dj[2] = lam * dj[2]
    return dj, dd, lam is not None, lam


def resolve_single(bodies, contacts, c, settings, basis=None, K_c=None, K_c_inv=None):
    """Algorithm 8 (+ Alg. 11) on contact c, in place on bodies["v"], bodies["w"]; returns the contact-space impulse
    dj (dj0 along the normal, on b). basis / K_c / K_c_inv may be passed precomputed (as Algorithm 9 stores them);
    otherwise they are computed from the current state. Wakes a sleeping a or b (wake condition 3)."""
    B = contact_basis(contacts["normal"][c]) if basis is None else basis
    if K_c is None:
        K_c = collision_matrix(bodies, contacts, c, B)[1]
    if K_c_inv is None:
        K_c_inv = np.linalg.inv(K_c)
    theta = contact_velocity(bodies, contacts, c, B)
    dj, _, _, _ = single_impulse(theta, K_c, K_c_inv, contacts["restitution"][c], contacts["mu_s"][c],
                                 contacts["mu_k"][c], settings["restitution_threshold"])
    apply_impulse(bodies, contacts, c, B @ dj)              # Delta-i = B dj (Eq. 3.3.7, 3.4.12a)
    if "asleep" in bodies:
        for x in (int(contacts["body_a"][c]), int(contacts["body_b"][c])):
            if not bodies["fixed"][x]:
                bodies["asleep"][x] = False
    return dj


# ----------------------------------------------------------------------------------------------------------------
# Batches (§3.1 change 1; digest §1.3)
# ----------------------------------------------------------------------------------------------------------------

def batches(n_bodies, fixed, body_a, body_b):
    """Connected components of the non-fixed bodies linked by contacts; fixed bodies are barriers (never nodes).
    A contact with one fixed body belongs to its dynamic partner's batch; contacts between two fixed bodies are
    dropped. Returns a list of (bodies, contacts), both ascending lists, batches ordered by smallest body; bodies
    without any contact form no batch (choice: nothing to solve for them)."""
    parent = list(range(n_bodies))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in zip(body_a, body_b):
        a, b = int(a), int(b)
        if not fixed[a] and not fixed[b]:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    groups = {}
    for c, (a, b) in enumerate(zip(body_a, body_b)):
        a, b = int(a), int(b)
        if fixed[a] and fixed[b]:
            continue
        root = find(b if fixed[a] else a)
        g = groups.setdefault(root, (set(), []))
        for x in (a, b):
            if not fixed[x]:
                g[0].add(x)
        g[1].append(c)
    out = [(sorted(bs), sorted(cs)) for bs, cs in groups.values()]
    out.sort(key=lambda g: g[0][0])
    return out


# ----------------------------------------------------------------------------------------------------------------
# Contact resolution (Algorithm 9) and shock propagation (Algorithm 10)
# ----------------------------------------------------------------------------------------------------------------

def _pick(closing, u0, order):
    """Eq. 3.6.1: the closing contact of smallest Delta-theta_0 (ties: lowest index); "arbitrary": lowest index."""
    if order == "arbitrary":
        return min(closing)
    return min(closing, key=lambda c: (u0[c], c))


def _cap(factor, n_contacts):
    return None if factor == 0 else int(factor * n_contacts)


def _run_loop(bodies, contacts, settings, data, closing, stage, affected, cap, order, stats, record):
    """Lines 10-24 of Algorithm 9 on the contacts ``stage`` (a set), starting from the closing set ``closing``:
    resolve the picked contact (Alg. 8), then update Delta-theta_0 of every contact it affects; only contacts of
    the stage enter or leave the closing set. Returns the number of iterations."""
    t_res = -settings["resolution_threshold"]
    it = 0
    while closing and (cap is None or it < cap) and it < SAFETY_ITERATIONS:
        C = _pick(closing, data["u0"], order)
        record.append((C, data["u0"][C]))
        dj = resolve_single(bodies, contacts, C, settings, data["B"][C], data["K"][C], data["Kinv"][C])
        stats["normal_impulse"][C] += dj[0]
        stats["impulse"][C] += dj
        stats["sequence"].append(C)
        for T in affected[C]:
            data["u0"][T] = contact_velocity(bodies, contacts, T, data["B"][T])[0]
            if T not in stage:
                continue
            if data["u0"][T] < t_res:
                closing.add(T)
            else:
                closing.discard(T)
        it += 1
    if it >= SAFETY_ITERATIONS and closing:
        stats["safety_stop"] = True
    return it


def resolve_batch(bodies, contacts, contact_ids, settings, order="closing_speed"):
    """Algorithm 9 on one batch, followed by Algorithm 10 when its cap was hit with closing contacts left and
    settings["shock_propagation"] is on. In place on bodies["v"], bodies["w"].

    Initialisation: per contact B (Eq. 3.3.1-3.3.4), K_c, K_c^-1 (row 0 of K_c is K_c[0]), Delta-theta_0; closing iff
    Delta-theta_0 < t_res = -resolution_threshold (Eq. 3.4.3). Loop: pick by ``order`` ("closing_speed": smallest
    Delta-theta_0, ties lowest index; "arbitrary": lowest index among the closing), resolve with Alg. 8 + 11, update
    the affected contacts (those of the batch sharing a non-fixed body with it, itself included). Cap:
    max_iterations_factor x len(contacts) (0: unlimited; safety stop at SAFETY_ITERATIONS).

    Shock propagation (Alg. 10): subset = dynamic bodies touching a fixed body; per stage the contacts with at least
    one body in the subset, minus those whose two bodies are frozen/fixed, are solved by the same loop (no new
    initialisation) with cap shock_iterations_factor x #stage contacts; then the subset is frozen (inverse mass
    and inertia 0, velocities kept), K_c / K_c^-1 are recomputed for the contacts between a just-frozen body and a
    body neither processed nor fixed, and the next subset is the unprocessed dynamic neighbours. The original inverse
    masses / inertias are restored (bit-identical copies) at the end.

    Returns stats: iterations (global phase), shock_iterations, sequence (processed contact ids, global then
    stages), picks ((contact, its Delta-theta_0 when picked) per iteration), cap_hit, closing_left_global (sorted ids
    after the global phase), closing_left (sorted ids closing at the end, recomputed), shock_stages (per stage:
    bodies, contacts, iterations, closing_left, frozen_v, frozen_w), normal_impulse (m,) and impulse (m,3) accumulated
    contact-space impulses (zero outside the batch), safety_stop."""
    fixed = bodies["fixed"]
    body_a, body_b = contacts["body_a"], contacts["body_b"]
    m = len(body_a)
    ids = sorted(int(c) for c in contact_ids if not (fixed[body_a[c]] and fixed[body_b[c]]))
    t_res = -settings["resolution_threshold"]
    stats = {"iterations": 0, "shock_iterations": 0, "sequence": [], "picks": [], "cap_hit": False,
             "closing_left_global": [], "closing_left": [], "shock_stages": [], "normal_impulse": np.zeros(m),
             "impulse": np.zeros((m, 3)), "safety_stop": False}
    # initialisation (lines 1-9)
    data = {"B": {}, "K": {}, "Kinv": {}, "u0": {}}
    for c in ids:
        B = contact_basis(contacts["normal"][c])
        K_c = collision_matrix(bodies, contacts, c, B)[1]
        data["B"][c], data["K"][c], data["Kinv"][c] = B, K_c, np.linalg.inv(K_c)
        data["u0"][c] = contact_velocity(bodies, contacts, c, B)[0]
    affected = {}
    for c in ids:
        mine = {int(x) for x in (body_a[c], body_b[c]) if not fixed[x]}
        affected[c] = [T for T in ids if int(body_a[T]) in mine or int(body_b[T]) in mine]
    closing = {c for c in ids if data["u0"][c] < t_res}
    cap = _cap(settings["max_iterations_factor"], len(ids))
    it = _run_loop(bodies, contacts, settings, data, closing, set(ids), affected, cap, order, stats, stats["picks"])
    stats["iterations"] = it
    stats["closing_left_global"] = sorted(closing)
    stats["cap_hit"] = cap is not None and it >= cap and bool(closing)
    if stats["cap_hit"] and settings["shock_propagation"]:
        _shock_propagation(bodies, contacts, settings, ids, data, affected, order, stats)
    stats["closing_left"] = sorted(c for c in ids if contact_velocity(bodies, contacts, c)[0] < t_res)
    return stats


def _shock_propagation(bodies, contacts, settings, ids, data, affected, order, stats):
    """Algorithm 10 (see resolve_batch)."""
    fixed = bodies["fixed"]
    body_a, body_b = contacts["body_a"], contacts["body_b"]
    t_res = -settings["resolution_threshold"]
    members = sorted({int(x) for c in ids for x in (body_a[c], body_b[c]) if not fixed[x]})
    saved = {x: (bodies["inv_mass"][x].copy(), bodies["inv_inertia"][x].copy()) for x in members}
    subset = set()
    for c in ids:                                           # lines 3-5
        a, b = int(body_a[c]), int(body_b[c])
        if fixed[a] and not fixed[b]:
            subset.add(b)
        if fixed[b] and not fixed[a]:
            subset.add(a)
    frozen = set()
    while subset:
        stage = [c for c in ids if (int(body_a[c]) in subset or int(body_b[c]) in subset)
                 and not all(fixed[x] or int(x) in frozen for x in (body_a[c], body_b[c]))]
        closing = {c for c in stage if data["u0"][c] < t_res}
        cap = _cap(settings["shock_iterations_factor"], len(stage))
        it = _run_loop(bodies, contacts, settings, data, closing, set(stage), affected, cap, order, stats, [])
        stats["shock_iterations"] += it
        nxt = set()
        for X in sorted(subset):                            # lines 9-12
            bodies["inv_mass"][X] = 0.0
            bodies["inv_inertia"][X] = np.zeros((3, 3))
            frozen.add(X)
        for c in ids:
            a, b = int(body_a[c]), int(body_b[c])
            for X, Y in ((a, b), (b, a)):
                if X in subset and not fixed[Y] and Y not in frozen:
                    nxt.add(Y)
        for c in ids:                                       # K of the contacts on the frozen boundary
            a, b = int(body_a[c]), int(body_b[c])
            for X, Y in ((a, b), (b, a)):
                if X in subset and not fixed[Y] and Y not in frozen:
                    K_c = collision_matrix(bodies, contacts, c, data["B"][c])[1]
                    data["K"][c], data["Kinv"][c] = K_c, np.linalg.inv(K_c)
        stats["shock_stages"].append({
            "bodies": sorted(subset), "contacts": stage, "iterations": it, "closing_left": sorted(closing),
            "frozen_v": {X: bodies["v"][X].copy() for X in sorted(subset)},
            "frozen_w": {X: bodies["w"][X].copy() for X in sorted(subset)}})
        subset = nxt
    for x, (im, ii) in saved.items():                       # line 15
        bodies["inv_mass"][x] = im
        bodies["inv_inertia"][x] = ii


def resolve_contacts(bodies, contacts, settings, order="closing_speed"):
    """resolve_batch on every batch (in the order of :func:`batches`); returns the list of (batch, stats)."""
    out = []
    for batch in batches(len(bodies["fixed"]), bodies["fixed"], contacts["body_a"], contacts["body_b"]):
        out.append((batch, resolve_batch(bodies, contacts, batch[1], settings, order)))
    return out


# ----------------------------------------------------------------------------------------------------------------
# Penetration correction (Algorithms 1-3; §2.3-2.5)
# ----------------------------------------------------------------------------------------------------------------

class _Stop(Exception):
    def __init__(self, status):
        super().__init__(status)
        self.status = status


def _push(X, dX, Cx, ctx):
    """Lines 2-13 of Algorithm 1 for contact Cx of X: returns (Y, dY) when dX pushes X (further) into Y, else None;
    raises _Stop("invalid") when Y is fixed or the initial partner Z (Fig. 8). Uses dC' = d - f_rem t_pen in place
    of the contact distance (Eq. 2.5.5/2.5.6) and the intercept theorem for a gap (Eq. 2.3.6)."""
    a, b = int(ctx["body_a"][Cx]), int(ctx["body_b"][Cx])
    n = ctx["normal"][Cx]
    Y, n_xy = (b, n) if X == a else (a, -n)                 # our normal points a -> b
    dC = ctx["distance"][Cx] - ctx["f_rem"] * ctx["t_pen"]
    s = float(np.dot(dX, n_xy))
    if s > 0.0 and s > dC:                                  # Eq. 2.3.4, 2.3.5
        if ctx["fixed"][Y] or Y == ctx["Z"]:
            raise _Stop("invalid")
        dY = ((s - dC) / s) * dX if dC > 0.0 else dX        # Eq. 2.3.6
        return Y, dY
    return None


def _assign(Y, dY, state, ctx):
    """Lines 14-18: keep dY if Y has no displacement yet or dY is longer; counts bodies, early abort at the limit."""
    cur = state["disp"].get(Y)
    if cur is not None and not float(np.dot(dY, dY)) > float(np.dot(cur, cur)):
        return False
    if cur is None:
        state["count"] += 1
        if ctx["limit"] is not None and state["count"] >= ctx["limit"]:
            raise _Stop("early_abort")
    state["disp"][Y] = dY
    return True


def _note(Cx, state):
    """Lines 20-22: record Cx among the affected contacts (once)."""
    if Cx not in state["affected_set"]:
        state["affected_set"].add(Cx)
        state["affected"].append(Cx)


def _context(x0, d0, partner, adjacency, contacts, distance, fixed, t_pen, f_rem, limit):
    ctx = {"body_a": contacts["body_a"], "body_b": contacts["body_b"], "normal": contacts["normal"],
           "distance": distance, "fixed": fixed, "t_pen": t_pen, "f_rem": f_rem, "Z": int(partner),
           "limit": limit, "adjacency": adjacency}
    state = {"disp": {int(x0): np.asarray(d0, dtype=float)}, "count": 1, "affected": [], "affected_set": set()}
    return ctx, state


def _result(state, status):
    return {"status": status, "displacement": state["disp"], "affected": state["affected"], "count": state["count"]}


def propagate_recursive(x0, d0, partner, adjacency, contacts, distance, fixed, t_pen, f_rem, limit=None):
    """Algorithm 1 as recursive calls, started with (x0, d0); ``partner`` is Z, the other body of the initial
    contact. adjacency[X] = the contact ids of X (ascending), distance = current thesis distances (-depth).
    ``limit``: early abort as soon as the number of displaced bodies reaches it (None: never).
    Returns {status: "ok" | "invalid" | "early_abort", displacement: {body: vector}, affected: [contacts], count}."""
    ctx, state = _context(x0, d0, partner, adjacency, contacts, distance, fixed, t_pen, f_rem, limit)
    if limit is not None and state["count"] >= limit:
        return _result(state, "early_abort")

    def visit(X, dX):
        for Cx in ctx["adjacency"][X]:
            hit = _push(X, dX, Cx, ctx)
            if hit is not None and _assign(hit[0], hit[1], state, ctx):
                visit(hit[0], hit[1])                       # the recursive call (line 17)
            _note(Cx, state)

    try:
        visit(int(x0), state["disp"][int(x0)])
    except _Stop as stop:
        return _result(state, stop.status)
    return _result(state, "ok")


def propagate_stack(x0, d0, partner, adjacency, contacts, distance, fixed, t_pen, f_rem, limit=None):
    """Algorithm 3: Algorithm 1 with an explicit LIFO stack of (body, displacement) pairs instead of recursion
    (stale, shorter entries are processed as popped, as in the thesis; they cannot change the outcome).
    Same arguments and result as :func:`propagate_recursive`."""
    ctx, state = _context(x0, d0, partner, adjacency, contacts, distance, fixed, t_pen, f_rem, limit)
    if limit is not None and state["count"] >= limit:
        return _result(state, "early_abort")
    stack = [(int(x0), state["disp"][int(x0)])]
    try:
        while stack:
            X, dX = stack.pop()
            for Cx in ctx["adjacency"][X]:
                hit = _push(X, dX, Cx, ctx)
                if hit is not None and _assign(hit[0], hit[1], state, ctx):
                    stack.append(hit)                       # stack.push(Y, dY) in place of the recursion
                _note(Cx, state)
    except _Stop as stop:
        return _result(state, stop.status)
    return _result(state, "ok")


def closing_speeds(bodies, contacts, c, position=None, point=None):
    """(speed_a, speed_b), the contact closing speeds of §2.5 (after Eq. 2.5.1):
    speed_b = (v_b + w_b x (p - p_b)) . (-n) (thesis A), speed_a = (v_a + w_a x (p - p_a)) . n (thesis B)."""
    pos = bodies["position"] if position is None else position
    p = contacts["point"][c] if point is None else point[c]
    a, b = int(contacts["body_a"][c]), int(contacts["body_b"][c])
    n = contacts["normal"][c]
    v, w = bodies["v"], bodies["w"]
    speed_b = float(np.dot(v[b] + np.cross(w[b], p - pos[b]), -n))
    speed_a = float(np.dot(v[a] + np.cross(w[a], p - pos[a]), n))
    return speed_a, speed_b


def candidates(bodies, contacts, c, distance, dt, t_pen, f_rem, position=None, point=None):
    """The up to four initial corrections of contact c in try order (§2.5 item 2), as (body, kind, displacement),
    kind "V" (back along s_x = v_x dt, Eq. 2.3.2/2.3.3) or "N" (along the normal, Eq. 2.3.1), all with
    d_corr = d - f_rem t_pen (Eq. 2.5.4). In our conventions (thesis A = b, B = a, same n):
    N-b: d_b = -d_corr n; N-a: d_a = +d_corr n; V-b iff s_b.n <= d_corr: d_b = -(d_corr / s_b.n) s_b;
    V-a iff s_a.n >= -d_corr: d_a = (d_corr / s_a.n) s_a. The body with the greater closing speed comes first
    (b iff speed_b > speed_a; ties: a, as the thesis' "otherwise" branch), V before N for each body; fixed bodies
    get none."""
    a, b = int(contacts["body_a"][c]), int(contacts["body_b"][c])
    n = contacts["normal"][c]
    d_corr = distance[c] - f_rem * t_pen
    speed_a, speed_b = closing_speeds(bodies, contacts, c, position, point)
    out = []
    for X in ((b, a) if speed_b > speed_a else (a, b)):
        if bodies["fixed"][X]:
            continue
        s = bodies["v"][X] * dt
        sn = float(np.dot(s, n))
        if X == b and sn <= d_corr:
            out.append((X, "V", -(d_corr / sn) * s))
        elif X == a and sn >= -d_corr:
            out.append((X, "V", (d_corr / sn) * s))
        out.append((X, "N", (-d_corr if X == b else d_corr) * n))
    return out


def correct_penetrations(bodies, contacts, contact_ids, dt, settings, form="stack", early_abort=True):
    """Algorithm 2 on one batch (contact_ids), with the DFS of Algorithm 3 (form="stack") or 1 (form="recursive").

    Work list L = the contacts with d = -depth < t_pen = -penetration_threshold, taken in ascending index. For the
    picked C every candidate (see :func:`candidates`) runs the DFS with Z = the other body; invalid runs (push into a
    fixed body or Z) are dropped; the winner has the fewest displaced bodies, then V before N, then the earlier try
    (velocity-based always wins a count tie, Fig. 9b - the documented resolution of the §2.5 ordering conflict). With
    ``early_abort`` a run stops as soon as it cannot win any more (count reaches the best count when it could not win
    a tie, exceeds it when it could): the outcome equals the exhaustive one. No valid candidate: C is left as it is
    (reported in ``unresolved``). Otherwise the displacements are applied (linear only, no rotations), every affected
    contact T is updated (p_T += (d_a + d_b)/2, Eq. 2.3.7a; d_T += (d_b - d_a).n_T, Eq. 2.3.7b in our orientation) and
    leaves L once d_T >= t_pen; C itself leaves L after its correction in any case (handled once). Displaced sleeping
    bodies are woken (wake condition 2) when bodies has "asleep". Nothing else in bodies/contacts is modified.

    Returns (displacement (n,3) summed over the batch's corrections, new depths (m,), stats) with stats: points (m,3)
    updated contact points, penetrating_before / penetrating_after (ids with d < t_pen), unresolved (ids),
    choices (per corrected contact: contact, body, kind, count, displaced bodies), displaced (sorted body ids),
    dfs_runs, early_aborts, invalid_runs."""
    fixed = bodies["fixed"]
    body_a, body_b, normal = contacts["body_a"], contacts["body_b"], contacts["normal"]
    t_pen = -settings["penetration_threshold"]
    f_rem = settings["remaining_penetration_fraction"]
    propagate = propagate_stack if form == "stack" else propagate_recursive
    distance = -np.asarray(contacts["depth"], dtype=float)
    point = np.array(contacts["point"], dtype=float)
    position = np.array(bodies["position"], dtype=float)
    n_bodies = len(fixed)
    displacement = np.zeros((n_bodies, 3))
    ids = sorted(int(c) for c in contact_ids if not (fixed[body_a[c]] and fixed[body_b[c]]))
    adjacency = {x: [] for x in range(n_bodies)}
    for c in ids:
        adjacency[int(body_a[c])].append(c)
        adjacency[int(body_b[c])].append(c)
    work = [c for c in ids if distance[c] < t_pen]
    stats = {"penetrating_before": list(work), "unresolved": [], "choices": [], "dfs_runs": 0, "early_aborts": 0,
             "invalid_runs": 0}
    displaced = set()
    while work:
        C = work[0]
        a, b = int(body_a[C]), int(body_b[C])
        best = None                                          # (key, body, kind, result)
        for rank, (X, kind, dX) in enumerate(candidates(bodies, contacts, C, distance, dt, t_pen, f_rem,
                                                        position, point)):
            limit = None
            if early_abort and best is not None:
                can_tie_win = kind == "V" and best[2] == "N"
                limit = best[0][0] + 1 if can_tie_win else best[0][0]
            res = propagate(X, dX, b if X == a else a, adjacency, contacts, distance, fixed, t_pen, f_rem, limit)
            stats["dfs_runs"] += 1
            if res["status"] == "early_abort":
                stats["early_aborts"] += 1
                continue
            if res["status"] == "invalid":
                stats["invalid_runs"] += 1
                continue
            key = (res["count"], 0 if kind == "V" else 1, rank)
            if best is None or key < best[0]:
                best = (key, X, kind, res)
        work.remove(C)
        if best is None:                                     # Fig. 8: left as it is
            stats["unresolved"].append(C)
            continue
        disp = best[3]["displacement"]
        for x, dx in disp.items():
            displacement[x] += dx
            position[x] += dx
            displaced.add(x)
        for T in best[3]["affected"]:                        # lines 13-18
            zero = np.zeros(3)
            d_a = disp.get(int(body_a[T]), zero)
            d_b = disp.get(int(body_b[T]), zero)
            point[T] += 0.5 * (d_a + d_b)
            distance[T] += float(np.dot(d_b - d_a, normal[T]))
            if distance[T] >= t_pen and T in work:
                work.remove(T)
        stats["choices"].append({"contact": C, "body": best[1], "kind": best[2], "count": best[3]["count"],
                                 "displaced": sorted(disp)})
    if "asleep" in bodies:
        for x in displaced:
            bodies["asleep"][x] = False
    stats["points"] = point
    stats["displaced"] = sorted(displaced)
    stats["penetrating_after"] = [c for c in ids if distance[c] < t_pen]
    return displacement, -distance, stats


# ----------------------------------------------------------------------------------------------------------------
# Sleeping (Algorithm 5), support wake-up (conditions 5, 6), velocity update with gravity damping (Algorithm 12)
# ----------------------------------------------------------------------------------------------------------------

def motion_bound_sq(v, w, r_max):
    """motion^2 <= 2 (v.v + (w.w) r_max^2) (Eq. 3.2.3)."""
    return 2.0 * (float(np.dot(v, v)) + float(np.dot(w, w)) * (r_max * r_max))


def sleep_check(v, w, r_max, rwa, settings):
    """Algorithm 5 for one body: rwa = bias rwa + (1 - bias) m2 (Eq. 3.2.4); asleep iff rwa < thr^2, then rwa = thr^2;
    else rwa is capped at sleep_rwa_max. Returns (asleep, rwa) (the caller zeroes v and w on sleep)."""
    thr2 = settings["sleep_threshold"] ** 2
    bias = settings["sleep_bias"]
    rwa = bias * rwa + (1.0 - bias) * motion_bound_sq(v, w, r_max)
    if rwa < thr2:
        return True, thr2
    if rwa > settings["sleep_rwa_max"]:
        rwa = settings["sleep_rwa_max"]
    return False, rwa


def sleep_step(bodies, settings):
    """Algorithm 5 on every awake dynamic body, in place (v = w = 0 on sleep, rwa, asleep); returns the bodies put
    to sleep."""
    slept = []
    for i in range(len(bodies["fixed"])):
        if bodies["fixed"][i] or bodies["asleep"][i]:
            continue
        asleep, bodies["rwa"][i] = sleep_check(bodies["v"][i], bodies["w"][i], bodies["r_max"][i], bodies["rwa"][i],
                                               settings)
        if asleep:
            bodies["v"][i] = 0.0
            bodies["w"][i] = 0.0
            bodies["asleep"][i] = True
            slept.append(i)
    return slept


def support_counts(n_bodies, fixed, contacts, gravity):
    """Per body, its contacts "in the direction of gravity" (wake conditions 5/6, §3.2): moving X along g would
    close the contact, n_XY . g > 0 with n_XY from X to the other body: n.g > 0 for a, n.g < 0 for b."""
    counts = np.zeros(n_bodies, dtype=np.int64)
    g = np.asarray(gravity, dtype=float)
    for c in range(len(contacts["body_a"])):
        a, b = int(contacts["body_a"][c]), int(contacts["body_b"][c])
        if fixed[a] and fixed[b]:
            continue
        ng = float(np.dot(contacts["normal"][c], g))
        if ng > 0.0 and not fixed[a]:
            counts[a] += 1
        if ng < 0.0 and not fixed[b]:
            counts[b] += 1
    return counts


def support_wake(bodies, contacts, gravity, previous_counts):
    """Wake conditions 5 and 6 (Alg. 6, after penetration correction): a sleeping body with fewer gravity-direction
    contacts than last step, or with none, is woken. Returns (counts, woken)."""
    counts = support_counts(len(bodies["fixed"]), bodies["fixed"], contacts, gravity)
    woken = []
    for i in range(len(counts)):
        if bodies["fixed"][i] or not bodies["asleep"][i]:
            continue
        if counts[i] < previous_counts[i] or counts[i] == 0:
            bodies["asleep"][i] = False
            woken.append(i)
    return counts, woken


def velocity_update(bodies, settings, dt=None, gravity=None):
    """Algorithm 12 (gravity only), in place on awake dynamic bodies: motion^2 bound (Eq. 3.2.3) below
    gravity_damping_threshold^2 -> v += (1 - gravity_damping) g dt, else v += g dt. Sleeping and fixed bodies get
    nothing. dt / gravity default to settings["dt"] / settings["gravity"]. Returns the damped bodies."""
    dt = settings["dt"] if dt is None else dt
    g = np.asarray(settings["gravity"] if gravity is None else gravity, dtype=float)
    thr2 = settings["gravity_damping_threshold"] ** 2
    damped = []
    for i in range(len(bodies["fixed"])):
        if bodies["fixed"][i] or ("asleep" in bodies and bodies["asleep"][i]):
            continue
        factor = 1.0
        if motion_bound_sq(bodies["v"][i], bodies["w"][i], bodies["r_max"][i]) < thr2:
            factor = 1.0 - settings["gravity_damping"]
            if settings["gravity_damping"] > 0.0:
                damped.append(i)
        bodies["v"][i] += factor * g * dt
    return damped


# ------------------------------------------------------------------ issue 18: is a slow body held?
def held_by_contacts(i, body_a, point, normal, friction, position, gravity, margin, force_tolerance=1e-3):
    """Twin of ``sleeping.held_by_contacts``, written from statics with SciPy's NNLS: body i's contacts
    (``body_a``, ``point``, ``normal`` (a -> b), ``friction`` of the contacts that touch i) can hold it if
    non-negative forces on the edges n +- mu t1, n +- mu t2 of each friction pyramid balance its weight
    (force within ``force_tolerance`` of it) and give no torque about its centre (within ``margin`` m of
    lever arm): min |A f - b| <= 1 with the force rows / tol and the torque rows / margin, f in weights."""
    from scipy.optimize import nnls

    g = np.asarray(gravity, float)
    if np.linalg.norm(g) == 0.0:
        return True
    cols = []
    for c in range(len(body_a)):
        n = np.asarray(normal[c], float) * (-1.0 if body_a[c] == i else 1.0)
        t1 = np.cross([1.0, 0.0, 0.0], n) if abs(n[0]) < 0.9 else np.cross([0.0, 1.0, 0.0], n)
        t1 /= np.linalg.norm(t1)
        t2 = np.cross(n, t1)
        r = np.asarray(point[c], float) - np.asarray(position, float)
        mu = friction[c]
        edges = [n + mu * t1, n - mu * t1, n + mu * t2, n - mu * t2] if mu > 0 else [n]
        cols += [np.r_[d / force_tolerance, np.cross(r, d) / margin] for d in edges]
    if not cols:
        return False
    b = np.r_[-g / np.linalg.norm(g) / force_tolerance, 0.0, 0.0, 0.0]
    _, res = nnls(np.array(cols).T, b, maxiter=10_000)
    return res <= 1.0
