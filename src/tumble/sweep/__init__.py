"""Many runs at once: parameter sweeps and ensembles on Dask distributed (issue 20).

    import tumble as tb
    res = tb.sweep("examples/sweeps/tower_roof.toml", "results/")    # a local cluster on this machine's cores
    res = tb.sweep({"sweep": {"scene": "mass_ratio", "solvers": ["pgs"]}, "grid": {"ratio": [0.01, 0.1]}},
                   metrics=[my_metric], workers=2)                      # f(world, result) -> number | dict
    res.rows                                                            # one dict per run (the table's rows)

    tumble sweep SPEC.toml [--address ADDR] [--workers N] -o results/

Modules: ``spec`` (the spec file and its validation), ``expand`` (runs, run ids, seeds, jitter),
``runner`` (one run on a worker), ``executor`` (Dask: local cluster or an existing scheduler, warm-up,
retries, progress), ``table`` (the Parquet table), ``summary`` (means, CSV/markdown, PNG plots).
Importing this package imports neither Dask nor matplotlib.
"""

from __future__ import annotations

import math
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

from tumble.sweep import expand as _expand
from tumble.sweep import spec as _spec
from tumble.sweep import table as _table

__all__ = ["sweep", "SweepResult", "load_spec"]

load_spec = _spec.load

#: Seconds between rewrites of the results table while a sweep runs (what a crash can lose).
SAVE_EVERY_S = 10.0


@dataclass
class SweepResult:
    """What ``sweep`` did: ``rows`` (every run of the spec, this time's and the resumed ones), ``ran`` /
    ``skipped`` / ``errors`` (counts), ``wall_s`` (the whole call), ``start_s`` (cluster start-up),
    ``warm_up_s`` (per worker), ``map_s`` (from the first submission to the last result), ``workers``,
    ``files`` (written), ``table`` (the Parquet path or None)."""

    rows: list[dict]
    ran: int
    skipped: int
    errors: int
    wall_s: float
    start_s: float = math.nan
    warm_up_s: dict = field(default_factory=dict)
    map_s: float = 0.0
    workers: int = 0
    files: list = field(default_factory=list)
    table: Path | None = None


def _as_spec(spec, metrics) -> _spec.SweepSpec:
    if isinstance(spec, _spec.SweepSpec):
        if metrics:
            spec.metrics = spec.metrics + list(metrics)
        return spec
    if isinstance(spec, dict):
        return _spec.from_dict(spec, user_metrics=metrics)
    if isinstance(spec, (str, Path)):
        s = _spec.load(spec)
        if metrics:
            s.metrics = _spec._metrics([m for m in s.metrics if isinstance(m, str)], list(metrics))
        return s
    raise _spec.SettingsError(f"sweep: field spec={spec!r} must be a spec file path, a dict or a SweepSpec")


def sweep(spec, output=None, *, address: str | None = None, workers: int | None = None, client=None,
          metrics: list | None = None, progress: bool = True, resume: bool = True, plots: bool = True,
          title: str | None = None) -> SweepResult:
    """Run every run of ``spec`` (a sweep spec file, a dict of its shape, or a ``SweepSpec``).

    ``output``: folder for ``results.parquet``, ``summary.csv``/``summary.md`` and the PNG plots (None:
    write nothing, return the rows). Rows already in the folder's table that this spec does not have
    are kept in the table (not in the summary or ``rows``). ``address``: an existing Dask scheduler;
    else a local cluster of ``workers`` processes (default: one per core). ``client``: reuse an
    existing ``distributed.Client`` (drivers that call sweep repeatedly). ``metrics``: extra callables
    ``f(world, result)`` evaluated after each run. ``resume``: skip the runs already in ``output``'s
    table without an error (a run recorded with an error is run again). ``progress``: a bar with ETA
    on stderr.
    """
    from tumble.sweep import summary

    t0 = time.perf_counter()
    s = _as_spec(spec, metrics)
    runs = _expand.expand(s)
    by_id = {r.run_id: r for r in runs}
    old = _table.read(output) if (output is not None and resume) else []
    rows = {r["run_id"]: r for r in old if r.get("run_id") in by_id}
    # rows of runs this spec does not have (an earlier, different spec in the same folder) stay in the
    # table, after this spec's rows, but out of the summary: a sweep never deletes results
    foreign = [r for r in old if r.get("run_id") not in by_id]
    done = {i for i, r in rows.items() if r.get("error") is None}
    pending = [r for r in runs if r.run_id not in done]
    res = SweepResult(rows=[], ran=len(pending), skipped=len(runs) - len(pending), errors=0, wall_s=0.0)
    if progress and res.skipped:
        print(f"sweep: {res.skipped} of {len(runs)} runs already in {output}, skipped", file=sys.stderr)

    def ordered():
        return [rows[r.run_id] for r in runs if r.run_id in rows]

    if pending:
        from tumble.sweep.executor import Engine

        last_save = [time.perf_counter()]

        def on_record(rec):
            rows[rec["run_id"]] = _table.row(by_id[rec["run_id"]], rec)
            if output is not None and time.perf_counter() - last_save[0] > SAVE_EVERY_S:
                _table.write(output, ordered() + foreign)
                last_save[0] = time.perf_counter()

        with Engine(address=address, workers=workers, retries=s.retries, client=client) as eng:
            res.start_s, res.workers = eng.start_s, eng.workers()
            first = pending[0]
            res.warm_up_s = eng.warm(first.scene, first.values(), s.solvers, first.dt)
            t_map = time.perf_counter()
            eng.map_runs(pending, on_record, retries=s.retries, progress=progress)
            res.map_s = time.perf_counter() - t_map
    res.rows = ordered()
    res.errors = sum(r.get("error") is not None for r in res.rows)
    if output is not None:
        out = Path(output)
        res.table = _table.write(out, res.rows + foreign)
        res.files = [res.table, *summary.write_tables(res.rows, s.varied(), out)]
        if plots:
            name = title or Path(s.scene).stem
            res.files += summary.plot(res.rows, s.varied(), sorted(s.jitter), out, title=name)
    res.wall_s = time.perf_counter() - t0
    return res


class _CallableModule(types.ModuleType):
    """``tumble.sweep`` is both this package and the function ``tb.sweep``: once the package is
    imported Python binds the attribute ``tumble.sweep`` to the module, so the module itself must be
    callable for ``tb.sweep(...)`` to keep working."""

    def __call__(self, *args, **kw):
        return sweep(*args, **kw)


sys.modules[__name__].__class__ = _CallableModule
