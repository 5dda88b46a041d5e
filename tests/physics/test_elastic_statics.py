"""Cantilever under its own weight (paper 003 elements) against Euler-Bernoulli: sag q L^4 / (8 E I).

Linear tets lock in bending, so the sag converges from below as the mesh is refined; the finest mesh is
within 5 % (slow), the coarse ones show the convergence (the error falls by more than a third per halving)."""

import numpy as np
import pytest

from tumble.elastic import ElasticBody, ElasticMaterial, ElasticSystem, TetMesh

E, RHO, L, A = 1e9, 1000.0, 1.0, 0.1  # small load: sag / L ~ 1.5e-3


def _sag_ratio(divisions):
    mesh = TetMesh.beam(L, A, A, divisions)
    body = ElasticBody(mesh, ElasticMaterial.from_young(RHO, E, 0.0))  # nu = 0: no anticlastic stiffening
    body.pin(np.flatnonzero(mesh.vertices[:, 0] < 1e-9))
    system = ElasticSystem([body], newton_tol=1e-12)
    assert system.solve_static()
    assert system.constraint_violation() == 0.0
    tip = mesh.vertices[:, 0] > L - 1e-9
    sag = -system.positions[tip, 2].mean()
    q, inertia = RHO * 9.81 * A * A, A ** 4 / 12.0
    return sag / (q * L ** 4 / (8.0 * E * inertia))


def test_cantilever_sag_converges_with_refinement():
    ratios = [_sag_ratio(d) for d in [(10, 1, 1), (20, 2, 2), (40, 4, 4)]]
    errors = [1.0 - r for r in ratios]
    assert all(e > 0 for e in errors)  # stiff (locking) from below
    assert errors[1] < 0.65 * errors[0] and errors[2] < 0.65 * errors[1]
    assert ratios[-1] > 0.8


@pytest.mark.slow
def test_cantilever_sag_within_five_percent_of_euler_bernoulli():
    assert _sag_ratio((80, 8, 8)) == pytest.approx(1.0, abs=0.05)
