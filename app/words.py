"""
The app's words in one place: how a time, a size, a rate and a count are written, what an
algorithm and an op are called, and how a device or a place in the model is named. Every view
and every export reads these, so a number looks the same on the ring, in the explanation, in the
step timeline and in a file.

Qt-free: it imports no view and no Qt module. Its strings are translated through Qt when the app
has loaded Qt (and so may have installed a translator); without Qt they stay English.
"""

from __future__ import annotations

import math
import sys
from typing import NamedTuple

from simcore.comm_sim import ALGORITHMS
from simcore.kind_record import record_of
from simcore.nccl_tuning import size_text


def translate(context: str, text: str) -> str:
    """QCoreApplication.translate when Qt is loaded (the translator lives there), else `text`."""
    core = sys.modules.get("PySide6.QtCore")
    return core.QCoreApplication.translate(context, text) if core is not None else text


def _tr(text):
    return translate("Explain", text)


def _ring(text):
    return translate("RingView", text)


def _words(text):
    return translate("Words", text)


# -- numbers -------------------------------------------------------------------------------
def fmt_time(s: float, digits: int = 3) -> str:
    """
    Seconds with an SI unit and `digits` significant digits, as a slide writes them: '1.9 µs',
    '13 ms', '41.2 µs', '850 ns', '1.5 s', '12.5 ps'; 0 as '0 s'. The one time format of the app
    (the explanation, the formula, the ring, the step timeline, exports): the link's α reads as
    its datasheet gives it, and a value printed twice is the same text.
    """
    s = float(s)
    if s == 0 or not math.isfinite(s):
        return "0 s" if s == 0 else f"{s} s"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9), ("ps", 1e-12)):
        v = float(f"{s / scale:.{digits}g}")  # rounded first: 0.99996 ms is "1 ms", not "1e+03 µs"
        if abs(v) >= 1 or unit == "ps":
            return f"{v:.0f} {unit}" if abs(v) >= 10**digits else f"{v:.{digits}g} {unit}"
    return f"{s} s"  # not reached: ps takes the rest


def fmt_bytes(b: float) -> str:
    """Bytes with a binary unit: 128 KiB, 1 MiB, 96 B."""
    b = float(b)
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= scale:
            v = b / scale
            return f"{v:.3g} {unit}" if v < 1000 else f"{v:.0f} {unit}"
    return f"{b:.3g} B" if b < 1000 else f"{b:.0f} B"


def exact_bytes(b: float) -> str:
    """S as a title states it: fmt_bytes where that names b exactly ("1 MiB"), else every byte
    ("1,048,575 B": n = 3 takes the nearest size under 1 MiB that splits, which is no "1024 KiB")."""
    text = fmt_bytes(b)
    num, unit = text.split()
    scale = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[unit]
    if float(num) * scale == float(b):
        return text
    return f"{int(b):,} B" if float(b) == int(b) else f"{float(b):g} B"


def fmt_bw(bps: float) -> str:
    """Bytes per second with a decimal unit: 450 GB/s, 50 GB/s, 12.5 MB/s."""
    for unit, scale in (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6)):
        if bps >= scale:
            return f"{bps / scale:.3g} {unit}"
    return f"{bps:.3g} B/s"


def fmt_rate(bw: float) -> str:
    """A link's bandwidth as its datasheet writes it: decimal GB/s ("50 GB/s", "450 GB/s")."""
    return f"{bw / 1e9:.3g} GB/s"


def fmt_flops(f: float) -> str:
    """FLOP per second with a decimal unit: 989 TFLOP/s."""
    for unit, scale in (("PFLOP/s", 1e15), ("TFLOP/s", 1e12), ("GFLOP/s", 1e9)):
        if f >= scale:
            return f"{f / scale:.3g} {unit}"
    return f"{f:.3g} FLOP/s"


# -- counts (singular and plural in English; Chinese has one form) ---------------------------
def n_steps(k: int) -> str:
    """'1 step', '7 steps'."""
    return _words("1 step") if k == 1 else _words("{k} steps").format(k=k)


def n_messages(k: int) -> str:
    """'1 message', '32 messages'."""
    return _words("1 message") if k == 1 else _words("{k} messages").format(k=k)


def n_gpus(k: int) -> str:
    """'1 GPU', '8 GPUs'."""
    return _words("1 GPU") if k == 1 else _words("{k} GPUs").format(k=k)


# -- devices ---------------------------------------------------------------------------------
def is_tpu(topology) -> bool:
    """A machine whose devices are chips, not GPUs (its kind's record says: a TPU torus)."""
    rec = record_of(topology)
    return rec is not None and rec.device == "chip"


def device_name(d: int, topology=None) -> str:
    """'GPU 3', or 'chip 3' on a TPU torus."""
    return _words("chip {d}").format(d=d) if is_tpu(topology) else _ring("GPU {d}").format(d=d)


