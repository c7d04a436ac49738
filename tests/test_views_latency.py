"""The decode-latency view plots the cost model's sweep exactly, puts its markers where the numbers say,
exports what it plots, survives bad input, and follows the language."""

import math
import os

import numpy as np
import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QTranslator
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from app import i18n, theme
from app.views.latency.latency_view import DEFAULTS, LatencyView
from app.state import Playback, Scenario, ScenarioModel
from app.core.latency_model import engine_algo
from simcore import cost_model
from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.links import LINKS
from simcore.hw_specs import CHIPS
from simcore.llm_math import MODELS

from closed_forms import megatron_degrees, reference_time

TERMS = ("t_math", "t_mem", "t_comm", "t_step")
V5E_INT8 = dict(model="llama3-70b", chip="tpu-v5e", batch=32, ctx=8192, w_bytes=1.0, kv_bytes=1.0)


def shown_view(qtbot):
    """A LatencyView on the default scenario, shown at 1600×900."""
    model = ScenarioModel(Scenario())
    v = LatencyView(model, Playback(model))
    qtbot.addWidget(v)
    v.resize(1600, 900)
    v.show()
    qtbot.waitExposed(v)
    return v


@pytest.fixture
def view(qtbot):
    return shown_view(qtbot)


def engine(**kw):
    """decode_sweep called directly, as a reader of cost_model would (on a machine: its topology, its chip)."""
    p = {**DEFAULTS, **kw}
    chip = CHIPS[p["chip"]]
    link = None if p["machine"] else LINKS[p["link"] or chip.link]
    ns = np.arange(1, p["n_max"] + 1)
    return cost_model.decode_sweep(MODELS[p["model"]], chip, link, ns, p["batch"], p["ctx"], w_bytes=p["w_bytes"],
                                   kv_bytes=p["kv_bytes"], act_bytes=p["act_bytes"],
                                   algo=engine_algo(p["algo"], p["machine"]), topology=p["machine"] or None)


# -- what the plot paints, read from its pyqtgraph items (the view keeps no accessors for tests) ----------
def drawn(item):
    """(n, value) a PlotDataItem paints: its display data (getData) are log10 of both, the plots being log-log."""
    x, y = item.getData()
    return 10 ** x, 10 ** y


def ffn_curves(view) -> dict:
    """{variant: (n, µs)} as plot 2 paints them."""
    return {v: drawn(it) for v, it in view.ffn_items.items()}


def published(view) -> list:
    """[(n, ms, tooltip)] of the published points as the scatter item paints them (view coordinates are log10)."""
    return [(10 ** pt.pos().x(), 10 ** pt.pos().y(), pt.data()) for pt in view.items.published.points()]


def line_n(line):
    """The n a vertical marker line stands at, None when it is hidden."""
    return 10 ** line.value() if line.isVisible() else None


def best_dot_n(view) -> int:
    (dot,) = view.items.best_dot.points()
    return round(10 ** dot.pos().x())


# -- the curves are the engine's arrays ---------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, V5E_INT8, dict(model="palm-540b", chip="tpu-v4", batch=1, ctx=2048, w_bytes=1.0,
                                                     n_max=4096),
                                dict(model="llama2-7b", chip="a100", link="pcie4", algo="rd", act_bytes=4.0)])
def test_plotted_curves_are_decode_sweeps_arrays(view, kw):
    assert view.set_params(**kw)
    want = engine(**kw)
    n_max = kw.get("n_max", 1024)
    for t, (x, y) in view.curves().items():
        np.testing.assert_array_equal(x, np.arange(1, n_max + 1))
        np.testing.assert_array_equal(y, want[t] * 1e3)
    assert len(view.curves()["t_step"][0]) >= 1024
    # and pyqtgraph draws them on log axes: its display data are log10 of ours
    dx, dy = view.items.curves["t_mem"].getData()
    np.testing.assert_allclose(10 ** dx, np.arange(1, n_max + 1), rtol=1e-12)
    np.testing.assert_allclose(10 ** dy, want["t_mem"] * 1e3, rtol=1e-12)


def test_doubling_the_batch_doubles_the_kv_part_of_t_mem(view):
    chip, model = CHIPS["h100"], MODELS["llama3-70b"]

    def kv_ms():
        n, t_mem = view.curves()["t_mem"]
        # every weight split n ways, except Wk / Wv: a chip holds whole KV groups, replicated once n > G
        wkv = 2 * model.n_layers * model.d_model * model.n_kv_heads * model.d_head * (np.maximum(1, n / model.n_kv_heads) - 1)
        weights_ms = (model.matmul_params() + wkv) * view.params()["w_bytes"] / n / chip.mem_bw * 1e3
        return t_mem - weights_ms

    view.set_params(batch=32)
    kv32 = kv_ms()
    view.set_params(batch=64)
    kv64 = kv_ms()
    assert kv32.min() > 0.1  # milliseconds: a real share of t_mem, not rounding noise
    np.testing.assert_allclose(kv64, 2 * kv32, rtol=1e-9)
    # and the weights part did not move
    n, t_mem = view.curves()["t_mem"]
    np.testing.assert_allclose(t_mem - kv64, (engine(batch=64)["t_mem"] * 1e3) - kv64, rtol=1e-12)


