"""Megatron tensor parallelism on virtual devices: same logits as one device, and the trace it leaves."""

import dataclasses

import numpy as np
import pytest

from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.sharding import make_comm, unshard
from simcore.tensor_parallel import (MATRICES, kv_group_of_device, kv_replicas, shard_params_tp, tp_caches, tp_forward,
                                     tp_layout, tp_share, weight_slices)
from simcore.transformer_lab import SMALL, TINY, TINY_MQA, KVCache, forward, init_params

from closed_forms import REFERENCE_COUNTS

CONFIGS = {
    "tiny": TINY,  # G = 4: n = 8 > G
    "mqa": TINY_MQA,  # G = 1: KV replicated on every device
    "small-tied": SMALL,  # G = 2, tied lm_head
    "mha-tied": dataclasses.replace(TINY, n_kv_heads=8, tie_embeddings=True),
}


def _tokens(cfg, B, T, seed=5):
    return np.random.default_rng(seed).integers(0, cfg.vocab, size=(B, T))


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_tp_logits_equal_single_device(name, n):
    cfg = CONFIGS[name]
    p = init_params(cfg, seed=1)
    toks = _tokens(cfg, 2, 7)
    ref = forward(p, cfg, toks)
    out = tp_forward(shard_params_tp(p, cfg, n), cfg, toks, make_comm(n))
    assert out.shape == ref.shape
    assert np.max(np.abs(out - ref)) < 1e-10


@pytest.mark.parametrize("algo", ALLREDUCE_ALGOS)
def test_tp_logits_with_every_allreduce_algorithm(algo):
    p = init_params(TINY)
    toks = _tokens(TINY, 1, 5)
    out = tp_forward(shard_params_tp(p, TINY, 8), TINY, toks, make_comm(8), algo=algo)
    assert np.max(np.abs(out - forward(p, TINY, toks))) < 1e-10


def test_kv_groups_and_replication():
    cfg = dataclasses.replace(TINY, n_kv_heads=2)  # R = 4 query heads per group
    assert [kv_group_of_device(cfg, 1, 0)] == [[0, 1]]
    assert [kv_group_of_device(cfg, 2, d) for d in range(2)] == [[0], [1]]
    assert [kv_group_of_device(cfg, 8, d) for d in range(8)] == [[0]] * 4 + [[1]] * 4
    dev = shard_params_tp(init_params(cfg), cfg, 8)
    assert [p["kv_groups"] for p in dev] == [[0]] * 4 + [[1]] * 4
    # replicated: devices 0..3 hold the very same Wk columns
    assert all(np.array_equal(dev[0]["layers"][0]["wk"], dev[d]["layers"][0]["wk"]) for d in range(4))
    assert not np.array_equal(dev[0]["layers"][0]["wk"], dev[4]["layers"][0]["wk"])


def test_heads_straddling_groups_check_is_exact():
    cfg = dataclasses.replace(TINY, n_heads=12, n_kv_heads=4, d_ff=96, vocab=96)  # R = 3
    p = init_params(cfg)
    toks = _tokens(cfg, 1, 4)
    for n in (1, 2, 4, 12):  # heads per device 12, 6, 3, 1: whole groups or inside one group
        out = tp_forward(shard_params_tp(p, cfg, n), cfg, toks, make_comm(n))
        assert np.max(np.abs(out - forward(p, cfg, toks))) < 1e-10
    with pytest.raises(ValueError, match="straddle"):
        shard_params_tp(p, cfg, 3)  # 4 heads per device: 3 of one group and 1 of the next


@pytest.mark.parametrize("name,n", [("tiny", 2), ("tiny", 8), ("mqa", 4), ("small-tied", 8)])
def test_prefill_then_cached_decode_with_tp_caches(name, n):
    cfg = CONFIGS[name]
    p = init_params(cfg, seed=4)
    B, T0, steps = 2, 6, 4
    toks = _tokens(cfg, B, T0 + steps)
    ref = forward(p, cfg, toks)
    dev = shard_params_tp(p, cfg, n)
    caches = tp_caches(cfg, dev, B)
    comm = make_comm(n)
    got = [tp_forward(dev, cfg, toks[:, :T0], comm, caches)]
    for s in range(steps):
        got.append(tp_forward(dev, cfg, toks[:, T0 + s:T0 + s + 1], comm, caches))
    assert all(c.length == T0 + steps for c in caches)
    got = np.concatenate(got, axis=1)
    for t in range(T0 + steps):
        assert np.max(np.abs(got[:, t] - ref[:, t])) < 1e-10, t


def test_tp_caches_hold_only_own_groups():
    dev = shard_params_tp(init_params(TINY), TINY, 2)
    caches = tp_caches(TINY, dev, batch=3)
    assert all(isinstance(c, KVCache) for c in caches)
    assert [c.k.shape for c in caches] == [(TINY.n_layers, 3, TINY.max_seq, 2, TINY.d_head)] * 2


