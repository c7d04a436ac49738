"""
The columnar trace and the whole-step schedules against a plain reference written here.

The reference is the simulator as it was before the engine was vectorised: one Python call
per message, the port model applied message by message, every partial sum a frozenset of
devices, every message a plain record. For every algorithm and n = 2..16 (twice in a row
on one Comm, so the second call starts from busy ports and uneven ready times) the engine's
trace must hold the same messages in the same order — src, dst, step, chunk, phase, reduce,
bytes, contributors — with the same times, and the same per-step holdings; the arrays it
returns must be the reference's sums.
"""

from typing import NamedTuple

import numpy as np
import pytest

from simcore.algorithms import ALGORITHMS
from simcore.collectives import allreduce_ring, reduce_scatter_ring
from simcore.comm_sim import Comm
from simcore.links import NVLINK4, LinkSpec
from simcore.topology import switch
from simcore.trace import ALL, SWITCH

LINK = LinkSpec("test link", alpha=1.3e-6, bw=7e10)


class Ref(NamedTuple):
    step: int
    src: int
    dst: int
    chunk: int
    contributors: frozenset
    nbytes: float
    t_start: float
    t_end: float
    phase: str
    reduce: bool


class RefComm:
    """n devices on one switch, timed one message at a time (the port model, written out)."""

    def __init__(self, n, link, byte_scale):
        self.n, self.alpha, self.bw, self.scale = n, link.alpha, link.bw, byte_scale
        self.send_free, self.recv_free = [0.0] * n, [0.0] * n
        self.ready = [0.0] * n
        self.msgs = []

    def send(self, src, dst, nbytes, ready, step, chunk, who, phase, reduce):
        b = nbytes * self.scale
        busy = b / self.bw
        start = ready
        if src != SWITCH:
            start = max(start, self.send_free[src])
        if dst != SWITCH:
            start = max(start, self.recv_free[dst])
        if src != SWITCH:
            self.send_free[src] = start + busy
        if dst != SWITCH:
            self.recv_free[dst] = start + busy
        end = start + self.alpha + busy  # lands α after it starts, the bytes b/β behind
        self.msgs.append(Ref(step, src, dst, chunk, frozenset(who), b, start, end, phase, reduce))
        return end

    def end(self, first):
        for m in self.msgs[first:]:
            for d in (m.src, m.dst):
                if d != SWITCH:
                    self.ready[d] = max(self.ready[d], m.t_end)


def _chunks(L, n):
    q, r = divmod(L, n)
    sizes = [q + (c < r) for c in range(n)]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    return [slice(int(starts[c]), int(starts[c + 1])) for c in range(n)]


# --- the algorithms, one message at a time, data and contributors as plain lists and sets --
def ref_ring_rs(c, bufs, sl, ready, step0=0, chunk_ready=None):
    n = c.n
    who = [[frozenset({d})] * n for d in range(n)]
    # arrive[d][ch]: when d's chunk ch exists — its own partial, then what it received added
    arrive = [list(map(float, row)) for row in chunk_ready] if chunk_ready else [[ready[d]] * n for d in range(n)]
    for k in range(n - 1):
        for d in range(n):
            ch, dst = (d - k) % n, (d + 1) % n
            t = c.send(d, dst, bufs[d, sl[ch]].nbytes, arrive[d][ch], step0 + k, ch, who[d][ch], "reduce-scatter",
                       True)
            bufs[dst, sl[ch]] += bufs[d, sl[ch]]
            who[dst][ch] = who[dst][ch] | who[d][ch]
            arrive[dst][ch] = max(arrive[dst][ch], t)
    return who, arrive


def ref_ring_ag(c, bufs, sl, arrive, first, who, step0=0):
    n = c.n
    for k in range(n - 1):
        for d in range(n):
            ch, dst = first[(d - k) % n], (d + 1) % n
            t = c.send(d, dst, bufs[d, sl[ch]].nbytes, arrive[d][ch], step0 + k, ch, who[d][ch], "all-gather", False)
            bufs[dst, sl[ch]] = bufs[d, sl[ch]]
            who[dst][ch] = who[d][ch]
            arrive[dst][ch] = t


