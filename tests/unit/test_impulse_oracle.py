"""The pure-Python reference of the impulse thesis (tests/naive/impulse.py) against closed-form physics: the
digest's acceptance tests 1-17 (seed-impulse-thesis.md §5.2) plus Fig. 21, Newton's cradle and the contact-order
claim of §5.4 on small hand-built sphere scenes."""

import math

import numpy as np
import pytest

from tests.naive import impulse as I

HP = I.PRESETS["high_performance"]
HA = I.PRESETS["high_accuracy"]


# ---------------------------------------------------------------------------------------------------------------
# a tiny scene builder: spheres and planes, contacts by hand
# ---------------------------------------------------------------------------------------------------------------

class Scene:
    """Spheres (dynamic or fixed) and fixed planes. Contacts: sphere-sphere (a = lower index, normal from a's centre
    to b's) and plane-sphere (a = the plane, normal = the plane normal, pointing into the sphere's side), point in
    the middle of the overlap, reported when the signed distance is <= margin."""

    def __init__(self):
        self.items = []

    def sphere(self, c, r, m=1.0, v=(0.0, 0.0, 0.0), w=(0.0, 0.0, 0.0), fixed=False):
        self.items.append(("sphere", np.array(c, float), float(r), float(m), np.array(v, float), np.array(w, float),
                           bool(fixed)))
        return len(self.items) - 1

    def plane(self, p, n):
        n = np.array(n, float)
        self.items.append(("plane", np.array(p, float), n / np.linalg.norm(n), 0.0, np.zeros(3), np.zeros(3), True))
        return len(self.items) - 1

    def build(self, margin=1e-9, restitution=0.25, mu_s=0.0, mu_k=0.0):
        n = len(self.items)
        bodies = {"position": np.zeros((n, 3)), "inv_mass": np.zeros(n), "inv_inertia": np.zeros((n, 3, 3)),
                  "v": np.zeros((n, 3)), "w": np.zeros((n, 3)), "fixed": np.zeros(n, bool), "r_max": np.zeros(n),
                  "rwa": np.zeros(n), "asleep": np.zeros(n, bool)}
        for i, (kind, c, r, m, v, w, fixed) in enumerate(self.items):
            bodies["position"][i] = c
            bodies["fixed"][i] = fixed
            if kind == "sphere":
                bodies["r_max"][i] = r
                if not fixed:
                    bodies["inv_mass"][i] = 1.0 / m
                    bodies["inv_inertia"][i] = np.eye(3) / (0.4 * m * r * r)
                    bodies["v"][i] = v
                    bodies["w"][i] = w
        rows = []
        for i in range(n):
            for j in range(i + 1, n):
                A, B = self.items[i], self.items[j]
                if A[0] == "plane" and B[0] == "plane":
                    continue
                if A[0] == "sphere" and B[0] == "sphere":
                    if A[6] and B[6]:
                        continue
                    d = B[1] - A[1]
                    L = np.linalg.norm(d)
                    dist = L - A[2] - B[2]
                    nrm = d / L
                    a, b = i, j
                    point = A[1] + nrm * (A[2] + 0.5 * dist)
                else:
                    (pi, P), (si, S) = ((i, A), (j, B)) if A[0] == "plane" else ((j, B), (i, A))
                    if S[6]:
                        continue
                    nrm = P[2]
                    dist = float(np.dot(S[1] - P[1], nrm)) - S[2]
                    a, b = pi, si
                    point = S[1] - nrm * (S[2] + 0.5 * dist)
                if dist <= margin:
                    rows.append((a, b, point, nrm, -dist))
        m = len(rows)
        contacts = {"body_a": np.array([r[0] for r in rows], dtype=np.int64),
                    "body_b": np.array([r[1] for r in rows], dtype=np.int64),
                    "point": np.array([r[2] for r in rows]).reshape(m, 3),
                    "normal": np.array([r[3] for r in rows]).reshape(m, 3),
                    "depth": np.array([r[4] for r in rows], dtype=float),
                    "restitution": np.full(m, float(restitution)), "mu_s": np.full(m, float(mu_s)),
                    "mu_k": np.full(m, float(mu_k))}
        return bodies, contacts


def settings(base=HP, **kw):
    s = dict(base)
    s.update(kw)
    return s


def copy_bodies(bodies):
    return {k: np.array(v, copy=True) for k, v in bodies.items()}


def find_contact(contacts, a, b):
    for c in range(len(contacts["body_a"])):
        if {int(contacts["body_a"][c]), int(contacts["body_b"][c])} == {a, b}:
            return c
    raise AssertionError(f"no contact {a}-{b}")


def random_rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else -q


def random_pair(rng, mu_s=0.3, mu_k=0.2, restitution=0.5, fixed_a=False):
    """Two bodies with random mass, world inertia R diag R^T, v, w, and one random contact between them."""
    bodies = {"position": rng.normal(size=(2, 3)), "inv_mass": np.zeros(2), "inv_inertia": np.zeros((2, 3, 3)),
              "v": rng.normal(size=(2, 3)), "w": rng.normal(size=(2, 3)), "fixed": np.array([fixed_a, False])}
    inertia = np.zeros((2, 3, 3))
    for i in range(2):
        if i == 0 and fixed_a:
            bodies["v"][i] = 0.0
            bodies["w"][i] = 0.0
            continue
        m = rng.uniform(0.5, 5.0)
        R = random_rotation(rng)
        inertia[i] = R @ np.diag(rng.uniform(0.05, 0.5, 3)) @ R.T
        bodies["inv_mass"][i] = 1.0 / m
        bodies["inv_inertia"][i] = np.linalg.inv(inertia[i])
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)
    contacts = {"body_a": np.array([0]), "body_b": np.array([1]),
                "point": (0.5 * (bodies["position"][0] + bodies["position"][1]) + 0.2 * rng.normal(size=3))[None],
                "normal": n[None], "depth": np.array([0.001]), "restitution": np.array([restitution]),
                "mu_s": np.array([mu_s]), "mu_k": np.array([mu_k])}
    return bodies, contacts, inertia


