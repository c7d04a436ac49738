"""The weight-slices view's words: titles, the axes line, which heads / groups / units a device's
slice is, its tooltip, the caption and the correctness line; and the layout's inputs read from the
run (`weights_texts`, `weights_shape`). Translation context "WeightsView" (the view's own),
whichever module says the text.
"""

from __future__ import annotations

import html as _html

from PySide6.QtCore import QCoreApplication

from simcore.tensor_parallel import tp_layout, tp_share, weight_slices

from ... import theme
from ...words import fmt_bytes
from .weights_data import PER_LAYER, device_matrix, full_matrix, overlap_ranks, region_rects
from .weights_layout import WeightsShape, WeightsTexts

NAMES = {"wq": "Wq", "wk": "Wk", "wv": "Wv", "wo": "Wo", "w_gate": "W_gate", "w_up": "W_up",
         "w_down": "W_down", "lm_head": "lm_head", "embed": "embed", "attn_norm": "attn_norm",
         "mlp_norm": "mlp_norm", "final_norm": "final_norm"}
BYTES_PER_ELEM = 8  # the toy model is float64
CHECK_TOL = 1e-9  # max |TP − single-device logits| above this is a wrong forward (float64: ~1e-14)


def _tr(text: str) -> str:
    return QCoreApplication.translate("WeightsView", text)


def gpu_name(d: int) -> str:
    return _tr("GPU {d}").format(d=d)


def full_title_html(key: str, layer: int, shape) -> str:
    rows, cols = shape
    where = _tr("layer {l}").format(l=layer) if key in PER_LAYER else _tr("whole model")
    return "<b>" + _html.escape(_tr("Full {name}, {where}: {r} × {c} = {b}").format(
        name=NAMES[key], where=where, r=rows, c=cols, b=fmt_bytes(rows * cols * BYTES_PER_ELEM))) + "</b>"


def grid_title_html(cfg, n: int, key: str, slices, slice_shapes) -> str:
    shapes = set(slice_shapes)
    muted = theme.palette().text_muted
    if len(shapes) == 1:
        (r, c), = shapes
        b = fmt_bytes(r * c * BYTES_PER_ELEM)
        if slices[0].axis is None:
            head = (_tr("Each GPU holds a full copy: {r} × {c} = {b}") if n > 1 else
                    _tr("GPU 0 holds all of it: {r} × {c} = {b}")).format(r=r, c=c, b=b)
        else:
            head = _tr("Each GPU holds {r} × {c} = {b}").format(r=r, c=c, b=b)
    else:
        head = _tr("What each GPU holds")
    tail = _tr("its own shard, same colour scale")
    if key in ("wk", "wv") and any(ws.replicated for ws in slices):
        tail = _tr("each KV group on {k} GPUs, same colour scale").format(k=tp_share(cfg, n).kv_replicas)
    elif slices[0].axis is None:
        tail = _tr("same colour scale")
    return (f"<b>{_html.escape(head)}</b> "
            f'<span style="color:{muted};">({_html.escape(tail)})</span>')


def _axis_names(key, cfg):
    heads = _tr("{H} query heads × d_head {dh}").format(H=cfg.n_heads, dh=cfg.d_head)
    groups = _tr("{G} KV groups × d_head {dh}").format(G=cfg.n_kv_heads, dh=cfg.d_head)
    hidden = _tr("d_ff hidden units")
    return {"wq": ("d_model", heads), "wk": ("d_model", groups), "wv": ("d_model", groups),
            "wo": (heads, "d_model"), "w_gate": ("d_model", hidden), "w_up": ("d_model", hidden),
            "w_down": (hidden, "d_model"), "lm_head": ("d_model", _tr("vocabulary")),
            "embed": (_tr("vocabulary (token id)"), "d_model")}.get(key, ("", "d_model"))


def axes_text(key: str, cfg, shape) -> str:
    """The line under the picture: what the rows and the columns are."""
    rows, cols = shape
    r_name, c_name = _axis_names(key, cfg)
    return (_tr("{c} columns: {cn}").format(c=cols, cn=c_name) if rows == 1 else
            _tr("{r} rows: {rn} · {c} columns: {cn}").format(r=rows, rn=r_name, c=cols, cn=c_name))


