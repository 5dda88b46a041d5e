"""Errors of tumble. Every message names the offending item: body, field and value."""


class TumbleError(Exception):
    """Base class of every error tumble raises on purpose."""


class ShapeError(TumbleError, ValueError):
    """A shape definition is invalid (non-positive size, degenerate hull, NaN ...)."""


class BodyError(TumbleError, ValueError):
    """A body definition or state is invalid (mass <= 0, NaN pose or velocity ...)."""


class MaterialError(TumbleError, ValueError):
    """A material is invalid (negative friction, restitution outside [0, 1] ...)."""


class JointError(TumbleError, ValueError):
    """A joint definition is invalid (same body twice, zero axis, NaN anchor, reversed limits ...)."""


class SettingsError(TumbleError, ValueError):
    """A solver setting or solver name is invalid."""


class SceneError(TumbleError, KeyError):
    """An unknown scene name or bad scene parameter."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class SimulationError(TumbleError, RuntimeError):
    """The simulation state became non-finite; the message names the first bad body."""


class RecordingError(TumbleError, ValueError):
    """A recording file is missing, unreadable or malformed; the message names the file and array."""


class ElasticError(TumbleError, ValueError):
    """An elastic body, mesh, material or setting is invalid (inverted or sliver tetrahedron, modulus <= 0 ...)."""
