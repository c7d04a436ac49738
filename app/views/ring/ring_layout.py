"""
Where everything in the ring view goes: a pure function of (size, text scale, texts, scenario).

`ring_layout(width, height, scale, texts, shape)` returns a `RingLayout` of named rectangles —
header (title, step line, clock), colour key and legend, device boxes and their labels, the
switch and its name, every lane — and the view only paints them. Because the texts are inputs,
a change of scenario, language, theme or text size is a new call, never a stale picture (the
header used to be placed from the sizes of labels not yet filled in, so the title landed on the
step line). Tests ask this function directly: no window needed to check that no text overlaps.

The step line changes while playing ("step 3 of 7 (in progress)"); the header reserves the
tallest of every line the run can show, so the picture never jumps between steps. When the text
is too large for the room (a projector at 2.5×), the text is shrunk until the ring keeps at least
`MIN_RING_SHARE` of the height and every device fits: overlapping is never the fallback.

Presentation mode magnifies the layout (`zoom`): there a block in flight must be PRESENT_BLOCK_PX on
screen. A wide, short room (a 1280×720 projector at 2×) puts the step line, the clock and the colour
key in a column beside the ring, the top and bottom boxes' names beside them, and gives the lanes
the switch's room before it shrinks any text — and never below the desk's size on screen.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QTextLayout

from ... import theme

BOX_MODE_MAX_N = 16  # up to this many devices: boxes on an ellipse; beyond: radial bars
MIN_REACH = 40.0  # pixels from the switch's centre to the nearest box: a switch and lanes you can see
MIN_TEXT_PX = 9  # no text in the picture is smaller (the theme's smallest is 15 px at 1×)
# The ring's boxes are rows of slots, several times wider than tall, so their centres sit on an
# ellipse: on a circle the side boxes' inner edges would come half a box-width nearer the switch than
# the top and bottom ones', and the 45° boxes would collide with them. An ellipse uses a wide, short
# room (a 16:9 projector with the header above) — but no flatter than this: the ring through the boxes'
# inner edges, a - (box width - box height)/2 against b, at most RING_MAX_FLAT to 1 (it was 2.4:1 at
# 1280×720, 2.5× text: a flat band rather than a ring). Applied in presentation mode (zoom > 1), the
# short room of the projector; the desk's layouts are as they were.
RING_MAX_FLAT = 1.5
MIN_SWITCH_NAME_PX = 12  # the switch's name on screen: no smaller (beside a disc too small for it: under it)
MIN_NAME_PX = 10  # device names shrink on their own down to this size; below it the header shrinks too
MIN_RING_SHARE = 0.45  # the ring keeps at least this share of the view's height (else the text shrinks)
TEXT_FITS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4)  # text sizes tried, relative to the requested one
LABEL_PAD_W, LABEL_PAD_H = 6.0, 2.0  # a label's box around its text (halo)
PRESENT_BLOCK_PX = 24.0  # presentation mode: a block in flight on screen, its chunk number inside


# ---------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------
class RingTexts(NamedTuple):
    """Every text the ring view places, already translated (the language enters here)."""

    title: str
    step_lines: tuple  # every step line the run can show: the header reserves the tallest
    clock_lines: tuple  # every shape the clock can take ("t = 8.88 µs of 15.3 µs", "t = 88.8 ns of …")
    device_labels: tuple  # per device, its widest label ("GPU 3 · 7 queued" for direct all-reduce)
    switch_name: str
    swatch_title: str
    swatch_labels: tuple  # the colour key's entries, e.g. ("0", "1", …)
    legend: str
    node_names: tuple = ()  # a nodes machine: per node its name ("Node 0 · NVSwitch, NVLink 4")
    fabric_name: str = ""  # a nodes machine: the network ("InfiniBand NDR 400 · 50 GB/s"); a torus: its links


class RingShape(NamedTuple):
    """What the scenario decides about the picture."""

    n: int
    n_chunks: int  # the most chunks a device's buffer shows
    switch_slots: bool  # in-network reduction: the switch shows its own buffer
    nodes: int = 1  # > 1: device d sits on node d // per_node, each node a cluster round its own switch
    per_node: int = 0
    grid: tuple = ()  # a torus: its shape (devices on a grid, links to ±1 on each axis)
    wrap: tuple = ()  # per axis: does it have its wraparound link

    @property
    def kind(self) -> str:
        return "torus" if self.grid else "nodes" if self.nodes > 1 else "switch"


# ---------------------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------------------
class TextBox(NamedTuple):
    """A text's place: its box (scene coordinates, halo included), lines and font."""

    rect: QRectF
    lines: tuple
    font: QFont
    align: int = int(Qt.AlignLeft)


class DeviceBox(NamedTuple):
    centre: QPointF
    w: float
    h: float
    rotation: float  # degrees (radial bars point at the switch)
    cols: int
    rows: int
    pad: float
    radial: bool

    def rect(self) -> QRectF:
        """Its scene rect (the bounding rect when rotated)."""
        if not self.rotation:
            return QRectF(self.centre.x() - self.w / 2, self.centre.y() - self.h / 2, self.w, self.h)
        th = math.radians(self.rotation)
        c, s = abs(math.cos(th)), abs(math.sin(th))
        W, H = self.w * c + self.h * s, self.w * s + self.h * c
        return QRectF(self.centre.x() - W / 2, self.centre.y() - H / 2, W, H)


