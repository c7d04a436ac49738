"""The trace: an immutable record of every message and every collective a `Comm` ran.

The simulation runs first and writes the trace; the app only reads it. Everything the app
draws at simulated time t — which chunks each device holds, whose data is summed in them,
which blocks are in flight — is computed here from the trace and t alone, so stepping back,
scrubbing and exporting one frame cost the same as playing.

Records
    Message     one point-to-point transfer: src -> dst of chunk `chunk` (ALL = the whole
                buffer), carrying the sum of `contributors`' data, `nbytes` after byte_scale,
                sent at t_start and landed at t_end (seconds).
    Collective  one call of a collective (an all-reduce is one collective; its
                reduce-scatter and all-gather phases are steps of it).
    Compute     one op a device ran (a matmul, attention over the KV cache, a norm) with its
                FLOPs and HBM bytes, on the same clock as the messages (Comm.compute).

Device id SWITCH (-1) is the switch itself (in-network reduction sends to it and from it).

Storage. A ring all-reduce on n devices sends 2n(n−1) messages, and the partial sums they
carry grow to n contributors, so a set per message would cost n³. The messages are therefore
kept as numpy columns, one array per field (65 bytes a message), and a message's
contributors as four integers that describe the set the algorithms actually produce
(simcore/contributors.py says the form). `trace.messages` still reads as a sequence of `Message` records; each is
built when asked for and decodes its contributors only when `.contributors` is read.
Readers that want speed take the columns themselves: `trace.column("t_end", coll)`,
`trace.rows(lo, hi)`, `trace.contributor_counts()`.

Exports stream: write_chrome, write_json and write_csv take a path (gzipped when it ends in
.gz) or a file object and write block by block, never holding the whole file.

Where the parts live: the records in simcore.trace_records (imported from here), the
contributor descriptors in simcore.contributors, the file formats (writers and the JSON
reader) in simcore.trace_io; this module keeps the columns and the Trace that reads them.
"""

from __future__ import annotations

import gc
import io
import json
import os
from array import array
from collections.abc import Sequence

import numpy as np

from .contributors import as_arc, decode_who, Who
from .trace_records import (ALL, ROW, SCHEMA, SCHEMA_VERSION, SWITCH, Collective, Compute, Initial,  # noqa: F401
                            Message)  # (re-exported: the records' and the constants' public home is trace)

_FLUSH_EVERY = 4096  # scalar appends are buffered as tuples and written in blocks of this many
_BLOCK = 2048  # messages built at once when one is read by index


class Columns:
    """Messages [lo, hi) of a trace as read-only numpy arrays, one per field: block["src"]."""

    __slots__ = ("_cols", "lo", "hi")

    def __init__(self, cols, lo, hi):
        self._cols, self.lo, self.hi = cols, lo, max(lo, hi)

    def __getitem__(self, name) -> np.ndarray:
        v = self._cols[name][self.lo:self.hi]
        v.flags.writeable = False
        return v

    def __len__(self):
        return self.hi - self.lo


class MessageList(Sequence):
    """`trace.messages`: a read-only sequence of Message, built on demand from the columns."""

    __slots__ = ("_trace",)

    def __init__(self, trace):
        self._trace = trace

    def __len__(self):
        return self._trace.n_messages

    def __getitem__(self, i):
        tr = self._trace
        if type(i) is int and 0 <= i < tr._len and not tr._pending:  # the common case, first
            return tr._message(i)
        if isinstance(i, slice):
            lo, hi, step = i.indices(len(self))
            if step != 1:
                return [tr._message(j) for j in range(lo, hi, step)]
            return tr._messages(lo, hi)
        i = int(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("message index out of range")
        return tr._message(i)

    def __iter__(self):
        n = len(self)
        for lo in range(0, n, 8192):
            yield from self._trace._messages(lo, min(n, lo + 8192))

    def append(self, m: Message):
        """Record one message (the scalar writer; see Trace.add_message)."""
        self._trace.add_message(*m)

    def __eq__(self, other):
        if isinstance(other, MessageList):
            return self._trace._messages_equal(other._trace)
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self):
        return f"<{len(self)} messages>"


