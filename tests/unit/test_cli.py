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
