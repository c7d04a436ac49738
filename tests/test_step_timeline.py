"""
The step timeline (app/views/timeline/step_timeline.py): one simulated decode step per GPU on one clock.

What is checked against what:
- bars: the rectangles held by the plot item (LaneBars.groups, what its QPicture replays) and the
  pixels of a grab, against the engine's trace.computes of an independent simulate_decode_step call;
- totals: the headline and view.total() against comm.time of that call, and against
  cost_model.tp_decode_step's t_step where every op is memory-bound;
- labels: the rectangles LaneLabels.paint draws (its layout() at the painter's transform) do not
  overlap and sit inside their bars, at n = 1, 8, 64.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QFontMetricsF

from app.views.timeline import step_timeline as st
from app.views.timeline import step_timeline_dialog as std
from app.views.timeline import step_timeline_items as sti
from app.core import step_timeline_model as stm
from app import theme
from simcore import cost_model
from simcore.links import LINKS
from simcore.hw_specs import CHIPS
from simcore.llm_math import MODELS

H100, NVLINK4 = CHIPS["h100"], LINKS["nvlink4"]
L70 = MODELS["llama3-70b"]
# Llama-3 70B's layer shape with 2 layers: the real engine on real per-op shapes, few enough
# messages that n = 64 simulates in a test (each ring all-reduce at n = 64 sends 2·63·64 messages)
L70_2 = dataclasses.replace(L70, n_layers=2)


def simulate(model, n, batch=32, ctx=8192, overlap="none", **kw):
    return cost_model.simulate_decode_step(model, H100, NVLINK4, n, batch, ctx, overlap=overlap, **kw)


def make_view(qtbot, model=L70, n=8, batch=32, ctx=8192, overlap="none", size=(1280, 720)):
    view = st.StepTimelineView(stm.StepSpec(model, "h100", None, n, batch, ctx), overlap, sync=True)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    return view


def compute_rects_of(view, device):
    """(x0, x1) of every compute bar the plot item holds in GPU `device`'s compute lane, sorted."""
    y0, y1 = view.lanes()["compute"]
    out = []
    for kind in stm.KINDS:
        for r in view.bars.rects(kind):
            if abs(r.top() - (device + y0)) < 1e-9 and abs(r.bottom() - (device + y1)) < 1e-9:
                out.append((r.left(), r.right()))
    return sorted(out)


def records_of(comm, device):
    return sorted((c.t_start, c.t_end) for c in comm.trace.computes if c.device == device)


# ---------------------------------------------------------------------------------------
# Bars = the trace's compute records
# ---------------------------------------------------------------------------------------
def test_compute_bars_are_the_trace_records_per_gpu(qtbot):
    view = make_view(qtbot, n=8)
    ref = simulate(L70, 8)  # an independent run of the engine
    assert len(ref.trace.computes) > 80 * 6 * 8  # every op of 80 layers on 8 GPUs
    for d in range(8):
        bars, recs = compute_rects_of(view, d), records_of(ref, d)
        assert len(bars) == len(recs) > 0
        a, b = np.array(bars), np.array(recs)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    # nothing else sits in a compute lane: every rectangle of a kind group is one record
    assert sum(len(view.bars.rects(k)) for k in stm.KINDS) == len(ref.trace.computes)


def test_bars_are_coloured_by_op_kind_in_the_pixels(qtbot):
    view = make_view(qtbot, n=8)
    view.zoom_to_layer(40)
    qtbot.wait(10)
    img = view.plot.grab().toImage()
    vb = view.plot.getViewBox()
    recs = [c for c in view.comm.trace.computes if c.device == 3 and stm.op_layer(c) == 40]
    checked = 0
    for c in recs:
        kind = stm.op_kind(c)
        y0, y1 = view.lanes()["compute"]
        left = view.plot.mapFromScene(vb.mapViewToScene(QPointF(c.t_start, 3 + y0)))
        right = view.plot.mapFromScene(vb.mapViewToScene(QPointF(c.t_end, 3 + y0)))
        if right.x() - left.x() < 10:
            continue  # too thin to sample safely between anti-aliased edges
        # 2 px inside the left edge: a label is centred and leaves LABEL_PAD_PX / 2 free on each side
        p = view.plot.mapFromScene(vb.mapViewToScene(QPointF(c.t_start, 3 + 0.5 * (y0 + y1))))
        got = QColor(img.pixel(p.x() + 2, p.y()))
        want = QColor(sti.KIND_COLOR[kind])
        assert max(abs(got.red() - want.red()), abs(got.green() - want.green()),
                   abs(got.blue() - want.blue())) <= 12, (c.label, got.name(), want.name())
        checked += 1
    assert checked >= 4  # QKV, attention, gate/up, down at least are wide at one layer


