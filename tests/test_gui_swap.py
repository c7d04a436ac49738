"""
A new run's ring picture is made across the event loop's turns and shown whole (issue 34, item 10;
app/views/ring/ring_swap.py).

Swapping in DGX H100 at n = 256 made the ring's 256 devices, 380 labels and their layout, and
painted them, in one turn of the GUI thread. Now the build runs in slices, each making a bounded
number of items, while the view paints its old picture and the docks keep theirs; the new picture is
painted into the items' caches in bands, then everything is shown at once. These tests count what
each slice makes (no timing: benchmarks/gui_stall.py measures the stall), check that every picture
the window could show during the swap is the old one, and that the picture after it is the picture
of a window built at once on the same run, pixel for pixel.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QImage

from app.core.scenarios import Scenario

DGX = dict(topology="dgx-h100", n=256, kind="all-reduce")
TPU = dict(topology="tpu-v4-4x4x4", n=64, kind="all-reduce")


def open_window(qtbot, scenario=None, sync=False):
    """The main window on a model whose builds run on a worker thread (as in the app; sync: inline)."""
    from app.main_window import MainWindow
    from app.state import Playback, ScenarioModel

    model = ScenarioModel(scenario or Scenario(), sync=sync)
    win = MainWindow(model, Playback(model))
    qtbot.addWidget(win)
    win.resize(1600, 900)
    win.show()
    qtbot.waitExposed(win)
    win.timeline  # noqa: B018  (made now, as a shown window's first paint makes it)
    qtbot.waitUntil(lambda: model.pending is None, timeout=120_000)
    return win


def swap(qtbot, win, changes):
    from app.views.ring import ring_swap

    model = win.model
    assert model.update(**changes)
    qtbot.waitUntil(lambda: model.pending is None, timeout=120_000)
    qtbot.waitUntil(lambda: not ring_swap.pending(win.ring_view), timeout=10_000)
    qtbot.wait(50)  # the paint that shows it, and the views' deferred work


def pixels(widget) -> np.ndarray:
    img = widget.grab().toImage().convertToFormat(QImage.Format_ARGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())
    return a[:, :img.width() * 4].copy()


def parts(win) -> dict:
    """What the swap rebuilds: the ring, the timeline and the explanation (the controls dock is the
    reader's: after a machine is chosen it shows the algorithm's readout, a fresh window does not)."""
    return {"ring": pixels(win.ring_view), "timeline": pixels(win.timeline_dock),
            "explain": pixels(win.explain_dock)}


@pytest.mark.parametrize("changes", [DGX, TPU], ids=["dgx", "tpu"])
def test_the_swap_is_made_in_slices_of_bounded_work(qtbot, app_env, monkeypatch, changes):
    """Each slice of the ring's build makes at most SLICE_ITEMS items; the whole build of n devices
    takes at least 2n / SLICE_ITEMS slices (devices, then their labels) and WARM_BANDS more paint
    the new picture's caches, each on its own turn."""
    from app.views.ring import ring_swap

    win = open_window(qtbot)
    view = win.ring_view
    seen = []
    step = ring_swap.SlicedSwap.step

    def counted(self):
        before = len(view.scene().items()) if self.steps is not None else 0
        warm = self._warm is not None
        more = step(self)
        seen.append(("warm" if warm or self._warm is not None else "build", len(view.scene().items()) - before))
        return more
    monkeypatch.setattr(ring_swap.SlicedSwap, "step", counted)
    swap(qtbot, win, changes)
    assert len(view.devices) == changes["n"]
    build = [k for kind, k in seen if kind == "build"]
    assert max(build) <= ring_swap.SLICE_ITEMS  # (the first slice clears the old scene: negative)
    assert len(build) >= 2 * changes["n"] // ring_swap.SLICE_ITEMS
    assert sum(1 for kind, k in seen if kind == "warm" and k == 0) >= ring_swap.WARM_BANDS
    assert not ring_swap.pending(view)


def screen(qapp, win) -> np.ndarray:
    """What the window shows: its backing store as the platform holds it (not a fresh render)."""
    img = qapp.primaryScreen().grabWindow(win.winId()).toImage().convertToFormat(QImage.Format_ARGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())
    return a[:, :img.width() * 4].reshape(img.height(), img.width(), 4).copy()


def region(win, widget) -> tuple:
    top_left = widget.mapTo(win, widget.rect().topLeft())
    return (slice(top_left.y(), top_left.y() + widget.height()), slice(top_left.x(), top_left.x() + widget.width()))


