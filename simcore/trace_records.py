"""The trace's records: Message, Collective, Compute and Initial (see simcore.trace).

Message is one point-to-point transfer (built from the trace's columns when read),
Collective one call of a collective, Compute one op a device ran, Initial what every device
holds before a collective. simcore.trace re-exports them; import them from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import NamedTuple

import numpy as np

from .contributors import periodic_set, Who

SCHEMA = "shard-lab-trace"
# 3: the message columns compact (zlib + base64 of little-endian arrays, see trace_io.encode_column);
# 2: columns as lists of numbers; 1: one row per message. Versions 1 and 2 are still read.
SCHEMA_VERSION = 3
SWITCH = -1  # the switch as a message endpoint (in-network reduction)
ALL = -1  # chunk index meaning "the whole buffer"


# ---------------------------------------------------------------------------------------
# The columns
# ---------------------------------------------------------------------------------------
# One array per field, one entry per message. key: index into Trace._keys of
# (op, algo, label, phase); w0..w3: the contributors (first, count, period, limit), see
# simcore.contributors.
ROW = np.dtype([("coll", "<i4"), ("key", "<i4"), ("step", "<i4"), ("src", "<i4"), ("dst", "<i4"),
                ("chunk", "<i4"), ("nbytes", "<f8"), ("t_start", "<f8"), ("t_end", "<f8"), ("reduce", "?"),
                ("w0", "<i4"), ("w1", "<i4"), ("w2", "<i4"), ("w3", "<i4")])


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
        who = contributors if isinstance(contributors, (frozenset, Who)) else frozenset(contributors)
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
        return who.get() if isinstance(who, Who) else who

    def __iter__(self):
        for i, v in enumerate(tuple.__iter__(self)):
            yield v.get() if i == 8 and isinstance(v, Who) else v

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
    plan: object = None  # the plan it executed (simcore.plan.PlanRecord), None where none was made


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
        me = periodic_set(d, 1, self.n, self.n)
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
