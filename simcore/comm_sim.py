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
from .algorithms import (ALGORITHMS, ALLGATHER_ALGOS, BLOCKS, CHUNKS, OPS,  # noqa: F401
                         REDUCE_SCATTER_ALGOS, Algorithm, algbw, algorithm, busbw, message_count, op_record,
                         slots_of, t_formula, t_formula_on)
from .collectives import (allgather_direct, allgather_ring, allreduce_direct, allreduce_innet,  # noqa: F401
                          allreduce_rd, allreduce_ring, allreduce_two_shot, reduce_scatter_direct,
                          reduce_scatter_ring, ring_ag_chunk, ring_rs_chunk)
from .links import (IB_NDR400, LINKS, NCCL_RING_LL128_BASE, NVLINK3, NVLINK4, NVLINK5, PCIE4, PCIE5,  # noqa: F401
                    TPU_V4_ICI, TPU_V5E_ICI, LinkSpec)
from .topology import MAX_DEVICES, Nodes, Switch, Torus, nodes, switch, torus  # noqa: F401
from .trace import SWITCH, Collective, Compute, Initial, Trace


def _lecture_runner(algo, fn):
    """fn of the registry's all-reduce `algo`, as the lecture calls it (fn(comm, arrays)): checked to run on
    the comm's topology (else one sentence naming those that can) and executing its plan there
    (simcore.plan: timed as the machine runs it, the plan on the trace's record)."""
    from .plan import execute, resolve
    from .registry import check_algo_on

    def run(comm, arrays, label=""):
        check_algo_on(comm.topology, "all-reduce", algo)
        with execute(comm, resolve(comm.topology, "all-reduce", np.asarray(arrays[0]).nbytes * comm.byte_scale,
                                   algo)):
            return fn(comm, arrays, label=label)
    run.__name__ = run.__qualname__ = getattr(fn, "__name__", algo)
    run.__doc__ = fn.__doc__
    return run


# The lecture's own dict (its all_reduce indexes ALLREDUCE_ALGOS[algo][1](comm, arrays)): every registered
# all-reduce algorithm — the one-switch ones first (simcore.algorithms.ALLREDUCE_ALGOS, the lecture's menu),
# then the machines' (hier, tree, ring-nodes, torus) — each running its plan on the comm's topology, so
# the lecture file run on a machine reaches them; one that cannot run there says which can.
ALLREDUCE_ALGOS = {k: rec._replace(fn=_lecture_runner(k, rec.fn)) for k, rec in ALGORITHMS["all-reduce"].items()}

