"""The browser viewer's HTTP server: a recording served to a three.js page, standard library only.

``serve(path)`` loads and validates a recording (:class:`tumble.errors.RecordingError` before anything
listens), packs it into the payloads below, and serves them from a ``ThreadingHTTPServer`` running in
a daemon thread; it returns ``(server, url)`` at once. ``view(path)`` does the same and blocks until
Ctrl-C (``tumble view run.npz [--port P] [--open]``).

three.js is not fetched at run time: ``web/package.json`` pins it and the build installs it with
``npm ci --prefix src/tumble/viz/viewer/web --no-audit --no-fund``; the page imports it from
``/vendor/`` (``web/node_modules/three/build/``) and ``/vendor/addons/`` (``.../examples/jsm/``)
through an import map. Without ``node_modules`` the server refuses to start
(:class:`ViewerAssetsError`, naming the command to run).

Endpoints (all little-endian, 4-byte elements, row-major):

* ``/`` (``index.html``), ``/viewer.js``, ``/style.css``: the page (``static/``), plain ES modules. Its
  "settings" button (key ``s``) lists the recording's solver settings, non-finite ones as inf / -inf / nan.
* ``/vendor/three.module.js``, ``/vendor/three.core.js``, ``/vendor/addons/...``: three.js.
* ``/recording.json`` (strict JSON, see :func:`tumble.recording.strict_json`: a non-finite float such
  as the shock solver's ``max_correction = inf`` is the string ``"inf"``, ``"-inf"`` or ``"nan"``, and
  the top-level ``nonfinite`` lists the key path of each, e.g. ``[["meta", "settings",
  "max_correction"]]``; the page shows them as such): ``meta`` (scene, solver, dt, every, gravity,
  settings, stage_names, ...),
  ``bodies`` (id, mass, fixed, name, material), ``geoms`` (body, type, size, position, orientation,
  hull), ``hulls`` (vertices, triangles), ``frame_count``, ``body_count``, ``frame_time``,
  ``frame_step``, ``frame_body_count``, ``stage_names``, ``contact_total``, and ``binary``: the layout
  of the binary endpoints (url, dtype, shape, and the byte offset of every section).
* ``/frames.bin``: float32 (F, N, 7): position x y z, orientation w x y z.
* ``/velocities.bin``: float32 (F, N, 6): linear velocity x y z, angular velocity x y z.
  (float64 values beyond float32's range, +-3.4e38, are clipped to it rather than sent as infinities.)
* ``/sleeping.bin``: uint8 (F, N): 1 where the body sleeps.
* ``/contacts.bin``: int32 start (F,), int32 count (F,), int32 body (C, 2) (-1: the world),
  float32 point (C, 3), float32 normal (C, 3) (from body a to body b), float32 depth (C,),
  float32 impulse (C,), in that order.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import webbrowser
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np

from tumble.errors import TumbleError
from tumble.recording import Recording, strict_json

HERE = Path(__file__).resolve().parent
STATIC_DIR = HERE / "static"
WEB_DIR = HERE / "web"
#: the default ``node_modules`` holding three.js (``TUMBLE_VIEWER_NODE_MODULES`` overrides it)
NODE_MODULES = WEB_DIR / "node_modules"
#: the command that installs three.js where the server looks for it
INSTALL_COMMAND = "npm ci --prefix src/tumble/viz/viewer/web --no-audit --no-fund"

STATIC_FILES = {"/": "index.html", "/index.html": "index.html", "/viewer.js": "viewer.js", "/style.css": "style.css"}
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8", ".json": "application/json", ".bin": "application/octet-stream",
                 ".map": "application/json"}


class ViewerAssetsError(TumbleError, RuntimeError):
    """The viewer's front-end files (three.js in ``node_modules``) are missing or the wrong version."""


# ---------------------------------------------------------------------------------------------- assets
def pinned_three_version() -> str:
    """The three.js version ``web/package.json`` depends on."""
    return json.loads((WEB_DIR / "package.json").read_text())["dependencies"]["three"]


def check_vendor(node_modules=None) -> Path:
    """The folder holding three.js (``node_modules/three``); :class:`ViewerAssetsError` if it is absent,
    incomplete or not the pinned version."""
    nm = Path(node_modules or os.environ.get("TUMBLE_VIEWER_NODE_MODULES") or NODE_MODULES)
    three = nm / "three"
    hint = (f"the browser viewer needs three.js installed in {nm}: run `{INSTALL_COMMAND}` "
            f"from the repository root (the viewer never downloads it at run time)")
    need = [three / "package.json", three / "build" / "three.module.js", three / "build" / "three.core.js",
            three / "examples" / "jsm" / "controls" / "OrbitControls.js"]
    missing = [p for p in need if not p.is_file()]
    if missing:
        raise ViewerAssetsError(f"{missing[0]} is missing; {hint}")
    want = pinned_three_version()
    try:
        have = json.loads((three / "package.json").read_text()).get("version")
    except (OSError, ValueError) as e:
        raise ViewerAssetsError(f"{three / 'package.json'} is unreadable ({e}); {hint}") from None
    if have != want:
        raise ViewerAssetsError(f"{three} holds three.js {have}, the viewer pins {want}; {hint}")
    return three


