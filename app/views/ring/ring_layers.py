"""
The ring view's layers: every message block, chord and lane drawn by one item each (batched by
colour, cached where they change only at step boundaries), and the text label the layout places.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen, QTransform
from PySide6.QtWidgets import QGraphicsItem

from simcore.trace import ALL

from ... import theme
from .ring_items import STRIPE_MAX_N, Colors, paint_chunk
from .layout_text import metrics, text_size, wrap_lines


def draw_lines_by_colour(p: QPainter, lines_and_colours, width: float, cap=Qt.FlatCap, pens: dict | None = None):
    """Stroke (QLineF, QColor) pairs with one drawLines call per colour. `pens`, if given, keeps
    the pen of each (colour, width, cap) between calls: at n = 256 a step boundary strokes 256
    colours twice, and making their pens was a third of the time."""
    by_colour = {}
    for line, col in lines_and_colours:
        by_colour.setdefault(col.rgba(), (col, []))[1].append(line)
    pens = {} if pens is None else pens
    for rgba, (col, lines) in by_colour.items():
        pen = pens.get((rgba, width, cap))
        if pen is None:
            pen = pens[(rgba, width, cap)] = QPen(col, width)
            pen.setCapStyle(cap)
        p.setPen(pen)
        p.drawLines(lines)


ALIASED_BLOCKS_N = 64  # above this many devices the flying blocks' outlines are not antialiased
OUTLINED_BLOCK_PX = 8.0  # flying blocks smaller than this (scene px) are drawn without an outline


class FlightLayer(QGraphicsItem):
    """
    Every message on the wire, drawn by one item: a square per message in the payload's colours
    with its chunk number inside. At n = 64 a frame moves 64 blocks; as 64 items that was 64
    Python paint calls and some 300 boundingRect calls a frame, here it is one call that batches
    the outlines.
    """

    def __init__(self, colors: Colors, n: int):
        super().__init__()
        self.colors = colors
        self.n = n
        self.s = 10.0  # block side
        self.rect = QRectF()
        # the blocks: message indices, centres (k, 2), contributors (None where `fills` paints them), chunks
        self._ids, self._pos, self._who, self._chunk = np.zeros(0, np.int64), np.zeros((0, 2)), [], []
        self._items = []
        self.fills = None  # n > STRIPE_MAX_N: (contributor counts, colour devices) of every message
        self.crossing = frozenset()  # message indices that cross between nodes: a dashed gold outline
        self.setZValue(5)
        self.setAcceptedMouseButtons(Qt.NoButton)  # it covers the devices: clicks go to them

    def set_rect(self, r: QRectF):
        self.prepareGeometryChange()
        self.rect = QRectF(r)

    zoom = 1.0  # presentation mode's magnification (the view's transform): sizes on screen are × zoom
    font = None  # the chunk numbers' font (scene pixels), from the layout

    def set_size(self, s: float, font: QFont | None = None, zoom: float = 1.0):
        """Blocks of side `s` (scene pixels), their numbers in `font`, shown `zoom` times magnified."""
        self.s, self.zoom = s, zoom
        if font is not None:
            self.font = QFont(font)
        self.update()

    NUMBER_FINE = 4  # chunk numbers are drawn at this many times their size, scaled down: a font's
    # whole pixels are coarse in a scene magnified 2.35 times (a 10 px block's number: 6 or 7 px)

    def number_px(self) -> float:
        """The chunk numbers' size (scene pixels): the layout's small text, at most 0.7 of a block."""
        f = self.font if self.font is not None else theme.font("small", bold=True)
        return max(6.0, min(float(f.pixelSize()), self.s * 0.7))

    def _number_font(self) -> QFont:
        f = QFont(self.font) if self.font is not None else theme.font("small", bold=True)
        f.setBold(True)
        f.setPixelSize(round(self.number_px() * self.NUMBER_FINE))
        return f

    numbered_px = 22.0  # blocks this large on screen carry their chunk numbers (presenting: less, RingView)

    def numbered(self) -> bool:
        """Are the blocks large enough on screen (numbered_px) for their chunk numbers?"""
        return self.s * self.zoom >= self.numbered_px

    @property
    def items(self) -> list:
        """(message index, QPointF centre, contributors, chunk) of every block."""
        if self._items is None:
            self._items = [(i, QPointF(x, y), w, ch) for i, (x, y), w, ch in
                           zip(self._ids.tolist(), self._pos.tolist(), self._who, self._chunk)]
        return self._items

    def set_blocks(self, ids: np.ndarray, pos: np.ndarray, who: list, chunks: list):
        """The blocks as arrays (what the view computes): no point objects unless a paint needs them."""
        if len(ids) or len(self._ids):
            self._ids, self._pos, self._who, self._chunk = ids, pos, who, chunks
            self._items = None
            self.update()

    def boundingRect(self):
        return self.rect

    def block_rect(self, pos: QPointF) -> QRectF:
        """The scene rect one block covers, its outline included."""
        m = theme.line("outline")
        return QRectF(pos.x() - self.s / 2 - m, pos.y() - self.s / 2 - m, self.s + 2 * m, self.s + 2 * m)

    def batched(self) -> bool:
        """Are the blocks painted from `fills` (many small blocks, no numbers), not from their sets?"""
        return self.fills is not None and self.n > STRIPE_MAX_N and not self.numbered()

    def _paint_many(self, p: QPainter):
        """n > STRIPE_MAX_N: paint_chunk's rule for every block from `fills`, the outlines in one drawRects."""
        col, s = self.colors, self.s
        k_all, colour_all = self.fills
        ids, xy = self._ids, self._pos - s / 2
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
        if s >= OUTLINED_BLOCK_PX:  # a smaller block is all outline: 256 of them made a black circle
            # a tenth of the side at most: blocks queued on a torus link overlap, their outlines added up
            p.setPen(QPen(col.text, min(theme.line("outline"), max(s / 10, 0.75))))
            p.setBrush(Qt.NoBrush)
            p.drawRects(rects)
        self._outline_crossing(p, ids.tolist(), rects)

    def _outline_crossing(self, p: QPainter, ids, rects):
        """The blocks that cross between nodes: a dashed gold outline round their square."""
        if not self.crossing:
            return
        mine = [r.adjusted(-1.5, -1.5, 1.5, 1.5) for i, r in zip(ids, rects) if i in self.crossing]
        if mine:
            p.setPen(fabric_pen(theme.line("outline") * 2.0, dashed=True))
            p.setBrush(Qt.NoBrush)
            p.drawRects(mine)

    def paint(self, p: QPainter, option, widget=None):
        if not len(self._ids):
            return
        col, s = self.colors, self.s
        if self.batched():  # small blocks, no numbers
            aa = p.testRenderHint(QPainter.Antialiasing)
            # hundreds of small squares: aliased outlines take half the time, and at that size
            # (6 px at n = 256) look the same; up to 64 a 1.5 px outline would look uneven
            p.setRenderHint(QPainter.Antialiasing, aa and self.n <= ALIASED_BLOCKS_N)
            self._paint_many(p)
            p.setRenderHint(QPainter.Antialiasing, aa)  # the view does not save the painter's state
            return
        p.setPen(Qt.NoPen)
        rects = []
        for _msg, pos, who, chunk in self.items:
            r = QRectF(pos.x() - s / 2, pos.y() - s / 2, s, s)
            paint_chunk(p, r, who, self.n, col.brushes, col.empty, chunk, vertical_fill=True)
            rects.append(r)
        p.setPen(QPen(col.text, theme.line("outline") / self.zoom))
        p.setBrush(Qt.NoBrush)
        p.drawRects(rects)
        self._outline_crossing(p, [b[0] for b in self.items], rects)
        if not self.numbered():
            return
        font = self._number_font()
        k = self.NUMBER_FINE
        p.save()
        p.scale(1 / k, 1 / k)
        p.setFont(font)
        fm = QFontMetricsF(font)
        crowded = _overlapping(rects)
        for j, ((_msg, _pos, who, chunk), r) in enumerate(zip(self.items, rects)):
            if chunk == ALL or j in crowded:  # numbers on blocks that overlap would merge into a blob
                continue
            r = QRectF(r.x() * k, r.y() * k, r.width() * k, r.height() * k)
            bg = col.devices[min(who) % len(col.devices)] if len(who) == 1 else QColor("#FFFFFF")
            if len(who) > 1:  # a white badge so the number reads on bands
                w = fm.horizontalAdvance(str(chunk)) + 6 * k
                c = r.center()
                p.fillRect(QRectF(c.x() - w / 2, c.y() - fm.height() / 2, w, fm.height()), QColor(255, 255, 255, 220))
            p.setPen(theme.text_on(bg))
            p.drawText(r, Qt.AlignCenter, str(chunk))
        p.restore()


