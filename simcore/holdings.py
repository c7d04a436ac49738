"""
What every device holds during a collective, replayed from its messages: the engine's one rule.

A message that arrives at `dst` with chunk `chunk` (ALL: every chunk) and contributors C
    reduce=True   adds C to the slot's contributors (the receiver sums what came in),
    reduce=False  replaces the slot's contributors by C (the receiver copies what came in).
`arrive(held, rows, explicit)` applies that rule to a block of messages, in their order.
`Trace.holdings`, the app's per-time index and the buffer view's colour levels all replay
through it, so there is one rule to read and one to test.

The state is `Held`: arrays, not sets, so that a frame at n = 256 never builds n² sets
(row d < n is device d, row n the switch, which only in-network reduction uses).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import numpy as np

from .contributors import channel_positions
from .trace_records import ALL, SWITCH, Initial

_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], np.int32)


class Held:
    """
    What every device holds in one collective at one time (a snapshot; `arrive` changes it in place,
    so a reader that keeps one takes a `copy`):
        present[r, ch]  the chunk is held (it was there at the start or a message brought it)
        bits[r, ch]     its contributors as a bitset (np.packbits order, device 0 the top bit)
        count[r, ch]    how many contributors (len of the set)
        low[r, ch]      the lowest contributor (−1 if none): the owner when count is 1
    `who(d, ch)` gives the frozenset; `as_dict()` the {device: {chunk: frozenset}} of trace.holdings.
    """

    __slots__ = ("n", "n_chunks", "present", "bits", "count", "low", "switch_seen", "_mapping")

    def __init__(self, n, n_chunks, present, bits, count, low, switch_seen):
        self.n, self.n_chunks = n, n_chunks
        self.present, self.bits, self.count, self.low, self.switch_seen = present, bits, count, low, switch_seen
        self._mapping = None

    @classmethod
    def initial(cls, coll) -> Held:
        """What the devices of collective record `coll` hold before its first message."""
        n, nc = coll.n, max(coll.n_chunks, 1)
        nb = -(-n // 8)
        present = np.zeros((n + 1, nc), bool)
        bits = np.zeros((n + 1, nc, nb), np.uint8)
        count = np.zeros((n + 1, nc), np.int32)
        low = np.full((n + 1, nc), -1, np.int32)
        init = coll.initial
        if isinstance(init, Initial):
            d = np.arange(n)
            mask = np.packbits(np.eye(n, dtype=bool), axis=1)  # row d: {d}
            chunks = (np.arange(coll.n_chunks)[None, :].repeat(n, 0) if init.owned is None
                      else np.asarray(init.owned, np.int64)[:, None])
            rows = np.broadcast_to(d[:, None], chunks.shape)
            present[rows, chunks] = True
            bits[rows, chunks] = mask[rows]
            count[rows, chunks] = 1
            low[rows, chunks] = rows
        else:
            for dev, h in enumerate(init):  # (chunk, contributors) pairs, or a {chunk: contributors} dict
                for ch, who in (h.items() if isinstance(h, dict) else h):
                    present[dev, ch] = True
                    m = np.zeros(n, bool)
                    m[sorted(who)] = True
                    bits[dev, ch] = np.packbits(m)
                    count[dev, ch] = len(who)
                    low[dev, ch] = min(who) if who else -1
        return cls(n, coll.n_chunks, present, bits, count, low, False)

    def copy(self) -> Held:
        return Held(self.n, self.n_chunks, self.present.copy(), self.bits.copy(), self.count.copy(),
                    self.low.copy(), self.switch_seen)

    def row(self, d: int) -> int:
        return self.n if d == SWITCH else d

    def who(self, d: int, ch: int):
        """Device d's (SWITCH: the switch's) contributors in chunk ch, or None if not held."""
        r = self.row(d)
        if not self.present[r, ch]:
            return None
        return _members_of(self.bits[r, ch].tobytes())

    def device(self, d: int) -> dict:
        """{chunk: frozenset} device d holds (trace.holdings' entry for d)."""
        r = self.row(d)
        chunks = np.flatnonzero(self.present[r])
        return dict(zip(chunks.tolist(), map(_members_of, map(bytes, self.bits[r, chunks]))))

    def get(self, d: int, default=None):
        if d == SWITCH and not self.switch_seen:
            return default
        if not (d == SWITCH or 0 <= d < self.n):
            return default
        return self.device(d)

    def as_dict(self) -> dict:
        return {d: self.device(d) for d in self.devices()}

    def devices(self) -> list[int]:
        return list(range(self.n)) + ([SWITCH] if self.switch_seen else [])

    def mapping(self) -> HeldMapping:
        """The read-only {device: {chunk: frozenset}} view of this snapshot (one per snapshot)."""
        if self._mapping is None:
            self._mapping = HeldMapping(self)
        return self._mapping


@lru_cache(maxsize=1 << 16)
def _members_of(bitset: bytes) -> frozenset:
    """The devices of a packed bitset (device 0 the top bit): one frozenset per distinct set, shared,
    as the ring's partial sums are n² arcs at most."""
    return frozenset(np.flatnonzero(np.unpackbits(np.frombuffer(bitset, np.uint8))).tolist())


class HeldMapping(Mapping):
    """trace.holdings' dict, decoded per device only when a device is asked for."""

    def __init__(self, held: Held):
        self.held = held
        self._rows = {}

    def __getitem__(self, d):
        if d not in self._rows:
            if not (d == SWITCH and self.held.switch_seen or isinstance(d, (int, np.integer)) and 0 <= d < self.held.n):
                raise KeyError(d)
            self._rows[d] = self.held.device(int(d))
        return self._rows[d]

    def __iter__(self):
        return iter(self.held.devices())

    def __len__(self):
        return self.held.n + (1 if self.held.switch_seen else 0)


def members(r, n: int, explicit) -> np.ndarray:
    """(M, n) bool: row i says which devices are contributors of message i (trace columns w0..w3 of r)."""
    first, count, period, limit = (np.asarray(r[f], dtype=np.int64)[:, None] for f in ("w0", "w1", "w2", "w3"))
    x = np.arange(n, dtype=np.int64)[None, :]
    per = np.where(period > 0, period, 1)
    out = (x < limit) & ((x - first) % per < count)
    chan = period[:, 0] < 0  # a channel ring's arc: x's position in channel c's ring, from q0
    if chan.any():
        P, lim = -period[chan], limit[chan]
        c, q0 = np.divmod(first[chan], lim)
        out[chan] = (x < lim) & ((channel_positions(x, c, P) - q0) % lim < count[chan])
    for i in np.flatnonzero(period[:, 0] == 0):  # an explicit list the trace keeps
        out[i] = False
        out[i, list(explicit[first[i, 0]: first[i, 0] + count[i, 0]])] = True
    return out


_BLOCK = 4096  # messages decoded at once: an (M, n) membership matrix stays a few MB


def arrive(state: Held, r, explicit) -> None:
    """
    The messages in trace rows `r` (a Trace.rows block or a dict of its columns, already in
    arrival order) reach their receivers: the rule in the module docstring, applied to `state`
    in place. `explicit` is the trace's table of explicit contributor lists.
    The messages are taken in consecutive blocks in which no slot is written twice (a ring step's
    messages are one such block), so a block is applied at once and the order is kept.
    """
    dst = np.asarray(r["dst"]).astype(np.int64)
    if not len(dst):
        return
    n, nc = state.n, max(state.n_chunks, 1)
    rows = np.where(dst == SWITCH, n, dst)
    chunk = np.asarray(r["chunk"]).astype(np.int64)
    whole = chunk == ALL
    if np.any(dst == SWITCH):
        state.switch_seen = True
    key = rows * nc + np.where(whole, 0, chunk)
    cols = {f: np.asarray(r[f]) for f in ("w0", "w1", "w2", "w3")}
    red = np.asarray(r["reduce"]).astype(bool)
    for lo, hi in _blocks(key, whole):
        sub = {f: c[lo:hi] for f, c in cols.items()}
        _arrive_block(state, rows[lo:hi], chunk[lo:hi], whole[lo:hi], red[lo:hi], members(sub, n, explicit))


def _blocks(key: np.ndarray, whole: np.ndarray):
    """(lo, hi) of consecutive runs of at most _BLOCK messages that write no slot twice; a message
    with the whole buffer (chunk ALL) is a run of its own."""
    lo, seen = 0, set()
    for i, (k, w) in enumerate(zip(key.tolist(), whole.tolist())):
        if w or k in seen or i - lo >= _BLOCK:
            if i > lo:
                yield lo, i
            lo, seen = i, set()
        if w:
            yield i, i + 1
            lo = i + 1
        else:
            seen.add(k)
    if lo < len(key):
        yield lo, len(key)


def _arrive_block(state: Held, rows, chunk, whole, red, mem):
    """One block of _blocks: each slot written at most once, or one whole-buffer message."""
    n = state.n
    packed = np.packbits(mem, axis=1)
    k = mem.sum(axis=1).astype(np.int32)
    low = np.where(k > 0, np.argmax(mem, axis=1), -1).astype(np.int32)
    if not whole.any():
        s, rd = ~red, red
        state.bits[rows[s], chunk[s]] = packed[s]
        state.count[rows[s], chunk[s]] = k[s]
        state.low[rows[s], chunk[s]] = low[s]
        rr, cc = rows[rd], chunk[rd]
        had = state.present[rr, cc]
        state.bits[rr, cc] |= packed[rd]
        state.count[rr, cc] = _POPCOUNT[state.bits[rr, cc]].sum(axis=-1)
        old = np.where(had & (state.low[rr, cc] >= 0), state.low[rr, cc], n)
        new = np.where(low[rd] >= 0, low[rd], n)
        state.low[rr, cc] = np.where(np.minimum(old, new) < n, np.minimum(old, new), -1)
        state.present[rows, chunk] = True
        return
    row, chs = rows[0], slice(None)  # one message with the whole buffer: every chunk of its receiver
    if red[0]:
        b = state.bits[row, chs] | packed[0]
        state.bits[row, chs] = b
        state.count[row, chs] = _POPCOUNT[b].sum(axis=-1)
        old = np.where(state.present[row, chs] & (state.low[row, chs] >= 0), state.low[row, chs], n)
        m = np.minimum(old, low[0] if low[0] >= 0 else n)
        state.low[row, chs] = np.where(m < n, m, -1)
    else:
        state.bits[row, chs] = packed[0]
        state.count[row, chs] = k[0]
        state.low[row, chs] = low[0]
    state.present[row, chs] = True
