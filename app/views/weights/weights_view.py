"""
Weight slices: which rows and columns of each matrix every GPU holds under n-way tensor parallelism.

Left, the full matrix (the single-device parameters) as a heatmap, each device's region outlined
in its colour: columns for Wq, Wk, Wv, W_gate, W_up and lm_head, rows for Wo and W_down, the whole
matrix for embed and the norms (replicated). Right, the n heatmaps of what each device really
holds — `run.tp.dev_params[d]`, shard_params_tp's output, never re-cut here — with the colour
levels of the full matrix, so one colour means one number everywhere. The header says that the
sharded forward computes the single-device logits (run.tp.max_abs_diff).

Layout, for a projector in a small tab: one cell size (cw × ch pixels) is used for the full matrix
and every slice, so a slice is drawn exactly as large as the region it came from. Column splits put
the n slices in one row beside the full matrix, each as tall as it; row splits stack them beside
it, labels at the side. `_plan` picks the largest cell that leaves room for the texts (cells may be
up to ASPECT_MAX times taller than wide or wider than tall — the same for every heatmap); a slice's
label is its device's coloured badge, plus which heads / units it holds when that costs little
picture. Everything a label leaves out is in the slice's tooltip (`slice_texts`).

Who holds what comes from simcore.tensor_parallel.weight_slices (the engine's one place that
decides it). When n > n_kv_heads a KV group's columns of Wk / Wv belong to several GPUs: their
outlines nest inside each other and the slices say "replicated".

Items are built once per (run, layer, matrix); a resize only moves them (`_layout`, `_place`).
"""

from __future__ import annotations

from ... import _compat  # noqa: F401  (PySide6 6.12 on Python < 3.12: see app/_compat.py)

import html as _html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QPen
from PySide6.QtWidgets import (QComboBox, QGraphicsRectItem, QGraphicsTextItem, QHBoxLayout, QLabel, QSizePolicy,
                               QSpinBox, QStackedWidget, QVBoxLayout, QWidget)

from simcore.tensor_parallel import tp_layout, tp_share, weight_slices
from simcore.transformer_lab import TINY, lm_head_of

from ... import theme
from ..text.explain import fmt_bytes
from ...hint import hint_page

WEIGHT_KINDS = ("tp-forward", "decode")  # scenarios whose run carries shard_params_tp's output
MATRICES = ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down", "lm_head",
            "embed", "attn_norm", "mlp_norm", "final_norm")
PER_LAYER = ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down", "attn_norm", "mlp_norm")
NAMES = {"wq": "Wq", "wk": "Wk", "wv": "Wv", "wo": "Wo", "w_gate": "W_gate", "w_up": "W_up",
         "w_down": "W_down", "lm_head": "lm_head", "embed": "embed", "attn_norm": "attn_norm",
         "mlp_norm": "mlp_norm", "final_norm": "final_norm"}
BYTES_PER_ELEM = 8  # the toy model is float64
COLORMAP = "CET-D1A"  # diverging blue–white–red: 0 is white, the sign is the hue
VECTOR_TALL = 8  # a norm's single row is drawn up to 8× taller than wide, or its outline would hide it
ASPECT_MAX = 2.0  # a cell may be drawn up to 2× taller than wide or wider than tall (every heatmap alike)
TEXT_FITS = (1.0, 0.85, 0.7, 0.6, 0.5, 0.4)  # text sizes tried in a small canvas, relative to the theme's
CHECK_TOL = 1e-9  # max |TP − single-device logits| above this is a wrong forward (float64: ~1e-14)


# ---------------------------------------------------------------------------------------
# Reading the parameters (no re-cutting: the device arrays are the engine's)
# ---------------------------------------------------------------------------------------
def _as_image(a) -> np.ndarray:
    """A weight as a 2-D (rows, columns) array; a norm's vector [D] becomes one row [1, D]."""
    return np.atleast_2d(np.asarray(a))


def full_matrix(params: dict, name: str, layer: int) -> np.ndarray:
    """The single-device matrix `name` (of layer `layer` when it has one), 2-D."""
    if name == "lm_head":
        return _as_image(lm_head_of(params))
    if name in PER_LAYER:
        return _as_image(params["layers"][layer][name])
    return _as_image(params[name])


def device_matrix(dev: dict, name: str, layer: int) -> np.ndarray:
    """What one device holds of `name`: an entry of shard_params_tp's output, 2-D."""
    if name in PER_LAYER:
        return _as_image(dev["layers"][layer][name])
    return _as_image(dev[name])


