"""
The window simcore.show opens on a run (app/opened_run.py makes the run): a MainWindow, the
QApplication made if there is none, and a wait until the window is closed for a plain script.
Apart from opened_run because it needs the whole app (the classroom's look), which the file
dispatch in scenario_io must not import.
"""

from __future__ import annotations


def open_window(run, lang: str | None = None):
    """A shown MainWindow on `run` (simcore.show), making the QApplication if there is none."""
    import sys

    from PySide6.QtWidgets import QApplication

    from .classroom.presentation import STYLE, apply_look
    from .i18n import set_language_or_english
    from .main_window import MainWindow
    from .state import Playback, ScenarioModel

    app = QApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0] if sys.argv and sys.argv[0] else "shard-lab", "-style", STYLE])
        app.setProperty("shardLabStyle", STYLE)
        app.setApplicationName("Shard Lab")
        app.setOrganizationName("Shard Lab")
        set_language_or_english(app, lang)
        apply_look(app)
    elif lang is not None:
        set_language_or_english(app, lang)
    model = ScenarioModel(run.scenario)
    model.run = run
    win = MainWindow(model, Playback(model))
    win.setWindowTitle(f"Shard Lab — {run.opened.name or 'your run'}")
    win.show()  # at the window's own size: 1600×900, or what of it the screen has room for
    return win


def wait_until_closed(win):
    """Run the event loop until `win` is closed (a plain script's simcore.show)."""
    from PySide6.QtCore import QEventLoop

    loop = QEventLoop()
    win.destroyed.connect(loop.quit)
    win.installEventFilter(_CloseWatch(win, loop))
    loop.exec()


def _close_watch_class():
    from PySide6.QtCore import QEvent, QObject

    class CloseWatch(QObject):
        def __init__(self, win, loop):
            super().__init__(win)
            self.loop = loop

        def eventFilter(self, obj, e):
            if e.type() == QEvent.Close:
                self.loop.quit()
            return False

    return CloseWatch


def _CloseWatch(win, loop):  # noqa: N802 — a class made on first use: this module loads without Qt
    return _close_watch_class()(win, loop)
