"""
Issue 32, items 1 and 2: NVLink SHARP's channels as NCCL's search builds them (its printed NVLS rows
at 2, 4, 6 and 8 GPUs, the public ≈ 480 GB/s on 8 H100 and 835–900 on GB200 NVL72), and NCCL's Tree
across nodes (a chain inside each node, a double binary tree across them): NCCL's own Tree/LL log
lines, the tuner's small-size choice, the registry's "tree" that moves real arrays in the time of its
closed form, and the time NCCL's model gives it on a tuned machine.

Expected values are worked out here from tuning.cc's and search.cc's constants, not read back from
the model under test.
"""

import math

import numpy as np
import pytest

from simcore.comm_sim import Comm, nodes
from simcore.links import IB_NDR400, NVLINK4, LinkSpec
from simcore.nccl_tuning import models, nvls_graph_one_node, tune
from simcore.topology_presets import PRESETS, run_on_preset
from simcore.tree_allreduce import t_tree, tree_schedule

NVLINK_H100 = 18 * 20.6  # GB/s: 18 NVLinks × topo.h SM90_NVLINK_BW


@pytest.mark.parametrize("P,algbw", [
    # the NVLS rows NCCL's tuner prints (latency/algbw) on one H100 node, worked out from search.cc and tuning.cc
    # (issue 32: they match NCCL's printed rows at 2, 4, 6 GPUs): nvls channels = GPUs, bwIntra the largest of
    # sm90SpeedArrayIntra {60, 50, 40, …} with (P + 1)·s ≤ 370.8, bwInter raised to 60; per channel
    # min(bwIntra · 0.85 · (P−1)/P · 2, 60), algbw = P · that · P / (2(P−1))
    (2, 102.0),  # min(60 · 0.85 · 1/2 · 2, 60) = 51 → 2 · 51 · 2/2
    (4, 160.0),  # min(76.5, 60) = 60 → 240 · 4/6
    (6, 216.0),  # bwIntra 50 (7 · 60 > 370.8): min(70.8, 60) = 60 → 360 · 6/10
    (8, 272.0),  # bwIntra 40: min(59.5, 60) → 476 · 8/14 (nccl-tests#212: "algbw ~275GB/s")
])
def test_nvls_rows_on_one_h100_node_are_nccls_rules(P, algbw):
    nvls = next(m for m in models("all-reduce", P, 1, "hopper") if m.algo == "innet")
    assert nvls.latency == pytest.approx(25e-6)
    assert nvls.algbw == pytest.approx(algbw * 1e9, rel=1e-12)


def test_the_nvls_graph_climbs_bwinter_to_twice_bwintra_or_the_top_speed():
    assert nvls_graph_one_node(8, "hopper") == (8, 40.0, 60.0)
    assert nvls_graph_one_node(2, "hopper") == (2, 60.0, 60.0)
    assert nvls_graph_one_node(72, "blackwell") == (32, 20.0, 40.0)  # 33 · 20 ≤ 721.8 < 33 · 24; NVLS arity 32


def test_on_four_h100_nccl_runs_the_ring_at_every_size_and_nvls_wins_on_eight():
    # NVLS 160 GB/s of algbw against the ring's 370.8 · 4/6 = 247: the old model picked NVLS from 4 MiB
    for S in (2.0 ** k for k in range(3, 34)):
        assert tune("all-reduce", 4, 1, S).algo == "ring", S
    assert tune("all-reduce", 8, 1, 2.0**33).algo == "innet"


@pytest.mark.parametrize("n,measured,tol", [
    # nccl-tests#212 (sjeaugey): "On 8 GPUs, you should reach a peak busBw of ~480GB/s"; NVIDIA/nccl#1455: 480
    # at 8 GPUs with NCCL_ALGO=NVLS. The model (NCCL's): 476, 0.8 % below; tolerance 2 %.
    (8, 480e9, 0.02),
])
def test_nvls_bus_bandwidth_on_8_h100_against_public_runs(n, measured, tol):
    S = 8 * 2**30
    topo = PRESETS["dgx-h100"].topology(n)
    assert topo.choose("all-reduce", S)[0] == "innet"
    bus = S / topo.time("all-reduce", None, S) * 2 * (n - 1) / n
    assert abs(bus / measured - 1) < tol


