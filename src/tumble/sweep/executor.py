"""The sweep's executor on Dask distributed.

Why Dask distributed and not Ray (measured on this 2-core machine by ``benchmarks/sweep.py``: 2 local
worker processes, two benchmark runs of 3 alternating repetitions each, the last in
``benchmarks/results/local-2core-amd-epyc/sweep.md``): a local Dask cluster started in 1.1-2.5 s
against 4.4-7.9 s for ``ray.init``, and its processes held 435 MiB against 1090 MiB (Ray adds a GCS
server, a raylet and agents besides its workers). Ray's per-task overhead was lower (0.65-1.07 ms of
wall per trivial task with both workers busy, against 2.0-4.9 ms), but a tumble run takes 0.1 s to
minutes, so those milliseconds are a few percent of the shortest run at most, while the start-up is
paid by every ``tumble sweep`` on one machine. Dask is plain pip packages, and the same client
connects to an existing scheduler.

Without ``address`` a ``LocalCluster`` of worker processes (one thread each: a run is one Numba
thread) is started on this machine; with one, the client connects to an existing scheduler
(``dask scheduler`` + ``dask worker`` on the cluster's machines, each with tumble importable and
the same ``NUMBA_CACHE_DIR``).

Kernels: every worker process loads the Numba kernels once, from the shared on-disk cache
(``NUMBA_CACHE_DIR``, inherited by local workers; unset, Numba's default ``__pycache__`` next to
the sources, equally shared), in a warm-up (a worker plugin: it also runs on workers that join or
are restarted later) that steps the sweep's first scene once under every solver; runs then find the
kernels in memory.

Limit: the warm-up reaches the kernels of a scene's first step. Kernels first used later in a run (after
a body spawns, a new shape pair touches) load from the cache in that run, or are compiled there, once
per worker, when the cache does not have them yet. On a fresh machine or cluster, fill the cache first
(``make warm`` for the common kernels, or a one-run sweep on one worker).

Threads: a run uses ``runner.THREADS_PER_RUN`` Numba threads (1): with one worker per core, parallel
kernels on top oversubscribe the cores. Measured here (2 workers, shock on the tower_roof example):
2 threads per run took 6.8-10 s per run (44-67 ms/step), 1 thread 0.26-0.33 s (1.5-2.0 ms/step).

Failures: a run's own exception, non-finite state or timeout is recorded by the runner. A worker
that dies (killed, out of memory) has its run re-scheduled by the Dask scheduler, up to ``retries``
times (``distributed.scheduler.allowed-failures`` on the local cluster; ``retries=`` of the task
for exceptions escaping the runner); after that the run is recorded with the KilledWorker error.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterable

from tumble.sweep.expand import Run
from tumble.sweep.runner import execute, warm_up

#: Local cluster default: one worker process per core (os.cpu_count()).
DEFAULT_WORKERS = None


def _warm_plugin(scene: str, params: dict, solvers: list[str], dt):
    from distributed.diagnostics.plugin import WorkerPlugin

    class TumbleWarmUp(WorkerPlugin):
        """Loads the sweep's kernels into a worker when it starts (or now, for running workers)."""

        def setup(self, worker):
            t0 = time.perf_counter()
            warm_up(scene, params, solvers, dt)
            worker.tumble_warm_up_s = time.perf_counter() - t0

    return TumbleWarmUp()


def _warm_times(dask_worker=None):
    return getattr(dask_worker, "tumble_warm_up_s", None)


class Engine:
    """A Dask client, on a local cluster it owns or on an existing scheduler. Use as a context manager."""

    def __init__(self, address: str | None = None, workers: int | None = DEFAULT_WORKERS, retries: int = 2,
                 client=None):
        import dask
        from distributed import Client, LocalCluster

        self.cluster = None
        self.own_client = client is None
        t0 = time.perf_counter()
        if client is not None:
            self.client = client
        elif address:
            self.client = Client(address, timeout="30s")
        else:
            n = workers or os.cpu_count() or 1
            # a run whose worker dies is re-scheduled this many times before it counts as failed
            with dask.config.set({"distributed.scheduler.allowed-failures": retries}):
                self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                            dashboard_address=":0", silence_logs=logging.ERROR)
            self.client = Client(self.cluster)
        self.start_s = time.perf_counter() - t0
        self.warm_up_s: dict = {}

    def workers(self) -> int:
        return len(self.client.scheduler_info()["workers"])

    def warm(self, scene: str, params: dict, solvers: list[str], dt) -> dict:
        """Register the warm-up plugin (runs now on every worker, later on new ones); returns
        {worker address: warm-up seconds}."""
        name = "tumble-warm-up-" + uuid.uuid4().hex[:8]
        self.client.register_plugin(_warm_plugin(scene, params, solvers, dt), name=name)
        self.warm_up_s = self.client.run(_warm_times)
        return self.warm_up_s

    def map_runs(self, runs: Iterable[Run], on_record: Callable[[dict], None], retries: int = 2,
                 progress: bool = True) -> None:
        """Submit every run; call ``on_record(record)`` in the caller's thread as each finishes (any
        order). Progress (done/total, rate, ETA) goes to stderr."""
        from distributed import as_completed
        from tqdm import tqdm

        runs = list(runs)
        token = uuid.uuid4().hex[:8]          # a resumed sweep in the same client gets fresh task keys
        futures = {}
        for r in runs:
            f = self.client.submit(execute, r, key=f"tumble-run-{r.run_id}-{token}", retries=retries, pure=False)
            futures[f.key] = (f, r)
        bar = tqdm(total=len(runs), desc="sweep", unit="run", file=sys.stderr, disable=not progress,
                   dynamic_ncols=True)
        errors = 0
        for f in as_completed([f for f, _ in futures.values()]):
            run = futures[f.key][1]
            try:
                rec = f.result()
            except Exception as e:  # noqa: BLE001  (worker died past its retries, or a pickling error)
                rec = {"run_id": run.run_id, "metrics": {}, "wall_s": float("nan"), "steps": 0,
                       "error": f"{type(e).__name__}: {e}", "worker": None}
            errors += rec["error"] is not None
            on_record(rec)
            f.release()
            bar.set_postfix(errors=errors, refresh=False)
            bar.update(1)
        bar.close()

    def close(self) -> None:
        if self.own_client:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
