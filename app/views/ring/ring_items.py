"""
The ring view's graphics items: a device's buffer (box of slots or radial bar; all radial bars
are painted as one picture by ring_bars.BarsLayer), and the switch. They paint cached state the view sets (`set_state`,
`set_geometry`); nothing here knows the trace or the clock.

A slot's colour says whose data it holds: one colour per device (Okabe–Ito for n ≤ 8, a cyclic
map beyond). A partial sum shows its contributors as bands (n ≤ STRIPE_MAX_N) or, when bands would
be thinner than a pixel, fills the share of devices already added in its chunk's colour.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

from simcore.trace import ALL

from ... import theme
from ...words import compute_label

STRIPE_MAX_N = 8  # up to this many devices a partial sum is drawn as contributor bands
# a device computing (the TP forward's ops): mid grey, apart from the eight Okabe–Ito device colours (and
# from GPU 7's black beside it in the timeline); white text on it reads at 5:1
COMPUTE_HEX = "#6E6E6E"
COMPUTE_ALPHA = 230  # over the box's slots: what it held stays faintly visible under the op


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


def luminance(c: QColor) -> float:
    """WCAG relative luminance of a colour (0 black … 1 white)."""
    def lin(x):
        x = x / 255
        return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4
    return 0.2126 * lin(c.red()) + 0.7152 * lin(c.green()) + 0.0722 * lin(c.blue())


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two colours, 1 (the same) … 21 (black on white)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


OUTLINE_CONTRAST = 3.0  # WCAG's least contrast for graphics (1.4.11): an outline below it is not seen


def outline_on(highlight: QColor, fills) -> QColor:
    """The theme's highlight where it stands out from a fill it is drawn on (a slot of bands shows it
    along its other bands), else black or white, whichever stands out more (the light theme's #111
    outline on GPU 7's black chunk)."""
    if any(contrast(highlight, f) >= OUTLINE_CONTRAST for f in fills):
        return highlight
    return max((QColor("#000000"), QColor("#FFFFFF")), key=lambda c: min(contrast(c, f) for f in fills))


def message_color_index(m, n: int) -> int:
    """The device colour a message is drawn in: its only contributor, else its chunk, else its sender."""
    if len(m.contributors) == 1:
        return next(iter(m.contributors)) % max(n, 1)
    if m.chunk != ALL:
        return m.chunk % max(n, 1)
    return m.src % max(n, 1) if m.src >= 0 else -1


def _channel_first(r) -> np.ndarray:
    """The device at the first position q0 of each row's channel-ring arc (simcore/contributors.py's channel form;
    rows of other forms give a harmless value); the arc's only device when it has one."""
    first, period, limit = (r[f].astype(np.int64) for f in ("w0", "w2", "w3"))
    P, lim = np.maximum(-period, 1), np.maximum(limit, 1)
    c, q0 = np.divmod(first, lim)
    return (q0 // P) * P + (c + q0 % P) % P


def message_color_indices(trace, n: int) -> np.ndarray:
    """message_color_index of every message of `trace` at once, from its columns."""
    n = max(n, 1)
    r = trace.rows()
    k = trace.contributor_counts()
    first, period = r["w0"].astype(np.int64), r["w2"]
    explicit = np.frombuffer(trace.explicit, dtype=np.int32) if len(trace.explicit) else np.zeros(1, np.int32)
    single = np.where(period > 0, first, np.where(period < 0, _channel_first(r),
                                                  explicit[np.clip(first, 0, len(explicit) - 1)]))
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
    explicit = np.frombuffer(trace.explicit, dtype=np.int32) if len(trace.explicit) else np.zeros(1, np.int32)
    lowest = np.where(period > 0, np.where(first + count > np.maximum(period, 1), 0, first),
                      np.where(period < 0, _channel_first(r),  # (a channel arc: its first device in ring order)
                               explicit[np.clip(first, 0, len(explicit) - 1)]))  # an arc past period − 1 wraps to 0
    chunk = r["chunk"].astype(np.int64)
    colour = np.where(k == 1, lowest, np.where(chunk >= 0, chunk, lowest)) % n
    return k, colour


def _bgra(hex_color: str) -> np.ndarray:
    c = QColor(hex_color)
    return np.array([c.blue(), c.green(), c.red(), 255], np.uint8)


class Colors:
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
        self.highlight = QColor(pal.highlight)
        self.new_pen = QPen(QColor(pal.highlight), theme.line("highlight"))
        self.new_pen.setJoinStyle(Qt.MiterJoin)
        self._thin_pens = {}
        self.text = QColor(pal.text)
        self.muted = QColor(pal.text_muted)
        self.spoke = QColor(pal.spoke)
        self.spoke_active = QColor(pal.spoke_active)
        self.switch_fill = QBrush(QColor(pal.switch_fill))
        self.switch_pen = QPen(QColor(pal.switch_border), theme.line("outline"))
        self.background = QColor(pal.background)

    def thin_new_pen(self, width: float) -> QPen:
        """The new-chunk outline at `width` px (small slots), made once per width."""
        key = round(width, 1)
        pen = self._thin_pens.get(key)
        if pen is None:
            pen = self._thin_pens[key] = QPen(self.new_pen.color(), key)
            pen.setJoinStyle(Qt.MiterJoin)
        return pen


# ---------------------------------------------------------------------------------------
# Items
# ---------------------------------------------------------------------------------------
class HeldRow(Sequence):
    """Device d's slots in a simcore.holdings.Held snapshot as the tuple of contributors (None = not held),
    each decoded only when read (bar_pixels' rule for bars without arrays): radial bars paint from the arrays."""

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

    def __init__(self, d: int, colors: Colors, n: int):
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
        self.bar_stale = True  # radial mode: BarsLayer must rebuild this bar's pixels
        self._counts = self._owners = None  # radial bars at large n: per chunk, contributors and colour
        self.layer = None  # BarsLayer that paints this device in radial mode
        self.compute_text = ""  # the op this device computes now ("QKV 1.34 ns"), "" when none
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
        self.bar_stale = True
        if self.layer is not None:
            self.layer.geometry_changed()  # the view moves and turns a device before it sets its geometry
        self._changed()

    def set_state(self, n_chunks: int, state: tuple, new: frozenset) -> bool:
        self._counts = self._owners = None
        if self.layer is not None:
            self.layer.shown = None  # the bars' arrays no longer say what this device shows
        if n_chunks == self.n_chunks and state == self.state and new == self.new:
            return False
        if n_chunks != self.n_chunks:
            self._rects = []
        self.bar_stale = True
        self.n_chunks, self.state, self.new = n_chunks, state, new
        self._changed()
        return True

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
        if len(self._rects) != self.n_chunks:  # every device of a run shares its geometry: made once for all
            self._rects = _slot_rects(self.w, self.h, self.cols, self.rows, self.pad, self.radial, self.n_chunks)
        return self._rects[ch]

    def _slot_rect(self, ch: int) -> QRectF:
        return _slot_rect(self.w, self.h, self.cols, self.rows, self.pad, self.radial, self.n_chunks, ch)


    def paint(self, p: QPainter, option, widget=None):
        if self.radial:
            return  # radial bars are painted together by BarsLayer (one cached picture)
        self.paint_contents(p)
        if self.compute_text:
            self._paint_compute(p)

    # -- computing (the TP forward) ------------------------------------------------------------
    def set_compute(self, text: str) -> bool:
        """Label the box with the op it computes ("" clears); True if that changed the picture."""
        if text == self.compute_text:
            return False
        self.compute_text = text
        self.update()
        return True

    def _paint_compute(self, p: QPainter):
        r = QRectF(-self.w / 2, -self.h / 2, self.w, self.h).adjusted(self.pad, self.pad, -self.pad, -self.pad)
        fill = QColor(COMPUTE_HEX)
        fill.setAlpha(COMPUTE_ALPHA)
        p.setPen(Qt.NoPen)
        p.setBrush(fill)
        p.drawRoundedRect(r, 3, 3)
        p.setPen(QColor("#FFFFFF"))
        font = theme.font("small", bold=True)
        words = self.compute_text.rsplit(" ", 2)  # "gate/up 1.6 ns": the time is its last two words
        two = f"{words[0]}\n{words[1]} {words[2]}" if len(words) == 3 else self.compute_text
        for text in (self.compute_text, two):  # one line, else the op above its time
            fm = QFontMetricsF(font)
            box = fm.boundingRect(QRectF(0, 0, 1e4, 1e4), Qt.AlignCenter, text)
            scale = min(1.0, r.width() / max(box.width(), 1.0), r.height() / max(box.height(), 1.0))
            if scale >= 0.8 or text != self.compute_text:
                break
        if scale < 1.0:  # a small box (two chunks at n = 2): the label shrinks rather than being cut
            font.setPixelSize(max(int(font.pixelSize() * scale), 6))
        p.setFont(font)
        p.drawText(r, Qt.AlignCenter, text)

    def paint_contents(self, p: QPainter):
        """The box and its slots (box mode; radial bars are BarsLayer's)."""
        col = self.colors
        rect = QRectF(-self.w / 2, -self.h / 2, self.w, self.h)
        p.setPen(col.box_pen)
        p.setBrush(col.box_brush)
        p.drawRoundedRect(rect, 4, 4)
        if not self.n_chunks:
            return
        p.setPen(Qt.NoPen)
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
            side = self.slot_rect(0).width()
            # a 3 px outline round a 4 px slot is a solid blob of the highlight colour (the torus's
            # chips at n = 64): small slots get an outline a quarter of their side
            pen = self.colors.new_pen if side > 12 else self.colors.thin_new_pen(max(side / 4, 0.75))
            p.setBrush(Qt.NoBrush)
            for ch in self.new:
                if 0 <= ch < self.n_chunks:
                    r = self.slot_rect(ch)
                    p.setPen(pen)
                    p.drawRect(r)
                    # the highlight on a fill of its own darkness (the light theme's #111 on GPU 7's black)
                    # is not seen: the outline's inner half in black or white, whichever the fill shows
                    ink = outline_on(self.colors.highlight, self._fills(ch))
                    if ink != self.colors.highlight:
                        # a ring from a pixel inside the edge (the edge itself stays the highlight) to
                        # as deep as the outline reaches and one pixel more
                        w = pen.widthF() / 2
                        inset = 1.0 + w / 2
                        if r.width() > 2 * (inset + w) and r.height() > 2 * (inset + w):
                            inner = QPen(ink, w)
                            inner.setJoinStyle(Qt.MiterJoin)
                            p.setPen(inner)
                            p.drawRect(r.adjusted(inset, inset, -inset, -inset))

    def _fills(self, ch: int) -> list:
        """The colours slot `ch` is painted in (paint_chunk): its contributors' or its chunk's, and the empty grey."""
        who, devices = self.state[ch], self.colors.devices
        if not who:
            return [self.colors.empty.color()]
        if len(who) == 1 or self.n <= STRIPE_MAX_N:
            return [devices[d % len(devices)] for d in who]
        return [self.colors.empty.color(), devices[(ch if ch >= 0 else min(who)) % len(devices)]]


def set_computing(devices, index, t: float) -> None:
    """Label each device box with the op it computes at t (TraceIndex.computing), e.g. "QKV 1.34 ns":
    the view's one call per frame for the TP forward's ops; the items themselves still only paint."""
    for item in devices:
        rec = index.computing(item.d, t)
        item.set_compute("" if rec is None else compute_label(rec))


class SwitchItem(QGraphicsItem):
    """The switch: a disc, its name, and (in-network reduction) its own slots."""

    def __init__(self, colors: Colors, n: int):
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


def _slot_rect(w, h, cols, rows, pad, radial, n_chunks, ch: int) -> QRectF:
    """Rect of chunk slot `ch` in a device box's coordinates (DeviceItem's geometry)."""
    iw, ih = w - 2 * pad, h - 2 * pad
    if radial:  # chunk 0 at the inner end (local +y), growing outwards
        sh = ih / max(n_chunks, 1)
        return QRectF(-iw / 2, h / 2 - pad - (ch + 1) * sh, iw, sh)
    sw, sh = iw / max(cols, 1), ih / max(rows, 1)
    r, c = divmod(ch, max(cols, 1))
    gap = 1.0 if sw > 6 else 0.0
    return QRectF(-iw / 2 + c * sw + gap / 2, -ih / 2 + r * sh + gap / 2, sw - gap, sh - gap)


@functools.lru_cache(maxsize=64)
def _slot_rects(w, h, cols, rows, pad, radial, n_chunks) -> tuple:
    """Every slot's rect for one geometry (the 64 chips of a torus share theirs: 12,288 rects made once,
    not per chip); shared, so never changed in place."""
    return tuple(_slot_rect(w, h, cols, rows, pad, radial, n_chunks, c) for c in range(n_chunks))
