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
(see `who_arc`). `trace.messages` still reads as a sequence of `Message` records; each is
built when asked for and decodes its contributors only when `.contributors` is read.
Readers that want speed take the columns themselves: `trace.column("t_end", coll)`,
`trace.rows(lo, hi)`, `trace.contributor_counts()`.

Exports stream: write_chrome, write_json and write_csv take a path (gzipped when it ends in
.gz) or a file object and write block by block, never holding the whole file.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
from array import array
from collections.abc import Sequence
from functools import cache, lru_cache
from itertools import chain
from operator import itemgetter
from typing import NamedTuple

import numpy as np

SCHEMA = "shard-lab-trace"
SCHEMA_VERSION = 2  # 2: columnar messages (and computes); version 1 files (one row per message) are still read
SWITCH = -1  # the switch as a message endpoint (in-network reduction)
ALL = -1  # chunk index meaning "the whole buffer"


# ---------------------------------------------------------------------------------------
# Contributors: a set of devices as four integers
# ---------------------------------------------------------------------------------------
# (first, count, period, limit) with period > 0 is the set
#     {x in [0, limit) : (x - first) mod period < count}
# and with period == 0 it is explicit[first : first + count], a list the trace keeps.
# One form covers what the algorithms produce:
#     device d alone                       (d, 1, n, n)
#     ring partial sum of devices d−k..d   ((d − k) mod n, k + 1, n, n)   (an arc of the ring)
#     everyone                             (0, n, n, n)
#     recursive doubling, extras folded    (b, 2^j, p, n): the aligned block [b, b + 2^j) of
#       onto d − p (p = 2^⌊log2 n⌋)        the p devices, each with its folded partner d + p
def who_single(d, n) -> tuple:
    """Contributors {d} on n devices (d may be an array of devices)."""
    return (d, 1, n, n)


def who_arc(first, count, n) -> tuple:
    """Contributors first, first+1, …, first+count−1 (mod n): a ring partial sum."""
    return (first % n, count, n, n)


def who_everyone(n) -> tuple:
    return (0, n, n, n)


def who_block(first, size, p, n) -> tuple:
    """Devices x < n with x mod p in [first, first + size): a recursive-doubling block."""
    return (first, size, p, n)


@lru_cache(maxsize=1 << 15)
def _periodic_set(first: int, count: int, period: int, limit: int) -> frozenset:
    count = min(count, period)
    if first + count <= period:  # an arc that does not wrap: one range
        base = range(first, first + count)
    else:
        base = chain(range(first, period), range(0, first + count - period))
    if limit == period:
        return frozenset(base)
    base = list(base)
    return frozenset(x + off for off in range(0, limit, period) for x in base if x + off < limit)


def _decode(desc: tuple, explicit) -> frozenset:
    first, count, period, limit = desc
    if period > 0:
        return _periodic_set(first, count, period, limit)
    return frozenset(explicit[first:first + count])


def _as_arc(s: list, n: int):
    """(first, count) if sorted distinct ids s are a cyclic arc of 0..n−1, else None."""
    k = len(s)
    if not k or s[0] < 0 or s[-1] >= n:
        return None
    if s[-1] - s[0] + 1 == k:
        return s[0], k
    if s[0] == 0 and s[-1] == n - 1:  # wraps past n−1: exactly one gap
        gaps = [i for i in range(k - 1) if s[i + 1] - s[i] > 1]
        if len(gaps) == 1:
            return s[gaps[0] + 1], k
    return None


class _Who:
    """A message's contributors, decoded on first use (compares equal to the frozenset)."""

    __slots__ = ("desc", "explicit", "_set")

    def __init__(self, desc, explicit):
        self.desc, self.explicit, self._set = desc, explicit, None

    def get(self) -> frozenset:
        s = self._set
        if s is None:
            s = self._set = _decode(self.desc, self.explicit)
        return s

    def __eq__(self, other):
        if isinstance(other, _Who):
            if other.desc == self.desc and (self.desc[2] > 0 or other.explicit is self.explicit):
                return True
            return self.get() == other.get()
        if isinstance(other, (frozenset, set)):
            return self.get() == other
        return NotImplemented

    def __hash__(self):
        return hash(self.get())

    def __repr__(self):
        return repr(self.get())

    def __iter__(self):
        return iter(self.get())

    def __len__(self):
        return len(self.get())

    def __contains__(self, d):
        return d in self.get()


# ---------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------
_FIELDS = ("coll", "op", "algo", "label", "step", "src", "dst", "chunk", "contributors", "nbytes",
           "t_start", "t_end", "phase", "reduce")