@pytest.mark.parametrize("algo", list(ALLREDUCE_ALGOS))
def test_the_algorithm_changes_t_comm_to_t_formulas(view, algo):
    view.set_params(algo=algo)
    n, t_comm = view.curves()["t_comm"]
    m, link = MODELS["llama3-70b"], LINKS["nvlink4"]
    S = 32 * m.d_model * 2.0
    want = 2 * m.n_layers * np.array([reference_time("all-reduce", algo, int(k), S, link.alpha, link.bw)
                                      for k in n]) * 1e3
    np.testing.assert_allclose(t_comm, want, rtol=1e-12)
    assert t_comm[0] == 0.0  # one device: no all-reduce


def test_algorithms_give_different_t_comm(view):
    view.set_params(algo="ring")
    ring = view.curves()["t_comm"][1].copy()
    view.set_params(algo="direct")
    assert not np.allclose(ring[1:], view.curves()["t_comm"][1][1:])


def test_ffn_curves_are_popes_formulas(view):
    view.set_params(**V5E_INT8)
    m, bw = MODELS["llama3-70b"], LINKS["tpu-v5e-ici"].bw
    curves = ffn_curves(view)
    for v in ("1d", "2d", "gathered"):
        n, us = curves[v]
        np.testing.assert_allclose(n, np.arange(1, 1025), rtol=1e-12)
        for k in (1, 7, 64, 1024):
            want = cost_model.pope_ffn_comm(v, 32, m.d_model, m.d_ff, k, bw, 2.0)
            want = want[0] if isinstance(want, tuple) else want
            assert us[k - 1] == pytest.approx(want * 1e6, rel=1e-12)


# -- markers -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ref", cost_model.REFERENCE_POINTS, ids=lambda r: r.model)
def test_published_markers_sit_at_their_figures_with_their_source(view, ref):
    view.set_params(model=ref.model, chip=ref.chip, batch=ref.batch, ctx=ref.ctx, w_bytes=float(ref.w_bytes),
                    kv_bytes=float(ref.kv_bytes), n_max=1024)
    # exactly one painted point sits at the published figure (n, ms), and its tooltip names its source
    pub = [tip for n, ms, tip in published(view) if n == pytest.approx(ref.n, rel=1e-12)
           and ms == pytest.approx(ref.seconds * 1e3, rel=1e-12)]
    assert len(pub) == 1
    tip = pub[0]
    assert ref.name in tip and ref.source in tip
    if ref.kind == "measurement":
        assert "measurement" in tip and "worked example" not in tip
    else:
        assert "worked example" in tip and "measurement" not in tip
    # our own estimate at that setting is drawn beside it
    ours = cost_model.reference_estimate(ref)[0]
    est = view.items.estimates.points()
    assert any(10 ** pt.pos().y() == pytest.approx(ours * 1e3, rel=1e-12) and
               10 ** pt.pos().x() == pytest.approx(ref.n) for pt in est)


def test_published_markers_only_beside_their_model_and_chip(view):
    view.set_params(model="llama3-70b", chip="h100")
    assert published(view) == []
    view.set_params(**V5E_INT8)
    assert [round(n) for n, _ms, _tip in published(view)] == [8]


@pytest.mark.parametrize("model", ["llama3-70b", "llama2-7b", "palm-540b"])
def test_kv_replication_marker_is_at_g(view, model):
    view.set_params(model=model, chip="h100")
    G = MODELS[model].n_kv_heads
    assert line_n(view.items.kv_line) == pytest.approx(G)
    assert view.items.kv_text.isVisible() and f"n > G = {G}" in view.items.kv_text.toPlainText()
    # replication really starts there in the engine's numbers
    s = engine(model=model, chip="h100")
    assert s["kv_replicas"][G - 1] == 1.0 and (G == 1 or s["kv_replicas"][G - 2] == 1.0)
    if G < 1024:
        assert s["kv_replicas"][G] > 1.0


@pytest.mark.parametrize("kw", [{}, V5E_INT8, dict(batch=512, ctx=1024), dict(algo="direct", link="nvlink5")])
def test_comm_crossover_marker_is_the_first_n_where_comm_wins(view, kw):
    view.set_params(**kw)
    s = engine(**kw)
    p = {**DEFAULTS, **kw}
    valid = megatron_degrees(MODELS[p["model"]], p["n_max"])
    over = [n for n in valid if s["t_comm"][n - 1] > max(s["t_math"][n - 1], s["t_mem"][n - 1])]
    # the line stands at the first tensor-parallel degree where communication wins, and says so
    assert line_n(view.items.comm_line) == pytest.approx(over[0], rel=1e-12)
    assert view.items.comm_text.isVisible() and f"n = {over[0]}" in view.items.comm_text.toPlainText()
    earlier = [n for n in valid if n < over[0]]
    assert all(s["t_comm"][n - 1] <= max(s["t_math"][n - 1], s["t_mem"][n - 1]) for n in earlier)


