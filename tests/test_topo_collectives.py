"""Collectives across nodes and on tori: real arrays equal numpy's, simulated time equals the
closed form (1e-9), and the schedule has the structure the algorithm promises."""

import math

import numpy as np
import pytest

from simcore import comm_sim
from simcore.comm_sim import Comm
from simcore.links import LINKS
from simcore.topo_closed_forms import t_hier, t_ring_nodes, t_torus
from simcore.topo_collectives import (allreduce_hier, allreduce_ring_nodes, allreduce_torus, channel_ring,
                                      torus_all_gather, torus_reduce_scatter)

NVL, IB, ICI = LINKS["nvlink4"], LINKS["ib-ndr400"], LINKS["tpu-v5e-ici"]


class RefNodes:
    """N nodes of P devices, written here from comm_sim's topology interface: port d is
    device d's NVLink port, port n + d its own NIC."""

    def __init__(self, N, P, intra=NVL, inter=IB):
        self.n_nodes, self.per_node, self.n = N, P, N * P
        self.link, self.intra, self.inter = intra, intra, inter
        self.n_ports = 2 * self.n

    def route(self, a, b):
        if a // self.per_node == b // self.per_node:
            return a, b, self.intra
        return self.n + a, self.n + b, self.inter


class RefTorus:
    """A torus: device d at np.unravel_index(d, shape); one port per (device, axis, direction)."""

    def __init__(self, shape, link=ICI, wrap=None):
        self.shape, self.n, self.link = tuple(shape), math.prod(shape), link
        self.wrap = tuple(wrap) if wrap is not None else (True,) * len(shape)
        self.n_ports = self.n * len(shape) * 2

    def route(self, a, b):
        ca, cb = np.unravel_index(a, self.shape), np.unravel_index(b, self.shape)
        (axis,) = [i for i in range(len(self.shape)) if ca[i] != cb[i]]  # neighbours differ on one axis
        N = self.shape[axis]
        step = (int(cb[axis]) - int(ca[axis])) % N
        assert step in (1, N - 1), "not a neighbour"
        if not self.wrap[axis]:
            assert abs(int(cb[axis]) - int(ca[axis])) == 1, "no wraparound link on this axis"
        up = step == 1 if N > 2 else cb[axis] > ca[axis]
        port = lambda d: (d * len(self.shape) + axis) * 2 + (0 if up else 1)  # noqa: E731
        return port(a), port(b), self.link


def nodes_topology(N, P):
    """comm_sim's own nodes topology when it has one, else the reference above."""
    if hasattr(comm_sim, "nodes"):
        return comm_sim.nodes(N, P, intra=NVL, inter=IB)
    return RefNodes(N, P)


def torus_topology(shape):
    if hasattr(comm_sim, "torus"):
        return comm_sim.torus(shape, ICI)
    return RefTorus(shape)


SHAPES = [(8, 2), (4, 3), (2, 4), (8, 1), (1, 4), (3, 2)]


@pytest.mark.parametrize("topo", [RefNodes, nodes_topology], ids=["reference", "comm_sim"])
@pytest.mark.parametrize("P,N", SHAPES)
@pytest.mark.parametrize("scale", [1.0, 1e4])
def test_nodes_all_reduce_values_and_closed_forms(topo, P, N, scale):
    n = P * N
    rng = np.random.default_rng(P * 10 + N)
    arrays = [rng.standard_normal(4 * P * n) for _ in range(n)]
    want = np.sum(arrays, axis=0)
    before = [a.copy() for a in arrays]
    for fn, closed in ((allreduce_hier, t_hier), (allreduce_ring_nodes, t_ring_nodes)):
        comm = Comm(topo(N, P), byte_scale=scale)
        out = fn(comm, arrays)
        assert all(np.allclose(o, want, rtol=1e-12, atol=1e-12) for o in out), fn.__name__
        S = arrays[0].nbytes * scale
        t = closed("all-reduce", P, N, S, NVL, IB)
        assert comm.time == pytest.approx(t, rel=1e-9), fn.__name__
        assert all(np.array_equal(a, b) for a, b in zip(arrays, before))  # inputs are never modified


