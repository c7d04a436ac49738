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
span); the mouse pans and zooms x only. The headline puts the simulated step beside the roofline's
t_step (`cost_model.tp_decode_step`), which is a lower bound, and says why they differ when they
do. The overlap choice (none / async) re-simulates the step and updates the items in place.

Drawing 80 layers × ~10 ops × 8 GPUs: all bars of one colour are one drawRects call
(`LaneBars`), and labels are painted by one item (`LaneLabels`) for the visible bars
only, after measuring them against their bar's width on screen (level of detail).

Entry points: `open_step_timeline(parent, model, chip, link, n, ...)` (a click on the decode-
latency plot), `open_from_params(parent, latency_params, n)`, `attach_to_latency_view(view)`,
and `python -m app.step_timeline --model llama3-70b --n 8 --screenshot step.png`.
"""

from __future__ import annotations

from . import _compat  # noqa: F401  (PySide6 6.12 on Python < 3.12: see app/_compat.py)

import argparse
import math
import os
import re
import sys
import threading
import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QLineF, QObject, QPointF, QRectF, Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor, QCursor, QFontMetricsF, QPen
from PySide6.QtWidgets import (QComboBox, QDialog, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QSpinBox,
                               QToolTip, QVBoxLayout, QWidget)

from simcore import cost_model
from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.links import LINKS, LinkSpec
from simcore.hw_specs import CHIPS, Chip
from simcore.llm_math import MODELS, ModelConfig
from simcore.step_sim import roofline_gap

from . import theme

OVERLAPS = ("none", "async")
# op kinds in schedule order, each with its Okabe–Ito colour (theme.OKABE_ITO; grey for norms,
# which are tiny, and for anything the engine adds that this list does not know)
KINDS = ("norm", "qkv", "attn", "o_proj", "gate_up", "down", "lm_head", "other")
KIND_COLOR = {"norm": "#9A9A9A", "qkv": "#0072B2", "attn": "#E69F00", "o_proj": "#56B4E9",
              "gate_up": "#009E73", "down": "#F0E442", "lm_head": "#D55E00", "other": "#C8C8C8"}
COMM_COLOR = "#CC79A7"  # Okabe–Ito reddish purple: every collective, send and receive
RECV_COLOR = "#8A3F70"  # the same hue, darker: receive-port busy time
SPAN_ALPHA = 70  # the tint of a collective's span behind its send / receive bars
# lanes inside a GPU's row (row d spans y = d .. d + 1, GPU 0 on top)
COMPUTE_LANE = (0.06, 0.50)
COMM_LANE = (0.54, 0.94)
SEND_LANE = (0.56, 0.74)
RECV_LANE = (0.76, 0.92)
LABEL_PAD_PX = 6  # free pixels a label needs inside its bar, left and right together
MIN_LABEL_PX = 18  # bars narrower than this on screen are never measured for a label
MIN_CUT_PX = 4  # chunk boundaries closer than this on screen are not drawn
DENSE_ABOVE_N = 16  # more GPUs than this: rows too thin for gaps and separate send / receive bars
MAX_STEP_N = 64  # every ring message is simulated: n = 64 already sends 1.3 million per step
AGREE_REL = 1e-3  # simulated step and roofline "equal" within 0.1 %


def _tr(text):
    return QCoreApplication.translate("StepTimelineView", text)


# ---------------------------------------------------------------------------------------
# Reading the trace (no Qt)
# ---------------------------------------------------------------------------------------
def op_kind(rec) -> str:
    """The kind of a compute record, read from its label ("attn out 3/8" -> "o_proj"), else its `.kind`."""
    for text in (rec.label.lower(), (getattr(rec, "kind", "") or "").lower()):
        for key, words in (("lm_head", ("lm head", "lm_head", "logits")),
                           ("norm", ("norm",)),
                           ("qkv", ("qkv",)),
                           ("o_proj", ("attn out", "o_proj", "out proj")),
                           ("attn", ("attention", "attn")),
                           ("gate_up", ("gate", "up")),
                           ("down", ("down",))):
            if any(w in text for w in words):
                return key
    return "other"


def op_layer(rec) -> int:
    """The transformer layer of a compute record; -1 outside the layers (final norm, LM head)."""
    layer = getattr(rec, "layer", None)
    if layer is not None:
        return int(layer)
    m = re.search(r"layer\s*(\d+)", rec.label)
    return int(m.group(1)) if m else -1


CHUNK = re.compile(r"\s+\d+/\d+$")  # "attn out 3/8": chunk 3 of 8 of a collective matmul


def compute_table(trace) -> dict:
    """
    Every compute record as columns: device, t_start, t_end, kind, layer (-1: none), flops,
    nbytes, op (the label without a chunk suffix), chunked (the record is one chunk of an op).
    """
    recs = list(getattr(trace, "computes", ()))
    k = len(recs)
    per_label = {}  # a label repeats in every layer and on every device: read it once
    for r in recs:
        key = (r.label, getattr(r, "kind", ""))
        if key not in per_label:
            per_label[key] = (CHUNK.sub("", r.label), CHUNK.search(r.label) is not None, op_kind(r))
    info = [per_label[(r.label, getattr(r, "kind", ""))] for r in recs]

    def column(attr, dtype):
        return np.fromiter((getattr(r, attr) for r in recs), dtype=dtype, count=k)

    return {"op": np.array([i[0] for i in info], dtype=object),
            "chunked": np.array([i[1] for i in info], dtype=bool),
            "kind": np.array([i[2] for i in info], dtype=object),
            "device": column("device", int), "t_start": column("t_start", float), "t_end": column("t_end", float),
            "layer": np.fromiter((op_layer(r) for r in recs), dtype=int, count=k),
            "flops": column("flops", float), "nbytes": column("nbytes", float)}


def merged_busy(dev, t0, t1, n) -> tuple:
    """
    The union of the intervals [t0, t1) per device: (device, start, end) arrays, sorted by device
    then start. Ring steps on one port follow each other back to back, so a collective of 2(n−1)
    messages becomes one bar per device and port.
    """
    if len(dev) == 0:
        return np.zeros(0, int), np.zeros(0), np.zeros(0)
    order = np.lexsort((t0, dev))
    d, s, e = dev[order], t0[order], t1[order]
    out_d, out_s, out_e = [], [], []
    for k in range(n):
        lo, hi = np.searchsorted(d, k), np.searchsorted(d, k, side="right")
        if lo == hi:
            continue
        sk, ek = s[lo:hi], np.maximum.accumulate(e[lo:hi])
        new = np.concatenate([[True], sk[1:] > ek[:-1]])  # a gap before this interval starts a new run
        starts = np.flatnonzero(new)
        ends = np.concatenate([starts[1:] - 1, [len(sk) - 1]])
        out_d.append(np.full(len(starts), k))
        out_s.append(sk[starts])
        out_e.append(ek[ends])
    return np.concatenate(out_d), np.concatenate(out_s), np.concatenate(out_e)


def chunk_runs(op, layer, chunked, t0, t1) -> np.ndarray:
    """
    Indices (into one device's records sorted by start) where a run begins: the chunks of one
    collective-matmul op that follow each other form one run, every other record is its own.
    """
    if len(t0) == 0:
        return np.zeros(0, int)
    same = ((op[1:] == op[:-1]) & (layer[1:] == layer[:-1]) & chunked[1:] & chunked[:-1]
            & (t0[1:] <= t1[:-1] * (1 + 1e-12)))
    return np.flatnonzero(np.concatenate([[True], ~same]))


def comm_table(trace, n) -> dict:
    """
    Per device: its span of every collective (first message touching it to the last), and its
    send-port and receive-port busy intervals, merged. Devices < n only (the switch has no row).
    """
    msgs = trace.messages
    k = len(msgs)
    # one column at a time: np.fromiter is ~8x faster than np.array of a list of tuples (1.3M messages at n = 64)
    src = np.fromiter((m.src for m in msgs), dtype=int, count=k)
    dst = np.fromiter((m.dst for m in msgs), dtype=int, count=k)
    t0 = np.fromiter((m.t_start for m in msgs), dtype=float, count=k)
    t1 = np.fromiter((m.t_end for m in msgs), dtype=float, count=k)
    coll = np.fromiter((m.coll for m in msgs), dtype=int, count=k)
    n_coll = len(trace.collectives)
    first = np.full((n_coll, n), np.inf)
    last = np.full((n_coll, n), -np.inf)
    for ends in (src, dst):
        ok = (ends >= 0) & (ends < n)
        np.minimum.at(first, (coll[ok], ends[ok]), t0[ok])
        np.maximum.at(last, (coll[ok], ends[ok]), t1[ok])
    ci, di = np.nonzero(np.isfinite(first))
    ok_s, ok_r = (src >= 0) & (src < n), (dst >= 0) & (dst < n)
    return {"span_coll": ci, "span_device": di, "span_start": first[ci, di], "span_end": last[ci, di],
            "send": merged_busy(src[ok_s], t0[ok_s], t1[ok_s], n),
            "recv": merged_busy(dst[ok_r], t0[ok_r], t1[ok_r], n)}


def fmt_time(s: float, digits: int = 3) -> str:
    """Seconds as '41.2 µs', '1.25 ms', '850 ns', '13.0 ms' (`digits` significant digits); 0 as '0'."""
    if s == 0:
        return "0"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(s) >= scale or unit == "ns":
            v = s / scale
            decimals = max(0, digits - 1 - math.floor(math.log10(abs(v)))) if v else 0
            return f"{v:.{decimals}f} {unit}"


def resolve(model, chip, link):
    """Keys or objects -> (ModelConfig, Chip, LinkSpec); link None or '' = the chip's own link."""
    if isinstance(model, str):
        if model not in MODELS:
            raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")
        model = MODELS[model]
    if isinstance(chip, str):
        if chip not in CHIPS:
            raise ValueError(f"unknown chip {chip!r}; choose one of {', '.join(CHIPS)}")
        chip = CHIPS[chip]
    if not isinstance(model, ModelConfig) or not isinstance(chip, Chip):
        raise ValueError("model and chip must be keys of llm_math.MODELS / hw_specs.CHIPS or their records")
    if link in (None, ""):
        link = LINKS[chip.link]
    elif isinstance(link, str):
        if link not in LINKS:
            raise ValueError(f"unknown link {link!r}; choose one of {', '.join(LINKS)}")
        link = LINKS[link]
    elif not isinstance(link, LinkSpec):
        raise ValueError("link must be a key of comm_sim.LINKS or a LinkSpec")
    return model, chip, link


class StepSpec:
    """
    What one step timeline shows: the model, chip, link, n and the decode-latency plot's settings;
    prompt = 1 is a decode step (one new token per sequence), prompt = L a prefill of L tokens.
    """

    def __init__(self, model, chip, link=None, n=8, batch=32, ctx=8192, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0,
                 algo="ring", prec="bf16", prompt=1, topology=""):
        self.model, self.chip, self.link = resolve(model, chip, link)
        self.topology = topology or ""  # a topology_presets key: that machine's wiring (issue 15)
        if self.topology:
            from simcore.topology_presets import get_preset

            if not get_preset(self.topology).is_valid(int(n)):
                raise ValueError(f"{get_preset(self.topology).name} has no group of {n} chips")
        for name, v, lo in (("n", n, 1), ("batch", batch, 1), ("ctx", ctx, 0), ("prompt", prompt, 1)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ValueError(f"{name} must be a whole number >= {lo}, got {v!r}")
        if n > MAX_STEP_N:
            raise ValueError(f"the step timeline simulates every message: at most {MAX_STEP_N} GPUs, got n = {n}")
        if algo not in ALLREDUCE_ALGOS:
            raise ValueError(f"unknown all-reduce algorithm {algo!r}; choose one of {', '.join(ALLREDUCE_ALGOS)}")
        self.chip.peak_flops(prec)  # a precision the chip lacks says so here
        self.n, self.batch, self.ctx, self.prompt = int(n), int(batch), int(ctx), int(prompt)
        self.w_bytes, self.kv_bytes, self.act_bytes = float(w_bytes), float(kv_bytes), float(act_bytes)
        self.algo, self.prec = algo, prec

    def kwargs(self) -> dict:
        return {"w_bytes": self.w_bytes, "kv_bytes": self.kv_bytes, "act_bytes": self.act_bytes, "algo": self.algo,
                "compute_prec": self.prec}

    def simulate(self, overlap="none", simulate=None):
        """
        The engine's step (cost_model.simulate_decode_step, or simulate_prefill_step when
        prompt > 1): a Comm whose trace holds every op and message (seconds, bytes).
        `simulate` replaces the decode simulation (same signature).
        """
        if overlap not in OVERLAPS:
            raise ValueError(f"unknown overlap {overlap!r}; choose one of {', '.join(OVERLAPS)}")
        m, c, link, n = self.model, self.chip, self.link, self.n
        if self.prompt > 1:
            return cost_model.simulate_prefill_step(m, c, link, n, self.batch, self.prompt, self.ctx, overlap=overlap,
                                                    **self.kwargs())
        fn = simulate or cost_model.simulate_decode_step
        if self.topology:  # the machine's topology, not n chips on one switch
            from simcore.topology_presets import get_preset

            return fn(m, c, link, n, self.batch, self.ctx, overlap=overlap,
                      topology=get_preset(self.topology).topology(n), **self.kwargs())
        return fn(m, c, link, n, self.batch, self.ctx, overlap=overlap, **self.kwargs())

    def roofline(self) -> dict:
        """cost_model.tp_decode_step (tp_prefill_step) here: t_math, t_mem, t_comm, t_step in seconds."""
        m, c, link, n = self.model, self.chip, self.link, self.n
        if self.prompt > 1:
            return cost_model.tp_prefill_step(m, c, link, n, self.batch, self.prompt, self.ctx, **self.kwargs())
        return cost_model.tp_decode_step(m, c, link, n, self.batch, self.ctx, topology=self.topology or None,
                                         **self.kwargs())


def step_total(comm) -> float:
    """The simulated step time: the Comm's clock (seconds)."""
    return float(comm.time)


class StepData:
    """
    One simulated step, read into columns (no Qt, so a worker thread can build it):
    comm (the engine's Comm), compute (compute_table), comms (comm_table), total = comm.time,
    end = the last thing on the clock (seconds), seconds = wall time the simulation took.
    """

    def __init__(self, spec: StepSpec, overlap: str, simulate=None):
        t = time.perf_counter()
        self.comm = spec.simulate(overlap, simulate)
        self.seconds = time.perf_counter() - t
        self.overlap = overlap
        self.compute = compute_table(self.comm.trace)
        self.comms = comm_table(self.comm.trace, spec.n)
        self.total = step_total(self.comm)
        self.end = max(self.total, float(self.compute["t_end"].max(initial=0.0)))


# ---------------------------------------------------------------------------------------
# Graphics items
# ---------------------------------------------------------------------------------------
class LaneBars(pg.GraphicsObject):
    """
    Many rectangles in data coordinates (x seconds, y rows), one brush per group: a repaint is one
    drawRects call per group on the cached QRectF lists, without a pen. (A QPicture of the same
    rectangles, as pyqtgraph's BarGraphItem records, replays ten times slower: 46,000 rectangles,
    n = 64, took 113 ms against 10 ms here.)
    """

    def __init__(self):
        super().__init__()
        self.groups = {}  # key -> (QBrush, [QRectF])
        self._rect = QRectF()

    def set_groups(self, groups: dict, rect: QRectF | None = None):
        """
        groups: key -> (QBrush, list of QRectF). Replaces every rectangle (items stay).
        rect: their bounding rectangle when the caller knows it (else computed).
        """
        self.prepareGeometryChange()
        self.groups = groups
        if rect is None:
            rect = QRectF()
            for _brush, rects in groups.values():
                for r in rects:
                    rect = rect.united(r)
        self._rect = QRectF(rect)
        self.update()

    def rects(self, key) -> list:
        """The rectangles of group `key` as drawn (data coordinates)."""
        return list(self.groups.get(key, (None, []))[1])

    def count(self) -> int:
        return sum(len(r) for _b, r in self.groups.values())

    def boundingRect(self):
        return self._rect

    def paint(self, p, *args):
        p.setPen(Qt.NoPen)
        for brush, rects in self.groups.values():
            if rects:
                p.setBrush(brush)
                p.drawRects(rects)


class Lane:
    """
    The labels of one lane: bars [t0[i], t1[i]) (sorted, not overlapping) between rows y0 and y1;
    text(i) -> texts, longest first, and ink(i) -> QColor are asked only for bars that get a label.
    boxed: the label sits on a background box (it crosses the send / receive bars).
    A bar may be a run of chunks (a collective matmul): `cuts` are the chunk boundaries, drawn
    as thin lines when they are at least MIN_CUT_PX apart on screen.
    """

    def __init__(self, y0, y1, t0, t1, text, ink, boxed=False, cuts=None, detail=None):
        self.y0, self.y1, self.t0, self.t1 = y0, y1, t0, t1
        self.text, self.ink, self.boxed = text, ink, boxed
        self.detail = detail or (lambda i: text(i)[0])  # the tooltip of bar i
        self.cuts = np.zeros(0) if cuts is None else cuts  # sorted times of chunk boundaries inside bars


class LaneLabels(pg.GraphicsObject):
    """
    The labels of many bars, painted in screen pixels for the bars in view that are wide enough
    (level of detail): a bar first needs MIN_LABEL_PX, then the first of its texts that fits inside
    it is drawn ("attention 41 µs", "attention", "attn"). Bars of one lane never overlap, so neither do labels.
    """

    def __init__(self):
        super().__init__()
        self.lanes = []
        self._rect = QRectF()
        self.font = theme.font("small")
        self.box = QColor(255, 255, 255, 200)
        self.last_layout = []

    def set_lanes(self, lanes: list, rect: QRectF):
        self.prepareGeometryChange()
        self.lanes = lanes
        self._rect = QRectF(rect)
        self.update()

    def set_look(self, font, box: QColor):
        self.font, self.box = font, box
        self.update()

    def boundingRect(self):
        return self._rect

    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        return None  # the bars decide the range

    def layout(self, to_device, x_range) -> list:
        """
        [(QRectF in device pixels, text, QColor, boxed)] for the labels that fit at this transform
        (item -> device) and visible x range (data units). paint() draws exactly this list.
        """
        fm = QFontMetricsF(self.font)
        text_h = fm.height()
        sx, dx = to_device.m11(), to_device.dx()
        if sx <= 0:
            return []
        xmin, xmax = x_range
        out = []
        for lane in self.lanes:
            top = to_device.map(QPointF(0.0, lane.y0)).y()
            bottom = to_device.map(QPointF(0.0, lane.y1)).y()
            top, bottom = min(top, bottom), max(top, bottom)
            if bottom - top < text_h or len(lane.t0) == 0:
                continue
            i0 = int(np.searchsorted(lane.t1, xmin, side="right"))
            i1 = int(np.searchsorted(lane.t0, xmax, side="left"))
            if i1 <= i0:
                continue
            a = np.maximum(lane.t0[i0:i1], xmin) * sx + dx
            b = np.minimum(lane.t1[i0:i1], xmax) * sx + dx
            for k in np.flatnonzero(b - a >= MIN_LABEL_PX):
                i, w = i0 + int(k), float(b[k] - a[k])
                for text in lane.text(i):
                    tw = fm.horizontalAdvance(text)
                    if tw + LABEL_PAD_PX <= w:
                        cx = 0.5 * (a[k] + b[k])
                        rect = QRectF(cx - tw / 2, (top + bottom - text_h) / 2, tw, text_h)
                        out.append((rect, text, lane.ink(i), lane.boxed))
                        break
        return out

    def cut_lines(self, to_device, x_range) -> list:
        """
        [(x, y0, y1)] in device pixels: a tick down from the top and up from the bottom of the lane at
        every chunk boundary in view, where the boundaries are far enough apart.
        """
        sx, dx = to_device.m11(), to_device.dx()
        out = []
        for lane in self.lanes:
            c = lane.cuts
            c = c[(c >= x_range[0]) & (c <= x_range[1])]
            if len(c) == 0 or (len(c) > 1 and np.min(np.diff(c)) * sx < MIN_CUT_PX):
                continue
            top = to_device.map(QPointF(0.0, lane.y0)).y()
            bottom = to_device.map(QPointF(0.0, lane.y1)).y()
            tick = (bottom - top) / 4  # a tick from each edge: the middle stays free for the label
            for x in c.tolist():
                out += [(x * sx + dx, top, top + tick), (x * sx + dx, bottom - tick, bottom)]
        return out

    def paint(self, p, *args):
        vb = self.getViewBox()
        if vb is None or not self.lanes:
            return
        to_device, x_range = p.transform(), vb.viewRange()[0]
        self.last_layout = self.layout(to_device, x_range)
        cuts = self.cut_lines(to_device, x_range)
        p.save()
        p.resetTransform()
        if cuts:
            p.setPen(QPen(self.box, 1.0))
            p.drawLines([QLineF(x, a, x, b) for x, a, b in cuts])
        p.setFont(self.font)
        for rect, text, color, boxed in self.last_layout:
            if boxed:
                p.fillRect(rect.adjusted(-2, 0, 2, 0), self.box)
            p.setPen(color)
            p.drawText(rect, Qt.AlignCenter, text)
        p.restore()


class _Results(QObject):
    """Carries a worker thread's StepData to the GUI thread (a queued signal)."""

    ready = Signal(int, str, object)  # spec generation, overlap, StepData or the exception raised


# ---------------------------------------------------------------------------------------
# The view
# ---------------------------------------------------------------------------------------
class StepTimelineView(QWidget):
    """
    One step's timeline for a StepSpec. `set_overlap('none' | 'async')` re-simulates (once per
    overlap: results are kept) and updates the items in place; `zoom_to_layer(i)` / `zoom_all()`
    set the visible time range. The simulation runs in a worker thread, one per overlap; a result
    for the overlap no longer chosen is kept, not shown. Llama-3 70B took 0.5–1.1 s at n = 8 and
    50–66 s at n = 64 (1.3 million messages) on the shared 2-core build machine: too long for the
    event loop. `sync=True` simulates on the caller's thread (tests, screenshots).
    `simulate` replaces the engine's simulate_decode_step (same signature).
    """

    overlap_changed = Signal(str)
    step_ready = Signal()  # a simulated step is on screen

    def __init__(self, spec: StepSpec, overlap="none", simulate=None, sync=False, parent=None):
        super().__init__(parent)
        self.setObjectName("StepTimelineView")
        self.spec = spec
        self._simulate = simulate
        self.sync = bool(sync)
        self.overlap = overlap
        self.data = None  # the StepData on screen
        self._cache = {}  # overlap -> StepData
        self._pending = set()  # overlaps a worker thread is simulating
        self._generation = 0  # of the spec: a worker's result for an earlier spec is dropped
        self.error = ""
        self.roof = spec.roofline()
        self.simulations = 0  # steps simulated (tests watch it)
        self._stride_key = None
        self._results = _Results(self)
        self._results.ready.connect(self._on_results_ready)

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
        self._generation += 1
        self._cache, self._pending, self.data = {}, set(), None
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
        elif self.sync:
            try:
                self._show(self._prepare(overlap))
            except ValueError as e:
                self._show_error(e)
        else:
            self._set_busy()
            if overlap not in self._pending:  # one worker per overlap, however often it is chosen
                self._pending.add(overlap)
                threading.Thread(target=_work, args=(self._results, self._generation, self.spec, overlap,
                                                     self._simulate), daemon=True).start()

    def _prepare(self, overlap):
        self.simulations += 1
        return StepData(self.spec, overlap, self._simulate)

    def _on_results_ready(self, generation, overlap, result):
        if generation != self._generation:
            return  # simulated for the step shown before set_spec
        self._pending.discard(overlap)
        if isinstance(result, StepData):
            self.simulations += 1
            self._cache[overlap] = result
        if overlap != self.overlap:
            return  # the user chose the other overlap meanwhile: kept for when they come back
        if isinstance(result, Exception):
            self._show_error(result)
        else:
            self._show(result)

    def _show_error(self, e):
        self.error = str(e)
        msg = self.tr("Not simulated: {why}").format(why=self.error)
        self.headline.setText(f"<b>{_esc(msg)}</b>")
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
                              lambda i, k=kinds, a=t0[first], b=t1[last], c=chunks: _op_texts(
                                  names[k[i]], short[k[i]], b[i] - a[i], c[i]),
                              lambda i, k=kinds: ink[k[i]], cuts=np.sort(t0[inner]),
                              detail=lambda i, d=d, o=ops, y=layers, f=flops, m=nbytes, a=t0[first], b=t1[last],
                              c=chunks: self._op_detail(d, o[i], y[i], f[i], m[i], b[i] - a[i], c[i])))
            sel = np.flatnonzero(cm["span_device"] == d)
            sel = sel[np.argsort(cm["span_start"][sel], kind="stable")]
            a, b, cs = cm["span_start"][sel], cm["span_end"][sel], cm["span_coll"][sel]
            lanes.append(Lane(d + ln["comm"][0], d + ln["comm"][1], a, b,
                              lambda i, c=cs, a=a, b=b: (f"{colls[c[i]].op} {fmt_time(b[i] - a[i])}",
                                                         fmt_time(b[i] - a[i])),
                              lambda i: text, boxed=not self.dense(),
                              detail=lambda i, d=d, c=cs, a=a, b=b: self._coll_detail(d, colls[c[i]], b[i] - a[i])))
        self.labels.set_lanes(lanes, QRectF(0.0, 0.0, self.data.end, float(n)))

    def _op_detail(self, d, op, layer, flops, nbytes, seconds, chunks) -> str:
        peak, bw = self.spec.chip.peak_flops(self.spec.prec), self.spec.chip.mem_bw
        where = (self.tr("GPU {d}, layer {layer}: {op}").format(d=d, layer=layer, op=op) if layer >= 0 else
                 self.tr("GPU {d}: {op}").format(d=d, op=op))
        bound = self.tr("compute-bound") if flops / peak > nbytes / bw else self.tr("memory-bound")
        what = self.tr("{time} · {flops}FLOP · {bytes}B from HBM · {bound}").format(
            time=fmt_time(seconds), flops=fmt_si(flops), bytes=fmt_si(nbytes), bound=bound)
        if chunks > 1:
            what += "\n" + self.tr("{k} chunks: the ring sends each one while the next is computed").format(k=chunks)
        return f"{where}\n{what}"

    def _coll_detail(self, d, c, seconds) -> str:
        return self.tr("GPU {d}: {op} ({algo}) “{label}”\n{time} on this GPU · S = {bytes}B").format(
            d=d, op=c.op, algo=c.algo, label=c.label, time=fmt_time(seconds), bytes=fmt_si(c.nbytes))

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
        self.overlap_combo.setItemText(0, self.tr("none: communication waits for compute (roofline)"))
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
        self.headline.setText("<b>" + _esc(self.tr("Simulating the step of {n} GPUs (overlap: {overlap})…").format(
            n=self.spec.n, overlap=self._overlap_name(self.overlap))) + "</b>")
        self.why.setText("")

    def _overlap_name(self, o):
        return {"none": self.tr("none"), "async": self.tr("async")}[o]

    def _set_legend(self):
        names = kind_names()
        sw = round(theme.px("small"))

        def swatch(color, text):
            return (f'<span style="background-color:{color}; color:{color};">&nbsp;&nbsp;&nbsp;&nbsp;</span>'
                    f"&nbsp;{_esc(text)}")
        items = [swatch(KIND_COLOR[k], names[k]) for k in KINDS if k != "other"]
        if self.dense():
            items.append(swatch(COMM_COLOR, self.tr("collective")))
        else:
            span = QColor(COMM_COLOR)
            span.setAlpha(SPAN_ALPHA)
            items += [swatch(COMM_COLOR, self.tr("sending")), swatch(RECV_COLOR, self.tr("receiving")),
                      swatch(_blend(span), self.tr("collective"))]
        self.legend.setText(f'<span style="font-size:{sw}px;">' + " &nbsp;&nbsp; ".join(items) + "</span>")

    def _set_headline(self):
        s, roof = self.spec, self.roof
        total = self.total()
        step = self.tr("Decode step") if s.prompt == 1 else self.tr("Prefill of {L} tokens").format(L=s.prompt)
        line1 = self.tr("{step}: {model} on {n} × {chip} · batch {batch} · context {ctx} · overlap: {overlap}").format(
            step=step, model=s.model.name, n=s.n, chip=s.chip.name, batch=s.batch, ctx=s.ctx,
            overlap=self._overlap_name(self.overlap))
        line2 = self.tr("Simulated step: {total} · roofline t_step: {roof} (roofline = lower bound)").format(
            total=fmt_time(total, 4), roof=fmt_time(roof["t_step"], 4))
        self.headline.setText(f"<b>{_esc(line1)}</b><br><span style='font-size:{round(theme.px('caption'))}px'>"
                              f"<b>{_esc(line2)}</b></span>")
        self.why.setText(self.explain())

    def explain(self) -> str:
        """
        Why the simulated step and the roofline's t_step agree or differ: the engine's
        step_sim.roofline_gap splits the difference into per-op, counted and communication parts.
        """
        roof = self.roof
        gap = roofline_gap(self.comm, self.spec.chip, roof, self.spec.prec)
        tol = AGREE_REL * roof["t_step"]
        terms = self.tr("Roofline terms: t_math {m} · t_mem {b} · t_comm {c}.").format(
            m=fmt_time(roof["t_math"]), b=fmt_time(roof["t_mem"]), c=fmt_time(roof["t_comm"]))
        if abs(gap["t_sim"] - gap["t_step"]) <= tol:
            if gap["compute_bound_ops"] == 0:
                why = [self.tr("Every op is memory-bound, so the simulated step equals the roofline's t_step.")]
            elif gap.get("memory_bound_ops", 1) == 0:
                why = [self.tr("Every op is compute-bound, so the simulated step equals the roofline's t_step.")]
            else:
                why = [self.tr("The simulated step equals the roofline's t_step.")]
        else:
            why = []
            if gap["per_op"] > tol:
                why.append(self.tr("+{t}: {k} ops are compute-bound; each op hides only its own memory traffic, so "
                                   "the sum of the ops is longer than max(t_math, t_mem).").format(
                    t=fmt_time(gap["per_op"]), k=gap["compute_bound_ops"]))
            if abs(gap["counted"]) > tol:
                why.append(self.tr("{t}: work the roofline leaves out (K/V projections replicated when n exceeds "
                                   "the KV heads, vocabulary padding).").format(t=_signed(gap["counted"])))
            if gap["comm"] < -tol:
                why.append(self.tr("{t}: communication hidden under compute by the overlap; {exposed} stays "
                                   "exposed.").format(t=_signed(gap["comm"]), exposed=fmt_time(gap["exposed_comm"])))
            elif gap["comm"] > tol:
                why.append(self.tr("{t}: communication the roofline does not count, or waiting for the slowest "
                                   "GPU.").format(t=_signed(gap["comm"])))
        return " ".join(why + [terms])

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


