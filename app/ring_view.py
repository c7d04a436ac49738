"""
The ring view: n devices around one switch, their buffers as slots, messages as blocks.

What is on screen at simulated time t is a function of (trace, t) alone (`set_time`): the
buffers are `TraceIndex.holdings(c, t)` (the engine's own per-time query, memoised), the
blocks are the messages with t_start <= t < t_end, placed by their progress. Items are created
once per run (`_on_model_changed`) and updated in place every frame; nothing is rebuilt while
playing.

Picture, and why it looks like that:
  * Every device has one full-duplex port into the switch, so a spoke is two lanes: the send
    lane (blocks going in) and the receive lane (blocks coming out). A port carries one message
    at a time, so two blocks never share a lane: nothing overlaps, at any n.
  * A block rides the sender's send lane to the switch, then the receiver's receive lane out;
    while it is in the switch a chord joins the two ports (the crossbar connection). Ring
    steps draw a polygon of neighbours, recursive doubling pairs devices across the circle,
    direct draws star polygons, and in-network reduction sends blocks *into* the switch, whose
    own slots fill with the sum before it multicasts them out.
  * A slot's colour says whose data it holds: one colour per device (Okabe–Ito for n ≤ 8, a
    cyclic map beyond). A partial sum shows its contributors as bands (n ≤ 8) or, when bands
    would be thinner than a pixel, fills the share of devices already added.
  * Slots that changed in the last finished step are outlined.
Small n (≤ 16): axis-aligned device boxes on an ellipse, slots in rows. Larger n: radial bars
on a circle, labels thinned so they never collide.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QEvent, QLineF, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QImage, QPainter, QPen, QPixmapCache, QTransform
from PySide6.QtWidgets import QFrame, QGraphicsItem, QGraphicsScene, QGraphicsView

from simcore.trace import ALL, SWITCH, _Who  # _Who: a message's contributors, decoded when read

from . import theme
from .explain import fmt_bytes, fmt_time, op_title
from .ring_layout import BOX_MODE_MAX_N, RingShape, RingTexts, make_font, ring_layout, text_size, wrap_lines

STRIPE_MAX_N = 8  # up to this many devices a partial sum is drawn as contributor bands


# ---------------------------------------------------------------------------------------
# Painting one chunk (slots and blocks share it)
# ---------------------------------------------------------------------------------------
def paint_chunk(p: QPainter, r: QRectF, who, n: int, brushes, empty: QBrush, chunk: int, vertical_fill: bool):
    """
    Fill rect r for a chunk holding the data of devices `who` (a frozenset, or None = not held).
    One contributor: its colour. Several: bands of their colours (n ≤ STRIPE_MAX_N), else the
    share len(who)/n filled with the chunk's colour.
    """
    if not who:
        p.fillRect(r, empty)
        return
    k = len(who)
    if k == 1:
        p.fillRect(r, brushes[next(iter(who)) % len(brushes)])
        return
    if n <= STRIPE_MAX_N:
        ws = sorted(who)
        h = r.height() / k
        for i, d in enumerate(ws):
            p.fillRect(QRectF(r.left(), r.top() + i * h, r.width(), h + 0.5), brushes[d % len(brushes)])
        return
    p.fillRect(r, empty)
    frac = k / max(n, 1)
    col = brushes[(chunk if chunk >= 0 else min(who)) % len(brushes)]
    if vertical_fill:
        p.fillRect(QRectF(r.left(), r.bottom() - r.height() * frac, r.width(), r.height() * frac), col)
    else:
        p.fillRect(QRectF(r.left(), r.top(), r.width() * frac, r.height()), col)


def message_color_index(m, n: int) -> int:
    """The device colour a message is drawn in: its only contributor, else its chunk, else its sender."""
    if len(m.contributors) == 1:
        return next(iter(m.contributors)) % max(n, 1)
    if m.chunk != ALL:
        return m.chunk % max(n, 1)
    return m.src % max(n, 1) if m.src >= 0 else -1


def message_color_indices(trace, n: int) -> np.ndarray:
    """message_color_index of every message of `trace` at once, from its columns."""
    n = max(n, 1)
    r = trace.rows()
    k = trace.contributor_counts()
    first, period = r["w0"].astype(np.int64), r["w2"]
    explicit = np.frombuffer(trace._explicit, dtype=np.int32) if len(trace._explicit) else np.zeros(1, np.int32)
    single = np.where(period > 0, first, explicit[np.clip(first, 0, len(explicit) - 1)])
    chunk, src = r["chunk"].astype(np.int64), r["src"].astype(np.int64)
    out = np.where(chunk != ALL, chunk % n, np.where(src >= 0, src % n, -1))
    return np.where(k == 1, single % n, out)


def block_fills(trace, n: int) -> tuple[np.ndarray, np.ndarray]:
    """For every message, what paint_chunk fills its block with at n > STRIPE_MAX_N: (how many
    contributors, the colour's device: the only contributor, else the chunk, else the lowest)."""
    n = max(n, 1)
    r = trace.rows()
    k = trace.contributor_counts()
    first, count, period = (r[f].astype(np.int64) for f in ("w0", "w1", "w2"))
    explicit = np.frombuffer(trace._explicit, dtype=np.int32) if len(trace._explicit) else np.zeros(1, np.int32)
    lowest = np.where(period > 0, np.where(first + count > np.maximum(period, 1), 0, first),
                      explicit[np.clip(first, 0, len(explicit) - 1)])  # an arc past period − 1 wraps to 0
    chunk = r["chunk"].astype(np.int64)
    colour = np.where(k == 1, lowest, np.where(chunk >= 0, chunk, lowest)) % n
    return k, colour


def _bgra(hex_color: str) -> np.ndarray:
    c = QColor(hex_color)
    return np.array([c.blue(), c.green(), c.red(), 255], np.uint8)


class _Colors:
    """QBrushes for the current palette and n (cached once per run / theme change)."""

    def __init__(self, n: int):
        pal = theme.palette()
        self.devices = theme.device_colors(max(n, 1))
        self.brushes = [QBrush(c) for c in self.devices]
        self.empty = QBrush(QColor(pal.slot_empty))
        self.bgra = np.array([[c.blue(), c.green(), c.red(), 255] for c in self.devices], np.uint8)
        self.empty_bgra = _bgra(pal.slot_empty)
        self.border_bgra = _bgra(pal.border)
        self.new_bgra = _bgra(pal.highlight)
        self.slot_pen = QPen(QColor(pal.slot_border), theme.line("hairline"))
        self.box_pen = QPen(QColor(pal.border), theme.line("outline"))
        self.box_brush = QBrush(QColor(pal.surface))
        self.new_pen = QPen(QColor(pal.highlight), theme.line("highlight"))
        self.new_pen.setJoinStyle(Qt.MiterJoin)
        self.text = QColor(pal.text)
        self.muted = QColor(pal.text_muted)
        self.spoke = QColor(pal.spoke)
        self.spoke_active = QColor(pal.spoke_active)
        self.switch_fill = QBrush(QColor(pal.switch_fill))
        self.switch_pen = QPen(QColor(pal.switch_border), theme.line("outline"))
        self.background = QColor(pal.background)


# ---------------------------------------------------------------------------------------
# Items
# ---------------------------------------------------------------------------------------
class HeldRow(Sequence):
    """Device d's slots in a scenarios.Held snapshot as the tuple of contributors (None = not held),
    each decoded only when read (slot_state, tests): radial bars paint from the arrays."""

    __slots__ = ("held", "d", "n_chunks")

    def __init__(self, held, d: int, n_chunks: int):
        self.held, self.d, self.n_chunks = held, d, n_chunks

    def __len__(self):
        return self.n_chunks

    def __getitem__(self, ch):
        if isinstance(ch, slice):
            return tuple(self[i] for i in range(*ch.indices(self.n_chunks)))
        if not 0 <= ch < self.n_chunks:
            raise IndexError(ch)
        return self.held.who(self.d, ch)


class DeviceItem(QGraphicsItem):
    """One device's buffer: a box of slots (box mode) or a radial bar (radial mode)."""

    def __init__(self, d: int, colors: _Colors, n: int):
        super().__init__()
        self.d = d
        self.n = n
        self.colors = colors
        self.radial = False
        self.w = self.h = 10.0
        self.cols = self.rows = 1
        self.pad = 4.0
        self.n_chunks = 0
        self.state: tuple = ()
        self.new: frozenset = frozenset()
        self._rects: list = []
        self._image = None
        self._counts = self._owners = None  # radial bars at large n: per chunk, contributors and colour
        self.layer = None  # BarsLayer that paints this device in radial mode
        self.setAcceptedMouseButtons(Qt.LeftButton)
        # painted once per change of state, then blitted: full repaints stay cheap at n = 64
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)

    def set_geometry(self, w, h, cols, rows, pad, radial):
        self.prepareGeometryChange()
        self.w, self.h, self.cols, self.rows, self.pad, self.radial = w, h, cols, rows, pad, radial
        self._rects = []
        self.setCacheMode(QGraphicsItem.NoCache if radial else QGraphicsItem.DeviceCoordinateCache)
        # radial bars are painted by BarsLayer: the view need not visit 256 empty paints a frame
        self.setFlag(QGraphicsItem.ItemHasNoContents, radial)
        self._changed()

    def set_state(self, n_chunks: int, state: tuple, new: frozenset) -> bool:
        self._counts = self._owners = None
        if n_chunks == self.n_chunks and state == self.state and new == self.new:
            return False
        if n_chunks != self.n_chunks:
            self._rects = []
        if (n_chunks, state) != (self.n_chunks, self.state):
            self._image = None
        self.n_chunks, self.state, self.new = n_chunks, state, new
        self._changed()
        return True

    def set_counts(self, n_chunks: int, counts: np.ndarray, owners: np.ndarray, new: frozenset, state) -> None:
        """
        Radial bars at large n: the state as arrays (per chunk: how many devices' data it holds,
        0 = not held, and the colour owner) — what the bar paints, without a set per slot.
        `state` reads as the tuple of contributors (scenarios.Held, decoded when asked for).
        """
        self.n_chunks, self.state, self.new = n_chunks, state, new
        self._counts, self._owners = counts, owners
        self._rects = []
        self._image = None
        self._changed()

    def _changed(self):
        if self.radial and self.layer is not None:
            self.layer.update()
        else:
            self.update()

    def boundingRect(self):
        m = theme.line("highlight")
        return QRectF(-self.w / 2 - m, -self.h / 2 - m, self.w + 2 * m, self.h + 2 * m)

    def slot_rect(self, ch: int) -> QRectF:
        """Rect of chunk slot `ch` in item coordinates."""
        if len(self._rects) != self.n_chunks:
            self._rects = [self._slot_rect(c) for c in range(self.n_chunks)]
        return self._rects[ch]

    def _slot_rect(self, ch: int) -> QRectF:
        pad = self.pad
        iw, ih = self.w - 2 * pad, self.h - 2 * pad
        if self.radial:  # chunk 0 at the inner end (local +y), growing outwards
            sh = ih / max(self.n_chunks, 1)
            return QRectF(-iw / 2, self.h / 2 - pad - (ch + 1) * sh, iw, sh)
        sw, sh = iw / max(self.cols, 1), ih / max(self.rows, 1)
        r, c = divmod(ch, max(self.cols, 1))
        gap = 1.0 if sw > 6 else 0.0
        return QRectF(-iw / 2 + c * sw + gap / 2, -ih / 2 + r * sh + gap / 2, sw - gap, sh - gap)

    def paint(self, p: QPainter, option, widget=None):
        if self.radial:
            return  # radial bars are painted together by BarsLayer (one cached picture)
        self.paint_contents(p)

    def paint_contents(self, p: QPainter):
        col = self.colors
        rect = QRectF(-self.w / 2, -self.h / 2, self.w, self.h)
        if not self.radial:
            p.setPen(col.box_pen)
            p.setBrush(col.box_brush)
            p.drawRoundedRect(rect, 4, 4)
        if not self.n_chunks:
            return
        p.setPen(Qt.NoPen)
        if self.radial:  # many thin slots: one image, one row per chunk (see _bar_image)
            if self._image is None:
                self._image = self._bar_image()
            p.drawImage(QPointF(-self._image.width() / 2, -self._image.height() / 2), self._image)
            return
        framed = self.slot_rect(0).width() > 6
        if not framed:  # one fill for every empty slot, then only the held ones
            p.fillRect(rect.adjusted(self.pad, self.pad, -self.pad, -self.pad), col.empty)
        for ch in range(self.n_chunks):
            who = self.state[ch]
            if who or framed:
                paint_chunk(p, self.slot_rect(ch), who, self.n, col.brushes, col.empty, ch, vertical_fill=False)
        if framed:
            p.setPen(col.slot_pen)
            p.setBrush(Qt.NoBrush)
            for ch in range(self.n_chunks):
                p.drawRect(self.slot_rect(ch))
        self._paint_new(p)

    def _paint_new(self, p):
        if self.new:
            p.setPen(self.colors.new_pen)
            p.setBrush(Qt.NoBrush)
            for ch in self.new:
                if 0 <= ch < self.n_chunks:
                    p.drawRect(self.slot_rect(ch))

    def _bar_image(self) -> QImage:
        """The radial bar as an image at its pixel size (see bar_images, which builds many at once)."""
        return bar_images([self])[0]


