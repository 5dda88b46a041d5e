"""An elastic body: a tet mesh, a material, an initial placement and its vertex constraints."""

from __future__ import annotations

import numpy as np

from tumble.elastic.constraints import VertexConstraint
from tumble.elastic.material import ElasticMaterial
from tumble.elastic.mesh import TetMesh
from tumble.errors import ElasticError


class ElasticBody:
    """A deformable body for :class:`~tumble.elastic.system.ElasticSystem`.

    mesh              TetMesh, the rest (relaxed) shape in body coordinates, m.
    material          ElasticMaterial.
    position          (3,) m, where the mesh origin is placed.
    rotation          3x3 rotation matrix applied to the mesh before placing it (default identity).
    velocity          (3,) m/s initial velocity of every vertex.
    angular_velocity  (3,) rad/s initial spin about ``position``.
    The rest shape is the mesh as given (placement is a rigid motion: zero strain at t = 0).
    """

    def __init__(self, mesh: TetMesh, material: ElasticMaterial, position=(0.0, 0.0, 0.0), rotation=None,
                 velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), name: str | None = None):
        if not isinstance(mesh, TetMesh):
            raise ElasticError(f"ElasticBody.mesh must be a TetMesh, got {type(mesh).__name__}")
        if not isinstance(material, ElasticMaterial):
            raise ElasticError(f"ElasticBody.material must be an ElasticMaterial, got {type(material).__name__}")
        self.mesh = mesh
        self.material = material
        self.name = name
        position = _vector("position", position)
        rotation = np.eye(3) if rotation is None else np.asarray(rotation, dtype=np.float64)
        if rotation.shape != (3, 3) or not np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-9) \
                or np.linalg.det(rotation) < 0:
            raise ElasticError(f"ElasticBody.rotation must be a proper 3x3 rotation matrix, got {rotation.tolist()}")
        offsets = mesh.vertices @ rotation.T
        self.initial_positions = offsets + position
        self.initial_velocities = (_vector("velocity", velocity)
                                   + np.cross(_vector("angular_velocity", angular_velocity), offsets))
        self.constraints: list[VertexConstraint] = []

    def pin(self, vertices) -> None:
        """Hold the given vertices (mesh indices) at their initial positions (Lagrange multipliers or
        springs, as the system is set)."""
        vertices = self._indices(vertices)
        fixed = self.initial_positions[vertices].copy()
        self.constraints.append(VertexConstraint(vertices, lambda t: fixed, lambda t: np.zeros_like(fixed),
                                                 lambda t: np.zeros_like(fixed)))

    def prescribe(self, vertices, trajectory, velocity=None, acceleration=None) -> None:
        """Move the given vertices along ``trajectory(t)`` -> (k, 3) world positions, m (optionally with
        its derivatives; otherwise central differences). The initial state should agree with it."""
        if not callable(trajectory):
            raise ElasticError(f"ElasticBody.prescribe trajectory must be callable t -> (k, 3), got {trajectory!r}")
        self.constraints.append(VertexConstraint(self._indices(vertices), trajectory, velocity, acceleration))

    def _indices(self, vertices) -> np.ndarray:
        vertices = np.atleast_1d(np.asarray(vertices))
        if vertices.ndim != 1 or len(vertices) == 0 or not np.issubdtype(vertices.dtype, np.integer) \
                or vertices.min() < 0 or vertices.max() >= self.mesh.vertex_count:
            raise ElasticError(f"ElasticBody constraint vertices must be mesh indices in "
                               f"0..{self.mesh.vertex_count - 1}, got {vertices.tolist()[:8]}")
        if len(np.unique(vertices)) != len(vertices):
            raise ElasticError(f"ElasticBody constraint vertices repeat an index: {vertices.tolist()[:8]}")
        return vertices.astype(np.int64)


def _vector(field: str, value) -> np.ndarray:
    value = np.asarray(value, dtype=np.float64)
    if value.shape != (3,) or not np.all(np.isfinite(value)):
        raise ElasticError(f"ElasticBody.{field} must be 3 finite numbers, got {np.asarray(value).tolist()}")
    return value
