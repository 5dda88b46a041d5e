"""Property-based fuzzing of whole worlds (issue 17), with Hypothesis: random shapes with sizes over
four orders of magnitude (1 cm .. 100 m), mass ratios up to 1:1000, overlapping starts, random ball
joints, fixed bodies (so overlaps can jam), every solver, dt 1/240 .. 1/60. Properties: stepping never
crashes (only a ``SimulationError`` naming a body is an allowed way to stop), the state stays finite
with unit quaternions, a run repeats itself bit for bit, and no energy grows beyond what the scene
puts in (issue 17):

    KE(t) <= (KE(0) + sum_i m_i g (zmax_i(t) - z_i(t))) (1 + ENERGY_RTOL)
             + sum_i 1/2 m_i (c^2 + (SPEED_FLOOR + g dt)^2)

over the dynamic bodies i, with zmax_i(t) the highest z body i reached so far and c the solver's
release speed (``Solver.release_speed``: the correction speed limit ``max_correction_speed`` of pgs,
jacobi and gauss; 0 for shock and impulse, whose corrections move positions only). The gravity term
bounds what gravity can have given: the work m g (z(0) - z(t)) of each body, plus the potential
energy a positional correction gave by lifting it (which it may then turn into speed by falling).
The last term is the overlap release: a body pushed out of an overlap, however deep or jammed,
leaves with at most c. For solvers that move positions before the velocity update
(``POSITION_FIRST``) the gravity term adds 1/2 m_i g dt |v_z,i|, the lead of their kinetic energy in
free fall. Before issue 17's fix pgs released two spheres jammed between two fixed ones at 21 m/s
(c = 4), and a column of overlapping boxes at 12 m/s; jacobi and gauss the same way.

Shrunk failures become regression tests below (``@example``)."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import tumble as tb
from tumble._core.solvers import registry

G = 9.81
#: relative tolerance of the energy bound: the step's own energy error on violent contacts. Measured:
#: a 56 m x 3 cm bar (density 30) spinning at 4 rad/s through a sphere and the ground (pgs, dt 1/240)
#: rolls onto its long axis and gains 66 J in one step, 6.5 J (0.1 % of its 6858 J) beyond the bound;
#: a 66 m one (density 1000) 127 J of 372 kJ (0.03 %). Both also gain with every position correction
#: out of the velocities (split_speed 0: up to 437 J in a step), so this is not overlap release: the
#: contact rows are built once per step and the bar turns up to 0.45 rad in one (measured before issue 17's
#: fast-spin fix, FAST_SPIN_CASES below; not re-measured since).
#: The release defect this test is for gained many times the bound (21 m/s against 4).
ENERGY_RTOL = 0.01
#: [m/s] a speed every body may keep from the solvers' own tolerances (shock stops its sweeps at 1e-5 m/s
#: changes): a 40 t box started 2 m into the ground under shock was lifted out with 3.7e-7 m/s left.
#: To it the bound adds one step of gravity, g dt: a step's velocity update can come before the fall
#: it causes shows in z (impulse moves the bodies first: a ball lifted 1 m out of the ground and a box
#: in one step left it with 7.6 mm/s, g dt = 41 mm/s, and z at its highest)
SPEED_FLOOR = 1e-3
#: solvers whose energy bound is not asserted here, each with its open defect and a strict xfail test below.
#: shock was here until issue 18's fix: bodies jammed between overlaps (started inside each other and the
#: ground) were held or lifted by the projection (000 eq. 46, positions only) while the velocity solve let
#: gravity build their speed; when the jam resolved, the speed was there with no fall to pay for it
#: (SHOCK_JAM_CASES: a 29 m sphere on a unit sphere 2 m in the ground, 251 J beyond the bound; found about
#: once in 800 random shock worlds). Now the pushed contacts' approach is stopped after the final
#: correction (``ShockSettings.settle_pushed_contacts``). The rotation defect shock had besides (the
#: corrections' turn applied through the free-body flow, before ``shock.kernels.apply_step_displacement``)
#: is held by test_shock_random_worlds_keep_the_energy_bound.
#: impulse was here until issue 17's fix: a spinning box started deep in the ground next to a ball
#: (IMPULSE_SPIN_CASE: a 4 x 2 x 12 m box at (1, -1, 0) rad/s, 1232 J, dt 1/240) ended 50 J beyond the bound.
#: Cause: one kinetic-friction impulse at the box's lowest corner (slipping at 8.5 m/s): the fixed-point
#: iteration for the direction against the slip after the impulse alternated between two directions (the
#: normal impulse's own tangential effect, K_t0 dj0 on a 6 m lever, reverses the slip for every d) and
#: its last iterate pushed the corner along its slip: +63 J in that one impulse. Now a non-converged
#: iteration falls back to Alg. 8's direction, and every impulse that would gain energy is blended
#: towards the frictionless one (resolution.py's energy guard); the case ends 894 J below the bound.
ENERGY_UNCHECKED: set[str] = set()
#: thin bodies spinning into contact with tips at 200-2000 m/s (issue 17's fast-spin class; until its fix the
#: energy bound was asserted only below 100 m/s of surface speed from spin). Causes, measured:
#: - pgs_board24 (+380 J in the step of the tip's impact, +226 J beyond the bound) and jacobi_capsule
#:   (+4141 J, in jacobi's relax sweeps): the contact rows' B = M^-1 J^T kept the inverse inertia of the
#:   collision while the body turned on (the board 0.1 rad in the step); a row update was no impulse under
#:   the body's inertia now, and for a thin body the error is amplified by its largest inverse moment
#:   (the board came out spinning about its long axis at 356 rad/s). Fixed by ``refresh_turned_rows``;
#: - pgs_plate193 (a 193 m plate at 11.6 rad/s, dt 1/60; +1.9e6 J in one step with the rows refreshed):
#:   the second substep warm-started the impact impulse of the first at the collision's lever arms, which
#:   the plate (now spinning about its long axis at 0.25 rad per substep) had left: +2.2e7 J of
#:   1/2 lambda^2 J B, given back only in part by one sweep. Fixed by solving the contacts of a body
#:   turned past ``pgs.solver.TURN_TOLERANCE`` from zero impulses.
FAST_SPIN_CASES = {
    "pgs_board24": ("pgs", 1 / 240, [("sphere", 1.0, 1.0, 1.0, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                                     ("box", 12.0, 0.0625, 0.125, 1.0, (0.0, 0.0, 3.0), (0.0, 19.0, 16.0), False)],
                    []),
    "pgs_plate193": ("pgs", 1 / 60, [("sphere", 3.288, 84.68, 0.01, 30.0, (-1.97, 0.0, 0.52), (0.0, -4.66, -17.06),
                                      False),
                                     ("box", 96.76, 0.57, 0.01, 30.0, (1.43, 1.87, 2.41), (0.0, 10.5, -4.96), False)],
                     []),
}
#: found by CI's fuzz run on jacobi (pgs on the same world: 186 J below the bound; jacobi with
#: relax_iterations 0, split_speed 1e9, baumgarte 0 or 50 iterations: 185-200 J below; no warm start: +90 kJ)
JACOBI_SPIN_CASE = ("jacobi", 1 / 240,
                    [("capsule", 0.01562, 84.0, 1.0, 1.0, (0.0, 0.0, 2.0), (0.0, 11.0, 1.0), False)], [])
FAST_SPIN_CASES["jacobi_capsule"] = JACOBI_SPIN_CASE
#: a 118 m board (40 t) inside two overlapping boxes of 60-140 m, 20 contact points on it at up to 60 m
#: levers, found by the fuzz with the bound at every spin: Jacobi's rows each correct the same error and
#: together overshoot it many times over (damped Jacobi diverges for omega k (J B) > 2); 2.6e11 J gained in one
#: step spinning, 2.0e8 J beyond the bound still, so not the fast-spin class. Tried before the fix: a step cut
#: where a sweep's full step raises its objective held both, but cut on the normal and friction rows
#: together it made a box sliding down a slope 2.4 % short of Coulomb's distance, on the normal rows alone
#: it no longer held these (the friction rows overshoot as well), cut per class it slowed the sweeps'
#: convergence (test_jacobi_solver's merit history). Fixed (issue 17) by a descent guard: a sweep that
#: raises its objective KE(V) - zeta^T lambda is undone and the rest of the solve runs with each row's
#: relaxation capped, omega_r <= kappa A_rr / D_rr with D >= A a per-body spectral bound
#: (``JacobiSettings.relaxation_bound``, ``jacobi.kernels.guarded_sweeps``), under which every sweep
#: descends (kappa < 2); plain Jacobi, bit for bit, where it descends. Measured with the default 1.8:
#: spinning 1.1e11 J, still 9.0e6 J, overlapping_boxes 2.6e4 J below the bound (the same with the cap on
#: every solve, which made tower320 jitter)
JACOBI_OVERSHOOT_CASES = {
    "spinning": ("jacobi", 1 / 240, [("box", 30.65, 43.19, 72.6, 1.0, (-0.22, 0.42, 5.0), (-6.96, 0.0, 0.0), False),
                                     ("box", 43.19, 21.38, 43.19, 1.0, (-0.75, -1.0, 0.24), (14.59, 17.04, 14.45),
                                      False),
                                     ("box", 0.258, 59.04, 0.3333, 1000.0, (-0.72, -1.09, 2.23), (-1.5, -1.91, 5.11),
                                      False)], []),
    #: shrunk by Hypothesis (--hypothesis-seed=7 of test_random_worlds_step_without_crashing): four boxes
    #: started inside each other at the origin, one turning at 1 rad/s: 1.9e5 J beyond the bound, the same
    #: before issue 17's fast-spin fix (without the spin 2.6e4 J below)
    "overlapping_boxes": ("jacobi", 1 / 240, [("box", 1.0, 1.0, 1.0, 1.0, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), False),
                                              ("box", 1.0, 1.0, 1.0, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                                              ("box", 4.0, 4.0, 4.0, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                                              ("box", 7.0, 8.0, 6.0, 1.0, (0.0, 1.0, 0.0), (0.0, 0.0, 0.0), False)],
                          []),
    "still": ("jacobi", 1 / 240, [("box", 30.65, 43.19, 72.6, 1.0, (-0.22, 0.42, 5.0), (0.0, 0.0, 0.0), False),
                                  ("box", 43.19, 21.38, 43.19, 1.0, (-0.75, -1.0, 0.24), (0.0, 0.0, 0.0), False),
                                  ("box", 0.258, 59.04, 0.3333, 1000.0, (-0.72, -1.09, 2.23), (0.0, 0.0, 0.0), False)],
              []),
}
#: solvers whose step moves the positions with the last step's velocities before the velocity update
#: (impulse: 004 Alg. 6). In free fall x' = x + v dt, v' = v - g dt conserves KE + m g z + 1/2 m g dt v_z
#: exactly, not KE + m g z: falling (v_z < 0) its kinetic energy leads the drop by 1/2 m g dt |v_z|
#: (velocity-first solvers lag by as much). The bound adds that term for them. Found by the fuzz with
#: more examples (issue 17): a lone 0.5 m ball (density 1) falling 40 steps at dt 1/240 was 7.5 mJ
#: beyond the bound with no contact at all.
POSITION_FIRST = {"impulse"}
IMPULSE_SPIN_CASE = ("impulse", 1 / 240, [("sphere", 3.0, 1.0, 1.0, 1.0, (1.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                                          ("box", 2.0, 1.0, 6.0, 1.0, (0.0, 0.0, 0.0), (1.0, -1.0, 0.0), False)], [])

SIZES = st.floats(min_value=0.01, max_value=100.0).map(lambda x: float(f"{x:.4g}"))
SOLVERS = registry.names()


#: two unit spheres started 3.5 m and 3.0 m deep inside two fixed spheres of radius 5 whose gap (2 m) has
#: room for one: a jam. Before the fix pgs released them at 21 m/s (c = 4), jacobi at 24, gauss at 55 (c = 10)
JAM = [("sphere", 5.0, 5.0, 5.0, 1000.0, (0.0, 0.0, 8.0), (0.0, 0.0, 0.0), True),
       ("sphere", 5.0, 5.0, 5.0, 1000.0, (12.0, 0.0, 8.0), (0.0, 0.0, 0.0), True),
       ("sphere", 1.0, 1.0, 1.0, 1000.0, (2.5, 0.0, 8.0), (0.0, 0.0, 0.0), False),
       ("sphere", 1.0, 1.0, 1.0, 1000.0, (9.0, 0.5, 8.0), (0.0, 0.0, 0.0), False)]
#: four unit boxes, each 0.4 m into the one below (the lowest 0.3 m into the ground): the overlaps add up
#: along the column. Before the fix pgs threw the top box up at 12 m/s, jacobi at 18, gauss at 40
COLUMN = [("box", 0.5, 0.5, 0.5, 1000.0, (0.05 * i, 0.0, 0.2 + 0.6 * i), (0.0, 0.0, 0.0), False)
          for i in range(4)]


#: shrunk by Hypothesis from shock worlds that broke the bound (before and after apply_step_displacement):
#: overlapping spheres jammed against the ground. Before issue 18's fix (``settle_pushed_contacts``):
#: big_on_buried 251 J beyond the bound (the 102 t sphere held 0.4 mm above the ground by the projection
#: for two steps while falling at 2 g dt in velocity), three_joined 11.4 J (the jointed group lifted 14 cm
#: out of the ground by the final correction, keeping its 1.35 m/s fall)
SHOCK_JAM_CASES = {
    "big_on_buried": ("shock", 1 / 240, [("sphere", 29.0, 1.0, 1.0, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                                         ("sphere", 1.0, 1.0, 1.0, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                                         ("sphere", 1.0, 1.0, 1.0, 1.0, (0.0, 0.0, -1.0), (0.0, 0.0, 0.0), False)], []),
    "three_joined": ("shock", 1 / 240, [("sphere", 1.0, 1.0, 1.0, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                                        ("sphere", 1.0, 1.0, 1.0, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                                        ("sphere", 1.0, 1.0, 1.0, 1.0, (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), False)],
                     [0, 1]),
}


@st.composite
def worlds(draw, solvers=None):
    solver = draw(st.sampled_from(SOLVERS if solvers is None else solvers))
    dt = draw(st.sampled_from([1 / 240, 1 / 120, 1 / 60]))
    n = draw(st.integers(min_value=1, max_value=5))
    bodies = []
    for _ in range(n):
        kind = draw(st.sampled_from(["sphere", "box", "capsule"]))
        a = draw(SIZES)
        b = draw(SIZES)
        c = draw(SIZES)
        density = draw(st.sampled_from([1.0, 30.0, 1000.0]))
        pos = draw(st.tuples(st.floats(-2.0, 2.0), st.floats(-2.0, 2.0), st.floats(-1.0, 5.0)))
        spin = draw(st.tuples(st.floats(-20.0, 20.0), st.floats(-20.0, 20.0), st.floats(-20.0, 20.0)))
        fixed = draw(st.sampled_from([False, False, False, True]))
        bodies.append((kind, a, b, c, density, pos, spin, fixed))
    joints = draw(st.lists(st.integers(min_value=0, max_value=max(n - 2, 0)), max_size=2, unique=True)) \
        if registry.capabilities(solver).joints and n >= 2 else []
    joints = [j for j in joints if not (bodies[j][-1] and bodies[j + 1][-1])]     # a joint needs a dynamic body
    return solver, dt, bodies, joints


def _build(case, **settings):
    solver, dt, bodies, joints = case
    w = tb.World(solver=solver, **settings)
    w.add_body(tb.Plane(), fixed=True)
    for kind, a, b, c, density, pos, spin, *fixed in bodies:
        if kind == "sphere":
            shape = tb.Sphere(a)
        elif kind == "box":
            shape = tb.Box((a, b, c))
        else:
            shape = tb.Capsule(a, b)
        w.add_body(shape, position=pos, density=density, angular_velocity=spin, fixed=bool(fixed and fixed[0]))
    for j in joints:   # ball joint at the midpoint of bodies j+1 and j+2 (ids after the plane)
        if isinstance(j, tuple):     # (kind, i, k[, limited]): JOINTED_JAMS' joints between bodies i+1 and k+1
            _add_joint(w, *j)
            continue
        anchor = 0.5 * (w.position(j + 1) + w.position(j + 2))
        w.add_joint(tb.Ball(j + 1, j + 2, anchor=anchor))
    return w, dt


def energy_excess(w, ke0, zmax, dt):
    """[J] how far the kinetic energy exceeds the module docstring's bound (<= 0: within it)."""
    dyn = ~w.fixed
    m = w.masses[dyn]
    c = registry.solver_class(w.solver).release_speed(w.settings)
    floor = SPEED_FLOOR + G * dt
    release = 0.5 * float(m.sum()) * (c * c + floor * floor)
    gravity = G * float((m * (zmax[dyn] - w.positions[dyn, 2])).sum())
    if w.solver in POSITION_FIRST:
        gravity += 0.5 * G * dt * float((m * np.abs(w.linear_velocities[dyn, 2])).sum())
    bound = ke0 + gravity + release
    return w.kinetic_energy() - bound - ENERGY_RTOL * (ke0 + gravity)


