"""All-to-all, the fourth collective (engine only, no Qt): values against numpy, simulated time
against the literature's closed forms (tests/closed_forms.py), and the schedule's structure —
every block (src → dst) travels exactly once, straight to its own destination."""

import json

import numpy as np
import pytest

from simcore import sharding as shd
from simcore.__main__ import main as simcore_main
from simcore.algorithms import ALGORITHMS, OPS, busbw, message_count, t_formula
from simcore.all_to_all import a2a_block, a2a_chunk, all_to_all
from simcore.comm_sim import Comm
from simcore.links import IB_NDR400, NVLINK4, PCIE4, TPU_V4_ICI, LinkSpec
from simcore.registry import register
from simcore.scenarios import run_collective
from simcore.topology import nodes, switch, torus

from closed_forms import REFERENCE_COUNTS, reference_time

ALGOS = ("direct", "pairwise")


def _reference(shards, split_axis, concat_axis):
    """The definition: device d gets block d of every device's shard, in device order."""
    n = len(shards)
    return [np.concatenate([np.split(s, n, axis=split_axis)[d] for s in shards], axis=concat_axis)
            for d in range(n)]


def _buffers(n, per_block=3, seed=0):
    rng = np.random.default_rng(seed + n)
    return [rng.standard_normal(per_block * n) for _ in range(n)]


def _run(comm, algo, per_block=3):
    """One all-to-all of the registry on `comm`; returns (S bytes after byte_scale, inputs, outputs)."""
    arrays = _buffers(comm.n, per_block)
    out = ALGORITHMS["all-to-all"][algo].fn(comm, arrays)
    return arrays[0].nbytes * comm.byte_scale, arrays, out


# ---------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------
def test_registered_once_as_the_fourth_op():
    assert "all-to-all" in OPS and OPS["all-to-all"].name == "all-to-all"  # registered, wherever in the order
    assert tuple(ALGORITHMS["all-to-all"]) == ALGOS and OPS["all-to-all"].algorithms is ALGORITHMS["all-to-all"]
    with pytest.raises(ValueError, match="registered twice"):
        register(OPS["all-to-all"])


@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("shape,split_axis,concat_axis", [
    ((6, 40), 1, 0), ((40, 6), 0, 1), ((40, 3), 0, 0), ((2, 40, 3), 1, 2), ((2, 3, 40), -1, 0), ((40,), 0, 0)])
def test_values_equal_numpy(algo, n, shape, split_axis, concat_axis):
    rng = np.random.default_rng(n)
    shape = tuple(n * 5 if s == 40 else s for s in shape)  # the split axis divides by n
    shards = [rng.standard_normal(shape) for _ in range(n)]
    out = all_to_all(shd.make_comm(n), shards, split_axis, concat_axis, algo=algo)
    for got, want in zip(out, _reference(shards, split_axis, concat_axis), strict=True):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)  # moved, never added: exact


@pytest.mark.parametrize("n", [2, 4, 8])
def test_the_scaling_books_resharding(n):
    """AllToAll_{X,J} A[I_X, J] -> A[I, J_X] ("How to Scale Your Model", sharding chapter)."""
    A = np.arange(4 * n * 3 * n, dtype=float).reshape(4 * n, 3 * n)
    out = all_to_all(shd.make_comm(n), shd.shard(A, 0, n), split_axis=1, concat_axis=0)
    for got, want in zip(out, shd.shard(A, 1, n), strict=True):
        np.testing.assert_array_equal(got, want)


def test_inputs_are_not_modified():
    shards = [np.full((4, 4), float(d)) for d in range(4)]
    all_to_all(shd.make_comm(4), shards, 0, 1)
    assert all((s == d).all() for d, s in enumerate(shards))


def test_a_split_that_does_not_divide_is_one_clear_sentence():
    shards = shd.shard(np.ones((3, 4)), 0, 3)
    with pytest.raises(ValueError, match=r"^all-to-all: axis 1 has length 4, which is not divisible by 3 devices$"):
        all_to_all(shd.make_comm(3), shards, split_axis=1, concat_axis=0)
    with pytest.raises(ValueError, match="concat_axis 2 does not exist"):
        all_to_all(shd.make_comm(3), shards, split_axis=0, concat_axis=2)
    with pytest.raises(ValueError, match="unknown all-to-all algorithm 'ring'; choose one of direct, pairwise"):
        all_to_all(shd.make_comm(3), shards, 0, 0, algo="ring")
    with pytest.raises(ValueError, match="length 7 is not divisible by 2 devices"):
        ALGORITHMS["all-to-all"]["direct"].fn(Comm(switch(2)), [np.ones(7), np.ones(7)])


