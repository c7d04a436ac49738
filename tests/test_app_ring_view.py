"""The ring view draws what the trace says at time t, rebuilds cleanly, and stays readable."""

import pytest
from PySide6.QtCore import QPointF, Qt

from app import theme
from app.views.ring.ring_view import RingView
from app.state import Playback, Scenario, ScenarioModel
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
    return {d: view.slot_state(d) for d in range(n)}


def engine(holdings, n):
    return {d: {ch: who for ch, who in holdings.get(d, {}).items() if who} for d in range(n)}


@pytest.mark.parametrize("op, algo", CASES)
@pytest.mark.parametrize("n", [2, 5, 8])
def test_after_each_step_the_buffers_are_the_engines_holdings(qtbot, op, algo, n):
    model, pb, view = make_view(qtbot, kind=op, n=n, algo=algo)
    tr = model.run.trace
    c = tr.collectives[0]
    assert shown(view, n) == engine(tr.holdings(0, step=-1), n)
    for k in range(c.n_steps):
        pb.step_forward()
        t = pb.t
        now = shown(view, n)
        # the engine's time query, always
        assert now == engine(tr.holdings(0, t=t), n)
        # the engine's per-step query: equal unless a message of a later step already arrived
        early = [m for m in tr.messages if m.step > k and m.t_end <= t]
        by_step = engine(tr.holdings(0, step=k), n)
        if not early:
            assert now == by_step
        else:
            # recursive doubling at n not a power of two: devices outside the fold start round 0
            # while the fold is still running; in-network: chunk c + 1 lands in the switch while
            # chunk c is still coming down (α is latency) — the view shows them done, as they are
            assert (algo == "rd" and n & (n - 1)) or algo == "innet"
            differ = {d for d in range(n) if now[d] != by_step[d]}
            assert differ <= {m.dst for m in early}
            assert differ or all(m.dst == SWITCH for m in early)  # innet: what landed early is in the switch
        if algo == "innet":
            sw = {ch: w for ch, w in tr.holdings(0, t=t).get(SWITCH, {}).items() if w}
            assert view.slot_state(SWITCH) == sw
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
            assert sorted(view.visible_blocks()) == flying
            rects = view.block_rects()
            assert len(rects) == n
            for i, a in enumerate(rects):
                for b in rects[i + 1:]:
                    assert not a.intersects(b)


def test_step_boundary_shows_no_blocks_and_outlines_the_new_chunks(qtbot):
    model, pb, view = make_view(qtbot, kind="all-gather", n=8)
    pb.step_forward()
    assert view.visible_blocks() == []
    # step 0 of the ring all-gather: device d received chunk d − 1
    assert [set(view.highlighted(d)) for d in range(8)] == [{(d - 1) % 8} for d in range(8)]


