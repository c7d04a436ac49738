"""The picture's room, painted: in presentation mode the ring's blocks in flight
are at least 24 px on screen with their chunk numbers; at the desk, the first layout at 1280×720
gives the picture at least half the window's width."""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPointF  # noqa: E402
from PySide6.QtWidgets import QApplication, QDockWidget  # noqa: E402

from app import theme  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def test_the_first_layout_at_1280x720_gives_the_picture_half_the_width(qtbot):
    w = make_window(qtbot, "all-gather", 8, size=(1280, 720))
    QApplication.processEvents()
    page = w.tabs.currentWidget()
    assert page.width() >= 0.5 * w.width(), (page.width(), w.width())
    for d in (w.controls_dock, w.explain_dock):  # the docks are still there, only narrower
        assert d.isVisible() and d.width() >= 200


@pytest.mark.parametrize("scale", (1.5, 2.5))
def test_presentation_blocks_on_screen_are_24px_with_their_numbers(qtbot, scale):
    from app.__main__ import step_time

    from app.classroom.presentation import ring_zoom

    w = make_window(qtbot, "all-gather", 8, size=(1280, 720))
    for d in w.findChildren(QDockWidget):  # the picture alone, as presenting leaves it
        d.hide()
    w.menuBar().hide()
    theme.set_scale(scale)
    QApplication.processEvents()
    ring = w.ring_view
    vp = ring.viewport()
    assert vp.width() >= 1200 and vp.height() <= 600  # a wide, short room: the case that shrank the boxes
    ring.set_zoom(ring_zoom(vp.width(), vp.height(), scale))
    assert ring.zoom > 1.3
    w.playback.pause()
    w.playback.seek(step_time(w.playback.stops, 2))
    QApplication.processEvents()
    flight = ring.flight
    blocks = flight.items
    assert blocks, "blocks in flight at step 2"
    side = ring.mapFromScene(flight.block_rect(QPointF(0, 0))).boundingRect().width()
    assert side >= 24
    assert flight.numbered()
    number_px = flight.number_px() * ring.zoom
    assert 14 <= number_px <= 0.7 * flight.s * ring.zoom  # legible, inside its block
    # painted: a block's centre carries its device's colour, not the background
    img = ring.viewport().grab().toImage()
    _m, pos, who, _c = blocks[0]
    p = ring.mapFromScene(pos + QPointF(flight.s * 0.35, flight.s * 0.35))
    assert img.pixelColor(p) != img.pixelColor(2, img.height() // 2)
