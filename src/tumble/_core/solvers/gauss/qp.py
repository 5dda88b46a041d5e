"""The quadratic program of Gauss' principle in position form (paper 002 §5, Fig. 7), in 3-D over
body coordinates (002 §8.2: "six variables for three dimensions" instead of point masses and bars).

Unknowns: for every dynamic body i touching a contact, its displacement over the step,
Delta_i = (Delta x_i, Delta theta_i) (6 dof, the rotation linearised: a point at lever r moves by
Delta x + Delta theta x r). We solve for the velocities u = Delta / dt (the same QP scaled by 1/dt,
so the solver's tolerances are in m/s and a problem's size does not depend on dt).

Objective (002 (Q'), Gauss' least constraint): the free prediction x* = x + dt v + dt^2 M^-1 f
(002 Fig. 7 a-b, here from the body's velocity rather than two old positions: u* = v + dt M^-1 f,
the stage ``integrate_velocities``), and

    minimise  1/2 (Delta - Delta*)^T M (Delta - Delta*)  =  dt^2 [1/2 (u - u*)^T M (u - u*)],

M = blockdiag(m_i I_3, I_i^world) the mass matrix in body coordinates (the continuous-mass analogue
of 002 §8.1's point masses: mass and world inertia reproduce its first and second moments).

Constraints (002 (S'), the linearised sidedness of a vertex against an edge, here a contact point
of a manifold against the other body's surface): contact c between bodies a and b, normal n (from
a to b), point p, depth d (gap = -d >= 0 when apart) keeps the projected gap non-negative,

    n . [(Delta x_b + Delta theta_b x r_b) - (Delta x_a + Delta theta_a x r_a)] >= -gap,

r = p - x (body centre). The paper has no friction (§1 "we ignore friction completely"); we add a
polyhedral cone in displacement space: with friction mu and K edges t_k of the tangent plane, each
row uses e_k = n + mu t_k instead of n. Its KKT multipliers z_k >= 0 are impulses along e_k, so the
contact impulse sum_k z_k e_k lies in the friction cone spanned by the edges (Coulomb's inscribed
polyhedral cone); the primal pays for it by a normal separation of mu |tangential slip| while
sliding (the known price of this convex relaxation, measured in tests/physics/test_gauss_solver).

Everything is assembled from the contact arrays with vectorised NumPy (no loop over bodies or
contacts) into scipy.sparse CSC matrices.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass
class StepQP:
    """One QP: ``minimise 1/2 u^T P u + q^T u  subject to  G u >= h`` (u (6 m,) velocities of the
    active bodies, linear then angular, [m/s] and [rad/s]).

    active: (m,) body ids of the unknowns; P (6m, 6m) CSC = M / mass_scale; q (6m,);
    G (rows, 6m) CSC; h (rows,) [m/s]; row_contact (rows,) the contact (index in the store) of each row;
    row_direction (rows, 3) e = n + mu t_k (the direction an impulse of the row acts along);
    mass_scale [kg] (the objective is divided by it so P is O(1); impulses = mass_scale * z).
    """

    active: np.ndarray
    P: sp.csc_matrix
    q: np.ndarray
    G: sp.csc_matrix
    h: np.ndarray
    row_contact: np.ndarray
    row_direction: np.ndarray
    mass_scale: float


def tangent_basis(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit tangents (C, 3) per unit normal (C, 3): t1 = n x e / |n x e| with e the world axis
    least aligned with n (deterministic, well conditioned), t2 = n x t1."""
    C = normal.shape[0]
    axis = np.argmin(np.abs(normal), axis=1)
    e = np.zeros((C, 3))
    e[np.arange(C), axis] = 1.0
    t1 = np.cross(normal, e)
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    t2 = np.cross(normal, t1)
    return t1, t2


