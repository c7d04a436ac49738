"""
The ring view's graphics items: a device's buffer (box of slots or radial bar), all radial bars
as one cached picture, and the switch. They paint cached state the view sets (`set_state`,
`set_geometry`); nothing here knows the trace or the clock.

A slot's colour says whose data it holds: one colour per device (Okabe–Ito for n ≤ 8, a cyclic
map beyond). A partial sum shows its contributors as bands (n ≤ STRIPE_MAX_N) or, when bands would
be thinner than a pixel, fills the share of devices already added in its chunk's colour.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QImage, QPainter, QPen, QTransform
from PySide6.QtWidgets import QGraphicsItem

from simcore.trace import ALL

from ... import theme

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
    explicit = np.frombuffer(trace.explicit, dtype=np.int32) if len(trace.explicit) else np.zeros(1, np.int32)
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
    explicit = np.frombuffer(trace.explicit, dtype=np.int32) if len(trace.explicit) else np.zeros(1, np.int32)
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
            p.setPen(self.colors.new_pen)
            p.setBrush(Qt.NoBrush)
            for ch in self.new:
                if 0 <= ch < self.n_chunks:
                    p.drawRect(self.slot_rect(ch))


def set_bar_rows(devices, rows, n_chunks: int, counts: np.ndarray, owners: np.ndarray, new_sets: list, held) -> None:
    """DeviceItem.set_counts for the radial bars in `rows` at once (a step boundary at n = 256
    touches every bar): the same state, one repaint of their layer instead of one per bar."""
    layers = {item.layer for item in devices if item.radial and item.layer is not None}
    for layer in layers:
        layer.shown = (counts, owners, new_sets)
    for d in rows:
        item = devices[d]
        if item.n_chunks != n_chunks:
            item._rects = []
        item.n_chunks, item.state, item.new = n_chunks, HeldRow(held, d, n_chunks), new_sets[d]
        item._counts, item._owners = counts[d], owners[d]
        item.bar_stale = True
        if not (item.radial and item.layer is not None):
            item.update()
    for layer in layers:
        layer.update()



def bar_size(d) -> tuple[int, int]:
    """A radial bar's image size in pixels (width, height)."""
    return max(3, round(d.w)), max(3, round(d.h))


def set_computing(devices, index, t: float) -> None:
    """Label each device box with the op it computes at t (TraceIndex.computing), e.g. "QKV 1.34 ns":
    the view's one call per frame for the TP forward's ops; the items themselves still only paint."""
    from ..text.op_text import compute_label  # the text modules import nothing of the ring: no cycle at import time

    for item in devices:
        rec = index.computing(item.d, t)
        item.set_compute("" if rec is None else compute_label(rec))


def bar_arrays(held, n: int, n_chunks: int) -> tuple[np.ndarray, np.ndarray]:
    """The radial bars' state from a simcore.holdings.Held: per device and chunk, how many devices'
    data it holds (0: not held) and the device whose colour fills it (a sum: its chunk's)."""
    counts = np.where(held.present[:n], held.count[:n], 0)[:, :n_chunks]
    return counts, np.where(counts == 1, held.low[:n, :n_chunks], np.arange(n_chunks)[None, :])