def _overlapping(rects) -> set:
    """Indices of the rects that overlap another one (by more than a sliver)."""
    out = set()
    for i, a in enumerate(rects):
        for j in range(i + 1, len(rects)):
            x = a.intersected(rects[j])
            if x.width() > 2 and x.height() > 2:
                out.update((i, j))
    return out


class PicturedLayer(QGraphicsItem):
    """
    A layer of lines that changes only at step boundaries, kept as a picture of its device pixels
    (what Qt's DeviceCoordinateCache does) that it can also draw ahead: `prepare(content)` paints
    a coming step's picture in the frames before its boundary, a part a call (`PARTS`), and the
    paint once `content` is shown blits it instead of stroking hundreds of lines in the boundary's
    frame. The last few pictures are kept (a boundary's frame and the one after it alternate
    between two). Subclasses define `content()`, what they show (a value compared with ==), and
    `draw(p, content, part, parts)`, how to stroke part k of `parts` of it; the parts are always
    drawn in the same order, so a picture drawn ahead is the one drawn at once.
    """

    KEEP = 3  # pictures kept: at 1600x900 each is about 3 MB
    PARTS = 1

    def __init__(self):
        super().__init__()
        self.rect = QRectF()
        self._pictures = []  # [content, transform, hints, x0, y0, QImage, parts drawn], the last used first
        self._device = None  # (transform, render hints) of the last paint: what prepare draws for

    def boundingRect(self):
        return self.rect

    def forget(self):
        """The geometry changed: no picture kept shows it."""
        self._pictures = []

    def _start(self, content, T: QTransform, hints):
        box = T.mapRect(self.rect)
        x0, y0 = math.floor(box.left()), math.floor(box.top())
        w, h = math.ceil(box.right()) - x0, math.ceil(box.bottom()) - y0
        if w <= 0 or h <= 0 or w * h > 64 * 2**20:
            return None
        img = QImage(w, h, QImage.Format_ARGB32_Premultiplied)
        img.fill(0)
        return [content, _key(T), hints, x0, y0, img, 0, T]

    def _draw_parts(self, pic, upto: int):
        """Draw parts pic[6] … upto − 1 of pic's content into its image."""
        if pic[6] >= upto:
            return
        content, _tkey, hints, x0, y0, img, done, T = pic
        q = QPainter(img)
        try:
            q.setRenderHints(hints)
            q.setTransform(T * QTransform.fromTranslate(-x0, -y0))
            for k in range(done, upto):
                self.draw(q, content, k, self.PARTS)
        finally:
            q.end()  # an image destroyed while painted on takes the process down
        pic[6] = upto

    def _find(self, content, tkey, hints):
        for pic in self._pictures:
            if pic[1] == tkey and pic[2] == hints and (pic[0] is content or pic[0] == content):
                return pic
        return None

    def prepare(self, content) -> bool:
        """Paint the next part of the picture of `content`, for the view's current transform (False:
        it was all there already, or the layer was never painted)."""
        if self._device is None:
            return False
        T, hints = self._device
        pic = self._find(content, _key(T), hints)
        if pic is None:
            pic = self._start(content, T, hints)
            if pic is None:
                return False
            self._pictures = [pic] + self._pictures[:self.KEEP - 1]
        elif pic[6] >= self.PARTS:
            return False
        self._draw_parts(pic, pic[6] + 1)
        return True

    def paint(self, p: QPainter, option, widget=None):
        T, hints = QTransform(p.deviceTransform()), p.renderHints()  # a copy: prepare uses it later
        content = self.content()
        if not T.isAffine():
            for k in range(self.PARTS):
                self.draw(p, content, k, self.PARTS)
            return
        self._device = (T, hints)
        pic = self._find(content, _key(T), hints) or self._start(content, T, hints)
        if pic is None:  # a huge zoom: no picture
            for k in range(self.PARTS):
                self.draw(p, content, k, self.PARTS)
            return
        self._draw_parts(pic, self.PARTS)  # what was not drawn ahead is drawn now
        self._pictures = [pic] + [q for q in self._pictures if q is not pic][:self.KEEP - 1]
        x0, y0, img = pic[3:6]
        # the picture's pixel (i, j) is device pixel (x0 + i, y0 + j): undo the item's own transform
        # on top of the painter's world transform, keeping whatever maps the world to the device
        # (a grab's offset of the widget in its window, the device pixel ratio)
        W = p.worldTransform()
        p.setWorldTransform(QTransform.fromTranslate(x0, y0) * T.inverted()[0] * W)
        p.drawImage(QPointF(0, 0), img)
        p.setWorldTransform(W)


