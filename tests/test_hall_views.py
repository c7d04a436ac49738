"""The views as a person meets them in the lecture hall (issue 31, the views' minor items): what is
painted is read back from layout rectangles, painted text rectangles and pixels."""

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPointF  # noqa: E402
from PySide6.QtGui import QColor  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app import theme  # noqa: E402
from app.state import Playback, Scenario, ScenarioModel  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")


def settle(k=6):
    for _ in range(k):
        QApplication.processEvents()


def ring_view(qtbot, size=(1200, 800), **scenario):
    from app.views.ring.ring_view import RingView

    model = ScenarioModel(Scenario(**scenario))
    pb = Playback(model)
    view = RingView(model, pb)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    settle()
    return model, pb, view


# -- the ring: a device's "N queued" line has room in its layout box --------------------------------
def test_queued_label_fits_the_box_the_layout_gave_it(qtbot):
    """Two-shot's sends wait for their port as one-shot's do (the registry's `queues`): the layout
    must size each device's label for its second line, "6 queued", or the label is drawn twice as
    tall as its box (48.5 px in 25.3 px at n = 8) and runs over the device's blocks."""
    model, pb, view = ring_view(qtbot, kind="all-reduce", n=8, algo="two-shot", nbytes=2.0**20)
    msgs = list(model.run.trace.messages)
    pb.seek(min(m.t_end for m in msgs) * 0.5)  # the first sends on the wire, the rest queued
    settle()
    lay = view.layout_now
    queued = 0
    for d, (lab, box) in enumerate(zip(view.device_labels, lay.device_labels)):
        if box is None or not lab.isVisible():
            continue
        queued += "queued" in lab.text
        drawn = lab.mapRectToScene(lab.boundingRect())
        assert drawn.height() <= box.rect.height() + 0.5, (d, lab.text, drawn.height(), box.rect.height())
    assert queued >= 4, "sends are shown waiting"


# -- the ring: "arrived in the last step" outline reads on every fill -------------------------------
def _luminance(c) -> float:
    def lin(x):
        x = x / 255
        return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4
    return 0.2126 * lin(c.red()) + 0.7152 * lin(c.green()) + 0.0722 * lin(c.blue())


def _contrast(a, b) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.mark.parametrize("theme_key", ("light", "dark", "high-contrast"))
def test_arrived_outline_reads_on_the_chunks_own_colour(qtbot, theme_key):
    """GPU 7's colour is black: after step 1 of a ring all-gather on 8 GPUs chunk 7 arrives at GPU 0,
    and its outline in the light theme's near-black highlight was painted black on black. The outline
    is read inside the slot's edge and compared with the slot's middle."""
    theme.set_theme(theme_key)
    model, pb, view = ring_view(qtbot, size=(900, 700), kind="all-gather", n=8, algo="ring", nbytes=2.0**20)
    pb.seek(pb.stops[1])
    settle()
    img = view.viewport().grab().toImage()
    checked = 0
    for item in view.devices:
        for ch in item.new:
            r = view.viewportTransform().mapRect(item.mapRectToScene(item.slot_rect(ch)))
            x = int(r.center().x())
            fill = img.pixelColor(x, int(r.center().y()))
            pw = theme.line("highlight")  # the outline straddles the slot's edge; nothing outside it is read
            edge = [img.pixelColor(x, y) for y in range(int(r.top() - pw / 2 + 1), int(r.top() + pw + 1.5))]
            best = max(_contrast(c, fill) for c in edge)
            assert best >= 3.0, (item.d, ch, fill.name(), [c.name() for c in edge])
            checked += 1
    assert checked >= 8


# -- the timeline ---------------------------------------------------------------------------------
def timeline(qtbot, size=(1280, 200), **scenario):
    from app.views.timeline.timeline import TimelineView

    model = ScenarioModel(Scenario(**scenario))
    pb = Playback(model)
    view = TimelineView(model, pb)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    settle()
    return model, pb, view


def painted_tick_height(tl, axis="left") -> float:
    """The height of the text the axis paints for its ticks (its drawn text rectangles)."""
    from PySide6.QtGui import QImage, QPainter

    ax = tl.plot.getAxis(axis)
    img = QImage(8, 8, QImage.Format_ARGB32)
    p = QPainter(img)
    try:
        specs = ax.generateDrawSpecs(p)
    finally:
        p.end()
    return max(r.height() for r, _flags, _s in specs[2])


