"""The exact joint tree solve (``_core.dynamics.joints.tree``) against dense linear algebra
(``tests/naive/joint_tree.py``), its choice of tree (loops left to the sweeps) and the Newton
projection's invariant (the tree joints' position errors vanish)."""

import numpy as np
import pytest

import tumble as tb
from tests.naive.joint_tree import dense_equality_solve, dense_inverse_mass, dense_newton_displacement
from tumble._core import stages
from tumble._core import types as T
from tumble._core.dynamics.joints.tree import NODE_JOINT, JointTree, project_tree, tree_sweep


def _tree_world(loop: bool):
    """A branched articulation of every joint type hanging from the world (a trunk box, a ball chain,
    a hinge, a slider, a distance link and a weld), bodies of different shapes and masses, slightly
    rotated so no matrix is diagonal; ``loop`` adds a ball joint closing a loop between two branches
    and a second joint to the world (a loop through the world)."""
    rng = np.random.default_rng(7)
    w = tb.World(gravity=(0, 0, -9.81), solver="pgs")

    def q():
        v = rng.normal(size=4)
        return tuple(v / np.linalg.norm(v))

    trunk = w.add_body(tb.Box((0.2, 0.1, 0.3)), position=(0, 0, 2), orientation=q(), mass=3.0)
    w.add_joint(tb.Ball(None, trunk, (0, 0, 2.3)))
    a1 = w.add_body(tb.Capsule(0.05, 0.2), position=(0.4, 0, 2), orientation=q(), mass=1.0)
    w.add_joint(tb.Ball(trunk, a1, (0.2, 0, 2)))
    a2 = w.add_body(tb.Sphere(0.1), position=(0.8, 0, 2), mass=0.5)
    w.add_joint(tb.Hinge(a1, a2, (0.6, 0, 2), (0, 1, 0)))
    b1 = w.add_body(tb.Box((0.1, 0.1, 0.2)), position=(-0.4, 0, 2), orientation=q(), mass=2.0)
    w.add_joint(tb.Slider(trunk, b1, (-0.2, 0, 2), (1, 0, 0)))
    b2 = w.add_body(tb.Sphere(0.08), position=(-0.4, 0, 1.4), mass=0.7)
    w.add_joint(tb.Distance(b1, b2, (-0.4, 0, 1.8), (-0.4, 0, 1.48)))
    c1 = w.add_body(tb.Box((0.1, 0.2, 0.1)), position=(0, 0, 1.5), orientation=q(), mass=1.5)
    w.add_joint(tb.Fixed(trunk, c1, (0, 0, 1.7)))
    if loop:
        w.add_joint(tb.Ball(a2, c1, (0.4, 0, 1.5)))            # closes trunk-a1-a2-c1-trunk
        w.add_joint(tb.Ball(None, b2, (-0.4, 0, 1.3)))         # a second way to the world
    return w


def _rows(w):
    core = w._core
    stages.refresh_frames(core)
    offset = stages.prepare_rows(core, 1 / 60)
    return core, offset


@pytest.mark.parametrize("loop", [False, True])
def test_tree_holds_every_joint_of_a_tree_and_leaves_loops_out(loop):
    w = _tree_world(loop)
    core, _ = _rows(w)
    tree = JointTree(core)
    n = core.joint_store.count
    expected = np.ones(n, dtype=bool)
    if loop:
        expected[-2:] = False
    np.testing.assert_array_equal(tree.in_tree, expected)
    kinds = tree.kind[: tree.count]
    assert (kinds == NODE_JOINT).sum() == expected.sum()
    assert (kinds != NODE_JOINT).sum() == 6          # every dynamic body once
    # each node's parent comes before it (the order the factor and the solves rely on)
    par = tree.parent[: tree.count]
    assert np.all(par < np.arange(tree.count))
    assert (par < 0).sum() == 1                      # one root: the world joint


