"""
nccl_tuning — NCCL's own cost model of a collective and its tuner: for every algorithm ×
protocol (LL, LL128, Simple) a latency and a bandwidth, time = latency + bytes / bandwidth,
and the tuner runs the fastest for the size. Qt-free and light (no numpy).

Source: NVIDIA/nccl src/graph/tuning.cc (commit 5067397c, June 2026) and src/graph/topo.h:
  ncclTunerConstantsDefaults   baseLatencies[algo][proto], hwLatencies[hw][algo][proto],
                               llMaxBws, perChMaxRingLL128Bws (the tables quoted below)
  nvlsEfficiency               Hopper 0.85, Blackwell 0.74
  ncclTopoTuneModel            busBw per algorithm × protocol ("Various model refinements"),
                               the conversion bus → algorithm bandwidth (ratio nRanks/nsteps),
                               and the latency: base + per-step hwLat (ring: nInterSteps on
                               the network), NVLS: its hwLat alone
  ncclTopoGetAlgoTime          time = lat + nBytes / (1000 · bw)   (µs, GB/s); ring Simple
                               across nodes: lat × 1.4 ("Plateau effect of ring", sm ≥ 80)
  topo.h                       SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 GB/s per NVLink

What is modelled here, per GPU machine (P GPUs per NVLink domain, N domains, n = N·P):
  ring    (one domain: NCCL Ring; several: NCCL's channel rings, one per NIC — registry names
          "ring" and "ring-nodes") with LL, LL128 and Simple;
  innet   NCCL NVLS (one NVLink domain, Simple only; NCCL disables NVLS across nodes without
          CollNet, tuning.cc "Disable ... Collnet+NVLS if collnet is not supported");
  (hier, the hierarchical all-reduce pipelined by chunks in one call, is not in this model:
  offered by name and timed by the lecture's α–β form, topo_closed_forms.t_hier_pipelined;
  NCCL's own hierarchical algorithms, Tree and NVLS-Tree, are not modelled.)
Bandwidth of a GPU's NVLink as NCCL's topology search sees it: links × SMxx_NVLINK_BW
(H100/H200 and B200/GB200 have 18 NVLinks each: NVIDIA H100 and GB200 datasheets): 370.8 and
721.8 GB/s. The NIC: its link rate (IB NDR 400 Gb/s = 50 GB/s), one per GPU.
Not modelled: Tree, CollNet, PAT, the channel-count caps (perChMaxRingLL128Bws × channels
binds below 10 channels on Hopper, 341/36.7; NCCL runs 16 or more on DGX H100), the tree
correction factors.
"""

from __future__ import annotations

from typing import NamedTuple

PROTOCOLS = ("LL", "LL128", "Simple")

# tuning.cc ncclTunerConstantsDefaults.baseLatencies, µs: {LL, LL128, Simple}
BASE_LAT = {"ring": (6.6, 14.0, 8.4), "innet": (0.0, 0.0, 0.0)}
# tuning.cc ncclTunerConstantsDefaults.hwLatencies, µs per step: [NVLINK|NET][algo]{LL, LL128, Simple}
HW_LAT = {("nvlink", "ring"): (0.6, 1.9, 3.4), ("net", "ring"): (2.7, 4.0, 14.0),
          ("nvlink", "innet"): (0.0, 0.0, 25.0), ("net", "innet"): (0.0, 0.0, 18.0)}
# tuning.cc llMaxBws, GB/s: one node → the GPU's row (Hopper 141.0, Blackwell 282.0); several
# nodes → the CPU's row (Intel: 39.0 for 2 nodes, 20.4 for more)
LL_MAX_BW_ONE_NODE = {"hopper": 141.0, "blackwell": 282.0}
LL_MAX_BW_NODES = {2: 39.0, 3: 20.4}
NVLS_EFFICIENCY = {"hopper": 0.85, "blackwell": 0.74}  # tuning.cc nvlsEfficiency
NVLINK_BW_PER_LINK = {"hopper": 20.6, "blackwell": 40.1}  # topo.h SM90_/SM100_NVLINK_BW, GB/s
NVLINKS_PER_GPU = 18  # H100 SXM and B200 datasheets: 18 NVLink links per GPU
NET_OVERHEAD_US = 1.0  # tuning.cc getNetOverhead: 1 µs on x86 Intel (×3 for Simple)
RING_SIMPLE_PLATEAU = 1.4  # tuning.cc ncclTopoGetAlgoTime, ring Simple across nodes, sm ≥ 80


