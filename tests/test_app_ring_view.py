"""The ring view draws what the trace says at time t, rebuilds cleanly, and stays readable.

What it shows is checked on its pixels (tests/ring_pixels.py) against app.core.frame.frame_at,
and the frame against the engine."""

import pytest
from PySide6.QtCore import QPointF, Qt

from app import theme
from app.core.frame import frame_at
from app.core.trace_index import concurrent_phases
from app.views.ring.ring_view import RingView
from app.state import Playback, Scenario, ScenarioModel
from ring_pixels import (block_centre, block_rect, blocks_painted_wrong, device_coloured_share, frame_bar, grab,
                         held_dict, layer_picture, message_block, outlined, painted_as, slots_painted_wrong)
from simcore.trace import SWITCH

CASES = [("all-gather", "ring"), ("reduce-scatter", "ring")] + [("all-reduce", a) for a in
                                                                ("ring", "rd", "innet", "direct")]


S = 960 * 1024.0  # splits into 2, 5, 8, 16 and 64 equal chunks


def make_view(qtbot, size=(1200, 800), **scenario):
    scenario.setdefault("nbytes", S)
    model = ScenarioModel(Scenario(**scenario))
    pb = Playback(model)
    view = RingView(model, pb)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    return model, pb, view


def shown(view, n):
    """What the frame at the view's time says each device holds, after checking that the view's
    pixels show exactly that."""
    f = frame_at(view.run, view.playback.t)
    assert painted_as(view, f) == {}
    return held_dict(f, n)


def engine(holdings, n):
    return {d: {ch: who for ch, who in holdings.get(d, {}).items() if who} for d in range(n)}


@pytest.mark.parametrize("op, algo", CASES)
@pytest.mark.parametrize("n", [2, 5, 8])
def test_after_each_step_the_buffers_are_the_engines_holdings(qtbot, op, algo, n):
    model, pb, view = make_view(qtbot, kind=op, n=n, algo=algo)
    tr = model.run.trace
    c = tr.collectives[0]
    assert shown(view, n) == engine(tr.holdings(0, step=-1), n)
    # one-shot and in-network run their steps at once: stepping goes by phase, each
    # stop the end of a phase; the others stop after every step
    phases = concurrent_phases(op, algo)
    assert pb.n_steps == (min(len(phases), c.n_steps) if phases else c.n_steps)
    for k in range(pb.n_steps):
        pb.step_forward()
        t = pb.t
        now = shown(view, n)
        # the engine's time query, always
        assert now == engine(tr.holdings(0, t=t), n)
        # the engine's per-step query: equal unless a message of a later step already arrived
        early = [m for m in tr.messages if m.step > k and m.t_end <= t]
        by_step = engine(tr.holdings(0, step=k), n)
        if phases:  # at a phase's end every message of the phase has landed
            assert all(m.t_end <= t + 1e-15 for m in tr.messages if m.phase.startswith(phases[k]))
        elif not early:
            assert now == by_step
        else:
            # recursive doubling at n not a power of two: devices outside the fold start round 0
            # while the fold is still running — the view shows them done, as they are
            assert algo == "rd" and n & (n - 1)
            differ = {d for d in range(n) if now[d] != by_step[d]}
            assert differ <= {m.dst for m in early}
        if algo == "innet":  # the switch's own slots: the engine's, in the frame and in the pixels
            sw = tr.holdings(0, t=t).get(SWITCH, {})
            f = frame_at(model.run, t)
            assert {ch: w for ch, w in f.held.get(SWITCH, {}).items() if w} == {ch: w for ch, w in sw.items() if w}
            assert slots_painted_wrong(view, grab(view), SWITCH, sw, c.n_chunks) == {}
    assert pb.at_end
    everyone = frozenset(range(n))
    final = shown(view, n)
    if op == "reduce-scatter":
        assert all(final[d][(d + 1) % n] == everyone for d in range(n))
    else:
        assert all(who == everyone or op == "all-gather" for d in range(n) for who in final[d].values())
        assert all(len(final[d]) == c.n_chunks for d in range(n))


@pytest.mark.parametrize("op, algo", [("all-reduce", "ring"), ("all-reduce", "rd")])
def test_scrubbing_to_t_shows_the_same_buffers_as_stepping_to_t(qtbot, op, algo):
    model, pb, view = make_view(qtbot, kind=op, n=6, algo=algo)
    stepped = {}
    while not pb.at_end:
        pb.step_forward()
        stepped[pb.t] = shown(view, 6)
    for t in sorted(stepped, reverse=True):  # scrub backwards, then forwards: no replay
        pb.seek(t)
        assert shown(view, 6) == stepped[t]
    for t in sorted(stepped):
        pb.seek(t)
        assert shown(view, 6) == stepped[t]


