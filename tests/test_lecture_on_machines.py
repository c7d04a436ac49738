"""
The lecture's API (sharding, tensor_parallel) on every topology: the topology's own choice by
default, any registered algorithm where it can run, one sentence where it cannot; make_comm
with a topology or a machine preset's name; the torus all-gather in both directions.
"""

import dataclasses

import numpy as np
import pytest

from simcore.algorithms import ALGORITHMS, ALLREDUCE_ALGOS, t_formula
from simcore.links import NVLINK4, TPU_V4_ICI
from simcore.sharding import (all_gather, all_reduce, make_comm, matmul_case2, matmul_case3, matmul_case4,
                              reduce_scatter, shard)
from simcore.topo_closed_forms import t_hier_pipelined, t_ring_nodes, t_torus
from simcore.topology import nodes, switch, torus

MACHINES = [switch(8), nodes(2, 4), torus((4,)), torus((2, 4)), torus((2, 2, 2))]


def _ids(t):
    return t.name


@pytest.mark.parametrize("topo", MACHINES, ids=_ids)
def test_the_three_collectives_and_the_matmul_cases_equal_numpy_on_every_topology(topo):
    n = topo.n
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 8 * n * 6))
    B = rng.standard_normal((8 * n * 6, 2 * n * 6))
    comm = make_comm(n, topo)
    full = all_gather(comm, shard(A, 1, n), axis=1)
    assert all(np.array_equal(f, A) for f in full)
    parts = [rng.standard_normal((2 * n * 6, 3)) for _ in range(n)]
    rs = reduce_scatter(comm, parts, axis=0)
    np.testing.assert_allclose(np.concatenate(rs, axis=0), np.sum(parts, axis=0), atol=1e-12)
    ar = all_reduce(comm, parts)
    np.testing.assert_allclose(ar[n - 1], np.sum(parts, axis=0), atol=1e-12)
    np.testing.assert_allclose(matmul_case2(comm, shard(A, 1, n), B)[0], A @ B, atol=1e-10)
    np.testing.assert_allclose(matmul_case3(comm, shard(A, 1, n), shard(B, 0, n))[0], A @ B, atol=1e-10)
    C = matmul_case3(comm, shard(A, 1, n), shard(B, 0, n), scatter_axis=1)
    np.testing.assert_allclose(np.concatenate(C, axis=1), A @ B, atol=1e-10)
    X, Y = rng.standard_normal((2 * n, 6)), rng.standard_normal((6, 6 * n))
    np.testing.assert_allclose(np.concatenate(matmul_case4(comm, shard(X, 0, n), shard(Y, 1, n)), axis=0), X @ Y,
                               atol=1e-10)
    default = {c.op: c.algo for c in comm.trace.collectives}
    assert default == {op: topo.choose(op, 1.0)[0] for op in default}


def test_the_plain_switch_keeps_the_textbook_ring_and_its_closed_form():
    n, S = 8, 1024 * 8
    comm = make_comm(n)
    all_reduce(comm, [np.ones(1024) for _ in range(n)])
    assert comm.trace.collectives[0].algo == "ring"
    assert comm.time == pytest.approx(t_formula("ring", n, S, NVLINK4.alpha, NVLINK4.bw), rel=1e-12)
    assert ALLREDUCE_ALGOS["rd"][1](make_comm(n), [np.ones(8)] * n)[0][0] == n  # as the lecture indexes it


