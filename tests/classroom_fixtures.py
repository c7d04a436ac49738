"""The main window the tests/test_classroom_*.py files (and the lecture-hall tests) drive; their
environment is conftest's app_env."""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QApplication  # noqa: E402


def make_window(qtbot, kind="all-gather", n=4, algo="ring", size=(1600, 900), nbytes=None, **scenario):
    """A main window on Scenario(kind, n, algo, nbytes, **scenario), shown and active."""
    from app.main_window import MainWindow
    from app.state import Scenario, ScenarioModel

    extra = {} if nbytes is None else {"nbytes": nbytes}
    w = MainWindow(ScenarioModel(Scenario(kind=kind, n=n, algo=algo, **extra, **scenario)))
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()  # window shortcuts only reach the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    return w
