"""A tab built on first show (app/tabs.py's LazyTab) is, from its first paint on, the view an
eager build would give: in place, at its final size, drawn the same. The window pays for a view
only when its tab is opened (benchmarks/run.py's startup_ratio), and this checks the reader
cannot tell."""

import numpy as np
import pytest
from PySide6.QtGui import QImage

from app.main_window import MainWindow
from app.state import Playback, Scenario, ScenarioModel
from app.tab_list import TABS

S = 960 * 1024.0
MAX_DIFFERENT = 0.002  # share of pixels two draws of the same view at the same size may differ by
# The latency view built while its window is hidden starts at Qt's default 640×480, goes into
# tabs (short), then back to the stacked plots, whose splitter keeps another split than a view
# built at its size: the lazy tab is the one that matches a fresh start (README's screenshot).
EAGER_DIFFERS = ("latency",)


def pixels(img: QImage) -> np.ndarray:
    img = img.convertToFormat(QImage.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine() // 4, 4)
    return a[:, :img.width(), :3].astype(int)


def different(a: np.ndarray, b: np.ndarray) -> float:
    assert a.shape == b.shape
    return float(np.mean(np.any(np.abs(a - b) > 8, axis=2)))


def shown_window(qtbot, qapp, eager=()):
    """A fresh 1600×900 window on ring all-gather, n = 4; the views of `eager` built before it shows."""
    model = ScenarioModel(Scenario(kind="all-gather", n=4, nbytes=S))
    win = MainWindow(model, Playback(model))
    qtbot.addWidget(win)
    for key in eager:
        win.view(key)
    win.resize(1600, 900)
    win.show()
    qapp.processEvents()
    return win


def settle(qapp):
    for _ in range(3):
        qapp.processEvents()


def test_a_tab_built_on_first_show_is_in_place_and_drawn_like_an_eager_one(qtbot, qapp):
    keys = TABS[1:]  # the extra views, built on first show
    win = shown_window(qtbot, qapp)
    eager_win = shown_window(qtbot, qapp, eager=keys)  # the same tabs, their views built before it showed
    pages = {k: win.tabs.widget(TABS.index(k)) for k in keys}
    assert not any(p.built for p in pages.values())  # nothing paid for before a tab is opened
    for key in keys:
        assert win.select_tab(key)
        # no event has run since: this is what the tab's first paint draws
        view, page = win.view(key), pages[key]
        assert page.built and view.isVisible() and view.parentWidget() is page
        first = view.size()
        assert first == page.size() and first.width() > 600 and first.height() > 400, key  # fills its page
        hidden = win.TAB_HIDES.get(key, ())
        assert not any(d.isVisible() for d in (win.controls_dock, win.explain_dock, win.timeline_dock)
                       if win.dockWidgetArea(d) in hidden), key  # the room the tab takes is its already
        drawn_first = pixels(view.grab().toImage())
        assert drawn_first.std() > 5, key  # a picture, not an empty page
        settle(qapp)
        assert view.size() == first, key  # nothing moves after the first paint
        assert different(pixels(view.grab().toImage()), drawn_first) <= MAX_DIFFERENT, key

        assert eager_win.select_tab(key)
        settle(qapp)
        eager = eager_win.view(key)
        assert eager.size() == first, key
        if key in EAGER_DIFFERS:
            continue
        assert different(pixels(eager.grab().toImage()), drawn_first) <= MAX_DIFFERENT, key
