"""
nccl_tuning — NCCL's own cost model of a collective and its tuner: for every algorithm ×
protocol (LL, LL128, Simple) a latency and a bandwidth, time = latency + bytes / bandwidth,
and the tuner runs the fastest for the size. Qt-free and light (no numpy).

Source: NVIDIA/nccl src/graph/tuning.cc (commit 5067397c, June 2026) and src/graph/topo.h:
  ncclTunerConstantsDefaults   baseLatencies[algo][proto], hwLatencies[hw][algo][proto],
                               llMaxBws, perChMaxRingLL128Bws, perChMaxTreeLL128Bws,
                               perChMaxTreeBws, perChMaxNVLSTreeBws (lines 148–212; the tables
                               quoted below)
  nvlsEfficiency               Hopper 0.85, Blackwell 0.74 (lines 139–144)
  ncclTopoTuneModel            busBw per algorithm × protocol (line 324: nChannels · bw; NVLS and
                               NVLS_TREE lines 307–323; "Various model refinements", lines 326–337),
                               the conversion bus → algorithm bandwidth (line 379: Ring, NVLS,
                               NVLS_TREE nRanks/nsteps; Tree 0.5), and the latency (lines 384–435):
                               base + per-step hwLat (ring: nInterSteps on the network), Tree:
                               2·((ppn−1)·intraLat + log2i(nNodes)·interLat), NVLS: its hwLat
                               alone, NVLS_TREE: intraLat + 2·log2i(nNodes)·interLat
  search.cc                    the NVLS graph's channels and per-channel bwIntra / bwInter
                               (nvls_graph_one_node, nvls_graph), which NVLS's and NVLS_TREE's
                               bandwidths are built from
  ncclTopoGetAlgoTime          time = lat + nBytes / (1000 · bw)   (µs, GB/s), lines 630–655; Tree
                               all-reduce's bandwidth × treeCorrectionFactor[proto][log2(S/64)]
                               (lines 623–627, 640–642); ring Simple across nodes: lat × 1.4
                               ("Plateau effect of ring", sm ≥ 80)
  topo.h                       SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 GB/s per NVLink

What is modelled here, per GPU machine (P GPUs per NVLink domain, N domains, n = N·P):
  ring    (one domain: NCCL Ring; several: NCCL's channel rings, one per NIC — registry names
          "ring" and "ring-nodes") with LL, LL128 and Simple;
  innet   NCCL NVLS (one NVLink domain, all-reduce, Simple only; NCCL disables NVLS across nodes
          without CollNet, tuning.cc "Disable ... Collnet+NVLS if collnet is not supported"): its
          channels as search.cc builds them (nvls_graph_one_node): on 8 H100 busBw 8 · min(40 ·
          0.85 · 7/8 · 2, 60) = 476 GB/s, NCCL's "~480" (nccl-tests#212);
  tree    NCCL Tree (N > 1, all-reduce, LL, LL128, Simple): a chain inside each node, a double
          binary tree across the nodes (tree_models; the registry's "tree", simcore.tree_allreduce);
  hier    NCCL NVLS_TREE (N > 1, P ≥ 2, all-reduce, Simple only): NVLink SHARP inside each
          domain, a tree across the domains — NCCL's hierarchical all-reduce on Hopper and
          Blackwell, the registry's "hier" (nvls_tree below). NCCL disables it on one node
          (tuning.cc "Disable NVLS Tree on a single node").
Bandwidth of a GPU's NVLink as NCCL's topology search sees it: links × SMxx_NVLINK_BW
(H100/H200 and B200/GB200 have 18 NVLinks each: NVIDIA H100 and GB200 datasheets): 370.8 and
721.8 GB/s. The NIC: its link rate (IB NDR 400 Gb/s = 50 GB/s), one per GPU.
Not modelled: CollNet, PAT, NVLS for all-gather / reduce-scatter (no registry algorithm runs
them; NCCL's model gives them less than the ring on one node: 8 · 40 · 0.85 · (7/8)² = 208 GB/s
against 370.8), Tree on one node (the ring's latency and bandwidth are both better there), the
ring's channel-count caps (perChMaxRingLL128Bws × channels binds below 10 channels on Hopper,
341/36.7; NCCL runs 16 or more on DGX H100), the tree correction factors for NVLS_TREE (they apply
only with compCap ≥ 100 on an x86 host, ncclTopoGetAlgoTime; the Blackwell preset, GB200, has
Grace (Arm) hosts, and Hopper never).
These are NCCL's *model* times, not wall time: they leave out the kernel launch and the host's
synchronisation a real call pays (floors, below).
"""

