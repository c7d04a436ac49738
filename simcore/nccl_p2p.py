"""
nccl_p2p — NCCL's all-to-all as NCCL runs it, timed: its latency, its bandwidth and the protocol
it picks. Qt-free and light (no numpy); topology._Machine asks it for all-to-all on a GPU machine
(its choose, protocol, time and timed_as), as it asks nccl_tuning for the other collectives.

How NCCL runs it. ncclAllToAll — and nccl-tests' alltoall_perf — is one group of ncclSend and
ncclRecv, one pair per peer (NVIDIA/nccl, commit 5067397c, June 2026; src/enqueue.cc):
  rounds     peer d+k and d−k in round k (ncclP2pChannelBaseForRound), up to
             NCCL_MAX_DEV_WORK_P2P_PER_BATCH = 8 peers per channel at once (src/include/device.h),
             each peer striped over p2pnChannelsPerPeer of the p2pnChannels channels
             (src/graph/paths.cc): every block is in flight together — the registry's "direct"
  protocol   LL when a peer's bytes are at most nChannels × NCCL_P2P_LL_THRESHOLD (16384 bytes); a
             peer's first channel takes up to a 64 KiB part, so LL exactly when S/n <= 16 KiB,
             else Simple (enqueue.cc, "Select protocol (LL vs SIMPLE) used based on payload per
             channel"); LL carries 8 data bytes in every 16 (enqueue.cc: "chunkDataSize /= 2")
  PXN        across nodes a block for a GPU on another node first crosses NVLink to the local GPU
             on the destination's rail, whose NIC sends it (paths.cc ncclPxnDisable, default on;
             enqueue.cc "pxnUsed"): every NIC rail carries traffic, and the NVLink port also
             carries the relayed blocks

NCCL has no cost model for p2p (its tuner, src/graph/tuning.cc, times collectives), so:
  time(S)    latency + S · max(c_nvl / B_nvl, c_net / B_net)           S: one GPU's buffer
             c_nvl = (P−1)/n + (n−P)(P−1)/(nP)   the share of S through a GPU's NVLink port:
                                                 its own blocks for node mates, and the blocks
                                                 its node mates relay to other rails (PXN)
             c_net = (n−P)/n                     the share through its NIC: blocks leaving the node
  B_nvl      P2P_NVLINK_EFFICIENCY × NCCL's NVLink bandwidth (nccl_tuning.nvlink_bw: 18 links ×
             SMxx_NVLINK_BW, 370.8 GB/s Hopper, 721.8 Blackwell)
  B_net      NIC_EFFICIENCY × the NIC's line rate
  latency    tuning.cc's constants for the same hardware, as the ring's first step: baseLat[Ring]
             [proto] + hwLat[NVLINK or NET][Ring][proto] (LL 6.6 + 0.6 µs in a node, 6.6 + 2.7 across;
             Simple 8.4 + 3.4, 8.4 + 14.0) — the blocks are in flight together, so one hop, paid
             once — plus P2P_LAUNCH, what an eager alltoall_perf run measures above them (NCCL's
             constants leave out the launch and the synchronisation): 10.5 µs for small messages on
             one NVSwitch node of Hopper GPUs where the constants give 7.2. The number follows the
             measurement, as NCCL has no p2p model to follow
so busbw (nccl-tests: S/t · (n−1)/n) is B_nvl in one node — the scaling book's B(N−1)/(W·N²) with
B the whole array n·S, W = B_nvl — and across M nodes, NIC-bound, B_net·(n−1)/(n−P): the book's
B(M−1)/(M²·W_node), W_node = P·B_net, and NCCL's maintainers' "on 2 nodes … BusBW = 2x network
bandwidth per GPU … N/(N−1)x" (NVIDIA/nccl-tests#130, sjeaugey).

Not modelled: the waves when a GPU has more peers than its channels run at once (p2pnChannels /
p2pnChannelsPerPeer × 8), LL's llMaxBw cap, the network's own congestion at scale.
"""

from __future__ import annotations

from .nccl_tuning import BASE_LAT, HW_LAT, PROTOCOLS, Model, nvlink_bw, size_text

P2P_LL_THRESHOLD = 16384  # bytes per channel of one peer: enqueue.cc NCCL_PARAM(P2pLLThreshold, …, 16384)
# All-to-all's bus bandwidth on NVLink as a share of NCCL's NVLink figure: 4 H100 (NVLink 4, NVSwitch),
# alltoall_perf with NCCL 2.30, Simple, 500 MiB: busbw 334.9–338.0 GB/s (NVIDIA/nccl#2169) over
# 370.8 = 0.908. NCCL's maintainer puts NCCL's effective H100 NVLink bandwidth at ~370 GB/s, "which
# you can observe as BusBw when running non-allreduce operations" (NVIDIA/nccl-tests#212, sjeaugey).
P2P_NVLINK_EFFICIENCY = 336.5 / 370.8
# What one 400 Gb/s NIC carries through NCCL: "For NDR @ 400Gbps you should see 46-48GB/s per NIC"
# (NVIDIA/nccl-tests#290, AddyLaddy); the middle, 47 GB/s, of the 50 GB/s line rate.
NIC_EFFICIENCY = 47.0 / 50.0
# An eager small all-to-all on one NVSwitch node of Hopper GPUs: alltoall_perf on H20 (NVLink 4, as
# H100), 128 B–1 KiB: 10.3–10.8 µs (deepseek-ai/DeepEP#303); NCCL's constants give LL 6.6 + 0.6 µs
# for the same call, so 10.5 − 7.2 = 3.3 µs is the launch and synchronisation they leave out.
P2P_MEASURED_FLOOR_US = 10.5
P2P_LAUNCH = (P2P_MEASURED_FLOOR_US - BASE_LAT["ring"][0] - HW_LAT[("nvlink", "ring")][0]) * 1e-6
NCCL_NAME = "AllToAll (grouped send/recv)"


