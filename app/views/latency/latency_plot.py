"""
The decode-step plot's items: the four curves, the band coloured by the binding term, the veil
over the n whose weights and KV do not fit in HBM, the KV-replication and communication markers,
the published points with our estimate beside each, the best-n dot and the crosshair. Created
once and added to a pyqtgraph PlotItem; the view sets their data, this styles them and places
the labels so they clear each other and the curves.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainterPath

from simcore import cost_model

from simcore.llm_math import MODELS

from . import latency_texts as texts
from ... import theme
from .latency_items import BoundBand, text_rect
from ...core.latency_model import BOUND_TERM, BOUNDS, TERM_COLOR, TERMS, first_n, fits_hbm, node_size, overlap

# where a published point's label may go: (0 right / 1 left, 1 above / 0 below, distance in gaps), nearest first
LABEL_PLACES = [(a, b, lift) for lift in (1, 3, 6) for a, b in ((0, 1), (1, 1), (0, 0), (1, 0))]
BAND_ALPHA = 60
# the overlapped t_step: Okabe–Ito bluish green, dashed (apart from t_step's text colour and the three terms'
# blue, orange and reddish purple)
OVERLAP_HEX = "#009E73"


def term_color(t) -> QColor:
    return QColor(theme.palette().device_colors[TERM_COLOR[t]])


def band_brush(b) -> QBrush:
    c = term_color(BOUND_TERM[b])
    c.setAlpha(BAND_ALPHA)
    return QBrush(c)


class XSpan(pg.GraphicsObject):
    """
    A veil over x in [x0, x1] and the whole visible y range, cut to the view's x range: it never
    reaches past the plot area, on screen or in an SVG export. Its path is closed by hand (no
    "Z", which pyqtgraph 0.14's SVG export cannot parse).
    """

    def __init__(self):
        super().__init__()
        self.span = (0.0, 0.0)
        self.brush = QBrush()
        self._rect = QRectF()

    def set_span(self, x0, x1):
        self.span = (float(x0), float(x1))
        self._fit()

    def set_brush(self, brush):
        self.brush = brush
        self.update()

    def viewRangeChanged(self):
        self._fit()

    def _fit(self):
        vb = self.getViewBox()
        if not isinstance(vb, pg.ViewBox):  # not in a plot yet
            return
        (vx0, vx1), (vy0, vy1) = vb.viewRange()  # the range just set (viewRect() lags until the next paint)
        x0, x1 = max(self.span[0], vx0), min(self.span[1], vx1)
        self.prepareGeometryChange()
        self._rect = QRectF(x0, vy0, max(x1 - x0, 0.0), vy1 - vy0)
        self.update()

    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        return None

    def boundingRect(self):
        return self._rect

    def paint(self, p, *args):
        r = self._rect
        if r.width() <= 0:
            return
        path = QPainterPath()
        path.moveTo(r.left(), r.top())
        for x, y in ((r.right(), r.top()), (r.right(), r.bottom()), (r.left(), r.bottom()), (r.left(), r.top())):
            path.lineTo(x, y)
        p.setPen(Qt.NoPen)
        p.setBrush(self.brush)
        p.drawPath(path)


class DecodeItems:
    """The decode-step plot's graphics items, added to `plot` once (attributes named as drawn)."""

    def __init__(self, plot):
        self.plot = plot
        self.band = BoundBand()
        self.band.setZValue(-10)
        plot.addItem(self.band)
        self.hbm = XSpan()
        self.hbm.setZValue(-5)
        plot.addItem(self.hbm, ignoreBounds=True)
        self.curves = {t: pg.PlotDataItem(name=t) for t in TERMS}
        for t in ("t_math", "t_mem", "t_comm", "t_step"):  # t_step drawn last: on top
            plot.addItem(self.curves[t])
        # t_step with the all-reduces overlapped (collective matmul): dashed, beside the plain t_step
        self.overlap = pg.PlotDataItem(name="t_step_overlap")
        self.overlap.setVisible(False)
        plot.addItem(self.overlap)
        self.kv_line = pg.InfiniteLine(angle=90, movable=False)
        self.comm_line = pg.InfiniteLine(angle=90, movable=False)
        self.kv_text = pg.TextItem(anchor=(1, 0))
        self.comm_text = pg.TextItem(anchor=(0, 0))
        self.published = pg.ScatterPlotItem(hoverable=True, tip=lambda x, y, data: data, size=22)
        self.estimates = pg.ScatterPlotItem(hoverable=True, tip=lambda x, y, data: data, size=18, symbol="x")
        self.ref_links = pg.PlotCurveItem()  # dotted segment from our estimate to the published figure
        self.ref_leaders = pg.PlotCurveItem()  # from a published point to its label when that sits away
        self.ref_texts = [pg.TextItem(anchor=(0, 1)) for _ in cost_model.REFERENCE_POINTS]
        self.best_dot = pg.ScatterPlotItem(hoverable=True, tip=lambda x, y, data: data, size=20, symbol="o")
        # the n tensor parallelism can use: rings on t_step; past the largest one the curves are veiled
        self.valid_dots = pg.ScatterPlotItem(hoverable=True, tip=lambda x, y, data: data, size=12, symbol="o")
        self.no_tp = XSpan()
        self.no_tp_text = pg.TextItem(anchor=(0, 1))
        self.cross = pg.InfiniteLine(angle=90, movable=False)
        # on a multi-node machine (topology_presets): n = chips per node, past which traffic leaves NVLink
        self.node_line = pg.InfiniteLine(angle=90, movable=False)
        self.node_text = pg.TextItem(anchor=(0, 0))
        self.node_line.setVisible(False)
        self.node_text.setVisible(False)
        for it in (self.node_line, self.node_text,self.kv_line, self.comm_line, self.kv_text, self.comm_text, self.ref_links, self.ref_leaders,
                   self.published, self.estimates, self.best_dot, *self.ref_texts, self.cross, self.valid_dots,
                   self.no_tp, self.no_tp_text):
            plot.addItem(it, ignoreBounds=True)
        for z, items in ((30, [self.no_tp]), (40, [self.cross]), (60, [self.kv_line, self.comm_line, self.node_line]),
                         (70, [self.kv_text, self.comm_text, self.no_tp_text, self.node_text, *self.ref_texts]),
                         (75, [self.valid_dots]), (80, [self.published, self.estimates, self.best_dot])):
            for it in items:
                it.setZValue(z)

    def apply_theme(self, scale: float | None = None):
        """Pens and label fonts at text scale `scale` (None: the theme's; presenting: the view's plot_scale)."""
        self.scale = s = theme.scale() if scale is None else scale
        pal = theme.palette()
        self.curves["t_step"].setPen(pg.mkPen(pal.text, width=6.0 * s))
        self.overlap.setPen(pg.mkPen(OVERLAP_HEX, width=5.0 * s, style=Qt.DashLine))
        for t in ("t_math", "t_mem", "t_comm"):
            self.curves[t].setPen(pg.mkPen(term_color(t), width=4.0 * s))
        self.band.set_brushes({b: band_brush(b) for b in BOUNDS})
        self.hbm.set_brush(self.hbm_brush())
        self.no_tp.set_brush(self.no_tp_brush())
        for ln in (self.kv_line, self.comm_line):
            ln.setPen(pg.mkPen(pal.text, width=2.5 * s, style=Qt.DashLine))
        veil = QColor(pal.background)
        veil.setAlpha(200)  # labels stay readable over the band without hiding the curves under them
        self.node_line.setPen(pg.mkPen(pal.text, width=3.0 * s, style=Qt.DashDotLine))
        for txt in (self.kv_text, self.comm_text, self.no_tp_text, self.node_text, *self.ref_texts):
            f = theme.font("body", bold=True)
            f.setPixelSize(max(6, round(theme.FONT_PX["body"] * s)))
            txt.setFont(f)
            txt.setColor(pal.text)
            txt.fill = pg.mkBrush(veil)  # TextItem's fill (its constructor argument) has no setter
        self.ref_links.setPen(pg.mkPen(pal.text, width=2 * s, style=Qt.DotLine))
        self.ref_leaders.setPen(pg.mkPen(pal.text, width=1.5 * s))

    @staticmethod
    def hbm_brush() -> QBrush:
        grey = QColor(theme.palette().text_muted)
        grey.setAlpha(90)  # a solid veil, not a hatch: SVG viewers draw Qt's pattern brushes as smudges
        return QBrush(grey)

    def set_published(self, refs, tips, est_tips, labels):
        """The published points (★ measured, ◆ worked example), our estimate (✕) beside each, the dotted
        link between them and their labels. refs: [(ReferencePoint, our seconds)]."""
        pal = theme.palette()
        spots, est, link_x, link_y = [], [], [], []
        for txt in self.ref_texts:
            txt.setVisible(False)
        for (ref, ours), tip, est_tip, label, txt in zip(refs, tips, est_tips, labels, self.ref_texts):
            x, y, ye = math.log10(ref.n), math.log10(ref.seconds * 1e3), math.log10(ours * 1e3)
            measured = ref.kind == "measurement"
            spots.append({"pos": (x, y), "data": tip, "symbol": "star" if measured else "d",
                          "brush": pg.mkBrush(pal.text if measured else pal.background),
                          "pen": pg.mkPen(pal.text, width=3)})
            est.append({"pos": (x, ye), "data": est_tip, "brush": pg.mkBrush(pal.text),
                        "pen": pg.mkPen(pal.text, width=3)})
            link_x += [x, x]
            link_y += [ye, y]
            txt.setText(label)
            txt.setVisible(True)
        self.published.setData(spots)
        self.estimates.setData(est)
        self.ref_links.setData(np.array(link_x), np.array(link_y), connect="pairs")

    @staticmethod
    def no_tp_brush() -> QBrush:
        veil = QColor(theme.palette().background)
        veil.setAlpha(185)  # washes the curves out where tensor parallelism cannot go; they stay faintly visible
        return QBrush(veil)

    def set_valid(self, ns, t_step_ms, tips, n_max):
        """Rings at the valid degrees `ns` on t_step (ms); the veil from just past the largest to n_max."""
        pal = theme.palette()
        self.valid_dots.setData(x=np.log10(ns), y=np.log10(t_step_ms), data=tips, brush=pg.mkBrush(pal.background),
                                pen=pg.mkPen(pal.text, width=2.5 * getattr(self, "scale", theme.scale())))
        last = int(ns[-1])
        self.no_tp.setVisible(last < n_max)
        self.no_tp_text.setVisible(last < n_max)
        self.no_tp.set_span(math.log10(last + 0.5), math.log10(n_max) + 1.0)

    def set_markers(self, p: dict, sweep, valid, yrange, short: bool) -> tuple:
        """
        The vertical markers for parameters `p` and their `sweep`: where KV replication starts (n > G),
        where communication overtakes max(t_math, t_mem) among the `valid` tensor-parallel degrees, the
        veil over the n that do not fit in HBM, the rings at the valid degrees and the node boundary;
        labels at the top of `yrange` (log10 ms), short ones when `short`. Returns (the n where
        communication dominates, the first n that fits in HBM), None where there is none.
        """
        ns = sweep["n"]
        lo, hi = yrange
        top = hi - 0.02 * (hi - lo)
        G = MODELS[p["model"]].n_kv_heads
        self.kv_line.setVisible(G <= p["n_max"])
        self.kv_text.setVisible(G <= p["n_max"])
        self.kv_line.setValue(math.log10(G))
        self.kv_text.setText(texts.kv_label(G, short))
        self.kv_text.setAnchor((1, 0) if G > 1 else (0, 0))
        self.kv_text.setPos(math.log10(G), top)
        ok = np.isin(ns, valid)  # the markers speak of degrees tensor parallelism can use
        cross_n = first_n(ns, ok & (sweep["t_comm"] > np.maximum(sweep["t_math"], sweep["t_mem"])))
        has = cross_n is not None
        self.comm_line.setVisible(has)
        self.comm_text.setVisible(has)
        if has:
            x = math.log10(cross_n)
            self.comm_line.setValue(x)
            self.comm_text.setText(texts.comm_label(cross_n, short))
            self.comm_text.setPos(x, top)  # moved down a row by place_labels if it meets the KV label
        fit = first_n(ns, ok & fits_hbm(p, sweep))
        before = max([v for v in valid if v < (fit or 0)], default=1)  # the valid degree before it
        unfit_hi = math.log10(p["n_max"]) + 1 if fit is None else math.log10(math.sqrt(before * fit))
        self.hbm.setVisible(fit is None or fit > 1)
        self.hbm.set_span(-1.0, unfit_hi)
        self._set_valid_markers(p, sweep, valid, short)
        self._set_node_boundary(p, short)
        return cross_n, fit

    def _set_valid_markers(self, p, sweep, valid, short):
        H = MODELS[p["model"]].n_heads
        ns = np.array(valid)
        t = sweep["t_step"][ns - 1] * 1e3
        self.set_valid(ns, t, [texts.valid_tip(n, H // n, ms) for n, ms in zip(ns, t)], p["n_max"])
        self.no_tp_text.setText(texts.no_tp_label(ns[-1], H, short))

    def _set_node_boundary(self, p, short):
        """The dashed line at n = chips per node on a multi-node machine, labelled; hidden otherwise."""
        per_node = node_size(p)
        shown = per_node is not None and per_node < p["n_max"]
        self.node_line.setVisible(shown)
        self.node_text.setVisible(shown)
        if shown:
            self.node_line.setValue(math.log10(per_node))
            self.node_text.setText(texts.node_label(per_node, short))

    def place_labels(self, sweep, refs, G):
        """
        Put the marker labels at the top, the KV one left of its line unless that leaves the plot,
        the communication one a row lower if they would meet; then each published point's label
        beside it: of a few places around the point, the one that stays inside the plot, clears
        the other labels and crosses the fewest curve samples.
        """
        vb = self.plot.getViewBox()
        (vx0, vx1), (vy0, vy1) = vb.viewRange()
        if not (vb.width() > 0 and vb.height() > 0):
            return
        px = ((vx1 - vx0) / vb.width(), (vy1 - vy0) / vb.height())  # of the range just set (viewPixelSize lags)
        top = vy1 - 0.02 * (vy1 - vy0)
        self.no_tp_text.setPos(self.no_tp.span[0] + 6 * px[0], vy0 + 0.03 * (vy1 - vy0))
        if text_rect(self.no_tp_text, px)[2] > vx1:  # too near the right edge: end at the edge instead
            self.no_tp_text.setPos(vx1 - text_rect(self.no_tp_text, px)[2] + self.no_tp_text.pos().x(),
                                   self.no_tp_text.pos().y())
        self.kv_text.setAnchor((1, 0) if G > 1 else (0, 0))
        rings = list(zip(*self.valid_dots.getData())) if self.valid_dots.getData()[0] is not None else []

        def on_ring(r):  # a label's rectangle (8 px round it) over one of the markers' rings
            return any(r[0] - 8 * px[0] <= x <= r[2] and r[1] - 8 * px[1] <= y <= r[3] + 8 * px[1] for x, y in rings)

        r = text_rect(self.kv_text, px)
        if r[0] < vx0 or on_ring(r):
            self.kv_text.setAnchor((0, 0))  # left of its line leaves the plot or covers a ring: right of it
        self.comm_text.setAnchor((0, 0))
        self.comm_text.setPos(self.comm_line.value(), top)
        if text_rect(self.comm_text, px)[2] > vx1:  # right of its line would leave the plot: left of it
            self.comm_text.setAnchor((1, 0))
        kv_r = text_rect(self.kv_text, px)
        if self.kv_text.isVisible() and self.comm_text.isVisible() and overlap(kv_r, text_rect(self.comm_text, px)):
            # a row lower; but where that row meets the curve's rings (Chinese at 1280×720 and 2×: the
            # label sat over the n = 16 and 32 markers), the first row down either side of the line that
            # clears the rings, the KV label and the no-TP label
            x, h = self.comm_line.value(), kv_r[3] - kv_r[1]
            no_tp = text_rect(self.no_tp_text, px) if self.no_tp_text.isVisible() else None
            rows = [top - 1.2 * h * k for k in range(1, 1 + int((top - vy0) / (1.2 * h)))]
            for y, anchor in [(y, a) for y in rows for a in ((0, 0), (1, 0))]:
                self.comm_text.setAnchor(anchor)
                self.comm_text.setPos(x, y)
                c = text_rect(self.comm_text, px)
                if (vx0 <= c[0] and c[2] <= vx1 and c[1] >= vy0 and not on_ring(c) and not overlap(kv_r, c)
                        and not (no_tp and overlap(no_tp, c))):
                    break
            else:
                self.comm_text.setAnchor((0, 0))
                self.comm_text.setPos(x, top - 1.2 * h)
        # the node-boundary label low in the plot, above the no-TP label, on the side of its line with more room;
        # wrapped to that room when it is longer
        row = kv_r[3] - kv_r[1]
        x = self.node_line.value()
        right = x - vx0 < vx1 - x
        room = ((vx1 - x) if right else (x - vx0)) / px[0] - 12
        self.node_text.setTextWidth(-1)
        if self.node_text.textItem.boundingRect().width() > room > 0:
            self.node_text.setTextWidth(room)
        self.node_text.setAnchor((0 if right else 1, 1))
        self.node_text.setPos(x + (4 if right else -4) * px[0], vy0 + 0.03 * (vy1 - vy0) + 1.4 * row)
        if not refs:
            self.ref_leaders.setData([], [])
            return
        # every curve resampled evenly across the screen, so a hit counts on-screen length, not samples
        gx = np.linspace(vx0, vx1, 800)
        lx = np.log10(sweep["n"])
        lines = []
        for t in TERMS:
            ok = sweep[t] > 0
            lines.append((gx, np.interp(gx, lx[ok], np.log10(sweep[t][ok] * 1e3), left=np.nan, right=np.nan)))
        taken = [text_rect(t, px) for t in (self.kv_text, self.comm_text, self.no_tp_text, self.node_text)
                 if t.isVisible()]
        leaders_x, leaders_y = [], []
        walls = [ln.value() for ln in (self.kv_line, self.comm_line, self.node_line) if ln.isVisible()]
        gap_x, gap_y = 14 * px[0], 10 * px[1]
        for (ref, _ours), txt in zip(refs, self.ref_texts):
            x, y = math.log10(ref.n), math.log10(ref.seconds * 1e3)
            br = txt.textItem.boundingRect()
            w, h = br.width() * px[0], br.height() * px[1]
            best = None
            for k, (ax, ay, lift) in enumerate(LABEL_PLACES):
                x0 = x + gap_x if ax == 0 else x - gap_x - w
                y0 = y + lift * gap_y if ay == 1 else y - lift * gap_y - h
                rect = (x0, y0, x0 + w, y0 + h)
                cost = sum(int(np.count_nonzero((cx >= x0) & (cx <= x0 + w) & (cy >= y0) & (cy <= y0 + h)))
                           for cx, cy in lines)
                cost += 10_000 * (x0 < vx0 or x0 + w > vx1 or y0 < vy0 or y0 + h > vy1)
                cost += 1_000 * sum(overlap(rect, r) for r in taken)
                cost += 200 * sum(x0 < v < x0 + w for v in walls)  # the KV and comm marker lines
                cost += k  # prefer the nearer, earlier places
                if best is None or cost < best[0]:
                    best = (cost, ax, ay, lift, rect)
            _cost, ax, ay, lift, rect = best
            txt.setAnchor((ax, ay))
            txt.setPos(rect[2] if ax else rect[0], rect[1] if ay else rect[3])
            taken.append(rect)
            if lift > 1:  # a label away from its point gets a leader line to the nearest corner
                leaders_x += [x, rect[2] if ax else rect[0]]
                leaders_y += [y, rect[1] if ay else rect[3]]
        self.ref_leaders.setData(np.array(leaders_x), np.array(leaders_y), connect="pairs")
