"""The headless renderer (tumble.viz.render): geometry lands where an independent pinhole camera puts it,
colour modes, MP4/PNG output, and clear errors for bad options.

Needs an EGL/OpenGL context (Mesa, installed by `make test`); without one they fail naming what is missing.
"""

import math

import numpy as np
import pytest

import tumble as tb
from tumble.errors import RecordingError, SettingsError
from tumble.recording import Recording

W, H = 320, 240
CAM = {"eye": (2.5, -6.0, 2.0), "target": (0.6, 0.0, 0.3), "up": (0.0, 0.0, 1.0), "fov": 40.0}
HALF = np.array([0.3, 0.2, 0.15])


@pytest.fixture(scope="module")
def viz():
    from tumble.viz import gl, render

    # no skip: `make test` installs Mesa's EGL (make system-deps); without it gl.context() raises a
    # RenderError that names the missing library, and these tests fail with it
    gl.context()
    return render


@pytest.fixture(scope="module")
def box_recording(tmp_path_factory):
    """One box, no plane, no gravity, moving +x at 1.2 m/s and turning slowly; a frame every 0.25 s."""
    w = tb.World(gravity=(0.0, 0.0, 0.0))
    c, s = math.cos(0.3), math.sin(0.3)
    w.add_body(tb.Box(half_extents=tuple(HALF)), position=(0.0, 0.0, 0.3), orientation=(c, 0.0, 0.0, s),
               linear_velocity=(1.2, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.8))
    path = tmp_path_factory.mktemp("rec") / "box.npz"
    w.run(1.0, 1.0 / 60.0, record=str(path), record_every=15)
    return Recording.load(path)


def pinhole(points, cam, width, height):
    """Independent oracle: pixel (x right, y down, origin top-left) of world points for a look-at camera."""
    eye, target, up = (np.asarray(cam[k], float) for k in ("eye", "target", "up"))
    f = (target - eye) / np.linalg.norm(target - eye)
    s = np.cross(f, up)
    s /= np.linalg.norm(s)
    u = np.cross(s, f)
    focal = 0.5 * height / math.tan(math.radians(cam["fov"]) / 2.0)
    d = np.asarray(points, float) - eye
    z = d @ f
    return np.stack([0.5 * width + focal * (d @ s) / z, 0.5 * height - focal * (d @ u) / z], axis=1)


def box_corners(position, quat, half):
    w, x, y, z = quat
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
    return position + (signs * half) @ R.T


def without_bodies(rec):
    """The same recording with no body spawned yet in any frame (draws the background only)."""
    arrays = dict(rec.arrays)
    arrays["frame_body_count"] = np.zeros_like(arrays["frame_body_count"])
    return Recording(dict(rec.meta), arrays)


def blob_box(img, background, tol=12):
    diff = np.abs(img.astype(int) - background.astype(int)).max(axis=2) > tol
    ys, xs = np.nonzero(diff)
    assert len(xs), "nothing was drawn"
    return np.array([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]), diff


def test_box_lands_where_the_pinhole_camera_puts_it(viz, box_recording):
    rec = box_recording
    opts = dict(width=W, height=H, camera=CAM, ground=False, body_colors={0: (1.0, 0.0, 0.0)})
    background = viz.render_frame(without_bodies(rec), 0, **opts)
    assert background.std(axis=(0, 1)).max() < 25  # a smooth sky, nothing else
    cam = viz.camera_for(rec, CAM, width=W, height=H)
    centres = []
    for f in (0, rec.frame_count - 1):
        img = viz.render_frame(rec, f, **opts)
        assert img.shape == (H, W, 3) and img.dtype == np.uint8
        corners = box_corners(rec.frame_position[f][0], rec.frame_orientation[f][0], HALF)
        expected = pinhole(corners, CAM, W, H)
        np.testing.assert_allclose(cam.project(corners), expected, atol=1e-6)  # the public Camera agrees
        want = np.array([expected[:, 0].min(), expected[:, 1].min(), expected[:, 0].max(), expected[:, 1].max()])
        got, mask = blob_box(img, background)
        assert np.all(np.abs(got - want) <= 3.0), (f, got, want)
        # the blob is red (the body's colour, shaded)
        red = img[mask].astype(int)
        assert np.median(red[:, 0]) > 2 * max(np.median(red[:, 1]), np.median(red[:, 2]), 20)
        centres.append(np.argwhere(mask).mean(axis=0)[::-1])
    # the box moved 1.2 m along +x: its blob moved by the projected displacement of its centre
    p0, p1 = rec.frame_position[0][0], rec.frame_position[-1][0]
    assert p1[0] - p0[0] > 1.0
    shift = pinhole(np.array([p1]), CAM, W, H)[0] - pinhole(np.array([p0]), CAM, W, H)[0]
    np.testing.assert_allclose(centres[1] - centres[0], shift, atol=3.0)


