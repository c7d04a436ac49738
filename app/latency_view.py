"""
Decode latency against the number of devices n: the cost model's roofline, drawn.

Plot 1: t_math, t_mem, t_comm and t_step = max(t_math, t_mem) + t_comm of one decode step for
every integer n in 1..n_max (`simcore.cost_model.decode_sweep`, one vectorized call), log-log,
in ms. The band under t_step is coloured by the term that binds at that n; vertical markers show
where KV replication starts (n > G, the model's KV heads) and where communication overtakes
max(t_math, t_mem); the published decode times of `cost_model.REFERENCE_POINTS` appear when the
model and chip match theirs, beside our own estimate at their setting.
Plot 2: Pope et al.'s feed-forward communication per layer for 1D and 2D weight-stationary and
weight-gathered partitioning (`cost_model.pope_ffn_comm`).

The view is a function of its parameters (`params()`): a control change is debounced, then
`set_params` recomputes both sweeps and updates the items in place (created once). A value the
engine refuses keeps the previous curves and says why.
"""

from __future__ import annotations

from . import _compat  # noqa: F401  (PySide6 6.12 on Python < 3.12: see app/_compat.py)

import math
import sys
from contextlib import contextmanager

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401  (pg.exporters is not imported by pyqtgraph itself)
from PySide6.QtCore import QCoreApplication, QEvent, QRectF, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QPainterPath
from PySide6.QtWidgets import (QComboBox, QFileDialog, QFormLayout, QFrame, QHBoxLayout, QLabel, QMenu, QScrollArea,
                               QSizePolicy, QSpinBox, QSplitter, QStackedWidget, QTabWidget, QToolButton, QVBoxLayout,
                               QWidget)

from simcore import cost_model
from simcore.comm_sim import ALLREDUCE_ALGOS, LINKS
from simcore.hw_specs import CHIPS
from simcore.llm_math import MODELS

from . import theme
from .export import ExportError, atomic_write

TERMS = ("t_math", "t_mem", "t_comm", "t_step")
BOUNDS = ("math", "memory", "comm")
FFN_VARIANTS = ("1d", "2d", "gathered")
PLOTS = ("latency", "ffn")
BYTE_CHOICES = (("bf16 / fp16", 2.0), ("fp8 / int8", 1.0), ("int4", 0.5), ("fp32", 4.0))
N_MAX_CHOICES = (1024, 2048, 4096)
MAX_N = 4096
DEBOUNCE_MS = 60
COMPACT_BELOW_PX = 760  # view heights (at scale 1) below which the two plots go into tabs
# where a published point's label may go: (0 right / 1 left, 1 above / 0 below, distance in gaps), nearest first
LABEL_PLACES = [(a, b, lift) for lift in (1, 3, 6) for a, b in ((0, 1), (1, 1), (0, 0), (1, 0))]
SHORT_BELOW_PX = 1100  # plot widths below which legends and axis titles use their short names
DEFAULTS = {"model": "llama3-70b", "chip": "h100", "link": "", "batch": 32, "ctx": 8192, "w_bytes": 2.0,
            "kv_bytes": 2.0, "act_bytes": 2.0, "algo": "ring", "n_max": 1024}
# Okabe–Ito indices of theme.palette().device_colors: blue, orange, reddish purple
TERM_COLOR = {"t_math": 4, "t_mem": 0, "t_comm": 6}
BOUND_TERM = {"math": "t_math", "memory": "t_mem", "comm": "t_comm"}
FFN_COLOR = {"1d": 4, "2d": 2, "gathered": 5}
BAND_ALPHA = 60


# ---------------------------------------------------------------------------------------
# The arithmetic the view plots (no Qt): the engine's sweeps at the view's parameters
# ---------------------------------------------------------------------------------------
def check_params(p: dict) -> dict:
    """The parameters with defaults filled in; ValueError with one sentence if one is impossible."""
    unknown = set(p) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown latency parameter(s): {', '.join(sorted(unknown))}")
    p = {**DEFAULTS, **p}
    for key, table in (("model", MODELS), ("chip", CHIPS)):
        if p[key] not in table:
            raise ValueError(f"unknown {key} {p[key]!r}; choose one of {', '.join(table)}")
    if p["link"] and p["link"] not in LINKS:
        raise ValueError(f"unknown link {p['link']!r}; choose one of {', '.join(LINKS)}")
    if not (isinstance(p["n_max"], (int, np.integer)) and 2 <= p["n_max"] <= MAX_N):
        raise ValueError(f"the largest n must be a whole number from 2 to {MAX_N}, got {p['n_max']!r}")
    for key in ("batch", "ctx"):
        if not (isinstance(p[key], (int, np.integer)) and not isinstance(p[key], bool)):
            raise ValueError(f"{key} must be a whole number, got {p[key]!r}")
    return p


def link_of(p: dict):
    """The comm_sim.LinkSpec the sweep uses: the chosen one, or the chip's own."""
    return LINKS[p["link"] or CHIPS[p["chip"]].link]


def latency_sweep(p: dict) -> dict:
    """decode_sweep over every integer n in 1..n_max (arrays in seconds and bytes, see cost_model)."""
    p = check_params(p)
    ns = np.arange(1, p["n_max"] + 1)
    return cost_model.decode_sweep(MODELS[p["model"]], CHIPS[p["chip"]], link_of(p), ns, p["batch"], p["ctx"],
                                   w_bytes=p["w_bytes"], kv_bytes=p["kv_bytes"], act_bytes=p["act_bytes"],
                                   algo=p["algo"])


def ffn_sweep(p: dict) -> dict:
    """
    Pope et al.'s FFN communication per layer (seconds) for n = 1..n_max: tokens = batch (one new
    token per sequence), E = d_model, F = d_ff, the link's bandwidth, act_bytes per element.
    """
    p = check_params(p)
    m = MODELS[p["model"]]
    bw = link_of(p).bw
    ns = np.arange(1, p["n_max"] + 1)
    out = {"n": ns}
    for v in FFN_VARIANTS:
        t = [cost_model.pope_ffn_comm(v, p["batch"], m.d_model, m.d_ff, int(n), bw, p["act_bytes"]) for n in ns]
        out[v] = np.array([x[0] if isinstance(x, tuple) else x for x in t], dtype=float)
    return out


def first_n(ns, mask):
    """The first n where mask holds, or None."""
    idx = np.flatnonzero(mask)
    return int(ns[idx[0]]) if idx.size else None


def ranges_of(bound) -> list[tuple[int, int, str]]:
    """Contiguous runs of equal `bound`: [(first index, last index, bound), ...]."""
    b = np.asarray(bound)
    cuts = np.flatnonzero(b[1:] != b[:-1]) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts - 1, [b.size - 1]])
    return [(int(i), int(j), str(b[i])) for i, j in zip(starts, ends)]


