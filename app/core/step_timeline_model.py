"""
One simulated decode step read into columns, without Qt: what one step timeline shows (StepSpec),
the engine's simulated step read into columns (StepData: compute_table, comm_table, merged_busy,
chunk_runs), the op kinds and layers read from a trace, and the number formats the view prints.
A worker thread builds a StepData; the view (app/views/timeline/step_timeline.py) draws it.
"""

from __future__ import annotations

import re
import time

import numpy as np

from simcore import cost_model
from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.hw_specs import CHIPS, Chip
from simcore.links import LINKS, LinkSpec
from simcore.llm_math import MODELS, ModelConfig

from ..words import fmt_time  # noqa: F401  (the app's one time format, as the timeline's texts read it)

OVERLAPS = ("none", "async")
# op kinds in schedule order (their colours: step_timeline_items.KIND_COLOR)
KINDS = ("norm", "qkv", "attn", "o_proj", "gate_up", "down", "lm_head", "other")
MAX_STEP_N = 64  # every ring message is simulated: n = 64 already sends 1.3 million per step
AGREE_REL = 1e-3  # simulated step and roofline "equal" within 0.1 %


def op_kind(rec) -> str:
    """The kind of a compute record, read from its label ("attn out 3/8" -> "o_proj"), else its `.kind`."""
    for text in (rec.label.lower(), (getattr(rec, "kind", "") or "").lower()):
        for key, words in (("lm_head", ("lm head", "lm_head", "logits")),
                           ("norm", ("norm",)),
                           ("qkv", ("qkv",)),
                           ("o_proj", ("attn out", "o_proj", "out proj")),
                           ("attn", ("attention", "attn")),
                           ("gate_up", ("gate", "up")),
                           ("down", ("down",))):
            if any(w in text for w in words):
                return key
    return "other"


def op_layer(rec) -> int:
    """The transformer layer of a compute record; -1 outside the layers (final norm, LM head)."""
    layer = getattr(rec, "layer", None)
    if layer is not None:
        return int(layer)
    m = re.search(r"layer\s*(\d+)", rec.label)
    return int(m.group(1)) if m else -1


CHUNK = re.compile(r"\s+\d+/\d+$")  # "attn out 3/8": chunk 3 of 8 of a collective matmul


def compute_table(trace) -> dict:
    """
    Every compute record as columns: device, t_start, t_end, kind, layer (-1: none), flops,
    nbytes, op (the label without a chunk suffix), chunked (the record is one chunk of an op).
    """
    recs = list(getattr(trace, "computes", ()))
    k = len(recs)
    per_label = {}  # a label repeats in every layer and on every device: read it once
    for r in recs:
        key = (r.label, getattr(r, "kind", ""))
        if key not in per_label:
            per_label[key] = (CHUNK.sub("", r.label), CHUNK.search(r.label) is not None, op_kind(r))
    info = [per_label[(r.label, getattr(r, "kind", ""))] for r in recs]

    def column(attr, dtype):
        return np.fromiter((getattr(r, attr) for r in recs), dtype=dtype, count=k)

    return {"op": np.array([i[0] for i in info], dtype=object),
            "chunked": np.array([i[1] for i in info], dtype=bool),
            "kind": np.array([i[2] for i in info], dtype=object),
            "device": column("device", int), "t_start": column("t_start", float), "t_end": column("t_end", float),
            "layer": np.fromiter((op_layer(r) for r in recs), dtype=int, count=k),
            "flops": column("flops", float), "nbytes": column("nbytes", float)}


def merged_busy(dev, t0, t1, n) -> tuple:
    """
    The union of the intervals [t0, t1) per device: (device, start, end) arrays, sorted by device
    then start. Ring steps on one port follow each other back to back, so a collective of 2(n−1)
    messages becomes one bar per device and port.
    """
    if len(dev) == 0:
        return np.zeros(0, int), np.zeros(0), np.zeros(0)
    order = np.lexsort((t0, dev))
    d, s, e = dev[order], t0[order], t1[order]
    out_d, out_s, out_e = [], [], []
    for k in range(n):
        lo, hi = np.searchsorted(d, k), np.searchsorted(d, k, side="right")
        if lo == hi:
            continue
        sk, ek = s[lo:hi], np.maximum.accumulate(e[lo:hi])
        new = np.concatenate([[True], sk[1:] > ek[:-1]])  # a gap before this interval starts a new run
        starts = np.flatnonzero(new)
        ends = np.concatenate([starts[1:] - 1, [len(sk) - 1]])
        out_d.append(np.full(len(starts), k))
        out_s.append(sk[starts])
        out_e.append(ek[ends])
    return np.concatenate(out_d), np.concatenate(out_s), np.concatenate(out_e)


