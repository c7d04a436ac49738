"""
comm_sim — virtual devices that move real numpy arrays and time every message with the
α–β model.

The machine (the port model)
    A message of b bytes (after byte_scale) from src to dst passes through two ports: the
    sender's send port and the receiver's receive port (ports are full duplex: the send and
    receive sides of one port are independent). It starts when its data exists on the sender
    and both ports are free, holds both ports while its bytes pass, b/β, and its last byte
    lands α later:
        t_start = max(data ready on src, send port free, receive port free)
        ports busy until  t_start + b/β
        t_end   = t_start + α + b/β                          (the arrival: Message.t_end)
    α is latency (the time before the first byte lands: software, NVLink or NIC hops), not
    occupancy, so one device may have several messages in flight while the bytes through
    each port are serialised. A message's port-release time is t_end − α (α of its route).
    Ports are granted in the order messages are issued (a FIFO per port) and collectives
    issue their messages step by step, device by device, so the schedule is deterministic:
    the same inputs always give the same trace.

    The switch never limits bandwidth (non-blocking), can add arriving buffers (in-network
    reduction, NVLS / SHARP) and can multicast; a message to or from the switch (device id
    SWITCH) occupies only the device's port.

Topologies. `switch(n, link)`: one non-blocking switch. `nodes(n_nodes, per_node, intra,
inter)`: device d on node d // per_node, a port into its node's switch (intra) and its own NIC
into a non-blocking fabric (inter: a message between nodes uses the NIC ports and inter's α, β).
`torus(shape, link)`: 1-3 axes with wraparound, a full-duplex link to ±1 on each axis, each link
its own port pair; a message may only go to a neighbour. Every collective runs on every
topology whose links can carry its messages; otherwise it raises ValueError naming the
topology and the Comm is left as it was. `Comm(topology)` asks a topology for four things —
the interface other collectives (simcore.topo_collectives) build on, kept stable:
    n               devices 0 .. n−1
    link            the LinkSpec of a device's main port (the one reports print)
    n_ports         port ids are 0 .. n_ports−1, each with a send and a receive side
    route(src, dst) -> (send_port, recv_port, link): the ports a message from src to dst
                    holds and the LinkSpec (α, β) that times it. src or dst may be SWITCH;
                    the switch's side has no port (None). Raises ValueError, naming the
                    topology, when src cannot send to dst directly.

Algorithms. Every collective algorithm is one `Algorithm` record in a registry
(ALLREDUCE_ALGOS, ALLGATHER_ALGOS, REDUCE_SCATTER_ALGOS; ALGORITHMS[op] is the registry of
op): its function, its closed form on one switch, its message count, its phases, the key of
its sentences in the app and its formula as written on a slide. t_formula and message_count
read the registry. Adding an algorithm = its function + one record + its sentences in
app/explain.py (ALGO_TEXT).

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

Every collective returns real arrays and appends to `comm.trace` (see simcore.trace).
Sizes: S is always the *full* array's bytes (after byte_scale), as nccl-tests reports it:
the all-reduce input, the all-gather output, the reduce-scatter input.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from .trace import ALL, SWITCH, Collective, Compute, Initial, Trace, chunk_bounds, who_block, who_everyone


# ---------------------------------------------------------------------------------------
# Links
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LinkSpec:
    """One port's link. alpha: latency, s per message; bw: bytes/s per direction."""

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
# hop ("How to Scale Your Model", TPU chapter). A TPU chip has several ICI links — v4 six
# (a 3-D torus, ±1 on each axis), v5e four (2-D) — and this preset is ONE of them: on a
# switch(n, TPU_V4_ICI) a ring uses one link in one direction; torus(shape, link) gives
# every chip its links to ±1 on each axis.
TPU_V4_ICI = LinkSpec("TPU v4 ICI link", alpha=1e-6, bw=45e9)
TPU_V5E_ICI = LinkSpec("TPU v5e ICI link", alpha=1e-6, bw=45e9)
# InfiniBand NDR 400 Gb/s, one NIC per GPU (DGX H100: 8 ConnectX-7): 400 Gb/s = 50 GB/s per
# direction (InfiniBand Trade Association NDR rate). alpha: NCCL's per-step network latency for
# the ring, LL128 column as for NVLink above: hwLatencies[NET][RING] = {LL 2.7, LL128 4.0,
# Simple 14.0} µs (NVIDIA/nccl src/graph/tuning.cc; large messages use Simple, 14 µs).
IB_NDR400 = LinkSpec("InfiniBand NDR 400", alpha=4.0e-6, bw=50e9)

LINKS = {
    "nvlink3": NVLINK3, "nvlink4": NVLINK4, "nvlink5": NVLINK5,
    "pcie4": PCIE4, "pcie5": PCIE5,
    "tpu-v4-ici": TPU_V4_ICI, "tpu-v5e-ici": TPU_V5E_ICI,
    "ib-ndr400": IB_NDR400,
}

# Per-collective base latency: what one collective call costs before its first message moves
# (kernel launch, the ranks' handshake), paid once per call, not per step. NCCL's tuning model
# starts every collective's latency at baseLat[algorithm][protocol] and adds hwLat per step
# (NVIDIA/nccl src/graph/tuning.cc, ncclTunerConstantsDefaults.baseLatencies: Ring
# {LL 6.6, LL128 14.0, Simple 8.4} µs). The α of the NVLink and NIC links above is the LL128
# column, so the machines of simcore.topology_presets take the Ring LL128 base, 14.0 µs. The
# lecture's plain switch(n, link) has none: its collectives keep the textbook closed forms.
NCCL_RING_LL128_BASE = 14.0e-6

MAX_DEVICES = 4096  # a simulation larger than this is a typo, not a lecture


