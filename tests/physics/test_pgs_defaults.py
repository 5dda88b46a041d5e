"""Issue 18 (pgs and joints): what the pgs defaults must hold, each test failing under the earlier
defaults (``PGSSettings.preset("legacy")``), which the same tests run as the contrast.

Oracles: a resting box's four contact points carry m g dt / 4 each (statics, symmetry); a column of
boxes placed exactly touching stays where it was put (the exact answer is rest); a chain's links
keep their length (joint constraint); the distance match of the warm start pairs each new point
with the nearest old point of its pair (by construction).
"""

import numpy as np
import pytest

import tumble as tb
from tumble._core.contact.cache import match_cache

DT = 1.0 / 60.0
G = 9.81


def column(count: int, settings: dict) -> tuple[tb.World, list[int]]:
    """Unit boxes (half extents 0.5 m, 1000 kg/m^3, mu 0.5) stacked exactly touching on a plane."""
    w = tb.World(gravity=(0.0, 0.0, -G), solver="pgs", **settings)
    mat = tb.Material(density=1000.0, friction=0.5, restitution=0.0)
    w.add_body(tb.Plane(), fixed=True, material=mat)
    ids = [w.add_body(tb.Box(half_extents=(0.5, 0.5, 0.5)), position=(0.0, 0.0, 0.5 + i), material=mat)
           for i in range(count)]
    return w, ids


def column_drift(settings: dict, seconds: float) -> float:
    w, ids = column(10, settings)
    drift = 0.0
    for _ in range(int(round(seconds / DT))):
        w.step(DT)
        p = w.bodies.body_position[ids]
        drift = max(drift, float(np.hypot(p[:, 0], p[:, 1]).max()))
    return drift


def test_ten_box_column_holds_at_the_defaults():
    # measured: drift 0 (exactly symmetric) over 60 s; the legacy defaults: fell within 20 s
    assert column_drift({}, 20.0) < 0.005


@pytest.mark.slow
def test_ten_box_column_falls_under_the_legacy_defaults():
    assert column_drift(tb.PGSSettings.preset("legacy"), 20.0) > 0.5


@pytest.mark.parametrize("substeps", [1, 4])
def test_block_solve_shares_a_resting_face_evenly(substeps):
    """One box resting on the plane: the four corner points carry m g dt / 4 each (the statics is
    over-determined; the block solve's least-norm impulses are the symmetric ones), summed over the
    step's substeps."""
    w, (b,) = column(1, {"substeps": substeps})
    for _ in range(30):
        w.step(DT)
    c = w.contact_store
    lam = c.contact_normal_impulse[: c.count]
    assert c.count == 4
    np.testing.assert_allclose(lam, 1000.0 * G * DT / 4.0, rtol=1e-6)


def test_scalar_sweeps_share_a_resting_face_unevenly():
    """The contrast: 001's scalar sweeps leave the points of the face with different impulses."""
    w, _ = column(1, tb.PGSSettings.preset("catto"))
    for _ in range(30):
        w.step(DT)
    lam = w.contact_store.contact_normal_impulse[:4]
    assert lam.sum() == pytest.approx(1000.0 * G * DT, rel=1e-3)
    assert lam.max() - lam.min() > 1e-4 * lam.mean()     # measured: 5.6e-4 of the mean


def chain_stretch(settings: dict) -> float:
    spec = tb.scenes.spec("chain50", seconds=10.0)
    w = spec.build(**settings)
    for _ in range(600):
        w.step(spec.dt)
    return float(np.max(w.joint_errors())) / 0.1


def test_chain50_keeps_its_links_within_one_percent_at_the_defaults():
    # issue 18's goal; measured 0.000 % (below 1e-5 of a link) with the exact joint tree solve and its
    # Newton projection; 7.4 % with the same substeps and every joint row in the sweeps
    # (joint_direct_solve False, the defaults before the tree solve), 21 % under the legacy defaults
    assert chain_stretch({}) < 0.01


def test_chain50_does_not_tear_on_long_substeps():
    # the tree solve tore the chain with one 1/60 s substep (1900 %); on substeps longer than
    # TREE_MAX_SUBSTEP the joint rows stay in the sweeps, which hold it like the legacy scheme (21 %)
    assert chain_stretch({"substeps": 1}) < 0.3


