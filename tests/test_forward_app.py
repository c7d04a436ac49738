"""
The TP-forward and decode scenarios on the clock: every op of the lecture
model's forward (or one decode step) between its collectives, each collective with its real bytes;
the ring view labels a computing GPU, the timeline draws a compute lane, the explanation and the
formula panel say what is computed, the status bar and the ring's step line say which op or which
collective step is under way.
"""

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor

from app.core.scenarios import build_run
from app.state import Playback, Scenario, ScenarioModel
from simcore.transformer_lab import TINY
from timeline_reading import compute_bars
from panel_text import shown_text

B, T, ACT = 1, 8, 2.0  # the scenario's batch, tokens and bf16 bytes per activation
# H100 SXM datasheet: 989 TFLOP/s dense BF16, 3.35 TB/s HBM3 (NVLink 4 scenarios time ops on it)
H100_PEAK, H100_BW = 989e12, 3.35e12
COMPUTE = QColor("#6E6E6E")  # app.views.ring.ring_items.COMPUTE_HEX, written out: the test says what it expects


def _near(c: QColor, ref: QColor, tol=40) -> bool:
    return max(abs(c.red() - ref.red()), abs(c.green() - ref.green()), abs(c.blue() - ref.blue())) <= tol


@pytest.fixture(scope="module")
def runs():
    return {n: build_run(Scenario(kind="tp-forward", n=n)) for n in (1, 2, 4, 8)}


@pytest.fixture(scope="module")
def decodes():
    return {n: build_run(Scenario(kind="decode", n=n)) for n in (1, 4)}


# ---------------------------------------------------------------------------------------
# The run: ops and real bytes, no Qt
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 8])
def test_collectives_carry_the_models_real_bytes(runs, n):
    tr = runs[n].trace
    ar = [c for c in tr.collectives if c.op == "all-reduce"]
    assert len(ar) == 2 * TINY.n_layers
    assert all(c.nbytes == B * T * TINY.d_model * ACT for c in ar)  # [B, T, d_model] activations: 1 KiB
    assert tr.collectives[-1].label == "logits" and tr.collectives[-1].nbytes == B * T * TINY.vocab * ACT
    # and the size control does not scale them any more
    other = build_run(Scenario(kind="tp-forward", n=n, nbytes=2.0 ** 30))
    assert [c.nbytes for c in other.trace.collectives] == [c.nbytes for c in tr.collectives]
    assert runs[n].tp.max_abs_diff < 1e-10  # the lecture's check: TP logits = single-device logits


@pytest.mark.parametrize("n", [1, 2, 8])
def test_each_gpu_computes_then_communicates_and_that_is_the_whole_time(runs, n):
    tr = runs[n].trace
    comm = sum(c.t_end - c.t_start for c in tr.collectives)
    for d in range(n):
        mine = [c for c in tr.computes if c.device == d]
        assert len(mine) == 7 * TINY.n_layers + 2  # norm, qkv, attention, out, norm, gate/up, down; final norm, head
        busy = sum(c.t_end - c.t_start for c in mine)
        assert busy + comm == pytest.approx(tr.t_end, rel=1e-9)  # no overlap: ops and collectives in turn
        assert busy > 0
    # the ops of layer 0's attention run before its all-reduce, the MLP's after it
    c0 = tr.collectives[0]
    before = [c.label for c in tr.computes if c.device == 0 and c.t_end <= c0.t_start + 1e-15]
    assert before == ["attn norm", "qkv", "attention", "attn out"]


def test_an_op_lasts_its_roofline_on_the_chip(runs):
    n = 2
    ops = {c.label: c for c in runs[n].trace.computes if c.device == 1 and c.layer == 0}
    wo = ops["attn out"]
    heads = TINY.n_heads // n
    assert wo.flops == 2 * B * T * heads * TINY.d_head * TINY.d_model  # 2·m·k·n of [M, H/n·dh] @ [H/n·dh, D]
    assert wo.t_end - wo.t_start == pytest.approx(max(wo.flops / H100_PEAK, wo.nbytes / H100_BW), rel=1e-12)
    assert runs[n].tp.chip.name.startswith("H100")


