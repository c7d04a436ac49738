"""
The arithmetic behind the decode-latency tab, without Qt: its parameters, their checks, the
engine's sweeps at those parameters, and the small number formats the plot's texts use.
app/views/latency/latency_view.py draws what this returns.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from simcore import cost_model
from simcore.comm_sim import LINKS
from simcore.hw_specs import CHIPS
from simcore.cost_model import tp_degrees
from simcore.llm_math import MODELS
from simcore.topology_presets import PRESETS

TERMS = ("t_math", "t_mem", "t_comm", "t_step")
BOUNDS = ("math", "memory", "comm")
FFN_VARIANTS = ("1d", "2d", "gathered")
PLOTS = ("latency", "ffn")
BYTE_CHOICES = (("bf16 / fp16", 2.0), ("fp8 / int8", 1.0), ("int4", 0.5), ("fp32", 4.0))
N_MAX_CHOICES = (1024, 2048, 4096)
MAX_N = 4096
DEFAULTS = {"model": "llama3-70b", "chip": "h100", "link": "", "batch": 32, "ctx": 8192, "w_bytes": 2.0,
            "kv_bytes": 2.0, "act_bytes": 2.0, "algo": "ring", "n_max": 1024,
            "machine": "",  # machine: "" = every chip on one switch over `link`; else a topology_presets key
            "overlap": False}  # True: also the step with each row-parallel matmul's all-reduce overlapped
# Okabe–Ito indices of theme.palette().device_colors: blue, orange, reddish purple
TERM_COLOR = {"t_math": 4, "t_mem": 0, "t_comm": 6}
BOUND_TERM = {"math": "t_math", "memory": "t_mem", "comm": "t_comm"}
FFN_COLOR = {"1d": 4, "2d": 2, "gathered": 5}


# ---------------------------------------------------------------------------------------
# The engine's sweeps at the view's parameters
# ---------------------------------------------------------------------------------------
def check_params(p: dict) -> dict:
    """The parameters with defaults filled in; ValueError with one sentence if one is impossible."""
    unknown = set(p) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown latency parameter(s): {', '.join(sorted(unknown))}")
    p = {**DEFAULTS, **p}
    for key, table in (("model", MODELS), ("chip", CHIPS)):
        if p[key] not in table:
            raise ValueError(f"unknown {key} {p[key]!r}; choose one of {', '.join(table)}")
    if p["machine"]:
        if p["machine"] not in PRESETS:
            raise ValueError(f"unknown machine {p['machine']!r}; choose one of {', '.join(PRESETS)}")
        p["chip"] = PRESETS[p["machine"]].chip  # a machine is built from its own chip
    if p["link"] and p["link"] not in LINKS:
        raise ValueError(f"unknown link {p['link']!r}; choose one of {', '.join(LINKS)}")
    if not (isinstance(p["n_max"], (int, np.integer)) and 2 <= p["n_max"] <= MAX_N):
        raise ValueError(f"the largest n must be a whole number from 2 to {MAX_N}, got {p['n_max']!r}")
    for key in ("batch", "ctx"):
        if not (isinstance(p[key], (int, np.integer)) and not isinstance(p[key], bool)):
            raise ValueError(f"{key} must be a whole number, got {p[key]!r}")
    if not isinstance(p["overlap"], (bool, np.bool_)):
        raise ValueError(f"overlap must be true or false, got {p['overlap']!r}")
    return p


def engine_algo(algo, machine) -> str | None:
    """The engine's algorithm for the panel's menu entry: on a machine the menu's first entry, "ring",
    is the machine's choice (None: its plan decides, what machine_pick says); on one switch the
    lecture's ring. The engine's own "ring" is always the flat ring over all chips."""
    return None if machine and algo == "ring" else algo


def overlap_problem(p: dict) -> str:
    """Why the overlapped curve cannot be drawn for p (one sentence), or "" when it can."""
    if p["algo"] != "ring":
        return "the collective matmul overlaps the ring reduce-scatter: choose the ring all-reduce"
    if p["machine"]:
        return "the overlapped closed form is for chips on one switch: choose one switch as the machine"
    return ""


def machine_pick(p: dict, n: int, nbytes: float):
    """
    (algo, protocol, why, chosen) of one all-reduce of nbytes on n chips of p's machine: the
    machine's own choice when p["algo"] is the menu's default "ring" (engine_algo: None; chosen True:
    the sweep prices that), else the algorithm asked for with the protocol NCCL runs it with — the
    plan's fields (topology.plan); None on one switch, for n = 1, or for an n the machine has no group of.
    """
    from simcore.topology_presets import PRESETS

    preset = PRESETS.get(p["machine"]) if p["machine"] else None
    if preset is None or n < 2 or not preset.is_valid(int(n)):
        return None
    plan = preset.topology(int(n)).plan("all-reduce", float(nbytes), engine_algo(p["algo"], p["machine"]))
    return plan.algo, plan.protocol, plan.why_text, plan.choice


def link_of(p: dict):
    """The comm_sim.LinkSpec the sweep uses: the chosen one, or the chip's own."""
    return LINKS[p["link"] or CHIPS[p["chip"]].link]


