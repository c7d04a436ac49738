"""
The control dock as a student types into it: the n field reads
every digit typed and names its limits, a complaint leaves the dock when its cause is gone,
and every collective splits S by the same rule with the same sentence.
"""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from app.core import scenarios  # noqa: E402
from app.state import Scenario, ScenarioModel  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def _type_n(w, text):
    box = w.controls.n
    box.setFocus()
    box.selectAll()
    QTest.keyClicks(box, text)
    QTest.keyClick(box, Qt.Key_Return)


@pytest.mark.parametrize("typed", ["100000", str(scenarios.MAX_N + 1), "0"])
def test_typing_n_out_of_range_is_read_whole_and_refused_with_the_limits(qtbot, typed):
    w = make_window(qtbot, "all-gather", 8)
    _type_n(w, typed)
    assert w.controls.n.lineEdit().text() == typed  # not cut to "10" / "6", not reverted
    assert w.model.scenario.n == 8
    err = w.controls.error.text()
    assert typed in err and f"1 to {scenarios.MAX_N}" in err
    _type_n(w, "16")  # a good value: taken, and the complaint goes
    assert w.model.scenario.n == 16 and not w.controls.error.text()


def test_the_arrows_stay_inside_the_limits(qtbot):
    w = make_window(qtbot, "all-gather", 1)
    w.controls.n.stepBy(-1)
    assert w.model.scenario.n == 1
    w.controls.n.stepBy(10_000)
    assert w.model.scenario.n == scenarios.MAX_N


def test_a_complaint_leaves_when_its_cause_is_gone(qtbot):
    w = make_window(qtbot, "all-gather", 8)
    combo = w.controls.size_combo
    combo.setEditText("lots")
    combo.lineEdit().editingFinished.emit()
    assert w.controls.error.text()
    combo.setEditText("1 MiB")  # what is in place already: nothing changes, and nothing is wrong
    combo.lineEdit().editingFinished.emit()
    assert not w.controls.error.text()
    _type_n(w, "100000")
    assert w.controls.error.text()
    _type_n(w, "8")  # the n already in place
    assert not w.controls.error.text()


@pytest.mark.parametrize("kind, algo", [("all-gather", "ring"), ("reduce-scatter", "ring"), ("all-reduce", "ring"),
                                        ("all-reduce", "rd"), ("all-reduce", "innet"), ("all-reduce", "direct")])
def test_every_collective_splits_s_by_the_same_rule(kind, algo):
    model = ScenarioModel(Scenario(kind=kind, algo=algo, n=8, nbytes=1024.0))
    said = []
    model.error.connect(said.append)
    assert model.update(nbytes=7.0) is False  # 7 B in 8 chunks would be 0.875 B each
    assert said == ["7 B cannot be split into 8 equal whole-byte chunks: the nearest size that does is 8 B"]
    assert model.update(nbytes=8.0) is True


def test_the_screenshot_icon_is_an_outline_in_the_text_colour(qtbot):
    from PySide6.QtGui import QColor

    from app import theme

    w = make_window(qtbot, "all-gather", 4)
    for key in ("dark", "light", "dark"):
        w.classroom.presentation.set_theme(key)
        ink = QColor(theme.palette().text)
        img = w.act_screenshot.icon().pixmap(32, 32).toImage()
        opaque = [img.pixelColor(x, y) for x in range(32) for y in range(32) if img.pixelColor(x, y).alpha() > 128]
        assert 60 < len(opaque) < 0.5 * 32 * 32  # a drawn shape, not a solid blot
        assert all(abs(c.red() - ink.red()) + abs(c.green() - ink.green()) + abs(c.blue() - ink.blue()) < 24
                   for c in opaque)


def test_a_refused_file_leaves_no_complaint_in_the_dock(qtbot, tmp_path):
    import json

    w = make_window(qtbot, "all-gather", 8)
    path = tmp_path / "tp.json"  # valid as a file, refused by the model: tp-forward needs n to divide 8 heads
    path.write_text(json.dumps({"schema": "shard-lab-scenario", "version": 1, "scenario": {
        "kind": "tp-forward", "n": 3, "algo": "ring", "nbytes": 3072, "link": "nvlink4"}}))
    ok = w.classroom.open_scenario(str(path))
    assert not ok and w.classroom.last_error  # said in a box and the status bar …
    assert not w.controls.error.text()  # … not left in red under the controls the user never touched
