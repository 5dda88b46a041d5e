"""TetMesh (paper 003 §5): generators give closed, outward, positively oriented meshes; bad meshes raise an
ElasticError naming the tet; tetgen and meshio round trips; ElasticMaterial validation."""

import numpy as np
import pytest

from tumble.elastic import ElasticMaterial, TetMesh
from tumble.elastic.mesh import tet_signed_volumes
from tumble.errors import ElasticError, TumbleError


def _closed_and_outward(mesh):
    s = mesh.surface
    edges = np.sort(np.concatenate([s[:, [0, 1]], s[:, [1, 2]], s[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    p = mesh.vertices[s]
    enclosed = np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6.0  # divergence theorem
    return set(counts.tolist()) == {2}, enclosed


@pytest.mark.parametrize("mesh", [TetMesh.box((1.0, 2.0, 3.0), (2, 3, 4)), TetMesh.beam(1.0, 0.1, 0.2, (10, 2, 3)),
                                  TetMesh.cylinder(0.1, 0.3), TetMesh.cylinder(0.1, 0.3, 12, 3, 5),
                                  TetMesh.sphere(0.5, subdivisions=1)], ids=["box", "beam", "cyl", "cyl3", "sphere"])
def test_generated_meshes_are_closed_outward_and_positive(mesh):
    closed, enclosed = _closed_and_outward(mesh)
    assert closed
    assert enclosed == pytest.approx(mesh.volume, rel=1e-12)
    assert np.all(tet_signed_volumes(mesh.vertices, mesh.tets) > 0)


def test_box_and_cylinder_volumes_and_counts():
    assert TetMesh.box((1.0, 2.0, 3.0), (2, 3, 4)).volume == pytest.approx(6.0)
    beam = TetMesh.beam(2.0, 0.1, 0.2, (4, 1, 1))
    assert beam.vertices[:, 0].min() == pytest.approx(0.0) and beam.vertices[:, 0].max() == pytest.approx(2.0)
    cyl = TetMesh.cylinder(0.05, 0.15)  # the default: one cylinder of the paper's §9 scene
    assert (cyl.vertex_count, cyl.tet_count) == (96, 231)
    polygon_area = 0.5 * 11 * 0.05 ** 2 * np.sin(2 * np.pi / 11)
    assert cyl.volume == pytest.approx(polygon_area * 0.15)


def test_inverted_tet_is_named():
    mesh = TetMesh.box((1, 1, 1), (1, 1, 1))
    tets = mesh.tets.copy()
    tets[3, [2, 3]] = tets[3, [3, 2]]
    with pytest.raises(ElasticError, match=r"inverted.*\[3\]"):
        TetMesh(mesh.vertices, tets)


def test_sliver_tet_is_named():
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.5, 0.5, 1e-5], [0, 0, 1]], dtype=float)
    tets = np.array([[0, 1, 2, 4], [0, 1, 2, 3]])
    with pytest.raises(ElasticError, match=r"sliver.*\[1\]"):
        TetMesh(vertices, tets)


@pytest.mark.parametrize("tets, match", [([[0, 1, 2, 9]], "indexes outside"), ([[0, 1, 1, 2]], "repeats"),
                                         ([[0.0, 1.0, 2.0, 3.0]], "integers")])
def test_bad_tets_raise(tets, match):
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
    with pytest.raises(ElasticError, match=match):
        TetMesh(vertices, np.array(tets))


def test_bad_generator_arguments_raise_tumble_errors():
    with pytest.raises(TumbleError, match="size"):
        TetMesh.box((1.0, -1.0, 1.0))
    with pytest.raises(TumbleError, match="divisions"):
        TetMesh.box((1.0, 1.0, 1.0), (0, 1, 1))
    with pytest.raises(ElasticError, match="segments"):
        TetMesh.cylinder(0.1, 0.2, segments=2)


def test_from_surface_tetgen_and_meshio_round_trip(tmp_path):
    import trimesh

    mesh = TetMesh.from_surface(trimesh.creation.box((1.0, 0.5, 0.25)))
    assert mesh.volume == pytest.approx(0.125)
    for suffix in (".vtk", ".msh"):
        path = tmp_path / ("mesh" + suffix)
        mesh.save(path)
        back = TetMesh.load(path)
        assert back.tet_count == mesh.tet_count and back.volume == pytest.approx(mesh.volume)
    with pytest.raises(ElasticError, match="does not exist"):
        TetMesh.load(tmp_path / "missing.msh")
    with pytest.raises(ElasticError, match="watertight"):
        broken = trimesh.creation.box()
        TetMesh.from_surface(trimesh.Trimesh(broken.vertices, broken.faces[:-1]))


def test_material_validation():
    ElasticMaterial(1000.0, 1e6, 1e5, 0.0, 1.0)
    with pytest.raises(ElasticError, match="bulk_modulus"):
        ElasticMaterial(1000.0, 0.0, 1e5)
    with pytest.raises(ElasticError, match="shear_viscosity"):
        ElasticMaterial(1000.0, 1e6, 1e5, 0.0, -1.0)
    with pytest.raises(ElasticError, match="density"):
        ElasticMaterial(float("nan"), 1e6, 1e5)
    m = ElasticMaterial.from_young(1000.0, 3e6, 0.25)
    assert m.bulk_modulus == pytest.approx(2e6) and m.shear_modulus == pytest.approx(1.2e6)
