"""Shock: no step raises the total energy (issue 18: "under shock no body ever gains energy, in every
library scene and in randomised drops of every shape at dt 1/60 and 1/100"), nor leaves a body more
than 1 cm inside another.

Oracle: the total energy KE + m g z of the dynamic bodies. Every scene here is inelastic with no motor,
so a step may only lose it: a freely falling body under the velocity-first step loses 1/2 m g^2 dt^2 per
step, a landing one more. The tolerance is rounding (1e-9 of the energy) plus 1 uJ, and for the drops
what the sweeps' tolerance leaves (``SPEED_FLOOR``).

The pyramid: before issue 18's ``layer_collision_speed`` = 0 a fixated base moving into the body above
slower than 0.05 m/s sent it along at the base's speed (a point of a rocking cube's top face moves at
0.5 w), and the top of a tall pyramid rocked itself up layer by layer: base 60 (1830 unit cubes,
100 kg/m^3, dt 1/60) raised its energy in 16 of 180 steps, +0.0996 J at step 45 first, +0.22 J at most
(the top cubes leaving at 2.5 mm/s); large_pyramid (base 100) +153 J in one step, +305 J above its start.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tumble as tb

#: [J] the absolute part of the tolerance on a step's energy rise (the relative part: 1e-9 of |E|)
RISE_ABS = 1e-6
#: [m/s] the speed a body may keep from shock's sweeps, which stop at 1e-5 m/s changes (``tolerance``): a
#: body left rising at it gains m g dt of it in a step (a 1 kg plate resting: 1.3 uJ over ``RISE_ABS``)
SPEED_FLOOR = 1e-4


def _rise_tolerance(e: float, mass: float = 0.0, dt: float = 0.0) -> float:
    return RISE_ABS + 1e-9 * abs(e) + mass * 9.81 * dt * SPEED_FLOOR


def _pyramid_rises(steps, **settings):
    """Per step of the base-60 pyramid (density 100) under shock: the total energy's change [J]."""
    w = tb.scenes.build("pyramid20", solver="shock", base=60, density=100.0, **settings)
    e = w.total_energy()
    rises = []
    for _ in range(steps):
        w.step(w.default_dt)
        e1 = w.total_energy()
        rises.append(e1 - e)
        e = e1
    return w, np.array(rises), e


def test_tall_pyramid_top_never_rocks_itself_up():
    """Measured after: no step of 46 (nor of 180) raises the energy; the top cube rests."""
    w, rises, e = _pyramid_rises(46)
    assert rises.max() <= _rise_tolerance(e), f"step {int(rises.argmax())} gained {rises.max():.4g} J"
    assert abs(w.linear_velocities[-1, 2]) < 1e-3


def test_tall_pyramid_gains_with_the_layer_targets_before():
    """The contrast (``layer_collision_speed`` = 0.05, the default before): +0.0996 J at step 45."""
    _, rises, e = _pyramid_rises(46, layer_collision_speed=0.05)
    assert rises.max() > 0.05


def _shape(kind: str, s: float):
    if kind == "sphere":
        return tb.Sphere(0.15 * s)
    if kind == "box":
        return tb.Box((0.4 * s, 0.35 * s, 0.35 * s))
    if kind == "plate":
        return tb.Box((0.5 * s, 0.3 * s, 0.05 * s))
    if kind == "capsule":
        return tb.Capsule(0.1 * s, 0.3 * s)
    if kind == "hull":
        return tb.ConvexHull(s * np.array([[0.3, 0, 0], [-0.2, 0.25, 0], [-0.2, -0.25, 0], [0, 0, 0.35],
                                           [0.05, 0.05, -0.2]]))
    return tb.Compound([(tb.Box((0.3 * s, 0.1 * s, 0.1 * s)), (0.0, 0.0, 0.0)), (tb.Sphere(0.15 * s), (0.3 * s, 0, 0))])


SHAPES = ("sphere", "box", "plate", "capsule", "hull", "compound")
#: [m] at size 1, more than any shape's reach from its centre of mass (the box's half diagonal: 0.64 m)
REACH = 0.75
UNIT = st.floats(-1.0, 1.0)


@st.composite
def drops(draw, kind, dt):
    """One body of ``kind`` (size x0.5-2, 0.1-10 kg) dropped with 0.5-3 m (its size times that) below it onto the
    ground, random orientation, spin up to 20 rad/s per axis, falling at up to 5 m/s."""
    q = draw(st.tuples(UNIT, UNIT, UNIT, UNIT).filter(lambda v: sum(x * x for x in v) > 0.01))
    return dt, [(kind, draw(st.floats(0.5, 2.0)), draw(st.floats(0.1, 10.0)), 0.0, draw(st.floats(0.5, 3.0)), q,
                 draw(st.tuples(*[st.floats(-20.0, 20.0)] * 3)), draw(st.floats(-5.0, 0.0)))]


