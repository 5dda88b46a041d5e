"""tumble: rigid-body dynamics for contact-rich scenes, with the classic contact methods side by side.

    import tumble as tb
    w = tb.World(gravity=(0, 0, -9.81), solver="pgs")
    w.add_body(tb.Plane(), fixed=True)
    b = w.add_body(tb.Box(half_extents=(0.5, 0.5, 0.5)), position=(0, 0, 2))
    w.run(seconds=2, dt=1 / 60)

Importing tumble compiles nothing; kernels compile (or load from the Numba cache) on first use.
"""

from tumble import materials, scenes
from tumble.elastic import ElasticMaterial, TetMesh
from tumble.errors import (
    BodyError,
    ElasticError,
    JointError,
    MaterialError,
    RecordingError,
    SceneError,
    SettingsError,
    ShapeError,
    SimulationError,
    TumbleError,
)
from tumble.joints import Ball, Distance, Fixed, Hinge, Joint, JointBreak, JointReaction, Motor, Slider
from tumble.materials import Material
from tumble.nonfinite import BodyQuarantined
from tumble.recording import Recording
from tumble.scenefile import load_scene, save_scene
from tumble.settings import ImpulseSettings, PGSSettings, ShockSettings
from tumble.shapes import Box, Capsule, Compound, ConvexHull, Plane, Shape, Sphere
from tumble.world import Contacts, World, WorldState


def solvers() -> list[dict]:
    """The registered solvers, sorted by name: one dict each with ``name``, ``description``,
    ``settings`` (the settings class) and the declared capabilities (``joints``, ``sleeping``,
    ``sleeping_meaning``, ``restitution``, ``elastic_bodies``, ``counters``)."""
    import dataclasses

    from tumble._core.solvers import registry

    out = []
    for name in registry.names():
        cls = registry.solver_class(name)
        out.append({"name": name, "description": cls.description, "settings": cls.settings_class,
                    **dataclasses.asdict(cls.capabilities)})
    return out

__version__ = "0.1.0"

__all__ = [
    "World", "WorldState", "Contacts", "Shape", "Sphere", "Box", "Capsule", "Plane", "ConvexHull", "Compound",
    "Material",
    "materials", "scenes", "PGSSettings", "ShockSettings", "ImpulseSettings", "TumbleError", "ShapeError", "BodyError",
    "MaterialError", "BodyQuarantined", "SettingsError", "SceneError", "RecordingError", "SimulationError",
    "JointError", "Joint", "Ball", "Hinge",
    "Slider", "Distance", "Fixed", "Motor", "JointReaction", "JointBreak", "Recording", "load_scene", "save_scene",
    "solvers", "__version__", "TetMesh", "ElasticMaterial", "ElasticError",
]
