"""
NCCL's tuning model (simcore.nccl_tuning): the constants of NVIDIA/nccl src/graph/tuning.cc, the
tuner's choice by size, the GPU presets timed by it, their simulation following it, and the
public nccl-tests figures it is compared with.
"""

import numpy as np
import pytest

from simcore.comm_sim import Comm
from simcore.nccl_tuning import models, sim_links, tune
from simcore.sharding import all_reduce, make_comm
from simcore.topology_presets import PRESETS

IB = 50e9  # one 400 Gb/s NIC per GPU (DGX H100)


def _model(op, P, N, algo, proto, gpu="hopper"):
    return next(m for m in models(op, P, N, gpu, IB) if (m.algo, m.protocol) == (algo, proto))


def test_a_decode_sized_all_reduce_on_8_h100_is_ring_ll():
    # 16 KB: NCCL runs Ring LL (tuning.cc baseLatencies Ring LL 6.6 µs, hwLatencies NVLINK Ring LL 0.6 µs
    # per step, 14 steps), not LL128's 14 µs + 1.9 µs a step (40.7 µs before this model)
    c = tune("all-reduce", 8, 1, 16e3)
    assert (c.algo, c.protocol) == ("ring", "LL")
    assert c.time == pytest.approx(6.6e-6 + 14 * 0.6e-6 + 16e3 * 14 / 8 / 141e9, rel=1e-12)
    assert c.time < 16e-6 < 40.7e-6
    assert "ring LL" in c.why and "next:" in c.why


def test_protocols_trade_latency_for_bandwidth():
    ll, ll128, simple = (_model("all-reduce", 8, 1, "ring", p) for p in ("LL", "LL128", "Simple"))
    assert ll.latency < ll128.latency < simple.latency  # 15.0, 40.6, 56.0 µs (14 steps at 0.6, 1.9, 3.4 µs)
    assert ll.algbw < ll128.algbw < simple.algbw  # LL halves the wire (flag per 8 bytes), LL128 keeps 120/128
    # bus bandwidths (nccl-tests busbw = algbw · 2(n−1)/n): LL capped at llMaxBw 141, LL128 0.92 × 370.8
    assert ll.algbw * 14 / 8 == pytest.approx(141e9)
    assert ll128.algbw * 14 / 8 == pytest.approx(0.92 * 18 * 20.6e9)
    picks = [tune("all-reduce", 8, 1, s) for s in (8, 2**16, 2**20, 2**26, 2**33)]
    assert [(c.algo, c.protocol) for c in picks] == [("ring", "LL"), ("ring", "LL"), ("ring", "LL"),
                                                     ("innet", "Simple"), ("innet", "Simple")]


def test_nvls_has_its_efficiency_and_latency_floor_and_wins_only_for_large_messages():
    nvls = _model("all-reduce", 8, 1, "innet", "Simple")
    assert nvls.latency == pytest.approx(25e-6)  # hwLatencies NVLINK NVLS Simple: no faster than 25 µs
    # search.cc's NVLS graph on 8 H100: 8 channels of bwIntra 40, bwInter 60 GB/s; per channel
    # min(40 · 0.85 · 7/8 · 2, 60) = 59.5 (nvlsEfficiency Hopper 0.85, all-reduce pipelines two operations)
    assert nvls.algbw * 14 / 8 == pytest.approx(8 * 59.5e9)
    assert tune("all-reduce", 8, 1, 2**18).algo == "ring"  # the old model made NVLS win from 256 KiB
    assert tune("all-reduce", 8, 1, 2**26).algo == "innet"
    assert all(m.algo != "innet" for m in models("all-reduce", 8, 2, "hopper", IB))  # no NVLS across nodes
    assert all(m.algo != "innet" for m in models("all-gather", 8, 1, "hopper", IB))


@pytest.mark.parametrize("key,n,measured,tolerance", [
    # nccl-tests#212 (sjeaugey): 8 H100 with NCCL_ALGO=RING reach busBw ≈ 370 GB/s. NCCL's model: 18 NVLinks ×
    # 20.6 GB/s (topo.h SM90_NVLINK_BW) = 370.8 — the same figure; 0.2 % off.
    ("ring", 8, 370e9, 0.01),
    # nccl-tests#212 (sjeaugey): NVLS peaks at busBw ≈ 480 GB/s on 8 H100; nccl-tests#272: ≈ 475 GB/s on 8
    # H200 (same NVLink 4); NVIDIA/nccl#1455: 480 at 8 GPUs. NCCL's model, with its NVLS channels built as
    # search.cc builds them: 8 · 59.5 = 476 GB/s, 0.8 % below; tolerance 2 %.
    ("innet", 8, 480e9, 0.02),
])
def test_large_message_bus_bandwidth_against_nccl_tests(key, n, measured, tolerance):
    S = 8 * 2**30
    t = PRESETS["dgx-h100"].topology(n).time("all-reduce", key, S)
    bus = S / t * 2 * (n - 1) / n
    assert abs(bus - measured) / measured < tolerance
    if key == "innet":
        assert bus < measured  # the model is below the measurement, never above