# ---------------------------------------------------------------------------------------
# Topologies (see the module docstring for the interface Comm uses)
# ---------------------------------------------------------------------------------------
def _check_count(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ValueError(f"the number of {what} must be a whole number, got {v!r}")
    if v < 1:
        raise ValueError(f"the number of {what} must be at least 1, got {v}")
    return int(v)


def _check_total(n):
    if n > MAX_DEVICES:
        raise ValueError(f"{n} devices is more than this simulator handles (at most {MAX_DEVICES})")


@dataclass(frozen=True)
class Switch:
    """n devices, each on its own full-duplex port (port id = device id) of one non-blocking switch."""

    n: int
    link: LinkSpec
    base: float = 0.0  # seconds every collective call pays before its first message (see BASE_LATENCY)

    @property
    def n_ports(self) -> int:
        return self.n

    @property
    def name(self) -> str:
        return f"switch({self.n}, {self.link.name})"

    def route(self, src, dst):
        """(send port, receive port, link) of a message src -> dst; SWITCH's side has no port."""
        return (None if src == SWITCH else src), (None if dst == SWITCH else dst), self.link

    def routes(self, src, dst):
        """route() of many messages at once: (send ports, receive ports, α, β), -1 for no port."""
        return np.where(src == SWITCH, -1, src), np.where(dst == SWITCH, -1, dst), self.link.alpha, self.link.bw


def _check_base(base):
    if isinstance(base, bool) or not (isinstance(base, (int, float, np.floating)) and math.isfinite(base)
                                      and base >= 0):
        raise ValueError(f"a collective's base latency must be a finite number of seconds >= 0, got {base!r}")
    return float(base)


def switch(n, link=NVLINK4, base=0.0) -> Switch:
    """n devices around a non-blocking switch (NVSwitch-like), every port `link`; base: the
    per-collective base latency (0: the textbook closed forms)."""
    n = _check_count(n, "devices")
    _check_total(n)
    return Switch(n, link, _check_base(base))


@dataclass(frozen=True)
class Nodes:
    """
    n_nodes nodes of per_node devices; device d sits on node d // per_node. Inside a node every
    device has its own full-duplex port into the node's non-blocking switch (NVSwitch, `intra`);
    every device also has its own NIC port into a non-blocking fabric between the nodes
    (InfiniBand, one NIC per GPU as in a DGX H100, `inter`). A message between two nodes uses
    the NIC ports and is timed by `inter`'s α and β.
    Port ids: d is device d's port into its node switch, n + d its NIC.
    In-network reduction (SWITCH) is the node switch's (NVLS) on one node and the fabric's
    (InfiniBand SHARP, through each device's NIC) on several.
    """

    n_nodes: int
    per_node: int
    intra: LinkSpec
    inter: LinkSpec
    base: float = 0.0  # seconds every collective call pays before its first message (see BASE_LATENCY)

    @property
    def n(self) -> int:
        return self.n_nodes * self.per_node

    @property
    def link(self) -> LinkSpec:
        return self.intra

    @property
    def n_ports(self) -> int:
        return 2 * self.n

    @property
    def name(self) -> str:
        return f"nodes({self.n_nodes} × {self.per_node}, {self.intra.name} inside, {self.inter.name} between)"

    def node(self, d) -> int:
        return d // self.per_node

    def route(self, src, dst):
        """(send port, receive port, link) of a message src -> dst (see the class docstring)."""
        n = self.n
        if src == SWITCH or dst == SWITCH:
            dev = dst if src == SWITCH else src
            port, link = (dev, self.intra) if self.n_nodes == 1 else (n + dev, self.inter)
            return (None, port, link) if src == SWITCH else (port, None, link)
        if src // self.per_node == dst // self.per_node:
            return src, dst, self.intra
        return n + src, n + dst, self.inter


def nodes(n_nodes, per_node, intra=NVLINK4, inter=IB_NDR400, base=0.0) -> Nodes:
    """n_nodes nodes of per_node devices each (e.g. nodes(2, 8): two DGX H100); base: the
    per-collective base latency."""
    m = _check_count(n_nodes, "nodes")
    q = _check_count(per_node, "devices per node")
    _check_total(m * q)
    return Nodes(m, q, intra, inter, _check_base(base))


@dataclass(frozen=True)
class Torus:
    """
    Devices on a 1-, 2- or 3-D torus with wraparound (TPU ICI): device d has coordinates
    np.unravel_index(d, shape) (row-major) and a full-duplex link to its ±1 neighbour on each
    axis, each link its own port pair — a TPU v4 chip's six ICI links, a v5e's four.
    A message may only go to a torus neighbour; anything else raises ValueError.
    Port ids: device d's link in direction dir (0: +1, 1: −1) on axis a is d·2·ndim + 2a + dir.
    On an axis of size 2 both neighbours are the same device; the +1 link is used.
    """

    shape: tuple
    link: LinkSpec
    base: float = 0.0  # seconds every collective call pays before its first message (see BASE_LATENCY)

    @property
    def n(self) -> int:
        return math.prod(self.shape)

    @property
    def n_ports(self) -> int:
        return self.n * 2 * len(self.shape)

    @property
    def name(self) -> str:
        return f"torus({'×'.join(map(str, self.shape))}, {self.link.name})"

    def coords(self, d) -> tuple:
        return tuple(int(c) for c in np.unravel_index(d, self.shape))

    def device(self, coords) -> int:
        return int(np.ravel_multi_index(tuple(c % s for c, s in zip(coords, self.shape)), self.shape))

    def neighbour(self, d, axis, step=1) -> int:
        """The device `step` (±1) away from d along `axis`, wrapping around."""
        c = list(self.coords(d))
        c[axis] += step
        return self.device(c)

    def route(self, src, dst):
        """(send port, receive port, link) of a message to a neighbour; ValueError otherwise."""
        if src == SWITCH or dst == SWITCH:
            raise ValueError(f"{self.name} has no switch: in-network reduction needs one (use switch or nodes)")
        cs, cd = self.coords(src), self.coords(dst)
        differ = [a for a in range(len(self.shape)) if cs[a] != cd[a]]
        if len(differ) == 1:
            a = differ[0]
            size = self.shape[a]
            direction = 0 if (cs[a] + 1) % size == cd[a] else 1 if (cs[a] - 1) % size == cd[a] else None
            if direction is not None:
                per = 2 * len(self.shape)
                return src * per + 2 * a + direction, dst * per + 2 * a + (1 - direction), self.link
        raise ValueError(f"{self.name}: device {src} {cs} cannot send to device {dst} {cd}, which is not its torus "
                         f"neighbour (±1 on one axis); this algorithm needs a switch — on a torus use rings "
                         f"along one axis")


def torus(shape, link=TPU_V4_ICI, base=0.0) -> Torus:
    """A torus of `shape` (e.g. (4, 4) for TPU v5e 4×4, (4, 4, 4) for TPU v4), every link `link`."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise ValueError(f"a torus shape is a tuple of 1 to 3 sizes, got {shape!r}") from None
    if not 1 <= len(shape) <= 3:
        raise ValueError(f"a torus has 1, 2 or 3 axes, got shape {shape!r}")
    shape = tuple(_check_count(s, "devices along a torus axis") for s in shape)
    _check_total(math.prod(shape))
    return Torus(shape, link, _check_base(base))


# ---------------------------------------------------------------------------------------
# The communicator
# ---------------------------------------------------------------------------------------
class Comm:
    """
    Moves data between the devices of `topology` and records every message in `self.trace`.

    byte_scale multiplies every payload's bytes before timing, so a tiny float64 model can be
    timed as if it were a real bf16 one (e.g. byte_scale = 2/8 * real_size/toy_size).
    `time` is the simulated clock in seconds: the arrival of the last message so far.
    `link` is the topology's main link (a device's port into its switch).

    Messages are timed one at a time (`send`, for irregular schedules) or a whole step at a
    time (`send_batch`, ring steps and recursive-doubling rounds); both apply the port model
    in `_port_times`, so a step sent as a batch is timed exactly as if its messages had been
    sent one after another.
    """

    def __init__(self, topology, byte_scale: float = 1.0):
        if not (byte_scale > 0 and math.isfinite(byte_scale)):
            raise ValueError(f"byte_scale must be a finite number > 0, got {byte_scale!r}")
        self.topology = topology
        self.n = topology.n
        self.link = topology.link
        self.byte_scale = float(byte_scale)
        self.trace = Trace()
        self.time = 0.0
        self._send_free = np.zeros(topology.n_ports)  # when each port's send side is free again
        self._recv_free = np.zeros(topology.n_ports)
        self.ready = [0.0] * self.n  # when each device has finished its part of the last collective
        self.base = float(getattr(topology, "base", 0.0))  # per-collective base latency (s)
        self._not_before = -math.inf  # no message of the current collective call starts earlier
        self._coll = None  # (id, op, algo, label) of the collective being recorded
        self._route_cache: dict = {}

    # -- recording ------------------------------------------------------------------------
    def _begin(self, op, algo, label, n_chunks, nbytes, initial, t0=None):
        """initial: an Initial, or per device a dict {chunk: contributors} it holds before;
        t0: when it starts (default: when the first device is ready)."""
        reg = ALGORITHMS.get(op, {})
        if algo in reg and self.n > 1:  # room for all its messages at once: no copying while it runs
            self.trace.reserve(int(reg[algo].message_count(self.n)))
        cid = len(self.trace.collectives)
        self._coll = (cid, op, algo, label)
        self._first = len(self.trace.messages)
        if not isinstance(initial, Initial):
            initial = tuple(tuple(sorted(h.items())) for h in initial)
        self._meta = (n_chunks, float(nbytes) * self.byte_scale, initial)
        self._t0 = min(self.ready) if t0 is None else float(t0)
        self._not_before = self._t0 + self.base if self.base > 0 else -math.inf
        # a message the topology cannot carry (ValueError from route) leaves the Comm as it was
        # before the collective: its messages so far are taken back, its ports restored
        self._ports_before = (self._send_free.copy(), self._recv_free.copy())

    def _relaunch(self, t):
        """A collective built of several calls (hierarchical: reduce-scatter, all-reduce across
        nodes, all-gather, each its own NCCL call) starts its next call at time t: its messages
        start no earlier than t + base."""
        if self.base > 0:
            self._not_before = float(t) + self.base

    def _abort(self):
        self._send_free, self._recv_free = self._ports_before
        self.trace.truncate(self._first)
        self._coll = None
        self._not_before = -math.inf

    def _end(self):
        cid, op, algo, label = self._coll
        n_chunks, nbytes, initial = self._meta
        rows = self.trace.rows(self._first)
        t_end = max(self._t0, float(rows["t_end"].max())) if len(rows) else self._t0
        ready = np.array(self.ready, dtype=float)
        for side in ("src", "dst"):  # a device is done when its last message has left or landed
            mine = rows[side] != SWITCH
            np.maximum.at(ready, rows[side][mine], rows["t_end"][mine])
        self.ready = ready.tolist()
        self.time = max(self.time, t_end)
        n_steps = int(rows["step"].max()) + 1 if len(rows) else 0
        self.trace.collectives.append(Collective(
            cid, op, algo, label, self.n, n_chunks, self._t0, t_end, nbytes, n_steps,
            self._first, len(self.trace.messages), initial))
        self._coll = None
        self._not_before = -math.inf

    def send(self, src, dst, nbytes, ready, step, chunk, contributors, phase="", reduce=False):
        """
        Time one message of `nbytes` (before byte_scale) from src to dst whose data exists on
        the sender at time `ready`; record it; return its arrival time t_end (seconds).
        It holds the route's two ports for b/β from its start and lands α after that.
        The caller moves the data itself (copy or add): this only keeps the books.
        """
        cid, op, algo, label = self._coll
        try:
            send_port, recv_port, link = self.topology.route(src, dst)
        except ValueError:
            self._abort()
            raise
        b = nbytes * self.byte_scale
        start, end = self._port_time(-1 if send_port is None else send_port, -1 if recv_port is None else recv_port,
                                     b, float(ready), link.alpha, link.bw)
        self.trace.add_message(cid, op, algo, label, step, src, dst, chunk, contributors, b, start, end, phase,
                               reduce, n=self.n)
        return end

    def send_batch(self, src, dst, nbytes, ready, step, chunk, who, phase="", reduce=False):
        """
        Many messages at once, timed as if `send` were called for each in the order given.
        src, dst: device arrays; nbytes (before byte_scale), ready (s), chunk: arrays or one
        value; who: the contributors as a (first, count, period, limit) descriptor of arrays
        or values (see simcore.trace.who_arc). Records them; returns their arrival times.
        """
        plan = self._plan(src, dst)
        b = np.broadcast_to(np.asarray(nbytes, dtype=float) * self.byte_scale, plan.src.shape)
        start, end = self._port_times(plan, b, ready)
        self._record(step, plan.src, plan.dst, chunk, b, start, end, who, phase, reduce)
        return end

    def _record(self, step, src, dst, chunk, b, start, end, who, phase, reduce):
        """Append messages (arrays, b after byte_scale) to the trace."""
        cid, op, algo, label = self._coll
        self.trace.add_messages(cid, op, algo, label, phase, step, src, dst, chunk, b, start, end, reduce, who)

    # -- the port model -------------------------------------------------------------------
    def _port_time(self, sp, rp, b, ready, alpha, bw):
        """One message on send port sp and receive port rp (-1: none): (t_start, t_end)."""
        busy = b / bw
        start = max(ready, self._not_before)
        if sp >= 0 and self._send_free[sp] > start:
            start = float(self._send_free[sp])
        if rp >= 0 and self._recv_free[rp] > start:
            start = float(self._recv_free[rp])
        if sp >= 0:
            self._send_free[sp] = start + busy
        if rp >= 0:
            self._recv_free[rp] = start + busy
        return start, start + alpha + busy

    def _port_times(self, plan, b, ready):
        """
        The port model for the messages of `plan`, in order: t_start = max(ready, send port
        free, receive port free); both ports busy until t_start + b/β; t_end = t_start + α + b/β.
        When no port appears twice (a ring step, a recursive-doubling round) the messages
        cannot wait for each other and are timed as arrays; otherwise one by one (_port_time).
        b: bytes after byte_scale; ready: when each message's data exists (array or one value).
        """
        m = len(plan.src)
        ready = np.broadcast_to(np.asarray(ready, dtype=float), (m,))
        if self._not_before > -math.inf:  # the call's base latency: nothing moves before it
            ready = np.maximum(ready, self._not_before)
        if plan.in_turn:
            alpha, bw = np.broadcast_to(plan.alpha, (m,)), np.broadcast_to(plan.bw, (m,))
            times = [self._port_time(int(plan.sp[i]), int(plan.rp[i]), float(b[i]), float(ready[i]),
                                     float(alpha[i]), float(bw[i])) for i in range(m)]
            start, end = (np.array(t, dtype=float).reshape(m) for t in zip(*times)) if m else (ready, ready)
            return start, end
        busy = b / plan.bw
        sp, rp = plan.sp, plan.rp
        if plan.all_ports:
            start = np.maximum(np.maximum(ready, self._send_free[sp]), self._recv_free[rp])
            free = start + busy
            self._send_free[sp] = free
            self._recv_free[rp] = free
        else:  # messages to or from the switch hold one port only
            hs, hr = sp >= 0, rp >= 0
            start = np.array(ready, dtype=float)
            start[hs] = np.maximum(start[hs], self._send_free[sp[hs]])
            start[hr] = np.maximum(start[hr], self._recv_free[rp[hr]])
            free = start + busy
            self._send_free[sp[hs]] = np.broadcast_to(free, (m,))[hs]
            self._recv_free[rp[hr]] = np.broadcast_to(free, (m,))[hr]
        return start, start + plan.alpha + busy

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

    def _plan(self, src, dst) -> _Plan:
        """The routes of messages src -> dst (arrays), ready to be timed by _port_times."""
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        fast = getattr(self.topology, "routes", None)
        if fast is not None:
            sp, rp, alpha, bw = fast(src, dst)
        else:
            m = len(src)
            sp, rp = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
            alpha, bw = np.empty(m), np.empty(m)
            for i, key in enumerate(zip(src.tolist(), dst.tolist())):
                r = self._route_cache.get(key)
                if r is None:
                    try:
                        s, d, link = self.topology.route(*key)
                    except ValueError:
                        self._abort()
                        raise
                    r = self._route_cache[key] = (-1 if s is None else s, -1 if d is None else d, link.alpha, link.bw)
                sp[i], rp[i], alpha[i], bw[i] = r
        hs, hr = sp >= 0, rp >= 0
        in_turn = _repeats(sp[hs], len(self._send_free)) or _repeats(rp[hr], len(self._recv_free))
        return _Plan(src, dst, sp, rp, alpha, bw, bool(hs.all() and hr.all()), in_turn)


class _Plan(NamedTuple):
    """Messages src -> dst with their ports (-1: none) and links, as Comm._port_times needs them."""

    src: np.ndarray
    dst: np.ndarray
    sp: np.ndarray
    rp: np.ndarray
    alpha: object  # one value or an array
    bw: object
    all_ports: bool  # every message holds a send and a receive port
    in_turn: bool  # a port appears twice: the messages must be timed one by one


def _repeats(ports, n_ports) -> bool:
    """Does a port id occur twice?"""
    return len(ports) > 1 and int(np.bincount(ports, minlength=n_ports).max()) > 1


# ---------------------------------------------------------------------------------------
# Ring building blocks (one place decides which chunk a device sends at each ring step)
# ---------------------------------------------------------------------------------------
# All n sends of a ring step are timed at once (d -> d+1 holds distinct ports), a phase of
# n−1 steps is recorded in one call, and the data moves as whole-array operations, so a step
# costs a few numpy operations however large n is. ring_rs_chunk / ring_ag_chunk work on
# arrays as on numbers.
def ring_rs_chunk(d, k, n):
    """Reduce-scatter, step k: device d sends (its partial of) chunk (d - k) mod n to d + 1."""
    return (d - k) % n


def ring_ag_chunk(d, k, n, first):
    """All-gather, step k: device d forwards the chunk its ring predecessor owned k steps back."""
    return first[(d - k) % n]


def _bounds(length, n):
    """Start offsets of n nearly equal chunks (np.array_split's rule), plus the end."""
    return np.asarray(chunk_bounds(length, n), dtype=np.int64)


def _move(bufs, bounds, src, dst, chunks, add):
    """
    Row dst[i] of bufs gets chunk chunks[i] of row src[i] (added when `add`). No (dst, chunk)
    repeats and no step reads what it writes, so this equals doing the messages one by one.
    """
    lo = bounds[chunks]
    lens = bounds[chunks + 1] - lo
    if len(lens) and (lens == lens[0]).all():  # equal chunks: one 2-D fancy index per side
        cols = lo[:, None] + np.arange(lens[0])
        rs, rd = src[:, None], dst[:, None]
    else:
        cols = np.repeat(lo - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
        rs, rd = np.repeat(src, lens), np.repeat(dst, lens)
    if add:
        bufs[rd, cols] += bufs[rs, cols]
    else:
        bufs[rd, cols] = bufs[rs, cols]


def _ring_reduce_scatter(comm, bufs, bounds, ready, step0=0, phase="reduce-scatter"):
    """
    n−1 steps on the rows of `bufs` (n, L) in place. ready[d]: when device d's partials exist
    (all of them); or ready[d, c]: when its partial of chunk c exists (a matmul computed chunk
    by chunk, the collective matmul). At step k device d sends chunk (d−k) mod n, the sum of
    devices d−k … d (a ring arc), to d+1, which adds it: it starts once its own partial of that
    chunk exists, what it forwards has arrived and both ports are free. Afterwards device d
    holds chunk (d+1) mod n complete. Returns when that chunk is complete on every device
    (seconds, per device).
    """
    n = comm.n
    d, steps = np.arange(n), np.arange(n - 1)
    plan = comm._plan(d, (d + 1) % n)  # the same ports every step
    chunk = ring_rs_chunk(d[None, :], steps[:, None], n)  # [step, device]
    ready = np.asarray(ready, dtype=float)
    per_chunk = ready.ndim == 2
    b = (bounds[chunk + 1] - bounds[chunk]) * bufs.itemsize * comm.byte_scale
    start, end = np.empty(b.shape), np.empty(b.shape)
    prev = (d - 1) % n
    got = np.full(n, -np.inf)  # when device d received its last chunk
    for k in steps:  # a step needs the chunk received in the step before
        own = ready[d, chunk[k]] if per_chunk else ready
        start[k], end[k] = comm._port_times(plan, b[k], np.maximum(own, got))
        got = end[k][prev]
    comm._record(step0 + steps[:, None], d, (d + 1) % n, chunk, b, start, end,
                 (chunk, steps[:, None] + 1, n, n), phase, True)
    _ring_sums(bufs, bounds, n)  # the bytes really move, and are added
    return np.maximum(ready[d, (d + 1) % n] if per_chunk else ready, got)


def _ring_sums(bufs, bounds, n):
    """
    What the n−1 reduce-scatter steps leave in `bufs`, in place: chunk c travels c, c+1, …,
    and device c+i adds its own partial to what arrived, so it holds the sum over devices
    c … c+i, accumulated in that order (np.add.accumulate adds one term at a time, exactly as
    the messages do).
    """
    lens = np.diff(bounds)
    if not len(lens) or not (lens == lens[0]).all():  # uneven chunks: step by step
        d = np.arange(n)
        for k in range(n - 1):
            c = ring_rs_chunk(d, k, n)
            _move(bufs, bounds, d, (d + 1) % n, c, add=True)
        return
    q = int(lens[0])
    # Chunk c's path visits devices c, c+1, …: in two stacked copies of the buffers it is the
    # skewed diagonal [c + i, c], a strided view, so the sums need no gather and no scatter.
    two = np.concatenate([bufs, bufs]).reshape(2 * n, n, q)  # [device (twice), chunk, element]
    rs, cs, es = two.strides
    path = np.lib.stride_tricks.as_strided(two, shape=(n, n, q), strides=(rs + cs, rs, es))  # [chunk, hop]
    np.add.accumulate(path, axis=1, out=path)
    # device d is hop d − c of chunk c's path: for chunks c <= d row d of the first copy, for
    # c > d (the path wrapped past n−1) row d + n; each is one contiguous run of the row
    rows = two.reshape(2 * n, n * q)
    for d in range(n):
        bufs[d, :(d + 1) * q] = rows[d, :(d + 1) * q]
        bufs[d, (d + 1) * q:] = rows[d + n, (d + 1) * q:]


def _ring_all_gather(comm, bufs, bounds, have, first, who, step0=0, phase="all-gather"):
    """
    n−1 steps on `bufs` (n, L) in place: device d starts with chunk first[d] complete from
    time have[d], its contributors the descriptor who (arrays over d, or one set), and ends with every
    chunk. At step k device d forwards the chunk its predecessor d−k started with.
    """
    n = comm.n
    d, steps = np.arange(n), np.arange(n - 1)
    plan = comm._plan(d, (d + 1) % n)
    origin = (d[None, :] - steps[:, None]) % n  # [step, device]: whose chunk d forwards
    chunk = ring_ag_chunk(d[None, :], steps[:, None], n, first)
    b = (bounds[chunk + 1] - bounds[chunk]) * bufs.itemsize * comm.byte_scale
    start, end = np.empty(b.shape), np.empty(b.shape)
    prev = (d - 1) % n
    ready = np.asarray(have, dtype=float)
    for k in steps:  # the next step forwards what just landed
        start[k], end[k] = comm._port_times(plan, b[k], ready)
        ready = end[k][prev]
    comm._record(step0 + steps[:, None], d, (d + 1) % n, chunk, b, start, end,
                 tuple(w[origin] if np.ndim(w) else w for w in who), phase, False)
    # the bytes really move: in the end every device has every chunk of the device it started on
    row_of_chunk = np.empty(n, dtype=np.int64)
    row_of_chunk[first] = d
    cols = np.arange(bufs.shape[1])
    bufs[:] = bufs[np.repeat(row_of_chunk, np.diff(bounds)), cols]


def _each_alone(n):
    """Device d's own data, for every d: the descriptors of {0}, {1}, …, {n−1}."""
    return (np.arange(n), np.ones(n, dtype=np.int64), np.full(n, n), np.full(n, n))


# ---------------------------------------------------------------------------------------
# One-shot building blocks: every message of a phase is issued at once, each to its final
# receiver, so the phase pays α once and its ports stream the bytes back to back.
# ---------------------------------------------------------------------------------------
def _direct_reduce_scatter(comm, bufs, bounds, ready, step0=0, phase="one-shot reduce-scatter"):
    """
    One-shot reduce-scatter on `bufs` (n, L) in place: device c owns chunk c. In round j
    (1 .. n−1) device d sends its partial of chunk (d + j) mod n straight to that chunk's owner,
    so in every round each receive port hears from one sender. Returns when every owner's sum
    is complete (seconds, per device); its contributors are then everyone.
    """
    n = comm.n
    d = np.arange(n)
    ready = np.asarray(ready, dtype=float)
    done = ready.copy()
    for j in range(1, n):
        c = (d + j) % n
        nbytes = (bounds[c + 1] - bounds[c]) * bufs.itemsize
        t = comm.send_batch(d, c, nbytes, ready, step0 + j - 1, c, (d, 1, n, n), phase, True)
        _move(bufs, bounds, d, c, c, add=True)  # d never sends its own chunk d: an untouched partial
        done[c] = np.maximum(done[c], t)
    return done


def _direct_all_gather(comm, bufs, bounds, ready, first, who, step0=0, phase="one-shot all-gather"):
    """
    One-shot all-gather on `bufs` (n, L) in place: device d holds chunk first[d] complete (its
    contributors the descriptor who[d]) from time ready[d] and sends it straight to every
    other device, to (d + j) mod n in round j (1 .. n−1).
    """
    n = comm.n
    d = np.arange(n)
    c = np.asarray(first)
    nbytes = (bounds[c + 1] - bounds[c]) * bufs.itemsize
    for j in range(1, n):
        dst = (d + j) % n
        comm.send_batch(d, dst, nbytes, ready, step0 + j - 1, c, who, phase, False)
        _move(bufs, bounds, d, dst, c, add=False)


def _ring_ready(comm, chunk_ready):
    """
    When each device's partials exist, for _ring_reduce_scatter: comm.ready per device, or
    chunk_ready[d][c] per device and chunk when given. The collective then starts with the
    first chunk (its min is _begin's t0): the chunks computed first go out while the last are
    still being computed.
    """
    n = comm.n
    if chunk_ready is None:
        return np.array(comm.ready)
    try:
        ready = np.array(chunk_ready, dtype=float)
    except (TypeError, ValueError):
        ready = None
    if ready is None or ready.shape != (n, n):
        raise ValueError(f"chunk_ready must give {n} times for each of the {n} devices")
    if not np.isfinite(ready).all():
        raise ValueError("chunk_ready must hold finite times (seconds)")
    return ready


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


def _gather_inputs(comm, chunks, owner, what):
    """(bufs, bounds, first) for an all-gather: chunk first[d] of bufs[d] holds chunks[d]."""
    n = comm.n
    if len(chunks) != n:
        raise ValueError(f"{what}: got {len(chunks)} chunks for {n} devices")
    first = [int(owner[d]) for d in range(n)]
    if sorted(first) != list(range(n)):
        raise ValueError(f"{what}: owner must give every chunk index 0..{n - 1} once, got {first}")
    lengths = [0] * n
    for d in range(n):
        lengths[first[d]] = len(chunks[d])
    bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(int)
    bufs = np.zeros((n, int(bounds[-1])), dtype=np.result_type(*chunks))
    for d in range(n):
        bufs[d, bounds[first[d]]:bounds[first[d] + 1]] = chunks[d]
    return bufs, bounds, first


def _scatter_inputs(comm, arrays, what):
    """(bufs, bounds) for a reduce-scatter: 1-D arrays whose length n divides."""
    n = comm.n
    _check_arrays(arrays, n, what)
    L = len(arrays[0])
    if L % n:
        raise ValueError(f"{what}: length {L} is not divisible by {n} devices")
    return _stack(arrays), _bounds(L, n)


# ---------------------------------------------------------------------------------------
# All-gather and reduce-scatter
# ---------------------------------------------------------------------------------------
def allgather_ring(comm, chunks, owner, label=""):
    """
    Ring all-gather. chunks[d]: device d's 1-D chunk; owner[d]: the chunk index it holds (a
    permutation of 0..n-1). Returns, for every device, all chunks concatenated in chunk-index
    order (1-D, length = sum of chunk lengths).

    n−1 steps; at step k every device forwards to (d+1) mod n the chunk it received at step
    k−1 (its own at step 0). Each step waits for the previous step's chunk, so every step pays
    α: time (n−1)·(α + S/(n·β)), chunks of S/n bytes (Thakur, Rabenseifner & Gropp 2005).
    """
    n = comm.n
    bufs, bounds, first = _gather_inputs(comm, chunks, owner, "all-gather")
    comm._begin("all-gather", "ring", label, n, bufs[0].nbytes, Initial.own_one(first))
    _ring_all_gather(comm, bufs, bounds, np.array(comm.ready), np.asarray(first), _each_alone(n), phase="all-gather")
    comm._end()
    return [bufs[d] for d in range(n)]


def allgather_direct(comm, chunks, owner, label=""):
    """
    One-shot all-gather (same arguments and result as allgather_ring). Every device sends its
    chunk straight to every other device, to (d + j) mod n in round j: n−1 messages of S/n
    queue on each send port, all issued at once. Time: α + (n−1)·S/(n·β).
    """
    n = comm.n
    bufs, bounds, first = _gather_inputs(comm, chunks, owner, "all-gather")
    comm._begin("all-gather", "direct", label, n, bufs[0].nbytes, Initial.own_one(first))
    _direct_all_gather(comm, bufs, bounds, np.array(comm.ready), first, _each_alone(n))
    comm._end()
    return [bufs[d] for d in range(n)]


def reduce_scatter_ring(comm, arrays, label="", chunk_ready=None):
    """
    Ring reduce-scatter. arrays[d]: device d's 1-D partial array, length divisible by n.
    Returns (pieces, owner): after n−1 steps device r holds pieces[r], the full sum of chunk
    owner[r] = (r+1) mod n (length L/n).
    chunk_ready[d][c] (optional, seconds): when device d's partial of chunk c exists (a matmul
    computed chunk by chunk, the collective matmul); it replaces comm.ready for this call.

    At step k device d adds what it received to its own partial and passes chunk (d−k) mod n on.
    Time: (n−1)·(α + S/(n·β)), S = bytes of one input array (Thakur, Rabenseifner & Gropp 2005).
    """
    n = comm.n
    bufs, bounds = _scatter_inputs(comm, arrays, "reduce-scatter")
    ready = _ring_ready(comm, chunk_ready)
    comm._begin("reduce-scatter", "ring", label, n, bufs[0].nbytes, Initial.own_all(n, n),
                t0=None if chunk_ready is None else ready.min())
    _ring_reduce_scatter(comm, bufs, bounds, ready)
    comm._end()
    owner = {r: (r + 1) % n for r in range(n)}
    pieces = [bufs[r, bounds[owner[r]]:bounds[owner[r] + 1]].copy() for r in range(n)]
    return pieces, owner


def reduce_scatter_direct(comm, arrays, label=""):
    """
    One-shot reduce-scatter (same arguments as reduce_scatter_ring). Device r owns chunk r;
    every device sends its partial of chunk c straight to device c, all at once, and the
    owner adds the n−1 partials as they land. Returns (pieces, owner) with owner[r] = r.
    Time: α + (n−1)·S/(n·β).
    """
    n = comm.n
    bufs, bounds = _scatter_inputs(comm, arrays, "reduce-scatter")
    comm._begin("reduce-scatter", "direct", label, n, bufs[0].nbytes, Initial.own_all(n, n))
    _direct_reduce_scatter(comm, bufs, bounds, np.array(comm.ready))
    comm._end()
    owner = {r: r for r in range(n)}
    return [bufs[r, bounds[r]:bounds[r + 1]].copy() for r in range(n)], owner


# ---------------------------------------------------------------------------------------
# All-reduce algorithms: fn(comm, arrays, label="") -> list of summed arrays (1-D)
# ---------------------------------------------------------------------------------------
def allreduce_ring(comm, arrays, label="", chunk_ready=None):
    """
    Ring all-reduce = ring reduce-scatter, then ring all-gather of the reduced chunks.
    2(n−1) steps; each step every device sends one chunk of ≈S/n bytes to (d+1) mod n and the
    next step needs the chunk just received. Time: 2(n−1)·(α + S/(n·β)) (Thakur, Rabenseifner
    & Gropp 2005; NCCL's ring). Bandwidth-optimal; its latency grows linearly in n.
    Any length works: chunks follow np.array_split (the formula is exact when n divides it).
    chunk_ready[d][c] (optional): when device d's partial of chunk c exists, as in
    reduce_scatter_ring.
    """
    n = comm.n
    _check_arrays(arrays, n, "all-reduce")
    bufs = _stack(arrays)
    bounds = _bounds(bufs.shape[1], n)
    ready = _ring_ready(comm, chunk_ready)
    comm._begin("all-reduce", "ring", label, n, bufs[0].nbytes, Initial.own_all(n, n),
                t0=None if chunk_ready is None else ready.min())
    if n > 1:
        have = _ring_reduce_scatter(comm, bufs, bounds, ready)
        first = (np.arange(n) + 1) % n  # device d now holds chunk d+1 complete
        _ring_all_gather(comm, bufs, bounds, have, first, who_everyone(n), step0=n - 1)
    comm._end()
    return [bufs[d] for d in range(n)]


def allreduce_rd(comm, arrays, label=""):
    """
    Recursive doubling. In round k every device swaps its whole buffer with partner d XOR 2^k
    and adds: after log2(n) rounds everyone has the sum. Every round needs the last one's sum,
    and a round is a blocking exchange (MPI_Sendrecv with the rendezvous protocol of large
    messages): d sends once both d and its partner have finished the previous round.
    Time (n a power of two): log2(n)·(α + S/β) — few steps, but every step moves all S bytes.
    n not a power of two (p = largest power of two below n, r = n − p): first the r extra
    devices fold their buffer into device d − p, the p devices run recursive doubling, then
    the result is sent back: (log2(p) + 2)·(α + S/β) (Thakur, Rabenseifner & Gropp 2005).
    """
    n = comm.n
    _check_arrays(arrays, n, "all-reduce")
    bufs = _stack(arrays)
    comm._begin("all-reduce", "rd", label, 1, bufs[0].nbytes, Initial.own_all(n, 1))
    nb = bufs[0].nbytes
    p = 1 << (n.bit_length() - 1)
    ready = np.array(comm.ready)
    extra = np.arange(p, n)
    step = 0
    if p < n:  # fold the extras in
        t = comm.send_batch(extra, extra - p, nb, ready[extra], step, ALL, (extra, 1, n, n), "fold", True)
        bufs[extra - p] += bufs[extra]
        ready[extra - p] = np.maximum(ready[extra - p], t)
        step += 1
    d = np.arange(p)
    k = 1
    while k < p:
        partner = d ^ k
        snap = bufs[:p].copy()  # every device sends its pre-round buffer
        both = np.maximum(ready[d], ready[partner])  # a blocking exchange: both partners are in this round
        # d's sum so far: the aligned block of k devices around d, each with its folded extra
        t = comm.send_batch(d, partner, nb, both, step, ALL, who_block(d & ~(k - 1), k, p, n), f"round {step}", True)
        bufs[:p] += snap[partner]
        ready[:p] = np.maximum(ready[:p], t[partner])  # device e heard from e XOR k
        k <<= 1
        step += 1
    if p < n:  # send the result back to the extras
        comm.send_batch(extra - p, extra, nb, ready[extra - p], step, ALL, who_everyone(n), "unfold", False)
        bufs[extra] = bufs[extra - p]
    comm._end()
    return [bufs[d] for d in range(n)]


def allreduce_innet(comm, arrays, label=""):
    """
    In-network reduction (NVLink SHARP / NVLS, InfiniBand SHARP). The buffer is cut into n
    chunks that stream through the switch: every device sends chunk c up, the switch adds the
    n copies and multicasts the sum down to every device. Up-traffic uses only send ports,
    down-traffic only receive ports, so chunk c goes up while chunk c−1 comes down.
    Each port carries ≈S bytes (the ring's 2(n−1)/n·S) and α is paid once up, once down: the
    last chunk is up after α + S/β and down one chunk later,
    time 2α + (n+1)·S/(n·β) (NCCL's NVLS algorithm, NCCL 2.17+ docs).
    """
    n = comm.n
    _check_arrays(arrays, n, "all-reduce")
    bufs = _stack(arrays)
    bounds = _bounds(bufs.shape[1], n)
    comm._begin("all-reduce", "innet", label, n, bufs[0].nbytes, Initial.own_all(n, n))
    if n > 1:
        d, ready = np.arange(n), np.array(comm.ready)
        switch_ = np.full(n, SWITCH)
        total = bufs.sum(axis=0)  # what the switch's adders produce
        for c in range(n):
            lo, hi = bounds[c], bounds[c + 1]
            nbytes = (hi - lo) * bufs.itemsize
            up = comm.send_batch(d, switch_, nbytes, ready, c, c, (d, 1, n, n), "up", True)
            comm.send_batch(switch_, d, nbytes, up.max(), c + 1, c, who_everyone(n), "down", False)
            bufs[:, lo:hi] = total[lo:hi]
    comm._end()
    return [bufs[d] for d in range(n)]


def allreduce_direct(comm, arrays, label=""):
    """
    One-shot (direct): every device sends its whole buffer to every other device and adds
    what it receives. In round j device d sends to (d + j) mod n, so no receive port is
    shared within a round. All n−1 copies are issued at once: they queue on the send port and
    the last lands α after the port has streamed (n−1)·S bytes.
    Time: α + (n−1)·S/β — latency paid once, which is why inference engines use it for the
    small all-reduces of decode (TensorRT-LLM's and vLLM's custom all-reduce, "one-shot");
    its bytes, n/2 times the ring's, make it lose for large S.
    """
    n = comm.n
    _check_arrays(arrays, n, "all-reduce")
    src = _stack(arrays)
    bufs = src.copy()
    nb = src[0].nbytes
    comm._begin("all-reduce", "direct", label, 1, nb, Initial.own_all(n, 1))
    d, ready = np.arange(n), np.array(comm.ready)
    for j in range(1, n):
        dst = (d + j) % n
        comm.send_batch(d, dst, nb, ready, j - 1, ALL, (d, 1, n, n), f"round {j}", True)
        bufs[dst] += src[d]
    comm._end()
    return [bufs[d] for d in range(n)]


def allreduce_two_shot(comm, arrays, label=""):
    """
    Two-shot: a one-shot reduce-scatter (device d sends chunk c of ≈S/n bytes straight to its
    owner, device c, which adds the n−1 partials), then a one-shot all-gather (each owner sends
    its summed chunk straight to every other device). Two phases, α paid once in each; each
    port carries 2(n−1)/n·S bytes, like the ring. Time: 2α + 2(n−1)·S/(n·β)
    (TensorRT-LLM's and vLLM's custom all-reduce, "two-shot"). Steps: n−1 rounds of each phase.
    """
    n = comm.n
    _check_arrays(arrays, n, "all-reduce")
    bufs = _stack(arrays)
    bounds = _bounds(bufs.shape[1], n)
    comm._begin("all-reduce", "two-shot", label, n, bufs[0].nbytes, Initial.own_all(n, n))
    if n > 1:
        done = _direct_reduce_scatter(comm, bufs, bounds, np.array(comm.ready))
        _direct_all_gather(comm, bufs, bounds, done, np.arange(n), who_everyone(n), step0=n - 1)
    comm._end()
    return [bufs[d] for d in range(n)]


# ---------------------------------------------------------------------------------------
# The algorithm registry: one record per algorithm, read by t_formula, message_count, the
# app (names, sentences, formula panel), the CLI and the tests.
# ---------------------------------------------------------------------------------------
class Algorithm(NamedTuple):
    """
    One collective algorithm. Field [1] is the function (the lecture calls
    `ALLREDUCE_ALGOS[algo][1](comm, arrays)`).

    description    one line in English (CLI help, error messages)
    fn             the function: all-reduce fn(comm, arrays, label=""); all-gather
                   fn(comm, chunks, owner, label=""); reduce-scatter fn(comm, arrays, label="")
    closed_form    closed_form(n) -> (a, b): on one idle switch T = a·α + b·S/β (n may be a
                   numpy array; n = 1 costs nothing whatever a, b say)
    message_count  message_count(n) -> messages one call sends (n >= 2)
    phases         the phase names its messages carry, in order
    explain_key    key of its sentences (name, title, hint) in app/explain.py's ALGO_TEXT
    formula        formula(n) -> the closed form as written on a slide (plain text; α β S n)
    """

    description: str
    fn: Callable
    closed_form: Callable
    message_count: Callable
    phases: tuple
    explain_key: str
    formula: Callable


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
        ("reduce-scatter", "all-gather"), "ring-all-reduce", lambda n: "2(n − 1) · (α + S/(nβ))"),
    "rd": Algorithm(
        "recursive doubling: log2(n) rounds, swap the whole buffer with d XOR 2^k", allreduce_rd,
        lambda n: (_rd_rounds(n), _rd_rounds(n)), _rd_messages,
        ("fold", "round", "unfold"), "rd-all-reduce", _rd_formula),
    "innet": Algorithm(
        "in-network reduction (NVLS/SHARP): chunks reduced in the switch, multicast back", allreduce_innet,
        lambda n: (2 + 0 * n, (n + 1) / n), lambda n: 2 * n * n,
        ("up", "down"), "innet-all-reduce", lambda n: "2α + (n + 1)·S/(nβ)"),
    "direct": Algorithm(
        "one-shot (direct): everyone sends its whole buffer to everyone at once", allreduce_direct,
        lambda n: (1 + 0 * n, n - 1), lambda n: n * (n - 1),
        ("round",), "one-shot-all-reduce", lambda n: "α + (n − 1)·S/β"),
    "two-shot": Algorithm(
        "two-shot: one-shot reduce-scatter to chunk owners, then one-shot all-gather", allreduce_two_shot,
        lambda n: (2 + 0 * n, 2 * (n - 1) / n), lambda n: 2 * n * (n - 1),
        ("one-shot reduce-scatter", "one-shot all-gather"), "two-shot-all-reduce", lambda n: "2α + 2(n − 1)·S/(nβ)"),
}