def test_summary_names_the_best_n_and_its_time(view):
    view.set_params(model="llama3-70b", chip="h100", batch=32, ctx=8192)
    s = engine()
    fitting = [n for n in megatron_degrees(MODELS["llama3-70b"], 1024) if s["mem_per_chip"][n - 1] <= 80e9]
    best = min(fitting, key=lambda n: s["t_step"][n - 1])  # H100: 80 GB HBM (NVIDIA H100 SXM datasheet)
    text = view.summary()
    assert view.title1.text.startswith("Llama-3 70B on H100")  # the headline is the plot's title
    assert f"best n = {best}" in text
    assert f"{s['t_step'][best - 1] * 1e3:.1f} ms" in text
    assert "Llama-3 70B" in text and "H100" in text
    assert view.best_n() == best
    (dot,) = view.items.best_dot.points()
    assert 10 ** dot.pos().x() == pytest.approx(best)
    assert 10 ** dot.pos().y() == pytest.approx(s["t_step"][best - 1] * 1e3)


def test_crosshair_reads_every_term_at_n(view):
    view.set_crosshair(16)
    s = engine()
    text = view.readout()
    assert text.startswith("n = 16:")
    assert view.items.cross.value() == pytest.approx(math.log10(16))
    assert f"{s['t_step'][15] * 1e3:.3g}" in text
    assert view.bound_name(str(s["bound"][15])) in text
    # both step curves named by what they are, each with the engine's value
    assert f"t_step, no overlap {s['t_step_no_overlap'][15] * 1e3:.3g} ms" in text
    assert f"lower bound max(t_math, t_mem, t_comm) {s['t_lower_bound'][15] * 1e3:.3g}" in text


def test_title_says_its_time_is_the_roofline_with_no_overlap(view):
    view.set_params(model="llama3-70b", chip="h100", batch=32, ctx=8192)
    s, best = engine(), view.best_n()
    title = view.title1.text
    assert f"best n = {best}" in title and "no overlap" in title
    assert f"{s['t_step_no_overlap'][best - 1] * 1e3:.1f} ms" in title
    assert "lower bound" not in title  # the sum is never called a bound


def test_mouse_over_the_plot_moves_the_crosshair(view, qtbot):
    vb = view.plot1.getViewBox()
    scene_pt = vb.mapViewToScene(pg_point(math.log10(64), sum(vb.viewRange()[1]) / 2))
    widget_pt = view.latency_widget.mapFromScene(scene_pt)
    qtbot.mouseMove(view.latency_widget.viewport(), widget_pt)
    qtbot.waitUntil(lambda: view.readout().startswith("n = 64:"), timeout=2000)


def pg_point(x, y):
    from PySide6.QtCore import QPointF

    return QPointF(x, y)


# -- controls ------------------------------------------------------------------------------------------
def test_a_burst_of_control_changes_recomputes_once(view, qtbot):
    g = view.generation
    for b in (33, 40, 64):
        view.batch_spin.setValue(b)
    assert view.generation == g  # debounced: nothing yet
    qtbot.waitUntil(lambda: view.generation > g, timeout=2000)
    assert view.generation == g + 1
    assert view.params()["batch"] == 64
    np.testing.assert_array_equal(view.curves()["t_step"][1], engine(batch=64)["t_step"] * 1e3)


def test_choosing_a_model_in_the_combo_replots(view, qtbot):
    g = view.generation
    view.model_combo.setCurrentIndex(view.model_combo.findData("llama3-8b"))
    view.model_combo.activated.emit(view.model_combo.currentIndex())
    qtbot.waitUntil(lambda: view.generation > g, timeout=2000)
    np.testing.assert_array_equal(view.curves()["t_mem"][1], engine(model="llama3-8b")["t_mem"] * 1e3)


def test_the_link_follows_the_chip_unless_chosen(view):
    view.set_params(chip="tpu-v5e", link="")
    n, t_comm = view.curves()["t_comm"]
    np.testing.assert_array_equal(t_comm, engine(chip="tpu-v5e")["t_comm"] * 1e3)
    view.set_params(link="nvlink5")
    np.testing.assert_array_equal(view.curves()["t_comm"][1], engine(chip="tpu-v5e", link="nvlink5")["t_comm"] * 1e3)


@pytest.mark.parametrize("bad", [dict(batch=0), dict(ctx=-1), dict(w_bytes=0.0), dict(n_max=0),
                                 dict(n_max=100_000), dict(model="gpt-9"), dict(algo="carrier-pigeon"),
                                 dict(batch=2.5)])