def world_inertia(orientation: np.ndarray, inertia_local: np.ndarray) -> np.ndarray:
    """I_world = R I_local R^T (k, 3, 3) for unit quaternions (k, 4) (w, x, y, z)."""
    w, x, y, z = orientation[:, 0], orientation[:, 1], orientation[:, 2], orientation[:, 3]
    R = np.empty((orientation.shape[0], 3, 3))
    R[:, 0, 0] = 1.0 - 2.0 * (y * y + z * z)
    R[:, 0, 1] = 2.0 * (x * y - w * z)
    R[:, 0, 2] = 2.0 * (x * z + w * y)
    R[:, 1, 0] = 2.0 * (x * y + w * z)
    R[:, 1, 1] = 1.0 - 2.0 * (x * x + z * z)
    R[:, 1, 2] = 2.0 * (y * z - w * x)
    R[:, 2, 0] = 2.0 * (x * z - w * y)
    R[:, 2, 1] = 2.0 * (y * z + w * x)
    R[:, 2, 2] = 1.0 - 2.0 * (x * x + y * y)
    return np.einsum("kij,kjl,kml->kim", R, inertia_local, R)


def contact_directions(normal: np.ndarray, friction: np.ndarray, edges: int):
    """The row directions of every contact: n alone when mu = 0 or ``edges`` = 0, else the K cone
    edges n + mu (cos phi_k t1 + sin phi_k t2), phi_k = 2 pi k / K. Returns (row_contact (R,),
    row_direction (R, 3))."""
    C = normal.shape[0]
    if edges == 0:
        return np.arange(C), normal.copy()
    t1, t2 = tangent_basis(normal)
    phi = 2.0 * np.pi * np.arange(edges) / edges
    tang = np.cos(phi)[None, :, None] * t1[:, None, :] + np.sin(phi)[None, :, None] * t2[:, None, :]
    dirs = normal[:, None, :] + friction[:, None, None] * tang                  # (C, K, 3)
    keep = np.ones((C, edges), dtype=bool)
    keep[:, 1:] = (friction > 0.0)[:, None]                                      # mu = 0: one row, n
    row_contact = np.broadcast_to(np.arange(C)[:, None], (C, edges))[keep]
    return row_contact, dirs[keep]


def constraint_matrix(var_a: np.ndarray, var_b: np.ndarray, lever_a: np.ndarray, lever_b: np.ndarray,
                      row_contact: np.ndarray, row_direction: np.ndarray, m: int) -> sp.csc_matrix:
    """G (R, 6m): row r of contact c is [e, r_b x e] on body b's unknowns and -[e, r_a x e] on body
    a's (the relative velocity of the contact point along e, 002 (S')); var_* = -1 (a fixed body or
    the ground) contributes nothing."""
    R = row_contact.shape[0]
    rows = np.arange(R)
    blocks_data, blocks_row, blocks_col = [], [], []
    for var, lever, sign in ((var_b, lever_b, 1.0), (var_a, lever_a, -1.0)):
        v = var[row_contact]
        on = v >= 0
        e = row_direction[on]
        ang = np.cross(lever[row_contact[on]], e)
        coeff = sign * np.concatenate([e, ang], axis=1)                         # (R', 6)
        col = 6 * v[on][:, None] + np.arange(6)[None, :]
        blocks_data.append(coeff.ravel())
        blocks_row.append(np.repeat(rows[on], 6))
        blocks_col.append(col.ravel())
    data = np.concatenate(blocks_data)
    return sp.csc_matrix((data, (np.concatenate(blocks_row), np.concatenate(blocks_col))), shape=(R, 6 * m))