def _run(case, steps=40, **settings):
    """Step the case; returns (world, finished, the largest energy excess over the steps [J])."""
    w, dt = _build(case, **settings)
    ke0 = w.kinetic_energy()
    zmax = w.positions[:, 2].copy()
    excess = -math.inf
    for _ in range(steps):
        try:
            w.step(dt)
        except tb.SimulationError as e:    # allowed: a named body, nothing deeper
            assert "body " in str(e)
            return w, False, excess
        np.maximum(zmax, w.positions[:, 2], out=zmax)
        excess = max(excess, energy_excess(w, ke0, zmax, dt))
    return w, True, excess


def surface_speed(case) -> float:
    """[m/s] the largest speed a point of a dynamic body's surface has from its spin at the start:
    |w| times the body's largest half extent (sphere r, box max half extent, capsule r + half length)."""
    top = 0.0
    for kind, a, b, c, _density, _pos, spin, *fixed in case[2]:
        if fixed and fixed[0]:
            continue
        reach = a if kind == "sphere" else max(a, b, c) if kind == "box" else a + b
        top = max(top, float(np.linalg.norm(spin)) * reach)
    return top


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
@example(("pgs", 1 / 60, [("sphere", 1.0, 1.0, 1.0, 1000.0, (0.0, 0.0, -0.5), (0.0, 0.0, 0.0))], []))
@example(("shock", 1 / 60, [("box", 0.4, 0.35, 0.35, 1000.0, (0.0, 0.0, 1.5), (0.0, 18.0, -18.0))], []))
@example(("pgs", 1 / 60, JAM, []))
@example(("jacobi", 1 / 60, JAM, []))
@example(("gauss", 1 / 60, JAM, []))
@example(("pgs", 1 / 60, COLUMN, []))
@example(("jacobi", 1 / 60, COLUMN, []))
@example(("gauss", 1 / 60, COLUMN, []))
@example(("impulse", 1 / 240, [("sphere", 0.5, 1.0, 1.0, 1.0, (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), False)], []))
@example(IMPULSE_SPIN_CASE)
@example(SHOCK_JAM_CASES["big_on_buried"])
@example(SHOCK_JAM_CASES["three_joined"])
def test_random_worlds_step_without_crashing(case):
    w, finished, excess = _run(case)
    if case[0] not in ENERGY_UNCHECKED:
        assert excess <= 0.0, f"kinetic energy {excess:.6g} J above the bound"
    if finished:
        assert np.all(np.isfinite(w.positions)) and np.all(np.isfinite(w.linear_velocities))
        assert np.all(np.isfinite(w.angular_velocities))
        q = w.orientations
        np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-9)
        assert math.isfinite(w.kinetic_energy())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_random_worlds_repeat_bit_for_bit(case):
    a, _, _ = _run(case, steps=20)
    b, _, _ = _run(case, steps=20)
    assert a.state_hash() == b.state_hash()


