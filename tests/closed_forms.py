"""
Closed forms of the collectives, written from the literature — the tests' reference, independent
of simcore (never call t_formula here).

  Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication Operations in MPICH"
  (IJHPCA 2005): ring all-gather / reduce-scatter (n−1)(α + S/(nβ)), ring all-reduce twice that;
  recursive doubling lg(n)(α + S/β), and ⌊lg n⌋ + 2 rounds when n is not a power of two.
  One-shot and two-shot all-reduce as TensorRT-LLM's and vLLM's custom all-reduce run them: one
  phase (everyone sends to everyone at once) or two (reduce-scatter to chunk owners, then
  all-gather from them); latency paid once per phase, the bytes streamed through each port:
  α + (n−1)S/β and 2α + 2(n−1)S/(nβ); one-shot all-gather / reduce-scatter α + (n−1)S/(nβ).
  In-network (NCCL's NVLS): n chunks stream up, the switch adds, multicasts down — α up, α down
  and n + 1 chunk times through the busiest port: 2α + (n+1)S/(nβ).
  All-to-all, S = one device's buffer of n blocks (nccl-tests' alltoall size): pairwise exchange,
  n−1 rounds of one block each way (Thakur, Rabenseifner & Gropp 2005, §4.5, MPICH's long-message
  MPI_Alltoall: (p−1)α + nβ, their n the bytes a process sends) (n−1)(α + S/(nβ)); direct, every
  block issued at once (NCCL's grouped send/recv), α once and (n−1)S/n through the send port:
  α + (n−1)S/(nβ).
S: the full array's bytes (nccl-tests' size); α: latency per message; β: bytes/s per port and
direction; n: devices.
Also the tensor-parallel degrees Megatron-LM accepts (megatron_degrees), for the cost-model and
latency-view tests.
"""

import math


def reference_time(op, algo, n, S, a, beta):
    """Closed forms from the literature (module docstring), independent of simcore."""
    if n == 1:
        return 0.0
    lg = math.log2
    forms = {
        ("all-gather", "ring"): (n - 1) * (a + S / (n * beta)),
        ("reduce-scatter", "ring"): (n - 1) * (a + S / (n * beta)),
        ("all-gather", "direct"): a + (n - 1) * S / (n * beta),
        ("reduce-scatter", "direct"): a + (n - 1) * S / (n * beta),
        ("all-reduce", "ring"): 2 * (n - 1) * (a + S / (n * beta)),
        ("all-reduce", "rd"): ((lg(n) if n & (n - 1) == 0 else math.floor(lg(n)) + 2)) * (a + S / beta),
        ("all-reduce", "direct"): a + (n - 1) * S / beta,
        ("all-reduce", "two-shot"): 2 * a + 2 * (n - 1) * S / (n * beta),
        ("all-reduce", "innet"): 2 * a + (n + 1) * S / (n * beta),
        ("all-to-all", "direct"): a + (n - 1) * S / (n * beta),
        ("all-to-all", "pairwise"): (n - 1) * (a + S / (n * beta)),
    }
    if (op, algo) not in forms:  # a newly registered algorithm: its reference is written here, by hand
        raise AssertionError(f"no literature closed form for {op} {algo!r}: write it in tests/closed_forms.py "
                             f"(reference_time and REFERENCE_COUNTS)")
    return forms[(op, algo)]


REFERENCE_COUNTS = {  # messages per collective (n >= 2)
    ("all-gather", "ring"): lambda n: n * (n - 1),
    ("reduce-scatter", "ring"): lambda n: n * (n - 1),
    ("all-gather", "direct"): lambda n: n * (n - 1),
    ("reduce-scatter", "direct"): lambda n: n * (n - 1),
    ("all-reduce", "ring"): lambda n: 2 * n * (n - 1),
    ("all-reduce", "rd"): lambda n: (p := 1 << (n.bit_length() - 1)) * int(math.log2(p)) + 2 * (n - p),
    ("all-reduce", "direct"): lambda n: n * (n - 1),
    ("all-reduce", "two-shot"): lambda n: 2 * n * (n - 1),
    ("all-reduce", "innet"): lambda n: 2 * n * n,  # n up and n down per chunk, n chunks
    ("all-to-all", "direct"): lambda n: n * (n - 1),  # every block but the own one, once
    ("all-to-all", "pairwise"): lambda n: n * (n - 1),
}


# Per-collective base latency: NCCL's tuning model starts every collective's latency at
# baseLat[algorithm][protocol] before adding the per-step hardware latency
# (NVIDIA/nccl src/graph/tuning.cc, baseLatencies: Ring {LL 6.6, LL128 14.0, Simple 8.4} µs).
NCCL_RING_LL128_BASE = 14.0e-6


def reference_with_base(op, algo, n, S, a, beta, base):
    """One collective call on a switch whose calls pay `base` once: base + the closed form."""
    return 0.0 if n == 1 else base + reference_time(op, algo, n, S, a, beta)


def reference_hier_allreduce(P, N, S, intra, inter, base=0.0):
    """
    Hierarchical all-reduce over N nodes of P GPUs (Horovod's hierarchical all-reduce, Sergeev &
    Del Balso 2018: reduce-scatter in the node, all-reduce across nodes, all-gather in the node,
    three collective calls), each phase a ring (Thakur, Rabenseifner & Gropp 2005).
    intra, inter: (α, β) pairs.
    """
    (a_f, b_f), (a_i, b_i) = intra, inter
    n = P * N
    calls = (2 if P > 1 else 0) + (1 if N > 1 else 0)
    return calls * base + 2 * (P - 1) * (a_f + S / (P * b_f)) + 2 * (N - 1) * (a_i + S / (n * b_i))


def megatron_degrees(model, n_max):
    """
    Megatron-LM's divisibility rules, written out here independently of simcore: n divides the
    query heads (validate_args: num_attention_heads % tensor_model_parallel_size == 0) and d_ff
    (ColumnParallelLinear divides its output dimension), and either divides the KV heads
    (num_query_groups % tp == 0) or is a multiple of them (vLLM's KV-head replication).
    """
    H, G, F = model.n_heads, model.n_kv_heads, model.d_ff
    return [n for n in range(1, n_max + 1) if H % n == 0 and F % n == 0 and (G % n == 0 or n % G == 0)]