# ---------------------------------------------------------------------------------------------- payloads
_F32_MAX = float(np.finfo(np.float32).max)


def _f32(x) -> bytes:
    """Little-endian float32 bytes; finite float64 values beyond float32's range are clipped, not made inf."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        x = np.clip(x, -_F32_MAX, _F32_MAX)
    return np.ascontiguousarray(x, dtype="<f4").tobytes()


def _i32(x) -> bytes:
    return np.ascontiguousarray(x, dtype="<i4").tobytes()


def _floats(x, digits: int = 7) -> list:
    """Plain lists of rounded floats (JSON); values too large to round (|x| >= 1e15) are kept as they are,
    since rounding would overflow them to inf."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.abs(x) < 1e15, np.round(x, digits), x).tolist()


def build_payloads(rec: Recording, name: str = "") -> dict[str, bytes]:
    """Every data endpoint's body: ``recording.json``, ``frames.bin``, ``velocities.bin``,
    ``sleeping.bin``, ``contacts.bin``."""
    F, N = rec.frame_count, rec.body_count
    C = int(rec.contact_body.shape[0])
    H = int(rec.hull_vertex_start.shape[0])
    frames = np.concatenate([rec.frame_position, rec.frame_orientation], axis=2).reshape(F, N, 7)
    vel = np.concatenate([rec.frame_linear_velocity, rec.frame_angular_velocity], axis=2).reshape(F, N, 6)
    sleeping = np.ascontiguousarray(rec.frame_sleeping, dtype=np.uint8)
    sections = [("start", "int32", (F,), _i32(rec.contact_start)),
                ("count", "int32", (F,), _i32(rec.contact_count)),
                ("body", "int32", (C, 2), _i32(rec.contact_body)),
                ("point", "float32", (C, 3), _f32(rec.contact_point)),
                ("normal", "float32", (C, 3), _f32(rec.contact_normal)),
                ("depth", "float32", (C,), _f32(rec.contact_depth)),
                ("impulse", "float32", (C,), _f32(rec.contact_impulse))]
    layout, offset = {}, 0
    for key, dtype, shape, data in sections:
        layout[key] = {"dtype": dtype, "shape": list(shape), "offset": offset}
        offset += len(data)
    hulls = []
    for h in range(H):
        v, t = rec.hull(h)
        hulls.append({"vertices": _floats(v), "triangles": np.asarray(t, dtype=np.int64).tolist()})
    E = rec.elastic_body_count
    elastic = []
    for e in range(E):
        _, tris = rec.elastic_mesh(0, e)
        elastic.append({"name": str(rec.elastic_body_name[e]), "vertex_start": int(rec.elastic_vertex_start[e]),
                        "vertex_count": int(rec.elastic_vertex_count[e]),
                        "triangles": np.asarray(tris, dtype=np.int64).tolist()})
    EV = int(rec.frame_elastic_position.shape[1]) if E else 0
    elastic_frames = rec.frame_elastic_position if E else np.zeros((F, 0, 3))
    meta = {k: v for k, v in rec.meta.items() if k != "world"}   # the world description serves world_at only
    doc = {
        "format": "tumble-viewer",
        "version": 1,
        "file": name,
        "meta": meta,
        "stage_names": list(rec.meta.get("stage_names", [])),
        "frame_count": F,
        "body_count": N,
        "geom_count": int(rec.geom_body.shape[0]),
        "contact_total": C,
        "frame_time": _floats(rec.frame_time, 9),
        "frame_step": rec.frame_step.astype(np.int64).tolist(),
        "frame_body_count": rec.frame_body_count.astype(np.int64).tolist(),
        "bodies": [{"id": i, "mass": float(rec.body_mass[i]), "fixed": bool(rec.body_fixed[i]),
                    "removed_step": int(rec.body_removed_step[i]),
                    "name": str(rec.body_name[i]), "material": str(rec.body_material[i])} for i in range(N)],
        "geoms": [{"body": int(b), "type": int(t), "size": s, "position": p, "orientation": q, "hull": int(h)}
                  for b, t, s, p, q, h in zip(rec.geom_body, rec.geom_type, _floats(rec.geom_size),
                                              _floats(rec.geom_local_position), _floats(rec.geom_local_orientation),
                                              rec.geom_hull)],
        "hulls": hulls,
        "elastic": elastic,
        "elastic_vertex_total": EV,
        "binary": {
            "frames": {"url": "/frames.bin", "dtype": "float32", "shape": [F, N, 7],
                       "columns": ["px", "py", "pz", "qw", "qx", "qy", "qz"]},
            "velocities": {"url": "/velocities.bin", "dtype": "float32", "shape": [F, N, 6],
                           "columns": ["vx", "vy", "vz", "wx", "wy", "wz"]},
            "sleeping": {"url": "/sleeping.bin", "dtype": "uint8", "shape": [F, N]},
            "contacts": {"url": "/contacts.bin", "sections": layout, "bytes": offset},
            "elastic": {"url": "/elastic.bin", "dtype": "float32", "shape": [F, EV, 3]},
        },
    }
    return {
        "/recording.json": strict_json(doc, separators=(",", ":")).encode(),
        "/frames.bin": _f32(frames),
        "/velocities.bin": _f32(vel),
        "/sleeping.bin": sleeping.tobytes(),
        "/contacts.bin": b"".join(s[3] for s in sections),
        "/elastic.bin": _f32(elastic_frames),
    }