def latency_sweep(p: dict) -> dict:
    """
    decode_sweep over every integer n in 1..n_max (arrays in seconds and bytes, see cost_model); on a
    machine (p["machine"]) with topology=: t_comm and t_step are NaN where it has no group of n chips.
    With p["overlap"] (ring, one switch) also t_saved and t_step_overlap (cost_model.decode_sweep_overlap).
    """
    p = check_params(p)
    ns = np.arange(1, p["n_max"] + 1)
    out = cost_model.decode_sweep(MODELS[p["model"]], CHIPS[p["chip"]], link_of(p), ns, p["batch"], p["ctx"],
                                  w_bytes=p["w_bytes"], kv_bytes=p["kv_bytes"], act_bytes=p["act_bytes"],
                                  algo=engine_algo(p["algo"], p["machine"]), topology=p["machine"] or None)
    if p["overlap"] and not overlap_problem(p):  # cost_model.decode_sweep_overlap's t_step_overlap, same sweep
        saved = cost_model.overlap_saving(MODELS[p["model"]], CHIPS[p["chip"]], link_of(p), ns, p["batch"],
                                          p["w_bytes"], p["act_bytes"], p["algo"])
        out = {**out, "t_saved": saved, "t_step_overlap": out["t_step"] - saved}
    return out


def machine_degrees(p: dict, sweep) -> tuple:
    """The n that are tensor-parallel degrees of the model AND groups the machine offers: the engine's
    list (cost_model.tp_degrees, the decode command's too), where the sweep has a time (finite t_step)."""
    ok = np.isfinite(sweep["t_step"])
    machine = PRESETS[p["machine"]] if p["machine"] else None
    return tuple(n for n in tp_degrees(MODELS[p["model"]], p["n_max"], machine) if ok[n - 1])


def node_size(p: dict):
    """Chips per node of p's machine (cost_model.node_boundary), None on one switch or a torus."""
    return cost_model.node_boundary(p["machine"]) if p["machine"] else None


def ffn_bandwidth(p: dict, ns) -> np.ndarray:
    """
    The bandwidth (bytes/s per chip) a tensor-parallel group of n chips gets for the FFN's
    all-gathers and reduce-scatters, for each n in ns: (n−1)/n · S over the time of one
    all-gather of S on the machine at α = 0 (the bandwidth term of simcore's closed forms):
      one switch (no machine)  the link's β;
      nodes of P               n ≤ P: NVLink's β; n > P: NCCL's rings across nodes, one channel
                               per NIC (topo_collectives.t_ring_nodes): P / max((P−1)/β_nvl, 1/β_nic),
                               on DGX H100 the NICs bound it (8 × 50 GB/s = 400 GB/s);
      torus                    bidirectional rings per axis (topo_collectives.t_torus) on the
                               smallest slice of at least n chips.
    NaN beyond the machine's largest group.
    """
    from dataclasses import replace

    from simcore.topo_collectives import t_ring_nodes, t_torus

    ns = np.asarray(ns, dtype=int)
    if not p["machine"]:
        return np.full(len(ns), link_of(p).bw, dtype=float)
    preset = PRESETS[p["machine"]]
    S = 1.0  # any size: at α = 0 the time is S times a constant
    out = np.full(len(ns), np.nan)
    rec = preset.record  # the kind of machine (simcore.kind_record)
    if rec.layout in ("nodes", "switch"):  # one NVLink domain, then (nodes) whole domains over the NICs
        P = rec.per_node or rec.n
        intra = rec.main
        across = np.nan
        if rec.layout == "nodes" and preset.max_devices >= 2 * P:
            two = preset.topology(2 * P).record
            f, i = replace(two.main, alpha=0.0), replace(two.words_link("between"), alpha=0.0)
            n2 = 2 * P
            across = (n2 - 1) / n2 * S / t_ring_nodes("all-gather", P, 2, S, f, i)  # the same for every N
        across = min(across, intra.bw)  # GB200 NVL72: NVLink-bound rings give 72/71 of β; say NVLink's β
        for k, n in enumerate(ns.tolist()):
            if n <= min(P, preset.max_devices):
                out[k] = intra.bw
            elif n <= preset.max_devices:
                out[k] = across
        return out
    sizes = sorted((math.prod(sh), sh) for sh in preset.slices)
    bw_of = {}
    for m, _sh in sizes:
        lay = preset.layout(m)
        bw_of[m] = (m - 1) / m * S / t_torus("all-gather", lay.shape, S, replace(lay.intra, alpha=0.0), lay.wrap)
    for k, n in enumerate(ns.tolist()):
        m = next((m for m, _sh in sizes if m >= n), None)
        if m is not None:
            out[k] = bw_of[m]
    return out