def assemble(body_position, body_orientation, body_mass, body_inertia_local, body_fixed, n_bodies,
             contact_body_a, contact_body_b, contact_point, contact_normal, contact_depth, contact_friction,
             n_contacts, v_pred, w_pred, dt, edges, max_correction_speed) -> StepQP | None:
    """The step's QP from the first ``n_contacts`` contacts, or None when no contact touches a dynamic
    body (then u = u*, exactly the free prediction). ``v_pred``/``w_pred`` (n, 3): u*."""
    a = contact_body_a[:n_contacts]
    b = contact_body_b[:n_contacts]
    fixed = body_fixed[:n_bodies]
    dyn_a = (a >= 0) & ~fixed[np.maximum(a, 0)]
    dyn_b = (b >= 0) & ~fixed[np.maximum(b, 0)]
    live = dyn_a | dyn_b                   # a contact between two fixed bodies constrains nothing
    if not live.any():
        return None
    idx = np.nonzero(live)[0]
    a, b, dyn_a, dyn_b = a[idx], b[idx], dyn_a[idx], dyn_b[idx]
    touched = np.zeros(n_bodies, dtype=bool)
    touched[a[dyn_a]] = True
    touched[b[dyn_b]] = True
    active = np.nonzero(touched)[0]
    m = active.shape[0]
    var_of = np.full(n_bodies, -1, dtype=np.int64)
    var_of[active] = np.arange(m)
    var_a = np.where(dyn_a, var_of[np.maximum(a, 0)], -1)
    var_b = np.where(dyn_b, var_of[np.maximum(b, 0)], -1)

    point = contact_point[idx]
    lever_a = point - body_position[np.maximum(a, 0)]
    lever_b = point - body_position[np.maximum(b, 0)]
    normal = contact_normal[idx]
    row_c, row_dir = contact_directions(normal, contact_friction[idx], edges)
    G = constraint_matrix(var_a, var_b, lever_a, lever_b, row_c, row_dir, m)
    # gap >= 0 apart, < 0 overlapping: e . u >= -gap / dt, an overlap removed at most at the capped speed
    h = np.minimum(contact_depth[idx] / dt, max_correction_speed)[row_c]

    # M = blockdiag(m I, I_world) over the active bodies, scaled by the mean mass
    mass = body_mass[active]
    scale = float(mass.mean())
    inertia = world_inertia(body_orientation[active], body_inertia_local[active]) / scale
    base = 6 * np.arange(m)
    lin_idx = base[:, None] + np.arange(3)[None, :]
    ang_r = (base[:, None, None] + 3 + np.arange(3)[None, :, None]).repeat(3, axis=2)
    ang_c = (base[:, None, None] + 3 + np.arange(3)[None, None, :]).repeat(3, axis=1)
    upper = ang_c >= ang_r                                   # Clarabel reads the upper triangle
    P = sp.csc_matrix((np.concatenate([np.repeat(mass / scale, 3), inertia[upper]]),
                       (np.concatenate([lin_idx.ravel(), ang_r[upper]]),
                        np.concatenate([lin_idx.ravel(), ang_c[upper]]))), shape=(6 * m, 6 * m))
    u_pred = np.concatenate([v_pred[active], w_pred[active]], axis=1)         # (m, 6)
    Mu = np.concatenate([(mass / scale)[:, None] * u_pred[:, :3],
                         np.einsum("kij,kj->ki", inertia, u_pred[:, 3:])], axis=1)
    return StepQP(active, P, -Mu.ravel(), G, h, idx[row_c], row_dir, scale)


@dataclass
class QPResult:
    """u (6m,) the velocities; z (rows,) the multipliers (impulses / mass_scale); status text;
    iterations; ms the solver's wall time; solved: the solver reported success."""

    u: np.ndarray
    z: np.ndarray
    status: str
    iterations: int
    ms: float
    solved: bool


def solve(qp: StepQP, solver: str, tolerance: float, max_iterations: int, warm=None,
          polish_max_rows: int = 1_000_000) -> QPResult:
    """Solve ``qp`` with Clarabel (interior point) or OSQP (ADMM + its own polish; ``warm`` = (u, z)
    of the same size warm-starts it); a Clarabel answer of at most ``polish_max_rows`` rows is
    polished (``polish``)."""
    t = time.perf_counter()
    if solver == "clarabel":
        import clarabel

        s = clarabel.DefaultSettings()
        s.verbose = False
        s.max_iter = int(max_iterations)
        s.tol_gap_abs = s.tol_gap_rel = s.tol_feas = float(tolerance)
        s.tol_ktratio = max(float(tolerance), 1e-10)
        s.presolve_enable = False
        # Clarabel: A u + s = b, s >= 0  <=>  G u >= h with A = -G, b = -h
        sol = clarabel.DefaultSolver(qp.P, qp.q, -qp.G, -qp.h, [clarabel.NonnegativeConeT(qp.G.shape[0])], s).solve()
        status = str(sol.status).split(".")[-1]
        solved = status in ("Solved", "AlmostSolved")
        u, z, its = np.asarray(sol.x), np.asarray(sol.z), int(sol.iterations)
    else:
        import osqp

        prob = osqp.OSQP()
        prob.setup(qp.P, qp.q, qp.G, qp.h, np.full(qp.h.shape[0], np.inf), verbose=False, eps_abs=float(tolerance),
                   eps_rel=float(tolerance), max_iter=100 * int(max_iterations), polishing=True)
        if warm is not None and warm[0].shape[0] == qp.q.shape[0] and warm[1].shape[0] == qp.h.shape[0]:
            prob.warm_start(x=warm[0], y=-warm[1])
        res = prob.solve(raise_error=False)
        status = str(res.info.status)
        solved = status.lower().startswith("solved")
        # OSQP's y for l <= A u is <= 0 at an active lower bound: z = -y
        u, z, its = np.asarray(res.x), -np.asarray(res.y), int(res.info.iter)
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(z))):
        solved = False
    elif solved and solver == "clarabel" and qp.h.shape[0] <= polish_max_rows:
        # first with the rows at the interior point's degenerate level (slack below 10 sqrt(tol)) taken
        # as active too, then with the clearly active rows only (z > s)
        slack = qp.G @ u - qp.h
        for active in (np.nonzero((z > slack) | (slack < 10.0 * np.sqrt(tolerance)))[0], np.nonzero(z > slack)[0]):
            polished = polish(qp, u, z, tolerance, active)
            if polished is not None:
                u, z = polished
                break
    return QPResult(u, z, status, its, 1000.0 * (time.perf_counter() - t), solved)


