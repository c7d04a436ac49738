"""
The formula panel: the closed form of the current collective written symbolically, the same
with the numbers substituted, and beside it the total the simulation measured.

Every closed form on one switch has the shape  T = a·α + b·S/β:  a latencies on the critical
path and b·S bytes through the busiest port. The algorithm's registry record
(simcore.comm_sim.ALGORITHMS[op][algo]) gives both the slide's formula and (a, b); the value is
always checked against simcore.comm_sim.t_formula, the one place the cost model lives.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from simcore.comm_sim import algorithm, t_formula

from .explain import fmt_bw, fmt_bytes, fmt_time, op_title

_SYMBOL = re.compile(r"[nαβS]")


@dataclass(frozen=True)
class ClosedForm:
    """T = a·α + b·S/β for one collective on n devices; `text` is the formula as on a slide."""

    op: str
    algo: str
    n: int
    a: float  # latencies on the critical path
    b: float  # bytes through the busiest port, in units of S
    text: str  # e.g. "2(n − 1) · (α + S/(n·β))"

    def seconds(self, S: float, alpha: float, bw: float) -> float:
        return self.a * alpha + self.b * S / bw

    @property
    def html(self) -> str:
        """The formula with its symbols in italics."""
        return _SYMBOL.sub(lambda m: f"<i>{m.group(0)}</i>", html.escape(self.text))

    def substituted(self, S: float, alpha: float, bw: float) -> str:
        """The formula with n, α, S and β replaced by their values (HTML)."""
        values = {"n": str(self.n), "α": fmt_time(alpha), "S": fmt_bytes(S), "β": fmt_bw(bw)}
        text = re.sub(r"(?<=[0-9)])(?=[αβS])", "·", self.text)  # 2α -> 2·α before α becomes a number
        text = re.sub(r"(?<=n)(?=[αβS])", "·", text)
        return html.escape(_SYMBOL.sub(lambda m: values[m.group(0)], text))


def _times(k: float, value: str) -> str:
    """'7 · 146 ns', or just the value when k is 1."""
    return value if k == 1 else f"{k:.4g} · {value}"


def closed_form(op: str, algo: str, n: int) -> ClosedForm:
    """The closed form of one collective on n devices, from the algorithm's registry record."""
    rec = algorithm(op, algo)
    n = int(n)
    a, b = rec.closed_form(float(n))
    return ClosedForm(op, algo, n, float(a), float(b), rec.formula(n))


def formula_html(op: str, algo: str, n: int, S: float, alpha: float, bw: float,
                 simulated: float | None = None, link_name: str = "") -> str:
    """
    The panel's rich text. S: the full array's bytes; alpha: s per message; bw: bytes/s per
    port and direction; simulated: the trace's duration of this collective (s), if known.
    """
    cf = closed_form(op, algo, n)
    t = t_formula(algo, n, S, alpha, bw, op=op)  # the engine's value; cf must agree with it
    title = html.escape(op_title(op, algo))
    rows = [
        f"<p style='margin:0'><b>{title}</b> &nbsp; <i>n</i> = {n}</p>",
        f"<p style='font-size:130%; margin:6px 0'><i>T</i> = {cf.html}</p>",
    ]
    if n == 1:
        one = QCoreApplication.translate("FormulaPanel", "One device: nothing to send, T = 0.")
        rows.append(f"<p style='margin:4px 0'>{one}</p>")
    else:
        lat, band = cf.a * alpha, cf.b * S / bw
        rows += [
            f"<p style='margin:2px 0'>&nbsp;&nbsp;= {cf.substituted(S, alpha, bw)}</p>",
            f"<p style='margin:2px 0 8px 0'>&nbsp;&nbsp;= {_times(cf.a, fmt_time(alpha))} + "
            f"{_times(cf.b, fmt_time(S / bw))} = {fmt_time(lat)} + {fmt_time(band)} = <b>{fmt_time(t)}</b></p>",
        ]
        split = QCoreApplication.translate("FormulaPanel", "latency term %1: %2 · bandwidth term %3: %4")
        split = (split.replace("%1", _times(cf.a, "<i>α</i>").replace(" · ", "·")).replace("%2", f"{fmt_time(lat)} ({100 * lat / t:.0f}%)")
                 .replace("%3", _times(cf.b, "<i>S</i>/<i>β</i>").replace(" · ", "·"))
                 .replace("%4", f"{fmt_time(band)} ({100 * band / t:.0f}%)"))
        rows.append(f"<p style='margin:2px 0'>{split}</p>")
    if simulated is not None:
        ok = abs(simulated - t) <= 1e-9 * max(t, 1e-300)
        if ok:
            sim = QCoreApplication.translate("FormulaPanel", "simulated (trace): %1 — equals the closed form ✓")
        else:
            sim = QCoreApplication.translate("FormulaPanel", "simulated (trace): %1 — differs from the closed form")
        sim = sim.replace("%1", f"<b>{fmt_time(simulated)}</b>")
        rows.append(f"<p style='margin:8px 0 2px 0'>{sim}</p>")
    legend = QCoreApplication.translate(
        "FormulaPanel", "α: latency per message · β: bandwidth per port and direction · "
        "S: bytes of the full array · n: devices")
    link = f" ({html.escape(link_name)}: α = {fmt_time(alpha)}, β = {fmt_bw(bw)})" if link_name else ""
    rows.append(f"<p style='margin:6px 0 0 0; font-size:85%'>{html.escape(legend)}{link}</p>")
    return "\n".join(rows)


class FormulaPanel(QWidget):
    """
    Shows the closed form of the collective running at the playback time. Call
    `show_collective(...)` directly, or `bind(model, playback)` to follow the app's state.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("FormulaPanel")
        self._label = QLabel()
        self._label.setObjectName("formula")
        self._label.setTextFormat(Qt.RichText)
        self._label.setWordWrap(True)
        self._label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self._label.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.NoFrame)
        scroll.setWidget(self._label)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.addWidget(scroll)
        self._args = None
        self._model = self._playback = None
        self._shown_coll = None
        self.retranslate_ui()

    # -- content ----------------------------------------------------------------------
    def show_collective(self, op, algo, n, S, alpha, bw, simulated=None, link_name=""):
        self._args = (op, algo, n, S, alpha, bw, simulated, link_name)
        self._render()

    def text(self) -> str:
        return self._label.text()

    def _render(self):
        if self._args is None:
            self._label.setText("<p>" + self.tr("No collective at this time.") + "</p>")
        else:
            self._label.setText(formula_html(*self._args))

    def retranslate_ui(self):
        self.setWindowTitle(self.tr("Formula"))
        self._render()

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    # -- following the app's state ------------------------------------------------------
    def bind(self, model, playback):
        """Follow a ScenarioModel (its run's trace and link) and the Playback clock."""
        self._model, self._playback = model, playback
        model.changed.connect(self._on_model_changed)
        playback.time_changed.connect(self._on_playback_time_changed)
        self._on_model_changed()

    def _on_model_changed(self, *_):
        self._shown_coll = None
        self._on_playback_time_changed()

    def _on_playback_time_changed(self, *_):
        run = self._model.run
        trace, link = run.trace, run.link
        if not trace.collectives:
            if self._args is not None:
                self._args = None
                self._render()
            return
        c = trace.collectives[run.index.display_collective(float(self._playback.t))]  # the ring view's choice
        if c.id == self._shown_coll:
            return  # the closed form only changes when the collective does
        self._shown_coll = c.id
        self.show_collective(c.op, c.algo, c.n, c.nbytes, link.alpha, link.bw,
                             simulated=c.t_end - c.t_start, link_name=link.name)
