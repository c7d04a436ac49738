"""
calibrate — fit the α–β model's two numbers to measured collective times.

Every collective the simulator knows has a closed form that is linear in α and 1/β:

    t = a·α + b·S/β          S: the full array's bytes (nccl-tests' "size")

where a (how many message latencies lie on the critical path) and b (how many S's worth of
bytes cross the busiest port) depend only on the algorithm and n. Ring all-reduce:
a = 2(n−1), b = 2(n−1)/n. So measured (S, t) points give α and β by linear least squares,
and several operations and algorithms can share one fit: one link, many collectives.

How the fit weighs the points (see `fit`): α from every point by relative error, β from the
bandwidth plateau only — so the ramp between latency and bandwidth (1–64 MiB on NVLink, where
NCCL switches protocols and its pipeline is not yet full) cannot drag β below the large-message
bus bandwidth, as a single 1/t²-weighted fit did (9–19 % below on 8-GPU H100 tables).

The reader for nccl-tests' output (and fitting a whole log, one node and several) is
simcore.nccl_log; a run over several nodes gives the inter-node link (`fit_inter`, here).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass

import numpy as np

from .algorithms import ALGORITHMS, OPS, algbw, busbw, op_record, t_formula
from .links import LinkSpec
from .topology import Nodes
from .topology_presets import HardwarePreset

MEASURED = "measured on this machine"
RING_LABEL = "ring collectives"  # Fit.label of a link fitted to ring measurements


# ---------------------------------------------------------------------------------------
# The model's structure: t = a·α + b·S/β
# ---------------------------------------------------------------------------------------
def _power_of_two(n):
    return n >= 1 and n & (n - 1) == 0


def coefficients(op, algo, n):
    """
    (a, b) such that one `op` with algorithm `algo` on n ranks takes a·α + b·S/β seconds.

    For the simulator's algorithms (comm_sim.ALGORITHMS[op]) they are read off
    comm_sim.t_formula (one place states each cost). Three algorithms exist only in Open MPI
    and are costed here:
      all-reduce "linear"  (basic linear: reduce to rank 0, then broadcast from it): rank 0's
                           ports carry n−1 full buffers in and then n−1 out: 2(n−1)·(α + S/β)
      all-gather "rd"      (recursive doubling, n a power of two): log2(n) rounds that swap
                           S/n, 2S/n, 4S/n … bytes: log2(n)·α + (n−1)/n·S/β
      reduce-scatter "rd"  (recursive halving, n a power of two): the mirror image, same cost
    """
    if op not in OPS:
        raise ValueError(f"unknown collective {op!r}; choose one of {', '.join(OPS)}")
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if n == 1:
        return 0.0, 0.0
    simulated = algo in ALGORITHMS[op]
    if simulated:
        a = t_formula(algo, n, 0.0, 1.0, 1.0, op=op)  # S = 0: only the latencies remain
        b = t_formula(algo, n, 1.0, 0.0, 1.0, op=op)  # α = 0, S = β: only the bytes remain
        return float(a), float(b)
    if op == "all-reduce" and algo == "linear":
        return 2.0 * (n - 1), 2.0 * (n - 1)
    if op in ("all-gather", "reduce-scatter") and algo == "rd":
        if not _power_of_two(n):
            raise ValueError(f"{op} with recursive {'doubling' if op == 'all-gather' else 'halving'} "
                             f"needs a power-of-two n, got {n}")
        return float(math.log2(n)), (n - 1) / n
    raise ValueError(f"no cost model for {op} with algorithm {algo!r}")


def port_bw(op, algo, n, nbytes, seconds):
    """
    The bandwidth one port really carried: b·S/t, with b the algorithm's bytes per port in
    units of S (its closed form's coefficient). Never above the link's β, unlike busbw.
    """
    _, b = coefficients(op, algo, n)
    return b * nbytes / seconds


def busbw_summary(op, algo, n, nbytes, seconds, link):
    """
    The busbw lines of `trace --summary`. busbw is nccl-tests' own (src/all_reduce.cu,
    AllReduceGetBw: algbw × 2(n−1)/n whatever algorithm NCCL ran), so it compares with their
    tables; beside it the port bandwidth the algorithm used, and why in-network reduction
    shows a busbw above the link: each byte crosses a port about once instead of 2(n−1)/n
    times, and busbw still counts 2(n−1)/n.
    """
    bus = busbw(op, n, nbytes, seconds)
    f = op_record(op).bus_factor(n)
    factor = {2 * (n - 1) / n: "2(n-1)/n", (n - 1) / n: "(n-1)/n"}.get(f, f"{f:g}")
    lines = [f"  busbw         {bus / 1e9:.2f} GB/s  (nccl-tests: algbw x {factor}, whatever the algorithm)"]
    try:
        port = port_bw(op, algo, n, nbytes, seconds)
    except ValueError:
        return "\n".join(lines)
    lines.append(f"  port bw       {port / 1e9:.2f} GB/s  (bytes through the busiest port / time; at most the "
                 f"link's {link.bw / 1e9:.0f} GB/s)")
    if bus > link.bw * (1 + 1e-9):
        lines.append(f"  busbw is above the link's bandwidth: {algo} moves fewer bytes per port than the ring's "
                     f"2(n-1)/n x S that busbw assumes (NVLS on 8 H100 with 450 GB/s NVLink reports ~480 GB/s "
                     f"busbw: NVIDIA/nccl-tests#212)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# Points and the fit
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Point:
    """
    One measured collective: `op` with `algo` on n ranks moved S = nbytes in `seconds`.
    nodes: how many nodes the n ranks spanned (n // nodes per node); 1 for one switch.
    """

    op: str
    algo: str
    n: int
    nbytes: float
    seconds: float
    nodes: int = 1

    @property
    def algbw(self):
        """nccl-tests' algorithm bandwidth S/t (bytes/s)."""
        return algbw(self.nbytes, self.seconds)

    @property
    def busbw(self):
        """nccl-tests' bus bandwidth: algbw × 2(n−1)/n (all-reduce) or × (n−1)/n (bytes/s)."""
        return busbw(self.op, self.n, self.nbytes, self.seconds)

    def to_dict(self):
        d = {"op": self.op, "algo": self.algo, "n": self.n, "nbytes": self.nbytes, "seconds": self.seconds}
        if self.nodes != 1:
            d["nodes"] = self.nodes
        return d


# A fit "explains the data badly" when its worst point is off by more than BAD_FIT. Why 25 %:
# nccl-tests' run-to-run scatter is a few per cent, and the α–β line's known shortfall where
# NCCL ramps through its protocols (LL → LL128 → Simple, pipeline filling) is 10–20 % (see
# `fit`); a point off by more than a quarter means the model is not what the machine ran
# (NCCL chose Tree or NVLS, the node count is wrong, or the run was disturbed), and its
# predictions would mis-rank algorithms whose times differ by that much.
BAD_FIT = 0.25

PLATEAU = 0.9  # a point is on the bandwidth plateau when its algbw is within 10 % of its run's best


@dataclass(frozen=True)
class Fit:
    """
    α (s per message) and β (bytes/s per port and direction) fitted to `n_points` points
    (a multi-node fit: the inter-node link's, with inter_algo and the known intra link set).
    r2: R² of the fit in relative terms (weights 1/t²); worst_rel: the largest
    |model − measured| / measured over the points; n_plateau: how many points fixed β;
    min_bytes: the size from which points counted as plateau (None: chosen by PLATEAU).
    """

    alpha: float
    bw: float
    r2: float
    worst_rel: float
    n_points: int
    label: str = ""
    n_plateau: int = 0
    min_bytes: float | None = None
    inter_algo: str = ""  # a multi-node fit: the registry algorithm fitted ("ring-nodes", "hier"), else ""
    intra: LinkSpec | None = None  # a multi-node fit: the intra-node link it took as known

    def predict(self, op, algo, n, nbytes, nodes=1):
        """
        The model's time (seconds) for one collective of S = nbytes (scalar or array). One
        switch: a·α + b·S/β. A multi-node fit (nodes >= 2): the known intra-node part plus
        a_i·α + b_i·S/β with the coefficients the fit used (nodes_coefficients) — the one
        computation behind the fit's worst error, the CLI's rows and the dialog's lines.
        """
        S = np.asarray(nbytes, dtype=float)
        if nodes > 1 and self.inter_algo == "hier":  # pipelined: the registry's closed form itself
            return _hier_time(n // nodes, nodes, S, self.intra, self.alpha, self.bw)
        if nodes > 1 and self.inter_algo:
            (af, bf), (ai, bi) = _nodes_coefficients(op, self.inter_algo, n // nodes, nodes)
            known = af * self.intra.alpha + bf * S / self.intra.bw if self.intra is not None else 0.0 * S
            return known + ai * self.alpha + bi * S / self.bw
        a, b = coefficients(op, algo, n)
        return a * self.alpha + b * S / self.bw

    def predict_point(self, p):
        """The model's time (seconds) for measured Point p."""
        return float(self.predict(p.op, p.algo, p.n, p.nbytes, p.nodes))

    def errors(self, points):
        """(model − measured) / measured for every point: what the fit's worst_rel is the max of."""
        return np.array([(self.predict_point(p) - p.seconds) / p.seconds for p in points], dtype=float)

    @property
    def bad(self):
        """True when the fit explains its points badly: worst error above BAD_FIT."""
        return self.worst_rel > BAD_FIT

    def link(self, name=MEASURED) -> LinkSpec:
        """The fitted numbers as a comm_sim.LinkSpec the simulator can use."""
        return LinkSpec(name, float(self.alpha), float(self.bw))

    def to_dict(self):
        return {"label": self.label, "alpha": self.alpha, "bw": self.bw, "r2": self.r2,
                "worst_rel": self.worst_rel, "n_points": self.n_points, "n_plateau": self.n_plateau,
                "min_bytes": self.min_bytes, **({"inter_algo": self.inter_algo} if self.inter_algo else {})}


def _check_seconds(p):
    if not (p.seconds > 0 and math.isfinite(p.seconds)):
        raise ValueError(f"a measured time must be a positive number of seconds, got {p.seconds!r}")


def _design(points):
    """Rows (a, b·S), measured times t and the points used (n = 1 moves nothing: left out)."""
    rows, t, used = [], [], []
    for p in points:
        a, b = coefficients(p.op, p.algo, p.n)
        if a == 0 and b == 0:
            continue  # n = 1 moves nothing: it says nothing about the link
        _check_seconds(p)
        rows.append((a, b * p.nbytes))
        t.append(p.seconds)
        used.append(p)
    return np.array(rows, dtype=float).reshape(-1, 2), np.array(t, dtype=float), used


def plateau(points, min_bytes=None):
    """
    Which points fix the bandwidth (a bool array). With min_bytes: S >= min_bytes. Otherwise,
    per run (same op, algo, n, nodes): walking down from the largest size, every size whose
    algbw S/t is still within 10 % (PLATEAU) of the run's reference — the median algbw of its
    three largest sizes. Chosen by size, not by speed, so noise cannot cherry-pick fast points.
    """
    S = np.array([p.nbytes for p in points], dtype=float)
    if min_bytes is not None:
        mask = S >= float(min_bytes)
        if len(points) and not mask.any():
            raise ValueError(f"no measurement of {_human(min_bytes)} or more to fit the bandwidth on "
                             f"(the largest is {_human(S.max())}): lower --min-bytes")
        return mask
    mask = np.zeros(len(points), dtype=bool)
    runs = {}
    for i, p in enumerate(points):
        runs.setdefault((p.op, p.algo, p.n, p.nodes), []).append(i)
    for idx in runs.values():
        idx.sort(key=lambda i: -S[i])
        speed = [points[i].nbytes / points[i].seconds for i in idx]
        ref = float(np.median(speed[:3]))
        for i, v in zip(idx, speed):
            if v < PLATEAU * ref:
                break
            mask[i] = True
    return mask


def _human(b):
    b = float(b)
    for unit, k in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= k:
            return f"{b / k:g} {unit}"
    return f"{b:g} B"


def _solve(A, t, plat, weight_t=None):
    """
    α and x = 1/β from rows A = (a, b·S) and times t: α by relative least squares over every
    point, x by relative least squares over the plateau points only. Two normal equations:

        Σ_all  w·a  ·(a·α + B·x − t) = 0
        Σ_plat w·B  ·(a·α + B·x − t) = 0          w = 1/t²,  B = b·S

    With α < 0 (the data is all bandwidth) α is set to 0 and x solved alone. weight_t: the
    times the residuals are relative to, when t is only part of them (default t).
    """
    w = 1.0 / (t if weight_t is None else weight_t) ** 2
    a, B = A[:, 0], A[:, 1]
    wp = w * plat
    M = np.array([[w @ (a * a), w @ (a * B)], [wp @ (B * a), wp @ (B * B)]])
    r = np.array([w @ (a * t), wp @ (B * t)])
    try:
        alpha, x = np.linalg.solve(M, r)
    except np.linalg.LinAlgError:
        (alpha, x), *_ = np.linalg.lstsq(M, r, rcond=None)
    if alpha < 0 or not math.isfinite(alpha):
        alpha = 0.0
        x = (wp @ (B * t)) / (wp @ (B * B)) if wp @ (B * B) > 0 else float("nan")
    return float(alpha), float(x)


def _quality(model, t):
    """(R² with weights 1/t², worst relative error)."""
    rel = (model - t) / t
    w = 1.0 / t**2
    mean = (w @ t) / w.sum()
    ss_tot = w @ (t - mean) ** 2
    ss_res = w @ (model - t) ** 2
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)
    return float(r2), float(np.max(np.abs(rel)))


def fit(points, label="", min_bytes=None) -> Fit:
    """
    Least-squares α and β from measured points (any mix of operations, algorithms and n).

    β comes from the bandwidth plateau: the points with S >= min_bytes, or by default those
    whose algbw is within 10 % of the best of their run. α comes from every point. Both
    minimise relative error (each residual divided by its own time), so an 8-byte message
    weighs as much as an 8 GiB one — but only the plateau decides the bandwidth. Why: between
    the latency-bound and bandwidth-bound ends real libraries are slower than the α–β line
    (NCCL switches protocol LL → LL128 → Simple and needs several chunks in flight per
    channel), and with one relative fit those 1–64 MiB points outnumber the plateau and pull β
    9–19 % below the bus bandwidth nccl-tests reports for large messages. Fitted this way, a
    ring's β equals the plateau busbw (to the plateau's own scatter).

    Raises ValueError when the points cannot determine a bandwidth (e.g. all sizes equal).
    """
    A, t, used = _design(points)
    if len(t) < 2:
        raise ValueError(f"need at least 2 measurements on n >= 2 ranks to fit α and β, got {len(t)}")
    if np.linalg.matrix_rank(A / t[:, None]) < 2:
        raise ValueError("the points cannot separate α from β: measure at least two different message sizes")
    plat = plateau(used, min_bytes)
    alpha, x = _solve(A, t, plat)
    if not (x > 0 and math.isfinite(x)) and min_bytes is None and not plat.all():
        plat = np.ones(len(t), dtype=bool)  # a short, noisy sweep: let every point speak for β
        alpha, x = _solve(A, t, plat)
    if not (x > 0 and math.isfinite(x)):
        raise ValueError("the times do not grow with message size, so no bandwidth can be fitted: "
                         "measure larger messages")
    r2, worst = _quality(A @ np.array([alpha, x]), t)
    return Fit(alpha, float(1.0 / x), r2, worst, len(t), label, int(plat.sum()),
               None if min_bytes is None else float(min_bytes))


def fit_each(points, min_bytes=None):
    """One Fit per (op, algo) present in `points`: {(op, algo): Fit}. Skips groups that cannot be fitted."""
    groups = {}
    for p in points:
        groups.setdefault((p.op, p.algo), []).append(p)
    out = {}
    for key, pts in groups.items():
        try:
            out[key] = fit(pts, label=f"{key[0]} {key[1]}", min_bytes=min_bytes)
        except ValueError:
            continue
    return out


def fit_link(points, name=MEASURED, min_bytes=None):
    """
    The link for the simulator: α and β fitted to the ring measurements (the simulator's
    default algorithm, and the one nccl-tests' busbw assumes) — to every point when there are
    no ring ones. Returns (LinkSpec, Fit).
    """
    ring = [p for p in points if p.algo == "ring"]
    chosen = ring or list(points)
    f = fit(chosen, label=RING_LABEL if ring else "all measurements", min_bytes=min_bytes)
    return f.link(name), f


# ---------------------------------------------------------------------------------------
# Link files
# ---------------------------------------------------------------------------------------
LINK_SCHEMA = "shard-lab/link"


def link_to_dict(link: LinkSpec, fit_: Fit | None = None, source=""):
    d = {"schema": LINK_SCHEMA, "version": 1, "name": link.name, "alpha": link.alpha, "bw": link.bw}
    if fit_ is not None:
        d["fit"] = fit_.to_dict()
    if source:
        d["source"] = source
    return d


def link_from_dict(d) -> LinkSpec:
    """A LinkSpec from a link file's dict (the `link` entry of a measurement file works too)."""
    if "link" in d and isinstance(d["link"], dict):
        d = d["link"]
    try:
        return LinkSpec(str(d["name"]), float(d["alpha"]), float(d["bw"]))
    except (KeyError, TypeError) as e:
        raise ValueError(f"not a link: missing or bad field {e}") from None


def load_link(path) -> LinkSpec:
    with open(path, encoding="utf-8") as f:
        return link_from_dict(json.load(f))



# ---------------------------------------------------------------------------------------
# Several nodes: the inter-node link
# ---------------------------------------------------------------------------------------
def _multi_node_algos():
    """The registry's algorithms that run across nodes only (topologies "nodes", not "switch"),
    in registry order over the ops: the closed forms a multi-node run can be fitted to."""
    out = []
    for op in ("all-reduce", "all-gather", "reduce-scatter"):
        for name, rec in ALGORITHMS[op].items():
            if "nodes" in rec.topologies and "switch" not in rec.topologies and name not in out:
                out.append(name)
    return tuple(out)


MULTI_NODE_ALGOS = _multi_node_algos()  # read from simcore.algorithms.ALGORITHMS: ("hier", "ring-nodes")
# NCCL's NVLS Tree all-reduce as NCCL's tuning model times it when the network binds (nvls_tree_coefficients):
# what a log's NVLS_TREE sizes are fitted with. On a GPU machine it is what the registry's "hier" runs as.
NVLS_TREE = "nvls-tree"
FIT_FORMS = MULTI_NODE_ALGOS + (NVLS_TREE,)
# the older spelling (nccl-import --inter-algo ring, calibrate_nccl_tests(inter_algo="ring")):
# on nodes "ring" meant NCCL's channel rings, the registry's "ring-nodes"
INTER_ALIASES = {"ring": "ring-nodes"}


def inter_algo_name(op, algo):
    """The registry name of a multi-node algorithm for op ("ring" → "ring-nodes"); ValueError
    naming those there are when it does not run across nodes for that op."""
    name = INTER_ALIASES.get(algo, algo)
    if name == NVLS_TREE and op == "all-reduce":
        return name
    ops = [o for o in ("all-reduce", "all-gather", "reduce-scatter") if name in ALGORITHMS[o]]
    if name not in MULTI_NODE_ALGOS or op not in ops:
        can = [a for a in MULTI_NODE_ALGOS if a in ALGORITHMS.get(op, {})]
        raise ValueError(f"a multi-node {op} can be fitted to {' or '.join(can)}, not {algo!r}")
    return name


def _nodes_coefficients(op, algo, P, N):
    """topo_closed_forms.nodes_coefficients for a registry name (its "ring" is "ring-nodes");
    NVLS_TREE's are nvls_tree_coefficients."""
    from .topo_closed_forms import nodes_coefficients

    if algo == NVLS_TREE:
        return nvls_tree_coefficients(P, N)
    return nodes_coefficients(op, "ring" if algo == "ring-nodes" else algo, P, N)


def nvls_tree_coefficients(P, N):
    """
    ((0, 0), (a_i, b_i)): NCCL's NVLS Tree all-reduce on N nodes of P GPUs as t = a_i·α_i + b_i·S/β_i,
    β_i what one NIC carries (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel, when the network
    binds): bus bandwidth ch · bwInter · (2 on N <= 2 nodes, "Handle 2 node case of NVLSTree"),
    ch = min(32, P) channels, one per NIC (search.cc; device.h NCCL_MAX_NVLS_ARITY), algbw = bus ·
    n/(2(n−1)) → b_i = 2(n−1)/(n·ch·m), m = 2 if N <= 2 else 1; the latency's network part
    2·log2i(N)·hwLat[NET][NVLS_TREE] → a_i = 2·⌊log2 N⌋. The NVLink part is NCCL's, not fitted.
    """
    n = P * N
    ch = min(32, P)
    m = 2 if N <= 2 else 1
    return (0.0, 0.0), (2.0 * int(math.log2(N)), 2.0 * (n - 1) / (n * ch * m))


def registry_algo(form):
    """The registry algorithm a fitted form is: NVLS_TREE is "hier" (NCCL's NVLS Tree on a GPU machine)."""
    return "hier" if form == NVLS_TREE else form


def check_hardware(link, hardware):
    """ValueError (one sentence) when a fitted inter-node link is faster than its NIC's hardware."""
    if hardware is not None and link.bw > hardware.bw * (1 + 1e-9):
        raise ValueError(f"the fit would write the inter-node link at {link.bw / 1e9:.1f} GB/s per NIC, faster than "
                         f"its hardware ({hardware.name}, {hardware.bw / 1e9:.1f} GB/s), so NCCL did not run the "
                         f"model fitted: give the algorithm it ran (--inter-algo) or rerun nccl-tests with "
                         f"NCCL_ALGO=Ring")


def _hier_time(P, N, S, intra, alpha, bw):
    """t_hier_pipelined (no base: a fit's α takes it in) with the inter link (alpha, bw); S a scalar or array."""
    from .topo_closed_forms import t_hier_pipelined

    inter = LinkSpec(MEASURED, float(alpha), float(bw))
    t = np.vectorize(lambda s: t_hier_pipelined(P, N, float(s), intra, inter), otypes=[float])(S)
    return float(t) if np.ndim(t) == 0 else t


def _hier_local_coefficients(p, intra, alpha, bw):
    """
    (known, a_i, b_i) of the pipelined hier at point p around the inter link (alpha, bw):
    t ≈ known + a_i·α_i + b_i·S/β_i. The pipeline's time is piecewise linear in α_i and 1/β_i
    (sums and maxima of them, for a given chunk count), so its slopes are read off exactly.
    """
    from .topo_closed_forms import hier_pipeline_chunks, t_hier_pipelined

    P, N, S = p.n // p.nodes, p.nodes, float(p.nbytes)
    inter = LinkSpec(MEASURED, alpha, bw)
    C = hier_pipeline_chunks(P, N, S, intra, inter)

    def t(a, x):
        return t_hier_pipelined(P, N, S, intra, LinkSpec(MEASURED, a, 1.0 / x), chunks=C)

    x = 1.0 / bw
    t0 = t(alpha, x)
    da, dx = max(alpha, 1e-9) * 1e-6, x * 1e-6
    ai = (t(alpha + da, x) - t0) / da
    bi = (t(alpha, x + dx) - t0) / dx / S if S > 0 else 0.0
    return t0 - ai * alpha - bi * S * x, ai, bi


def fit_inter(points, intra, algo="ring-nodes", label="", min_bytes=None) -> Fit:
    """
    The inter-node link (α_i, β_i) from points measured over several nodes, the intra-node
    link known. Each algorithm's closed form is t = (known intra part) + a_i·α_i + b_i·S/β_i
    (topo_closed_forms.nodes_coefficients): "ring-nodes" — NCCL's rings, one channel per NIC,
    when the NICs are the bottleneck (then the intra link does not enter); "nvls-tree" — NCCL's
    NVLS Tree as its tuning model times it, network-bound (nvls_tree_coefficients); "hier" —
    hierarchical, pipelined by chunks (t_hier_pipelined: its three phases' linear form first,
    then refitted with the pipeline's own slopes). algo: a registry name of MULTI_NODE_ALGOS ("ring" is
    read as "ring-nodes").
    The same weighting as `fit`: α_i from every point, β_i from the plateau, errors relative
    to the whole measured time. The Fit's predict() is that closed form (inter_algo, intra set).
    algo may be FIT_FORMS' "nvls-tree" too (all-reduce).
    """
    used = [p for p in points if p.nodes >= 2]
    for op in sorted({p.op for p in used}) or ["all-reduce"]:
        algo_name = inter_algo_name(op, algo)
    if algo_name == "hier" and intra is None:
        raise ValueError("the hierarchical model needs the intra-node link: give --intra")
    if len(used) < 2:
        raise ValueError(f"need at least 2 measurements over several nodes to fit the inter-node link, got {len(used)}")
    rows, t, known = [], [], []
    for p in used:
        _check_seconds(p)
        (af, bf), (ai, bi) = _nodes_coefficients(p.op, algo_name, p.n // p.nodes, p.nodes)
        known.append(af * intra.alpha + bf * p.nbytes / intra.bw if intra is not None else 0.0)
        rows.append((ai, bi * p.nbytes))
        t.append(p.seconds)
    A, t, known = np.array(rows, dtype=float), np.array(t, dtype=float), np.array(known)
    if np.linalg.matrix_rank(A / t[:, None]) < 2:
        raise ValueError("the points cannot separate α from β: measure at least two different message sizes")
    plat = plateau(used, min_bytes)
    alpha, x = _solve(A, t - known, plat, weight_t=t)
    if algo_name == "hier" and x > 0 and math.isfinite(x):
        alpha, x = _refit_hier_pipelined(used, intra, alpha, x, t, plat)
    if not (x > 0 and math.isfinite(x)):
        raise ValueError("the time left for the network does not grow with message size: the intra-node link "
                         "already explains these times (is it too slow?), or NCCL ran Tree/NVLSTree, which on "
                         "two nodes beats the network bound; rerun with NCCL_ALGO=Ring")
    f = Fit(alpha, float(1.0 / x), 0.0, 0.0, len(t), label, int(plat.sum()),
            None if min_bytes is None else float(min_bytes), algo_name, intra)
    model = np.array([f.predict_point(p) for p in used])  # the one computation (Fit.predict)
    r2, worst = _quality(model, t)
    return dataclasses.replace(f, r2=r2, worst_rel=worst)


def _refit_hier_pipelined(used, intra, alpha, x, t, plat, rounds=20):
    """
    The registry's hier is pipelined (t_hier_pipelined), not linear in α_i and 1/β_i: starting
    from the three phases' linear fit (nodes_coefficients), refit with the pipeline's own slopes
    at the current link until the link stops moving (Gauss–Newton on a piecewise-linear form).
    """
    for _ in range(rounds):
        rows, known = [], []
        for p in used:
            k, ai, bi = _hier_local_coefficients(p, intra, alpha, 1.0 / x)
            rows.append((ai, bi * p.nbytes))
            known.append(k)
        A = np.array(rows, dtype=float)
        if np.linalg.matrix_rank(A / t[:, None]) < 2:
            break
        a2, x2 = _solve(A, t - np.array(known), plat, weight_t=t)
        if not (x2 > 0 and math.isfinite(x2)):
            break
        done = abs(a2 - alpha) <= 1e-9 * max(alpha, 1e-12) + 1e-15 and abs(x2 - x) <= 1e-9 * x
        alpha, x = a2, x2
        if done:
            break
    return alpha, x


# ---------------------------------------------------------------------------------------
# The calibrated machine: nodes with the fitted links, running what was measured
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FittedNodes(Nodes):
    """
    Nodes whose default algorithm across nodes is the one a calibration fitted (algos: ((op,
    algo), …) registry names), not Nodes' textbook default (hierarchical all-reduce): what NCCL
    ran when the log was measured, so the machine's own choice predicts the measured times.
    """

    algos: tuple = ()

    def _default_algo(self, op):
        if self.n_nodes > 1:
            for o, a in self.algos:
                if o == op:
                    return a
        return super()._default_algo(op)

    def _decide_choice(self, op, nbytes):
        algo, proto, why = super()._decide_choice(op, nbytes)
        if not self.tuning and self.n_nodes > 1 and (op, algo) in self.algos:
            why = f"{algo}: the algorithm the calibration's measurements were fitted with (what NCCL ran)"
        return algo, proto, why


@dataclass(frozen=True)
class MeasuredPreset(HardwarePreset):
    """A HardwarePreset of nodes whose topologies are FittedNodes running `algos` by default."""

    algos: tuple = ()

    def _build_topology(self, n, launch=""):
        t = super()._build_topology(n, launch)
        if isinstance(t, Nodes) and self.algos:
            return FittedNodes(**{f.name: getattr(t, f.name) for f in dataclasses.fields(t)}, algos=self.algos)
        return t

