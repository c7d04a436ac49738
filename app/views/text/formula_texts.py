"""
The formula panel's words: a collective's closed form written symbolically, the same with the
numbers substituted and the total the simulation measured beside it (formula_html); an op's
roofline while the GPUs compute (op_html); a machine's closed form term by term
(machine_form_html). Rich text only: the panel (formula_panel.py) shows it, and the words for
an opened run (generic_text.py) put the closed form above the checker's verdict.

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

from simcore.comm_sim import algorithm, op_record, t_formula, t_formula_on
from simcore.topo_closed_forms import hier_pipeline_chunks, t_hier_pipelined, t_ring_nodes, t_torus

from ...words import fmt_bw, fmt_bytes, fmt_time, nccl_reason, op_place, op_title

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
_SUBSCRIPT = re.compile(r"([αβcs]|max)_([fipV])\b")


def math_html(text: str) -> str:
    """A formula as HTML with its subscripts shown: "α_f + S/(P·β_f)" -> α<sub>f</sub> + S/(P·β<sub>f</sub>)."""
    return _SUBSCRIPT.sub(r"\1<sub>\2</sub>", html.escape(text))


def is_machine(topology) -> bool:
    """A topology that is more than the lecture's plain switch: nodes, a torus, or a base latency."""
    if topology is None:
        return False
    return (getattr(topology, "n_nodes", 1) > 1 or getattr(topology, "shape", None) is not None
            or float(getattr(topology, "base", 0.0)) > 0)


def timed_topology(topology, op: str, algo: str, S: float):
    """The topology as the simulation timed this collective: on a GPU machine (tuning set) the
    links and base latency of NCCL's protocol for S (topology.timed_as, what
    topology.timed_as_machine ran the trace with), else the topology itself."""
    if topology is None or not getattr(topology, "tuning", "") or topology.n < 2:
        return topology
    return topology.timed_as(op, algo, float(S))


def protocol_line(topology, op: str, algo: str, S: float) -> str:
    """
    Which NCCL protocol the machine runs this collective with, and why, in one line: "" on a
    topology without NCCL's model (the lecture's switch, a torus). The reason is the engine's
    numbers in words.nccl_reason's sentence (naming the runner-up when algo is the machine's own
    choice for S), all of it in the app's language.
    """
    if topology is None or not getattr(topology, "tuning", "") or topology.n < 2:
        return ""
    tr = QCoreApplication.translate
    proto, why = nccl_reason(topology, op, algo, float(S))
    if not proto:
        return tr("FormulaPanel", "No NCCL protocol: %1.").replace("%1", why)
    return (tr("FormulaPanel", "NCCL protocol: %1 — %2.")
            .replace("%1", proto).replace("%2", why))


