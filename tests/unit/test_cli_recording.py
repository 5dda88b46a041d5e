"""``tumble run --record`` and ``tumble plot`` (issue 5): the CLI writes a valid recording of the run it
reports, and the plots of a recording are images with content."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tumble.cli import main
from tumble.recording import Recording
from tumble.viz.plots import FILES, plot


@pytest.fixture(scope="module")
def run_json(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "stack.npz"
    return out


def test_run_records_and_reports(run_json, capsys):
    assert main(["run", "stack3_nocache", "--seconds", "0.5", "--record", str(run_json), "--record-every", "5",
                 "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    rec = Recording.load(run_json)
    assert res["record"] == str(run_json)
    assert rec.scene == "stack3_nocache" and rec.solver == "pgs"
    assert rec.step_count == res["steps"] == round(0.5 / res["dt"])
    assert rec.frame_count == 1 + res["steps"] // 5
    assert rec.body_count == res["bodies"]
    # the metrics' max penetration is the deepest point over the run's steps, as the counters say
    assert res["max_penetration"] >= rec.step_max_penetration.max() - 1e-12


def test_plot_writes_images_with_content(run_json, tmp_path, capsys):
    if not run_json.exists():
        main(["run", "stack3_nocache", "--seconds", "0.5", "--record", str(run_json), "--json"])
    assert main(["plot", str(run_json), "-o", str(tmp_path / "plots")]) == 0
    from matplotlib.image import imread

    for name in FILES:
        img = imread(tmp_path / "plots" / name)
        assert img.shape[0] > 300 and img.shape[1] > 600
        # a blank figure is one colour; a plot with axes, labels and curves has many
        assert len(np.unique(img.reshape(-1, img.shape[2]), axis=0)) > 50, name


def test_plot_of_a_bad_file_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a recording")
    assert main(["plot", str(bad)]) == 2
    assert "not a zip archive" in capsys.readouterr().err
    with pytest.raises(Exception, match="no such recording file"):
        plot(tmp_path / "none.npz", tmp_path)


def test_exported_scene_file_runs_like_the_library_scene(tmp_path, capsys):
    path = tmp_path / "stack.toml"
    assert main(["export", "stack3_nocache", "-o", str(path)]) == 0
    capsys.readouterr()
    results = []
    for scene in ("stack3_nocache", str(path)):
        assert main(["run", scene, "--seconds", "0.25", "--json"]) == 0
        results.append(json.loads(capsys.readouterr().out))
    lib, file = results
    # same scene, same solver, same deterministic steps: the same physics, to the bit
    for key in ("bodies", "steps", "dt", "max_penetration", "max_drift", "energy", "standing"):
        assert lib[key] == file[key], key
    bad = tmp_path / "bad.toml"
    bad.write_text('format = "tumble-scene"\nversion = 1\n[[bodies]]\n'
                   'shape = {type = "box", half_extents = [1, -1, 1]}\n')
    assert main(["run", str(bad)]) == 2
    assert "bodies[0]: field shape.half_extents=[1, -1, 1]" in capsys.readouterr().err
