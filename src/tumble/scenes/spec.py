"""Declarative scene description shared by tumble, the peers (PyBullet, MuJoCo) and the CLI.

A scene is data: bodies with shapes, poses, masses and materials, plus the step settings. The same
``SceneSpec`` builds a tumble ``World`` (``spec.build()``) and, in ``benchmarks/peers``, a PyBullet
or MuJoCo model, so the engines are compared on identical scenes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tumble.materials import DEFAULT, Material
from tumble.shapes import Shape


@dataclass
class BodySpec:
    """One body. ``mass`` wins over ``density``; if both are None the material's density is used."""

    shape: Shape
    position: tuple = (0.0, 0.0, 0.0)
    orientation: tuple = (1.0, 0.0, 0.0, 0.0)
    linear_velocity: tuple = (0.0, 0.0, 0.0)
    angular_velocity: tuple = (0.0, 0.0, 0.0)
    fixed: bool = False
    mass: float | None = None
    density: float | None = None
    material: Material = DEFAULT
    name: str = ""
    tag: str = ""          # scene-specific role, e.g. "stack", "ground", "projectile"


@dataclass
class SceneSpec:
    """A whole scene.

    Attributes:
        name: library name (``tumble.scenes.names()``).
        bodies: the bodies, in id order (body id = index).
        gravity: [m/s^2] (3,).
        dt: [s] step used by default.
        seconds: [s] default duration of ``tumble run``.
        settings: solver settings as keywords of ``World`` (iterations, baumgarte, warm_start ...).
        description: one line for ``tumble scenes``.
        params: the parameters the scene was built with.
    """

    name: str
    bodies: list[BodySpec] = field(default_factory=list)
    gravity: tuple = (0.0, 0.0, -9.81)
    dt: float = 1.0 / 60.0
    seconds: float = 5.0
    settings: dict = field(default_factory=dict)
    description: str = ""
    params: dict = field(default_factory=dict)

    def add(self, shape: Shape, position=(0.0, 0.0, 0.0), **kw) -> int:
        self.bodies.append(BodySpec(shape=shape, position=tuple(np.asarray(position, dtype=float)), **kw))
        return len(self.bodies) - 1

    def tagged(self, tag: str) -> np.ndarray:
        """Body ids whose tag is ``tag``."""
        return np.array([i for i, b in enumerate(self.bodies) if b.tag == tag], dtype=np.int64)

    def build(self, solver: str = "pgs", **settings):
        """A tumble ``World`` holding this scene (``settings`` override the scene's)."""
        from tumble.world import World

        merged = dict(self.settings)
        merged.update(settings)
        w = World(gravity=self.gravity, solver=solver, **merged)
        for b in self.bodies:
            w.add_body(b.shape, position=b.position, orientation=b.orientation,
                       linear_velocity=b.linear_velocity, angular_velocity=b.angular_velocity,
                       fixed=b.fixed, mass=b.mass, density=b.density, material=b.material, name=b.name)
        w.scene = self
        w.default_dt = self.dt
        return w
