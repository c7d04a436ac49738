"""
The explanation panel: the current step in plain words, with its arithmetic.

Everything said here is read from the trace (who sent which chunk to whom, how many bytes,
when), described by the shape of the step's messages, never by re-running an algorithm:
    * who sends what to whom (a pattern when there is one: "to its ring neighbour d + 1",
      "pairs d ↔ d XOR 2", "up into the switch"...), and whether the receiver adds or copies
    * one message's cost α + b/β with the link's numbers substituted
    * the running total beside the closed form of the whole collective (simcore's t_formula)
The time-dependent numbers (t, bytes moved) sit in a separate line so playing does not
re-layout the whole text every frame.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from simcore.comm_sim import ALGORITHMS, BLOCKS, busbw, slots_of, t_formula
from simcore.kind_record import record_of
from simcore.trace import ALL, SWITCH

from ... import theme
from ...core.frame import DONE, NEXT
from ...core.prepared import memo, preparer
from ...core.trace_index import stop_of
from ...words import (AlgoText, algo_text, device_name, fmt_bw, fmt_bytes, fmt_time, n_gpus,  # noqa: F401
                      n_messages, op_title, phase_word, place_name)
from ...words import fmt_rate, nccl_algo_name  # (AlgoText, algo_text, fmt_bw: read by tests)
from .formula_texts import is_machine, machine_terms, math_html, protocol_line, timed_topology
from .generic_text import explain_html, unknown, verdict_html
from .op_text import compute_html
from .rich_text import RichText


def _tr(text):
    return QCoreApplication.translate("Explain", text)


def formula_text(op: str, algo: str, n: int) -> str:
    """The closed form as written on the lecture's slides (the registry's; its value is t_formula's)."""
    rec = ALGORITHMS.get(op, {}).get(algo)
    return rec.formula(int(n)) if rec is not None else ""


def _gpu(d: int, topology=None) -> str:
    """'GPU 3', 'chip 3' on a TPU torus, 'the switch'."""
    return _tr("the switch") if d == SWITCH else device_name(d, topology)


def _chunk(c: int) -> str:
    return _tr("the whole buffer") if c == ALL else _tr("chunk {c}").format(c=c)


