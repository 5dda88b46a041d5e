"""The paper tables of benchmarks/papers.py for papers 002 and 003 (issue 21), on tiny configurations:
every row has the five cells, non-empty, a verdict from the allowed set and a command; the markdown of
a table has one line per row."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import papers  # noqa: E402

FIELDS = ("claim", "paper", "ours", "verdict", "command")
VERDICTS = ("reproduces", "partly", "does not", "not comparable")

TINY_002 = {"tower_steps": 6, "drift_steps": 4, "penalty_steps": 3, "collision_steps": 40, "harmonic": (2,),
            "world_seconds": 2 / 60}
TINY_003 = {"cylinder_seconds": 0.01, "stiff_seconds": 0.005, "stiff_k": (2e4, 2e5), "pile": False,
            "constraint_seconds": 0.01, "accuracy_seconds": 0.01, "scaling": (300,)}


def _check(rows: list[dict], notes: list[str], minimum: int) -> None:
    assert len(rows) >= minimum
    for r in rows:
        assert tuple(r) == FIELDS
        assert all(isinstance(r[k], str) and r[k].strip() for k in FIELDS), r
        assert r["verdict"].startswith(VERDICTS), r["verdict"]
        assert "\n" not in "".join(r.values())
        assert "|" not in r["claim"].replace("\\|", "")  # bars are escaped for the markdown table
        assert r["command"] == "-" or r["command"].startswith("`")
    assert notes and all(isinstance(n, str) for n in notes)


def test_paper_002_rows_on_a_tiny_run():
    rows, notes = papers.paper_002(True, TINY_002)
    _check(rows, notes, 20)
    by_claim = {r["claim"].split(":")[0]: r for r in rows}
    # the closed-form checks hold even on a tiny run
    assert by_claim["Thm. 5.1"]["verdict"] == "reproduces"
    assert by_claim["§8.1 / Fig. 10"]["verdict"] == "reproduces"
    assert any(r["verdict"].startswith("not comparable") and "5 min" in r["paper"] for r in rows)


def test_paper_003_rows_on_a_tiny_run():
    rows, notes = papers.paper_003(True, TINY_003)
    _check(rows, notes, 15)
    mass = next(r for r in rows if r["claim"].startswith("§8.1: M is constant"))
    assert mass["verdict"] == "reproduces"
    assert any("6650" in r["paper"] for r in rows)


def test_every_paper_has_a_runner_and_a_title():
    assert set(papers.RUNNERS) == set(papers.TITLES) == {"000", "001", "002", "003", "004"}


@pytest.mark.parametrize("bad", ["maybe", ""])
def test_check_rejects_a_verdict_outside_the_set(bad):
    r = papers.row("c", "p", "o", bad, "`x`")
    with pytest.raises(AssertionError):
        _check([r], ["n"], 1)