def _work(out: _Results, generation: int, spec: StepSpec, overlap: str, simulate):
    """A worker thread's job: simulate and read the trace, hand the result to the GUI thread."""
    try:
        result = StepData(spec, overlap, simulate)
    except Exception as e:  # noqa: BLE001  (shown in the view; the thread must not die silently)
        result = e
    try:
        out.ready.emit(generation, overlap, result)
    except RuntimeError:
        pass  # the view was closed meanwhile


def kind_names() -> dict:
    """Op kind -> its name in the legend and on a wide bar."""
    return {"norm": _tr("norm"), "qkv": _tr("QKV"), "attn": _tr("attention"), "o_proj": _tr("out proj"),
            "gate_up": _tr("gate/up"), "down": _tr("down"), "lm_head": _tr("LM head"), "other": _tr("other")}


def kind_short_names() -> dict:
    """Op kind -> the name on a narrow bar."""
    return {"norm": _tr("N"), "qkv": _tr("QKV"), "attn": _tr("attn"), "o_proj": _tr("Wo"),
            "gate_up": _tr("g/u"), "down": _tr("dn"), "lm_head": _tr("LM"), "other": "·"}


def _blend(c: QColor) -> str:
    """A translucent colour as the opaque colour it shows on the background (rich text has no alpha)."""
    bg = QColor(theme.palette().background)
    a = c.alphaF()
    mix = [round(a * x + (1 - a) * y)
           for x, y in zip((c.red(), c.green(), c.blue()), (bg.red(), bg.green(), bg.blue()))]
    return "#{:02X}{:02X}{:02X}".format(*mix)


