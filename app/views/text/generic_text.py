"""
Words for a run the app did not build: a saved run (app/opened_run.py) whose algorithm the app
may not know (a student's "my-ring"). Everything is said from the trace's own fields, one
sentence a message:

    "GPU 3 sends chunk 5, 2 KiB, to GPU 4, which adds it to its partial sum of GPUs {3, 4}."

and the formula panel shows simcore.check's verdict on the collective (with the closed form
when the algorithm is a registered one). explain.py and formula_panel.py call in here only for
an opened run.
"""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QCoreApplication

from simcore.checker import gpus
from simcore.comm_sim import ALGORITHMS
from simcore.trace import ALL, SWITCH

from ...core.frame import DONE, NEXT
from ...words import fmt_bytes, fmt_time
from .formula_texts import formula_html as closed

MAX_SENTENCES = 8  # messages said one by one in a step; the rest are counted


def _tr(text: str) -> str:
    return QCoreApplication.translate("GenericText", text)


def unknown(run, c) -> bool:
    """An opened run's collective whose algorithm the app has no words for."""
    return getattr(run, "opened", None) is not None and c.algo not in ALGORITHMS.get(c.op, {})


def _who(d: int) -> str:
    return _tr("the switch") if d == SWITCH else _tr("GPU {d}").format(d=d)


def _set(who) -> str:
    """'GPUs {0, 2}' / 'GPU 3' in the interface's language (the braces are the lecture's set notation)."""
    s = sorted(who)
    if not s:
        return _tr("no GPU")
    if len(s) == 1:
        return _tr("GPU {d}").format(d=s[0])
    return _tr("GPUs {set}").format(set=gpus(s).removeprefix("GPUs "))


def sentence(m, after) -> str:
    """One message in words. after: the receiver's contributors of that chunk once the message is in."""
    chunk = _tr("the whole buffer") if m.chunk == ALL else _tr("chunk {c}").format(c=m.chunk)
    head = _tr("{src} sends {chunk}, {size}, to {dst}").format(src=_who(m.src), chunk=chunk,
                                                             size=fmt_bytes(m.nbytes), dst=_who(m.dst))
    if m.reduce:
        tail = _tr(", which adds it to its partial sum of {set}.").format(set=_set(after) if after else "—")
    elif len(m.contributors) > 1:
        tail = _tr(", which stores a copy: the sum of {set}.").format(set=_set(m.contributors))
    elif len(m.contributors) == 1:
        tail = _tr(", which stores a copy of {who}'s data.").format(who=_set(m.contributors))
    else:
        tail = _tr(", which stores a copy of nothing the sender held.")
    return head + tail


_NOTE = re.compile(r"^(?P<name>.*): it has (?P<total>[\d,]+) messages, more than the (?P<limit>[\d,]+) the app "
                   r"shows: the first (?P<k>\d+) of its (?P<K>\d+) collectives \((?P<kept>[\d,]+) messages\) "
                   r"are shown\.$")


def note_text(run) -> str:
    """An opened run read partly (simcore Trace.load's note: the limit and what was read), in the
    interface's language; "" for a run read whole."""
    note = getattr(getattr(run, "opened", None), "note", "") or ""
    m = _NOTE.match(note)
    if m is None:
        return note
    return _tr("{name}: it has {total} messages, more than the {limit} the app shows: the first {k} of its {K} "
               "collectives ({kept} messages) are shown.").format(**m.groupdict())


def note_html(run) -> str:
    """The note for the explanation's head (bold), or ""."""
    text = note_text(run)
    return f"<p style='font-weight:bold'>⚠ {html.escape(text)}</p>" if text else ""


