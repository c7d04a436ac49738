"""Playing, the ring view and the explanation prepare the next step in the frames before its
boundary (app/core/frame.py next_frames). What they prepared is a cache: a frame reached by playing
through boundaries must paint and say exactly what a fresh view asked for the same instant does."""

import numpy as np
import pytest

from app.core.frame import frame_at, next_frames
from app.core.scenarios import build_run
from app.state import Playback, Scenario, ScenarioModel
from app.views.ring import ring_layers
from app.views.ring.ring_view import RingView
from app.views.text.explain import ExplainPanel
from panel_text import shown_text


def _pixels(widget) -> np.ndarray:
    img = widget.grab().toImage()
    return np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())[:, :img.width() * 4].copy()


def _shown(qtbot, widget, size=(900, 640)):
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_next_frames_are_the_boundary_and_the_span_after_it():
    run = build_run(Scenario(kind="all-gather", n=6, nbytes=6 * 1024))
    idx = run.index
    stops = idx.stops
    t = (stops[1] + stops[2]) / 2
    at, after = next_frames(idx, t)
    assert at.t == stops[2]
    assert stops[2] < after.t < stops[3]
    # the same answers frame_at gives
    for f in (at, after):
        fresh = build_run(Scenario(kind="all-gather", n=6, nbytes=6 * 1024)).index
        g = frame_at(fresh, f.t)
        assert (f.step, f.steps_done, f.state) == (g.step, g.steps_done, g.state)
        assert np.array_equal(f.moving, g.moving)
        assert np.array_equal(f.held.count, g.held.count) and np.array_equal(f.held.present, g.held.present)
        assert f == frame_at(idx, f.t)
    # a later t of the same step keeps the answer it was given; the next step's is another
    assert next_frames(idx, (t + stops[2]) / 2, known=(at, after)) == (at, after)
    assert next_frames(idx, (t + stops[2]) / 2, known=(at, after))[0] is at
    assert next_frames(idx, after.t, known=(at, after))[0].t == stops[3]
    assert next_frames(idx, stops[-1]) == ()


# Box mode (n <= 16) lets differ a few pixels of the blocks' byte labels: Qt keeps a moving label's
# text as the picture it drew at its first sub-pixel position (before the look-ahead too: 546
# pixels of 576,000 at n = 8). A look-ahead that drew the wrong step's lanes would differ in
# thousands (a lane is ~150 x 3 pixels).
@pytest.mark.parametrize("kind, n, share", [("all-gather", 32, 0.0), ("all-reduce", 24, 0.0),
                                            ("reduce-scatter", 8, 0.002)])
