"""Planar bricks as bar-and-joint frameworks of point masses (paper 002, §2, §8.1, §8.4).

Coordinates in this package are planar: ``x`` horizontal, ``y`` up (the 2-D paper's convention;
tumble's 3-D worlds use Z up). Units SI: m, kg, s.

A brick is a rectangle of width ``w`` and height ``h``. Its mass is carried by point masses joined by
rigid bars (§2, Fig. 4). Two layouts:

* ``"corners4"``: four equal masses m/4 at the corners (the layout of the paper's animation, footnote
  3). Bars: the four edges and both diagonals (6 bars for 2*4 - 3 = 5 degrees of freedom: one redundant).
  This layout has the right mass and first moments but not the right second moments (a corner mass
  layout has x^2-moment m w^2 / 4 instead of the solid m w^2 / 12).
* ``"nine"``: the 3 x 3 grid of Fig. 10 (corners, edge midpoints, centre). A tensor product of the
  1-D three-point rule exact for 1, x, x^2 on [-w/2, w/2] (weights 1/6, 2/3, 1/6: Simpson's rule)
  gives corner masses m/36, edge-midpoint masses 4m/36 and the centre 16m/36, which reproduce the
  integrals of f = 1, x, y, x^2, xy, y^2 over the homogeneous rectangle (§8.1). Bars: the 12 grid
  edges and one diagonal per quarter, all from the centre to a corner (mirror symmetric), 16 bars for
  2*9 - 3 = 15 degrees of freedom: one redundant, as the paper notes.

Redundant bars (§8.4) are handled by ``bars=``:

* ``"remove"``: keep a minimally rigid subset (rank test on the rigidity matrix, bars taken greedily in
  order), all hard equality constraints;
* ``"penalty"``: the paper's §8.4 option: every bar becomes the penalty term
  M * (<p_i - p_j, p_i^l - p_j^l> - L0 * |p_i^l - p_j^l|)^2 of the objective (M = 100 by default);
* ``"penalty_redundant"``: the minimally rigid subset stays hard, only the redundant bars are
  penalised.

The first four points of every brick are its corners in counter-clockwise order; they form the convex
hull that the sidedness constraints (§2 (ii), §8.5) use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tumble.errors import SettingsError, ShapeError

LAYOUTS = ("corners4", "nine")
BAR_MODES = ("remove", "penalty", "penalty_redundant")


def brick_layout(layout: str, width: float, height: float, mass: float):
    """Local point positions (P, 2) [m], point masses (P,) [kg] and bars (B, 2) of one brick centred at
    the origin. The first four points are the corners, counter-clockwise from bottom-left."""
    if layout not in LAYOUTS:
        raise SettingsError(f"layout={layout!r}: expected one of {LAYOUTS}")
    hw, hh = 0.5 * width, 0.5 * height
    corners = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]])
    if layout == "corners4":
        masses = np.full(4, mass / 4.0)
        bars = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [0, 2], [1, 3]])
        return corners, masses, bars
    # corners 0-3, edge midpoints 4 (bottom), 5 (right), 6 (top), 7 (left), centre 8
    mids = np.array([[0.0, -hh], [hw, 0.0], [0.0, hh], [-hw, 0.0]])
    points = np.vstack([corners, mids, [[0.0, 0.0]]])
    masses = np.array([1, 1, 1, 1, 4, 4, 4, 4, 16], dtype=float) * (mass / 36.0)
    # grid edges: each corner to its two adjacent midpoints, each midpoint to the centre
    bars = np.array([[0, 4], [4, 1], [1, 5], [5, 2], [2, 6], [6, 3], [3, 7], [7, 0],
                     [4, 8], [5, 8], [6, 8], [7, 8],
                     [8, 0], [8, 1], [8, 2], [8, 3]])
    return points, masses, bars


def rigidity_matrix(points: np.ndarray, bars: np.ndarray) -> np.ndarray:
    """Rigidity matrix R (B, 2P): row of bar (i, j) is d/dp of |p_i - p_j|^2 / 2, i.e. (p_i - p_j) in
    the columns of i and -(p_i - p_j) in those of j. The framework is infinitesimally rigid in the
    plane iff rank R = 2P - 3."""
    rows = np.zeros((len(bars), 2 * len(points)))
    e = points[bars[:, 0]] - points[bars[:, 1]]
    r = np.arange(len(bars))
    for c in range(2):
        rows[r, 2 * bars[:, 0] + c] = e[:, c]
        rows[r, 2 * bars[:, 1] + c] = -e[:, c]
    return rows


def minimally_rigid_subset(points: np.ndarray, bars: np.ndarray) -> np.ndarray:
    """Boolean mask over ``bars``: a minimally rigid subset, taking bars in order and keeping a bar when
    it raises the rank of the rigidity matrix (§8.4, first option). Raises ShapeError if the whole
    framework is not rigid."""
    full = rigidity_matrix(points, bars)
    need = 2 * len(points) - 3
    scale = np.abs(full).max()
    if np.linalg.matrix_rank(full, tol=1e-9 * scale) < need:
        raise ShapeError(f"bars: the framework of {len(points)} points is not rigid")
    keep = np.zeros(len(bars), dtype=bool)
    rank = 0
    for b in range(len(bars)):
        keep[b] = True
        r = np.linalg.matrix_rank(full[keep], tol=1e-9 * scale)
        if r > rank:
            rank = r
        else:
            keep[b] = False
    return keep


@dataclass
class BrickSystem:
    """Point masses, bars and bodies of a planar brick scene.

    Dynamic bodies are bricks made of point masses; static bodies (ground, table) are convex
    quadrilaterals with fixed corners and no variables.
    """

    positions: np.ndarray  # (N, 2) initial point positions [m]
    masses: np.ndarray  # (N,) point masses [kg]
    bars: np.ndarray  # (B, 2) point indices
    rest_lengths: np.ndarray  # (B,) [m]
    bar_hard: np.ndarray  # (B,) bool: equality constraint (L'') / (L2*)
    bar_penalty: np.ndarray  # (B,) bool: penalty term (§8.4)
    body_points: np.ndarray  # (nb + 1,) CSR offsets: points of dynamic body b are body_points[b]:[b+1]
    hull_points: np.ndarray  # (nb, 4) point indices of the corners, counter-clockwise
    body_mass: np.ndarray  # (nb,) [kg]
    body_size: np.ndarray  # (nb, 2) width, height [m]
    static_hulls: np.ndarray  # (ns, 4, 2) corners of static bodies, counter-clockwise [m]
    layout: str = "corners4"
    bar_mode: str = "remove"
    penalty_weight: float = 100.0  # M of §8.4
    mirror_points: np.ndarray | None = field(default=None)  # (N,) point of the mirror image x -> -x

    @property
    def n_bodies(self) -> int:
        return len(self.hull_points)

    @property
    def point_body(self) -> np.ndarray:
        """(N,) dynamic body index of each point."""
        return np.repeat(np.arange(self.n_bodies), np.diff(self.body_points))

    def hulls(self, positions: np.ndarray) -> np.ndarray:
        """(nb + ns, 4, 2) corners of all bodies, dynamic first, at the given point positions."""
        return np.concatenate([positions[self.hull_points], self.static_hulls], axis=0)

    def body_centres(self, positions: np.ndarray) -> np.ndarray:
        """(nb, 2) centre of mass of each dynamic body [m]."""
        weighted = np.add.reduceat(positions * self.masses[:, None], self.body_points[:-1], axis=0)
        return weighted / self.body_mass[:, None]


def _check_positive(name: str, values) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        bad = arr[~(np.isfinite(arr) & (arr > 0))][0]
        raise ShapeError(f"{name}: every value must be finite and > 0, got {bad!r}")
    return arr


def box_corners(centre, width: float, height: float, angle: float = 0.0) -> np.ndarray:
    """(4, 2) corners of a rectangle, counter-clockwise from its bottom-left corner."""
    hw, hh = 0.5 * width, 0.5 * height
    local = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]])
    c, s = np.cos(angle), np.sin(angle)
    return local @ np.array([[c, s], [-s, c]]) + np.asarray(centre, dtype=float)


def build_bricks(centres, *, width=1.0, height=0.5, mass=1.0, angles=None, layout: str = "corners4",
                 bars: str = "remove", penalty_weight: float = 100.0, statics=(),
                 mirror: bool = False) -> BrickSystem:
    """Build a BrickSystem from brick centres (nb, 2) [m]; ``width``, ``height`` [m] and ``mass`` [kg]
    are scalars or per-brick arrays; ``angles`` [rad] optional; ``statics`` is a sequence of (4, 2)
    counter-clockwise corner arrays of fixed bodies. ``mirror=True`` records the point permutation of
    the mirror image x -> -x (the scene must be mirror symmetric; ShapeError otherwise)."""
    centres = np.asarray(centres, dtype=float)
    if centres.ndim != 2 or centres.shape[1] != 2 or len(centres) == 0:
        raise ShapeError(f"centres: expected shape (nb, 2) with nb >= 1, got {centres.shape}")
    if not np.all(np.isfinite(centres)):
        raise ShapeError("centres: every value must be finite")
    nb = len(centres)
    widths = _check_positive("width", np.broadcast_to(width, (nb,)))
    heights = _check_positive("height", np.broadcast_to(height, (nb,)))
    masses_b = _check_positive("mass", np.broadcast_to(mass, (nb,)))
    angles = np.zeros(nb) if angles is None else np.asarray(angles, dtype=float)
    if angles.shape != (nb,) or not np.all(np.isfinite(angles)):
        raise ShapeError(f"angles: expected {nb} finite values, got shape {angles.shape}")
    if bars not in BAR_MODES:
        raise SettingsError(f"bars={bars!r}: expected one of {BAR_MODES}")
    if not (np.isfinite(penalty_weight) and penalty_weight > 0):
        raise SettingsError(f"penalty_weight={penalty_weight!r}: must be finite and > 0")

    pos, pm, bar_list, hull, offsets, hard, pen = [], [], [], [], [0], [], []
    for b in range(nb):
        local, m, br = brick_layout(layout, widths[b], heights[b], masses_b[b])
        c, s = np.cos(angles[b]), np.sin(angles[b])
        world = local @ np.array([[c, s], [-s, c]]) + centres[b]
        keep = minimally_rigid_subset(local, br)
        base = offsets[-1]
        pos.append(world)
        pm.append(m)
        bar_list.append(br + base)
        hull.append(np.arange(4) + base)
        offsets.append(base + len(local))
        if bars == "remove":
            hard.append(keep)
            pen.append(np.zeros_like(keep))
        elif bars == "penalty":
            hard.append(np.zeros_like(keep))
            pen.append(np.ones_like(keep))
        else:
            hard.append(keep)
            pen.append(~keep)
    positions = np.vstack(pos)
    all_bars = np.vstack(bar_list)
    hard_mask = np.concatenate(hard)
    pen_mask = np.concatenate(pen)
    used = hard_mask | pen_mask
    all_bars = all_bars[used]
    rest = np.linalg.norm(positions[all_bars[:, 0]] - positions[all_bars[:, 1]], axis=1)
    statics_arr = np.asarray(statics, dtype=float).reshape(-1, 4, 2)
    system = BrickSystem(positions=positions, masses=np.concatenate(pm), bars=all_bars, rest_lengths=rest,
                         bar_hard=hard_mask[used], bar_penalty=pen_mask[used],
                         body_points=np.asarray(offsets), hull_points=np.vstack(hull), body_mass=masses_b.copy(),
                         body_size=np.stack([widths, heights], axis=1), static_hulls=statics_arr, layout=layout,
                         bar_mode=bars, penalty_weight=float(penalty_weight))
    if mirror:
        if np.any(angles != 0) or np.any(widths != widths[0]) or np.any(heights != heights[0]):
            raise ShapeError("mirror=True: needs unrotated bricks of one size")
        system.mirror_points = mirror_permutation(centres, layout, len(MIRROR_LOCAL[layout]))
    return system


MIRROR_LOCAL = {"corners4": np.array([1, 0, 3, 2]), "nine": np.array([1, 0, 3, 2, 4, 7, 6, 5, 8])}


def mirror_permutation(centres: np.ndarray, layout: str, points_per_body: int, tol: float = 1e-12) -> np.ndarray:
    """(N,) index of the point at the mirror image (-x, y) of each point: the mirror body (centres
    mirrored) and, inside it, the mirrored local point. ShapeError if the bricks are not symmetric."""
    mirrored = centres * np.array([-1.0, 1.0])
    d = np.linalg.norm(centres[None, :, :] - mirrored[:, None, :], axis=2)
    perm = np.argmin(d, axis=1)
    scale = max(1.0, np.abs(centres).max())
    if np.any(d[np.arange(len(perm)), perm] > tol * scale) or len(np.unique(perm)) != len(perm):
        raise ShapeError("mirror=True: the brick centres are not mirror symmetric about x = 0")
    return (perm[:, None] * points_per_body + MIRROR_LOCAL[layout][None, :]).ravel()