def test_blocks_are_the_messages_in_flight_and_never_overlap(qtbot):
    for n in (8, 64):
        model, pb, view = make_view(qtbot, size=(1600, 900), kind="all-reduce", n=n)
        tr = model.run.trace
        for k in (1, 5, tr.collectives[0].n_steps - 1):
            t = pb.stops[k - 1] + 0.3 * (pb.stops[k] - pb.stops[k - 1])
            pb.seek(t)
            flying = sorted(i for i, m in enumerate(tr.messages) if m.t_start <= t < m.t_end)
            f = frame_at(model.run, t)
            assert f.moving.tolist() == flying
            # each block painted where the layout's lanes put it (n = 64: 3 px blocks, read from the
            # flight layer painted at 4×)
            pic = grab(view) if n <= 16 else layer_picture(view.flight)
            assert blocks_painted_wrong(view, pic, f) == []
            m = theme.line("outline")  # a block's outline reaches half its width beyond the square
            rects = [message_block(view, i, p).adjusted(-m, -m, m, m) for i, p in zip(f.moving, f.progress)]
            assert len(rects) == n
            for i, a in enumerate(rects):
                for b in rects[i + 1:]:
                    assert not a.intersects(b)


def test_step_boundary_shows_no_blocks_and_outlines_the_new_chunks(qtbot):
    model, pb, view = make_view(qtbot, kind="all-gather", n=8)
    pb.step_forward()
    f = frame_at(model.run, pb.t)
    assert f.moving.tolist() == []
    msgs = model.run.trace.messages
    # step 0 of the ring all-gather: device d received chunk d − 1, outlined on screen, and no other
    assert sorted((msgs[i].dst, msgs[i].chunk) for i in f.arrived) == [(d, (d - 1) % 8) for d in range(8)]
    pic = grab(view)
    assert [[ch for ch in range(8) if outlined(view, pic, d, ch)] for d in range(8)] == \
        [[(d - 1) % 8] for d in range(8)]
    # no block on any lane: where the next step's blocks will fly, nothing in a device's colour
    for m in (m for m in msgs if m.step == 1):
        for p in (0.25, 0.75):
            assert device_coloured_share(view, pic, block_rect(view, block_centre(view, m.src, m.dst, p))) == 0


@pytest.mark.parametrize("n", [8, 16, 64])
def test_labels_and_boxes_do_not_collide(qtbot, n):
    """The layout function's rects (app/views/ring/ring_layout.py) never collide, and the scene's items
    are where it put them."""
    from app.views.ring.ring_layout import ring_layout
    from app.views.ring.ring_view import ring_shape, ring_texts

    model, pb, view = make_view(qtbot, size=(1600, 900), kind="all-gather", n=n)
    vp = view.viewport().rect()
    lay = ring_layout(vp.width(), vp.height(), theme.scale(), ring_texts(model.run), ring_shape(model.run))
    labels = [b.rect for b in lay.device_labels if b is not None]
    assert len(labels) >= min(n, 16)
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            assert not a.intersects(b)
    boxes = [d.rect() for d in lay.devices]
    if n <= 16:  # boxes are axis-aligned: their rects must not touch either
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert not a.intersects(b)
    for r in labels:
        assert view.sceneRect().contains(r)
    shown = [lab for lab in view.device_labels if lab.isVisible()]
    assert len(shown) == len(labels)
    for item, box in zip(view.devices, lay.devices):
        c = item.sceneBoundingRect().center()
        assert abs(c.x() - box.centre.x()) < 0.5 and abs(c.y() - box.centre.y()) < 0.5


def items(view) -> int:
    return len(view.scene().items())


def test_changing_n_algo_or_scenario_rebuilds_without_leaking_items(qtbot):
    model, pb, view = make_view(qtbot, kind="all-reduce", n=8)
    base = items(view)
    model.update(n=16)
    assert items(view) > base
    model.update(n=8)
    assert items(view) == base
    for algo in ("rd", "innet", "direct", "ring"):
        model.update(algo=algo)
        pb.seek(pb.t_end / 3)
    assert items(view) == base
    model.update(kind="matmul-1")
    model.update(kind="all-reduce")
    assert items(view) == base
    assert len(view.devices) == 8 and view.run is model.run


def test_theme_scale_change_rebuilds_in_place(qtbot):
    model, pb, view = make_view(qtbot, kind="all-gather", n=8)
    base = items(view)
    pb.seek_step(3)
    before = shown(view, 8)
    try:
        theme.set_scale(1.5)
        assert items(view) == base
        assert shown(view, 8) == before  # the pixels at the new size show the same holdings
    finally:
        theme.set_scale(1.0)


