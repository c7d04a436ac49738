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
the switch's room before it shrinks any text — and never below the desk's size on screen. Two nodes
stand side by side with the fabric between them (machine_layout.two_nodes_facing), their legend going
before their words shrink below PRESENT_WORDS.

This module places the header and the colour key, and is the one place that picks what fills the
room between them: one switch's ring (here), or a machine's nodes or torus (machine_layout.py). The
records and the devices round a switch are layout_parts.py's; text is measured by layout_text.py.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QRectF, Qt

from ... import theme
from .layout_parts import (BOX_MODE_MAX_N, PRESENT_BLOCK_PX, Header, RingLayout, RingShape, RingTexts,
                           device_font_sizes, place_boxes, place_radial, spoke_lanes)
from .layout_text import (LABEL_PAD_W, MIN_TEXT_PX, TEXT_FITS, TextBox, advance, make_font, text_box, text_size,
                          wrap_lines)
from .machine_layout import facing, nodes_layout, torus_layout

MIN_SWITCH_NAME_PX = 12  # the switch's name on screen: no smaller (beside a disc too small for it: under it)
MIN_RING_SHARE = 0.45  # the ring keeps at least this share of the view's height (else the text shrinks)


# ---------------------------------------------------------------------------------------
# The layout
# ---------------------------------------------------------------------------------------
def picture_scale(width: float, height: float) -> float:
    """The picture grows with its room (a 4K projector at 1:1 pixels), never below the theme's sizes."""
    return min(max(min(width / 900, height / 560), 1.0), 3.0)


def ring_layout(width: float, height: float, scale: float, texts: RingTexts, shape: RingShape,
                zoom: float = 1.0, present: bool | None = None) -> RingLayout:
    """
    The ring view's layout at `width`×`height` pixels and text scale `scale` (Ctrl+= steps):
    a pure function of its arguments (font metrics are the only outside input).

    `zoom` > 1: presentation mode will magnify this layout `zoom` times (RingView.set_zoom). There
    a block in flight must reach PRESENT_BLOCK_PX on screen: when the colour key under the ring
    leaves the boxes too little height (a wide, short projector at a large text size), the key
    goes beside the ring, the legend (the lecturer says it) goes if it does not fit there, and
    the switch gives the lanes room; the text shrinks only when that is not enough.
    `present`: presentation mode's rules without magnifying (text at 1×); by default zoom > 1.
    """
    present = zoom > 1.0 if present is None else present
    W, H = max(float(width), 200.0), max(float(height), 150.0)
    vs = picture_scale(W, H)
    radial = shape.n > BOX_MODE_MAX_N
    if present and facing(shape):
        lay = _two_nodes(W, H, scale, vs, texts, shape, zoom)
        if lay is not None:
            return lay
    if present and not radial and shape.kind == "switch":
        # the text may shrink for the blocks, but never below the desk's size on screen (Ctrl+= must
        # not make words smaller); when no such fit gives PRESENT_BLOCK_PX, the largest text that fits
        for f in (f for f in TEXT_FITS if scale * zoom * f >= 1.0 - 1e-9):
            for side in (False, True):
                lay = _try(W, H, scale, vs, vs * f, texts, shape, radial, side=side, zoom=zoom, present=present)
                if lay is not None and lay.block * zoom >= PRESENT_BLOCK_PX - 1e-6:
                    return lay
    for f in TEXT_FITS:  # (presenting: still magnified — the switch keeps its name, the ring its roundness)
        lay = _try(W, H, scale, vs, vs * f, texts, shape, radial, zoom=zoom, present=present)
        if lay is not None:
            return lay
    # boxes that fit nowhere (16 of them in a small view at 2.5×): bars, whose names thin out
    numbers = texts._replace(device_labels=tuple(str(d) for d in range(shape.n)))
    for f in TEXT_FITS:
        lay = _try(W, H, scale, vs, vs * f, numbers, shape, True, zoom=zoom, present=present)
        if lay is not None:
            return lay
    return _try(W, H, scale, vs, vs * TEXT_FITS[-1], numbers, shape, True, force=True, zoom=zoom, present=present)


def _two_nodes(W, H, scale, vs, texts, shape, zoom, least=PRESENT_BLOCK_PX) -> RingLayout | None:
    """Presentation mode's two nodes facing each other (machine_layout.two_nodes_facing) with blocks of
    PRESENT_BLOCK_PX on screen: the largest words at least min(scale, PRESENT_WORDS) times the desk's,
    with the legend, else without it (the lecturer says it: at 1280×720 its three lines are a fifth of the
    picture's height); then the largest words smaller than that but at least the desk's, without the legend
    if need be. None: no such fit (present_layout then tries a smaller zoom). `least` None: the fit
    with the largest blocks, however small (present_layout's last resort: boxes rather than bars)."""
    on_screen = scale * zoom  # the text scale the audience sees
    fits = [f for f in TEXT_FITS if on_screen * f >= 1.0 - 1e-9]
    large = [f for f in fits if on_screen * f >= min(on_screen, PRESENT_WORDS) - 1e-9]
    tries = [(f, legend) for legend in (True, False) for f in large]
    tries += [(f, legend) for f in fits if f not in large for legend in (True, False)]  # then the larger words
    largest = None
    for f, legend in tries:
        lay = _try(W, H, scale, vs, vs * f, texts, shape, False, zoom=zoom, present=True, legend=legend)
        if lay is None or not lay.nic_lane_offsets:
            continue
        if least is not None and lay.block * zoom >= least - 1e-6:
            return lay
        if least is None and (largest is None or lay.block > largest.block + 1e-6):
            largest = lay
    return largest


