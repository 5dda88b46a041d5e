"""The pgs substep loop of a step with contact rows only runs in one kernel call
(``pgs.kernels.contact_substeps``, issue 14's fixed cost); with ``World.profile_stages`` the solver
calls the same kernels one by one, timing each stage. Both must give the same state bit for bit, the
same counters and merit history, under the settings that take the loop's other branches: manifold
blocks or scalar sweeps, the pseudo-velocity pass of deep overlaps, both rotation integrators,
restitution, record_merit and an early stop by tolerance."""

import numpy as np
import pytest

import tumble as tb
from tumble.errors import SettingsError


def _world(profile_stages, **settings):
    w = tb.World(solver="pgs", **settings)
    w.profile_stages = profile_stages
    w.add_body(tb.Plane(), fixed=True)
    for k in range(4):          # a column of boxes, the lowest 5 cm into the ground (a deep overlap)
        w.add_body(tb.Box((0.5, 0.5, 0.5)), position=(0.02 * k, 0.0, 0.45 + 1.0 * k),
                   orientation=(1.0, 0.01 * k, 0.0, 0.0), angular_velocity=(0.0, 0.3 * k, 0.0))
    w.add_body(tb.Sphere(0.3), position=(3.0, 0.0, 2.0), linear_velocity=(0.0, 0.0, -4.0),
               material=tb.Material(restitution=0.5))
    w.add_body(tb.Capsule(0.2, 0.6), position=(-3.0, 0.0, 1.0), angular_velocity=(2.0, 1.0, 0.0))
    return w


def _run(profile_stages, steps=90, **settings):
    w = _world(profile_stages, **settings)
    merits = []
    for _ in range(steps):
        w.step(1 / 60)
        merits.append(np.array(w.merit_history))
    counters = {k: w.counters[k] for k in ("iterations", "merit", "rows", "contacts")}
    return w.state_hash(), counters, merits, w.profile


CASES = [
    {},
    {"normal_block_solve": False},
    {"rotation_integrator": "euler"},
    {"record_merit": True},
    {"tolerance": 1e-3, "substeps": 3},
    {"split_speed": 0.05},
]


@pytest.mark.parametrize("settings", CASES, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "defaults")
def test_fused_substeps_are_the_stage_calls_bit_for_bit(settings):
    fused_hash, fused_counters, fused_merits, fused_profile = _run(False, **settings)
    staged_hash, staged_counters, staged_merits, staged_profile = _run(True, **settings)
    assert fused_hash == staged_hash
    assert fused_counters == staged_counters
    assert all(np.array_equal(a, b) for a, b in zip(fused_merits, staged_merits, strict=True))
    assert "substeps" in fused_profile and "substeps" not in staged_profile
    assert {"solve", "integrate", "relax"} <= set(staged_profile)


def test_profile_stages_rejects_a_non_bool():
    w = tb.World()
    with pytest.raises(SettingsError, match="profile_stages"):
        w.profile_stages = "yes"
    assert w.profile_stages is False


# ---------------------------------------------------------------------------------------- joints
def _joint_world(profile_stages, **settings):
    """Every joint type in the air (no contact rows: ``pgs.kernels.joint_substeps``): limits, both
    motor kinds, a distance spring, a weld, joints to the world, a body turning fast."""
    w = tb.World(solver="pgs", **settings)
    w.profile_stages = profile_stages
    base = w.add_body(tb.Box((0.2, 0.2, 0.2)), (0.0, 0.0, 2.0), mass=2.0)
    w.add_joint(tb.Ball(None, base, (0.0, 0.0, 2.1)))
    a = w.add_body(tb.Capsule(0.05, 0.2), (0.3, 0.0, 2.0), mass=1.0, orientation=(0.9, 0.1, 0.3, 0.2))
    w.add_joint(tb.Hinge(base, a, (0.15, 0.0, 2.0), (0.0, 1.0, 0.0), limits=(-0.5, 0.7),
                         motor=tb.Motor(speed=1.0, max_force=3.0)))
    b = w.add_body(tb.Box((0.1, 0.1, 0.1)), (0.6, 0.0, 2.0), mass=0.5)
    w.add_joint(tb.Slider(a, b, (0.5, 0.0, 2.0), (1.0, 0.0, 0.0), limits=(-0.1, 0.2),
                          motor=tb.Motor(target=0.1, max_force=5.0)))
    c = w.add_body(tb.Sphere(0.05), (0.6, 0.3, 1.8), mass=0.3, linear_velocity=(0.5, 0.0, 1.0))
    w.add_joint(tb.Distance(b, c, (0.6, 0.0, 2.0), (0.6, 0.3, 1.8), frequency=3.0, damping_ratio=0.3))
    d = w.add_body(tb.Box((0.1, 0.1, 0.1)), (0.6, 0.6, 1.8), mass=0.3)
    w.add_joint(tb.Distance(c, d, (0.6, 0.3, 1.8), (0.6, 0.6, 1.8)))
    e = w.add_body(tb.Box((0.1, 0.1, 0.1)), (0.8, 0.6, 1.8), mass=0.4, angular_velocity=(1.0, 2.0, 3.0))
    w.add_joint(tb.Fixed(d, e, (0.7, 0.6, 1.8)))
    f = w.add_body(tb.Capsule(0.05, 0.2), (-0.3, 0.0, 1.5), mass=1.0)
    w.add_joint(tb.Hinge(base, f, (-0.2, 0.0, 1.8), (1.0, 0.0, 0.0),
                         motor=tb.Motor(target=0.3, frequency=5.0, max_force=10.0)))
    g = w.add_body(tb.Box((0.1, 0.1, 0.1)), (-0.3, 0.5, 1.5), mass=0.4)
    w.add_joint(tb.Slider(None, g, (-0.3, 0.5, 1.5), (0.0, 0.0, 1.0), motor=tb.Motor(speed=-0.5, max_force=2.0)))
    return w


