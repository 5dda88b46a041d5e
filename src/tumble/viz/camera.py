"""Camera math of the renderer: a pinhole camera (look-at view, OpenGL perspective), its pixel
projection, and the camera presets (automatic fit, named views, per-scene views).

Conventions: world z is up; lengths in metres, angles in degrees. ``fov`` is the *vertical* field of
view. Pixel coordinates have their origin at the top-left corner of the image, x to the right, y down,
in pixels: pixel (row i, column j) covers [j, j+1) x [i, i+1), its centre is (j + 0.5, i + 0.5).

Projection of a world point p (all 4x4 matrices act on column vectors [p, 1]):

* view ``V`` (look-at): forward f = (target - eye)/|target - eye|, side s = f x up / |f x up|,
  true up u = s x f; camera coordinates c = (s.(p-eye), u.(p-eye), -f.(p-eye)).
* projection ``P`` (OpenGL ``gluPerspective``): with t = 1/tan(fov/2) and aspect a = width/height,
  clip = (t/a c_x, t c_y, ((far+near) c_z + 2 far near)/(near - far), -c_z).
* normalised device coordinates ndc = clip.xyz / clip.w, in [-1, 1]^3 inside the view.
* pixels: x = (ndc_x + 1)/2 * width, y = (1 - ndc_y)/2 * height.

Presets (``camera=`` of :func:`tumble.viz.render.render`): ``"auto"`` (the default: the scene's own view
from :data:`SCENE_PRESETS` when the recording's ``meta["scene"]`` has one, else ``"fit"``), ``"fit"``
(3/4 view from the front right, 25 degrees above the horizon, fov 40), ``"front"`` (from -y), ``"side"``
(from +x), ``"top"`` (from above), ``"iso"`` (isometric-like 35 degrees), or any scene name of
:data:`SCENE_PRESETS`. A dict gives the camera directly: ``{"eye", "target", "up", "fov", "near",
"far"}`` or the orbit form ``{"azimuth", "elevation", "zoom" | "distance", "target", "fov"}``.

Fitting: for a view direction f (unit, from the eye to the target) and the box [lo, hi] (the dynamic
bodies' bounds), the target is the box centre and the distance d is the smallest one for which all
8 corners lie inside the frustum: for a corner offset q from the target, depth z = d + q.f must satisfy
|q.s| <= z tan(fov_x/2) and |q.u| <= z tan(fov/2), so d = max over corners of
max(|q.s|/tan(fov_x/2), |q.u|/tan(fov/2)) - q.f, times a 5 % margin and divided by ``zoom``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from tumble.errors import SettingsError

#: named views (orbit form); ``bounds`` is "all" (every frame) or "start" (frame 0 and fixed bodies)
VIEW_PRESETS: dict[str, dict] = {
    "fit": {"azimuth": -60.0, "elevation": 25.0, "zoom": 1.0, "fov": 40.0},
    "front": {"azimuth": -90.0, "elevation": 8.0, "zoom": 1.0, "fov": 40.0},
    "side": {"azimuth": 0.0, "elevation": 8.0, "zoom": 1.0, "fov": 40.0},
    "top": {"azimuth": -90.0, "elevation": 89.0, "zoom": 1.0, "fov": 40.0},
    "iso": {"azimuth": -45.0, "elevation": 35.26, "zoom": 1.0, "fov": 40.0},
}

#: per-scene views, keyed by ``meta["scene"]`` (orbit form; ``target_shift`` moves the target by that
#: fraction of the box's extent per axis; ``bounds`` picks the box the view is fitted to)
SCENE_PRESETS: dict[str, dict] = {
    # planar pyramids and walls stand in the x-z plane: look from the front (-y), a little from the right
    "pyramid20": {"azimuth": -72.0, "elevation": 14.0, "zoom": 1.05, "fov": 40.0, "bounds": "start"},
    "large_pyramid": {"azimuth": -70.0, "elevation": 18.0, "zoom": 1.05, "fov": 40.0, "bounds": "start"},
    "wall200": {"azimuth": -70.0, "elevation": 12.0, "zoom": 0.8, "fov": 40.0, "bounds": "start"},
    "breakable_wall": {"azimuth": -55.0, "elevation": 15.0, "zoom": 0.9, "fov": 40.0, "bounds": "start"},
    # tall columns: from the front, low, the whole height in view
    "stack10": {"azimuth": -65.0, "elevation": 10.0, "zoom": 0.95, "fov": 40.0, "bounds": "start"},
    "stack3_nocache": {"azimuth": -65.0, "elevation": 12.0, "zoom": 0.8, "fov": 40.0, "bounds": "all"},
    "box_stack25": {"azimuth": -65.0, "elevation": 10.0, "zoom": 0.95, "fov": 40.0, "bounds": "start"},
    "mass_ratio": {"azimuth": -65.0, "elevation": 12.0, "zoom": 0.8, "fov": 40.0, "bounds": "start"},
    # round towers: 3/4 view from above the rim so the impact and the debris on the ground show
    "tower320": {"azimuth": -60.0, "elevation": 22.0, "zoom": 0.9, "fov": 40.0, "bounds": "start"},
    "tower_roof": {"azimuth": -60.0, "elevation": 22.0, "zoom": 0.85, "fov": 40.0, "bounds": "start",
                   "target_shift": (0.0, 0.0, 0.05)},
    "falling_roof": {"azimuth": -60.0, "elevation": 22.0, "zoom": 0.85, "fov": 40.0, "bounds": "start"},
    # piles and grids: from higher up, to see into the container
    "pile1000": {"azimuth": -60.0, "elevation": 38.0, "zoom": 1.0, "fov": 40.0, "bounds": "start"},
    "ball_grid125": {"azimuth": -55.0, "elevation": 25.0, "zoom": 1.0, "fov": 40.0, "bounds": "all"},
    "inclined_letters": {"azimuth": -120.0, "elevation": 30.0, "zoom": 1.0, "fov": 40.0, "bounds": "all"},
    "ragdolls": {"azimuth": -60.0, "elevation": 35.0, "zoom": 1.0, "fov": 40.0, "bounds": "start"},
    # the impulse thesis' scenes (004 §5): the bullet comes from -x, so look at the stacks from the
    # front-left; the well and the cage from above their rim
    "bullet_stacks": {"azimuth": -115.0, "elevation": 16.0, "zoom": 2.2, "fov": 40.0, "bounds": "start",
                      "target_shift": (0.3, 0.0, 0.0)},
    "balls_well": {"azimuth": -60.0, "elevation": 35.0, "zoom": 1.0, "fov": 40.0, "bounds": "start"},
    "cage": {"azimuth": -60.0, "elevation": 30.0, "zoom": 1.0, "fov": 40.0, "bounds": "start"},
    "newtons_cradle": {"azimuth": -90.0, "elevation": 10.0, "zoom": 1.0, "fov": 40.0, "bounds": "all"},
    "spin_down": {"azimuth": -90.0, "elevation": 15.0, "zoom": 0.6, "fov": 40.0, "bounds": "all"},
    # chains, bridges and vehicles: side views
    "chain50": {"azimuth": -90.0, "elevation": 10.0, "zoom": 1.0, "fov": 40.0, "bounds": "all"},
    "bridge": {"azimuth": -75.0, "elevation": 18.0, "zoom": 1.0, "fov": 40.0, "bounds": "all"},
    "pendulum": {"azimuth": -90.0, "elevation": 5.0, "zoom": 0.5, "fov": 40.0, "bounds": "all"},
}

_ORBIT_KEYS = {"azimuth", "elevation", "zoom", "distance", "target", "fov", "up", "near", "far", "bounds",
               "target_shift"}
_LOOK_KEYS = {"eye", "target", "up", "fov", "near", "far"}


def preset_names() -> list[str]:
    """Every name ``camera=`` accepts: "auto", the view presets, then the scene presets."""
    return ["auto", *VIEW_PRESETS, *sorted(SCENE_PRESETS)]


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def look_at(eye, target, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """4x4 view matrix: rows (s, -s.eye), (u, -u.eye), (-f, f.eye), (0, 0, 0, 1) (see module doc)."""
    eye = np.asarray(eye, dtype=np.float64)
    f = _unit(np.asarray(target, dtype=np.float64) - eye)
    s = np.cross(f, np.asarray(up, dtype=np.float64))
    if np.linalg.norm(s) < 1e-9:  # looking along up: pick another up
        s = np.cross(f, (0.0, 1.0, 0.0) if abs(f[1]) < 0.9 else (1.0, 0.0, 0.0))
    s = _unit(s)
    u = np.cross(s, f)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = s, u, -f
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def perspective(fov_deg: float, aspect: float, near: float, far: float) -> np.ndarray:
    """4x4 OpenGL perspective projection (vertical ``fov_deg``, ``aspect`` = width/height, depth to [-1, 1])."""
    t = 1.0 / math.tan(math.radians(fov_deg) / 2.0)
    m = np.zeros((4, 4))
    m[0, 0] = t / aspect
    m[1, 1] = t
    m[2, 2] = (far + near) / (near - far)
    m[2, 3] = 2.0 * far * near / (near - far)
    m[3, 2] = -1.0
    return m


def orthographic(half_w: float, half_h: float, near: float, far: float) -> np.ndarray:
    """4x4 OpenGL orthographic projection of the box [-half_w, half_w] x [-half_h, half_h] x [-far, -near]."""
    m = np.eye(4)
    m[0, 0] = 1.0 / half_w
    m[1, 1] = 1.0 / half_h
    m[2, 2] = -2.0 / (far - near)
    m[2, 3] = -(far + near) / (far - near)
    return m


@dataclass
class Camera:
    """A pinhole camera: ``eye`` and ``target`` [m], ``up`` (world z by default), vertical ``fov`` [deg],
    clip distances ``near`` / ``far`` [m] (None: 1/100 and 1000x the eye-target distance), image size
    ``width`` x ``height`` [px]."""

    eye: np.ndarray
    target: np.ndarray
    up: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    fov: float = 40.0
    near: float | None = None
    far: float | None = None
    width: int = 1280
    height: int = 720

    def __post_init__(self):
        self.eye = np.asarray(self.eye, dtype=np.float64).reshape(3)
        self.target = np.asarray(self.target, dtype=np.float64).reshape(3)
        self.up = np.asarray(self.up, dtype=np.float64).reshape(3)

    @property
    def distance(self) -> float:
        """|target - eye| [m]."""
        return float(np.linalg.norm(self.target - self.eye))

    @property
    def forward(self) -> np.ndarray:
        return _unit(self.target - self.eye)

    def clip_range(self) -> tuple[float, float]:
        """(near, far) [m]: the set values, else 0.01 d and 1000 d for d = |target - eye|."""
        d = max(self.distance, 1e-6)
        return (self.near if self.near is not None else 0.01 * d,
                self.far if self.far is not None else 1000.0 * d)

    def view_matrix(self) -> np.ndarray:
        """4x4 world -> camera matrix (:func:`look_at`)."""
        return look_at(self.eye, self.target, self.up)

    def projection_matrix(self, aspect: float | None = None) -> np.ndarray:
        """4x4 camera -> clip matrix (:func:`perspective`); ``aspect`` defaults to width / height."""
        near, far = self.clip_range()
        return perspective(self.fov, self.width / self.height if aspect is None else aspect, near, far)

    def view_projection(self) -> np.ndarray:
        return self.projection_matrix() @ self.view_matrix()

    def project(self, points) -> np.ndarray:
        """Pixel coordinates (n, 2) (x right, y down, origin at the image's top-left corner) of world
        ``points`` (n, 3) [m]; points at or behind the eye give NaN."""
        p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        clip = np.c_[p, np.ones(len(p))] @ self.view_projection().T
        w = clip[:, 3]
        with np.errstate(divide="ignore", invalid="ignore"):
            ndc = clip[:, :2] / np.where(w > 1e-12, w, np.nan)[:, None]
        return np.stack([(ndc[:, 0] + 1.0) * 0.5 * self.width, (1.0 - ndc[:, 1]) * 0.5 * self.height], axis=1)

    def to_dict(self) -> dict:
        near, far = self.clip_range()
        return {"eye": self.eye.tolist(), "target": self.target.tolist(), "up": self.up.tolist(),
                "fov": float(self.fov), "near": float(near), "far": float(far)}


def _direction(azimuth: float, elevation: float) -> np.ndarray:
    """Unit vector from the target to the eye: azimuth from +x towards +y, elevation above the xy plane."""
    a, e = math.radians(azimuth), math.radians(elevation)
    return np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])


def fit_distance(lo, hi, to_eye, fov: float, aspect: float, up=(0.0, 0.0, 1.0), margin: float = 1.05) -> float:
    """Smallest eye distance from the centre of box [lo, hi] along ``to_eye`` showing all 8 corners."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    c = 0.5 * (lo + hi)
    f = -_unit(to_eye)
    s = np.cross(f, up)
    if np.linalg.norm(s) < 1e-9:
        s = np.cross(f, (0.0, 1.0, 0.0))
    s = _unit(s)
    u = np.cross(s, f)
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]) - c
    ty = math.tan(math.radians(fov) / 2.0)
    tx = ty * aspect
    d = np.maximum(np.abs(corners @ s) / tx, np.abs(corners @ u) / ty) - corners @ f
    extent = float(np.linalg.norm(hi - lo))
    return max(float(d.max()) * margin, 0.5 * extent, 1e-3)


