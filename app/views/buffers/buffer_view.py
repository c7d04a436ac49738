"""
Buffers: the values in every GPU's buffer during a collective, one row per GPU.

A row is device d's whole buffer (L values, cut into chunks by thin lines); a cell's colour is
its value on fixed levels, the same for the whole collective, so a reduce-scatter's sums visibly
grow and an all-gather's rows fill in. A chunk a device does not hold yet is hatched grey —
"no data", not 0 (white).

What is shown at time t is what `simcore.trace.buffer_values(run.index.holdings(c, t), inputs,
n_chunks)` returns, computed from the index's array form of the same holdings (`held`: contributor
bitsets) as one matrix product per chunk, and only for the slots a message changed: the engine's
own holdings, so scrubbing and stepping back cost the same as playing, at n = 256 too. Items are
created once; a frame only calls setImage, and only when a message has arrived since the last.

The inputs are a collective scenario's (`run.inputs`) or, on a mesh run, the arrays each collective
over a mesh axis ran on (the engine's AxisCollective record, laid out in the trace's chunk order by
app.core.mesh_model.MeshInfo.buffers): the same rule draws every group of the axis at once, one row
per device. A mesh collective whose messages do not each carry one chunk (all-to-all, ppermute, the
multi-axis ring) says so in a sentence, and the next collective draws again.
"""

from __future__ import annotations

from ... import _compat  # noqa: F401  (PySide6 6.12 on Python < 3.12: see app/_compat.py)

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPainter, QPen, QPixmap
from PySide6.QtWidgets import (QGraphicsRectItem, QHBoxLayout, QLabel, QSizePolicy, QStackedWidget,
                               QVBoxLayout, QWidget)

from simcore.algorithms import BLOCKS, slots_of
from simcore.trace import ALL, SWITCH, chunk_bounds

from ...core import scenarios
from ...core.mesh_model import BUFFER_OPS
from ... import theme
from ...words import is_tpu, mesh_op_words, op_title
from ...hint import hint_page

COLORMAP = "CET-D1A"  # diverging blue–white–red: 0 is white, the sign is the hue


def slot_values(held, inputs, bounds, rows, chunks):
    """
    The values device rows[i] holds in chunk chunks[i] of a `simcore.holdings.Held` snapshot:
    sum(inputs[contributors]) over the chunk's cells, NaN if not held — the rule of
    `simcore.trace.buffer_values`, with the contributor sets as bitsets: one (slots × n) @
    (n × cells) product per chunk. Yields (rows, first cell, end cell, values) per chunk.
    """
    n = inputs.shape[0]
    rows, chunks = np.asarray(rows, np.int64), np.asarray(chunks, np.int64)
    order = np.argsort(chunks, kind="stable")
    rows, chunks = rows[order], chunks[order]
    cuts = np.flatnonzero(np.diff(chunks)) + 1
    for rs, cs in zip(np.split(rows, cuts), np.split(chunks, cuts)):
        if not len(rs):
            continue
        ch = int(cs[0])
        lo, hi = bounds[ch], bounds[ch + 1]
        members = np.unpackbits(held.bits[rs, ch], axis=1, count=n).astype(float)
        vals = members @ inputs[:, lo:hi]
        vals[~(held.present[rs, ch] & (held.count[rs, ch] > 0))] = np.nan
        yield rs, lo, hi, vals


def changed_slots(held, prev, n: int):
    """(rows, chunks) of the GPU slots whose contents differ between two Held snapshots."""
    if prev is None or prev.bits.shape != held.bits.shape:
        return np.nonzero(np.ones((n, held.present.shape[1]), bool))
    diff = (held.present[:n] != prev.present[:n]) | np.any(held.bits[:n] != prev.bits[:n], axis=-1)
    return np.nonzero(diff)


def held_values(held, inputs, bounds, prev=None, prev_values=None) -> np.ndarray:
    """
    Every GPU's buffer (n × L, NaN = not held) for a Held snapshot. Given the previous snapshot
    and its values, only the slots whose contributors changed are recomputed (a step's worth).
    """
    n = inputs.shape[0]
    if prev_values is None:
        prev = None
    out = np.full(inputs.shape, np.nan) if prev is None else prev_values.copy()
    for rs, lo, hi, vals in slot_values(held, inputs, bounds, *changed_slots(held, prev, n)):
        out[rs, lo:hi] = vals
    return out