def decades(values) -> tuple[float, float]:
    """A y range in log10 units covering the positive values, on whole decades."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    lo, hi = math.floor(math.log10(v.min())), math.ceil(math.log10(v.max()))
    return float(lo), float(max(hi, lo + 1))


# ---------------------------------------------------------------------------------------
# Graphics items
# ---------------------------------------------------------------------------------------
class BoundBand(pg.GraphicsObject):
    """
    The band under t_step, one colour per binding term: a polygon per run of equal `bound`,
    in view (log10) coordinates, down to `bottom`. Paints from cached paths.
    """

    def __init__(self):
        super().__init__()
        self.paths = {}  # bound -> QPainterPath
        self.brushes = {}
        self._rect = QRectF()

    def set_data(self, xl, yl, bound, bottom):
        paths = {b: QPainterPath() for b in BOUNDS}
        n = len(xl)
        for i, j, b in ranges_of(bound):
            j = min(j + 1, n - 1)  # reach the next sample so the runs meet
            poly = QPainterPath()
            poly.moveTo(xl[i], bottom)
            for k in range(i, j + 1):
                poly.lineTo(xl[k], yl[k])
            poly.lineTo(xl[j], bottom)
            poly.lineTo(xl[i], bottom)  # closed by hand: pyqtgraph's SVG export cannot parse a "Z"
            paths[b].addPath(poly)
        self.prepareGeometryChange()
        self.paths = paths
        self._rect = QRectF(float(xl[0]), float(bottom), float(xl[-1] - xl[0]), float(np.nanmax(yl) - bottom))
        self.update()

    def set_brushes(self, brushes):
        self.brushes = brushes
        self.update()

    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        return None  # the view's range is set explicitly; the band follows it

    def boundingRect(self):
        return self._rect

    def paint(self, p, *args):
        p.setPen(Qt.NoPen)
        for b, path in self.paths.items():
            if b in self.brushes:
                p.setBrush(self.brushes[b])
                p.drawPath(path)


def _plot_widget():
    w = pg.GraphicsLayoutWidget()
    w.ci.setContentsMargins(4, 4, 12, 4)
    legend = pg.LegendItem(colCount=4)
    w.addItem(legend, row=0, col=0)
    plot = w.addPlot(row=1, col=0)
    _shrinkable(plot.titleLabel)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.setLogMode(x=True, y=True)
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.getViewBox().setMouseEnabled(x=True, y=True)
    return w, legend, plot


def _shrinkable(label):
    """A pyqtgraph LabelItem (a plot title) whose text is clipped rather than widening the layout."""
    def update_min():
        r = label.itemRect()
        label.setMinimumWidth(0)
        label.setMinimumHeight(r.height())
        label._sizeHint = {Qt.MinimumSize: (0, r.height()), Qt.PreferredSize: (0, r.height()),
                           Qt.MaximumSize: (-1, -1), Qt.MinimumDescent: (0, 0)}
        label.updateGeometry()
    label.updateMin = update_min
    update_min()


def _legend_sample(pen=None, brush=None, symbol=None):
    """A PlotDataItem that is never added to a plot: only what the legend draws for it."""
    if symbol is not None:
        return pg.PlotDataItem([0], [0], pen=None, symbol=symbol, symbolBrush=brush, symbolPen=pen, symbolSize=16)
    if brush is not None:
        return pg.BarGraphItem(x=[0], height=[1], width=1, brush=brush, pen=pg.mkPen(None))
    return pg.PlotDataItem([0, 1], [0, 0], pen=pen)


# ---------------------------------------------------------------------------------------
# The view
# ---------------------------------------------------------------------------------------
class LatencyView(QWidget):
    """
    Decode latency against n with its own controls. `set_params(**kw)` changes them at once
    (the widgets go through a DEBOUNCE_MS timer); `curves()`, `ffn_curves()`, `markers()` and
    `summary()` say what is drawn; `export_png / export_svg / export_csv(path, which)` write
    plot `which` ("latency" or "ffn") and return True or False (with `last_error` set).
    """

    def __init__(self, model=None, playback=None, parent=None):
        super().__init__(parent)
        self.setObjectName("LatencyView")
        self.model, self.playback = model, playback
        p = dict(DEFAULTS)
        sc = getattr(model, "scenario", None)
        if sc is not None:  # the scenario's algorithm and link as starting values
            p["algo"] = sc.algo if sc.algo in ALLREDUCE_ALGOS else p["algo"]
            if sc.link in LINKS and sc.link != CHIPS[p["chip"]].link:
                p["link"] = sc.link
        self._params = check_params(p)
        self._sweep = None
        self._ffn = None
        self._ffn_key = None
        self._cross_n = None
        self._refs = []  # [(ref, our seconds)] drawn now
        self._syncing = False
        self.last_error = ""
        self.generation = 0  # recomputes done (tests and benchmarks watch it)
        self.retranslations = 0
        self.short_names = False
        self._legend_key = self._ffn_title = None

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

        self._build_controls()
        self._build_plots()
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self._scroll)
        lay.addLayout(self._right, 1)

        theme.notifier().changed.connect(self._on_theme_changed)
        self._apply_theme()
        self.retranslate_ui()
        self.set_params()

    # -- construction ---------------------------------------------------------------------------
    def _build_controls(self):
        self.preset = QComboBox(objectName="latencyPresetCombo")
        self.model_combo = QComboBox(objectName="latencyModelCombo")
        for key, m in MODELS.items():
            self.model_combo.addItem(m.name, key)
        self.chip_combo = QComboBox(objectName="latencyChipCombo")
        for key, c in CHIPS.items():
            self.chip_combo.addItem(c.name, key)
        self.link_combo = QComboBox(objectName="latencyLinkCombo")
        self.algo_combo = QComboBox(objectName="latencyAlgoCombo")
        self.batch_spin = QSpinBox(objectName="latencyBatchSpin")
        self.batch_spin.setRange(1, 1 << 16)
        self.ctx_spin = QSpinBox(objectName="latencyCtxSpin")
        self.ctx_spin.setRange(0, 1 << 21)
        self.ctx_spin.setSingleStep(1024)
        self.ctx_spin.setGroupSeparatorShown(True)
        self.byte_combos = {}
        for key in ("w_bytes", "kv_bytes", "act_bytes"):
            c = QComboBox(objectName=f"latency_{key}_combo")
            for name, b in BYTE_CHOICES:
                c.addItem(f"{name} ({b:g} B)", b)
            self.byte_combos[key] = c
        self.nmax_combo = QComboBox(objectName="latencyNMaxCombo")
        for v in N_MAX_CHOICES:
            self.nmax_combo.addItem(f"1 … {v}", v)
        self.export_button = QToolButton(objectName="latencyExportButton")
        self.export_button.setPopupMode(QToolButton.InstantPopup)
        self.export_menu = QMenu(self)
        self.export_button.setMenu(self.export_menu)

        rows = [self.preset, self.model_combo, self.chip_combo, self.link_combo, self.algo_combo, self.batch_spin,
                self.ctx_spin, *self.byte_combos.values(), self.nmax_combo]
        self._labels = [QLabel() for _ in rows]
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        form.setRowWrapPolicy(QFormLayout.WrapLongRows)
        for lab, w in zip(self._labels, rows):
            lab.setBuddy(w)
            form.addRow(lab, w)
            if isinstance(w, QComboBox):
                w.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
                w.setMinimumContentsLength(8)
        panel = QWidget(objectName="latencyControls")
        col = QVBoxLayout(panel)
        col.addLayout(form)
        col.addWidget(self.export_button)
        self.hint = QLabel(objectName="latencyHint")
        self.hint.setWordWrap(True)
        col.addWidget(self.hint)
        col.addStretch(1)
        self._scroll = QScrollArea()
        self._scroll.setWidget(panel)
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)

        self.preset.activated.connect(self._on_preset_activated)
        for c in (self.model_combo, self.chip_combo, self.link_combo, self.algo_combo, self.nmax_combo,
                  *self.byte_combos.values()):
            c.activated.connect(self._on_control_changed)
        for s in (self.batch_spin, self.ctx_spin):
            s.valueChanged.connect(self._on_control_changed)

    def _build_plots(self):
        self.summary_label = QLabel(objectName="latencySummary")
        self.summary_label.setWordWrap(True)
        self.error_label = QLabel(objectName="latencyError")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        self.readout_label = QLabel(objectName="latencyReadout")
        # two fixed lines that never wrap (the plots must not jump while the mouse moves) and never
        # widen the view: a narrow view clips them
        self.readout_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)

        self.latency_widget, self.legend1, self.plot1 = _plot_widget()
        self.ffn_widget, self.legend2, self.plot2 = _plot_widget()
        self.latency_widget.setObjectName("latencyPlot")
        self.ffn_widget.setObjectName("ffnPlot")

        self.band = BoundBand()
        self.band.setZValue(-10)
        self.plot1.addItem(self.band)
        self.hbm_region = pg.LinearRegionItem(movable=False)
        self.hbm_region.setZValue(-5)
        for ln in self.hbm_region.lines:
            ln.setPen(pg.mkPen(None))
        self.plot1.addItem(self.hbm_region)
        self.curve_items = {t: pg.PlotDataItem(name=t) for t in TERMS}
        for t in ("t_math", "t_mem", "t_comm", "t_step"):  # t_step drawn last: on top
            self.plot1.addItem(self.curve_items[t])
        self.kv_line = pg.InfiniteLine(angle=90, movable=False)
        self.comm_line = pg.InfiniteLine(angle=90, movable=False)
        self.kv_text = pg.TextItem(anchor=(1, 0))
        self.comm_text = pg.TextItem(anchor=(0, 0))
        self.published = pg.ScatterPlotItem(hoverable=True, tip=lambda x, y, data: data, size=22)
        self.estimates = pg.ScatterPlotItem(hoverable=True, tip=lambda x, y, data: data, size=18, symbol="x")
        self.ref_links = pg.PlotCurveItem()  # dotted segment from our estimate to the published figure
        self.ref_leaders = pg.PlotCurveItem()  # from a published point to its label when that sits away
        self.ref_texts = [pg.TextItem(anchor=(0, 1)) for _ in cost_model.REFERENCE_POINTS]
        self.best_dot = pg.ScatterPlotItem(hoverable=True, tip=lambda x, y, data: data, size=18, symbol="o")
        for it in (self.kv_line, self.comm_line, self.kv_text, self.comm_text, self.ref_links, self.ref_leaders,
                   self.published, self.estimates, self.best_dot, *self.ref_texts):
            self.plot1.addItem(it, ignoreBounds=True)
        self.cross1 = pg.InfiniteLine(angle=90, movable=False)
        self.cross2 = pg.InfiniteLine(angle=90, movable=False)
        self.cross1.setZValue(40)
        self.cross2.setZValue(40)
        for it in (self.kv_line, self.comm_line):
            it.setZValue(60)
        for it in (self.kv_text, self.comm_text, *self.ref_texts):
            it.setZValue(70)
        for it in (self.published, self.estimates, self.best_dot):
            it.setZValue(80)
        self.plot1.addItem(self.cross1, ignoreBounds=True)
        self.ffn_items = {v: pg.PlotDataItem(name=v) for v in FFN_VARIANTS}
        for it in self.ffn_items.values():
            self.plot2.addItem(it)
        self.plot2.addItem(self.cross2, ignoreBounds=True)
        self._crosshair_n = None
        self.plot1.getViewBox().sigResized.connect(self._on_viewbox_resized)
        self.plot2.getViewBox().sigResized.connect(self._on_viewbox_resized)
        self.latency_widget.installEventFilter(self)
        self.ffn_widget.installEventFilter(self)
        # one proxy per plot: rate-limited to 60 Hz, and each knows which plot the mouse is over
        self._proxies = [pg.SignalProxy(self.latency_widget.scene().sigMouseMoved, rateLimit=60,
                                        slot=self._on_latency_mouse_moved),
                         pg.SignalProxy(self.ffn_widget.scene().sigMouseMoved, rateLimit=60,
                                        slot=self._on_ffn_mouse_moved)]
        for proxy in self._proxies:
            proxy.setParent(self)  # its timer dies with the view, never fires into a deleted one

        # tall: both plots stacked in a splitter; short (a tab in the main window): one tab each
        self.splitter = QSplitter(Qt.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.plot_tabs = QTabWidget(objectName="latencyPlotTabs")
        self.plot_stack = QStackedWidget()
        self.plot_stack.addWidget(self.splitter)
        self.plot_stack.addWidget(self.plot_tabs)
        self.compact = None
        self._compact_pending = False
        self._set_compact(False)
        self._right = QVBoxLayout()
        self._right.addWidget(self.summary_label)
        self._right.addWidget(self.error_label)
        self._right.addWidget(self.readout_label)
        self._right.addWidget(self.plot_stack, 1)

    def _on_viewbox_resized(self, *_):
        for plot in (self.plot1, self.plot2):
            if getattr(plot, "_shard_ticks", None):
                self._set_ticks(plot, *plot._shard_ticks[:2])  # thin the x labels if they now crowd
        self._place_labels()

    def _set_compact(self, compact: bool):
        """Stack the two plots (tall view) or give each a tab (short view): a plot never gets squashed flat."""
        if compact == self.compact:
            return
        self.compact = compact
        if compact:
            self.plot_tabs.addTab(self.latency_widget, "")
            self.plot_tabs.addTab(self.ffn_widget, "")
            self.plot_stack.setCurrentWidget(self.plot_tabs)
        else:
            self.plot_tabs.clear()
            self.splitter.addWidget(self.latency_widget)
            self.splitter.addWidget(self.ffn_widget)
            self.splitter.setStretchFactor(0, 3)
            self.splitter.setStretchFactor(1, 2)
            self.plot_stack.setCurrentWidget(self.splitter)
        self._set_tab_texts()
        self._style_summary()

    def _style_summary(self):
        role = "body" if self.compact else "caption"
        self.summary_label.setStyleSheet(f"color: {theme.palette().text}; font-size: {round(theme.px(role))}px; "
                                         "font-weight: bold;")

    def _set_tab_texts(self):
        if self.compact:
            self.plot_tabs.setTabText(0, self.tr("Decode step"))
            self.plot_tabs.setTabText(1, self.tr("FFN communication (Pope et al.)"))

    def resizeEvent(self, e):
        # Switching moves both plot widgets to another parent. A resize can arrive in the middle
        # of Qt re-polishing every widget (a new app stylesheet when the text size changes), and
        # reparenting there crashed Qt; so the switch waits for the event loop.
        compact = e.size().height() < COMPACT_BELOW_PX * theme.scale()
        if compact != self.compact and not self._compact_pending:
            self._compact_pending = True
            QTimer.singleShot(0, self, self._apply_pending_compact)
        super().resizeEvent(e)

    def _apply_pending_compact(self):
        self._compact_pending = False
        self._set_compact(self.height() < COMPACT_BELOW_PX * theme.scale())

    def eventFilter(self, obj, e):
        if e.type() == QEvent.Resize and obj in (self.latency_widget, self.ffn_widget):
            short = self.latency_widget.width() < SHORT_BELOW_PX * theme.scale() or bool(self.compact)
            if short != self.short_names:
                self.short_names = short
                self._set_plot_texts()
                if self._sweep is not None:
                    self._draw_markers()
            self._fit_legends()
        return super().eventFilter(obj, e)

    def _fit_legends(self):
        """As many legend columns as the plot's width holds: a legend never widens a plot past its widget."""
        for w, lg in ((self.latency_widget, self.legend1), (self.ffn_widget, self.legend2)):
            if not lg.items:
                continue
            # the legend fills rows first: column j holds entries j, j + cols, ...; each as wide as its widest
            widths = [label.itemRect().width() + 40 * theme.scale() for _sample, label in lg.items]
            avail = w.width() - 30 * theme.scale()
            cols = next((c for c in (4, 3, 2) if sum(max(widths[j::c], default=0) for j in range(c)) <= avail), 1)
            if cols != lg.columnCount:
                lg.setColumnCount(cols)

    # -- texts ---------------------------------------------------------------------------------
    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def retranslate_ui(self):
        self.retranslations += 1
        self.setWindowTitle(self.tr("Decode latency"))
        for lab, text in zip(self._labels, (
                self.tr("Pre&set"), self.tr("&Model"), self.tr("&Chip"), self.tr("&Link"),
                self.tr("&All-reduce"), self.tr("&Batch"), self.tr("Conte&xt"), self.tr("&Weights"),
                self.tr("&KV cache"), self.tr("Acti&vations"), self.tr("&Devices n"))):
            lab.setText(text)
        self.export_button.setText(self.tr("&Export…"))
        self._set_tab_texts()
        self.export_menu.clear()
        for which, name in self._plot_names().items():
            for fmt, fn in (("PNG", self.export_png), ("SVG", self.export_svg), ("CSV", self.export_csv)):
                act = self.export_menu.addAction(self.tr("{plot} as {fmt}…").format(plot=name, fmt=fmt))
                act.triggered.connect(lambda _=False, w=which, f=fmt, fn=fn: self._export_dialog(w, f, fn))
        self.hint.setText(self.tr("A roofline: each chip does 1/n of the FLOPs and reads 1/n of the weights "
                                  "and KV cache; two all-reduces per layer come on top. A real step is slower."))
        self._sync_widgets()
        self._set_plot_texts()
        if self._sweep is not None:
            self._draw_ffn()  # its title is translated too (issue 12: it kept the old language)
            self._draw_markers()
            self._set_summary()
            self.set_crosshair(self._crosshair_n)

    def _plot_names(self):
        return {"latency": self.tr("Decode latency plot"), "ffn": self.tr("FFN communication plot")}

    def bound_name(self, b: str, short: bool = False) -> str:
        if short:
            return {"math": self.tr("compute"), "memory": self.tr("memory"), "comm": self.tr("comm")}[b]
        return {"math": self.tr("compute-bound"), "memory": self.tr("memory-bound"),
                "comm": self.tr("communication-bound")}[b]

    def _term_names(self):
        if self.short_names:
            return {t: t for t in TERMS}
        return {"t_math": self.tr("t_math (compute)"), "t_mem": self.tr("t_mem (HBM reads)"),
                "t_comm": self.tr("t_comm (all-reduces)"), "t_step": self.tr("t_step = max(t_math, t_mem) + t_comm")}

    def _ffn_names(self):
        return {"1d": self.tr("1D weight-stationary"), "2d": self.tr("2D weight-stationary"),
                "gathered": self.tr("weight-gathered")}

    def _set_plot_texts(self):
        self._legend_key = self._ffn_title = None  # texts or look changed: rebuild legends and titles
        style = {"font-size": f"{round(theme.px('caption'))}px", "color": theme.palette().text}
        self.plot1.setLabel("bottom", self.tr("devices n (log₂ scale)"), **style)
        self.plot1.setLabel("left", self.tr("ms per step") if self.short_names else
                            self.tr("time per decode step (ms)"), **style)
        self.plot1.setTitle(self.tr("Roofline: a lower bound on a real step") if self.short_names else
                            self.tr("One decode step. Roofline: a lower bound on a real step"),
                            color=theme.palette().text, size=f"{round(theme.px('caption'))}px", bold=True)
        self.plot2.setLabel("bottom", self.tr("devices n (log₂ scale)"), **style)
        self.plot2.setLabel("left", self.tr("per layer (µs)"), **style)
        self._set_legends()

    def _set_legends(self):
        """Rebuild both legends, only when what they list changed (a rebuild costs ~10 ms)."""
        pal = theme.palette()
        hbm = self._params["chip"] if self.hbm_region.isVisible() else None
        key = (pal.key, theme.scale(), self.short_names, self.tr("compute-bound"), hbm,
               tuple(sorted({ref.kind for ref, _ in self._refs})))
        if key == getattr(self, "_legend_key", None):
            return
        self._legend_key = key
        size = f"{round(theme.px('body'))}px"
        for lg in (self.legend1, self.legend2):
            lg.clear()
            lg.setLabelTextColor(pal.text)
            lg.setLabelTextSize(size)
        names = self._term_names()
        for t in ("t_step", "t_math", "t_mem", "t_comm"):
            self.legend1.addItem(self.curve_items[t], names[t])
        for b in BOUNDS:
            self.legend1.addItem(_legend_sample(brush=self._band_brush(b)), self.bound_name(b, self.short_names))
        if self.hbm_region.isVisible():
            hbm = _fmt_capacity(CHIPS[self._params["chip"]].hbm_bytes)
            self.legend1.addItem(_legend_sample(brush=self.hbm_region.brush),
                                 self.tr("> {hbm} HBM").format(hbm=hbm) if self.short_names else
                                 self.tr("does not fit in {hbm} HBM").format(hbm=hbm))
        if self._refs:
            kinds = {ref.kind for ref, _ in self._refs}
            short = self.short_names
            if "measurement" in kinds:
                self.legend1.addItem(_legend_sample(symbol="star", brush=pal.text, pen=pal.text),
                                     self.tr("measured") if short else self.tr("published measurement"))
            if "roofline" in kinds:
                self.legend1.addItem(_legend_sample(symbol="d", brush=pal.background, pen=pg.mkPen(pal.text, width=3)),
                                     self.tr("worked example") if short else
                                     self.tr("published worked example (a roofline)"))
            self.legend1.addItem(_legend_sample(symbol="x", brush=pal.text, pen=pal.text),
                                 self.tr("ours there") if short else self.tr("our roofline at that setting"))
        ffn = self._ffn_names()
        for v in FFN_VARIANTS:
            self.legend2.addItem(self.ffn_items[v], ffn[v])
        self._fit_legends()

    # -- look ------------------------------------------------------------------------------------
    def _on_theme_changed(self):
        self._apply_theme()
        self._set_plot_texts()
        if self._sweep is not None:
            self._draw()

    def _color(self, idx) -> QColor:
        return QColor(theme.palette().device_colors[idx])

    def _band_brush(self, b) -> QBrush:
        c = self._color(TERM_COLOR[BOUND_TERM[b]])
        c.setAlpha(BAND_ALPHA)
        return QBrush(c)

    def _apply_theme(self):
        pal = theme.palette()
        s = theme.scale()
        body = theme.font("body")
        self._scroll.widget().setFont(body)
        self._scroll.setFixedWidth(round(320 * s))
        self.hint.setStyleSheet(f"color: {pal.text_muted};")
        self._style_summary()
        self.error_label.setStyleSheet(f"color: {pal.error}; font-size: {round(theme.px('body'))}px; "
                                       "font-weight: bold;")
        self.readout_label.setStyleSheet(f"color: {pal.text}; font-size: {round(theme.px('body'))}px;")
        self.readout_label.setFont(theme.font("body", mono=False))
        tick_font = theme.font("body")
        for w, plot in ((self.latency_widget, self.plot1), (self.ffn_widget, self.plot2)):
            w.setBackground(pal.background)
            for name in ("left", "bottom"):
                ax = plot.getAxis(name)
                ax.setTickFont(tick_font)
                ax.setPen(pg.mkPen(pal.text, width=max(1.0, s)))
                ax.setTextPen(pg.mkPen(pal.text))
            plot.getAxis("left").setWidth(round(95 * s))
        wide, thin = 6.0 * s, 4.0 * s
        self.curve_items["t_step"].setPen(pg.mkPen(pal.text, width=wide))
        for t in ("t_math", "t_mem", "t_comm"):
            self.curve_items[t].setPen(pg.mkPen(self._color(TERM_COLOR[t]), width=thin))
        self.band.set_brushes({b: self._band_brush(b) for b in BOUNDS})
        grey = QColor(pal.text_muted)
        grey.setAlpha(90)  # a solid veil, not a hatch: SVG viewers draw Qt's pattern brushes as smudges
        self.hbm_region.setBrush(QBrush(grey))
        self.hbm_region.setHoverBrush(QBrush(grey))
        for ln, style in ((self.kv_line, Qt.DashLine), (self.comm_line, Qt.DashLine)):
            ln.setPen(pg.mkPen(pal.text, width=2.5 * s, style=style))
        cross = QColor(pal.playhead)
        cross.setAlpha(170)
        for ln in (self.cross1, self.cross2):
            ln.setPen(pg.mkPen(cross, width=2.0 * s))
        veil = QColor(pal.background)
        veil.setAlpha(200)  # labels stay readable over the band without hiding the curves under them
        for txt in (self.kv_text, self.comm_text, *self.ref_texts):
            txt.setFont(theme.font("body", bold=True))
            txt.setColor(pal.text)
            txt.fill = pg.mkBrush(veil)
        self.ref_links.setPen(pg.mkPen(pal.text, width=2 * s, style=Qt.DotLine))
        self.ref_leaders.setPen(pg.mkPen(pal.text, width=1.5 * s))
        for v in FFN_VARIANTS:
            style = Qt.SolidLine if v != "gathered" else Qt.DashLine
            self.ffn_items[v].setPen(pg.mkPen(self._color(FFN_COLOR[v]), width=thin, style=style))

    # -- parameters --------------------------------------------------------------------------------
    def params(self) -> dict:
        """The parameters the curves on screen were computed for."""
        return dict(self._params)

    def set_params(self, **kw) -> bool:
        """
        Change parameters (keys of DEFAULTS: model, chip, link ('' = the chip's own), batch, ctx,
        w_bytes, kv_bytes, act_bytes (bytes per element), algo, n_max) and recompute now.
        On a ValueError the previous curves stay and the message is shown; returns False.
        """
        self._timer.stop()
        try:
            p = check_params({**self._params, **kw})
            sweep = latency_sweep(p)
            key = (p["model"], p["batch"], p["act_bytes"], link_of(p).bw, p["n_max"])
            ffn = self._ffn if key == self._ffn_key else ffn_sweep(p)
        except ValueError as e:
            self._show_error(self.tr("Not plotted: {why} The previous curves stay.").format(why=_sentence(e)))
            self._sync_widgets()
            return False
        self._params, self._sweep, self._ffn, self._ffn_key = p, sweep, ffn, key
        self.generation += 1
        self._show_error("")
        self._sync_widgets()
        self._draw()
        return True

    def _show_error(self, msg: str):
        self.last_error = msg
        self.error_label.setText(msg)
        self.error_label.setVisible(bool(msg))

    def _read_widgets(self) -> dict:
        out = {"model": self.model_combo.currentData(), "chip": self.chip_combo.currentData(),
               "link": self.link_combo.currentData() or "", "algo": self.algo_combo.currentData(),
               "batch": self.batch_spin.value(), "ctx": self.ctx_spin.value(),
               "n_max": int(self.nmax_combo.currentData())}
        for key, c in self.byte_combos.items():
            out[key] = float(c.currentData())
        return out

    def _sync_widgets(self):
        p = self._params
        self._syncing = True
        try:
            _select(self.model_combo, p["model"])
            _select(self.chip_combo, p["chip"])
            own = LINKS[CHIPS[p["chip"]].link].name
            self.link_combo.clear()
            self.link_combo.addItem(self.tr("{link} (the chip's own)").format(link=own), "")
            for key, spec in LINKS.items():
                self.link_combo.addItem(spec.name, key)
            _select(self.link_combo, p["link"])
            self.algo_combo.clear()
            for key, name in self._algo_names().items():
                self.algo_combo.addItem(name, key)
            _select(self.algo_combo, p["algo"])
            self.batch_spin.setValue(p["batch"])
            self.ctx_spin.setValue(p["ctx"])
            for key, c in self.byte_combos.items():
                i = c.findData(float(p[key]))
                if i < 0:
                    c.addItem(f"{p[key]:g} B", float(p[key]))
                    i = c.count() - 1
                c.setCurrentIndex(i)
            i = self.nmax_combo.findData(p["n_max"])
            if i < 0:
                self.nmax_combo.addItem(f"1 … {p['n_max']}", p["n_max"])
                i = self.nmax_combo.count() - 1
            self.nmax_combo.setCurrentIndex(i)
            self.preset.clear()
            self.preset.addItem(self.tr("published setting…"), -1)
            for k, ref in enumerate(cost_model.REFERENCE_POINTS):
                self.preset.addItem(ref.name, k)
        finally:
            self._syncing = False

    def _algo_names(self):
        tr = QCoreApplication.translate  # the control dock's names and their translations, shared
        return {"ring": tr("ControlPanel", "ring"), "rd": tr("ControlPanel", "recursive doubling (rd)"),
                "innet": tr("ControlPanel", "in-network (innet, NVLS)"),
                "direct": tr("ControlPanel", "direct (one-shot)")}

    def _on_control_changed(self, *_):
        if not self._syncing:
            self._timer.start()  # debounced: a held arrow key or a scroll wheel recomputes once

    def _on_timer_timeout(self):
        self.set_params(**self._read_widgets())

    def _on_preset_activated(self, i):
        k = self.preset.itemData(i)
        if self._syncing or k is None or k < 0:
            return
        ref = cost_model.REFERENCE_POINTS[k]
        self.set_params(model=ref.model, chip=ref.chip, link="", batch=ref.batch, ctx=ref.ctx,
                        w_bytes=float(ref.w_bytes), kv_bytes=float(ref.kv_bytes),
                        n_max=max(self._params["n_max"], 1024))

    # -- drawing ------------------------------------------------------------------------------------
    def _draw(self):
        s = self._sweep
        n = s["n"].astype(float)
        ms = {t: s[t] * 1e3 for t in TERMS}
        for t in TERMS:
            self.curve_items[t].setData(n, ms[t])  # log-log mapping is pyqtgraph's (t_comm = 0 at n = 1 skipped)
        xl = np.log10(n)
        lo, hi = decades(np.concatenate([ms[t] for t in TERMS] + [self._ref_ms()]))
        y0, y1 = self._set_range(self.plot1, lo, hi)
        self._yrange = (y0, y1)
        self.band.set_data(xl, np.log10(ms["t_step"]), s["bound"], y0)
        self._draw_ffn()
        self._draw_markers()
        self._set_summary()
        best = self.best_n()
        pal = theme.palette()
        self.best_dot.setData([{"pos": (math.log10(best), math.log10(ms["t_step"][best - 1])),
                                "data": self.tr("best n = {n}: {ms:.1f} ms per step").format(
                                    n=best, ms=ms["t_step"][best - 1]),
                                "brush": pg.mkBrush(pal.background), "pen": pg.mkPen(pal.text, width=4)}])
        self.set_crosshair(best)

    def _draw_ffn(self):
        f = self._ffn
        n = f["n"].astype(float)
        us = {v: f[v] * 1e6 for v in FFN_VARIANTS}
        for v in FFN_VARIANTS:
            self.ffn_items[v].setData(n, us[v])
        self._set_range(self.plot2, *decades(np.concatenate(list(us.values()))))
        m, link = MODELS[self._params["model"]], link_of(self._params)
        title = self.tr("FFN communication per layer, Pope et al. 2022: tokens = batch = {b}, "
                        "E = {E}, F = {F}, {bw:g} GB/s").format(b=self._params["batch"], E=m.d_model, F=m.d_ff,
                                                                bw=link.bw / 1e9)
        if title != self._ffn_title:  # setting a title re-lays out the plot: only when it changed
            self._ffn_title = title
            self.plot2.setTitle(title, color=theme.palette().text, size=f"{round(theme.px('body'))}px")

    def _set_range(self, plot, lo, hi):
        """x from n = 1 to n_max, y over whole decades [lo, hi], padded so the end ticks keep their labels."""
        x1 = math.log10(self._params["n_max"])
        x0, x1 = -0.05 * x1, x1 * 1.05
        pad = max(0.12, 0.05 * (hi - lo))
        y0, y1 = lo - pad, hi + pad
        vb = plot.getViewBox()
        vb.setLimits(xMin=x0, xMax=x1, yMin=y0, yMax=y1)
        vb.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
        self._set_ticks(plot, lo, hi)
        return y0, y1

    def _set_ticks(self, plot, lo, hi):
        """Powers of two on x (every 2nd or 4th labelled when they would crowd), decades on y."""
        n_max = self._params["n_max"]
        vb = plot.getViewBox()
        x0, x1 = vb.viewRange()[0]
        px_per_octave = vb.width() / max(x1 - x0, 1e-9) * math.log10(2)
        stride = next((s for s in (1, 2, 4) if s * px_per_octave >= 52 * theme.scale()), 8)
        key = (lo, hi, n_max, stride)
        if getattr(plot, "_shard_ticks", None) == key:
            return  # unchanged: keep the axes' cached pictures
        plot._shard_ticks = key
        ks = range(int(math.log2(n_max)) + 1)
        labelled = [(math.log10(2 ** k), str(2 ** k)) for k in ks if k % stride == 0]
        plot.getAxis("bottom").setTicks([labelled, [(math.log10(2 ** k), "") for k in ks if k % stride]])
        major = [(float(d), _decade_label(d)) for d in range(int(lo), int(hi) + 1)]
        minor = [(d + math.log10(m), "") for d in range(int(lo), int(hi)) for m in (2, 5)]
        plot.getAxis("left").setTicks([major, minor])

    def _ref_ms(self):
        refs = self._matching_refs()
        return np.array([v for ref, ours in refs for v in (ref.seconds * 1e3, ours * 1e3)], dtype=float)

    def _matching_refs(self):
        p = self._params
        out = []
        for ref in cost_model.REFERENCE_POINTS:
            if ref.model == p["model"] and ref.chip == p["chip"] and ref.n <= p["n_max"]:
                out.append((ref, cost_model.reference_estimate(ref, algo=p["algo"])[0]))
        return out

    def _draw_markers(self):
        s, p = self._sweep, self._params
        pal = theme.palette()
        ns = s["n"]
        lo, hi = self._yrange
        top = hi - 0.02 * (hi - lo)
        G = MODELS[p["model"]].n_kv_heads
        self.kv_line.setVisible(G <= p["n_max"])
        self.kv_text.setVisible(G <= p["n_max"])
        self.kv_line.setValue(math.log10(G))
        self.kv_text.setText(self.tr("KV replicated: n > G = {G}").format(G=G) if self.short_names else
                             self.tr("KV replication starts: n > G = {G}").format(G=G))
        self.kv_text.setAnchor((1, 0) if G > 1 else (0, 0))
        self.kv_text.setPos(math.log10(G), top)
        self._cross_n = first_n(ns, s["t_comm"] > np.maximum(s["t_math"], s["t_mem"]))
        has = self._cross_n is not None
        self.comm_line.setVisible(has)
        self.comm_text.setVisible(has)
        if has:
            x = math.log10(self._cross_n)
            self.comm_line.setValue(x)
            self.comm_text.setText(self.tr("comm from n = {n}").format(n=self._cross_n) if self.short_names else
                                   self.tr("comm dominates from n = {n}").format(n=self._cross_n))
            self.comm_text.setPos(x, top)  # moved down a row by _place_labels if it meets the KV label
        fit = first_n(ns, s["mem_per_chip"] <= CHIPS[p["chip"]].hbm_bytes)
        self._fit_n = fit
        unfit_hi = math.log10(p["n_max"]) if fit is None else math.log10(math.sqrt(max(fit - 1, 1) * fit))
        self.hbm_region.setVisible(fit is None or fit > 1)
        self.hbm_region.setRegion((-1.0, unfit_hi))
        # published points: only beside the model and chip they were reported for
        self._refs = self._matching_refs()
        spots, est, link_x, link_y = [], [], [], []
        for txt in self.ref_texts:
            txt.setVisible(False)
        for k, (ref, ours) in enumerate(self._refs):
            x, y, ye = math.log10(ref.n), math.log10(ref.seconds * 1e3), math.log10(ours * 1e3)
            measured = ref.kind == "measurement"
            spots.append({"pos": (x, y), "data": self.ref_tooltip(ref, ours), "symbol": "star" if measured else "d",
                          "brush": pg.mkBrush(pal.text if measured else pal.background),
                          "pen": pg.mkPen(pal.text, width=3)})
            est.append({"pos": (x, ye), "data": self.estimate_tooltip(ref, ours),
                        "brush": pg.mkBrush(pal.text), "pen": pg.mkPen(pal.text, width=3)})
            link_x += [x, x]
            link_y += [ye, y]
            txt = self.ref_texts[k]
            txt.setText(self.tr("{who}: {ms:.0f} ms").format(who=_short_source(ref), ms=ref.seconds * 1e3))
            txt.setVisible(True)
        self._place_labels()
        self.published.setData(spots)
        self.estimates.setData(est)
        self.ref_links.setData(np.array(link_x), np.array(link_y), connect="pairs")
        self._set_legends()

    def _place_labels(self, *_):
        """
        Put each published point's label beside it: of a few places around the point, the one
        that stays inside the plot, clears the other labels and crosses the fewest curve samples.
        """
        if self._sweep is None:
            return
        vb = self.plot1.getViewBox()
        px = vb.viewPixelSize()
        (vx0, vx1), (vy0, vy1) = vb.viewRange()
        if not (px[0] > 0 and px[1] > 0):
            return
        top = vy1 - 0.02 * (vy1 - vy0)
        G = MODELS[self._params["model"]].n_kv_heads
        self.kv_text.setAnchor((1, 0) if G > 1 else (0, 0))  # left of its line unless that leaves the plot
        if _text_rect(self.kv_text, px)[0] < vx0:
            self.kv_text.setAnchor((0, 0))
        self.comm_text.setPos(self.comm_line.value(), top)
        if self.kv_text.isVisible() and self.comm_text.isVisible() and _overlap(_text_rect(self.kv_text, px),
                                                                                 _text_rect(self.comm_text, px)):
            self.comm_text.setPos(self.comm_line.value(), top - 1.2 * _text_rect(self.kv_text, px)[3] +
                                  1.2 * _text_rect(self.kv_text, px)[1])
        if not self._refs:
            self.ref_leaders.setData([], [])
            return
        # every curve resampled evenly across the screen, so a hit counts on-screen length, not samples
        gx = np.linspace(vx0, vx1, 800)
        lx = np.log10(self._sweep["n"])
        lines = []
        for t in TERMS:
            ok = self._sweep[t] > 0
            lines.append((gx, np.interp(gx, lx[ok], np.log10(self._sweep[t][ok] * 1e3), left=np.nan, right=np.nan)))
        taken = [_text_rect(t, px) for t in (self.kv_text, self.comm_text) if t.isVisible()]
        leaders_x, leaders_y = [], []
        walls = [ln.value() for ln in (self.kv_line, self.comm_line) if ln.isVisible()]
        gap_x, gap_y = 14 * px[0], 10 * px[1]
        for (ref, _ours), txt in zip(self._refs, self.ref_texts):
            x, y = math.log10(ref.n), math.log10(ref.seconds * 1e3)
            br = txt.textItem.boundingRect()
            w, h = br.width() * px[0], br.height() * px[1]
            best = None
            for k, (ax, ay, lift) in enumerate(LABEL_PLACES):
                x0 = x + gap_x if ax == 0 else x - gap_x - w
                y0 = y + lift * gap_y if ay == 1 else y - lift * gap_y - h
                rect = (x0, y0, x0 + w, y0 + h)
                cost = sum(int(np.count_nonzero((lx >= x0) & (lx <= x0 + w) & (ly >= y0) & (ly <= y0 + h)))
                           for lx, ly in lines)
                cost += 10_000 * (x0 < vx0 or x0 + w > vx1 or y0 < vy0 or y0 + h > vy1)
                cost += 1_000 * sum(_overlap(rect, r) for r in taken)
                cost += 200 * sum(x0 < v < x0 + w for v in walls)  # the KV and comm marker lines
                cost += k  # prefer the nearer, earlier places
                if best is None or cost < best[0]:
                    best = (cost, ax, ay, lift, rect)
            _cost, ax, ay, lift, rect = best
            txt.setAnchor((ax, ay))
            txt.setPos(rect[2] if ax else rect[0], rect[1] if ay else rect[3])
            taken.append(rect)
            if lift > 1:  # a label away from its point gets a leader line to the nearest corner
                leaders_x += [x, rect[2] if ax else rect[0]]
                leaders_y += [y, rect[1] if ay else rect[3]]
        self.ref_leaders.setData(np.array(leaders_x), np.array(leaders_y), connect="pairs")

    def ref_tooltip(self, ref, ours) -> str:
        kind = (self.tr("a measurement of a real system: our roofline should sit below it")
                if ref.kind == "measurement" else
                self.tr("a worked example (someone else's roofline arithmetic): ours should agree"))
        return self.tr("{name}\n{ms:.1f} ms per step at n = {n}, batch {b}, ctx {ctx}\n{kind}\nSource: {src}").format(
            name=ref.name, ms=ref.seconds * 1e3, n=ref.n, b=ref.batch, ctx=ref.ctx, kind=kind, src=ref.source)

    def estimate_tooltip(self, ref, ours) -> str:
        term = "t_mem" if ref.term == "t_mem" else "max(t_math, t_mem)"
        return self.tr("Our roofline at the published setting: {term} = {ms:.1f} ms\n(published: {pub:.1f} ms)").format(
            term=term, ms=ours * 1e3, pub=ref.seconds * 1e3)

    # -- summary and crosshair ------------------------------------------------------------------------
    def best_n(self):
        """The n with the smallest t_step among those whose weights + KV fit in HBM (all n if none fit)."""
        s = self._sweep
        fits = s["mem_per_chip"] <= CHIPS[self._params["chip"]].hbm_bytes
        t = np.where(fits, s["t_step"], np.inf) if fits.any() else s["t_step"]
        return int(s["n"][int(np.argmin(t))])

    def summary(self) -> str:
        return self.summary_label.text()

    def _set_summary(self):
        s, p = self._sweep, self._params
        best = self.best_n()
        first = ranges_of(s["bound"])[0]
        parts = [self.tr("{model} on {chip}, batch {b}, ctx {ctx}: best n = {n} → {ms:.1f} ms/token").format(
            model=MODELS[p["model"]].name, chip=CHIPS[p["chip"]].name, b=p["batch"], ctx=f"{p['ctx']:,}",
            n=best, ms=s["t_step"][best - 1] * 1e3)]
        if first[2] != "comm":
            parts.append(self.tr("{bound} up to n = {n}").format(bound=self.bound_name(first[2]), n=first[1] + 1))
        if self._cross_n is None:
            parts.append(self.tr("communication never dominates up to n = {n}").format(n=p["n_max"]))
        else:
            parts.append(self.tr("communication dominates from n = {n}").format(n=self._cross_n))
        if self._fit_n is None:
            parts.append(self.tr("does not fit in HBM on up to {n} chips").format(n=p["n_max"]))
        elif self._fit_n > 1:
            parts.append(self.tr("fits in HBM from n = {n}").format(n=self._fit_n))
        self.summary_label.setText(parts[0] + ("\n" + "; ".join(parts[1:]) if parts[1:] else ""))
        if not self._refs:
            names = ", ".join(f"{MODELS[r.model].name} · {CHIPS[r.chip].name}" for r in cost_model.REFERENCE_POINTS)
            self.hint.setText(self.tr("Published points appear for {names}: pick one under "
                                      "“Preset”.").format(names=names))
        else:
            self.hint.setText(self.tr("★ measured, ◆ worked example, ✕ our roofline at the published setting. "
                                      "Hover a marker for its source."))

    def _on_latency_mouse_moved(self, ev):
        self._follow_mouse(self.plot1, ev[0])

    def _on_ffn_mouse_moved(self, ev):
        self._follow_mouse(self.plot2, ev[0])

    def _follow_mouse(self, plot, pos):
        vb = plot.getViewBox()
        if vb.sceneBoundingRect().contains(pos):
            self.set_crosshair(round(10 ** vb.mapSceneToView(pos).x()))

    def set_crosshair(self, n):
        """Put the vertical line of both plots at n and show every term there."""
        if self._sweep is None or n is None:
            return
        n = int(min(max(n, 1), self._params["n_max"]))
        self._crosshair_n = n
        x = math.log10(n)
        self.cross1.setValue(x)
        self.cross2.setValue(x)
        s, f, i = self._sweep, self._ffn, n - 1
        self.readout_label.setText(self.tr(
            "n = {n}: t_math {a} · t_mem {m} · t_comm {c} · t_step {t} ms — {bound}\n"
            "FFN communication per layer: 1D {f1} · 2D {f2} · weight-gathered {fg} µs").format(
            n=n, a=_num(s["t_math"][i] * 1e3), m=_num(s["t_mem"][i] * 1e3), c=_num(s["t_comm"][i] * 1e3),
            t=_num(s["t_step"][i] * 1e3), bound=self.bound_name(str(s["bound"][i])),
            f1=_num(f["1d"][i] * 1e6), f2=_num(f["2d"][i] * 1e6), fg=_num(f["gathered"][i] * 1e6)))

    def readout(self) -> str:
        return self.readout_label.text()

    # -- for tests -----------------------------------------------------------------------------
    def curves(self) -> dict:
        """{term: (n, ms)} exactly as handed to the plot items (t_comm is 0 at n = 1: not drawn on a log axis)."""
        return {t: (it.xData, it.yData) for t, it in self.curve_items.items()}

    def ffn_curves(self) -> dict:
        """{variant: (n, µs)} of plot 2."""
        return {v: (it.xData, it.yData) for v, it in self.ffn_items.items()}

    def sweep(self) -> dict:
        """The engine's arrays behind the curves (seconds)."""
        return self._sweep

    def markers(self) -> dict:
        """
        What the vertical markers and published points say: {"kv": n, "comm": n or None,
        "hbm_fit": n or None, "best": n, "published": [{name, kind, n, seconds, ours, tooltip, x, y}]}
        where x, y are the drawn point's view coordinates (log10 n, log10 ms).
        """
        pts = self.published.points()
        pub = []
        for (ref, ours), pt in zip(self._refs, pts):
            pub.append({"name": ref.name, "kind": ref.kind, "n": ref.n, "seconds": ref.seconds, "ours": ours,
                        "tooltip": pt.data(), "x": pt.pos().x(), "y": pt.pos().y()})
        return {"kv": 10 ** self.kv_line.value() if self.kv_line.isVisible() else None,
                "kv_label": self.kv_text.toPlainText(),
                "comm": self._cross_n, "comm_x": 10 ** self.comm_line.value() if self._cross_n else None,
                "comm_label": self.comm_text.toPlainText() if self._cross_n else "",
                "hbm_fit": self._fit_n, "best": self.best_n(), "published": pub}

    # -- export ----------------------------------------------------------------------------------
    def _export_item(self, which):
        if which not in PLOTS:
            raise ValueError(f"unknown plot {which!r}; choose one of {', '.join(PLOTS)}")
        return (self.latency_widget if which == "latency" else self.ffn_widget).ci

    def _export(self, path, which, write) -> bool:
        try:
            atomic_write(path, write)
        except (ExportError, ValueError) as e:
            self._show_error(str(e))
            return False
        self._show_error("")
        return True

    def export_png(self, path, which="latency") -> bool:
        """Plot `which` ("latency" or "ffn"), legend included, as a PNG of its size on screen (pyqtgraph
        scales neither legend text nor cosmetic pens when asked for more pixels)."""
        def write(tmp):
            ex = pg.exporters.ImageExporter(self._export_item(which))
            ex.parameters()["background"] = QColor(theme.palette().background)
            img = ex.export(toBytes=True)
            if not img.save(tmp, "PNG"):
                raise OSError(0, "the image could not be encoded")
        return self._export(path, which, write)

    def export_svg(self, path, which="latency") -> bool:
        """Plot `which` as SVG, legend included (pyqtgraph's SVGExporter: lines and text stay vectors)."""
        def write(tmp):
            with _svg_closed_paths_fixed():
                ex = pg.exporters.SVGExporter(self._export_item(which))
                ex.parameters()["background"] = QColor(theme.palette().background)
                data = ex.export(toBytes=True)
            with open(tmp, "wb") as fh:
                fh.write(data)
        return self._export(path, which, write)

    def csv_text(self, which="latency") -> str:
        """The plotted data: latency → n,t_math_ms,t_mem_ms,t_comm_ms,t_step_ms,bound; ffn → n and µs per layer."""
        self._export_item(which)
        if which == "latency":
            cols = {f"{t}_ms": self.curve_items[t].yData for t in TERMS}
            n, extra = self.curve_items["t_step"].xData, {"bound": self._sweep["bound"]}
        else:
            cols = {f"ffn_{v}_us": self.ffn_items[v].yData for v in FFN_VARIANTS}
            n, extra = self.ffn_items["1d"].xData, {}
        lines = [",".join(["n", *cols, *extra])]
        for i in range(len(n)):
            row = [str(int(n[i]))] + [repr(float(c[i])) for c in cols.values()] + [str(e[i]) for e in extra.values()]
            lines.append(",".join(row))
        return "\n".join(lines) + "\n"

    def export_csv(self, path, which="latency") -> bool:
        def write(tmp):
            with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        try:
            text = self.csv_text(which)
        except ValueError as e:
            self._show_error(str(e))
            return False
        return self._export(path, which, write)

    def _export_dialog(self, which, fmt, fn):
        ext = fmt.lower()
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Export"), f"decode-{which}.{ext}",
                                              f"{fmt} (*.{ext})")
        if path:
            fn(path, which)


