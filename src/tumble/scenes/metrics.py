"""Engine-neutral quality metrics of a scene run.

``SceneMetrics(spec)`` is fed the state after every step, either from a tumble ``World``
(``observe(world)``) or from any engine as plain arrays (``observe_arrays(...)``, used for the
PyBullet and MuJoCo peers), and ``result()`` returns a dict of:

``max_drift`` [m]
    The largest horizontal (x-y) distance of any *judged* body from its initial x-y position
    (the position in the spec), over all observations. Judged bodies are those tagged ``"stack"``;
    a scene without ``"stack"`` bodies judges all dynamic bodies.
``max_penetration`` [m]
    The largest ``max_penetration`` reported by the engine over all observations (>= 0).
``standing`` (bool, or None when the scene has no ``"stack"`` bodies)
    True when, in the last observation, every ``"stack"`` body (a) has its centre within
    ``HEIGHT_TOLERANCE`` (25 %) of its own height of its *settled height*, and (b) is tilted less
    than ``TILT_LIMIT_DEG`` (10 degrees). The settled height is where the body would rest if every
    initial vertical gap closed: bodies are visited bottom-up (by the bottom of their initial
    world AABB); a body's *supporters* are the fixed bodies and already visited ``"stack"`` bodies
    whose initial AABB lies below it and overlaps its x-y footprint (an upward plane supports
    everything above it); its settled bottom is the highest settled top among its supporters (its
    initial bottom when it has none), and its settled centre keeps the initial centre-to-bottom
    offset. The height of a body is the z extent of its initial world AABB. The tilt is the angle
    between the world direction of the body axis that was vertical at the start,
    ``R(q) R(q0)^T e_z``, and ``e_z``.
``energy`` [J]
    Kinetic plus potential energy of the dynamic bodies in the last observation:
    ``sum 1/2 m |v|^2 + 1/2 w . (R I R^T) w - m g . x`` (``w`` in world coordinates, ``I`` the
    body-frame inertia about the centre of mass, potential relative to x = 0, i.e. to z = 0 for a
    gravity along -z).
``energy_initial`` [J]
    The same for the initial state of the spec.
``energy_max_gain`` [J]
    ``max(0, max over observations of energy(t) - energy_initial)``: how much energy the engine
    invented at worst (a stable inelastic scene has 0).

Masses and inertias come from the spec: ``BodySpec.mass`` if given, otherwise ``density``
(or the material's density) times the shape's volume, via ``shape.mass_properties()``; fixed
bodies have mass 0 and are ignored by ``energy``. Bodies are identified by index (body id = index
of the spec). Also reported: ``observations`` and ``time`` [s] of the last observation.

Spawned bodies (``BodySpec.spawn_time > 0``, added during the run by ``World.spawn``) are *absent*
until they appear, and every metric above ignores absent bodies (drift, standing, energy). An
observation gives either the present bodies only (a tumble ``World``: its first ``k`` spec bodies,
``k = world.body_count``) or all spec bodies in spec order (the peers, which park or have not yet
created the absent ones); in the second case a body of spawn time ``ts > 0`` counts as present when
``time - spec.dt >= ts - 1e-9``, i.e. when the step that started at ``time - spec.dt`` or earlier
had a start time >= ``ts`` (the rule of ``World.spawn`` for steps of ``spec.dt``); ``observe_arrays``
takes ``present=k`` to say it explicitly. With spawned bodies the energy terms read:

``energy_initial`` [J]
    The energy of the bodies present at t = 0 (spawn time 0) in their spec state.
``energy_budget`` [J]
    ``energy_initial`` plus, for every spawned body present in the last observation, its energy in
    its spec state (the pose and velocity it enters with): the energy the scene was given.
``energy_max_gain`` [J]
    ``max(0, max over observations of energy(t) - budget(t))``, ``budget(t)`` being the budget of
    the bodies present at that observation, so a fired cannonball is not counted as invented energy.

A scene with spawned bodies also reports these phase metrics:

``first_spawn_time`` [s]
    The smallest spawn time > 0 of the spec.
``pre_spawn_max_drift`` [m], ``pre_spawn_max_penetration`` [m]
    ``max_drift`` and ``max_penetration`` over the observations in which no spawned body is present
    yet (the structure standing alone); None when there was no such observation.
``displaced`` (int)
    The number of ``"stack"`` bodies whose centre, in the last observation, is farther (3-D distance)
    from its initial position than half the smallest extent of its initial world AABB (for a
    0.4 x 0.2 x 0.2 m brick: 0.1 m): the bricks knocked out of place, i.e. the size of a breach.
``projectile_speeds`` ({name: float or None})
    The final linear speed [m/s] of every body tagged ``"projectile"`` (None while it is absent),
    keyed by its name (``"body<i>"`` when unnamed).
``projectile_final_speed`` [m/s] (or None)
    The largest of ``projectile_speeds`` over the present projectiles; None when none is present.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._core.math3d import quat_to_matrices
from tumble.scenes.spec import SceneSpec
from tumble.shapes import Box, Capsule, Compound, ConvexHull, Plane, Shape, Sphere

#: Fraction of a body's own height its final centre may differ from its settled height.
HEIGHT_TOLERANCE = 0.25
#: Largest tilt [deg] of a standing body.
TILT_LIMIT_DEG = 10.0


def local_half_extent(shape: Shape, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) offsets [m] (3,) of the world AABB of ``shape`` rotated by ``R`` from the body origin.

    Planes have infinite extent (below the plane for an upward normal: hi z = 0)."""
    if isinstance(shape, Sphere):
        h = np.full(3, shape.radius)
        return -h, h
    if isinstance(shape, Box):
        h = np.abs(R) @ np.asarray(shape.half_extents)
        return -h, h
    if isinstance(shape, Capsule):
        h = np.abs(R[:, 2]) * shape.half_length + shape.radius
        return -h, h
    if isinstance(shape, ConvexHull):
        v = np.asarray(shape.data.vertices) @ R.T
        return v.min(axis=0), v.max(axis=0)
    if isinstance(shape, Compound):
        com = shape.centroid
        los, his = [], []
        for child, pos, quat in shape.children:
            Rc = quat_to_matrices(quat)[0]
            lo, hi = local_half_extent(child, R @ Rc)
            # a hull's extent is about its own centre of mass, at ``centroid`` in its points' frame
            c = R @ (np.asarray(pos) + Rc @ np.asarray(getattr(child, "centroid", np.zeros(3))) - com)
            los.append(c + lo)
            his.append(c + hi)
        return np.min(los, axis=0), np.max(his, axis=0)
    if isinstance(shape, Plane):
        lo = np.full(3, -math.inf)
        hi = np.full(3, math.inf)
        n = R @ np.asarray(shape.normal)
        if n[2] > 1.0 - 1e-9:
            hi[2] = 0.0
        return lo, hi
    raise TypeError(f"metrics: unsupported shape {shape!r}")


