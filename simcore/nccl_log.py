"""
nccl_log — read the text that nccl-tests prints (all_reduce_perf, all_gather_perf,
reduce_scatter_perf) into tables, and fit a whole log: `parse_nccl_tests`, `fit_nccl_tests`
(one-node runs -> one link), `calibrate_nccl_tests` (every link the log has data for).
So a lecturer with GPUs can turn their cluster's numbers into a LinkSpec; a run over several
nodes (rank lines on several hosts) gives the inter-node link, with the intra-node one from a
one-node run in the same log or given. The fitting itself is simcore.calibrate.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

from .algorithms import OPS
from .calibrate import Fit, Point, fit, fit_inter
from .links import LinkSpec


_PERF_OPS = {"all_reduce": "all-reduce", "all_gather": "all-gather", "reduce_scatter": "reduce-scatter"}
_PERF_NAME = re.compile(r"\b([a-z_]+?)_perf(?:_mpi)?\b")
# nccl-tests' util.cu: "#  Rank %2d Group %2d Pid %6d on %10s device %2d [...] name"; before 2.13
# without "Group". The host is the word after "on".
_RANK_LINE = re.compile(r"^#\s*Rank\s+(\d+)\b.*?\bon\s+(\S+)\s+device\b")
_RANK_LINE_BARE = re.compile(r"^#\s*Rank\s+\d+\b")
# what mpirun --tag-output / --timestamp-output put before every line: "[1,0]<stdout>:"
_MPI_PREFIX = re.compile(r"^.*?<std(?:out|err)>:")
# the GPU's name at the end of a rank line ("… device  0 [0x18] NVIDIA H100 80GB HBM3")
_RANK_DEVICE = re.compile(r"\bdevice\s+\d+\s+\[[^\]]*\]\s+(.+?)\s*$")
# NCCL's algorithm lines (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING; NVIDIA/nccl src/enqueue.cc):
#   "… NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..31}"
# and before (a TRACE line some builds print at INFO): "… 1048576 Bytes -> Algo 1 proto 2 time 25.2",
# the numbers indices of src/init.cc ncclAlgoStr / ncclProtoStr
_ALGO_LINE = re.compile(r"(?:\b([A-Za-z]+):\s*)?\b(\d+)\s+Bytes\s*->\s*Algo\s+([A-Za-z_]+|\d+)"
                        r"\s+proto\s+([A-Za-z0-9]+)")
NCCL_ALGOS = ("TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT")
NCCL_PROTOS = ("LL", "LL128", "SIMPLE")
_NCCL_FUNCS = {"AllReduce": "all-reduce", "AllGather": "all-gather", "ReduceScatter": "reduce-scatter"}
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
    algos: tuple = ()  # NCCL's algorithm lines for this run: (bytes, NCCL algorithm, protocol), as printed
    devices: tuple = ()  # the GPU name of every rank line ("NVIDIA H100 80GB HBM3")

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

    def ran(self, nbytes):
        """(NCCL algorithm, protocol) NCCL's algorithm lines say it ran at size S = nbytes ("RING",
        "SIMPLE"), or None when the log has no such line. NCCL prints a collective's bytes: S for
        all-reduce, one rank's part S/n for all-gather and reduce-scatter (its count is per rank)."""
        want = {int(nbytes), int(nbytes) // self.n}
        hits = [(a, p) for b, a, p in self.algos if b in want]
        return hits[-1] if hits else None

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
    preamble, ranks, devices = [], {}, {}
    cols, rows, inside = None, [], []  # inside: non-row lines since the last row

    def close():
        nonlocal cols, rows, preamble, ranks, inside, devices
        if cols is not None and rows:
            n_t = n if n is not None else (len(ranks) or None)
            op_t = op or _guess_op(rows, "\n".join(preamble), cols, n_t)
            if n_t is None:
                n_t = _infer_n_from_factor(NcclTable(op_t, 0, tuple(rows)).busbw_factor(), op_t)
                if n_t is None:
                    raise ValueError("cannot tell how many ranks ran this table: pass n")
            hosts = tuple(ranks[r] for r in sorted(ranks)) if len(ranks) == n_t else ()
            k = _nodes_of(hosts, int(n_t), nodes, per_node)
            algos = _algo_lines(preamble + [s for _, s in skipped + inside], op_t)
            gpus = tuple(devices[r] for r in sorted(devices))
            tables.append(NcclTable(op_t, int(n_t), tuple(rows), hosts, k, tuple(skipped + inside), algos, gpus))
            preamble, ranks, devices = [s for _, s in inside], {}, {}
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
                    dev = _RANK_DEVICE.search(s)
                    if dev:
                        devices[int(m.group(1))] = dev.group(1)
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


def _algo_lines(lines, op):
    """(bytes, NCCL algorithm, protocol) of every NCCL algorithm line among `lines` that is for `op`
    (a line naming another collective is not: warm-ups of other runs)."""
    out = []
    for line in lines:
        m = _ALGO_LINE.search(line)
        if not m:
            continue
        func, nbytes, algo, proto = m.groups()
        if func and _NCCL_FUNCS.get(func) != op:
            continue
        if algo.isdigit():
            algo = NCCL_ALGOS[int(algo)] if int(algo) < len(NCCL_ALGOS) else algo
        if proto.isdigit():
            proto = NCCL_PROTOS[int(proto)] if int(proto) < len(NCCL_PROTOS) else proto
        out.append((int(nbytes), algo.upper(), proto.upper()))
    return tuple(out)


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
    inter_algo: str = "ring-nodes"  # the form the inter-node link was fitted with (calibrate.FIT_FORMS)
    notes: tuple = ()
    intra_algo: str = "ring"  # the closed form the one-node tables were fitted with
    inter_points: tuple = ()  # the multi-node Points the inter fit used (the sizes NCCL ran inter_algo at)
    nic: LinkSpec | None = None  # the NIC's hardware the inter link was checked against

    def points(self, inplace=False):
        """(intra points, inter points): the one-node tables' Points (closed form of the intra
        fit) and the multi-node Points the inter fit used (closed form inter_algo)."""
        one = [p for t in self.tables if t.nodes == 1 for p in t.points(algo=self.intra_algo, inplace=inplace)]
        return one, list(self.inter_points)

    def machine_algos(self):
        """{op: registry algorithm} the calibrated machine runs across nodes by default: the one
        the inter-node link was fitted with — what NCCL ran in these measurements, the fastest it
        had (nccl-tests times NCCL's own choice) — for every op it can run. Another registry
        algorithm timed with these links (e.g. hier's three phases) was never measured: defaulting
        to it predicted 36.6 µs at 64 KiB where the log measured 159."""
        from .algorithms import ALGORITHMS

        from .calibrate import registry_algo

        if self.inter is None:
            return {}
        algo = registry_algo(self.inter_algo)
        return {op: algo for op in ("all-reduce", "all-gather", "reduce-scatter") if algo in ALGORITHMS[op]}


# NCCL's algorithm (its log's name, or the registry's for a GPU machine's choice) → the form it is fitted with
_FORM_OF = {"RING": "ring-nodes", "NVLS_TREE": "nvls-tree", "ring-nodes": "ring-nodes", "hier": "nvls-tree"}


def _generation(tables):
    """The GPU generation NCCL's model times the run as, from the rank lines' GPU names (Hopper
    unless a Blackwell part is named)."""
    names = " ".join(d for t in tables for d in t.devices).upper()
    return "blackwell" if any(k in names for k in ("B200", "GB200", "B300", "GB300")) else "hopper"


def what_nccl_ran(tables, nic, inplace=False):
    """
    For every row of the multi-node tables, the form NCCL's run is fitted with and why: NCCL's
    algorithm line for that size when the log has one (NCCL_DEBUG_SUBSYS=TUNING), else the GPU
    machine's own choice at that size (topology.choose: NCCL's tuner on nodes of the run's shape,
    the NIC `nic`, the GPUs' generation). Returns [(Point with algo = the form or None, what ran)].
    NCCL's Ring is "ring-nodes", NVLS_TREE "nvls-tree"; Tree, CollNet, PAT or NVLS have no form here (None).
    """
    from .links import NVLINK4
    from .topology import nodes as make_nodes

    gpu = _generation(tables)
    out = []
    for t in tables:
        machine = make_nodes(t.nodes, t.per_node, NVLINK4, nic, tuning=gpu)
        for p in t.points(inplace=inplace):
            said = t.ran(p.nbytes)
            if said is not None:
                ran, form = f"{said[0]} {said[1]} (NCCL's log)", _FORM_OF.get(said[0])
            else:
                algo, proto, _ = machine.choose(t.op, p.nbytes)
                ran, form = f"{algo} {proto} (the machine's choice)", _FORM_OF.get(algo)
            out.append((dataclasses.replace(p, algo=form or "?"), ran if form else ran + ": no form to fit"))
    return out


def _auto_points(multi, nic, inplace):
    """(form, points, notes): the multi-node points NCCL ran with the form it ran at the largest size
    (where the bandwidth shows), and a note on the sizes left out."""
    ran = what_nccl_ran(multi, nic, inplace)
    form = max(ran, key=lambda r: r[0].nbytes)[0].algo
    if form == "?":
        raise ValueError(f"at its largest size NCCL ran {max(ran, key=lambda r: r[0].nbytes)[1].split(':')[0]}, "
                         f"which no closed form here fits: rerun nccl-tests with NCCL_ALGO=Ring")
    pts = [p for p, _ in ran if p.algo == form]
    left = [(p, why) for p, why in ran if p.algo != form]
    notes = []
    if left:
        sizes = sorted({p.nbytes for p, _ in left})
        what = sorted({why for _, why in left})
        notes.append(f"left out {len(left)} multi-node point(s) of {_human(sizes[0])}–{_human(sizes[-1])} where NCCL "
                     f"ran {'; '.join(what)}: the inter-node link is fitted to the {form} model NCCL ran at the "
                     f"largest sizes")
    return form, pts, notes


def _human(b):
    for unit, k in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= k:
            return f"{b / k:g} {unit}"
    return f"{b:g} B"


def calibrate_nccl_tests(text, op=None, n=None, algo="ring", inplace=False, name=None, min_bytes=None,
                         nodes=None, per_node=None, intra=None, inter_algo="auto", source="", nic=None) -> Calibration:
    """
    Parse nccl-tests output and fit every link it has data for. One-node tables give the
    intra-node link (closed form `algo`); multi-node tables (rank lines on several hosts, or
    nodes / per_node) give the inter-node link, with `intra` (a LinkSpec) or else the link
    fitted to the one-node tables as the known intra-node part. Raises ValueError with the
    reason when a multi-node run cannot be fitted (e.g. "hier" with no intra-node link).
    inter_algo: "auto" (default) fits the model NCCL ran (what_nccl_ran: its algorithm lines, else
    the machine's choice at each size; the form at the largest size, the others left out and
    noted), or a name of calibrate.FIT_FORMS for every size ("ring" is read as "ring-nodes").
    nic: the NIC's hardware (LinkSpec; default InfiniBand NDR 400, a DGX H100's): a fitted
    inter-node link faster than it is refused (ValueError), as no model NCCL ran can need it.
    source: where the text came from (a file name): the links are named after it
    ("<source>", and "<source>, between nodes"); name overrides the intra-node link's name.
    """
    from .calibrate import INTER_ALIASES, check_hardware
    from .links import IB_NDR400
    from .topo_closed_forms import ring_nodes_nvlink_bound

    inter_algo = INTER_ALIASES.get(inter_algo, inter_algo)
    nic = IB_NDR400 if nic is None else nic

    tables = tuple(parse_nccl_tests(text, op=op, n=n, nodes=nodes, per_node=per_node, allow_multi_node=True))
    single = [t for t in tables if t.nodes == 1]
    multi = [t for t in tables if t.nodes > 1]
    notes = []
    intra_link = intra_fit = None
    if single:
        pts = [p for t in single for p in t.points(algo=algo, inplace=inplace)]
        intra_fit = fit(pts, label="nccl-tests " + ", ".join(f"{t.op} n={t.n}" for t in single), min_bytes=min_bytes)
        ns = sorted({t.n for t in single})
        intra_link = intra_fit.link(name or source or f"nccl-tests, {'/'.join(map(str, ns))} GPUs")
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
        if inter_algo == "auto":
            inter_algo, pts, left = _auto_points(multi, nic, inplace)
            notes.extend(left)
        else:
            pts = [p for t in multi for p in t.points(algo=inter_algo, inplace=inplace)]
        shape = ", ".join(sorted({f"{t.nodes} nodes × {t.per_node}" for t in multi}))
        inter_fit = fit_inter(pts, known, inter_algo, label=f"nccl-tests {shape}, {inter_algo}", min_bytes=min_bytes)
        inter_link = inter_fit.link(f"{source}, between nodes" if source else f"nccl-tests inter-node ({shape})")
        check_hardware(inter_link, nic)
        if inter_algo == "ring-nodes":
            if known is None:
                notes.append("no intra-node link to check against: assumed the NICs, not NVLink, limit the ring")
            else:
                big = max(multi, key=lambda t: t.rows[-1].nbytes)
                S = max(r.nbytes for r in big.rows)
                if ring_nodes_nvlink_bound(big.per_node, big.n, S, known, inter_link):
                    notes.append(f"at {S} bytes the fitted ring waits for NVLink ({known.name}), not the NICs: "
                                 f"the inter-node bandwidth is at least {inter_link.bw / 1e9:.1f} GB/s, not measured")
    return Calibration(intra_link, intra_fit, inter_link, inter_fit, tables, inter_algo, tuple(notes), algo,
                       tuple(pts) if multi else (), nic)
