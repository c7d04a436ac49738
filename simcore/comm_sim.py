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

Topologies (simcore.topology): `switch(n, link)`, `nodes(n_nodes, per_node, intra, inter)`,
`torus(shape, link)`; links and their presets: simcore.links; the collective functions:
simcore.collectives; the algorithm registry and the closed forms: simcore.algorithms.
`Comm(topology)` asks a topology for n, link, n_ports and route(src, dst): the interface other
collectives (simcore.topo_collectives) build on, written out in simcore.topology.

Every collective returns real arrays and appends to `comm.trace` (see simcore.trace).
Sizes: S is always the *full* array's bytes (after byte_scale), as nccl-tests reports it:
the all-reduce input, the all-gather output, the reduce-scatter input.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

# comm_sim is the engine's public face: the lecture (shard_lab.py), README and the app import
# every name below from here (e.g. comm_sim.ALLREDUCE_ALGOS[algo][1](comm, arrays), comm_sim.LINKS,
# switch, nodes, torus, NVLINK4, t_formula, busbw). Each lives in its own module; keep them
# re-exported here.
from .algorithms import (ALGORITHMS, ALLGATHER_ALGOS, ALLREDUCE_ALGOS, OPS, REDUCE_SCATTER_ALGOS,  # noqa: F401
                         Algorithm, algbw, algorithm, busbw, message_count, t_formula, t_formula_on)
from .collectives import (allgather_direct, allgather_ring, allreduce_direct, allreduce_innet,  # noqa: F401
                          allreduce_rd, allreduce_ring, allreduce_two_shot, reduce_scatter_direct,
                          reduce_scatter_ring, ring_ag_chunk, ring_rs_chunk)
from .links import (IB_NDR400, LINKS, NCCL_RING_LL128_BASE, NVLINK3, NVLINK4, NVLINK5, PCIE4, PCIE5,  # noqa: F401
                    TPU_V4_ICI, TPU_V5E_ICI, LinkSpec)
from .topology import MAX_DEVICES, Nodes, Switch, Torus, nodes, switch, torus  # noqa: F401
from .trace import SWITCH, Collective, Compute, Initial, Trace


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

    def _use_topology(self, topology):
        """Time the next collectives on `topology`: the same devices and ports with other links
        and base latency (a GPU machine's NCCL protocol: topology.timed_as_machine). Returns the
        topology used before."""
        prev = self.topology
        self.topology, self.link, self.base = topology, topology.link, float(getattr(topology, "base", 0.0))
        self._route_cache = {}
        return prev

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
        or values (see simcore.contributors.who_arc). Records them; returns their arrival times.
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