def bar_images(devices) -> list:
    """
    Radial bars as images at their pixel size, chunk 0 in the bottom rows (the inner end), with
    frame and new-chunk outline drawn in: a slot held by one device is filled with its colour; a
    partial sum fills the share of devices added (paint_chunk's rule as pixels). Devices of one
    ring share size, chunk count and colours, so their pixels are computed together in numpy:
    a step boundary at n = 64 redraws 64 bars at once instead of one by one.
    """
    if not devices:
        return []
    d0 = devices[0]
    col = d0.colors
    W, H = max(3, round(d0.w)), max(3, round(d0.h))
    if any((max(3, round(d.w)), max(3, round(d.h))) != (W, H) for d in devices[1:]):
        return [img for d in devices for img in bar_images([d])]  # mixed sizes: one at a time
    iw, ih = W - 2, H - 2
    nc = max(d0.n_chunks, 1)
    n = max(d0.n, 1)
    bgra = col.bgra
    D = len(devices)
    if all(d._counts is not None for d in devices):  # arrays from the index (set_counts)
        k = np.stack([d._counts[:nc] for d in devices]).astype(np.int64)
        owner = np.stack([d._owners[:nc] for d in devices]).astype(np.int64)
    else:
        # every slot's contributors (a frozenset, or None): the same few sets recur across devices,
        # so each distinct one is measured once and the slots only look it up
        flat = [who for d in devices for who in (tuple(d.state[:nc]) + (None,) * (nc - len(d.state[:nc])))]
        distinct = list(set(flat))
        code = {who: i for i, who in enumerate(distinct)}
        table = np.array([(len(who), next(iter(who)) if len(who) == 1 else -1) if who else (0, -1)
                          for who in distinct], np.int64).reshape(-1, 2)
        info = table[np.fromiter(map(code.__getitem__, flat), np.int64, len(flat))].reshape(D, nc, 2)
        k = info[:, :, 0]
        owner = np.where(info[:, :, 1] >= 0, info[:, :, 1], np.arange(nc)[None, :])  # a sum: its chunk's colour
    # one uint32 per pixel (BGRA bytes = ARGB32 on a little-endian machine): a quarter of the elements
    def px(bgra_rows):
        return np.ascontiguousarray(bgra_rows, np.uint8).view("<u4")[..., 0]

    empty, border, new_px = px(col.empty_bgra[None]), px(col.border_bgra[None]), px(col.new_bgra[None])
    colours = np.where(k > 0, px(bgra)[owner % len(bgra)], empty)  # (D, nc)
    fill = np.where(k == 1, iw, np.where(k > 1, np.maximum(1, np.round(iw * k / n)), 0)).astype(int)
    chunk_of_row = np.minimum((ih - 1 - np.arange(ih)) * nc // ih, nc - 1)  # image row -> chunk (non-increasing)
    filled = np.arange(iw)[None, None, :] < fill[:, chunk_of_row][:, :, None]  # (D, ih, iw)
    arr = np.empty((D, H, W), "<u4")
    arr[:] = border
    arr[:, 1:-1, 1:-1] = np.where(filled, colours[:, chunk_of_row][:, :, None], empty)
    # each chunk's first and last image row (+1 for the frame), found once for all devices
    first = np.searchsorted(-chunk_of_row, -np.arange(nc), side="left") + 1
    last = np.searchsorted(-chunk_of_row, -np.arange(nc), side="right")
    for i, d in enumerate(devices):
        for ch in d.new:  # outline the chunks that arrived in the last step
            if 0 <= ch < nc and first[ch] <= last[ch]:
                lo, hi = max(first[ch] - 1, 0), min(last[ch] + 2, H)
                a = arr[i]
                a[lo:lo + 2, :] = new_px
                a[hi - 2:hi, :] = new_px
                a[lo:hi, :2] = new_px
                a[lo:hi, -2:] = new_px
    data = arr.view(np.uint8)
    return [QImage(data[i].data, W, H, 4 * W, QImage.Format_ARGB32).copy() for i in range(D)]


class BarsLayer(QGraphicsItem):
    """
    Paints every radial bar in one item, cached as one unrotated picture: a frame where no
    buffer changed costs a single blit instead of 64 rotated ones. Geometry and state stay in
    the DeviceItems (clicks, slot_state); this only draws them.
    """

    def __init__(self, devices):
        super().__init__()
        self.devices = devices
        self.rect = QRectF()
        self.setZValue(3)
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        for d in devices:
            d.layer = self

    def set_rect(self, r: QRectF):
        self.prepareGeometryChange()
        self.rect = QRectF(r)
        self.update()

    def boundingRect(self):
        return self.rect

    def paint(self, p: QPainter, option, widget=None):
        p.setRenderHint(QPainter.SmoothPixmapTransform, False)
        p.setRenderHint(QPainter.Antialiasing, False)
        stale = [d for d in self.devices if d.radial and d.n_chunks and d._image is None]
        for d, img in zip(stale, bar_images(stale)):
            d._image = img
        base = p.transform()
        for d in self.devices:  # each bar at its place and angle: one transform, one image
            if d.radial and d.n_chunks and d._image is not None:
                img = d._image
                p.setTransform(QTransform().translate(d.x(), d.y()).rotate(d.rotation()) * base)
                p.drawImage(QPointF(-img.width() / 2, -img.height() / 2), img)
        p.setTransform(base)


class SwitchItem(QGraphicsItem):
    """The switch: a disc, its name, and (in-network reduction) its own slots."""

    def __init__(self, colors: _Colors, n: int):
        super().__init__()
        self.colors = colors
        self.n = n
        self.r = 50.0
        self.name = ""
        self.n_chunks = 0
        self.state: tuple = ()
        self.show_slots = False
        self.has_slots = False
        self.setAcceptedMouseButtons(Qt.LeftButton)
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)

    def set_radius(self, r):
        self.prepareGeometryChange()
        self.r = r
        self.update()

    def set_name(self, name):
        self.name = name
        self.update()

    def set_state(self, n_chunks, state, show) -> bool:
        if (n_chunks, state, show) == (self.n_chunks, self.state, self.show_slots):
            return False
        self.n_chunks, self.state, self.show_slots = n_chunks, state, show
        self.update()
        return True

    def boundingRect(self):
        m = theme.line("outline")
        return QRectF(-self.r - m, -self.r - m, 2 * self.r + 2 * m, 2 * self.r + 2 * m)

    def slot_rect(self, ch):
        """The switch's own buffer (in-network reduction): a grid of chunk slots in its middle."""
        nc = max(self.n_chunks, 1)
        cols = nc if nc <= 8 else math.ceil(math.sqrt(nc))
        rows = math.ceil(nc / cols)
        side = 2 * self.r * 0.66
        sw = side / cols
        sh = min(sw * 1.3, self.r * 0.9 / rows)
        r, c = divmod(ch, cols)
        y0 = -self.r * 0.2
        return QRectF(-side / 2 + c * sw + 0.5, y0 + r * sh + 0.5, sw - 1, sh - 1)

    def paint(self, p: QPainter, option, widget=None):
        col = self.colors
        p.setPen(col.switch_pen)
        p.setBrush(col.switch_fill)
        p.drawEllipse(QPointF(0, 0), self.r, self.r)
        if self.show_slots and self.n_chunks:
            p.setPen(Qt.NoPen)
            for ch in range(self.n_chunks):
                paint_chunk(p, self.slot_rect(ch), self.state[ch], self.n, col.brushes, col.empty, ch, True)
            if self.slot_rect(0).width() > 6:
                p.setPen(col.slot_pen)
                p.setBrush(Qt.NoBrush)
                for ch in range(self.n_chunks):
                    p.drawRect(self.slot_rect(ch))


