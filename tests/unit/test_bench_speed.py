"""The issue-19 speed benchmark (benchmarks/speed.py) on tiny step counts: every row it writes has the
issue's shape (case, tumble now, peers, goal, met?), the contended row has quiet, busy and one-thread
figures with the busy process described, and the per-stage profile is in the report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import speed  # noqa: E402


def test_speed_quick_run_writes_the_issue_table(tmp_path):
    assert speed.main(["--quick", "--cases", "well_busy,chain50,well_impulse", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "speed.md").read_text()
    data = json.loads((tmp_path / "speed.json").read_text())
    rows = data["rows"]
    assert [r["case"].split(" ")[0] for r in rows] == ["balls_well", "chain50", "324-ball"]
    for r in rows:
        assert set(r) >= {"case", "tumble", "peers", "goal", "met", "issue_now"}
        assert r["case"] in md
    busy = rows[0]["data"]
    for k in ("ms_quiet", "ms_busy", "ms_busy_1thread", "ms_quiet_1thread"):
        assert busy[k] > 0.0
    assert len(busy["blocks"]["busy"]) == busy["rounds"] == 1
    assert busy["stage_profile"]["total"] > 0.0
    # the well under impulse takes its PyBullet figure from the contended row's quiet blocks
    if any(p["engine"].startswith("pybullet") for p in busy["peers"]):
        assert rows[2]["met"] is not None
    assert "spinning on integer arithmetic" in md
    assert "## Per-stage profile" in md and "CPU used by other processes" in md
    assert data["meta"]["quick"] is True
    # the report is rebuilt from the JSON alone, the same text
    (tmp_path / "speed.md").unlink()
    assert speed.main(["--from-json", str(tmp_path / "speed.json")]) == 0
    assert (tmp_path / "speed.md").read_text() == md


def test_unknown_case_is_refused():
    import pytest

    with pytest.raises(SystemExit, match="unknown case 'nope'"):
        speed.main(["--quick", "--cases", "nope"])