def ref_direct_rs(c, bufs, sl, ready, step0=0):
    n = c.n
    done = list(ready)
    for j in range(1, n):
        for d in range(n):
            ch = (d + j) % n
            t = c.send(d, ch, bufs[d, sl[ch]].nbytes, ready[d], step0 + j - 1, ch, {d}, "one-shot reduce-scatter",
                       True)
            bufs[ch, sl[ch]] += bufs[d, sl[ch]]
            done[ch] = max(done[ch], t)
    return done


def ref_direct_ag(c, bufs, sl, ready, first, who, step0=0):
    n = c.n
    for j in range(1, n):
        for d in range(n):
            dst, ch = (d + j) % n, first[d]
            c.send(d, dst, bufs[d, sl[ch]].nbytes, ready[d], step0 + j - 1, ch, who[d], "one-shot all-gather", False)
            bufs[dst, sl[ch]] = bufs[d, sl[ch]]


def ref_allreduce(algo, c, x):
    n, bufs = c.n, x.copy()
    sl = _chunks(x.shape[1], n)
    ready = list(c.ready)
    if n == 1:
        return bufs
    if algo == "ring":
        who, arrive = ref_ring_rs(c, bufs, sl, ready)
        first = [(d + 1) % n for d in range(n)]
        ref_ring_ag(c, bufs, sl, arrive, first, who, step0=n - 1)
    elif algo == "two-shot":
        done = ref_direct_rs(c, bufs, sl, ready)
        ref_direct_ag(c, bufs, sl, done, list(range(n)), [set(range(n))] * n, step0=n - 1)
    elif algo == "direct":
        src = x.copy()
        for j in range(1, n):
            for d in range(n):
                dst = (d + j) % n
                c.send(d, dst, src[d].nbytes, ready[d], j - 1, ALL, {d}, f"round {j}", True)
                bufs[dst] += src[d]
    elif algo == "innet":
        total = bufs.sum(axis=0)
        for ch in range(n):
            nb = bufs[0, sl[ch]].nbytes
            up = max(c.send(d, SWITCH, nb, ready[d], ch, ch, {d}, "up", True) for d in range(n))
            for d in range(n):
                c.send(SWITCH, d, nb, up, ch + 1, ch, set(range(n)), "down", False)
                bufs[d, sl[ch]] = total[sl[ch]]
    elif algo == "rd":
        p = 1 << (n.bit_length() - 1)
        who = [frozenset({d}) for d in range(n)]
        nb, step = bufs[0].nbytes, 0
        if p < n:
            for d in range(p, n):
                t = c.send(d, d - p, nb, ready[d], step, ALL, who[d], "fold", True)
                bufs[d - p] += bufs[d]
                who[d - p] = who[d - p] | who[d]
                ready[d - p] = max(ready[d - p], t)
            step += 1
        k = 1
        while k < p:
            snap, whos, arrivals = bufs[:p].copy(), list(who), []
            for d in range(p):
                both = max(ready[d], ready[d ^ k])
                arrivals.append(c.send(d, d ^ k, nb, both, step, ALL, whos[d], f"round {step}", True))
            for d in range(p):
                bufs[d ^ k] += snap[d]
                who[d ^ k] = who[d ^ k] | whos[d]
                ready[d ^ k] = max(ready[d ^ k], arrivals[d])
            k, step = k << 1, step + 1
        if p < n:
            for d in range(p, n):
                c.send(d - p, d, nb, ready[d - p], step, ALL, who[d - p], "unfold", False)
                bufs[d] = bufs[d - p]
    else:
        raise AssertionError(f"no plain reference for all-reduce {algo!r}: write it in ref_allreduce, one message "
                             f"at a time")
    return bufs


def ref_gather_scatter(op, algo, c, x):
    n, bufs = c.n, x.copy()
    sl = _chunks(x.shape[1], n)
    ready = list(c.ready)
    if op == "reduce-scatter":
        (ref_ring_rs if algo == "ring" else ref_direct_rs)(c, bufs, sl, ready)
        return bufs
    first = list(range(n))
    if algo == "ring":
        arrive = [[ready[d] if ch == d else np.inf for ch in range(n)] for d in range(n)]
        who = [[frozenset({d}) if ch == d else None for ch in range(n)] for d in range(n)]
        ref_ring_ag(c, bufs, sl, arrive, first, who)
    else:
        ref_direct_ag(c, bufs, sl, ready, first, [{d} for d in range(n)])
    return bufs