def draw_lines_by_colour(p: QPainter, lines_and_colours, width: float, cap=Qt.FlatCap):
    """Stroke (QLineF, QColor) pairs with one drawLines call per colour."""
    by_colour = {}
    for line, col in lines_and_colours:
        by_colour.setdefault(col.rgba(), (col, []))[1].append(line)
    for col, lines in by_colour.values():
        pen = QPen(col, width)
        pen.setCapStyle(cap)
        p.setPen(pen)
        p.drawLines(lines)


class FlightLayer(QGraphicsItem):
    """
    Every message on the wire, drawn by one item: a square per message in the payload's colours
    with its chunk number inside. At n = 64 a frame moves 64 blocks; as 64 items that was 64
    Python paint calls and some 300 boundingRect calls a frame, here it is one call that batches
    the outlines.
    """

    def __init__(self, colors: _Colors, n: int):
        super().__init__()
        self.colors = colors
        self.n = n
        self.s = 10.0  # block side
        self.rect = QRectF()
        self.items: list = []  # (message index, QPointF centre, contributors, chunk)
        self.fills = None  # n > STRIPE_MAX_N: (contributor counts, colour devices) of every message
        self.setZValue(5)
        self.setAcceptedMouseButtons(Qt.NoButton)  # it covers the devices: clicks go to them

    def set_rect(self, r: QRectF):
        self.prepareGeometryChange()
        self.rect = QRectF(r)

    def set_size(self, s: float):
        self.s = s
        self.update()

    def set_items(self, items: list):
        if items or self.items:
            self.items = items
            self.update()

    def boundingRect(self):
        return self.rect

    def block_rect(self, pos: QPointF) -> QRectF:
        """The scene rect one block covers, its outline included."""
        m = theme.line("outline")
        return QRectF(pos.x() - self.s / 2 - m, pos.y() - self.s / 2 - m, self.s + 2 * m, self.s + 2 * m)

    def _paint_many(self, p: QPainter):
        """n > STRIPE_MAX_N: paint_chunk's rule for every block, one drawRects per colour."""
        col, s = self.colors, self.s
        k_all, colour_all = self.fills
        ids = np.fromiter((b[0] for b in self.items), np.int64, len(self.items))
        xy = np.array([(b[1].x(), b[1].y()) for b in self.items], float).reshape(-1, 2) - s / 2
        k, colour = k_all[ids], colour_all[ids]
        frac = np.where(k == 1, 1.0, k / max(self.n, 1))
        rects = [QRectF(x, y, s, s) for x, y in xy.tolist()]
        brushes, empty = col.brushes, col.empty
        fill = p.fillRect
        for r, kk, c, f in zip(rects, k.tolist(), colour.tolist(), frac.tolist()):
            if kk == 1:
                fill(r, brushes[c % len(brushes)])
            else:
                fill(r, empty)
                if kk:
                    fill(QRectF(r.left(), r.bottom() - s * f, s, s * f), brushes[c % len(brushes)])
        p.setPen(QPen(col.text, theme.line("outline")))
        p.setBrush(Qt.NoBrush)
        p.drawRects(rects)

    def paint(self, p: QPainter, option, widget=None):
        if not self.items:
            return
        col, s = self.colors, self.s
        if self.fills is not None and self.n > STRIPE_MAX_N and s < 22:  # small blocks, no numbers: batched
            self._paint_many(p)
            return
        p.setPen(Qt.NoPen)
        rects = []
        for _msg, pos, who, chunk in self.items:
            r = QRectF(pos.x() - s / 2, pos.y() - s / 2, s, s)
            paint_chunk(p, r, who, self.n, col.brushes, col.empty, chunk, vertical_fill=True)
            rects.append(r)
        p.setPen(QPen(col.text, theme.line("outline")))
        p.setBrush(Qt.NoBrush)
        p.drawRects(rects)
        if s < 22:
            return
        font = theme.font("small", bold=True)
        p.setFont(font)
        fm = QFontMetricsF(font)
        for (_msg, _pos, who, chunk), r in zip(self.items, rects):
            if chunk == ALL:
                continue
            bg = col.devices[min(who) % len(col.devices)] if len(who) == 1 else QColor("#FFFFFF")
            if len(who) > 1:  # a white badge so the number reads on bands
                w = fm.horizontalAdvance(str(chunk)) + 6
                c = r.center()
                p.fillRect(QRectF(c.x() - w / 2, c.y() - fm.height() / 2, w, fm.height()), QColor(255, 255, 255, 220))
            p.setPen(theme.text_on(bg))
            p.drawText(r, Qt.AlignCenter, str(chunk))