def ffn_sweep(p: dict) -> dict:
    """
    Pope et al.'s FFN communication per layer (seconds) for n = 1..n_max: tokens = batch (one new
    token per sequence), E = d_model, F = d_ff, act_bytes per element, and the bandwidth a group
    of n chips gets on the chosen machine (ffn_bandwidth; the link's on one switch), as "bw".
    """
    p = check_params(p)
    m = MODELS[p["model"]]
    ns = np.arange(1, p["n_max"] + 1)
    bws = ffn_bandwidth(p, ns)
    out = {"n": ns, "bw": bws}
    ok = np.isfinite(bws)  # a size the machine cannot hold: no curve there
    for v in FFN_VARIANTS:  # the whole sweep in one call
        t = cost_model.pope_ffn_comm(v, p["batch"], m.d_model, m.d_ff, ns, np.where(ok, bws, 1.0), p["act_bytes"])
        out[v] = np.where(ok, t[0] if isinstance(t, tuple) else t, np.nan).astype(float)
    return out


@lru_cache(maxsize=64)
def valid_degrees(model: str, n_max: int) -> tuple:
    """The tensor-parallel degrees n <= n_max of MODELS[model] (cost_model.valid_tp_degrees), cached."""
    return tuple(int(n) for n in cost_model.valid_tp_degrees(MODELS[model], n_max))


def fits_hbm(p: dict, sweep) -> np.ndarray:
    """Per n of the sweep: do one chip's weights + KV cache fit in its HBM?"""
    return sweep["mem_per_chip"] <= CHIPS[p["chip"]].hbm_bytes


def matching_refs(p: dict) -> list:
    """[(ref, our seconds at its setting)] of the published points for p's model and chip within n_max."""
    return [(ref, cost_model.reference_estimate(ref, algo=p["algo"])[0]) for ref in cost_model.REFERENCE_POINTS
            if ref.model == p["model"] and ref.chip == p["chip"] and ref.n <= p["n_max"]]


def first_n(ns, mask):
    """The first n where mask holds, or None."""
    idx = np.flatnonzero(mask)
    return int(ns[idx[0]]) if idx.size else None


def ranges_of(bound) -> list[tuple[int, int, str]]:
    """Contiguous runs of equal `bound`: [(first index, last index, bound), ...]."""
    b = np.asarray(bound)
    cuts = np.flatnonzero(b[1:] != b[:-1]) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts - 1, [b.size - 1]])
    return [(int(i), int(j), str(b[i])) for i, j in zip(starts, ends)]


def decades(values) -> tuple[float, float]:
    """A y range in log10 units covering the positive values, on whole decades."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    lo, hi = math.floor(math.log10(v.min())), math.ceil(math.log10(v.max()))
    return float(lo), float(max(hi, lo + 1))


def sentence(e: Exception) -> str:
    s = str(e).strip()
    s = s[:1].upper() + s[1:]
    return s if s.endswith(".") else s + "."


def num(v: float) -> str:
    """Three significant figures, no exponent for the ranges the plot shows."""
    if not math.isfinite(v):
        return "—"
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}" if abs(v) >= 0.001 else f"{v:.2e}"


def decade_label(d: int) -> str:
    v = 10.0 ** d
    return f"{v:g}" if -4 <= d <= 5 else f"1e{d}"


def overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def fmt_capacity(b: float) -> str:
    """HBM as its datasheet states it: 32 GiB (TPU v4) or 80 GB."""
    gib = b / 2**30
    return f"{gib:g} GiB" if gib == int(gib) else f"{b / 1e9:g} GB"


def short_source(ref) -> str:
    src = ref.source.split(",")[0].strip().strip('"')
    return src if len(src) <= 28 else src[:26] + "…"
