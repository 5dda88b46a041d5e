"""tumble.sweep end to end on a 2-worker local Dask cluster: tiny scenes (stack3_nocache, mass_ratio) for
0.1 s. One cluster serves the module (start-up ~seconds); the CLI test starts its own."""

import math

import pytest

pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

import tumble as tb  # noqa: E402
from tumble.sweep import table  # noqa: E402

TINY = {"sweep": {"scene": "stack3_nocache", "seconds": 0.1, "solvers": ["pgs", "shock"],
                  "metrics": ["standing", "max_penetration", "energy"]},
        "grid": {"iterations": [4, 8]}}


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_small_sweep_end_to_end(client, tmp_path):
    def heaviest_z(world, result):          # a user metric, run on the worker after the run
        return float(world.positions[:, 2].max())

    res = tb.sweep(TINY, tmp_path, client=client, metrics=[heaviest_z], progress=False)
    assert res.ran == 4 and res.skipped == 0 and res.errors == 0 and len(res.rows) == 4
    rows = table.read(tmp_path)
    assert {r["solver"] for r in rows} == {"pgs", "shock"}
    assert {r["param.iterations"] for r in rows} == {4.0, 8.0}
    for r in rows:
        assert r["error"] is None and r["steps"] == round(0.1 / r["dt"]) and r["wall_s"] > 0
        assert r["metric.standing"] == 1.0 and math.isfinite(r["metric.energy"]) and r["metric.heaviest_z"] > 0
    names = {p.name for p in res.files}
    assert {"results.parquet", "summary.csv", "summary.md", "standing_vs_iterations.png"} <= names
    assert len(set(res.warm_up_s)) == 2            # every worker warmed up once


def test_bad_run_is_recorded_and_the_rest_complete(client):
    spec = {"sweep": {"scene": "mass_ratio", "seconds": 0.1, "metrics": ["standing"],
                      "points": [{"ratio": 0.5}, {"ratio": -1.0}, {"ratio": 1.0}]}}
    res = tb.sweep(spec, client=client, progress=False)
    errs = {r["param.ratio"]: r["error"] for r in res.rows}
    assert errs[0.5] is None and errs[1.0] is None
    assert errs[-1.0].startswith("SceneError") and "ratio=-1.0" in errs[-1.0]
    assert res.errors == 1


def test_timeout_is_recorded(client):
    spec = {"sweep": {"scene": "stack3_nocache", "seconds": 5.0, "timeout": 0.05, "metrics": ["standing"]}}
    (row,) = tb.sweep(spec, client=client, progress=False).rows
    assert row["error"].startswith("RunTimeout") and 0 < row["steps"] < 300


def test_resume_skips_finished_runs_and_reruns_missing(client, tmp_path):
    first = tb.sweep(TINY, tmp_path, client=client, progress=False, plots=False)
    again = tb.sweep(TINY, tmp_path, client=client, progress=False, plots=False)
    assert again.ran == 0 and again.skipped == 4
    assert [r["run_id"] for r in again.rows] == [r["run_id"] for r in first.rows]
    rows = table.read(tmp_path)
    table.write(tmp_path, rows[1:])                 # one run lost (e.g. the driver was killed)
    third = tb.sweep(TINY, tmp_path, client=client, progress=False, plots=False)
    assert third.ran == 1 and third.skipped == 3 and len(table.read(tmp_path)) == 4
    subset = {**TINY, "sweep": {**TINY["sweep"], "solvers": ["pgs"]}}     # a narrower spec, same folder
    fourth = tb.sweep(subset, tmp_path, client=client, progress=False, plots=False)
    assert fourth.ran == 0 and len(fourth.rows) == 2 and len(table.read(tmp_path)) == 4   # nothing deleted


def test_identical_parameters_give_identical_metrics(client):
    spec = {"sweep": {"scene": "stack3_nocache", "seconds": 0.1, "repeats": 2, "solvers": ["pgs"],
                      "metrics": ["max_penetration", "energy", "max_drift"]}}
    def state_hash(world, result):          # bit-identical final states, not just equal metrics
        return world.state_hash()

    a = tb.sweep(spec, client=client, progress=False, metrics=[state_hash]).rows
    b = tb.sweep(spec, client=client, progress=False, metrics=[state_hash]).rows
    assert a[0]["metric.state_hash"] == b[1]["metric.state_hash"]
    metrics = lambda r: {k: v for k, v in r.items() if k.startswith("metric.")}
    assert metrics(a[0]) == metrics(a[1]) == metrics(b[0]) == metrics(b[1])   # repeats without jitter too
    assert [r["run_id"] for r in a] == [r["run_id"] for r in b]


def test_cli_sweep_two_workers(tmp_path, capsys):
    from tumble.cli import main

    spec = tmp_path / "tiny.toml"
    spec.write_text('[sweep]\nscene = "stack3_nocache"\nseconds = 0.05\nmetrics = ["standing"]\n'
                    '[grid]\nfriction = [0.3, 0.6]\n')
    assert main(["sweep", str(spec), "--workers", "2", "-o", str(tmp_path / "out"), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "2 runs (2 run now, 0 resumed), 0 with errors" in out
    assert len(table.read(tmp_path / "out")) == 2
    assert main(["sweep", str(tmp_path / "nope.toml"), "-o", str(tmp_path / "o2")]) == 2


def test_killed_worker_run_is_retried(client, tmp_path):
    marker = tmp_path / "killed-once"

    def die_once(world, result):            # kills its worker process the first time only
        import os

        if not marker.exists():
            marker.write_text("x")
            os._exit(1)
        return 1.0

    spec = {"sweep": {"scene": "stack3_nocache", "seconds": 0.05, "solvers": ["pgs"], "metrics": ["standing"]},
            "grid": {"iterations": [4, 8]}}
    res = tb.sweep(spec, client=client, metrics=[die_once], progress=False)
    assert marker.exists() and res.errors == 0
    assert [r["metric.die_once"] for r in res.rows] == [1.0, 1.0]


def test_scene_file_sweep(client, tmp_path):
    from tumble import scenes

    scenes.export("stack3_nocache", tmp_path / "stack.toml")
    spec = tmp_path / "sweep.toml"
    spec.write_text('[sweep]\nscene = "stack.toml"\nseconds = 0.05\nmetrics = ["standing", "bodies"]\n'
                    '[grid]\nfriction = [0.2, 0.8]\n')
    res = tb.sweep(spec, client=client, progress=False)
    assert res.errors == 0 and [r["param.friction"] for r in res.rows] == [0.2, 0.8]
    assert all(r["metric.bodies"] == 4.0 and r["scene"] == "stack.toml" for r in res.rows)


def test_cli_sweep_connects_to_existing_cluster(client, tmp_path, capsys):
    from tumble.cli import main

    spec = tmp_path / "tiny.toml"
    spec.write_text('[sweep]\nscene = "stack3_nocache"\nseconds = 0.05\nmetrics = ["standing"]\n'
                    '[grid]\niterations = [3, 5, 7]\n')
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--address", client.scheduler.address, "-o", str(out), "--no-plots"]) == 0
    assert "3 runs (3 run now, 0 resumed), 0 with errors" in capsys.readouterr().out
    assert client.status == "running" and client.scheduler_info()["workers"]   # the cluster is left running
    assert main(["sweep", str(spec), "--address", client.scheduler.address, "-o", str(out), "--no-plots"]) == 0
    assert "3 runs (0 run now, 3 resumed)" in capsys.readouterr().out