def spec_mass_properties(spec: SceneSpec) -> tuple[np.ndarray, np.ndarray]:
    """Masses [kg] (n,) and body-frame inertias [kg m^2] (n, 3, 3) of the spec's bodies.

    ``mass`` wins over ``density``, which wins over the material's density; fixed bodies get 0."""
    n = len(spec.bodies)
    masses = np.zeros(n)
    inertias = np.zeros((n, 3, 3))
    for i, b in enumerate(spec.bodies):
        if b.fixed:
            continue
        vol, _c, inertia_pd = b.shape.mass_properties()
        if b.mass is not None:
            m = float(b.mass)
            rho = m / vol
        else:
            rho = float(b.density if b.density is not None else b.material.density)
            m = rho * vol
        masses[i] = m
        inertias[i] = rho * np.asarray(inertia_pd)
    return masses, inertias


def spec_initial_state(spec: SceneSpec):
    """(positions (n,3), orientations (n,4), linear (n,3), angular (n,3)) of the spec."""
    pos = np.array([b.position for b in spec.bodies], dtype=np.float64).reshape(-1, 3)
    quat = np.array([b.orientation for b in spec.bodies], dtype=np.float64).reshape(-1, 4)
    lin = np.array([b.linear_velocity for b in spec.bodies], dtype=np.float64).reshape(-1, 3)
    ang = np.array([b.angular_velocity for b in spec.bodies], dtype=np.float64).reshape(-1, 3)
    return pos, quat, lin, ang


