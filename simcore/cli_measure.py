"""
Two commands that calibrate the simulator's link against real numbers:

    python -m simcore measure --n 4 [--sizes 8B..64MiB] [--ops all-reduce:ring,all-gather]
                              [--repeats 5] [--warmup 2] [--hosts h1,h2] --out m.json
    python -m simcore nccl-import all_reduce.txt [--op all-reduce] [--n 8] [--min-bytes 256MiB]
                                  [--nodes 2 --per-node 8] [--intra nvlink4] [--inter-algo auto]
                                  [--nic ib-ndr400]
                                  [--out link.json]

`measure` times Open MPI's collectives on n local (or cluster) ranks, fits α and β per
collective and for all of them together, and prints the model's prediction beside each
measurement. `nccl-import` does the same fit on nccl-tests' printed output; a run over several
nodes (rank lines on several hosts, or --nodes) gives the inter-node link.
"""

from __future__ import annotations

import json
import os
import sys

from .algorithms import OPS
from .calibrate import BAD_FIT, FIT_FORMS, INTER_ALIASES, MEASURED, fit, fit_each, fit_link, link_to_dict, load_link
from .links import LINKS
from .nccl_log import calibrate_nccl_tests

COMMANDS = ("measure", "nccl-import")


def register(subparsers):
    """Add the `measure` and `nccl-import` subcommands to simcore's argparse subparsers."""
    m = subparsers.add_parser("measure",
                              help="time Open MPI's collectives and fit alpha and beta (needs the mpi extra)")
    m.add_argument("--n", type=int, default=4, help="MPI ranks (default 4)")
    m.add_argument("--sizes", default="8B..64MiB",
                   help="message sizes S: LOW..HIGH (powers of 2), LOW..HIGH:x4, or a list 4KiB,1MiB")
    m.add_argument("--ops", default="default",
                   help="op:algo list, e.g. all-reduce:ring,all-gather:ring; 'default' (ring for all three, "
                        "rd and linear all-reduce) or 'all'")
    m.add_argument("--repeats", type=int, default=5, help="timed runs per size (the median is kept)")
    m.add_argument("--warmup", type=int, default=2, help="untimed runs per size first")
    m.add_argument("--hosts", help="mpiexec -H list for a cluster, e.g. host1:4,host2:4 (default: this machine)")
    m.add_argument("--allow-run-as-root", action="store_true",
                   help="let Open MPI run as root (sets OMPI_ALLOW_RUN_AS_ROOT[_CONFIRM] for the ranks)")
    m.add_argument("--timeout", type=float, default=900.0, help="seconds before giving up (default 900)")
    m.add_argument("--out", help="write points, fits and the link to this JSON file")
    q = subparsers.add_parser("nccl-import", help="fit alpha and beta to nccl-tests output")
    q.add_argument("file", help="text printed by all_reduce_perf, all_gather_perf or reduce_scatter_perf")
    q.add_argument("--op", choices=OPS, help="which collective (default: read from the file)")
    q.add_argument("--n", type=int, help="ranks (default: count of '# Rank' lines in the file)")
    q.add_argument("--algo", default="ring", help="closed form to fit against (default ring, as busbw assumes)")
    q.add_argument("--inplace", action="store_true", help="fit the in-place columns instead of out-of-place")
    q.add_argument("--name", help="the link's name (default: the file's name)")
    q.add_argument("--min-bytes", dest="min_bytes",
                   help="fit the bandwidth on sizes >= this only, e.g. 256MiB (default: the plateau, sizes "
                        "whose algbw is within 10%% of the largest sizes)")
    q.add_argument("--nodes", type=int, help="nodes the run spanned (default: hosts in the '# Rank' lines)")
    q.add_argument("--per-node", dest="per_node", type=int, help="GPUs per node (default: from the '# Rank' lines)")
    q.add_argument("--intra", help=f"intra-node link for a multi-node run: one of {', '.join(LINKS)} or a link "
                                   f"file (default: fitted to the one-node runs in the same file)")
    q.add_argument("--inter-algo", dest="inter_algo", choices=("auto",) + FIT_FORMS + tuple(INTER_ALIASES),
                   default="auto",
                   help="closed form for multi-node runs: auto (default) fits the model NCCL ran — its algorithm "
                        "lines (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING) or else the machine's choice at each size; "
                        "ring-nodes (NCCL's rings, one channel per NIC; 'ring' means the same), nvls-tree (NCCL's "
                        "NVLS Tree), hier (the registry's hierarchical all-reduce) for every size")
    q.add_argument("--nic", help=f"the NIC's hardware, a link name ({', '.join(LINKS)}) or a link file (default "
                                 f"ib-ndr400): a fitted inter-node link faster than it is refused")
    q.add_argument("--out", help="write the link(s) as JSON")


