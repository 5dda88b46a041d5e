"""The joint benchmark's report builder (benchmarks/joints.py) on synthetic runs and a tiny real run."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import joints as bj  # noqa: E402


def _run(engine, solver, ms, drift, link=0.1, below=0, steps=20):
    r = bj.JointRun("chain50", engine, solver, {"iterations": 10}, 1 / 60, steps, link)
    r.ms = np.full(steps, float(ms))
    r.ms[-1] = 2.0 * ms                                   # a slow last step: max != mean
    r.drift = np.linspace(0.0, drift, steps)
    r.mean_drift = 0.5 * r.drift
    r.below = np.zeros(steps)
    r.below[-1] = below
    r.final_errors = np.array([0.25 * drift, drift])
    if solver is None:
        r.notes = ["hinge = two ball constraints"]
    return r


def _meta(**kw):
    meta = {"date": "2025-01-01 00:00:00", "machine": "x86_64", "cores": 2, "cpu": "test-cpu",
            "loadavg": "0 0 0", "other_cores": 0.0, "busy": False, "python": "3.11", "numpy": np.__version__,
            "numba": "0", "numba_threads": 1, "git": "abc", "command": "python benchmarks/joints.py", "quick": True,
            "solvers": ["pgs", "shock"], "peers": ["PyBulletPeer"], "warmup": "pgs 0.1 s", "wall_s": 1.0}
    meta.update(kw)
    return meta


def _info(name, link=0.1):
    return {"description": f"{name} test", "bodies": 3, "joints": 2, "joint_kinds": "2 ball", "steps": 20,
            "dt": 1 / 60, "settings": {"iterations": 10}, "params": {}, "link_length": link}


def _table(md: str, scene: str) -> list[list[str]]:
    """The rows (cells) of the markdown table of section ``## scene``."""
    sec = md.split(f"\n## {scene}\n", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in sec.splitlines() if ln.startswith("|")]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    return rows[2:]                                        # skip header and separator


def test_report_has_a_row_per_engine_and_consistent_ratios(tmp_path):
    runs = {"chain50": [_run("tumble (pgs)", "pgs", 4.0, 0.002), _run("tumble (shock)", "shock", 10.0, 0.001),
                        _run("pybullet 3.2.7", None, 1.0, 0.05, below=2), _run("mujoco 3.3.7 (PGS)", None, 0.8, 0.04)],
            "ragdolls": [_run("tumble (pgs)", "pgs", 8.0, 0.01, link=None),
                         bj.JointRun("ragdolls", "mujoco 3.3.7 (PGS)", None, {}, 1 / 60, 20, error="unsupported: x")]}
    for r in runs["ragdolls"]:
        r.scene = "ragdolls"
    payload = bj.write_report(tmp_path, "test-tag", _meta(), {"chain50": _info("chain50"),
                                                                "ragdolls": _info("ragdolls", None)}, runs)
    md = (tmp_path / "joints.md").read_text()
    assert (tmp_path / "joints.png").stat().st_size > 1000
    rows = _table(md, "chain50")
    assert [r[0] for r in rows] == [r.engine for r in runs["chain50"]]
    h = bj.HEADERS
    col = {name: h.index(name) for name in h}
    ref = float(rows[0][col["ms/step"]])
    for r in rows:
        ratio = float(r[col[f"vs {bj.REFERENCE}"]].rstrip("x"))
        assert ratio == pytest.approx(float(r[col["ms/step"]]) / ref, rel=2e-3)
    assert rows[0][col[f"vs {bj.REFERENCE}"]] == "1x"
    # drift columns: mm and relative to the 0.1 m link; the slow last step shows in max ms
    pyb = rows[2]
    assert float(pyb[col["max drift [mm]"]]) == pytest.approx(50.0)
    assert float(pyb[col["max drift / link"]]) == pytest.approx(0.5)
    assert float(pyb[col["final drift [mm]"]]) == pytest.approx(50.0)
    assert float(pyb[col["mean final drift [mm]"]]) == pytest.approx(31.25, abs=0.06)   # 3 digits
    assert float(pyb[col["max ms"]]) == pytest.approx(2.0)
    assert pyb[col["centre below ground (max / end)"]] == "2 / 2"
    first = col[f"drift > {1000 * bj.DRIFT_THRESHOLD:g} mm from [s]"]
    assert float(pyb[first]) == pytest.approx(5 / 60, rel=1e-2)   # 0.05 * 4 / 19 < 0.01 < 0.05 * 5 / 19
    assert rows[1][first] == "never"
    # a scene without a link length and a failed engine
    rag = _table(md, "ragdolls")
    assert [r[0] for r in rag] == ["tumble (pgs)", "mujoco 3.3.7 (PGS)"]
    assert rag[0][col["max drift / link"]] == "-" and rag[1][1].startswith("failed: unsupported")
    # interpretation header and peer notes
    assert "## Settings and approximations" in md and "Hinge limits are not modelled" in md
    assert "- pybullet 3.2.7: hinge = two ball constraints" in md
    assert re.search(r"chain50\*\*: max joint drift \(smallest first\): tumble \(shock\) 1 mm", md)
    data = json.loads((tmp_path / "joints.json").read_text())
    assert data["chain50"]["runs"][0]["ms_mean"] == pytest.approx(payload["chain50"]["runs"][0]["ms_mean"])
    assert len(data["chain50"]["series"]["tumble (pgs)"]["drift_mm"]) == 20
    assert data["ragdolls"]["runs"][1]["error"] == "unsupported: x"


def test_ground_check_counts_bodies_below_the_plane():
    from tumble.scenes import SceneSpec
    from tumble.shapes import Plane, Sphere

    s = SceneSpec("g")
    s.add(Plane(), fixed=True)
    s.add(Sphere(0.1), (0.0, 0.0, 1.0))
    s.add(Sphere(0.1), (1.0, 0.0, 1.0))
    g = bj.GroundCheck(s)
    assert g(np.array([[0, 0, 0], [0, 0, 0.05], [1, 0, 1.0]])) == 0
    assert g(np.array([[0, 0, 0], [0, 0, -0.05], [1, 0, -3.0]])) == 2


def test_tiny_quick_run():
    """A real (tiny) chain in tumble pgs and the installed peers: the runs complete and are reported."""
    import tumble.scenes as scenes

    spec = scenes.spec("chain50", links=3, seconds=0.1)
    runs = [bj.run_tumble(spec, "pgs", 6, warmup=1)]
    from benchmarks.peers import available

    runs += [bj.run_peer(P, spec, 6) for P in available()]
    for r in runs:
        assert r.error is None and len(r.ms) == 6 and r.final_errors.shape == (3,)
        s = r.summary()
        assert 0.0 <= s["drift_final"] <= s["drift_max"] < 0.05
        assert s["drift_max_rel"] == pytest.approx(s["drift_max"] / 0.1)
        assert s["below_ground_max"] == 0
