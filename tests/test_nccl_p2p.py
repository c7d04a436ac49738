"""NCCL's all-to-all on the GPU machines (simcore.nccl_p2p, issue 32 item 3): the machine's choice,
NCCL's protocol rule, the scaling book's forms, the public figures with stated tolerances, and the
simulation timed to the model. Engine only, no Qt."""

import numpy as np
import pytest

from simcore import nccl_p2p
from simcore import sharding as shd
from simcore.all_to_all import all_to_all
from simcore.nccl_tuning import nvlink_bw
from simcore.topology_presets import get_preset

GiB, MiB, KiB = 2**30, 2**20, 2**10
MACHINES = [("dgx-h100", 8), ("dgx-h100", 16), ("dgx-h100", 32), ("gb200-nvl72", 8), ("gb200-nvl72", 36),
            ("gb200-nvl72", 72), ("gb200-nvl72", 144)]


def machine(key, n):
    return get_preset(key).topology(n)


def busbw(key, n, S):
    """nccl-tests' all-to-all busbw (src/alltoall.cu: algbw · (n−1)/n) of the machine's own choice, GB/s."""
    return S / machine(key, n).time("all-to-all", None, S) * (n - 1) / n / 1e9


@pytest.mark.parametrize("key,n", MACHINES)
def test_a_gpu_machine_chooses_its_all_to_all(key, n):
    """It raised "NCCL's model has no all-to-all algorithm"; NCCL runs grouped send/recv: "direct"."""
    topo = machine(key, n)
    for S in (8, 64 * KiB, MiB, 64 * MiB, 8 * GiB):
        algo, proto, why = topo.choose("all-to-all", S)
        assert algo == "direct" and proto in ("LL", "Simple") and "grouped send/recv" in why
        assert topo.protocol("all-to-all", "direct", S)[0] == proto
        assert topo.time("all-to-all", None, S) == pytest.approx(nccl_p2p.time(*topo._nccl_shape(), S, topo.tuning,
                                                                               getattr(topo, "inter", topo.link).bw))
    assert topo.protocol("all-to-all", "pairwise", MiB)[0] == ""  # not NCCL's: the lecture's α–β


@pytest.mark.parametrize("n", [8, 16, 72])
def test_ll_while_a_peers_block_fits_the_p2p_threshold(n):
    """enqueue.cc: LL when a peer's bytes <= nChannels × NCCL_P2P_LL_THRESHOLD (16384), one channel
    while a peer's part is under 64 KiB: LL exactly up to 16 KiB a peer."""
    assert nccl_p2p.protocol_for(n, 16 * KiB * n) == "LL"
    assert nccl_p2p.protocol_for(n, 16 * KiB * n + n) == "Simple"


def test_the_book_forms_in_a_node_and_across_nodes():
    """"How to Scale Your Model", GPU chapter: all-to-all in a node B(N−1)/(W·N²), across M nodes
    B(M−1)/(M²·W_node), B the whole array (n·S). The bandwidth term of NCCL's model is exactly these,
    W = what NCCL's p2p gets through NVLink, W_node = the node's NICs."""
    S = 8 * GiB
    for key, gpu in (("dgx-h100", "hopper"), ("gb200-nvl72", "blackwell")):
        for N in (8, 36, 72) if gpu == "blackwell" else (2, 4, 8):
            if N > get_preset(key).per_node:
                continue
            m = nccl_p2p.model_at(N, 1, S, gpu)
            W = nccl_p2p.P2P_NVLINK_EFFICIENCY * nvlink_bw(gpu) * 1e9
            assert S / m.algbw == pytest.approx(N * S * (N - 1) / (W * N**2), rel=1e-12)
    for M in (2, 4, 8):
        m = nccl_p2p.model_at(8, M, S, "hopper", 50e9)
        W_node = 8 * nccl_p2p.NIC_EFFICIENCY * 50e9
        assert S / m.algbw == pytest.approx(8 * M * S * (M - 1) / (M**2 * W_node), rel=1e-12)


def test_one_nvlink_domain_against_public_runs():
    # 4 H100, alltoall_perf (NCCL 2.30, Simple), 500 MiB: busbw 334.9–338.0 GB/s (NVIDIA/nccl#2169); the
    # efficiency is read from this run, so 2 % is its own scatter
    assert 334.9 * 0.98 <= busbw("dgx-h100", 4, 500 * MiB) <= 338.0 * 1.02
    # 8 H100 at 8 GiB: at most NCCL's effective NVLink bandwidth, "~370 GB/s … as BusBw when running
    # non-allreduce operations" (NVIDIA/nccl-tests#212), and not the 450 GB/s line rate it was timed at
    assert 330 <= busbw("dgx-h100", 8, 8 * GiB) <= 370
    # GB200 NVL72, 72 GPUs, 8 GiB: public runs give 615–658 GB/s (issue 32); the Hopper efficiency on
    # Blackwell's 721.8 GB/s gives 654 — within 5 % of the range; it was 884, the line rate
    for n in (8, 36, 72):
        assert 615 * 0.95 <= busbw("gb200-nvl72", n, 8 * GiB) <= 658 * 1.05