def run(args) -> int:
    if args.cmd == "measure":
        return measure_cmd(args)
    if args.cmd == "nccl-import":
        return nccl_import_cmd(args)
    raise ValueError(f"cli_measure does not handle {args.cmd!r}")


def _fail(msg, code=2):
    print(f"simcore: {msg}", file=sys.stderr)
    return code


def parse_ops(text, n):
    """'default' | 'all' | 'op[:algo],…' -> [(op, algo)] (algo defaults to ring)."""
    from .mpi import DEFAULT_OPS, MPI_ALGOS, check_algo

    text = text.strip()
    if text == "default":
        return list(DEFAULT_OPS)
    if text == "all":
        out = []
        for op, algo in MPI_ALGOS:
            try:
                check_algo(op, algo, n)
            except ValueError:
                continue  # e.g. recursive doubling all-gather needs a power-of-two n
            out.append((op, algo))
        return out
    out = []
    for item in text.split(","):
        op, _, algo = item.strip().partition(":")
        check_algo(op, algo or "ring", n)
        out.append((op, algo or "ring"))
    if not out:
        raise ValueError("no operations given in --ops")
    return out


def _fmt_bytes(b):
    b = int(b)
    for unit, k in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= k and b % k == 0:
            return f"{b // k} {unit}"
    return f"{int(b)} B"


def _fmt_t(s):
    if s >= 1e-3:
        return f"{s * 1e3:9.3f} ms"
    return f"{s * 1e6:9.2f} us"


def _fit_line(f):
    plateau = f", beta from {f.n_plateau}" if f.n_plateau and f.n_plateau < f.n_points else ""
    return (f"alpha {f.alpha * 1e6:7.2f} us   beta {f.bw / 1e9:7.2f} GB/s   "
            f"R2 {f.r2:6.3f}   worst error {f.worst_rel * 100:5.1f}%  ({f.n_points} points{plateau})")


def _bad_fit_warning(f, what):
    """One line when the fit explains its points badly (calibrate.BAD_FIT), else ''."""
    if not f.bad:
        return ""
    return (f"warning: the {what} fit explains the data badly: worst error {f.worst_rel * 100:.1f}% is above "
            f"{BAD_FIT * 100:.0f}% (nccl-tests scatters a few %, the alpha-beta ramp 10-20%); NCCL may have run "
            f"another algorithm (Tree, NVLS: rerun with NCCL_ALGO=Ring) or the node count is wrong")


def _write_json(path, data):
    tmp = path + ".part"
    try:
        with open(tmp, "w") as fh:
            json.dump(data, fh, indent=1)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise ValueError(f"cannot write {path}: {e.strerror}") from None


def print_report(points, each, link_fit, out=None):
    """Per (op, algo): its own fit, then S, measured, both models' predictions and errors, busbw."""
    out = out or sys.stdout
    for (op, algo), f in each.items():
        print(f"\n{op} ({algo}): {_fit_line(f)}", file=out)
        print(f"  {'S':>9}  {'measured':>12}  {'own fit':>12}  {'error':>7}  {'link':>12}  {'error':>7}  "
              f"{'busbw':>10}", file=out)
        for p in points:
            if (p.op, p.algo) != (op, algo):
                continue
            own = float(f.predict(op, algo, p.n, p.nbytes))
            link = float(link_fit.predict(op, algo, p.n, p.nbytes))
            print(f"  {_fmt_bytes(p.nbytes):>9}  {_fmt_t(p.seconds)}  {_fmt_t(own)}  "
                  f"{(own - p.seconds) / p.seconds * 100:+6.1f}%  {_fmt_t(link)}  "
                  f"{(link - p.seconds) / p.seconds * 100:+6.1f}%  {p.busbw / 1e9:6.2f} GB/s", file=out)


