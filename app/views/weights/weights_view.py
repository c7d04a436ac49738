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
it, labels at the side. weights_layout picks the largest cell that leaves room for the texts (cells may be
up to ASPECT_MAX times taller than wide or wider than tall — the same for every heatmap); a slice's
label is its device's coloured badge, plus which heads / units it holds when that costs little
picture. Everything a label leaves out is in the slice's tooltip (`slice_texts`).

Who holds what comes from simcore.tensor_parallel.weight_slices (the engine's one place that
decides it). When n > n_kv_heads a KV group's columns of Wk / Wv belong to several GPUs: their
outlines nest inside each other and the slices say "replicated".

Items are built once per (run, layer, matrix); a resize only moves them: `_layout` applies what
weights_layout says for the canvas' size, `_place` insets the outlines and fits the badges.

Where the parts live: the layout (a pure function of size, text scale, texts and shapes) in
weights_layout, the words and the layout's inputs in weights_texts, the graphics pieces in
weights_items, reading the parameters and regions in weights_data.
"""

from __future__ import annotations

from ... import _compat  # noqa: F401  (PySide6 6.12 on Python < 3.12: see app/_compat.py)

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF
from PySide6.QtWidgets import (QComboBox, QGraphicsRectItem, QHBoxLayout, QLabel, QSizePolicy,
                               QSpinBox, QStackedWidget, QVBoxLayout, QWidget)

from simcore.tensor_parallel import weight_slices
from simcore.transformer_lab import TINY

from ... import theme
from ...hint import hint_page
from . import weights_texts as words
from .weights_data import PER_LAYER, device_matrix, full_matrix, overlap_ranks, region_rects, tp_n_for
from .weights_items import Canvas, WrappingText, cosmetic_pen, font_at, halo_colour
from .weights_layout import role_runs, weights_layout
from .weights_texts import NAMES, weights_shape, weights_texts

WEIGHT_KINDS = ("tp-forward", "decode")  # scenarios whose run carries shard_params_tp's output
MATRICES = ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down", "lm_head",
            "embed", "attn_norm", "mlp_norm", "final_norm")
COLORMAP = "CET-D1A"  # diverging blue–white–red: 0 is white, the sign is the hue


# ---------------------------------------------------------------------------------------
# The view
# ---------------------------------------------------------------------------------------
class WeightsView(QWidget):
    """
    Follows a ScenarioModel: for the TP scenarios, one matrix of one layer (chosen here) and who
    holds which part of it. Test hooks: `full_image`, `slice_images[d]` (ImageItems),
    `outlines[d]` (the device's outline rect items, each with `.region`, its exact QRectF in
    matrix cells), `slice_texts[d]` (everything about a slice: its tooltip), `slice_labels[d]`
    (the text drawn beside it), `plan` (the WeightsLayout applied last), `info` (the correctness
    line), `caption`.
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
        self._cbar_px = None
        self.presenting = theme.presenting_now()  # presentation mode: the controls stay small (set_presenting)
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
        self.canvas = Canvas()
        self.canvas.setObjectName("weightsCanvas")
        root = self.canvas.ci
        self.cmap = pg.colormap.get(COLORMAP)
        self.lut = self.cmap.getLookupTable(nPts=256)
        self.full_title = WrappingText(root)
        self.grid_title = WrappingText(root)
        self.axes_label = WrappingText(root)
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
    PRESENT_TEXT_SHARE = {"info": 0.09, "caption": 0.11}  # presenting: the heatmaps are what the room reads
    PRESENT_CONTROL_SCALE = 1.5  # presenting: the matrix and layer pickers are the lecturer's, no larger

    def set_presenting(self, on: bool):
        """Presentation mode (app/classroom/presentation.py): the pickers at most 1.5× and the info line
        and caption a smaller share, so the heatmaps keep the screen at every text scale."""
        if bool(on) != self.presenting:
            self.presenting = bool(on)
            self._apply_theme()
            self._layout()

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
            share = (self.PRESENT_TEXT_SHARE if self.presenting else self.SIDE_TEXT_SHARE)[name]
            room = share * H

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
            label.setMaximumHeight(max(int(room), QFontMetricsF(label.font()).height() + 4))

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
    def reset_settings(self):
        """The matrix and layer a new view shows (a deck scene names neither)."""
        self.select(MATRICES[0], 0)

    def select(self, key: str | None = None, layer: int | None = None):
        """Show matrix `key` (a name of MATRICES) of layer `layer`."""
        if key is not None:
            if key not in MATRICES:
                raise ValueError(f"unknown matrix {key!r}; choose one of {', '.join(MATRICES)}")
            self.matrix_combo.setCurrentIndex(MATRICES.index(key))
        if layer is not None:
            self.layer_spin.setValue(layer)

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
        self.layout_shape = weights_shape(run, key, layer)
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
                                    border=pg.mkPen(halo_colour(c), width=1))
                badge.setFont(font)
                badge.device, badge.region, badge.rank = d, r, self.ranks[d]
                box.addItem(badge)
                self._badges.append((box, badge))

    def _outline_pair(self, region: QRectF, c: QColor, width: float) -> list:
        """A halo and a coloured rectangle around `region`; returns [halo, colour]."""
        out = []
        for pen, z in ((cosmetic_pen(halo_colour(c), width + 3), 10), (cosmetic_pen(c, width), 11)):
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
        pen_w = theme.line("highlight")
        root = self.canvas.ci
        for d, a in enumerate(arrays):
            c = self.colors[d]
            vb = pg.ViewBox(enableMouse=False, invertY=True, enableMenu=False, defaultPadding=0)
            vb.setParentItem(root)
            img = pg.ImageItem(a, axisOrder="row-major", levels=self.levels)
            img.setLookupTable(self.lut)
            vb.addItem(img)
            for pen, z in ((cosmetic_pen(halo_colour(c), pen_w + 3), 10), (cosmetic_pen(c, pen_w), 11)):
                box = QGraphicsRectItem(QRectF(0, 0, a.shape[1], a.shape[0]))
                box.setPen(pen)
                box.setZValue(z)
                vb.addItem(box, ignoreBounds=True)  # a cosmetic pen's width is not in cells
            label = WrappingText(root, Qt.AlignLeft if self.layout_shape.stacked else Qt.AlignHCenter)
            self.slice_images.append(img)
            self.slice_boxes.append(vb)
            self.slice_labels.append(label)
            self.slice_texts.append("")
        # runs of neighbours with the same role (KV groups on several GPUs) share one role label
        cfg = self.model.run.tp.cfg
        self.role_runs = role_runs([words.what(cfg, self.n, self.key, ws, d) for d, ws in enumerate(self.slices)])
        self.role_labels = []
        for _ in self.role_runs:
            item = WrappingText(root, Qt.AlignHCenter)
            item.setVisible(False)
            self.role_labels.append(item)

    # -- texts (again on every language change) ---------------------------------------------
    def _texts(self):
        if not self._applicable:
            self._side_full = {"info": ("", ""), "caption": ("", "")}
            self._fit_side_texts()
            return
        run = self.model.run
        tp, n = run.tp, self.n
        pal = theme.palette()
        self.texts = weights_texts(run, self.key, self.layer)
        self.full_title.set(self.texts.full_title)
        self.grid_title.set(self.texts.grid_title)
        self.axes_label.set(self.texts.axes, role="body", color=pal.text_muted)
        self.full_title.setToolTip(words.model_text(tp.cfg, n))
        if self.replicated_label is not None:
            self.replicated_label.setText(words.replicated_text(n))
        for d in range(n):
            self.slice_texts[d] = words.slice_text(d, self.slice_images[d].image.shape, self.texts.roles[d])
            for item in (self.slice_images[d], self.slice_labels[d]):
                item.setToolTip(self.slice_texts[d])
        colours = words.colours_text(self.levels[1])
        self.cbar.setToolTip(colours)
        check = words.check_text(tp)
        caption = words.caption(tp.cfg, n, self.key, self.slices[0], self.slice_images[0].image.shape)
        self._side_full = {"info": (check, check + "\n" + words.check_tip(tp)), "caption": (caption, colours)}
        self._fit_side_texts()
        self._layout()

    # -- layout (on every resize, language or theme change) ------------------------------------
    def _layout(self):
        """Apply weights_layout for the canvas' size: the largest cells that leave room for the texts."""
        if not self._applicable or not self.slice_boxes:
            return
        s = theme.scale()
        lay = weights_layout(self.canvas.width(), self.canvas.height(), s, self.texts, self.layout_shape)
        self.plan, self._text_factor = lay, lay.factor
        for item, place in ((self.full_title, lay.full_title), (self.grid_title, lay.grid_title),
                            (self.axes_label, lay.axes)):
            item.setFont(place.font)
            item.setTextWidth(place.rect.width())
            item.setPos(place.rect.topLeft())
        (R, C), pad = self.shape, 4 * s
        self._fit(self.matrix_box, lay.matrix, C, R, 0.0)
        self.header.setGeometry(lay.header)
        self.header.setVisible(lay.header.height() > 0)
        self.side.setGeometry(lay.side)
        self.side.setVisible(lay.side.width() > 0)
        for d, (vb, label) in enumerate(zip(self.slice_boxes, self.slice_labels)):
            rows, cols = self.slice_images[d].image.shape
            self._fit(vb, lay.slices[d], cols, rows, pad)
            self._show_text(label, lay.labels[d])
        for i, item in enumerate(self.role_labels):
            item.setVisible(bool(lay.roles))
            if lay.roles:
                self._show_text(item, lay.roles[i])
        # the colour bar's ticks shrink with the text; a short bar (a small tab at 2.5×): its ends and 0
        # only, or pyqtgraph's ticks overlap
        axis, (lo, hi) = self.cbar.getAxis("right"), self.levels
        font = font_at("body", False, lay.factor, s)
        if self._cbar_px != font.pixelSize():
            self._cbar_px = font.pixelSize()
            axis.setTickFont(font)
        axis.setWidth(lay.cbar_axis_w)
        self.cbar.setGeometry(lay.cbar)
        axis.setTicks([[(lo, f"{lo:.2g}"), (0.0, "0"), (hi, f"{hi:.2g}")]] if lay.cbar_short else None)
        self._place()

    @staticmethod
    def _show_text(item, place):
        item.setFont(place.font)
        item.setDefaultTextColor(QColor(theme.palette().text))
        item.setHtml(place.html)
        item.setTextWidth(place.rect.width())
        item.setPos(place.rect.topLeft())

    @staticmethod
    def _fit(vb, rect: QRectF, cols: int, rows: int, pad: float):
        """Show cells [0, cols) × [0, rows) exactly in `rect` (pixels), with `pad` pixels of room around."""
        vb.setGeometry(rect.adjusted(-pad, -pad, pad, pad))
        px, py = pad * cols / max(rect.width(), 1e-6), pad * rows / max(rect.height(), 1e-6)
        vb.setRange(xRange=(-px, cols + px), yRange=(-py, rows + py), padding=0)

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
        font = font_at("device", True, self._text_factor)
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
                texts = [words.replicated_text(n), self.tr("replicated")] if n > 1 else [words.replicated_text(n)]
                room = box.width() * (1 - centre.x())  # the header's x range is [0, 1]
                badge.setText(next((t for t in texts if fm.horizontalAdvance(t) + 6 <= room), ""))
                continue
            room = r.height() / sy if self.split_rows else r.width() / sx
            long_text = words.gpu_name(d)
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
        picker = min(body, round(theme.FONT_PX["body"] * self.PRESENT_CONTROL_SCALE)) if self.presenting else body
        for w in (self.layer_label, self.matrix_label, self.layer_spin, self.matrix_combo):
            w.setStyleSheet(f"font-size: {picker}px;")
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
