"""
transformer_lab — the lecture's reference Transformer (lecture 2), in float64 numpy.

A decoder-only Llama-style model, small enough to run in a test and exact enough to compare
against its tensor-parallel version to 1e-10:

    x = embed[tokens]                                   [B, T, d_model]
    for every layer:
        x = x + Attention(RMSNorm(x))                   pre-norm, RoPE, grouped-query attention
        x = x + MLP(RMSNorm(x))                         SwiGLU: (silu(h Wgate) * (h Wup)) Wdown
    logits = RMSNorm(x) @ lm_head                       [B, T, vocab]   (lm_head = embed.T if tied)

Shapes (the letters the lecture uses):
    B batch, T new tokens, L keys so far (cache length), H query heads, G KV groups (n_kv_heads),
    R = H / G query heads per KV group, dh head dimension, F d_ff.
    Wq [d_model, H*dh], Wk / Wv [d_model, G*dh], Wo [H*dh, d_model],
    W_gate / W_up [d_model, F], W_down [F, d_model], embed [vocab, d_model], lm_head [d_model, vocab].

Grouped-query attention: query head i reads the K/V of group i // R (heads of one group are
adjacent). G = H is ordinary multi-head attention, G = 1 is multi-query attention.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# ---------------------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    """Model hyper-parameters. Frozen: derive variants with dataclasses.replace(cfg, ...)."""

    vocab: int
    d_model: int
    n_layers: int
    n_heads: int  # H, query heads
    n_kv_heads: int  # G, key/value groups; H % G == 0
    d_head: int  # dh, even (RoPE rotates pairs of coordinates)
    d_ff: int  # F, SwiGLU hidden size
    max_seq: int  # longest sequence a KV cache is built for
    rope_theta: float = 10000.0
    norm_eps: float = 1e-6
    tie_embeddings: bool = False  # True: lm_head is embed.T (params["lm_head"] is None)

    def __post_init__(self):
        for name in ("vocab", "d_model", "n_layers", "n_heads", "n_kv_heads", "d_head", "d_ff", "max_seq"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"Config.{name} must be a whole number >= 1, got {v!r}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads {self.n_heads} is not a multiple of n_kv_heads {self.n_kv_heads}")
        if self.d_head % 2:
            raise ValueError(f"d_head must be even for RoPE (it rotates pairs), got {self.d_head}")
        if not (self.rope_theta > 0 and self.norm_eps > 0):
            raise ValueError("rope_theta and norm_eps must be > 0")

    @property
    def group_size(self) -> int:
        """R = H / G: query heads that share one K/V group."""
        return self.n_heads // self.n_kv_heads


# Heads (8), d_ff (128) and vocab (256) divide by 1, 2, 4 and 8. G = 4: n = 8 replicates KV.
TINY = Config(vocab=256, d_model=64, n_layers=2, n_heads=8, n_kv_heads=4, d_head=8, d_ff=128, max_seq=64)
# Multi-query attention (G = 1, as in PaLM): every device keeps the one K/V group once n > 1.
TINY_MQA = Config(vocab=256, d_model=64, n_layers=2, n_heads=8, n_kv_heads=1, d_head=8, d_ff=128, max_seq=64)
# Two KV groups, so n = 4 and n = 8 show KV replication; tied head (lm_head = embed.T), 4 layers.
SMALL = Config(vocab=512, d_model=128, n_layers=4, n_heads=16, n_kv_heads=2, d_head=8, d_ff=256, max_seq=128,
               tie_embeddings=True)

PRESETS = {"tiny": TINY, "tiny-mqa": TINY_MQA, "small": SMALL}


# ---------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------
def init_params(cfg: Config, seed: int = 0) -> dict:
    """
    Random float64 parameters, the same for the same (cfg, seed).

    Returns dict(embed [vocab, d_model], final_norm [d_model], lm_head [d_model, vocab] or None
    when tied, layers=[dict(attn_norm, mlp_norm, wq, wk, wv, wo, w_gate, w_up, w_down)]).
    Matrices are scaled by 1/sqrt(fan_in) so activations stay O(1); norm weights are 1 + noise
    so that a forward which forgot one would be caught by the tests.
    """
    rng = np.random.default_rng(seed)
    d, H, G, dh, F = cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.d_head, cfg.d_ff

    def mat(rows, cols):
        return rng.standard_normal((rows, cols)) / np.sqrt(rows)

    def norm():
        return 1.0 + 0.1 * rng.standard_normal(d)

    layers = []
    for _ in range(cfg.n_layers):
        layers.append({
            "attn_norm": norm(), "mlp_norm": norm(),
            "wq": mat(d, H * dh), "wk": mat(d, G * dh), "wv": mat(d, G * dh), "wo": mat(H * dh, d),
            "w_gate": mat(d, F), "w_up": mat(d, F), "w_down": mat(F, d),
        })
    embed = rng.standard_normal((cfg.vocab, d))
    lm_head = None if cfg.tie_embeddings else mat(d, cfg.vocab)
    return {"embed": embed, "final_norm": norm(), "lm_head": lm_head, "layers": layers}


def lm_head_of(params) -> np.ndarray:
    """The output projection [d_model, vocab]: params["lm_head"], or embed.T when tied."""
    return params["lm_head"] if params["lm_head"] is not None else params["embed"].T


# ---------------------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------------------
def rms_norm(x, w, eps):
    """x / sqrt(mean(x², last axis) + eps) * w.  x [..., d], w [d]."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def silu(x):
    """x · sigmoid(x), accurate and finite for large |x|."""
    e = np.exp(-np.abs(x))  # never overflows; exp(x) itself would for x > 709
    return x * np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def rope_angles(positions, d_head, theta):
    """
    Rotary position embedding angles for absolute `positions` [T].
    Returns (cos, sin), each [T, d_head/2]: pair j of position p is rotated by p · theta^(−2j/d_head).
    """
    pos = np.asarray(positions, dtype=np.float64)
    inv_freq = theta ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)
    ang = np.outer(pos, inv_freq)
    return np.cos(ang), np.sin(ang)


