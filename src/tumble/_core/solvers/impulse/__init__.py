"""Impulse-based collision response (Schornbaum 004; digest shared/notes/seed-impulse-thesis.md).

One module per stage of the thesis' pipeline (Alg. 6): ``batches`` (groups of bodies joined by
contacts, split at fixed bodies, §3.1), ``correction`` (penetration correction by linear moves,
Alg. 1-3), ``resolution`` (single-contact impulses in contact coordinates with Coulomb friction,
Alg. 8 + 11; the closing-speed ordered global loop, Alg. 9; shock propagation, Alg. 10),
``sleeping`` (motion bound, recency-weighted average, wake rules, gravity damping; Alg. 5, 12) and
``driver`` (array-level entry points shared by the step and the tests). ``solver`` sequences them
(the step of Alg. 6) and owns the sleep state; ``settings`` holds the thesis' presets.
"""

from tumble._core.solvers.impulse.settings import IMPULSE_PRESETS, ImpulseSettings
from tumble._core.solvers.impulse.solver import ImpulseSolver as SOLVER

__all__ = ["SOLVER", "ImpulseSettings", "IMPULSE_PRESETS"]
