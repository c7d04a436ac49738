"""
algorithms — the built-in collectives' algorithm records, registered (simcore.registry), and
the closed forms read from the registry: t_formula, t_formula_on, message_count, and
nccl-tests' algbw and busbw. Re-exported by simcore.comm_sim, the engine's public face.

Algorithms. Every collective algorithm is one `Algorithm` record in ALGORITHMS[op][algo]: its
function, its closed form on one switch (or time_on(topology, S, op) for the machine ones), its
message count, its phases, the key of its sentences in the app, its formula as written on a
slide, and the topology kinds it runs on (topology.kinds: switch, nodes, torus, torus-1d).
ALLREDUCE_ALGOS, ALLGATHER_ALGOS, REDUCE_SCATTER_ALGOS are the one-switch algorithms (the
lecture's menus; `ALLREDUCE_ALGOS[algo][1](comm, arrays)`). The machine algorithms — hier and
NCCL's channel rings ring-nodes on nodes, torus (bidirectional rings per axis) on tori — are in
ALGORITHMS only. A topology lists what runs on it (algorithms_on / topology.algorithms) and picks
one for a size (topology.choose: NCCL's tuner on a GPU machine, simcore.nccl_tuning).
t_formula, t_formula_on and message_count read the registry. Adding an algorithm = its function
+ one record (with its topologies) + its sentences in app/words.py (algo_text). Adding an op =
its module with its Op record (simcore/all_to_all.py) + one register() line below + its
sentences in app/words.py.

Closed forms on one non-blocking switch, n devices, S bytes (the full array), α and β of the
link; each is the simulated time of one collective on an idle Comm (the tests check 1e-9):
    ring all-gather / reduce-scatter   (n−1)·(α + S/(nβ))        Thakur, Rabenseifner & Gropp,
    ring all-reduce                    2(n−1)·(α + S/(nβ))       "Optimization of Collective
    recursive doubling all-reduce      log2(n)·(α + S/β)          Communication Operations in
        n not a power of two, p = 2^⌊log2 n⌋: (log2 p + 2)·(α + S/β)   MPICH", IJHPCA 2005
    one-shot (direct) all-reduce       α + (n−1)·S/β              TensorRT-LLM / vLLM custom
    two-shot all-reduce                2α + 2(n−1)·S/(nβ)         all-reduce (one-shot, two-shot)
    one-shot all-gather / reduce-scatter  α + (n−1)·S/(nβ)
    in-network (NVLS) all-reduce       2α + (n+1)·S/(nβ)          NCCL docs, NVLS algorithm
On nodes and tori, t_formula_on(topology, algo, S, op) gives the closed forms that exist (ring
on nodes: the slowest hop governs; rd on nodes; in-network through the fabric; rings on a 1-D
torus). Ring and recursive doubling wait for the previous step's data at every step, so they pay α
per step; one-shot, two-shot and in-network issue their messages at once and pay α once per
phase, their ports streaming bytes back to back.
Sizes: S is always the *full* array's bytes (after byte_scale), as nccl-tests reports it:
the all-reduce input, the all-gather output, the reduce-scatter input, one device's all-to-all
buffer (Op.size). All-to-all's forms are in its module, simcore.all_to_all.
"""

from __future__ import annotations

import math
import numpy as np

from .all_to_all import ALL_TO_ALL, ALLTOALL_ALGOS  # noqa: F401 (re-exported: the fourth op's menu)
from .collectives import (allgather_direct, allgather_ring, allreduce_direct, allreduce_innet, allreduce_rd,
                          allreduce_ring, allreduce_two_shot, reduce_scatter_direct, reduce_scatter_ring)
from .registry import (ALGORITHMS, BLOCKS, CHUNKS, OPS, Algorithm, Op, algorithm,  # noqa: F401 (re-exported)
                       algorithm_registry, algorithms_on, all_algorithm_names, check_algo_on, op_record, register,
                       runs_on, slots_of)
from .topo_closed_forms import hier_terms, ring_nodes_terms, t_hier_pipelined, t_ring_nodes, t_torus, torus_terms


