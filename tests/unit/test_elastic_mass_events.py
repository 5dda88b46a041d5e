"""Consistent mass matrix (paper 003 eq. 18, §8.1) and Hermite / Bernstein-Bezier event detection (§6.2)."""

import numpy as np
import pytest

from tumble.elastic import TetMesh
from tumble.elastic.energy import rest_shape
from tumble.elastic.events import _MAX_DEPTH, first_crossing, plane_crossings, trajectory_boxes, triangle_boxes
from tumble.elastic.mass import MassSolver, consistent_mass_matrix

RHO = 1200.0


def _mass(mesh):
    _, volume = rest_shape(mesh.vertices, mesh.tets)
    return MassSolver(consistent_mass_matrix(mesh.vertex_count, mesh.tets, RHO * volume))


def test_total_mass_and_first_moments_are_exact():
    mesh = TetMesh.box((1.0, 2.0, 0.5), (3, 2, 2)).translated((0.3, -0.2, 1.0))
    mass = _mass(mesh)
    assert mass.matrix.sum() == pytest.approx(RHO * 1.0, rel=1e-13)
    assert mass.lumped @ mesh.vertices == pytest.approx(RHO * 1.0 * np.array([0.3, -0.2, 1.0]), rel=1e-12)
    # the consistent matrix integrates the product of two linear fields exactly: second moments too
    x = mesh.vertices[:, 0] - 0.3
    assert x @ (mass.matrix @ x) == pytest.approx(RHO * 1.0 * 1.0 / 12.0, rel=1e-12)
    assert abs(mass.matrix - mass.matrix.T).max() <= 1e-15 * mass.matrix.max()
    assert mass.matrix.nnz == mesh.vertex_count + 2 * len(np.unique(np.sort(
        mesh.tets[:, [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]].reshape(-1, 2), axis=1), axis=0))  # §8.1


def test_mass_solve_inverts_the_sparse_factors():
    mesh = TetMesh.cylinder(0.1, 0.3)
    mass = _mass(mesh)
    f = np.random.default_rng(0).standard_normal((mesh.vertex_count, 3))
    assert np.abs(mass.matrix @ mass.solve(f) - f).max() < 1e-10


def test_first_crossing_locates_roots():
    stack = np.empty((2 * _MAX_DEPTH + 2, 6))
    # g(u) = u - 0.3 in the Bernstein basis: P_i = -0.3 + i/3
    u = first_crossing(-0.3 + 1e-15, -0.3 + 1 / 3, -0.3 + 2 / 3, 0.7, 1e-9, stack)
    assert u == 0.0  # negative at the start
    u = first_crossing(0.3, 0.3 - 1 / 3, 0.3 - 2 / 3, -0.7, 1e-9, stack)  # g = 0.3 - u
    assert 0.3 - 1e-9 <= u <= 0.3
    assert first_crossing(1.0, 0.5, 0.5, 1.0, 1e-9, stack) == 2.0  # stays positive
    # g = (u - 0.5)^2 - 0.01 (two roots, 0.4 and 0.6): the first one is found; B-coefficients of a quadratic
    a, b, c = 0.24, -1.0, 1.0  # 0.24 - u + u^2
    p = (a, a + b / 3, a + 2 * b / 3 + c / 3, a + b + c)
    assert first_crossing(*p, 1e-10, stack) == pytest.approx(0.4, abs=1e-9)
    assert first_crossing(*p, 1e-10, stack) <= 0.4


def test_plane_crossing_of_a_falling_vertex_is_exact():
    """Free fall is a parabola, which the cubic Hermite interpolant reproduces: the crossing time is exact."""
    g, z0, dt = 9.81, 0.05, 0.2
    t_hit = np.sqrt(2 * z0 / g)
    xa = np.array([[0.0, 0.0, z0], [1.0, 0.0, 1.0]])
    va = np.zeros((2, 3))
    xb = xa + 0.5 * dt * dt * np.array([0.0, 0.0, -g])
    vb = va + dt * np.array([0.0, 0.0, -g])
    out = np.empty(2)
    first = plane_crossings(xa, va, xb, vb, dt, np.array([0.0, 0.0, 1.0]), 0.0, np.zeros(2, bool), 1e-12, out)
    assert first * dt == pytest.approx(t_hit, abs=1e-10) and first * dt <= t_hit
    assert out[1] == 2.0
    first = plane_crossings(xa, va, xb, vb, dt, np.array([0.0, 0.0, 1.0]), 0.0, np.array([True, False]), 1e-12, out)
    assert first == 2.0


def test_trajectory_boxes_enclose_the_hermite_path():
    rng = np.random.default_rng(4)
    n, dt = 50, 0.3
    xa, va = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    xb, vb = xa + dt * va + 0.1 * rng.standard_normal((n, 3)), va + rng.standard_normal((n, 3))
    boxes = np.empty((n, 6))
    trajectory_boxes(xa, va, xb, vb, dt, boxes)
    for u in np.linspace(0.0, 1.0, 41):
        # cubic Hermite basis on [0, 1] with tangents scaled by dt
        h00, h10, h01, h11 = 2 * u**3 - 3 * u**2 + 1, u**3 - 2 * u**2 + u, -2 * u**3 + 3 * u**2, u**3 - u**2
        p = h00 * xa + h10 * dt * va + h01 * xb + h11 * dt * vb
        assert np.all(p >= boxes[:, :3] - 1e-12) and np.all(p <= boxes[:, 3:] + 1e-12)
    # uniform motion: the box is exactly the segment's box
    trajectory_boxes(xa, va, xa + dt * va, va, dt, boxes)
    end = xa + dt * va
    assert np.allclose(boxes[:, :3], np.minimum(xa, end)) and np.allclose(boxes[:, 3:], np.maximum(xa, end))
    triangles = np.array([[0, 1, 2], [3, 4, 5]])
    out = np.empty((2, 6))
    triangle_boxes(triangles, boxes, out)
    assert np.allclose(out[0, :3], boxes[:3, :3].min(axis=0)) and np.allclose(out[1, 3:], boxes[3:6, 3:].max(axis=0))
