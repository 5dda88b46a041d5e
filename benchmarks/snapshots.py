"""Snapshots of scene states from a fixed camera, for putting engines side by side in one PNG.

    from benchmarks.snapshots import side_by_side
    side_by_side("tower.png", shapes, fixed, rows=[("tumble (shock)", [(pos0, quat0), ...]),
                                                   ("pybullet 3.2.7", [...])],
                 frame_labels=["t = 0 s", "t = 1 s", ...])

A *state* is ``(positions (n, 3) [m], orientations (n, 4) (w, x, y, z))`` over the bodies in spec
order; ``shapes`` are the spec's shapes (``tumble.shapes.Box``, ``Sphere``, ``Capsule``,
``ConvexHull``, ``Compound``, ``Plane``) and ``fixed`` says which bodies are static. Only the first
``min(len(positions), len(shapes))`` bodies are drawn, and ``hidden`` (a boolean mask) leaves out
bodies not present yet (spawned later in a run).

Drawing is matplotlib only (Agg backend, ``mplot3d`` axes with an orthographic camera and equal
scale on every axis, one depth-sorted ``Poly3DCollection`` for all bodies): boxes as their 6 faces,
spheres as one 12-gon disc facing the camera (their exact silhouette in an orthographic view),
capsules as octagonal prisms, hulls as their Qhull triangles.
Faces are flat-shaded by a fixed light; static bodies are drawn grey and translucent, a plane as a
grey patch under everything. Every panel of a figure uses the same bounds and camera, so the same
frame from different engines can be compared directly. About 1000 bodies render in well under a
second per panel.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

import numpy as np

#: Default camera: elevation and azimuth [deg] of ``Axes3D.view_init``.
ELEV = 20.0
AZIM = -60.0
#: Direction towards the light (world frame), for the flat shading.
LIGHT = np.array([0.4, -0.5, 0.8]) / np.linalg.norm([0.4, -0.5, 0.8])

_BOX_CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
# corner index = 4 * (sx > 0) + 2 * (sy > 0) + (sz > 0); faces listed counter-clockwise from outside
_BOX_FACES = np.array([[0, 1, 3, 2], [4, 6, 7, 5],      # -x, +x
                       [0, 4, 5, 1], [2, 3, 7, 6],      # -y, +y
                       [0, 2, 6, 4], [1, 5, 7, 3]])     # -z, +z


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (n, 3, 3) of unit quaternions (n, 4) ordered (w, x, y, z)."""
    q = np.asarray(q, dtype=float).reshape(-1, 4)
    q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-300)
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=-1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=-1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1),
    ], axis=1)


def _prism(radius: float, half_length: float, sides: int = 8) -> np.ndarray:
    """Side quads of a ``sides``-gonal prism along local z, padded caps as quads (fan of the cap)."""
    a = np.linspace(0.0, 2.0 * math.pi, sides + 1)
    ring = np.stack([radius * np.cos(a), radius * np.sin(a)], axis=1)
    polys = []
    for i in range(sides):
        (x0, y0), (x1, y1) = ring[i], ring[i + 1]
        polys.append([[x0, y0, -half_length], [x1, y1, -half_length], [x1, y1, half_length], [x0, y0, half_length]])
        for zc in (-half_length, half_length):      # caps as degenerate quads (triangle fans)
            polys.append([[0.0, 0.0, zc], [x0, y0, zc], [x1, y1, zc], [x1, y1, zc]])
    return np.array(polys)


def _local_polys(shape) -> np.ndarray | None:
    """Polygons (k, 4, 3) of ``shape`` in its body frame; None for planes and unknown shapes."""
    from tumble.shapes import Box, Capsule, Compound, ConvexHull, Sphere

    if isinstance(shape, Box):
        c = _BOX_CORNERS * np.asarray(shape.half_extents, dtype=float)
        return c[_BOX_FACES]
    if isinstance(shape, Sphere):                       # drawn as a disc facing the camera instead
        return None
    if isinstance(shape, Capsule):
        return _prism(float(shape.radius), float(shape.half_length) + float(shape.radius))
    if isinstance(shape, ConvexHull):
        from scipy.spatial import ConvexHull as QHull

        v = np.asarray(shape.data.vertices, dtype=float)
        tri = v[QHull(v).simplices]
        return np.concatenate([tri, tri[:, 2:3]], axis=1)       # triangles as degenerate quads
    if isinstance(shape, Compound):
        com = np.asarray(shape.centroid, dtype=float)
        parts = []
        for child, pos, quat in shape.children:
            p = _local_polys(child)
            if p is not None:
                parts.append(p @ quat_to_matrix(quat)[0].T + (np.asarray(pos, dtype=float) - com))
        return np.concatenate(parts) if parts else None
    return None


