"""
Exports for slides and for other tools.

    export_frame                   the current frame as .png / .svg: the slide-sized ring view
                                   at the playback's t, drawn by `frame_image` like a GIF frame
    export_png / export_svg        a widget as it is (any widget)
    export_animation               the whole animation to GIF or MP4 (imageio; MP4 needs
                                   imageio-ffmpeg, the project's `export` extra)
    export_trace_chrome / _csv     the trace, for Perfetto / chrome://tracing and spreadsheets

Every frame is a function of (trace, t): the exporter seeks the one Playback clock to each
frame's t and grabs the widget, so frame k of a GIF is exactly what the window shows at that
t. Every file is written to a temporary file beside the target and moved into place with
os.replace: a reader never sees half a file, a cancelled or failed export leaves nothing.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QCoreApplication, QPoint, QRectF, QSize, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView

from simcore.trace import Trace

from ..core.frame import monotone_step_ends


SLIDE_SIZE = (1280, 720)  # exported frames: 16:9, what a slide template expects


from ..files import ExportCancelled, ExportError, atomic_write, check_writable  # noqa: F401  (its API)


# ---------------------------------------------------------------------------------------
# Writing files atomically
# ---------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------
# The trace
# ---------------------------------------------------------------------------------------
def export_trace_chrome(trace: Trace, path: str):
    """Chrome trace-event JSON (one process per device, send and receive tracks, arrows from
    each send to its receive), streamed to the file; gzipped when the name ends in .gz."""
    atomic_write(path, lambda tmp: trace.write_chrome(tmp, flows=True))


def export_trace_csv(trace: Trace, path: str):
    """One row per message, plain numbers (see Trace.write_csv), streamed to the file."""
    atomic_write(path, trace.write_csv)


# ---------------------------------------------------------------------------------------
# One frame
# ---------------------------------------------------------------------------------------
def export_png(widget, path: str):
    """The widget as it is on screen now, as a PNG (device pixel ratio kept)."""
    img = widget.grab().toImage()

    def write(tmp):
        if not img.save(tmp, "PNG"):
            raise OSError(0, "the image could not be encoded")

    atomic_write(path, write)


def export_svg(widget, path: str, title: str = "Shard Lab"):
    """
    The widget as SVG: painted through QSvgGenerator, so lines and text stay vectors where
    the widget paints them as vectors (QGraphicsView scenes, labels).
    """
    from PySide6.QtSvg import QSvgGenerator  # part of PySide6-Essentials

    size = widget.size()

    def write(tmp):
        gen = QSvgGenerator()
        gen.setFileName(tmp)
        gen.setSize(size)
        gen.setViewBox(QRectF(0, 0, size.width(), size.height()))
        gen.setTitle(title)
        gen.setDescription(QCoreApplication.translate("Export", "Exported from Shard Lab"))
        p = QPainter()
        if not p.begin(gen):
            raise OSError(0, "the SVG file could not be opened")
        try:
            if isinstance(widget, QGraphicsView):  # the scene itself: items paint as vectors
                _render_scene_uncached(widget, p, size)
            else:
                widget.render(p, QPoint(0, 0))
        finally:
            p.end()

    atomic_write(path, write)


def export_frame(window, path: str, size=SLIDE_SIZE):
    """
    The current frame — a slide-sized ring view (`size`, 1280×720) at the playback's t — as
    .png or .svg. The PNG is drawn by `frame_image`, as every frame of a GIF is: a still and
    the GIF frame of the same t are the same picture. The SVG paints the same view as vectors.
    """
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".png", ".svg"):
        raise ExportError(QCoreApplication.translate("Export", "A frame is written as .png or .svg, not %1.")
                          .replace("%1", ext or "(none)"))
    check_writable(path)
    view = slide_view(window, size)
    try:
        if ext == ".svg":
            export_svg(view, path, title=view.title_text)
        else:
            img = frame_image(window, playback_of(window).t, view)

            def write(tmp):
                if not img.save(tmp, "PNG"):
                    raise OSError(0, "the image could not be encoded")

            atomic_write(path, write)
    finally:
        view.hide()
        view.deleteLater()


def _render_scene_uncached(view, painter, size):
    """Render a QGraphicsView's scene with item caches off, so items paint paths and text, not pixmaps."""
    items = view.scene().items()
    modes = [it.cacheMode() for it in items]
    for it in items:
        it.setCacheMode(QGraphicsItem.CacheMode.NoCache)
    try:
        view.render(painter, QRectF(0, 0, size.width(), size.height()), view.viewport().rect())
    finally:
        for it, mode in zip(items, modes):
            it.setCacheMode(mode)