def fmt_si(x: float) -> str:
    """1.23e9 -> '1.23 G', 52.4e6 -> '52.4 M' (three significant digits, SI prefix, a space before it)."""
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}"
    return f"{x:.3g} "


def _op_texts(name, short, seconds, chunks):
    """What a compute bar may say, longest first: 'down 17.5 µs · 8 chunks', 'down 17.5 µs', 'down', 'dn'."""
    t = f"{name} {fmt_time(seconds)}"
    if chunks > 1:
        return (_tr("{op} · {k} chunks").format(op=t, k=chunks), t, name, short)
    return (t, name, short)


def _signed(s: float) -> str:
    return ("+" if s >= 0 else "−") + fmt_time(abs(s))


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---------------------------------------------------------------------------------------
# Opening it
# ---------------------------------------------------------------------------------------
class StepTimelineDialog(QDialog):
    """
    A non-modal window holding one StepTimelineView. A window, not a dock: the latency view is
    a tab of the main window and a page of its own; a window works from both, can go to the
    projector's screen at its own size, and one is reused per parent, so clicks do not pile up.
    """

    def __init__(self, spec: StepSpec, overlap="none", simulate=None, sync=False, parent=None):
        super().__init__(parent)
        self.setObjectName("StepTimelineDialog")
        self.setModal(False)
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self.view = None
        self.show_spec(spec, overlap, simulate, sync)
        self.resize(round(1280 * min(theme.scale(), 1.5)), round(720 * min(theme.scale(), 1.5)))

    def show_spec(self, spec: StepSpec, overlap="none", simulate=None, sync=False):
        """Show this step: the first time a new view, then the same view with another spec."""
        if self.view is None:
            self.view = StepTimelineView(spec, overlap, simulate, sync, parent=self)
            self._lay.addWidget(self.view)
        else:
            self.view._simulate, self.view.sync = simulate, bool(sync)
            self.view.set_spec(spec, overlap)
        self.setWindowTitle(self.view.windowTitle())

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange and self.view is not None:
            self.setWindowTitle(self.view.windowTitle())
        super().changeEvent(e)