def momenta(bodies, inertia):
    P = np.zeros(3)
    L = np.zeros(3)
    scale_p = scale_l = 0.0
    for i in range(len(bodies["fixed"])):
        if bodies["fixed"][i]:
            continue
        m = 1.0 / bodies["inv_mass"][i]
        p = m * bodies["v"][i]
        P += p
        lin = np.cross(bodies["position"][i], p)
        spin = inertia[i] @ bodies["w"][i]
        L += lin + spin
        scale_p += np.linalg.norm(p)
        scale_l += np.linalg.norm(lin) + np.linalg.norm(spin)
    return P, L, scale_p, scale_l


# ---------------------------------------------------------------------------------------------------------------
# 1-6: single-contact math
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(20))
def test_single_solve_conserves_linear_and_angular_momentum(seed):
    rng = np.random.default_rng(seed)
    bodies, contacts, inertia = random_pair(rng, mu_s=rng.uniform(0, 1), mu_k=rng.uniform(0, 0.2))
    P0, L0, sp, sl = momenta(bodies, inertia)
    dj = I.resolve_single(bodies, contacts, 0, HP)
    P1, L1, _, _ = momenta(bodies, inertia)
    di = I.contact_basis(contacts["normal"][0]) @ dj
    assert np.linalg.norm(dj) > 0
    assert np.linalg.norm(P1 - P0) <= 1e-12 * (sp + np.linalg.norm(di))
    assert np.linalg.norm(L1 - L0) <= 1e-12 * (sl + np.linalg.norm(di) * np.linalg.norm(contacts["point"][0]))


def head_on(closing_speed, cor=0.25):
    sc = Scene()
    sc.sphere((0.0, 0, 0), 0.1, v=(0.5 * closing_speed, 0, 0))
    sc.sphere((0.2, 0, 0), 0.1, v=(-0.5 * closing_speed, 0, 0))
    return sc.build(restitution=cor)


def test_restitution_head_on_and_threshold():
    bodies, contacts = head_on(1.0)
    assert I.relative_velocity(bodies, contacts, 0) @ contacts["normal"][0] == -1.0
    I.resolve_single(bodies, contacts, 0, HP)
    assert abs(I.relative_velocity(bodies, contacts, 0) @ contacts["normal"][0] - 0.25) <= 1e-12
    # 3 cm/s < t_rest = 4.58 cm/s: perfectly inelastic, exactly 0 (Alg. 11)
    bodies, contacts = head_on(0.03)
    I.resolve_single(bodies, contacts, 0, HP)
    assert I.relative_velocity(bodies, contacts, 0) @ contacts["normal"][0] == 0.0
    assert np.all(bodies["v"] == 0.0)
    # exactly at the threshold the restitution applies (Alg. 11 tests theta_0 > -t_rest)
    theta = np.array([-0.0458, 0.0, 0.0])
    K = np.eye(3)
    dj, dd, kinetic, _ = I.single_impulse(theta, K, K, 0.25, 0.0, 0.0, 0.0458)
    assert dd[0] == -(1.25) * -0.0458 and not kinetic


def sliding_contact(rng, mu_s, mu_k):
    """A random body b on a fixed body a, off-centre contact, closing at ~1 m/s with ~2 m/s slip."""
    bodies, contacts, inertia = random_pair(rng, mu_s=mu_s, mu_k=mu_k, restitution=0.25, fixed_a=True)
    B = I.contact_basis(contacts["normal"][0])
    bodies["w"][1] = 0.3 * rng.normal(size=3)
    r_b = contacts["point"][0] - bodies["position"][1]
    want = B @ np.array([-1.0, 2.0 * rng.uniform(0.5, 1.0), 2.0 * rng.uniform(-1.0, 1.0)])
    bodies["v"][1] = want - np.cross(bodies["w"][1], r_b)
    return bodies, contacts, B


@pytest.mark.parametrize("seed", range(10))
def test_static_friction_stops_the_slip(seed):
    rng = np.random.default_rng(100 + seed)
    bodies, contacts, B = sliding_contact(rng, mu_s=10.0, mu_k=10.0)
    th0 = I.contact_velocity(bodies, contacts, 0, B)
    K_c = I.collision_matrix(bodies, contacts, 0, B)[1]
    dj_ref, _, kinetic, _ = I.single_impulse(th0, K_c, np.linalg.inv(K_c), 0.25, 10.0, 10.0, 0.0458)
    assert not kinetic
    dj = I.resolve_single(bodies, contacts, 0, HP)
    np.testing.assert_array_equal(dj, dj_ref)
    th1 = I.contact_velocity(bodies, contacts, 0, B)
    assert abs(th1[1]) <= 1e-12 and abs(th1[2]) <= 1e-12
    assert abs(th1[0] - 0.25) <= 1e-12                        # -cor x (-1 m/s)
    assert dj[1] ** 2 + dj[2] ** 2 <= 10.0 ** 2 * dj[0] ** 2


@pytest.mark.parametrize("seed", range(10))
def test_kinetic_friction_lands_on_the_cone(seed):
    rng = np.random.default_rng(200 + seed)
    mu_s, mu_k = 0.1, 0.05
    bodies, contacts, B = sliding_contact(rng, mu_s=mu_s, mu_k=mu_k)
    th0 = I.contact_velocity(bodies, contacts, 0, B)
    K_c = I.collision_matrix(bodies, contacts, 0, B)[1]
    K_inv = np.linalg.inv(K_c)
    dj, dd, kinetic, lam = I.single_impulse(th0, K_c, K_inv, 0.25, mu_s, mu_k, 0.0458)
    static = K_inv @ dd
    assert kinetic and 0.0 < lam < 1.0 and dj[0] > 0.0
    np.testing.assert_allclose(dj[1:], lam * static[1:], rtol=1e-15)
    assert abs(dj[1] ** 2 + dj[2] ** 2 - mu_k ** 2 * dj[0] ** 2) <= 1e-12 * mu_k ** 2 * dj[0] ** 2
    assert abs(K_c[0] @ dj - dd[0]) <= 1e-12 * abs(dd[0])     # Eq. 3.5.6: the normal row stays exact
    got = I.resolve_single(bodies, contacts, 0, HP)
    np.testing.assert_array_equal(got, dj)
    th1 = I.contact_velocity(bodies, contacts, 0, B)
    assert abs((th1[0] - th0[0]) - dd[0]) <= 1e-12 * abs(dd[0])
    assert th1[0] == pytest.approx(0.25, abs=1e-12)
    assert np.linalg.norm(th1[1:]) > 0.0                       # still sliding


