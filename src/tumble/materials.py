"""Materials: density, friction and restitution, and how two materials combine at a contact.

Combination rules (documented contract, like Box2D's b2MixFriction / b2MixRestitution):
friction = sqrt(mu_a * mu_b) (geometric mean: a frictionless surface stays frictionless),
restitution = max(e_a, e_b) (the bouncier surface wins).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tumble.errors import MaterialError


@dataclass(frozen=True)
class Material:
    """Surface and bulk properties.

    Attributes:
        density: [kg/m^3] used when a body is added without an explicit mass.
        friction: Coulomb coefficient mu (static = dynamic), dimensionless, >= 0.
        restitution: Newton's coefficient e in [0, 1] (000 eq. 21).
        name: label shown in recordings and errors.
    """

    density: float = 1000.0
    friction: float = 0.5
    restitution: float = 0.0
    name: str = "default"

    def __post_init__(self):
        for field, value, ok in (
            ("density", self.density, self.density > 0.0),
            ("friction", self.friction, self.friction >= 0.0),
            ("restitution", self.restitution, 0.0 <= self.restitution <= 1.0),
        ):
            if not (math.isfinite(value) and ok):
                raise MaterialError(f"material {self.name!r}: field {field}={value!r} is out of range")

    def with_(self, **changes) -> Material:
        """A copy with some fields changed: ``OAK.with_(restitution=0.25)``."""
        d = {"density": self.density, "friction": self.friction, "restitution": self.restitution,
             "name": self.name}
        d.update(changes)
        return Material(**d)


def combine_friction(mu_a: float, mu_b: float) -> float:
    return math.sqrt(mu_a * mu_b)


def combine_restitution(e_a: float, e_b: float) -> float:
    return max(e_a, e_b)


# Presets. Densities from the impulse thesis (004 §5: oak 800, iron 7874, granite 2800 kg/m^3);
# friction values are typical dry-contact coefficients.
DEFAULT = Material()
OAK = Material(density=800.0, friction=0.5, restitution=0.25, name="oak")
IRON = Material(density=7874.0, friction=0.4, restitution=0.25, name="iron")
GRANITE = Material(density=2800.0, friction=0.6, restitution=0.25, name="granite")
RUBBER = Material(density=1100.0, friction=0.9, restitution=0.8, name="rubber")
ICE = Material(density=917.0, friction=0.02, restitution=0.05, name="ice")
CONCRETE = Material(density=2400.0, friction=0.6, restitution=0.1, name="concrete")
STEEL = Material(density=7850.0, friction=0.4, restitution=0.3, name="steel")

PRESETS = {m.name: m for m in (DEFAULT, OAK, IRON, GRANITE, RUBBER, ICE, CONCRETE, STEEL)}