class Message(tuple):
    """
    One message (fields below, in this order; reads like a NamedTuple of them):
        coll int (collective id), op str, algo str, label str (the caller's, e.g. "layer 3 mlp"),
        step int (0-based, within the collective), src int, dst int (SWITCH for the switch),
        chunk int (ALL: the whole buffer), contributors frozenset (devices whose data is summed
        in the payload), nbytes float (on the wire, after byte_scale), t_start float, t_end float
        (seconds), phase str (e.g. "reduce-scatter", "fold", "up"), reduce bool (True: the
        receiver adds the payload; False: it stores a copy).
    A Message from a trace decodes its contributors only when `.contributors` is read.
    """

    __slots__ = ()
    _fields = _FIELDS

    def __new__(cls, coll, op, algo, label, step, src, dst, chunk, contributors, nbytes, t_start, t_end,
                phase="", reduce=False):
        who = contributors if isinstance(contributors, (frozenset, _Who)) else frozenset(contributors)
        return tuple.__new__(cls, (coll, op, algo, label, step, src, dst, chunk, who, nbytes, t_start, t_end,
                                   phase, reduce))

    coll = property(itemgetter(0))
    op = property(itemgetter(1))
    algo = property(itemgetter(2))
    label = property(itemgetter(3))
    step = property(itemgetter(4))
    src = property(itemgetter(5))
    dst = property(itemgetter(6))
    chunk = property(itemgetter(7))
    nbytes = property(itemgetter(9))
    t_start = property(itemgetter(10))
    t_end = property(itemgetter(11))
    phase = property(itemgetter(12))
    reduce = property(itemgetter(13))

    @property
    def contributors(self) -> frozenset:
        who = tuple.__getitem__(self, 8)
        return who.get() if isinstance(who, _Who) else who

    def __iter__(self):
        for i, v in enumerate(tuple.__iter__(self)):
            yield v.get() if i == 8 and isinstance(v, _Who) else v

    def __getnewargs__(self):
        return tuple(self)

    def _asdict(self) -> dict:
        return dict(zip(_FIELDS, self))

    def __repr__(self):
        return "Message(" + ", ".join(f"{k}={v!r}" for k, v in zip(_FIELDS, self)) + ")"


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
    initial: tuple  # per device: tuple of (chunk, contributors) held before step 0 (see Initial)


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


class Initial(Sequence):
    """
    What every device holds before a collective, without a set per (device, chunk):
    item d is the tuple of (chunk, frozenset(contributors)) pairs device d holds, by chunk.
        Initial.own_all(n, n_chunks)  every device holds every chunk of its own data
        Initial.own_one(chunks)       device d holds only chunk chunks[d] (an all-gather)
    Compares equal to the plain tuple of tuples it stands for.
    """

    def __init__(self, n: int, n_chunks: int = 0, owned=None):
        self.n, self.n_chunks = int(n), int(n_chunks)
        self.owned = None if owned is None else tuple(int(c) for c in owned)

    @classmethod
    def own_all(cls, n, n_chunks):
        return cls(n, n_chunks)

    @classmethod
    def own_one(cls, chunks):
        return cls(len(chunks), 0, chunks)

    def __len__(self):
        return self.n

    def __getitem__(self, d):
        if isinstance(d, slice):
            return tuple(self[i] for i in range(*d.indices(self.n)))
        if d < 0:
            d += self.n
        if not 0 <= d < self.n:
            raise IndexError(d)
        me = _periodic_set(d, 1, self.n, self.n)
        if self.owned is None:
            return tuple((c, me) for c in range(self.n_chunks))
        return ((self.owned[d], me),)

    def __eq__(self, other):
        if isinstance(other, Initial):
            return (self.n, self.n_chunks, self.owned) == (other.n, other.n_chunks, other.owned)
        if isinstance(other, (tuple, list)):
            return len(other) == self.n and all(tuple(self[d]) == tuple(other[d]) for d in range(self.n))
        return NotImplemented

    def __hash__(self):
        return hash((self.n, self.n_chunks, self.owned))

    def __repr__(self):
        if self.owned is None:
            return f"Initial.own_all({self.n}, {self.n_chunks})"
        return f"Initial.own_one({list(self.owned)})"

    def to_json(self):
        return {"own_all": self.n_chunks, "n": self.n} if self.owned is None else {"own_one": list(self.owned)}