def model_text(cfg, n: int) -> str:
    gpus = _tr("{n} GPUs").format(n=n) if n > 1 else _tr("1 GPU")
    return _tr("{gpus} · TINY model: d_model {D}, {H} query heads, {G} KV groups, d_head {dh}, "
               "d_ff {F}, vocab {V}").format(gpus=gpus, D=cfg.d_model, H=cfg.n_heads, G=cfg.n_kv_heads,
                                             dh=cfg.d_head, F=cfg.d_ff, V=cfg.vocab)


def replicated_text(n: int) -> str:
    return _tr("replicated on all {n} GPUs").format(n=n) if n > 1 else _tr("GPU 0 holds all of it")


def colours_text(vmax: float) -> str:
    return _tr("One colour means one number in every heatmap (blue < 0 < red, levels ±{v:.2f}).").format(v=vmax)


def check_text(tp) -> str:
    """The header's correctness line: the TP forward computes the single-device logits."""
    d = tp.max_abs_diff
    if d <= CHECK_TOL:
        s = (_tr("✓ Decode step: TP logits = single-device logits, max |Δ| = {d:.1e}") if tp.decode else
             _tr("✓ TP logits = single-device logits: max |Δ| = {d:.1e}"))
    else:
        s = (_tr("✗ Decode step: TP logits ≠ single-device logits, max |Δ| = {d:.1e}") if tp.decode else
             _tr("✗ TP logits ≠ single-device logits: max |Δ| = {d:.1e}"))
    return s.format(d=d)


def check_tip(tp) -> str:
    what = (_tr("the decode step's logits (one new token, with the KV cache)") if tp.decode else
            _tr("the logits of every token"))
    return _tr("max |TP logits − single-device logits| over {what}.\n{model}").format(
        what=what, model=model_text(tp.cfg, tp.n))


def what(cfg, n: int, key: str, ws, d: int) -> str:
    """Which heads / groups / units device d's slice `ws` is (short lines: a slice's column is narrow)."""
    lay = tp_layout(cfg, n)[d]
    if ws.axis is None:
        return _tr("replicated") if n > 1 else ""
    groups = ", ".join(str(g) for g in lay.kv_groups)
    if key in ("wk", "wv"):
        if ws.replicated:
            return _tr("KV group {g}\nreplicated").format(g=groups)
        if len(lay.kv_groups) == 1:
            return _tr("KV group {g}").format(g=groups)
        return _tr("KV groups\n{g}").format(g=groups)
    a, b = int(ws.index.min()), int(ws.index.max())
    if key in ("wq", "wo"):
        if len(lay.heads) == 1:
            return _tr("head {h}").format(h=lay.heads.start)
        return _tr("heads {a}–{b}").format(a=lay.heads.start, b=lay.heads.stop - 1)
    if key == "lm_head":
        return _tr("tokens\n{a}–{b}").format(a=a, b=b)
    return _tr("units\n{a}–{b}").format(a=a, b=b)


def slice_text(d: int, shape, role: str) -> str:
    """Everything about slice d (its tooltip): device, shape, bytes, which heads / units."""
    r, c = shape
    parts = [gpu_name(d), f"{r} × {c}", fmt_bytes(r * c * BYTES_PER_ELEM), role]
    return " · ".join(p.replace("\n", " ") for p in parts if p)


