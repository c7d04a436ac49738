"""
topo_collectives — collectives on machines that are more than one switch: several nodes joined
by a network, and TPU tori, simulated with real arrays. Their closed forms, and the notation and
sources of both, are simcore.topo_closed_forms.

Simulations (real arrays through comm_sim.Comm, any topology with comm_sim's route()
interface): allreduce_hier and allreduce_ring_nodes on nodes(N, P); torus_all_gather,
torus_reduce_scatter and allreduce_torus on a torus (or a topology_presets.TorusSlice without
some wraparound links). Each one's simulated time equals its closed form (topo_closed_forms) to 1e-9
(tests/test_topo_collectives.py). Each is one record of algorithms.ALGORITHMS; allreduce_on(comm,
arrays) runs the one comm's topology picks (topology.choose).
"""

from __future__ import annotations

import math

import numpy as np

# The closed forms live in topo_closed_forms; these names stay importable from here too.
from simcore.topo_closed_forms import (TOPO_OPS, hier_calls, nodes_coefficients, ring_nodes_nvlink_bound,  # noqa: F401
                                ring_steps, t_axis_all_gather, t_hier, t_ring_nodes, t_torus)


# ---------------------------------------------------------------------------------------
# Simulations: real arrays through comm_sim.Comm on a nodes or torus topology
# ---------------------------------------------------------------------------------------
# The buffer of L elements is cut into G equal "fine" chunks (G = what the algorithm needs:
# P·N for hier, P·n for the channel rings, k·n on a torus); a message carries a set of fine
# chunks, and its trace `chunk` is the first of them. `who[d][f]` is the set of devices whose
# data is summed in device d's copy of fine chunk f (the trace's contributors).


class _Run:
    """Buffers, fine-chunk bounds, contributors and per-device readiness of one collective."""

    def __init__(self, comm, bufs, G, who=None):
        self.comm, self.bufs, self.G = comm, bufs, G
        self.bounds = [int(b) for b in np.linspace(0, bufs.shape[1], G + 1).round()]
        self.item = bufs.itemsize
        n = comm.n
        self.who = who if who is not None else [[frozenset((d,))] * G for d in range(n)]

    def nbytes(self, fine, half=None):
        """Bytes of the fine chunks `fine` (half: 0 or 1 — only that half of each)."""
        total = 0
        for f in fine:
            lo, hi = self.bounds[f], self.bounds[f + 1]
            total += (hi - lo) if half is None else len(range(*self._half(lo, hi, half)))
        return total * self.item

    @staticmethod
    def _half(lo, hi, half):
        mid = (lo + hi) // 2
        return (lo, mid) if half == 0 else (mid, hi)

    def move(self, src, dst, fine, ready, step, phase, reduce, half=None):
        """Send fine chunks `fine` from src to dst (add when reduce, else copy); returns arrival.

        One message per fine chunk, so the trace names every chunk the data covers (what a view
        replays); back to back on the same two ports they arrive when one message of their total
        bytes would: the ports serialise the bytes, α is paid once in the overlap (the port model).
        """
        fine = list(fine)
        t = max(self.comm.send(src, dst, self.nbytes([f], half), ready, step, f, self.who[src][f], phase, reduce)
                for f in fine)
        for f in fine:
            lo, hi = self.bounds[f], self.bounds[f + 1]
            if half is not None:
                lo, hi = self._half(lo, hi, half)
            if reduce:
                self.bufs[dst, lo:hi] += self.bufs[src, lo:hi]
                if half is None or half == 1:
                    self.who[dst][f] = self.who[dst][f] | self.who[src][f]
            else:
                self.bufs[dst, lo:hi] = self.bufs[src, lo:hi]
                if half is None or half == 1:
                    self.who[dst][f] = self.who[src][f]
        return t