def _vec3(name: str, value) -> np.ndarray:
    try:
        v = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise SettingsError(f"render: camera field {name}={value!r} is not a 3-vector of numbers") from None
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise SettingsError(f"render: camera field {name}={value!r} must be 3 finite numbers")
    return v


def _number(name: str, value, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(value)) or not lo < float(value) < hi:
        raise SettingsError(f"render: camera field {name}={value!r} must be a number in ({lo:g}, {hi:g})")
    return float(value)


def resolve(camera, *, bounds_all, bounds_start, scene: str = "", width: int = 1280,
            height: int = 720) -> Camera:
    """The :class:`Camera` for ``camera`` (None, a preset name or a dict, see the module doc).

    ``bounds_all`` / ``bounds_start``: (lo, hi) boxes [m] of the dynamic bodies over the whole
    recording and at its start.
    """
    if camera is None:
        camera = "auto"
    if isinstance(camera, Camera):
        return Camera(camera.eye, camera.target, camera.up, camera.fov, camera.near, camera.far, width, height)
    if isinstance(camera, str):
        name = camera
        if name == "auto":
            name = scene if scene in SCENE_PRESETS else "fit"
        if name in VIEW_PRESETS:
            spec = dict(VIEW_PRESETS[name])
        elif name in SCENE_PRESETS:
            spec = dict(SCENE_PRESETS[name])
        else:
            raise SettingsError(f"render: field camera={camera!r} is not a camera preset; known presets: "
                                f"{', '.join(preset_names())} (or a dict with eye/target/up/fov)")
    elif isinstance(camera, dict):
        spec = dict(camera)
        keys = set(spec)
        if "eye" in keys:
            bad = keys - _LOOK_KEYS
        else:
            bad = keys - _ORBIT_KEYS
        if bad:
            raise SettingsError(f"render: camera dict has unknown key(s) {sorted(bad)}; use "
                                f"{sorted(_LOOK_KEYS)} or the orbit form {sorted(_ORBIT_KEYS - {'bounds'})}")
    else:
        raise SettingsError(f"render: field camera={camera!r} must be a preset name, a dict or a Camera")

    fov = _number("fov", spec.get("fov", 40.0), 0.0, 179.0)
    up = _vec3("up", spec.get("up", (0.0, 0.0, 1.0)))
    near = None if spec.get("near") is None else _number("near", spec["near"], 0.0, math.inf)
    far = None if spec.get("far") is None else _number("far", spec["far"], 0.0, math.inf)
    if near is not None and far is not None and far <= near:
        raise SettingsError(f"render: camera field far={far!r} must be larger than near={near!r}")
    if "eye" in spec:
        eye = _vec3("eye", spec["eye"])
        target = _vec3("target", spec.get("target", (0.0, 0.0, 0.0)))
        if np.linalg.norm(target - eye) < 1e-9:
            raise SettingsError(f"render: camera eye={eye.tolist()} and target={target.tolist()} coincide")
        return Camera(eye, target, up, fov, near, far, width, height)

    which = spec.get("bounds", "all")
    if which not in ("all", "start"):
        raise SettingsError(f"render: camera field bounds={which!r} must be 'all' or 'start'")
    lo, hi = (np.asarray(b, float) for b in (bounds_all if which == "all" else bounds_start))
    az = _number("azimuth", spec.get("azimuth", -60.0), -1e6, 1e6)
    el = _number("elevation", spec.get("elevation", 25.0), -90.0, 90.0)
    to_eye = _direction(az, el)
    if "target" in spec:
        target = _vec3("target", spec["target"])
        half = np.maximum(np.abs(lo - target), np.abs(hi - target))
        lo, hi = target - half, target + half
    else:
        target = 0.5 * (lo + hi) + np.asarray(spec.get("target_shift", (0.0, 0.0, 0.0)), float) * (hi - lo)
    if "distance" in spec:
        d = _number("distance", spec["distance"], 0.0, math.inf)
    else:
        zoom = _number("zoom", spec.get("zoom", 1.0), 0.0, math.inf)
        d = fit_distance(lo, hi, to_eye, fov, width / height, up) / zoom
    return Camera(target + d * to_eye, target, up, fov, near, far, width, height)
