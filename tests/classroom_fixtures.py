"""Fixtures shared by the tests/test_classroom_*.py files."""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QApplication, QFileDialog  # noqa: E402

from app import i18n, theme  # noqa: E402


@pytest.fixture
def classroom_env(tmp_path, monkeypatch):
    """Own settings file; English, light theme, scale 1 before and after; file dialogs never block."""
    monkeypatch.setenv("SHARD_LAB_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: ("", "")))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: ("", "")))
    app = QApplication.instance()
    i18n.set_language(app, "en")
    theme.set_theme("light")
    theme.set_scale(1.0)
    yield tmp_path
    i18n.set_language(app, "en")
    theme.set_theme("light")
    theme.set_scale(1.0)


def make_window(qtbot, kind="all-gather", n=4, algo="ring", size=(1600, 900), nbytes=None):
    from app.main_window import MainWindow
    from app.state import Scenario, ScenarioModel

    extra = {} if nbytes is None else {"nbytes": nbytes}
    w = MainWindow(ScenarioModel(Scenario(kind=kind, n=n, algo=algo, **extra)))
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()  # window shortcuts only reach the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    return w
