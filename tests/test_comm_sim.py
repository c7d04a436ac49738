"""comm_sim: values against numpy, simulated time against the closed forms, schedule structure.

The closed forms are written in tests/closed_forms.py from the literature, not read from simcore.
Under the port model a message holds its ports for b/β and lands α later (t_end = start + α + b/β).
"""

import math

import numpy as np
import pytest

from simcore.algorithms import ALGORITHMS, ALLREDUCE_ALGOS, busbw, message_count, t_formula
from simcore.collectives import allgather_ring, reduce_scatter_ring
from simcore.comm_sim import Comm
from simcore.links import NVLINK4, PCIE4, LinkSpec
from simcore.topology import switch
from simcore.trace import ALL, SWITCH

from closed_forms import REFERENCE_COUNTS, reference_time

NS = range(2, 17)


CASES = [(op, algo) for op, reg in ALGORITHMS.items() for algo in reg if "switch" in reg[algo].topologies]


def _arrays(n, per_dev=3, seed=0):
    rng = np.random.default_rng(seed + n)
    return [rng.standard_normal(per_dev * n) for _ in range(n)]


def _run(op, algo, comm, arrays):
    """Run one collective of the registry; return S (nccl-tests' size, after byte_scale)."""
    n = comm.n
    fn = ALGORITHMS[op][algo].fn
    if op == "all-gather":
        k = len(arrays[0]) // n
        fn(comm, [a[:k] for a in arrays], {d: d for d in range(n)})
        return k * n * arrays[0].itemsize * comm.byte_scale
    fn(comm, arrays)
    return arrays[0].nbytes * comm.byte_scale


@pytest.mark.parametrize("op,algo", CASES)
def test_the_registry_names_the_phases_the_trace_carries(op, algo):
    comm = Comm(switch(6))
    _run(op, algo, comm, _arrays(6))
    seen = {m.phase.split(" ")[0] if m.phase.startswith("round") else m.phase for m in comm.trace.messages}
    assert seen == set(ALGORITHMS[op][algo].phases)


def test_every_registered_algorithm_has_a_reference():
    missing = set(CASES) - set(REFERENCE_COUNTS)
    assert not missing, f"write the literature's message count of {sorted(missing)} in tests/closed_forms.py"
    assert set(REFERENCE_COUNTS) <= set(CASES)
    assert {"ring", "rd", "innet", "direct", "two-shot"} <= set(ALLREDUCE_ALGOS)


@pytest.mark.parametrize("op,algo", CASES)
def test_time_equals_closed_form_n_1_to_64(op, algo):
    for n in range(1, 65):
        comm = Comm(switch(n, NVLINK4), byte_scale=1e4)
        S = _run(op, algo, comm, _arrays(n))
        want = reference_time(op, algo, n, S, NVLINK4.alpha, NVLINK4.bw)
        assert comm.time == pytest.approx(want, rel=1e-9, abs=0.0), (op, algo, n)
        assert comm.trace.collectives[0].t_end == pytest.approx(want, rel=1e-9, abs=0.0)
        assert t_formula(algo, n, S, NVLINK4.alpha, NVLINK4.bw, op=op) == pytest.approx(want, rel=1e-12, abs=0.0)
        assert len(comm.trace.messages) == message_count(algo, n, op=op) == (REFERENCE_COUNTS[op, algo](n)
                                                                             if n > 1 else 0)


@pytest.mark.parametrize("algo", list(ALLREDUCE_ALGOS))
@pytest.mark.parametrize("byte_scale", [1.0, 0.25, 1e6])
@pytest.mark.parametrize("link", [PCIE4, LinkSpec("no latency", 0.0, 1e9), LinkSpec("slow start", 1e-3, 1e12)],
                         ids=lambda l: l.name)