@pytest.mark.parametrize("refine", [0, 2])
def test_tree_sweep_is_the_dense_solve_of_the_tree_rows(refine):
    """With and without iterative refinement (``tree.REFINE_STEPS``)."""
    w = _tree_world(loop=True)
    core, offset = _rows(w)
    b, r, js = core.bodies, core.rows, core.joint_store
    rng = np.random.default_rng(3)
    nb = b.count
    v_lin = rng.normal(size=(nb, 3))
    v_ang = rng.normal(size=(nb, 3))
    v_lin[b.body_fixed[:nb]] = 0.0
    v_ang[b.body_fixed[:nb]] = 0.0
    r.row_bias[: r.count] = rng.normal(size=r.count)
    r.row_lambda[: r.count] = rng.normal(size=r.count)
    r.row_cfm[offset: r.count] = np.where(rng.random(r.count - offset) < 0.3, 0.05, 0.0)
    tree = JointTree(core)
    tree.factor(core, offset)
    rows = np.flatnonzero(r.row_group[: r.count] == -1)
    assert len(rows) == sum(T.JOINT_BASE_ROWS[t] for t, k in zip(js.joint_type[: js.count], tree.in_tree) if k)
    Minv = dense_inverse_mass(b.body_inv_mass, b.body_inv_inertia_world, b.body_fixed, nb)
    v6 = np.concatenate([v_lin, v_ang], axis=1).reshape(-1)
    want_v, want_lam = dense_equality_solve(rows, r.row_body, r.row_J, r.row_bias, r.row_cfm, r.row_lambda[: r.count],
                                            Minv, v6)
    lam = r.row_lambda.copy()
    tree_sweep(tree.count, tree.kind, tree.ref, tree.parent, js.joint_type, js.joint_row_start, offset, r.row_body,
               r.row_J, r.row_bias, r.row_cfm, r.row_inv_diag, lam, tree.D_fac, tree.F, tree.H_diag, refine, tree.y,
               tree.x, tree.z, v_lin, v_ang)
    got = np.concatenate([v_lin, v_ang], axis=1).reshape(-1)
    np.testing.assert_allclose(got, want_v, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(lam[: r.count], want_lam, rtol=1e-9, atol=1e-9)


def _equality_errors(w, tree):
    """(rows, -C) of the tree joints' equality rows at the current poses: the rows with Baumgarte
    feedback of the whole error per step (joint_baumgarte 1, no speed cap) have the target -C / dt."""
    core = w._core
    s = core.settings
    saved = {k: getattr(s, k) for k in ("joint_correction", "joint_baumgarte", "max_correction_speed")}
    s.update(joint_correction="baumgarte", joint_baumgarte=1.0, max_correction_speed=1e9)
    _, offset = _rows(w)
    s.update(**saved)
    r = core.rows
    tree.factor(core, offset)
    rows = np.flatnonzero(r.row_group[: r.count] == -1)
    return rows, r.row_bias[rows] / 60.0


def test_one_newton_step_is_the_dense_projection_and_more_steps_close_the_tree():
    w = _tree_world(loop=False)
    core = w._core
    b, js = core.bodies, core.joint_store
    rng = np.random.default_rng(5)
    nb = b.count
    dyn = ~b.body_fixed[:nb]
    b.body_position[:nb][dyn] += 0.01 * rng.normal(size=(dyn.sum(), 3))     # tear every joint by ~1 cm
    stages.refresh_frames(core)
    tree = JointTree(core)
    rows, minus_c = _equality_errors(w, tree)
    assert np.abs(minus_c).max() > 5e-3
    r = core.rows
    Minv = dense_inverse_mass(b.body_inv_mass, b.body_inv_inertia_world, b.body_fixed, nb)
    want = dense_newton_displacement(rows, r.row_body, r.row_J, -minus_c, Minv).reshape(nb, 6)
    x0 = b.body_position[:nb].copy()

    def project(iterations, tolerance=0.0):
        return project_tree(tree.count, tree.kind, tree.ref, tree.parent, tree.side, js.joint_type, js.joint_body,
                            js.joint_anchor, js.joint_axis, js.joint_ref, js.joint_rel_q, js.joint_length,
                            js.joint_soft, js.joint_has_limits, js.joint_limit, js.joint_motor_mode, js.joint_motor,
                            js.joint_row_start, core.joint_layout.row_total, js.joint_impulse, js.joint_coord,
                            js.joint_lever, b.body_position[:nb], b.body_orientation, b.body_mass, b.body_inv_mass,
                            b.body_inv_inertia_world, b.body_fixed, 1 / 60, iterations, tolerance,
                            np.zeros(0, dtype=np.int64))

    first, _, _ = project(1)
    assert first == pytest.approx(np.abs(minus_c).max(), rel=1e-9)
    np.testing.assert_allclose(b.body_position[:nb] - x0, want[:, :3], atol=1e-12)
    stages.refresh_frames(core)
    first, last, undone = project(4, 1e-12)
    assert not undone
    assert last < 1e-10           # Newton: quadratic convergence from ~1e-4 after the first step
    stages.refresh_frames(core)
    _, after = _equality_errors(w, tree)
    assert np.abs(after).max() < 1e-10
