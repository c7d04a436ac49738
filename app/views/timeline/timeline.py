"""
The timeline: one row per device, its send-port and receive-port busy time as bars taken
straight from the trace, the collectives' boundaries labelled ("layer 0 attn" …), and a
playhead. Clicking or dragging seeks the one clock.

Bars are grouped by colour into one BarGraphItem each (drawn with one drawRects call), built
once per run; a frame moves only the playhead.

Beyond GROUP_ABOVE devices a row per GPU would be a pixel or two high, so each row is a group
of GPUs (a power of two, at most MAX_ROWS rows): its upper band is how many of the group's GPUs
are sending at each moment (full height = all of them), its lower band (paler) how many are
receiving, in the colour of the group's first GPU. Every message still counts; a click still seeks.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QLineF, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsItem, QVBoxLayout, QWidget

from simcore.kind_record import record_of
from simcore.trace import SWITCH

from ... import theme
from ...core.prepared import memo, preparer
from ...words import fmt_time, is_tpu
from ..ring.ring_items import COMPUTE_HEX, message_color_indices
from ..ring.ring_layers import FABRIC_COLOR

SEND_H, RECV_H = 0.42, 0.42  # fractions of a row: send bar above the row's centre, receive below
GROUP_ABOVE = 64  # up to this many GPUs, one row each (n = 64 in a 190 px dock: 3 px rows, the old limit)
MIN_ROW_PX = 10.0  # a row per GPU only if each gets this many pixels (else rows of 2, 4, ... GPUs)
COMPACT_ROW_PX = 12.0  # presentation mode: no timeline row thinner than this (set_compact)
COMPACT_TEXT_PX = 18  # ... and its text this tall at COMPACT_AT (1.2× the desk's 15 px: read from the back at 720 p)
COMPACT_AT = 1.5  # presentation mode's first text size (classroom.presentation.PRESENTATION_SCALE)
LEAST_NAMED = 2  # at the desk the timeline asks the height to name at least this many of its rows (GPU 0, GPU 2)
LEAST_HEIGHT_SHARE = 0.3  # ... but never more than this share of the window's height
MAX_ROWS = 8  # beyond: rows of 2^k GPUs, at most this many (about 18 px each in that dock: every row named)
BAND_H, BAND_GAP = 0.42, 0.04  # a group row: send band above the centre, receive band below, full = 0.42 of a row
COMPUTE_MIN_PX = 3.0  # an op narrower than this on screen is drawn this wide: nanoseconds beside microseconds
GAP_PX = 1.0  # the gap between two steps on a busy band (times the text scale)
STARTUP_SHARE = 0.1  # a collective's wait before its first message is named when it is this share of the run
MIN_STEP_PX = 4.0  # steps narrower than this on screen are not parted (the gaps would grey the band)
FABRIC_PX = 2.0  # the dashed gold outline of a message that crosses between nodes (the ring's fabric blocks)


def node_size(run) -> int:
    """GPUs per node when the run's machine has several nodes, else 0 (one switch, a torus, no comm)."""
    rec = record_of(run.comm.topology) if getattr(run, "comm", None) is not None else None
    return int(rec.per_node) if rec is not None and rec.nodes > 1 else 0


