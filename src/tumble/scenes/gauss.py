"""Scenes of paper 002 (Gauss' principle of least constraint, tower stability and collapse), as
3-D slabs: every scene runs under every solver; ``tb.stability`` answers whether each stands.

* ``bricks5x5``: the 5 x 5 brick tower of 002 Fig. 2 (unstable), here five courses of five bricks
  0.4 x 0.2 m (depth 0.2 m), each course shifted by ``shift`` to +x from the one below
  (unstable from 0.19 m).
* ``overhang``: the harmonic stack of 002 Fig. 1 (Paterson-Zwick's overhang question): ``count``
  bricks on a table edge, brick k from the top reaching ``shift`` L / (2k) beyond the one below.
* ``gauss_stack``: a column of boxes of alternating mass ratio resting exactly on each other.
"""

from __future__ import annotations

from tumble.materials import Material
from tumble.scenes.library import _ground, scene
from tumble.scenes.params import int_params, num_params
from tumble.scenes.spec import SceneSpec
from tumble.shapes import Box

#: 002's bricks (Fig. 2 and Fig. 11) as 3-D slabs: length L 0.4 m (x), height 0.2 m (z), depth 0.2 m (y)
BRICK_HALF = (0.2, 0.1, 0.1)
BRICK_MATERIAL = Material(density=2000.0, friction=0.6, restitution=0.0, name="brick-002")
#: the table of ``overhang``: a fixed slab 2 x 1 x 0.5 m whose top face is at z = 0.5 and right edge at x = 0
TABLE_HALF = (1.0, 0.5, 0.25)


@scene("bricks5x5", "paper 002 Fig. 2: 5 courses x 5 bricks (0.4x0.2x0.2 m slabs), each course shifted by shift "
                    "(unstable for the default 0.2 m)")
def bricks5x5(*, courses: int = 5, per_course: int = 5, shift: float = 0.2, gap: float = 0.002,
              friction: float = 0.6, seconds: float = 3.0) -> SceneSpec:
    """Course r (0 = bottom) holds ``per_course`` bricks side by side (``gap`` [m] between ends),
    centred at x = r shift, z = 0.1 + 0.2 r, so each course rests exactly on the one below and the
    tower leans out by ``shift`` per course (each brick bridges two bricks of the course below, the
    rightmost one rests on one brick and is weighed down inside by its neighbour from above).
    ``tb.stability`` (measured, K = 8 cone edges): stable up to shift 0.18 m, unstable from 0.19 m
    (the right-hand column's bricks tip before the top brick's centre passes its support at L/2);
    the default 0.2 m is unstable and ten bricks of the right-hand side start to move.
    ``shift=0`` is a stable wall of columns. Timeline: collapse from rest."""
    c, n = int_params("bricks5x5", courses=courses, per_course=per_course)
    sh, gp, mu = num_params("bricks5x5", lo=0.0, strict=False, shift=shift, gap=gap, friction=friction)
    (sec,) = num_params("bricks5x5", seconds=seconds)
    mat = BRICK_MATERIAL.with_(friction=mu)
    s = SceneSpec(name="", gravity=(0.0, 0.0, -9.81), dt=1.0 / 60.0, seconds=sec,
                  settings={"iterations": 20, "warm_start": True})
    _ground(s, mat)
    hx, _, hz = BRICK_HALF
    pitch = 2.0 * hx + gp
    brick = Box(BRICK_HALF)
    for r in range(c):
        for i in range(n):
            x = (i - 0.5 * (n - 1)) * pitch + r * sh
            s.add(brick, (x, 0.0, hz + 2.0 * hz * r), material=mat, name=f"brick{r}_{i}", tag="stack")
    return s