def test_presentation_timeline_text_grows_with_the_text_size(qtbot):
    """Presentation mode's short timeline capped its text at 18 px: from its 1.5× start on, Ctrl+= grew
    every other text and left the timeline's as it was. Each step up now paints it taller."""
    _m, _pb, tl = timeline(qtbot, size=(1280, 160), kind="all-reduce", n=8, algo="ring")
    tl.set_compact(True)
    heights = []
    for s in (1.5, 2.0, 2.5, 3.0):
        theme.set_scale(s)
        settle()
        heights.append((tl._small().pixelSize(), painted_tick_height(tl, "bottom")))
    px = [h[0] for h in heights]
    drawn = [h[1] for h in heights]
    assert all(a < b for a, b in zip(px, px[1:])), heights
    assert all(a < b for a, b in zip(drawn, drawn[1:])), heights
    assert px[0] >= 18, heights  # never smaller than it was at presentation's first size


def axis_title_rect(tl):
    """The time axis' title as painted, in the timeline widget's pixels, and its text."""
    ax = tl.plot.getAxis("bottom")
    lab = ax.label
    r = tl.plot.mapFromScene(lab.mapRectToScene(lab.boundingRect())).boundingRect()
    m = lab.document().documentMargin()
    return r.adjusted(m, 0, -m, 0), lab.toPlainText()


@pytest.mark.parametrize("lang", ("en", "zh"))
@pytest.mark.parametrize("width,scale,kind", [(330, 2.0, "all-reduce"), (680, 1.0, "all-reduce"),
                                              (500, 1.5, "tp-forward"), (1280, 1.0, "tp-forward")])
def test_time_axis_title_keeps_its_unit_inside_the_view(qtbot, qapp, lang, width, scale, kind):
    """At 2× text in a 330 px dock the title read "simulated time (µ": its unit was cut. The title
    shortens to what fits (the legends, then "simulated", go first) and always ends with its unit."""
    from app import i18n

    i18n.set_language(qapp, lang)
    theme.set_scale(scale)
    _m, _pb, tl = timeline(qtbot, size=(width, 150), kind=kind, n=4, algo="ring")
    settle()
    r, text = axis_title_rect(tl)
    assert f"({tl.unit})" in text or f"（{tl.unit}）" in text, text
    assert r.left() >= 0 and r.right() <= tl.plot.width(), (text, r, tl.plot.width())


def send_band_runs(tl, row: int, up: bool = True) -> int:
    """How many separate pieces of bar the timeline paints along the middle of a row's send (up) or
    receive band, across the whole run: read from its pixels."""
    from app.views.timeline.timeline import BAND_H

    vb = tl.plot.getViewBox()
    img = tl.plot.grab().toImage()
    y_data = row - BAND_H / 2 if up else row + BAND_H / 2
    t_end = tl.model.run.trace.t_end / tl.unit_s

    def px(x, y):
        return tl.plot.mapFromScene(vb.mapViewToScene(QPointF(x, y)))
    y = px(0, y_data).y()
    x0, x1 = px(0, 0).x() + 6, px(t_end, 0).x() - 2  # clear of the playhead at t = 0
    bg = theme.palette().background
    inked = [img.pixelColor(x, y).name() != bg.lower() for x in range(x0, x1)]
    return sum(1 for a, b in zip([False] + inked, inked) if b and not a)


@pytest.mark.parametrize("n,scale", [(8, 1.5), (8, 2.5), (64, 1.5)])
def test_grouped_rows_show_each_step(qtbot, n, scale):
    """Presentation's strip puts 8 GPUs in rows of 4 (n = 64: one row of all): the busy bands of one
    step ran into the next, one solid bar with no steps. A gap at each step boundary parts them: a ring
    all-reduce's 2(n − 1) steps read as separate pieces where they are at least a few pixels wide."""
    theme.set_scale(scale)
    model, _pb, tl = timeline(qtbot, size=(1280, 110), kind="all-reduce", n=n, algo="ring")
    tl.set_compact(True)
    settle()
    assert tl.group > 1
    steps = 2 * (n - 1)
    width = tl.plot.getViewBox().width()
    want = min(steps, int(width / 4))  # a step narrower than 4 px is not parted
    assert send_band_runs(tl, 0) >= 0.9 * want, (send_band_runs(tl, 0), want)
    assert send_band_runs(tl, 0, up=False) >= 0.9 * want


