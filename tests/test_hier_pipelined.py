"""The hierarchical all-reduce pipelined by chunks (topo_collectives.allreduce_hier_pipelined,
as NCCL's Tree all-reduce loops chunk by chunk, src/device/all_reduce.h runTreeUpDown) against its
closed form topo_closed_forms.t_hier_pipelined, the unpipelined three calls and the port bounds."""

import numpy as np
import pytest

from simcore.comm_sim import Comm
from simcore.links import IB_NDR400, NVLINK4
from simcore.topo_closed_forms import hier_chunks, t_hier, t_hier_pipelined
from simcore.topo_collectives import allreduce_hier, allreduce_hier_pipelined
from simcore.topology import nodes


def _run(fn, N, P, S, base=0.0, **kw):
    topo = nodes(N, P, NVLINK4, IB_NDR400, base=base)
    n = N * P
    C = kw.get("chunks") or 1
    L = n * C * 2
    x = np.random.default_rng(N * 10 + P).standard_normal((n, L))
    comm = Comm(topo, byte_scale=S / (L * 8))
    out = fn(comm, list(x), **kw)
    return comm, x, out


@pytest.mark.parametrize("N,P", [(2, 2), (2, 4), (3, 2), (4, 3), (2, 8), (1, 4), (3, 1)])
@pytest.mark.parametrize("C", [1, 2, 5])
@pytest.mark.parametrize("S", [1e3, 1e6, 1e9])
def test_simulation_equals_closed_form(N, P, C, S):
    comm, x, out = _run(allreduce_hier_pipelined, N, P, S, base=2e-6, chunks=C)
    for o in out:
        np.testing.assert_allclose(o, x.sum(axis=0))
    want = t_hier_pipelined(P, N, S, NVLINK4, IB_NDR400, base=2e-6, chunks=C)
    assert comm.time == pytest.approx(want, rel=1e-9)
    last = comm.trace.rows()
    assert comm.trace.contributor_counts().max() == N * P  # the sums end with every device
    assert len(last) > 0


@pytest.mark.parametrize("N,P", [(2, 8), (4, 8), (3, 4)])
def test_pipelining_beats_three_calls_at_large_sizes_and_respects_the_ports(N, P):
    S = 2.0**30
    n = N * P
    piped = t_hier_pipelined(P, N, S, NVLINK4, IB_NDR400)
    plain = t_hier("all-reduce", P, N, S, NVLINK4, IB_NDR400)
    assert hier_chunks(S) == 16
    assert piped < 0.8 * plain  # the network phase hides behind the node's phases
    node_ports = 2 * (P - 1) * S / (P * NVLINK4.bw)
    nics = 2 * (N - 1) * S / (n * IB_NDR400.bw)
    assert piped >= max(node_ports, nics)


def test_one_chunk_is_the_three_phases_without_their_extra_calls():
    base = 5e-6
    for N, P in ((2, 4), (3, 2)):
        S = 1e6
        assert t_hier_pipelined(P, N, S, NVLINK4, IB_NDR400, base=base, chunks=1) == pytest.approx(
            t_hier("all-reduce", P, N, S, NVLINK4, IB_NDR400, base=base) - 2 * base, rel=1e-12)


def test_chunks_follow_nccls_two_mib_unit():
    assert hier_chunks(1.0) == 1
    assert hier_chunks(2 * 2**20) == 1
    assert hier_chunks(2 * 2**20 + 1) == 2
    assert hier_chunks(2.0**40) == 16
    with pytest.raises(ValueError):
        _run(allreduce_hier_pipelined, 2, 2, 1e3, chunks=0)


@pytest.mark.parametrize("S", [2.0**20, 2.0**26, 2.0**30])
def test_the_registered_hier_is_the_pipelined_one_at_its_closed_form(S):
    """ALGORITHMS["all-reduce"]["hier"] — what the lecture's API, the presets, the cost model and the
    app run — simulates the pipelined algorithm (one call, C chunks) at t_hier_pipelined, and says so:
    on two DGX nodes' links timed by the lecture's α–β (no NCCL tuning), and on the tuned DGX preset,
    where hier is NCCL's NVLS Tree and the same simulation runs with the links that give its time."""
    import dataclasses

    from simcore.algorithms import ALGORITHMS, t_formula_on
    from simcore.topo_closed_forms import hier_pipeline_chunks
    from simcore.topology_presets import PRESETS, run_on_preset

    tuned = PRESETS["dgx-h100"].topology(16)
    topo = dataclasses.replace(tuned, tuning="")  # the same links, the lecture's α–β
    C = hier_pipeline_chunks(8, 2, S, topo.intra, topo.inter)
    assert C == (1 if S <= 2**21 else 3)  # more chunks would pay more α than the overlap saves
    L = 16 * 8 * C
    x = np.random.default_rng(3).standard_normal((16, L))
    comm = Comm(topo, byte_scale=S / (L * 8))
    out = ALGORITHMS["all-reduce"]["hier"].fn(comm, list(x))
    np.testing.assert_allclose(out[3], x.sum(axis=0))
    c = comm.trace.collectives
    assert len(c) == 1 and c[0].algo == "hier"  # one call, not three
    want = t_hier_pipelined(8, 2, S, topo.intra, topo.inter, base=topo.base)
    assert comm.time == pytest.approx(want, rel=1e-9)
    assert t_formula_on(topo, "hier", S) == pytest.approx(want, rel=1e-12)
    assert topo.time("all-reduce", "hier", S) == pytest.approx(want, rel=1e-12)
    assert f"pipelined in {C} chunk" in topo.protocol("all-reduce", "hier", S)[1]
    assert "pipelined" in ALGORITHMS["all-reduce"]["hier"].description
    # the tuned preset: the same pipelined simulation, at NCCL's NVLS Tree time
    comm, x, out = run_on_preset("all-reduce", "dgx-h100", 16, S, "hier")
    np.testing.assert_allclose(out[3], x.sum(axis=0))
    assert comm.trace.collectives[0].algo == "hier"
    assert comm.time == pytest.approx(tuned.time("all-reduce", "hier", S), rel=1e-9)
    assert tuned.time("all-reduce", "hier", S) != pytest.approx(want, rel=1e-3)


