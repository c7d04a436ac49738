"""
The formula panel's words: a collective's closed form written symbolically, the same with the
numbers substituted and the total the simulation measured beside it (formula_html); an op's
roofline while the GPUs compute (op_html); a machine's closed form term by term
(machine_form_html): the engine's plan's terms (simcore.plan.Term), each key in words, and the
plan's why and timed links; nothing of a machine's form is computed here. Rich text only: the
panel (formula_panel.py) shows it, and the words for an opened run (generic_text.py) put the
closed form above the checker's verdict.

Every closed form on one switch has the shape  T = a·α + b·S/β:  a latencies on the critical
path and b·S bytes through the busiest port. The algorithm's registry record
(simcore.comm_sim.ALGORITHMS[op][algo]) gives both the slide's formula and (a, b); the value is
always checked against simcore.comm_sim.t_formula, the one place the cost model lives.
"""

from __future__ import annotations

import html
import re
from typing import NamedTuple

from PySide6.QtCore import QCoreApplication

from simcore.comm_sim import algorithm, op_record, t_formula

from ...words import fmt_bw, fmt_bytes, fmt_time, op_place, op_title, plan_reason

_SYMBOL = re.compile(r"[nαβS]")


class ClosedForm(NamedTuple):
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
    if op_record(op).size == "buffer":  # nccl-tests' alltoall size: what one GPU sends and receives, its own block included
        legend = QCoreApplication.translate(
            "FormulaPanel", "α: latency per message · β: bandwidth per port and direction · "
            "S: bytes of one GPU's buffer (n blocks of S/n) · n: devices")
    link = f" ({html.escape(link_name)}: α = {fmt_time(alpha)}, β = {fmt_bw(bw)})" if link_name else ""
    rows.append(f"<p style='margin:6px 0 0 0; font-size:85%'>{html.escape(legend)}{link}</p>")
    return "\n".join(rows)


def _si(x: float, unit: str) -> str:
    """1.23e9 FLOP -> '1.23 GFLOP' (SI prefixes)."""
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


def op_html(rec, chip, prec: str) -> str:
    """
    The roofline of one op (a trace.Compute of step_sim) on `chip` at precision `prec`, as the
    panel shows it while the GPUs compute: T = max(F/P, B/W) with the numbers, which term wins
    and why (the op's FLOPs per byte against the chip's ridge point P/W), and the trace's time.
    """
    tr = QCoreApplication.translate
    peak, bw = chip.peak_flops(prec), chip.mem_bw
    t_math, t_mem = rec.flops / peak, rec.nbytes / bw
    t = max(t_math, t_mem)
    memory = t_mem >= t_math
    title = html.escape(tr("FormulaPanel", "%1 on the %2").replace("%1", op_place(rec)).replace("%2", chip.name))
    bound = tr("FormulaPanel", "memory-bound: HBM traffic sets the time") if memory else tr(
        "FormulaPanel", "compute-bound: the arithmetic sets the time")
    intensity = tr("FormulaPanel", "intensity %1 FLOP/byte vs the chip's ridge point %2 FLOP/byte").replace(
        "%1", f"{rec.flops / rec.nbytes:.3g}" if rec.nbytes else "∞").replace("%2", f"{peak / bw:.3g}")
    rows = [
        f"<p style='margin:0'><b>{title}</b></p>",
        "<p style='font-size:130%; margin:6px 0'><i>T</i> = max(<i>F</i>/<i>P</i>, <i>B</i>/<i>W</i>)</p>",
        f"<p style='margin:2px 0'>&nbsp;&nbsp;= max({_si(rec.flops, 'FLOP')} / {_si(peak, 'FLOP/s')}, "
        f"{fmt_bytes(rec.nbytes)} / {fmt_bw(bw)})</p>",
        f"<p style='margin:2px 0 8px 0'>&nbsp;&nbsp;= max({fmt_time(t_math)}, {fmt_time(t_mem)}) = "
        f"<b>{fmt_time(t)}</b></p>",
        f"<p style='margin:2px 0'>{html.escape(bound)} · {html.escape(intensity)}</p>",
    ]
    simulated = rec.t_end - rec.t_start
    ok = abs(simulated - t) <= 1e-9 * max(t, 1e-300)
    sim = tr("FormulaPanel", "simulated (trace): %1 — equals the roofline ✓") if ok else tr(
        "FormulaPanel", "simulated (trace): %1 — differs from the roofline")
    rows.append(f"<p style='margin:8px 0 2px 0'>{sim.replace('%1', f'<b>{fmt_time(simulated)}</b>')}</p>")
    legend = tr("FormulaPanel", "F: the op's FLOPs · P: peak FLOP/s (%1) · B: HBM bytes read and written · "
                "W: HBM bandwidth").replace("%1", prec)
    rows.append(f"<p style='margin:6px 0 0 0; font-size:85%'>{html.escape(legend)}</p>")
    return "\n".join(rows)


