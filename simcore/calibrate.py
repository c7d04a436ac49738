"""
calibrate — fit the α–β model's two numbers to measured collective times.

Every collective the simulator knows has a closed form that is linear in α and 1/β:

    t = a·α + b·S/β          S: the full array's bytes (nccl-tests' "size")

where a (how many message latencies lie on the critical path) and b (how many S's worth of
bytes cross the busiest port) depend only on the algorithm and n. Ring all-reduce:
a = 2(n−1), b = 2(n−1)/n. So measured (S, t) points give α and β by linear least squares,
and several operations and algorithms can share one fit: one link, many collectives.

The fit weights each point by 1/t², i.e. it minimises *relative* errors, so an 8-byte
message (which measures α) counts as much as a 64 MiB one (which measures β).

Also here: a reader for the text that nccl-tests prints (all_reduce_perf, all_gather_perf,
reduce_scatter_perf), so a lecturer with GPUs can turn their cluster's numbers into a LinkSpec.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import numpy as np

from .comm_sim import ALLREDUCE_ALGOS, OPS, LinkSpec, algbw, busbw, t_formula

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

    For the simulator's algorithms they are read off comm_sim.t_formula (one place states
    each cost). Three algorithms exist only in Open MPI and are costed here:
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
    simulated = algo in ALLREDUCE_ALGOS if op == "all-reduce" else algo == "ring"
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


# ---------------------------------------------------------------------------------------
# Points and the fit
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Point:
    """One measured collective: `op` with `algo` on n ranks moved S = nbytes in `seconds`."""

    op: str
    algo: str
    n: int
    nbytes: float
    seconds: float

    @property
    def algbw(self):
        """nccl-tests' algorithm bandwidth S/t (bytes/s)."""
        return algbw(self.nbytes, self.seconds)

    @property
    def busbw(self):
        """nccl-tests' bus bandwidth: algbw × 2(n−1)/n (all-reduce) or × (n−1)/n (bytes/s)."""
        return busbw(self.op, self.n, self.nbytes, self.seconds)

    def to_dict(self):
        return {"op": self.op, "algo": self.algo, "n": self.n, "nbytes": self.nbytes, "seconds": self.seconds}


@dataclass(frozen=True)
class Fit:
    """
    α (s per message) and β (bytes/s per port and direction) fitted to `n_points` points.
    r2: R² of the weighted fit (weights 1/t²); worst_rel: the largest |model − measured| /
    measured over the points.
    """

    alpha: float
    bw: float
    r2: float
    worst_rel: float
    n_points: int
    label: str = ""

    def predict(self, op, algo, n, nbytes):
        """The model's time (seconds) for one collective of S = nbytes (scalar or array)."""
        a, b = coefficients(op, algo, n)
        return a * self.alpha + b * np.asarray(nbytes, dtype=float) / self.bw

    def link(self, name=MEASURED) -> LinkSpec:
        """The fitted numbers as a comm_sim.LinkSpec the simulator can use."""
        return LinkSpec(name, float(self.alpha), float(self.bw))

    def to_dict(self):
        return {"label": self.label, "alpha": self.alpha, "bw": self.bw, "r2": self.r2,
                "worst_rel": self.worst_rel, "n_points": self.n_points}


def _design(points):
    """Rows (a, b·S) and measured times t, one per point."""
    rows, t = [], []
    for p in points:
        a, b = coefficients(p.op, p.algo, p.n)
        if a == 0 and b == 0:
            continue  # n = 1 moves nothing: it says nothing about the link
        if not (p.seconds > 0 and math.isfinite(p.seconds)):
            raise ValueError(f"a measured time must be a positive number of seconds, got {p.seconds!r}")
        rows.append((a, b * p.nbytes))
        t.append(p.seconds)
    return np.array(rows, dtype=float).reshape(-1, 2), np.array(t, dtype=float)


def fit(points, label="") -> Fit:
    """
    Least-squares α and β from measured points (any mix of operations, algorithms and n).
    Minimises Σ ((a·α + b·S/β − t) / t)², with α ≥ 0 and β > 0.
    Raises ValueError when the points cannot determine a bandwidth (e.g. all sizes equal).
    """
    A, t = _design(points)
    if len(t) < 2:
        raise ValueError(f"need at least 2 measurements on n >= 2 ranks to fit α and β, got {len(t)}")
    Aw = A / t[:, None]  # relative residuals: each row divided by its own time
    if np.linalg.matrix_rank(Aw) < 2:
        raise ValueError("the points cannot separate α from β: measure at least two different message sizes")
    x, *_ = np.linalg.lstsq(Aw, np.ones(len(t)), rcond=None)
    if x[0] < 0:  # a negative latency means the data is all bandwidth: fit β alone
        col = Aw[:, 1]
        x = np.array([0.0, col @ np.ones(len(t)) / (col @ col)])
    if not (x[1] > 0 and math.isfinite(x[1])):
        raise ValueError("the times do not grow with message size, so no bandwidth can be fitted: "
                         "measure larger messages")
    model = A @ x
    rel = (model - t) / t
    w = 1.0 / t**2
    mean = (w @ t) / w.sum()
    ss_tot = w @ (t - mean) ** 2
    ss_res = w @ (model - t) ** 2
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)
    return Fit(float(x[0]), float(1.0 / x[1]), float(r2), float(np.max(np.abs(rel))), len(t), label)


