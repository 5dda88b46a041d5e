"""The non-convex bodies and scenes of paper 000 Figs. 1 and 15 (tumble.scenes.nonconvex, issue 21).

Oracles: trimesh's exact mass properties of the procedural cow mesh (volume, centre of mass, inertia)
against the CoACD compound's; Qhull (scipy) for the convexity of every shipped piece; the closed-form
energy bound (an inelastic drop can only lose energy). Worlds are small versions of the scenes, stepped
for a second at most."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import ConvexHull as Qhull

import tumble as tb
import tumble.scenes as scenes
from tumble._core import stages
from tumble.scenes import nonconvex as nc
from tumble.scenes.metrics import SceneMetrics

SMALL = {"cow_pile": dict(count=8, per_row=2), "silo": dict(count=60), "soli3000": dict(count=200, half_width=0.8)}


@pytest.fixture(scope="module")
def mesh():
    return nc.cow_mesh()


def test_scenes_are_registered_and_build():
    for name, params in SMALL.items():
        assert name in scenes.names()
        w = scenes.build(name, **params)
        assert w.body_count == len(w.scene.bodies)
        assert w.default_dt == 0.01
        # nothing starts touching (drop_pitch keeps the bodies apart, the walls clear of them)
        assert stages.collide(w._core, {}, 0.0, False) == 0, name


def test_cow_mesh_is_watertight_and_non_convex(mesh):
    assert mesh.is_watertight and mesh.is_volume
    assert 0.4 < mesh.volume < 0.6                       # ~0.51 m^3: a 500 kg cow at 1000 kg/m^3
    assert mesh.volume < 0.6 * mesh.convex_hull.volume   # the legs and tail make it far from convex


def test_shipped_pieces_are_convex_and_build():
    """Every shipped piece is convex (all its points are Qhull vertices, up to 1e-9 m) and builds as a
    tumble ConvexHull whose volume is Qhull's (1e-5). Regression: 4 of the 19 pieces failed to build ("faces
    does not close") before build_hull kept near-collinear polygon vertices (issue 21)."""
    pieces = nc.load_hulls()
    assert 5 <= len(pieces) <= 40
    for k, p in enumerate(pieces):
        q = Qhull(p)
        # distance of every point outside the hull's planes: <= 0 (convex: no point is inside a dent)
        assert np.max(p @ q.equations[:, :3].T + q.equations[:, 3]) < 1e-9, k
        h = tb.ConvexHull(p)
        assert h.data.volume == pytest.approx(q.volume, rel=1e-5), k  # near-coplanar facets merged


def test_decomposition_mass_properties_match_the_mesh(mesh):
    """The compound's volume, centre of mass and inertia against trimesh's of the mesh (the pieces overlap
    a little and bulge across the concave seams: CoACD's concavity bound 0.05 allows it)."""
    comp = nc.cow_shape()
    vol, _, inertia = comp.mass_properties()
    offset = np.load(nc.COW_HULLS)["offset"]  # hull points = mesh points + offset
    assert vol == pytest.approx(mesh.volume, rel=0.05)
    np.testing.assert_allclose(comp.centroid - offset, mesh.center_mass, atol=0.02)  # 2 cm on a 2.3 m cow
    ref = mesh.moment_inertia  # about the mesh's centre of mass, unit density
    np.testing.assert_allclose(np.diag(inertia), np.diag(ref), rtol=0.08)  # measured 2.3, 6.1, 6.5 %
    off = ~np.eye(3, dtype=bool)  # the products of inertia (the cow's xz one is -0.0106 m^5)
    assert np.max(np.abs(inertia - ref)[off]) < 0.02 * np.max(np.diag(ref))  # measured 0.9 % of the largest
    # the compound's centre of mass is the body origin of the shipped points
    np.testing.assert_allclose(comp.centroid, 0.0, atol=1e-12)


def test_exact_primitive_decompositions():
    """jack, dumbbell, L-brick: volumes in closed form (overlaps of the crossed boxes subtracted)."""
    s = 0.1
    t = s / 5
    # three 2s x 2t x 2t boxes crossing in one 2t cube: 3 (8 s t^2) - 2 (8 t^3) for the union, but a
    # Compound adds the children's volumes (overlap counted thrice)
    assert nc.jack(s).mass_properties()[0] == pytest.approx(3 * 8 * s * t * t)
    for shape in (nc.jack(s), nc.dumbbell(s), nc.l_brick(s)):
        assert np.all(np.linalg.eigvalsh(shape.mass_properties()[2]) > 0)
    for shape in (nc.jack(s), nc.dumbbell(s), nc.l_brick(s)):  # the body origin is the centre of mass
        np.testing.assert_allclose(shape.centroid, 0.0, atol=1e-15)


@pytest.mark.parametrize("name", sorted(SMALL))
@pytest.mark.parametrize("solver", ["pgs", "shock"])
def test_short_drop_settles_without_energy_gain(name, solver):
    spec = scenes.spec(name, **SMALL[name])
    w = spec.build(solver=solver)
    m = SceneMetrics(spec)
    m.observe(w)
    for _ in range(60):
        w.step(spec.dt)
        m.observe(w)
    r = m.result()
    assert np.all(np.isfinite(w.positions))
    # inelastic: the energy never rises above the start (1 J of slack on kJ of potential energy)
    assert r["energy_max_gain"] < 1.0 + 1e-6 * abs(r["energy_initial"])
    assert r["energy"] < r["energy_initial"]
    assert r["max_penetration"] < 0.15               # no body sinks through another (cm, not m)
    assert np.max(np.abs(w.linear_velocities)) < 15.0  # nothing flung out (free fall reaches ~8 m/s)


def test_bad_parameters_name_the_scene_and_field():
    with pytest.raises(tb.errors.SceneError, match="cow_pile.*count"):
        scenes.spec("cow_pile", count=0)
    with pytest.raises(tb.errors.SceneError, match="silo.*opening"):
        scenes.spec("silo", opening=2.0)
    with pytest.raises(tb.errors.SceneError, match="soli3000.*cow_fraction"):
        scenes.spec("soli3000", cow_fraction=1.5)


@pytest.mark.slow
def test_shipped_file_is_what_the_script_writes():
    """CoACD run again (15-50 s) gives the shipped pieces (seeded: repeatable)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "tools" / "make_nonconvex_hulls.py"
    spec = importlib.util.spec_from_file_location("make_nonconvex_hulls", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main(["--check"]) == 0