# Called with every new Comm (python -m simcore record collects a script's Comms through it).
_on_new_comm: list = []


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
        # what the trace needs to judge time later (simcore.check): the main link's α and β
        self.trace.meta["link"] = {"name": getattr(self.link, "name", ""), "alpha": float(self.link.alpha),
                                   "bw": float(self.link.bw)}
        for hook in _on_new_comm:
            hook(self)

    # -- the public way to write a collective --------------------------------------------
    def collective(self, op: str, algo: str = "custom", n_chunks: int | None = None, nbytes: float = 0.0,
                   label: str = "", initial=None, t0: float | None = None) -> CollectiveCall:
        """
        Record one collective written by hand:

            with comm.collective("all-reduce", algo="my-ring", n_chunks=n, nbytes=S) as c:
                t = c.send(src, dst, nbytes, ready, step=k, chunk=j, reduce=True)   # arrival (s)

        op: "all-reduce", "all-gather", "reduce-scatter" (or any name; simcore.check knows those
        three); algo: your algorithm's name (a registered one, e.g. "ring", lets simcore.check
        compare with its closed form); n_chunks: slots each device's buffer is cut into
        (default n); nbytes: S, the full array's bytes before byte_scale (the all-reduce input,
        the all-gather output); label: shown in the app (e.g. "layer 0 attn").
        initial: what each device holds before the first message, as per-device dicts
        {chunk: set of devices}; default: for an all-gather device d holds chunk d (its shard),
        for every other op every device holds every chunk of its own data.
        t0: when the collective starts (default: when the first device is ready, c.t0).

        The Comm keeps each chunk's contributors from what is sent: a copy (reduce=False) gives
        the receiver the sender's contributors, a reduce (reduce=True) unites them, so the trace
        shows partial sums without book-keeping. You move the numpy data yourself. An exception
        inside the `with` leaves the Comm as it was before it (no messages, ports, clock).
        """
        return CollectiveCall(self, op, algo, n_chunks, nbytes, label, initial, t0)

    def _use_topology(self, topology):
        """Time the next collectives on `topology`: the same devices and ports with other links
        and base latency (a GPU machine's NCCL protocol: topology.timed_as_machine). Returns the
        topology used before."""
        prev = self.topology
        self.topology, self.link, self.base = topology, topology.link, float(getattr(topology, "base", 0.0))
        self._route_cache = {}
        return prev

    def _plan_of(self, op, algo):
        """The essentials of the plan this collective executes (simcore.plan.execute), else None."""
        p = getattr(self, "_executing", None)
        return p if p is not None and p.op == op and p.algo == algo else None

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
            self._first, len(self.trace.messages), initial, self._plan_of(op, algo)))
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
        or values (simcore/contributors.py says the form). Records them; returns their arrival times.
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
        if plan.in_turn and plan.all_ports:
            rounds = plan.rounds if plan.rounds is not None else _round_groups(plan.sp, plan.rp)
            if rounds:  # every port keeps one partner: messages in chains, timed in rounds
                return self._port_rounds(plan, b, ready, rounds)
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

    def _port_chains(self, plan, b, ready):
        """
        _port_times for M port pairs (plan: no port twice, every message holding two ports)
        each carrying F messages back to back (b: M × F bytes after byte_scale, all of a pair's
        data ready at ready[i]): the first starts when its data and ports are ready, each next
        one when the previous has passed (the ports' FIFO), as the sums one by one would give
        (np.cumsum adds in order). Returns (start, end), M × F.
        """
        M = b.shape[0]
        ready = np.broadcast_to(np.asarray(ready, dtype=float), (M,))
        if self._not_before > -math.inf:
            ready = np.maximum(ready, self._not_before)
        bw = np.asarray(plan.bw, dtype=float)
        busy = b / (bw[:, None] if bw.ndim else bw)
        sp, rp = plan.sp, plan.rp
        steps = np.empty(b.shape)
        steps[:, 0] = np.maximum(np.maximum(ready, self._send_free[sp]), self._recv_free[rp])
        steps[:, 1:] = busy[:, :-1]
        start = np.cumsum(steps, axis=1)
        free = start[:, -1] + busy[:, -1]
        self._send_free[sp] = free
        self._recv_free[rp] = free
        alpha = np.asarray(plan.alpha, dtype=float)
        return start, start + (alpha[:, None] if alpha.ndim else alpha) + busy

    def _port_rounds(self, plan, b, ready, rounds):
        """_port_times for messages whose send port always meets the same receive port: the
        r-th message of each port pair waits only for the (r−1)-th, so round r is one array step
        and the times equal _port_time's one by one (the same max and sums in the same order).
        rounds: _round_groups of the plan."""
        m = len(plan.src)
        alpha = np.broadcast_to(np.asarray(plan.alpha, dtype=float), (m,))
        busy = b / plan.bw
        start = np.empty(m)
        for idx, sp, rp in rounds:
            s = np.maximum(np.maximum(ready[idx], self._send_free[sp]), self._recv_free[rp])
            free = s + busy[idx]
            self._send_free[sp] = free
            self._recv_free[rp] = free
            start[idx] = s
        return start, start + alpha + busy

    # -- compute on the same clock ----------------------------------------------------------
    def compute(self, device, label, flops, nbytes, chip, prec="bf16", after=0.0, layer=-1, kind="", efficiency=1.0):
        """
        Run one op on `device`: `flops` FLOPs touching `nbytes` bytes of HBM, timed by its own
        roofline on `chip` (hw_specs.Chip): max(flops / chip.peak_flops(prec), nbytes / chip.mem_bw).

        It starts when the device is free — its previous op is done and the collective it
        depends on has delivered (both are `ready[device]`) — and not before `after`. The next
        collective waits for it (it moves `ready[device]`). Records a trace.Compute; returns
        its end time (seconds). Communication runs on the ports, so ops and messages overlap.
        efficiency (0, 1]: the fraction of peak FLOP/s the op reaches (step_sim's collective-matmul
        chunks run below the undivided matmul's peak); the trace keeps the op's real FLOPs.
        """
        if not 0 <= device < self.n:
            raise ValueError(f"device {device} does not exist (devices 0..{self.n - 1})")
        if not (flops >= 0 and nbytes >= 0 and math.isfinite(flops) and math.isfinite(nbytes)):
            raise ValueError(f"an op needs finite FLOPs and bytes >= 0, got {flops!r}, {nbytes!r}")
        if not 0 < efficiency <= 1:
            raise ValueError(f"efficiency must be in (0, 1], got {efficiency!r}")
        t_math, t_mem = flops / (chip.peak_flops(prec) * efficiency), nbytes / chip.mem_bw
        start = max(self.ready[device], after)
        end = start + max(t_math, t_mem)
        bound = "" if t_math == t_mem == 0 else ("math" if t_math > t_mem else "memory")
        self.trace.computes.append(Compute(device, label, float(flops), float(nbytes), start, end, layer, kind, bound))
        self.ready[device] = end
        self.time = max(self.time, end)
        return end

    def _plan(self, src, dst, rounds=False) -> _Plan:
        """The routes of messages src -> dst (arrays), ready to be timed by _port_times.
        rounds: work out the port model's rounds now (_round_groups), for a plan that times
        many batches (a ring's every step uses the same ports)."""
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        fast = getattr(self.topology, "routes", None)
        if fast is not None:
            try:
                sp, rp, alpha, bw = fast(src, dst)
            except ValueError:
                self._abort()
                raise
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
        plan = _Plan(src, dst, sp, rp, alpha, bw, bool(hs.all() and hr.all()), in_turn)
        if rounds and plan.in_turn and plan.all_ports:
            plan = plan._replace(rounds=_round_groups(sp, rp))
        return plan