def held_runs(index) -> list[tuple[int, int]]:
    """Contiguous runs [a, b) of sorted indices: the blocks of rows / columns a device holds."""
    idx = np.sort(np.asarray(index))
    if not len(idx):
        return []
    cut = np.flatnonzero(np.diff(idx) != 1) + 1
    return [(int(p[0]), int(p[-1]) + 1) for p in np.split(idx, cut)]


def region_rects(ws, shape) -> list[QRectF]:
    """The rectangles (column x, row y, in matrix cells) a WeightSlice covers in the full matrix."""
    rows, cols = shape
    if ws.axis is None:
        return [QRectF(0, 0, cols, rows)]
    if ws.axis == 1:
        return [QRectF(a, 0, b - a, rows) for a, b in held_runs(ws.index)]
    return [QRectF(0, a, cols, b - a) for a, b in held_runs(ws.index)]


def overlap_ranks(regions: list[list[QRectF]]) -> list[int]:
    """Per device, how many earlier devices' regions overlap its own (0 = the outermost outline)."""
    ranks = []
    for d, mine in enumerate(regions):
        ranks.append(sum(any(r.intersects(o) for r in mine for o in regions[e]) for e in range(d)))
    return ranks


def tp_n_for(n: int, cfg=TINY) -> int:
    """The largest device count ≤ n that the TP scenario accepts (heads, d_ff and vocab divide)."""
    for k in range(min(n, cfg.n_heads), 0, -1):
        try:
            tp_layout(cfg, k)
            return k
        except ValueError:
            continue
    return 1


def _halo(c: QColor) -> QColor:
    """The outline drawn under a device colour so it reads on any heatmap cell."""
    return QColor("#FFFFFF") if theme.text_on(c).name() == "#ffffff" else QColor("#000000")


def _font(role: str, bold: bool = False, factor: float = 1.0):
    """The theme's font for `role`, times `factor` (the view shrinks its text where it must)."""
    f = theme.font(role, bold=bold)
    f.setPixelSize(max(6, round(f.pixelSize() * factor)))
    return f


def _badge_html(text: str, c: QColor) -> str:
    fg = theme.text_on(c).name()
    return (f'<span style="background-color:{c.name()}; color:{fg}; font-weight:bold;">'
            f'&nbsp;{text}&nbsp;</span>')


def _cosmetic(color: QColor, width: float) -> QPen:
    pen = QPen(color, width)
    pen.setCosmetic(True)
    pen.setJoinStyle(Qt.MiterJoin)
    return pen


# ---------------------------------------------------------------------------------------
# The view
# ---------------------------------------------------------------------------------------
class _Canvas(pg.GraphicsView):
    """The picture. Every item hangs from `ci` (which fills the view); WeightsView._layout places them."""

    resized = Signal()

    def __init__(self):
        super().__init__()
        self.ci = pg.GraphicsWidget()
        self.setCentralItem(self.ci)

    def resizeEvent(self, e):
        super().resizeEvent(e)
        self.resized.emit()


class _Text(QGraphicsTextItem):
    """Rich text in the picture that wraps at a given width, so the layout can ask its height."""

    def __init__(self, parent, align=Qt.AlignLeft):
        super().__init__(parent)
        doc = self.document()
        doc.setDocumentMargin(0)
        opt = doc.defaultTextOption()
        opt.setAlignment(align)
        doc.setDefaultTextOption(opt)

    def set(self, text_html: str, role: str = "body", color: str | None = None, bold: bool = False,
            factor: float = 1.0):
        self.setFont(_font(role, bold, factor))
        self.setDefaultTextColor(QColor(color or theme.palette().text))
        self.setHtml(text_html)

    def natural_width(self) -> float:
        self.setTextWidth(-1)
        return self.document().idealWidth()

    def height_at(self, width: float) -> float:
        self.setTextWidth(max(1.0, width))
        return self.document().size().height()