# ---------------------------------------------------------------------------------------
# The animation
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AnimationFrame:
    """One picture of an exported animation (what is drawn in it: app.core.frame.frame_at(run, t))."""

    t: float  # simulated time shown (s)
    duration: float  # how long the frame stays on screen in the file (s)
    step_end: bool  # the state after a whole step (or the initial state)


def frame_plan(trace: Trace, frames_per_step: int = 6, fps: float = 12.0, hold: float = 0.8) -> list[AnimationFrame]:
    """
    The frames of an animation of `trace`: for every collective its initial state, then for
    every step `frames_per_step` frames moving from the previous step's end to this step's
    end, the last one (the step's result) held for `hold` seconds. frames_per_step = 1 gives
    one frame per step plus the initial state. In-between frames last 1/fps.
    """
    if frames_per_step < 1:
        raise ValueError("frames_per_step must be at least 1")
    if not trace.collectives:
        return [AnimationFrame(0.0, hold, True)]
    frames = []
    for c in trace.collectives:
        prev = c.t_start
        frames.append(AnimationFrame(prev, hold, True))
        for t1 in monotone_step_ends(trace.step_times(c.id)):
            t1 = max(t1, prev)
            for i in range(1, frames_per_step + 1):
                last = i == frames_per_step
                t = prev + (t1 - prev) * i / frames_per_step
                frames.append(AnimationFrame(t, hold if last else 1.0 / fps, last))
            prev = t1
    return frames


def image_to_array(img: QImage) -> np.ndarray:
    """QImage -> (h, w, 3) uint8 RGB array (a copy)."""
    img = img.convertToFormat(QImage.Format.Format_RGB888)
    w, h, bpl = img.width(), img.height(), img.bytesPerLine()
    buf = np.frombuffer(img.constBits(), dtype=np.uint8, count=bpl * h).reshape(h, bpl)
    return buf[:, : w * 3].reshape(h, w, 3).copy()


def playback_of(window):
    """The window's one clock (MainWindow.playback)."""
    return window.playback


def trace_of(window) -> Trace:
    """The trace of the window's current run (MainWindow.model.run)."""
    return window.model.run.trace


def slide_view(window, size=SLIDE_SIZE):
    """
    A ring view of its own, `size` pixels, following the window's model and playback: the
    exported picture does not depend on how the window's docks happen to be laid out.
    The caller deletes it (deleteLater) when done.
    """
    from ..views.ring.ring_view import RingView

    view = RingView(window.model, playback_of(window))
    view.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    view.resize(*size)
    view.show()  # never on screen (WA_DontShowOnScreen), but laid out and polished like a shown widget
    QCoreApplication.processEvents()
    return view


def grab_at(window, t: float, target=None) -> QImage:
    """Seek the playback to t and grab `target` (default: the window) as an image."""
    pb = playback_of(window)
    pb.seek(t)
    QCoreApplication.processEvents()  # let views that update on a queued signal repaint
    widget = target if target is not None else window
    return widget.grab().toImage()


def frame_image(window, t: float, view) -> QImage:
    """One exported frame: `view` (a slide_view of the window) at simulated time t (s).
    Every GIF / MP4 frame and the "current frame as PNG" are drawn by this one function."""
    return grab_at(window, t, view)


def export_animation(window, path: str, fps: float = 12.0, progress=None, frames_per_step: int = 6,
                     hold: float = 0.8, target=None, size=SLIDE_SIZE) -> int:
    """
    Write the whole animation of the window's trace to `path` (.gif or .mp4); return the
    number of frames written. Frames are a slide-sized ring view (`size`, default 1280×720)
    unless `target` names a widget to grab (e.g. the window). The playback's time and play
    state are restored afterwards.

    progress: None (headless), a QProgressDialog (its Cancel works), or a callable
    progress(done, total) -> bool that returns False to cancel. Cancelling raises
    ExportCancelled and leaves no file; so does any error, with ExportError's message.
    """
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".gif", ".mp4"):
        raise ExportError(QCoreApplication.translate("Export", "Animations are written as .gif or .mp4, not %1.")
                          .replace("%1", ext or "(none)"))
    check_writable(path)
    writer_factory = _gif_writer if ext == ".gif" else _mp4_writer(fps)
    trace = trace_of(window)
    plan = frame_plan(trace, frames_per_step=frames_per_step, fps=fps, hold=hold)
    pb = playback_of(window)
    was_t, was_playing = float(pb.t), pb.playing
    if was_playing:
        pb.pause()
    report = _progress_fn(progress, len(plan))
    own_view = target is None
    widget = slide_view(window, size) if own_view else target

    def write(tmp):
        with writer_factory(tmp, fps) as out:
            shape = None
            for i, fr in enumerate(plan):
                if not report(i):
                    raise ExportCancelled(QCoreApplication.translate("Export", "Export cancelled."))
                img = frame_image(window, fr.t, widget)
                if shape is None:
                    shape = _even_size(img.size())
                if img.size() != shape:
                    img = img.scaled(shape, Qt.AspectRatioMode.IgnoreAspectRatio,
                                     Qt.TransformationMode.SmoothTransformation)
                out.add(image_to_array(img), fr.duration)
            if not report(len(plan)):
                raise ExportCancelled(QCoreApplication.translate("Export", "Export cancelled."))

    try:
        atomic_write(path, write)
    finally:
        if own_view:
            widget.hide()
            widget.deleteLater()
        pb.seek(was_t)
        if was_playing:
            pb.play()
        if hasattr(progress, "reset"):
            progress.reset()
    return len(plan)