def _stack(arrays, n, what):
    if len(arrays) != n:
        raise ValueError(f"{what}: got {len(arrays)} arrays for {n} devices")
    shapes = {np.shape(a) for a in arrays}
    if len(shapes) != 1 or np.asarray(arrays[0]).ndim != 1:
        raise ValueError(f"{what}: every device must hold a 1-D array of the same length, got {sorted(shapes)}")
    return np.array(arrays, dtype=np.result_type(*arrays))


def _ring_rs(run, group, segs, ready, step0, phase):
    """Ring reduce-scatter among `group` (device ids in ring order) over segments segs[c]
    (lists of fine chunks), c = 0..g−1; afterwards group[j] holds segs[(j+1) % g] summed."""
    g = len(group)
    for k in range(g - 1):
        arrivals = {}
        for j, d in enumerate(group):
            dst = group[(j + 1) % g]
            t = run.move(d, dst, segs[(j - k) % g], ready[d], step0 + k, phase, True)
            arrivals[dst] = max(ready[dst], t)
        ready.update(arrivals)


def _ring_ag(run, group, segs, first, ready, step0, phase):
    """Ring all-gather among `group`: group[j] starts with segs[first[j]] and ends with all."""
    g = len(group)
    for k in range(g - 1):
        arrivals = {}
        for j, d in enumerate(group):
            dst = group[(j + 1) % g]
            t = run.move(d, dst, segs[first[(j - k) % g]], ready[d], step0 + k, phase, False)
            arrivals[dst] = max(ready[dst], t)
        ready.update(arrivals)


def _nodes_shape(comm):
    """(P, N) of a comm on comm_sim's nodes topology."""
    topo = comm.topology  # any topology with route() and these two (a test's reference nodes too)
    P = getattr(topo, "per_node", None)
    N = getattr(topo, "n_nodes", None)
    if P is None or N is None:
        raise ValueError("this collective needs a nodes(...) topology (GPUs per node and nodes)")
    return int(P), int(N)


def allreduce_hier(comm, arrays, label=""):
    """
    Hierarchical all-reduce on nodes(N, P): ring reduce-scatter inside every node, ring
    all-reduce across nodes among the GPUs with the same local index (each on its own NIC),
    ring all-gather inside every node. Time: t_hier (module docstring).
    """
    P, N = _nodes_shape(comm)
    n = comm.n
    bufs = _stack(arrays, n, "all-reduce")
    G = P * N
    comm._begin("all-reduce", "hier", label, G, bufs[0].nbytes,
                [{c: frozenset((d,)) for c in range(G)} for d in range(n)])
    run = _Run(comm, bufs, G)
    ready = {d: comm.ready[d] for d in range(n)}
    segs = [list(range(c * N, (c + 1) * N)) for c in range(P)]  # P node-level chunks of N fine ones
    if P > 1:
        for m in range(N):
            _ring_rs(run, [m * P + j for j in range(P)], segs, ready, 0, "reduce-scatter (node)")
        comm._relaunch(max(ready.values()))  # the next phase is the next collective call
    if N > 1:
        for j in range(P):
            group = [m * P + j for m in range(N)]
            sub = [[f] for f in segs[(j + 1) % P]]  # this GPU's node chunk, cut into N
            _ring_rs(run, group, sub, ready, P - 1, "reduce-scatter (network)")
            _ring_ag(run, group, sub, [(m + 1) % N for m in range(N)], ready, P - 1 + N - 1, "all-gather (network)")
    if P > 1:
        if N > 1:
            comm._relaunch(max(ready.values()))
        for m in range(N):
            _ring_ag(run, [m * P + j for j in range(P)], segs, [(j + 1) % P for j in range(P)], ready,
                     P - 1 + 2 * (N - 1), "all-gather (node)")
    comm._end()
    return [bufs[d] for d in range(n)]


def channel_ring(c, P, N):
    """NCCL-style ring of channel c: inside node m the local GPUs c, c+1, …, c−1, then the NIC
    of GPU c−1 to GPU c of node m+1. Returns the device ids in ring order."""
    return [m * P + (c + i) % P for m in range(N) for i in range(P)]


