"""The trace: an immutable record of every message and every collective a `Comm` ran.

The simulation runs first and writes the trace; the app only reads it. Everything the app
draws at simulated time t — which chunks each device holds, whose data is summed in them,
which blocks are in flight — is computed here from the trace and t alone, so stepping back,
scrubbing and exporting one frame cost the same as playing.

Records
    Message     one point-to-point transfer: src -> dst of chunk `chunk` (ALL = the whole
                buffer), carrying the sum of `contributors`' data, `nbytes` after byte_scale,
                occupying the sender's send port and the receiver's receive port for
                [t_start, t_end].
    Collective  one call of a collective (an all-reduce is one collective; its
                reduce-scatter and all-gather phases are steps of it).
    Compute     one op a device ran (a matmul, attention over the KV cache, a norm) with its
                FLOPs and HBM bytes, on the same clock as the messages (Comm.compute).

Device id SWITCH (-1) is the switch itself (in-network reduction sends to it and from it).
"""

from __future__ import annotations

import json
from typing import NamedTuple

SCHEMA = "shard-lab-trace"
SCHEMA_VERSION = 1
SWITCH = -1  # the switch as a message endpoint (in-network reduction)
ALL = -1  # chunk index meaning "the whole buffer"


class Message(NamedTuple):
    coll: int  # id of the collective this message belongs to
    op: str  # "all-gather" | "reduce-scatter" | "all-reduce"
    algo: str  # "ring" | "rd" | "innet" | "direct"
    label: str  # the caller's label, e.g. "layer 3 mlp"
    step: int  # step of the collective, 0-based
    src: int  # sending device (SWITCH for the switch)
    dst: int  # receiving device (SWITCH for the switch)
    chunk: int  # chunk index carried (ALL: the whole buffer)
    contributors: frozenset  # devices whose data is summed in the payload
    nbytes: float  # bytes on the wire, after byte_scale
    t_start: float  # seconds
    t_end: float  # seconds
    phase: str = ""  # e.g. "reduce-scatter", "all-gather", "up", "down", "fold"
    reduce: bool = False  # True: the receiver adds the payload; False: it stores a copy


class Collective(NamedTuple):
    id: int
    op: str
    algo: str
    label: str
    n: int  # devices taking part
    n_chunks: int  # chunks the buffer is cut into (slots the app draws per device)
    t_start: float
    t_end: float
    nbytes: float  # S: the full array's bytes (after byte_scale), nccl-tests' "size"
    n_steps: int
    first_msg: int  # messages [first_msg, last_msg) of trace.messages belong to it
    last_msg: int
    initial: tuple  # per device: tuple of (chunk, contributors) held before step 0


class Compute(NamedTuple):
    device: int
    label: str  # e.g. "qkv", "attention", "attn out 3/8"
    flops: float
    nbytes: float  # HBM bytes read and written
    t_start: float  # seconds
    t_end: float  # seconds: t_start + max(flops / peak, nbytes / HBM bandwidth)
    layer: int = -1  # transformer layer, -1 outside the layers (final norm, lm head)
    kind: str = ""  # "matmul" | "attention" | "norm" | ...
    bound: str = ""  # "math" or "memory": which term of the op's roofline set its time