# -- algorithms ------------------------------------------------------------------------------
class AlgoText(NamedTuple):
    """What the app says about one algorithm (translated): see algo_text."""

    name: str  # in the algorithm menus, e.g. "ring"
    title: str  # heading, e.g. "Ring all-reduce"
    hint: str  # one line under the controls
    why: str  # the sentence under the closed form: why it costs what it costs


def _algo_texts() -> dict:
    """The sentences of every algorithm, keyed by its registry record's explain_key
    (simcore.comm_sim.ALGORITHMS[op][algo].explain_key). A new algorithm adds one entry here."""
    ring_why = _tr("Each step needs the chunk the step before delivered, so α is paid at every step.")
    channels = (_tr("channel rings (NCCL)"),
                _tr("NCCL's channel rings: one ring per NIC through every GPU of every node."),
                _tr("Every step waits for the slowest hop, the one through a NIC; one ring per NIC keeps every NIC "
                    "busy."))
    torus = (_tr("bidirectional rings per torus axis"),
             _tr("Torus: bidirectional rings along each axis in turn, on a part of the array per axis."),
             _tr("Both directions of every link carry data: about half the ring's time on each axis."))
    machine = {f"ring-nodes-{op}": AlgoText(channels[0], title, *channels[1:]) for op, title in (
        ("all-reduce", _tr("Ring all-reduce across nodes")), ("all-gather", _tr("Ring all-gather across nodes")),
        ("reduce-scatter", _tr("Ring reduce-scatter across nodes")))}
    machine.update({f"torus-{op}": AlgoText(torus[0], title, *torus[1:]) for op, title in (
        ("all-reduce", _tr("Torus all-reduce")), ("all-gather", _tr("Torus all-gather")),
        ("reduce-scatter", _tr("Torus reduce-scatter")))})
    return machine | {
        "ring-all-gather": AlgoText(
            _tr("ring"), _tr("Ring all-gather"), _tr("S must split into n equal chunks."), ring_why),
        "ring-reduce-scatter": AlgoText(
            _tr("ring"), _tr("Ring reduce-scatter"), _tr("S must split into n equal chunks."), ring_why),
        "one-shot-all-gather": AlgoText(
            _tr("one-shot (direct)"), _tr("One-shot all-gather"),
            _tr("One-shot: every GPU sends its chunk straight to every other GPU, all at once."),
            _tr("Every message is issued at once: α is paid once while each port streams its bytes.")),
        "one-shot-reduce-scatter": AlgoText(
            _tr("one-shot (direct)"), _tr("One-shot reduce-scatter"),
            _tr("One-shot: every GPU sends each chunk straight to the GPU that owns it, all at once."),
            _tr("Every message is issued at once: α is paid once while each port streams its bytes.")),
        "ring-all-reduce": AlgoText(
            _tr("ring"), _tr("Ring all-reduce"),
            _tr("Ring: reduce-scatter then all-gather, 2(n − 1) steps of S/n bytes."), ring_why),
        "rd-all-reduce": AlgoText(
            _tr("recursive doubling (rd)"), _tr("Recursive-doubling all-reduce"),
            _tr("Recursive doubling: log₂ n rounds; partners d and d XOR 2^k swap the whole buffer."),
            _tr("Each round adds what the last round summed, so α is paid once per round, with all S bytes.")),
        "innet-all-reduce": AlgoText(
            _tr("in-network (innet, NVLS)"), _tr("In-network all-reduce (NVLS)"),
            _tr("In-network (NVLS/SHARP): the switch adds the chunks and multicasts the sum."),
            _tr("The chunks stream up and back down without waiting for each other: α is paid once up and "
                "once down.")),
        "one-shot-all-reduce": AlgoText(
            _tr("one-shot (direct)"), _tr("One-shot all-reduce"),
            _tr("One-shot: every GPU sends its whole buffer to every other GPU at once; each port carries "
                "(n − 1)·S."),
            _tr("All n − 1 copies are issued at once: α is paid once while the port streams (n − 1)·S bytes. "
                "Fast for small S, slow for large S.")),
        "direct-all-to-all": AlgoText(
            _tr("one-shot (direct)"), _tr("One-shot all-to-all"),
            _tr("All-to-all: GPU d sends its block j straight to GPU j; here all n − 1 blocks at once."),
            _tr("Every block is issued at once: α is paid once while each port streams (n − 1)/n·S bytes.")),
        "pairwise-all-to-all": AlgoText(
            _tr("pairwise exchange"), _tr("Pairwise-exchange all-to-all"),
            _tr("All-to-all: GPU d sends its block j to GPU j; in round k, d sends to d + k and hears from d − k."),
            _tr("Each round is an exchange both partners wait for, so α is paid in each of the n − 1 rounds.")),
        "hier-all-reduce": AlgoText(
            _tr("hierarchical"), _tr("Hierarchical all-reduce"),
            _tr("Hierarchical, pipelined as NCCL does: reduce-scatter inside each node, all-reduce across nodes on "
                "every GPU's own NIC, all-gather inside each node — chunk by chunk (up to 16 chunks of at least "
                "2 MiB), chunk c + 1 inside the node while chunk c crosses the network."),
            _tr("Only 1/P of the data crosses the network, on all P NICs of a node at once; one call, and the "
                "network's time hides behind the node's phases.")),
        "tree-all-reduce": AlgoText(
            _tr("tree (NCCL)"), _tr("Tree all-reduce"),
            _tr("NCCL's Tree: partial sums run along a chain inside each node, up a double binary tree across "
                "the nodes, and the total comes back down; half the buffer through each tree."),
            _tr("α is paid along the chain and once per tree level: the latency grows with log₂ of the nodes, "
                "not with the GPU count.")),
        "two-shot-all-reduce": AlgoText(
            _tr("two-shot"), _tr("Two-shot all-reduce"),
            _tr("Two-shot: each chunk goes straight to its owner, which adds them and sends the sum to all."),
            _tr("Two phases, each issued at once: α is paid twice, and each port carries the ring's "
                "2(n − 1)/n·S bytes.")),
    }