def _lockstep_rings(run, rings, segs_of, first_of, op_phases, ready):
    """Run several rings (channels) step by step: every device starts step k+1 when all its
    step-k chunks (of every channel) have landed."""
    step = 0
    for phase, reduce in op_phases:
        n = len(rings[0])
        for k in range(n - 1):
            arrivals = {}
            for ch, ring in enumerate(rings):
                segs = segs_of[ch]
                for q, d in enumerate(ring):
                    dst = ring[(q + 1) % n]
                    seg = segs[(q - k) % n] if reduce else segs[first_of[ch][(q - k) % n]]
                    t = run.move(d, dst, seg, ready[d], step, phase, reduce)
                    arrivals[dst] = max(arrivals.get(dst, ready[dst]), t)
            ready.update(arrivals)
            step += 1


def allreduce_ring_nodes(comm, arrays, label=""):
    """
    NCCL-style ring all-reduce on nodes(N, P) with P channels, channel c leaving every node
    through GPU c−1's NIC (channel_ring); the buffer is split over the channels, each channel
    runs ring reduce-scatter then all-gather, in lockstep. Time: t_ring_nodes.
    """
    P, N = _nodes_shape(comm)
    n = comm.n
    bufs = _stack(arrays, n, "all-reduce")
    G = P * n
    comm._begin("all-reduce", "ring-nodes", label, G, bufs[0].nbytes,
                [{c: frozenset((d,)) for c in range(G)} for d in range(n)])
    run = _Run(comm, bufs, G)
    ready = {d: comm.ready[d] for d in range(n)}
    if n > 1:
        rings = [channel_ring(c, P, N) for c in range(P)]
        segs_of = [[[c * n + i] for i in range(n)] for c in range(P)]
        first_of = [[(q + 1) % n for q in range(n)] for _ in range(P)]
        _lockstep_rings(run, rings, segs_of, first_of, (("reduce-scatter", True), ("all-gather", False)), ready)
    comm._end()
    return [bufs[d] for d in range(n)]



def allgather_ring_nodes(comm, chunks, owner=None, label=""):
    """
    NCCL-style ring all-gather on nodes(N, P), one channel per NIC (channel_ring): chunks[d]
    is device d's 1-D piece (equal lengths, divisible by P); every device ends with the pieces
    concatenated in device order. Channel c carries the c-th of P parts of every piece, so each
    step every GPU sends one part through its NIC and P−1 over NVLink. Time: t_ring_nodes.
    owner: the registry's all-gather signature; only {d: d} (device d holds piece d) is taken.
    """
    P, N = _nodes_shape(comm)
    n = comm.n
    if owner is not None and any(owner[d] != d for d in range(n)):
        raise ValueError("all-gather on channel rings needs device d to hold piece d (owner {d: d})")
    pieces = _stack(chunks, n, "all-gather")
    Lp = pieces.shape[1]
    if Lp % P:
        raise ValueError(f"all-gather: piece length {Lp} is not divisible by the {P} channels (GPUs per node)")
    bufs = np.zeros((n, n * Lp), dtype=pieces.dtype)
    for d in range(n):
        bufs[d, d * Lp:(d + 1) * Lp] = pieces[d]
    G = P * n  # fine chunk d·P + c: channel c's part of device d's piece
    comm._begin("all-gather", "ring-nodes", label, G, bufs[0].nbytes,
                [{d * P + c: frozenset((d,)) for c in range(P)} for d in range(n)])
    run = _Run(comm, bufs, G)
    ready = {d: comm.ready[d] for d in range(n)}
    if n > 1:
        rings = [channel_ring(c, P, N) for c in range(P)]
        segs_of = [[[d * P + c] for d in range(n)] for c in range(P)]
        _lockstep_rings(run, rings, segs_of, [list(r) for r in rings], (("all-gather", False),), ready)
    comm._end()
    return [bufs[d] for d in range(n)]