class Trace:
    """Append-only during simulation; read-only for everyone else."""

    def __init__(self):
        self.messages: list[Message] = []
        self.collectives: list[Collective] = []
        self.computes: list[Compute] = []  # empty unless the caller recorded compute (Comm.compute)
        self._step_times: dict[int, list] = {}  # a collective is recorded once complete: safe to memoise

    def __len__(self):
        return len(self.messages)

    def __eq__(self, other):
        return (isinstance(other, Trace) and self.messages == other.messages
                and self.collectives == other.collectives and self.computes == other.computes)

    @property
    def t_end(self) -> float:
        return max(max((c.t_end for c in self.collectives), default=0.0),
                   max((c.t_end for c in self.computes), default=0.0))

    def messages_of(self, coll_id: int) -> list[Message]:
        c = self.collectives[coll_id]
        return self.messages[c.first_msg:c.last_msg]

    def collective_at(self, t: float) -> Collective | None:
        """The collective running at time t (the last one started at or before t)."""
        current = None
        for c in self.collectives:
            if c.t_start <= t:
                current = c
        return current

    def step_times(self, coll_id: int) -> list[tuple[float, float]]:
        """(first start, last end) of every step of a collective, in step order."""
        cached = self._step_times.get(coll_id)
        if cached is not None and len(cached) == self.collectives[coll_id].n_steps:
            return list(cached)
        c = self.collectives[coll_id]
        spans = [[float("inf"), float("-inf")] for _ in range(c.n_steps)]
        for m in self.messages_of(coll_id):
            s = spans[m.step]
            s[0] = min(s[0], m.t_start)
            s[1] = max(s[1], m.t_end)
        out = [tuple(s) for s in spans]
        self._step_times[coll_id] = out
        return list(out)

    # -- what each device holds ---------------------------------------------------------
    def holdings(self, coll_id: int, step: int | None = None, t: float | None = None) -> dict:
        """
        What every device holds in collective `coll_id`, after step `step` (all messages of
        steps <= step have arrived; step=-1 is the initial state) or at time t (messages with
        t_end <= t have arrived). Give one of step or t; neither means "at the end".

        Returns {device: {chunk: frozenset(contributors)}}; the switch (SWITCH) appears when the
        algorithm reduces in the network. A chunk held with every device as contributor is
        complete; fewer contributors is a partial sum (reduce) or not yet there (gather).
        """
        c = self.collectives[coll_id]
        state = {d: dict(h) for d, h in enumerate(c.initial)}
        for m in self.messages_of(coll_id):
            if step is not None and m.step > step:
                continue
            if t is not None and m.t_end > t:
                continue
            _apply(state, m, c.n_chunks)
        return state

    def in_flight(self, t: float) -> list[Message]:
        """Messages on the wire at time t (t_start <= t < t_end)."""
        return [m for m in self.messages if m.t_start <= t < m.t_end]

    # -- serialization ------------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "version": SCHEMA_VERSION,
            "collectives": [_coll_to_dict(c) for c in self.collectives],
            "messages": [_msg_to_list(m) for m in self.messages],
            "message_fields": list(Message._fields),
            "computes": [list(c) for c in self.computes],
            "compute_fields": list(Compute._fields),
        }

    @classmethod
    def from_json(cls, text: str) -> Trace:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"not a trace file: {e}") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: dict) -> Trace:
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError(f"not a trace file (expected schema {SCHEMA!r})")
        if data.get("version") != SCHEMA_VERSION:
            raise ValueError(f"trace version {data.get('version')!r} is not supported (this is {SCHEMA_VERSION})")
        tr = cls()
        try:
            tr.messages = [_msg_from_list(row) for row in data["messages"]]
            tr.collectives = [_coll_from_dict(c) for c in data["collectives"]]
            tr.computes = [_compute_from_list(row) for row in data.get("computes", [])]
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"corrupt trace file: {e}") from None
        return tr

    def to_chrome(self) -> dict:
        """
        Chrome trace-event format (Perfetto, chrome://tracing): one process per device with a
        "send port" and a "recv port" track; each message is a send slice on the sender's
        send track and a recv slice on the receiver's recv track, joined by a flow arrow; each
        collective is a span on every taking-part device's "collective" track. Times in µs.
        """
        events = []
        devices = sorted({m.src for m in self.messages} | {m.dst for m in self.messages}
                         | {d for c in self.collectives for d in range(c.n)})
        for d in devices:
            name = "switch" if d == SWITCH else f"GPU {d}"
            pid = _pid(d)
            events.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": name}})
            events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid}})
            for tid, tname in ((0, "collective"), (1, "send port"), (2, "recv port")):
                events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": tname}})
        for c in self.collectives:
            for d in range(c.n):
                events.append({"ph": "X", "cat": "collective", "name": f"{c.op} ({c.algo}) {c.label}".strip(),
                               "pid": _pid(d), "tid": 0, "ts": c.t_start * 1e6,
                               "dur": (c.t_end - c.t_start) * 1e6,
                               "args": {"id": c.id, "bytes": c.nbytes, "n": c.n}})
        for i, m in enumerate(self.messages):
            what = "all" if m.chunk == ALL else m.chunk
            args = {"coll": m.coll, "step": m.step, "chunk": what, "bytes": m.nbytes,
                    "contributors": sorted(m.contributors), "label": m.label, "phase": m.phase}
            ts, dur = m.t_start * 1e6, (m.t_end - m.t_start) * 1e6
            dst = "switch" if m.dst == SWITCH else m.dst
            src = "switch" if m.src == SWITCH else m.src
            events.append({"ph": "X", "cat": "send", "name": f"send chunk {what} -> {dst}",
                           "pid": _pid(m.src), "tid": 1, "ts": ts, "dur": dur, "args": args})
            events.append({"ph": "X", "cat": "recv", "name": f"recv chunk {what} <- {src}",
                           "pid": _pid(m.dst), "tid": 2, "ts": ts, "dur": dur, "args": args})
            events.append({"ph": "s", "cat": "flow", "name": "msg", "id": i, "pid": _pid(m.src), "tid": 1, "ts": ts})
            events.append({"ph": "f", "cat": "flow", "name": "msg", "id": i, "bp": "e",
                           "pid": _pid(m.dst), "tid": 2, "ts": ts + dur})
        return {"traceEvents": events, "displayTimeUnit": "ns",
                "otherData": {"schema": SCHEMA, "version": SCHEMA_VERSION}}

    def to_csv(self) -> str:
        """One row per message; contributors joined with '+'."""
        rows = [",".join(Message._fields)]
        for m in self.messages:
            vals = list(m)
            vals[3] = '"' + m.label.replace('"', "'") + '"'
            vals[8] = "+".join(str(d) for d in sorted(m.contributors))
            vals[10], vals[11] = repr(m.t_start), repr(m.t_end)
            rows.append(",".join(str(v) for v in vals))
        return "\n".join(rows) + "\n"


