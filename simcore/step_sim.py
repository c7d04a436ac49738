"""
step_sim — one decode (or prefill) step of a real model under tensor parallelism, as a timeline.

The roofline (cost_model.tp_decode_step) says how long a step takes from three sums; this
module runs the step: the same Megatron layer schedule as tensor_parallel.tp_forward, on
shapes instead of arrays, every op of every device on the same clock as the messages.

Per device d, per layer (heads, KV groups, d_ff and vocab columns from tensor_parallel.tp_layout):

    attn norm    residual add + RMSNorm                    (element-wise)
    qkv          h @ [Wq | Wk | Wv] of its heads / groups  column-parallel matmul
    attention    q against the KV cache of its groups      reads ctx · its K/V bytes
    attn out     o @ Wo rows of its heads                  row-parallel matmul -> partial sum
    ── all-reduce "layer i attn" of [B·T, D] ──
    mlp norm     residual add + RMSNorm
    gate/up      h @ [W_gate | W_up] columns of its F/n    column-parallel
    down         g @ W_down rows                           row-parallel -> partial sum
    ── all-reduce "layer i mlp" ──
then final norm, lm head (its vocabulary columns) and, with gather_logits, tp_forward's logits
all-gather.

An op lasts its own roofline on the chip, max(FLOPs / peak, bytes / HBM bandwidth)
(comm_sim.Comm.compute). Collectives are comm_sim's real ring (or rd, innet, direct) code run on
n-element arrays whose bytes are scaled to the real payload, so every message is timed by its
real size. What an op counts by default is what the roofline counts (llm_math's conventions):
matmul weights read once per step, the KV cache read, 2 FLOPs per multiply-add, 4·dh FLOPs per
head per key. `elementwise=True` adds what the roofline leaves out (norms, RoPE, SwiGLU,
softmax, activations read and written, the new K/V written).

Overlap. overlap="async" is the collective matmul ("How to Scale Your Model", "Programming TPUs
in JAX" chapter: the collective matmul example and the ReduceScatter collective matmul of
problem 3; Wang et al. 2023, "Overlap Communication with Dependent Computation via
Decomposition in Large Deep Learning Models", ASPLOS): the row-parallel matmul is tiled over
its output columns into n chunks, in the order the ring reduce-scatter sends them, so step k
of the ring carries chunk k while chunk k+1 is computed. Each chunk reads 1/n of the weights:
the matmul costs what it did, and the reduce-scatter half of the all-reduce hides under it.
The all-gather half stays exposed: the next norm needs the whole row.

With sequence parallelism the all-gather sits right in front of a column-parallel matmul (qkv,
gate/up, and the lm head after the final norm), and async overlaps it too — the all-gather
matmul (PyTorch's async TP, torch.distributed._symmetric_memory, "Introducing Async Tensor
Parallelism in PyTorch", 2024; the scaling book's AllGather collective matmul; Wang et al.
2023): the ring all-gather runs as usual, and each device computes the matmul on its own
token shard at once, then on each shard as the ring step that carries it lands (rows B·T/n
per chunk; every chunk reads the whole weight: a decode step rereads it n times, which is
why async TP is a prefill / training technique). Without sequence parallelism there is no
all-gather in front of a matmul in the layer: the all-reduce's all-gather half feeds a norm
(exposed, as above); the one all-gather left, the logits (gather_logits), comes after the lm
head and feeds the sampler, and stays exposed.

Decomposition is not free: every chunk matmul runs at CHUNK_MATMUL_EFFICIENCY of peak FLOP/s
(memory time unchanged), on both sides. So async may lose to no overlap on compute-bound shapes
with little to hide; it can never beat the lower bound max(compute, communication).

Sequence parallelism (sequence_parallel=True) replaces each all-reduce by a reduce-scatter
after the row-parallel matmul and an all-gather after the next norm, which then runs on B·T/n
tokens (Korthikanti et al. 2022; tensor_parallel._sp_layers is the same schedule on arrays).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from .algorithms import ALGORITHMS, ALLREDUCE_ALGOS
from .collectives import allreduce_ring, reduce_scatter_ring, ring_rs_chunk
from .comm_sim import Comm
from .plan import execute, resolve
from .topology import switch
from .tensor_parallel import tp_layout

OVERLAPS = ("none", "async")

# The collective matmul's decomposition cost: each of the n chunk matmuls reaches this fraction
# of the FLOP/s the undivided matmul reaches (smaller GEMMs: wave quantization, one more kernel
# launch and epilogue per chunk, the copy engine / SMs shared with the transfer).
# Source of the effect: "[Distributed w/ TorchTitan] Introducing Async Tensor Parallelism in
# PyTorch" (Wang, He, Wright, Wehrstedt, Liu, Liang; discuss.pytorch.org/t/209487, Aug 2024)
# names the decomposed matmuls' lost efficiency (wave quantization) as its main performance
# challenge and reports net gains of up to ~29 % (Llama3 8B) / ~20 % (Llama3 70B) on the forward
# pass — gains net of this loss; Wang et al. 2023 (ASPLOS) report the same trade-off, and
# "Design Space Exploration of DMA based Finer-Grain Compute Communication Overlap" (FiCCO,
# arXiv 2512.10236) finds decomposition and contention slowdowns the main limiters of overlap.
# The figure 0.90 is OUR ASSUMPTION (10 % below peak per chunk), not a number either source
# states per chunk: replace it by a measured per-chunk GEMM efficiency when one is at hand.
CHUNK_MATMUL_EFFICIENCY = 0.90
_ITEM = 8  # the stand-in arrays are float64: 8 bytes per element, scaled to the real payload

# Element-wise FLOPs per element (our count of the arithmetic, used with elementwise=True only):
NORM_FLOPS = 5  # residual add 1, square 1, sum 1, scale by 1/rms 1, weight 1
ROPE_FLOPS = 3  # x1·cos − x2·sin: two multiplies and one add per rotated element
SOFTMAX_FLOPS = 5  # max, subtract, exp, sum, divide per score
SWIGLU_FLOPS = 5  # silu(g) = g·sigmoid(g) (exp, add, divide, multiply) and the product with up


@dataclass(frozen=True)
class Op:
    """One op of one device: label, kind ("matmul", "attention", "norm"), FLOPs, HBM bytes."""

    label: str
    kind: str
    flops: float
    nbytes: float
    w_nbytes: float = 0.0  # of nbytes, the weights (a chunk of an all-gather matmul reads them all)


@dataclass(frozen=True)
class StepShape:
    """
    What one step is, independent of timing. M = batch · tokens rows in every matmul.
    layer: {"attn": [norm, qkv, attention, attn out], "mlp": [norm, gate/up, down]} — the same
    in every layer; head: [final norm, lm head]; per device (list index).
    layer_bytes: S of each per-layer collective (M · d_model · act_bytes);
    logits_bytes: S of the logits all-gather (M · vocab_padded · act_bytes).
    """

    n: int
    batch: int
    tokens: int
    ctx: int
    layer: list
    head: list
    layer_bytes: float
    logits_bytes: float
    sequence_parallel: bool


def step_shape(model, n, batch, ctx, tokens=1, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0, sequence_parallel=False,
               elementwise=False) -> StepShape:
    """
    Every op of one step on every device, with its FLOPs and HBM bytes (see the module docstring).

    model: llm_math.ModelConfig (or transformer_lab.Config); n devices; batch sequences of
    `tokens` new tokens each (1: decode; L: a prefill of L tokens), `ctx` tokens already cached.
    A new token at position p attends to the ctx + p keys before it (the roofline's convention:
    a decode token attends to ctx keys). Raises ValueError for shapes tp_layout cannot split,
    or with sequence_parallel when B·T is not divisible by n.
    """
    if batch < 1 or tokens < 1 or ctx < 0:
        raise ValueError(f"batch and tokens must be >= 1 and ctx >= 0, got {batch}, {tokens}, {ctx}")
    if min(w_bytes, kv_bytes, act_bytes) <= 0:
        raise ValueError("bytes per weight / KV element / activation must be > 0")
    layout = tp_layout(model, n, pad_vocab=True)
    D, dh = model.d_model, model.d_head
    M = batch * tokens
    if sequence_parallel and M % n:
        raise ValueError(f"sequence parallelism splits the {M} tokens of the step (batch {batch} x {tokens}) "
                         f"over {n} devices: {M} is not divisible by {n}")
    m_norm = M // n if sequence_parallel else M  # rows a norm runs on
    keys = tokens * ctx + tokens * (tokens - 1) / 2  # keys attended to, summed over the new tokens
    a, e = act_bytes, 1.0 if elementwise else 0.0
    layers, heads = [], []
    for lay in layout:
        h, g = len(lay.heads), len(lay.kv_groups)
        f, v = len(lay.f_cols), len(lay.v_cols)
        norm_cost = (e * NORM_FLOPS * m_norm * D, e * (4 * m_norm * D + D) * a)  # x, update in; x, h out; weight
        qkv_cols = (h + 2 * g) * dh
        qkv = Op("qkv", "matmul", 2 * M * D * qkv_cols + e * ROPE_FLOPS * M * (h + g) * dh,
                 D * qkv_cols * w_bytes + e * (M * D * a + M * h * dh * a + M * 2 * g * dh * kv_bytes),
                 D * qkv_cols * w_bytes)
        kv_read = batch * (ctx + e * tokens) * 2 * g * dh * kv_bytes  # elementwise: the new K/V too
        attn = Op("attention", "attention", 4 * batch * h * dh * keys + e * SOFTMAX_FLOPS * batch * h * keys,
                  kv_read + e * 2 * M * h * dh * a)
        wo = Op("attn out", "matmul", 2 * M * h * dh * D, h * dh * D * w_bytes + e * (M * h * dh + M * D) * a)
        gate_up = Op("gate/up", "matmul", 2 * M * D * 2 * f + e * SWIGLU_FLOPS * M * f,
                     2 * D * f * w_bytes + e * (M * D + M * f) * a, 2 * D * f * w_bytes)
        down = Op("down", "matmul", 2 * M * f * D, f * D * w_bytes + e * (M * f + M * D) * a)
        layers.append({"attn": [Op("attn norm", "norm", *norm_cost), qkv, attn, wo],
                       "mlp": [Op("mlp norm", "norm", *norm_cost), gate_up, down]})
        final = Op("final norm", "norm", *norm_cost)
        lm = Op("lm head", "matmul", 2 * M * D * v, D * v * w_bytes + e * (M * D + M * v) * a, D * v * w_bytes)
        heads.append([final, lm])
    return StepShape(n, batch, tokens, ctx, layers, heads, M * D * a, M * layout[0].vocab_padded * a,
                     sequence_parallel)


# ---------------------------------------------------------------------------------------
# The simulation
# ---------------------------------------------------------------------------------------
@contextlib.contextmanager
def _timed_as(comm, full_bytes, n_elems):
    """Time a collective on n_elems float64 elements per device as if they were full_bytes."""
    saved = comm.byte_scale
    comm.byte_scale = full_bytes / (n_elems * _ITEM)
    try:
        yield
    finally:
        comm.byte_scale = saved


def _all_reduce(comm, S, label, algo, chunk_ready=None):
    n = comm.n
    topo = comm.topology
    plan = resolve(topo, "all-reduce", S, algo)  # algo None: the machine's choice (cost_model too)
    algo = plan.algo
    if "switch" not in topo.kinds or (algo not in ALLREDUCE_ALGOS):
        # a machine's own algorithm (hier, the channel rings, the torus): its plan, on fine chunks

        # fine chunks: a torus cuts halves per axis (12 covers 1-3 axes), the channel rings P per device,
        # hier one per pipeline chunk (equal chunks, as its closed form has them): the chunks of the links
        # it is timed with (hier_chunks), which the pipeline cuts S into
        L = n * topo.fine_per_device
        if algo == "hier":
            L *= plan.chunks
        with _timed_as(comm, S, L), execute(comm, plan):
            plan.record.fn(comm, [np.ones(L) for _ in range(n)], label=label)
        return
    arrays = [np.ones(n) for _ in range(n)]  # one element per ring chunk
    with _timed_as(comm, S, n), execute(comm, plan):
        if algo == "ring":
            allreduce_ring(comm, arrays, label=label, chunk_ready=chunk_ready)
        else:
            ALLREDUCE_ALGOS[algo][1](comm, arrays, label=label)


def _reduce_scatter(comm, S, label, chunk_ready=None):
    n = comm.n
    plan = comm.topology.plan("reduce-scatter", S)
    if plan.algo != "ring":  # a machine's own (channel rings across nodes, rings both ways on a torus)
        L = n * comm.topology.fine_per_device
        with _timed_as(comm, S, L), execute(comm, plan):
            plan.record.fn(comm, [np.ones(L) for _ in range(n)], label=label)
        return
    with _timed_as(comm, S, n), execute(comm, plan):
        reduce_scatter_ring(comm, [np.ones(n) for _ in range(n)], label=label, chunk_ready=chunk_ready)


def _all_gather(comm, S, label):
    n = comm.n
    plan = comm.topology.plan("all-gather", S)
    k = 1 if plan.algo == "ring" else comm.topology.fine_per_device
    with _timed_as(comm, S, n * k), execute(comm, plan):
        plan.record.fn(comm, [np.ones(k) for _ in range(n)], {d: d for d in range(n)},
                                         label=label)


def _run(comm, part_ops, chip, prec, layer):
    for d in range(comm.n):
        for op in part_ops[d]:
            comm.compute(d, op.label, op.flops, op.nbytes, chip, prec, layer=layer, kind=op.kind)


def _run_row_parallel(comm, ops, chip, prec, layer, chunked):
    """
    The row-parallel matmul of every device (ops[d]); returns chunk_ready for the collective
    after it, or None when it runs whole. Chunked: tiled over its output columns into n
    chunks, computed in the order the ring reduce-scatter sends them (ring_rs_chunk).
    """
    n = comm.n
    if not chunked:
        _run(comm, [[op] for op in ops], chip, prec, layer)
        return None
    ready = [[0.0] * n for _ in range(n)]
    for d, op in enumerate(ops):
        for k in range(n):
            c = ring_rs_chunk(d, k, n)
            ready[d][c] = comm.compute(d, f"{op.label} {k + 1}/{n}", op.flops / n, op.nbytes / n, chip, prec,
                                       layer=layer, kind=op.kind, efficiency=CHUNK_MATMUL_EFFICIENCY)
    return ready


def _all_gather_matmul(comm, S, label, ops, chip, prec, layer, chunked):
    """
    The all-gather of the B·T/n-token shards in front of a column-parallel matmul (ops[d]),
    then the matmul. Chunked (the all-gather matmul, overlap="async") when the machine gathers
    with the ring: device d computes its own shard's rows at once, then each shard's rows
    when the ring step carrying it has landed, at CHUNK_MATMUL_EFFICIENCY; each chunk reads
    the whole weight. Otherwise (not chunked, or a machine whose all-gather is not the ring)
    the gather completes and the matmul runs whole.
    """
    n = comm.n
    if not chunked or comm.topology.choose("all-gather", S)[0] != "ring":
        _all_gather(comm, S, label)
        _run(comm, [[op] for op in ops], chip, prec, layer)
        return
    start = list(comm.ready)
    first = len(comm.trace.messages)
    _all_gather(comm, S, label)
    arrive = [{d: start[d]} for d in range(n)]  # arrive[d][c]: when shard c is on device d
    tr = comm.trace
    dst, chunk, t_end = (np.asarray(tr.column(k))[first:] for k in ("dst", "chunk", "t_end"))
    for dd, c, t in zip(dst.tolist(), chunk.tolist(), t_end.tolist()):
        if 0 <= dd < n:
            arrive[dd][c] = max(arrive[dd].get(c, 0.0), t)
    if any(len(a) != n for a in arrive):
        raise RuntimeError(f"{label}: the ring all-gather did not deliver every shard to every device")
    comm.ready = start  # the device computes while the ring runs on its ports
    for d, op in enumerate(ops):
        w = op.w_nbytes
        for k, (c, t) in enumerate(sorted(arrive[d].items(), key=lambda ct: ct[1])):
            comm.compute(d, f"{op.label} {k + 1}/{n}", op.flops / n, w + (op.nbytes - w) / n, chip, prec,
                         after=t, layer=layer, kind=op.kind, efficiency=CHUNK_MATMUL_EFFICIENCY)


def _check_options(algo, overlap, sequence_parallel):
    if algo is not None and algo not in ALGORITHMS["all-reduce"]:
        raise ValueError(f"unknown all-reduce algorithm {algo!r}; choose one of {', '.join(ALLREDUCE_ALGOS)}")
    if overlap not in OVERLAPS:
        raise ValueError(f"unknown overlap {overlap!r}; choose one of {', '.join(OVERLAPS)}")
    if overlap == "async" and algo not in ("ring", None):
        raise ValueError(f"overlap='async' tiles the matmul into the ring reduce-scatter's chunks (collective "
                         f"matmul); it needs algo='ring', not {algo!r}")
    if sequence_parallel and algo not in ("ring", None):
        raise ValueError(f"sequence parallelism uses the ring reduce-scatter and all-gather; it needs algo='ring', "
                         f"not {algo!r}")


def wiring(topology, n, link):
    """
    The comm_sim topology a step runs on. topology: None (n chips on one switch of `link`), a
    topology_presets preset or its key (its wiring of n chips: the node boundary, the torus
    slice) or a comm_sim topology (switch, nodes, torus) — the three cost_model.decode_sweep
    accepts.
    """
    from .topology_presets import HardwarePreset, get_preset

    if topology is None:
        if link is None:
            raise ValueError("give the link the chips talk over, or a topology (a hardware preset)")
        return switch(n, link)
    if isinstance(topology, str):
        topology = get_preset(topology)
    if isinstance(topology, HardwarePreset):
        return topology.topology(n)
    if not hasattr(topology, "route"):
        raise ValueError(f"topology must be a hardware preset, its key or a comm_sim topology, got {topology!r}")
    return topology


def simulate_step(model, chip, link, n, batch, ctx, tokens=1, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0, algo=None,
                  compute_prec="bf16", overlap="none", sequence_parallel=False, elementwise=False,
                  gather_logits=False, topology=None) -> Comm:
    """
    Simulate one step (tokens=1: decode; tokens=L: prefill of L tokens) of `model` on n chips
    `chip` joined by `link` (a switch, or `topology` when given: see wiring); returns the comm_sim.Comm:
    comm.time is the step (seconds), comm.trace.computes every op, comm.trace.messages every
    message. See the module docstring for the schedule and the options; gather_logits adds
    tp_forward's all-gather of the [B·T, vocab] logits (a sampler that works on the
    vocab-parallel logits, as the roofline assumes, does not need it).
    """
    _check_options(algo, overlap, sequence_parallel)
    if algo is None and (overlap == "async" or sequence_parallel):
        algo = "ring"  # both tile the ring's chunks
    chip.peak_flops(compute_prec)  # a precision the chip lacks fails here, before any work
    shape = step_shape(model, n, batch, ctx, tokens, w_bytes, kv_bytes, act_bytes, sequence_parallel, elementwise)
    comm = Comm(wiring(topology, n, link))
    if comm.n != n:
        raise ValueError(f"the topology has {comm.n} devices, the step was asked for n = {n}")
    chunked = overlap == "async" and n > 1
    S = shape.layer_bytes
    for li in range(model.n_layers):
        for part in ("attn", "mlp"):
            label = f"layer {li} {part}"
            ops = [shape.layer[d][part] for d in range(n)]
            _run(comm, [o[:1] for o in ops], chip, compute_prec, li)  # the norm
            if sequence_parallel:  # the all-gather in front of the column-parallel matmul (qkv, gate/up)
                _all_gather_matmul(comm, S, label, [o[1] for o in ops], chip, compute_prec, li, chunked)
                _run(comm, [o[2:-1] for o in ops], chip, compute_prec, li)
            else:
                _run(comm, [o[1:-1] for o in ops], chip, compute_prec, li)
            ready = _run_row_parallel(comm, [o[-1] for o in ops], chip, compute_prec, li, chunked)
            if sequence_parallel:
                _reduce_scatter(comm, S, label, ready)
            else:
                _all_reduce(comm, S, label, algo, ready)
    _run(comm, [h[:1] for h in shape.head], chip, compute_prec, -1)
    if sequence_parallel:  # the lm head is column-parallel too (vocabulary columns)
        _all_gather_matmul(comm, S, "final norm", [h[1] for h in shape.head], chip, compute_prec, -1, chunked)
    else:
        _run(comm, [h[1:] for h in shape.head], chip, compute_prec, -1)
    if gather_logits:
        _all_gather(comm, shape.logits_bytes, "logits")
    return comm


def simulate_decode_step(model, chip, link, n, batch, ctx, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0, algo=None,
                         compute_prec="bf16", overlap="none", **options) -> Comm:
    """
    One decode step (one new token per sequence, ctx tokens cached) simulated op by op; the
    arguments mean what they mean for cost_model.tp_decode_step. options: sequence_parallel,
    elementwise, gather_logits (simulate_step). Returns the Comm with its trace.
    When every op is memory-bound, comm.time equals tp_decode_step's t_step (n ≤ n_kv_heads).
    """
    return simulate_step(model, chip, link, n, batch, ctx, 1, w_bytes, kv_bytes, act_bytes, algo, compute_prec,
                         overlap, **options)


def simulate_prefill_step(model, chip, link, n, batch, prompt, ctx=0, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0,
                          algo=None, compute_prec="bf16", overlap="none", **options) -> Comm:
    """A prefill of `prompt` tokens per sequence (after ctx cached ones), simulated op by op."""
    return simulate_step(model, chip, link, n, batch, ctx, prompt, w_bytes, kv_bytes, act_bytes, algo, compute_prec,
                         overlap, **options)


# ---------------------------------------------------------------------------------------
# Simulation against the roofline
# ---------------------------------------------------------------------------------------
def roofline_gap(comm, chip, roofline, compute_prec="bf16"):
    """
    Why the simulated step differs from the roofline (cost_model.tp_decode_step's dict, or
    tp_prefill_step's), as seconds that add up exactly:

        t_sim − t_step = per_op + counted + comm

    per_op   Σ_ops max(f/P, b/B) − max(Σf/P, Σb/B) ≥ 0: the roofline lets the step's FLOPs and
             bytes overlap across ops; each op can only overlap its own. Zero when every op is
             memory-bound (or every op compute-bound): the roofline is a lower bound of the sum.
    counted  the sim's max(Σf/P, Σb/B) − the roofline's max(t_math, t_mem): what the sim counts
             and the roofline does not (K/V projections replicated when n > n_kv_heads, padded
             vocabulary, elementwise=True's work).
    comm     exposed communication (step time in which the device computes nothing) − t_comm:
             negative with overlap, positive with gather_logits.
    Measured on the device that finishes last. Returns a dict with those and t_sim, t_step.
    """
    cs = comm.trace.computes
    if not cs:
        raise ValueError("the trace holds no compute: run a step simulation first")
    last = max(cs, key=lambda c: c.t_end).device
    mine = [c for c in cs if c.device == last]
    peak, bw = chip.peak_flops(compute_prec), chip.mem_bw
    busy = sum(c.t_end - c.t_start for c in mine)
    t_math, t_mem = sum(c.flops for c in mine) / peak, sum(c.nbytes for c in mine) / bw
    t_sim = comm.time
    per_op = busy - max(t_math, t_mem)
    counted = max(t_math, t_mem) - max(roofline["t_math"], roofline["t_mem"])
    exposed = t_sim - busy
    return {"t_sim": t_sim, "t_step": roofline["t_step"], "per_op": per_op, "counted": counted,
            "comm": exposed - roofline["t_comm"], "busy": busy, "exposed_comm": exposed,
            "sim_t_math": t_math, "sim_t_mem": t_mem,
            "compute_bound_ops": sum(1 for c in mine if c.bound == "math"),
            "memory_bound_ops": sum(1 for c in mine if c.bound == "memory")}


def explain_gap(gap) -> str:
    """roofline_gap's numbers as sentences (milliseconds)."""
    ms = 1e3
    lines = [f"simulated step {gap['t_sim'] * ms:.3f} ms vs roofline t_step {gap['t_step'] * ms:.3f} ms "
             f"(difference {(gap['t_sim'] - gap['t_step']) * ms:+.3f} ms):"]
    if gap["per_op"] > 1e-12:
        lines.append(f"  +{gap['per_op'] * ms:.3f} ms: {gap['compute_bound_ops']} ops are compute-bound. The roofline "
                     f"takes max(total FLOPs / peak, total bytes / bandwidth) as if one op's memory traffic could "
                     f"hide under another's arithmetic; each op only hides its own, so the sum of per-op maxima "
                     f"is longer — the roofline is a lower bound.")
    else:
        which = "memory-bound" if gap["compute_bound_ops"] == 0 else (
            "compute-bound" if gap["memory_bound_ops"] == 0 else "on the same side of its ridge point")
        lines.append(f"  every op is {which}: the sum of per-op rooflines equals the step's roofline.")
    if abs(gap["counted"]) > 1e-12:
        lines.append(f"  {gap['counted'] * ms:+.3f} ms: the simulation counts work the roofline leaves out "
                     f"(replicated K/V projections when n > KV heads, vocabulary padding, element-wise ops).")
    if gap["comm"] < -1e-12:
        lines.append(f"  {gap['comm'] * ms:+.3f} ms: communication hidden under compute (overlap); "
                     f"{gap['exposed_comm'] * ms:.3f} ms stays exposed.")
    elif gap["comm"] > 1e-12:
        lines.append(f"  {gap['comm'] * ms:+.3f} ms: communication the roofline does not count (the logits "
                     f"all-gather) or that waits for the slowest device.")
    else:
        lines.append(f"  communication {gap['exposed_comm'] * ms:.3f} ms, none of it overlapped: as the roofline says.")
    return "\n".join(lines)


def collective_bytes(trace, label_prefix):
    """Bytes on the wire (sum over messages) of the collectives whose label starts with label_prefix."""
    return sum(m.nbytes for m in trace.messages if m.label.startswith(label_prefix))


# ---------------------------------------------------------------------------------------
# Activation memory (training: what the backward pass keeps), with and without SP
# ---------------------------------------------------------------------------------------
def activation_bytes_per_layer(model, n, batch, seq, act_bytes=2.0, sequence_parallel=False) -> dict:
    """
    Activation bytes one device keeps for the backward pass of one layer (device 0; no
    recomputation, softmax probabilities stored), Korthikanti et al. 2022 §4's accounting
    applied to a Llama layer (RMSNorm, GQA, SwiGLU, no dropout):

        replicated under plain TP — [s, b, D] each:
            attn norm in, qkv in (the norm's output), mlp norm in, gate/up in
        split across heads / F:
            q, k (for QKᵀ): s·b·(h + g)·dh    softmax: b·h·s²    v: s·b·g·dh
            attn out in (Wo's input): s·b·h·dh
            gate, up (for SwiGLU's backward): 2·s·b·f    down in: s·b·f
    h, g, f: this device's heads, KV groups and d_ff columns (tp_layout). Sequence parallelism
    keeps the four replicated tensors split along the sequence (÷ n; the inputs of the
    column-parallel matmuls are stored split and gathered again in the backward, as in the
    paper). Returns {tensor: bytes, "total": bytes}.
    """
    if sequence_parallel and seq % n:
        raise ValueError(f"sequence parallelism splits the {seq} tokens over {n} devices: not divisible")
    lay = tp_layout(model, n, pad_vocab=True)[0]
    h, g, f = len(lay.heads), len(lay.kv_groups), len(lay.f_cols)
    D, dh, s, b = model.d_model, model.d_head, seq, batch
    rep = s * b * D / (n if sequence_parallel else 1)
    out = {"attn norm in": rep, "qkv in": rep, "mlp norm in": rep, "gate/up in": rep,
           "q, k": s * b * (h + g) * dh, "softmax": b * h * s * s, "v": s * b * g * dh,
           "attn out in": s * b * h * dh, "gate, up": 2 * s * b * f, "down in": s * b * f}
    out = {k: v * act_bytes for k, v in out.items()}
    out["total"] = sum(out.values())
    return out


# ---------------------------------------------------------------------------------------
# Reading the timeline: per-GPU intervals (the Chrome trace is Trace.write_chrome's: a
# compute track per GPU beside its send and receive ports)
# ---------------------------------------------------------------------------------------
def device_intervals(trace, device):
    """
    What one GPU does over time, for a timeline view: {"compute": [(t0, t1, label)],
    "send": [(t0, t1, label)], "recv": [(t0, t1, label)]}, each sorted by start (seconds).
    """
    msgs = trace.messages
    out = {"compute": [(c.t_start, c.t_end, c.label) for c in trace.computes if c.device == device]}
    for kind, side in (("send", "src"), ("recv", "dst")):
        mine = (msgs[int(i)] for i in np.flatnonzero(trace.column(side) == device))
        out[kind] = [(m.t_start, m.t_end, m.label) for m in mine]
    return {k: sorted(v) for k, v in out.items()}
