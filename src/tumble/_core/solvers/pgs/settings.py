"""Settings of the pgs solver: the shared contact model, the row part and the joint part
(``solvers.settings_parts``) plus the relax stage."""

from __future__ import annotations

from dataclasses import dataclass

from tumble._core.solvers.settings_parts import (
    ContactSettings,
    JointSettings,
    RowSettings,
    SolverSettings,
    check_choice,
    check_count,
    check_flag,
    check_nonnegative,
)

#: ways the pgs step pushes overlaps out (PGSSettings.position_correction)
POSITION_CORRECTIONS = ("relax", "split")


@dataclass
class PGSSettings(ContactSettings, RowSettings, JointSettings, SolverSettings):
    """Settings of the projected Gauss-Seidel solver (Catto 001). The contact model
    (``ContactSettings``), the PGS rows (``RowSettings``: iterations, baumgarte, slop, warm start,
    friction model, ...) and the joints (``JointSettings``) are documented on their parts.

    Attributes (its own):
        relax_iterations: sweeps after the position update against targets without Baumgarte
            feedback (Box2D v3's relax stage): the push-out velocity moves the positions but is
            then removed, so position correction cannot pump energy into a resting stack.
            0 is Catto's plain scheme (001); default 1 per substep (``substeps``; 2 before issue 18,
            with one solve per step).
        position_correction: how overlap is pushed out. "relax" (default): Baumgarte feedback in the
            velocity solve, then ``relax_iterations`` sweeps without it, for the contacts whose push
            beta (depth - slop) is at most ``split_speed`` (1 m/s); deeper ones are pushed apart by
            a pseudo-velocity pass per substep (``kernels.pseudo_correction``) whose velocities are
            dropped (issue 17: before it, relax alone released the jam below at 21-23 m/s; now
            1.2 m/s; ``split_speed`` >= ``max_correction_speed`` is the scheme before). "split": the velocity solve
            has no position feedback; a second PGS pass solves the Baumgarte targets into
            pseudo-velocities that only move the positions (split impulse), so releasing an overlap
            never adds kinetic energy (relax leaves what its sweeps do not remove: two spheres
            jammed 3.5 m deep between two fixed ones left at 21 m/s with max_correction_speed 4).
            Not the default: measured at the scenes' settings (dt 1/60, 10 iterations), split lets
            stack10 fall within 20 s (drift 5.4 m; relax 36 mm) and pyramid20 drift 58 mm in 5 s
            (relax 17 mm); the pseudo pass's angular corrections tip the boxes.
        substeps: solves per step over one collision (Box2D v3's "soft step"; Catto's later
            sequential impulses): the rows are built once, then each of the ``substeps`` parts of
            h = dt / substeps integrates the forces over h, warm-starts with the previous part's
            impulses, runs ``substep_iterations`` sweeps, moves the bodies by h v and runs
            ``relax_iterations`` relax sweeps; the contacts' penetration is updated from the bodies'
            displacement, the joint rows are rebuilt at every part's poses. 1 is Catto's one solve
            per step (``iterations`` sweeps, then the relax sweeps). Default 12 (issue 18, with one
            sweep each, ``substep_iterations``), measured at dt 1/60 (benchmarks/pgs_defaults.py,
            with the manifold active set, ``normal_block_active_set``; max drift over 60 s):
            pyramid20 3.0 mm (4 x 2 sweeps: 18.6 mm in 10 s; 6 x 2: 10.6 mm; 8 x 1: 8.5 mm; 10 x 1:
            5.3 mm in 10 s; 16 x 1: 1.6 mm; before the active set 4 x 2 drifted 33.1 mm), stack10
            0.70 mm, the ten-box column 0, chain50's link stretch after 10 s 0.00005 % (largest over
            the run 0.0012 %). The few-sweep solve is unstable around the pyramid's resting
            solution (from a still pyramid 4 x 2 sweeps grow the largest speed 1.5 -> 160 mm/s in 5
            steps, with Baumgarte feedback or without, Coulomb or fixed friction); shorter substeps keep
            that growth below what the relax sweeps remove. More substeps of one sweep beat more
            sweeps per substep at the same sweep count (8 x 2: 4.3 mm in 10 s, 16 x 1: 1.6 mm).
            Cost: 12 sweeps and 12 relax sweeps per step against the earlier 8 and 4, plus the
            per-substep integration and joint rows: 1.6x-1.9x the CPU time per step of 4 x 2
            (time.process_time, median of 3 interleaved runs): pyramid20 6.5 against 3.5 ms (1.87x),
            wall200 1.94x, ragdolls 1.93x, chain50 1.86x, stack10 1.60x
            (benchmarks/results/local-2core-amd-epyc/pgs_defaults.md).
            ``position_correction="split"`` ignores it (one solve). Known problem: 2 and 3 substeps
            made chain50 blow up (stretch 26-40 link lengths; with and without the joint projection),
            4, 6, 8 and 10 did not; so did 4 substeps without warm start, and the one-solve scheme
            (substeps 1) without warm start: the 60 Hz chain is at the edge of what the joint rows
            and projection hold whenever the velocity solve is weak; not understood further yet.
        substep_iterations: sweeps per substep, default 1 (12 x 1; 4 x 2 before the active set,
            see ``substeps``).
        normal_block_solve: solve the normal rows of each contact manifold together (``block_sweep``;
            Box2D's block solver in 3-D, the impulses of least norm when the face is over-determined).
            Default True: a column of ten unit boxes placed exactly touching (mu 0.5, 10 sweeps at
            1/60) fell within 20 s with scalar sweeps (each face's first point took more impulse than
            its last; the column rocked) and stands motionless with drift 0 with the block; Catto's
            stack10 drift 60 s: 0.06 mm (110 mm scalar). False: Catto's scalar PGS (001 Alg. 4).
        normal_block_active_set: when a manifold's block solve gives some point a negative impulse
            (the face tips off its support's edge), solve the manifold's LCP by active sets: drop
            the points with negative impulses and solve the others together again (``block_sweep``).
            Default True (issue 18): pyramid20 at 4 x 2 sweeps then drifts 18.6 mm in 10 s, against
            33.1 mm with False, which updates such a manifold's normals one point at a time in
            point order and so loads the first points of a face more than the last (the pyramid
            leaned 28 mm out of its plane). Ignored without ``normal_block_solve``.
        warm_start_radius: [m] a new contact point whose feature id matches no cached point takes the
            impulses of the nearest unclaimed cached point of the same shape pair within this distance
            (``contact.cache.match_cache``). Default 0.02 (2 % of a unit box): two boxes face on face
            flip their clipping reference face, and so every feature id, with tiny tilts; pyramid20
            at 4 substeps drifted 40 mm in 20 s with 0 and 20 mm with 0.02. 0: feature ids only
            (001 §8.2).
        pushed_energy_guard: a body the pseudo-velocity pass moves (``position_correction`` "relax" with
            a contact deeper than ``split_speed``) gains kinetic energy in that substep only from the
            work gravity and its applied forces did along the way it actually went, velocity and push
            together; a larger gain is scaled back along its velocity change
            (``integrate.guard_pushed_bodies``) [tumble, issue 17]. Default True. Why: the push moves
            positions only, while the velocity solve's deep rows (target 0) hold the contact points, not
            the body: a 0.5 x 2 x 16 m box standing 8 m deep and turning at 1 rad/s pivoted on its lowest
            corners, its centre falling with the tilt, while the pass lifted it 0.07 m per step; the fall
            the velocities were paid for never happened in the positions, and the box left at 8 m/s
            (60 J beyond the fuzz's energy bound after 60 steps at dt 1/60; 143 J below it with the
            guard: lifted 2.4 m still spinning). Scenes without an overlap deeper than ``split_speed``
            never run it (stack10, pyramid20, pile1000 bit for bit as before); ball_grid125 (started
            0.1 m inside each other) does: 116 J of kinetic energy after 12 steps against 2662 J.
            False: the solver before it.

        joint_direct_solve: solve the joints' equality rows exactly over the joint tree
            (``dynamics.joints.tree``, Baraff 1996: block LDL^T of [[M, J^T], [J, -Gamma]] over the
            body-joint tree, O(bodies + joints)) after every sweep over the other rows, and project
            the joint positions by Newton steps of the same solve (``joint_correction_iterations``
            of them, until ``joint_correction_tolerance``) before the Gauss-Seidel projection
            passes, which then visit only the joints outside the tree (loops) and joints with
            limits. Joints that close a loop, limit and motor rows stay with the sweeps. Default
            True, measured at dt 1/60 with the default 4 x 2 sweeps (benchmarks/pgs_defaults.py):
            chain50's final link stretch after 10 s 0.000 % (largest over the run 1.4 %) against
            7.4 % (21 %) with the joint rows in the sweeps, at about the same ms/step (2.09 vs 2.04;
            ragdolls 1.2x). Used only on (sub)steps dt / substeps <= 1/240 s (``pgs.solver.
            TREE_MAX_SUBSTEP``): with 1 to 3 substeps at 60 Hz the exact solve kept the chain's
            whip, one step's position error outgrew the linearised projection and the chain tore
            (1900 % with 1 substep, where the sweeps' damping holds it at 21 %). False: every joint row in the
            sweeps (001; the catto and legacy presets).
        joint_substep: [s] the longest substep of a step whose rows are all equality rows of the joint
            tree (no contact, and no limit, motor or loop-closing joint row): such a step takes
            n = ceil(dt / joint_substep) substeps instead of ``substeps`` (never more; and only while
            dt / n <= ``pgs.solver.TREE_MAX_SUBSTEP``, so the tree solve is used), issue 19. Each of its
            substeps solves every row exactly (the tree), so the chain needs no more substeps than the
            tree's own stability asks; the contact stacks' 12 are for the sweeps. Default 1/300 s (5
            substeps at dt 1/60), measured on chain50 (10 s, dt 1/60; largest link stretch over the run
            / one-step energy rise / energy after 10 s of 269.8 J at the start): 12 substeps (0 here)
            0.0012 % / none / 225.4 J; 6: 0.12 % / none / 220.4 J; 5: 0.066 % / none / 222.1 J; 4:
            1.44 % / 0.148 J / 223.4 J. CPU per step (time.process_time, 360 steps, 3 alternating runs):
            0.57-0.61 ms at 12, 0.30-0.44 at 5, 0.31-0.32 at 4. What it costs: the velocity solve's
            first-order dissipation grows with the substep: the pendulum scene (dt 1/240: 2 substeps
            instead of 12) released at 1.5 rad (9.12 J of swing) loses 1.04 J in 10 s (0.19 J at 12
            substeps; the peers on the same scene, benchmarks/peers, the 1 kg bob's translational energy:
            PyBullet 3.2.7's point2point 3.42 J, MuJoCo 3.3.7's PGS 7.66 J); at the scene's 0.2 rad (0.195 J)
            3.7e-4 J (6e-5 J); a free 10-link chain thrown
            spinning at (1, 8, 25) rad/s in gravity keeps 45.8 % of its angular momentum about its centre of
            mass after 100 steps (62.3 % at 12 substeps; at (0.3, 2, 6) rad/s 90.5 % and 95.7 %; nothing
            asserts it, tests/physics/test_shock_free_momentum.py's docstring). Such a step also skips the
            relax sweeps when its rows' targets are their relax targets (``joint_correction``
            "projection", ``joint_frequency`` 0): the relax solve then only re-imposes J v = 0 after the
            free rotation turned w, which the next substep's solve does at the new poses; measured:
            chain50's figures above unchanged in their printed digits, a 20-link chain of flat boxes
            (asymmetric inertia) released horizontally, with the relax sweeps vs without: 0.0012 vs
            0.0013 mm largest joint error, 74.053 vs 74.065 J after 10 s; chain50's CPU per step median
            0.328 -> 0.287 ms (5 alternating runs).
            0: every step takes ``substeps`` and its relax sweeps.
        joint_pass_skip_settled: the joint projection's Gauss-Seidel passes (after the tree's Newton steps;
            they visit the limited joints and the loop joints, ``joint_correction_iterations`` passes) skip
            a joint of the tree while neither of its bodies has moved in these passes and its coordinate
            is within its limits (``dynamics.joints.projection.project_joints``'s ``settled``; issue 19).
            Such a visit finds its equality errors at the Newton steps' residual (ragdolls, 6 s: median
            1.4e-10, largest 9.2e-7, against the tolerance 1e-6) and its limit rows inactive, and only moves
            its bodies by ``joint_correction_fraction`` of that residual. On ragdolls ~10 of the 120 limited
            hinges are past a limit at a step's projection (at most 29); the 4 passes visited all 120 each.
            Measured (both projections from the same state at every step, seeds 0-2, 6 s): the bodies
            within 3e-7 m of the full passes' poses, the largest joint error after the projection the same
            to 1e-10 (median and largest); the runs themselves diverge (a pile of ragdolls is chaotic).
            ragdolls CPU per step (time.process_time, 360 steps, 4 alternating runs, min / median): 4.11 /
            4.13 -> 3.40 / 3.51 ms, its joints stage 0.83 -> 0.35-0.38 ms. Default True. False: every pass
            visits every joint it is given.

    ``PGSSettings.preset(name)`` returns settings for ``tb.World(solver="pgs", **preset)``: "catto"
    is 001's scheme as the paper reproductions (tests/papers/test_catto_001.py) run it: one solve of
    ``iterations`` scalar sweeps per step, feature-id warm start, plus the 2 relax sweeps the
    reproductions were validated with; "legacy" (the same settings) names them as the defaults
    before issue 18. 001 verbatim is the catto preset with ``relax_iterations=0``; measured with it,
    stack10 falls in 2 of the 3 perturbed starts and stack3_nocache stands in all 3 (the paper: the
    ten-box stack stands with caching, three boxes without caching fall).
    """

    relax_iterations: int = 1
    position_correction: str = "relax"
    substeps: int = 12
    substep_iterations: int = 1
    warm_start_radius: float = 0.02
    normal_block_solve: bool = True
    normal_block_active_set: bool = True
    joint_direct_solve: bool = True
    pushed_energy_guard: bool = True
    joint_substep: float = 1.0 / 300.0
    joint_pass_skip_settled: bool = True

    #: named sets of settings (``preset``)
    PRESETS = {
        "catto": {"substeps": 1, "relax_iterations": 2, "normal_block_solve": False, "warm_start_radius": 0.0,
                  "joint_direct_solve": False},
        "legacy": {"substeps": 1, "relax_iterations": 2, "normal_block_solve": False, "warm_start_radius": 0.0,
                   "joint_direct_solve": False},
    }

    @classmethod
    def preset(cls, name: str) -> dict:
        """The settings of preset ``name`` ("catto", "legacy") as a dict for ``World(**...)``."""
        check_choice("preset", name, tuple(cls.PRESETS))
        return dict(cls.PRESETS[name])

    def validate(self) -> None:
        super().validate()
        check_count("relax_iterations", self.relax_iterations, 0)
        check_count("substeps", self.substeps, 1)
        check_count("substep_iterations", self.substep_iterations, 1)
        check_nonnegative("warm_start_radius", self.warm_start_radius)
        check_flag("normal_block_solve", self.normal_block_solve)
        check_flag("normal_block_active_set", self.normal_block_active_set)
        check_flag("joint_direct_solve", self.joint_direct_solve)
        check_flag("pushed_energy_guard", self.pushed_energy_guard)
        check_nonnegative("joint_substep", self.joint_substep)
        check_flag("joint_pass_skip_settled", self.joint_pass_skip_settled)
        check_choice("position_correction", self.position_correction, POSITION_CORRECTIONS)
