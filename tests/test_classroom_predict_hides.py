"""
Predict, then reveal must not give the answer away: while a question is
open, the explanation, the timeline and the ring view show nothing of the step being
predicted, and playing stops at every question. Checked on what is painted: the explanation's
document, the timeline's pixels, the ring view's blocks.
"""

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPointF, Qt  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402

from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def _pixels(widget) -> np.ndarray:
    img = widget.grab().toImage().convertToFormat(QImage.Format_RGB888)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())
    return a[:, : img.width() * 3].reshape(img.height(), img.width(), 3).astype(int)


def _coloured(px: np.ndarray) -> np.ndarray:
    """Pixels of a device colour (saturated), not the grey axis, text or background."""
    return (px.max(axis=2) - px.min(axis=2)) > 60


def _explanation(w) -> str:
    return w.explain.body.document().toPlainText()  # the document the panel paints


def _tells(text, w, step) -> bool:
    """Does the text name a message of `step` (sender → receiver: chunk)?"""
    msgs = [m for m in w.model.run.trace.messages if m.step == step]
    return any(f"GPU {m.src} → GPU {m.dst}: chunk {m.chunk}" in text for m in msgs)


def _timeline_columns(w, t0, t1):
    """The timeline plot's device-coloured pixels in the columns of simulated times [t0, t1] (s)."""
    tl = w.timeline
    vb = tl.plot.getViewBox()
    px = _pixels(tl.plot)
    box = vb.sceneBoundingRect()

    def col(t):
        return int(tl.plot.mapFromScene(vb.mapViewToScene(QPointF(t / tl.unit_s, 0))).x())

    top, bottom = int(tl.plot.mapFromScene(box.topLeft()).y()), int(tl.plot.mapFromScene(box.bottomLeft()).y())
    a, b = max(col(t0), 0), min(col(t1), px.shape[1])
    return _coloured(px[top:bottom, a:b])


def test_explanation_and_timeline_hide_the_step_being_predicted(qtbot):
    w = make_window(qtbot, "all-gather", 4)
    ctl = w.classroom.predict
    ctl.animate = False
    w.timeline_dock.show()
    before = _explanation(w)
    assert "GPU 0 → GPU 1" in before  # without predict mode the step is told
    w.classroom.act_predict.trigger()
    qtbot.waitUntil(lambda: w.timeline_dock.isVisible())
    stops = w.playback.stops
    # step 1 asked: nothing about it in the explanation, no bar at all on the timeline
    text = _explanation(w)
    assert not _tells(text, w, 0) and "Make your prediction" in text
    step = stops[1] - stops[0]
    assert not _timeline_columns(w, 0.05 * step, w.playback.t_end).any()  # (the playhead sits at 0)
    ctl.answer(next(iter(ctl.q.answers)))
    # step 2 asked: step 1 told and drawn, step 2 neither
    assert ctl.q.step == 1 and w.playback.t == pytest.approx(stops[1])
    assert not _tells(_explanation(w), w, 1) and "Make your prediction" in _explanation(w)
    assert _timeline_columns(w, stops[0] + 0.1 * step, stops[1] - 0.1 * step).any()
    assert not _timeline_columns(w, stops[1] + 0.1 * step, w.playback.t_end).any()
    # leaving predict mode tells and draws everything again
    w.classroom.act_predict.trigger()
    w.playback.seek(0.5 * (stops[1] + stops[2]))
    assert _tells(_explanation(w), w, 1)
    assert _timeline_columns(w, stops[1] + 0.1 * step, w.playback.t_end).any()


def test_the_ring_view_draws_no_block_of_the_step_being_predicted(qtbot):
    w = make_window(qtbot, "reduce-scatter", 8)
    ctl = w.classroom.predict
    ctl.animate = False
    w.classroom.act_predict.trigger()
    ctl.answer(next(iter(ctl.q.answers)))
    from PySide6.QtCore import QLineF

    from app import theme
    from app.core.frame import frame_at
    from ring_pixels import blocks_painted_wrong, device_coloured_share, grab, layer_picture, message_block

    ring = w.ring_view
    msgs = w.model.run.trace.messages
    asked = [i for i, m in enumerate(msgs) if m.step == ctl.q.step]
    # the ring handed the frame a quarter into the asked step with the question's mask (the clock
    # stays, so the question stays open): the step's messages are under way, yet neither their
    # blocks nor their chords are painted
    t = msgs[asked[0]].t_start + 0.25 * (msgs[asked[0]].t_end - msgs[asked[0]].t_start)
    mask = w.playback.frames.hidden_after
    assert mask is not None
    ring.set_frame(frame_at(w.model.run, t, hidden_after=mask))
    f = frame_at(w.model.run, t)
    assert set(asked) <= set(f.moving.tolist())
    where = {i: message_block(ring, i, p) for i, p in zip(f.moving.tolist(), f.progress.tolist()) if i in asked}
    pic = grab(ring)
    assert all(device_coloured_share(ring, pic, r) == 0 for r in where.values())
    lanes = ring.layout_now.lanes  # a chord would join the sender's send lane to the receiver's receive lane
    chords = layer_picture(ring.chord_layer)
    background = theme.palette().background.lower()
    assert {chords.colour(QLineF(lanes[msgs[i].src][0].p2(), lanes[msgs[i].dst][1].p2()).pointAt(0.5))
            for i in asked} == {background}
    ring.set_frame(f)  # the same instant with nothing hidden: every block is painted there
    assert blocks_painted_wrong(ring, grab(ring), f) == []


def test_space_at_a_question_plays_that_step_and_stops_at_the_next(qtbot):
    from PySide6.QtTest import QTest

    w = make_window(qtbot, "all-gather", 4)
    ctl = w.classroom.predict
    w.playback.set_speed(4.0)
    w.classroom.act_predict.trigger()
    assert ctl.q.step == 0 and not w.playback.playing
    QTest.keyClick(w.ring_view, Qt.Key_Space)  # the student presses Space instead of answering
    assert w.playback.playing
    qtbot.waitUntil(lambda: ctl.q is not None and ctl.q.step == 1 and not w.playback.playing, timeout=10000)
    assert w.playback.t == pytest.approx(w.playback.stops[1])  # stopped at the next question
    assert "Skipped" in w.classroom.predict_panel.verdict.text()
    assert ctl.scores.get(("all-gather", "ring")) is None or ctl.scores[("all-gather", "ring")].asked == 0
    assert not _tells(_explanation(w), w, 1) and "Make your prediction" in _explanation(w)
    QTest.keyClick(w.ring_view, Qt.Key_Space)
    qtbot.waitUntil(lambda: ctl.q is not None and ctl.q.step == 2 and not w.playback.playing, timeout=10000)
    assert w.playback.t == pytest.approx(w.playback.stops[2])