def test_nodes_run_hier_and_the_channel_rings_by_name_at_their_closed_forms():
    topo = nodes(2, 4)
    n, L = 8, 64
    S = L * 8.0
    hier = lambda op, P, N, S, A, I: t_hier_pipelined(P, N, S, A, I)  # noqa: E731 (NCCL's pipelined hier)
    for algo, form in (("hier", hier), ("ring-nodes", t_ring_nodes)):
        comm = make_comm(n, topo)
        out = all_reduce(comm, [np.full(L, d + 1.0) for d in range(n)], algo=algo)
        assert np.all(out[5] == 36.0) and comm.trace.collectives[0].algo == algo
        assert comm.time == pytest.approx(form("all-reduce", 4, 2, S, topo.intra, topo.inter), rel=1e-9)
    # the channel rings gather across the nodes on every NIC, not one flat ring paced by one NIC
    L = 8 * 2**16
    S = L * 8.0
    comm, flat = make_comm(n, topo), make_comm(n, topo)
    pieces = [np.full((L // n,), float(d)) for d in range(n)]
    all_gather(comm, pieces, axis=0)
    all_gather(flat, pieces, axis=0, algo="ring")
    assert comm.trace.collectives[0].algo == "ring-nodes"
    assert comm.time == pytest.approx(t_ring_nodes("all-gather", 4, 2, S, topo.intra, topo.inter), rel=1e-9)
    assert comm.time < 0.7 * flat.time  # 4 NICs carry what one NIC carried (→ 1/4 as S grows past α)


def test_a_torus_gathers_in_both_directions():
    S_piece = 1 << 16
    ring = torus((8,), TPU_V4_ICI)
    comm = make_comm(8, ring)
    all_gather(comm, [np.zeros(S_piece // 8) for _ in range(8)], axis=0)
    S = 8 * S_piece
    assert comm.trace.collectives[0].algo == "torus"
    assert comm.time == pytest.approx(t_torus("all-gather", (8,), S, TPU_V4_ICI), rel=1e-9)
    one_way = t_formula("ring", 8, S, TPU_V4_ICI.alpha, TPU_V4_ICI.bw, op="all-gather")
    assert comm.time < 0.6 * one_way  # half the bytes each way, ⌊n/2⌋ hops


def test_an_algorithm_that_cannot_run_is_refused_in_one_sentence_naming_those_that_can():
    comm = make_comm(16, torus((4, 4)))
    with pytest.raises(ValueError, match=r"^all-reduce algorithm 'two-shot' cannot run on torus\(4×4.*choose one of "
                                         r"torus$"):
        all_reduce(comm, [np.ones(32)] * 16, algo="two-shot")
    assert len(comm.trace.collectives) == 0
    with pytest.raises(ValueError, match="'hier' cannot run on switch.*ring, rd, innet, direct, two-shot"):
        all_reduce(make_comm(4), [np.ones(4)] * 4, algo="hier")
    with pytest.raises(ValueError, match="unknown all-gather algorithm 'nope'"):
        all_gather(make_comm(4), [np.ones(4)] * 4, axis=0, algo="nope")
    assert set(ALGORITHMS["all-reduce"]) >= {"ring", "rd", "innet", "direct", "two-shot", "hier", "ring-nodes", "torus"}


def test_make_comm_takes_a_topology_or_a_preset_and_refuses_mismatches_at_once():
    assert make_comm(16, nodes(2, 8)).topology == nodes(2, 8)
    assert make_comm(16, "dgx-h100").topology.name.startswith("nodes(2 × 8")
    assert make_comm(64, "tpu-v4-4x4x4").topology.shape == (4, 4, 4)
    with pytest.raises(ValueError, match=r"^make_comm: nodes\(2 × 8.* has 16 devices, not 8; pass n=16$"):
        make_comm(8, nodes(2, 8))
    with pytest.raises(ValueError, match="unknown hardware preset 'dgx-z'"):
        make_comm(8, "dgx-z")
    with pytest.raises(ValueError, match="has no group of 12 chips"):
        make_comm(12, "dgx-h100")
    with pytest.raises(ValueError, match="LinkSpec, a topology .* or a machine preset's name, got int"):
        make_comm(8, 3)


@pytest.mark.parametrize("where", ["dgx-h100", "tpu-v5e-16x16"])
def test_tp_forward_runs_on_a_machine_with_the_machines_choice(where):
    from simcore.tensor_parallel import shard_params_tp, tp_forward
    from simcore.transformer_lab import TINY, forward, init_params

    n = 16
    cfg = dataclasses.replace(TINY, n_heads=16, n_kv_heads=16, d_head=4, vocab=64)
    params = init_params(cfg, seed=0)
    tokens = np.arange(8)[None, :] % cfg.vocab
    comm = make_comm(n, where)
    logits = tp_forward(shard_params_tp(params, cfg, n), cfg, tokens, comm)
    np.testing.assert_allclose(logits, forward(params, cfg, tokens), atol=1e-9)
    algos = {c.algo for c in comm.trace.collectives if c.op == "all-reduce"}
    assert algos <= set(comm.topology.algorithms("all-reduce")) and algos