# ---------------------------------------------------------------------------------------
# Time against the closed forms
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("link", [NVLINK4, PCIE4, LinkSpec("no latency", 0.0, 1e9), LinkSpec("slow start", 1e-3, 1e12)],
                         ids=lambda lk: lk.name)
@pytest.mark.parametrize("byte_scale", [1.0, 1e5])
def test_time_equals_closed_form(algo, link, byte_scale):
    for n in list(range(1, 25)) + [31, 32, 48]:
        comm = Comm(switch(n, link), byte_scale=byte_scale)
        S, _a, _o = _run(comm, algo)
        want = reference_time("all-to-all", algo, n, S, link.alpha, link.bw)
        assert comm.time == pytest.approx(want, rel=1e-9, abs=0.0), (algo, n)
        assert t_formula(algo, n, S, link.alpha, link.bw, op="all-to-all") == pytest.approx(want, rel=1e-12, abs=0.0)


def test_direct_beats_pairwise_by_n_minus_2_alphas():
    n, link = 8, NVLINK4
    times = {}
    for algo in ALGOS:
        comm = Comm(switch(n, link), byte_scale=1e3)
        _run(comm, algo)
        times[algo] = comm.time
    assert times["pairwise"] - times["direct"] == pytest.approx((n - 2) * link.alpha, rel=1e-9)


def test_busbw_is_nccl_tests_alltoall_factor():
    """nccl-tests alltoall: busbw = algbw · (n−1)/n; direct with α = 0 then runs at the port's β."""
    n, S = 8, 8e6
    link = LinkSpec("no latency", 0.0, 1e11)
    t = t_formula("direct", n, S, link.alpha, link.bw, op="all-to-all")
    assert busbw("all-to-all", n, S, t) == pytest.approx(link.bw, rel=1e-12)
    assert busbw("all-to-all", n, S, 1.0) == pytest.approx(S * (n - 1) / n)


# ---------------------------------------------------------------------------------------
# Structure: every block travels once, to its own destination
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("n", [2, 3, 5, 8, 13])
def test_every_block_travels_exactly_once_to_its_destination(algo, n):
    comm = Comm(switch(n), byte_scale=10.0)
    S, _a, _o = _run(comm, algo)
    ms = list(comm.trace.messages)
    assert len(ms) == message_count(algo, n, op="all-to-all") == REFERENCE_COUNTS["all-to-all", algo](n)
    pairs = [(m.src, m.dst) for m in ms]
    assert sorted(pairs) == [(s, d) for s in range(n) for d in range(n) if s != d]  # each once, none to itself
    for m in ms:
        assert a2a_block(m.chunk, n) == (m.src, m.dst) and m.chunk == a2a_chunk(m.src, m.dst, n)
        assert m.contributors == {m.src} and not m.reduce
        assert m.nbytes == pytest.approx(S / n)
        assert m.op == "all-to-all" and m.algo == algo
    c = comm.trace.collectives[0]
    assert (c.n_chunks, c.n_steps, c.nbytes) == (n * n, n - 1, pytest.approx(S))


@pytest.mark.parametrize("n", [2, 4, 7])
def test_pairwise_round_k_sends_to_d_plus_k_after_round_k_minus_1(n):
    comm = Comm(switch(n))
    _run(comm, "pairwise")
    by_step = {}
    for m in comm.trace.messages:
        by_step.setdefault(m.step, []).append(m)
    assert sorted(by_step) == list(range(n - 1))
    for k, ms in by_step.items():
        assert sorted((m.src, m.dst) for m in ms) == [(d, (d + k + 1) % n) for d in range(n)]  # receives from d − k
        if k:
            assert min(m.t_start for m in ms) >= max(m.t_end for m in by_step[k - 1]) - 1e-18  # blocking rounds


@pytest.mark.parametrize("n", [3, 6])
def test_direct_issues_everything_at_once_and_streams_each_port(n):
    link = NVLINK4
    comm = Comm(switch(n, link), byte_scale=100.0)
    S, _a, _o = _run(comm, "direct")
    busy = S / n / link.bw
    for side in ("src", "dst"):
        for d in range(n):
            starts = sorted(m.t_start for m in comm.trace.messages if getattr(m, side) == d)
            assert starts == pytest.approx([j * busy for j in range(n - 1)], rel=1e-9, abs=1e-18)  # back to back


