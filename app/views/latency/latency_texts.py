"""
The decode-latency tab's words: names of the terms, bounds and FFN variants, tooltips of the
published points, the summary above the plots and the legends' entries. One translation
context ("LatencyView") for the whole tab, whichever module says the text.
"""

from __future__ import annotations

import html
import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication

from simcore import cost_model
from simcore.hw_specs import CHIPS
from simcore.llm_math import MODELS
from simcore.topology_presets import PRESETS

from ... import theme
from ...words import number_word
from .latency_items import legend_sample
from ...core.latency_model import BOUNDS, FFN_VARIANTS, TERMS, fmt_capacity, num, ranges_of, short_source


def _tr(text):
    return QCoreApplication.translate("LatencyView", text)


def plot_names() -> dict:
    return {"latency": _tr("Decode latency plot"), "ffn": _tr("FFN communication plot")}


def bound_name(b: str, short: bool = False) -> str:
    if short:
        return {"math": _tr("compute"), "memory": _tr("memory"), "comm": _tr("comm")}[b]
    return {"math": _tr("compute-bound"), "memory": _tr("memory-bound"), "comm": _tr("communication-bound")}[b]


def term_names(short: bool) -> dict:
    if short:
        return {t: t for t in TERMS}
    return {"t_math": _tr("t_math (compute)"), "t_mem": _tr("t_mem (HBM reads)"),
            "t_comm": _tr("t_comm (all-reduces)"), "t_step": _tr("t_step, no overlap = max(t_math, t_mem) + t_comm")}


def ffn_names() -> dict:
    return {"1d": _tr("1D weight-stationary"), "2d": _tr("2D weight-stationary"), "gathered": _tr("weight-gathered")}


def ffn_title(p: dict, ffn) -> str:
    """The FFN plot's title: the model's sizes and which bandwidth the curves use (ffn["bw"]):
    the link's on one switch, NVLink's inside a node and the NICs' across nodes on a machine."""
    m = MODELS[p["model"]]
    bw = ffn["bw"][np.isfinite(ffn["bw"])] / 1e9
    head = dict(b=p["batch"], E=m.d_model, F=m.d_ff)
    if not p["machine"]:
        return _tr("FFN communication per layer, Pope et al. 2022: tokens = batch = {b}, "
                   "E = {E}, F = {F}, {bw:g} GB/s").format(bw=bw[0], **head)
    preset = PRESETS[p["machine"]]
    title = html.escape(_tr("FFN communication per layer, Pope et al. 2022: tokens = batch = {b}, E = {E}, "
                            "F = {F}").format(**head)) + "<br>"  # the machine's bandwidths on a line of their own
    rec = preset.record  # the kind of machine (simcore.kind_record): nodes over a fabric, or a grid
    if rec.layout == "nodes":
        P = rec.per_node
        inside, across = bw[0], (bw[P] if len(bw) > P else float("nan"))
        nic = rec.words_link("between").bw / 1e9
        return title + html.escape(_tr("{machine}: NVLink {bw_in:g} GB/s per GPU up to n = {P}, then {bw_out:g} GB/s "
                                       "across nodes: {k} {nic:g} GB/s NICs, one per GPU of a node").format(
            machine=preset.name, bw_in=inside, P=P, bw_out=round(across, 1), k=number_word(P), nic=nic))
    return title + html.escape(_tr("{machine}: {lo:g}–{hi:g} GB/s per chip (bidirectional rings on each torus "
                                   "axis)").format(machine=preset.name, lo=round(bw.min(), 1), hi=round(bw.max(), 1)))


def ref_tooltip(ref, ours) -> str:
    kind = (_tr("a measurement of a real system: our roofline should sit below it")
            if ref.kind == "measurement" else
            _tr("a worked example (someone else's roofline arithmetic): ours should agree"))
    return _tr("{name}\n{ms:.1f} ms per step at n = {n}, batch {b}, ctx {ctx}\n{kind}\nSource: {src}").format(
        name=ref.name, ms=ref.seconds * 1e3, n=ref.n, b=ref.batch, ctx=ref.ctx, kind=kind, src=ref.source)


def estimate_tooltip(ref, ours) -> str:
    term = "t_mem" if ref.term == "t_mem" else "max(t_math, t_mem)"
    return _tr("Our roofline at the published setting: {term} = {ms:.1f} ms\n(published: {pub:.1f} ms)").format(
        term=term, ms=ours * 1e3, pub=ref.seconds * 1e3)


def ref_label(ref) -> str:
    """The label beside a published point: its source and figure."""
    return _tr("{who}: {ms:.0f} ms").format(who=short_source(ref), ms=ref.seconds * 1e3)


