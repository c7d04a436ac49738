"""The algorithm menu at 1280×720: the closed box of "machine's choice (NVLS Tree, Simple at
1 MiB)" is far narrower than its text, so it ends with "…" inside its text rect (Qt's own box cut it
mid-letter), and the whole entry is in its tooltip and on a readout under it, whose painted rect holds
every wrapped line (the hint below gives up height first)."""

from PySide6.QtWidgets import QApplication

from app.controls import MACHINE_CHOICE, ControlPanel
from classroom_fixtures import make_window


def test_the_machines_choice_is_elided_in_the_box_and_whole_under_it(qtbot):
    w = make_window(qtbot, kind="all-reduce", n=16, algo="hier", size=(1280, 720), nbytes=2**26,
                    topology="dgx-h100")
    panel = w.findChild(ControlPanel)
    panel.algo.activated.emit(panel.algo.findData(MACHINE_CHOICE))
    qtbot.waitUntil(lambda: panel.algo.currentData() == MACHINE_CHOICE and panel.algo_readout.text() != "")
    QApplication.processEvents()
    full = panel.algo.currentText()
    # at 64 MiB on two DGX nodes NCCL's tuner runs its NVLS Tree (the registry's hier), Simple (at 1 MiB its Tree)
    assert full == "machine's choice (NVLS Tree, Simple at 64 MiB)"
    # the box paints an elided text that fits where the style draws it
    rect, fm = panel.algo.text_rect(), panel.algo.fontMetrics()
    shown = panel.algo.shown_text()
    assert shown != full and shown.endswith("…") and fm.horizontalAdvance(shown) <= rect.width()
    assert fm.horizontalAdvance(full) > rect.width()  # (what Qt's own box would have cut)
    assert panel.algo.toolTip() == full
    # the readout holds the whole entry, wrapped, and its painted rect is tall enough for every line
    r = panel.algo_readout
    assert r.text() == full and r.toolTip() == full and r.wordWrap()
    assert r.fontMetrics().horizontalAdvance(full) > r.width()  # it does wrap here: two lines or more
    assert r.height() >= r.heightForWidth(r.width()) >= 2 * r.fontMetrics().lineSpacing()
    below = panel.algo_readout.mapTo(panel, panel.algo_readout.rect().topLeft()).y()
    assert below >= panel.algo.mapTo(panel, panel.algo.rect().bottomLeft()).y()
    assert panel.n.mapTo(panel, panel.n.rect().topLeft()).y() >= below + panel.algo_readout.height()
    # a name that fits needs no readout
    panel.machine.activated.emit(panel.machine.findData(""))
    qtbot.waitUntil(lambda: panel.algo_readout.text() == "")
    assert panel.algo.fits()
    qtbot.waitUntil(lambda: r.height() < r.fontMetrics().lineSpacing())  # an empty row takes no line


def _ink(combo) -> int:
    """Pixels of the closed box's text rect far from the box's background (what its text paints)."""
    import numpy as np

    img = combo.grab().toImage()
    r = combo.text_rect()
    a = np.array([[img.pixelColor(x, y).lightness() for x in range(r.left(), r.right())]
                  for y in range(r.top(), r.bottom())])
    return int((np.abs(a - np.median(a)) > 60).sum())


def test_a_machines_link_box_paints_the_machines_links(qtbot):
    """The link box is off on a machine (it brings its own links) and shows them as its placeholder:
    the eliding box once painted only its (empty) entry, so the box was blank."""
    w = make_window(qtbot, kind="all-reduce", n=16, algo="hier", size=(1280, 720), nbytes=2**26,
                    topology="dgx-h100")
    panel = w.findChild(ControlPanel)
    link = panel.link
    QApplication.processEvents()
    assert not link.isEnabled() and link.currentIndex() == -1
    assert link.placeholderText().startswith("NVLink 4") and "IB NDR 400" in link.placeholderText()
    painted = _ink(link)
    link.setPlaceholderText("·")  # (an empty placeholder makes Qt choose the first entry)
    assert link.currentIndex() == -1 and _ink(link) < painted // 4  # the links' names were what painted
