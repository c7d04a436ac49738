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

Where the parts live: the layout and placement in weights_layout (WeightsLayout, this view's
base), the graphics pieces in weights_items, reading the parameters and regions in weights_data.
"""

from __future__ import annotations

from ... import _compat  # noqa: F401  (PySide6 6.12 on Python < 3.12: see app/_compat.py)

import html as _html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF
from PySide6.QtWidgets import (QComboBox, QGraphicsRectItem, QHBoxLayout, QLabel, QSizePolicy,
                               QSpinBox, QStackedWidget, QVBoxLayout, QWidget)

from simcore.tensor_parallel import tp_layout, tp_share, weight_slices
from simcore.transformer_lab import TINY

from ... import theme
from ..text.explain import fmt_bytes
from ...hint import hint_page
from .weights_data import PER_LAYER, device_matrix, full_matrix, overlap_ranks, region_rects, tp_n_for
from .weights_items import _Canvas, _cosmetic, _halo, _Text
from .weights_layout import WeightsLayout

WEIGHT_KINDS = ("tp-forward", "decode")  # scenarios whose run carries shard_params_tp's output
MATRICES = ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down", "lm_head",
            "embed", "attn_norm", "mlp_norm", "final_norm")
NAMES = {"wq": "Wq", "wk": "Wk", "wv": "Wv", "wo": "Wo", "w_gate": "W_gate", "w_up": "W_up",
         "w_down": "W_down", "lm_head": "lm_head", "embed": "embed", "attn_norm": "attn_norm",
         "mlp_norm": "mlp_norm", "final_norm": "final_norm"}
BYTES_PER_ELEM = 8  # the toy model is float64
COLORMAP = "CET-D1A"  # diverging blue–white–red: 0 is white, the sign is the hue
CHECK_TOL = 1e-9  # max |TP − single-device logits| above this is a wrong forward (float64: ~1e-14)


# ---------------------------------------------------------------------------------------
# The view
# ---------------------------------------------------------------------------------------
class WeightsView(WeightsLayout, QWidget):
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