def reduce_scatter_ring_nodes(comm, arrays, label=""):
    """
    NCCL-style ring reduce-scatter on nodes(N, P), one channel per NIC: arrays[d] is device d's
    1-D partial (length divisible by P·n); returns (pieces, owner) with owner[d] = d: device d
    ends with segment d of the sum (the d-th of n equal pieces). Time: t_ring_nodes.
    """
    P, N = _nodes_shape(comm)
    n = comm.n
    bufs = _stack(arrays, n, "reduce-scatter")
    if bufs.shape[1] % (P * n):
        raise ValueError(f"reduce-scatter: length {bufs.shape[1]} is not divisible by {n} devices x {P} channels")
    G = P * n  # fine chunk d·P + c: channel c's part of segment d
    comm._begin("reduce-scatter", "ring-nodes", label, G, bufs[0].nbytes,
                [{f: frozenset((d,)) for f in range(G)} for d in range(n)])
    run = _Run(comm, bufs, G)
    ready = {d: comm.ready[d] for d in range(n)}
    if n > 1:
        rings = [channel_ring(c, P, N) for c in range(P)]
        # position q ends with segs[(q + 1) % n]: make that its own device's segment
        segs_of = [[[ring[(i - 1) % n] * P + c] for i in range(n)] for c, ring in enumerate(rings)]
        _lockstep_rings(run, rings, segs_of, None, (("reduce-scatter", True),), ready)
    comm._end()
    L = bufs.shape[1] // n
    return [bufs[d, d * L:(d + 1) * L].copy() for d in range(n)], {d: d for d in range(n)}


# -- tori --------------------------------------------------------------------------------
def _torus_shape(comm):
    """(shape, wrap) of a comm on a torus: any topology with comm_sim's route() interface and a
    shape (a test's reference torus too); wraps() where it has one, else every axis wraps."""
    topo = comm.topology
    shape = getattr(topo, "shape", None)
    if shape is None:
        raise ValueError("this collective needs a torus(...) topology")
    wrap = topo.wraps() if hasattr(topo, "wraps") else getattr(topo, "wrap", None)
    shape = tuple(int(a) for a in shape)
    return shape, (tuple(bool(w) for w in wrap) if wrap else (True,) * len(shape))


def _lines(shape, axis):
    """Every line of devices along `axis` (device ids in coordinate order, row-major)."""
    ids = np.arange(math.prod(shape)).reshape(shape)
    moved = np.moveaxis(ids, axis, -1).reshape(-1, shape[axis])
    return [list(map(int, row)) for row in moved]


def _axis_ag(run, line, held, wrap, ready, step0, phase):
    """
    Bidirectional all-gather along one line of devices: position i starts with the fine
    chunks held[i] and ends with all of them. With wrap each block goes half way round in each
    direction (even N: the opposite block half each way); without, the whole line.
    Returns the number of hops.
    """
    N = len(line)
    if N == 1:
        return 0
    ring = wrap and N > 2
    hops = N // 2 if ring else N - 1
    right = {i: ready[line[i]] for i in range(N)}  # when position i has the right-going block
    left = dict(right)
    arrive = {}
    for h in range(1, hops + 1):
        half = (0, 1) if ring and N % 2 == 0 and h == hops else (None, None)
        new_r, new_l = {}, {}
        for i in range(N):  # right-going: i forwards the block from i−(h−1) to i+1
            src_pos, dst_pos = i, i + 1
            origin = i - (h - 1)
            if ring:
                dst_pos %= N
                origin %= N
            elif dst_pos >= N or origin < 0:
                continue
            t = run.move(line[src_pos], line[dst_pos], held[origin], right[i], step0 + h - 1, phase, False, half[0])
            new_r[dst_pos] = t
        for i in range(N):  # left-going: i forwards the block from i+(h−1) to i−1
            dst_pos = i - 1
            origin = i + (h - 1)
            if ring:
                dst_pos %= N
                origin %= N
            elif dst_pos < 0 or origin >= N:
                continue
            t = run.move(line[i], line[dst_pos], held[origin], left[i], step0 + h - 1, phase, False, half[1])
            new_l[dst_pos] = t
        right.update(new_r)
        left.update(new_l)
        for pos, t in list(new_r.items()) + list(new_l.items()):
            arrive[pos] = max(arrive.get(pos, 0.0), t)
    for pos, t in arrive.items():
        ready[line[pos]] = max(ready[line[pos]], t)
    return hops