class Model(NamedTuple):
    """NCCL's model of one (algorithm, protocol): latency (s) and algorithm bandwidth (bytes/s)."""

    algo: str
    protocol: str
    latency: float
    algbw: float

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


def models(op, P, N, gpu="hopper", nic_bw=50e9):
    """
    Every (algorithm, protocol) NCCL's model offers for `op` on N NVLink domains of P GPUs
    each (one NIC of nic_bw bytes/s per GPU): a list of Model. gpu: "hopper" or "blackwell".
    Algorithm names are the registry's: ring (N == 1), ring-nodes (N > 1), innet (N == 1).
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
        out.append(Model("ring" if N == 1 else "ring-nodes", proto, lat * 1e-6, b * ratio * 1e9))
    if N == 1 and P > 1 and op == "all-reduce":
        # NVLS: bwIntra · efficiency, ×2 (all-reduce pipelines two operations), capped by the
        # per-channel bwInter, which on one node is the channel's NVLink bandwidth:
        # min(2·η·B, B) = B for η > 0.5. Latency: hwLat[NVLINK][NVLS][Simple] alone (no base).
        b = min(2 * NVLS_EFFICIENCY[gpu] * B, B)
        out.append(Model("innet", "Simple", HW_LAT[("nvlink", "innet")][2] * 1e-6, b * ratio * 1e9))
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
    why = (f"{best.algo} {best.protocol} is NCCL's fastest at {size_text(nbytes)}: "
           f"{best.latency * 1e6:.1f} µs latency + S/{best.algbw / 1e9:.0f} GB/s")
    if others:
        o = others[0]
        why += f" (next: {o.algo} {o.protocol}, {o.time(nbytes) * 1e6:.1f} µs)"
    return Choice(best.algo, best.protocol, best.time(nbytes), why)


def size_text(nbytes):
    """A message size as NCCL's reasons write it: "1 MiB", "64 KiB", "8 B"."""
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes:g} B"


def sim_links(op, model, P, N, gpu="hopper", nic_bw=50e9):
    """
    The (base s, α s, β intra bytes/s, β inter bytes/s) with which the simulation's port
    model gives exactly NCCL's time for `model` (a Model of models()):
      ring on one domain   base + 2(n−1)(α + S/(nβ))       → base = baseLat, α = hwLat, β = busBw
      ring-nodes           base + K·max(α + (P−1)b/β_f, α + b/β_i), b = S/(Pn)
                           → α = the steps' mean latency, β_f = (P−1)/P·busBw, β_i = busBw/P
      innet (NVLS)         2α + (n+1)S/(nβ)                 → α = lat/2, β = busBw·(n+1)/(2(n−1))
    (the latency of every form scaled as NCCL scales it, e.g. ring Simple's plateau ×1.4).
    """
    n = P * N
    K = _steps(op, n)
    bus = model.algbw * K / n  # back from algorithm to bus bandwidth
    base = BASE_LAT["ring"][PROTOCOLS.index(model.protocol)] * 1e-6
    if model.algo == "innet":
        return 0.0, model.latency / 2, bus * (n + 1) / (2 * (n - 1)), bus * (n + 1) / (2 * (n - 1))
    if N > 1 and model.protocol == "Simple" and op == "all-reduce":
        base *= RING_SIMPLE_PLATEAU
    alpha = (model.latency - base) / K
    if model.algo == "ring":
        return base, alpha, bus, bus
    return base, alpha, (P - 1) / P * bus if P > 1 else bus, bus / P