def test_allreduce_time_equals_closed_form(algo, byte_scale, link):
    for n in NS:
        arrays = _arrays(n)
        comm = Comm(switch(n, link), byte_scale=byte_scale)
        out = ALLREDUCE_ALGOS[algo][1](comm, arrays)
        S = arrays[0].nbytes * byte_scale
        assert comm.time == pytest.approx(reference_time("all-reduce", algo, n, S, link.alpha, link.bw),
                                          rel=1e-9, abs=0.0), (algo, n)
        ref = np.sum(arrays, axis=0)
        for o in out:
            np.testing.assert_allclose(o, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter"])
@pytest.mark.parametrize("byte_scale", [1.0, 3.5])
def test_gather_scatter_time_equals_closed_form(op, byte_scale):
    for n in NS:
        comm = Comm(switch(n, PCIE4), byte_scale=byte_scale)
        arrays = _arrays(n, per_dev=2)
        if op == "all-gather":
            chunks = [a[:2] for a in arrays]
            allgather_ring(comm, chunks, {d: d for d in range(n)})
            S = 2 * n * 8 * byte_scale
        else:
            reduce_scatter_ring(comm, arrays)
            S = arrays[0].nbytes * byte_scale
        want = reference_time(op, "ring", n, S, PCIE4.alpha, PCIE4.bw)
        assert comm.time == pytest.approx(want, rel=1e-9)


def test_t_formula_vectorized_and_trivial_cases():
    ns = np.array([1, 2, 3, 8, 1024])
    t = t_formula("ring", ns, 1e6, 1e-6, 1e11)
    assert t.shape == (5,)
    assert t[0] == 0.0
    for i, n in enumerate(ns):
        assert t[i] == pytest.approx(t_formula("ring", int(n), 1e6, 1e-6, 1e11))
    # latency term of ring grows linearly, rd logarithmically
    assert t_formula("ring", 1024, 1, 1e-6, 1e30) == pytest.approx(2 * 1023e-6)
    assert t_formula("rd", 1024, 1, 1e-6, 1e30) == pytest.approx(10e-6)
    with pytest.raises(ValueError, match="unknown all-reduce algorithm"):
        t_formula("no-such", 4, 1, 1, 1)
    with pytest.raises(ValueError, match="n must be"):
        t_formula("ring", 0, 1, 1, 1)


def test_allgather_values_and_owner_permutation():
    n = 5
    rng = np.random.default_rng(1)
    chunks = [rng.standard_normal(3) for _ in range(n)]
    owner = {d: (d * 2) % n for d in range(n)}  # device d holds chunk 2d mod 5
    out = allgather_ring(Comm(switch(n)), chunks, owner)
    want = np.zeros(3 * n)
    for d in range(n):
        want[owner[d] * 3:(owner[d] + 1) * 3] = chunks[d]
    for o in out:
        np.testing.assert_array_equal(o, want)
    with pytest.raises(ValueError, match="every chunk index"):
        allgather_ring(Comm(switch(n)), chunks, {d: 0 for d in range(n)})


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_one_shot_gather_and_scatter_values(n):
    rng = np.random.default_rng(n)
    chunks = [rng.standard_normal(2) for _ in range(n)]
    owner = {d: (d + 1) % n for d in range(n)}
    out = ALGORITHMS["all-gather"]["direct"].fn(Comm(switch(n)), chunks, owner)
    want = np.zeros(2 * n)
    for d in range(n):
        want[owner[d] * 2:owner[d] * 2 + 2] = chunks[d]
    for o in out:
        np.testing.assert_array_equal(o, want)
    arrays = _arrays(n)
    pieces, own = ALGORITHMS["reduce-scatter"]["direct"].fn(Comm(switch(n)), arrays)
    total = np.sum(arrays, axis=0)
    for r in range(n):
        assert own[r] == r
        np.testing.assert_allclose(pieces[r], total[r * 3:(r + 1) * 3], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 8, 16])
def test_reduce_scatter_owner_is_next_device(n):
    arrays = _arrays(n)
    pieces, owner = reduce_scatter_ring(Comm(switch(n)), arrays)
    total = np.sum(arrays, axis=0)
    for r in range(n):
        assert owner[r] == (r + 1) % n
        c = owner[r]
        np.testing.assert_allclose(pieces[r], total[c * 3:(c + 1) * 3], rtol=1e-12)


def test_reduce_scatter_rejects_indivisible_length():
    with pytest.raises(ValueError, match="length 7 is not divisible by 3"):
        reduce_scatter_ring(Comm(switch(3)), [np.ones(7)] * 3)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 16])
def test_ring_allreduce_structure(n):
    comm = Comm(switch(n))
    ALLREDUCE_ALGOS["ring"][1](comm, _arrays(n))
    msgs = comm.trace.messages
    assert len(msgs) == 2 * n * (n - 1)
    assert all(m.dst == (m.src + 1) % n for m in msgs)
    assert comm.trace.collectives[0].n_steps == 2 * (n - 1)
    for k in range(2 * (n - 1)):  # every device sends exactly once per step
        assert sorted(m.src for m in msgs if m.step == k) == list(range(n))
    assert sum(m.reduce for m in msgs) == n * (n - 1)  # the reduce-scatter half adds


@pytest.mark.parametrize("n", [2, 4, 8, 16])
def test_rd_structure_power_of_two(n):
    comm = Comm(switch(n))
    ALLREDUCE_ALGOS["rd"][1](comm, _arrays(n))
    msgs = comm.trace.messages
    rounds = int(math.log2(n))
    assert comm.trace.collectives[0].n_steps == rounds
    for k in range(rounds):
        step = [m for m in msgs if m.step == k]
        assert len(step) == n
        assert all(m.dst == m.src ^ (1 << k) for m in step)
        assert all(m.chunk == ALL for m in step)