#: a 2 x 2 x 14 m box started 7 m into the ground spinning at 1 rad/s (467 J), dt 1/240. shock applied the
#: step's displacement, correction included, as the free rigid body's flow driven by disp_ang / dt (the
#: "midpoint" integrator), which keeps the world angular momentum L: the projection turned the box under
#: its L and 1/2 L^T I(q)^-1 L gained 42 J in the first step, 37 J beyond the bound over 40 steps
#: ("euler", which kept the world w under the turn: -107 J). With the corrections' rotation a pure
#: position change (w turned with the body) both integrators lose 102 J in the first step (the velocity
#: solve stopping the box's sinking corners) and end 106 J below the bound.
SHOCK_SPIN_CASE = ("shock", 1 / 240, [("box", 1.0, 1.0, 7.0, 1.0, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), False)], [])


@pytest.mark.parametrize("integrator", ["midpoint", "euler"])
def test_shock_spinning_box_lifted_out_of_the_ground_keeps_the_bound(integrator):
    w, dt = _build(SHOCK_SPIN_CASE, rotation_integrator=integrator)
    ke0 = w.kinetic_energy()
    w.step(dt)
    assert w.kinetic_energy() <= ke0 + 0.5 * float(w.masses[1]) * (G * dt) ** 2
    _, _, excess = _run(SHOCK_SPIN_CASE, rotation_integrator=integrator)
    assert excess <= 0.0


#: a 1 x 128 x 0.02 m board spinning at (19.6, 16.5, 7.9) rad/s, started inside a fixed capsule (radius 98)
#: and joined to it: before apply_step_displacement the projection turned it under its world momentum
#: and its kinetic energy ended 3.6e23 J above the bound within 40 steps (dt 1/60; now 7.5e8 J below)
SHOCK_BOARD_CASE = ("shock", 1 / 60, [("capsule", 97.89, 48.62, 74.35, 30.0, (1e-05, -2.0, 0.0), (0.0, 0.0, 0.0), True),
                                      ("box", 0.5, 64.26, 0.01, 1000.0, (2.0, 0.0, 0.0),
                                       (19.62988649249325, 16.51556177747571, 7.870082557933099), False)], [0])


@settings(max_examples=100, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(solvers=("shock",)))
@example(SHOCK_SPIN_CASE)
@example(SHOCK_BOARD_CASE)
def test_shock_random_worlds_keep_the_energy_bound(case):
    """shock's energy bound on a fixed (derandomized) draw of 100 worlds: the rotation class above. Before
    the fix 7 of these 150 broke it (the worst by 1.2e30 J)."""
    _, _, excess = _run(case)
    assert excess <= 0.0, f"kinetic energy {excess:.6g} J above the bound"


@pytest.mark.parametrize("name", sorted(SHOCK_JAM_CASES))
def test_shock_jammed_overlaps_keep_the_bound(name):
    """Measured after the fix: big_on_buried 89.6 J below the bound, three_joined 0.011 J below."""
    _, _, excess = _run(SHOCK_JAM_CASES[name])
    assert excess <= 0.0


def test_shock_jammed_joined_spheres_close_their_joints():
    """SHOCK_JAM_CASES["three_joined"] (a strict xfail of the jam class until shock's tree projection of the joints,
    issue 18): measured 0.011 J below the bound, joints closed; with ``joint_tree_projection=False`` (the
    Gauss-Seidel passes alone) 11.4 J above it with a joint 149 mm open."""
    w, _, excess = _run(SHOCK_JAM_CASES["three_joined"])
    assert excess <= 0.0
    assert float(w.joint_errors().max()) < 1e-3


@pytest.mark.parametrize("name", sorted(SHOCK_JAM_CASES))
def test_shock_jammed_overlaps_break_the_bound_without_the_settle_pass(name):
    """The contrast: with ``settle_pushed_contacts=False`` (the code before the fix; for the joined
    spheres also ``joint_tree_projection=False``, ``final_joint_tree=False``, ``stop_undone_joint_motion=False``
    and ``lifted_energy_guard=False``, which each alone hold that world) the same
    worlds break the bound (251 J and 11.4 J)."""
    extra = ({"joint_tree_projection": False, "final_joint_tree": False, "stop_undone_joint_motion": False,
              "lifted_energy_guard": False} if name == "three_joined" else {})
    _, _, excess = _run(SHOCK_JAM_CASES[name], settle_pushed_contacts=False, **extra)
    assert excess > 0.0


@pytest.mark.parametrize("name", sorted(FAST_SPIN_CASES))
def test_fast_spinning_thin_bodies_keep_the_bound(name):
    """Issue 17's fast-spin class (strict xfails until its fix): tips at 300-1100 m/s."""
    assert surface_speed(FAST_SPIN_CASES[name]) > 200.0
    _, _, excess = _run(FAST_SPIN_CASES[name])
    assert excess <= 0.0


