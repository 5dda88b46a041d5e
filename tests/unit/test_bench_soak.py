"""benchmarks/soak.py: a soak cut short and resumed from its checkpoint is the uninterrupted soak."""

import numpy as np
import pytest
from benchmarks import soak as bs


@pytest.mark.parametrize("solver", ["pgs"])
def test_a_resumed_soak_matches_the_uninterrupted_one(tmp_path, solver):
    whole = bs.soak(solver, 40, 2)
    part = bs.soak(solver, 40, 2, checkpoint=tmp_path, stop_after=20)
    assert part["steps"] == 20 and part["error"].startswith("unfinished")
    assert (tmp_path / f"{solver}.pkl").exists()
    rest = bs.soak(solver, 40, 2, checkpoint=tmp_path)
    assert rest["steps"] == 40 and rest["error"] == "" and rest["segments"] == 2
    assert not (tmp_path / f"{solver}.pkl").exists()        # a finished soak leaves no checkpoint
    # restore_state is exact: every sampled energy equals the uninterrupted run's, bit for bit
    assert [x["energy_j"] for x in rest["samples"]] == [x["energy_j"] for x in whole["samples"]]
    assert [x["step"] for x in rest["samples"]] == [x["step"] for x in whole["samples"]]


def test_memory_growth_is_measured_within_one_process_after_its_warm_up():
    """Each process (segment) is judged from its first sample 10 % of the planned steps after its start: the
    warm-up's growth (kernels loaded, stores grown to the pile's high-water mark) is not a leak, a steady
    growth after it is."""
    def rows(series):
        return [{"step": 10 * i, "rss_mb": rss, "energy_j": 1.0, "kinetic_j": 0.0, "max_penetration_m": 0.0,
                 "segment": seg, "wall_s": float(i)} for i, (rss, seg) in enumerate(series)]

    # planned 100 steps: a 10-step warm-up. Segment 0 grows 200 MB in its warm-up and then stays; segment 1
    # (a resumed process, starting lower) grows in its warm-up and then leaks 20 MB per sample
    leak = rows([(100, 0), (300, 0), (300, 0), (300, 0), (300, 0), (50, 1), (300, 1), (320, 1), (340, 1),
                 (360, 1), (380, 1)])
    r = bs.summary("pgs", leak, 0.01, 1.0, 0.0, 1.0, "", 100)
    assert r["rss_growth_mb"] == pytest.approx(80.0) and not r["memory_bounded"] and r["segments"] == 2
    assert (r["rss_first_mb"], r["rss_last_mb"]) == (300.0, 380.0)
    # the same warm-ups without the leak: bounded, whatever the drop between the processes
    flat = rows([(100, 0), (300, 0), (300, 0), (300, 0), (300, 0), (50, 1), (300, 1), (300, 1), (301, 1),
                 (301, 1), (302, 1)])
    r = bs.summary("pgs", flat, 0.01, 1.0, 0.0, 1.0, "", 100)
    assert r["rss_growth_mb"] == pytest.approx(2.0) and r["memory_bounded"]


def test_rest_is_judged_on_the_spheres_in_the_box():
    """A sphere that rolled over a wall (no rolling resistance: it rolls on for ever) is counted, not judged."""
    w = bs.tb.scenes.build("pile1000", solver="pgs", count=20)
    ball = int(np.flatnonzero(~np.asarray(w.fixed))[0])
    w.set_position(ball, (5.0, 0.0, 0.1))
    inside = bs.inside_box(w)
    assert not inside[ball] and inside.sum() == 19
    w.set_linear_velocity(ball, (1.0, 0.0, 0.0))
    assert bs.kinetic_energy_of(w, inside) == 0.0 and w.kinetic_energy() > 0.0
    assert bs.kinetic_energy_of(w, ~np.asarray(w.fixed)) == pytest.approx(w.kinetic_energy())