def test_bad_input_keeps_the_curves_and_says_why(view, bad):
    before = {t: (x.copy(), y.copy()) for t, (x, y) in view.curves().items()}
    params = view.params()
    assert view.set_params(**bad) is False
    assert view.error_label.isVisible()
    assert view.last_error.startswith("Not plotted")
    assert view.params() == params
    for t, (x, y) in view.curves().items():
        np.testing.assert_array_equal(x, before[t][0])
        np.testing.assert_array_equal(y, before[t][1])
    assert view.batch_spin.value() == params["batch"]
    # the next good change clears the message
    assert view.set_params(batch=16)
    assert not view.error_label.isVisible()


# -- export --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["latency", "ffn"])
def test_csv_export_round_trips_the_plotted_data(view, tmp_path, which):
    view.set_params(**V5E_INT8)
    path = tmp_path / f"{which}.csv"
    assert view.export_csv(str(path), which)
    header = path.read_text().splitlines()[0].split(",")
    items = view.items.curves if which == "latency" else view.ffn_items
    curves = {name: drawn(it) for name, it in items.items()}  # what the plot paints
    cols = len(curves) + 1
    data = np.loadtxt(path, delimiter=",", skiprows=1, usecols=range(cols))
    for j, (name, (x, y)) in enumerate(curves.items(), start=1):
        np.testing.assert_allclose(data[:, 0], x, rtol=1e-12)
        ok = np.isfinite(y)  # t_comm's 0 at n = 1 has no place on a log axis: written, not painted
        np.testing.assert_allclose(data[ok, j], y[ok], rtol=1e-12)
        assert np.all(data[~ok, j] == 0) and np.count_nonzero(~ok) <= 1
        assert header[j].startswith(("t_" if which == "latency" else "ffn_") + name.removeprefix("t_"))
    if which == "latency":
        assert header[:5] == ["n", "t_math_ms", "t_mem_ms", "t_comm_ms", "t_step_ms"]
        bounds = np.loadtxt(path, delimiter=",", skiprows=1, usecols=[5], dtype=str)
        np.testing.assert_array_equal(bounds, engine(**V5E_INT8)["bound"])


def test_png_and_svg_export_write_real_files(view, tmp_path):
    for which in ("latency", "ffn"):
        png, svg = tmp_path / f"{which}.png", tmp_path / f"{which}.svg"
        assert view.export_png(str(png), which)
        img = QImage(str(png))
        assert not img.isNull() and img.width() > 400
        assert view.export_svg(str(svg), which)
        text = svg.read_text(encoding="utf-8")
        assert "<svg" in text and "</svg>" in text
    assert sorted(os.listdir(tmp_path)) == ["ffn.png", "ffn.svg", "latency.png", "latency.svg"]  # no temp files


@pytest.mark.parametrize("fn", ["export_csv", "export_png", "export_svg"])
def test_an_unwritable_path_returns_false_and_writes_nothing(view, tmp_path, fn):
    missing = tmp_path / "no-such-folder" / "out.file"
    assert getattr(view, fn)(str(missing), "latency") is False
    assert "no-such-folder" in view.last_error and view.error_label.isVisible()
    assert not missing.parent.exists()
    folder = tmp_path / "a-folder"
    folder.mkdir()
    assert getattr(view, fn)(str(folder), "latency") is False  # a folder is not a file
    assert os.listdir(folder) == [] and os.listdir(tmp_path) == ["a-folder"]


def test_an_unknown_plot_name_is_refused(view, tmp_path):
    assert view.export_csv(str(tmp_path / "x.csv"), "pie") is False
    assert "pie" in view.last_error
    assert os.listdir(tmp_path) == []


# -- look and language ---------------------------------------------------------------------------------
def test_theme_scale_restyles_the_lines(view):
    w0 = view.items.curves["t_step"].opts["pen"].widthF()
    try:
        theme.set_scale(2.0)
        assert view.items.curves["t_step"].opts["pen"].widthF() == pytest.approx(2 * w0)
    finally:
        theme.set_scale(1.0)
    assert view.items.curves["t_step"].opts["pen"].widthF() == pytest.approx(w0)


class FakeChinese(QTranslator):
    """Translates a few of the view's strings, whether or not the shipped .qm has them yet."""

    WORDS = {"devices n (log₂ scale)": "设备数 n（log₂ 刻度）", "time per decode step (ms)": "每个解码步的时间（ms）",
             "ms per step": "每步毫秒", "Decode latency": "解码延迟"}

    def translate(self, context, source, disambiguation=None, n=-1):
        return self.WORDS.get(source, source) if context == "LatencyView" else source

    def isEmpty(self):
        return False  # Qt only announces a LanguageChange for a translator with something in it


@pytest.fixture
def english_afterwards():
    yield
    i18n.set_language(QApplication.instance(), "en")


