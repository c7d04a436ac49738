"""The timeline's names of collectives and phases stay clear of the red playhead (deck walk, item 3):
every scene starts with the playhead at t = 0, where "all-gather", "reduce-scatter", "sum partial C" and
a machine's "intra-node RS" begin, and at 2.5× text its 7.5 px line covered their first letter. Read
from the items' rectangles on the plot's screen and from its pixels."""

import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg  # noqa: E402
from PySide6.QtCore import QPointF  # noqa: E402
from PySide6.QtGui import QColor  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app import theme  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


@pytest.mark.parametrize("scale", (1.0, 2.5))
@pytest.mark.parametrize("kind,n,extra", [("all-gather", 8, {}), ("matmul-3", 4, {}),
                                          ("all-reduce", 16, {"algo": "hier", "topology": "dgx-h100"})],
                         ids=("all-gather", "matmul-3", "dgx"))
def test_names_at_t0_are_right_of_the_playhead(qtbot, kind, n, extra, scale):
    w = make_window(qtbot, kind, n, size=(1280, 720), **extra)
    theme.set_scale(scale)
    for _ in range(6):
        QApplication.processEvents()
    w.playback.pause()
    w.playback.seek(0.0)
    QApplication.processEvents()
    tl = w.timeline
    vb = tl.plot.getViewBox()
    view = tl.plot  # the GraphicsView: scene coordinates are its pixels
    x_head = view.mapFromScene(vb.mapViewToScene(QPointF(tl.playhead.value(), 0))).x()
    half = theme.line("playhead") * 1.7 / 2  # the playhead's half-width under the mouse
    names = [it for it in tl.plot.getPlotItem().items if isinstance(it, pg.TextItem) and it.isVisible()
             and it is not tl.note and abs(it.pos().x()) < 1e-9]
    assert names, "a name starts at t = 0"
    img = view.grab().toImage()
    red = QColor(theme.palette().playhead)
    for it in names:
        r = view.mapFromScene(it.textItem.mapRectToScene(it.textItem.boundingRect())).boundingRect()
        ink_left = r.left() + it.textItem.document().documentMargin()
        assert ink_left >= x_head + half + 1, (it.toPlainText(), ink_left, x_head, half)
        # painted: the text's rows hold dark ink right of the line, and no playhead red there
        y0, y1 = int(r.top() + 4), int(r.bottom() - 4)
        xs = range(int(x_head + half + 1), int(ink_left) + 3)
        assert not any(img.pixelColor(x, y) == red for x in xs for y in range(y0, y1))


@pytest.mark.parametrize("scale", (1.0, 2.5))
@pytest.mark.parametrize("nbytes", (2.0**20, 2.0**26), ids=("1MiB", "64MiB"))
def test_phase_names_never_pile_up_and_show_where_they_fit(qtbot, nbytes, scale):
    """NCCL's NVLS Tree spends 66.8 µs of a 71.1 µs call at 1 MiB starting up: its three phases share the
    last few pixels, and their names were drawn on one another. A name shows only over its own span,
    clear of the one before; where the phases are wide (64 MiB) they are all named."""
    w = make_window(qtbot, "all-reduce", 16, size=(1280, 720), algo="hier", topology="dgx-h100", nbytes=nbytes)
    theme.set_scale(scale)
    for _ in range(6):
        QApplication.processEvents()
    tl = w.timeline
    vb, view = tl.plot.getViewBox(), tl.plot

    def px(x):
        return view.mapFromScene(vb.mapViewToScene(QPointF(x, 0))).x()

    shown = []
    for txt, x0, x1 in tl._phase_texts:
        if txt.isVisible():
            r = view.mapFromScene(txt.textItem.mapRectToScene(txt.textItem.boundingRect())).boundingRect()
            m = txt.textItem.document().documentMargin()
            left, right = r.left() + m, r.right() - m
            assert px(x0) <= left and right <= px(x1) + 4 + 2 * m, (txt.toPlainText(), left, right, px(x0), px(x1))
            shown.append((left, right, txt.toPlainText()))
    shown.sort()
    assert all(a[1] <= b[0] for a, b in zip(shown, shown[1:])), shown  # no two names on one another
    if nbytes > 2**25 and scale == 1.0:
        assert len(shown) == len(tl._phase_texts) == 3, shown