def view_direction(elev: float = ELEV, azim: float = AZIM) -> np.ndarray:
    """Unit vector from the scene towards the camera of ``Axes3D.view_init(elev, azim)``."""
    e, a = math.radians(elev), math.radians(azim)
    return np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])


def _disc(view: np.ndarray, sides: int = 12) -> np.ndarray:
    """Unit disc (sides, 3) facing ``view``: the silhouette of a unit sphere in an orthographic view."""
    t1 = np.cross(view, [0.0, 0.0, 1.0] if abs(view[2]) < 0.9 else [1.0, 0.0, 0.0])
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(view, t1)
    a = np.linspace(0.0, 2.0 * math.pi, sides, endpoint=False)
    return np.cos(a)[:, None] * t1 + np.sin(a)[:, None] * t2


def body_polygons(shapes: Sequence, positions, orientations, hidden=None, *, view=None):
    """World polygons of every drawn non-plane body: ``(polys, owner, shade)`` with ``polys`` a list
    of (k, 3) arrays, ``owner`` (m,) the body index of each and ``shade`` (m,) its brightness factor.

    Spheres become one disc facing ``view`` (default: the default camera), i.e. their exact
    orthographic silhouette; the other shapes their faces, flat-shaded by ``LIGHT``."""
    from tumble.shapes import Sphere

    view = view_direction() if view is None else np.asarray(view, dtype=float)
    pos = np.asarray(positions, dtype=float).reshape(-1, 3)
    R = quat_to_matrix(orientations)
    n = min(len(pos), len(shapes))
    cache: dict[int, np.ndarray | None] = {}
    quads, q_owner, discs, d_owner = [], [], [], []
    disc = _disc(view)
    for i in range(n):
        if hidden is not None and i < len(hidden) and hidden[i]:
            continue
        if not np.all(np.isfinite(pos[i])):
            continue
        s = shapes[i]
        if isinstance(s, Sphere):
            discs.append(disc * float(s.radius) + pos[i])
            d_owner.append(i)
            continue
        key = id(s)
        if key not in cache:
            cache[key] = _local_polys(s)
        lp = cache[key]
        if lp is None:
            continue
        quads.append(lp @ R[i].T + pos[i])
        q_owner.append(np.full(len(lp), i))
    q = np.concatenate(quads) if quads else np.zeros((0, 4, 3))
    shade = _shade_factor(q) if len(q) else np.zeros(0)
    polys = list(q) + discs
    owner = np.concatenate(q_owner + [np.asarray(d_owner, dtype=np.int64)]) if (quads or discs) else \
        np.zeros(0, dtype=np.int64)
    shade = np.concatenate([shade, np.full(len(discs), 0.9)])
    return polys, owner.astype(np.int64), shade


def _shade_factor(polys: np.ndarray) -> np.ndarray:
    """Flat shading factor 0.45 + 0.55 |n . light| of quads (m, 4, 3) (first triangle, or the
    second where the first is degenerate)."""
    n = np.cross(polys[:, 1] - polys[:, 0], polys[:, 2] - polys[:, 0])
    n2 = np.cross(polys[:, 2] - polys[:, 0], polys[:, 3] - polys[:, 0])
    n = np.where(np.linalg.norm(n, axis=1, keepdims=True) > 1e-12 * np.linalg.norm(n2, axis=1, keepdims=True),
                 n, n2)
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    return 0.45 + 0.55 * np.clip(np.abs(n @ LIGHT), 0.0, 1.0)


