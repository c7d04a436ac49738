"""
A new run's ring picture made across the event loop's turns, shown at once (issue 34, item 10).

At n = 256 the ring view's items for a new run (256 devices, 380 labels, their layout) took some
60 ms on the GUI thread, and their first paint 40–60 ms more, in the same turn as the other views'
rebuild: the window froze for 0.15–0.26 s when a scenario arrived. Now, for a run of at least
SLICED_MIN_N devices in a shown window:

  * the window's picture is held: the view paints a grab of its old picture (held_paint) and each
    dock is covered by a grab of itself (`hold`): what is on screen stays the old picture, and
    nothing half-built is ever painted;
  * the view's build (RingView._build_steps, a generator) runs one slice per turn: at most
    SLICE_ITEMS items made in a slice, then the texts, the layout, the first frame;
  * the new picture is painted, a band of the view a slice, into an image nobody sees (warm_bands):
    each cached item paints into the cache the view's own paint blits;
  * the hold is released: the whole window paints the new scenario in one frame.

A reader who needs the view now (a resize, a click, a language switch, a test reading the items)
calls `finish(view)`: the slices left run at once. A smaller run, or one built inline (a sync
worker: its caller reads the views when `update` returns), builds at once, as before.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QRect, Qt, QTimer
from PySide6.QtGui import QImage, QPainter, QRegion
from PySide6.QtWidgets import QDockWidget, QMainWindow, QStatusBar, QToolBar, QWidget

SLICED_MIN_N = 32  # below this a whole build and its first paint take a few milliseconds
SLICE_ITEMS = 64  # device items (or their labels) made in one slice
WARM_BANDS = 4  # the first paint, in this many horizontal bands of the view, one a slice


class SlicedSwap:
    """One sliced build of a view (see the module's docstring)."""

    def __init__(self, view, steps, held=None):
        self.view, self.steps = view, steps
        self.done = False
        self.running = False  # inside a slice: a reader's finish() then waits for the slices' own end
        self.warming = False
        self.picture, self.held = held if held is not None else take_hold(view)
        self._warm = None
        self._timer = QTimer(view)  # dies with the view: a closed window's slices never run
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.step)
        self._timer.start()

    def step(self) -> bool:
        """Run one slice; True while slices are left (the next is scheduled)."""
        if self.done:
            return False
        if not shiboken6.isValid(self.view):
            self.done = True
            return False
        self.running = True
        try:
            next(self.steps)
        except StopIteration:
            if self._warm is None:
                self._warm = warm_bands(self.view)
            try:
                next(self._warm)
            except StopIteration:
                self.release()
                return False
        except BaseException:
            self.release()  # a slice that fails must not leave the old picture held for ever
            raise
        finally:
            self.running = False
        if self.done:  # the slice built again at once (a collective drawn with its own group): over
            return False
        self._timer.start()
        return True

    def finish(self):
        """Every slice left, now."""
        if self.done or self.running:
            return
        self._timer.stop()
        self.running = True
        try:
            for _ in self.steps:
                pass
        finally:
            self.running = False
            self.release()

    def release(self):
        if self.done:
            return
        self.done = True
        self._timer.stop()
        if getattr(self.view, "_swap", None) is self:
            self.view._swap = None
        release_held((None, self.held))  # together: the next paint shows the new scenario everywhere
        self.held = []
        self.picture = None
        if shiboken6.isValid(self.view):
            self.view.viewport().update()  # with the docks: one paint shows the new scenario everywhere