@pytest.mark.parametrize("n", [8, 16, 64])
def test_labels_and_boxes_do_not_collide(qtbot, n):
    """The layout function's rects (app/ring_layout.py) never collide, and the scene's items
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
        assert shown(view, 8) == before
    finally:
        theme.set_scale(1.0)


def test_no_communication_is_drawn_gracefully(qtbot):
    model, pb, view = make_view(qtbot, kind="matmul-1", n=4)
    assert model.run.trace.collectives == []
    pb.seek(1.0)
    assert view.visible_blocks() == []
    assert all(view.slot_state(d) == {} for d in range(4))
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
    who = view.slot_state(0)[1]
    assert who == frozenset(range(4))  # device 0 holds the full sum of chunk 1
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
    from app.views.ring.ring_view import message_color_index

    for n in (8, 64):
        model, pb, view = make_view(qtbot, size=(1600, 900), kind="all-gather", n=n)
        tr = model.run.trace
        for k in (1, 3):
            t = pb.stops[k - 1] + 0.4 * (pb.stops[k] - pb.stops[k - 1])
            pb.seek(t)
            flying = [tr.messages[i] for i in sorted(view.visible_blocks())]
            assert len(flying) == n
            # one chord per message, from the sender's send-lane end to the receiver's receive-lane end
            want = sorted((m.src, m.dst) for m in flying)
            ends = {(round(a.x(), 6), round(a.y(), 6)): d for d, ((_, a), _) in enumerate(view.lane_geom)}
            ends_r = {(round(b.x(), 6), round(b.y(), 6)): d for d, (_, (_, b)) in enumerate(view.lane_geom)}
            got = sorted((ends[(round(ln.p1().x(), 6), round(ln.p1().y(), 6))],
                          ends_r[(round(ln.p2().x(), 6), round(ln.p2().y(), 6))]) for ln, _c in view.chord_lines())
            assert got == want
            colours = {(m.src, m.dst): view.colors.devices[message_color_index(m, n)].name() for m in flying}
            for ln, col in view.chord_lines():
                key = (ends[(round(ln.p1().x(), 6), round(ln.p1().y(), 6))],
                       ends_r[(round(ln.p2().x(), 6), round(ln.p2().y(), 6))])
                assert col.name() == colours[key]
            # the lanes in use are exactly the senders' send lanes and the receivers' receive lanes
            assert set(view.lanes.active) == {(m.src, 0) for m in flying} | {(m.dst, 1) for m in flying}
            # nothing is drawn outside its layer's rect (it would be clipped)
            assert all(view.flight.sceneBoundingRect().contains(r) for r in view.block_rects())
            chord_rect, lane_rect = view.chord_layer.sceneBoundingRect(), view.lanes.sceneBoundingRect()
            for ln, _c in view.chord_lines():
                assert chord_rect.contains(ln.p1()) and chord_rect.contains(ln.p2())
            for send, recv in view.lanes.lines:
                assert all(lane_rect.contains(q) for q in (send.p1(), send.p2(), recv.p1(), recv.p2()))
        pb.seek(pb.stops[1])  # a step boundary: nothing on the wire
        assert view.chord_lines() == [] and view.lanes.active == {}


def test_clicks_reach_the_devices_through_the_layers_at_n_64(qtbot):
    model, pb, view = make_view(qtbot, size=(1600, 900), kind="all-gather", n=64)
    pb.seek(pb.stops[0] * 0.5)
    item = view.devices[17]
    pos = view.mapFromScene(item.sceneBoundingRect().center())
    with qtbot.waitSignal(view.device_clicked) as sig:
        qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=pos)
    assert sig.args == [17]


def _reference_bar(dev, colors):
    """Device dev's radial bar, pixel by pixel, from its state alone (bar_images' rule, written plainly)."""
    import numpy as np
    from PySide6.QtGui import QColor

    W, H = max(3, round(dev.w)), max(3, round(dev.h))
    iw, ih, nc, n = W - 2, H - 2, max(dev.n_chunks, 1), dev.n

    def rgb(c):
        c = QColor(c)
        return (c.red(), c.green(), c.blue())

    border, empty, new = rgb(theme.palette().border), rgb(theme.palette().slot_empty), rgb(theme.palette().highlight)
    img = np.empty((H, W, 3), int)
    img[:] = border
    for r in range(ih):  # image row r (top = outer end) shows chunk ch
        ch = min((ih - 1 - r) * nc // ih, nc - 1)
        who = dev.state[ch] if ch < len(dev.state) else None
        row = [empty] * iw
        if who:
            k = len(who)
            colour = rgb(colors.devices[(next(iter(who)) if k == 1 else ch) % len(colors.devices)])
            width = iw if k == 1 else max(1, round(iw * k / n))
            row[:width] = [colour] * width
        img[r + 1, 1:-1] = row
    for ch in dev.new:
        rows = [r + 1 for r in range(ih) if min((ih - 1 - r) * nc // ih, nc - 1) == ch]
        if rows:
            lo, hi = max(rows[0] - 1, 0), min(rows[-1] + 2, H)
            img[lo:lo + 2, :] = new
            img[hi - 2:hi, :] = new
            img[lo:hi, :2] = new
            img[lo:hi, -2:] = new
    return img


@pytest.mark.parametrize("kind,algo", [("all-gather", "ring"), ("reduce-scatter", "ring"), ("all-reduce", "innet")])
def test_radial_bars_show_each_devices_buffer_pixel_by_pixel(qtbot, kind, algo):
    import numpy as np

    from app.views.ring.ring_view import bar_images

    model, pb, view = make_view(qtbot, size=(1600, 900), kind=kind, algo=algo, n=24)
    assert view.devices[0].radial
    for k in (1, len(pb.stops) // 2, len(pb.stops) - 1):
        pb.seek(pb.stops[k])
        images = bar_images(view.devices)
        for d in (0, 5, 23):
            img = images[d].convertToFormat(images[d].Format.Format_RGB32)
            got = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())
            got = got[:, : 4 * img.width()].reshape(img.height(), img.width(), 4)[:, :, 2::-1].astype(int)
            assert np.array_equal(got, _reference_bar(view.devices[d], view.colors)), (kind, k, d)
