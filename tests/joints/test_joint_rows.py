"""Joint rows against their position constraints (Catto 001 §3.4's recipe run backwards): for every
joint type the row J must be the time derivative of the row's position error C,  J v = dC/dt, checked
by central differences of C along random rigid motions. C is read back from the row's target with
Baumgarte feedback beta = 1 / dt (target = -C / dt); J v is the kernel's own row times the velocities.

At a pose that satisfies the joint (its creation pose) every row must match. Away from it, the rows
whose Jacobian is exact everywhere (ball points, distance, the slider's line rows, limits) must still
match; the axis and angular-lock rows, and the hinge angle's rate n_a . (w_b - w_a), are linearised at
C = 0 and are not checked there.
"""

import numpy as np
import pytest

import tumble as tb
from tumble._core import types as T
from tumble._core.math3d import quat_from_axis_angle
from tumble._core.stages import prepare_rows

DT = 0.01
EPS = 1e-6


def _qmul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def _rotvec_quat(v):
    a = float(np.linalg.norm(v))
    return np.array([1.0, 0, 0, 0]) if a < 1e-300 else quat_from_axis_angle(v / a, a)


def _world(rng, make_joint):
    w = tb.World(gravity=(0, 0, 0), joint_correction="baumgarte", joint_baumgarte=1.0,
                 max_correction_speed=1e12, warm_start=False)
    qa = _rotvec_quat(rng.normal(size=3))
    qb = _rotvec_quat(rng.normal(size=3))
    a = w.add_body(tb.Box((0.3, 0.2, 0.1)), position=(0, 0, 1), orientation=qa, mass=2.0)
    b = w.add_body(tb.Box((0.2, 0.1, 0.15)), position=(0.5, 0.1, 1.2), orientation=qb, mass=1.0)
    j = w.add_joint(make_joint(a, b))
    return w, a, b, j


def _rows(w, j):
    """(J (k, 2, 6), C (k,), kind (k,), bodies (k, 2)) of joint j at the current poses."""
    offset = prepare_rows(w._core, DT)
    js, r = w.joint_store, w.rows
    s = offset + js.joint_row_start[j]
    e = s + js.joint_row_count[j]
    return r.row_J[s:e].copy(), -r.row_bias[s:e] * DT, r.row_kind[s:e].copy(), r.row_body[s:e].copy()


def _moved(w, pose, vel, t):
    """Set the bodies to pose advanced by t along the rigid velocities vel."""
    for i, (x, q) in enumerate(pose):
        v, om = vel[i]
        w.set_position(i, x + t * v)
        w.set_orientation(i, _qmul(_rotvec_quat(t * om), q))


def _check(w, j, rng, rows_to_check):
    pose = [(w.position(i).copy(), w.orientation(i).copy()) for i in range(2)]
    vel = [(rng.normal(size=3), rng.normal(size=3)) for _ in range(2)]
    J, C0, kind, body = _rows(w, j)
    jv = np.array([sum(J[k, s, :3] @ vel[body[k, s]][0] + J[k, s, 3:] @ vel[body[k, s]][1]
                       for s in range(2) if body[k, s] >= 0) for k in range(len(kind))])
    _moved(w, pose, vel, EPS)
    Cp = _rows(w, j)[1]
    _moved(w, pose, vel, -EPS)
    Cm = _rows(w, j)[1]
    _moved(w, pose, vel, 0.0)
    dC = (Cp - Cm) / (2 * EPS)
    checked = 0
    for k in range(len(kind)):
        if kind[k] == T.ROW_MOTOR or not rows_to_check(k, kind[k]):
            continue
        assert jv[k] == pytest.approx(dC[k], rel=1e-5, abs=1e-6), f"row {k} (kind {kind[k]})"
        checked += 1
    return C0, checked


JOINTS = {
    "ball": (lambda a, b: tb.Ball(a, b, anchor=(0.2, 0.05, 1.1)), 3, lambda k, kind: True),
    "hinge": (lambda a, b: tb.Hinge(a, b, anchor=(0.2, 0.05, 1.1), axis=(0.3, 1, 0.2), limits=(-0.4, 0.5),
                                    motor=tb.Motor(speed=1.0)), 8, lambda k, kind: k < 3),
    "slider": (lambda a, b: tb.Slider(a, b, anchor=(0.2, 0.05, 1.1), axis=(1, 0.2, -0.3), limits=(-0.2, 0.3)), 7,
               lambda k, kind: k < 2 or kind == T.ROW_LIMIT),
    "distance": (lambda a, b: tb.Distance(a, b, (0.1, 0, 1.05), (0.45, 0.1, 1.25), length=0.5), 1,
                 lambda k, kind: True),
    "fixed": (lambda a, b: tb.Fixed(a, b, anchor=(0.25, 0.05, 1.1)), 6, lambda k, kind: k < 3),
}


@pytest.mark.parametrize("name", sorted(JOINTS))
@pytest.mark.parametrize("seed", range(3))
def test_rows_are_the_derivative_of_the_position_constraint(name, seed):
    make, nrows, exact_rows = JOINTS[name]
    rng = np.random.default_rng(seed)
    w, a, b, j = _world(rng, make)
    # at the creation pose every row (motor aside) is the derivative of its error
    C0, checked = _check(w, j, rng, lambda k, kind: True)
    assert checked == nrows - (1 if name == "hinge" else 0)
    eq = np.array([True] * len(C0))
    J, C, kind, _ = _rows(w, j)
    eq = kind == T.ROW_JOINT
    assert np.abs(C[eq]).max() < 1e-12 if name != "distance" else abs(C[0] - (np.linalg.norm(
        np.array([0.45, 0.1, 1.25]) - np.array([0.1, 0, 1.05])) - 0.5)) < 1e-12
    # away from it, the rows whose Jacobian is exact everywhere
    for i in (a, b):
        w.set_position(i, w.position(i) + rng.normal(scale=0.05, size=3))
        w.set_orientation(i, _qmul(_rotvec_quat(rng.normal(scale=0.1, size=3)), w.orientation(i)))
    C1, checked = _check(w, j, rng, exact_rows)
    assert checked >= 1
    assert np.abs(C1[eq]).max() > 1e-3     # the pose really violates the joint


def test_ball_error_is_the_anchor_separation():
    rng = np.random.default_rng(7)
    w, a, b, j = _world(rng, JOINTS["ball"][0])
    w.set_position(b, w.position(b) + np.array([0.01, -0.02, 0.03]))
    _, C, _, _ = _rows(w, j)
    p = w.joint_anchors()[j]
    assert C == pytest.approx(p[1] - p[0], abs=1e-12)
    assert np.linalg.norm(C) == pytest.approx(w.joint_errors()[j], abs=1e-12)