class Trace:
    """
    Append-only during simulation; read-only for everyone else.

    Reading: `messages` (a sequence of Message), `collectives` (a list of Collective),
    `computes` (a list of Compute: .device .label .flops .nbytes .t_start .t_end, filled by
    Comm.compute; a few thousand per step, so a plain list), `column(name)` (one
    column of every message as a read-only numpy array), `holdings`, `in_flight`, `step_times`.
    Writing: `add_message` (one message), `add_messages` (a whole step as arrays).
    """

    def __init__(self):
        self._cols = {name: np.empty(0, dtype=ROW[name]) for name in ROW.names}
        self._cap = 0
        self._len = 0
        self._pending: list[tuple] = []
        self._keys: list[tuple] = []  # (op, algo, label, phase) of a key code
        self._key_index: dict[tuple, int] = {}
        self._explicit = array("i")  # contributor sets that no descriptor covers, back to back
        self._explicit_index: dict[frozenset, tuple] = {}
        self._encoded: dict = {}  # a few recently encoded sets -> (n, descriptor)
        self._messages_view = MessageList(self)
        self.collectives: list[Collective] = []
        self.computes: list[Compute] = []  # empty unless the caller timed compute (Comm.compute)
        self.meta: dict = {}  # e.g. {"link": {"name", "alpha" (s), "bw" (bytes/s)}}: saved with the trace
        self._step_times: dict[int, list] = {}  # a collective is recorded once complete: safe to memoise
        self._blocks: dict[int, list] = {}  # a few blocks of built Message records (see _message)
        self.note = ""  # Trace.load: one sentence when only part of a too-large file was read

    # -- writing --------------------------------------------------------------------------
    def key(self, op: str, algo: str, label: str, phase: str) -> int:
        k = (op, algo, label, phase)
        code = self._key_index.get(k)
        if code is None:
            code = self._key_index[k] = len(self._keys)
            self._keys.append(k)
        return code

    def encode_who(self, who, n: int | None = None) -> tuple:
        """(first, count, period, limit) for a set of device ids (simcore/contributors.py's form); n: devices."""
        if isinstance(who, tuple) and len(who) == 4 and not isinstance(who, frozenset):
            return tuple(int(v) for v in who)
        if isinstance(who, Who):
            if who.desc[2] != 0:
                return who.desc
            who = who.get()
        memo = self._encoded.get(who)  # algorithms pass the same set objects again and again
        if memo is not None and memo[0] == n:
            return memo[1]
        desc = self._encode_new(who, n)
        if len(self._encoded) >= 4096:
            self._encoded.clear()
        self._encoded[who] = (n, desc)
        return desc

    def _encode_new(self, who, n):
        s = sorted(who)
        if n is None:  # an arc that wraps contains n−1, so the largest id tells n
            n = s[-1] + 1 if s else 1
        arc = as_arc(s, n)
        if arc is not None:
            return (arc[0], arc[1], n, n)
        if not s:
            return (0, 0, 1, 0)
        return self.encode_explicit(s)

    def encode_explicit(self, s: list) -> tuple:
        """The descriptor of the sorted device ids s (not empty, not a cyclic arc of 0..n−1):
        an explicit list, stored once per trace."""
        fs = frozenset(s)
        desc = self._explicit_index.get(fs)
        if desc is None:
            desc = (len(self._explicit), len(s), 0, 0)
            self._explicit.extend(s)
            self._explicit_index[fs] = desc
        return desc

    def encode_explicit_many(self, members: list, ends: list) -> list:
        """encode_explicit of many sorted lists at once: list i is members[ends[i−1]:ends[i]]
        (ends cumulative). Returns their descriptors, in order."""
        index, explicit, out, lo = self._explicit_index, self._explicit, [], 0
        for hi in ends:
            s = members[lo:hi]
            fs = frozenset(s)
            desc = index.get(fs)
            if desc is None:
                desc = index[fs] = (len(explicit), len(s), 0, 0)
                explicit.extend(s)
            out.append(desc)
            lo = hi
        return out

    def encode_explicit_rows(self, members) -> tuple:
        """Descriptors of many contributor sets of one size k at once (members: M × k device ids,
        each row one set), stored as explicit lists without a lookup each (simcore.mesh's ring
        partial sums, which are arcs of a group, not of 0..n−1): (first array, k, 0, 0)."""
        m = np.sort(np.asarray(members, dtype=np.int64), axis=1)
        M, k = m.shape
        off = len(self._explicit)
        self._explicit.frombytes(m.astype(np.dtype(f"i{self._explicit.itemsize}")).tobytes())
        return off + k * np.arange(M, dtype=np.int64), k, 0, 0

    def add_message(self, coll, op, algo, label, step, src, dst, chunk, contributors, nbytes, t_start, t_end,
                    phase="", reduce=False, n=None):
        """Record one message (fields as Message). contributors: a set, or a (first, count, period,
        limit) descriptor; n: the number of devices, so a set is stored in its shortest form."""
        w = self.encode_who(contributors, n)
        self._pending.append((coll, self.key(op, algo, label, phase), step, src, dst, chunk, nbytes, t_start,
                              t_end, reduce, w[0], w[1], w[2], w[3]))
        if len(self._pending) >= _FLUSH_EVERY:
            self.flush()

    def add_messages(self, coll, op, algo, label, phase, step, src, dst, chunk, nbytes, t_start, t_end, reduce,
                     who):
        """
        Record many messages at once (e.g. the n−1 steps of a ring phase), in row-major order.
        t_start: an array whose shape is that of the block; every other field an array that
        broadcasts to it, or one value. who: the contributors as (first, count, period, limit),
        each an array or one value.
        """
        self.flush()
        shape = np.shape(t_start)
        lo, hi = self.grow(int(np.prod(shape)))
        cols = self._cols
        for name, v in (("coll", coll), ("key", self.key(op, algo, label, phase)), ("step", step), ("src", src),
                        ("dst", dst), ("chunk", chunk), ("nbytes", nbytes), ("t_start", t_start), ("t_end", t_end),
                        ("reduce", reduce), ("w0", who[0]), ("w1", who[1]), ("w2", who[2]), ("w3", who[3])):
            cols[name][lo:hi].reshape(shape)[...] = v  # broadcast straight into the column

    def reserve(self, m: int):
        """Make room for m more messages (a writer that knows how many it will add)."""
        self.flush()
        self._resize(self._len + m)

    def _resize(self, cap: int):
        if cap > self._cap:
            for name, col in self._cols.items():
                new = np.empty(cap, dtype=col.dtype)
                new[:self._len] = col[:self._len]
                self._cols[name] = new
            self._cap = cap

    def grow(self, m: int) -> tuple[int, int]:
        """Room for m more messages: (lo, hi), the rows they go into."""
        need = self._len + m
        if need > self._cap:
            self._resize(max(need, 2 * self._cap, 1024))
        lo, self._len = self._len, need
        return lo, need

    def flush(self):
        """Write the rows added one at a time (add_message) into the columns."""
        if self._pending:
            pending, self._pending = self._pending, []
            lo, hi = self.grow(len(pending))
            for name, values in zip(ROW.names, zip(*pending)):
                self._cols[name][lo:hi] = values

    def truncate(self, m: int):
        """Forget every message from index m on (a collective that could not complete)."""
        self.flush()
        self._len = min(self._len, m)
        self._step_times.clear()
        self._blocks.clear()

    def compact(self):
        """Give back the spare capacity of the columns (call when the simulation is over)."""
        self.flush()
        if self._cap > self._len:
            self._cols = {name: col[:self._len].copy() for name, col in self._cols.items()}
            self._cap = self._len

    @classmethod
    def merge(cls, traces) -> Trace:
        """
        One trace of several runs one after another (python -m simcore record: every Comm a
        script made). Each trace's clock starts where the previous one ended (its own t = 0
        becomes the previous end), so the app plays the runs in the order they were made;
        collective ids and message indices are renumbered, labels and devices kept.
        """
        out = cls()
        offset = 0.0
        for tr in traces:
            tr.flush()
            m0, c0 = out._len, len(out.collectives)
            r = tr.rows()
            if len(r):
                keymap = np.array([out.key(*k) for k in tr._keys], dtype=np.int64)
                ex_off = len(out._explicit)
                out._explicit.extend(tr._explicit)
                lo, hi = out.grow(len(r))
                for name in ROW.names:
                    out._cols[name][lo:hi] = r[name]
                out._cols["key"][lo:hi] = keymap[r["key"]]
                out._cols["coll"][lo:hi] += c0
                out._cols["w0"][lo:hi] += np.where(r["w2"] == 0, ex_off, 0).astype(np.int32)
                out._cols["t_start"][lo:hi] += offset
                out._cols["t_end"][lo:hi] += offset
            out.collectives += [c._replace(id=c.id + c0, t_start=c.t_start + offset, t_end=c.t_end + offset,
                                           first_msg=c.first_msg + m0, last_msg=c.last_msg + m0)
                                for c in tr.collectives]
            out.computes += [op._replace(t_start=op.t_start + offset, t_end=op.t_end + offset) for op in tr.computes]
            if not out.meta and getattr(tr, "meta", None):
                out.meta = dict(tr.meta)
            offset += tr.t_end
        return out

    # -- reading: columns -------------------------------------------------------------------
    @property
    def n_messages(self) -> int:
        return self._len + len(self._pending)

    def rows(self, lo: int = 0, hi: int | None = None) -> Columns:
        """Messages [lo, hi) as read-only column arrays: rows(...)["t_end"] (fields: see ROW)."""
        self.flush()
        hi = self._len if hi is None else min(hi, self._len)
        return Columns(self._cols, lo, hi)

    def column(self, name: str, coll: int | None = None) -> np.ndarray:
        """One field of every message (or of collective `coll`'s) as a read-only array:
        coll, step, src, dst, chunk, nbytes, t_start, t_end, reduce (seconds, bytes)."""
        if coll is None:
            return self.rows()[name]
        c = self.collectives[coll]
        return self.rows(c.first_msg, c.last_msg)[name]

    def contributor_counts(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """len(m.contributors) of messages [lo, hi), without building a set."""
        r = self.rows(lo, hi)
        first, count, period, limit = (r[f].astype(np.int64) for f in ("w0", "w1", "w2", "w3"))
        explicit = period <= 0  # an explicit list or a channel ring's arc: count is its size
        period = np.where(explicit, 1, period)
        full, rem = np.divmod(limit, period)
        # members of [0, rem) in the arc [first, first + count) mod period
        lo_part = np.clip(np.minimum(first + count, rem) - first, 0, None)
        wrap = np.clip(np.minimum(first + count - period, rem), 0, None)
        out = full * count + lo_part + wrap
        return np.where(explicit, count, out)

    # -- reading: messages ------------------------------------------------------------------
    @property
    def messages(self) -> MessageList:
        return self._messages_view

    def _message(self, i: int) -> Message:
        """Message i. Readers go through messages in runs (a step, a collective in arrival
        order), so the records of the block of _BLOCK around i are built at once and the last
        few blocks kept: a bounded cache, not a second copy of the trace."""
        self.flush()
        b = i // _BLOCK
        block = self._blocks.get(b)
        if block is None or i - b * _BLOCK >= len(block):
            if len(self._blocks) >= 8:
                self._blocks.pop(next(iter(self._blocks)))
            block = self._blocks[b] = self._messages(b * _BLOCK, min(self._len, (b + 1) * _BLOCK))
        return block[i - b * _BLOCK]

    def _messages(self, lo: int, hi: int) -> list:
        self.flush()
        keys, ex, new, M = self._keys, self._explicit, tuple.__new__, Message
        out = []
        # Building many records at once would set off the cyclic garbage collector again and
        # again (each record is a new tracked object, none of them garbage): pause it meanwhile.
        paused = gc.isenabled()
        gc.disable()
        try:
            for r in zip(*(col[lo:hi].tolist() for col in self._cols.values())):
                op, algo, label, phase = keys[r[1]]
                out.append(new(M, (r[0], op, algo, label, r[2], r[3], r[4], r[5],
                                   Who((r[10], r[11], r[12], r[13]), ex), r[6], r[7], r[8], phase, r[9])))
        finally:
            if paused:
                gc.enable()
        return out

    def __len__(self):
        return self.n_messages

    def _messages_equal(self, other: Trace) -> bool:
        a, b = self.rows(), other.rows()
        if len(a) != len(b):
            return False
        plain = [f for f in ROW.names if f not in ("key", "w0", "w1", "w2", "w3")]
        if any(not np.array_equal(a[f], b[f]) for f in plain):
            return False
        # key codes are per trace: compare the (op, algo, label, phase) they stand for
        trans = np.array([self._key_index.get(k, -1) for k in other._keys] or [0], dtype=np.int64)
        if not np.array_equal(a["key"], trans[b["key"]]):
            return False
        wa = np.stack([a[f] for f in ("w0", "w1", "w2", "w3")], 1)
        wb = np.stack([b[f] for f in ("w0", "w1", "w2", "w3")], 1)
        differ = np.flatnonzero(np.any(wa != wb, axis=1) | (wa[:, 2] == 0))
        return all(decode_who(tuple(wa[i].tolist()), self._explicit) == decode_who(tuple(wb[i].tolist()), other._explicit)
                   for i in differ)

    def __eq__(self, other):
        return (isinstance(other, Trace) and self.collectives == other.collectives
                and self.computes == other.computes and self._messages_equal(other))

    __hash__ = None

    @property
    def t_end(self) -> float:
        """When the last collective or op ends (seconds)."""
        return max(max((c.t_end for c in self.collectives), default=0.0),
                   max((c.t_end for c in self.computes), default=0.0))

    def messages_of(self, coll_id: int) -> list[Message]:
        c = self.collectives[coll_id]
        return self._messages(c.first_msg, c.last_msg)

    def step_times(self, coll_id: int) -> list[tuple[float, float]]:
        """(first start, last end) of every step of a collective, in step order."""
        cached = self._step_times.get(coll_id)
        if cached is not None and len(cached) == self.collectives[coll_id].n_steps:
            return list(cached)
        c = self.collectives[coll_id]
        r = self.rows(c.first_msg, c.last_msg)
        t0 = np.full(c.n_steps, np.inf)
        t1 = np.full(c.n_steps, -np.inf)
        np.minimum.at(t0, r["step"], r["t_start"])
        np.maximum.at(t1, r["step"], r["t_end"])
        out = list(zip(t0.tolist(), t1.tolist()))
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
        from .holdings import Held, arrive  # holdings reads this module's records

        c = self.collectives[coll_id]
        r = self.rows(c.first_msg, c.last_msg)
        keep = np.ones(len(r), dtype=bool)
        if step is not None:
            keep &= r["step"] <= step
        if t is not None:
            keep &= r["t_end"] <= t
        state = Held.initial(c)
        arrive(state, {f: r[f][keep] for f in ("dst", "chunk", "reduce", "w0", "w1", "w2", "w3")}, self.explicit)
        return state.as_dict()

    def in_flight(self, t: float) -> list[Message]:
        """Messages on the wire at time t (t_start <= t < t_end)."""
        r = self.rows()
        return [self._message(int(i)) for i in np.flatnonzero((r["t_start"] <= t) & (t < r["t_end"]))]

    @property
    def explicit(self):
        """The contributor lists no four-integer form covers, back to back (rows with w2 == 0 index it)."""
        return self._explicit

    def memory_bytes(self) -> int:
        """Memory the trace holds for its messages (bytes): columns, explicit sets, key table."""
        self.flush()
        return (sum(col.nbytes for col in self._cols.values()) + self._explicit.itemsize * len(self._explicit)
                + sum(len(k) for k in self._keys) * 64)

    # -- serialization: JSON ------------------------------------------------------------
    def to_json(self) -> str:
        buf = io.StringIO()
        self.write_json(buf)
        return buf.getvalue()

    def to_dict(self) -> dict:
        return json.loads(self.to_json())

    def write(self, path: str, fmt: str = "chrome", flows: bool = False):
        """Stream the trace to `path` as fmt ("chrome", "json" or "csv"; gzipped when the name ends
        in .gz) through a temporary file moved into place (see trace_io.write). Raises OSError."""
        from . import trace_io

        trace_io.write(self, path, fmt, flows)

    def write_json(self, dest):
        """Write the versioned JSON (compact message columns, see trace_io.write_json) to a path or
        text file object; a path ending in .gz is gzipped. One column in memory at a time, compressed."""
        from . import trace_io

        trace_io.write_json(self, dest)

    @classmethod
    def from_json(cls, text: str) -> Trace:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as e:
            raise ValueError(f"not a trace file: {e}") from None
        return cls.from_dict(data)

    @classmethod
    def load(cls, path) -> Trace:
        """Read a saved trace (gzipped when the name ends in .gz) and check it: ValueError with
        one sentence for another schema or version, a truncated or corrupt file, or a hand-edited
        one that could not have come from a Comm (see trace_io.check_trace)."""
        from . import trace_io

        return trace_io.load(cls, path)

    def save(self, path):
        """
        Save the run for the app (`shard-lab run.json`, File → Open, simcore.show): the versioned
        JSON of write_json, gzipped when the name ends in .gz, written through a temporary file
        so a failed write leaves no half file. Raises OSError.
        """
        from . import trace_io

        self.flush()
        trace_io.write(self, os.fspath(path), "json")

    @classmethod
    def from_dict(cls, data: dict) -> Trace:
        """A trace from its JSON as a dict (version 1, 2 or 3); ValueError for anything else."""
        from . import trace_io

        return trace_io.from_dict(cls, data)

    # -- serialization: Chrome trace-event format ---------------------------------------
    def to_chrome(self, flows: bool = False) -> dict:
        """The Chrome trace (see write_chrome) as a dict."""
        buf = io.StringIO()
        self.write_chrome(buf, flows=flows)
        return json.loads(buf.getvalue())

    def write_chrome(self, dest, flows: bool = False):
        """Chrome trace-event JSON (Perfetto, chrome://tracing) to a path or text file object
        (gzipped when a path ends in .gz), written in blocks; see trace_io.write_chrome."""
        from . import trace_io

        trace_io.write_chrome(self, dest, flows)

    # -- serialization: CSV -------------------------------------------------------------
    def to_csv(self) -> str:
        """One row per message (see write_csv)."""
        buf = io.StringIO()
        self.write_csv(buf)
        return buf.getvalue()

    def write_csv(self, dest):
        """One row per message, plain numbers, contributors as ids and ranges ("0-3+8"); a path
        ending in .gz is gzipped. See trace_io.write_csv."""
        from . import trace_io

        trace_io.write_csv(self, dest)


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
    inputs = np.asarray(inputs, dtype=float)
    n, L = inputs.shape
    out = np.full((n, L), np.nan)
    b = chunk_bounds(L, n_chunks)
    for d in range(n):
        for ch, who in holdings.get(d, {}).items():
            if who:
                out[d, b[ch]:b[ch + 1]] = inputs[sorted(who), b[ch]:b[ch + 1]].sum(axis=0)
    return out