def spec_aabbs(spec: SceneSpec) -> tuple[np.ndarray, np.ndarray]:
    """World AABBs (lo (n,3), hi (n,3)) [m] of the spec's bodies at their initial poses."""
    pos, quat, _, _ = spec_initial_state(spec)
    R = quat_to_matrices(quat) if len(pos) else np.zeros((0, 3, 3))
    lo = np.empty_like(pos)
    hi = np.empty_like(pos)
    for i, b in enumerate(spec.bodies):
        a, c = local_half_extent(b.shape, R[i])
        lo[i] = pos[i] + a
        hi[i] = pos[i] + c
    return lo, hi


def settled_heights(spec: SceneSpec, ids: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Settled centre heights [m] of bodies ``ids`` (see the module docstring)."""
    n = len(spec.bodies)
    pos_z = np.array([b.position[2] for b in spec.bodies], dtype=np.float64)
    settled_top = np.full(n, np.nan)            # nan: not a supporter (yet)
    for j, b in enumerate(spec.bodies):
        if b.fixed and math.isfinite(hi[j, 2]):
            settled_top[j] = hi[j, 2]
    eps = 1e-9
    out = {}
    for i in sorted((int(k) for k in ids), key=lambda k: lo[k, 2]):
        cand = ~np.isnan(settled_top)
        cand[i] = False
        cand &= hi[:, 2] <= lo[i, 2] + eps                       # entirely below i
        with np.errstate(invalid="ignore"):
            apart = ((hi[:, 0] <= lo[i, 0] + eps) | (lo[:, 0] >= hi[i, 0] - eps) |
                     (hi[:, 1] <= lo[i, 1] + eps) | (lo[:, 1] >= hi[i, 1] - eps))
        cand &= ~apart                                           # footprints overlap (planes: always)
        bottom = float(settled_top[cand].max()) if cand.any() else lo[i, 2]
        out[i] = bottom + (pos_z[i] - lo[i, 2])
        settled_top[i] = bottom + (hi[i, 2] - lo[i, 2])
    return np.array([out[int(k)] for k in ids])


class SceneMetrics:
    """Tracks one run of ``spec``; see the module docstring for every definition."""

    def __init__(self, spec: SceneSpec):
        self.spec = spec
        n = len(spec.bodies)
        self.n = n
        self.masses, self.inertias = spec_mass_properties(spec)
        self.dynamic = np.array([i for i, b in enumerate(spec.bodies) if not b.fixed], dtype=np.int64)
        self.stack = spec.tagged("stack")
        self.judged = self.stack if len(self.stack) else self.dynamic
        self.projectiles = spec.tagged("projectile")
        self.spawn_times = spec.spawn_times()
        self.spawned = self.spawn_times > 0.0
        self.first_spawn_time = float(self.spawn_times[self.spawned].min()) if self.spawned.any() else None
        pos0, quat0, lin0, ang0 = spec_initial_state(spec)
        self._initial = (pos0, quat0, lin0, ang0)
        self.initial_position = pos0.copy()
        self.initial_xy = pos0[:, :2].copy()
        self.initial_R = quat_to_matrices(quat0) if n else np.zeros((0, 3, 3))
        self.gravity = np.asarray(spec.gravity, dtype=np.float64)
        lo, hi = spec_aabbs(spec)
        self.heights = hi[:, 2] - lo[:, 2]
        self.min_extents = (hi - lo).min(axis=1) if n else np.zeros(0)
        self.settled = settled_heights(spec, self.stack, lo, hi) if len(self.stack) else np.zeros(0)
        self.body_energy_initial = self.body_energies(pos0, quat0, lin0, ang0)
        self.energy_initial = float(self.body_energy_initial[~self.spawned].sum())
        self.energy_budget = self.energy_initial
        self.max_drift = 0.0
        self.max_penetration = 0.0
        self.max_gain = 0.0
        self.pre_spawn_max_drift = None
        self.pre_spawn_max_penetration = None
        self.observations = 0
        self.time = 0.0
        self._last = None
        self.max_joint_error = 0.0      # [m] largest anchor separation of an intact joint seen
        self.joints_broken = 0

    # -- observation ---------------------------------------------------------------------------
    def observe(self, world) -> None:
        """Record the state of a tumble ``World`` holding this scene (call after each step)."""
        self.observe_arrays(world.time, world.positions, world.orientations, world.linear_velocities,
                            world.angular_velocities, world.counters.get("max_penetration", 0.0),
                            present=world.body_count)
        if world.joint_count:
            err = world.joint_errors()
            intact = ~np.isnan(err)
            if intact.any():
                self.max_joint_error = max(self.max_joint_error, float(err[intact].max()))
            self.joints_broken = int((~intact).sum())

    def present_mask(self, time: float, rows: int, present: int | None = None) -> np.ndarray:
        """(n,) bool: the bodies present in an observation at ``time`` with ``rows`` rows (see the
        module docstring; ``present`` = number of present bodies, overriding the time rule)."""
        if present is None and rows < self.n:
            present = rows
        if present is not None:
            mask = np.zeros(self.n, dtype=bool)
            mask[: int(present)] = True
            return mask
        return ~self.spawned | (float(time) - self.spec.dt >= self.spawn_times - 1e-9)

    def observe_arrays(self, time, positions, orientations, linear_velocities, angular_velocities,
                       max_penetration, present: int | None = None) -> None:
        """Record one state given as arrays in spec order: positions (k,3) [m], orientations (k,4)
        (w,x,y,z), linear velocities (k,3) [m/s], angular velocities (k,3) [rad/s] in world
        coordinates, and the engine's current max penetration [m]. ``k`` is the number of bodies:
        all of the spec's, or only the first ``k`` present ones (see the module docstring)."""
        p = np.array(positions, dtype=np.float64).reshape(-1, 3)
        q = np.array(orientations, dtype=np.float64).reshape(-1, 4)
        v = np.array(linear_velocities, dtype=np.float64).reshape(-1, 3)
        w = np.array(angular_velocities, dtype=np.float64).reshape(-1, 3)
        k = len(p)
        if k > self.n:
            raise ValueError(f"metrics: {k} bodies observed, but scene {self.spec.name!r} has {self.n}")
        mask = self.present_mask(time, k, present)
        if k < self.n:  # pad the absent bodies with their spec state (never read: they are masked out)
            p, q, v, w = (np.concatenate([a, b[k:]]) for a, b in zip((p, q, v, w), self._initial))
        judged = self.judged[mask[self.judged]]
        drift = 0.0
        if len(judged):
            d = p[judged, :2] - self.initial_xy[judged]
            drift = float(np.sqrt((d * d).sum(axis=1)).max())
            self.max_drift = max(self.max_drift, drift)
        mp = float(max_penetration) if max_penetration is not None else 0.0
        mp = mp if math.isfinite(mp) else 0.0
        self.max_penetration = max(self.max_penetration, mp)
        if self.first_spawn_time is not None and not mask[self.spawned].any():
            self.pre_spawn_max_drift = max(self.pre_spawn_max_drift or 0.0, drift)
            self.pre_spawn_max_penetration = max(self.pre_spawn_max_penetration or 0.0, mp)
        dyn = self.dynamic[mask[self.dynamic]]
        e = float(self.body_energies(p, q, v, w)[dyn].sum())
        budget = float(self.body_energy_initial[dyn].sum())
        if math.isfinite(e):
            self.max_gain = max(self.max_gain, e - budget)
        self.energy_budget = budget
        self.observations += 1
        self.time = float(time)
        self._last = (p, q, v, w, e, mask)

    # -- definitions ---------------------------------------------------------------------------
    def body_energies(self, p, q, v, w) -> np.ndarray:
        """Kinetic + potential energy [J] (n,) of every body (0 for fixed bodies), for states over
        all spec bodies (see the module docstring)."""
        out = np.zeros(len(p))
        i = self.dynamic
        if len(i) == 0:
            return out
        m = self.masses[i]
        R = quat_to_matrices(q[i])
        wl = np.einsum("nji,nj->ni", R, w[i])                       # body-frame angular velocity
        rot = 0.5 * np.einsum("ni,nij,nj->n", wl, self.inertias[i], wl)
        kin = 0.5 * m * (v[i] ** 2).sum(axis=1)
        pot = -m * (p[i] @ self.gravity)
        out[i] = kin + rot + pot
        return out

    def energy_of(self, p, q, v, w) -> float:
        """Kinetic + potential energy [J] of all dynamic bodies of a full state (see the module docstring)."""
        return float(self.body_energies(p, q, v, w).sum())

    def tilts_deg(self, q) -> np.ndarray:
        """Tilt [deg] of every stack body for orientations ``q`` (n,4)."""
        if len(self.stack) == 0:
            return np.zeros(0)
        R = quat_to_matrices(np.asarray(q)[self.stack])
        up0 = self.initial_R[self.stack][:, 2, :]     # R0^T e_z: the body axis that was vertical
        up = np.einsum("nij,nj->ni", R, up0)
        return np.degrees(np.arccos(np.clip(up[:, 2], -1.0, 1.0)))

    def standing(self) -> bool | None:
        """See the module docstring; None when there are no ``"stack"`` bodies or no observation.
        Absent stack bodies (not spawned yet) are not judged."""
        if len(self.stack) == 0 or self._last is None:
            return None
        p, q, mask = self._last[0], self._last[1], self._last[5]
        dz = np.abs(p[self.stack, 2] - self.settled)
        ok_h = dz <= HEIGHT_TOLERANCE * self.heights[self.stack]
        ok_t = self.tilts_deg(q) < TILT_LIMIT_DEG
        ok = (ok_h & ok_t & np.all(np.isfinite(p[self.stack]), axis=1)) | ~mask[self.stack]
        return bool(np.all(ok))

    def displaced(self) -> int:
        """Number of present ``"stack"`` bodies moved farther than half their smallest initial AABB
        extent from their initial position, in the last observation (see the module docstring)."""
        if self._last is None or len(self.stack) == 0:
            return 0
        p, mask = self._last[0], self._last[5]
        ids = self.stack[mask[self.stack]]
        d = np.linalg.norm(p[ids] - self.initial_position[ids], axis=1)
        return int(np.count_nonzero(~(d <= 0.5 * self.min_extents[ids])))      # NaN counts as displaced

    def projectile_speeds(self) -> dict:
        """{name: final linear speed [m/s] or None when absent} of the ``"projectile"`` bodies."""
        out = {}
        for i in self.projectiles:
            name = self.spec.bodies[i].name or f"body{i}"
            if self._last is None or not self._last[5][i]:
                out[name] = None
            else:
                out[name] = float(np.linalg.norm(self._last[2][i]))
        return out

    def result(self) -> dict:
        energy = self._last[4] if self._last is not None else self.energy_initial
        out = {
            "max_drift": float(self.max_drift),
            "max_penetration": float(self.max_penetration),
            "standing": self.standing(),
            "energy": float(energy),
            "energy_initial": float(self.energy_initial),
            "energy_max_gain": float(max(0.0, self.max_gain)),
            "observations": int(self.observations),
            "time": float(self.time),
        }
        if self.spec.joints:
            out["max_joint_error"] = float(self.max_joint_error)
            out["joints_broken"] = int(self.joints_broken)
        if self.first_spawn_time is not None:
            speeds = self.projectile_speeds()
            present = [s for s in speeds.values() if s is not None]
            out.update({
                "energy_budget": float(self.energy_budget),
                "first_spawn_time": self.first_spawn_time,
                "pre_spawn_max_drift": self.pre_spawn_max_drift,
                "pre_spawn_max_penetration": self.pre_spawn_max_penetration,
                "displaced": self.displaced(),
                "projectile_speeds": speeds,
                "projectile_final_speed": max(present) if present else None,
            })
        return out
