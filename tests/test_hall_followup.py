"""The lecture hall's leftovers (issue 31, after the views and small-screen rounds): the DGX
explanation's timing in the legend's words, chips on a TPU machine, one-shot's queued sends, the
TP forward's buffers and the timeline's room at 1280×720 and 2×."""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QApplication  # noqa: E402

from app import theme  # noqa: E402
from app.state import Playback, Scenario, ScenarioModel  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")
DGX = dict(kind="all-reduce", n=16, algo="hier", topology="dgx-h100", nbytes=2.0**20)


def settle(k=6):
    for _ in range(k):
        QApplication.processEvents()


def shown(qtbot, widget, size=(700, 900)):
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    qtbot.waitExposed(widget)
    settle()
    return widget


# -- 3. the DGX explanation says what timed the step, as the ring's legend does ---------------------
@pytest.mark.parametrize("lang", ("en", "zh"))
def test_dgx_explanation_names_ncclss_timing_as_the_legend_does(qtbot, qapp, lang):
    """The explanation dock said "inside the nodes, over NVLink 4 (H100), NCCL hier Simple (646 GB/s,
    α 0 s)": a link no hardware has. Now each step names the hardware it crosses (the fabric's own
    figures) and then the legend's sentence: NCCL's algorithm by its NCCL name, its start-up, its
    effective rates and why there is no α per step."""
    from app import i18n
    from app.views.ring.ring_view import RingView
    from app.views.text.explain import ExplainPanel
    from app.words import fmt_rate, fmt_time

    i18n.set_language(qapp, lang)
    model = ScenarioModel(Scenario(**DGX))
    pb = Playback(model)
    panel = shown(qtbot, ExplainPanel(model, pb))
    ring = shown(qtbot, RingView(model, pb), size=(1280, 800))
    topo = model.run.comm.topology
    timed = topo.timed_as("all-reduce", "hier", 2.0**20)
    seen = set()
    for k in range(1, pb.n_steps + 1):
        pb.seek_step(k)
        settle()
        text = panel.body.toPlainText()
        assert "NCCL hier" not in text and "α 0 s" not in text, text
        assert fmt_time(timed.base) in text and fmt_rate(timed.inter.bw) in text  # 66.8 µs, as the legend
        assert "NVLS Tree" in text
        assert (("start-up" in text) if lang == "en" else ("启动" in text))
        for link in (topo.inter, topo.intra):  # the hardware the step crosses, by its own name and figures
            if link.name in text:
                seen.add(link.name)
                assert fmt_time(link.alpha) in text
    assert seen == {topo.inter.name, topo.intra.name}
    # the same figures as the ring's legend
    legend = ring.texts.legend
    assert fmt_time(timed.base) in legend and fmt_rate(timed.inter.bw) in legend and fmt_rate(timed.intra.bw) in legend


# -- 4. a TPU machine's devices are chips on the Buffers tab and in the timeline's tooltips ------------
TPU = dict(kind="all-reduce", n=16, algo="torus", topology="tpu-v5e-16x16", nbytes=2.0**12)


@pytest.mark.parametrize("lang", ("en", "zh"))
def test_tpu_buffers_and_timeline_say_chip(qtbot, qapp, lang):
    """The Buffers tab's title ("every GPU's buffer, one row per GPU"), its row names and the timeline's
    tooltip said GPU on a TPU slice; they say chip, as the ring and the explanation do. A GPU machine
    keeps GPU."""
    from app import i18n
    from app.views.buffers.buffer_view import BufferView
    from app.views.timeline.timeline import TimelineView

    i18n.set_language(qapp, lang)
    gpu, chip = ("GPU", "chip") if lang == "en" else ("GPU", "芯片")
    for scenario, word, other in ((TPU, chip, gpu), (dict(kind="all-reduce", n=8), gpu, chip)):
        model = ScenarioModel(Scenario(**scenario))
        pb = Playback(model)
        buffers = shown(qtbot, BufferView(model, pb), size=(1000, 700))
        timeline = shown(qtbot, TimelineView(model, pb), size=(1000, 300))
        pb.seek_step(2)
        settle()
        title = buffers.title.text()
        assert word in title and other not in title, title
        rows = [name for _y, name in buffers.plot.getAxis("left")._tickLevels[0]]
        assert rows and all(name.startswith(word) for name in rows), rows
        tip = timeline.toolTip()
        assert word in tip and other not in tip, tip