ALLGATHER_ALGOS = {
    "ring": Algorithm(
        "ring: n-1 steps, each device forwards one chunk of S/n to d+1", allgather_ring,
        lambda n: (n - 1, (n - 1) / n), lambda n: n * (n - 1),
        ("all-gather",), "ring-all-gather", lambda n: "(n − 1) · (α + S/(nβ))"),
    "direct": Algorithm(
        "one-shot (direct): each device sends its chunk to everyone at once", allgather_direct,
        lambda n: (1 + 0 * n, (n - 1) / n), lambda n: n * (n - 1),
        ("one-shot all-gather",), "one-shot-all-gather", lambda n: "α + (n − 1)·S/(nβ)"),
}

REDUCE_SCATTER_ALGOS = {
    "ring": Algorithm(
        "ring: n-1 steps, each device adds and passes one chunk of S/n to d+1", reduce_scatter_ring,
        lambda n: (n - 1, (n - 1) / n), lambda n: n * (n - 1),
        ("reduce-scatter",), "ring-reduce-scatter", lambda n: "(n − 1) · (α + S/(nβ))"),
    "direct": Algorithm(
        "one-shot (direct): each device sends chunk c straight to its owner c", reduce_scatter_direct,
        lambda n: (1 + 0 * n, (n - 1) / n), lambda n: n * (n - 1),
        ("one-shot reduce-scatter",), "one-shot-reduce-scatter", lambda n: "α + (n − 1)·S/(nβ)"),
}