from __future__ import annotations

import math
from typing import NamedTuple

PROTOCOLS = ("LL", "LL128", "Simple")

# tuning.cc ncclTunerConstantsDefaults.baseLatencies, µs: {LL, LL128, Simple}
BASE_LAT = {"ring": (6.6, 14.0, 8.4), "innet": (0.0, 0.0, 0.0), "hier": (0.0, 0.0, 0.0)}  # hier: NVLS Tree
# tuning.cc ncclTunerConstantsDefaults.hwLatencies, µs per step: [NVLINK|NET][algo]{LL, LL128, Simple}
HW_LAT = {("nvlink", "ring"): (0.6, 1.9, 3.4), ("net", "ring"): (2.7, 4.0, 14.0),
          ("nvlink", "innet"): (0.0, 0.0, 25.0), ("net", "innet"): (0.0, 0.0, 18.0),
          ("nvlink", "hier"): (0.0, 0.0, 25.0), ("net", "hier"): (0.0, 0.0, 20.9)}  # hier: NVLSTree
# tuning.cc llMaxBws, GB/s: one node → the GPU's row (Hopper 141.0, Blackwell 282.0); several
# nodes → the CPU's row (Intel: 39.0 for 2 nodes, 20.4 for more)
LL_MAX_BW_ONE_NODE = {"hopper": 141.0, "blackwell": 282.0}
LL_MAX_BW_NODES = {2: 39.0, 3: 20.4}
NVLS_EFFICIENCY = {"hopper": 0.85, "blackwell": 0.74}  # tuning.cc nvlsEfficiency
NVLINK_BW_PER_LINK = {"hopper": 20.6, "blackwell": 40.1}  # topo.h SM90_/SM100_NVLINK_BW, GB/s
NVLINKS_PER_GPU = 18  # H100 SXM and B200 datasheets: 18 NVLink links per GPU
NET_OVERHEAD_US = 1.0  # tuning.cc getNetOverhead: 1 µs on x86 Intel (×3 for Simple)
RING_SIMPLE_PLATEAU = 1.4  # tuning.cc ncclTopoGetAlgoTime, ring Simple across nodes, sm ≥ 80
# tuning.cc perChMaxNVLSTreeBws, GB/s per channel, {N1, N2, N4}: Hopper {0, 57.7, 45.5}, Blackwell
# {0, 96.0, 80.0}; the column is nNodes ≤ 2 ? nNodes − 1 : 2 ("index2")
PER_CH_MAX_NVLS_TREE_BW = {"hopper": (0.0, 57.7, 45.5), "blackwell": (0.0, 96.0, 80.0)}
# search.cc sm90SpeedArrayInter / sm100SpeedArrayInter, GB/s: the per-channel bandwidths the
# topology search tries, fastest first, when the system has a network (system->inter)
SPEEDS_INTER = {"hopper": (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2,
                           0.24, 0.12),
                "blackwell": (96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                              6.0, 3.0, 2.4, 1.2, 0.24, 0.12)}
NVLS_MAX_ARITY = 32  # device.h NCCL_MAX_NVLS_ARITY: search.cc caps the NVLS graph's channels (heads) at it
GPU_NIC_PCI_BW = 48.0  # GB/s, a PCIe Gen5 x16 GPU–NIC path as NCCL's topology prints it ("PCI[48.0]", nccl#1189)
# search.cc sm90SpeedArrayIntra / sm100SpeedArrayIntra (lines 1057, 1063), GB/s: the per-channel
# bandwidths the search tries, fastest first, on a system without a network (one NVLink domain)
SPEEDS_INTRA = {"hopper": (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),
                "blackwell": (90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0)}
