"""The reference Transformer: building blocks against their definitions, causality, KV cache."""

import dataclasses

import numpy as np
import pytest

from simcore.transformer_lab import (PRESETS, SMALL, TINY, TINY_MQA, KVCache, apply_rope, attention_core,
                                     forward, init_params, rms_norm, rope_angles, silu)


def _tokens(cfg, B, T, seed=1):
    return np.random.default_rng(seed).integers(0, cfg.vocab, size=(B, T))


def test_presets_divide_by_1_2_4_8_and_use_gqa():
    assert TINY.n_kv_heads < TINY.n_heads
    for cfg in PRESETS.values():
        for n in (1, 2, 4, 8):
            assert cfg.n_heads % n == 0 and cfg.d_ff % n == 0 and cfg.vocab % n == 0
    assert TINY_MQA.n_kv_heads == 1 and SMALL.tie_embeddings


def test_config_is_frozen_and_replace_works():
    cfg = dataclasses.replace(TINY, n_kv_heads=2)
    assert cfg.n_kv_heads == 2 and cfg.group_size == 4 and TINY.n_kv_heads == 4
    with pytest.raises(dataclasses.FrozenInstanceError):
        TINY.vocab = 3


@pytest.mark.parametrize("bad", [dict(n_kv_heads=3), dict(d_head=7), dict(vocab=0), dict(n_layers=1.5)])
def test_config_rejects_inconsistent_shapes(bad):
    with pytest.raises(ValueError):
        dataclasses.replace(TINY, **bad)


def test_init_params_shapes_and_determinism():
    p = init_params(TINY, seed=3)
    H, G, dh, D, F = TINY.n_heads, TINY.n_kv_heads, TINY.d_head, TINY.d_model, TINY.d_ff
    lp = p["layers"][0]
    assert len(p["layers"]) == TINY.n_layers
    assert p["embed"].shape == (TINY.vocab, D) and p["lm_head"].shape == (D, TINY.vocab)
    assert lp["wq"].shape == (D, H * dh) and lp["wk"].shape == (D, G * dh) and lp["wo"].shape == (H * dh, D)
    assert lp["w_gate"].shape == (D, F) and lp["w_down"].shape == (F, D)
    assert p["embed"].dtype == np.float64
    q = init_params(TINY, seed=3)
    assert np.array_equal(p["layers"][1]["w_up"], q["layers"][1]["w_up"])
    assert not np.array_equal(p["embed"], init_params(TINY, seed=4)["embed"])
    assert init_params(SMALL)["lm_head"] is None


def test_rms_norm_and_silu_match_their_definitions():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 5, 16)), rng.standard_normal(16)
    want = x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-5) * w
    assert np.allclose(rms_norm(x, w, 1e-5), want, rtol=1e-13)
    z = np.linspace(-30, 30, 101)
    assert np.allclose(silu(z), z / (1 + np.exp(-z)), rtol=1e-12, atol=1e-300)
    assert np.all(np.isfinite(silu(np.array([-1e4, 1e4]))))


def test_rope_keeps_norms_and_depends_only_on_distance():
    dh, theta = 8, 10000.0
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((1, 1, 1, dh)), rng.standard_normal((1, 1, 1, dh))

    def rot(x, p):
        return apply_rope(x, *rope_angles([p], dh, theta))[0, 0, 0]

    assert np.isclose(np.linalg.norm(rot(q, 17)), np.linalg.norm(q))
    assert np.isclose(rot(q, 5) @ rot(k, 2), rot(q, 33) @ rot(k, 30))  # distance 3 both times
    assert not np.isclose(rot(q, 5) @ rot(k, 2), rot(q, 5) @ rot(k, 4))
    assert np.allclose(rot(q, 0), q[0, 0, 0])  # position 0 is not rotated


def _naive_attention(q, K, V, pos0):
    """One query head at a time, with explicit loops: the definition attention_core must meet."""
    B, T, nh, dh = q.shape
    L, ng = K.shape[1], K.shape[2]
    out = np.zeros((B, T, nh, dh))
    for b in range(B):
        for t in range(T):
            for i in range(nh):
                g = i // (nh // ng)
                keys = range(pos0 + t + 1)
                s = np.array([q[b, t, i] @ K[b, j, g] for j in keys]) / np.sqrt(dh)
                p = np.exp(s - s.max())
                p /= p.sum()
                out[b, t, i] = sum(p[j] * V[b, j, g] for j in keys)
            assert pos0 + t < L
    return out.reshape(B, T, nh * dh)


