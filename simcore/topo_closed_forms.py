"""
topo_closed_forms — closed forms of collectives on machines that are more than one switch:
several nodes joined by a network, and TPU tori (t_ring_nodes, t_hier, nodes_coefficients,
t_torus, …), and the plan's terms of each (ring_nodes_terms, hier_terms, torus_terms: the form
term by term as the formula panel shows it, simcore.plan.Term). Qt-free and light: the plans
(simcore.plan), the cost model and the calibration read them without loading the simulations, which are
simcore.topo_collectives (each one's simulated time equals its closed form here to 1e-9,
tests/test_topo_collectives.py).

Notation: S the full array's bytes (nccl-tests' "size"), P GPUs per node, N nodes, n = N·P;
a link is (α seconds of latency per message, β bytes/s per port and direction); intra is the
link inside a node (NVLink), inter each GPU's own NIC (InfiniBand). Every time is for idle ports.

Across nodes, two all-reduce algorithms here (NCCL's Tree, a chain in each node and a double binary
tree across them, is the third: simcore.tree_allreduce, with its own closed form t_tree):

* hier — hierarchical (Horovod's HOROVOD_HIERARCHICAL_ALLREDUCE: ring reduce-scatter inside
  the node, all-reduce across nodes among the GPUs with the same local index — each on its own
  NIC — then ring all-gather inside the node; Sergeev & Del Balso 2018). With the ring phases of
  Thakur, Rabenseifner & Gropp 2005:

      t = 2(P−1)·(α_f + S/(P·β_f)) + 2(N−1)·(α_i + S/(n·β_i))      (t_hier: three calls, additive)

  NCCL pipelines these phases in one call: the buffer cut into C chunks, chunk c+1 reduced in
  the node while chunk c crosses the network (t_hier_pipelined, what the registry's "hier" runs
  and is timed by; C from hier_pipeline_chunks). On a GPU machine tuned by NCCL's model the
  registry's hier is NCCL's NVLS Tree (simcore.nccl_tuning.nvls_tree): its time is NCCL's, and
  the same pipelined simulation runs with the links nccl_tuning.sim_links gives, with which
  t_hier_pipelined equals that time.

* ring — NCCL's rings across nodes, one channel per NIC (C = P channels). Channel c runs a
  ring through every GPU; inside node m it visits local GPUs c, c+1, …, c−1 and leaves from
  GPU c−1 through that GPU's NIC into GPU c of node m+1. So in every step each GPU sends one
  chunk of S/(P·n) bytes through its NIC and P−1 chunks over NVLink, and receives the same. The
  steps run in lockstep (a GPU starts step k+1 when all its step-k chunks have landed), so one
  step lasts max(NVLink port, NIC port) and

      t = K · max(α_f + (P−1)·S/(P·n·β_f),  α_i + S/(P·n·β_i))
      K = 2(n−1) for all-reduce, n−1 for all-gather and reduce-scatter.

  Its bus bandwidth (nccl-tests: algbw · 2(n−1)/n) at large S is min(P·β_i, P/(P−1)·β_f): the
  NICs' sum, as NVIDIA's engineers say a two-node ring run should show ("46–48 GB/s per NIC"
  for NDR 400, NVIDIA/nccl-tests#290; "192 GB/s AllReduce BusBW" for 8×200 Gb/s on DGX A100,
  NVIDIA/nccl#812). For small S the lockstep pays α_i every step, where real NCCL pays it on
  about 2N of its steps (NCCL src/graph/tuning.cc, nInterSteps): pessimistic in latency.

On a torus (TPU ICI, wraparound links to ±1 on every axis, each direction its own port), a
bidirectional ring per axis ("How to Scale Your Model", sharding chapter: "pass its shard
around … in both directions": ⌈N/2⌉ hops instead of N−1, half the bytes per direction):

  all-gather on one axis of N chips (each holds S/N):
      t = ⌊N/2⌋·α + (N−1)·S/(2·N·β)        (even N: the farthest shard goes half each way)
  without a wraparound link (a line, e.g. a TPU v5e axis shorter than 16) the farthest shard
  needs N−1 hops: t = (N−1)·(α + S/(N·β))
  reduce-scatter: the same as all-gather (every message runs backwards); all-reduce = both.

  Over several axes the array is cut into one part per axis and part j visits the axes starting
  at axis j, so at every phase each axis carries one part (the book's
  bytes / (W_ici · n_axes); W_ici = 2β is its bidirectional bandwidth). On a torus whose axes
  are all the same length the parts never meet on a link and

      t_AG = Σ_{p=0}^{k−1} t_axis(N, S_p),  S_p = (S/k) · N^{p+1} / N^k

  (S_p the bytes the part holds after phase p). Axes of different lengths: the parts' phases
  overlap unevenly; the formula is then the slowest part's own time (a lower bound).
"""