def _run_joints(profile_stages, steps=60, **settings):
    w = _joint_world(profile_stages, **settings)
    merits = []
    for _ in range(steps):
        w.step(1 / 60)
        merits.append(np.array(w.merit_history))
    counters = {k: w.counters.get(k) for k in ("iterations", "merit", "rows", "joint_rows", "joint_error")}
    reactions = [tuple(np.asarray(x).tolist() for x in w.joint_reaction(j)) for j in range(w.joint_count)]
    return w.state_hash(), counters, merits, w.profile, reactions


JOINT_CASES = [
    {},                                         # the joint tree (h = 1/720 s)
    {"joint_direct_solve": False},              # every joint row in the sweeps
    {"joint_correction": "baumgarte"},
    {"joint_frequency": 20.0, "joint_damping_ratio": 0.7, "record_merit": True},
    {"tolerance": 1e-3, "substeps": 3},         # h 1/180 s: no tree
]


@pytest.mark.parametrize("settings", JOINT_CASES,
                         ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "defaults")
def test_fused_joint_substeps_are_the_stage_calls_bit_for_bit(settings):
    """Issue 19: a step whose rows are joint rows only runs its substep loop in one kernel call."""
    fused = _run_joints(False, **settings)
    staged = _run_joints(True, **settings)
    assert fused[0] == staged[0]
    assert fused[1] == staged[1]
    assert all(np.array_equal(a, b) for a, b in zip(fused[2], staged[2], strict=True))
    assert "substeps" in fused[3] and "substeps" not in staged[3]
    assert fused[4] == staged[4]            # the reactions from the summed impulses


# ------------------------------------------------------------------------------------- contacts and joints
def _contact_joint_world(profile_stages, **settings):
    """The joint world above (``_joint_world``) over a ground it reaches within the run, a free jointed
    pair (a group without a world joint: the tree rooted at its heaviest body) lying on the ground, a box
    5 cm into the ground (a deep overlap: the pseudo-velocity pass) and a bouncing sphere: contact and
    joint rows in one step (``pgs.kernels.contact_joint_substeps``)."""
    w = _joint_world(profile_stages, **settings)
    w.add_body(tb.Plane(), position=(0.0, 0.0, 1.45), fixed=True)
    p = w.add_body(tb.Capsule(0.05, 0.3), (2.0, 0.0, 1.5), mass=2.0, orientation=(0.7071, 0.0, 0.7071, 0.0))
    q = w.add_body(tb.Capsule(0.05, 0.3), (2.4, 0.0, 1.5), mass=0.5, orientation=(0.7071, 0.0, 0.7071, 0.0),
                   angular_velocity=(0.0, 0.0, 2.0))
    w.add_joint(tb.Ball(p, q, (2.2, 0.0, 1.5)))
    w.add_body(tb.Box((0.1, 0.1, 0.1)), (-2.0, 0.0, 1.5), mass=1.0)
    w.add_body(tb.Sphere(0.1), (-2.0, 1.0, 2.0), linear_velocity=(0.0, 0.0, -3.0),
               material=tb.Material(restitution=0.5))
    return w


def _run_contact_joints(profile_stages, steps=60, **settings):
    w = _contact_joint_world(profile_stages, **settings)
    merits, contacts = [], 0
    for _ in range(steps):
        w.step(1 / 60)
        merits.append(np.array(w.merit_history))
        contacts = max(contacts, w.counters["contacts"])
    counters = {k: w.counters.get(k) for k in ("iterations", "merit", "rows", "joint_rows", "joint_error")}
    reactions = [tuple(np.asarray(x).tolist() for x in w.joint_reaction(j)) for j in range(w.joint_count)]
    return w.state_hash(), counters, merits, w.profile, reactions, contacts


CONTACT_JOINT_CASES = [
    {},                                         # the joint tree, manifold blocks
    {"joint_direct_solve": False},              # every joint row in the sweeps
    {"normal_block_solve": False},
    {"rotation_integrator": "euler", "record_merit": True},
    {"tolerance": 1e-3, "substeps": 3},         # h 1/180 s: no tree
]


@pytest.mark.parametrize("settings", CONTACT_JOINT_CASES,
                         ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "defaults")
def test_fused_contact_joint_substeps_are_the_stage_calls_bit_for_bit(settings):
    """Issue 19: a step with contact and joint rows (ragdolls) runs its substep loop in one kernel call."""
    fused = _run_contact_joints(False, **settings)
    staged = _run_contact_joints(True, **settings)
    assert fused[5] > 0                     # contacts (and joints) in the same steps
    assert fused[0] == staged[0]
    assert fused[1] == staged[1]
    assert all(np.array_equal(a, b) for a, b in zip(fused[2], staged[2], strict=True))
    assert "substeps" in fused[3] and "substeps" not in staged[3]
    assert fused[4] == staged[4]