class RingLayout(NamedTuple):
    width: float
    height: float
    vs: float  # the picture's scale (room and text size), lines and blocks multiply by it
    text_vs: float  # the text's scale (vs, shrunk when the text would not fit)
    margin: float
    title: TextBox
    step: TextBox  # the step line's reserved box (its tallest variant)
    clock: TextBox  # the clock's reserved box (its widest text), right-aligned
    clock_beside: bool
    swatch_title: TextBox
    swatches: tuple  # QRectF per colour-key entry
    swatch_labels: tuple  # TextBox per colour-key entry
    legend: TextBox
    area: QRectF  # what is left for the ring between header and legend
    centre: QPointF
    mode: str  # "box" or "radial"
    devices: tuple  # DeviceBox per device
    device_labels: tuple  # TextBox per device, None where thinned out (radial)
    anchors: tuple  # QPointF per device: where its spoke meets it
    switch_r: float
    switch_label: TextBox
    block: float  # a message block's side
    lane_offset: float
    lane_width: float
    lane_width_active: float
    lanes: tuple  # per device: (send QLineF, receive QLineF), each from the device end to the switch end
    # the machine; a plain switch leaves these empty
    kind: str = "switch"  # "switch", "nodes" or "torus"
    clusters: tuple = ()  # nodes: per node the QRectF of its cluster (its devices and its switch)
    node_centres: tuple = ()  # nodes: per node its switch's centre (QPointF); switch_r is every node's radius
    node_labels: tuple = ()  # nodes: per node a TextBox with its name, inside its cluster at the top
    fabric: QRectF = None  # nodes: the network between the nodes, a band under the clusters
    fabric_label: TextBox = None  # nodes: the network's name in the band; torus: the links' name
    nic_ports: tuple = ()  # nodes: per device (QPointF on its cluster's bottom, QPointF on the fabric): its NIC link
    fabric_lanes: tuple = ()  # nodes: the y of the fabric's two lanes (messages going right, going left)
    grid_pos: tuple = ()  # torus: per device its coordinates
    grid_shape: tuple = ()
    grid_wrap: tuple = ()
    links: tuple = ()  # torus: QLineF per drawn neighbour link (box edge to box edge)
    wrap_stubs: tuple = ()  # torus: QLineF per wraparound link end, leaving the grid's edge
    slab_stubs: tuple = ()  # 3-D torus: per device (QLineF to slab i+1, QLineF from slab i−1), short diagonals
    slab_wrap: tuple = ()  # 3-D torus: per device, do its stubs' links wrap round (slab 3 ↔ slab 0)

    def texts(self) -> list:
        """(name, rect) of every text box, for overlap checks."""
        out = [("title", self.title.rect), ("step", self.step.rect), ("clock", self.clock.rect),
               ("swatch title", self.swatch_title.rect), ("legend", self.legend.rect),
               ("switch", self.switch_label.rect)]
        out += [(f"node {m}", b.rect) for m, b in enumerate(self.node_labels)]
        if self.fabric_label is not None:
            out.append(("fabric", self.fabric_label.rect))
        out += [(f"key {i}", b.rect) for i, b in enumerate(self.swatch_labels)]
        out += [(f"GPU {d}", b.rect) for d, b in enumerate(self.device_labels) if b is not None]
        return [(name, r) for name, r in out if not r.isEmpty()]


# ---------------------------------------------------------------------------------------
# Text measuring (the view's labels use the same rule, so the boxes are what is painted)
# ---------------------------------------------------------------------------------------
class _Metrics:
    """A font's metrics with its text widths memoised: a layout measures the same texts often."""

    def __init__(self, font: QFont):
        self.font = QFont(font)
        self.fm = QFontMetricsF(font)
        self.height = self.fm.height()
        self._cjk_height = None
        self.widths: dict = {}

    def pitch(self, lines) -> float:
        """The line height for `lines`: taller when one holds CJK text, whose fallback font
        (Noto CJK: 22 px lines for a 15 px font, against 17.5 px) the font's own metrics miss."""
        if not any(ord(c) >= 0x2E80 for s in lines for c in s):
            return self.height
        if self._cjk_height is None:
            tl = QTextLayout("A国", self.font)
            tl.beginLayout()
            ln = tl.createLine()
            tl.endLayout()
            self._cjk_height = max(self.height, ln.height())
        return self._cjk_height

    def advance(self, text: str) -> float:
        w = self.widths.get(text)
        if w is None:
            if len(self.widths) > 20000:
                self.widths.clear()
            w = self.widths[text] = self.fm.horizontalAdvance(text)
        return w


_metrics: dict = {}  # (pixel size, bold) -> _Metrics; every font here is make_font's


