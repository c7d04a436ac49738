"""
step_timeline_texts — what the step timeline says: the headline (the step's setting, the
simulated step beside the roofline with no overlap and the lower bound), why they agree or differ (explain, from
step_sim.roofline_gap), the legend, and the tooltips of bars and collective spans. One
translation context ("StepTimelineView") for the whole view, whichever module says the text.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QColor

from simcore.step_sim import roofline_gap

from ... import theme
from .step_timeline_items import COMM_COLOR, KIND_COLOR, RECV_COLOR, SPAN_ALPHA, kind_names, opaque_on_background
from ...core.step_timeline_model import AGREE_REL, KINDS, fmt_si
from ...words import fmt_time, op_title, place_name


def _tr(text):
    return QCoreApplication.translate("StepTimelineView", text)


def op_detail(spec, d, op, layer, flops, nbytes, seconds, chunks) -> str:
    """The tooltip of a compute bar."""
    peak, bw = spec.chip.peak_flops(spec.prec), spec.chip.mem_bw
    where = (_tr("GPU {d}, layer {layer}: {op}").format(d=d, layer=layer, op=op) if layer >= 0 else
             _tr("GPU {d}: {op}").format(d=d, op=op))
    bound = _tr("compute-bound") if flops / peak > nbytes / bw else _tr("memory-bound")
    what = _tr("{time} · {flops}FLOP · {bytes}B from HBM · {bound}").format(
        time=fmt_time(seconds), flops=fmt_si(flops), bytes=fmt_si(nbytes), bound=bound)
    if chunks > 1:
        what += "\n" + _tr("{k} chunks: the ring sends each one while the next is computed").format(k=chunks)
    return f"{where}\n{what}"


def coll_detail(d, c, seconds) -> str:
    """The tooltip of a collective's span on GPU d."""
    return _tr("GPU {d}: {title}, {where}\n{time} on this GPU · S = {bytes}B").format(
        d=d, title=op_title(c.op, c.algo), where=place_name(c.label), time=fmt_time(seconds), bytes=fmt_si(c.nbytes))


def overlap_name(o):
    return {"none": _tr("none"), "async": _tr("async")}[o]


def legend_html(dense: bool) -> str:
    """The legend: one swatch per op kind, then the collectives' (one, or sending / receiving / span)."""
    names = kind_names()
    sw = round(theme.px("small"))

    def swatch(color, text):
        return (f'<span style="background-color:{color}; color:{color};">&nbsp;&nbsp;&nbsp;&nbsp;</span>'
                f"&nbsp;{esc(text)}")
    items = [swatch(KIND_COLOR[k], names[k]) for k in KINDS if k != "other"]
    if dense:
        items.append(swatch(COMM_COLOR, _tr("collective")))
    else:
        span = QColor(COMM_COLOR)
        span.setAlpha(SPAN_ALPHA)
        items += [swatch(COMM_COLOR, _tr("sending")), swatch(RECV_COLOR, _tr("receiving")),
                  swatch(opaque_on_background(span), _tr("collective"))]
    return f'<span style="font-size:{sw}px;">' + " &nbsp;&nbsp; ".join(items) + "</span>"


def headline_html(s, roof, total, overlap) -> str:
    """The two headline lines: the step's setting, then the simulated step beside the roofline's t_step."""
    step = _tr("Decode step") if s.prompt == 1 else _tr("Prefill of {L} tokens").format(L=s.prompt)
    line1 = _tr("{step}: {model} on {n} × {chip} · batch {batch} · context {ctx} · overlap: {overlap}").format(
        step=step, model=s.model.name, n=s.n, chip=s.chip.name, batch=s.batch, ctx=s.ctx,
        overlap=overlap_name(overlap))
    line2 = summary_line(roof, total)
    return (f"<b>{esc(line1)}</b><br><span style='font-size:{round(theme.px('caption'))}px'>"
            f"<b>{esc(line2)}</b></span>")


def summary_line(roof, total) -> str:
    """The simulated step beside the two curves it is compared with, each named: the roofline
    that adds communication to compute (no overlap: cost_model's t_step_no_overlap) and the lower
    bound max(t_math, t_mem, t_comm) (t_lower_bound), which no schedule beats. An overlapped step
    may beat the first, never the second."""
    return _tr("Simulated step: {total} · roofline, no overlap (max(t_math, t_mem) + t_comm): {roof} · "
               "lower bound (max(t_math, t_mem, t_comm)): {bound}").format(
        total=fmt_time(total, 4), roof=fmt_time(roof["t_step_no_overlap"], 4),
        bound=fmt_time(roof["t_lower_bound"], 4))


def explain(comm, spec, roof) -> str:
    """
    Why the simulated step and the roofline's t_step agree or differ: the engine's
    step_sim.roofline_gap splits the difference into per-op, counted and communication parts.
    """
    gap = roofline_gap(comm, spec.chip, roof, spec.prec)
    tol = AGREE_REL * roof["t_step"]
    terms = _tr("Roofline terms: t_math {m} · t_mem {b} · t_comm {c}.").format(
        m=fmt_time(roof["t_math"]), b=fmt_time(roof["t_mem"]), c=fmt_time(roof["t_comm"]))
    if abs(gap["t_sim"] - gap["t_step"]) <= tol:
        if gap["compute_bound_ops"] == 0:
            why = [_tr("Every op is memory-bound, so the simulated step equals the roofline's t_step.")]
        elif gap.get("memory_bound_ops", 1) == 0:
            why = [_tr("Every op is compute-bound, so the simulated step equals the roofline's t_step.")]
        else:
            why = [_tr("The simulated step equals the roofline's t_step.")]
    else:
        why = []
        if gap["per_op"] > tol:
            why.append(_tr("+{t}: {k} ops are compute-bound; each op hides only its own memory traffic, so "
                       "the sum of the ops is longer than max(t_math, t_mem).").format(
                t=fmt_time(gap["per_op"]), k=gap["compute_bound_ops"]))
        if abs(gap["counted"]) > tol:
            why.append(_tr("{t}: work the roofline leaves out (K/V projections replicated when n exceeds "
                       "the KV heads, vocabulary padding).").format(t=_signed(gap["counted"])))
        if gap["comm"] < -tol:
            why.append(_tr("{t}: communication hidden under compute by the overlap; {exposed} stays "
                       "exposed.").format(t=_signed(gap["comm"]), exposed=fmt_time(gap["exposed_comm"])))
        elif gap["comm"] > tol:
            why.append(_tr("{t}: communication the roofline does not count, or waiting for the slowest "
                       "GPU.").format(t=_signed(gap["comm"])))
    return " ".join(why + [terms])


def _signed(s: float) -> str:
    return ("+" if s >= 0 else "−") + fmt_time(abs(s))


def esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
