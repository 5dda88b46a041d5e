"""Internal: every Numba kernel of tumble lives under this package.

Kernels take NumPy arrays and scalars only (never Python objects), are compiled through
:func:`tumble._core.config.kernel` (``cache=True``) and write their outputs into arrays passed in.
"""