# ---------------------------------------------------------------------------------------
# A machine: the closed form of the topology's algorithm, term by term
# ---------------------------------------------------------------------------------------
_SUBSCRIPT = re.compile(r"([αβcsST]|max|Σ)_([fipV]|NCCL|axes)\b")


def math_html(text: str) -> str:
    """A formula as HTML with its subscripts shown: "α_f + S/(P·β_f)" -> α<sub>f</sub> + S/(P·β<sub>f</sub>)
    (also Σ_axes, S_p, max_V and T_NCCL)."""
    return _SUBSCRIPT.sub(r"\1<sub>\2</sub>", html.escape(text))


def _plan(topology, op: str, algo: str, S: float):
    """The engine's one plan of this collective (simcore.plan.resolve: the machine's choice's own plan when
    algo is that choice, so the reason can name the runner-up): its terms, why and timed links."""
    from simcore.plan import resolve
    return resolve(topology, op, float(S), algo)


def is_machine(topology, op: str, algo: str, S: float) -> bool:
    """Whether the collective's closed form is more than the lecture's one-switch form a·α + b·S/β on the
    topology's own link: the plan has other terms than the one "form" (nodes, a torus, a base latency, a
    launch floor) or is timed with other links (NCCL's protocol, a custom all-reduce kernel)."""
    if topology is None:
        return False
    p = _plan(topology, op, algo, S)
    return not (len(p.terms) == 1 and p.terms[0].key == "form" and p.timed is p.topology)


def timed_topology(topology, op: str, algo: str, S: float):
    """The topology as the simulation timed this collective: the plan's timed topology (on a GPU machine
    the links and base latency of NCCL's protocol for S, what topology.timed_as_machine ran the trace
    with), else the topology itself."""
    if topology is None:
        return None
    p = _plan(topology, op, algo, S)  # cached by equal topologies: p.topology may be another equal object
    return topology if p.timed is p.topology else p.timed


def protocol_line(topology, op: str, algo: str, S: float) -> str:
    """
    Which NCCL protocol the machine runs this collective with, and why, in one line: "" where the plan
    is the lecture's α–β form (the lecture's switch, a torus: why.kind "lecture"). The reason is the
    plan's why in words.plan_reason's sentence (naming the runner-up when algo is the machine's own
    choice for S), all of it in the app's language.
    """
    if topology is None:
        return ""
    why = _plan(topology, op, algo, S).why
    if why.kind == "lecture":
        return ""
    tr = QCoreApplication.translate
    proto, reason = plan_reason(why, float(S))
    if not proto:
        return tr("FormulaPanel", "No NCCL protocol: %1.").replace("%1", reason)
    return (tr("FormulaPanel", "NCCL protocol: %1 — %2.")
            .replace("%1", proto).replace("%2", reason))


def _shape(t) -> str:
    return "×".join(map(str, t.get("shape", ())))


def _launch_floor_words(t) -> str:
    floor = fmt_time(t.get("floor", 0.0))
    if t.get("mode") == "graph":
        return QCoreApplication.translate(
            "FormulaPanel", "the launch floor: no call finishes before L = %1, as measured with CUDA graphs").replace(
            "%1", floor)
    return QCoreApplication.translate(
        "FormulaPanel", "the launch floor: no call finishes before L = %1, as measured with eager launches").replace(
        "%1", floor)


