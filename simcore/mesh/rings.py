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

Every message's contributors (whose data its payload carries or sums) are kept: `who[p]` is the
set of devices whose data position p's chunks carry when the phase starts.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


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
        descs = [self(fs) for fs in sets]
        return tuple(np.array([d[i] for d in descs], dtype=np.int64) for i in range(4))


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
    new_who = list(who)
    for lane in lanes:
        G, g = lane.pos.shape
        if g < 2:
            continue
        j = np.arange(g)
        src_pos, dst_pos = lane.pos[:, j].ravel(), lane.pos[:, (j + lane.s) % g].ravel()
        plan = comm._plan(dev[src_pos], dev[dst_pos], rounds=True)  # the same ports every step
        m, width = lane.chunks.shape[2], lane.e1 - lane.e0
        b = np.full(G * g, m * width * data.itemsize * comm.byte_scale, dtype=float)
        own_ready = np.asarray(ready, dtype=float)[src_pos]
        prev_end = None
        # the sets a position's chunks carry, per group and ring position
        sets = [[who[p] for p in row] for row in lane.pos.tolist()]
        for k in range(g - 1):
            if kind == "ag":
                origin = (j - lane.s * k) % g
                t_ready = own_ready if prev_end is None else prev_end[:, (j - lane.s) % g].ravel()
                ws = [sets[a][o] for a in range(G) for o in origin.tolist()]
            else:
                origin = (j - lane.s * (k + 1)) % g
                t_ready = own_ready if prev_end is None else np.maximum(own_ready,
                                                                          prev_end[:, (j - lane.s) % g].ravel())
                # j's partial sums positions j − s·k … j of its ring
                ws = [frozenset().union(*(sets[a][(jj - lane.s * i) % g] for i in range(k + 1)))
                      for a in range(G) for jj in range(g)]
            cs = lane.chunks[:, origin, :].reshape(G * g, m)
            start, end = comm._port_times(plan, b, t_ready)
            comm._record(step0 + k, dev[src_pos], dev[dst_pos], cs[:, 0] + lane.tag * C, b, start, end,
                         enc.arrays(ws), phase, kind == "rs")
            moved = data[src_pos[:, None], cs, lane.e0:lane.e1]
            if kind == "ag":
                data[dst_pos[:, None], cs, lane.e0:lane.e1] = moved
            else:
                data[dst_pos[:, None], cs, lane.e0:lane.e1] += moved
            prev_end = end.reshape(G, g)
        # a position is done when the last message into it has landed
        last_in = prev_end[:, (j - lane.s) % g].ravel()
        np.maximum.at(out, src_pos, last_in)
        for a in range(G):
            union = frozenset().union(*sets[a])
            for p in lane.pos[a].tolist():
                new_who[p] = union
    who[:] = new_who
    return out


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
        w = enc.arrays([who[p] for p in src.tolist()])
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
        w = enc.arrays([who[p] for p in pos[:, origin].ravel().tolist()])
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
                        enc.arrays([who[p] for p in src.tolist()]), phase, False)
    done = np.array(ready, dtype=float)
    np.maximum.at(done, dst, t)
    return {q: data[p].copy() for p, q in pairs}, done
