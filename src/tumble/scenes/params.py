"""Checks of scene parameters shared by the scene modules: each returns the values converted, or
raises :class:`SceneError` naming the scene, the parameter and its value."""

from __future__ import annotations

import math

import numpy as np

from tumble.errors import SceneError


def int_params(scene_name: str, lo: int = 1, **params) -> list[int]:
    """The parameters as ints; SceneError unless each is an integer >= lo (bools are refused)."""
    out = []
    for k, v in params.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < lo:
            raise SceneError(f"scene {scene_name!r}: parameter {k}={v!r} must be an integer >= {lo}")
        out.append(int(v))
    return out


def num_params(scene_name: str, lo: float | None = 0.0, strict: bool = True, **params) -> list[float]:
    """The parameters as floats; SceneError unless each is finite and > lo (>= lo if not strict;
    any finite value if lo is None)."""
    out = []
    for k, v in params.items():
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise SceneError(f"scene {scene_name!r}: parameter {k}={v!r} is not a number") from None
        bad = not math.isfinite(x) or (lo is not None and (x <= lo if strict else x < lo))
        if bad:
            cond = "finite" if lo is None else f"finite and {'>' if strict else '>='} {lo}"
            raise SceneError(f"scene {scene_name!r}: parameter {k}={v!r} must be {cond}")
        out.append(x)
    return out