def test_nvls_on_a_full_gb200_rack_against_public_runs():
    # coreweave/nccl-tests#43 (GB200 NVL72, 72 GPUs, all_reduce_perf): busbw 834.6–846.8 GB/s at 4–8 GiB; issue 32
    # quotes 835–900 for public runs. NCCL's model: 32 channels (NVLS arity) × min(20 · 0.74 · 31/32 · 2, 40) =
    # 917.6 GB/s — 8–10 % above the rack's measurement (the model is NVIDIA's fit of its best runs); tolerance 12 %.
    n, S = 72, 8 * 2**30
    topo = PRESETS["gb200-nvl72"].topology(n)
    bus = S / topo.time("all-reduce", None, S) * 2 * (n - 1) / n
    assert topo.choose("all-reduce", S)[0] == "innet"
    assert bus == pytest.approx(917.6e9 * (1 - 25e-6 / topo.time("all-reduce", None, S)), rel=1e-9)
    assert 834.6e9 < bus < 1.12 * 834.6e9


def test_nccls_own_tree_ll_log_lines_on_three_h100_nodes():
    # NVIDIA/nccl#1453 (3 × 8 H100, NCCL 2.22.3): "64 Bytes -> Algo 0 proto 0 time 25.207382",
    # "1024 Bytes -> Algo 0 proto 0 time 25.331232" (Algo 0 = Tree, proto 0 = LL); issue 32: 25.9 µs at 4 KiB.
    topo = PRESETS["dgx-h100"].topology(24)
    ll = next(m for m in topo.nccl_models("all-reduce") if (m.algo, m.protocol) == ("tree", "LL"))
    assert ll.time(64) * 1e6 == pytest.approx(25.207382, abs=5e-6)
    assert ll.time(1024) * 1e6 == pytest.approx(25.331232, abs=5e-6)
    assert ll.time(4096) * 1e6 == pytest.approx(25.9, abs=0.05)
    assert topo.choose("all-reduce", 4096.0)[:2] == ("tree", "LL")  # Shard Lab said ring-nodes 59.8 µs before


@pytest.mark.parametrize("N,lo,hi", [(2, 25.2, 31.8), (4, 35.2, 47.8)])
def test_small_all_reduces_across_nodes_take_nccls_tree_time(N, lo, hi):
    # Tree LL: 6.8 + 2(7 · 0.6 + log2(N) · 5.0) µs, bandwidth 39.0 (2 nodes) or 20.4 (more) · 0.85 · 0.5 ×
    # treeCorrectionFactor (0.6 at 64 KiB). Issue 32 quotes NCCL's model at 25–31 and 35–46 µs without the TREE
    # pattern's 0.85 that NCCL's own log above shows; with it 25.2–31.8 and 35.2–47.8.
    topo = PRESETS["dgx-h100"].topology(8 * N)
    for S in (8.0, 2.0**10, 2.0**16):
        algo, proto, _ = topo.choose("all-reduce", S)
        assert (algo, proto) == ("tree", "LL")
    assert topo.time("all-reduce", None, 8.0) * 1e6 == pytest.approx(lo, abs=0.01)
    assert topo.time("all-reduce", None, 2.0**16) * 1e6 == pytest.approx(hi, abs=0.05)


def test_tree_latency_grows_with_log2_of_the_nodes_not_the_gpu_count():
    t = [PRESETS["dgx-h100"].topology(8 * N).time("all-reduce", "tree", 8.0) * 1e6 for N in (2, 4, 8, 16, 32)]
    steps = np.diff(t)
    assert steps == pytest.approx([10.0] * 4, abs=1e-3)  # + 2 · 5.0 µs per doubling of the nodes