class ChordsLayer(QGraphicsItem):
    """
    Below the devices, each message's chord from the sender's lane to the receiver's. The
    chords stay put while their messages fly, so they are a cached picture redrawn only when
    the set changes (a step boundary).
    """

    def __init__(self):
        super().__init__()
        self.rect = QRectF()
        self.items: list = []  # (QLineF, QColor)
        self.width = 1.0
        self.setZValue(2.5)
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)

    def set_geometry(self, r: QRectF, width: float):
        self.prepareGeometryChange()
        self.rect = QRectF(r)
        self.width = width
        self.update()

    def set_items(self, items: list):
        if items != self.items:
            self.items = items
            self.update()

    def boundingRect(self):
        return self.rect

    def paint(self, p: QPainter, option, widget=None):
        draw_lines_by_colour(p, self.items, self.width, Qt.RoundCap)


class LanesLayer(QGraphicsItem):
    """
    Every spoke's two lanes (send, receive) in one item: idle lanes in the spoke colour, the
    lanes a message is using in its colour and a wider pen. At n = 64 that is 128 antialiased
    wide lines, 0.4 ms to stroke; they change only when a step does, so they are painted into a
    cached picture then and blitted in the frames between.
    """

    def __init__(self, colors: _Colors):
        super().__init__()
        self.colors = colors
        self.rect = QRectF()
        self.lines: list = []  # per device: (send QLineF, receive QLineF)
        self.active: dict = {}  # (device, 0 send | 1 receive) -> QColor
        self.width = 1.0
        self.width_active = 2.0
        self.setZValue(1)
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)  # lanes change only when a step does

    def set_geometry(self, r: QRectF, lines: list, width: float, width_active: float):
        self.prepareGeometryChange()
        self.rect = QRectF(r)
        self.lines, self.width, self.width_active = lines, width, width_active
        self.update()

    def set_active(self, active: dict):
        if active != self.active:
            self.active = dict(active)
            self.update()

    def boundingRect(self):
        return self.rect

    def paint(self, p: QPainter, option, widget=None):
        idle, active = [], []
        for d, pair in enumerate(self.lines):
            for k, line in enumerate(pair):
                col = self.active.get((d, k))
                if col is None:
                    idle.append(line)
                else:
                    active.append((line, col))
        pen = QPen(self.colors.spoke, self.width)
        pen.setCapStyle(Qt.FlatCap)
        p.setPen(pen)
        p.drawLines(idle)
        draw_lines_by_colour(p, active, self.width_active)


class LabelItem(QGraphicsItem):
    """Text (word-wrapped to `wrap` pixels if set) with a translucent background so it reads over lines."""

    def __init__(self, role="small", bold=False, halo=True, align=Qt.AlignLeft):
        super().__init__()
        self.role, self.bold, self.halo, self.align = role, bold, halo, align
        self.text = ""
        self.wrap = 0.0
        self.lines: list[str] = []
        self.color = QColor("#000000")
        self._font = theme.font(role, bold)
        self._rect = QRectF()
        self.setZValue(6)
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)

    def set_text(self, text, color: QColor | None = None):
        if color is not None and color != self.color:
            self.color = color
            self.update()
        if text != self.text:
            self.text = text
            self._measure()
            self.update()

    def set_font(self, font):
        if font != self._font:
            self._font = font
            self._measure()
            self.update()

    def set_wrap(self, width: float):
        if width != self.wrap:
            self.wrap = width
            self._measure()
            self.update()

    def set_box(self, box, color: QColor | None = None):
        """Show a text box the layout placed (app/ring_layout.py): its lines, font and rect."""
        self.prepareGeometryChange()
        self._font, self.lines, self.wrap = box.font, list(box.lines), box.rect.width()
        self.text = "\n".join(box.lines)
        self.align = Qt.AlignLeft
        self._rect = QRectF(0, 0, box.rect.width(), box.rect.height())
        self.setPos(box.rect.topLeft())
        if color is not None:
            self.color = color
        self.update()

    def _measure(self):
        self.prepareGeometryChange()
        self.lines = wrap_lines(self.text, self._font, self.wrap)
        w, h = text_size(self.lines, self._font)
        if self.align & Qt.AlignHCenter:
            x = -w / 2
        elif self.align & Qt.AlignRight:
            x = -w
        else:
            x = 0
        self._rect = QRectF(x, -h / 2 if self.align & Qt.AlignVCenter else 0, w, h)

    def size(self):
        return self._rect.size()

    def boundingRect(self):
        return self._rect

    def paint(self, p: QPainter, option, widget=None):
        if not self.lines:
            return
        if self.halo:
            bg = QColor(theme.palette().background)
            bg.setAlpha(215)
            p.fillRect(self._rect, bg)
        p.setFont(self._font)
        p.setPen(self.color)
        fm_h = QFontMetricsF(self._font).height()
        flags = int(self.align & (Qt.AlignLeft | Qt.AlignRight | Qt.AlignHCenter)) | int(Qt.AlignTop)
        for i, line in enumerate(self.lines):
            r = QRectF(self._rect.left() + 3, self._rect.top() + 1 + i * fm_h, self._rect.width() - 6, fm_h)
            p.drawText(r, flags, line)


