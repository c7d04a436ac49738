"""
The trace, asked by time: what the views read at simulated time t.

`TraceIndex(trace)` answers, for any t, in about constant time:
    stops                the step boundaries (seconds) over all collectives, 0 first: one per step,
                         or one per phase where an algorithm's steps run at once (two-shot's 14
                         "steps" end 0.3 µs apart: stepping showed nothing; concurrent_phases)
    display_collective   which collective to draw at t
    holdings(c, t)       {device: {chunk: contributors}} — equal to trace.holdings(c, t=t)
    held(c, t)           the same as arrays (simcore.holdings.Held: bitsets, counts, lowest
                         contributor): what the views read, so a frame at n = 256 never builds n² sets
    in_flight(t)         indices of messages on the wire at t
    bytes_moved(t)       bytes delivered by time t
It is a cache, not a second model: held replays the trace's messages with the engine's own rule
(simcore.holdings.arrive), the messages that land at one instant at once, memoised (the last
answer and 16 checkpoints per collective) so that playing forward costs only the new messages.
What the views show at t is resolved from it in one place: app.core.frame.frame_at.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping

import numpy as np

from simcore.holdings import Held, arrive
from simcore.trace import Trace

from .frame import DONE, IN_PROGRESS, NEXT, monotone_step_ends, step_of, time_eps

_ARRIVE_FIELDS = ("dst", "chunk", "reduce", "w0", "w1", "w2", "w3")


class TraceIndex:
    """Read-only answers about a Trace at time t (see module docstring)."""

    CHECKPOINTS = 16  # states kept per collective (scrubbing back replays at most 1/16 of it)

    def __init__(self, trace: Trace):
        self.trace = trace
        r = trace.rows()
        self.t_start = np.array(r["t_start"], dtype=float)
        self.t_end = np.array(r["t_end"], dtype=float)
        self.nbytes = np.array(r["nbytes"], dtype=float)
        self.t_total = trace.t_end
        self.eps = time_eps(self.t_total)
        # bytes delivered by time t: prefix sums over arrival times
        order = np.argsort(self.t_end, kind="stable")
        self._arrivals = self.t_end[order]
        self._cum_bytes = np.concatenate([[0.0], np.cumsum(self.nbytes[order])])
        # messages on the wire: sorted by start; none lasts longer than the longest
        self._by_start = np.argsort(self.t_start, kind="stable")
        self._starts_sorted = self.t_start[self._by_start]
        self._longest = float(np.max(self.t_end - self.t_start)) if len(self.t_start) else 0.0
        # steps: per collective, the end time of every step and the messages of every step
        self.step_ends: list[list[float]] = []
        self.step_msgs: list[list[np.ndarray]] = []
        steps = np.asarray(r["step"], dtype=np.int64)
        stops = {0.0}
        self._events = []
        keys = np.asarray(r["key"], dtype=np.int64)
        self.phase_ends: list[list[float]] = []  # per collective stepped by phase: its phases' ends, else []
        for c in trace.collectives:
            ends = monotone_step_ends(trace.step_times(c.id)) if c.n_steps else []
            self.step_ends.append(ends)
            s = steps[c.first_msg:c.last_msg]
            by_step = np.argsort(s, kind="stable")
            cuts = np.searchsorted(s[by_step], np.arange(c.n_steps + 1))
            ids = by_step + c.first_msg
            self.step_msgs.append([ids[cuts[k]:cuts[k + 1]] for k in range(c.n_steps)])
            phases = concurrent_phases(c.op, c.algo)
            by_phase = self._phase_ends(trace, c, keys, phases) if phases and c.n_steps else []
            self.phase_ends.append(by_phase)
            stops.update(by_phase or ends)
            stops.add(c.t_end)
            # holdings: the collective's messages in arrival order (ties keep trace order)
            te = self.t_end[c.first_msg:c.last_msg]
            arr = np.lexsort((np.arange(len(te)), te))
            self._events.append((te[arr], arr + c.first_msg))
        self._index_computes(trace, stops)
        self.stops = sorted(stops)
        self.coll_starts = [c.t_start for c in trace.collectives]
        self.max_in_flight = _max_overlap(self.t_start, self.t_end)
        self._checkpoints: dict[int, dict[int, Held]] = {}  # coll -> {count: state}
        # (coll, count, state): the last two answers, extended forward cheaply (two: the frame
        # shown and the look-ahead of frame.next_frame, which alternate)
        self._cursors: list = []

    def _phase_ends(self, trace, c, keys: np.ndarray, phases: tuple) -> list[float]:
        """When each phase of collective c ends (its last message's arrival), in phase order; a
        message belongs to the registry phase its own phase name starts with ("round 3": "round")."""
        names = [k[3] for k in trace._keys]
        code_phase = np.array([next((j for j, p in enumerate(phases) if str(nm).startswith(p)), len(phases))
                               for nm in names], dtype=np.int64)
        of_msg = code_phase[keys[c.first_msg:c.last_msg]]
        te = self.t_end[c.first_msg:c.last_msg]
        ends = [float(te[of_msg == j].max()) for j in range(len(phases) + 1) if np.any(of_msg == j)]
        return monotone_step_ends([(e, e) for e in ends])

    def _index_computes(self, trace, stops: set):
        """Per device its ops by start time; every op's end is a stop, so stepping visits each op."""
        cs = trace.computes
        self.computes = cs
        self._ops = {}  # device -> (starts, ends, record indices), by start
        if not cs:
            return
        dev = np.array([c.device for c in cs])
        t0 = np.array([c.t_start for c in cs])
        t1 = np.array([c.t_end for c in cs])
        for d in np.unique(dev).tolist():
            sel = np.flatnonzero(dev == d)
            o = sel[np.argsort(t0[sel], kind="stable")]
            self._ops[d] = (t0[o], t1[o], o)
        stops.update(t1[t1 > t0].tolist())

    def computing(self, d: int, t: float):
        """The op device d is computing at t — under way, or the one that just ended at t — as its
        trace.Compute record, or None (idle, or in a collective)."""
        ops = self._ops.get(d)
        if ops is None:
            return None
        starts, ends, ids = ops
        i = int(np.searchsorted(starts, t - self.eps, side="left")) - 1  # the last op started before t
        if i < 0 or t > ends[i] + self.eps or ends[i] <= starts[i]:
            return None
        return self.computes[int(ids[i])]

    def op_number(self, d: int, rec) -> tuple[int, int]:
        """(j, J): rec (a record of device d) is d's j-th op, counted from 1, of its J, in start order."""
        starts, _ends, ids = self._ops[d]
        i = int(np.searchsorted(starts, rec.t_start - self.eps, side="left"))
        while i < len(ids) - 1 and self.computes[int(ids[i])] is not rec:  # ops that start together
            i += 1
        return i + 1, len(ids)

    def first_op(self, d: int):
        """Device d's first op (trace.Compute), or None."""
        ops = self._ops.get(d)
        return self.computes[int(ops[2][0])] if ops is not None else None

    # -- time -> collective and step ------------------------------------------------------
    def display_collective(self, t: float) -> int | None:
        """The collective to draw at t: the last one started before t (the first at its start)."""
        if not self.coll_starts:
            return None
        k = bisect.bisect_left(self.coll_starts, t - self.eps)
        return max(0, k - 1)

    # -- what is where ----------------------------------------------------------------------
    def _started_by(self, t: float, strict: bool) -> np.ndarray:
        """Indices of messages that may be on the wire at t (started by t, not before t − longest)."""
        lo = np.searchsorted(self._starts_sorted, t - self._longest, side="left")
        hi = np.searchsorted(self._starts_sorted, t, side="left" if strict else "right")
        return self._by_start[lo:hi]

    def in_flight(self, t: float) -> np.ndarray:
        """Indices of messages with t_start <= t < t_end (ascending)."""
        cand = self._started_by(t, strict=False)
        return np.sort(cand[self.t_end[cand] > t])

    def moving(self, t: float) -> np.ndarray:
        """Indices of messages strictly under way at t (t_start < t < t_end): what the view draws.
        At a step boundary the next step's blocks have not left yet, so the picture is clean."""
        cand = self._started_by(t, strict=True)
        return np.sort(cand[self.t_end[cand] > t])

    def bytes_moved(self, t: float) -> float:
        return float(self._cum_bytes[np.searchsorted(self._arrivals, t, side="right")])

    def holdings(self, coll: int, t: float) -> Mapping:
        """trace.holdings(coll, t=t): {device: {chunk: frozenset}}, each device decoded when first
        read (the same object while no message arrives). Views at large n read `held(coll, t)`."""
        return self.held(coll, t).mapping()

    def n_arrived(self, coll: int, t: float) -> int:
        """How many messages of `coll` have landed by t: `held(coll, t)` is a function of it."""
        return int(np.searchsorted(self._events[coll][0], t, side="right"))

    def held(self, coll: int, t: float) -> Held:
        """What every device holds in `coll` at t (messages with t_end <= t have arrived), as arrays.
        The same object is returned while no message arrives, so `is` tells a view nothing changed."""
        times, order = self._events[coll]
        count = int(np.searchsorted(times, t, side="right"))
        for cur in self._cursors:
            if cur[0] == coll and cur[1] == count:
                return cur[2]
        cur = max((c for c in self._cursors if c[0] == coll and c[1] < count), key=lambda c: c[1], default=None)
        every = max(256, -(-len(order) // self.CHECKPOINTS))
        cps = self._checkpoints.setdefault(coll, {})
        if cur is not None and cur[0] == coll and cur[1] < count and count - cur[1] <= every:
            start, state = cur[1], cur[2].copy()
        else:
            best = max((k for k in cps if k <= count), default=0)
            start, state = (best, cps[best].copy()) if best else (0, Held.initial(self.trace.collectives[coll]))
        j = start
        while j < count:  # apply in blocks that end on checkpoints
            stop = min(count, (j // every + 1) * every)
            self._arrive(state, order[j:stop])
            j = stop
            if j % every == 0 and j not in cps:
                cps[j] = state.copy()
        self._cursors = [(coll, count, state)] + self._cursors[:2]
        return state

    def _arrive(self, state: Held, ids: np.ndarray):
        """Messages `ids` (in this order) reach their receivers: the engine's rule on `state`."""
        if not len(ids):
            return
        lo, hi = int(ids.min()), int(ids.max()) + 1
        r = self.trace.rows(lo, hi)
        arrive(state, {f: np.asarray(r[f])[ids - lo] for f in _ARRIVE_FIELDS}, self.trace.explicit)

    def replay(self, coll: int) -> Iterator[tuple[Held | None, Held]]:
        """(before, after) for the start of `coll` (before None) and every instant messages land."""
        state = Held.initial(self.trace.collectives[coll])
        yield None, state
        times, order = self._events[coll]
        for ids in np.split(order, np.flatnonzero(np.diff(times) > 0) + 1):
            if len(ids):
                prev = state.copy()
                self._arrive(state, ids)
                yield prev, state


# In-network reduction pipelines its chunks up to the switch and back: its "steps" are one chunk's
# serialisation apart (tens of nanoseconds at small S), so it too is stepped by phase
PHASE_STEPPED = ("innet",)


def concurrent_phases(op: str, algo: str) -> tuple:
    """
    The phases to step through for an algorithm whose steps run at once: the registry's
    queues=True algorithms (one-shot/direct, two-shot: every send of a phase is issued together and
    waits for its port) and in-network reduction; () for the others (ring, recursive doubling,
    pairwise), stepped one step at a time.
    """
    from simcore.algorithms import ALGORITHMS

    rec = ALGORITHMS.get(op, {}).get(algo)
    if rec is None or not (rec.queues or algo in PHASE_STEPPED):
        return ()
    return tuple(rec.phases)


def _max_overlap(starts: np.ndarray, ends: np.ndarray) -> int:
    """Most intervals [start, end) open at one time."""
    if not len(starts):
        return 0
    ev = np.concatenate([np.stack([starts, np.ones_like(starts)], 1), np.stack([ends, -np.ones_like(ends)], 1)])
    ev = ev[np.lexsort((ev[:, 1], ev[:, 0]))]  # ends (-1) before starts (+1) at equal times
    return int(np.max(np.cumsum(ev[:, 1])))


def stop_of(index, c, t) -> tuple:
    """
    (k, K, state, phase) of collective c at t as every step text counts it (ring header, the
    explanation's heading, the status bar): the stop described (0-based: the one in progress or
    the one just ended), how many stops c has, NEXT / IN_PROGRESS / DONE, and the phase's key
    when c is stepped by phase (TraceIndex.phase_ends: two-shot, direct, in-network), else None.
    The key is the registry's phase name ('round', direct's only one, becomes the op's name);
    words.phase_word says it.
    """
    index = getattr(index, "index", index)
    ends = index.phase_ends[c.id] if c.id < len(getattr(index, "phase_ends", ())) else []
    if not ends:
        k, _done, state = step_of(index, c.id, t)
        return k, c.n_steps, state, None
    eps, K = index.eps, len(ends)
    done = bisect.bisect_right(ends, t + eps)
    k = min(bisect.bisect_left(ends, t - eps), K - 1)
    state = DONE if done > k else (NEXT if t <= c.t_start + eps else IN_PROGRESS)
    phases = concurrent_phases(c.op, c.algo)
    name = phases[k] if 0 <= k < len(phases) else ""
    return k, K, state, name if name and name != "round" else c.op
