"""Joints: pairwise constraints between two bodies, solved as rows next to the contacts (Catto 001 §3).

    w.add_joint(tb.Hinge(a, b, anchor=(0, 0, 1), axis=(0, 1, 0), limits=(-0.5, 0.5),
                         motor=tb.Motor(speed=2.0, max_force=50.0)))

Every joint joins body ``a`` and body ``b`` (``a=None`` joins ``b`` to the world, i.e. to a fixed
point in space). Anchors and axes are given in **world coordinates at creation**; the world converts
them to each body's frame when the joint is added, so later motion carries them along. Joint
coordinates (hinge angle, slider translation) are measured from the creation pose: 0 there.

Common keywords of every joint type:

* ``collide`` -- whether the two bodies still collide with each other; default False (the usual
  choice for neighbouring links, as in Box2D's ``collideConnected``);
* ``break_force`` [N] / ``break_torque`` [N m] -- the joint breaks (is removed and a
  :class:`JointBreak` event is reported) after the first step whose reaction exceeds either;
  default inf (unbreakable);
* ``name`` -- for messages.

Joint types (each from its position constraint, 001 §3.4's recipe; kernels in
``tumble._core.dynamics.joints``):

=================  ======================================================  ====================
type               position constraint                                     rows
=================  ======================================================  ====================
``Distance``       \\|p_b - p_a\\| = L (001 eq. 8, normalised)               1
``Ball``           p_b = p_a (anchor points coincide)                      3
``Hinge``          ball + axis_a parallel to axis_b                        5 (+2 limits, +1 motor)
``Slider``         anchor of b on the line through a's anchor along axis,  5 (+2 limits, +1 motor)
                   no relative rotation
``Fixed``          ball + no relative rotation (weld)                      6
=================  ======================================================  ====================
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tumble.errors import JointError


@dataclass(frozen=True)
class Motor:
    """A joint motor on a hinge's angle or a slider's translation (001 §3.5-3.6: a bias row with
    bounded impulse).

    * velocity motor: ``Motor(speed=2.0, max_force=10.0)`` drives the joint speed [rad/s or m/s]
      towards ``speed`` with at most ``max_force`` [N m for a hinge, N for a slider];
    * position servo: ``Motor(target=0.5, frequency=4.0, damping_ratio=1.0, max_force=50.0)``
      pulls the joint coordinate [rad or m] towards ``target`` like a spring of natural frequency
      ``frequency`` [Hz] and damping ratio ``damping_ratio`` (1 = critical), independent of the
      bodies' masses (soft constraint: the row's stiffness is scaled by its effective mass), with
      ``speed`` (default 0) the target speed of the servo.
    """

    speed: float | None = None
    target: float | None = None
    max_force: float = math.inf
    frequency: float = 2.0
    damping_ratio: float = 1.0

    def validate(self, owner: str) -> None:
        for name in ("speed", "target"):
            v = getattr(self, name)
            if v is not None and not _finite(v):
                raise JointError(f"{owner}: field motor.{name}={v!r} must be a finite number")
        if self.speed is None and self.target is None:
            raise JointError(f"{owner}: field motor needs speed= (velocity motor) or target= (position servo)")
        mf = self.max_force
        if not isinstance(mf, numbers.Real) or math.isnan(mf) or mf < 0:
            raise JointError(f"{owner}: field motor.max_force={mf!r} must be a number >= 0 (inf: unbounded)")
        if not _finite(self.frequency) or self.frequency <= 0:
            raise JointError(f"{owner}: field motor.frequency={self.frequency!r} must be a finite number > 0 [Hz]")
        if not _finite(self.damping_ratio) or self.damping_ratio < 0:
            raise JointError(f"{owner}: field motor.damping_ratio={self.damping_ratio!r} must be finite and >= 0")


class JointReaction(NamedTuple):
    """What the joint did to body ``b`` during the last step, averaged over it (body ``a`` felt the
    opposite): ``force`` (3,) [N] and ``torque`` (3,) [N m] about the joint's anchor on ``b``, world
    frame. A ball joint's torque is zero; a hinge's torque along its axis is the motor/limit torque."""

    force: np.ndarray
    torque: np.ndarray


class JointBreak(NamedTuple):
    """A breakable joint broke during step ``step`` (ending at ``time`` [s]); its last reaction."""

    joint: int
    step: int
    time: float
    force: np.ndarray
    torque: np.ndarray


def _finite(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def _point(owner: str, field: str, value) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise JointError(f"{owner}: field {field}={value!r} is not a 3-vector of numbers") from None
    if a.shape != (3,):
        raise JointError(f"{owner}: field {field}={value!r} must have 3 components")
    if not np.all(np.isfinite(a)):
        raise JointError(f"{owner}: field {field}={a.tolist()} is not finite")
    return a


def _axis(owner: str, field: str, value) -> np.ndarray:
    a = _point(owner, field, value)
    n = float(np.linalg.norm(a))
    if n < 1e-12:
        raise JointError(f"{owner}: field {field}={a.tolist()} is a zero vector; an axis needs a direction")
    return a / n


class Joint:
    """Base of the joint types; see the module docstring. Instances are plain data."""

    kind = ""

    def __init__(self, a, b, *, collide: bool = False, break_force: float = math.inf,
                 break_torque: float = math.inf, name: str = ""):
        self.a = a
        self.b = b
        self.collide = collide
        self.break_force = break_force
        self.break_torque = break_torque
        self.name = name

    def owner(self, index: int | None = None) -> str:
        who = f"{self.kind} joint" + (f" {index}" if index is not None else "")
        return who + (f" ({self.name!r})" if self.name else "")

    def validate(self, owner: str) -> None:
        """Checks that need no world (bodies are checked by ``World.add_joint``)."""
        for field in ("break_force", "break_torque"):
            v = getattr(self, field)
            if not isinstance(v, numbers.Real) or isinstance(v, bool) or math.isnan(v) or v <= 0:
                raise JointError(f"{owner}: field {field}={v!r} must be a number > 0 (inf: unbreakable)")
        if not isinstance(self.collide, bool):
            raise JointError(f"{owner}: field collide={self.collide!r} must be True or False")

    def _fields(self) -> dict:
        return {}

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self._fields().items())
        return f"{type(self).__name__}({self.a!r}, {self.b!r}{extra})"

    def __eq__(self, other) -> bool:
        if type(self) is not type(other):
            return NotImplemented
        mine, theirs = vars(self), vars(other)
        if mine.keys() != theirs.keys():
            return False
        for k, v in mine.items():
            o = theirs[k]
            if isinstance(v, np.ndarray) or isinstance(o, np.ndarray):
                if not np.array_equal(np.asarray(v, dtype=float), np.asarray(o, dtype=float)):
                    return False
            elif v != o:
                return False
        return True

    __hash__ = None


class Ball(Joint):
    """Ball-and-socket: the point ``anchor`` (world, at creation) of both bodies stays common;
    3 translational rows, rotation free."""

    kind = "ball"

    def __init__(self, a, b, anchor, **kw):
        super().__init__(a, b, **kw)
        self.anchor = anchor

    def validate(self, owner: str) -> None:
        super().validate(owner)
        self.anchor = _point(owner, "anchor", self.anchor)

    def _fields(self):
        return {"anchor": self.anchor}


class _Axial(Joint):
    """Hinge and slider: an anchor, an axis, optional limits and motor."""

    def __init__(self, a, b, anchor, axis, limits=None, motor: Motor | None = None, **kw):
        super().__init__(a, b, **kw)
        self.anchor = anchor
        self.axis = axis
        self.limits = limits
        self.motor = motor

    def validate(self, owner: str) -> None:
        super().validate(owner)
        self.anchor = _point(owner, "anchor", self.anchor)
        self.axis = _axis(owner, "axis", self.axis)
        if self.limits is not None:
            try:
                lo, hi = self.limits
            except (TypeError, ValueError):
                raise JointError(f"{owner}: field limits={self.limits!r} must be a pair (lower, upper)") from None
            if not (isinstance(lo, numbers.Real) and isinstance(hi, numbers.Real)) or math.isnan(lo) or math.isnan(hi):
                raise JointError(f"{owner}: field limits={self.limits!r} must be two numbers")
            if lo > hi:
                raise JointError(f"{owner}: field limits={self.limits!r} is reversed: lower {lo} > upper {hi}")
            if math.isinf(lo) and math.isinf(hi):
                self.limits = None
            else:
                self.limits = (float(lo), float(hi))
        if self.motor is not None:
            if not isinstance(self.motor, Motor):
                raise JointError(f"{owner}: field motor={self.motor!r} is not a tumble.Motor")
            self.motor.validate(owner)

    def _fields(self):
        return {"anchor": self.anchor, "axis": self.axis, "limits": self.limits, "motor": self.motor}


class Hinge(_Axial):
    """Revolute joint about ``axis`` through ``anchor``: 3 translational rows and 2 rotational rows
    keep the bodies' copies of the axis parallel. The angle (rad, right-handed about the axis, b
    relative to a, unwrapped across turns) is 0 at creation; ``limits=(lo, hi)`` [rad] and a
    ``motor`` act on it."""

    kind = "hinge"


class Slider(_Axial):
    """Prismatic joint: ``b``'s anchor moves along ``axis`` (fixed in ``a``) through ``anchor``, and
    the bodies do not rotate relative to each other; 2 + 3 rows. The translation (m, along the axis,
    b relative to a) is 0 at creation; ``limits`` [m] and a ``motor`` act on it."""

    kind = "slider"


class Distance(Joint):
    """Distance joint (001 eq. 8-11): the points ``anchor_a`` of a and ``anchor_b`` of b (world, at
    creation) stay ``length`` [m] apart (default: their distance at creation). With ``frequency``
    [Hz] it is a spring of that natural frequency and ``damping_ratio`` instead of a rigid rod."""

    kind = "distance"

    def __init__(self, a, b, anchor_a, anchor_b, length: float | None = None, *, frequency: float | None = None,
                 damping_ratio: float = 1.0, **kw):
        super().__init__(a, b, **kw)
        self.anchor_a = anchor_a
        self.anchor_b = anchor_b
        self.length = length
        self.frequency = frequency
        self.damping_ratio = damping_ratio

    def validate(self, owner: str) -> None:
        super().validate(owner)
        self.anchor_a = _point(owner, "anchor_a", self.anchor_a)
        self.anchor_b = _point(owner, "anchor_b", self.anchor_b)
        if self.length is None:
            self.length = float(np.linalg.norm(self.anchor_b - self.anchor_a))
        if not _finite(self.length) or self.length < 0:
            raise JointError(f"{owner}: field length={self.length!r} must be a finite number >= 0 [m]")
        if self.length < 1e-9:
            raise JointError(f"{owner}: field length={self.length!r} is zero; the direction of a distance joint is "
                             "undefined there -- use tumble.Ball for coincident points")
        if self.frequency is not None and (not _finite(self.frequency) or self.frequency <= 0):
            raise JointError(f"{owner}: field frequency={self.frequency!r} must be a finite number > 0 [Hz] or None")
        if not _finite(self.damping_ratio) or self.damping_ratio < 0:
            raise JointError(f"{owner}: field damping_ratio={self.damping_ratio!r} must be finite and >= 0")

    def _fields(self):
        return {"anchor_a": self.anchor_a, "anchor_b": self.anchor_b, "length": self.length,
                "frequency": self.frequency}


class Fixed(Joint):
    """Weld: no relative motion at all (3 translational + 3 rotational rows). ``anchor`` (world,
    default: b's centre of mass at creation) is where the reaction torque is measured and the
    translational rows act -- put it at the seam (a cantilever's root) for meaningful torques."""

    kind = "fixed"

    def __init__(self, a, b, anchor=None, **kw):
        super().__init__(a, b, **kw)
        self.anchor = anchor

    def validate(self, owner: str) -> None:
        super().validate(owner)
        if self.anchor is not None:
            self.anchor = _point(owner, "anchor", self.anchor)

    def _fields(self):
        return {"anchor": self.anchor}


JOINT_TYPES = (Ball, Hinge, Slider, Distance, Fixed)
