"""
The graphics pieces of the decode-latency tab: the band coloured by the binding term, a plot
widget with its legend and a title that never widens it, legend samples, log-axis ticks, and
where a text item sits in view coordinates. app/views/latency/latency_view.py puts them together.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSizeF, Qt
from PySide6.QtGui import QFontMetricsF, QPainterPath
from PySide6.QtWidgets import QSplitter, QStackedWidget, QTabWidget

from ... import theme
from ...core.latency_model import BOUNDS, decade_label, ranges_of


class BoundBand(pg.GraphicsObject):
    """
    The band under t_step, one colour per binding term: a polygon per run of equal `bound`,
    in view (log10) coordinates, down to `bottom`. Paints from cached paths.
    """

    def __init__(self):
        super().__init__()
        self.paths = {}  # bound -> QPainterPath
        self.brushes = {}
        self._rect = QRectF()

    def set_data(self, xl, yl, bound, bottom):
        paths = {b: QPainterPath() for b in BOUNDS}
        n = len(xl)
        for i, j, b in ranges_of(bound):
            j = min(j + 1, n - 1)  # reach the next sample so the runs meet
            poly = QPainterPath()
            poly.moveTo(xl[i], bottom)
            for k in range(i, j + 1):
                poly.lineTo(xl[k], yl[k])
            poly.lineTo(xl[j], bottom)
            poly.lineTo(xl[i], bottom)  # closed by hand: pyqtgraph's SVG export cannot parse a "Z"
            paths[b].addPath(poly)
        self.prepareGeometryChange()
        self.paths = paths
        self._rect = QRectF(float(xl[0]), float(bottom), float(xl[-1] - xl[0]), float(np.nanmax(yl) - bottom))
        self.update()

    def set_brushes(self, brushes):
        self.brushes = brushes
        self.update()

    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        return None  # the view's range is set explicitly; the band follows it

    def boundingRect(self):
        return self._rect

    def paint(self, p, *args):
        p.setPen(Qt.NoPen)
        for b, path in self.paths.items():
            if b in self.brushes:
                p.setBrush(self.brushes[b])
                p.drawPath(path)


class ClippedTitle(pg.LabelItem):
    """A plot title that asks for its text's height but no width: a long title is cut, never widens the plot."""

    def setText(self, text, **args):
        super().setText(text, **args)
        self.setMinimumWidth(0)  # LabelItem asks for its text's width; this title gives it up
        self.updateGeometry()

    def sizeHint(self, which, constraint=QSizeF()):
        if which == Qt.MaximumSize:
            return QSizeF(-1, -1)
        return QSizeF(0, self.item.boundingRect().height() if self.text else 0)