def open_step_timeline(parent, model, chip, link, n, batch, ctx, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0,
                       algo="ring", prec="bf16", overlap="none", prompt=1, simulate=None,
                       sync=False, topology="") -> StepTimelineDialog:
    """
    Open (or reuse) the step-timeline window of `parent` for this setting and show it.
    model, chip, link: keys of MODELS / CHIPS / LINKS or their records (link None or '' = the
    chip's own); the rest as cost_model.tp_decode_step (prec = its compute_prec); prompt > 1:
    a prefill step. Returns the dialog; its `.view.total()` is the simulated step in seconds
    (once `.view.step_ready` has fired; at once with sync=True). Bad values raise ValueError.
    """
    spec = StepSpec(model, chip, link, n, batch, ctx, w_bytes, kv_bytes, act_bytes, algo, prec, prompt, topology)
    dlg = parent.findChild(StepTimelineDialog) if parent is not None else None
    if dlg is None:
        dlg = StepTimelineDialog(spec, overlap, simulate, sync, parent)
    else:
        dlg.show_spec(spec, overlap, simulate, sync)
    dlg.show()
    dlg.raise_()
    return dlg


def open_from_params(parent, params: dict, n: int, **kw) -> StepTimelineDialog:
    """open_step_timeline from the decode-latency view's params() dict (model, chip, link, batch, ...)."""
    return open_step_timeline(parent, params["model"], params["chip"], params.get("link", ""), int(n),
                              params["batch"], params["ctx"], params.get("w_bytes", 2.0),
                              params.get("kv_bytes", 2.0), params.get("act_bytes", 2.0),
                              params.get("algo", "ring"), params.get("prec", "bf16"),
                              topology=params.get("machine", ""), **kw)


