"""NumPy twins of the compact pairwise rows (``tumble._core.rows.pack_pair_rows``, issue 19).

A contact row has J = [-d, -(r_a x d), d, r_b x d] and B = M^-1 J^T (Catto 001 eq. 18, 34), so it is
carried by d, the two angular J, the two angular B, the two inverse masses and 1 / (J B): the twin
builds that table by slicing, and unpacks it back to J and B (for the dense oracle of the sweep).
"""

import numpy as np

#: the columns, as documented at ``rows.PAIR_COLUMNS``
D, JA, JB, BA, BB, MA, MB, INV_D = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12), slice(12, 15), 15, 16, 17


def naive_pack(row_body, row_J, row_B, row_inv_diag, body_inv_mass):
    """The compact table (s, 18) of the rows given (every row pairwise)."""
    s = row_body.shape[0]
    C = np.zeros((s, 18))
    C[:, D] = row_J[:, 1, :3]
    C[:, JA] = row_J[:, 0, 3:]
    C[:, JB] = row_J[:, 1, 3:]
    C[:, BA] = row_B[:, 0, 3:]
    C[:, BB] = row_B[:, 1, 3:]
    for side, col in ((0, MA), (1, MB)):
        b = row_body[:, side]
        C[:, col] = np.where(b >= 0, body_inv_mass[np.maximum(b, 0)], 0.0)
    C[:, INV_D] = row_inv_diag
    return C


def naive_unpack(row_body, C):
    """J and B (s, 2, 6) from the compact table: J_a = [-d, J_a,ang], J_b = [d, J_b,ang], B_lin =
    m^-1 J_lin (0 on a fixed side, as the row store keeps it)."""
    s = C.shape[0]
    J = np.zeros((s, 2, 6))
    B = np.zeros((s, 2, 6))
    J[:, 0, :3] = -C[:, D]
    J[:, 0, 3:] = C[:, JA]
    J[:, 1, :3] = C[:, D]
    J[:, 1, 3:] = C[:, JB]
    B[:, 0, :3] = C[:, MA, None] * J[:, 0, :3]
    B[:, 0, 3:] = C[:, BA]
    B[:, 1, :3] = C[:, MB, None] * J[:, 1, :3]
    B[:, 1, 3:] = C[:, BB]
    for side in range(2):
        B[row_body[:, side] < 0, side] = 0.0
    return J, B
