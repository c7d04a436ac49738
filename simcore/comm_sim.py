"""
comm_sim — n virtual devices on a non-blocking switch that move real numpy arrays and time
every message with the α–β model.

Cost of one message of b bytes:   alpha + b * byte_scale / bw
    alpha   seconds per message (software + hardware latency of one step)
    bw      bytes per second, per direction, per device port

Ports. Every device has one send port and one receive port into the switch (full duplex).
A message occupies the sender's send port and the receiver's receive port for its whole
duration; it starts as soon as both ports are free *and* its data exists on the sender.
Ports are granted in the order messages are issued (a FIFO per port), and collectives issue
their messages step by step, device by device, so the schedule is deterministic: the same
inputs always give the same trace.

The switch itself never limits bandwidth (non-blocking), can add arriving buffers
(in-network reduction, NVLS / SHARP) and can multicast; when it sends or receives only the
device's port is occupied.

Every collective returns real arrays and appends to `comm.trace` (see simcore.trace).
Sizes: S is always the *full* array's bytes (after byte_scale), as nccl-tests reports it:
the all-reduce input, the all-gather output, the reduce-scatter input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .trace import ALL, SWITCH, Collective, Compute, Message, Trace, chunk_bounds


# ---------------------------------------------------------------------------------------
# Links and topology
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LinkSpec:
    """A device's link into the switch. alpha: s per message; bw: bytes/s per direction."""

    name: str
    alpha: float
    bw: float

    def __post_init__(self):
        if not (self.alpha >= 0 and math.isfinite(self.alpha)):
            raise ValueError(f"link alpha must be a finite number >= 0 seconds, got {self.alpha!r}")
        if not (self.bw > 0 and math.isfinite(self.bw)):
            raise ValueError(f"link bandwidth must be a finite number > 0 bytes/s, got {self.bw!r}")


# Bandwidths: per GPU, per direction — "How to Scale Your Model", GPU chapter
# (NVLink 3 / 4 / 5: 300 / 450 / 900 GB/s).
# alpha: NCCL's per-step NVLink ring latency for the LL128 protocol, 1.9 µs
# (NVIDIA/nccl src/graph/tuning.cc, hwLat[NVLINK][RING] = {LL .6, LL128 1.9, Simple 3.4}).
NVLINK3 = LinkSpec("NVLink 3 (A100)", alpha=1.9e-6, bw=300e9)
NVLINK4 = LinkSpec("NVLink 4 (H100)", alpha=1.9e-6, bw=450e9)
NVLINK5 = LinkSpec("NVLink 5 (B200)", alpha=1.9e-6, bw=900e9)
# PCIe x16 per direction: 4.0 = 16 GT/s x 16 lanes x 128/130 ≈ 31.5 GB/s; 5.0 doubles it
# (PCI-SIG specifications). alpha: NCCL tuning.cc hwLat[PCI][RING] Simple, 5.7 µs.
PCIE4 = LinkSpec("PCIe 4.0 x16", alpha=5.7e-6, bw=31.5e9)
PCIE5 = LinkSpec("PCIe 5.0 x16", alpha=5.7e-6, bw=63.0e9)
# TPU ICI: 45 GB/s per link, one way (Google Cloud TPU docs, v4 and v5e); alpha ≈ 1 µs per
# hop ("How to Scale Your Model", TPU chapter). One link per port: a ring on one ICI axis.
TPU_V4_ICI = LinkSpec("TPU v4 ICI link", alpha=1e-6, bw=45e9)
TPU_V5E_ICI = LinkSpec("TPU v5e ICI link", alpha=1e-6, bw=45e9)

LINKS = {
    "nvlink3": NVLINK3, "nvlink4": NVLINK4, "nvlink5": NVLINK5,
    "pcie4": PCIE4, "pcie5": PCIE5,
    "tpu-v4-ici": TPU_V4_ICI, "tpu-v5e-ici": TPU_V5E_ICI,
}