# ---------------------------------------------------------------------------------------
# The view
# ---------------------------------------------------------------------------------------
class RingView(QGraphicsView):
    """
    Follows a ScenarioModel (rebuilds its items when the run changes) and the Playback clock
    (updates them in place). `set_time(t)` is callable directly; `slot_state(d)` returns what
    device d's slots currently paint (for tests and the predict game).
    """

    device_clicked = Signal(int)  # a device id, or SWITCH (-1) for the switch

    def __init__(self, model, playback, parent=None):
        super().__init__(parent)
        self.setObjectName("RingView")
        self.model, self.playback = model, playback
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.Antialiasing, True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        self.setOptimizationFlags(QGraphicsView.DontSavePainterState | QGraphicsView.DontAdjustForAntialiasing)
        self.setFocusPolicy(Qt.StrongFocus)
        self.setMinimumSize(320, 240)
        # item caches (DeviceCoordinateCache) live in QPixmapCache: room for 64 devices at 4K
        QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), 96 * 1024))
        self.run = None
        self._t = 0.0
        self._vs = 1.0
        self._geom = {}
        self._build(model.run)
        model.changed.connect(self._on_model_changed)
        playback.time_changed.connect(self._on_playback_time_changed)
        theme.notifier().changed.connect(self._on_theme_changed)
        self.retranslate_ui()

    # -- signals ---------------------------------------------------------------------------
    def _on_model_changed(self, run):
        self._build(run)

    def _on_playback_time_changed(self, t):
        self.set_time(t)

    def _on_theme_changed(self):
        self._build(self.run, keep_time=True)

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def retranslate_ui(self):
        self.setToolTip(self.tr("Devices around the switch. Click a device to select it."))
        if self.run is not None:
            self._texts_for_run()
            self._layout()  # new words, new sizes: the header is placed again
            self._shown_coll = object()  # force the caption to refresh
            self.set_time(self._t, force=True)

    def resizeEvent(self, e):
        super().resizeEvent(e)
        self._layout()
        self.set_time(self._t, force=True)

    def mousePressEvent(self, e):
        item = None  # the topmost device or switch under the pointer (the layers over them are skipped)
        for it in self.items(e.position().toPoint()):
            while it is not None and not isinstance(it, (DeviceItem, SwitchItem)):
                it = it.parentItem()
            if it is not None:
                item = it
                break
        if isinstance(item, DeviceItem):
            self.device_clicked.emit(item.d)
        elif isinstance(item, SwitchItem):
            self.device_clicked.emit(SWITCH)
        super().mousePressEvent(e)

    # -- building (once per run) -----------------------------------------------------------
    def _build(self, run, keep_time=False):
        scene = self.scene()
        scene.clear()
        self._labels = []
        self.run = run
        n = run.scenario.n
        tr = run.trace
        self.n = n
        self.colors = _Colors(n)
        scene.setBackgroundBrush(self.colors.background)
        self.n_chunks_max = max((c.n_chunks for c in tr.collectives), default=0)
        self._cols = {f: tr.column(f) for f in ("src", "dst", "chunk", "t_start", "t_end", "w0", "w1", "w2", "w3")}
        self._cidx = message_color_indices(tr, n)
        self.has_switch_slots = bool(np.any(self._cols["dst"] == SWITCH))
        self.switch = SwitchItem(self.colors, n)
        self.switch.setZValue(2)
        self.switch.has_slots = self.has_switch_slots
        scene.addItem(self.switch)
        self.switch_label = self._add_label("switch", bold=True, align=Qt.AlignHCenter | Qt.AlignVCenter)
        self.switch_label.setZValue(2.8)
        self.devices = []
        self.lanes = LanesLayer(self.colors)  # per device: a send lane and a receive lane
        scene.addItem(self.lanes)
        for d in range(n):
            item = DeviceItem(d, self.colors, n)
            item.setZValue(3)
            scene.addItem(item)
            self.devices.append(item)
        self.bars = BarsLayer(self.devices)
        scene.addItem(self.bars)
        self.device_labels = [self._add_label("device", bold=True, align=Qt.AlignHCenter | Qt.AlignVCenter)
                              for _ in range(n)]
        self.flight = FlightLayer(self.colors, n)
        self.flight.fills = block_fills(tr, n) if n > STRIPE_MAX_N else None
        self.chord_layer = ChordsLayer()
        scene.addItem(self.flight)
        scene.addItem(self.chord_layer)
        self.block_labels = []  # byte labels beside the blocks (box mode): few, so items
        for _ in range(max(run.index.max_in_flight, 0) if n <= STRIPE_MAX_N else 0):
            lab = self._add_label("small", align=Qt.AlignHCenter | Qt.AlignVCenter)
            lab.hide()
            self.block_labels.append(lab)
        self.caption = self._add_label("caption", bold=True, halo=False)
        self.subcaption = self._add_label("body", halo=False)
        self.clock_label = self._add_label("body", halo=False, align=Qt.AlignRight)
        self.legend = self._add_label("small", halo=False)
        self.legend_swatches = []
        self.swatch_devices = swatch_devices(n)
        for d in self.swatch_devices:
            sw = scene.addRect(QRectF(0, 0, 10, 10), QPen(self.colors.text, theme.line("hairline")),
                               self.colors.brushes[d])
            sw.setZValue(6)
            self.legend_swatches.append(sw)
        self.swatch_labels = [self._add_label("small", halo=False) for _ in self.legend_swatches]
        self.swatch_title = self._add_label("small", bold=True, halo=False)
        self._shown_coll = object()
        self._taken = []
        self._queues_shown = False
        self._last_holdings = None
        self._texts_for_run()
        self._layout()
        self.set_time(self._t if keep_time else self.playback.t, force=True)

    def _add_label(self, role, bold=False, halo=True, align=Qt.AlignLeft):
        lab = LabelItem(role, bold, halo, align)
        lab.color = self.colors.text
        self.scene().addItem(lab)
        self._labels.append(lab)
        return lab

    def _texts_for_run(self):
        """Every text the layout places, from the run and the current language."""
        self.switch.set_name(switch_name(self.run.link))
        self.title_text = scenario_title(self.run.scenario, self.run)
        self.texts = ring_texts(self.run)

    # -- layout (a function of size, text scale, texts and scenario: app/ring_layout.py) ------
    def _layout(self):
        if self.run is None:
            return
        vp = self.viewport().rect()
        lay = ring_layout(vp.width(), vp.height(), theme.scale(), self.texts, ring_shape(self.run))
        self.scene().setSceneRect(0, 0, lay.width, lay.height)
        self._vs = lay.vs
        col = self.colors
        self.caption.set_box(lay.title, col.text)
        self.subcaption.set_font(lay.step.font)
        self.subcaption.set_wrap(lay.step.rect.width())
        self.subcaption.setPos(lay.step.rect.topLeft())
        self.clock_label.set_font(lay.clock.font)
        self.clock_label.setPos(lay.clock.rect.right(), lay.clock.rect.top())
        self.legend.set_box(lay.legend, col.muted)
        self.swatch_title.set_box(lay.swatch_title, col.text)
        for sw, r, lab, box in zip(self.legend_swatches, lay.swatches, self.swatch_labels, lay.swatch_labels):
            sw.setRect(r)
            lab.set_box(box, col.text)
        self.centre = lay.centre
        radial = lay.mode == "radial"
        dev_font = next(b.font for b in lay.device_labels if b is not None)
        small = make_font("small", False, theme.FONT_PX["small"] * theme.scale() * lay.text_vs)
        for lab in self.block_labels:
            lab.set_font(small)
        for d, (item, box) in enumerate(zip(self.devices, lay.devices)):
            item.setPos(box.centre)
            item.setRotation(box.rotation)
            item.set_geometry(box.w, box.h, box.cols, box.rows, box.pad, radial=box.radial)
            lab, lb = self.device_labels[d], lay.device_labels[d]
            lab.set_font(dev_font)
            lab.set_text(str(d) if radial else queued_label(d, 0), col.text)  # the queue counts follow in set_time
            lab.setVisible(lb is not None)
            if lb is not None:
                lab.setPos(lb.rect.center())
        self._queues_shown = False
        if radial:
            R = max(b.rect().right() for b in lay.devices) - lay.centre.x()
            pad = theme.line("highlight") + 2
            self.bars.set_rect(QRectF(lay.centre.x() - R - pad, lay.centre.y() - R - pad, 2 * (R + pad), 2 * (R + pad)))
        self._geom = {"mode": lay.mode, "r_sw": lay.switch_r, "block": lay.block, "off": lay.lane_offset,
                      "lane": lay.lane_width, "lane_active": lay.lane_width_active}
        self.anchors = list(lay.anchors)
        self._taken = [b.rect() for b in lay.devices] + [b.rect for b in lay.device_labels if b is not None]
        self.switch.setPos(lay.centre)
        self.switch.set_radius(lay.switch_r)
        self.switch_label.set_box(lay.switch_label, col.text)
        self.flight.set_size(lay.block)
        self._place_lanes(lay)

    def _place_lanes(self, lay):
        """Each spoke: a send lane and a receive lane, from the device's edge to the switch's rim."""
        g = self._geom
        self.lane_geom = [((s.p1(), s.p2()), (r.p1(), r.p2())) for s, r in lay.lanes]
        self._flying = None  # chords hang on the lanes: recomputed
        self._lane_arr = np.array([[[[q.x(), q.y()] for q in lane] for lane in lanes] for lanes in self.lane_geom],
                                  float).reshape(-1, 2, 2, 2)

        # each layer's rect is what it can cover, not the scene: a cached layer is a picture of its
        # rect, and at 4K a scene-sized one is 33 MB
        def bounds(points, pad):
            xs, ys = [q.x() for q in points], [q.y() for q in points]
            return QRectF(min(xs) - pad, min(ys) - pad, max(xs) - min(xs) + 2 * pad, max(ys) - min(ys) + 2 * pad)

        ends = [q for lanes in self.lane_geom for lane in lanes for q in lane]
        rims = [lane[1] for lanes in self.lane_geom for lane in lanes]
        self.lanes.set_geometry(bounds(ends, g["lane_active"]), list(lay.lanes), g["lane"], g["lane_active"])
        self.chord_layer.set_geometry(bounds(rims, g["lane_active"]), g["lane_active"] * 0.6)
        self.flight.set_rect(bounds(ends, g["block"] + theme.line("outline") + 1))
        self._style_lanes({})

    def _style_lanes(self, active: dict):
        """active: {(device, 0 send | 1 recv): QColor}."""
        self.lanes.set_active(active)

    # -- one frame -------------------------------------------------------------------------
    def set_time(self, t: float, force: bool = False):
        """Show the run at simulated time t: a pure function of (trace, t)."""
        self._t = float(t)
        run = self.run
        idx = run.index
        tr = run.trace
        coll = idx.display_collective(t)
        if coll is None:
            for item in self.devices:
                item.set_state(0, (), frozenset())
            self.switch.set_state(0, (), False)
            self._update_queues(None, t)
            self._update_caption(None, t)
            self._place_blocks(t, [])
            return
        c = tr.collectives[coll]
        radial = self._geom.get("mode") == "radial"
        hold = idx.held(coll, t)
        if force or hold is not self._last_holdings or coll != getattr(self, "_last_coll", None):
            new = {}
            ids = np.asarray(idx.last_arrivals(coll, t), dtype=np.int64)
            for dst, ch in zip(self._cols["dst"][ids].tolist(), self._cols["chunk"][ids].tolist()):
                if dst != SWITCH:
                    new.setdefault(dst, set()).update(range(c.n_chunks) if ch == ALL else (ch,))
            if radial:  # n > 16: arrays straight from the index, only the bars that changed
                self._set_bars(c, hold, new, force or coll != getattr(self, "_last_coll", None))
            else:
                for d, item in enumerate(self.devices):
                    h = hold.get(d, {})
                    item.set_state(c.n_chunks, tuple(map(h.get, range(c.n_chunks))),
                                   frozenset(new.get(d, ())))
            hs = hold.get(SWITCH, {})
            self.switch.set_state(c.n_chunks, tuple(map(hs.get, range(c.n_chunks))),
                                  self.has_switch_slots)
            self._last_holdings, self._last_coll = hold, coll
        self._update_queues(c, t)
        self._place_blocks(t, self._predict_filter(idx.moving(t)))
        self._update_caption(c, t)

    def _set_bars(self, c, hold, new: dict, all_bars: bool):
        """Radial mode: each bar's per-chunk contributor count and colour owner from the Held arrays;
        only bars whose arrays or outlined chunks changed are touched."""
        n, nc = self.n, c.n_chunks
        counts = np.where(hold.present[:n], hold.count[:n], 0)[:, :nc]
        owners = np.where(counts == 1, hold.low[:n, :nc], np.arange(nc)[None, :])  # a sum: its chunk's colour
        new_sets = [frozenset(new.get(d, ())) for d in range(n)]
        last = getattr(self, "_bars_last", None)
        if all_bars or last is None or last[0].shape != counts.shape:
            rows = range(n)
        else:
            diff = np.any(counts != last[0], axis=1) | np.any(owners != last[1], axis=1)
            rows = [d for d in range(n) if diff[d] or new_sets[d] != last[2][d]]
        for d in rows:
            self.devices[d].set_counts(nc, counts[d], owners[d], new_sets[d], HeldRow(hold, d, nc))
        self._bars_last = (counts, owners, new_sets)

    def _place_blocks(self, t, flying):
        """Every message under way at t: its block on its lane, its lanes lit, its chord (from the
        trace's columns, one array operation per field: n = 256 has 256 blocks a frame)."""
        active = {}
        show_bytes = self._geom.get("mode") == "box" and self.n <= STRIPE_MAX_N
        ids = np.asarray(flying, dtype=np.int64)
        cols = self._cols
        src, dst, chunk = cols["src"][ids], cols["dst"][ids], cols["chunk"][ids]
        ts, te = cols["t_start"][ids], cols["t_end"][ids]
        p = np.clip(np.where(te > ts, (t - ts) / np.where(te > ts, te - ts, 1.0), 1.0), 0.0, 1.0)
        G = self._lane_arr  # (n, 2 lanes, 2 ends, xy): send lane a -> b, receive lane a -> b
        s_ = np.where(src == SWITCH, 0, src)
        d_ = np.where(dst == SWITCH, 0, dst)
        up = (src != SWITCH) & ((dst == SWITCH) | (p < 0.5))  # on the sender's send lane, else the receiver's receive lane
        q = np.where(dst == SWITCH, p, np.where(src == SWITCH, p, np.where(p < 0.5, p * 2, (p - 0.5) * 2)))
        a = np.where(up[:, None], G[s_, 0, 0], G[d_, 1, 0])
        b = np.where(up[:, None], G[s_, 0, 1], G[d_, 1, 1])
        pos = np.where(up[:, None], a + (b - a) * q[:, None], b + (a - b) * q[:, None])
        sign = np.where(up, 1.0, -1.0)
        dxy = b - a
        ln = np.hypot(dxy[:, 0], dxy[:, 1])
        ln[ln == 0] = 1.0
        side = np.stack([-dxy[:, 1] / ln * sign, dxy[:, 0] / ln * sign], 1)
        key = ids.tobytes()
        same = getattr(self, "_flying", None)
        if same is None or same[0] != key:  # a new set of messages (a step boundary): who, colours, chords
            who = [_Who(w, self.run.trace._explicit) for w in zip(*(cols[f][ids].tolist() for f in ("w0", "w1", "w2", "w3")))]
            colours = [self.colors.spoke_active if i < 0 else self.colors.devices[i] for i in self._cidx[ids].tolist()]
            chords = []
            for sd, dd, col in zip(src.tolist(), dst.tolist(), colours):
                if sd != SWITCH:
                    active[(sd, 0)] = col
                if dd != SWITCH:
                    active[(dd, 1)] = col
                    if sd != SWITCH:
                        chords.append((QLineF(self.lane_geom[sd][0][1], self.lane_geom[dd][1][1]), col))
            self._flying = (key, who, chords, active)
        _key, who, chords, active = self._flying
        blocks = [(i, QPointF(x, y), w, ch) for i, (x, y), w, ch in zip(ids.tolist(), pos.tolist(), who, chunk.tolist())]
        sides = [QPointF(x, y) for x, y in side.tolist()] if show_bytes else []
        self.flight.set_items(blocks)
        self.chord_layer.set_items(chords)
        if show_bytes:
            self._place_byte_labels(blocks, sides)
        self._style_lanes(active)
        self._n_visible_blocks = len(blocks)

    def _place_byte_labels(self, blocks, sides):
        """Box mode: each block's size beside it, on its lane's outer side (sides: the blocks'
        outward unit vectors), else the inner side, else none — never over a box, a name, a block
        or another label."""
        msgs = self.run.trace.messages
        placed = list(self._taken) + [self.flight.block_rect(pos) for _i, pos, _w, _c in blocks]
        for j, lab in enumerate(self.block_labels):
            if j >= len(blocks):
                if lab.isVisible():
                    lab.hide()
                continue
            lab.set_text(fmt_bytes(msgs[blocks[j][0]].nbytes), self.colors.text)
            pos, lane_dir = blocks[j][1], sides[j]
            sz = lab.size()
            for side in (1, -1):
                dist = self._geom["block"] * 0.5 + sz.width() * 0.5 + 4
                c = pos + lane_dir * (side * dist)
                r = QRectF(c.x() - sz.width() / 2, c.y() - sz.height() / 2, sz.width(), sz.height())
                if not any(r.intersects(o) for o in placed):
                    lab.setPos(c)
                    lab.show()
                    placed.append(r)
                    break
            else:
                lab.hide()

    def _message_color(self, m) -> QColor:
        i = message_color_index(m, self.n)
        return self.colors.spoke_active if i < 0 else self.colors.devices[i]

    def _message_pos(self, m, p):
        """Where a message is at progress p in [0, 1], and the outward side of its lane."""
        p = min(max(p, 0.0), 1.0)
        if m.src == SWITCH:  # multicast down the receive lane
            (a, b) = self.lane_geom[m.dst][1]
            return _lerp(b, a, p), _side(a, b, -1)
        if m.dst == SWITCH:  # up the send lane into the switch's adder
            (a, b) = self.lane_geom[m.src][0]
            return _lerp(a, b, p), _side(a, b, 1)
        if p < 0.5:
            (a, b) = self.lane_geom[m.src][0]
            return _lerp(a, b, p * 2), _side(a, b, 1)
        (a, b) = self.lane_geom[m.dst][1]
        return _lerp(b, a, (p - 0.5) * 2), _side(a, b, -1)

    def _update_queues(self, c, t):
        """Direct all-reduce: beside each device's name, how many sends still wait for its port."""
        show = c is not None and c.algo == "direct" and c.n > 2 and self._geom.get("mode") == "box"
        if not show and not self._queues_shown:
            return
        waiting = [0] * self.n
        if show:
            msgs = self.run.trace.messages
            for i in range(c.first_msg, c.last_msg):
                m = msgs[i]
                if m.t_start > t and m.src >= 0:
                    waiting[m.src] += 1
        for d, lab in enumerate(self.device_labels):
            lab.set_text(queued_label(d, waiting[d]))
        self._queues_shown = show

    def _update_caption(self, c, t):
        run = self.run
        idx = run.index
        total = idx.t_total
        self.clock_label.set_text(self.tr("t = {t} of {T}").format(t=fmt_time(t), T=fmt_time(total)),
                                  self.colors.text)
        key = (None,) if c is None else (c.id, idx.step_shown(c.id, t), idx.steps_done(c.id, t),
                                         t <= c.t_start + idx.eps)
        if key == self._shown_coll:
            return
        self._shown_coll = key
        self.subcaption.set_text(subcaption(run, c, t), self.colors.text)

    # -- predict-then-reveal hook (issue 6: app/predict_ui.py) -----------------------------
    def set_hidden_after(self, t0):
        """Hide the blocks of messages that start at or after t0 (s): the step a student is
        predicting. None shows every block again."""
        self._hidden_after = t0
        self.set_time(self._t, force=True)

    def _predict_filter(self, flying):
        t0 = getattr(self, "_hidden_after", None)
        if t0 is None:
            return flying
        msgs, eps = self.run.trace.messages, self.run.index.eps
        return [i for i in flying if msgs[i].t_start < t0 - eps]
    # -- end of predict-then-reveal hook ---------------------------------------------------

    # -- for tests and other views --------------------------------------------------------
    def slot_state(self, d: int) -> dict:
        """{chunk: contributors} that device d's slots (SWITCH: the switch's) currently paint."""
        item = self.switch if d == SWITCH else self.devices[d]
        return {ch: who for ch, who in enumerate(item.state) if who}

    def highlighted(self, d: int) -> frozenset:
        return self.devices[d].new

    def visible_blocks(self) -> list[int]:
        """Indices (into trace.messages) of the blocks drawn now."""
        return [b[0] for b in self.flight.items]

    def block_centres(self) -> list[tuple[int, QPointF]]:
        """(message index, scene centre) of every block drawn now; their side is flight.s."""
        return [(b[0], QPointF(b[1])) for b in self.flight.items]

    def block_rects(self) -> list[QRectF]:
        return [self.flight.block_rect(b[1]) for b in self.flight.items]

    def chord_lines(self) -> list:
        """(QLineF, QColor) of every chord drawn now: sender's lane end to receiver's."""
        return list(self.chord_layer.items)

    def device_rects(self) -> list[QRectF]:
        return [d.sceneBoundingRect() for d in self.devices]

    def visible_label_rects(self) -> list[QRectF]:
        return [lab.sceneBoundingRect() for lab in self.device_labels if lab.isVisible()]

    def item_count(self) -> int:
        return len(self.scene().items())


