"""
Two commands that calibrate the simulator's link against real numbers:

    python -m simcore measure --n 4 [--sizes 8B..64MiB] [--ops all-reduce:ring,all-gather]
                              [--repeats 5] [--warmup 2] [--hosts h1,h2] --out m.json
    python -m simcore nccl-import all_reduce.txt [--op all-reduce] [--n 8] [--out link.json]

`measure` times Open MPI's collectives on n local (or cluster) ranks, fits α and β per
collective and for all of them together, and prints the model's prediction beside each
measurement. `nccl-import` does the same fit on nccl-tests' printed output.
"""

from __future__ import annotations

import json
import os
import sys

from .calibrate import MEASURED, fit, fit_each, fit_link, fit_nccl_tests, link_to_dict
from .comm_sim import OPS

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
    q.add_argument("--name", help="the link's name (default: 'nccl-tests, N GPUs')")
    q.add_argument("--out", help="write the link as JSON")


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
    return (f"alpha {f.alpha * 1e6:7.2f} us   beta {f.bw / 1e9:7.2f} GB/s   "
            f"R2 {f.r2:6.3f}   worst error {f.worst_rel * 100:5.1f}%  ({f.n_points} points)")


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
    print("model: t = a*alpha + b*S/beta, a and b from each algorithm's closed form; "
          "fits weight every point by 1/t^2 (relative error)")
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


def nccl_import_cmd(args) -> int:
    try:
        with open(args.file, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as e:
        return _fail(f"cannot read {args.file}: {e.strerror}")
    try:
        if args.n is not None and args.n < 2:
            raise ValueError(f"--n must be at least 2, got {args.n}")
        link, f, tables = fit_nccl_tests(text, op=args.op, n=args.n, algo=args.algo, inplace=args.inplace,
                                         name=args.name)
    except ValueError as e:
        return _fail(f"{args.file}: {e}")
    points = [p for t in tables for p in t.points(algo=args.algo, inplace=args.inplace)]
    for t in tables:
        print(f"{t.op} on {t.n} ranks: {len(t.rows)} sizes {_fmt_bytes(t.rows[0].nbytes)} .. "
              f"{_fmt_bytes(t.rows[-1].nbytes)}")
    print_report(points, fit_each(points), f)
    print(f"\nfit ({args.algo} closed form): {_fit_line(f)}")
    print(f"LinkSpec({link.name!r}, alpha={link.alpha:.4g}, bw={link.bw:.4g})")
    if args.out:
        try:
            _write_json(args.out, link_to_dict(link, f, source=os.path.basename(args.file)))
        except ValueError as e:
            return _fail(str(e))
        print(f"wrote {args.out}")
    return 0