# NCCL Tree (tuning.cc lines 151, 159, 171): baseLatencies[TREE], hwLatencies[NVLINK|NET][TREE], µs
TREE_BASE_LAT = (6.8, 14.0, 8.4)
TREE_HW_LAT = {"nvlink": (0.6, 1.25, 4.0), "net": (5.0, 8.5, 14.0)}
# tuning.cc perChMaxTreeBws / perChMaxTreeLL128Bws (lines 191–204), GB/s per channel, {N1, N2, N4}
PER_CH_MAX_TREE_BW = {"hopper": (38.7, 41.4, 36.0), "blackwell": (70.0, 42.8, 24.0)}
PER_CH_MAX_TREE_LL128_BW = {"hopper": (36.7, 36.7, 29.0), "blackwell": (55.6, 31.67, 20.0)}
# tuning.cc line 336: "if (a == NCCL_ALGO_TREE && comm->maxTreePattern == NCCL_TOPO_PATTERN_TREE) busBw *= .85".
# On H100 nodes the tree graph is NCCL_TOPO_PATTERN_TREE (search.cc line 1216: "Try a simpler tree" on
# sm ≥ 90): NCCL's own log on 3 × 8 H100 (NVIDIA/nccl#1453) prints Tree/LL 25.207382 µs at 64 B and
# 25.331232 µs at 1 KiB, i.e. 25.2 µs + S/(8.67 GB/s × correction): 8.67 = 20.4 · 0.85 · 0.5.
TREE_PATTERN_FACTOR = 0.85
# tuning.cc treeCorrectionFactor[proto][log2i(S >> 6)] (lines 623–627), for log2i in 0..22 (Tree all-reduce)
TREE_CORRECTION = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9))
TREE_MAX_CHANNELS = 32  # search channels: MAXCHANNELS (64) / 2, the most a graph holds before NCCL duplicates them

# -- what a real call pays that NCCL's tuner leaves out -----------------------------------------
# The tuner's latencies price the algorithm, not the launch and the host's synchronisation, so a
# small all-reduce takes longer than the model says. A GPU machine may add the floor measured for
# one launch mode (topology "launch"): the wall time of one NCCL all-reduce of a few KiB on one
# NVLink 4 node, sgl-project/sglang#22734 ("MSCCL++ Integration", single node of 8 H200 — NVLink 4
# and NVSwitch as a DGX H100 — all_reduce of 2 KiB): NCCL under CUDA graphs ("pynccl graph")
# 16.84 µs, NCCL launched eagerly ("torch eager") 19.77 µs; NCCL's model says 15.0 µs (ring LL).
# "" (the default) is NCCL's model alone, as tuning.cc prices it.
LAUNCH_FLOOR = {"": 0.0, "graph": 16.84e-6, "eager": 19.77e-6}

# The lecture's own all-reduce kernels on an NVLink node are timed as the custom all-reduce kernels
# inference engines run (TensorRT-LLM's one-shot / two-shot, which SGLang adapts; vLLM's custom
# all-reduce): their launch and achievable bandwidth, from sgl-project/sglang#2904 ("optimize custom
# allreduce kernel", H100, without CUDA graph, "custom allreduce", TP 2/4/8): 512 B 3.7/4.8/5.9 µs,
# 32 KiB 4.5/4.8/7.8 µs, 512 KiB 12.5/20.2/22.1 µs, 1 MiB 19.9/31.1/33.8 µs. Per TP n, in seconds and
# bytes/s per port:
#   one-shot (direct)   α₁ + (n−1)·S/β₁: α₁ the 512 B time; β₁ = 7 · (32 KiB − 512 B)/(7.8 − 5.9 µs)
#                       = 118.8 GB/s through TP 8's two points (TP 2 and 4 are flat there: noise)
#   two-shot            2α₂ + 2(n−1)/n·S/β₂ through each TP's 512 KiB and 1 MiB points
#   rd                  no engine ships it: log₂n rounds of (α₂ + S/β₂), the two-shot kernel's phase
# They win at small and medium sizes (on 8 H100 one-shot up to ≈ 200 kB, two-shot to ≈ 460 kB) and
# lose to NCCL beyond (β well below NCCL's 370.8 GB/s). GB200 (no public figure): the same latencies,
# β × the NVLink ratio 721.8/370.8 (topo.h SM100_/SM90_NVLINK_BW) — an estimate.
CUSTOM_AR = {2: (3.7e-6, 118.8e9, 2.55e-6, 70.8e9),
             4: (4.8e-6, 118.8e9, 4.65e-6, 72.1e9),
             8: (5.9e-6, 118.8e9, 5.2e-6, 78.4e9)}
CUSTOM_AR_SOURCE = "sgl-project/sglang#2904 (H100, TensorRT-LLM-style custom all-reduce, no CUDA graph)"


