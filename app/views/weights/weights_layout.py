"""
Where everything in the weight-slices view goes: a pure function of (size, text scale, texts, shape).

`weights_layout(width, height, scale, texts, shape)` returns a `WeightsLayout` of rectangles in
canvas pixels — the two titles, the full matrix with its header (column badges) and side bar (row
badges), every device's slice and label, the role labels under shared columns, the colour bar and
the axes line — and which mode, label style and text size it chose. The view only applies them;
tests ask this function directly (no window) that nothing overlaps and everything is on the canvas.

One cell size (cw × ch pixels) is used for the full matrix and every slice, so a slice is drawn
exactly as large as the region it came from. `_plan` finds the largest cell that leaves room for
the texts (cells at most ASPECT_MAX times taller than wide or wider than tall) for one mode and
label style; `_choose` picks among the modes ('rows': slices stacked beside the full matrix, in one
or two columns; 'cols': in a row beside it; 'below': in a row under it) and the label styles (long
badge "GPU 3" or "3", with or without which heads / units); the texts shrink through TEXT_FITS until
the pictures keep their room.
"""

from __future__ import annotations

import html as _html
from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QTextDocument

from ... import theme
from .weights_items import badge_html, font_at

VECTOR_TALL = 8  # a norm's single row is drawn up to 8× taller than wide, or its outline would hide it
ASPECT_MAX = 2.0  # a cell may be drawn up to 2× taller than wide or wider than tall (every heatmap alike)
TEXT_FITS = (1.0, 0.85, 0.7, 0.6, 0.5, 0.4)  # text sizes tried in a small canvas, relative to the theme's
KEEP_CELL = 0.85  # larger text (Ctrl+=) may cost the heatmaps' cells at most 15 % of their area at 1×


# ---------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WeightsShape:
    """What the scenario and the chosen matrix decide about the picture."""

    shape: tuple  # the full matrix (rows, columns)
    slice_shapes: tuple  # per device, the (rows, columns) it holds
    axis: int | None  # the split axis: 1 columns, 0 rows, None replicated on every device
    depth: int = 1  # lanes of badges: devices sharing a region (KV groups) have nested outlines

    @property
    def n(self) -> int:
        return len(self.slice_shapes)

    @property
    def split_rows(self) -> bool:
        return self.axis == 0

    @property
    def stacked(self) -> bool:
        """Slices stacked beside the full matrix: a row split, or a replicated vector / wide matrix."""
        R, C = self.shape
        return self.split_rows or (self.axis is None and R < C)


@dataclass(frozen=True)
class WeightsTexts:
    """Every text the layout measures, already translated (the language enters here)."""

    full_title: str  # rich text
    grid_title: str  # rich text
    axes: str  # rich text
    gpu_names: tuple  # per device, its long badge ("GPU 3")
    roles: tuple  # per device, which heads / groups / units it holds (lines split by "\n"; "" for none)
    role_bold: tuple  # per device: its role is drawn bold (a KV group replicated on several GPUs)
    colors: tuple  # per device, its badge's QColor


def role_runs(roles) -> list[tuple[int, int]]:
    """Runs [a, b) of neighbouring devices with the same role (a KV group on several GPUs): one label each."""
    runs = []
    for d in range(len(roles)):
        if runs and roles[d] == roles[d - 1]:
            runs[-1] = (runs[-1][0], d + 1)
        else:
            runs.append((d, d + 1))
    return runs


def label_html(texts: WeightsTexts, d: int, long_badge: bool, role: bool) -> str:
    """Slice d's label: its device's coloured badge, then (rows: on the same line) which heads / units."""
    name = texts.gpu_names[d] if long_badge else str(d)
    out = badge_html(_html.escape(name), QColor(texts.colors[d]))
    if role and texts.roles[d]:
        out += "&nbsp;" + " ".join(_html.escape(s) for s in texts.roles[d].split("\n"))
    return out


