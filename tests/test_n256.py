"""The app beyond 64 devices: n = 128 and 256 in the ring view, the timeline and the buffers."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF, Qt

from app.core import scenarios
from app.core.frame import frame_at
from app.views.buffers.buffer_view import BufferView
from app.main_window import MainWindow
from app.views.ring.ring_view import RingView
from app.core.scenarios import build_run, validate
from app.core.trace_index import TraceIndex
from app.state import Playback, Scenario, ScenarioModel
from app.views.timeline.timeline import BAND_H, BarsItem, TimelineView
from simcore.scenarios import run_collective
from ring_pixels import bar_image, frame_bar
from timeline_reading import row_height_px, row_labels
from simcore.trace import buffer_values

S = 2.0 ** 20  # 1 MiB: splits into 128 and 256 equal chunks


def show(qtbot, widget, size):
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def overlapping(rects):
    """Pairs of rectangles that share area (touching edges is not overlapping)."""
    out = []
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            if a.intersected(b).width() > 0 and a.intersected(b).height() > 0:
                out.append((a, b))
    return out


# -- the ring view -----------------------------------------------------------------------------
@pytest.mark.parametrize("n", [128, 256])
@pytest.mark.parametrize("size", [(1600, 900), (1920, 1080), (900, 600)])
@pytest.mark.parametrize("kind", ["all-reduce", "all-gather"])
def test_ring_labels_never_overlap_and_stay_in_the_view(qtbot, n, size, kind):
    model = ScenarioModel(Scenario(kind=kind, n=n, nbytes=S))
    pb = Playback(model)
    view = show(qtbot, RingView(model, pb), size)
    pb.seek(pb.t_end * 0.4)
    rects = [lab.sceneBoundingRect() for lab in view.device_labels if lab.isVisible()]  # the scene's items
    assert 2 <= len(rects) < n  # thinned, but the ring is still named
    assert not overlapping(rects)
    # every label inside what the viewport shows (scene coordinates)
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    for r in rects:
        assert shown.contains(r), (r, shown)
    # the labels do not sit on the bars either
    bars = [d.sceneBoundingRect() for d in view.devices]
    assert not any(r.intersected(b).width() > 1 and r.intersected(b).height() > 1 for r in rects for b in bars)


@pytest.mark.parametrize("n", [128, 256])
def test_ring_view_at_large_n_draws_the_engines_state(qtbot, n):
    model = ScenarioModel(Scenario(kind="reduce-scatter", n=n, nbytes=S))
    pb = Playback(model)
    view = show(qtbot, RingView(model, pb), (1600, 900))
    tr = model.run.trace
    for k in (0, n // 3, n - 2):
        pb.seek_step(k + 1)
        f = frame_at(model.run, pb.t)
        want = tr.holdings(0, t=pb.t)
        for d in (0, 1, n // 2, n - 1):  # a few devices: decoding all n² sets is the slow path this avoids
            assert {ch: w for ch, w in f.held.device(d).items() if w} == {ch: w for ch, w in want[d].items() if w}
            # its bar as the bars layer paints it: the frame's holdings drawn by the rule written in the
            # test (a bar here is too thin to read back from the screen; test_ring_bars_picture checks
            # that the layer puts these pixels on screen)
            assert np.array_equal(bar_image(view, d), frame_bar(view, f, d)), (k, d)
        # the frame's blocks are the messages under way at t
        flying = [i for i, m in enumerate(tr.messages) if m.t_start < pb.t < m.t_end] if k else []
        assert f.moving.tolist() == flying


# -- the index ---------------------------------------------------------------------------------
def test_index_at_256_answers_like_the_trace():
    cr = run_collective("all-reduce", 256, S, "ring", "nvlink4")
    tr = cr.trace
    assert len(tr.messages) == 2 * 256 * 255  # 130,560: 2n(n − 1) (ring all-reduce)
    idx = TraceIndex(tr)
    c = tr.collectives[0]
    for t in (c.t_end * 0.73, c.t_end * 0.2, c.t_end):  # forwards and back
        held = idx.held(0, t)
        want = tr.holdings(0, t=t)
        for d in (0, 77, 255):
            assert idx.holdings(0, t)[d] == want[d]
            assert [held.count[d, ch] for ch in range(256)] == [len(want[d].get(ch, ())) for ch in range(256)]
        te = tr.column("t_end")
        ts = tr.column("t_start")
        assert list(idx.in_flight(t)) == list(np.flatnonzero((ts <= t) & (te > t)))


# -- the timeline ------------------------------------------------------------------------------
def test_timeline_at_256_has_readable_rows_of_gpu_groups_and_still_seeks(qtbot):
    model = ScenarioModel(Scenario(kind="all-gather", n=256, nbytes=S))
    pb = Playback(model)
    tl = show(qtbot, TimelineView(model, pb), (900, 200))
    assert tl.group > 1 and tl.n_rows * tl.group >= 256
    assert tl.n_rows <= 8
    assert row_height_px(tl) >= 12  # a 200 px dock: readable rows, not 256 lines of under a pixel
    labels = row_labels(tl)
    assert labels and labels[0] == f"GPUs 0–{tl.group - 1}"
    # top to bottom, each a group of tl.group GPUs in order (every row, or every 2nd, 4th… when they would collide)
    every = [f"GPUs {a}–{a + tl.group - 1}" for a in range(0, 256, tl.group)]
    assert labels in [every[::s] for s in (1, 2, 4, 8)], labels
    # ring all-gather: every GPU sends and receives in every step, back to back from 0 to T, so each
    # group's bands are full (all of its GPUs busy) over the whole run
    T = model.run.trace.t_end / tl.unit_s
    (bars,) = [it for it in tl._items if isinstance(it, BarsItem)]
    rects = [r for _b, rs in bars.groups for r in rs]
    for row in range(tl.n_rows):
        for up in (True, False):
            mine = [r for r in rects if (r.bottom() <= row + 1e-9 if up else r.top() >= row - 1e-9)
                    and abs(r.center().y() - row) < 0.5]
            assert mine, (row, up)
            assert min(r.left() for r in mine) == pytest.approx(0, abs=1e-9 * T)
            assert max(r.right() for r in mine) == pytest.approx(T, rel=1e-9)
            assert sum(r.width() for r in mine) == pytest.approx(T, rel=1e-9)  # no gap
            assert all(r.height() == pytest.approx(BAND_H) for r in mine)
    # a click still seeks
    vb = tl.plot.getViewBox()
    target = pb.t_end * 0.6
    pos = tl.plot.mapFromScene(vb.mapViewToScene(QPointF(target / tl.unit_s, 1.0)))
    qtbot.mouseClick(tl.plot.viewport(), Qt.LeftButton, pos=pos)
    assert pb.t == pytest.approx(target, rel=0.02)


def test_timeline_group_bands_count_busy_gpus():
    from app.views.timeline.timeline import busy_bands

    # two rows of 4: row 0 has 2 of 4 busy on [0, 1) and 4 of 4 on [1, 2); row 1 one interval
    row = np.array([0, 0, 0, 0, 0, 0, 1])
    t0 = np.array([0, 0, 1, 1, 1, 1, 5.0])
    t1 = np.array([1, 2, 2, 2, 2, 2, 6.0])  # the second interval spans both pieces
    r, a, b, f = busy_bands(row, t0, t1, 2, np.array([4.0, 4.0]))
    got = sorted(zip(r.tolist(), a.tolist(), b.tolist(), f.tolist()))
    assert got == [(0, 0.0, 1.0, 0.5), (0, 1.0, 2.0, 1.0), (1, 5.0, 6.0, 0.25)]


# -- the buffers -------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["all-reduce", "reduce-scatter", "all-gather"])
def test_buffer_heatmap_at_256_rows_hold_the_engines_values(qtbot, kind):
    model = ScenarioModel(Scenario(kind=kind, n=256, nbytes=S))
    pb = Playback(model)
    view = show(qtbot, BufferView(model, pb), (1600, 900))
    run = model.run
    tr, inputs = run.trace, run.inputs[0]
    c = tr.collectives[0]
    # all-reduce passes through both halves (and back); one moment each for the halves themselves
    for frac in ((0.37, 0.81, 0.2) if kind == "all-reduce" else (0.37,)):
        pb.seek(c.t_end * frac)
        img = view.image.image
        assert img.shape[0] == 256
        want = buffer_values(tr.holdings(0, t=pb.t), inputs, c.n_chunks)
        # summation order differs (matrix product vs row sum): (k − 1)·u·Σ|x| ≤ 255 · 1.2e-16 · 256
        np.testing.assert_allclose(img, want, rtol=0, atol=2e-11, equal_nan=True)
    finite = view.image.image[np.isfinite(view.image.image)]
    assert np.all(np.abs(finite) <= view.levels[1] + 1e-12)


# -- the limit -----------------------------------------------------------------------------------
def test_n_accepts_256_and_refuses_257_naming_the_limit(qtbot):
    assert scenarios.MAX_N == 256
    validate(Scenario(kind="all-gather", n=256, nbytes=S))
    with pytest.raises(ValueError, match="at most 256"):
        validate(Scenario(kind="all-gather", n=257, nbytes=257 * 4096.0))
    model = ScenarioModel(Scenario(kind="all-gather", n=8, nbytes=S))
    errors = []
    model.error.connect(errors.append)
    assert not model.update(n=257)
    assert errors and "256" in errors[-1] and model.scenario.n == 8
    pb = Playback(model)
    win = MainWindow(model, pb)
    qtbot.addWidget(win)
    win.resize(1600, 900)
    win.show()
    win.controls.n.setValue(256)
    assert model.scenario.n == 256 and len(win.ring_view.devices) == 256
    win.controls.n.setValue(257)  # typed past the limit: refused, and the panel names the limit
    assert model.scenario.n == 256
    assert "256" in win.controls.error.text()
    assert build_run(model.scenario).n == 256


def test_label_rects_in_the_layout_function(qtbot):
    """The layout function itself: its label boxes at n = 128 and 256 are apart and inside."""
    from app.views.ring.ring_layout import ring_layout
    from app.views.ring.ring_view import ring_shape, ring_texts
    from app import theme

    for n in (128, 256):
        run = build_run(Scenario(kind="all-reduce", n=n, nbytes=S))
        for w, h in ((1600, 900), (1920, 1080), (1000, 700)):
            lay = ring_layout(w, h, theme.scale(), ring_texts(run), ring_shape(run))
            boxes = [b.rect for b in lay.device_labels if b is not None]
            assert len(boxes) >= 8
            assert not overlapping(boxes), (n, w, h)
            area = QRectF(0, 0, lay.width, lay.height)
            assert all(area.contains(b) for b in boxes)
