"""The collision stage of a small world in one kernel call (``fused.detect`` from ``stages.collide``:
frames, boxes, the broad phase's steady update, the narrow phase and the contact cache) and the narrow
phase with the cache in one call (``fused.narrow_and_match`` from ``stages.collide_pairs``) are bit for
bit the kernels called one by one (``World.profile_stages`` turns both off): the state, the counters
and every array of the step's contact points, step by step, through landings, pairs that come and go,
a contact store that grows (``detect`` leaves the narrow phase to ``collide_pairs`` then), a geom's
static flag changed between steps (``detect`` leaves the broad phase's re-initialisation to it), more pairs
than the serial narrow phase takes (the same), boxes, spheres, capsules and convex hulls, and under
the solvers whose steps detect through these stages (pgs with and without substeps, shock with its
speculative padding, impulse)."""

import numpy as np
import pytest

import tumble as tb

CONTACT_FIELDS = ("contact_geom_a", "contact_geom_b", "contact_body_a", "contact_body_b", "contact_key",
                  "contact_feature", "contact_point", "contact_normal", "contact_depth", "contact_friction",
                  "contact_restitution", "contact_normal_impulse", "contact_friction_impulse", "contact_match",
                  "contact_warm")


def _world(scene, solver, profile_stages, settings):
    w = tb.World(solver=solver, **settings)
    w.profile_stages = profile_stages
    w.add_body(tb.Plane(), fixed=True)
    if scene == "mixed":    # a pile of every shape falling onto the ground and each other
        rng = np.random.default_rng(7)
        tetra = tb.ConvexHull([(0.3, 0, 0), (-0.2, 0.25, 0), (-0.2, -0.25, 0), (0, 0, 0.35)])
        shapes = [tb.Box((0.3, 0.2, 0.15)), tb.Sphere(0.2), tb.Capsule(0.1, 0.25), tetra]
        for k in range(12):
            w.add_body(shapes[k % 4], position=(0.3 * rng.standard_normal(), 0.3 * rng.standard_normal(),
                                                0.4 + 0.45 * k),
                       angular_velocity=tuple(rng.standard_normal(3)))
    else:                   # "many": 17 x 17 spheres on the ground, more pairs than the serial narrow phase takes
        for i in range(17):
            for j in range(17):
                w.add_body(tb.Sphere(0.1), position=(0.25 * i, 0.25 * j, 0.1 + 0.01 * ((i + j) % 3)))
    return w


def _run(scene, solver, settings, profile_stages=False, steps=120):
    w = _world(scene, solver, profile_stages, settings)
    seen, fused = [], 0
    for k in range(steps):
        if scene == "mixed" and k in (50, 51):  # a geom's static flag flips and back: the broad phase
            g = w._core.geoms                   # re-initialises (fused.detect's FALLBACK), twice
            g.geom_static[g.count - 1] = k == 50
        w.step(1 / 60)
        c = w.contact_store
        seen.append((dict(w.counters), [getattr(c, f)[: c.count].tobytes() for f in CONTACT_FIELDS]))
        fused += "narrow" in w.profile and "cache" not in w.profile
    return w.state_hash(), seen, fused, w._core.broad_phase.reinit_count


CASES = [("mixed", "pgs", {}), ("mixed", "pgs", {"substeps": 1, "iterations": 10}), ("mixed", "shock", {}),
         ("mixed", "impulse", {}), ("many", "pgs", {"substeps": 1, "iterations": 10})]


@pytest.mark.parametrize("scene,solver,settings", CASES,
                         ids=[f"{sc}-{so}-{','.join(st) or 'defaults'}" for sc, so, st in CASES])
def test_fused_detection_is_the_stage_calls_bit_for_bit(scene, solver, settings):
    state, seen, fused, reinits = _run(scene, solver, settings)
    assert fused > 60 or scene == "many"      # the fused calls took part
    pairs = [k["pairs"] for k, _ in seen]
    contacts = [k["contacts"] for k, _ in seen]
    if scene == "mixed":    # pairs come and go, contacts grow from a few
        assert min(contacts) <= 3 and max(contacts) > 16 and len(set(pairs)) > 5 and reinits == 3
    else:                   # past the serial narrow phase's limit (fused.detect returns PAIRS)
        assert min(pairs[1:]) >= 256
    staged = _run(scene, solver, settings, profile_stages=True)
    assert staged[2] == 0
    assert staged[0] == state and staged[3] == reinits
    for step, (got, want) in enumerate(zip(seen, staged[1])):
        assert got == want, f"step {step}"
