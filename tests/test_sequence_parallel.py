"""Sequence parallelism (Megatron-LM --sequence-parallel): same logits as one device, same bytes as plain TP."""

import dataclasses

import numpy as np
import pytest

from simcore import shard_lab
from simcore.algorithms import t_formula
from simcore.sharding import make_comm
from simcore.tensor_parallel import shard_params_tp, tp_caches, tp_forward
from simcore.transformer_lab import SMALL, TINY, TINY_MQA, forward, init_params

CONFIGS = {
    "tiny": TINY,  # G = 4: n = 8 > G replicates the KV groups
    "mqa": TINY_MQA,  # G = 1
    "small-tied": SMALL,  # G = 2, tied lm_head, 4 layers
    "mha-tied": dataclasses.replace(TINY, n_kv_heads=8, tie_embeddings=True),
}


def _tokens(cfg, B, T, seed=3):
    return np.random.default_rng(seed).integers(0, cfg.vocab, size=(B, T))


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_sp_logits_equal_single_device(name, n):
    cfg = CONFIGS[name]
    p = init_params(cfg, seed=2)
    toks = _tokens(cfg, 2, 16)
    ref = forward(p, cfg, toks)
    out = tp_forward(shard_params_tp(p, cfg, n), cfg, toks, make_comm(n), sequence_parallel=True)
    assert out.shape == ref.shape
    assert np.max(np.abs(out - ref)) < 1e-10


def test_sp_through_the_lecture_facade():
    p = init_params(TINY)
    toks = _tokens(TINY, 1, 8)
    out = shard_lab.tp_forward(shard_lab.shard_params_tp(p, TINY, 4), TINY, toks, shard_lab.make_comm(4),
                               sequence_parallel=True)
    assert np.max(np.abs(out - forward(p, TINY, toks))) < 1e-10


@pytest.mark.parametrize("n", [2, 4, 8])
def test_sp_schedule_and_bytes_equal_plain_tp(n):
    cfg = TINY
    p = init_params(cfg)
    toks = _tokens(cfg, 2, 8)
    dev = shard_params_tp(p, cfg, n)
    plain, sp = make_comm(n), make_comm(n)
    tp_forward(dev, cfg, toks, plain)
    tp_forward(dev, cfg, toks, sp, sequence_parallel=True)
    colls = sp.trace.collectives
    # per layer: all-gather and reduce-scatter around attention, then around the MLP
    assert len(colls) == 4 * cfg.n_layers + 2
    assert [(c.op, c.label) for c in colls[:4]] == [("all-gather", "layer 0 attn"), ("reduce-scatter", "layer 0 attn"),
                                                   ("all-gather", "layer 0 mlp"), ("reduce-scatter", "layer 0 mlp")]
    assert [(c.op, c.label) for c in colls[-2:]] == [("all-gather", "final norm"), ("all-gather", "logits")]
    # an all-reduce is a reduce-scatter plus an all-gather: the same bytes on the wire per layer
    for li in range(cfg.n_layers):
        for part in ("attn", "mlp"):
            label = f"layer {li} {part}"
            b_plain = sum(m.nbytes for m in plain.trace.messages if m.label == label)
            b_sp = sum(m.nbytes for m in sp.trace.messages if m.label == label)
            S = 2 * 8 * cfg.d_model * 8  # [B, T, D] float64
            assert b_plain == b_sp == pytest.approx(2 * (n - 1) * S)
    # and the same time: ring all-reduce = reduce-scatter + all-gather, closed forms
    ag = t_formula("ring", n, S, sp.link.alpha, sp.link.bw, op="all-gather")
    rs = t_formula("ring", n, S, sp.link.alpha, sp.link.bw, op="reduce-scatter")
    assert ag + rs == pytest.approx(t_formula("ring", n, S, sp.link.alpha, sp.link.bw), rel=1e-12)


def test_sp_prefill_fills_the_caches_plain_decode_continues():
    cfg, n = TINY, 4
    p = init_params(cfg, seed=4)
    toks = _tokens(cfg, 2, 12)
    dev = shard_params_tp(p, cfg, n)
    sp_caches, plain_caches = tp_caches(cfg, dev, 2), tp_caches(cfg, dev, 2)
    tp_forward(dev, cfg, toks[:, :8], make_comm(n), caches=sp_caches, sequence_parallel=True)
    tp_forward(dev, cfg, toks[:, :8], make_comm(n), caches=plain_caches)
    for a, b in zip(sp_caches, plain_caches):  # each device cached the same K/V of its groups
        assert a.length == b.length == 8
        assert np.max(np.abs(a.k - b.k)) < 1e-12 and np.max(np.abs(a.v - b.v)) < 1e-12
    for t in range(8, 12):  # one token at a time: T = 1 is not divisible by n, so plain TP decodes
        step = tp_forward(dev, cfg, toks[:, t:t + 1], make_comm(n), caches=sp_caches)
    ref = forward(p, cfg, toks)
    assert np.max(np.abs(step[:, -1] - ref[:, -1])) < 1e-10


def test_sp_needs_a_divisible_sequence():
    p = init_params(TINY)
    dev = shard_params_tp(p, TINY, 4)
    with pytest.raises(ValueError, match="7 is not divisible by 4"):
        tp_forward(dev, TINY, _tokens(TINY, 1, 7), make_comm(4), sequence_parallel=True)
    with pytest.raises(ValueError, match="algo must be 'ring'"):
        tp_forward(dev, TINY, _tokens(TINY, 1, 8), make_comm(4), algo="rd", sequence_parallel=True)
    caches = tp_caches(TINY, dev, 1)
    with pytest.raises(ValueError, match="not divisible"):
        tp_forward(dev, TINY, _tokens(TINY, 1, 1), make_comm(4), caches=caches, sequence_parallel=True)
