"""Stability of planar bricks at rest (paper 002, §1) and their initial collapse (first QP, §3).

Stability LP (§1): a tower at rest is stable iff there are non-negative contact forces that balance
gravity on every brick (force and moment). The paper's model is frictionless (it "ignores friction
completely", §1 Outlook): each contact force acts along the outward normal of the edge that the vertex
touches. ``friction=mu > 0`` adds Coulomb friction; in the plane the cone |f_t| <= mu f_n is exactly the
cone of the two generators n + mu t and n - mu t, so the LP stays exact.

Contacts are all vertex-on-edge contacts between touching bodies (contacts.rest_contacts): for two
bricks resting face to face these are the ends of their common segment, which is where the forces of a
rigid face contact can be concentrated without loss of generality (any force distribution over the
segment has the same resultant as a non-negative combination of the two end forces).

Initial motion (§1, "exact description of initial infinitesimal collapse"): with v = 0 the
acceleration QP (Q) subject to (L2*) and (S2*) on the rest contacts gives the exact initial
accelerations. Its multipliers are the contact forces of the collapsing tower.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tumble.errors import SettingsError

from .contacts import Triples, rest_contacts
from .model import BrickSystem
from .qp import QPSettings, solve_lp_feasible, solve_qp
from .step import GaussSettings, acceleration_qp


@dataclass
class StabilityReport:
    """Result of ``stability``. Arrays over contacts are (T,), over dynamic bodies (nb,)."""

    stable: bool
    contacts: Triples  # vertex-on-edge contacts (hull point ids, outward normals)
    contact_points: np.ndarray  # (T, 2) [m]
    forces: np.ndarray  # (T,) normal force of the LP [N] (zero when unstable)
    friction_forces: np.ndarray  # (T,) tangential force of the LP [N] along the edge direction
    acceleration: np.ndarray  # (nb, 2) initial acceleration of each brick's centre of mass [m/s^2]
    angular_acceleration: np.ndarray  # (nb,) initial angular acceleration [rad/s^2], counter-clockwise > 0
    moving: np.ndarray  # (nb,) bool: the brick starts to move
    separating: np.ndarray  # (T,) bool: the contact opens (lift-off) in the initial motion
    qp_forces: np.ndarray  # (T,) contact forces of the initial-motion QP [N]

    def summary(self) -> str:
        moving = np.nonzero(self.moving)[0].tolist()
        return (f"stable={self.stable}, {len(self.forces)} contacts, moving bricks {moving}, "
                f"{int(self.separating.sum())} contacts lift off")


def _balance_matrix(system: BrickSystem, tr: Triples, points: np.ndarray, centres: np.ndarray, friction: float):
    """(3 nb, G T) matrix: column (t, generator) = force, moment of a unit generator on the bodies."""
    nb = system.n_bodies
    tangent = np.stack([-tr.normal[:, 1], tr.normal[:, 0]], axis=1)
    gens = [tr.normal] if friction == 0 else [tr.normal + friction * tangent, tr.normal - friction * tangent]
    rows, cols, vals = [], [], []
    t = np.arange(len(tr))
    for gi, f in enumerate(gens):
        col = gi * len(tr) + t
        for body, sign in ((tr.vertex_body, 1.0), (tr.edge_body, -1.0)):
            dyn = body < nb
            b, c, fv = body[dyn], col[dyn], sign * f[dyn]
            r = points[dyn] - centres[b]
            moment = r[:, 0] * fv[:, 1] - r[:, 1] * fv[:, 0]
            rows += [3 * b, 3 * b + 1, 3 * b + 2]
            cols += [c, c, c]
            vals += [fv[:, 0], fv[:, 1], moment]
    A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(3 * nb, len(gens) * len(tr)))
    return A, gens, tangent


def body_motion(system: BrickSystem, p: np.ndarray, a: np.ndarray):
    """Centre-of-mass acceleration (nb, 2) and angular acceleration (nb,) of point accelerations a of a
    rigid motion at rest (a_i = a_c + alpha x r_i): alpha = sum m r x (a - a_c) / sum m |r|^2."""
    pb = system.point_body
    m = system.masses
    centres = system.body_centres(p)
    a_c = np.add.reduceat(a * m[:, None], system.body_points[:-1], axis=0) / system.body_mass[:, None]
    r = p - centres[pb]
    da = a - a_c[pb]
    num = np.add.reduceat(m * (r[:, 0] * da[:, 1] - r[:, 1] * da[:, 0]), system.body_points[:-1])
    den = np.add.reduceat(m * (r * r).sum(axis=1), system.body_points[:-1])
    return a_c, num / den


def stability(system: BrickSystem, positions: np.ndarray | None = None, *, friction: float = 0.0,
              gravity: float = 9.81, contact_tol: float = 1e-9, qp: QPSettings | None = None) -> StabilityReport:
    """Is the structure at rest stable (LP, HiGHS)? And how does it start to move (first QP)?"""
    if not (np.isfinite(friction) and friction >= 0):
        raise SettingsError(f"friction={friction!r}: must be finite and >= 0")
    if not (np.isfinite(contact_tol) and contact_tol > 0):
        raise SettingsError(f"contact_tol={contact_tol!r}: must be finite and > 0")
    p = system.positions if positions is None else np.asarray(positions, dtype=float)
    hulls = system.hulls(p)
    tr = rest_contacts(hulls, system.n_bodies, tol=contact_tol * max(1.0, float(system.body_size.max())))
    points = hulls.reshape(-1, 2)[tr.vertex]
    centres = system.body_centres(p)
    A, gens, tangent = _balance_matrix(system, tr, points, centres, friction)
    # sum of contact forces and moments + m g = 0  ->  A f = -(0, -m g, 0) per body
    b = np.zeros(3 * system.n_bodies)
    b[1::3] = system.body_mass * gravity
    feasible, f = solve_lp_feasible(A, b, np.ones(A.shape[1]))
    t = len(tr)
    if friction == 0:
        normal, tangential = f, np.zeros(t)
    else:
        normal = f[:t] + f[t:]
        tangential = friction * (f[:t] - f[t:])
    # initial motion: acceleration QP at v = 0 on the rest contacts (frictionless, as the paper)
    settings = GaussSettings(gravity=gravity, qp=qp or QPSettings())
    zero_hv = np.zeros((len(hulls) * 4, 2))
    a0, (P, q, A_eq, b_eq, A_in, b_in) = acceleration_qp(system, p, np.zeros_like(p), tr, zero_hv,
                                                         np.ones(t, dtype=bool), settings)
    res = solve_qp(P, q, A_eq, b_eq, A_in, b_in, settings.qp, scale=max(abs(gravity), 1e-12))
    a = a0 + res.x.reshape(-1, 2)
    a_c, alpha = body_motion(system, p, a)
    scale = gravity
    spin = np.abs(alpha) * system.body_size.max(axis=1)  # tangential acceleration of the far corner scale
    moving = (np.linalg.norm(a_c, axis=1) > 1e-6 * scale) | (spin > 1e-6 * scale)
    slack = A_in @ res.x - b_in
    return StabilityReport(stable=bool(feasible), contacts=tr, contact_points=points, forces=normal,
                           friction_forces=tangential, acceleration=a_c, angular_acceleration=alpha, moving=moving,
                           separating=slack > 1e-6 * scale, qp_forces=0.5 * res.y_in)
