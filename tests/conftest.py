"""
Shared test setup: offscreen Qt, private settings, and every test starting from the same app state.

- QT_QPA_PLATFORM=offscreen unless the caller chose a platform.
- Slow work (scenario builds, sweeps, step simulations, measurements) runs on the caller's
  thread: app.worker's default is sync, so a test reads a result as soon as it asked for it.
  A test of the threads themselves passes sync=False.
- SHARD_LAB_SETTINGS points at a file in pytest's temporary folder, so no test reads or writes
  the user's real settings (a remembered scenario, theme or language).
- After each test that used Qt: theme, size and language go back to light / 1× / English, and
  the windows the test left are deleted. Each app-wide theme or language change repolishes
  every widget still alive, shown or not, so leftovers would slow every later test that
  switches one (the suite went from minutes to over ten without this).
  Deleting needs care with pyqtgraph: Qt clearing a pyqtgraph scene from a window's destructor
  crashes PySide6, so the scenes are cleared from Python first, as pyqtgraph's own close() does.

Fixtures for any test file (one definition each, instead of a copy per file):
- app_env: a test that drives the app's windows gets its own settings file and file dialogs
  that return at once, starting from English, light, 1×.
- english: the QApplication, in English (for tests that switch language and read English back).
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


@pytest.fixture(autouse=True, scope="session")
def _sync_worker():
    from app import worker

    worker.set_sync_default(True)
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
    # A window gave the application its look: a stylesheet with the font size of the scale it had.
    # With the window gone nothing hears the reset above, so the next test would inherit a 2.5x font.
    if app.property("shardLabLook") is not None:
        from app.classroom.presentation import apply_look

        apply_look(app)


@pytest.fixture
def app_env(qapp, tmp_path, monkeypatch):
    """
    Its own settings file (tmp_path, returned), QFileDialog's getOpenFileName / getSaveFileName
    answering at once as if cancelled (nothing blocks), English, light theme and scale 1 to start
    from; _fresh_app_state puts language, theme and scale back afterwards.
    """
    from PySide6.QtWidgets import QFileDialog

    from app import i18n, theme

    monkeypatch.setenv("SHARD_LAB_SETTINGS", str(tmp_path / "settings.ini"))
    for name in ("getOpenFileName", "getSaveFileName"):
        monkeypatch.setattr(QFileDialog, name, staticmethod(lambda *a, **k: ("", "")))
    i18n.set_language(qapp, "en")
    theme.set_theme("light")
    theme.set_scale(1.0)
    return tmp_path


@pytest.fixture
def english(qapp):
    """The QApplication, in English; _fresh_app_state sets English again afterwards."""
    from app import i18n

    i18n.set_language(qapp, "en")
    return qapp


def _delete_windows(app):
    import shiboken6
    from PySide6.QtCore import QCoreApplication, QEvent

    from app import worker

    worker.wait_all()  # a job still running on a thread must not outlive its test's windows

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
