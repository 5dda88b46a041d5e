"""Materials: density, friction and restitution, and how two materials combine at a contact.

Combination rules (documented contract, like Box2D's b2MixFriction / b2MixRestitution):
friction = sqrt(mu_a * mu_b) (geometric mean: a frictionless surface stays frictionless),
restitution = max(e_a, e_b) (the bouncier surface wins).

Valid values (checked when a material is made; :class:`MaterialError` names the material, the field,
the value and the range): ``density`` a finite real number in [``DENSITY_MIN``, ``DENSITY_MAX``] =
[1e-3, 1e6] kg/m^3 (a thousandth of air's 1.2 to about 44 times osmium's 22590; with the shape sizes
of :mod:`tumble.shapes`, 1e-6 .. 1e6 m, every mass and inertia stays finite and invertible in float64,
see there), ``friction`` a finite real number >= 0, ``restitution`` a real number in [0, 1],
``name`` a string. Numbers are real numbers (``int``, ``float``, NumPy scalars), never ``bool``,
``str`` or ``None``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from tumble.errors import MaterialError

#: the range of ``Material.density`` [kg/m^3] (see the module docstring)
DENSITY_MIN = 1e-3
DENSITY_MAX = 1e6


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
        name = self.name
        if not isinstance(name, str):
            raise MaterialError(f"material {name!r}: field name={name!r} must be a string")
        for field, ok, rule in (
            ("density", lambda v: DENSITY_MIN <= v <= DENSITY_MAX,
             f"must be a finite number in [{DENSITY_MIN:g}, {DENSITY_MAX:g}] kg/m^3"),
            ("friction", lambda v: v >= 0.0, "must be a finite number >= 0"),
            ("restitution", lambda v: 0.0 <= v <= 1.0, "must be a number in [0, 1]"),
        ):
            value = getattr(self, field)
            v = value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else value
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                raise MaterialError(f"material {name!r}: field {field}={value!r} must be a number, not "
                                    f"{type(value).__name__}")
            try:
                v = float(v)
            except (TypeError, ValueError, OverflowError):
                v = math.nan
            if not (math.isfinite(v) and ok(v)):
                raise MaterialError(f"material {name!r}: field {field}={value!r} is out of range: {rule}")
            object.__setattr__(self, field, v)

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