#: penalty weight 1/POLISH_PENALTY of the polish's augmented Lagrangian [(m/s)^-2 in units of P]
POLISH_PENALTY = 1e-4
#: at most this many multiplier updates; stop when every active row holds to POLISH_RESIDUAL [m/s]
POLISH_ITERATIONS = 20
POLISH_RESIDUAL = 1e-13


def polish(qp: StepQP, u: np.ndarray, z: np.ndarray, tolerance: float, active: np.ndarray):
    """Active-set polish of an interior-point answer (as OSQP's ``polish``): an interior point stops
    with slack s_r = G_r u - h_r and multiplier z_r both ~ sqrt(tolerance) on a row that is active
    with a zero multiplier (two spheres meeting exactly at the end of a step; the K coinciding cone
    rows of a contact that does not slide), and in this scheme that slack becomes velocity
    (v = Delta / dt), 3e-5 m/s of drift apart at tolerance 1e-9. The rows ``active`` are held at
    equality: the equality-constrained QP  min 1/2 u^T P u + q^T u  s.t.  G_A u = h_A  is solved by
    the method of multipliers, which needs only the small matrix of the unknowns,

        (P + G_A^T G_A / e) u = -q + G_A^T (y + h_A / e),    y <- y - (G_A u - h_A) / e,

    one sparse LU (6 per body: 1260 x 1260 for pyramid20, against 20000 x 20000 for the full KKT
    matrix, which took 1.2 s), starting from the interior point's multipliers y = z_A: coinciding
    rows (a rank-deficient G_A) keep their split of the impulse instead of wandering along the null
    space of G_A^T. The answer is kept only if it is primal feasible and its multipliers are
    non-negative within ``tolerance``; otherwise None (the interior-point answer stands)."""
    import scipy.sparse.linalg as spla

    if active.shape[0] == 0:
        return None
    P = qp.P + sp.triu(qp.P, k=1).T
    GA = qp.G[active]
    hA = qp.h[active]
    K = (P + (GA.T @ GA) / POLISH_PENALTY).tocsc()
    try:
        lu = spla.splu(K)
    except RuntimeError:          # singular: a body with no mass cannot happen, but be safe
        return None
    y = z[active].copy()
    u_p = u
    for _ in range(POLISH_ITERATIONS):
        u_p = lu.solve(-qp.q + GA.T @ (y + hA / POLISH_PENALTY))
        r = GA @ u_p - hA
        y -= r / POLISH_PENALTY
        if np.max(np.abs(r)) < POLISH_RESIDUAL:
            break
    if not (np.all(np.isfinite(u_p)) and np.all(np.isfinite(y))):
        return None
    z_p = np.zeros_like(z)
    z_p[active] = y
    if np.min(qp.G @ u_p - qp.h) < -tolerance or np.min(z_p) < -tolerance:
        return None
    return u_p, np.maximum(z_p, 0.0)
