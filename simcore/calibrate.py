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

Also here: a reader for the text that nccl-tests prints (all_reduce_perf, all_gather_perf,
reduce_scatter_perf), so a lecturer with GPUs can turn their cluster's numbers into a LinkSpec;
a run over several nodes (rank lines on several hosts) gives the inter-node link, with the
intra-node one from a one-node run in the same log or given.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import numpy as np

from .algorithms import ALGORITHMS, OPS, algbw, busbw, t_formula
from .links import LinkSpec

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
    factor = "2(n-1)/n" if op == "all-reduce" else "(n-1)/n"
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


PLATEAU = 0.9  # a point is on the bandwidth plateau when its algbw is within 10 % of its run's best


@dataclass(frozen=True)
class Fit:
    """
    α (s per message) and β (bytes/s per port and direction) fitted to `n_points` points.
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

    def predict(self, op, algo, n, nbytes):
        """The model's time (seconds) for one collective of S = nbytes (scalar or array)."""
        a, b = coefficients(op, algo, n)
        return a * self.alpha + b * np.asarray(nbytes, dtype=float) / self.bw

    def link(self, name=MEASURED) -> LinkSpec:
        """The fitted numbers as a comm_sim.LinkSpec the simulator can use."""
        return LinkSpec(name, float(self.alpha), float(self.bw))

    def to_dict(self):
        return {"label": self.label, "alpha": self.alpha, "bw": self.bw, "r2": self.r2,
                "worst_rel": self.worst_rel, "n_points": self.n_points, "n_plateau": self.n_plateau,
                "min_bytes": self.min_bytes}


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
# nccl-tests output
# ---------------------------------------------------------------------------------------
_PERF_OPS = {"all_reduce": "all-reduce", "all_gather": "all-gather", "reduce_scatter": "reduce-scatter"}
_PERF_NAME = re.compile(r"\b([a-z_]+?)_perf(?:_mpi)?\b")
# nccl-tests' util.cu: "#  Rank %2d Group %2d Pid %6d on %10s device %2d [...] name"; before 2.13
# without "Group". The host is the word after "on".
_RANK_LINE = re.compile(r"^#\s*Rank\s+(\d+)\b.*?\bon\s+(\S+)\s+device\b")
_RANK_LINE_BARE = re.compile(r"^#\s*Rank\s+\d+\b")
# what mpirun --tag-output / --timestamp-output put before every line: "[1,0]<stdout>:"
_MPI_PREFIX = re.compile(r"^.*?<std(?:out|err)>:")
# lines that end a table (util.cu writeResultFooter) or start the next run's preamble
_TABLE_END = ("Out of bounds values", "Avg bus bandwidth", "Collective test concluded")
_RUN_START = ("nThread", "Using devices", "Collective test starting", "nccl-tests version")


@dataclass(frozen=True)
class NcclRow:
    """
    One line of an nccl-tests table. nbytes: S (nccl-tests' "size": the all-reduce buffer,
    the all-gather output, the reduce-scatter input); time in µs; algbw, busbw in GB/s
    (1e9 bytes/s), as printed. The in-place columns are None when the table has none.
    """

    nbytes: int
    count: int
    dtype: str
    redop: str
    time_us: float
    algbw: float
    busbw: float
    inplace_time_us: float | None = None
    inplace_algbw: float | None = None
    inplace_busbw: float | None = None


@dataclass(frozen=True)
class NcclTable:
    """
    One nccl-tests run: which collective, on how many ranks, and its rows.
    hosts: the host of every rank (from its '#  Rank' line; empty when the text has none);
    nodes: how many nodes the ranks spanned (n // nodes per node); skipped: (line number,
    text) of every line inside the table that was not a row (an mpirun or NCCL message
    printed between rows), which the reader stepped over.
    """

    op: str
    n: int
    rows: tuple
    hosts: tuple = ()
    nodes: int = 1
    skipped: tuple = ()

    @property
    def per_node(self):
        return self.n // self.nodes

    def points(self, algo="ring", inplace=False):
        """Rows as fit Points (S bytes, seconds). NCCL picks its algorithm itself; `algo` says
        which closed form to fit against (ring, the one nccl-tests' busbw assumes)."""
        out = []
        for r in self.rows:
            t = r.inplace_time_us if inplace else r.time_us
            if t is None or not t > 0 or r.nbytes <= 0:
                continue
            out.append(Point(self.op, algo, self.n, float(r.nbytes), t * 1e-6, self.nodes))
        return out

    def busbw_factor(self):
        """busbw / algbw as the file prints it, read at the largest algbw (the most digits)."""
        best = max(self.rows, key=lambda r: r.algbw)
        return best.busbw / best.algbw if best.algbw > 0 else float("nan")