# ---------------------------------------------------------------------------------------
# The algorithm registry: one record per algorithm, read by t_formula, message_count, the
# app (names, sentences, formula panel), the CLI and the tests.
# ---------------------------------------------------------------------------------------
def _log2_floor(nf):
    return np.floor(np.log2(nf))


def _rd_rounds(nf):
    """log2(p) rounds plus the fold and the unfold when n is not a power of two."""
    p = 2.0 ** _log2_floor(nf)
    return np.log2(p) + np.where(p < nf, 2, 0)


def _rd_messages(n):
    p = 1 << (n.bit_length() - 1)
    return p * int(math.log2(p)) + 2 * (n - p)


def _rd_formula(n):
    if n & (n - 1) == 0:
        return "log₂n · (α + S/β)"
    return "(⌊log₂n⌋ + 2) · (α + S/β)"


ALLREDUCE_ALGOS = {
    "ring": Algorithm(
        "ring: reduce-scatter then all-gather, 2(n-1) steps of S/n bytes", allreduce_ring,
        lambda n: (2 * (n - 1), 2 * (n - 1) / n), lambda n: 2 * n * (n - 1),
        ("reduce-scatter", "all-gather"), "ring-all-reduce", lambda n: "2(n − 1) · (α + S/(nβ))",
        topologies=("switch", "nodes", "torus-1d")),
    "rd": Algorithm(
        "recursive doubling: log2(n) rounds, swap the whole buffer with d XOR 2^k", allreduce_rd,
        lambda n: (_rd_rounds(n), _rd_rounds(n)), _rd_messages,
        ("fold", "round", "unfold"), "rd-all-reduce", _rd_formula),
    "innet": Algorithm(
        "in-network reduction (NVLS/SHARP): chunks reduced in the switch, multicast back", allreduce_innet,
        lambda n: (2 + 0 * n, (n + 1) / n), lambda n: 2 * n * n,
        ("up", "down"), "innet-all-reduce", lambda n: "2α + (n + 1)·S/(nβ)"),
    "direct": Algorithm(
        "one-shot (direct; TensorRT-LLM / vLLM custom all-reduce): everyone sends its whole buffer to everyone at once", allreduce_direct,
        lambda n: (1 + 0 * n, n - 1), lambda n: n * (n - 1),
        ("round",), "one-shot-all-reduce", lambda n: "α + (n − 1)·S/β", queues=True),
    "two-shot": Algorithm(
        "two-shot (TensorRT-LLM / vLLM custom all-reduce): one-shot reduce-scatter to chunk owners, then one-shot all-gather", allreduce_two_shot,
        lambda n: (2 + 0 * n, 2 * (n - 1) / n), lambda n: 2 * n * (n - 1),
        ("one-shot reduce-scatter", "one-shot all-gather"), "two-shot-all-reduce", lambda n: "2α + 2(n − 1)·S/(nβ)",
        queues=True),
}

ALLGATHER_ALGOS = {
    "ring": Algorithm(
        "ring: n-1 steps, each device forwards one chunk of S/n to d+1", allgather_ring,
        lambda n: (n - 1, (n - 1) / n), lambda n: n * (n - 1),
        ("all-gather",), "ring-all-gather", lambda n: "(n − 1) · (α + S/(nβ))",
        topologies=("switch", "nodes", "torus-1d")),
    "direct": Algorithm(
        "one-shot (direct): each device sends its chunk to everyone at once", allgather_direct,
        lambda n: (1 + 0 * n, (n - 1) / n), lambda n: n * (n - 1),
        ("one-shot all-gather",), "one-shot-all-gather", lambda n: "α + (n − 1)·S/(nβ)", queues=True),
}

