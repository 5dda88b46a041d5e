"""gauss2d model: point-mass layouts (paper 002 §8.1, Fig. 4, Fig. 10), rigidity, bad input."""

import numpy as np
import pytest

from tumble.errors import SettingsError, ShapeError, TumbleError
from tumble.gauss2d import brick_layout, build_bricks, minimally_rigid_subset
from tumble.gauss2d.model import rigidity_matrix


def _solid_moments(m, w, h, cx, cy):
    """Integrals of 1, x, y, x^2, xy, y^2 times the density m / (w h) over the rectangle centred at
    (cx, cy): closed forms m, m cx, m cy, m (cx^2 + w^2/12), m cx cy, m (cy^2 + h^2/12)."""
    return np.array([m, m * cx, m * cy, m * (cx * cx + w * w / 12), m * cx * cy, m * (cy * cy + h * h / 12)])


def _point_moments(points, masses):
    x, y = points[:, 0], points[:, 1]
    return np.array([masses.sum(), masses @ x, masses @ y, masses @ (x * x), masses @ (x * y), masses @ (y * y)])


@pytest.mark.parametrize("w,h,m,cx,cy", [(1.0, 0.5, 1.0, 0.0, 0.0), (0.3, 1.7, 2.5, 1.2, -0.7)])
def test_nine_point_brick_matches_all_six_moments(w, h, m, cx, cy):
    pts, masses, _ = brick_layout("nine", w, h, m)
    got = _point_moments(pts + [cx, cy], masses)
    np.testing.assert_allclose(got, _solid_moments(m, w, h, cx, cy), rtol=1e-14, atol=1e-14)


def test_corner_brick_has_mass_and_centre_but_not_second_moments():
    pts, masses, _ = brick_layout("corners4", 1.0, 0.5, 1.0)
    got = _point_moments(pts, masses)
    want = _solid_moments(1.0, 1.0, 0.5, 0.0, 0.0)
    np.testing.assert_allclose(got[:3], want[:3], atol=1e-15)
    assert got[3] == pytest.approx(1.0 / 4)  # m w^2 / 4, three times the solid m w^2 / 12
    assert got[3] != pytest.approx(want[3])


@pytest.mark.parametrize("layout,n_bars,n_points", [("corners4", 6, 4), ("nine", 16, 9)])
def test_layouts_are_rigid_with_exactly_one_redundant_bar(layout, n_bars, n_points):
    pts, _, bars = brick_layout(layout, 1.0, 0.5, 1.0)
    assert len(bars) == n_bars
    assert np.linalg.matrix_rank(rigidity_matrix(pts, bars)) == 2 * n_points - 3
    keep = minimally_rigid_subset(pts, bars)
    assert keep.sum() == 2 * n_points - 3 == n_bars - 1


def test_non_rigid_framework_is_rejected():
    pts = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    with pytest.raises(ShapeError, match="not rigid"):
        minimally_rigid_subset(pts, np.array([[0, 1], [1, 2], [2, 3], [3, 0]]))


@pytest.mark.parametrize("bars,hard,pen", [("remove", 5, 0), ("penalty", 0, 6), ("penalty_redundant", 5, 1)])
def test_bar_modes(bars, hard, pen):
    s = build_bricks([[0.0, 0.25]], bars=bars)
    assert s.bar_hard.sum() == hard and s.bar_penalty.sum() == pen
    np.testing.assert_allclose(s.rest_lengths[:4], [1.0, 0.5, 1.0, 0.5])


@pytest.mark.parametrize("kwargs,err,field", [
    (dict(centres=[[0.0, np.nan]]), ShapeError, "centres"),
    (dict(centres=[[0.0, 0.0]], width=-1.0), ShapeError, "width"),
    (dict(centres=[[0.0, 0.0]], mass=0.0), ShapeError, "mass"),
    (dict(centres=[[0.0, 0.0]], layout="hexagon"), SettingsError, "layout"),
    (dict(centres=[[0.0, 0.0]], bars="glue"), SettingsError, "bars"),
    (dict(centres=[[0.3, 0.0]], mirror=True), ShapeError, "mirror"),
    (dict(centres=np.zeros(3)), ShapeError, "centres"),
])
def test_bad_input_names_the_field(kwargs, err, field):
    centres = kwargs.pop("centres")
    with pytest.raises(err, match=field) as info:
        build_bricks(centres, **kwargs)
    assert isinstance(info.value, TumbleError)


def test_mirror_permutation_maps_points_to_their_mirror_images():
    s = build_bricks([[-1.0, 0.25], [1.0, 0.25], [0.0, 0.75]], layout="nine", mirror=True)
    mirrored = s.positions[s.mirror_points] * [-1.0, 1.0]
    np.testing.assert_array_equal(mirrored, s.positions)