def test_across_nodes_every_nic_rail_carries_the_blocks_that_leave():
    """NCCL's maintainer: "On 2 nodes, 50% of the traffic is inter-node so you should see BusBW = 2x
    network bandwidth per GPU … N/(N−1)x" (NVIDIA/nccl-tests#130); the exact share on 2 × 8 is
    (n−1)/(n−P) = 15/8. It was one NIC's 50 GB/s."""
    nic = nccl_p2p.NIC_EFFICIENCY * 50  # GB/s a 400 Gb/s NIC carries: 46–48 (NVIDIA/nccl-tests#290)
    b2 = busbw("dgx-h100", 16, 8 * GiB)
    assert b2 == pytest.approx(nic * 15 / 8, rel=1e-3)  # the latency is 0.02 % at 8 GiB
    assert 2 * 46 * 0.9 <= b2 <= 2 * 48  # "about twice" a NIC's 46–48, within 10 %
    assert busbw("dgx-h100", 32, 8 * GiB) == pytest.approx(nic * 31 / 24, rel=1e-3)  # N/(N−1) → 1 as N grows
    # GB200, two racks (2 × 72, one 400 Gb/s NIC a GPU): 89.7 GB/s measured (issue 32); within 5 %
    assert busbw("gb200-nvl72", 144, 8 * GiB) == pytest.approx(89.7, rel=0.05)


def test_small_messages_pay_one_hop_and_the_measured_launch():
    """NCCL has no p2p cost model: tuning.cc's Ring base + one hop (every peer in flight at once), LL 6.6 +
    0.6 µs in a node, 6.6 + 2.7 µs across (NVLINK/NET hwLat), plus the launch an eager run measures above
    them. An eager alltoall_perf on one node of Hopper GPUs (H20) takes 10.3–10.8 µs at 128 B–1 KiB
    (deepseek-ai/DeepEP#303): within 5 %."""
    for S in (128, 256, 512, 1024):
        assert 10.3e-6 * 0.95 <= machine("dgx-h100", 8).time("all-to-all", None, S) <= 10.8e-6 * 1.05
    # across nodes one network hop instead of an NVLink one: 2.1 µs more
    assert machine("dgx-h100", 16).time("all-to-all", None, 8) == pytest.approx(12.6e-6, rel=1e-3)


@pytest.mark.parametrize("key,n", [("dgx-h100", 8), ("dgx-h100", 16), ("dgx-h100", 32), ("gb200-nvl72", 72)])
@pytest.mark.parametrize("S", [64 * KiB, 8 * MiB, 8 * GiB])
def test_the_lectures_all_to_all_on_a_machine_takes_nccls_time(key, n, S):
    """all_to_all(comm, …) with no algorithm runs the machine's choice, timed by NCCL's model: the
    simulation of "direct" (node-aware rounds, every NIC streaming at once) equals nccl_p2p.time."""
    rng = np.random.default_rng(n)
    shards = [rng.standard_normal((n, 3)) for _ in range(n)]
    comm = shd.make_comm(n, key, byte_scale=S / shards[0].nbytes)
    out = all_to_all(comm, shards, split_axis=0, concat_axis=1)
    want = [np.concatenate([np.split(s, n, axis=0)[d] for s in shards], axis=1) for d in range(n)]
    assert all(np.array_equal(o, w) for o, w in zip(out, want))
    topo = machine(key, n)
    assert comm.time == pytest.approx(topo.time("all-to-all", None, S), rel=1e-9)
    assert comm.trace.collectives[-1].algo == "direct"


def test_plain_machines_choose_an_all_to_all_algorithm_too():
    """A machine without NCCL's model answered "ring" / "hier" / "torus" for all-to-all, none of them
    all-to-all algorithms; it now answers the op's own default."""
    from simcore.topology import nodes, switch, torus

    for topo in (switch(4), nodes(2, 4), torus((4, 4)), get_preset("tpu-v5e-16x16").topology(16)):
        assert topo.choose("all-to-all", MiB)[0] == "direct"


@pytest.mark.parametrize("launch", ["graph", "eager"])
@pytest.mark.parametrize("n,S", [(8, 64 * KiB), (16, 8), (16, 8 * MiB)])
def test_all_to_all_keeps_the_launch_floor_of_the_machine(launch, n, S):
    """A machine set to a launch mode ("graph", "eager") times every NCCL call no faster than its
    measured floor (nccl_tuning.LAUNCH_FLOOR); all-to-all too, in its time and in its simulation."""
    from simcore.nccl_tuning import LAUNCH_FLOOR

    topo = get_preset("dgx-h100").topology(n, launch=launch)
    plain = machine("dgx-h100", n).time("all-to-all", None, S)
    assert topo.time("all-to-all", None, S) == pytest.approx(max(plain, LAUNCH_FLOOR[launch]), rel=1e-12)
    shards = [np.full((n, 2), float(d)) for d in range(n)]
    comm = shd.make_comm(n, topo, byte_scale=S / shards[0].nbytes)
    all_to_all(comm, shards, split_axis=0, concat_axis=1)
    assert comm.time == pytest.approx(topo.time("all-to-all", None, S), rel=1e-9)
