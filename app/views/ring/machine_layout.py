"""
The machines in the ring view: nodes as clusters over a fabric, tori as grids.

`machine_shape(topology, shape)` adds what a machine topology says (nodes and GPUs per node, or a
torus's grid and wraparound links) to the ring's `RingShape`; `ring_layout` (ring_layout.py) places
the header, then a machine with `nodes_layout` (N clusters, each its devices round its own switch
as layout_parts.py places them, a fabric band under them with a NIC link per GPU) or `torus_layout`
(devices on the grid, links between neighbours, stubs where an axis wraps round). Presenting two
nodes (the lecture deck's DGX H100 pair), `two_nodes_facing` stands the fabric between them instead.
`message_path(lay, src, dst)` gives the legs a message rides on such a picture: over the fabric
between nodes, along a torus link or round its wraparound.
Pure functions of their arguments, like ring_layout; font metrics are the only outside input.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt

from simcore.kind_record import record_of

from ... import theme
from .layout_parts import (BOX_MODE_MAX_N, PRESENT_BLOCK_PX, DeviceBox, Header, RingLayout, RingShape,
                           device_font_sizes, enter_box, place_boxes, place_radial, spoke_lanes)
from .layout_text import TEXT_FITS, TextBox, text_size, wrap_lines


# ---------------------------------------------------------------------------------------
# Machines: nodes as clusters over a fabric, tori as grids
# ---------------------------------------------------------------------------------------
def nodes_layout(header: Header, scale, font, font_at, texts, shape, radial, force, blk_hint=None, zoom=1.0,
                 present=False):
    """
    N clusters side by side, each its devices round its own switch (as the single switch is
    drawn), a fabric band under them, and from every device's slot on its cluster's bottom edge
    a NIC link down to the fabric (one NIC per GPU, as in a DGX H100). Four nodes or more may
    take two rows with the fabric between them (the lower row's NICs go up to it).
    `present`: presentation mode, magnified `zoom` times: two nodes of boxes take the full height
    with the fabric between them (two_nodes_facing), when that fits.
    """
    if present and facing(shape) and not radial:
        lay = two_nodes_facing(header, scale, font, font_at, texts, shape, zoom)
        if lay is not None:
            return lay
    W, H, vs, tvs, m, *_rest, area = header
    N, P = shape.nodes, shape.per_node
    s = scale * vs
    f_node, f_fab = font("small", True), font("small", True)
    gap = m
    fab_lines = wrap_lines(texts.fabric_name, f_fab, area.width() - 2 * gap)
    fw, fh = text_size(fab_lines, f_fab)
    blk = min(theme.SIZE_PX["block"] * s, 0.06 * area.height())  # the blocks at most: two lanes under the name
    if blk_hint is not None:  # the clusters' blocks came out smaller: the band needs lanes for those only
        blk = blk_hint
    band_h = fh + 2.6 * blk + 4 * s
    nic_h = max(10 * s, 12.0)
    # one row of clusters over the fabric, or (four nodes or more, when that makes the clusters
    # squarer and larger) two rows with the fabric between them, the lower row's NICs going up
    one = (min((area.width() - (N - 1) * gap) / N, area.height() - band_h - nic_h), 1)
    per = -(-N // 2)
    two = (min((area.width() - (per - 1) * gap) / per, (area.height() - band_h) / 2 - nic_h), 2)
    rows = two[1] if N >= 4 and two[0] > one[0] else 1
    per_row = N if rows == 1 else per
    top_band = area.bottom() - band_h if rows == 1 else area.top() + (area.height() - band_h) / 2
    band = QRectF(area.left(), top_band, area.width(), band_h)
    cw = (area.width() - (per_row - 1) * gap) / per_row
    ch = band.top() - nic_h - area.top()
    if (cw < 60 or ch < 60) and not force:  # forced (a view too small for anything else): squeezed
        return None
    fabric_label = TextBox(QRectF(band.center().x() - fw / 2, band.top() + 2 * s, fw, fh), tuple(fab_lines),
                           f_fab, int(Qt.AlignHCenter))
    lanes_y = (band.bottom() - 0.65 * blk - s, band.bottom() - 1.85 * blk - s)  # rightwards, leftwards
    clusters, node_labels, devices, labels, anchors, centres, lanes, ports = [], [], [], [], [], [], [], []
    inners, subs, numbers = [], [], []
    for k in range(N):
        row, col = divmod(k, per_row)
        box = QRectF(area.left() + col * (cw + gap), area.top() if row == 0 else band.bottom() + nic_h, cw, ch)
        name = texts.node_names[k] if k < len(texts.node_names) else ""
        nl = wrap_lines(name, f_node, cw - 8)
        if len(nl) > 1 and k < len(texts.node_short):  # narrow nodes: "Node 5" (the title names the link),
            nl = wrap_lines(texts.node_short[k], f_node, cw - 8)  # else the number alone: a name a word a line
            if len(nl) > 1:  # hid the GPUs under it at 32 nodes on 1280×720
                nl = [str(k)]
        nw, nh = text_size(nl, f_node)
        node_labels.append(TextBox(QRectF(box.left() + 4, box.top() + 3, nw, nh), tuple(nl), f_node))
        inners.append(QRectF(box.left() + 4, box.top() + nh + 6, cw - 8, ch - nh - 10))
        subs.append(texts._replace(device_labels=texts.device_labels[k * P:(k + 1) * P]))
        # bars are named by their numbers (the view paints str(d)): measured so, "GPU 9"'s width
        # thinned two DGX nodes' 16 names to 8 on a 1280×720 screen
        numbers.append(texts._replace(device_labels=tuple(str(d) for d in range(k * P, (k + 1) * P))))
        clusters.append(box)
        centres.append(inners[-1].center())
    sub_shape = RingShape(P, shape.n_chunks, False)
    # one name size and one way (boxes or bars) for every node: the view paints all the names in one
    # font, and sized node by node, two DGX nodes' names came out a size apart (node 1's overflowed)
    ways = [(place_radial, numbers)] if (radial or P > BOX_MODE_MAX_N) else [(place_boxes, subs), (place_radial, numbers)]
    geos = None
    for place, named in ways:
        for g in device_font_sizes(scale, vs, tvs):
            f_dev = font_at("device", True, vs * g)
            geos = [place(r, r.center(), scale, vs, tvs, f_dev, t, sub_shape, False) for r, t in zip(inners, named)]
            if None not in geos:
                break
            geos = None
        if geos is not None:
            break
    if geos is None:
        if not force:
            return None
        place, named = ways[-1]
        f_dev = font_at("device", True, vs * TEXT_FITS[-1])
        geos = [place(r, r.center(), scale, vs, tvs, f_dev, t, sub_shape, True) for r, t in zip(inners, named)]
    r_sw = min(g[3] for g in geos)
    block = min(g[4] for g in geos)
    if blk_hint is not None:
        block = min(block, blk)  # the band's lanes are spaced for blocks of blk
    if blk_hint is None and block < 0.8 * blk:  # a band as tall as the clusters' blocks: more room for them
        again = nodes_layout(header, scale, font, font_at, texts, shape, radial, force, blk_hint=max(block, 0.5 * blk))
        if again is not None:
            return again
    mode = "radial" if any(g[7] == "radial" for g in geos) else "box"
    off = min(min(g[8] for g in geos), block * 0.62 + 1.5)
    for k, (geo, c) in enumerate(zip(geos, centres)):
        devs, labs, anch = geo[0], geo[1], geo[2]
        devices += devs
        labels += labs
        anchors += anch
        lanes += [spoke_lanes(c, r_sw, a, d, off) for a, d in zip(anch, devs)]
        box = clusters[k]
        above = box.bottom() <= band.top() + 0.5
        for j in range(P):  # GPU j's NIC: its own slot on the cluster's edge that faces the fabric
            x = box.left() + (j + 0.5) * box.width() / P
            ports.append((QPointF(x, box.bottom()), QPointF(x, band.top())) if above else
                         (QPointF(x, box.top()), QPointF(x, band.bottom())))
    switch_label = TextBox(QRectF(), (), font("switch", True))  # each cluster's name says what its switch is
    return RingLayout(*header, centres[0], mode, tuple(devices), tuple(labels),
                      tuple(anchors), r_sw, switch_label, block, off, geos[0][5], geos[0][6], tuple(lanes),
                      kind="nodes", clusters=tuple(clusters), node_centres=tuple(centres),
                      node_labels=tuple(node_labels), fabric=band, fabric_label=fabric_label, nic_ports=tuple(ports),
                      fabric_lanes=lanes_y)


def facing(shape: RingShape) -> bool:
    """Does presentation mode draw this machine as two nodes facing each other across the fabric
    (two_nodes_facing)? Two nodes whose GPUs are boxes: the lecture deck's two DGX H100."""
    return shape.kind == "nodes" and shape.nodes == 2 and shape.per_node <= BOX_MODE_MAX_N


def two_nodes_facing(header: Header, scale, font, font_at, texts, shape, zoom, blk=None):
    """
    Presentation mode's two nodes: side by side, each as tall as the area, with the fabric band
    standing between them and every GPU's NIC link reaching it from its node's inner edge. Under
    the clusters (nodes_layout) the band and the NICs took a fifth of a projector's short room and
    each node's ring of 8 was 290 px high, its blocks 8–13 px; between them they take width, which a
    16:9 screen has to spare. The node names head their clusters, the fabric's name heads the band.
    A GPU's NIC row is its rank by height in its node, so GPU j and GPU j + P (the pair that talks
    across in a hierarchical all-reduce) cross the band on one row, nearly level: going right a
    quarter of a row above it, going left a quarter below (`nic_lane_offsets`). (Every crossing block
    is mid-band at the same moment — RingView gives each leg a third of the time — so where a row is
    under two blocks high, 1280×720, the two directions overlap there as they pass: apart, the 8 rows'
    16 lanes would need 16 blocks of 24 px, 384 px, of a band 342 px high at 1.5×, and a lane spilling into
    the next row meets that row's block at the same moment; only staggering the NICs in time would part
    them, and then the 8 NICs would look as if they sent at different times.)
    The band and the NIC links are sized for blocks of `blk` (by default PRESENT_BLOCK_PX on screen;
    the rings' blocks, when those come out larger: a 4K screen's).
    None when the names or the rings do not fit.
    """
    W, H, vs, tvs, m, *_rest, area = header
    P = shape.per_node
    s = scale * vs
    least = PRESENT_BLOCK_PX / zoom  # the blocks aimed at (the layout's pixels)
    blk = least if blk is None else blk
    nic = max(0.75 * blk, 6 * s)  # a NIC's link, from a cluster's edge to the band
    band_w = 2.5 * blk
    cw = (area.width() - band_w - 2 * nic) / 2
    f_node = font("small", True)
    gap = m * 0.5
    # the heading row: node 0's name at the left, node 1's at the right, the fabric's between them
    heads = [wrap_lines(texts.node_names[k] if k < len(texts.node_names) else "", f_node, cw) for k in range(2)]
    sizes = [text_size(lines, f_node) for lines in heads]
    room = area.width() - sizes[0][0] - sizes[1][0] - 2 * gap
    fab_lines = wrap_lines(texts.fabric_name, f_node, room)
    fw, fh = text_size(fab_lines, f_node)
    if fw > room or room < band_w:
        return None
    row_h = max(sizes[0][1], sizes[1][1], fh)
    top = area.top() + row_h + 2
    ch = area.bottom() - top
    if cw < 60 or ch < 60:
        return None
    band = QRectF(area.left() + cw + nic, top, band_w, ch)
    clusters = [QRectF(area.left(), top, cw, ch), QRectF(band.right() + nic, top, cw, ch)]
    node_labels = [TextBox(QRectF(area.left(), area.top(), *sizes[0]), tuple(heads[0]), f_node),
                   TextBox(QRectF(area.right() - sizes[1][0], area.top(), *sizes[1]), tuple(heads[1]), f_node,
                           int(Qt.AlignRight))]
    fx = min(max(band.center().x() - fw / 2, area.left() + sizes[0][0] + gap), area.right() - sizes[1][0] - gap - fw)
    fabric_label = TextBox(QRectF(fx, area.top(), fw, fh), tuple(fab_lines), f_node, int(Qt.AlignHCenter))
    sub_shape = RingShape(P, shape.n_chunks, False)
    pad = max(4.0, 0.5 * m)  # the names beside the boxes keep clear of the cluster's frame
    inners = [box.adjusted(pad, pad, -pad, -pad) for box in clusters]
    centres = [r.center() for r in inners]
    subs = [texts._replace(device_labels=texts.device_labels[k * P:(k + 1) * P]) for k in range(2)]
    geos = None
    for g in device_font_sizes(scale, vs, tvs):  # the largest names (one size for both) whose rings keep the blocks
        f_dev = font_at("device", True, vs * g)
        both = [place_boxes(r, r.center(), scale, vs, tvs, f_dev, sub, sub_shape, False, zoom, True, squeeze=True)
                for r, sub in zip(inners, subs)]
        if None in both:
            continue
        if geos is None or min(geo[4] for geo in both) > min(geo[4] for geo in geos) + 1e-6:
            geos = both
        if min(geo[4] for geo in geos) * zoom >= PRESENT_BLOCK_PX - 1e-6:
            break
    if geos is None:
        return None
    r_sw = min(g[3] for g in geos)
    block = min(g[4] for g in geos)
    if block > 1.25 * blk:  # larger blocks than the band was made for: a band for those, if they stay large
        again = two_nodes_facing(header, scale, font, font_at, texts, shape, zoom, blk=block)
        if again is not None and again.block >= least - 1e-6:
            return again
    off = min(min(g[8] for g in geos), block * 0.62 + 1.5)
    devices, labels, anchors, lanes, ports = [], [], [], [], []
    for k, (geo, c) in enumerate(zip(geos, centres)):
        devs = geo[0]
        devices += devs
        labels += geo[1]
        anchors += geo[2]
        lanes += [spoke_lanes(c, r_sw, a, d, off) for a, d in zip(geo[2], devs)]
        # NIC rows: by the GPU's height in its node, then from the left (both nodes alike: a pair is level)
        order = sorted(range(P), key=lambda j: (round(devs[j].centre.y(), 3), devs[j].centre.x()))
        rank = {j: r for r, j in enumerate(order)}
        edge, face = (clusters[k].right(), band.left()) if k == 0 else (clusters[k].left(), band.right())
        for j in range(P):
            y = band.top() + band_w / 2 + (rank[j] + 0.5) * (band.height() - band_w) / P
            ports.append((QPointF(edge, y), QPointF(face, y)))
    row = (band.height() - band_w) / P
    switch_label = TextBox(QRectF(), (), font("switch", True))  # each cluster's name says what its switch is
    return RingLayout(*header, centres[0], "box", tuple(devices), tuple(labels), tuple(anchors), r_sw, switch_label,
                      block, off, geos[0][5], geos[0][6], tuple(lanes), kind="nodes", clusters=tuple(clusters),
                      node_centres=tuple(centres), node_labels=tuple(node_labels), fabric=band,
                      fabric_label=fabric_label, nic_ports=tuple(ports), nic_lane_offsets=(-row / 4, row / 4))


SLAB_GAP = 0.6  # columns between a 3-D torus's slabs: room for the diagonal stubs of the links between them


def _grid_cells(shape):
    """Per device (column, row) of its cell (columns may be fractional), and the grid's columns and
    rows: a 1-D torus is one row, 2-D rows × columns, 3-D its first axis as slabs side by side
    (SLAB_GAP of a column between them; the links between slabs are stubs, not lines across a slab)."""
    dims = tuple(shape)
    if len(dims) == 1:
        dims = (1, 1) + dims
    elif len(dims) == 2:
        dims = (1,) + dims
    a, b, c = dims
    cells = []
    for d in range(a * b * c):
        i, j, k = d // (b * c), (d // c) % b, d % c
        cells.append((i * (c + SLAB_GAP) + k, j))
    return cells, a * c + (a - 1) * SLAB_GAP, b


def torus_layout(header: Header, scale, font, font_at, texts, shape, radial, force, zoom=1.0, present=False):
    """
    Devices on the torus's grid, a link between neighbours, and where an axis wraps around, a
    stub leaving the grid's edge at both of its ends (the link joins them round the back).
    `present`: presentation mode, magnified `zoom` times: the boxes leave gaps for blocks of
    PRESENT_BLOCK_PX on screen where the cell allows, and a block may take PRESENT_GAP_SHARE of the
    gap between two boxes (at the desk 0.45: a 4×4 torus at 1280×720 has 28 px between its rows).
    """
    share = PRESENT_GAP_SHARE if present else 0.45
    gap_least = PRESENT_BLOCK_PX / zoom / share if present else 0.0
    W, H, vs, tvs, m, *_rest, area = header
    n, nc = shape.n, max(shape.n_chunks, 1)
    cells, cols, rows = _grid_cells(shape.grid)
    f_fab = font("small", True)
    fab_lines = wrap_lines(texts.fabric_name, f_fab, area.width())
    fw, fh = text_size(fab_lines, f_fab)
    grid_area = QRectF(area.left(), area.top(), area.width(), area.height() - fh - 4)
    s = scale * vs
    for g in device_font_sizes(scale, vs, tvs) or ([TEXT_FITS[-1]] if force else []):
        f_dev = font_at("device", True, vs * g)
        lab_w = max(text_size([t], f_dev)[0] for t in texts.device_labels) if n <= BOX_MODE_MAX_N * 4 else 0.0
        lab_h = text_size(["0"], f_dev)[1]
        # a wraparound's block leaves along its stub
        stub = max(min(1.3 * theme.SIZE_PX["block"] * s, 0.3 * grid_area.height() / (rows + 1)), 12.0)
        cw = (grid_area.width() - 2 * stub) / cols
        chh = (grid_area.height() - 2 * stub) / rows
        bw = min(cw * 0.62, 160 * s)
        bh = min(chh - lab_h - 0.3 * chh, 110 * s)  # the rest of the cell: the column's links and their blocks
        if present:  # narrower, shorter boxes for larger blocks, but no less than 0.4 of the cell
            bw = max(min(bw, cw - gap_least), 0.4 * cw)
            bh = max(min(bh, chh - lab_h - gap_least), 0.4 * (chh - lab_h))
        cols_s = _slot_columns(nc, bw, bh)
        rows_need = math.ceil(nc / cols_s)
        # a name above its box's left end ends left of the column's link and the blocks beside it
        clear = lab_w <= COLUMN_AT * bw - 0.65 * min(theme.SIZE_PX["block"] * s, share * (cw - bw))
        if (clear and bw >= 14 and bh >= 2.5 * rows_need + 4 and bw >= 2.5 * cols_s + 4 and cw - bw >= 12
                and chh - bh - lab_h >= 10):
            break
    else:
        if not force:
            return None
        f_dev = font_at("device", True, vs * TEXT_FITS[-1])
        lab_h = text_size(["0"], f_dev)[1]
        stub = 10.0
        cw, chh = (grid_area.width() - 2 * stub) / cols, (grid_area.height() - 2 * stub) / rows
        bw, bh = max(cw * 0.6, 6.0), max(chh * 0.4, 6.0)
    x0 = grid_area.left() + stub + (grid_area.width() - 2 * stub - cols * cw) / 2
    y0 = grid_area.top() + stub
    cols_s = _slot_columns(nc, bw, bh)
    rows_s = max(1, math.ceil(nc / cols_s))
    pad = max(1.5, min(bw, bh) * 0.06)
    devices, labels, centres = [], [], []
    align = int(Qt.AlignLeft | Qt.AlignVCenter)
    for d, (cx_, ry) in enumerate(cells):
        c = QPointF(x0 + (cx_ + 0.5) * cw, y0 + (ry + 0.5) * chh + lab_h / 2)
        centres.append(c)
        devices.append(DeviceBox(c, bw, bh, 0.0, cols_s, rows_s, pad, False))
        w, h = text_size([texts.device_labels[d]], f_dev)
        labels.append(TextBox(QRectF(c.x() - bw / 2, c.y() - bh / 2 - h - 1, w, h), (texts.device_labels[d],), f_dev,
                              align))  # over the box's left end: the column's links run at its right
    # neighbour links and wraparound stubs
    coords = [tuple(int(v) for v in np.unravel_index(d, shape.grid)) for d in range(n)]
    index = {c: d for d, c in enumerate(coords)}
    links, stubs = [], []
    slabs = len(shape.grid) == 3 and shape.grid[0] > 1  # axis 0 joins slabs: short diagonal stubs
    slab_stubs, slab_wrap = [], []
    if slabs:
        gx, gy = max(cw - bw, 4.0), max(chh - bh - lab_h, 4.0)
        ln = 0.42 * min(gx, gy) * math.sqrt(2)  # along the diagonal, inside the gaps round the box
        u = ln / math.sqrt(2)
        for d, dev in enumerate(devices):
            r = dev.rect()
            i = coords[d][0]
            slab_stubs.append((QLineF(r.right(), r.top(), r.right() + u, r.top() - u),  # to slab i+1: up right
                               QLineF(r.left(), r.bottom(), r.left() - u, r.bottom() + u)))  # from i−1: down left
            slab_wrap.append((i == shape.grid[0] - 1 and shape.wrap[0], i == 0 and shape.wrap[0]))
    for d, cd in enumerate(coords):
        for a, size in enumerate(shape.grid):
            if size < 2 or (slabs and a == 0):
                continue
            nb = list(cd)
            nb[a] += 1
            if nb[a] < size:
                links.append(_edge_link(devices[d], devices[index[tuple(nb)]]))
            elif shape.wrap[a] and size > 2:
                nb[a] = 0
                first = devices[index[tuple(nb)]]
                stubs += _wrap_stubs(devices[d], first, stub)
    anchors = tuple(d.centre for d in devices)
    lanes = tuple((QLineF(c, c), QLineF(c, c)) for c in centres)  # no switch: messages ride the links
    block = max(min(theme.SIZE_PX["block"] * s, share * min(cw - bw, chh - bh - lab_h)), 5.0)
    fabric_label = TextBox(QRectF(area.center().x() - fw / 2, area.bottom() - fh, fw, fh), tuple(fab_lines), f_fab,
                           int(Qt.AlignHCenter))
    switch_label = TextBox(QRectF(), (), font("switch", True))
    lane = theme.LINE_PX["spoke"] * s
    return RingLayout(*header, area.center(), "box", tuple(devices), tuple(labels),
                      anchors, 0.0, switch_label, block, min(block * 0.62 + 1.5, bw / 2), lane,
                      theme.LINE_PX["spoke_active"] * s, lanes, kind="torus", fabric_label=fabric_label,
                      grid_pos=tuple(coords), grid_shape=tuple(shape.grid), grid_wrap=tuple(shape.wrap),
                      links=tuple(links), wrap_stubs=tuple(stubs), slab_stubs=tuple(slab_stubs),
                      slab_wrap=tuple(slab_wrap))


def _slot_columns(nc: int, bw: float, bh: float) -> int:
    """Slots per row in a torus box of nc chunks: 8 up to 64 chunks, more when there are many (a
    4×4×4 all-gather's 192) so that the slots fill the box's shape instead of 24 rows of 8."""
    if nc <= 1:
        return 1
    return int(min(nc, max(8, math.ceil(math.sqrt(nc * max(bw, 1.0) / max(bh, 1.0))))))


def _edge_link(a: DeviceBox, b: DeviceBox) -> QLineF:
    """The link between two boxes on one grid line: from a's edge to b's edge."""
    ra, rb = a.rect(), b.rect()
    if abs(a.centre.y() - b.centre.y()) < 1e-6:  # same row
        left, right = (ra, rb) if ra.center().x() < rb.center().x() else (rb, ra)
        y = a.centre.y()
        return QLineF(left.right(), y, right.left(), y)
    if abs(a.centre.x() - b.centre.x()) < 1e-6:  # same column
        top, bot = (ra, rb) if ra.center().y() < rb.center().y() else (rb, ra)
        x = column_x(a)
        return QLineF(x, top.bottom(), x, bot.top())
    return QLineF(a.centre, b.centre)  # another slab (3-D): straight across


PRESENT_GAP_SHARE = 0.8  # presenting: a torus's block in flight may take this share of the gap between boxes
COLUMN_AT = 0.86  # a column's links run at this fraction of the box's width: clear of the name above it


def column_x(dev: DeviceBox) -> float:
    """The x of the links along a grid column: towards the box's right end, beside its name
    (above the box's left end), so the blocks riding them never pass under a name."""
    r = dev.rect()
    return r.left() + COLUMN_AT * r.width()


def _wrap_stubs(last: DeviceBox, first: DeviceBox, length: float):
    """The two ends of a wraparound link: out of `last`'s far edge and out of `first`'s near edge."""
    rl, rf = last.rect(), first.rect()
    if abs(last.centre.y() - first.centre.y()) < 1e-6:  # along a row: right of last, left of first
        y = last.centre.y()
        return [QLineF(rl.right(), y, rl.right() + length, y), QLineF(rf.left(), y, rf.left() - length, y)]
    x = column_x(last)
    return [QLineF(x, rl.bottom(), x, rl.bottom() + length), QLineF(x, rf.top(), x, rf.top() - length)]


def message_path(lay: RingLayout, src: int, dst: int):
    """
    The legs (list of (QPointF, QPointF)) a message from src to dst rides, or None where it
    rides the lanes through a switch (same node, one switch). Between nodes: out of the sender
    to its NIC on the fabric, along the fabric, up to the receiver. On a torus: along the link
    between neighbours (the two directions side by side), or round a wraparound link: out of
    the sender's stub, in through the receiver's.
    """
    if lay.kind == "nodes":
        P = len(lay.devices) // max(len(lay.clusters), 1)
        if src < 0 or dst < 0 or src // P == dst // P:
            return None
        if lay.nic_lane_offsets:  # the fabric between the two nodes: over both NICs and across it, on one row
            a, b = lay.nic_ports[src][0], lay.nic_ports[dst][0]
            o = lay.nic_lane_offsets[0 if b.x() >= a.x() else 1]
            ps, pd = QPointF(a.x(), a.y() + o), QPointF(b.x(), b.y() + o)
            return [(lay.devices[src].centre, ps), (ps, pd), (pd, lay.devices[dst].centre)]
        xs, xd = lay.nic_ports[src][0].x(), lay.nic_ports[dst][0].x()
        y = lay.fabric_lanes[0 if xd >= xs else 1]
        ps, pd = QPointF(xs, y), QPointF(xd, y)
        return [(lay.devices[src].centre, ps), (ps, pd), (pd, lay.devices[dst].centre)]
    if lay.kind != "torus" or src < 0 or dst < 0:
        return None
    cs, cd = lay.grid_pos[src], lay.grid_pos[dst]
    axes = [a for a in range(len(cs)) if cs[a] != cd[a]]
    if len(axes) != 1:
        return None
    a = axes[0]
    size = lay.grid_shape[a]
    forward = (cs[a] + 1) % size == cd[a]
    if lay.slab_stubs and a == 0:  # between slabs: out of the sender's stub, in through the receiver's
        out_, in_ = (lay.slab_stubs[src][0], lay.slab_stubs[dst][1]) if forward else \
            (lay.slab_stubs[src][1], lay.slab_stubs[dst][0])
        return [(out_.p1(), out_.p2()), (in_.p2(), in_.p1())]
    off = lay.lane_offset * (1 if forward else -1)
    A, B = lay.devices[src], lay.devices[dst]
    vertical = abs(A.centre.x() - B.centre.x()) < 1e-6
    ca = QPointF(column_x(A), A.centre.y()) if vertical else A.centre  # a column's links run beside the names
    cb = QPointF(column_x(B), B.centre.y()) if vertical else B.centre
    if abs(cs[a] - cd[a]) == 1 or size == 2:  # neighbours on the drawing: the straight link, own side
        ln = QLineF(ca, cb)
        u = ln.unitVector()
        v = QPointF(-(u.p2().y() - u.p1().y()), u.p2().x() - u.p1().x())
        rs, rd = A.rect(), B.rect()
        p1 = _edge_point(ca, cb, rs) + v * off
        p2 = _edge_point(cb, ca, rd) + v * off
        return [(p1, p2)]
    # round the wraparound link: leave the sender outwards, arrive from outside the receiver
    out = cb - ca
    ln = math.hypot(out.x(), out.y()) or 1.0
    u = QPointF(-out.x() / ln, -out.y() / ln)  # away from the receiver: the way the wrap leaves
    reach = max(lay.wrap_stubs[0].length() - lay.block / 2, 1.0) if lay.wrap_stubs else lay.block
    e1 = _edge_point(ca, ca + u * 1000, A.rect())
    e2 = _edge_point(cb, cb - u * 1000, B.rect())
    v = QPointF(-u.y(), u.x()) * off
    return [(e1 + v, e1 + u * reach + v), (e2 - u * reach + v, e2 + v)]


def _edge_point(c: QPointF, towards: QPointF, rect: QRectF) -> QPointF:
    """Where the segment from c (inside rect) towards `towards` leaves rect."""
    d = towards - c
    p = enter_box(towards, QPointF(-d.x(), -d.y()), rect)
    return p if p is not None else c


def machine_shape(topology, shape: RingShape) -> RingShape:
    """`shape` with what the machine `topology` (comm_sim's) adds, read from its kind's record
    (simcore.kind_record): nodes and GPUs per node, or a torus's grid and wraparound links; a
    switch leaves it as it is."""
    rec = record_of(topology)
    if rec is None or rec.layout == "switch":
        return shape
    return shape._replace(nodes=rec.nodes, per_node=rec.per_node, grid=rec.grid, wrap=rec.wrap)