#: the spin substeps on (``ShockSettings.spin_substep_angle``, off by default: see its docstring) at the measured
#: angle [rad]
SPIN = {"spin_substep_angle": 0.1}


def _drop(case, seconds=1.0, **settings):
    """Step the drop (bodies stacked in the order given; the settings over ``SPIN``); returns (largest energy
    rise over its tolerance [J], deepest overlap inside a step or after one [m])."""
    dt, bodies = case
    w = tb.World(solver="shock", **{**SPIN, **settings})
    w.add_body(tb.Plane(), fixed=True)
    z = 0.0
    for kind, s, mass, x, height, q, spin, vz in bodies:
        z += (REACH + height) * s        # its lowest point ``height`` s above the ground: a drop, not an overlap
        n = math.sqrt(sum(c * c for c in q))
        w.add_body(_shape(kind, s), position=(x, 0.0, z), orientation=tuple(c / n for c in q), mass=mass,
                   angular_velocity=spin, linear_velocity=(0.0, 0.0, vz))
        z += 0.6 * s
    e = w.total_energy()
    over = -math.inf
    deep = 0.0
    for _ in range(int(round(seconds / dt))):
        w.step(dt)
        e1 = w.total_energy()
        over = max(over, e1 - e - _rise_tolerance(e, float(w.masses[1:].sum()), dt))
        e = e1
        deep = max(deep, float(w.counters.get("final_penetration", 0.0)))
        d = w.contacts().depth
        if len(d):
            deep = max(deep, float(d.max()))
    return over, deep


#: examples per (shape, dt) in the suite; run with more by hand (EXAMPLES=... below is the only knob)
EXAMPLES = 8


@pytest.mark.parametrize("dt", [1 / 60, 1 / 100], ids=["60Hz", "100Hz"])
@pytest.mark.parametrize("kind", SHAPES)
def test_random_drops_never_gain_energy(kind, dt):
    """A fixed (derandomized) draw of 8 drops per shape and dt: no step above the tolerance and no overlap
    of 1 cm. Run by hand with 100 per shape and dt (1200 drops): no step above the tolerance. Before
    ``spin_substep_angle`` 15 of those drops met the ground more than 1 cm deep inside a step (capsule,
    hull and compound at 60 Hz, up to 36 mm; capsule and hull at 100 Hz, 14 and 19 mm), all where a
    contact's impulse turned the body so that a point its rows did not describe swung down (see
    ``test_spinning_plate_lands_under_a_centimetre_deep``); with it none (deepest 0.93 mm), and
    ``CAPSULE_SPIN_CASE`` (drawn by the CI run of 2846a04), which broke the energy bound, no longer does."""

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(drops(kind, dt))
    def check(case):
        over, deep = _drop(case)
        assert over <= 0.0, f"a step gained {over:.4g} J beyond the tolerance"
        assert deep < 0.01, f"{deep * 1000:.1f} mm deep"

    check()


#: shrunk by Hypothesis from ``drops("plate", 1 / 60)``: a 0.5 x 0.3 x 0.05 m plate (1 kg) dropped flat from
#: 1.5 m spinning at (0, 1, 2) rad/s. Its speculative contacts (a corner 20 mm away) stop the corner and
#: spin it up to 14 rad/s; the step after, turning 0.23 rad in a step, it meets the ground 28.3 mm deep
#: (``final_penetration``; 28.4 mm after the step): the speculative rows are linear in the rotation. Since
#: ``spin_substep_angle`` (the step taken in substeps of <= 0.1 rad): 0.2 um.
SPINNING_PLATE = (1 / 60, [("plate", 0.5, 1.0, 0.0, 3.0 - REACH, (0.0, 0.0, 0.0, 1.0), (0.0, 1.0, 2.0), 0.0)])


def test_spinning_plate_lands_under_a_centimetre_deep():
    over, deep = _drop(SPINNING_PLATE)
    assert over <= 0.0
    assert deep < 0.01, f"{deep * 1000:.1f} mm deep"


#: drawn by Hypothesis from ``drops("capsule", 1 / 60)`` in the CI run of 2846a04 (a draw that used the "local
#: constants" of the modules a worker had imported; tests/conftest.py now leaves those out): a capsule (radius
#: 0.1625 m, half length 0.4875 m, 1 kg) falling at 2.5 m/s spinning at (14, 9, 20) rad/s. Measured: it meets
#: the ground at step 51 (29 rad/s before, 42 rad/s after: 0.7 rad a step), two contact rows 1.9 mm deep at
#: step 52, and step 53 raises the total energy by 1.16 mJ (a free fall loses 13.1 mJ a step), 1.14 mJ beyond
#: the tolerance. The contact rows are linear in the rotation, so a body turning 0.7 rad in a step was pushed
#: by rows that no longer describe its contact, the spinning plate's class; since ``spin_substep_angle`` no step
#: of it gains energy.
CAPSULE_SPIN_CASE = (1 / 60, [("capsule", 1.625, 1.0, 0.0, 2.9375, (1.0, -0.75, 0.75, 0.0), (14.0, 9.0, 20.0), -2.5)])