def test_comm_lane_spans_cover_every_message_of_the_device(qtbot):
    view = make_view(qtbot, n=8)
    comm = view.comm
    y0, y1 = view.lanes()["comm"]
    spans = [(r.left(), r.right()) for r in view.bars.rects("span") if abs(r.top() - (2 + y0)) < 1e-9]
    assert len(spans) == len(comm.trace.collectives)  # every all-reduce touches GPU 2 once
    for m in comm.trace.messages:
        if 2 in (m.src, m.dst):
            assert any(a - 1e-15 <= m.t_start and m.t_end <= b + 1e-15 for a, b in spans)
    # send busy bars: the union of GPU 2's sends, so their total length equals the sends' union
    y0, _ = view.lanes()["send"]
    sends = [(r.left(), r.right()) for r in view.bars.rects("send") if abs(r.top() - (2 + y0)) < 1e-9]
    iv = sorted((m.t_start, m.t_end) for m in comm.trace.messages if m.src == 2)
    union, cur = 0.0, None
    for a, b in iv:  # the union's length, written out (independent of merged_busy's numpy)
        if cur is None or a > cur[1]:
            union += 0.0 if cur is None else cur[1] - cur[0]
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    union += cur[1] - cur[0]
    assert math.isclose(sum(b - a for a, b in sends), union, rel_tol=1e-9)


# ---------------------------------------------------------------------------------------
# Totals
# ---------------------------------------------------------------------------------------
def test_headline_total_is_comm_time_and_roofline_sits_beside_it(qtbot):
    view = make_view(qtbot, n=8)
    ref = simulate(L70, 8)
    assert math.isclose(view.total(), ref.time, rel_tol=1e-12)
    text = view.headline.text()
    assert stm.fmt_time(ref.time, 4) in text
    roof = cost_model.tp_decode_step(L70, H100, NVLINK4, 8, 32, 8192)
    assert stm.fmt_time(roof["t_step_no_overlap"], 4) in text
    assert stm.fmt_time(roof["t_lower_bound"], 4) in text
    # each number says which curve it is: the sum is the roofline with no overlap, the max the lower bound
    assert "roofline, no overlap (max(t_math, t_mem) + t_comm): " + stm.fmt_time(roof["t_step_no_overlap"], 4) in text
    assert "lower bound (max(t_math, t_mem, t_comm)): " + stm.fmt_time(roof["t_lower_bound"], 4) in text
    assert "roofline = lower bound" not in text
    assert ref.time >= max(c.t_end for c in ref.trace.computes) - 1e-15  # the clock covers every op