def _apply(state: dict, m: Message, n_chunks: int):
    held = state.setdefault(m.dst, {})
    chunks = range(n_chunks) if m.chunk == ALL else (m.chunk,)
    for ch in chunks:
        if m.reduce:
            held[ch] = held.get(ch, frozenset()) | m.contributors
        else:
            held[ch] = m.contributors


def _pid(d: int) -> int:
    return 10_000 if d == SWITCH else d


def _msg_to_list(m: Message) -> list:
    row = list(m)
    row[8] = sorted(m.contributors)
    return row


def _msg_from_list(row) -> Message:
    if not isinstance(row, list) or len(row) != len(Message._fields):
        raise ValueError(f"message row has {len(row) if isinstance(row, list) else '?'} fields")
    row = list(row)
    row[8] = frozenset(int(d) for d in row[8])
    for i in (0, 4, 5, 6, 7):
        row[i] = int(row[i])
    for i in (9, 10, 11):
        row[i] = float(row[i])
    row[13] = bool(row[13])
    return Message(*row)


def _compute_from_list(row) -> Compute:
    if not isinstance(row, list) or len(row) != len(Compute._fields):
        raise ValueError(f"compute row has {len(row) if isinstance(row, list) else '?'} fields")
    d, label, flops, nbytes, t0, t1, layer, kind, bound = row
    return Compute(int(d), str(label), float(flops), float(nbytes), float(t0), float(t1), int(layer), str(kind),
                   str(bound))


def _coll_to_dict(c: Collective) -> dict:
    d = c._asdict()
    d["initial"] = [[[ch, sorted(who)] for ch, who in sorted(h)] for h in c.initial]
    return d


def _coll_from_dict(d: dict) -> Collective:
    d = dict(d)
    d["initial"] = tuple(tuple((int(ch), frozenset(who)) for ch, who in h) for h in d["initial"])
    for k in ("id", "n", "n_chunks", "n_steps", "first_msg", "last_msg"):
        d[k] = int(d[k])
    for k in ("t_start", "t_end", "nbytes"):
        d[k] = float(d[k])
    return Collective(**d)


def chunk_bounds(length: int, n_chunks: int):
    """Start offsets of n_chunks nearly equal chunks of a buffer (np.array_split's rule) plus the end."""
    q, r = divmod(length, n_chunks)
    out, pos = [0], 0
    for c in range(n_chunks):
        pos += q + (1 if c < r else 0)
        out.append(pos)
    return out


def buffer_values(holdings: dict, inputs, n_chunks: int):
    """
    The values in every device's buffer for a holdings state (see Trace.holdings).

    inputs: (n, L) array, row d = device d's buffer before the collective, laid out in chunk
    order (for an all-gather: zeros except the device's own chunk). A chunk held with
    contributors C contains sum(inputs[C]) over that chunk; a chunk not held is NaN.
    Returns an (n, L) float array. Because values follow from contributors alone, the app
    can show the buffers at any time t without replaying the collective.
    """
    import numpy as np

    inputs = np.asarray(inputs, dtype=float)
    n, L = inputs.shape
    out = np.full((n, L), np.nan)
    b = chunk_bounds(L, n_chunks)
    for d in range(n):
        for ch, who in holdings.get(d, {}).items():
            if who:
                out[d, b[ch]:b[ch + 1]] = inputs[sorted(who), b[ch]:b[ch + 1]].sum(axis=0)
    return out