def custom_kernel(algo, n, gpu="hopper"):
    """(α s, β bytes/s) with which the lecture's one-switch form of `algo` ("direct", "two-shot", "rd")
    gives the custom all-reduce kernel's time on n GPUs of one NVLink domain (CUSTOM_AR); None for
    any other algorithm."""
    if algo not in ("direct", "two-shot", "rd") or n < 2:
        return None
    key = max(k for k in CUSTOM_AR if k <= n)
    a1, b1, a2, b2 = CUSTOM_AR[key]
    scale = nvlink_bw(gpu) / nvlink_bw("hopper")
    return (a1, b1 * scale) if algo == "direct" else (a2, b2 * scale)



class Model(NamedTuple):
    """NCCL's model of one (algorithm, protocol): latency (s) and algorithm bandwidth (bytes/s)."""

    algo: str
    protocol: str
    latency: float
    algbw: float
    nccl: str = ""  # NCCL's own name of the algorithm: "Ring", "NVLS", "NVLS_TREE"

    def time(self, nbytes) -> float:
        """Seconds for a collective of nbytes (the full array, nccl-tests' size): latency + S/bw,
        NCCL's Tree with its bandwidth × treeCorrectionFactor for the size (ncclTopoGetAlgoTime)."""
        return self.latency + float(nbytes) / (self.algbw * tree_correction(self, nbytes))


class Choice(NamedTuple):
    """What the tuner runs for one size: algorithm, protocol, time (s), and why, in one sentence."""

    algo: str
    protocol: str
    time: float
    why: str


def tree_correction(model, nbytes) -> float:
    """tuning.cc ncclTopoGetAlgoTime: Tree all-reduce's bandwidth × treeCorrectionFactor[proto][log2i(S/64)]
    for 64 B ≤ S < 512 MiB; 1 for every other algorithm and size."""
    if model.nccl != "Tree":
        return 1.0
    log_size = int(nbytes) >> 6
    log_size = log_size.bit_length() - 1  # log2i; −1 below 64 B
    if 0 <= log_size < 23:
        return TREE_CORRECTION[PROTOCOLS.index(model.protocol)][log_size]
    return 1.0


def _steps(op, n):
    return 2 * (n - 1) if op == "all-reduce" else n - 1


def nvlink_bw(gpu) -> float:
    """A GPU's NVLink bandwidth as NCCL's topology search sees it, GB/s (18 links × per link)."""
    return NVLINKS_PER_GPU * NVLINK_BW_PER_LINK[gpu]


def nvls_graph(P, gpu="hopper", nic_bw=50e9):
    """
    (nChannels, bwIntra, bwInter in GB/s) of NCCL's NVLS graph on a multi-node machine of P GPUs
    per NVLink domain, each with its own NIC — what ncclTopoCompute (search.cc) finds, as
    worked out from its rules (the search itself is not run here):
      channels  one head per NIC that has a local GPU, at most NCCL_MAX_NVLS_ARITY (32) and the
                GPU count: min(32, P) (search.cc ncclTopoSearchRecNet, "NVLS search only tries
                to find NIC:GPU combinations to compute the heads"; ncclTopoCompareGraphs:
                "the more the better")
      bwIntra   every channel takes bwIntra from every GPU's NVLink, twice from its head's
                (ncclTopoSearchTryNvls: mult 2 when d == g), so the fastest speed s of the
                search's inter speed array with (channels + 1)·s ≤ the GPU's NVLink bandwidth
      bwInter   pass 2 raises bwInter one speed at a time while it is below 2·bwIntra
                (search.cc "tmpGraph.bwInter < tmpGraph.bwIntra * 2") and the NIC (and its PCIe
                Gen5 path, 48 GB/s) still carry it (ncclTopoSearchRecNet: "net->net.bw < bw")
    DGX H100 (P = 8, 370.8 GB/s NVLink, 50 GB/s NICs): 8 channels, 9 × 40 = 360 ≤ 370.8, bwInter
    40 → 42 → 45 → 48: (8, 40, 48). NVIDIA/nccl#1197 (NCCL 2.19.4, two H100 nodes) prints
    "Pattern 5, crossNic 0, nChannels 8, bw 40.000000/60.000000": the same channels and
    bwIntra; its bwInter 60 came from that release's speed array (today's stops at 48).
    """
    speeds = SPEEDS_INTER[gpu]
    ch = min(NVLS_MAX_ARITY, P)
    B = nvlink_bw(gpu)
    intra = next((v for v in speeds if (ch + 1) * v <= B), speeds[-1])
    cap = min(nic_bw / 1e9, GPU_NIC_PCI_BW)
    inter = intra
    for v in reversed(speeds):
        if v > inter and inter < 2 * intra and v <= cap:
            inter = v
    return ch, intra, inter