def headline(p: dict, sweep, best: int, short: bool = False) -> str:
    """Model, chip, batch, context and the best n with its time: the decode plot's title. The time
    is the roofline with no overlap (t_step = max(t_math, t_mem) + t_comm), and the title says so;
    with the overlap drawn (sweep["t_step_overlap"]), best is the overlapped step's best n and the
    title gives that step first, the plain one beside it."""
    ms = sweep["t_step_no_overlap"][best - 1] * 1e3
    model, ctx = MODELS[p["model"]].name, f"{p['ctx']:,}"
    chip = PRESETS[p["machine"]].name if p.get("machine") else CHIPS[p["chip"]].name  # the machine names its chip
    if "t_step_overlap" in sweep:
        o = sweep["t_step_overlap"][best - 1] * 1e3
        if short:
            return _tr("{model} · {chip} · batch {b} · ctx {ctx}: best n = {n}, {o:.1f} ms overlapped "
                       "({ms:.1f} ms without)").format(model=model, chip=chip, b=p["batch"], ctx=ctx, n=best, o=o,
                                                       ms=ms)
        return _tr("{model} on {chip}, batch {b}, ctx {ctx}: best n = {n} → {o:.1f} ms per step with async TP "
                   "overlap ({ms:.1f} ms without)").format(model=model, chip=chip, b=p["batch"], ctx=ctx, n=best,
                                                          o=o, ms=ms)
    if short:
        return _tr("{model} · {chip} · batch {b} · ctx {ctx}: best n = {n}, {ms:.1f} ms (no overlap)").format(
            model=model, chip=chip, b=p["batch"], ctx=ctx, n=best, ms=ms)
    return _tr("{model} on {chip}, batch {b}, ctx {ctx}: best n = {n} → {ms:.1f} ms per step (roofline, no overlap)").format(
        model=model, chip=chip, b=p["batch"], ctx=ctx, n=best, ms=ms)


def regimes(p: dict, sweep, valid, cross_n, fit_n) -> str:
    """Which term binds first, where communication takes over and where the model fits, over the valid n."""
    # on a machine, n it has no group of are "invalid": they carry the bound of the group before them, so a
    # run of one bound ends where a group the machine offers changes it
    bound = np.asarray(sweep["bound"]).copy()
    for i in np.flatnonzero(bound == "invalid"):
        bound[i] = bound[i - 1] if i else bound[i]
    first = ranges_of(bound)[0]
    top = valid[-1]
    parts = [_tr("n = {ns} are the tensor-parallel degrees").format(ns=", ".join(map(str, valid)))]
    if first[2] != "comm":
        last = max(v for v in valid if v <= first[1] + 1)  # n = 1 always is a degree
        parts.append(_tr("{bound} at every tensor-parallel degree").format(bound=bound_name(first[2])) if last == top
                     else _tr("{bound} up to n = {n}").format(bound=bound_name(first[2]), n=last))
    if cross_n is None:
        parts.append(_tr("communication never dominates up to n = {n}").format(n=top))
    else:
        parts.append(_tr("communication dominates from n = {n}").format(n=cross_n))
    if fit_n is None:
        parts.append(_tr("does not fit in HBM on up to {n} chips").format(n=top))
    elif fit_n > 1:
        parts.append(_tr("fits in HBM from n = {n}").format(n=fit_n))
    return "; ".join(parts)


def readout(n: int, sweep, ffn, valid: bool) -> str:
    """Every term at n (ms), the bound, whether n is a tensor-parallel degree, and plot 2's values (µs).
    Both step curves are named: t_step with no overlap (the sum) and the lower bound (the max)."""
    i = n - 1
    if "t_step_overlap" in sweep:  # the overlapped step first, as the title gives it
        first = _tr("n = {n}: t_step with overlap {o} ms · no overlap {t} ms · lower bound max(t_math, t_mem, "
                    "t_comm) {lb} ms — {bound}")
    else:
        first = _tr("n = {n}: t_step, no overlap {t} ms · lower bound max(t_math, t_mem, t_comm) {lb} ms — {bound}")
    text = (first + "\n" + _tr("t_math {a} · t_mem {m} · t_comm {c} ms · "
                                "FFN communication per layer: 1D {f1} · 2D {f2} · weight-gathered {fg} µs")).format(
        n=n, a=num(sweep["t_math"][i] * 1e3), m=num(sweep["t_mem"][i] * 1e3), c=num(sweep["t_comm"][i] * 1e3),
        t=num(sweep["t_step_no_overlap"][i] * 1e3), lb=num(sweep["t_lower_bound"][i] * 1e3),
        o=num(sweep["t_step_overlap"][i] * 1e3) if "t_step_overlap" in sweep else "",
        bound=bound_name(str(sweep["bound"][i])),
        f1=num(ffn["1d"][i] * 1e6), f2=num(ffn["2d"][i] * 1e6), fg=num(ffn["gathered"][i] * 1e6))
    if valid:
        return text
    first, rest = text.split("\n", 1)
    return first + _tr(" · not a tensor-parallel degree") + "\n" + rest