def _machine_titles() -> dict:
    """Display titles of the machine algorithms, whose registry names are code names."""
    return {"hier": _words("Hierarchical {op}"), "ring-nodes": _words("Ring {op} across nodes"),
            "torus": _words("Torus {op}"), "bidir-ring": _words("Bidirectional ring {op}"),
            "tree": _words("Tree {op}")}


def algo_text(op: str, algo: str) -> AlgoText:
    """The translated sentences of `algo` for collective `op`. An algorithm without sentences
    still gets a readable title ("Hierarchical all-reduce"), never a code name in brackets."""
    rec = ALGORITHMS.get(op, {}).get(algo)
    text = _algo_texts().get(rec.explain_key) if rec is not None else None
    if text is None:
        title = _machine_titles().get(algo)
        title = title.format(op=op) if title else f"{op[:1].upper()}{op[1:]}, {algo}"
        return AlgoText(algo, title, rec.description if rec else "", "")
    return text


def op_title(op: str, algo: str) -> str:
    """'Ring all-gather', 'Recursive-doubling all-reduce', 'Hierarchical all-reduce' (translated)."""
    return algo_text(op, algo).title


def opened_what(run) -> str:
    """What an opened run (app/opened_run.py) is, for its title and the Scenario dock: its op and
    the code's own algorithm name — "Ring all-reduce" for a registered one, "all-reduce · my-ring
    (your algorithm)" otherwise — and its label; "run.json: 5 collectives, 12 ops" for a run of
    several. The run's scenario is only a stand-in the views need, never what is said."""
    from simcore.algorithms import ALGORITHMS

    colls = [c for c in run.trace.collectives if c.last_msg > c.first_msg] or list(run.trace.collectives)
    kinds = {(c.op, c.algo) for c in colls}
    if len(kinds) == 1 and len(colls) <= 2:
        c = colls[0]
        if c.algo in ALGORITHMS.get(c.op, {}):
            what = op_title(c.op, c.algo)
        else:
            what = translate("RingView", "{op} · {algo} (your algorithm)").format(op=c.op, algo=c.algo)
        return what + (f" · {c.label}" if c.label and len(colls) == 1 else "")
    name = run.opened.name or translate("RingView", "your run")
    return translate("RingView", "{name}: {k} collectives, {m} ops").format(
        name=name, k=len(run.trace.collectives), m=len(run.trace.computes))


# -- the forward's ops and places --------------------------------------------------------------
def _op_names() -> dict:
    return {"attn norm": _tr("norm"), "mlp norm": _tr("norm"), "final norm": _tr("final norm"),
            "qkv": _tr("QKV"), "attention": _tr("attention"), "attn out": _tr("out proj"),
            "gate/up": _tr("gate/up"), "down": _tr("down"), "lm head": _tr("LM head")}


def split_chunk(label: str) -> tuple[str, str]:
    """"attn out 2/8" -> ("attn out", "2/8"): a collective matmul's chunk; ("qkv", "") otherwise."""
    head, _, tail = label.rpartition(" ")
    if head and "/" in tail and tail.replace("/", "").isdigit():
        return head, tail
    return label, ""


def op_name(label: str) -> str:
    """The display name of a step_sim op label: "qkv" -> "QKV", "attn out 2/8" -> "out proj 2/8"."""
    base, chunk = split_chunk(label)
    name = _op_names().get(base, base)
    return f"{name} {chunk}" if chunk else name


