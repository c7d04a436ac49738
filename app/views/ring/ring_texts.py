"""
Every text of the ring view, from a run and the current language: the title, the step line
(and every variant the header must make room for), the legend for this n, the device names;
on a machine (nodes or a torus) what it adds: node and fabric names, each step's link note.
Shared with the main window and the explanation panel; Qt-free but for translation.
"""

from __future__ import annotations

import numpy as np

from simcore.algorithms import ALGORITHMS
from simcore.kind_record import record_of
from simcore.trace import SWITCH

from ...words import exact_bytes, is_tpu, nccl_algo_name
from ...words import (device_name, fmt_bytes, fmt_rate, fmt_time, matmul_case_name, n_devices,  # noqa: F401
                     n_steps, op_place, op_title, opened_what, phase_word, place_name,  # (fmt_rate, place_name: re-exported)
                     translate)
from ...core.frame import DONE, NEXT, step_of
from ...core.trace_index import stop_of
from ...core.scenarios import COLLECTIVE_KINDS
from .ring_items import STRIPE_MAX_N
from .layout_parts import BOX_MODE_MAX_N, RingShape, RingTexts

tr = translate


def scenario_title(sc, run) -> str:
    topo = run.comm.topology if run.comm is not None else None
    devices = n_devices(sc.n, topo)
    if getattr(run, "opened", None) is not None:  # a saved run: what the code ran, not the stand-in scenario
        return tr("RingView", "{what} · {devices} · {link}").format(
            what=opened_what(run), devices=devices, link=run.link.name)
    if sc.kind in COLLECTIVE_KINDS:
        what = op_title(sc.kind, sc.algo)
    elif sc.kind.startswith("matmul-"):
        what = tr("RingView", "Case {k}: {name}").format(k=sc.kind[-1], name=matmul_case_name(int(sc.kind[-1])))
        if not run.trace.collectives:  # case 1 sends nothing: no S to state
            return tr("RingView", "{what} · {devices} · no communication").format(what=what, devices=devices)
    elif sc.kind == "tp-forward":
        what = tr("RingView", "Tensor-parallel forward")
    elif getattr(run, "mesh", None) is not None:  # a mesh program: its messages on the machine's own wiring
        return tr("RingView", "Mesh {mesh}: {program} · {devices} · {link}").format(
            mesh=run.mesh.describe, program=run.mesh.program, devices=devices, link=run.link.name)
    else:
        what = tr("RingView", "Tensor-parallel decode step")
    size = {c.op: c.nbytes for c in reversed(run.trace.collectives)}
    if run.tp is not None and {"all-reduce", "all-gather"} <= set(size):
        # the logits all-gather moves vocab/d_model × S: state each collective's bytes
        return tr("RingView", "{what} · {devices} · all-reduce {S}, all-gather {G} · {link}").format(
            what=what, devices=devices, S=fmt_bytes(size["all-reduce"]), G=fmt_bytes(size["all-gather"]),
            link=run.link.name)
    return tr("RingView", "{what} · {devices} · S = {S} · {link}").format(
        what=what, devices=devices, S=exact_bytes(sc.nbytes), link=run.link.name)


def forward_moment(run, t):
    """
    What a run with ops (the TP forward / decode step on the clock) does at t, seen from GPU 0
    (every GPU runs the same schedule): ("start", None), ("end", None), ("op", rec) — GPU 0
    computes rec, or rec just ended at t — or ("collective", c) — a collective is under way or
    just ended. None for a run without ops.
    """
    idx = run.index
    if not run.trace.computes:
        return None
    if t <= idx.eps and idx.t_total > 0:
        return ("start", None)
    if t >= idx.t_total - idx.eps:
        return ("end", None)
    rec = idx.computing(0, t)
    if rec is not None:
        return ("op", rec)
    c = idx.display_collective(t)
    return ("collective", run.trace.collectives[c]) if c is not None else ("start", None)


