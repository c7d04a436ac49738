"""The weight-slices view's layout: one cell size for the full matrix and every slice, and where
each title, slice, label, badge, outline and the colour bar goes for the canvas' size.

`WeightsLayout` is a part of WeightsView (its base class) kept apart so the view reads as building
and texts: `_layout` tries the text sizes of TEXT_FITS and the modes and label options of
`_choose_plan`, each measured by `_plan` (the largest cell that leaves room for the texts, cells
at most ASPECT_MAX times taller than wide or wider than tall); `_place` then insets the outlines
and fits the badges. It reads the view's items and measures their texts, so it is not yet a pure
function of (size, text sizes) like the ring view's ring_layout.
"""

from __future__ import annotations

import html as _html

from PySide6.QtCore import QCoreApplication, QPointF, QRectF
from PySide6.QtGui import QFontMetricsF

from ... import theme
from .weights_items import _badge_html, _font

VECTOR_TALL = 8  # a norm's single row is drawn up to 8× taller than wide, or its outline would hide it
ASPECT_MAX = 2.0  # a cell may be drawn up to 2× taller than wide or wider than tall (every heatmap alike)
TEXT_FITS = (1.0, 0.85, 0.7, 0.6, 0.5, 0.4)  # text sizes tried in a small canvas, relative to the theme's


def _tr(text: str) -> str:
    return QCoreApplication.translate("WeightsView", text)


