"""gauss2d steps, contacts and the stability LP: closed forms and bad input."""

import numpy as np
import pytest

from tumble.errors import SettingsError, TumbleError
from tumble.gauss2d import GaussSettings, QPSettings, build_bricks, simulate, stability
from tumble.gauss2d.contacts import rest_contacts, sidedness_triples
from tumble.gauss2d.model import box_corners
from tumble.gauss2d.scenes import ground, overhang

G = 9.81


@pytest.mark.parametrize("method", ["position", "acceleration"])
def test_free_fall_matches_the_discrete_closed_form(method):
    """From rest, p^{l+1} = 2 p^l - p^{l-1} - g dt^2 (Fig. 7 a-b without constraints) and
    v += -g dt, p += v dt (3.1) both give y_n = y_0 - g dt^2 n (n + 1) / 2."""
    s = build_bricks([[0.0, 5.0]], angles=[0.3])
    dt, n = 1e-2, 30
    traj = simulate(s, n, GaussSettings(dt=dt, method=method))
    drop = s.positions[:, 1] - traj.positions[-1, :, 1]
    np.testing.assert_allclose(drop, G * dt * dt * n * (n + 1) / 2, rtol=1e-12)
    np.testing.assert_allclose(traj.positions[-1, :, 0], s.positions[:, 0], atol=1e-12)


@pytest.mark.parametrize("layout,bars,tol", [("corners4", "remove", 1e-9), ("nine", "remove", 1e-9),
                                             ("nine", "penalty_redundant", 1e-9), ("corners4", "penalty", 1e-5)])
def test_brick_on_ground_stays_at_rest(layout, bars, tol):
    """Hard bars: at rest to 1e-9 m. All bars as the §8.4 penalty (M = 100) make the bricks elastic:
    they settle by micrometres under the load and stay there."""
    s = build_bricks([[0.3, 0.25], [0.1, 0.75]], layout=layout, bars=bars, statics=[ground()])
    traj = simulate(s, 40, GaussSettings())
    assert np.abs(traj.positions - s.positions).max() < tol


def test_falling_brick_lands_and_stops_inelastically():
    """A brick dropped flat onto the ground stops in the step it lands (§7: totally inelastic) and does
    not penetrate."""
    s = build_bricks([[0.0, 0.35]], statics=[ground()])
    dt = 2e-3
    traj = simulate(s, 200, GaussSettings(dt=dt))
    y = traj.positions[:, :, 1]
    assert y.min() > -1e-9
    np.testing.assert_allclose(traj.positions[-1], traj.positions[-2], atol=1e-12)
    np.testing.assert_allclose(y[-1, :2], 0.0, atol=1e-9)


def test_overhanging_corner_is_not_constrained_against_the_lower_edge():
    """A brick overhanging the one below: its outer bottom corner projects beyond the lower top edge and
    must not get a line constraint there (it would forbid tipping); the lower brick's top corner under the
    upper bottom edge must."""
    s = build_bricks([[0.0, 0.25], [0.7, 0.75]], statics=[ground()])
    hulls = s.hulls(s.positions)
    tr = sidedness_triples(hulls, s.n_bodies, margin=0.1, tie_tol=1e-9)
    pairs = {(int(e), int(v) // 4, int(v) % 4) for e, v in zip(tr.edge_body, tr.vertex)}
    assert (0, 1, 0) in pairs  # upper bottom-left corner on the lower top edge
    assert (0, 1, 1) not in pairs  # upper bottom-right corner overhangs: no constraint
    assert (1, 0, 2) in pairs  # lower top-right corner under the upper bottom edge


def test_rest_contacts_of_aligned_bricks_are_vertical():
    """Stacked aligned bricks touch corner on corner at the ends of the common face: only the face
    contacts count, not the collinear side edges."""
    s = build_bricks([[0.0, 0.25], [0.0, 0.75]], statics=[ground()])
    tr = rest_contacts(s.hulls(s.positions), s.n_bodies, tol=1e-9)
    assert len(tr) > 0
    np.testing.assert_allclose(np.abs(tr.normal[:, 1]), 1.0)


@pytest.mark.parametrize("mu_factor,stable", [(0.0, False), (0.98, False), (1.02, True)])
def test_brick_on_incline_needs_friction_tan_theta(mu_factor, stable):
    """A brick on an incline of angle theta is stable iff mu >= tan(theta) (frictionless: never)."""
    theta = 0.3
    c, s_ = np.cos(theta), np.sin(theta)
    rot = np.array([[c, -s_], [s_, c]])
    slab = box_corners(rot @ [0.0, -0.5], 20.0, 1.0, theta)
    s = build_bricks([rot @ [0.0, 0.25]], angles=[theta], statics=[slab])
    report = stability(s, friction=mu_factor * np.tan(theta))
    assert report.stable == stable
    if stable:
        np.testing.assert_allclose(report.forces.sum(), G * np.cos(theta), rtol=1e-9)


def test_stable_stack_first_qp_is_at_rest():
    report = stability(overhang(4, 0.0))
    assert report.stable and not report.moving.any() and not report.separating.any()
    np.testing.assert_allclose(report.acceleration, 0.0, atol=1e-9)


@pytest.mark.parametrize("kwargs,field", [(dict(dt=0.0), "dt"), (dict(method="euler"), "method"),
                                          (dict(gravity=np.nan), "gravity"),
                                          (dict(contact_margin=-1.0), "contact_margin"),
                                          (dict(curvature_factor=3.0), "curvature_factor")])
def test_bad_settings_name_the_field(kwargs, field):
    with pytest.raises(SettingsError, match=field):
        GaussSettings(**kwargs)


def test_bad_simulate_input():
    s = build_bricks([[0.0, 0.25]], statics=[ground()])
    with pytest.raises(SettingsError, match="steps"):
        simulate(s, -1)
    with pytest.raises(SettingsError, match="initial_velocity"):
        simulate(s, 1, initial_velocity=np.zeros((3, 2)))
    with pytest.raises(SettingsError, match="symmetrize"):
        simulate(s, 1, GaussSettings(symmetrize=True))
    with pytest.raises(SettingsError, match="friction"):
        stability(s, friction=-0.1)
    with pytest.raises(TumbleError, match="scale"):
        from tumble.gauss2d.qp import solve_qp

        solve_qp(None, None, None, None, None, None, QPSettings(), scale=0.0)


def test_symmetrize_keeps_exact_mirror_symmetry():
    s = build_bricks([[-0.6, 0.25], [0.6, 0.25], [0.0, 0.75]], statics=[ground()], mirror=True)
    traj = simulate(s, 20, GaussSettings(symmetrize=True))
    assert traj.mirror_error.max() == 0.0


def test_rotation_aware_length_rule_removes_the_second_order_length_error():
    """(L'') leaves a bar that turns by phi at L0 / cos(phi); asking for the projection
    sqrt(L0^2 - w^2) instead (w: predicted turn across the bar) keeps a smoothly tipping brick's bars
    at L0 to far better than that."""
    from tumble.gauss2d.scenes import critical_shift

    s = overhang(3, 2.0 * critical_shift())

    def length_error(rule):
        traj = simulate(s, 200, GaussSettings(length_rule=rule))
        e = traj.positions[:, s.bars[:, 0]] - traj.positions[:, s.bars[:, 1]]
        return np.abs(np.linalg.norm(e, axis=2) - s.rest_lengths).max()

    plain, rotation = length_error("L''"), length_error("L''+rotation")
    assert plain > 1e-7  # the brick does turn
    assert rotation < plain / 10
    with pytest.raises(SettingsError, match="length_rule"):
        GaussSettings(length_rule="exact")
