"""Buffers at 1280×720: every GPU's row named, in legible text, rows as tall as
their names; at 1920×1080 the position axis stays under the plot."""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QFontMetricsF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.views.buffers.buffer_view import ROW_FONT_MIN_PX, BufferView  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


@pytest.mark.parametrize("size, compact", [((1280, 720), True), ((1920, 1080), False)])
def test_every_gpu_row_is_named_at_1280x720(qtbot, size, compact):
    w = make_window(qtbot, "reduce-scatter", 16, size=size)
    assert w.select_tab("buffers")
    QApplication.processEvents()
    view = w.findChild(BufferView)
    w.playback.seek_step(3)
    QApplication.processEvents()
    left = view.plot.getAxis("left")
    ticks = left._tickLevels[0]
    assert [round(y - 0.5) for y, _t in ticks] == list(range(16))  # every GPU, none skipped
    font = left.style["tickFont"]
    assert font.pixelSize() >= ROW_FONT_MIN_PX
    row_px = view.plot.getViewBox().height() / 16
    assert row_px >= QFontMetricsF(font).ascent() + 1  # a name no taller than its row: no overlap
    assert view.plot.getAxis("bottom").isVisible() is not compact