def test_language_change_retranslates_the_axis_titles(view, english_afterwards):
    bottom, left = view.plot1.getAxis("bottom"), view.plot1.getAxis("left")
    assert bottom.labelText == "devices n (log₂ scale)"
    tr = FakeChinese()
    QCoreApplication.installTranslator(tr)
    try:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LanguageChange)
        assert bottom.labelText == "设备数 n（log₂ 刻度）"
        assert left.labelText in ("每个解码步的时间（ms）", "每步毫秒")  # the long form when it fits the height
        assert view.windowTitle() == "解码延迟"
        assert view.plot2.getAxis("bottom").labelText == "设备数 n（log₂ 刻度）"
    finally:
        QCoreApplication.removeTranslator(tr)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LanguageChange)
    assert bottom.labelText == "devices n (log₂ scale)"
    assert view.windowTitle() == "Decode latency"


def test_the_shipped_chinese_switch_retranslates_and_keeps_the_curves(view, english_afterwards):
    before = view.curves()["t_step"][1].copy()
    count = view.retranslations
    i18n.set_language(QApplication.instance(), "zh")
    assert view.retranslations > count
    zh_title = view.windowTitle()
    assert zh_title == QCoreApplication.translate("LatencyView", "Decode latency")
    assert view.plot1.getAxis("bottom").labelText == QCoreApplication.translate("LatencyView",
                                                                                "devices n (log₂ scale)")
    i18n.set_language(QApplication.instance(), "en")
    assert view.windowTitle() == "Decode latency"
    assert view.plot1.getAxis("bottom").labelText == "devices n (log₂ scale)"
    np.testing.assert_array_equal(view.curves()["t_step"][1], before)


def test_a_short_view_puts_the_plots_in_tabs_and_back(view, qtbot):
    assert not view.compact
    view.resize(1100, 560)
    qtbot.waitUntil(lambda: view.compact, timeout=2000)
    assert view.plot_tabs.count() == 2
    view.resize(1600, 900)
    qtbot.waitUntil(lambda: not view.compact, timeout=2000)
    assert view.splitter.count() == 2 and view.plot_tabs.count() == 0
    # and it paints what a view built at this size paints: both plots shown again at 3 : 2 (the tab widget
    # had left them hidden, the view blank), with their long names (they had kept the tabs' short ones)
    fresh = shown_view(qtbot)
    QApplication.processEvents()
    assert view.latency_widget.height() > 150 and view.ffn_widget.height() > 150
    assert np.array_equal(pixels(view.grab().toImage()), pixels(fresh.grab().toImage()))


def test_the_y_title_is_long_only_where_the_plot_is_tall_enough(view, qtbot):
    """The long y title ("time per decode step (ms)") never overhangs the plot: it was chosen for the plot's
    height before the legend took its rows, and stayed."""
    ax, vb = view.plot1.getAxis("left"), view.plot1.getViewBox()
    seen = set()
    for size in ((1600, 900), (1600, 1300), (1600, 900)):
        view.resize(*size)
        QApplication.processEvents()
        long = ax.labelText == "time per decode step (ms)"
        seen.add(long)
        assert not long or ax.label.boundingRect().width() <= vb.height() + 1, (size, vb.height())
    assert seen == {True, False}  # both forms occur: the test looked at a choice


def pixels(img: QImage) -> np.ndarray:
    img = img.convertToFormat(QImage.Format_RGB32)
    return np.frombuffer(img.constBits(), np.uint8, img.sizeInBytes()).reshape(img.height(), -1).copy()


