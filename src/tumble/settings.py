"""Solver settings: SI units, documented defaults (DESIGN rule: tunables in physical units).

``World(solver="pgs", iterations=20, baumgarte=0.1)`` or ``w.settings.iterations = 20``.

Each solver's settings class lives in its package (``tumble._core.solvers.<name>.settings``) and is
composed from the shared parts of ``tumble._core.solvers.settings_parts`` (contact model, PGS rows,
joints) plus its own fields; this module re-exports them as the public names.
"""

from __future__ import annotations

from tumble._core.solvers import registry
from tumble._core.solvers.gauss.settings import GaussSettings
from tumble._core.solvers.impulse.settings import IMPULSE_PRESETS, ImpulseSettings
from tumble._core.solvers.pgs.settings import PGSSettings
from tumble._core.solvers.settings_parts import FRICTION_MODELS, ContactSettings, JointSettings, RowSettings
from tumble._core.solvers.shock.settings import ShockSettings

__all__ = ["PGSSettings", "ShockSettings", "GaussSettings", "ImpulseSettings", "IMPULSE_PRESETS", "ContactSettings",
           "RowSettings", "JointSettings", "FRICTION_MODELS", "SOLVER_SETTINGS", "settings_class"]


def settings_class(solver: str) -> type:
    """The settings class of ``solver`` (from the solver registry)."""
    return registry.settings_class(solver)


#: solver name -> settings class, for every registered solver (kept for existing callers; the
#: registry, ``tumble._core.solvers.registry.settings_class``, is the source)
SOLVER_SETTINGS = {name: registry.settings_class(name) for name in registry.names()}