def caption(cfg, n: int, key: str, ws, shape) -> str:
    """The sentence under the picture: how `key` is split; `ws`, `shape`: device 0's slice and its shape."""
    name = NAMES[key]
    r, c = shape
    size = fmt_bytes(r * c * BYTES_PER_ELEM)
    if ws.axis is None:
        if n == 1:
            s = _tr("{name} is used whole: the one GPU holds all {k} values ({b}).")
        else:
            s = _tr("{name} is replicated: each of the {n} GPUs holds all {k} values ({b}) — it is small "
                    "and every GPU needs all of it.")
        s = s.format(name=name, n=n, k=r * c, b=size)
        if r == 1:
            s += _tr(" Its values are all close to 1, hence one colour.")
        return s
    if n == 1:
        return _tr("With one GPU nothing is split: GPU 0 holds all of {name}, {r} rows × {c} columns "
                   "= {b}.").format(name=name, r=r, c=c, b=size)
    share = tp_share(cfg, n)
    if key == "wq":
        return _tr("Wq is split by columns: each GPU holds {h} of the {H} query heads, {c} columns × {r} "
                   "rows = {b}.").format(h=share.heads, H=cfg.n_heads, c=c, r=r, b=size)
    if key in ("wk", "wv") and n > cfg.n_kv_heads:
        return _tr("{name} has only {G} KV groups for {n} GPUs, so each group's {c} columns are replicated "
                   "on {k} GPUs ({c} columns × {r} rows = {b} on each); nested outlines show who shares "
                   "a group.").format(name=name, G=cfg.n_kv_heads, n=n, k=share.kv_replicas, c=c, r=r, b=size)
    if key in ("wk", "wv"):
        return _tr("{name} is split by columns, one KV group per {d_head} columns: each GPU holds {g} of "
                   "the {G} groups ({c} columns × {r} rows = {b}).").format(
            name=name, d_head=cfg.d_head, g=share.kv_groups, G=cfg.n_kv_heads, c=c, r=r, b=size)
    if key == "wo":
        return _tr("Wo is split by rows: each GPU holds the rows of its own {h} heads ({r} rows × {c} "
                   "columns = {b}); the all-reduce after attention adds the {n} partial results.").format(
            h=share.heads, r=r, c=c, b=size, n=n)
    if key == "w_down":
        return _tr("W_down is split by rows: each GPU holds the rows of its own {r} hidden units ({r} rows "
                   "× {c} columns = {b}); the all-reduce after the MLP adds the {n} partial results.").format(
            r=r, c=c, b=size, n=n)
    if key == "lm_head":
        return _tr("lm_head is split by columns: each GPU holds {c} of the {V} vocabulary columns ({c} "
                   "columns × {r} rows = {b}); the logits are all-gathered at the end.").format(
            c=c, V=cfg.vocab, r=r, b=size)
    return _tr("{name} is split by columns: each GPU holds {c} of the {F} hidden units ({c} columns × "
               "{r} rows = {b}).").format(name=name, c=c, F=cfg.d_ff, r=r, b=size)


# ---------------------------------------------------------------------------------------
# The layout's inputs, from the run (the view and the tests ask the same functions)
# ---------------------------------------------------------------------------------------
def weights_texts(run, key: str, layer: int) -> WeightsTexts:
    """Every text weights_layout measures for matrix `key` of layer `layer`, in the current language."""
    tp = run.tp
    cfg, n = tp.cfg, tp.n
    slices = weight_slices(cfg, n, key)
    shape = full_matrix(tp.params, key, layer).shape
    slice_shapes = tuple(device_matrix(dp, key, layer).shape for dp in tp.dev_params)
    return WeightsTexts(full_title=full_title_html(key, layer, shape),
                        grid_title=grid_title_html(cfg, n, key, slices, slice_shapes),
                        axes=_html.escape(axes_text(key, cfg, shape)),
                        gpu_names=tuple(gpu_name(d) for d in range(n)),
                        roles=tuple(what(cfg, n, key, ws, d) for d, ws in enumerate(slices)),
                        role_bold=tuple(bool(ws.replicated and ws.axis is not None) for ws in slices),
                        colors=tuple(theme.device_colors(n)))


def weights_shape(run, key: str, layer: int) -> WeightsShape:
    """The full matrix's and every slice's shape, the split axis and the lanes of nested badges."""
    tp = run.tp
    slices = weight_slices(tp.cfg, tp.n, key)
    shape = full_matrix(tp.params, key, layer).shape
    axis = slices[0].axis
    ranks = [0] if axis is None else overlap_ranks([region_rects(ws, shape) for ws in slices])
    return WeightsShape(shape=tuple(shape), slice_shapes=tuple(device_matrix(dp, key, layer).shape
                                                               for dp in tp.dev_params),
                        axis=axis, depth=max(ranks) + 1)
