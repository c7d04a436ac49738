"""
Megatron tensor parallelism for the lecture-2 Transformer (transformer_lab) on n virtual devices.

Who holds what (one mesh axis X of n devices):
    Wq [D, (H·dh)_X]        query heads split: device d holds heads d·H/n .. (d+1)·H/n − 1
    Wk, Wv [D, (G·dh)]      the K/V groups its query heads read — replicated once n > G
    Wo [(H·dh)_X, D]        rows matching its heads: column-split then row-split, no talk between
    W_gate, W_up [D, F_X]   columns of the SwiGLU hidden size
    W_down [F_X, D]         the matching rows
    lm_head [D, V_X]        vocabulary columns; the logits are all-gathered at the end
    embed, norms            replicated (small, and every device needs the whole residual x)

Each layer then costs exactly two all-reduces of the residual update [B, T, D]: one after
attention ("layer i attn"), one after the MLP ("layer i mlp"); the forward ends with one
all-gather of the logits ("logits"): 2L + 1 collectives. With sequence parallelism each
all-reduce becomes a reduce-scatter and an all-gather around the norms: 4L + 2 collectives.

`tp_layout` is the one place that decides ownership; shard_params_tp cuts the matrices with it
and weight_slices describes it to the app.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from .sharding import all_gather, all_reduce, reduce_scatter
from .transformer_lab import (KVCache, attention_block, attention_normed, check_tokens, lm_head_of, mlp_block,
                              mlp_normed, rms_norm, rope_angles)


# ---------------------------------------------------------------------------------------
# Ownership
# ---------------------------------------------------------------------------------------
def _check_n(n):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"the number of devices must be a whole number >= 1, got {n!r}")


def kv_group_of_device(cfg, n, d):
    """
    The KV groups (list of ints) device d needs under n-way tensor parallelism.

    Query heads are dealt out H/n per device; head h reads group h // R (R = H/G).
        n ≤ G: each device gets G/n whole groups, nothing is duplicated;
        n > G: a device holds only part of one group's query heads but needs that group's whole
               K/V — the KV is replicated on n/G devices.
    """
    _check_n(n)
    H, G = cfg.n_heads, cfg.n_kv_heads
    if H % n:
        raise ValueError(f"{H} query heads are not divisible by {n} devices")
    R, hpd = H // G, H // n
    first, last = d * hpd, (d + 1) * hpd - 1
    return list(range(first // R, last // R + 1))


def _padded(size, n):
    return -(-size // n) * n  # round up to a multiple of n


@dataclass(frozen=True)
class DeviceLayout:
    """
    What device d holds, as index ranges into the full matrices.
    q_cols: columns of Wq = rows of Wo (its heads); kv_cols: columns of Wk / Wv (its groups);
    f_cols: columns of W_gate / W_up = rows of W_down; v_cols: columns of the lm_head padded to
    vocab_padded (columns ≥ vocab are zero padding).
    """

    device: int
    heads: range
    kv_groups: tuple
    q_cols: np.ndarray
    kv_cols: np.ndarray
    f_cols: np.ndarray
    v_cols: np.ndarray
    vocab: int
    vocab_padded: int


def tp_layout(cfg, n, pad_vocab=False):
    """
    Ownership of every sharded matrix for n devices: a list of DeviceLayout, one per device.

    Raises ValueError naming the sizes when heads, d_ff or vocab do not divide by n (vocab is
    padded up to a multiple of n instead when pad_vocab=True), or when a device's query heads
    would straddle KV groups unevenly (attention_core could not map them to their groups).
    """
    _check_n(n)
    H, G, dh, F, V = cfg.n_heads, cfg.n_kv_heads, cfg.d_head, cfg.d_ff, cfg.vocab
    if H % n:
        raise ValueError(f"{H} query heads are not divisible by {n} devices")
    R, hpd = H // G, H // n
    if hpd % R and R % hpd:
        # e.g. H=12, G=4, n=3: device 0 would hold 3 heads of group 0 and 1 of group 1
        raise ValueError(f"{hpd} heads per device straddle KV groups of {R} heads unevenly (H={H}, G={G}, n={n})")
    if F % n:
        raise ValueError(f"d_ff {F} is not divisible by {n} devices")
    if V % n and not pad_vocab:
        raise ValueError(f"vocab {V} is not divisible by {n} devices; pad_vocab=True pads the lm_head "
                         f"with zero columns to {_padded(V, n)}")
    Vp = _padded(V, n)
    out = []
    for d in range(n):
        groups = tuple(kv_group_of_device(cfg, n, d))
        out.append(DeviceLayout(
            device=d,
            heads=range(d * hpd, (d + 1) * hpd),
            kv_groups=groups,
            q_cols=np.arange(d * hpd * dh, (d + 1) * hpd * dh),
            kv_cols=np.concatenate([np.arange(g * dh, (g + 1) * dh) for g in groups]),
            f_cols=np.arange(d * F // n, (d + 1) * F // n),
            v_cols=np.arange(d * Vp // n, (d + 1) * Vp // n),
            vocab=V, vocab_padded=Vp))
    return out


class TPShare(NamedTuple):
    """How much of the attention one device holds under n-way tensor parallelism (all devices alike)."""

    heads: int  # query heads per device (H/n)
    kv_groups: int  # KV groups per device (G/n while n ≤ G, else 1)
    kv_replicas: int  # devices holding each KV group (1 while n ≤ G, else n/G)


def tp_share(cfg, n) -> TPShare:
    """Heads, KV groups and KV replication per device, counted from tp_layout (raises as it does)."""
    lay = tp_layout(cfg, n, pad_vocab=True)
    return TPShare(len(lay[0].heads), len(lay[0].kv_groups), sum(0 in d.kv_groups for d in lay))


def kv_replicas(n_kv_heads, n):
    """
    Devices holding each KV group under n-way TP, for any n (an int or an array, as floats): 1 while
    n ≤ G, n/G beyond — tp_layout's rule (tp_share counts it there for the n it accepts), in the closed
    form a sweep over every n can use (vLLM's num_kv_head_replicas = tp_size / total_num_kv_heads).
    """
    return np.maximum(1.0, np.asarray(n, dtype=float) / n_kv_heads)


# matrix name -> (index attribute of DeviceLayout, split axis); None: replicated whole
_SPLIT = {
    "wq": ("q_cols", 1), "wk": ("kv_cols", 1), "wv": ("kv_cols", 1), "wo": ("q_cols", 0),
    "w_gate": ("f_cols", 1), "w_up": ("f_cols", 1), "w_down": ("f_cols", 0),
    "lm_head": ("v_cols", 1),
    "embed": None, "attn_norm": None, "mlp_norm": None, "final_norm": None,
}
MATRICES = tuple(_SPLIT)


def _full_shape(cfg, name):
    D, H, G, dh, F, V = cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.d_head, cfg.d_ff, cfg.vocab
    return {"wq": (D, H * dh), "wk": (D, G * dh), "wv": (D, G * dh), "wo": (H * dh, D),
            "w_gate": (D, F), "w_up": (D, F), "w_down": (F, D), "lm_head": (D, V),
            "embed": (V, D), "attn_norm": (D,), "mlp_norm": (D,), "final_norm": (D,)}[name]


@dataclass(frozen=True)
class WeightSlice:
    """
    Device `device`'s part of matrix `name` (full shape `shape`, unpadded).
    axis: the split axis (0 rows, 1 columns) or None when the device holds the whole thing.
    index: the indices it holds along `axis` (into the full matrix; padding excluded).
    padding: zero columns it holds beyond the real vocabulary (lm_head with pad_vocab).
    replicated: another device holds the same indices (norms, embed; Wk / Wv when n > G).
    """

    name: str
    device: int
    shape: tuple
    axis: int | None
    index: np.ndarray | None
    padding: int
    replicated: bool


def weight_slices(cfg, n, name, pad_vocab=False):
    """Per device, which rows / columns of matrix `name` it holds (list of WeightSlice)."""
    if name not in _SPLIT:
        raise ValueError(f"unknown matrix {name!r}; choose one of {', '.join(MATRICES)}")
    layout = tp_layout(cfg, n, pad_vocab)
    shape = _full_shape(cfg, name)
    if _SPLIT[name] is None:
        return [WeightSlice(name, d, shape, None, None, 0, n > 1) for d in range(n)]
    attr, axis = _SPLIT[name]
    idx = [getattr(lay, attr) for lay in layout]
    real = [i[i < shape[axis]] for i in idx]
    held = np.concatenate(real)
    counts = np.bincount(held, minlength=shape[axis])
    return [WeightSlice(name, d, shape, axis, real[d], len(idx[d]) - len(real[d]), bool(np.any(counts[real[d]] > 1)))
            for d in range(n)]


def _take(W, lay, name):
    """Cut matrix `name` for one device along its split axis (or hand over the whole thing)."""
    if _SPLIT[name] is None:
        return W
    attr, axis = _SPLIT[name]
    return np.take(W, getattr(lay, attr), axis=axis)


# ---------------------------------------------------------------------------------------
# Sharding the parameters and running the forward
# ---------------------------------------------------------------------------------------
def shard_params_tp(params, cfg, n, pad_vocab=False):
    """
    Cut transformer_lab parameters for n devices, Megatron style (see the module docstring).

    Returns a list of n dicts shaped like the single-device params with narrower matrices, plus
    "kv_groups" (the groups the device holds) and "vocab" (the true vocabulary size). lm_head is
    always a matrix here (a tied head is cut from embed.T). With pad_vocab=True the lm_head is
    first padded with zero columns to a multiple of n; tp_forward drops those logits.
    """
    layout = tp_layout(cfg, n, pad_vocab)
    head = lm_head_of(params)
    pad = layout[0].vocab_padded - cfg.vocab
    if pad:
        head = np.concatenate([head, np.zeros((head.shape[0], pad), head.dtype)], axis=1)
    out = []
    for lay in layout:
        dp = {"embed": params["embed"], "final_norm": params["final_norm"],
              "lm_head": _take(head, lay, "lm_head"),
              "kv_groups": list(lay.kv_groups), "vocab": cfg.vocab, "layers": []}
        for lp in params["layers"]:
            dp["layers"].append({name: _take(W, lay, name) for name, W in lp.items()})
        out.append(dp)
    return out


def tp_forward(dev_params, cfg, tokens, comm, caches=None, algo=None, gather_logits=True,
               sequence_parallel=False):
    """
    Tensor-parallel forward: each device computes its heads and its slice of F; two all-reduces
    per layer make the residual stream identical on every device again.

    dev_params: shard_params_tp's list; tokens [B, T] int; comm: comm_sim.Comm with n devices
    (records every message); caches: tp_caches' list (each device caches only its KV groups;
    they advance by T at the end) or None; algo: an all-reduce algorithm of
    algorithms.ALGORITHMS that runs on comm's topology, or None: the topology's choice for each
    all-reduce's size (sharding.all_reduce).
    sequence_parallel: Megatron-LM's --sequence-parallel (see _sp_layers): each all-reduce
    becomes a reduce-scatter and an all-gather around the norms (the topology's choice: the
    ring on one switch); needs T divisible by n and algo None or 'ring'.
    Returns the full logits [B, T, vocab] (device 0's copy; padding columns dropped), or with
    gather_logits=False each device's local logits [B, T, vocab_padded/n] (no gather).
    Collective labels: "layer {i} attn", "layer {i} mlp", "logits" (and "final norm" with
    sequence parallelism).
    """
    n = len(dev_params)
    if comm.n != n:
        raise ValueError(f"comm has {comm.n} devices but the parameters were sharded for {n}")
    tokens = check_tokens(cfg, tokens)
    T = tokens.shape[1]
    pos0 = caches[0].length if caches is not None else 0
    cos, sin = rope_angles(np.arange(pos0, pos0 + T), cfg.d_head, cfg.rope_theta)
    if sequence_parallel:
        if algo not in (None, "ring"):
            raise ValueError(f"sequence parallelism replaces the all-reduces by ring reduce-scatters and "
                             f"all-gathers (the topology's choice); algo must be 'ring' (or None), not {algo!r}")
        if T % n:
            raise ValueError(f"sequence parallelism splits the {T} tokens of the sequence over {n} devices: "
                             f"{T} is not divisible by {n}")
        xs = _sp_layers(dev_params, cfg, tokens, comm, caches, cos, sin, pos0)
        return _finish(dev_params, xs, comm, caches, T, gather_logits)
    ranks = [tp_layers(p, cfg, tokens, cos, sin, pos0, caches[d] if caches is not None else None)
             for d, p in enumerate(dev_params)]
    steps = [_advance(r, None) for r in ranks]
    while not steps[0][0]:  # every device asks for the same all-reduce at once: run it on the simulator
        summed = all_reduce(comm, [partial for _done, (_label, partial) in steps], algo, label=steps[0][1][0])
        steps = [_advance(r, s) for r, s in zip(ranks, summed)]
    hs = [value for _done, value in steps]
    return _finish(dev_params, hs, comm, caches, T, gather_logits)


def tp_layers(p, cfg, tokens, cos, sin, pos0=0, cache=None):
    """
    One device's share of the Megatron layers, written once for the simulator (tp_forward) and for
    MPI ranks (mpi.tp_forward_rank): a generator that yields (label, partial sum [B, T, D]) where an
    all-reduce is due, is sent the sum, and finally returns the normed stream [B, T, D] for the lm_head.

    p: this device's dict from shard_params_tp; tokens [B, T] int at positions pos0..; cos, sin:
    rope_angles of those positions; cache: this device's KVCache (its own KV groups) or None.
    Column-split Wq/Wk/Wv then row-split Wo (and W_gate/W_up then W_down) leave each device a
    partial sum of the sub-layer's output; the all-reduce makes the residual stream identical again.
    """
    x = p["embed"][tokens]  # replicated residual stream [B, T, D]
    for li, lp in enumerate(p["layers"]):
        x = x + (yield f"layer {li} attn", attention_block(lp, cfg, x, cos, sin, pos0, cache, li))
        x = x + (yield f"layer {li} mlp", mlp_block(lp, cfg, x))
    return rms_norm(x, p["final_norm"], cfg.norm_eps)


def run_layers(rank, allreduce):
    """Drive one device's tp_layers generator with allreduce(partial) -> sum; returns its normed stream."""
    done, value = _advance(rank, None)
    while not done:
        done, value = _advance(rank, allreduce(value[1]))
    return value


def _advance(rank, value):
    """Send value into a tp_layers generator (None to start it): (False, (label, partial)) while it
    asks for an all-reduce, (True, normed stream) once it has finished."""
    try:
        return False, (next(rank) if value is None else rank.send(value))
    except StopIteration as finished:
        return True, finished.value


def _finish(dev_params, hs, comm, caches, T, gather_logits):
    """Vocab-parallel lm_head on the normed stream hs [B, T, D] of every device, then gather the logits."""
    if caches is not None:
        for c in caches:  # every layer is written: the step is complete on every device
            c.length += T
    local = [h @ p["lm_head"] for h, p in zip(hs, dev_params)]
    if not gather_logits:
        return local
    full = all_gather(comm, local, axis=2, label="logits")[0]
    return full[..., :dev_params[0].get("vocab", full.shape[-1])]


def _sp_layers(dev_params, cfg, tokens, comm, caches, cos, sin, pos0):
    """
    The layers under sequence parallelism (Korthikanti et al. 2022, "Reducing Activation
    Recomputation in Large Transformer Models", §4.2.2; Megatron-LM --sequence-parallel).

    Outside attention and the MLP the residual stream is split along the sequence: device d
    keeps tokens [d·T/n, (d+1)·T/n) and runs the norms (and residual adds) on those alone.
        x_d -> norm -> all-gather (sequence) -> column-parallel ... row-parallel -> reduce-scatter (sequence) -> + x_d
    An all-reduce is a reduce-scatter followed by an all-gather, so the bytes on the wire are
    the same; what shrinks is the norms' work and the activations each device keeps (1/n).
    Returns the normed final stream [B, T, D] on every device (gathered for the lm_head).
    """
    n = len(dev_params)
    # device d's sequence shard of the embedded tokens: [B, T/n, D]
    xs = [p["embed"][part] for p, part in zip(dev_params, np.split(tokens, n, axis=1))]
    for li in range(cfg.n_layers):
        label = f"layer {li} attn"
        hs = [rms_norm(x, p["layers"][li]["attn_norm"], cfg.norm_eps) for x, p in zip(xs, dev_params)]
        hs = all_gather(comm, hs, axis=1, label=label)  # [B, T, D] on every device
        partial = [attention_normed(p["layers"][li], cfg, hs[d], cos, sin, pos0,
                                    caches[d] if caches is not None else None, li)
                   for d, p in enumerate(dev_params)]
        xs = [x + s for x, s in zip(xs, reduce_scatter(comm, partial, axis=1, label=label))]
        label = f"layer {li} mlp"
        hs = [rms_norm(x, p["layers"][li]["mlp_norm"], cfg.norm_eps) for x, p in zip(xs, dev_params)]
        hs = all_gather(comm, hs, axis=1, label=label)
        partial = [mlp_normed(p["layers"][li], hs[d]) for d, p in enumerate(dev_params)]
        xs = [x + s for x, s in zip(xs, reduce_scatter(comm, partial, axis=1, label=label))]
    hs = [rms_norm(x, p["final_norm"], cfg.norm_eps) for x, p in zip(xs, dev_params)]
    return all_gather(comm, hs, axis=1, label="final norm")


def tp_caches(cfg, dev_params, batch):
    """One KVCache per device holding only its own KV groups ([B, max_seq, len(kv_groups), dh])."""
    out = []
    for p in dev_params:
        g = len(p["kv_groups"])
        out.append(KVCache(replace(cfg, n_kv_heads=g, n_heads=g), batch, max_len=cfg.max_seq))
    return out