@pytest.mark.parametrize("algo", ALGOS)
def test_holdings_show_the_transpose(algo):
    n = 5
    comm = Comm(switch(n))
    _run(comm, algo)
    tr = comm.trace
    before, after = tr.holdings(0, step=-1), tr.holdings(0)
    for d in range(n):
        assert before[d] == {a2a_chunk(d, j, n): {d} for j in range(n)}  # its row: its own n blocks
        column = {a2a_chunk(j, d, n): {j} for j in range(n)}  # block d of every device
        assert {ch: w for ch, w in after[d].items() if a2a_block(ch, n)[1] == d} == column
    # halfway through pairwise, device d has heard from d − 1 … d − k only
    if algo == "pairwise":
        mid = tr.holdings(0, step=1)
        assert {a2a_block(ch, n)[0] for ch in mid[0] if a2a_block(ch, n)[1] == 0} == {0, n - 1, n - 2}


def test_the_trace_is_deterministic_and_round_trips():
    a = run_collective("all-to-all", 6, 6 * 64, "pairwise").trace
    b = run_collective("all-to-all", 6, 6 * 64, "pairwise").trace
    assert a == b
    back = type(a).from_json(a.to_json())
    assert back == a and back.holdings(0) == a.holdings(0)


# ---------------------------------------------------------------------------------------
# Topologies
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("m,q", [(2, 4), (3, 3), (4, 2)])
def test_on_nodes_values_and_the_slow_link_bounds(algo, m, q):
    topo = nodes(m, q)
    n = topo.n
    shards = [np.random.default_rng(d).standard_normal((n, 2)) for d in range(n)]
    comm = Comm(topo, byte_scale=1e4)
    out = all_to_all(comm, shards, 0, 1, algo=algo)
    for got, want in zip(out, _reference(shards, 0, 1), strict=True):
        np.testing.assert_array_equal(got, want)
    S = shards[0].nbytes * 1e4
    s, I = S / n, IB_NDR400
    # the busiest inter-node port carries the n − q blocks that leave the node; nothing beats that
    assert comm.time >= I.alpha + (n - q) * s / I.bw
    assert comm.time <= reference_time("all-to-all", algo, n, S, I.alpha, I.bw) * (1 + 1e-9)
    inter = [mm for mm in comm.trace.messages if topo.node(mm.src) != topo.node(mm.dst)]
    assert len(inter) == n * (n - q)


def _torus_distance(topo, s, d):
    return sum(min((a - b) % size, (b - a) % size) if w else abs(a - b)
               for a, b, size, w in zip(topo.coords(s), topo.coords(d), topo.shape, topo.wraps()))


def _chains(ms):
    """A block's hop messages, in time order, as its parts' paths [s, …, d] (one or two)."""
    chains = []
    for m in sorted(ms, key=lambda m: m.t_start):
        c = next((c for c in chains if c[-1].dst == m.src and c[-1].t_end <= m.t_start and
                  c[-1].nbytes == m.nbytes), None)  # stored, then forwarded
        if c is None:
            chains.append([m])
        else:
            c.append(m)
    return chains