from __future__ import annotations

import math

TOPO_OPS = ("all-reduce", "all-gather", "reduce-scatter")


def _check(op, S):
    if op not in TOPO_OPS:
        raise ValueError(f"unknown collective {op!r}; choose one of {', '.join(TOPO_OPS)}")
    if not (math.isfinite(S) and S >= 0):
        raise ValueError(f"message size must be a finite number of bytes >= 0, got {S!r}")


def _check_nodes(P, N):
    if int(P) != P or int(N) != N or P < 1 or N < 1:
        raise ValueError(f"need whole numbers of GPUs per node and nodes >= 1, got {P!r}, {N!r}")


# ---------------------------------------------------------------------------------------
# Several nodes
# ---------------------------------------------------------------------------------------
def ring_steps(op, n):
    """K: the ring's steps, 2(n−1) for all-reduce and n−1 for all-gather / reduce-scatter."""
    return 2 * (n - 1) if op == "all-reduce" else n - 1


def t_ring_nodes(op, P, N, S, intra, inter, base=0.0):
    """NCCL-style ring over N nodes of P GPUs, P channels each on its own NIC (seconds); one
    collective call, so base (the per-collective base latency) once."""
    _check(op, S)
    _check_nodes(P, N)
    n = P * N
    if n == 1:
        return 0.0
    if N == 1:  # no NIC on the way: the plain ring
        K = ring_steps(op, n)
        return base + K * (intra.alpha + S / (n * intra.bw))
    b = S / (P * n)  # one channel's chunk
    step = max(intra.alpha + (P - 1) * b / intra.bw, inter.alpha + b / inter.bw)
    return base + ring_steps(op, n) * step


def ring_nodes_terms(op, P, N, S, intra, inter):
    """t_ring_nodes term by term, base excluded: [(key, formula, seconds, numbers)] (one term, "ring-nodes":
    K lockstep steps, each as slow as its slower port), or None on one node (the plain ring's form)."""
    if N == 1 or P * N == 1:
        return None
    K = ring_steps(op, P * N)
    return [("ring-nodes", "K · max(α_f + (P − 1)·S/(P·n·β_f), α_i + S/(P·n·β_i))",
             t_ring_nodes(op, P, N, S, intra, inter), {"K": K, "P": P, "N": N})]


def hier_calls(op, P, N):
    """How many collective calls the hierarchical form makes, each paying the base latency
    once (Horovod's NCCLHierarchicalAllreduce: ncclReduceScatter in the node, the all-reduce
    across nodes, ncclAllGather in the node): a phase runs only where its group has > 1 GPU."""
    inside = (2 if op == "all-reduce" else 1) if P > 1 else 0
    return inside + (1 if N > 1 else 0)


def t_hier(op, P, N, S, intra, inter, base=0.0):
    """
    Hierarchical collective over N nodes of P GPUs (seconds).
    all-reduce: ring reduce-scatter in the node, ring all-reduce of S/P across nodes on each
    GPU's own NIC, ring all-gather in the node. all-gather: across nodes first (pieces of S/n),
    then inside; reduce-scatter: inside first, then across. Each phase is its own collective
    call and pays base (the per-collective base latency) once: hier_calls(op, P, N) · base.
    """
    _check(op, S)
    _check_nodes(P, N)
    n = P * N
    f = (P - 1) * (intra.alpha + S / (P * intra.bw))  # one ring phase inside a node, on S
    x = (N - 1) * (inter.alpha + S / (n * inter.bw))  # one ring phase across nodes, on S/P
    calls = hier_calls(op, P, N) * base
    return calls + (2 * (f + x) if op == "all-reduce" else f + x)


# NCCL's pipeline unit for all-reduce (Simple protocol): a chunk is ALLREDUCE_CHUNKSTEPS =
# NCCL_STEPS / 2 = 4 of the NCCL_STEPS = 8 slots of a 4 MiB buffer (DEFAULT_BUFFSIZE): 2 MiB
# (NVIDIA/nccl src/include/collectives.h, src/include/device.h, src/init.cc, commit 5067397).
HIER_CHUNK_BYTES = (1 << 22) // 8 * 4
HIER_MAX_CHUNKS = 16  # a simulation's cap: beyond it every chunk's α outweighs the overlap it buys