def test_spinning_capsule_landing_gains_no_energy():
    over, _ = _drop(CAPSULE_SPIN_CASE)
    assert over <= 0.0, f"a step gained {over:.4g} J beyond the tolerance"


def test_spinning_plate_lands_deep_without_spin_substeps():
    """The contrast: with ``spin_substep_angle`` = inf (no substeps, the step before it) the plate lands
    28.3 mm deep."""
    _, deep = _drop(SPINNING_PLATE, spin_substep_angle=math.inf)
    assert deep > 0.02


#: [rad] the turn per step of the fast-spinning drops: the class of issue 18's scenes (0.2-0.9 rad a step:
#: ragdolls' limbs, silo's jacks, cage's boxes)
FAST_TURN = (0.2, 0.9)


@st.composite
def fast_drops(draw, kind, dt):
    """``drops``, but spinning fast: |w| dt in ``FAST_TURN`` about a random axis."""
    dt, [(k, s, mass, x, height, q, _, vz)] = draw(drops(kind, dt))
    axis = draw(st.tuples(UNIT, UNIT, UNIT).filter(lambda v: sum(c * c for c in v) > 0.01))
    n = math.sqrt(sum(c * c for c in axis))
    speed = draw(st.floats(*FAST_TURN)) / dt
    return dt, [(k, s, mass, x, height, q, tuple(speed * c / n for c in axis), vz)]


#: examples per (shape, dt) of the fast-spinning drops in the suite (12 x 25 drops: ~10 s on the loaded 2-core
#: VM). Run by hand with 100 (1200 drops): deepest 0.61 mm, one draw above the energy tolerance
#: (``FAST_COMPOUND_TOP``); with ``spin_substep_angle`` = inf (before) 5 of them broke a bound (hull 60 Hz 3,
#: up to 10.7 mm; box 100 Hz 12.5 mm; a capsule at 60 Hz +9.6 mJ beyond the energy tolerance) and these 25 per
#: shape break it for the plate at 60 Hz and the capsule at 60 and 100 Hz
FAST_EXAMPLES = 25