def test_fast_spin_breaks_the_bound_with_the_rows_inertia_of_the_collision(monkeypatch):
    """The contrast that locates the first cause: without rebuilding B at the orientation now
    (``ROW_TURN_TOLERANCE`` infinite; and every substep warm-started, ``TURN_TOLERANCE`` infinite, whose
    cold starts late in the step would hide it) the board breaks the bound again; with ``pushed_energy_guard``
    off, which since issue 17's deep-lift fix holds the board as well (measured 151 J below the bound)."""
    from tumble._core.solvers.pgs import solver as pgs_solver
    monkeypatch.setattr(pgs_solver, "ROW_TURN_TOLERANCE", math.inf)
    monkeypatch.setattr(pgs_solver, "TURN_TOLERANCE", math.inf)
    _, _, excess = _run(FAST_SPIN_CASES["pgs_board24"], pushed_energy_guard=False)   # the guard holds it too
    assert excess > 0.0


def test_fast_spin_breaks_the_bound_with_the_last_substeps_impulses(monkeypatch):
    """The contrast for the second cause: warm-starting every substep (``TURN_TOLERANCE`` infinite)
    lets the plate gain again (+1.6e6 J beyond the bound); with ``pushed_energy_guard`` off, which holds the
    plate as well (measured 3.5e5 J below the bound)."""
    from tumble._core.solvers.pgs import solver as pgs_solver
    monkeypatch.setattr(pgs_solver, "TURN_TOLERANCE", math.inf)
    _, _, excess = _run(FAST_SPIN_CASES["pgs_plate193"], pushed_energy_guard=False)  # the guard holds it too
    assert excess > 0.0


@pytest.mark.parametrize("name", sorted(JACOBI_OVERSHOOT_CASES))
def test_jacobi_overshooting_sweeps_keep_the_bound(name):
    """Issue 17 (a strict xfail until the relaxation bound): measured 1.1e11 J (spinning), 9.0e6 J (still)
    and 2.6e4 J (overlapping_boxes) below the bound."""
    _, _, excess = _run(JACOBI_OVERSHOOT_CASES[name])
    assert excess <= 0.0


@pytest.mark.parametrize("name", sorted(JACOBI_OVERSHOOT_CASES))
def test_jacobi_overshooting_sweeps_break_the_bound_without_the_relaxation_bound(name):
    """The contrast: ``relaxation_bound=0`` (omega = 0.2 on every row, the solver before the fix) breaks
    the bound again (1.5e11 J, 3.2e8 J and 1.9e5 J beyond it); with ``pushed_energy_guard=False`` too, which
    since issue 17's deep-lift fix holds these worlds as well (measured 1.2e11 J, 9.0e6 J and 2.6e4 J below)."""
    _, _, excess = _run(JACOBI_OVERSHOOT_CASES[name], relaxation_bound=0.0, pushed_energy_guard=False)
    assert excess > 0.0


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(solvers=("jacobi",)))
@example(JACOBI_OVERSHOOT_CASES["still"])
def test_jacobi_random_worlds_keep_the_energy_bound(case):
    """jacobi's energy bound on a fixed (derandomized) draw of 60 worlds: the overshoot class above (the
    random-solver fuzz sees about one jacobi world in five)."""
    _, _, excess = _run(case)
    assert excess <= 0.0, f"kinetic energy {excess:.6g} J above the bound"


#: found by the fuzz with the energy bound at every spin (seeds 1 and 3 of 300 pgs/jacobi worlds): a 1e-5 kg box
#: ball-jointed to a 3 t plate (0.08 x 198 x 198 m) standing 97 m deep in the ground, no spin: under pgs's
#: joint tree solve (joint_direct_solve) the substeps' solve grew the energy ~1e9-fold per substep (1.9e112 J
#: beyond the bound after one step; the next step failed as non-finite); with joint_direct_solve False
#: 2.5e4 J below. Cause (issue 17): the tree rooted the pair at the box, so the box's pivot was its own
#: M plus the plate's effective mass (eigenvalues 9.8e-9 .. 4.2e3), and the factor held that pivot's
#: explicit inverse (wrong by 78 in entries of 7e7); the joint impulse, 3e3 times the box's anchor
#: velocity error, came out 500 times the impulse that moved the box (M dv != J^T dlambda). The next
#: substep's warm start applied it to the box (14000 rad/s), and each solve's error grew with the
#: velocities. Fixed in ``dynamics.joints.tree`` ("Numerics"): pivots factored (L diag(d) L^T), never
#: inverted; a group rooted at its heaviest body; iterative refinement on ill-conditioned trees. Now
#: 2.5e4 J below the bound, joint error 1e-10 m.
JOINT_TREE_CASE = ("pgs", 1 / 240, [("box", 0.01, 0.0349, 0.01, 1.0, (-0.96, -0.56, 1.58), (0.0, 0.0, 0.0), False),
                                    ("box", 0.04, 99.0, 99.0, 1.0, (0.0, 0.0, 1.86), (0.0, 0.0, 0.0), False)], [0])
#: the class around it: a 2.8e-5 kg box between the world (a fixed ball) and a 2.8e4 kg box resting on the
#: ground (1:1e9). The world joint must be the group's root, so the heavy box is eliminated into the light
#: one whatever the root rule; factored and refined it holds (2.2e5 J below the bound), without the
#: refinement (REFINE_SPREAD infinite) the world tears the pair apart (8e142 J beyond the bound)
JOINT_TREE_WORLD_CASE = ("pgs", 1 / 240, [("sphere", 0.1, 0.1, 0.1, 1.0, (-1.0, 0.0, 3.0), (0.0, 0.0, 0.0), True),
                                          ("box", 0.01, 0.035, 0.01, 1.0, (0.0, 0.3, 3.0), (0.0, 0.0, 0.0), False),
                                          ("box", 2.0, 2.0, 2.0, 437.5, (1.0, 0.0, 2.0), (0.0, 0.0, 0.0), False)],
                         [0, 1])


@pytest.mark.parametrize("name", ["pair", "world"])
def test_pgs_joint_tree_on_a_deep_jointed_pair_keeps_the_bound(name):
    w, finished, excess = _run(JOINT_TREE_CASE if name == "pair" else JOINT_TREE_WORLD_CASE)
    assert finished and excess <= 0.0
    assert float(w.joint_errors().max()) < 1e-5      # measured: 1.0e-10 m (pair), 1.2e-6 m (world)


def test_pgs_joint_tree_breaks_the_bound_without_the_refinement(monkeypatch):
    """The contrast: the tree solve without iterative refinement (the factor alone) on the world case."""
    from tumble._core.dynamics.joints import tree
    monkeypatch.setattr(tree, "REFINE_SPREAD", math.inf)
    _, finished, excess = _run(JOINT_TREE_WORLD_CASE)
    assert not finished or excess > 0.0


#: the light links of ``mass_ratio_chains``: 2.8e-5 kg boxes (smallest moment 1.9e-9 kg m^2)
LIGHT_LINK = ("box", 0.01, 0.035, 0.01, 1.0)


@st.composite
def mass_ratio_chains(draw):
    """JOINT_TREE_CASE's class: a chain of 2-5 bodies on ball joints (anchors at the midpoints), all
    LIGHT_LINK boxes but one heavy 4 m box of 1e6 .. 1e9 times their mass, resting on the ground or 1 or
    3 m into it, the chain hung from the world (a fixed ball at its start) or free; pgs or shock
    (``joint_tree_projection``), dt 1/240 or 1/60."""
    solver = draw(st.sampled_from(["pgs", "shock"]))
    dt = draw(st.sampled_from([1 / 240, 1 / 60]))
    n = draw(st.integers(min_value=2, max_value=5))
    heavy = draw(st.integers(min_value=0, max_value=n - 1))
    ratio = 10.0 ** draw(st.integers(min_value=6, max_value=9))
    depth = draw(st.sampled_from([0.0, 1.0, 3.0]))
    world = draw(st.booleans())
    bodies = [("sphere", 0.1, 0.1, 0.1, 1.0, (-1.0, 0.0, 3.0), (0.0, 0.0, 0.0), True)] if world else []
    for i in range(n):
        if i == heavy:
            density = ratio * 2.8e-5 / 64.0
            bodies.append(("box", 2.0, 2.0, 2.0, density, (float(i), 0.0, 2.0 - depth), (0.0, 0.0, 0.0), False))
        else:
            y = draw(st.floats(min_value=-0.5, max_value=0.5))
            bodies.append((*LIGHT_LINK, (float(i), y, 3.0 + 0.1 * i), (0.0, 0.0, 0.0), False))
    return solver, dt, bodies, list(range(len(bodies) - 1))


