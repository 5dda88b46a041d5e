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
            c = R @ (np.asarray(pos) - com)
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
        self.masses, self.inertias = spec_mass_properties(spec)
        self.dynamic = np.array([i for i, b in enumerate(spec.bodies) if not b.fixed], dtype=np.int64)
        self.stack = spec.tagged("stack")
        self.judged = self.stack if len(self.stack) else self.dynamic
        pos0, quat0, lin0, ang0 = spec_initial_state(spec)
        self.initial_xy = pos0[:, :2].copy()
        self.initial_R = quat_to_matrices(quat0) if n else np.zeros((0, 3, 3))
        self.gravity = np.asarray(spec.gravity, dtype=np.float64)
        lo, hi = spec_aabbs(spec)
        self.heights = hi[:, 2] - lo[:, 2]
        self.settled = settled_heights(spec, self.stack, lo, hi) if len(self.stack) else np.zeros(0)
        self.energy_initial = self.energy_of(pos0, quat0, lin0, ang0)
        self.max_drift = 0.0
        self.max_penetration = 0.0
        self.energy_max = self.energy_initial
        self.observations = 0
        self.time = 0.0
        self._last = None

    # -- observation ---------------------------------------------------------------------------
    def observe(self, world) -> None:
        """Record the state of a tumble ``World`` holding this scene (call after each step)."""
        self.observe_arrays(world.time, world.positions, world.orientations, world.linear_velocities,
                            world.angular_velocities, world.counters.get("max_penetration", 0.0))

    def observe_arrays(self, time, positions, orientations, linear_velocities, angular_velocities,
                       max_penetration) -> None:
        """Record one state given as arrays over all bodies in spec order: positions (n,3) [m],
        orientations (n,4) (w,x,y,z), linear velocities (n,3) [m/s], angular velocities (n,3)
        [rad/s] in world coordinates, and the engine's current max penetration [m]."""
        p = np.array(positions, dtype=np.float64).reshape(-1, 3)
        q = np.array(orientations, dtype=np.float64).reshape(-1, 4)
        v = np.array(linear_velocities, dtype=np.float64).reshape(-1, 3)
        w = np.array(angular_velocities, dtype=np.float64).reshape(-1, 3)
        if len(self.judged):
            d = p[self.judged, :2] - self.initial_xy[self.judged]
            self.max_drift = max(self.max_drift, float(np.sqrt((d * d).sum(axis=1)).max()))
        mp = float(max_penetration) if max_penetration is not None else 0.0
        if math.isfinite(mp):
            self.max_penetration = max(self.max_penetration, mp)
        e = self.energy_of(p, q, v, w)
        if math.isfinite(e):
            self.energy_max = max(self.energy_max, e)
        self.observations += 1
        self.time = float(time)
        self._last = (p, q, v, w, e)

    # -- definitions ---------------------------------------------------------------------------
    def energy_of(self, p, q, v, w) -> float:
        """Kinetic + potential energy [J] of the dynamic bodies (see the module docstring)."""
        i = self.dynamic
        if len(i) == 0:
            return 0.0
        m = self.masses[i]
        R = quat_to_matrices(q[i])
        wl = np.einsum("nji,nj->ni", R, w[i])                       # body-frame angular velocity
        rot = 0.5 * np.einsum("ni,nij,nj->n", wl, self.inertias[i], wl)
        kin = 0.5 * m * (v[i] ** 2).sum(axis=1)
        pot = -m * (p[i] @ self.gravity)
        return float((kin + rot + pot).sum())

    def tilts_deg(self, q) -> np.ndarray:
        """Tilt [deg] of every stack body for orientations ``q`` (n,4)."""
        if len(self.stack) == 0:
            return np.zeros(0)
        R = quat_to_matrices(np.asarray(q)[self.stack])
        up0 = self.initial_R[self.stack][:, 2, :]     # R0^T e_z: the body axis that was vertical
        up = np.einsum("nij,nj->ni", R, up0)
        return np.degrees(np.arccos(np.clip(up[:, 2], -1.0, 1.0)))

    def standing(self) -> bool | None:
        """See the module docstring; None when there are no ``"stack"`` bodies or no observation."""
        if len(self.stack) == 0 or self._last is None:
            return None
        p, q = self._last[0], self._last[1]
        dz = np.abs(p[self.stack, 2] - self.settled)
        ok_h = dz <= HEIGHT_TOLERANCE * self.heights[self.stack]
        ok_t = self.tilts_deg(q) < TILT_LIMIT_DEG
        return bool(np.all(ok_h & ok_t) and np.all(np.isfinite(p[self.stack])))

    def result(self) -> dict:
        energy = self._last[4] if self._last is not None else self.energy_initial
        return {
            "max_drift": float(self.max_drift),
            "max_penetration": float(self.max_penetration),
            "standing": self.standing(),
            "energy": float(energy),
            "energy_initial": float(self.energy_initial),
            "energy_max_gain": float(max(0.0, self.energy_max - self.energy_initial)),
            "observations": int(self.observations),
            "time": float(self.time),
        }