def describe_group(msgs, n: int, topology=None) -> str:
    """One sentence for messages that belong together (same step and phase); on a machine of
    nodes (topology), the exchange between nodes in its own words."""
    src = [m.src for m in msgs]
    dst = [m.dst for m in msgs]
    m0 = msgs[0]
    size = fmt_bytes(m0.nbytes)
    tree = _tree_group(msgs, size, topology)  # NCCL's Tree: chains in the nodes, a tree across them
    if tree:
        return tree
    between = _between_nodes(topology, src, dst, n, size)
    if between:
        extra = len(msgs) - 3
        examples = ", ".join(f"{_gpu(m.src, topology)} → {_gpu(m.dst, topology)}: {_chunk(m.chunk)}"
                             for m in msgs[:3])
        if extra > 0:
            return _tr("{pattern} {examples} … and {k} more.").format(pattern=between, examples=examples, k=extra)
        return _tr("{pattern} {examples}.").format(pattern=between, examples=examples)
    if all(d == SWITCH for d in dst):
        chunks = sorted({m.chunk for m in msgs})
        what = _chunk(chunks[0]) if len(chunks) == 1 else _tr("their chunks")
        return _tr("Every GPU sends its own copy of {what} ({size}) up into the switch, which adds the "
                   "{k} copies as they arrive.").format(what=what, size=size, k=len(msgs))
    if all(s == SWITCH for s in src):
        chunks = sorted({m.chunk for m in msgs})
        what = _chunk(chunks[0]) if len(chunks) == 1 else _tr("the summed chunks")
        return _tr("The switch multicasts the finished sum of {what} ({size}) down to all {k} GPUs at "
                   "once.").format(what=what, size=size, k=len(msgs))
    if slots_of(m0.op) == BLOCKS:  # chunk s·n + d is block (s → d): say which block, never the slot number
        return _blocks_group(msgs, n, size)
    if m0.chunk == ALL:
        examples = ", ".join(f"{_gpu(m.src, topology)} → {_gpu(m.dst, topology)}" for m in msgs[:3])
    else:
        examples = ", ".join(f"{_gpu(m.src, topology)} → {_gpu(m.dst, topology)}: {_chunk(m.chunk)}"
                             for m in msgs[:3])
    extra = len(msgs) - 3
    phases = {m.phase for m in msgs}
    if phases == {"fold"}:
        head = _tr("n = {n} is not a power of two: first the {gpus} numbered {p} and up hand their whole "
                   "buffer ({size}) to GPU d − {p}, which adds it in.").format(n=n, gpus=n_gpus(len(msgs)), p=n - len(msgs),
                                                                               size=size)
    elif phases == {"unfold"}:
        head = _tr("Last, GPU d − {p} sends the finished sum ({size}) back to each of the {gpus} that "
                   "folded in.").format(p=n - len(msgs), gpus=n_gpus(len(msgs)), size=size)
    elif phases == {"one-shot reduce-scatter"} and all(m.chunk == m.dst for m in msgs):
        j = (dst[0] - src[0]) % n
        head = _tr("Every GPU d sends its part of chunk d + {j} ({size}) straight to that chunk's owner, "
                   "GPU d + {j}.").format(j=j, size=size)
    elif phases == {"one-shot all-gather"} and all(m.chunk == m.src for m in msgs):
        j = (dst[0] - src[0]) % n
        head = _tr("Every GPU d sends its own chunk d ({size}) straight to GPU d + {j}.").format(j=j, size=size)
    elif n > 1 and len(msgs) == n and m0.algo == "ring" and all(d == (s + 1) % n for s, d in zip(src, dst)):
        head = _tr("Every GPU d sends one chunk of {size} to its ring neighbour d + 1.").format(size=size)
    elif n > 1 and len(msgs) > 1 and len({s ^ d for s, d in zip(src, dst)}) == 1 and all(d < n for d in dst):
        k = src[0] ^ dst[0]  # 2^j at round j: neighbours at round 0, further across the circle after
        if k == 1:
            head = _tr("Neighbours pair up, d ↔ d XOR 1 (0 ↔ 1, 2 ↔ 3, …), and swap {what} ({size}).").format(
                what=_chunk(m0.chunk), size=size)
        else:
            head = _tr("GPUs pair up {k} apart, d ↔ d XOR {k} (0 ↔ {k}, 1 ↔ {k1}, …), and swap {what} "
                       "({size}).").format(k=k, k1=1 ^ k, what=_chunk(m0.chunk), size=size)
    elif n > 1 and len({(d - s) % n for s, d in zip(src, dst)}) == 1 and len(msgs) == n:  # one-shot round j
        j = (dst[0] - src[0]) % n
        head = _tr("Every GPU d sends {what} ({size}) to GPU d + {j}.").format(what=_chunk(m0.chunk), size=size,
                                                                              j=j)
    else:
        head = _tr("{messages} of {size}.").format(messages=n_messages(len(msgs)), size=size)
    if extra > 0:
        return _tr("{pattern} {examples} … and {k} more.").format(pattern=head, examples=examples, k=extra)
    return _tr("{pattern} {examples}.").format(pattern=head, examples=examples)


def _blocks_group(msgs, n, size) -> str:
    """Block slots (all-to-all): every block goes straight to the GPU its index names (block j of GPU s -> GPU j)."""
    shifts = {(m.dst - m.src) % n for m in msgs}
    examples = ", ".join(_tr("{src} → {dst}: its block {j}").format(src=_gpu(m.src), dst=_gpu(m.dst), j=m.dst)
                         for m in msgs[:3])
    if len(shifts) == 1 and len(msgs) == n:
        head = _tr("Every GPU d sends its block d + {j} ({size}) straight to the GPU it belongs to, GPU d + {j}."
                   ).format(j=shifts.pop(), size=size)
    else:
        head = _tr("{k} blocks of {size}, each straight to the GPU it belongs to.").format(k=len(msgs), size=size)
    if len(msgs) > 3:
        return _tr("{pattern} {examples} … and {k} more.").format(pattern=head, examples=examples, k=len(msgs) - 3)
    return _tr("{pattern} {examples}.").format(pattern=head, examples=examples)


