"""
Every typed value is taken whole or refused with the command line's words: the S field ("7 B",
"7", "1e30" + Enter) and the n field ("3.5"). A refusal leaves the scenario as it was and the
app running.
"""

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from simcore.scenarios import parse_bytes  # noqa: E402


@pytest.fixture
def window(qtbot, app_env):
    from app.main_window import MainWindow
    from app.state import Scenario, ScenarioModel

    w = MainWindow(ScenarioModel(Scenario(kind="all-gather", n=8)))
    qtbot.addWidget(w)
    w.resize(1600, 900)
    w.show()
    qtbot.waitExposed(w)
    return w


def _type_size(w, text):
    combo = w.controls.size_combo
    combo.setEditText(text)
    combo.lineEdit().editingFinished.emit()


@pytest.mark.parametrize("text,words", [
    ("7 B", "cannot be split into 8 equal whole-byte chunks"),
    ("7", "cannot be split into 8 equal whole-byte chunks"),
    ("1e30", "at most 1 TiB"),
    ("3.5", "cannot be split into 8 equal whole-byte chunks"),
    ("7 parsecs", "cannot read a size"),
])
def test_a_size_the_run_cannot_take_is_refused_in_words(window, text, words):
    w = window
    before, run = w.model.scenario, w.model.run
    _type_size(w, text)
    assert words in w.controls.error.text(), (text, w.controls.error.text())
    assert w.model.scenario is before and w.model.run is run  # nothing else changed
    assert w.controls.size_combo.currentText() == text  # what was typed stays, to be corrected
    _type_size(w, "64 KiB")  # still running, and the complaint goes with a good value
    assert w.model.scenario.nbytes == parse_bytes("64 KiB") and not w.controls.error.text()


def test_the_device_field_refuses_a_fraction(window, qtbot):
    w = window
    box = w.controls.n
    before = w.model.scenario
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "3.5")  # typed key by key, through the spin box's validator
    assert box.lineEdit().text() == "3.5"  # not "35"
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert box.lineEdit().text() == "3.5"  # kept beside the reason
    assert w.model.scenario == before and w.model.scenario.n == 8
    assert box.value() != 35
    assert "whole number" in w.controls.error.text()
    box.setValue(4)
    assert w.model.scenario.n == 4 and not w.controls.error.text()


def test_the_decode_tab_does_not_offer_the_hidden_animations_controls(window):
    w = window
    w.select_tab("latency")
    assert not w.act_play.isEnabled() and not w.act_fwd.isEnabled()
    assert not w.step_label.isVisible() and not w.time_label.isVisible()
    assert "not an animation" in w.statusBar().currentMessage()  # the reason is said
    w.select_tab("ring")
    assert w.act_play.isEnabled() and w.step_label.isVisible()
    t = w.playback.t
    w.act_fwd.trigger()
    assert w.playback.t > t  # stepping works again


def test_the_link_box_names_the_machines_own_links_and_is_not_cut(window):
    w = window
    link = w.controls.link
    assert w.model.update(topology="tpu-v5e-16x16", n=16, algo="torus")
    assert link.currentIndex() == -1 and link.placeholderText() == "TPU v5e ICI link"  # not NVLink 4
    assert "4×4 slice" in w.controls.machine.currentText() and "4×4 slice" in w.controls.hint.text()
    assert w.model.update(topology="", algo="ring", n=8)
    assert link.currentText() == "NVLink 4 (H100)"
    assert link.fontMetrics().horizontalAdvance(link.currentText()) < link.width() - 20  # whole, beside its arrow