def apply_rope(x, cos, sin):
    """
    Rotate x [B, T, heads, dh] by the angles of rope_angles ([T, dh/2]).
    Pairs are (j, j + dh/2) ("rotate half", as Llama implementations do). Because both q and k
    are rotated by their own position, q·k depends only on the distance between them.
    """
    half = x.shape[-1] // 2
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=-1)


def attention_core(q, K, V, pos0):
    """
    Causal grouped-query attention.

    q [B, T, nh, dh]: queries at absolute positions pos0 .. pos0+T−1.
    K, V [B, L, ng, dh]: keys / values at positions 0 .. L−1 (L ≥ pos0 + T with a cache).
    Query head i reads group i // (nh / ng); query t sees keys at positions ≤ pos0 + t.
    Returns [B, T, nh*dh] (heads concatenated, ready for Wo).
    """
    B, T, nh, dh = q.shape
    ng = K.shape[2]
    if nh % ng:
        raise ValueError(f"attention: {nh} query heads cannot share {ng} KV groups evenly")
    R = nh // ng
    # group view: q[b, t, g, r] is query head g*R + r, which reads group g
    qg = q.reshape(B, T, ng, R, dh)
    scores = np.einsum("btgrd,blgd->bgrtl", qg, K) / np.sqrt(dh)
    L = K.shape[1]
    future = np.arange(L)[None, :] > (pos0 + np.arange(T))[:, None]  # [T, L]
    scores = np.where(future, -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)  # stable softmax
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    out = np.einsum("bgrtl,blgd->btgrd", p, V)
    return out.reshape(B, T, nh * dh)