class WeightsLayout:
    """WeightsView's layout and placement (see the module docstring)."""

    def _label_html(self, d: int, long_badge: bool, role: bool) -> str:
        """Slice d's label: its device's coloured badge, then (rows: on the same line) which heads / units."""
        name = _tr("GPU {d}").format(d=d) if long_badge else str(d)
        out = _badge_html(_html.escape(name), self.colors[d])
        if role and self._what(d):
            out += "&nbsp;" + " ".join(_html.escape(s) for s in self._what(d).split("\n"))
        return out

    def _role_html(self, d: int, one_line: bool = False) -> str:
        """Which heads / groups / units slice d is, drawn under its badge (and its run's: KV sharing)."""
        text = (" " if one_line else "<br>").join(_html.escape(s) for s in self._what(d).split("\n"))
        return f"<b>{text}</b>" if self.slices[d].replicated and self.slices[d].axis is not None else text

    def _modes(self) -> tuple[str, ...]:
        """'rows': slices stacked beside the full matrix; 'cols': in a row beside it; 'below': in a row under it."""
        return ("rows",) if self.stacked else ("cols", "below")

    def _label_options(self) -> list[tuple[bool, bool]]:
        """(long badge, role shown) in order of preference: the first that costs little picture wins."""
        if self.slices[0].axis is None or not any(self._what(d) for d in range(self.n)):
            return [(True, False), (False, False)]
        return [(True, True), (False, True), (True, False), (False, False)]

    def _grid_columns(self, mode: str) -> tuple[int, ...]:
        """Columns of the stacked slices, in order of preference: one stack, else a compact grid (eight
        norm vectors at 2.5× in a small tab: one stack left no room for the axes line even at 40 % text)."""
        if mode != "rows":
            return (1,)
        return (1, 2) if self.n > 2 else (1,)

    def _plan(self, W: float, H: float, mode: str, long_badge: bool, role: bool, k: int = 1) -> dict:
        """One cell size (cw × ch pixels) for the full matrix and every slice, and where everything goes;
        stacked slices in `k` columns of ceil(n / k) (k = 1: one stack)."""
        tf = self._text_factor
        s = theme.scale() * tf  # gaps shrink with the text
        n, (R, C) = self.n, self.shape
        r_s, c_s = (max(a.image.shape[i] for a in self.slice_images) for i in (0, 1))
        m, gap, g_col, g_row = 10 * s, 28 * s, 10 * s, 10 * s
        pad, gl, vg = 4 * s, 10 * s, 6 * s
        gap_c, cbar_w = 18 * s, self._cbar_width()
        inline = mode == "rows"
        per_col = -(-n // k)  # slices in one column of the stacked grid
        replicated_all = self.slices[0].axis is None
        lane = theme.px("device") * tf * 1.6  # one lane of badges
        header_h = lane if replicated_all else (0 if self.split_rows else self.depth * lane)
        fm = QFontMetricsF(_font("device", True, tf))
        side_w = self.depth * (fm.horizontalAdvance(_tr("GPU {d}").format(d=n - 1) if long_badge
                                                    else str(n - 1)) + 22 * s) if self.split_rows else 0
        bw = bh = 0.0
        for d, label in enumerate(self.slice_labels):
            label.set(self._label_html(d, long_badge, role and inline), factor=tf)
            w = label.natural_width() + 2 * s
            bw, bh = max(bw, w), max(bh, label.height_at(w))
        rw = rh = 0.0
        for (a, b), item in zip(self.role_runs, self.role_labels):
            item.setVisible(role and not inline)
            if role and not inline:
                item.set(self._role_html(a), factor=tf)
                w = item.natural_width() + 2 * s
                rw = max(rw, (w - (b - a - 1) * g_col) / (b - a))  # a run shares its columns' width
                rh = max(rh, item.height_at(w))
        lw, lh = max(bw, rw), bh + (rh + 2 * s if rh else 0)

        def widths(cw):
            full_w = side_w + C * cw
            colw = max(c_s * cw + 2 * pad, lw)
            unit = c_s * cw + 2 * pad + gl + lw  # a stacked slice and its label
            right_w = (k * unit + (k - 1) * g_col) if inline else n * colw + (n - 1) * g_col
            body = max(full_w, right_w) if mode == "below" else full_w + gap + right_w
            return full_w, right_w, colw, body + gap_c + cbar_w

        def stack_h(ch):  # stacked slices: a label is never taller than its slice's pitch
            return (per_col - 1) * max(r_s * ch + g_row, lh + 2 * s) + max(r_s * ch, lh)  # the end labels may overhang

        def largest(fits):  # the largest x in (0, 400] with fits(x)
            lo, hi = 0.0, 400.0
            for _ in range(40):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if fits(mid) else (lo, mid)
            return max(lo, 0.05)

        cw_max = largest(lambda cw: widths(cw)[3] <= W - 2 * m)
        cw = cw_max
        for _ in range(4):  # text heights depend on widths, widths on the cell: settle in a few rounds
            full_w, right_w, colw, total = widths(cw)
            if mode == "below":
                text_l = text_r = total - gap_c - cbar_w  # the colour bar stands beside both titles' rows
                text_all = total
                t_full, t_grid = self.full_title.height_at(text_l), self.grid_title.height_at(text_r)
                axes_h = self.axes_label.height_at(total)
                fixed = t_full + vg + header_h + 3 * vg + t_grid + vg + vg + lh + vg + axes_h
                ch_max = max((H - 2 * m - fixed) / (R + r_s), 0.05)
            else:
                # the titles share the top: the full matrix's may be wider than the matrix (never 5 lines)
                text_l = min(max(full_w + gap - 8 * s, 0.38 * total), 0.62 * total)
                text_r, text_all = total - text_l - 8 * s, total
                top = max(self.full_title.height_at(text_l), self.grid_title.height_at(text_r))
                axes_h = self.axes_label.height_at(text_all)
                bottom = (0 if inline else lh + vg) + axes_h
                room = H - 2 * m - top - vg - header_h - vg - bottom
                ch_max = (largest(lambda ch, room=room: max(stack_h(ch), R * ch) <= room) if inline else
                          max(room / R, 0.05))
            if R == 1:  # a norm's vector: one row, drawn up to VECTOR_TALL × taller than a cell is wide
                ch, cw = min(ch_max, VECTOR_TALL * cw_max), cw_max
            else:
                ch = min(ch_max, ASPECT_MAX * cw)
                cw = min(cw_max, ASPECT_MAX * ch)
        full_w, right_w, colw, total = widths(cw)
        p = dict(mode=mode, long_badge=long_badge, role=role, k=k, cw=cw, ch=ch, cell=cw * ch, lw=lw, lh=lh, bh=bh,
                 factor=tf)
        # where everything goes (canvas pixels)
        put = p["put"] = {}
        if mode == "below":
            used_h = (t_full + vg + header_h + R * ch + 3 * vg + t_grid + vg + r_s * ch + vg + lh + vg + axes_h)
        else:
            band = max(stack_h(ch), R * ch) if inline else R * ch
            used_h = top + vg + header_h + band + vg + bottom
        p["fits"] = used_h <= H - 2 * m + 0.5 and total <= W - 2 * m + 0.5
        x0 = m + max(0.0, (W - 2 * m - total) / 2)
        y0 = m + max(0.0, (H - 2 * m - used_h) / 2)
        body_w = total - gap_c - cbar_w
        put["full_title"] = (x0, y0, text_l)
        if mode == "below":
            x_full = x0 + (body_w - full_w) / 2 + side_w
            y_full = y0 + t_full + vg + header_h
            y_grid = y_full + R * ch + 3 * vg
            put["grid_title"] = (x0, y_grid, text_r)
            xs, y_slices = x0 + (body_w - right_w) / 2, y_grid + t_grid + vg
            band_top, band = y_full, y_slices + r_s * ch - y_full
        else:
            x_full = x0 + side_w
            y_slices = y0 + top + vg + header_h
            y_full = y_slices + (band - R * ch) / 2
            xs = x0 + full_w + gap
            put["grid_title"] = (x0 + text_l + 8 * s, y0, text_r)
            band_top = y_slices
        put["matrix"] = QRectF(x_full, y_full, C * cw, R * ch)
        header_w = (xs + right_w - x_full) if replicated_all and mode == "cols" else C * cw
        put["header"] = QRectF(x_full, y_full - header_h, header_w, header_h)
        put["side"] = QRectF(x_full - side_w, y_full, side_w, R * ch)
        put["axes"] = (x0, y0 + used_h - axes_h, text_all)
        put["slices"], put["labels"], put["roles"] = [], [], []
        for d, label in enumerate(self.slice_labels):
            rows, cols = self.slice_images[d].image.shape
            iw, ih = cols * cw, rows * ch
            if inline:
                over = max(0.0, (lh - r_s * ch) / 2)  # a label taller than its slice: room above the first
                j, i = divmod(d, per_col)  # column j of the grid, row i in it
                xj = xs + j * (c_s * cw + 2 * pad + gl + lw + g_col)
                y = y_slices + over + i * max(r_s * ch + g_row, lh + 2 * s)
                put["slices"].append(QRectF(xj + pad, y, iw, ih))
                put["labels"].append((xj + iw + 2 * pad + gl, y + ih / 2 - label.height_at(lw) / 2, lw))
            else:
                x = xs + d * (colw + g_col)
                put["slices"].append(QRectF(x + (colw - iw) / 2, y_slices, iw, ih))
                put["labels"].append((x, y_slices + ih + vg, colw))
        for a, b in self.role_runs:
            put["roles"].append((xs + a * (colw + g_col), y_slices + r_s * ch + vg + bh + 2 * s,
                                 (b - a) * colw + (b - a - 1) * g_col))
        cb_h = min(max(band, 160 * s), used_h - (band_top - y0) - axes_h - vg)  # a short band: still legible
        put["cbar"] = QRectF(x0 + body_w + gap_c, band_top, cbar_w, cb_h)
        return p

    def _layout(self):
        """Place everything for the canvas' size: the largest cells that leave room for the texts."""
        if not self._applicable or not self.slice_boxes:
            return
        W, H = self.canvas.width(), self.canvas.height()
        s = theme.scale()  # a short tab: every line counts
        title_role = "caption" if H >= 440 * s else "body" if H >= 300 * s else "small"
        # the texts at the theme's size first; smaller only where they would not leave the pictures
        # their room (a small tab at 2.5×: eight stacked labels ran into the axes line)
        for f in TEXT_FITS:
            self._text_factor = f
            for item in (self.full_title, self.grid_title):
                item.setFont(_font(title_role, False, f))
            self.axes_label.setFont(_font("body", False, f))
            p = self._choose_plan(W, H)
            if p["fits"]:
                break
        self._plan(W, H, p["mode"], p["long_badge"], p["role"], p["k"])  # its texts (measuring left the last option's)
        self.plan = p
        put, (R, C), pad = p["put"], self.shape, 4 * theme.scale()
        for item, key in ((self.full_title, "full_title"), (self.grid_title, "grid_title"), (self.axes_label, "axes")):
            x, y, w = put[key]
            item.setTextWidth(w)
            item.setPos(x, y)
        self._fit(self.matrix_box, put["matrix"], C, R, 0.0)
        self.header.setGeometry(put["header"])
        self.header.setVisible(put["header"].height() > 0)
        self.side.setGeometry(put["side"])
        self.side.setVisible(put["side"].width() > 0)
        for d, (vb, label) in enumerate(zip(self.slice_boxes, self.slice_labels)):
            rows, cols = self.slice_images[d].image.shape
            self._fit(vb, put["slices"][d], cols, rows, pad)
            x, y, w = put["labels"][d]
            label.setTextWidth(w)
            label.setPos(x, y)
        for (a, _b), item, (x, y, w) in zip(self.role_runs, self.role_labels, put["roles"]):
            if item.isVisible():  # "tokens 0–63" on one line when the column has the room
                item.set(self._role_html(a, one_line=True), factor=self._text_factor)
                if item.natural_width() > w:
                    item.set(self._role_html(a), factor=self._text_factor)
            item.setTextWidth(w)
            item.setPos(x, y)
        self.cbar.setGeometry(put["cbar"])
        # a short colour bar (a small tab at 2.5×): its ends and 0 only, or pyqtgraph's ticks overlap
        axis, (lo, hi) = self.cbar.getAxis("right"), self.levels
        short = put["cbar"].height() < 7 * QFontMetricsF(_font("body", False, self._text_factor)).height()
        axis.setTicks([[(lo, f"{lo:.2g}"), (0.0, "0"), (hi, f"{hi:.2g}")]] if short else None)
        self._place()

    def _choose_plan(self, W, H) -> dict:
        chosen = {}
        for mode in self._modes():
            first = None
            for k in self._grid_columns(mode):  # a grid only where one stack does not fit
                plans = [self._plan(W, H, mode, *opt, k=k) for opt in self._label_options()]
                first = first or plans
                if any(p["fits"] for p in plans):
                    break
            else:
                plans = first
            fitting = [p for p in plans if p["fits"]] or plans
            best = max(p["cell"] for p in fitting)
            chosen[mode] = next(p for p in fitting if p["cell"] >= 0.8 * best)  # text if it costs < 20 % of the picture
        p = chosen[self._modes()[0]]
        if "below" in chosen and chosen["below"]["cell"] >= 1.5 * p["cell"] and chosen["below"]["fits"] >= p["fits"]:
            p = chosen["below"]  # wide matrices (lm_head): slices under it
        return p

    @staticmethod
    def _fit(vb, rect: QRectF, cols: int, rows: int, pad: float):
        """Show cells [0, cols) × [0, rows) exactly in `rect` (pixels), with `pad` pixels of room around."""
        vb.setGeometry(rect.adjusted(-pad, -pad, pad, pad))
        px, py = pad * cols / max(rect.width(), 1e-6), pad * rows / max(rect.height(), 1e-6)
        vb.setRange(xRange=(-px, cols + px), yRange=(-py, rows + py), padding=0)

    def _cbar_width(self) -> float:
        tf = self._text_factor
        font = _font("body", False, tf)
        axis = self.cbar.getAxis("right")
        if getattr(self, "_cbar_px", None) != font.pixelSize():  # its ticks shrink with the text
            self._cbar_px = font.pixelSize()
            axis.setTickFont(font)
        fm = QFontMetricsF(font)
        axis_w = fm.horizontalAdvance("−0.00") + 14 * theme.scale() * tf
        axis.setWidth(axis_w)
        return 16 * theme.scale() * tf + axis_w + 4

    def _place(self):
        if not self._applicable or not self._outline_items:
            return
        sx, sy = self.matrix_box.viewPixelSize()
        if not (sx > 0 and sy > 0):
            return
        pen_w = theme.line("highlight") * 1.4
        step = pen_w + 4  # pixels between nested outlines
        per_device = self.outlines if self.slices[0].axis is not None else self.outlines[:1]
        for d, items in enumerate(per_device):
            for it in items:
                self._inset(it, pen_w / 2 + 1 + self.ranks[d] * step, sx, sy)
        # the halo sits exactly under its coloured outline; a region too thin for the pair to leave any of
        # its cells visible (a norm vector or one head of Wq in a small tab at 2.5×) is drawn without them
        # (its slice beside it has the device's outline and badge)
        for halo, col in zip(self._outline_items[0::2], self._outline_items[1::2]):
            halo.setRect(col.rect())
            halo.inset = col.inset
            r = col.region
            shown = min(r.width() / sx, r.height() / sy) >= 3 * (pen_w + 3)
            halo.setVisible(shown)
            col.setVisible(shown)
        # badges: beside the region they name, in the header (columns) or the side bar (rows), their
        # text shrunk with the rest (the lanes are laid out for it: a 2.5× badge had covered the matrix)
        font = _font("device", True, self._text_factor)
        fm = QFontMetricsF(font)
        for box, badge in self._badges:
            if box.width() <= 0 or box.height() <= 0:
                continue
            if badge.textItem.font().pixelSize() != font.pixelSize():
                badge.setFont(font)
            r = badge.region
            at = QPointF(r.left(), r.center().y()) if badge.device is None else r.center()
            centre = box.mapSceneToView(self.matrix_box.mapViewToScene(at))
            lane = (badge.rank + 0.5) / self.depth
            badge.setPos(lane, centre.y()) if self.split_rows else badge.setPos(centre.x(), lane)
            d = badge.device
            if d is None:  # "replicated on all n GPUs", else "replicated", else nothing: never past the header
                n = self.n
                texts = ([_tr("replicated on all {n} GPUs").format(n=n), _tr("replicated")] if n > 1
                         else [_tr("GPU 0 holds all of it")])
                room = box.width() * (1 - centre.x())  # the header's x range is [0, 1]
                badge.setText(next((t for t in texts if fm.horizontalAdvance(t) + 6 <= room), ""))
                continue
            room = r.height() / sy if self.split_rows else r.width() / sx
            long_text = _tr("GPU {d}").format(d=d)
            fits = fm.horizontalAdvance(long_text) + 14 < (self.side.width() / self.depth if self.split_rows
                                                           else room)
            badge.setText(long_text if fits else str(d))
            # a region narrower (rows: lower) than even its number: no badge rather than badges on top of
            # each other; its outline has the device's colour and the slice beside it its badge
            need = fm.height() if self.split_rows else fm.horizontalAdvance(str(d)) + 6
            badge.setVisible(fits or need <= room)

    @staticmethod
    def _inset(it, px, sx, sy):
        r = it.region
        ix = min(px * sx, 0.3 * r.width())
        iy = min(px * sy, 0.3 * r.height())
        it.inset = (ix, iy)
        it.setRect(r.adjusted(ix, iy, -ix, -iy))
