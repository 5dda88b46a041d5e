"""Erleben 000 §3.1, Figs. 3, 4, 8: the matrix analysis of a resting box stack, on the rows tumble
solved (``w._core.rows``). A = J M^-1 J^T is symmetric with a large null space (four contact points
and two friction rows each per interface: far more rows than a box has freedoms), so the Gauss-Seidel
iteration matrix T = -(D + L)^-1 U has eigenvalues of modulus 1; constraint force mixing (A + gamma I)
removes them and puts the spectral radius below 1 (Fig. 8c-d). ``benchmarks/papers.py --papers 000``
reports the same quantities against stack height.
"""

import numpy as np
import scipy.linalg as sl
from benchmarks.papers import dense_rows

import tumble as tb


def stack_matrix(count):
    spec = tb.scenes.spec("box_stack25", count=count)
    w = spec.build(solver="pgs")
    w.step(spec.dt)
    J, B = dense_rows(w)
    return J @ B.T


def gs_radius(A):
    T = -sl.solve_triangular(np.tril(A), np.triu(A, 1), lower=True)
    mod = np.abs(np.linalg.eigvals(T))
    return mod.max(), np.mean(mod > 1 - 1e-6)


def test_box_stack_system_matrix_has_a_large_null_space_and_unit_gs_eigenvalues():
    A = stack_matrix(4)
    assert A.shape == (48, 48)                       # 4 interfaces x 4 points x (normal + 2 friction)
    amax = np.abs(A).max()
    assert np.abs(A - A.T).max() < 1e-12 * amax
    ev = np.linalg.eigvalsh(A)
    assert ev.min() > -1e-9 * ev.max()               # positive semidefinite
    null = np.mean(ev < 1e-9 * ev.max())
    assert null >= 0.45                              # 48 rows, 24 freedoms: half the spectrum is 0
    rho, at_one = gs_radius(A)
    assert abs(rho - 1.0) < 1e-6 and at_one >= 0.45


def test_constraint_force_mixing_removes_the_unit_eigenvalues():
    A = stack_matrix(4)
    rho, at_one = gs_radius(A + 1e-3 * np.abs(A).max() * np.eye(len(A)))
    assert rho < 0.999 and at_one == 0.0
