"""
The formula panel: the closed form of the collective running at the playback time, or the
roofline of the op the GPUs compute, or an opened run's verdict. The words are formula_texts'
(and generic_text's for an opened run); this module picks which to show and when.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QVBoxLayout, QWidget

from .formula_texts import formula_html, is_machine, machine_form_html, op_html
from .generic_text import formula_html as run_html
from .rich_text import RichText


class FormulaPanel(QWidget):
    """
    Shows the closed form of the collective running at the playback time. Call
    `show_collective(...)` directly, or `bind(model, playback)` to follow the app's state.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("FormulaPanel")
        self._label = RichText()
        self._label.setObjectName("formula")
        self._label.document().setDocumentMargin(0)  # the panel's margins place it, as the story's
        self._label.setStyleSheet("background: transparent; border: none;")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.addWidget(self._label)
        self._args = None
        self._op = None  # (trace.Compute, chip, precision) while the GPUs compute, else None
        self._model = self._playback = None
        self._shown_coll = None
        self.retranslate_ui()

    # -- content ----------------------------------------------------------------------
    def show_collective(self, op, algo, n, S, alpha, bw, simulated=None, link_name=""):
        self._args, self._run_shown = (op, algo, n, S, alpha, bw, simulated, link_name), None
        self._op = None
        self._render()

    def show_op(self, rec, chip, prec="bf16"):
        """Show the roofline of op `rec` (trace.Compute) on `chip` instead of a collective."""
        self._op, self._run_shown = (rec, chip, prec), None
        self._render()

    _run_shown = None  # (run, collective) of a saved run shown (generic_text.formula_html), else None

    def _render(self):
        if self._run_shown is not None:
            from .generic_text import formula_html as run_html

            self._label.setText(run_html(*self._run_shown))
        elif self._op is not None:
            self._label.setText(op_html(*self._op))
        elif self._args is None:
            self._label.setText("<p>" + self.tr("No collective at this time.") + "</p>")
        else:
            self._label.setText(formula_html(*self._args))

    def retranslate_ui(self):
        self.setWindowTitle(self.tr("Formula"))
        self._render()
        if self._playback is not None:  # the frame's form again: a machine's is written by set_frame, not _render
            self._on_model_changed()

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    # -- following the app's state ------------------------------------------------------
    def bind(self, model, playback):
        """Follow a ScenarioModel (its run's trace and link) and the frames of the Playback's frame
        controller (`set_frame`)."""
        self._model, self._playback = model, playback
        playback.frames.register(self)
        model.changed.connect(self._on_model_changed)
        self._on_model_changed()

    def _on_model_changed(self, *_):
        self._shown_coll = None
        f = self._playback.frames.current()
        if f is not None:
            self.set_frame(f)

    def set_frame(self, frame):
        """Show the closed form of what `frame` (app.core.frame.Frame) shows."""
        run = self._model.run
        if frame.index is not run.index:  # a frame of the run about to arrive (_on_model_changed)
            return
        trace, link, index, tp = run.trace, run.link, run.index, run.tp
        t = frame.t
        rec = None
        if tp is not None and tp.chip is not None and index.computes:
            rec = index.computing(0, t) or (index.first_op(0) if t <= index.eps else None)  # the start: op 1 next
        if rec is not None:  # the GPUs compute (GPU 0's op; every GPU runs the same schedule): its roofline
            if self._shown_coll != ("op", id(rec)):
                self._shown_coll = ("op", id(rec))
                self.show_op(rec, tp.chip, tp.prec)
            return
        if not trace.collectives:
            if self._args is not None or self._op is not None or self._run_shown is not None:
                self._args = self._op = self._shown_coll = self._run_shown = None
                self._render()
            return
        c = trace.collectives[frame.coll]  # the ring view's choice
        if c.id == self._shown_coll:
            return  # the closed form only changes when the collective does
        self._shown_coll = c.id
        if getattr(run, "mesh", None) is not None:  # a mesh run: the AxisCollective's own closed form
            from ...words import mesh_formula_html
            self._args, self._op, self._run_shown = None, None, None
            self._label.setText(mesh_formula_html(run.mesh, c.id))
            return
        self._run_shown = (run, c) if getattr(run, "opened", None) is not None else None
        if self._run_shown is not None:  # a saved run: closed form if known, the checker's verdict
            self._render()
            return
        topo = getattr(getattr(run, "comm", None), "topology", None)
        if topo is not None and c.n == topo.n and is_machine(topo, c.op, c.algo, c.nbytes):  # the plan's terms
            self._args = None
            self._label.setText(machine_form_html(topo, c.op, c.algo, c.nbytes, simulated=c.t_end - c.t_start))
            return
        self.show_collective(c.op, c.algo, c.n, c.nbytes, link.alpha, link.bw,
                             simulated=c.t_end - c.t_start, link_name=link.name)
