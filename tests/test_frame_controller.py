"""
app/frame_controller.py: one frame resolved per playback tick, handed to each registered view only
when what it reads changed; the predict mask and the look-ahead travel in the frame.
"""

import gc
from dataclasses import replace

import pytest

from app import frame_controller
from app.core.frame import IN_PROGRESS, frame_at, next_frames
from app.state import Playback, Scenario, ScenarioModel


class SpyView:
    """A view that records the frames it is handed."""

    def __init__(self):
        self.got = []

    def set_frame(self, frame):
        self.got.append(frame)


class StepView(SpyView):
    """A view that reads only the step texts' key."""

    def frame_part(self, frame):
        return frame.index, frame.key


def resolved(run, t):
    """The frame the controller hands out at t: frame_at's, with its look-ahead."""
    return replace(frame_at(run, t), ahead=next_frames(run, t))


@pytest.fixture
def ring4():
    model = ScenarioModel(Scenario(kind="all-reduce", n=4, algo="ring", nbytes=4096.0))
    return model, Playback(model)


def test_a_view_gets_each_changed_frame_once_and_no_tick_that_changes_nothing(ring4):
    model, pb = ring4
    view = SpyView()
    first = pb.frames.register(view)
    assert first == resolved(model.run, pb.t)  # the view draws the frame shown now itself
    pb.frames.show(pb.t)  # a tick at the same instant: nothing changed
    assert view.got == []
    stops = pb.stops
    mid = (stops[1] + stops[2]) / 2
    pb.seek(mid)
    assert len(view.got) == 1 and view.got[0] == resolved(model.run, mid)
    assert view.got[0].state == IN_PROGRESS and len(view.got[0].moving) == 4
    pb.frames.show(mid)
    pb.seek(mid)  # the clock does not move: no tick
    assert len(view.got) == 1
    pb.seek(stops[2])
    assert len(view.got) == 2 and view.got[1].steps_done == 2 and len(view.got[1].moving) == 0
    # a new run of the same scenario is another picture, even at the same instant
    model.update(nbytes=8192.0)
    assert view.got[-1].index is model.run.index


def test_a_view_that_reads_a_part_is_called_only_when_that_part_changes(ring4):
    model, pb = ring4
    view = StepView()
    pb.frames.register(view)
    stops = pb.stops
    for q in (0.2, 0.4, 0.6, 0.8):  # four ticks inside step 2: one change of its key
        pb.seek(stops[1] + q * (stops[2] - stops[1]))
    assert len(view.got) == 1
    pb.seek(stops[2])
    assert len(view.got) == 2 and [f.key for f in view.got] == [(0, 1, 1, IN_PROGRESS), (0, 1, 2, "done")]


def test_the_predict_mask_is_in_the_frame(qtbot, ring4):
    from app.classroom.predict_ui import PredictController
    from app.views.ring.ring_view import RingView

    model, pb = ring4
    ring = RingView(model, pb)
    qtbot.addWidget(ring)
    view = SpyView()
    pb.frames.register(view)
    predict = PredictController(model, pb, ring, animate=False)
    predict.start()
    t0 = predict._ask_t
    f = pb.frames.current()
    assert f.hidden_after == t0 and view.got[-1] is f and f.hides
    # just after the boundary the step being predicted flies, and its blocks are hidden
    after = f.ahead[1]
    assert len(after.moving) and not after.shown.any() and after.hidden_after == t0
    assert frame_at(model.run, after.t).shown.all()  # without the mask every block is shown
    predict.stop()
    assert pb.frames.current().hidden_after is None and view.got[-1].hidden_after is None


def test_views_are_held_weakly(ring4):
    _model, pb = ring4
    kept, dropped = SpyView(), SpyView()
    pb.frames.register(kept)
    pb.frames.register(dropped)
    del dropped
    gc.collect()
    assert pb.frames.views == [kept]


def test_the_look_ahead_stops_once_the_tick_has_spent_its_share(ring4, monkeypatch):
    _model, pb = ring4
    calls = []

    class Ahead(SpyView):
        def __init__(self, name):
            super().__init__()
            self.name = name

        def look_ahead(self, frame):
            calls.append(self.name)

    first, second = Ahead("first"), Ahead("second")
    pb.frames.register(first)
    pb.frames.register(second)
    clock = iter(range(100))
    monkeypatch.setattr(frame_controller.time, "perf_counter", lambda: next(clock) * 0.01)  # 10 ms a call
    pb.seek(pb.stops[1])
    assert calls == ["first"]  # the first took the tick's share: the second prepares in a later tick


def test_a_widget_qt_deleted_is_dropped(qtbot, ring4):
    import shiboken6
    from PySide6.QtWidgets import QWidget

    _model, pb = ring4

    class Widget(QWidget):
        def set_frame(self, frame):
            raise AssertionError("a deleted widget was handed a frame")

    w = Widget()
    pb.frames.register(w)
    shiboken6.delete(w)  # as a parent deleting its child does; the Python object lives on
    pb.seek(pb.stops[1])
    assert pb.frames.views == []
