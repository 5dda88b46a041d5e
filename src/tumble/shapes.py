"""Shapes and their mass properties.

Every shape is a frozen description in its own local frame. Mass properties are returned per unit
density as ``(volume [m^3], center [m] (3,), inertia_per_density [m^5] (3, 3) about ``center``)``,
so ``mass = density * volume`` and ``I = density * inertia``.

Closed forms: sphere I = 2/5 m r^2; box I_xx = m/3 (h_y^2 + h_z^2) with half extents h; capsule =
cylinder + two hemispheres with the hemisphere centroid offset 3r/8 (parallel-axis theorem);
convex hull by exact integration over the tetrahedra of its triangulated boundary (divergence
theorem, Tonon 2004 form); compound by summing children with the parallel-axis theorem.

Valid sizes: every length that defines a shape (sphere and capsule radius, capsule half length, box
half extent, a hull's half thickness across each of its faces) lies in [``SIZE_MIN``, ``SIZE_MAX``]
= [1e-6, 1e6] m, and so does every hull point coordinate and compound child offset. Why: with the
densities materials accept (:data:`tumble.materials.DENSITY_MIN` .. ``DENSITY_MAX`` = 1e-3 ..
1e6 kg/m^3) the mass (~ rho L^3, 4e-21 .. 8e24 kg), the inertia (~ rho L^5, 1.7e-33 .. 5e36 kg m^2)
and the inertia tensor's determinant (~ 1e-99 .. 1e110) all stay finite, non-zero and invertible in
float64 (1e-308 .. 1e308) with hundreds of decades to spare, while a 1e-6 m feature at 1e6 m from the
origin is still resolved by float64 positions (spacing ~2e-10 m there). Outside the range float64
breaks: a sphere of radius 1e-200 has volume 0 (r^3 underflows, so mass 0 and a division by zero when
stepping), one of 1e200 overflows (r^3 = 1e600). Shapes outside the range raise :class:`ShapeError`
at construction, naming the shape, the field, the value and the range.

Every numeric field must be a real number (``int``, ``float``, NumPy scalar; not ``bool``, ``str`` or
``None``); anything else raises :class:`ShapeError` naming the shape, the field and the value.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from tumble._core import types as T
from tumble.errors import ShapeError

#: smallest and largest valid shape size [m] (see the module docstring for why)
SIZE_MIN = 1e-6
SIZE_MAX = 1e6
_RANGE = f"[{SIZE_MIN:g}, {SIZE_MAX:g}] m"


def _real(owner: str, name: str, value) -> float:
    """``value`` as a float; :class:`ShapeError` unless it is a real number (bool, str, None ... are not)."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ShapeError(f"{owner}: field {name}={value!r} must be a number, not {type(value).__name__}")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError) as e:  # e.g. an int too large for a float
        text = repr(value)
        text = text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
        raise ShapeError(f"{owner}: field {name}={text} is not a usable number ({e})") from None


def _size(owner: str, name: str, value) -> float:
    """A length of a shape [m]: a finite real number in [SIZE_MIN, SIZE_MAX]."""
    v = _real(owner, name, value)
    if not (math.isfinite(v) and SIZE_MIN <= v <= SIZE_MAX):
        raise ShapeError(f"{owner}: field {name}={value!r} must be a finite size in {_RANGE}")
    return v


