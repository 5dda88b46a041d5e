"""Tetrahedral meshes of elastic bodies (paper 003, §5: a body is a union of tetrahedra glued by faces).

A :class:`TetMesh` holds the rest shape: ``vertices`` (n, 3) m, ``tets`` (m, 4) int64 with positive
volume det[v1 - v0, v2 - v0, v3 - v0] > 0, and the derived ``surface`` (k, 3) int64: the faces owned by
one tet only, ordered so that their normals point out of the body. Construction checks quality: an
inverted (volume <= 0) or sliver tet is an :class:`~tumble.errors.ElasticError` naming its index.

Generators: :meth:`TetMesh.box`, :meth:`TetMesh.beam` (hexahedral grid, each cell cut into the 6
Kuhn tets, which conform across cells), :meth:`TetMesh.cylinder` (triangulated disk extruded in layers,
each prism cut into 3 tets by the lowest-index rule so that neighbouring prisms conform),
:meth:`TetMesh.sphere` and :meth:`TetMesh.from_surface` (tetgen), :meth:`TetMesh.load` (meshio).
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np

from tumble.errors import ElasticError

#: smallest accepted shape quality 6 sqrt(2) V / l_rms^3 (1 for a regular tet, 0 for a flat one); a
#: Kuhn tet of a cube has 0.65, tetgen's quality meshes stay above ~0.1.
DEFAULT_MIN_QUALITY = 1e-3

# the four faces of a positively oriented tet (a, b, c, d), each ordered so that its normal
# (p1 - p0) x (p2 - p0) points away from the opposite vertex
_OUTWARD_FACES = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], dtype=np.int64)


def tet_signed_volumes(vertices: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Signed volumes (m,) m^3: det[v1 - v0, v2 - v0, v3 - v0] / 6."""
    p = vertices[tets]
    e1, e2, e3 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]
    return np.einsum("ij,ij->i", e1, np.cross(e2, e3)) / 6.0


