"""Sphere / plane / box contact manifolds against the plain NumPy oracles in tests/naive.

Random poses (seeded) compare normal, depths, point count and the points themselves; every
reported point must have its two surface points p + (d/2) n (on A) and p - (d/2) n (on B) on the
respective surfaces. Hand cases pin known answers (resting boxes, 45 degree boxes, crossed edges,
a sphere in a face region and at a corner) and the Catto 001 §8.2 feature ids: unique within a
manifold and unchanged while a resting box jitters.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from tests.naive import narrow_boxes as ref
from tumble._core.collision.manifold_box import (
    EDGE_BASE,
    collide_box_box,
    collide_plane_box,
    describe_box_feature,
)
from tumble._core.collision.manifold_sphere import (
    collide_plane_sphere,
    collide_sphere_box,
    collide_sphere_sphere,
)
from tumble._core.math3d import quat_from_axis_angle, quat_to_matrix_py

SURF_TOL = 1e-6
I3 = np.eye(3)
Z3 = np.zeros(3)


def run(fn, pa, Ra, sa, pb, Rb, sb, margin=0.0):
    normal = np.full(3, np.nan)
    points = np.full((4, 3), np.nan)
    depths = np.full(4, np.nan)
    features = np.full(4, -1, dtype=np.int64)
    n = fn(np.asarray(pa, float), np.asarray(Ra, float), np.asarray(sa, float), np.asarray(pb, float),
           np.asarray(Rb, float), np.asarray(sb, float), float(margin), normal, points, depths, features)
    return n, normal, points[:n].copy(), depths[:n].copy(), features[:n].copy()


def rot(axis, angle):
    return quat_to_matrix_py(quat_from_axis_angle(axis, angle))


def random_rotation(rng):
    return quat_to_matrix_py(rng.normal(size=4))


def small_rotation(rng, scale):
    axis = rng.normal(size=3)
    return rot(axis, scale * rng.normal())


def sphere_size(r):
    return np.array([r, 0.0, 0.0])


def check_on_surfaces(normal, points, depths, sd_a, sd_b, tol=SURF_TOL):
    """p + (d/2) n lies on A's surface and p - (d/2) n on B's surface (Catto's midpoint)."""
    assert abs(np.linalg.norm(normal) - 1.0) < 1e-12
    for p, d in zip(points, depths):
        assert abs(sd_a(p + 0.5 * d * normal)) <= tol, (p, d, sd_a(p + 0.5 * d * normal))
        assert abs(sd_b(p - 0.5 * d * normal)) <= tol, (p, d, sd_b(p - 0.5 * d * normal))


def assert_matches_single(got, want):
    n, normal, points, depths, _ = got
    assert n == len(want["points"])
    if n:
        assert normal @ want["normal"] > 0.999
        np.testing.assert_allclose(points, want["points"], atol=1e-9)
        np.testing.assert_allclose(depths, want["depths"], atol=1e-9)


# --- sphere pairs -----------------------------------------------------------------------------

def test_sphere_sphere_random():
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(300):
        pa, pb = rng.uniform(-0.7, 0.7, 3), rng.uniform(-0.7, 0.7, 3)
        ra, rb, margin = rng.uniform(0.1, 0.6), rng.uniform(0.1, 0.6), rng.choice([0.0, 0.1])
        got = run(collide_sphere_sphere, pa, I3, sphere_size(ra), pb, I3, sphere_size(rb), margin)
        assert_matches_single(got, ref.sphere_sphere(pa, ra, pb, rb, margin))
        if got[0]:
            hits += 1
            assert got[4][0] == 0
            check_on_surfaces(got[1], got[2], got[3], partial(ref.sd_sphere, p=pa, r=ra),
                              partial(ref.sd_sphere, p=pb, r=rb))
    assert 50 < hits < 300


def test_plane_sphere_random():
    rng = np.random.default_rng(2)
    hits = 0
    for _ in range(300):
        pa, Ra = rng.uniform(-1, 1, 3), random_rotation(rng)
        rb, margin = rng.uniform(0.1, 0.6), rng.choice([0.0, 0.1])
        pb = pa + Ra @ np.array([*rng.uniform(-2, 2, 2), rng.uniform(-0.5, 1.0)])
        got = run(collide_plane_sphere, pa, Ra, Z3, pb, I3, sphere_size(rb), margin)
        assert_matches_single(got, ref.plane_sphere(pa, Ra, pb, rb, margin))
        if got[0]:
            hits += 1
            check_on_surfaces(got[1], got[2], got[3], partial(ref.sd_halfspace, p=pa, R=Ra),
                              partial(ref.sd_sphere, p=pb, r=rb))
    assert 50 < hits < 300


def test_sphere_box_random():
    rng = np.random.default_rng(3)
    hits = inside = 0
    for _ in range(400):
        pb, Rb, hb = rng.uniform(-1, 1, 3), random_rotation(rng), rng.uniform(0.2, 0.8, 3)
        ra, margin = rng.uniform(0.05, 0.5), rng.choice([0.0, 0.1])
        pa = pb + Rb @ (rng.uniform(-1.6, 1.6, 3) * hb)
        got = run(collide_sphere_box, pa, I3, sphere_size(ra), pb, Rb, hb, margin)
        assert_matches_single(got, ref.sphere_box(pa, ra, pb, Rb, hb, margin))
        if got[0]:
            hits += 1
            inside += ref.sd_box(pa, pb, Rb, hb) < 0
            check_on_surfaces(got[1], got[2], got[3], partial(ref.sd_sphere, p=pa, r=ra),
                              partial(ref.sd_box, p=pb, R=Rb, h=hb))
    assert hits > 100 and inside > 20


def test_sphere_box_face_region_and_corner():
    hb = np.array([1.0, 0.5, 0.25])
    # Centre above the +z face region, overlapping by 0.05.
    n, normal, points, depths, features = run(collide_sphere_box, [0.3, -0.2, 0.45], I3, sphere_size(0.25),
                                              Z3, I3, hb)
    assert n == 1 and features[0] == 0
    np.testing.assert_allclose(normal, [0, 0, -1], atol=1e-15)
    np.testing.assert_allclose(depths, [0.05], atol=1e-12)
    np.testing.assert_allclose(points[0], [0.3, -0.2, 0.225], atol=1e-12)
    # Centre inside the box, nearest the -y face (gap 0.1): depth r + 0.1, normal +y (sphere to box).
    n, normal, points, depths, _ = run(collide_sphere_box, [0.2, -0.4, 0.0], I3, sphere_size(0.1), Z3, I3, hb)
    assert n == 1
    np.testing.assert_allclose(normal, [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(depths, [0.2], atol=1e-12)
    # Outside the (+,+,+) corner along the diagonal direction (1, 1, 1) / sqrt(3).
    corner = hb.copy()
    u = np.ones(3) / np.sqrt(3.0)
    for dist, margin, expect in ((0.2, 0.0, 0.05), (0.3, 0.0, None), (0.3, 0.1, -0.05)):
        pa = corner + dist * u
        n, normal, points, depths, _ = run(collide_sphere_box, pa, I3, sphere_size(0.25), Z3, I3, hb, margin)
        if expect is None:
            assert n == 0
            continue
        assert n == 1
        np.testing.assert_allclose(normal, -u, atol=1e-12)
        np.testing.assert_allclose(depths, [expect], atol=1e-12)
        np.testing.assert_allclose(points[0], corner + 0.5 * (dist - 0.25) * u, atol=1e-12)


# --- plane-box --------------------------------------------------------------------------------

def test_plane_box_random():
    rng = np.random.default_rng(4)
    hits = 0
    for trial in range(300):
        pa, Ra = rng.uniform(-1, 1, 3), random_rotation(rng)
        hb = rng.uniform(0.1, 0.6, 3)
        pb = pa + Ra @ np.array([*rng.uniform(-1, 1, 2), rng.uniform(-0.5, 1.2)])
        Rb = random_rotation(rng) if trial % 2 else Ra @ small_rotation(rng, 0.05)
        margin = rng.choice([0.0, 0.05, 2.0])
        n, normal, points, depths, features = run(collide_plane_box, pa, Ra, Z3, pb, Rb, hb, margin)
        want = ref.plane_box(pa, Ra, pb, Rb, hb, margin)
        assert n == len(want["points"])
        if n == 0:
            continue
        hits += 1
        np.testing.assert_allclose(normal, Ra[:, 2], atol=1e-15)
        assert depths.max() == pytest.approx(want["depths"].max(), abs=1e-9)
        # Same vertex set as the oracle's 4 deepest (ties broken the same way are not required).
        kth = np.sort(want["all_seps"])[n - 1]
        assert np.all(-depths <= kth + 1e-12)
        assert len(set(features.tolist())) == n and set(features.tolist()) <= set(range(8))
        verts = ref.box_vertices(pb, Rb, hb)
        np.testing.assert_allclose(points - 0.5 * depths[:, None] * normal, verts[features], atol=1e-12)
        check_on_surfaces(normal, points, depths, partial(ref.sd_halfspace, p=pa, R=Ra),
                          partial(ref.sd_box, p=pb, R=Rb, h=hb))
    assert hits > 100


def test_plane_box_resting_flat_gives_bottom_four():
    hb = np.array([0.5, 0.4, 0.3])
    n, normal, points, depths, features = run(collide_plane_box, Z3, I3, Z3, [0, 0, 0.29], I3, hb, margin=1.0)
    assert n == 4 and sorted(features.tolist()) == [0, 1, 2, 3]
    np.testing.assert_allclose(depths, 0.01, atol=1e-12)
    np.testing.assert_allclose(points[:, 2], -0.005, atol=1e-12)


# --- box-box against the oracle ----------------------------------------------------------------

def _random_box_pair(rng, trial):
    ha, hb = rng.uniform(0.2, 0.8, 3), rng.uniform(0.2, 0.8, 3)
    pa, Ra = rng.uniform(-1, 1, 3), random_rotation(rng)
    kind = trial % 3
    if kind == 0:  # fully random
        Rb = random_rotation(rng)
        pb = pa + rng.uniform(-1, 1, 3) * (ha + hb)
    else:  # B nearly face-aligned above one of A's faces: face-face clipping with many points
        Rb = Ra @ small_rotation(rng, 0.15 if kind == 1 else 0.01)
        axis = rng.integers(3)
        off = rng.uniform(-0.8, 0.8, 3) * (ha + hb)
        off[axis] = rng.choice([-1, 1]) * (ha[axis] + hb[axis] - rng.uniform(-0.05, 0.1))
        pb = pa + Ra @ off
    margin = rng.choice([0.0, 0.03])
    return pa, Ra, ha, pb, Rb, hb, margin


def test_box_box_random_against_oracle():
    rng = np.random.default_rng(5)
    stats = {"face": 0, "edge": 0, "none": 0, "ambiguous": 0, "reduced": 0}
    for trial in range(450):
        pa, Ra, ha, pb, Rb, hb, margin = _random_box_pair(rng, trial)
        n, normal, points, depths, features = run(collide_box_box, pa, Ra, ha, pb, Rb, hb, margin)
        want = ref.box_box(pa, Ra, ha, pb, Rb, hb, margin)
        stats[want["kind"]] += 1
        if want["kind"] == "none":
            assert n == 0
            continue
        if n:
            assert len(set(features.tolist())) == n, features
            check_on_surfaces(normal, points, depths, partial(ref.sd_box, p=pa, R=Ra, h=ha),
                              partial(ref.sd_box, p=pb, R=Rb, h=hb))
        if min(want["decision_gaps"]) < 1e-7:
            stats["ambiguous"] += 1
            continue
        assert n > 0
        assert normal @ want["normal"] > 0.999
        # Max depth: exact, except that reducing > 4 points starts from a fixed-direction extreme
        # among the points within the depth band 0.005 (hu + hv) of the deepest (jitter-proof ids).
        deepest = want["depths"].max()
        m = len(want["points"])
        band = 0.01 * max(ha.max(), hb.max())
        if m <= 4 or np.sort(want["depths"])[-2] < deepest - band:
            assert depths.max() == pytest.approx(deepest, abs=1e-6)
        else:
            assert depths.max() >= deepest - band
        # Each kernel point is one of the oracle's clipped points, with its depth.
        for p, d in zip(points, depths):
            k = np.argmin(np.linalg.norm(want["points"] - p, axis=1))
            assert np.linalg.norm(want["points"][k] - p) < 1e-7
            assert abs(want["depths"][k] - d) < 1e-7
        stats["reduced"] += m > 4
        # The kernel merges points closer than ~2 % of a face half extent (same canonical id).
        gaps = [np.linalg.norm(a - b) for i, a in enumerate(want["points"]) for b in want["points"][i + 1:]]
        if not gaps or min(gaps) > 0.021 * max(ha.max(), hb.max()):
            assert n == min(m, 4)
        if want["kind"] == "edge":
            assert n == 1 and features[0] >= EDGE_BASE
        else:
            assert all(describe_box_feature(f)["owner"] == want["owner"] for f in features)
    assert stats["face"] > 200 and stats["edge"] > 20 and stats["none"] > 20, stats
    assert stats["reduced"] > 10 and stats["ambiguous"] < 10, stats


# --- box-box hand cases -----------------------------------------------------------------------

def test_box_resting_on_bigger_box_exact():
    ha, hb = np.array([1.0, 1.0, 0.5]), np.array([0.4, 0.3, 0.2])
    pb = np.array([0.1, -0.2, 0.5 + 0.2 - 0.01])
    for margin in (0.0, 0.05):
        n, normal, points, depths, features = run(collide_box_box, Z3, I3, ha, pb, I3, hb, margin)
        assert n == 4
        np.testing.assert_allclose(normal, [0, 0, 1], atol=1e-15)
        np.testing.assert_allclose(depths, 0.01, atol=1e-12)
        want = {(0.1 + sx * 0.4, -0.2 + sy * 0.3) for sx in (-1, 1) for sy in (-1, 1)}
        got = {tuple(np.round(p[:2], 12)) for p in points}
        assert got == {tuple(np.round(w, 12)) for w in want}
        np.testing.assert_allclose(points[:, 2], 0.495, atol=1e-12)
        assert len(set(features.tolist())) == 4
    # Swapped roles: A on top, so the normal points down (A to B) and B's face is not preferred.
    n, normal, points, depths, _ = run(collide_box_box, pb, I3, hb, Z3, I3, ha)
    assert n == 4
    np.testing.assert_allclose(normal, [0, 0, -1], atol=1e-15)
    np.testing.assert_allclose(depths, 0.01, atol=1e-12)


def test_equal_boxes_stacked_flush():
    h = np.array([0.5, 0.5, 0.5])
    n, normal, points, depths, features = run(collide_box_box, Z3, I3, h, [0, 0, 0.998], I3, h)
    assert n == 4
    np.testing.assert_allclose(normal, [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(depths, 0.002, atol=1e-12)
    np.testing.assert_allclose(np.abs(points[:, :2]), 0.5, atol=1e-12)
    assert len(set(features.tolist())) == 4


def test_box_on_edge_rotated_45_degrees():
    """B rotated 45 deg about x rests on A's top face with one edge: two points at its ends."""
    ha, hb = np.array([1.0, 1.0, 0.5]), np.array([0.3, 0.3, 0.3])
    Rb = rot([1, 0, 0], np.pi / 4)
    pb = np.array([0.0, 0.0, 0.5 + 0.3 * np.sqrt(2.0) - 0.01])
    n, normal, points, depths, features = run(collide_box_box, Z3, I3, ha, pb, Rb, hb)
    assert n == 2
    np.testing.assert_allclose(normal, [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(depths, 0.01, atol=1e-12)
    np.testing.assert_allclose(sorted(points[:, 0]), [-0.3, 0.3], atol=1e-12)
    np.testing.assert_allclose(points[:, 1:], [[0.0, 0.495]] * 2, atol=1e-12)
    assert len(set(features.tolist())) == 2
    # Rotated 45 deg about z instead: its bottom face lies inside A's top face, 4 points.
    Rb = rot([0, 0, 1], np.pi / 4)
    n, normal, points, depths, _ = run(collide_box_box, Z3, I3, ha, [0, 0, 0.79], Rb, hb)
    assert n == 4
    np.testing.assert_allclose(depths, 0.01, atol=1e-12)
    np.testing.assert_allclose(np.sort(np.linalg.norm(points[:, :2], axis=1)), [0.3 * np.sqrt(2.0)] * 4,
                               atol=1e-12)


def test_crossed_edges_give_one_edge_point():
    """A's top edge (along x) crosses B's bottom edge (along y): SAT picks x cross y."""
    h = np.array([0.5, 0.5, 0.5])
    Ra = rot([1, 0, 0], np.pi / 4)
    Rb = rot([0, 1, 0], np.pi / 4)
    top = 0.5 * np.sqrt(2.0)
    pb = np.array([0.0, 0.0, 2 * top - 0.02])
    n, normal, points, depths, features = run(collide_box_box, Z3, Ra, h, pb, Rb, h)
    assert n == 1 and features[0] >= EDGE_BASE
    np.testing.assert_allclose(normal, [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(depths, [0.02], atol=1e-12)
    np.testing.assert_allclose(points[0], [0, 0, top - 0.01], atol=1e-12)
    # Separated by 0.01: nothing without margin, a point with depth -0.01 within a 0.02 margin.
    pb = np.array([0.0, 0.0, 2 * top + 0.01])
    assert run(collide_box_box, Z3, Ra, h, pb, Rb, h)[0] == 0
    n, normal, points, depths, _ = run(collide_box_box, Z3, Ra, h, pb, Rb, h, 0.02)
    assert n == 1
    np.testing.assert_allclose(depths, [-0.01], atol=1e-12)


def test_reference_owner_encoded_in_feature_ids():
    """A tilted box pressing a corner edge into B's top face: B owns the reference face."""
    ha, hb = np.array([0.3, 0.3, 0.3]), np.array([1.0, 1.0, 0.5])
    Ra = rot([1, 0, 0], np.pi / 4)
    pa = np.array([0.0, 0.0, 0.5 + 0.3 * np.sqrt(2.0) - 0.01])
    n, normal, points, depths, features = run(collide_box_box, pa, Ra, ha, Z3, I3, hb)
    assert n == 2
    np.testing.assert_allclose(normal, [0, 0, -1], atol=1e-12)
    assert all(describe_box_feature(f)["owner"] == "B" for f in features)
    n2, _, _, _, features2 = run(collide_box_box, Z3, I3, hb, pa, Ra, ha)
    assert n2 == 2 and all(describe_box_feature(f)["owner"] == "A" for f in features2)
    assert not set(features.tolist()) & set(features2.tolist())


# --- feature-id stability (Catto 001 §8.2: ids must survive small motion) ----------------------

@pytest.mark.parametrize("hb", [(0.5, 0.5, 0.5), (0.3, 0.4, 0.25), (0.7, 0.6, 0.5)],
                         ids=["equal", "smaller", "larger"])
@pytest.mark.parametrize("yaw", [0.0, 0.3])
def test_resting_box_ids_stable_under_jitter(hb, yaw):
    rng = np.random.default_rng(6)
    ha = np.array([0.5, 0.5, 0.5])
    hb = np.array(hb)
    R0 = rot([0, 0, 1], yaw)
    p0 = np.array([0.0, 0.0, 0.5 + hb[2] - 0.002])
    reference = None
    for _ in range(50):
        pb = p0 + rng.normal(scale=1e-4, size=3)
        Rb = small_rotation(rng, 1e-3) @ R0
        n, normal, points, depths, features = run(collide_box_box, Z3, I3, ha, pb, Rb, hb, 0.01)
        assert n == 4
        assert normal[2] > 0.999
        ids = set(features.tolist())
        assert len(ids) == 4
        if reference is None:
            reference = ids
        assert ids == reference
