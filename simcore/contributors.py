"""Contributors: the set of devices whose data a message's partial sum holds, as four integers.

A ring all-reduce on n devices sends 2n(n−1) messages whose partial sums grow to n
contributors, so a set per message would cost n³; the trace keeps (first, count, period,
limit) instead (see below) and decodes a set only when it is read. `who_*` build the
descriptors the algorithms send; `Who` is a message's contributors, decoded on first use;
`who_text` writes them as ids and ranges for the CSV export.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import chain

# (first, count, period, limit) with period > 0 is the set
#     {x in [0, limit) : (x - first) mod period < count}
# with period == 0 it is explicit[first : first + count], a list the trace keeps, and with
# period == −P < 0 it is an arc of an NCCL channel ring: first = c·limit + q0, the positions
# q0, q0+1, …, q0+count−1 (mod limit) of channel c's ring through nodes of P (node m visits its
# local devices c, c+1, …, c−1: topo_collectives.channel_ring), neither an arc nor periodic in ids.
# One form covers what the algorithms produce:
#     device d alone                       (d, 1, n, n)
#     ring partial sum of devices d−k..d   ((d − k) mod n, k + 1, n, n)   (an arc of the ring)
#     everyone                             (0, n, n, n)
#     recursive doubling, extras folded    (b, 2^j, p, n): the aligned block [b, b + 2^j) of
#       onto d − p (p = 2^⌊log2 n⌋)        the p devices, each with its folded partner d + p
def channel_positions(x, c, P):
    """The position of device(s) x in channel c's ring on nodes of P (numpy arrays or ints)."""
    return (x // P) * P + (x % P - c) % P


@lru_cache(maxsize=1 << 15)
def _channel_set(first: int, count: int, period: int, limit: int) -> frozenset:
    c, q0 = divmod(first, limit)
    P = -period
    return frozenset(m * P + (c + i) % P for q in range(q0, q0 + min(count, limit))
                     for m, i in (divmod(q % limit, P),))


def who_everyone(n) -> tuple:
    return (0, n, n, n)


def who_block(first, size, p, n) -> tuple:
    """Devices x < n with x mod p in [first, first + size): a recursive-doubling block."""
    return (first, size, p, n)


@lru_cache(maxsize=1 << 15)
def periodic_set(first: int, count: int, period: int, limit: int) -> frozenset:
    count = min(count, period)
    if first + count <= period:  # an arc that does not wrap: one range
        base = range(first, first + count)
    else:
        base = chain(range(first, period), range(0, first + count - period))
    if limit == period:
        return frozenset(base)
    base = list(base)
    return frozenset(x + off for off in range(0, limit, period) for x in base if x + off < limit)


def decode_who(desc: tuple, explicit) -> frozenset:
    first, count, period, limit = desc
    if period > 0:
        return periodic_set(first, count, period, limit)
    if period < 0:
        return _channel_set(first, count, period, limit)
    return frozenset(explicit[first:first + count])


def as_arc(s: list, n: int):
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


class Who:
    """A message's contributors, decoded on first use (compares equal to the frozenset)."""

    __slots__ = ("desc", "explicit", "_set")

    def __init__(self, desc, explicit):
        self.desc, self.explicit, self._set = desc, explicit, None

    def get(self) -> frozenset:
        s = self._set
        if s is None:
            s = self._set = decode_who(self.desc, self.explicit)
        return s

    def __eq__(self, other):
        if isinstance(other, Who):
            if other.desc == self.desc and (self.desc[2] != 0 or other.explicit is self.explicit):
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


def who_text(desc, explicit) -> str:
    """Contributors as ids and ranges joined with '+', straight from the descriptor."""
    first, count, period, limit = desc
    if count <= 0:
        return ""
    if period <= 0 or limit != period or count >= period:
        return who_ranges(decode_who(desc, explicit))
    last = first + count - 1
    if last < period:
        return str(first) if count == 1 else f"{first}-{last}"
    head = "0" if last == period else f"0-{last - period}"
    tail = str(first) if first == period - 1 else f"{first}-{period - 1}"
    return head + "+" + tail


def who_ranges(who) -> str:
    s = sorted(who)
    out, i = [], 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        out.append(str(s[i]) if j == i else f"{s[i]}-{s[j]}")
        i = j + 1
    return "+".join(out)