def test_no_communication_is_drawn_gracefully(qtbot):
    model, pb, view = make_view(qtbot, kind="matmul-1", n=4)
    assert model.run.trace.collectives == []
    pb.seek(1.0)
    f = frame_at(model.run, pb.t)
    assert f.coll is None and f.moving.tolist() == [] and f.held is None
    pic = grab(view)  # the boxes are drawn, holding nothing
    assert all(device_coloured_share(view, pic, item.sceneBoundingRect()) == 0 for item in view.devices)
    assert "No communication" in view.subcaption.text


def test_clicking_a_device_emits_its_id(qtbot):
    model, pb, view = make_view(qtbot, kind="all-gather", n=8)
    item = view.devices[3]
    pos = view.mapFromScene(item.sceneBoundingRect().center())
    with qtbot.waitSignal(view.device_clicked) as sig:
        qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=pos)
    assert sig.args == [3]
    pos = view.mapFromScene(view.switch.scenePos() + QPointF(0, view.switch.r * 0.3))
    with qtbot.waitSignal(view.device_clicked) as sig:
        qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=pos)
    assert sig.args == [SWITCH]


def _pixel(view, item, ch):
    img = view.viewport().grab().toImage()
    p = view.mapFromScene(item.mapToScene(item.slot_rect(ch).center()))
    return img.pixelColor(p.x(), p.y())


def test_a_held_slot_is_painted_in_its_owners_colour(qtbot):
    model, pb, view = make_view(qtbot, kind="all-gather", n=8)
    pb.step_forward()
    pb.step_forward()
    colors = theme.device_colors(8)
    # after two steps device 5 holds chunks 5, 4, 3, each in its owner's colour; chunk 0 is empty
    for ch in (5, 4, 3):
        assert _pixel(view, view.devices[5], ch).name() == colors[ch].name()
    assert _pixel(view, view.devices[5], 0).name() == theme.palette().slot_empty.lower()


def test_partial_sums_show_their_contributors_as_bands(qtbot):
    model, pb, view = make_view(qtbot, kind="reduce-scatter", n=4)
    pb.seek_step(3)
    item = view.devices[0]
    assert frame_at(model.run, pb.t).held.who(0, 1) == frozenset(range(4))  # device 0 holds the full sum of chunk 1
    img = view.viewport().grab().toImage()
    r = item.mapRectToScene(item.slot_rect(1))
    seen = set()
    for i in range(8):
        p = view.mapFromScene(QPointF(r.center().x(), r.top() + (i + 0.5) * r.height() / 8))
        seen.add(img.pixelColor(p.x(), p.y()).name())
    assert {c.name() for c in theme.device_colors(4)} <= seen


def test_caption_follows_the_step_state(qtbot):
    model, pb, view = make_view(qtbot, kind="all-gather", n=2)
    assert "Step 1 of 1 (next)" in view.subcaption.text
    pb.seek(pb.t_end * 0.3)
    assert "Step 1 of 1 (in progress)" in view.subcaption.text
    pb.to_end()
    assert "Step 1 of 1 (done)" in view.subcaption.text


