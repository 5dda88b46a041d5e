"""The pure parts of the stacking report runner (benchmarks/stacking.py) and its snapshot renderer
(benchmarks/snapshots.py): least-squares fit, metric columns, the report, snapshot frames, rendering
geometry (the shared table and JSON helpers: test_bench_report.py)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

pytest.importorskip("matplotlib")

from benchmarks import snapshots, stacking  # noqa: E402

from tumble.shapes import Box, Plane, Sphere  # noqa: E402


# ------------------------------------------------------------------------------------------------ fit
def test_linear_fit_recovers_known_line_and_matches_polyfit():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 5000, 400)
    y = 0.0025 * x + 1.7 + rng.normal(0.0, 0.4, x.size)
    f = stacking.linear_fit(x, y)
    slope, intercept = np.polyfit(x, y, 1)
    assert f["slope"] == pytest.approx(slope, rel=1e-10)
    assert f["intercept"] == pytest.approx(intercept, rel=1e-9)
    assert f["slope"] == pytest.approx(0.0025, rel=0.02)
    r2 = 1.0 - np.sum((y - np.polyval([slope, intercept], x)) ** 2) / np.sum((y - y.mean()) ** 2)
    assert f["r2"] == pytest.approx(r2, rel=1e-10)
    assert 0.9 < f["r2"] < 1.0
    assert f["n"] == 400


def test_linear_fit_exact_line_and_degenerate_inputs():
    x = np.arange(10.0)
    f = stacking.linear_fit(x, 3.0 * x - 2.0)
    assert f["slope"] == pytest.approx(3.0) and f["intercept"] == pytest.approx(-2.0) and f["r2"] == pytest.approx(1.0)
    # constant y: exact fit with zero slope
    g = stacking.linear_fit(x, np.full(10, 4.0))
    assert g["slope"] == pytest.approx(0.0) and g["r2"] == 1.0
    # no spread in x, too few points, non-finite points dropped
    assert math.isnan(stacking.linear_fit(np.full(5, 2.0), np.arange(5.0))["slope"])
    assert math.isnan(stacking.linear_fit([1.0], [2.0])["r2"])
    h = stacking.linear_fit([0.0, 1.0, np.nan, 2.0], [1.0, 3.0, 7.0, np.inf])
    assert h["n"] == 2 and h["slope"] == pytest.approx(2.0)


def test_convergence_factor_of_a_geometric_merit_and_its_floor():
    h = 2.0 * 0.9 ** np.arange(100)
    c = stacking.convergence(h)
    assert c["factor_per_sweep"] == pytest.approx(0.9, rel=1e-9) and c["r2_log"] == pytest.approx(1.0)
    assert c["floor_sweep"] is None and c["sweeps"] == 100
    # converged to round-off after sweep 30: the line is fitted above the floor only
    g = np.concatenate([2.0 * 0.5 ** np.arange(40), np.full(60, 1e-29)])
    d = stacking.convergence(g)
    assert d["floor_sweep"] == 41 and d["factor_per_sweep"] == pytest.approx(0.5, rel=1e-9)


# ------------------------------------------------------------------------------------------------ markdown
def test_extra_metric_columns_carry_units():
    assert stacking.extra_header("pre_spawn_max_drift") == "pre_spawn_max_drift [mm]"
    assert stacking.extra_cell("pre_spawn_max_penetration", 0.0021) == "2.1"
    assert stacking.extra_header("projectile_final_speed") == "projectile_final_speed [m/s]"
    assert stacking.extra_cell("displaced", 3) == "3"


def test_write_report_writes_markdown_and_json(tmp_path):
    meta = {"date": "2025-01-01 00:00:00", "machine": "x86_64", "cores": 2, "cpu": "test-cpu", "loadavg": "0 0 0",
            "other_cores": 0.01, "busy": False, "python": "3.11", "numpy": "2", "numba": "0.6", "git": "abc",
            "command": "python benchmarks/stacking.py --quick", "quick": True, "experiments": ["fig18"],
            "solvers": ["pgs"], "peers": [], "scenes": ["wall200"], "warmup": "pgs 0.1 s", "wall_s": 12.0}
    stacking.write_report(tmp_path, "tag", meta, [["## 4. Fig. 18", "", "body"]],
                          ["- a finding -> PASS"], {"fig18": {"fit": {"slope": np.float64(2.0)}}})
    md = (tmp_path / "stacking.md").read_text()
    assert md.startswith("# tumble stacking experiments")
    for s in ("test-cpu", "2 cores", "2025-01-01", "quick mode", "## Findings", "- a finding -> PASS", "Interpretation",
              "## 4. Fig. 18"):
        assert s in md
    data = json.loads((tmp_path / "stacking.json").read_text())
    assert data["fig18"]["fit"]["slope"] == 2.0 and data["meta"]["cores"] == 2


# ------------------------------------------------------------------------------------------------ plan
def test_snapshot_steps():
    assert stacking.snapshot_steps(300, 0.01, [], 4) == [0, 100, 200, 300]
    # spawns at 9.68 s and 13 s of a 16 s run: start, before the first spawn, 1 s after each, end
    assert stacking.snapshot_steps(1600, 0.01, [0.0, 9.68, 13.0], 4) == [0, 968, 1068, 1400, 1600]
    assert all(0 <= k <= 40 for k in stacking.snapshot_steps(40, 0.01, [0.1, 0.25], 3))


# ------------------------------------------------------------------------------------------------ snapshots
def _nonwhite_bbox_centre(img):
    ys, xs = np.nonzero(img.min(axis=2) < 245)
    assert len(xs) > 50, "nothing drawn"
    return 0.5 * (xs.min() + xs.max()), 0.5 * (ys.min() + ys.max()), (xs.min(), xs.max(), ys.min(), ys.max())


@pytest.mark.parametrize("centre", [(0.0, 0.0, 0.0), (0.6, -0.3, 0.4), (-0.5, 0.5, -0.6)])
def test_single_box_lands_where_its_centre_projects(centre):
    q = np.array([0.9, 0.1, 0.3, 0.2])
    q /= np.linalg.norm(q)
    bounds = (np.array([-1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.0]))
    fig, ax = snapshots.render_state([Box((0.3, 0.2, 0.1))], np.array([centre]), q[None], bounds=bounds,
                                     size=(400, 300), edges=False)
    img = snapshots.figure_pixels(fig)
    assert img.shape == (300, 400, 3)
    cx, cy, _ = _nonwhite_bbox_centre(img)
    px = snapshots.project_to_pixels(fig, ax, [centre])[0]
    # orthographic view: the silhouette of a box is point-symmetric about the projected centre
    assert abs(cx - px[0]) <= 2.0 and abs(cy - px[1]) <= 2.0


def test_box_moves_right_and_up_in_the_image_as_expected():
    bounds = (np.array([-1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.0]))
    q = np.array([[1.0, 0.0, 0.0, 0.0]])
    shapes = [Box((0.1, 0.1, 0.1))]
    centres = {}
    for name, p in {"origin": (0, 0, 0), "up": (0, 0, 0.6)}.items():
        fig, _ = snapshots.render_state(shapes, np.array([p], dtype=float), q, bounds=bounds, edges=False)
        centres[name] = _nonwhite_bbox_centre(snapshots.figure_pixels(fig))
    # +z is up in the image (rows grow downwards), with no sideways shift
    assert centres["up"][1] < centres["origin"][1] - 50
    assert abs(centres["up"][0] - centres["origin"][0]) <= 2.0


def test_sphere_is_a_disc_of_its_projected_radius():
    bounds = (np.array([-1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.0]))
    r = 0.3
    fig, ax = snapshots.render_state([Sphere(r)], np.array([[0.2, 0.1, -0.1]]), np.array([[1.0, 0, 0, 0]]),
                                     bounds=bounds, edges=False)
    cx, cy, (x0, x1, y0, y1) = _nonwhite_bbox_centre(snapshots.figure_pixels(fig))
    c = snapshots.project_to_pixels(fig, ax, [[0.2, 0.1, -0.1]])[0]
    assert abs(cx - c[0]) <= 2.0 and abs(cy - c[1]) <= 2.0
    # the image of a world segment of length r perpendicular to the view direction
    v = snapshots.view_direction()
    t = np.cross(v, [0.0, 0.0, 1.0])
    t /= np.linalg.norm(t)
    p = snapshots.project_to_pixels(fig, ax, [[0.2, 0.1, -0.1], np.array([0.2, 0.1, -0.1]) + r * t])
    r_px = float(np.linalg.norm(p[1] - p[0]))
    assert 0.5 * (x1 - x0) == pytest.approx(r_px, abs=2.5)      # 12-gon: within a pixel or two


def test_hidden_bodies_and_planes():
    bounds = (np.array([-1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.0]))
    shapes = [Plane(), Box((0.2, 0.2, 0.2))]
    pos = np.array([[0.0, 0.0, -1.0], [0.0, 0.0, 0.0]])
    quat = np.array([[1.0, 0, 0, 0], [1.0, 0, 0, 0]])
    polys, owner, shade = snapshots.body_polygons(shapes, pos, quat)
    assert len(polys) == 6 and set(owner.tolist()) == {1} and np.all((shade > 0.4) & (shade <= 1.0))
    assert len(snapshots.body_polygons(shapes, pos, quat, hidden=np.array([False, True]))[0]) == 0
    # fewer state rows than shapes (bodies spawned later): only the present ones are drawn
    assert len(snapshots.body_polygons(shapes + [Sphere(0.1)], pos, quat)[0]) == 6
    fig, _ = snapshots.render_state(shapes, pos, quat, bounds=bounds, fixed=[True, False],
                                    hidden=np.array([False, True]))
    img = snapshots.figure_pixels(fig)
    assert (img.min(axis=2) < 245).any()                       # the ground patch


def test_side_by_side_writes_a_grid(tmp_path):
    shapes = [Plane(), Box((0.5, 0.5, 0.5)), Sphere(0.25)]
    pos = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.5], [0.0, 0.0, 1.25]])
    quat = np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))
    moved = pos + [0.0, 0.3, 0.0]
    rows = [("engine a", [(pos, quat), (moved, quat)]), ("engine b (failed)", [(pos, quat), None])]
    out = snapshots.side_by_side(tmp_path / "grid.png", shapes, [True, False, False], rows, ["t = 0 s", "t = 1 s"],
                                 title="grid", panel_inches=2.0, dpi=60)
    import matplotlib.image

    img = matplotlib.image.imread(out)
    assert img.shape[0] == pytest.approx(60 * (2 * 2.0 + 0.7), abs=2)
    assert img.shape[1] == pytest.approx(60 * (2 * 2.0 + 1.2), abs=2)


def test_scene_bounds_cover_the_first_state_and_limit_outliers():
    shapes = [Box((0.5, 0.5, 0.5))] * 2
    quat = np.tile([1.0, 0, 0, 0], (2, 1))
    first = np.array([[0.0, 0.0, 0.5], [0.0, 0.0, 1.5]])
    flying = np.array([[0.0, 0.0, 0.5], [100.0, 0.0, 1.5]])
    lo, hi = snapshots.scene_bounds(shapes, [(first, quat), (flying, quat)], margin=0.0)
    assert np.all(lo <= [-0.5, -0.5, 0.0]) and np.all(hi >= [0.5, 0.5, 2.0])
    assert hi[0] <= 0.5 + 1.0 + 1e-9                            # the runaway body grows x by one extent at most