class StepTimelineOpener(QObject):
    """
    A slot for any signal that carries n: `opener.open_at(n)` opens the step timeline of
    `parent` for the parameters `params()` returns (the latency view's params() dict).
    """

    def __init__(self, parent, params, **kw):
        super().__init__(parent)
        self._widget, self._params, self._kw = parent, params, kw
        self.dialog = None

    @Slot(int)
    def open_at(self, n: int):
        self.dialog = open_from_params(self._widget, self._params(), n, **self._kw)


def tp_degrees(model, n_max: int = MAX_STEP_N) -> list[int]:
    """The n in 1..n_max that Megatron TP can split `model` over (cost_model.valid_tp_degrees: tp_layout's rule)."""
    return [int(n) for n in cost_model.valid_tp_degrees(model, n_max)]


def n_at_scene_pos(view, scene_pos) -> int | None:
    """
    The n a click on the latency view's decode plot (x is log10 n) asks for, or None outside the
    plot: the tensor-parallel degree nearest on the log axis (the plot's points), or the n under
    the mouse when that is above MAX_STEP_N (the caller says it cannot open that).
    """
    vb = view.plot1.getViewBox()
    if not vb.sceneBoundingRect().contains(scene_pos):
        return None
    x = vb.mapSceneToView(scene_pos).x()
    n = int(min(max(round(10 ** x), 1), view.params()["n_max"]))
    if n > MAX_STEP_N:
        return n
    degrees = tp_degrees(MODELS[view.params()["model"]])
    return min(degrees, key=lambda d: abs(math.log10(d) - x)) if degrees else n