def _key(T: QTransform) -> tuple:
    return T.m11(), T.m12(), T.m21(), T.m22(), T.dx(), T.dy()


class ChordsLayer(PicturedLayer):
    """
    Below the devices, each message's chord from the sender's lane to the receiver's. The
    chords stay put while their messages fly: a picture redrawn only when the set changes (a step
    boundary), drawn ahead of it while playing.
    """

    def __init__(self):
        super().__init__()
        self.items: list = []  # (QLineF, QColor)
        self.width = 1.0
        self._pens = {}  # draw_lines_by_colour's pens, kept while the width is
        self.setZValue(2.5)
        self.setAcceptedMouseButtons(Qt.NoButton)

    def set_geometry(self, r: QRectF, width: float):
        self.prepareGeometryChange()
        self.rect = QRectF(r)
        if width != self.width:
            self._pens = {}
        self.width = width
        self.forget()
        self.update()

    def set_items(self, items: list):
        if items != self.items:
            self.items = items
            self.update()

    def content(self):
        return self.items

    def draw(self, p: QPainter, items, part: int = 0, parts: int = 1):
        draw_lines_by_colour(p, items, self.width, Qt.RoundCap, self._pens)


class LanesLayer(PicturedLayer):
    """
    Every spoke's two lanes (send, receive) in one item: idle lanes in the spoke colour, the
    lanes a message is using in its colour and a wider pen. At n = 64 that is 128 antialiased
    wide lines, 0.4 ms to stroke; they change only when a step does, so they are a picture
    redrawn then (drawn ahead of the boundary while playing) and blitted in the frames between.
    """

    PARTS = 4  # idle lanes, then the lit ones in three shares (~1.5 ms each at n = 256)

    def __init__(self, colors: Colors):
        super().__init__()
        self.colors = colors
        self.lines: list = []  # per device: (send QLineF, receive QLineF)
        self.active: dict = {}  # (device, 0 send | 1 receive) -> QColor
        self.width = 1.0
        self.width_active = 2.0
        self._pens = {}  # draw_lines_by_colour's pens, kept while the widths are
        self.setZValue(1)
        self.setAcceptedMouseButtons(Qt.NoButton)

    def set_geometry(self, r: QRectF, lines: list, width: float, width_active: float):
        self.prepareGeometryChange()
        self.rect = QRectF(r)
        if (width, width_active) != (self.width, self.width_active):
            self._pens = {}
        self.lines, self.width, self.width_active = lines, width, width_active
        self.forget()
        self.update()

    def set_active(self, active: dict):
        if active != self.active:
            self.active = dict(active)
            self.update()

    def content(self):
        return self.active

    def draw(self, p: QPainter, active_lanes: dict, part: int = 0, parts: int = 1):
        """Part 0: the idle lanes; parts 1 … parts − 1: the lit lanes, a share of their colours each
        (at n = 256 stroking 512 antialiased lanes takes 4 ms: spread over the frames ahead of a step)."""
        idle, active = [], []
        for d, pair in enumerate(self.lines):
            for k, line in enumerate(pair):
                col = active_lanes.get((d, k))
                if col is None:
                    idle.append(line)
                else:
                    active.append((line, col))
        if part == 0:
            pen = QPen(self.colors.spoke, self.width)
            pen.setCapStyle(Qt.FlatCap)
            p.setPen(pen)
            p.drawLines(idle)
        if parts == 1 or part > 0:
            by_colour = {}
            for line, col in active:
                by_colour.setdefault(col.rgba(), []).append((line, col))
            groups = list(by_colour.values())
            if parts > 1:
                share = -(-len(groups) // (parts - 1))
                groups = groups[(part - 1) * share:part * share]
            draw_lines_by_colour(p, [pair for g in groups for pair in g], self.width_active, pens=self._pens)


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
        """Show a text box the layout placed (ring_layout.py): its lines, font and rect."""
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
        fm_h = metrics(self._font).pitch(self.lines)  # the layout's line height (taller for CJK)
        flags = int(self.align & (Qt.AlignLeft | Qt.AlignRight | Qt.AlignHCenter)) | int(Qt.AlignTop) | int(Qt.TextDontClip)
        for i, line in enumerate(self.lines):
            r = QRectF(self._rect.left() + 3, self._rect.top() + 1 + i * fm_h, self._rect.width() - 6, fm_h)
            p.drawText(r, flags, line)


# The network between nodes, its NIC links and the messages that cross it: one colour that
# reads on the light and the dark theme and is none of the device colours (Okabe–Ito's and the
# cyclic map's saturated hues): a dark gold.
FABRIC_COLOR = "#B8860B"


def fabric_pen(width: float, dashed: bool = False) -> QPen:
    pen = QPen(QColor(FABRIC_COLOR), width)
    pen.setCapStyle(Qt.FlatCap)
    if dashed:
        pen.setStyle(Qt.DashLine)
    return pen


class MachineLayer(QGraphicsItem):
    """
    What a machine adds under the devices: for nodes, every cluster's frame and its
    own switch disc, the fabric band and each GPU's NIC link down to it; for a torus, the links
    between neighbours and the stubs of the wraparound links. The messages crossing the fabric
    or riding a torus link light their legs (`set_active`). Static parts are cached.
    """

    def __init__(self, colors: Colors):
        super().__init__()
        self.colors = colors
        self.rect = QRectF()
        self.lay = None
        self.zoom = 1.0  # the ring view's presentation zoom (RingView.set_zoom)
        self.active: list = []  # (QLineF, QColor, dashed)
        self.setZValue(0.5)
        self.setAcceptedMouseButtons(Qt.NoButton)

    def set_layout(self, lay):
        self.prepareGeometryChange()
        self.lay = lay
        self.rect = QRectF(0, 0, lay.width, lay.height)
        self.update()

    def set_active(self, active: list):
        if active != self.active:
            self.active = list(active)
            self.update()

    def boundingRect(self):
        return self.rect

    def paint(self, p: QPainter, option, widget=None):
        lay = self.lay
        if lay is None or lay.kind == "switch":
            return
        col = self.colors
        s = lay.vs * theme.scale() / self.zoom  # (the view magnifies by zoom in presentation mode)
        p.setRenderHint(QPainter.Antialiasing, True)
        if lay.kind == "nodes":
            frame = QPen(col.muted, theme.line("hairline"))
            frame.setStyle(Qt.DashLine)
            p.setPen(frame)
            bg = QColor(col.background)
            p.setBrush(Qt.NoBrush)
            for r in lay.clusters:
                p.drawRoundedRect(r, 8 * s, 8 * s)
            p.setPen(fabric_pen(max(1.0, lay.lane_width * 0.6)))
            p.drawLines([QLineF(a, b) for a, b in lay.nic_ports])
            fill = QColor(FABRIC_COLOR)
            fill.setAlpha(40)
            p.setBrush(fill)
            p.setPen(fabric_pen(theme.line("outline") * 1.5))
            r = min(lay.fabric.width(), lay.fabric.height()) / 2  # a band under the nodes, or standing between two
            p.drawRoundedRect(lay.fabric, r, r)
            p.setBrush(col.switch_fill)
            p.setPen(col.switch_pen)
            for c in lay.node_centres:
                p.drawEllipse(c, lay.switch_r, lay.switch_r)
            del bg
        else:
            p.setPen(QPen(col.spoke, lay.lane_width))
            p.drawLines(list(lay.links))
            p.setPen(fabric_pen(lay.lane_width, dashed=True))
            p.drawLines(list(lay.wrap_stubs))
            if lay.slab_stubs:  # a 3-D torus: the links to the next and previous slab, wrapping ones dashed gold
                plain = [ln for pair, wraps in zip(lay.slab_stubs, lay.slab_wrap) for ln, w in zip(pair, wraps) if not w]
                wrapped = [ln for pair, wraps in zip(lay.slab_stubs, lay.slab_wrap) for ln, w in zip(pair, wraps) if w]
                p.drawLines(wrapped)
                p.setPen(QPen(col.spoke, lay.lane_width))
                p.drawLines(plain)
        for line, colour, dashed in self.active:
            pen = QPen(colour, lay.lane_width_active * 0.7)
            pen.setCapStyle(Qt.RoundCap)
            if dashed:
                pen.setStyle(Qt.DashLine)
            p.setPen(pen)
            p.drawLine(line)