def value_limit(index, coll: int, inputs) -> float:
    """
    The largest |value| any GPU's buffer holds during collective `coll`, at every time the view
    can show (after each group of messages that land at one instant), replayed with the index's
    own rule. The colour levels are ±this, fixed for the whole collective.
    """
    inputs = np.asarray(inputs, dtype=float)
    n, L = inputs.shape
    bounds = chunk_bounds(L, index.trace.collectives[coll].n_chunks)
    vmax = 0.0

    def take(held, prev):
        nonlocal vmax
        for _rs, _lo, _hi, vals in slot_values(held, inputs, bounds, *changed_slots(held, prev, n)):
            if vals.size and not np.all(np.isnan(vals)):
                vmax = max(vmax, float(np.nanmax(np.abs(vals))))

    for prev, state in index.replay(coll):
        take(state, prev)
    return vmax or 1.0


def has_buffers(run) -> bool:
    """Does the run keep the values of some collective's buffers: a collective scenario's inputs, or a
    mesh run's events with the arrays they ran on (the Buffers tab draws them alike)?"""
    if run is None:
        return False
    if run.scenario.kind in scenarios.COLLECTIVE_KINDS:
        return bool(run.inputs)
    info = getattr(run, "mesh", None)
    return info is not None and any(e.inputs and e.op in BUFFER_OPS for e in info.events)


def hatch_colors() -> tuple[QColor, QColor]:
    """Fill and line colour for 'not held': the ring view's empty-slot grey, darkened so that it
    never passes for the colour map's near-white 0."""
    pal = theme.palette()
    return QColor(pal.slot_empty).darker(125), QColor(pal.slot_border).darker(150)


def hatch_pixmap(size: int = 18) -> QPixmap:
    """A swatch of the 'not held' pattern, for the legend."""
    fill, lines = hatch_colors()
    pm = QPixmap(size, size)
    pm.fill(fill)
    p = QPainter(pm)
    p.fillRect(pm.rect(), QBrush(lines, Qt.BDiagPattern))
    p.setPen(QPen(QColor(theme.palette().border), 1))
    p.drawRect(0, 0, size - 1, size - 1)
    p.end()
    return pm


class HatchItem(pg.GraphicsObject):
    """Grey with diagonal lines in screen pixels, behind the image: where a value is NaN (not held)."""

    def __init__(self):
        super().__init__()
        self._rect = QRectF()
        self.set_colors()

    def set_colors(self):
        self.fill, lines = hatch_colors()
        self.pattern = QBrush(lines, Qt.BDiagPattern)
        self.update()

    def set_rect(self, r: QRectF):
        self.prepareGeometryChange()
        self._rect = QRectF(r)

    def boundingRect(self):
        return self._rect

    def paint(self, p, *args):
        # the pattern is drawn in device pixels, so it looks the same at any zoom and n
        r = p.transform().mapRect(self._rect)
        p.save()
        p.resetTransform()
        p.fillRect(r, self.fill)
        p.fillRect(r, self.pattern)
        p.restore()


class CountsItem(pg.GraphicsObject):
    """
    The number of GPUs whose data is summed in each held chunk, written in the chunk's cell
    (reductions, up to COUNTS_MAX_N devices). One item; it repaints only when the counts change.
    """

    def __init__(self):
        super().__init__()
        self.counts = np.zeros((0, 0), int)
        self.bounds = [0]
        self._rect = QRectF()
        self.font = theme.font("body", bold=True)
        self.box = QColor(255, 255, 255, 210)  # a light label on the heatmap in every theme...
        self.text = theme.text_on(self.box)  # ...so its text is dark in every theme (not the palette's)

    def set_counts(self, counts: np.ndarray, bounds):
        self.prepareGeometryChange()
        self.counts, self.bounds = counts, list(bounds)
        self._rect = QRectF(0, 0, self.bounds[-1], counts.shape[0])
        self.update()

    def boundingRect(self):
        return self._rect

    def paint(self, p, *args):
        tr = p.transform()
        fm = QFontMetricsF(self.font)
        p.save()
        p.resetTransform()
        p.setFont(self.font)
        b = self.bounds
        for d, ch in zip(*np.nonzero(self.counts)):
            r = tr.mapRect(QRectF(b[ch], d, b[ch + 1] - b[ch], 1))
            text = str(self.counts[d, ch])
            w, h = fm.horizontalAdvance(text) + 8, fm.height()
            if r.width() < w + 4 or r.height() < h:
                continue  # no room: the colour alone must do
            box = QRectF(r.center().x() - w / 2, r.center().y() - h / 2, w, h)
            p.fillRect(box, self.box)
            p.setPen(self.text)
            p.drawText(box, Qt.AlignCenter, text)
        p.restore()


