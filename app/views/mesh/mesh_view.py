"""
The mesh: devices in a grid by their mesh coordinates, each holding its block of every tensor,
the groups of the axis in use outlined, blocks moving inside every group at once, and each
tensor's notation in the book's words changing as its collectives run (`A[I_X, J_Y]` → `A[I_X, J]`).

One view for every mesh program: it draws what the run's records say (app.core.mesh_model's
MeshInfo: the AxisCollective events, the tensors' notation tracks, the trace's messages), never
a program by name. What it shows is a function of (run, t): the frame the playback pushes gives
t and the messages in flight (Frame.moving, Frame.progress); scrubbing back costs what playing does.

Geometry (`MeshView.layout()`, in widget pixels) is computed once per size and run: the header,
the grid's cells (mesh_model.grid_rects), the group outlines of every event and the node frames.
A paint draws the cells from it; nothing is laid out while playing.

Every device's memory (MeshInfo.memory, the engine's bytes by class: weights, KV cache, activations,
buffers in flight) is a stacked bar along the bottom of its cell, its length ∝ the device's total
against the largest device's, with a legend (each class's colour, the totals) under the grid or,
where the strip stands beside the grid, under the strip. A program's memory does not change over
time: the bars are in the cells' background, painted once per layout.

A frame is two layers. Everything but the messages in flight (cells, blocks, header, outlines,
node names, notation strip) changes only when a message lands or a collective starts or ends: it is
painted into one pixmap (the still layer), kept with the layout under the key that decides it
(`_still_key`: the event shown, whether it is in flight, how many of its messages have landed,
every tensor's notation now), and drawn as one image while the key holds. The moving blocks are
drawn over it every frame. A new size, theme, text size, language or run drops the layout, and
the still layer with it.
"""

from __future__ import annotations

from ... import _compat  # noqa: F401  (PySide6 6.12 on Python < 3.12: see app/_compat.py)

import math
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QEvent, QLocale, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QImage, QPainter, QPen
from PySide6.QtWidgets import QWidget

from ... import theme
from ...core.frame import time_eps
from ...core.mesh_model import grid_rects, outline_rects, parse_notation
from ...words import fmt_bytes, fmt_time, mesh_event_line, mesh_memory_class, mesh_why

TENSOR_MIN_PX = 9  # a tensor's block is drawn when its slot is at least this tall
MEMORY_MIN_CELL_PX = 24  # a cell shorter than this draws no memory bar (the legend still gives the totals)
# each memory class's colour: an index into the theme's device colours (Okabe–Ito, readable on every
# theme's background); a class the engine adds later takes the next unused one
MEMORY_COLOUR = {"weights": 4, "KV cache": 6, "activations": 2, "buffers in flight": 0}


def _usable(cells) -> float:
    """How much a cell can show: its width, or 1.5 times its height where that is less (a cell's blocks
    stand in rows; a wide flat cell shows as little as a narrower taller one)."""
    if not len(cells):
        return 0.0
    return float(min(np.min(cells[:, 2]), 1.5 * np.min(cells[:, 3])))


@dataclass
class MeshLayout:
    """Where everything goes at one widget size (pixels)."""

    header: QRectF
    grid: QRectF
    panel: QRectF
    cells: np.ndarray  # (n, 4): x, y, w, h of every mesh position
    outlines: list  # per event: [(group index, (x, y, w, h)), ...]
    frames: list  # [(frame index, (x, y, w, h)), ...] the machine's nodes
    line: float  # one text line's height
    boxes: dict = field(default_factory=dict)  # (tensor, slot, slots, named) -> its block's box in every cell
    still: object = None  # the still layer (QImage) painted for still_key
    still_key: tuple = ()
    base: object = None  # what the still layer is drawn over (QImage), for base_key
    base_key: tuple = ()
    dpr: float = 1.0  # the device pixel ratio its layers are painted at
    memory_bars: list = field(default_factory=list)  # per position: [(memory class, QRectF)] as painted
    legend: QRectF = field(default_factory=QRectF)  # the memory legend's area (a line, or the strip's column)