def role_html(texts: WeightsTexts, d: int, one_line: bool = False) -> str:
    """Which heads / groups / units slice d is, drawn under its badge (and its run's: KV sharing)."""
    text = (" " if one_line else "<br>").join(_html.escape(s) for s in texts.roles[d].split("\n"))
    return f"<b>{text}</b>" if texts.role_bold[d] else text


# ---------------------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TextPlace:
    """A text's place: its box (canvas pixels; its width is the width it wraps at), rich text and font."""

    rect: QRectF
    html: str
    font: QFont


@dataclass(frozen=True)
class WeightsLayout:
    width: float
    height: float
    mode: str  # "rows", "cols" or "below" (see the module docstring)
    k: int  # columns of stacked slices
    long_badge: bool  # labels say "GPU 3" (else "3")
    role: bool  # which heads / units are named (beside a stacked slice, or under a run of columns)
    factor: float  # the text size used, relative to the theme's
    fits: bool  # False: even the smallest text left a picture too small (everything still placed)
    cell: tuple  # (cw, ch): one cell's pixels, in the full matrix and every slice
    full_title: TextPlace
    grid_title: TextPlace
    axes: TextPlace
    matrix: QRectF  # the full matrix's cells
    header: QRectF  # the column badges' lanes above it (height 0: none)
    side: QRectF  # the row badges' lanes left of it (width 0: none)
    slices: tuple  # per device, its slice's cells
    labels: tuple  # per device, its label (TextPlace)
    roles: tuple  # per role run (role_runs), its label; () when not shown
    cbar: QRectF  # the colour bar with its axis
    cbar_axis_w: float  # its tick axis' width
    cbar_short: bool  # too short for pyqtgraph's ticks: label its ends and 0 only

    def texts(self) -> list[tuple[str, QRectF]]:
        """(name, rect) of every text that is drawn."""
        out = [("full title", self.full_title.rect), ("grid title", self.grid_title.rect), ("axes", self.axes.rect)]
        out += [(f"label {d}", t.rect) for d, t in enumerate(self.labels)]
        return out + [(f"role {i}", t.rect) for i, t in enumerate(self.roles)]

    def pictures(self) -> list[tuple[str, QRectF]]:
        """(name, rect) of every heatmap and the colour bar."""
        return [("matrix", self.matrix), ("colour bar", self.cbar)] + [(f"slice {d}", r)
                                                                     for d, r in enumerate(self.slices)]


# ---------------------------------------------------------------------------------------
# Measuring rich text as the view's text items lay it out
# ---------------------------------------------------------------------------------------
class _Doc:
    """A text as the view's WrappingText lays it out (no margin): its width unwrapped, its height at a width."""

    def __init__(self, text_html: str, font: QFont, align=Qt.AlignLeft):
        self.doc = QTextDocument()
        self.doc.setDocumentMargin(0)
        opt = self.doc.defaultTextOption()
        opt.setAlignment(align)
        self.doc.setDefaultTextOption(opt)
        self.doc.setDefaultFont(font)
        self.doc.setHtml(text_html)
        self._heights = {}

    def natural_width(self) -> float:
        self.doc.setTextWidth(-1)
        return self.doc.idealWidth()

    def height_at(self, width: float) -> float:
        width = max(1.0, width)
        if width not in self._heights:
            self.doc.setTextWidth(width)
            self._heights[width] = self.doc.size().height()
        return self._heights[width]


class _Measure:
    """Documents reused across the plans of one layout (the same text is measured many times)."""

    def __init__(self):
        self._docs = {}

    def __call__(self, text_html: str, font: QFont, align=Qt.AlignLeft) -> _Doc:
        key = (text_html, font.key(), int(align))
        if key not in self._docs:
            self._docs[key] = _Doc(text_html, font, align)
        return self._docs[key]