def explain_html(run, f) -> str:
    """The explanation of step f.step of collective f.coll, from the trace alone."""
    tr_ = run.trace
    coll, k = f.coll, f.step
    c = tr_.collectives[coll]
    state = _tr("done") if f.state == DONE else (_tr("next") if f.state == NEXT else _tr("in progress"))
    parts = [f"<p style='font-size:120%; font-weight:bold; margin:4px 0'>"
             + html.escape(_tr("Step {k} of {K} — {state}").format(k=k + 1, K=c.n_steps, state=state)) + "</p>",
             "<p><i>" + html.escape(_tr("{op} “{algo}”: an algorithm the app does not know; each message as the "
                                        "trace records it.").format(op=c.op, algo=c.algo)) + "</i></p>"]
    msgs = [tr_.messages[i] for i in run.index.step_msgs[coll][k]]
    held = tr_.holdings(coll, step=k)
    lines = []
    for m in msgs[:MAX_SENTENCES]:
        ch = 0 if m.chunk == ALL else m.chunk
        lines.append("<li>" + html.escape(sentence(m, held.get(m.dst, {}).get(ch))) + "</li>")
    parts.append("<ul style='margin:2px 0'>" + "".join(lines) + "</ul>")
    if len(msgs) > MAX_SENTENCES:
        parts.append("<p>" + html.escape(_tr("… and {k} more messages in this step.").format(
            k=len(msgs) - MAX_SENTENCES)) + "</p>")
    t0, t1 = tr_.step_times(coll)[k]
    parts.append("<p>" + html.escape(_tr("This step: {d} on the clock ({a} → {b}); {m} messages.").format(
        d=fmt_time(t1 - t0), a=fmt_time(t0), b=fmt_time(t1), m=len(msgs))) + "</p>")
    parts.append(verdict_html(run, c))
    return "\n".join(parts)


def _us(t: float) -> str:
    return _tr("{t} µs").format(t=f"{t * 1e6:.3f}")


def finding_text(f, op: str = "") -> str:
    """simcore.check's Finding (simcore/checker.py) in the interface's language: the checker's own
    English sentence stays in simcore; this says the same from the finding's fields."""
    op = f.op or op
    k = f.kind
    if k == "no-collective":
        return _tr("the trace has no {op} to check").format(op=op or _tr("collective"))
    if k == "not-held":
        return _tr("in step {step}, GPU {src} sends chunk {c} to GPU {dst} but does not hold it").format(
            step=f.step, src=f.device, c=f.chunk, dst=f.dst)
    if k == "too-early":
        return _tr("in step {step}, GPU {src} sends chunk {c} to GPU {dst} at {t}, before it holds that data "
                   "(it lands at {lands})").format(step=f.step, src=f.device, c=f.chunk, dst=f.dst, t=_us(f.t),
                                                   lands=_us(f.lands))
    if k == "resent":
        if f.sent == f.have:
            return _tr("in step {step}, GPU {src} sends chunk {c} to GPU {dst}, which already holds it ({set}'s "
                       "data)").format(step=f.step, src=f.device, c=f.chunk, dst=f.dst, set=_set(f.have))
        return _tr("in step {step}, GPU {src} sends chunk {c} to GPU {dst}, which already holds that data in a larger "
                   "sum ({have}): the copy replaces that sum with {sent}'s data").format(
            step=f.step, src=f.device, c=f.chunk, dst=f.dst, have=_set(f.have), sent=_set(f.sent))
    if k == "twice":
        return _tr("in step {step}, GPU {d} adds {set}'s data to its chunk {c} a second time").format(
            step=f.step, d=f.device, set=_set(f.have), c=f.chunk)
    if k == "never":
        if op == "all-gather" or len(f.need) < 2:
            return _tr("GPU {d} never receives chunk {c} ({set}'s data), which {op} needs").format(
                d=f.device, c=f.chunk, set=_set(f.need), op=op)
        return _tr("GPU {d} never receives chunk {c}, which {op} needs there (it needs the sum of {set})").format(
            d=f.device, c=f.chunk, op=op, set=_set(f.need))
    if k == "wrong":
        have = (_tr("sums {set}") if len(f.have) > 1 else _tr("holds only {set}'s data") if f.have else
                _tr("holds no GPU's data")).format(set=_set(f.have))
        need = _tr("{set}'s data").format(set=_set(f.need)) if op == "all-gather" or len(f.need) < 2 else _set(f.need)
        return _tr("after step {step}, GPU {d}'s chunk {c} {have} (last sent to it by GPU {src}); {op} needs "
                   "{need}").format(step=f.step, d=f.device, c=f.chunk, have=have, src=f.src, op=op, need=need)
    if k == "values":
        text = _tr("GPU {d}'s result differs from numpy's {op}: element {j} is {got}, numpy gives {want}").format(
            d=f.device, op=op, j=f.element, got=f"{f.got:.6g}", want=f"{f.want:.6g}")
        if f.messages_ok:
            text += _tr(" although its messages carry the right contributors: the data moved is not what the "
                        "messages say")
        return text
    if k == "count" and f.device is None:
        return _tr("expected {n} inputs and {n} outputs (one per device), got {a} and {b}").format(
            n=int(f.want), a=int(f.got), b=f.outputs)
    if k == "count":
        return _tr("GPU {d}'s result has {got} values; {op} gives {want}").format(
            d=f.device, got=int(f.got), op=op, want=int(f.want))
    return f.text  # a kind this app does not know yet: the checker's English