# ---------------------------------------------------------------------------------------
# Texts shared with the main window and the explanation panel
# ---------------------------------------------------------------------------------------
def scenario_title(sc, run) -> str:
    from PySide6.QtCore import QCoreApplication

    tr = QCoreApplication.translate
    if sc.kind in ("all-gather", "reduce-scatter", "all-reduce"):
        what = op_title(sc.kind, sc.algo)
    elif sc.kind.startswith("matmul-"):
        what = tr("RingView", "Sharded matmul, case {k}").format(k=sc.kind[-1])
    elif sc.kind == "tp-forward":
        what = tr("RingView", "Tensor-parallel forward")
    else:
        what = tr("RingView", "Tensor-parallel decode step")
    size = {c.op: c.nbytes for c in reversed(run.trace.collectives)}
    if run.tp is not None and {"all-reduce", "all-gather"} <= set(size):
        # the logits all-gather moves vocab/d_model × S: state each collective's bytes
        return tr("RingView", "{what} · {n} GPUs · all-reduce {S}, all-gather {G} · {link}").format(
            what=what, n=sc.n, S=fmt_bytes(size["all-reduce"]), G=fmt_bytes(size["all-gather"]), link=run.link.name)
    return tr("RingView", "{what} · {n} GPUs · S = {S} · {link}").format(
        what=what, n=sc.n, S=fmt_bytes(sc.nbytes), link=run.link.name)