@pytest.mark.parametrize("nh,ng,pos0", [(8, 8, 0), (8, 2, 0), (8, 1, 3), (4, 2, 5)])
def test_attention_core_equals_per_head_definition(nh, ng, pos0):
    rng = np.random.default_rng(nh * 10 + ng)
    B, T, dh = 2, 3, 4
    q = rng.standard_normal((B, T, nh, dh))
    K, V = rng.standard_normal((2, B, pos0 + T, ng, dh))
    assert np.allclose(attention_core(q, K, V, pos0), _naive_attention(q, K, V, pos0), rtol=1e-12, atol=1e-14)


def test_attention_core_rejects_uneven_groups():
    with pytest.raises(ValueError):
        attention_core(np.zeros((1, 1, 3, 4)), np.zeros((1, 1, 2, 4)), np.zeros((1, 1, 2, 4)), 0)


@pytest.mark.parametrize("cfg", [TINY, TINY_MQA, SMALL], ids=["tiny", "mqa", "small-tied"])
def test_forward_is_causal(cfg):
    p = init_params(cfg)
    toks = _tokens(cfg, 2, 8)
    out = forward(p, cfg, toks)
    assert out.shape == (2, 8, cfg.vocab)
    changed = toks.copy()
    changed[:, 5] = (changed[:, 5] + 1) % cfg.vocab
    out2 = forward(p, cfg, changed)
    assert np.array_equal(out[:, :5], out2[:, :5])
    assert not np.allclose(out[:, 5:], out2[:, 5:])


def test_tied_head_uses_the_embedding():
    cfg = dataclasses.replace(TINY, tie_embeddings=True)
    p = init_params(cfg)
    toks = _tokens(cfg, 1, 4)
    untied = dict(p, lm_head=p["embed"].T.copy())
    # x @ E.T and x @ E.T.copy() may take different BLAS kernels: equal to rounding, not bit for bit
    assert np.max(np.abs(forward(p, cfg, toks) - forward(untied, cfg, toks))) < 1e-10
    p["embed"][:, 0] += 1.0  # the head moves with the embedding
    assert not np.allclose(forward(p, cfg, toks), forward(untied, cfg, toks))


@pytest.mark.parametrize("cfg", [TINY, TINY_MQA, SMALL], ids=["tiny", "mqa", "small-tied"])
def test_prefill_then_cached_decode_equals_uncached_forward(cfg):
    p = init_params(cfg, seed=2)
    B, T0, steps = 2, 5, 4
    toks = _tokens(cfg, B, T0 + steps)
    ref = forward(p, cfg, toks)
    cache = KVCache(cfg, B, max_len=cfg.max_seq)
    got = [forward(p, cfg, toks[:, :T0], cache)]
    assert cache.length == T0
    for s in range(steps):
        got.append(forward(p, cfg, toks[:, T0 + s:T0 + s + 1], cache))
        assert cache.length == T0 + s + 1
    assert np.max(np.abs(np.concatenate(got, axis=1) - ref)) < 1e-10


def test_kv_cache_write_read_and_overflow():
    cfg = TINY
    cache = KVCache(cfg, batch=2, max_len=4)
    k = np.ones((2, 3, cfg.n_kv_heads, cfg.d_head))
    cache.write(0, k, 2 * k)
    assert cache.length == 0  # write does not advance: the forward does, after every layer
    K, V = cache.read(0, 3)
    assert K.shape == (2, 3, cfg.n_kv_heads, cfg.d_head) and np.all(V == 2)
    cache.length = 3
    with pytest.raises(ValueError, match="max_len 4"):
        cache.write(0, k, k)
    with pytest.raises(ValueError):
        cache.write(0, np.ones((2, 1, cfg.n_kv_heads + 1, cfg.d_head)), np.ones((2, 1, cfg.n_kv_heads + 1, 8)))


def test_forward_rejects_bad_tokens():
    p = init_params(TINY)
    with pytest.raises(ValueError, match="256"):
        forward(p, TINY, np.array([[1, 256]]))
    with pytest.raises(ValueError):
        forward(p, TINY, np.array([1, 2]))
