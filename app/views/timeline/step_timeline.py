"""
One decode step of a real model, opened up: every GPU's ops and collectives on one clock.

`simcore.cost_model.simulate_decode_step` runs the tensor-parallel layer schedule on shapes and
returns a `Comm` whose trace holds every op (`trace.computes`: device, label, FLOPs, HBM bytes,
start, end) and every message and collective. This view draws that trace:

    GPU d, compute lane   one bar per op, coloured by kind (QKV, attention, out proj, gate/up,
                          down, norms, LM head), labelled "QKV 41 µs" when the bar is wide enough
    GPU d, comm lane      the device's part of each collective as a tinted span, its send-port
                          busy time in the upper half and its receive-port busy time below

The x axis is time (seconds, shown in ms / µs / ns by pyqtgraph's SI prefix for the visible
span); the mouse pans and zooms x only. The headline puts the simulated step beside the roofline with no
overlap (`cost_model.tp_decode_step`'s t_step_no_overlap, max(t_math, t_mem) + t_comm) and the lower
bound max(t_math, t_mem, t_comm), each named, and says why they differ when they do. The overlap choice (none / async) re-simulates the step and updates the items in place.

Drawing 80 layers × ~10 ops × 8 GPUs: all bars of one colour are one drawRects call
(`LaneBars`), and labels are painted by one item (`LaneLabels`) for the visible bars
only, after measuring them against their bar's width on screen (level of detail).

Entry points: step_timeline_dialog's `open_step_timeline(parent, model, chip, link, n, ...)`
(a click on the decode-latency plot), `open_from_params(parent, latency_params, n)` and
`attach_to_latency_view(view)`; and this module's command line (main),
`python -m app.views.timeline.step_timeline --model llama3-70b --n 8 --screenshot step.png`.

The parts: step_timeline_model (Qt-free: StepSpec, StepData, reading the trace),
step_timeline_items (the graphics items, colours and bar texts), step_timeline_texts (headline,
legend, the roofline comparison, tooltips), step_timeline_dialog (the window, opening it from the
latency plot); this module holds the view and its command line.
"""

from __future__ import annotations

from ... import _compat  # noqa: F401  (PySide6 6.12 on Python < 3.12: see app/_compat.py)

import argparse
import os
import re
import sys

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFontMetricsF
from PySide6.QtWidgets import (QApplication, QComboBox, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QSpinBox,
                               QToolTip, QVBoxLayout, QWidget)

from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.hw_specs import CHIPS
from simcore.links import LINKS
from simcore.llm_math import MODELS

from . import step_timeline_texts as texts
from ... import theme
from ...i18n import set_language
from .step_timeline_items import (COMM_COLOR, COMM_LANE, COMPUTE_LANE, KIND_COLOR, RECV_COLOR, RECV_LANE, SEND_LANE,
                                  SPAN_ALPHA, Lane, LaneBars, LaneLabels, kind_names, kind_short_names, op_texts)
from ...core.step_timeline_model import KINDS, OVERLAPS, StepData, StepSpec, chunk_runs
from ...worker import Worker
from ...words import fmt_time

DENSE_ABOVE_N = 16  # more GPUs than this: rows too thin for gaps and separate send / receive bars


def _tr(text):
    return QCoreApplication.translate("StepTimelineView", text)


