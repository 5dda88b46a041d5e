"""Time steps: the position-based QP (Q') of Fig. 7 (primary) and the acceleration-based loop of Fig. 6.

Position step (Fig. 7, paper 002 §5, §8.3). From the positions p^{l-1}, p^l:

    a) p^ = p^l + (p^l - p^{l-1})               (linear extrapolation)
    b) p^ += g dt^2                             (external force)
    c) minimise sum_i m_i |p_i - p^_i|^2  over the new positions p, subject to
       (L'')  <p_i - p_j, p_i^l - p_j^l> = L0_ij |p_i^l - p_j^l|                  for all hard bars
       (S')   <p_k - [(1 - a) p_i + a p_j], n^l> >= -c A_out(D_i, D_j, D_k) / |e^l|   for the sidedness triples
    d) p^{l+1} = p.

Here D = p^l - p^{l-1} is the last displacement, n^l the outward unit normal of the edge i -> j at p^l
(the paper uses the unnormalised (p_j - p_i)^perp; we divide the row by |e^l| for conditioning) and
A_out the doubled signed area (assembly.area_out). The factor c = 2 is the paper's (S') (it maps the
2 A(v_i, v_j, v_k) of (4.4) through Thm. 5.1, A(D) = A(v) dt^2); ``curvature_factor=1`` is the exact
second-order Taylor expansion of A_out(p^{l+1}) >= 0 around p^l with D^{l+1} ~ D^l (our derivation,
not the paper's). Collisions need no special handling (§7): a vertex that would cross an edge is
stopped on it, which is a totally inelastic impact (Thm. 7.1).

(L'') replaces the (L') of Thm. 5.1: it targets the original length L0 instead of the previous length,
so length errors do not accumulate (§8.3). The penalty bars of §8.4 add M (<p_i - p_j, e^l> - L0 |e^l|)^2
to the objective (unnormalised e^l, M as the paper's 100 by default).

Acceleration step (Fig. 6, §4): minimise sum m |a - g|^2 subject to (L2*) <a_i - a_j, e> = -|v_i - v_j|^2
and (S2*) <a_k - [(1 - a) a_i + a a_j], n> >= -2 A_out(v_i, v_j, v_k) / |e| for the triples in contact
(gap <= contact_tol) that are not separating; then v += a dt, p += v dt (3.1). Impacts are not part of
Gauss' principle: before the acceleration QP, velocities of approaching contacts are projected by the
inelastic-collision QP (Q*) of Thm. 7.1. No drift correction (step (d) of Fig. 3) is applied, so this
loop shows the drift the position step avoids.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tumble.errors import SettingsError, SimulationError

from .assembly import area_out, bar_rows, mass_matrix, side_rows
from .contacts import sidedness_triples
from .model import BrickSystem
from .qp import QPResult, QPSettings, solve_qp

METHODS = ("position", "acceleration")
LENGTH_RULES = ("L''", "L''+rotation")


@dataclass
class GaussSettings:
    """Settings of a planar Gauss simulation. Lengths in m, times in s."""

    dt: float = 2e-3
    gravity: float = 9.81  # m/s^2, acting along -y
    method: str = "position"
    qp: QPSettings = field(default_factory=QPSettings)
    contact_margin: float | None = None  # pairs closer than this get sidedness rows; None: 0.25 * min brick size
    tie_tol: float = 1e-9  # m: best edges within this of the pair's separation are all used (§8.5)
    curvature_factor: float = 2.0  # c of (S'): 2 = paper, 1 = exact Taylor expansion
    contact_tol: float = 1e-6  # m: acceleration loop only, gap below which a triple is a contact
    symmetrize: bool = False  # average with the mirror image after each step (needs system.mirror_points)
    length_rule: str = "L''"  # "L''" (§8.3) or "L''+rotation" (projection target sqrt(L0^2 - w^2), see position_qp)

    def __post_init__(self):
        if not (np.isfinite(self.dt) and self.dt > 0):
            raise SettingsError(f"dt={self.dt!r}: must be finite and > 0")
        if self.method not in METHODS:
            raise SettingsError(f"method={self.method!r}: expected one of {METHODS}")
        if not np.isfinite(self.gravity):
            raise SettingsError(f"gravity={self.gravity!r}: must be finite")
        if self.contact_margin is not None and not (self.contact_margin > 0):
            raise SettingsError(f"contact_margin={self.contact_margin!r}: must be > 0")
        if self.length_rule not in LENGTH_RULES:
            raise SettingsError(f"length_rule={self.length_rule!r}: expected one of {LENGTH_RULES}")
        if self.curvature_factor not in (1.0, 2.0):
            raise SettingsError(f"curvature_factor={self.curvature_factor!r}: expected 1 or 2")


@dataclass
class StepInfo:
    qp_seconds: float
    iterations: int
    n_variables: int
    n_rows: int
    result: QPResult


def _margin(system: BrickSystem, settings: GaussSettings) -> float:
    return settings.contact_margin if settings.contact_margin is not None else 0.25 * float(system.body_size.min())


def _penalty(system, A_pen, c_pen, weight):
    """Hessian and linear term of weight * |A_pen d - c_pen|^2."""
    return 2.0 * weight * (A_pen.T @ A_pen), -2.0 * weight * (A_pen.T @ c_pen)


def position_qp(system: BrickSystem, p_prev: np.ndarray, p_cur: np.ndarray, settings: GaussSettings):
    """Assemble (Q') with (L'') and (S'): returns p^ (N, 2) and (P, q, A_eq, b_eq, A_in, b_in) in d = p - p^."""
    dt = settings.dt
    disp = p_cur - p_prev
    p_hat = p_cur + disp
    p_hat[:, 1] -= settings.gravity * dt * dt
    e_cur = p_cur[system.bars[:, 0]] - p_cur[system.bars[:, 1]]
    len_cur = np.linalg.norm(e_cur, axis=1)
    d_hat = p_hat[system.bars[:, 0]] - p_hat[system.bars[:, 1]]
    # (L'') asks the new bar's projection on its current direction to be L0; a bar that also turns by
    # phi in the step then has length L0 / cos(phi), an error of order phi^2 / 2 that is corrected, not
    # accumulated, by the next step (§8.3). "L''+rotation" (ours, not the paper's) asks for the
    # projection sqrt(L0^2 - w^2) instead, w the component of the predicted bar p^_i - p^_j across the
    # current direction: the bar then has length L0 exactly whenever the step keeps the predicted turn.
    proj_hat = np.einsum("bx,bx->b", d_hat, e_cur) / len_cur
    if settings.length_rule == "L''":
        target_len = system.rest_lengths
    else:
        across2 = np.maximum(np.einsum("bx,bx->b", d_hat, d_hat) - proj_hat * proj_hat, 0.0)
        target_len = np.sqrt(np.maximum(system.rest_lengths ** 2 - across2, 0.25 * system.rest_lengths ** 2))
    # hard rows with unit direction: <p_i - p_j, e/|e|> = target
    target_hard = target_len - proj_hat
    A_eq, b_eq, _ = bar_rows(system, p_cur, target_hard, system.bar_hard, unit=True)
    P = mass_matrix(system)
    q = np.zeros(2 * len(p_cur))
    if system.bar_penalty.any():
        target_pen = (target_len - proj_hat) * len_cur
        A_pen, c_pen, _ = bar_rows(system, p_cur, target_pen, system.bar_penalty, unit=False)
        dP, dq = _penalty(system, A_pen, c_pen, system.penalty_weight)
        P = (P + dP).tocsc()
        q = q + dq
    hulls = system.hulls(p_cur)
    triples = sidedness_triples(hulls, system.n_bodies, margin=_margin(system, settings), tie_tol=settings.tie_tol)
    hv_disp = np.concatenate([disp[system.hull_points].reshape(-1, 2), np.zeros((4 * len(system.static_hulls), 2))])
    area = area_out(hv_disp[triples.edge_start], hv_disp[triples.edge_end], hv_disp[triples.vertex])
    rhs = -settings.curvature_factor * area / triples.edge_length
    A_in, b_in = side_rows(system, triples, p_hat, system.static_hulls.reshape(-1, 2), rhs)
    return p_hat, (P, q, A_eq, b_eq, A_in, b_in)


def step_position(system, p_prev, p_cur, settings: GaussSettings, warm: QPResult | None = None):
    """One step of Fig. 7: returns (p^{l+1} (N, 2), StepInfo)."""
    p_hat, (P, q, A_eq, b_eq, A_in, b_in) = position_qp(system, p_prev, p_cur, settings)
    # size of the step's correction: gravity's g dt^2 or the last displacement, whichever is larger
    scale = max(abs(settings.gravity) * settings.dt ** 2, float(np.abs(p_cur - p_prev).max()), 1e-12)
    res = solve_qp(P, q, A_eq, b_eq, A_in, b_in, settings.qp, warm, scale=scale)
    p_new = p_hat + res.x.reshape(-1, 2)
    return p_new, StepInfo(res.seconds, res.iterations, P.shape[0], A_eq.shape[0] + A_in.shape[0], res)


def _contact_triples(system, p, v, settings):
    hulls = system.hulls(p)
    tr = sidedness_triples(hulls, system.n_bodies, margin=_margin(system, settings), tie_tol=settings.tie_tol)
    hv_vel = np.concatenate([v[system.hull_points].reshape(-1, 2), np.zeros((4 * len(system.static_hulls), 2))])
    return tr, hv_vel


def velocity_projection(system, p, v, triples, hv_vel, settings, contact):
    """(Q*) of Thm. 7.1: minimise sum m |v - v_old|^2 subject to (L1) <v_i - v_j, e> = 0 and
    (S1) <v_k - [(1 - a) v_i + a v_j], n> >= 0 on the given contacts. Returns the new velocities."""
    zero = np.zeros(len(system.bars))
    A_eq, b_eq, _ = bar_rows(system, p, zero - _bar_rate(system, p, v), system.bar_hard, unit=True)
    sub = _subset(triples, contact)
    A_in, b_in = side_rows(system, sub, v, np.zeros((4 * len(system.static_hulls), 2)), np.zeros(len(sub)))
    scale = max(float(np.abs(v).max()), 1e-12)
    res = solve_qp(mass_matrix(system), np.zeros(2 * len(v)), A_eq.tocsc(), b_eq, A_in.tocsc(), b_in, settings.qp,
                   scale=scale)
    return v + res.x.reshape(-1, 2)


def _bar_rate(system, p, v):
    e = p[system.bars[:, 0]] - p[system.bars[:, 1]]
    e /= np.linalg.norm(e, axis=1)[:, None]
    return np.einsum("bx,bx->b", v[system.bars[:, 0]] - v[system.bars[:, 1]], e)


def _subset(tr, mask):
    from .contacts import Triples

    return Triples(*(getattr(tr, f)[mask] for f in ("edge_start", "edge_end", "vertex", "alpha", "normal",
                                                     "edge_length", "gap", "edge_body", "vertex_body")))


def _normal_rate(tr, hv_vel):
    """<v_k - [(1 - a) v_i + a v_j], n> of each triple: the (S1) rate (4.3) over |e|."""
    q = (1 - tr.alpha)[:, None] * hv_vel[tr.edge_start] + tr.alpha[:, None] * hv_vel[tr.edge_end]
    return np.einsum("tx,tx->t", hv_vel[tr.vertex] - q, tr.normal)


def acceleration_qp(system, p, v, triples, hv_vel, contact, settings):
    """Assemble (Q) with (L2*) and (S2*) on the contacts, in d = a - g."""
    g = np.array([0.0, -settings.gravity])
    n = len(p)
    e = p[system.bars[:, 0]] - p[system.bars[:, 1]]
    length = np.linalg.norm(e, axis=1)
    dv = v[system.bars[:, 0]] - v[system.bars[:, 1]]
    # (L2*) <a_i - a_j, e/|e|> = -|v_i - v_j|^2 / |e|; a = g + d and g cancels between i and j
    target = -np.einsum("bx,bx->b", dv, dv) / length
    A_eq, b_eq, _ = bar_rows(system, p, target, system.bar_hard, unit=True)
    P = mass_matrix(system)
    q = np.zeros(2 * n)
    if system.bar_penalty.any():
        A_pen, c_pen, _ = bar_rows(system, p, target * length, system.bar_penalty, unit=False)
        dP, dq = _penalty(system, A_pen, c_pen, system.penalty_weight)
        P, q = (P + dP).tocsc(), q + dq
    sub = _subset(triples, contact)
    # (S2*) right side -2 A(v_i, v_j, v_k) (4.4), over |e| for the unit normal
    rhs = -2.0 * area_out(hv_vel[sub.edge_start], hv_vel[sub.edge_end], hv_vel[sub.vertex]) / sub.edge_length
    a0 = np.broadcast_to(g, (n, 2)).copy()
    A_in, b_in = side_rows(system, sub, a0, np.zeros((4 * len(system.static_hulls), 2)), rhs)
    return a0, (P, q, A_eq.tocsc(), b_eq, A_in.tocsc(), b_in)


def step_acceleration(system, p, v, settings: GaussSettings):
    """One step of Fig. 6 (with the Q* impact projection): returns (p, v, StepInfo)."""
    triples, hv_vel = _contact_triples(system, p, v, settings)
    rate = _normal_rate(triples, hv_vel)
    touching = triples.gap <= settings.contact_tol
    if np.any(touching & (rate < 0)):
        v = velocity_projection(system, p, v, triples, hv_vel, settings, touching)
        hv_vel = np.concatenate([v[system.hull_points].reshape(-1, 2), np.zeros((4 * len(system.static_hulls), 2))])
        rate = _normal_rate(triples, hv_vel)
    contact = touching & (rate <= settings.contact_tol / settings.dt)
    a0, (P, q, A_eq, b_eq, A_in, b_in) = acceleration_qp(system, p, v, triples, hv_vel, contact, settings)
    res = solve_qp(P, q, A_eq, b_eq, A_in, b_in, settings.qp, scale=max(abs(settings.gravity), 1e-12))
    a = a0 + res.x.reshape(-1, 2)
    v_new = v + a * settings.dt  # (3.1)
    p_new = p + v_new * settings.dt
    return p_new, v_new, StepInfo(res.seconds, res.iterations, P.shape[0], A_eq.shape[0] + A_in.shape[0], res)


def mirror_error(system: BrickSystem, p: np.ndarray) -> float:
    """max |p - mirror(p)| [m] over points, mirror(p)_i = (-x, y) of the mirror partner of i."""
    if system.mirror_points is None:
        raise SettingsError("mirror_error: the system was built without mirror=True")
    m = p[system.mirror_points] * np.array([-1.0, 1.0])
    return float(np.abs(p - m).max())


def symmetrize(system: BrickSystem, p: np.ndarray) -> np.ndarray:
    """Average with the mirror image: exact (bitwise) mirror symmetry, since x -> -x is exact in IEEE
    arithmetic. For a mirror-symmetric strictly convex QP the optimum is itself symmetric, so this only
    removes solver round-off."""
    m = p[system.mirror_points] * np.array([-1.0, 1.0])
    return 0.5 * (p + m)


@dataclass
class Trajectory:
    positions: np.ndarray  # (steps + 1, N, 2) [m]
    qp_seconds: np.ndarray  # (steps,)
    iterations: np.ndarray  # (steps,)
    n_rows: np.ndarray  # (steps,)
    mirror_error: np.ndarray | None  # (steps + 1,) [m] when the system has mirror_points


def simulate(system: BrickSystem, steps: int, settings: GaussSettings | None = None, *,
             initial_velocity: np.ndarray | None = None) -> Trajectory:
    """Run ``steps`` steps from system.positions (at rest, or with ``initial_velocity`` (N, 2) [m/s])."""
    settings = settings or GaussSettings()
    if not (isinstance(steps, (int, np.integer)) and steps >= 0):
        raise SettingsError(f"steps={steps!r}: must be an integer >= 0")
    if settings.symmetrize and system.mirror_points is None:
        raise SettingsError("symmetrize=True: the system was built without mirror=True")
    p = system.positions.copy()
    v = np.zeros_like(p) if initial_velocity is None else np.asarray(initial_velocity, dtype=float).copy()
    if v.shape != p.shape:
        raise SettingsError(f"initial_velocity: expected shape {p.shape}, got {v.shape}")
    p_prev = p - v * settings.dt
    out = np.empty((steps + 1,) + p.shape)
    out[0] = p
    secs, iters, rows = np.zeros(steps), np.zeros(steps, dtype=np.int64), np.zeros(steps, dtype=np.int64)
    mir = None if system.mirror_points is None else np.zeros(steps + 1)
    if mir is not None:
        mir[0] = mirror_error(system, p)
    warm = None
    for s in range(steps):
        if settings.method == "position":
            p_new, info = step_position(system, p_prev, p, settings, warm)
            warm = info.result
            if settings.symmetrize:
                p_new = symmetrize(system, p_new)
            p_prev, p = p, p_new
        else:
            p, v, info = step_acceleration(system, p, v, settings)
            if settings.symmetrize:
                p = symmetrize(system, p)
                v = 0.5 * (v + v[system.mirror_points] * np.array([-1.0, 1.0]))
        if not np.all(np.isfinite(p)):
            raise SimulationError(f"step {s}: non-finite positions")
        out[s + 1] = p
        secs[s], iters[s], rows[s] = info.qp_seconds, info.iterations, info.n_rows
        if mir is not None:
            mir[s + 1] = mirror_error(system, p)
    return Trajectory(out, secs, iters, rows, mir)