class CollectiveCall:
    """
    One hand-written collective being recorded (`Comm.collective`; use it in a `with`).
        c.send(src, dst, nbytes, ready, step=k, chunk=j, reduce=False) -> arrival time (s)
        c.holds(d, chunk) -> frozenset of devices whose data device d's chunk sums (None: not held)
        c.t0     when the collective starts (s); c.ready[d]: when device d is free to start (s)
        c.n      devices; c.n_chunks chunks per device
    """

    def __init__(self, comm, op, algo, n_chunks, nbytes, label, initial, t0):
        n = comm.n
        self.comm, self.op, self.algo, self.label = comm, str(op), str(algo), str(label)
        self.n = n
        self.n_chunks = int(n if n_chunks is None else n_chunks)
        if self.n_chunks < 1:
            raise ValueError(f"n_chunks must be at least 1, got {n_chunks!r}")
        if not (nbytes >= 0 and math.isfinite(nbytes)):
            raise ValueError(f"nbytes must be a finite number >= 0, got {nbytes!r}")
        if initial is None:
            if self.op == "all-gather" and self.n_chunks == n:
                initial = Initial.own_one(list(range(n)))
            else:
                initial = Initial.own_all(n, self.n_chunks)
        elif not isinstance(initial, Initial):
            if len(initial) != n:
                raise ValueError(f"initial must give what each of the {n} devices holds, got {len(initial)}")
            initial = [{int(ch): frozenset(int(w) for w in who) for ch, who in dict(h).items()} for h in initial]
        self._initial, self._nbytes, self._t0 = initial, float(nbytes), t0
        self._held = None

    def __enter__(self) -> CollectiveCall:
        comm = self.comm
        if comm._coll is not None:
            raise RuntimeError("a collective is already being recorded on this Comm: one at a time")
        init = self._initial
        self._held = {d: dict(init[d]) for d in range(self.n)}
        self._held[SWITCH] = {}
        self.ready = list(comm.ready)
        comm._begin(self.op, self.algo, self.label, self.n_chunks, self._nbytes, init, t0=self._t0)
        self.t0 = comm._t0
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.comm._end()
        elif self.comm._coll is not None:
            self.comm._abort()
        return False

    def holds(self, d: int, chunk: int):
        """The devices whose data device d's chunk sums so far (None: d does not hold it)."""
        return self._held[d].get(chunk)

    def send(self, src: int, dst: int, nbytes: float, ready: float, step: int = 0, chunk: int = 0,
             reduce: bool = False, phase: str = "") -> float:
        """
        Send chunk `chunk` of src (nbytes before byte_scale) to dst; its data exists on src at
        `ready` (s). reduce=True: dst adds it to its own chunk; False: dst stores a copy.
        Returns when its last byte lands on dst (seconds), by the port model (Comm docstring).
        step: 0-based, which step of your algorithm this message belongs to (the app steps by it).
        """
        if self.comm._coll is None:
            raise RuntimeError("c.send is only valid inside `with comm.collective(...) as c:`")
        for name, d in (("src", src), ("dst", dst)):
            if not (d == SWITCH or 0 <= d < self.n):
                raise ValueError(f"{name} {d} is not a device (devices 0..{self.n - 1})")
        if src == dst:
            raise ValueError(f"device {src} cannot send to itself")
        if not 0 <= chunk < self.n_chunks:
            raise ValueError(f"chunk {chunk} does not exist (chunks 0..{self.n_chunks - 1})")
        if not (nbytes >= 0 and math.isfinite(nbytes)):
            raise ValueError(f"nbytes must be a finite number >= 0, got {nbytes!r}")
        if step < 0:
            raise ValueError(f"steps count from 0, got {step}")
        who = self._held[src].get(chunk) or frozenset()
        if reduce:
            mine = self._held[dst].get(chunk) or frozenset()
            self._held[dst][chunk] = mine | who
        else:
            self._held[dst][chunk] = who
        return self.comm.send(int(src), int(dst), float(nbytes), float(ready), int(step), int(chunk), who,
                              phase=phase, reduce=bool(reduce))


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
    rounds: object = None  # _round_groups(sp, rp) when worked out once for many batches (None: not yet)