def measure_cmd(args) -> int:
    from .mpi import Cancelled, MPIError, MPIUnavailable, measure, parse_sizes

    try:
        if args.n < 2:
            raise ValueError(f"--n must be at least 2 ranks, got {args.n}")
        if args.repeats < 1 or args.warmup < 0:
            raise ValueError("--repeats must be >= 1 and --warmup >= 0")
        sizes = parse_sizes(args.sizes)
        ops = parse_ops(args.ops, args.n)
    except ValueError as e:
        return _fail(str(e))

    def progress(done, total):
        print(f"\r  measuring {done}/{total}", end="", file=sys.stderr, flush=True)

    try:
        points, info = measure(args.n, sizes, ops, warmup=args.warmup, repeats=args.repeats, hosts=args.hosts,
                               allow_root=args.allow_run_as_root, timeout=args.timeout, progress=progress)
    except (MPIUnavailable, MPIError) as e:
        print(file=sys.stderr)
        return _fail(str(e), 1)
    except (KeyboardInterrupt, Cancelled):
        print(file=sys.stderr)
        return _fail("measurement interrupted", 130)
    print(file=sys.stderr)
    each = fit_each(points)
    try:
        link, link_fit = fit_link(points, MEASURED)
        everything = fit(points, label="all measurements")
    except ValueError as e:
        return _fail(f"cannot fit alpha and beta: {e}", 1)
    print(f"{info['library'].split(',')[0]} on {args.n} ranks ({info['hosts']}): {len(sizes)} sizes "
          f"{_fmt_bytes(sizes[0])} .. {_fmt_bytes(sizes[-1])}, {args.warmup} warm-up + {args.repeats} timed runs "
          f"each, median of the slowest rank")
    print("model: t = a*alpha + b*S/beta, a and b from each algorithm's closed form; alpha from every point, "
          "beta from the bandwidth plateau (relative errors)")
    print_report(points, each, link_fit)
    print(f"\nthe link ({link_fit.label}): {_fit_line(link_fit)}")
    if everything.n_points != link_fit.n_points:
        print(f"one alpha and beta for all {everything.n_points} points: {_fit_line(everything)}")
    print(f"LinkSpec({link.name!r}, alpha={link.alpha:.4g}, bw={link.bw:.4g})")
    if args.out:
        data = {"schema": "shard-lab/measurement", "version": 1, "info": info,
                "points": [p.to_dict() for p in points],
                "fits": {f"{op} {algo}": f.to_dict() for (op, algo), f in each.items()},
                "fit_all": everything.to_dict(),
                "link": link_to_dict(link, link_fit, source="python -m simcore measure")}
        try:
            _write_json(args.out, data)
        except ValueError as e:
            return _fail(str(e))
        print(f"wrote {args.out}")
    return 0


def _intra_arg(text, flag="--intra"):
    if text is None:
        return None
    if text in LINKS:
        return LINKS[text]
    try:
        return load_link(text)
    except OSError as e:
        raise ValueError(f"{flag} {text!r} is neither a link name ({', '.join(LINKS)}) nor a readable "
                         f"link file: {e.strerror}") from None


def _print_skipped(tables, out=None):
    out = out or sys.stdout
    for t in tables:
        if t.skipped:
            print(f"  skipped {len(t.skipped)} line(s) inside the {t.op} table (kept the rows after them):", file=out)
            for lineno, text in t.skipped:
                print(f"    line {lineno}: {text[:100]}", file=out)


