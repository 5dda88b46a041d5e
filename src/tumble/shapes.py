"""Shapes and their mass properties.

Every shape is a frozen description in its own local frame. Mass properties are returned per unit
density as ``(volume [m^3], center [m] (3,), inertia_per_density [m^5] (3, 3) about ``center``)``,
so ``mass = density * volume`` and ``I = density * inertia``.

Closed forms: sphere I = 2/5 m r^2; box I_xx = m/3 (h_y^2 + h_z^2) with half extents h; capsule =
cylinder + two hemispheres with the hemisphere centroid offset 3r/8 (parallel-axis theorem);
convex hull by exact integration over the tetrahedra of its triangulated boundary (divergence
theorem, Tonon 2004 form); compound by summing children with the parallel-axis theorem.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from tumble._core import types as T
from tumble.errors import ShapeError


def _finite_positive(owner: str, name: str, value: float) -> float:
    v = float(value)
    if not math.isfinite(v) or v <= 0.0:
        raise ShapeError(f"{owner}: field {name}={value!r} must be a finite positive number")
    return v


class Shape:
    """Base class. ``geom_type`` is the kernel code (``tumble._core.types.GEOM_*``)."""

    geom_type: int = -1

    def mass_properties(self) -> tuple[float, np.ndarray, np.ndarray]:
        raise NotImplementedError

    def bounding_radius(self) -> float:
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class Sphere(Shape):
    """Sphere of ``radius`` [m] centred on the body origin."""

    radius: float
    geom_type = T.GEOM_SPHERE

    def __post_init__(self):
        object.__setattr__(self, "radius", _finite_positive("Sphere", "radius", self.radius))

    def mass_properties(self):
        r = self.radius
        v = 4.0 / 3.0 * math.pi * r**3
        return v, np.zeros(3), np.eye(3) * (0.4 * v * r * r)

    def bounding_radius(self):
        return self.radius

    @property
    def size(self):
        return np.array([self.radius, 0.0, 0.0])


@dataclass(frozen=True, eq=False)
class Box(Shape):
    """Box with ``half_extents`` (hx, hy, hz) [m] along the local axes."""

    half_extents: tuple
    geom_type = T.GEOM_BOX

    def __post_init__(self):
        h = np.asarray(self.half_extents, dtype=np.float64).reshape(-1)
        if h.shape != (3,):
            raise ShapeError(f"Box: field half_extents={self.half_extents!r} must have 3 components")
        for i, n in enumerate("xyz"):
            _finite_positive("Box", f"half_extents.{n}", h[i])
        object.__setattr__(self, "half_extents", tuple(float(x) for x in h))

    def mass_properties(self):
        hx, hy, hz = self.half_extents
        v = 8.0 * hx * hy * hz
        return v, np.zeros(3), np.diag([v / 3.0 * (hy * hy + hz * hz), v / 3.0 * (hx * hx + hz * hz),
                                        v / 3.0 * (hx * hx + hy * hy)])

    def bounding_radius(self):
        return float(np.linalg.norm(self.half_extents))

    @property
    def size(self):
        return np.array(self.half_extents)


@dataclass(frozen=True, eq=False)
class Capsule(Shape):
    """Capsule: a segment of half length ``half_length`` [m] along local z, swept by ``radius`` [m]."""

    radius: float
    half_length: float
    geom_type = T.GEOM_CAPSULE

    def __post_init__(self):
        object.__setattr__(self, "radius", _finite_positive("Capsule", "radius", self.radius))
        object.__setattr__(self, "half_length", _finite_positive("Capsule", "half_length", self.half_length))

    def mass_properties(self):
        r, h = self.radius, self.half_length
        vc = math.pi * r * r * 2.0 * h            # cylinder of length 2h
        vs = 4.0 / 3.0 * math.pi * r**3           # two hemispheres = one sphere
        # cylinder about its centre: Izz = 1/2 m r^2, Ixx = m (3 r^2 + L^2) / 12 with L = 2h
        izz = 0.5 * vc * r * r + 0.4 * vs * r * r
        ixx_c = vc * (3.0 * r * r + 4.0 * h * h) / 12.0
        # each hemisphere (volume vs/2): about its own centroid Ixx = (2/5 - 9/64) (vs/2) r^2 with the
        # centroid at 3r/8 from the flat face, i.e. at h + 3r/8 from the capsule centre.
        d = h + 3.0 * r / 8.0
        ixx_s = 2.0 * ((0.4 - 9.0 / 64.0) * 0.5 * vs * r * r + 0.5 * vs * d * d)
        v = vc + vs
        return v, np.zeros(3), np.diag([ixx_c + ixx_s, ixx_c + ixx_s, izz])

    def bounding_radius(self):
        return self.radius + self.half_length

    @property
    def size(self):
        return np.array([self.radius, self.half_length, 0.0])


@dataclass(frozen=True, eq=False)
class Plane(Shape):
    """Infinite half-space below the plane through the body origin with outward ``normal``.

    Planes are static geometry: a body holding a plane must be added with ``fixed=True``.
    """

    normal: tuple = (0.0, 0.0, 1.0)
    geom_type = T.GEOM_PLANE

    def __post_init__(self):
        n = np.asarray(self.normal, dtype=np.float64).reshape(-1)
        if n.shape != (3,) or not np.all(np.isfinite(n)) or np.linalg.norm(n) < 1e-12:
            raise ShapeError(f"Plane: field normal={self.normal!r} must be a finite non-zero 3-vector")
        object.__setattr__(self, "normal", tuple(float(x) for x in n / np.linalg.norm(n)))

    def mass_properties(self):
        raise ShapeError("Plane: a plane has no mass; add it with fixed=True")

    def bounding_radius(self):
        return math.inf

    @property
    def size(self):
        return np.zeros(3)

    def local_rotation(self) -> np.ndarray:
        """Quaternion (w, x, y, z) turning local +z onto ``normal`` (the geom frame of the plane)."""
        n = np.asarray(self.normal)
        z = np.array([0.0, 0.0, 1.0])
        c = float(np.dot(z, n))
        if c > 1.0 - 1e-12:
            return np.array([1.0, 0.0, 0.0, 0.0])
        if c < -1.0 + 1e-12:
            return np.array([0.0, 1.0, 0.0, 0.0])
        axis = np.cross(z, n)
        axis /= np.linalg.norm(axis)
        ang = math.acos(max(-1.0, min(1.0, c)))
        return np.array([math.cos(ang / 2), *(axis * math.sin(ang / 2))])


@dataclass(frozen=True, eq=False)
class ConvexHull(Shape):
    """Convex hull of ``points`` (N, 3) [m], given in the body frame.

    The hull is built once (scipy's Qhull, coplanar triangles merged into polygon faces). Its mass
    properties are integrated exactly; the body origin is placed at the hull's centre of mass, so
    ``centroid`` (in the frame of ``points``) tells where that is.
    """

    points: np.ndarray
    data: object = field(default=None, repr=False)

    geom_type = T.GEOM_HULL

    def __post_init__(self):
        from tumble._core.collision.hull import build_hull  # lazy: keeps import light

        p = np.asarray(self.points, dtype=np.float64)
        if p.ndim != 2 or p.shape[1] != 3 or p.shape[0] < 4:
            raise ShapeError(f"ConvexHull: field points has shape {p.shape}, need (N >= 4, 3)")
        if not np.all(np.isfinite(p)):
            bad = np.argwhere(~np.isfinite(p))[0]
            raise ShapeError(f"ConvexHull: field points[{bad[0]}] = {p[bad[0]].tolist()} is not finite")
        object.__setattr__(self, "points", p)
        object.__setattr__(self, "data", build_hull(p))

    @property
    def centroid(self) -> np.ndarray:
        return self.data.centroid

    def mass_properties(self):
        return self.data.volume, np.zeros(3), self.data.inertia

    def bounding_radius(self):
        return float(np.max(np.linalg.norm(self.data.vertices, axis=1)))

    @property
    def size(self):
        return np.zeros(3)


@dataclass(frozen=True, eq=False)
class Compound(Shape):
    """Several shapes rigidly joined: ``[(shape, position, orientation), ...]`` in the body frame.

    ``orientation`` is a (w, x, y, z) quaternion and may be omitted. Children may not be planes or
    compounds. Mass properties sum the children's with the parallel-axis theorem; the body origin is
    placed at the compound's centre of mass (``centroid`` in the children's frame).
    """

    children: Sequence

    def __post_init__(self):
        kids = []
        for i, c in enumerate(self.children):
            if isinstance(c, Shape):
                c = (c, (0.0, 0.0, 0.0))
            if len(c) == 2:
                c = (c[0], c[1], (1.0, 0.0, 0.0, 0.0))
            shape, pos, quat = c
            if not isinstance(shape, Shape) or isinstance(shape, (Plane, Compound)):
                raise ShapeError(f"Compound: child {i} = {shape!r} must be a Sphere, Box, Capsule or ConvexHull")
            pos = np.asarray(pos, dtype=np.float64).reshape(-1)
            quat = np.asarray(quat, dtype=np.float64).reshape(-1)
            if pos.shape != (3,) or not np.all(np.isfinite(pos)):
                raise ShapeError(f"Compound: child {i} field position={pos.tolist()} must be a finite 3-vector")
            if quat.shape != (4,) or not np.all(np.isfinite(quat)) or np.linalg.norm(quat) < 1e-12:
                raise ShapeError(f"Compound: child {i} field orientation={quat.tolist()} must be a non-zero quaternion")
            kids.append((shape, pos, quat / np.linalg.norm(quat)))
        if not kids:
            raise ShapeError("Compound: field children is empty")
        object.__setattr__(self, "children", tuple(kids))

    geom_type = -1

    @property
    def centroid(self) -> np.ndarray:
        return self._mass()[1]

    def _mass(self):
        from tumble._core.math3d import quat_to_matrix_py

        vol = 0.0
        first = np.zeros(3)
        parts = []
        for shape, pos, quat in self.children:
            v, c, inertia = shape.mass_properties()
            R = quat_to_matrix_py(quat)
            cw = pos + R @ c
            parts.append((v, cw, R @ inertia @ R.T))
            vol += v
            first += v * cw
        com = first / vol
        total = np.zeros((3, 3))
        for v, cw, inertia in parts:
            d = cw - com
            total += inertia + v * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
        return vol, com, total

    def mass_properties(self):
        vol, _com, inertia = self._mass()
        return vol, np.zeros(3), inertia

    def bounding_radius(self):
        com = self.centroid
        return max(float(np.linalg.norm(pos - com)) + s.bounding_radius() for s, pos, _ in self.children)