@pytest.mark.slow
def test_chain50_stretches_without_the_tree_solve():
    # the contrast on the defaults before issue 18 (4 substeps x 2 sweeps, every joint row in the
    # sweeps: 7.4 %); at today's 12 x 1 the sweeps alone end at 1.5 % (measured), above the goal too
    assert chain_stretch({"joint_direct_solve": False, "substeps": 4, "substep_iterations": 2}) > 0.03
    assert chain_stretch({"joint_direct_solve": False}) > 0.01
    assert chain_stretch(tb.PGSSettings.preset("legacy")) > 0.15


def test_warm_start_matches_by_distance_when_the_feature_ids_change():
    # one pair (key 7), old points at the corners of a unit square, new points 1 mm off with new ids
    old_pt = np.array([[0.5, 0.5, 0.0], [-0.5, 0.5, 0.0], [-0.5, -0.5, 0.0], [0.5, -0.5, 0.0]])
    new_pt = old_pt[[2, 0, 3, 1]] + 0.001
    old_lam = np.array([1.0, 2.0, 3.0, 4.0])
    old_fr = np.zeros((4, 3))
    old_fr[:, 0] = old_lam
    key_old = np.full(4, 7, dtype=np.int64)
    key_new = np.full(4, 7, dtype=np.int64)
    feat_old = np.arange(4, dtype=np.int64)
    feat_new = np.arange(10, 14, dtype=np.int64)
    lam, fr = np.zeros(4), np.zeros((4, 3))
    match, warm = np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.bool_)
    args = (4, key_new, feat_new, lam, fr, match, warm, 4, key_old, feat_old, old_lam, old_fr, new_pt, old_pt)
    assert match_cache(*args, 0.0) == 0            # feature ids alone: nothing carried
    assert match_cache(*args, 0.02) == 4
    np.testing.assert_array_equal(match, [2, 0, 3, 1])
    np.testing.assert_array_equal(lam, old_lam[[2, 0, 3, 1]])
    np.testing.assert_array_equal(fr[:, 0], old_lam[[2, 0, 3, 1]])
    assert match_cache(*args, 0.001) == 0          # farther than the radius (1.7 mm): no match


def test_presets_are_settings_of_the_solver():
    for name in ("catto", "legacy"):
        w = tb.World(solver="pgs", **tb.PGSSettings.preset(name))
        assert w.settings.substeps == 1 and not w.settings.normal_block_solve
    with pytest.raises(tb.SettingsError):
        tb.PGSSettings.preset("nope")


def stack10_drift(settings: dict, gap: float) -> tuple[float, bool]:
    from tumble.scenes.metrics import SceneMetrics

    spec = tb.scenes.spec("stack10", gap=gap)
    w = spec.build(**settings)
    m = SceneMetrics(spec)
    m.observe(w)
    for _ in range(3600):
        w.step(spec.dt)
        m.observe(w)
    r = m.result()
    return r["max_drift"], r["standing"]


@pytest.mark.slow
@pytest.mark.parametrize("gap", [0.9 * 0.035, 0.035, 1.1 * 0.035])
def test_stack10_stands_within_two_centimetres_at_the_defaults(gap):
    # measured 60 s: 6.6 / 2.1 / 12.9 mm at 4 x 2 sweeps (the defaults before 12 x 1); the legacy defaults
    # 40-110 mm (110 mm at 3.5 cm)
    drift, standing = stack10_drift({}, gap)
    assert standing and drift < 0.02


@pytest.mark.slow
def test_stack10_drifts_more_under_the_legacy_defaults():
    # measured 110 mm before issue 17's row refresh (the relax sweeps with B = M^-1 J^T at the boxes'
    # orientation after the move, contact.rows.refresh_turned_rows), 49 mm after; the defaults 2-13 mm
    drift, _ = stack10_drift(tb.PGSSettings.preset("legacy"), 0.035)
    assert drift > 0.03