def bar_pixels(devices, arrays=None) -> np.ndarray:
    """
    Radial bars as pixels, one (H, W) plane of ARGB32 values per device (devices of one ring
    share size, chunk count and colours), chunk 0 in the bottom rows (the inner end), with frame
    and new-chunk outline drawn in: a slot held by one device is filled with its colour; a
    partial sum fills the share of devices added (paint_chunk's rule as pixels). All devices are
    computed together in numpy: a step boundary at n = 256 redraws 256 bars at once.
    arrays: (counts, owners, {device index: new chunks}) for every device, instead of their state.
    """
    d0 = devices[0]
    col = d0.colors
    W, H = bar_size(d0)
    iw, ih = W - 2, H - 2
    nc = max(d0.n_chunks, 1)
    n = max(d0.n, 1)
    bgra = col.bgra
    D = len(devices)
    if arrays is not None:
        k, owner = (np.asarray(a)[:, :nc].astype(np.int64) for a in arrays[:2])
    elif all(d._counts is not None for d in devices):  # arrays from the index (set_counts)
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
    chunk_of_row = np.minimum((ih - 1 - np.arange(ih)) * nc // ih, nc - 1)  # image row -> chunk (non-increasing)
    k, owner = k[:, chunk_of_row], owner[:, chunk_of_row]  # per image row: n = 256 has 256 chunks on 72 rows
    colours = np.where(k > 0, px(bgra)[owner % len(bgra)], empty)  # (D, ih)
    fill = np.where(k == 1, iw, np.where(k > 1, np.maximum(1, np.round(iw * k / n)), 0)).astype(int)
    filled = np.arange(iw)[None, None, :] < fill[:, :, None]  # (D, ih, iw)
    arr = np.empty((D, H, W), "<u4")
    arr[:] = border
    arr[:, 1:-1, 1:-1] = np.where(filled, colours[:, :, None], empty)
    # outline the chunks that arrived in the last step: per chunk, the image rows its outline
    # spans (left and right two columns) and its top and bottom two rows (the whole width)
    news = [d.new for d in devices] if arrays is None else [arrays[2].get(i, ()) for i in range(D)]
    pairs = [(i, ch) for i, new in enumerate(news) for ch in new if 0 <= ch < nc]
    if pairs:
        ii, cc = np.array(pairs, np.int64).T
        first = np.searchsorted(-chunk_of_row, -np.arange(nc), side="left") + 1  # each chunk's first image row
        last = np.searchsorted(-chunk_of_row, -np.arange(nc), side="right")  # and last (+1 for the frame)
        lo, hi = np.maximum(first - 1, 0), np.minimum(last + 2, H)
        rows = np.arange(H)[None, :]
        shown = (first <= last)[:, None]  # a chunk thinner than a row has no rows of its own
        span = shown & (rows >= lo[:, None]) & (rows < hi[:, None])  # (nc, H)
        edge = span & ((rows < lo[:, None] + 2) | (rows >= hi[:, None] - 2))
        span_rows, edge_rows = np.zeros((D, H), bool), np.zeros((D, H), bool)
        j, r = np.nonzero(span[cc])  # (pair, row): a device with several new chunks gets all their rows
        span_rows[ii[j], r] = True
        j, r = np.nonzero(edge[cc])
        edge_rows[ii[j], r] = True
        sides = sorted({0, 1, W - 2, W - 1})
        arr[:, :, sides] = np.where(span_rows[:, :, None], new_px, arr[:, :, sides])
        arr[edge_rows] = new_px
    return arr


def bar_images(devices) -> list:
    """Radial bars as QImages at their pixel size (bar_pixels' rule; mixed sizes one at a time)."""
    if not devices:
        return []
    if any(bar_size(d) != bar_size(devices[0]) for d in devices[1:]):
        return [img for d in devices for img in bar_images([d])]
    arr = bar_pixels(devices)
    _D, H, W = arr.shape
    data = arr.view(np.uint8)
    return [QImage(data[i].data, W, H, 4 * W, QImage.Format_ARGB32).copy() for i in range(len(devices))]


class BarsLayer(QGraphicsItem):
    """
    Paints every radial bar in one item, cached as one unrotated picture: a frame where no
    buffer changed costs a single blit. Geometry and state stay in the DeviceItems (clicks,
    set_counts); this only draws them.

    A step boundary changes every bar at n = 256. Rotating 256 small images into the picture one
    by one took ~5 ms, so the picture is composed in numpy instead: a map from each pixel of the
    picture to the bar pixel it shows (built once per geometry and zoom) picks the pixels of all
    bars in one gather, exactly as nearest-pixel rotation (what Qt does here, smooth scaling off)
    would. A transform the map does not cover (perspective) falls back to rotating each image.
    """

    MAX_MAP_PIXELS = 16 * 2**20  # beyond this (a huge zoom) the map costs more than it saves

    def __init__(self, devices):
        super().__init__()
        self.devices = devices
        self.rect = QRectF()
        self.setZValue(3)
        self.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        self._pixels = None  # (D, H, W) ARGB32 of every bar, rows rebuilt for stale bars only
        self._map_key = self._map = None  # (geometry, transform) -> (x0, y0, index per picture pixel)
        self._geometry = 0  # bumped whenever a bar's place, angle or size may have changed
        self._ahead = None  # (counts, owners, new, pixels, (map key, picture) or None): the next step's bars
        self._picture = None  # (map key, QImage) of the bars' state, composed ahead for the next paint
        self.shown = None  # (counts, owners, new chunks per device) the bars were last given (set_bar_rows)
        for d in devices:
            d.layer = self

    def set_rect(self, r: QRectF):
        self.prepareGeometryChange()
        self.rect = QRectF(r)
        self.geometry_changed()

    def geometry_changed(self):
        """A bar moved, turned or changed size: the pixel map is rebuilt at the next paint."""
        self._geometry += 1
        self.update()

    def boundingRect(self):
        return self.rect

    def prepare(self, counts: np.ndarray, owners: np.ndarray, new: dict):
        """Draw the next step's bars now (counts, owners: bar_arrays; new: {device: chunks}): the
        paint after the bars take exactly that state uses these pixels (see RingView._look_ahead)."""
        devs = self.devices
        if not devs or any(bar_size(d) != bar_size(devs[0]) for d in devs):
            return
        new = {d: frozenset(ch) for d, ch in new.items()}
        self._ahead = (counts, owners, new, bar_pixels(devs, (counts, owners, new)), None)

    def prepare_picture(self) -> bool:
        """Compose the prepared bars into the picture the next paint would make (a second piece
        of the look-ahead: the gather through the pixel map costs about 1 ms at n = 256)."""
        if self._ahead is None or self._map is None or self._ahead[4] is not None:
            return False
        self._ahead = self._ahead[:4] + ((self._map_key, self._compose(self._ahead[3])),)
        return True

    def _take_ahead(self, shape) -> bool:
        """Are the prepared pixels what every bar shows now? Then they become the bars' pixels."""
        ahead, self._ahead = self._ahead, None
        if ahead is None or ahead[3].shape != shape:
            return False
        counts, owners, new, pixels, picture = ahead
        shown = self.shown
        if shown is None or not (np.array_equal(shown[0], counts) and np.array_equal(shown[1], owners)) \
                or any(s != new.get(i, frozenset()) for i, s in enumerate(shown[2])):
            return False
        self._pixels, self._picture = pixels, picture
        for d in self.devices:
            d.bar_stale = False
        return True

    def _current_pixels(self):
        """Every bar's pixels, rebuilding only the bars whose state changed since the last paint."""
        devs = self.devices
        shape = (len(devs),) + bar_size(devs[0])[::-1]
        if self._pixels is None or self._pixels.shape != shape:
            stale = list(range(len(devs)))
            self._pixels = np.zeros(shape, "<u4")
        else:
            stale = [i for i, d in enumerate(devs) if d.bar_stale]
        if stale and self._ahead is not None and self._take_ahead(shape):
            stale = []
        if stale:
            self._picture = None
            self._pixels[stale] = bar_pixels([devs[i] for i in stale])
            for i in stale:
                devs[i].bar_stale = False
        return self._pixels

    def _pixel_map(self, T: QTransform, W: int, H: int):
        """
        For the picture's device pixels: which bar pixel each shows (index into the flattened
        (D, H, W) pixels; D·H·W = transparent), as Qt's nearest-pixel drawImage would pick it:
        a device pixel shows the bar whose rectangle holds its centre (later bars on top), at the
        image pixel that centre falls in. None if the picture would be too large.
        """
        box = T.mapRect(self.rect)
        x0, y0 = math.floor(box.left()), math.floor(box.top())
        w, h = math.ceil(box.right()) - x0, math.ceil(box.bottom()) - y0
        if w <= 0 or h <= 0 or w * h > self.MAX_MAP_PIXELS:
            return None
        D = len(self.devices)
        out = np.full(h * w, D * H * W, np.int32 if D * H * W < 2**31 else np.int64)
        corners = [QPointF(sx * W / 2, sy * H / 2) for sx in (-1, 1) for sy in (-1, 1)]
        for i, d in enumerate(self.devices):
            C = QTransform().translate(d.x(), d.y()).rotate(d.rotation()) * T  # bar image -> device
            inv, ok = C.inverted()
            if not ok:
                continue
            pts = [C.map(c) for c in corners]
            xa = max(math.ceil(min(q.x() for q in pts) - 0.5), x0)
            xb = min(math.floor(max(q.x() for q in pts) - 0.5), x0 + w - 1)
            ya = max(math.ceil(min(q.y() for q in pts) - 0.5), y0)
            yb = min(math.floor(max(q.y() for q in pts) - 0.5), y0 + h - 1)
            if xa > xb or ya > yb:
                continue
            X = np.arange(xa, xb + 1, dtype=float)[None, :] + 0.5
            Y = np.arange(ya, yb + 1, dtype=float)[:, None] + 0.5
            u = np.floor(inv.m11() * X + inv.m21() * Y + inv.dx() + W / 2)
            v = np.floor(inv.m12() * X + inv.m22() * Y + inv.dy() + H / 2)
            inside = (u >= 0) & (u < W) & (v >= 0) & (v < H)
            rows, cols = np.nonzero(inside)
            pos = (rows + ya - y0) * w + (cols + xa - x0)
            out[pos] = (i * H + v[inside].astype(np.int64)) * W + u[inside].astype(np.int64)
        return x0, y0, out.reshape(h, w)

    def paint(self, p: QPainter, option, widget=None):
        p.setRenderHint(QPainter.SmoothPixmapTransform, False)
        p.setRenderHint(QPainter.Antialiasing, False)
        devs = self.devices
        drawn = [d for d in devs if d.radial and d.n_chunks]
        if not drawn:
            return
        size = bar_size(devs[0])
        if len(drawn) < len(devs) or any(bar_size(d) != size or d.n_chunks != devs[0].n_chunks for d in devs):
            self._paint_each(p)  # not one ring of equal bars: each on its own
            return
        pixels = self._current_pixels()
        T = p.deviceTransform()
        if T.isAffine():
            key = ((T.m11(), T.m12(), T.m21(), T.m22(), T.dx(), T.dy()), size, len(devs), self._geometry)
            if key != self._map_key:
                self._map_key, self._map = key, self._pixel_map(T, *size)
        if not T.isAffine() or self._map is None:
            self._paint_each(p, pixels)
            return
        x0, y0, _index = self._map
        ready = self._picture
        img, _array = ready[1] if ready is not None and ready[0] == self._map_key else self._compose(pixels)
        self._picture = None  # used once: the next change of state recomposes or brings its own
        p.save()
        p.resetTransform()
        scale = p.deviceTransform().m11()  # what remains is the device pixel ratio
        img.setDevicePixelRatio(scale)
        p.drawImage(QPointF(x0 / scale, y0 / scale), img)
        p.restore()

    def _compose(self, pixels: np.ndarray) -> tuple:
        """The picture of every bar (pixels: (D, H, W) ARGB32) through the pixel map: (QImage, the
        array it reads, which must live as long as it)."""
        picture = np.append(pixels.reshape(-1), np.uint32(0))[self._map[2]]  # 0: transparent
        h, w = picture.shape
        return QImage(picture.data, w, h, 4 * w, QImage.Format_ARGB32_Premultiplied), picture

    def _paint_each(self, p: QPainter, pixels=None):
        """Each bar as an image rotated into place by Qt (mixed sizes, or a perspective view)."""
        drawn = [d for d in self.devices if d.radial and d.n_chunks]
        if pixels is not None:
            H, W = pixels.shape[1:]
            data = pixels.view(np.uint8)
            images = [QImage(data[i].data, W, H, 4 * W, QImage.Format_ARGB32).copy() for i in range(len(drawn))]
        else:
            images = bar_images(drawn)
        base = p.transform()
        for d, img in zip(drawn, images):  # each bar at its place and angle: one transform, one image
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