def pick_line(n: int, nbytes: float, pick) -> str:
    """What one all-reduce at n runs on the machine, and whether it is the machine's own choice:
    "all-reduce at n = 8 (16 KiB): ring, NCCL LL — the machine's choice" (the engine's reason is
    the readout's tooltip: a line that long would be cut)."""
    from ...words import fmt_bytes

    algo, proto, _why, chosen = pick
    what = f"{algo}, NCCL {proto}" if proto else algo
    if chosen:
        return _tr("all-reduce at n = {n} ({S}): {what} — the machine's choice").format(
            n=n, S=fmt_bytes(nbytes), what=what)
    return _tr("all-reduce at n = {n} ({S}): {what}, as chosen").format(n=n, S=fmt_bytes(nbytes), what=what)


def hint(refs) -> str:
    if not refs:
        names = ", ".join(f"{MODELS[r.model].name} · {CHIPS[r.chip].name}" for r in cost_model.REFERENCE_POINTS)
        return _tr("Published points appear for {names}: pick one under “Preset”.").format(names=names)
    return _tr("★ measured, ◆ worked example, ✕ our roofline at the published setting. "
               "Hover a marker for its source.")


def kv_label(G: int, short: bool) -> str:
    return (_tr("KV replicated: n > G = {G}") if short else _tr("KV replication starts: n > G = {G}")).format(G=G)


def comm_label(n: int, short: bool) -> str:
    return (_tr("comm from n = {n}") if short else _tr("comm dominates from n = {n}")).format(n=n)


def valid_tip(n: int, heads: int, ms: float) -> str:
    return _tr("n = {n}: a tensor-parallel degree ({h} heads each), {ms:.1f} ms per step with no overlap").format(n=n, h=heads, ms=ms)


def no_tp_label(n: int, H: int, short: bool) -> str:
    return (_tr("no TP split beyond n = {n}").format(n=n) if short else
            _tr("n > {n}: no tensor-parallel split ({H} query heads)").format(n=n, H=H))


def node_label(k: int, short: bool) -> str:
    return (_tr("node: {k} GPUs") if short else
            _tr("node boundary: {k} GPUs per node — beyond, the all-reduce crosses InfiniBand")).format(k=k)


def fill_legends(legend1, legend2, items, ffn_items, chip, hbm_shown, kinds, short, scale=None):
    """
    Both legends from scratch: the terms, the bounds' colours, the HBM veil when it is shown
    (`chip` names its capacity), the published kinds drawn (`kinds`), then plot 2's variants.
    `items` is the plot's DecodeItems; `short` asks for the short names of a narrow plot; `scale`
    the text scale (None: the theme's).
    """
    pal = theme.palette()
    size = f"{round(theme.FONT_PX['body'] * (theme.scale() if scale is None else scale))}px"
    for lg in (legend1, legend2):
        lg.clear()
        lg.setLabelTextColor(pal.text)
        lg.setLabelTextSize(size)
    names = term_names(short)
    for t in ("t_step", "t_math", "t_mem", "t_comm"):
        legend1.addItem(items.curves[t], names[t])
    for b in BOUNDS:
        legend1.addItem(legend_sample(brush=items.band.brushes[b]), bound_name(b, short))
    legend1.addItem(legend_sample(symbol="o", brush=pal.background, pen=pg.mkPen(pal.text, width=2.5)),
                    _tr("TP degree") if short else _tr("tensor-parallel degree (n splits the heads evenly)"))
    if hbm_shown:
        hbm = fmt_capacity(CHIPS[chip].hbm_bytes)
        name = _tr("> {hbm} HBM") if short else _tr("does not fit in {hbm} HBM")
        legend1.addItem(legend_sample(brush=items.hbm_brush()), name.format(hbm=hbm))
    if kinds:
        if "measurement" in kinds:
            legend1.addItem(legend_sample(symbol="star", brush=pal.text, pen=pal.text),
                            _tr("measured") if short else _tr("published measurement"))
        if "roofline" in kinds:
            legend1.addItem(legend_sample(symbol="d", brush=pal.background, pen=pg.mkPen(pal.text, width=3)),
                            _tr("worked example") if short else _tr("published worked example (a roofline)"))
        legend1.addItem(legend_sample(symbol="x", brush=pal.text, pen=pal.text),
                        _tr("ours there") if short else _tr("our roofline at that setting"))
    ffn = ffn_names()
    for v in FFN_VARIANTS:
        legend2.addItem(ffn_items[v], ffn[v])
