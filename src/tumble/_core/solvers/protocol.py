"""The solver protocol: what a solver package provides and what the rest of tumble may ask of it.

A solver is a package ``tumble._core.solvers.<name>`` whose ``SOLVER`` is a subclass of
:class:`Solver`, listed once in ``solvers.registry``. World, the CLI, the scene loader and recordings
ask the registry (and the solver's ``capabilities``) instead of comparing solver names. A solver
owns its private arrays (sleep state, layer impulses, ...) and grows them in the hooks below; the
shared stores live on the core state (``_core.state.CoreState``). See ``docs/architecture.md``,
"How to add a solver".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Capabilities:
    """What a solver supports, declared once in its package.

    joints: joints (``World.add_joint``) are solved; a world of a solver without them rejects
        ``add_joint`` with the reason.
    sleeping: bodies fall asleep and ``World.add_body(asleep=True)`` starts them asleep;
        ``sleeping_meaning`` says what ``World.sleeping`` reports for this solver.
    restitution: materials' restitution makes bodies bounce.
    elastic_bodies: elastic (finite-element) bodies can be added. True by default: the elastic bodies are
        stepped by their own integrator after the solver's step (``tumble.elastic.world_link``), so
        every rigid solver carries them; a plug-in may declare False to refuse them.
    counters: the names of the per-step counters the solver reports in ``World.counters`` besides
        the shared ones (contacts, pairs, bodies, max_penetration).
    """

    joints: bool = False
    sleeping: bool = False
    sleeping_meaning: str = "this solver has no sleeping: no body is ever asleep"
    restitution: bool = True
    elastic_bodies: bool = True
    counters: tuple[str, ...] = ()


class Solver:
    """Base class of the solvers. Subclasses set ``name``, ``settings_class`` (a dataclass built on
    ``solvers.settings_parts``), ``capabilities`` and ``description``, and implement ``step``."""

    name: str = ""
    description: str = ""
    settings_class: type = object
    capabilities: Capabilities = Capabilities()

    def __init__(self, core) -> None:
        self.core = core

    # ---------------------------------------------------------------- the step
    def step(self, core, dt: float, prof: dict, t: float) -> int:
        """Advance ``core`` by ``dt`` [s]: detection, solve and integration, timing each stage into
        ``prof`` [ms] (``stages.lap`` from ``t``, the ``perf_counter`` at the start). Returns the
        number of contact points the dynamics solved. The shared finish (non-finite check, forces
        cleared, counters, time) is ``step.finish``'s."""
        raise NotImplementedError

    # ---------------------------------------------------------------- hooks (defaults: nothing to do)
    def add_body(self, core, body: int, asleep: bool) -> None:
        """Body ``body`` was just added (its geoms too): grow the solver's per-body arrays."""

    def wake(self, body: int) -> None:
        """The user set or pushed ``body`` (004 wake-up rule 1)."""

    def state_changed(self) -> None:
        """Something outside the step changed the bodies or settings (a setter, a new body or joint)."""

    def remove_body(self, core, body: int, touching: np.ndarray) -> None:
        """Body ``body`` was just removed (``_core.removal``: a fixed tombstone without geoms);
        ``touching`` are the bodies it touched in the last step. Default: wake them (004 §3.2
        wake-up rule 4: a body whose support disappears must move again)."""
        for i in touching:
            self.wake(int(i))

    def contacts_compacted(self, core, keep: np.ndarray) -> None:
        """The contact store (the next step's warm-start cache) kept only rows ``keep`` (old
        indices, in order) of its points: compact the solver's own per-contact arrays the same way."""

    def sleeping(self, core) -> np.ndarray:
        """(n,) bool: which bodies are asleep now (all False without sleeping)."""
        return np.zeros(core.bodies.count, dtype=bool)

    # ---------------------------------------------------------------- documented bounds
    @classmethod
    def release_speed(cls, settings) -> float:
        """[m/s] the bound this solver keeps when it pushes overlapping bodies apart (issue 17): a body
        released from an overlap, however deep or jammed, leaves with at most this speed from the
        push (plus what gravity adds), so the kinetic energy a step's contacts give a world is at
        most sum 1/2 m_i c^2 over its dynamic bodies beyond what gravity and the initial motion
        supply (``tests/physics/test_fuzz.py`` asserts it on random worlds). 0 for solvers that
        correct positions by projection without touching velocities; inf (the default) declares
        no bound."""
        return math.inf