def test_at_large_sizes_the_pipeline_hides_the_network_phase():
    """On 2 × 8 H100 the node's ports (2(P−1)/P·S/β_f) are slower than the NICs (2(N−1)/n·S/β_i), so
    pipelining hides the whole all-reduce across nodes: the three calls' time less 2(N−1)·S/(n·β_i),
    to within the chunks' extra α (C per ring step) and the two calls' bases it no longer pays."""
    P, N, S = 8, 2, 2.0**33
    n = P * N
    base = 14e-6
    plain = t_hier("all-reduce", P, N, S, NVLINK4, IB_NDR400, base=base)
    piped = t_hier_pipelined(P, N, S, NVLINK4, IB_NDR400, base=base)
    network = 2 * (N - 1) * S / (n * IB_NDR400.bw)
    assert plain - piped == pytest.approx(network, rel=0.01)
    assert piped == pytest.approx(2 * (P - 1) * S / (P * NVLINK4.bw), rel=0.01)  # the node's ports


@pytest.mark.parametrize("S", [2.0**20, 2.0**26])
def test_the_step_simulation_runs_hier_at_its_closed_form(S):
    """The step timeline's all-reduce by name on two DGX nodes: equal pipeline chunks, so its time is
    the registry's closed form at sizes with one chunk and with several."""
    from simcore import step_sim
    from simcore.topology_presets import PRESETS

    topo = PRESETS["dgx-h100"].topology(16)
    comm = Comm(topo)
    step_sim._all_reduce(comm, S, "all-reduce", "hier")
    assert comm.trace.collectives[0].algo == "hier"
    assert comm.time == pytest.approx(topo.time("all-reduce", "hier", S), rel=1e-9)


def _equal_messages(comm, S, C):
    """Every message of the one hier call carries S / (n·C): the pipeline's chunks are equal."""
    nb = comm.trace.column("nbytes")
    n = comm.n
    np.testing.assert_allclose(nb, S / (n * C), rtol=1e-12)


@pytest.mark.parametrize("topo,S", [
    ("dgx-h100", 2.0**26),
    # 2 × 3 GPUs timed as NCCL's NVLS Tree: its untimed links would pipeline 64 MiB in 7 chunks, the
    # links it is timed with in 2 — 3·7 fine pieces a device do not cut into 2·6 equal chunks
    (nodes(2, 3, NVLINK4, IB_NDR400, base=14e-6, tuning="hopper"), 2.0**26),
])
def test_the_simulations_cut_hier_into_the_chunks_its_timing_assumed(topo, S):
    """The step timeline and run_on_preset size hier's buffer by Nodes.hier_chunks (the pipeline chunks
    of the links it is timed with), so the pipeline's chunks are equal and the simulation takes
    topology.time — NCCL's NVLS Tree time on a tuned machine."""
    from simcore import step_sim
    from simcore.topo_closed_forms import hier_pipeline_chunks
    from simcore.topology_presets import PRESETS, run_on_preset

    if isinstance(topo, str):
        topo = PRESETS[topo].topology(16)
    n, C = topo.n, topo.hier_chunks(S)
    assert C == 2 and hier_pipeline_chunks(topo.per_node, topo.n_nodes, S, topo.intra, topo.inter) != C
    comm = Comm(topo)
    step_sim._all_reduce(comm, S, "all-reduce", "hier")
    c = comm.trace.collectives[0]
    assert c.algo == "hier" and c.n_chunks == n * C
    _equal_messages(comm, S, C)
    assert comm.time == pytest.approx(topo.time("all-reduce", "hier", S), rel=1e-9)
    if topo.per_node == 8:  # a preset: run_on_preset on real arrays, one element a fine piece
        comm, x, out = run_on_preset("all-reduce", "dgx-h100", 16, S, "hier", elems_per_piece=1)
        np.testing.assert_allclose(out[3], x.sum(axis=0))
        assert x.shape == (16, 16 * C) and comm.trace.collectives[0].n_chunks == 16 * C
        _equal_messages(comm, S, C)
        assert comm.time == pytest.approx(topo.time("all-reduce", "hier", S), rel=1e-9)