def _header_columns(line):
    """Column names of an nccl-tests header line ('#  size  count  type  redop ...'), or None."""
    cols = line.lstrip("#").split()
    if "size" in cols and "algbw" in cols and "busbw" in cols:
        return cols
    return None


def _parse_row(tokens, cols):
    """A data line split into tokens, read by the header's column names."""
    if len(tokens) != len(cols):
        return None
    try:
        nbytes = int(tokens[cols.index("size")])
        count = int(tokens[cols.index("count")]) if "count" in cols else 0
    except ValueError:
        return None
    groups = [i for i, c in enumerate(cols) if c == "algbw"]  # out-of-place, then in-place
    vals = []
    for g in groups:
        try:  # time is the column before algbw, busbw the one after
            vals.append((float(tokens[g - 1]), float(tokens[g]), float(tokens[g + 1])))
        except ValueError:
            vals.append((None, None, None))
    if vals[0][0] is None:
        return None
    dtype = tokens[cols.index("type")] if "type" in cols else ""
    redop = tokens[cols.index("redop")] if "redop" in cols else ""
    ip = vals[1] if len(vals) > 1 else (None, None, None)
    return NcclRow(nbytes, count, dtype, redop, *vals[0], *ip)


def _infer_n_from_factor(factor, op):
    """Invert nccl-tests' busbw factor: 2(n−1)/n (all-reduce) or (n−1)/n."""
    if op == "all-reduce":
        n = 2.0 / (2.0 - factor) if factor < 2 else math.inf
    else:
        n = 1.0 / (1.0 - factor) if factor < 1 else math.inf
    return int(round(n)) if math.isfinite(n) and n >= 2 else None


def _guess_op(rows, preamble, cols, n):
    """Which collective a table is: from the program name in the text before it, else from
    nccl-tests' busbw factor and the redop column."""
    names = [m.group(1) for m in _PERF_NAME.finditer(preamble)]
    if names:
        name = names[-1]
        if name in _PERF_OPS:
            return _PERF_OPS[name]
        raise ValueError(f"this is {name}_perf output; only all_reduce_perf, all_gather_perf and "
                         f"reduce_scatter_perf can be fitted")
    big = max(rows, key=lambda r: r.algbw)
    factor = big.busbw / big.algbw if big.algbw > 0 else float("nan")
    if not math.isfinite(factor):
        raise ValueError("cannot tell which collective this table is (no algbw): pass the operation")
    if n is not None and n >= 2:
        ar, other = 2 * (n - 1) / n, (n - 1) / n
        if abs(factor - ar) < abs(factor - other):
            return "all-reduce"
    elif factor >= 0.995:  # (n−1)/n < 1 <= 2(n−1)/n
        return "all-reduce"
    gather = "redop" not in cols or big.redop.lower() in ("none", "", "-")
    return "all-gather" if gather else "reduce-scatter"


def _nodes_of(hosts, n, nodes, per_node):
    """How many nodes a table's n ranks span: from the flags, else from the rank lines' hosts."""
    if nodes is not None or per_node is not None:
        if nodes is not None and per_node is not None and nodes * per_node != n:
            raise ValueError(f"--nodes {nodes} × --per-node {per_node} = {nodes * per_node} ranks, "
                             f"but the table ran on {n}")
        k = nodes if nodes is not None else n // per_node
        if k < 1 or n % k:
            raise ValueError(f"{n} ranks do not split into {k} nodes of equal size")
        return int(k)
    if not hosts:
        return 1
    count = {}
    for h in hosts:
        count[h] = count.get(h, 0) + 1
    if len(count) > 1 and len(set(count.values())) > 1:
        listing = ", ".join(f"{h}: {c}" for h, c in count.items())
        raise ValueError(f"the ranks are spread unevenly over {len(count)} hosts ({listing}); "
                         f"only equal numbers of GPUs per node can be modelled")
    return len(count)