def forward_status(run, t) -> str | None:
    """
    The status bar's step text for a run with ops, or None for other runs: the op GPU 0
    computes ("op 10 of 16: layer 1 · QKV (computing)") or the collective step under way
    ("layer 1 · attention: Ring all-reduce 3 of 5, step 2 of 6 in flight"): playback stops at
    every op's end and every ring step's end, so counting stops as steps would say nothing.
    """
    moment = forward_moment(run, t)
    if moment is None:
        return None
    kind, what = moment
    idx, C = run.index, len(run.trace.collectives)
    J = idx.op_number(0, idx.first_op(0))[1] if idx.first_op(0) is not None else 0
    if kind == "start":
        return tr("RingView", "start: {J} ops and {C} collectives per GPU").format(J=J, C=C)
    if kind == "end":
        return tr("RingView", "done: {J} ops and {C} collectives per GPU").format(J=J, C=C)
    if kind == "op":
        j, J = idx.op_number(0, what)
        done = t >= what.t_end - idx.eps
        state = tr("RingView", "done") if done else tr("RingView", "computing")
        return tr("RingView", "op {j} of {J}: {op} ({state})").format(j=j, J=J, op=op_place(what), state=state)
    c = what
    k, K = step_of(idx, c.id, t)[0], c.n_steps
    head = tr("RingView", "{where}: {coll} (collective {i} of {C})").format(
        where=place_name(c.label), coll=op_title(c.op, c.algo), i=c.id + 1, C=C)
    if abs(t - idx.step_ends[c.id][k]) <= idx.eps:
        step = tr("RingView", "after step {k} of {K}").format(k=k + 1, K=K)
    else:
        step = tr("RingView", "step {k} of {K} in flight").format(k=k + 1, K=K)
    return f"{head}, {step}"


def _compute_line(run, t) -> str | None:
    """The header's step line while GPU 0 computes (or at the start, before its first op)."""
    moment = forward_moment(run, t)
    if moment is None or moment[0] not in ("start", "op"):
        return None
    idx = run.index
    rec = moment[1] if moment[0] == "op" else idx.first_op(0)
    if rec is None:
        return None
    j, J = idx.op_number(0, rec)
    if moment[0] == "start":
        state = tr("RingView", "next")
    elif t >= rec.t_end - idx.eps:
        state = tr("RingView", "done")
    else:
        state = tr("RingView", "in progress")
    return tr("RingView", "{op}: every GPU computes · op {j} of {J} ({state})").format(
        op=op_place(rec), j=j, J=J, state=state)


def by_phase(index) -> bool:
    """Every collective of the run is stepped by phase: the status bar's stops are phases."""
    index = getattr(index, "index", index)
    ends = getattr(index, "phase_ends", ())
    return bool(ends) and all(ends)


def subcaption(run, c, t) -> str:
    lines = []
    computing = _compute_line(run, t)
    if computing is not None:
        lines.append(computing)
    elif c is None:
        if run.matmul is not None and run.matmul.case == 1:
            lines.append(tr("RingView", "No communication: every GPU multiplies its own rows of A by all of B."))
        else:
            lines.append(tr("RingView", "No communication in this scenario."))
    else:
        k, K, state, phase = stop_of(run.index, c, t)
        phase = None if phase is None else phase_word(phase)
        if K == 0:
            state = tr("RingView", "one device: nothing to send")
        elif state == DONE:
            state = tr("RingView", "done")
        elif state == NEXT:
            state = tr("RingView", "next")
        else:
            state = tr("RingView", "in progress")
        where = place_name(c.label) if len(run.trace.collectives) > 1 else ""
        coll = op_title(c.op, c.algo)
        if where and phase is not None:
            lines.append(tr("RingView", "{where}: {coll} · phase {k} of {K}: {phase} ({state})").format(
                where=where, coll=coll, k=k + 1, K=K, phase=phase, state=state))
        elif where:
            lines.append(tr("RingView", "{where}: {coll} · step {k} of {K} ({state})").format(
                where=where, coll=coll, k=k + 1, K=K, state=state))
        elif K and phase is not None:
            lines.append(tr("RingView", "Phase {k} of {K}: {phase} ({state})").format(
                k=k + 1, K=K, phase=phase, state=state))
        elif K:
            lines.append(tr("RingView", "Step {k} of {K} ({state})").format(k=k + 1, K=K, state=state))
        else:
            lines.append(tr("RingView", "{coll} · {state}").format(coll=coll, state=state))
    if run.tp is not None:
        lines.append(tr("RingView", "max |TP − single| = {d:.1e}").format(d=run.tp.max_abs_diff))
    elif run.matmul is not None:
        lines.append(tr("RingView", "max |C − A·B| = {d:.1e}").format(d=run.matmul.max_err))
    return "\n".join(lines)