def _even_size(size: QSize) -> QSize:
    """H.264 (yuv420p) needs even sides: drop a pixel where needed."""
    w, h = size.width(), size.height()
    return QSize(w - w % 2, h - h % 2)


def _progress_fn(progress, total):
    if progress is None:
        return lambda done: True
    if callable(progress) and not hasattr(progress, "wasCanceled"):
        return lambda done: progress(done, total) is not False
    progress.setRange(0, total)
    if hasattr(progress, "setMinimumDuration"):
        progress.setMinimumDuration(0)

    def report(done):
        progress.setValue(done)  # a modal QProgressDialog processes events here (Cancel works)
        QCoreApplication.processEvents()
        return not progress.wasCanceled()

    return report


class _GifWriter:
    """
    Streams a looping GIF to the file frame by frame, so memory holds two frames, not the
    animation (collecting 379 frames of a 64-GPU all-gather for one imwrite peaked near 4 GB).
    Each frame after the first is only the rectangle that changed since the previous one,
    drawn over it (disposal 1), quantized to its own 256-colour palette. Pillow's documented
    GIF helpers `getheader` / `getdata` encode the header and each frame; imageio's own
    streaming GIF writer refuses Pillow ≥ 10.1.
    """

    def __init__(self, path, fps):
        self.f = open(path, "wb")
        self.count = 0
        self.prev = None

    def __enter__(self):
        return self

    def add(self, frame, duration):
        from PIL import Image
        from PIL.GifImagePlugin import getdata, getheader

        ms = int(round(duration * 1000))  # GIF: hundredths of a second; Pillow takes ms
        x0, y0, part = 0, 0, frame
        if self.prev is not None:
            changed = np.any(frame != self.prev, axis=2)
            rows, cols = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(axis=0))
            if rows.size:
                y0, x0 = int(rows[0]), int(cols[0])
                part = frame[y0:rows[-1] + 1, x0:cols[-1] + 1]
            else:
                part = frame[:1, :1]  # nothing changed: one pixel, to keep the frame's time
        im = Image.fromarray(np.ascontiguousarray(part), "RGB").quantize(256)
        if self.count == 0:
            header, _ = getheader(im, info={"loop": 0, "duration": ms})
            self.f.write(b"".join(header))
        self.f.write(b"".join(getdata(im, offset=(x0, y0), duration=ms, disposal=1, include_color_table=True)))
        self.prev = frame
        self.count += 1

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.f.write(b";")  # the GIF trailer
        finally:
            self.f.close()
        return False


def _gif_writer(path, fps):
    try:
        import PIL.GifImagePlugin  # noqa: F401
    except ImportError:
        raise ExportError(QCoreApplication.translate(
            "Export", "GIF export needs the Pillow package (pip install \"shard-lab[export]\").")) from None
    return _GifWriter(path, fps)


class _Mp4Writer:
    """Streams frames to ffmpeg (imageio-ffmpeg); a held frame is repeated at the fixed fps."""

    def __init__(self, path, fps):
        import imageio.v2 as iio2

        try:
            import imageio_ffmpeg  # noqa: F401
        except ImportError:
            raise ExportError(QCoreApplication.translate(
                "Export", "MP4 export needs the imageio-ffmpeg package (pip install \"shard-lab[export]\").")) from None
        self.fps = fps
        self.w = iio2.get_writer(path, format="FFMPEG", mode="I", fps=fps, codec="libx264",
                                 pixelformat="yuv420p", macro_block_size=2, quality=8,
                                 ffmpeg_log_level="error")

    def __enter__(self):
        return self

    def add(self, frame, duration):
        for _ in range(max(1, round(duration * self.fps))):
            self.w.append_data(frame)

    def __exit__(self, exc_type, exc, tb):
        self.w.close()
        return False


def _mp4_writer(fps):
    return lambda path, _fps: _Mp4Writer(path, fps)
