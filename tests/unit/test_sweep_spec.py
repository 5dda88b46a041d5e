"""Sweep specs (tumble.sweep.spec) and their expansion into runs: validation errors name the field and
value; run ids and seeds are deterministic. No cluster, no physics."""

import pytest

from tumble.errors import SceneError, SettingsError
from tumble.sweep import expand, spec

BASE = {"sweep": {"scene": "stack3_nocache", "seconds": 0.1}}


def mk(**sections):
    d = {"sweep": dict(BASE["sweep"])}
    d["sweep"].update(sections.pop("sweep", {}))
    d.update(sections)
    return spec.from_dict(d)


@pytest.mark.parametrize("data, match", [
    ({"sweep": {"seconds": 1}}, r"sweep\.scene"),
    ({"sweep": {"scene": "stack3_nocache", "solver": "pgs"}}, r"sweep\.solver=.*not a field"),
    ({"sweep": {"scene": "stack3_nocache"}, "params": {}}, r"field params=.*not a section"),
    ({"sweep": {"scene": "stack3_nocache", "solvers": ["pgs", "nope"]}}, r"sweep\.solvers='nope'"),
    ({"sweep": {"scene": "stack3_nocache", "dts": [0.01, -1]}}, r"sweep\.dts=-1"),
    ({"sweep": {"scene": "stack3_nocache", "dts": []}}, r"sweep\.dts=\[\]"),
    ({"sweep": {"scene": "stack3_nocache", "repeats": 0}}, r"sweep\.repeats=0"),
    ({"sweep": {"scene": "stack3_nocache", "seconds": float("nan")}}, r"sweep\.seconds=nan"),
    ({"sweep": {"scene": "stack3_nocache", "metrics": ["standing", "height"]}}, r"sweep\.metrics='height'"),
    ({"sweep": {"scene": "stack3_nocache"}, "grid": {"count": []}}, r"grid\.count=\[\]"),
    ({"sweep": {"scene": "stack3_nocache"}, "grid": {"colour": [1, 2]}}, r"grid\.colour=.*neither a parameter"),
    ({"sweep": {"scene": "stack3_nocache"}, "random": {"friction": [0.1, 0.9]}}, r"random\.samples=None"),
    ({"sweep": {"scene": "stack3_nocache"}, "random": {"samples": 3, "friction": [0.9, 0.1]}},
     r"random\.friction=\[0\.9, 0\.1\].*low < high"),
    ({"sweep": {"scene": "stack3_nocache"}, "jitter": {"gap": -0.1}}, r"jitter\.gap=-0\.1"),
    ({"sweep": {"scene": "stack3_nocache", "points": [1, 2]}}, r"sweep\.points"),
    ({"sweep": {"scene": "stack3_nocache"}, "fixed": {"count": [1]}}, r"fixed\.count=\[1\]"),
])
def test_bad_spec_raises_settings_error_naming_field(data, match):
    with pytest.raises(SettingsError, match=match):
        spec.from_dict(data)


def test_unknown_scene_and_missing_scene_file_raise_scene_error(tmp_path):
    with pytest.raises(SceneError, match=r"sweep\.scene='no_such_scene'"):
        spec.from_dict({"sweep": {"scene": "no_such_scene"}})
    with pytest.raises(SceneError, match=r"missing\.toml"):
        spec.from_dict({"sweep": {"scene": "missing.toml"}}, base=tmp_path)


def test_spec_file_errors(tmp_path):
    with pytest.raises(SettingsError, match="does not exist"):
        spec.load(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[sweep\nscene=")
    with pytest.raises(SettingsError, match="not valid TOML"):
        spec.load(bad)


def test_setting_must_exist_for_every_solver():
    # `iterations` is a setting of pgs; a parameter unknown to one of the solvers is named with it
    s = mk(sweep={"solvers": ["pgs", "shock"]}, grid={"iterations": [4, 8]})
    assert s.grid == {"iterations": [4, 8]}
    with pytest.raises(SettingsError, match=r"grid\.no_such_setting"):
        mk(grid={"no_such_setting": [1]})


def test_expansion_counts_ids_and_seeds_are_deterministic():
    d = dict(sweep={"solvers": ["pgs", "shock"], "dts": [0.01, 0.02], "repeats": 2, "seed": 7},
             grid={"friction": [0.2, 0.4, 0.6]}, jitter={"gap": 0.001})
    runs = expand.expand(mk(**d))
    assert len(runs) == 3 * 2 * 2 * 2
    assert len({r.run_id for r in runs}) == len(runs)
    again = expand.expand(mk(**d))
    assert [(r.run_id, r.seed, r.jitter) for r in runs] == [(r.run_id, r.seed, r.jitter) for r in again]
    # a repeat's seed and jitter are shared by every solver and dt (paired comparisons)
    by = {}
    for r in runs:
        by.setdefault((r.params["friction"], r.repeat), set()).add((r.seed, r.jitter["gap"]))
    assert all(len(v) == 1 for v in by.values())
    assert all(abs(r.jitter["gap"]) <= 0.001 for r in runs)
    other = expand.expand(mk(**{**d, "sweep": {**d["sweep"], "seed": 8}}))
    assert {r.run_id for r in other}.isdisjoint({r.run_id for r in runs})


def test_points_grid_random_product():
    s = mk(sweep={"points": [{"count": 2}, {"count": 3}]}, grid={"friction": [0.3, 0.5]},
           random={"samples": 4, "restitution": [0.0, 0.5]})
    pts = expand.points(s)
    assert len(pts) == 2 * 2 * 4
    assert all(0.0 <= p["restitution"] <= 0.5 for p in pts)
    assert s.varied() == ["count", "friction", "restitution"]
    assert expand.points(s) == pts


def test_import_tumble_does_not_import_dask():
    import subprocess
    import sys

    code = ("import sys, tumble, tumble.sweep; assert callable(tumble.sweep); "
            "assert 'distributed' not in sys.modules and 'matplotlib' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)
