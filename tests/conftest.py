"""
Shared test setup: offscreen Qt, private settings, and every test starting from the same app state.

- QT_QPA_PLATFORM=offscreen unless the caller chose a platform.
- SHARD_LAB_SETTINGS points at a file in pytest's temporary folder, so no test reads or writes
  the user's real settings (a remembered scenario, theme or language).
- After each test that used Qt: theme, size and language go back to light / 1× / English, and
  the windows the test left are deleted. Each app-wide theme or language change repolishes
  every widget still alive, shown or not, so leftovers would slow every later test that
  switches one (the suite went from minutes to over ten without this).
  Deleting needs care with pyqtgraph: Qt clearing a pyqtgraph scene from a window's destructor
  crashes PySide6, so the scenes are cleared from Python first, as pyqtgraph's own close() does.
"""

from __future__ import annotations

import gc
import os
import sys

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True, scope="session")
def _private_settings(tmp_path_factory):
    if "SHARD_LAB_SETTINGS" not in os.environ:
        os.environ["SHARD_LAB_SETTINGS"] = str(tmp_path_factory.mktemp("settings") / "settings.ini")
    yield


@pytest.fixture(autouse=True)
def _fresh_app_state(request):
    yield
    if "qapp" not in request.fixturenames and "qtbot" not in request.fixturenames:
        return
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        return
    _delete_windows(app)
    from app import i18n, theme

    i18n.set_language(app, "en")
    theme.set_theme("light")
    theme.set_scale(1.0)


def _delete_windows(app):
    import shiboken6
    from PySide6.QtCore import QCoreApplication, QEvent

    windows = [w for w in app.topLevelWidgets() if w.parentWidget() is None]
    for w in windows:
        w.close()
    gc.collect()
    if "pyqtgraph" in sys.modules:
        from pyqtgraph import GraphicsView

        for w in windows:
            if shiboken6.isValid(w):
                views = w.findChildren(GraphicsView) + ([w] if isinstance(w, GraphicsView) else [])
                for v in views:
                    if v.scene() is not None:
                        v.scene().clear()
    for w in windows:
        if shiboken6.isValid(w):
            w.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