def nvls_tree(P, N, gpu="hopper", nic_bw=50e9):
    """
    NCCL's NVLS_TREE all-reduce on N > 1 NVLink domains of P GPUs (tuning.cc ncclTopoTuneModel),
    a Model named "hier" (Simple), or None where NCCL has none (P < 2: fewer than 2 channels,
    "NVLS/NVLStree needs at least 2 channels"). With (ch, bwIntra, bwInter) = nvls_graph(P):
      bus bandwidth  ch · min(bwIntra · η · (ch−1)/ch · 2,        η: nvlsEfficiency; ×2 "AllReduce
                              bwInter · (N ≤ 2 ? 2 : 1),           pipelines two operations"; ×2
                              perChMaxNVLSTreeBw[gen][index2])     "Handle 2 node case of NVLSTree"
      algorithm bw   bus · n / (2(n−1))                            ("ratio nRanks / nsteps")
      latency        baseLat 0 + hwLat[NVLINK][NVLS_TREE] 25 µs + 2·log2i(N)·hwLat[NET][NVLS_TREE]
                     20.9 µs (the net's own latencyInter is 0 for IB: NCCL's topology XML prints
                     latency="0.000000", nccl#1453; Simple adds it twice, still 0)
    DGX H100 2 × 8: min(59.5, 96, 57.7) · 8 = 461.6 GB/s bus, 66.8 µs; 4 × 8 and more: 45.5 · 8 =
    364 GB/s, 25 + 2·log2i(N)·20.9 µs.
    """
    if P < 2 or N < 2:
        return None
    n = P * N
    ch, bw_intra, bw_inter = nvls_graph(P, gpu, nic_bw)
    if ch < 2:
        return None
    intra = bw_intra * NVLS_EFFICIENCY[gpu] * (ch - 1) / ch * 2.0
    inter = bw_inter * (2 if N <= 2 else 1)
    index2 = N - 1 if N <= 2 else 2
    bus = ch * min(intra, inter, PER_CH_MAX_NVLS_TREE_BW[gpu][index2])
    lat = (BASE_LAT["hier"][2] + HW_LAT[("nvlink", "hier")][2]
           + 2 * int(math.log2(N)) * HW_LAT[("net", "hier")][2])
    return Model("hier", "Simple", lat * 1e-6, bus * n / _steps("all-reduce", n) * 1e9, "NVLS_TREE")


def nvls_graph_one_node(P, gpu="hopper"):
    """
    (nChannels, bwIntra, bwInter in GB/s) of NCCL's NVLS graph on one NVLink domain of P GPUs
    (no network: system->inter == 0), as search.cc's ncclTopoCompute finds it:
      channels  as many as GPUs, at most NCCL_MAX_NVLS_ARITY (32): "graph->maxChannels =
                std::min(NCCL_MAX_NVLS_ARITY, system->nodes[GPU].count)" and, on one node, "Force
                intra-node NVLS algorithm to pull evenly from all GPUs": minChannels = maxChannels
                (search.cc lines 1126–1138)
      bwIntra   the fastest speed s of sm90/sm100SpeedArrayIntra that fits: every channel takes s
                from every GPU's NVLink and its head's twice (ncclTopoSearchTryNvls, mult 2 when
                d == g, lines 410–443), so (channels + 1)·s ≤ the GPU's NVLink bandwidth
      bwInter   pass 2 raises it one speed at a time while it is below 2·bwIntra (line 1274:
                "tmpGraph.bwInter < tmpGraph.bwIntra * 2"); on one node nothing carries it
                (ncclTopoFollowPath times GPU↔NVSwitch paths by bwIntra, line 145), so it climbs
                to 2·bwIntra or the array's top
    8 H100 (370.8 GB/s): 8 channels, 9 × 40 ≤ 370.8 < 9 × 50, bwInter 40 → 50 → 60: (8, 40, 60).
    """
    speeds = SPEEDS_INTRA[gpu]
    ch = min(NVLS_MAX_ARITY, P)
    B = nvlink_bw(gpu)
    i = next((k for k, v in enumerate(speeds) if (ch + 1) * v <= B), len(speeds) - 1)
    intra = inter = speeds[i]
    while i > 0 and inter < 2 * intra:
        i -= 1
        inter = speeds[i]
    return ch, intra, inter