# ---------------------------------------------------------------------------------------------- server
class ViewerServer(ThreadingHTTPServer):
    """The viewer's HTTP server; ``close()`` stops its thread and frees the port."""

    daemon_threads = True
    block_on_close = False  # browsers keep connections alive; close() must not wait for them
    allow_reuse_address = True

    def __init__(self, address, payloads: dict[str, bytes], three_dir: Path, static_dir: Path = STATIC_DIR,
                 quiet: bool = True):
        self.payloads = payloads
        self.three_dir = Path(three_dir)
        self.static_dir = Path(static_dir)
        self.quiet = quiet
        self.thread: threading.Thread | None = None
        super().__init__(address, ViewerHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{port}/"

    def start(self) -> ViewerServer:
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.2},
                                       name="tumble-viewer", daemon=True)
        self.thread.start()
        return self

    def close(self) -> None:
        """Stop serving (waits for the serving thread) and close the socket."""
        if self.thread is not None:
            self.shutdown()
            self.thread.join(timeout=5)
            self.thread = None
        self.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], ConnectionError):  # a browser dropped a kept-alive connection
            return
        super().handle_error(request, client_address)

    def vendor_file(self, path: str) -> Path | None:
        """The three.js file behind ``/vendor/<rest>`` (None if outside the package or not a file)."""
        rest = path[len("/vendor/"):]
        if rest.startswith("addons/"):
            root, rest = self.three_dir / "examples" / "jsm", rest[len("addons/"):]
        else:
            root = self.three_dir / "build"
        if not rest or Path(rest).suffix not in (".js", ".map"):
            return None
        root = root.resolve()
        f = (root / rest).resolve()
        if root not in f.parents or not f.is_file():
            return None
        return f


class ViewerHandler(BaseHTTPRequestHandler):
    server: ViewerServer
    protocol_version = "HTTP/1.1"
    server_version = "tumble-viewer/1"

    def do_GET(self):  # noqa: N802 (http.server naming)
        self._respond(head=False)

    def do_HEAD(self):  # noqa: N802
        self._respond(head=True)

    def _respond(self, head: bool):
        path = unquote(urlsplit(self.path).path)
        srv = self.server
        try:
            if path in srv.payloads:
                ctype = CONTENT_TYPES[Path(path).suffix]
                return self._send(HTTPStatus.OK, srv.payloads[path], ctype, head, cache=False)
            if path in STATIC_FILES:
                f = srv.static_dir / STATIC_FILES[path]
                return self._send(HTTPStatus.OK, f.read_bytes(), CONTENT_TYPES[f.suffix], head, cache=False)
            if path.startswith("/vendor/"):
                f = srv.vendor_file(path)
                if f is not None:
                    return self._send(HTTPStatus.OK, f.read_bytes(), CONTENT_TYPES[f.suffix], head, cache=True)
            if path == "/favicon.ico":
                return self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon", head, cache=True)
            self._send(HTTPStatus.NOT_FOUND, f"not found: {path}\n".encode(), "text/plain; charset=utf-8", head)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send(self, status, body: bytes, ctype: str, head: bool, cache: bool = False):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=3600" if cache else "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002 (http.server's signature)
        if not self.server.quiet:
            super().log_message(format, *args)


def serve(recording_path, host: str = "127.0.0.1", port: int = 0, open_browser: bool = False, *,
          node_modules=None, quiet: bool = True) -> tuple[ViewerServer, str]:
    """Serve the viewer of ``recording_path`` on ``host:port`` (0: a free port) from a daemon thread.

    Returns ``(server, url)``; ``server.close()`` stops it. Raises :class:`RecordingError` for a
    missing or malformed recording and :class:`ViewerAssetsError` when three.js is not installed in
    ``node_modules`` (default ``web/node_modules``), both before anything listens.
    """
    path = Path(recording_path)
    rec = Recording.load(path)
    three = check_vendor(node_modules)
    payloads = build_payloads(rec, path.name)
    server = ViewerServer((host, int(port)), payloads, three, quiet=quiet).start()
    url = server.url
    if open_browser:
        webbrowser.open(url)
    return server, url


def view(path, port: int = 0, open_browser: bool = False, host: str = "127.0.0.1") -> int:
    """``tumble view``: serve ``path`` and block until Ctrl-C; returns 0."""
    server, url = serve(path, host=host, port=port, open_browser=open_browser, quiet=True)
    print(f"tumble viewer: {url}  ({Path(path).name}; Ctrl-C stops)", flush=True)
    try:
        while server.thread is not None and server.thread.is_alive():
            time.sleep(0.5)
    except KeyboardInterrupt:
        print("tumble viewer: stopped", flush=True)
    finally:
        server.close()
    return 0