# -- a recorded lecture run ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lecture_run(tmp_path_factory):
    """The lecture's own module run under `python -m simcore record`: 24 collectives on 1, 2, 4 and 8 GPUs."""
    import shutil

    from simcore import __main__ as cli
    from test_record import LECTURE

    d = tmp_path_factory.mktemp("lecture")
    shutil.copy(LECTURE, d / "shard_lab.py")
    assert cli.main(["record", str(d / "shard_lab.py")]) == 0
    return d / "shard_lab.trace.json"


def open_lecture_run(qtbot, path, size=(1280, 720)):
    from classroom_fixtures import make_window

    w = make_window(qtbot, "all-gather", 8, size=size)
    assert w.classroom.open_scenario(str(path))
    settle(10)
    return w


def shown_names(tl):
    """The collectives' names the timeline shows: (left, right, text) of their painted ink, in the plot's pixels."""
    import pyqtgraph as pg

    out = []
    phase = {id(t) for t, _a, _b in tl._phase_texts}
    for it in tl.plot.getPlotItem().items:
        if isinstance(it, pg.TextItem) and it.isVisible() and it is not tl.note and id(it) not in phase:
            r = tl.plot.mapFromScene(it.textItem.mapRectToScene(it.textItem.boundingRect())).boundingRect()
            m = it.textItem.document().documentMargin()
            out.append((r.left() + m, r.right() - m, r.top(), r.bottom(), it.toPlainText()))
    return out


@pytest.mark.parametrize("scale", (1.0, 2.0))
def test_recorded_lecture_run_names_on_the_timeline_never_overlap(qtbot, lecture_run, scale):
    """Its 24 collectives, 16 of them in the first fifth of the run, had their names drawn over one
    another into unreadable text. A name shows where it is clear of the names beside it."""
    w = open_lecture_run(qtbot, lecture_run)
    theme.set_scale(scale)
    settle(10)
    names = shown_names(w.timeline)
    assert len(names) >= (4 if scale == 1.0 else 2), names  # (at 2× the dock is 330 px wide)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            apart = a[1] <= b[0] or b[1] <= a[0] or a[3] <= b[2] or b[3] <= a[2]
            assert apart, (a, b)


@pytest.mark.parametrize("scale", (1.0, 2.0))
def test_recorded_lecture_run_ring_draws_each_collectives_own_group(qtbot, lecture_run, scale):
    """The run's first collectives are on 4 GPUs, later ones on 8: the ring drew 8 boxes, half of them
    idle, for a collective on 4, and at 2× (radial bars) it crashed on the missing rows. Each
    collective is drawn with its own group: its devices laid out, named and painted, no others."""
    w = open_lecture_run(qtbot, lecture_run)
    theme.set_scale(scale)
    settle(10)
    ring, pb, run = w.ring_view, w.playback, w.model.run
    seen = set()
    for k in range(pb.n_steps):
        pb.seek_step(k + 1)
        settle(2)
        c = run.trace.collectives[run.index.display_collective(pb.t)]
        if c.n in seen:
            continue
        seen.add(c.n)
        lay = ring.layout_now
        assert len(ring.devices) == c.n, (c.id, c.n, len(ring.devices))
        assert len(lay.devices) == c.n
        named = [lab.text.split("\n")[0] for lab in ring.device_labels if lab.isVisible()]
        assert f"GPU {c.n}" not in named, named
        img = ring.viewport().grab().toImage()
        vp = ring.viewport().rect()
        for box in lay.devices:  # each box on screen
            r = ring.viewportTransform().mapRect(box.rect())
            assert vp.contains(r.center().toPoint())
        assert not img.isNull()
    assert {4, 8} <= seen, seen