@pytest.mark.parametrize("n", [3, 5, 6, 7, 12])
def test_rd_fold_for_non_power_of_two(n):
    p = 1 << (n.bit_length() - 1)
    comm = Comm(switch(n))
    out = ALLREDUCE_ALGOS["rd"][1](comm, _arrays(n))
    np.testing.assert_allclose(out[-1], np.sum(_arrays(n), axis=0), rtol=1e-12)
    msgs = comm.trace.messages
    folds = [m for m in msgs if m.phase == "fold"]
    unfolds = [m for m in msgs if m.phase == "unfold"]
    assert [(m.src, m.dst) for m in folds] == [(d, d - p) for d in range(p, n)]
    assert [(m.src, m.dst) for m in unfolds] == [(d - p, d) for d in range(p, n)]
    assert len(msgs) == message_count("rd", n)


@pytest.mark.parametrize("n", [2, 4, 7])
def test_one_shot_streams_every_copy_through_the_port(n):
    """α is latency, b/β occupancy: the n−1 copies leave back to back and the last lands α later."""
    comm = Comm(switch(n, NVLINK4))
    arrays = _arrays(n)
    ALLREDUCE_ALGOS["direct"][1](comm, arrays)
    msgs = comm.trace.messages
    S = arrays[0].nbytes
    occupy = S / NVLINK4.bw
    for d in range(n):
        sends = sorted((m for m in msgs if m.src == d), key=lambda m: m.t_start)
        recvs = sorted((m for m in msgs if m.dst == d), key=lambda m: m.t_start)
        assert len(sends) == len(recvs) == n - 1
        for j, m in enumerate(sends):
            assert m.t_start == pytest.approx(j * occupy, abs=1e-18)  # the port frees after S/β...
            assert m.t_end == pytest.approx(m.t_start + NVLINK4.alpha + occupy)  # ...the bytes land α later
        assert sorted(m.src for m in recvs) == sorted(set(range(n)) - {d})
    assert comm.time == pytest.approx(NVLINK4.alpha + (n - 1) * occupy)


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_two_shot_structure(n):
    """Reduce-scatter straight to each chunk's owner, then the owner sends its sum to everyone."""
    comm = Comm(switch(n))
    arrays = _arrays(n)
    out = ALLREDUCE_ALGOS["two-shot"][1](comm, arrays)
    for o in out:
        np.testing.assert_allclose(o, np.sum(arrays, axis=0), rtol=1e-12, atol=1e-12)
    msgs = comm.trace.messages
    rs = [m for m in msgs if m.phase == "one-shot reduce-scatter"]
    ag = [m for m in msgs if m.phase == "one-shot all-gather"]
    assert len(rs) == len(ag) == n * (n - 1)
    assert all(m.dst == m.chunk and m.reduce and m.contributors == {m.src} for m in rs)
    assert all(m.src == m.chunk and not m.reduce and m.contributors == frozenset(range(n)) for m in ag)
    assert all(m.nbytes == arrays[0].nbytes / n for m in msgs)
    # the all-gather of chunk c starts once its owner has heard from everyone
    for c in range(n):
        assert min(m.t_start for m in ag if m.chunk == c) == pytest.approx(max(m.t_end for m in rs if m.chunk == c))
    assert comm.trace.collectives[0].n_steps == 2 * (n - 1)


def test_one_shot_wins_small_ring_wins_large():
    """The lesson of the one-shot algorithms: latency paid once beats the ring for decode-sized messages only."""
    n, a, beta = 8, NVLINK4.alpha, NVLINK4.bw
    for S, small in ((64 * 2**10, True), (2**30, False)):
        one = reference_time("all-reduce", "direct", n, S, a, beta)
        ring = reference_time("all-reduce", "ring", n, S, a, beta)
        assert (one < ring) == small
        assert t_formula("direct", n, S, a, beta) == pytest.approx(one)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_innet_goes_through_switch(n):
    comm = Comm(switch(n))
    ALLREDUCE_ALGOS["innet"][1](comm, _arrays(n))
    msgs = comm.trace.messages
    up = [m for m in msgs if m.dst == SWITCH]
    down = [m for m in msgs if m.src == SWITCH]
    assert len(up) == len(down) == n * n
    assert all(m.contributors == frozenset(range(n)) for m in down)
    for c in range(n):  # a chunk comes down only after every device sent it up
        last_up = max(m.t_end for m in up if m.chunk == c)
        assert min(m.t_start for m in down if m.chunk == c) >= last_up