def _tree_group(msgs, size, topology) -> str:
    """NCCL's Tree (simcore.tree_allreduce) in its own words, a phase at a time; "" for any other step."""
    phases = {m.phase for m in msgs}
    heads = {"reduce (chain in node)": _tr("Along each node's chain every GPU passes its partial sum ({size}) to "
                                           "the next GPU, which adds its own."),
             "reduce (tree across nodes)": _tr("Across the nodes each child's tree GPU sends its subtree's sum "
                                               "({size}) up to its parent node, over its NIC."),
             "broadcast (tree across nodes)": _tr("The total goes back down the tree: each parent node sends it "
                                                  "({size}) to its child nodes."),
             "broadcast (chain in node)": _tr("Inside each node the total runs back along the chain ({size} a hop).")}
    if len(phases) != 1 or next(iter(phases)) not in heads:
        return ""
    head = heads[next(iter(phases))].format(size=size)
    examples = ", ".join(f"{_gpu(m.src, topology)} → {_gpu(m.dst, topology)}: {_chunk(m.chunk)}" for m in msgs[:3])
    if len(msgs) > 3:
        return _tr("{pattern} {examples} … and {k} more.").format(pattern=head, examples=examples, k=len(msgs) - 3)
    return _tr("{pattern} {examples}.").format(pattern=head, examples=examples)


