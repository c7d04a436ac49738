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

from ...words import fmt_bytes, fmt_time

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
    from ...core.frame import DONE, NEXT

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
        body = html.escape(rep.first_error or "")
        if len(rep.errors) > 1:
            body += "<br>" + html.escape(_tr("({k} more problems)").format(k=len(rep.errors) - 1))
    out = f"<p><b>{html.escape(head)}</b>" + (f"<br>{body}" if body else "") + "</p>"
    if rep.time_text:
        out += "<p>" + html.escape(rep.time_text) + "</p>"
    return out


def formula_html(run, c) -> str:
    """The formula panel for an opened run: the closed form when the algorithm is known, then the verdict."""
    link = run.link
    if c.algo in ALGORITHMS.get(c.op, {}) and c.n > 1:
        from .formula_panel import formula_html as closed

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