def compute_label(rec) -> str:
    """What a device box says while it computes (a trace.Compute): the op and its time, "QKV 41 µs"."""
    return f"{op_name(rec.label)} {fmt_time(rec.t_end - rec.t_start)}"


def place_name(label: str) -> str:
    """A TP collective's place in words: "layer 0 attn" -> "layer 0 · attention", "layer 1 mlp"
    -> "layer 1 · MLP", "logits" -> "logits"; other labels as they are."""
    words = label.split(" ")
    if len(words) == 3 and words[0] == "layer" and words[1].isdigit() and words[2] in ("attn", "mlp"):
        if words[2] == "attn":
            return _ring("layer {i} · attention").format(i=words[1])
        return _ring("layer {i} · MLP").format(i=words[1])
    if label == "logits":
        return _ring("logits")
    return label


def op_place(rec) -> str:
    """Where an op (trace.Compute) is and what it is: "layer 1 · QKV", "after the layers · LM head"."""
    where = _ring("layer {i}").format(i=rec.layer) if rec.layer >= 0 else _ring("after the layers")
    return f"{where} · {op_name(rec.label)}"


# -- the sharded matmul's cases ("How to Scale Your Model", ch. 3), named by their notation ------
MATMUL_NOTATION = {  # (A, B, C) with X the device axis; case 3's C is a partial sum before its all-reduce
    1: ("A[I_X, J]", "B[J, K]", "C[I_X, K]"),
    2: ("A[I, J_X]", "B[J, K]", "C[I, K]"),
    3: ("A[I, J_X]", "B[J_X, K]", "C[I, K]"),
    4: ("A[I_X, J]", "B[J, K_X]", "C[I_X, K]"),
}


def matmul_case_name(k: int) -> str:
    """'A[I_X, J] · B[J, K] → C[I_X, K]': case k by its notation (the lecture's way of naming it)."""
    A, B, C = MATMUL_NOTATION[k]
    return f"{A} · {B} → {C}"


def n_devices(k: int, topology=None) -> str:
    """'8 GPUs', '1 GPU', or '16 chips' on a TPU torus."""
    if is_tpu(topology):
        return _words("1 chip") if k == 1 else _words("{k} chips").format(k=k)
    return n_gpus(k)


def number_word(k: int) -> str:
    """A small count as a word, as a sentence says it: 'eight'; 11 and up as digits."""
    words = (_words("zero"), _words("one"), _words("two"), _words("three"), _words("four"), _words("five"),
             _words("six"), _words("seven"), _words("eight"), _words("nine"), _words("ten"))
    return words[k] if 0 <= k < len(words) else str(k)


def phase_word(key: str) -> str:
    """A phase as the step texts say it ("one-shot reduce-scatter", "up into the switch");
    key: the registry's phase name (trace_index.stop_of's)."""
    words = {"one-shot reduce-scatter": _ring("one-shot reduce-scatter"),
             "one-shot all-gather": _ring("one-shot all-gather"),
             "one-shot all-to-all": _ring("one-shot all-to-all"),
             "up": _ring("up into the switch"), "down": _ring("down from the switch"),
             "all-reduce": _ring("all-reduce"), "all-gather": _ring("all-gather"),
             "reduce-scatter": _ring("reduce-scatter"), "all-to-all": _ring("all-to-all"),
             "reduce (chain in node)": _ring("reduce along the chain in the node"),
             "reduce (tree across nodes)": _ring("reduce up the tree across nodes"),
             "broadcast (tree across nodes)": _ring("broadcast down the tree across nodes"),
             "broadcast (chain in node)": _ring("broadcast along the chain in the node")}
    return words.get(key, key)


# -- a GPU machine's protocol, and why -------------------------------------------------------
def _nccl_algo(model) -> str:
    """A model's algorithm as the reason names it: the registry's name, and NCCL's where it is
    another kind of algorithm (hier is NCCL's NVLS Tree on a GPU machine; nccl_tuning.label)."""
    if getattr(model, "nccl", "") == "NVLS_TREE":
        return _words("{algo} (NCCL's NVLS Tree)").format(algo=model.algo)
    return model.algo


def nccl_algo_name(topology, op: str, algo: str) -> str:
    """algo as NCCL's model of the machine names it ("hier (NCCL's NVLS Tree)" on a GPU machine of
    several nodes), else the registry's name."""
    for model in topology.nccl_models(op) if record_of(topology).nccl else ():
        if model.algo == algo:
            return _nccl_algo(model)
    return algo


