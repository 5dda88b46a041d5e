"""The results table: one Parquet file, one row per run.

Columns: ``run_id``, ``scene``, ``solver``, ``dt`` [s], ``seconds`` [s], ``repeat``, ``seed``, then
``param.<name>`` (the nominal value of every parameter), ``jitter.<name>`` (the seeded offset a run
added), ``metric.<name>`` (numbers and bools as float64, None as NaN, anything else as JSON text),
``wall_s`` (the run's wall time on its worker), ``steps``, ``error`` (null, or "Type: message") and
``worker``. Written whole and atomically (a temporary file renamed over the old one), so an
interrupted sweep leaves the last complete table, which a resumed sweep reads to skip finished runs.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from tumble.sweep.expand import Run

FILE = "results.parquet"


def _cell(v):
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    return v if v is None else str(v)


def row(run: Run, rec: dict) -> dict:
    """The table row of ``run`` and its record from the runner."""
    out = {"run_id": run.run_id, "scene": Path(run.scene).name if os.sep in run.scene else run.scene,
           "solver": run.solver, "dt": rec.get("dt", run.dt if run.dt is not None else math.nan),
           "seconds": rec.get("seconds", run.seconds if run.seconds is not None else math.nan),
           "repeat": run.repeat, "seed": run.seed}
    out.update({f"param.{k}": _cell(v) for k, v in run.params.items()})
    out.update({f"jitter.{k}": float(v) for k, v in run.jitter.items()})
    out.update({f"metric.{k}": v for k, v in rec["metrics"].items()})
    out.update({"wall_s": rec["wall_s"], "steps": rec["steps"], "error": rec["error"], "worker": rec.get("worker")})
    return out


def read(folder) -> list[dict]:
    """The rows of ``folder``'s results table ([] when there is none)."""
    import pyarrow.parquet as pq

    path = Path(folder) / FILE
    if not path.exists():
        return []
    return pq.read_table(path).to_pylist()


def _normalise(rows: list[dict]) -> list[dict]:
    """Make every column one type: a column with any text becomes text (numbers printed)."""
    cols = list(dict.fromkeys(k for r in rows for k in r))
    text = {c for c in cols if any(isinstance(r.get(c), str) for r in rows)}
    out = []
    for r in rows:
        d = {}
        for c in cols:
            v = r.get(c)
            if c in text and v is not None and not isinstance(v, str):
                v = None if isinstance(v, float) and math.isnan(v) else repr(v)
            d[c] = v
        out.append(d)
    return out


def write(folder, rows: list[dict]) -> Path:
    """Write ``rows`` as ``folder``/results.parquet (atomically); returns the path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILE
    tmp = folder / (FILE + ".tmp")
    pq.write_table(pa.Table.from_pylist(_normalise(rows)), tmp)
    os.replace(tmp, path)
    return path
