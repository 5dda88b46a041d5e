"""The solver registry: solver name -> the module whose ``SOLVER`` implements it.

Adding a solver is one package under ``_core/solvers/<name>/`` and one entry here; nothing else in
tumble compares solver names. Modules are imported on first use, so importing tumble stays light.
"""

from __future__ import annotations

import importlib

from tumble.errors import SettingsError

#: solver name -> module path (its ``SOLVER`` attribute is the Solver subclass)
SOLVERS: dict[str, str] = {
    "pgs": "tumble._core.solvers.pgs",
    "shock": "tumble._core.solvers.shock",
    "impulse": "tumble._core.solvers.impulse",
    "jacobi": "tumble._core.solvers.jacobi",
    "gauss": "tumble._core.solvers.gauss",
}


def register(name: str, module: str) -> None:
    """Add solver ``name`` implemented by ``module`` (its ``SOLVER``) at run time: a solver package
    outside tumble (a plug-in, a test's toy solver) joins World, the CLI, scene files and recordings
    without an edit here. A name already taken is an error."""
    if not isinstance(name, str) or not name.isidentifier():
        raise SettingsError(f"solver name {name!r} must be an identifier")
    if name in SOLVERS and SOLVERS[name] != module:
        raise SettingsError(f"solver {name!r} is already registered ({SOLVERS[name]})")
    SOLVERS[name] = module


def names() -> list[str]:
    """The registered solver names, sorted."""
    return sorted(SOLVERS)


def solver_class(name: str):
    """The Solver subclass registered as ``name``; ``SettingsError`` naming the known ones otherwise."""
    if not isinstance(name, str) or name not in SOLVERS:
        raise SettingsError(f"unknown solver {name!r}; known solvers: {names()}")
    return importlib.import_module(SOLVERS[name]).SOLVER


def settings_class(name: str) -> type:
    """The settings dataclass of solver ``name``."""
    return solver_class(name).settings_class


def capabilities(name: str):
    """The declared ``Capabilities`` of solver ``name``."""
    return solver_class(name).capabilities