def crosses_nodes(src: np.ndarray, dst: np.ndarray, per_node: int) -> np.ndarray:
    """Which messages leave their node (both ends GPUs on different nodes of per_node GPUs)."""
    if per_node <= 0:
        return np.zeros(len(src), bool)
    return (src >= 0) & (dst >= 0) & (src // per_node != dst // per_node)


def phase_spans(tr, per_node: int) -> list[tuple[int, str, float, float]]:
    """
    A machine's collective in its phases: per collective with more than one phase,
    (collective id, phase key, t_start, t_end) of its messages, in time order. The hierarchical
    all-reduce's reduce-scatter and all-gather across the network are one span: together they are
    the all-reduce between the nodes. Keys: "intra RS", "inter AR", "intra AG", or the engine's
    phase name (NCCL-style rings: "reduce-scatter", "all-gather").
    """
    if per_node <= 0 or not len(tr.messages):
        return []
    names = {"reduce-scatter (node)": "intra RS", "reduce-scatter (network)": "inter AR",
             "all-gather (network)": "inter AR", "all-gather (node)": "intra AG"}
    rows = tr.rows()
    key, coll = rows["key"], rows["coll"]
    codes, first = np.unique(key, return_index=True)
    phase_of = {int(c): names.get(tr.messages[int(i)].phase, tr.messages[int(i)].phase) for c, i in zip(codes, first)}
    t0, t1 = rows["t_start"], rows["t_end"]
    spans: dict[tuple[int, str], list[float]] = {}
    for c in np.unique(coll).tolist():
        in_c = coll == c
        for code in np.unique(key[in_c]).tolist():
            sel = in_c & (key == code)
            k = (c, phase_of[code])
            a, b = float(t0[sel].min()), float(t1[sel].max())
            s = spans.setdefault(k, [a, b])
            s[0], s[1] = min(s[0], a), max(s[1], b)
    per_coll: dict[int, int] = {}
    for coll, _k in spans:
        per_coll[coll] = per_coll.get(coll, 0) + 1
    out = [(c, k, a, b) for (c, k), (a, b) in spans.items() if per_coll[c] > 1]
    return sorted(out, key=lambda s: (s[2], s[0]))


def group_size(n: int, height_px: float = 0.0, row_px: float = MIN_ROW_PX, least_rows: int = MAX_ROWS,
               label_rows: float = 3.0) -> int:
    """GPUs per timeline row: 1 up to GROUP_ABOVE, else the smallest power of two giving ≤ MAX_ROWS rows.
    Given the plot's height (pixels), also groups fewer GPUs when one row each would be under
    row_px (MIN_ROW_PX: 16 GPUs in a 1280×720 window's dock: 7 px rows, now 8 rows of two).
    Presentation mode (TimelineView.set_compact) asks rows a line of its text tall and lets the rows
    drop below MAX_ROWS (least_rows=1): 8 GPUs in a short strip at 2.5× are 2 rows of 4, not 16 rows of 3 px."""
    most = MAX_ROWS
    if n <= GROUP_ABOVE:
        fit = int(height_px / row_px - label_rows)  # three rows' height go to the phase labels above
        if height_px <= 0 or n <= fit:
            return 1
        most = max(fit, least_rows)
    g = 1
    while -(-n // g) > most:
        g *= 2
    return g


def busy_bands(row: np.ndarray, t0: np.ndarray, t1: np.ndarray, rows: int, size: np.ndarray):
    """
    For each row, how many of its intervals [t0, t1) are open at each moment, as merged pieces:
    (row, start, end, fraction) arrays with fraction = open / size[row] (clipped to 1), zero pieces
    dropped and neighbours with the same count joined.
    """
    out = []
    order = np.argsort(row, kind="stable")
    row, t0, t1 = row[order], t0[order], t1[order]
    cuts = np.searchsorted(row, np.arange(rows + 1))
    for r in range(rows):
        a, b = cuts[r], cuts[r + 1]
        if a == b:
            continue
        times = np.concatenate([t0[a:b], t1[a:b]])
        delta = np.concatenate([np.ones(b - a, np.int64), -np.ones(b - a, np.int64)])
        o = np.lexsort((delta, times))  # at one instant, ends before starts
        times, level = times[o], np.cumsum(delta[o])
        # one level per distinct instant (the last event at it), then join equal neighbours
        last = np.append(times[1:] != times[:-1], True)
        times, level = times[last], level[last]
        keep = np.append(True, level[1:] != level[:-1])
        times, level = times[keep], level[keep]
        ends = np.append(times[1:], times[-1])
        nz = (level > 0) & (ends > times)
        out.append((np.full(nz.sum(), r), times[nz], ends[nz], np.minimum(level[nz] / size[r], 1.0)))
    if not out:
        e = np.empty(0)
        return e.astype(int), e, e, e
    return tuple(np.concatenate(x) for x in zip(*out))


def step_cuts(row: np.ndarray, t0: np.ndarray, t1: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """
    Where one message follows another on a row: (row, time) of every start that is also an end of
    a message of the same row (within eps). Busy bands join such neighbours into one bar; the
    timeline parts them there, so the steps of a ring read one by one.
    """
    if not len(row):
        return np.empty(0, int), np.empty(0)
    q0, q1 = np.round(t0 / eps).astype(np.int64), np.round(t1 / eps).astype(np.int64)
    span = int(max(q0.max(), q1.max())) + 1
    row = np.asarray(row, np.int64)
    # (row, instant) as one integer: sorted as the pairs are (rows first), and one 1-D sort each
    # (np.unique(axis=0) sorts the pairs as opaque bytes: 0.35 s for 130,560 messages)
    starts, ends = np.unique(row * span + q0), np.unique(row * span + q1)
    starts = starts[np.isin(starts, ends)]
    return starts // span, (starts % span) * eps


def _group_rows(trace, n: int, g: int):
    """((row, t0, t1, fraction) of the send bands, of the receive bands), (their step cuts: (rows,
    times), send then receive): the timeline's rows of g GPUs, in its time unit (time_unit)."""
    unit_s = time_unit(trace.t_end)[1]
    eps = max(trace.t_end, 1e-300) * 1e-9 / unit_s  # the view's _eps: one instant
    R = -(-n // g)
    ts = trace.column("t_start") / unit_s
    te = trace.column("t_end") / unit_s
    src_col, dst_col = trace.column("src"), trace.column("dst")
    size = np.append(np.minimum(g, n - g * np.arange(R)), 1).astype(float)  # the switch's row: 1 port
    src = np.where(src_col == SWITCH, R, src_col // g)
    dst = np.where(dst_col == SWITCH, R, dst_col // g)
    bands = tuple(busy_bands(rows_of, ts, te, R + 1, size) for rows_of in (src, dst))
    cuts = tuple(step_cuts(rows_of, ts, te, eps) for rows_of in (src, dst))
    for a in (*(x for b in bands for x in b), *(x for c in cuts for x in c)):
        a.setflags(write=False)
    return bands, cuts


def group_rows(run, g: int):
    """_group_rows of the run's trace (all its messages), made once per run and g: on the worker with
    the build when the rows are grouped (n above GROUP_ABOVE: g does not depend on the height)."""
    return memo(run, ("timeline rows", g), lambda: _group_rows(run.trace, run.n, g))


_ROWS = [None]  # (height, row rule) the timeline last made rows for: the worker makes the next run's for it


def run_phase_spans(run, per_node: int):
    """phase_spans of the run's trace, made once per run (on the worker: prepare_rows)."""
    return memo(run, ("timeline phases", per_node), lambda: tuple(phase_spans(run.trace, per_node)))


@preparer
def prepare_rows(run):
    """On the worker, with the build: a machine's phase spans and, at n above GROUP_ABOVE, the rows."""
    n = run.scenario.n
    per_node = node_size(run)
    if per_node:
        run_phase_spans(run, per_node)
    g = group_size(n, *_ROWS[0]) if _ROWS[0] is not None else group_size(n)
    if len(run.trace.messages) and g > 1:
        group_rows(run, g)


def time_unit(t_end: float) -> tuple[str, float]:
    """A display unit for an axis spanning [0, t_end] seconds: (name, seconds per unit)."""
    if t_end >= 1.0:
        return "s", 1.0
    if t_end >= 1e-3:
        return "ms", 1e-3
    if t_end >= 1e-6 or t_end == 0:
        return "µs", 1e-6
    return "ns", 1e-9


class BarsItem(pg.GraphicsObject):
    """
    Every send and receive bar in one item: one drawRects per colour, cached as one picture
    of the visible range, so a frame that only moves the playhead blits instead of redrawing
    thousands of rectangles (one pyqtgraph BarGraphItem per colour, cached or not, is slower).
    """

    def __init__(self, groups, pen):
        super().__init__()
        self.groups = groups  # [(QBrush, [QRectF, ...]), ...] in data coordinates
        self.pen = pen
        rect = QRectF()
        for _b, rects in groups:
            for r in rects:
                rect = rect.united(r)
        self._rect = rect
        self.hide_from = None  # data x from which nothing is painted (predict-then-reveal)
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)

    def count(self) -> int:
        return sum(len(r) for _b, r in self.groups)

    def boundingRect(self):
        return self._rect

    def paint(self, p, *args):
        if self.hide_from is not None:
            r = self._rect
            p.setClipRect(QRectF(r.left(), r.top(), max(self.hide_from - r.left(), 0.0), r.height()))
        p.setPen(self.pen)
        for brush, rects in self.groups:
            p.setBrush(brush)
            p.drawRects(rects)


class StepGaps(pg.GraphicsObject):
    """
    A thin gap in the background's colour at each step boundary of a band (step_cuts), painted in
    screen pixels: GAP_PX wide (times the text scale), and only where it is at least MIN_STEP_PX from
    the gap drawn before it on the band, so steps too narrow to part stay one bar instead of a grey blur.
    """

    def __init__(self, x, y0, y1, color):
        super().__init__()
        order = np.lexsort((x, y0))
        self.x, self.y0, self.y1 = x[order], y0[order], y1[order]
        self.color = QColor(color)
        self._rect = QRectF() if not len(x) else QRectF(
            float(x.min()), float(min(y0.min(), y1.min())), float(np.ptp(x)) or 1e-12,
            float(max(y0.max(), y1.max()) - min(y0.min(), y1.min())))
        self.hide_from = None

    def boundingRect(self):
        return self._rect

    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        return None  # the bars decide the range

    def lines(self, to_device) -> list:
        """[(x, top, bottom)] in device pixels of the gaps drawn at this transform."""
        sx, dx = to_device.m11(), to_device.dx()
        sy, dy = to_device.m22(), to_device.dy()
        if sx <= 0 or not len(self.x):
            return []
        xs = self.x * sx + dx
        out, last_y, last_x = [], None, -np.inf
        limit = np.inf if self.hide_from is None else self.hide_from * sx + dx
        for x, a, b in zip(xs.tolist(), (self.y0 * sy + dy).tolist(), (self.y1 * sy + dy).tolist()):
            if a != last_y:
                last_y, last_x = a, -np.inf
            if x - last_x >= MIN_STEP_PX and x < limit:
                out.append((x, min(a, b), max(a, b)))
                last_x = x
        return out

    def paint(self, p, *args):
        gaps = self.lines(p.transform())
        if not gaps:
            return
        p.save()
        p.resetTransform()
        pen = QPen(self.color, max(1.0, GAP_PX * theme.scale()))
        pen.setCapStyle(Qt.FlatCap)
        p.setPen(pen)
        p.drawLines([QLineF(x, a, x, b) for x, a, b in gaps])
        p.restore()


class NameBesideLine(pg.TextItem):
    """A name whose left end is at a time on the axis, drawn `playhead_clear()` pixels right of it: a
    collective or a phase starting at t = 0 was covered by the red playhead, which stands there at
    the start of every scene (3 px wide at 1×, 7.5 px at 2.5×, wider under the mouse)."""

    def updateTextPos(self):
        super().updateTextPos()
        self.textItem.setPos(self.textItem.pos() + QPointF(playhead_clear(), 0.0))


def playhead_clear() -> float:
    """Pixels between a time and the names that start there: half the playhead's width under the
    mouse (its hover pen, 1.7 times its own) and a gap as wide as the text's own margin."""
    return theme.line("playhead") * 1.7 / 2 + 2.0


class TimelineView(QWidget):
    """Follows a ScenarioModel (rebuilds its bars) and the frames the playback's frame controller
    hands it (`set_frame`: moves the playhead, hides what the predict mask hides)."""

    def __init__(self, model, playback, parent=None):
        super().__init__(parent)
        self.setObjectName("TimelineView")
        self.model, self.playback = model, playback
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("timelinePlot")
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        vb = self.plot.getViewBox()
        vb.setMouseEnabled(x=True, y=False)
        vb.invertY(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.plot)
        self.playhead = pg.InfiniteLine(pos=0, angle=90, movable=True)
        self.playhead.setZValue(100)
        self.playhead.sigDragged.connect(self._on_playhead_dragged)
        self.plot.scene().sigMouseClicked.connect(self._on_scene_clicked)
        vb.sigResized.connect(self._on_viewbox_resized)
        vb.sigXRangeChanged.connect(self._on_viewbox_x_range_changed)
        # the unit is in the axis title already (time_unit); pyqtgraph's own "(x1e-12)" would repeat it
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.getAxis("bottom").geometryChanged.connect(self._on_time_axis_geometry_changed)
        self.note = pg.TextItem(anchor=(0.5, 0.5))  # said instead of bars when nothing is sent
        self.note.setZValue(50)
        self._items = []
        self.unit, self.unit_s = "µs", 1e-6
        self._apply_theme()
        self._hidden_after = playback.frames.register(self).hidden_after  # a question may be open already
        self._build(model.run)
        model.changed.connect(self._on_model_changed)
        theme.notifier().changed.connect(self._on_theme_changed)
        self.retranslate_ui()

    # -- signals ---------------------------------------------------------------------------
    def _on_model_changed(self, run):
        self._build(run)

    def set_frame(self, frame):
        """The playhead at the frame's time; no bar from the predict mask's time on."""
        if frame.index is not self.model.run.index:  # a frame of the run about to be built (_on_model_changed)
            return
        self.playhead.setValue(frame.t / self.unit_s)
        if frame.hidden_after != self._hidden_after:
            self._hide_after(frame.hidden_after)

    def _on_theme_changed(self):
        self._apply_theme()
        self._build(self.model.run)

    def _on_viewbox_x_range_changed(self, *_):
        self._fit_phase_labels()  # zoomed in, more names fit
        self._fit_collective_labels()
        self._fit_startup_labels()

    def _on_time_axis_geometry_changed(self):
        if self.plot.getAxis("bottom").width() != getattr(self, "_title_room", None):
            self._title_room = self.plot.getAxis("bottom").width()
            self._fit_axis_title()

    def _on_playhead_dragged(self, line):
        self.playback.seek(line.value() * self.unit_s)

    def _on_scene_clicked(self, ev):
        if ev.button() != Qt.LeftButton:
            return
        vb = self.plot.getViewBox()
        pos = ev.scenePos()
        if not vb.sceneBoundingRect().contains(pos):
            return
        x = vb.mapSceneToView(pos).x()
        self.playback.seek(max(0.0, x) * self.unit_s)
        ev.accept()

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def retranslate_ui(self):
        self.setWindowTitle(self.tr("Timeline"))
        one = getattr(self, "n", 2) == 1
        run = self.model.run if getattr(self, "model", None) is not None else None
        chips = run is not None and run.comm is not None and is_tpu(run.comm.topology)  # a TPU's devices are chips
        if chips:
            self.note.setText(self.tr("n = 1: one chip holds everything, nothing is sent.") if one else
                              self.tr("No communication in this scenario: nothing is sent."))
        else:
            self.note.setText(self.tr("n = 1: one GPU holds everything, nothing is sent.") if one else
                              self.tr("No communication in this scenario: nothing is sent."))
        if getattr(self, "group", 1) > 1:
            self.setToolTip(self.tr("Each row: a group of chips. Upper band = how many of them are sending, lower "
                                    "(paler) band = how many are receiving; full height = all. Click to jump there.")
                            if chips else
                            self.tr("Each row: a group of GPUs. Upper band = how many of them are sending, lower "
                                    "(paler) band = how many are receiving; full height = all. Click to jump there."))
        elif getattr(self, "compute_bars", None) is not None:
            self.setToolTip(self.tr("Each chip: upper bar = sending, lower bar = receiving, grey over the whole "
                                    "row = computing an op. Click to jump there.") if chips else
                            self.tr("Each GPU: upper bar = sending, lower bar = receiving, grey over the whole "
                                    "row = computing an op. Click to jump there."))
        else:
            self.setToolTip(self.tr("Each chip: upper bar = sending, lower bar = receiving. Click to jump there.")
                            if chips else
                            self.tr("Each GPU: upper bar = sending, lower bar = receiving. Click to jump there."))
        self._fit_axis_title()
        self._ticks_for = None  # the words changed: set the ticks again
        self._set_row_ticks()

    def _axis_titles(self) -> list:
        """The time axis' title, longest first: with the compute lane's and the fabric's legends, then
        without them, then "time (µs)", then the unit alone. Every one names the unit."""
        full = html.escape(self.tr("simulated time ({unit})").format(unit=self.unit))
        label = full
        if getattr(self, "compute_bars", None) is not None:  # the compute lane's legend
            label += (f"&nbsp;&nbsp;&nbsp;<span style='color:{COMPUTE_HEX}'>■</span>&nbsp;"
                      + html.escape(self.tr("compute (each op, at least {px} px wide)").format(px=int(COMPUTE_MIN_PX))))
        if getattr(self, "fabric_bars", None) is not None:  # messages between nodes: the ring's fabric outline
            label += (f"&nbsp;&nbsp;&nbsp;<span style='color:{FABRIC_COLOR}'>┅</span>&nbsp;"
                      + html.escape(self.tr("dashed gold outline: crosses between nodes (NIC)")))
        short = html.escape(self.tr("time ({unit})").format(unit=self.unit))
        return list(dict.fromkeys([label, full, short, html.escape(f"({self.unit})")]))

    def _fit_axis_title(self):
        """The longest of _axis_titles whose painted width fits the time axis: at 2× text in a 330 px
        dock the whole title was centred past both ends and read "simulated time (µ"."""
        ax = self.plot.getAxis("bottom")
        room = ax.width()
        for label in self._axis_titles():
            if label != ax.labelText:
                self.plot.setLabel("bottom", label)
            if room <= 0 or ax.label.boundingRect().width() - 2 * ax.label.document().documentMargin() <= room:
                break
        if self.compact:  # (setLabel shows the title again)
            ax.showLabel(False)
        # pyqtgraph centres an axis title only when the axis is resized: a new title of another
        # width (the compute legend coming or going, a language) would stay where the old one was
        ax.resizeEvent()

    # -- building ----------------------------------------------------------------------------
    def _apply_theme(self):
        pal = theme.palette()
        self.plot.setBackground(pal.background)
        font = self._small()
        for name in ("left", "bottom"):
            ax = self.plot.getAxis(name)
            ax.setTickFont(font)
            ax.setPen(pg.mkPen(pal.text))
            ax.setTextPen(pg.mkPen(pal.text))
            ax.label.setFont(font)
        self.playhead.setPen(pg.mkPen(pal.playhead, width=theme.line("playhead")))
        self.note.setFont(theme.font("body"))
        self.note.setColor(pal.text_muted)
        self.playhead.setHoverPen(pg.mkPen(pal.playhead, width=theme.line("playhead") * 1.7))

    def _build(self, run):
        for it in self._items:
            self.plot.removeItem(it)
        self._items = []
        if self.playhead.scene() is None:
            self.plot.addItem(self.playhead)
        if self.note.scene() is None:
            self.plot.addItem(self.note, ignoreBounds=True)
        tr = run.trace
        n = run.scenario.n
        self.n = n
        _ROWS[0] = (self.plot.getViewBox().height(), *self._row_rule())  # the next run's rows are made for it
        self.group = g = group_size(n, *_ROWS[0])
        src_col, dst_col = tr.column("src"), tr.column("dst")
        self.has_switch = bool(np.any(src_col == SWITCH) or np.any(dst_col == SWITCH))
        total = tr.t_end
        self.unit, self.unit_s = time_unit(total)
        self.n_rows = -(-n // g)  # GPU rows; the switch's, if any, comes after them
        self.per_node = node_size(run)
        self.fabric_bars = None
        self.gaps = None
        self._eps = max(total, 1e-300) * 1e-9 / self.unit_s  # times closer than this are one instant (axis units)
        self._phase_texts = []
        self._coll_texts = []
        self.startup_texts = []
        rows = self.n_rows + (1 if self.has_switch else 0)
        if len(tr.messages) and g > 1:
            self._build_groups(run, n, g)
        elif len(tr.messages):
            colors = theme.device_colors(n)
            neutral = QColor(theme.palette().text_muted)
            ts = tr.column("t_start") / self.unit_s
            te = tr.column("t_end") / self.unit_s
            src = np.where(src_col == SWITCH, n, src_col).astype(float)
            dst = np.where(dst_col == SWITCH, n, dst_col).astype(float)
            cidx = message_color_indices(tr, n)
            # gaps between bars read well for a few rows; with many thin rows they alias into
            # white stripes, so dense timelines fill every row completely
            if n <= 16:
                send_h, recv_h, fill, gap = SEND_H, RECV_H, 0.92, 0.02
            else:
                send_h, recv_h, fill, gap = 0.5, 0.5, 1.0, 0.0
            groups = []
            for ci in np.unique(cidx):
                sel = cidx == ci
                rects = [QRectF(a, y, b - a, h)
                         for y0, h in ((src[sel] - send_h, send_h * fill), (dst[sel] + gap, recv_h * fill))
                         for a, b, y in zip(ts[sel], te[sel], y0)]
                groups.append((QBrush(neutral if ci < 0 else colors[ci]), rects))
            pen = QPen(QColor(theme.palette().text)) if n <= 16 else QPen(Qt.NoPen)
            pen.setCosmetic(True)
            pen.setWidthF(0.7)
            self.bars = BarsItem(groups, pen)
            self.bars.hide_from = None if self._hidden_after is None else self._hidden_after / self.unit_s
            self.plot.addItem(self.bars)
            self._items.append(self.bars)
            if n > 16:  # no outlines here: a gap parts two steps on a row
                self._add_step_gaps([(r, t, r - send_h if up else r + gap, r if up else r + gap + recv_h * fill)
                                     for (r, t), up in ((step_cuts(src.astype(int), ts, te, self._eps), True),
                                                        (step_cuts(dst.astype(int), ts, te, self._eps), False))])
            cross = crosses_nodes(src_col, dst_col, self.per_node)
            if cross.any():  # the ring's fabric blocks' dashed gold outline, over both bars of the message
                rects = [QRectF(a, y, b - a, h)
                         for y0, h in ((src[cross] - send_h, send_h * fill), (dst[cross] + gap, recv_h * fill))
                         for a, b, y in zip(ts[cross], te[cross], y0)]
                fpen = QPen(QColor(FABRIC_COLOR))
                fpen.setCosmetic(True)
                # thin rows (a short dock) keep their device colours: the outline at most a quarter of a row
                row_px = self.plot.getViewBox().height() / max(rows + 3.0, 1.0)
                fpen.setWidthF(FABRIC_PX if row_px <= 0 else min(FABRIC_PX, max(0.8, 0.25 * row_px)))
                fpen.setDashPattern([3.0, 2.0])
                self.fabric_bars = BarsItem([(QBrush(Qt.NoBrush), rects)], fpen)
                self.fabric_bars.hide_from = self.bars.hide_from
                self.fabric_bars.setZValue(2)
                self.plot.addItem(self.fabric_bars)
                self._items.append(self.fabric_bars)
        self.compute_bars = None
        if tr.computes and g == 1:
            self._build_compute(tr, n)
        # collective boundaries with their labels, on two alternating tiers above the rows
        tier = max(1.0, 0.08 * rows)
        lift = 0.0
        if self.per_node and total > 0 and len(tr.messages):  # room for the phases' tier
            # three tiers of text over the rows: each as tall as a line of the small font on screen
            # (tier * vb_h / (rows + 3 * tier) >= line), when the view has its height already
            line_px = QFontMetricsF(self._small()).height() * 1.05
            vb_h = self._tier_h = self.plot.getViewBox().height()
            if vb_h > 4 * line_px:
                tier = max(tier, line_px * rows / (vb_h - 3.2 * line_px))
            lift = 0.8 * tier
        for i, c in enumerate(tr.collectives if total > 0 else ()):  # all at t = 0 otherwise: the note says it
            pen = pg.mkPen(theme.palette().text_muted, width=theme.line("hairline"), style=Qt.DashLine)
            line = pg.InfiniteLine(pos=c.t_start / self.unit_s, angle=90, pen=pen)
            self.plot.addItem(line)
            self._items.append(line)
            label = c.label or c.op
            txt = NameBesideLine(label, color=theme.palette().text, anchor=(0, 0.5))
            txt.setFont(self._small())
            txt.setPos(c.t_start / self.unit_s, -tier * (1.0 + 0.8 * (i % 2)) - lift)
            self.plot.addItem(txt)
            self._items.append(txt)
            self._coll_texts.append(txt)
        if total > 0 and len(tr.messages):
            self._startup_labels(tr, rows)
        top = -tier * (1.6 + (0.8 if len(tr.collectives) > 1 else 0.0))
        if lift:  # a machine's phases on a tier of their own, under the collectives' labels
            self._phase_labels(run_phase_spans(run, self.per_node), tier)
            top -= lift
        vb = self.plot.getViewBox()
        # nothing sent (matmul case 1, n = 1): an axis of one unit and a sentence, not a 1e-12 wide range
        span = total / self.unit_s if total > 0 else 1.0
        self.note.setVisible(not len(tr.messages))
        self.note.setPos(span / 2, (top + rows) / 2)
        vb.setLimits(xMin=-0.02 * span, xMax=span * 1.05, yMin=top - 0.2, yMax=rows + 0.2)
        vb.setRange(xRange=(0, span), yRange=(top, rows - 0.45), padding=0.01)
        self._rows = rows
        self.playhead.setBounds((0, span))
        self.playhead.setValue(self.playback.frames.current().t / self.unit_s)
        self.retranslate_ui()
        self._fit_phase_labels()
        self._fit_collective_labels()
        self._fit_startup_labels()

    def _startup_labels(self, tr, rows):
        """A collective whose first message starts well after the call (NCCL's NVLS Tree on two DGX
        nodes: 66.8 µs of a 71 µs call at 1 MiB) leaves the rows empty there: a bracket over that span
        and its name with its length, "start-up latency 66.8 µs", read from the trace."""
        colour = QColor(theme.palette().text_muted)
        y = min(rows, 2) / 2 - 0.5  # over the first rows (a row's centre is its index)
        for c in tr.collectives:
            starts = tr.column("t_start", c.id)
            if not len(starts):
                continue
            gap = float(starts.min()) - c.t_start
            if gap <= STARTUP_SHARE * tr.t_end:
                continue
            x0, x1 = c.t_start / self.unit_s, (c.t_start + gap) / self.unit_s
            line = pg.PlotCurveItem([x0, x1], [y, y], pen=pg.mkPen(colour, width=theme.line("hairline"),
                                                                   style=Qt.DotLine))
            self.plot.addItem(line)
            self._items.append(line)
            txt = pg.TextItem(self.tr("start-up latency {t}").format(t=fmt_time(gap)), color=colour,
                              anchor=(0.5, 0.5), fill=pg.mkBrush(theme.palette().background))
            txt.setFont(self._small())
            txt.setPos((x0 + x1) / 2, y)
            self.plot.addItem(txt)
            self._items.append(txt)
            self.startup_texts.append((txt, x0, x1))

    def _fit_startup_labels(self):
        """A start-up's name shows only where it fits inside its own span."""
        upp = self.plot.getViewBox().viewPixelSize()[0]
        for txt, x0, x1 in self.startup_texts:
            m = txt.textItem.document().documentMargin()
            w = txt.textItem.boundingRect().width() - 2 * m
            txt.setVisible(bool(upp > 0 and w + 8 <= (x1 - x0) / upp))

    def _fit_collective_labels(self):
        """A collective's name shows only where it is clear of the names shown before it (in time
        order, on either tier): the lecture's recorded run has 16 of its 24 collectives in its first
        fifth, and their names were drawn into one another. The dashed lines still mark every one."""
        vb = self.plot.getViewBox()
        if not self._coll_texts or not vb.width() > 0:
            return
        shown = []
        for txt in self._coll_texts:
            m = txt.textItem.document().documentMargin()
            box = txt.textItem.boundingRect()
            p = vb.mapViewToScene(txt.pos())
            w, h = box.width() - 2 * m, box.height() - 2 * m
            r = QRectF(p.x() + playhead_clear(), p.y() - h / 2, w, h).adjusted(-3, 0, 3, 0)  # a space apart
            shown = [o for o in shown if o.right() > r.left()]  # in time order: those left of it are past
            fits = not any(r.intersects(o) for o in shown)
            txt.setVisible(fits)
            if fits:
                shown.append(r)

    def _phase_labels(self, spans, tier):
        """Each phase of a machine's collective as a bracket over its span with its name
        ("intra RS" …) just above the rows, the way the collectives' labels name them."""
        pal = theme.palette()
        names = {"intra RS": self.tr("intra-node RS"), "inter AR": self.tr("inter-node AR"),
                 "intra AG": self.tr("intra-node AG"), "reduce-scatter": self.tr("reduce-scatter"),
                 "all-gather": self.tr("all-gather")}
        y = -tier * 0.75
        for _c, key, a, b in spans:
            inter = key.startswith("inter")
            colour = QColor(FABRIC_COLOR) if inter else QColor(pal.text_muted)
            x0, x1 = a / self.unit_s, b / self.unit_s
            br = pg.PlotCurveItem([x0, x0, x1, x1], [y + 0.3 * tier, y, y, y + 0.3 * tier],
                                  pen=pg.mkPen(colour, width=theme.line("hairline")))
            self.plot.addItem(br)
            self._items.append(br)
            txt = NameBesideLine(names.get(key, key), color=colour, anchor=(0, 0.85))
            txt.setFont(self._small())
            txt.setPos(x0, y)
            self.plot.addItem(txt)
            self._items.append(txt)
            self._phase_texts.append((txt, x0, x1))

    def _fit_phase_labels(self):
        """A phase's name shows only where it fits over its own span, clear of the name shown before
        it: NCCL's NVLS Tree spends 66.8 µs of a 71 µs call starting up, and its three phases' names
        were piled on one another in the last few pixels."""
        upp = self.plot.getViewBox().viewPixelSize()[0]  # time units a pixel
        if not upp > 0:
            return
        right = -np.inf
        for txt, x0, x1 in self._phase_texts:
            start = x0 / upp + playhead_clear()
            width = txt.textItem.boundingRect().width()
            fits = start + width <= x1 / upp + 4 and start >= right
            txt.setVisible(bool(fits))
            if fits:
                right = start + width + 6

    def _build_compute(self, tr, n):
        """
        The compute lane: each op (trace.computes) as a bar over its GPU's whole row, in the
        compute colour, between that GPU's send and receive bars (a device computes while its
        ports are idle). Its outline is COMPUTE_MIN_PX wide on screen, so an op of nanoseconds
        still shows beside collectives of microseconds.
        """
        h = SEND_H + RECV_H if n <= 16 else 1.0
        rects = [QRectF(c.t_start / self.unit_s, c.device - h / 2, (c.t_end - c.t_start) / self.unit_s, h)
                 for c in tr.computes if c.device < n]
        pen = QPen(QColor(COMPUTE_HEX))
        pen.setCosmetic(True)
        pen.setWidthF(COMPUTE_MIN_PX)
        self.compute_bars = BarsItem([(QBrush(QColor(COMPUTE_HEX)), rects)], pen)
        self.compute_bars.hide_from = None if self._hidden_after is None else self._hidden_after / self.unit_s
        self.compute_bars.setZValue(1)  # over the send / receive bars' outlines where a pixel holds both
        self.plot.addItem(self.compute_bars)
        self._items.append(self.compute_bars)

    def _build_groups(self, run, n, g):
        """Rows of g GPUs: per row, a send band above its centre and a receive band below, each as
        high as the share of the row's GPUs busy at that moment (busy_bands)."""
        R = self.n_rows
        bands, cuts = group_rows(run, g)  # prepared on the worker with the run (app.core.prepared)
        colors = theme.device_colors(n)  # a group in its first GPU's colour: the ring's colour key names them
        neutral = QColor(theme.palette().text_muted)
        by_colour: dict[int, list] = {}
        for (row, a, b, frac), up in zip(bands, (True, False)):
            h = BAND_H * frac  # a gap between the send and the receive band, and between rows
            y = np.where(up, row - BAND_GAP - h, row + BAND_GAP)
            for r, x0, x1, yy, hh in zip(row.tolist(), a.tolist(), b.tolist(), y.tolist(), h.tolist()):
                by_colour.setdefault((r, up), []).append(QRectF(x0, yy, x1 - x0, hh))
        groups = []
        for (r, up), rects in sorted(by_colour.items()):
            col = QColor(neutral if r == R else colors[r * g])
            groups.append((QBrush(col if up else col.lighter(135)), rects))  # receiving: the paler band
        pen = QPen(Qt.NoPen)
        self.bars = BarsItem(groups, pen)
        self.bars.hide_from = None if self._hidden_after is None else self._hidden_after / self.unit_s
        self.plot.addItem(self.bars)
        self._items.append(self.bars)
        cuts = list(zip(cuts, (True, False)))
        self._add_step_gaps([(r, t, r - BAND_GAP - BAND_H if up else r + BAND_GAP,
                              r - BAND_GAP if up else r + BAND_GAP + BAND_H) for (r, t), up in cuts])

    def _add_step_gaps(self, bands):
        """StepGaps over the bars: bands is [(rows, times, y top, y bottom)] in data units."""
        x = np.concatenate([t for _r, t, _a, _b in bands])
        y0 = np.concatenate([np.broadcast_to(a, t.shape) for _r, t, a, _b in bands]).astype(float)
        y1 = np.concatenate([np.broadcast_to(b, t.shape) for _r, t, _a, b in bands]).astype(float)
        self.gaps = StepGaps(x, y0, y1, theme.palette().background)
        self.gaps.hide_from = self.bars.hide_from
        self.gaps.setZValue(3)
        self.plot.addItem(self.gaps)
        self._items.append(self.gaps)

    def _on_viewbox_resized(self, *_):
        run = self.model.run
        _ROWS[0] = (self.plot.getViewBox().height(), *self._row_rule())  # the next run's rows: for this height
        if run is not None and group_size(run.scenario.n, self.plot.getViewBox().height(),
                                          *self._row_rule()) != getattr(self, "group", 1):
            self._build(run)  # rows of more (or fewer) GPUs: each row keeps MIN_ROW_PX
            return
        self._set_row_ticks()
        self._fit_phase_labels()
        self._fit_collective_labels()
        self._fit_startup_labels()
        # a machine's phase labels are a tier sized in pixels: laid out again when the height changes much
        h = self.plot.getViewBox().height()
        if getattr(self, "per_node", 0) and abs(h - getattr(self, "_tier_h", 0.0)) > 0.15 * max(h, 1.0):
            self._build(self.model.run)

    compact = False  # presentation mode's short timeline (set_compact)

    def set_compact(self, on: bool):
        """Presentation mode's short timeline: rows at least a line of the row labels' text tall
        (COMPACT_ROW_PX at the least; GPUs grouped as the height asks), and the time axis without its
        title line (its ticks stay; the ring's header gives the clock with its unit)."""
        if bool(on) == self.compact:
            return
        self.compact = bool(on)
        self.plot.getAxis("bottom").showLabel(not self.compact)
        self._apply_theme()
        self._ticks_for = None
        if self.model.run is not None:
            self._build(self.model.run)

    def _small(self):
        """The timeline's text font: the theme's small one. Presentation mode's short strip grows it
        more slowly, as the square root of the text size from COMPACT_TEXT_PX at presentation's first
        1.5× (38 px at 2.5× left no room for a single row under its ticks; a fixed 18 px cap left
        Ctrl+= without effect on the timeline): 18, 21, 23, 25 px at 1.5×, 2×, 2.5×, 3×."""
        f = theme.font("small")
        if self.compact:
            grown = COMPACT_TEXT_PX * (theme.scale() / COMPACT_AT) ** 0.5
            f.setPixelSize(min(f.pixelSize(), max(round(theme.FONT_PX["small"]), round(grown))))
        return f

    def _row_rule(self) -> tuple:
        """(least row pixels, least rows) for group_size: the desk's, or presentation's (set_compact)."""
        if not self.compact:
            return MIN_ROW_PX, MAX_ROWS, 3.0
        line = QFontMetricsF(self._small()).height()
        row = max(COMPACT_ROW_PX, line * 1.12)  # a row label (_set_row_ticks: 1.1 lines) on every row
        return row, 1, 1.2 * line / row  # the labels above: a line of text

    def _set_row_ticks(self):
        """One 'GPU d' tick per row when they fit, else every 2nd, 4th… so labels never collide."""
        n = getattr(self, "n", 0)
        vb = self.plot.getViewBox()
        rows_shown = max(vb.viewRange()[1][1] - vb.viewRange()[1][0], 1.0)
        row_px = max(vb.height(), 1.0) / rows_shown
        label_px = QFontMetricsF(self._small()).height() * (1.0 if self.compact else 1.1)  # (compact: no gap)
        stride = next((s for s in (1, 2, 4, 8, 16, 32, 64) if s * row_px >= label_px), 64)
        g, R = getattr(self, "group", 1), getattr(self, "n_rows", n)
        # the stride that still names LEAST_NAMED rows (a power of two, as the strides are)
        wide = 1 << max(0, (max(1, -(-R // LEAST_NAMED))).bit_length() - 1)
        self._fit_least_height(label_px * rows_shown / wide, vb.height())
        run = self.model.run
        chips = run is not None and run.comm is not None and is_tpu(run.comm.topology)  # a TPU's devices are chips
        if (stride, n, g, chips) == getattr(self, "_ticks_for", None):
            return
        self._ticks_for = (stride, n, g, chips)
        tr = QCoreApplication.translate
        if g == 1:
            ticks = [(d - 0.05, (tr("TimelineView", "chip {d}") if chips else tr("TimelineView", "GPU {d}")).format(d=d))
                     for d in range(0, n, stride)]
        else:
            some = tr("TimelineView", "chips {a}–{b}") if chips else tr("TimelineView", "GPUs {a}–{b}")
            ticks = [(r - 0.05, some.format(a=r * g, b=min(n, (r + 1) * g) - 1)) for r in range(0, R, stride)]
        if getattr(self, "has_switch", False):
            ticks.append((R, tr("TimelineView", "switch")))
        self.plot.getAxis("left").setTicks([ticks, []])
        self._fit_axes([label for _pos, label in ticks])

    def _fit_least_height(self, rows_px: float, vb_h: float):
        """
        At the desk, the least height that names LEAST_NAMED rows: at 1280×720 and 2× the window
        squeezed the dock to 324×128 and only "GPU 0" of 4 was named (GPU 0 and GPU 2 now; a height
        for every row took the ring's room, which then fell to a sketch without slots). At most
        LEAST_HEIGHT_SHARE of the window's height; presentation mode's short strip (compact) keeps
        its own rule.
        """
        win = self.window()
        if self.compact or win is self or not win.isVisible():
            least = 0
        else:
            overhead = max(self.height() - vb_h, 0.0)  # the time axis, the collectives' names, the frame
            least = int(min(np.ceil(overhead + rows_px), LEAST_HEIGHT_SHARE * win.height()))
        if abs(least - self.minimumHeight()) >= 2 or (least == 0) != (self.minimumHeight() == 0):
            self._least = least  # set once the build or resize under way is over (a resize from inside
            QTimer.singleShot(0, self, self._apply_least_height)  # it left the plot's scene at the old size)

    def _apply_least_height(self):
        least = getattr(self, "_least", None)
        if least is not None and least != self.minimumHeight():
            self.setMinimumHeight(least)

    def _fit_axes(self, row_labels):
        """
        Each axis' room from what it shows now: the row labels' widest, the tick font's height.
        pyqtgraph left to itself keeps the room of the largest labels it has painted (it grows at
        once but shrinks only by more than 10 px), so after n = 64 → 10 the "GPU 63" room stayed,
        and after a larger text size and back the time axis stayed taller: the picture then
        differed from a fresh build's. Measured as AxisItem.generateDrawSpecs measures its texts.
        """
        fm = QFontMetricsF(self._small())
        box = QRectF(0, 0, 100, 100)
        left, bottom = self.plot.getAxis("left"), self.plot.getAxis("bottom")
        text_w = max((fm.boundingRect(box, Qt.AlignCenter, s).width() for s in row_labels), default=0.0)
        left.setWidth(int(np.ceil(text_w)) + left.style["tickTextOffset"][0] + max(0, left.style["tickLength"]))
        text_h = fm.boundingRect(box, Qt.AlignCenter, "0").height() * 0.8
        bottom.setHeight(text_h + bottom.style["tickTextOffset"][1] + max(0, bottom.style["tickLength"])
                         + (0 if self.compact else bottom.label.boundingRect().height() * 0.8))  # its title

    # -- the predict mask (frame.hidden_after, put there by app/classroom/predict_ui.py) -------------
    _hidden_after = None
    _phase_texts: list = []
    _coll_texts: list = []
    startup_texts: list = []  # (TextItem, x0, x1): a collective's start-up span and its name

    def _hide_after(self, t0):
        """Paint no bar from t0 (s) on: the step a student is predicting. None paints them all."""
        self._hidden_after = t0
        for bars in (getattr(self, "bars", None), getattr(self, "compute_bars", None),
                     getattr(self, "fabric_bars", None), getattr(self, "gaps", None)):
            if bars is not None:
                bars.hide_from = None if t0 is None else t0 / self.unit_s
                bars.update()