def test_color_by_speed_tells_fast_from_still(viz, tmp_path):
    w = tb.World(gravity=(0.0, 0.0, 0.0))
    w.add_body(tb.Sphere(0.25), position=(0.0, 0.0, 0.3))
    w.add_body(tb.Sphere(0.25), position=(1.2, 0.0, 0.3), linear_velocity=(0.0, 4.0, 0.0))
    path = tmp_path / "two.npz"
    w.run(0.1, 1.0 / 60.0, record=str(path), record_every=3)
    rec = Recording.load(path)
    f = 1
    img = viz.render_frame(rec, f, width=W, height=H, camera=CAM, ground=False, color_by="speed")
    px = pinhole(rec.frame_position[f][:2], CAM, W, H).round().astype(int)
    still, fast = (img[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3).mean(axis=0) for x, y in px)
    assert np.abs(still - fast).max() > 60
    assert fast[1] > fast[2] and fast[0] > still[0]   # viridis top: yellow-green
    assert still[2] > still[1]                         # viridis bottom: dark purple-blue
    by_body = viz.render_frame(rec, f, width=W, height=H, camera=CAM, ground=False, color_by="body")
    assert not np.array_equal(by_body, img)


def test_mp4_and_png_frames_are_written(viz, box_recording, tmp_path):
    import imageio_ffmpeg

    rec = box_recording
    out = viz.render(rec, tmp_path / "box.mp4", width=W, height=H, png_dir=tmp_path / "png", camera="fit",
                     contacts=True, color_by="sleeping")
    n = rec.frame_count
    assert out["frames"] == n and out["pngs"] == n
    assert out["fps"] == pytest.approx(1.0 / (rec.dt * rec.meta["every"]))
    frames, _secs = imageio_ffmpeg.count_frames_and_secs(out["mp4"])
    assert frames == n
    reader = imageio_ffmpeg.read_frames(out["mp4"])
    meta = next(reader)
    assert tuple(meta["size"]) == (W, H)
    first = np.frombuffer(next(reader), np.uint8).reshape(H, W, 3)
    reader.close()
    assert first.std() > 5
    from PIL import Image

    pngs = sorted((tmp_path / "png").glob("frame_*.png"))
    assert [p.name for p in pngs] == [f"frame_{k:05d}.png" for k in range(n)]
    img = np.asarray(Image.open(pngs[-1]))
    assert img.shape == (H, W, 3) and img.std() > 5 and len(np.unique(img.reshape(-1, 3), axis=0)) > 50
    assert out["seconds"]["total"] > 0 and out["frames_per_second"] > 0


def test_every_shape_kind_and_contacts_draw(viz, tmp_path):
    w = tb.World()
    w.add_body(tb.Plane(), fixed=True)
    w.add_body(tb.Box(half_extents=(0.3, 0.2, 0.15)), position=(-0.9, 0.0, 0.15))
    w.add_body(tb.Sphere(0.2), position=(-0.3, 0.0, 0.2))
    w.add_body(tb.Capsule(0.12, 0.25), position=(0.3, 0.0, 0.12), orientation=(0.7071068, 0.7071068, 0.0, 0.0))
    pts = np.array([[0, 0, 0], [0.4, 0, 0], [0, 0.4, 0], [0, 0, 0.4], [0.3, 0.3, 0.3]], float)
    w.add_body(tb.ConvexHull(pts), position=(0.8, -0.2, 0.0))
    path = tmp_path / "shapes.npz"
    w.run(0.2, 1.0 / 60.0, record=str(path), record_every=6)
    rec = Recording.load(path)
    cam = {"eye": (0.0, -4.0, 1.6), "target": (0.0, 0.0, 0.2), "fov": 40.0}
    opts = dict(width=W, height=H, camera=cam, body_colors={k: (0.9, 0.1, 0.1) for k in range(1, 5)})
    img = viz.render_frame(rec, rec.frame_count - 1, **opts)
    bg = viz.render_frame(without_bodies(rec), rec.frame_count - 1, **opts)
    f = rec.frame_count - 1
    centres = rec.frame_position[f][1:5].copy()
    # the hull: its geom frame sits at geom_local_position in the body frame; aim at its vertices' mean
    g = int(np.flatnonzero(rec.geom_type == 4)[0])
    local = rec.geom_local_position[g] + rec.hull(int(rec.geom_hull[g]))[0].mean(axis=0)
    centres[3] = box_corners(rec.frame_position[f][4], rec.frame_orientation[f][4], local)[-1]
    for body, (x, y) in zip(range(1, 5), pinhole(centres, {**cam, "up": (0, 0, 1)}, W, H).round().astype(int)):
        assert np.abs(img[y, x].astype(int) - bg[y, x].astype(int)).max() > 30, f"body {body} not drawn"
    with_contacts = viz.render_frame(rec, f, contacts=True, **opts)
    assert len(rec.contacts(f)["point"]) > 0
    assert not np.array_equal(with_contacts, img)


