"""The views as a person meets them in the lecture hall (issue 31, the views' minor items): what is
painted is read back from layout rectangles, painted text rectangles and pixels."""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPointF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app import theme  # noqa: E402
from app.state import Playback, Scenario, ScenarioModel  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def settle(k=6):
    for _ in range(k):
        QApplication.processEvents()


def ring_view(qtbot, size=(1200, 800), **scenario):
    from app.views.ring.ring_view import RingView

    model = ScenarioModel(Scenario(**scenario))
    pb = Playback(model)
    view = RingView(model, pb)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    settle()
    return model, pb, view


# -- the ring: a device's "N queued" line has room in its layout box --------------------------------
def test_queued_label_fits_the_box_the_layout_gave_it(qtbot):
    """Two-shot's sends wait for their port as one-shot's do (the registry's `queues`): the layout
    must size each device's label for its second line, "6 queued", or the label is drawn twice as
    tall as its box (48.5 px in 25.3 px at n = 8) and runs over the device's blocks."""
    model, pb, view = ring_view(qtbot, kind="all-reduce", n=8, algo="two-shot", nbytes=2.0**20)
    msgs = list(model.run.trace.messages)
    pb.seek(min(m.t_end for m in msgs) * 0.5)  # the first sends on the wire, the rest queued
    settle()
    lay = view.layout_now
    queued = 0
    for d, (lab, box) in enumerate(zip(view.device_labels, lay.device_labels)):
        if box is None or not lab.isVisible():
            continue
        queued += "queued" in lab.text
        drawn = lab.mapRectToScene(lab.boundingRect())
        assert drawn.height() <= box.rect.height() + 0.5, (d, lab.text, drawn.height(), box.rect.height())
    assert queued >= 4, "sends are shown waiting"