def _array(owner: str, name: str, value, shape_text: str) -> np.ndarray:
    """``value`` as a float64 array; :class:`ShapeError` if it holds anything but real numbers."""
    try:
        a = np.asarray(value)
        if a.dtype.kind not in "iuf":  # strings, None, objects, bools, complex
            raise TypeError(f"it holds {a.dtype} values")
        return a.astype(np.float64)
    except (TypeError, ValueError, OverflowError) as e:
        raise ShapeError(f"{owner}: field {name}={value!r} must be {shape_text} of numbers ({e})") from None


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
        object.__setattr__(self, "radius", _size("Sphere", "radius", self.radius))

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
        h = self.half_extents
        if isinstance(h, np.ndarray):
            h = h.reshape(-1).tolist() if h.dtype.kind in "iuf" else h
        if isinstance(h, (str, bytes)) or not isinstance(h, (Sequence, np.ndarray)) or len(h) != 3:
            raise ShapeError(f"Box: field half_extents={self.half_extents!r} must have 3 components [m]")
        sizes = tuple(_size("Box", f"half_extents.{n}", x) for n, x in zip("xyz", h))
        object.__setattr__(self, "half_extents", sizes)

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
        object.__setattr__(self, "radius", _size("Capsule", "radius", self.radius))
        object.__setattr__(self, "half_length", _size("Capsule", "half_length", self.half_length))

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
        n = _array("Plane", "normal", self.normal, "a 3-vector").reshape(-1)
        if n.shape == (3,) and np.all(np.isfinite(n)) and np.max(np.abs(n)) > 0.0:
            n = n / np.max(np.abs(n))  # first scale to max 1: the norm of (1e200, 1e200, 0) must not overflow
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

        p = _array("ConvexHull", "points", self.points, "an (N, 3) array")
        if p.ndim != 2 or p.shape[1] != 3 or p.shape[0] < 4:
            raise ShapeError(f"ConvexHull: field points has shape {p.shape}, need (N >= 4, 3)")
        if not np.all(np.isfinite(p)):
            bad = np.argwhere(~np.isfinite(p))[0]
            raise ShapeError(f"ConvexHull: field points[{bad[0]}] = {p[bad[0]].tolist()} is not finite")
        big = np.abs(p) > SIZE_MAX
        if np.any(big):
            i = int(np.argwhere(big)[0][0])
            raise ShapeError(f"ConvexHull: field points[{i}] = {p[i].tolist()} has a coordinate outside "
                             f"[-{SIZE_MAX:g}, {SIZE_MAX:g}] m")
        extent = float(np.max(np.ptp(p, axis=0)))
        if extent < 2.0 * SIZE_MIN:  # Qhull and the mass integrals would lose it (1e-200: volume 0)
            raise ShapeError(f"ConvexHull: field points spans {extent:g} m; a hull must be at least "
                             f"{2.0 * SIZE_MIN:g} m thick (its half thickness a size in {_RANGE})")
        data = build_hull(p)
        v = data.vertices
        d = v @ np.asarray(data.face_normal, dtype=np.float64).T  # (V, faces): height of each vertex above each face
        thick = float(np.min(np.max(d, axis=0) - np.min(d, axis=0))) if d.size else 0.0
        if not (thick >= 2.0 * SIZE_MIN and math.isfinite(data.volume) and data.volume > 0.0
                and np.all(np.isfinite(data.inertia))):
            raise ShapeError(f"ConvexHull: field points makes a hull only {thick:g} m thick (volume "
                             f"{data.volume:g} m^3); its half thickness across every face must be a size in {_RANGE}")
        object.__setattr__(self, "points", p)
        object.__setattr__(self, "data", data)

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
        children = self.children
        try:
            if isinstance(children, (str, bytes, dict, Shape)):
                raise TypeError
            children = list(children)
        except TypeError:
            raise ShapeError(f"Compound: field children={self.children!r} must be a list of shapes or (shape, "
                             "position[, orientation])") from None
        for i, c in enumerate(children):
            if isinstance(c, Shape):
                c = (c, (0.0, 0.0, 0.0))
            if isinstance(c, (str, bytes)) or not isinstance(c, Sequence) or len(c) not in (2, 3):
                raise ShapeError(f"Compound: child {i} = {c!r} must be a shape or (shape, position[, orientation])")
            if len(c) == 2:
                c = (c[0], c[1], (1.0, 0.0, 0.0, 0.0))
            shape, pos, quat = c
            if not isinstance(shape, Shape) or isinstance(shape, (Plane, Compound)):
                raise ShapeError(f"Compound: child {i} = {shape!r} must be a Sphere, Box, Capsule or ConvexHull")
            pos = _array("Compound", f"children[{i}].position", pos, "a 3-vector").reshape(-1)
            quat = _array("Compound", f"children[{i}].orientation", quat, "a quaternion").reshape(-1)
            if pos.shape != (3,) or not np.all(np.isfinite(pos)) or np.max(np.abs(pos)) > SIZE_MAX:
                raise ShapeError(f"Compound: child {i} field position={pos.tolist()} must be a finite 3-vector "
                                 f"with coordinates in [-{SIZE_MAX:g}, {SIZE_MAX:g}] m")
            if quat.shape == (4,) and np.all(np.isfinite(quat)) and np.max(np.abs(quat)) > 0.0:
                quat = quat / np.max(np.abs(quat))  # no overflow in the norm below
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
            if isinstance(shape, ConvexHull):
                # a hull's mass properties are about its own centre of mass, which sits at ``centroid``
                # in the frame of its points (World._add_geom moves the geom there too); without this
                # shift a hull child whose points are not centred on 0 (a convex decomposition's
                # pieces, all in the mesh frame) put its mass at the child position instead
                c = shape.centroid
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
        from tumble._core.math3d import quat_to_matrix_py

        com = self.centroid
        # a hull child's radius is about its own centre of mass (at ``centroid`` in its points' frame)
        return max(float(np.linalg.norm(pos + quat_to_matrix_py(q) @ getattr(s, "centroid", np.zeros(3)) - com))
                   + s.bounding_radius() for s, pos, q in self.children)