def swatch_devices(n: int) -> list:
    """The devices the colour key shows: all up to 8, else 8 spread round the ring."""
    return list(range(n)) if n <= STRIPE_MAX_N else sorted({round(k * n / STRIPE_MAX_N) for k in range(STRIPE_MAX_N)})


def ring_texts(run, n: int | None = None) -> RingTexts:
    """Every text the ring view's layout places for `run` drawn with n devices (default: the run's),
    in the current language."""
    n = run.scenario.n if n is None else n
    if n > BOX_MODE_MAX_N:
        widest = [str(d) for d in range(n)]
    elif any(sends_queue(c) for c in run.trace.collectives):  # "GPU 3", "7 queued" below while waiting
        widest = [queued_label(d, max(n - 1, 1)) for d in range(n)]
    else:
        widest = [device_name(d, run.comm.topology if run.comm is not None else None) for d in range(n)]
    chips = is_tpu(run.comm.topology if run.comm is not None else None)
    legend, key_title = legend_text(run.trace, n, bool(np.any(run.trace.column("reduce"))), chips)
    return RingTexts(
        title=scenario_title(run.scenario, run), step_lines=tuple(step_line_variants(run)),
        clock_lines=tuple(tr("RingView", "t = {t} of {T}").format(t=f"{x} {unit}", T=fmt_time(run.index.t_total))
                          for x in ("0", "8.88", "88.8", "888", "1e+03") for unit in ("s", "ms", "µs", "ns", "ps")),
        device_labels=tuple(widest), switch_name=switch_name(run.link), swatch_title=key_title,
        swatch_labels=tuple(str(d) for d in swatch_devices(n)), legend=legend)


def sends_queue(c) -> bool:
    """Whether a collective's sends wait for their port in turn (its registry record's `queues`:
    one-shot, two-shot), so its devices' labels may carry a second line, "6 queued"."""
    return bool(getattr(ALGORITHMS.get(c.op, {}).get(c.algo), "queues", False))


def queued_label(d: int, k: int) -> str:
    """A device's name, and below it how many of its sends wait for its port (direct all-reduce)."""
    name = tr("RingView", "GPU {d}").format(d=d)
    if not k:
        return name
    return name + "\n" + tr("RingView", "{k} queued").format(k=k)


def ring_shape(run, n: int | None = None) -> RingShape:
    tr = run.trace
    return RingShape(run.scenario.n if n is None else n, max((c.n_chunks for c in tr.collectives), default=0),
                     bool(np.any(tr.column("dst") == SWITCH)))


def step_line_variants(run) -> list:
    """Every step line the run can show, up to the step numbers' digits: at each collective's
    start, in its first and last step, and at its end (the header reserves the tallest)."""
    idx = run.index
    out = {subcaption(run, None, 0.0)} if not run.trace.collectives else set()
    for c in run.trace.collectives:
        ends = idx.phase_ends[c.id] or idx.step_ends[c.id]
        times = [c.t_start, c.t_end]
        if ends:
            first_end = ends[0]
            last_start = ends[-2] if len(ends) > 1 else c.t_start
            times += [(c.t_start + first_end) / 2, (last_start + ends[-1]) / 2]
        out.update(subcaption(run, c, t) for t in times)
    seen = set()  # with ops: the start, and per op its lines in progress and done
    if run.trace.computes:
        out.add(subcaption(run, None, 0.0))
    for rec in (run.index.computes if run.trace.computes else ()):
        if rec.device == 0 and (rec.label, rec.layer) not in seen:
            seen.add((rec.label, rec.layer))
            out.update(subcaption(run, None, x) for x in ((rec.t_start + rec.t_end) / 2, rec.t_end))
    return sorted(out)


