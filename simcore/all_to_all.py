"""
all_to_all — the fourth collective, the scaling book's AllToAll: device d sends its j-th block to
device j, so device d ends with block d of every device ("How to Scale Your Model", AllToAll:
A[I_X, J] -> A[I, J_X]). Everything the engine knows of it is here: the algorithms (direct and
pairwise exchange, on a switch, nodes and a torus), their registry records and closed forms, the
lecture's `all_to_all(comm, shards, split_axis, concat_axis)`, the demo run_collective and the
app show, and its self-test. simcore.algorithms registers ALL_TO_ALL.

Sizes: S is one device's whole buffer, n blocks of S/n (nccl-tests src/alltoall.cu,
AlltoAllGetBw: algbw = count·nranks·typesize / t with count one block, busbw = algbw·(n−1)/n —
the (n−1)/n of the buffer that leaves the device, so busbw = β when α = 0 for direct). On one
switch:
    direct (one-shot)    α + (n−1)·S/(nβ)      every block at once, the send port streams them
    pairwise exchange    (n−1)·(α + S/(nβ))    Thakur, Rabenseifner & Gropp 2005, §4.5
On nodes direct sends in node-aware rounds (_a2a_rounds), NVLink and the NICs at once:
    direct on nodes      max(α_f + (P−1)·S/(nβ_f), α_i + (n−P)·S/(nβ_i))   (_direct_time_on)
and pairwise queues on the inter-node ports (no closed form); on a torus each
block is forwarded hop by hop in dimension order (_a2a_paths), along the line on an axis without
its wraparound link, and half each way round where it is N/2 away on an even ring: direct then
takes the scaling book's V/(4W) on a ring (W both directions of a link). On a GPU machine NCCL's
model of its grouped send/recv times direct (simcore.nccl_p2p).
"""

from __future__ import annotations

import numpy as np

from .collectives import check_arrays, stack
from .registry import BLOCKS, Algorithm, Op, algorithm
from .shapes import check_same_shape, check_split


# ---------------------------------------------------------------------------------------
# The algorithms: fn(comm, arrays, label="") -> list of arrays (1-D)
# ---------------------------------------------------------------------------------------
# Device d's buffer is n blocks of S/n bytes; block j goes to device j ("How to Scale Your
# Model", AllToAll). The trace names block (src → dst) as chunk src·n + dst of n² slots, so the
# holdings' one rule replays it unchanged: device d starts with slots d·n … d·n + n−1 (its row)
# and ends also holding slot j·n + d of every j (its column): the transpose.
def a2a_chunk(src, dst, n):
    """The trace's chunk index of all-to-all block (src → dst) (arrays work too)."""
    return src * n + dst


def a2a_block(chunk, n):
    """(src, dst) of an all-to-all chunk index: the inverse of a2a_chunk."""
    return divmod(chunk, n)