def tet_quality(vertices: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Shape quality (m,): 6 sqrt(2) V / l_rms^3, 1 for a regular tet, -> 0 for a sliver or flat tet."""
    p = vertices[tets]
    edges = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    sq = sum(np.einsum("ij,ij->i", p[:, a] - p[:, b], p[:, a] - p[:, b]) for a, b in edges) / 6.0
    return 6.0 * math.sqrt(2.0) * tet_signed_volumes(vertices, tets) / np.maximum(sq, 1e-300) ** 1.5


def surface_triangles(tets: np.ndarray) -> np.ndarray:
    """Boundary faces (k, 3) of a positively oriented tet mesh, outward oriented: the faces that occur in
    exactly one tet."""
    faces = tets[:, _OUTWARD_FACES].reshape(-1, 3)
    keys = np.sort(faces, axis=1)
    _, first, counts = np.unique(keys, axis=0, return_index=True, return_counts=True)
    return np.ascontiguousarray(faces[np.sort(first[counts == 1])])


class TetMesh:
    """Rest shape of an elastic body: vertices (n, 3) m, tets (m, 4) int64, surface (k, 3) int64 (derived).

    ``min_quality``: tets whose quality (see :func:`tet_quality`) is below it are slivers and rejected.
    """

    def __init__(self, vertices, tets, *, min_quality: float = DEFAULT_MIN_QUALITY):
        vertices = np.ascontiguousarray(np.asarray(vertices, dtype=np.float64))
        tets_in = np.asarray(tets)
        if vertices.ndim != 2 or vertices.shape[1] != 3 or len(vertices) < 4:
            raise ElasticError(f"TetMesh.vertices must have shape (n >= 4, 3), got {vertices.shape}")
        if not np.all(np.isfinite(vertices)):
            bad = int(np.argwhere(~np.isfinite(vertices))[0, 0])
            raise ElasticError(f"TetMesh.vertices[{bad}] is not finite: {vertices[bad].tolist()}")
        if tets_in.ndim != 2 or tets_in.shape[1] != 4 or len(tets_in) < 1:
            raise ElasticError(f"TetMesh.tets must have shape (m >= 1, 4), got {tets_in.shape}")
        if not np.issubdtype(tets_in.dtype, np.integer):
            raise ElasticError(f"TetMesh.tets must be integers, got dtype {tets_in.dtype}")
        tets = np.ascontiguousarray(tets_in, dtype=np.int64)
        if tets.min() < 0 or tets.max() >= len(vertices):
            bad = int(np.argwhere((tets < 0) | (tets >= len(vertices)))[0, 0])
            raise ElasticError(f"TetMesh.tets[{bad}] = {tets[bad].tolist()} indexes outside 0..{len(vertices) - 1}")
        repeated = np.argwhere(np.sort(tets, axis=1)[:, 1:] == np.sort(tets, axis=1)[:, :-1])
        if len(repeated):
            bad = int(repeated[0, 0])
            raise ElasticError(f"TetMesh.tets[{bad}] = {tets[bad].tolist()} repeats a vertex")
        volumes = tet_signed_volumes(vertices, tets)
        scale = np.ptp(vertices, axis=0).max()
        inverted = np.flatnonzero(volumes <= 1e-14 * scale ** 3)
        if len(inverted):
            raise ElasticError(f"TetMesh: {len(inverted)} inverted or flat tets (signed volume <= 0), first indices "
                               f"{inverted[:8].tolist()}, volume of tets[{inverted[0]}] = {volumes[inverted[0]]:.3e}")
        quality = tet_quality(vertices, tets)
        slivers = np.flatnonzero(quality < min_quality)
        if len(slivers):
            raise ElasticError(f"TetMesh: {len(slivers)} sliver tets (quality < min_quality={min_quality}), first "
                               f"indices {slivers[:8].tolist()}, quality of tets[{slivers[0]}] = "
                               f"{quality[slivers[0]]:.3e}")
        used = np.zeros(len(vertices), dtype=bool)
        used[tets.ravel()] = True
        if not used.all():
            raise ElasticError(f"TetMesh: vertices {np.flatnonzero(~used)[:8].tolist()} belong to no tet")
        self.vertices = vertices
        self.tets = tets
        self.surface = surface_triangles(tets)
        self.rest_volumes = volumes

    # ------------------------------------------------------------------ properties
    @property
    def vertex_count(self) -> int:
        return len(self.vertices)

    @property
    def tet_count(self) -> int:
        return len(self.tets)

    @property
    def volume(self) -> float:
        """Total rest volume m^3."""
        return float(self.rest_volumes.sum())

    def __repr__(self) -> str:
        return f"TetMesh({self.vertex_count} vertices, {self.tet_count} tets, {len(self.surface)} surface triangles)"

    def translated(self, offset) -> TetMesh:
        return TetMesh(self.vertices + np.asarray(offset, dtype=np.float64), self.tets)

    def rotated(self, rotation) -> TetMesh:
        """The mesh turned by the 3x3 rotation matrix about the origin (a proper rotation keeps volumes)."""
        rotation = np.asarray(rotation, dtype=np.float64)
        return TetMesh(self.vertices @ rotation.T, self.tets)

    # ------------------------------------------------------------------ generators
    @classmethod
    def box(cls, size=(1.0, 1.0, 1.0), divisions=(2, 2, 2)) -> TetMesh:
        """Box of edge lengths size centred on the origin, divisions cells per axis, 6 tets per cell."""
        size = _positive_vector("TetMesh.box size", size)
        divisions = _positive_ints("TetMesh.box divisions", divisions)
        nx, ny, nz = divisions
        axes = [np.linspace(-s / 2, s / 2, d + 1) for s, d in zip(size, divisions)]
        gx, gy, gz = np.meshgrid(*axes, indexing="ij")
        vertices = np.stack([gx.ravel(), gy.ravel(), gz.ravel()], axis=1)

        def index(i, j, k):
            return (i * (ny + 1) + j) * (nz + 1) + k

        ci, cj, ck = np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij")
        ci, cj, ck = ci.ravel(), cj.ravel(), ck.ravel()
        tets = []
        # Kuhn (Freudenthal) subdivision: one tet per axis order, walking from corner (0,0,0) to (1,1,1);
        # every cell is cut the same way, so the cut diagonals of neighbouring cells coincide
        for order in itertools.permutations(range(3)):
            step = np.zeros((4, 3), dtype=np.int64)
            for corner in range(1, 4):
                step[corner] = step[corner - 1]
                step[corner, order[corner - 1]] += 1
            tet = np.stack([index(ci + step[c, 0], cj + step[c, 1], ck + step[c, 2]) for c in range(4)], axis=1)
            tets.append(tet)
        tets = np.concatenate(tets)
        return cls(vertices, _orient_positive(vertices, tets))

    @classmethod
    def beam(cls, length: float, width: float, height: float, divisions=(8, 2, 2)) -> TetMesh:
        """Beam along x from x = 0 to x = length, centred on the x axis (width along y, height along z)."""
        mesh = cls.box((length, width, height), divisions)
        return mesh.translated((length / 2.0, 0.0, 0.0))

    @classmethod
    def cylinder(cls, radius: float, height: float, segments: int = 11, rings: int = 1, layers: int = 7) -> TetMesh:
        """Cylinder of axis z, base at z = -height/2: a disk of ``rings`` rings of ``segments`` points around a
        centre point, extruded in ``layers`` layers; each triangular prism is cut into 3 tets.
        Defaults (11 segments, 1 ring, 7 layers): 96 vertices, 231 tets, the size of one cylinder of the paper's
        §9 scene."""
        _positive_vector("TetMesh.cylinder radius/height", (radius, height))
        segments, rings, layers = _positive_ints("TetMesh.cylinder segments/rings/layers", (segments, rings, layers))
        if segments < 3:
            raise ElasticError(f"TetMesh.cylinder segments must be >= 3, got {segments}")
        disk = [(0.0, 0.0)]
        for r in range(1, rings + 1):
            for s in range(segments):
                angle = 2.0 * math.pi * (s + 0.5 * (r % 2)) / segments
                disk.append((radius * r / rings * math.cos(angle), radius * r / rings * math.sin(angle)))
        disk = np.array(disk)
        triangles = [(0, 1 + s, 1 + (s + 1) % segments) for s in range(segments)]
        for r in range(1, rings):
            inner, outer = 1 + (r - 1) * segments, 1 + r * segments
            for s in range(segments):
                s1 = (s + 1) % segments
                triangles.append((inner + s, outer + s, outer + s1))
                triangles.append((inner + s, outer + s1, inner + s1))
        return cls._extrude(disk, np.array(triangles), np.linspace(-height / 2, height / 2, layers + 1))

    @classmethod
    def _extrude(cls, disk: np.ndarray, triangles: np.ndarray, heights: np.ndarray) -> TetMesh:
        per_layer = len(disk)
        vertices = np.concatenate([np.column_stack([disk, np.full(per_layer, z)]) for z in heights])
        tets = []
        for layer in range(len(heights) - 1):
            for tri in triangles:
                bottom = [int(t) + layer * per_layer for t in tri]
                top = [b + per_layer for b in bottom]
                tets += _split_prism(bottom, top)
        tets = np.array(tets, dtype=np.int64)
        return cls(vertices, _orient_positive(vertices, tets))

    @classmethod
    def sphere(cls, radius: float, subdivisions: int = 2, max_volume: float | None = None) -> TetMesh:
        """Ball of the given radius centred on the origin: an icosphere surface (trimesh) filled by tetgen."""
        import trimesh

        _positive_vector("TetMesh.sphere radius", (radius,))
        surface = trimesh.creation.icosphere(subdivisions=int(subdivisions), radius=float(radius))
        return cls.from_surface(surface, max_volume=max_volume)

    @classmethod
    def from_surface(cls, surface, max_volume: float | None = None, min_ratio: float = 1.5) -> TetMesh:
        """Tetrahedralize a closed triangle surface (a trimesh.Trimesh or a path trimesh can read) with tetgen
        (quality mesh: radius-edge ratio <= ``min_ratio``; ``max_volume`` m^3 caps the tet size)."""
        import tetgen
        import trimesh

        if isinstance(surface, (str, Path)):
            path = Path(surface)
            if not path.exists():
                raise ElasticError(f"TetMesh.from_surface: file {str(path)!r} does not exist")
            surface = trimesh.load(str(path), force="mesh")
        if not isinstance(surface, trimesh.Trimesh):
            raise ElasticError(f"TetMesh.from_surface needs a trimesh.Trimesh or a path, got {type(surface).__name__}")
        if not surface.is_watertight:
            raise ElasticError("TetMesh.from_surface: the surface is not closed (watertight); tetgen needs that")
        generator = tetgen.TetGen(np.asarray(surface.vertices, dtype=np.float64),
                                  np.asarray(surface.faces, dtype=np.int32))
        options = {"order": 1, "quality": True, "minratio": float(min_ratio)}
        if max_volume is not None:
            options["maxvolume"] = float(max_volume)
        nodes, elements, *_ = generator.tetrahedralize(**options)
        return cls(nodes, _orient_positive(nodes, np.asarray(elements, dtype=np.int64)))

    @classmethod
    def load(cls, path) -> TetMesh:
        """Read the tetra cells of a mesh file (.msh, .vtk, .vtu ... anything meshio reads)."""
        import meshio

        path = Path(path)
        if not path.exists():
            raise ElasticError(f"TetMesh.load: file {str(path)!r} does not exist")
        try:
            data = meshio.read(str(path))
        except Exception as exc:  # meshio raises many types for malformed files
            raise ElasticError(f"TetMesh.load: cannot read {str(path)!r}: {exc}") from exc
        blocks = [block.data for block in data.cells if block.type == "tetra"]
        if not blocks:
            raise ElasticError(f"TetMesh.load: {str(path)!r} has no 'tetra' cells (found "
                               f"{[block.type for block in data.cells]})")
        tets = np.concatenate(blocks).astype(np.int64)
        used = np.unique(tets)
        remap = np.full(len(data.points), -1, dtype=np.int64)
        remap[used] = np.arange(len(used))  # drop points no tet uses (gmsh keeps geometry points)
        vertices = np.asarray(data.points, dtype=np.float64)[used]
        if vertices.shape[1] == 2:
            raise ElasticError(f"TetMesh.load: {str(path)!r} has 2D points")
        return cls(vertices, _orient_positive(vertices, remap[tets]))

    def save(self, path) -> None:
        """Write the mesh with meshio (format from the file suffix)."""
        import meshio

        meshio.write(str(path), meshio.Mesh(self.vertices, [("tetra", self.tets)]))


def _split_prism(bottom: list[int], top: list[int]) -> list[list[int]]:
    """Cut the prism (bottom a b c, top d e f; d above a ...) into 3 tets so that each quad face is split
    along the diagonal through its lowest global index: then two prisms sharing a quad cut it the same way.
    The bottom vertices have lower indices than the top ones (layers are numbered upwards), so the lowest of the
    six is a bottom vertex: rotate it to position a; the diagonal of the opposite quad (b c f e) decides."""
    rotate = int(np.argmin(bottom))
    a, b, c = (bottom[(rotate + i) % 3] for i in range(3))
    d, e, f = (top[(rotate + i) % 3] for i in range(3))
    if min(b, f) < min(c, e):
        return [[a, b, c, f], [a, b, f, e], [a, e, f, d]]
    return [[a, b, c, e], [a, e, c, f], [a, e, f, d]]


def _orient_positive(vertices: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Swap two vertices of every negatively oriented tet (generators and tetgen do not promise an order)."""
    tets = np.array(tets, dtype=np.int64)
    negative = tet_signed_volumes(vertices, tets) < 0
    tets[negative, 2], tets[negative, 3] = tets[negative, 3].copy(), tets[negative, 2].copy()
    return tets


def _positive_vector(field: str, values) -> tuple[float, ...]:
    values = tuple(float(v) for v in np.atleast_1d(values))
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise ElasticError(f"{field} must be finite and > 0, got {values}")
    return values


def _positive_ints(field: str, values) -> tuple[int, ...]:
    values = tuple(np.atleast_1d(values).tolist())
    if not all(isinstance(v, int) and v >= 1 for v in values):
        raise ElasticError(f"{field} must be integers >= 1, got {values}")
    return values