# -- 5. one-shot's queued sends, counted across its rounds ---------------------------------------------
def test_one_shot_shows_its_queued_sends_at_n8(qtbot):
    """One-shot all-reduce issues all n − 1 sends at once and they wait for the port; the engine records
    each round as a step of its own, and the queue was counted within the step: "N queued" never showed.
    At n = 8, in round 1 every GPU has 6 sends waiting, in round 4 three; the ring draws the count under
    each GPU's name inside the box its layout gave the label."""
    from app.core.frame import frame_at
    from app.views.ring.ring_view import RingView

    model = ScenarioModel(Scenario(kind="all-reduce", n=8, algo="direct", nbytes=2.0**20))
    run = model.run
    tr, idx = run.trace, run.index
    starts = sorted({float(m.t_start) for m in tr.messages})
    assert len(starts) == 7  # seven rounds, one after another on the port
    for r, want in ((0, 6), (3, 3), (6, 0)):
        t = (starts[r] + (starts[r + 1] if r + 1 < len(starts) else tr.t_end)) / 2
        f = frame_at(idx, t)
        assert f.queued == (want,) * 8, (r, f.queued)
        # as a closed count: every GPU's sends that have not started by t
        later = [sum(1 for m in tr.messages if m.src == d and m.t_start > t) for d in range(8)]
        assert list(f.queued) == later
    pb = Playback(model)
    view = shown(qtbot, RingView(model, pb), size=(1200, 800))
    pb.seek((starts[0] + starts[1]) / 2)
    settle()
    lay = view.layout_now
    labelled = 0
    for d, (lab, box) in enumerate(zip(view.device_labels, lay.device_labels)):
        if box is None or not lab.isVisible():
            continue
        if "6" in lab.text and "queued" in lab.text:
            labelled += 1
        drawn = lab.mapRectToScene(lab.boundingRect())
        assert drawn.height() <= box.rect.height() + 0.5, (d, lab.text, drawn.height(), box.rect.height())
    assert labelled == 8


# -- 7. the timeline keeps room to name its rows at 1280×720 and 2× ------------------------------------
@pytest.mark.parametrize("scale", (1.0, 2.0))
def test_the_timeline_names_at_least_two_rows_at_1280x720(qtbot, scale):
    """At 1280×720 and 2× the window squeezed the timeline dock to 324×128: its plot was 62 px for four
    rows of 33 px labels and only "GPU 0" was named. The timeline now asks the height to name two rows
    at least (at most 30 % of the window): GPU 0 and GPU 2, each label's line inside the plot and clear
    of the next; at 1× all four, as before."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QFontMetricsF

    from classroom_fixtures import make_window

    w = make_window(qtbot, "reduce-scatter", 4, size=(1280, 720))
    theme.set_scale(scale)
    for _ in range(3):
        settle()
        qtbot.wait(20)
    tl = w.timeline
    vb = tl.plot.getViewBox()
    names = [(y, s) for y, s in tl.plot.getAxis("left")._tickLevels[0] if s.startswith("GPU")]
    assert [s for _y, s in names] == (["GPU 0", "GPU 1", "GPU 2", "GPU 3"] if scale == 1.0 else ["GPU 0", "GPU 2"])
    line = QFontMetricsF(tl._small()).height()
    ys = [vb.mapViewToScene(QPointF(0, y)).y() for y, _s in names]
    top, bottom = vb.sceneBoundingRect().top(), vb.sceneBoundingRect().bottom()
    for a, b in zip(ys, ys[1:]):
        assert b - a >= line, (ys, line)  # a label's line clear of the next
    assert all(top - 1 <= y <= bottom + 1 for y in ys), (ys, top, bottom)
    assert w.timeline_dock.height() <= 0.3 * w.height() + 80  # (the dock's title over the view's share)