def test_changing_the_text_size_with_the_latency_tab_open_does_not_crash(tmp_path):
    # Found by a 1500-step monkey walk: zoom in, zoom out, open the latency tab, zoom in. The tab
    # was short enough to switch its plots into tabs, and did so inside the resize Qt sends while
    # it re-polishes every widget for the new stylesheet; reparenting there crashed Qt (SIGSEGV).
    # A subprocess, so a crash is a failure here and not the end of the test run.
    import subprocess
    import sys

    code = (
        "import os, sys\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication(['t'])\n"
        "from app.classroom.presentation import apply_look\n"
        "from app.main_window import MainWindow\n"
        "from app.state import Playback, Scenario, ScenarioModel\n"
        "apply_look(app)\n"
        "model = ScenarioModel(Scenario(kind='all-gather', n=8))\n"
        "win = MainWindow(model, Playback(model))\n"
        "win.resize(1600, 900); win.show(); app.processEvents()\n"
        "p = win.classroom.presentation\n"
        "p.act_zoom_in.trigger(); p.act_zoom_out.trigger()\n"
        "win.select_tab('latency'); app.processEvents()\n"
        "for a in (p.act_zoom_in, p.act_zoom_in, p.act_zoom_out, p.act_zoom_reset):\n"
        "    a.trigger(); app.processEvents()\n"
        "from app import theme\n"
        "from app.views.latency.latency_view import COMPACT_BELOW_PX\n"
        "lv = win.view('latency')\n"
        "assert lv.compact == (lv.height() < COMPACT_BELOW_PX * theme.scale())  # settled, both ways\n"
        "print('ok', lv.compact)\n"
        "os._exit(0)\n")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SHARD_LAB_SETTINGS=str(tmp_path / "s.ini"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("ok"), (proc.returncode, proc.stderr[-2000:])


# -- tensor-parallel degrees ---------------------------------------------------------------------------
@pytest.mark.parametrize("batch, want", [(1, 64), (32, 16)])
def test_405b_at_a_million_tokens_picks_a_tensor_parallel_degree(view, batch, want):
    # the lecture-hall report: "best n = 53" at batch 1, which no TP split can use (128 heads, 8 KV heads)
    view.set_params(model="llama3.1-405b", chip="h100", batch=batch, ctx=1_000_000)
    s = engine(model="llama3.1-405b", batch=batch, ctx=1_000_000)
    valid = megatron_degrees(MODELS["llama3.1-405b"], 1024)
    fitting = [n for n in valid if s["mem_per_chip"][n - 1] <= 80e9] or valid  # H100 SXM: 80 GB
    best = min(fitting, key=lambda n: s["t_step"][n - 1])
    assert best == want == view.best_n()
    assert f"best n = {best}" in view.title1.text
    (dot,) = view.items.best_dot.points()
    assert round(10 ** dot.pos().x()) == best


@pytest.mark.parametrize("kw", [{}, dict(model="llama3.1-405b", ctx=1_000_000),
                                dict(model="palm-540b", chip="h100", batch=1, ctx=2048)])
def test_rings_are_drawn_at_the_tensor_parallel_degrees_only(view, qtbot, kw):
    view.set_params(**kw)
    p = {**DEFAULTS, **kw}
    valid = megatron_degrees(MODELS[p["model"]], p["n_max"])
    x, y = view.items.valid_dots.getData()  # what the scatter item paints, in view (log10) coordinates
    np.testing.assert_allclose(10 ** x, valid, rtol=1e-12)
    np.testing.assert_allclose(10 ** y, engine(**kw)["t_step"][np.array(valid) - 1] * 1e3, rtol=1e-12)
    # past the largest degree the curves are veiled, and a label says why
    assert view.items.no_tp.isVisible() and f"n > {valid[-1]}" in view.items.no_tp_text.toPlainText()
    assert 10 ** view.items.no_tp.span[0] == pytest.approx(valid[-1] + 0.5)

    # and on screen: a ring's centre shows the background, the bare t_step line between degrees is ink
    qtbot.wait(50)
    img = view.latency_widget.grab().toImage()
    vb = view.plot1.getViewBox()
    s = engine(**kw)

    def pixel(n):
        from PySide6.QtCore import QPointF

        pt = view.latency_widget.mapFromScene(vb.mapViewToScene(QPointF(math.log10(n),
                                                                         math.log10(s["t_step"][n - 1] * 1e3))))
        return img.pixelColor(pt.x() + 3, pt.y()).lightness()  # beside the centre: x grid lines cross it

    bg, ink = 255, 17  # theme's default palette: background #FFFFFF, text #111111
    best = view.best_n()
    for n in valid:
        if n != best:
            assert abs(pixel(n) - bg) < 40, n
    between = [n for n in range(2, valid[-1]) if n not in valid and min(abs(math.log2(n / v)) for v in valid) > 0.3]
    assert between
    for n in between:
        assert abs(pixel(n) - ink) < 60, n


def test_csv_has_fits_in_hbm_and_tp_degree_columns(view, tmp_path):
    import csv

    view.set_params(model="llama3-70b", chip="h100", batch=32, ctx=8192)
    path = tmp_path / "latency.csv"
    assert view.export_csv(str(path), "latency")
    rows = list(csv.DictReader(path.open()))
    assert list(rows[0])[5:] == ["bound", "fits_hbm", "tp_degree"]
    s = engine()
    fits = s["mem_per_chip"] <= 80e9  # H100 SXM: 80 GB of HBM3 (NVIDIA's datasheet)
    valid = set(megatron_degrees(MODELS["llama3-70b"], 1024))
    assert [r["fits_hbm"] for r in rows] == ["true" if f else "false" for f in fits]
    assert [r["tp_degree"] for r in rows] == ["true" if int(r["n"]) in valid else "false" for r in rows]
    assert rows[0]["fits_hbm"] == "false" and rows[7]["fits_hbm"] == "true"  # 70B at bf16 needs > 1 chip


def test_exported_png_carries_the_headline(view, tmp_path):
    view.set_params(model="llama3.1-405b", chip="h100", batch=32, ctx=1_000_000)
    path = tmp_path / "latency.png"
    assert view.export_png(str(path), "latency")
    img = QImage(str(path))
    ci = view.latency_widget.ci
    assert (img.width(), img.height()) == (round(ci.boundingRect().width()), round(ci.boundingRect().height()))
    # the title's rectangle, in the exported picture, holds ink as wide as the headline's text
    r = view.title1.mapRectToItem(ci, view.title1.boundingRect()).toAlignedRect()
    assert r.top() >= 0 and r.bottom() < img.height()
    cols = [x for x in range(r.left(), min(r.right(), img.width() - 1))
            if any(img.pixelColor(x, y).lightness() < 100 for y in range(r.top(), r.bottom()))]
    assert cols, "no text in the title's rectangle"
    headline = view.title1.text
    assert "Llama-3.1 405B" in headline and "H100" in headline and "batch 32" in headline
    assert "1,000,000" in headline and f"best n = {view.best_n()}" in headline
    doc = view.title1.item.document()  # the laid-out headline: its text's width, without the margins
    width = doc.idealWidth() - 2 * doc.documentMargin()
    assert cols[-1] - cols[0] == pytest.approx(width, rel=0.05)


def _svg_points(el):
    import re

    pts = []
    for d in (el.get("d"), el.get("points")):
        if d:
            nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", d)]
            pts += list(zip(nums[0::2], nums[1::2]))
    return pts


@pytest.mark.parametrize("kw", [dict(model="llama3.1-405b", ctx=1_000_000), {}])
def test_svg_veils_and_band_stay_inside_the_plot_area(view, tmp_path, kw):
    import xml.etree.ElementTree as ET

    view.set_params(**kw)
    path = tmp_path / "latency.svg"
    assert view.export_svg(str(path), "latency")
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    clip = next(c for c in root.iter(ns + "clipPath") if c.get("id", "").startswith("ViewBox"))
    cx, cy = zip(*_svg_points(next(clip.iter(ns + "path"))))
    x0, x1, y0, y1 = min(cx), max(cx), min(cy), max(cy)
    checked = 0
    for g in root.iter(ns + "g"):
        if g.get("id", "").startswith(("XSpan", "BoundBand", "LinearRegionItem")):
            for el in g.iter():
                assert el.tag != ns + "rect", "a rectangle would carry an untransformed size"
                for x, y in _svg_points(el):
                    assert x0 - 1.5 <= x <= x1 + 1.5 and y0 - 1.5 <= y <= y1 + 1.5, (g.get("id"), x, y)
                    checked += 1
    assert checked > 100  # the band's outline and both veils were there to check
    text = path.read_text(encoding="utf-8")
    assert f"best n = {view.best_n()}" in text  # the headline travels with the SVG


# -- on a real machine: the topology's t_comm, its node boundary, its groups --------------------
def test_on_dgx_h100_t_comm_at_16_is_the_hierarchical_all_reduce(view):
    assert view.set_params(machine="dgx-h100")
    assert view.params()["chip"] == "h100"  # the machine names its chip
    p = view.params()
    m = MODELS[p["model"]]
    ns = np.arange(1, p["n_max"] + 1)
    algo = engine_algo(p["algo"], "dgx-h100")  # the menu's first entry on a machine: its choice (None)
    want = cost_model.decode_sweep(m, CHIPS["h100"], None, ns, p["batch"], p["ctx"], algo=algo, topology="dgx-h100")
    x, y = view.curves()["t_comm"]
    i = int(np.flatnonzero(x == 16)[0])
    assert y[i] == pytest.approx(want["t_comm"][15] * 1e3, rel=1e-9)
    S = p["batch"] * m.d_model * p["act_bytes"]  # one all-reduce's message: batch tokens x d_model activations
    assert y[i] == pytest.approx(2 * m.n_layers * cost_model.comm_time("dgx-h100", 16, S, algo) * 1e3, rel=1e-9)
    # 16 GPUs span two nodes: slower per all-reduce than 8 on one NVSwitch
    j = int(np.flatnonzero(x == 8)[0])
    assert y[i] > y[j]
    # only groups the machine offers are plotted for t_comm and t_step: no n = 12 (not 1, 2, 4, 8 or whole nodes)
    assert 12 not in set(x.tolist()) and 24 in set(x.tolist())
    assert np.all(np.isfinite(y))


def test_the_node_boundary_line_sits_at_8_gpus_on_dgx_and_72_on_nvl72(view):
    view.set_params(machine="dgx-h100")
    line, text = view.items.node_line, view.items.node_text
    assert line.isVisible() and line.value() == pytest.approx(math.log10(8), abs=1e-12)
    assert "8 GPUs per node" in text.toPlainText() and "InfiniBand" in text.toPlainText()
    assert text.isVisible()
    view.set_params(machine="gb200-nvl72")
    assert view.params()["chip"] == "gb200"
    assert line.value() == pytest.approx(math.log10(72), abs=1e-12)
    assert "72 GPUs per node" in text.toPlainText()
    view.set_params(machine="tpu-v5e-16x16")  # a torus has no node boundary
    assert not line.isVisible() and not text.isVisible()
    view.set_params(machine="")
    assert not line.isVisible()


@pytest.mark.parametrize("machine", ["dgx-h100", "gb200-nvl72", "tpu-v4-4x4x4"])
def test_rings_only_at_degrees_valid_on_both_model_and_machine(view, machine):
    from simcore.topology_presets import PRESETS

    assert view.set_params(machine=machine)
    p = view.params()
    offered = set(PRESETS[machine].valid_degrees(p["n_max"]))
    both = [n for n in megatron_degrees(MODELS[p["model"]], p["n_max"]) if n in offered]
    x, _y = view.items.valid_dots.getData()
    np.testing.assert_allclose(10 ** x, both, rtol=1e-12)
    # a model degree the machine lacks carries no ring (DGX: 16 is two nodes, but 32 heads / 64 → 64 is 8 nodes;
    # 3 is no group of either)
    rings = set(round(10 ** v) for v in x)
    lacking = [n for n in megatron_degrees(MODELS[p["model"]], p["n_max"]) if n not in offered]
    assert not rings & set(lacking)
    assert view.best_n() in both and best_dot_n(view) in both
    assert f"best n = {view.best_n()}" in view.summary()
    assert PRESETS[machine].name in view.summary()


def test_switching_back_to_one_switch_restores_the_old_curve(view):
    before = {t: (x.copy(), y.copy()) for t, (x, y) in view.curves().items()}
    best = view.best_n()
    view.set_params(machine="dgx-h100")
    assert not np.array_equal(view.curves()["t_comm"][0], before["t_comm"][0])
    view.set_params(machine="")
    for t, (x, y) in view.curves().items():
        np.testing.assert_array_equal(x, before[t][0])
        np.testing.assert_array_equal(y, before[t][1])
    assert view.best_n() == best and not view.items.node_line.isVisible()


def test_the_machine_combo_sets_the_machine_and_the_export_carries_it(view, qtbot, tmp_path):
    from simcore.topology_presets import PRESETS

    combo = view.controls.machine_combo
    assert combo.itemData(0) == "" and [combo.itemText(i) for i in range(1, combo.count())] == \
        [pr.name for pr in PRESETS.values()]
    view.set_params(chip="a100")
    combo.setCurrentIndex(combo.findData("gb200-nvl72"))
    combo.activated.emit(combo.currentIndex())
    qtbot.waitUntil(lambda: view.params()["machine"] == "gb200-nvl72", timeout=2000)
    assert view.params()["chip"] == "gb200" and view.chip_combo.currentData() == "gb200"
    assert not view.chip_combo.isEnabled()
    path = tmp_path / "nvl72.csv"
    assert view.export_csv(str(path), "latency")
    rows = np.genfromtxt(path, delimiter=",", skip_header=1, usecols=range(5))
    s = engine(**view.params())  # the engine on NVL72's topology, with the view's parameters
    np.testing.assert_allclose(rows[:, 4], s["t_step"] * 1e3, rtol=1e-12)  # NaN where NVL72 has no such group
    assert np.isnan(rows[72, 4]) and np.isfinite(rows[71, 4])  # 73 chips: no group; 72: one NVLink domain
    assert view.export_png(str(tmp_path / "p.png")) and view.export_svg(str(tmp_path / "p.svg"))
    assert "node boundary" in (tmp_path / "p.svg").read_text(encoding="utf-8")


def test_an_unknown_machine_is_refused_with_its_name(view):
    before = view.curves()["t_step"][1].copy()
    assert not view.set_params(machine="dgx-z9")
    assert "dgx-z9" in view.last_error and "dgx-h100" in view.last_error
    np.testing.assert_array_equal(view.curves()["t_step"][1], before)


def test_on_a_machine_the_readout_says_what_its_all_reduce_runs(view):
    """The decode plot defaults to the machine's own choice and says what it picked:
    the algorithm menu's default entry is the machine's choice; at the crosshair n the readout names
    the algorithm and NCCL protocol topology.choose picks for one all-reduce, with its reason."""
    from simcore.topology_presets import PRESETS

    assert view.set_params(machine="dgx-h100")
    p = view.params()
    assert p["algo"] == "ring" and view.controls.algo_combo.currentText().startswith("machine's choice")
    S = p["batch"] * MODELS[p["model"]].d_model * p["act_bytes"]
    for n in (8, 16):
        view.set_crosshair(n)
        algo, proto, why = PRESETS["dgx-h100"].topology(n).choose("all-reduce", S)
        assert f"all-reduce at n = {n} (" in view.readout()
        assert f"{algo}, NCCL {proto} — the machine's choice" in view.readout()
        assert view.readout_label.toolTip() == why  # the engine's reason, in full
    view.set_params(machine="")  # one switch: the ring, and nothing about a machine's pick
    view.set_crosshair(8)
    assert "machine's choice" not in view.readout() and "all-reduce at n" not in view.readout()
    assert view.controls.algo_combo.currentText() == "ring"
