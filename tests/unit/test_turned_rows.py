"""``contact.rows.refresh_turned_rows`` (issue 17's fast-spin class): a contact row's B = M^-1 J^T and
1/(J B) rebuilt at a turned body's orientation now, against a dense NumPy build, and the energy
argument it restores: with consistent B a row update to the target 0 loses kinetic energy,
-(J v)^2 / (2 J B); with the inverse inertia of before the turn the same update gains it."""

import numpy as np

from tumble._core.contact.rows import ROW_TURN_TOLERANCE, refresh_turned_rows
from tumble._core.math3d import quat_to_matrix


def _quat(axis, angle):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    return np.r_[np.cos(angle / 2), np.sin(angle / 2) * axis]


def _rot(q):
    R = np.empty((3, 3))
    quat_to_matrix(np.asarray(q, dtype=float), R)
    return R


def _board(q0, half=(12.0, 0.0625, 0.125), mass=3.0):
    """A thin box (inertia of a 24 m board), one normal row along +z at its tip r = (11, 0.1, -0.1)
    against the fixed ground; B and 1/(J B) built at orientation q0. Returns the arrays."""
    a, b, c = half
    inertia = mass / 3.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    inv_local = np.linalg.inv(inertia)[None]
    n = np.array([0.0, 0.0, 1.0])
    r = np.array([11.0, 0.1, -0.1])
    row_body = np.array([[-1, 0]], dtype=np.int64)
    row_J = np.zeros((1, 2, 6))
    row_J[0, 1, :3] = n
    row_J[0, 1, 3:] = np.cross(r, n)
    R0 = _rot(q0)
    inv_world = (R0 @ inv_local[0] @ R0.T)[None].copy()
    row_B = np.zeros((1, 2, 6))
    row_B[0, 1, :3] = row_J[0, 1, :3] / mass
    row_B[0, 1, 3:] = inv_world[0] @ row_J[0, 1, 3:]
    inv_diag = np.array([1.0 / (row_J[0, 1] @ row_B[0, 1])])
    return inertia, inv_local, inv_world, row_body, row_J, row_B, inv_diag, mass


def _kinetic(mass, inertia, q, v, w):
    R = _rot(q)
    wb = R.T @ w
    return 0.5 * mass * v @ v + 0.5 * wb @ inertia @ wb


def test_refresh_matches_the_dense_build_at_the_orientation_now():
    q0 = _quat((0.3, 1.0, 0.2), 0.4)
    inertia, inv_local, inv_world, row_body, row_J, row_B, inv_diag, mass = _board(q0)
    q1 = _quat((0.1, 0.9, 0.5), 0.1)                         # turned by 0.1 rad: a board's step at 25 rad/s
    q_now = np.r_[q1[0] * q0[0] - q1[1:] @ q0[1:], q1[0] * q0[1:] + q0[0] * q1[1:] + np.cross(q1[1:], q0[1:])][None]
    row_orientation = q0[None].copy()
    n = refresh_turned_rows(1, row_body, row_J, row_B, inv_diag, q_now, row_orientation, inv_local, inv_world,
                            np.zeros(1, dtype=np.bool_), 1, np.zeros(1, dtype=np.bool_), ROW_TURN_TOLERANCE)
    assert n == 1
    R1 = _rot(q_now[0])
    expect = R1 @ inv_local[0] @ R1.T
    np.testing.assert_allclose(inv_world[0], expect, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(row_B[0, 1, 3:], expect @ row_J[0, 1, 3:], rtol=1e-12)
    assert inv_diag[0] == 1.0 / (row_J[0, 1] @ row_B[0, 1])
    np.testing.assert_array_equal(row_orientation[0], q_now[0])


def test_a_sphere_or_an_unturned_body_keeps_its_rows_bit_for_bit():
    inv_local = np.eye(3)[None] * 2.5                          # isotropic: R I^-1 R^T = I^-1 for every R
    q0 = _quat((1.0, 0.0, 0.0), 0.2)
    row_body = np.array([[-1, 0]], dtype=np.int64)
    row_J = np.random.default_rng(1).normal(size=(1, 2, 6))
    row_B = row_J * 0.7
    inv_diag = np.array([0.3])
    inv_world = inv_local.copy()
    before = (row_B.copy(), inv_diag.copy(), inv_world.copy())
    for q in (_quat((0.0, 1.0, 0.0), 1.0), q0):
        n = refresh_turned_rows(1, row_body, row_J, row_B, inv_diag, q[None], q0[None].copy(), inv_local, inv_world,
                                np.zeros(1, dtype=np.bool_), 1, np.zeros(1, dtype=np.bool_), ROW_TURN_TOLERANCE)
        assert n == 0
    for a, b in zip(before, (row_B, inv_diag, inv_world), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_row_update_gains_energy_with_the_stale_inertia_and_loses_it_refreshed():
    q0 = _quat((0.0, 0.0, 1.0), 0.0)
    q1 = _quat((0.0, 1.0, 0.6), 0.1)
    v = np.array([0.0, 0.0, -3.0])
    w = np.array([0.5, 19.0, 16.0])                             # the board of FAST_SPIN_CASES
    results = []
    for refresh in (False, True):
        inertia, inv_local, inv_world, row_body, row_J, row_B, inv_diag, mass = _board(q0)
        if refresh:
            refresh_turned_rows(1, row_body, row_J, row_B, inv_diag, q1[None], q0[None].copy(), inv_local, inv_world,
                                np.zeros(1, dtype=np.bool_), 1, np.zeros(1, dtype=np.bool_), ROW_TURN_TOLERANCE)
        jv = row_J[0, 1] @ np.r_[v, w]
        assert jv < 0.0                                          # the tip approaches the ground
        delta = -jv * inv_diag[0]                                # the scalar update to the target 0
        v2 = v + delta * row_B[0, 1, :3]
        w2 = w + delta * row_B[0, 1, 3:]
        gain = _kinetic(mass, inertia, q1, v2, w2) - _kinetic(mass, inertia, q1, v, w)
        results.append((gain, jv, inv_diag[0]))
    (stale, _, _), (fresh, jv, inv_d) = results
    assert stale > 100.0 * abs(fresh)        # measured: +3.7e5 J stale against -1.8e3 J, of 4.4e4 J
    np.testing.assert_allclose(fresh, -0.5 * jv * jv * inv_d, rtol=1e-9)
