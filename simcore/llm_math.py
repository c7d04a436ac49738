"""
llm_math — counting a decoder-only Transformer (lecture 1): parameters in matmuls, KV-cache
bytes per token, FLOPs per generated token.

Conventions
    Weights that are read through a matmul count: Wq, Wk, Wv, Wo and the three SwiGLU matrices
    of every layer, plus the lm_head (d_model × vocab). The input embedding is a table lookup
    (no FLOPs, and a decode step reads only B of its rows), so it does not count — except that
    a tied lm_head *is* the embedding, counted once as the lm_head. Norm weights are ignored
    (d_model numbers per norm). total_params() adds the untied embedding for comparison with
    published model sizes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelConfig:
    """A real model's shape. H query heads, G = n_kv_heads K/V heads, d_head per head, d_ff = F."""

    name: str
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_ff: int
    vocab: int
    tied_embeddings: bool = False
    source: str = ""

    def attn_params_per_layer(self) -> int:
        """Wq [D, H·dh] + Wk, Wv [D, G·dh] + Wo [H·dh, D]."""
        D, H, G, dh = self.d_model, self.n_heads, self.n_kv_heads, self.d_head
        return 2 * D * H * dh + 2 * D * G * dh

    def mlp_params_per_layer(self) -> int:
        """W_gate, W_up [D, F] + W_down [F, D] (SwiGLU: three matrices)."""
        return 3 * self.d_model * self.d_ff

    def matmul_params(self) -> int:
        """Parameters multiplied in a forward: every layer's attention + MLP, plus the lm_head."""
        per_layer = self.attn_params_per_layer() + self.mlp_params_per_layer()
        return self.n_layers * per_layer + self.d_model * self.vocab

    def total_params(self) -> int:
        """matmul_params plus the input embedding when it is not tied (norms ignored)."""
        return self.matmul_params() + (0 if self.tied_embeddings else self.vocab * self.d_model)

    def kv_bytes_per_token(self, bytes_per_elem: float = 2.0) -> float:
        """KV cache of one token of one sequence: K and V, every layer, G heads of d_head: 2·L·G·dh·bytes."""
        return 2 * self.n_layers * self.n_kv_heads * self.d_head * bytes_per_elem

    def flops_per_token(self, ctx: int) -> float:
        """
        FLOPs to produce one token that attends to `ctx` keys:
            2 · matmul_params                (one multiply-add per weight)
          + 4 · L · H · dh · ctx             (q·Kᵀ and p·V: 2·H·dh·ctx each, per layer)
        """
        return 2.0 * self.matmul_params() + 4.0 * self.n_layers * self.n_heads * self.d_head * ctx


# Llama 2 7B — Hugging Face config.json (meta-llama/Llama-2-7b-hf): hidden 4096, 32 layers,
# 32 heads, 32 KV heads (no GQA), intermediate 11008, vocab 32000.
LLAMA2_7B = ModelConfig("Llama-2 7B", 4096, 32, 32, 32, 128, 11008, 32000,
                        source="HF config.json, meta-llama/Llama-2-7b-hf")
# Llama 2 70B — HF config.json: hidden 8192, 80 layers, 64 heads, 8 KV heads, 28672, vocab 32000.
LLAMA2_70B = ModelConfig("Llama-2 70B", 8192, 80, 64, 8, 128, 28672, 32000,
                         source="HF config.json, meta-llama/Llama-2-70b-hf")
# Llama 3 8B — Meta model card / config: 4096, 32 layers, 32 heads, 8 KV, 14336, vocab 128256.
LLAMA3_8B = ModelConfig("Llama-3 8B", 4096, 32, 32, 8, 128, 14336, 128256,
                        source="Meta Llama 3 model card; HF config.json, meta-llama/Meta-Llama-3-8B")
# Llama 3 70B — HF config.json: as Llama 2 70B with vocab 128256.
LLAMA3_70B = ModelConfig("Llama-3 70B", 8192, 80, 64, 8, 128, 28672, 128256,
                         source="HF config.json, meta-llama/Meta-Llama-3-70B")
# Llama 3.1 405B — Meta model card: 16384, 126 layers, 128 heads, 8 KV, 53248, vocab 128256.
LLAMA31_405B = ModelConfig("Llama-3.1 405B", 16384, 126, 128, 8, 128, 53248, 128256,
                           source="Meta Llama 3.1 model card; HF config.json, meta-llama/Llama-3.1-405B")
# PaLM 540B — PaLM paper (Chowdhery et al. 2022), table 1: d_model 18432, 118 layers, 48 heads,
# d_head 256, multi-query (1 K/V head), d_ff = 4·d_model = 73728, 256k SentencePiece vocabulary,
# input and output embeddings shared.
PALM_540B = ModelConfig("PaLM 540B", 18432, 118, 48, 1, 256, 73728, 256000, tied_embeddings=True,
                        source="Chowdhery et al. 2022, PaLM, table 1")

MODELS = {
    "llama2-7b": LLAMA2_7B, "llama2-70b": LLAMA2_70B, "llama3-8b": LLAMA3_8B,
    "llama3-70b": LLAMA3_70B, "llama3.1-405b": LLAMA31_405B, "palm-540b": PALM_540B,
}