# ---------------------------------------------------------------------------------------
# The view
# ---------------------------------------------------------------------------------------
class StepTimelineView(QWidget):
    """
    One step's timeline for a StepSpec. `set_overlap('none' | 'async')` re-simulates (once per
    overlap: results are kept) and updates the items in place; `zoom_to_layer(i)` / `zoom_all()`
    set the visible time range. The simulation runs on the app's worker (app/worker.py), one
    channel per overlap; a result for the overlap no longer chosen is kept, not shown, and one for
    the step shown before `set_spec` is dropped. Llama-3 70B took 0.5–1.1 s at n = 8 and 50–66 s
    at n = 64 (1.3 million messages) on the shared 2-core build machine: too long for the event
    loop. `sync=True` simulates on the caller's thread (tests, screenshots); None: the worker's default.
    `simulate` replaces the engine's simulate_decode_step (same signature).
    """

    overlap_changed = Signal(str)
    step_ready = Signal()  # a simulated step is on screen

    def __init__(self, spec: StepSpec, overlap="none", simulate=None, sync=None, parent=None):
        super().__init__(parent)
        self.setObjectName("StepTimelineView")
        self.spec = spec
        self._simulate = simulate
        self.worker = Worker(sync, self)  # one channel per overlap
        self.worker.done.connect(self._on_worker_done)
        self.worker.failed.connect(self._on_worker_failed)
        self.overlap = overlap
        self.data = None  # the StepData on screen
        self._cache = {}  # overlap -> StepData
        self.error = ""
        self.roof = spec.roofline()
        self.simulations = 0  # steps simulated (tests watch it)
        self._stride_key = None

        self.headline = QLabel(objectName="stepHeadline")
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.RichText)
        self.why = QLabel(objectName="stepWhy")
        self.why.setWordWrap(True)
        self.overlap_label = QLabel()
        self.overlap_combo = QComboBox(objectName="stepOverlapCombo")
        for o in OVERLAPS:
            self.overlap_combo.addItem("", o)
        self.overlap_label.setBuddy(self.overlap_combo)
        self.layer_label = QLabel()
        self.layer_spin = QSpinBox(objectName="stepLayerSpin")
        self.layer_spin.setRange(0, spec.model.n_layers - 1)
        self.layer_spin.setValue(spec.model.n_layers // 2)
        self.layer_label.setBuddy(self.layer_spin)
        self.layer_button = QPushButton(objectName="stepLayerButton")
        self.all_button = QPushButton(objectName="stepAllButton")
        self.legend = QLabel(objectName="stepLegend")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.RichText)
        self.hint = QLabel(objectName="stepHint")
        self.hint.setWordWrap(True)

        self.axis = pg.AxisItem("bottom")
        self.layer_axis = pg.AxisItem("top")  # where each layer starts on GPU 0
        self.plot = pg.PlotWidget(axisItems={"bottom": self.axis, "top": self.layer_axis})
        self.plot.showAxis("top")
        self.layer_axis.enableAutoSIPrefix(False)  # layer numbers, not seconds
        self._layer_key = None
        self.layer_starts = np.zeros(0)
        self.plot.setObjectName("stepPlot")
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        vb = self.plot.getViewBox()
        vb.setMouseEnabled(x=True, y=False)
        vb.invertY(True)
        self.bars = LaneBars()
        self.labels = LaneLabels()
        self.labels.setZValue(10)
        self.plot.addItem(self.bars)
        self.plot.addItem(self.labels)
        vb.sigResized.connect(self._on_viewbox_resized)
        vb.sigXRangeChanged.connect(self._on_viewbox_x_range_changed)
        self._hover = pg.SignalProxy(self.plot.scene().sigMouseMoved, rateLimit=30, slot=self._on_plot_mouse_moved)
        self._hover.setParent(self)  # its timer dies with the view

        controls = QHBoxLayout()
        for w in (self.overlap_label, self.overlap_combo, self.layer_label, self.layer_spin, self.layer_button,
                  self.all_button):
            controls.addWidget(w)
        controls.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 8, 8, 8)
        lay.addWidget(self.headline)
        lay.addWidget(self.why)
        lay.addLayout(controls)
        lay.addWidget(self.legend)
        lay.addWidget(self.plot, 1)
        lay.addWidget(self.hint)
        for lab in (self.headline, self.why, self.legend, self.hint):
            lab.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)

        self.overlap_combo.activated.connect(self._on_overlap_combo_activated)
        self.layer_button.clicked.connect(self._on_layer_button_clicked)
        self.all_button.clicked.connect(self.zoom_all)
        theme.notifier().changed.connect(self._on_theme_changed)
        self._apply_theme()
        self.retranslate_ui()
        self.set_overlap(overlap, force=True)

    # -- simulation -----------------------------------------------------------------------------
    def set_spec(self, spec: StepSpec, overlap: str | None = None):
        """Show another step (another n, model or setting) in the same items; zooms out to the whole step."""
        self.spec = spec
        self.roof = spec.roofline()
        self.worker.drop()  # a step still simulating for the previous spec is dropped
        self._cache, self.data = {}, None
        self.layer_spin.setRange(0, spec.model.n_layers - 1)
        self.layer_spin.setValue(spec.model.n_layers // 2)
        self.bars.set_groups({}, QRectF())
        self.labels.set_lanes([], QRectF())
        self.retranslate_ui()
        self.set_overlap(overlap or self.overlap, force=True)

    def set_overlap(self, overlap: str, force: bool = False):
        """Show the step simulated with this overlap ('none' or 'async'); the items are updated in place."""
        if overlap not in OVERLAPS:
            raise ValueError(f"unknown overlap {overlap!r}; choose one of {', '.join(OVERLAPS)}")
        if overlap == self.overlap and self.data is not None and not force:
            return
        self.overlap = overlap
        self.overlap_combo.setCurrentIndex(OVERLAPS.index(overlap))
        if overlap in self._cache:
            self._show(self._cache[overlap])
        else:
            self._set_busy()
            if not self.worker.busy(overlap):  # one simulation per overlap, however often it is chosen
                self.worker.submit(StepData, self.spec, overlap, self._simulate, channel=overlap)

    @property
    def sync(self) -> bool:
        """True: a step is simulated before set_overlap / set_spec return."""
        return self.worker.sync

    @sync.setter
    def sync(self, on: bool):
        self.worker.sync = bool(on)

    def _on_worker_done(self, overlap, data):
        self.simulations += 1
        self._cache[overlap] = data
        if overlap == self.overlap:  # else the user chose the other overlap meanwhile: kept for their return
            self._show(data)

    def _on_worker_failed(self, overlap, message):
        if overlap == self.overlap:
            self._show_error(message)

    def _show_error(self, message: str):
        self.error = message
        msg = self.tr("Not simulated: {why}").format(why=self.error)
        self.headline.setText(f"<b>{texts.esc(msg)}</b>")
        self.why.setText("")

    def _show(self, data: StepData):
        first = self.data is None
        self._cache[data.overlap] = data
        self.data = data
        self._draw()
        self._set_headline()
        if first:
            self.zoom_all()
        self.overlap_changed.emit(data.overlap)
        self.step_ready.emit()

    def total(self) -> float:
        """The simulated step on screen (seconds): comm.time of the engine's Comm."""
        return self.data.total

    @property
    def comm(self):
        return self.data.comm if self.data is not None else None

    @property
    def last_sim_seconds(self) -> float:
        return self.data.seconds if self.data is not None else 0.0

    # -- drawing --------------------------------------------------------------------------------
    def dense(self) -> bool:
        """Many thin rows: no gaps, and one comm bar per collective instead of send / receive halves."""
        return self.spec.n > DENSE_ABOVE_N

    def lanes(self) -> dict:
        """y extents of the lanes inside a row: compute, comm, send, recv (fractions of a row)."""
        if self.dense():
            return {"compute": (0.0, 0.5), "comm": (0.5, 1.0), "send": (0.5, 0.5), "recv": (0.5, 0.5)}
        return {"compute": COMPUTE_LANE, "comm": COMM_LANE, "send": SEND_LANE, "recv": RECV_LANE}

    def _draw(self):
        n, ct, cm = self.spec.n, self.data.compute, self.data.comms
        ln = self.lanes()
        groups = {}
        y0, h = ln["compute"][0], ln["compute"][1] - ln["compute"][0]
        for kind in KINDS:
            sel = np.flatnonzero(ct["kind"] == kind)
            rects = [QRectF(a, d + y0, b - a, h)
                     for d, a, b in zip(ct["device"][sel].tolist(), ct["t_start"][sel].tolist(),
                                        ct["t_end"][sel].tolist())]
            groups[kind] = (QBrush(QColor(KIND_COLOR[kind])), rects)
        span = QColor(COMM_COLOR)
        if not self.dense():
            span.setAlpha(SPAN_ALPHA)
        y0, h = ln["comm"][0], ln["comm"][1] - ln["comm"][0]
        groups["span"] = (QBrush(span), [QRectF(a, d + y0, b - a, h) for d, a, b in zip(
            cm["span_device"].tolist(), cm["span_start"].tolist(), cm["span_end"].tolist())])
        for key, color in (("send", COMM_COLOR), ("recv", RECV_COLOR)):
            dev, a, b = cm[key]
            y0, h = ln[key][0], ln[key][1] - ln[key][0]
            groups[key] = (QBrush(QColor(color)), [] if h <= 0 else [
                QRectF(s, d + y0, e - s, h) for d, s, e in zip(dev.tolist(), a.tolist(), b.tolist())])
        end = self.data.end
        self.bars.set_groups(groups, QRectF(0.0, 0.0, end, float(n)))
        self._set_label_lanes()
        vb = self.plot.getViewBox()
        vb.setLimits(xMin=-0.02 * end, xMax=1.02 * end, minXRange=end * 1e-5)
        dev0 = (ct["device"] == 0) & (ct["layer"] >= 0)
        layers = ct["layer"][dev0]
        starts = np.full(layers.max() + 1 if len(layers) else 0, np.inf)
        np.minimum.at(starts, layers, ct["t_start"][dev0])
        self.layer_starts = starts
        self._layer_key = None
        self._set_layer_ticks()
        self._stride_key = None
        self._set_row_ticks()
        self._set_legend()

    def _set_label_lanes(self):
        ct, cm, n = self.data.compute, self.data.comms, self.spec.n
        colls = self.comm.trace.collectives
        names, short = kind_names(), kind_short_names()
        ink = {k: theme.text_on(QColor(KIND_COLOR[k])) for k in KINDS}
        text = QColor(theme.palette().text)
        ln = self.lanes()
        lanes = []
        for d in range(n):
            sel = np.flatnonzero(ct["device"] == d)
            sel = sel[np.argsort(ct["t_start"][sel], kind="stable")]
            t0, t1 = ct["t_start"][sel], ct["t_end"][sel]
            first = chunk_runs(ct["op"][sel], ct["layer"][sel], ct["chunked"][sel], t0, t1)
            last = np.concatenate([first[1:], [len(sel)]]) - 1
            chunks = last - first + 1
            kinds = ct["kind"][sel][first]
            inner = np.setdiff1d(np.arange(len(sel)), first)  # chunk starts inside a run
            flops = np.add.reduceat(ct["flops"][sel], first) if len(sel) else np.zeros(0)
            nbytes = np.add.reduceat(ct["nbytes"][sel], first) if len(sel) else np.zeros(0)
            ops, layers = ct["op"][sel][first], ct["layer"][sel][first]
            lanes.append(Lane(d + ln["compute"][0], d + ln["compute"][1], t0[first], t1[last],
                              lambda i, k=kinds, a=t0[first], b=t1[last], c=chunks: op_texts(
                                  names[k[i]], short[k[i]], b[i] - a[i], c[i]),
                              lambda i, k=kinds: ink[k[i]], cuts=np.sort(t0[inner]),
                              detail=lambda i, d=d, o=ops, y=layers, f=flops, m=nbytes, a=t0[first], b=t1[last],
                              c=chunks: texts.op_detail(self.spec, d, o[i], y[i], f[i], m[i], b[i] - a[i], c[i])))
            sel = np.flatnonzero(cm["span_device"] == d)
            sel = sel[np.argsort(cm["span_start"][sel], kind="stable")]
            a, b, cs = cm["span_start"][sel], cm["span_end"][sel], cm["span_coll"][sel]
            lanes.append(Lane(d + ln["comm"][0], d + ln["comm"][1], a, b,
                              lambda i, c=cs, a=a, b=b: (f"{colls[c[i]].op} {fmt_time(b[i] - a[i])}",
                                                         fmt_time(b[i] - a[i])),
                              lambda i: text, boxed=not self.dense(),
                              detail=lambda i, d=d, c=cs, a=a, b=b: texts.coll_detail(d, colls[c[i]], b[i] - a[i])))
        self.labels.set_lanes(lanes, QRectF(0.0, 0.0, self.data.end, float(n)))

    def hover_text(self, x: float, y: float) -> str:
        """The tooltip at data point (x seconds, y rows): the op or collective under it, or ''."""
        for lane in self.labels.lanes:
            if lane.y0 <= y <= lane.y1 and len(lane.t0):
                i = int(np.searchsorted(lane.t0, x, side="right")) - 1
                if i >= 0 and x < lane.t1[i]:
                    return lane.detail(i)
        return ""

    def _on_plot_mouse_moved(self, ev):
        vb = self.plot.getViewBox()
        pos = ev[0]
        text = ""
        if self.data is not None and vb.sceneBoundingRect().contains(pos):
            p = vb.mapSceneToView(pos)
            text = self.hover_text(p.x(), p.y())
        if text != self.labels.toolTip():
            self.labels.setToolTip(text)
            if text:
                QToolTip.showText(self.plot.viewport().mapToGlobal(self.plot.mapFromScene(pos)), text,
                                  self.plot.viewport())
            else:
                QToolTip.hideText()

    def zoom_all(self):
        if self.data is not None:
            self.plot.getViewBox().setXRange(0.0, self.data.end, padding=0.01)

    def layer_span(self, layer: int) -> tuple[float, float]:
        """First start and last end of layer `layer`'s ops and collectives, over all GPUs (seconds)."""
        ct = self.data.compute
        sel = ct["layer"] == layer
        if not sel.any():
            raise ValueError(f"the trace has no ops of layer {layer}")
        a, b = float(ct["t_start"][sel].min()), float(ct["t_end"][sel].max())
        # the layer's collectives end after its last op (the MLP all-reduce): take them in
        for c in self.comm.trace.collectives:
            m = re.search(r"layer\s*(\d+)", c.label)
            if m and int(m.group(1)) == layer:
                b = max(b, c.t_end)
        return a, b

    def zoom_to_layer(self, layer: int):
        a, b = self.layer_span(layer)
        self.plot.getViewBox().setXRange(a, b, padding=0.02)

    def x_range(self) -> tuple[float, float]:
        return tuple(self.plot.getViewBox().viewRange()[0])

    def _on_viewbox_resized(self, *_):
        self._set_row_ticks()
        self._set_layer_ticks()

    def _on_viewbox_x_range_changed(self, *_):
        self._set_layer_ticks()

    def _set_layer_ticks(self):
        """A tick where each layer starts on GPU 0: every layer when they are far enough apart, else every 2nd, 5th …"""
        starts = self.layer_starts
        if len(starts) == 0:
            self.layer_axis.setTicks([[], []])
            return
        vb = self.plot.getViewBox()
        (x0, x1), width = vb.viewRange()[0], max(vb.width(), 1.0)
        per_layer_px = (starts[-1] - starts[0]) / max(len(starts) - 1, 1) * width / max(x1 - x0, 1e-30)
        need = QFontMetricsF(theme.font("small")).horizontalAdvance("888") * 1.6
        stride = next((k for k in (1, 2, 5, 10, 20, 50, 100) if k * per_layer_px >= need), 200)
        key = (stride, len(starts), float(starts[0]))
        if key != self._layer_key:
            self._layer_key = key
            self.layer_axis.setTicks([[(float(t), str(i)) for i, t in enumerate(starts) if i % stride == 0], []])

    def _set_row_ticks(self):
        """'GPU d' and 'comm' per row when they fit, else 'GPU d' every 2nd, 4th … row."""
        n = self.spec.n
        vb = self.plot.getViewBox()
        label_px = QFontMetricsF(theme.font("small")).height() * 1.15
        row_px = max(vb.height() - label_px, 1.0) / max(n, 1)
        both = row_px >= 2 * label_px
        stride = 1 if both else next((s for s in (1, 2, 4, 8, 16, 32, 64, 128) if s * row_px >= label_px), 256)
        key = (n, both, stride, self.tr("comm"), round(row_px))
        if key == self._stride_key:
            return
        self._stride_key = key
        ln = self.lanes()
        if both:
            ticks = [t for d in range(n) for t in (
                (d + sum(ln["compute"]) / 2, self.tr("GPU {d}").format(d=d)),
                (d + sum(ln["comm"]) / 2, self.tr("comm")))]
        else:
            ticks = [(d + 0.5, self.tr("GPU {d}").format(d=d)) for d in range(0, n, stride)]
        self.plot.getAxis("left").setTicks([ticks, []])
        # room for half a label above the first row when a tick sits in the middle of a thin row
        pad = max(0.0, (label_px / 2 - row_px / 2) / row_px) if not both else 0.0
        vb.setLimits(yMin=-pad - 0.05, yMax=n + 0.05)
        vb.setYRange(-pad, n, padding=0.0)

    # -- texts ----------------------------------------------------------------------------------
    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def retranslate_ui(self):
        self.setWindowTitle(self.tr("Step timeline: n = {n}").format(n=self.spec.n))
        self.overlap_label.setText(self.tr("&Overlap"))
        self.overlap_combo.setItemText(0, self.tr("none: communication waits for compute (roofline, no overlap)"))
        self.overlap_combo.setItemText(1, self.tr("async: ring steps run under the next matmul chunk"))
        self.layer_label.setText(self.tr("&Layer"))
        self.layer_button.setText(self.tr("Zoom to layer"))
        self.all_button.setText(self.tr("Whole step"))
        self._set_hint()
        self.plot.setLabel("bottom", self.tr("time in the step"), units="s")
        self.plot.setLabel("top", self.tr("layer"))
        self._set_legend()
        self._stride_key = None
        self._set_row_ticks()
        if self.data is not None:
            self._set_label_lanes()
            self._set_headline()
        else:
            self._set_busy()

    def _set_hint(self):
        move = self.tr("Drag to pan, wheel to zoom (time only); hover a bar for its numbers.")
        if self.dense():
            self.hint.setText(move + " " + self.tr("Each GPU: compute above, its collectives below."))
        else:
            self.hint.setText(move + " " + self.tr("A bar is labelled when its label fits. Comm lane: sending above, "
                                                   "receiving below, the collective's span tinted."))

    def _set_busy(self):
        self.headline.setText("<b>" + texts.esc(self.tr("Simulating the step of {n} GPUs (overlap: {overlap})…").format(
            n=self.spec.n, overlap=texts.overlap_name(self.overlap))) + "</b>")
        self.why.setText("")

    def _set_legend(self):
        self.legend.setText(texts.legend_html(self.dense()))

    def _set_headline(self):
        self.headline.setText(texts.headline_html(self.spec, self.roof, self.total(), self.overlap))
        self.why.setText(self.explain())

    def explain(self) -> str:
        """Why the simulated step and the roofline's t_step agree or differ (step_timeline_texts.explain)."""
        return texts.explain(self.comm, self.spec, self.roof)

    # -- look -----------------------------------------------------------------------------------
    def _on_theme_changed(self):
        self._apply_theme()
        self._set_legend()
        if self.data is not None:
            self._set_headline()
        self._stride_key = None
        self._set_row_ticks()

    def _apply_theme(self):
        pal = theme.palette()
        s = theme.scale()
        self.plot.setBackground(pal.background)
        font = theme.font("small")
        for name in ("left", "bottom", "top"):
            ax = self.plot.getAxis(name)
            ax.setTickFont(font)
            ax.setPen(pg.mkPen(pal.text, width=max(1.0, s)))
            ax.setTextPen(pg.mkPen(pal.text))
            ax.label.setFont(font)
        self.plot.getAxis("left").setWidth(round(80 * s))
        self._layer_key = None
        self._set_layer_ticks()
        box = QColor(pal.background)
        box.setAlpha(210)
        self.labels.set_look(theme.font("small"), box)
        self.headline.setFont(theme.font("body"))
        self.headline.setStyleSheet(f"color: {pal.text};")
        self.why.setFont(theme.font("body"))
        self.why.setStyleSheet(f"color: {pal.text};")
        self.hint.setFont(theme.font("small"))
        self.hint.setStyleSheet(f"color: {pal.text_muted};")
        self.legend.setFont(theme.font("small"))

    # -- handlers ------------------------------------------------------------------------------
    def _on_overlap_combo_activated(self, i):
        self.set_overlap(self.overlap_combo.itemData(i))

    def _on_layer_button_clicked(self):
        self.zoom_to_layer(self.layer_spin.value())


# ---------------------------------------------------------------------------------------
# Command line: python -m app.views.timeline.step_timeline --model llama3-70b --n 8 --screenshot step.png
# ---------------------------------------------------------------------------------------
def _parser():
    p = argparse.ArgumentParser(prog="python -m app.views.timeline.step_timeline",
                                description="One decode step of a real model, per GPU, on one clock.")
    p.add_argument("--model", default="llama3-70b", help="one of: " + ", ".join(MODELS))
    p.add_argument("--chip", default="h100", help="one of: " + ", ".join(CHIPS))
    p.add_argument("--link", default="", help="one of: " + ", ".join(LINKS) + " (default: the chip's own)")
    p.add_argument("--n", default=8, type=int)
    p.add_argument("--batch", default=32, type=int)
    p.add_argument("--ctx", default=8192, type=int)
    p.add_argument("--w-bytes", default=2.0, type=float)
    p.add_argument("--kv-bytes", default=2.0, type=float)
    p.add_argument("--act-bytes", default=2.0, type=float)
    p.add_argument("--algo", default="ring", choices=list(ALLREDUCE_ALGOS))
    p.add_argument("--prec", default="bf16")
    p.add_argument("--overlap", default="none", choices=OVERLAPS)
    p.add_argument("--prefill", default=1, type=int, metavar="L", help="a prefill of L tokens instead of a decode step")
    p.add_argument("--layer", default=None, type=int, help="zoom into this layer")
    p.add_argument("--lang", default="en", choices=("en", "zh"))
    p.add_argument("--size", default="1280x720", help="window size, WxH")
    p.add_argument("--screenshot", default=None, metavar="PATH", help="save the window as PNG and exit")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
        spec = StepSpec(args.model, args.chip, args.link, args.n, args.batch, args.ctx, args.w_bytes,
                        args.kv_bytes, args.act_bytes, args.algo, args.prec, args.prefill)
    except ValueError as e:
        print(f"step_timeline: error: {e}", file=sys.stderr)
        return 2
    if args.screenshot and not os.environ.get("DISPLAY") and sys.platform.startswith("linux"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = QApplication.instance()
    if app is None:  # our own process: the app's look (a caller's application keeps its own)
        app = QApplication([sys.argv[0]])
        app.setStyleSheet(theme.stylesheet())
    set_language(app, args.lang)
    view = StepTimelineView(spec, args.overlap, sync=bool(args.screenshot))  # a window opens at once
    view.resize(w, h)
    view.show()

    def on_ready():
        if args.layer is not None:
            view.zoom_to_layer(args.layer)
        print(f"simulated step {fmt_time(view.total())} (overlap {args.overlap}), roofline with no overlap "
              f"{fmt_time(view.roof['t_step_no_overlap'])}, lower bound {fmt_time(view.roof['t_lower_bound'])}; "
              f"simulation took {view.last_sim_seconds * 1e3:.0f} ms")

    if not args.screenshot:
        view.step_ready.connect(on_ready)
        return app.exec()
    app.processEvents()
    if view.data is None:  # the engine refused this setting
        print(f"step_timeline: error: {view.error}", file=sys.stderr)
        return 2
    try:
        on_ready()
    except ValueError as e:
        print(f"step_timeline: error: {e}", file=sys.stderr)
        return 2
    app.processEvents()
    ok = view.grab().save(args.screenshot)
    view.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