def test_padding_off_raises_naming_sizes_on_gives_single_device_logits():
    cfg = dataclasses.replace(TINY, vocab=250)
    p = init_params(cfg, seed=2)
    toks = _tokens(cfg, 2, 5)
    ref = forward(p, cfg, toks)
    for n in (4, 8):
        with pytest.raises(ValueError, match=rf"vocab 250 .*{n} devices"):
            shard_params_tp(p, cfg, n)
        dev = shard_params_tp(p, cfg, n, pad_vocab=True)
        assert sum(d["lm_head"].shape[1] for d in dev) == -(-250 // n) * n
        assert np.all(dev[-1]["lm_head"][:, -1] == 0)  # a pad column
        out = tp_forward(dev, cfg, toks, make_comm(n))
        assert out.shape == ref.shape and np.max(np.abs(out - ref)) < 1e-10
    # divisible: padding changes nothing
    dev = shard_params_tp(p, cfg, 2, pad_vocab=True)
    assert dev[0]["lm_head"].shape[1] == 125


def test_tied_head_is_padded_too():
    cfg = dataclasses.replace(SMALL, vocab=509)
    p = init_params(cfg)
    toks = _tokens(cfg, 1, 4)
    out = tp_forward(shard_params_tp(p, cfg, 4, pad_vocab=True), cfg, toks, make_comm(4))
    assert np.max(np.abs(out - forward(p, cfg, toks))) < 1e-10


@pytest.mark.parametrize("field,value", [("d_ff", 100), ("n_heads", 12)])
def test_other_indivisible_sizes_raise(field, value):
    kw = {field: value}
    if field == "n_heads":
        kw["n_kv_heads"] = 4
    cfg = dataclasses.replace(TINY, **kw)
    with pytest.raises(ValueError, match=rf"{value} .*8 devices"):
        shard_params_tp(init_params(cfg), cfg, 8)


def test_gather_logits_false_returns_local_vocab_shards():
    p = init_params(TINY)
    toks = _tokens(TINY, 2, 3)
    comm = make_comm(4)
    local = tp_forward(shard_params_tp(p, TINY, 4), TINY, toks, comm, gather_logits=False)
    assert [s.shape for s in local] == [(2, 3, TINY.vocab // 4)] * 4
    assert np.max(np.abs(unshard(local, 2) - forward(p, TINY, toks))) < 1e-10
    assert len(comm.trace.collectives) == 2 * TINY.n_layers  # no gather


@pytest.mark.parametrize("algo", list(ALLREDUCE_ALGOS))
@pytest.mark.parametrize("n", [2, 4, 8])
def test_trace_of_a_forward(n, algo):
    cfg = SMALL
    comm = make_comm(n)
    tp_forward(shard_params_tp(init_params(cfg), cfg, n), cfg, _tokens(cfg, 1, 3), comm, algo=algo)
    colls = comm.trace.collectives
    L = cfg.n_layers
    assert len(colls) == 2 * L + 1
    want = [f"layer {i} {part}" for i in range(L) for part in ("attn", "mlp")] + ["logits"]
    assert [c.label for c in colls] == want
    assert [c.op for c in colls] == ["all-reduce"] * (2 * L) + ["all-gather"]
    msgs = comm.trace.messages
    for c in colls[:-1]:
        assert c.last_msg - c.first_msg == REFERENCE_COUNTS["all-reduce", algo](n)
    assert colls[-1].last_msg - colls[-1].first_msg == n * (n - 1)
    if algo == "ring":
        assert all(m.dst == (m.src + 1) % n for m in msgs)  # every ring message goes to the neighbour
    assert all(m.label == colls[m.coll].label for m in msgs)
    # collectives follow each other on every device: what a device sends in the next starts no
    # earlier than its last message of the previous left or landed (an algorithm whose devices
    # finish at different times, e.g. a root sending the sum out one by one, lets the early ones go on)
    for a, b in zip(colls, colls[1:]):
        done = {}
        for m in msgs[a.first_msg:a.last_msg]:
            for d in (m.src, m.dst):
                done[d] = max(done.get(d, -1.0), m.t_end)
        assert all(m.t_start >= done.get(m.src, -1.0) - 1e-15 for m in msgs[b.first_msg:b.last_msg]), (a.label, b.label)


def test_n1_forward_records_collectives_without_messages():
    comm = make_comm(1)
    tp_forward(shard_params_tp(init_params(TINY), TINY, 1), TINY, _tokens(TINY, 1, 2), comm)
    assert len(comm.trace.collectives) == 2 * TINY.n_layers + 1 and len(comm.trace.messages) == 0


def test_comm_with_wrong_device_count_raises():
    dev = shard_params_tp(init_params(TINY), TINY, 4)
    with pytest.raises(ValueError, match="4"):
        tp_forward(dev, TINY, _tokens(TINY, 1, 2), make_comm(2))


# ---------------------------------------------------------------------------------------
# weight_slices: what the app draws is what shard_params_tp cut
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["tiny", "small-tied"])
@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_weight_slices_describe_the_shards(name, n):
    cfg = CONFIGS[name]
    p = init_params(cfg)
    dev = shard_params_tp(p, cfg, n)
    full = dict(p["layers"][0], lm_head=p["lm_head"] if p["lm_head"] is not None else p["embed"].T,
                embed=p["embed"], final_norm=p["final_norm"])
    for m in MATRICES:
        slices = weight_slices(cfg, n, m)
        assert len(slices) == n
        for d, ws in enumerate(slices):
            held = dev[d][m] if m in ("lm_head", "embed", "final_norm") else dev[d]["layers"][0][m]
            assert ws.shape == full[m].shape
            if ws.axis is None:
                assert held is full[m] or np.array_equal(held, full[m])
            else:
                assert np.array_equal(held, np.take(full[m], ws.index, axis=ws.axis))
        if slices[0].axis is not None:
            covered = np.unique(np.concatenate([ws.index for ws in slices]))
            assert np.array_equal(covered, np.arange(full[m].shape[slices[0].axis]))


def test_weight_slices_flag_kv_replication_exactly_when_n_exceeds_groups():
    G = TINY.n_kv_heads
    for n in (1, 2, 4, 8):
        for m in ("wk", "wv"):
            assert all(ws.replicated == (n > G) for ws in weight_slices(TINY, n, m))
        assert not any(ws.replicated for ws in weight_slices(TINY, n, "wq"))
        assert all(ws.replicated == (n > 1) for ws in weight_slices(TINY, n, "attn_norm"))


def test_weight_slices_report_vocab_padding():
    cfg = dataclasses.replace(TINY, vocab=250)
    slices = weight_slices(cfg, 8, "lm_head", pad_vocab=True)
    assert [ws.padding for ws in slices] == [0] * 7 + [6]
    assert sum(len(ws.index) for ws in slices) == 250
    assert tp_layout(cfg, 8, pad_vocab=True)[0].vocab_padded == 256
    with pytest.raises(ValueError, match="unknown matrix"):
        weight_slices(TINY, 2, "w_nope")


@pytest.mark.parametrize("cfg, n, share", [(TINY, 1, (8, 4, 1)), (TINY, 2, (4, 2, 1)), (TINY, 4, (2, 1, 1)),
                                           (TINY, 8, (1, 1, 2)), (TINY_MQA, 4, (2, 1, 4))])
def test_tp_share_counts_heads_groups_and_replicas(cfg, n, share):
    # H = 8 query heads, G = 4 (TINY) or 1 (multi-query) KV groups: H/n heads per device; G/n groups
    # while n <= G, else one group held by n/G devices (Ainslie et al. 2023, GQA; vLLM's replicas)
    assert (cfg.n_heads, cfg.n_kv_heads) == (8, 4 if cfg is TINY else 1)
    assert tuple(tp_share(cfg, n)) == share


@pytest.mark.parametrize("name", CONFIGS)
def test_the_cost_models_kv_replicas_are_the_layouts(name):
    cfg = CONFIGS[name]
    for n in range(1, cfg.n_heads + 1):
        try:
            share = tp_share(cfg, n)
        except ValueError:
            continue
        assert kv_replicas(cfg.n_kv_heads, n) == share.kv_replicas
        assert kv_replicas(cfg.n_kv_heads, np.array([n]))[0] == share.kv_replicas


@pytest.mark.parametrize("n", [2, 4])
def test_the_mpi_rank_forward_runs_the_same_layers_on_threads(n):
    """mpi.tp_forward_rank without MPI: n threads, the all-reduce and the all-gather done through a
    barrier. The logits must be the single-device model's (and the layer body is tp_forward's)."""
    import threading

    from simcore.mpi import tp_forward_rank

    cfg = TINY
    p = init_params(cfg, seed=3)
    toks = _tokens(cfg, 1, 6)
    dev = shard_params_tp(p, cfg, n)
    barrier, box, out = threading.Barrier(n), [None] * n, [None] * n

    def exchange(r, x, combine):
        barrier.wait()
        box[r] = x
        barrier.wait()
        result = combine(list(box))
        barrier.wait()
        return result

    def rank(r):
        out[r] = tp_forward_rank(dev[r], cfg, toks, lambda x: exchange(r, x, lambda xs: np.sum(xs, axis=0)),
                                 lambda x: exchange(r, x, lambda xs: np.concatenate(xs, axis=2)))

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    ref = forward(p, cfg, toks)
    for r in range(n):
        assert out[r] is not None and out[r].shape == ref.shape
        assert np.max(np.abs(out[r] - ref)) < 1e-10
