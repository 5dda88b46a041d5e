"""JIT policy in one place (stumpy's config pattern).

Every ``@njit`` in tumble goes through :func:`kernel` so that caching, fastmath and bounds checking
are decided here and nowhere else (``tests/unit/test_kernel_policy.py`` fails on any other ``njit``
under ``src/``). ``TUMBLE_BOUNDSCHECK=1`` turns bounds checking on for debugging. The Numba cache
lives where ``NUMBA_CACHE_DIR`` points (the Makefile sets an ignored folder).

One math mode: IEEE arithmetic in source order (``FASTMATH = False``). Contraction (``contract``:
a*b + c fused into one FMA) and reciprocal approximation (``arcp``) were allowed until issue 17's
determinism defect: with them a kernel compiled in the running process and the same kernel loaded from
the Numba cache gave different results, because each compiled copy of a function (inlined into a
caller or not, JIT-compiled or loaded as cached object code) may fuse a different set of operations.
Measured on the impulse solver's box on a 30 degree slope: the plane-box test's vertex heights
(~1e-18 m, ties) came out in a different order, so the first step's contacts were listed 1,3,0,2 with
a cold cache and 0,2,1,3 with a warm one, and the normal impulse sum after 100 steps was 0.03648
against 0.03635. With IEEE arithmetic every copy computes the same bits (cold and cached runs agree;
``tests/determinism/test_cold_compile.py``), at no measurable cost (docs/architecture.md, "Kernel
rules"). ``exact=True`` is kept as an explicit marker (and for callers that pass it); it is the policy.
``error_model="numpy"`` drops the division-by-zero checks (the kernel guards its divisions itself).

The kernel rules learnt in this code base (docs/architecture.md, "Kernel rules"):
    1. index element by element in hot loops (``a[i, 0]``, not ``a[i]``): a row view costs a
       reference-count pair per use;
    2. no array views or array-taking helpers with loops inside hot loops (inlined helpers that take
       arrays took and dropped 10 references per contact in the impulse resolution);
    3. scratch allocated once per call, passed down; never inside a per-body or per-contact loop;
    4. never re-bind an array inside a loop (a growable buffer re-bound in the broad phase's insertion
       sort cost two reference-count pairs per endpoint, 3/4 of the update);
    5. name coordinate loops apart from batch loops (``for c in range(3)`` inside ``for k in ...``:
       Numba has no block scope, a nested ``k`` silently overwrote the batch index twice);
    6. kernel calls cost per array argument (docs/architecture.md); 7. a kernel calling a kernel that
       is not inlined takes and drops a reference per array argument too, and a call of 30 or more
       arguments cannot be inlined (CPython 3.11 passes them as ``*args``): per-item helpers take
       scalars and return tuples, and the loop over the items runs inside one call (issue 19: the
       joint rows' call per joint, 37 arrays, was 0.46 us, 2/3 of chain50's row rebuild).
"""

from __future__ import annotations

import os
import types

# Threads of the parallel kernels wait passively (sleep on a futex) between parallel regions instead
# of spinning. With tbb absent Numba picks its OpenMP layer, whose default (active) wait spins a core
# per idle thread: whenever another process wants that core, every region waits for a descheduled
# thread. Measured here (balls_well under pgs, 2 threads, dt 1/240, ms/step, three interleaved rounds
# on a machine with load average ~8): OpenMP active 8.3-28 quiet / 13-44 with one more core busy;
# OpenMP passive 0.60-1.05 / 0.61-1.23; workqueue 0.74-1.15 / 0.76-2.24; one thread 1.4-1.6 /
# 2.3-2.4. Set before libgomp is loaded (the first parallel kernel call); a user's own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from numba import njit  # noqa: E402  (after the wait policy, before anything can load libgomp)

#: fastmath flags: none (IEEE arithmetic; see the module docstring for the measurement). NaN/Inf
#: semantics are kept in any case: input validation and the non-finite quarantine rely on them.
FASTMATH = False
BOUNDSCHECK = os.environ.get("TUMBLE_BOUNDSCHECK", "0") == "1"


def kernel(fn=None, *, inline: str = "never", parallel: bool = False, exact: bool = False,
           error_model: str = "python"):
    """Compile ``fn`` as a cached nopython kernel: ``@kernel``, ``@kernel(inline="always")``,
    ``@kernel(parallel=True)`` (loops written with ``numba.prange``), ``@kernel(exact=True)`` (IEEE
    arithmetic, which is now the policy for every kernel: see the module docstring),
    ``error_model="numpy"`` (no division checks)."""

    def wrap(f):
        return njit(cache=True, fastmath=False if exact else FASTMATH, boundscheck=BOUNDSCHECK, inline=inline,
                    parallel=parallel, error_model=error_model)(f)

    return wrap(fn) if fn is not None else wrap


def kernel_parallel(fn):
    """Compile ``fn`` with ``parallel=True`` (loops written with ``numba.prange``), and the same code
    on one thread as ``.serial`` (prange is range there): callers take the serial twin below a work
    size, where waking the threads costs more than the work (a parallel region with no work: 2.5 us
    on one thread, 20-40 us on two when another process holds a core; measured on the 2-core VM).
    The twin has its own qualified name, so the Numba cache (keyed by name, not by options) keeps
    the two apart."""
    parallel = kernel(fn, parallel=True)
    twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_serial", fn.__defaults__, fn.__closure__)
    twin.__qualname__ = fn.__qualname__ + "_serial"
    twin.__module__ = fn.__module__
    twin.__doc__ = fn.__doc__
    parallel.serial = kernel(twin)
    return parallel
