"""
Decode latency against the number of devices n: the cost model's roofline, drawn.

Plot 1: t_math, t_mem, t_comm and t_step = max(t_math, t_mem) + t_comm (the roofline with no
overlap; the lower bound max(t_math, t_mem, t_comm) is in the readout) of one decode step for
every integer n in 1..n_max (`simcore.cost_model.decode_sweep`, one vectorized call), log-log,
in ms. The band under t_step is coloured by the term that binds at that n; vertical markers show
where KV replication starts (n > G, the model's KV heads) and where communication overtakes
max(t_math, t_mem); the published decode times of `cost_model.REFERENCE_POINTS` appear when the
model and chip match theirs, beside our own estimate at their setting.
Plot 2: Pope et al.'s feed-forward communication per layer for 1D and 2D weight-stationary and
weight-gathered partitioning (`cost_model.pope_ffn_comm`).

The view is a function of its parameters (`params()`): a control change is debounced, then
`set_params` recomputes both sweeps on the app's worker (app/worker.py; a newer change drops an
older sweep) and updates the items in place (created once). A value the engine refuses keeps the
previous curves and says why.
"""

from __future__ import annotations

from ... import _compat  # noqa: F401  (PySide6 6.12 on Python < 3.12: see app/_compat.py)

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from simcore import cost_model
from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.links import LINKS
from simcore.hw_specs import CHIPS
from simcore.llm_math import MODELS

from . import latency_texts as texts
from ... import theme
from .latency_export import LatencyExports
from .latency_controls import LatencyControls
from .latency_items import PlotStack, fit_text, plot_widget, set_axis_label, set_range, tick_spec
from .latency_plot import DecodeItems
from ...worker import Worker
from ...core.latency_model import (DEFAULTS, FFN_COLOR, FFN_VARIANTS, TERMS, check_params, decades, ffn_sweep,
                                   first_n, latency_sweep, link_of, machine_degrees, machine_pick, matching_refs,
                                   ranges_of, sentence)

DEBOUNCE_MS = 60
COMPACT_BELOW_PX = 760  # view heights (at scale 1) below which the two plots go into tabs
SHORT_BELOW_PX = 1100  # plot widths below which legends and axis titles use their short names
PRESENT_PLOT_PX_PER_SCALE = 420  # presenting: view height (px) per 1× of the plot's text (plot_scale)
PRESENT_LINE_SCALE = 1.25  # presenting: the regimes line above the plot grows with Ctrl+= to 1.25× only


def start_params(sc=None) -> dict:
    """The parameters a new view starts from: DEFAULTS, with scenario `sc`'s algorithm and link."""
    p = dict(DEFAULTS)
    if sc is not None:
        p["algo"] = sc.algo if sc.algo in ALLREDUCE_ALGOS else p["algo"]
        if sc.link in LINKS and sc.link != CHIPS[p["chip"]].link:
            p["link"] = sc.link
    return p