def nvls_one_node(P, gpu="hopper"):
    """
    NCCL's NVLS all-reduce on one NVLink domain of P GPUs, a Model named "innet" (Simple), or None
    (fewer than 2 channels). tuning.cc lines 307–324, 379, 424–426 with nvls_graph_one_node's graph:
      bus bandwidth  ch · min(bwIntra · η · (ch−1)/ch · 2, bwInter)     η: nvlsEfficiency; ×2:
                                                                       "AllReduce pipelines two operations"
      algorithm bw   bus · n / (2(n−1));   latency hwLat[NVLINK][NVLS][Simple] = 25 µs alone
    The NVLS rows NCCL's tuner prints (latency/algbw, NCCL_DEBUG_SUBSYS=TUNING) on H100, as these rules
    give them: 2 GPUs 25.0/102.0, 4 GPUs 25.0/160.0, 6 GPUs 25.0/216.0, 8 GPUs 25.0/272.0 (issue 32 reports
    they match NCCL's printed rows at 2, 4 and 6 GPUs; at 8, busBw 476 against nccl-tests#212's "~480GB/s
    (algbw ~275GB/s)"); on 4 GPUs NVLS (160) is below the ring (370.8 · 4/6 = 247), so NCCL runs Ring there.
    """
    ch, bw_intra, bw_inter = nvls_graph_one_node(P, gpu)
    if ch < 2:
        return None
    per_channel = min(bw_intra * NVLS_EFFICIENCY[gpu] * (ch - 1) / ch * 2.0, bw_inter)
    n = P
    return Model("innet", "Simple", HW_LAT[("nvlink", "innet")][2] * 1e-6,
                 ch * per_channel * n / _steps("all-reduce", n) * 1e9, "NVLS")


def tree_graph(P, gpu="hopper", nic_bw=50e9):
    """
    (nChannels, bw GB/s per channel) of NCCL's tree graph on nodes of P GPUs with one NIC each, as
    worked out from search.cc's rules: one channel per NIC (at most TREE_MAX_CHANNELS), the
    fastest speed of the inter speed array the NIC (and its PCIe Gen5 path, 48 GB/s) carries and
    every GPU's NVLink carries for all channels (channels · s ≤ NVLink). DGX H100: 8 × 45 GB/s.
    """
    ch = min(TREE_MAX_CHANNELS, P)
    cap = min(nic_bw / 1e9, GPU_NIC_PCI_BW)
    B = nvlink_bw(gpu)
    bw = next((v for v in SPEEDS_INTER[gpu] if v <= cap and ch * v <= B), SPEEDS_INTER[gpu][-1])
    return ch, bw


def tree_models(P, N, gpu="hopper", nic_bw=50e9):
    """
    NCCL's Tree all-reduce on N > 1 nodes of P GPUs — a chain inside each node, a double binary
    tree across the nodes — one Model per protocol (registry name "tree"), tuning.cc:
      busBw    nChannels · bw (tree_graph)                                          (line 324)
               all-reduce: min(busBw · 0.92, nChannels · perChMaxTreeBw)            (line 331)
               LL:     min(busBw / 3.8, llMaxBw)                                      (line 332)
               LL128:  min(busBw · 120/128, nChannels · perChMaxTreeLL128Bw)         (line 334)
               × 0.85 (the tree graph's pattern is TREE on H100: TREE_PATTERN_FACTOR) (line 336)
      algbw    busBw · 0.5                                                           (line 380)
      latency  baseLat[TREE] + 2·((P−1)·hwLat[NVLINK][TREE] + log2i(N)·hwLat[NET][TREE])  (line 416)
               (the net's own latencyInter is 0 for IB: nccl#1453's topology prints 0.000000)
      time     latency + S / (algbw · treeCorrectionFactor[proto][log2i(S/64)])   (Model.time)
    2 × 8 H100 (Intel host: llMaxBw 39.0): LL 25.2 µs + S/16.6 GB/s, LL128 48.5 µs + S/124.8 GB/s,
    Simple 92.4 µs + S/140.8 GB/s; 3 × 8 H100 LL: 25.2 µs + S/8.67 GB/s — NCCL's own log in
    NVIDIA/nccl#1453 prints 25.207 µs at 64 B, 25.331 at 1 KiB (and so 25.9 at 4 KiB).
    """
    if N < 2:
        return []
    ch, bw = tree_graph(P, gpu, nic_bw)
    index2 = N - 1 if N <= 2 else 2
    bus = ch * bw
    bus = min(bus * 0.92, ch * PER_CH_MAX_TREE_BW[gpu][index2])
    ll_max = LL_MAX_BW_NODES[min(N, 3)]
    out = []
    for i, proto in enumerate(PROTOCOLS):
        if proto == "LL":
            b = min(bus / 3.8, ll_max)
        elif proto == "LL128":
            b = min(bus * 120.0 / 128.0, ch * PER_CH_MAX_TREE_LL128_BW[gpu][index2])
        else:
            b = bus
        b *= TREE_PATTERN_FACTOR
        lat = TREE_BASE_LAT[i] + 2 * ((P - 1) * TREE_HW_LAT["nvlink"][i]
                                      + int(math.log2(N)) * TREE_HW_LAT["net"][i])
        out.append(Model("tree", proto, lat * 1e-6, b * 0.5 * 1e9, "Tree"))
    return out