def legend_text(trace, n: int, reduces: bool, chips: bool = False) -> tuple:
    """(legend, colour-key title): what a slot's colour means at this n; chips: the devices are TPU
    chips (words.is_tpu of the run's topology), and the texts say chip where they said GPU."""
    if n <= STRIPE_MAX_N:
        key = tr("RingView", "chip colours:") if chips else tr("RingView", "GPU colours:")
    else:
        key = tr("RingView", "Colour by position round the ring:")
    if not trace.collectives:
        return "", key
    if not reduces:
        return tr("RingView", "A slot's colour says whose data it holds; grey = not there yet. "
                  "Outlined: arrived in the last step."), key
    if n <= STRIPE_MAX_N:
        if chips:
            return tr("RingView", "A slot's colour says whose data it holds; bands = a partial sum of those chips' "
                      "data. Outlined: changed in the last step."), key
        return tr("RingView", "A slot's colour says whose data it holds; bands = a partial sum of those GPUs' data. "
                  "Outlined: changed in the last step."), key
    # beyond 8 GPUs a sum is not drawn as bands: it takes its chunk's colour (chunk k: GPU k's colour)
    if chips:
        return (tr("RingView", "One chip's data: that chip's colour. A sum: its chunk's colour (chunk k = chip "
                   "k's colour), filled by the share of the {n} chips added so far; full = the whole sum. "
                   "Outlined: changed in the last step.").format(n=n),
                tr("RingView", "chip and chunk colour by position round the ring:"))
    return (tr("RingView", "One GPU's data: that GPU's colour. A sum: its chunk's colour (chunk k = GPU k's "
               "colour), filled by the share of the {n} GPUs added so far; full = the whole sum. "
               "Outlined: changed in the last step.").format(n=n),
            tr("RingView", "GPU and chunk colour by position round the ring:"))


def switch_name(link) -> str:
    if link.name.startswith("NVLink"):
        return tr("RingView", "NVSwitch")
    if link.name.startswith("PCIe"):
        return tr("RingView", "PCIe switch")
    return tr("RingView", "switch")


# -- geometry helpers --------------------------------------------------------------------


def _timed(topology, c):
    """The topology as the simulation timed collective c: the engine's topology.timed_as (on a GPU
    machine NCCL's links and base for its protocol at c's S, what timed_as_machine ran it with;
    the formula panel's timed_topology asks the same), else the topology itself."""
    if topology is None or c is None or topology.n != c.n or getattr(topology, "record", None) is None:
        return topology  # a topology of the reader's own: no plan to be timed by
    if not _planned_by_machine(topology, c):  # a mesh axis's collective: its own plan timed it
        return topology
    return topology.timed_as(c.op, c.algo, float(c.nbytes))


def _planned_by_machine(topology, c) -> bool:
    """Whether collective c ran one of the machine's own algorithms (a collective over a mesh axis
    runs "ring over Y", planned by the mesh, whose record carries its plan instead)."""
    try:
        return c.algo in topology.algorithms(c.op)
    except ValueError:  # an op the registry does not know (the mesh's ppermute)
        return False


def timed_base(run, c) -> float:
    """The base latency collective c of run was timed with (_timed: on a GPU machine NCCL's for
    its protocol at c's S, e.g. NVLS Tree's 66.8 µs on 2 × 8 H100), else the machine's own."""
    topo = run.comm.topology if run.comm is not None else None
    if topo is not None and c is not None and c.plan is not None and not _planned_by_machine(topo, c):
        return sum(t.seconds for t in c.plan.terms if t.name == "base")  # the mesh plan's own base
    rec = record_of(_timed(topo, c))
    return rec.base if rec is not None else 0.0


def step_notes(topology, base=None) -> tuple:
    """Every note step_note can give on `topology` ("" on a plain switch); base: the base
    latency the collective was timed with (timed_base; None: the topology's own)."""
    rec = record_of(topology)
    if rec is None:
        return ()
    base = rec.base if base is None else float(base)
    wait = (tr("RingView", "base latency {B}: the call starts").format(B=fmt_time(base)),) if base > 0 else ()
    return tuple(_note(key, rec) for key in rec.notes) + wait