@pytest.mark.parametrize("n", [(0, 0, 1), (1, 0, 0), (0.6, 0.8, 0), (0, 0, -1), (0, 1, 0), (0.6, 0.0, 0.8),
                               (0.6, 0.8, 1e-13), (1e-300, 0.0, 1.0), "random"])
def test_contact_basis_orthonormal_right_handed(n):
    normals = [np.array(n, float)] if n != "random" else list(np.random.default_rng(3).normal(size=(50, 3)))
    for x in normals:
        x = x / np.linalg.norm(x)
        B = I.contact_basis(x)
        np.testing.assert_allclose(B.T @ B, np.eye(3), atol=1e-14, rtol=0)
        assert abs(np.linalg.det(B) - 1.0) <= 1e-14
        np.testing.assert_array_equal(B[:, 0], x)
        np.testing.assert_array_equal(B[:, 2], np.cross(B[:, 0], B[:, 1]))


def test_contact_basis_branches():
    # Eq. 3.3.2: x2 = 0 -> y' = (x1, -x0, 0); else y' = (0, x2, -x1)
    np.testing.assert_allclose(I.contact_basis((0.6, 0.8, 0.0))[:, 1], (0.8, -0.6, 0.0), atol=1e-16)
    np.testing.assert_array_equal(I.contact_basis((0.0, 0.0, 1.0)), [[0, 0, -1], [0, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(I.contact_basis((1.0, 0.0, 0.0))[:, 1], (0.0, -1.0, 0.0))
    # the tolerance: |x2| < 1e-12 takes the first branch
    assert I.contact_basis((0.6, 0.8, 1e-13))[2, 1] == 0.0
    assert I.contact_basis((0.6, 0.8, 1e-11))[0, 1] == 0.0


@pytest.mark.parametrize("seed", range(10))
def test_collision_matrix_spd_and_predicts_impulse_response(seed):
    rng = np.random.default_rng(300 + seed)
    bodies, contacts, _ = random_pair(rng, fixed_a=bool(seed % 2))
    B = I.contact_basis(contacts["normal"][0])
    K, K_c = I.collision_matrix(bodies, contacts, 0, B)
    np.testing.assert_allclose(K_c, K_c.T, rtol=0, atol=1e-14 * np.abs(K_c).max())
    assert np.linalg.eigvalsh(0.5 * (K_c + K_c.T)).min() > 0
    np.testing.assert_allclose(K_c, B.T @ K @ B, rtol=0, atol=1e-15 * np.abs(K_c).max())
    for _ in range(3):
        di = rng.normal(size=3)
        moved = copy_bodies(bodies)
        u0 = I.relative_velocity(moved, contacts, 0)
        I.apply_impulse(moved, contacts, 0, di)
        du = I.relative_velocity(moved, contacts, 0) - u0
        np.testing.assert_allclose(du, K @ di, rtol=0, atol=1e-12 * np.linalg.norm(du))
        np.testing.assert_allclose(B.T @ du, K_c @ (B.T @ di), rtol=0, atol=1e-12 * np.linalg.norm(du))


def test_fixed_body_never_gets_velocity():
    rng = np.random.default_rng(7)
    bodies, contacts, _ = random_pair(rng, fixed_a=True)
    I.resolve_single(bodies, contacts, 0, HP)
    assert np.all(bodies["v"][0] == 0.0) and np.all(bodies["w"][0] == 0.0)


# ---------------------------------------------------------------------------------------------------------------
# batches
# ---------------------------------------------------------------------------------------------------------------

def test_batches_fixed_bodies_are_barriers():
    fixed = np.array([True, False, False, False, True, False, False, True])
    body_a = np.array([0, 1, 2, 4, 0, 5, 4, 0, 7])
    body_b = np.array([1, 2, 4, 3, 3, 4, 7, 5, 6])
    # 0-1, 1-2, 2-4(fixed), 4-3, 0-3, 5-4, 4-7 (two fixed: dropped), 0-5, 7-6
    out = I.batches(8, fixed, body_a, body_b)
    assert out == [([1, 2], [0, 1, 2]), ([3], [3, 4]), ([5], [5, 7]), ([6], [8])]
    # every dynamic contact is in exactly one batch, contacts between fixed bodies in none
    seen = sorted(c for _, cs in out for c in cs)
    assert seen == [0, 1, 2, 3, 4, 5, 7, 8]
    # two far-apart head-on pairs: two batches, each resolved on its own
    sc = Scene()
    for x0 in (0.0, 5.0):
        sc.sphere((x0, 0, 0), 0.1, v=(0.5, 0, 0))
        sc.sphere((x0 + 0.2, 0, 0), 0.1, v=(-0.5, 0, 0))
    bodies, contacts = sc.build()
    out = I.resolve_contacts(bodies, contacts, HP)
    assert [batch for batch, _ in out] == [([0, 1], [0]), ([2, 3], [1])]
    np.testing.assert_allclose(bodies["v"][:, 0], [-0.125, 0.125, -0.125, 0.125], rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------------------------------------------
# 7-12: penetration correction
# ---------------------------------------------------------------------------------------------------------------

def fallen_sphere(v=(0.3, 0.0, -1.0), depth=0.003, gap_above=None):
    sc = Scene()
    sc.plane((0, 0, 0), (0, 0, 1))
    sc.sphere((0, 0, 0.1 - depth), 0.1, v=v)
    if gap_above is not None:
        sc.sphere((0, 0, 0.3 - depth + gap_above), 0.1)
    return sc.build(margin=0.002)


def test_single_penetration_velocity_based():
    bodies, contacts = fallen_sphere()
    before = copy_bodies(bodies)
    dt = HP["dt"]
    disp, depth, st = I.correct_penetrations(bodies, contacts, [0], dt, HP)
    t_pen, f = -HP["penetration_threshold"], HP["remaining_penetration_fraction"]
    assert st["choices"] == [{"contact": 0, "body": 1, "kind": "V", "count": 1, "displaced": [1]}]
    s = bodies["v"][1] * dt
    d_corr = -contacts["depth"][0] - f * t_pen
    np.testing.assert_array_equal(disp[1], -(d_corr / s[2]) * s)   # back along -s (Eq. 2.3.3a)
    assert np.linalg.norm(np.cross(disp[1], s)) <= 1e-18 and disp[1] @ s < 0
    assert np.all(disp[0] == 0.0)                                  # the ground does not move
    assert abs(-depth[0] - f * t_pen) <= 1e-15                     # residual f t_pen
    for k in before:                                               # nothing rotated or moved in place
        np.testing.assert_array_equal(bodies[k], before[k])
    np.testing.assert_allclose(st["points"][0], contacts["point"][0] + 0.5 * disp[1], rtol=0, atol=1e-16)


def test_gap_scaling_intercept_theorem():
    gap = 2e-4
    bodies, contacts = fallen_sphere(gap_above=gap)
    ground_c, xy = find_contact(contacts, 0, 1), find_contact(contacts, 1, 2)
    assert contacts["depth"][xy] == pytest.approx(-gap, abs=1e-15)
    t_pen, f = -HP["penetration_threshold"], HP["remaining_penetration_fraction"]
    disp, depth, st = I.correct_penetrations(bodies, contacts, [ground_c, xy], HP["dt"], HP)
    assert st["choices"][0]["kind"] == "V" and st["choices"][0]["displaced"] == [1, 2]
    dX, n = disp[1], contacts["normal"][xy]
    s, dC = dX @ n, -contacts["depth"][xy] - f * t_pen
    assert s > dC > 0
    np.testing.assert_allclose(disp[2], ((s - dC) / s) * dX, rtol=1e-15, atol=0)
    assert abs(-depth[xy] - f * t_pen) <= 1e-15                    # the gap is closed down to the residual
    # the same through the DFS alone, both forms
    adjacency = {0: [ground_c], 1: [ground_c, xy], 2: [xy]}
    for prop in (I.propagate_recursive, I.propagate_stack):
        res = prop(1, dX, 0, adjacency, contacts, -contacts["depth"], bodies["fixed"], t_pen, f)
        assert res["status"] == "ok" and sorted(res["displacement"]) == [1, 2]
        np.testing.assert_array_equal(res["displacement"][2], ((s - dC) / s) * dX)
    # a push shorter than the tolerated gap moves nobody
    res = I.propagate_stack(1, 0.5 * dC * n, 0, adjacency, contacts, -contacts["depth"], bodies["fixed"], t_pen, f)
    assert sorted(res["displacement"]) == [1]


def test_unresolvable_sphere_wedged_against_a_wall():
    """Fig. 8(a): pushing the sphere out of the floor pushes it into a fixed ceiling; v = 0, so no V option."""
    sc = Scene()
    sc.plane((0, 0, 0), (0, 0, 1))
    sc.plane((0, 0, 0.197), (0, 0, -1))                    # touching the top of the sphere
    sc.sphere((0, 0, 0.097), 0.1)
    bodies, contacts = sc.build(margin=1e-9)
    assert sorted(contacts["depth"].round(12).tolist()) == [0.0, 0.003]
    disp, depth, st = I.correct_penetrations(bodies, contacts, range(len(contacts["depth"])), HP["dt"], HP)
    assert st["unresolved"] == [find_contact(contacts, 0, 2)]
    assert np.all(disp == 0.0) and np.array_equal(depth, contacts["depth"]) and st["invalid_runs"] == 1


def test_unresolvable_two_bodies_pushing_each_other():
    """Fig. 8(b): two interlocked bodies; either N displacement pushes the mover back into its partner Z."""
    contacts = {"body_a": np.array([0, 0]), "body_b": np.array([1, 1]), "point": np.zeros((2, 3)),
                "normal": np.array([[1.0, 0, 0], [-1.0, 0, 0]]), "depth": np.array([0.003, 0.0]),
                "restitution": np.zeros(2), "mu_s": np.zeros(2), "mu_k": np.zeros(2)}
    bodies = {"position": np.array([[-0.1, 0, 0], [0.1, 0, 0]]), "inv_mass": np.ones(2),
              "inv_inertia": np.array([np.eye(3)] * 2), "v": np.zeros((2, 3)), "w": np.zeros((2, 3)),
              "fixed": np.zeros(2, bool)}
    disp, depth, st = I.correct_penetrations(bodies, contacts, [0, 1], HP["dt"], HP)
    assert st["unresolved"] == [0] and st["invalid_runs"] == 2
    assert np.all(disp == 0.0) and np.array_equal(depth, contacts["depth"])


def chains(left, right, v_left=(0, 0, 0), v_right=(0, 0, 0)):
    """Fig. 9(a): spheres on the x axis, `left` extra spheres left of the penetrating pair (a, b), `right` extra
    spheres right of it; chain contacts overlap 1 mm (not penetrating, but d' < 0: a push passes on in full)."""
    sc = Scene()
    r, gap = 0.1, 0.2 - 0.001
    for k in range(left):
        sc.sphere(((k - left) * gap - 0.1 + 0.0015, 0, 0), r)
    a = sc.sphere((-0.1 + 0.0015, 0, 0), r, v=v_left)
    b = sc.sphere((0.1 - 0.0015, 0, 0), r, v=v_right)
    for k in range(right):
        sc.sphere(((k + 1) * gap + 0.1 - 0.0015, 0, 0), r)
    return sc.build(margin=1e-9), a, b


def test_fig9a_fewest_displaced_bodies():
    (bodies, contacts), a, b = chains(2, 3)
    C = find_contact(contacts, a, b)
    assert contacts["depth"][C] == pytest.approx(0.003)
    disp, depth, st = I.correct_penetrations(bodies, contacts, range(len(contacts["depth"])), HP["dt"], HP)
    assert len(st["choices"]) == 1
    ch = st["choices"][0]
    assert (ch["body"], ch["kind"], ch["count"]) == (a, "N", 3) and ch["displaced"] == [0, 1, 2]
    assert st["penetrating_after"] == []
    np.testing.assert_allclose(disp[0], disp[a], rtol=0, atol=0)   # overlapping chain: moved by the full dX
    # mirrored: more spheres on the left -> the right sphere moves
    (bodies, contacts), a, b = chains(3, 2)
    _, _, st = I.correct_penetrations(bodies, contacts, range(len(contacts["depth"])), HP["dt"], HP)
    assert (st["choices"][0]["body"], st["choices"][0]["count"]) == (b, 3)


def test_fig9b_tie_prefers_velocity_based():
    t_pen, f = -HP["penetration_threshold"], HP["remaining_penetration_fraction"]
    for v_left, v_right, mover in (((0, 0, 0), (-1.0, 0.2, 0.0), "b"), ((1.0, -0.3, 0.1), (0, 0, 0), "a")):
        (bodies, contacts), a, b = chains(0, 0, v_left=v_left, v_right=v_right)
        X = a if mover == "a" else b
        disp, depth, st = I.correct_penetrations(bodies, contacts, [0], HP["dt"], HP)
        assert (st["choices"][0]["body"], st["choices"][0]["kind"], st["choices"][0]["count"]) == (X, "V", 1)
        s = bodies["v"][X] * HP["dt"]
        assert np.linalg.norm(np.cross(disp[X], s)) <= 1e-18 and disp[X] @ s < 0     # back along -s
        assert abs(-depth[0] - f * t_pen) <= 1e-15


def test_tie_rule_velocity_based_beats_the_faster_bodys_normal_correction():
    """The documented resolution of the §2.5 ordering conflict: a is faster (by rotation, so no V option for a) and
    is tried first; its N approach ties with b's V approach on the count; the V approach wins, with or without early
    abort."""
    (bodies, contacts), a, b = chains(0, 0, v_right=(-0.6, 0.0, 0.0))
    contacts["point"][0] = bodies["position"][a] + (0.1, 0.1, 0.0)
    bodies["w"][a] = (0.0, 0.0, -10.0)
    speed_a, speed_b = I.closing_speeds(bodies, contacts, 0)
    assert speed_a > speed_b > 0
    t_pen, f = -HP["penetration_threshold"], HP["remaining_penetration_fraction"]
    kinds = [(x, k) for x, k, _ in I.candidates(bodies, contacts, 0, -contacts["depth"], HP["dt"], t_pen, f)]
    assert kinds == [(a, "N"), (b, "V"), (b, "N")]
    for early in (True, False):
        _, _, st = I.correct_penetrations(bodies, contacts, [0], HP["dt"], HP, early_abort=early)
        assert (st["choices"][0]["body"], st["choices"][0]["kind"]) == (b, "V")


def packed_cluster(rng, nx=3, ny=3, nz=3, r=0.05, overlap=0.003, jitter=0.0012, vscale=1.0, ground=True):
    sc = Scene()
    if ground:
        sc.plane((0, 0, 0), (0, 0, 1))
    step = 2 * r - overlap
    for i in range(nx):
        for j in range(ny):
            for k in range(nz):
                c = np.array([i * step, j * step, r - overlap + k * step]) + rng.uniform(-jitter, jitter, 3)
                v = vscale * rng.normal(size=3) + (0, 0, -vscale)
                sc.sphere(c, r, m=rng.uniform(0.5, 2.0), v=v, w=rng.normal(size=3))
    return sc.build(margin=0.0015, mu_s=0.5, mu_k=0.4)


@pytest.mark.parametrize("seed", range(6))
def test_recursive_and_stack_forms_agree(seed):
    rng = np.random.default_rng(400 + seed)
    bodies, contacts = packed_cluster(rng)
    dt = 1.0 / 60.0                                             # a large step: many V candidates
    t_pen, f = -HP["penetration_threshold"], HP["remaining_penetration_fraction"]
    ids = list(range(len(contacts["depth"])))
    adjacency = {x: [c for c in ids if x in (contacts["body_a"][c], contacts["body_b"][c])]
                 for x in range(len(bodies["fixed"]))}
    dist = -contacts["depth"]
    n_runs = n_multi = 0
    for c in ids:
        if dist[c] >= t_pen:
            continue
        for X, _, dX in I.candidates(bodies, contacts, c, dist, dt, t_pen, f):
            Z = contacts["body_b"][c] if X == contacts["body_a"][c] else contacts["body_a"][c]
            r1 = I.propagate_recursive(X, dX, Z, adjacency, contacts, dist, bodies["fixed"], t_pen, f)
            r2 = I.propagate_stack(X, dX, Z, adjacency, contacts, dist, bodies["fixed"], t_pen, f)
            assert r1["status"] == r2["status"]
            if r1["status"] == "ok":
                n_runs += 1
                n_multi += r1["count"] > 1
                assert sorted(r1["displacement"]) == sorted(r2["displacement"]) and r1["count"] == r2["count"]
                for x in r1["displacement"]:
                    np.testing.assert_array_equal(r1["displacement"][x], r2["displacement"][x])
                assert sorted(r1["affected"]) == sorted(r2["affected"])
    assert n_runs > 10 and n_multi > 0
    out1 = I.correct_penetrations(bodies, contacts, ids, dt, HP, form="recursive")
    out2 = I.correct_penetrations(bodies, contacts, ids, dt, HP, form="stack")
    np.testing.assert_array_equal(out1[0], out2[0])
    np.testing.assert_array_equal(out1[1], out2[1])
    assert out1[2]["choices"] == out2[2]["choices"] and out1[2]["unresolved"] == out2[2]["unresolved"]


@pytest.mark.parametrize("seed", range(6))
def test_global_property_after_correction(seed):
    rng = np.random.default_rng(500 + seed)
    bodies, contacts = packed_cluster(rng, nx=4, ny=3, nz=3, overlap=0.004, vscale=0.7)
    bodies["asleep"][rng.random(len(bodies["asleep"])) < 0.5] = True
    bodies["asleep"][bodies["fixed"]] = False
    asleep0 = bodies["asleep"].copy()
    dt = 1.0 / 60.0
    t_pen = -HP["penetration_threshold"]
    ids = list(range(len(contacts["depth"])))
    before = copy_bodies(bodies)
    before.pop("asleep")
    disp, depth, st = I.correct_penetrations(bodies, contacts, ids, dt, HP)
    assert len(st["penetrating_before"]) > 10 and st["choices"]
    assert set(c for c in ids if -depth[c] < t_pen) <= set(st["unresolved"])
    assert st["penetrating_after"] == [c for c in ids if -depth[c] < t_pen]
    assert np.all(disp[bodies["fixed"]] == 0.0)
    moved = np.flatnonzero(np.any(disp != 0.0, axis=1))
    assert set(moved.tolist()) <= set(st["displaced"])
    assert not bodies["asleep"][st["displaced"]].any()           # wake condition 2
    assert all(bodies["asleep"][x] == asleep0[x] for x in range(len(asleep0)) if x not in st["displaced"])
    # every contact touched only ever gets shallower than the residual or keeps its distance
    f = HP["remaining_penetration_fraction"]
    assert np.all(-depth >= np.minimum(-contacts["depth"], f * t_pen) - 1e-15)
    for k in before:
        np.testing.assert_array_equal(bodies[k], before[k])
    # the early abort never changes the outcome
    bodies["asleep"][:] = asleep0
    d2, dep2, st2 = I.correct_penetrations(bodies, contacts, ids, dt, HP, early_abort=False)
    np.testing.assert_array_equal(disp, d2)
    np.testing.assert_array_equal(depth, dep2)
    assert st2["dfs_runs"] >= st["dfs_runs"] and st2["early_aborts"] == 0


# ---------------------------------------------------------------------------------------------------------------
# 13-15: sleeping, wake-up, gravity damping
# ---------------------------------------------------------------------------------------------------------------

def one_body(v=(0, 0, 0), w=(0, 0, 0), r_max=0.1, rwa=0.0):
    return {"position": np.zeros((1, 3)), "inv_mass": np.ones(1), "inv_inertia": np.eye(3)[None],
            "v": np.array([v], float), "w": np.array([w], float), "fixed": np.zeros(1, bool),
            "r_max": np.array([r_max]), "rwa": np.array([rwa]), "asleep": np.zeros(1, bool)}


def test_sleep_bound():
    thr = HP["sleep_threshold"]
    s = settings(sleep_bias=0.0)
    r = 0.1
    for scale, sleeps in ((0.999, True), (1.001, False)):
        # motion bound 2(v.v + w.w r^2) = scale^2 thr^2 with half from v, half from w
        v = scale * thr / 2.0
        wz = scale * thr / (2.0 * r)
        b = one_body(v=(v, 0, 0), w=(0, 0, wz), r_max=r)
        assert I.motion_bound_sq(b["v"][0], b["w"][0], r) == pytest.approx(scale ** 2 * thr ** 2, rel=1e-14)
        slept = I.sleep_step(b, s)
        assert (slept == [0]) is sleeps and bool(b["asleep"][0]) is sleeps
        if sleeps:
            assert np.all(b["v"] == 0) and np.all(b["w"] == 0) and b["rwa"][0] == thr ** 2
        else:
            assert b["v"][0, 0] == v and b["rwa"][0] == pytest.approx(scale ** 2 * thr ** 2, rel=1e-14)


def test_woken_body_does_not_fall_straight_back_asleep():
    thr = HP["sleep_threshold"]
    b = one_body(v=(0.1 * thr, 0, 0))
    assert I.sleep_step(b, HP) == [0] and b["rwa"][0] == thr ** 2
    b["asleep"][0] = False                                       # woken...
    b["v"][0] = (0.75 * thr, 0, 0)                               # ...with motion^2 = 1.125 thr^2 > thr^2
    assert I.sleep_step(b, HP) == []
    assert b["rwa"][0] > thr ** 2


def test_rwa_capped_and_sleep_after_rest():
    thr = HP["sleep_threshold"]
    b = one_body(v=(5.0, 0, 0))
    for _ in range(5):
        I.sleep_step(b, HP)
        assert b["rwa"][0] <= HP["sleep_rwa_max"]
    assert b["rwa"][0] == HP["sleep_rwa_max"] == 10 * thr ** 2
    b["v"][0] = 0.0
    steps = 0
    while not b["asleep"][0]:
        I.sleep_step(b, HP)
        steps += 1
    assert steps == math.ceil(math.log(0.1) / math.log(HP["sleep_bias"]))     # 4 quiet steps with bias 0.5


def test_wake_conditions_2_3_5_6():
    # 2: displaced by penetration correction -> see test_global_property_after_correction; here a single sphere
    bodies, contacts = fallen_sphere()
    bodies["asleep"][1] = True
    I.correct_penetrations(bodies, contacts, [0], HP["dt"], HP)
    assert not bodies["asleep"][1]
    # 3: a moving sphere hits a sleeping one
    bodies, contacts = head_on(1.0)
    bodies["v"][1] = 0.0
    bodies["asleep"][1] = True
    I.resolve_batch(bodies, contacts, [0], HP)
    assert not bodies["asleep"][1] and bodies["v"][1, 0] > 0
    # 5 and 6: a sphere resting on two spheres (side by side, touching) on the ground
    g = HP["gravity"]
    sc = Scene()
    sc.plane((0, 0, 0), (0, 0, 1))
    sc.sphere((0, 0, 0.1), 0.1)
    sc.sphere((0.1, 0, 0.1 + 0.1 * math.sqrt(3.0)), 0.1)
    sc.sphere((0.2, 0, 0.1), 0.1)
    bodies, contacts = sc.build()
    m = len(contacts["depth"])

    def without(body):
        keep = [c for c in range(m) if body not in (contacts["body_a"][c], contacts["body_b"][c])]
        return {k: v[keep] for k, v in contacts.items()}

    counts = I.support_counts(4, bodies["fixed"], contacts, g)
    assert counts.tolist() == [0, 1, 2, 1]                        # the side contact 1-3 is not in gravity direction
    bodies["asleep"][1:] = True
    assert I.support_wake(bodies, contacts, g, counts)[1] == []  # nothing changed: nobody wakes
    # 5: sphere 3 is removed: the top sphere has 1 support instead of 2; sphere 1 only lost a SIDE neighbour, so it
    # stays asleep (the negative test)
    bodies["asleep"][3] = False                                   # (removed: no longer simulated)
    new_counts, woken = I.support_wake(bodies, without(3), g, counts)
    assert new_counts.tolist()[:3] == [0, 1, 1] and woken == [2]
    # 6: a sleeping body teleported into the air (no contact in gravity direction, even if it had none before)
    bodies["asleep"][1:] = True
    prev = counts.copy()
    prev[2] = 0
    _, woken = I.support_wake(bodies, without(2), g, prev)
    assert woken == [2]


def test_gravity_damping_amounts():
    g = np.array(HP["gravity"])
    dt = HP["dt"]
    slow = one_body()
    fast = one_body(v=(0.2, 0, 0))
    spin = one_body(w=(0, 0, 0.0833 / 0.1))                      # bound 2 (w r)^2 = 2 thr^2: not damped
    asleep = one_body()
    asleep["asleep"][0] = True
    assert I.velocity_update(slow, HP) == [0]
    np.testing.assert_array_equal(slow["v"][0], (1 - 0.7) * g * dt)   # exactly 0.3 g dt
    assert slow["v"][0, 2] == pytest.approx(-0.3 * 10 / 240, rel=1e-15)
    assert I.velocity_update(fast, HP) == []
    np.testing.assert_array_equal(fast["v"][0], np.array([0.2, 0, 0]) + 1.0 * g * dt)
    assert I.velocity_update(spin, HP) == [] and spin["v"][0, 2] == (g * dt)[2]
    assert I.velocity_update(asleep, HP) == [] and np.all(asleep["v"] == 0)
    ha = one_body()
    assert I.velocity_update(ha, HA) == []
    np.testing.assert_array_equal(ha["v"][0], g * HA["dt"])          # damping off


# ---------------------------------------------------------------------------------------------------------------
# 16-17 and the scenario claims: selection, shock propagation, Fig. 21, Newton's cradle, contact order
# ---------------------------------------------------------------------------------------------------------------

def pyramid(rows=5, r=0.1, mu=0.5, walls=True):
    """A 2-D pyramid of touching spheres on the ground (rows, rows-1, ..., 1), every sphere falling at g dt."""
    sc = Scene()
    sc.plane((0, 0, 0), (0, 0, 1))
    if walls:
        sc.plane((-r, 0, 0), (1, 0, 0))
        sc.plane(((2 * rows - 1) * r, 0, 0), (-1, 0, 0))
    vz = HP["gravity"][2] * HP["dt"]
    for k in range(rows):
        for i in range(rows - k):
            sc.sphere(((2 * i + k) * r, 0, r + k * r * math.sqrt(3.0)), r, v=(0, 0, vz))
    return sc.build(margin=1e-9, mu_s=mu, mu_k=mu)


def test_selection_is_the_full_linear_search():
    """16: the affected-contact bookkeeping never changes the sequence: replaying it with Delta-theta_0 of EVERY
    contact recomputed from scratch picks the same contact (min, ties lowest index) at every iteration."""
    bodies, contacts = pyramid(4)
    s = settings(max_iterations_factor=0, shock_propagation=False)
    replay = copy_bodies(bodies)
    st = I.resolve_batch(bodies, contacts, range(len(contacts["depth"])), s)
    assert st["iterations"] > 20 and st["closing_left"] == []
    t_res = -s["resolution_threshold"]
    for C, u0 in st["picks"]:
        all_u0 = {c: I.contact_velocity(replay, contacts, c)[0] for c in range(len(contacts["depth"]))}
        closing = [c for c, u in all_u0.items() if u < t_res]
        assert C == min(closing, key=lambda c: (all_u0[c], c)) and all_u0[C] == u0
        I.resolve_single(replay, contacts, C, s)
    np.testing.assert_array_equal(replay["v"], bodies["v"])
    np.testing.assert_array_equal(replay["w"], bodies["w"])


def tower(n=6, r=0.1):
    sc = Scene()
    sc.plane((0, 0, 0), (0, 0, 1))
    vz = HP["gravity"][2] * HP["dt"]
    for k in range(n):
        sc.sphere((0, 0, r + 2 * r * k), r, v=(0, 0, vz))
    return sc.build(margin=1e-9, mu_s=0.5, mu_k=0.5)


def test_shock_propagation_freeze_and_restore():
    bodies, contacts = tower(6)
    im0, ii0 = bodies["inv_mass"].copy(), bodies["inv_inertia"].copy()
    st = I.resolve_batch(bodies, contacts, range(len(contacts["depth"])), HP)
    assert st["cap_hit"] and st["iterations"] == 2 * len(contacts["depth"]) and st["closing_left_global"]
    assert [stage["bodies"] for stage in st["shock_stages"]] == [[1], [2], [3], [4], [5], [6]]
    assert bodies["inv_mass"].tobytes() == im0.tobytes() and bodies["inv_inertia"].tobytes() == ii0.tobytes()
    for stage in st["shock_stages"]:                             # frozen velocities never change afterwards
        for X in stage["bodies"]:
            np.testing.assert_array_equal(bodies["v"][X], stage["frozen_v"][X])
            np.testing.assert_array_equal(bodies["w"][X], stage["frozen_w"][X])
    # bottom-up: every body but the top one ends with (exactly) no vertical velocity left to remove
    assert st["shock_iterations"] > 0
    assert all(abs(bodies["v"][x, 2]) < HP["resolution_threshold"] for x in range(1, 6))
    # the same tower without shock propagation keeps its closing contacts at the cap
    b2, c2 = tower(6)
    st2 = I.resolve_batch(b2, c2, range(len(c2["depth"])), settings(shock_propagation=False))
    assert st2["closing_left"] and not st2["shock_stages"]


def test_shock_stages_follow_contact_layers():
    """Fig. 23(b)-like: a pyramid; stage k holds the bodies k contacts away from the ground/walls."""
    bodies, contacts = pyramid(4)
    st = I.resolve_batch(bodies, contacts, range(len(contacts["depth"])), settings(max_iterations_factor=0.5))
    assert st["cap_hit"]
    stages = [stage["bodies"] for stage in st["shock_stages"]]
    assert stages == [[3, 4, 5, 6], [7, 8, 9], [10, 11], [12]]
    for stage in st["shock_stages"]:
        assert all(int(contacts["body_a"][c]) in stage["bodies"] or int(contacts["body_b"][c]) in stage["bodies"]
                   for c in stage["contacts"])


def test_fig21_two_spheres_toward_a_wall():
    sc = Scene()
    ground = sc.plane((0, 0, 0), (0, 0, 1))
    wall = sc.plane((0.5, 0, 0), (-1, 0, 0))
    s1 = sc.sphere((0.2, 0, 0.1), 0.1, v=(1.0, 0, 0))
    s2 = sc.sphere((0.4, 0, 0.1), 0.1, v=(1.0, 0, 0))
    bodies, contacts = sc.build(restitution=1.0)
    assert len(contacts["depth"]) == 4
    c1, c2 = find_contact(contacts, s1, s2), find_contact(contacts, wall, s2)
    st = I.resolve_batch(bodies, contacts, range(4), HP)
    assert st["sequence"] == [c2, c1, c2]
    np.testing.assert_array_equal(bodies["v"][[s1, s2]], [[-1.0, 0, 0], [-1.0, 0, 0]])
    assert np.all(bodies["w"] == 0.0) and np.all(bodies["v"][[ground, wall]] == 0.0)


def cradle(n=5, pulled=1, both_ends=False, speed=1.0):
    sc = Scene()
    for i in range(n):
        v = speed if i < pulled else (-speed if both_ends and i >= n - pulled else 0.0)
        sc.sphere((0.2 * i, 0, 0), 0.1, v=(v, 0, 0))
    return sc.build(restitution=1.0)


def kinetic_energy(bodies):
    return sum(0.5 / bodies["inv_mass"][i] * bodies["v"][i] @ bodies["v"][i] for i in range(len(bodies["v"]))
               if not bodies["fixed"][i])


@pytest.mark.parametrize("n,pulled,both", [(5, 1, False), (5, 2, False), (6, 3, False), (5, 1, True),
                                           (6, 2, True)])
def test_newtons_cradle(n, pulled, both):
    bodies, contacts = cradle(n, pulled, both)
    assert len(contacts["depth"]) == n - 1
    e0 = kinetic_energy(bodies)
    st = I.resolve_batch(bodies, contacts, range(n - 1), settings(max_iterations_factor=0))
    want = np.zeros(n)
    want[n - pulled:] = 1.0
    if both:
        want[:pulled] = -1.0
    np.testing.assert_array_equal(bodies["v"][:, 0], want)
    assert np.all(bodies["v"][:, 1:] == 0.0) and np.all(bodies["w"] == 0.0)
    assert abs(kinetic_energy(bodies) - e0) <= 1e-12 * e0
    assert st["closing_left"] == []
    if (n, pulled, both) == (5, 1, False):
        assert st["sequence"] == [0, 1, 2, 3]


def test_closing_speed_order_needs_fewer_iterations_than_arbitrary():
    """§5.4 on a small pile (cap off, t_res = 83.4 um/s): the fastest-closing-first order needs fewer iterations."""
    s = settings(max_iterations_factor=0, shock_propagation=False)
    totals = {}
    for order in ("closing_speed", "arbitrary"):
        bodies, contacts = pyramid(4)
        st = I.resolve_batch(bodies, contacts, range(len(contacts["depth"])), s, order=order)
        assert st["closing_left"] == [] and not st["safety_stop"]
        totals[order] = st["iterations"]
    # 294 against 1491 (-80 %; 5 rows: 718 against 4221, -83 %; thesis §5.4: -85.8 % and -84.5 %)
    assert totals["closing_speed"] <= 0.5 * totals["arbitrary"], totals


def test_unlimited_cap_resolves_everything_and_presets():
    assert HP["max_iterations_factor"] == 2 and HA["max_iterations_factor"] == 0
    assert (HP["dt"], HA["dt"]) == (1 / 240, 1 / 960)
    assert HP["shock_propagation"] and not HA["shock_propagation"]
    assert (HP["restitution_threshold"], HA["restitution_threshold"]) == (0.0458, 0.0115)
    assert (HP["gravity_damping"], HA["gravity_damping"]) == (0.7, 0.0)
    bodies, contacts = tower(6)
    st = I.resolve_batch(bodies, contacts, range(len(contacts["depth"])), HA)
    assert st["closing_left"] == [] and not st["cap_hit"] and st["iterations"] > 12
    assert all(I.contact_velocity(bodies, contacts, c)[0] >= -HA["resolution_threshold"]
               for c in range(len(contacts["depth"])))