MAX_DEVICES = 4096  # a simulation larger than this is a typo, not a lecture


@dataclass(frozen=True)
class Switch:
    """n devices, each on its own full-duplex port of one non-blocking switch."""

    n: int
    link: LinkSpec


def switch(n, link=NVLINK4) -> Switch:
    """n devices around a non-blocking switch (NVSwitch-like), every port `link`."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"the number of devices must be a whole number, got {n!r}")
    if n < 1:
        raise ValueError(f"the number of devices must be at least 1, got {n}")
    if n > MAX_DEVICES:
        raise ValueError(f"{n} devices is more than this simulator handles (at most {MAX_DEVICES})")
    return Switch(int(n), link)


# ---------------------------------------------------------------------------------------
# The communicator
# ---------------------------------------------------------------------------------------
class Comm:
    """
    Moves data between the devices of `topology` and records every message in `self.trace`.

    byte_scale multiplies every payload's bytes before timing, so a tiny float64 model can be
    timed as if it were a real bf16 one (e.g. byte_scale = 2/8 * real_size/toy_size).
    `time` is the simulated clock in seconds: the end of the last message so far.
    """

    def __init__(self, topology: Switch, byte_scale: float = 1.0):
        if not (byte_scale > 0 and math.isfinite(byte_scale)):
            raise ValueError(f"byte_scale must be a finite number > 0, got {byte_scale!r}")
        self.topology = topology
        self.n = topology.n
        self.link = topology.link
        self.byte_scale = float(byte_scale)
        self.trace = Trace()
        self.time = 0.0
        self._send_free = [0.0] * self.n
        self._recv_free = [0.0] * self.n
        self.ready = [0.0] * self.n  # when each device has finished its part of the last collective
        self._coll = None  # (id, op, algo, label) of the collective being recorded

    # -- recording ------------------------------------------------------------------------
    def _begin(self, op, algo, label, n_chunks, nbytes, initial):
        cid = len(self.trace.collectives)
        self._coll = (cid, op, algo, label)
        self._first = len(self.trace.messages)
        self._meta = (n_chunks, float(nbytes) * self.byte_scale, tuple(tuple(sorted(h.items())) for h in initial))
        self._t0 = min(self.ready)
        self._steps = 0

    def _end(self):
        cid, op, algo, label = self._coll
        n_chunks, nbytes, initial = self._meta
        msgs = self.trace.messages[self._first:]
        t_end = self._t0
        for m in msgs:
            t_end = max(t_end, m.t_end)
            for d in (m.src, m.dst):
                if d != SWITCH:
                    self.ready[d] = max(self.ready[d], m.t_end)
        self.time = max(self.time, t_end)
        n_steps = 1 + max((m.step for m in msgs), default=-1)
        self.trace.collectives.append(Collective(
            cid, op, algo, label, self.n, n_chunks, self._t0, t_end, nbytes, n_steps,
            self._first, len(self.trace.messages), initial))
        self._coll = None

    def send(self, src, dst, nbytes, ready, step, chunk, contributors, phase="", reduce=False):
        """
        Time one message of `nbytes` (before byte_scale) from src to dst whose data exists on
        the sender at time `ready`; record it; return its arrival time (seconds).
        The caller moves the data itself (copy or add): this only keeps the books.
        """
        cid, op, algo, label = self._coll
        b = nbytes * self.byte_scale
        start = ready
        if src != SWITCH and self._send_free[src] > start:
            start = self._send_free[src]
        if dst != SWITCH and self._recv_free[dst] > start:
            start = self._recv_free[dst]
        end = start + self.link.alpha + b / self.link.bw
        if src != SWITCH:
            self._send_free[src] = end
        if dst != SWITCH:
            self._recv_free[dst] = end
        self.trace.messages.append(Message(cid, op, algo, label, step, src, dst, chunk,
                                           contributors, b, start, end, phase, reduce))
        return end

    # -- compute on the same clock ----------------------------------------------------------
    def compute(self, device, label, flops, nbytes, chip, prec="bf16", after=0.0, layer=-1, kind=""):
        """
        Run one op on `device`: `flops` FLOPs touching `nbytes` bytes of HBM, timed by its own
        roofline on `chip` (hw_specs.Chip): max(flops / chip.peak_flops(prec), nbytes / chip.mem_bw).

        It starts when the device is free — its previous op is done and the collective it
        depends on has delivered (both are `ready[device]`) — and not before `after`. The next
        collective waits for it (it moves `ready[device]`). Records a trace.Compute; returns
        its end time (seconds). Communication runs on the ports, so ops and messages overlap.
        """
        if not 0 <= device < self.n:
            raise ValueError(f"device {device} does not exist (devices 0..{self.n - 1})")
        if not (flops >= 0 and nbytes >= 0 and math.isfinite(flops) and math.isfinite(nbytes)):
            raise ValueError(f"an op needs finite FLOPs and bytes >= 0, got {flops!r}, {nbytes!r}")
        t_math, t_mem = flops / chip.peak_flops(prec), nbytes / chip.mem_bw
        start = max(self.ready[device], after)
        end = start + max(t_math, t_mem)
        bound = "" if t_math == t_mem == 0 else ("math" if t_math > t_mem else "memory")
        self.trace.computes.append(Compute(device, label, float(flops), float(nbytes), start, end, layer, kind, bound))
        self.ready[device] = end
        self.time = max(self.time, end)
        return end


# ---------------------------------------------------------------------------------------
# Ring building blocks (one place decides which chunk a device sends at each ring step)
# ---------------------------------------------------------------------------------------
def ring_rs_chunk(d, k, n):
    """Reduce-scatter, step k: device d sends (its partial of) chunk (d - k) mod n to d + 1."""
    return (d - k) % n


def ring_ag_chunk(d, k, n, first):
    """All-gather, step k: device d forwards the chunk its ring predecessor owned k steps back."""
    return first[(d - k) % n]


def _bounds(length, n):
    """Start offsets of n nearly equal chunks (np.array_split's rule), plus the end."""
    return np.asarray(chunk_bounds(length, n), dtype=int)


def _ring_reduce_scatter(comm, bufs, bounds, arrive, step0=0, phase="reduce-scatter"):
    """
    n−1 steps on the rows of `bufs` (n, L) in place. arrive[d][c]: when device d's partial of
    chunk c is ready. Afterwards device d's chunk (d+1) mod n is the full sum.
    """
    n = comm.n
    item = bufs.itemsize
    who = [[frozenset((d,)) for _ in range(n)] for d in range(n)]
    for k in range(n - 1):
        # d sends chunk (d−k) while receiving chunk (d−1−k): a step never reads what it writes
        for d in range(n):
            c = ring_rs_chunk(d, k, n)
            dst = (d + 1) % n
            lo, hi = bounds[c], bounds[c + 1]
            t = comm.send(d, dst, (hi - lo) * item, arrive[d][c], step0 + k, c, who[d][c], phase, True)
            bufs[dst, lo:hi] += bufs[d, lo:hi]  # the bytes really move, and are added
            who[dst][c] = who[dst][c] | who[d][c]
            arrive[dst][c] = max(arrive[dst][c], t)
    return who


def _ring_all_gather(comm, bufs, bounds, arrive, first, who, step0=0, phase="all-gather"):
    """
    n−1 steps on `bufs` (n, L) in place: device d starts with chunk first[d] complete and
    ends with every chunk. arrive[d][c]: when chunk c is (complete) on device d.
    """
    n = comm.n
    item = bufs.itemsize
    for k in range(n - 1):
        for d in range(n):
            c = ring_ag_chunk(d, k, n, first)
            dst = (d + 1) % n
            lo, hi = bounds[c], bounds[c + 1]
            t = comm.send(d, dst, (hi - lo) * item, arrive[d][c], step0 + k, c, who[d][c], phase, False)
            bufs[dst, lo:hi] = bufs[d, lo:hi]  # the bytes really move
            who[dst][c] = who[d][c]
            arrive[dst][c] = t


def _arrivals(comm, chunk_ready):
    """arrive[d][c]: when device d's chunk c exists — chunk_ready's copy, or ready[d] for every chunk."""
    n = comm.n
    if chunk_ready is None:
        return [[comm.ready[d]] * n for d in range(n)]
    if len(chunk_ready) != n or any(len(row) != n for row in chunk_ready):
        raise ValueError(f"chunk_ready must give {n} times for each of the {n} devices")
    arrive = [[float(t) for t in row] for row in chunk_ready]
    # the first chunks may exist before the device's last op ends: the collective starts then
    comm._t0 = min(comm._t0, min(min(row) for row in arrive))
    return arrive


def _check_arrays(arrays, n, what):
    if len(arrays) != n:
        raise ValueError(f"{what}: got {len(arrays)} arrays for {n} devices")
    shapes = {np.shape(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"{what}: every device must hold the same shape, got {sorted(shapes)}")
    a0 = np.asarray(arrays[0])
    if a0.ndim != 1:
        raise ValueError(f"{what}: expects 1-D arrays, got shape {a0.shape}")


def _stack(arrays):
    dtype = np.result_type(*arrays)
    return np.array(arrays, dtype=dtype)  # (n, L), a private copy: inputs are never modified


# ---------------------------------------------------------------------------------------
# All-gather and reduce-scatter
# ---------------------------------------------------------------------------------------
def allgather_ring(comm, chunks, owner, label=""):
    """
    Ring all-gather. chunks[d]: device d's 1-D chunk; owner[d]: the chunk index it holds (a
    permutation of 0..n-1). Returns, for every device, all chunks concatenated in chunk-index
    order (1-D, length = sum of chunk lengths).

    n−1 steps; at step k every device forwards to (d+1) mod n the chunk it received at step
    k−1 (its own at step 0).  Time (chunks of S/n bytes): (n−1)·(α + S/(n·β)).
    """
    n = comm.n
    if len(chunks) != n:
        raise ValueError(f"all-gather: got {len(chunks)} chunks for {n} devices")
    first = [int(owner[d]) for d in range(n)]
    if sorted(first) != list(range(n)):
        raise ValueError(f"all-gather: owner must give every chunk index 0..{n - 1} once, got {first}")
    lengths = [0] * n
    for d in range(n):
        lengths[first[d]] = len(chunks[d])
    bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(int)
    dtype = np.result_type(*chunks)
    bufs = np.zeros((n, int(bounds[-1])), dtype=dtype)
    for d in range(n):
        bufs[d, bounds[first[d]]:bounds[first[d] + 1]] = chunks[d]
    initial = [{first[d]: frozenset((d,))} for d in range(n)]
    comm._begin("all-gather", "ring", label, n, bufs[0].nbytes, initial)
    who = [[None] * n for _ in range(n)]
    arrive = [[math.inf] * n for _ in range(n)]
    for d in range(n):
        who[d][first[d]] = frozenset((d,))
        arrive[d][first[d]] = comm.ready[d]
    _ring_all_gather(comm, bufs, bounds, arrive, first, who, phase="all-gather")
    comm._end()
    return [bufs[d] for d in range(n)]


def reduce_scatter_ring(comm, arrays, label="", chunk_ready=None):
    """
    Ring reduce-scatter. arrays[d]: device d's 1-D partial array, length divisible by n.
    Returns (pieces, owner): after n−1 steps device r holds pieces[r], the full sum of chunk
    owner[r] = (r+1) mod n (length L/n).
    chunk_ready[d][c] (optional): when device d's partial of chunk c exists (a matmul computed
    chunk by chunk, the collective matmul); default: when the device is ready.

    At step k device d adds what it received to its own partial and passes chunk (d−k) mod n on.
    Time: (n−1)·(α + S/(n·β)), S = bytes of one input array.
    """
    n = comm.n
    _check_arrays(arrays, n, "reduce-scatter")
    L = len(arrays[0])
    if L % n:
        raise ValueError(f"reduce-scatter: length {L} is not divisible by {n} devices")
    bufs = _stack(arrays)
    bounds = _bounds(L, n)
    comm._begin("reduce-scatter", "ring", label, n, bufs[0].nbytes,
                [{c: frozenset((d,)) for c in range(n)} for d in range(n)])
    arrive = _arrivals(comm, chunk_ready)
    _ring_reduce_scatter(comm, bufs, bounds, arrive)
    comm._end()
    owner = {r: (r + 1) % n for r in range(n)}
    pieces = [bufs[r, bounds[owner[r]]:bounds[owner[r] + 1]].copy() for r in range(n)]
    return pieces, owner


# ---------------------------------------------------------------------------------------
# All-reduce algorithms: fn(comm, arrays, label="") -> list of summed arrays (1-D)
# ---------------------------------------------------------------------------------------
def allreduce_ring(comm, arrays, label="", chunk_ready=None):
    """
    Ring all-reduce = ring reduce-scatter, then ring all-gather of the reduced chunks.
    2(n−1) steps; each step every device sends one chunk of ≈S/n bytes to (d+1) mod n.
    Time: 2(n−1)·(α + S/(n·β)).  Bandwidth-optimal; its latency grows linearly in n.
    Any length works: chunks follow np.array_split (the formula is exact when n divides it).
    chunk_ready[d][c] (optional): when device d's partial of chunk c exists, as in
    reduce_scatter_ring.
    """
    n = comm.n
    _check_arrays(arrays, n, "all-reduce")
    bufs = _stack(arrays)
    bounds = _bounds(bufs.shape[1], n)
    comm._begin("all-reduce", "ring", label, n, bufs[0].nbytes,
                [{c: frozenset((d,)) for c in range(n)} for d in range(n)])
    if n > 1:
        arrive = _arrivals(comm, chunk_ready)
        who = _ring_reduce_scatter(comm, bufs, bounds, arrive)
        first = [(d + 1) % n for d in range(n)]
        _ring_all_gather(comm, bufs, bounds, arrive, first, who, step0=n - 1)
    comm._end()
    return [bufs[d] for d in range(n)]


def allreduce_rd(comm, arrays, label=""):
    """
    Recursive doubling. In round k every device swaps its whole buffer with partner d XOR 2^k
    and adds: after log2(n) rounds everyone has the sum.
    Time (n a power of two): log2(n)·(α + S/β) — few steps, but every step moves all S bytes.
    n not a power of two (p = largest power of two below n, r = n − p): first the r extra
    devices fold their buffer into device d − p, the p devices run recursive doubling, then
    the result is sent back: (log2(p) + 2)·(α + S/β).
    """
    n = comm.n
    _check_arrays(arrays, n, "all-reduce")
    bufs = _stack(arrays)
    comm._begin("all-reduce", "rd", label, 1, bufs[0].nbytes, [{0: frozenset((d,))} for d in range(n)])
    nb = bufs[0].nbytes
    p = 1 << (n.bit_length() - 1)
    who = [frozenset((d,)) for d in range(n)]
    ready = list(comm.ready)
    step = 0
    if p < n:  # fold the extras in
        for d in range(p, n):
            t = comm.send(d, d - p, nb, ready[d], step, ALL, who[d], "fold", True)
            bufs[d - p] += bufs[d]
            who[d - p] = who[d - p] | who[d]
            ready[d - p] = max(ready[d - p], t)
        step += 1
    k = 1
    while k < p:
        snap = bufs[:p].copy()  # every device sends its pre-round buffer
        whos, arrivals = list(who), []
        for d in range(p):
            arrivals.append(comm.send(d, d ^ k, nb, ready[d], step, ALL, whos[d], f"round {step}", True))
        for d in range(p):
            partner = d ^ k
            bufs[partner] += snap[d]
            who[partner] = who[partner] | whos[d]
            ready[partner] = max(ready[partner], arrivals[d])
        k <<= 1
        step += 1
    if p < n:  # send the result back to the extras
        for d in range(p, n):
            comm.send(d - p, d, nb, ready[d - p], step, ALL, who[d - p], "unfold", False)
            bufs[d] = bufs[d - p]
            who[d] = who[d - p]
    comm._end()
    return [bufs[d] for d in range(n)]


def allreduce_innet(comm, arrays, label=""):
    """
    In-network reduction (NVLink SHARP / NVLS, InfiniBand SHARP). The buffer is cut into n
    chunks that stream through the switch: every device sends chunk c up, the switch adds the
    n copies and multicasts the sum down to every device. Up-traffic uses only send ports,
    down-traffic only receive ports, so chunk c goes up while chunk c−1 comes down.
    Pipeline of n+1 stages of one chunk each: time (n+1)·(α + S/(n·β)) — each port carries
    ≈S bytes instead of the ring's 2(n−1)/n·S, and the step count does not double.
    """
    n = comm.n
    _check_arrays(arrays, n, "all-reduce")
    bufs = _stack(arrays)
    bounds = _bounds(bufs.shape[1], n)
    comm._begin("all-reduce", "innet", label, n, bufs[0].nbytes,
                [{c: frozenset((d,)) for c in range(n)} for d in range(n)])
    if n > 1:
        everyone = frozenset(range(n))
        item = bufs.itemsize
        total = bufs.sum(axis=0)  # what the switch's adders produce
        for c in range(n):
            lo, hi = bounds[c], bounds[c + 1]
            arrived = max(comm.send(d, SWITCH, (hi - lo) * item, comm.ready[d], c, c, frozenset((d,)), "up", True)
                          for d in range(n))
            for d in range(n):
                comm.send(SWITCH, d, (hi - lo) * item, arrived, c + 1, c, everyone, "down", False)
                bufs[d, lo:hi] = total[lo:hi]
    comm._end()
    return [bufs[d] for d in range(n)]


def allreduce_direct(comm, arrays, label=""):
    """
    Direct (one-shot): every device sends its whole buffer to every other device and adds
    what it receives. In round j device d sends to (d + j) mod n, so no receive port is
    shared within a round — but each port still has to carry n−1 full copies of S in a row.
    Time: (n−1)·(α + S/β) — one step's latency per peer and (n−1)·S bytes through every port,
    about n/2 times the ring's traffic: contention on the ports is what makes it slow.
    """
    n = comm.n
    _check_arrays(arrays, n, "all-reduce")
    src = _stack(arrays)
    bufs = src.copy()
    nb = src[0].nbytes
    comm._begin("all-reduce", "direct", label, 1, nb, [{0: frozenset((d,))} for d in range(n)])
    who = [frozenset((d,)) for d in range(n)]
    for j in range(1, n):
        for d in range(n):
            dst = (d + j) % n
            comm.send(d, dst, nb, comm.ready[d], j - 1, ALL, frozenset((d,)), f"round {j}", True)
            bufs[dst] += src[d]
            who[dst] = who[dst] | {d}
    comm._end()
    return [bufs[d] for d in range(n)]


ALLREDUCE_ALGOS = {
    "ring": ("ring: reduce-scatter then all-gather, 2(n-1) steps of S/n bytes", allreduce_ring),
    "rd": ("recursive doubling: log2(n) rounds, swap the whole buffer with d XOR 2^k", allreduce_rd),
    "innet": ("in-network reduction (NVLS/SHARP): chunks reduced in the switch, multicast back",
              allreduce_innet),
    "direct": ("direct one-shot: everyone sends everything to everyone, n-1 full copies per port",
               allreduce_direct),
}


# ---------------------------------------------------------------------------------------
# Closed forms and nccl-tests reporting
# ---------------------------------------------------------------------------------------
OPS = ("all-reduce", "all-gather", "reduce-scatter")


def t_formula(algo, n, msg_bytes, alpha, bw, op="all-reduce"):
    """
    Closed-form time (seconds) of one collective on an idle switch.
    algo: an ALLREDUCE_ALGOS key (op="all-reduce") or "ring" (all-gather / reduce-scatter);
    n: devices (int or numpy array); msg_bytes: S, the full array's bytes; alpha: s/message;
    bw: bytes/s per port per direction. n == 1 costs nothing.
    """
    n_arr = np.asarray(n)
    if np.any(n_arr < 1):
        raise ValueError(f"n must be >= 1, got {n}")
    nf = n_arr.astype(float)
    S = np.asarray(msg_bytes, dtype=float)
    if not np.all(np.isfinite(S) & (S >= 0)):
        raise ValueError(f"message size must be a finite number of bytes >= 0, got {msg_bytes!r}")
    if not (math.isfinite(alpha) and alpha >= 0 and math.isfinite(bw) and bw > 0):
        raise ValueError(f"alpha must be >= 0 s and bw > 0 bytes/s (both finite), got {alpha!r}, {bw!r}")
    if op in ("all-gather", "reduce-scatter"):
        if algo != "ring":
            raise ValueError(f"{op} is simulated with the ring algorithm only, not {algo!r}")
        t = (nf - 1) * (alpha + S / (nf * bw))
    elif op != "all-reduce":
        raise ValueError(f"unknown collective {op!r}; choose one of {', '.join(OPS)}")
    elif algo == "ring":
        t = 2 * (nf - 1) * (alpha + S / (nf * bw))
    elif algo == "rd":
        p = 2.0 ** np.floor(np.log2(nf))
        rounds = np.log2(p) + np.where(p < nf, 2, 0)
        t = rounds * (alpha + S / bw)
    elif algo == "innet":
        t = (nf + 1) * (alpha + S / (nf * bw))
    elif algo == "direct":
        t = (nf - 1) * (alpha + S / bw)
    else:
        raise ValueError(f"unknown all-reduce algorithm {algo!r}; choose one of {', '.join(ALLREDUCE_ALGOS)}")
    t = np.where(n_arr == 1, 0.0, t)
    return float(t) if t.ndim == 0 else t


def message_count(algo, n, op="all-reduce"):
    """How many messages one collective sends (what the trace must contain)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a whole number of devices >= 1, got {n!r}")
    if op == "all-reduce" and algo not in ALLREDUCE_ALGOS:
        raise ValueError(f"unknown all-reduce algorithm {algo!r}; choose one of {', '.join(ALLREDUCE_ALGOS)}")
    if op not in OPS:
        raise ValueError(f"unknown collective {op!r}; choose one of {', '.join(OPS)}")
    if n == 1:
        return 0
    if op in ("all-gather", "reduce-scatter"):
        return n * (n - 1)
    p = 1 << (n.bit_length() - 1)
    return {"ring": 2 * n * (n - 1), "rd": p * int(math.log2(p)) + 2 * (n - p),
            "innet": 2 * n * n, "direct": n * (n - 1)}[algo]


def algbw(msg_bytes, t):
    """nccl-tests algorithm bandwidth: S / t (bytes/s)."""
    return msg_bytes / t


def busbw(op, n, msg_bytes, t):
    """nccl-tests bus bandwidth: algbw × 2(n−1)/n (all-reduce) or × (n−1)/n (gather, scatter)."""
    factor = 2 * (n - 1) / n if op == "all-reduce" else (n - 1) / n
    return algbw(msg_bytes, t) * factor