def nccl_reason(topology, op: str, algo: str, S: float) -> tuple[str, str]:
    """
    (protocol, why): the NCCL protocol a GPU machine runs `algo` with for op on S bytes, and the
    reason in one sentence in the app's language: the plan's (topology.plan(op, S, algo), resolved
    once and cached by the engine) words, plan_reason. ("", reason) where NCCL's model does not time
    algo (the lecture's switch, a torus, a one-shot all-reduce).
    """
    if not record_of(topology).nccl or topology.n < 2:
        return "", _words("timed by the lecture's α–β form (no NCCL protocol)")
    from simcore.plan import resolve  # the machine's choice's own plan when algo is that choice
    return plan_reason(resolve(topology, op, float(S), algo).why, float(S))


def _nccl_label(algo: str, nccl: str) -> str:
    """A model's algorithm as the reason names it: the registry's name, and NCCL's where it is another
    kind of algorithm (hier is NCCL's NVLS Tree on a GPU machine; nccl_tuning.label)."""
    if nccl == "NVLS_TREE":
        return _words("{algo} (NCCL's NVLS Tree)").format(algo=algo)
    return algo


def plan_reason(why, S: float) -> tuple[str, str]:
    """
    (protocol, reason) of a plan's why (simcore.plan.Why: the engine's numbers) in the app's language.
    When algo is the machine's own choice for S the sentence says so and names the runner-up; hier
    on a GPU machine of several nodes is NCCL's NVLS Tree, and the sentence says so and how many
    chunks it pipelines S in.
    """
    if why.kind == "lecture":
        return "", _words("timed by the lecture's α–β form (no NCCL protocol)")
    if why.kind == "custom":
        from simcore.nccl_tuning import CUSTOM_AR_SOURCE
        text = _words("{algo} is not one of NCCL's algorithms: timed as the custom all-reduce kernels run, {latency} "
                      "per phase + S/{bw} ({source})").format(
            algo=why.algo, latency=f"{why.latency * 1e6:.1f} µs", bw=f"{why.algbw / 1e9:.0f} GB/s",
            source=CUSTOM_AR_SOURCE)
        return "", text
    proto = ""
    if why.kind == "not-nccl":
        text = _words("{algo} is not one of NCCL's algorithms: timed by the lecture's α–β form").format(algo=why.algo)
    else:
        proto = why.protocol
        lat, bw = f"{why.latency * 1e6:.1f} µs", f"{why.algbw / 1e9:.0f} GB/s"
        if why.kind == "fastest":
            text = _words("{algo} {protocol} is NCCL's fastest at {size}: {latency} latency + S/{bw}").format(
                algo=_nccl_label(why.algo, why.nccl), protocol=proto, size=size_text(S), latency=lat, bw=bw)
            if why.next_algo:
                text += _words(" (next: {algo} {protocol}, {time})").format(
                    algo=_nccl_label(why.next_algo, why.next_nccl), protocol=why.next_protocol,
                    time=f"{why.next_time * 1e6:.1f} µs")
        else:
            text = _words("NCCL runs {algo} with {protocol} at this size: {latency} latency + S/{bw} is the "
                          "least of its protocols").format(algo=_nccl_label(why.algo, why.nccl), protocol=proto,
                                                           latency=lat, bw=bw)
    if why.chunks:
        text += (_words(", pipelined in {C} chunks at this size") if why.chunks > 1
                 else _words(", pipelined in 1 chunk at this size")).format(C=why.chunks)
    if why.kind in ("fastest", "protocol"):
        text += _launch_words(why.launch, why.launch_floor)  # which time the numbers are
    return proto, text


def launch_words(topology) -> str:
    """What a GPU machine's NCCL times include (topology.launch): NCCL's model alone, or the wall-time
    floor measured with CUDA graphs or eager launches (simcore.nccl_tuning.LAUNCH_FLOOR)."""
    rec = record_of(topology)
    return _launch_words(rec.launch, topology.launch_floor() if rec.nccl else 0.0)


def _launch_words(mode: str, floor_s: float) -> str:
    if not mode:
        return _words(" (NCCL's model: no launch or sync)")
    floor = f"{floor_s * 1e6:.1f} µs"
    if mode == "graph":
        return _words("; at least {floor}, as measured with CUDA graphs").format(floor=floor)
    return _words("; at least {floor}, as measured with eager launches").format(floor=floor)


# -- the mesh (named axes): a collective over an axis, in the app's words ------------------------
def _mesh(text):
    return translate("MeshWords", text)


def mesh_op_words(e) -> str:
    """'all-gather over Y' for a mesh event (app.core.mesh_model.MeshEvent)."""
    return _mesh("{op} over {axis}").format(op=e.op, axis=e.axis_name)