def tipping_face(active_set: bool) -> tuple[np.ndarray, np.ndarray]:
    """One block sweep over the 4-point manifold of a unit box (1000 kg) on a fixed support, the box
    falling at g dt and turning about y at 1 rad/s, so the points at x = +0.5 approach and those at
    x = -0.5 separate (friction rows left out: inv_diag 0). Returns (normal impulses, the normal
    rows' velocities after the sweep)."""
    from tumble._core.solvers.pgs.kernels import block_sweep

    m, inertia = 1000.0, 1000.0 / 6.0
    corners = [(0.5, 0.5), (0.5, -0.5), (-0.5, -0.5), (-0.5, 0.5)]
    rows = 12
    row_body = np.full((rows, 2), -1, dtype=np.int64)
    row_J, row_B = np.zeros((rows, 2, 6)), np.zeros((rows, 2, 6))
    inv_diag, bias, lam = np.zeros(rows), np.zeros(rows), np.zeros(rows)
    lo, hi = np.zeros(rows), np.full(rows, np.inf)
    link, mu = np.full(rows, -1, dtype=np.int64), np.zeros(rows)
    cfm, group = np.zeros(rows), np.ones(rows, dtype=np.int64)
    for c, (x, y) in enumerate(corners):
        r = 3 * c
        row_body[r : r + 3, 0] = 0
        rxn = np.cross([x, y, -0.5], [0.0, 0.0, 1.0])
        row_J[r, 0] = np.concatenate(([0.0, 0.0, 1.0], rxn))
        row_B[r, 0] = np.concatenate(([0.0, 0.0, 1.0 / m], rxn / inertia))
        inv_diag[r] = 1.0 / (row_J[r, 0] @ row_B[r, 0])
    v_lin = np.array([[0.0, 0.0, -G * DT]])
    v_ang = np.array([[0.0, 1.0, 0.0]])
    block_sweep(np.array([0, 4], dtype=np.int64), 1, rows, row_body, row_J, row_B, inv_diag, bias, lo, hi, link, mu,
                cfm, group, lam, v_lin, v_ang, active_set)
    vn = np.array([row_J[3 * c, 0, :3] @ v_lin[0] + row_J[3 * c, 0, 3:] @ v_ang[0] for c in range(4)])
    return lam[0::3], vn


def test_block_active_set_solves_a_tipping_face_exactly():
    """The manifold's LCP: the least-norm impulses of all four points are negative at x = -0.5 (the
    face tips about the edge x = +0.5); the active set drops those two and solves the edge's two
    points together: equal impulses (mirror symmetry in y), the edge at rest (v_n = 0) and the other
    points separating with no impulse -- the exact LCP solution in one sweep. The scalar fallback
    (``normal_block_active_set=False``, before issue 18's fix) updates the points in order: the first
    edge point takes more impulse than the second, a torque about x that leaned pyramid20 out of its
    plane (28 mm of its 33 mm drift in 60 s)."""
    lam, vn = tipping_face(True)
    assert lam[0] > 0.0 and lam[0] == pytest.approx(lam[1], rel=1e-12)
    np.testing.assert_array_equal(lam[2:], 0.0)
    np.testing.assert_allclose(vn[:2], 0.0, atol=1e-8)     # the block's 1e-9 regularisation
    assert vn[2:].min() > 0.0
    lam, vn = tipping_face(False)
    assert abs(lam[0] - lam[1]) > 1e-2 * abs(lam[0] + lam[1])


def pyramid20_drift(settings: dict, seconds: float) -> float:
    from tumble.scenes.metrics import SceneMetrics

    spec = tb.scenes.spec("pyramid20", seconds=seconds)
    w = spec.build(**settings)
    m = SceneMetrics(spec)
    m.observe(w)
    for _ in range(int(round(seconds / spec.dt))):
        w.step(spec.dt)
        m.observe(w)
    return m.result()["max_drift"]


@pytest.mark.slow
def test_pyramid20_holds_within_five_millimetres_at_the_defaults():
    # issue 18's goal; measured 2.96 mm over 60 s at 12 x 1 sweeps with the manifold active set (the
    # drift is a transient of the first seconds); 33.1 mm at 4 x 2 before the active set
    assert pyramid20_drift({}, 60.0) < 0.005


@pytest.mark.slow
def test_pyramid20_leans_at_four_substeps_of_two_sweeps():
    # the contrast: the earlier 4 x 2 sweeps, active set or not (measured 10 s: 18.6 / 33.1 mm)
    assert pyramid20_drift({"substeps": 4, "substep_iterations": 2}, 10.0) > 0.01
    assert pyramid20_drift({"substeps": 4, "substep_iterations": 2, "normal_block_active_set": False}, 10.0) > 0.02
