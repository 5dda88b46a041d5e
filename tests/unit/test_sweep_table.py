"""The sweep's results table and summary without a cluster: Parquet round trip, mixed-type columns,
group means skip failed runs, plots written."""

import math

import pytest

pytest.importorskip("pyarrow")

from tumble.sweep import summary, table  # noqa: E402


def rows():
    base = {"scene": "s", "dt": 0.01, "seconds": 1.0, "repeat": 0, "seed": 1, "steps": 100, "worker": "w"}
    return [
        {**base, "run_id": "a", "solver": "pgs", "param.friction": 0.2, "metric.standing": 1.0,
         "metric.tag": "x", "wall_s": 1.0, "error": None},
        {**base, "run_id": "b", "solver": "pgs", "param.friction": 0.2, "metric.standing": 0.0,
         "metric.tag": 3.0, "wall_s": 3.0, "error": None},
        {**base, "run_id": "c", "solver": "pgs", "param.friction": 0.4, "metric.standing": math.nan,
         "wall_s": 0.5, "error": "SimulationError: body 1 position is nan"},
        {**base, "run_id": "d", "solver": "shock", "param.friction": 0.4, "metric.standing": 1.0,
         "wall_s": 2.0, "error": None},
    ]


def test_parquet_round_trip_and_mixed_columns(tmp_path):
    table.write(tmp_path, rows())
    back = table.read(tmp_path)
    assert [r["run_id"] for r in back] == ["a", "b", "c", "d"]
    assert back[0]["metric.tag"] == "x" and back[1]["metric.tag"] == "3.0"     # a text column stays text
    assert back[2]["error"].startswith("SimulationError") and back[0]["error"] is None
    assert table.read(tmp_path / "none") == []


def test_group_means_skip_failed_runs_and_plots(tmp_path):
    gs = summary.groups(rows(), ["friction"])
    by = {(g["solver"], g["friction"]): g for g in gs}
    assert by[("pgs", 0.2)]["standing"] == 0.5 and by[("pgs", 0.2)]["runs"] == 2
    assert by[("pgs", 0.4)]["errors"] == 1 and math.isnan(by[("pgs", 0.4)]["standing"])
    assert "metric.tag" not in summary.numeric_metrics(rows())
    files = summary.write_tables(rows(), ["friction"], tmp_path)
    assert "SimulationError" in (tmp_path / "summary.md").read_text() and len(files) == 2
    pngs = summary.plot(rows(), ["friction"], [], tmp_path, title="t")
    assert [p.name for p in pngs] == ["standing_vs_friction.png"] and pngs[0].stat().st_size > 1000
