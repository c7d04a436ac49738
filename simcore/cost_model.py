"""
cost_model — what tensor parallelism costs at decode time, on paper.

tp_decode_step is the roofline of one decode step on n chips (Megatron TP, one token per
sequence): each chip does 1/n of the FLOPs and reads 1/n of the weights and (until n exceeds
the KV groups) 1/n of the KV cache, and the step pays two all-reduces per layer on top.
decode_sweep is the same arithmetic over an array of n at once, for the latency plot.
pope_ffn_comm is Pope et al.'s feed-forward communication time for three partitionings.

A roofline is a lower bound: a measured step should sit above it (REFERENCE_POINTS says which
published figure is a measurement and which is itself a roofline).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .algorithms import ALGORITHMS, t_formula


def _check(batch, ctx, w_bytes, kv_bytes, act_bytes, algo):
    if batch < 1 or ctx < 0:
        raise ValueError(f"batch must be >= 1 and ctx >= 0, got batch {batch}, ctx {ctx}")
    if min(w_bytes, kv_bytes, act_bytes) <= 0:
        raise ValueError("bytes per weight / KV element / activation must be > 0")
    if algo is not None and algo not in ALGORITHMS["all-reduce"]:
        raise ValueError(f"unknown all-reduce algorithm {algo!r}; choose one of {', '.join(ALGORITHMS['all-reduce'])}")


def tp_decode_step(model, chip, link, n, batch, ctx, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0, algo=None,
                   compute_prec="bf16", topology=None):
    """
    Roofline time of one decode step under n-way tensor parallelism (seconds).

    model: llm_math.ModelConfig; chip: hw_specs.Chip; link: comm_sim.LinkSpec (alpha, bw);
    batch: sequences, one new token each; ctx: tokens already in each sequence's KV cache;
    w_bytes / kv_bytes / act_bytes: bytes per weight, KV element, activation; algo: all-reduce
    algorithm (comm_sim.t_formula's closed form; None: the machine's choice, on one switch the ring;
    "ring" is the flat ring on every machine: simcore.plan); compute_prec: the chip's peak to use;
    topology: a topology_presets.HardwarePreset (or its key) — then one all-reduce costs
    comm_time(topology, n, S, algo) (the node boundary, the torus) and `link` is not used —
    or a comm_sim topology of n chips (switch, nodes, torus: comm_sim.t_formula_on's closed
    form), as step_sim.simulate_step accepts the same three.

        t_math = batch · flops_per_token(ctx) / n / peak
        t_mem  = (weights / n + batch · ctx · kv_per_chip_per_token) / HBM bandwidth
        t_comm = 2 · n_layers · t_formula(algo, n, batch · d_model · act_bytes)   (0 when n = 1)
        t_step = max(t_math, t_mem) + t_comm     the roofline with no overlap (also t_step_no_overlap):
                                                 communication waits for compute, conservative
        t_lower_bound = max(t_math, t_mem, t_comm)   the lower bound: communication fully hidden
                                                 behind compute (or compute behind it); no
                                                 schedule beats it, an overlapped one may beat t_step

    KV replication: a chip holds at least one whole KV group, so per chip the KV is
    total × max(1, n/G) / n — it stops shrinking at n = G. The Wk and Wv that produce a group
    are replicated with it: weights (and their FLOPs) count 2·L·d_model·G·dh·(max(1, n/G) − 1)
    extra parameters, spread over the n chips.
    Returns a dict of those four times plus kv_per_chip_per_token (bytes per token per
    sequence), kv_replicas, w_per_chip, kv_per_chip, mem_per_chip (bytes), flops_per_chip,
    n_allreduce, msg_bytes (one all-reduce's S) and bound ("math", "memory" or "comm").
    """
    _check(batch, ctx, w_bytes, kv_bytes, act_bytes, algo)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    # one arithmetic for both: the sweep at this single n, as Python scalars
    row = decode_sweep(model, chip, link, np.array([n]), batch, ctx, w_bytes, kv_bytes, act_bytes, algo,
                       compute_prec, topology)
    return {k: v[0].item() for k, v in row.items() if k != "n"}


def decode_sweep(model, chip, link, ns, batch, ctx, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0, algo=None,
                 compute_prec="bf16", topology=None):
    """
    tp_decode_step for every n in `ns` at once (numpy arrays, one entry per n).

    Returns a dict of float arrays with the same keys as tp_decode_step (bound is an array of
    strings) plus "n". Entry i equals tp_decode_step(..., n=ns[i], ...) to rounding.
    With a topology (topology_presets preset or key, or a comm_sim topology: it offers its own
    n only) also "valid" (n is a group that machine
    offers; elsewhere t_comm and t_step are NaN and bound is "invalid"), "n_nodes" (how many
    nodes the group spans; 1 on a torus) and "node_size" (chips per node; 0 on a torus).
    """
    from .tensor_parallel import kv_replicas  # numpy only; imported here so cost_model stays light

    _check(batch, ctx, w_bytes, kv_bytes, act_bytes, algo)
    n = np.asarray(ns)
    if n.ndim != 1 or n.size == 0 or np.any(n < 1):
        raise ValueError(f"ns must be a non-empty 1-D array of device counts >= 1, got {ns!r}")
    nf = n.astype(float)
    replicas = kv_replicas(model.n_kv_heads, nf)  # tensor_parallel's ownership rule
    # Wk and Wv are replicated like the KV heads they produce (a chip holds whole KV groups)
    wkv_extra = 2 * model.n_layers * model.d_model * model.n_kv_heads * model.d_head * (replicas - 1)
    w = (model.matmul_params() + wkv_extra) * w_bytes / nf
    kv_tok = model.kv_bytes_per_token(kv_bytes) * replicas / nf
    kv = batch * ctx * kv_tok
    flops = batch * (model.flops_per_token(ctx) + 2.0 * wkv_extra) / nf
    t_math = flops / chip.peak_flops(compute_prec)
    t_mem = (w + kv) / chip.mem_bw
    n_ar = 2 * model.n_layers
    msg = batch * model.d_model * act_bytes
    extra = {}
    if topology is None and link is None:
        raise ValueError("give the link the chips talk over, or a topology (a hardware preset)")
    if topology is None:
        # one switch of `link`: the lecture's closed form; None is that switch's choice, the ring
        t_comm = n_ar * np.asarray(t_formula(algo or "ring", n, msg, link.alpha, link.bw), dtype=float)  # 0 at n = 1
    else:
        t_one, extra = topology_comm(topology, n, msg, algo)
        t_comm = n_ar * t_one
    bound = np.where(t_comm > np.maximum(t_math, t_mem), "comm", np.where(t_math >= t_mem, "math", "memory"))
    if extra:
        bound = np.where(extra["valid"], bound, "invalid")
    t_step = np.maximum(t_math, t_mem) + t_comm
    return {"n": n, "t_math": t_math, "t_mem": t_mem, "t_comm": t_comm, "t_step": t_step, "t_step_no_overlap": t_step,
            "t_lower_bound": np.maximum(np.maximum(t_math, t_mem), t_comm),
            "kv_per_chip_per_token": kv_tok, "kv_replicas": replicas, "w_per_chip": w, "kv_per_chip": kv,
            "mem_per_chip": w + kv, "flops_per_chip": flops, "n_allreduce": np.full(n.shape, n_ar),
            "msg_bytes": np.full(n.shape, float(msg)), "bound": bound, **extra}


def pope_ffn_comm(variant, tokens, E, F, n, bw, bytes_per_elem=2.0):
    """
    Communication time (seconds, per layer) of the feed-forward block, Pope et al. 2022 §3.2.

        "1d"        1D weight-stationary:  2·BL·E / bw                    — independent of n
        "2d"        2D weight-stationary:  8·BL·E / (√n · bw)             — optimal X, YZ split for F = 4E
        "gathered"  weight-gathered:       2·E·F·N / (n · bw) + 2·BL·E / (N · bw)
                    (appendix A.2.2: weights all-gathered over N of the n chips, activations
                    over the rest; N = √(BL·n / F) balances the two terms and minimises the sum,
                    4·E·√(BL·F) / (√n · bw))

    tokens = B·L, the tokens in this step; E d_model, F d_ff; n chips; bw bytes/s per chip (n and
    bw may be arrays: a whole sweep at once); times in bytes · bytes_per_elem. Returns seconds;
    "gathered" returns (seconds, N used). Latency α is ignored (bandwidth terms only); N is
    clipped to [1, n].
    """
    if variant == "1d":
        return 2 * tokens * E * bytes_per_elem / bw
    if variant == "2d":
        return 8 * tokens * E * bytes_per_elem / (np.sqrt(n) * bw)
    if variant == "gathered":
        N = np.minimum(np.maximum(np.sqrt(tokens * np.asarray(n, float) / F), 1.0), n)
        return (2 * E * F * N / n + 2 * tokens * E / N) * bytes_per_elem / bw, N
    raise ValueError(f"unknown variant {variant!r}; choose '1d', '2d' or 'gathered'")


# ---------------------------------------------------------------------------------------
# Published reference points (for the latency plot and the tests)
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReferencePoint:
    """
    A published decode-step time and the setting it was reported for.
    kind: "roofline" (someone else's paper arithmetic: ours should reproduce it) or
    "measurement" (a real system: our roofline should sit below it).
    term: which of our numbers the figure is compared with: "t_mem" (a memory-only estimate)
    or "floor" (max(t_math, t_mem), the compute and memory roofline without communication).
    """

    name: str
    model: str  # key of llm_math.MODELS
    chip: str  # key of hw_specs.CHIPS
    n: int
    batch: int
    ctx: int
    w_bytes: float
    kv_bytes: float
    seconds: float
    kind: str
    term: str
    source: str


REFERENCE_POINTS = (
    # (70e9 + 41.9e9) bytes / (8 chips × 8.1e11 B/s) ≈ 17 ms: weights plus KV over HBM bandwidth;
    # the book leaves communication out of this figure.
    ReferencePoint("Llama-3 70B, TPU v5e 4x2, int8, batch 32, ctx 8192", "llama3-70b", "tpu-v5e", 8, 32, 8192,
                   1.0, 1.0, 17e-3, "roofline", "t_mem",
                   '"How to Scale Your Model", applied inference chapter (Serving LLaMA 3-70B), worked example'),
    # Abstract: "low-batch-size latency of 29ms per token during generation (using int8 weight
    # quantization) ... 2048-token context". The batch is not stated there: we evaluate at batch 1,
    # the smallest roofline, so it is a lower bound whatever batch was measured. Compared with the
    # floor, not t_step: a 1D ring over one ICI link at n = 64 pays 2·63 sequential α per
    # all-reduce, which Pope et al. avoid with 2D partitioning on the 3D torus.
    ReferencePoint("PaLM 540B, 64 TPU v4, int8 weights, ctx 2048", "palm-540b", "tpu-v4", 64, 1, 2048,
                   1.0, 2.0, 29e-3, "measurement", "floor",
                   "Pope et al. 2022, Efficiently Scaling Transformer Inference, abstract"),
)


def reference_estimate(ref, algo=None):
    """
    Our model at a reference point's setting: (our seconds for ref.term, tp_decode_step's dict).
    The link is the chip's own scale-up link (hw_specs.Chip.link).
    """
    from .links import LINKS
    from .hw_specs import CHIPS
    from .llm_math import MODELS

    chip = CHIPS[ref.chip]
    out = tp_decode_step(MODELS[ref.model], chip, LINKS[chip.link], ref.n, ref.batch, ref.ctx,
                         w_bytes=ref.w_bytes, kv_bytes=ref.kv_bytes, algo=algo)
    ours = out["t_mem"] if ref.term == "t_mem" else max(out["t_math"], out["t_mem"])
    return ours, out


# ---------------------------------------------------------------------------------------
# Which n tensor parallelism can use, and the best of them
# ---------------------------------------------------------------------------------------
def tp_degree_problem(model, n) -> str | None:
    """
    Why n-way Megatron tensor parallelism cannot split `model` (one sentence), or None if it can.

    The rule is tensor_parallel.tp_layout's, the one place that decides who owns what:
      - n divides the query heads H: each device holds whole heads (Megatron-LM,
        megatron/training/arguments.py validate_args: num_attention_heads %
        tensor_model_parallel_size == 0);
      - n divides d_ff: the column-parallel FFN splits its output dimension evenly (Megatron-LM,
        megatron/core/tensor_parallel/layers.py, ColumnParallelLinear: divide(output_size, world_size));
      - n divides the KV heads G (each device holds G/n whole groups: Megatron-LM's
        divide(num_query_groups, world_size) in megatron/core/transformer/attention.py), or n is
        a multiple of G and each KV head is replicated n/G times (vLLM's QKVParallelLinear,
        vllm/model_executor/layers/linear.py: num_kv_head_replicas = divide(tp_size, total_num_kv_heads)).
    The vocabulary is padded to a multiple of n (Megatron's make_vocab_size_divisible_by), so it
    never rules n out.
    """
    from .tensor_parallel import tp_layout  # numpy only; imported here so cost_model stays light

    try:
        tp_layout(model, int(n), pad_vocab=True)
    except ValueError as e:
        return str(e)
    return None


def valid_tp_degrees(model, n_max) -> np.ndarray:
    """The tensor-parallel degrees in 1..n_max that tp_degree_problem accepts, ascending (int array)."""
    if n_max < 1:
        raise ValueError(f"n_max must be >= 1, got {n_max}")
    H = model.n_heads
    divisors = [n for n in range(1, min(H, int(n_max)) + 1) if H % n == 0]  # nothing else can divide the heads
    return np.array([n for n in divisors if tp_degree_problem(model, n) is None], dtype=int)


def best_tp_degree(sweep, hbm_bytes, valid) -> tuple[int, bool]:
    """
    (n, fits): the n of `sweep` (decode_sweep's dict) with the smallest t_step among the degrees
    in `valid` whose weights + KV fit in `hbm_bytes` per chip; among all valid degrees when none
    fits (fits is then False). Raises ValueError when no n of the sweep is valid.
    """
    n = np.asarray(sweep["n"])
    ok = np.isin(n, valid) & np.isfinite(sweep["t_step"])  # NaN: the machine has no such group
    if not ok.any():
        raise ValueError(f"no tensor-parallel degree among n = {n.min()}..{n.max()}")
    fits = ok & (sweep["mem_per_chip"] <= hbm_bytes)
    pool = fits if fits.any() else ok
    i = int(np.argmin(np.where(pool, sweep["t_step"], np.inf)))
    return int(n[i]), bool(fits.any())


# ---------------------------------------------------------------------------------------
# The communication term on a real machine (topology_presets)
# ---------------------------------------------------------------------------------------
def comm_time(topology, n, nbytes, algo=None):
    """
    One all-reduce of S = nbytes over n chips of a hardware preset (seconds): its plan's closed form
    (topology.plan; algo None: the machine's choice, "ring": the flat ring over all n chips):
      inside one NVLink domain   comm_sim.t_formula(algo, …) on the domain's link;
      across nodes               the machine's choice (NCCL's tuner on a GPU preset: its Tree
                                 for small and medium sizes — a decode token's all-reduce —
                                 NVLS Tree or the channel rings for large ones), or hier by name: ring reduce-scatter in the node, ring
                                 all-reduce of S/P across nodes on each GPU's own NIC, ring
                                 all-gather in the node, pipelined by chunks in one call as
                                 NCCL does (topo_closed_forms.t_hier_pipelined);
      on a TPU torus slice       bidirectional rings per axis ("How to Scale Your Model":
                                 all-reduce ≈ 2·S / (W_ici · n_axes), W_ici = 2β both ways).
    Raises ValueError when the machine has no group of n chips.
    """
    from .topology_presets import get_preset

    preset = get_preset(topology) if isinstance(topology, str) else topology
    return preset.allreduce_time(int(n), nbytes, algo)


def topology_comm(topology, ns, nbytes, algo=None):
    """
    comm_time for every n in ns: (array of seconds, NaN where the machine has no such group;
    {"valid", "n_nodes", "node_size"} arrays) — what decode_sweep adds to its result.
    """
    from .topology_presets import get_preset

    preset = get_preset(topology) if isinstance(topology, str) else topology
    ns = np.asarray(ns)
    if is_wired(preset):
        return _wired_comm(preset, ns, nbytes, algo)
    t = np.full(ns.shape, np.nan)
    valid = np.zeros(ns.shape, dtype=bool)
    n_nodes = np.ones(ns.shape)
    offered = set(preset.valid_degrees(int(ns.max())))
    rec = preset.record  # the kind of machine (simcore.kind_record)
    for i, n in enumerate(ns.tolist()):
        if n in offered:
            lay = preset.layout(n)
            t[i] = preset.allreduce_time(n, nbytes, algo)
            valid[i] = True
            n_nodes[i] = lay.nodes
        elif rec.layout == "nodes":
            n_nodes[i] = math.ceil(n / rec.per_node)
    size = rec.per_node if rec.layout == "nodes" else 0
    return t, {"valid": valid, "n_nodes": n_nodes, "node_size": np.full(ns.shape, float(size))}


def is_wired(topology) -> bool:
    """True for a comm_sim topology (switch(n), nodes(...), torus(...), any that routes): a machine of
    one size, wired; False for a preset (topology_presets), which builds one per n."""
    return callable(getattr(topology, "route", None))


def _wired_comm(topo, ns, nbytes, algo):
    """topology_comm for a comm_sim topology: it offers n = topo.n only, priced as the all-reduce
    the step simulation runs on it (its plan's time: topology.plan)."""
    valid = ns == topo.n
    t = np.where(valid, 0.0 if topo.n == 1 else topo.time("all-reduce", algo, float(nbytes)), np.nan)
    rec = topo.record  # its nodes and the chips of each (simcore.kind_record)
    return t, {"valid": valid, "n_nodes": np.full(ns.shape, float(rec.nodes)),
               "node_size": np.full(ns.shape, float(rec.per_node))}


def node_boundary(topology):
    """Chips per node of a preset (the n beyond which traffic leaves NVLink), None on a torus."""
    from .topology_presets import get_preset

    preset = get_preset(topology) if isinstance(topology, str) else topology
    rec = preset.record
    return rec.per_node if rec.layout == "nodes" else None


# ---------------------------------------------------------------------------------------
# Prefill, and communication overlapped with compute (step_sim simulates both op by op)
# ---------------------------------------------------------------------------------------
def tp_prefill_step(model, chip, link, n, batch, prompt, ctx=0, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0,
                    algo=None, compute_prec="bf16"):
    """
    Roofline of a prefill step: `prompt` new tokens in each of `batch` sequences, after `ctx`
    cached ones (seconds; same keys as tp_decode_step). prompt = 1 is tp_decode_step.

        t_math = batch · (prompt · 2 · matmul_params + 4 · L · H · dh · keys) / n / peak,
                 keys = prompt · ctx + prompt · (prompt − 1) / 2   (token p attends to the ctx + p before it)
        t_mem  = (weights / n + batch · ctx · kv_per_chip_per_token) / HBM bandwidth   (as decode)
        t_comm = 2 · n_layers · t_formula(algo, n, batch · prompt · d_model · act_bytes)
    """
    if prompt < 1:
        raise ValueError(f"prompt must be >= 1 tokens, got {prompt}")
    mem = tp_decode_step(model, chip, link, n, batch, ctx, w_bytes, kv_bytes, act_bytes, algo, compute_prec)
    rows = tp_decode_step(model, chip, link, n, batch * prompt, 0, w_bytes, kv_bytes, act_bytes, algo, compute_prec)
    keys = prompt * ctx + prompt * (prompt - 1) / 2
    # the matmuls of batch · prompt rows (rows' ctx = 0: no attention), plus attention over keys
    flops = rows["flops_per_chip"] + batch * 4.0 * model.n_layers * model.n_heads * model.d_head * keys / n
    t_math = flops / chip.peak_flops(compute_prec)
    t_mem, t_comm = mem["t_mem"], rows["t_comm"]
    bound = "comm" if t_comm > max(t_math, t_mem) else ("math" if t_math >= t_mem else "memory")
    return {**mem, "t_math": t_math, "t_comm": t_comm, "t_step": max(t_math, t_mem) + t_comm,
            "t_step_no_overlap": max(t_math, t_mem) + t_comm, "t_lower_bound": max(t_math, t_mem, t_comm),
            "flops_per_chip": flops, "msg_bytes": rows["msg_bytes"], "bound": bound}


def tp_step_overlap(model, chip, link, n, batch, ctx, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0, algo=None,
                    compute_prec="bf16", prompt=1):
    """
    The roofline with each row-parallel matmul's all-reduce overlapped (collective matmul, "How
    to Scale Your Model", "Programming TPUs in JAX" chapter; step_sim's overlap="async").

    Wo and W_down are tiled over their output columns into n chunks, computed in the order the
    ring reduce-scatter sends them: chunk k goes on the wire while chunk k+1 is computed. With
    t_c the matmul's own roofline time on one chip and t_rs = (n−1)(α + S/(n·β)) the
    reduce-scatter half of the ring all-reduce, that sub-layer's matmul + all-reduce takes

        max(t_c / n + t_rs, t_c) + t_ag     instead of     t_c + t_rs + t_ag

    (the first chunk's compute and the all-gather half stay exposed), so each of the
    2 · n_layers sub-layers saves min(t_c · (1 − 1/n), t_rs). Returns tp_decode_step's dict
    (tp_prefill_step's when prompt > 1) plus t_saved and t_step_overlap = t_step − t_saved.
    Ring only: another algorithm raises ValueError.
    """
    if prompt == 1:
        base = tp_decode_step(model, chip, link, n, batch, ctx, w_bytes, kv_bytes, act_bytes, algo, compute_prec)
    else:
        base = tp_prefill_step(model, chip, link, n, batch, prompt, ctx, w_bytes, kv_bytes, act_bytes, algo,
                               compute_prec)
    saved = float(overlap_saving(model, chip, link, n, batch * prompt, w_bytes, act_bytes, algo, compute_prec))
    return {**base, "t_saved": saved, "t_step_overlap": base["t_step"] - saved}


def decode_sweep_overlap(model, chip, link, ns, batch, ctx, w_bytes=2.0, kv_bytes=2.0, act_bytes=2.0, algo=None,
                         compute_prec="bf16"):
    """decode_sweep plus "t_saved" and "t_step_overlap" per n (tp_step_overlap for every n at once)."""
    out = decode_sweep(model, chip, link, ns, batch, ctx, w_bytes, kv_bytes, act_bytes, algo, compute_prec)
    saved = overlap_saving(model, chip, link, out["n"], batch, w_bytes, act_bytes, algo, compute_prec)
    return {**out, "t_saved": saved, "t_step_overlap": out["t_step"] - saved}


def overlap_saving(model, chip, link, n, rows, w_bytes=2.0, act_bytes=2.0, algo=None, compute_prec="bf16"):
    """
    Seconds the collective matmul hides per step (tp_step_overlap's t_saved): Σ over the
    2 · n_layers row-parallel matmuls of min(t_c' · (1 − 1/n), t_rs) − (t_c' − t_c), where t_c'
    is the matmul cut into n chunks, each at step_sim.CHUNK_MATMUL_EFFICIENCY of peak FLOP/s
    (the decomposition's cost; t_c' = t_c when memory-bound). rows = batch · new tokens;
    n an int or an array of device counts (then an array). 0 at n = 1. Negative when the
    decomposition costs more than it hides. (The all-gather matmul of sequence parallelism
    is simulated by step_sim only.)
    """
    from .step_sim import CHUNK_MATMUL_EFFICIENCY as eff

    if algo not in ("ring", None):
        raise ValueError(f"the overlapped closed form tiles the ring reduce-scatter; algo must be 'ring', not {algo!r}")
    nf = np.asarray(n, dtype=float)
    D, peak, bw = model.d_model, chip.peak_flops(compute_prec), chip.mem_bw
    t_rs = np.asarray(t_formula("ring", np.asarray(n), rows * D * act_bytes, link.alpha, link.bw,
                                op="reduce-scatter"), dtype=float)
    saved = np.zeros(nf.shape)
    for k in (model.n_heads * model.d_head / nf, model.d_ff / nf):  # Wo [H·dh/n, D], W_down [F/n, D]
        t_c = np.maximum(2.0 * rows * k * D / peak, k * D * w_bytes / bw)
        t_cut = np.where(nf > 1, np.maximum(2.0 * rows * k * D / (peak * eff), k * D * w_bytes / bw), t_c)
        saved = saved + model.n_layers * (np.minimum(t_cut * (1 - 1 / nf), t_rs) - (t_cut - t_c))
    return saved


def tp_degrees(model, n_max, machine=None) -> list:
    """
    The tensor-parallel degrees of `model` in 1..n_max, ascending: the n that split its query
    heads, its d_ff and its KV heads as the engine's tensor-parallel rule says
    (cost_model.tp_degree_problem, which asks tensor_parallel.tp_layout, the one place that
    decides who owns what). machine: a topology_presets.HardwarePreset, whose groups (its
    valid_degrees) the degrees must also be. The decode command and the app's decode-latency view
    both list these. Llama-3 70B (64 heads) on GB200 NVL72: 1, 2, 4, 8, 16, 32, 64 — the rack's
    other groups (3, 6, 9, … 72) and its multi-rack sizes (144 … 576) split no 64 heads.
    """
    ns = [int(n) for n in valid_tp_degrees(model, int(n_max))]
    if machine is not None:
        offered = set(machine.valid_degrees(int(n_max)))
        ns = [n for n in ns if n in offered]
    return ns


# The same step simulated op by op on one clock (compute and messages): step_sim, re-exported here
# so the roofline and its simulation are found side by side.
from .step_sim import simulate_decode_step, simulate_prefill_step  # noqa: E402, F401
