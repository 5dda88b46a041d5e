"""The core state: everything a step reads and writes, owned by one object.

``World`` (the public facade) validates input and writes it here; the step (``_core.step``) and
the solvers (``_core.solvers.<name>``) receive this object and nothing else. Nothing under
``_core`` imports or receives ``World``. See ``docs/architecture.md`` for who owns which array.
"""

from __future__ import annotations

import numpy as np

from tumble._core.collision.broad_phase import SweepAndPrune
from tumble._core.collision.hull import HullStore
from tumble._core.storage import BodyStore, ContactStore, GeomStore, JointStore, RowStore


class JointLayout:
    """What the step needs to know about the joints as a whole (kept by ``tumble.joint_registry``
    whenever joints change): the row count of the active joints, the body pairs excluded from
    collision (sorted pair keys, ``collision.pair_filter.pair_key``) and a version number that
    bumps whenever the exclusions change."""

    def __init__(self) -> None:
        self.row_total = 0
        self.excluded_keys = np.zeros(0, dtype=np.int64)
        self.version = 0


class CoreState:
    """Stores, broad phase, hulls, joint layout, counters, profile and time of one world.

    Shared stores (every solver reads them; see ``_core.storage`` for the fields):
        bodies, geoms: BodyStore, GeomStore (written by World.add_body);
        contacts, contacts_previous: ContactStore, the points of this step and of the last one (the
            warm-start cache, 001 §8): the collision stage swaps them every detection;
        rows: RowStore, constraint rows (contact and joint rows of the row-based solvers);
        joint_store: JointStore; joint_layout: JointLayout; joint_row_offset: the first joint row;
        hulls: HullStore (convex hull vertex/face arrays, ``hull_arrays`` packs them for kernels);
        broad_phase: SweepAndPrune over the geoms' fat boxes; fat_count: geoms whose fat boxes exist.
    Per step: counters (dict of numbers), profile (ms per stage), merit_history (000 Fig. 5),
    time [s], step_count, gravity (3,) [m/s^2]. ``finished``: None, or (bad body or -1, deepest
    overlap) when a fused kernel call already did ``finish_bodies``' work in this step (step.finish
    takes it instead of calling it). ``profile_stages``: time every stage on its own (a
    solver that fuses consecutive stages into one kernel call runs them one by one instead; same
    results, more fixed cost per step).
    ``elastic``: the world's elastic bodies (``tumble.elastic.world_link.ElasticBodies``, None until the first
    one; World.step steps it after the solver, so a snapshot of the core state holds it too).
    ``solver``: the solver object (``_core.solvers.protocol.Solver``), which owns its private arrays;
    ``settings``: its settings object.
    """

    def __init__(self, gravity: np.ndarray, solver_name: str, settings) -> None:
        from tumble._core.solvers import registry

        self.gravity = gravity
        self.settings = settings
        self.bodies = BodyStore()
        self.geoms = GeomStore()
        self.contacts = ContactStore()
        self.contacts_previous = ContactStore()
        self.rows = RowStore()
        self.joint_store = JointStore()
        self.joint_layout = JointLayout()
        self.joint_row_offset = 0
        self.hulls = HullStore()
        self._hull_arrays = None
        self.broad_phase = SweepAndPrune()
        self.fat_count = 0
        self.counters: dict[str, float] = {}
        self.profile: dict[str, float] = {}
        self.profile_stages = False
        self.merit_history = np.zeros(0)
        self.time = 0.0
        self.step_count = 0
        self.finished = None
        self._rollback = None
        self.elastic = None
        self.solver = registry.solver_class(solver_name)(self)

    def rollback_copy(self) -> tuple:
        """Scratch for the bodies' state before a step (position, orientation, linear and angular
        velocity, each sized to the body store's capacity): ``World.step`` rolls a failed step back
        with it (``tumble.nonfinite``)."""
        cap = self.bodies.capacity
        if self._rollback is None or self._rollback[0].shape[0] < cap:
            self._rollback = (np.zeros((cap, 3)), np.zeros((cap, 4)), np.zeros((cap, 3)), np.zeros((cap, 3)))
        return self._rollback

    @property
    def hull_arrays(self):
        """The hulls packed for the kernels (rebuilt after a hull is added)."""
        if self._hull_arrays is None:
            self._hull_arrays = self.hulls.arrays()
        return self._hull_arrays

    def hulls_changed(self) -> None:
        self._hull_arrays = None
