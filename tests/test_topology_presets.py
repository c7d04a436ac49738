"""Hardware presets (DGX H100, GB200 NVL72, TPU v5e 16x16, TPU v4 4x4x4) and the closed forms of
collectives on nodes and tori, against formulas written out here from the literature."""

import math

import pytest

from simcore.algorithms import t_formula
from simcore.links import LINKS, LinkSpec
from simcore.hw_specs import CHIPS
from simcore.topo_closed_forms import t_axis_all_gather, t_hier, t_hier_pipelined, t_ring_nodes, t_torus
from simcore.topology_presets import PRESETS, get_preset

NVL = LinkSpec("nvl", 1.9e-6, 450e9)
IB = LinkSpec("ib", 2.7e-6, 50e9)
ICI = LinkSpec("ici", 1e-6, 45e9)


def test_every_preset_names_a_chip_and_links_it_has():
    assert set(PRESETS) == {"dgx-h100", "gb200-nvl72", "tpu-v5e-16x16", "tpu-v4-4x4x4"}
    for p in PRESETS.values():
        assert p.chip in CHIPS and p.intra in LINKS and p.source
        assert CHIPS[p.chip].link == p.intra  # the preset's scale-up link is the chip's own
    with pytest.raises(ValueError, match="unknown hardware preset 'dgx-a100'"):
        get_preset("dgx-a100")


def test_valid_degrees_are_the_groups_each_machine_offers():
    assert PRESETS["dgx-h100"].valid_degrees(40) == [1, 2, 4, 8, 16, 24, 32, 40]
    assert PRESETS["gb200-nvl72"].valid_degrees(144)[-3:] == [64, 72, 144]
    # one NVLink domain of 72 hosts the power-of-two groups a 128-head model splits into
    assert {16, 32, 64} <= set(PRESETS["gb200-nvl72"].valid_degrees(72)) and 48 not in PRESETS["gb200-nvl72"].valid_degrees(72)
    assert PRESETS["gb200-nvl72"].layout(32).kind == "switch" and PRESETS["gb200-nvl72"].topology(64).n == 64
    assert PRESETS["tpu-v5e-16x16"].valid_degrees() == [1, 4, 8, 16, 32, 64, 128, 256]
    assert PRESETS["tpu-v4-4x4x4"].valid_degrees() == [1, 4, 8, 16, 32, 64]
    with pytest.raises(ValueError, match="no group of 12 chips; valid: 1, 2, 4, 8, 16"):
        PRESETS["dgx-h100"].layout(12)
    with pytest.raises(ValueError, match="up to 256"):
        PRESETS["tpu-v5e-16x16"].layout(512)


def test_layouts_put_the_node_boundary_and_the_wraparound_links_where_the_hardware_has_them():
    dgx = PRESETS["dgx-h100"]
    assert dgx.layout(8).kind == "switch" and dgx.layout(8).intra.bw == 450e9
    two = dgx.layout(16)
    assert (two.kind, two.nodes, two.per_node, two.inter.bw) == ("nodes", 2, 8, 50e9)  # 400 Gb/s per GPU NIC
    assert PRESETS["gb200-nvl72"].layout(72).kind == "switch"  # one NVLink domain of 72
    assert PRESETS["gb200-nvl72"].layout(144).nodes == 2
    v5e = PRESETS["tpu-v5e-16x16"]
    assert (v5e.layout(128).shape, v5e.layout(128).wrap) == ((8, 16), (False, True))  # only the 16-axis wraps
    assert v5e.layout(256).wrap == (True, True) and not any(v5e.layout(16).wrap)
    v4 = PRESETS["tpu-v4-4x4x4"]
    assert not any(v4.layout(16).wrap)  # 2x2x4: no wraparound without a full cube
    assert v4.layout(64).shape == (4, 4, 4) and all(v4.layout(64).wrap)


# ---------------------------------------------------------------------------------------
# closed forms, written out independently
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("S", [0.0, 65536.0, 2.0**20, 2.0**30])
def test_hierarchical_all_reduce_is_the_three_ring_phases(S):
    P, N = 8, 2
    rs = (P - 1) * (NVL.alpha + S / P / NVL.bw)  # reduce-scatter inside: P−1 steps of S/P
    ar = 2 * (N - 1) * (IB.alpha + (S / P) / N / IB.bw)  # ring all-reduce of S/P over N nodes
    ag = rs
    assert t_hier("all-reduce", P, N, S, NVL, IB) == pytest.approx(rs + ar + ag, rel=1e-12, abs=1e-18)
    assert t_hier("all-gather", P, N, S, NVL, IB) == pytest.approx(rs + ar / 2, rel=1e-12, abs=1e-18)
    assert t_hier("all-reduce", P, 1, S, NVL, IB) == pytest.approx(t_formula("ring", P, S, NVL.alpha, NVL.bw))


def test_nccl_ring_over_two_nodes_reaches_the_nics_sum():
    S, P, N = 2.0**33, 8, 2
    t = t_ring_nodes("all-reduce", P, N, S, NVL, IB)
    busbw = S / t * 2 * 15 / 16
    assert busbw == pytest.approx(P * IB.bw, rel=0.01)  # 8 NICs x 50 GB/s: nccl-tests#290's "46-48 GB/s per NIC"
    slow = LinkSpec("slow", 1.9e-6, 200e9)  # NVLink slower than 7 chunks per NIC chunk: NVLink binds
    t = t_ring_nodes("all-reduce", P, N, S, slow, IB)
    assert S / t * 2 * 15 / 16 == pytest.approx(slow.bw * P / (P - 1), rel=0.01)