def parse_nccl_tests(text, op=None, n=None, nodes=None, per_node=None, allow_multi_node=False):
    """
    Read nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf; one or
    several runs in one text). Returns a list of NcclTable.

    op: "all-reduce" | "all-gather" | "reduce-scatter" to override what the text says;
    n: ranks, to override the count of '#  Rank  k …' lines. Otherwise the collective comes
    from the program name in the text (e.g. 'all_gather_perf -b 8 …'), or else from the ratio
    busbw/algbw (2(n−1)/n for all-reduce, (n−1)/n for the other two) and the redop column.

    A line inside a table that is not a row (an mpirun warning such as "1 more process has
    sent help message …", an NCCL INFO line) is stepped over and listed in the table's
    `skipped`; the table ends at nccl-tests' footer ("# Out of bounds values …"), a new header
    or the next run's preamble. mpirun's "[1,0]<stdout>:" prefixes are removed.

    Nodes: the ranks' hosts come from the rank lines; more than one host means a multi-node
    run (nodes / per_node override that). Such a run is refused unless allow_multi_node —
    fitting it as one switch would mix the network into the NVLink numbers.
    Raises ValueError when the text holds no table or a table cannot be identified.
    """
    if op is not None and op not in OPS:
        raise ValueError(f"unknown collective {op!r}; choose one of {', '.join(OPS)}")
    tables = []
    preamble, ranks = [], {}
    cols, rows, inside = None, [], []  # inside: non-row lines since the last row

    def close():
        nonlocal cols, rows, preamble, ranks, inside
        if cols is not None and rows:
            n_t = n if n is not None else (len(ranks) or None)
            op_t = op or _guess_op(rows, "\n".join(preamble), cols, n_t)
            if n_t is None:
                n_t = _infer_n_from_factor(NcclTable(op_t, 0, tuple(rows)).busbw_factor(), op_t)
                if n_t is None:
                    raise ValueError("cannot tell how many ranks ran this table: pass n")
            hosts = tuple(ranks[r] for r in sorted(ranks)) if len(ranks) == n_t else ()
            k = _nodes_of(hosts, int(n_t), nodes, per_node)
            tables.append(NcclTable(op_t, int(n_t), tuple(rows), hosts, k, tuple(skipped + inside)))
            preamble, ranks = [s for _, s in inside], {}
        cols, rows, inside = None, [], []
        skipped.clear()

    skipped = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = _MPI_PREFIX.sub("", line, count=1).strip()
        if not s:
            continue
        if s.startswith("#"):
            body = s.lstrip("#").strip()
            header = _header_columns(s)
            if header is not None:
                if rows:
                    close()
                cols, inside = header, []
                continue
            if body.startswith(_TABLE_END) or body.startswith(_RUN_START) or _RANK_LINE_BARE.match(s):
                if rows:
                    close()
                m = _RANK_LINE.match(s)
                if m:
                    ranks[int(m.group(1))] = m.group(2)
                elif _RANK_LINE_BARE.match(s):
                    ranks[len(ranks)] = ""
                if cols is None:
                    preamble.append(s)
                continue
            if rows:
                inside.append((lineno, s))
            elif cols is None:
                preamble.append(s)
            continue
        row = _parse_row(s.split(), cols) if cols is not None else None
        if row is not None:
            skipped.extend(inside)  # lines between two rows: really inside the table
            inside = []
            rows.append(row)
        elif rows:
            inside.append((lineno, s))
        else:
            preamble.append(s)
    close()
    if not tables:
        raise ValueError("no nccl-tests table found (expected a '#  size  count  type … time  algbw  busbw' "
                         "header followed by rows)")
    if not allow_multi_node:
        for t in tables:
            if t.nodes > 1:
                raise ValueError(multi_node_message(t))
    return tables


