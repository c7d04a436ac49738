"""
nccl_tuning — NCCL's own cost model of a collective and its tuner: for every algorithm ×
protocol (LL, LL128, Simple) a latency and a bandwidth, time = latency + bytes / bandwidth,
and the tuner runs the fastest for the size. Qt-free and light (no numpy).

Source: NVIDIA/nccl src/graph/tuning.cc (commit 5067397c, June 2026) and src/graph/topo.h:
  ncclTunerConstantsDefaults   baseLatencies[algo][proto], hwLatencies[hw][algo][proto],
                               llMaxBws, perChMaxRingLL128Bws, perChMaxNVLSTreeBws (lines
                               144–210; the tables quoted below)
  nvlsEfficiency               Hopper 0.85, Blackwell 0.74
  ncclTopoTuneModel            busBw per algorithm × protocol ("Various model refinements",
                               lines 306–374), the conversion bus → algorithm bandwidth (ratio
                               nRanks/nsteps, line 379), and the latency (lines 384–434): base +
                               per-step hwLat (ring: nInterSteps on the network), NVLS: its hwLat
                               alone, NVLS_TREE: intraLat + 2·log2i(nNodes)·interLat
  search.cc, device.h          the NVLS graph's channels and per-channel bwIntra / bwInter
                               (nvls_graph), which NVLS_TREE's bandwidth is built from
  ncclTopoGetAlgoTime          time = lat + nBytes / (1000 · bw)   (µs, GB/s); ring Simple
                               across nodes: lat × 1.4 ("Plateau effect of ring", sm ≥ 80)
  topo.h                       SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 GB/s per NVLink

What is modelled here, per GPU machine (P GPUs per NVLink domain, N domains, n = N·P):
  ring    (one domain: NCCL Ring; several: NCCL's channel rings, one per NIC — registry names
          "ring" and "ring-nodes") with LL, LL128 and Simple;
  innet   NCCL NVLS (one NVLink domain, Simple only; NCCL disables NVLS across nodes without
          CollNet, tuning.cc "Disable ... Collnet+NVLS if collnet is not supported");
  hier    NCCL NVLS_TREE (N > 1, P ≥ 2, all-reduce, Simple only): NVLink SHARP inside each
          domain, a tree across the domains — NCCL's hierarchical all-reduce on Hopper and
          Blackwell, the registry's "hier" (nvls_tree below). NCCL disables it on one node
          (tuning.cc "Disable NVLS Tree on a single node").
Bandwidth of a GPU's NVLink as NCCL's topology search sees it: links × SMxx_NVLINK_BW
(H100/H200 and B200/GB200 have 18 NVLinks each: NVIDIA H100 and GB200 datasheets): 370.8 and
721.8 GB/s. The NIC: its link rate (IB NDR 400 Gb/s = 50 GB/s), one per GPU.
Not modelled: Tree, CollNet, PAT, the ring's channel-count caps (perChMaxRingLL128Bws ×
channels binds below 10 channels on Hopper, 341/36.7; NCCL runs 16 or more on DGX H100), the
tree correction factors (for NVLS_TREE they apply only with compCap ≥ 100 on an x86 host,
ncclTopoGetAlgoTime; the Blackwell preset, GB200, has Grace (Arm) hosts, and Hopper never).
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


class Model(NamedTuple):
    """NCCL's model of one (algorithm, protocol): latency (s) and algorithm bandwidth (bytes/s)."""

    algo: str
    protocol: str
    latency: float
    algbw: float
    nccl: str = ""  # NCCL's own name of the algorithm: "Ring", "NVLS", "NVLS_TREE"

    def time(self, nbytes) -> float:
        """Seconds for a collective of nbytes (the full array, nccl-tests' size)."""
        return self.latency + float(nbytes) / self.algbw


class Choice(NamedTuple):
    """What the tuner runs for one size: algorithm, protocol, time (s), and why, in one sentence."""

    algo: str
    protocol: str
    time: float
    why: str


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


def models(op, P, N, gpu="hopper", nic_bw=50e9):
    """
    Every (algorithm, protocol) NCCL's model offers for `op` on N NVLink domains of P GPUs
    each (one NIC of nic_bw bytes/s per GPU): a list of Model. gpu: "hopper" or "blackwell".
    Algorithm names are the registry's: ring (N == 1), ring-nodes (N > 1), innet (N == 1), hier
    (NCCL's NVLS_TREE: all-reduce, N > 1, P ≥ 2; nvls_tree).
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
        # NVLS: bwIntra · efficiency, ×2 (all-reduce pipelines two operations), capped by the
        # per-channel bwInter, which on one node is the channel's NVLink bandwidth:
        # min(2·η·B, B) = B for η > 0.5. Latency: hwLat[NVLINK][NVLS][Simple] alone (no base).
        b = min(2 * NVLS_EFFICIENCY[gpu] * B, B)
        out.append(Model("innet", "Simple", HW_LAT[("nvlink", "innet")][2] * 1e-6, b * ratio * 1e9, "NVLS"))
    if N > 1 and op == "all-reduce":
        tree = nvls_tree(P, N, gpu, nic_bw)
        if tree is not None:
            out.append(tree)
    return out


def tune(op, P, N, nbytes, gpu="hopper", nic_bw=50e9, algos=None) -> Choice:
    """
    NCCL's tuner: the (algorithm, protocol) of models() with the least time for nbytes
    (ncclTopoGetAlgoTime over every enabled pair, the smallest wins). algos: restrict to these
    registry names (e.g. the one the student asked for); ValueError if none of them is modelled.
    """
    cands = [m for m in models(op, P, N, gpu, nic_bw) if algos is None or m.algo in algos]
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
