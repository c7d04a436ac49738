"""
The presenter view: a window for the lecturer's own screen while the audience's screen shows only
the picture — the current scene's talking points, the next scene's title and thumbnail, and the
time since the deck started. F5 opens it on a second screen when there is one (View › Deck ›
Presenter view opens it anywhere); it follows the deck controller's scene_changed signal.
"""

from __future__ import annotations

import html
import importlib

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEventLoop, Qt, QTimer
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from .. import i18n, theme
from .scene_open import SceneError, scenario_file, scene_tab, scene_time

THUMB = (480, 270)


PRESENTER_PX = 1.4 * theme.FONT_PX["body"]  # the presenter view's text at 1× (25 px), when it fits
PRESENTER_MIN_PX = 14  # ... and its least, for talking points that would not fit otherwise
TAB_ROOM = (1280, 720)  # a tab other than the ring is drawn in this room, then scaled to the thumbnail


def tab_view(key: str, model, playback) -> QWidget:
    """A new view of the window's tab `key` ("" = the ring) on `model` and `playback`: the ring tab
    of a matmul scenario is the whole page, the matmul panel beside the ring (RingPage)."""
    if key in ("", "ring"):
        if model.run.matmul is not None:
            from ..views.ring.ring_page import RingPage

            return RingPage(model, playback)
        from ..views.ring.ring_view import RingView

        return RingView(model, playback)
    from .. import tabs

    _key, module, cls, _title = next(v for v in tabs.VIEWS if v[0] == key)
    return getattr(importlib.import_module(module, tabs.__package__), cls)(model, playback)


def scene_thumbnail(deck, i: int, size=THUMB) -> QPixmap:
    """Scene i at its opening step in the tab it opens at (scene_tab: the weight slices, the decode latency…),
    drawn by a view of its own (never on screen); a scene of a saved run draws that run (its file's
    scenario is only a stand-in for the model). The ring is laid out at the thumbnail's size; another
    tab, whose controls and plots need room, and a matmul's ring tab (the panel beside the ring), in
    TAB_ROOM and scaled down."""
    from ..state import Playback, ScenarioModel
    from ..tabs import settle_layouts

    scene = deck.scenes[i]
    try:
        sf = scenario_file(deck, i)
        model = ScenarioModel(sf.scenario)
    except (SceneError, ValueError):
        return QPixmap()
    if getattr(sf, "run", None) is not None:  # as `shard-lab RUN` does: the model plays the run's own trace
        model.run = sf.run
    pb = Playback(model)
    tab = scene_tab(scene, sf)  # a scene without a "tab" opens at its scenario's: so does its thumbnail
    view = tab_view(tab, model, pb)
    ring = hasattr(view, "ensure_laid_out")  # the ring alone; a matmul's page (panel and ring) needs room
    view.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    view.resize(*(size if ring else TAB_ROOM))
    view.show()
    if ring:
        view.ensure_laid_out()
    else:
        settle_layouts(view)
        if hasattr(getattr(view, "ring", None), "ensure_laid_out"):
            view.ring.ensure_laid_out()
        # a view's own layout switches wait for the event loop (the decode latency's two plots go
        # into tabs below 760 px: the thumbnail showed them stacked, as no window does); not the
        # lecturer's keys, which would walk the deck from inside this
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)
        settle_layouts(view)
    pb.seek(scene_time(pb.stops, scene.step, scene.at))
    pix = view.grab()
    view.hide()
    view.deleteLater()
    if not ring:
        pix = pix.scaled(*size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation)
    return pix


class PresenterView(QWidget):
    """The lecturer's screen: what to say now, what comes next, how long it has taken."""

    def __init__(self, controller, parent=None):
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("presenterView")
        self.setWindowTitle(self.tr("Shard Lab — presenter view"))
        self.ctl = controller
        self.clock = QElapsedTimer()
        self.clock.start()
        self.now = QLabel(objectName="presenterNow", wordWrap=True)
        self.points = QLabel(objectName="presenterPoints", wordWrap=True)
        self.points.setTextFormat(Qt.TextFormat.RichText)
        self.points.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.next_title = QLabel(objectName="presenterNext", wordWrap=True)
        self.next_thumb = QLabel(objectName="presenterThumb")
        self.next_thumb.setFixedSize(*THUMB)
        self.elapsed = QLabel(objectName="presenterElapsed")
        lay = QGridLayout(self)
        lay.addWidget(self.now, 0, 0, 1, 2)
        lay.addWidget(self.points, 1, 0, 3, 1)
        lay.addWidget(self.next_title, 1, 1)
        lay.addWidget(self.next_thumb, 2, 1)
        lay.addWidget(self.elapsed, 3, 1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignBottom)
        lay.setColumnStretch(0, 3)
        lay.setRowStretch(3, 1)  # the room below the title is the talking points' (the title row took a fifth)
        self._thumbs = {}
        self._font_px = None  # the labels' font size now (_fit_text)
        self.tick = QTimer(self)
        self.tick.setInterval(1000)
        self.tick.timeout.connect(self._on_tick_timeout)
        self.tick.start()
        self._on_tick_timeout()
        controller.scene_changed.connect(self.show_scene)
        self.show_scene(controller.index)

    def restart_clock(self):
        self.clock.restart()
        self._on_tick_timeout()

    def elapsed_text(self) -> str:
        s = self.clock.elapsed() // 1000
        return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60:02d}:{s % 60:02d}"

    def _on_tick_timeout(self):
        self.elapsed.setText(self.tr("Elapsed {t}").format(t=self.elapsed_text()))

    def next_index(self):
        later = [j for j in self.ctl.good() if j > self.ctl.index]
        return later[0] if later else None

    def resizeEvent(self, e):
        super().resizeEvent(e)
        self._fit_text()

    def _fit_text(self):
        """The lecturer's own screen, read from a step away: its text PRESENTER_PX times the text
        scale, and smaller, down to PRESENTER_MIN_PX, until the title and all the talking points fit
        (at 2.5× its 63 px words showed one talking point, cut mid-line)."""
        px = round(PRESENTER_PX * theme.scale())
        while True:
            if self._font_px != px:
                self._font_px = px
                self.setStyleSheet(f"QLabel {{ font-size: {px}px; }}")
                self.layout().activate()
            fits = all(lb.heightForWidth(lb.width()) <= lb.height() for lb in (self.now, self.points))
            if fits or px <= PRESENTER_MIN_PX:
                return
            px = max(PRESENTER_MIN_PX, px - 2)

    def show_scene(self, i: int):
        deck, lang = self.ctl.deck, i18n.current_language()
        self._font_px = None  # new words: start again from the largest size
        if deck is None or i < 0:
            self.now.setText("")
            self.points.setText("")
            self.next_title.setText("")
            self.next_thumb.clear()
            return
        s = deck.scenes[i]
        self.now.setText(f"<b>{i + 1}/{len(deck.scenes)} · {html.escape(s.title.get(lang))}</b>")
        self.points.setText("<ul>" + "".join(f"<li>{html.escape(p.get(lang))}</li>" for p in s.points) + "</ul>")
        j = self.next_index()
        if j is None:
            self.next_title.setText(self.tr("Next: (the end)"))
            self.next_thumb.clear()
            self._fit_text()
            return
        self.next_title.setText(self.tr("Next: {k}. {title}").format(k=j + 1, title=deck.scenes[j].title.get(lang)))
        key = (id(deck), j)
        if key not in self._thumbs:
            self._thumbs[key] = scene_thumbnail(deck, j)
        self.next_thumb.setPixmap(self._thumbs[key])
        self._fit_text()