class WeightsView(QWidget):
    """
    Follows a ScenarioModel: for the TP scenarios, one matrix of one layer (chosen here) and who
    holds which part of it. Test hooks: `full_image`, `slice_images[d]` (ImageItems),
    `outlines[d]` (the device's outline rect items, each with `.region`, its exact QRectF in
    matrix cells), `slice_texts[d]` (everything about a slice: its tooltip), `slice_labels[d]`
    (the text drawn beside it), `plan` (the last layout), `info` (the correctness line), `caption`.
    """

    def __init__(self, model, playback, parent=None):
        super().__init__(parent)
        self.setObjectName("WeightsView")
        self.model, self.playback = model, playback
        self.key = "wq"
        self.layer = 0
        self._applicable = False
        self.slices = []
        self.slice_images, self.slice_boxes, self.slice_labels, self.slice_texts = [], [], [], []
        self.role_runs, self.role_labels = [], []
        self.outlines: list[list[QGraphicsRectItem]] = []
        self._outline_items, self._badges = [], []
        self.replicated_label = None
        self.plan = None
        self._text_factor = 1.0  # < 1 where the texts at the theme's size leave the matrices no room
        self._make_controls()
        self._make_canvas()
        self._make_hint()
        self.caption = QLabel(objectName="weightsCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.PlainText)
        self.caption.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.hint_page)
        self.stack.addWidget(self.canvas)
        self.canvas.resized.connect(self._on_canvas_resized)  # the picture is laid out for its size
        lay = QVBoxLayout(self)
        lay.setSpacing(4)
        lay.setContentsMargins(4, 4, 4, 4)  # a docked tab is small: the picture gets the pixels
        lay.addLayout(self.bar)
        lay.addWidget(self.stack, 1)
        lay.addWidget(self.caption)
        self._apply_theme()
        model.changed.connect(self._on_model_changed)
        theme.notifier().changed.connect(self._on_theme_changed)
        self._sync_controls()
        self._build()
        self.retranslate_ui()

    # -- construction (once) ---------------------------------------------------------------
    def _make_controls(self):
        self.layer_label = QLabel()
        self.layer_spin = QSpinBox(objectName="weightsLayerSpin")
        self.layer_spin.setKeyboardTracking(False)
        self.layer_spin.setRange(0, TINY.n_layers - 1)
        self.layer_label.setBuddy(self.layer_spin)
        self.matrix_label = QLabel()
        self.matrix_combo = QComboBox(objectName="weightsMatrixCombo")
        for key in MATRICES:
            self.matrix_combo.addItem(NAMES[key], key)
        self.matrix_label.setBuddy(self.matrix_combo)
        # the forward's correctness: max |TP logits − single-device logits|
        self.info = QLabel(objectName="weightsInfo")
        self.info.setTextFormat(Qt.PlainText)
        self.info.setWordWrap(True)  # never widen the window
        self.info.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.bar = QHBoxLayout()
        for w in (self.matrix_label, self.matrix_combo, self.layer_label, self.layer_spin):
            self.bar.addWidget(w)
        self.bar.addSpacing(20)
        self.bar.addWidget(self.info, 1)
        self.layer_spin.valueChanged.connect(self._on_layer_value_changed)
        self.matrix_combo.currentIndexChanged.connect(self._on_matrix_index_changed)

    def _make_canvas(self):
        self.canvas = _Canvas()
        self.canvas.setObjectName("weightsCanvas")
        root = self.canvas.ci
        self.cmap = pg.colormap.get(COLORMAP)
        self.lut = self.cmap.getLookupTable(nPts=256)
        self.full_title = _Text(root)
        self.grid_title = _Text(root)
        self.axes_label = _Text(root)
        self.header = pg.ViewBox(enableMouse=False, invertY=True, enableMenu=False, defaultPadding=0)
        self.side = pg.ViewBox(enableMouse=False, invertY=True, enableMenu=False, defaultPadding=0)
        self.matrix_box = pg.ViewBox(enableMouse=False, invertY=True, enableMenu=False, defaultPadding=0)
        for vb in (self.header, self.side, self.matrix_box):
            vb.setParentItem(root)
        self.full_image = pg.ImageItem(axisOrder="row-major")
        self.full_image.setLookupTable(self.lut)
        self.matrix_box.addItem(self.full_image)
        # the colour scale stands upright at the right: the heatmaps need the height
        self.cbar = pg.ColorBarItem(values=(-1, 1), colorMap=self.cmap, interactive=False, width=16,
                                    orientation="vertical", colorMapMenu=False)
        self.cbar.setParentItem(root)
        for vb in (self.header, self.side):
            vb.enableAutoRange(False)
            vb.setRange(QRectF(0, 0, 1, 1), padding=0)
            vb.sigResized.connect(self._on_matrix_box_transform_changed)
        self.matrix_box.sigTransformChanged.connect(self._on_matrix_box_transform_changed)

    def _make_hint(self):
        self.hint_page, self.hint, self.switch_button = hint_page("weights", self._on_switch_button_clicked)

    # -- signals ---------------------------------------------------------------------------
    def _on_model_changed(self, run):
        self._sync_controls()
        self._build()

    def _on_theme_changed(self):
        self._apply_theme()
        self._build()

    def _on_layer_value_changed(self, v):
        if v != self.layer:
            self.layer = v
            self._build()

    def _on_matrix_index_changed(self, i):
        key = self.matrix_combo.itemData(i)
        if key and key != self.key:
            self.key = key
            self.layer_spin.setEnabled(key in PER_LAYER)
            self._build()

    def _on_switch_button_clicked(self):
        self.model.update(kind="tp-forward", n=tp_n_for(self.model.scenario.n))

    def _on_matrix_box_transform_changed(self, *_):
        self._place()

    def _on_canvas_resized(self):
        self._layout()

    def resizeEvent(self, e):
        super().resizeEvent(e)
        self._fit_side_texts()

    # the correctness line above the picture and the caption below it take at most these shares of
    # the view's height: at 2.5× in a small tab they had squeezed the picture to nothing
    SIDE_TEXT_SHARE = {"info": 0.14, "caption": 0.18}

    def _fit_side_texts(self):
        """The info line and the caption at the body size, smaller (to 55 %) where they would take
        more than their share of the height, and cut after the words that fit ("…") where even that
        is too tall (the caption at 2.5× in a 704 × 432 tab); the full text is in their tooltips."""
        pal = theme.palette()
        body = theme.px("body")
        H = max(self.height(), 1)
        full = getattr(self, "_side_full", {})
        for name, label, bold in (("info", self.info, True), ("caption", self.caption, False)):
            text, tip = full.get(name, ("", ""))
            width = max(label.width(), 50)
            room = self.SIDE_TEXT_SHARE[name] * H

            def height(t, px):
                f = theme.font("body", bold)
                f.setPixelSize(max(6, round(px)))
                return QFontMetricsF(f).boundingRect(QRectF(0, 0, width, 1e5), int(Qt.TextWordWrap), t).height()

            px = body
            while px > 0.55 * body and height(text, px) > room:
                px *= 0.9
            shown = text
            if height(text, px) > room:  # the longest beginning that fits, then "…"
                lo, hi = 0, len(text)
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    lo, hi = (mid, hi) if height(text[:mid].rstrip() + "…", px) <= room else (lo, mid - 1)
                shown = text[:lo].rstrip() + "…"
                tip = tip if text in tip else text + "\n\n" + tip
            if label.text() != shown:
                label.setText(shown)
            if label.toolTip() != tip:
                label.setToolTip(tip)
            style = f"font-size: {max(6, round(px))}px; {'font-weight: bold; ' if bold else ''}color: {pal.text};"
            if getattr(self, "_side_px", {}).get(name) != style:
                self._side_px[name] = style
                label.setStyleSheet(style)
            label.setMaximumHeight(max(int(self.SIDE_TEXT_SHARE[name] * H), QFontMetricsF(label.font()).height() + 4))

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def retranslate_ui(self):
        self.setWindowTitle(self.tr("Weight slices"))
        self.layer_label.setText(self.tr("&Layer"))
        self.matrix_label.setText(self.tr("&Matrix"))
        self.hint.setText(self.tr("Weight slices belong to the TP-forward scenario: a small Transformer "
                                  "whose matrices are split over the GPUs.\nThis scenario moves no weights."))
        self.switch_button.setText(self.tr("Switch to the TP forward"))
        self._texts()

    # -- public ----------------------------------------------------------------------------
    def select(self, key: str | None = None, layer: int | None = None):
        """Show matrix `key` (a name of MATRICES) of layer `layer`."""
        if key is not None:
            if key not in MATRICES:
                raise ValueError(f"unknown matrix {key!r}; choose one of {', '.join(MATRICES)}")
            self.matrix_combo.setCurrentIndex(MATRICES.index(key))
        if layer is not None:
            self.layer_spin.setValue(layer)

    def scene_item_count(self) -> int:
        return len(self.canvas.scene().items())

    # -- building (once per run and selection) ---------------------------------------------
    def _sync_controls(self):
        tp = self.model.run.tp
        if tp is None:
            return
        self.layer_spin.blockSignals(True)
        self.layer_spin.setRange(0, tp.cfg.n_layers - 1)
        self.layer = self.layer_spin.value()
        self.layer_spin.blockSignals(False)

    def _clear(self):
        for it in self._outline_items:
            self.matrix_box.removeItem(it)
        for vb, it in self._badges:
            vb.removeItem(it)
        scene = self.canvas.scene()
        for item in self.slice_boxes + self.slice_labels + self.role_labels:
            item.setParentItem(None)
            scene.removeItem(item)
        self._outline_items, self._badges = [], []
        self.slice_images, self.slice_boxes, self.slice_labels, self.slice_texts = [], [], [], []
        self.role_runs, self.role_labels = [], []
        self.outlines = []
        self.replicated_label = None
        self.plan = None

    def _build(self):
        self._clear()
        run = self.model.run
        tp = run.tp
        self._applicable = (run.scenario.kind in WEIGHT_KINDS and tp is not None
                            and tp.dev_params is not None and tp.params is not None)
        self.stack.setCurrentWidget(self.canvas if self._applicable else self.hint_page)
        if not self._applicable:
            self._texts()
            return
        cfg, n, key, layer = tp.cfg, tp.n, self.key, self.layer
        self.n = n
        full = full_matrix(tp.params, key, layer)
        self.full = full
        self.shape = full.shape
        vmax = float(np.max(np.abs(full))) or 1.0
        self.levels = (-vmax, vmax)  # fixed, symmetric: white = 0 in every heatmap
        self.full_image.setImage(full, levels=self.levels, autoLevels=False)
        self.full_image.setRect(QRectF(0, 0, full.shape[1], full.shape[0]))
        self.cbar.setLevels(self.levels)
        self.slices = weight_slices(cfg, n, key)
        self.colors = theme.device_colors(n)
        self._build_outlines()
        self._build_grid([device_matrix(dp, key, layer) for dp in tp.dev_params])
        self._texts()  # lays the picture out too
        self._place()

    def _build_outlines(self):
        n = self.n
        replicated_all = self.slices[0].axis is None
        self.regions = [region_rects(ws, self.shape) for ws in self.slices]
        self.ranks = [0] * n if replicated_all else overlap_ranks(self.regions)
        self.split_rows = self.slices[0].axis == 0
        pen_w = theme.line("highlight") * 1.4
        if replicated_all:  # one outline for everyone: they all hold the whole thing
            c = QColor(theme.palette().text)
            items = self._outline_pair(self.regions[0][0], c, pen_w)
            self.outlines = [items[1::2]] * n
        else:
            for d in range(n):
                items = []
                for r in self.regions[d]:
                    items += self._outline_pair(r, self.colors[d], pen_w)
                self.outlines.append(items[1::2])
        self.depth = max(self.ranks) + 1
        box = self.side if self.split_rows else self.header
        font = theme.font("device", bold=True)
        if replicated_all:
            label = pg.TextItem("", color=theme.palette().text, anchor=(0, 0.5))
            label.setFont(font)
            label.region = QRectF(0, 0, self.shape[1], self.shape[0])
            label.device, label.rank = None, 0
            self.header.addItem(label)
            self._badges.append((self.header, label))
            self.replicated_label = label
            return
        for d in range(n):
            c = self.colors[d]
            for r in self.regions[d]:
                badge = pg.TextItem("", color=theme.text_on(c), anchor=(0.5, 0.5), fill=pg.mkBrush(c),
                                    border=pg.mkPen(_halo(c), width=1))
                badge.setFont(font)
                badge.device, badge.region, badge.rank = d, r, self.ranks[d]
                box.addItem(badge)
                self._badges.append((box, badge))

    def _outline_pair(self, region: QRectF, c: QColor, width: float) -> list:
        """A halo and a coloured rectangle around `region`; returns [halo, colour]."""
        out = []
        for pen, z in ((_cosmetic(_halo(c), width + 3), 10), (_cosmetic(c, width), 11)):
            it = QGraphicsRectItem(region)
            it.setPen(pen)
            it.setZValue(z)
            it.region = QRectF(region)
            it.inset = 0.0
            self.matrix_box.addItem(it, ignoreBounds=True)
            self._outline_items.append(it)
            out.append(it)
        return out

    def _build_grid(self, arrays: list[np.ndarray]):
        """n small heatmaps of the devices' own arrays: side by side (column split) or stacked (rows)."""
        self.stacked = self.split_rows or (self.slices[0].axis is None and self.shape[0] < self.shape[1])
        pen_w = theme.line("highlight")
        root = self.canvas.ci
        for d, a in enumerate(arrays):
            c = self.colors[d]
            vb = pg.ViewBox(enableMouse=False, invertY=True, enableMenu=False, defaultPadding=0)
            vb.setParentItem(root)
            img = pg.ImageItem(a, axisOrder="row-major", levels=self.levels)
            img.setLookupTable(self.lut)
            vb.addItem(img)
            for pen, z in ((_cosmetic(_halo(c), pen_w + 3), 10), (_cosmetic(c, pen_w), 11)):
                box = QGraphicsRectItem(QRectF(0, 0, a.shape[1], a.shape[0]))
                box.setPen(pen)
                box.setZValue(z)
                vb.addItem(box, ignoreBounds=True)  # a cosmetic pen's width is not in cells
            label = _Text(root, Qt.AlignLeft if self.stacked else Qt.AlignHCenter)
            self.slice_images.append(img)
            self.slice_boxes.append(vb)
            self.slice_labels.append(label)
            self.slice_texts.append("")
        # runs of neighbours with the same role (KV groups on several GPUs) share one role label
        self.role_runs, self.role_labels = [], []
        for d in range(self.n):
            if self.role_runs and self._what(d) == self._what(d - 1):
                self.role_runs[-1] = (self.role_runs[-1][0], d + 1)
            else:
                self.role_runs.append((d, d + 1))
        for _ in self.role_runs:
            item = _Text(root, Qt.AlignHCenter)
            item.setVisible(False)
            self.role_labels.append(item)

    # -- layout (on every resize, language or theme change) ------------------------------------
    def _label_html(self, d: int, long_badge: bool, role: bool) -> str:
        """Slice d's label: its device's coloured badge, then (rows: on the same line) which heads / units."""
        name = self.tr("GPU {d}").format(d=d) if long_badge else str(d)
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
        side_w = self.depth * (fm.horizontalAdvance(self.tr("GPU {d}").format(d=n - 1) if long_badge
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

    # -- texts (again on every language change) ---------------------------------------------
    def _texts(self):
        if not self._applicable:
            self._side_full = {"info": ("", ""), "caption": ("", "")}
            self._fit_side_texts()
            return
        tp = self.model.run.tp
        cfg, n, key = tp.cfg, tp.n, self.key
        name = NAMES[key]
        pal = theme.palette()
        rows, cols = self.shape
        where = (self.tr("layer {l}").format(l=self.layer) if key in PER_LAYER else self.tr("whole model"))
        self.full_title.set("<b>" + _html.escape(self.tr("Full {name}, {where}: {r} × {c} = {b}").format(
            name=name, where=where, r=rows, c=cols, b=fmt_bytes(rows * cols * BYTES_PER_ELEM))) + "</b>")
        self.grid_title.set(self._grid_title_html())
        r_name, c_name = self._axis_names(key, cfg)
        axes = (self.tr("{c} columns: {cn}").format(c=cols, cn=c_name) if rows == 1 else
                self.tr("{r} rows: {rn} · {c} columns: {cn}").format(r=rows, rn=r_name, c=cols, cn=c_name))
        self.axes_label.set(_html.escape(axes), role="body", color=pal.text_muted)
        gpus = self.tr("{n} GPUs").format(n=n) if n > 1 else self.tr("1 GPU")
        model = self.tr("{gpus} · TINY model: d_model {D}, {H} query heads, {G} KV groups, d_head {dh}, "
                        "d_ff {F}, vocab {V}").format(gpus=gpus, D=cfg.d_model, H=cfg.n_heads, G=cfg.n_kv_heads,
                                                       dh=cfg.d_head, F=cfg.d_ff, V=cfg.vocab)
        what = (self.tr("the decode step's logits (one new token, with the KV cache)") if tp.decode else
                self.tr("the logits of every token"))
        self.full_title.setToolTip(model)
        if self.replicated_label is not None:
            self.replicated_label.setText(self.tr("replicated on all {n} GPUs").format(n=n) if n > 1
                                          else self.tr("GPU 0 holds all of it"))
        for d in range(n):
            self.slice_texts[d] = self._slice_text(d)
            for item in (self.slice_images[d], self.slice_labels[d]):
                item.setToolTip(self.slice_texts[d])
        colours = self.tr("One colour means one number in every heatmap (blue < 0 < red, "
                          "levels ±{v:.2f}).").format(v=self.levels[1])
        self.cbar.setToolTip(colours)
        check = self._check_text()
        check_tip = self.tr("max |TP logits − single-device logits| over {what}.\n{model}").format(what=what, model=model)
        self._side_full = {"info": (check, check + "\n" + check_tip), "caption": (self._caption(), colours)}
        self._fit_side_texts()
        self._layout()

    def _check_text(self) -> str:
        """The header's correctness line: the TP forward computes the single-device logits."""
        tp = self.model.run.tp
        d = tp.max_abs_diff
        if d <= CHECK_TOL:
            s = (self.tr("✓ Decode step: TP logits = single-device logits, max |Δ| = {d:.1e}") if tp.decode else
                 self.tr("✓ TP logits = single-device logits: max |Δ| = {d:.1e}"))
        else:
            s = (self.tr("✗ Decode step: TP logits ≠ single-device logits, max |Δ| = {d:.1e}") if tp.decode else
                 self.tr("✗ TP logits ≠ single-device logits: max |Δ| = {d:.1e}"))
        return s.format(d=d)

    def _grid_title_html(self) -> str:
        tp = self.model.run.tp
        n, cfg = self.n, tp.cfg
        shapes = {a.image.shape for a in self.slice_images}
        muted = theme.palette().text_muted
        if len(shapes) == 1:
            (r, c), = shapes
            b = fmt_bytes(r * c * BYTES_PER_ELEM)
            if self.slices[0].axis is None:
                head = (self.tr("Each GPU holds a full copy: {r} × {c} = {b}") if n > 1 else
                        self.tr("GPU 0 holds all of it: {r} × {c} = {b}")).format(r=r, c=c, b=b)
            else:
                head = self.tr("Each GPU holds {r} × {c} = {b}").format(r=r, c=c, b=b)
        else:
            head = self.tr("What each GPU holds")
        tail = self.tr("its own shard, same colour scale")
        if self.key in ("wk", "wv") and any(ws.replicated for ws in self.slices):
            tail = self.tr("each KV group on {k} GPUs, same colour scale").format(k=tp_share(cfg, n).kv_replicas)
        elif self.slices[0].axis is None:
            tail = self.tr("same colour scale")
        return (f"<b>{_html.escape(head)}</b> "
                f'<span style="color:{muted};">({_html.escape(tail)})</span>')

    def _axis_names(self, key, cfg):
        heads = self.tr("{H} query heads × d_head {dh}").format(H=cfg.n_heads, dh=cfg.d_head)
        groups = self.tr("{G} KV groups × d_head {dh}").format(G=cfg.n_kv_heads, dh=cfg.d_head)
        hidden = self.tr("d_ff hidden units")
        return {"wq": ("d_model", heads), "wk": ("d_model", groups), "wv": ("d_model", groups),
                "wo": (heads, "d_model"), "w_gate": ("d_model", hidden), "w_up": ("d_model", hidden),
                "w_down": (hidden, "d_model"), "lm_head": ("d_model", self.tr("vocabulary")),
                "embed": (self.tr("vocabulary (token id)"), "d_model")}.get(key, ("", "d_model"))

    def _what(self, d) -> str:
        """Which heads / groups / units device d's slice is (short lines: a slice's column is narrow)."""
        ws = self.slices[d]
        lay = tp_layout(self.model.run.tp.cfg, self.n)[d]
        if ws.axis is None:
            return self.tr("replicated") if self.n > 1 else ""
        groups = ", ".join(str(g) for g in lay.kv_groups)
        if self.key in ("wk", "wv"):
            if ws.replicated:
                return self.tr("KV group {g}\nreplicated").format(g=groups)
            if len(lay.kv_groups) == 1:
                return self.tr("KV group {g}").format(g=groups)
            return self.tr("KV groups\n{g}").format(g=groups)
        a, b = int(ws.index.min()), int(ws.index.max())
        if self.key in ("wq", "wo"):
            if len(lay.heads) == 1:
                return self.tr("head {h}").format(h=lay.heads.start)
            return self.tr("heads {a}–{b}").format(a=lay.heads.start, b=lay.heads.stop - 1)
        if self.key == "lm_head":
            return self.tr("tokens\n{a}–{b}").format(a=a, b=b)
        return self.tr("units\n{a}–{b}").format(a=a, b=b)

    def _slice_text(self, d) -> str:
        a = self.slice_images[d].image
        r, c = a.shape
        size = fmt_bytes(a.size * BYTES_PER_ELEM)
        parts = [self.tr("GPU {d}").format(d=d), f"{r} × {c}", size, self._what(d)]
        return " · ".join(p.replace("\n", " ") for p in parts if p)

    def _caption(self) -> str:
        tp = self.model.run.tp
        cfg, n, key = tp.cfg, tp.n, self.key
        name = NAMES[key]
        a = self.slice_images[0].image
        r, c = a.shape
        size = fmt_bytes(a.size * BYTES_PER_ELEM)
        ws = self.slices[0]
        if ws.axis is None:
            if n == 1:
                s = self.tr("{name} is used whole: the one GPU holds all {k} values ({b}).")
            else:
                s = self.tr("{name} is replicated: each of the {n} GPUs holds all {k} values ({b}) — it is small "
                            "and every GPU needs all of it.")
            s = s.format(name=name, n=n, k=a.size, b=size)
            if r == 1:
                s += self.tr(" Its values are all close to 1, hence one colour.")
            return s
        if n == 1:
            return self.tr("With one GPU nothing is split: GPU 0 holds all of {name}, {r} rows × {c} columns "
                           "= {b}.").format(name=name, r=r, c=c, b=size)
        share = tp_share(cfg, n)
        if key == "wq":
            return self.tr("Wq is split by columns: each GPU holds {h} of the {H} query heads, {c} columns × {r} "
                           "rows = {b}.").format(h=share.heads, H=cfg.n_heads, c=c, r=r, b=size)
        if key in ("wk", "wv") and n > cfg.n_kv_heads:
            return self.tr("{name} has only {G} KV groups for {n} GPUs, so each group's {c} columns are replicated "
                           "on {k} GPUs ({c} columns × {r} rows = {b} on each); nested outlines show who shares "
                           "a group.").format(name=name, G=cfg.n_kv_heads, n=n, k=share.kv_replicas, c=c, r=r,
                                              b=size)
        if key in ("wk", "wv"):
            return self.tr("{name} is split by columns, one KV group per {d_head} columns: each GPU holds {g} of "
                           "the {G} groups ({c} columns × {r} rows = {b}).").format(
                name=name, d_head=cfg.d_head, g=share.kv_groups, G=cfg.n_kv_heads, c=c, r=r, b=size)
        if key == "wo":
            return self.tr("Wo is split by rows: each GPU holds the rows of its own {h} heads ({r} rows × {c} "
                           "columns = {b}); the all-reduce after attention adds the {n} partial results.").format(
                h=share.heads, r=r, c=c, b=size, n=n)
        if key == "w_down":
            return self.tr("W_down is split by rows: each GPU holds the rows of its own {r} hidden units ({r} rows "
                           "× {c} columns = {b}); the all-reduce after the MLP adds the {n} partial results.").format(
                r=r, c=c, b=size, n=n)
        if key == "lm_head":
            return self.tr("lm_head is split by columns: each GPU holds {c} of the {V} vocabulary columns ({c} "
                           "columns × {r} rows = {b}); the logits are all-gathered at the end.").format(
                c=c, V=cfg.vocab, r=r, b=size)
        return self.tr("{name} is split by columns: each GPU holds {c} of the {F} hidden units ({c} columns × "
                       "{r} rows = {b}).").format(name=name, c=c, F=cfg.d_ff, r=r, b=size)

    # -- placement (on resize: insets in pixels, badge texts that fit) -----------------------
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
                texts = ([self.tr("replicated on all {n} GPUs").format(n=n), self.tr("replicated")] if n > 1
                         else [self.tr("GPU 0 holds all of it")])
                room = box.width() * (1 - centre.x())  # the header's x range is [0, 1]
                badge.setText(next((t for t in texts if fm.horizontalAdvance(t) + 6 <= room), ""))
                continue
            room = r.height() / sy if self.split_rows else r.width() / sx
            long_text = self.tr("GPU {d}").format(d=d)
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

    # -- look --------------------------------------------------------------------------------
    def _apply_theme(self):
        pal = theme.palette()
        self.canvas.setBackground(pal.background)
        # stylesheets, not setFont: the application's stylesheet would override a font
        cap, body = round(theme.px("caption")), round(theme.px("body"))
        for w in (self.layer_label, self.matrix_label, self.layer_spin, self.matrix_combo):
            w.setStyleSheet(f"font-size: {body}px;")
        self._side_px = {}
        self._fit_side_texts()
        self.hint.setStyleSheet(f"font-size: {cap}px; color: {pal.text};")
        self.switch_button.setStyleSheet(f"font-size: {body}px; font-weight: bold;")
        self._cbar_px = None
        for key in ("left", "right", "top", "bottom"):
            ax = self.cbar.getAxis(key)
            ax.setTickFont(theme.font("body"))
            ax.setPen(pg.mkPen(pal.text))
            ax.setTextPen(pg.mkPen(pal.text))
            ax.enableAutoSIPrefix(False)  # "0.4", not "400 (x0.001)"