@pytest.mark.parametrize("P,N", SHAPES)
def test_the_trace_replays_to_the_full_sum_on_every_gpu(P, N):
    """What a view draws at the end (Trace.holdings replays the messages): every GPU holds every
    chunk with all n contributors, as the arrays do. A message that carried several chunks but
    named one left the others partial on the screen."""
    n = P * N
    for fn in (allreduce_hier, allreduce_ring_nodes):
        comm = Comm(nodes_topology(N, P))
        fn(comm, [np.ones(4 * P * n) for _ in range(n)])
        held = comm.trace.holdings(0)
        everyone = frozenset(range(n))
        for d in range(n):
            assert set(held[d]) == set(range(comm.trace.collectives[0].n_chunks)), (fn.__name__, d)
            assert all(who == everyone for who in held[d].values()), (fn.__name__, d)


def test_hierarchical_schedule_uses_each_gpus_own_nic():
    P, N = 4, 3
    comm = Comm(RefNodes(N, P))
    allreduce_hier(comm, [np.ones(4 * P * N) for _ in range(P * N)])
    for m in comm.trace.messages:
        if m.src // P != m.dst // P:  # across nodes: same local index, network phases only
            assert m.src % P == m.dst % P and "network" in m.phase
        else:
            assert "node" in m.phase


