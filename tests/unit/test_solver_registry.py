"""Solvers are plug-ins (issue 14): every part of tumble asks the registry, and a solver defined
outside the package (tests/plugins/ballistic) joins World, scenes, scene files, recordings and the CLI
through ``registry.register`` alone."""

import dataclasses
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tumble as tb
from tumble._core.solvers import registry
from tumble._core.solvers.protocol import Capabilities, Solver

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ballistic():
    registry.register("ballistic", "tests.plugins.ballistic")
    yield "ballistic"
    registry.SOLVERS.pop("ballistic", None)


@pytest.mark.parametrize("name", registry.names())
def test_every_registered_solver_declares_the_protocol(name):
    cls = registry.solver_class(name)
    assert issubclass(cls, Solver) and cls.name == name and cls.description
    assert isinstance(cls.capabilities, Capabilities)
    fields = cls.settings_class.field_names()
    # settings by composition: no solver carries a field of a part it does not use
    if not cls.capabilities.joints:
        assert not [f for f in fields if f.startswith("joint_")]
    w = tb.World(solver=name)
    assert w.capabilities == cls.capabilities
    assert type(w.settings) is cls.settings_class


def test_unknown_solver_names_the_known_ones():
    with pytest.raises(tb.SettingsError, match="known solvers: .*'impulse'.*'pgs'.*'shock'"):
        tb.World(solver="gauss_seidel")


def test_ignored_legacy_settings_still_work_with_a_deprecation():
    """ImpulseSettings used to inherit the PGS fields and ignore them: the keywords still work."""
    with pytest.warns(DeprecationWarning, match="'iterations' is not used"):
        w = tb.World(solver="impulse", iterations=20)
    assert "iterations" not in tb.ImpulseSettings.field_names()
    with pytest.warns(DeprecationWarning):
        assert w.settings.iterations == 10          # reads its old default
    with pytest.warns(DeprecationWarning, match="relax_iterations"):
        tb.World(solver="shock", relax_iterations=0)


def test_a_rejected_settings_update_changes_nothing():
    w = tb.World(solver="pgs")
    with pytest.raises(tb.SettingsError, match="iterations=-1"):
        w.settings.update(baumgarte=0.5, iterations=-1)
    assert w.settings.iterations == 10 and w.settings.baumgarte == 0.2
    w.step(1 / 60)


def test_a_plugin_solver_runs_through_world_scenes_files_recordings(ballistic, tmp_path):
    w = tb.scenes.build("stack10", solver=ballistic)      # the scene's pgs settings do not apply
    assert type(w.settings).__name__ == "BallisticSettings"
    z0 = w.positions[:, 2].copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w.run(0.5, record=str(tmp_path / "b.npz"), record_every=5)
    # free fall, contacts ignored: every dynamic body dropped by the semi-implicit Euler distance
    n = w.step_count
    dt = w.default_dt
    drop = -w.gravity[2] * dt * dt * n * (n + 1) / 2
    dyn = ~w.fixed
    np.testing.assert_allclose(z0[dyn] - w.positions[dyn, 2], drop, rtol=1e-9)
    assert w.counters["contacts"] > 0                      # detection ran
    rec = tb.Recording.load(tmp_path / "b.npz")
    assert rec.solver == ballistic
    with pytest.raises(tb.JointError, match="solver 'ballistic' has no joints"):
        w.add_joint(tb.Ball(None, 1, anchor=(0, 0, 5)))
    path = tb.scenes.export("stack10", tmp_path / "s.toml")
    text = Path(path).read_text().replace('[scene]', f'[scene]\nsolver = "{ballistic}"', 1)
    Path(path).write_text(text)
    spec = tb.load_scene(path)
    assert spec.build(solver=spec.solver).settings.__class__.__name__ == "BallisticSettings"
    names = [s["name"] for s in tb.solvers()]
    assert ballistic in names and {"pgs", "shock", "impulse"} <= set(names)


def test_cli_lists_solvers_and_runs_each():
    out = subprocess.run([sys.executable, "-m", "tumble.cli", "solvers"], capture_output=True, text=True, cwd=ROOT,
                         check=True).stdout
    for name in ("pgs", "shock", "impulse"):
        assert name in out
    res = subprocess.run([sys.executable, "-m", "tumble.cli", "run", "stack10", "--solver", "impulse", "--seconds",
                          "0.05", "--json"], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert json.loads(res)["solver"] == "impulse"


def test_solvers_report_their_capabilities():
    info = {s["name"]: s for s in tb.solvers()}
    assert info["pgs"]["joints"] and info["shock"]["joints"] and not info["impulse"]["joints"]
    assert info["impulse"]["sleeping"] and not info["pgs"]["sleeping"]
    for s in info.values():
        assert {f.name for f in dataclasses.fields(Capabilities)} <= set(s)
    # the overlap release bound (issue 17): the correction speed limit of the velocity-level solvers,
    # 0 for the ones that correct positions only
    assert info["pgs"]["release_speed"] == tb.PGSSettings().max_correction_speed
    assert info["shock"]["release_speed"] == info["impulse"]["release_speed"] == 0.0