def hier_chunks(S):
    """Pipeline chunks of the pipelined hierarchical all-reduce of S bytes: ⌈S / 2 MiB⌉, 1..16."""
    return int(min(HIER_MAX_CHUNKS, max(1, math.ceil(float(S) / HIER_CHUNK_BYTES))))


def hier_pipeline_chunks(P, N, S, intra, inter):
    """
    The chunk count C the registered hier all-reduce pipelines S bytes with: of 1..hier_chunks(S)
    (never finer than NCCL's 2 MiB unit), the one whose t_hier_pipelined is least. Every chunk
    pays each ring step's α again (a port sends a chunk's steps in order), so past a few chunks
    the α outweighs the overlap: on 2 × 8 H100 it is 1 up to about 4 MiB, then 2 or 3.
    """
    best, best_t = 1, math.inf
    for C in range(1, hier_chunks(S) + 1):
        t = t_hier_pipelined(P, N, S, intra, inter, chunks=C)
        if t < best_t * (1 - 1e-12):
            best, best_t = C, t
    return best


def t_hier_pipelined(P, N, S, intra, inter, base=0.0, chunks=None):
    """
    Hierarchical all-reduce pipelined by C chunks (seconds; None: hier_pipeline_chunks), what
    allreduce_hier_pipelined simulates and the registry's "hier" all-reduce: one call (base
    once); each chunk of S/C bytes runs the three phases of t_hier,
    a = (P−1)(α_f + S/(C·P·β_f)) for a ring phase in the node, g = 2(N−1)(α_i + S/(C·n·β_i))
    for the all-reduce across nodes. A port passes a chunk's last bytes α before they land, so
    the next chunk on the same ports starts α earlier than the previous one ends:
        r_c = a + c·(a − α_f)                                 reduce-scatters in the node
        e_c = max(r_c, e_{c−1} − α_i) + g                     across nodes (e_{−1} = −∞)
        z_c = max(e_c, z_{c−1} − α_f) + a, z_{−1} = r_{C−1}    all-gathers in the node
        t   = base + z_{C−1}
    (a phase absent when its group has one GPU: P = 1 → r_c = 0 and no all-gather; N = 1 → e_c = r_c).
    With C = 1 it is t_hier less the two extra calls' base. When g ≤ a − α_f the network hides
    behind the node's phases; the node's ports bound t from below, 2(P−1)·S/(P·β_f), and so do
    the NICs, 2(N−1)·S/(n·β_i) (tests/test_hier_pipelined.py).
    """
    _check("all-reduce", S)
    _check_nodes(P, N)
    C = hier_pipeline_chunks(P, N, S, intra, inter) if chunks is None else int(chunks)
    n = P * N
    a = (P - 1) * (intra.alpha + S / (C * P * intra.bw)) if P > 1 else 0.0
    g = 2 * (N - 1) * (inter.alpha + S / (C * n * inter.bw)) if N > 1 else 0.0
    r = [a + c * (a - intra.alpha) if P > 1 else 0.0 for c in range(C)]
    e, prev = [], -math.inf
    for c in range(C):
        prev = (max(r[c], prev - inter.alpha) + g) if N > 1 else r[c]
        e.append(prev)
    if P == 1:
        return base + e[-1]
    z = r[-1]
    for c in range(C):
        z = max(e[c], z - intra.alpha) + a
    return base + z


def hier_terms(P, N, S, intra, inter):
    """
    t_hier_pipelined term by term, base excluded: [(key, formula, seconds, numbers)] — the intra-node
    reduce-scatter ("hier-rs-intra"), the all-reduce across nodes ("hier-ar-inter") and the intra-node
    all-gather ("hier-ag-intra") of all of S as three calls would take them (t_hier's phases), and what
    pipelining them in C chunks saves ("hier-pipeline", negative; absent when C = 1, where the three
    phases are the time). A phase whose group has one GPU is absent, as in t_hier_pipelined.
    """
    _check("all-reduce", S)
    _check_nodes(P, N)
    n = P * N
    f = (P - 1) * (intra.alpha + S / (P * intra.bw))  # one ring phase inside a node, on S
    x = (N - 1) * (inter.alpha + S / (n * inter.bw))  # one ring phase across nodes, on S/P
    rs = ("hier-rs-intra", "(P − 1)·(α_f + S/(P·β_f))", f, {"P": P, "link": intra.name})
    ar = ("hier-ar-inter", "2(N − 1)·(α_i + S/(n·β_i))", 2 * x, {"N": N, "link": inter.name})
    ag = ("hier-ag-intra", "(P − 1)·(α_f + S/(P·β_f))", f, {"P": P, "link": intra.name})
    out = ([rs] if P > 1 else []) + ([ar] if N > 1 else []) + ([ag] if P > 1 else [])
    C = hier_pipeline_chunks(P, N, S, intra, inter)
    if C > 1:  # the three phases above, less what the overlap of C chunks saves
        saved = t_hier_pipelined(P, N, S, intra, inter, chunks=C) - sum(t[2] for t in out)
        out.append(("hier-pipeline", "t_pipelined(C) − (the three phases)", saved, {"C": C}))
    return out