# -- the deck's DGX scene: two DGX H100 nodes, 1 MiB, hier = NCCL's NVLS Tree ---------------------------
DGX = dict(kind="all-reduce", n=16, algo="hier", topology="dgx-h100", nbytes=2.0**20)


@pytest.mark.parametrize("lang", ("en", "zh"))
@pytest.mark.parametrize("width", (680, 1280))
def test_dgx_timeline_names_the_start_up_span(qtbot, qapp, lang, width):
    """94 % of the call is NVLS Tree's start-up, where nothing is sent: the timeline showed an empty
    band. The span is named with its length, read from the run (its first message's start)."""
    from app import i18n
    from app.words import fmt_time

    i18n.set_language(qapp, lang)
    model, _pb, tl = timeline(qtbot, size=(width, 200), **DGX)
    first = float(model.run.trace.column("t_start").min())
    assert first / model.run.trace.t_end > 0.9  # (the scene's premise)
    want = fmt_time(first)
    assert want == "66.8 µs"
    labels = [t for t, _a, _b in tl.startup_texts if t.isVisible()]
    assert len(labels) == 1
    txt = labels[0]
    assert want in txt.toPlainText()
    assert ("start-up" in txt.toPlainText()) if lang == "en" else ("启动" in txt.toPlainText())
    vb = tl.plot.getViewBox()
    r = tl.plot.mapFromScene(txt.textItem.mapRectToScene(txt.textItem.boundingRect())).boundingRect()
    x0 = tl.plot.mapFromScene(vb.mapViewToScene(QPointF(0, 0))).x()
    x1 = tl.plot.mapFromScene(vb.mapViewToScene(QPointF(first / tl.unit_s, 0))).x()
    y_rows = tl.plot.mapFromScene(vb.mapViewToScene(QPointF(0, -0.5))).y()
    m = txt.textItem.document().documentMargin()
    assert x0 <= r.left() + m and r.right() - m <= x1, (r, x0, x1)  # inside its own span
    assert r.top() >= y_rows - 2, (r, y_rows)  # over the rows, below the names above them


@pytest.mark.parametrize("lang", ("en", "zh"))
def test_dgx_ring_legend_says_which_numbers_timed_the_blocks(qtbot, qapp, lang):
    """The legend read "α 0 s across nodes; 646 GB/s" beside the fabric's "α 4 µs" and "NVLink 4 (450
    GB/s)". It names what the timing used (NCCL's NVLS Tree: its start-up, then its effective rates),
    why α is 0 per step, and that the picture's link figures are the hardware's."""
    from app import i18n
    from app.words import fmt_rate, fmt_time

    i18n.set_language(qapp, lang)
    model, _pb, view = ring_view(qtbot, size=(1280, 800), **DGX)
    legend = view.texts.legend
    topo = model.run.comm.topology.timed_as("all-reduce", "hier", 2.0**20)
    assert fmt_time(topo.base) in legend  # 66.8 µs
    assert fmt_rate(topo.inter.bw) in legend and fmt_rate(topo.intra.bw) in legend
    assert "NVLS Tree" in legend
    assert "α 0 s" not in legend
    if lang == "en":
        assert "start-up" in legend and "hardware" in legend
    else:
        assert "启动" in legend and "硬件" in legend
    lab = view.legend  # painted: every line of it inside the box the layout gave it
    box = view.layout_now.legend.rect
    drawn = lab.mapRectToScene(lab.boundingRect())
    assert drawn.height() <= box.height() + 0.5 and " ".join(lab.lines).replace("  ", " ").strip()