def ref_all_to_all(algo, c, x):
    """Block j of device d goes to device j (chunk d·n + j of n² slots); returns the results, (n, L).
    direct: every block issued at once, to d + j in round j; pairwise: round k, d -> d + k once d and
    its partner have received round k − 1's block (a blocking exchange)."""
    n, L = x.shape
    q = L // n
    ready = list(c.ready)
    for k in range(1, n):
        got = list(ready)
        for d in range(n):
            dst = (d + k) % n
            when = ready[d] if algo == "direct" else max(ready[d], ready[dst])
            t = c.send(d, dst, x[d, :q].nbytes, when, k - 1, d * n + dst, frozenset({d}),
                       "one-shot all-to-all" if algo == "direct" else f"round {k}", False)
            got[dst] = max(got[dst], t)
        if algo == "pairwise":
            ready = got
    return np.array([np.concatenate([x[j, r * q:(r + 1) * q] for j in range(n)]) for r in range(n)])


def _run_engine(op, algo, comm, x):
    fn = ALGORITHMS[op][algo].fn
    n = comm.n
    if op in ("all-reduce", "all-to-all"):
        return np.array(fn(comm, list(x), label="x"))
    if op == "reduce-scatter":
        pieces, owner = fn(comm, list(x), label="x")
        return pieces, owner
    q = x.shape[1] // n
    return np.array(fn(comm, [x[d, d * q:(d + 1) * q] for d in range(n)], {d: d for d in range(n)}, label="x"))


CASES = [(op, algo) for op, reg in ALGORITHMS.items() for algo in reg if "switch" in reg[algo].topologies]


def _holdings_from(msgs, initial, n_chunks):
    """Per-step holdings of a plain message list, applied with set unions (no engine code)."""
    state = {d: dict(h) for d, h in enumerate(initial)}
    out, steps = {-1: {d: dict(h) for d, h in state.items()}}, sorted({m.step for m in msgs})
    for k in steps:
        for m in msgs:
            if m.step == k:
                held = state.setdefault(m.dst, {})
                for ch in (range(n_chunks) if m.chunk == ALL else (m.chunk,)):
                    held[ch] = (held.get(ch, frozenset()) | m.contributors) if m.reduce else m.contributors
        out[k] = {d: dict(h) for d, h in state.items()}
    return out


