"""
The parts every ring-tab picture is built from: its records and the devices round one switch.

The records: what a layout is given (`RingTexts`, `RingShape`), what it returns (`RingLayout` of
`DeviceBox`es and `TextBox`es) and the `Header` it places first. The placing: `place_boxes` (up to
BOX_MODE_MAX_N devices as boxes on an ellipse round the switch) and `place_radial` (more, as bars
pointing at it), each device's two `spoke_lanes`. The ring's layout (ring_layout.py) puts one such
ring in its room; the machines' (machine_layout.py) put one in every node's cluster. Pure functions
of their arguments; font metrics (layout_text.py) are the only outside input.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt

from ... import theme
from .layout_text import TEXT_FITS, TextBox, text_size

BOX_MODE_MAX_N = 16  # up to this many devices: boxes on an ellipse; beyond: radial bars
MIN_REACH = 40.0  # pixels from the switch's centre to the nearest box: a switch and lanes you can see
# The ring's boxes are rows of slots, several times wider than tall, so their centres sit on an
# ellipse: on a circle the side boxes' inner edges would come half a box-width nearer the switch than
# the top and bottom ones', and the 45° boxes would collide with them. An ellipse uses a wide, short
# room (a 16:9 projector with the header above) — but no flatter than this: the ring through the boxes'
# inner edges, a - (box width - box height)/2 against b, at most RING_MAX_FLAT to 1 (it was 2.4:1 at
# 1280×720, 2.5× text: a flat band rather than a ring). Applied in presentation mode (zoom > 1), the
# short room of the projector; the desk's layouts are as they were.
RING_MAX_FLAT = 1.5
MIN_NAME_PX = 10  # device names shrink on their own down to this size; below it the header shrinks too
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
    node_short: tuple = ()  # ... and its short name ("Node 0"), where the long one would wrap
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
    # two nodes facing each other across the fabric (presentation): (going right, going left) the offset in y
    # of a crossing from its NIC's row; empty: the fabric is a band under the nodes, crossed on fabric_lanes
    nic_lane_offsets: tuple = ()
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



class Header(NamedTuple):
    """What a layout places before the devices (a RingLayout's first fields): the title, step line,
    clock and colour key, and the `area` left for the picture between them."""

    width: float
    height: float
    vs: float
    text_vs: float
    margin: float
    title: TextBox
    step: TextBox
    clock: TextBox
    clock_beside: bool
    swatch_title: TextBox
    swatches: tuple
    swatch_labels: tuple
    legend: TextBox
    area: QRectF


def device_font_sizes(scale: float, vs: float, tvs: float) -> list:
    """The device names' sizes to try (factors of vs, largest first): the names may shrink further
    than the header's text, down to MIN_NAME_PX — sixteen of them must fit a ring's circumference."""
    return [g for g in TEXT_FITS if vs * g <= tvs + 1e-9 and theme.FONT_PX["device"] * scale * vs * g >= MIN_NAME_PX]


# ---------------------------------------------------------------------------------------
# Devices round one switch
# ---------------------------------------------------------------------------------------
def place_boxes(area, centre, scale, vs, tvs, f_dev, texts, shape, force, zoom=1.0, present=None, squeeze=False):
    """
    Small n: axis-aligned boxes on an ellipse round `centre`, each with its name on the outer side.
    (devices, labels, anchors, switch radius, block side, lane width, active lane width, "box", the
    lanes' largest offset from a spoke's centre line), all in pixels; None if they do not fit (unless
    `force`: then the smallest size, overlapping or not). `present`: presentation mode's rules (by
    default when magnified, zoom > 1; at 1× text presentation is not magnified but keeps them).
    `squeeze`: presenting a ring in a short room (a node of two, machine_layout.two_nodes_facing): the
    slots may shrink below the block in flight (down to 8 px) while the blocks want the lanes' room (a
    DGX node's boxes hold two rows of slots), and the names of the boxes between the top and the sides
    may go beside them too (above them, the 45° boxes' names met the top box's name beside it).
    """
    present = zoom > 1.0 if present is None else present
    n, nc = shape.n, shape.n_chunks
    # n² slots are block slots (all-to-all's s → d, registry.BLOCKS): one row per sender, so a box shows its
    # row, then its column
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
    # squeezed: every box's but the sides' (their names above and below them cost no height), outwards
    most = [abs(s) > 0.01 for _c, s in angles]

    def place(slot, pad, names_beside=False):
        """Box size, ellipse radii, centres and (box, name) rects as plain tuples at this slot size."""
        sw = slot * (4 if nc == 1 else 1) if nc else slot * 3
        sh = slot * 1.3
        bw, bh = cols * sw + 2 * pad, rows * sh + 2 * pad
        a = area.width() / 2 - max(bw, label_w) / 2
        if names_beside and bw / 2 + 4 + label_w > area.width() / 2:
            a = -1.0  # the top box's name beside it would leave the area
        if names_beside == "most":  # the 45° boxes' names stay inside the area too
            a = min([a] + [(area.width() / 2 - bw / 2 - 4 - label_w) / abs(c) for c, s in angles if abs(c) > 0.01
                           and abs(s) > 0.01])
        b = area.height() / 2 - bh / 2 - label_h - 2  # the top and bottom names stay inside the area
        if names_beside:  # only the names of boxes off the top and bottom limit the height
            by = most if names_beside == "most" else beside
            b = min([area.height() / 2 - bh / 2 - 1] + [(area.height() / 2 - bh / 2 - label_h - 2) / abs(s)
                                                         for (_c, s), bs in zip(angles, by)
                                                         if not bs and abs(s) > 0.01])
        if b > 0 and present:  # presenting: no flatter than RING_MAX_FLAT (see there)
            a = min(a, RING_MAX_FLAT * b + (bw - bh) / 2)
        pos = [(cx + max(a, 1.0) * c, cy + max(b, 1.0) * s) for c, s in angles]
        boxes, names = [], []
        for d, (x, y) in enumerate(pos):
            boxes.append((x - bw / 2, y - bh / 2, bw, bh))
            if names_beside and beside[d]:  # at its right, centred on it
                names.append((x + bw / 2 + 4, y - label_h / 2, label_w, label_h))
                continue
            if names_beside == "most" and most[d]:  # on its outer side, centred on it
                left = x - cx < -1
                names.append((x - bw / 2 - 4 - label_w if left else x + bw / 2 + 4, y - label_h / 2, label_w,
                               label_h))
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
    present_slot = PRESENT_BLOCK_PX / zoom / 1.15 if present else math.inf
    slot0, found = slot, None
    for names_beside in ((False, True) if any(beside) else (False,)) + (("most",) if squeeze else ()):
        slot, pad = slot0, max(3.0, slot0 * 0.18)
        while True:
            bw, bh, a, b, pos, boxes, names = place(slot, pad, names_beside)
            ok = (a > 0 and b >= 0 and reach_of(pos, bw, bh) >= MIN_REACH
                  and _disjoint(boxes + names, gap=slot * 0.3))
            if ok and present and (slot * 0.92 >= present_slot or (squeeze and slot > min_slot)):
                big = _switch_and_block(reach_of(pos, bw, bh), slot, s, shape, zoom, present)[1]
                ok = big * zoom >= PRESENT_BLOCK_PX
            if ok or slot <= min_slot:
                break
            slot = max(slot * 0.92, min_slot)
            pad = max(2.0, slot * 0.18)
        if not ok:
            continue
        big = _switch_and_block(reach_of(pos, bw, bh), slot, s, shape, zoom, present)[1]
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
    r_sw, block = _switch_and_block(reach, slot, s, shape, zoom, present)
    anchors = [_box_anchor(bx.centre, centre, bx.w, bx.h) for bx in boxes]
    lane = theme.LINE_PX["spoke"] * s
    lane_active = theme.LINE_PX["spoke_active"] * s
    off_max = max(min(bw, bh) / 2 - 1, 1.0)  # both lanes of a spoke land on the box
    return boxes, labels, anchors, r_sw, block, lane, lane_active, "box", off_max


def _switch_and_block(reach, slot, s, shape, zoom, present=False):
    """(switch radius, block side) for boxes `reach` from the centre, slots of `slot` px, at size s."""
    r_sw = min(max(0.42 * reach, 36 * s), 95 * s)
    if shape.switch_slots:  # the switch shows its own buffer: give it room
        r_sw = min(max(0.5 * reach, 50 * s), 120 * s)
    r_sw = min(r_sw, 0.7 * reach)  # the lanes keep a third of the way
    like_slot = slot * 1.15  # a block in flight looks like the slot it left
    if present:  # presentation: the lanes keep room for blocks of PRESENT_BLOCK_PX on screen
        r_sw = max(min(r_sw, reach - (PRESENT_BLOCK_PX + 0.01) / zoom / 0.3), 0.3 * reach)
        # sixteen boxes round the ring have slots of 9 px at 1280×720: the block in flight keeps
        # PRESENT_BLOCK_PX on screen all the same (its number is what the back row reads)
        like_slot = max(like_slot, PRESENT_BLOCK_PX / zoom)
    block = max(min(theme.SIZE_PX["block"] * s, like_slot, 0.3 * (reach - r_sw)), 6.0)
    return r_sw, block


def place_radial(area, centre, scale, vs, tvs, f_dev, texts, shape, force, zoom=1.0, present=False):
    """Large n: bars pointing at the switch, names outside, thinned so they never collide (a name
    is None where thinned out). The same tuple as place_boxes, its mode "radial"."""
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


def spoke_lanes(c: QPointF, r: float, anchor: QPointF, dev: DeviceBox, off: float):
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
            start = enter_box(rim + v * (sign * off), QPointF(-u.x(), -u.y()), dev.rect()) or start
        out.append(QLineF(start, rim + v * (sign * off)))
    return tuple(out)


def enter_box(p: QPointF, d: QPointF, rect: QRectF):
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


# ---------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------
def overlaps(rects) -> list:
    """[(name a, name b)] of named rects that overlap by more than half a pixel."""
    out = []
    for i, (na, a) in enumerate(rects):
        for nb, b in rects[i + 1:]:
            r = a.intersected(b)
            if r.width() > 0.5 and r.height() > 0.5:
                out.append((na, nb))
    return out
