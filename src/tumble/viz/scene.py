"""The numeric side of the renderer: what a recording's geoms are, where they are in a frame, which
colour they get, and the boxes the camera and the shadow map are fitted to. Pure NumPy, no OpenGL.

Geom world pose (the engine's ``update_geoms``): position p = x_b + R(q_b) p_local, orientation
q = q_b q_local (Hamilton product, (w, x, y, z)), where (x_b, q_b) is the body's pose in the frame.
Per-frame work is vectorised over all geoms of a kind (no Python loop over bodies).

Instance record (float32, 14 per geom): position (3) [m], orientation (4), scale (4: sx, sy, sz,
half_length; see :mod:`tumble.viz.meshes`), colour (3, linear RGB in [0, 1]).
"""

from __future__ import annotations

import colorsys
import math

import numpy as np

from tumble.errors import SettingsError

PLANE, SPHERE, CAPSULE, BOX, HULL = 0, 1, 2, 3, 4
KINDS = {"sphere": SPHERE, "capsule": CAPSULE, "box": BOX}
COLOR_BY = ("body", "speed", "sleeping")

#: per-body palette (sRGB): muted Tableau-like hues, fixed bodies get FIXED_GREY
PALETTE_SRGB = np.array([
    (0.894, 0.341, 0.349),  # red
    (0.306, 0.475, 0.655),  # blue
    (0.949, 0.557, 0.169),  # orange
    (0.463, 0.718, 0.698),  # teal
    (0.349, 0.631, 0.310),  # green
    (0.929, 0.788, 0.282),  # yellow
    (0.690, 0.478, 0.631),  # purple
    (1.000, 0.616, 0.655),  # pink
    (0.612, 0.459, 0.373),  # brown
    (0.537, 0.667, 0.835),  # light blue
])
FIXED_GREY_SRGB = (0.62, 0.62, 0.64)
AWAKE_SRGB = (0.949, 0.557, 0.169)
ASLEEP_SRGB = (0.55, 0.62, 0.74)


def srgb_to_linear(c) -> np.ndarray:
    """sRGB in [0, 1] -> linear (gamma 2.2 approximation; the shaders encode with 1/2.2)."""
    return np.power(np.clip(np.asarray(c, np.float64), 0.0, 1.0), 2.2)


def body_palette(n: int) -> np.ndarray:
    """(n, 3) sRGB colours, one per body id, stable across runs and frames: the palette entry is a hash
    of the id (so rows and courses of bodies built in order do not line up into stripes), never the
    entry of the previous id, with a small hashed lightness variation."""
    ids = np.arange(n, dtype=np.uint64)
    h = (ids * np.uint64(2654435761) + np.uint64(12345)) % np.uint64(4294967296)
    idx = ((h >> np.uint64(7)) % np.uint64(len(PALETTE_SRGB))).astype(np.int64)
    light = (h % np.uint64(1000)).astype(np.float64) / 1000.0
    out = np.empty((n, 3))
    for i in range(n):  # once per render, not per frame
        if i and idx[i] == idx[i - 1]:
            idx[i] = (idx[i] + 1) % len(PALETTE_SRGB)
        hh, ll, ss = colorsys.rgb_to_hls(*PALETTE_SRGB[idx[i]])
        out[i] = colorsys.hls_to_rgb(hh, min(0.9, ll * (0.88 + 0.22 * light[i])), ss)
    return out


_VIRIDIS: np.ndarray | None = None


def viridis(x: np.ndarray) -> np.ndarray:
    """matplotlib's viridis colormap (sRGB, (n, 3)) at ``x`` in [0, 1] (clipped), from a 256-entry table."""
    global _VIRIDIS
    if _VIRIDIS is None:
        from matplotlib import colormaps

        _VIRIDIS = np.asarray(colormaps["viridis"](np.linspace(0.0, 1.0, 256))[:, :3], np.float64)
    i = np.clip(np.asarray(x, np.float64), 0.0, 1.0) * 255.0
    lo = np.floor(i).astype(np.int64)
    hi = np.minimum(lo + 1, 255)
    t = (i - lo)[..., None]
    return _VIRIDIS[lo] * (1.0 - t) + _VIRIDIS[hi] * t


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a b of (n, 4) quaternions (w, x, y, z)."""
    aw, ax, ay, az = a[:, 0], a[:, 1], a[:, 2], a[:, 3]
    bw, bx, by, bz = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], axis=1)


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate (n, 3) vectors by (n, 4) unit quaternions: v + 2 u x (u x v + w v), u = (x, y, z)."""
    u = q[:, 1:4]
    return v + 2.0 * np.cross(u, np.cross(u, v) + q[:, :1] * v)