@settings(max_examples=30, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mass_ratio_chains())
@example(JOINT_TREE_CASE)
@example(JOINT_TREE_WORLD_CASE)
@example(("shock", *JOINT_TREE_CASE[1:]))
def test_joint_trees_with_extreme_mass_ratios_keep_the_bound(case):
    """Before the fix (tree.py, "Numerics") pgs broke the bound in 60 of 96 such chains (every one whose
    heavy body was not the first; 3e30 .. 9e200 J within 20 steps). After it shock held 92 of the 96; the 4
    others were JOINT_TREE_SHOCK_JAM_CASE's kind, held since ``ShockSettings.final_joint_tree``."""
    w, finished, excess = _run(case, steps=20)
    assert finished, "stopped on non-finite state"
    assert excess <= 0.0, f"kinetic energy {excess:.6g} J above the bound"


#: found by mass_ratio_chains: the world - a LIGHT_LINK box - a 28 kg box resting on the ground (1:1e6), shock at
#: dt 1/60: 63 J beyond the bound within 20 steps (6.3e4 J with a 2.8e4 kg box: the same 1.7 m/s fall of the
#: heavy box whatever its mass), joints closed to 3e-7 m. Not the tree's numerics: the same before its fix
#: (63 J, 3.4e-7 m); with joint_tree_projection False 0.38 J below the bound, a joint 83 mm open.
#: Cause (measured stage by stage, issue 17): shock's velocity solves are Gauss-Seidel on the joint rows, whose
#: update through the 2.8e-5 kg link moves the link only, so every step the box took the whole g dt in velocity
#: (-0.16 m/s per step) while the exact tree projection (positions) held it on its pendulum and the final
#: correction lifted it out of the link it is jammed on: 2.9 m/s of fall after 20 steps at a pose 10 cm higher.
#: The settle pass ran, but its joint rows were Gauss-Seidel too (the articulation one layer) and halved the
#: fall at most. Fixed by ``ShockSettings.final_joint_tree``: the final correction and a velocity settle with
#: the tree joints solved exactly (``shock.kernels.tree_correction``, ``settle_joint_tree``); now 0.13 J below
JOINT_TREE_SHOCK_JAM_CASE = ("shock", 1 / 60,
                             [("sphere", 0.1, 0.1, 0.1, 1.0, (-1.0, 0.0, 3.0), (0.0, 0.0, 0.0), True),
                              (*LIGHT_LINK, (0.0, 0.3, 3.0), (0.0, 0.0, 0.0), False),
                              ("box", 2.0, 2.0, 2.0, 0.4375, (1.0, 0.0, 2.0), (0.0, 0.0, 0.0), False)], [0, 1])


