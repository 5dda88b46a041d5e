"""The headless OpenGL context of the renderer: one standalone EGL context per thread, made on first use.

``moderngl.create_standalone_context(backend="egl")`` needs ``libEGL.so.1`` and a Mesa (or vendor) EGL
driver; on a machine without a GPU Mesa's ``llvmpipe`` software rasteriser does the work. When the
context cannot be made :func:`context` raises :class:`RenderError` saying which library or driver is
missing, so callers (and tests) can tell "no EGL here" from a bug.
"""

from __future__ import annotations

import ctypes.util
import threading

from tumble.errors import TumbleError

_LOCK = threading.Lock()
_LOCAL = threading.local()  # one context per thread: an EGL context is current in one thread only
_FAILED: str | None = None


class RenderError(TumbleError, RuntimeError):
    """The renderer cannot run here: no EGL / OpenGL 3.3 context, or the GPU ran out of resources."""


def _diagnose(err: BaseException) -> str:
    """A human explanation of why the EGL context failed, naming the missing library or driver."""
    if ctypes.util.find_library("EGL") is None:
        return ("libEGL is not installed (libEGL.so.1 not found): install the EGL loader and a Mesa driver, "
                "e.g. `apt-get install libegl1 libgl1-mesa-dri` (Debian/Ubuntu) or `mesa-libEGL` (Fedora)")
    if ctypes.util.find_library("GL") is None and ctypes.util.find_library("OpenGL") is None:
        return ("libGL / libOpenGL is not installed: install Mesa's OpenGL libraries, "
                "e.g. `apt-get install libgl1 libgl1-mesa-dri`")
    return ("libEGL is present but no EGL display/driver could be opened (is Mesa's EGL driver, e.g. "
            f"libgl1-mesa-dri / llvmpipe, installed?): {type(err).__name__}: {err}")


def context():
    """This thread's moderngl context (EGL, OpenGL >= 3.3 core), created on its first call in the thread.

    Raises :class:`RenderError` naming the missing library (libEGL, libGL, Mesa driver) when it
    cannot be created; the failure is remembered so later calls fail fast with the same message.
    """
    global _FAILED
    ctx = getattr(_LOCAL, "ctx", None)
    if ctx is not None:
        return ctx
    with _LOCK:
        if _FAILED is not None:
            raise RenderError(_FAILED)
        try:
            import moderngl
        except ImportError as e:  # pragma: no cover - moderngl is a pinned dependency
            _FAILED = f"the renderer needs the moderngl package ({e})"
            raise RenderError(_FAILED) from None
        try:
            ctx = moderngl.create_standalone_context(backend="egl", require=330)
        except Exception as e:  # noqa: BLE001 - every backend failure means "no EGL here"
            _FAILED = f"cannot create a headless OpenGL 3.3 context through EGL: {_diagnose(e)}"
            raise RenderError(_FAILED) from None
    _LOCAL.ctx = ctx
    return ctx


def renderer_name() -> str:
    """``GL_RENDERER`` of the context (e.g. ``llvmpipe (LLVM 15.0.6, 256 bits)``)."""
    return str(context().info.get("GL_RENDERER", "?"))