def warm_bands(view):
    """The new picture painted a band of the view at a time (one a slice) into an image nobody sees,
    by the viewport's own paint (QWidget.render, the band at its own place: the same device transform):
    each cached item (devices, labels, bars, the switch) fills the viewport's device-coordinate cache
    that the paint which shows it then blits."""
    vp = view.viewport()
    w, h = vp.width(), vp.height()
    if w <= 0 or h <= 0:
        return
    dpr = vp.devicePixelRatioF()
    image = QImage(round(w * dpr), round(h * dpr), QImage.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(dpr)
    for k in range(WARM_BANDS):
        y0, y1 = h * k // WARM_BANDS, h * (k + 1) // WARM_BANDS
        if y1 <= y0:
            continue
        band = QRect(0, y0, w, y1 - y0)
        swap = view._swap
        swap.warming = True
        try:
            vp.render(image, band.topLeft(), QRegion(band))  # the view's own paint, the band's part
        finally:
            swap.warming = False
        yield


class HeldPicture(QWidget):
    """A dock's picture as it was, laid over the dock while the swap runs (see `hold`)."""

    def __init__(self, dock, parent):
        super().__init__(parent)
        self.picture = dock.grab()
        self.setAttribute(Qt.WA_TransparentForMouseEvents)  # clicks reach the dock beneath
        self.setAttribute(Qt.WA_OpaquePaintEvent)  # it covers the dock: Qt need not paint beneath
        self.setGeometry(dock.geometry())
        self.show()
        self.raise_()

    def paintEvent(self, e):
        p = QPainter(self)
        p.drawPixmap(0, 0, self.picture)
        p.end()


def hold(view) -> list:
    """Hold the docks' pictures: each visible docked dock (and the tool and status bars) of the view's
    window is covered by a grab of itself (HeldPicture) until release, while those beneath take the
    new run. (Not their updates turned off: a text panel scrolled back to its top while its updates
    are off moves its pixels and leaves the rest blank on screen; and Qt drops an update request a
    top-level window gets while its updates are off, so the window would never repaint.) Returns the
    pictures laid over them."""
    win = view.window()
    parts = [w for kind in (QDockWidget, QToolBar, QStatusBar) for w in win.findChildren(kind)
             if w.parentWidget() is win]
    return [HeldPicture(w, win) for w in parts
            if w.isVisible() and not (isinstance(w, QDockWidget) and w.isFloating())]


def take_hold(view) -> tuple:
    """(a grab of what the view shows now, which it paints instead of its scene until the new picture
    is whole; the docks' pictures laid over them: `hold`)."""
    swap = getattr(view, "_swap", None)
    if swap is not None:
        swap.running = True  # (the grab paints the old scene: no finish() from its paintEvent)
    try:
        picture = view.viewport().grab() if view.viewport().isVisible() else None
    finally:
        if swap is not None:
            swap.running = False
    return picture, hold(view)


def hold_window(view):
    """The window's picture held now, as a run arrives and before any view takes it (the model's
    `arriving`); the sliced build that follows (`start`) keeps it until its end."""
    release_held(getattr(view, "_held", None))
    finish(view)
    view._held = take_hold(view)


def release_held(held):
    if held is None:
        return
    for w in held[1]:
        if shiboken6.isValid(w):
            w.hide()
            w.deleteLater()


def held_paint(view) -> bool:
    """In the view's paintEvent: while its build runs across turns, paint the picture it showed
    before (True: the event is served); the warm bands paint the new one."""
    swap = getattr(view, "_swap", None)
    if swap is None or swap.done or swap.warming or swap.picture is None:
        return False
    painter = QPainter(view.viewport())
    painter.drawPixmap(0, 0, swap.picture)
    painter.end()
    return True


def sliced(view, run) -> bool:
    """Whether `view` builds `run` in slices: a run of SLICED_MIN_N devices or more that came from
    the worker's thread (a build made inline, as a sync worker makes them, is read by its caller when
    `update` returns: it is built at once) into a view on screen."""
    worker = getattr(getattr(view, "model", None), "worker", None)
    return (run.scenario.n >= SLICED_MIN_N and worker is not None and not worker.sync
            and view.isVisible() and isinstance(view.window(), QMainWindow))


def start(view, steps):
    """Run `steps` (a generator of slices) for `view` across turns (see the module's docstring)."""
    held, view._held = getattr(view, "_held", None), None  # taken as the run arrived (hold_window)
    cancel(view)
    view._swap = SlicedSwap(view, steps, held)
    return view._swap


def pending(view) -> bool:
    swap = getattr(view, "_swap", None)
    return swap is not None and not swap.done


def finish(view):
    """The build under way, if any, completed now."""
    swap = getattr(view, "_swap", None)
    if swap is not None:
        swap.finish()


def cancel(view):
    """Drop the build under way without running the rest (a new build replaces it); the held
    pictures are let go."""
    release_held(getattr(view, "_held", None))  # held as a run arrived, and built at once after all
    view._held = None
    swap = getattr(view, "_swap", None)
    if swap is not None:
        swap.steps = iter(())
        swap.release()