class LatencyView(QWidget, LatencyExports):
    """
    Decode latency against n with its own controls. `set_params(**kw)` changes them at once
    (the widgets go through a DEBOUNCE_MS timer); `curves()`, `overlap_curve()` and `summary()`
    say what is drawn (the step timeline reads the curves); `export_png / export_svg /
    export_csv(path, which)` write plot `which` ("latency" or "ffn") and return True or False
    (with `last_error` set).
    """

    def __init__(self, model=None, playback=None, parent=None):
        super().__init__(parent)
        self.setObjectName("LatencyView")
        self.model, self.playback = model, playback
        # the scenario being built, if any (a deck scene shows this tab before its build is in)
        self._params = check_params(start_params(getattr(model, "pending", None) or getattr(model, "scenario", None)))
        self._wanted = self._params  # the parameters of the sweep being computed (or on screen)
        self.worker = Worker(parent=self)
        self.worker.done.connect(self._on_worker_done)
        self.worker.failed.connect(self._on_worker_failed)
        self._sweep = None
        self._ffn = None
        self._ffn_key = None
        self._cross_n = None
        self._refs = []  # [(ref, our seconds)] drawn now
        self.last_error = ""
        self.generation = 0  # sweeps put on screen (tests and benchmarks watch it)
        self.retranslations = 0
        self.short_names = False
        self._legend_key = self._ffn_title = None
        self.presenting = theme.presenting_now()  # presentation mode: the plot gets the screen (set_presenting)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

        self._build_controls()
        self._build_plots()
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.controls)
        lay.addLayout(self._right, 1)

        theme.notifier().changed.connect(self._on_theme_changed)
        self._apply_theme()
        self._show_for_presenting()
        self.retranslate_ui()
        try:  # the first curves before the first paint: on this thread
            self._on_worker_done(self.SWEEP, sweeps(self._params, None, None))
        except ValueError as e:
            self._on_worker_failed(self.SWEEP, str(e))
        from ..timeline import step_timeline_dialog  # the engine's step simulation loads with the tab, not at startup

        step_timeline_dialog.attach_to_latency_view(self)  # a click on a decode point opens that step's timeline

    # -- construction ---------------------------------------------------------------------------
    def _build_controls(self):
        self.controls = LatencyControls()
        c = self.controls
        # the widgets tests and the main window reach through the view
        self.preset, self.model_combo, self.chip_combo = c.preset, c.model_combo, c.chip_combo
        self.link_combo, self.algo_combo, self.batch_spin, self.ctx_spin = (c.link_combo, c.algo_combo,
                                                                             c.batch_spin, c.ctx_spin)
        self.byte_combos, self.nmax_combo, self.hint = c.byte_combos, c.nmax_combo, c.hint
        self.export_button, self.export_menu = c.export_button, c.export_menu
        c.edited.connect(self._on_controls_edited)
        c.preset_chosen.connect(self._on_controls_preset_chosen)

    def _build_plots(self):
        self.summary_label = QLabel(objectName="latencySummary")
        self.summary_label.setWordWrap(True)
        self.error_label = QLabel(objectName="latencyError")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        self.readout_label = ReadoutLabel(objectName="latencyReadout")

        self.latency_widget, self.legend1, self.title1, self.plot1 = plot_widget()
        self.ffn_widget, self.legend2, self.title2, self.plot2 = plot_widget()
        self._ticks = {}  # plot -> (key, lo, hi) of the ticks it shows
        self.latency_widget.setObjectName("latencyPlot")
        self.ffn_widget.setObjectName("ffnPlot")

        self.items = DecodeItems(self.plot1)  # the decode plot's items, named as drawn
        self.cross2 = pg.InfiniteLine(angle=90, movable=False)
        self.cross2.setZValue(40)
        self.ffn_items = {v: pg.PlotDataItem(name=v) for v in FFN_VARIANTS}
        for it in self.ffn_items.values():
            self.plot2.addItem(it)
        self.plot2.addItem(self.cross2, ignoreBounds=True)
        self._crosshair_n = None
        self.plot1.getViewBox().sigResized.connect(self._on_viewbox_resized)
        self.plot2.getViewBox().sigResized.connect(self._on_viewbox_resized)
        self.latency_widget.installEventFilter(self)
        self.ffn_widget.installEventFilter(self)
        # one proxy per plot: rate-limited to 60 Hz, and each knows which plot the mouse is over
        self._proxies = [pg.SignalProxy(self.latency_widget.scene().sigMouseMoved, rateLimit=60,
                                        slot=self._on_latency_mouse_moved),
                         pg.SignalProxy(self.ffn_widget.scene().sigMouseMoved, rateLimit=60,
                                        slot=self._on_ffn_mouse_moved)]
        for proxy in self._proxies:
            proxy.setParent(self)  # its timer dies with the view, never fires into a deleted one

        self.plot_stack = PlotStack(self.latency_widget, self.ffn_widget)
        self.splitter, self.plot_tabs = self.plot_stack.splitter, self.plot_stack.tabs
        self.compact = None
        self._compact_pending = False
        self._set_compact(False)
        self._right = QVBoxLayout()
        self._right.addWidget(self.summary_label)
        self._right.addWidget(self.error_label)
        self._right.addWidget(self.readout_label)
        self._right.addWidget(self.plot_stack, 1)

    def set_presenting(self, on: bool):
        """Presentation mode (app/classroom/presentation.py): the controls column (320 px × the text
        scale: 800 px at 2.5×, the plot cut off) and the mouse readout go away; the plot's headline
        says the setting and the regimes line stays, at most 1.25× — the plot has the screen. Esc brings
        the controls back."""
        if bool(on) != self.presenting:
            self.presenting = bool(on)
            self._show_for_presenting()
            self._apply_theme()

    def plot_scale(self) -> float:
        """The plot's text scale: the theme's, but presenting at most PRESENT_PLOT_PX_PER_SCALE of the
        view's height per 1× (1.5× on a 720-line projector, 2.4× on a 1080-line one), so the curves
        keep the screen while the words grow."""
        s = theme.scale()
        if not self.presenting:
            return s
        return max(1.0, min(s, self.height() / PRESENT_PLOT_PX_PER_SCALE))

    def _px(self, role: str) -> int:
        return round(theme.FONT_PX[role] * self.plot_scale())

    def _font(self, role: str, bold: bool = False):
        f = theme.font(role, bold)
        f.setPixelSize(max(6, self._px(role)))
        return f

    def _show_for_presenting(self):
        self.controls.setVisible(not self.presenting)
        self.readout_label.setVisible(not self.presenting)
        # the plots' tab bar is the lecturer's (like the window's tab bar): 1× while presenting
        self.plot_tabs.setStyleSheet(f"QTabBar {{ font-size: {theme.FONT_PX['body']}px; }}" if self.presenting else "")

    def _on_viewbox_resized(self, *_):
        for plot, (_key, lo, hi) in list(self._ticks.items()):
            self._set_ticks(plot, lo, hi)  # thin the x labels if they now crowd
        self._place_labels()
        self._fit_texts()  # the y title's length follows the plot's height

    def _set_compact(self, compact: bool):
        """Stack the two plots (tall view) or give each a tab (short view): a plot never gets squashed flat."""
        if self.plot_stack.set_compact(compact):
            self.compact = compact
            self._set_tab_texts()

    def _set_tab_texts(self):
        if self.compact:
            self.plot_tabs.setTabText(0, self.tr("Decode step"))
            self.plot_tabs.setTabText(1, self.tr("FFN communication (Pope et al.)"))

    def resizeEvent(self, e):
        # Switching moves both plot widgets to another parent. A resize can arrive in the middle
        # of Qt re-polishing every widget (a new app stylesheet when the text size changes), and
        # reparenting there crashed Qt; so the switch waits for the event loop.
        compact = e.size().height() < COMPACT_BELOW_PX * self.plot_scale()
        if self.presenting and self.plot_scale() != self._applied_scale:  # (the same wait as below)
            QTimer.singleShot(0, self, self._on_theme_changed)
        if compact != self.compact and not self._compact_pending:
            self._compact_pending = True
            QTimer.singleShot(0, self, self._apply_pending_compact)
        super().resizeEvent(e)

    def _apply_pending_compact(self):
        self._compact_pending = False
        self._set_compact(self.height() < COMPACT_BELOW_PX * self.plot_scale())
        self._fit_names()  # the plots' resizes came while `compact` still said the old layout

    def eventFilter(self, obj, e):
        if e.type() == QEvent.Resize and obj in (self.latency_widget, self.ffn_widget):
            self._fit_names()
        return super().eventFilter(obj, e)

    def _fit_names(self):
        """Short legend, marker and axis names in a narrow plot or in tabs, the long ones otherwise."""
        short = self.latency_widget.width() < SHORT_BELOW_PX * self.plot_scale() or bool(self.compact)
        if short != self.short_names:
            self.short_names = short
            self._set_plot_texts()
            if self._sweep is not None:
                self._draw_markers()
                self._set_summary()
        self._fit_legends()
        self._fit_texts()

    def _fit_texts(self):
        """The headline and the y-axis title in their long form when it fits the plot, else the short one."""
        if self._sweep is None:
            return
        caption, best = self._px("caption"), self.headline_n()
        title, size = fit_text([texts.headline(self._params, self._sweep, best, short) for short in (False, True)],
                               self._font("caption", bold=True), caption,
                               self.latency_widget.width() - 24 * self.plot_scale())
        if (title, size) != getattr(self, "_title", None):  # a new title re-lays out the plot: only on a change
            self._title = (title, size)
            self.title1.setText(title, color=theme.palette().text, size=f"{size}px", bold=True)
        # the y title: long when its painted length fits the plot's height, measured on the axis itself
        long_y, vb_h = self.tr("time per decode step (ms)"), self.plot1.getViewBox().height()
        key = (long_y, self.short_names, caption, round(vb_h / 8))
        if key != getattr(self, "_y_label", None):
            self._y_label = key
            style = {"font-size": f"{caption}px", "color": theme.palette().text}
            ax = self.plot1.getAxis("left")
            set_axis_label(ax, long_y, style)
            if self.short_names or ax.label.boundingRect().width() > vb_h:
                set_axis_label(ax, self.tr("ms per step"), style)

    def _fit_legends(self):
        """As many legend columns as the plot's width holds: a legend never widens a plot past its widget."""
        for w, lg in ((self.latency_widget, self.legend1), (self.ffn_widget, self.legend2)):
            if not lg.items:
                continue
            # the legend fills rows first: column j holds entries j, j + cols, ...; each as wide as its widest
            widths = [label.itemRect().width() + 40 * self.plot_scale() for _sample, label in lg.items]
            avail = w.width() - 30 * self.plot_scale()
            cols = next((c for c in (4, 3, 2) if sum(max(widths[j::c], default=0) for j in range(c)) <= avail), 1)
            if cols != lg.columnCount:
                lg.setColumnCount(cols)

    # -- texts ---------------------------------------------------------------------------------
    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def retranslate_ui(self):
        self.retranslations += 1
        self.setWindowTitle(self.tr("Decode latency"))
        self.controls.retranslate()
        self._set_tab_texts()
        self.export_menu.clear()
        for which, name in texts.plot_names().items():
            for fmt, fn in (("PNG", self.export_png), ("SVG", self.export_svg), ("CSV", self.export_csv)):
                act = self.export_menu.addAction(self.tr("{plot} as {fmt}…").format(plot=name, fmt=fmt))
                act.triggered.connect(lambda _=False, w=which, f=fmt, fn=fn: self._export_dialog(w, f, fn))
        self.hint.setText(self.tr("A roofline with no overlap: each chip does 1/n of the FLOPs and reads 1/n of "
                                  "the weights and KV cache; two all-reduces per layer come on top. An overlapped "
                                  "step may beat it, never the lower bound max(t_math, t_mem, t_comm)."))
        self.controls.show_params(self._params)
        self._set_plot_texts()
        if self._sweep is not None:
            self._draw_ffn()  # its title is translated too (it used to keep the old language)
            self._draw_markers()
            self._set_summary()
            self.set_crosshair(self._crosshair_n)

    def bound_name(self, b: str, short: bool = False) -> str:
        return texts.bound_name(b, short)

    def _set_plot_texts(self):
        self._legend_key = self._ffn_title = None  # texts or look changed: rebuild legends and titles
        style = {"font-size": f"{self._px('caption')}px", "color": theme.palette().text}
        set_axis_label(self.plot1.getAxis("bottom"), self.tr("devices n (log₂ scale)"), style)
        self._y_label = None  # set by _fit_texts
        set_axis_label(self.plot2.getAxis("bottom"), self.tr("devices n (log₂ scale)"), style)
        set_axis_label(self.plot2.getAxis("left"), self.tr("per layer (µs)"), style)
        self._set_legends()

    def _set_legends(self):
        """Rebuild both legends, only when what they list changed (a rebuild costs ~10 ms)."""
        pal = theme.palette()
        hbm = self._params["chip"] if self.items.hbm.isVisible() else None
        overlapped = self.items.overlap.isVisible()
        key = (pal.key, self.plot_scale(), self.short_names, texts.bound_name("math"), hbm,
               tuple(sorted({ref.kind for ref, _ in self._refs})), overlapped)
        if key == getattr(self, "_legend_key", None):
            return
        self._legend_key = key
        texts.fill_legends(self.legend1, self.legend2, self.items, self.ffn_items, self._params["chip"],
                           self.items.hbm.isVisible(), {ref.kind for ref, _ in self._refs}, self.short_names, self.plot_scale())
        if overlapped:  # second in the list, under the plain t_step it is compared with
            self.legend1.addItem(self.items.overlap, self.tr("t_step, overlapped") if self.short_names else
                                 self.tr("t_step with overlap (async TP: collective matmul)"))
        self._fit_legends()

    # -- look ------------------------------------------------------------------------------------
    def _on_theme_changed(self):
        self._apply_theme()
        self._set_plot_texts()
        if self._sweep is not None:
            self._draw()

    def _color(self, idx) -> QColor:
        return QColor(theme.palette().device_colors[idx])

    def _apply_theme(self):
        pal = theme.palette()
        s = self._applied_scale = self.plot_scale()
        body = theme.font("body")  # the controls: the theme's size
        self.controls.widget().setFont(body)
        self.controls.setFixedWidth(round(320 * s))
        self.hint.setStyleSheet(f"color: {pal.text_muted};")
        # the headline is the decode plot's title; this line of regimes reads like the readout under it
        line = min(theme.px("body"), theme.FONT_PX["body"] * PRESENT_LINE_SCALE) if self.presenting else theme.px("body")
        # a line's height clear of the window's right edge: in Chinese at 1280×720 and 1.5× the line was
        # 1,268 px of a 1,272 px label and ran to the screen's edge (a projector's edge cuts it); now it wraps
        self.summary_label.setStyleSheet(f"color: {pal.text}; font-size: {round(line)}px; "
                                         f"padding-right: {round(line)}px;")
        self.error_label.setStyleSheet(f"color: {pal.error}; font-size: {self._px('body')}px; "
                                       "font-weight: bold;")
        self.readout_label.setStyleSheet(f"color: {pal.text}; font-size: {self._px('body')}px;")
        self.readout_label.setFont(theme.font("body", mono=False))
        tick_font = self._font("body")
        for w, plot in ((self.latency_widget, self.plot1), (self.ffn_widget, self.plot2)):
            w.setBackground(pal.background)
            for name in ("left", "bottom"):
                ax = plot.getAxis(name)
                ax.setTickFont(tick_font)
                ax.setPen(pg.mkPen(pal.text, width=max(1.0, s)))
                ax.setTextPen(pg.mkPen(pal.text))
            plot.getAxis("left").setWidth(round(95 * s))
        self.items.apply_theme(s)
        cross = QColor(pal.playhead)
        cross.setAlpha(170)
        for ln in (self.items.cross, self.cross2):
            ln.setPen(pg.mkPen(cross, width=2.0 * s))
        for v in FFN_VARIANTS:
            style = Qt.SolidLine if v != "gathered" else Qt.DashLine
            self.ffn_items[v].setPen(pg.mkPen(self._color(FFN_COLOR[v]), width=4.0 * s, style=style))

    # -- parameters --------------------------------------------------------------------------------
    def params(self) -> dict:
        """The parameters the curves on screen were computed for."""
        return dict(self._params)

    SWEEP = "sweep"  # the worker's channel

    def set_params(self, **kw) -> bool:
        """
        Change parameters (keys of DEFAULTS: model, chip, link ('' = the chip's own), batch, ctx,
        w_bytes, kv_bytes, act_bytes (bytes per element), algo, n_max, machine ('' = one switch over
        the link; a topology_presets key = that machine, its chip and its node boundary) and recompute now
        (on the worker: the curves change when it is done, at once in sync mode). On a ValueError the
        previous curves stay and the message is shown; returns False (in sync mode for the sweep's too).
        """
        self._timer.stop()
        try:
            p = check_params({**self._wanted, **kw})
        except ValueError as e:
            self._on_worker_failed(self.SWEEP, str(e))
            return False
        self._wanted = p
        job = self.worker.submit(sweeps, p, self._ffn_key, self._ffn, channel=self.SWEEP)
        return job.ok if job.delivered else True  # async: its outcome comes by signal

    def reset_settings(self) -> bool:
        """Back to the parameters a new view on the model's scenario starts from (start_params): a
        deck scene names none of them, so the one before must not leave its own."""
        p = check_params(start_params(getattr(self.model, "scenario", None)))
        return True if p == self._wanted else self.set_params(**p)

    def _on_worker_done(self, channel, result):
        self._params, self._sweep, self._valid, self._ffn_key, self._ffn = result
        self._wanted = self._params
        self.generation += 1
        self._show_error("")
        self.controls.show_params(self._params)
        self._draw()

    def _on_worker_failed(self, channel, message):
        self.worker.drop(self.SWEEP)  # a sweep still running for an earlier change would hide the refusal
        self._wanted = self._params
        self._show_error(self.tr("Not plotted: {why} The previous curves stay.").format(why=sentence(message)))
        self.controls.show_params(self._params)

    def _show_error(self, msg: str):
        self.last_error = msg
        self.error_label.setText(msg)
        self.error_label.setVisible(bool(msg))

    def _on_controls_edited(self):
        self._timer.start()  # debounced: a held arrow key or a scroll wheel recomputes once

    def _on_timer_timeout(self):
        self.set_params(**self.controls.read())

    def _on_controls_preset_chosen(self, k):
        ref = cost_model.REFERENCE_POINTS[k]
        self.set_params(model=ref.model, chip=ref.chip, link="", machine="", batch=ref.batch, ctx=ref.ctx,
                        w_bytes=float(ref.w_bytes), kv_bytes=float(ref.kv_bytes),
                        n_max=max(self._params["n_max"], 1024))

    # -- drawing ------------------------------------------------------------------------------------
    def _draw(self):
        s = self._sweep
        n = s["n"].astype(float)
        ms = {t: s[t] * 1e3 for t in TERMS}
        ok = np.isfinite(ms["t_step"])  # on a machine: only the groups it offers (t_comm NaN elsewhere)
        for t in TERMS:
            # log-log mapping is pyqtgraph's (t_comm = 0 at n = 1 skipped)
            m = ok if t in ("t_comm", "t_step") else slice(None)
            self.items.curves[t].setData(n[m], ms[t][m])
        has_overlap = "t_step_overlap" in s
        self.items.overlap.setVisible(has_overlap)
        if has_overlap:
            self.items.overlap.setData(n[ok], s["t_step_overlap"][ok] * 1e3)
        xl = np.log10(n[ok])
        refs = matching_refs(self._params)
        ref_ms = [v * 1e3 for r, ours in refs for v in (r.seconds, ours)]
        lo, hi = decades(np.concatenate([ms[t] for t in TERMS] + [ref_ms]))  # decades() skips NaN
        y0, y1 = self._set_range(self.plot1, lo, hi)
        self._yrange = (y0, y1)
        self.items.band.set_data(xl, np.log10(ms["t_step"][ok]), s["bound"][ok], y0)
        self._draw_ffn()
        self._draw_markers()
        self._set_summary()
        best = self.best_n()
        pal = theme.palette()
        self.items.best_dot.setData([{"pos": (math.log10(best), math.log10(ms["t_step"][best - 1])),
                                      "data": self.tr("best n = {n}: {ms:.1f} ms per step with no overlap").format(
                                    n=best, ms=ms["t_step"][best - 1]),
                                "brush": pg.mkBrush(pal.text), "pen": pg.mkPen(pal.background, width=3)}])
        self.set_crosshair(self.headline_n())  # the n the title names, and its readout

    def _draw_ffn(self):
        f = self._ffn
        n = f["n"].astype(float)
        us = {v: f[v] * 1e6 for v in FFN_VARIANTS}
        for v in FFN_VARIANTS:
            self.ffn_items[v].setData(n, us[v])
        self._set_range(self.plot2, *decades(np.concatenate(list(us.values()))))
        title = texts.ffn_title(self._params, f)  # which bandwidth: the link's, or the machine's for n (a machine of nodes)
        if title != self._ffn_title:  # setting a title re-lays out the plot: only when it changed
            self._ffn_title = title
            self.title2.setText(title, color=theme.palette().text, size=f"{self._px('body')}px")

    def _set_range(self, plot, lo, hi):
        y0, y1 = set_range(plot, self._params["n_max"], lo, hi)
        self._set_ticks(plot, lo, hi)
        return y0, y1

    def _set_ticks(self, plot, lo, hi):
        key, x_ticks, y_ticks = tick_spec(plot, self._params["n_max"], lo, hi, self.plot_scale())
        if self._ticks.get(plot, (None,))[0] == key:
            return  # unchanged: keep the axes' cached pictures
        self._ticks[plot] = (key, lo, hi)
        plot.getAxis("bottom").setTicks(x_ticks)
        plot.getAxis("left").setTicks(y_ticks)

    def _draw_markers(self):
        p = self._params
        self._cross_n, self._fit_n = self.items.set_markers(p, self._sweep, self._valid, self._yrange,
                                                            self.short_names)
        # published points: only beside the model and chip they were reported for
        self._refs = matching_refs(p)
        self.items.set_published(self._refs, [texts.ref_tooltip(r, o) for r, o in self._refs],
                                 [texts.estimate_tooltip(r, o) for r, o in self._refs],
                                 [texts.ref_label(r) for r, _ in self._refs])
        self._place_labels()
        self._place_labels()
        self._set_legends()

    def _place_labels(self, *_):
        if self._sweep is not None:
            self.items.place_labels(self._sweep, self._refs, MODELS[self._params["model"]].n_kv_heads)

    # -- summary and crosshair ------------------------------------------------------------------------
    def best_n(self):
        """The valid tensor-parallel degree with the smallest t_step among those whose weights + KV fit in
        HBM (among all valid degrees if none fits): cost_model.best_tp_degree."""
        return cost_model.best_tp_degree(self._sweep, CHIPS[self._params["chip"]].hbm_bytes, self._valid)[0]

    def headline_n(self) -> int:
        """The n the title names: best_n, or with the overlap drawn the n with the least overlapped step
        (among the same degrees: cost_model.best_tp_degree on t_step_overlap)."""
        if "t_step_overlap" not in self._sweep:
            return self.best_n()
        s = {**self._sweep, "t_step": self._sweep["t_step_overlap"]}
        return cost_model.best_tp_degree(s, CHIPS[self._params["chip"]].hbm_bytes, self._valid)[0]

    def summary(self) -> str:
        """The headline (the decode plot's title) and the line of regimes above the plots."""
        return self.title1.text + "\n" + self.summary_label.text()

    def _set_summary(self):
        """The headline as the decode plot's title (so every export carries it), the regimes above the plots."""
        self._title = None  # set by _fit_texts
        self._fit_texts()
        self.summary_label.setText(texts.regimes(self._params, self._sweep, self._valid, self._cross_n, self._fit_n))
        self.hint.setText(texts.hint(self._refs))

    def _on_latency_mouse_moved(self, ev):
        self._follow_mouse(self.plot1, ev[0])

    def _on_ffn_mouse_moved(self, ev):
        self._follow_mouse(self.plot2, ev[0])

    def _follow_mouse(self, plot, pos):
        vb = plot.getViewBox()
        if vb.sceneBoundingRect().contains(pos):
            self.set_crosshair(round(10 ** vb.mapSceneToView(pos).x()))

    def set_crosshair(self, n):
        """Put the vertical line of both plots at n and show every term there."""
        if self._sweep is None or n is None:
            return
        n = int(min(max(n, 1), self._params["n_max"]))
        self._crosshair_n = n
        x = math.log10(n)
        self.items.cross.setValue(x)
        self.cross2.setValue(x)
        text = texts.readout(n, self._sweep, self._ffn, n in self._valid)  # (with the overlapped step first)
        S = float(self._sweep["msg_bytes"][n - 1])
        pick = machine_pick(self._params, n, S) if n in self._valid else None
        if pick is not None:  # a machine: what its all-reduce runs at this n, and why (the engine's sentence)
            text += "\n" + texts.pick_line(n, S, pick)
        self.readout_label.set_readout(text)
        self.readout_label.setToolTip(pick[2] if pick is not None else "")

    def readout(self) -> str:
        """The readout's lines as written (before they are flowed to the view's width)."""
        return self.readout_label.readout()

    # -- what is drawn, for the step timeline ----------------------------------------------------
    def curves(self) -> dict:
        """
        {term: (n, ms)} exactly as handed to the plot items (t_comm is 0 at n = 1: not drawn on a log
        axis). Read by the step timeline (step_timeline_dialog.overlap_at_scene_pos: which curve a click
        on the plot is nearer to) and by the sweep benchmark.
        """
        return {t: (it.xData, it.yData) for t, it in self.items.curves.items()}

    def overlap_curve(self):
        """
        (n, ms) of the overlapped t_step as handed to its item, or None when it is not drawn. Read by the
        step timeline (step_timeline_dialog.overlap_at_scene_pos) beside `curves()["t_step"]`.
        """
        it = self.items.overlap
        return (it.xData, it.yData) if it.isVisible() else None