def subcaption(run, c, t) -> str:
    from PySide6.QtCore import QCoreApplication

    tr = QCoreApplication.translate
    idx = run.index
    lines = []
    if c is None:
        if run.matmul is not None and run.matmul.case == 1:
            lines.append(tr("RingView", "No communication: every GPU multiplies its own rows of A by all of B."))
        else:
            lines.append(tr("RingView", "No communication in this scenario."))
    else:
        k = idx.step_shown(c.id, t)
        K = c.n_steps
        if K == 0:
            state = tr("RingView", "one device: nothing to send")
        elif t >= c.t_end - idx.eps:
            state = tr("RingView", "done")
        elif idx.steps_done(c.id, t) > k:
            state = tr("RingView", "done")
        elif t <= idx.step_ends[c.id][k] - idx.eps and (k == 0 and t <= c.t_start + idx.eps):
            state = tr("RingView", "next")
        else:
            state = tr("RingView", "in progress")
        where = c.label if len(run.trace.collectives) > 1 else ""
        coll = op_title(c.op, c.algo)
        if where:
            lines.append(tr("RingView", "{where}: {coll} · step {k} of {K} ({state})").format(
                where=where, coll=coll, k=k + 1, K=K, state=state))
        elif K:
            lines.append(tr("RingView", "Step {k} of {K} ({state})").format(k=k + 1, K=K, state=state))
        else:
            lines.append(tr("RingView", "{coll} · {state}").format(coll=coll, state=state))
    if run.tp is not None:
        lines.append(tr("RingView", "max |TP − single| = {d:.1e}").format(d=run.tp.max_abs_diff))
    elif run.matmul is not None:
        lines.append(tr("RingView", "max |C − A·B| = {d:.1e}").format(d=run.matmul.max_err))
    return "\n".join(lines)