def overhang_offsets(count: int, shift: float, length: float = 2.0 * BRICK_HALF[0]) -> list[float]:
    """x of the centres of the ``count`` bricks, bottom first, over a table edge at x = 0: brick k from
    the top (k = 1..count) reaches ``shift`` L / (2k) beyond the brick below it (the table for
    k = count). With shift = 1 this is the harmonic stack, where the centre of mass of the top k
    bricks lies exactly over the edge of brick k + 1 (the critical overhang, 002 Fig. 1): any
    shift > 1 is unstable, any shift < 1 stable (with enough friction: none is needed, the forces
    are vertical)."""
    right = 0.0
    xs = []
    for k in range(count, 0, -1):                 # bottom (k = count) first
        right += shift * length / (2.0 * k)
        xs.append(right - 0.5 * length)
    return xs


@scene("overhang", "paper 002 Fig. 1: harmonic stack of count bricks over a table edge; shift > 1 topples it")
def overhang(*, count: int = 4, shift: float = 0.9, friction: float = 0.6, seconds: float = 3.0) -> SceneSpec:
    """A fixed table (tag "wall", 2 x 1 x 0.5 m, top at z = 0.5 m, right edge at x = 0) on the ground
    plane; ``count`` bricks 0.4 x 0.2 x 0.2 m (16 kg, mu ``friction``) stacked on it, resting
    exactly on each other, with the harmonic offsets of ``overhang_offsets`` scaled by ``shift``:
    total overhang shift L/2 H_count (H the harmonic number; 0.83 m for 4 bricks at shift 1).
    Stable for shift < 1 (default 0.9), unstable for shift > 1. Timeline: stands or topples."""
    (n,) = int_params("overhang", count=count)
    sh, sec = num_params("overhang", shift=shift, seconds=seconds)
    (mu,) = num_params("overhang", lo=0.0, strict=False, friction=friction)
    mat = BRICK_MATERIAL.with_(friction=mu)
    s = SceneSpec(name="", gravity=(0.0, 0.0, -9.81), dt=1.0 / 60.0, seconds=sec,
                  settings={"iterations": 20, "warm_start": True})
    _ground(s, mat)
    tx, _, tz = TABLE_HALF
    s.add(Box(TABLE_HALF), (-tx, 0.0, tz), fixed=True, material=mat, name="table", tag="wall")
    hz = BRICK_HALF[2]
    brick = Box(BRICK_HALF)
    for i, x in enumerate(overhang_offsets(n, sh)):
        s.add(brick, (x, 0.0, 2.0 * tz + hz + 2.0 * hz * i), material=mat, name=f"brick{i}", tag="stack")
    return s


@scene("gauss_stack", "column of count boxes 0.5 m, masses alternating 1 : ratio, resting exactly on each other")
def gauss_stack(*, count: int = 6, ratio: float = 10.0, size: float = 0.5, friction: float = 0.5,
                seconds: float = 3.0) -> SceneSpec:
    """``count`` cubes of edge ``size`` stacked bottom-up with no gap, the even ones (from the bottom)
    of 1000 kg/m^3 and the odd ones ``ratio`` times as dense (default 10: a 125 kg cube on a
    1250 kg one and so on), mu ``friction``. A stacked column at rest: each solver should keep it
    standing (gauss to micrometres: the QP holds every contact at zero gap)."""
    (n,) = int_params("gauss_stack", count=count)
    r, a, sec = num_params("gauss_stack", ratio=ratio, size=size, seconds=seconds)
    (mu,) = num_params("gauss_stack", lo=0.0, strict=False, friction=friction)
    mat = BRICK_MATERIAL.with_(density=1000.0, friction=mu, name="gauss-stack")
    s = SceneSpec(name="", gravity=(0.0, 0.0, -9.81), dt=1.0 / 60.0, seconds=sec,
                  settings={"iterations": 20, "warm_start": True})
    _ground(s, mat)
    h = 0.5 * a
    cube = Box((h, h, h))
    for i in range(n):
        rho = 1000.0 * (r if i % 2 else 1.0)
        s.add(cube, (0.0, 0.0, h + 2.0 * h * i), density=rho, material=mat, name=f"box{i}", tag="stack")
    return s