@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("shape", [(2,), (3,), (4,), (5,), (4, 4), (2, 3), (3, 2, 2), (6, 4)])
def test_on_a_torus_blocks_go_hop_by_hop_in_dimension_order(algo, shape):
    """Each block goes the short way, axis 0 first; a block N/2 away on a ring of even N > 2 goes
    as two halves, one each way round (every axis where it is N/2 away)."""
    topo = torus(shape)
    n = topo.n
    shards = [np.arange(6.0 * n).reshape(2 * n, 3) + 100 * d for d in range(n)]
    comm = Comm(topo, byte_scale=1e3)
    out = all_to_all(comm, shards, 0, 1, algo=algo)
    for got, want in zip(out, _reference(shards, 0, 1), strict=True):
        np.testing.assert_array_equal(got, want)
    block = shards[0].nbytes * 1e3 / n
    hops = {}
    for m in comm.trace.messages:
        topo.route(m.src, m.dst)  # neighbours only
        assert m.contributors == {a2a_block(m.chunk, n)[0]} and not m.reduce
        hops.setdefault(a2a_block(m.chunk, n), []).append(m)
    assert set(hops) == {(s, d) for s in range(n) for d in range(n) if s != d}
    for (s, d), ms in hops.items():
        ties = [a for a, (x, y, size) in enumerate(zip(topo.coords(s), topo.coords(d), shape))
                if size > 2 and 2 * ((y - x) % size) == size]
        chains = _chains(ms)
        assert len(chains) == (2 if ties else 1)
        assert sum(c[0].nbytes for c in chains) == pytest.approx(block)  # the halves make the block
        steps = []
        for c in chains:
            path = [c[0].src] + [m.dst for m in c]
            assert path[0] == s and path[-1] == d and len(c) == _torus_distance(topo, s, d)  # the short way
            moved = [next(i for i, (x, y) in enumerate(zip(topo.coords(a), topo.coords(b))) if x != y)
                     for a, b in zip(path, path[1:])]
            assert moved == sorted(moved)  # axis 0 first, then axis 1, …
            steps.append({a: (topo.coords(path[moved.index(a) + 1])[a] - topo.coords(s)[a]) % shape[a]
                          for a in ties})
        if ties:  # one half +1, the other −1 round every tied axis
            assert all({st[a] for st in steps} == {1, shape[a] - 1} for a in ties)
    # after: the holdings' column d on every GPU d, as on a switch
    after = comm.trace.holdings(0)
    for d in range(n):
        assert all(after[d][a2a_chunk(j, d, n)] == {j} for j in range(n))


@pytest.mark.parametrize("n", range(2, 11))
def test_pairwise_on_a_ring_torus_is_its_hops_in_lockstep(n):
    """Round k: every block goes min(k, n−k) hops the same way, one block per link: min(k, n−k)·(α + S/(nβ));
    the round k = n/2 of an even ring (n > 2) sends each block as two halves, one each way: n/2·(α + S/(2nβ))."""
    comm = Comm(torus((n,)), byte_scale=1e3)
    S, _a, _o = _run(comm, "pairwise")
    L = TPU_V4_ICI
    want = sum(min(k, n - k) * (L.alpha + S / (n * L.bw) / (2 if 2 * k == n > 2 else 1)) for k in range(1, n))
    assert comm.time == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("n", [4, 6, 8, 10, 16])
def test_direct_on_an_even_ring_is_the_books_bidirectional_all_to_all(n):
    """"How to Scale Your Model" (TPU chapter): AllToAll on a bidirectional ring takes V/(4·W), V the
    whole array (n·S), W a link's bandwidth both ways (2β). Sent all one way, the blocks n/2 away made
    it (n² + 4n)/n²·… = 1.5× (n = 4) to 1.125× (n = 16); split half each way, each direction of each link
    carries n²/8 blocks, exactly the book's form."""
    L = LinkSpec("ici, no latency", 0.0, 45e9)
    comm = Comm(torus((n,), L), byte_scale=1e6)
    S, _a, _o = _run(comm, "direct")
    book = n * S / (4 * 2 * L.bw)
    assert comm.time == pytest.approx(book, rel=1e-9)
    load = {}
    for m in comm.trace.messages:
        load[m.src, m.dst] = load.get((m.src, m.dst), 0) + m.nbytes
    assert max(load.values()) == pytest.approx(n * n / 8 * S / n, rel=1e-12) == min(load.values())


def test_direct_on_a_ring_with_latency_stays_near_the_book():
    comm = Comm(torus((8,)), byte_scale=1e6)
    S, _a, _o = _run(comm, "direct")
    L = TPU_V4_ICI
    assert comm.time >= 8 * S / (8 * L.bw)
    # + latency: a forwarded block waits its α on every hop before the link can stream it on (7 µs here)
    assert comm.time <= 8 * S / (8 * L.bw) + 8 * L.alpha


