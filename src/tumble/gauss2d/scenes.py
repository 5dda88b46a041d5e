"""Planar brick scenes of paper 002: the unstable 5 x 5 tower (Fig. 2) and harmonic overhang stacks (Fig. 1).

The ground is a static box with its top face at y = 0. Bricks are 1 m x 0.5 m, 1 kg unless told.
"""

from __future__ import annotations

import numpy as np

from tumble.errors import SceneError

from .model import BrickSystem, box_corners, build_bricks

GROUND_HALF_WIDTH = 1e3  # m


def ground(half_width: float = GROUND_HALF_WIDTH, depth: float = 1.0) -> np.ndarray:
    """Static ground box, top face at y = 0."""
    return box_corners((0.0, -0.5 * depth), 2 * half_width, depth)


def bricks5x5_centres(width: float = 1.0, height: float = 0.5, spread: float = 0.15) -> np.ndarray:
    """(25, 2) centres of the 5 x 5 tower: 5 layers of 5 bricks, mirror symmetric about x = 0.

    The exact geometry of the paper's Fig. 2 is not recoverable from its text; this construction keeps
    its stated properties (5 x 5 bricks, mirror symmetric, unstable). Layer r (r = 0 on the ground) has
    its bricks at x = k * pitch_r, k = -2..2, pitch_r = width * (1 + spread * r): the bottom layer is a
    closed row, each higher layer fans out, so the outer bricks of the upper layers overhang their
    supports and the tower cannot stand."""
    rows = []
    for r in range(5):
        pitch = width * (1.0 + spread * r)
        for k in range(-2, 3):
            rows.append((k * pitch, (r + 0.5) * height))
    return np.array(rows)


def bricks5x5(*, layout: str = "corners4", bars: str = "remove", spread: float = 0.15, width: float = 1.0,
              height: float = 0.5, mass: float = 1.0) -> BrickSystem:
    """The unstable 5 x 5 tower (Fig. 2, see bricks5x5_centres) on the ground, with mirror data."""
    if not (0.0 <= spread < 1.0):
        raise SceneError(f"bricks5x5: spread={spread!r} must be in [0, 1)")
    return build_bricks(bricks5x5_centres(width, height, spread), width=width, height=height, mass=mass,
                        layout=layout, bars=bars, statics=[ground()], mirror=True)


def overhang_centres(n: int, shift: float = 0.0, *, scale: float = 0.9, width: float = 1.0,
                     height: float = 0.5) -> np.ndarray:
    """(n, 2) centres of a harmonic stack on a table whose edge is at x = 0 (Fig. 1).

    Counting bricks from the top (k = 1 is the top brick), brick k sits scale * width / (2k) to the right
    of brick k + 1 (scale = 1 is the classic harmonic stack, where the centre of mass of the top k bricks
    lies exactly over the right edge of brick k + 1). With scale < 1 every such centre of mass lies
    (1 - scale) * width / 2 inside its supporting edge, and the stack is placed so the centre of mass of
    all n bricks lies the same distance inside the table edge. ``shift`` [m] then moves the top brick to
    the right: that moves the centre of mass of the top k bricks by shift / k, so the stack stays stable
    iff shift <= (1 - scale) * width / 2 (the binding level is k = 1, the top brick on brick 2)."""
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise SceneError(f"overhang: n={n!r} must be an integer >= 1")
    if not (0.0 < scale <= 1.0):
        raise SceneError(f"overhang: scale={scale!r} must be in (0, 1]")
    x = np.zeros(n)  # index 0 = top brick
    for k in range(1, n):
        x[k] = x[k - 1] - scale * width / (2 * k)
    com = x.mean()
    x += -(1.0 - scale) * width / 2 - com  # centre of mass of the stack inside the table edge
    x[0] += shift
    y = (n - 1 - np.arange(n) + 0.5) * height
    return np.stack([x, y], axis=1)


def critical_shift(scale: float = 0.9, width: float = 1.0) -> float:
    """Largest stable ``shift`` of overhang_centres (closed form, see there)."""
    return (1.0 - scale) * width / 2


def table(depth: float = 1.0, length: float = 50.0) -> np.ndarray:
    """Static table box with its top at y = 0 and its right edge at x = 0."""
    return box_corners((-0.5 * length, -0.5 * depth), length, depth)


def overhang(n: int, shift: float = 0.0, *, scale: float = 0.9, layout: str = "corners4", bars: str = "remove",
             width: float = 1.0, height: float = 0.5, mass: float = 1.0, with_floor: bool = True) -> BrickSystem:
    """Harmonic overhang stack of n bricks on a table (see overhang_centres); a floor 10 brick heights
    below the table top catches falling bricks."""
    statics = [table()]
    if with_floor:
        statics.append(box_corners((0.0, -10 * height - 0.5), 2 * GROUND_HALF_WIDTH, 1.0))
    return build_bricks(overhang_centres(n, shift, scale=scale, width=width, height=height), width=width,
                        height=height, mass=mass, layout=layout, bars=bars, statics=statics)


def grid_bricks(n: int, *, layout: str = "corners4", bars: str = "remove") -> BrickSystem:
    """n bricks in stacked columns of 10 (a wall with a running bond every other row) on the ground: a
    scalable stable scene for the time-per-QP benchmark."""
    cols = int(np.ceil(n / 10))
    centres = []
    for i in range(n):
        c, r = divmod(i, 10)
        centres.append((c * 1.0 + (0.0 if r % 2 == 0 else 0.0), (r + 0.5) * 0.5))
    return build_bricks(np.array(centres) - [0.5 * (cols - 1), 0.0], layout=layout, bars=bars, statics=[ground()])
