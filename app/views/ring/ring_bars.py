"""
The radial bars (n > 16): each device's buffer as a bar of chunk rows, every bar composed in
numpy into one picture (BarsLayer), and the rows' state set for all bars of a step at once.
The pixel rule (bar_pixels) is paint_chunk's for slots one row high: a slot held by one device is
filled with its colour, a partial sum fills the share of devices added.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QImage, QPainter, QTransform
from PySide6.QtWidgets import QGraphicsItem

from .ring_items import HeldRow

THIN_BAR_PX = 8  # bars narrower than this (n = 256 on one switch) have no side frame


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


def bar_arrays(held, n: int, n_chunks: int) -> tuple[np.ndarray, np.ndarray]:
    """The radial bars' state from a simcore.holdings.Held: per device and chunk, how many devices'
    data it holds (0: not held) and the device whose colour fills it (a sum: its chunk's)."""
    counts = np.where(held.present[:n], held.count[:n], 0)[:, :n_chunks]
    return counts, np.where(counts == 1, held.low[:n, :n_chunks], np.arange(n_chunks)[None, :])


def bar_pixels(devices, arrays=None) -> np.ndarray:
    """
    Radial bars as pixels, one (H, W) plane of ARGB32 values per device (devices of one ring
    share size, chunk count and colours), chunk 0 in the bottom rows (the inner end), with frame
    and new-chunk outline drawn in (bars under THIN_BAR_PX wide: only their ends): a slot held by one device is filled with its colour; a
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
    thin = W < THIN_BAR_PX
    if thin:  # no side frame: on a bar a few pixels wide it would outweigh the colours it frames
        arr[:, 1:-1, 0], arr[:, 1:-1, -1] = arr[:, 1:-1, 1], arr[:, 1:-1, -2]
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
        if not thin:  # a thin bar marks a new chunk by its two ends only, not by its whole width
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
        self._ahead = None  # [counts, owners, new, pixels, (map key, picture) or None, bars drawn]: the next step's
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

    AHEAD_ROWS = 128  # bars drawn ahead per call: 128 of n = 256's take ~1.2 ms

    def prepare(self, counts: np.ndarray, owners: np.ndarray, new: dict) -> bool:
        """Draw the next step's bars now, AHEAD_ROWS bars a call (counts, owners: bar_arrays; new:
        {device: chunks}); True while there are more to draw. The paint after the bars take
        exactly that state uses these pixels (see ring_ahead.look_ahead)."""
        devs = self.devices
        if not devs or any(bar_size(d) != bar_size(devs[0]) for d in devs):
            return False
        ahead = self._ahead
        if ahead is None or ahead[0] is not counts:  # a new state: start its pixels
            new = {d: frozenset(ch) for d, ch in new.items()}
            pixels = np.empty((len(devs),) + bar_size(devs[0])[::-1], "<u4")
            ahead = self._ahead = [counts, owners, new, pixels, None, 0]
        counts, owners, new, pixels, _picture, done = ahead
        if done >= len(devs):
            return False
        end = min(done + self.AHEAD_ROWS, len(devs))
        part = {d - done: ch for d, ch in new.items() if done <= d < end}
        pixels[done:end] = bar_pixels(devs[done:end], (counts[done:end], owners[done:end], part))
        ahead[5] = end
        return True

    def prepare_picture(self) -> bool:
        """Compose the prepared bars into the picture the next paint would make (a second piece
        of the look-ahead: the gather through the pixel map costs about 1 ms at n = 256)."""
        ahead = self._ahead
        if ahead is None or self._map is None or ahead[4] is not None or ahead[5] < len(self.devices):
            return False
        ahead[4] = (self._map_key, self._compose(ahead[3]))
        return True

    def _take_ahead(self, shape) -> bool:
        """Are the prepared pixels what every bar shows now? Then they become the bars' pixels."""
        ahead, self._ahead = self._ahead, None
        if ahead is None or ahead[3].shape != shape or ahead[5] < shape[0]:
            return False
        counts, owners, new, pixels, picture, _done = ahead
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