def _pair_rounds(sp, rp):
    """For messages on port pairs (sp, rp) in issue order: each one's index among the earlier
    messages of its pair, or None when a port meets two partners (then one by one)."""
    pair = sp * (int(rp.max()) + 1) + rp
    uniq, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    if len(np.unique(sp[first])) != len(uniq) or len(np.unique(rp[first])) != len(uniq):
        return None
    order = np.argsort(inverse, kind="stable")
    counts = np.bincount(inverse)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    rounds = np.empty(len(sp), dtype=np.int64)
    rounds[order] = np.arange(len(sp)) - starts
    return rounds


def _round_groups(sp, rp):
    """_pair_rounds as the port model walks them: round by round, (message indices, their send
    ports, their receive ports); () when a port meets two partners."""
    rounds = _pair_rounds(sp, rp)
    if rounds is None:
        return ()
    order = np.argsort(rounds, kind="stable")
    cuts = np.searchsorted(rounds[order], np.arange(1, int(rounds.max()) + 1))
    return tuple((idx, sp[idx], rp[idx]) for idx in np.split(order, cuts))


def _repeats(ports, n_ports) -> bool:
    """Does a port id occur twice?"""
    return len(ports) > 1 and int(np.bincount(ports, minlength=n_ports).max()) > 1