def multi_node_message(t):
    hosts = sorted(set(t.hosts)) if t.hosts else []
    where = f" (hosts {', '.join(hosts[:4])}{', …' if len(hosts) > 4 else ''})" if hosts else ""
    return (f"this {t.op} ran on {t.n} GPUs over {t.nodes} nodes{where}, {t.per_node} per node: fitting it "
            f"as one switch would mix the network into the NVLink numbers. Use "
            f"'python -m simcore nccl-import FILE', which fits the inter-node link")


def fit_nccl_tests(text, op=None, n=None, algo="ring", inplace=False, name=None, min_bytes=None):
    """
    Parse nccl-tests output of one-node runs and fit α and β to all its tables together.
    Returns (LinkSpec, Fit, tables). The link's name says where it came from. A multi-node
    run is refused here (ValueError): calibrate_nccl_tests fits it.
    """
    tables = parse_nccl_tests(text, op=op, n=n)
    points = [p for t in tables for p in t.points(algo=algo, inplace=inplace)]
    f = fit(points, label="nccl-tests " + ", ".join(f"{t.op} n={t.n}" for t in tables), min_bytes=min_bytes)
    ns = sorted({t.n for t in tables})
    return f.link(name or f"nccl-tests, {'/'.join(map(str, ns))} GPUs"), f, tables


# ---------------------------------------------------------------------------------------
# Several nodes: the inter-node link
# ---------------------------------------------------------------------------------------
MULTI_NODE_ALGOS = ("ring", "hier")


def predict_nodes(op, algo, per_node, nodes, nbytes, intra, inter):
    """The multi-node model's time (seconds) for one collective (topo_collectives' closed forms)."""
    from .topo_collectives import t_hier, t_ring_nodes

    f = t_ring_nodes if algo == "ring" else t_hier
    return f(op, per_node, nodes, float(nbytes), intra, inter)


def fit_inter(points, intra, algo="ring", label="", min_bytes=None) -> Fit:
    """
    The inter-node link (α_i, β_i) from points measured over several nodes, the intra-node
    link known. Each algorithm's closed form is t = (known intra part) + a_i·α_i + b_i·S/β_i
    (topo_collectives.nodes_coefficients): "ring" — NCCL's rings, one channel per NIC, when
    the NICs are the bottleneck (then the intra link does not enter); "hier" — hierarchical.
    The same weighting as `fit`: α_i from every point, β_i from the plateau, errors relative
    to the whole measured time.
    """
    from .topo_collectives import nodes_coefficients

    if algo not in MULTI_NODE_ALGOS:
        raise ValueError(f"a multi-node run can be fitted to {' or '.join(MULTI_NODE_ALGOS)}, not {algo!r}")
    if algo == "hier" and intra is None:
        raise ValueError("the hierarchical model needs the intra-node link: give --intra")
    rows, t, known, used = [], [], [], []
    for p in points:
        if p.nodes < 2:
            continue
        _check_seconds(p)
        P = p.n // p.nodes
        (af, bf), (ai, bi) = nodes_coefficients(p.op, algo, P, p.nodes)
        known.append(af * intra.alpha + bf * p.nbytes / intra.bw if intra is not None else 0.0)
        rows.append((ai, bi * p.nbytes))
        t.append(p.seconds)
        used.append(p)
    if len(t) < 2:
        raise ValueError(f"need at least 2 measurements over several nodes to fit the inter-node link, got {len(t)}")
    A, t, known = np.array(rows, dtype=float), np.array(t, dtype=float), np.array(known)
    if np.linalg.matrix_rank(A / t[:, None]) < 2:
        raise ValueError("the points cannot separate α from β: measure at least two different message sizes")
    plat = plateau(used, min_bytes)
    alpha, x = _solve(A, t - known, plat, weight_t=t)
    if not (x > 0 and math.isfinite(x)):
        raise ValueError("the time left for the network does not grow with message size: the intra-node link "
                         "already explains these times (is it too slow?), or NCCL ran Tree/NVLSTree, which on "
                         "two nodes beats the network bound; rerun with NCCL_ALGO=Ring")
    r2, worst = _quality(A @ np.array([alpha, x]) + known, t)
    return Fit(alpha, float(1.0 / x), r2, worst, len(t), label, int(plat.sum()),
               None if min_bytes is None else float(min_bytes))