# ---------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------
@contextmanager
def _svg_closed_paths_fixed():
    """
    pyqtgraph 0.14's SVGExporter cannot parse the "Z" (close path) that Qt 6 writes for a
    rectangle (pyqtgraph#3495, fixed upstream after 0.14.0): during one export, drop the Z
    before its coordinate pass. The paths it hits already end on their first point.
    """
    mod = sys.modules["pyqtgraph.exporters.SVGExporter"]
    original = mod.correctCoordinates

    def correct(node, defs, item, options):
        for el in node.getElementsByTagName("path"):
            d = el.getAttribute("d")
            if "Z" in d or "z" in d:
                el.setAttribute("d", d.replace("Z", " ").replace("z", " ").strip())
        return original(node, defs, item, options)

    mod.correctCoordinates = correct
    try:
        yield
    finally:
        mod.correctCoordinates = original


def _select(combo: QComboBox, data):
    i = combo.findData(data)
    if i >= 0:
        combo.setCurrentIndex(i)


def _sentence(e: Exception) -> str:
    s = str(e).strip()
    s = s[:1].upper() + s[1:]
    return s if s.endswith(".") else s + "."


def _num(v: float) -> str:
    """Three significant figures, no exponent for the ranges the plot shows."""
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}" if abs(v) >= 0.001 else f"{v:.2e}"


def _decade_label(d: int) -> str:
    v = 10.0 ** d
    return f"{v:g}" if -4 <= d <= 5 else f"1e{d}"


def _text_rect(txt, px):
    """A TextItem's rectangle in view coordinates (x0, y0, x1, y1), from its anchor and size on screen."""
    br = txt.textItem.boundingRect()
    w, h = br.width() * px[0], br.height() * px[1]
    pos, (ax, ay) = txt.pos(), (txt.anchor.x(), txt.anchor.y())
    x0, y1 = pos.x() - ax * w, pos.y() + ay * h
    return (x0, y1 - h, x0 + w, y1)


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _fmt_capacity(b: float) -> str:
    """HBM as its datasheet states it: 32 GiB (TPU v4) or 80 GB."""
    gib = b / 2**30
    return f"{gib:g} GiB" if gib == int(gib) else f"{b / 1e9:g} GB"


def _short_source(ref) -> str:
    src = ref.source.split(",")[0].strip().strip('"')
    return src if len(src) <= 28 else src[:26] + "…"


__all__ = ["LatencyView", "latency_sweep", "ffn_sweep", "check_params", "ranges_of", "first_n", "DEFAULTS"]

