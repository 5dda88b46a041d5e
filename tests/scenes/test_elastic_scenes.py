"""The elastic scenes of the library (tumble.scenes.elastic): they build, run and keep their bodies apart."""

import numpy as np
import pytest

import tumble as tb


def test_rubber_cylinders_has_the_papers_size_and_lands_on_the_floor():
    w = tb.scenes.build("rubber_cylinders")
    s = w.elastic_system
    assert len(s.tets) == 462 and len(s.positions) == 192 and w.elastic_body_count == 2
    assert s.floor_z == 0.0
    w.run(0.5)
    x = np.concatenate([w.elastic_vertices(i) for i in range(2)])
    assert x[:, 2].min() > -0.002                      # on the floor, not through it
    assert w.elastic_counters()["springs_created"] > 0 and "elastic_contact_springs" in w.counters
    e = w.elastic_energies()
    assert e["total"] <= w.elastic_system.energies()["total"] + 1e-9


def test_beam_sag_root_stays_and_tip_sags():
    w = tb.scenes.build("beam_sag", seconds=0.5)
    root = list(w.scene.elastic[0].pin)
    x0 = w.elastic_vertices(0)
    w.run(0.5)
    x = w.elastic_vertices(0)
    assert np.abs(x[root] - x0[root]).max() < 1e-9
    assert x[:, 2].min() < x0[:, 2].min() - 0.005


@pytest.mark.parametrize("name", ["jelly_stack", "jelly_on_boxes"])
def test_rigid_bodies_stay_on_the_jelly(name):
    w = tb.scenes.build(name)
    w.run(1.0)
    lids = w.scene.tagged("lid")
    tops = [w.elastic_vertices(i)[:, 2].max() for i in range(w.elastic_body_count)]
    for lid in lids:
        half = w.shape(int(lid)).half_extents[2]
        bottom = w.position(int(lid))[2] - half
        assert bottom > min(tops) - 0.02            # above the lowest jelly's top: nothing fell through
        assert abs(w.linear_velocity(int(lid))[2]) < 0.5    # bobbing on the jelly, not falling


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_scene_file_round_trip_keeps_elastic_bodies_bit_for_bit(fmt, tmp_path):
    from tumble.scenefile import load_scene, save_scene, to_dict

    spec = tb.scenes.spec("jelly_on_boxes")
    back = load_scene(save_scene(spec, tmp_path / f"s.{fmt}"))
    assert to_dict(back) == to_dict(spec) and len(back.elastic) == 1
    w1, w2 = spec.build(), back.build()
    for _ in range(5):
        w1.step()
        w2.step()
    assert np.array_equal(w1.elastic_vertices(0), w2.elastic_vertices(0))
    assert np.array_equal(w1.positions, w2.positions)


def test_scene_file_bad_elastic_entry_names_it():
    from tumble.scenefile import from_dict

    d = {"format": "tumble-scene", "version": 1, "elastic": [{"name": "j", "mesh": {"generator": "torus"}}]}
    with pytest.raises(tb.SceneError, match=r"elastic\[0\]: field mesh.generator='torus'"):
        from_dict(d)
    d["elastic"][0] = {"mesh": {"generator": "box"}, "material": {"density": -1.0}}
    with pytest.raises(tb.SceneError, match=r"elastic\[0\]: field material: ElasticMaterial.density"):
        from_dict(d)


def test_jelly_pile_stands_cube_on_cube():
    """Elastic on elastic (tumble.elastic.body_contact): three 1 kg jelly cubes stay stacked; no surface vertex of
    one lies deeper inside its neighbour (NumPy point-in-tet oracle) than the weight of everything above on a
    single contact spring would push it, 3 m g / k = 1.5 mm."""
    from tests.naive.elastic_contact import penetration_depth

    w = tb.scenes.build("jelly_pile", seconds=0.5)
    w.run(0.5)
    s = w.elastic_system
    centres = [w.elastic_vertices(i).mean(0)[2] for i in range(3)]
    assert np.allclose(centres, [0.05, 0.15, 0.25], atol=0.005)
    mesh = s.bodies[0].mesh
    surface = np.unique(mesh.surface)
    bound = 3 * 1.0 * 9.81 / s.contact_stiffness
    for i in range(2):
        below, above = w.elastic_vertices(i), w.elastic_vertices(i + 1)
        assert penetration_depth(above[surface], below, mesh.tets, mesh.surface).max() <= bound
        assert penetration_depth(below[surface], above, mesh.tets, mesh.surface).max() <= bound
    assert w.counters["elastic_body_springs"] > 0