#: found by test_random_worlds_step_without_crashing while testing the tree's fix (not shrunk further): a unit
#: sphere half in the ground with a 0.5 m one inside it and a 2 m one above, spinning, ball-jointed in a row;
#: shock 1.78 J beyond the bound within 40 steps, before the tree's fix too (1.78 J), joints closed to 2e-11 m;
#: with joint_tree_projection False 18.2 J beyond, a joint 7 mm open. Cause (measured, issue 17): the final
#: correction's Gauss-Seidel sweeps lifted the two lower spheres out of the ground without the 33 kg top one
#: (the push reaches it only through the 0.5 kg sphere's 2 m lever), the joint projection after it closed
#: the joints by pulling them back into the ground, and the next step pushed again: 10 steps to leave the
#: ground, while the top sphere's fall built up in its velocity with its pose held. With the tree joints exact
#: in the final correction (``tree_correction``) the group leaves the ground as one; now 0.39 J below
SHOCK_JOINED_SPHERES_CASE = ("shock", 1 / 240,
                             [("sphere", 1.0, 1.0, 1.0, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                              ("sphere", 0.5, 1.0, 1.0, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                              ("sphere", 2.0, 1.0, 1.0, 1.0, (0.0, 0.0, 4.0), (0.0, 1.0, 0.0), False)], [0, 1])
#: the class without a jam, found while measuring it: the 28 kg box of JOINT_TREE_SHOCK_JAM_CASE hung in the air
#: from the world by the link. The velocity solves left the box in free fall (-g t) while the tree projection
#: held it on its pendulum; at dt 1/60 the joints tore within 40 steps (1.8e15 J beyond the bound after 60
#: steps, joint error 1.6 km). With ``final_joint_tree`` 0.75 J below, joints closed to 6e-8 m
SHOCK_HUNG_BOX_CASE = ("shock", 1 / 60,
                       [("sphere", 0.1, 0.1, 0.1, 1.0, (-1.0, 0.0, 6.0), (0.0, 0.0, 0.0), True),
                        (*LIGHT_LINK, (0.0, 0.3, 6.0), (0.0, 0.0, 0.0), False),
                        ("box", 2.0, 2.0, 2.0, 0.4375, (3.5, 0.0, 6.0), (0.0, 0.0, 0.0), False)], [0, 1])
SHOCK_JOINTED_JAM_CASES = {"world_link": (JOINT_TREE_SHOCK_JAM_CASE, 20),
                           "joined_spheres": (SHOCK_JOINED_SPHERES_CASE, 40), "hung_box": (SHOCK_HUNG_BOX_CASE, 60)}


@pytest.mark.parametrize("name", sorted(SHOCK_JOINTED_JAM_CASES))
def test_shock_jointed_bodies_jammed_in_the_ground_keep_the_bound(name):
    """Issue 17 (strict xfails until ``final_joint_tree``). Measured: world_link 0.13 J, joined_spheres 0.39 J,
    hung_box 0.75 J below the bound; joints closed to < 1e-6 m."""
    case, steps = SHOCK_JOINTED_JAM_CASES[name]
    w, finished, excess = _run(case, steps=steps)
    assert finished and excess <= 0.0
    assert float(w.joint_errors().max()) < 1e-5


@pytest.mark.parametrize("name", sorted(SHOCK_JOINTED_JAM_CASES))
def test_shock_jointed_jams_break_the_bound_without_the_final_joint_tree(name):
    """The contrast: ``final_joint_tree=False`` (the code before; with ``stop_undone_joint_motion=False``, which
    alone holds the joined spheres, and issue 18's two energy guards off, which since hold all three) breaks
    the bound again (63 J, 1.78 J and 1.8e15 J beyond it)."""
    case, steps = SHOCK_JOINTED_JAM_CASES[name]
    _, finished, excess = _run(case, steps=steps, final_joint_tree=False, stop_undone_joint_motion=False,
                               lifted_energy_guard=False, warm_start_energy_guard=False)
    assert not finished or excess > 0.0


JOINT_KINDS = ("ball", "hinge", "fixed")


def _add_joint(w, kind, i, k, limited=False):
    """A ``kind`` joint between bodies i + 1 and k + 1 (ids after the plane) at their centres' midpoint;
    a hinge about x, with limits +-0.3 rad when ``limited``."""
    a, b = i + 1, k + 1
    anchor = 0.5 * (w.position(a) + w.position(b))
    if kind == "ball":
        w.add_joint(tb.Ball(a, b, anchor=anchor))
    elif kind == "hinge":
        w.add_joint(tb.Hinge(a, b, anchor=anchor, axis=(1.0, 0.0, 0.0), limits=(-0.3, 0.3) if limited else None))
    else:
        w.add_joint(tb.Fixed(a, b, anchor=anchor))


@st.composite
def jointed_jams(draw):
    """The jointed jam class (issue 17): a chain or tree of 2-5 bodies of every shape (sizes 5 cm .. 3 m,
    densities 1 .. 1000 and LIGHT_LINK boxes among them: mass ratios to 1:1e7) started inside each other and
    the ground (centres within 1 m of the origin, z in [-1, 2]), each body after the first jointed to an
    earlier one (ball, hinge with or without limits, fixed), the first hung from the world (a fixed ball
    over it) or not; shock at dt 1/60 or 1/240."""
    dt = draw(st.sampled_from([1 / 60, 1 / 240]))
    n = draw(st.integers(min_value=2, max_value=5))
    world = draw(st.booleans())
    bodies = [("sphere", 0.1, 0.1, 0.1, 1.0, (0.0, 0.0, 3.0), (0.0, 0.0, 0.0), True)] if world else []
    size = st.floats(min_value=0.05, max_value=3.0).map(lambda x: float(f"{x:.3g}"))
    for _ in range(n):
        kind = draw(st.sampled_from(["sphere", "box", "capsule", "link"]))
        pos = draw(st.tuples(st.floats(-1.0, 1.0), st.floats(-1.0, 1.0), st.floats(-1.0, 2.0)))
        pos = tuple(round(x, 3) for x in pos)
        spin = draw(st.sampled_from([(0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (2.0, 0.0, -1.0)]))
        if kind == "link":
            bodies.append((*LIGHT_LINK, pos, spin, False))
            continue
        density = draw(st.sampled_from([1.0, 30.0, 1000.0]))
        bodies.append((kind, draw(size), draw(size), draw(size), density, pos, spin, False))
    if world and _hangs_in_the_ground(bodies[1]):
        bodies = bodies[1:]     # SHOCK_WORLD_GROUND_JAM_CASE's open class, its own strict xfail below
        world = False
    first = 1 if world else 0
    joints = [(draw(st.sampled_from(JOINT_KINDS)), 0, 1, False)] if world else []
    for i in range(first + 1, first + n):
        kind = draw(st.sampled_from(JOINT_KINDS))
        joints.append((kind, draw(st.integers(min_value=first, max_value=i - 1)), i,
                       kind == "hinge" and draw(st.booleans())))
    return "shock", dt, bodies, joints


def _hangs_in_the_ground(body) -> bool:
    """Whether ``body``, jointed to jointed_jams' world ball at (0, 0, 3) at the midpoint of their centres,
    reaches into the ground at the lowest point of its swing: the anchor's height less its distance from
    the centre and the body's reach (sphere r, box |half extents|, capsule r + half length)."""
    kind, a, b, c, _density, pos, *_ = body
    anchor = 0.5 * (np.array([0.0, 0.0, 3.0]) + np.asarray(pos))
    reach = a if kind == "sphere" else math.sqrt(a * a + b * b + c * c) if kind == "box" else a + b
    return anchor[2] - float(np.linalg.norm(anchor - np.asarray(pos))) - reach < 0.0


#: shrunk by Hypothesis from jointed_jams (its first draw, before the exclusion above): a unit sphere half in the
#: ground, hung from the world 1.5 m above its centre, with a LIGHT_LINK box and two more unit spheres at its
#: centre on ball joints, shock at dt 1/60. Nowhere on its swing is the sphere out of the ground, so the world
#: joint and the ground jam for good: the correction pushes the group up each step, the joint projection
#: pulls it back. 25.5 J beyond the bound in 30 steps before ``final_joint_tree``, 32.6 J with it (14.9 J at
#: TREE_CORRECTION_SWEEPS 5). Issue 17 left it open (a joint to the world against the ground, an infeasible jam);
#: held since issue 18's ``stop_undone_joint_motion`` (the group's fall the projection pulls back is stopped):
#: 32.6 J beyond the bound -> 0.053 J below
SHOCK_WORLD_GROUND_JAM_CASE = ("shock", 1 / 60,
                               [("sphere", 0.1, 0.1, 0.1, 1.0, (0.0, 0.0, 3.0), (0.0, 0.0, 0.0), True),
                                ("sphere", 1.0, 1.0, 1.0, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                                (*LIGHT_LINK, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                                ("sphere", 1.0, 1.0, 1.0, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
                                ("sphere", 1.0, 1.0, 1.0, 1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False)],
                               [("ball", 0, 1, False), ("ball", 1, 2, False), ("ball", 1, 3, False),
                                ("ball", 1, 4, False)])


def test_shock_body_jammed_between_a_world_joint_and_the_ground_keeps_the_bound():
    assert _hangs_in_the_ground(SHOCK_WORLD_GROUND_JAM_CASE[2][1])
    _, _, excess = _run(SHOCK_WORLD_GROUND_JAM_CASE, steps=30)
    assert excess <= 0.0


def test_shock_world_ground_jam_breaks_the_bound_without_stopping_the_undone_motion():
    """The contrast: ``stop_undone_joint_motion=False`` (the code before; with ``lifted_energy_guard=False``,
    which since holds it too): 32.6 J beyond the bound."""
    _, _, excess = _run(SHOCK_WORLD_GROUND_JAM_CASE, steps=30, stop_undone_joint_motion=False,
                        lifted_energy_guard=False)
    assert excess > 1.0


#: the mechanisms of jointed_jams' failures (issue 18; 35 distinct failing worlds of 300 drawn with seeds 1-3,
#: classified by the stage whose energy change broke the bound, each held by its guard alone):
#: - welded_loop (the velocity solve's warm start): two boxes (3 t and 51 t) welded to each other and to a
#:   LIGHT_LINK box that is jammed inside the heavy one, dt 1/240. The contact between the link and the box it is
#:   welded to through the other closes a loop of rows whose impulses cancel on every body; the sweeps fed them
#:   to 5e6 N s in the warm start (null space of J^T) until the contact point moved and they no longer
#:   cancelled: +2.7 MJ in one velocity solve (10 Gauss-Seidel sweeps at a 1:1e8 mass ratio never undo it),
#:   5.6e19 J beyond the bound within 30 steps. ``ShockSettings.warm_start_energy_guard`` scales a jointed
#:   island's warm start so that it alone gains no energy (``shock.guard.guard_warm_start``): 47.6 J below.
#: - toppling_lift (the final correction's lift): a 5.6 m rod welded through a 17 t sphere, the rod 1.3 m in the
#:   ground, turning at 1 rad/s, dt 1/60. The final correction lifted the group 0.1-0.2 m a step while it
#:   toppled about the rod's tip in velocity (the tip's row holds J v = 0, the centre falls with the tilt):
#:   the kinetic energy of a fall its position never made, 909 J beyond the bound. ``ShockSettings.
#:   lifted_energy_guard`` (``shock.guard.guard_lifted_groups``, pgs's pushed-energy rule per jointed group,
#:   the lift paid from the kinetic energy): 9170 J below.
SHOCK_WELDED_LOOP_CASE = ("shock", 1 / 240,
                          [("box", 2.5, 2.25, 2.25, 30.0, (0.134, -0.5, 1.873), (0.0, 0.0, 0.0), False),
                           (*LIGHT_LINK, (-0.054, -0.868, 0.519), (0.0, 1.0, 0.0), False),
                           ("box", 2.5, 2.25, 1.14, 1000.0, (0.486, 0.054, 0.52), (0.0, 0.0, 0.0), False),
                           (*LIGHT_LINK, (-0.167, 0.678, -0.968), (0.0, 0.0, 0.0), False)],
                          [("fixed", 0, 1, False), ("fixed", 0, 2, False), ("ball", 1, 3, False)])
SHOCK_TOPPLING_LIFT_CASE = ("shock", 1 / 60,
                            [("capsule", 0.0502, 2.82, 0.0502, 1000.0, (0.984, 0.0, 1.597), (0.0, 1.0, 0.0), False),
                             ("sphere", 1.6, 2.7, 0.0502, 1000.0, (0.984, 0.0, 1.597), (0.0, 1.0, 0.0), False)],
                            [("fixed", 0, 1, False)])
#: name -> (case, the guard that holds it alone)
SHOCK_JOINTED_JAM_MECHANISMS = {"welded_loop": (SHOCK_WELDED_LOOP_CASE, "warm_start_energy_guard"),
                                "toppling_lift": (SHOCK_TOPPLING_LIFT_CASE, "lifted_energy_guard")}
_GUARDS = ("warm_start_energy_guard", "lifted_energy_guard")


@pytest.mark.parametrize("name", sorted(SHOCK_JOINTED_JAM_MECHANISMS))
def test_shock_jointed_jam_mechanisms_keep_the_bound(name):
    """Each mechanism held by its own guard alone (the other one off) and by both."""
    case, guard = SHOCK_JOINTED_JAM_MECHANISMS[name]
    for extra in ({}, {g: False for g in _GUARDS if g != guard}):
        w, finished, excess = _run(case, steps=30, **extra)
        assert finished and excess <= 0.0, (extra, excess)


@pytest.mark.parametrize("name", sorted(SHOCK_JOINTED_JAM_MECHANISMS))
def test_shock_jointed_jam_mechanisms_break_the_bound_without_the_guards(name):
    """The contrast: both guards off (the code before) breaks the bound (5.6e19 J and 909 J beyond it)."""
    case, _ = SHOCK_JOINTED_JAM_MECHANISMS[name]
    _, finished, excess = _run(case, steps=30, **{g: False for g in _GUARDS})
    assert not finished or excess > 1.0


@settings(max_examples=10, derandomize=True, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow])
@given(jointed_jams())
@example(JOINT_TREE_SHOCK_JAM_CASE)
@example(SHOCK_JOINED_SPHERES_CASE)
@example(SHOCK_WELDED_LOOP_CASE)
@example(SHOCK_TOPPLING_LIFT_CASE)
def test_shock_jointed_jams_keep_the_bound(case):
    """The class of SHOCK_JOINTED_JAM_CASES on a fixed (derandomized) draw of 10 worlds, 30 steps each, not
    shrunk (a strict xfail until issue 18's guards). Measured with more examples (--hypothesis-seed 1 .. 10,
    100 worlds each, 30 steps): before the guards 15, 7, 15, 2 and 6 of seeds 1-5 broke the bound (up to
    2.9e24 J beyond it; 35 distinct worlds in seeds 1-3, all held by ``lifted_energy_guard`` alone, the
    warm-start class also by ``warm_start_energy_guard`` alone); with them 0 of 1000 (seeds 1-10)."""
    w, finished, excess = _run(case, steps=30)
    assert finished, "stopped on non-finite state"
    assert excess <= 0.0, f"kinetic energy {excess:.6g} J above the bound"


def test_pgs_deep_jointed_pair_keeps_the_bound_without_the_joint_tree():
    _, _, excess = _run(JOINT_TREE_CASE, joint_direct_solve=False)
    assert excess <= 0.0


def test_jacobi_spinning_capsule_keeps_the_bound_without_relax_sweeps():
    """The contrast that locates JACOBI_SPIN_CASE's gain: the same world without relax sweeps (measured
    185 J below the bound) and under pgs (186 J below)."""
    _, _, excess = _run(JACOBI_SPIN_CASE, relax_iterations=0)
    assert excess <= 0.0
    _, _, excess = _run(("pgs", *JACOBI_SPIN_CASE[1:]))
    assert excess <= 0.0


#: found by the jacobi-only fuzz with more examples (--hypothesis-seed=1, 200 worlds, after the overshoot fix): a
#: 0.5 x 2 x 16 m box (16 kg) standing 8 m deep in the ground, turning at 1 rad/s, dt 1/60: the pseudo-velocity
#: pass lifts it out (0.07 m per step) while gravity builds its fall in the velocities (-5 m/s after 40 steps)
#: and the box leaves at that speed: 2.5 J beyond the bound after 40 steps, 70 J after 60. Not the overshoot
#: class (the same with relaxation_bound 0; within the bound with split_speed 1e9) and not jacobi's alone: pgs
#: is 0.7 J below the bound after 40 steps and 17 J beyond it after 45 (60 J after 60).
#: Cause (issue 17), measured under pgs: the velocity solve sees the deep contacts' normal rows with the target
#: without position feedback (0: ``split_speed`` moved their push to the pseudo pass) and their friction rows.
#: J v >= 0 holds the contact points, not the body: the box pivots on its two lowest corners (J v = 0.004 m/s
#: there; the other two separate at 0.47 m/s as it tilts) and its centre falls with the tilt at up to
#: 8 w sin(theta), taking 0.1-0.3 N s of normal impulse per step against m g dt = 2.6 N s. The velocity solve is
#: honest about gravity's work along the velocities (the mechanical energy E - E0 is 341 J after 60 steps, the
#: potential energy of the pseudo pass's lift m g sum(h v_p,z) 388 J, the rest lost to friction), but the lift
#: and the fall happen together, so the position never makes the fall the velocity was paid for: the box's z
#: peaks at 0.93 m while its velocity has fallen 3.1 m/s. Fixed by ``pushed_energy_guard`` (pgs, jacobi,
#: gauss): a body the pseudo pass moved gains kinetic energy in that (sub)step only from the work gravity and
#: its forces did along the way it actually went (``integrate.guard_pushed_bodies``); now 143 J below the bound
#: after 40 and 60 steps (the box rises 2.4 m in 60 steps, still spinning at 0.95 rad/s, v_z -6 mm/s).
JACOBI_DEEP_LIFT_CASE = ("jacobi", 1 / 60, [("box", 0.25, 1.0, 8.0, 1.0, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), False)], [])
#: the row solvers whose pseudo-velocity pass (or gauss's second QP) pushes deep overlaps out
DEEP_LIFT_SOLVERS = ("pgs", "jacobi", "gauss")


@pytest.mark.parametrize("solver", ["pgs", "jacobi"])
@pytest.mark.parametrize("steps", [40, 60])
def test_deep_box_lifted_by_the_pseudo_pass_keeps_the_bound(solver, steps):
    """JACOBI_DEEP_LIFT_CASE (a strict xfail until ``pushed_energy_guard``) under pgs and jacobi: measured
    143 J below the bound with either, after 40 and 60 steps."""
    _, finished, excess = _run((solver, *JACOBI_DEEP_LIFT_CASE[1:]), steps=steps)
    assert finished and excess <= 0.0


@pytest.mark.parametrize("solver", ["pgs", "jacobi"])
def test_deep_box_lifted_by_the_pseudo_pass_breaks_the_bound_without_the_guard(solver):
    """The contrast: ``pushed_energy_guard=False`` (the solvers before the fix) breaks the bound again
    (measured after 60 steps: jacobi 69.8 J, pgs 59.8 J beyond it)."""
    _, _, excess = _run((solver, *JACOBI_DEEP_LIFT_CASE[1:]), steps=60, pushed_energy_guard=False)
    assert excess > 0.0


#: the half extents of a deep-lift body's shape [m]: 5 cm .. 2 m across, 1 .. 10 m along its local z (the case
#: above is 0.25 x 1 x 8); a capsule's (radius, half length), a cylinder's (radius, -, half length)
DEEP_SIZES = st.floats(min_value=0.05, max_value=2.0).map(lambda x: float(f"{x:.3g}"))
LONG_SIZES = st.floats(min_value=1.0, max_value=10.0).map(lambda x: float(f"{x:.3g}"))
#: a cylinder (no shape of its own in tumble) as the convex hull of a 16-sided prism, radius and half length 1
_PRISM = np.array([(math.cos(2 * math.pi * k / 16), math.sin(2 * math.pi * k / 16), z)
                   for z in (-1.0, 1.0) for k in range(16)])


def _deep_shape(kind, dims):
    """The shape of a deep-lift body and the points whose lowest gives its reach below the centre."""
    a, b, c = dims
    if kind == "sphere":
        return tb.Sphere(a), None
    if kind == "box":
        return tb.Box((a, b, c)), None
    if kind == "capsule":
        return tb.Capsule(a, c), None
    points = _PRISM * np.array([a, a, c])
    return tb.ConvexHull(points), points


def _reach_below(kind, dims, q):
    """[m] how far the body reaches below its centre at orientation q (w, x, y, z); the shapes are symmetric,
    so as far above."""
    w_, x, y, z = q
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w_ * z), 2 * (x * z + w_ * y)],
                  [2 * (x * y + w_ * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w_ * x)],
                  [2 * (x * z - w_ * y), 2 * (y * z + w_ * x), 1 - 2 * (x * x + y * y)]])
    a, b, c = dims
    if kind == "sphere":
        return a
    if kind == "box":
        return float(abs(R[2, 0]) * a + abs(R[2, 1]) * b + abs(R[2, 2]) * c)
    if kind == "capsule":
        return float(a + abs(R[2, 2]) * c)
    return float(np.max(-(_deep_shape(kind, dims)[1] @ R.T)[:, 2]))