@pytest.mark.parametrize("N", [2, 3, 4, 5, 16])
def test_one_axis_bidirectional_ring_and_line(N):
    S = 3.0e8
    # ring: ⌈(N−1)/2⌉ full shards each way, the even-N middle shard split in two
    hops, last = divmod(N - 1, 2)
    ring = hops * (ICI.alpha + S / N / ICI.bw) + last * (ICI.alpha + S / N / 2 / ICI.bw)
    if N == 2:
        ring = ICI.alpha + S / 2 / ICI.bw  # two chips: one neighbour, one hop
    assert t_axis_all_gather(N, S, ICI, wrap=True) == pytest.approx(ring, rel=1e-12)
    line = (N - 1) * (ICI.alpha + S / N / ICI.bw)  # the farthest shard walks N−1 hops
    assert t_axis_all_gather(N, S, ICI, wrap=False) == pytest.approx(line, rel=1e-12)


def test_torus_all_reduce_matches_how_to_scale_your_model():
    # The book (sharding chapter): AllGather ≈ V / (W_ici · n_axes), AllReduce twice that, with
    # W_ici the bidirectional bandwidth 2 × 4.5e10 (TPU chapter's table).
    V = 2.0**30
    for shape in ((16, 16), (4, 4, 4)):
        book = 2 * V / (2 * ICI.bw * len(shape))
        ours = t_torus("all-reduce", shape, V, ICI)
        N = shape[0]
        assert book * (N - 1) / N < ours < book * 1.01  # (N−1)/N: each chip already holds its own shard
    # one 16-ring: bidirectional halves the one-direction ring's bandwidth term
    one_way = t_formula("ring", 16, V, ICI.alpha, ICI.bw)
    assert t_torus("all-reduce", (16,), V, ICI) == pytest.approx(one_way / 2, rel=0.01)


def test_preset_allreduce_time_is_the_closed_form_of_its_layout():
    from simcore.nccl_tuning import models

    dgx = PRESETS["dgx-h100"]
    S = 2.0**20
    nvl4, ib = LINKS["nvlink4"], dgx.layout(16).inter
    # a GPU machine is timed as NCCL's tuning model times it: the fastest (algorithm, protocol)
    one = {(m.algo, m.protocol): m.time(S) for m in models("all-reduce", 8, 1, "hopper", ib.bw)}
    assert dgx.allreduce_time(8, S) == pytest.approx(min(one.values()), rel=1e-12)
    assert dgx.allreduce_time(8, S, algo="ring") == pytest.approx(
        min(one[("ring", p)] for p in ("LL", "LL128", "Simple")), rel=1e-12)
    # the custom all-reduce (TensorRT-LLM / vLLM) is not NCCL's: the lecture's one-shot form on the custom
    # kernel's measured launch and bandwidth (sgl-project/sglang#2904, H100 TP 8: 5.9 µs at 512 B, 118.8 GB/s)
    B = 14.0e-6  # per-collective base latency: NCCL src/graph/tuning.cc, baseLatencies Ring LL128
    assert dgx.allreduce_time(8, S, algo="direct") == pytest.approx(5.9e-6 + 7 * S / 118.8e9, rel=1e-12)
    two = {(m.algo, m.protocol): m.time(S) for m in models("all-reduce", 8, 2, "hopper", ib.bw)}
    assert dgx.allreduce_time(16, S) == pytest.approx(min(two.values()), rel=1e-12)
    # hierarchical across nodes is NCCL's NVLS Tree (tuning.cc): 25 + 2·log2(2)·20.9 µs, bus bandwidth
    # 8 channels × min(40·0.85·7/8·2, 48·2, 57.7) GB/s, algorithm bandwidth bus · 16/30
    nvls_tree = (25 + 2 * 20.9) * 1e-6 + S * 30 / 16 / (8 * 57.7e9)
    assert dgx.allreduce_time(16, S, algo="hier") == pytest.approx(nvls_tree, rel=1e-12)
    # the lecture's form on the same links, pipelined in one call (one base); at 1 MiB one chunk, so the
    # three ring phases of Horovod's three calls less their two extra bases
    want = B + 2 * 7 * (nvl4.alpha + S / 8 / nvl4.bw) + 2 * 1 * (ib.alpha + S / 16 / ib.bw)
    assert t_hier_pipelined(8, 2, S, nvl4, ib, base=B) == pytest.approx(want, rel=1e-12)
    assert t_hier("all-reduce", 8, 2, S, nvl4, ib, base=B) == pytest.approx(want + 2 * B, rel=1e-12)
    assert dgx.allreduce_time(16, S, algo="ring-nodes") == pytest.approx(
        min(two[("ring-nodes", p)] for p in ("LL", "LL128", "Simple")), rel=1e-12)
    v5e = PRESETS["tpu-v5e-16x16"]
    assert v5e.allreduce_time(1, S) == 0.0
    assert v5e.allreduce_time(256, S) == pytest.approx(t_torus("all-reduce", (16, 16), S, LINKS["tpu-v5e-ici"]))
    assert math.isfinite(PRESETS["tpu-v4-4x4x4"].allreduce_time(16, S))
