"""
The forward's ops explained (step_sim's labels): one op with its roofline (what it computes,
max(FLOP / peak, bytes / memory bandwidth) on the chip).

The names themselves, and what a device box says while it computes ("QKV 41 µs",
words.compute_label), are app.words'; the strings keep the translation context "Explain".
"""

from __future__ import annotations

import html

from PySide6.QtCore import QCoreApplication

from ...words import fmt_bw, fmt_bytes, fmt_flops, fmt_time, op_name, split_chunk


def _tr(text):
    return QCoreApplication.translate("Explain", text)


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


def compute_html(rec, chip, prec) -> str:
    """The explanation of one op (trace.Compute) on `chip`: what it computes and its roofline."""
    base = split_chunk(rec.label)[0]
    peak, bw = chip.peak_flops(prec), chip.mem_bw
    where = _tr("layer {i}").format(i=rec.layer) if rec.layer >= 0 else _tr("after the layers")
    head = _tr("Every GPU computes: {op} ({where})").format(op=op_name(rec.label), where=where)
    what = _op_whats().get(base, "")
    bound = _tr("memory-bound") if rec.bound == "memory" else _tr("compute-bound")
    cost = _tr("{t} = max({f} FLOP / {P}, {b} / {B}) on the {chip}: {bound}.").format(
        t=fmt_time(rec.t_end - rec.t_start), f=f"{rec.flops:.3g}", P=fmt_flops(peak), b=fmt_bytes(rec.nbytes),
        B=fmt_bw(bw), chip=chip.name, bound=bound)
    return (f"<p style='font-size:120%; font-weight:bold; margin:4px 0'>{html.escape(head)}</p>"
            f"<p>{html.escape(what)}</p><p>{html.escape(cost)}</p>")
