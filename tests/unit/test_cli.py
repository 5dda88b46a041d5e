"""The command line: `tumble scenes`, `tumble run SCENE --json` prints DESIGN's metrics object."""

import json
import subprocess
import sys

import pytest

from tumble.cli import main

KEYS = {"bodies", "steps", "wall_s", "ms_per_step", "realtime_factor", "max_penetration", "max_drift", "standing",
        "energy"}


def test_scenes_lists_the_library(capsys):
    assert main(["scenes"]) == 0
    out = capsys.readouterr().out
    for name in ("stack10", "stack3_nocache", "mass_ratio", "pyramid20", "wall200", "pile1000", "large_pyramid"):
        assert name in out


def test_run_json_prints_the_metrics_object(capsys):
    assert main(["run", "stack10", "--seconds", "0.5", "--json", "--param", "count=3"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert KEYS <= set(res)
    assert res["bodies"] == 4 and res["steps"] == 30
    assert res["solver"] == "pgs" and res["standing"] is True
    assert res["ms_per_step"] > 0 and res["realtime_factor"] > 0


def test_unknown_scene_and_solver_exit_2_with_a_message(capsys):
    assert main(["run", "nope", "--json"]) == 2
    assert "unknown scene 'nope'" in capsys.readouterr().err
    assert main(["run", "stack10", "--solver", "magic", "--json"]) == 2
    assert "'magic'" in capsys.readouterr().err


@pytest.mark.slow
def test_console_script_entry_point():
    out = subprocess.run([sys.executable, "-m", "tumble.cli", "run", "mass_ratio", "--seconds", "0.2", "--json"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["bodies"] == 3


@pytest.mark.parametrize("solver", ["pgs", "shock", "impulse", "jacobi"])
def test_run_json_is_strict_json_for_every_solver(capsys, solver):
    """Issue 17: no Infinity / NaN tokens (shock's max_correction is inf; impulse has no merit)."""
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    assert main(["run", "stack10", "--solver", solver, "--seconds", "0.1", "--json", "--param", "count=2"]) == 0
    res = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert res["solver"] == solver and res["bodies"] == 3


def test_run_json_writes_non_finite_metrics_as_strings(capsys, monkeypatch):
    """A metric that is NaN or infinite (e.g. a realtime factor of a zero-time run) is printed as the
    string "nan" / "inf" and listed under "nonfinite", never as a bare NaN / Infinity token."""
    import math

    import tumble.cli as cli

    result = {"scene": "x", "merit": math.nan, "realtime_factor": math.inf}
    monkeypatch.setattr(cli, "run_scene", lambda *a, **k: result)
    assert main(["run", "stack10", "--json"]) == 0
    text = capsys.readouterr().out
    assert "NaN" not in text and "Infinity" not in text
    res = json.loads(text)
    assert res["merit"] == "nan" and res["realtime_factor"] == "inf"
    assert sorted(res["nonfinite"]) == [["merit"], ["realtime_factor"]]


def test_run_rubber_cylinders_reports_the_elastic_bodies(capsys):
    assert main(["run", "rubber_cylinders", "--seconds", "0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["elastic_bodies"] == 2 and out["elastic_steps_taken"] > 0
    assert out["elastic_energy_total"] == pytest.approx(sum(out[f"elastic_energy_{k}"] for k in (
        "elastic", "kinetic", "potential", "contact", "constraint", "dissipated")))