def scene_bounds(shapes: Sequence, states: Sequence, margin: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned bounds (lo (3,), hi (3,)) [m] around the non-plane bodies of the first state,
    grown to hold the bodies of the other states (within twice the first extent), plus ``margin``
    of the extent on every side."""
    def extent(state):
        pos = np.asarray(state[0], dtype=float).reshape(-1, 3)
        polys, _, _ = body_polygons(shapes, pos, state[1])
        if len(polys) == 0:
            return None
        pts = np.concatenate(polys)
        return pts.min(axis=0), pts.max(axis=0)

    states = [s for s in states if s is not None]
    first = extent(states[0]) if states else None
    if first is None:
        return np.array([-1.0, -1.0, 0.0]), np.array([1.0, 1.0, 1.0])
    lo0, hi0 = first
    size0 = np.maximum(hi0 - lo0, 1e-3)
    lo, hi = lo0.copy(), hi0.copy()
    for s in states[1:]:
        e = extent(s)
        if e is not None:
            lo = np.minimum(lo, np.maximum(e[0], lo0 - size0))
            hi = np.maximum(hi, np.minimum(e[1], hi0 + size0))
    size = np.maximum(hi - lo, 1e-3)
    pad = margin * float(size.max())
    return lo - pad, hi + pad


def _body_colors(shapes: Sequence, fixed, n: int, colors=None) -> np.ndarray:
    """RGBA (n, 4): ``colors`` if given, else the dynamic bodies in a colormap by index, static grey."""
    import matplotlib

    if colors is not None:
        c = np.asarray(matplotlib.colors.to_rgba_array(colors), dtype=float)
        return np.broadcast_to(c, (n, 4)).copy() if len(c) == 1 else c[:n].copy()
    cmap = matplotlib.colormaps["viridis"]
    out = np.array(cmap(np.linspace(0.15, 0.95, max(n, 1))))[:n]
    if fixed is not None:
        f = np.zeros(n, dtype=bool)
        fx = np.asarray(fixed, dtype=bool)[:n]
        f[: len(fx)] = fx
        out[f] = (0.55, 0.55, 0.55, 0.3)
    return out


def draw_state(ax, shapes: Sequence, positions, orientations, *, fixed=None, hidden=None, bounds=None,
               colors=None, elev: float = ELEV, azim: float = AZIM, ground: bool = True, edges: bool = True,
               zoom: float = 1.1) -> None:
    """Draw one state into the 3D axes ``ax`` (orthographic, equal scale, axes hidden; ``zoom`` as in
    ``Axes3D.set_box_aspect``)."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    from tumble.shapes import Plane

    if bounds is None:
        bounds = scene_bounds(shapes, [(positions, orientations)])
    lo, hi = (np.asarray(b, dtype=float) for b in bounds)
    pos = np.asarray(positions, dtype=float).reshape(-1, 3)
    n = min(len(pos), len(shapes))
    ax.set_proj_type("ortho")
    ax.view_init(elev=elev, azim=azim)
    ax.computed_zorder = False
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_zlim(lo[2], hi[2])
    ax.set_box_aspect(tuple(np.maximum(hi - lo, 1e-6)), zoom=zoom)
    ax.set_axis_off()
    if ground:
        R = quat_to_matrix(orientations)
        for i in range(n):
            if isinstance(shapes[i], Plane) and not (hidden is not None and i < len(hidden) and hidden[i]):
                nrm = R[i] @ np.asarray(shapes[i].normal, dtype=float)
                c = 0.5 * (lo + hi)
                c = c - np.dot(c - pos[i], nrm) * nrm               # bounds centre on the plane
                t1 = np.cross(nrm, [0.0, 0.0, 1.0] if abs(nrm[2]) < 0.9 else [1.0, 0.0, 0.0])
                t1 /= np.linalg.norm(t1)
                t2 = np.cross(nrm, t1)
                h = 0.5 * float(np.max(hi - lo))
                quad = np.array([c + h * (a * t1 + b * t2) for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
                ax.add_collection3d(Poly3DCollection([quad], facecolors=[(0.86, 0.86, 0.84, 1.0)],
                                                     edgecolors="none", zorder=0))
    polys, owner, shade = body_polygons(shapes, pos, orientations, hidden, view=view_direction(elev, azim))
    if len(polys):
        fc = _body_colors(shapes, fixed, n, colors)[owner]
        fc[:, :3] *= shade[:, None]
        col = Poly3DCollection(polys, facecolors=fc, zorder=1,
                               edgecolors=(0.1, 0.1, 0.1, 0.35) if edges else "none",
                               linewidths=0.2 if edges else 0.0)
        ax.add_collection3d(col)


def render_state(shapes: Sequence, positions, orientations, *, bounds=None, size=(400, 400), dpi: int = 100, **kw):
    """A one-panel figure of one state filling the figure: returns ``(fig, ax)`` (Agg canvas).

    The axes fill the whole figure, the background is white; ``kw`` go to :func:`draw_state`."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi, facecolor="white")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0), projection="3d", facecolor="white")
    draw_state(ax, shapes, positions, orientations, bounds=bounds, **kw)
    return fig, ax


def figure_pixels(fig) -> np.ndarray:
    """The RGB image (H, W, 3) uint8 of an Agg figure (drawn now)."""
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[:, :, :3].copy()


def project_to_pixels(fig, ax, points) -> np.ndarray:
    """Image coordinates (m, 2) = (column, row from the top) [px] of world points (m, 3) in ``ax``.

    Uses the axes' own projection after a draw, so it matches what :func:`figure_pixels` shows."""
    from mpl_toolkits.mplot3d import proj3d

    fig.canvas.draw()
    p = np.asarray(points, dtype=float).reshape(-1, 3)
    x, y, _ = proj3d.proj_transform(p[:, 0], p[:, 1], p[:, 2], ax.get_proj())
    disp = ax.transData.transform(np.column_stack([x, y]))
    height = fig.canvas.get_width_height()[1]
    return np.column_stack([disp[:, 0], height - disp[:, 1]])


def side_by_side(path, shapes: Sequence, fixed, rows: Sequence, frame_labels: Sequence[str], *,
                 hidden: Sequence | None = None, title: str | None = None, bounds=None,
                 panel_inches: float = 3.0, dpi: int = 100, elev: float = ELEV, azim: float = AZIM) -> str:
    """Write a PNG grid: one row per engine, one column per frame, same camera and bounds everywhere.

    ``rows``: ``[(label, [state or None per frame]), ...]`` with ``state = (positions, orientations)``
    (None draws an empty panel, e.g. an engine that failed); ``hidden``: per frame, a boolean mask of
    bodies not present yet (or None). Returns ``path``."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ncols = len(frame_labels)
    nrows = len(rows)
    head = 0.7 if title else 0.35                       # inches above the panels
    if bounds is None:
        all_states = [s for _, states in rows for s in states if s is not None]
        bounds = scene_bounds(shapes, all_states)
    fig = Figure(figsize=(panel_inches * ncols + 1.2, panel_inches * nrows + head), dpi=dpi, facecolor="white")
    FigureCanvasAgg(fig)
    left = 1.2 / (panel_inches * ncols + 1.2)
    top = 1.0 - head / fig.get_figheight()
    for r, (label, states) in enumerate(rows):
        for c in range(ncols):
            w = (1.0 - left) / ncols
            h = top / nrows
            ax = fig.add_axes((left + c * w, top - (r + 1) * h, w, h), projection="3d")
            st = states[c] if c < len(states) else None
            if st is None:
                ax.set_axis_off()
                ax.text2D(0.5, 0.5, "n/a", transform=ax.transAxes, ha="center", va="center", color="0.5")
            else:
                hid = hidden[c] if hidden is not None and c < len(hidden) else None
                draw_state(ax, shapes, st[0], st[1], fixed=fixed, hidden=hid, bounds=bounds, elev=elev, azim=azim)
            if r == 0:
                ax.set_title(frame_labels[c], fontsize=9)
        text = "\n".join(textwrap.fill(part, 20) for part in str(label).split("\n"))
        fig.text(0.005, top - (r + 0.5) * (top / nrows), text, fontsize=8, va="center", ha="left")
    if title:
        fig.text(0.5, 1.0 - 0.12 / fig.get_figheight(), title, fontsize=10, ha="center", va="top")
    fig.savefig(path, dpi=dpi, facecolor="white")
    return str(path)