# -- a TPU slice: its name and its devices' word ---------------------------------------------------------
@pytest.mark.parametrize("lang", ("en", "zh"))
def test_tpu_slice_is_named_one_way_and_its_chips_are_chips(qtbot, qapp, lang):
    """A 4×4 slice of TPU v5e has no wraparound links: the title said "4×4 torus" while the fabric's line
    said "4×4 slice … without wraparound links", and the colour key and legend said "GPU" for its chips.
    Every text the ring paints names it as the fabric does and says chip."""
    from app import i18n

    i18n.set_language(qapp, lang)
    model, pb, view = ring_view(qtbot, size=(1100, 800), kind="all-reduce", n=16, algo="torus",
                                topology="tpu-v5e-16x16", nbytes=2.0**20)
    assert not any(model.run.comm.topology.wrap)
    pb.seek(pb.stops[2])
    settle()
    painted = [lab.text for lab in view._labels if lab.isVisible() and lab.text]
    slice_word, torus_word = ("4×4 slice", "4×4 torus") if lang == "en" else ("4×4 切片", "4×4 环面")
    assert any(slice_word in t for t in painted if t.startswith(view.texts.title[:5])), painted
    assert not any(torus_word in t for t in painted), painted
    assert slice_word in view.texts.fabric_name
    assert not any("GPU" in t for t in painted), [t for t in painted if "GPU" in t]
    from app.views.text.explain import step_where  # the explanation's step names the links as the picture does

    where = step_where(model.run.comm.topology, list(model.run.trace.messages)[:4])
    assert ("slice" in where and "torus" not in where) if lang == "en" else ("切片" in where and "环面" not in where)


# -- the decode step's timeline, overlapped --------------------------------------------------------------
@pytest.mark.parametrize("overlap", ("none", "async"))
def test_whole_step_comm_lanes_show_every_collective(qtbot, overlap):
    """Llama-3 70B on 2 H100s, the whole step in view: each of its 161 all-reduces is a few µs of a
    34 ms step, under a pixel wide, and most of them were not painted at all, so the comm lanes were
    nearly blank. Each collective's span is at least a pixel on screen."""
    from app.core import step_timeline_model as stm
    from app.views.timeline import step_timeline as st

    view = st.StepTimelineView(stm.StepSpec("llama3-70b", "h100", None, 2, 32, 8192), overlap, sync=True)
    qtbot.addWidget(view)
    view.resize(1280, 720)
    view.show()
    qtbot.waitExposed(view)
    settle()
    view.zoom_all()
    settle()
    cm = view.data.comms
    vb = view.plot.getViewBox()
    img = view.plot.grab().toImage()
    y0, y1 = view.lanes()["comm"]
    bg = QColor(theme.palette().background).name()

    def px(x, y):
        return view.plot.mapFromScene(vb.mapViewToScene(QPointF(x, y)))
    on0 = cm["span_device"] == 0
    starts, ends = cm["span_start"][on0], cm["span_end"][on0]
    assert len(starts) > 100
    y = px(0, (y0 + y1) / 2).y()
    missing = []
    for a, b in zip(starts.tolist(), ends.tolist()):
        xa, xb = px(a, 0).x(), px(b, 0).x()
        if not any(img.pixelColor(x, y).name() != bg for x in range(int(xa) - 1, int(xb) + 2)):
            missing.append(a)
    assert not missing, f"{len(missing)} of {len(starts)} collectives not painted"


# -- the decode tab, overlap ticked ------------------------------------------------------------------
@pytest.mark.parametrize("lang", ("en", "zh"))
def test_ticking_overlap_updates_the_title_and_the_readout(qtbot, qapp, lang):
    """Ticking "Overlap (async TP)" drew the overlapped curve but the title kept "best n = 8, 13.0 ms (no
    overlap)" and the readout's first words stayed the no-overlap step. Both now lead with the overlapped
    step (11.5 ms at n = 8, cost_model's t_step_overlap) and keep the plain one beside it."""
    from app import i18n
    from app.views.latency.latency_view import LatencyView
    from simcore import cost_model
    from simcore.hw_specs import CHIPS

    i18n.set_language(qapp, lang)
    model = ScenarioModel(Scenario())
    v = LatencyView(model, Playback(model))
    qtbot.addWidget(v)
    v.resize(1280, 720)
    v.show()
    qtbot.waitExposed(v)
    before = v.title1.text
    v.controls.overlap_check.setChecked(True)
    qtbot.waitUntil(lambda: "t_step_overlap" in v._sweep, timeout=5000)
    settle()
    s = v._sweep
    best, _fits = cost_model.best_tp_degree({**s, "t_step": s["t_step_overlap"]}, CHIPS[v._params["chip"]].hbm_bytes,
                                            v._valid)
    o_ms = f"{s['t_step_overlap'][best - 1] * 1e3:.1f}"
    plain = f"{s['t_step_no_overlap'][best - 1] * 1e3:.1f}"
    title = v.title1.text
    assert title != before
    assert f"n = {best}" in title and o_ms in title and plain in title, title
    assert title.index(o_ms) < title.index(plain), title  # the overlapped step first
    first = v.readout().split("\n")[0]
    assert f"n = {best}" in first and first.index(o_ms.rstrip("0").rstrip(".")) < first.index("8.39"), first
    # painted: the title item shows the whole text inside the plot's width
    r = v.title1.mapRectToScene(v.title1.boundingRect())
    assert r.width() <= v.latency_widget.width(), (r.width(), v.latency_widget.width())