def make_font(role: str, bold: bool, px: float) -> QFont:
    """A font of `px` pixels, never below MIN_TEXT_PX (smaller is unreadable on a projector: the
    layout finds room for MIN_TEXT_PX text or thins the names out)."""
    f = QFont()
    f.setPixelSize(max(MIN_TEXT_PX, round(px)))
    f.setBold(bold)
    return f


def metrics(font: QFont) -> _Metrics:
    key = (font.pixelSize(), font.bold(), font.family())
    m = _metrics.get(key)
    if m is None:
        if len(_metrics) > 256:
            _metrics.clear()
        m = _metrics[key] = _Metrics(font)
    return m


def advance(font: QFont, text: str) -> float:
    """The width of `text` in `font` (pixels)."""
    return metrics(font).advance(text)


def wrap_lines(text: str, font: QFont, wrap: float) -> list:
    """Lines of `text` word-wrapped to `wrap` pixels (0: no wrapping); a newline breaks a line."""
    adv = metrics(font).advance
    room = wrap - LABEL_PAD_W
    lines = []
    for para in (text.split("\n") if text else []):
        if wrap <= 0 or adv(para) <= room:
            lines.append(para)
            continue
        cur = ""
        for piece, gap in _break_points(para):
            trial = cur + gap + piece if cur else piece
            if cur and adv(trial) > room:
                lines.append(cur)
                cur = piece
            else:
                cur = trial
        lines.append(cur)
    return lines


_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")
_NO_LINE_START = frozenset("，。；：、）」』！？·")  # CJK punctuation stays with the character before it


def _break_points(para: str) -> list:
    """(piece, gap) of a paragraph: a line may break before any piece. Between words the gap is a
    space; Chinese has no spaces, so every CJK character is a piece of its own (gap "")."""
    out = []
    for i, word in enumerate(para.split(" ")):
        gap, piece = (" " if i else ""), ""
        for ch in word:
            if piece and _CJK.match(ch) and ch not in _NO_LINE_START:
                out.append((piece, gap))
                gap, piece = "", ch
            else:
                piece += ch
        out.append((piece, gap))
    return out


def text_size(lines, font: QFont) -> tuple:
    """(width, height) of a label showing `lines` in `font`, its halo included."""
    if not lines:
        return 0.0, 0.0
    m = metrics(font)
    return max(m.advance(s) for s in lines) + LABEL_PAD_W, m.pitch(lines) * len(lines) + LABEL_PAD_H


def _box(text, font, x, y, wrap=0.0, align=Qt.AlignLeft) -> TextBox:
    """A text box whose anchor (x, y) is its top-left, top-right or centre, as `align` says."""
    lines = wrap_lines(text, font, wrap)
    w, h = text_size(lines, font)
    if align & Qt.AlignHCenter:
        x -= w / 2
    elif align & Qt.AlignRight:
        x -= w
    if align & Qt.AlignVCenter:
        y -= h / 2
    return TextBox(QRectF(x, y, w, h), tuple(lines), font, int(align))


# ---------------------------------------------------------------------------------------
# The layout
# ---------------------------------------------------------------------------------------
def picture_scale(width: float, height: float) -> float:
    """The picture grows with its room (a 4K projector at 1:1 pixels), never below the theme's sizes."""
    return min(max(min(width / 900, height / 560), 1.0), 3.0)


def ring_layout(width: float, height: float, scale: float, texts: RingTexts, shape: RingShape,
                zoom: float = 1.0) -> RingLayout:
    """
    The ring view's layout at `width`×`height` pixels and text scale `scale` (Ctrl+= steps):
    a pure function of its arguments (font metrics are the only outside input).

    `zoom` > 1: presentation mode will magnify this layout `zoom` times (RingView.set_zoom). There
    a block in flight must reach PRESENT_BLOCK_PX on screen: when the colour key under the ring
    leaves the boxes too little height (a wide, short projector at a large text size), the key
    goes beside the ring, the legend (the lecturer says it) goes if it does not fit there, and
    the switch gives the lanes room; the text shrinks only when that is not enough.
    """
    W, H = max(float(width), 200.0), max(float(height), 150.0)
    vs = picture_scale(W, H)
    radial = shape.n > BOX_MODE_MAX_N
    if zoom > 1.0 and not radial and shape.kind == "switch":
        # the text may shrink for the blocks, but never below the desk's size on screen (Ctrl+= must
        # not make words smaller); when no such fit gives PRESENT_BLOCK_PX, the largest text that fits
        for f in (f for f in TEXT_FITS if scale * zoom * f >= 1.0 - 1e-9):
            for side in (False, True):
                lay = _try(W, H, scale, vs, vs * f, texts, shape, radial, side=side, zoom=zoom)
                if lay is not None and lay.block * zoom >= PRESENT_BLOCK_PX - 1e-6:
                    return lay
    for f in TEXT_FITS:  # (presenting: still magnified — the switch keeps its name, the ring its roundness)
        lay = _try(W, H, scale, vs, vs * f, texts, shape, radial, zoom=zoom if shape.kind == "switch" else 1.0)
        if lay is not None:
            return lay
    # boxes that fit nowhere (16 of them in a small view at 2.5×): bars, whose names thin out
    numbers = texts._replace(device_labels=tuple(str(d) for d in range(shape.n)))
    zoom = zoom if shape.kind == "switch" else 1.0
    for f in TEXT_FITS:
        lay = _try(W, H, scale, vs, vs * f, numbers, shape, True, zoom=zoom)
        if lay is not None:
            return lay
    return _try(W, H, scale, vs, vs * TEXT_FITS[-1], numbers, shape, True, force=True, zoom=zoom)


