"""World: the public facade. Bodies, shapes and settings go in; ``step`` runs the core step.

Everything here is plain Python that validates input and writes it into the core state
(``tumble._core.state.CoreState``: the structure-of-arrays stores, broad phase, joint layout,
counters); the step itself (``tumble._core.step``, the solver's stages) only calls kernels and never
sees the World. Which solvers exist and what each supports comes from the solver registry
(``tumble._core.solvers.registry``). See docs/architecture.md.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import math
import numbers
import time
from typing import NamedTuple

import numpy as np

from tumble import nonfinite
from tumble._core.dynamics.integrate import copy_body_state
from tumble._core.math3d import quat_to_matrices, quat_to_matrix_py
from tumble._core.removal import remove_body as remove_core_body
from tumble._core.solvers import registry
from tumble._core.state import CoreState
from tumble._core.step import step as _core_step
from tumble.errors import BodyError, ElasticError, JointError, SettingsError, SimulationError, TumbleError
from tumble.joint_registry import JointRegistry
from tumble.materials import DEFAULT, DENSITY_MAX, DENSITY_MIN, Material
from tumble.shapes import Compound, ConvexHull, Plane, Shape


class WorldState(NamedTuple):
    """A snapshot from ``World.save_state`` (opaque: pass it to ``World.restore_state``)."""

    solver: str
    parts: tuple


class Contacts(NamedTuple):
    """Contact points of the last step (copies). Normal points from body_a to body_b.

    body_a, body_b (k,) int; point (k, 3) [m]; normal (k, 3); depth (k,) [m] (positive = overlap);
    impulse (k,) [N s] normal impulse; friction_impulse (k, 3) [N s]; feature (k,) int.
    """

    body_a: np.ndarray
    body_b: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    depth: np.ndarray
    impulse: np.ndarray
    friction_impulse: np.ndarray
    feature: np.ndarray

    def __len__(self) -> int:  # number of points, not of fields
        return int(self.body_a.shape[0])


def _vec(owner: str, field: str, value, n: int) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise BodyError(f"{owner}: field {field}={value!r} is not a {n}-vector of numbers") from None
    if a.shape != (n,):
        raise BodyError(f"{owner}: field {field}={value!r} must have {n} components")
    if not np.all(np.isfinite(a)):
        raise BodyError(f"{owner}: field {field}={a.tolist()} is not finite")
    return a


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.setflags(write=False)
    return v


class World:
    """A simulation world.

    ``World(gravity=(0, 0, -9.81), solver="pgs", **settings)``; settings are the fields of the
    solver's settings class (``tumble.settings.PGSSettings`` ...; ``tumble.solvers()`` lists the
    solvers), also reachable as ``w.settings``. ``w.capabilities`` says what the solver supports.
    """

    def __init__(self, gravity=(0.0, 0.0, -9.81), solver: str = "pgs", **settings):
        cls = registry.solver_class(solver)      # SettingsError naming the known solvers
        g = _vec("World", "gravity", gravity, 3)
        config = cls.settings_class()
        config.update(**settings)
        self.solver = solver
        self._core = CoreState(g, solver, config)
        self.scene = None
        self.default_dt = 1.0 / 60.0
        self._names: list[str] = []
        self._shapes: list[Shape] = []
        self._materials: list[Material] = []
        # each body's (mass [kg], density [kg/m^3]) as given (one is None) and the time [s] it was added
        self._body_args: list[tuple] = []
        self._spawns: list[tuple[float, Shape, dict]] = []  # (time, shape, add_body keywords), queue order
        self._gravity_schedule: list[tuple[float, np.ndarray]] = []  # (time, gravity), queue order
        self._joints = JointRegistry(self._core)
        self.events: list = []  # events of the last step (tumble.BodyQuarantined, tumble.joints.JointBreak)
        self._on_nonfinite = "raise"

    # ------------------------------------------------------------------ the core state, forwarded
    @property
    def capabilities(self):
        """What this world's solver supports (``tumble._core.solvers.protocol.Capabilities``)."""
        return self._core.solver.capabilities

    @property
    def settings(self):
        """The solver's settings object (change fields between steps; checked before the next one)."""
        return self._core.settings

    @property
    def gravity(self) -> np.ndarray:
        """Gravity [m/s^2] (3,); assign a 3-vector to change it."""
        return self._core.gravity

    @gravity.setter
    def gravity(self, value) -> None:
        self._core.gravity = _vec("World", "gravity", value, 3)

    @property
    def time(self) -> float:
        """Simulated time [s]."""
        return self._core.time

    @property
    def step_count(self) -> int:
        return self._core.step_count

    @property
    def counters(self) -> dict:
        """Counters of the last step (shared: contacts, pairs, bodies, max_penetration; the solver's
        own are listed in ``capabilities.counters``)."""
        return self._core.counters

    @property
    def profile(self) -> dict:
        """ms per stage of the last step (and "total"). Stages a solver runs in one kernel call are
        one entry (pgs: "substeps"); ``profile_stages = True`` times each on its own."""
        return self._core.profile

    @property
    def profile_stages(self) -> bool:
        """Time every stage of the step on its own in ``profile`` (default False: a solver may run
        consecutive stages in one kernel call, which cuts the fixed cost of a step; the results are
        the same bit for bit either way)."""
        return self._core.profile_stages

    @profile_stages.setter
    def profile_stages(self, value) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise SettingsError(f"World: field profile_stages={value!r} must be True or False")
        self._core.profile_stages = bool(value)

    @property
    def merit_history(self) -> np.ndarray:
        """theta(lambda) after each sweep of the last step (row solvers with ``record_merit``)."""
        return self._core.merit_history

    # the stores, for recordings, metrics and tests (read them; the step owns them)
    bodies = property(lambda self: self._core.bodies)
    geoms = property(lambda self: self._core.geoms)
    rows = property(lambda self: self._core.rows)
    joint_store = property(lambda self: self._core.joint_store)
    hulls = property(lambda self: self._core.hulls)
    broad_phase = property(lambda self: self._core.broad_phase)
    contact_store = property(lambda self: self._core.contacts, doc="This step's contact points (ContactStore).")
    cache_store = property(lambda self: self._core.contacts_previous, doc="The last step's points (the cache).")

    # ------------------------------------------------------------------ bodies
    def add_body(self, shape: Shape, position=(0.0, 0.0, 0.0), orientation=(1.0, 0.0, 0.0, 0.0), *,
                 linear_velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), fixed: bool = False,
                 mass: float | None = None, density: float | None = None, material: Material = DEFAULT,
                 name: str = "", asleep: bool = False) -> int:
        """Add a rigid body holding ``shape``; returns its id.

        ``position`` is where the shape's frame goes; the body's own origin is its centre of mass
        (the same point for spheres, boxes and capsules; shifted by ``shape.centroid`` for hulls and
        compounds). ``mass`` [kg] wins over ``density`` [kg/m^3]; otherwise ``material.density``.
        ``asleep``: the body starts asleep (solver "impulse", 004 §3.2: no position or velocity update
        until something touches it, e.g. a stack built at rest); its velocity must then be zero.
        """
        bid = self.bodies.count
        owner = f"body {bid}" + (f" ({name!r})" if name else "")
        if not isinstance(shape, Shape):
            raise BodyError(f"{owner}: field shape={shape!r} is not a tumble shape")
        if not isinstance(material, Material):
            raise BodyError(f"{owner}: field material={material!r} is not a tumble.Material")
        pos = _vec(owner, "position", position, 3)
        q = _vec(owner, "orientation", orientation, 4)
        nq = float(np.linalg.norm(q))
        if nq < 1e-12:
            raise BodyError(f"{owner}: field orientation={q.tolist()} is a zero quaternion")
        q = q / nq
        v = _vec(owner, "linear_velocity", linear_velocity, 3)
        om = _vec(owner, "angular_velocity", angular_velocity, 3)
        fixed = bool(fixed)
        if isinstance(shape, Plane) and not fixed:
            raise BodyError(f"{owner}: field fixed=False, but a Plane can only belong to a fixed body")
        if not isinstance(asleep, (bool, np.bool_)):
            raise BodyError(f"{owner}: field asleep={asleep!r} must be True or False")
        # (a solver without sleeping accepts asleep=True and ignores it: scenes are shared by all solvers)
        if asleep and (np.any(v != 0.0) or np.any(om != 0.0)):
            raise BodyError(f"{owner}: field asleep=True, but the body has a velocity "
                            f"(linear {v.tolist()}, angular {om.tolist()}); a sleeping body is at rest")

        R = quat_to_matrix_py(q)
        if isinstance(shape, Plane):
            vol, inertia = 0.0, np.zeros((3, 3))
            com_local = np.zeros(3)
        else:
            vol, _, inertia = shape.mass_properties()
            com_local = np.asarray(getattr(shape, "centroid", np.zeros(3)), dtype=np.float64)
        if fixed:
            m = 0.0
        else:
            if mass is not None:
                m = float(mass) if isinstance(mass, numbers.Real) else math.nan
                if not math.isfinite(m) or m <= 0.0:
                    raise BodyError(f"{owner}: field mass={mass!r} must be finite and > 0 for a dynamic body")
                rho = m / vol
            else:
                rho = material.density if density is None else density
                if isinstance(rho, bool) or not isinstance(rho, numbers.Real) or not math.isfinite(rho) \
                        or not DENSITY_MIN <= rho <= DENSITY_MAX:
                    raise BodyError(f"{owner}: field density={density!r} must be a finite number in "
                                    f"[{DENSITY_MIN:g}, {DENSITY_MAX:g}] kg/m^3 (tumble.materials)")
                m = rho * vol
            inertia = rho * inertia

        b = self.bodies
        i = b.append()
        b.body_position[i] = pos + R @ com_local
        b.body_orientation[i] = q
        b.body_linear_velocity[i] = 0.0 if fixed else v
        b.body_angular_velocity[i] = 0.0 if fixed else om
        b.body_fixed[i] = fixed
        b.body_mass[i] = m
        b.body_inv_mass[i] = 0.0 if fixed else 1.0 / m
        b.body_inertia_local[i] = inertia
        if fixed:
            b.body_inv_inertia_local[i] = 0.0
        else:
            try:
                b.body_inv_inertia_local[i] = np.linalg.inv(inertia)
            except np.linalg.LinAlgError:
                raise BodyError(f"{owner}: the inertia of shape {shape!r} is singular") from None
        b.body_inv_inertia_world[i] = R @ b.body_inv_inertia_local[i] @ R.T

        # each geom's frame relative to the body origin (the centre of mass): its place in the shape's
        # frame minus the centre of mass; _add_geom then moves a hull's frame onto the hull's own
        # centre of mass (its vertices are stored about it), so a lone hull ends at offset 0
        children = shape.children if isinstance(shape, Compound) else ((shape, np.zeros(3), np.array([1.0, 0, 0, 0])),)
        for child, cpos, cquat in children:
            self._add_geom(i, child, np.asarray(cpos, dtype=np.float64) - com_local, np.asarray(cquat), material, fixed)
        self._core.solver.add_body(self._core, i, bool(asleep))
        self._core.solver.state_changed()
        self._names.append(name)
        self._shapes.append(shape)
        self._materials.append(material)
        self._body_args.append(((None, None) if fixed else (m, None) if mass is not None else (None, float(rho)),
                                self.time))
        if isinstance(shape, Plane) and self._core.elastic is not None and self._floor() != self._core.elastic.floor:
            self._core.elastic.rebuild(self.time, self.gravity, self._floor())
        return i

    def remove_body(self, body: int) -> None:
        """Remove ``body`` from the world between steps, with its contacts, its cached impulses, its
        joints (each removed as by ``remove_joint``), its collision exclusions and its sleep state.

        Ids are stable: the other bodies keep their ids and ``body``'s id is never reused; its row in
        the bulk arrays (``positions()`` ...) stays as a frozen tombstone that ``removed`` marks, and
        every per-body call on it raises ``BodyError``. The bodies it touched in the last step are
        woken (004 §3.2, wake-up rule 4); every other pair keeps its warm-start impulses."""
        i = self._check(body)
        js = self._core.joint_store
        mine = np.flatnonzero(js.joint_active[: js.count] & ((js.joint_body[: js.count, 0] == i)
                                                             | (js.joint_body[: js.count, 1] == i)))
        for j in mine:
            self._joints.remove(int(j))
        self._joints.drop_body(i)
        touching = remove_core_body(self._core, i)
        self._core.solver.remove_body(self._core, i, touching)
        self._core.solver.state_changed()

    @property
    def removed(self) -> np.ndarray:
        """(n,) bool, read-only: bodies removed by ``remove_body`` (their ids stay taken)."""
        v = self.bodies.body_removed[: self.bodies.count].view()
        v.setflags(write=False)
        return v

    def spawn(self, time: float, shape: Shape, position=(0.0, 0.0, 0.0), orientation=(1.0, 0.0, 0.0, 0.0),
              **kw) -> None:
        """Queue ``add_body(shape, position, orientation, **kw)`` to run at the start of the first
        ``step()`` whose start time ``w.time >= time - 1e-9`` [s]; several due spawns run in queue order.

        The arguments are checked now (``BodyError`` naming the spawn), so a bad body fails here and
        not in the middle of a run. The body's id is the body count at the moment it is added.
        ``pending_spawns`` lists the queue.
        """
        name = kw.get("name", "")
        owner = f"spawn {len(self._spawns)}" + (f" ({name!r})" if name else "")
        t = float(time) if isinstance(time, numbers.Real) and not isinstance(time, bool) else math.nan
        if not math.isfinite(t) or t < 0.0:
            raise BodyError(f"{owner}: field time={time!r} must be a finite number >= 0 [s]")
        try:
            args = inspect.signature(self.add_body).bind(shape, position, orientation, **kw).arguments
        except TypeError as e:
            raise BodyError(f"{owner}: {e}") from None
        if not isinstance(shape, Shape):
            raise BodyError(f"{owner}: field shape={shape!r} is not a tumble shape")
        if not isinstance(args.get("material", DEFAULT), Material):
            raise BodyError(f"{owner}: field material={args['material']!r} is not a tumble.Material")
        for field, n in (("position", 3), ("orientation", 4), ("linear_velocity", 3), ("angular_velocity", 3)):
            if field in args:
                args[field] = v = _vec(owner, field, args[field], n)     # a copy: later edits do not leak in
                if field == "orientation" and np.linalg.norm(v) < 1e-12:
                    raise BodyError(f"{owner}: field orientation={v.tolist()} is a zero quaternion")
        fixed = bool(args.get("fixed", False))
        if isinstance(shape, Plane) and not fixed:
            raise BodyError(f"{owner}: field fixed=False, but a Plane can only belong to a fixed body")
        if not fixed:
            mass, density = args.get("mass"), args.get("density")
            if mass is not None:
                m = float(mass) if isinstance(mass, numbers.Real) else math.nan
                if not math.isfinite(m) or m <= 0.0:
                    raise BodyError(f"{owner}: field mass={mass!r} must be finite and > 0 for a dynamic body")
            elif density is not None:
                if not isinstance(density, numbers.Real) or not math.isfinite(density) or density <= 0.0:
                    raise BodyError(f"{owner}: field density={density!r} must be finite and > 0")
        args.pop("self", None)
        self._spawns.append((t, args.pop("shape"), dict(args)))

    @property
    def pending_spawns(self) -> tuple[tuple[float, str], ...]:
        """The queued spawns (``spawn``) not yet added, in queue order: ``(time [s], name)`` each."""
        return tuple((t, kw.get("name", "")) for t, _shape, kw in self._spawns)

    def schedule_gravity(self, time: float, gravity) -> None:
        """Queue a change of ``gravity`` [m/s^2] at the start of the first ``step()`` whose start time
        ``w.time >= time - 1e-9`` [s] (the rule of ``spawn``); when several are due at once they apply in
        queue order (the last one wins). ``pending_gravity`` lists the queue."""
        owner = f"schedule_gravity {len(self._gravity_schedule)}"
        t = float(time) if isinstance(time, numbers.Real) and not isinstance(time, bool) else math.nan
        if not math.isfinite(t) or t < 0.0:
            raise BodyError(f"{owner}: field time={time!r} must be a finite number >= 0 [s]")
        self._gravity_schedule.append((t, _vec(owner, "gravity", gravity, 3)))

    @property
    def pending_gravity(self) -> tuple[tuple[float, tuple], ...]:
        """The queued gravity changes (``schedule_gravity``) not yet applied: ``(time [s], gravity)`` each."""
        return tuple((t, tuple(float(x) for x in g)) for t, g in self._gravity_schedule)

    def _add_geom(self, body: int, shape: Shape, local_pos, local_quat, material: Material, static: bool):
        g = self.geoms
        j = g.append()
        g.geom_body[j] = body
        g.geom_type[j] = shape.geom_type
        g.geom_size[j] = shape.size
        lp = np.array(local_pos, dtype=np.float64)
        lq = np.array(local_quat, dtype=np.float64)
        if isinstance(shape, ConvexHull):
            # the hull's vertices are stored about its centre of mass: move the geom origin there
            lp = lp + quat_to_matrix_py(lq) @ shape.centroid
            g.geom_hull[j] = self.hulls.add(shape.data)
            self._core.hulls_changed()
        if isinstance(shape, Plane):
            # the plane's geom frame has its local +z along the plane normal
            pq = shape.local_rotation()
            w1, x1, y1, z1 = lq
            w2, x2, y2, z2 = pq
            lq = np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                           w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])
        g.geom_local_position[j] = lp
        g.geom_local_orientation[j] = lq
        g.geom_radius[j] = shape.bounding_radius()
        g.geom_friction[j] = material.friction
        g.geom_restitution[j] = material.restitution
        g.geom_static[j] = static

    @property
    def hulls_arrays(self):
        return self._core.hull_arrays

    def _check(self, body) -> int:
        if isinstance(body, (bool, np.bool_)) or not isinstance(body, (int, np.integer)):
            raise BodyError(f"body id {body!r} is not an integer")
        if not 0 <= body < self.bodies.count:
            raise BodyError(f"body id {body} does not exist (the world has {self.bodies.count} bodies)")
        if self.bodies.body_removed[body]:
            raise BodyError(f"body {body} ({self._names[body]!r}) was removed (World.remove_body)")
        return int(body)

    def body_name(self, body: int) -> str:
        return self._names[body]

    def shape(self, body: int) -> Shape:
        return self._shapes[self._check(body)]

    def material(self, body: int) -> Material:
        return self._materials[self._check(body)]

    @property
    def body_count(self) -> int:
        return self.bodies.count

    # ------------------------------------------------------------------ stepping
    def step(self, dt: float | None = None) -> None:
        """Advance the world by one step of ``dt`` seconds (default: the scene's dt)."""
        dt = self.default_dt if dt is None else dt
        if not isinstance(dt, (int, float)) or not math.isfinite(dt) or dt <= 0.0:
            raise SettingsError(f"step: field dt={dt!r} must be a finite number > 0 [s]")
        self.settings.check()
        if self._gravity_schedule:  # gravity changes (``schedule_gravity``) due at the start of this step
            due = [g for t, g in self._gravity_schedule if self.time >= t - 1e-9]
            if due:
                self._gravity_schedule = [e for e in self._gravity_schedule if self.time < e[0] - 1e-9]
                self.gravity = due[-1].copy()
        if self._spawns:  # timed spawns (``spawn``) due at the start of this step, in queue order
            due = [s for s in self._spawns if self.time >= s[0] - 1e-9]
            self._spawns = [s for s in self._spawns if self.time < s[0] - 1e-9]
            for _t, shape, kw in due:
                self.add_body(shape, **kw)
        core = self._core
        b = core.bodies
        keep = core.rollback_copy()          # the bodies' state before the step (tumble.nonfinite)
        # with elastic bodies, what else a failed elastic step must undo of the rigid step (forces, time)
        rigid_before = None if core.elastic is None else (
            b.body_force[: b.count].copy(), b.body_torque[: b.count].copy(), core.time, core.step_count,
            core.elastic.snapshot())
        copy_body_state(b.body_position, b.body_orientation, b.body_linear_velocity, b.body_angular_velocity,
                        *keep, b.count)
        quarantined = []
        dt = float(dt)
        if _core_step(core, dt) >= 0:        # a body became non-finite (rare: the retries apart)
            self._retry_nonfinite(dt, keep, quarantined)
        if core.elastic is not None:  # the elastic bodies: their own integrator over the same dt (elastic/world_link)
            self._step_elastic(dt, keep, rigid_before)
        events = self._joints.break_overloaded()
        if quarantined:
            self.events = [nonfinite.BodyQuarantined(i, self._names[i], self.step_count, self.time, why)
                           for i, why in quarantined] + events
            core.solver.state_changed()
        else:
            self.events = events

    def _retry_nonfinite(self, dt: float, keep: tuple, quarantined: list) -> None:
        """The step failed with a non-finite body: roll it back, then name it (raise) or freeze it
        (quarantine, appended to ``quarantined``) and take the step again, up to MAX_RETRIES times."""
        core, b = self._core, self._core.bodies
        for attempt in range(nonfinite.MAX_RETRIES + 1):
            if attempt and _core_step(core, dt) < 0:
                break
            # a non-finite body: roll the step back, then name (raise) or freeze (quarantine) its origin
            after = nonfinite.nonfinite_bodies(b)
            copy_body_state(*keep, b.body_position, b.body_orientation, b.body_linear_velocity,
                            b.body_angular_velocity, b.count)
            nonfinite.forget_caches(core)
            culprits = nonfinite.origins(b, float(dt), core.gravity, after)
            if self._on_nonfinite == "raise" or attempt == nonfinite.MAX_RETRIES:
                i, why = culprits[0]
                more = f" (and {len(culprits) - 1} more bodies)" if len(culprits) > 1 else ""
                raise SimulationError(
                    f"body {i} ({self._names[i]!r}) made step {self.step_count + 1} fail (a state NaN, infinite "
                    f"or beyond {nonfinite.STATE_LIMIT:g}): {why}{more}. "
                    "The step was rolled back: the world is as it was before it (World.on_nonfinite = "
                    "'quarantine' freezes such bodies and goes on)")
            for i, why in culprits:
                nonfinite.freeze(core, i)
                quarantined.append((i, why))

    def _step_elastic(self, dt: float, keep: tuple, rigid_before: tuple) -> None:
        """Step the elastic bodies after the rigid solver; if that fails (a TumbleError such as an
        inverted tet, or a numerical error), the whole step is rolled back (rigid state, forces, time,
        elastic state; the warm-start caches start empty) and a SimulationError says what failed."""
        core, b = self._core, self.bodies
        try:
            core.elastic.step(core, dt)
        except (TumbleError, ArithmeticError, ValueError, np.linalg.LinAlgError) as e:
            force, torque, t0, n0, snap = rigid_before
            n = force.shape[0]
            copy_body_state(*keep, b.body_position, b.body_orientation, b.body_linear_velocity,
                            b.body_angular_velocity, n)
            b.body_force[:n] = force
            b.body_torque[:n] = torque
            core.time, core.step_count = t0, n0
            core.elastic.restore(snap)
            nonfinite.forget_caches(core)
            raise SimulationError(f"the elastic bodies failed in step {n0 + 1} ({type(e).__name__}: {e}); "
                                  "the step was rolled back: the world is as it was before it") from e

    @property
    def on_nonfinite(self) -> str:
        """What a step does when a body's state becomes non-finite: ``"raise"`` (default) a
        ``SimulationError`` naming the body it started in, or ``"quarantine"``: freeze that body where
        it was (fixed, still solid), report it in ``events`` (``tumble.BodyQuarantined``) and go on.
        Either way the failed step is rolled back first (``tumble.nonfinite``)."""
        return self._on_nonfinite

    @on_nonfinite.setter
    def on_nonfinite(self, mode: str) -> None:
        if mode not in nonfinite.MODES:
            raise SettingsError(f"World: field on_nonfinite={mode!r} must be one of {list(nonfinite.MODES)}")
        self._on_nonfinite = mode

    def run(self, seconds: float, dt: float | None = None, *, progress: bool = False, record: str | None = None,
            record_every: int = 1, callback=None) -> dict:
        """Step for ``seconds`` of simulated time. ``progress`` shows a tqdm bar (steps/s, ETA) when
        stderr is a terminal; ``record`` (a path) writes a recording (``tumble.recording``: the state
        every ``record_every`` steps, counters and ms per stage of every step, the bodies' geometry);
        ``callback(world)`` runs after each step. Returns a small summary dict (with ``record``, the
        path written)."""
        dt = self.default_dt if dt is None else dt
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
                or seconds < 0:
            raise SettingsError(f"run: field seconds={seconds!r} must be a finite number >= 0")
        if isinstance(dt, bool) or not isinstance(dt, (int, float)) or not math.isfinite(dt) or dt <= 0.0:
            raise SettingsError(f"run: field dt={dt!r} must be a finite number > 0 [s]")
        n = int(round(seconds / dt))
        rec = None
        if record:
            from tumble.recording import Recorder

            rec = Recorder(self, record_every, dt)
        from tumble.progress import bar as progress_bar

        bar = progress_bar(n, self.scene.name if self.scene else "run", enabled=progress)
        t0 = time.perf_counter()
        for _ in range(n):
            self.step(dt)
            if rec is not None:
                rec.capture()
            if callback is not None:
                callback(self)
            bar.update(1)
        bar.close()
        wall = time.perf_counter() - t0
        out = {"steps": n, "wall_s": wall, "ms_per_step": 1000.0 * wall / max(n, 1),
               "realtime_factor": (n * dt) / wall if wall > 0 else math.inf}
        if rec is not None:
            out["record"] = str(rec.save(record))
        return out

    # ------------------------------------------------------------------ elastic bodies
    def add_elastic_body(self, mesh, position=(0.0, 0.0, 0.0), orientation=(1.0, 0.0, 0.0, 0.0), *, material=None,
                         linear_velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), name: str = "") -> int:
        """Add an elastic (finite-element, paper 003) body: ``mesh`` (``tumble.TetMesh``, its rest shape in body
        coordinates [m]) placed at ``position`` [m] turned by ``orientation`` (quaternion w, x, y, z), made of
        ``material`` (``tumble.ElasticMaterial``; default: its soft rubber), every vertex moving with
        ``linear_velocity`` [m/s] plus ``angular_velocity`` [rad/s] about ``position``. Returns its elastic-body
        id (0, 1, ... in its own numbering, separate from the rigid bodies').

        The world's elastic bodies share one ``ElasticSystem`` stepped by ``step`` after the rigid solver for the
        same dt (``tumble.elastic.world_link``); they rest on the world's +z ``Plane`` (contact springs, 003 §7.2)
        and push and are pushed by rigid spheres, boxes, capsules, convex hulls and other planes, with Coulomb
        friction (``tumble.elastic.coupling``).
        A bad argument raises ``ElasticError`` naming the body, field and value, and changes nothing."""
        from tumble.elastic import ElasticBody, ElasticMaterial, TetMesh
        from tumble.elastic.world_link import ElasticBodies

        owner_obj = self._core.elastic
        eid = 0 if owner_obj is None else len(owner_obj.bodies)
        owner = f"elastic body {eid}" + (f" ({name!r})" if name else "")
        if not self.capabilities.elastic_bodies:
            raise ElasticError(f"{owner}: solver {self.solver!r} does not carry elastic bodies "
                               "(capabilities.elastic_bodies is False)")
        if not isinstance(mesh, TetMesh):
            raise ElasticError(f"{owner}: field mesh={mesh!r} is not a tumble.TetMesh")
        material = ElasticMaterial() if material is None else material
        if not isinstance(material, ElasticMaterial):
            raise ElasticError(f"{owner}: field material={material!r} is not a tumble.ElasticMaterial")
        if not isinstance(name, str):
            raise ElasticError(f"{owner}: field name={name!r} is not a string")
        try:
            pos = _vec(owner, "position", position, 3)
            q = _vec(owner, "orientation", orientation, 4)
            v = _vec(owner, "linear_velocity", linear_velocity, 3)
            om = _vec(owner, "angular_velocity", angular_velocity, 3)
        except BodyError as e:
            raise ElasticError(str(e)) from None
        if np.linalg.norm(q) < 1e-12:
            raise ElasticError(f"{owner}: field orientation={q.tolist()} is a zero quaternion")
        body = ElasticBody(mesh, material, position=pos, rotation=quat_to_matrix_py(q / np.linalg.norm(q)),
                           velocity=v, angular_velocity=om, name=name)
        elastic = owner_obj if owner_obj is not None else ElasticBodies()
        elastic.bodies.append(body)
        elastic.names.append(name)
        try:
            elastic.rebuild(self.time, self.gravity, self._floor())
        except ElasticError as e:
            elastic.bodies.pop()
            elastic.names.pop()
            raise ElasticError(f"{owner}: {e}") from None
        self._core.elastic = elastic
        return eid

    def _floor(self) -> float | None:
        """Height [m] of the highest fixed Plane whose world normal is +z (the elastic bodies' floor), or None."""
        best = None
        for i, shape in enumerate(self._shapes):
            if isinstance(shape, Plane) and not self.bodies.body_removed[i]:
                normal = quat_to_matrix_py(self.bodies.body_orientation[i]) @ np.asarray(shape.normal)
                if normal[2] > 1.0 - 1e-12:
                    z = float(self.bodies.body_position[i, 2])
                    best = z if best is None else max(best, z)
        return best

    def _elastic(self, body):
        """(owner, checked id) for an elastic-body id."""
        if self._core.elastic is None:
            raise ElasticError(f"elastic body id {body!r} does not exist (the world has no elastic bodies)")
        return self._core.elastic, self._core.elastic.check(body)

    @property
    def elastic_body_count(self) -> int:
        return 0 if self._core.elastic is None else len(self._core.elastic.bodies)

    @property
    def elastic_system(self):
        """The ``tumble.elastic.ElasticSystem`` stepping the elastic bodies (None without any): read it."""
        return None if self._core.elastic is None else self._core.elastic.system

    def elastic_vertices(self, body: int) -> np.ndarray:
        """Current vertex positions [m] (n, 3) of elastic body ``body`` (a copy; rows in mesh order)."""
        elastic, i = self._elastic(body)
        return elastic.system.vertices(i)

    def elastic_velocities(self, body: int) -> np.ndarray:
        """Current vertex velocities [m/s] (n, 3) of elastic body ``body`` (a copy)."""
        elastic, i = self._elastic(body)
        return elastic.system.vertex_velocities(i)

    def elastic_surface(self, body: int) -> np.ndarray:
        """Outward surface triangles (k, 3) of elastic body ``body``, as indices into its vertices (a copy)."""
        elastic, i = self._elastic(body)
        return elastic.bodies[i].mesh.surface.copy()

    def elastic_mesh(self, body: int):
        """The ``TetMesh`` (rest shape) elastic body ``body`` was added with."""
        elastic, i = self._elastic(body)
        return elastic.bodies[i].mesh

    def elastic_name(self, body: int) -> str:
        elastic, i = self._elastic(body)
        return elastic.names[i]

    def pin(self, body: int, vertex_ids, trajectory=None) -> None:
        """Hold vertices ``vertex_ids`` (indices into elastic body ``body``'s mesh) where they are now, or on
        ``trajectory(t)`` -> (k, 3) world positions [m] at world time t [s] (003 §3: Lagrange multipliers by
        default, ``set_elastic_options(constraint_method="springs")`` for springs). A vertex held twice, a bad
        index or a bad trajectory raises ``ElasticError`` and changes nothing."""
        elastic, i = self._elastic(body)
        owner = f"elastic body {i}" + (f" ({elastic.names[i]!r})" if elastic.names[i] else "")
        target = elastic.bodies[i]
        try:
            ids = target._indices(vertex_ids)
        except ElasticError:
            raise ElasticError(f"{owner}: field vertex_ids={vertex_ids!r} must be distinct mesh vertex indices in "
                               f"0..{target.mesh.vertex_count - 1}") from None
        if trajectory is None:
            held = elastic.system.vertices(i)[ids]
            trajectory = (lambda fixed: (lambda t: fixed))(held)
            velocity = (lambda zero: (lambda t: zero))(np.zeros_like(held))
            target.constraints.append(_constraint(ids, trajectory, velocity, velocity))
        elif not callable(trajectory):
            raise ElasticError(f"{owner}: field trajectory={trajectory!r} must be callable t -> (k, 3) positions")
        else:
            target.constraints.append(_constraint(ids, trajectory, None, None))
        try:
            elastic.rebuild(self.time, self.gravity, self._floor())
        except ElasticError as e:
            target.constraints.pop()
            raise ElasticError(f"{owner}: pin({ids.tolist()[:8]}): {e}") from None

    def set_elastic_options(self, **options) -> None:
        """Options of the elastic integrator (``tumble.elastic.ElasticSystem`` keywords: ``integrator``
        ("rkf45" | "implicit"), ``tol`` [m], ``contact_stiffness`` [N/m] (floor springs), ``max_step`` [s], ...)
        and ``rigid_contact_stiffness`` [N/m] (penalty springs against rigid geoms, default 2e4). Checked at
        once (``ElasticError``; a rejected call changes nothing); needs an elastic body first."""
        if self._core.elastic is None:
            raise ElasticError("set_elastic_options: the world has no elastic bodies yet (add one first)")
        elastic = self._core.elastic
        old_options, old_stiffness = dict(elastic.options), elastic.rigid_stiffness
        stiffness = options.pop("rigid_contact_stiffness", old_stiffness)
        if isinstance(stiffness, bool) or not isinstance(stiffness, (int, float)) or not math.isfinite(stiffness) \
                or stiffness <= 0:
            raise ElasticError(f"set_elastic_options: field rigid_contact_stiffness={stiffness!r} must be a finite "
                               "number > 0 [N/m]")
        from tumble.elastic.system import ElasticSystem

        known = set(inspect.signature(ElasticSystem.__init__).parameters) - {"self", "bodies", "gravity", "floor_z"}
        for key in options:
            if key not in known:
                raise ElasticError(f"set_elastic_options: unknown field {key!r}; known: {sorted(known)}")
        elastic.options = {**old_options, **options}
        elastic.rigid_stiffness = float(stiffness)
        try:
            elastic.rebuild(self.time, self.gravity, self._floor())
        except (ElasticError, TypeError) as e:
            elastic.options, elastic.rigid_stiffness = old_options, old_stiffness
            raise ElasticError(f"set_elastic_options: {e}") from None

    def elastic_energies(self) -> dict:
        """Energy split [J] of the elastic bodies now: elastic, kinetic, potential, contact (floor and rigid
        contact springs), constraint, dissipated (so far) and total (``ElasticSystem.energies``); {} without any."""
        return {} if self._core.elastic is None else self._core.elastic.system.energies()

    def elastic_counters(self) -> dict:
        """The elastic integrator's counters since the first elastic body (``ElasticSystem.counters``)."""
        return {} if self._core.elastic is None else self._core.elastic.system.counters()

    def elastic_momentum(self) -> np.ndarray:
        """Linear momentum [kg m/s] of the elastic bodies (sum_i m_i v_i with the lumped masses)."""
        return np.zeros(3) if self._core.elastic is None else self._core.elastic.system.momentum()

    def elastic_floor_force(self) -> np.ndarray:
        """Force [N] (3,) the floor's contact springs exert on the elastic bodies now."""
        return np.zeros(3) if self._core.elastic is None else self._core.elastic.system.floor_force()

    # ------------------------------------------------------------------ joints
    def add_joint(self, joint) -> int:
        """Add a joint (``tumble.Ball``, ``Hinge``, ``Slider``, ``Distance``, ``Fixed``) between existing
        bodies; returns its id. Anchors and axes are read in world coordinates now. Raises
        ``JointError`` naming the joint, field and value for a bad definition, or when the solver has
        no joints (``capabilities.joints``)."""
        if not self.capabilities.joints:
            raise JointError(f"joint {self.joint_count}: solver {self.solver!r} has no joints "
                             f"({self._core.solver.description.split(':')[0]}); use one of "
                             f"{[n for n in registry.names() if registry.capabilities(n).joints]}")
        j = self._joints.add(joint)
        self._core.solver.state_changed()
        return j

    def remove_joint(self, joint: int) -> None:
        """Remove joint ``joint`` (its id stays taken; its bodies collide again unless excluded)."""
        self._joints.remove(joint)

    def joint(self, joint: int):
        """The definition of joint ``joint`` as added (world-frame anchors and axes at creation)."""
        return self._joints.spec(joint)

    @property
    def joint_count(self) -> int:
        """Joints ever added (removed and broken ones included: ids are never reused)."""
        return self.joint_store.count

    def joint_active(self, joint: int) -> bool:
        """False once the joint was removed or broke."""
        return bool(self.joint_store.joint_active[self._joints.check(joint)])

    def joint_reaction(self, joint: int):
        """``JointReaction(force, torque)`` of the last step: what the joint applied to body b [N],
        [N m] about b's anchor, world frame, averaged over the step (zeros before the first step)."""
        from tumble.joints import JointReaction

        j = self._joints.check(joint)
        js = self.joint_store
        return JointReaction(js.joint_force[j].copy(), js.joint_torque[j].copy())

    def joint_position(self, joint: int) -> float:
        """The joint coordinate: a hinge's angle [rad] (unwrapped across turns) or a slider's
        translation [m], 0 at creation; 0 for other types."""
        return float(self.joint_store.joint_coord[self._joints.check(joint)])

    def joint_speed(self, joint: int) -> float:
        """Rate of ``joint_position`` [rad/s or m/s] from the current velocities."""
        return self._joints.speed(joint)

    def joint_errors(self) -> np.ndarray:
        """(joint_count,) position error of every joint now [m] (anchor separation; distance joints:
        |distance - length|; sliders: b's anchor off a's line); NaN for removed or broken joints."""
        return self._joints.errors()

    def joint_anchors(self) -> np.ndarray:
        """(joint_count, 2, 3) world positions of each joint's anchor on a and on b [m]."""
        return self._joints.anchors()[0]

    def set_motor(self, joint: int, motor) -> None:
        """Replace the motor of hinge or slider ``joint`` (``tumble.Motor`` or None to remove it)."""
        self._joints.set_motor(joint, motor)

    def disable_collision(self, a: int, b: int) -> None:
        """Bodies ``a`` and ``b`` no longer collide with each other (until ``enable_collision``)."""
        self._joints.exclude(self._check(a), self._check(b), +1)

    def enable_collision(self, a: int, b: int) -> None:
        """Undo one ``disable_collision(a, b)``; joints that exclude the pair keep excluding it."""
        self._joints.exclude(self._check(a), self._check(b), -1)

    def collides(self, a: int, b: int) -> bool:
        """Whether bodies ``a`` and ``b`` may collide (not excluded by a joint or the user)."""
        return not self._joints.excluded(self._check(a), self._check(b))

    # ------------------------------------------------------------------ snapshots
    def save_state(self) -> WorldState:
        """A snapshot of everything that decides how this world goes on: the core state (bodies,
        geoms, the contact cache of the last step, the broad phase's sorted endpoints, joints, the
        solver's own state such as sleep counters or layer impulses, time, gravity, settings) and the
        World's queues (pending spawns, gravity schedule). ``restore_state`` returns the world to it
        exactly: stepping after a restore is bit-identical to stepping on from the moment of the save.
        The snapshot is a deep copy (later steps do not change it) and can be restored any number of
        times, into this world or into another world of the same solver."""
        return WorldState(self.solver, copy.deepcopy(self._snapshot_parts()))

    def restore_state(self, state: WorldState) -> None:
        """Return to ``state`` (from ``save_state``); raises ``SettingsError`` for a snapshot of
        another solver (nothing is changed then)."""
        if not isinstance(state, WorldState):
            raise SettingsError(f"restore_state: {state!r} is not a snapshot from World.save_state")
        if state.solver != self.solver:
            raise SettingsError(f"restore_state: the snapshot is of solver {state.solver!r}, this world runs "
                                f"{self.solver!r}")
        parts = copy.deepcopy(state.parts)      # the snapshot stays reusable
        (self._core, self._joints, self._names, self._shapes, self._materials, self._body_args, self._spawns,
         self._gravity_schedule, self.events, self.default_dt) = parts

    def _snapshot_parts(self) -> tuple:
        # one deepcopy of all parts together keeps their shared references (the joint registry's
        # core state is the world's core state)
        return (self._core, self._joints, self._names, self._shapes, self._materials, self._body_args,
                self._spawns, self._gravity_schedule, self.events, self.default_dt)

    def state_hash(self) -> str:
        """SHA-256 (hex) of the dynamic state: every body's position, orientation, linear and angular
        velocity (float64 bytes) and the time and step count. Equal hashes after the same steps mean
        bit-identical runs (Box2D's determinism check); it does not cover caches or sleep counters,
        which ``save_state`` does."""
        b = self.bodies
        n = b.count
        h = hashlib.sha256()
        for a in (b.body_position, b.body_orientation, b.body_linear_velocity, b.body_angular_velocity):
            h.update(np.ascontiguousarray(a[:n]).tobytes())
        h.update(np.array([self.time, float(self.step_count)]).tobytes())
        return h.hexdigest()

    # ------------------------------------------------------------------ queries
    def position(self, body: int) -> np.ndarray:
        """Centre of mass [m], a copy (3,)."""
        return self.bodies.body_position[self._check(body)].copy()

    def orientation(self, body: int) -> np.ndarray:
        """Unit quaternion (w, x, y, z), a copy (4,)."""
        return self.bodies.body_orientation[self._check(body)].copy()

    def linear_velocity(self, body: int) -> np.ndarray:
        return self.bodies.body_linear_velocity[self._check(body)].copy()

    def angular_velocity(self, body: int) -> np.ndarray:
        """World-frame angular velocity [rad/s], a copy (3,)."""
        return self.bodies.body_angular_velocity[self._check(body)].copy()

    def mass(self, body: int) -> float:
        return float(self.bodies.body_mass[self._check(body)])

    def inertia(self, body: int) -> np.ndarray:
        """Body-frame inertia tensor [kg m^2] (3, 3)."""
        return self.bodies.body_inertia_local[self._check(body)].copy()

    @property
    def positions(self) -> np.ndarray:
        """(n, 3) read-only view of all centres of mass [m]."""
        return _readonly(self.bodies.body_position[: self.bodies.count])

    @property
    def orientations(self) -> np.ndarray:
        return _readonly(self.bodies.body_orientation[: self.bodies.count])

    @property
    def linear_velocities(self) -> np.ndarray:
        return _readonly(self.bodies.body_linear_velocity[: self.bodies.count])

    @property
    def angular_velocities(self) -> np.ndarray:
        return _readonly(self.bodies.body_angular_velocity[: self.bodies.count])

    @property
    def masses(self) -> np.ndarray:
        """(n,) body masses [kg], 0 for fixed bodies."""
        return _readonly(self.bodies.body_mass[: self.bodies.count])

    @property
    def fixed(self) -> np.ndarray:
        return _readonly(self.bodies.body_fixed[: self.bodies.count])

    def contacts(self) -> Contacts:
        c = self.contact_store
        n = c.count
        return Contacts(c.contact_body_a[:n].copy(), c.contact_body_b[:n].copy(), c.contact_point[:n].copy(),
                        c.contact_normal[:n].copy(), c.contact_depth[:n].copy(),
                        c.contact_normal_impulse[:n].copy(), c.contact_friction_impulse[:n].copy(),
                        c.contact_feature[:n].copy())

    def kinetic_energy(self) -> float:
        """Sum of 1/2 m v^2 + 1/2 w^T I w over dynamic bodies [J]."""
        b = self.bodies
        n = b.count
        lin = 0.5 * np.sum(b.body_mass[:n] * np.einsum("ij,ij->i", b.body_linear_velocity[:n],
                                                       b.body_linear_velocity[:n]))
        dyn = ~b.body_fixed[:n]
        # 1/2 w_b^T I_b w_b with the body-frame angular velocity w_b = R^T w
        R = quat_to_matrices(b.body_orientation[:n][dyn])
        wb = np.einsum("nji,nj->ni", R, b.body_angular_velocity[:n][dyn])
        ang = 0.5 * float(np.einsum("ni,nij,nj->", wb, b.body_inertia_local[:n][dyn], wb))
        return float(lin + ang)

    def potential_energy(self) -> float:
        """-sum m g . x over dynamic bodies [J] (zero at the origin)."""
        b = self.bodies
        n = b.count
        return float(-np.sum(b.body_mass[:n] * (b.body_position[:n] @ self.gravity)))

    def total_energy(self) -> float:
        return self.kinetic_energy() + self.potential_energy()

    def momentum(self) -> np.ndarray:
        """Total linear momentum of dynamic bodies [kg m/s]."""
        b = self.bodies
        n = b.count
        return (b.body_mass[:n, None] * b.body_linear_velocity[:n]).sum(axis=0)

    def angular_momentum(self, about=(0.0, 0.0, 0.0)) -> np.ndarray:
        """Total angular momentum about ``about`` [kg m^2/s]: sum (x - o) x m v + R I_b R^T w."""
        b = self.bodies
        n = b.count
        o = np.asarray(about, dtype=np.float64)
        dyn = ~b.body_fixed[:n]
        L = np.cross(b.body_position[:n][dyn] - o, b.body_mass[:n][dyn, None] * b.body_linear_velocity[:n][dyn]).sum(0)
        R = quat_to_matrices(b.body_orientation[:n][dyn])
        w = b.body_angular_velocity[:n][dyn]
        Iw = np.einsum("nij,njk,nlk,nl->ni", R, b.body_inertia_local[:n][dyn], R, w)
        return L + Iw.sum(0)

    # ------------------------------------------------------------------ setters
    def _wake(self, i: int) -> None:
        """A body whose state is set or pushed is awake (004 wake-up rule 1)."""
        self._core.solver.wake(i)

    @property
    def sleeping(self) -> np.ndarray:
        """(n,) bool, read-only: bodies asleep now (``capabilities.sleeping_meaning`` says what that
        means for this solver; all False for solvers without sleeping)."""
        return self._core.solver.sleeping(self._core)

    def set_position(self, body: int, position) -> None:
        i = self._check(body)
        x = _vec(f"body {i}", "position", position, 3)
        self._wake(i)
        self.bodies.body_position[i] = x
        self._core.solver.state_changed()

    def set_orientation(self, body: int, orientation) -> None:
        i = self._check(body)
        q = _vec(f"body {i}", "orientation", orientation, 4)
        if np.linalg.norm(q) < 1e-12:
            raise BodyError(f"body {i}: field orientation={q.tolist()} is a zero quaternion")
        self._wake(i)
        self.bodies.body_orientation[i] = q / np.linalg.norm(q)
        self._core.solver.state_changed()

    def set_linear_velocity(self, body: int, velocity) -> None:
        i = self._check(body)
        v = _vec(f"body {i}", "linear_velocity", velocity, 3)
        self._wake(i)
        if not self.bodies.body_fixed[i]:
            self.bodies.body_linear_velocity[i] = v

    def set_angular_velocity(self, body: int, velocity) -> None:
        i = self._check(body)
        v = _vec(f"body {i}", "angular_velocity", velocity, 3)
        self._wake(i)
        if not self.bodies.body_fixed[i]:
            self.bodies.body_angular_velocity[i] = v

    def apply_force(self, body: int, force, point=None) -> None:
        """Add a force [N] for the next step, at ``point`` (world) or at the centre of mass."""
        i = self._check(body)
        f = _vec(f"body {i}", "force", force, 3)
        p = None if point is None else _vec(f"body {i}", "point", point, 3)
        # everything checked first: a rejected call changes nothing
        self._wake(i)
        self.bodies.body_force[i] += f
        if p is not None:
            self.bodies.body_torque[i] += np.cross(p - self.bodies.body_position[i], f)

    def apply_torque(self, body: int, torque) -> None:
        i = self._check(body)
        t = _vec(f"body {i}", "torque", torque, 3)
        self._wake(i)
        self.bodies.body_torque[i] += t


def _constraint(ids, trajectory, velocity, acceleration):
    from tumble.elastic.constraints import VertexConstraint

    return VertexConstraint(ids, trajectory, velocity, acceleration)