def protocol_for(n, nbytes) -> str:
    """NCCL's p2p protocol for an all-to-all of nbytes per GPU on n ranks: "LL" when a peer's block
    S/n fits one channel's NCCL_P2P_LL_THRESHOLD, else "Simple"."""
    return "LL" if float(nbytes) / max(int(n), 1) <= P2P_LL_THRESHOLD else "Simple"


def shares(P, N):
    """(c_nvl, c_net): the shares of one GPU's buffer S through its NVLink port and its NIC (PXN)."""
    n = P * N
    return (P - 1) / n + (n - P) * (P - 1) / (n * P), (n - P) / n


def bandwidths(gpu="hopper", nic_bw=50e9):
    """(B_nvl, B_net) in bytes/s: what NCCL's p2p achieves through a GPU's NVLink and through its NIC."""
    return P2P_NVLINK_EFFICIENCY * nvlink_bw(gpu) * 1e9, NIC_EFFICIENCY * float(nic_bw)


def models(P, N, gpu="hopper", nic_bw=50e9):
    """
    NCCL's all-to-all on N NVLink domains of P GPUs (one NIC of nic_bw bytes/s per GPU): a Model
    per protocol (LL, Simple), algorithm "direct" (the registry's: every block at once). Its
    algbw is S over the bandwidth term of time(S); which protocol NCCL runs is protocol_for.
    """
    n = P * N
    if n < 2:
        return []
    c_nvl, c_net = shares(P, N)
    b_nvl, b_net = bandwidths(gpu, nic_bw)
    out = []
    for proto in ("LL", "Simple"):
        i = PROTOCOLS.index(proto)
        hop = HW_LAT[("nvlink", "ring")][i] if N == 1 else HW_LAT[("net", "ring")][i]
        rate = 0.5 if proto == "LL" else 1.0  # LL: 8 data bytes a 16-byte line
        per_byte = max(c_nvl / (rate * b_nvl), c_net / (rate * b_net) if c_net else 0.0)
        lat = (BASE_LAT["ring"][i] + hop) * 1e-6 + P2P_LAUNCH
        out.append(Model("direct", proto, lat, 1.0 / per_byte, NCCL_NAME))
    return out


def model_at(P, N, nbytes, gpu="hopper", nic_bw=50e9) -> Model:
    """The Model of the protocol NCCL runs for nbytes per GPU (protocol_for)."""
    proto = protocol_for(P * N, nbytes)
    return next(m for m in models(P, N, gpu, nic_bw) if m.protocol == proto)


def time(P, N, nbytes, gpu="hopper", nic_bw=50e9) -> float:
    """Seconds of one all-to-all of nbytes per GPU (nccl-tests' alltoall size) on N × P GPUs."""
    return model_at(P, N, nbytes, gpu, nic_bw).time(float(nbytes))


def busbw(P, N, nbytes, gpu="hopper", nic_bw=50e9) -> float:
    """nccl-tests' all-to-all bus bandwidth of that time: S/t · (n−1)/n (src/alltoall.cu), bytes/s."""
    n = P * N
    return float(nbytes) / time(P, N, nbytes, gpu, nic_bw) * (n - 1) / n


def why(P, N, nbytes, gpu="hopper", nic_bw=50e9) -> str:
    """One sentence: what NCCL runs and what bounds it."""
    m = model_at(P, N, nbytes, gpu, nic_bw)
    n = P * N
    c_nvl, c_net = shares(P, N)
    b_nvl, b_net = bandwidths(gpu, nic_bw)
    bound = ("every NIC rail (PXN), the blocks that leave the node" if c_net / b_net >= c_nvl / b_nvl
             else "NVLink")
    return (f"NCCL's all-to-all is grouped send/recv to all {n - 1} peers at once, {m.protocol} at "
            f"{size_text(nbytes)} ({size_text(float(nbytes) / n)} a peer): {m.latency * 1e6:.1f} µs latency + "
            f"S/{m.algbw / 1e9:.0f} GB/s, bound by {bound}")


def sim_links(P, N, nbytes, gpu="hopper", nic_bw=50e9):
    """
    (base s, α s, β_f bytes/s, β_i bytes/s) with which the simulation of "direct" gives NCCL's time:
    on one switch α + (n−1)·b/β (b = S/n) → α = latency, β = algbw·(n−1)/n; across nodes a GPU's NVLink
    port streams its P−1 node mates' blocks and its NIC the n−P others, at once → β_i = algbw·(n−P)/n
    (the NICs bind: they take exactly S/algbw) and β_f such that the P−1 blocks take c_nvl·S/B_nvl,
    the NVLink port's time with the PXN relays.
    """
    m = model_at(P, N, nbytes, gpu, nic_bw)
    n = P * N
    if N == 1:
        b = m.algbw * (n - 1) / n
        return 0.0, m.latency, b, b
    c_nvl, _ = shares(P, N)
    rate = 0.5 if m.protocol == "LL" else 1.0
    b_nvl = rate * bandwidths(gpu, nic_bw)[0]
    # NVLink: its own P−1 blocks in the time the port streams c_nvl·S (relays included), never
    # slower than the whole call's pace
    beta_f = (P - 1) / n / max(c_nvl / b_nvl, 1e-300) if P > 1 else m.algbw
    return 0.0, m.latency, min(beta_f, 1e30), m.algbw * (n - P) / n