@pytest.mark.parametrize("op,algo", CASES)
def test_ports_carry_the_bytes_of_one_message_at_a_time(op, algo):
    """A port is busy from t_start to t_end − α (b/β); those spans never overlap on one port."""
    for n in (3, 6, 8):
        comm = Comm(switch(n, NVLINK4))
        _run(op, algo, comm, _arrays(n))
        for side in ("src", "dst"):
            by_port = {}
            for m in comm.trace.messages:
                by_port.setdefault(getattr(m, side), []).append((m.t_start, m.t_end - NVLINK4.alpha))
            for port, spans in by_port.items():
                if port == SWITCH:
                    continue
                spans.sort()
                for (_s0, e0), (s1, _e1) in zip(spans, spans[1:]):
                    assert s1 >= e0 - 1e-18, (op, algo, side, port)


def test_back_to_back_collectives_advance_the_clock():
    comm = Comm(switch(4))
    for _ in range(3):
        ALLREDUCE_ALGOS["ring"][1](comm, _arrays(4))
    one = reference_time("all-reduce", "ring", 4, _arrays(4)[0].nbytes, NVLINK4.alpha, NVLINK4.bw)
    assert comm.time == pytest.approx(3 * one, rel=1e-9)
    cs = comm.trace.collectives
    assert [c.id for c in cs] == [0, 1, 2]
    assert cs[1].t_start == pytest.approx(cs[0].t_end)


def test_inputs_are_not_modified():
    arrays = _arrays(4)
    before = [a.copy() for a in arrays]
    for algo in ALLREDUCE_ALGOS:
        ALLREDUCE_ALGOS[algo][1](Comm(switch(4)), arrays)
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b)


def test_busbw_conventions():
    n, S, t = 8, 1e9, 0.01
    assert busbw("all-reduce", n, S, t) == pytest.approx(S / t * 2 * 7 / 8)
    assert busbw("all-gather", n, S, t) == pytest.approx(S / t * 7 / 8)
    # a ring all-reduce with alpha = 0 has busbw equal to the link bandwidth
    comm = Comm(switch(n, LinkSpec("ideal", 0.0, 100e9)))
    a = _arrays(n)
    ALLREDUCE_ALGOS["ring"][1](comm, a)
    assert busbw("all-reduce", n, a[0].nbytes, comm.time) == pytest.approx(100e9)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, 100_000])
def test_switch_rejects_bad_n(bad):
    with pytest.raises(ValueError, match="devices"):
        switch(bad)


@pytest.mark.parametrize("alpha,bw", [(-1, 1e9), (1e-6, 0), (float("nan"), 1e9), (1e-6, float("inf"))])
def test_linkspec_rejects_nonsense(alpha, bw):
    with pytest.raises(ValueError):
        LinkSpec("x", alpha, bw)


def test_comm_rejects_bad_byte_scale():
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="byte_scale"):
            Comm(switch(2), byte_scale=bad)


def test_comm_sim_is_the_public_face_of_the_engine():
    """The lecture and README import these names from simcore.comm_sim; each lives in its own
    module (links, topology, collectives, algorithms) and comm_sim re-exports the very object."""
    import simcore.algorithms
    import simcore.collectives
    import simcore.comm_sim
    import simcore.links
    import simcore.topology
    homes = {simcore.links: ["LinkSpec", "LINKS", "NVLINK3", "NVLINK4", "NVLINK5", "PCIE4", "PCIE5", "TPU_V4_ICI",
                             "TPU_V5E_ICI", "IB_NDR400", "NCCL_RING_LL128_BASE"],
             simcore.topology: ["Switch", "Nodes", "Torus", "switch", "nodes", "torus", "MAX_DEVICES"],
             simcore.collectives: ["allgather_ring", "allgather_direct", "reduce_scatter_ring", "reduce_scatter_direct",
                                   "allreduce_ring", "allreduce_rd", "allreduce_innet", "allreduce_direct",
                                   "allreduce_two_shot", "ring_rs_chunk", "ring_ag_chunk"],
             simcore.algorithms: ["Algorithm", "ALLGATHER_ALGOS", "REDUCE_SCATTER_ALGOS", "ALGORITHMS",
                                  "OPS", "algorithm", "t_formula", "t_formula_on", "message_count", "algbw", "busbw"]}
    for module, names in homes.items():
        for name in names:
            assert getattr(simcore.comm_sim, name) is getattr(module, name), name
    # the lecture's own dict (its call ALLREDUCE_ALGOS[algo][1](comm, arrays)) is comm_sim's: every registered
    # all-reduce, each the registry's function running its plan on the comm's topology
    assert list(simcore.comm_sim.ALLREDUCE_ALGOS) == list(simcore.algorithms.ALGORITHMS["all-reduce"])
    assert simcore.comm_sim.ALLREDUCE_ALGOS["ring"][1].__name__ == simcore.collectives.allreduce_ring.__name__
