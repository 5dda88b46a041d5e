"""Headless video renderer: a recording (``tumble.recording``) in, PNG frames and/or an MP4 out.

>>> from tumble.viz.render import render, render_frame
>>> render("run.npz", "run.mp4")                       # real time, capped at 60 fps, auto camera
>>> render("run.npz", "frames/", color_by="speed", contacts=True, frames=slice(0, 100))
>>> img = render_frame("run.npz", 10, camera="front")  # (720, 1280, 3) uint8

OpenGL 3.3 through a standalone EGL context (:mod:`tumble.viz.gl`; Mesa's llvmpipe when there is no
GPU). Per frame the geoms' world poses and colours are computed with vectorised NumPy
(:mod:`tumble.viz.scene`) and uploaded as per-instance attributes: every primitive kind (box, sphere,
capsule, contact marker) is drawn instanced from unit meshes (:mod:`tumble.viz.meshes`), one draw call
per kind and level of detail; all hulls together are one draw of a merged triangle soup whose poses
come from a float texture.

Passes per frame:

1. shadow map: depth from the light (orthographic, fitted to the scene's bounding sphere, ``shadow_size``
   texels square); spheres and capsules at the level of detail their size in shadow texels needs;
2. the static background (sky gradient, ground plane lit but unshadowed, or a faint grid when the
   recording has no plane) is rendered once and copied in (colour and depth);
3. the ground inside the shadow map's footprint is drawn again with shadows (so the per-pixel shadow
   lookups cost only where shadows can fall);
4. the bodies: instances outside the view frustum dropped, the rest sorted front to back (early depth
   rejection) and split by level of detail from their projected radius in pixels; then contact markers;
5. anti-aliasing: FXAA (a luma-edge post pass; MSAA is available with ``samples=4`` but costs 2-3x the
   body pass on llvmpipe); read back as RGB.

Encoding (ffmpeg/libx264 through imageio-ffmpeg, yuv420p) and PNG writing run in a second thread
(:mod:`tumble.viz.output`). Shading and shadow-bias math: :mod:`tumble.viz.shaders`; camera and
projection math: :mod:`tumble.viz.camera`. Units: metres, seconds, degrees (fov, azimuth, elevation),
pixels for the image.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np

from tumble.errors import RecordingError, SettingsError
from tumble.viz import meshes, shaders
from tumble.viz.camera import Camera, look_at, orthographic, preset_names, resolve
from tumble.viz.gl import RenderError, context
from tumble.viz.output import MAX_FPS, Writer, frame_indices, outputs
from tumble.viz.scene import COLOR_BY, SceneData, nice_number, srgb_to_linear

__all__ = ["MAX_FPS", "Camera", "RenderError", "Renderer", "camera_for", "preset_names", "render", "render_frame"]

SKY_HORIZON = (0.90, 0.92, 0.95)
SKY_ZENITH = (0.52, 0.67, 0.86)
CHECKER_A = (0.80, 0.80, 0.79)
CHECKER_B = (0.69, 0.69, 0.69)
CHECKER_LINE = (0.55, 0.55, 0.56)
HULLS_PER_ROW = 1024
LIGHT_AZIMUTH_OFFSET = 55.0  # [deg] key light to the right of the camera's azimuth
LIGHT_ELEVATION = 50.0  # [deg]
#: per-scene drawing defaults (keyed by meta["scene"]): the cage of Schornbaum's Fig. 27c is invisible
SCENE_STYLE = {"cage": {"hide_fixed": True}}


def _load(recording):
    from tumble.recording import Recording

    if isinstance(recording, Recording):
        return recording
    if isinstance(recording, (str, os.PathLike)):
        return Recording.load(recording)
    raise RecordingError(f"render: field recording={recording!r} is neither a Recording nor a path to a .npz file")


def _check_size(width, height):
    for name, v in (("width", width), ("height", height)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 16 <= v <= 8192:
            raise SettingsError(f"render: field {name}={v!r} must be an integer number of pixels in [16, 8192]")
    return int(width), int(height)


def _check_color_by(color_by):
    if not isinstance(color_by, str) or color_by not in COLOR_BY:
        raise SettingsError(f"render: field color_by={color_by!r} is not one of {', '.join(COLOR_BY)}")


def _hide_fixed(rec, hide_fixed):
    if hide_fixed is None:
        return bool(SCENE_STYLE.get(str(rec.meta.get("scene", "")), {}).get("hide_fixed", False))
    return bool(hide_fixed)


def camera_for(recording, camera=None, *, width: int = 1280, height: int = 720, hide_fixed: bool | None = None
               ) -> Camera:
    """The :class:`Camera` that :func:`render` would use for ``recording`` and ``camera`` (its near and
    far planes left to the renderer)."""
    rec = _load(recording)
    width, height = _check_size(width, height)
    sd = SceneData(rec, hide_fixed=_hide_fixed(rec, hide_fixed))
    return resolve(camera, bounds_all=sd.bounds_all, bounds_start=sd.bounds_start,
                   scene=str(rec.meta.get("scene", "")), width=width, height=height)


def _f32(m) -> bytes:
    """A 4x4 matrix as column-major float32 bytes (GLSL's layout)."""
    return np.asarray(m, np.float32).T.tobytes()


class _Kind:
    """One primitive kind: a unit mesh per level of detail, each with its own instance buffers and
    vertex arrays for the colour pass and the shadow pass."""

    def __init__(self, renderer, levels, capacity: int, shadows: bool = True):
        ctx = renderer.ctx
        keep = renderer._keep
        self.limits = np.array([lim for _, lim in levels])
        self.capacity = max(int(capacity), 1)
        self.levels = []
        for (verts, tris), _lim in levels:
            vbo = keep(ctx.buffer(verts.tobytes()))
            ibo = keep(ctx.buffer(tris.tobytes()))
            lv = {"lit_buf": keep(ctx.buffer(reserve=self.capacity * 56, dynamic=True)), "lit_n": 0,
                  "shadow_n": 0}
            lv["lit"] = keep(ctx.vertex_array(
                renderer.p_prim, [(vbo, "3f 3f 1f", "in_pos", "in_normal", "in_cap"),
                                  (lv["lit_buf"], "3f 4f 4f 3f/i", "i_pos", "i_quat", "i_scale", "i_color")],
                index_buffer=ibo, index_element_size=4))
            if shadows:
                lv["shadow_buf"] = keep(ctx.buffer(reserve=self.capacity * 56, dynamic=True))
                lv["shadow"] = keep(ctx.vertex_array(
                    renderer.p_prim_shadow, [(vbo, "3f 3x4 1f", "in_pos", "in_cap"),
                                             (lv["shadow_buf"], "3f 4f 4f 3x4/i", "i_pos", "i_quat", "i_scale")],
                    index_buffer=ibo, index_element_size=4))
            self.levels.append(lv)

    def grow(self, n: int):
        if n > self.capacity:
            self.capacity = int(n * 1.5)
            for lv in self.levels:
                for k in ("lit_buf", "shadow_buf"):
                    if k in lv:
                        lv[k].orphan(self.capacity * 56)

    def split(self, arr: np.ndarray, px: np.ndarray | None, order: np.ndarray | None, which: str):
        """Write ``arr`` (instance records, reordered by ``order`` which may also drop some) into the level
        buffers of pass ``which`` ("lit"/"shadow"): level i gets the instances whose projected radius
        ``px`` [px] is at most ``limits[i]`` (and above ``limits[i-1]``)."""
        self.grow(len(arr))
        if order is not None:
            arr = arr[order]
            px = None if px is None else px[order]
        if len(self.levels) == 1 or px is None:  # no sizes: everything at the finest level
            level = np.full(len(arr), len(self.levels) - 1)
        else:
            level = np.minimum(np.searchsorted(self.limits, px), len(self.levels) - 1)
        for i, lv in enumerate(self.levels):
            sel = arr[level == i]
            lv[f"{which}_n"] = len(sel)
            if len(sel):
                lv[f"{which}_buf"].write(np.ascontiguousarray(sel).tobytes())

    def draw(self, which: str):
        import moderngl

        for lv in self.levels:
            if lv[f"{which}_n"]:
                lv[which].render(moderngl.TRIANGLES, instances=lv[f"{which}_n"])


class Renderer:
    """Draws frames of one recording with fixed options; :meth:`frame` returns an (H, W, 3) uint8 image.

    Options as :func:`render`, plus: ``ground``: None (auto: checker on the recording's plane geoms,
    else a faint grid under the scene), True (the same) or False (sky only); ``body_colors``: {body id:
    RGB} (0..1 or 0..255) overriding ``color_by`` for those bodies; ``aa``: "fxaa" (default) or None;
    ``samples``: MSAA samples (0 = off, the default); ``shadow_size``: shadow map size [texels] (0: no
    shadows; None: about one texel per screen pixel over the scene, 512..2048); ``hide_fixed``: do not
    draw the fixed bodies' solids (planes stay; None: the scene's default from :data:`SCENE_STYLE`).
    """

    def __init__(self, recording, *, width: int = 1280, height: int = 720, camera=None, color_by: str = "body",
                 contacts: bool = False, ground=None, body_colors=None, aa: str | None = "fxaa", samples: int = 0,
                 shadow_size: int | None = None, hide_fixed: bool | None = None):
        rec = _load(recording)
        self.width, self.height = _check_size(width, height)
        _check_color_by(color_by)
        if ground not in (None, True, False):
            raise SettingsError(f"render: field ground={ground!r} must be None (auto), True or False")
        if aa not in (None, "fxaa"):
            raise SettingsError(f"render: field aa={aa!r} must be 'fxaa' or None")
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 0:
            raise SettingsError(f"render: field samples={samples!r} must be an integer >= 0")
        if shadow_size is not None and (isinstance(shadow_size, bool) or not isinstance(shadow_size, int)
                                        or not 0 <= shadow_size <= 8192):
            raise SettingsError(f"render: field shadow_size={shadow_size!r} must be None (auto) or an integer in "
                                "[0, 8192] (0: no shadows)")
        self.rec = rec
        self.contacts = bool(contacts)
        self.scene = SceneData(rec, color_by, body_colors, hide_fixed=_hide_fixed(rec, hide_fixed))
        self.camera = resolve(camera, bounds_all=self.scene.bounds_all, bounds_start=self.scene.bounds_start,
                              scene=str(rec.meta.get("scene", "")), width=self.width, height=self.height)
        self.ground = ground
        self.aa = aa
        self._objects: list = []
        self.ctx = context()
        try:
            self._setup_view()
            self._setup_gl(samples, shadow_size)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ set-up
    def _keep(self, obj):
        self._objects.append(obj)
        return obj

    def _setup_view(self):
        sd, cam = self.scene, self.camera
        lo = np.minimum(sd.bounds_all[0], sd.bounds_start[0])
        hi = np.maximum(sd.bounds_all[1], sd.bounds_start[1])
        self.center = 0.5 * (lo + hi)
        self.radius = max(0.5 * float(np.linalg.norm(hi - lo)), 1e-3)
        d = cam.distance
        # clip planes: near at 1/50 of the eye-target distance (never past the scene), far beyond the ground
        to_scene = float(np.linalg.norm(self.center - cam.eye)) - self.radius
        near = cam.near if cam.near is not None else max(min(0.02 * d, 0.5 * to_scene), 1e-3 * d, 1e-4)
        self.ground_half = 45.0 * self.radius + d  # past the end of the fog seen from the eye
        far = cam.far if cam.far is not None else d + 2.5 * self.ground_half + 2 * self.radius
        cam.near, cam.far = near, far
        self.view = cam.view_matrix()
        self.proj = cam.projection_matrix()
        self.vp = self.proj @ self.view
        self.fog = (d + 3.0 * self.radius, d + 35.0 * self.radius)
        # frustum test and level-of-detail constants (camera basis = rows of the view matrix)
        self.cam_side, self.cam_up, self.cam_fwd = self.view[0, :3], self.view[1, :3], -self.view[2, :3]
        self.tan_y = math.tan(math.radians(cam.fov) / 2.0)
        self.tan_x = self.tan_y * self.width / self.height
        self.px_per_rad = 0.5 * self.height / self.tan_y  # projected radius [px] = r * px_per_rad / depth
        to_eye = cam.eye - cam.target
        az = math.degrees(math.atan2(to_eye[1], to_eye[0])) if np.linalg.norm(to_eye[:2]) > 1e-9 else -90.0
        a, e = math.radians(az + LIGHT_AZIMUTH_OFFSET), math.radians(LIGHT_ELEVATION)
        self.light_dir = np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])

    def _setup_gl(self, samples, shadow_size):
        import moderngl

        ctx = self.ctx
        sd = self.scene
        W, H = self.width, self.height
        self.samples = min(samples, int(ctx.max_samples))
        if self.samples == 1:
            self.samples = 0
        max_rb = int(ctx.info.get("GL_MAX_RENDERBUFFER_SIZE", 8192))
        if W > max_rb or H > max_rb:
            raise SettingsError(f"render: {W}x{H} is larger than the driver's limit {max_rb}x{max_rb}")

        # framebuffers: background cache, main (MSAA or not), resolved (texture for FXAA), output
        def fbo(samples_, texture=False):
            color = (ctx.texture((W, H), 4) if texture else ctx.renderbuffer((W, H), 4, samples=samples_))
            self._keep(color)
            depth = self._keep(ctx.depth_renderbuffer((W, H), samples=samples_))
            return self._keep(ctx.framebuffer(color_attachments=[color], depth_attachment=depth)), color

        self.bg_fbo, _ = fbo(self.samples)
        self.fbo, main_color = fbo(self.samples, texture=bool(self.aa and not self.samples))
        self.aa_source = main_color
        if self.samples and self.aa:
            self.resolve_fbo, self.aa_source = fbo(0, texture=True)
        else:
            self.resolve_fbo = None
        if self.aa:
            self.aa_source.filter = (moderngl.LINEAR, moderngl.LINEAR)
            self.aa_source.repeat_x = self.aa_source.repeat_y = False
            self.out_fbo = self._keep(ctx.framebuffer(color_attachments=[self._keep(ctx.renderbuffer((W, H), 4))]))
        elif self.samples:
            self.out_fbo = self._keep(ctx.framebuffer(color_attachments=[self._keep(ctx.renderbuffer((W, H), 4))]))
        else:
            self.out_fbo = self.fbo

        # shadow map: orthographic light camera around the scene's bounding sphere; auto size: a texel
        # about 0.8 of the world size of a screen pixel at the target (finer only costs raster time)
        R = self.radius * 1.02
        if shadow_size is None:
            px_m = 2.0 * self.camera.distance * self.tan_y / H
            shadow_size = int(min(max(2.0 * R / (0.8 * px_m), 512), 2048) + 127) // 128 * 128
        self.shadow_size = shadow_size
        self.shadow_tex = self._keep(ctx.depth_texture((max(shadow_size, 1),) * 2))
        self.shadow_tex.compare_func = "<="
        self.shadow_tex.filter = (moderngl.LINEAR, moderngl.LINEAR)
        self.shadow_tex.repeat_x = self.shadow_tex.repeat_y = False
        self.shadow_fbo = self._keep(ctx.framebuffer(depth_attachment=self.shadow_tex))
        self.light_eye = self.center + self.light_dir * 2.0 * R
        up = (0.0, 0.0, 1.0) if abs(self.light_dir[2]) < 0.99 else (0.0, 1.0, 0.0)
        self.light_near, self.light_far = 0.01 * R, 14.0 * R
        self.light_view = look_at(self.light_eye, self.center, up)
        self.light_vp = orthographic(R, R, self.light_near, self.light_far) @ self.light_view
        self.light_half = R
        self.texel_m = 2.0 * R / max(shadow_size, 1)  # shadow texel [m]
        self.shadow_uniforms = {"u_texel": 1.0 / max(shadow_size, 1), "u_normal_offset": 1.5 * self.texel_m,
                                "u_depth_bias": 1.0 * self.texel_m / (self.light_far - self.light_near),
                                "u_shadows": 1 if shadow_size > 0 else 0}

        def prog(vs, fs):
            return self._keep(ctx.program(vertex_shader=vs, fragment_shader=fs))

        self.p_prim = prog(shaders.PRIM_VS, shaders.LIT_FS)
        self.p_prim_shadow = prog(shaders.PRIM_SHADOW_VS, shaders.DEPTH_FS)
        self.p_hull = prog(shaders.HULL_VS, shaders.LIT_FS)
        self.p_hull_shadow = prog(shaders.HULL_SHADOW_VS, shaders.DEPTH_FS)
        self.p_ground = prog(shaders.GROUND_VS, shaders.GROUND_FS)
        self.p_grid = prog(shaders.GROUND_VS, shaders.GRID_FS)
        self.p_sky = prog(shaders.SKY_VS, shaders.SKY_FS)
        self.p_fxaa = prog(shaders.SKY_VS, shaders.FXAA_FS) if self.aa else None
        for p in (self.p_prim, self.p_hull, self.p_ground):
            self._set_lighting(p)
        for p in (self.p_prim, self.p_hull, self.p_ground, self.p_grid):
            p["u_vp"].write(_f32(self.vp))
        for p in (self.p_prim_shadow, self.p_hull_shadow):
            p["u_vp"].write(_f32(self.light_vp))
        self.p_sky["u_inv_vp"].write(_f32(np.linalg.inv(self.vp)))
        self.p_sky["u_eye"].value = tuple(self.camera.eye)
        self.p_sky["u_horizon"].value = tuple(srgb_to_linear(SKY_HORIZON))
        self.p_sky["u_zenith"].value = tuple(srgb_to_linear(SKY_ZENITH))
        quad = self._keep(ctx.buffer(meshes.quad().tobytes()))
        self.vao_sky = self._keep(ctx.vertex_array(self.p_sky, [(quad, "2f", "in_uv")]))
        self.vao_ground = self._keep(ctx.vertex_array(self.p_ground, [(quad, "2f", "in_uv")]))
        self.vao_grid = self._keep(ctx.vertex_array(self.p_grid, [(quad, "2f", "in_uv")]))
        if self.aa:
            self.p_fxaa["u_tex"].value = 2
            self.p_fxaa["u_inv"].value = (1.0 / W, 1.0 / H)
            self.vao_fxaa = self._keep(ctx.vertex_array(self.p_fxaa, [(quad, "2f", "in_uv")]))

        # primitive kinds
        self.kinds: dict[str, _Kind] = {}
        levels = {"sphere": meshes.sphere_levels(), "capsule": meshes.capsule_levels(), "box": meshes.box_levels()}
        for kind, geoms in sd.kind_geoms.items():
            if len(geoms):
                self.kinds[kind] = _Kind(self, levels[kind], len(geoms))
        if self.contacts:
            cmax = int(np.max(self.rec.arrays["contact_count"]))
            self.contact_kinds = (_Kind(self, [(meshes.sphere(1), math.inf)], cmax, shadows=False),
                                  _Kind(self, meshes.box_levels(), cmax, shadows=False))
            s = sd.typical_size
            self.contact_size = (0.035 * s, 0.35 * s, 0.01 * s)
        self._setup_hulls()
        self._setup_elastic()
        self._setup_ground()
        self._render_background()

    def _setup_hulls(self):
        import moderngl

        ctx, sd = self.ctx, self.scene
        self.hull_vao = None
        hg = sd.hull_geoms
        if not len(hg):
            return
        parts = []
        for slot, g in enumerate(hg):
            v, t = self.rec.hull(int(sd.hull_ids[g]))
            p, n = meshes.hull_soup(v, t)
            parts.append(np.c_[p, n, np.full(len(p), slot, np.float32)])
        soup = np.concatenate(parts).astype(np.float32)
        vbo = self._keep(ctx.buffer(soup.tobytes()))
        rows = -(-len(hg) // HULLS_PER_ROW)
        cols = min(len(hg), HULLS_PER_ROW)
        self.hull_tex = self._keep(ctx.texture((3 * cols, rows), 4, dtype="f4"))
        self.hull_tex.filter = (moderngl.NEAREST, moderngl.NEAREST)
        self.hull_tex_shape = (rows, cols)
        for p in (self.p_hull, self.p_hull_shadow):
            p["u_per_row"].value = HULLS_PER_ROW
            p["u_inst"].value = 1
        self.hull_vao = self._keep(ctx.vertex_array(self.p_hull, [(vbo, "3f 3f 1f", "in_pos", "in_normal",
                                                                   "in_slot")]))
        self.hull_shadow_vao = self._keep(ctx.vertex_array(self.p_hull_shadow, [(vbo, "3f 3x4 1f", "in_pos",
                                                                                 "in_slot")]))
        self.hull_vertices = len(soup)

    def _setup_elastic(self):
        """Elastic surfaces: one dynamic flat-shaded soup (rewritten every frame, SceneData.elastic_soup) drawn
        by the hull programs with identity poses in their own small texture (slot = elastic body)."""
        import moderngl

        ctx, sd = self.ctx, self.scene
        self.elastic_vao = None
        if not sd.elastic_count:
            return
        soup = sd.elastic_soup(0)
        self.elastic_vbo = self._keep(ctx.buffer(reserve=soup.nbytes, dynamic=True))
        self.elastic_tex = self._keep(ctx.texture((3 * sd.elastic_count, 1), 4, dtype="f4"))
        self.elastic_tex.filter = (moderngl.NEAREST, moderngl.NEAREST)
        # the hull programs read HULLS_PER_ROW slots per row; all elastic bodies fit one row below that
        self.elastic_tex.write(sd.elastic_texels().reshape(1, -1, 4).tobytes())
        self.elastic_vao = self._keep(ctx.vertex_array(self.p_hull, [(self.elastic_vbo, "3f 3f 1f", "in_pos",
                                                                      "in_normal", "in_slot")]))
        self.elastic_shadow_vao = self._keep(ctx.vertex_array(self.p_hull_shadow, [(self.elastic_vbo, "3f 3x4 1f",
                                                                                    "in_pos", "in_slot")]))
        self.elastic_vertices = len(soup)

    def _draw_elastic(self, shadow: bool):
        import moderngl

        if self.elastic_vao is None:
            return
        for p in (self.p_hull, self.p_hull_shadow):
            p["u_per_row"].value = HULLS_PER_ROW
            p["u_inst"].value = 1
        self.elastic_tex.use(location=1)
        (self.elastic_shadow_vao if shadow else self.elastic_vao).render(moderngl.TRIANGLES,
                                                                          vertices=self.elastic_vertices)
        if self.hull_vao is not None:
            self.hull_tex.use(location=1)

    def _set_lighting(self, p):
        p["u_eye"].value = tuple(self.camera.eye)
        p["u_light_dir"].value = tuple(self.light_dir)
        p["u_light_color"].value = (0.95, 0.93, 0.88)
        p["u_sky_ambient"].value = tuple(0.45 * srgb_to_linear((0.80, 0.86, 1.0)))
        p["u_ground_ambient"].value = tuple(0.25 * srgb_to_linear((0.85, 0.80, 0.75)))
        p["u_specular"].value = 0.22
        p["u_fill"].value = 0.18
        p["u_light_vp"].write(_f32(self.light_vp))
        p["u_shadow"].value = 0
        for k, v in self.shadow_uniforms.items():
            p[k].value = v
        p["u_fog_color"].value = tuple(srgb_to_linear(SKY_HORIZON))
        p["u_fog"].value = self.fog

    def _setup_ground(self):
        """Plane geoms -> checker quads (and the footprint quads of the shadow map on them); no plane ->
        a faint grid at the bottom of the scene's box."""
        sd = self.scene
        self.ground_planes = []
        self.grid = None
        if self.ground is False:
            return
        cell = nice_number(max(sd.typical_size, self.radius / 5.0))
        self.p_ground["u_cell"].value = cell
        self.p_ground["u_color_a"].value = tuple(srgb_to_linear(CHECKER_A))
        self.p_ground["u_color_b"].value = tuple(srgb_to_linear(CHECKER_B))
        self.p_ground["u_line_color"].value = tuple(srgb_to_linear(CHECKER_LINE))
        lx, ly = self.light_view[0, :3], self.light_view[1, :3]
        for origin, rot in sd.planes(0):
            ax, ay, n = rot[:, 0], rot[:, 1], rot[:, 2]
            rel = self.center - origin
            g = {"u_origin": tuple(origin), "u_ax": tuple(ax), "u_ay": tuple(ay), "u_normal": tuple(n),
                 "u_center": (float(rel @ ax), float(rel @ ay)), "u_half": self.ground_half, "footprint": None}
            nl = float(n @ self.light_dir)
            if self.shadow_size and nl > 0.05:
                # the shadow map's square (light-space x, y in [-R, R]) swept along -light onto the plane
                R = self.light_half * 1.02
                pts = []
                for s, t in ((-1, -1), (1, -1), (1, 1), (-1, -1), (1, 1), (-1, 1)):
                    c = self.center + R * (s * lx + t * ly)
                    x = c - self.light_dir * (float(n @ (c - origin)) / nl)
                    pts.append(((x - origin) @ ax, (x - origin) @ ay))
                g["footprint"] = self._keep(self.ctx.vertex_array(
                    self.p_ground, [(self._keep(self.ctx.buffer(np.array(pts, np.float32).tobytes())), "2f",
                                     "in_uv")]))
            self.ground_planes.append(g)
        if not self.ground_planes:
            lo = np.minimum(sd.bounds_all[0], sd.bounds_start[0])
            self.grid = {"u_origin": (0.0, 0.0, float(lo[2])), "u_ax": (1.0, 0.0, 0.0), "u_ay": (0.0, 1.0, 0.0),
                         "u_center": (float(self.center[0]), float(self.center[1])), "u_half": 2.5 * self.radius,
                         "u_cell": nice_number(self.radius / 6.0), "u_line_color": tuple(srgb_to_linear((0.4,) * 3)),
                         "u_alpha": 0.35}

    def _set(self, prog, values: dict):
        for k, v in values.items():
            if k in prog:
                prog[k].value = v

    def _render_background(self):
        """Sky, unshadowed ground and grid, once, into the background framebuffer (colour + depth)."""
        import moderngl

        ctx = self.ctx
        self.bg_fbo.use()
        self.bg_fbo.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
        ctx.disable(moderngl.DEPTH_TEST | moderngl.CULL_FACE | moderngl.BLEND)
        ctx.depth_mask = False
        self.vao_sky.render(moderngl.TRIANGLES)
        ctx.depth_mask = True
        ctx.enable(moderngl.DEPTH_TEST)
        self.p_ground["u_shadows"].value = 0
        for g in self.ground_planes:
            self._set(self.p_ground, g)
            self.vao_ground.render(moderngl.TRIANGLES)
        self.p_ground["u_shadows"].value = self.shadow_uniforms["u_shadows"]
        if self.grid is not None:
            self._set(self.p_grid, self.grid)
            ctx.enable(moderngl.BLEND)
            ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
            ctx.depth_mask = False
            self.vao_grid.render(moderngl.TRIANGLES)
            ctx.depth_mask = True
            ctx.disable(moderngl.BLEND)

    # ------------------------------------------------------------------ per frame
    def _lod_radius(self, kind: str, arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(radius deciding the level of detail, bounding radius) [m] of instance records ``arr``."""
        s = arr[:, 7:11]
        if kind == "box":
            r = np.linalg.norm(s[:, :3], axis=1)
            return r, r
        return s[:, 0], s[:, 0] + s[:, 3]

    def _upload(self, f: int):
        sd = self.scene
        colors = sd.colors(f)
        inst = sd.instances(f, colors)
        eye = self.camera.eye
        near = self.camera.near
        for kind, k in self.kinds.items():
            arr = inst.get(kind, np.zeros((0, 14), np.float32))
            r_lod, r_bound = self._lod_radius(kind, arr)
            # level of detail from the projected radius in pixels (shadows are seen at about the same
            # scale, so the shadow pass uses the same level, at least one level less detailed)
            rel = arr[:, :3] - eye
            depth = rel @ self.cam_fwd
            px = r_lod * self.px_per_rad / np.maximum(depth, near)
            if self.shadow_size:  # every instance: the map covers the scene
                k.split(arr, 0.5 * px, None, "shadow")
            # colour pass: drop instances outside the frustum, sort front to back
            x, y = np.abs(rel @ self.cam_side), np.abs(rel @ self.cam_up)
            vis = ((depth > near - r_bound) & (x <= depth * self.tan_x + r_bound * math.hypot(1, self.tan_x))
                   & (y <= depth * self.tan_y + r_bound * math.hypot(1, self.tan_y)))
            idx = np.flatnonzero(vis)
            idx = idx[np.argsort(depth[idx], kind="stable")]
            k.split(arr, px, idx, "lit")
        if self.hull_vao is not None:
            t = sd.hull_texels(f, colors)
            rows, cols = self.hull_tex_shape
            full = np.zeros((rows * cols, 3, 4), np.float32)
            full[: len(t)] = t
            self.hull_tex.write(full.reshape(rows, cols * 3, 4).tobytes())
        if self.elastic_vao is not None:
            self.elastic_vbo.write(sd.elastic_soup(f).tobytes())
        if self.contacts:
            pts, lines = sd.contact_instances(f, *self.contact_size)
            self.contact_kinds[0].split(pts, None, None, "lit")
            self.contact_kinds[1].split(lines, None, None, "lit")

    def _draw(self, f: int):
        import moderngl

        ctx = self.ctx
        self._upload(f)
        if self.hull_vao is not None:
            self.hull_tex.use(location=1)
        # 1. shadow map
        if self.shadow_size:
            self.shadow_fbo.use()
            self.shadow_fbo.clear(depth=1.0)
            # closed meshes: only their faces turned away from the light go into the map, so a lit face
            # is never compared against itself (no acne); the normal offset handles the terminator
            ctx.enable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
            ctx.cull_face = "front"
            ctx.disable(moderngl.BLEND)
            for k in self.kinds.values():
                k.draw("shadow")
            if self.hull_vao is not None:
                self.hull_shadow_vao.render(moderngl.TRIANGLES, vertices=self.hull_vertices)
            self._draw_elastic(shadow=True)
        ctx.cull_face = "back"
        self.shadow_tex.use(location=0)
        # 2. background (colour + depth), 3. shadowed ground inside the shadow map's footprint
        ctx.copy_framebuffer(self.fbo, self.bg_fbo)
        self.fbo.use()
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.CULL_FACE | moderngl.BLEND)
        if self.shadow_size and any(g["footprint"] is not None for g in self.ground_planes):
            ctx.depth_func = "<="
            ctx.depth_mask = False
            ctx.polygon_offset = (-1.0, -2.0)
            for g in self.ground_planes:
                if g["footprint"] is not None:
                    self._set(self.p_ground, g)
                    self.p_ground["u_center"].value = (0.0, 0.0)
                    self.p_ground["u_half"].value = 1.0
                    g["footprint"].render(moderngl.TRIANGLES)
            ctx.polygon_offset = (0.0, 0.0)
            ctx.depth_mask = True
            ctx.depth_func = "<"
        # 4. bodies, contact markers
        ctx.enable(moderngl.CULL_FACE)
        for k in self.kinds.values():
            k.draw("lit")
        if self.hull_vao is not None:
            self.hull_vao.render(moderngl.TRIANGLES, vertices=self.hull_vertices)
        self._draw_elastic(shadow=False)
        if self.contacts:
            for k in self.contact_kinds:
                k.draw("lit")
        ctx.disable(moderngl.CULL_FACE | moderngl.DEPTH_TEST)
        # 5. resolve / anti-alias
        if self.resolve_fbo is not None:
            ctx.copy_framebuffer(self.resolve_fbo, self.fbo)
        if self.aa:
            self.out_fbo.use()
            self.aa_source.use(location=2)
            self.vao_fxaa.render(moderngl.TRIANGLES)
        elif self.samples:
            ctx.copy_framebuffer(self.out_fbo, self.fbo)

    def read(self) -> np.ndarray:
        """The last drawn frame, (height, width, 3) uint8, row 0 at the top (a view of the GL read)."""
        data = self.out_fbo.read(components=3, alignment=1)
        return np.frombuffer(data, np.uint8).reshape(self.height, self.width, 3)[::-1]

    def frame(self, f: int) -> np.ndarray:
        """Frame ``f`` of the recording as an (height, width, 3) uint8 RGB image (row 0 at the top)."""
        n = self.rec.frame_count
        if isinstance(f, bool) or not isinstance(f, (int, np.integer)) or not -n <= f < n:
            raise SettingsError(f"render: frame {f!r} is outside the recording's frames 0..{n - 1}")
        self._draw(int(f) % n)
        return self.read()

    def close(self):
        """Release the GL objects (the context itself stays for the next renderer)."""
        for obj in reversed(self._objects):
            try:
                obj.release()
            except Exception:  # noqa: BLE001 - releasing twice or after a context loss is harmless
                pass
        self._objects.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def render(recording, out=None, *, width: int = 1280, height: int = 720, fps: float | None = None, camera=None,
           color_by: str = "body", contacts: bool = False, frames=None, png_dir=None, progress: bool = False,
           ground=None, body_colors=None, aa: str | None = "fxaa", samples: int = 0,
           shadow_size: int | None = None, hide_fixed: bool | None = None) -> dict:
    """Render a recording to an MP4 (``out`` ending in .mp4) and/or PNG frames (``out`` a directory, or
    ``png_dir``), named ``frame_00000.png``, ``frame_00001.png`` ... in output order.

    ``recording``: a :class:`tumble.recording.Recording` or a path to one. ``fps``: None plays the
    recording in real time at 1 / (dt * every) frames per second, skipping frames (every k-th) to stay
    at or below 60; a number gives that output rate, still in real time (the nearest recorded frame for
    every output instant). ``frames``: a slice or indices of recorded frames to draw, in that order
    (then ``fps`` defaults to the real-time rate of the slice, at most 60). ``camera``: a preset name
    (:func:`tumble.viz.camera.preset_names`), a dict (eye/target/up/fov or the orbit form, see
    :mod:`tumble.viz.camera`) or None (auto: the scene's preset, else a 3/4 fit). ``color_by``: "body"
    (a palette colour per body id, fixed bodies grey), "speed" (viridis of |v| from 0 to the
    recording's 99th percentile speed) or "sleeping" (orange awake, blue-grey asleep). ``contacts``:
    draw contact points (red) and normals (yellow). ``progress``: a frames/s + ETA bar on stderr
    when it is a terminal (:mod:`tumble.progress`). MP4 needs an even
    ``width`` and ``height`` (yuv420p). More options: :class:`Renderer`.

    Returns a dict: ``mp4``, ``png_dir``, ``pngs`` (count), ``frames`` (count), ``frame_indices``,
    ``fps``, ``width``, ``height``, ``camera`` (eye, target, up, fov, near, far), ``color_by``,
    ``speed_max`` [m/s] (color_by="speed"), ``renderer`` (GL_RENDERER), ``seconds`` (setup; draw: issuing
    the GL work; readback: waiting for it to finish and reading the pixels; writer_busy: encoder/PNG
    thread at work; writer_wait: draining it at the end; total) and ``frames_per_second`` (frames / total).
    """
    t_start = time.perf_counter()
    mp4, pngs = outputs(out, png_dir)
    width, height = _check_size(width, height)
    if mp4 is not None and (width % 2 or height % 2):
        raise SettingsError(f"render: MP4 (yuv420p) needs an even width and height, got {width}x{height}")
    _check_color_by(color_by)
    rec = _load(recording)
    idx, out_fps, _ = frame_indices(rec, frames, fps)
    renderer = Renderer(rec, width=width, height=height, camera=camera, color_by=color_by, contacts=contacts,
                        ground=ground, body_colors=body_colors, aa=aa, samples=samples, shadow_size=shadow_size,
                        hide_fixed=hide_fixed)
    try:
        if mp4 is not None:
            mp4.parent.mkdir(parents=True, exist_ok=True)
        if pngs is not None:
            pngs.mkdir(parents=True, exist_ok=True)
        writer = Writer(mp4, pngs, (width, height), out_fps)
        writer.start()
        t_setup = time.perf_counter() - t_start
        t_draw = t_read = 0.0
        bar = None
        if progress:
            from tumble.progress import bar as progress_bar

            bar = progress_bar(len(idx), "render", unit="frame")  # shown only when stderr is a terminal
        try:
            for k, f in enumerate(idx):
                t0 = time.perf_counter()
                renderer._draw(int(f))
                t1 = time.perf_counter()
                img = np.ascontiguousarray(renderer.read())
                t2 = time.perf_counter()
                t_draw += t1 - t0
                t_read += t2 - t1
                writer.put(k, img)
                if bar is not None:
                    bar.update(1)
        except BaseException:
            writer.abort()  # stop ffmpeg, keep the original error
            raise
        finally:
            if bar is not None:
                bar.close()
        t_w = time.perf_counter()
        writer.finish()
        t_wait = time.perf_counter() - t_w
    finally:
        renderer.close()
    total = time.perf_counter() - t_start
    return {
        "mp4": str(mp4) if mp4 is not None else None,
        "png_dir": str(pngs) if pngs is not None else None,
        "pngs": writer.pngs,
        "frames": int(len(idx)),
        "frame_indices": [int(i) for i in idx],
        "fps": float(out_fps),
        "width": width, "height": height,
        "camera": renderer.camera.to_dict(),
        "color_by": color_by,
        "speed_max": renderer.scene.speed_max if color_by == "speed" else None,
        "renderer": str(renderer.ctx.info.get("GL_RENDERER", "?")),
        "seconds": {"setup": t_setup, "draw": t_draw, "readback": t_read, "writer_busy": writer.busy_s,
                    "writer_wait": t_wait, "total": total},
        "frames_per_second": len(idx) / total if total > 0 else math.inf,
    }


def render_frame(recording, frame: int = 0, *, width: int = 1280, height: int = 720, camera=None,
                 color_by: str = "body", contacts: bool = False, ground=None, body_colors=None,
                 aa: str | None = "fxaa", samples: int = 0, shadow_size: int | None = None,
                 hide_fixed: bool | None = None, **ignored) -> np.ndarray:
    """Frame ``frame`` of ``recording`` as an (height, width, 3) uint8 RGB array (row 0 at the top).

    Same options as :func:`render`; its output options (``out``, ``fps``, ``frames``, ``png_dir``,
    ``progress``) are accepted and ignored, so one dict of options serves both."""
    unknown = set(ignored) - {"out", "fps", "frames", "png_dir", "progress"}
    if unknown:
        raise SettingsError(f"render_frame: unknown option(s) {sorted(unknown)}")
    with Renderer(recording, width=width, height=height, camera=camera, color_by=color_by, contacts=contacts,
                  ground=ground, body_colors=body_colors, aa=aa, samples=samples, shadow_size=shadow_size,
                  hide_fixed=hide_fixed) as r:
        return np.ascontiguousarray(r.frame(frame))