def test_channel_rings_leave_every_node_once_per_channel_through_different_nics():
    P, N = 8, 2
    rings = [channel_ring(c, P, N) for c in range(P)]
    assert all(sorted(r) == list(range(16)) for r in rings)
    exits = []
    for r in rings:
        hops = [(a, b) for a, b in zip(r, r[1:] + r[:1]) if a // P != b // P]
        assert len(hops) == N  # one hop out of every node
        exits += [a for a, _ in hops]
    assert sorted(exits) == list(range(16))  # every GPU's NIC sends for exactly one channel
    comm = Comm(RefNodes(N, P))
    allreduce_ring_nodes(comm, [np.ones(P * 16) for _ in range(16)])
    per_step = {}
    for m in comm.trace.messages:
        if m.src // P != m.dst // P:
            per_step.setdefault(m.step, []).append(m.src)
    assert len(per_step) == 2 * 15 and all(sorted(v) == list(range(16)) for v in per_step.values())


def test_two_node_ring_reaches_what_nccl_tests_reports():
    # 16 H100 on two DGX nodes, NCCL_ALGO=Ring: "46-48 GB/s per NIC" x 8 NICs (NVIDIA/nccl-tests#290)
    S = 2.0**30
    comm = Comm(RefNodes(2, 8), byte_scale=S / (8 * 16 * 8 * 8))
    allreduce_ring_nodes(comm, [np.ones(8 * 16 * 8) for _ in range(16)])
    busbw = S / comm.time * 2 * 15 / 16
    assert 0.95 * 8 * IB.bw < busbw <= 8 * IB.bw  # the NICs' sum, less the per-step latency


@pytest.mark.parametrize("shape", [(4, 4), (4, 4, 4), (6,), (5,), (2, 2), (8,)])
@pytest.mark.parametrize("topo", [RefTorus, torus_topology], ids=["reference", "comm_sim"])
def test_torus_collectives_values_and_closed_forms(shape, topo):
    n = math.prod(shape)
    k = sum(1 for a in shape if a > 1)
    rng = np.random.default_rng(n)
    scale = 1e3
    arrays = [rng.standard_normal(2 * n * k) for _ in range(n)]
    S = arrays[0].nbytes * scale
    comm = Comm(topo(shape), byte_scale=scale)
    out = allreduce_torus(comm, arrays)
    assert all(np.allclose(o, np.sum(arrays, axis=0), rtol=1e-12, atol=1e-12) for o in out)
    assert comm.time == pytest.approx(t_torus("all-reduce", shape, S, ICI), rel=1e-9)
    pieces = [rng.standard_normal(2 * k) for _ in range(n)]
    comm = Comm(topo(shape), byte_scale=scale)
    out = torus_all_gather(comm, pieces)
    assert all(np.array_equal(o, np.concatenate(pieces)) for o in out)
    assert comm.time == pytest.approx(t_torus("all-gather", shape, pieces[0].nbytes * n * scale, ICI), rel=1e-9)
    comm = Comm(topo(shape), byte_scale=scale)
    out = torus_reduce_scatter(comm, arrays)
    total, L = np.sum(arrays, axis=0), len(arrays[0]) // n
    assert all(np.allclose(out[d], total[d * L:(d + 1) * L], rtol=1e-12, atol=1e-12) for d in range(n))
    assert comm.time == pytest.approx(t_torus("reduce-scatter", shape, S, ICI), rel=1e-9)


def test_a_line_without_wraparound_walks_the_whole_axis():
    shape, wrap = (8,), (False,)
    arrays = [np.full(8, float(d)) for d in range(8)]
    comm = Comm(RefTorus(shape, wrap=wrap), byte_scale=1e3)
    out = allreduce_torus(comm, arrays)
    assert all(np.allclose(o, 28.0) for o in out)
    S = arrays[0].nbytes * 1e3
    assert comm.time == pytest.approx(2 * 7 * (ICI.alpha + S / 8 / ICI.bw), rel=1e-9)  # 2(N−1) hops of S/N
    ring = Comm(RefTorus(shape), byte_scale=1e3)
    allreduce_torus(ring, arrays)
    assert ring.time < 0.6 * comm.time  # the wraparound halves the distance and the bytes per direction


def test_tpu_v5e_pod_all_reduce_is_the_books_estimate():
    # 16x16 with wraparound: all-reduce ≈ 2·V / (W_ici · n_axes), W_ici = 2 × 45 GB/s
    # ("How to Scale Your Model", sharding chapter); (N−1)/N because each chip keeps its own shard
    shape, n = (16, 16), 256
    arrays = [np.full(2 * n * 2, float(d)) for d in range(n)]
    scale = 2.0**30 / arrays[0].nbytes  # time it as a 1 GiB all-reduce
    comm = Comm(torus_topology(shape), byte_scale=scale)
    out = allreduce_torus(comm, arrays)
    assert all(np.allclose(o, n * (n - 1) / 2) for o in out)
    assert comm.time == pytest.approx(t_torus("all-reduce", shape, 2.0**30, ICI), rel=1e-9)
    book = 2 * 2.0**30 / (2 * ICI.bw * 2)
    assert book * 15 / 16 < comm.time < book * 1.01


# ---------------------------------------------------------------------------------------
# The cost model, the closed form and the simulation agree on every preset
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("key,n", [("dgx-h100", 8), ("dgx-h100", 16), ("dgx-h100", 24), ("gb200-nvl72", 72),
                                   ("tpu-v5e-16x16", 16), ("tpu-v4-4x4x4", 8), ("tpu-v4-4x4x4", 64)])
@pytest.mark.parametrize("algo", [None, "two-shot"])
def test_cost_model_t_comm_equals_the_simulated_all_reduce(key, n, algo):
    from simcore.cost_model import comm_time
    from simcore.sharding import all_reduce
    from simcore.topology_presets import PRESETS

    preset = PRESETS[key]
    lay = preset.layout(n)
    if lay.kind == "torus" and len({(a, w) for a, w in zip(lay.shape, lay.wrap) if a > 1}) > 1:
        pytest.skip("unequal axes: the parts meet on links and the closed form is a lower bound")
    k = max(1, sum(1 for a in lay.shape if a > 1))
    length = 2 * n * k * (preset.per_node if lay.kind == "nodes" else 1)
    arrays = [np.full(length, 1.0 + d) for d in range(n)]
    S = 16384.0  # one decode token of Llama-3 70B (8192 × bf16): what the decode sweep prices
    topo = preset.topology(n)
    comm = Comm(topo, byte_scale=S / arrays[0].nbytes)
    if algo is not None and algo not in topo.algorithms("all-reduce"):
        # two-shot needs a switch: a torus refuses it, naming its own
        with pytest.raises(ValueError, match=r"cannot run on torus.*choose one of torus$"):
            all_reduce(comm, arrays, algo=algo)
        return
    out = all_reduce(comm, arrays, algo=algo)
    assert all(np.allclose(o, n * (n + 1) / 2) for o in out)
    # the simulation equals its own closed form (the α–β port model with the machine's links) ...
    if algo == "two-shot" and lay.kind == "nodes":  # a flat two-shot across nodes runs, but has no closed form
        with pytest.raises(ValueError, match="no closed form"):
            topo.time("all-reduce", algo, S)
        return
    assert comm.time == pytest.approx(topo.time("all-reduce", algo, S), rel=1e-9)
    # ... and the cost model prices the machine as the machine times itself (NCCL's model on GPUs)
    # (the cost model's default None is the machine's own choice: NVLS on a rack of 72 at this size)
    assert comm_time(key, n, S, algo) == pytest.approx(preset.allreduce_time(n, S, algo), rel=1e-12)
    assert comm.time == pytest.approx(comm_time(key, n, S, algo), rel=1e-9)


def test_slices_without_wraparound_refuse_the_missing_link_and_unequal_axes_are_slower_than_the_bound():
    from simcore.sharding import all_reduce
    from simcore.topology_presets import PRESETS

    v5e = PRESETS["tpu-v5e-16x16"]
    topo = v5e.topology(32)  # 4x8 slice: no wraparound on either axis
    with pytest.raises(ValueError, match="no wraparound link"):
        Comm(topo).topology.route(0, 3)  # (0, 0) -> (0, 3): only a wraparound link would join them
    arrays = [np.full(2 * 32 * 2, 1.0) for _ in range(32)]
    comm = Comm(topo, byte_scale=1e3)
    out = all_reduce(comm, arrays)
    assert all(np.allclose(o, 32.0) for o in out)
    bound = v5e.allreduce_time(32, arrays[0].nbytes * 1e3)
    assert bound <= comm.time < 1.3 * bound  # the parts share links when the axes differ


@pytest.mark.parametrize("op", ["all-reduce", "reduce-scatter", "all-gather"])
def test_channel_ring_partial_sums_are_stored_as_channel_arcs_every_reader_decodes(op, tmp_path):
    """A channel ring's partial sum is an arc of its ring (node by node from local GPU c), not
    of device ids: stored as four integers (the channel-ring form of simcore/contributors.py), never as a list, and
    read the same by the message records, the holdings' membership matrix, the counts and a
    saved file."""
    from simcore.holdings import members
    from simcore.topology_presets import run_on_preset
    from simcore.trace import Trace

    comm, _, _ = run_on_preset(op, "dgx-h100", 24, 2.0**20, "ring-nodes")  # 3 nodes of 8
    tr = comm.trace
    r = tr.rows()
    sets = [frozenset(m.contributors) for m in tr.messages]
    assert len(tr.explicit) == 0
    assert (np.asarray(r["w2"]) < 0).any() == (op != "all-gather")
    M = members(r, comm.n, tr.explicit)
    assert all(set(np.flatnonzero(M[i]).tolist()) == s for i, s in enumerate(sets))
    assert tr.contributor_counts().tolist() == [len(s) for s in sets]
    if op != "all-gather":  # what a channel arc holds: positions q−k..q of channel c's ring
        i = int(np.flatnonzero(np.asarray(r["w2"]) < 0)[0])
        c, q0 = divmod(int(r["w0"][i]), comm.n)
        ring = channel_ring(c, 8, 3)
        assert sets[i] == frozenset(ring[(q0 + j) % comm.n] for j in range(int(r["w1"][i])))
    path = tmp_path / "t.json"
    tr.save(str(path))
    assert [frozenset(m.contributors) for m in Trace.load(str(path)).messages] == sets