class PlotStack(QStackedWidget):
    """
    Two plot widgets, stacked in a splitter (a tall view) or one tab each (a short one, such as
    a tab of the main window): a plot never gets squashed flat. `set_compact` moves them.
    """

    def __init__(self, top, bottom):
        super().__init__()
        self.top, self.bottom, self.compact = top, bottom, None
        self.splitter = QSplitter(Qt.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.tabs = QTabWidget(objectName="latencyPlotTabs")
        self.addWidget(self.splitter)
        self.addWidget(self.tabs)

    def set_compact(self, compact: bool) -> bool:
        """Tabs (True) or the splitter (False); returns whether anything moved."""
        if compact == self.compact:
            return False
        self.compact = compact
        if compact:
            self.tabs.addTab(self.top, "")
            self.tabs.addTab(self.bottom, "")
            self.setCurrentWidget(self.tabs)
        else:
            self.tabs.clear()
            self.splitter.addWidget(self.top)
            self.splitter.addWidget(self.bottom)
            self.top.show()  # the tab widget leaves its pages hidden, and a splitter keeps a hidden widget at 0 px
            self.bottom.show()
            self.splitter.setSizes([3000, 2000])  # 3 : 2 again, not the sizes the plots had as tabs
            self.splitter.setStretchFactor(0, 3)
            self.splitter.setStretchFactor(1, 2)
            self.setCurrentWidget(self.splitter)
        return True


def plot_widget():
    """(GraphicsLayoutWidget, legend, title, plot): the title on top, then the legend, then a log-log plot."""
    w = pg.GraphicsLayoutWidget()
    w.ci.setContentsMargins(4, 4, 12, 4)
    title = ClippedTitle()
    w.addItem(title, row=0, col=0)
    legend = pg.LegendItem(colCount=4)
    w.addItem(legend, row=1, col=0)
    plot = w.addPlot(row=2, col=0)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.setLogMode(x=True, y=True)
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.getViewBox().setMouseEnabled(x=True, y=True)
    return w, legend, title, plot


def legend_sample(pen=None, brush=None, symbol=None):
    """A PlotDataItem that is never added to a plot: only what the legend draws for it."""
    if symbol is not None:
        return pg.PlotDataItem([0], [0], pen=None, symbol=symbol, symbolBrush=brush, symbolPen=pen, symbolSize=16)
    if brush is not None:
        return pg.BarGraphItem(x=[0], height=[1], width=1, brush=brush, pen=pg.mkPen(None))
    return pg.PlotDataItem([0, 1], [0, 0], pen=pen)


def set_range(plot, n_max, lo, hi):
    """x from n = 1 to n_max, y over whole decades [lo, hi], padded so the end ticks keep their labels."""
    x1 = math.log10(n_max)
    x0, x1 = -0.05 * x1, x1 * 1.05
    pad = max(0.12, 0.05 * (hi - lo))
    y0, y1 = lo - pad, hi + pad
    vb = plot.getViewBox()
    vb.setLimits(xMin=x0, xMax=x1, yMin=y0, yMax=y1)
    vb.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
    return y0, y1


def tick_spec(plot, n_max, lo, hi, scale=None):
    """
    The ticks for a plot of this width: powers of two on x (every 2nd or 4th labelled when they
    would crowd), decades on y. Returns (key, x ticks, y ticks); the key changes when they do.
    """
    vb = plot.getViewBox()
    x0, x1 = vb.viewRange()[0]
    px_per_octave = vb.width() / max(x1 - x0, 1e-9) * math.log10(2)
    scale = theme.scale() if scale is None else scale
    stride = next((s for s in (1, 2, 4) if s * px_per_octave >= 52 * scale), 8)
    ks = range(int(math.log2(n_max)) + 1)
    labelled = [(math.log10(2 ** k), str(2 ** k)) for k in ks if k % stride == 0]
    x_ticks = [labelled, [(math.log10(2 ** k), "") for k in ks if k % stride]]
    major = [(float(d), decade_label(d)) for d in range(int(lo), int(hi) + 1)]
    minor = [(d + math.log10(m), "") for d in range(int(lo), int(hi)) for m in (2, 5)]
    return (lo, hi, n_max, stride), x_ticks, [major, minor]


def fit_text(candidates, font, px_size, room) -> tuple[str, int]:
    """
    (text, pixel size): the first of `candidates` (longest first) whose width in `font` at px_size
    fits `room` pixels; if none does, the last one at a smaller size, down to 70 %.
    """
    font.setPixelSize(px_size)
    for text in candidates:
        if QFontMetricsF(font).horizontalAdvance(text) <= room:
            return text, px_size
    size = px_size
    while size > 0.7 * px_size and QFontMetricsF(font).horizontalAdvance(text) > room:
        size -= 1
        font.setPixelSize(size)
    return text, size


def text_rect(txt, px):
    """A TextItem's rectangle in view coordinates (x0, y0, x1, y1), from its anchor and size on screen."""
    br = txt.textItem.boundingRect()
    w, h = br.width() * px[0], br.height() * px[1]
    pos, (ax, ay) = txt.pos(), (txt.anchor.x(), txt.anchor.y())
    x0, y1 = pos.x() - ax * w, pos.y() + ay * h
    return (x0, y1 - h, x0 + w, y1)


def set_axis_label(ax, text, style):
    """An axis title, centred again: pyqtgraph centres it only on a resize, so a new text kept the old spot."""
    ax.setLabel(text, **style)
    ax.resizeEvent()