def quat_to_matrix(q) -> np.ndarray:
    w, x, y, z = np.asarray(q, np.float64)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def nice_number(x: float) -> float:
    """The number of the form {1, 2, 5} x 10^k nearest to ``x`` > 0 on a log scale."""
    k = math.floor(math.log10(x))
    best = min((abs(math.log10(x / (m * 10.0 ** e))), m * 10.0 ** e) for e in (k - 1, k, k + 1) for m in (1, 2, 5))
    return best[1]


class SceneData:
    """Everything the renderer needs from a recording, prepared once: geoms grouped by kind, per-body
    colours (or the data to colour by speed / sleeping), bounds, and per-frame instance arrays."""

    def __init__(self, rec, color_by: str = "body", body_colors=None, hide_fixed: bool = False):
        if color_by not in COLOR_BY:
            raise SettingsError(f"render: field color_by={color_by!r} is not one of {', '.join(COLOR_BY)}")
        self.rec = rec
        self.color_by = color_by
        a = rec.arrays
        self.n_bodies = rec.body_count
        self.alive = rec.alive()      # (F, N): spawned and not removed
        self.fixed = np.asarray(a["body_fixed"], bool)
        gt = np.asarray(a["geom_type"], np.int64)
        gb = np.asarray(a["geom_body"], np.int64)
        size = np.asarray(a["geom_size"], np.float64)
        lp = np.asarray(a["geom_local_position"], np.float64)
        lq = np.asarray(a["geom_local_orientation"], np.float64)
        lq = lq / np.maximum(np.linalg.norm(lq, axis=1, keepdims=True), 1e-300)
        self.geom_type, self.geom_body, self.geom_size = gt, gb, size
        self.local_pos, self.local_quat = lp, lq

        # scale (sx, sy, sz, half_length) of every geom (see tumble.viz.meshes)
        scale = np.zeros((len(gt), 4))
        scale[gt == SPHERE, :3] = size[gt == SPHERE, :1]
        scale[gt == CAPSULE, :3] = size[gt == CAPSULE, :1]
        scale[gt == CAPSULE, 3] = size[gt == CAPSULE, 1]
        scale[gt == BOX, :3] = size[gt == BOX]
        self.scale = scale

        # bounding radius of every geom about its own origin and of every body about its origin
        grad = np.zeros(len(gt))
        grad[gt == SPHERE] = size[gt == SPHERE, 0]
        grad[gt == CAPSULE] = size[gt == CAPSULE, 0] + size[gt == CAPSULE, 1]
        grad[gt == BOX] = np.linalg.norm(size[gt == BOX], axis=1)
        self.hull_ids = np.asarray(a["geom_hull"], np.int64)
        for g in np.flatnonzero(gt == HULL):
            v, _ = rec.hull(int(self.hull_ids[g]))
            grad[g] = float(np.linalg.norm(v, axis=1).max()) if len(v) else 0.0
        self.geom_radius = grad
        solid = gt != PLANE
        self.body_radius = np.zeros(self.n_bodies)
        np.maximum.at(self.body_radius, gb[solid], np.linalg.norm(lp[solid], axis=1) + grad[solid])
        self.body_solid = np.zeros(self.n_bodies, bool)
        self.body_solid[gb[solid]] = True
        # typical body size [m]: median diameter of the solid bodies (contact markers, checker cells)
        radii = self.body_radius[self.body_solid & ~self.fixed]
        if not len(radii):
            radii = self.body_radius[self.body_solid]
        self.typical_size = float(np.median(2.0 * radii)) if len(radii) else 1.0
        self.typical_size = max(self.typical_size, 1e-3)

        # geoms drawn: every one, except the fixed bodies' solids when hide_fixed (planes always stay)
        self.drawn = np.ones(len(gt), bool)
        if hide_fixed:
            self.drawn &= ~(self.fixed[gb] & (gt != PLANE))
        self.kind_geoms = {k: np.flatnonzero((gt == t) & self.drawn) for k, t in KINDS.items()}
        self.hull_geoms = np.flatnonzero((gt == HULL) & self.drawn)
        self.plane_geoms = np.flatnonzero(gt == PLANE)

        # colours
        self.base_colors = np.empty((self.n_bodies, 3))
        if color_by == "body":
            self.base_colors[:] = body_palette(self.n_bodies)
        elif color_by == "sleeping":
            self.base_colors[:] = AWAKE_SRGB
        self.base_colors[self.fixed] = FIXED_GREY_SRGB
        self.override = np.zeros(self.n_bodies, bool)
        if body_colors is not None:
            self._apply_overrides(body_colors)
        self.base_linear = srgb_to_linear(self.base_colors)
        self.speed_max = self._speed_scale() if color_by == "speed" else 0.0

        # elastic bodies (recording.ELASTIC_SCHEMA): surface triangles, colours after the rigid bodies' palette
        self.elastic_count = rec.elastic_body_count
        if self.elastic_count:
            self.elastic_triangles = np.asarray(a["elastic_triangles"], np.int64)
            self.elastic_triangle_body = np.asarray(a["elastic_triangle_body"], np.int64)
            self.elastic_colors = body_palette(self.n_bodies + self.elastic_count)[self.n_bodies:]
            self.elastic_linear = srgb_to_linear(self.elastic_colors)

        self.bounds_all, self.bounds_start = self._bounds()
        if self.elastic_count:
            self.bounds_all, self.bounds_start = (self._join_elastic(b) for b in (self.bounds_all, self.bounds_start))

    def _join_elastic(self, box):
        """``box`` (lo, hi) grown to hold the elastic vertices of every frame (or replaced by them when the
        recording has no solid rigid body)."""
        a = self.rec.arrays
        x = a["frame_elastic_position"]
        live = np.arange(x.shape[1])[None, :] < a["frame_elastic_vertex_count"][:, None]
        pts = x[live]
        if not len(pts):
            return box
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        if not (self.geom_type != PLANE).any():
            return lo, hi
        return np.minimum(box[0], lo), np.maximum(box[1], hi)

    def elastic_soup(self, f: int) -> np.ndarray:
        """(3t, 7) float32 flat-shaded triangle soup of the elastic surfaces in frame ``f``: position, face
        normal, slot (the elastic body); triangles of bodies not yet in the frame are collapsed to a point."""
        a = self.rec.arrays
        x = a["frame_elastic_position"][f]
        t = self.elastic_triangles
        p = x[t]  # (t, 3, 3)
        n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
        n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)
        out = np.empty((len(t), 3, 7), np.float32)
        out[:, :, :3] = p
        out[:, :, 3:6] = n[:, None, :]
        out[:, :, 6] = self.elastic_triangle_body[:, None]
        absent = t.max(axis=1) >= a["frame_elastic_vertex_count"][f]
        out[absent, :, :3] = 0.0
        return out.reshape(-1, 7)

    def elastic_texels(self) -> np.ndarray:
        """(e, 3, 4) float32 per elastic body: identity pose (the soup is in world coordinates), colour."""
        t = np.zeros((self.elastic_count, 3, 4), np.float32)
        t[:, 0, 3] = 1.0
        t[:, 1, 0] = 1.0
        t[:, 2, :3], t[:, 2, 3] = self.elastic_linear, 1.0
        return t

    # ------------------------------------------------------------------ colours
    def _apply_overrides(self, body_colors):
        items = body_colors.items() if isinstance(body_colors, dict) else enumerate(body_colors)
        for b, c in items:
            if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or not 0 <= b < self.n_bodies:
                raise SettingsError(f"render: body_colors names body {b!r}, but the recording has bodies "
                                    f"0..{self.n_bodies - 1}")
            try:
                rgb = np.asarray(c, np.float64).reshape(3)
            except (TypeError, ValueError):
                raise SettingsError(f"render: body_colors[{b}]={c!r} is not an RGB triple") from None
            if not np.all(np.isfinite(rgb)) or rgb.min() < 0:
                raise SettingsError(f"render: body_colors[{b}]={c!r} must be RGB in [0, 1] or [0, 255]")
            if rgb.max() > 1.0:
                rgb = rgb / 255.0
            self.base_colors[b] = np.clip(rgb, 0.0, 1.0)
            self.override[b] = True

    def _sample_frames(self, limit: int = 120) -> np.ndarray:
        f = self.rec.frame_count
        return np.unique(np.linspace(0, f - 1, min(f, limit)).round().astype(np.int64))

    def _speed_scale(self) -> float:
        """Speed [m/s] mapped to the top of the colormap: the 99th percentile of |v| of the live dynamic
        bodies over (up to 120 evenly spread) frames, at least 1e-3 m/s."""
        a = self.rec.arrays
        fr = self._sample_frames()
        v = np.linalg.norm(a["frame_linear_velocity"][fr], axis=2)
        live = self.alive[fr] & ~self.fixed[None, :]
        s = v[live]
        return max(float(np.percentile(s, 99.0)) if s.size else 0.0, 1e-3)

    def colors(self, f: int) -> np.ndarray:
        """(N, 3) float32 linear RGB of every body in frame ``f``."""
        if self.color_by == "body":
            return self.base_linear
        a = self.rec.arrays
        if self.color_by == "speed":
            v = np.linalg.norm(a["frame_linear_velocity"][f], axis=1)
            c = srgb_to_linear(viridis(v / self.speed_max))
        else:
            c = np.where(np.asarray(a["frame_sleeping"][f], bool)[:, None], srgb_to_linear(ASLEEP_SRGB),
                         srgb_to_linear(AWAKE_SRGB))
        keep = self.fixed | self.override
        c[keep] = self.base_linear[keep]
        return c

    # ------------------------------------------------------------------ bounds
    def geom_extents(self, f: np.ndarray, geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """World centres (k, m, 3), AABB half extents (k, m, 3) [m] and liveness (k, m) of ``geoms`` in the
        frames ``f`` (k,): sphere r; capsule |R e_z| h + r; box sum_j |R e_j| h_j; hull its bounding radius."""
        a = self.rec.arrays
        b = self.geom_body[geoms]
        qb = a["frame_orientation"][f][:, b].reshape(-1, 4)
        k, m = len(f), len(geoms)
        lp = np.broadcast_to(self.local_pos[geoms], (k, m, 3)).reshape(-1, 3)
        lq = np.broadcast_to(self.local_quat[geoms], (k, m, 4)).reshape(-1, 4)
        pos = a["frame_position"][f][:, b].reshape(-1, 3) + quat_rotate(qb, lp)
        q = quat_mul(qb, lq)
        w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
        R = np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                      np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                      np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], 1)
        t = np.broadcast_to(self.geom_type[geoms], (k, m)).reshape(-1)
        size = np.broadcast_to(self.geom_size[geoms], (k, m, 3)).reshape(-1, 3)
        half = np.broadcast_to(self.geom_radius[geoms][:, None], (k, m, 3)).reshape(-1, 3).copy()
        box = t == BOX
        half[box] = np.einsum("nij,nj->ni", np.abs(R[box]), size[box])
        cap = t == CAPSULE
        half[cap] = np.abs(R[cap][:, :, 2]) * size[cap, 1:2] + size[cap, 0:1]
        live = self.alive[np.asarray(f)][:, b]
        return pos.reshape(k, m, 3), half.reshape(k, m, 3), live

    def _bounds(self):
        """(lo, hi) [m] boxes: ``start`` = the solid geoms alive in the first frame that has dynamic
        ones (fixed solid bodies included); ``all`` = the dynamic geoms over the whole recording: the
        start box of the dynamic geoms joined with the 0.5 % / 99.5 % quantiles of their AABBs over (up to
        120 evenly spread) frames, so a few bodies flying far away do not shrink the scene to a dot."""
        solid = np.flatnonzero((self.geom_type != PLANE) & self.drawn)
        dyn = solid[~self.fixed[self.geom_body[solid]]]
        first = 0
        if len(dyn):
            has = self.alive[:, self.geom_body[dyn]].any(axis=1)
            first = int(np.argmax(has)) if has.any() else 0
        c0, h0, l0 = self.geom_extents(np.array([first]), solid)
        if not l0.any():
            box = (np.array([-1.0, -1.0, 0.0]), np.array([1.0, 1.0, 1.0]))
            return box, box
        c0, h0 = c0[l0], h0[l0]
        start = ((c0 - h0).min(axis=0), (c0 + h0).max(axis=0))
        if not len(dyn):
            return start, start
        fr = self._sample_frames()
        c, h, live = self.geom_extents(fr, dyn)
        lo_all, hi_all = (c - h)[live], (c + h)[live]
        if len(lo_all) > 400:
            lo, hi = np.quantile(lo_all, 0.005, axis=0), np.quantile(hi_all, 0.995, axis=0)
        else:
            lo, hi = lo_all.min(axis=0), hi_all.max(axis=0)
        d0 = self.alive[first, self.geom_body[dyn]]
        cd, hd, _ = self.geom_extents(np.array([first]), dyn[d0])
        lo = np.minimum(lo, (cd[0] - hd[0]).min(axis=0))
        hi = np.maximum(hi, (cd[0] + hd[0]).max(axis=0))
        return (lo, hi), start

    def planes(self, f: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
        """(origin [m], 3x3 rotation: columns = plane x, plane y, normal) of every plane geom."""
        out = []
        a = self.rec.arrays
        for g in self.plane_geoms:
            b = int(self.geom_body[g])
            pb, qb = a["frame_position"][f][b], a["frame_orientation"][f][b]
            o = pb + quat_rotate(qb[None], self.local_pos[g][None])[0]
            q = quat_mul(qb[None], self.local_quat[g][None])[0]
            out.append((o, quat_to_matrix(q / np.linalg.norm(q))))
        return out

    # ------------------------------------------------------------------ per frame
    def geom_poses(self, f: int, geoms: np.ndarray):
        """World positions (k, 3), orientations (k, 4) and liveness (k,) of ``geoms`` in frame ``f``."""
        a = self.rec.arrays
        b = self.geom_body[geoms]
        pb = a["frame_position"][f][b]
        qb = a["frame_orientation"][f][b]
        pos = pb + quat_rotate(qb, self.local_pos[geoms])
        quat = quat_mul(qb, self.local_quat[geoms])
        live = self.alive[f, b]
        return pos, quat, live

    def instances(self, f: int, colors: np.ndarray) -> dict[str, np.ndarray]:
        """Per primitive kind, the (k, 14) float32 instance records of the geoms alive in frame ``f``."""
        out = {}
        for kind, geoms in self.kind_geoms.items():
            if not len(geoms):
                continue
            pos, quat, live = self.geom_poses(f, geoms)
            g = geoms[live]
            rec = np.empty((len(g), 14), np.float32)
            rec[:, 0:3] = pos[live]
            rec[:, 3:7] = quat[live]
            rec[:, 7:11] = self.scale[g]
            rec[:, 11:14] = colors[self.geom_body[g]]
            out[kind] = rec
        return out

    def hull_texels(self, f: int, colors: np.ndarray) -> np.ndarray:
        """(k, 3, 4) float32: per hull geom (position, alive), orientation, (colour, 1)."""
        geoms = self.hull_geoms
        pos, quat, live = self.geom_poses(f, geoms)
        t = np.zeros((len(geoms), 3, 4), np.float32)
        t[:, 0, :3], t[:, 0, 3] = pos, live
        t[:, 1] = quat
        t[:, 2, :3], t[:, 2, 3] = colors[self.geom_body[geoms]], 1.0
        return t

    def contact_instances(self, f: int, radius: float, length: float, thickness: float):
        """Instance records of the contact points of frame ``f``: small spheres of ``radius`` [m] at the
        points (red) and thin boxes of ``length`` x ``thickness`` [m] along the normals (yellow)."""
        c = self.rec.contacts(f)
        p = np.asarray(c["point"], np.float64)
        n = np.asarray(c["normal"], np.float64)
        k = len(p)
        pts = np.zeros((k, 14), np.float32)
        pts[:, 0:3], pts[:, 3] = p, 1.0
        pts[:, 7:10] = radius
        pts[:, 11:14] = srgb_to_linear((0.85, 0.1, 0.1))
        nn = n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)
        # quaternion turning +z onto the normal: (1 + n_z, z x n) normalised; n = -z: 180 deg about x
        q = np.stack([1.0 + nn[:, 2], -nn[:, 1], nn[:, 0], np.zeros(k)], axis=1)
        flip = q[:, 0] < 1e-6
        q[flip] = (0.0, 1.0, 0.0, 0.0)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        lines = np.zeros((k, 14), np.float32)
        lines[:, 0:3] = p + nn * (0.5 * length)
        lines[:, 3:7] = q
        lines[:, 7:11] = (thickness, thickness, 0.5 * length, 0.0)
        lines[:, 11:14] = srgb_to_linear((0.98, 0.85, 0.1))
        return pts, lines
