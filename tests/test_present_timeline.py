"""Presentation's short timeline, painted: at 1280×720 and
1920×1080, text 1×–2.5×, its rows are at least COMPACT_ROW_PX tall on screen (GPUs grouped as the
strip's height asks), every row named, the time axis' ticks in a font a room reads, and the picture
still keeps 60 % of the screen. Read from the window as presentation mode leaves it (a screen of that
size, as test_lecture_hall does)."""

import json
import textwrap

import pytest

from test_lecture_hall import on_screen
import test_lecture_hall

SCRIPT = textwrap.dedent("""
import json
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.classroom.presentation import apply_look
from app import theme
from app.main_window import MainWindow
from app.state import Scenario, ScenarioModel
apply_look(app)
w = MainWindow(ScenarioModel(Scenario(kind="all-gather", n=8)))
w.show()
def settle():
    for _ in range(6):
        QApplication.processEvents()
settle()
p = w.classroom.presentation
p.set_presentation(True)
out = {}
for s in (1.0, 1.5, 2.0, 2.5):
    theme.set_scale(s)
    settle()
    tl = w.timeline
    vb = tl.plot.getViewBox()
    top = vb.mapViewToDevice(QPointF(0, 0)).y()
    below = vb.mapViewToDevice(QPointF(0, 1)).y()
    img = tl.grab().toImage()
    # painted: the first row's bands (send above, receive below) down a column in the middle of the bars
    x = int(vb.mapViewToDevice(QPointF(tl.model.run.trace.t_end / tl.unit_s / 2, 0)).x())
    x = tl.plot.mapTo(tl, tl.plot.mapFromScene(vb.mapViewToScene(QPointF(tl.model.run.trace.t_end / tl.unit_s / 2, 0)))).x()
    y0 = tl.plot.mapTo(tl, tl.plot.mapFromScene(vb.mapViewToScene(QPointF(0, -0.02)))).y()
    y1 = tl.plot.mapTo(tl, tl.plot.mapFromScene(vb.mapViewToScene(QPointF(0, 0.98)))).y()
    bg = img.pixelColor(2, 2).name()
    inked = sum(1 for y in range(y0, y1) if img.pixelColor(x, y).name() != bg)
    page = w.tabs.currentWidget()
    out[str(s)] = {"row_px": below - top, "inked": inked, "rows": tl.n_rows, "group": tl.group,
                   "ticks": [lab for _p, lab in tl.plot.getAxis("left")._tickLevels[0]],
                   "tick_px": tl._small().pixelSize(), "timeline_h": w.timeline_dock.height(),
                   "visible": w.timeline_dock.isVisible(),
                   "share": page.width() * page.height() / float(w.width() * w.height())}
print("RESULT " + json.dumps(out))
""")


@pytest.mark.parametrize("screen", [(1280, 720), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_presentation_timeline_rows_are_readable_and_the_picture_keeps_its_share(tmp_path, screen, monkeypatch):
    from app.views.timeline.timeline import COMPACT_ROW_PX

    monkeypatch.setattr(test_lecture_hall, "SCREEN_SCRIPT", SCRIPT)
    out = on_screen(tmp_path, *screen)
    for s, m in out.items():
        assert m["visible"], (s, m)
        assert m["row_px"] >= COMPACT_ROW_PX, (s, m)  # each row (a GPU or a group) on screen
        assert m["inked"] >= 0.6 * COMPACT_ROW_PX, (s, m)  # and its bars painted that tall
        assert len(m["ticks"]) == m["rows"], (s, m)  # every row named
        assert m["tick_px"] >= 15, (s, m)  # the axis' text no smaller than the desk's
        assert m["share"] >= 0.60, (s, m)
    print(json.dumps(out))
