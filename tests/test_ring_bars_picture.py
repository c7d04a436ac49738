"""The radial bars' picture, composed in numpy through a pixel map (app/views/ring/ring_bars.py BarsLayer),
shows what Qt rotating each bar's image into place shows: the same pixels but for a few on bar
edges, where Qt's fixed-point rasterizer rounds a sub-pixel position the other way."""

import numpy as np
import pytest
from PySide6.QtGui import QImage, QPainter, QTransform

from app.views.ring.ring_view import RingView
from app.state import Playback, Scenario, ScenarioModel

EDGE_SHARE = 0.01  # at most this share of the picture's pixels may differ (measured: 0.1-0.2 % at n = 32 … 256)


def _picture(layer, paint) -> np.ndarray:
    r = layer.boundingRect()
    img = QImage(int(r.width()) + 4, int(r.height()) + 4, QImage.Format_ARGB32_Premultiplied)
    img.fill(0)
    p = QPainter(img)
    p.setTransform(QTransform.fromTranslate(-r.left() + 1.25, -r.top() + 1.5))  # not on whole pixels
    paint(p)
    p.end()
    return np.frombuffer(img.constBits(), np.uint32).reshape(img.height(), -1)[:, :img.width()].copy()


@pytest.mark.parametrize("kind", ["all-reduce", "all-gather"])
def test_the_composed_bars_match_each_bar_rotated_by_qt(qtbot, kind):
    model = ScenarioModel(Scenario(kind=kind, n=32, nbytes=2**20))
    pb = Playback(model)
    view = RingView(model, pb)
    qtbot.addWidget(view)
    view.resize(900, 640)
    view.show()
    qtbot.waitExposed(view)
    pb.seek(pb.stops[5])  # partial sums and a new chunk outlined in every bar
    bars = view.bars
    assert view.devices[0].radial
    composed = _picture(bars, lambda p: bars.paint(p, None))
    rotated = _picture(bars, lambda p: bars._paint_each(p, bars._current_pixels()))
    drawn = rotated != 0
    assert drawn.sum() > 32 * 100  # every bar is there (tens of pixels each)
    differ = composed != rotated
    assert differ.sum() <= EDGE_SHARE * drawn.sum(), f"{differ.sum()} of {drawn.sum()} pixels differ"