@dataclass(frozen=True)
class Calibration:
    """
    What a log of nccl-tests runs says about the machine: the intra-node link (fitted to the
    one-node runs, or given), the inter-node link (fitted to the multi-node runs), the tables,
    and notes on what the fit assumed. A link is None when the log has no data for it.
    """

    intra: LinkSpec | None
    intra_fit: Fit | None
    inter: LinkSpec | None
    inter_fit: Fit | None
    tables: tuple
    inter_algo: str = "ring"
    notes: tuple = ()


def calibrate_nccl_tests(text, op=None, n=None, algo="ring", inplace=False, name=None, min_bytes=None,
                         nodes=None, per_node=None, intra=None, inter_algo="ring") -> Calibration:
    """
    Parse nccl-tests output and fit every link it has data for. One-node tables give the
    intra-node link (closed form `algo`); multi-node tables (rank lines on several hosts, or
    nodes / per_node) give the inter-node link, with `intra` (a LinkSpec) or else the link
    fitted to the one-node tables as the known intra-node part. Raises ValueError with the
    reason when a multi-node run cannot be fitted (e.g. "hier" with no intra-node link).
    """
    from .topo_collectives import ring_nodes_nvlink_bound

    tables = tuple(parse_nccl_tests(text, op=op, n=n, nodes=nodes, per_node=per_node, allow_multi_node=True))
    single = [t for t in tables if t.nodes == 1]
    multi = [t for t in tables if t.nodes > 1]
    notes = []
    intra_link = intra_fit = None
    if single:
        pts = [p for t in single for p in t.points(algo=algo, inplace=inplace)]
        intra_fit = fit(pts, label="nccl-tests " + ", ".join(f"{t.op} n={t.n}" for t in single), min_bytes=min_bytes)
        ns = sorted({t.n for t in single})
        intra_link = intra_fit.link(name or f"nccl-tests, {'/'.join(map(str, ns))} GPUs")
    inter_link = inter_fit = None
    if multi:
        known = intra if intra is not None else intra_link
        if known is None and inter_algo == "hier":
            raise ValueError(multi_node_message(multi[0]).split(". Use")[0] + ". The hierarchical model needs the "
                             "intra-node link: pass --intra (a link name or file), or put a one-node run in the "
                             "same log")
        if intra is not None and intra_link is not None:
            notes.append(f"the inter-node fit uses the given intra-node link {intra.name}, "
                         f"not the one fitted here")
        pts = [p for t in multi for p in t.points(algo=inter_algo, inplace=inplace)]
        shape = ", ".join(sorted({f"{t.nodes} nodes × {t.per_node}" for t in multi}))
        inter_fit = fit_inter(pts, known, inter_algo, label=f"nccl-tests {shape}, {inter_algo}", min_bytes=min_bytes)
        inter_link = inter_fit.link(f"nccl-tests inter-node ({shape})")
        if inter_algo == "ring":
            if known is None:
                notes.append("no intra-node link to check against: assumed the NICs, not NVLink, limit the ring")
            else:
                big = max(multi, key=lambda t: t.rows[-1].nbytes)
                S = max(r.nbytes for r in big.rows)
                if ring_nodes_nvlink_bound(big.per_node, big.n, S, known, inter_link):
                    notes.append(f"at {S} bytes the fitted ring waits for NVLink ({known.name}), not the NICs: "
                                 f"the inter-node bandwidth is at least {inter_link.bw / 1e9:.1f} GB/s, not measured")
    return Calibration(intra_link, intra_fit, inter_link, inter_fit, tables, inter_algo, tuple(notes))