def _a2a_inputs(comm, arrays, algo):
    """(blocks [src, dst, element], the torus paths or None); ValueError where it cannot run."""
    n = comm.n
    check_arrays(arrays, n, "all-to-all")
    L = len(arrays[0])
    if L % n:
        raise ValueError(f"all-to-all: length {L} is not divisible by {n} devices")
    return stack(arrays).reshape(n, n, L // n), _a2a_paths(comm.topology, algo)


def _a2a_paths(topo, algo):
    """
    None where every device reaches every other in one hop (a switch, nodes). On a torus only
    neighbours are linked, so block (s → d) is stored and forwarded hop by hop in dimension order:
    axis 0 first, each axis the short way round — along the line where the axis has no wraparound
    link (a TPU v5e 4×4 slice). On a ring of even size N a block N/2 away is as far either way;
    sent all one way, the +1 direction carries N/2 more blocks per link than the −1 one and the
    all-to-all takes 1.1–1.5× the scaling book's V/(4·W) (W both directions of a link). So such a
    block goes as two halves, one each way on every axis where it is N/2 away ("How to Scale Your
    Model", TPU chapter: AllToAll on a bidirectional ring, V/(4W)), and each direction of each link
    carries N²/8 blocks' bytes. Returns {(s, d): ((path, share), …)}: one path of share 1, or two
    of 1/2; a path is [s, …, d].
    """
    if topo.kinds & {"switch", "nodes"} or topo.n < 2:
        return None
    if "torus" not in topo.kinds:
        raise ValueError(f"all-to-all ({algo}) needs every pair of devices linked, or a torus to route on; "
                         f"{topo.name} is neither: run it on switch(n), nodes(m, q) or torus(shape)")
    wraps = topo.wraps()
    paths = {}
    for s in range(topo.n):
        for d in range(topo.n):
            if s == d:
                continue
            tgt = topo.coords(d)
            ways = [[], []]  # the steps of each axis for the part that goes +1 at a tie, and the other
            for a, size in enumerate(topo.shape):
                c = topo.coords(s)[a]
                if not wraps[a]:  # a line: the only way
                    step, hops = (1 if tgt[a] > c else -1), abs(tgt[a] - c)
                    ways[0].append((step, hops))
                    ways[1].append((step, hops))
                    continue
                fwd = (tgt[a] - c) % size
                if 2 * fwd == size and size > 2:  # a tie: half each way
                    ways[0].append((1, fwd))
                    ways[1].append((-1, fwd))
                    continue
                step, hops = (1, fwd) if fwd <= size - fwd else (-1, size - fwd)
                ways[0].append((step, hops))
                ways[1].append((step, hops))
            parts = [_walk(topo, s, w) for w in (ways if ways[0] != ways[1] else ways[:1])]
            paths[s, d] = tuple((p, 1.0 / len(parts)) for p in parts)
    return paths


def _walk(topo, s, steps):
    """The devices from s taking steps[a] = (±1, hops) along each axis a in turn (row-major ids:
    a move on axis a changes the id by its stride)."""
    cur, path, d = list(topo.coords(s)), [s], s
    stride = 1
    strides = []
    for size in reversed(topo.shape):
        strides.append(stride)
        stride *= size
    strides.reverse()
    for a, (step, hops) in enumerate(steps):
        size = topo.shape[a]
        for _ in range(hops):
            nxt = (cur[a] + step) % size
            d += (nxt - cur[a]) * strides[a]
            cur[a] = nxt
            path.append(d)
    return path


def _a2a_round(comm, paths, src, dst, nb, ready, step, phase):
    """Blocks (src[i] → dst[i]) of nb bytes, ready at ready[i]: one message each, or on a torus one
    per hop of each of its parts (_a2a_paths), each hop once the part has landed on the device
    before. Returns when each block has wholly arrived."""
    n = comm.n
    chunk = a2a_chunk(src, dst, n)
    if paths is None:
        return comm.send_batch(src, dst, nb, ready, step, chunk, (src, 1, n, n), phase, False)
    ready = np.broadcast_to(np.asarray(ready, dtype=float), src.shape)
    step = np.broadcast_to(np.asarray(step), src.shape)  # one step, or each block's own
    owner, route, share = [], [], []  # one row per part: its block's index, path and share of nb
    for k, (s, d) in enumerate(zip(src.tolist(), dst.tolist())):
        for path, frac in paths[s, d]:
            owner.append(k)
            route.append(path)
            share.append(frac)
    owner, share = np.array(owner), np.array(share)
    length = np.array([len(r) for r in route])
    hops = np.full((len(route), length.max()), -1, dtype=np.int64)  # the parts' paths, padded
    for k, r in enumerate(route):
        hops[k, :len(r)] = r
    t = ready[owner].copy()
    for h in range(length.max() - 1):  # hop h of every part that has one
        i = np.flatnonzero(length > h + 1)
        a, b = hops[i, h], hops[i, h + 1]
        o = owner[i]
        t[i] = comm.send_batch(a, b, nb * share[i], t[i], step[o], chunk[o], (src[o], 1, n, n), phase, False)
    done = np.zeros(src.shape)
    np.maximum.at(done, owner, t)
    return done


def _a2a_initial(n):
    """Device d holds its own n blocks (d → j), its contributors {d}."""
    return tuple({a2a_chunk(d, j, n): frozenset((d,)) for j in range(n)} for d in range(n))


def _a2a_result(blocks):
    """Device r's result: block r of every device, in device order."""
    return [blocks[:, r].reshape(-1).copy() for r in range(blocks.shape[0])]


def alltoall_direct(comm, arrays, label=""):
    """
    One-shot (direct) all-to-all. arrays[d]: device d's 1-D buffer, length divisible by n, cut
    into n blocks; returns, for every device r, block r of every device's buffer in device order.
    Every device issues its n−1 blocks at once, one a round, each round a permutation (_a2a_rounds),
    so no receive port hears two senders in a round; the blocks queue on the send port and the
    last lands α after the port has streamed (n−1)·S/n bytes. S = one device's buffer (nccl-tests'
    alltoall size). Time: α + (n−1)·S/(nβ) — the scaling book's AllToAll on a full crossbar (each
    device sends and receives (n−1)/n of its buffer), latency paid once. On nodes the blocks that
    leave the node take the NICs, the others NVLink, at once: the NICs' (n−P)·S/(nβ_i) binds. On a
    torus each block is forwarded hop by hop in dimension order (_a2a_paths), all at once; the
    links' contention sets the time.
    """
    n = comm.n
    blocks, paths = _a2a_inputs(comm, arrays, "direct")
    comm._begin("all-to-all", "direct", label, n * n, blocks[0].nbytes, _a2a_initial(n))
    d, ready = np.arange(n), np.array(comm.ready)
    nb = blocks[0, 0].nbytes
    rounds = _a2a_rounds(comm.topology, n)
    if paths is None:
        for j, dst in enumerate(rounds):
            _a2a_round(comm, paths, d, dst, nb, ready, j, "one-shot all-to-all")
    elif rounds:  # a torus: every round's first hops before any second hop, so a port is never held
        # for a block still on its way there while an earlier hop waits (the port model serves in issue order)
        _a2a_round(comm, paths, np.tile(d, len(rounds)), np.concatenate(rounds), nb, np.tile(ready, len(rounds)),
                   np.repeat(np.arange(len(rounds)), n), "one-shot all-to-all")
    comm._end()
    return _a2a_result(blocks)


def _a2a_rounds(topo, n):
    """
    Round j's destination of every device (n−1 rounds, each a permutation): (d + j) mod n; on
    nodes of P devices, node-aware as NCCL's p2p schedule is (src/init.cc, p2pSchedule: a node
    delta, then a local delta): device i of node a sends to device (i + v) mod P of node
    (a + u) mod N, u = 0 first (NVLink), then every other node. A round then sends every NIC one
    block or none, so the NICs stream without waiting on one another; with (d + j) mod n the
    rounds mixed NVLink and NIC blocks and each NIC waited for the one before it, one NIC's
    bandwidth for the whole machine.
    """
    d = np.arange(n)
    P = getattr(topo, "per_node", n) if "nodes" in topo.kinds else n
    N = n // P
    if N <= 1:
        return [(d + j) % n for j in range(1, n)]
    node, i = d // P, d % P
    return [((node + u) % N) * P + (i + v) % P for u in range(N) for v in range(P) if (u, v) != (0, 0)]


def alltoall_pairwise(comm, arrays, label=""):
    """
    Pairwise-exchange all-to-all (same arguments and result as alltoall_direct). n−1 rounds; in
    round k device d sends block (d+k) mod n to device (d+k) mod n and receives from (d−k) mod n,
    a blocking exchange: d starts round k once it and its partner have received round k−1's block.
    Every round pays α: time (n−1)·(α + S/(nβ)), S = one device's buffer (Thakur, Rabenseifner &
    Gropp 2005, §4.5: MPICH's long-message MPI_Alltoall, (p−1)α + nβ with n their per-process bytes).
    On a ring torus((n,)) round k's blocks all go min(k, n−k) hops the same way, one per link, in
    lockstep: Σ_k min(k, n−k)·(α + S/(nβ)), except that round n/2 of an even ring (n > 2) sends each
    block as two halves, one each way (_a2a_paths): n/2·(α + S/(2nβ)). Each other round uses one
    direction of each link, so this stays near twice the scaling book's bidirectional-ring V/(4W).
    """
    n = comm.n
    blocks, paths = _a2a_inputs(comm, arrays, "pairwise")
    comm._begin("all-to-all", "pairwise", label, n * n, blocks[0].nbytes, _a2a_initial(n))
    d, ready = np.arange(n), np.array(comm.ready)
    nb = blocks[0, 0].nbytes
    for k in range(1, n):
        dst = (d + k) % n
        t = _a2a_round(comm, paths, d, dst, nb, np.maximum(ready, ready[dst]), k - 1, f"round {k}")
        ready = np.maximum(ready, t[(d - k) % n])  # device e heard from e − k
    comm._end()
    return _a2a_result(blocks)


def _direct_time_on(topo, S, op):
    """Closed-form seconds of one direct all-to-all of S bytes a device on `topo`, its base included:
    on a switch α + (n−1)·S/(nβ); on nodes the slower of NVLink's P−1 blocks and the NIC's n−P, sent
    at once (node-aware rounds: no port waits); on a torus none (its links' contention: simulate it)."""
    n, b = topo.n, float(S) / topo.n
    if "nodes" in topo.kinds and topo.n_nodes > 1:
        P, f, i = topo.per_node, topo.intra, topo.inter
        inside = f.alpha + (P - 1) * b / f.bw if P > 1 else 0.0
        return topo.base + max(inside, i.alpha + (n - P) * b / i.bw)
    if "switch" in topo.kinds:
        return topo.base + topo.link.alpha + (n - 1) * b / topo.link.bw
    raise ValueError(f"no closed form for all-to-all with algorithm 'direct' on {topo.name}: its links' "
                     f"contention sets the time (run the simulation)")


def _direct_terms_on(topo, S, op):
    """_direct_time_on as the plan's one term on nodes ("a2a-nodes", base excluded); None elsewhere (the
    registry's form)."""
    if "nodes" in topo.kinds and topo.n_nodes > 1:
        return [("a2a-nodes", "max(α_f + (P − 1)·S/(n·β_f), α_i + (n − P)·S/(n·β_i))",
                 _direct_time_on(topo, S, op) - topo.base, {"P": topo.per_node, "N": topo.n_nodes})]
    return None


ALLTOALL_ALGOS = {
    "direct": Algorithm(
        "one-shot (direct): every device sends block j straight to device j, all at once", alltoall_direct,
        lambda n: (1 + 0 * n, (n - 1) / n), lambda n: n * (n - 1),
        ("one-shot all-to-all",), "direct-all-to-all", lambda n: "α + (n − 1)·S/(nβ)", queues=True,
        topologies=("switch", "nodes", "torus", "torus-1d"), time_on=_direct_time_on,
        terms_on=_direct_terms_on),
    "pairwise": Algorithm(
        "pairwise exchange: n-1 rounds, in round k device d sends block d+k to device d+k", alltoall_pairwise,
        lambda n: (n - 1, (n - 1) / n), lambda n: n * (n - 1),
        ("round",), "pairwise-all-to-all", lambda n: "(n − 1) · (α + S/(nβ))",
        topologies=("switch", "nodes", "torus", "torus-1d")),
}


# ---------------------------------------------------------------------------------------
# The lecture's API
# ---------------------------------------------------------------------------------------
def all_to_all(comm, shards, split_axis, concat_axis, algo=None, label="all-to-all"):
    """
    Device d cuts its shard into n blocks along `split_axis` and sends block j to device j;
    device d ends with block d of every device's shard, concatenated in device order along
    `concat_axis` ("How to Scale Your Model", AllToAll: A[I_X, J] -> A[I, J_X] with
    split_axis=1, concat_axis=0). algo: a key of ALLTOALL_ALGOS, "direct" (every block at once, as
    NCCL's grouped sends do) or "pairwise"; None: the machine's choice (topology.choose: "direct",
    on a GPU machine with NCCL's protocol for the size, simcore.nccl_p2p). Timed as the machine runs
    it (topology.timed_as_machine). Any topology: on a torus each block is forwarded hop by hop in
    dimension order. Returns one array per device.
    """
    if algo is not None:
        algorithm("all-to-all", algo)  # an unknown name is the first thing said
    n = len(shards)
    check_same_shape(shards, "all-to-all")
    x0 = np.asarray(shards[0])
    if not -x0.ndim <= concat_axis < x0.ndim:
        raise ValueError(f"all-to-all: concat_axis {concat_axis} does not exist in shards of shape {x0.shape}")
    check_split(x0, split_axis, n, "all-to-all")
    topo = comm.topology
    S = x0.nbytes * comm.byte_scale  # one device's buffer, nccl-tests' alltoall size
    from .plan import execute, resolve
    plan = resolve(topo, "all-to-all", S, algo)  # None: the machine's choice; the run executes the plan
    rec = plan.record
    # block j of a shard, laid out contiguously: move split_axis to the front and cut it in n
    moved = [np.moveaxis(np.asarray(s), split_axis, 0) for s in shards]
    block = (moved[0].shape[0] // n,) + moved[0].shape[1:]
    with execute(comm, plan):
        out = rec.fn(comm, [m.ravel() for m in moved], label=label)
    return [np.concatenate([np.moveaxis(b.reshape(block), 0, split_axis) for b in np.split(o, n)], axis=concat_axis)
            for o in out]



def _demo(comm, algo, values, e):
    """run_collective's all-to-all: n blocks of e values per device. Its inputs are in the trace's
    chunk order, n² slots (slot s·n + j = block (s → j)): row d holds its buffer in band d, zeros
    elsewhere (like an all-gather's), so trace.buffer_values gives every device's values."""
    n = comm.n
    L = n * e
    bufs = values((n, L))
    outputs = ALLTOALL_ALGOS[algo].fn(comm, list(bufs), label="all-to-all")
    inputs = np.zeros((n, n * L))
    for d in range(n):
        inputs[d, d * L:(d + 1) * L] = bufs[d]
    return inputs, outputs


def _selftest(rng, make_comm):
    """A[I_X, J] -> A[I, J_X] exactly for every algorithm and n = 1..16 (comms from the lecture's
    make_comm), in the simulated time of each record's closed form a·α + b·S/β."""
    for algo, rec in ALLTOALL_ALGOS.items():
        for n in range(1, 17):
            M = rng.standard_normal((2 * n, 3 * n))
            comm = make_comm(n)
            out = all_to_all(comm, np.split(M, n, axis=0), split_axis=1, concat_axis=0, algo=algo)
            assert all(np.array_equal(o, w) for o, w in zip(out, np.split(M, n, axis=1))), (algo, n)
            a, b = rec.closed_form(n)
            want = 0.0 if n == 1 else a * comm.link.alpha + b * (M.nbytes / n) / comm.link.bw
            assert abs(comm.time - want) <= 1e-9 * max(want, 1e-300), (algo, n, comm.time, want)
    return (f"all-to-all {'/'.join(ALLTOALL_ALGOS)}: A[I_X, J] -> A[I, J_X] exactly, simulated time = "
            f"closed form (n = 1..16)")


# The app draws its n² slots on one switch (machines: the three ring-based ops).
ALL_TO_ALL = Op("all-to-all", ALLTOALL_ALGOS, "direct", slots=BLOCKS, size="buffer", demo=_demo, machines=False,
                selftest=_selftest)