def swatch_devices(n: int) -> list:
    """The devices the colour key shows: all up to 8, else 8 spread round the ring."""
    return list(range(n)) if n <= STRIPE_MAX_N else sorted({round(k * n / STRIPE_MAX_N) for k in range(STRIPE_MAX_N)})


def ring_texts(run) -> RingTexts:
    """Every text the ring view's layout places for `run`, in the current language."""
    from PySide6.QtCore import QCoreApplication

    tr = QCoreApplication.translate
    n = run.scenario.n
    if n > BOX_MODE_MAX_N:
        widest = [str(d) for d in range(n)]
    elif any(c.algo == "direct" for c in run.trace.collectives):  # "GPU 3", "7 queued" below while waiting
        widest = [queued_label(d, max(n - 1, 1)) for d in range(n)]
    else:
        widest = [tr("RingView", "GPU {d}").format(d=d) for d in range(n)]
    legend, key_title = legend_text(run.trace, n, bool(np.any(run.trace.column("reduce"))))
    return RingTexts(
        title=scenario_title(run.scenario, run), step_lines=tuple(step_line_variants(run)),
        clock_lines=tuple(tr("RingView", "t = {t} of {T}").format(t=f"{x} {unit}", T=fmt_time(run.index.t_total))
                          for x in ("0", "8.88", "88.8", "888", "1e+03") for unit in ("s", "ms", "µs", "ns", "ps")),
        device_labels=tuple(widest), switch_name=switch_name(run.link), swatch_title=key_title,
        swatch_labels=tuple(str(d) for d in swatch_devices(n)), legend=legend)


def queued_label(d: int, k: int) -> str:
    """A device's name, and below it how many of its sends wait for its port (direct all-reduce)."""
    from PySide6.QtCore import QCoreApplication

    tr = QCoreApplication.translate
    name = tr("RingView", "GPU {d}").format(d=d)
    if not k:
        return name
    return name + "\n" + tr("RingView", "{k} queued").format(k=k)


def ring_shape(run) -> RingShape:
    tr = run.trace
    return RingShape(run.scenario.n, max((c.n_chunks for c in tr.collectives), default=0),
                     bool(np.any(tr.column("dst") == SWITCH)))


def step_line_variants(run) -> list:
    """Every step line the run can show, up to the step numbers' digits: at each collective's
    start, in its first and last step, and at its end (the header reserves the tallest)."""
    idx = run.index
    out = {subcaption(run, None, 0.0)} if not run.trace.collectives else set()
    for c in run.trace.collectives:
        ends = idx.step_ends[c.id]
        times = [c.t_start, c.t_end]
        if ends:
            first_end = ends[0]
            last_start = ends[-2] if len(ends) > 1 else c.t_start
            times += [(c.t_start + first_end) / 2, (last_start + ends[-1]) / 2]
        out.update(subcaption(run, c, t) for t in times)
    return sorted(out)


def legend_text(trace, n: int, reduces: bool) -> tuple:
    """(legend, colour-key title): what a slot's colour means at this n."""
    from PySide6.QtCore import QCoreApplication

    tr = QCoreApplication.translate
    key = tr("RingView", "GPU colours:")
    if not trace.collectives:
        return "", key
    if not reduces:
        return tr("RingView", "A slot's colour says whose data it holds; grey = not there yet. "
                  "Outlined: arrived in the last step."), key
    if n <= STRIPE_MAX_N:
        return tr("RingView", "A slot's colour says whose data it holds; bands = a partial sum of those GPUs' data. "
                  "Outlined: changed in the last step."), key
    # beyond 8 GPUs a sum is not drawn as bands: it takes its chunk's colour (chunk k: GPU k's colour)
    return (tr("RingView", "One GPU's data: that GPU's colour. A sum: its chunk's colour (chunk k = GPU k's "
               "colour), filled by the share of the {n} GPUs added so far; full = the whole sum. "
               "Outlined: changed in the last step.").format(n=n),
            tr("RingView", "GPU and chunk colours:"))


def switch_name(link) -> str:
    from PySide6.QtCore import QCoreApplication

    if link.name.startswith("NVLink"):
        return QCoreApplication.translate("RingView", "NVSwitch")
    if link.name.startswith("PCIe"):
        return QCoreApplication.translate("RingView", "PCIe switch")
    return QCoreApplication.translate("RingView", "switch")


# -- geometry helpers --------------------------------------------------------------------
def _lerp(a: QPointF, b: QPointF, p: float) -> QPointF:
    return QPointF(a.x() + (b.x() - a.x()) * p, a.y() + (b.y() - a.y()) * p)


def _side(a: QPointF, b: QPointF, sign: int) -> QPointF:
    """Unit vector perpendicular to a→b, pointing to the lane's outer side."""
    dx, dy = b.x() - a.x(), b.y() - a.y()
    ln = math.hypot(dx, dy) or 1.0
    return QPointF(-dy / ln * sign, dx / ln * sign)