def _mesh_machine(m) -> str:
    """A machine as a mesh reason's numbers give it (Why.numbers "machine" / "group": ("switch", n, link),
    ("nodes", N, P, intra, inter), ("torus", shape)), in words; link names are the links' own."""
    kind = m[0] if m else ""
    if kind == "switch":
        return _mesh("a switch of {n} ports ({link})").format(n=m[1], link=m[2])
    if kind == "nodes" and m[2] == 1:
        return _mesh("{N} nodes of one GPU each ({inter} between them)").format(N=m[1], inter=m[4])
    if kind == "nodes":
        return _mesh("{N} nodes of {P} GPUs ({intra} inside a node, {inter} between nodes)").format(
            N=m[1], P=m[2], intra=m[3], inter=m[4])
    if kind == "torus":
        return _mesh("the {shape} torus").format(shape="×".join(str(a) for a in m[1]))
    return str(m[-1]) if m else ""


def _mesh_nccl_what(algo: str) -> str:
    return (_mesh("NVLS (each group reduced in its NVSwitch)") if algo == "innet"
            else _mesh("NCCL's ring"))


def mesh_reason(plan, fallback: str = "") -> str:
    """
    Why a mesh axis plan (simcore.mesh AxisPlan) runs what it runs, in the app's language: worded from
    its Why's kind and numbers (why.mesh, why.numbers), never from the engine's English. fallback (else
    the plan's why_text) where the plan has no mesh kind (a plan from before them, or another runner's).
    """
    why = getattr(plan, "why", None)
    kind = getattr(why, "mesh", "")
    if not kind:
        return fallback or getattr(plan, "why_text", "")
    n = why.get
    if kind == "pairs":
        return _mesh("ppermute sends each pair's array straight to its partner")
    if kind == "a2a-direct":
        return _mesh("every block goes straight to its device (one-shot), as NCCL's grouped sends do")
    if kind == "a2a-axes":
        return _mesh("on {machine} only neighbours talk: the blocks go axis by axis, {axes}, each axis a "
                     "bidirectional all-to-all (the shorter way round)").format(
            machine=_mesh_machine(n("machine")), axes=_mesh(" then ").join(n("axes", ())))
    if kind == "a2a-bidi":
        return _mesh("on {machine} only neighbours talk: each block goes the shorter way round the axis's ring, the "
                     "opposite one half each way (the book's bidirectional all-to-all)").format(
            machine=_mesh_machine(n("machine")))
    if kind == "a2a-ring":
        return _mesh("on {machine} only neighbours talk: each block travels round the axis's ring").format(
            machine=_mesh_machine(n("machine")))
    if kind == "multi-axis":
        return _mesh("over {k} torus axes the book's gather uses every axis's links at once: the data in {k} parts, "
                     "each going along the axes in its own turn, each both ways round").format(k=n("k"))
    if kind == "line":
        return _mesh("axis {axis} of {machine} has no wraparound link: a line, not a ring, so every chunk goes both "
                     "ways along it and the ends' chunks travel {hops} hops (the book's no-wraparound gather)").format(
            axis=n("axis"), machine=_mesh_machine(n("machine")), hops=n("hops"))
    if kind == "bidi":
        return _mesh("the book's bidirectional ring: half of every chunk goes each way round the torus axis")
    if kind == "pair":
        return _mesh("a ring of two: the pair exchanges its chunks")
    if kind == "asked":
        return _mesh("{algo}, as asked").format(algo=n("algo"))
    if kind == "nccl-group":
        return _mesh("NCCL's choice for one group of {g} on {group}: {what} with {protocol}, every group at once, "
                     "timed as NCCL's model times it at this size").format(
            g=n("g"), group=_mesh_machine(n("group")), what=_mesh_nccl_what(n("algo")), protocol=n("protocol"))
    if kind == "nccl-own-differs":
        return _mesh("{what} with {protocol} over each group of {g}, every group at once; NCCL's own pick for such a "
                     "group: {own}").format(what=_mesh_nccl_what(n("algo")), protocol=n("protocol"), g=n("g"),
                                            own=f"{n('own_algo')} {n('own_protocol')}".strip())
    if kind == "nccl-cannot":
        text = _mesh("NCCL's choice for one group of {g} on {group} is {algo} with {protocol}, which the engine runs "
                     "only over a whole machine's devices, so every group runs NCCL's ring").format(
            g=n("g"), group=_mesh_machine(n("group")), algo=_nccl_label(n("own_algo"), n("own_nccl", "")),
            protocol=n("own_protocol") or _mesh("no protocol"))
    elif kind == "ring":
        text = _mesh("the lecture's ring over each group, every group at once on the ports of {machine}").format(
            machine=_mesh_machine(n("machine")))
    else:  # a kind this app does not know yet: the engine's sentence
        return fallback or getattr(plan, "why_text", "")
    if n("protocol"):
        text += _mesh(", with {protocol}").format(protocol=n("protocol"))
    return text


