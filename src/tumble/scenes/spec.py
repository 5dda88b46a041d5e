"""Declarative scene description shared by tumble, the peers (PyBullet, MuJoCo) and the CLI.

A scene is data: bodies with shapes, poses, masses and materials, plus the step settings. The same
``SceneSpec`` builds a tumble ``World`` (``spec.build()``) and, in ``benchmarks/peers``, a PyBullet
or MuJoCo model, so the engines are compared on identical scenes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from tumble.errors import SceneError
from tumble.materials import DEFAULT, Material
from tumble.shapes import Shape


@dataclass
class BodySpec:
    """One body. ``mass`` wins over ``density``; if both are None the material's density is used.

    ``spawn_time`` [s]: 0 (the default) puts the body in the world from the start; a later time makes
    it enter the scene then (``World.spawn``: it is added at the start of the first step whose start
    time is >= ``spawn_time``, with this pose and velocity). Spawned bodies come after every body of
    spawn time 0, in non-decreasing spawn-time order, so the body id is the spec index throughout.
    """

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
    spawn_time: float = 0.0  # [s] when the body enters the scene (0: from the start)
    asleep: bool = False     # starts asleep (World.add_body's ``asleep``)


@dataclass
class ElasticSpec:
    """One elastic body (``World.add_elastic_body``): its mesh named by a ``tumble.TetMesh`` generator
    (``mesh_generator`` "box", "beam", "cylinder" or "sphere" with keyword ``mesh_params``, SI units), pose,
    initial velocity, ``tumble.ElasticMaterial`` and the mesh vertices pinned where they start (``pin``)."""

    mesh_generator: str
    mesh_params: dict = field(default_factory=dict)
    position: tuple = (0.0, 0.0, 0.0)
    orientation: tuple = (1.0, 0.0, 0.0, 0.0)
    linear_velocity: tuple = (0.0, 0.0, 0.0)
    angular_velocity: tuple = (0.0, 0.0, 0.0)
    material: object = None
    name: str = ""
    pin: tuple = ()

    def mesh(self):
        from tumble.elastic.mesh import TetMesh

        if self.mesh_generator not in MESH_GENERATORS:
            raise SceneError(f"elastic body {self.name!r}: field mesh_generator={self.mesh_generator!r} must be one "
                             f"of {list(MESH_GENERATORS)}")
        try:
            return getattr(TetMesh, self.mesh_generator)(**self.mesh_params)
        except TypeError as e:
            raise SceneError(f"elastic body {self.name!r}: field mesh_params={self.mesh_params!r}: {e}") from None


#: TetMesh class methods a scene may name
MESH_GENERATORS = ("box", "beam", "cylinder", "sphere")


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
        joints: ``tumble.joints`` definitions (Ball, Hinge, Slider, Distance, Fixed) between body ids
            of this spec, added in order after the bodies (joint id = index); they may not involve
            spawned bodies.
        no_collide: body-id pairs that do not collide (``World.disable_collision``).
        gravity_schedule: ``(time [s], gravity (3,) [m/s^2])`` entries in non-decreasing time order;
            each sets the world's gravity at the start of the first step whose start time is
            >= time - 1e-9 (``World.schedule_gravity``, the rule of ``World.spawn``). ``gravity`` is
            the gravity before the first entry; an entry at time 0 overrides it from the first step.
            Empty (the default): constant ``gravity``.
        elastic: ``ElasticSpec`` per elastic body (elastic-body id = index), added after the rigid bodies;
        elastic_options: ``World.set_elastic_options`` keywords (integrator, tol, contact stiffnesses ...).
    """

    name: str
    bodies: list[BodySpec] = field(default_factory=list)
    gravity: tuple = (0.0, 0.0, -9.81)
    dt: float = 1.0 / 60.0
    seconds: float = 5.0
    settings: dict = field(default_factory=dict)
    description: str = ""
    params: dict = field(default_factory=dict)
    joints: list = field(default_factory=list)
    no_collide: list = field(default_factory=list)
    gravity_schedule: list = field(default_factory=list)
    elastic: list = field(default_factory=list)
    elastic_options: dict = field(default_factory=dict)

    def add(self, shape: Shape, position=(0.0, 0.0, 0.0), **kw) -> int:
        self.bodies.append(BodySpec(shape=shape, position=tuple(np.asarray(position, dtype=float)), **kw))
        return len(self.bodies) - 1

    def joint(self, joint) -> int:
        """Append a joint definition; returns its id."""
        self.joints.append(joint)
        return len(self.joints) - 1

    def tagged(self, tag: str) -> np.ndarray:
        """Body ids whose tag is ``tag``."""
        return np.array([i for i, b in enumerate(self.bodies) if b.tag == tag], dtype=np.int64)

    def spawn_times(self) -> np.ndarray:
        """Spawn time [s] of every body (n,), 0 for bodies present from the start."""
        return np.array([float(b.spawn_time) for b in self.bodies], dtype=np.float64)

    def validate(self) -> None:
        """Check the spawn times: each finite and >= 0, and the spawned bodies (spawn time > 0) after
        every body of spawn time 0 in non-decreasing order (so body id == spec index). Raises
        :class:`SceneError` naming the first offending body."""
        last = 0.0
        for i, b in enumerate(self.bodies):
            who = f"scene {self.name!r}: body {i}" + (f" ({b.name!r})" if b.name else "")
            t = b.spawn_time
            try:
                t = float(t)
            except (TypeError, ValueError):
                raise SceneError(f"{who}: field spawn_time={b.spawn_time!r} is not a number") from None
            if not (math.isfinite(t) and t >= 0.0):
                raise SceneError(f"{who}: field spawn_time={b.spawn_time!r} must be finite and >= 0 [s]")
            if t < last:
                raise SceneError(f"{who}: field spawn_time={t!r} comes after a body spawned at t={last!r}; "
                                 "bodies must be in non-decreasing spawn-time order (spawned bodies last)")
            last = t
        last = 0.0
        for k, entry in enumerate(self.gravity_schedule):
            who = f"scene {self.name!r}: gravity_schedule[{k}]"
            try:
                t, g = entry
                t = float(t)
                g = np.asarray(g, dtype=float).reshape(-1)
            except (TypeError, ValueError):
                raise SceneError(f"{who}={entry!r} must be (time [s], gravity (3 numbers) [m/s^2])") from None
            if not (math.isfinite(t) and t >= 0.0) or t < last:
                raise SceneError(f"{who}: time={entry[0]!r} must be finite, >= 0 and >= the previous entry's "
                                 f"({last!r})")
            if g.shape != (3,) or not np.all(np.isfinite(g)):
                raise SceneError(f"{who}: gravity={entry[1]!r} must be 3 finite numbers [m/s^2]")
            last = t
        for k, j in enumerate(self.joints):
            for field_name in ("a", "b"):
                i = getattr(j, field_name, None)
                if i is None:
                    continue
                if not isinstance(i, (int, np.integer)) or not 0 <= i < len(self.bodies):
                    raise SceneError(f"scene {self.name!r}: joint {k}: field {field_name}={i!r} is not a body of the "
                                     f"scene ({len(self.bodies)} bodies)")
                if float(self.bodies[i].spawn_time) > 0.0:
                    raise SceneError(f"scene {self.name!r}: joint {k}: body {i} is spawned at "
                                     f"t={self.bodies[i].spawn_time}; joints must join bodies present from the start")

    def build(self, solver: str = "pgs", **settings):
        """A tumble ``World`` holding this scene (``settings`` override the scene's).

        Bodies of spawn time 0 are added at once; the others are queued with ``World.spawn``."""
        from tumble.world import World

        self.validate()
        # the scene's settings first, the caller's on top in a second update, so that a preset the
        # caller names (solver "impulse") replaces the scene's values and not the other way round.
        # A scene's settings serve every solver: each solver takes those that are fields of its
        # settings class (impulse has no iterations or baumgarte); the caller's are passed as given.
        from tumble._core.solvers import registry

        own = set(registry.settings_class(solver).field_names())
        w = World(gravity=self.gravity, solver=solver, **{k: v for k, v in self.settings.items() if k in own})
        if settings:
            w.settings.update(**settings)
        for b in self.bodies:
            kw = dict(position=b.position, orientation=b.orientation, linear_velocity=b.linear_velocity,
                      angular_velocity=b.angular_velocity, fixed=b.fixed, mass=b.mass, density=b.density,
                      material=b.material, name=b.name, asleep=b.asleep)
            if float(b.spawn_time) > 0.0:
                w.spawn(float(b.spawn_time), b.shape, **kw)
            else:
                w.add_body(b.shape, **kw)
        for j in self.joints:
            w.add_joint(j)
        for a, b in self.no_collide:
            w.disable_collision(a, b)
        for t, g in self.gravity_schedule:
            w.schedule_gravity(t, g)
        for k, e in enumerate(self.elastic):
            kw = {} if e.material is None else {"material": e.material}
            i = w.add_elastic_body(e.mesh(), e.position, e.orientation, linear_velocity=e.linear_velocity,
                                   angular_velocity=e.angular_velocity, name=e.name, **kw)
            if len(e.pin):
                w.pin(i, list(e.pin))
            if k == 0 and self.elastic_options:
                w.set_elastic_options(**self.elastic_options)
        w.scene = self
        w.default_dt = self.dt
        return w