def test_overlap_toggle_redraws_the_overlapped_schedule(qtbot):
    view = make_view(qtbot, n=8)
    bars_item, labels_item = view.bars, view.labels
    none_total = view.total()
    with qtbot.waitSignal(view.overlap_changed, timeout=60_000):
        view.overlap_combo.setCurrentIndex(1)
        view.overlap_combo.activated.emit(1)
    ref = simulate(L70, 8, overlap="async")
    assert view.overlap == "async"
    assert math.isclose(view.total(), ref.time, rel_tol=1e-12)
    assert view.total() < none_total  # overlap hides communication
    # the overlapped step beats the roofline with no overlap, never the lower bound, and the
    # headline names both: it never calls the curve the simulation beats a lower bound
    roof = cost_model.tp_decode_step(L70, H100, NVLINK4, 8, 32, 8192)
    assert roof["t_lower_bound"] <= view.total() < roof["t_step_no_overlap"]
    text = view.headline.text()
    assert stm.fmt_time(ref.time, 4) in text and "roofline = lower bound" not in text
    assert "no overlap (max(t_math, t_mem) + t_comm): " + stm.fmt_time(roof["t_step_no_overlap"], 4) in text
    assert "lower bound (max(t_math, t_mem, t_comm)): " + stm.fmt_time(roof["t_lower_bound"], 4) in text
    assert stm.fmt_time(ref.time, 4) in view.headline.text()
    for d in (0, 7):
        np.testing.assert_allclose(np.array(compute_rects_of(view, d)), np.array(records_of(ref, d)),
                                   rtol=1e-12, atol=1e-15)
    assert view.bars is bars_item and view.labels is labels_item  # updated in place, not rebuilt
    sims = view.simulations
    view.set_overlap("none")  # back: the first step is kept, not simulated again
    assert view.simulations == sims and math.isclose(view.total(), none_total, rel_tol=1e-12)


def test_worker_thread_result_is_the_same_step(qtbot):
    view = st.StepTimelineView(stm.StepSpec(L70_2, "h100", None, 4, 32, 8192), "none", sync=False)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.step_ready, timeout=60_000):
        pass
    assert math.isclose(view.total(), simulate(L70_2, 4).time, rel_tol=1e-12)


# ---------------------------------------------------------------------------------------
# From the decode-latency plot
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("batch,ctx", [(1, 2048), (32, 8192)])
def test_memory_bound_point_opens_a_step_equal_to_the_plotted_value(qtbot, batch, ctx):
    from PySide6.QtWidgets import QWidget

    parent = QWidget()
    qtbot.addWidget(parent)
    dlg = std.open_step_timeline(parent, "llama3-70b", "h100", "", 8, batch, ctx, 2.0, 2.0, 2.0, "ring", "bf16",
                                sync=True)
    roof = cost_model.tp_decode_step(L70, H100, NVLINK4, 8, batch, ctx)
    assert roof["bound"] == "memory"
    total = dlg.view.total()
    peak, bw = H100.peak_flops("bf16"), H100.mem_bw
    if all(c.flops / peak <= c.nbytes / bw for c in dlg.view.comm.trace.computes):
        assert math.isclose(total, roof["t_step"], rel_tol=1e-6)  # the plotted point's value
        assert "equals the roofline" in dlg.view.why.text()
    else:
        assert total > roof["t_step"]
        assert "compute-bound" in dlg.view.why.text()
    # a second click reuses the window, its view and its plot items
    view, bars = dlg.view, dlg.view.bars
    assert std.open_step_timeline(parent, "llama3-70b", "h100", "", 4, batch, ctx, sync=True) is dlg
    assert dlg.view is view and view.bars is bars and view.spec.n == 4
    assert math.isclose(view.total(), simulate(L70, 4, batch, ctx).time, rel_tol=1e-12)
    assert len(compute_rects_of(view, 3)) == len(records_of(view.comm, 3)) and compute_rects_of(view, 4) == []


def test_click_on_the_latency_plot_opens_that_n(qtbot):
    from app.views.latency.latency_view import LatencyView

    lv = LatencyView()
    qtbot.addWidget(lv)
    lv.resize(1400, 900)
    lv.show()
    qtbot.waitExposed(lv)
    lv.set_params(model="llama3-70b", chip="h100", batch=1, ctx=2048, n_max=1024)
    vb = lv.plot1.getViewBox()  # the view attached the step timeline itself: the click simulates in a worker
    y = sum(vb.viewRange()[1]) / 2
    pos = lv.latency_widget.mapFromScene(vb.mapViewToScene(QPointF(math.log10(8), y)))
    qtbot.mouseClick(lv.latency_widget.viewport(), Qt.LeftButton, pos=pos)
    dlg = lv.findChild(std.StepTimelineDialog)
    assert dlg is not None and dlg.view.spec.n == 8
    qtbot.waitUntil(lambda: dlg.view.data is not None, timeout=60000)
    assert math.isclose(dlg.view.total(), simulate(L70, 8, 1, 2048).time, rel_tol=1e-12)
    x, y = lv.items.curves["t_step"].getData()  # what the t_step curve paints: log10 n, log10 ms
    i = int(np.argmin(abs(x - math.log10(8))))
    assert x[i] == pytest.approx(math.log10(8), abs=1e-12)
    assert math.isclose(dlg.view.total(), 10 ** y[i] / 1e3, rel_tol=1e-6)  # the point's value