def _mesh_form_notes() -> dict:
    return {
        "a2a-axes-load": _mesh(", L_a = Σ_d d·w_d the blocks a link carries one way (w = ½ for the opposite device; "
                               "≈ a²/8)"),
        "a2a-load": _mesh(", L = Σ_d d·w_d the blocks a link carries one way (w = ½ for the opposite; ≈ g²/8)"),
        "multi-axis-m": _mesh(", m the chunks a device owns in the phase (a part that runs ahead onto an axis still in "
                              "use queues there: not in the form)"),
        "nvls": _mesh(" (NVLS: up to the switch, multicast down)"),
        "line": _mesh(": a line, one chunk a hop each way, the ends' chunks g−1 hops"),
        "slowest-hop": _mesh(", slowest hop's α and β (an upper bound: only some hops are slow)"),
        "nccl-timed": _mesh(", α, β and the call's base NCCL's for {algo} with {protocol} (nccl src/graph/tuning.cc)"),
    }


def mesh_form(plan, fallback: str = "") -> str:
    """A mesh axis plan's closed form in the app's language: its math as the engine wrote it
    (plan.form_math) and the words around it from their keys (plan.form_notes); fallback (else the
    plan's form_text) for a plan without them."""
    notes = tuple(getattr(plan, "form_notes", ()) or ())
    math_ = getattr(plan, "form_math", "")
    if not notes and not math_:
        return fallback or getattr(plan, "form_text", "")
    if "one-device" in notes:
        return _mesh("one device: nothing moves")
    words = _mesh_form_notes()
    if any(k not in words for k in notes if k != "rs-ag-each"):  # a note this app does not know yet
        return fallback or getattr(plan, "form_text", "")
    text = (_mesh("reduce-scatter + all-gather, each {form}").format(form=math_) if "rs-ag-each" in notes
            else math_)
    for k in notes:
        if k != "rs-ag-each":
            text += words[k].format(algo=getattr(plan, "algo", ""), protocol=getattr(plan, "protocol", ""))
    return text


def mesh_why(e) -> str:
    """A mesh event's reason in the app's language (mesh_reason of the plan it ran)."""
    return mesh_reason(getattr(e, "plan", None), e.why)


def mesh_form_text(e) -> str:
    """A mesh event's closed form in the app's language (mesh_form of the plan it ran)."""
    return mesh_form(getattr(e, "plan", None), e.form_text)


def _mesh_published(e) -> str:
    """The program row's published form; where the program gives the plan's own closed form as its published
    one (the same text), that form in the app's language."""
    return mesh_form_text(e) if e.published_text and e.published_text == e.form_text else e.published_text


def mesh_program_published(text: str) -> str:
    """A program's published form (simcore.mesh.programs: its Result.published_text) in the app's language:
    the math as it is, the few words programs add around it translated."""
    if text == "each collective's closed form":
        return _mesh("each collective's closed form")
    if text.startswith("ring: ") and text.endswith(" per AR"):
        return _mesh("ring: {form} per all-reduce").format(form=text[len("ring: "):-len(" per AR")])
    return text


def mesh_event_line(e) -> str:
    """One line for a collective over a mesh axis, from its AxisCollective record: the op over the
    axis, its groups, one group's bytes, the simulated time and the published form's."""
    g = len(e.groups[0]) if e.groups else 1
    line = _mesh("{short}: {what} · {G} groups of {g} at once · {S} a group · {t} simulated").format(
        short=e.short, what=mesh_op_words(e), G=len(e.groups), g=g, S=fmt_bytes(e.nbytes), t=fmt_time(e.time))
    if math.isfinite(e.published) and e.published > 0:
        line += _mesh(" · the book's {form}: {t} (ratio {r:.3f})").format(
            form=_mesh_published(e), t=fmt_time(e.published), r=e.time / e.published)
    elif e.form > 0:
        line += _mesh(" · closed form {form}: {t}").format(form=mesh_form_text(e), t=fmt_time(e.form))
    return line


def mesh_event_html(e, done: bool) -> str:
    """The explanation's paragraph for a mesh collective: what moves, in how many groups, why this
    algorithm, and its times (the AxisCollective's own words and numbers)."""
    import html as _html

    g = len(e.groups[0]) if e.groups else 1
    head = _mesh("{what} ({algo}): every one of the {G} groups of {g} devices along {axis} runs it at once, "
                 "on the same clock and the same links.").format(
        what=mesh_op_words(e), algo=e.algo, G=len(e.groups), g=g, axis=e.axis_name)
    parts = [f"<p><b>{_html.escape(e.short)}</b> {_html.escape(head)}</p>"]
    if e.before and e.after and e.before != e.after:
        parts.append("<p>" + _html.escape(_mesh("{before} → {after}").format(before=e.before, after=e.after))
                     + ("" if not done else " ✓") + "</p>")
    parts.append("<p>" + _html.escape(_mesh("Why: {why}.").format(why=mesh_why(e))) + "</p>")
    parts.append("<p>" + _html.escape(mesh_event_line(e)) + "</p>")
    if e.form > 0:
        parts.append("<p>" + _html.escape(_mesh("One group alone on idle links: {form} = {t}.").format(
            form=mesh_form_text(e), t=fmt_time(e.form))) + "</p>")
    return "\n".join(parts)