def overlap_at_scene_pos(view, scene_pos, n: int) -> str:
    """
    Which curve a click at n asks for: "async" when the overlapped t_step is drawn and the click
    is nearer to it than to the plain t_step (on the log axis), else "none".
    """
    drawn = view.overlap_curve() if hasattr(view, "overlap_curve") else None
    if drawn is None:
        return "none"
    y = view.plot1.getViewBox().mapSceneToView(scene_pos).y()
    plain, over = (np.interp(n, xs, ys) for xs, ys in (view.curves()["t_step"], drawn))
    return "async" if abs(math.log10(over) - y) < abs(math.log10(plain) - y) else "none"


def attach_to_latency_view(view, **kw):
    """
    Make a left click on the decode-latency plot open the step timeline for the n under the
    mouse, with the overlap of the curve clicked (overlap_at_scene_pos). Returns the slot connected (keep it to disconnect). The one line the latency view needs:
    `step_timeline.attach_to_latency_view(self)` at the end of its __init__.
    """
    def on_clicked(ev):
        if ev.button() != Qt.LeftButton or ev.double():
            return
        n = n_at_scene_pos(view, ev.scenePos())
        if n is None:
            return
        ev.accept()
        if n > MAX_STEP_N:
            QToolTip.showText(QCursor.pos(), _tr("The step timeline opens for n up to {max}: it simulates every "
                                                 "ring message.").format(max=MAX_STEP_N), view.latency_widget)
            return
        open_from_params(view, view.params(), n, **{**kw, "overlap": overlap_at_scene_pos(view, ev.scenePos(), n)})

    view.latency_widget.scene().sigMouseClicked.connect(on_clicked)
    return on_clicked


# ---------------------------------------------------------------------------------------
# Command line: python -m app.step_timeline --model llama3-70b --n 8 --screenshot step.png
# ---------------------------------------------------------------------------------------
def _parser():
    p = argparse.ArgumentParser(prog="python -m app.step_timeline",
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
    from PySide6.QtWidgets import QApplication

    from .i18n import set_language

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
        print(f"simulated step {fmt_time(view.total())} (overlap {args.overlap}), roofline t_step "
              f"{fmt_time(view.roof['t_step'])}; simulation took {view.last_sim_seconds * 1e3:.0f} ms")

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