def _try(W, H, scale, vs, tvs, texts, shape, radial, force=False, side=False, zoom=1.0):
    def font_at(role, bold, factor):
        return make_font(role, bold, theme.FONT_PX[role] * scale * factor)

    def font(role, bold=False):
        return font_at(role, bold, tvs)

    m = theme.SIZE_PX["margin"] * scale * tvs
    room = W - 2 * m
    # header: the title, then the step line with the clock at its right (below it when narrow)
    f_cap, f_body, f_small = font("caption", True), font("body"), font("small")
    if zoom > 1.0 and advance(f_cap, texts.title) + LABEL_PAD_W > room:  # presentation: one line, if the
        fit = f_cap.pixelSize() * (room - LABEL_PAD_W) / max(advance(f_cap, texts.title), 1.0)  # body size allows
        if fit >= f_body.pixelSize():
            f_cap = make_font("caption", True, math.floor(fit))
    title = _box(texts.title, f_cap, m, m * 0.5, wrap=room)
    clock_w = max(text_size([s], f_body)[0] for s in texts.clock_lines)
    line_h = text_size(["0"], f_body)[1]
    sy = title.rect.bottom()
    if side:  # the step line and the clock head the column beside the ring (a wide, short room)
        col_w = _side_width(texts, font("small", True), f_small, W, clock_w)
        step_h = max((text_size(wrap_lines(s, f_body, col_w), f_body)[1] for s in texts.step_lines), default=0.0)
        step = TextBox(QRectF(W - m - col_w, sy + m * 0.5, col_w, step_h), (), f_body)
        clock = TextBox(QRectF(W - m - clock_w, step.rect.bottom(), clock_w, line_h), (), f_body, int(Qt.AlignRight))
        beside, top = False, sy + m * 0.5
    else:
        beside = room - clock_w >= 0.45 * room
        step_wrap = room - clock_w - m if beside else room
        step_h = max((text_size(wrap_lines(s, f_body, step_wrap), f_body)[1] for s in texts.step_lines), default=0.0)
        step = TextBox(QRectF(m, sy, step_wrap, step_h), (), f_body)
        cy = sy if beside else sy + step_h
        clock = TextBox(QRectF(W - m - clock_w, cy, clock_w, line_h), (), f_body, int(Qt.AlignRight))
        top = max(step.rect.bottom(), clock.rect.bottom()) + m * 0.5
    # footer: the colour key (rows of swatches), then the legend
    legend_lines = wrap_lines(texts.legend, f_small, room)
    lw, lh = text_size(legend_lines, f_small)
    legend = TextBox(QRectF(m, H - m * 0.5 - lh, lw, lh), tuple(legend_lines), f_small)
    f_key = font("small", True)
    key_title_w, row_h = text_size([texts.swatch_title], f_key)
    sw_size = theme.FONT_PX["small"] * scale * tvs
    right = W - m  # the ring's room ends here (the key beside it: less)
    if side:
        if len(texts.swatch_labels) < shape.n:
            return None  # a colour bar stays under the ring
        col_w = _side_width(texts, f_key, f_small, W, clock_w)
        swatch_title, swatches, swatch_labels, legend, right = _key_beside(texts, f_key, f_small, m,
                                                                           clock.rect.bottom() + m * 0.5, W, H,
                                                                           key_title_w, row_h, sw_size, col_w)
        key_top = H  # nothing under the ring
    elif len(texts.swatch_labels) < shape.n:  # colour by position: one bar, its labels on it
        swatch_title, swatches, swatch_labels = _colour_bar(texts, f_key, f_small, m, key_title_w, row_h,
                                                            legend.rect.top(), W)
        key_top = swatch_title.rect.top()
    else:
        rows, x, row = [], m + key_title_w + 6, 0
        for s in texts.swatch_labels:
            w = sw_size + 2 + text_size([s], f_small)[0]
            if x + w > W - m and x > m + key_title_w + 6:
                row, x = row + 1, m + key_title_w + 6
            rows.append((row, x))
            x += w + 8
        n_rows = (rows[-1][0] + 1) if rows else 1
        key_top = legend.rect.top() - n_rows * row_h
        swatch_title = TextBox(QRectF(m, key_top, key_title_w, row_h), (texts.swatch_title,), f_key)
        swatches, swatch_labels = [], []
        for (r, x), s in zip(rows, texts.swatch_labels):
            y = key_top + r * row_h
            swatches.append(QRectF(x, y + (row_h - sw_size) / 2, sw_size, sw_size))
            swatch_labels.append(_box(s, f_small, x + sw_size + 2, y))
    bottom = key_top - m * 0.5
    area = QRectF(m, top, right - m, bottom - top)
    if not force and area.height() < MIN_RING_SHARE * H:
        return None
    if shape.kind != "switch":  # a machine: clusters round their node switches, or a torus grid
        header = (W, H, vs, tvs, m, title, step, clock, beside, swatch_title, tuple(swatches),
                  tuple(swatch_labels), legend, area)
        from .machine_layout import _nodes, _torus  # that module builds on this one's pieces: imported here

        machine = _nodes if shape.kind == "nodes" else _torus
        return machine(header, scale, font, font_at, texts, shape, radial, force)
    centre = area.center()
    # the names round the ring may shrink further than the header: sixteen of them must fit the
    # ring's circumference, the title only the view's width
    place = _radial if radial else _boxes
    geo = None
    for g in (f for f in TEXT_FITS if vs * f <= tvs + 1e-9 and theme.FONT_PX["device"] * scale * vs * f >= MIN_NAME_PX):
        geo = place(area, centre, scale, vs, tvs, font_at("device", True, vs * g), texts, shape, False, zoom)
        if geo is not None:
            break
    if geo is None:
        if not force:
            return None
        geo = place(area, centre, scale, vs, tvs, font_at("device", True, vs * TEXT_FITS[-1]), texts, shape, True,
                    zoom)
    devices, labels, anchors, r_sw, block, lane, lane_active, mode, off_max = geo
    # the switch's name inside its disc, shrunk to fit; above its slots when it shows them. It shrinks
    # no further than MIN_SWITCH_NAME_PX on screen (zoom: presentation magnifies the layout); a disc too
    # small for it even then (a short room at a high zoom) has its name just under it, never none
    f_sw = font("switch", True)
    adv = advance(f_sw, texts.switch_name)
    # (at the desk, zoom 1, a name that does not fit at the smallest font is left out, as before)
    least = max(MIN_TEXT_PX, MIN_SWITCH_NAME_PX / zoom) if zoom > 1.0 else 0.0
    if adv > 1.5 * r_sw:
        f_sw = make_font("switch", True, max(least, f_sw.pixelSize() * 1.5 * r_sw / adv))
    name_y = centre.y() - r_sw * 0.55 if shape.switch_slots else centre.y()
    name = texts.switch_name
    if name and advance(f_sw, name) > 1.75 * r_sw:
        if zoom > 1.0 and mode == "box":  # (radial bars start at the disc: no room under it)
            name_y = centre.y() + r_sw + 2 + text_size([name], f_sw)[1] / 2
        else:
            name = ""
    switch_label = _box(name, f_sw, centre.x(), name_y, align=Qt.AlignHCenter | Qt.AlignVCenter)
    off = min(block * 0.62 + 1.5, off_max)
    lanes = tuple(_lanes(centre, r_sw, anchors[d], devices[d], off) for d in range(shape.n))
    return RingLayout(W, H, vs, tvs, m, title, step, clock, beside, swatch_title, tuple(swatches),
                      tuple(swatch_labels), legend, area, centre, mode, tuple(devices), tuple(labels),
                      tuple(anchors), r_sw, switch_label, block, off, lane, lane_active, lanes)