def _axis_rs(run, line, targets, wrap, ready, step0, phase):
    """
    Bidirectional reduce-scatter along one line: every position holds partials of all
    targets[o] (fine chunks), and position o ends with targets[o] summed over the line. The
    mirror of _axis_ag: partials flow toward their target from both sides, the farthest first.
    Returns the number of hops.
    """
    N = len(line)
    if N == 1:
        return 0
    ring = wrap and N > 2
    hops = N // 2 if ring else N - 1
    right = {i: ready[line[i]] for i in range(N)}  # when position i's right-going partial is complete
    left = dict(right)
    arrive = {}
    for h in range(1, hops + 1):
        dist = hops - h + 1  # senders this far from their target
        half = (0, 1) if ring and N % 2 == 0 and h == 1 else (None, None)
        new_r, new_l = {}, {}
        for i in range(N):  # right-going: i adds its partial of target i+dist into i+1
            o, dst_pos = i + dist, i + 1
            if ring:
                o, dst_pos = o % N, dst_pos % N
            elif o >= N:
                continue
            t = run.move(line[i], line[dst_pos], targets[o], right[i], step0 + h - 1, phase, True, half[0])
            new_r[dst_pos] = max(new_r.get(dst_pos, 0.0), t)
        for i in range(N):  # left-going: i adds its partial of target i−dist into i−1
            o, dst_pos = i - dist, i - 1
            if ring:
                o, dst_pos = o % N, dst_pos % N
            elif o < 0:
                continue
            t = run.move(line[i], line[dst_pos], targets[o], left[i], step0 + h - 1, phase, True, half[1])
            new_l[dst_pos] = max(new_l.get(dst_pos, 0.0), t)
        right.update(new_r)
        left.update(new_l)
        for pos, t in list(new_r.items()) + list(new_l.items()):
            arrive[pos] = max(arrive.get(pos, 0.0), t)
    for pos, t in arrive.items():
        ready[line[pos]] = max(ready[line[pos]], t)
    return hops


def _torus_plan(shape):
    """Axes longer than 1, and for part j the axis order j, j+1, … (all-gather order)."""
    axes = [a for a, s in enumerate(shape) if s > 1]
    k = len(axes)
    return axes, [axes[j:] + axes[:j] for j in range(k)]


def _coords(shape):
    return [tuple(map(int, c)) for c in zip(*np.unravel_index(np.arange(math.prod(shape)), shape))]


def _torus_gather_phases(run, shape, wrap, orders, ready, step0, phase):
    """All-gather part j of every device along orders[j], phase by phase across parts.
    ready[j][d]: when device d has part j's data (each part keeps its own clock)."""
    n = math.prod(shape)
    k = len(orders)
    gathered = [[{d} for d in range(n)] for _ in range(k)]  # whose part-j chunk device d holds
    step = step0
    for p in range(k):
        most = 0
        for j in range(k):
            axis = orders[j][p]
            for line in _lines(shape, axis):
                blocks = [[e * k + j for e in sorted(gathered[j][d])] for d in line]
                most = max(most, _axis_ag(run, line, blocks, wrap[axis], ready[j], step, phase))
                union = set().union(*(gathered[j][d] for d in line))
                for d in line:
                    gathered[j][d] = set(union)
        step += most
    return step