class MeshView(QWidget):
    """The "Mesh" tab. Registered with the playback's frames; draws the run's MeshInfo at t."""

    def __init__(self, model, playback, parent=None):
        super().__init__(parent)
        self.setObjectName("MeshView")
        self.model, self.playback = model, playback
        self.run = None
        self.info = None
        self.t = 0.0
        self.moving = np.zeros(0, dtype=np.int64)
        self.progress = np.zeros(0)
        self._layout = None
        self._images = {}
        self.still_paints = self.base_paints = 0  # how many times each layer was painted (tests read them)
        self.setMinimumSize(320, 240)
        self.setAttribute(Qt.WA_OpaquePaintEvent, True)
        self.setWindowTitle(self.tr("Mesh"))
        model.changed.connect(self._set_run)
        theme.notifier().changed.connect(self._on_theme_changed)
        self._set_run(model.run)
        f = playback.frames.register(self)
        if f is not None:
            self.set_frame(f)

    # -- inputs --------------------------------------------------------------------------------
    def _set_run(self, run):
        self.run = run
        self.info = getattr(run, "mesh", None)
        self._layout, self._images = None, {}
        self.t = 0.0
        self.moving, self.progress = np.zeros(0, dtype=np.int64), np.zeros(0)
        self.update()

    def frame_part(self, f):
        return (id(f.index), f.t, f.hidden_after)

    def set_frame(self, f):
        if self.run is None or f.index is not self.run.index:
            return
        self.t = float(f.t)
        self.moving = np.asarray(f.moving, dtype=np.int64)
        self.progress = np.asarray(f.progress, dtype=float)
        if f.hidden_after is not None and len(self.moving):  # the predict mask hides what it hides
            self.moving, self.progress = self.moving[np.asarray(f.shown, bool)], self.progress[np.asarray(f.shown, bool)]
        self.update()

    def _on_theme_changed(self):
        self._layout, self._images = None, {}
        self.update()

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.setWindowTitle(self.tr("Mesh"))
            self._layout = None  # the strip's lines depend on the words
            self.update()
        super().changeEvent(e)

    def resizeEvent(self, e):
        self._layout = None
        super().resizeEvent(e)

    # -- geometry --------------------------------------------------------------------------------
    def layout(self) -> MeshLayout | None:
        """The picture's geometry at the widget's size (None without a mesh run)."""
        if self.info is None:
            return None
        if self._layout is not None and self._layout.dpr != self.devicePixelRatioF():  # moved to another screen
            self._layout = None
        if self._layout is None:
            self._layout = self._make_layout()
        return self._layout

    def _make_layout(self) -> MeshLayout:
        info = self.info
        s = theme.scale()
        W, H = float(self.width()), float(self.height())
        m = 8 * s
        line = QFontMetricsF(theme.font("body")).height()
        header = QRectF(m, m, W - 2 * m, (3.2 if H >= 700 else 2.2) * line)  # the why line when there is room
        mono = QFontMetricsF(theme.font("body", mono=True)).height()

        def areas(lines, foot=None):
            panel = QRectF(m, header.bottom() + m / 2, W - 2 * m, lines * mono * 1.2 + m)
            top = panel.bottom() + m / 2
            foot = self._foot_lines() if foot is None else foot
            grid = QRectF(m, top, W - 2 * m, H - top - foot * line - m)
            cells = grid_rects(info.shape, grid.x() + 6 * s, grid.y() + 6 * s, grid.width() - 12 * s,
                               grid.height() - 12 * s)
            return panel, grid, cells

        lines = self._strip_lines(W - 2 * m)
        panel, grid, cells = areas(lines)
        # the strip's keys (where each tensor's block sits in a cell) take room too: with them the
        # strip may need another line, and the cells, a little shorter, are laid out again
        keyed = self._strip_lines(W - 2 * m, *self._key_room(cells))
        if keyed != lines:
            panel, grid, cells = areas(keyed)
        side = self._side_areas(W, H, m, header, mono, line)
        # a wide view: the strip beside the grid, where the cells gain clearly on the stacked ones (whose
        # footer the memory legend does not count here: it moves to the column, the choice stays the same)
        plain = areas(keyed, self._foot_lines(beside=True))[2]
        if side is not None and _usable(side[2]) > 1.1 * _usable(plain):
            panel, grid, cells = side
        gap = max(2.0, float(np.min(cells[:, 2:])) * 0.08) if len(cells) else 2.0
        outlines = [outline_rects(cells, e.groups, min(gap, 5 * s)) for e in info.events]
        frames = outline_rects(cells, info.frames, min(gap * 1.8, 9 * s)) if info.frames else []
        if panel.left() >= grid.right():  # beside the grid: the memory legend in the column under the strip
            legend = QRectF(panel.x(), panel.bottom() + m / 2, panel.width(), grid.bottom() - panel.bottom() - m / 2)
        else:
            legend = QRectF(grid.x(), grid.bottom() + 1.45 * line, header.width(), 1.3 * line)
        return MeshLayout(header, grid, panel, cells, outlines, frames, line, dpr=self.devicePixelRatioF(),
                          legend=legend)

    def _side_areas(self, W, H, m, header, mono, line):
        """(panel, grid, cells) with the notation strip as a column right of the grid, a tensor a line
        (a wide view, F11 or a large text size: stacked, the strip's lines left the cells a sliver);
        None where the column does not fit."""
        s = theme.scale()
        fm = QFontMetricsF(theme.font("body", bold=True, mono=True))
        widest = max((fm.horizontalAdvance(text) for items in self._strip_states() for text, _c in items),
                     default=0.0)
        top = header.bottom() + m / 2

        def areas(key_w, keys):
            pw = min(widest + key_w + 14 * s, 0.45 * (W - 3 * m))
            grid = QRectF(m, top, W - 3 * m - pw, H - top - self._foot_lines(beside=True) * line - m)
            cells = grid_rects(self.info.shape, grid.x() + 6 * s, grid.y() + 6 * s, grid.width() - 12 * s,
                               grid.height() - 12 * s)
            return pw, grid, cells

        pw, grid, cells = areas(0.0, 0)
        pw, grid, cells = areas(*self._key_room(cells))
        lines = self._strip_lines(pw, *self._key_room(cells), cap=12)
        panel = QRectF(W - m - pw, top, pw, lines * mono * 1.2 + m)
        if panel.bottom() > H - m or grid.width() < 80 * s or not len(cells):
            return None
        return panel, grid, cells

    def _foot_lines(self, beside=False) -> float:
        """The footer's height under the grid, in text lines: what the colours say and the totals,
        and the memory legend where the run counted each device's memory (beside: the strip stands
        right of the grid and the legend under it, in the column)."""
        return 1.6 + (1.3 if self._has_memory() and not beside else 0.0)

    def _has_memory(self) -> bool:
        return self.info is not None and bool(self.info.memory_classes())

    def _bar_room(self, ch) -> tuple:
        """(bar height, room it takes at the bottom of a cell ch tall): the memory bar, or (0, 0) where
        the run counted no memory or the cell is too short for it."""
        if not self._has_memory() or ch < MEMORY_MIN_CELL_PX:
            return 0.0, 0.0
        h = float(round(min(7 * theme.scale(), max(3.0, 0.08 * ch))))
        return h, h + 3.0

    # -- colours -----------------------------------------------------------------------------------
    def memory_colours(self) -> dict:
        """{memory class: QColor} for the classes the run counted (MEMORY_COLOUR, from the theme)."""
        base = theme.palette().device_colors
        classes = self.info.memory_classes() if self.info is not None else ()
        spare = [i for i in range(len(base)) if i not in MEMORY_COLOUR.values()]
        out = {}
        for c in classes:
            i = MEMORY_COLOUR.get(c)
            if i is None:
                i = spare.pop(0) if spare else 0
            out[c] = QColor(base[i])
        return out

    # -- painting --------------------------------------------------------------------------------
    def paintEvent(self, e):
        p = QPainter(self)
        if self.info is None:
            p.fillRect(self.rect(), QColor(theme.palette().background))
            self._paint_hint(p)
            p.end()
            return
        lay = self.layout()
        eps = time_eps(self.run.trace.t_end) if self.run is not None else 0.0
        k = self.info.event_at(self.t, eps)
        key = self._still_key(k, eps)
        if lay.still is None or lay.still_key != key:
            lay.still, lay.still_key = self._paint_still(lay, k, eps), key
        p.drawImage(0, 0, lay.still)
        self._paint_moving(p, lay, k)
        p.end()

    def _still_key(self, k, eps) -> tuple:
        """What the still layer at t is a function of: the event shown, whether it is in flight and
        how many of its messages have landed, and every tensor's (notation, changing event) now."""
        info, t = self.info, self.t
        landed = -1
        if k >= 0:
            e = info.events[k]
            if e.t_start + eps < t < e.t_end - eps:
                landed = int(np.searchsorted(self._landing_times(k), t + eps, side="right"))
        return (k, landed) + tuple(tr.at(info.events, t, eps)[:2] for tr in info.tensors)

    def _landing_times(self, k) -> np.ndarray:
        """Event k's messages' arrival times, sorted (cached per run): the count landed by t is the
        arrivals' state (MeshInfo.arrivals counts t_end <= t)."""
        key = ("ends", k)
        ends = self._images.get(key)
        if ends is None:
            cols = self.info.columns
            ends = self._images[key] = np.sort(cols["t_end"][cols["coll"] == self.info.events[k].coll])
        return ends

    def _pixmap(self) -> QImage:
        """A layer the size of the widget at its device pixel ratio: a premultiplied ARGB image, the
        raster engine's own format (filled and blitted without a conversion, unlike a QPixmap)."""
        dpr = self.devicePixelRatioF()
        img = QImage(self.size() * dpr, QImage.Format_ARGB32_Premultiplied)
        img.setDevicePixelRatio(dpr)
        return img

    def _paint_still(self, lay, k, eps):
        """The still layer: everything the frame shows but the messages in flight (which are drawn
        over it; they stay inside the grid's cells, apart from the header and the strip)."""
        self.still_paints += 1
        key = self._still_key(k, eps)
        base_key = key[:1] + (key[1] >= 0,) + key[2:]  # the event, in flight or not, the notations
        if lay.base is None or lay.base_key != base_key:
            lay.base, lay.base_key = self._paint_base(lay, k, eps), base_key
        pm = lay.base.copy()
        p = QPainter(pm)
        self._paint_cells(p, lay, k, eps, part="blocks")
        self._paint_outlines(p, lay, k, eps)
        self._paint_frame_names(p, lay)
        p.end()
        return pm

    def _paint_base(self, lay, k, eps):
        """Under the still layer: the cells' boxes, the tensors' names, the header and the strip — all
        that stays while one collective's messages land (the blocks and outlines are drawn over it)."""
        self.base_paints += 1
        pm = self._pixmap()
        pm.fill(QColor(theme.palette().background))
        p = QPainter(pm)
        self._paint_cells(p, lay, k, eps, part="base")
        self._paint_header(p, lay, k)
        self._paint_panel(p, lay, k, eps)
        p.end()
        return pm

    def _paint_hint(self, p):
        p.setPen(QColor(theme.palette().text_muted))
        p.setFont(theme.font("body"))
        p.drawText(self.rect().adjusted(20, 20, -20, -20), Qt.AlignCenter | Qt.TextWordWrap,
                   self.tr("The mesh view draws a Mesh scenario: choose Scenario → Mesh (named axes), "
                           "or shard-lab --scenario mesh --mesh X=2,Y=4 --program redistribute."))

    def _lang(self) -> str:
        """The interface's language, as app.i18n set Qt's default locale: "zh" or "en"."""
        return "zh" if QLocale().language() == QLocale.Language.Chinese else "en"

    def _paint_header(self, p, lay, k):
        info, pal = self.info, theme.palette()
        r = lay.header
        p.setPen(QColor(pal.text))
        p.setFont(theme.font("caption", bold=True))
        words = info.words.get(self._lang()) or info.program
        title = self.tr("{program} — mesh {mesh} on {machine}").format(program=words, mesh=info.describe,
                                                                        machine=info.machine)
        fm = QFontMetricsF(p.font())
        p.drawText(QRectF(r.x(), r.y(), r.width(), fm.height()), Qt.AlignLeft | Qt.AlignVCenter,
                   fm.elidedText(title, Qt.ElideRight, r.width()))
        y = r.y() + fm.height() + 2
        p.setFont(theme.font("body"))
        fm = QFontMetricsF(p.font())
        if k < 0:
            text, why = self.tr("No collective: every device multiplies its own blocks."), ""
        else:
            ev = info.events[k]
            text = mesh_event_line(ev)
            why = mesh_why(ev)  # the plan's reason in the app's language
        p.drawText(QRectF(r.x(), y, r.width(), fm.height()), Qt.AlignLeft | Qt.AlignVCenter,
                   fm.elidedText(text, Qt.ElideRight, r.width()))
        if r.height() >= 3 * fm.height():
            p.setPen(QColor(pal.text_muted))
            p.drawText(QRectF(r.x(), y + fm.height(), r.width(), fm.height()), Qt.AlignLeft | Qt.AlignVCenter,
                       fm.elidedText(why, Qt.ElideRight, r.width()))

    def _paint_frames(self, p, lay):
        if not lay.frames:
            return
        pal = theme.palette()
        pen = QPen(QColor(pal.text_muted), max(1.0, theme.line("outline")))
        pen.setStyle(Qt.DashLine)
        p.setPen(pen)
        p.setBrush(Qt.NoBrush)
        p.setFont(theme.font("small"))
        seen = set()
        for fi, (x, y, w, h) in lay.frames:
            p.drawRoundedRect(QRectF(x, y, w, h), 6, 6)
            seen.add(fi)

    def _paint_frame_names(self, p, lay):
        """Each node's name in its frame's top right corner, over everything (outlines included)."""
        if not lay.frames:
            return
        pal = theme.palette()
        p.setFont(theme.font("small"))
        fm = QFontMetricsF(p.font())
        seen = set()
        for fi, (x, y, w, h) in lay.frames:
            if fi in seen:
                continue
            seen.add(fi)
            text = self.tr("node {k}").format(k=fi)
            tw, th = fm.horizontalAdvance(text) + 8, fm.height()
            label = QRectF(x + w - tw - 8, y + 2, tw, th)
            p.setPen(QPen(QColor(pal.text_muted), 1.0))
            p.setBrush(QColor(pal.background))
            p.drawRect(label)
            p.drawText(label, Qt.AlignCenter, text)

    def _tensor_slots(self, k, eps):
        """The tensors each cell draws, the one the current event changes first, with their layout
        now and the event changing them (or None)."""
        info = self.info
        out = []
        focus = info.events[k].tensor if k >= 0 else ""
        tracks = sorted(info.tensors, key=lambda tr: tr.name != focus)
        for tr in tracks:
            now, changing, before, after = tr.at(info.events, self.t, eps)
            out.append((tr, parse_notation(now, info.axis_names), changing, parse_notation(after, info.axis_names)))
        return out

    def _background(self, lay):
        """The cells' boxes and coordinate labels: the same in every frame, painted once per layout."""
        bg = getattr(lay, "pixmap", None)
        if bg is not None:
            return bg
        info, pal = self.info, theme.palette()
        bg = self._pixmap()
        bg.fill(QColor(pal.background))
        p = QPainter(bg)
        self._paint_frames(p, lay)
        cells = lay.cells
        cw, ch = float(cells[0, 2]), float(cells[0, 3])
        label_h = self._cell_label_h(ch, cw)
        small = theme.font("small")
        fm = QFontMetricsF(small)
        p.setFont(small)
        p.setPen(QPen(QColor(pal.border), 1.0))
        p.setBrush(QColor(pal.surface))
        for x, y, w, h in cells.tolist():
            p.drawRect(QRectF(x, y, w, h))
        if label_h:
            p.setPen(QColor(pal.text_muted))
            for pos, (x, y, w, h) in enumerate(cells.tolist()):
                coord = ",".join(str(c) for c in info.coord(pos))
                d = int(info.dev[pos])
                p.drawText(QRectF(x + 3, y + 1, w - 6, label_h), Qt.AlignLeft | Qt.AlignVCenter,
                           fm.elidedText(coord if d == pos else f"{coord} · {d}", Qt.ElideRight, w - 6))
        self._paint_memory_bars(p, lay)
        p.end()
        lay.pixmap = bg
        return bg

    def _paint_memory_bars(self, p, lay):
        """Every device's memory along the bottom of its cell: one segment per class, stacked in
        MeshInfo.memory_classes' order, the whole bar's length ∝ the device's total against the
        largest device's (a full-width track behind it). Per program, so painted once per layout.
        lay.memory_bars records each cell's segments [(class, QRectF), ...] (tests measure them)."""
        lay.memory_bars = []
        cells = lay.cells
        bar_h, _room = self._bar_room(float(cells[0, 3])) if len(cells) else (0.0, 0.0)
        if not bar_h:
            return
        info = self.info
        totals = info.memory_totals()
        top = float(np.nanmax(totals)) if np.any(np.isfinite(totals)) else 0.0
        if top <= 0:
            return
        colours = self.memory_colours()
        p.setPen(Qt.NoPen)
        track = QColor(theme.palette().slot_empty)
        for pos, (x, y, w, h) in enumerate(cells.tolist()):
            x0, x1 = round(x + 3), round(x + w - 3)
            by = round(y + h - 2 - bar_h)
            p.fillRect(QRectF(x0, by, x1 - x0, bar_h), track)
            row = info.memory[pos] or {}
            segs, cum = [], 0.0
            for c, col in colours.items():
                b = float(row.get(c, 0.0))
                if b <= 0:
                    continue
                a = x0 + round((x1 - x0) * cum / top)
                cum += b
                e = x0 + round((x1 - x0) * cum / top)
                if e > a:
                    r = QRectF(a, by, e - a, bar_h)
                    p.fillRect(r, col)
                    segs.append((c, r))
            lay.memory_bars.append(segs)

    def _colours(self, count: int) -> np.ndarray:
        """count device colours as 0xAARRGGBB words (the fine blocks' colours), cached."""
        key = ("rgb", count)
        arr = self._images.get(key)
        if arr is None:
            arr = np.array([c.rgba() for c in theme.device_colors(count)], dtype=np.uint32)
            self._images[key] = arr
        return arr

    def _paint_cells(self, p, lay, k, eps, part="all"):
        """The cells and each tensor's block in them. part "base": the cells' boxes and the tensors'
        names only (what stays while a collective's messages land); "blocks": the blocks only."""
        info, pal = self.info, theme.palette()
        cells = lay.cells
        n = info.n
        if part != "blocks":
            p.drawImage(0, 0, self._background(lay))
        slots = self._tensor_slots(k, eps)
        cw, ch = float(cells[0, 2]), float(cells[0, 3])
        label_h = self._cell_label_h(ch, cw)
        room = self._bar_room(ch)[1]  # the memory bar's, at the bottom of every cell
        ch -= room
        slots = slots[:self._slots_that_fit(ch, label_h, len(slots), cw)]
        self._slot_key = (len(slots), self._slot_cols(cw, ch - label_h - 4, len(slots)) if slots else 1)
        if not slots:
            return
        in_flight = k >= 0 and info.events[k].t_start + eps < self.t < info.events[k].t_end - eps
        arrivals = dict(zip(("got", "total", "have"), info.arrivals(k, self.t + eps))) \
            if in_flight and part != "base" else {}
        dev_cols = self._images.get(("devices", n))
        if dev_cols is None:
            dev_cols = self._images[("devices", n)] = theme.device_colors(n)
        empty = QColor(pal.slot_empty).rgba()
        hl = QColor(pal.highlight)
        xs, ys, ws, hs = cells[:, 0], cells[:, 1], cells[:, 2], cells[:, 3] - room
        for i, (tr, now, changing, after) in enumerate(slots):
            R, C = info.fine_grid(tr)
            slot0 = self._slot_box(float(xs[0]), float(ys[0]), float(ws[0]), float(hs[0]), label_h, i, len(slots))
            small = theme.font("small")  # the name as large as the slot allows, never under 9 px
            small.setPixelSize(max(9, min(small.pixelSize(), int(slot0.height() * 0.85))))
            fm = QFontMetricsF(small)
            name_w = fm.horizontalAdvance(tr.name) + 4
            named = (slot0.height() >= max(14.0, fm.height() * 0.8)  # too small a slot: the key says which
                     and slot0.width() >= name_w + 1.5 * slot0.height())
            key = (tr.name, i, len(slots), named)
            boxes = lay.boxes.get(key)
            if boxes is None:  # the same in every frame at this size: computed once
                boxes = []
                for x, y, w, h in zip(xs.tolist(), ys.tolist(), ws.tolist(), hs.tolist()):
                    box = self._slot_box(x, y, w, h, label_h, i, len(slots))
                    if named:  # the tensor's name at the left of its block, in every cell
                        box = QRectF(box.x() + name_w, box.y(), box.width() - name_w, box.height())
                    boxes.append(self._fit_box(box, tr))
                lay.boxes[key] = boxes
            if named and part != "blocks":  # the names in every cell: one transparent picture per arrangement
                names = lay.boxes.get(("names",) + key)
                if names is None:
                    names = self._pixmap()
                    names.fill(Qt.transparent)
                    q = QPainter(names)
                    q.setFont(small)
                    q.setPen(QColor(pal.text_muted))
                    for box in boxes:
                        q.drawText(QRectF(box.x() - name_w, box.y(), name_w - 2, box.height()),
                                   Qt.AlignRight | Qt.AlignVCenter, tr.name)
                    q.end()
                    lay.boxes[("names",) + key] = names
                p.drawImage(0, 0, names)
            if part == "base":
                continue
            reducing = changing is not None and in_flight and changing == k and info.events[k].op != "all-gather"
            if now.partial or reducing:
                self._paint_partial(p, boxes, tr, now, after if reducing else None, arrivals, dev_cols, hl, R, C)
                continue
            held = info.held_cells(tr, now, changing if in_flight and changing == k else None, self.t + eps)
            colour = self._colours(R * C).reshape(R, C)
            words = np.where(held, colour[None], np.uint32(empty)).reshape(n * R, C)
            words = np.ascontiguousarray(words)
            img = QImage(words.data, C, n * R, C * 4, QImage.Format_ARGB32)
            for pos, box in enumerate(boxes):
                p.drawImage(box, img, QRectF(0, pos * R, C, R))
            if changing is not None and in_flight and changing == k:  # where the gather is going
                key = (tr.name, i, len(slots), named, after)
                rects = lay.boxes.get(key)
                if rects is None:
                    sp = info.spans(tr, after)
                    rects = lay.boxes[key] = [self._span_rect(box, sp[pos], R, C) for pos, box in enumerate(boxes)]
                p.setPen(QPen(hl, 1.0))
                p.setBrush(Qt.NoBrush)
                p.drawRects(rects)

    @staticmethod
    def _span_rect(box: QRectF, span, R, C) -> QRectF:
        r0, r1, c0, c1 = (float(v) for v in span)
        return QRectF(box.x() + c0 / C * box.width(), box.y() + r0 / R * box.height(),
                      (c1 - c0) / C * box.width(), (r1 - r0) / R * box.height())

    def _paint_partial(self, p, boxes, tr, now, after, arrivals, dev_cols, hl, R, C):
        """A pending sum: each device's term, hatched in its own colour; during the reduction that
        ends it, the part each device ends with outlined and filling as its messages land."""
        info = self.info
        sp = info.spans(tr, now)
        empty = QColor(theme.palette().slot_empty)
        for pos, box in enumerate(boxes):
            p.setPen(Qt.NoPen)
            p.setBrush(empty)
            p.drawRect(box)
            r = self._span_rect(box, sp[pos], R, C)
            light = QColor(dev_cols[pos])
            light.setAlpha(90)
            p.setBrush(light)
            p.drawRect(r)
            p.setBrush(QBrush(dev_cols[pos], Qt.BDiagPattern))
            p.drawRect(r)
        if after is None:
            return
        dest = info.spans(tr, after)
        got, total = arrivals["got"], np.maximum(arrivals["total"], 1)
        for pos, box in enumerate(boxes):
            d = self._span_rect(box, dest[pos], R, C)
            frac = float(got[pos]) / float(total[pos])
            if frac > 0:
                h = max(2.0, d.height() * 0.3)
                p.setPen(Qt.NoPen)
                p.setBrush(hl)
                p.drawRect(QRectF(d.x(), d.bottom() - h, d.width() * frac, h))
            p.setPen(QPen(hl, 1.0))
            p.setBrush(Qt.NoBrush)
            p.drawRect(d)

    @staticmethod
    def _cell_label_h(ch, cw) -> float:
        """The coordinate label's height in a cell of ch × cw (0: the cell is too small for it)."""
        fm = QFontMetricsF(theme.font("small"))
        return fm.height() if ch >= 3 * fm.height() and cw >= fm.horizontalAdvance("00,00") else 0.0

    @staticmethod
    def _slot_cols(w, h, count) -> int:
        """Columns of tensor slots in a cell of w × h: the arrangement whose slots are largest (for
        blocks about twice as wide as tall)."""
        best, cols = -1.0, 1
        for c in range(1, count + 1):
            r = -(-count // c)
            size = min((w - 6) / c / 2, (h - 4) / r)
            if size > best + 1e-9:
                best, cols = size, c
        return cols

    @classmethod
    def _slots_that_fit(cls, ch, label_h, count, cw=None) -> int:
        """How many tensors a cell draws: as many as fit with each slot at least TENSOR_MIN_PX tall."""
        if not count:
            return 0
        inner_h = ch - label_h - 4
        cw = inner_h * 2 if cw is None else cw
        for k in range(count, 0, -1):
            c = cls._slot_cols(cw, inner_h, k)
            if inner_h / -(-k // c) >= TENSOR_MIN_PX and (cw - 6) / c >= TENSOR_MIN_PX:
                return k
        return 1

    @classmethod
    def _slot_box(cls, x, y, w, h, label_h, i, count) -> QRectF:
        """Slot i of `count` in the cell at (x, y, w, h): where tensor i's block is drawn (slots in
        rows of _slot_cols, left to right)."""
        inner_h = h - label_h - 4
        c = cls._slot_cols(w, inner_h, count)
        r = -(-count // c)
        sw, sh = (w - 6) / c, inner_h / r
        row, col = divmod(i, c)
        return QRectF(x + 3 + col * sw + 1, y + label_h + 2 + row * sh + 1, sw - 3, sh - 3)

    def _fit_box(self, box: QRectF, tr) -> QRectF:
        """The tensor's whole extent inside `box`, keeping its fine grid's cells near square."""
        rows = tr.fine[0] if len(tr.fine) > 1 else 1
        cols = tr.fine[-1]
        aspect = max(0.5, min(4.0, cols / max(rows, 1)))
        w, h = box.width(), box.height()
        if w / max(h, 1e-9) > aspect:
            w = h * aspect
        else:
            h = w / aspect
        return QRectF(box.x(), box.y() + (box.height() - h) / 2, w, h)

    def _paint_outlines(self, p, lay, k, eps):
        if k < 0:
            return
        ev = self.info.events[k]
        active = ev.t_start + eps < self.t < ev.t_end - eps
        outs = lay.outlines[k]
        per_cell = len(outs) > len(ev.groups)
        cols = theme.device_colors(len(ev.groups)) if per_cell else None
        hl = QColor(theme.palette().highlight)
        if not active:
            hl.setAlpha(140)
        cell = float(min(lay.cells[0, 2], lay.cells[0, 3]))
        width = max(1.0, min(2.5 * theme.scale(), 0.06 * cell) if active else min(1.5 * theme.scale(), 0.04 * cell))
        p.setBrush(Qt.NoBrush)
        for gi, (x, y, w, h) in outs:
            p.setPen(QPen(cols[gi] if per_cell else hl, width))
            p.drawRoundedRect(QRectF(x, y, w, h), 5, 5)

    def _paint_moving(self, p, lay, k):
        """Every message in flight at t: a small block on its way from its sender to its receiver,
        in the colour of the group member whose data it carries."""
        if not len(self.moving) or k < 0:
            return
        info = self.info
        cols = info.columns
        src = info.pos_of_dev[cols["src"][self.moving]]
        dst = info.pos_of_dev[cols["dst"][self.moving]]
        chunk = cols["chunk"][self.moving]
        cells = lay.cells
        cx, cy = cells[:, 0] + cells[:, 2] / 2, cells[:, 1] + cells[:, 3] / 2
        f = self.progress
        xs = cx[src] + (cx[dst] - cx[src]) * f
        ys = cy[src] + (cy[dst] - cy[src]) * f
        size = max(4.0, min(float(cells[0, 2]), float(cells[0, 3])) * 0.16)
        members, group_of = self._groups_of(k)
        # the group member whose data the message carries (the trace's chunk: its group index)
        owner = members[group_of[src], chunk % members.shape[1]] if len(members) else src
        brushes = self._images.get(("brushes", info.n))
        if brushes is None:  # one brush a device, made once (setBrush(QColor) would make one a message)
            brushes = self._images[("brushes", info.n)] = [QBrush(c) for c in theme.device_colors(info.n)]
        p.setPen(QPen(QColor(theme.palette().text), 1.0))
        for x, y, o in zip((xs - size / 2).tolist(), (ys - size / 2).tolist(), owner.tolist()):
            p.setBrush(brushes[o])
            p.drawRect(QRectF(x, y, size, size))

    def _groups_of(self, k):
        """Event k's groups as a (groups, g) array of positions and each position's group (cached)."""
        key = ("groups", k)
        got = self._images.get(key)
        if got is None:
            ev = self.info.events[k]
            members = np.array(ev.groups, dtype=np.int64).reshape(len(ev.groups), -1)
            group_of = np.zeros(self.info.n, dtype=np.int64)
            for gi, grp in enumerate(ev.groups):
                group_of[list(grp)] = gi
            got = self._images[key] = (members, group_of)
        return got

    def _strip_items(self, t=None):
        """The tensors in the order the cells draw them (the one changing now first), at t (default:
        the time shown)."""
        info = self.info
        t = self.t if t is None else t
        eps = time_eps(self.run.trace.t_end) if self.run is not None else 0.0
        k = info.event_at(t, eps)
        focus = info.events[k].tensor if k >= 0 else ""
        out = []
        for tr in sorted(info.tensors, key=lambda tr: tr.name != focus):
            now, changing, before, after = tr.at(info.events, t, eps)
            out.append((f"{before} → {after}" if changing is not None else now, changing is not None))
        return out

    def _key_room(self, cells) -> tuple:
        """(width of one key in the strip, how many tensors have one) for cells of this size: the
        slots _paint_cells will draw (_slot_key), keyed as _paint_panel keys them."""
        count = len(self.info.tensors)
        if not count or not len(cells):
            return 0.0, 0
        cw, ch = float(cells[0, 2]), float(cells[0, 3])
        label_h = self._cell_label_h(ch, cw)
        ch -= self._bar_room(ch)[1]
        count = self._slots_that_fit(ch, label_h, count, cw)
        cols = self._slot_cols(cw, ch - label_h - 4, count)
        rows = -(-count // cols)
        kh = QFontMetricsF(theme.font("body", bold=True, mono=True)).height() * 0.62
        return kh * 1.6 * cols / rows + 6, count

    def _strip_states(self) -> list:
        """Every text the strip shows during the run, state by state: [(text, changing), ...] before
        the first collective, during each and after each (cached per run)."""
        states = self._images.get("strip states")
        if states is None:
            times = [0.0]
            for e in self.info.events:
                times += [(e.t_start + e.t_end) / 2, e.t_end]
            states = self._images["strip states"] = [self._strip_items(t) for t in times]
        return states

    def _strip_lines(self, width, key_w=0.0, keys=0, cap=4) -> int:
        """Lines the notation strip needs at `width` (at most cap): the most any of its states takes,
        wrapped as _paint_panel wraps it, the first `keys` items with a key of key_w before them."""
        fm = QFontMetricsF(theme.font("body", bold=True, mono=True))
        gap = fm.horizontalAdvance("   ")
        pad = 6 * theme.scale()
        x0, right = pad, width - pad
        most = 1
        for items in self._strip_states():
            lines, x = 1, x0
            for i, (text, _changing) in enumerate(items):
                w = fm.horizontalAdvance(text)
                if x > x0 and x + w + (key_w if i < keys else 0.0) > right:
                    x, lines = x0, lines + 1
                if i < keys:
                    x += key_w
                if x > x0 and x + w > right:
                    x, lines = x0, lines + 1
                x += w + gap
            most = max(most, lines)
        return min(most, cap)

    def notation_texts(self) -> list:
        """What the notation strip says at t, in its order: [(text, changing now), ...]."""
        return self._strip_items() if self.info is not None else []

    def _paint_panel(self, p, lay, k, eps):
        info, pal = self.info, theme.palette()
        r = lay.panel
        p.setPen(QPen(QColor(pal.border), 1.0))
        p.setBrush(QColor(pal.surface))
        p.drawRoundedRect(r, 6, 6)
        pad = 6 * theme.scale()
        mono = theme.font("body", mono=True)
        mono_b = theme.font("body", bold=True, mono=True)
        fmb = QFontMetricsF(mono_b)
        lh = fmb.height() * 1.2
        x, y = r.x() + pad, r.y() + pad / 2
        gap = fmb.horizontalAdvance("   ")
        self._strip_rects = []
        count, cols = getattr(self, "_slot_key", (0, 1))
        rows = -(-count // cols) if count else 1
        kh = fmb.height() * 0.62
        kw = kh * 1.6 * cols / rows if count else 0.0
        for i, (text, changing) in enumerate(self._strip_items()):
            need = fmb.horizontalAdvance(text) + (kw + 6 if i < count else 0)
            if x > r.x() + pad and x + need > r.right() - pad:
                x, y = r.x() + pad, y + lh
            if y + lh > r.bottom() + 1:  # no line left: neither key nor text below the strip
                break
            if i < count:  # a key: where in every cell this tensor's block is (its slot, filled)
                kx, ky = x, y + (lh - kh) / 2
                p.setPen(QPen(QColor(pal.text_muted), 1.0))
                p.setBrush(Qt.NoBrush)
                p.drawRect(QRectF(kx, ky, kw, kh))
                row, col = divmod(i, cols)
                p.setPen(Qt.NoPen)
                p.setBrush(QColor(pal.highlight) if changing else QColor(pal.text))
                p.drawRect(QRectF(kx + col * kw / cols + 1, ky + row * kh / rows + 1, kw / cols - 2, kh / rows - 2))
                x += kw + 6
            w = fmb.horizontalAdvance(text)
            if x > r.x() + pad and x + w > r.right() - pad:
                x, y = r.x() + pad, y + lh
            if y + lh > r.bottom() + 1:
                break
            p.setFont(mono_b if changing else mono)
            p.setPen(QColor(pal.highlight) if changing else QColor(pal.text))
            rect = QRectF(x, y, min(w + 2, r.right() - pad - x), lh)
            p.drawText(rect, Qt.AlignLeft | Qt.AlignVCenter, text)
            self._strip_rects.append((text, rect))
            x += w + gap
        # under the grid: what the colours say, and the program's totals
        p.setPen(QColor(pal.text_muted))
        p.setFont(theme.font("body"))
        g = lay.grid
        foot = self.tr("colour = the device a block came from · hatched = a term of a pending sum · outlined = "
                       "the groups of the axis in use · simulated {sim}, published {pub}, max |error| {err:.1e}").format(
            sim=fmt_time(info.simulated_total), pub=fmt_time(info.published_total), err=info.max_err)
        w = lay.header.width()  # the whole width, under the strip too where it stands beside the grid
        p.drawText(QRectF(g.x(), g.bottom(), w, 1.6 * lay.line), Qt.AlignLeft | Qt.AlignVCenter,
                   QFontMetricsF(p.font()).elidedText(foot, Qt.ElideRight, w))
        p.setFont(theme.font("small"))
        self._paint_memory_legend(p, lay.legend, lay.line)

    def memory_legend(self) -> tuple:
        """The memory legend's words: (lead, [(class, its name)], the totals), e.g. ("memory per
        device:", [("weights", "weights"), ...], "352 MiB each" or "12 MiB–16 MiB": the smallest and the
        largest device's totals); None without memory."""
        if not self._has_memory():
            return None
        totals = self.info.memory_totals()
        lo, hi = float(np.nanmin(totals)), float(np.nanmax(totals))
        spread = (self.tr("{total} each").format(total=fmt_bytes(hi)) if lo == hi else
                  self.tr("{lo}–{hi}").format(lo=fmt_bytes(lo), hi=fmt_bytes(hi)))
        return (self.tr("memory per device:"), [(c, mesh_memory_class(c)) for c in self.info.memory_classes()],
                spread)

    def _paint_memory_legend(self, p, r, line):
        """Under the footer: each memory class's colour and name, and the devices' totals (the bars'
        scale: the longest bar is the largest total). Names give way to the colours alone where the
        line is too narrow. self.memory_legend_rects: [(text, QRectF)] as drawn."""
        self.memory_legend_rects = []
        legend = self.memory_legend()
        if legend is None:
            return
        lead, classes, spread = legend
        fm = QFontMetricsF(p.font())
        sq = round(fm.height() * 0.55)
        gap = fm.horizontalAdvance(" ")
        colours = self.memory_colours()
        lh = fm.height() * 1.15
        if r.height() >= (len(classes) + 2) * lh:  # a column: the lead, a class a line, the totals
            y = r.y()
            for t, c in [(lead, None)] + [(name, c) for c, name in classes] + [(spread, None)]:
                x = r.x() + 6 * theme.scale()
                if c is not None:
                    p.fillRect(QRectF(round(x), round(y + (lh - sq) / 2), sq, sq), colours[c])
                    x += sq + gap
                rect = QRectF(x, y, r.right() - x, lh)
                p.setPen(QColor(theme.palette().text_muted))
                p.drawText(rect, Qt.AlignLeft | Qt.AlignVCenter, fm.elidedText(t, Qt.ElideRight, rect.width()))
                self.memory_legend_rects.append((t, rect))
                y += lh
            return
        r = QRectF(r.x(), r.y(), r.width(), min(r.height(), 1.3 * line))  # one line
        need = (fm.horizontalAdvance(lead) + fm.horizontalAdvance(" · " + spread)
                + sum(sq + 2 * gap + fm.horizontalAdvance(name) for _c, name in classes))
        named = need <= r.width()
        x = r.x()

        def text(t):
            nonlocal x
            w = min(fm.horizontalAdvance(t), max(0.0, r.right() - x))
            rect = QRectF(x, r.y(), w + 1, r.height())
            p.setPen(QColor(theme.palette().text_muted))
            p.drawText(rect, Qt.AlignLeft | Qt.AlignVCenter, fm.elidedText(t, Qt.ElideRight, w + 1))
            self.memory_legend_rects.append((t, rect))
            x += w

        text(lead)
        for c, name in classes:
            x += gap
            p.fillRect(QRectF(round(x), round(r.center().y() - sq / 2), sq, sq), colours[c])
            x += sq + gap * 0.6
            if named:
                text(name)
        text(" · " + spread)
