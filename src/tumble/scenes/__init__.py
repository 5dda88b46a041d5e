"""Scene library shared by tests, benchmarks, examples and the CLI.

>>> import tumble.scenes as scenes
>>> scenes.names()                          # registered scene names, sorted
>>> s = scenes.spec("mass_ratio", ratio=0.01)   # a SceneSpec (data: bodies, gravity, dt, settings)
>>> w = scenes.build("stack10", solver="pgs", iterations=20)   # a tumble World

``build`` sends the keywords the scene builder accepts to the builder and every other keyword to the
``World`` as a solver setting (overriding the scene's own ``settings``). Unknown scene names and
unknown scene parameters raise :class:`tumble.errors.SceneError` naming them and listing the known ones.
Importing this package compiles nothing.
"""

from __future__ import annotations

from tumble.errors import SceneError
from tumble.scenes import elastic as _elastic  # noqa: F401  (registers the elastic scenes of paper 003)
from tumble.scenes import gauss as _gauss  # noqa: F401  (registers the scenes of paper 002)
from tumble.scenes import impulse as _impulse  # noqa: F401  (registers the scenes of paper 004)
from tumble.scenes import joints as _joints  # noqa: F401  (registers the joint scenes)
from tumble.scenes import library as _library
from tumble.scenes import nonconvex as _nonconvex  # noqa: F401  (registers the non-convex scenes of paper 000)
from tumble.scenes import stacking as _stacking  # noqa: F401  (registers the scenes of paper 000)
from tumble.scenes.spec import BodySpec, ElasticSpec, SceneSpec

__all__ = ["BodySpec", "ElasticSpec", "SceneSpec", "SceneError", "build", "defaults", "describe", "names", "spec",
           "split_params"]


def names() -> list[str]:
    """The registered scene names, sorted."""
    return sorted(_library.REGISTRY)


def describe() -> list[tuple[str, str]]:
    """``(name, one-line description)`` for every scene, sorted by name."""
    return [(n, _library.REGISTRY[n].description) for n in names()]


def defaults(name: str) -> dict:
    """The parameters of scene ``name`` with their default values."""
    return dict(_library.entry(name).defaults)


def spec(name: str, **params) -> SceneSpec:
    """The :class:`SceneSpec` of scene ``name``; ``params`` override the scene's defaults."""
    return _library.make(name, **params)


def split_params(name: str, kw: dict) -> tuple[dict, dict]:
    """Split ``kw`` into (scene parameters, World settings) for scene ``name``."""
    known = _library.entry(name).defaults
    params = {k: v for k, v in kw.items() if k in known}
    settings = {k: v for k, v in kw.items() if k not in known}
    return params, settings


def build(name: str, solver: str = "pgs", **kw):
    """A tumble ``World`` holding scene ``name``.

    Keywords that are parameters of the scene go to its builder; the others are ``World`` settings
    (``iterations``, ``baumgarte``, ``warm_start`` ...) and override the scene's settings. The World
    gets ``scene`` (the spec) and ``default_dt`` attributes.
    """
    params, settings = split_params(name, kw)
    return spec(name, **params).build(solver=solver, **settings)


def export(name: str, path, **params):
    """Write scene ``name`` (``params`` override its defaults) to the scene file ``path`` (``.toml`` or
    ``.json``, see :mod:`tumble.scenefile`); returns the path. ``tumble.scenefile.load_scene(path)``
    reads it back exactly."""
    from tumble.scenefile import save_scene

    return save_scene(spec(name, **params), path)


__all__ += ["export"]