PRESENT_ZOOM_STEP = 0.9  # present_layout tries smaller zooms in these steps, down to 1
PRESENT_WORDS = 1.5  # presenting from 1.5× on, the ring's words are at least this many times the desk's


def present_layout(width: float, height: float, scale: float, texts: RingTexts, shape: RingShape,
                   zoom: float) -> tuple:
    """
    Presentation mode's layout of a `width`×`height` view (screen pixels) at text scale `scale`:
    (layout, the zoom RingView magnifies it by). The asked `zoom` (presentation.ring_zoom), unless its
    blocks in flight come out under PRESENT_BLOCK_PX on screen — sixteen boxes with their names do not
    fit a 1280×720 projector's room at 1.5× magnified 1.5 times, and fell to radial bars with 4 px
    blocks. Then a smaller zoom (down to 1), which lays the words out at a larger scale in a larger
    room, but may fit them only by shrinking them: the largest zoom whose blocks reach
    PRESENT_BLOCK_PX with the words at least min(scale, PRESENT_WORDS) times the desk's; else with
    the words at least the desk's (16 boxes at 1280×720 and 2× text: the words stay at 1×, the blocks
    at 24 px with their numbers, rather than 5 px blocks on radial bars); else the largest blocks.
    """
    def at(z):
        return ring_layout(width / z, height / z, scale / z, texts, shape, zoom=z, present=True)

    def words(lay):  # the words' size on screen against the desk's at 1×
        return scale * lay.text_vs / lay.vs

    z = max(1.0, zoom)
    tried = [(at(z), z)]
    # (two nodes facing each other: a smaller zoom is tried for larger words too — at 1280×720 and 2.5×
    # the asked zoom's blocks reached PRESENT_BLOCK_PX only with the words at the desk's size, 1.5× less
    # than at 1.5×: Ctrl+= made them smaller)
    if tried[0][0].block * z >= PRESENT_BLOCK_PX - 1e-6 and (
            not facing(shape) or words(tried[0][0]) >= min(scale, PRESENT_WORDS) - 1e-9):
        return tried[0]
    while z > 1.0:
        z = max(1.0, z * PRESENT_ZOOM_STEP)
        tried.append((at(z), z))
    fit = [(lay, z) for lay, z in tried if lay.block * z >= PRESENT_BLOCK_PX - 1e-6]
    if fit and facing(shape):  # two nodes: the largest words up to min(scale, PRESENT_WORDS), then the largest zoom
        return max(fit, key=lambda t: (min(words(t[0]), min(scale, PRESENT_WORDS)), t[1]))
    for least in (min(scale, PRESENT_WORDS), 1.0):
        for lay, z in tried:  # the largest zoom first
            if lay.block * z >= PRESENT_BLOCK_PX - 1e-6 and words(lay) >= least - 1e-9:
                return lay, z
    best = tried[0]
    for lay, z in tried[1:]:
        if words(lay) >= min(scale, PRESENT_WORDS) - 1e-9 and lay.block * z > best[0].block * best[1] + 0.5:
            best = (lay, z)
    if facing(shape) and best[0].mode != "box":
        # two nodes whose boxes reach PRESENT_BLOCK_PX at no zoom (Chinese at 1.5× beside the story column,
        # about 1040×460: the names' CJK font is taller) fell to radial bars of 7 px blocks, drawn as small
        # diamonds: the facing nodes' boxes with their largest blocks instead, blocks a little under 24 px
        boxes = []
        for _lay, z in tried:
            w_, h_ = max(width / z, 200.0), max(height / z, 150.0)
            lay = _two_nodes(w_, h_, scale / z, picture_scale(w_, h_), texts, shape, z, least=None)
            if lay is not None and words(lay) >= 1.0 - 1e-9:
                boxes.append((lay, z))
        if boxes:
            return max(boxes, key=lambda t: t[0].block * t[1])
    return best


MIN_CHUNK_NUMBER_PX = 12  # presentation mode: a chunk number on screen is no smaller (while its block holds it)


def chunk_number_px(lay: RingLayout, scale: float, zoom: float, present: bool) -> float:
    """The chunk numbers' font size (scene pixels) for `lay`, magnified `zoom` times: the layout's small
    text; presenting, at least MIN_CHUNK_NUMBER_PX on screen (the text shrunk to fit sixteen names made
    them 11 px). FlightLayer keeps a number within 0.7 of its block."""
    px = theme.FONT_PX["small"] * scale / zoom * lay.text_vs
    return max(px, MIN_CHUNK_NUMBER_PX / zoom) if present else px