# ---------------------------------------------------------------------------------------
# The layout
# ---------------------------------------------------------------------------------------
def weights_layout(width: float, height: float, scale: float, texts: WeightsTexts,
                   shape: WeightsShape) -> WeightsLayout:
    """
    The weight-slices picture at `width`×`height` canvas pixels and text scale `scale` (the theme's,
    Ctrl+= steps): the texts at the theme's size first, smaller only where they would not leave the
    pictures their room (a small tab at 2.5×: eight stacked labels ran into the axes line).
    """
    W, H = float(width), float(height)
    title_role = "caption" if H >= 440 * scale else "body" if H >= 300 * scale else "small"  # a short tab
    measure = _Measure()
    # above 1× the picture keeps its cells: at 2.5× the labels had all the room and the heatmaps
    # shrank to 10×20 px on a 1280×720 projector, so the text grows only as far as the cells allow
    ref = weights_layout(W, H, 1.0, texts, shape) if scale > 1.0 else None
    tried = []
    for f in _text_fits(scale):
        p = _choose(W, H, scale, f, title_role, texts, shape, measure)
        if p.fits and (ref is None or _cell(p) >= KEEP_CELL * _cell(ref)):
            return p
        tried.append(p)
    if ref is None:
        return p
    return max(tried, key=lambda q: (q.fits, _cell(q)))  # a tiny canvas: the largest cells that fit


def _text_fits(scale: float) -> tuple[float, ...]:
    """TEXT_FITS, and (above 2.5×) down to the 1× text: where the picture keeps its 1× cells."""
    return TEXT_FITS + ((1.0 / scale,) if 1.0 / scale < TEXT_FITS[-1] else ())


def _modes(shape: WeightsShape) -> tuple[str, ...]:
    return ("rows",) if shape.stacked else ("cols", "below")


def _label_options(texts: WeightsTexts, shape: WeightsShape) -> list[tuple[bool, bool]]:
    """(long badge, role shown) in order of preference: the first that costs little picture wins."""
    if shape.axis is None or not any(texts.roles):
        return [(True, False), (False, False)]
    return [(True, True), (False, True), (True, False), (False, False)]


def _grid_columns(mode: str, n: int) -> tuple[int, ...]:
    """Columns of the stacked slices, in order of preference: one stack, else a compact grid (eight
    norm vectors at 2.5× in a small tab: one stack left no room for the axes line even at 40 % text)."""
    if mode != "rows":
        return (1,)
    return (1, 2) if n > 2 else (1,)


def _choose(W, H, scale, tf, title_role, texts, shape, measure) -> WeightsLayout:
    chosen = {}
    modes = _modes(shape)
    for mode in modes:
        first = None
        for k in _grid_columns(mode, shape.n):  # a grid only where one stack does not fit
            plans = [_plan(W, H, scale, tf, title_role, texts, shape, measure, mode, *opt, k=k)
                     for opt in _label_options(texts, shape)]
            first = first or plans
            if any(p.fits for p in plans):
                break
        else:
            plans = first
        fitting = [p for p in plans if p.fits] or plans
        best = max(_cell(p) for p in fitting)
        chosen[mode] = next(p for p in fitting if _cell(p) >= 0.8 * best)  # text if it costs < 20 % of the picture
    p = chosen[modes[0]]
    if "below" in chosen and _cell(chosen["below"]) >= 1.5 * _cell(p) and chosen["below"].fits >= p.fits:
        p = chosen["below"]  # wide matrices (lm_head): slices under it
    return p


def _cell(p: WeightsLayout) -> float:
    return p.cell[0] * p.cell[1]


def cbar_axis_width(scale: float, tf: float) -> float:
    """The colour bar's tick axis: room for "−0.00" in its (shrunk) body font."""
    fm = QFontMetricsF(font_at("body", False, tf, scale))
    return fm.horizontalAdvance("−0.00") + 14 * scale * tf