def fit_each(points):
    """One Fit per (op, algo) present in `points`: {(op, algo): Fit}. Skips groups that cannot be fitted."""
    groups = {}
    for p in points:
        groups.setdefault((p.op, p.algo), []).append(p)
    out = {}
    for key, pts in groups.items():
        try:
            out[key] = fit(pts, label=f"{key[0]} {key[1]}")
        except ValueError:
            continue
    return out


def fit_link(points, name=MEASURED):
    """
    The link for the simulator: α and β fitted to the ring measurements (the simulator's
    default algorithm, and the one nccl-tests' busbw assumes) — to every point when there are
    no ring ones. Returns (LinkSpec, Fit).
    """
    ring = [p for p in points if p.algo == "ring"]
    chosen = ring or list(points)
    f = fit(chosen, label=RING_LABEL if ring else "all measurements")
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
_PERF_NAME = re.compile(r"\b([a-z_]+?)_perf\b")
_RANK_LINE = re.compile(r"^#\s+Rank\s+\d+\b")


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
    """One nccl-tests run: which collective, on how many ranks, and its rows."""

    op: str
    n: int
    rows: tuple

    def points(self, algo="ring", inplace=False):
        """Rows as fit Points (S bytes, seconds). NCCL picks its algorithm itself; `algo` says
        which closed form to fit against (ring, the one nccl-tests' busbw assumes)."""
        out = []
        for r in self.rows:
            t = r.inplace_time_us if inplace else r.time_us
            if t is None or not t > 0 or r.nbytes <= 0:
                continue
            out.append(Point(self.op, algo, self.n, float(r.nbytes), t * 1e-6))
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


def parse_nccl_tests(text, op=None, n=None):
    """
    Read nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf; one or
    several runs in one text). Returns a list of NcclTable.

    op: "all-reduce" | "all-gather" | "reduce-scatter" to override what the text says;
    n: ranks, to override the count of '#  Rank  k …' lines. Otherwise the collective comes
    from the program name in the text (e.g. 'all_gather_perf -b 8 …'), or else from the ratio
    busbw/algbw (2(n−1)/n for all-reduce, (n−1)/n for the other two) and the redop column.
    Raises ValueError when the text holds no table or a table cannot be identified.
    """
    if op is not None and op not in OPS:
        raise ValueError(f"unknown collective {op!r}; choose one of {', '.join(OPS)}")
    lines = text.splitlines()
    tables = []
    preamble, ranks = [], 0
    cols, rows = None, []

    def close():
        nonlocal cols, rows, preamble, ranks
        if cols is not None and rows:
            n_t = n if n is not None else (ranks or None)
            op_t = op or _guess_op(rows, "\n".join(preamble), cols, n_t)
            if n_t is None:
                n_t = _infer_n_from_factor(NcclTable(op_t, 0, tuple(rows)).busbw_factor(), op_t)
                if n_t is None:
                    raise ValueError("cannot tell how many ranks ran this table: pass n")
            tables.append(NcclTable(op_t, int(n_t), tuple(rows)))
            preamble, ranks = [], 0
        cols, rows = None, []

    for line in lines:
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            header = _header_columns(s)
            if header is not None:
                if rows:
                    close()
                cols = header
                continue
            if rows:  # '# Out of bounds values', '# Avg bus bandwidth': the table is over
                close()
            if _RANK_LINE.match(s):
                ranks += 1
            if cols is None:
                preamble.append(s)
            continue
        row = _parse_row(s.split(), cols) if cols is not None else None
        if row is not None:
            rows.append(row)
        else:
            if rows:
                close()
            preamble.append(s)
    close()
    if not tables:
        raise ValueError("no nccl-tests table found (expected a '#  size  count  type … time  algbw  busbw' "
                         "header followed by rows)")
    return tables


def fit_nccl_tests(text, op=None, n=None, algo="ring", inplace=False, name=None):
    """
    Parse nccl-tests output and fit α and β to all its tables together.
    Returns (LinkSpec, Fit, tables). The link's name says where it came from.
    """
    tables = parse_nccl_tests(text, op=op, n=n)
    points = [p for t in tables for p in t.points(algo=algo, inplace=inplace)]
    f = fit(points, label="nccl-tests " + ", ".join(f"{t.op} n={t.n}" for t in tables))
    ns = sorted({t.n for t in tables})
    return f.link(name or f"nccl-tests, {'/'.join(map(str, ns))} GPUs"), f, tables