COUNTS_MAX_N = 16
ROW_FONT_MIN_PX = 12  # the GPU names beside the rows shrink to this before they thin out


class BufferView(QWidget):
    """
    Follows a ScenarioModel (new run: new sizes and levels) and draws the frames the playback's
    frame controller hands it (`set_frame`: new values). What tests read: `image.image` (n × L,
    NaN = not held), `levels`, `caption`.
    """

    def __init__(self, model, playback, parent=None):
        super().__init__(parent)
        self.setObjectName("BufferView")
        self.model, self.playback = model, playback
        self.run = None
        self._applicable = False
        self._stale = False
        self._state = None
        self._coll = None
        self._caption_key = None
        self.values = None
        self.levels = (-1.0, 1.0)
        self.title = QLabel(objectName="buffersTitle")
        self.title.setWordWrap(True)
        self._make_canvas()
        self._make_hint()
        self.stack = QStackedWidget()
        self.stack.addWidget(self.hint_page)
        self.stack.addWidget(self.canvas)
        self.swatch = QLabel()
        self.legend = QLabel(objectName="buffersLegend")
        self.legend.setWordWrap(True)
        legend_row = QHBoxLayout()
        legend_row.addWidget(self.swatch)
        legend_row.addWidget(self.legend, 1)
        self.caption = QLabel(objectName="buffersCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.PlainText)
        self.caption.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
        lay = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addWidget(self.stack, 1)
        lay.addLayout(legend_row)
        lay.addWidget(self.caption)
        self._apply_theme()
        playback.frames.register(self)
        self._build(model.run)
        model.changed.connect(self._on_model_changed)
        theme.notifier().changed.connect(self._on_theme_changed)
        self.retranslate_ui()

    # -- construction (once) ---------------------------------------------------------------
    def _make_canvas(self):
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setObjectName("buffersCanvas")
        self.plot = self.canvas.addPlot(row=0, col=0)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.showAxis("top")
        vb = self.plot.getViewBox()
        vb.invertY(True)
        vb.setDefaultPadding(0.0)
        self.cmap = pg.colormap.get(COLORMAP)
        self.hatch = HatchItem()
        self.hatch.setZValue(-2)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setLookupTable(self.cmap.getLookupTable(nPts=256))
        self.strip = pg.ImageItem(axisOrder="row-major")  # each row's device colour, left of the buffer
        self.row_lines = pg.PlotCurveItem(connect="pairs")
        self.row_lines.setZValue(1)
        self.chunk_lines = pg.PlotCurveItem(connect="pairs")
        self.chunk_lines.setZValue(2)
        self.focus = QGraphicsRectItem()  # the cell the caption talks about
        self.focus.setZValue(3)
        self.counts = CountsItem()  # how many GPUs' data each chunk sums (reductions, small n)
        self.counts.setZValue(4)
        for it in (self.hatch, self.image, self.strip, self.row_lines, self.chunk_lines, self.focus, self.counts):
            self.plot.addItem(it)
        self.cbar = pg.ColorBarItem(values=(-1, 1), colorMap=self.cmap, interactive=False, width=22,
                                    colorMapMenu=False)
        self.canvas.addItem(self.cbar, row=0, col=1)
        vb.sigResized.connect(self._on_viewbox_resized)

    def _make_hint(self):
        self.hint_page, self.hint, self.switch_button = hint_page("buffers", self._on_switch_button_clicked)

    # -- signals ---------------------------------------------------------------------------
    def _on_model_changed(self, run):
        self._build(run)

    def set_frame(self, frame):
        """Show `frame` (app.core.frame.Frame), handed by the frame controller."""
        if frame.index is not self.run.index:  # a frame of the run about to be built (_on_model_changed)
            return
        if not self.isVisible():
            self._stale = True  # a hidden tab catches up when shown
            return
        self._show(frame)

    def _redraw(self):
        """The frame shown now, drawn again from scratch (shown again, a new language or run)."""
        f = self.playback.frames.current()
        if f is not None and f.index is self.run.index:
            self._show(f, force=True)

    def _on_theme_changed(self):
        self._apply_theme()
        self._build(self.model.run)

    def _on_viewbox_resized(self, *_):
        self._set_ticks()

    def _on_switch_button_clicked(self):
        self.model.update(kind="all-reduce")

    def showEvent(self, e):
        super().showEvent(e)
        if self._stale:
            self._stale = False
            self._redraw()

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def retranslate_ui(self):
        self.setWindowTitle(self.tr("Buffers"))
        self._set_hint()
        self.switch_button.setText(self.tr("Show an all-reduce"))
        self.plot.setLabel("bottom", self.tr("position in the buffer (element)"))
        self.plot.setLabel("top", self.tr("chunk"))
        if getattr(self, "compact", None):  # setLabel shows the axis and its label again: a compact plot hides them
            self.plot.showAxis("bottom", False)
            self.plot.getAxis("top").showLabel(False)
        self.cbar.getAxis("left").setLabel(self.tr("value"))
        self._texts_for_run()
        self._caption_key = None
        if self._applicable:
            self._redraw()
        else:
            self.caption.setText("")

    def _set_hint(self):
        """What the tab says when it has no buffers to show: a run with collectives whose inputs it did
        not keep (the TP forward: its all-reduces are on the ring and the timeline) says so; else that
        the scenario has no collective."""
        k = len(self.run.trace.collectives) if self.run is not None else 0
        e = self._mesh_event(self._coll) if self._applicable and self._coll is not None else None
        blocks = e is not None and self._inputs_of(self._coll) is None
        self.switch_button.setVisible(not blocks)  # the mesh run's next collective draws here again
        if blocks:
            self.hint.setText(self.tr("{what}: its messages do not each carry one chunk of one buffer (an all-to-all, "
                                      "a ppermute or the multi-axis ring), so this tab has nothing to draw; the Mesh "
                                      "tab and the timeline show its messages.").format(what=mesh_op_words(e)))
        elif k:
            self.hint.setText(self.tr("This tab shows every value in every GPU's buffer during a collective run as a "
                                      "scenario of its own.\nThis run's {k} collectives are on the Ring tab and the "
                                      "timeline, but it does not keep their buffers' values: show an all-reduce to "
                                      "watch one value by value.").format(k=k))
        else:
            self.hint.setText(self.tr("Buffers are shown during a collective: choose all-gather, reduce-scatter or "
                                      "all-reduce.\nThis scenario has no stand-alone collective to show."))

    # -- building (once per run) -------------------------------------------------------------
    def _build(self, run):
        self.run = run
        self._state, self._coll, self._caption_key = None, None, None
        self._applicable = has_buffers(run)
        self.stack.setCurrentWidget(self.canvas if self._applicable else self.hint_page)
        if self._applicable:
            self.n = run.trace.collectives[0].n
            self._levels = {}
            self._redraw()  # lays out the collective shown at t
        else:
            self.caption.setText("")
        self._set_hint()
        self._texts_for_run()

    def _inputs_of(self, coll):
        """Collective `coll`'s buffers before it, (n, L), or None: the run's recorded inputs, or on a
        mesh run the arrays its event kept (app.core.mesh_model.MeshInfo.buffers)."""
        run = self.run
        if coll is None:
            return None
        if coll in run.inputs:
            return run.inputs[coll]
        info = getattr(run, "mesh", None)
        return None if info is None else info.buffers(coll, run.trace.collectives[coll].n_chunks)

    def _mesh_event(self, coll):
        """The mesh event of trace collective `coll` (None off a mesh run)."""
        info = getattr(self.run, "mesh", None)
        return None if info is None else next((e for e in info.events if e.coll == coll), None)

    def _group(self, c) -> int:
        """How many devices' data a chunk of collective c sums at most: its mesh group's size, else n."""
        e = self._mesh_event(c.id)
        return len(e.groups[0]) if e is not None and e.groups else c.n

    def _layout_collective(self, coll: int):
        """Sizes, lines, strip and levels for collective `coll` (its buffers are n × L)."""
        run = self.run
        c = run.trace.collectives[coll]
        inputs = np.asarray(self._inputs_of(coll), dtype=float)
        self._inputs = inputs
        n, L = inputs.shape
        self.L, self.n_chunks = L, c.n_chunks
        self.bounds = chunk_bounds(L, c.n_chunks)
        if coll not in self._levels:
            v = value_limit(run.index, coll, inputs)
            self._levels[coll] = (-v, v)
        self.levels = self._levels[coll]
        self.image.setLevels(self.levels)
        self.cbar.setLevels(self.levels)
        self.hatch.set_rect(QRectF(0, 0, L, n))
        sw = max(0.8, L / 36)  # the colour strip: about 1/36 of the plot's width
        rgb = np.array([[[col.red(), col.green(), col.blue()]] for col in theme.device_colors(n)], np.uint8)
        self.strip.setImage(rgb, levels=(0, 255))
        self.strip.setRect(QRectF(-sw, 0, sw, n))
        xs = np.repeat(np.asarray(self.bounds[1:-1], float), 2)
        ys = np.tile([0.0, float(n)], len(self.bounds) - 2)
        self.chunk_lines.setData(xs, ys)
        pal = theme.palette()
        faint = QColor(pal.text)
        faint.setAlpha(110)  # many chunks: hairlines in the theme's ink (black vanished on the dark theme's hatch)
        self.chunk_lines.setPen(pg.mkPen(pal.text, width=theme.line("outline")) if c.n_chunks <= 16 else
                                pg.mkPen(faint, width=theme.line("hairline")))
        self.reduces = any(m.reduce for m in run.trace.messages_of(coll))
        self.counts.setVisible(self.reduces and n <= COUNTS_MAX_N)
        if n <= 16:  # thin gaps between the rows; beyond that they would eat the rows
            ys = np.repeat(np.arange(1, n, dtype=float), 2)
            xs = np.tile([0.0, float(L)], n - 1)
            self.row_lines.setData(xs, ys)
            self.row_lines.show()
        else:
            self.row_lines.setData([], [])
            self.row_lines.hide()
        self.plot.getViewBox().setRange(xRange=(-sw, L), yRange=(0, n), padding=0)
        self._set_ticks()

    def _texts_for_run(self):
        run = self.run
        if run is None:
            return
        self.swatch.setVisible(self._applicable)
        self.legend.setVisible(self._applicable)
        if not self._applicable:
            self.title.setText(self.tr("Buffers"))
            return
        coll = self._coll if self._inputs_of(self._coll) is not None else self._first_coll()
        c = run.trace.collectives[coll]
        n, L = np.asarray(self._inputs_of(coll)).shape
        e = self._mesh_event(coll)
        what = mesh_op_words(e) if e is not None else op_title(c.op, c.algo)
        if self._chips():  # a TPU machine's devices are chips
            title = (self.tr("{op}: every chip's buffer, one row per chip ({n} × {L} values in {k} chunks)")
                     if c.n_chunks > 1 else self.tr("{op}: every chip's buffer, one row per chip ({n} × {L} values)"))
        elif c.n_chunks > 1:
            title = self.tr("{op}: every GPU's buffer, one row per GPU ({n} × {L} values in {k} chunks)")
        else:
            title = self.tr("{op}: every GPU's buffer, one row per GPU ({n} × {L} values)")
        self.title.setText(title.format(op=what, n=n, L=L, k=c.n_chunks))
        legend = self.tr("= not there yet (no data; white means 0)   ·   colour = the value, one scale for the "
                         "whole collective")
        if self.counts.isVisible():
            legend += (self.tr("   ·   number = how many chips' data the chunk sums") if self._chips() else
                       self.tr("   ·   number = how many GPUs' data the chunk sums"))
        if c.n_chunks > 1:
            legend += self.tr("   ·   lines = chunk boundaries")
        self.legend.setText(legend)
        self._set_ticks()

    def _first_coll(self) -> int:
        """The first collective whose buffers the run keeps."""
        return next((k for k in range(len(self.run.trace.collectives)) if self._inputs_of(k) is not None), 0)

    def _chips(self) -> bool:
        """Are the run's devices TPU chips (words.is_tpu), to be named so?"""
        comm = getattr(self.run, "comm", None)
        return comm is not None and is_tpu(comm.topology)

    def _set_ticks(self):
        """Row labels 'GPU d' ('chip d' on a TPU) and chunk numbers, thinned so they never overlap."""
        if not self._applicable or self.run is None or not hasattr(self, "bounds"):
            return
        self._fit_axes()
        vb = self.plot.getViewBox()
        h, w = max(vb.height(), 1.0), max(vb.width(), 1.0)
        row_px = h / self.n
        # every row named if a font of at least ROW_FONT_MIN_PX fits the row (digits need their
        # ascent, not a whole line), else every 2nd, 4th… in the small font
        f_row = theme.font("small", bold=True)
        while QFontMetricsF(f_row).ascent() + 1 > row_px and f_row.pixelSize() > ROW_FONT_MIN_PX:
            f_row.setPixelSize(f_row.pixelSize() - 1)
        if QFontMetricsF(f_row).ascent() + 1 > row_px:  # thinned out anyway: at the legible size
            f_row = theme.font("small", bold=True)
        fm = QFontMetricsF(f_row)
        stride = 1
        while row_px * stride < fm.ascent() + 1 and stride < self.n:
            stride *= 2
        label = self.tr("chip {d}") if self._chips() else self.tr("GPU {d}")
        left = self.plot.getAxis("left")
        if left.style["tickFont"] is None or left.style["tickFont"].pixelSize() != f_row.pixelSize():
            left.setTickFont(f_row)
        left.setTicks([[(d + 0.5, label.format(d=d)) for d in range(0, self.n, stride)], []])
        # room for the widest label now, so it is drawn on the first paint (not after a re-layout)
        left.setWidth(fm.horizontalAdvance(label.format(d=self.n - 1)) + 20)
        chunk_px = w / self.n_chunks
        cs = 1
        while chunk_px * cs < fm.horizontalAdvance(str(self.n_chunks - 1)) + 10 and cs < self.n_chunks:
            cs *= 2
        b = self.bounds
        self.plot.getAxis("top").setTicks([[((b[ch] + b[ch + 1]) / 2, str(ch))
                                            for ch in range(0, self.n_chunks, cs)], []])

    def _fit_axes(self):
        """
        A short canvas (1280×720: some 165 px of plot for 16 GPUs, every other one named) gives its
        rows the room of the position axis under the plot and of the "chunk" title over it: the
        chunk numbers stay on top, and every GPU keeps a name of at least ROW_FONT_MIN_PX. Decided
        from the canvas's height, which the axes do not change (no back and forth).
        """
        f = theme.font("small", bold=True)
        f.setPixelSize(ROW_FONT_MIN_PX)
        row_need = QFontMetricsF(f).ascent() + 1
        line = QFontMetricsF(theme.font("small")).height()
        with_axes = self.canvas.height() - (3 * line + 24)  # top ticks, its title; bottom ticks, its title
        compact = with_axes < row_need * self.n
        if compact == getattr(self, "compact", None):
            return
        self.compact = compact
        self.plot.showAxis("bottom", not compact)
        self.plot.getAxis("top").showLabel(not compact)

    # -- a frame -----------------------------------------------------------------------------
    def _show(self, f, force: bool = False):
        """Show the buffers of frame f (only setImage when a message has arrived)."""
        if not self._applicable:
            return
        coll = f.coll
        if self._inputs_of(coll) is None:  # a mesh collective that moves blocks, or none at t
            if coll != self._coll or force:
                self._show_no_buffers(coll)
            return
        if coll != self._coll:
            self.stack.setCurrentWidget(self.canvas)
            self._layout_collective(coll)
            self._coll, self._state = coll, None
            self._texts_for_run()
            force = True
        state = f.held
        if force or state is not self._state:
            c = self.run.trace.collectives[coll]
            same = not force and coll == self._coll
            self.values = held_values(state, self._inputs, self.bounds, self._state if same else None,
                                      self.values if same else None)
            self.image.setImage(self.values, autoLevels=False, levels=self.levels)
            if force:  # the rect maps pixels to cells: set it once the image has its shape
                self.image.setRect(QRectF(0, 0, self.L, self.n))
            if self.counts.isVisible():
                n = self.n
                self.counts.set_counts(np.where(state.present[:n], state.count[:n], 0)[:, :c.n_chunks], self.bounds)
            self._state, self._coll = state, coll
        key = (coll, f.steps_done, id(state))
        if force or key != self._caption_key:
            self._caption_key = key
            self._describe(f)

    def _show_no_buffers(self, coll):
        """A collective of a mesh run whose buffers are not one array cut into chunks (all-to-all,
        ppermute), or no collective at t: the hint page says so."""
        self._coll, self._state, self._caption_key = coll, None, None
        self._set_hint()
        self.stack.setCurrentWidget(self.hint_page)
        self.caption.setText("")
        e = self._mesh_event(coll)
        self.title.setText(f"{self.tr('Buffers')} · {mesh_op_words(e)}" if e is not None else self.tr("Buffers"))
        self.swatch.setVisible(False)
        self.legend.setVisible(False)

    def _describe(self, f):
        """The caption and the outlined cell: what the last finished step did."""
        trace, state = self.run.trace, f.held
        c = trace.collectives[f.coll]
        n, K = self._group(c), c.n_steps  # n: the devices a chunk sums at most (a mesh group's)
        k = f.steps_done
        self.focus.hide()
        if slots_of(c.op) == BLOCKS:
            self.caption.setText(self._blocks_text(f, c, state))
            return
        if k == 0:
            if c.op == "all-gather":
                text = self.tr("Before step 1 of {K}: every GPU holds only its own chunk; the hatched chunks are "
                               "still to come.")
            else:
                text = self.tr("Before step 1 of {K}: every GPU holds only its own data; nothing is summed yet.")
            self.caption.setText(text.format(K=K))
            return
        if k >= K:
            self.caption.setText(self._done_text(c, state))
            return
        msgs = [trace.messages[i] for i in f.arrived.tolist()]
        to_gpu = [m for m in msgs if m.dst != SWITCH]
        head = self.tr("After step {k} of {K}: ").format(k=k, K=K)
        if not to_gpu:
            m = msgs[0]
            who = state.get(SWITCH, {}).get(m.chunk if m.chunk != ALL else 0, frozenset())
            self.caption.setText(head + self.tr("the switch holds the sum of {j} of {n} contributions; the GPUs' "
                                                "buffers have not changed yet.").format(j=len(who), n=n))
            return
        m = min(to_gpu, key=lambda m: (m.dst, m.chunk))
        held = state.get(m.dst, {})
        ch = m.chunk if m.chunk != ALL else 0
        j = len(held.get(ch, frozenset()))
        if m.chunk == ALL:
            where = self.tr("its whole buffer")
            self._show_focus(m.dst, 0, self.n_chunks)
        else:
            where = self.tr("chunk {c}").format(c=m.chunk)
            self._show_focus(m.dst, m.chunk, m.chunk + 1)
        if c.op == "all-gather":
            have = sum(1 for who in held.values() if who)
            body = self.tr("GPU {d} received chunk {c}; it now holds {h} of {n} chunks.").format(
                d=m.dst, c=m.chunk, h=have, n=c.n_chunks)
        elif m.reduce or j < n:
            body = self.tr("GPU {d} holds the sum of {j} of {n} contributions in {where}.").format(
                d=m.dst, j=j, n=n, where=where)
        else:
            done = sum(1 for who in held.values() if len(who) == n)
            body = self.tr("GPU {d} received the finished sum of {where}; {h} of its {k} chunks are complete.").format(
                d=m.dst, where=where, h=done, k=c.n_chunks)
        self.caption.setText(head + body)

    def _blocks_text(self, f, c, state) -> str:
        """Block slots (all-to-all): slot s·n + d is block (s → d), so row d starts with its own band (block d → j
        of every j) and gathers slot j·n + d of every band: the transpose, one block at a time."""
        n, K, k = c.n, c.n_steps, f.steps_done
        if k == 0:
            return self.tr("Before step 1 of {K}: every GPU holds only its own buffer, band d of row d: n = {n} "
                           "blocks, block j for GPU j.").format(K=K, n=n)
        if k >= K:
            return self.tr("Done after {K} steps: GPU d holds block d of every GPU's buffer (one slot in every "
                           "band) — the transpose of what it started with.").format(K=K)
        m = min((self.run.trace.messages[i] for i in f.arrived.tolist()), key=lambda m: m.dst)
        self._show_focus(m.dst, m.chunk, m.chunk + 1)
        have = 1 + sum(1 for j in range(n) if j != m.dst and state.get(m.dst, {}).get(j * n + m.dst))
        return self.tr("After step {k} of {K}: GPU {d} received block {d} of GPU {s}; it now holds {h} of the {n} "
                       "blocks it ends with.").format(k=k, K=K, d=m.dst, s=m.src, h=have, n=n)

    def _done_text(self, c, state) -> str:
        n, K = self._group(c), c.n_steps
        if n < c.n and c.op != "all-gather":  # a mesh axis: each group sums its own
            if c.op == "reduce-scatter":
                return self.tr("Done after {K} steps: each GPU holds one chunk summed over the {n} GPUs of its "
                               "group.").format(K=K, n=n)
            return self.tr("Done after {K} steps: every GPU holds its group's full sum of {n} contributions in "
                           "every chunk — the rows of a group are identical.").format(K=K, n=n)
        if c.op == "all-gather":
            return self.tr("Done after {K} steps: every GPU holds all {n} chunks.").format(K=K, n=c.n_chunks)
        if c.op == "reduce-scatter":
            owned = []
            for d in range(min(c.n, 3)):
                full = [ch for ch, who in state.get(d, {}).items() if len(who) == n]
                if full:
                    owned.append(self.tr("GPU {d}: chunk {c}").format(d=d, c=full[0]))
            text = self.tr("Done after {K} steps: each GPU holds one chunk summed over all {n} GPUs ({which}, …).")
            return text.format(K=K, n=n, which=", ".join(owned))
        return self.tr("Done after {K} steps: every GPU holds the full sum of all {n} contributions in every "
                       "chunk — the rows are identical.").format(K=K, n=n)

    def _show_focus(self, d, ch0, ch1):
        b = self.bounds
        self.focus.setRect(QRectF(b[ch0], d, b[ch1] - b[ch0], 1))
        self.focus.show()

    # -- look --------------------------------------------------------------------------------
    def _apply_theme(self):
        pal = theme.palette()
        self.canvas.setBackground(pal.background)
        self.hatch.set_colors()
        # row names in the small bold font: at 1280×720 the plot has some 13 px a row for 16 GPUs
        small, device = theme.font("small"), theme.font("small", bold=True)
        for name in ("left", "bottom", "top"):
            ax = self.plot.getAxis(name)
            # pyqtgraph keeps the text room of the largest font it met unless it shrinks by more than 10 px:
            # back from F11 or Ctrl+= the axes would keep the larger text's room (a fresh view would not)
            ax.textWidth, ax.textHeight = 30, 18  # AxisItem's own starting room
            ax.setTickFont(device if name == "left" else small)
            ax.setPen(pg.mkPen(pal.text))
            ax.setTextPen(pg.mkPen(pal.text))
            ax.label.setFont(small)
        for name in ("left", "right", "top", "bottom"):
            ax = self.cbar.getAxis(name)
            ax.setTickFont(theme.font("small"))
            ax.setPen(pg.mkPen(pal.text))
            ax.setTextPen(pg.mkPen(pal.text))
            ax.label.setFont(theme.font("body"))
            ax.enableAutoSIPrefix(False)
        self.counts.font = theme.font("body", bold=True)
        self.counts.text = theme.text_on(self.counts.box)  # the label box stays light in every theme
        self.row_lines.setPen(pg.mkPen(pal.background, width=theme.line("spoke")))
        pen = QPen(QColor(pal.highlight), theme.line("highlight") * 1.3)
        pen.setCosmetic(True)
        pen.setJoinStyle(Qt.MiterJoin)
        self.focus.setPen(pen)
        # stylesheets, not setFont: the application's stylesheet would override a font
        cap, body = round(theme.px("caption")), round(theme.px("body"))
        self.title.setStyleSheet(f"font-size: {body}px; font-weight: bold; color: {pal.text};")
        # the caption and legend in smaller text than the title: the rows of the plot get the room
        self.caption.setStyleSheet(f"font-size: {body}px; color: {pal.text};")
        self.legend.setStyleSheet(f"font-size: {round(theme.px('small'))}px; color: {pal.text_muted};")
        self.hint.setStyleSheet(f"font-size: {cap}px; color: {pal.text};")
        self.switch_button.setStyleSheet(f"font-size: {body}px; font-weight: bold;")
        px = round(theme.px("body") * 1.2)
        self.swatch.setPixmap(hatch_pixmap(px))