def mesh_html(info, t: float, at_end: bool = False) -> str:
    """The explanation of a mesh run at t (app.core.mesh_model.MeshInfo): the collective over an
    axis shown at t in words, and the program's totals against its published form."""
    import html as _html

    k = info.event_at(t)
    parts = []
    if k < 0:
        parts.append("<p>" + _html.escape(_mesh("No collective: every device multiplies its own blocks.")) + "</p>")
    else:
        e = info.events[k]
        parts.append("<p>" + _html.escape(_mesh("Collective {i} of {N} on the mesh {mesh}").format(
            i=k + 1, N=len(info.events), mesh=info.describe)) + "</p>")
        parts.append(mesh_event_html(e, done=t >= e.t_end))
    memory = mesh_memory_line(info)
    if memory:
        parts.append("<p>" + _html.escape(memory) + "</p>")
    parts.append("<p>" + _html.escape(_mesh("The program: {sim} simulated, the book's {form} = {pub}; max |error| "
                                            "against one device {err:.1e}.").format(
        sim=fmt_time(info.simulated_total), form=mesh_program_published(info.published_text), pub=fmt_time(info.published_total),
        err=info.max_err)) + "</p>")
    return "\n".join(parts)


def mesh_memory_class(name: str) -> str:
    """A memory class of simcore.mesh.programs.memory_per_device in the app's language."""
    words = {"weights": _mesh("weights"), "KV cache": _mesh("KV cache"), "activations": _mesh("activations"),
             "buffers in flight": _mesh("buffers in flight")}
    return words.get(name, name)


def mesh_memory_line(info) -> str:
    """Each device's memory by class (MeshInfo.memory, the engine's bytes): the largest device's, and
    the smallest's where they differ; "" when the run counted none."""
    totals = [float(v) for v in info.memory_totals()]
    counted = [pos for pos, v in enumerate(totals) if not math.isnan(v)]
    if not counted:
        return ""
    classes = info.memory_classes()

    def parts(pos):
        row = info.memory[pos]
        shown = " + ".join(f"{mesh_memory_class(c)} {fmt_bytes(row.get(c, 0.0))}" for c in classes
                           if row.get(c, 0.0) > 0)
        return f"{shown} = {fmt_bytes(totals[pos])}" if shown else fmt_bytes(0)

    hi, lo = max(counted, key=totals.__getitem__), min(counted, key=totals.__getitem__)
    if totals[hi] == totals[lo]:
        return _mesh("Memory per device: {parts} on every device.").format(parts=parts(hi))
    coord = lambda pos: ",".join(str(c) for c in info.coord(pos))  # noqa: E731
    return _mesh("Memory per device: the most on device ({hi}): {top}; the least on device ({lo}): {low}.").format(
        hi=coord(hi), top=parts(hi), lo=coord(lo), low=parts(lo))


def mesh_formula_html(info, coll: int) -> str:
    """The formula panel for a mesh collective (trace collective id `coll`): the closed form of one
    group alone as Mesh.plan wrote it, the program's published form, and the simulated time."""
    import html as _html

    e = next((x for x in info.events if x.coll == coll), None)
    if e is None:
        return "<p>" + _html.escape(_mesh("No collective at this time.")) + "</p>"
    rows = [_mesh("{short} — {what}, {algo}").format(short=e.short, what=mesh_op_words(e), algo=e.algo)]
    if e.form > 0:
        terms = getattr(e.plan, "terms", ())  # the plan's terms, summing to its time
        names = {"base": _mesh("base"), "phases": _mesh("phases"), "total": _mesh("total")}  # α, S/β: math
        shown = " + ".join(f"{names.get(t.name, t.name)} {fmt_time(t.seconds)}" for t in terms if t.seconds > 0)
        form = f"{mesh_form_text(e)} = {shown}" if len(terms) > 1 and shown else mesh_form_text(e)
        rows.append(_mesh("one group alone: T = {form} = {t}").format(form=form, t=fmt_time(e.form)))
    if math.isfinite(e.published) and e.published > 0:
        rows.append(_mesh("the book: {form} = {t}").format(form=_mesh_published(e), t=fmt_time(e.published)))
    rows.append(_mesh("simulated, all {G} groups at once: {t}").format(G=len(e.groups), t=fmt_time(e.time)))
    return "".join("<p>" + _html.escape(r) + "</p>" for r in rows)