class ReadoutLabel(QLabel):
    """
    The mouse readout: lines of parts joined by " · ", flowed to the label's width with a part
    moved whole to the next line (a 1280×720 window's page is 946 px wide at 1×, and the second
    line alone was 1087 px, cut at "weight-g"). It never widens the view, and while the mouse
    moves its line count only grows at one width, so the plots under it do not jump with every n;
    a new width starts the count again.
    """

    SEP = " · "

    def __init__(self, **kw):
        super().__init__(**kw)
        self.setWordWrap(True)  # (only a single part wider than the whole label is broken inside)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self._text = ""
        self._tallest = (0, 0)  # (width, the most height its lines took at that width)

    def readout(self) -> str:
        return self._text

    def set_readout(self, text: str):
        self._text = text
        if not self.isVisible():
            self.setText(text)
        self._flow()

    def resizeEvent(self, e):
        super().resizeEvent(e)
        if e.size().width() != e.oldSize().width():
            self._flow()

    def changeEvent(self, e):
        super().changeEvent(e)
        if e.type() in (QEvent.FontChange, QEvent.StyleChange):
            self._tallest = (0, 0)
            self._flow()

    def flowed(self, width: int) -> list[str]:
        """The readout's lines at `width` px: each written line's parts packed greedily; a part
        wider than the whole width goes on by words."""
        fm = self.fontMetrics()
        out = []
        for line in self._text.split("\n"):
            cur = ""
            for part in line.split(self.SEP):
                joined = cur + self.SEP + part if cur else part
                if not cur or fm.horizontalAdvance(joined) <= width:
                    cur = joined
                    if fm.horizontalAdvance(cur) <= width:
                        continue
                    cur, joined = "", cur  # (a first part too wide on its own: by words, below)
                else:
                    out.append(cur + " ·")
                    cur = ""
                    joined = part
                if fm.horizontalAdvance(joined) <= width:
                    cur = joined
                    continue
                for word in joined.split(" "):
                    longer = cur + " " + word if cur else word
                    if cur and fm.horizontalAdvance(longer) > width:
                        out.append(cur)
                        cur = word
                    else:
                        cur = longer
            out.append(cur)
        return out

    def showEvent(self, e):
        super().showEvent(e)
        QTimer.singleShot(0, self, self._flow)  # once the page's layout has given it its width

    def _flow(self):
        if not self.isVisible():  # (a hidden page's widths are not the ones it will be shown at)
            self._tallest = (0, 0)
            self.setMinimumHeight(0)
            return
        self.ensurePolished()
        m = self.contentsMargins()
        width = self.width() - m.left() - m.right() - 2 * self.margin() - 2  # (a rounding's slack)
        lines = self.flowed(max(1, width))
        text = "\n".join(lines)
        if text != self.text():
            self.setText(text)
        need = len(lines) * self.fontMetrics().lineSpacing() + m.top() + m.bottom() + 2 * self.margin()
        if self._tallest[0] != self.width():
            self._tallest = (self.width(), 0)
        if need > self._tallest[1]:
            self._tallest = (self.width(), need)
        self.setMinimumHeight(self._tallest[1])


def sweeps(p: dict, ffn_key, ffn):
    """
    The worker's job: (p, the decode sweep, the TP degrees the machine offers, the FFN sweep's key,
    the FFN sweep), the FFN sweep reused when its key is `ffn_key`. ValueError when nothing can be drawn.
    """
    sweep = latency_sweep(p)
    valid = machine_degrees(p, sweep)  # the model's TP degrees the machine offers too
    if not valid:
        raise ValueError(f"no tensor-parallel degree of this model is a group of {p['machine']} up to "
                         f"n = {p['n_max']}")
    key = (p["model"], p["batch"], p["act_bytes"], link_of(p).bw, p["n_max"], p["machine"])
    return p, sweep, valid, key, (ffn if key == ffn_key else ffn_sweep(p))


__all__ = ["LatencyView", "latency_sweep", "ffn_sweep", "check_params", "ranges_of", "first_n", "DEFAULTS"]
