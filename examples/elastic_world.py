"""Elastic bodies in a World: the coupling oracles and the library scenes, measured.

    PYTHONPATH=src python examples/elastic_world.py

Prints (1) the floor contact springs' force under a jelly block carrying a 2 kg rigid box against the
weight of both, (2) the total momentum of a rigid ball and a free jelly block before and after they collide
(no gravity), (3) for each elastic library scene: wall time, elastic integrator steps and counters.
"""

import time

import numpy as np

import tumble as tb

JELLY = tb.ElasticMaterial(1000.0, 2.0e5, 6.0e4, 0.0, 50.0)


def weight_check() -> None:
    w = tb.World()
    w.add_body(tb.Plane(), fixed=True)
    e = w.add_elastic_body(tb.TetMesh.box((0.3, 0.3, 0.2), (3, 3, 2)), position=(0, 0, 0.101), material=JELLY)
    box = w.add_body(tb.Box((0.1, 0.1, 0.05)), position=(0, 0, 0.26), mass=2.0)
    for _ in range(360):
        w.step(1.0 / 240.0)
    weight = (w.elastic_system.mass.lumped.sum() + 2.0) * 9.81
    force = w.elastic_floor_force()
    print(f"box on jelly, t = {w.time:.2f} s: floor springs carry {force[2]:.2f} N, weight {weight:.2f} N "
          f"({100 * (force[2] / weight - 1):+.2f} %); box bottom {w.position(box)[2] - 0.05:.4f} m, "
          f"jelly top {w.elastic_vertices(e)[:, 2].max():.4f} m")


def momentum_check() -> None:
    w = tb.World(gravity=(0, 0, 0))
    w.add_elastic_body(tb.TetMesh.box((0.2, 0.2, 0.2), (2, 2, 2)), material=JELLY)
    ball = w.add_body(tb.Sphere(0.05), position=(-0.17, 0.0, 0.0), linear_velocity=(2.0, 0, 0), mass=4.0)
    before = w.momentum() + w.elastic_momentum()
    for _ in range(120):
        w.step(1.0 / 480.0)
    after = w.momentum() + w.elastic_momentum()
    print(f"ball hits jelly: total momentum {np.round(before, 4)} -> {np.round(after, 4)} kg m/s "
          f"(|change| {100 * np.linalg.norm(after - before) / np.linalg.norm(before):.2f} %); jelly "
          f"{np.round(w.elastic_momentum(), 3)}, ball v {np.round(w.linear_velocity(ball), 3)} m/s")


def scenes() -> None:
    for name in ("rubber_cylinders", "beam_sag", "jelly_stack", "jelly_pile", "jelly_on_boxes"):
        w = tb.scenes.build(name)
        w.step()  # compile / warm up
        t0 = time.perf_counter()
        w.run(w.scene.seconds - w.time)
        wall = time.perf_counter() - t0
        c = w.elastic_counters()
        s = w.elastic_system
        print(f"{name}: {len(s.positions)} vertices, {len(s.tets)} tets, {w.scene.seconds:g} s simulated in "
              f"{wall:.2f} s wall; elastic steps {c['steps_taken']} (rejected {c['steps_rejected']}), springs "
              f"created {c['springs_created']}, min volume ratio {c['min_volume_ratio']:.3f}")


if __name__ == "__main__":
    weight_check()
    momentum_check()
    scenes()