REDUCE_SCATTER_ALGOS = {
    "ring": Algorithm(
        "ring: n-1 steps, each device adds and passes one chunk of S/n to d+1", reduce_scatter_ring,
        lambda n: (n - 1, (n - 1) / n), lambda n: n * (n - 1),
        ("reduce-scatter",), "ring-reduce-scatter", lambda n: "(n − 1) · (α + S/(nβ))",
        topologies=("switch", "nodes", "torus-1d"), owner=lambda n: {r: (r + 1) % n for r in range(n)}),
    "direct": Algorithm(
        "one-shot (direct): each device sends chunk c straight to its owner c", reduce_scatter_direct,
        lambda n: (1 + 0 * n, (n - 1) / n), lambda n: n * (n - 1),
        ("one-shot reduce-scatter",), "one-shot-reduce-scatter", lambda n: "α + (n − 1)·S/(nβ)", queues=True),
}

# ---------------------------------------------------------------------------------------
# Machine algorithms: several nodes (hier, NCCL's channel rings) and tori (bidirectional rings
# per axis). Their closed forms need the topology (time_on); their message count depends on
# its shape, so message_count(n) is 0 here (Comm reserves nothing in advance).
# ---------------------------------------------------------------------------------------
def _nodes_time(f):
    return lambda topo, S, op: f(op, topo.per_node, topo.n_nodes, S, topo.intra, topo.inter, base=topo.base)


def _nodes_terms(f):
    return lambda topo, S, op: f(op, topo.per_node, topo.n_nodes, S, topo.intra, topo.inter)


def _torus_time(topo, S, op):
    return 0.0 if topo.n == 1 else topo.base + t_torus(op, topo.shape, S, topo.link, topo.wraps())


def _torus_terms(topo, S, op):
    return torus_terms(op, topo.shape, S, topo.link, topo.wraps())


def _no_switch_form(n):
    raise ValueError("this algorithm has no closed form on one switch; use t_formula_on(topology, ...)")