@pytest.mark.parametrize("op,algo", CASES)
def test_trace_equals_the_plain_reference(op, algo):
    for n in range(2, 17):
        scale = 1000.0
        comm, ref = Comm(switch(n, LINK), byte_scale=scale), RefComm(n, LINK, scale)
        rng = np.random.default_rng(n)
        # two calls on one Comm; an all-reduce of uneven length (chunks of q and q+1) the second time
        lengths = [3 * n, 3 * n] if op != "all-reduce" else [3 * n, 3 * n + n // 2 + 1]
        for call, L in enumerate(lengths):
            x = np.round(rng.standard_normal((n, L)), 3)
            first = len(ref.msgs)
            if op in ("all-reduce", "all-to-all"):
                want = (ref_allreduce if op == "all-reduce" else ref_all_to_all)(algo, ref, x)
                got = _run_engine(op, algo, comm, x)
                np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
            else:
                want, got = ref_gather_scatter(op, algo, ref, x), _run_engine(op, algo, comm, x)
                if op == "all-gather":
                    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
                else:
                    pieces, owner = got
                    sl = _chunks(L, n)
                    for r in range(n):
                        np.testing.assert_allclose(pieces[r], want[r, sl[owner[r]]], rtol=1e-13, atol=1e-13)
            ref.end(first)
            c = comm.trace.collectives[call]
            msgs, plain = comm.trace.messages_of(call), ref.msgs[first:]
            assert len(msgs) == len(plain), (algo, n)
            for m, r in zip(msgs, plain):
                where = (op, algo, n, call, r)
                assert (m.coll, m.op, m.algo, m.label) == (call, op, algo, "x"), where
                assert (m.step, m.src, m.dst, m.chunk, m.phase, m.reduce) == \
                    (r.step, r.src, r.dst, r.chunk, r.phase, r.reduce), where
                assert m.contributors == r.contributors, where
                assert m.nbytes == pytest.approx(r.nbytes, rel=1e-15), where
                assert m.t_start == pytest.approx(r.t_start, rel=1e-12, abs=1e-18), where
                assert m.t_end == pytest.approx(r.t_end, rel=1e-12), where
            assert comm.ready == pytest.approx(ref.ready, rel=1e-12)
            want_hold = _holdings_from(plain, c.initial, c.n_chunks)
            for k, state in want_hold.items():
                assert comm.trace.holdings(call, step=k) == state, (op, algo, n, call, k)


def test_contributor_counts_of_every_algorithm_equal_the_sets():
    for op, algo in CASES:
        for n in (5, 8, 12):
            comm = Comm(switch(n, NVLINK4))
            _run_engine(op, algo, comm, np.ones((n, 2 * n)))
            tr = comm.trace
            assert tr.contributor_counts().tolist() == [len(m.contributors) for m in tr.messages], (op, algo, n)


@pytest.mark.parametrize("op", ["all-reduce", "reduce-scatter"])
def test_ring_with_chunk_ready_equals_the_plain_reference(op):
    # the collective matmul: device d's partial of chunk c exists at chunk_ready[d][c], some
    # chunks before the device's last collective ended, some long after; the ring starts each
    # send once its own partial, what it forwards and both ports are there
    for n in range(2, 13):
        comm, ref = Comm(switch(n, LINK), byte_scale=1000.0), RefComm(n, LINK, 1000.0)
        rng = np.random.default_rng(100 + n)
        x0 = np.round(rng.standard_normal((n, 2 * n)), 3)
        ref_allreduce("ring", ref, x0)  # a first call leaves busy ports and uneven ready times
        ref.end(0)
        allreduce_ring(comm, list(x0))
        x = np.round(rng.standard_normal((n, 3 * n)), 3)
        chunk_ready = (max(ref.ready) + rng.uniform(-2e-6, 6e-6, (n, n))).tolist()
        first, sl = len(ref.msgs), _chunks(3 * n, n)
        want = x.copy()
        if op == "all-reduce":
            who, arrive = ref_ring_rs(ref, want, sl, ref.ready, chunk_ready=chunk_ready)
            ref_ring_ag(ref, want, sl, arrive, [(d + 1) % n for d in range(n)], who, step0=n - 1)
            got = np.array(allreduce_ring(comm, list(x), chunk_ready=chunk_ready))
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
        else:
            ref_ring_rs(ref, want, sl, ref.ready, chunk_ready=chunk_ready)
            pieces, owner = reduce_scatter_ring(comm, list(x), chunk_ready=chunk_ready)
            for r in range(n):
                np.testing.assert_allclose(pieces[r], want[r, sl[owner[r]]], rtol=1e-13, atol=1e-13)
        ref.end(first)
        msgs, plain = comm.trace.messages_of(1), ref.msgs[first:]
        assert len(msgs) == len(plain)
        for m, r in zip(msgs, plain):
            assert (m.step, m.src, m.dst, m.chunk, m.contributors) == (r.step, r.src, r.dst, r.chunk, r.contributors)
            assert m.t_start == pytest.approx(r.t_start, rel=1e-12) and m.t_end == pytest.approx(r.t_end, rel=1e-12)
        assert comm.ready == pytest.approx(ref.ready, rel=1e-12)
        c = comm.trace.collectives[1]
        assert c.t_start == min(map(min, chunk_ready))  # it starts with the first chunk
        assert c.t_end == pytest.approx(max(r.t_end for r in plain), rel=1e-12)


def test_chunk_ready_of_the_wrong_shape_is_refused_and_changes_nothing():
    comm = Comm(switch(4, LINK))
    for bad in ([[0.0] * 4] * 3, [[0.0] * 3] * 4, [[0.0, 0.0, 0.0, float("nan")]] * 4):
        with pytest.raises(ValueError, match="chunk_ready"):
            allreduce_ring(comm, [np.ones(8)] * 4, chunk_ready=bad)
    assert len(comm.trace.messages) == 0 and comm.trace.collectives == [] and comm.ready == [0.0] * 4
    allreduce_ring(comm, [np.ones(8)] * 4)  # the Comm still works
    assert len(comm.trace.collectives) == 1