# -- the Buffers tab on the TP forward ----------------------------------------------------------------
@pytest.mark.parametrize("lang", ("en", "zh"))
def test_buffers_tab_says_what_it_shows_for_the_tp_forward(qtbot, qapp, lang):
    """The TP forward's timeline shows its all-reduces, while this tab said the scenario "has no
    stand-alone collective". It now says the forward's collectives are there (on the ring and the
    timeline) and why their buffers are not: the forward does not keep their values."""
    from app import i18n
    from app.views.buffers.buffer_view import BufferView

    i18n.set_language(qapp, lang)
    model = ScenarioModel(Scenario(kind="tp-forward", n=4, algo="ring"))
    v = BufferView(model, Playback(model))
    qtbot.addWidget(v)
    v.resize(900, 600)
    v.show()
    qtbot.waitExposed(v)
    settle()
    k = len(model.run.trace.collectives)
    text = v.hint.text()
    assert v.hint.isVisible()
    assert "stand-alone" not in text and "独立" not in text, text
    assert str(k) in text, text
    assert ("timeline" in text) if lang == "en" else ("时间线" in text), text
    # a scenario with no collective keeps saying so
    model.update(kind="matmul-1")
    settle()
    if not model.run.trace.collectives:
        assert str(k) not in v.hint.text()


def test_step_cuts_are_where_a_message_follows_another_on_its_row():
    """step_cuts: a start that is also an end of the same row; a start after a gap, or an end on another
    row, is no boundary."""
    import numpy as np

    from app.views.timeline.timeline import step_cuts

    row = np.array([0, 0, 0, 1, 1])
    t0 = np.array([0.0, 1.0, 3.0, 1.0, 2.0])
    t1 = np.array([1.0, 2.0, 4.0, 2.0, 3.0])
    r, t = step_cuts(row, t0, t1, 1e-9)
    assert sorted(zip(r.tolist(), np.round(t, 6).tolist())) == [(0, 1.0), (1, 2.0)]


def test_recorded_lecture_run_looks_ahead_across_its_groups_at_2x(qtbot, lecture_run):
    """Before each step boundary the frame controller has the ring prepare the next step's bars and
    lanes (look_ahead). Across the change from 4 to 8 GPUs, at 2× text where the ring draws radial bars,
    that preparation must not use the 4-GPU view for the 8-GPU collective: every boundary drawn, with the
    collective's own group, and no error reaching the event loop."""
    import sys

    errors = []
    old = sys.excepthook
    sys.excepthook = lambda *a: errors.append(a)
    try:
        w = open_lecture_run(qtbot, lecture_run)
        theme.set_scale(2.0)
        settle(10)
        pb, run, ring = w.playback, w.model.run, w.ring_view
        stops = list(run.index.stops)
        c8 = next(c for c in run.trace.collectives if c.n == 8 and c.n_steps)
        k8 = next(k for k, t in enumerate(stops) if t > c8.t_start)
        assert ring.devices and run.trace.collectives[run.index.display_collective(stops[k8 - 2])].n != 8
        for k in range(max(k8 - 3, 1), min(k8 + 3, len(stops))):
            pb.seek((stops[k - 1] + stops[k]) / 2)  # between two boundaries: the next one is prepared
            settle(2)
            for _ in range(12):
                ring.look_ahead(pb.frames.current())
            pb.seek(stops[k])
            settle(2)
            c = run.trace.collectives[run.index.display_collective(pb.t)]
            assert len(ring.devices) == c.n, (k, c.n, len(ring.devices))
    finally:
        sys.excepthook = old
    assert not errors, errors[0]
