"""The gauss solver's QP assembly (paper 002 Fig. 7 in body coordinates) against per-row Python
oracles, the polish, and the solver's settings and registration."""

import math

import numpy as np
import pytest

import tumble as tb
from tumble._core.math3d import quat_to_matrix_py
from tumble._core.solvers import registry
from tumble._core.solvers.gauss import qp as gqp
from tumble.errors import SettingsError


def _unit(rng, n):
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1)[:, None]


def test_tangent_basis_is_orthonormal_and_right_handed():
    rng = np.random.default_rng(0)
    n = np.vstack([_unit(rng, 50), np.eye(3), -np.eye(3)])
    t1, t2 = gqp.tangent_basis(n)
    for a, b in ((n, t1), (n, t2), (t1, t2)):
        assert np.allclose(np.einsum("ij,ij->i", a, b), 0.0, atol=1e-14)
    for a in (t1, t2):
        assert np.allclose(np.linalg.norm(a, axis=1), 1.0)
    assert np.allclose(np.cross(t1, t2), n, atol=1e-14)


def test_contact_directions_are_the_cone_edges():
    rng = np.random.default_rng(1)
    n = _unit(rng, 5)
    mu = np.array([0.0, 0.3, 0.5, 0.0, 1.0])
    rc, d = gqp.contact_directions(n, mu, 8)
    assert rc.tolist() == [0] + [1] * 8 + [2] * 8 + [3] + [4] * 8
    normal_part = np.einsum("ij,ij->i", d, n[rc])
    assert np.allclose(normal_part, 1.0)
    tangential = d - normal_part[:, None] * n[rc]
    assert np.allclose(np.linalg.norm(tangential, axis=1), mu[rc])
    # the K edges of one contact are spread evenly: they sum to K n
    assert np.allclose(d[1:9].sum(axis=0), 8 * n[1])
    rc0, d0 = gqp.contact_directions(n, mu, 0)
    assert rc0.tolist() == [0, 1, 2, 3, 4] and np.allclose(d0, n)


def test_constraint_matrix_matches_the_per_row_oracle():
    rng = np.random.default_rng(2)
    C, m = 7, 4
    var_a = np.array([0, -1, 1, 2, 3, -1, 0])
    var_b = np.array([1, 2, -1, 3, 0, 1, 2])
    la, lb = rng.normal(size=(C, 3)), rng.normal(size=(C, 3))
    rc, d = gqp.contact_directions(_unit(rng, C), rng.uniform(0, 1, C), 4)
    G = gqp.constraint_matrix(var_a, var_b, la, lb, rc, d, m).toarray()
    expect = np.zeros((rc.shape[0], 6 * m))
    for r in range(rc.shape[0]):
        c = rc[r]
        e = d[r]
        if var_b[c] >= 0:
            expect[r, 6 * var_b[c]: 6 * var_b[c] + 3] += e
            expect[r, 6 * var_b[c] + 3: 6 * var_b[c] + 6] += np.cross(lb[c], e)
        if var_a[c] >= 0:
            expect[r, 6 * var_a[c]: 6 * var_a[c] + 3] -= e
            expect[r, 6 * var_a[c] + 3: 6 * var_a[c] + 6] -= np.cross(la[c], e)
    assert np.allclose(G, expect, atol=1e-15)