def test_the_link_names_the_chip_whose_roofline_times_the_ops():
    from app.core.scenarios import scenario_chip

    assert scenario_chip("nvlink4").name.startswith("H100") and scenario_chip("nvlink5").name.startswith("B200")
    assert scenario_chip("tpu-v5e-ici").name == "TPU v5e"
    assert scenario_chip("pcie4").name.startswith("H100")  # no chip calls PCIe its own: H100s on PCIe
    v5e = build_run(Scenario(kind="tp-forward", n=2, link="tpu-v5e-ici"))
    qkv = next(c for c in v5e.trace.computes if c.label == "qkv")
    # TPU v5e (Google Cloud docs): 197 TFLOP/s bf16, 819 GB/s HBM
    assert qkv.t_end - qkv.t_start == pytest.approx(max(qkv.flops / 197e12, qkv.nbytes / 819e9), rel=1e-12)


def test_one_gpu_sends_nothing_and_plays_its_ops(runs):
    run = runs[1]
    assert not run.trace.messages and run.index.t_total > 0
    durations = sorted(c.t_end - c.t_start for c in run.trace.computes)
    assert durations[0] <= run.ref_step <= durations[-1]  # the pace is one op, not a ring step nobody takes


def test_the_index_knows_what_each_gpu_computes_and_steps_visit_every_op(runs):
    idx = runs[2].index
    qkv = next(c for c in runs[2].trace.computes if c.device == 1 and c.label == "qkv" and c.layer == 1)
    mid = (qkv.t_start + qkv.t_end) / 2
    assert idx.computing(1, mid) == qkv and idx.computing(1, qkv.t_end) == qkv  # just ended at its stop
    c1 = runs[2].trace.collectives[1]
    assert idx.computing(1, (c1.t_start + c1.t_end) / 2) is None  # in a collective: not computing
    assert qkv.t_end in idx.stops


# ---------------------------------------------------------------------------------------
# The decode scenario: one new token after the T cached ones, on the same clock
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 4])
def test_the_decode_step_computes_between_collectives_of_its_real_bytes(decodes, n):
    run = decodes[n]
    tr, cfg = run.trace, run.tp.cfg
    assert cfg == TINY  # n = 1 and 4 split the lecture's model as it is
    ar = [c for c in tr.collectives if c.op == "all-reduce"]
    assert len(ar) == 2 * cfg.n_layers
    assert all(c.nbytes == B * 1 * cfg.d_model * ACT for c in ar)  # [B, 1, d_model]: one new token, 128 B
    assert tr.collectives[-1].label == "logits" and tr.collectives[-1].nbytes == B * 1 * cfg.vocab * ACT
    other = build_run(Scenario(kind="decode", n=n, nbytes=2.0 ** 30))  # the size control does not apply
    assert [c.nbytes for c in other.trace.collectives] == [c.nbytes for c in tr.collectives]
    assert run.tp.decode and run.tp.max_abs_diff < 1e-10  # the lecture's check: TP logits = single device's
    comm = sum(c.t_end - c.t_start for c in tr.collectives)
    for d in range(n):
        mine = [c for c in tr.computes if c.device == d]
        assert len(mine) == 7 * cfg.n_layers + 2
        assert sum(c.t_end - c.t_start for c in mine) + comm == pytest.approx(tr.t_end, rel=1e-9)