def test_across_nodes_channel_rings_pay_the_network_only_on_their_node_crossings():
    # 2 nodes × 8: 30 steps, 2 of them through a NIC (tuning.cc nInterSteps = 2(nNodes − 1))
    ll = _model("all-reduce", 8, 2, "ring-nodes", "LL")
    assert ll.latency == pytest.approx(6.6e-6 + 28 * 1.0e-6 + 2 * 2.7e-6)  # NVLink steps at the 1 µs net overhead
    simple = _model("all-reduce", 8, 2, "ring-nodes", "Simple")
    assert simple.latency == pytest.approx(1.4 * (8.4e-6 + 28 * 3.4e-6 + 2 * 14e-6))  # the ring's plateau ×1.4
    # all-gather across nodes: every NIC carries a channel, bus bandwidth min(NVLink 370.8, 8 NICs × 50) GB/s
    ag = _model("all-gather", 8, 2, "ring-nodes", "Simple")
    assert ag.algbw * 15 / 16 == pytest.approx(370.8e9)
    c = tune("all-gather", 8, 2, 2**30)
    assert c.algo == "ring-nodes" and 300e9 < 2**30 / c.time * 15 / 16 < 371e9  # not one NIC's 50 GB/s


@pytest.mark.parametrize("op,algo,proto,P,N", [("all-reduce", "ring", "LL", 8, 1), ("all-reduce", "ring", "Simple", 8, 1),
                                              ("all-reduce", "innet", "Simple", 8, 1),
                                              ("all-reduce", "ring-nodes", "LL", 8, 2),
                                              ("all-reduce", "ring-nodes", "Simple", 4, 3),
                                              ("all-gather", "ring-nodes", "LL128", 8, 2)])
def test_sim_links_make_the_closed_form_equal_nccls_time(op, algo, proto, P, N):
    from simcore.algorithms import t_formula
    from simcore.topo_closed_forms import t_ring_nodes
    from simcore.links import LinkSpec

    m = _model(op, P, N, algo, proto)
    base, a, bf, bi = sim_links(op, m, P, N, "hopper", IB)
    for S in (8.0, 2.0**20, 2.0**31):
        if N == 1:
            t = base + t_formula(algo, P, S, a, bf, op=op)
        else:
            t = t_ring_nodes(op, P, N, S, LinkSpec("f", a, bf), LinkSpec("i", a, bi), base=base)
        assert t == pytest.approx(m.time(S), rel=1e-12)


@pytest.mark.parametrize("n,S", [(8, 16e3), (8, 2.0**26), (16, 16e3), (16, 2.0**24)])
def test_the_simulated_all_reduce_on_a_gpu_preset_takes_nccls_time(n, S):
    topo = PRESETS["dgx-h100"].topology(n)
    L = n * 8
    comm = Comm(topo, byte_scale=S / (L * 8))
    arrays = [np.arange(L, dtype=float) + d for d in range(n)]
    out = all_reduce(comm, arrays)
    np.testing.assert_allclose(out[3], np.sum(arrays, axis=0))
    algo, proto, _why = topo.choose("all-reduce", S)
    assert comm.trace.collectives[-1].algo == algo and proto in ("LL", "LL128", "Simple")
    assert comm.time == pytest.approx(topo.time("all-reduce", None, S), rel=1e-9)
    assert comm.topology is topo  # the protocol's links were used for that call only


def test_the_protocol_is_told_with_its_reason():
    topo = make_comm(8, "dgx-h100").topology
    proto, why = topo.protocol("all-reduce", "ring", 16e3)
    assert proto == "LL" and "LL" in why and "µs" in why
    assert topo.protocol("all-reduce", "direct", 16e3)[0] == ""  # the custom all-reduce is not NCCL's
    assert "TensorRT-LLM / vLLM" in __import__("simcore.algorithms").algorithms.ALGORITHMS["all-reduce"]["direct"].description
    plain = make_comm(8).topology
    assert plain.choose("all-reduce", 16e3)[:2] == ("ring", "") and plain.protocol("all-reduce", "ring", 1)[0] == ""