# The words of each of the plan's terms (simcore.plan.Term: key, numbers), in the app's language.
_TERM_WORDS = {
    "hier-rs-intra": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "reduce-scatter inside each node ({link})").format(link=t.get("link")),
    "hier-ar-inter": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "all-reduce across nodes, every GPU on its own NIC ({link})").format(link=t.get("link")),
    "hier-ag-intra": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "all-gather inside each node ({link})").format(link=t.get("link")),
    "hier-pipeline": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "pipelined in {C} chunks: chunk c + 1 inside the node while chunk c crosses the "
                        "network").format(C=t.get("C")),
    "tree": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "NCCL's Tree: a chain of {P} GPUs in each node, a binary tree of {N} nodes across them, up "
                        "and back down, pipelined in {C} chunks of two halves").format(
        P=t.get("P"), N=t.get("N"), C=t.get("C")),
    "ring-nodes": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "{K} lockstep ring steps, each as slow as its slower port: NVLink or the NIC").format(
        K=t.get("K")),
    "torus-rings": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "bidirectional rings on each axis of the {shape} torus").format(shape=_shape(t)),
    "ring-across-nodes": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "the ring across the nodes: K = {K} steps of s = S/n; a chunk crossing V hops in a row, J = "
                        "⌈V/P⌉ of them between nodes, then waits K − V steps behind the NIC; c = α + s/β of a "
                        "hop").format(K=t.get("K")),
    "rd-intra": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "recursive doubling inside each node: log₂{P} rounds of the whole buffer ({link})").format(
        P=t.get("P"), link=t.get("link")),
    "rd-inter": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "recursive doubling across nodes: log₂{N} rounds of the whole buffer ({link})").format(
        N=t.get("N"), link=t.get("link")),
    "innet-fabric": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "in-network reduction in the fabric's switches (SHARP), over each GPU's NIC ({link})").format(
        link=t.get("link")),
    "a2a-nodes": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "every block at once: the slower of NVLink's P − 1 blocks and the NIC's n − P"),
    "base": lambda t, op, algo: QCoreApplication.translate(
        "FormulaPanel", "base latency of each collective call (NCCL's baseLat)"),
    "launch-floor": lambda t, op, algo: _launch_floor_words(t),
}


def term_words(term, op: str, algo: str) -> str:
    """What one of the plan's terms is, in the app's language: its key's words with its numbers; "form"
    (the registry's formula) and any key without words: the collective's title."""
    words = _TERM_WORDS.get(term.key)
    return words(term, op, algo) if words is not None else op_title(op, algo)


def machine_terms(topology, op: str, algo: str, S: float):
    """
    [(what, formula, seconds)] of one collective on a machine and their total: the plan's terms
    (simcore.plan.Term, decided by the engine next to the closed forms they sum — hier's three phases and
    what pipelining saves, NCCL's Tree, the channel rings, the ring across nodes, a torus's rings, one
    switch's form, the base latency B, the launch floor) in words, their sum the plan's time.
    ValueError (the plan's sentence) where no closed form exists.
    """
    p = _plan(topology, op, algo, S)
    total = p.seconds()
    return [(term_words(t, op, algo), t.formula, t.seconds) for t in p.terms], total


def machine_form_html(topology, op, algo, S, simulated=None) -> str:
    """The formula panel on a machine: every term of the plan with its value, the total, the trace's,
    and the legend of the links the plan is timed with."""
    tr = QCoreApplication.translate
    p = _plan(topology, op, algo, S)
    terms, total = machine_terms(topology, op, algo, S)
    rows = [f"<p style='margin:0'><b>{html.escape(op_title(op, algo))}</b> &nbsp; <i>n</i> = {topology.n}"
            f" · {html.escape(topology.name)}</p>"]
    proto = protocol_line(topology, op, algo, S)
    if proto:
        rows.append(f"<p style='margin:2px 0'>{html.escape(proto)}</p>")
    formula = " + ".join(math_html(t[1]) for t in terms)
    rows.append(f"<p style='font-size:120%; margin:6px 0'><i>T</i> = {formula}</p>")
    for what, _f, sec in terms:
        rows.append(f"<p style='margin:2px 0'>&nbsp;&nbsp;{html.escape(what)}: <b>{fmt_time(sec)}</b></p>")
    rows.append(f"<p style='margin:4px 0'>&nbsp;&nbsp;= <b>{fmt_time(total)}</b></p>")
    if simulated is not None:
        ok = abs(simulated - total) <= 1e-9 * max(total, 1e-300)
        sim = (tr("FormulaPanel", "simulated (trace): %1 — equals the closed form ✓") if ok else
               tr("FormulaPanel", "simulated (trace): %1 — differs from the closed form"))
        rows.append(f"<p style='margin:8px 0 2px 0'>{sim.replace('%1', f'<b>{fmt_time(simulated)}</b>')}</p>")
    if any(role == "inter" for role, _ln in p.links):
        legend = tr("FormulaPanel", "α_f, β_f: inside a node; α_i, β_i: between nodes (each GPU's NIC); "
                                    "B: base latency %1")
    else:
        legend = tr("FormulaPanel", "B: base latency %1")
    legend = legend.replace("%1", fmt_time(sum(t.seconds for t in p.terms if t.key == "base")))
    desc = "; ".join(f"{html.escape(ln.name)}: α = {fmt_time(ln.alpha)}, β = {fmt_bw(ln.bw)}" for _r, ln in p.links)
    rows.append(f"<p style='margin:6px 0 0 0; font-size:85%'>{math_html(legend)} · {desc}</p>")
    return "\n".join(rows)
