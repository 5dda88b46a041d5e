"""Capsule and hull contact manifolds against the plain NumPy / SciPy oracles in tests/naive.

Seeded random poses compare the normal and the deepest depth with the references (exactly where
the answer is unambiguous: a clear best axis, a non-parallel pair) and check every point: its two
surface points p + (d/2) n (on A) and p - (d/2) n (on B) must lie on the respective surfaces. Hand
cases pin known answers (a capsule on a plane, crossed capsules, a cube resting on a cube, ...) and
feature ids must be unique in a manifold and unchanged under tiny perturbations.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.naive import narrow_convex as ref
from tumble._core.collision.hull import HullStore, box_hull, build_hull, hull_view
from tumble._core.collision.manifold_capsule import (
    AXIS_ABS_TOL,
    AXIS_REL_TOL,
    FACE_ONE_MINUS_COS,
    collide_capsule_box,
    collide_capsule_capsule,
    collide_plane_capsule,
    collide_sphere_capsule,
)
from tumble._core.collision.manifold_hull import (
    collide_box_hull,
    collide_capsule_hull,
    collide_hull_hull,
    collide_plane_hull,
    collide_sphere_hull,
    is_minkowski_face,
)

I3 = np.eye(3)
Z3 = np.zeros(3)
SURF = 1e-7


def rot(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return I3 + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def run(fn, *args, margin=0.0):
    normal = np.full(3, np.nan)
    points = np.full((4, 3), np.nan)
    depths = np.full(4, np.nan)
    features = np.full(4, -1, dtype=np.int64)
    n = fn(*args, margin, normal, points, depths, features)
    if n:
        assert abs(np.linalg.norm(normal) - 1.0) < 1e-12
        assert len(set(features[:n].tolist())) == n, "feature ids must be unique"
        assert np.all(depths[:n] >= -margin - 1e-12)
    return n, normal, points[:n], depths[:n], features[:n]


def capsule_sd(x, p, R, s):
    a0, a1 = ref.segment_ends(p, R, s[1])
    return np.linalg.norm(x - ref.point_segment(x, a0, a1)) - s[0]


@pytest.fixture(scope="module")
def hulls():
    rng = np.random.default_rng(11)
    store = HullStore()
    store.add(box_hull((0.5, 0.4, 0.3)))
    store.add(build_hull(rng.normal(size=(14, 3)) * 0.5))
    store.add(build_hull(rng.uniform(-0.4, 0.4, size=(9, 3))))
    store.add(box_hull((0.5, 0.5, 0.5)))
    return store, store.arrays()


def world_hull(arr, h, p, R):
    return ref.WorldHull(hull_view(arr, h)[0], p, R)


# ---------------------------------------------------------------------------------------------------
# plane / sphere / capsule


def test_plane_capsule_random_against_end_heights():
    rng = np.random.default_rng(1)
    for _ in range(200):
        Ra, Rb = ref.random_rotation(rng), ref.random_rotation(rng)
        pa = rng.normal(size=3) * 0.3
        sb = np.array([rng.uniform(0.05, 0.3), rng.uniform(0.1, 0.6), 0.0])
        pb = pa + Ra[:, 2] * rng.uniform(-0.3, 0.9) + rng.normal(size=3) * 0.5
        margin = 0.02
        n, normal, pts, dep, feat = run(collide_plane_capsule, pa, Ra, Z3, pb, Rb, sb, margin=margin)
        ends = np.array(ref.segment_ends(pb, Rb, sb[1]))
        want = ref.plane_points(pa, Ra[:, 2], ends) + sb[0]
        assert n == int(np.sum(want >= -margin))
        np.testing.assert_allclose(normal, Ra[:, 2], atol=1e-15)
        for k in range(n):
            assert dep[k] == pytest.approx(want[feat[k]], abs=1e-12)
            assert np.dot(pts[k] + 0.5 * dep[k] * normal - pa, normal) == pytest.approx(0.0, abs=1e-12)
            # B's surface point along the normal: exact at the deeper end, inside B at the other
            sd = capsule_sd(pts[k] - 0.5 * dep[k] * normal, pb, Rb, sb)
            assert sd <= 1e-12 and (dep[k] < dep.max() or abs(sd) < 1e-12)


def test_capsule_lying_on_plane_two_points_exact_depth():
    Rb = rot([0, 1, 0], np.pi / 2)  # capsule axis along x
    sb = np.array([0.2, 0.5, 0.0])
    n, normal, pts, dep, feat = run(collide_plane_capsule, Z3, I3, Z3, np.array([1.0, 2.0, 0.19]), Rb, sb)
    assert n == 2 and sorted(feat.tolist()) == [0, 1]
    np.testing.assert_allclose(dep, 0.01, atol=1e-15)
    np.testing.assert_allclose(sorted(pts[:, 0]), [0.5, 1.5], atol=1e-15)
    np.testing.assert_allclose(pts[:, 2], -0.005, atol=1e-15)


def test_sphere_capsule_random():
    rng = np.random.default_rng(2)
    for _ in range(200):
        Rb = ref.random_rotation(rng)
        sa = np.array([rng.uniform(0.05, 0.4), 0, 0])
        sb = np.array([rng.uniform(0.05, 0.3), rng.uniform(0.1, 0.6), 0.0])
        pa = rng.normal(size=3) * 0.5
        n, normal, pts, dep, _ = run(collide_sphere_capsule, pa, I3, sa, Z3, Rb, sb, margin=0.01)
        depth, nref = ref.sphere_capsule(pa, sa, Z3, Rb, sb)
        assert n == (1 if depth >= -0.01 else 0)
        if n:
            assert dep[0] == pytest.approx(depth, abs=1e-12)
            np.testing.assert_allclose(normal, nref, atol=1e-12)
            assert np.linalg.norm(pts[0] + 0.5 * dep[0] * normal - pa) == pytest.approx(sa[0], abs=1e-12)
            assert capsule_sd(pts[0] - 0.5 * dep[0] * normal, Z3, Rb, sb) == pytest.approx(0, abs=1e-12)


def test_capsule_capsule_random():
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(200):
        Ra, Rb = ref.random_rotation(rng), ref.random_rotation(rng)
        sa = np.array([rng.uniform(0.05, 0.3), rng.uniform(0.1, 0.6), 0.0])
        sb = np.array([rng.uniform(0.05, 0.3), rng.uniform(0.1, 0.6), 0.0])
        pa, pb = rng.normal(size=3) * 0.2, rng.normal(size=3) * 0.5
        margin = 0.01
        n, normal, pts, dep, _ = run(collide_capsule_capsule, pa, Ra, sa, pb, Rb, sb, margin=margin)
        depth, nref = ref.capsule_capsule(pa, Ra, sa, pb, Rb, sb)
        if abs(depth + margin) < 1e-7:
            continue
        assert n == (1 if depth >= -margin else 0)
        if n:
            hits += 1
            assert dep[0] == pytest.approx(depth, abs=1e-7)
            assert np.dot(normal, nref) > 1 - 1e-7
            assert capsule_sd(pts[0] + 0.5 * dep[0] * normal, pa, Ra, sa) == pytest.approx(0, abs=1e-9)
            assert capsule_sd(pts[0] - 0.5 * dep[0] * normal, pb, Rb, sb) == pytest.approx(0, abs=1e-9)
    assert hits > 30


def test_crossed_capsules_one_point():
    sa = np.array([0.1, 1.0, 0.0])
    Ra = rot([0, 1, 0], np.pi / 2)  # along x
    Rb = rot([1, 0, 0], np.pi / 2)  # along y
    n, normal, pts, dep, feat = run(collide_capsule_capsule, Z3, Ra, sa, np.array([0.2, -0.3, 0.19]), Rb, sa)
    assert n == 1 and feat[0] == 0
    np.testing.assert_allclose(normal, [0, 0, 1], atol=1e-15)
    assert dep[0] == pytest.approx(0.01, abs=1e-14)
    np.testing.assert_allclose(pts[0], [0.2, 0.0, 0.095], atol=1e-14)


def test_parallel_capsules_two_clipped_points_and_stable_features():
    sa = np.array([0.1, 1.0, 0.0])
    sb = np.array([0.15, 0.5, 0.0])
    Ra = rot([0, 1, 0], np.pi / 2)
    pb = np.array([1.2, 0.0, 0.24])  # B spans x in [0.7, 1.7]: overlap [0.7, 1.0]
    n, normal, pts, dep, feat = run(collide_capsule_capsule, Z3, Ra, sa, pb, Ra, sb)
    assert n == 2
    np.testing.assert_allclose(normal, [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(dep, 0.01, atol=1e-14)
    np.testing.assert_allclose(sorted(pts[:, 0]), [0.7, 1.0], atol=1e-14)
    rng = np.random.default_rng(4)
    for _ in range(10):
        Rp = rot(rng.normal(size=3), 1e-4) @ Ra
        m, _, _, _, f2 = run(collide_capsule_capsule, Z3, Ra, sa, pb + rng.normal(size=3) * 1e-6, Rp, sb)
        assert m == 2 and set(f2.tolist()) == set(feat.tolist())


# ---------------------------------------------------------------------------------------------------
# capsule against box / hull


def _check_capsule_polytope(fn, shape_b, hb_index, arr, seed, count=200):
    rng = np.random.default_rng(seed)
    exact = unamb = touching = 0
    for _ in range(count):
        Ra, Rb = ref.random_rotation(rng), ref.random_rotation(rng)
        sa = np.array([rng.uniform(0.05, 0.25), rng.uniform(0.1, 0.5), 0.0])
        pa, pb = rng.normal(size=3) * 0.5, rng.normal(size=3) * 0.1
        margin = 0.01
        n, normal, pts, dep, _ = run(fn, pa, Ra, sa, pb, Rb, *shape_b, margin=margin)
        hw = world_hull(arr, hb_index, pb, Rb)
        depth, nref, gap = ref.capsule_hull(pa, Ra, sa, hw, far=margin + 1e-3)
        if abs(depth + margin) < 1e-6:
            continue
        assert n == (0 if depth < -margin else n) and (n > 0) == (depth >= -margin)
        if not n:
            continue
        touching += 1
        # a face axis is kept while within AXIS_REL_TOL |sep| + AXIS_ABS_TOL of an edge axis
        assert dep.max() <= depth + AXIS_REL_TOL * abs(depth - sa[0]) + AXIS_ABS_TOL + 1e-9
        if depth <= sa[0]:  # the segment is outside B: normal along the closest points
            # (a face normal within FACE_ONE_MINUS_COS of it makes a clipped face contact)
            assert np.dot(normal, nref) > 1 - FACE_ONE_MINUS_COS - 1e-12
            clear = np.dot(normal, nref) > 1 - 1e-9
        else:
            clear = gap > 0.05 * depth + 1e-4  # one SAT axis clearly best
            if clear:
                assert np.dot(normal, nref) > 1 - 1e-9
        if clear:
            unamb += 1
            exact += abs(dep.max() - depth) < 1e-6
        for k in range(n):
            # B's point lies on B's surface; A's on or inside A (inside for the clipped ends of a
            # tilted segment: the segment is nearer there than along n)
            assert capsule_sd(pts[k] + 0.5 * dep[k] * normal, pa, Ra, sa) <= SURF
            assert hw.plane_value(pts[k] - 0.5 * dep[k] * normal) == pytest.approx(0, abs=SURF)
    assert touching > 40 and unamb > 0.5 * touching and exact > 0.9 * unamb


def test_capsule_box_random(hulls):
    store, arr = hulls
    _check_capsule_polytope(collide_capsule_box, (np.array([0.5, 0.4, 0.3]),), 0, arr, seed=5)


@pytest.mark.parametrize("h", [1, 2])
def test_capsule_hull_random(hulls, h):
    store, arr = hulls
    _check_capsule_polytope(collide_capsule_hull, (h, arr), h, arr, seed=6 + h)


def test_capsule_lying_on_box_two_points_and_stable_features(hulls):
    _, arr = hulls
    Ra = rot([0, 1, 0], np.pi / 2)
    sa = np.array([0.1, 0.3, 0.0])
    pa = np.array([0.1, 0.05, 0.3 + 0.1 - 0.004])
    hb = np.array([0.5, 0.4, 0.3])
    for fn, extra in ((collide_capsule_box, (hb,)), (collide_capsule_hull, (0, arr))):
        n, normal, pts, dep, feat = run(fn, pa, Ra, sa, Z3, I3, *extra)
        assert n == 2
        np.testing.assert_allclose(normal, [0, 0, -1], atol=1e-15)
        np.testing.assert_allclose(dep, 0.004, atol=1e-14)
        np.testing.assert_allclose(sorted(pts[:, 0]), [-0.2, 0.4], atol=1e-14)
        rng = np.random.default_rng(7)
        for _ in range(10):
            Rp = rot(rng.normal(size=3), 1e-5) @ Ra
            m, _, _, _, f2 = run(fn, pa + rng.normal(size=3) * 1e-6, Rp, sa, Z3, I3, *extra)
            assert m == 2 and set(f2.tolist()) == set(feat.tolist())
    # overhanging the +x edge: clipped at x = 0.5 by the face's side plane
    n, _, pts, dep, _ = run(collide_capsule_box, pa + [0.3, 0, 0], Ra, sa, Z3, I3, hb)
    assert n == 2
    np.testing.assert_allclose(sorted(pts[:, 0]), [0.1, 0.5], atol=1e-14)


# ---------------------------------------------------------------------------------------------------
# plane / sphere against hull


def test_plane_hull_random(hulls):
    _, arr = hulls
    rng = np.random.default_rng(8)
    for _ in range(150):
        h = int(rng.integers(0, 4))
        Ra, Rb = ref.random_rotation(rng), ref.random_rotation(rng)
        pa, pb = rng.normal(size=3) * 0.2, rng.normal(size=3) * 0.4
        n, normal, pts, dep, feat = run(collide_plane_hull, pa, Ra, Z3, pb, Rb, h, arr, margin=0.01)
        verts = hull_view(arr, h)[0] @ Rb.T + pb
        want = ref.plane_points(pa, Ra[:, 2], verts)
        assert n == min(4, int(np.sum(want >= -0.01)))
        if n:
            assert dep.max() == pytest.approx(want.max(), abs=1e-12)
            np.testing.assert_allclose(dep, want[feat], atol=1e-12)
            np.testing.assert_allclose(pts - 0.5 * dep[:, None] * normal, verts[feat], atol=1e-12)


def test_plane_hull_prism_lying_flat_keeps_widest_four():
    ang = np.linspace(0, 2 * np.pi, 17)[:-1]
    ring = np.column_stack([np.cos(ang), np.sin(ang)])
    pts = np.vstack([np.column_stack([ring, np.full(16, -0.2)]), np.column_stack([ring, np.full(16, 0.2)])])
    store = HullStore()
    store.add(build_hull(pts))
    arr = store.arrays()
    n, _, p, dep, _ = run(collide_plane_hull, Z3, I3, Z3, np.array([0, 0, 0.19]), I3, 0, arr)
    assert n == 4
    np.testing.assert_allclose(dep, 0.01, atol=1e-14)
    # the four spread points span a large part of the 16-gon's area (2.99): a square-ish quad
    q = p[:, :2]
    c = q.mean(axis=0)
    order = np.argsort(np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0]))
    x, y = q[order, 0], q[order, 1]
    assert 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) > 1.8


def test_sphere_hull_random(hulls):
    _, arr = hulls
    rng = np.random.default_rng(9)
    for _ in range(200):
        h = int(rng.integers(0, 4))
        Rb = ref.random_rotation(rng)
        pb = rng.normal(size=3) * 0.1
        sa = np.array([rng.uniform(0.05, 0.3), 0, 0])
        pa = rng.normal(size=3) * 0.5
        n, normal, pts, dep, _ = run(collide_sphere_hull, pa, I3, sa, pb, Rb, h, arr, margin=0.01)
        hw = world_hull(arr, h, pb, Rb)
        depth, nref = ref.sphere_hull(pa, sa, hw)
        assert n == (1 if depth >= -0.01 else 0)
        if n:
            assert dep[0] == pytest.approx(depth, abs=1e-9)
            np.testing.assert_allclose(normal, nref, atol=1e-7)
            assert np.linalg.norm(pts[0] + 0.5 * dep[0] * normal - pa) == pytest.approx(sa[0], abs=1e-12)
            assert hw.plane_value(pts[0] - 0.5 * dep[0] * normal) == pytest.approx(0, abs=SURF)


def test_sphere_on_box_hull_face_edge_corner(hulls):
    _, arr = hulls  # hull 3: cube of half extent 0.5
    r = np.array([0.2, 0, 0])
    n, normal, pts, dep, _ = run(collide_sphere_hull, np.array([0.1, 0.2, 0.69]), I3, r, Z3, I3, 3, arr)
    assert n == 1 and dep[0] == pytest.approx(0.01) and np.allclose(normal, [0, 0, -1])
    e = np.array([0.5, 0.0, 0.5]) + 0.19 * np.array([1, 0, 1]) / np.sqrt(2)
    n, normal, pts, dep, _ = run(collide_sphere_hull, e, I3, r, Z3, I3, 3, arr)
    assert n == 1 and dep[0] == pytest.approx(0.01) and np.allclose(normal, -np.array([1, 0, 1]) / np.sqrt(2))
    c = 0.5 + 0.19 / np.sqrt(3)
    n, normal, pts, dep, _ = run(collide_sphere_hull, np.full(3, c), I3, r, Z3, I3, 3, arr)
    assert n == 1 and dep[0] == pytest.approx(0.01) and np.allclose(normal, -np.ones(3) / np.sqrt(3))


# ---------------------------------------------------------------------------------------------------
# hull against hull


def test_minkowski_face_test_matches_arc_intersection():
    rng = np.random.default_rng(10)

    t = np.linspace(0, 1, 300)[:, None]

    def arc(a, b):
        v = (1 - t) * a + t * b
        return v / np.linalg.norm(v, axis=1)[:, None]

    for _ in range(300):
        a, b, c, d = (v / np.linalg.norm(v) for v in rng.normal(size=(4, 3)))
        if np.dot(a, b) < -0.5 or np.dot(c, d) < -0.5:
            continue
        # brute force: closest approach of the two arcs on a fine grid
        pa, pc = arc(a, b), arc(c, d)
        gap = np.sqrt(np.min(np.sum(pa**2, 1)[:, None] + np.sum(pc**2, 1)[None] - 2 * pa @ pc.T).clip(0))
        if 0.002 < gap < 0.05:
            continue  # too close to call on the grid
        assert is_minkowski_face(tuple(a), tuple(b), tuple(c), tuple(d)) == (gap <= 0.002)


@pytest.mark.parametrize("pair", [(0, 1), (1, 2), (2, 2), (3, 1)])
def test_hull_hull_random(hulls, pair):
    _, arr = hulls
    ha, hb = pair
    rng = np.random.default_rng(20 + ha * 5 + hb)
    exact = unamb = touching = 0
    for _ in range(150):
        Ra, Rb = ref.random_rotation(rng), ref.random_rotation(rng)
        pa, pb = Z3, rng.normal(size=3) * 0.45
        A, B = world_hull(arr, ha, pa, Ra), world_hull(arr, hb, pb, Rb)
        over, axis, second = ref.hull_hull_sat(A, B)
        n, normal, pts, dep, _ = run(collide_hull_hull, pa, Ra, ha, pb, Rb, hb, arr)
        if over < -1e-9:
            assert n == 0
            continue
        if over < 1e-9:
            continue
        touching += 1
        assert n >= 1
        # a face axis is kept while within AXIS_REL_TOL |sep| + AXIS_ABS_TOL of the best axis
        assert dep.max() <= over * (1 + AXIS_REL_TOL) + AXIS_ABS_TOL + 1e-12
        if second - over > 0.05 * over + 1e-4:
            unamb += 1
            assert np.dot(normal, axis) > 1 - 1e-9
            exact += abs(dep.max() - over) < 1e-9
        for k in range(n):
            assert A.plane_value(pts[k] + 0.5 * dep[k] * normal) == pytest.approx(0, abs=SURF)
            assert B.plane_value(pts[k] - 0.5 * dep[k] * normal) == pytest.approx(0, abs=SURF)
    assert touching > 40 and unamb >= 10 and exact > 0.8 * unamb


def test_box_hull_matches_hull_hull_with_registered_box(hulls):
    _, arr = hulls
    rng = np.random.default_rng(30)
    for _ in range(100):
        Ra, Rb = ref.random_rotation(rng), ref.random_rotation(rng)
        pb = rng.normal(size=3) * 0.45
        a = run(collide_box_hull, Z3, Ra, np.array([0.5, 0.4, 0.3]), pb, Rb, 1, arr, margin=0.01)
        b = run(collide_hull_hull, Z3, Ra, 0, pb, Rb, 1, arr, margin=0.01)
        assert a[0] == b[0]
        for x, y in zip(a[1:], b[1:]):
            np.testing.assert_allclose(x, y, atol=1e-12)


def test_cube_resting_on_cube_four_points_exact_depth_stable_features(hulls):
    _, arr = hulls  # hull 3: cube of half extent 0.5
    pb = np.array([0.2, -0.1, 0.995])
    Rb = rot([0, 0, 1], 0.3)
    n, normal, pts, dep, feat = run(collide_hull_hull, Z3, I3, 3, pb, Rb, 3, arr)
    assert n == 4
    np.testing.assert_allclose(normal, [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(dep, 0.005, atol=1e-14)
    np.testing.assert_allclose(pts[:, 2], 0.5 - 0.0025, atol=1e-14)
    assert np.all(np.abs(pts[:, :2]) <= 0.5 + 1e-12)
    rng = np.random.default_rng(31)
    for _ in range(20):
        Rp = rot(rng.normal(size=3), 1e-6) @ Rb
        m, nm, _, d2, f2 = run(collide_hull_hull, Z3, I3, 3, pb + rng.normal(size=3) * 1e-6, Rp, 3, arr)
        assert m == 4 and set(f2.tolist()) == set(feat.tolist())
        assert np.dot(nm, [0, 0, 1]) > 1 - 1e-10


def test_crossed_edges_one_point(hulls):
    _, arr = hulls
    # cube B rotated 45 deg about x then placed on cube A rotated 45 deg about y: edge on edge
    Ra, Rb = rot([0, 1, 0], np.pi / 4), rot([1, 0, 0], np.pi / 4)
    top = 0.5 * np.sqrt(2)
    pb = np.array([0, 0, 2 * top - 0.01])
    n, normal, pts, dep, feat = run(collide_hull_hull, Z3, Ra, 3, pb, Rb, 3, arr)
    assert n == 1 and feat[0] < 0
    np.testing.assert_allclose(normal, [0, 0, 1], atol=1e-12)
    assert dep[0] == pytest.approx(0.01, abs=1e-12)
    np.testing.assert_allclose(pts[0], [0, 0, top - 0.005], atol=1e-12)