def _deferred(name):
    """simcore.topo_collectives.<name>, imported on the first call (the app's first window does not load it)."""
    def fn(*args, **kwargs):
        from . import topo_collectives
        return getattr(topo_collectives, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"simcore.topo_collectives.{name} (imported when first called)."
    return fn


allreduce_hier, allreduce_ring_nodes, allreduce_torus = map(_deferred, ("allreduce_hier_pipelined",
                                                                        "allreduce_ring_nodes", "allreduce_torus"))
allgather_ring_nodes, allgather_torus = map(_deferred, ("allgather_ring_nodes", "allgather_torus"))
reduce_scatter_ring_nodes, reduce_scatter_torus = map(_deferred, ("reduce_scatter_ring_nodes", "reduce_scatter_torus"))


def _machine(description, fn, phases, key, formula, kinds, time_on, terms_on=None):
    return Algorithm(description, fn, _no_switch_form, lambda n: 0, phases, key, lambda n: formula,
                     topologies=kinds, time_on=time_on, terms_on=terms_on)


_HIER = ("hierarchical, pipelined by chunks as NCCL does: ring reduce-scatter in each node, ring all-reduce across "
         "nodes on each GPU's own NIC, ring all-gather in each node, chunk c+1 in the node while chunk c crosses "
         "the network (C of at most 16 chunks of at least 2 MiB)")


def _hier_time(topo, S, op):
    """t_hier_pipelined on topo (one call, its base once): the lecture's α–β form. A GPU machine
    tuned by NCCL's model times hier as NCCL's NVLS Tree instead (topology.time, nccl_tuning.nvls_tree)."""
    return t_hier_pipelined(topo.per_node, topo.n_nodes, S, topo.intra, topo.inter, base=topo.base)


def _hier_terms(topo, S, op):
    """_hier_time term by term (topo_closed_forms.hier_terms): on one node the registry's one form."""
    return hier_terms(topo.per_node, topo.n_nodes, S, topo.intra, topo.inter) if topo.n_nodes > 1 else None


# per chunk of S/C: a = (P−1)(α_f + S/(CPβ_f)) one ring phase in the node, g = 2(N−1)(α_i + S/(Cnβ_i))
# the all-reduce across nodes. C = 1 is t_hier's 2a + g in one call; with more chunks the network
# (first term) or the node's ports (second) set the pace; exact where one of them governs, within
# 8 % between (t_hier_pipelined's recursion is the exact form)
_HIER_FORMULA = ("C chunks: ≈ max(2a + g + (C−1)(g − α_i), a + (2C−1)(a − α_f)),  "
                 "a = (P−1)(α_f + S/(CPβ_f)),  g = 2(N−1)(α_i + S/(Cnβ_i))")
_RING_NODES = "NCCL's channel rings across nodes: one ring (channel) per NIC, every NIC carrying one channel"
_TREE = ("NCCL's Tree: a chain inside each node, a double binary tree across the nodes (reduce up, broadcast "
         "down), half the buffer through each tree, pipelined by chunks")


def _tree_time(topo, S, op):
    """simcore.tree_allreduce.t_tree on topo (one call, its base once): the α–β form. A GPU machine tuned by
    NCCL's model times tree as NCCL's Tree instead (topology.time, nccl_tuning.tree_models)."""
    from .tree_allreduce import t_tree
    return t_tree(topo.per_node, topo.n_nodes, S, topo.intra, topo.inter, base=topo.base)


def _tree_terms(topo, S, op):
    from .tree_allreduce import tree_terms
    return tree_terms(topo.per_node, topo.n_nodes, S, topo.intra, topo.inter)


def _allreduce_tree(comm, arrays, label=""):
    """simcore.tree_allreduce.allreduce_tree (imported when first called)."""
    from .tree_allreduce import allreduce_tree as run
    return run(comm, arrays, label=label)


allreduce_tree = _allreduce_tree
_TORUS = "bidirectional rings on every torus axis, one part of the array per axis (XLA on TPU)"
ALGORITHMS_ALL_REDUCE = dict(ALLREDUCE_ALGOS)
ALGORITHMS_ALL_REDUCE.update({
    "hier": _machine(_HIER, allreduce_hier, ("reduce-scatter (node)", "reduce-scatter (network)",
                     "all-gather (network)", "all-gather (node)"), "hier-all-reduce",
                     _HIER_FORMULA, ("nodes",), _hier_time, _hier_terms),
    "tree": _machine(_TREE, allreduce_tree, ("reduce (chain in node)", "reduce (tree across nodes)",
                     "broadcast (tree across nodes)", "broadcast (chain in node)"), "tree-all-reduce",
                     "2((P−1)α_f + ⌊log₂N⌋α_i) + S/bw  (NCCL's Tree; on idle α–β ports: t_tree)", ("nodes",),
                     _tree_time, _tree_terms),
    "ring-nodes": _machine(_RING_NODES, allreduce_ring_nodes, ("reduce-scatter", "all-gather"),
                           "ring-nodes-all-reduce", "2(n−1)·max(α_f + (P−1)S/(Pnβ_f), α_i + S/(Pnβ_i))",
                           ("nodes",), _nodes_time(t_ring_nodes),
                           _nodes_terms(ring_nodes_terms)),
    "torus": _machine(_TORUS, allreduce_torus, ("reduce-scatter", "all-gather"), "torus-all-reduce",
                      "2·Σ_axes (⌊N/2⌋α + (N−1)S_p/(2Nβ))", ("torus", "torus-1d"), _torus_time,
                      _torus_terms),
})
ALGORITHMS_ALL_GATHER = dict(ALLGATHER_ALGOS)
ALGORITHMS_ALL_GATHER.update({
    "ring-nodes": _machine(_RING_NODES, allgather_ring_nodes, ("all-gather",), "ring-nodes-all-gather",
                           "(n−1)·max(α_f + (P−1)S/(Pnβ_f), α_i + S/(Pnβ_i))", ("nodes",), _nodes_time(t_ring_nodes),
                           _nodes_terms(ring_nodes_terms)),
    "torus": _machine(_TORUS, allgather_torus, ("all-gather",), "torus-all-gather",
                      "Σ_axes (⌊N/2⌋α + (N−1)S_p/(2Nβ))", ("torus", "torus-1d"), _torus_time,
                      _torus_terms),
})
ALGORITHMS_REDUCE_SCATTER = dict(REDUCE_SCATTER_ALGOS)
ALGORITHMS_REDUCE_SCATTER.update({
    "ring-nodes": _machine(_RING_NODES, lambda comm, arrays, label="": reduce_scatter_ring_nodes(comm, arrays, label),
                           ("reduce-scatter",), "ring-nodes-reduce-scatter",
                           "(n−1)·max(α_f + (P−1)S/(Pnβ_f), α_i + S/(Pnβ_i))", ("nodes",), _nodes_time(t_ring_nodes),
                           _nodes_terms(ring_nodes_terms)),
    "torus": _machine(_TORUS, reduce_scatter_torus, ("reduce-scatter",), "torus-reduce-scatter",
                      "Σ_axes (⌊N/2⌋α + (N−1)S_p/(2Nβ))", ("torus", "torus-1d"), _torus_time,
                      _torus_terms),
})



# run_collective's demos of the three ring-based ops (Op.demo): inputs in the trace's chunk order
def _demo_all_gather(comm, algo, values, e):
    n = comm.n
    chunks = list(values((n, e)))
    inputs = np.zeros((n, n * e))
    for d in range(n):
        inputs[d, d * e:(d + 1) * e] = chunks[d]
    return inputs, ALGORITHMS_ALL_GATHER[algo].fn(comm, chunks, {d: d for d in range(n)}, label="all-gather")


def _demo_reduce_scatter(comm, algo, values, e):
    inputs = values((comm.n, comm.n * e))
    pieces, _owner = ALGORITHMS_REDUCE_SCATTER[algo].fn(comm, list(inputs), label="reduce-scatter")
    return inputs, pieces


def _demo_all_reduce(comm, algo, values, e):
    inputs = values((comm.n, comm.n * e))
    return inputs, ALGORITHMS_ALL_REDUCE[algo].fn(comm, list(inputs), label="all-reduce")


# The registry (simcore.registry): ALGORITHMS[op][algo] is every algorithm of op, on every topology
# (rec.topologies says where); OPS[op] the op's record. ALLREDUCE_ALGOS, ALLGATHER_ALGOS,
# REDUCE_SCATTER_ALGOS: the lecture's one-switch algorithms (the app's menus on a switch;
# `ALLREDUCE_ALGOS[algo][1](comm, arrays)` as the lecture calls it). A new op: its own module
# with its Op record (simcore/all_to_all.py is one), registered below.
register(Op("all-reduce", ALGORITHMS_ALL_REDUCE, "ring", bus_factor=lambda n: 2 * (n - 1) / n,
            demo=_demo_all_reduce))
register(Op("all-gather", ALGORITHMS_ALL_GATHER, "ring", demo=_demo_all_gather))
register(Op("reduce-scatter", ALGORITHMS_REDUCE_SCATTER, "ring", demo=_demo_reduce_scatter))
register(ALL_TO_ALL)


# ---------------------------------------------------------------------------------------
# Closed forms and nccl-tests reporting
# ---------------------------------------------------------------------------------------
def t_formula(algo, n, msg_bytes, alpha, bw, op="all-reduce"):
    """
    Closed-form time (seconds) of one collective on an idle switch: a·α + b·S/β with (a, b)
    from the algorithm's registry record (see the module docstring for the forms and sources).
    algo: a key of ALGORITHMS[op]; n: devices (int or numpy array); msg_bytes: S, the full
    array's bytes; alpha: s/message; bw: bytes/s per port per direction. n == 1 costs nothing.
    """
    rec = algorithm(op, algo)
    n_arr = np.asarray(n)
    if np.any(n_arr < 1):
        raise ValueError(f"n must be >= 1, got {n}")
    nf = n_arr.astype(float)
    S = np.asarray(msg_bytes, dtype=float)
    if not np.all(np.isfinite(S) & (S >= 0)):
        raise ValueError(f"message size must be a finite number of bytes >= 0, got {msg_bytes!r}")
    if not (math.isfinite(alpha) and alpha >= 0 and math.isfinite(bw) and bw > 0):
        raise ValueError(f"alpha must be >= 0 s and bw > 0 bytes/s (both finite), got {alpha!r}, {bw!r}")
    a, b = rec.closed_form(nf)
    t = np.where(n_arr == 1, 0.0, a * alpha + b * S / bw)
    return float(t) if t.ndim == 0 else t


def _ring_on_nodes(op, topo, S):
    """
    Ring (all-gather / reduce-scatter: K = n−1 steps; all-reduce: K = 2(n−1)) on nodes(m, q):
    the ring d -> d+1 crosses between nodes m times (after every q-th device). Chunks of
    s = S/n bytes; a hop costs c = α + s/β of its link to cross and holds its ports s/β.
    Step k of device d starts when the chunk from d−1's step k−1 has landed and d's previous
    message has left its port, so the finish time is the longest path through (step, hop):
    one chunk crossing V consecutive hops and waiting K − V steps behind the slowest port,
        T = max over V = 1..K of  J·c_inter + (V − J)·c_intra + (K − V)·s/β_inter,
        J = ⌈V/q⌉ (inter-node hops in the best run of V hops).
    Limits: α → 0 gives K·s/β_inter (the slowest hop governs every step); S → 0 gives
    ⌈K/q⌉·α_inter + (K − ⌈K/q⌉)·α_intra. Needs the inter-node hop no faster than the intra one.
    """
    n, q = topo.n, topo.per_node
    K = 2 * (n - 1) if op == "all-reduce" else n - 1
    s = S / n
    A, I = topo.intra, topo.inter
    if topo.n_nodes == 1 or q == 1:
        link = A if topo.n_nodes == 1 else I
        return K * (link.alpha + s / link.bw)
    if I.alpha < A.alpha or I.bw > A.bw:
        raise ValueError(f"{topo.name}: the ring's closed form assumes the inter-node link is no faster than the "
                         f"intra-node one")
    V = np.arange(1, K + 1, dtype=float)
    J = np.ceil(V / q)
    c_inter, c_intra = I.alpha + s / I.bw, A.alpha + s / A.bw
    return float(np.max(J * c_inter + (V - J) * c_intra + (K - V) * s / I.bw))


def t_formula_on(topology, algo, msg_bytes, op="all-reduce"):
    """
    Closed-form time (seconds) of one collective on an idle Comm(topology), where one exists:
      switch(n, link)             every algorithm: t_formula with the link's α and β
      nodes(m, q, intra, inter)   on one node: the switch forms with intra; with q = 1: with inter;
                                  ring (every op): see _ring_on_nodes (the slowest hop governs);
                                  rd, n a power of two: log2(q)·(α + S/β)_intra + log2(m)·(α + S/β)_inter
                                  (round k pairs d with d XOR 2^k: inside the node while 2^k < q);
                                  innet (SHARP in the fabric): 2α + (n+1)·S/(nβ) with inter
      torus((n,), link)           a ring: ring algorithms as on a switch
    Anything else raises ValueError (the simulation still runs where the messages can go).
    Each form is one collective call, so the topology's base latency (topology.base) is added
    once (n > 1).
    """
    S = float(msg_bytes)
    rec = check_algo_on(topology, op, algo)
    if rec.time_on is not None:
        return float(rec.time_on(topology, S, op)) if topology.n > 1 else 0.0
    base = float(topology.base)
    t = _t_formula_on(topology, algo, S, op)
    return t + base if topology.n > 1 else t


def _t_formula_on(topology, algo, S, op):
    kinds = topology.kinds  # what the topology is (its methods; the registry imports no topology class)
    if "switch" in kinds and "nodes" not in kinds:
        return t_formula(algo, topology.n, S, topology.link.alpha, topology.link.bw, op=op)
    n = topology.n
    if n == 1:
        return 0.0
    if "nodes" in kinds:
        m, q, A, I = topology.n_nodes, topology.per_node, topology.intra, topology.inter
        if m == 1 or q == 1:
            link = A if m == 1 else I
            return t_formula(algo, n, S, link.alpha, link.bw, op=op)
        if algo == "ring":
            return _ring_on_nodes(op, topology, S)
        if op == "all-reduce" and algo == "rd" and n & (n - 1) == 0:
            return math.log2(q) * (A.alpha + S / A.bw) + math.log2(m) * (I.alpha + S / I.bw)
        if op == "all-reduce" and algo == "innet":
            return t_formula("innet", n, S, I.alpha, I.bw)
    if "torus" in kinds and len(topology.shape) == 1 and algo == "ring":
        return t_formula(algo, n, S, topology.link.alpha, topology.link.bw, op=op)
    raise ValueError(f"no closed form for {op} with algorithm {algo!r} on {topology.name}")


def terms_on(topology, algo, msg_bytes, op="all-reduce"):
    """
    t_formula_on's closed form term by term, the topology's base latency excluded (simcore.plan adds it
    and the launch floor): [(key, formula, seconds, numbers)], their seconds summing to
    t_formula_on − base (n > 1). The record's terms_on where it has one (hier, tree, ring-nodes, torus);
    the ring across nodes ("ring-across-nodes", _ring_on_nodes) and recursive doubling across nodes
    ("rd-intra", "rd-inter") and in-network reduction in the fabric ("innet-fabric") here; else one
    term, "form": the registry's formula (rec.formula(n)), with its coefficients a, b on one switch
    (T = a·α + b·S/β). ValueError where no closed form exists.
    """
    S = float(msg_bytes)
    rec = check_algo_on(topology, op, algo)
    n = topology.n
    base = float(topology.base) if n > 1 else 0.0
    if n > 1 and rec.terms_on is not None:
        out = rec.terms_on(topology, S, op)
        if out is not None:
            return list(out)
    kinds = topology.kinds
    if n > 1 and rec.time_on is None and "nodes" in kinds and topology.n_nodes > 1 and topology.per_node > 1:
        m, q, A, I = topology.n_nodes, topology.per_node, topology.intra, topology.inter
        if algo == "ring":  # _ring_on_nodes: the slowest run of hops governs
            K = 2 * (n - 1) if op == "all-reduce" else n - 1
            return [("ring-across-nodes", "max_V [J·c_i + (V − J)·c_f + (K − V)·s/β_i]",
                     _t_formula_on(topology, algo, S, op), {"K": K, "P": q, "N": m})]
        if op == "all-reduce" and algo == "rd" and n & (n - 1) == 0:  # rounds inside the node, then across
            return [("rd-intra", "log₂P·(α_f + S/β_f)", math.log2(q) * (A.alpha + S / A.bw), {"P": q, "link": A.name}),
                    ("rd-inter", "log₂N·(α_i + S/β_i)", math.log2(m) * (I.alpha + S / I.bw), {"N": m, "link": I.name})]
        if op == "all-reduce" and algo == "innet":  # SHARP: the reduction in the fabric's switches, on the NICs
            return [("innet-fabric", "2α_i + (n + 1)·S/(n·β_i)", _t_formula_on(topology, algo, S, op),
                     {"link": I.name})]
    numbers = {"op": op, "algo": algo, "n": n}
    if rec.time_on is None and "nodes" not in kinds and "switch" in kinds:
        a, b = rec.closed_form(float(n))
        numbers.update(a=float(a), b=float(b))
    return [("form", rec.formula(n), t_formula_on(topology, algo, S, op) - base, numbers)]


def message_count(algo, n, op="all-reduce"):
    """How many messages one collective sends (what the trace must contain)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a whole number of devices >= 1, got {n!r}")
    rec = algorithm(op, algo)
    return 0 if n == 1 else int(rec.message_count(int(n)))


def algbw(msg_bytes, t):
    """nccl-tests algorithm bandwidth: S / t (bytes/s)."""
    return msg_bytes / t


def busbw(op, n, msg_bytes, t):
    """nccl-tests bus bandwidth: algbw × the op's bus factor (Op.bus_factor): 2(n−1)/n for
    all-reduce, (n−1)/n for all-gather, reduce-scatter and all-to-all (nccl-tests
    src/alltoall.cu, AlltoAllGetBw)."""
    return algbw(msg_bytes, t) * op_record(op).bus_factor(n)
