"""
step_timeline_dialog — opening the step timeline: the window holding a StepTimelineView
(StepTimelineDialog), open_step_timeline / open_from_params / StepTimelineOpener, the click on the
decode-latency plot that opens it (attach_to_latency_view, n_at_scene_pos, overlap_at_scene_pos),
and the command line `python -m app.views.timeline.step_timeline` (main).
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, Slot
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QDialog, QToolTip, QVBoxLayout

from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.hw_specs import CHIPS
from simcore.links import LINKS
from simcore.llm_math import MODELS

from ... import theme
from .step_timeline import StepTimelineView
from ...core.step_timeline_model import MAX_STEP_N, OVERLAPS, StepSpec, tp_degrees
from ...words import fmt_time


def _tr(text):
    return QCoreApplication.translate("StepTimelineView", text)


class StepTimelineDialog(QDialog):
    """
    A non-modal window holding one StepTimelineView. A window, not a dock: the latency view is
    a tab of the main window and a page of its own; a window works from both, can go to the
    projector's screen at its own size, and one is reused per parent, so clicks do not pile up.
    """

    def __init__(self, spec: StepSpec, overlap="none", simulate=None, sync=False, parent=None):
        super().__init__(parent)
        self.setObjectName("StepTimelineDialog")
        self.setModal(False)
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self.view = None
        self.show_spec(spec, overlap, simulate, sync)
        self.resize(round(1280 * min(theme.scale(), 1.5)), round(720 * min(theme.scale(), 1.5)))

    def show_spec(self, spec: StepSpec, overlap="none", simulate=None, sync=False):
        """Show this step: the first time a new view, then the same view with another spec."""
        if self.view is None:
            self.view = StepTimelineView(spec, overlap, simulate, sync, parent=self)
            self._lay.addWidget(self.view)
        else:
            self.view._simulate, self.view.sync = simulate, bool(sync)
            self.view.set_spec(spec, overlap)
        self.setWindowTitle(self.view.windowTitle())

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange and self.view is not None:
            self.setWindowTitle(self.view.windowTitle())
        super().changeEvent(e)


def open_step_timeline(parent, model, chip, link, n, batch, ctx, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0,
                       algo="ring", prec="bf16", overlap="none", prompt=1, simulate=None,
                       sync=False, topology="") -> StepTimelineDialog:
    """
    Open (or reuse) the step-timeline window of `parent` for this setting and show it.
    model, chip, link: keys of MODELS / CHIPS / LINKS or their records (link None or '' = the
    chip's own); the rest as cost_model.tp_decode_step (prec = its compute_prec); prompt > 1:
    a prefill step. Returns the dialog; its `.view.total()` is the simulated step in seconds
    (once `.view.step_ready` has fired; at once with sync=True). Bad values raise ValueError.
    """
    spec = StepSpec(model, chip, link, n, batch, ctx, w_bytes, kv_bytes, act_bytes, algo, prec, prompt, topology)
    dlg = parent.findChild(StepTimelineDialog) if parent is not None else None
    if dlg is None:
        dlg = StepTimelineDialog(spec, overlap, simulate, sync, parent)
    else:
        dlg.show_spec(spec, overlap, simulate, sync)
    dlg.show()
    dlg.raise_()
    return dlg


def open_from_params(parent, params: dict, n: int, **kw) -> StepTimelineDialog:
    """open_step_timeline from the decode-latency view's params() dict (model, chip, link, batch, ...)."""
    return open_step_timeline(parent, params["model"], params["chip"], params.get("link", ""), int(n),
                              params["batch"], params["ctx"], params.get("w_bytes", 2.0),
                              params.get("kv_bytes", 2.0), params.get("act_bytes", 2.0),
                              params.get("algo", "ring"), params.get("prec", "bf16"),
                              topology=params.get("machine", ""), **kw)


class StepTimelineOpener(QObject):
    """
    A slot for any signal that carries n: `opener.open_at(n)` opens the step timeline of
    `parent` for the parameters `params()` returns (the latency view's params() dict).
    """

    def __init__(self, parent, params, **kw):
        super().__init__(parent)
        self._widget, self._params, self._kw = parent, params, kw
        self.dialog = None

    @Slot(int)
    def open_at(self, n: int):
        self.dialog = open_from_params(self._widget, self._params(), n, **self._kw)



def n_at_scene_pos(view, scene_pos) -> int | None:
    """
    The n a click on the latency view's decode plot (x is log10 n) asks for, or None outside the
    plot: the tensor-parallel degree nearest on the log axis (the plot's points), or the n under
    the mouse when that is above MAX_STEP_N (the caller says it cannot open that).
    """
    vb = view.plot1.getViewBox()
    if not vb.sceneBoundingRect().contains(scene_pos):
        return None
    x = vb.mapSceneToView(scene_pos).x()
    n = int(min(max(round(10 ** x), 1), view.params()["n_max"]))
    if n > MAX_STEP_N:
        return n
    degrees = tp_degrees(MODELS[view.params()["model"]])
    return min(degrees, key=lambda d: abs(math.log10(d) - x)) if degrees else n


def overlap_at_scene_pos(view, scene_pos, n: int) -> str:
    """
    Which curve a click at n asks for: "async" when the overlapped t_step is drawn and the click
    is nearer to it than to the plain t_step (on the log axis), else "none".
    """
    drawn = view.overlap_curve() if hasattr(view, "overlap_curve") else None
    if drawn is None:
        return "none"
    y = view.plot1.getViewBox().mapSceneToView(scene_pos).y()
    plain, over = (np.interp(n, xs, ys) for xs, ys in (view.curves()["t_step"], drawn))
    return "async" if abs(math.log10(over) - y) < abs(math.log10(plain) - y) else "none"


def attach_to_latency_view(view, **kw):
    """
    Make a left click on the decode-latency plot open the step timeline for the n under the
    mouse, with the overlap of the curve clicked (overlap_at_scene_pos). Returns the slot connected (keep it to disconnect). The one line the latency view needs:
    `step_timeline.attach_to_latency_view(self)` at the end of its __init__.
    """
    def on_clicked(ev):
        if ev.button() != Qt.LeftButton or ev.double():
            return
        n = n_at_scene_pos(view, ev.scenePos())
        if n is None:
            return
        ev.accept()
        if n > MAX_STEP_N:
            QToolTip.showText(QCursor.pos(), _tr("The step timeline opens for n up to {max}: it simulates every "
                                                 "ring message.").format(max=MAX_STEP_N), view.latency_widget)
            return
        open_from_params(view, view.params(), n, **{**kw, "overlap": overlap_at_scene_pos(view, ev.scenePos(), n)})

    view.latency_widget.scene().sigMouseClicked.connect(on_clicked)
    return on_clicked


# ---------------------------------------------------------------------------------------
# Command line: python -m app.views.timeline.step_timeline --model llama3-70b --n 8 --screenshot step.png
# ---------------------------------------------------------------------------------------
def _parser():
    p = argparse.ArgumentParser(prog="python -m app.views.timeline.step_timeline",
                                description="One decode step of a real model, per GPU, on one clock.")
    p.add_argument("--model", default="llama3-70b", help="one of: " + ", ".join(MODELS))
    p.add_argument("--chip", default="h100", help="one of: " + ", ".join(CHIPS))
    p.add_argument("--link", default="", help="one of: " + ", ".join(LINKS) + " (default: the chip's own)")
    p.add_argument("--n", default=8, type=int)
    p.add_argument("--batch", default=32, type=int)
    p.add_argument("--ctx", default=8192, type=int)
    p.add_argument("--w-bytes", default=2.0, type=float)
    p.add_argument("--kv-bytes", default=2.0, type=float)
    p.add_argument("--act-bytes", default=2.0, type=float)
    p.add_argument("--algo", default="ring", choices=list(ALLREDUCE_ALGOS))
    p.add_argument("--prec", default="bf16")
    p.add_argument("--overlap", default="none", choices=OVERLAPS)
    p.add_argument("--prefill", default=1, type=int, metavar="L", help="a prefill of L tokens instead of a decode step")
    p.add_argument("--layer", default=None, type=int, help="zoom into this layer")
    p.add_argument("--lang", default="en", choices=("en", "zh"))
    p.add_argument("--size", default="1280x720", help="window size, WxH")
    p.add_argument("--screenshot", default=None, metavar="PATH", help="save the window as PNG and exit")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
        spec = StepSpec(args.model, args.chip, args.link, args.n, args.batch, args.ctx, args.w_bytes,
                        args.kv_bytes, args.act_bytes, args.algo, args.prec, args.prefill)
    except ValueError as e:
        print(f"step_timeline: error: {e}", file=sys.stderr)
        return 2
    if args.screenshot and not os.environ.get("DISPLAY") and sys.platform.startswith("linux"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from ...i18n import set_language

    app = QApplication.instance()
    if app is None:  # our own process: the app's look (a caller's application keeps its own)
        app = QApplication([sys.argv[0]])
        app.setStyleSheet(theme.stylesheet())
    set_language(app, args.lang)
    view = StepTimelineView(spec, args.overlap, sync=bool(args.screenshot))  # a window opens at once
    view.resize(w, h)
    view.show()

    def on_ready():
        if args.layer is not None:
            view.zoom_to_layer(args.layer)
        print(f"simulated step {fmt_time(view.total())} (overlap {args.overlap}), roofline with no overlap "
              f"{fmt_time(view.roof['t_step_no_overlap'])}, lower bound {fmt_time(view.roof['t_lower_bound'])}; "
              f"simulation took {view.last_sim_seconds * 1e3:.0f} ms")

    if not args.screenshot:
        view.step_ready.connect(on_ready)
        return app.exec()
    app.processEvents()
    if view.data is None:  # the engine refused this setting
        print(f"step_timeline: error: {view.error}", file=sys.stderr)
        return 2
    try:
        on_ready()
    except ValueError as e:
        print(f"step_timeline: error: {e}", file=sys.stderr)
        return 2
    app.processEvents()
    ok = view.grab().save(args.screenshot)
    view.close()
    return 0 if ok else 1
