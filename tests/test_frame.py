"""
app.core.frame: what the views show at an instant, against a trace written out by hand.

The trace is a ring all-gather on 3 devices with every number chosen here, not by the engine:
each message is α + b/β = 1 µs + 1 µs = 2 µs (T); step 0 (d → d+1 sends chunk d) flies over
[0, T], step 1 (d → d+1 forwards chunk d−1) over [T, 2T]. The expected frames below follow from
those times alone (Patarasuk & Yuan 2009's ring all-gather: after step k device d holds chunks
d, d−1, …, d−k−1).
"""

from dataclasses import replace

import numpy as np
import pytest

from app.core.frame import DONE, IN_PROGRESS, NEXT, TIME_TOL, frame_at, time_eps
from app.core.trace_index import TraceIndex
from simcore.trace import Collective, Initial, Trace
from panel_text import shown_text

N, T = 3, 2e-6


def hand_trace() -> Trace:
    tr = Trace()
    for step in (0, 1):
        for d in range(N):
            ch = (d - step) % N
            tr.add_message(0, "all-gather", "ring", "ag", step, d, (d + 1) % N, ch, frozenset({ch}), 1000.0,
                           step * T, (step + 1) * T, n=N)
    tr.collectives.append(Collective(0, "all-gather", "ring", "ag", N, N, 0.0, 2 * T, 3000.0, 2, 0, 2 * N,
                                     Initial.own_one(list(range(N)))))
    return tr


@pytest.fixture(scope="module")
def index():
    return TraceIndex(hand_trace())


def chunks_held(f):
    return {d: sorted(ch for ch, who in f.held.device(d).items() if who) for d in range(N)}


def test_the_tolerance_is_relative_to_the_run(index):
    assert time_eps(2 * T) == pytest.approx(TIME_TOL * 2 * T)
    assert time_eps(0.0) > 0
    assert index.eps == time_eps(2 * T)


def test_at_the_start_step_one_is_next_and_nothing_flies(index):
    f = frame_at(index, 0.0)
    assert (f.coll, f.step, f.steps_done, f.state) == (0, 0, 0, NEXT)
    assert (f.stop, f.n_stops, f.at_stop, f.at_end) == (0, 2, True, False)
    assert len(f.moving) == 0 and len(f.arrived) == 0
    assert chunks_held(f) == {0: [0], 1: [1], 2: [2]}


def test_half_way_through_step_one(index):
    f = frame_at(index, T / 2)
    assert (f.step, f.steps_done, f.state, f.at_stop) == (0, 0, IN_PROGRESS, False)
    assert f.moving.tolist() == [0, 1, 2]
    np.testing.assert_allclose(f.progress, 0.5, rtol=1e-12)
    assert chunks_held(f) == {0: [0], 1: [1], 2: [2]}  # nothing has landed yet


def test_on_the_boundary_step_one_is_done_and_step_two_has_not_left(index):
    f = frame_at(index, T * (1 + TIME_TOL / 10))  # a float's worth past the boundary: still the boundary
    assert (f.step, f.steps_done, f.state, f.stop, f.at_stop) == (0, 1, DONE, 1, True)
    assert f.arrived.tolist() == [0, 1, 2]
    assert chunks_held(f) == {0: [0, 2], 1: [0, 1], 2: [1, 2]}


def test_three_quarters_and_the_end(index):
    f = frame_at(index, 1.75 * T)
    assert (f.step, f.steps_done, f.state) == (1, 1, IN_PROGRESS)
    assert f.moving.tolist() == [3, 4, 5]
    np.testing.assert_allclose(f.progress, 0.75, rtol=1e-12)
    end = frame_at(index, 2 * T)
    assert (end.step, end.steps_done, end.state, end.at_end, end.stop) == (1, 2, DONE, True, 2)
    assert chunks_held(end) == {d: [0, 1, 2] for d in range(N)}
    assert end.arrived.tolist() == [3, 4, 5]


def test_frames_compare_by_what_they_show(index):
    """Frames are resolved anew each time (nothing is kept) and equal when they show the same."""
    a, b = frame_at(index, T / 3), frame_at(index, T / 3)
    assert a is not b and a == b and hash(a) == hash(b)
    assert frame_at(index, T / 4) != a  # the blocks have flown less far
    # the same instant in another run of the same trace is another picture
    assert frame_at(TraceIndex(hand_trace()), T / 3) != a
    # the predict mask is part of what is shown: hiding step 2 changes nothing while step 1 flies ...
    masked = frame_at(index, T / 3, hidden_after=T)
    assert masked != a and masked.shown.tolist() == [True] * 3
    # ... and hides step 2's blocks while they fly
    f = frame_at(index, 1.5 * T, hidden_after=T)
    assert f.moving.tolist() == [3, 4, 5] and f.shown.tolist() == [False] * 3 and f.hides
    assert frame_at(index, 1.5 * T).shown.tolist() == [True] * 3
    # holdings compare by the messages landed, not by the object that holds them
    g = frame_at(index, T * (1 + TIME_TOL / 10))
    assert g.n_arrived == 3
    assert replace(g, held=None) == g and replace(g, n_arrived=2) != g
    with pytest.raises(ValueError):
        a.moving[0] = 7  # a frame's arrays are read-only


def test_the_ring_the_explanation_and_the_status_read_one_frame(qtbot):
    """At an instant mid-step and on a boundary, the ring's blocks are the frame's moving messages
    and the ring's caption, the explanation and the status bar name the frame's step state."""
    from ring_pixels import block_centre, block_rect, blocks_painted_wrong, device_coloured_share, grab

    from app.views.text.explain import ExplainPanel
    from app.views.ring.ring_texts import step_status
    from app.views.ring.ring_view import RingView
    from app.state import Playback, Scenario, ScenarioModel

    model = ScenarioModel(Scenario(kind="all-reduce", n=4, algo="ring", nbytes=4096.0))
    pb = Playback(model)
    ring, explain = RingView(model, pb), ExplainPanel(model, pb)
    for w in (ring, explain):
        qtbot.addWidget(w)
    ring.resize(900, 700)
    K = model.run.trace.collectives[0].n_steps
    ends = model.run.index.step_ends[0]
    for k, t, words in ((1, (ends[0] + ends[1]) / 2, ("in progress", "in flight")),
                        (1, ends[1], ("done", "after"))):
        pb.seek(t)
        f = frame_at(model.run, t)
        assert f.step == k
        assert len(f.moving) == (4 if f.state == IN_PROGRESS else 0)  # a ring step: every GPU sends one block
        # the ring paints a block for each of the frame's moving messages where the layout puts it,
        # and none on the lanes once the step is done
        pic = grab(ring)
        assert blocks_painted_wrong(ring, pic, f) == []
        if f.state != IN_PROGRESS:
            step_k = [m for m in model.run.trace.messages if m.step == k]
            assert all(device_coloured_share(ring, pic, block_rect(ring, block_centre(ring, m.src, m.dst, p))) == 0
                       for m in step_k for p in (0.25, 0.75))
        assert f"Step {k + 1} of {K} (reduce-scatter) — {words[0]}" in shown_text(explain)
        assert f"Step {k + 1} of {K} ({words[0]})" in ring.subcaption.text
        assert words[1] in step_status(f)
