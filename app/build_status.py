"""
While a scenario builds on the worker (ScenarioModel.building), the window says so: a box over
the top of the central view and the status bar name what is being built and for how long. The
scenario on screen stays playable until the new run arrives; a failed build's sentence is the
model's error signal (the status bar and the scenario panel show it).
"""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QEvent, Qt, QTimer
from PySide6.QtWidgets import QLabel, QWidget

from . import theme

TICK_MS = 250  # the seconds counter: the window visibly keeps painting while the engine works


class BuildStatus(QLabel):
    """
    The "building" box over `host` (the window's central widget). `win` is the main window: its
    model's `building` signal shows and hides the box, and its status bar repeats the text.
    """

    def __init__(self, win, host: QWidget):
        super().__init__(host)
        self.setObjectName("buildStatus")
        self.win, self.model = win, win.model
        self.setAlignment(Qt.AlignCenter)
        self.setWordWrap(True)
        self.setAttribute(Qt.WA_TransparentForMouseEvents)
        self._said = ""  # the status bar's message while building
        self._clock = QElapsedTimer()
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._set_text)
        self.hide()
        host.installEventFilter(self)
        self.model.building.connect(self._on_model_building)
        theme.notifier().changed.connect(self._apply_theme)
        self._apply_theme()

    def _on_model_building(self, sc):
        if sc is None:
            self._timer.stop()
            self.hide()
            if self._said and self.win.statusBar().currentMessage() == self._said:
                self.win.statusBar().clearMessage()
            return
        self._clock.start()
        self._timer.start()
        self._set_text()
        self.show()
        self.raise_()

    def headline(self) -> str:
        """What is being built, one line (empty when nothing is)."""
        sc = self.model.pending
        if sc is None:
            return ""
        if sc.topology:
            from simcore.topology_presets import get_preset

            return self.tr("Building {kind} on {n} devices of {machine}…").format(
                kind=sc.kind, n=sc.n, machine=get_preset(sc.topology).name)
        return self.tr("Building {kind} on {n} devices…").format(kind=sc.kind, n=sc.n)

    def _set_text(self):
        line = self.headline()
        if not line:
            return
        seconds = self._clock.elapsed() // 1000
        self.setText(line + "\n" + self.tr("{s} s").format(s=seconds) + " · "
                     + self.tr("The scenario on screen stays until the new one is ready."))
        self._said = line
        self.win.statusBar().showMessage(line)
        self._place()

    def _place(self):
        """Centred, under the tab bar and the view's two heading lines (they stay readable)."""
        host, s = self.parentWidget(), theme.scale()
        w = min(host.width() - 24, max(self.sizeHint().width(), round(560 * s)))
        h = self.heightForWidth(w) if self.hasHeightForWidth() else self.sizeHint().height()
        bar = host.tabBar().height() if hasattr(host, "tabBar") else 0
        self.setGeometry((host.width() - w) // 2, bar + round(3.2 * theme.px("body") + 12 * s), w, h)

    def eventFilter(self, obj, e):
        if e.type() == QEvent.Resize and obj is self.parentWidget() and self.isVisible():
            self._place()
        return super().eventFilter(obj, e)

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange and self.isVisible():
            self._set_text()
        super().changeEvent(e)

    def _apply_theme(self):
        pal = theme.palette()
        s = theme.scale()
        self.setFont(theme.font("body", bold=True))
        self.setStyleSheet(f"QLabel#buildStatus {{ background: {pal.surface}; color: {pal.text}; "
                           f"border: {max(1, round(2 * s))}px solid {pal.playhead}; "
                           f"border-radius: {round(6 * s)}px; padding: {round(10 * s)}px; }}")
        if self.isVisible():
            self._place()