def test_chords_and_lanes_follow_the_messages_in_flight(qtbot):
    """Read from the chord and lane layers painted at 4× (at n = 64 a chord is a pixel wide on screen)."""
    from PySide6.QtCore import QLineF

    from app.views.ring.ring_view import message_color_index

    def mid(line: QLineF, q=0.5) -> QPointF:
        return line.pointAt(q)

    for n in (8, 64):
        model, pb, view = make_view(qtbot, size=(1600, 900), kind="all-gather", n=n)
        tr = model.run.trace
        lanes = view.layout_now.lanes  # per device: (send, receive), device edge -> switch rim
        # a chord joins the sender's send-lane end at the rim to the receiver's receive-lane end
        chord = {(s, d): QLineF(lanes[s][0].p2(), lanes[d][1].p2()) for s in range(n) for d in range(n) if s != d}
        spoke = theme.palette().spoke.lower()
        background = theme.palette().background.lower()
        for k in (1, 3):
            t = pb.stops[k - 1] + 0.4 * (pb.stops[k] - pb.stops[k - 1])
            pb.seek(t)
            f = frame_at(model.run, t)
            flying = [tr.messages[i] for i in f.moving]
            assert len(flying) == n
            chords, lane_pic = layer_picture(view.chord_layer), layer_picture(view.lanes)
            for m in flying:
                colour = view.colors.devices[message_color_index(m, n)].name()
                assert chords.colour(mid(chord[(m.src, m.dst)])) == colour, m  # its chord, in its colour
                # its sender's send lane and its receiver's receive lane lit in its colour (the
                # block is at 0.8 of the send lane: sampled away from it)
                assert lane_pic.colour(mid(lanes[m.src][0], 0.3)) == colour, m
                assert lane_pic.colour(mid(lanes[m.dst][1])) == colour, m
            # no chord where no message goes (the ring: across the switch)
            assert chords.colour(mid(chord[(0, n // 2)])) == background
            # nothing is drawn outside its layer's rect (it would be clipped)
            flight_rect = view.flight.sceneBoundingRect()
            assert all(flight_rect.contains(message_block(view, i, p)) for i, p in zip(f.moving, f.progress))
            chord_rect, lane_rect = view.chord_layer.sceneBoundingRect(), view.lanes.sceneBoundingRect()
            for m in flying:
                ln = chord[(m.src, m.dst)]
                assert chord_rect.contains(ln.p1()) and chord_rect.contains(ln.p2())
            for send, recv in lanes:
                assert all(lane_rect.contains(q) for q in (send.p1(), send.p2(), recv.p1(), recv.p2()))
        pb.seek(pb.stops[1])  # a step boundary: nothing on the wire
        assert frame_at(model.run, pb.t).moving.tolist() == []
        chords, lane_pic = layer_picture(view.chord_layer), layer_picture(view.lanes)
        assert {chords.colour(mid(chord[(d, (d + 1) % n)])) for d in range(n)} == {background}
        assert {lane_pic.colour(mid(lanes[d][j])) for d in range(n) for j in (0, 1)} == {spoke}


def test_clicks_reach_the_devices_through_the_layers_at_n_64(qtbot):
    model, pb, view = make_view(qtbot, size=(1600, 900), kind="all-gather", n=64)
    pb.seek(pb.stops[0] * 0.5)
    item = view.devices[17]
    pos = view.mapFromScene(item.sceneBoundingRect().center())
    with qtbot.waitSignal(view.device_clicked) as sig:
        qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=pos)
    assert sig.args == [17]


@pytest.mark.parametrize("kind,algo", [("all-gather", "ring"), ("reduce-scatter", "ring"), ("all-reduce", "innet")])
def test_radial_bars_show_each_devices_buffer_pixel_by_pixel(qtbot, kind, algo):
    """Each bar on screen is frame_at's holdings for its device drawn by the rule written in the test
    (ring_pixels.reference_bar), looked up through the bar's position and angle."""
    from ring_pixels import bar_mismatches, blocks_over

    model, pb, view = make_view(qtbot, size=(1600, 900), kind=kind, algo=algo, n=24)
    assert view.devices[0].radial
    for k in (1, len(pb.stops) // 2, len(pb.stops) - 1):
        pb.seek(pb.stops[k])
        f = frame_at(model.run, pb.t)
        pic = grab(view)
        covered = blocks_over(view, f)  # in-network reduction: chunk c + 1 leaves while chunk c lands
        for d in (0, 5, 23):
            compared, bad = bar_mismatches(view, pic, d, frame_bar(view, f, d), covered)
            assert compared > 50 and bad == 0, (kind, k, d, compared, bad)


@pytest.mark.parametrize("kind, algo, queues", [("all-reduce", "direct", True), ("all-reduce", "two-shot", True),
                                                ("all-reduce", "ring", False), ("all-reduce", "rd", False)])
def test_sends_waiting_for_a_port_are_counted_beside_each_device(qtbot, kind, algo, queues):
    """One-shot and two-shot issue all of a device's sends at once and they wait for its port in
    turn (the registry's `queues`); the label beside each device counts those not yet started."""
    from simcore.algorithms import ALGORITHMS

    assert ALGORITHMS[kind][algo].queues == queues
    n = 4
    model, pb, view = make_view(qtbot, (900, 640), kind=kind, n=n, algo=algo, nbytes=4096)
    msgs = list(model.run.trace.messages)
    t = min(m.t_end for m in msgs) * 0.5  # the first sends are on the wire, the rest wait
    pb.seek(t)
    phase = next(m.phase for m in msgs if m.t_start <= t < m.t_end)  # the phase on the wire
    for d in range(n):
        waiting = sum(1 for m in msgs if m.src == d and m.t_start > t and m.phase == phase)
        text = view.device_labels[d].text
        if queues and waiting:
            assert text.endswith(f"{waiting} queued"), (d, text)
        else:
            assert "queued" not in text, (d, text)
