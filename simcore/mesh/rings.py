"""
rings — the collectives of a mesh axis: every group of the axis at once, on one Comm and one clock.

A mesh axis of size g cuts the mesh into G = n/g disjoint groups. A collective over the axis runs
the same algorithm in every group simultaneously; their messages go through the machine's real
ports (simcore.comm_sim's port model), so groups that share a link queue on it and groups on
their own links do not wait for one another.

The data of a call is one array `data[position, chunk, element]` indexed by mesh position (the
row-major index of a mesh coordinate). A *lane* is one ring through each group:
    pos[G, g]        the mesh positions of every group, in ring order
    chunks[G, g, m]  the chunk indices position j owns (all-gather) or ends with (reduce-scatter)
    s                +1 (to the next position) or −1 (to the previous one)
    e0, e1           the elements of every chunk the lane carries (a bidirectional ring sends
                     one half of each chunk each way)
A ring phase moves chunks g−1 steps round its lanes:
    all-gather      step k: position j forwards the chunks of position j − s·k to j + s
    reduce-scatter  step k: position j sends its partial of position (j − s·(k+1))'s chunks to
                    j + s, which adds it; after g−1 steps position j holds its own chunks summed
Time of one group alone on idle links: (g−1)·(α + b/β) with b a message's bytes — for a ring of
one chunk per position b = S/g (Thakur, Rabenseifner & Gropp 2005), for a bidirectional ring
S/(2g) each way ("How to Scale Your Model", sharding chapter: both directions of every link).

Every message's contributors (whose data its payload carries or sums) are kept: a `Carry` says
whose data each position's chunks carry when the phase starts (its own device's, then its group's).
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np


# per trace (by id, dropped with the trace), the descriptors of ring partial sums already stored in it
_ARCS: dict = {}


def _arcs_of(trace) -> dict:
    known = _ARCS.get(id(trace))
    if known is None:
        known = _ARCS[id(trace)] = {}
        weakref.finalize(trace, _ARCS.pop, id(trace), None)
    return known


class Lane(NamedTuple):
    pos: np.ndarray  # (G, g) mesh positions, ring order
    chunks: np.ndarray  # (G, g, m) chunk indices
    s: int  # +1 or −1
    e0: int  # element range of every chunk this lane carries
    e1: int
    tag: int  # the lane's number: its chunks are named tag·C + c in the trace


class _Who:
    """Contributor descriptors of sets of devices, encoded once per set (trace.encode_who)."""

    def __init__(self, comm):
        self.trace, self.n, self.cache = comm.trace, comm.n, {}

    def __call__(self, fs):
        d = self.cache.get(fs)
        if d is None:
            d = self.cache[fs] = self.trace.encode_who(frozenset(fs), self.n)
        return d

    def arrays(self, sets):
        """Descriptor columns of many sets: singletons without a lookup each."""
        if all(len(fs) == 1 for fs in sets):
            d = np.fromiter((next(iter(fs)) for fs in sets), dtype=np.int64, count=len(sets))
            return d, 1, self.n, self.n
        descs = np.array([self(fs) for fs in sets], dtype=np.int64).reshape(-1, 4)
        return tuple(descs[:, i] for i in range(4))


class Carry:
    """
    Whose data each mesh position's chunks carry (its messages' contributors): at first every
    position its own device's (own); after a phase over groups, every position its group's —
    kept as one set per group and each position's group, so a phase costs a few numpy operations.
    """

    def __init__(self, dev, group_of=None, group_sets=None):
        self.dev = np.asarray(dev, dtype=np.int64)
        self.group_of = group_of  # None: own; else position -> index into group_sets
        self.group_sets = group_sets

    @property
    def own(self) -> bool:
        return self.group_of is None

    def copy(self):
        return Carry(self.dev, None if self.own else self.group_of.copy(), None if self.own else list(self.group_sets))

    def get(self, p):
        return frozenset((int(self.dev[p]),)) if self.own else self.group_sets[self.group_of[p]]

    def rows(self, pos):
        """The sets of pos[a, j], as lists per row."""
        return [[self.get(p) for p in row] for row in pos.tolist()]

    def descriptors(self, enc, positions):
        """Descriptor columns of the sets of these positions (own: the device ids themselves)."""
        if self.own:
            return self.dev[positions], 1, enc.n, enc.n
        desc = np.array([enc(fs) for fs in self.group_sets], dtype=np.int64).reshape(-1, 4)
        rows = desc[self.group_of[positions]]
        return tuple(rows[..., i] for i in range(4))

    def merge(self, pos):
        """After a phase over groups pos (G, g): every position of a group carries the whole group."""
        G = pos.shape[0]
        if self.own:
            sets = [frozenset(row) for row in self.dev[pos].tolist()]
        else:
            sets = [frozenset().union(*(self.group_sets[i] for i in set(row))) for row in self.group_of[pos].tolist()]
        group_of = np.empty(len(self.dev), dtype=np.int64) if self.own else self.group_of.copy()
        if self.own and pos.size < len(self.dev):  # positions outside pos keep their own device
            sets += [frozenset((int(d),)) for d in self.dev]
            group_of[:] = G + np.arange(len(self.dev))
        elif not self.own:
            sets += self.group_sets
            group_of += G
        group_of[pos] = np.arange(G)[:, None]
        self.group_of, self.group_sets = group_of, sets

    def union(self, other):
        """Carry both: position p carries self's and other's sets of p."""
        if self.own and other.own:
            return
        a = np.zeros(len(self.dev), dtype=np.int64) if self.own else self.group_of
        b = np.zeros(len(self.dev), dtype=np.int64) if other.own else other.group_of
        key = a * (len(self.dev) + (0 if other.own else len(other.group_sets))) + b
        uniq, inv = np.unique(key, return_inverse=True)
        sets = []
        for u in uniq.tolist():
            p = int(np.flatnonzero(key == u)[0])
            sets.append(self.get(p) | other.get(p))
        self.group_of, self.group_sets = inv.reshape(-1).astype(np.int64), sets


def ring_phase(comm, kind, data, dev, lanes, ready, who, step0=0, phase=""):
    """
    One ring phase of `kind` ("ag" or "rs") over `lanes`, all groups at once, on comm (inside a
    collective being recorded: comm._begin … comm._end). data[position, chunk, element] is moved
    (and added, for "rs") in place; dev[position] is its device id; ready[position] when its data
    exists (seconds). who: the contributor sets per position (updated: after the phase every
    position carries its whole group's). Returns when each position's part is complete (s).
    """
    out = np.array(ready, dtype=float)
    C = data.shape[1]
    enc = _Who(comm)
    before = who.copy()
    for lane in lanes:
        G, g = lane.pos.shape
        if g < 2:
            continue
        j = np.arange(g)
        M, steps = G * g, g - 1
        src_pos, dst_pos = lane.pos.ravel(), lane.pos[:, (j + lane.s) % g].ravel()
        plan = comm._plan(dev[src_pos], dev[dst_pos], rounds=True)  # the same ports every step
        m, width = lane.chunks.shape[2], lane.e1 - lane.e0
        b = np.full(M, m * width * data.itemsize * comm.byte_scale, dtype=float)
        own_ready = np.asarray(ready, dtype=float)[src_pos]
        k = np.arange(steps)
        # origin[k, j]: whose chunks position j sends at step k
        origin = (j[None, :] - lane.s * (k[:, None] + (0 if kind == "ag" else 1))) % g
        chunks = lane.chunks[:, origin, 0].transpose(1, 0, 2).reshape(steps, M)  # the trace's chunk index
        who_cols = _contributors(comm, enc, kind, lane, before, origin)
        starts, ends = np.empty((steps, M)), np.empty((steps, M))
        into = (j - lane.s) % g  # the ring neighbour each position hears from
        t_ready = own_ready
        for step in range(steps):
            starts[step], ends[step] = comm._port_times(plan, b, t_ready)
            arrived = ends[step].reshape(G, g)[:, into].ravel()
            t_ready = arrived if kind == "ag" else np.maximum(own_ready, arrived)
        comm._record(step0 + k[:, None], dev[src_pos], dev[dst_pos], chunks + lane.tag * C, b, starts, ends,
                     who_cols, phase, kind == "rs")
        _finish(kind, data, lane)
        # a position is done when the last message into it has landed
        np.maximum.at(out, src_pos, ends[-1].reshape(G, g)[:, into].ravel())
        who.merge(lane.pos)
    return out


def _contributors(comm, enc, kind, lane, carry, origin):
    """The (first, count, period, limit) columns, steps × messages, of a ring phase's messages:
    an all-gather's carry what their origin carried; a reduce-scatter's sum positions j − s·k … j."""
    G, g = lane.pos.shape
    steps, M = origin.shape[0], G * g
    if carry.own:
        own_dev = carry.dev[lane.pos]  # G × g
        if kind == "ag":
            return own_dev[:, origin].transpose(1, 0, 2).reshape(steps, M), 1, comm.n, comm.n
        j = np.arange(g)
        if G == 1 and g == comm.n and np.array_equal(own_dev[0], j):  # the ring is 0..n−1: arcs of it
            first = ((j[None, :] - np.arange(steps)[:, None]) % g) if lane.s > 0 else np.broadcast_to(j, (steps, g))
            return first, np.arange(1, steps + 1)[:, None], g, g
        # the same rings' partial sums again (a program runs many): their lists are in this trace already
        key = (own_dev.tobytes(), own_dev.shape, lane.s)
        known = _arcs_of(comm.trace)
        if key not in known:
            cols = [np.empty((steps, M), dtype=np.int64) for _ in range(4)]
            for k in range(steps):
                members = own_dev[:, (j[:, None] - lane.s * np.arange(k + 1)[None, :]) % g]  # G × g × (k+1)
                desc = comm.trace.encode_explicit_rows(members.reshape(M, k + 1))
                for c, v in zip(cols, desc):
                    c[k] = v
            known[key] = tuple(cols)
        return known[key]
    sets = carry.rows(lane.pos)
    cols = [np.empty((steps, M), dtype=np.int64) for _ in range(4)]
    if kind == "ag":
        for k in range(steps):
            desc = enc.arrays([sets[a][o] for a in range(G) for o in origin[k].tolist()])
            for c, v in zip(cols, desc):
                c[k] = v
        return tuple(cols)
    arcs = [list(row) for row in sets]
    for k in range(steps):  # what j − s sent at step k − 1, and its own
        if k:
            arcs = [[arcs[a][(jj - lane.s) % g] | sets[a][jj] for jj in range(g)] for a in range(G)]
        desc = enc.arrays([fs for row in arcs for fs in row])
        for c, v in zip(cols, desc):
            c[k] = v
    return tuple(cols)


def _finish(kind, data, lane):
    """What the ring phase leaves in data, moved at once (the messages above carry exactly this):
    all-gather — every position of a group holds every position's chunks; reduce-scatter — every
    position holds its own chunks summed over the group (the ring adds the same terms, in ring order)."""
    if not data.flags.writeable:  # timing only (Mesh.collective with nbytes): no data to move
        return
    pos, cs, e = lane.pos, lane.chunks, slice(lane.e0, lane.e1)
    if kind == "ag":
        # data[pos[a, j], cs[a, o]] = data[pos[a, o], cs[a, o]] for every j, o of group a
        data[pos[:, :, None, None], cs[:, None, :, :], e] = data[pos[:, None, :, None], cs[:, None, :, :], e]
    else:
        # data[pos[a, j], cs[a, j]] = Σ_o data[pos[a, o], cs[a, j]]
        data[pos[:, :, None], cs, e] = data[pos[:, None, :, None], cs[:, :, None, :], e].sum(axis=2)


def direct_rounds(comm, data_in, dev, pos, ready, who, step0=0, phase="all-to-all"):
    """
    One-shot all-to-all in every group at once: data_in[position, block, element]; in round r
    (1 … g−1) position j sends its block (j + r) mod g straight to position (j + r) mod g, so each
    receive port hears one sender a round (time α + (g−1)·S/(g·β), S one position's buffer).
    Returns (data_out[position, block, element] with block i from group position i, done times).
    """
    G, g = pos.shape
    out = np.empty_like(data_in)
    j = np.arange(g)
    # out[pos[a, t], o] = data_in[pos[a, o], t]: block t of position o lands on t as its block o
    out[pos[:, :, None], j[None, None, :]] = data_in[pos[:, None, :], j[None, :, None]]
    enc = _Who(comm)
    done = np.array(ready, dtype=float)
    nb = data_in.shape[2] * data_in.itemsize
    for r in range(1, g):
        src = pos.ravel()
        dst = pos[:, (j + r) % g].ravel()
        w = who.descriptors(enc, src)
        t = comm.send_batch(dev[src], dev[dst], nb, np.asarray(ready)[src], step0 + r - 1,
                            np.tile((j + r) % g, G), w, phase, False)
        np.maximum.at(done, dst, t)
    return out, done


def ring_all_to_all(comm, data_in, dev, pos, ready, who, step0=0, phase="all-to-all"):
    """
    All-to-all round a ring (a torus axis, where only neighbours talk): at step k (1 … g−1)
    position j passes to j + 1 the g − k blocks that position j − k + 1 sent and that still have
    further to go; each block travels (t − o) mod g hops. Time of one group alone:
    Σ_k (α + (g−k)·S/(g·β)) = (g−1)·α + S·(g−1)/(2β) — the book's unidirectional all-to-all,
    half an all-gather's bytes per link. Returns (data_out, done times) as direct_rounds.
    """
    G, g = pos.shape
    j = np.arange(g)
    out = np.empty_like(data_in)
    out[pos[:, :, None], j[None, None, :]] = data_in[pos[:, None, :], j[None, :, None]]
    enc = _Who(comm)
    block = data_in.shape[2] * data_in.itemsize
    src, dst = pos.ravel(), pos[:, (j + 1) % g].ravel()
    plan = comm._plan(dev[src], dev[dst], rounds=True)
    t_ready = np.asarray(ready, dtype=float)[src]
    done = np.array(ready, dtype=float)
    for k in range(1, g):
        b = np.full(G * g, (g - k) * block * comm.byte_scale)
        origin = (j - k + 1) % g
        w = who.descriptors(enc, pos[:, origin].ravel())
        start, end = comm._port_times(plan, b, t_ready)
        comm._record(step0 + k - 1, dev[src], dev[dst], np.tile(origin, G), b, start, end, w, phase, False)
        t_ready = end.reshape(G, g)[:, (j - 1) % g].ravel()
        np.maximum.at(done, dst, end)
    return out, done


def permute(comm, data, dev, pairs, ready, who, step=0, phase="ppermute"):
    """ppermute: data[src position] goes to dst position for every (src, dst) pair (positions),
    one message each, all at once. Returns (new data dict {dst position: array}, done times)."""
    if not pairs:
        return {}, np.array(ready, dtype=float)
    src = np.array([p for p, _ in pairs], dtype=np.int64)
    dst = np.array([q for _, q in pairs], dtype=np.int64)
    enc = _Who(comm)
    nb = np.array([data[p].nbytes for p in src.tolist()], dtype=float)
    t = comm.send_batch(dev[src], dev[dst], nb, np.asarray(ready, dtype=float)[src], step, 0,
                        who.descriptors(enc, src), phase, False)
    done = np.array(ready, dtype=float)
    np.maximum.at(done, dst, t)
    return {q: data[p].copy() for p, q in pairs}, done


def line_phase(comm, kind, data, dev, pos, ready, who, step0=0, phase=""):
    """
    One all-gather ("ag") or reduce-scatter ("rs") phase over lines, not rings: a torus axis with
    no wraparound link (pos[G, g] in line order; data[position, chunk, element], position j owns
    chunk j). Every chunk goes both ways along the line, one chunk a message:
      all-gather      step k: j sends to j+1 the chunk of j − k (j ≥ k), and to j−1 that of j + k
      reduce-scatter  step k: j sends to j+1 its partial (positions 0 … j) of chunk j + g−1−k
                      (j ≤ k) and to j−1 its partial (j … g−1) of chunk j − (g−1−k) (j ≥ g−1−k)
    The ends' chunks go g−1 hops, so one group alone takes (g−1)·(α + S/(g·β)) — a unidirectional
    ring's time ("How to Scale Your Model", sharding chapter: TPU v5e's 4-axis without wraparound,
    "3 hops for data from the edges to reach the other edge", T = 3·(V/4)/W one way). Returns when
    each position's part is complete (s).
    """
    G, g = pos.shape
    out = np.array(ready, dtype=float)
    if g < 2:
        return out
    enc = _Who(comm)
    before = who.copy()
    nb = data.shape[2] * data.itemsize  # one chunk
    own = np.asarray(ready, dtype=float)[pos]  # G × g
    sets = before.rows(pos)
    t_in = {+1: own.copy(), -1: own.copy()}  # when what position j forwards next has arrived (per direction)
    for k in range(g - 1):
        srcs, dsts, chunks, whos, readies, dirs = [], [], [], [], [], []
        for s in (+1, -1):
            for j in range(g):
                to = j + s
                if not 0 <= to < g:
                    continue
                if kind == "ag":
                    o = j - s * k
                    if not 0 <= o < g:
                        continue
                    c, members = o, [o]
                else:
                    c = j + s * (g - 1 - k)
                    if not 0 <= c < g or (s > 0 and j > k) or (s < 0 and j < g - 1 - k):
                        continue
                    members = list(range(0, j + 1)) if s > 0 else list(range(j, g))
                for a in range(G):
                    srcs.append(pos[a, j])
                    dsts.append(pos[a, to])
                    chunks.append(c)
                    whos.append(frozenset().union(*(sets[a][m] for m in members)))
                    readies.append(max(t_in[s][a, j], own[a, j]) if k else own[a, j])
                    dirs.append((s, a, to))
        if not srcs:
            continue
        src, dst = np.array(srcs, dtype=np.int64), np.array(dsts, dtype=np.int64)
        end = comm.send_batch(dev[src], dev[dst], nb, np.array(readies), step0 + k, np.array(chunks),
                              enc.arrays(whos), phase, kind == "rs")
        nxt = {+1: np.full((G, g), -np.inf), -1: np.full((G, g), -np.inf)}
        for (s, a, to), t in zip(dirs, end.tolist()):
            nxt[s][a, to] = t
        for s in (+1, -1):
            t_in[s] = np.where(np.isfinite(nxt[s]), nxt[s], t_in[s])
        np.maximum.at(out, dst, end)
    _finish(kind, data, Lane(pos, np.broadcast_to(np.arange(g)[None, :, None], (G, g, 1)), +1, 0, data.shape[2], 0))
    who.merge(pos)
    return out


def innet_all_reduce(comm, data, dev, pos, ready, who, step0=0):
    """
    NVLS in every group at once (simcore.collectives.allreduce_innet on each group's devices): the
    buffer in g chunks; every position sends chunk c up to its switch, which adds the group's g
    copies and multicasts the sum down to the group once all have arrived. One group alone:
    2α + (g+1)·S/(g·β). The switch is the topology's SWITCH (on several nodes the mesh times it on
    each node's NVSwitch). Returns when each position holds the sum (s).
    """
    G, g = pos.shape
    enc = _Who(comm)
    src = pos.ravel()
    up_who = who.descriptors(enc, src)
    group = who.copy()
    group.merge(pos)
    down_who = group.descriptors(enc, src)
    sw = np.full(len(src), _switch_id())
    nb = data.shape[2] * data.itemsize
    t0 = np.asarray(ready, dtype=float)[src]
    done = np.array(ready, dtype=float)
    for c in range(g):
        up = comm.send_batch(dev[src], sw, nb, t0, step0 + c, c, up_who, "up", True)
        when = np.repeat(up.reshape(G, g).max(axis=1), g)
        down = comm.send_batch(sw, dev[src], nb, when, step0 + c + 1, c, down_who, "down", False)
        np.maximum.at(done, src, down)
    if data.flags.writeable:
        data[pos] = data[pos].sum(axis=1)[:, None]
    who.merge(pos)
    return done


def _switch_id():
    from ..trace import SWITCH
    return SWITCH


def _bidi_weights(g):
    """Per direction, the blocks (of S/g) a message carries at steps 1 … ⌊g/2⌋ of a bidirectional
    all-to-all: the blocks still to go at least k hops, the opposite device's half each way."""
    if g == 2:
        return {+1: [1.0]}
    w = [0.5 if 2 * d == g else 1.0 for d in range(1, g // 2 + 1)]
    steps = [sum(w[k:]) for k in range(len(w))]
    return {+1: steps, -1: steps}


def bidi_all_to_all(comm, block, dev, pos, ready, who, step0=0, phase="all-to-all"):
    """
    The bidirectional ring all-to-all in every group at once (timing and trace; the caller moves
    the data): each block goes the shorter way round, the opposite device's half each way. At step k
    position j passes on, each way, the blocks still to travel ≥ k hops. block: bytes of one block
    (before byte_scale). One group alone: ⌊g/2⌋·α + (S/g)·L/β with L = Σ_d d·w_d ≈ g²/8 the blocks a
    link carries one way — the book's AllToAll, "AllGather / 4 for a bidirectional ring" ("How to
    Scale Your Model", sharding chapter). Returns when each position has everything (s).
    """
    G, g = pos.shape
    j = np.arange(g)
    enc = _Who(comm)
    done = np.array(ready, dtype=float)
    if g < 2:
        return done
    src = pos.ravel()
    for s, steps in _bidi_weights(g).items():
        dst = pos[:, (j + s) % g].ravel()
        plan = comm._plan(dev[src], dev[dst], rounds=True)
        t_ready = np.asarray(ready, dtype=float)[src]
        for k, blocks in enumerate(steps, start=1):
            b = np.full(G * g, blocks * block * comm.byte_scale)
            origin = (j - s * (k - 1)) % g  # whose blocks position j passes on at step k
            w = who.descriptors(enc, pos[:, origin].ravel())
            start, end = comm._port_times(plan, b, t_ready)
            comm._record(step0 + k - 1, dev[src], dev[dst], np.tile(origin, G), b, start, end, w, phase, False)
            t_ready = end.reshape(G, g)[:, (j - s) % g].ravel()
            np.maximum.at(done, dst, end)
    return done