def _try(W, H, scale, vs, tvs, texts, shape, radial, force=False, side=False, zoom=1.0, present=False, legend=True):
    def font_at(role, bold, factor):
        return make_font(role, bold, theme.FONT_PX[role] * scale * factor)

    def font(role, bold=False):
        return font_at(role, bold, tvs)

    m = theme.SIZE_PX["margin"] * scale * tvs
    room = W - 2 * m
    # header: the title, then the step line with the clock at its right (below it when narrow)
    f_cap, f_body, f_small = font("caption", True), font("body"), font("small")
    if present and advance(f_cap, texts.title) + LABEL_PAD_W > room:  # presentation: one line, if the
        fit = f_cap.pixelSize() * (room - LABEL_PAD_W) / max(advance(f_cap, texts.title), 1.0)  # body size allows
        if fit >= f_body.pixelSize():
            f_cap = make_font("caption", True, math.floor(fit))
    title = text_box(texts.title, f_cap, m, m * 0.5, wrap=room)
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
    legend_lines = wrap_lines(texts.legend, f_small, room) if legend else []
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
            swatch_labels.append(text_box(s, f_small, x + sw_size + 2, y))
    bottom = key_top - m * 0.5
    area = QRectF(m, top, right - m, bottom - top)
    if not force and area.height() < MIN_RING_SHARE * H:
        return None
    header = Header(W, H, vs, tvs, m, title, step, clock, beside, swatch_title, tuple(swatches),
                    tuple(swatch_labels), legend, area)
    # the one place that picks the picture for the machine: clusters round their node switches, a
    # torus's grid, or one switch
    if shape.kind == "nodes":
        return nodes_layout(header, scale, font, font_at, texts, shape, radial, force, zoom=zoom, present=present)
    if shape.kind == "torus":
        return torus_layout(header, scale, font, font_at, texts, shape, radial, force, zoom=zoom, present=present)
    return _one_switch(header, scale, font, font_at, texts, shape, radial, force, zoom, present)


def _one_switch(header: Header, scale, font, font_at, texts, shape, radial, force, zoom,
                present=False) -> RingLayout | None:
    """Every device round one switch, in the header's area: boxes on an ellipse or radial bars,
    the switch's disc with its name, and every device's two lanes to it."""
    vs, tvs, area = header.vs, header.text_vs, header.area
    centre = area.center()
    # the names round the ring may shrink further than the header: sixteen of them must fit the
    # ring's circumference, the title only the view's width
    place = place_radial if radial else place_boxes
    geo = None
    for g in device_font_sizes(scale, vs, tvs):
        geo = place(area, centre, scale, vs, tvs, font_at("device", True, vs * g), texts, shape, False, zoom, present)
        if geo is not None:
            break
    if geo is None:
        if not force:
            return None
        geo = place(area, centre, scale, vs, tvs, font_at("device", True, vs * TEXT_FITS[-1]), texts, shape, True,
                    zoom, present)
    devices, labels, anchors, r_sw, block, lane, lane_active, mode, off_max = geo
    # the switch's name inside its disc, shrunk to fit; above its slots when it shows them. It shrinks
    # no further than MIN_SWITCH_NAME_PX on screen (zoom: presentation magnifies the layout); a disc too
    # small for it even then (a short room at a high zoom) has its name just under it, never none
    f_sw = font("switch", True)
    adv = advance(f_sw, texts.switch_name)
    # (at the desk, zoom 1, a name that does not fit at the smallest font is left out, as before)
    least = max(MIN_TEXT_PX, MIN_SWITCH_NAME_PX / zoom) if present else 0.0
    if adv > 1.5 * r_sw:
        f_sw = make_font("switch", True, max(least, f_sw.pixelSize() * 1.5 * r_sw / adv))
    name_y = centre.y() - r_sw * 0.55 if shape.switch_slots else centre.y()
    name = texts.switch_name
    if name and advance(f_sw, name) > 1.75 * r_sw:
        if present and mode == "box":  # (radial bars start at the disc: no room under it)
            name_y = centre.y() + r_sw + 2 + text_size([name], f_sw)[1] / 2
        else:
            name = ""
    switch_label = text_box(name, f_sw, centre.x(), name_y, align=Qt.AlignHCenter | Qt.AlignVCenter)
    off = min(block * 0.62 + 1.5, off_max)
    lanes = tuple(spoke_lanes(centre, r_sw, anchors[d], devices[d], off) for d in range(shape.n))
    return RingLayout(*header, centre, mode, tuple(devices), tuple(labels), tuple(anchors), r_sw, switch_label,
                      block, off, lane, lane_active, lanes)


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
        labels.append(text_box(s, f_small, x + sw_size + 2, y))
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
    labels = [text_box(s, f_small, r.left() + pad, y) for s, r in zip(texts.swatch_labels, rects)]
    return title, rects, labels