def _note(key, rec) -> str:
    """The step line's note of words key `key` (KindRecord.notes) on a machine of record rec."""
    if key == "between":
        return tr("RingView", "inter-node: {link}").format(link=rec.words_link("between").name)
    if key == "inside":
        return tr("RingView", "inside the nodes: {link}").format(link=rec.words_link("inside").name)
    if key == "nics":
        return tr("RingView", "{link} and the NICs").format(link=rec.words_link("inside").name)
    if key == "slice":
        return tr("RingView", "slice links: {link}").format(link=rec.words_link("slice").name)
    return tr("RingView", "torus links: {link}").format(link=rec.words_link("torus").name)


def _run_notes(run, topology) -> tuple:
    """Every note step_note can give in run: each collective's, with the base it was timed with."""
    bases = dict.fromkeys(timed_base(run, c) for c in run.trace.collectives) or {None: None}
    return tuple(dict.fromkeys(note for b in bases for note in step_notes(topology, b)))


def _timed_links(run, topology):
    """((intra, inter), algo, protocol): the links every collective of run was timed with
    (_timed) when they share them and they are not the machine's own (NCCL's protocol
    on a GPU machine); else None."""
    cs = [c for c in run.trace.collectives if c.n == topology.n]
    if not cs or len(cs) < len(run.trace.collectives):
        return None
    links = {(r.link("intra"), r.link("inter")) for r in (record_of(_timed(topology, c)) for c in cs)}
    protos = {(c.algo, c.plan.protocol if c.plan is not None else topology.protocol(c.op, c.algo, float(c.nbytes))[0])
              for c in cs}  # the plan the run executed (its record), else the machine's plan for it
    rec = record_of(topology)
    if len(links) > 1 or len(protos) > 1 or links == {(rec.link("intra"), rec.link("inter"))}:
        return None
    return links.pop(), *protos.pop()


def timed_legend(topology, c, TA, TI, proto) -> str:
    """What a GPU machine's blocks are timed with, in words a student follows: NCCL's algorithm and
    protocol, its start-up (the timed topology's base), then its effective rates across and inside
    the nodes; no α per step, as NCCL's model counts it in the start-up; and that the link figures
    drawn on the fabric and the nodes are the hardware's, not what the timing used."""
    base = record_of(_timed(topology, c)).base
    name = nccl_algo_name(topology, c.op, c.algo)
    if base > 0 and TI.alpha == 0 and TA.alpha == 0:
        text = tr("RingView", "Blocks with a dashed gold outline cross between nodes over the NICs. Timed as "
                              "NCCL runs {algo} with {protocol}: {base} start-up, then {bw} effective across nodes and "
                              "{bw_in} inside a node, with no latency per step (NCCL's model counts it in the "
                              "start-up). The link figures on the fabric and the nodes are the hardware's own.")
    else:
        text = tr("RingView", "Blocks with a dashed gold outline cross between nodes over the NICs. Timed as "
                              "NCCL runs {algo} with {protocol}: {bw} and α {a} per step across nodes, {bw_in} and "
                              "α {a_in} inside a node, after a {base} start-up. The link figures on the fabric and "
                              "the nodes are the hardware's own.")
    return text.format(algo=name, protocol=proto, base=fmt_time(base), bw=fmt_rate(TI.bw), a=fmt_time(TI.alpha),
                       bw_in=fmt_rate(TA.bw), a_in=fmt_time(TA.alpha))