@st.composite
def deep_lift_worlds(draw):
    """JACOBI_DEEP_LIFT_CASE's class: a body of any shape (box, sphere, capsule, a cylinder as a convex hull)
    elongated along its local z, whose lowest point starts 0.5 .. 10 m deep in the ground, standing (tilted
    up to 0.6 rad) or at any orientation, spinning up to 1.5 rad/s about each axis, alone or with 1-2 more
    bodies stacked on it (each on the one below, up to 0.5 m into it, up to 0.3 m off its axis); pgs,
    jacobi or gauss, dt 1/60 or 1/240, 40-60 steps. A case is (solver, dt, steps, [(kind, half extents,
    density, position, orientation, spin)])."""
    solver = draw(st.sampled_from(DEEP_LIFT_SOLVERS))
    dt = draw(st.sampled_from([1 / 60, 1 / 240]))
    steps = draw(st.integers(min_value=40, max_value=60))
    n = draw(st.integers(min_value=1, max_value=3))
    unit = st.floats(min_value=-1.0, max_value=1.0)
    bodies = []
    top = None
    for i in range(n):
        kind = draw(st.sampled_from(["box", "sphere", "capsule", "cylinder"]))
        # elongated along local z (a long body pivots on its buried end, the class's mechanism)
        dims = (draw(DEEP_SIZES), draw(DEEP_SIZES), draw(LONG_SIZES))
        density = draw(st.sampled_from([1.0, 30.0, 1000.0]))
        if draw(st.booleans()):     # standing: tilted up to 0.6 rad about a horizontal axis (the found case: 0)
            tilt = draw(st.floats(min_value=0.0, max_value=0.6))
            phi = draw(st.floats(min_value=0.0, max_value=2.0 * math.pi))
            q = np.array([math.cos(0.5 * tilt), math.sin(0.5 * tilt) * math.cos(phi),
                          math.sin(0.5 * tilt) * math.sin(phi), 0.0])
        else:                       # any orientation
            q = np.array([draw(unit) for _ in range(4)])
            q = q / np.linalg.norm(q) if np.linalg.norm(q) > 0.1 else np.array([1.0, 0.0, 0.0, 0.0])
        q = tuple(float(v) for v in q)
        spin = tuple(float(f"{draw(st.floats(-1.5, 1.5)):.3g}") for _ in range(3))
        reach = _reach_below(kind, dims, q)
        if i == 0:
            depth = draw(st.floats(min_value=0.5, max_value=10.0))
            pos = (0.0, 0.0, reach - depth)
        else:
            into = draw(st.floats(min_value=0.0, max_value=0.5))
            pos = (draw(st.floats(-0.3, 0.3)), draw(st.floats(-0.3, 0.3)), top + reach - into)
        pos = tuple(float(f"{v:.4g}") for v in pos)
        top = pos[2] + reach
        bodies.append((kind, dims, density, pos, q, spin))
    return solver, dt, steps, bodies


