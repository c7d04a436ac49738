"""
What the timeline view (app/views/timeline/timeline.py) paints, read back from its pyqtgraph items,
for tests that compare it with the engine's trace — never with counts the view keeps for tests.

The references are the drawing rules written here plainly, not called from the view:
  * one row per GPU (n ≤ GROUP_ABOVE), the switch's row, if any, after them (row n);
  * every message is two bars over [t_start, t_end]: its sender's send bar above the row's centre,
    its receiver's receive bar below it, both in the colour of the data it carries (the one
    contributor's device, else the chunk's, else the sender's; muted from the switch).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QImage, QPainter

from app import theme
from simcore.trace import ALL, SWITCH


def _sorted(arr: np.ndarray, T: float) -> np.ndarray:
    """Rows (row, up, t0, t1, rgb) in one order for both sides: times on a grid of T / 1e9, so a time
    that went through t / unit_s and back sorts with its original."""
    g = np.round(arr[:, 2:4] / max(T, 1e-300) * 1e9)
    return arr[np.lexsort((arr[:, 4], g[:, 1], g[:, 0], arr[:, 1], arr[:, 0]))]


def painted_bars(tl) -> np.ndarray:
    """
    The send and receive bars the view's bars item paints, as rows (row, up, t0, t1, rgb): row is the
    device row the bar sits in, up = 1 for a bar above the row's centre, times in seconds, rgb the
    fill as 0xRRGGBB. Bars from the item's hide_from on (predict-then-reveal) are not painted and not
    returned; a bar across it is cut there.
    """
    bars = tl.bars
    assert bars in tl.plot.getPlotItem().items, "the bars item is not in the plot"
    out = []
    for brush, rects in bars.groups:
        rgb = brush.color().rgb() & 0xFFFFFF
        for r in rects:
            a, b, cy = r.left(), r.right(), r.center().y()
            if bars.hide_from is not None:
                if a >= bars.hide_from:
                    continue
                b = min(b, bars.hide_from)
            row = int(np.floor(cy + 0.5))
            out.append((row, 1 if cy < row else 0, a * tl.unit_s, b * tl.unit_s, rgb))
    return _sorted(np.array(out, float).reshape(-1, 5), tl.model.run.trace.t_end)


def message_bars(trace, n: int, hide_from: float | None = None, unit_s: float = 1.0) -> np.ndarray:
    """
    The bars the trace's messages call for, in painted_bars' form: two per message, in the colour of
    the data it carries (the palette's device colours): its one contributor's, else its chunk's, else
    its sender's; from the switch, the muted text colour. With hide_from (in units of unit_s s, as the
    axis counts), only what lies before it (a student predicting the step from there).
    """
    colours = [c.rgb() & 0xFFFFFF for c in theme.device_colors(n)]
    neutral = QColor(theme.palette().text_muted).rgb() & 0xFFFFFF
    out = []
    for m in trace.messages:
        t1 = m.t_end
        if hide_from is not None:
            if m.t_start / unit_s >= hide_from:  # a bar starting at the hidden step is not painted
                continue
            t1 = min(t1, hide_from * unit_s)
        who = m.contributors
        if len(who) == 1:
            rgb = colours[next(iter(who)) % n]
        elif m.chunk != ALL:
            rgb = colours[m.chunk % n]
        else:
            rgb = neutral if m.src == SWITCH else colours[m.src % n]
        out.append((n if m.src == SWITCH else m.src, 1, m.t_start, t1, rgb))
        out.append((n if m.dst == SWITCH else m.dst, 0, m.t_start, t1, rgb))
    return _sorted(np.array(out, float).reshape(-1, 5), trace.t_end)


def assert_bars_are_the_messages(tl, trace, n: int):
    """Every message's send and receive bar is painted, in its rows, in its data's colour, over its
    interval, and nothing else (up to the step a student is predicting, when the view hides the bars
    from there on)."""
    hide = tl.bars.hide_from
    got, want = painted_bars(tl), message_bars(trace, n, hide, tl.unit_s)
    assert len(got) == len(want), (len(got), len(want))
    assert hide is not None or len(got) == 2 * len(trace.messages)
    assert np.array_equal(got[:, :2], want[:, :2]), "a bar in the wrong row or half of a row"
    assert np.array_equal(got[:, 4], want[:, 4]), "a bar in another colour than its data's"
    T = max(trace.t_end, 1e-300)
    # a bar's ends are t / unit_s and back: equal up to rounding
    assert np.allclose(got[:, 2:4], want[:, 2:4], rtol=1e-9, atol=1e-12 * T), "a bar over the wrong interval"


def row_labels(tl) -> list[str]:
    """The left axis' row names as pyqtgraph lays them out to paint (AxisItem.generateDrawSpecs with
    the tick font, as AxisItem.paint does), top to bottom."""
    ax = tl.plot.getAxis("left")
    img = QImage(8, 8, QImage.Format_ARGB32)
    p = QPainter(img)
    try:
        if ax.style["tickFont"]:
            p.setFont(ax.style["tickFont"])
        specs = ax.generateDrawSpecs(p)
    finally:
        p.end()
    if specs is None:
        return []
    _axis, _ticks, texts = specs
    return [s for _rect, _flags, s in sorted(texts, key=lambda t: t[0].center().y())]


def row_height_px(tl) -> float:
    """One row's height on screen: how far apart the view box puts rows 0 and 1 (widget pixels)."""
    vb = tl.plot.getViewBox()
    a = tl.plot.mapFromScene(vb.mapViewToScene(QPointF(0.0, 0.0)))
    b = tl.plot.mapFromScene(vb.mapViewToScene(QPointF(0.0, 1.0)))
    return abs(b.y() - a.y())