def chunk_runs(op, layer, chunked, t0, t1) -> np.ndarray:
    """
    Indices (into one device's records sorted by start) where a run begins: the chunks of one
    collective-matmul op that follow each other form one run, every other record is its own.
    """
    if len(t0) == 0:
        return np.zeros(0, int)
    same = ((op[1:] == op[:-1]) & (layer[1:] == layer[:-1]) & chunked[1:] & chunked[:-1]
            & (t0[1:] <= t1[:-1] * (1 + 1e-12)))
    return np.flatnonzero(np.concatenate([[True], ~same]))


def comm_table(trace, n) -> dict:
    """
    Per device: its span of every collective (first message touching it to the last), and its
    send-port and receive-port busy intervals, merged. Devices < n only (the switch has no row).
    """
    msgs = trace.messages
    k = len(msgs)
    # one column at a time: np.fromiter is ~8x faster than np.array of a list of tuples (1.3M messages at n = 64)
    src = np.fromiter((m.src for m in msgs), dtype=int, count=k)
    dst = np.fromiter((m.dst for m in msgs), dtype=int, count=k)
    t0 = np.fromiter((m.t_start for m in msgs), dtype=float, count=k)
    t1 = np.fromiter((m.t_end for m in msgs), dtype=float, count=k)
    coll = np.fromiter((m.coll for m in msgs), dtype=int, count=k)
    n_coll = len(trace.collectives)
    first = np.full((n_coll, n), np.inf)
    last = np.full((n_coll, n), -np.inf)
    for ends in (src, dst):
        ok = (ends >= 0) & (ends < n)
        np.minimum.at(first, (coll[ok], ends[ok]), t0[ok])
        np.maximum.at(last, (coll[ok], ends[ok]), t1[ok])
    ci, di = np.nonzero(np.isfinite(first))
    ok_s, ok_r = (src >= 0) & (src < n), (dst >= 0) & (dst < n)
    return {"span_coll": ci, "span_device": di, "span_start": first[ci, di], "span_end": last[ci, di],
            "send": merged_busy(src[ok_s], t0[ok_s], t1[ok_s], n),
            "recv": merged_busy(dst[ok_r], t0[ok_r], t1[ok_r], n)}


def resolve(model, chip, link):
    """Keys or objects -> (ModelConfig, Chip, LinkSpec); link None or '' = the chip's own link."""
    if isinstance(model, str):
        if model not in MODELS:
            raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")
        model = MODELS[model]
    if isinstance(chip, str):
        if chip not in CHIPS:
            raise ValueError(f"unknown chip {chip!r}; choose one of {', '.join(CHIPS)}")
        chip = CHIPS[chip]
    if not isinstance(model, ModelConfig) or not isinstance(chip, Chip):
        raise ValueError("model and chip must be keys of llm_math.MODELS / hw_specs.CHIPS or their records")
    if link in (None, ""):
        link = LINKS[chip.link]
    elif isinstance(link, str):
        if link not in LINKS:
            raise ValueError(f"unknown link {link!r}; choose one of {', '.join(LINKS)}")
        link = LINKS[link]
    elif not isinstance(link, LinkSpec):
        raise ValueError("link must be a key of comm_sim.LINKS or a LinkSpec")
    return model, chip, link