def test_playing_through_boundaries_paints_what_a_fresh_view_paints(qtbot, monkeypatch, kind, n, share):
    model = ScenarioModel(Scenario(kind=kind, n=n, nbytes=n * 2**15))
    pb = Playback(model)
    view = _shown(qtbot, RingView(model, pb))
    pb.set_speed(1.0)  # 20 frames a step or more: time for every piece however slow the machine
    drawn_in_paint = []

    def spying(cls):
        draw = cls.draw

        def spy(layer, p, content, part=0, parts=1):  # lines stroked while the view paints, not ahead
            drawn_in_paint.append(cls.__name__)
            return draw(layer, p, content, part, parts)
        return spy

    boundaries = 0
    stops = pb.stops
    qtbot.wait(1)
    for _ in range(160):
        before = sum(1 for s in stops if s <= pb.t)
        pb.advance(1 / 60)
        crossed = sum(1 for s in stops if s <= pb.t) > before
        if not crossed:
            view.grab()  # paint as the screen would: the look-ahead prepares for the transform painted
            continue
        with monkeypatch.context() as m:
            for cls in (ring_layers.LanesLayer, ring_layers.ChordsLayer):
                m.setattr(cls, "draw", spying(cls))
            played = _pixels(view)
        boundaries += 1
        fresh_model = ScenarioModel(Scenario(kind=kind, n=n, nbytes=n * 2**15))
        fresh_pb = Playback(fresh_model)
        fresh = _shown(qtbot, RingView(fresh_model, fresh_pb))
        fresh_pb.seek(pb.t)
        differ = np.any((played != _pixels(fresh)).reshape(played.shape[0], -1, 4), axis=2)
        assert differ.sum() <= share * differ.size, f"t = {pb.t}: {differ.sum()} pixels differ"
        fresh.close()
    assert boundaries >= 3
    assert drawn_in_paint == [], "a boundary's lanes or chords were drawn in its frame, not ahead"
    # a jump back while the next step is being prepared (three frames after a boundary: its set
    # of messages and its bars are ready): what was prepared is not what is shown
    before = sum(1 for s in stops if s <= pb.t)
    while sum(1 for s in stops if s <= pb.t) == before:
        pb.advance(1 / 60)
        view.grab()
    for _ in range(3):
        pb.advance(1 / 60)
        view.grab()
    pb.seek((stops[1] + stops[2]) / 2)
    fresh_model = ScenarioModel(Scenario(kind=kind, n=n, nbytes=n * 2**15))
    fresh_pb = Playback(fresh_model)
    fresh = _shown(qtbot, RingView(fresh_model, fresh_pb))
    fresh_pb.seek(pb.t)
    differ = np.any((_pixels(view) != _pixels(fresh)).reshape(fresh.height(), -1, 4), axis=2)
    assert differ.sum() <= share * differ.size, f"after a seek: {differ.sum()} pixels differ"


def test_the_explanation_written_ahead_is_the_one_written_at_the_time(qtbot):
    model = ScenarioModel(Scenario(kind="all-gather", n=16, nbytes=2**20))
    pb = Playback(model)
    panel = _shown(qtbot, ExplainPanel(model, pb), (500, 700))
    pb.set_speed(pb.MAX_SPEED)
    fresh_model = ScenarioModel(Scenario(kind="all-gather", n=16, nbytes=2**20))
    fresh_pb = Playback(fresh_model)
    fresh = _shown(qtbot, ExplainPanel(fresh_model, fresh_pb), (500, 700))
    used = 0
    for _ in range(60):
        ahead = dict(panel._ahead)
        pb.advance(1 / 60)
        used += panel._key in ahead
        fresh_pb.seek(pb.t)
        assert shown_text(panel) == shown_text(fresh), f"t = {pb.t}"
    assert used >= 2  # the texts shown at boundaries were the ones written ahead


@pytest.mark.parametrize("n", [8, 32])
def test_a_window_grab_paints_lit_lanes_where_they_are(qtbot, n):
    """The lane pictures are placed in device pixels: in a grab of the whole window the ring view
    is offset inside it, and each lit lane must still be painted on its line."""
    from app.main_window import MainWindow

    model = ScenarioModel(Scenario(kind="all-gather", n=n, nbytes=n * 2**15))
    pb = Playback(model)
    win = _shown(qtbot, MainWindow(model, pb), (1600, 900))
    view = win.findChild(RingView)
    pb.seek((pb.stops[2] + pb.stops[3]) / 2)  # a step in flight: every device's lanes are lit
    img = win.grab().toImage()
    lit = view.lanes.active
    assert len(lit) == 2 * n
    checked = 0
    for (d, k), colour in lit.items():
        line = view.lanes.lines[d][k]
        for f in (0.3, 0.7):  # along the lane, away from its ends (blocks, the switch's rim)
            pos = view.viewport().mapTo(win, view.mapFromScene(line.pointAt(f)))
            got = img.pixelColor(pos)
            near = max(abs(got.red() - colour.red()), abs(got.green() - colour.green()),
                       abs(got.blue() - colour.blue()))
            checked += near <= 60  # a flying block may cover a point: most, not all
    assert checked >= 0.8 * 2 * len(lit), f"{checked} of {2 * len(lit)} lane points show their colour"
