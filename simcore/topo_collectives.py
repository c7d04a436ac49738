"""
topo_collectives — collectives on machines that are more than one switch: several nodes joined
by a network, and TPU tori, simulated with real arrays. Their closed forms, and the notation and
sources of both, are simcore.topo_closed_forms.

Simulations (real arrays through comm_sim.Comm, any topology with comm_sim's route()
interface): allreduce_hier (Horovod's three calls, kept as a comparison), allreduce_hier_pipelined
(the same phases pipelined by chunks in one call, as NCCL does: the registry's "hier") and
allreduce_ring_nodes on nodes(N, P); torus_all_gather, torus_reduce_scatter and allreduce_torus
on a torus (or a topology_presets.TorusSlice without some wraparound links). Each one's simulated time equals its closed form (topo_closed_forms) to 1e-9
(tests/test_topo_collectives.py). Each is one record of algorithms.ALGORITHMS; sharding.all_reduce(comm,
arrays) runs the one comm's topology picks (its plan: topology.plan).

Built as arrays: every step of every ring, channel or torus line is one batch
(_Run.move: one Comm._plan, the port model as chains or rounds, data by array indexing,
contributors as ids of distinct bitmask sets), recorded in the order the one-message-at-a-time
version issued them; tests/test_topo_collectives_reference.py compares the two message by
message (that version is kept as tests/reference_topo_collectives.py).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .trace_records import Initial

# The closed forms live in topo_closed_forms; these names stay importable from here too.
from .topo_closed_forms import (TOPO_OPS, hier_calls, nodes_coefficients, ring_nodes_nvlink_bound,  # noqa: F401
                                ring_steps, t_axis_all_gather, t_hier, t_ring_nodes, t_torus)


# ---------------------------------------------------------------------------------------
# Simulations: real arrays through comm_sim.Comm on a nodes or torus topology
# ---------------------------------------------------------------------------------------
# The buffer of L elements is cut into G equal "fine" chunks (G = what the algorithm needs:
# P·N for hier, P·n for the channel rings, k·n on a torus); a message carries a set of fine
# chunks, and its trace `chunk` is the first of them. `who[d][f]` is the set of devices whose
# data is summed in device d's copy of fine chunk f (the trace's contributors).


class _Run:
    """
    Buffers, fine-chunk bounds, contributors and per-device readiness of one collective, moved
    a step at a time: `move` sends many (src, dst, fine chunks) at once through one
    Comm._plan / Comm._port_times (the port model, exactly as one message after another in the
    order given), moves the data with array indexing and keeps contributors as ids of distinct
    sets (`sets`), united once per distinct pair. Messages are recorded at `finish`, in the order
    of their `key` rows (the order the one-message-at-a-time schedule issued them), so the trace
    is the same message by message.
    """

    KEYS = 6  # key columns: (block, group, sub-phase, step, position, fine chunk) or a call counter

    def __init__(self, comm, bufs, G, who=None):
        self.comm, self.bufs, self.G = comm, bufs, G
        n, L = bufs.shape
        self.bounds = [int(b) for b in np.linspace(0, L, G + 1).round()]
        bnd = np.asarray(self.bounds, dtype=np.int64)
        self.lo, self.hi = bnd[:-1], bnd[1:]
        mid = (self.lo + self.hi) // 2
        self.lens = {None: self.hi - self.lo, 0: mid - self.lo, 1: self.hi - mid}
        self.item = bufs.itemsize
        # bytes of a fine chunk (row 0), its first half (row 1) or its second (row 2): half code + 1
        self._bytes_by_code = (np.stack([self.lens[None], self.lens[0], self.lens[1]]) * self.item).astype(float)
        self.width = int(L // G) if G and L % G == 0 and bufs.flags.c_contiguous else None
        # set id → its devices as a bitmask, W little-endian 64-bit words a row (id d: device d alone)
        W = (n + 63) // 64
        self.masks = np.zeros((max(2 * n, 64), W), dtype="<u8")
        d = np.arange(n)
        self.masks[d, d // 64] = np.left_shift(np.uint64(1), (d % 64).astype(np.uint64))
        self.n_sets = n
        self._id = {m: d for d, m in enumerate(self.masks[:n].view(np.dtype((np.void, 8 * W))).reshape(-1).tolist())}
        self.who = np.repeat(np.arange(n, dtype=np.int64)[:, None], G, axis=1)  # set id of (device, fine chunk)
        self._rows = []
        self._calls = 0

    def nbytes(self, fine, half=None):
        """Bytes of the fine chunks `fine` (half: 0 or 1 — only that half of each)."""
        return int(self.lens[half][list(fine)].sum()) * self.item

    def _unite(self, a, b):
        """Set ids of sets a | sets b, elementwise (int arrays). A new set gets the next id, in
        the order of its first pair (a, b) sorted."""
        S = self.n_sets
        if len(a) <= 2048:  # a move's worth: sorting the pairs is cheaper than tables of them
            uniq, inv = np.unique(a * S + b, return_inverse=True)
            unions = self.masks[uniq // S] | self.masks[uniq % S]
            return self._intern(unions)[inv]
        ua, ia = _dense_unique(a, S)  # the few distinct ids on each side: a small table of pairs
        ub, ib = _dense_unique(b, S)
        pairs = ia * len(ub) + ib  # sorted as the pairs (a, b)
        if len(ua) * len(ub) <= 4 * len(pairs) + 4096:
            uniq, inv = _dense_unique(pairs, len(ua) * len(ub))
        else:  # a table of every pair would dwarf the pairs: sort them
            uniq, inv = np.unique(pairs, return_inverse=True)
        unions = self.masks[ua[uniq // len(ub)]] | self.masks[ub[uniq % len(ub)]]
        return self._intern(unions)[inv]

    def _intern(self, unions):
        """Set ids of the bitmask rows `unions`; a set not seen before gets the next id, in row order."""
        keys = unions.view(np.dtype((np.void, unions.itemsize * unions.shape[1]))).reshape(-1).tolist()
        ids, S = self._id, self.n_sets
        new = list(dict.fromkeys(u for u in keys if u not in ids))  # new sets: the next ids, in row order
        if new:
            ids.update(zip(new, range(S, S + len(new))))
            while S + len(new) > len(self.masks):
                self.masks = np.concatenate([self.masks, np.zeros_like(self.masks)])
            self.masks[S:S + len(new)] = np.frombuffer(b"".join(new), dtype=self.masks.dtype).reshape(len(new), -1)
            self.n_sets = S + len(new)
        return np.array(list(map(ids.__getitem__, keys)), dtype=np.int64)

    def _descs(self, ids):
        """(first, count, period, limit) of set ids (trace.encode_who of each distinct set once)."""
        uniq, inv = _dense_unique(ids, self.n_sets)  # only the sets messages carry
        n, trace = self.comm.n, self.comm.trace
        desc = np.empty((len(uniq), 4), dtype=np.int64)
        block = max(1, (1 << 24) // max(n, 1))  # sets a block: at most 16 M bits in memory at once
        for lo in range(0, len(uniq), block):
            part = uniq[lo:lo + block]
            bits = np.unpackbits(self.masks[part].view(np.uint8), axis=1,
                                 bitorder="little")[:, :n].astype(bool)  # row: the set's devices
            count = bits.sum(axis=1)
            rising = bits & ~np.roll(bits, 1, axis=1)  # device i in, device i−1 (cyclic) out
            arc = rising.sum(axis=1) == 1  # a cyclic arc: what trace.encode_who stores as (first, count, n, n)
            d = desc[lo:lo + len(part)]
            d[:, 0] = np.where(arc, rising.argmax(axis=1), 0)
            d[:, 1], d[:, 2], d[:, 3] = count, n, n
            rows = np.flatnonzero(~arc & (count < n))  # anything else: the trace's explicit lists
            members = np.nonzero(bits[rows])[1].tolist()  # sorted, row after row
            if len(rows):
                d[rows] = trace.encode_explicit_many(members, np.cumsum(count[rows]).tolist())
        return desc.take(inv.reshape(-1), axis=0)

    def move(self, src, dst, fine, ready, step, phase, reduce, half=None, key=None, desc=None, plan=None):
        """
        Send fine chunks from src to dst (add when reduce, else copy); returns the arrivals.
        src, dst, ready: one value or arrays of M moves; fine: M lists of F fine chunks each
        ((M, F) array, or one list for one move). One message per fine chunk, move by move, so
        the trace names every chunk the data covers (what a view replays); back to back on the
        same two ports they arrive when one message of their total bytes would: the ports
        serialise the bytes, α is paid once in the overlap (the port model).
        key: (M, KEYS) order of the moves in the recorded trace (default: call order).
        desc: (M·F, 4) the messages' contributor descriptors when the caller knows them (the
        channel rings: the channel-ring form of simcore/contributors.py); then no sets are kept for these chunks.
        plan: Comm._plan(src, dst, rounds=True) when the caller sends on the same ports step
        after step (worked out once).
        Returns each move's arrival (its last message's), an array (a float for one move).
        """
        one = np.ndim(src) == 0
        src = np.atleast_1d(np.asarray(src, dtype=np.int64))
        dst = np.atleast_1d(np.asarray(dst, dtype=np.int64))
        fine = np.asarray(fine, dtype=np.int64).reshape(len(src), -1)
        M, F = fine.shape
        comm = self.comm
        f = fine.reshape(-1)
        if np.ndim(half) and len(half) and (np.asarray(half) == np.asarray(half)[0]).all():
            half = {-1: None, 0: 0, 1: 1}[int(np.asarray(half)[0])]  # one half for every move
        if np.ndim(half):  # one half (None, 0 or 1 as −1, 0, 1) per move
            hcode = np.repeat(np.asarray(half, dtype=np.int64), F)
            b = self._bytes_by_code[hcode + 1, f] * comm.byte_scale
        else:
            hcode = None
            b = self._bytes_by_code[{None: 0, 0: 1, 1: 2}[half], f] * comm.byte_scale
        plan = comm._plan(src, dst) if plan is None else plan
        if plan.all_ports and not plan.in_turn:  # each move on its own ports: its F messages in a chain
            start, end = (x.reshape(-1) for x in comm._port_chains(plan, b.reshape(M, F), ready))
        else:
            plan = comm._plan(np.repeat(src, F), np.repeat(dst, F)) if F > 1 else plan
            start, end = comm._port_times(plan, b, np.repeat(np.broadcast_to(np.asarray(ready, dtype=float), (M,)), F))
        rows, frm = np.repeat(dst * self.G, F) + f, np.repeat(src * self.G, F) + f  # (device, fine chunk) as one index
        who = self.who.reshape(-1).take(frm) if desc is None else np.asarray(desc, dtype=np.int64).reshape(M * F, 4)
        if key is None:
            key = np.zeros((M, self.KEYS), dtype=np.int64)
            key[:, 0] = self._calls
            key[:, 1] = np.arange(M)
            self._calls += 1
        # a move's F messages stay together, in order: the moves are what finish sorts
        step = np.asarray(step, dtype=np.int64)  # one step for every message, or one each
        self._rows.append((np.asarray(key, dtype=np.int64).reshape(M, self.KEYS), phase,
                           np.broadcast_to(step.reshape(-1), (M,)) if step.size == 1 else None,
                           np.broadcast_to(step.reshape(-1), (M * F,)),
                           src, dst, f, b, start, end, bool(reduce), who, F))
        t = end.reshape(M, F).max(axis=1)
        if desc is not None:  # contributors given: move the data only
            self._data(rows, frm, reduce, half)
            return float(t[0]) if one else t
        # the data and the contributors; a chunk that two moves add into (both directions'
        # last hop) takes them one after the other, in the order given
        if reduce and M > 1:
            rounds = _occurrence(rows)
            if rounds is not None:
                if F > 1:  # the rounds take whole moves (both directions' blocks): keep them whole
                    per = rounds.reshape(M, F)
                    F = F if (per[:, 1:] == per[:, :1]).all() else 1
                cut = np.flatnonzero(rounds[1:] != rounds[:-1]) + 1
                if len(cut) + 1 == int(rounds.max()) + 1 and rounds[0] == 0:  # round after round: slices
                    for lo, hi in zip([0, *cut.tolist()], [*cut.tolist(), len(rounds)]):
                        self._update(rows[lo:hi], frm[lo:hi], who[lo:hi], True, half,
                                     None if hcode is None else hcode[lo:hi], F)
                    return float(t[0]) if one else t
                for r in range(int(rounds.max()) + 1):
                    m = rounds == r
                    self._update(rows[m], frm[m], who[m], True, half, None if hcode is None else hcode[m], F)
                return float(t[0]) if one else t
        self._update(rows, frm, who, reduce, half, hcode, F)
        return float(t[0]) if one else t

    def _update(self, rows, frm, who, reduce, half, hcode, F=1):
        """The data and contributors of messages whose (receiver, chunk) rows (d·G + f) are all
        different; frm: the senders' (s·G + f). F > 1: the messages come as whole moves of F."""
        if hcode is not None and not (hcode[1:] < hcode[:-1]).any():  # codes in order (a torus hop): slices
            at = [0, *np.searchsorted(hcode, [0, 1]).tolist(), len(hcode)]
            if at[1] == 0 and self.width is not None and self.width % 2 == 0:  # halves only: rows half as wide
                self._data(rows, frm, reduce, hcode)
            else:
                for code, lo, hi in zip((-1, 0, 1), at[:-1], at[1:]):
                    if hi > lo:
                        self._data(rows[lo:hi], frm[lo:hi], reduce, None if code < 0 else code)
            if at[1] < at[2]:  # half 0 leaves the contributors as they are
                rows, who = np.concatenate([rows[:at[1]], rows[at[2]:]]), np.concatenate([who[:at[1]], who[at[2]:]])
        elif hcode is not None:
            for code in (-1, 0, 1):
                m = hcode == code
                if m.any():
                    self._data(rows[m], frm[m], reduce, None if code < 0 else code)
            upd = hcode != 0
            rows, who = rows[upd], who[upd]
        else:
            self._data(rows, frm, reduce, half)
            if half == 0:
                return
        flat = self.who.reshape(-1)
        if not reduce:
            flat[rows] = who
            return
        a = flat.take(rows)
        if F > 1:  # a move whose F chunks all hold the same sets (a ring's block): unite once a move
            A, B = a.reshape(-1, F), who.reshape(-1, F)
            if (A[:, 1:] == A[:, :1]).all() and (B[:, 1:] == B[:, :1]).all():
                flat[rows] = np.repeat(self._unite(A[:, 0], B[:, 0]), F)
                return
        flat[rows] = self._unite(a, who)

    def _data(self, rows, frm, reduce, half):
        """Move (copy or add) the fine chunks of rows frm (s·G + f) to rows (d·G + f), or their half
        (0 or 1; with an even width also one half per message, an array)."""
        bufs = self.bufs
        if self.width is not None:
            w = self.width
            b2 = bufs.reshape(-1, w)  # row d·G + f: device d's fine chunk f
            if half is not None and w % 2 == 0:  # half a row is a whole row of rows half as wide
                b2, rows, frm = bufs.reshape(-1, w // 2), 2 * rows + half, 2 * frm + half
            elif half is not None:
                a, z = (0, w // 2) if half == 0 else (w // 2, w)
                if reduce:
                    b2[rows, a:z] += b2[frm, a:z]
                else:
                    b2[rows, a:z] = b2[frm, a:z]
                return
            # a row as one opaque item of its bytes: take() and put() move rows several times
            # faster than fancy indexing does, and the sums are the same additions
            row = np.dtype((np.void, b2.shape[1] * b2.itemsize))
            items = b2.view(row).reshape(-1)
            if reduce:
                x = b2.take(rows, axis=0)
                x += b2.take(frm, axis=0)
                np.put(items, rows, x.view(row).reshape(-1))
            else:
                np.put(items, rows, items.take(frm))
        else:
            d_rep, f = np.divmod(rows, self.G)
            s_rep = frm // self.G
            los = self.lo[f] if half != 1 else (self.lo[f] + self.hi[f]) // 2
            his = self.hi[f] if half != 0 else (self.lo[f] + self.hi[f]) // 2
            for i in range(len(f)):
                lo, hi, sd, dd = int(los[i]), int(his[i]), int(s_rep[i]), int(d_rep[i])
                if reduce:
                    bufs[dd, lo:hi] += bufs[sd, lo:hi]
                else:
                    bufs[dd, lo:hi] = bufs[sd, lo:hi]

    def finish(self):
        """Record every message sent, in the order of their keys."""
        if not self._rows:
            return
        rows, self._rows = self._rows, []
        # rows: (key M × KEYS, phase, step a move or None, step a message, src, dst (a move),
        # fine chunk, bytes, start, end (a message), reduce, contributors, F)
        key = np.concatenate([r[0] for r in rows])  # one row per move
        dims = key.max(axis=0) + 1
        if float(np.prod(dims.astype(float))) < 2.0**62:  # one int64 key: one argsort
            by = np.argsort(np.ravel_multi_index(tuple(key.T), tuple(int(d) for d in dims)), kind="stable")
        else:
            by = np.lexsort(key.T[::-1])
        F = np.concatenate([np.full(len(r[0]), r[12], dtype=np.int64) for r in rows])
        Fs = F[by]
        total = int(F.sum())
        ones = total == len(by)  # a message a move: message and move indexes are the same
        ends = None if ones else np.cumsum(Fs)  # where each move ends in the trace order
        in_order = bool(np.all(by[1:] > by[:-1]))  # issued in trace order (the channel rings)
        if in_order:
            order = slice(None)
        else:
            first = np.cumsum(F) - F  # each move's first message
            order = np.arange(total) + np.repeat(first[by] - (np.cumsum(Fs) - Fs if ones else ends - Fs), Fs)

        def per_move(values):  # one value a move, in the trace order, a message each
            v = np.concatenate(values)
            v = v if in_order else v[by]
            return v if total == len(by) else np.repeat(v, Fs)

        names = list(dict.fromkeys(r[1] for r in rows))
        phase_of = np.repeat([names.index(r[1]) for r in rows], [len(r[0]) for r in rows])
        red_of = np.repeat([r[10] for r in rows], [len(r[0]) for r in rows])
        if not in_order:
            phase_of, red_of = phase_of[by], red_of[by]
        if all(r[2] is not None for r in rows):
            step = per_move([r[2] for r in rows])
        else:
            step = np.concatenate([r[3] for r in rows])[order]
        src, dst = per_move([r[4] for r in rows]), per_move([r[5] for r in rows])
        cols = [step, src, dst] + [np.concatenate([r[j] for r in rows])[order] for j in (6, 7, 8, 9)]
        whos = [r[11] for r in rows]  # set ids (1-D), or descriptors the caller gave (M·F × 4)
        if all(w.ndim == 1 for w in whos):
            desc = self._descs(np.concatenate(whos)[order])
        else:
            desc = np.empty((total, 4), dtype=np.int64)
            at = np.cumsum([0] + [len(w) for w in whos])
            sets = [i for i, w in enumerate(whos) if w.ndim == 1]
            if sets:
                got = self._descs(np.concatenate([whos[i] for i in sets]))
                cut = np.cumsum([0] + [len(whos[i]) for i in sets])
                for j, i in enumerate(sets):
                    desc[at[i]:at[i + 1]] = got[cut[j]:cut[j + 1]]
            for i, w in enumerate(whos):
                if w.ndim == 2:
                    desc[at[i]:at[i + 1]] = w
            desc = desc[order]
        # one add_messages per run of the same phase and reduce flag (moves in the trace order)
        cut = np.flatnonzero((phase_of[1:] != phase_of[:-1]) | (red_of[1:] != red_of[:-1])) + 1
        comm = self.comm
        comm.trace.reserve(total)  # the columns grow once
        for lo_m, hi_m in zip(np.r_[0, cut], np.r_[cut, len(by)]):
            lo, hi = (int(lo_m), int(hi_m)) if ones else (int(ends[lo_m] - Fs[lo_m]), int(ends[hi_m - 1]))
            step, src, dst, chunk, b, start, end = (c[lo:hi] for c in cols)
            w = desc[lo:hi]
            comm._record(step, src, dst, chunk, b, start, end, (w[:, 0], w[:, 1], w[:, 2], w[:, 3]),
                         names[phase_of[lo_m]], bool(red_of[lo_m]))


def _occurrence(keys):
    """Each key's index among the earlier equal keys (ints >= 0), or None when no key repeats."""
    if not len(keys):
        return None
    most = int(np.bincount(keys).max())
    if most < 2:  # most steps: no sort needed
        return None
    at = np.arange(len(keys))
    if most == 2:  # a chunk that two moves add into: the later one is its second
        first = np.full(int(keys.max()) + 1, len(keys))
        np.minimum.at(first, keys, at)
        return (first[keys] != at).astype(np.int64)
    order = np.argsort(keys, kind="stable")
    by = keys[order]
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    np.not_equal(by[1:], by[:-1], out=new[1:])
    out = np.empty(len(keys), dtype=np.int64)
    out[order] = at - np.maximum.accumulate(np.where(new, at, 0))  # minus where its run of equal keys starts
    return out


def _dense_unique(values, size):
    """np.unique(values, return_inverse=True) of ints in [0, size), through a table of size."""
    seen = np.zeros(size, dtype=bool)
    seen[values] = True
    uniq = np.flatnonzero(seen)
    rank = np.empty(size, dtype=np.int64)
    rank[uniq] = np.arange(len(uniq))
    return uniq, rank[values]


def _stack(arrays, n, what):
    if len(arrays) != n:
        raise ValueError(f"{what}: got {len(arrays)} arrays for {n} devices")
    shapes = {np.shape(a) for a in arrays}
    if len(shapes) != 1 or np.asarray(arrays[0]).ndim != 1:
        raise ValueError(f"{what}: every device must hold a 1-D array of the same length, got {sorted(shapes)}")
    return np.array(arrays, dtype=np.result_type(*arrays))


def _key(block, R, g, sub, k):
    """Order keys (block, group r, sub-phase, step k, position j) of R groups × g positions."""
    key = np.zeros((R, g, _Run.KEYS), dtype=np.int64)
    key[..., 0], key[..., 2], key[..., 3] = block, sub, k
    key[..., 1] = np.arange(R)[:, None]
    key[..., 4] = np.arange(g)[None, :]
    return key.reshape(R * g, _Run.KEYS)


def _ring_rs(run, groups, segs, ready, step0, phase, block=0, sub=0):
    """Ring reduce-scatter in each of the groups (R × g device ids, each row in ring order) over
    segments segs[r, c] (F fine chunks each), c = 0..g−1; afterwards groups[r, j] holds
    segs[r, (j+1) % g] summed. All groups step together (they share no port); the trace keeps
    the order group by group (block, r, sub are the order key's first columns)."""
    R, g = groups.shape
    pos = np.arange(g)
    src = groups.reshape(-1)
    dst = groups[:, (pos + 1) % g].reshape(-1)
    F = segs.shape[2]
    for k in range(g - 1):
        seg = segs[:, (pos - k) % g, :].reshape(-1, F)
        t = run.move(src, dst, seg, ready[src], step0 + k, phase, True, key=_key(block, R, g, sub, k))
        ready[dst] = np.maximum(ready[dst], t)


def _ring_ag(run, groups, segs, first, ready, step0, phase, block=0, sub=0):
    """Ring all-gather in each group: groups[r, j] starts with segs[r, first[r, j]] and ends with
    all (shapes as _ring_rs; first: R × g)."""
    R, g = groups.shape
    pos = np.arange(g)
    src = groups.reshape(-1)
    dst = groups[:, (pos + 1) % g].reshape(-1)
    F = segs.shape[2]
    rows = np.arange(R)[:, None]
    for k in range(g - 1):
        seg = segs[rows, first[:, (pos - k) % g], :].reshape(-1, F)
        t = run.move(src, dst, seg, ready[src], step0 + k, phase, False, key=_key(block, R, g, sub, k))
        ready[dst] = np.maximum(ready[dst], t)


def _nodes_shape(comm):
    """(P, N) of a comm on comm_sim's nodes topology."""
    topo = comm.topology  # any topology with route() and these two (a test's reference nodes too)
    P = getattr(topo, "per_node", None)
    N = getattr(topo, "n_nodes", None)
    if P is None or N is None:
        raise ValueError("this collective needs a nodes(...) topology (GPUs per node and nodes)")
    return int(P), int(N)


def allreduce_hier(comm, arrays, label=""):
    """
    Hierarchical all-reduce on nodes(N, P): ring reduce-scatter inside every node, ring
    all-reduce across nodes among the GPUs with the same local index (each on its own NIC),
    ring all-gather inside every node. Time: t_hier (module docstring).
    """
    P, N = _nodes_shape(comm)
    n = comm.n
    bufs = _stack(arrays, n, "all-reduce")
    G = P * N
    comm._begin("all-reduce", "hier", label, G, bufs[0].nbytes, Initial.own_all(n, G))
    run = _Run(comm, bufs, G)
    ready = np.array(comm.ready, dtype=float)
    segs = np.arange(G).reshape(P, N)  # P node-level chunks of N fine ones
    local = np.arange(n).reshape(N, P)  # node m's GPUs in ring order
    if P > 1:
        _ring_rs(run, local, np.broadcast_to(segs, (N, P, N)), ready, 0, "reduce-scatter (node)", block=0)
        comm._relaunch(ready.max())  # the next phase is the next collective call
    if N > 1:
        across = local.T.copy()  # the GPUs with local index j, one per node
        sub = segs[(np.arange(P) + 1) % P][:, :, None]  # GPU j's node chunk, cut into N
        _ring_rs(run, across, sub, ready, P - 1, "reduce-scatter (network)", block=1, sub=0)
        first = np.broadcast_to((np.arange(N) + 1) % N, (P, N))
        _ring_ag(run, across, sub, first, ready, P - 1 + N - 1, "all-gather (network)", block=1, sub=1)
    if P > 1:
        if N > 1:
            comm._relaunch(ready.max())
        _ring_ag(run, local, np.broadcast_to(segs, (N, P, N)), np.broadcast_to((np.arange(P) + 1) % P, (N, P)), ready,
                 P - 1 + 2 * (N - 1), "all-gather (node)", block=2)
    run.finish()
    comm._end()
    return [bufs[d] for d in range(n)]


def allreduce_hier_pipelined(comm, arrays, label="", chunks=None):
    """
    Hierarchical all-reduce on nodes(N, P) pipelined by chunks, as NCCL pipelines its
    hierarchical (Tree) all-reduce: one call, the buffer cut into `chunks` pipeline chunks
    (None: hier_chunks(S)), each going through the three phases of allreduce_hier — ring
    reduce-scatter in the node, ring all-reduce across nodes on each GPU's own NIC, ring
    all-gather in the node — on its own clock, so chunk c+1's reduce-scatter in the node runs
    while chunk c crosses the network (NCCL src/device/all_reduce.h, runTreeUpDown: every phase
    loops `for (elemOffset = 0; elemOffset < channelCount; elemOffset += chunkCount)`, and the
    primitives' NCCL_STEPS slots let a stage take the next chunk while the previous one moves on).
    Messages are issued phase by phase, chunk by chunk, so the node ports serve the chunks'
    reduce-scatters before their all-gathers (FIFO). Time: topo_closed_forms.t_hier_pipelined.
    chunks None: hier_pipeline_chunks (the least time of 1..⌈S / 2 MiB⌉, at most 16). The
    registry's "hier" all-reduce; allreduce_hier (three calls, unpipelined) stays as the
    comparison the tests and the lecture draw.
    """
    from .topo_closed_forms import hier_pipeline_chunks
    P, N = _nodes_shape(comm)
    n = comm.n
    bufs = _stack(arrays, n, "all-reduce")
    if chunks is None:
        topo = comm.topology
        C = hier_pipeline_chunks(P, N, bufs[0].nbytes * comm.byte_scale, topo.intra, topo.inter)
    else:
        C = int(chunks)
    if C < 1:
        raise ValueError(f"a pipeline needs at least one chunk, got {chunks!r}")
    G = C * P * N
    comm._begin("all-reduce", "hier", label, G, bufs[0].nbytes, Initial.own_all(n, G))
    run = _Run(comm, bufs, G)
    ready = [np.array(comm.ready, dtype=float) for _ in range(C)]  # each chunk's own clock
    segs = [c * P * N + np.arange(P * N).reshape(P, N) for c in range(C)]  # chunk c: P node-level pieces of N
    local = np.arange(n).reshape(N, P)
    across = local.T.copy()
    if P > 1:
        for c in range(C):
            _ring_rs(run, local, np.broadcast_to(segs[c], (N, P, N)), ready[c], c, "reduce-scatter (node)", block=c)
    if N > 1:
        first = np.broadcast_to((np.arange(N) + 1) % N, (P, N))
        for c in range(C):
            sub = segs[c][(np.arange(P) + 1) % P][:, :, None]
            _ring_rs(run, across, sub, ready[c], c + P - 1, "reduce-scatter (network)", block=C + c, sub=0)
            _ring_ag(run, across, sub, first, ready[c], c + P - 1 + N - 1, "all-gather (network)", block=C + c,
                     sub=1)
    if P > 1:
        for c in range(C):
            _ring_ag(run, local, np.broadcast_to(segs[c], (N, P, N)), np.broadcast_to((np.arange(P) + 1) % P, (N, P)),
                     ready[c], c + P - 1 + 2 * (N - 1), "all-gather (node)", block=2 * C + c)
    run.finish()
    comm._end()
    return [bufs[d] for d in range(n)]


def channel_ring(c, P, N):
    """NCCL-style ring of channel c: inside node m the local GPUs c, c+1, …, c−1, then the NIC
    of GPU c−1 to GPU c of node m+1. Returns the device ids in ring order."""
    return [m * P + (c + i) % P for m in range(N) for i in range(P)]


def _channel_who(rings, P, N, k, reduced):
    """
    Contributors of the step-k messages of every channel's ring (C × n senders, channel-major):
    after a reduce-scatter step k the partial sum of positions q−k..q (an arc of channel c's
    ring: the channel-ring form of simcore/contributors.py, or a plain arc where the ring runs in device order);
    in an all-gather the block of the device at position q−k alone, or everyone once reduced.
    """
    C, n = rings.shape
    q = np.broadcast_to(np.arange(n), (C, n))
    out = np.empty((C, n, 4), dtype=np.int64)
    if reduced is None:  # an all-gather: the origin's own piece
        out[..., 0] = rings[np.arange(C)[:, None], (q - k) % n]
        out[..., 1], out[..., 2], out[..., 3] = 1, n, n
    elif reduced:  # everyone's sum goes round
        out[...] = (0, n, n, n)
    else:
        q0 = (q - k) % n
        c = np.arange(C)[:, None]
        plain = (c == 0) | (N == 1) | (k == 0)  # channel 0 (and one node) run in device order
        first_dev = rings[np.arange(C)[:, None], q0]
        out[..., 0] = np.where(plain, first_dev, c * n + q0)
        out[..., 1] = k + 1
        out[..., 2] = np.where(plain, n, -P)
        out[..., 3] = n
    return out.reshape(C * n, 4)


def _lockstep_rings(run, rings, segs_of, first_of, op_phases, ready, P=None, N=None):
    """Run several rings (channels) step by step: every device starts step k+1 when all its
    step-k chunks (of every channel) have landed. rings: C × n device ids; segs_of: C × n × F
    fine chunks; first_of: C × n (all-gather: position q starts with segs_of[c, first_of[c, q]]).
    One batch a step, channel by channel, position by position (the order of the trace).
    P, N: the channel rings of nodes(N, P) (channel_ring), whose contributors are known
    without sets (_channel_who: what building them message by message gave, as descriptors)."""
    rings = np.asarray(rings, dtype=np.int64)
    segs_of = np.asarray(segs_of, dtype=np.int64)
    C, n = rings.shape
    F = segs_of.shape[2]
    pos = np.arange(n)
    src = rings.reshape(-1)
    dst = rings[:, (pos + 1) % n].reshape(-1)
    rows = np.arange(C)[:, None]
    plan = run.comm._plan(src, dst, rounds=True)  # the same ports every step
    step = 0
    summed = False
    for phase, reduce in op_phases:
        for k in range(n - 1):
            if reduce:
                seg = segs_of[:, (pos - k) % n, :]
            else:
                seg = segs_of[rows, np.asarray(first_of)[:, (pos - k) % n], :]
            desc = None
            if P is not None and F == 1:
                desc = _channel_who(rings, P, N, k, False if reduce else (True if summed else None))
            t = run.move(src, dst, seg.reshape(-1, F), ready[src], step, phase, reduce, desc=desc, plan=plan)
            arrivals = ready.copy()
            np.maximum.at(arrivals, dst, t)
            ready[:] = arrivals
            step += 1
        summed = summed or reduce


def allreduce_ring_nodes(comm, arrays, label=""):
    """
    NCCL-style ring all-reduce on nodes(N, P) with P channels, channel c leaving every node
    through GPU c−1's NIC (channel_ring); the buffer is split over the channels, each channel
    runs ring reduce-scatter then all-gather, in lockstep. Time: t_ring_nodes.
    """
    P, N = _nodes_shape(comm)
    n = comm.n
    bufs = _stack(arrays, n, "all-reduce")
    G = P * n
    comm._begin("all-reduce", "ring-nodes", label, G, bufs[0].nbytes, Initial.own_all(n, G))
    run = _Run(comm, bufs, G)
    ready = np.array(comm.ready, dtype=float)
    if n > 1:
        rings = [channel_ring(c, P, N) for c in range(P)]
        segs_of = [[[c * n + i] for i in range(n)] for c in range(P)]
        first_of = [[(q + 1) % n for q in range(n)] for _ in range(P)]
        _lockstep_rings(run, rings, segs_of, first_of, (("reduce-scatter", True), ("all-gather", False)), ready, P, N)
    run.finish()
    comm._end()
    return [bufs[d] for d in range(n)]



def allgather_ring_nodes(comm, chunks, owner=None, label=""):
    """
    NCCL-style ring all-gather on nodes(N, P), one channel per NIC (channel_ring): chunks[d]
    is device d's 1-D piece (equal lengths, divisible by P); every device ends with the pieces
    concatenated in device order. Channel c carries the c-th of P parts of every piece, so each
    step every GPU sends one part through its NIC and P−1 over NVLink. Time: t_ring_nodes.
    owner: the registry's all-gather signature; only {d: d} (device d holds piece d) is taken.
    """
    P, N = _nodes_shape(comm)
    n = comm.n
    if owner is not None and any(owner[d] != d for d in range(n)):
        raise ValueError("all-gather on channel rings needs device d to hold piece d (owner {d: d})")
    pieces = _stack(chunks, n, "all-gather")
    Lp = pieces.shape[1]
    if Lp % P:
        raise ValueError(f"all-gather: piece length {Lp} is not divisible by the {P} channels (GPUs per node)")
    bufs = np.zeros((n, n * Lp), dtype=pieces.dtype)
    for d in range(n):
        bufs[d, d * Lp:(d + 1) * Lp] = pieces[d]
    G = P * n  # fine chunk d·P + c: channel c's part of device d's piece
    comm._begin("all-gather", "ring-nodes", label, G, bufs[0].nbytes,
                [{d * P + c: frozenset((d,)) for c in range(P)} for d in range(n)])
    run = _Run(comm, bufs, G)
    ready = np.array(comm.ready, dtype=float)
    if n > 1:
        rings = [channel_ring(c, P, N) for c in range(P)]
        segs_of = [[[d * P + c] for d in range(n)] for c in range(P)]
        _lockstep_rings(run, rings, segs_of, [list(r) for r in rings], (("all-gather", False),), ready, P, N)
    run.finish()
    comm._end()
    return [bufs[d] for d in range(n)]


def reduce_scatter_ring_nodes(comm, arrays, label=""):
    """
    NCCL-style ring reduce-scatter on nodes(N, P), one channel per NIC: arrays[d] is device d's
    1-D partial (length divisible by P·n); returns (pieces, owner) with owner[d] = d: device d
    ends with segment d of the sum (the d-th of n equal pieces). Time: t_ring_nodes.
    """
    P, N = _nodes_shape(comm)
    n = comm.n
    bufs = _stack(arrays, n, "reduce-scatter")
    if bufs.shape[1] % (P * n):
        raise ValueError(f"reduce-scatter: length {bufs.shape[1]} is not divisible by {n} devices x {P} channels")
    G = P * n  # fine chunk d·P + c: channel c's part of segment d
    comm._begin("reduce-scatter", "ring-nodes", label, G, bufs[0].nbytes, Initial.own_all(n, G))
    run = _Run(comm, bufs, G)
    ready = np.array(comm.ready, dtype=float)
    if n > 1:
        rings = [channel_ring(c, P, N) for c in range(P)]
        # position q ends with segs[(q + 1) % n]: make that its own device's segment
        segs_of = [[[ring[(i - 1) % n] * P + c] for i in range(n)] for c, ring in enumerate(rings)]
        _lockstep_rings(run, rings, segs_of, None, (("reduce-scatter", True),), ready, P, N)
    run.finish()
    comm._end()
    L = bufs.shape[1] // n
    return [bufs[d, d * L:(d + 1) * L].copy() for d in range(n)], {d: d for d in range(n)}


# -- tori --------------------------------------------------------------------------------
def _torus_shape(comm):
    """(shape, wrap) of a comm on a torus: any topology with comm_sim's route() interface and a
    shape (a test's reference torus too); wraps() where it has one, else every axis wraps."""
    topo = comm.topology
    shape = getattr(topo, "shape", None)
    if shape is None:
        raise ValueError("this collective needs a torus(...) topology")
    wrap = topo.wraps() if hasattr(topo, "wraps") else getattr(topo, "wrap", None)
    shape = tuple(int(a) for a in shape)
    return shape, (tuple(bool(w) for w in wrap) if wrap else (True,) * len(shape))


def _lines(shape, axis):
    """Every line of devices along `axis`: an array (lines × shape[axis]) of device ids in
    coordinate order, lines in row-major order of the other coordinates."""
    ids = np.arange(math.prod(shape)).reshape(shape)
    return np.ascontiguousarray(np.moveaxis(ids, axis, -1).reshape(-1, shape[axis]))


@functools.lru_cache(maxsize=4096)
def _hop_plan(J, Lc, N, ring, h, dist):
    """
    Hop h of J stacked jobs (each Lc lines of N positions), both directions, as flat indexes
    in the order of the batch (side 0 right / 1 left, job, line, sending position: a reduction's
    two last hops into the same chunk come one half of the batch after the other): into the
    jobs' lines (J·Lc·N) of the senders, the receivers and the positions whose block they
    carry (_hop_moves); into the clocks (J × 2 × Lc × N) of the senders and the receivers;
    each move's side and job; and the order keys without their first two columns. Read-only,
    shared by every call with the same shape.
    """
    sides = [_hop_moves(N, ring, h, dist, side == 0) for side in (0, 1)]
    Ni = len(sides[0][0])
    assert all(len(x[0]) == Ni for x in sides)  # a line's two directions have as many senders
    i, dst, other = (np.stack([x[q] for x in sides])[:, None, None, :] for q in range(3))  # 2 × 1 × 1 × Ni
    side = np.arange(2)[:, None, None, None]
    job = np.arange(J)[None, :, None, None]
    line = np.arange(Lc)[None, None, :, None]
    at = (job * Lc + line) * N  # a line's first position in the jobs' lines
    clk = ((job * 2 + side) * Lc + line) * N
    shape = (2, J, Lc, Ni)
    plan = {"src": at + i, "dst": at + dst, "other": at + other, "clock_src": clk + i, "clock_dst": clk + dst,
            "side": side, "job": job}
    plan = {name: np.ascontiguousarray(np.broadcast_to(v, shape)).reshape(-1) for name, v in plan.items()}
    key = np.zeros(shape + (_Run.KEYS,), dtype=np.int64)
    key[..., 2], key[..., 3], key[..., 4], key[..., 5] = line, h, side, i
    plan["key"] = key.reshape(-1, _Run.KEYS)
    for v in plan.values():
        v.setflags(write=False)
    return plan


def _hop_moves(N, ring, h, dist, right):
    """Positions i that send at hop h (rightward or leftward), their receivers and the positions
    whose block (all-gather: dist = −(h − 1), the origin h − 1 behind) or target (reduce-scatter:
    dist ahead) they carry."""
    i = np.arange(N)
    other, dst = (i + dist, i + 1) if right else (i - dist, i - 1)
    if ring:
        return i, dst % N, other % N
    ok = (dst >= 0) & (dst < N) & (other >= 0) & (other < N)
    return i[ok], dst[ok], other[ok]


def _axis_run(run, jobs, step0, phase, reduce):
    """
    Bidirectional rings along every line of some axes at once. jobs: (lines, blocks, wrap,
    ready, key0) each — lines × N device ids of one axis, blocks (lines × N × F fine chunks),
    the axis's wraparound, the clock the job reads and moves (an array per device), and the
    order key's first two columns. All-gather (reduce False): position i starts with the fine
    chunks blocks[l, i] and ends with all of them; with wrap each block goes half way round in
    each direction (even N: the opposite block half each way), without, the whole line.
    Reduce-scatter (reduce True): every position holds partials of all blocks[l, o] (targets),
    and position o ends with blocks[l, o] summed over the line, the farthest partials first (the
    mirror). The jobs' lines and directions share no port, so every hop of all of them is one
    batch (one per block width F), jobs of the same shape stacked into one set of arrays; the
    batch keeps the order direction, job, line, position (_hop_plan) and the trace the order
    job, line, hop, direction, position. Returns the most hops of a job.
    """
    groups = {}  # (lines, positions, ring, F) → the jobs of that shape, stacked
    for js, (lines, blocks, wrap, ready, key0) in enumerate(jobs):
        Lc, N = lines.shape
        if N > 1:
            groups.setdefault((Lc, N, bool(wrap) and N > 2, blocks.shape[2]), []).append(js)
    state = []
    for (Lc, N, ring, F), js in groups.items():
        J = len(js)
        lines = np.stack([jobs[j][0] for j in js])  # J × Lc × N
        clock = np.empty((J, 2, Lc, N))  # when position i's right- (and left-) going data is ready
        for q, j in enumerate(js):
            clock[q, :] = jobs[j][3][jobs[j][0]]
        state.append(dict(js=js, J=J, Lc=Lc, N=N, ring=ring, F=F, hops=N // 2 if ring else N - 1,
                          lines=lines.reshape(-1), blocks=np.stack([jobs[j][1] for j in js]).reshape(-1, F),
                          clock=clock.reshape(-1), arrive=np.full(J * Lc * N, -np.inf),
                          key0=np.array([jobs[j][4] for j in js], dtype=np.int64)))
    most = max((st["hops"] for st in state), default=0)
    reuse = {}  # F → (src, dst, plan) of the last hop: a ring's hops all use the same ports
    for h in range(1, most + 1):
        batches = {}  # F → (group, its hop plan) of this hop
        for st in state:
            if h > st["hops"]:
                continue
            N, ring = st["N"], st["ring"]
            dist = st["hops"] - h + 1 if reduce else -(h - 1)
            batches.setdefault(st["F"], []).append((st, _hop_plan(st["J"], st["Lc"], N, ring, h, dist)))
        done = []
        for F, pieces in batches.items():
            parts = []
            for st, hp in pieces:
                key = hp["key"].copy()
                key[:, :2] = st["key0"][hp["job"]]
                last = h == 1 if reduce else h == st["hops"]
                half = hp["side"] if st["ring"] and st["N"] % 2 == 0 and last else None  # side 0 half 0, 1 half 1
                parts.append((st["lines"].take(hp["src"]), st["lines"].take(hp["dst"]),
                              st["blocks"].take(hp["other"], axis=0), st["clock"].take(hp["clock_src"]), key, half))
            if len(parts) == 1:
                src, dst, fine, ready, key, half = parts[0]
            else:
                src, dst, fine, ready, key = (np.concatenate([p[q] for p in parts]) for q in range(5))
                half = None if all(p[5] is None for p in parts) else np.concatenate(
                    [np.full(len(p[0]), -1) if p[5] is None else p[5] for p in parts])
            if F in reuse and np.array_equal(reuse[F][0], src) and np.array_equal(reuse[F][1], dst):
                plan = reuse[F][2]
            else:
                plan = run.comm._plan(src, dst)
                reuse[F] = (src, dst, plan)
            t = run.move(src, dst, fine, ready, step0 + h - 1, phase, reduce, half, key=key, plan=plan)
            at = 0
            for st, hp in pieces:
                done.append((st, hp, t[at:at + len(hp["src"])]))
                at += len(hp["src"])
        for st, hp, t in done:  # every hop's moves read the clocks before any is moved
            st["clock"][hp["clock_dst"]] = t
            np.maximum.at(st["arrive"], hp["dst"], t)
    for st in state:
        arrive = st["arrive"].reshape(st["J"], -1)
        for q, j in enumerate(st["js"]):
            lines, ready = jobs[j][0], jobs[j][3]
            ready[lines] = np.maximum(ready[lines], arrive[q].reshape(lines.shape))
    return most


def _torus_plan(shape):
    """Axes longer than 1, and for part j the axis order j, j+1, … (all-gather order)."""
    axes = [a for a, s in enumerate(shape) if s > 1]
    k = len(axes)
    return axes, [axes[j:] + axes[:j] for j in range(k)]


def _torus_gather_phases(run, shape, wrap, orders, ready, step0, phase, block0=0):
    """All-gather part j of every device along orders[j], phase by phase across parts.
    ready[j][d]: when device d has part j's data (each part keeps its own clock, an array)."""
    n = math.prod(shape)
    k = len(orders)
    gathered = [np.arange(n)[:, None] for _ in range(k)]  # whose part-j chunk device d holds (sorted)
    step = step0
    for p in range(k):
        jobs, held = [], []
        for j in range(k):
            lines = _lines(shape, orders[j][p])
            held.append(gathered[j][lines])  # lines × N × F
            jobs.append((lines, held[j] * k + j, wrap[orders[j][p]], ready[j], (block0 + p, j)))
        most = _axis_run(run, jobs, step, phase, False)
        for j in range(k):
            lines = jobs[j][0]
            union = np.sort(held[j].reshape(len(lines), -1), axis=1)
            g = np.empty((n, union.shape[1]), dtype=np.int64)
            g[lines] = union[:, None, :]
            gathered[j] = g
        step += most
    return step


def _torus_scatter_phases(run, shape, wrap, orders, ready, step0, phase, block0=0):
    """Reduce-scatter: part j along reversed(orders[j]); device d ends with fine chunk d·k + j
    summed. ready[j][d] as in _torus_gather_phases."""
    n = math.prod(shape)
    k = len(orders)
    coords = np.array(np.unravel_index(np.arange(n), shape))
    # region[j][d]: the devices e (sorted) whose part-j fine chunk device d still holds partials for
    region = [None] * k  # None: every device
    step = step0
    for p in range(k):
        jobs, tgt = [], []
        for j in range(k):
            axis = list(reversed(orders[j]))[p]
            lines = _lines(shape, axis)
            Lc, N = lines.shape
            reg = np.broadcast_to(np.arange(n), (Lc, n)) if region[j] is None else region[j][lines[:, 0]]
            by = np.argsort(coords[axis][reg], axis=1, kind="stable")  # target o: axis coordinate o
            tgt.append(np.take_along_axis(reg, by, axis=1).reshape(Lc, N, -1))
            jobs.append((lines, tgt[j] * k + j, wrap[axis], ready[j], (block0 + p, j)))
        most = _axis_run(run, jobs, step, phase, True)
        for j in range(k):
            lines, targets = jobs[j][0], tgt[j]
            r = np.empty((n, targets.shape[2]), dtype=np.int64)
            r[lines] = targets
            region[j] = r
        step += most
    return step


def torus_all_gather(comm, chunks, label=""):
    """
    All-gather on a torus: chunks[d] is device d's 1-D piece (equal lengths); every device
    ends with np.concatenate(chunks). Bidirectional rings per axis, one part per axis
    (t_torus, op="all-gather", with S the output's bytes).
    """
    shape, wrap = _torus_shape(comm)
    n = comm.n
    pieces = _stack(chunks, n, "all-gather")
    axes, orders = _torus_plan(shape)
    k = max(1, len(axes))
    Lp = pieces.shape[1]
    bufs = np.zeros((n, n * Lp), dtype=pieces.dtype)
    for d in range(n):
        bufs[d, d * Lp:(d + 1) * Lp] = pieces[d]
    if Lp % k:  # refused before anything is recorded
        raise ValueError(f"all-gather: piece length {Lp} is not divisible by the torus's {k} axes")
    G = n * k
    initial = [{d * k + j: frozenset((d,)) for j in range(k)} for d in range(n)]
    comm._begin("all-gather", "torus", label, G, bufs[0].nbytes, initial)
    run = _Run(comm, bufs, G)
    ready = [np.array(comm.ready, dtype=float) for _ in range(k)]
    if axes:
        _torus_gather_phases(run, shape, wrap, orders, ready, 0, "all-gather")
    run.finish()
    comm._end()
    return [bufs[d] for d in range(n)]


def _torus_reduction_begin(comm, arrays, op, label):
    """
    The start both torus reductions share: stack the partials, check the length splits into
    n devices × k axes parts (before anything is recorded), begin the collective with every
    device holding its own partial of every part. Returns (shape, wrap, axes, orders, bufs,
    run, ready).
    """
    shape, wrap = _torus_shape(comm)
    n = comm.n
    bufs = _stack(arrays, n, op)
    axes, orders = _torus_plan(shape)
    k = max(1, len(axes))
    if bufs.shape[1] % (n * k):
        raise ValueError(f"{op}: length {bufs.shape[1]} is not divisible by {n} devices x {k} axes")
    G = n * k
    comm._begin(op, "torus", label, G, bufs[0].nbytes, Initial.own_all(n, G))
    run = _Run(comm, bufs, G)
    ready = [np.array(comm.ready, dtype=float) for _ in range(k)]
    return shape, wrap, axes, orders, bufs, run, ready


def torus_reduce_scatter(comm, arrays, label=""):
    """
    Reduce-scatter on a torus: arrays[d] is device d's 1-D partial (length divisible by n·k);
    device d ends with segment d (the d-th of n equal pieces) of the sum. Returns the pieces.
    """
    shape, wrap, axes, orders, bufs, run, ready = _torus_reduction_begin(comm, arrays, "reduce-scatter", label)
    n = comm.n
    if axes:
        _torus_scatter_phases(run, shape, wrap, orders, ready, 0, "reduce-scatter")
    run.finish()
    comm._end()
    L = bufs.shape[1] // n
    return [bufs[d, d * L:(d + 1) * L].copy() for d in range(n)]


def allgather_torus(comm, chunks, owner=None, label=""):
    """torus_all_gather in the registry's all-gather signature (owner: only {d: d} is taken)."""
    if owner is not None and any(owner[d] != d for d in range(comm.n)):
        raise ValueError("all-gather on a torus needs device d to hold piece d (owner {d: d})")
    return torus_all_gather(comm, chunks, label)


def reduce_scatter_torus(comm, arrays, label=""):
    """torus_reduce_scatter in the registry's signature: (pieces, owner), owner[d] = d."""
    return torus_reduce_scatter(comm, arrays, label), {d: d for d in range(comm.n)}


def allreduce_torus(comm, arrays, label=""):
    """All-reduce on a torus: torus reduce-scatter, then torus all-gather, one collective."""
    shape, wrap, axes, orders, bufs, run, ready = _torus_reduction_begin(comm, arrays, "all-reduce", label)
    n = comm.n
    if axes:
        step = _torus_scatter_phases(run, shape, wrap, orders, ready, 0, "reduce-scatter")
        _torus_gather_phases(run, shape, wrap, orders, ready, step, "all-gather", block0=len(orders))
    run.finish()
    comm._end()
    return [bufs[d] for d in range(n)]
