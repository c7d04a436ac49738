"""
tree_allreduce — NCCL's Tree all-reduce on nodes(N, P): a chain inside every node, a double
binary tree across the nodes (NVIDIA/nccl src/graph/trees.cc, "double binary tree"; Sanders,
Speck & Träff, "Two-tree algorithms for full bandwidth broadcast, reduction and scan", Parallel
Computing 2009). The registry's "tree" all-reduce: its simulation with real arrays
(allreduce_tree), its schedule (tree_schedule) and its closed form on idle ports (t_tree).

The buffer is cut into C pipeline chunks (tree_chunks: as hier, ⌈S / 2 MiB⌉, at most 16), each
into two halves; half h of every chunk goes through tree h:
  reduce (chain in node)        inside node m the partial sum runs along a chain to the node's
                                tree GPU: tree 0 local P−1 → … → 0, tree 1 local 0 → … → P−1
                                (two chains, so the two trees leave through two NICs)
  reduce (tree across nodes)    tree GPUs form a binary heap over the nodes (node at position p,
                                parent (p−1)//2); tree 1 is tree 0 mirrored (position p is node
                                N−1−p), so a node that is interior in one tree is a leaf in the
                                other. Every child sends its sum to its parent, which adds it.
  broadcast (tree across nodes) the root's total goes back down the heap (copies)
  broadcast (chain in node)     and back along each node's chain.
Every message carries S/(2C) bytes and is issued phase by phase, chunk by chunk (a port serves
in that order), so chunk c+1 climbs a chain while chunk c crosses the network.

Closed form (t_tree): on idle ports its time is the longest path of this schedule under the port
model (a message starts when its data is there and both its ports are free, holds them b/β and
lands α later). Its latency — every S/β term → 0 — is NCCL's Tree latency (tuning.cc line 416)
on α–β links:
    t → base + 2·((P−1)·α_f + ⌊log₂N⌋·α_i)       (the heap's depth is ⌊log₂N⌋)
and each unpipelined level costs α + b/β, a parent with two children 2b/β to receive. A GPU
machine tuned by NCCL's model times "tree" as NCCL's Tree (nccl_tuning.tree_models): the
simulation runs with α_f, α_i NCCL's per-hop latencies and the β (tree_links) with which t_tree
equals NCCL's time for the size.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

PHASES = ("reduce (chain in node)", "reduce (tree across nodes)", "broadcast (tree across nodes)",
          "broadcast (chain in node)")


class TreeMessage(NamedTuple):
    """One message of the schedule: piece = 2·chunk + tree; deps: indices of the messages whose
    arrival it waits for (empty: the sender's start); step: for the app's stepping."""

    phase: str
    step: int
    piece: int
    src: int
    dst: int
    reduce: bool
    inter: bool
    deps: tuple


def tree_chunks(S):
    """Pipeline chunks of the tree all-reduce of S bytes: as hier, ⌈S / 2 MiB⌉, 1..16
    (topo_closed_forms.hier_chunks: NCCL's 2 MiB Simple chunk)."""
    from .topo_closed_forms import hier_chunks
    return hier_chunks(S)


def _depth(p):
    return (p + 1).bit_length() - 1


def tree_schedule(P, N, C=1):
    """
    The messages of one tree all-reduce on N nodes of P GPUs in C chunks, in issue order
    (a tuple of TreeMessage; the module docstring says which). Device d = m·P + local.
    """
    if int(P) != P or int(N) != N or P < 1 or N < 1 or int(C) != C or C < 1:
        raise ValueError(f"the tree needs whole numbers of GPUs per node, nodes and chunks >= 1, got {P!r}, {N!r}, "
                         f"{C!r}")
    return _schedule(int(P), int(N), int(C))


@functools.lru_cache(maxsize=64)
def _replay_plan(P, N, C):
    """The schedule as the port replay reads it: (send port, receive port, inter, deps) per message."""
    n = P * N
    return tuple((n + m.src if m.inter else m.src, n + m.dst if m.inter else m.dst, m.inter, m.deps)
                 for m in _schedule(P, N, C))


@functools.lru_cache(maxsize=64)
def _schedule(P, N, C):
    D = _depth(N - 1)  # the heap's depth: ⌊log2 N⌋
    out = []

    def node_at(h, p):
        return p if h == 0 else N - 1 - p

    def chain(h, m):
        """Node m's GPUs along tree h's chain, from its far end to its tree GPU."""
        order = range(P - 1, -1, -1) if h == 0 else range(P)
        return [m * P + k for k in order]

    # reduce along every node's chain
    into_head = {}  # (piece, node) -> index of the last chain message into the tree GPU
    last = {}
    for j in range(P - 1):
        for c in range(C):
            for h in (0, 1):
                for m in range(N):
                    g = chain(h, m)
                    key = (2 * c + h, m)
                    deps = (last[key],) if key in last else ()
                    out.append(TreeMessage(PHASES[0], j + c, 2 * c + h, g[j], g[j + 1], True, False, deps))
                    last[key] = len(out) - 1
    into_head.update(last)
    # reduce up the heap: children (higher positions) first
    up = {}  # (piece, position) -> index of its message to the parent

    def gathered(piece, h, p):
        deps = [into_head[(piece, node_at(h, p))]] if (piece, node_at(h, p)) in into_head else []
        deps += [up[(piece, q)] for q in (2 * p + 1, 2 * p + 2) if q < N]
        return tuple(deps)

    def head(h, p):
        return chain(h, node_at(h, p))[-1]

    for p in range(N - 1, 0, -1):
        for c in range(C):
            for h in (0, 1):
                piece = 2 * c + h
                out.append(TreeMessage(PHASES[1], P - 1 + D - _depth(p) + c, piece, head(h, p),
                                       head(h, (p - 1) // 2), True, True, gathered(piece, h, p)))
                up[(piece, p)] = len(out) - 1
    # broadcast down the heap: parents first
    down = {}  # (piece, position) -> index of the message that brought it the total
    for p in range(N):
        for q in (2 * p + 1, 2 * p + 2):
            if q >= N:
                continue
            for c in range(C):
                for h in (0, 1):
                    piece = 2 * c + h
                    deps = gathered(piece, h, 0) if p == 0 else (down[(piece, p)],)
                    out.append(TreeMessage(PHASES[2], P - 1 + D + _depth(p) + c, piece, head(h, p), head(h, q),
                                           False, True, deps))
                    down[(piece, q)] = len(out) - 1
    # broadcast back along every chain, from the tree GPU outward
    last = {}
    for j in range(P - 1):
        for c in range(C):
            for h in (0, 1):
                for m in range(N):
                    piece = 2 * c + h
                    g = chain(h, m)[::-1]
                    p = m if h == 0 else N - 1 - m
                    key = (piece, m)
                    if key in last:
                        deps = (last[key],)
                    elif p == 0:
                        deps = gathered(piece, h, 0)
                    else:
                        deps = (down[(piece, p)],)
                    out.append(TreeMessage(PHASES[3], P - 1 + 2 * D + j + c, piece, g[j], g[j + 1], False, False, deps))
                    last[key] = len(out) - 1
    return tuple(out)


def t_tree(P, N, S, intra, inter, base=0.0, chunks=None):
    """
    Seconds of one tree all-reduce of S bytes on idle ports of nodes(N, P) (intra: NVLink
    LinkSpec, inter: each GPU's NIC), C = chunks (None: tree_chunks(S)): the schedule's longest
    path under comm_sim's port model — what allreduce_tree's simulation takes (to 1e-9,
    tests/test_tree_allreduce.py). Its latency (S → 0) is base + 2·((P−1)·α_f + ⌊log₂N⌋·α_i).
    """
    if not (math.isfinite(S) and S >= 0):
        raise ValueError(f"message size must be a finite number of bytes >= 0, got {S!r}")
    if P * N == 1:
        return 0.0
    C = tree_chunks(S) if chunks is None else int(chunks)
    tree_schedule(P, N, C)  # checks the shape
    b = S / (2 * C)
    n = P * N
    send_free = [-math.inf] * (2 * n)
    recv_free = [-math.inf] * (2 * n)
    first = base if base > 0 else -math.inf
    busy = (b / intra.bw, b / inter.bw)
    alpha = (intra.alpha, inter.alpha)
    arrive = []
    for sp, rp, is_inter, deps in _replay_plan(P, N, C):
        ready = max([arrive[i] for i in deps], default=0.0)
        start = max(ready, first, send_free[sp], recv_free[rp])
        end = start + busy[is_inter]
        send_free[sp] = recv_free[rp] = end
        arrive.append(end + alpha[is_inter])
    return max(arrive)


def tree_terms(P, N, S, intra, inter):
    """t_tree as the plan's one term ("tree"), base excluded: [(key, formula, seconds, numbers)] — a chain
    of P GPUs in each node, a binary tree of N nodes across them, up and back down, in C chunks of two halves."""
    return [("tree", "2((P − 1)·α_f + ⌊log₂N⌋·α_i) + Σ_path S/(2C·β)", t_tree(P, N, S, intra, inter),
             {"P": P, "N": N, "C": tree_chunks(S)})]


def allreduce_tree(comm, arrays, label="", chunks=None):
    """
    NCCL's Tree all-reduce on nodes(N, P) (or one switch: a chain), real arrays: the module
    docstring's chain inside each node and double binary tree across the nodes, pipelined in
    `chunks` chunks (None: tree_chunks of the buffer's bytes after byte_scale). arrays[d]: device
    d's 1-D buffer (equal lengths); returns every device's sum. Time: t_tree.
    """
    from .collectives import check_arrays, stack

    n = comm.n
    check_arrays(arrays, n, "all-reduce")
    bufs = stack(arrays)
    topo = comm.topology
    P = int(getattr(topo, "per_node", n))
    N = int(getattr(topo, "n_nodes", 1))
    S = bufs[0].nbytes * comm.byte_scale
    C = tree_chunks(S) if chunks is None else int(chunks)
    if C < 1:
        raise ValueError(f"a pipeline needs at least one chunk, got {chunks!r}")
    bounds = np.linspace(0, bufs.shape[1], 2 * C + 1).round().astype(int)
    # one call starts when its last device is ready (as the closed form has it): a device that left the
    # previous call early does not start this tree's chain before the others, so calls add up
    t0 = max(comm.ready) if n > 1 else None
    with comm.collective("all-reduce", algo="tree", n_chunks=2 * C, nbytes=bufs[0].nbytes, label=label, t0=t0) as c:
        if n > 1:
            arrive = []
            for msg in tree_schedule(P, N, C):
                lo, hi = bounds[msg.piece], bounds[msg.piece + 1]
                ready = max([arrive[i] for i in msg.deps], default=t0)
                arrive.append(c.send(msg.src, msg.dst, (hi - lo) * bufs.itemsize, ready, step=msg.step,
                                     chunk=msg.piece, reduce=msg.reduce, phase=msg.phase))
                if msg.reduce:
                    bufs[msg.dst, lo:hi] += bufs[msg.src, lo:hi]
                else:
                    bufs[msg.dst, lo:hi] = bufs[msg.src, lo:hi]
    return [bufs[d] for d in range(n)]


def tree_links(model, P, N, nbytes):
    """
    (base s, α_f s, α_i s, β bytes/s) with which t_tree on nodes(N, P) (β inside and between the
    nodes) takes NCCL's time for Tree `model` (nccl_tuning.tree_models) at nbytes: base and the
    α's are NCCL's own (baseLat, hwLat[NVLINK][TREE], hwLat[NET][TREE]), so the latency is
    NCCL's to the last digit; β is found by bisection (t_tree falls as β grows, to the latency).
    """
    from .nccl_tuning import PROTOCOLS, TREE_BASE_LAT, TREE_HW_LAT
    from .links import LinkSpec

    i = PROTOCOLS.index(model.protocol)
    base, a_f, a_i = TREE_BASE_LAT[i] * 1e-6, TREE_HW_LAT["nvlink"][i] * 1e-6, TREE_HW_LAT["net"][i] * 1e-6
    S = float(nbytes)
    want = model.time(S)
    lat = base + 2 * ((P - 1) * a_f + (_depth(N - 1)) * a_i)
    if S <= 0 or want <= lat:
        return base, a_f, a_i, max(model.algbw, 1.0)
    C = tree_chunks(S)

    def t(x):  # x = 1/β: t is convex, piecewise linear and increasing in x (a max over paths)
        return t_tree(P, N, S, LinkSpec("f", a_f, 1.0 / x), LinkSpec("i", a_i, 1.0 / x), base, C)

    x = 1e3 / model.algbw  # far too slow a link: t(x) > want; Newton steps from the right land on
    for _ in range(60):    # the path that binds and never pass the root of a convex function
        tx = t(x)
        if abs(tx - want) <= 1e-13 * want:
            break
        slope = (tx - t(x * (1 - 1e-7))) / (x * 1e-7)
        x -= (tx - want) / slope
    return base, a_f, a_i, 1.0 / x