def _run_deep(case, **settings):
    """``_run`` for a ``deep_lift_worlds`` case: (world, finished, largest energy excess [J])."""
    solver, dt, steps, bodies = case
    w = tb.World(solver=solver, **settings)
    w.add_body(tb.Plane(), fixed=True)
    for kind, dims, density, pos, q, spin in bodies:
        w.add_body(_deep_shape(kind, dims)[0], position=pos, orientation=q, density=density, angular_velocity=spin)
    ke0 = w.kinetic_energy()
    zmax = w.positions[:, 2].copy()
    excess = -math.inf
    for _ in range(steps):
        try:
            w.step(dt)
        except tb.SimulationError as e:
            assert "body " in str(e)
            return w, False, excess
        np.maximum(zmax, w.positions[:, 2], out=zmax)
        excess = max(excess, energy_excess(w, ke0, zmax, dt))
    return w, True, excess


#: the class in deep_lift_worlds' form, from a sweep of standing bodies (pgs, dt 1/60, 60 steps; before
#: ``pushed_energy_guard``): a 0.5 x 2 x 16 m box tilted 0.4 rad, 4 m deep, turning at 0.5 rad/s, 24.9 J beyond the
#: bound (128.5 J below with the guard); a capsule (radius 0.25 m, half length 8 m) so, 8 m deep, 11.1 J beyond
#: (25.8 J below)
_TILT = (math.cos(0.2), 0.0, math.sin(0.2), 0.0)
DEEP_LIFT_CASES = {
    "tilted_box": ("pgs", 1 / 60, 60, [("box", (0.25, 1.0, 8.0), 1.0, (0.0, 0.0, _reach_below("box", (0.25, 1.0, 8.0),
                                                                                               _TILT) - 4.0),
                                        _TILT, (0.0, 0.5, 0.0))]),
    "tilted_capsule": ("pgs", 1 / 60, 60, [("capsule", (0.25, 1.0, 8.0), 1.0,
                                            (0.0, 0.0, _reach_below("capsule", (0.25, 1.0, 8.0), _TILT) - 8.0),
                                            _TILT, (0.0, 0.5, 0.0))]),
    #: found by deep_lift_worlds with more examples (--hypothesis-seed 5): a 140 t capsule (radius 1.73 m, half
    #: length 6.38 m) standing 6.7 m deep, turning at 1.4 rad/s, two cylinders stacked on it; jacobi 4.1e5 J beyond
    #: the bound without the guard, 1.2e6 J below with it
    "jacobi_capsule_stack": ("jacobi", 1 / 60, 52, [
        ("capsule", (1.73, 0.55, 6.38), 1000.0, (0.0, 0.0, 1.366),
         (0.9984103438899317, -0.04535134478544751, -0.03346700972211111, 0.0), (-1.18, -0.675, 0.0)),
        ("cylinder", (0.0995, 0.742, 3.82), 30.0, (-0.3, 0.1769, 12.48),
         (0.32440991094047733, -0.4722502504074407, -0.8195433876372543, -0.009303034652966467),
         (1e-05, 0.0, -0.904)),
        ("cylinder", (0.986, 1.37, 1.63), 30.0, (0.0, 0.2763, 17.24),
         (0.9553364891256061, 0.2955202066613395, 0.0, 0.0), (-1.1, -0.399, 1.4))]),
}


@pytest.mark.parametrize("name", sorted(DEEP_LIFT_CASES))
def test_deep_tilted_bodies_break_the_bound_without_the_guard(name):
    _, _, excess = _run_deep(DEEP_LIFT_CASES[name], pushed_energy_guard=False)
    assert excess > 0.0


@settings(max_examples=40, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(deep_lift_worlds())
@example(DEEP_LIFT_CASES["tilted_box"])
@example(DEEP_LIFT_CASES["tilted_capsule"])
@example(DEEP_LIFT_CASES["jacobi_capsule_stack"])
def test_deep_bodies_lifted_out_of_the_ground_keep_the_bound(case):
    """The class of JACOBI_DEEP_LIFT_CASE on a fixed (derandomized) draw of 40 worlds. Run with more examples
    (guard on and off on each world; --hypothesis-seed 5, 200 worlds: 95 jacobi, 71 gauss, 34 pgs): none broke
    the bound with the guard; without it 7 jacobi worlds did (the worst 4.1e5 J beyond, 1.2e6 J below with the
    guard), no pgs or gauss world. Seeds 1-4 (850
    worlds, spin up to 3 rad/s, bodies up to 8 m long; seed 1's 300 checked with the guard only) found none with
    or without the guard: the class needs a long standing body turning slowly (DEEP_LIFT_CASES). The 7 jacobi
    worlds are variants of one (Hypothesis explored around it): DEEP_LIFT_CASES["jacobi_capsule_stack"]."""
    w, finished, excess = _run_deep(case)
    assert finished, "stopped on non-finite state"
    assert excess <= 0.0, f"kinetic energy {excess:.6g} J above the bound"


def test_impulse_spinning_box_lifted_out_of_the_ground_keeps_the_bound():
    """Issue 17: before the fix 50 J beyond the bound (one kinetic impulse at the box's corner +63 J)."""
    _, _, excess = _run(IMPULSE_SPIN_CASE)
    assert excess <= 0.0


def test_impulse_single_contact_impulses_never_gain_energy():
    """The corner contact of IMPULSE_SPIN_CASE's first resolution, alone: the box (96 kg, 4 x 2 x 12 m)
    on the ground with its corner slipping at 8.5 m/s and closing at 5 m/s. Its one impulse gained
    63 J before the fix (the slip direction's iteration stopped at the wrong one of two alternating
    directions); now it loses energy, with both kinetic friction directions."""
    for direction in ("slip", "static"):
        w = tb.World(solver="impulse", kinetic_friction_direction=direction)
        w.add_body(tb.Plane(), fixed=True)
        box = w.add_body(tb.Box((2.0, 1.0, 6.0)), position=(0.0, 0.0, 6.0 - 0.01), density=1.0,
                         linear_velocity=(0.0, 0.0, -2.0), angular_velocity=(1.0, -1.0, 0.0))
        ke0 = w.kinetic_energy()
        w.step(1 / 240)
        assert w.kinetic_energy() <= ke0 + 0.5 * w.masses[box] * (2.0 * G / 240 + G * G / 240 ** 2), direction


@pytest.mark.parametrize("solver", ["pgs", "jacobi", "gauss"])
@pytest.mark.parametrize("scene", ["jam", "column"])
def test_release_breaks_the_bound_with_the_old_single_pass(solver, scene):
    """The contrast for the examples above: with split_speed above every push (the code before
    issue 17; for jacobi also without its relax sweeps, which issue 18 added and which alone keep the
    jam's release within the bound) the same worlds break the bound."""
    old = {"split_speed": 1e9, **({"relax_iterations": 0} if solver == "jacobi" else {})}
    _, _, excess = _run((solver, 1 / 60, JAM if scene == "jam" else COLUMN, []), **old)
    assert excess > 0.0