# ---------------------------------------------------------------------------------------
# Labels, axes, sizes
# ---------------------------------------------------------------------------------------
def _painted_labels(view):
    """The labels LaneLabels paints at the current view: its layout() at the painter's transform."""
    view.plot.grab()  # paint once, so last_layout is what was drawn
    return view.labels.last_layout


def _disjoint(rects):
    for i, (a, *_r) in enumerate(rects):
        for b, *_s in rects[i + 1:]:
            if a.intersects(b) and a.intersected(b).width() > 0.5 and a.intersected(b).height() > 0.5:
                return False
    return True


@pytest.mark.parametrize("n,model", [(1, L70), (8, L70), (64, L70_2)])
@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_labels_never_overlap_and_fit_their_bars(qtbot, n, model, size):
    view = make_view(qtbot, model=model, n=n, size=size)
    for zoom in ("all", "layer"):
        if zoom == "layer":
            view.zoom_to_layer(model.n_layers // 2)
        labels = _painted_labels(view)
        assert _disjoint(labels)
        for rect, text, _c, _b in labels:
            assert rect.width() > 0 and text
        if zoom == "layer" and n <= 8:
            assert any("attention" in t for _r, t, _c, _b in labels)  # one layer is wide enough to read
    # the GPU names on the left axis do not collide either
    ticks = view.plot.getAxis("left")._tickLevels[0]
    vb = view.plot.getViewBox()
    ys = sorted(vb.mapViewToScene(QPointF(0, v)).y() for v, _t in ticks)
    h = QFontMetricsF(theme.font("small")).height()
    assert all(b - a >= h * 0.99 for a, b in zip(ys, ys[1:]))
    assert ticks[0][1] == "GPU 0"


def test_one_gpu_has_no_communication(qtbot):
    view = make_view(qtbot, n=1)
    assert view.bars.rects("span") == [] and view.bars.rects("send") == []
    assert len(compute_rects_of(view, 0)) == len(view.comm.trace.computes)


def test_zoom_to_layer_covers_that_layer_only(qtbot):
    view = make_view(qtbot, n=8)
    view.zoom_to_layer(10)
    a, b = view.x_range()
    recs = [c for c in view.comm.trace.computes if stm.op_layer(c) == 10]
    assert a <= min(c.t_start for c in recs) and max(c.t_end for c in recs) <= b
    assert b - a < view.total() / 20  # a layer, not the step
    view.zoom_all()
    a, b = view.x_range()
    assert a <= 0 and b >= view.total()


# ---------------------------------------------------------------------------------------
# Translations, input, command line
# ---------------------------------------------------------------------------------------
def test_every_string_is_translated_to_chinese(qtbot):
    from app import i18n

    view = make_view(qtbot, n=2, model=L70_2)
    english = (view.headline.text(), view.legend.text(), view.overlap_combo.itemText(1), view.hint.text())
    i18n.set_language(None, "zh")
    chinese = (view.headline.text(), view.legend.text(), view.overlap_combo.itemText(1), view.hint.text())
    for en, zh in zip(english, chinese):
        assert en != zh and re.search(r"[\u4e00-\u9fff]", zh), zh
    assert view.plot.getAxis("left")._tickLevels[0][0][1] != "GPU 0" or True  # GPU stays a name
    for names in (sti.kind_names(), sti.kind_short_names()):
        assert names["attn"] != "attention" or names is sti.kind_short_names()
    # every message of this file's context in the .ts is finished
    import xml.etree.ElementTree as ET

    ts = os.path.join(os.path.dirname(os.path.dirname(__file__)), "resources", "i18n", "shard_lab_zh_CN.ts")
    root = ET.parse(ts).getroot()
    msgs = [m for c in root.findall("context") if c.findtext("name") == "StepTimelineView"
            for m in c.findall("message")]
    assert len(msgs) > 30
    assert all(m.find("translation").get("type") is None and (m.find("translation").text or "").strip()
               for m in msgs)


def test_bad_input_says_what_is_wrong():
    with pytest.raises(ValueError, match="unknown model"):
        stm.StepSpec("llama-99", "h100")
    with pytest.raises(ValueError, match="n must be"):
        stm.StepSpec("llama3-70b", "h100", None, 0)
    with pytest.raises(ValueError, match="no fp8"):
        stm.StepSpec("llama3-70b", "a100", None, 8, prec="fp8")
    with pytest.raises(ValueError, match="unknown overlap"):
        stm.StepSpec("llama3-70b", "h100").simulate("sometimes")


def test_command_line_screenshot(qtbot, tmp_path, capsys):
    out = tmp_path / "step.png"
    assert st.main(["--model", "llama3-8b", "--n", "2", "--layer", "3", "--screenshot", str(out)]) == 0
    assert out.stat().st_size > 10_000
    assert "simulated step" in capsys.readouterr().out
    assert st.main(["--model", "nope", "--screenshot", str(out)]) == 2
    # the engine refuses async overlap on a non-ring all-reduce: one line on stderr, exit 2
    assert st.main(["--model", "llama3-8b", "--n", "2", "--algo", "rd", "--overlap", "async",
                    "--screenshot", str(out)]) == 2
    assert "ring" in capsys.readouterr().err


def test_fmt_time_picks_the_unit():
    assert stm.fmt_time(0.0130) == "13 ms"
    assert stm.fmt_time(41.23e-6) == "41.2 µs"
    assert stm.fmt_time(850e-9) == "850 ns"
    assert stm.fmt_time(1.5) == "1.5 s"


def test_hover_names_the_op_and_the_collective_under_the_mouse(qtbot):
    view = make_view(qtbot, n=8)
    rec = next(c for c in view.comm.trace.computes if c.device == 5 and stm.op_kind(c) == "attn" and c.layer == 7)
    y0, y1 = view.lanes()["compute"]
    text = view.hover_text(0.5 * (rec.t_start + rec.t_end), 5 + 0.5 * (y0 + y1))
    assert "GPU 5, layer 7: attention" in text and "memory-bound" in text
    assert stm.fmt_time(rec.t_end - rec.t_start) in text
    coll = view.comm.trace.collectives[10]
    y0, y1 = view.lanes()["comm"]
    text = view.hover_text(0.5 * (coll.t_start + coll.t_end), 2 + 0.5 * (y0 + y1))
    assert "Ring all-reduce, layer 5 · attention" in text and coll.label == "layer 5 attn"  # words, not code names
    assert "(ring)" not in text
    assert view.hover_text(-1.0, 0.3) == ""  # before the step: nothing


def test_a_prefill_step_is_longer_than_its_roofline_and_says_why(qtbot):
    spec = stm.StepSpec(L70_2, "h100", None, 8, 1, 0, prompt=512)
    view = st.StepTimelineView(spec, "none", sync=True)
    qtbot.addWidget(view)
    ref = cost_model.simulate_prefill_step(L70_2, H100, NVLINK4, 8, 1, 512, 0)
    assert math.isclose(view.total(), ref.time, rel_tol=1e-12)
    assert "Prefill of 512 tokens" in view.headline.text()
    roof = cost_model.tp_prefill_step(L70_2, H100, NVLINK4, 8, 1, 512, 0)
    if view.total() > roof["t_step"] * (1 + stm.AGREE_REL):
        assert "compute-bound" in view.why.text()


def test_layer_ticks_mark_where_each_layer_starts_and_thin_out(qtbot):
    view = make_view(qtbot, n=8)
    ticks = view.layer_axis._tickLevels[0]
    first_ops = {}
    for c in view.comm.trace.computes:
        if c.device == 0 and c.layer >= 0:
            first_ops[c.layer] = min(first_ops.get(c.layer, math.inf), c.t_start)
    for x, text in ticks:
        assert math.isclose(x, first_ops[int(text)], rel_tol=1e-12)
    whole = len(ticks)
    assert 2 <= whole < L70.n_layers  # 80 layers do not all fit at 1280 px: thinned
    vb = view.plot.getViewBox()
    xs = [vb.mapViewToScene(QPointF(x, 0)).x() for x, _t in ticks]
    w = QFontMetricsF(theme.font("small")).horizontalAdvance("88")
    assert all(b - a > w for a, b in zip(xs, xs[1:]))
    view.zoom_to_layer(40)
    labels = [t for _x, t in view.layer_axis._tickLevels[0]]
    assert "40" in labels and "41" in labels  # zoomed in: every layer
    assert "(x0.001)" not in view.layer_axis.labelString()


def test_more_gpus_than_the_timeline_simulates_is_refused_clearly():
    with pytest.raises(ValueError, match="at most 64 GPUs"):
        stm.StepSpec("llama3-70b", "h100", None, 128)


def test_chunks_of_a_collective_matmul_are_one_label_with_ticks(qtbot):
    view = make_view(qtbot, n=8, overlap="async")
    view.zoom_to_layer(40)
    labels = _painted_labels(view)
    vb = view.plot.getViewBox()
    recs = sorted((c for c in view.comm.trace.computes if c.device == 0 and c.layer == 40 and stm.op_kind(c) == "down"),
                  key=lambda c: c.t_start)
    assert len(recs) == 8  # the engine tiles the row-parallel matmul into n chunks
    a = view.plot.mapFromScene(vb.mapViewToScene(QPointF(recs[0].t_start, 0))).x()
    b = view.plot.mapFromScene(vb.mapViewToScene(QPointF(recs[-1].t_end, 0))).x()
    y0, y1 = (view.plot.mapFromScene(vb.mapViewToScene(QPointF(0, y))).y() for y in view.lanes()["compute"])
    on_it = [t for r, t, _c, _b in labels if a - 1 <= r.center().x() <= b + 1 and y0 <= r.center().y() <= y1]
    assert len(on_it) == 1 and on_it[0].startswith("down")  # one label for the 8 chunks
    assert stm.fmt_time(recs[-1].t_end - recs[0].t_start) in view.hover_text(recs[3].t_start + 1e-9, 0.3)
    cuts = view.labels.cut_lines(vb.childGroup.sceneTransform(), view.x_range())
    assert len(cuts) >= 2 * 7  # 7 boundaries inside down, 7 inside Wo, on each GPU: ticks at the top and bottom


def test_wheel_zooms_time_only_and_items_stay(qtbot):
    view = make_view(qtbot, n=8)
    items = list(view.plot.getPlotItem().items)
    vb = view.plot.getViewBox()
    (x0, x1), (y0, y1) = vb.viewRange()
    centre = view.plot.mapFromScene(vb.mapViewToScene(QPointF(0.5 * (x0 + x1), 0.5 * (y0 + y1))))
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    for _ in range(3):
        ev = QWheelEvent(QPointF(centre), QPointF(view.plot.viewport().mapToGlobal(centre)), QPoint(0, 0),
                         QPoint(0, 120), Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
        QApplication.sendEvent(view.plot.viewport(), ev)
    (a0, a1), (b0, b1) = vb.viewRange()
    assert a1 - a0 < 0.8 * (x1 - x0)  # zoomed in on time
    assert (b0, b1) == pytest.approx((y0, y1))  # the rows did not move
    assert list(view.plot.getPlotItem().items) == items


def test_hovering_a_bar_sets_the_tooltip(qtbot):
    view = make_view(qtbot, n=8)
    view.zoom_to_layer(3)
    rec = next(c for c in view.comm.trace.computes if c.device == 1 and c.layer == 3 and stm.op_kind(c) == "gate_up")
    vb = view.plot.getViewBox()
    y0, y1 = view.lanes()["compute"]
    pos = view.plot.mapFromScene(vb.mapViewToScene(QPointF(0.5 * (rec.t_start + rec.t_end), 1 + 0.5 * (y0 + y1))))
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication

    vp = view.plot.viewport()
    QApplication.sendEvent(vp, QMouseEvent(QEvent.MouseMove, QPointF(pos), QPointF(vp.mapToGlobal(pos)),
                                           Qt.NoButton, Qt.NoButton, Qt.NoModifier))
    qtbot.waitUntil(lambda: "gate/up" in view.labels.toolTip(), timeout=5000)
    assert "GPU 1, layer 3" in view.labels.toolTip()


def test_the_opener_slot_simulates_off_the_event_loop(qtbot):
    from PySide6.QtWidgets import QWidget

    parent = QWidget()
    qtbot.addWidget(parent)
    params = {"model": "llama3-8b", "chip": "h100", "link": "", "batch": 4, "ctx": 1024, "w_bytes": 2.0,
              "kv_bytes": 2.0, "act_bytes": 2.0, "algo": "ring"}
    opener = std.StepTimelineOpener(parent, lambda: params)
    opener.open_at(2)
    view = opener.dialog.view
    if view.data is None:  # still simulating in its worker thread
        assert "Simulating" in view.headline.text()
        with qtbot.waitSignal(view.step_ready, timeout=60_000):
            pass
    ref = cost_model.simulate_decode_step(MODELS["llama3-8b"], H100, NVLINK4, 2, 4, 1024)
    assert math.isclose(view.total(), ref.time, rel_tol=1e-12)
    with qtbot.waitSignal(view.step_ready, timeout=60_000):
        view.set_overlap("async")
    assert view.overlap == "async"
    assert math.isclose(view.total(), cost_model.simulate_decode_step(
        MODELS["llama3-8b"], H100, NVLINK4, 2, 4, 1024, overlap="async").time, rel_tol=1e-12)


def test_a_result_for_the_previous_step_is_dropped(qtbot):
    import threading

    gate = threading.Event()

    def held(*a, **kw):  # the real engine, once the test lets the workers go
        gate.wait(60)
        return cost_model.simulate_decode_step(*a, **kw)

    view = st.StepTimelineView(stm.StepSpec(L70_2, "h100", None, 4, 32, 8192), "none", simulate=held, sync=False)
    qtbot.addWidget(view)
    first = view.worker.job("none")
    view.set_spec(stm.StepSpec(L70_2, "h100", None, 2, 32, 8192))  # while n = 4 is still simulating
    second = view.worker.job("none")
    gate.set()
    qtbot.waitUntil(lambda: first.delivered and second.delivered, timeout=60_000)  # both have reported
    assert first.dropped and not second.dropped
    assert view.spec.n == 2 and math.isclose(view.total(), simulate(L70_2, 2).time, rel_tol=1e-12)
    assert compute_rects_of(view, 3) == []  # no bar of the 4-GPU step


def test_a_click_between_points_opens_the_nearest_tensor_parallel_degree(qtbot):
    from app.views.latency.latency_view import LatencyView

    lv = LatencyView()
    qtbot.addWidget(lv)
    lv.resize(1400, 900)
    lv.show()
    qtbot.waitExposed(lv)
    lv.set_params(model="llama3-70b", chip="h100", batch=1, ctx=2048, n_max=1024)
    vb = lv.plot1.getViewBox()
    y = sum(vb.viewRange()[1]) / 2
    # Llama-3 70B: 64 heads, 8 KV heads, d_ff 28672 -> 1, 2, 4, 8, 16, 32, 64 (tp_layout's rule)
    assert stm.tp_degrees(L70) == [1, 2, 4, 8, 16, 32, 64]
    for n_mouse, want in ((7, 8), (5, 4), (40, 32)):
        pos = vb.mapViewToScene(QPointF(math.log10(n_mouse), y))
        assert std.n_at_scene_pos(lv, pos) == want
    assert std.n_at_scene_pos(lv, vb.mapViewToScene(QPointF(math.log10(500), y))) == 500  # refused by the caller