def models(op, P, N, gpu="hopper", nic_bw=50e9):
    """
    Every (algorithm, protocol) NCCL's model offers for `op` on N NVLink domains of P GPUs
    each (one NIC of nic_bw bytes/s per GPU): a list of Model. gpu: "hopper" or "blackwell".
    Algorithm names are the registry's: ring (N == 1), ring-nodes (N > 1), innet (N == 1: NCCL's
    NVLS, nvls_one_node), tree (NCCL's Tree: all-reduce, N > 1; tree_models), hier (NCCL's
    NVLS_TREE: all-reduce, N > 1, P ≥ 2; nvls_tree).
    """
    if gpu not in NVLINK_BW_PER_LINK:
        raise ValueError(f"unknown GPU generation {gpu!r}; choose one of {', '.join(NVLINK_BW_PER_LINK)}")
    n = P * N
    if n < 2:
        return []
    steps = _steps(op, n)
    ratio = n / steps  # tuning.cc "Convert bus BW to algorithm BW": nRanks / nsteps (ring, NVLS)
    B = nvlink_bw(gpu)
    nic = nic_bw / 1e9
    out = []
    # Ring: one domain runs on NVLink; across domains NCCL's rings (one channel per NIC) are
    # paced by the slower of the GPU's NVLink and its domain's NICs (P per domain).
    bus = B if N == 1 else min(B, P * nic)
    ll_max = LL_MAX_BW_ONE_NODE[gpu] if N == 1 else LL_MAX_BW_NODES[min(N, 3)]
    n_inter = 0 if N == 1 else (2 * (N - 1) if op == "all-reduce" else N - 1)
    for i, proto in enumerate(PROTOCOLS):
        if proto == "LL":
            b = min(ll_max, bus * 0.5)  # "if (a == RING && p == LL) busBw = min(llMaxBw, busBw * .5)"
        elif proto == "LL128":
            b = bus * 0.92  # "busBw * (0.92 /*120.0/128.0*/)"
        else:
            b = bus
        intra = HW_LAT[("nvlink", "ring")][i]
        if N > 1:  # "Inter-node rings still have to launch nsteps * net overhead"
            intra = max(intra, NET_OVERHEAD_US * (3 if proto == "Simple" else 1))
        lat = BASE_LAT["ring"][i] + (steps - n_inter) * intra + n_inter * HW_LAT[("net", "ring")][i]
        if N > 1 and proto == "Simple" and op == "all-reduce":
            lat *= RING_SIMPLE_PLATEAU
        out.append(Model("ring" if N == 1 else "ring-nodes", proto, lat * 1e-6, b * ratio * 1e9, "Ring"))
    if N == 1 and P > 1 and op == "all-reduce":
        nvls = nvls_one_node(P, gpu)  # NVLS: its channels as search.cc builds them
        if nvls is not None:
            out.append(nvls)
    if N > 1 and op == "all-reduce":
        out.extend(tree_models(P, N, gpu, nic_bw))
        tree = nvls_tree(P, N, gpu, nic_bw)
        if tree is not None:
            out.append(tree)
    return out