def plot_texts(tl) -> list[str]:
    """The texts the plot shows (its visible TextItems), left to right, then top to bottom."""
    return [text for _x, text in placed_texts(tl)]


def placed_texts(tl) -> list[tuple[float, str]]:
    """(x in the plot's coordinates, text) of every visible TextItem, left to right, then top to bottom."""
    import pyqtgraph as pg

    items = [it for it in tl.plot.getPlotItem().items if isinstance(it, pg.TextItem) and it.isVisible()]
    return [(it.pos().x(), it.toPlainText()) for it in sorted(items, key=lambda it: (it.pos().x(), it.pos().y()))]


def compute_bars(tl) -> int:
    """Rectangles of the compute lane the plot paints (0 without one)."""
    item = getattr(tl, "compute_bars", None)
    return item.count() if item is not None and item in tl.plot.getPlotItem().items else 0


def bars_off_screen(tl, trace, n: int, tol: int = 12) -> tuple[list[tuple[int, bool]], int]:
    """
    (message index, send?) of every bar whose middle pixel in the grabbed plot is not its data's
    colour (message_bars' rule, within tol per channel). Only bars at least 6 px wide and 4 px high
    on screen are sampled (an outline or antialiasing reaches a pixel or two into the fill); returns
    also the number sampled, so a test can require it to be more than zero.
    """
    img = tl.plot.grab().toImage()
    dpr = img.devicePixelRatio()
    vb = tl.plot.getViewBox()
    colours = [QColor(c) for c in theme.device_colors(n)]
    neutral = QColor(theme.palette().text_muted)

    def px(x, y):  # data coordinates → grabbed image pixel
        p = tl.plot.mapFromScene(vb.mapViewToScene(QPointF(x, y)))
        return p.x() * dpr, p.y() * dpr

    bad, sampled = [], 0
    for i, m in enumerate(trace.messages):
        who = m.contributors
        c = (colours[next(iter(who)) % n] if len(who) == 1 else colours[m.chunk % n] if m.chunk != ALL
             else neutral if m.src == SWITCH else colours[m.src % n])
        for send, row in ((True, n if m.src == SWITCH else m.src), (False, n if m.dst == SWITCH else m.dst)):
            # a bar fills most of its half of the row: its middle is a quarter row above or below the centre
            y = row - 0.22 if send else row + 0.22
            x0, y0 = px(m.t_start / tl.unit_s, y - 0.1)
            x1, y1 = px(m.t_end / tl.unit_s, y + 0.1)
            if x1 - x0 < 6 or abs(y1 - y0) < 4:
                continue
            sampled += 1
            got = img.pixelColor(int((x0 + x1) / 2), int((y0 + y1) / 2))
            if max(abs(got.red() - c.red()), abs(got.green() - c.green()), abs(got.blue() - c.blue())) > tol:
                bad.append((i, send))
    return bad, sampled