class StepSpec:
    """
    What one step timeline shows: the model, chip, link, n and the decode-latency plot's settings;
    prompt = 1 is a decode step (one new token per sequence), prompt = L a prefill of L tokens.
    """

    def __init__(self, model, chip, link=None, n=8, batch=32, ctx=8192, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0,
                 algo="ring", prec="bf16", prompt=1, topology=""):
        self.model, self.chip, self.link = resolve(model, chip, link)
        self.topology = topology or ""  # a topology_presets key: that machine's wiring (nodes, a torus)
        if self.topology:
            from simcore.topology_presets import get_preset

            if not get_preset(self.topology).is_valid(int(n)):
                raise ValueError(f"{get_preset(self.topology).name} has no group of {n} chips")
        for name, v, lo in (("n", n, 1), ("batch", batch, 1), ("ctx", ctx, 0), ("prompt", prompt, 1)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ValueError(f"{name} must be a whole number >= {lo}, got {v!r}")
        if n > MAX_STEP_N:
            raise ValueError(f"the step timeline simulates every message: at most {MAX_STEP_N} GPUs, got n = {n}")
        if algo not in ALLREDUCE_ALGOS:
            raise ValueError(f"unknown all-reduce algorithm {algo!r}; choose one of {', '.join(ALLREDUCE_ALGOS)}")
        self.chip.peak_flops(prec)  # a precision the chip lacks says so here
        self.n, self.batch, self.ctx, self.prompt = int(n), int(batch), int(ctx), int(prompt)
        self.w_bytes, self.kv_bytes, self.act_bytes = float(w_bytes), float(kv_bytes), float(act_bytes)
        self.algo, self.prec = algo, prec

    def kwargs(self) -> dict:
        from .latency_model import engine_algo
        return {"w_bytes": self.w_bytes, "kv_bytes": self.kv_bytes, "act_bytes": self.act_bytes,
                "algo": engine_algo(self.algo, self.topology), "compute_prec": self.prec}

    def simulate(self, overlap="none", simulate=None):
        """
        The engine's step (cost_model.simulate_decode_step, or simulate_prefill_step when
        prompt > 1): a Comm whose trace holds every op and message (seconds, bytes).
        `simulate` replaces the decode simulation (same signature).
        """
        if overlap not in OVERLAPS:
            raise ValueError(f"unknown overlap {overlap!r}; choose one of {', '.join(OVERLAPS)}")
        m, c, link, n = self.model, self.chip, self.link, self.n
        if self.prompt > 1:
            return cost_model.simulate_prefill_step(m, c, link, n, self.batch, self.prompt, self.ctx, overlap=overlap,
                                                    **self.kwargs())
        fn = simulate or cost_model.simulate_decode_step
        if self.topology:  # the machine's topology, not n chips on one switch
            from simcore.topology_presets import get_preset

            return fn(m, c, link, n, self.batch, self.ctx, overlap=overlap,
                      topology=get_preset(self.topology).topology(n), **self.kwargs())
        return fn(m, c, link, n, self.batch, self.ctx, overlap=overlap, **self.kwargs())

    def roofline(self) -> dict:
        """cost_model.tp_decode_step (tp_prefill_step) here: t_math, t_mem, t_comm, t_step in seconds."""
        m, c, link, n = self.model, self.chip, self.link, self.n
        if self.prompt > 1:
            return cost_model.tp_prefill_step(m, c, link, n, self.batch, self.prompt, self.ctx, **self.kwargs())
        return cost_model.tp_decode_step(m, c, link, n, self.batch, self.ctx, topology=self.topology or None,
                                         **self.kwargs())


def step_total(comm) -> float:
    """The simulated step time: the Comm's clock (seconds)."""
    return float(comm.time)


class StepData:
    """
    One simulated step, read into columns (no Qt, so a worker thread can build it):
    comm (the engine's Comm), compute (compute_table), comms (comm_table), total = comm.time,
    end = the last thing on the clock (seconds), seconds = wall time the simulation took.
    """

    def __init__(self, spec: StepSpec, overlap: str, simulate=None):
        t = time.perf_counter()
        self.comm = spec.simulate(overlap, simulate)
        self.seconds = time.perf_counter() - t
        self.overlap = overlap
        self.compute = compute_table(self.comm.trace)
        self.comms = comm_table(self.comm.trace, spec.n)
        self.total = step_total(self.comm)
        self.end = max(self.total, float(self.compute["t_end"].max(initial=0.0)))


def tp_degrees(model, n_max: int = MAX_STEP_N) -> list[int]:
    """The n in 1..n_max that Megatron TP can split `model` over (cost_model.valid_tp_degrees: tp_layout's rule)."""
    return [int(n) for n in cost_model.valid_tp_degrees(model, n_max)]


def fmt_si(x: float) -> str:
    """1.23e9 -> '1.23 G', 52.4e6 -> '52.4 M' (three significant digits, SI prefix, a space before it)."""
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {prefix}"
    return f"{x:.3g} "