def time_text(rep, c) -> str:
    """The report's time line (CheckReport.time_text) in the interface's language."""
    if rep.t_model is not None:
        if rep.t_model > 0 and abs(rep.time / rep.t_model - 1) < 1e-6:
            return _tr("time {t}: equals the {algo} closed form {m}").format(t=_us(rep.time), algo=c.algo,
                                                                              m=_us(rep.t_model))
        return _tr("time {t}: {r}× the {algo} closed form {m}").format(
            t=_us(rep.time), r=f"{rep.time / rep.t_model:.3g}" if rep.t_model > 0 else "∞", algo=c.algo,
            m=_us(rep.t_model))
    if rep.t_bound is not None:
        return _tr("time {t}: {r}× the lower bound {b} (α + {B} bytes through the busiest port / β)").format(
            t=_us(rep.time), r=f"{rep.time / rep.t_bound:.3g}", b=_us(rep.t_bound), B=f"{rep.busiest:,.0f}")
    return _tr("time {t}").format(t=_us(rep.time)) if rep.time_text else ""


def verdict_html(run, c) -> str:
    """simcore.check's verdict on collective c of an opened run (its messages; a trace has no arrays)."""
    rep = run.opened.report(c.id)
    if rep is None:
        return "<p>" + html.escape(_tr("Not checked here: {m} messages are more than the app replays while you "
                                       "watch; in Python, simcore.check(trace, coll={i}) says it.").format(
            m=f"{c.last_msg - c.first_msg:,}", i=c.id)) + "</p>"
    if rep.ok:
        head = "✓ " + _tr("Checked: every chunk ends as {op} needs it.").format(op=c.op)
        body = ""
    else:
        head = "✗ " + _tr("Checked: {op} is wrong.").format(op=c.op)
        body = html.escape(finding_text(rep.findings[0], c.op) if rep.findings else rep.first_error or "")
        if len(rep.errors) > 1:
            body += "<br>" + html.escape(_tr("({k} more problems)").format(k=len(rep.errors) - 1))
    out = f"<p><b>{html.escape(head)}</b>" + (f"<br>{body}" if body else "") + "</p>"
    if rep.time_text:
        out += "<p>" + html.escape(time_text(rep, c)) + "</p>"
    return out


def formula_html(run, c) -> str:
    """The formula panel for an opened run: the closed form when the algorithm is known, then the verdict."""
    link = run.link
    if c.algo in ALGORITHMS.get(c.op, {}) and c.n > 1:
        top = closed(c.op, c.algo, c.n, c.nbytes, link.alpha, link.bw, simulated=c.t_end - c.t_start,
                     link_name=link.name)
    else:
        top = ("<p><b>" + html.escape(f"{c.op} ({c.algo})") + "</b> n = " + str(c.n) + "</p><p>"
               + html.escape(_tr("No closed form for this algorithm: its time is compared with the lower "
                                 "bound, the busiest port's bytes / β.")) + "</p><p>"
               + html.escape(_tr("simulated: {t}").format(t=fmt_time(c.t_end - c.t_start))) + "</p>")
    label = (f"<p>{html.escape(_tr('Opened run'))}: {html.escape(run.opened.name)}"
             + (f" · {html.escape(c.label)}" if c.label else "") + "</p>")
    return label + top + verdict_html(run, c)