def test_no_half_built_picture_is_shown_during_the_swap(qtbot, qapp, app_env, monkeypatch):
    """What the window shows after every slice of the swap (its backing store, as the screen gets it):
    the docks as they were when the run arrived, the ring as it was then or before the build began (its
    "building" note gone), never a half-built picture; after the last slice, the new run everywhere."""
    from app.views.ring import ring_swap

    win = open_window(qtbot)
    swap(qtbot, win, TPU)
    view = win.ring_view
    parts_ = {"ring": view.viewport(), "explain": win.explain_dock, "timeline": win.timeline_dock,
              "controls": win.controls_dock}
    regions = {k: region(win, w) for k, w in parts_.items()}
    before = screen(qapp, win)
    arrived, during = [], []
    win.model.arriving.connect(lambda run: arrived.append(screen(qapp, win)))
    step = ring_swap.SlicedSwap.step

    def watched(self):
        more = step(self)
        if more:
            during.append(screen(qapp, win))
        return more
    monkeypatch.setattr(ring_swap.SlicedSwap, "step", watched)
    swap(qtbot, win, DGX)
    assert len(arrived) == 1 and len(during) > 8
    at = arrived[0]
    for shot in during:
        for name, r in regions.items():
            if name == "ring":
                assert np.array_equal(shot[r], at[r]) or np.array_equal(shot[r], before[r]), name
            else:
                assert np.array_equal(shot[r], at[r]), name
    ring = regions["ring"]

    def shows_the_view():  # the window's next paint puts the new picture on the screen (a loaded machine: later)
        after = screen(qapp, win)
        grab = pixels(view.viewport()).reshape(after[ring].shape)
        # equal but for antialiasing where two update regions met: a whole-suite run once found 48 px of
        # one 2-px column under a NIC line off by ≤ 4 of 255 (the screen painted in pieces, the grab at once)
        return int(np.abs(after[ring].astype(int) - grab).max()) <= 8
    try:
        qtbot.waitUntil(shows_the_view, timeout=10_000)
    except Exception:  # what differs, for the record
        after = screen(qapp, win)
        diff = np.argwhere((after[ring] != pixels(view.viewport()).reshape(after[ring].shape)).any(axis=2))
        raise AssertionError(f"{len(diff)} px differ, rows {diff[:, 0].min()}–{diff[:, 0].max()}, columns "
                             f"{diff[:, 1].min()}–{diff[:, 1].max()}; swap pending {ring_swap.pending(view)}") from None
    after = screen(qapp, win)
    for name in ("ring", "explain", "timeline"):
        assert not np.array_equal(after[regions[name]], at[regions[name]]), name  # the new run shown


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_window_swapped_there_and_back_equals_a_fresh_one(qtbot, qapp, app_env, lang):
    """A window driven to DGX H100 at n = 256 and back to TPU v4 4×4×4 (both sliced) shows what a
    window opened on TPU v4 4×4×4 shows, and at DGX what a window opened there shows (built at once)."""
    from app import i18n

    i18n.set_language(qapp, lang)
    win = open_window(qtbot)
    swap(qtbot, win, TPU)
    swap(qtbot, win, DGX)
    at_dgx = parts(win)
    fresh = open_window(qtbot, win.model.scenario)
    assert fresh.model.scenario == win.model.scenario
    for name, a in parts(fresh).items():
        assert np.array_equal(a, at_dgx[name]), name
    fresh.close()
    first = win.model.scenario
    swap(qtbot, win, TPU)
    back = parts(win)
    again = open_window(qtbot, win.model.scenario)
    assert again.model.scenario == win.model.scenario != first
    for name, a in parts(again).items():
        assert np.array_equal(a, back[name]), name


def test_a_reader_who_needs_the_view_gets_it_whole(qtbot, app_env):
    """A screenshot (or a resize, a click, a language switch) during the swap finishes it first."""
    from app.views.ring import ring_swap

    win = open_window(qtbot)
    model = win.model
    assert model.update(**TPU)
    qtbot.waitUntil(lambda: model.pending is None, timeout=120_000)
    assert ring_swap.pending(win.ring_view)  # the run is the model's; its picture is being made
    ring_swap.finish(win.ring_view)
    assert not ring_swap.pending(win.ring_view)
    assert len(win.ring_view.devices) == 64 and win.ring_view.run is model.run
    assert not [w for w in win.findChildren(ring_swap.HeldPicture) if w.isVisible()]  # the docks' own pictures


def test_a_build_made_inline_is_whole_when_update_returns(qtbot, app_env):
    """A sync worker (tests, scripts) builds before `update` returns: the view is built at once."""
    from app.views.ring import ring_swap

    win = open_window(qtbot, sync=True)
    model = win.model
    assert model.update(**DGX)
    assert not ring_swap.pending(win.ring_view) and len(win.ring_view.devices) == 256


def test_the_app_freezes_what_lives_when_its_first_job_goes_to_a_thread(monkeypatch):
    """In the app (not in the tests' process), the objects alive when the GUI thread starts collecting
    on its timer leave the collector's generations (gc.freeze): its full collections walk the rest."""
    import gc

    from app import worker

    was_enabled = gc.isenabled()
    monkeypatch.setattr(worker, "_GC", None)
    monkeypatch.setattr(worker, "_SYNC_DEFAULT", False)
    try:
        worker._collect_on_the_gui_thread()
        made = worker._GC
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()
        if worker._GC is not None:
            worker._GC.timer.stop()
        if was_enabled:
            gc.enable()
    assert made is not None
    monkeypatch.setattr(worker, "_SYNC_DEFAULT", True)
    monkeypatch.setattr(worker, "_GC", None)
    try:
        worker._collect_on_the_gui_thread()  # the tests' own default: nothing frozen
        assert gc.get_freeze_count() == 0
    finally:
        if worker._GC is not None:
            worker._GC.timer.stop()
        if was_enabled:
            gc.enable()


def test_a_slice_that_fails_lets_the_old_picture_go(qtbot, app_env, monkeypatch):
    """An error in a slice is raised (Qt prints it) and the held pictures are let go: the window is
    never left showing a held picture."""
    from app.views.ring import ring_swap, ring_view

    win = open_window(qtbot)
    original = ring_view.RingView._texts_for_run

    def broken(self):
        if self.n == 64:
            raise RuntimeError("a slice failed")
        return original(self)
    monkeypatch.setattr(ring_view.RingView, "_texts_for_run", broken)
    errors = []
    monkeypatch.setattr("sys.excepthook", lambda *a: errors.append(a[1]))
    model = win.model
    assert model.update(**TPU)
    qtbot.waitUntil(lambda: model.pending is None, timeout=120_000)
    qtbot.waitUntil(lambda: not ring_swap.pending(win.ring_view), timeout=10_000)
    assert not [w for w in win.findChildren(ring_swap.HeldPicture) if w.isVisible()]
    assert any("a slice failed" in str(e) for e in errors)