def _key_entry_w(texts, f_small) -> float:
    sw_size = f_small.pixelSize()
    return max(sw_size + 2 + text_size([s], f_small)[0] for s in texts.swatch_labels) + 8


def _side_width(texts, f_key, f_small, W, clock_w) -> float:
    """The column beside the ring: its clock, its key's title and four entries a row, a quarter of the width."""
    return max(text_size([texts.swatch_title], f_key)[0], min(4, len(texts.swatch_labels)) * _key_entry_w(texts, f_small),
               clock_w, 0.25 * W)


def _key_beside(texts, f_key, f_small, m, top, W, H, key_title_w, row_h, sw_size, col_w):
    """
    The colour key in the column at the right of the ring (a wide, short room), under the step line
    and the clock: its title, then its entries in rows of as many as the column holds, then the
    legend word-wrapped to the column if the height holds it, else no legend. (title, swatch rects,
    label boxes, legend, the ring's right edge).
    """
    entry_w = max(sw_size + 2 + text_size([s], f_small)[0] for s in texts.swatch_labels) + 8
    x0 = W - m - col_w
    title = TextBox(QRectF(x0, top, key_title_w, row_h), (texts.swatch_title,), f_key)
    per_row = max(1, int((col_w + 8) // entry_w))
    swatches, labels = [], []
    for i, s in enumerate(texts.swatch_labels):
        x = x0 + (i % per_row) * entry_w
        y = top + row_h * (1 + i // per_row)
        swatches.append(QRectF(x, y + (row_h - sw_size) / 2, sw_size, sw_size))
        labels.append(_box(s, f_small, x + sw_size + 2, y))
    y = top + row_h * (1 + math.ceil(len(texts.swatch_labels) / per_row)) + m * 0.5
    lines = wrap_lines(texts.legend, f_small, col_w)
    lw, lh = text_size(lines, f_small)
    if y + lh > H - m * 0.5:
        lines, lw, lh = (), 0.0, 0.0
    legend = TextBox(QRectF(x0, y, lw, lh), tuple(lines), f_small)
    return title, swatches, labels, legend, x0 - m


def _colour_bar(texts, f_key, f_small, m, key_title_w, row_h, bottom, W):
    """
    The colour key when colours go by position (more devices than distinct colours): one bar, the
    cyclic map from device 0 to device n-1, cut into equal segments that each start at a labelled
    device (the view fills segment k with a gradient from its device's colour to the next one's).
    The bar goes below its title when the title leaves it too little room beside it.
    (title box, segment rects, label boxes), the labels inside their segments.
    """
    k = max(len(texts.swatch_labels), 1)
    pad = row_h * 0.25
    seg = max(text_size([s], f_small)[0] for s in texts.swatch_labels) + 2 * pad
    room_beside = W - m - (m + key_title_w + 8)
    beside = room_beside >= k * seg
    room = room_beside if beside else W - 2 * m
    seg = max(seg, min(room / k, 4 * seg))
    top = bottom - (row_h if beside else 2 * row_h)
    title = TextBox(QRectF(m, top, key_title_w, row_h), (texts.swatch_title,), f_key)
    bar_h = text_size(["0"], f_small)[1]  # as tall as its labels: a CJK title's line is taller
    x0, y = (m + key_title_w + 8, top) if beside else (m, top + row_h)
    y += (row_h - bar_h) / 2
    rects = [QRectF(x0 + i * seg, y, seg, bar_h) for i in range(k)]
    labels = [_box(s, f_small, r.left() + pad, y) for s, r in zip(texts.swatch_labels, rects)]
    return title, rects, labels


def _boxes(area, centre, scale, vs, tvs, f_dev, texts, shape, force, zoom=1.0):
    """Small n: axis-aligned boxes on an ellipse, each with its name on the outer side."""
    n, nc = shape.n, shape.n_chunks
    # n² slots are all-to-all's blocks (s → d): one row per sender, so a box shows its row, then its column
    cols = 1 if nc <= 1 else n if nc == n * n else min(nc, 8)
    rows = max(1, math.ceil(nc / cols)) if nc else 1
    slot = theme.SIZE_PX["slot"] * scale * vs
    min_slot = 8.0
    pad = max(3.0, slot * 0.18)
    sizes = [text_size(s.split("\n"), f_dev) for s in texts.device_labels]
    label_w = max((w for w, _h in sizes), default=0.0) + 2
    label_h = max((h for _w, h in sizes), default=0.0)
    lines = [tuple(s.split("\n")) for s in texts.device_labels]
    cx, cy = centre.x(), centre.y()
    angles = [(math.cos(-math.pi / 2 + 2 * math.pi * d / n), math.sin(-math.pi / 2 + 2 * math.pi * d / n))
              for d in range(n)]

    # a short room (presentation): the top and bottom boxes' names go beside them, giving the lanes their height
    beside = [abs(s) > 0.999 for _c, s in angles]

    def place(slot, pad, names_beside=False):
        """Box size, ellipse radii, centres and (box, name) rects as plain tuples at this slot size."""
        sw = slot * (4 if nc == 1 else 1) if nc else slot * 3
        sh = slot * 1.3
        bw, bh = cols * sw + 2 * pad, rows * sh + 2 * pad
        a = area.width() / 2 - max(bw, label_w) / 2
        if names_beside and bw / 2 + 4 + label_w > area.width() / 2:
            a = -1.0  # the top box's name beside it would leave the area
        b = area.height() / 2 - bh / 2 - label_h - 2  # the top and bottom names stay inside the area
        if names_beside:  # only the names of boxes off the top and bottom limit the height
            b = min([area.height() / 2 - bh / 2 - 1] + [(area.height() / 2 - bh / 2 - label_h - 2) / abs(s)
                                                         for (_c, s), bs in zip(angles, beside) if not bs and abs(s) > 0.01])
        if b > 0 and zoom > 1.0:  # presenting: no flatter than RING_MAX_FLAT (see there)
            a = min(a, RING_MAX_FLAT * b + (bw - bh) / 2)
        pos = [(cx + max(a, 1.0) * c, cy + max(b, 1.0) * s) for c, s in angles]
        boxes, names = [], []
        for d, (x, y) in enumerate(pos):
            boxes.append((x - bw / 2, y - bh / 2, bw, bh))
            if names_beside and beside[d]:  # at its right, centred on it
                names.append((x + bw / 2 + 4, y - label_h / 2, label_w, label_h))
                continue
            ly = y - bh / 2 - 2 - label_h if y <= cy + 1 else y + bh / 2 + 2  # the name on the outer side
            names.append((x - label_w / 2, ly, label_w, label_h))  # the widest name this device shows
        return bw, bh, a, b, pos, boxes, names

    def reach_of(pos, bw, bh):
        """The centre's distance to the nearest box: room for the switch and the lanes."""
        return min((math.hypot(max(abs(x - cx) - bw / 2, 0.0), max(abs(y - cy) - bh / 2, 0.0)) for x, y in pos),
                   default=0.0)

    s = scale * vs
    # presentation: smaller slots leave the lanes longer, down to a block of PRESENT_BLOCK_PX on screen
    present_slot = PRESENT_BLOCK_PX / zoom / 1.15 if zoom > 1.0 else math.inf
    slot0, found = slot, None
    for names_beside in ((False, True) if any(beside) else (False,)):
        slot, pad = slot0, max(3.0, slot0 * 0.18)
        while True:
            bw, bh, a, b, pos, boxes, names = place(slot, pad, names_beside)
            ok = (a > 0 and b >= 0 and reach_of(pos, bw, bh) >= MIN_REACH
                  and _disjoint(boxes + names, gap=slot * 0.3))
            if ok and zoom > 1.0 and slot * 0.92 >= present_slot:
                ok = _switch_and_block(reach_of(pos, bw, bh), slot, s, shape, zoom)[1] * zoom >= PRESENT_BLOCK_PX
            if ok or slot <= min_slot:
                break
            slot = max(slot * 0.92, min_slot)
            pad = max(2.0, slot * 0.18)
        if not ok:
            continue
        big = _switch_and_block(reach_of(pos, bw, bh), slot, s, shape, zoom)[1]
        if found is None or big > found[0]:
            found = (big, slot, pad, bw, bh, pos, boxes, names)
        if big * zoom >= PRESENT_BLOCK_PX - 1e-6:
            break
    if found is None:
        if not force:
            return None
        bw, bh, a, b, pos, boxes, names = place(slot, pad)  # forced: the smallest size, overlapping or not
    else:
        _big, slot, pad, bw, bh, pos, boxes, names = found
    centre_align = int(Qt.AlignHCenter | Qt.AlignVCenter)
    labels = [TextBox(QRectF(*r), lines[d], f_dev, centre_align) for d, r in enumerate(names)]
    boxes = [DeviceBox(QPointF(x, y), bw, bh, 0.0, cols, rows, pad, False) for x, y in pos]
    reach = max(reach_of(pos, bw, bh), 1.0)
    r_sw, block = _switch_and_block(reach, slot, s, shape, zoom)
    anchors = [_box_anchor(bx.centre, centre, bx.w, bx.h) for bx in boxes]
    lane = theme.LINE_PX["spoke"] * s
    lane_active = theme.LINE_PX["spoke_active"] * s
    off_max = max(min(bw, bh) / 2 - 1, 1.0)  # both lanes of a spoke land on the box
    return boxes, labels, anchors, r_sw, block, lane, lane_active, "box", off_max


def _switch_and_block(reach, slot, s, shape, zoom):
    """(switch radius, block side) for boxes `reach` from the centre, slots of `slot` px, at size s."""
    r_sw = min(max(0.42 * reach, 36 * s), 95 * s)
    if shape.switch_slots:  # the switch shows its own buffer: give it room
        r_sw = min(max(0.5 * reach, 50 * s), 120 * s)
    r_sw = min(r_sw, 0.7 * reach)  # the lanes keep a third of the way
    if zoom > 1.0:  # presentation: the lanes keep room for blocks of PRESENT_BLOCK_PX on screen
        r_sw = max(min(r_sw, reach - (PRESENT_BLOCK_PX + 0.01) / zoom / 0.3), 0.3 * reach)
    block = max(min(theme.SIZE_PX["block"] * s, slot * 1.15, 0.3 * (reach - r_sw)), 6.0)
    return r_sw, block


def _radial(area, centre, scale, vs, tvs, f_dev, texts, shape, force, zoom=1.0):
    """Large n: bars pointing at the switch, names outside, thinned so they never collide."""
    n, nc = shape.n, max(shape.n_chunks, 1)
    fm_h = text_size(["0"], f_dev)[1]
    label_w = max((text_size([s], f_dev)[0] for s in texts.device_labels), default=0.0)
    gap = fm_h * 0.25
    # room for a name beyond the bar's outer end on every side
    R_out = min(area.width() / 2 - label_w - 2 * gap, area.height() / 2 - fm_h - 2 * gap)
    if R_out < 40 and not force:
        return None
    R_out = max(R_out, 20.0)
    L = R_out * 0.4
    r_in = R_out - L
    share = 2 * math.pi * r_in / n  # each bar's arc at its inner end
    # 3 px at least, but never wider than its share: a forced small ring (zh at 2× in 704×432, n = 64)
    # had 3 px bars on 1.3 px shares, neighbours overlapping
    bar_w = min(max(3.0, share * 0.7), share * 0.95)
    r_sw = r_in * (0.6 if shape.switch_slots else 0.52)
    rim_gap = 2 * math.pi * r_sw / n  # distance between neighbouring spokes at the switch
    block = max(3.0, min(rim_gap * 0.34, theme.SIZE_PX["block"] * scale * vs))
    lane = max(0.8, min(theme.LINE_PX["spoke"] * scale * vs, rim_gap * 0.12))
    lane_active = max(1.2, min(theme.LINE_PX["spoke_active"] * scale * vs, rim_gap * 0.22))
    devices, anchors, spots = [], [], []
    cx, cy = centre.x(), centre.y()
    for d in range(n):
        th = -math.pi / 2 + 2 * math.pi * d / n
        ux, uy = math.cos(th), math.sin(th)
        u = QPointF(ux, uy)
        devices.append(DeviceBox(centre + u * ((r_in + R_out) / 2), bar_w, L, math.degrees(th) + 90, 1, nc,
                                 0.0, True))
        anchors.append(centre + u * r_in)
        # the name just beyond the bar's end: its box's nearest edge `gap` past R_out
        w, h = text_size([texts.device_labels[d]], f_dev)
        r = R_out + gap + abs(ux) * w / 2 + abs(uy) * h / 2
        x, y = cx + ux * r - w / 2, cy + uy * r - h / 2
        spots.append((x, y, x + w, y + h))

    def apart(i, j):
        l1, t1, r1, b1 = spots[i]
        l2, t2, r2, b2 = spots[j]
        return not (l1 < r2 and l2 < r1 and t1 < b2 and t2 < b1)

    # thinning: the smallest round stride at which neighbouring names keep apart
    for stride in (1, 2, 4, 8, 16, 32, 64, 128):
        shown = list(range(0, n, stride))
        if len(shown) > 1 and not apart(shown[-1], 0):
            shown.pop()  # n not a multiple of the stride: the last name would sit on GPU 0's
        if all(apart(i, j) for i, j in zip(shown, shown[1:])):
            break
    keep = set(shown)
    centre_align = int(Qt.AlignHCenter | Qt.AlignVCenter)
    labels = [TextBox(QRectF(l, t, r - l, b - t), (texts.device_labels[d],), f_dev, centre_align) if d in keep
              else None for d, (l, t, r, b) in enumerate(spots)]
    off_max = max(bar_w / 2 - 0.5, 0.5)  # both lanes end on the bar's inner edge
    return devices, labels, anchors, r_sw, block, lane, lane_active, "radial", off_max


def _lanes(c: QPointF, r: float, anchor: QPointF, dev: DeviceBox, off: float):
    """A spoke's send and receive lanes: parallel to the centre line, `off` to either side, from
    the device's edge to the switch's rim."""
    dx, dy = c.x() - anchor.x(), c.y() - anchor.y()
    ln = math.hypot(dx, dy) or 1.0
    u = QPointF(dx / ln, dy / ln)  # towards the switch
    v = QPointF(-u.y(), u.x())
    rim = c - u * math.sqrt(max(r * r - off * off, 1.0))
    out = []
    for sign in (1, -1):
        start = anchor + v * (sign * off)
        if not dev.radial:  # where the lane, followed outwards, meets the box's edge
            start = _enter_box(rim + v * (sign * off), QPointF(-u.x(), -u.y()), dev.rect()) or start
        out.append(QLineF(start, rim + v * (sign * off)))
    return tuple(out)


def _enter_box(p: QPointF, d: QPointF, rect: QRectF):
    """The first point of ray p + s·d (s ≥ 0) inside rect, or None (slab method)."""
    lo, hi = 0.0, math.inf
    for p0, d0, a, b in ((p.x(), d.x(), rect.left(), rect.right()), (p.y(), d.y(), rect.top(), rect.bottom())):
        if abs(d0) < 1e-12:
            if not a <= p0 <= b:
                return None
            continue
        s1, s2 = (a - p0) / d0, (b - p0) / d0
        lo, hi = max(lo, min(s1, s2)), min(hi, max(s1, s2))
    if lo > hi:
        return None
    return QPointF(p.x() + d.x() * lo, p.y() + d.y() * lo)


def _box_anchor(c: QPointF, centre: QPointF, w: float, h: float) -> QPointF:
    """Where the line from box centre c to the switch centre leaves the box."""
    dx, dy = centre.x() - c.x(), centre.y() - c.y()
    if abs(dx) < 1e-9 and abs(dy) < 1e-9:
        return c
    sx = (w / 2) / abs(dx) if abs(dx) > 1e-9 else math.inf
    sy = (h / 2) / abs(dy) if abs(dy) > 1e-9 else math.inf
    s = min(sx, sy)
    return QPointF(c.x() + dx * s, c.y() + dy * s)


def _disjoint(rects, gap=0.0) -> bool:
    """No two (x, y, w, h) rects closer than `gap`; the first half are boxes, the second their
    names (a device's box and its own name may touch: they are one)."""
    half = len(rects) // 2
    g = gap / 2
    edges = [(x - g, y - g, x + w + g, y + h + g) for x, y, w, h in rects]
    for i, (l1, t1, r1, b1) in enumerate(edges):
        for j in range(i + 1, len(edges)):
            if j == i + half:
                continue
            l2, t2, r2, b2 = edges[j]
            if l1 < r2 and l2 < r1 and t1 < b2 and t2 < b1:
                return False
    return True


def overlaps(rects) -> list:
    """[(name a, name b)] of named rects that overlap by more than half a pixel."""
    out = []
    for i, (na, a) in enumerate(rects):
        for nb, b in rects[i + 1:]:
            r = a.intersected(b)
            if r.width() > 0.5 and r.height() > 0.5:
                out.append((na, nb))
    return out