def print_nodes_report(tables, cal, inplace=False, out=None):
    """Each multi-node point beside the fitted multi-node model: the inter fit's own predict()
    (the computation its worst error is the max of), so rows and summary agree."""
    out = out or sys.stdout
    f = cal.inter_fit
    for t in tables:
        if t.nodes < 2:
            continue
        print(f"\n{t.op} on {t.nodes} nodes x {t.per_node} ({cal.inter_algo} model):", file=out)
        print(f"  {'S':>9}  {'measured':>12}  {'model':>12}  {'error':>7}  {'busbw':>10}", file=out)
        # the points the fit used (cal.inter_points: the sizes NCCL ran its model at; the notes list the rest)
        pts = [p for p in cal.inter_points if (p.op, p.n, p.nodes) == (t.op, t.n, t.nodes)]
        for p, err in zip(pts, f.errors(pts)):
            print(f"  {_fmt_bytes(p.nbytes):>9}  {_fmt_t(p.seconds)}  {_fmt_t(f.predict_point(p))}  "
                  f"{err * 100:+6.1f}%  {p.busbw / 1e9:6.2f} GB/s", file=out)


def nccl_import_cmd(args) -> int:
    from .scenarios import parse_bytes

    try:
        with open(args.file, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as e:
        return _fail(f"cannot read {args.file}: {e.strerror}")
    try:
        if args.n is not None and args.n < 2:
            raise ValueError(f"--n must be at least 2, got {args.n}")
        for flag, v in (("--nodes", args.nodes), ("--per-node", args.per_node)):
            if v is not None and v < 1:
                raise ValueError(f"{flag} must be at least 1, got {v}")
        min_bytes = parse_bytes(args.min_bytes) if args.min_bytes is not None else None
        intra = _intra_arg(args.intra)
        nic = _intra_arg(getattr(args, "nic", None), "--nic")
        cal = calibrate_nccl_tests(text, op=args.op, n=args.n, algo=args.algo, inplace=args.inplace, name=args.name,
                                   min_bytes=min_bytes, nodes=args.nodes, per_node=args.per_node, intra=intra,
                                   inter_algo=args.inter_algo, nic=nic,
                                   source=os.path.splitext(os.path.basename(args.file))[0])
    except ValueError as e:
        return _fail(f"{args.file}: {e}")
    tables = cal.tables
    for t in tables:
        where = f" on {t.nodes} nodes x {t.per_node}" if t.nodes > 1 else ""
        print(f"{t.op} on {t.n} ranks{where}: {len(t.rows)} sizes {_fmt_bytes(t.rows[0].nbytes)} .. "
              f"{_fmt_bytes(t.rows[-1].nbytes)}")
    _print_skipped(tables)
    if cal.intra_fit is not None:
        points = [p for t in tables if t.nodes == 1 for p in t.points(algo=args.algo, inplace=args.inplace)]
        print_report(points, fit_each(points, min_bytes), cal.intra_fit)
        print(f"\nintra-node fit ({args.algo} closed form): {_fit_line(cal.intra_fit)}")
        warn = _bad_fit_warning(cal.intra_fit, "intra-node")
        if warn:
            print(warn)
        print(f"LinkSpec({cal.intra.name!r}, alpha={cal.intra.alpha:.4g}, bw={cal.intra.bw:.4g})")
    if cal.inter_fit is not None:
        print_nodes_report(tables, cal, args.inplace)
        print(f"\ninter-node fit ({cal.inter_algo} closed form, per GPU NIC): {_fit_line(cal.inter_fit)}")
        print(f"  at most the NIC's hardware: {cal.nic.name}, {cal.nic.bw / 1e9:.1f} GB/s (--nic)")
        warn = _bad_fit_warning(cal.inter_fit, "inter-node")
        if warn:
            print(warn)
        print(f"LinkSpec({cal.inter.name!r}, alpha={cal.inter.alpha:.4g}, bw={cal.inter.bw:.4g})")
    for note in cal.notes:
        print(f"note: {note}")
    if args.out:
        main, main_fit = (cal.intra, cal.intra_fit) if cal.intra is not None else (cal.inter, cal.inter_fit)
        data = link_to_dict(main, main_fit, source=os.path.basename(args.file))
        if cal.intra is not None and cal.inter is not None:
            data["inter"] = link_to_dict(cal.inter, cal.inter_fit)
        elif cal.intra is None:
            data["role"] = "inter-node"
        try:
            _write_json(args.out, data)
        except ValueError as e:
            return _fail(str(e))
        print(f"wrote {args.out}")
    return 0