@pytest.mark.parametrize("P,N,C", [(8, 2, 1), (8, 3, 2), (4, 5, 3), (1, 4, 1), (3, 1, 2), (2, 6, 1)])
def test_the_tree_moves_real_sums_in_its_closed_forms_time(P, N, C):
    topo = nodes(N, P, NVLINK4, IB_NDR400)
    L = 2 * C * 5
    comm = Comm(topo, byte_scale=1e4)
    rng = np.random.default_rng(P * 10 + N)
    xs = [rng.standard_normal(L) for _ in range(P * N)]
    from simcore.sharding import all_reduce
    out = all_reduce(comm, xs, algo="tree") if C == 1 and N > 1 else None
    if out is None:
        from simcore.tree_allreduce import allreduce_tree
        out = allreduce_tree(comm, xs, chunks=C)
    for d in range(P * N):
        np.testing.assert_allclose(out[d], np.sum(xs, axis=0), rtol=1e-12)
    S = L * 8 * 1e4
    assert comm.time == pytest.approx(t_tree(P, N, S, NVLINK4, IB_NDR400, chunks=C), rel=1e-9)
    msgs = comm.trace.messages
    assert len(msgs) == 2 * C * 2 * (P * N - 1)  # two trees: every GPU but the root sends once up, once down
    # every network message goes between two nodes' tree GPUs; every chain message stays in its node
    for m in msgs:
        across = m.phase in ("reduce (tree across nodes)", "broadcast (tree across nodes)")
        assert (m.src // P != m.dst // P) == across


def test_the_trees_latency_is_nccls_formula_on_alpha_beta_links():
    f, i = LinkSpec("f", 0.6e-6, 1e30), LinkSpec("i", 5e-6, 1e30)
    for P, N in ((8, 2), (8, 3), (8, 4), (8, 32), (4, 7)):
        assert t_tree(P, N, 1.0, f, i, base=6.8e-6) == pytest.approx(
            6.8e-6 + 2 * ((P - 1) * 0.6e-6 + int(math.log2(N)) * 5e-6), rel=1e-9)


def test_the_double_binary_tree_puts_each_node_inside_one_tree_and_at_a_leaf_of_the_other():
    msgs = tree_schedule(1, 7, 1)
    up = [m for m in msgs if m.phase == "reduce (tree across nodes)"]
    parents = [{m.dst for m in up if m.piece == h} for h in (0, 1)]
    assert parents[0] == {0, 1, 2} and parents[1] == {6, 5, 4}  # the second tree is the first mirrored


@pytest.mark.parametrize("n,S", [(16, 8.0), (16, 2.0**16), (32, 2.0**20), (32, 2.0**26)])
def test_a_simulated_tree_on_the_dgx_takes_nccls_tree_time(n, S):
    comm, x, out = run_on_preset("all-reduce", "dgx-h100", n, S, "tree")
    np.testing.assert_allclose(out[n - 1], x.sum(axis=0), atol=1e-12)
    topo = PRESETS["dgx-h100"].topology(n)
    assert comm.time == pytest.approx(topo.time("all-reduce", "tree", S), rel=1e-9)
    assert comm.trace.collectives[0].algo == "tree"


@pytest.mark.parametrize("launch,want", [("", 10.2e-6), ("graph", 16.84e-6), ("eager", 19.77e-6)])
def test_a_launch_mode_floors_the_simulated_call_at_its_measured_wall_time(launch, want):
    # 8 B on 4 H100: NCCL's model 6.6 + 6 × 0.6 = 10.2 µs (ring LL) — the tuner's price, no launch or sync. The
    # floors: sglang#22734, NCCL on one NVLink 4 node of 8 H200 at 2 KiB, 16.84 µs under CUDA graphs and 19.77 µs
    # launched eagerly (issue 32 quotes 16.1 and 22.7 µs on 4 H100; tolerance: the floor itself, exactly).
    import dataclasses

    from simcore.sharding import all_reduce
    topo = dataclasses.replace(PRESETS["dgx-h100"].topology(4), launch=launch)
    comm = Comm(topo, byte_scale=8.0 / (4 * 8))
    all_reduce(comm, [np.ones(4) * d for d in range(4)])
    assert comm.time == pytest.approx(want, rel=1e-4)
    assert topo.time("all-reduce", None, 8.0) == pytest.approx(want, rel=1e-4)
    assert comm.topology is topo
    big = topo.time("all-reduce", None, 2.0**30)  # the floor never touches a large call
    assert big == pytest.approx(PRESETS["dgx-h100"].topology(4).time("all-reduce", None, 2.0**30), rel=1e-12)
    with pytest.raises(ValueError, match="launch is"):
        from simcore.topology import switch
        switch(4, launch="warm")


@pytest.mark.parametrize("algo,S,want", [
    # sglang#2904 (H100, TP 8, no CUDA graph): one-shot 5.9 µs at 512 B, two-shot 22.1 and 33.8 µs at 512 KiB, 1 MiB
    ("direct", 512.0, 5.9e-6 + 7 * 512 / 118.8e9),
    ("two-shot", 2.0**19, 22.1e-6),
    ("two-shot", 2.0**20, 33.8e-6),
])
def test_the_lecture_kernels_run_as_the_custom_all_reduce_kernels_measured(algo, S, want):
    from simcore.sharding import all_reduce
    topo = PRESETS["dgx-h100"].topology(8)
    assert topo.time("all-reduce", algo, S) == pytest.approx(want, rel=2e-3)
    comm = Comm(topo, byte_scale=S / (64 * 8))
    all_reduce(comm, [np.ones(64) * d for d in range(8)], algo=algo)
    assert comm.time == pytest.approx(topo.time("all-reduce", algo, S), rel=1e-9)


def test_the_custom_kernels_win_only_at_small_and_medium_sizes():
    # before issue 32 two-shot was timed at NVLink's line rate after NCCL's 14 µs base: "fastest" from 512 KiB and
    # 1.21× faster than NCCL at 8 GiB; now NCCL (ring LL, then NVLS) wins from 512 KiB on
    topo = PRESETS["dgx-h100"].topology(8)

    def best_custom(S):
        return min(topo.time("all-reduce", a, S) for a in ("direct", "two-shot", "rd"))

    for S in (8.0, 2.0**12, 2.0**16, 2.0**18):
        assert best_custom(S) < topo.time("all-reduce", None, S), S
    for S in (2.0**19, 2.0**20, 2.0**26, 2.0**33):
        assert best_custom(S) > topo.time("all-reduce", None, S), S
    assert topo.time("all-reduce", "two-shot", 2.0**33) > 6 * topo.time("all-reduce", None, 2.0**33)


def test_a_machine_offers_its_launch_setting_by_name():
    dgx = PRESETS["dgx-h100"]
    assert dgx.topology(8).launch == ""  # the default: NCCL's model alone
    assert dgx.topology(16, launch="eager").time("all-reduce", None, 8.0) == pytest.approx(25.2e-6, rel=1e-4)  # Tree LL
    assert dgx.topology(8, launch="eager").time("all-reduce", None, 8.0) == pytest.approx(19.77e-6)
    with pytest.raises(ValueError, match="not timed by NCCL's model"):
        PRESETS["tpu-v5e-16x16"].topology(16, launch="graph")


def test_a_preset_in_a_launch_mode_feeds_the_decode_cost_model():
    # dataclasses.replace(preset, launch="graph"): every NCCL all-reduce of a decode step is floored at the
    # measured 16.84 µs (sglang#22734), so 8 H100's 16 KiB all-reduce (NCCL's model: ring LL 15.2 µs) costs 16.84
    import dataclasses

    from simcore.cost_model import comm_time
    dgx = PRESETS["dgx-h100"]
    graph = dataclasses.replace(dgx, launch="graph")
    assert comm_time(dgx, 8, 16384.0) == pytest.approx(6.6e-6 + 14 * 0.6e-6 + 16384 * 14 / 8 / 141e9, rel=1e-12)
    assert comm_time(graph, 8, 16384.0) == pytest.approx(16.84e-6, rel=1e-12)
    assert comm_time(graph, 16, 16384.0) == comm_time(dgx, 16, 16384.0)  # Tree LL's 26.6 µs is above the floor