def test_world_inertia_is_r_i_rt():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(6, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    inertia = np.array([np.diag(rng.uniform(0.1, 2.0, 3)) for _ in range(6)])
    got = gqp.world_inertia(q, inertia)
    for k in range(6):
        R = quat_to_matrix_py(q[k])
        assert np.allclose(got[k], R @ inertia[k] @ R.T)


def _one_box_world(**kw):
    w = tb.World(solver="gauss", **kw)
    w.add_body(tb.Plane(), fixed=True)
    w.add_body(tb.Box(half_extents=(0.5, 0.5, 0.5)), position=(0, 0, 0.5), mass=3.0)
    return w


def test_assemble_mass_matrix_and_linear_term():
    w = _one_box_world()
    w.step(1 / 60)                  # detection: 4 points under the box
    core = w._core
    b, c = core.bodies, core.contacts
    u_lin = np.array([[0, 0, 0], [0.1, 0.2, -0.3]])
    u_ang = np.array([[0, 0, 0], [0.4, 0.0, 0.1]])
    p = gqp.assemble(b.body_position, b.body_orientation, b.body_mass, b.body_inertia_local, b.body_fixed, b.count,
                     c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal, c.contact_depth,
                     c.contact_friction, c.count, u_lin, u_ang, 1 / 60, 8, 10.0)
    assert p.active.tolist() == [1] and p.mass_scale == 3.0
    P = p.P.toarray()
    full = P + np.triu(P, 1).T
    inertia = 3.0 * (1.0 + 1.0) / 12.0            # m (a^2 + a^2) / 12 for the unit cube
    assert np.allclose(np.diag(full), [1, 1, 1] + [inertia / 3.0] * 3)
    assert np.allclose(p.q, -full @ np.r_[u_lin[1], u_ang[1]])
    assert p.G.shape == (32, 6) and np.all(p.h <= 1e-12)
    # no contact touches a dynamic body: no QP
    none = gqp.assemble(b.body_position, b.body_orientation, b.body_mass, b.body_inertia_local, b.body_fixed,
                        b.count, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal,
                        c.contact_depth, c.contact_friction, 0, u_lin, u_ang, 1 / 60, 8, 10.0)
    assert none is None


def test_solution_satisfies_kkt_after_polish():
    # a box pressed sideways into a corner: KKT P u + q = G^T z, z >= 0, G u >= h, z (G u - h) = 0
    w = tb.World(solver="gauss", gravity=(0, 0, -9.81))
    w.add_body(tb.Plane(), fixed=True)
    w.add_body(tb.Box(half_extents=(0.5, 0.5, 0.5)), position=(0, 0, 0.5), linear_velocity=(1.0, 0.5, 0.0))
    core = w._core
    cap = {}
    orig = gqp.solve

    def spy(*a, **k):
        r = orig(*a, **k)
        cap["qp"], cap["res"] = a[0], r
        return r

    gqp.solve = spy
    try:
        w.step(1 / 60)
    finally:
        gqp.solve = orig
    qp, res = cap["qp"], cap["res"]
    P = qp.P.toarray()
    P = P + np.triu(P, 1).T
    assert np.allclose(P @ res.u + qp.q, qp.G.T @ res.z, atol=1e-9)
    slack = qp.G @ res.u - qp.h
    assert slack.min() > -1e-12 and res.z.min() >= 0.0
    assert np.abs(slack * res.z).max() < 1e-12
    assert core.counters["qp_solved"] == 1


# ------------------------------------------------------------------------------------------ settings
def test_gauss_is_registered_with_its_capabilities():
    assert "gauss" in registry.names()
    info = {s["name"]: s for s in tb.solvers()}["gauss"]
    assert info["settings"] is tb.GaussSettings
    assert not info["joints"] and not info["restitution"] and not info["sleeping"]
    assert set(info["counters"]) >= {"qp_iterations", "qp_ms", "rows"}


@pytest.mark.parametrize("field, value", [("qp_solver", "cplex"), ("qp_tolerance", 0.0), ("qp_tolerance", math.nan),
                                          ("friction_edges", 2), ("friction_edges", -1), ("qp_max_iterations", 0),
                                          ("max_correction_speed", 0.0), ("speculative_margin", 1),
                                          ("polish_max_rows", -1), ("contact_margin", -1.0)])
def test_bad_settings_are_rejected_and_change_nothing(field, value):
    w = _one_box_world()
    before = {f: getattr(w.settings, f) for f in w.settings.field_names()}
    with pytest.raises(SettingsError, match=field):
        w.settings.update(**{field: value})
    assert {f: getattr(w.settings, f) for f in w.settings.field_names()} == before
    with pytest.raises(SettingsError, match=field):
        tb.World(solver="gauss", **{field: value})


def test_defaults_are_documented_values():
    s = tb.GaussSettings()
    assert (s.qp_solver, s.qp_tolerance, s.friction_edges, s.contact_margin) == ("clarabel", 1e-9, 8, 0.005)
