"""With a deck open, Enter in a Scenario field applies what was typed (the deck's "number then Enter"
keys took every Enter of the window, so only Tab applied); Enter outside a field still jumps to the
scene number typed."""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QCoreApplication, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def _type(widget, text, key=Qt.Key.Key_Return):
    widget.setFocus(Qt.FocusReason.MouseFocusReason)
    QCoreApplication.processEvents()
    QTest.keyClick(widget, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(widget, text)
    QTest.keyClick(QApplication.focusWidget(), key)
    QCoreApplication.processEvents()


@pytest.mark.parametrize("key", [Qt.Key.Key_Return, Qt.Key.Key_Enter])
def test_enter_applies_a_scenario_field_while_a_deck_is_open(qtbot, key):
    w = make_window(qtbot, "all-gather", 8)
    assert w.deck.open_builtin() and w.deck.index == 0
    w.deck.dock.hide()  # the Scenario dock in front (it shares the column with the outline)
    w.controls_dock.raise_()
    n = w.controls.n
    _type(n.lineEdit() if hasattr(n, "lineEdit") else n, "2", key)
    assert w.model.scenario.n == 2 and w.deck.index == 0
    _type(w.controls.size_combo.lineEdit(), "2 MiB", key)
    assert w.model.scenario.nbytes == 2 * 2**20 and w.deck.index == 0


def test_enter_outside_a_field_still_jumps_to_the_scene_typed(qtbot):
    w = make_window(qtbot, "all-gather", 8)
    assert w.deck.open_builtin()
    w.ring_view.setFocus()
    QTest.keyClick(w.ring_view, Qt.Key.Key_4)
    QTest.keyClick(w.ring_view, Qt.Key.Key_Return)
    QCoreApplication.processEvents()
    assert w.deck.index == 3
