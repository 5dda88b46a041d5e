"""A toy solver for the plug-in tests: bodies fly under gravity and ignore contacts (detection still
runs, so counters and recordings see them). It lives outside tumble and joins through
``registry.register`` only: World, scenes, scene files, recordings and the CLI must take it as they
take the built-in solvers."""

from dataclasses import dataclass

from tumble._core import stages
from tumble._core.solvers.protocol import Capabilities, Solver
from tumble._core.solvers.settings_parts import ContactSettings, SolverSettings


@dataclass
class BallisticSettings(ContactSettings, SolverSettings):
    """The shared contact model only (no rows, no joints)."""


class BallisticSolver(Solver):
    name = "ballistic"
    description = "toy: free flight under gravity, contacts detected but ignored"
    settings_class = BallisticSettings
    capabilities = Capabilities(restitution=False, counters=("cache_hits",))

    def step(self, core, dt, prof, t):
        contacts = stages.collide(core, prof, t, False)
        stages.integrate_velocities(core, dt)       # semi-implicit Euler: v first, then x with the new v
        stages.integrate_positions(core, dt)
        return contacts


SOLVER = BallisticSolver