def nodes_coefficients(op, algo, P, N):
    """
    ((a_f, b_f), (a_i, b_i)) with t = a_f·α_f + b_f·S/β_f + a_i·α_i + b_i·S/β_i for `algo`
    ("hier", or "ring" when the NICs are the bottleneck: the form a two-node ring run is fitted
    to). Used by calibrate to fit the inter-node link with the intra-node one known.
    """
    _check(op, 0.0)
    _check_nodes(P, N)
    n = P * N
    if algo == "hier":
        m = 2 if op == "all-reduce" else 1
        return (m * (P - 1), m * (P - 1) / P), (m * (N - 1), m * (N - 1) / n)
    if algo == "ring":
        K = ring_steps(op, n)
        return (0.0, 0.0), (float(K), K / (P * n))
    raise ValueError(f"no multi-node cost model for algorithm {algo!r}; choose 'ring' or 'hier'")


def ring_nodes_nvlink_bound(P, n, S, intra, inter):
    """True when a ring step waits for NVLink rather than the NIC (then the NICs are not measured)."""
    b = S / (P * n)
    return intra.alpha + (P - 1) * b / intra.bw > inter.alpha + b / inter.bw


# ---------------------------------------------------------------------------------------
# Tori
# ---------------------------------------------------------------------------------------
def t_axis_all_gather(N, S, link, wrap=True):
    """
    All-gather along one torus axis of N chips, each starting with S/N bytes (seconds).
    wrap: the axis has its wraparound link (a ring, used in both directions); else a line.
    """
    if N <= 1:
        return 0.0
    if wrap and N > 2:
        return (N // 2) * link.alpha + (N - 1) * S / (2 * N * link.bw)
    # a line (or two chips, where both directions are the same neighbour): N−1 hops
    return (N - 1) * (link.alpha + S / (N * link.bw))


def t_torus(op, shape, S, link, wrap=None):
    """
    Bidirectional rings per axis on a torus of `shape` (e.g. (16, 16), (4, 4, 4)), seconds.
    wrap: one bool per axis (default: every axis has its wraparound link). The array is cut
    into one part per axis (axes of length 1 do not count); part j gathers along the axes in
    the order j, j+1, …; the result is the slowest part's time (exact when the axes are equal).
    """
    _check(op, S)
    shape = tuple(int(a) for a in shape)
    if not shape or min(shape) < 1:
        raise ValueError(f"a torus shape is a tuple of axis lengths >= 1, got {shape!r}")
    wrap = (True,) * len(shape) if wrap is None else tuple(bool(w) for w in wrap)
    if len(wrap) != len(shape):
        raise ValueError(f"wrap needs one flag per axis: {len(shape)} axes, got {len(wrap)}")
    axes = [(a, w) for a, w in zip(shape, wrap) if a > 1]
    k = len(axes)
    if k == 0:
        return 0.0
    total = math.prod(a for a, _ in axes)
    worst = 0.0
    for j in range(k):
        order = axes[j:] + axes[:j]
        held = S / k / total  # the part's bytes on one chip before the first phase
        t = 0.0
        for a, w in order:
            held *= a  # bytes of the part on one chip after this phase
            t += t_axis_all_gather(a, held, link, w)
        worst = max(worst, t)
    return 2 * worst if op == "all-reduce" else worst


def torus_terms(op, shape, S, link, wrap=None):
    """t_torus as the plan's one term ("torus-rings"): bidirectional rings on each axis of the torus, twice
    for an all-reduce (reduce-scatter, then all-gather); [(key, formula, seconds, numbers)], base excluded."""
    form = "Σ_axes ⌊N/2⌋·α + (N − 1)·S_p/(2·N·β)"
    return [("torus-rings", f"2·({form})" if op == "all-reduce" else form, t_torus(op, shape, S, link, wrap),
             {"shape": tuple(int(a) for a in shape)})]