def machine_terms(topology, op: str, algo: str, S: float):
    """
    [(what, formula, seconds)] of one collective on a machine, summing to its closed form, and
    that total: for hier the intra-node reduce-scatter, the inter-node all-reduce and the
    intra-node all-gather of all of S (as three calls would take them), and what pipelining them in C chunks saves
    (topo_closed_forms.t_hier_pipelined, one call), NCCL's rings (t_ring_nodes), the ring across
    nodes (comm_sim.t_formula_on), a torus (t_torus), or one switch's form; each call's base
    latency B as its own term.
    """
    tr = QCoreApplication.translate
    topology = timed_topology(topology, op, algo, S)  # a GPU machine: NCCL's protocol for S
    B = float(getattr(topology, "base", 0.0))
    n = topology.n
    terms = []
    if getattr(topology, "n_nodes", 1) > 1 and algo == "hier":
        P, N, A, I = topology.per_node, topology.n_nodes, topology.intra, topology.inter
        f = (P - 1) * (A.alpha + S / (P * A.bw))
        x = (N - 1) * (I.alpha + S / (n * I.bw))
        if P > 1:
            terms.append((tr("FormulaPanel", "reduce-scatter inside each node ({link})").format(link=A.name),
                          "(P − 1)·(α_f + S/(P·β_f))", f))
        if N > 1:
            terms.append((tr("FormulaPanel", "all-reduce across nodes, every GPU on its own NIC ({link})").format(
                link=I.name), "2(N − 1)·(α_i + S/(n·β_i))", 2 * x))
        if P > 1:
            terms.append((tr("FormulaPanel", "all-gather inside each node ({link})").format(link=A.name),
                          "(P − 1)·(α_f + S/(P·β_f))", f))
        C = hier_pipeline_chunks(P, N, S, A, I)
        total = t_hier_pipelined(P, N, S, A, I, base=B)
        if C > 1:  # the three phases above, less what the overlap of C chunks saves
            terms.append((tr("FormulaPanel", "pipelined in {C} chunks: chunk c + 1 inside the node while chunk c "
                                             "crosses the network").format(C=C),
                          "t_pipelined(C) − (the three phases)", total - B - 2 * f - 2 * x))
        calls = 1
    elif algo == "tree" and getattr(topology, "n_nodes", None) is not None:
        from simcore.tree_allreduce import t_tree, tree_chunks
        P, N, A, I = topology.per_node, topology.n_nodes, topology.intra, topology.inter
        body = t_tree(P, N, S, A, I)
        terms.append((tr("FormulaPanel", "NCCL's Tree: a chain of {P} GPUs in each node, a binary tree of {N} nodes "
                                         "across them, up and back down, pipelined in {C} chunks of two halves").format(
                          P=P, N=N, C=tree_chunks(S)),
                      "2((P − 1)·α_f + ⌊log₂N⌋·α_i) + Σ_path S/(2C·β)", body))
        calls, total = 1, t_tree(P, N, S, A, I, base=B)
    elif getattr(topology, "n_nodes", 1) > 1 and algo == "ring-nodes":
        P, N, A, I = topology.per_node, topology.n_nodes, topology.intra, topology.inter
        body = t_ring_nodes(op, P, N, S, A, I)
        terms.append((tr("FormulaPanel", "{K} lockstep ring steps, each as slow as its slower port: NVLink or the "
                                         "NIC").format(K=2 * (n - 1) if op == "all-reduce" else n - 1),
                      "K · max(α_f + (P − 1)·S/(P·n·β_f), α_i + S/(P·n·β_i))", body))
        calls, total = 1, t_ring_nodes(op, P, N, S, A, I, base=B)
    elif getattr(topology, "shape", None) is not None:
        wrap = getattr(topology, "wrap", None) or (True,) * len(topology.shape)
        body = t_torus(op, tuple(topology.shape), S, topology.link, tuple(wrap))
        terms.append((tr("FormulaPanel", "bidirectional rings on each axis of the {shape} torus").format(
            shape="×".join(map(str, topology.shape))), "Σ_axes ⌊N/2⌋·α + (N − 1)·S_p/(2·N·β)", body))
        calls, total = 1, B + body
    else:
        total = t_formula_on(topology, algo, S, op)
        body = total - (B if n > 1 else 0.0)
        if getattr(topology, "n_nodes", 1) > 1:  # algorithms._ring_on_nodes: the slowest run of hops governs
            K = 2 * (n - 1) if op == "all-reduce" else n - 1
            where = tr("FormulaPanel", "the ring across the nodes: K = {K} steps of s = S/n; a chunk crossing V hops "
                                       "in a row, J = ⌈V/P⌉ of them between nodes, then waits K − V steps behind "
                                       "the NIC; c = α + s/β of a hop").format(K=K)
            text = "max_V [J·c_i + (V − J)·c_f + (K − V)·s/β_i]"
        else:
            where, text = op_title(op, algo), closed_form(op, algo, n).text
        terms.append((where, text, body))
        calls = 1
    if B > 0 and n > 1:
        terms.append((tr("FormulaPanel", "base latency of each collective call (NCCL's baseLat)"),
                      f"{calls}·B" if calls != 1 else "B", calls * B))
    return terms, total


def machine_form_html(topology, op, algo, S, simulated=None) -> str:
    """The formula panel on a machine: every term with its value, the total, and the trace's."""
    tr = QCoreApplication.translate
    terms, total = machine_terms(topology, op, algo, S)
    rows = [f"<p style='margin:0'><b>{html.escape(op_title(op, algo))}</b> &nbsp; <i>n</i> = {topology.n}"
            f" · {html.escape(topology.name)}</p>"]
    proto = protocol_line(topology, op, algo, S)
    if proto:
        rows.append(f"<p style='margin:2px 0'>{html.escape(proto)}</p>")
    topology = timed_topology(topology, op, algo, S)  # the links below: the ones the protocol runs on
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
    links = []
    for attr in ("intra", "inter", "link"):
        ln = getattr(topology, attr, None)
        if ln is not None and ln.name not in [x[0] for x in links]:
            links.append((ln.name, ln))
    if getattr(topology, "n_nodes", 1) > 1:
        legend = tr("FormulaPanel", "α_f, β_f: inside a node; α_i, β_i: between nodes (each GPU's NIC); "
                                    "B: base latency %1")
    else:
        legend = tr("FormulaPanel", "B: base latency %1")
    legend = legend.replace("%1", fmt_time(float(getattr(topology, "base", 0.0))))
    desc = "; ".join(f"{html.escape(nm)}: α = {fmt_time(ln.alpha)}, β = {fmt_bw(ln.bw)}" for nm, ln in links)
    rows.append(f"<p style='margin:6px 0 0 0; font-size:85%'>{math_html(legend)} · {desc}</p>")
    return "\n".join(rows)
