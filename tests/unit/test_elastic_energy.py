"""Energy of paper 003 eq. 10-15 (as reconstructed in tumble.elastic.energy): each stated property, the
kernel's forces and Hessian against finite differences, the NumPy oracle, the viscous power (eq. 16)."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.transform import Rotation

from tests.naive.elastic import energy_and_forces
from tumble.elastic import TetMesh
from tumble.elastic.energy import elastic_forces, energy_density, invariants, rest_shape
from tumble.elastic.hessian import elastic_hessian_triplets
from tumble.elastic.viscosity import viscous_forces

ALPHA, BETA = 2.0e5, 7.0e4


def _setup(divisions=(1, 1, 1), noise=0.08, seed=0):
    mesh = TetMesh.box((1.0, 0.8, 0.6), divisions)
    rest_inverse, rest_volume = rest_shape(mesh.vertices, mesh.tets)
    m = mesh.tet_count
    rng = np.random.default_rng(seed)
    x = mesh.vertices + noise * rng.standard_normal(mesh.vertices.shape)
    return mesh, (mesh.tets, rest_inverse, rest_volume, np.full(m, ALPHA), np.full(m, BETA)), x


def _energy(x, args):
    forces = np.zeros_like(x)
    energy, ratio = elastic_forces(x, *args, forces)
    return energy, forces, ratio


def test_invariants_at_rest_and_d3_is_det_squared():
    assert invariants(np.eye(3)) == pytest.approx((3.0, 3.0, 1.0))
    C = np.random.default_rng(1).standard_normal((3, 3)) + 2 * np.eye(3)
    d1, d2, d3 = invariants(C)
    D = C.T @ C
    eig = np.linalg.eigvalsh(D)
    assert d1 == pytest.approx(eig.sum()) and d2 == pytest.approx(eig[0] * eig[1] + eig[0] * eig[2] + eig[1] * eig[2])
    assert d3 == pytest.approx(np.linalg.det(C) ** 2)


def test_energy_is_zero_at_rest_and_under_rigid_motion():
    mesh, args, _ = _setup((2, 2, 2))
    assert _energy(mesh.vertices, args)[0] == pytest.approx(0.0, abs=1e-9)
    R = Rotation.from_rotvec([0.3, -1.1, 2.0]).as_matrix()
    energy, forces, _ = _energy(mesh.vertices @ R.T + [1.0, -2.0, 3.0], args)
    assert energy == pytest.approx(0.0, abs=1e-9)
    assert np.abs(forces).max() < 1e-9 * ALPHA


def test_energy_is_rotation_invariant_and_non_negative():
    mesh, args, x = _setup((2, 2, 2))
    R = Rotation.from_rotvec([1.0, 0.2, -0.7]).as_matrix()
    assert _energy(x @ R.T, args)[0] == pytest.approx(_energy(x, args)[0], rel=1e-12)
    rng = np.random.default_rng(3)
    for _ in range(200):
        C = np.eye(3) + 0.4 * rng.standard_normal((3, 3))
        if np.linalg.det(C) > 0:
            assert energy_density(C, ALPHA, BETA) >= -1e-12
            assert energy_density(C, ALPHA, BETA) == pytest.approx(energy_density(R @ C, ALPHA, BETA), rel=1e-9)


def test_energy_tends_to_infinity_as_a_tet_is_flattened():
    values = [energy_density(np.diag([1.0, 1.0, s]), ALPHA, BETA) for s in (0.5, 1e-1, 1e-2, 1e-4, 1e-6)]
    assert all(b > a for a, b in zip(values, values[1:]))
    assert values[-1] > 1e5 * ALPHA
    assert energy_density(np.diag([1.0, 1.0, -0.1]), ALPHA, BETA) == np.inf
    # isotropic (volume-keeping) flattening: the shear term alone grows without bound as well
    assert energy_density(np.diag([1e3, 1.0, 1e-3]), ALPHA, BETA) > 1e5 * BETA


def test_small_strain_moduli_are_alpha_and_beta():
    e = 1e-4
    volumetric = energy_density((1.0 + e) ** (1.0 / 3.0) * np.eye(3), ALPHA, BETA)  # volume change e
    assert volumetric == pytest.approx(0.5 * ALPHA * e * e, rel=1e-3)  # K/2 (tr eps)^2
    shear = np.eye(3)
    shear[0, 1] = e  # simple shear, engineering strain e
    assert energy_density(shear, ALPHA, BETA) == pytest.approx(0.5 * BETA * e * e, rel=1e-3)  # mu/2 gamma^2


def test_forces_match_finite_differences_of_the_energy():
    mesh, args, x = _setup((2, 1, 1))
    _, forces, _ = _energy(x, args)
    h = 1e-6
    numeric = np.zeros_like(x)
    for i in range(len(x)):
        for c in range(3):
            xp, xm = x.copy(), x.copy()
            xp[i, c] += h
            xm[i, c] -= h
            numeric[i, c] = -(_energy(xp, args)[0] - _energy(xm, args)[0]) / (2 * h)
    assert np.abs(numeric - forces).max() <= 1e-6 * np.abs(forces).max()


def test_hessian_matches_finite_differences_of_the_forces():
    mesh, args, x = _setup((1, 1, 1))
    n, m = len(x), mesh.tet_count
    rows, cols, values = np.empty(144 * m, np.int64), np.empty(144 * m, np.int64), np.empty(144 * m)
    assert elastic_hessian_triplets(x, *args, rows, cols, values)
    H = sp.coo_matrix((values, (rows, cols)), shape=(3 * n, 3 * n)).toarray()
    h = 1e-6
    numeric = np.zeros_like(H)
    for j in range(3 * n):
        xp, xm = x.copy(), x.copy()
        xp.flat[j] += h
        xm.flat[j] -= h
        numeric[:, j] = -(_energy(xp, args)[1] - _energy(xm, args)[1]).ravel() / (2 * h)
    assert np.abs(numeric - H).max() <= 1e-6 * np.abs(H).max()
    assert np.abs(H - H.T).max() <= 1e-12 * np.abs(H).max()


def test_kernel_matches_the_numpy_oracle():
    mesh, args, x = _setup((3, 2, 2), noise=0.03)
    energy, forces, ratio = _energy(x, args)
    oracle_energy, oracle_forces = energy_and_forces(x, mesh.tets, mesh.vertices, ALPHA, BETA)
    assert energy == pytest.approx(oracle_energy, rel=1e-10)
    assert np.abs(forces - oracle_forces).max() <= 1e-9 * np.abs(forces).max()
    assert ratio > 0


def test_inverted_state_reports_infinite_energy():
    mesh, args, _ = _setup()
    x = mesh.vertices.copy()
    x[:, 2] *= -1.0  # a reflection inverts every tet
    energy, _, ratio = _energy(x, args)
    assert energy == np.inf and ratio < 0


def test_patch_test_uniform_strain_is_reproduced_exactly():
    """Any affine deformation x = C u + c: every tet has strain exactly C, the energy is V psi(C), and the
    forces on interior vertices vanish (only the boundary carries the traction)."""
    mesh, args, _ = _setup((3, 3, 3))
    C = np.array([[1.05, 0.02, -0.01], [0.03, 0.97, 0.04], [0.0, -0.02, 1.1]])
    x = mesh.vertices @ C.T + [0.5, 0.1, -0.2]
    energy, forces, ratio = _energy(x, args)
    assert energy == pytest.approx(mesh.volume * energy_density(C, ALPHA, BETA), rel=1e-11)
    assert ratio == pytest.approx(np.linalg.det(C), rel=1e-12)
    half = np.array([0.5, 0.4, 0.3])
    interior = np.all(np.abs(mesh.vertices) < half - 1e-9, axis=1)
    assert interior.sum() == 8
    assert np.abs(forces[interior]).max() <= 1e-9 * np.abs(forces).max()
    assert np.abs(forces.sum(axis=0)).max() <= 1e-9 * np.abs(forces).max()


def test_viscous_power_matches_forces_and_rigid_motion_loses_nothing():
    mesh, args, x = _setup((2, 1, 1))
    m = mesh.tet_count
    tets = mesh.tets
    v = np.random.default_rng(5).standard_normal(x.shape)
    forces = np.zeros_like(x)
    power = viscous_forces(x, v, tets, np.full(m, 3.0), np.full(m, 2.0), forces)
    assert power > 0
    assert power == pytest.approx(-np.sum(forces * v), rel=1e-12)
    assert np.abs(forces.sum(axis=0)).max() < 1e-12 * np.abs(forces).max()
    rigid = np.cross([0.3, -0.2, 1.5], x) + [1.0, 2.0, 3.0]
    forces[:] = 0.0
    assert viscous_forces(x, rigid, tets, np.full(m, 3.0), np.full(m, 2.0), forces) == pytest.approx(0.0, abs=1e-12)
    assert np.abs(forces).max() < 1e-12
    # a uniform expansion rate d loses gamma_1 (3 d)^2 per unit volume, nothing through gamma_2
    forces[:] = 0.0
    power = viscous_forces(mesh.vertices, 0.1 * mesh.vertices, tets, np.full(m, 3.0), np.full(m, 2.0), forces)
    assert power == pytest.approx(3.0 * 0.3 ** 2 * mesh.volume, rel=1e-12)