@pytest.mark.parametrize("dt", [1 / 60, 1 / 100], ids=["60Hz", "100Hz"])
@pytest.mark.parametrize("kind", SHAPES)
def test_fast_spinning_drops_land_under_a_centimetre_deep(kind, dt):
    """Issue 18's goal for the fast-turning class: a body of every shape dropped turning 0.2-0.9 rad a step
    never overlaps the ground by more than 1 cm (inside a step or after one) and no step gains energy."""

    @settings(max_examples=FAST_EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(fast_drops(kind, dt))
    def check(case):
        over, deep = _drop(case)
        assert deep < 0.01, f"{deep * 1000:.1f} mm deep"
        assert over <= 0.0, f"a step gained {over:.4g} J beyond the tolerance"

    check()


#: drawn by ``fast_drops("compound", 1 / 100)`` (100 examples): a 0.70 kg compound (size 0.5) spinning at 74 rad/s
#: lands and spins on the ground at 92 rad/s like a top (0.92 rad a step, 8 substeps of 0.115 rad). Measured: steps 83,
#: 90, 97 raise the total energy by 2.7e-5, 3.4e-5, 3.5e-5 J (~3e-6 of it; 2.7e-5 J beyond the tolerance),
#: 16 substeps alike, 4 substeps up to 1.3e-4 J; without substeps (``spin_substep_angle`` = inf) no step does.
#: Traced (step 83): every one of the 8 substeps' final correction (with its settle) raises the total energy by
#: 3.5-6.4e-6 J (as m g dz, 0.5-0.9 um of lift; not split into lift and settle), while the substeps' velocity stages
#: and moves lose less than that. A whole step does it once, the substeps k times. Not the warm start
#: (``warm_start`` False: the same 2.7e-5 J); ``correction_slop`` 0 leaves 2.2e-6 J, ``stop_unseen_contacts`` False
#: or ``rotation_integrator`` "euler" none (other trajectories). Open: pay the correction's lift from the kinetic
#: energy, or correct once per step
FAST_COMPOUND_TOP = (1 / 100, [("compound", 0.5, 0.7035012936828856, 0.0, 2.630808005828751,
                                (0.7354805782487923, -0.3718287827768142, 0.0, -0.05025422313714656),
                                (-28.370529489633714, 0.0, -68.83581666508097), -2.3493761736868786)])


@pytest.mark.xfail(strict=True, reason="open: a compound spinning like a top in 8 substeps gains 3e-5 J a step")
def test_fast_spinning_top_in_substeps_gains_no_energy():
    over, deep = _drop(FAST_COMPOUND_TOP)
    assert deep < 0.01
    assert over <= 0.0, f"a step gained {over:.4g} J beyond the tolerance"


#: a 1.91 x 0.40 x 0.19 m plank (1 kg) falling at 4.07 m/s, turning 0.04 rad a step (under ``spin_substep_angle``'s
#: 0.1), dropped across a fixed beam (half extents 3, 0.3, 0.3, turned 135 degrees about z), 60 Hz. Box against box,
#: the speculative point of an edge-edge axis is one point: the rows stop it and the plank pivots about it, its end
#: coming down by up to its reach (0.98 m) times its turn, which no row sees (cow_pile's step 202 at
#: ``spin_substep_angle`` 0.1: a cow of reach 1.29 m, 21.4 mm; ``spin.py``'s docstring). Measured, deepest
#: ``final_penetration``: ``spin_substep_angle`` inf 105.5 mm, 0.1 30.8 mm, 0.1 with ``spin_substep_arc`` 0.02 m 3.6 mm.
#: Drawn (seed 13) from 40 random planks on the beam (half length 0.5-1 m, turning 0.04-0.1 rad a step, falling at
#: 0-5 m/s): with the angle 0.1 alone 24 of them went 5-70 mm deep, with the arc 0.02 m too 9 of them 5-14.8 mm (4
#: above 1 cm: the impact spins the plank up inside its substeps, which keep their k)
PLANK_ON_BEAM = ((0.9552035890329189, 0.19772052128563333, 0.09294449062492557),
                 (0.4928923424945689, -0.8305902710039557, 0.2585031894236869, 0.018789398116315335),
                 (1.389507947150676, 0.4064744150938977, 1.9260309789168524), -4.068305615194897, 1.6824079438813082)
#: the arc setting the measurements above used [m]
ARC = {"spin_substep_arc": 0.02}


def _plank_on_beam(**settings):
    """1 s of ``PLANK_ON_BEAM`` at 60 Hz; returns (largest energy rise over its tolerance [J], deepest
    ``final_penetration`` [m])."""
    half, q, spin, vz, z = PLANK_ON_BEAM
    dt = 1 / 60
    w = tb.World(solver="shock", **settings)
    beam = (math.sin(math.pi / 8), 0.0, 0.0, math.cos(math.pi / 8))      # (w, x, y, z): 135 degrees about z
    w.add_body(tb.Box((3.0, 0.3, 0.3)), orientation=beam, fixed=True)
    w.add_body(tb.Box(half), position=(0.0, 0.0, z), orientation=q, mass=1.0, angular_velocity=spin,
               linear_velocity=(0.0, 0.0, vz))
    e = w.total_energy()
    over, deep = -math.inf, 0.0
    for _ in range(60):
        w.step(dt)
        e1 = w.total_energy()
        over = max(over, e1 - e - _rise_tolerance(e, 1.0, dt))
        e = e1
        deep = max(deep, float(w.counters.get("final_penetration", 0.0)))
    return over, deep


def test_plank_pivoting_on_a_beam_lands_under_a_centimetre_deep():
    over, deep = _plank_on_beam(**SPIN, **ARC)
    assert deep < 0.01, f"{deep * 1000:.1f} mm deep"
    assert over <= 0.0, f"a step gained {over:.4g} J beyond the tolerance"


def test_plank_pivoting_on_a_beam_lands_deep_by_the_angle_alone():
    """The contrast: ``spin_substep_angle`` 0.1 without the arc (the plank turns 0.04 rad a step: no substep
    before its impact) lands it 30.8 mm deep."""
    _, deep = _plank_on_beam(**SPIN)
    assert deep > 0.02


def test_bad_spin_substep_settings_are_named():
    for field, value in (("spin_substep_angle", 0.0), ("spin_substep_angle", -0.1), ("spin_substep_angle", math.nan),
                         ("spin_substep_angle", True), ("spin_substep_arc", 0.0), ("spin_substep_arc", -0.01),
                         ("spin_substep_arc", math.nan), ("spin_substep_arc", False), ("spin_substeps_max", 0),
                         ("spin_substeps_max", 2.5), ("spin_substeps_max", True)):
        with pytest.raises(tb.SettingsError, match=field):
            tb.World(solver="shock", **{field: value})
