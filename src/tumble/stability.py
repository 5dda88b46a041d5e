"""Is a resting structure stable? The linear feasibility problem of paper 002 §1 in 3-D, and for an
unstable one the initial motion from the first least-constraint QP (002 abstract: "the first of
these quadratic programs gives an exact description of initial infinitesimal collapse").

    tb.stability(world) -> StabilityReport

Stability (002 §1, "a system of linear inequalities whose variables model the forces exchanged"):
the bodies are at rest where they are. Collision detection gives the touching contact points (gap
<= ``touch_tolerance``). Each point c between bodies a and b (normal n from a to b, friction mu)
carries a force f_c = sum_k beta_ck e_ck on b (and -f_c on a), beta >= 0, with e_ck = n + mu t_k the
K edges of the polyhedral friction cone (inscribed in Coulomb's cone: a structure this test calls
stable is stable under the circular cone too). The structure is stable iff for every dynamic body

    sum_c (+-) f_c + m g + f_user = 0,     sum_c (+-) (p_c - x) x f_c + tau_user = 0

has a solution: a linear program (HiGHS through scipy's ``linprog``) with objective sum beta (the
least total force that balances, a definite answer for the reported forces).

Initial motion of an unstable structure: one gauss QP (``_core.solvers.gauss.qp``) from rest with
step ``probe_dt`` (u* = dt M^-1 f): u / dt is the initial acceleration of each body (the QP over a
step from rest is 002 (Q) in position form, Thm 5.1).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from tumble.errors import SettingsError


@dataclass
class StabilityReport:
    """The answer of :func:`stability`.

    stable: the contact forces can balance every dynamic body (002 §1).
    points (c, 3) [m], normals (c, 3) (from body_a to body_b), body_a, body_b (c,): the touching
        contacts the test used; forces (c, 3) [N]: the force on body_b (body_a gets -force) of the
        least-total-force solution (zeros when unstable).
    residual [N]: the largest force/torque-balance violation of the LP's answer (0 when unstable).
    acceleration (n, 3) [m/s^2] and angular_acceleration (n, 3) [rad/s^2]: the initial motion from
        the first least-constraint QP (zeros when stable, the LP having answered);
    moving (n,) bool: the bodies whose initial acceleration exceeds ``moving_tolerance`` |g|;
    displacement (n, 3) [m] and rotation (n, 3) [rad]: the first QP step's displacement of each body
        over ``probe_dt`` (Delta = dt u = dt^2 a: the initial motion as the paper's position step).
    probe_dt: [s] that step.
    """

    stable: bool
    points: np.ndarray
    normals: np.ndarray
    body_a: np.ndarray
    body_b: np.ndarray
    forces: np.ndarray
    residual: float
    acceleration: np.ndarray
    angular_acceleration: np.ndarray
    moving: np.ndarray
    displacement: np.ndarray
    rotation: np.ndarray
    probe_dt: float

    @property
    def moving_bodies(self) -> list[int]:
        """The ids of the bodies that start to move (empty when stable)."""
        return [int(i) for i in np.nonzero(self.moving)[0]]


def _check(name: str, v, lo: float, hi: float = math.inf) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and lo < v < hi):
        raise SettingsError(f"stability: {name}={v!r} must be a finite number in ({lo}, {hi})")
    return float(v)


def stability(world, *, friction_edges: int = 8, touch_tolerance: float = 1e-4, probe_dt: float = 1e-3,
              moving_tolerance: float = 1e-3) -> StabilityReport:
    """Decide whether ``world``'s bodies, at rest where they are, stand (002 §1), and how an unstable
    structure starts to move. The world is not changed (the test runs on a copy of its state).

    friction_edges: K >= 3 edges of each polyhedral friction cone (default 8);
    touch_tolerance: [m] points at most this far apart count as touching (default 0.1 mm);
    probe_dt: [s] the step of the initial-motion QP (default 1 ms; the answer u / dt is its
        acceleration, exact in the limit);
    moving_tolerance: a body moves when its initial acceleration exceeds this fraction of |g|
        (default 1e-3; a resting body's QP answer is ~1e-9 |g|).
    """
    from scipy.optimize import linprog

    from tumble._core import stages
    from tumble._core.solvers.gauss import qp as gqp
    from tumble.world import World

    if not isinstance(world, World):
        raise SettingsError(f"stability: world={type(world).__name__} must be a tumble World")
    if isinstance(friction_edges, bool) or not isinstance(friction_edges, int) or friction_edges < 3:
        raise SettingsError(f"stability: friction_edges={friction_edges!r} must be an integer >= 3")
    touch = _check("touch_tolerance", touch_tolerance, 0.0)
    dt = _check("probe_dt", probe_dt, 0.0)
    tol = _check("moving_tolerance", moving_tolerance, 0.0)

    core = copy.deepcopy(world._core)        # collision writes stores and counters: use a copy
    b = core.bodies
    n = b.count
    stages.collide(core, {}, 0.0, False, touch)
    c = core.contacts
    keep = np.nonzero(c.contact_depth[: c.count] >= -touch)[0]
    body_a, body_b = c.contact_body_a[keep].copy(), c.contact_body_b[keep].copy()
    points, normals = c.contact_point[keep].copy(), c.contact_normal[keep].copy()
    friction = c.contact_friction[keep].copy()
    fixed = b.body_fixed[:n]
    dynamic = np.nonzero(~fixed)[0]
    g = np.asarray(core.gravity, dtype=np.float64)
    mass = b.body_mass[:n]
    load_f = mass[:, None] * g[None, :] + b.body_force[:n]           # (n, 3) [N]
    load_t = b.body_torque[:n].copy()                                 # (n, 3) [N m]
    zeros3 = np.zeros((n, 3))

    # the LP: columns beta_ck >= 0, rows the six balance equations of every dynamic body
    row_c, row_dir = gqp.contact_directions(normals, friction, friction_edges)
    var_of = np.full(n, -1, dtype=np.int64)
    var_of[dynamic] = np.arange(dynamic.shape[0])
    dyn_a = (body_a >= 0) & ~fixed[np.maximum(body_a, 0)]
    dyn_b = (body_b >= 0) & ~fixed[np.maximum(body_b, 0)]
    var_a = np.where(dyn_a, var_of[np.maximum(body_a, 0)], -1)
    var_b = np.where(dyn_b, var_of[np.maximum(body_b, 0)], -1)
    lever_a = points - b.body_position[np.maximum(body_a, 0)]
    lever_b = points - b.body_position[np.maximum(body_b, 0)]
    m = dynamic.shape[0]
    # G^T of the QP is exactly the map from row impulses to body wrenches: A_eq = G^T
    A = gqp.constraint_matrix(var_a, var_b, lever_a, lever_b, row_c, row_dir, m).T.tocsc()
    wrench = -np.concatenate([load_f[dynamic], load_t[dynamic]], axis=1).ravel()     # (6m,)
    # scale each body's equations by its weight (and weight x size for torques) so HiGHS's absolute
    # feasibility tolerance means the same for a 1 g and a 1 t body
    weight = np.maximum(mass[dynamic] * max(float(np.linalg.norm(g)), 1e-12), 1e-300)
    scale = np.repeat(1.0 / weight, 6)
    forces = np.zeros((keep.shape[0], 3))
    residual = 0.0
    if m == 0:
        stable = True
    elif A.shape[1] == 0:
        stable = bool(np.all(wrench == 0.0))
    else:
        import scipy.sparse as sp

        res = linprog(np.ones(A.shape[1]), A_eq=sp.diags(scale) @ A, b_eq=scale * wrench, bounds=(0, None),
                      method="highs")
        stable = res.status == 0
        if stable:
            beta = res.x
            np.add.at(forces, row_c, beta[:, None] * row_dir)
            residual = float(np.max(np.abs(A @ beta - wrench)))

    acc = zeros3.copy()
    ang = zeros3.copy()
    moving = np.zeros(n, dtype=bool)
    if not stable:
        v_pred = np.zeros((n, 3))
        w_pred = np.zeros((n, 3))
        v_pred[dynamic] = dt * load_f[dynamic] / mass[dynamic, None]
        w_pred[dynamic] = dt * np.einsum("kij,kj->ki", b.body_inv_inertia_world[dynamic], load_t[dynamic])
        problem = gqp.assemble(b.body_position, b.body_orientation, b.body_mass, b.body_inertia_local, b.body_fixed, n,
                               body_a, body_b, points, normals, np.zeros(keep.shape[0]), friction, keep.shape[0],
                               v_pred, w_pred, dt, friction_edges, math.inf)
        acc[dynamic] = v_pred[dynamic] / dt
        ang[dynamic] = w_pred[dynamic] / dt
        if problem is not None:
            sol = gqp.solve(problem, "clarabel", 1e-10, 200)
            u = sol.u.reshape(-1, 6)
            acc[problem.active] = u[:, :3] / dt
            ang[problem.active] = u[:, 3:] / dt
        gnorm = max(float(np.linalg.norm(g)), 1e-12)
        moving = np.linalg.norm(acc, axis=1) > tol * gnorm
        moving |= np.linalg.norm(ang, axis=1) * np.sqrt(
            np.maximum(np.trace(b.body_inertia_local[:n], axis1=1, axis2=2), 0.0) / np.maximum(mass, 1e-300)
        ) > tol * gnorm
        moving &= ~fixed
    return StabilityReport(bool(stable), points, normals, body_a, body_b, forces, residual, acc, ang, moving,
                           acc * dt * dt, ang * dt * dt, dt)