def _between_nodes(topology, src, dst, n, size) -> str:
    """The hierarchical all-reduce's step across nodes: every GPU sends to the GPU of
    its own local rank on another node, each over its own NIC; "" for any other pattern."""
    rec = record_of(topology)
    if rec is None or rec.nodes < 2 or not src:
        return ""
    P, N = rec.per_node, rec.nodes
    if any(s < 0 or d < 0 or s // P == d // P or s % P != d % P for s, d in zip(src, dst)):
        return ""
    shifts = {(d - s) % n for s, d in zip(src, dst)}
    if N == 2:
        return _tr("Each GPU d exchanges a chunk ({size}) with GPU d + {P} on the other node (GPU d − {P} for the "
                   "GPUs of node 1), over its own NIC: the same local rank on both nodes.").format(size=size, P=P)
    if shifts == {P}:
        return _tr("Each GPU d sends a chunk ({size}) to GPU d + {P}, its own local rank on the next node, over "
                   "its own NIC (the last node sends to node 0).").format(size=size, P=P)
    return _tr("Each GPU sends a chunk ({size}) to the GPU of its own local rank on another node, over its own "
               "NIC.").format(size=size)


def nccl_timing(topology, timed, c) -> str:
    """What a GPU machine of several nodes timed collective c with, in the ring legend's words: NCCL's
    algorithm and protocol, its start-up, then its effective rates across and inside the nodes (the
    explanation said "NVLink 4 (H100), NCCL hier Simple (646 GB/s, α 0 s)", a link that is no
    hardware's); "" where the machine's own links timed it."""
    rec = record_of(topology)
    if timed is topology or rec is None or rec.nodes < 2 or not rec.nccl:
        return ""
    proto = topology.protocol(c.op, c.algo, float(c.nbytes))[0]
    if not proto:
        return ""
    trec = record_of(timed)
    base, TA, TI = trec.base, trec.link("intra"), trec.link("inter")
    if base > 0 and TI.alpha == 0 and TA.alpha == 0:
        text = _tr("Timed as NCCL runs {algo} with {protocol}: {base} start-up, then {bw} effective across nodes "
                   "and {bw_in} inside a node, with no latency per step (NCCL's model counts it in the start-up).")
    else:
        text = _tr("Timed as NCCL runs {algo} with {protocol}: {bw} and α {a} per step across nodes, {bw_in} and "
                   "α {a_in} inside a node, after a {base} start-up.")
    return text.format(algo=nccl_algo_name(topology, c.op, c.algo), protocol=proto, base=fmt_time(base),
                       bw=fmt_rate(TI.bw), a=fmt_time(TI.alpha), bw_in=fmt_rate(TA.bw), a_in=fmt_time(TA.alpha))


def step_where(topology, msgs) -> str:
    """On a machine, which links a step's messages take: "inter-node, over InfiniBand NDR 400
    (50 GB/s, α 4 µs)", "inside the nodes, over NVLink 4 …", both, or a torus's links; "" on
    the lecture's one switch."""
    rec = record_of(topology)
    if rec is None or not msgs:
        return ""
    if rec.nodes > 1:
        P = rec.per_node
        cross = [m.src >= 0 and m.dst >= 0 and m.src // P != m.dst // P for m in msgs]
        A, I = rec.link("intra"), rec.link("inter")
        inter = _tr("inter-node, over {link} ({bw} each way, α {a})").format(
            link=I.name, bw=fmt_bw(I.bw), a=fmt_time(I.alpha))
        intra = _tr("inside the nodes, over {link} ({bw}, α {a})").format(link=A.name, bw=fmt_bw(A.bw),
                                                                          a=fmt_time(A.alpha))
        if all(cross):
            return inter
        if not any(cross):
            return intra
        return _tr("{k} of {K} messages inter-node, over {link} ({bw}, α {a}); the rest inside the nodes, over "
                   "{intra} ({bw_in})").format(k=sum(cross), K=len(msgs), link=I.name, bw=fmt_bw(I.bw),
                                              a=fmt_time(I.alpha), intra=A.name, bw_in=fmt_bw(A.bw))
    L = rec.words_link("slice")
    if L is not None:  # a slice without wraparound links, named so
        return _tr("along the slice's links, neighbour to neighbour ({link}, {bw} each way, α {a})").format(
            link=L.name, bw=fmt_bw(L.bw), a=fmt_time(L.alpha))
    L = rec.words_link("torus")
    if L is not None:
        return _tr("along the torus links, neighbour to neighbour ({link}, {bw} each way, α {a})").format(
            link=L.name, bw=fmt_bw(L.bw), a=fmt_time(L.alpha))
    return ""


class ExplainPanel(QWidget):
    """Follows a ScenarioModel and explains the frames the playback's frame controller hands it
    (`set_frame`): the step at the playback time."""

    def __init__(self, model, playback, parent=None):
        super().__init__(parent)
        self.setObjectName("ExplainPanel")
        self.model, self.playback = model, playback
        self.body = RichText()
        self.body.setObjectName("explainBody")
        self.live = QLabel()
        self.live.setObjectName("explainLive")
        self.live.setWordWrap(True)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.live)
        outer.addWidget(self.body, 1)
        self._forget()
        self._apply_theme()
        self._frame = playback.frames.register(self)
        self._ahead_ok = False  # the frame shown changed no text: the next step's may be written ahead
        model.changed.connect(self._on_model_changed)
        theme.notifier().changed.connect(self._on_theme_changed)
        self.retranslate_ui()

    # -- signals ---------------------------------------------------------------------------
    def _on_model_changed(self, run):
        self._forget()
        self.refresh()

    def set_frame(self, frame):
        """Explain `frame` (app.core.frame.Frame), handed by the frame controller."""
        if frame.index is self.model.run.index:  # else a frame of the run about to arrive (_on_model_changed)
            self._show(frame)

    def _on_theme_changed(self):
        self._apply_theme()
        self._forget()
        self.refresh()

    def changeEvent(self, e):
        if e.type() == QEvent.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(e)

    def retranslate_ui(self):
        self.setWindowTitle(self.tr("Explanation"))
        self._forget()
        self.refresh()

    def _apply_theme(self):
        p = theme.palette()
        self.body.setStyleSheet(f"font-size: {round(theme.px('explain'))}px; color: {p.text}; "
                                f"background: transparent; border: none;")
        self.live.setStyleSheet(f"font-size: {round(theme.px('body'))}px; color: {p.text}; "
                                f"background: {p.surface}; padding: 6px 10px; font-weight: bold;")

    # -- content ----------------------------------------------------------------------------
    def refresh(self):
        """Explain the frame shown now again (a new run, theme or language)."""
        f = self.playback.frames.current()
        if f is not None and f.index is self.model.run.index:
            self._show(f)

    def _show(self, f):
        self._frame = f
        self._ahead_ok = False
        run = self.model.run
        t = f.t
        idx = run.index
        self.live.setText(self.tr("t = {t} · moved so far: {b}").format(
            t=fmt_time(t), b=fmt_bytes(f.bytes_moved)))
        coll = f.coll
        op = None
        if run.tp is not None and run.tp.chip is not None and idx.computes:  # at the start: op 1 comes first
            op = idx.computing(0, t) or (idx.first_op(0) if t <= idx.eps else None)
        if op is not None and f.hidden_after is None:
            key = ("compute", id(run), op)
            if key != self._key:
                self._key = key

                self.body.setText(compute_html(op, run.tp.chip, run.tp.prec) + self._tp_html(run, coll, t))
            return
        if f.hides:  # a student predicts this step: the step, or the pattern of the one before, would tell
            key = ("hidden", id(run), f.hidden_after)
        elif coll is None:
            key = ("none", id(run))
        else:
            key = (id(run), *f.key)
        if key == self._key:
            self._ahead_ok = True
            return
        self._key = key
        ahead = self._ahead.pop(key, None)
        if ahead is not None:  # written in an earlier frame (see look_ahead)
            self.body.setText(ahead)
            return
        if key[0] == "hidden":
            self.body.setText("<p>" + html.escape(self.tr(
                "Make your prediction first: what this step sends, and to whom, is shown once you have "
                "answered (or skipped) in the panel “Predict, then reveal”.")) + "</p>")
            return
        self.body.setText(self._html(run, f))

    def _forget(self):
        """The text shown and the texts written ahead no longer hold (new run, theme, language)."""
        self._key = None
        self._ahead = {}  # key -> html of the step texts after the shown one, written ahead

    def look_ahead(self, f):
        """The frame controller's look-ahead (after the ring's, when it left room in this tick):
        write the next step's texts (f.ahead: at its boundary and just after) in the frames
        before it, one a frame (at n = 256 each reads 256 messages), once the shown text is
        written: the frame that reaches one then only sets it. Only plain steps: their key
        (collective, step, state) says all the text depends on."""
        run = self.model.run
        if not self._ahead_ok or f is not self._frame or f.coll is None or f.hidden_after is not None \
                or run.index.computes:
            return
        for nf in f.ahead:
            key = (id(run), *nf.key)
            if nf.coll is not None and key != self._key and key not in self._ahead:
                self._ahead = {k: v for k, v in self._ahead.items() if k[:2] == key[:2]}
                self._ahead[key] = self._html(run, nf)
                return

    def _html(self, run, f) -> str:
        coll, t = f.coll, f.t
        if getattr(run, "mesh", None) is not None:  # a mesh run: its AxisCollective records' own words
            from ...words import mesh_html
            return mesh_html(run.mesh, f.t, f.at_end)
        parts = []
        if run.matmul is not None:
            parts.append(self._matmul_html(run))
        if coll is None:
            if run.matmul is None:
                parts.append("<p>" + html.escape(self.tr("Nothing is sent in this scenario.")) + "</p>")
            return "\n".join(parts)
        tr_ = run.trace
        idx = run.index
        c = tr_.collectives[coll]
        link = run.link
        if len(tr_.collectives) > 1:
            parts.append("<p>" + html.escape(self.tr("Collective {i} of {N}: {label} — {what}").format(
                i=coll + 1, N=len(tr_.collectives), label=place_name(c.label), what=op_title(c.op, c.algo))) + "</p>")
        opened = getattr(run, "opened", None) is not None  # a saved run (app/views/text/generic_text.py)
        if opened:  # a run read partly says so first (generic_text.note_html)
            from .generic_text import note_html; parts.insert(0, note_html(run))  # noqa: E702
        if opened and c.n_steps > 0:
            if unknown(run, c):  # an algorithm the app does not know: sentences from the trace's fields
                return "\n".join(parts + [explain_html(run, f)])
        if c.n_steps == 0:
            alone = self.tr("One device: it already holds everything, nothing is sent.")
            parts.append("<p>" + html.escape(alone) + "</p>")
            return "\n".join(parts)
        k, done = f.step, f.state == DONE
        state = self.tr("done") if done else (self.tr("next") if f.state == NEXT else self.tr("in progress"))
        words = step_words(run, coll, k)  # made on the worker with the run (app.core.prepared)
        phase = words.phase
        pk, PK, pstate, pname = stop_of(idx, c, t)  # the stops every step text counts (trace_index.stop_of)
        pname = None if pname is None else phase_word(pname)
        if pname is not None:
            pstate = self.tr("done") if pstate == DONE else (self.tr("next") if pstate == NEXT else self.tr("in progress"))
            head = self.tr("Phase {k} of {K}: {phase} — {state}").format(k=pk + 1, K=PK, phase=pname, state=pstate)
        elif phase and phase != c.op and not phase.startswith("round"):
            head = self.tr("Step {k} of {K} ({phase}) — {state}").format(k=k + 1, K=c.n_steps, phase=phase,
                                                                        state=state)
        else:
            head = self.tr("Step {k} of {K} — {state}").format(k=k + 1, K=c.n_steps, state=state)
        parts.append(f"<p style='font-size:120%; font-weight:bold; margin:4px 0'>{html.escape(head)}</p>")
        topo = getattr(run.comm, "topology", None)
        machine = topo is not None and topo.n == c.n and is_machine(topo, c.op, c.algo, c.nbytes)
        timed = timed_topology(topo, c.op, c.algo, c.nbytes) if machine else topo
        where = words.where
        if where:
            parts.append(f"<p><b>{html.escape(where)}</b></p>")
        for line in words.lines:  # per phase of the step: who sends what to whom, what the receivers do
            parts.append("<p>" + html.escape(line) + "</p>")
        # one message's cost, numbers substituted
        m0 = words.m0
        if where or timed is not topo:  # a machine: the link this message really takes (NVLink, its NIC, a
            # torus link), with NCCL's protocol for S on a GPU machine (the links the simulation timed it with)
            link = timed.route(m0.src, m0.dst)[2]
        one = link.alpha + m0.nbytes / link.bw
        parts.append("<p><b>" + html.escape(self.tr("One message")) + "</b>: α + b/β = "
                     + html.escape(f"{fmt_time(link.alpha)} + {fmt_bytes(m0.nbytes)} / {fmt_bw(link.bw)}"
                                   f" = {fmt_time(link.alpha)} + {fmt_time(m0.nbytes / link.bw)}")
                     + f" = <b>{html.escape(fmt_time(one))}</b></p>")
        t0, t1 = tr_.step_times(coll)[k]
        parts.append("<p>" + html.escape(self.tr(
            "This step: {d} on the clock ({a} → {b}); {m} messages. A port passes one message's bytes at a "
            "time; each message lands α after it starts streaming.")
            .format(d=fmt_time(t1 - t0), a=fmt_time(t0), b=fmt_time(t1), m=words.count)) + "</p>")
        meanwhile = self._meanwhile(run, coll, k, t0, t1, f.eps)
        if meanwhile:
            parts.append("<p>" + html.escape(meanwhile) + "</p>")
        # running total vs closed form
        n_done = f.steps_done  # the running total: when the last step done landed
        ran = min(max(idx.step_ends[coll][n_done - 1] - c.t_start, 0.0), c.t_end - c.t_start) if n_done else 0.0

        if machine:  # the machine's closed form, term by term: the plan's terms (formula panel)
            terms, total = machine_terms(topo, c.op, c.algo, c.nbytes)
            formula = " + ".join(t[1] for t in terms)
            link = run.link
        else:
            total = t_formula(c.algo, c.n, c.nbytes, link.alpha, link.bw, op=c.op)
            formula = formula_text(c.op, c.algo, c.n)
        parts.append("<p><b>" + html.escape(self.tr("Running total")) + "</b>: "
                     + html.escape(self.tr("{t} after {k} of {K} steps").format(t=fmt_time(ran), k=n_done,
                                                                                K=c.n_steps)) + "</p>")
        parts.append("<p><b>" + html.escape(self.tr("Closed form")) + "</b>: T = "
                     + math_html(formula) + " = "
                     + html.escape(self.tr("{T} with n = {n}, S = {S}").format(
                         T=fmt_time(total), n=c.n, S=fmt_bytes(c.nbytes)))
                     + "<br>" + html.escape(self.tr("simulated: {t}").format(t=fmt_time(c.t_end - c.t_start)))
                     + (" ✓" if abs((c.t_end - c.t_start) - total) <= 1e-9 * max(total, 1e-300) else "")
                     + "</p>")
        why = algo_text(c.op, c.algo).why
        if why:
            parts.append("<p>" + html.escape(why) + "</p>")
        proto = protocol_line(topo, c.op, c.algo, c.nbytes) if machine else ""
        if proto:  # a GPU machine: which of NCCL's protocols runs at this size, and why (the engine's sentence)
            parts.append("<p>" + html.escape(proto) + "</p>")
        if done and n_done == c.n_steps and c.t_end > c.t_start:
            dur = c.t_end - c.t_start
            parts.append("<p>" + html.escape(self.tr("Bus bandwidth (nccl-tests): {bw} of {link} per port").format(
                bw=fmt_bw(busbw(c.op, c.n, c.nbytes, dur)), link=fmt_bw(link.bw))) + "</p>")
        if run.tp is not None:
            parts.append(self._tp_html(run, coll, t))
        if opened:
            parts.append(verdict_html(run, c))
        return "\n".join(parts)

    def _meanwhile(self, run, coll, k, t0, t1, eps) -> str:
        """
        Messages of other steps that arrive while step k runs (t0, t1]: the bytes "moved so far"
        counts every message that has arrived, so the text names them too (e.g. recursive
        doubling at n = 6: GPUs 2 and 3 have nothing to fold in and swap during the fold).
        """
        tr_ = run.trace
        c = tr_.collectives[coll]  # columns, not Message records: n = 256 has 130k messages
        step, t_end = tr_.column("step", coll), tr_.column("t_end", coll)
        ids = np.flatnonzero((step > k) & (t_end > t0 - eps) & (t_end <= t1 + eps))
        early = [tr_.messages[c.first_msg + int(i)] for i in ids[np.lexsort((ids, step[ids]))]]
        if not early:
            return ""
        steps = sorted({m.step + 1 for m in early})
        span = str(steps[0]) if len(steps) == 1 else f"{steps[0]}–{steps[-1]}"
        pairs = ", ".join(f"{_gpu(m.src)} → {_gpu(m.dst)}" for m in early[:3])
        more = _tr(" … and {k} more").format(k=len(early) - 3) if len(early) > 3 else ""
        return (self.tr("Meanwhile {messages} of step {s} ({b}) arrive too: their senders did not wait for "
                        "this step. {pairs}{more}.") if len(steps) == 1 else
                self.tr("Meanwhile {messages} of steps {s} ({b}) arrive too: their senders did not wait for "
                        "this step. {pairs}{more}.")).format(messages=n_messages(len(early)), s=span,
                                                           b=fmt_bytes(sum(m.nbytes for m in early)),
                                                           pairs=pairs, more=more)

    def _effect(self, run, coll, ms) -> str:
        """What the receivers do with the payload, with one example's contributor count."""
        c = run.trace.collectives[coll]
        m = ms[0]
        if m.dst == SWITCH:
            return self.tr("The switch's adders build the sum in the network: no GPU spends time adding.")
        if slots_of(c.op) == BLOCKS:
            return self.tr("The receiver stores it, no arithmetic: GPU {d} collects block {d} of every GPU, in GPU "
                           "order; GPU {s}'s goes to position {s}.").format(d=m.dst, s=m.src)
        if not m.reduce:
            if len(m.contributors) == c.n and c.n > 1:
                return self.tr("The receiver stores a copy: the payload is already the full sum of all {n} "
                               "GPUs.").format(n=c.n)
            return self.tr("The receiver stores a copy (no arithmetic).")
        after = run.index.holdings(coll, m.t_end).get(m.dst, {})
        ch = 0 if m.chunk == ALL else m.chunk
        who = after.get(ch, frozenset())
        if m.chunk == ALL:
            return self.tr("The receiver adds it to its own buffer: afterwards {gpu} holds the sum of {k} of "
                           "{n} GPUs' data.").format(gpu=_gpu(m.dst), k=len(who), n=c.n)
        return self.tr("The receiver adds it to its own partial sum: afterwards {gpu}'s chunk {c} sums {k} of "
                       "{n} GPUs' data.").format(gpu=_gpu(m.dst), c=m.chunk, k=len(who), n=c.n)

    def _tp_html(self, run, coll, t) -> str:
        tp = run.tp
        tr_ = run.trace
        what = self.tr("decode step") if tp.decode else self.tr("forward")
        total = tr_.t_end
        if tr_.computes:  # the forward on the clock: compute between the collectives
            busy = sum(c.t_end - c.t_start for c in tr_.computes if c.device == 0)
            line1 = self.tr("Whole {what}: {T} on GPU 0 — {C} computing ({k} ops: norms, QKV, attention, out "
                            "proj, gate/up, down, LM head), {M} in {N} collectives (2 all-reduces per layer × {L} "
                            "layers + the logits all-gather), each with the model's real bytes.").format(
                what=what, T=fmt_time(total), C=fmt_time(busy), k=sum(1 for c in tr_.computes if c.device == 0),
                M=fmt_time(total - busy), N=len(tr_.collectives), L=tp.cfg.n_layers)
            if tp.decode:  # what one decode step is: one token in, the prefill's tokens in the cache
                line1 = self.tr("One new token per sequence attends to itself and the {T} tokens the prefill put in "
                                "the KV cache, so each all-reduce carries just [{B}, 1, d_model]: {S}.").format(
                    T=tp.seq, B=tp.batch, S=fmt_bytes(tr_.collectives[0].nbytes) if tr_.collectives else "0 B") \
                    + " " + line1
            if total - busy > 10 * busy:  # say why the ops are slivers on the timeline
                line1 += " " + self.tr("Communication takes {r:.0f}× as long as computing: the lecture model is tiny, "
                                       "so an op reads a few KiB in nanoseconds while every ring step pays α = {a}. "
                                       "A real model's ops take microseconds: click a point of the decode-latency "
                                       "plot to see one step of it.").format(r=(total - busy) / busy,
                                                                            a=fmt_time(run.link.alpha))
        else:
            line1 = self.tr("Whole {what}: {N} collectives — 2 all-reduces per layer × {L} layers + the logits "
                            "all-gather — {T} of communication.").format(what=what, N=len(tr_.collectives),
                                                                         L=tp.cfg.n_layers, T=fmt_time(total))
        line2 = self.tr("max |TP − single| = {d:.1e}: the sharded model computes the same logits.").format(
            d=tp.max_abs_diff)
        return "<p>" + html.escape(line1) + "</p><p><b>" + html.escape(line2) + "</b></p>"

    def _matmul_html(self, run) -> str:
        mm = run.matmul
        A, B, C = mm.notation
        texts = {
            1: self.tr("Case 1: {A} · {B} → {C}. The contracted dimension J is not split, so every GPU "
                       "multiplies its own rows of A by all of B. No communication."),
            2: self.tr("Case 2: {A} · {B}. A is split along the contracted J: all-gather A first, then every "
                       "GPU multiplies all of A by B. Result: {C} on every GPU."),
            3: self.tr("Case 3: {A} · {B}. Both are split along the contracted J: every GPU computes a "
                       "full-size partial sum of C, then an all-reduce adds them. Result: {C} on every GPU."),
            4: self.tr("Case 4: {A} · {B}. Both non-contracted dimensions are split: GPU d could only compute "
                       "a diagonal block, so all-gather B first (it becomes case 1). Result: {C}."),
        }
        body = texts[mm.case].format(A=A, B=B, C=C)
        err = self.tr("max |C − A·B| over every GPU = {e:.1e}").format(e=mm.max_err)
        return "<p>" + html.escape(body) + "</p><p>" + html.escape(err) + "</p>"


class _PanelWords:
    """The panel's own words on any thread: `self.tr` of ExplainPanel is QObject.tr with the class's
    name as context, so these are the same strings, read from the same catalogue."""

    @staticmethod
    def tr(text):
        return QCoreApplication.translate("ExplainPanel", text)

    _effect = ExplainPanel._effect


_WORDS = _PanelWords()


def words_language() -> str:
    """What tells the languages apart in a prepared key: one of the panel's words as now translated."""
    return _WORDS.tr("in progress")


@dataclass(frozen=True)
class StepWords:
    """What the explanation says of one step from its messages (all of them: 8,192 at n = 256 on
    DGX H100): the phase when one, the links it takes, per phase who sends what to whom and what
    the receivers do, its first message and how many there are."""

    phase: str
    where: str
    lines: tuple
    m0: object
    count: int


def _make_step_words(run, coll: int, k: int) -> StepWords:
    tr_ = run.trace
    c = tr_.collectives[coll]
    msgs = [tr_.messages[i] for i in run.index.step_msgs[coll][k]]  # read once: n = 256 has 256 a step
    phases = {m.phase for m in msgs}
    phase = phases.pop() if len(phases) == 1 else ""
    topo = getattr(run.comm, "topology", None)
    machine = topo is not None and topo.n == c.n and is_machine(topo, c.op, c.algo, c.nbytes)
    timed = timed_topology(topo, c.op, c.algo, c.nbytes) if machine else topo
    groups = {}
    for m in msgs:
        groups.setdefault(m.phase, []).append(m)
    timing = nccl_timing(topo, timed, c)  # NCCL's model timed it: the route over the hardware, then that
    lines = [timing] if timing else []
    for ms in groups.values():
        lines += [describe_group(ms, c.n, topo), _WORDS._effect(run, coll, ms)]
    return StepWords(phase, step_where(topo if timing else timed, msgs), tuple(lines), msgs[0], len(msgs))


def step_words(run, coll: int, k: int) -> StepWords:
    """Step k of collective coll in words (StepWords), made once per run and language: on the
    worker for the step shown first (prepare_words), else where first asked."""
    return memo(run, ("explain step words", coll, k, words_language()), lambda: _make_step_words(run, coll, k))


@preparer
def prepare_words(run):
    """On the worker, with the build: the words of the step a new run opens at (its first
    collective's first step: the frame at t = 0), which the panel writes as soon as it is shown."""
    if run.trace.collectives and run.trace.collectives[0].n_steps > 0:
        step_words(run, 0, 0)
