"""The helpers the benchmark scripts share for their reports (benchmarks/report.py): table cells and
markdown tables, JSON, the result folder, the meta block and its lines, figures, experiment selection."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import report  # noqa: E402


# ------------------------------------------------------------------------------------------------ cells and tables
def test_fmt_cells():
    assert report.fmt(None) == "-"
    assert report.fmt(float("nan")) == "-"
    assert report.fmt(True) == "yes" and report.fmt(np.bool_(False)) == "no"
    assert report.fmt(7) == "7"
    assert report.fmt(0.0123456, 3) == "0.0123"
    assert report.fmt(0.0123456, 3, 1000) == "12.3"
    assert report.fmt({"block": 0.5, "cannonball": None}) == "block: 0.5, cannonball: -"
    assert report.fmt("a|b") == "a\\|b"
    assert report.pass_fail(None) == "n/a" and report.pass_fail(True) == "PASS" and report.pass_fail(False) == "FAIL"
    assert report.yes_no(None) == "n/a" and report.yes_no(1) == "yes" and report.yes_no(False) == "no"


def test_md_table_layout():
    t = report.md_table(["scene", "ms", "ok"], [["wall200", 1.23456, True], ["pile", None]])
    lines = t.split("\n")
    assert lines[0] == "| scene | ms | ok |"
    assert lines[1] == "|---|---|---|"
    assert lines[2] == "| wall200 | 1.23 | yes |"
    assert lines[3] == "| pile | - |  |"
    assert all(ln.count("|") == 4 for ln in lines)


def test_engine_table_ratio_to_pybullet_and_failed_rows():
    ok = {"ms_mean": 2.0, "ms_p95": 3.0, "max_penetration": 0.0012, "max_drift": 0.01, "standing": True,
          "energy": 12.3456, "energy_max_gain": 0.001}
    rows = [{"engine": "tumble (pgs)", **ok}, {"engine": "pybullet 3", **ok, "ms_mean": 0.5, "standing": None},
            {"engine": "mujoco", "error": "boom"}]
    lines = report.engine_md_table(rows).split("\n")
    assert lines[0] == "| " + " | ".join(report.ENGINE_COLUMNS) + " |"
    assert lines[2] == "| tumble (pgs) | 2.00 | 3.00 | 4.00x | 1.2 | 0.010 | yes | 12.35 | 0.001 |"
    assert lines[3].split(" | ")[3] == "1.00x" and lines[3].split(" | ")[6] == "-"
    assert lines[4] == "| mujoco | boom |" + "  |" * (len(report.ENGINE_COLUMNS) - 2)
    assert report.engine_rows(rows[:1])[0][3] == "-"            # no PyBullet row: no ratio


def test_series_and_stats():
    assert report.rounded_series([1.23456, np.nan, 2.0], 3) == [1.23, None, 2.0]
    assert report.rounded_series(np.array([0.0012345]), 2, 1000.0) == [1.2]
    mean, p95 = report.mean_p95(np.arange(101.0))
    assert mean == 50.0 and p95 == pytest.approx(95.0)
    assert all(math.isnan(x) for x in report.mean_p95([]))


# ------------------------------------------------------------------------------------------------ files
def test_json_conversion_handles_numpy_and_nan(tmp_path):
    d = report.to_jsonable({"a": np.arange(3), "b": np.float64("nan"), "c": (np.int64(2), np.bool_(True)),
                            3: {"x": np.float32(1.5)}})
    assert json.loads(json.dumps(d)) == {"a": [0, 1, 2], "b": None, "c": [2, True], "3": {"x": 1.5}}
    report.write_json(tmp_path / "sub" / "x.json", {"a": np.arange(2)})
    assert (tmp_path / "sub" / "x.json").read_text() == '{\n "a": [\n  0,\n  1\n ]\n}'
    report.write_markdown(tmp_path / "sub" / "x.md", ["# t", "", "body"])
    assert (tmp_path / "sub" / "x.md").read_text() == "# t\n\nbody"


def test_results_dir_names(tmp_path):
    base = report.ROOT / "benchmarks" / "results"
    assert report.results_dir("local-2core-x") == base / "local-2core-x"
    assert report.results_dir("local-2core-x", quick=True) == base / "local-2core-x-quick.tmp"
    assert report.results_dir("t", quick=True, out=str(tmp_path)) == tmp_path


def test_machine_tag_override(monkeypatch):
    monkeypatch.setenv("TUMBLE_MACHINE_TAG", "my-box")
    assert report.machine_tag() == "my-box"
    monkeypatch.delenv("TUMBLE_MACHINE_TAG")
    monkeypatch.delenv("CI", raising=False)
    assert report.machine_tag() == f"local-{report.core_count()}core-{report.cpu_model()}"


# ------------------------------------------------------------------------------------------------ meta
def test_run_meta_keys_in_order_and_setup_lines(tmp_path):
    args = SimpleNamespace(tag="t", quick=True, out=str(tmp_path), threads=None)
    start = report.start_run(args)
    tag, out, *_ = start                                        # still unpacks as a tuple (render.py)
    assert (tag, out) == ("t", tmp_path)
    meta = report.run_meta(start, "benchmarks/x.py", ["--quick"], True, experiments=["a"], warmup="pgs 0.1 s",
                           figures=["x_a.png"])
    assert list(meta) == ["tag", "date", "machine", "cores", "cpu", "loadavg", "python", "numpy", "numba",
                          "numba_threads", "git", "command", "quick", "experiments", "warmup", "wall_s", "figures",
                          "other_cores", "busy"]
    assert meta["command"] == "python benchmarks/x.py --quick" and meta["quick"] is True
    assert "numba_max_threads" in report.run_meta(start, "b.py", [], False, numba_max_threads=True)
    lines = report.setup_lines(dict(meta, busy=True, other_cores=0.5), "a few steps")
    assert lines[0].startswith("- date: ") and f"CPU `{meta['cpu']}`" in lines[1]
    assert lines[2].endswith("0.5 cores on average -- **the machine was not idle: timings are inflated**")
    assert f"({meta['numba_threads']} threads); tumble at git" in lines[3]
    assert lines[4] == ("- command: `python benchmarks/x.py --quick` (**quick mode**: a few steps; numbers are a "
                        "smoke test, not results)")
    lines = report.setup_lines(dict(meta, numba_max_threads=8, quick=False), "-", numba_max_threads=True)
    assert f": {meta['numba_threads']} threads (of 8); tumble at git" in lines[3]
    assert lines[4] == "- command: `python benchmarks/x.py --quick`"
    assert report.warmup_text({"pgs": 1.25, "shock": "KeyError: x"}) == "pgs 1.2 s, shock KeyError: x"


def test_warmed_up_world_builds_a_fresh_one_after_the_throw_away():
    built = []

    class W:
        def __init__(self):
            self.steps = 0
            built.append(self)

        def step(self, dt):
            self.steps += 1

    w = report.warmed_up_world(W, 0.01, 3)
    assert len(built) == 2 and built[0].steps == 3 and w is built[1] and w.steps == 0
    assert report.warmed_up_world(W, 0.01, 0).steps == 0 and len(built) == 3


# ------------------------------------------------------------------------------------------------ figures, plan
def test_figure_path_and_save_figure(tmp_path):
    pytest.importorskip("matplotlib")
    figures = []
    p = report.figure_path(tmp_path / "out", "stacking", "merit", figures)
    assert p == tmp_path / "out" / "stacking_merit.png" and figures == ["stacking_merit.png"]
    fig, ax = report.pyplot().subplots()
    ax.plot([0, 1], [0, 1])
    report.legend(ax)                                           # nothing labelled: no legend
    assert ax.get_legend() is None
    assert report.save_figure(fig, p, dpi=50) == p and p.stat().st_size > 500
    fig, _ = report.pyplot().subplots()
    q = report.figure_path(tmp_path / "out", "stacking", "drift", figures)
    lines = report.figure_lines(fig, q, "drift and penetration", dpi=40)
    assert lines == ["![drift and penetration](stacking_drift.png)", ""]
    assert q.exists() and figures == ["stacking_merit.png", "stacking_drift.png"]


def test_parse_experiments():
    exps = ["box_stack", "ball_grid", "tower_roof", "fig18"]
    assert report.parse_experiments(None, exps) == exps
    assert report.parse_experiments("fig18,1", exps) == ["box_stack", "fig18"]
    with pytest.raises(SystemExit):
        report.parse_experiments("nonsense", exps)


def test_run_experiments_reports_a_failure_and_goes_on():
    def bad(ctx):
        raise ValueError("boom")

    runners = {"a": bad, "b": lambda ctx: (["## b"], {"x": ctx}, ["- b finding"])}
    sections, findings, data = report.run_experiments(["a", "b"], ["a", "b"], runners, 7)
    assert sections[0][:3] == ["## a", "", "_failed: ValueError: boom_"] and sections[1] == ["## b"]
    assert findings == ["- b finding"] and data == {"a": {"error": "boom"}, "b": {"x": 7}}
