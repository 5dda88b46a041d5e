"""The browser viewer end to end: the server's endpoints and errors, then the page in headless Chromium
(Playwright, Debian's /usr/bin/chromium, WebGL in software through SwiftShader): loading, play/pause,
scrubbing, picking a body with the mouse, and screenshots checked for content.

The browser tests skip only where /usr/bin/chromium is missing and TUMBLE_REQUIRE_BROWSER is unset
(CI sets it, so a missing browser fails there). No browser is ever downloaded.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import struct
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import tumble as tb
from tumble.errors import RecordingError, TumbleError
from tumble.recording import Recording
from tumble.viz.viewer import INSTALL_COMMAND, ViewerAssetsError, serve

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    # WebGL without a GPU: ANGLE on SwiftShader (Chromium refuses the software fallback without the opt-in)
    "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
]
VIEWPORT = {"width": 1000, "height": 700}
BACKGROUND = np.array([0x1D, 0x21, 0x29])  # the page's clear colour (viewer.js BACKGROUND)
REST, BALL = 1, 4  # body ids in the recorded scene

needs_browser = pytest.mark.skipif(
    not Path(CHROMIUM).exists() and not os.environ.get("TUMBLE_REQUIRE_BROWSER"),
    reason=f"{CHROMIUM} not installed (set TUMBLE_REQUIRE_BROWSER=1 to make this a failure)",
)


# ---------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def recording_path(tmp_path_factory) -> Path:
    """A small scene, recorded here: a resting box, a falling box, a sliding box, a falling sphere (and a
    capsule and a hull, so every instanced kind is drawn)."""
    w = tb.World()
    w.add_body(tb.Plane(), fixed=True, name="ground")
    w.add_body(tb.Box((0.25, 0.25, 0.25)), position=(0.0, 0.0, 0.25), name="rest", mass=2.0)
    w.add_body(tb.Box((0.2, 0.3, 0.15)), position=(1.0, 0.2, 1.2), orientation=(0.96, 0.2, 0.1, 0.15), name="drop")
    w.add_body(tb.Box((0.15, 0.15, 0.15)), position=(-1.0, -0.4, 0.15), linear_velocity=(2.5, 0.0, 0.0),
               name="slide")
    w.add_body(tb.Sphere(0.22), position=(0.0, -0.9, 1.4), linear_velocity=(0.0, 0.6, 0.0), name="ball", mass=3.5)
    # one of each other drawn kind, off to the side: a lying capsule and a tetrahedral hull
    w.add_body(tb.Capsule(0.1, 0.25), position=(-1.0, 1.0, 0.1), orientation=(0.7071068, 0.7071068, 0.0, 0.0),
               name="capsule")
    tetra = np.array([[0, 0, 0], [0.4, 0, 0], [0, 0.4, 0], [0, 0, 0.4]], dtype=float)
    w.add_body(tb.ConvexHull(tetra), position=(1.1, -1.0, 0.05), name="hull")
    path = tmp_path_factory.mktemp("viewer") / "run.npz"
    w.run(1.2, dt=1 / 60, record=str(path), record_every=2)
    # the resting box sleeps in the second half (as a sleeping-capable solver would record it)
    rec = Recording.load(path)
    rec.frame_sleeping[rec.frame_count // 2:, REST] = True
    rec.save(path)
    return path


@pytest.fixture(scope="module")
def rec(recording_path) -> Recording:
    return Recording.load(recording_path)


@pytest.fixture(scope="module")
def server(recording_path):
    srv, url = serve(recording_path, port=0)
    yield srv, url
    srv.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def _open_viewer(ctx, url):
    """A page of ``ctx`` on the viewer at ``url``, loaded (ready or failed), collecting page errors and
    console errors in the returned list."""
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.goto(url)
    pg.wait_for_function("window.tumbleViewer && (window.tumbleViewer.ready || window.tumbleViewer.error)",
                         timeout=30_000)
    return pg, errors


@pytest.fixture(scope="module")
def page(browser, server):
    _, url = server
    ctx = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    pg, errors = _open_viewer(ctx, url)
    assert pg.evaluate("window.tumbleViewer.error") is None
    pg.errors = errors
    yield pg
    assert not errors, errors
    ctx.close()


def hook(page, expr: str):
    return page.evaluate(f"window.tumbleViewer.{expr}")


def wait_rendered(page):
    """Wait until the page has drawn every change made so far."""
    page.evaluate("window.tumbleViewer.rendered()")


def set_frame(page, f: int):
    page.locator("#timeline").fill(str(f))  # what dragging the slider does: an input event
    page.wait_for_function(f"window.tumbleViewer.frame === {f}", timeout=5_000)
    wait_rendered(page)


def screenshot(page, path: Path) -> np.ndarray:
    from PIL import Image

    page.screenshot(path=str(path))
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.int16)


def patch(img: np.ndarray, xy, half: int) -> np.ndarray:
    x, y = int(round(xy[0])), int(round(xy[1]))
    return img[max(0, y - half): y + half + 1, max(0, x - half): x + half + 1]


# ---------------------------------------------------------------------------------------------- server
def test_endpoints(server, rec):
    _, url = server
    F, N = rec.frame_count, rec.body_count
    C = rec.contact_body.shape[0]
    with urllib.request.urlopen(url + "recording.json") as r:
        doc = json.load(r)
    assert doc["frame_count"] == F and doc["body_count"] == N and doc["contact_total"] == C
    assert [b["mass"] for b in doc["bodies"]] == pytest.approx(rec.body_mass.tolist())
    assert [b["name"] for b in doc["bodies"]] == ["ground", "rest", "drop", "slide", "ball", "capsule", "hull"]
    assert len(doc["hulls"]) == 1 and len(doc["hulls"][0]["triangles"]) == 4
    assert [g["type"] for g in doc["geoms"]] == rec.geom_type.tolist()
    assert doc["frame_time"] == pytest.approx(rec.frame_time.tolist())
    assert doc["stage_names"] == rec.meta["stage_names"]

    def get(path):
        with urllib.request.urlopen(url + path) as r:
            return r.read()

    frames = np.frombuffer(get("frames.bin"), "<f4").reshape(F, N, 7)
    np.testing.assert_allclose(frames[..., :3], rec.frame_position, atol=1e-5)
    np.testing.assert_allclose(frames[..., 3:], rec.frame_orientation, atol=1e-6)
    vel = np.frombuffer(get("velocities.bin"), "<f4").reshape(F, N, 6)
    np.testing.assert_allclose(vel[..., 3:], rec.frame_angular_velocity, atol=1e-4)
    assert np.frombuffer(get("sleeping.bin"), np.uint8).shape == (F * N,)
    blob = get("contacts.bin")
    sec = doc["binary"]["contacts"]["sections"]
    assert len(blob) == doc["binary"]["contacts"]["bytes"] == 4 * (2 * F + 2 * C + 3 * C + 3 * C + C + C)
    f = int(np.argmax(rec.contact_count))
    c = rec.contacts(f)
    start = struct.unpack_from("<i", blob, sec["start"]["offset"] + 4 * f)[0]
    assert start == rec.contact_start[f]
    bodies = np.frombuffer(blob, "<i4", count=2 * C, offset=sec["body"]["offset"]).reshape(C, 2)
    np.testing.assert_array_equal(bodies[start:start + len(c["body"])], c["body"])

    for path in ("", "viewer.js", "style.css", "vendor/three.module.js", "vendor/three.core.js",
                 "vendor/addons/controls/OrbitControls.js"):
        assert len(get(path)) > 100, path
    assert b'"three": "/vendor/three.module.js"' in get("")
    host, port = server[0].server_address[:2]
    for bad in ("/vendor/../package.json", "/vendor/%2e%2e/%2e%2e/package.json", "/vendor/../src/Three.js",
                "/vendor/addons/../../build/three.module.js", "/nope", "/vendor/"):
        conn = http.client.HTTPConnection(host, port, timeout=5)
        conn.request("GET", bad)
        assert conn.getresponse().status == 404, bad
        conn.close()


def test_bad_recordings_raise_before_serving(tmp_path):
    with pytest.raises(RecordingError, match="no such recording"):
        serve(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip at all")
    with pytest.raises(RecordingError, match="junk.npz"):
        serve(junk)
    partial = tmp_path / "partial.npz"
    np.savez(partial, meta=np.array(json.dumps({"format": "tumble-recording", "version": 1})))
    with pytest.raises(RecordingError):
        serve(partial)


def test_missing_three_js_is_a_clear_error(recording_path, tmp_path):
    with pytest.raises(ViewerAssetsError) as e:
        serve(recording_path, node_modules=tmp_path / "node_modules")
    msg = str(e.value)
    assert INSTALL_COMMAND in msg and "three" in msg and str(tmp_path) in msg
    assert isinstance(e.value, TumbleError)
    # a three.js of another version than package.json pins is refused the same way
    fake = tmp_path / "nm" / "three"
    for rel in ("build/three.module.js", "build/three.core.js", "examples/jsm/controls/OrbitControls.js"):
        (fake / rel).parent.mkdir(parents=True, exist_ok=True)
        (fake / rel).write_text("// stub\n")
    (fake / "package.json").write_text(json.dumps({"name": "three", "version": "0.1.0"}))
    with pytest.raises(ViewerAssetsError, match="0.1.0"):
        serve(recording_path, node_modules=tmp_path / "nm")


# ---------------------------------------------------------------------------------------------- page
@needs_browser
def test_page_loads(page, rec):
    assert hook(page, "frameCount") == rec.frame_count
    assert hook(page, "bodyCount") == rec.body_count
    assert hook(page, "frame") == 0 and hook(page, "playing") is False and hook(page, "selected") == -1
    assert page.locator("#timeline").get_attribute("max") == str(rec.frame_count - 1)
    assert page.inner_text("#frame-label").startswith(f"frame 0 / {rec.frame_count - 1}")
    print("WebGL:", hook(page, "glRenderer"), hook(page, "options"))
    for sel in ("#play", "#speed", "#toggle-contacts", "#toggle-sleeping", "#color-mode", "canvas"):
        assert page.locator(sel).is_visible(), sel
    speeds = page.eval_on_selector_all("#speed option", "os => os.map(o => Number(o.value))")
    assert speeds == [0.25, 0.5, 1, 2, 4]


@needs_browser
def test_play_pause_and_scrub(page, rec):
    label0 = page.inner_text("#frame-label")
    page.select_option("#speed", "0.5")
    page.click("#play")
    assert page.get_attribute("#play", "data-state") == "playing"
    page.wait_for_function("window.tumbleViewer.frame >= 3", timeout=15_000)
    # software WebGL draws a few frames a second, so input lands late: while playing the frame may have looped
    page.click("#play")  # pause
    assert hook(page, "playing") is False and page.get_attribute("#play", "data-state") == "paused"
    f = hook(page, "frame")
    page.wait_for_timeout(400)
    assert hook(page, "frame") == f
    assert page.inner_text("#frame-label").startswith(f"frame {f} /")
    if f != 0:
        assert page.inner_text("#frame-label") != label0

    page.uncheck("#toggle-loop")

    page.select_option("#speed", "4")  # without loop, playing stops at the last frame
    page.click("#play")
    page.wait_for_function("!window.tumbleViewer.playing", timeout=15_000)
    assert hook(page, "frame") == rec.frame_count - 1
    page.select_option("#speed", "1")
    page.check("#toggle-loop")

    ball = BALL
    set_frame(page, 0)
    p0, s0 = hook(page, f"bodyPosition({ball})"), hook(page, f"bodyScreenPosition({ball})")
    k = rec.frame_count * 2 // 3
    set_frame(page, k)
    assert page.inner_text("#frame-label").startswith(f"frame {k} /")
    pk, sk = hook(page, f"bodyPosition({ball})"), hook(page, f"bodyScreenPosition({ball})")
    np.testing.assert_allclose(p0, rec.frame_position[0, ball], atol=1e-5)
    np.testing.assert_allclose(pk, rec.frame_position[k, ball], atol=1e-5)
    assert np.hypot(sk[0] - s0[0], sk[1] - s0[1]) > 20  # the ball fell: it moved on screen


@needs_browser
def test_click_selects_body_and_screenshots(page, rec, tmp_path):
    ball, k0 = BALL, 0
    k = rec.frame_count - 1
    assert np.linalg.norm(rec.frame_position[k, ball] - rec.frame_position[k0, ball]) > 0.5

    # the same region in two frames where the ball moved differs
    set_frame(page, k0)
    img0 = screenshot(page, tmp_path / "frame_first.png")
    xy0 = hook(page, f"bodyScreenPosition({ball})")
    set_frame(page, k)
    img1 = screenshot(page, tmp_path / "frame_last.png")
    region0 = np.abs(patch(img0, xy0, 12) - patch(img1, xy0, 12)).mean()
    assert region0 > 20, region0

    # the canvas shows a scene, not one colour
    canvas = img1[: VIEWPORT["height"] - 90]
    colours = len(np.unique(canvas.reshape(-1, 3), axis=0))
    assert colours > 200 and canvas.std() > 15, (colours, canvas.std())
    xy = hook(page, f"bodyScreenPosition({ball})")
    before = patch(img1, xy, 3).reshape(-1, 3).mean(axis=0)
    assert np.abs(before - BACKGROUND).sum() > 60, before  # a body is drawn there, not the background

    # click exactly on the ball's projected centre: it is selected and described
    assert hook(page, f"screenToBody({xy[0]}, {xy[1]})") == ball
    page.mouse.click(xy[0], xy[1])
    page.wait_for_function(f"window.tumbleViewer.selected === {ball}", timeout=5_000)
    info = page.locator("#info")
    assert info.is_visible()
    assert page.inner_text("#info-id") == str(ball)
    assert "ball" in page.inner_text("#info-name")
    assert float(page.get_attribute("#info-mass", "data-value")) == pytest.approx(rec.body_mass[ball], rel=1e-9)
    assert page.inner_text("#info-mass").startswith(f"{rec.body_mass[ball]:g}")
    v = rec.frame_linear_velocity[k, ball]
    speed = float(page.inner_text("#info-speed").split()[0])
    assert speed == pytest.approx(np.linalg.norm(v), rel=1e-3, abs=1e-6)
    c = rec.contacts(k)
    mine = np.any(c["body"] == ball, axis=1)
    assert int(page.get_attribute("#info-contact-count", "data-value")) == int(mine.sum())
    if mine.any():
        assert "0" in page.inner_text("#info-contacts tbody")  # the ground is the other body

    # the selected body is highlighted: its pixels turn the selection yellow
    page.check("#toggle-contacts")
    wait_rendered(page)
    selected_png = tmp_path / "selected.png"
    img2 = screenshot(page, selected_png)
    after = patch(img2, xy, 3).reshape(-1, 3).mean(axis=0)
    assert after[0] > 150 and after[1] > 120 and after[2] < 90, after  # yellow (#ffd400, lit)
    assert np.abs(after - before).sum() > 60, (before, after)
    assert np.abs(after - BACKGROUND).sum() > 200
    ground = patch(img2, (20, VIEWPORT["height"] - 120), 3).reshape(-1, 3).mean(axis=0)
    assert np.abs(after - ground).sum() > 100, (after, ground)
    print(f"viewer screenshot with body {ball} selected: {selected_png}")

    # clicking empty background deselects
    page.mouse.click(VIEWPORT["width"] // 2, 60)
    page.wait_for_function("window.tumbleViewer.selected === -1", timeout=5_000)
    assert not info.is_visible()
    page.uncheck("#toggle-contacts")


@needs_browser
def test_sleeping_and_speed_colours(page, rec, tmp_path):
    last = rec.frame_count - 1
    assert rec.frame_sleeping[last, REST] and not rec.frame_sleeping[0, REST]
    set_frame(page, last)
    xy = hook(page, f"bodyScreenPosition({REST})")
    assert hook(page, f"screenToBody({xy[0]}, {xy[1]})") == REST
    plain = patch(screenshot(page, tmp_path / "awake.png"), xy, 2).reshape(-1, 3).mean(axis=0)

    page.check("#toggle-sleeping")  # highlight: sleeping bodies turn slate blue
    wait_rendered(page)
    marked = patch(screenshot(page, tmp_path / "sleeping.png"), xy, 2).reshape(-1, 3).mean(axis=0)
    assert np.abs(marked - plain).sum() > 40, (plain, marked)
    assert marked[2] > marked[0], marked

    page.check("#hide-sleeping")  # hide: the sleeping box is gone, not pickable
    wait_rendered(page)
    assert hook(page, f"screenToBody({xy[0]}, {xy[1]})") != REST
    gone = patch(screenshot(page, tmp_path / "hidden.png"), xy, 2).reshape(-1, 3).mean(axis=0)
    assert np.abs(gone - marked).sum() > 40, (marked, gone)
    set_frame(page, 0)  # awake at frame 0: drawn again
    p0 = hook(page, f"bodyScreenPosition({REST})")
    assert hook(page, f"screenToBody({p0[0]}, {p0[1]})") == REST
    page.uncheck("#hide-sleeping")
    page.uncheck("#toggle-sleeping")

    page.select_option("#color-mode", "speed")
    assert page.locator("#legend").is_visible()
    live = np.arange(rec.body_count)[None, :] < rec.frame_body_count[:, None]
    speed = np.linalg.norm(rec.frame_linear_velocity, axis=2)[:, ~rec.body_fixed][live[:, ~rec.body_fixed]]
    assert float(page.inner_text("#legend-max").split()[0]) == pytest.approx(speed.max(), rel=2e-3)
    page.select_option("#color-mode", "body")
    assert not page.locator("#legend").is_visible()


# ---------------------------------------------------------------------------------------------- issue 17
# every solver's recording opens, plays and inspects: recording.json is strict JSON (the shock solver's
# max_correction = inf was sent as `Infinity` and the page died with "Unexpected token 'I' ... is not
# valid JSON"); non-finite settings travel as "inf" / "-inf" / "nan" and the settings panel shows them
SOLVER_CASES = ["pgs", "shock", "impulse", "nonfinite"]


def _strict_loads(data: bytes):
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(data, parse_constant=refuse)


@pytest.fixture(scope="module")
def solver_recordings(tmp_path_factory) -> dict[str, Path]:
    """A short run of each solver (plane, a box, a falling ball); "nonfinite" is the shock run with
    more non-finite settings (nan, -inf) written into its meta."""
    out = {}
    folder = tmp_path_factory.mktemp("solvers")
    for case in SOLVER_CASES:
        solver = "shock" if case == "nonfinite" else case
        w = tb.World(solver=solver)
        w.add_body(tb.Plane(), fixed=True, name="ground")
        w.add_body(tb.Box((0.3, 0.3, 0.3)), position=(0.0, 0.0, 0.3), name="crate")
        w.add_body(tb.Sphere(0.25), position=(0.8, 0.0, 1.2), name="ball")
        path = folder / f"{case}.npz"
        w.run(0.3, dt=1 / 120, record=str(path), record_every=2)
        if case == "nonfinite":
            rec = Recording.load(path)
            rec.meta["settings"].update(tolerance=math.nan, cfm=-math.inf)
            rec.save(path)
        out[case] = path
    return out


@pytest.mark.parametrize("case", SOLVER_CASES)
def test_recording_json_is_strict_for_every_solver(solver_recordings, case):
    from tumble.viz.viewer.server import build_payloads

    rec = Recording.load(solver_recordings[case])
    assert rec.solver == ("shock" if case == "nonfinite" else case)
    doc = _strict_loads(build_payloads(rec, "x.npz")["/recording.json"])
    settings = doc["meta"]["settings"]
    if rec.solver == "shock":
        assert settings["max_correction"] == "inf" and ["meta", "settings", "max_correction"] in doc["nonfinite"]
    if case == "nonfinite":
        assert settings["tolerance"] == "nan" and settings["cfm"] == "-inf"
        assert sorted(doc["nonfinite"]) == [["meta", "settings", k]
                                            for k in ("cfm", "max_correction", "spin_substep_angle", "spin_substep_arc",
                                                      "tolerance")]
    if case in ("pgs", "impulse"):
        assert "nonfinite" not in doc


@needs_browser
@pytest.mark.parametrize("case", SOLVER_CASES)
def test_every_solver_recording_opens_plays_and_inspects(browser, solver_recordings, case):
    path = solver_recordings[case]
    rec = Recording.load(path)
    srv, url = serve(path, port=0)
    ctx = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    try:
        pg, errors = _open_viewer(ctx, url)
        assert hook(pg, "error") is None, hook(pg, "error")
        assert hook(pg, "frameCount") == rec.frame_count and hook(pg, "bodyCount") == rec.body_count
        assert f"· {rec.solver} ·" in pg.inner_text("#scene-label")

        # play, pause, scrub
        pg.click("#play")
        pg.wait_for_function("window.tumbleViewer.frame >= 2", timeout=15_000)
        pg.click("#play")
        assert hook(pg, "playing") is False
        last = rec.frame_count - 1
        set_frame(pg, last)
        assert pg.inner_text("#frame-label").startswith(f"frame {last} /")
        np.testing.assert_allclose(hook(pg, "bodyPosition(2)"), rec.frame_position[last, 2], atol=1e-5)

        # inspect: click the ball
        xy = hook(pg, "bodyScreenPosition(2)")
        assert hook(pg, f"screenToBody({xy[0]}, {xy[1]})") == 2
        pg.mouse.click(xy[0], xy[1])
        pg.wait_for_function("window.tumbleViewer.selected === 2", timeout=5_000)
        assert pg.locator("#info").is_visible() and "ball" in pg.inner_text("#info-name")
        assert float(pg.get_attribute("#info-mass", "data-value")) == pytest.approx(rec.body_mass[2], rel=1e-9)
        pg.keyboard.press("Escape")
        pg.wait_for_function("window.tumbleViewer.selected === -1", timeout=5_000)

        # the settings panel lists every setting; non-finite ones read inf / -inf / nan
        assert not pg.locator("#settings").is_visible()
        pg.click("#toggle-settings")
        assert pg.locator("#settings").is_visible() and hook(pg, "settingsShown()") is True
        assert pg.inner_text("#settings-solver") == rec.solver
        cells = pg.eval_on_selector_all("#settings-table td", "tds => tds.map(t => [t.dataset.key, t.textContent])")
        shown = dict(cells)
        assert set(shown) == set(rec.meta["settings"])
        # a setting of every solver's contact model (impulse has no iterations)
        assert float(shown["restitution_threshold"]) == rec.meta["settings"]["restitution_threshold"]
        expect = {}
        if rec.solver == "shock":
            expect["max_correction"] = "inf"
        if case == "nonfinite":
            expect.update(tolerance="nan", cfm="-inf")
        for key, text in expect.items():
            assert shown[key] == text, key
            assert "nonfinite" in pg.get_attribute(f'#settings-table td[data-key="{key}"]', "class")
        settings = hook(pg, "settings")  # decoded back into numbers on the page
        if rec.solver == "shock":
            assert settings["max_correction"] == math.inf
        if case == "nonfinite":
            assert math.isnan(settings["tolerance"]) and settings["cfm"] == -math.inf
        pg.click("#settings-close")
        assert not pg.locator("#settings").is_visible()
        assert not errors, errors
    finally:
        ctx.close()
        srv.close()


@needs_browser
def test_removed_body_disappears_at_its_removal(browser, tmp_path):
    """World.remove_body mid-run: the viewer draws the crate up to its removal and not after; the
    picker no longer finds it and the info panel calls it removed."""
    w = tb.World(solver="pgs")
    w.add_body(tb.Plane(), fixed=True, name="ground")
    crate = w.add_body(tb.Box((0.3, 0.3, 0.3)), position=(0.0, 0.0, 0.3), name="crate")
    w.add_body(tb.Sphere(0.25), position=(0.8, 0.0, 1.2), name="ball")
    path = tmp_path / "removed.npz"

    def remove(world):
        if world.step_count == 10:
            world.remove_body(crate)

    w.run(0.2, dt=1 / 120, record=str(path), callback=remove)
    rec = Recording.load(path)
    srv, url = serve(path, port=0)
    ctx = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    try:
        pg, errors = _open_viewer(ctx, url)
        assert hook(pg, "error") is None, hook(pg, "error")
        set_frame(pg, 10)
        assert hook(pg, f"bodyAlive({crate})") is True
        xy = hook(pg, f"bodyScreenPosition({crate})")
        assert hook(pg, f"screenToBody({xy[0]}, {xy[1]})") == crate
        set_frame(pg, rec.frame_count - 1)
        wait_rendered(pg)
        assert hook(pg, f"bodyAlive({crate})") is False
        assert hook(pg, f"screenToBody({xy[0]}, {xy[1]})") != crate
        pg.evaluate(f"window.tumbleViewer.select({crate})")
        assert pg.inner_text("#info-state") == "removed"
        assert not errors, errors
    finally:
        ctx.close()
        srv.shutdown()


@needs_browser
def test_elastic_body_plays_and_matches_the_recording(browser, tmp_path):
    """A jelly block dropped on the floor with a rigid box on it: the page loads without errors, builds one
    mesh per elastic body, and at the last frame the drawn vertex positions are the recorded ones."""
    w = tb.World(solver="pgs")
    w.add_body(tb.Plane(), fixed=True, name="ground")
    jelly = tb.ElasticMaterial(1000.0, 2.0e5, 6.0e4, 0.0, 50.0)
    w.add_elastic_body(tb.TetMesh.box((0.4, 0.4, 0.3), (2, 2, 2)), position=(0.0, 0.0, 0.2), material=jelly,
                       name="jelly")
    w.add_body(tb.Box((0.1, 0.1, 0.05)), position=(0.0, 0.0, 0.45), mass=1.0, name="lid")
    path = tmp_path / "elastic.npz"
    w.run(0.3, dt=1 / 120, record=str(path), record_every=4)
    rec = Recording.load(path)
    assert rec.elastic_body_count == 1
    srv, url = serve(path, port=0)
    ctx = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    try:
        pg, errors = _open_viewer(ctx, url)
        assert hook(pg, "error") is None, hook(pg, "error")
        assert hook(pg, "elasticCount()") == 1
        last = rec.frame_count - 1
        set_frame(pg, last)
        drawn = np.array(hook(pg, "elasticVertices(0)")).reshape(-1, 3)
        x, _ = rec.elastic_mesh(last, 0)
        np.testing.assert_allclose(drawn, x, atol=1e-5)
        set_frame(pg, 0)
        first = np.array(hook(pg, "elasticVertices(0)")).reshape(-1, 3)
        np.testing.assert_allclose(first, rec.elastic_mesh(0, 0)[0], atol=1e-5)
        assert not np.allclose(first, drawn, atol=1e-3)     # it moved: the frames are really played
        assert not errors, errors
    finally:
        ctx.close()
        srv.shutdown()
