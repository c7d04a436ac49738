"""The decode latency tab presented in Chinese (deck walk, item 4): on a 1280×720 projector at 1.5× its
line of regimes ("可用的张量并行度…") ran 1,268 px of a 1,272 px label, to the screen's edge, and the
"comm from n = 16" label could drop onto the curve's rings. Read from the window as presentation mode
leaves it on a screen of that size (as test_lecture_hall does): pixels near the screen's right edge and
the plot's label and marker rectangles."""

import textwrap

import pytest

from screen_process import run_on_screen

SCRIPT = textwrap.dedent("""
import json
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app import i18n, theme, worker
worker.set_sync_default(True)
i18n.set_language(app, "zh")
from app.classroom.presentation import apply_look
apply_look(app)
from app.main_window import MainWindow
from app.state import Scenario, ScenarioModel
from app.views.latency.latency_items import text_rect
w = MainWindow(ScenarioModel(Scenario()))
w.show()
def settle():
    for _ in range(8):
        QApplication.processEvents()
settle()
w.deck.open_builtin()
w.deck.go(11)  # Decode latency as n changes
settle()
w.classroom.presentation.set_presentation(True)
out = {}
for s in (1.0, 1.5, 2.0, 2.5):
    theme.set_scale(s)
    settle(); settle()
    lv = w.latency_view if hasattr(w, "latency_view") else [v for v in w.findChildren(object)
                                                             if type(v).__name__ == "LatencyView"][0]
    lab = lv.summary_label
    top = lab.mapTo(w, lab.rect().topLeft()).y()
    img = w.grab().toImage()
    bg = img.pixelColor(w.width() - 2, top + 2)
    edge = sum(1 for x in range(w.width() - 12, w.width()) for y in range(top, top + lab.height())
               if abs(img.pixelColor(x, y).lightness() - bg.lightness()) > 60)
    items = lv.items
    vb = items.plot.getViewBox()
    (vx0, vx1), (vy0, vy1) = vb.viewRange()
    px = ((vx1 - vx0) / vb.width(), (vy1 - vy0) / vb.height())
    xs, ys = items.valid_dots.getData()
    comm = text_rect(items.comm_text, px) if items.comm_text.isVisible() else None
    out[str(s)] = {"edge_ink": edge, "win": w.width(), "comm": comm, "px": px,
                   "rings": [[float(x), float(y)] for x, y in zip(xs, ys)], "text": lab.text()}
print("RESULT " + json.dumps(out))
""")


def test_decode_latency_in_chinese_at_1280x720_clips_and_hides_nothing(tmp_path):
    out = run_on_screen(tmp_path, 1280, 720, SCRIPT)
    for s, o in out.items():
        assert o["win"] == 1280
        assert o["edge_ink"] == 0, (s, o["text"])  # the regimes line wraps before the screen's last 12 px
        if o["comm"] is None:
            continue
        x0, y0, x1, y1 = o["comm"]
        pxx, pxy = o["px"]
        # the ring of a marker (its radius about 6 px) does not meet the comm label's rectangle
        hit = [(x, y) for x, y in o["rings"] if x0 - 6 * pxx <= x <= x1 + 6 * pxx and y0 - 6 * pxy <= y <= y1 + 6 * pxy]
        assert hit == [], (s, o["comm"], hit)
