"""Settings of the shock solver (Erleben 000): the shared parts of ``solvers.settings_parts`` plus
the fields of velocity-based shock propagation."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tumble._core.solvers.settings_parts import ContactSettings, JointSettings, RowSettings, SolverSettings
from tumble.errors import SettingsError


@dataclass
class ShockSettings(ContactSettings, RowSettings, JointSettings, SolverSettings):
    """Settings of velocity-based shock propagation (Erleben 000, Fig. 14): the shared contact model
    (``ContactSettings``), the PGS rows (``RowSettings``) and the joints (``JointSettings``) of
    ``solvers.settings_parts``, with the defaults below, plus its own fields.

    Attributes (its own, and the shared ones whose default or meaning differs here):
        iterations: PGS sweeps of each dynamics() solve -- the a dt solve of the whole system and
            the (1 - a) dt solve of every stack layer; default 10 (000 §4: "never more than 10").
        correction_iterations: sweeps of each correction() (the projection LCP of eq. 46), per
            layer and in the final correction; default 5 (000 §4).
        dynamics_fraction: a of Fig. 14, the share of the step solved on the whole system before
            shock propagation takes the rest layer by layer. The paper uses 0 < a <= 0.01; a = 0
            would let bodies at rest never feel each other's weight. Default 0.01.
        shock_propagation: solve dynamics((1 - a) dt) and correction() layer by layer with the
            bottom of each layer fixated (Fig. 12). False runs dynamics(dt) and correction() on
            the whole system instead (the "without shock propagation" case of Fig. 13).
        final_correction: detect contacts again at t + dt and run correction() on them (the last
            two lines of Fig. 14); default True.
        cfm: gamma [1/kg] of constraint force mixing, A' = A + gamma I (eq. 41), in every dynamics
            solve; default 0 (none). It damps the impulses and speeds up convergence (Figs. 6-7).
        correction_slop: [m] penetration the projection leaves in place, so resting contacts stay
            detected from step to step instead of separating and falling back (the saw-tooth
            "popcorn" of §6.1); default 1e-4.
        tolerance: [m/s] a dynamics solve (the whole system's, or one layer's) stops before
            ``iterations`` sweeps once a sweep changes no row velocity by more than this; 0 always
            runs them all. Default 1e-5 (tower_roof before impact: 24 ms/step and 0.014 mm drift in
            3 s, against 40 ms and 0.023 mm at 1e-6; the per-body repeats do the fine work).
        correction_tolerance: [m] the same for correction() sweeps (displacement per row); default 1e-6.
        block_iterations: inside each layer sweep, repeat the rows of one body (its contacts with the
            fixated bodies below and its siblings) up to this many times before moving to the next body; 1
            is the paper's plain PGS. Default 12. Why repeats: a fixated layer passes every velocity error
            of its bodies on to the layer above as a prescribed motion, so errors grow with height. With
            plain PGS at 10 sweeps per layer the 40-course tower of tower_roof rocked from the first step
            (0.14 rad/s at the top, 7 cm drift in 2 s, +80 J); with the body's rows repeated to 1e-9 m/s it
            stood with 1 um drift (30 plain sweeps did too, at three times the cost). Why 12 (issue 19; it
            was 20): almost every visit stops at the cap, never at ``block_tolerance``, so the cap sets the
            layer stage's cost. tower_roof, 3 s (300 steps), one thread, median CPU ms per step and max
            drift (two processes, 20/10/5 and 15/12/8, each stepping its caps round-robin): 20: 18.7 ms,
            0.010 mm; 15: 17.1, 0.011; 12: 13.8, 0.0059; 10: 13.7, 0.0060; 8: 20.0, 0.11; 5: 22.7, 19 mm
            (below ~10 the outer sweeps no longer stop early: 201 layer sweeps at 8 against 81 at 12 and 104
            at 20). 10 against 20 elsewhere (300 steps): wall200 3.85 / 4.23 ms, drift 0.0022 / 0.0021 mm;
            tower320 4.84 / 6.23 ms, 0.0003 mm both; box_stack25 0.58 / 0.60 ms, 0.0015 mm both; pile1000
            (dt 0.01) 15.6 / 20.3 ms. The whole 16 s of tower_roof with its collapse, 12 against 20 in one
            process: median 15.7 / 21.0 ms, mean 17.1 / 23.5 ms, deepest penetration 227 / 233 mm, no energy
            gained by either. 12 keeps a margin above the cliff at 8.
        block_tolerance: [m/s] stop repeating a body's rows once a pass changes none of them by more
            than this; default 1e-9.
        layer_targets: "paper" -- each layer solve enforces the contacts' velocity targets against
            its fixated (infinitely heavy) bottom bodies, as Fig. 14 reads; "incremental" (default)
            -- where a fixated body itself moves into the body above it faster than
            ``layer_collision_speed`` (after dynamics(a dt)), the layer asks the upper body only to
            stop its own approach, not to get out of the way (the correction removes the overlap);
            a body falling onto its base is stopped as in "paper". Why: a fixated body moving into
            the one above launches it whatever the masses; in tower_roof (cannon at 2 s) the
            tumbling 32 kg bricks threw the 16 t block 3 m up (+0.5 MJ) under "paper".
        layer_collision_speed: [m/s] see ``layer_targets``; default 0 [tumble, issue 18]: a fixated
            base moving into the body above at any speed only stops that body's own approach (the
            overlap it leaves is the layer correction's, a position change). Why not more: below the
            threshold the top was sent along at the base's speed, and a base's contact points move by
            its rocking too (a point of a cube's top face at 0.5 m from its centre moves at 0.5 w), so
            the tops of tall stacks rocked themselves up layer by layer with energy no fall paid for
            (the fixated base gives and never pays): pyramid of base 60 (1830 unit cubes, 100 kg/m^3,
            dt 1/60, 3 s) 16 steps raising the total energy, up to +0.22 J in one (the top cubes
            leaving at 2.5 mm/s); large_pyramid (base 100) +153 J in one step, +305 J above its start.
            With 0: no step raises it in either, and they drift less (base 60: 0.558 -> 0.022 mm;
            base 100: see ``tests/physics/test_shock_energy.py``). 0.05 (before): the "resting
            contact's residual approach after dynamics(a dt), about a g dt" kept as the paper's.
        max_correction: [m] the most one correction() may separate a contact in one step
            (depth - slop is capped at this); default inf, the paper's full projection.
        reuse_final_contacts: the contacts of detect(t + dt) serve as detect(t) of the next step,
            their depths moved to first order by the final correction (depth - J_n disp), so each
            step runs the narrow phase once instead of the paper's twice. Any change to the bodies
            between steps (set_position, a new body, a setting) makes the next step detect afresh.
            False runs Fig. 14 literally. Default True.
        stop_unseen_contacts: after the final correction, a velocity solve (normal rows, Newton
            restitution above restitution_threshold, else no approach; lambda >= 0) on the final
            contacts of bodies that had no contact row in the
            step's dynamics [tumble, issue 18]. Default True. Without it, a body whose contacts the
            final correction pushed apart each step was never seen by a velocity solve: a box
            (0.4, 0.35, 0.35) dropped from 1.5 m spinning at (0, 18, -18) rad/s, 60 Hz, sat at
            z = 0.35 m while its v_z grew to -48 m/s in 5 s (energy +1157 J).
        settle_pushed_contacts: after the final correction (and ``stop_unseen_contacts``), the normal
            rows of the final contacts the correction pushed apart (lambda_c > 0), with the joints'
            equality and limit rows, get one more velocity solve, J v >= 0 with lambda >= 0 (no bias,
            an inelastic stop), layer by layer over the stack layers of these rows alone (dynamics(0)
            through ``shock_propagation``) [tumble, issue 18]. Default True. Why: correction() moves
            positions only, so a body it holds or lifts (jammed between overlaps, pushed out of the
            ground each step) kept the approach the velocity solve left it, and gravity added to it
            every step: a 29 m sphere on a unit sphere buried in the ground left 251 J beyond the fuzz's
            energy bound (SHOCK_JAM_CASES in tests/physics/test_fuzz.py); with the pass 89.6 J below.
        final_joint_tree: when the joints form a tree (no loop), the final correction solves the tree
            joints' equality rows exactly after each of its Gauss-Seidel sweeps over the contacts and
            limits (``kernels.tree_correction``: up to ``solver.TREE_CORRECTION_SWEEPS`` = 50 sweeps,
            fewer at ``correction_tolerance`` or once a body's correction turns it 0.2 rad,
            ``solver.TREE_CORRECTION_MAX_TURN``), and after ``settle_pushed_contacts`` the velocities are
            projected, in the kinetic metric, on those rows with the pushed contacts' normal rows and
            the limits (``kernels.settle_joint_tree``) [tumble, issue 17]. Default True. Why: the
            velocity solves are Gauss-Seidel on the joint rows, which through a light body move the light
            side only, while the tree projection holds the poses exactly: a 28 kg box hung from the world
            by a 2.8e-5 kg link fell at g in velocity with its pose held (63 J beyond the fuzz's energy
            bound resting on the ground, 1.8e15 J hung in the air at 60 Hz); three jointed spheres in the
            ground were lifted out by the sweeps and pulled back by the projection for 10 steps while the
            top one's fall built up (1.78 J beyond). Now 0.13, 0.75 and 0.39 J below
            (SHOCK_JOINTED_JAM_CASES in tests/physics/test_fuzz.py). Why the caps: 50 sweeps let the
            three spheres leave the ground in one step (5: 0.36 J beyond; 20: the hung link 0.16 J
            beyond); without the turn cap the linearised rows of a link jammed between two capsules
            turned it through wild angles (7e19 J in 30 steps; 0.5 rad: 3.7e17 J). Cost (the scene's
            whole run, both stepped alternately in one process, CPU median ms/step, True against False):
            chain50 2.11 / 1.98, ragdolls 38.4 / 35.4, motor_car 1.09 / 1.04; bridge (a loop) unchanged.
            Largest joint error over the run: chain50 1.19 / 1.11 um (both at the projection's 1e-6 m
            tolerance), ragdolls 0.73 / 0.84 um, motor_car 0.24 / 0.31 um, bridge 7.04 mm both. Not the
            class: jointed jams the fuzz's ``jointed_jams`` draws still break the bound (about one world
            in eight, as many as without it; its strict xfail). False: the code before, bit for bit.
        layered_final_correction_depth: [m] when the final correction's whole-system sweeps leave a
            contact deeper than this (to first order), the projection runs once more layer by layer over
            the final contacts' stack layers, each layer's bottom fixated (Fig. 12 with A = correction(),
            as inside the step), from the displacement reached [tumble, issue 18]. Default 1e-3; inf:
            never. Why: 5 Gauss-Seidel sweeps of eq. 46 on a 32 kg brick under the 16 t block move the
            block by 1/500 of the brick's push (000 Fig. 13: the correction "fails to converge without
            shock propagation"). Resting stacks never leave 1 mm, so they never run it.
        joint_aware_correction: the joint rows take part in every correction() (the layers' and the
            final one) as position constraints: J disp = zeta h on equality rows (0 without Baumgarte
            feedback: the projection leaves each joint error as it was), J disp >= -gap on limits
            (``kernels.correction_sweep``) [tumble, issue 18]. Default True. False is the paper's
            contact-only correction, which pushed a landing limb out of the floor without its
            neighbours and opened its joints by the depth. Measured (60 Hz, 6 s; the three issue-18
            changes together): ragdolls of 20, largest joint error 368 -> 26 mm (pgs 13 mm), largest
            energy rise in one step +153 kJ -> +0.03 J; 10 ragdolls 291 -> 11 mm, +13 kJ -> +1.9 J;
            chain50 29 -> 21 mm; two spheres on a ball joint landing 5 cm deep 52.6 -> 0.5 mm.
        joint_tree_projection: the joint projection (after the layers and again after the final
            correction) starts with Newton steps of the exact solve over the joint tree
            (``dynamics.joints.tree.project_tree``, as pgs does with ``joint_direct_solve``), then the
            Gauss-Seidel passes over the joints outside the tree (loops) and those with limits [tumble,
            issue 18], and in the final projection after those passes the tree's Newton steps once
            more (so a limit's correction does not leave its neighbours open). While a joint closes a loop
            it is used only with the loop closed exactly (``close_joint_loops``): a loop joint left to the
            capped passes after the tree's moves grew its error on ``bridge``, held by the world at both
            ends, 9.6 -> 122 mm. Default True. False: the
            Gauss-Seidel passes over every joint (``joint_correction_iterations`` of them,
            ``joint_correction_fraction`` per visit), which carry a correction about one link per
            pass: chain50 kept 10-20 mm at every joint. Measured (largest joint error over the run,
            60 Hz, 10 sweeps; False -> True): chain50 (10 s) 23.1 mm -> 1.1 um (pgs 1.2 um), 20
            ragdolls (6 s) 19.8 mm -> 0.24 um (pgs 5.8 mm), 10 ragdolls (2.5 s) 12.5 mm -> 0.24 um (pgs
            0.41 mm).
        joint_projection_angular_weight: the metric of the tree projection's Newton steps is
            diag(m, I / w) with w this weight, i.e. the least change sum m |dx|^2 + dtheta^T I dtheta / w
            that closes the joints; 1 is the kinetic metric [tumble, issue 18]. Default 0.01: rotations
            cost 100 times their kinetic weight, so a joint gap is closed mostly by moving the bodies,
            where the rows are linear, instead of turning light thin links, where they are not. Why:
            shock's whole 1/60 s steps leave chain50's swinging links ~1-6 cm apart at each joint, and
            in the kinetic metric the Newton step turned the thin capsules by up to 0.3 rad to close
            4 mm, overshot, stalled at 2-4 mm and was undone. Measured (chain50, 10 s; ragdolls, 6 s;
            largest joint error over all steps, before the second tree pass): w = 1: 23.4 / 57.9 mm; 0.1:
            34.0 / 4.0 mm (chain50 +17.8 J in one step); 0.01: 1.1 um / 2.5 mm; 0.001: 1.0 um / 3.2 mm,
            but chain50 ended 257 J above its start energy (translating links whose velocities are
            kept pumps energy).
        close_joint_loops: joints that close a loop (outside the joint tree: ``bridge``'s plank chain
            hinged to two fixed abutments) are solved exactly with the tree when their equality rows
            number at most ``stages.LOOP_ROWS_MAX`` (30): in the tree projection's Newton steps (the
            tree's Schur complement, ``dynamics.joints.tree._close_loops``) and in two velocity
            projections on the joints' equality rows in the kinetic metric (``settle_loop_velocities``),
            one after gravity's (1 - a) dt before the layers, one at the step's end [tumble, issue 18].
            Default True. False: the code before, bit for bit (the loop joints with the capped
            Gauss-Seidel passes, no tree projection in a step with a loop); more loop rows than the cap
            (breakable_wall's wall: 420) stay so either way. Why: shock's velocity sweeps hold a loop of
            n joints about one joint per sweep, so the bridge, released at rest in its hanging shape,
            sagged in velocity each step and the projections lifted it back: the planks flapped with up
            to 39 J of kinetic energy in its first second (pgs: 0.1 J) and the joints stood 3-5 mm open.
            Measured (bridge, 8 s, dt 1/60, before -> after; pgs): largest joint error 7.04 mm -> 1.0 um
            (2.16 mm); largest rise of the total energy in one step 11.46 -> 3.38 J (2.34 J); rise above
            the energy budget 0 -> 0.0075 J (0; the first steps' lifts); kinetic energy before the loads
            land at most 39 -> 0.05 J (0.1 J); deepest overlap found by the final detection 9.04 ->
            22.8 mm (35.7 mm): a landing load's, now onto a still deck (from the same state at step 72
            both ways give 18-25 mm; before, the deck happened to be swinging down at 0.67 m/s). Only the
            end-of-step projection: above the budget 0.39 J; only the one before the layers: 4.97 J in
            one step. Cost (bridge, 480 steps alternately in one process, CPU median): 1.78 against
            2.36 ms/step (the exact projection stops at its tolerance where the passes ran out).
        stop_undone_joint_motion: after each joint projection, a body the projection moved by d
            (|d| > ``solver.UNDONE_MIN_MOVE`` = 1 mm) back against its velocity (v . d <= -0.7 |v| |d|,
            within 45 degrees, ``solver.UNDONE_MIN_COS``) loses the component of v along -d, at most
            |d| / dt of it (``undone.stop_undone_motion``: an inelastic stop, no body's kinetic energy
            rises) [tumble, issue 18]. Default True. Why: the velocity solves see the joints linearised,
            and a nearly taut chain may drop along a direction its joints forbid at second order; the
            projection lifts it back each step and the velocity kept the drop: under bridge's 20 kg loads
            the planks kept -0.57 and -1.29 m/s while the projection lifted them 23-24 mm a step (joint
            error 2.7 mm before it), straight into the load resting on them, which the projection does
            not see (22.8 mm deep at step 77). Measured (the library scenes under shock, their whole run,
            False -> True): bridge, steps with an overlap > 5 mm 44 -> 3 (the landings, steps 73-75, left:
            the speculative manifold's), deepest overlap after step 75 22.8 -> < 5 mm, joint error 1.0 ->
            1.1 um, energy gain above the budget 0.0075 J both; chain50 (10 s) total energy at 1 s 230.9 ->
            226.9 J, at 3 s 173.6 -> 175.2 J (pgs 267.2 / 265.2), kinetic energy at the end 3.9 -> 0.05 J;
            ragdolls deepest overlap 46.5 -> 40.3 mm (the limbs' speculative manifold, not this), joint
            error 0.7 um both. Why 45 degrees: with any v . d < 0, chain50's swinging links were changed
            24 526 times in 600 steps (7 441 at 45 degrees), and the bridge kept 6 steps over 5 mm (3).
        warm_start_energy_guard: before the whole-system velocity solve and before the layers, the
            warm-start impulses of every island with a joint row (with an impulse) and a contact row, and
            no motor or soft row, are scaled so that applying them alone does not raise the island's
            kinetic energy (``guard.guard_warm_start``: f(s) = s v^T M du + s^2 du^T M du / 2, scaled by
            the minimiser max(0, -b / a) where f(1) > 0) [tumble, issue 18]. Default True. Why: impulses
            that cancel on every body of a loop (two boxes welded to each other and to a light link
            jammed inside one of them) grew step after step in the warm start and, once a contact point
            moved, gained 2.7 MJ in one velocity solve (10 sweeps at 1:1e8 mass ratios never undo it;
            ``test_fuzz.SHOCK_WELDED_LOOP_CASE``: 5.6e19 J beyond the fuzz's bound -> 47.6 J below). The
            library scenes' state hashes are unchanged.
        lifted_energy_guard: a jointed group with a body that the contact corrections (the layers', the
            final one) moved more than ``guard.LIFT_MIN_MOVE`` (1 mm) ends the step with at most its start
            kinetic energy plus the work of gravity and the applied forces along the way its bodies went,
            a lift paid from its kinetic energy (``guard.guard_lifted_groups``: pgs's pushed-energy rule
            per group; a blend of the step's start and end velocities, one factor per group, so its joints
            stay closed in velocity; groups with motors or springs are left alone) [tumble, issue 18].
            Default True. Why: the projections move positions only; a group lifted out of an overlap while
            it toppled in velocity kept the energy of a fall its position never made (a rod 1.3 m in the
            ground welded to a 17 t sphere: ``test_fuzz.SHOCK_TOPPLING_LIFT_CASE``, 909 J beyond the
            bound -> 9170 J below). With both guards the fuzz's ``jointed_jams`` broke the bound in 0 of
            1000 worlds (seeds 1-10; before, 45 of the 500 of seeds 1-5, up to 2.9e24 J beyond). Cost:
            chain50 and ragdolls CPU per step unchanged within the noise (alternating processes, 3
            rounds); the library scenes' state hashes are unchanged.
        root_support_cos: a dynamic body is a root of the stack layers (height 1) when a joint ties
            it to a fixed body or a contact with a fixed body supports it against gravity: the
            contact normal n (pushing on the body) has n . up > this (``contact.layers.
            articulated_heights``) [tumble, issue 18]. Default 0.5 (a surface up to 60 degrees
            from level supports; steeper ones are walls). -1: every contact with a fixed body
            roots, 000 §4 as written, which made the walls of pile1000 roots: with them the pile
            never rested (kinetic energy ~3 kJ, sphere overlaps of 18 cm after 300 steps).
        layer_rest_order: in the step's layer propagation, after the heights by contact distance, a
            body resting on another (a contact normal row between them pushing it with n . up >
            ``root_support_cos``, its centre above the other's) gets a greater height than that one, so
            it is solved after it, movable, instead of fixated beside it; roots and jointed bodies keep
            theirs (``contact.layers.rest_order_heights``) [tumble, issue 18]. Default False: not no
            worse everywhere yet (bullet_stacks below). Why: in tower_roof's collapse a brick lay between
            a brick under it and two lying on it, all three one height below it by graph distance and
            fixated in its layer; the layer correction pushed it 70 mm into the one below. Measured
            (deepest overlap at a final detection, steps deeper than 1 cm; off -> on; the scene's run,
            tools/shock_depth_survey.py's depth): tower_roof (1600 steps) 107.5 -> 74.2 mm, 146 -> 104;
            falling_roof (500) 63.8 -> 41.5 mm, 47 -> 38; bullet_stacks 2.65 -> 3.31 mm (two bricks side
            by side on the ground after the bullets, a chaotic difference); catapult 7.647 -> 7.651 mm;
            bricks5x5, box_stack25, pyramid20, breakable_wall, inclined_letters unchanged; energy gain the
            same (0; catapult 1.3e-6 J) in all; CPU per step within the noise (tower_roof, falling_roof,
            alternating processes). Only the velocity propagation's layers are reordered: reordering the
            layered final correction's and the settle's too made falling_roof's deepest 79.4 mm; raising
            the roots too made inclined_letters' 7.0 -> 10.6 mm (a letter on the incline and on another).
        layer_ahead_copies: every contact row between two dynamic bodies of different stack heights
            is also solved in the lower body's layer, the higher body a static obstacle there (its
            pose of detect(t), no velocity, no impulse), as a velocity row only (the projections skip
            it) [tumble, issue 18; ``kernels.count_ahead_copies``]; but not the rows of a body resting
            on the lower one (``layer_ahead_min_push``) nor impacts (``layer_ahead_max_speed``). Default
            True. Why: a row belongs to the layer of its higher side, so a body held up or sideways by a
            neighbour of a later layer slid or fell in its own layer; the layer's projection lifted it
            back and its velocity kept the fall. Measured on pile1000 (60 Hz, one thread, the worlds
            stepped alternately in one process, CPU time, loaded machine), False -> True: from the state
            at step 1500 (reached with False), over the next 240 steps kinetic energy of the spheres in
            the box 0.82-4.69 J -> 0.15-1.84 J (median 2.24 -> 0.44 J), largest one-step rise of the
            total energy 0.71 -> 0.19 J, deepest contact 3.5 -> 0.37 mm, 43.7 -> 48.1 ms per step
            (medians); from the start, at step 300 (the scene's 5 s), kinetic energy in the box 6.8 ->
            7.1 J (median of the last 30 steps 9.8 -> 4.4 J), deepest contact over the last 60 steps 3.9
            -> 0.37 mm, no step raised the total energy either way, 41.0 -> 45.1 ms per step.
        layer_ahead_min_push: the ahead copies take only the rows whose push on the lower body n has
            n . up >= this (``kernels.count_ahead_copies``) [tumble, issue 18]. Default -0.5: not the rows
            of a body resting on the lower one (normal within 60 degrees of straight down), the common
            rows of a stack, where copies only double the rows (tower_roof 25 -> 48 ms per step with
            -1, two runs one after the other, loaded machine; at -0.5 it makes none). -1: every row
            between two heights. Measured on pile1000 from the state at step 1500 (60 Hz): kinetic
            energy of the spheres in the box 0.7-2.1 J over 240 steps at -0.5, 0.14-0.29 J over 120
            steps at -1 (1.8-8.0 J without copies); largest one-step rise 0.40 / 0.25 J (15.2 J without).
        layer_ahead_max_speed: [m/s] the ahead copies leave out impacts: a row whose lower body moves
            into the higher one's pose faster than this, and every row of a body that has a contact
            closing faster than this (a body hit this step), at the velocities the layers start from
            (``kernels.count_ahead_copies``) [tumble, issue 18]. Default 1 m/s. Why: in the copy the
            higher body is a static wall, which stops a fast lower body dead, and the higher body,
            solved after it, is then never pushed: with every row copied (inf) the small tower_roof's
            cannonball (on the ground, stack height 1) met the height-2 bricks at 5.6-10.6 m/s, was
            stopped and knocked no brick out (tests/papers/test_erleben_results_000.py); 25 bricks
            without copies. Measured, tower_roof (4 courses, dt 0.01) bricks displaced: 0.25 m/s 20,
            0.5: 20, 1: 19, 2: 16, 4: 13 with the closing-speed and hit tests; 23 at 1 m/s with the
            lower body's own approach too (the default). pile1000's copied rows close at <= 1.44 m/s
            and their lower body approaches at <= 1.78 m/s while the spheres fall in (steps 0-60),
            <= 0.75 / 1.26 m/s in steps 60-120, <= 0.45 / 0.61 m/s in steps 200-300; from the state at
            step 1500, 1 m/s and inf gave the same 240 steps (the same copies).
        layer_warm_start: with ``warm_start``, the share of its last step's layer impulse each
            contact row starts its layer solve from [tumble, issue 18]; joint rows start from all of
            theirs. Default 0: the contacts start from lambda = 0, as Fig. 12 reads. Measured: with 1
            (before issue 18) the contact impulses of 10 ragdolls grew to 1000-3800 N s on a 7 kg torso
            (loops of impulses that cancel on every body) until +4.5 kJ in one step; pile of 200
            spheres, 8 s: kinetic energy at the end 0.017 J at 0, 125 J at 1 (both with the roots
            above); 0.5 and 0.85 left pile1000 at 60-1000 J. The cost: box_stack25 under the paper's
            plain 10 sweeps per layer drifts 8.7 mm in 4 s instead of < 1 mm (the default per-body
            repeats keep it < 1 mm).
        speculative_contacts: both detections pad every moving body's geoms by dt (|v| + |w| r), how
            far any of their points moves in a step at the body's velocities, and report points that
            far apart as speculative rows (``collision.geoms.pad_speculative``) [tumble, issue 18].
            Default True (since issue 18's layer targets per layer, ``kernels.layer_row_targets``:
            before them, in tower_roof the cannonball's impact threw the 16 t roof block up at 3.3 m/s,
            +152 kJ; now 0 J). tower_roof (16 s, dt 0.01), speculative off -> on: deepest point of the
            final detection 474 -> 121 mm, 29.6 -> 28.3 ms/step (CPU time, one process, loaded
            machine); falling_roof 143 -> 71 mm, 23.1 -> 29.6 ms/step. Without them a contact the step
            closes is first seen by the final detection, already deep. Measured, two randomised drops
            of each shape (2 s, up to 20 rad/s, 5 m/s) on the ground, deepest overlap inside a step at
            60 Hz: sphere 77 -> 0 mm, box 158 -> 0.9 mm, plate 139 -> 0 mm, capsule 139 -> 1.4 mm,
            hull 335 -> 0 mm (at 100 Hz 64-94 mm -> <= 0.6 mm); 20 ragdolls: deepest contact 134 -> 39
            mm. The cost is the extra pairs and rows of fast bodies: pile1000 (3 s) 21.9 -> 26.5 ms/step
            while it falls, its deepest final-detection point 71 -> 13 mm.
        spin_substep_angle: [rad] a step in which a dynamic body with a contact point at its start (a speculative
            one included) turns more than this (|w| dt at the step's start) is taken as k shock steps of dt / k, k =
            ceil(|w| dt / this) (``spin.spin_substeps``) [tumble, issue 18]. The contact rows are linear in the rotation
            and built from the features detect(t) found, so a body turning a lot in one step met the ground with points
            no row saw. inf: never. Default inf (off): not yet proven across the suite; 0.1 is the measured value to
            turn it on with. Turned on, the shock tests of test_fuzz, test_shock_energy, _speculative, _jams, _piles
            pass (the turn check takes the velocities' turn only: with the corrections' turn too a 2.8e-5 kg link turned
            by a deep jam's projection took substeps and SHOCK_WORLD_GROUND_JAM_CASE ended 1.86 J beyond its bound), but
            contrasts that measure what the substeps remove (test_shock_unseen_contacts' energy gain,
            test_shock_articulated's chain50 in the kinetic metric) and test_shock_ahead_rows' impact bound (the ball
            5.42 m/s after the hit against 8 x 5 / 7, which leaves out the ground's friction) fail, and the compound
            spinning like a top gains 2.7e-5 J beyond the tolerance (test_shock_energy's FAST_COMPOUND_TOP). Measured,
            1200 drops of every shape turning 0.2-0.9 rad a step (``fast_drops`` of tests/physics/test_shock_energy.py,
            100 per shape and dt 1/60, 1/100), deepest overlap: inf 12.5 mm (5 draws above 1 cm or the energy
            tolerance); 0.3: 32.6 mm (a plate); 0.2: 2.4 mm; 0.1: 0.61 mm; 0.05: 0.36 mm. Energy: at 0.3 and 0.2
            compounds, at 0.1 one compound spinning like a top (2.7e-5 J beyond the tolerance, open), at 0.05 a plate
            (1e-7 J) gained above the tolerance. The cost is whole-world substeps while one body turns fast: CPU ms per
            step (the scene's duration, alternating processes, loaded 2-core VM; tools/shock_spin_cost.py) inf -> 0.1:
            cage 7.4, 7.8 -> 8.4, 7.9; ragdolls 27.4, 27.2 -> 60.2, 59.9; silo 25.3, 25.1 -> 47.2, 49.8; cow_pile 127.5
            -> 171.1.
        correction_max_turn: [rad] a correction() (a layer's, the final one's whole-system or layered sweeps)
            that turns a body by more than this is undone and solved again in the metric diag(m, I / w),
            w = ``kernels.CORRECTION_TURN_WEIGHT`` (turns cost 1 / w as much as shifts; ``turn_limited_correction``)
            [tumble, issue 18]. Corrections with joint rows (``joint_aware_correction`` in a jointed scene) are
            not limited. inf: the kinetic metric always (000 eq. 46 as written, bit for bit). Why: the rows are
            linear in the rotation and a push near a brick's end is mostly a turn in the kinetic metric; in a
            toppling column each brick's correction turn, fixated as the next layer's base, lifted the end of
            the brick on it and turned that one further (falling_roof, step 393: 0.19 -> 1.22 rad up five
            courses from a 27.5 mm overlap, a brick thrown 179 mm up into the roof, 131 mm deep at the final
            detection). Measured (tools/shock_depth_survey.py's figures, whole runs; deepest final-detection
            overlap / steps deeper than 1 cm / steps with a correction turn > 0.3 rad): falling_roof inf 131.5 mm /
            90 / 12, 0.1 63.8 mm / 47 / 0 (its deepest now a brick falling at 8 m/s turning at 20 rad/s, an
            impact), 0.05 100.9 / 95, 0.03 67.5 / 47, 0.01 34.3 / 30, every correction (1e-9) 53.4 / 49;
            tower_roof inf 127.5 / 142 / 15, 0.1 107.5 / 146 / 0, 0.03 171.4 / 144, 0.01 159.3 / 118, 1e-9
            116.2 / 107 (its deepest are another jam: a brick squeezed between two fixated bodies of lower
            height, one lying on it; open). The collapses are chaotic, so single depths scatter; the turn
            counts do not. Default 0.1: every shock state hash and the whole runs of bricks5x5, box_stack25,
            pyramid20, breakable_wall, inclined_letters and catapult are unchanged (their corrections turn a
            body 0.083 rad at most, catapult; resting contacts 0.013), while smaller limits fire there.
        spin_substep_arc: [m] the same substeps also when a dynamic body of a contact point turns its far points
            through more than this: k >= ceil(R theta / this), theta its turn in the step (as ``spin_substep_angle``
            measures it), R its reach (max over its geoms of |local position| + bounding radius) [tumble, issue 18].
            inf: never. Default inf (off; the cost below). Why a length: a body turning theta about the one speculative
            point of an edge-edge axis (box-box, hull-hull) brings the rest of that edge or face down by up to R theta
            with no row that sees it (``spin.py``'s docstring): cow_pile's step 202 with ``spin_substep_angle`` 0.1, a
            cow (R 1.29 m) turning 0.09 rad a substep met its neighbour 21.4 mm deep. Measured: 40 planks (half length
            0.5-1 m) dropped turning 0.04-0.1 rad a step across a fixed beam (``PLANK_ON_BEAM`` of
            tests/physics/test_shock_energy.py), deepest overlap above 5 mm in 24 of them with the angle 0.1 alone (up
            to 70 mm), in 9 with 0.02 m as well (up to 14.8 mm, 4 above 1 cm: the impact spins the plank up inside
            substeps that keep their k). Library scenes: see
            benchmarks/results/local-2core-amd-epyc/shock_depth_survey.md.
        spin_substeps_max: the most substeps ``spin_substep_angle`` (or ``spin_substep_arc``) takes in one step (1:
            never); default 8
            (0.8 rad a step fully resolved; a 0.9 rad turn gets 8 substeps of 0.11 rad).
        reuse_max_correction: [m, and rad] the contacts are reused only when the final correction
            moved no body by more than this (linear, and rotation angle): the first-order depths and
            the unmoved points are then accurate. After larger moves the next step detects afresh:
            in tower_roof, reusing after the cannonball's deep penetrations let the stale contacts
            throw the 16 t block up at 3 m/s (+11 kJ in a 12-course version). Default 1e-3.
        baumgarte: the position error is corrected by projection, so the velocity solve has no
            Baumgarte feedback: default 0 (a value > 0 adds it on top, for experiments).
        relax_iterations: not a field of this solver (pgs' relax stage); accepted with a
            DeprecationWarning and ignored (``SolverSettings.IGNORED``).
        contact_margin: [m] default 1 mm. The projection leaves touching faces within micrometres
            of each other, and a face resting on another at a 1e-5 rad tilt has corners apart by more
            than the narrow phase's 1e-6 m tolerance: with a zero margin they dropped out of the
            manifold and bricks of wall200 rocked on 3 of their 8 points (1.2 rad/s after two steps).
            Points inside the margin are speculative rows (they may close the gap, no more).
    """

    IGNORED = {"relax_iterations": 0}

    baumgarte: float = 0.0
    contact_margin: float = 0.001
    correction_iterations: int = 5
    dynamics_fraction: float = 0.01
    shock_propagation: bool = True
    final_correction: bool = True
    cfm: float = 0.0
    correction_slop: float = 1e-4
    max_correction: float = math.inf
    layer_targets: str = "incremental"
    layer_collision_speed: float = 0.0
    reuse_final_contacts: bool = True
    stop_unseen_contacts: bool = True
    settle_pushed_contacts: bool = True
    final_joint_tree: bool = True
    layered_final_correction_depth: float = 0.001
    joint_aware_correction: bool = True
    joint_tree_projection: bool = True
    joint_projection_angular_weight: float = 0.01
    close_joint_loops: bool = True
    stop_undone_joint_motion: bool = True
    warm_start_energy_guard: bool = True
    lifted_energy_guard: bool = True
    root_support_cos: float = 0.5
    layer_rest_order: bool = False
    layer_ahead_copies: bool = True
    layer_ahead_min_push: float = -0.5
    layer_ahead_max_speed: float = 1.0
    layer_warm_start: float = 0.0
    speculative_contacts: bool = True
    reuse_max_correction: float = 1e-3
    tolerance: float = 1e-5
    correction_tolerance: float = 1e-6
    block_iterations: int = 12
    block_tolerance: float = 1e-9
    spin_substep_angle: float = math.inf
    spin_substep_arc: float = math.inf
    spin_substeps_max: int = 8
    correction_max_turn: float = 0.1

    def validate(self) -> None:
        super().validate()
        c = self.correction_iterations
        if not isinstance(c, int) or isinstance(c, bool) or c < 0:
            raise SettingsError(f"setting correction_iterations={c!r} must be an integer >= 0")
        a = self.dynamics_fraction
        if not (isinstance(a, (int, float)) and not isinstance(a, bool) and 0.0 < a <= 1.0):
            raise SettingsError(f"setting dynamics_fraction={a!r} must be in (0, 1] (a of 000 Fig. 14)")
        bi = self.block_iterations
        if not isinstance(bi, int) or isinstance(bi, bool) or bi < 1:
            raise SettingsError(f"setting block_iterations={bi!r} must be an integer >= 1")
        rc = self.root_support_cos
        if isinstance(rc, bool) or not isinstance(rc, (int, float)) or not -1.0 <= rc < 1.0:
            raise SettingsError(f"setting root_support_cos={rc!r} must be in [-1, 1)")
        if not isinstance(self.layer_rest_order, bool):
            raise SettingsError(f"setting layer_rest_order={self.layer_rest_order!r} must be True or False")
        lw = self.layer_warm_start
        if isinstance(lw, bool) or not isinstance(lw, (int, float)) or not 0.0 <= lw <= 1.0:
            raise SettingsError(f"setting layer_warm_start={lw!r} must be in [0, 1]")
        ld = self.layered_final_correction_depth
        if isinstance(ld, bool) or not isinstance(ld, (int, float)) or math.isnan(ld) or ld < 0:
            raise SettingsError(f"setting layered_final_correction_depth={ld!r} must be a number >= 0 [m] "
                                f"(inf: never)")
        mp = self.layer_ahead_min_push
        if isinstance(mp, bool) or not isinstance(mp, (int, float)) or not -1.0 <= mp <= 1.0:
            raise SettingsError(f"setting layer_ahead_min_push={mp!r} must be in [-1, 1]")
        sa = self.spin_substep_angle
        if isinstance(sa, bool) or not isinstance(sa, (int, float)) or math.isnan(sa) or sa <= 0:
            raise SettingsError(f"setting spin_substep_angle={sa!r} must be a number > 0 [rad] (inf: never substep)")
        sr = self.spin_substep_arc
        if isinstance(sr, bool) or not isinstance(sr, (int, float)) or math.isnan(sr) or sr <= 0:
            raise SettingsError(f"setting spin_substep_arc={sr!r} must be a number > 0 [m] (inf: never substep)")
        sm = self.spin_substeps_max
        if not isinstance(sm, int) or isinstance(sm, bool) or sm < 1:
            raise SettingsError(f"setting spin_substeps_max={sm!r} must be an integer >= 1 (1: never substep)")
        mt = self.correction_max_turn
        if isinstance(mt, bool) or not isinstance(mt, (int, float)) or math.isnan(mt) or mt <= 0:
            raise SettingsError(f"setting correction_max_turn={mt!r} must be a number > 0 [rad] (inf: no limit)")
        ms = self.layer_ahead_max_speed
        if isinstance(ms, bool) or not isinstance(ms, (int, float)) or math.isnan(ms) or ms < 0:
            raise SettingsError(f"setting layer_ahead_max_speed={ms!r} must be a number >= 0 [m/s] (inf: every "
                                f"closing speed)")
        for name in ("cfm", "correction_slop", "correction_tolerance", "block_tolerance", "reuse_max_correction",
                     "layer_collision_speed"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise SettingsError(f"setting {name}={v!r} must be a finite number >= 0")
        if self.layer_targets not in ("paper", "incremental"):
            raise SettingsError(f"setting layer_targets={self.layer_targets!r} is unknown; choose 'paper' or "
                                f"'incremental'")
        mc = self.max_correction
        if not isinstance(mc, (int, float)) or math.isnan(mc) or mc <= 0:
            raise SettingsError(f"setting max_correction={mc!r} must be a number > 0 [m] (inf: no cap)")
        aw = self.joint_projection_angular_weight
        if isinstance(aw, bool) or not isinstance(aw, (int, float)) or not 0.0 < aw <= 1.0:
            raise SettingsError(f"setting joint_projection_angular_weight={aw!r} must be in (0, 1] (1: the kinetic "
                                f"metric)")
        for name in ("shock_propagation", "final_correction", "reuse_final_contacts", "stop_unseen_contacts",
                     "settle_pushed_contacts", "joint_aware_correction", "speculative_contacts", "layer_ahead_copies",
                     "joint_tree_projection", "final_joint_tree", "close_joint_loops",
                     "stop_undone_joint_motion", "warm_start_energy_guard", "lifted_energy_guard"):
            if not isinstance(getattr(self, name), bool):
                raise SettingsError(f"setting {name}={getattr(self, name)!r} must be True or False")