def _torus_scatter_phases(run, shape, wrap, orders, ready, step0, phase):
    """Reduce-scatter: part j along reversed(orders[j]); device d ends with fine chunk d·k + j
    summed. ready[j][d] as in _torus_gather_phases."""
    n = math.prod(shape)
    k = len(orders)
    coords = _coords(shape)
    # region[j][d]: the devices e whose part-j fine chunk device d still holds partials for
    region = [[set(range(n)) for _ in range(n)] for _ in range(k)]
    step = step0
    for p in range(k):
        most = 0
        for j in range(k):
            axis = list(reversed(orders[j]))[p]
            for line in _lines(shape, axis):
                reg = region[j][line[0]]
                targets = [sorted(e * k + j for e in reg if coords[e][axis] == coords[line[o]][axis])
                           for o in range(len(line))]
                most = max(most, _axis_rs(run, line, targets, wrap[axis], ready[j], step, phase))
                for d in line:
                    region[j][d] = {e for e in reg if coords[e][axis] == coords[d][axis]}
        step += most
    return step


def torus_all_gather(comm, chunks, label=""):
    """
    All-gather on a torus: chunks[d] is device d's 1-D piece (equal lengths); every device
    ends with np.concatenate(chunks). Bidirectional rings per axis, one part per axis
    (t_torus, op="all-gather", with S the output's bytes).
    """
    shape, wrap = _torus_shape(comm)
    n = comm.n
    pieces = _stack(chunks, n, "all-gather")
    axes, orders = _torus_plan(shape)
    k = max(1, len(axes))
    Lp = pieces.shape[1]
    bufs = np.zeros((n, n * Lp), dtype=pieces.dtype)
    for d in range(n):
        bufs[d, d * Lp:(d + 1) * Lp] = pieces[d]
    if Lp % k:  # refused before anything is recorded
        raise ValueError(f"all-gather: piece length {Lp} is not divisible by the torus's {k} axes")
    G = n * k
    initial = [{d * k + j: frozenset((d,)) for j in range(k)} for d in range(n)]
    comm._begin("all-gather", "torus", label, G, bufs[0].nbytes, initial)
    run = _Run(comm, bufs, G)
    ready = [{d: comm.ready[d] for d in range(n)} for _ in range(k)]
    if axes:
        _torus_gather_phases(run, shape, wrap, orders, ready, 0, "all-gather")
    comm._end()
    return [bufs[d] for d in range(n)]


def _torus_reduction_begin(comm, arrays, op, label):
    """
    The start both torus reductions share: stack the partials, check the length splits into
    n devices × k axes parts (before anything is recorded), begin the collective with every
    device holding its own partial of every part. Returns (shape, wrap, axes, orders, bufs,
    run, ready).
    """
    shape, wrap = _torus_shape(comm)
    n = comm.n
    bufs = _stack(arrays, n, op)
    axes, orders = _torus_plan(shape)
    k = max(1, len(axes))
    if bufs.shape[1] % (n * k):
        raise ValueError(f"{op}: length {bufs.shape[1]} is not divisible by {n} devices x {k} axes")
    G = n * k
    comm._begin(op, "torus", label, G, bufs[0].nbytes, [{f: frozenset((d,)) for f in range(G)} for d in range(n)])
    run = _Run(comm, bufs, G)
    ready = [{d: comm.ready[d] for d in range(n)} for _ in range(k)]
    return shape, wrap, axes, orders, bufs, run, ready


def torus_reduce_scatter(comm, arrays, label=""):
    """
    Reduce-scatter on a torus: arrays[d] is device d's 1-D partial (length divisible by n·k);
    device d ends with segment d (the d-th of n equal pieces) of the sum. Returns the pieces.
    """
    shape, wrap, axes, orders, bufs, run, ready = _torus_reduction_begin(comm, arrays, "reduce-scatter", label)
    n = comm.n
    if axes:
        _torus_scatter_phases(run, shape, wrap, orders, ready, 0, "reduce-scatter")
    comm._end()
    L = bufs.shape[1] // n
    return [bufs[d, d * L:(d + 1) * L].copy() for d in range(n)]


