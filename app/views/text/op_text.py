"""
The forward's ops in words (step_sim's labels): their display names ("qkv" -> "QKV"), what a
device box says while it computes ("QKV 1.34 ns"), and the explanation of one op with its
roofline (what it computes, max(FLOP / peak, bytes / memory bandwidth) on the chip).

Split out of explain.py (issue 13); the strings keep explain's translation context "Explain".
"""

from __future__ import annotations

import html

from PySide6.QtCore import QCoreApplication

from .explain import fmt_bw, fmt_bytes, fmt_time


def _tr(text):
    return QCoreApplication.translate("Explain", text)


# -- the forward's ops (step_sim's labels) ---------------------------------------------------
def _op_names() -> dict:
    return {"attn norm": _tr("norm"), "mlp norm": _tr("norm"), "final norm": _tr("final norm"),
            "qkv": _tr("QKV"), "attention": _tr("attention"), "attn out": _tr("out proj"),
            "gate/up": _tr("gate/up"), "down": _tr("down"), "lm head": _tr("LM head")}


def _op_whats() -> dict:
    return {"attn norm": _tr("residual add and RMSNorm of the stream before attention"),
            "mlp norm": _tr("residual add and RMSNorm of the stream before the MLP"),
            "final norm": _tr("the last RMSNorm"),
            "qkv": _tr("h @ [Wq | Wk | Wv]: the queries of its heads, the keys and values of its KV groups, RoPE"),
            "attention": _tr("softmax(q·Kᵀ)·V over the keys so far, for its heads only"),
            "attn out": _tr("o @ Wo rows of its heads: a partial sum the all-reduce completes"),
            "gate/up": _tr("h @ [W_gate | W_up], its columns of d_ff, and SwiGLU"),
            "down": _tr("g @ W_down rows: a partial sum the all-reduce completes"),
            "lm head": _tr("h @ W_lm: the logits of its share of the vocabulary")}


def _split_chunk(label: str) -> tuple[str, str]:
    """"attn out 2/8" -> ("attn out", "2/8"): a collective matmul's chunk; ("qkv", "") otherwise."""
    head, _, tail = label.rpartition(" ")
    if head and "/" in tail and tail.replace("/", "").isdigit():
        return head, tail
    return label, ""


def op_name(label: str) -> str:
    """The display name of a step_sim op label: "qkv" -> "QKV", "attn out 2/8" -> "out proj 2/8"."""
    base, chunk = _split_chunk(label)
    name = _op_names().get(base, base)
    return f"{name} {chunk}" if chunk else name


def compute_label(rec) -> str:
    """What a device box says while it computes: the op and its time, e.g. "QKV 1.34 ns"."""
    return f"{op_name(rec.label)} {fmt_time(rec.t_end - rec.t_start)}"


def compute_html(rec, chip, prec) -> str:
    """The explanation of one op (trace.Compute) on `chip`: what it computes and its roofline."""
    base = _split_chunk(rec.label)[0]
    peak, bw = chip.peak_flops(prec), chip.mem_bw
    where = _tr("layer {i}").format(i=rec.layer) if rec.layer >= 0 else _tr("after the layers")
    head = _tr("Every GPU computes: {op} ({where})").format(op=op_name(rec.label), where=where)
    what = _op_whats().get(base, "")
    bound = _tr("memory-bound") if rec.bound == "memory" else _tr("compute-bound")
    cost = _tr("{t} = max({f} FLOP / {P}, {b} / {B}) on the {chip}: {bound}.").format(
        t=fmt_time(rec.t_end - rec.t_start), f=f"{rec.flops:.3g}", P=_fmt_flops(peak), b=fmt_bytes(rec.nbytes),
        B=fmt_bw(bw), chip=chip.name, bound=bound)
    return (f"<p style='font-size:120%; font-weight:bold; margin:4px 0'>{html.escape(head)}</p>"
            f"<p>{html.escape(what)}</p><p>{html.escape(cost)}</p>")


def _fmt_flops(f: float) -> str:
    for unit, scale in (("PFLOP/s", 1e15), ("TFLOP/s", 1e12), ("GFLOP/s", 1e9)):
        if f >= scale:
            return f"{f / scale:.3g} {unit}"
    return f"{f:.3g} FLOP/s"
