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
from tumble.settings import GaussSettings, ImpulseSettings, PGSSettings, ShockSettings
from tumble.shapes import Box, Capsule, Compound, ConvexHull, Plane, Shape, Sphere
from tumble.stability import StabilityReport, stability
from tumble.world import Contacts, World, WorldState


def solvers() -> list[dict]:
    """The registered solvers, sorted by name: one dict each with ``name``, ``description``,
    ``settings`` (the settings class) and the declared capabilities (``joints``, ``sleeping``,
    ``sleeping_meaning``, ``restitution``, ``elastic_bodies``, ``counters``) and ``release_speed``
    [m/s], the most speed a body pushed out of an overlap leaves with under the default settings
    (``Solver.release_speed``, issue 17)."""
    import dataclasses

    from tumble._core.solvers import registry

    out = []
    for name in registry.names():
        cls = registry.solver_class(name)
        out.append({"name": name, "description": cls.description, "settings": cls.settings_class,
                    **dataclasses.asdict(cls.capabilities), "release_speed": cls.release_speed(cls.settings_class())})
    return out


__version__ = "0.1.0"

__all__ = [
    "World", "WorldState", "Contacts", "Shape", "Sphere", "Box", "Capsule", "Plane", "ConvexHull", "Compound",
    "Material",
    "materials", "scenes", "PGSSettings", "ShockSettings", "ImpulseSettings", "TumbleError", "ShapeError", "BodyError",
    "MaterialError", "BodyQuarantined", "SettingsError", "SceneError", "RecordingError", "SimulationError",
    "JointError", "Joint", "Ball", "Hinge",
    "Slider", "Distance", "Fixed", "Motor", "JointReaction", "JointBreak", "Recording", "load_scene", "save_scene",
    "solvers", "stability", "StabilityReport", "GaussSettings", "sweep", "set_num_threads", "get_num_threads",
    "__version__", "TetMesh",
    "ElasticMaterial", "ElasticError",
]

def set_num_threads(n: int) -> None:
    """Threads of tumble's parallel kernels (Numba's ``set_num_threads``; at most the
    ``NUMBA_NUM_THREADS`` the process started with, which defaults to the core count). Kernels below
    their work size run on one thread anyway (docs/architecture.md, "Small-work paths")."""
    import numba

    top = numba.config.NUMBA_NUM_THREADS
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= top:
        raise SettingsError(f"set_num_threads: field n={n!r} must be an integer in [1, {top}] "
                            "(NUMBA_NUM_THREADS at start-up)")
    numba.set_num_threads(n)


def get_num_threads() -> int:
    """Threads tumble's parallel kernels use now."""
    import numba

    return numba.get_num_threads()


#: subpackages loaded on first use (``tb.gauss2d``: the planar brick model of paper 002, which imports the
#: QP/LP back ends; ``tb.elastic``: the finite-element elastic bodies of paper 003; ``tb.sweep``: many
#: runs on Dask, a callable package: once imported, Python binds the attribute to the package module),
#: so importing tumble stays light
_LAZY_SUBPACKAGES = ("gauss2d", "elastic", "sweep")


def __getattr__(name: str):
    if name in _LAZY_SUBPACKAGES:
        import importlib

        return importlib.import_module(f"tumble.{name}")
    raise AttributeError(f"module 'tumble' has no attribute {name!r}")