def test_frame_selection_and_fps(viz):
    from tumble.viz.output import frame_indices

    class Fake:  # a 240 frames/s recording: just what the frame selection reads
        meta = {"dt": 1.0 / 240.0, "every": 1}
        frame_count = 241
        arrays = {"frame_time": np.arange(241) / 240.0}

    idx, fps, rec_fps = frame_indices(Fake, None, None)
    assert rec_fps == pytest.approx(240.0) and fps == pytest.approx(60.0) and list(idx[:3]) == [0, 4, 8]
    idx, fps, _ = frame_indices(Fake, None, 30)
    assert fps == 30 and list(idx[:3]) == [0, 8, 16] and idx[-1] == 240
    idx, fps, _ = frame_indices(Fake, slice(10, 20), None)
    assert list(idx) == list(range(10, 20)) and fps == pytest.approx(60.0)
    idx, _, _ = frame_indices(Fake, [5, -1], 10)
    assert list(idx) == [5, 240]


@pytest.mark.parametrize("kw, words", [
    (dict(camera="drone"), ["camera", "'drone'", "fit"]),
    (dict(camera={"eye": (0, 0, 1), "target": (0, 0, 0), "zoom": 2}), ["camera", "zoom"]),
    (dict(color_by="rainbow"), ["color_by", "'rainbow'", "speed"]),
    (dict(width=321), ["even", "321"]),
    (dict(width=0), ["width", "0"]),
    (dict(fps=-5), ["fps", "-5"]),
    (dict(frames=[0, 999]), ["frames", "999"]),
])
def test_bad_options_raise_settings_errors(viz, box_recording, tmp_path, kw, words):
    with pytest.raises(SettingsError) as e:
        viz.render(box_recording, tmp_path / "x.mp4", **kw)
    msg = str(e.value)
    for word in words:
        assert word in msg, msg


def test_bad_outputs_and_missing_recording(viz, box_recording, tmp_path):
    with pytest.raises(SettingsError, match=r"out=.*\.gif.*\.mp4"):
        viz.render(box_recording, tmp_path / "x.gif")
    with pytest.raises(SettingsError, match="nothing to write"):
        viz.render(box_recording)
    missing = tmp_path / "nope.npz"
    with pytest.raises(RecordingError, match="nope.npz"):
        viz.render(missing, tmp_path / "x.mp4")
    with pytest.raises(RecordingError, match="nope.npz"):
        viz.render_frame(missing, 0)
    with pytest.raises(SettingsError, match="frame 99"):
        viz.render_frame(box_recording, 99, width=W, height=H)


def test_missing_egl_is_explained():
    from tumble.viz import gl

    msg = gl._diagnose(OSError("eglGetDisplay failed"))
    assert "EGL" in msg and ("Mesa" in msg or "libEGL" in msg)
    assert issubclass(gl.RenderError, tb.TumbleError)


@pytest.mark.parametrize("kw", [dict(samples=4), dict(aa=None), dict(shadow_size=0), dict(shadow_size=512),
                                dict(ground=False), dict(camera="top"), dict(camera={"azimuth": 30, "elevation": 10})])
def test_render_options_draw_the_scene(viz, box_recording, kw):
    img = viz.render_frame(box_recording, 1, width=W, height=H, **kw)
    bg = viz.render_frame(without_bodies(box_recording), 1, width=W, height=H, **kw)
    changed = np.abs(img.astype(int) - bg.astype(int)).max(axis=2) > 12
    assert 30 < changed.sum() < 0.9 * W * H


def test_rendering_from_another_thread(viz, box_recording):
    import threading

    here = viz.render_frame(box_recording, 2, width=W, height=H)
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("img", viz.render_frame(box_recording, 2, width=W, height=H)))
    t.start()
    t.join()
    assert np.array_equal(out["img"], here)


def test_elastic_surface_is_drawn_where_the_pinhole_puts_its_vertices(viz, tmp_path):
    """A jelly cube alone (no gravity): its drawn pixels cover the pinhole projection of its surface vertices
    of the last frame, and the background elsewhere (an empty recording of the same camera)."""
    w = tb.World(gravity=(0.0, 0.0, 0.0))
    w.add_elastic_body(tb.TetMesh.box((0.6, 0.6, 0.6), (2, 2, 2)), position=(0.6, 0.0, 0.3),
                       linear_velocity=(0.3, 0.0, 0.0))
    path = tmp_path / "jelly.npz"
    w.run(0.5, 1.0 / 60.0, record=str(path), record_every=10)
    rec = Recording.load(path)
    img = viz.render_frame(rec, rec.frame_count - 1, width=W, height=H, camera=CAM).astype(float)
    x, tris = rec.elastic_mesh(rec.frame_count - 1, 0)
    centre = pinhole(x.mean(axis=0, keepdims=True), CAM, W, H)[0]
    px = np.round(centre).astype(int)
    corner = img[5, 5]
    assert np.abs(img[px[1], px[0]] - corner).sum() > 30     # the body's centre pixel is not background
    pts = pinhole(x, CAM, W, H)
    lo, hi = np.floor(pts.min(axis=0)).astype(int), np.ceil(pts.max(axis=0)).astype(int)
    mask = np.abs(img - corner).sum(axis=2) > 30
    ys, xs = np.nonzero(mask)
    assert xs.min() >= lo[0] - 3 and xs.max() <= hi[0] + 3 and ys.min() >= lo[1] - 3  # nothing outside its box