def allgather_torus(comm, chunks, owner=None, label=""):
    """torus_all_gather in the registry's all-gather signature (owner: only {d: d} is taken)."""
    if owner is not None and any(owner[d] != d for d in range(comm.n)):
        raise ValueError("all-gather on a torus needs device d to hold piece d (owner {d: d})")
    return torus_all_gather(comm, chunks, label)


def reduce_scatter_torus(comm, arrays, label=""):
    """torus_reduce_scatter in the registry's signature: (pieces, owner), owner[d] = d."""
    return torus_reduce_scatter(comm, arrays, label), {d: d for d in range(comm.n)}


def allreduce_torus(comm, arrays, label=""):
    """All-reduce on a torus: torus reduce-scatter, then torus all-gather, one collective."""
    shape, wrap, axes, orders, bufs, run, ready = _torus_reduction_begin(comm, arrays, "all-reduce", label)
    n = comm.n
    if axes:
        step = _torus_scatter_phases(run, shape, wrap, orders, ready, 0, "reduce-scatter")
        _torus_gather_phases(run, shape, wrap, orders, ready, step, "all-gather")
    comm._end()
    return [bufs[d] for d in range(n)]


# ---------------------------------------------------------------------------------------
# Which algorithm runs on which topology: the registry (algorithms.ALGORITHMS, each record's
# topologies) and the topology's own choice (topology.choose). What follows keeps the older
# names working on top of them.
# ---------------------------------------------------------------------------------------
def _machine_algo(topo, op, algo, inter_algo, nbytes):
    """The registry name the older arguments mean on topo: on nodes inter_algo ("hier", "ring"
    → "ring-nodes") or, with algo "ring" or None, the machine's choice; on a torus its rings;
    else algo (None: the topology's choice)."""
    from simcore.topology import Nodes, Torus

    if isinstance(topo, Nodes) and topo.n_nodes > 1:
        if inter_algo is not None:
            key = {"ring": "ring-nodes"}.get(inter_algo, inter_algo)
            if key not in ("hier", "ring-nodes"):
                raise ValueError(f"across nodes the all-reduce is 'hier' or 'ring', not {inter_algo!r}")
            return key
        if algo in (None, "ring"):
            return topo.choose(op, nbytes)[0]
    if isinstance(topo, Torus) and algo in (None, "ring"):
        return topo.choose(op, nbytes)[0]
    return topo.choose(op, nbytes)[0] if algo is None else algo


def allreduce_on(comm, arrays, algo=None, inter_algo=None, label=""):
    """
    All-reduce on comm's topology through the registry: algo None (or "ring" on nodes and tori,
    the older default) → the topology's choice for the size; inter_algo ("hier" or "ring") picks
    across nodes as before. A name that cannot run there raises ValueError naming those that can.
    """
    from simcore.algorithms import check_algo_on
    from simcore.topology import timed_as_machine

    nbytes = np.asarray(arrays[0]).nbytes * comm.byte_scale
    key = _machine_algo(comm.topology, "all-reduce", algo, inter_algo, nbytes)
    rec = check_algo_on(comm.topology, "all-reduce", key)
    with timed_as_machine(comm, "all-reduce", key, nbytes):
        return rec.fn(comm, arrays, label=label)


def allreduce_on_time(topo, nbytes, algo=None):
    """Closed-form time (seconds) of what allreduce_on(Comm(topo), …, algo) simulates on an idle
    topology: topology.time of the algorithm _machine_algo names (NCCL's model on a GPU machine,
    which the simulation then follows; algorithms.t_formula_on elsewhere)."""
    if topo.n == 1:
        return 0.0
    return topo.time("all-reduce", _machine_algo(topo, "all-reduce", algo, None, float(nbytes)), float(nbytes))


def __getattr__(name):
    """TOPO_ALLREDUCE: the older name of the machine all-reduces, read from the registry."""
    if name == "TOPO_ALLREDUCE":
        from simcore.algorithms import ALGORITHMS
        return {k: (r.description, r.fn, r.time_on) for k, r in ALGORITHMS["all-reduce"].items()
                if "switch" not in r.topologies}
    raise AttributeError(name)
