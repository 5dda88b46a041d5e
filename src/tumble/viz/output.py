"""Output side of the renderer: which recorded frames go out at which rate, and the writer thread
that feeds ffmpeg (libx264, yuv420p, through imageio-ffmpeg) and writes PNG frames off the render thread."""

from __future__ import annotations

import math
import os
import queue
import threading
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

from tumble.errors import SettingsError
from tumble.viz.gl import RenderError

MAX_FPS = 60.0


def frame_indices(rec, frames, fps):
    """(recorded frame indices to draw, output frames per second, recorded frames per second).

    The recording holds a frame every dt * every seconds, i.e. rec_fps = 1 / (dt * every).
    ``frames`` None and ``fps`` None: every k-th frame with k = ceil(rec_fps / 60), played at rec_fps / k
    (real time, at most 60 fps). ``fps`` given: output instants t0 + j / fps up to the last frame's time,
    each showing the recorded frame nearest in time (real time at that rate). ``frames`` given (slice or
    indices, negative ones from the end): exactly those, at ``fps`` or min(rec_fps / |slice step|, 60)."""
    n = rec.frame_count
    every = rec.meta.get("every", 1)
    rec_fps = 1.0 / (float(rec.meta["dt"]) * (every if isinstance(every, int) and every > 0 else 1))
    real = (int, float, Fraction, np.integer, np.floating)
    if fps is not None and (isinstance(fps, bool) or not isinstance(fps, real)
                            or not math.isfinite(float(fps)) or not 0 < float(fps) <= 1000):
        raise SettingsError(f"render: field fps={fps!r} must be a number of frames per second in (0, 1000]")
    if frames is None:
        if fps is None:  # real time; skip frames to stay at or below 60 fps
            step = max(1, math.ceil(rec_fps / MAX_FPS - 1e-9))
            return np.arange(0, n, step), rec_fps / step, rec_fps
        # real time at the asked rate: the recorded frame nearest to each output instant
        t = np.asarray(rec.arrays["frame_time"], float)
        out_t = np.arange(t[0], t[-1] + 1e-9, 1.0 / float(fps))
        idx = np.clip(np.searchsorted(t, out_t), 0, n - 1)
        prev = np.clip(idx - 1, 0, n - 1)
        idx = np.where(np.abs(t[prev] - out_t) <= np.abs(t[idx] - out_t), prev, idx)
        return idx, float(fps), rec_fps
    if isinstance(frames, slice):
        idx = np.arange(n)[frames]
        step = abs(frames.step or 1)
    else:
        if isinstance(frames, (int, np.integer)) and not isinstance(frames, bool):
            frames = [frames]
        try:
            idx = np.asarray(list(frames))
        except TypeError:
            raise SettingsError(f"render: field frames={frames!r} must be a slice or a sequence of frame "
                                "indices") from None
        if idx.size and idx.dtype.kind not in "iu":
            raise SettingsError(f"render: field frames={frames!r} must hold integer frame indices")
        idx = idx.astype(np.int64).reshape(-1)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            bad = idx[(idx < -n) | (idx >= n)][0]
            raise SettingsError(f"render: field frames holds {int(bad)}, outside the recording's frames 0..{n - 1}")
        idx = idx % n
        step = 1
    if idx.size == 0:
        raise SettingsError(f"render: field frames={frames!r} selects no frame (the recording has {n})")
    return idx, (float(fps) if fps is not None else min(rec_fps / step, MAX_FPS)), rec_fps


class Writer(threading.Thread):
    """Consumes frames from a queue: sends them to ffmpeg and/or writes PNGs, off the render thread."""

    def __init__(self, mp4: Path | None, png_dir: Path | None, size, fps):
        super().__init__(daemon=True, name="tumble-render-writer")
        self.q: queue.Queue = queue.Queue(maxsize=6)
        self.mp4, self.png_dir, self.size, self.fps = mp4, png_dir, size, fps
        self.error: BaseException | None = None
        self.busy_s = 0.0
        self.pngs = 0
        self.gen = None
        if mp4 is not None:
            import imageio_ffmpeg

            self.gen = imageio_ffmpeg.write_frames(
                str(mp4), size, fps=Fraction(fps).limit_denominator(1000), codec="libx264", pix_fmt_out="yuv420p",
                quality=None, macro_block_size=2, ffmpeg_log_level="error",
                output_params=["-preset", "veryfast", "-crf", "20", "-movflags", "+faststart"])
            self.gen.send(None)

    def run(self):
        from PIL import Image

        while True:
            item = self.q.get()
            if item is None:
                break
            if self.error is not None:
                continue
            k, img = item
            t0 = time.perf_counter()
            try:
                if self.gen is not None:
                    self.gen.send(img)
                if self.png_dir is not None:
                    Image.fromarray(img).save(self.png_dir / f"frame_{k:05d}.png", compress_level=1)
                    self.pngs += 1
            except BaseException as e:  # noqa: BLE001 - re-raised on the render thread
                self.error = e
            self.busy_s += time.perf_counter() - t0
        if self.gen is not None:
            try:
                self.gen.close()
            except BaseException as e:  # noqa: BLE001
                self.error = self.error or e

    def put(self, k, img):
        if self.error is not None:
            raise RenderError(f"render: writing the output failed: {self.error}") from self.error
        self.q.put((k, img))

    def abort(self):
        """Stop after the frames already queued, ignoring write errors (the caller is raising its own)."""
        self.q.put(None)
        self.join()

    def finish(self):
        self.q.put(None)
        self.join()
        if self.error is not None:
            raise RenderError(f"render: writing the output failed: {self.error}") from self.error


def outputs(out, png_dir):
    mp4 = pngs = None
    if out is not None:
        if not isinstance(out, (str, os.PathLike)):
            raise SettingsError(f"render: field out={out!r} must be a path (.mp4 file or a directory)")
        p = Path(out)
        if p.suffix.lower() == ".mp4":
            mp4 = p
        elif p.suffix == "" or p.is_dir():
            pngs = p
        else:
            raise SettingsError(f"render: field out={str(out)!r} must end in .mp4 (video) or name a directory "
                                "(PNG frames)")
    if png_dir is not None:
        if not isinstance(png_dir, (str, os.PathLike)):
            raise SettingsError(f"render: field png_dir={png_dir!r} must be a directory path")
        if pngs is not None and Path(png_dir) != pngs:
            raise SettingsError(f"render: out={str(out)!r} is already a PNG directory; png_dir={str(png_dir)!r} "
                                "would be a second one")
        pngs = Path(png_dir)
    if mp4 is None and pngs is None:
        raise SettingsError("render: nothing to write: give out (.mp4 or a directory) or png_dir")
    if pngs is not None and pngs.exists() and not pngs.is_dir():
        raise SettingsError(f"render: PNG directory {str(pngs)!r} exists and is not a directory")
    return mp4, pngs
