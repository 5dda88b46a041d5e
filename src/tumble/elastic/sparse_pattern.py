"""Fixed sparsity pattern of the implicit integrator's matrix M/h^2 + K + springs (implicit.py).

The pattern depends only on the tets (and the constrained vertices), so it is sorted once: every entry
source (the 144 Hessian triplets per tet, the mass matrix entries, one diagonal slot per degree of freedom)
gets the index of its slot in the CSC data array, and assembling a new matrix is one ``np.bincount`` plus
two scatters instead of a COO -> CSC conversion (sort) per Newton iteration. Constrained (eliminated)
degrees of freedom get an identity row and column, so the solve leaves them unchanged.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class HessianPattern:
    """CSC structure of the 3n x 3n Newton matrix and the slot of every entry source."""

    def __init__(self, hessian_rows: np.ndarray, hessian_cols: np.ndarray, mass_kron: sp.csr_matrix,
                 fixed_dofs: np.ndarray):
        size = mass_kron.shape[0]
        mass = mass_kron.tocoo()
        diagonal = np.arange(size, dtype=np.int64)
        rows = np.concatenate([hessian_rows, mass.row.astype(np.int64), diagonal])
        cols = np.concatenate([hessian_cols, mass.col.astype(np.int64), diagonal])
        keys, slots = np.unique(cols * size + rows, return_inverse=True)  # sorted by column, then row: CSC order
        self.size = size
        self.nnz = len(keys)
        self.indices = (keys % size).astype(np.int32)
        self.indptr = np.searchsorted(keys // size, np.arange(size + 1)).astype(np.int32)
        m = len(hessian_rows)
        self.hessian_slot = slots[:m]
        self.mass_data = np.bincount(slots[m:m + len(mass.data)], weights=mass.data, minlength=self.nnz)
        self.diagonal_slot = slots[m + len(mass.data):]
        fixed = np.zeros(size, dtype=bool)
        fixed[fixed_dofs] = True
        self.fixed = fixed
        self.fixed_slots = np.flatnonzero(fixed[self.indices] | fixed[keys // size])
        self.fixed_diagonal_slots = self.diagonal_slot[fixed_dofs]

    def assemble(self, hessian_values: np.ndarray, inverse_h2: float, diagonal: np.ndarray) -> sp.csc_matrix:
        """M_s (x) I_3 / h^2 + sum of the tets' Hessians + diag(``diagonal``), fixed dofs as identity."""
        data = np.bincount(self.hessian_slot, weights=hessian_values, minlength=self.nnz)
        data += inverse_h2 * self.mass_data
        data[self.diagonal_slot] += diagonal
        data[self.fixed_slots] = 0.0
        data[self.fixed_diagonal_slots] = 1.0
        return sp.csc_matrix((data, self.indices, self.indptr), shape=(self.size, self.size))
