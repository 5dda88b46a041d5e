"""Material of an elastic body (paper 003, §4.1-4.2): density and the four constants of eq. 15-16."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tumble.errors import ElasticError


@dataclass(frozen=True)
class ElasticMaterial:
    """Isotropic viscoelastic material.

    density          kg/m^3, rest-shape density (each tet keeps its rest mass, §5).
    bulk_modulus     Pa, alpha of eq. 15: resistance to volume change for small strain.
    shear_modulus    Pa, beta of eq. 15: resistance to shape change for small strain.
    bulk_viscosity   Pa s, gamma_1 of eq. 16: power loss per rate of volume change.
    shear_viscosity  Pa s, gamma_2 of eq. 16: power loss per rate of shape change.

    Defaults are a soft rubber (1100 kg/m^3, K = 1 MPa, mu = 0.3 MPa, no viscosity).
    """

    density: float = 1100.0
    bulk_modulus: float = 1.0e6
    shear_modulus: float = 3.0e5
    bulk_viscosity: float = 0.0
    shear_viscosity: float = 0.0

    def __post_init__(self):
        for name in ("density", "bulk_modulus", "shear_modulus"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ElasticError(f"ElasticMaterial.{name} must be a finite number > 0, got {value!r}")
        for name in ("bulk_viscosity", "shear_viscosity"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ElasticError(f"ElasticMaterial.{name} must be a finite number >= 0, got {value!r}")

    @classmethod
    def from_young(cls, density: float, young_modulus: float, poisson_ratio: float, bulk_viscosity: float = 0.0,
                   shear_viscosity: float = 0.0) -> ElasticMaterial:
        """Material from Young's modulus E (Pa) and Poisson's ratio nu in (-1, 0.5):
        K = E / (3 (1 - 2 nu)), mu = E / (2 (1 + nu))."""
        if not (-1.0 < poisson_ratio < 0.5):
            raise ElasticError(f"ElasticMaterial.poisson_ratio must lie in (-1, 0.5), got {poisson_ratio!r}")
        if not math.isfinite(young_modulus) or young_modulus <= 0:
            raise ElasticError(f"ElasticMaterial.young_modulus must be a finite number > 0, got {young_modulus!r}")
        return cls(density, young_modulus / (3.0 * (1.0 - 2.0 * poisson_ratio)),
                   young_modulus / (2.0 * (1.0 + poisson_ratio)), bulk_viscosity, shear_viscosity)
