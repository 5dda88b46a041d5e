"""JIT policy in one place (stumpy's config pattern).

Every ``@njit`` in tumble goes through :func:`kernel` so that caching, fastmath and bounds checking
are decided here and nowhere else. ``TUMBLE_BOUNDSCHECK=1`` turns bounds checking on for debugging.
The Numba cache lives where ``NUMBA_CACHE_DIR`` points (the Makefile sets an ignored folder).
"""

from __future__ import annotations

import os

from numba import njit

#: fastmath flags: contraction and reassociation are safe for our kernels; we keep NaN/Inf
#: semantics ("nnan"/"ninf" off) because input validation and NaN quarantine rely on them.
FASTMATH = {"contract", "arcp", "nsz"}
BOUNDSCHECK = os.environ.get("TUMBLE_BOUNDSCHECK", "0") == "1"


def kernel(fn=None, *, inline: str = "never"):
    """Compile ``fn`` as a cached nopython kernel (``@kernel`` or ``@kernel(inline="always")``)."""

    def wrap(f):
        return njit(cache=True, fastmath=FASTMATH, boundscheck=BOUNDSCHECK, inline=inline)(f)

    return wrap(fn) if fn is not None else wrap


def kernel_parallel(fn):
    """Compile ``fn`` with ``parallel=True`` (loops written with ``numba.prange``)."""
    return njit(cache=True, fastmath=FASTMATH, boundscheck=BOUNDSCHECK, parallel=True)(fn)