def tune(op, P, N, nbytes, gpu="hopper", nic_bw=50e9, algos=None, modelled=None) -> Choice:
    """
    NCCL's tuner: the (algorithm, protocol) of models() with the least time for nbytes
    (ncclTopoGetAlgoTime over every enabled pair, the smallest wins). algos: restrict to these
    registry names (e.g. the one the student asked for); ValueError if none of them is modelled.
    modelled: models() already evaluated for (op, P, N, gpu, nic_bw) (a machine keeps them).
    """
    ms = models(op, P, N, gpu, nic_bw) if modelled is None else modelled
    cands = [m for m in ms if algos is None or m.algo in algos]
    if not cands:
        raise ValueError(f"NCCL's model has no {op} algorithm among {', '.join(algos or ())} on "
                         f"{N} × {P} GPUs")
    best = min(cands, key=lambda m: m.time(nbytes))
    others = sorted(cands, key=lambda m: m.time(nbytes))[1:2]
    why = (f"{label(best)} {best.protocol} is NCCL's fastest at {size_text(nbytes)}: "
           f"{best.latency * 1e6:.1f} µs latency + S/{best.algbw / 1e9:.0f} GB/s")
    if others:
        o = others[0]
        why += f" (next: {label(o)} {o.protocol}, {o.time(nbytes) * 1e6:.1f} µs)"
    return Choice(best.algo, best.protocol, best.time(nbytes), why)


def label(model):
    """The registry's name of a Model's algorithm, with NCCL's where the two differ in kind:
    "hier (NCCL's NVLS Tree)"; else the registry's name ("ring-nodes", "innet")."""
    return f"{model.algo} (NCCL's NVLS Tree)" if model.nccl == "NVLS_TREE" else model.algo


def size_text(nbytes):
    """A message size as NCCL's reasons write it: "1 MiB", "64 KiB", "8 B"."""
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes:g} B"


def sim_links(op, model, P, N, gpu="hopper", nic_bw=50e9, nbytes=None):
    """
    The (base s, α s, β intra bytes/s, β inter bytes/s) with which the simulation's port
    model gives exactly NCCL's time for `model` (a Model of models()):
      ring on one domain   base + 2(n−1)(α + S/(nβ))       → base = baseLat, α = hwLat, β = busBw
      ring-nodes           base + K·max(α + (P−1)b/β_f, α + b/β_i), b = S/(Pn)
                           → α = the steps' mean latency, β_f = (P−1)/P·busBw, β_i = busBw/P
      innet (NVLS)         2α + (n+1)S/(nβ)                 → α = lat/2, β = busBw·(n+1)/(2(n−1))
      hier (NVLS Tree)     topo_closed_forms.t_hier_pipelined, which with α = 0 is base + 2a + g
                           on one chunk and base + max(g + 2a/C, 2a) on C ≥ 2, with the full
                           buffer's a = (P−1)S/(Pβ_f) one ring phase in the node and g =
                           2(N−1)S/(nβ_i) the all-reduce across nodes → base = lat, α = 0 and the
                           network as long as one node phase (g = a): one chunk (S ≤ 2 MiB,
                           hier_chunks) takes 3a, any C ≥ 2 takes 2a (the node's ports bind, so
                           every chunk count gives NCCL's time and the pipeline runs 2):
                           β_f = k(P−1)/P·algbw, β_i = 2k(N−1)/n·algbw, k = 3 (S ≤ 2 MiB) or 2;
                           they depend on S (nbytes)
    (the latency of every form scaled as NCCL scales it, e.g. ring Simple's plateau ×1.4).
    """
    n = P * N
    K = _steps(op, n)
    bus = model.algbw * K / n  # back from algorithm to bus bandwidth
    if model.algo == "hier":
        from .topo_closed_forms import hier_chunks
        if nbytes is None:
            raise ValueError("hier's links depend on the size: pass nbytes")
        k = 3.0 if hier_chunks(nbytes) == 1 else 2.0
        return model.latency, 0.0, k * (P - 1) / P * model.algbw, 2 * k * (N - 1) / n * model.algbw
    base = BASE_LAT["ring"][PROTOCOLS.index(model.protocol)] * 1e-6
    if model.algo == "innet":
        return 0.0, model.latency / 2, bus * (n + 1) / (2 * (n - 1)), bus * (n + 1) / (2 * (n - 1))
    if N > 1 and model.protocol == "Simple" and op == "all-reduce":
        base *= RING_SIMPLE_PLATEAU
    alpha = (model.latency - base) / K
    if model.algo == "ring":
        return base, alpha, bus, bus
    return base, alpha, (P - 1) / P * bus if P > 1 else bus, bus / P