OPS = ("all-reduce", "all-gather", "reduce-scatter")
ALGORITHMS = {"all-reduce": ALLREDUCE_ALGOS, "all-gather": ALLGATHER_ALGOS, "reduce-scatter": REDUCE_SCATTER_ALGOS}


def algorithm(op, algo) -> Algorithm:
    """The registry record of `algo` for collective `op`; a clear ValueError for unknown ones."""
    if op not in ALGORITHMS:
        raise ValueError(f"unknown collective {op!r}; choose one of {', '.join(OPS)}")
    reg = ALGORITHMS[op]
    if algo not in reg:
        raise ValueError(f"unknown {op} algorithm {algo!r}; choose one of {', '.join(reg)}")
    return reg[algo]


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
    algorithm(op, algo)
    base = float(getattr(topology, "base", 0.0))
    t = _t_formula_on(topology, algo, S, op)
    return t + base if topology.n > 1 else t


def _t_formula_on(topology, algo, S, op):
    if isinstance(topology, Switch):
        return t_formula(algo, topology.n, S, topology.link.alpha, topology.link.bw, op=op)
    n = topology.n
    if n == 1:
        return 0.0
    if isinstance(topology, Nodes):
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
    if isinstance(topology, Torus) and len(topology.shape) == 1 and algo == "ring":
        return t_formula(algo, n, S, topology.link.alpha, topology.link.bw, op=op)
    raise ValueError(f"no closed form for {op} with algorithm {algo!r} on {topology.name}")


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
    """nccl-tests bus bandwidth: algbw × 2(n−1)/n (all-reduce) or × (n−1)/n (gather, scatter)."""
    factor = 2 * (n - 1) / n if op == "all-reduce" else (n - 1) / n
    return algbw(msg_bytes, t) * factor