def test_a_decode_steps_attention_reads_the_kv_cache_and_lasts_its_roofline(decodes):
    n = 4
    att = next(c for c in decodes[n].trace.computes if c.device == 0 and c.label == "attention" and c.layer == 1)
    h, g, dh = TINY.n_heads // n, TINY.n_kv_heads // n, TINY.d_head
    # K and V of its g KV groups at the T cached positions and the new one, 2 bytes each; q read and o written
    assert att.nbytes == B * (T + 1) * 2 * g * dh * ACT + 2 * B * h * dh * ACT
    # q·k and p·v: 2 multiply-adds of dh per head per cached key (the roofline's 4·dh), and the softmax
    assert att.flops >= 4 * B * h * dh * T
    assert att.t_end - att.t_start == pytest.approx(max(att.flops / H100_PEAK, att.nbytes / H100_BW), rel=1e-12)
    fwd = next(c for c in build_run(Scenario(kind="tp-forward", n=n)).trace.computes
               if c.device == 0 and c.label == "down" and c.layer == 1)
    dec = next(c for c in decodes[n].trace.computes if c.device == 0 and c.label == "down" and c.layer == 1)
    assert dec.flops * T == fwd.flops  # one token's rows instead of T: 2·1·(F/n)·D FLOPs
    assert dec.flops == 2 * B * (TINY.d_ff // n) * TINY.d_model


# ---------------------------------------------------------------------------------------
# What the status bar and the ring's step line say (a stop is an op's end or a ring step's end)
# ---------------------------------------------------------------------------------------
def _mid(a, b):
    return (a + b) / 2


def test_the_status_names_the_op_or_the_collective_step_never_a_count_of_stops(qapp, runs):
    from app.views.ring.ring_texts import forward_status, subcaption

    run = runs[4]
    idx, tr = run.index, run.trace
    ops = 7 * TINY.n_layers + 2  # per GPU: norm, QKV, attention, out, norm, gate/up, down per layer; norm, head
    K = 2 * (4 - 1)  # ring all-reduce steps at n = 4
    assert forward_status(run, 0.0) == f"start: {ops} ops and 5 collectives per GPU"
    assert forward_status(run, idx.t_total) == f"done: {ops} ops and 5 collectives per GPU"
    qkv = _op(run, "qkv", 1)  # layer 1's QKV is GPU 0's 9th op
    assert forward_status(run, _mid(qkv.t_start, qkv.t_end)) == f"op 9 of {ops}: layer 1 · QKV (computing)"
    assert forward_status(run, qkv.t_end) == f"op 9 of {ops}: layer 1 · QKV (done)"
    c = tr.collectives[1]  # layer 0's MLP all-reduce, the 2nd of 5 collectives
    a, b = idx.step_ends[1][1], idx.step_ends[1][2]  # step 3 runs from the end of step 2 to its own end
    where = "layer 0 · MLP: Ring all-reduce (collective 2 of 5)"
    assert forward_status(run, _mid(a, b)) == f"{where}, step 3 of {K} in flight"
    assert forward_status(run, b) == f"{where}, after step 3 of {K}"
    # the ring's step line: the op every GPU computes, or the collective's step with its place in words
    assert subcaption(run, c, _mid(qkv.t_start, qkv.t_end)).splitlines()[0] == \
        f"layer 1 · QKV: every GPU computes · op 9 of {ops} (in progress)"
    assert subcaption(run, c, _mid(a, b)).splitlines()[0] == \
        f"layer 0 · MLP: Ring all-reduce · step 3 of {K} (in progress)"
    assert subcaption(run, tr.collectives[0], 0.0).splitlines()[0] == \
        f"layer 0 · norm: every GPU computes · op 1 of {ops} (next)"
    # walking every stop: the texts never count stops ("step 30 of 43")
    for t in idx.stops:
        text = forward_status(run, t)
        assert f"of {len(idx.stops) - 1}" not in text and text
    # a run without ops keeps the plain step count
    plain = build_run(Scenario(kind="all-reduce", n=4, nbytes=4096.0))
    assert forward_status(plain, 0.0) is None


def test_the_formula_panel_shows_the_ops_roofline_while_the_gpus_compute(qtbot, runs):
    from app.words import fmt_time
    from app.views.text.formula_panel import FormulaPanel

    model = ScenarioModel(Scenario(kind="tp-forward", n=2))
    pb = Playback(model)
    panel = FormulaPanel()
    qtbot.addWidget(panel)
    panel.bind(model, pb)
    op = _op(model.run, "gate/up", 1)
    pb.seek(_mid(op.t_start, op.t_end))
    text = shown_text(panel)
    t_math, t_mem = op.flops / H100_PEAK, op.nbytes / H100_BW  # the datasheet's peak and bandwidth
    assert "layer 1 · gate/up on the H100 SXM" in text and "max(<i>F</i>/<i>P</i>, <i>B</i>/<i>W</i>)" in text
    assert f"max({fmt_time(t_math)}, {fmt_time(t_mem)}) = <b>{fmt_time(max(t_math, t_mem))}</b>" in text
    assert ("memory-bound" if t_mem > t_math else "compute-bound") in text
    assert f"ridge point {H100_PEAK / H100_BW:.3g} FLOP/byte" in text and "equals the roofline ✓" in text
    c = model.run.trace.collectives[2]  # in a collective: its closed form again
    pb.seek(_mid(c.t_start, c.t_end))
    assert "Ring all-reduce" in shown_text(panel) and "max(" not in shown_text(panel)
    model.update(n=1)  # one GPU: no collective at all, the ops still have their roofline
    op = _op(model.run, "lm head", -1)
    pb.seek(_mid(op.t_start, op.t_end))
    assert "after the layers · LM head" in shown_text(panel)


# ---------------------------------------------------------------------------------------
# The views
# ---------------------------------------------------------------------------------------
def _views(qtbot, *which, n=2):
    """The forward's model and clock with the views asked for, shown (each test builds only what it reads)."""
    from app.views.text.explain import ExplainPanel
    from app.views.ring.ring_view import RingView
    from app.views.timeline.timeline import TimelineView

    model = ScenarioModel(Scenario(kind="tp-forward", n=n))
    pb = Playback(model)
    make = {"ring": (RingView, (900, 600)), "timeline": (TimelineView, (900, 260)), "explain": (ExplainPanel, (400, 600))}
    out = []
    for name in which:
        cls, size = make[name]
        w = cls(model, pb)
        qtbot.addWidget(w)
        w.resize(*size)
        w.show()
        out.append(w)
    qtbot.waitExposed(out[0])
    return model, pb, out


def _op(run, label, layer, d=0):
    """Device d's op `label` of `layer` in a run (or a ScenarioModel's run)."""
    run = getattr(run, "run", run)
    return next(c for c in run.trace.computes if c.device == d and c.label == label and c.layer == layer)


def _box_pixel(ring, d):
    """A pixel inside device d's box, left of its centred label: the compute fill when it computes."""
    item = ring.devices[d]
    r = ring.mapFromScene(item.sceneBoundingRect()).boundingRect()
    return ring.viewport().grab().toImage().pixelColor(r.left() + item.pad + 4, r.center().y())


def test_the_ring_view_fills_a_computing_gpus_box_and_names_the_op(qtbot, qapp):
    model, pb, (ring, explain) = _views(qtbot, "ring", "explain")
    op = _op(model, "qkv", 1)
    pb.seek((op.t_start + op.t_end) / 2)
    qapp.processEvents()
    for d in range(2):
        assert ring.devices[d].compute_text.startswith("QKV ") and ring.devices[d].compute_text.endswith("ns")
        assert _near(_box_pixel(ring, d), COMPUTE)
    text = shown_text(explain)
    assert "QKV" in text and "layer 1" in text and "memory-bound" in text and "H100" in text
    assert "as long as computing" in text  # why the ops are slivers beside the collectives
    assert ring.subcaption.text.startswith("layer 1 · QKV: every GPU computes · op 9 of 16")
    pb.seek(0.0)  # the start, then op by op before the first collective: the line follows each op
    qapp.processEvents()
    assert ring.subcaption.text.startswith("layer 0 · norm: every GPU computes · op 1 of 16 (next)")
    pb.step_forward()
    assert ring.subcaption.text.startswith("layer 0 · norm: every GPU computes · op 1 of 16 (done)")
    qkv = _op(model, "qkv", 0)
    pb.seek(_mid(qkv.t_start, qkv.t_end))
    assert ring.subcaption.text.startswith("layer 0 · QKV: every GPU computes · op 2 of 16 (in progress)")
    c = model.run.trace.collectives[2]  # mid all-reduce: the boxes show their chunks again
    pb.seek((c.t_start + c.t_end) / 2)
    qapp.processEvents()
    assert ring.devices[0].compute_text == ""
    assert not _near(_box_pixel(ring, 0), COMPUTE)
    assert "Every GPU computes" not in shown_text(explain) and "Step 1 of 2" in shown_text(explain)


def test_the_decode_window_names_its_ops_and_says_what_is_under_way(qtbot):
    from app.main_window import MainWindow

    model = ScenarioModel(Scenario(kind="decode", n=4))
    pb = Playback(model)
    win = MainWindow(model, pb)  # not shown: the texts are set whether or not it is on screen
    qtbot.addWidget(win)
    size = win.controls.size_combo
    assert not size.isEnabled() and "real bytes" in size.toolTip()  # S does not apply: the model's own bytes
    assert "as if" not in win.controls.hint.text()
    assert win.step_label.text() == "start: 16 ops and 5 collectives per GPU"
    assert "Every GPU computes: norm (layer 0)" in shown_text(win.explain)  # what comes first: an op, not a collective
    pb.step_forward()
    assert win.step_label.text() == "op 1 of 16: layer 0 · norm (done)"
    att = _op(model.run, "attention", 1)
    pb.seek(_mid(att.t_start, att.t_end))
    assert win.step_label.text() == "op 10 of 16: layer 1 · attention (computing)"
    text = shown_text(win.explain)
    assert "attention (layer 1)" in text and "One new token per sequence" in text and "KV cache" in text
    assert "[1, 1, d_model]: 128 B" in text
    mlp = model.run.trace.collectives[1]
    pb.seek(_mid(mlp.t_start, model.run.index.step_ends[1][0]))
    assert "Collective 2 of 5: layer 0 · MLP — Ring all-reduce" in shown_text(win.explain)  # the place in words
    ag = model.run.trace.collectives[-1]  # the logits all-gather: 3 ring steps at n = 4
    pb.seek(_mid(ag.t_start, model.run.index.step_ends[ag.id][0]))
    assert win.step_label.text() == "logits: Ring all-gather (collective 5 of 5), step 1 of 3 in flight"


def _lane_pixel(timeline, t, row):
    vb = timeline.plot.getViewBox()
    scene = vb.mapViewToScene(QPointF(t / timeline.unit_s, row))
    p = timeline.plot.mapFromScene(scene)
    return timeline.plot.grab().toImage().pixelColor(p.x(), p.y())


def test_the_timeline_draws_a_compute_lane_and_predict_mode_hides_it(qtbot, qapp):
    model, pb, (timeline,) = _views(qtbot, "timeline")
    tr = model.run.trace
    assert compute_bars(timeline) == len(tr.computes)
    op = _op(model, "gate/up", 1, d=1)
    qapp.processEvents()
    assert _near(_lane_pixel(timeline, op.t_start, 0.8), COMPUTE)
    c = tr.collectives[1]  # the middle of a collective: send / receive bars, not compute
    assert not _near(_lane_pixel(timeline, (c.t_start + c.t_end) / 2, 0.8), COMPUTE)
    # predicting the step at t0: nothing from t0 on is painted, compute included
    pb.frames.set_hidden_after(op.t_start - 1e-7)  # the predict mask, in the frame the timeline is handed
    try:
        qapp.processEvents()
        assert not _near(_lane_pixel(timeline, op.t_start, 0.8), COMPUTE)
    finally:
        pb.frames.set_hidden_after(None)


def test_no_compute_lane_where_the_run_records_none(qtbot):
    from app.views.timeline.timeline import TimelineView

    model = ScenarioModel(Scenario(kind="all-reduce", n=4, nbytes=4096.0))
    view = TimelineView(model, Playback(model))
    qtbot.addWidget(view)
    assert compute_bars(view) == 0
    assert "compute" not in view.plot.getAxis("bottom").labelText


# ---------------------------------------------------------------------------------------
# The decode plot: the overlapped curve beside the plain one, and a click on either opens its step
# ---------------------------------------------------------------------------------------
# Llama-3 8B, batch 8, ctx 1024: every op memory-bound, so the simulated step equals the point's value
SMALL = dict(model="llama3-8b", chip="h100", batch=8, ctx=1024, n_max=1024)


def _latency(qtbot, **params):
    from app.views.latency.latency_view import LatencyView

    model = ScenarioModel(Scenario(kind="decode", n=4))
    view = LatencyView(model, Playback(model))
    qtbot.addWidget(view)
    view.resize(1400, 850)
    view.show()
    qtbot.waitExposed(view)
    assert view.set_params(**params), view.last_error
    return view


def test_the_overlap_curve_is_the_cost_models_and_never_above_the_plain_one(qtbot):
    from simcore.links import LINKS
    from simcore.cost_model import decode_sweep_overlap
    from simcore.hw_specs import CHIPS
    from simcore.llm_math import MODELS

    view = _latency(qtbot, **SMALL)
    assert view.overlap_curve() is None and not view.controls.overlap_check.isChecked()
    view.controls.overlap_check.setChecked(True)  # the user ticks it: debounced, then recomputed
    qtbot.waitUntil(lambda: view.params()["overlap"], timeout=3000)
    n, ms = view.overlap_curve()
    ref = decode_sweep_overlap(MODELS["llama3-8b"], CHIPS["h100"], LINKS["nvlink4"], np.arange(1, 1025), 8, 1024)
    np.testing.assert_allclose(n, np.arange(1, 1025))
    np.testing.assert_allclose(ms, ref["t_step_overlap"] * 1e3, rtol=1e-12)
    plain = view.curves()["t_step"][1]
    assert np.all(ms <= plain * (1 + 1e-12)) and np.all(ms[1:] < plain[1:])  # it hides something once n > 1
    assert ms[0] == pytest.approx(plain[0], rel=1e-12)  # n = 1: nothing to hide
    # legended, and exported beside the plain curve
    labels = [label.text for _sample, label in view.legend1.items]
    assert any("overlap" in t for t in labels)
    rows = view.csv_text().splitlines()
    head = rows[0].split(",")
    col = head.index("t_step_overlap_ms")
    assert float(rows[8].split(",")[col]) == pytest.approx(ms[7], rel=1e-12)
    assert "t_step with overlap" in view.readout().split("\n")[0]  # first, as the title gives it
    # another algorithm: the closed form tiles the ring only, so the box is off and the curve gone
    view.set_params(algo="rd")
    assert not view.controls.overlap_check.isEnabled() and view.overlap_curve() is None


def _click(qtbot, view, n, ms):
    """A real left click on the decode plot at (n, ms) (log axes: view coordinates are log10)."""
    from PySide6.QtCore import Qt

    vb = view.plot1.getViewBox()
    scene = vb.mapViewToScene(QPointF(np.log10(n), np.log10(ms)))
    pos = view.latency_widget.mapFromScene(scene)
    qtbot.mouseClick(view.latency_widget.viewport(), Qt.LeftButton, pos=pos)


@pytest.mark.parametrize("which", ["none", "async"])
def test_clicking_a_point_of_either_curve_opens_that_step_whose_total_is_the_point(qtbot, which):
    from app.views.timeline.step_timeline_dialog import StepTimelineDialog

    view = _latency(qtbot, overlap=True, **SMALL)
    n = 4
    curve = view.curves()["t_step"] if which == "none" else view.overlap_curve()
    ms = float(curve[1][n - 1])
    _click(qtbot, view, n, ms)
    dlg = view.findChild(StepTimelineDialog)
    assert dlg is not None
    qtbot.waitUntil(lambda: dlg.view.data is not None and dlg.view.data.overlap == which, timeout=5000)
    assert dlg.view.overlap == which and dlg.view.spec.n == n
    assert dlg.view.total() * 1e3 == pytest.approx(ms, rel=1e-9)
