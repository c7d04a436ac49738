"""
The main window's extra tabs, beside the ring view: weight slices, buffer values, decode latency.

`extra_views(model, playback)` returns [(key, title, widget), ...] in app/tab_list.py's order (the
one list of the tabs); MainWindow adds one tab per entry and `select_tab(key)` shows one. Each view
takes the same ScenarioModel and Playback as the ring view (one clock) and re-reads what simcore
recorded when they change; the latency view has its own controls (model, chip, batch, ...) because
its arithmetic is the cost model's, not the trace's.

The tabs are `LazyTab`s: a view's module is imported and the view built the first time its tab
is shown (or `LazyTab.view()` is asked for), so the first window paints without paying for
views nobody has opened yet. A tab's title is translated in its view's own context, so the
placeholder and the view show the same words.
"""

from __future__ import annotations

import importlib
import sys

from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtWidgets import QGraphicsView, QGraphicsWidget, QLabel, QVBoxLayout, QWidget

from .tab_list import VIEWS


class LazyTab(QWidget):
    """A tab page that builds its view (module.cls(model, playback)) when first shown."""

    def __init__(self, key, module, cls, title, model, playback, parent=None):
        super().__init__(parent)
        self.key, self._spec, self._title = key, (module, cls), title
        self._model, self._playback = model, playback
        self._view = None
        self.built_just_now = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.retranslate_ui()

    def view(self) -> QWidget:
        """The real view, built now if it was not yet."""
        if self._view is None:
            module, cls = self._spec
            try:
                self._view = getattr(importlib.import_module(module, __package__), cls)(self._model, self._playback)
            except Exception as e:  # a broken view must not take the lecture down: say so in its tab
                print(f"shard-lab: the {self.key} view could not be built: {e!r}", file=sys.stderr)
                self._view = QLabel(QCoreApplication.translate("MainWindow", "This view could not be built:\n{e}")
                                    .format(e=e), alignment=Qt.AlignCenter, wordWrap=True)
            lay = self.layout()
            lay.addWidget(self._view)
            # placed and shown now, not later from the event loop (which Qt does for a child added
            # to a visible page, first at 640×480): the tab's first paint is the view at its size
            self._view.setGeometry(self.contentsRect().marginsRemoved(lay.contentsMargins()))
            if self.isVisible():
                self._view.show()
            self.built_just_now = True  # the window settles its layouts before the first paint
        return self._view

    @property
    def built(self) -> bool:
        return self._view is not None

    def showEvent(self, e):
        self.view()
        super().showEvent(e)

    def retranslate_ui(self):
        self.setWindowTitle(QCoreApplication.translate(self._spec[1], self._title))

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)


def extra_views(model, playback):
    return [(key, QCoreApplication.translate(cls, title), LazyTab(key, module, cls, title, model, playback))
            for key, module, cls, title in VIEWS]


def settle_layouts(page: QWidget):
    """Run the layout requests pending inside `page` now: its widgets' and those of the items in
    its graphics views (pyqtgraph's plots lay out their axes on a posted request). Only the page's:
    the rest of the window settles in its own order, as it always has."""
    targets = [page, *page.findChildren(QWidget)]
    for view in page.findChildren(QGraphicsView):
        if view.scene() is not None:
            targets += [it for it in view.scene().items() if isinstance(it, QGraphicsWidget)]
    for obj in targets:
        QCoreApplication.sendPostedEvents(obj, QEvent.Type.LayoutRequest)
