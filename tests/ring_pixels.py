"""
What the ring view paints, read back from its pixels, for tests that compare the picture with
`app.core.frame.frame_at` (the resolved state) and the engine — never with state the view keeps.

The references are the drawing rules written here plainly, not called from the view:
  * a slot or a block holding the data of devices `who` (ring_items.paint_chunk): nothing held is
    the empty-slot colour; one contributor fills it with that device's colour; several are bands
    of their colours, lowest device on top (n ≤ STRIPE_MAX_N), else the share len(who)/n is
    filled with the chunk's colour (slots from the left, blocks and the switch's slots from the
    bottom);
  * a chunk that arrived in the last finished step is outlined in the palette's highlight colour;
  * a block is a square of the layout's block side centred on its lane: up the sender's send
    lane (device edge to switch rim) for the first half of its flight, then down the receiver's
    receive lane (rim to edge); from or to the switch it rides one lane the whole way.
Samples keep clear of a fill's edges, where antialiasing blends two colours and outlines reach in.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter, QTransform

from app import theme
from app.views.ring.ring_bars import THIN_BAR_PX
from app.views.ring.ring_items import STRIPE_MAX_N
from simcore.trace import ALL, SWITCH

HIGHLIGHT_IN = 1.5  # scene px: half the new-chunk outline, theme.line("highlight") = 3, reaches into a slot
OUTLINE_IN = 0.75  # scene px: half a block's outline, theme.line("outline") = 1.5


class Picture:
    """Pixels of (part of) the scene and how scene points map onto them; `aa` is one pixel in scene
    units (the width of an antialiased edge)."""

    def __init__(self, img: QImage, to_pixels: QTransform, aa: float):
        self.img, self.to_pixels, self.aa = img, to_pixels, aa

    def colour(self, scene_pt: QPointF) -> str:
        """The colour (#rrggbb) of the pixel that holds scene point `scene_pt`."""
        q = self.to_pixels.map(scene_pt)
        return self.img.pixelColor(math.floor(q.x()), math.floor(q.y())).name()

    def pixels_in(self, r: QRectF) -> list[int]:
        """RGB (0xRRGGBB) of the pixels wholly inside scene rect r."""
        box = self.to_pixels.mapRect(r)
        return [self.img.pixel(x, y) & 0xFFFFFF for y in range(math.ceil(box.top()), math.floor(box.bottom()))
                for x in range(math.ceil(box.left()), math.floor(box.right()))]


def grab(view) -> Picture:
    """The view's viewport as painted now (scene px = viewport px at the view's zoom)."""
    T = view.viewportTransform()
    return Picture(view.viewport().grab().toImage(), T, 1.0 / max(T.m11(), 1e-9))


def layer_picture(layer, zoom: float = 4.0) -> Picture:
    """One of the view's layers painted by itself at `zoom` over its rect, on the background colour:
    at n = 64 a block is 3 px and a chord 1 px on screen, too small to read a colour from."""
    r = layer.boundingRect()
    img = QImage(math.ceil(r.width() * zoom) + 1, math.ceil(r.height() * zoom) + 1, QImage.Format_RGB32)
    img.fill(QColor(theme.palette().background))
    T = QTransform.fromTranslate(-r.left(), -r.top()) * QTransform.fromScale(zoom, zoom)
    p = QPainter(img)
    p.setRenderHint(QPainter.Antialiasing)
    p.setTransform(T)
    layer.paint(p, None, None)
    p.end()
    return Picture(img, T, 1.0 / zoom)


def chunk_samples(r: QRectF, who, n: int, chunk: int, vertical_fill: bool, edge: float, aa: float,
                  left_column: bool = False) -> list:
    """
    Points inside scene rect r and the device whose colour paint_chunk's rule puts there (None: the
    empty-slot colour), for a chunk holding the data of `who` (a frozenset, or None). A point keeps
    `edge` from r's border (what an outline covers) and `aa` from a boundary between two fills.
    left_column: sample fills that span the width just inside the left edge, not in the middle (a big
    block's chunk number and its white badge sit in the middle).
    """
    x = r.left() + edge + aa if left_column else r.center().x()
    cy = r.center().y()
    if min(r.width(), r.height()) <= 2 * edge:  # too small to hold a pixel clear of its outline
        return []
    if not who:
        return [(QPointF(r.center().x(), cy), None)]
    k = len(who)
    if k == 1:
        return [(QPointF(x, cy), next(iter(who)))]
    if n <= STRIPE_MAX_N:  # bands, lowest device on top
        h = r.height() / k
        return [(QPointF(x, r.top() + (i + 0.5) * h), d) for i, d in enumerate(sorted(who))
                if h > 2 * (edge if i in (0, k - 1) else aa)]
    frac = k / max(n, 1)
    colour = chunk if chunk >= 0 else min(who)
    out = []
    if vertical_fill:  # filled from the bottom
        filled, rest = r.height() * frac, r.height() * (1 - frac)
        if filled > 2 * edge:
            out.append((QPointF(x, r.bottom() - filled / 2), colour))
        if rest > 2 * edge:
            out.append((QPointF(x, r.top() + rest / 2), None))
    else:  # filled from the left
        filled, rest = r.width() * frac, r.width() * (1 - frac)
        if filled > 2 * edge:
            out.append((QPointF(r.left() + filled / 2, cy), colour))
        if rest > 2 * edge:
            out.append((QPointF(r.right() - rest / 2, cy), None))
    return out


def wrong_pixels(pic: Picture, samples, n: int) -> list:
    """The samples whose pixel is not the colour the rule puts there: (scene point, want, got)."""
    colours = [c.name() for c in theme.device_colors(max(n, 1))]
    empty = QColor(theme.palette().slot_empty).name()
    out = []
    for pt, d in samples:
        want = empty if d is None else colours[d % len(colours)]
        got = pic.colour(pt)
        if got != want:
            out.append(((round(pt.x(), 1), round(pt.y(), 1)), want, got))
    return out


# -- slots ------------------------------------------------------------------------------------
def slot_rect(view, d: int, ch: int) -> QRectF:
    """Scene rect of slot ch of device d (SWITCH: the switch's own slots), box mode."""
    item = view.switch if d == SWITCH else view.devices[d]
    return item.mapRectToScene(item.slot_rect(ch))


def slots_painted_wrong(view, pic: Picture, d: int, row: dict, n_chunks: int, covered=()) -> dict:
    """
    Box mode: {chunk: (want contributors, wrong samples)} for device d's slots (SWITCH: the
    switch's) whose pixels do not show `row` ({chunk: contributors or None}); {} if all are right.
    Samples inside `covered` (scene rects: blocks leaving or reaching the box) are left out.
    """
    n = view.n
    bad = {}
    for ch in range(n_chunks):
        who = row.get(ch)
        s = chunk_samples(slot_rect(view, d, ch), who, n, ch, d == SWITCH, HIGHLIGHT_IN + pic.aa, pic.aa)
        s = [(pt, dev) for pt, dev in s if not any(r.contains(pt) for r in covered)]
        wrong = wrong_pixels(pic, s, n)
        if wrong:
            bad[ch] = (who, wrong)
    return bad


def painted_as(view, frame, devices=None, pic: Picture | None = None, covered=()) -> dict:
    """Box mode: every device's (or `devices`') slots checked against what frame.held says it
    holds: {device: slots_painted_wrong}, {} when the picture shows exactly that."""
    pic = grab(view) if pic is None else pic
    nc = view.run.trace.collectives[frame.coll].n_chunks
    bad = {}
    for d in (range(view.n) if devices is None else devices):
        wrong = slots_painted_wrong(view, pic, d, frame.held.get(d, {}) or {}, nc, covered)
        if wrong:
            bad[d] = wrong
    return bad


def outlined(view, pic: Picture, d: int, ch: int) -> bool:
    """Is slot ch of device d outlined as new (the highlight pen along its top edge)?"""
    r = slot_rect(view, d, ch)
    return pic.colour(QPointF(r.center().x(), r.top())) == QColor(theme.palette().highlight).name()


def held_dict(frame, n: int) -> dict:
    """{device: {chunk: contributors}} of the chunks held in `frame` (empty slots left out)."""
    return {d: {ch: w for ch, w in (frame.held.get(d, {}) or {}).items() if w} for d in range(n)}


# -- blocks -----------------------------------------------------------------------------------
def block_centre(view, src: int, dst: int, p: float) -> QPointF:
    """Where the layout's lanes put a message from src to dst at progress p (0 … 1) of its flight."""
    lanes = view.layout_now.lanes  # per device: (send lane, receive lane), device edge -> switch rim

    def along(line, q):
        return QPointF(line.x1() + (line.x2() - line.x1()) * q, line.y1() + (line.y2() - line.y1()) * q)

    if dst == SWITCH:
        return along(lanes[src][0], p)
    if src == SWITCH:
        return along(lanes[dst][1], 1 - p)
    if p < 0.5:
        return along(lanes[src][0], 2 * p)
    return along(lanes[dst][1], 1 - (2 * p - 1))


def block_rect(view, centre: QPointF) -> QRectF:
    """The square a block fills (the layout's block side), its outline not included."""
    s = view.layout_now.block
    return QRectF(centre.x() - s / 2, centre.y() - s / 2, s, s)


def message_block(view, i: int, p: float) -> QRectF:
    m = view.run.trace.messages[i]
    return block_rect(view, block_centre(view, m.src, m.dst, p))


def blocks_painted_wrong(view, pic: Picture, frame) -> list:
    """Every block of frame.moving checked at the place the layout puts it: (message, wrong samples)
    for those whose pixels do not show paint_chunk's rule for its contributors."""
    msgs = view.run.trace.messages
    big = view.layout_now.block >= 22  # FlightLayer writes the chunk number from 22 px: sample left of it
    out = []
    for i, p in zip(frame.moving.tolist(), frame.progress.tolist()):
        m = msgs[i]
        s = chunk_samples(message_block(view, i, p), m.contributors, view.n, m.chunk, True,
                          OUTLINE_IN + pic.aa, pic.aa, left_column=big)
        wrong = wrong_pixels(pic, s, view.n)
        if wrong:
            out.append((i, wrong))
    return out


def device_coloured_share(view, pic: Picture, r: QRectF) -> float:
    """The share of the pixels inside scene rect r that are in a device's colour."""
    colours = {QColor(c).rgb() & 0xFFFFFF for c in theme.device_colors(max(view.n, 1))}
    px = pic.pixels_in(r)
    return sum(p in colours for p in px) / max(len(px), 1)


# -- radial bars --------------------------------------------------------------------------------
def reference_bar(dev, whos, new, colors) -> np.ndarray:
    """A radial bar (H, W, RGB) drawn from contributors per chunk (`whos`) and the outlined chunks
    `new`, bar_images' rule written plainly; dev gives only the bar's size, n and chunk count."""
    W, H = max(3, round(dev.w)), max(3, round(dev.h))
    iw, ih, nc, n = W - 2, H - 2, max(dev.n_chunks, 1), dev.n

    def rgb(c):
        c = QColor(c)
        return (c.red(), c.green(), c.blue())

    border, empty, hl = rgb(theme.palette().border), rgb(theme.palette().slot_empty), rgb(theme.palette().highlight)
    img = np.empty((H, W, 3), int)
    img[:] = border
    for r in range(ih):  # image row r (top = outer end) shows chunk ch
        ch = min((ih - 1 - r) * nc // ih, nc - 1)
        who = whos[ch] if ch < len(whos) else None
        row = [empty] * iw
        if who:
            k = len(who)
            colour = rgb(colors.devices[(next(iter(who)) if k == 1 else ch) % len(colors.devices)])
            width = iw if k == 1 else max(1, round(iw * k / n))
            row[:width] = [colour] * width
        img[r + 1, 1:-1] = row
        if W < THIN_BAR_PX:  # a thin bar has no side frame: its fill runs to its edges
            img[r + 1, 0], img[r + 1, -1] = row[0], row[-1]
    for ch in new:
        rows = [r + 1 for r in range(ih) if min((ih - 1 - r) * nc // ih, nc - 1) == ch]
        if rows:
            lo, hi = max(rows[0] - 1, 0), min(rows[-1] + 2, H)
            img[lo:lo + 2, :] = hl
            img[hi - 2:hi, :] = hl
            if W >= THIN_BAR_PX:
                img[lo:hi, :2] = hl
                img[lo:hi, -2:] = hl
    return img


def frame_bar(view, frame, d: int) -> np.ndarray:
    """Device d's radial bar as frame_at says it should look: its holdings, and the chunks the last
    finished step brought it outlined."""
    c = view.run.trace.collectives[frame.coll]
    whos = [frame.held.who(d, ch) for ch in range(c.n_chunks)]
    msgs = view.run.trace.messages
    new = {msgs[i].chunk for i in frame.arrived.tolist() if msgs[i].dst == d}
    new = set(range(c.n_chunks)) if ALL in new else new  # a whole buffer
    return reference_bar(view.devices[d], whos, new, view.colors)


def blocks_over(view, frame) -> list[QRectF]:
    """Scene rects of the blocks of frame.moving, outlines included: what covers a bar's inner end
    while a block leaves or reaches its device."""
    m = theme.line("outline") + 1  # its outline, and a pixel of antialiasing beyond
    return [message_block(view, i, p).adjusted(-m, -m, m, m)
            for i, p in zip(frame.moving.tolist(), frame.progress.tolist())]


def bar_mismatches(view, pic: Picture, d: int, ref: np.ndarray, covered=()) -> tuple[int, int]:
    """
    Device d's radial bar on screen against `ref` (reference_bar): each bar pixel whose 3×3
    neighbourhood in ref is one colour is looked up where the bar's placement (its item's position
    and angle) puts its centre — nearest-pixel rotation shows that colour there whichever way it
    rounds; pixels under a block (`covered`, scene rects) are left out. (pixels compared, pixels
    that differ).
    """
    item = view.devices[d]
    H, W = ref.shape[:2]
    same = np.zeros((H, W), bool)
    inner = np.ones((H - 2, W - 2), bool)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            inner &= np.all(ref[1 + dy:H - 1 + dy, 1 + dx:W - 1 + dx] == ref[1:-1, 1:-1], axis=2)
    same[1:-1, 1:-1] = inner
    S, T = item.sceneTransform(), item.sceneTransform() * pic.to_pixels
    covered = [r for r in covered if r.intersects(item.sceneBoundingRect())]
    vs, us = np.nonzero(same)
    bad = compared = 0
    for v, u in zip(vs.tolist(), us.tolist()):
        pt = QPointF(u + 0.5 - W / 2, v + 0.5 - H / 2)
        if any(r.contains(S.map(pt)) for r in covered):
            continue
        compared += 1
        q = T.map(pt)
        c = pic.img.pixelColor(math.floor(q.x()), math.floor(q.y()))
        if (c.red(), c.green(), c.blue()) != tuple(ref[v, u]):
            bad += 1
    return compared, bad


def bar_image(view, d: int) -> np.ndarray:
    """Device d's radial bar (H, W, RGB) as the bars layer paints it (ring_bars.bar_images), for bars
    too thin to read back from the screen (n = 256: one pixel inside the frame)."""
    from app.views.ring.ring_bars import bar_images

    img = bar_images([view.devices[d]])[0].convertToFormat(QImage.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())
    return a[:, : 4 * img.width()].reshape(img.height(), img.width(), 4)[:, :, 2::-1].astype(int)