# ---------------------------------------------------------------------------------------
# KV cache
# ---------------------------------------------------------------------------------------
class KVCache:
    """
    Keys and values of every layer for positions [0, length).

    k[layer], v[layer]: [batch, max_len, G, d_head] with G = cfg.n_kv_heads.
    write() stores at positions [length, length+T) without moving `length`; the forward that
    wrote all its layers advances `length` by T once at its end (forward and tp_forward do).
    """

    def __init__(self, cfg: Config, batch: int, max_len: int):
        if batch < 1 or max_len < 1:
            raise ValueError(f"KVCache needs batch >= 1 and max_len >= 1, got {batch}, {max_len}")
        shape = (cfg.n_layers, batch, max_len, cfg.n_kv_heads, cfg.d_head)
        self.k = np.zeros(shape)
        self.v = np.zeros(shape)
        self.max_len = max_len
        self.length = 0

    def write(self, layer, k, v):
        """Store k, v [B, T, G, dh] at positions [length, length+T) of `layer`."""
        T = k.shape[1]
        if k.shape != v.shape or k.shape[0] != self.k.shape[1] or k.shape[2:] != self.k.shape[3:]:
            raise ValueError(f"KVCache.write: k {k.shape} / v {v.shape} do not fit a cache of "
                             f"[B={self.k.shape[1]}, G={self.k.shape[3]}, dh={self.k.shape[4]}]")
        if self.length + T > self.max_len:
            raise ValueError(f"KVCache full: {self.length} + {T} positions > max_len {self.max_len}")
        self.k[layer, :, self.length:self.length + T] = k
        self.v[layer, :, self.length:self.length + T] = v

    def read(self, layer, L):
        """K, V [B, L, G, dh]: positions 0 .. L−1 of `layer`."""
        return self.k[layer, :, :L], self.v[layer, :, :L]


# ---------------------------------------------------------------------------------------
# Forward
# ---------------------------------------------------------------------------------------
def check_tokens(cfg, tokens):
    """tokens as an integer array [B, T] of ids in [0, vocab); ValueError otherwise."""
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"tokens must be an integer array [B, T], got {tokens.dtype} {tokens.shape}")
    if tokens.size and (tokens.min() < 0 or tokens.max() >= cfg.vocab):
        raise ValueError(f"token ids must lie in [0, {cfg.vocab}), got {tokens.min()}..{tokens.max()}")
    return tokens


def attention_block(lp, cfg, x, cos, sin, pos0, cache=None, layer=0):
    """Pre-norm attention sub-layer on one device: returns its output [B, T, d_model] (not added)."""
    return attention_normed(lp, cfg, rms_norm(x, lp["attn_norm"], cfg.norm_eps), cos, sin, pos0, cache, layer)


def attention_normed(lp, cfg, h, cos, sin, pos0, cache=None, layer=0):
    """The attention sub-layer after its norm: h = rms_norm(x) [B, T, d_model] -> output [B, T, d_model]."""
    B, T, _ = h.shape
    dh = cfg.d_head
    nh, ng = lp["wq"].shape[1] // dh, lp["wk"].shape[1] // dh
    q = apply_rope((h @ lp["wq"]).reshape(B, T, nh, dh), cos, sin)
    k = apply_rope((h @ lp["wk"]).reshape(B, T, ng, dh), cos, sin)
    v = (h @ lp["wv"]).reshape(B, T, ng, dh)
    if cache is not None:
        cache.write(layer, k, v)
        k, v = cache.read(layer, pos0 + T)
    return attention_core(q, k, v, pos0) @ lp["wo"]


def mlp_block(lp, cfg, x):
    """Pre-norm SwiGLU sub-layer: (silu(h W_gate) * (h W_up)) W_down, [B, T, d_model] (not added)."""
    return mlp_normed(lp, rms_norm(x, lp["mlp_norm"], cfg.norm_eps))


def mlp_normed(lp, h):
    """The SwiGLU sub-layer after its norm: h = rms_norm(x) [B, T, d_model] -> output [B, T, d_model]."""
    return (silu(h @ lp["w_gate"]) * (h @ lp["w_up"])) @ lp["w_down"]


def forward(params, cfg: Config, tokens, cache: KVCache | None = None):
    """
    Logits [B, T, vocab] for tokens [B, T] (int).

    Without a cache the tokens sit at positions 0..T−1. With a cache they continue it: positions
    cache.length .. cache.length+T−1; their K/V are written and cache.length advances by T.
    """
    tokens = check_tokens(cfg, tokens)
    T = tokens.shape[1]
    pos0 = cache.length if cache is not None else 0
    cos, sin = rope_angles(np.arange(pos0, pos0 + T), cfg.d_head, cfg.rope_theta)
    x = params["embed"][tokens]
    for li, lp in enumerate(params["layers"]):
        x = x + attention_block(lp, cfg, x, cos, sin, pos0, cache, li)
        x = x + mlp_block(lp, cfg, x)
    if cache is not None:
        cache.length += T
    return rms_norm(x, params["final_norm"], cfg.norm_eps) @ lm_head_of(params)