@pytest.mark.parametrize("algo", ALGOS)
def test_a_v5e_slice_without_wraparound_routes_along_its_lines(algo):
    """TPU v5e 4×4: no wraparound link on either axis (Google Cloud TPU docs; the book: wraparound only
    on axes of 16). Every block goes straight along each line, never through a missing link."""
    from simcore.topology_presets import get_preset

    topo = get_preset("tpu-v5e-16x16").topology(16)
    assert topo.wraps() == (False, False)
    n = 16
    shards = [np.arange(2.0 * n * n).reshape(2 * n, n) + 1000 * d for d in range(n)]
    comm = Comm(topo, byte_scale=1e3)
    out = all_to_all(comm, shards, 1, 0, algo=algo)
    for got, want in zip(out, _reference(shards, 1, 0), strict=True):
        np.testing.assert_array_equal(got, want)
    hops = {}
    for m in comm.trace.messages:
        a, b = topo.coords(m.src), topo.coords(m.dst)
        assert sum(abs(x - y) for x, y in zip(a, b)) == 1  # a neighbour on the line, no wraparound
        hops.setdefault(a2a_block(m.chunk, n), []).append(m)
    assert all(len(ms) == _torus_distance(topo, s, d) for (s, d), ms in hops.items())
    if algo == "direct":
        # the line's middle link, each way, carries every block between its two halves on that axis
        block = shards[0].nbytes * 1e3 / n
        load = {}
        for m in comm.trace.messages:
            load[m.src, m.dst] = load.get((m.src, m.dst), 0) + m.nbytes
        assert max(load.values()) == pytest.approx(4 * 2 * 2 * block)  # 4 rows × (2 left × 2 right)
        assert comm.time >= max(load.values()) / topo.link.bw


# ---------------------------------------------------------------------------------------
# The command line and the Chrome export
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("algo", ALGOS)
def test_trace_cli_writes_a_chrome_trace(tmp_path, capsys, algo):
    out = tmp_path / "a2a.json"
    rc = simcore_main(["trace", "--op", "all-to-all", "--algo", algo, "--n", "4", "--bytes", "4KiB",
                       "--format", "chrome", "--out", str(out), "--summary"])
    assert rc == 0
    text = capsys.readouterr().out
    assert f"all-to-all ({algo}) on 4 devices" in text and "messages      12 in 3 steps" in text
    assert "algbw x (n-1)/n" in text
    ev = json.loads(out.read_text())["traceEvents"]
    comm = [e for e in ev if e.get("cat") == "comm"]
    assert len(comm) == 2 * 12  # a send slice and a receive slice per message
    names = {e["name"] for e in comm}
    assert names == {f"chunk {a2a_chunk(s, d, 4)}" for s in range(4) for d in range(4) if s != d}


def test_trace_cli_defaults_to_direct_and_refuses_ring(capsys):
    assert simcore_main(["trace", "--op", "all-to-all", "--n", "4"]) == 0
    assert "all-to-all (direct) on 4 devices" in capsys.readouterr().out
    assert simcore_main(["trace", "--op", "all-to-all", "--algo", "ring", "--n", "4"]) == 2
    assert "unknown all-to-all algorithm 'ring'" in capsys.readouterr().err


@pytest.mark.parametrize("shape", [(8, 8), (4, 4, 4)])
def test_small_blocks_on_a_torus_take_their_longest_path(shape):
    """Latency-bound: every block's hops go at once, so 8 bytes a device take about the longest path's
    α per hop. Issued round by round, a port served a later round's first hop only after an earlier
    round's last: 8 × 8 took 75 µs for its 8-hop paths of 1 µs each (16 × 16: 680 µs for 16 hops)."""
    topo = torus(shape)
    comm = Comm(topo, byte_scale=1.0)
    _run(comm, "direct", per_block=1)
    hops = sum(s // 2 for s in shape)
    assert comm.time <= (hops + 1) * TPU_V4_ICI.alpha


@pytest.mark.parametrize("m,q", [(2, 4), (3, 3), (4, 2), (2, 8), (3, 1)])
def test_direct_on_nodes_is_the_slower_of_nvlink_and_the_nics(m, q):
    """Node-aware rounds (as NCCL's p2p schedule): every round sends each NIC one block or none, so NVLink's
    q−1 blocks and the NIC's n−q go at once and neither waits: max(α_f + (q−1)·S/(nβ_f), α_i + (n−q)·S/(nβ_i)).
    With (d + j) mod n rounds the NICs waited on one another: 2 × 8 took (n−1)/(n−q) = 15/8 of it."""
    topo = nodes(m, q)
    comm = Comm(topo, byte_scale=1e6)
    S, _a, _o = _run(comm, "direct")
    n, b = topo.n, S / topo.n
    want = max(NVLINK4.alpha + (q - 1) * b / NVLINK4.bw if q > 1 else 0.0, IB_NDR400.alpha + (n - q) * b / IB_NDR400.bw)
    assert comm.time == pytest.approx(want, rel=1e-9)
    assert topo.time("all-to-all", "direct", S) == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="no closed form for all-to-all with algorithm 'direct' on torus"):
        torus((4, 4)).time("all-to-all", "direct", S)
