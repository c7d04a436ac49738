"""
The step timeline's graphics items and what its bars say: LaneBars (all
bars of one colour in one drawRects call), LaneLabels (labels and chunk cuts, measured against
their bar's width on screen), the kinds' colours, the lanes inside a GPU's row, and the names a
bar may carry. The view (app/views/timeline/step_timeline.py) fills them from a StepData.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPen

from ... import theme
from ...words import fmt_time

# each op kind's Okabe–Ito colour (theme.OKABE_ITO; grey for norms,
# which are tiny, and for anything the engine adds that step_timeline_model.KINDS does not know)
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


def _tr(text):
    return QCoreApplication.translate("StepTimelineView", text)


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
        for brush, rects in self.groups.values():
            if rects:
                # a cosmetic pen of the fill's colour: a bar under a pixel wide (a 2 µs all-reduce in a 34 ms
                # step) is still a pixel, where a bare fill left most collectives of the comm lanes unpainted
                pen = QPen(brush.color(), 1.0)
                pen.setCosmetic(True)
                p.setPen(pen)
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



def kind_names() -> dict:
    """Op kind -> its name in the legend and on a wide bar."""
    return {"norm": _tr("norm"), "qkv": _tr("QKV"), "attn": _tr("attention"), "o_proj": _tr("out proj"),
            "gate_up": _tr("gate/up"), "down": _tr("down"), "lm_head": _tr("LM head"), "other": _tr("other")}


def kind_short_names() -> dict:
    """Op kind -> the name on a narrow bar."""
    return {"norm": _tr("N"), "qkv": _tr("QKV"), "attn": _tr("attn"), "o_proj": _tr("Wo"),
            "gate_up": _tr("g/u"), "down": _tr("dn"), "lm_head": _tr("LM"), "other": "·"}



def opaque_on_background(c: QColor) -> str:
    """A translucent colour as the opaque colour it shows on the background (rich text has no alpha)."""
    bg = QColor(theme.palette().background)
    a = c.alphaF()
    mix = [round(a * x + (1 - a) * y)
           for x, y in zip((c.red(), c.green(), c.blue()), (bg.red(), bg.green(), bg.blue()))]
    return "#{:02X}{:02X}{:02X}".format(*mix)



def op_texts(name, short, seconds, chunks):
    """What a compute bar may say, longest first: 'down 17.5 µs · 8 chunks', 'down 17.5 µs', 'down', 'dn'."""
    t = f"{name} {fmt_time(seconds)}"
    if chunks > 1:
        return (_tr("{op} · {k} chunks").format(op=t, k=chunks), t, name, short)
    return (t, name, short)