def step_note(run, msgs, t=None) -> str:
    """The step line's note on a machine: are this step's messages inter-node, inside the nodes
    (or both), or on the torus's links; at time t before any of them starts, the collective
    call's base latency (the one it was timed with: timed_base)."""
    topo = run.comm.topology if run.comm is not None else None
    if not msgs:
        return ""
    base = timed_base(run, run.trace.collectives[msgs[0].coll])
    notes = step_notes(topo, base)
    if not notes:
        return ""
    if base > 0 and t is not None and t < min(m.t_start for m in msgs) - 1e-12:
        return notes[-1]
    if base > 0:
        notes = notes[:-1]
    if not notes:
        return ""
    if len(notes) == 1:
        return notes[0]
    P = record_of(topo).per_node
    cross = [m.src >= 0 and m.dst >= 0 and m.src // P != m.dst // P for m in msgs]
    return notes[0] if all(cross) else notes[1] if not any(cross) else notes[2]


def machine_texts(run, texts):
    """The ring texts with what a machine adds: every node's name and the fabric's,
    or a torus's links, and the legend's sentence about messages that leave a node."""
    topo = run.comm.topology if run.comm is not None else None
    rec = record_of(topo)
    if rec is None or rec.layout == "switch":
        return texts
    if rec.layout == "nodes":
        A, I = rec.words_link("inside"), rec.words_link("between")
        names = tuple(tr("RingView", "Node {m} · {link}").format(m=m, link=A.name) for m in range(rec.nodes))
        short = tuple(tr("RingView", "Node {m}").format(m=m) for m in range(rec.nodes))
        fabric = tr("RingView", "{link} fabric: one NIC per GPU, {bw} each way, α {a}").format(
            link=I.name, bw=fmt_rate(I.bw), a=fmt_time(I.alpha))
        timed = _timed_links(run, topo)
        if timed is None:
            legend = texts.legend + " " + tr("RingView", "Blocks with a dashed gold outline cross between nodes "
                                                         "over the NICs ({bw}, α {a}); inside a node NVLink "
                                                         "({bw_in}, α {a_in}).").format(
                bw=fmt_rate(I.bw), a=fmt_time(I.alpha), bw_in=fmt_rate(A.bw), a_in=fmt_time(A.alpha))
        else:  # the blocks move as NCCL's model times them: which numbers, and why they are not the links'
            (TA, TI), algo, proto = timed
            legend = texts.legend + " " + timed_legend(topo, run.trace.collectives[0], TA, TI, proto)
        title = texts.title + " · " + tr("RingView", "{N} nodes × {P}").format(N=rec.nodes, P=rec.per_node)
        steps = tuple(f"{v} · {note}" for v in texts.step_lines for note in _run_notes(run, topo))
        return texts._replace(title=title, node_names=names, node_short=short, fabric_name=fabric, legend=legend,
                       step_lines=texts.step_lines + steps)
    shape, link = "×".join(map(str, rec.grid)), rec.main  # the grid's layout
    fabric = tr("RingView", "{shape} torus, {link}s of {bw} each way; a dashed link leaving an edge wraps "
                            "round to the opposite edge").format(shape=shape, link=link.name, bw=fmt_rate(link.bw))
    name = tr("RingView", "{shape} torus").format(shape=shape)
    if not any(rec.wrap):  # no wraparound link: a slice (a mesh), named so in the title and the fabric's line
        fabric = tr("RingView", "{shape} slice, {link}s of {bw} each way, without wraparound links").format(
            shape=shape, link=link.name, bw=fmt_rate(link.bw))
        name = tr("RingView", "{shape} slice").format(shape=shape)
    title = texts.title + " · " + name
    steps = tuple(f"{v} · {note}" for v in texts.step_lines for note in _run_notes(run, topo))
    return texts._replace(title=title, fabric_name=fabric, step_lines=texts.step_lines + steps)


def step_status(f, index=None) -> str:
    """'start (7 steps)', 'step 3 of 7 in flight', 'after step 3 of 7', 'done: 7 steps' for Frame f;
    'phase 1 of 2 in flight', 'after phase 1 of 2', ... when the run's stops are phases (by_phase)."""
    k, K = f.stop, f.n_stops
    if K == 0:
        return tr("MainWindow", "no steps")
    if index is not None and by_phase(index):
        if f.at_end:
            return tr("MainWindow", "done: 1 phase") if K == 1 else tr("MainWindow", "done: {K} phases").format(K=K)
        if k == 0 and f.t <= 0:
            return tr("MainWindow", "start (1 phase)") if K == 1 else tr("MainWindow", "start ({K} phases)").format(K=K)
        if f.at_stop:
            return tr("MainWindow", "after phase {k} of {K}").format(k=k, K=K)
        return tr("MainWindow", "phase {k} of {K} in flight").format(k=k + 1, K=K)
    if f.at_end:
        return tr("MainWindow", "done: {steps}").format(steps=n_steps(K))
    if k == 0 and f.t <= 0:
        return tr("MainWindow", "start ({steps})").format(steps=n_steps(K))
    if f.at_stop:
        return tr("MainWindow", "after step {k} of {K}").format(k=k, K=K)
    return tr("MainWindow", "step {k} of {K} in flight").format(k=k + 1, K=K)