def _plan(W, H, scale, tf, title_role, texts, shape, measure, mode, long_badge, role, k=1) -> WeightsLayout:
    """One cell size (cw × ch pixels) for the full matrix and every slice, and where everything goes;
    stacked slices in `k` columns of ceil(n / k) (k = 1: one stack)."""
    s = scale * tf  # gaps shrink with the text
    n, (R, C) = shape.n, shape.shape
    r_s, c_s = (max(sh[i] for sh in shape.slice_shapes) for i in (0, 1))
    m, gap, g_col, g_row = 10 * s, 28 * s, 10 * s, 10 * s
    pad, gl, vg = 4 * s, 10 * s, 6 * s
    cbar_axis_w = cbar_axis_width(scale, tf)
    gap_c, cbar_w = 18 * s, 16 * scale * tf + cbar_axis_w + 4
    inline = mode == "rows"
    per_col = -(-n // k)  # slices in one column of the stacked grid
    replicated_all = shape.axis is None
    lane = theme.FONT_PX["device"] * scale * tf * 1.6  # one lane of badges
    header_h = lane if replicated_all else (0 if shape.split_rows else shape.depth * lane)
    fm = QFontMetricsF(font_at("device", True, tf, scale))
    side_w = shape.depth * (fm.horizontalAdvance(texts.gpu_names[n - 1] if long_badge else str(n - 1))
                            + 22 * s) if shape.split_rows else 0
    body = font_at("body", False, tf, scale)
    title_font, axes_font = font_at(title_role, False, tf, scale), body
    full_title = measure(texts.full_title, title_font)
    grid_title = measure(texts.grid_title, title_font)
    axes_label = measure(texts.axes, axes_font)
    label_align = Qt.AlignLeft if shape.stacked else Qt.AlignHCenter
    labels = [measure(label_html(texts, d, long_badge, role and inline), body, label_align) for d in range(n)]
    bw = bh = 0.0
    for label in labels:
        w = label.natural_width() + 2 * s
        bw, bh = max(bw, w), max(bh, label.height_at(w))
    runs = role_runs(texts.roles)
    roles_shown = role and not inline
    rw = rh = 0.0
    if roles_shown:
        for a, b in runs:
            item = measure(role_html(texts, a), body, Qt.AlignHCenter)
            w = item.natural_width() + 2 * s
            rw = max(rw, (w - (b - a - 1) * g_col) / (b - a))  # a run shares its columns' width
            rh = max(rh, item.height_at(w))
    lw, lh = max(bw, rw), bh + (rh + 2 * s if rh else 0)

    def widths(cw):
        full_w = side_w + C * cw
        colw = max(c_s * cw + 2 * pad, lw)
        unit = c_s * cw + 2 * pad + gl + lw  # a stacked slice and its label
        right_w = (k * unit + (k - 1) * g_col) if inline else n * colw + (n - 1) * g_col
        body_w = max(full_w, right_w) if mode == "below" else full_w + gap + right_w
        return full_w, right_w, colw, body_w + gap_c + cbar_w

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
            t_full, t_grid = full_title.height_at(text_l), grid_title.height_at(text_r)
            axes_h = axes_label.height_at(total)
            fixed = t_full + vg + header_h + 3 * vg + t_grid + vg + vg + lh + vg + axes_h
            ch_max = max((H - 2 * m - fixed) / (R + r_s), 0.05)
        else:
            # the titles share the top: the full matrix's may be wider than the matrix (never 5 lines)
            text_l = min(max(full_w + gap - 8 * s, 0.38 * total), 0.62 * total)
            text_r, text_all = total - text_l - 8 * s, total
            top = max(full_title.height_at(text_l), grid_title.height_at(text_r))
            axes_h = axes_label.height_at(text_all)
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
    # where everything goes (canvas pixels)
    if mode == "below":
        used_h = (t_full + vg + header_h + R * ch + 3 * vg + t_grid + vg + r_s * ch + vg + lh + vg + axes_h)
    else:
        band = max(stack_h(ch), R * ch) if inline else R * ch
        used_h = top + vg + header_h + band + vg + bottom
    fits = used_h <= H - 2 * m + 0.5 and total <= W - 2 * m + 0.5
    x0 = m + max(0.0, (W - 2 * m - total) / 2)
    y0 = m + max(0.0, (H - 2 * m - used_h) / 2)
    body_w = total - gap_c - cbar_w
    if mode == "below":
        x_full = x0 + (body_w - full_w) / 2 + side_w
        y_full = y0 + t_full + vg + header_h
        y_grid = y_full + R * ch + 3 * vg
        grid_at = (x0, y_grid)
        xs, y_slices = x0 + (body_w - right_w) / 2, y_grid + t_grid + vg
        band_top, band = y_full, y_slices + r_s * ch - y_full
    else:
        x_full = x0 + side_w
        y_slices = y0 + top + vg + header_h
        y_full = y_slices + (band - R * ch) / 2
        xs = x0 + full_w + gap
        grid_at = (x0 + text_l + 8 * s, y0)
        band_top = y_slices

    def place(doc, x, y, w, text_html, font):
        return TextPlace(QRectF(x, y, w, doc.height_at(w)), text_html, font)

    header_w = (xs + right_w - x_full) if replicated_all and mode == "cols" else C * cw
    slices, placed = [], []
    for d, label in enumerate(labels):
        rows, cols = shape.slice_shapes[d]
        iw, ih = cols * cw, rows * ch
        if inline:
            over = max(0.0, (lh - r_s * ch) / 2)  # a label taller than its slice: room above the first
            j, i = divmod(d, per_col)  # column j of the grid, row i in it
            xj = xs + j * (c_s * cw + 2 * pad + gl + lw + g_col)
            y = y_slices + over + i * max(r_s * ch + g_row, lh + 2 * s)
            slices.append(QRectF(xj + pad, y, iw, ih))
            at = (xj + iw + 2 * pad + gl, y + ih / 2 - label.height_at(lw) / 2, lw)
        else:
            x = xs + d * (colw + g_col)
            slices.append(QRectF(x + (colw - iw) / 2, y_slices, iw, ih))
            at = (x, y_slices + ih + vg, colw)
        placed.append(place(label, *at, label_html(texts, d, long_badge, role and inline), body))
    roles = []
    for a, b in (runs if roles_shown else ()):
        x, y, w = (xs + a * (colw + g_col), y_slices + r_s * ch + vg + bh + 2 * s,
                   (b - a) * colw + (b - a - 1) * g_col)
        text_html = role_html(texts, a, one_line=True)  # "tokens 0–63" on one line when the column has the room
        if measure(text_html, body, Qt.AlignHCenter).natural_width() > w:
            text_html = role_html(texts, a)
        roles.append(place(measure(text_html, body, Qt.AlignHCenter), x, y, w, text_html, body))
    cb_h = min(max(band, 160 * s), used_h - (band_top - y0) - axes_h - vg)  # a short band: still legible
    cbar = QRectF(x0 + body_w + gap_c, band_top, cbar_w, cb_h)
    return WeightsLayout(
        width=W, height=H, mode=mode, k=k, long_badge=long_badge, role=role, factor=tf, fits=fits, cell=(cw, ch),
        full_title=place(full_title, x0, y0, text_l, texts.full_title, title_font),
        grid_title=place(grid_title, *grid_at, text_r, texts.grid_title, title_font),
        axes=place(axes_label, x0, y0 + used_h - axes_h, text_all, texts.axes, axes_font),
        matrix=QRectF(x_full, y_full, C * cw, R * ch),
        header=QRectF(x_full, y_full - header_h, header_w, header_h),
        side=QRectF(x_full - side_w, y_full, side_w, R * ch),
        slices=tuple(slices), labels=tuple(placed), roles=tuple(roles), cbar=cbar, cbar_axis_w=cbar_axis_w,
        cbar_short=cb_h < 7 * QFontMetricsF(body).height())