# ---------------------------------------------------------------------------------------
# The columns
# ---------------------------------------------------------------------------------------
# One array per field, one entry per message. key: index into Trace._keys of
# (op, algo, label, phase); w0..w3: the contributors (first, count, period, limit) above.
ROW = np.dtype([("coll", "<i4"), ("key", "<i4"), ("step", "<i4"), ("src", "<i4"), ("dst", "<i4"),
                ("chunk", "<i4"), ("nbytes", "<f8"), ("t_start", "<f8"), ("t_end", "<f8"), ("reduce", "?"),
                ("w0", "<i4"), ("w1", "<i4"), ("w2", "<i4"), ("w3", "<i4")])
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
        self._step_times: dict[int, list] = {}  # a collective is recorded once complete: safe to memoise
        self._blocks: dict[int, list] = {}  # a few blocks of built Message records (see _message)

    # -- writing --------------------------------------------------------------------------
    def key(self, op: str, algo: str, label: str, phase: str) -> int:
        k = (op, algo, label, phase)
        code = self._key_index.get(k)
        if code is None:
            code = self._key_index[k] = len(self._keys)
            self._keys.append(k)
        return code

    def encode_who(self, who, n: int | None = None) -> tuple:
        """(first, count, period, limit) for a set of device ids (see who_arc); n: devices, if known."""
        if isinstance(who, tuple) and len(who) == 4 and not isinstance(who, frozenset):
            return tuple(int(v) for v in who)
        if isinstance(who, _Who):
            if who.desc[2] > 0:
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
        arc = _as_arc(s, n)
        if arc is not None:
            return (arc[0], arc[1], n, n)
        if not s:
            return (0, 0, 1, 0)
        fs = frozenset(s)
        desc = self._explicit_index.get(fs)
        if desc is None:
            desc = (len(self._explicit), len(s), 0, 0)
            self._explicit.extend(s)
            self._explicit_index[fs] = desc
        return desc

    def add_message(self, coll, op, algo, label, step, src, dst, chunk, contributors, nbytes, t_start, t_end,
                    phase="", reduce=False, n=None):
        """Record one message (fields as Message). contributors: a set, or a (first, count, period,
        limit) descriptor; n: the number of devices, so a set is stored in its shortest form."""
        w = self.encode_who(contributors, n)
        self._pending.append((coll, self.key(op, algo, label, phase), step, src, dst, chunk, nbytes, t_start,
                              t_end, reduce, w[0], w[1], w[2], w[3]))
        if len(self._pending) >= _FLUSH_EVERY:
            self._flush()

    def add_messages(self, coll, op, algo, label, phase, step, src, dst, chunk, nbytes, t_start, t_end, reduce,
                     who):
        """
        Record many messages at once (e.g. the n−1 steps of a ring phase), in row-major order.
        t_start: an array whose shape is that of the block; every other field an array that
        broadcasts to it, or one value. who: the contributors as (first, count, period, limit),
        each an array or one value.
        """
        self._flush()
        shape = np.shape(t_start)
        lo, hi = self._grow(int(np.prod(shape)))
        cols = self._cols
        for name, v in (("coll", coll), ("key", self.key(op, algo, label, phase)), ("step", step), ("src", src),
                        ("dst", dst), ("chunk", chunk), ("nbytes", nbytes), ("t_start", t_start), ("t_end", t_end),
                        ("reduce", reduce), ("w0", who[0]), ("w1", who[1]), ("w2", who[2]), ("w3", who[3])):
            cols[name][lo:hi].reshape(shape)[...] = v  # broadcast straight into the column

    def reserve(self, m: int):
        """Make room for m more messages (a writer that knows how many it will add)."""
        self._flush()
        self._resize(self._len + m)

    def _resize(self, cap: int):
        if cap > self._cap:
            for name, col in self._cols.items():
                new = np.empty(cap, dtype=col.dtype)
                new[:self._len] = col[:self._len]
                self._cols[name] = new
            self._cap = cap

    def _grow(self, m: int) -> tuple[int, int]:
        """Room for m more messages: (lo, hi), the rows they go into."""
        need = self._len + m
        if need > self._cap:
            self._resize(max(need, 2 * self._cap, 1024))
        lo, self._len = self._len, need
        return lo, need

    def _flush(self):
        if self._pending:
            pending, self._pending = self._pending, []
            lo, hi = self._grow(len(pending))
            for name, values in zip(ROW.names, zip(*pending)):
                self._cols[name][lo:hi] = values

    def truncate(self, m: int):
        """Forget every message from index m on (a collective that could not complete)."""
        self._flush()
        self._len = min(self._len, m)
        self._step_times.clear()
        self._blocks.clear()

    def compact(self):
        """Give back the spare capacity of the columns (call when the simulation is over)."""
        self._flush()
        if self._cap > self._len:
            self._cols = {name: col[:self._len].copy() for name, col in self._cols.items()}
            self._cap = self._len

    # -- reading: columns -------------------------------------------------------------------
    @property
    def n_messages(self) -> int:
        return self._len + len(self._pending)

    def rows(self, lo: int = 0, hi: int | None = None) -> Columns:
        """Messages [lo, hi) as read-only column arrays: rows(...)["t_end"] (fields: see ROW)."""
        self._flush()
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
        explicit = period == 0
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
        self._flush()
        b = i // _BLOCK
        block = self._blocks.get(b)
        if block is None or i - b * _BLOCK >= len(block):
            if len(self._blocks) >= 8:
                self._blocks.pop(next(iter(self._blocks)))
            block = self._blocks[b] = self._messages(b * _BLOCK, min(self._len, (b + 1) * _BLOCK))
        return block[i - b * _BLOCK]

    def _messages(self, lo: int, hi: int) -> list:
        self._flush()
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
                                   _Who((r[10], r[11], r[12], r[13]), ex), r[6], r[7], r[8], phase, r[9])))
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
        return all(_decode(tuple(wa[i].tolist()), self._explicit) == _decode(tuple(wb[i].tolist()), other._explicit)
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
        self._flush()
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
        """
        Stream the trace to `path` as fmt ("chrome", "json" or "csv"; gzipped when the name ends
        in .gz) through a temporary file moved into place, so an interrupted write never leaves
        half a file. Raises OSError (the temporary file is removed).
        """
        tmp = path + ".part" + (".gz" if path.endswith(".gz") else "")
        try:
            if fmt == "chrome":
                self.write_chrome(tmp, flows=flows)
            elif fmt == "csv":
                self.write_csv(tmp)
            else:
                self.write_json(tmp)
            os.replace(tmp, path)
        except OSError:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise

    def write_json(self, dest):
        """Write the versioned JSON (columns of numbers) to a path or text file object; a path
        ending in .gz is gzipped. Written in blocks: the file is never whole in memory."""
        self._flush()
        with _open_text(dest) as f:
            f.write(f'{{"schema": {json.dumps(SCHEMA)}, "version": {SCHEMA_VERSION},\n"collectives": [')
            f.write(",\n".join(json.dumps(_coll_to_dict(c)) for c in self.collectives))
            f.write(f'],\n"keys": {json.dumps(self._keys)},\n"n_messages": {self._len},\n"columns": {{')
            for i, name in enumerate(ROW.names):
                f.write((",\n" if i else "") + f'"{name}": [')
                col = self._cols[name][:self._len]
                conv = (lambda v: "true" if v else "false") if name == "reduce" else repr
                for lo in range(0, self._len, 65536):
                    f.write(("," if lo else "") + ",".join(map(conv, col[lo:lo + 65536].tolist())))
                f.write("]")
            f.write('},\n"explicit": [' + ",".join(map(str, self._explicit)) + "],\n"
                    f'"compute_fields": {json.dumps(Compute._fields)},\n"computes": [')
            f.write(",\n".join(json.dumps(_compute_to_list(c)) for c in self.computes))
            f.write("]}\n")

    @classmethod
    def from_json(cls, text: str) -> Trace:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as e:
            raise ValueError(f"not a trace file: {e}") from None
        return cls.from_dict(data)

    @classmethod
    def load(cls, path) -> Trace:
        """Read a trace JSON file (gzipped when the name ends in .gz)."""
        import gzip  # here, not at the top: the app's start need not load it

        opener = gzip.open if os.fspath(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            return cls.from_json(f.read())

    @classmethod
    def from_dict(cls, data: dict) -> Trace:
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError(f"not a trace file (expected schema {SCHEMA!r})")
        version = data.get("version")
        if version not in (1, SCHEMA_VERSION):
            raise ValueError(f"trace version {version!r} is not supported (this reads 1 and {SCHEMA_VERSION})")
        tr = cls()
        try:
            if version == 1:
                for row in data["messages"]:
                    tr.add_message(*_msg_from_list(row))
            else:
                tr._read_columns(data)
            tr._flush()
            tr.collectives = [_coll_from_dict(c) for c in data["collectives"]]
            tr.computes = [_compute_from_list(row) for row in data.get("computes", [])]  # files from before computes were traced have none
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
            raise ValueError(f"corrupt trace file: {e}") from None
        return tr

    def _read_columns(self, data):
        self._keys = [tuple(str(s) for s in k) for k in data["keys"]]
        if any(len(k) != 4 for k in self._keys):
            raise ValueError("a key must be [op, algo, label, phase]")
        self._key_index = {k: i for i, k in enumerate(self._keys)}
        cols, m = data["columns"], int(data["n_messages"])
        lo, hi = self._grow(m)
        for name in ROW.names:
            col = np.asarray(cols[name], dtype=ROW[name])
            if col.shape != (m,):
                raise ValueError(f"column {name} has {col.size} values for {m} messages")
            self._cols[name][lo:hi] = col
        rows = self.rows()
        self._explicit = array("i", [int(v) for v in data.get("explicit", [])])
        if m and (rows["key"].min() < 0 or rows["key"].max() >= len(self._keys)):
            raise ValueError("a message's key is out of range")
        ex = rows["w2"] == 0
        if np.any(ex) and np.any(rows["w0"][ex] + rows["w1"][ex] > len(self._explicit)):
            raise ValueError("a message's contributors are out of range")

    # -- serialization: Chrome trace-event format ---------------------------------------
    def to_chrome(self, flows: bool = False) -> dict:
        """The Chrome trace (see write_chrome) as a dict."""
        buf = io.StringIO()
        self.write_chrome(buf, flows=flows)
        return json.loads(buf.getvalue())

    def write_chrome(self, dest, flows: bool = False):
        """
        Chrome trace-event JSON (Perfetto, chrome://tracing) to a path or text file object
        (gzipped when a path ends in .gz), written in blocks. One process per device with the
        tracks of CHROME_TRACKS; each message is a slice on the sender's "send port" track and
        one on the receiver's "recv port" track (category "comm", as a profiler files NCCL
        kernels), named after its chunk (flows=True joins them by an arrow: about 80 more bytes
        a message); each collective is a span on every taking-part device's "collective" track;
        each Compute record a slice on its device's "compute" track (category "compute", named
        "L<layer> <label>", shown above the ports as a profiler shows its streams). Times in µs;
        names and metadata once per track.
        """
        self._flush()
        with _open_bytes(dest) as write:
            write(b'{"displayTimeUnit":"ns","otherData":{"schema":"%s","version":%d},"traceEvents":[\n'
                  % (SCHEMA.encode(), SCHEMA_VERSION))
            first = True
            for block in self._chrome_blocks(flows):
                if len(block):
                    if not first:
                        write(b",\n")
                    write(block)
                    first = False
            write(b"\n]}\n")

    def _chrome_devices(self) -> list[int]:
        r = self.rows()
        devs = set(np.unique(np.concatenate([r["src"], r["dst"]])).tolist()) if self._len else set()
        devs |= {d for c in self.collectives for d in range(c.n)}
        devs |= {int(c.device) for c in self.computes}
        return sorted(devs)

    def _chrome_blocks(self, flows: bool):
        """Blocks of comma-joined events: metadata, then each track's slices."""
        devices = self._chrome_devices()
        meta = []
        for d in devices:
            pid = _pid(d)
            name = "switch" if d == SWITCH else f"GPU {d}"
            meta.append(f'{{"ph":"M","name":"process_name","pid":{pid},"args":{{"name":"{name}"}}}}')
            meta.append(f'{{"ph":"M","name":"process_sort_index","pid":{pid},"args":{{"sort_index":{pid}}}}}')
            for tid, tname in CHROME_TRACKS:
                meta.append(f'{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},"args":{{"name":"{tname}"}}}}')
                order = -1 if tid == COMPUTE_TID else tid  # compute above the ports
                meta.append(f'{{"ph":"M","name":"thread_sort_index","pid":{pid},"tid":{tid},'
                            f'"args":{{"sort_index":{order}}}}}')
        yield ",\n".join(meta).encode()
        yield from self._chrome_collectives()
        yield from self._chrome_messages(flows)
        yield from self._chrome_computes()

    def _chrome_collectives(self):
        for c in self.collectives:
            name = json.dumps(f"{c.op} ({c.algo}) {c.label}".strip())
            head = '{"ph":"X","cat":"collective","name":' + name + ',"pid":'
            tail = (f',"tid":0,"ts":{c.t_start * 1e6:.4f},"dur":{(c.t_end - c.t_start) * 1e6:.4f},'
                    f'"args":{{"id":{c.id},"bytes":{_num(c.nbytes)},"n":{c.n}}}}}')
            yield ",\n".join(head + str(_pid(d)) + tail for d in range(c.n)).encode()

    def _chrome_messages(self, flows: bool, block: int = 16384):
        # Every field is formatted for a whole block at once (see _Rows); ts and dur to 0.1 ns
        # (a message lasts at least α, about a µs on every preset link).
        for lo in range(0, self._len, block):
            r = self.rows(lo, lo + block)
            src, dst = r["src"], r["dst"]
            ts = _fixed_field(r["t_start"] * 1e6)
            dur = _fixed_field((r["t_end"] - r["t_start"]) * 1e6)
            chunk, step, nb = _chunk_field(r["chunk"]), _int_field(r["step"]), _fixed_field(r["nbytes"], 3)
            fs, fd = _int_field(src), _int_field(dst)
            switch = (src == SWITCH).any() or (dst == SWITCH).any()
            ps, pd = (_int_field(_pids(src)), _int_field(_pids(dst))) if switch else (fs, fd)
            yield _SEND.render([chunk, ps, ts, dur, fd, step, nb])
            yield _RECV.render([chunk, pd, ts, dur, fs, step, nb])
            if flows:
                ids = _int_field(np.arange(lo, lo + len(r)))
                yield _FLOW_S.render([ids, ps, ts])
                yield _FLOW_F.render([ids, pd, ts])

    def _chrome_computes(self, block: int = 4096):
        # a step has a few thousand ops (Llama-3 70B on 8 GPUs: 4,496; 13,456 with async):
        # formatted one by one, a block at a time
        for lo in range(0, len(self.computes), block):
            out = []
            for c in self.computes[lo:lo + block]:
                layer = int(getattr(c, "layer", -1))
                name = json.dumps(str(c.label) if layer < 0 else f"L{layer} {c.label}")
                bound = json.dumps(str(getattr(c, "bound", "")))
                out.append(f'{{"ph":"X","cat":"compute","name":{name},"pid":{_pid(int(c.device))},'
                           f'"tid":{COMPUTE_TID},"ts":{c.t_start * 1e6:.4f},"dur":{(c.t_end - c.t_start) * 1e6:.4f},'
                           f'"args":{{"flops":{_num(c.flops)},"bytes":{_num(c.nbytes)},"bound":{bound}}}}}')
            yield ",\n".join(out).encode()

    # -- serialization: CSV -------------------------------------------------------------
    def to_csv(self) -> str:
        """One row per message (see write_csv)."""
        buf = io.StringIO()
        self.write_csv(buf)
        return buf.getvalue()

    def write_csv(self, dest):
        """
        One row per message, columns Message._fields; every number is a plain number (seconds,
        bytes), reduce is 1 or 0, contributors are device ids and ranges joined with '+'
        ("0-3+8" is devices 0, 1, 2, 3 and 8). A path ending in .gz is gzipped.
        """
        import csv  # here, not at the top: the app's start need not load it

        self._flush()
        with _open_text(dest, newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(_FIELDS)
            names = {}
            for lo in range(0, self._len, 16384):
                r = self.rows(lo, lo + 16384)
                rows = []
                for coll, key, step, src, dst, chunk, nb, t0, t1, red, w0, w1, w2, w3 in zip(
                        *(r[name].tolist() for name in ROW.names)):
                    op, algo, label, phase = self._keys[key]
                    desc = (w0, w1, w2, w3)
                    who = names.get(desc)
                    if who is None:
                        if len(names) > 65536:  # a ring has n² distinct arcs: keep the memo small
                            names.clear()
                        who = names[desc] = _who_text(desc, self._explicit)
                    rows.append((coll, op, algo, label, step, src, dst, chunk, who, nb, t0, t1, phase, int(red)))
                w.writerows(rows)


# Chrome tracks of every device's process: (tid, name)
CHROME_TRACKS = ((0, "collective"), (1, "send port"), (2, "recv port"), (3, "compute"))
COMPUTE_TID = 3


def _num(v) -> str:
    """A number as JSON: integers without a fraction, others to 12 significant digits."""
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:.12g}"


def _who_text(desc, explicit) -> str:
    """Contributors as ids and ranges joined with '+', straight from the descriptor."""
    first, count, period, limit = desc
    if count <= 0:
        return ""
    if period <= 0 or limit != period or count >= period:
        return _ranges(_decode(desc, explicit))
    last = first + count - 1
    if last < period:
        return str(first) if count == 1 else f"{first}-{last}"
    head = "0" if last == period else f"0-{last - period}"
    tail = str(first) if first == period - 1 else f"{first}-{period - 1}"
    return head + "+" + tail


def _ranges(who) -> str:
    s = sorted(who)
    out, i = [], 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        out.append(str(s[i]) if j == i else f"{s[i]}-{s[j]}")
        i = j + 1
    return "+".join(out)


@contextlib.contextmanager
def _open_text(dest, newline=None):
    """A text file to write: dest itself if it has .write, else the path (gzip for .gz)."""
    if hasattr(dest, "write"):
        yield dest
        return
    path = os.fspath(dest)
    if path.endswith(".gz"):
        import gzip

        # level 5: most of level 9's size at a third of its time on trace text
        with gzip.open(path, "wt", compresslevel=5, encoding="utf-8", newline=newline) as f:
            yield f
    else:
        with open(path, "w", encoding="utf-8", newline=newline) as f:
            yield f


# ---------------------------------------------------------------------------------------
# Formatting a block of JSON events at once
# ---------------------------------------------------------------------------------------
# A Chrome trace of n = 256 has a quarter of a million slices; formatting them one by one in
# Python would cost several times the simulation. Instead every field of a block of messages
# becomes a (B, w) matrix of ASCII bytes, looked up in tables of ready-made digits, and the
# event template is filled column by column into one (B, W) byte matrix written as it is.
# A number shorter than its column is padded with spaces — whitespace between JSON tokens —
# on the left, or after its last digit; text inside a string (a chunk's name) is left-aligned
# and its closing quote moves with it, so no string ever holds padding.
@cache
def _tables():
    """Digit tables, built on first use (a few ms; importing the engine need not pay them):
    right[i + 1]  i (-1 … 9999) right-aligned in 4 bytes, as one uint32
    digits[i]     i (0 … 9999) as 4 zero-padded digits
    frac[d][i]    ".i" to d decimals without trailing zeros, blank-padded ("" for 0)
    quoted[i]     i followed by a closing quote, left-aligned in 5 bytes"""
    def table(texts, width, align):
        return np.frombuffer(b"".join(getattr(t, align)(width) for t in texts), np.uint8).reshape(-1, width)

    numbers = [str(i).encode() for i in range(10_000)]
    right = table([b"-1"] + numbers, 4, "rjust").copy().view(np.uint32).ravel()
    digits = table([t.rjust(4, b"0") for t in numbers], 4, "ljust")
    frac = {d: table([("." + str(i).rjust(d, "0")).rstrip("0").rstrip(".").encode() for i in range(10 ** d)],
                     d + 1, "ljust") for d in (3, 4)}
    quoted = table([t + b'"' for t in numbers], 5, "ljust")
    return right, digits, frac, quoted


_POW10 = 10 ** np.arange(19, dtype=np.int64)
_BLANK = 32


def _int_field(v) -> np.ndarray:
    """(B, w) uint8: integers v, right-aligned, spaces in front."""
    v = np.asarray(v, dtype=np.int64)
    if not len(v):
        return np.empty((0, 1), np.uint8)
    top, low = int(v.max()), int(v.min())
    if top == low:  # one value for the whole block (a ring's bytes): format it once
        text = str(top).encode()
        return np.broadcast_to(np.frombuffer(text, np.uint8), (len(v), len(text)))
    if top < 10_000 and low >= -1:
        w = max(len(str(top)), 2 if low < 0 else 1)
        return _tables()[0][v + 1].view(np.uint8).reshape(len(v), 4)[:, 4 - w:]
    a = np.abs(v)
    w = len(str(int(a.max())))
    parts, rest = [], a
    for _ in range((w + 3) // 4):
        rest, g = np.divmod(rest, 10_000)
        parts.append(_tables()[1][g])
    out = np.concatenate(parts[::-1], axis=1)[:, -w:]
    out[:, :w - 1][a[:, None] < _POW10[w - 1:0:-1]] = _BLANK  # leading zeros
    neg = v < 0
    if neg.any():  # a minus sign just before the first digit
        out = np.concatenate([np.full((len(v), 1), _BLANK, np.uint8), out], axis=1)
        digits = np.maximum(1, np.floor(np.log10(np.maximum(a, 1))).astype(np.int64) + 1)
        out[np.flatnonzero(neg), (w - digits)[neg]] = ord("-")
    return out


def _fixed_field(x, decimals: int = 4) -> np.ndarray:
    """(B, w) uint8: x (>= 0) to `decimals` decimals, trailing zeros (and a bare '.') blank."""
    i = np.rint(np.asarray(x, dtype=float) * 10 ** decimals).astype(np.int64)
    if len(i) and i.min() == i.max():  # one value for the whole block: format it once
        whole, frac = divmod(int(i[0]), 10 ** decimals)
        text = str(whole).encode() + _tables()[2][decimals][frac].tobytes().rstrip()
        return np.broadcast_to(np.frombuffer(text, np.uint8), (len(i), len(text)))
    whole, frac = np.divmod(i, 10 ** decimals)
    return np.concatenate([_int_field(whole), _tables()[2][decimals][frac]], axis=1)


def _chunk_field(chunk) -> np.ndarray:
    """Chunk numbers ("all" for ALL) left-aligned, each followed by the closing quote of the name."""
    chunk = np.asarray(chunk, dtype=np.int64)
    every = chunk == ALL
    c = np.where(every, 0, chunk)
    if len(c) and int(c.max()) >= 10_000:
        text = [(b"all" if e else str(v).encode()) + b'"' for v, e in zip(c.tolist(), every.tolist())]
        w = max(map(len, text))
        return np.array([list(t.ljust(w)) for t in text], dtype=np.uint8)
    w = max(len(str(int(c.max()))) + 1 if len(c) else 2, 4 if every.any() else 0)
    out = np.full((len(c), w), _BLANK, np.uint8)
    out[:, :min(w, 5)] = _tables()[3][c][:, :w]
    if every.any():
        out[every, :4] = np.frombuffer(b'all"', np.uint8)
    return out


def _pids(devices) -> np.ndarray:
    return np.where(devices == SWITCH, _pid(SWITCH), devices)


class _Rows:
    """A JSON event template with fields (None in `parts`) filled from (B, w) byte matrices."""

    def __init__(self, *parts):
        self.parts = [None if p is None else np.frombuffer(p.encode("ascii"), np.uint8) for p in parts]
        self._buffers: dict = {}  # (B, field widths) -> a matrix with the constant parts already in place

    def render(self, fields) -> memoryview:
        """The B events as bytes, joined by ",\\n" (valid until the next render)."""
        B = len(fields[0])
        if not B:
            return memoryview(b"")
        key = (B, tuple(f.shape[1] for f in fields))
        m = self._buffers.get(key)
        fresh = m is None
        if fresh:
            if len(self._buffers) > 8:
                self._buffers.clear()
            m = self._buffers[key] = np.empty((B, sum(key[1]) + sum(len(p) for p in self.parts if p is not None) + 2),
                                              np.uint8)
            m[:, -2], m[:, -1] = ord(","), ord("\n")
        it = iter(fields)
        pos = 0
        for p in self.parts:
            if p is None:
                f = next(it)
                m[:, pos:pos + f.shape[1]] = f
                pos += f.shape[1]
            else:
                if fresh:  # the template's own text is written once per buffer
                    m[:, pos:pos + len(p)] = p
                pos += len(p)
        return memoryview(m.reshape(-1)[:-2])


# One message is two slices (category "comm"): on the sender's send track (tid 1) and the
# receiver's recv track (tid 2); args: the peer (-1: the switch), the step and the bytes. A flow
# arrow joins them.
_SEND = _Rows('{"ph":"X","cat":"comm","name":"chunk ', None, ',"pid":', None, ',"tid":1,"ts":', None, ',"dur":',
              None, ',"args":{"to":', None, ',"step":', None, ',"bytes":', None, '}}')
_RECV = _Rows('{"ph":"X","cat":"comm","name":"chunk ', None, ',"pid":', None, ',"tid":2,"ts":', None, ',"dur":',
              None, ',"args":{"from":', None, ',"step":', None, ',"bytes":', None, '}}')
_FLOW_S = _Rows('{"ph":"s","cat":"m","name":"m","id":', None, ',"pid":', None, ',"tid":1,"ts":', None, '}')
_FLOW_F = _Rows('{"ph":"f","bp":"e","cat":"m","name":"m","id":', None, ',"pid":', None, ',"tid":2,"ts":', None, '}')


@contextlib.contextmanager
def _open_bytes(dest):
    """write(bytes) into dest: a path (gzip for .gz), a binary file, or a text file (decoded)."""
    if hasattr(dest, "write"):
        if isinstance(dest, io.TextIOBase):
            yield lambda b: dest.write(bytes(b).decode("utf-8"))
        else:
            yield dest.write
        return
    path = os.fspath(dest)
    if path.endswith(".gz"):
        import gzip

        f = gzip.open(path, "wb", compresslevel=5)
    else:
        f = open(path, "wb")  # closed by the with below
    with f:
        yield f.write


def _pid(d: int) -> int:
    return 10_000 if d == SWITCH else d


def _msg_from_list(row) -> tuple:
    """A version-1 message row -> the arguments of Trace.add_message."""
    if not isinstance(row, list) or len(row) != len(_FIELDS):
        raise ValueError(f"message row has {len(row) if isinstance(row, list) else '?'} fields")
    row = list(row)
    row[8] = frozenset(int(d) for d in row[8])
    for i in (0, 4, 5, 6, 7):
        row[i] = int(row[i])
    for i in (9, 10, 11):
        row[i] = float(row[i])
    for i in (1, 2, 3, 12):
        row[i] = str(row[i])
    row[13] = bool(row[13])
    return tuple(row)


def _compute_to_list(c) -> list:
    return [int(c.device), str(c.label), float(c.flops), float(c.nbytes), float(c.t_start), float(c.t_end),
            int(getattr(c, "layer", -1)), str(getattr(c, "kind", "")), str(getattr(c, "bound", ""))]


def _compute_from_list(row) -> Compute:
    if not isinstance(row, list) or len(row) != len(Compute._fields):
        raise ValueError(f"compute row has {len(row) if isinstance(row, list) else '?'} fields")
    d, label, flops, nbytes, t0, t1, layer, kind, bound = row
    return Compute(int(d), str(label), float(flops), float(nbytes), float(t0), float(t1), int(layer), str(kind),
                   str(bound))


def _coll_to_dict(c: Collective) -> dict:
    d = c._asdict()
    for k in ("id", "n", "n_chunks", "n_steps", "first_msg", "last_msg"):
        d[k] = int(d[k])
    for k in ("t_start", "t_end", "nbytes"):
        d[k] = float(d[k])
    if isinstance(c.initial, Initial):
        d["initial"] = c.initial.to_json()
    else:
        d["initial"] = [[[ch, sorted(who)] for ch, who in sorted(h)] for h in c.initial]
    return d


def _coll_from_dict(d: dict) -> Collective:
    d = dict(d)
    init = d["initial"]
    if isinstance(init, dict):
        d["initial"] = (Initial.own_one(init["own_one"]) if "own_one" in init
                        else Initial.own_all(int(init["n"]), int(init["own_all"])))
    else:
        d["initial"] = tuple(tuple((int(ch), frozenset(int(w) for w in who)) for ch, who in h) for h in init)
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
    inputs = np.asarray(inputs, dtype=float)
    n, L = inputs.shape
    out = np.full((n, L), np.nan)
    b = chunk_bounds(L, n_chunks)
    for d in range(n):
        for ch, who in holdings.get(d, {}).items():
            if who:
                out[d, b[ch]:b[ch + 1]] = inputs[sorted(who), b[ch]:b[ch + 1]].sum(axis=0)
    return out
