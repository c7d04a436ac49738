"""Every menu entry and every key of the `?` overlay, as a person sends them, on every tab, with and
without a deck open: no exception may reach the event loop.

An action is triggered as Qt's menu does it, `action.trigger()` (a checkable action then passes its
checked flag to the slots connected to `triggered`: View › Deck › Presenter view once took that flag
for a screen); a key is sent to the widget that has the focus, as the keyboard does. An exception in a
slot goes to sys.excepthook, which the test replaces to collect it with the action that raised it.

Skipped, because they would block or end the test rather than because they are safe:
- File › Quit (Ctrl+Q): it closes the window the walk runs on (tests/test_session_settings.py quits);
- the modal dialogs' static functions answer at once as if cancelled: QFileDialog.get*FileName
  (conftest's app_env), QFileDialog.getExistingDirectory, QInputDialog.getText and the QMessageBox
  statics (Cancel; about/information/warning/critical answer Ok).
"""

import sys

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QCoreApplication, Qt  # noqa: E402
from PySide6.QtGui import QAction, QKeySequence  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QMessageBox  # noqa: E402

from app.tab_list import TABS  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

QUIT = "actQuit"  # intercepted: see the module docstring


@pytest.fixture
def no_blocking_dialogs(app_env, monkeypatch):
    cancel = QMessageBox.StandardButton.Cancel
    ok = QMessageBox.StandardButton.Ok
    for name in ("question",):
        monkeypatch.setattr(QMessageBox, name, staticmethod(lambda *a, **k: cancel))
    for name in ("information", "warning", "critical", "about"):
        monkeypatch.setattr(QMessageBox, name, staticmethod(lambda *a, **k: ok))
    monkeypatch.setattr(QMessageBox, "exec", lambda self: cancel)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: ""))
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("", False)))
    return app_env


class Raised:
    """sys.excepthook for the test: every exception that reaches the event loop, with what was doing it."""

    def __init__(self, monkeypatch):
        self.errors, self.doing = [], ""
        monkeypatch.setattr(sys, "excepthook", self)

    def __call__(self, kind, value, tb):
        import traceback

        self.errors.append(f"{self.doing}: {''.join(traceback.format_exception(kind, value, tb))}")


def _settle():
    for _ in range(3):
        QCoreApplication.processEvents()


def menu_actions(menu, path=()):
    """(path, action) of every entry of `menu` and its submenus, in menu order; a submenu is filled
    as a person opening it fills it (aboutToShow)."""
    menu.aboutToShow.emit()
    here = path + (menu.title().replace("&", ""),)
    for a in menu.actions():
        if a.isSeparator():
            continue
        if a.menu() is not None:
            yield from menu_actions(a.menu(), here)
        else:
            yield here, a


def _window(qtbot, with_deck, tab):
    w = make_window(qtbot, kind="all-gather", n=8, size=(1600, 900))
    if with_deck:
        assert w.deck.open_builtin()
    assert w.select_tab(tab)
    _settle()
    return w


@pytest.mark.parametrize("with_deck", [False, True], ids=["no-deck", "deck"])
@pytest.mark.parametrize("tab", TABS)
def test_every_menu_action_as_the_menu_sends_it(qtbot, no_blocking_dialogs, monkeypatch, with_deck, tab):
    w = _window(qtbot, with_deck, tab)
    raised = Raised(monkeypatch)
    triggered = 0
    for top in w.menuBar().actions():
        if top.menu() is None:
            continue
        for path, a in list(menu_actions(top.menu())):
            if a.objectName() == QUIT:
                continue
            if not a.isEnabled():  # a person cannot pick it
                continue
            raised.doing = f"{' › '.join(path)} › {a.text()} ({a.objectName()}) on {tab}"
            a.trigger()  # as the menu does: a checkable one passes its checked flag
            _settle()
            triggered += 1
            if not w.isVisible():  # nothing but Quit may close the window
                raised.errors.append(f"{raised.doing}: the window closed")
                w.show()
            if w.deck.presenter is not None and w.deck.presenter.isVisible():
                w.deck.presenter.close()
    assert triggered > 40
    assert not raised.errors, "\n".join(raised.errors)


def test_presenter_view_opens_from_the_menu_on_one_screen(qtbot, no_blocking_dialogs, monkeypatch):
    """View › Deck › Presenter view with one screen: a window of its own, on the window's screen, with
    the scene's title, its talking points and the next scene."""
    w = _window(qtbot, True, "ring")
    raised = Raised(monkeypatch)
    assert len(QApplication.screens()) == 1
    w.deck.act_presenter.trigger()
    _settle()
    assert not raised.errors, "\n".join(raised.errors)
    p = w.deck.presenter
    assert p is not None and p.isVisible() and p.isWindow() and p is not w
    assert p.screen() is w.screen() and w.screen().availableGeometry().contains(p.frameGeometry())
    deck = w.deck.deck
    assert deck.scenes[0].title.en in p.now.text()
    assert deck.scenes[0].points[0].en.split(":")[0] in p.points.text()
    assert p.next_title.text().startswith("Next: 2.") and not p.next_thumb.pixmap().isNull()
    w.deck.next()  # the deck walks on: the presenter follows
    _settle()
    assert deck.scenes[1].title.en in p.now.text()


def _sendable(k: QKeySequence):
    combo = k[0]
    return combo.key(), combo.keyboardModifiers()


@pytest.mark.parametrize("with_deck", [False, True], ids=["no-deck", "deck"])
@pytest.mark.parametrize("tab", TABS)
def test_every_key_of_the_shortcut_overlay(qtbot, no_blocking_dialogs, monkeypatch, with_deck, tab):
    from app.classroom.presentation import collect_shortcuts

    w = _window(qtbot, with_deck, tab)
    raised = Raised(monkeypatch)
    entries = collect_shortcuts(w)
    sent = 0
    for e in entries:
        objects = e.get("objects", [e["object"]])
        if any(isinstance(o, QAction) and o.objectName() == QUIT for o in objects):
            continue
        for k in e["keys"]:
            key, mods = _sendable(k)
            raised.doing = f"key {k.toString()} ({e['text']}) on {tab}"
            target = QApplication.focusWidget() or w
            QTest.keyClick(target, Qt.Key(key), mods)
            _settle()
            sent += 1
            if not w.isVisible():
                raised.errors.append(f"{raised.doing}: the window closed")
                w.show()
            if w.deck.presenter is not None and w.deck.presenter.isVisible():
                w.deck.presenter.close()
            if not w.isActiveWindow():
                w.activateWindow()
                qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    assert sent > 30
    assert not raised.errors, "\n".join(raised.errors)
