"""Predict, then reveal in the window: the ring view hides the next step, clicks are scored, the step is played."""

import pytest

pytest.importorskip("pytestqt")

from app.core.predict import RECEIVER  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402
from simcore.trace import SWITCH  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def _window(qtbot, kind="all-gather", n=4, algo="ring"):
    return make_window(qtbot, kind, n, algo)


def _click_device(qtbot, view, d):
    """A real mouse click on device d of the ring view (or the switch for SWITCH)."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    item = view.switch if d == SWITCH else view.devices[d]
    pos = view.mapFromScene(item.sceneBoundingRect().center())
    QTest.mouseClick(view.viewport(), Qt.LeftButton, pos=pos)


def _nothing_on_the_wire(w, k):
    """No message of step k is under way in the frame, and no block is painted anywhere along its
    messages' way (sender's send lane, receiver's receive lane)."""
    from app.core.frame import frame_at
    from ring_pixels import device_coloured_share, grab, message_block

    msgs = w.model.run.trace.messages
    step_msgs = [i for i, m in enumerate(msgs) if m.step == k]
    assert not set(step_msgs) & set(frame_at(w.model.run, w.playback.t).moving.tolist())
    pic = grab(w.ring_view)
    assert all(device_coloured_share(w.ring_view, pic, message_block(w.ring_view, i, p)) == 0
               for i in step_msgs for p in (0.25, 0.75))


def test_predict_mode_hides_the_next_step_and_scores_clicks(qtbot):
    w = _window(qtbot, "all-gather", 4)
    c = w.classroom
    ctl = c.predict
    ctl.animate = False  # reveal by jumping: deterministic
    c.act_predict.trigger()
    assert c.predict_dock.isVisible() and w.timeline_dock.isVisible()  # it hides the step itself (test_classroom_predict_hides)
    right = wrong = 0
    for k in range(3):
        q = ctl.q
        assert (q.coll, q.step) == (0, k) and w.playback.t == pytest.approx(w.playback.stops[k])
        _nothing_on_the_wire(w, k)  # nothing shows where the step's blocks go
        good = next(iter(q.answers))
        if q.kind == RECEIVER:
            choice = good if k != 1 else (good + 1) % 4
            _click_device(qtbot, w.ring_view, choice)
        else:
            choice = good if k != 1 else (good + 1) % 4
            c.predict_panel.chunk_buttons[choice].click()
        if choice == good:
            right += 1
            assert "✓" in c.predict_panel.verdict.text()
        else:
            wrong += 1
            assert "✗" in c.predict_panel.verdict.text()
    assert ctl.q is None and w.playback.t == pytest.approx(w.playback.t_end)  # all revealed
    s = ctl.scores[("all-gather", "ring")]
    assert (s.right, s.asked) == (right, right + wrong) == (2, 3)
    assert "2 of 3" in c.predict_panel.score.text()
    c.act_predict.trigger()
    assert not c.predict_dock.isVisible() and w.timeline_dock.isVisible()


def test_reveal_plays_the_step_on_the_clock(qtbot):
    w = _window(qtbot, "reduce-scatter", 4)
    ctl = w.classroom.predict
    w.playback.set_speed(4.0)
    w.classroom.act_predict.trigger()
    q = ctl.q
    ctl.answer(next(iter(q.answers)))
    assert w.playback.playing  # the step is played, not jumped
    qtbot.waitUntil(lambda: ctl.q is not None and ctl.q.step == 1, timeout=10000)
    assert not w.playback.playing
    assert w.playback.t == pytest.approx(w.playback.stops[1])


def test_predict_follows_a_new_scenario(qtbot):
    w = _window(qtbot, "all-gather", 4)
    ctl = w.classroom.predict
    ctl.animate = False
    w.classroom.act_predict.trigger()
    ctl.answer(next(iter(ctl.q.answers)))
    w.model.update(kind="all-reduce", algo="rd", n=8)
    assert ctl.q.kind == RECEIVER and ctl.q.answers == {ctl.q.device ^ (1 << ctl.q.step)}  # the partner
    ctl.answer(-5)
    assert ctl.scores[("all-gather", "ring")].right == 1
    assert ctl.scores[("all-reduce", "rd")].asked == 1


def test_moving_the_clock_by_hand_asks_about_the_new_step(qtbot):
    w = _window(qtbot, "all-gather", 8)
    ctl = w.classroom.predict
    w.classroom.act_predict.trigger()
    assert ctl.q.step == 0
    w.playback.step_forward()  # → : the student skips a step without answering
    qtbot.waitUntil(lambda: ctl.q is not None and ctl.q.step == 1)
    assert w.playback.t == pytest.approx(w.playback.stops[1])
    assert ctl.scores == {}  # nothing was answered, nothing scored
    w.playback.seek(0.5 * (w.playback.stops[3] + w.playback.stops[4]))  # scrub into the middle of step 4
    qtbot.waitUntil(lambda: ctl.q is not None and ctl.q.step == 3)
    assert w.playback.t == pytest.approx(w.playback.stops[3])  # back to the picture before it
