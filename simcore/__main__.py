"""
python -m simcore selftest
python -m simcore trace --op all-reduce --algo ring --n 8 --bytes 1MiB --format chrome --out t.json [--summary]
python -m simcore trace --n 256 --format csv --out t.csv.gz
python -m simcore decode --model llama3-70b --chip h100 --n 1,2,4,8,16
python -m simcore step --model llama3-70b --chip h100 --n 8 --batch 32 --ctx 8192 [--overlap async] --out step.json
python -m simcore measure --n 4 --sizes 8B..64MiB --out m.json     (needs the `mpi` extra)
python -m simcore nccl-import all_reduce_perf.txt --out link.json
python -m simcore record SCRIPT.py [args] [--out run.json] [--show]
python -m simcore mesh --mesh X=2,Y=4 [--machine dgx-h100] --program NAME [--json] [--mpi N]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .algorithms import ALLREDUCE_ALGOS, OPS, all_algorithm_names, message_count, t_formula
from .links import LINKS
from .topology import MAX_DEVICES


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument in one line and exits with code 2."""

    def error(self, message):
        print(f"simcore: {message}", file=sys.stderr)
        raise SystemExit(2)


def selftest() -> int:
    from .comm_sim import Comm
    from .topology import switch
    from .sharding import make_comm, matmul_case1, matmul_case2, matmul_case3, matmul_case4, shard, unshard

    rng = np.random.default_rng(0)
    n = 4
    comm = make_comm(n)
    A, B = rng.standard_normal((8, 12)), rng.standard_normal((12, 16))
    C = A @ B
    assert np.allclose(unshard(matmul_case1(shard(A, 0, n), B), 0), C)
    assert all(np.allclose(c, C) for c in matmul_case2(comm, shard(A, 1, n), B))
    for algo in ALLREDUCE_ALGOS:
        assert all(np.allclose(c, C) for c in matmul_case3(comm, shard(A, 1, n), shard(B, 0, n), algo=algo))
    assert np.allclose(unshard(matmul_case3(comm, shard(A, 1, n), shard(B, 0, n), scatter_axis=1), 1), C)
    assert np.allclose(unshard(matmul_case4(comm, shard(A, 0, n), shard(B, 1, n)), 0), C)
    print("ok  four sharded matmul cases equal A @ B (n = 4; case 3 with every all-reduce algorithm)")

    checked = 0
    for algo, rec in ALLREDUCE_ALGOS.items():
        fn = rec.fn
        for n in range(1, 17):
            arrays = [rng.standard_normal(4 * n) for _ in range(n)]
            comm = Comm(switch(n), byte_scale=1000.0)
            out = fn(comm, arrays)
            assert all(np.allclose(o, np.sum(arrays, axis=0)) for o in out), (algo, n)
            S = arrays[0].nbytes * 1000.0
            want = t_formula(algo, n, S, comm.link.alpha, comm.link.bw)
            assert abs(comm.time - want) <= 1e-9 * max(want, 1e-300), (algo, n, comm.time, want)
            assert len(comm.trace.messages) == message_count(algo, n), (algo, n)
            checked += 1
    print(f"ok  all-reduce {'/'.join(ALLREDUCE_ALGOS)}: values = numpy sum, simulated time = closed form, "
          f"message count = algorithm's ({checked} runs, n = 1..16)")

    for op in OPS.values():  # an op with its own self-test (registry.Op.selftest): all-to-all
        if op.selftest is not None:
            print(f"ok  {op.selftest(rng, make_comm)}")

    from .tensor_parallel import shard_params_tp, tp_forward
    from .transformer_lab import TINY, forward, init_params

    params = init_params(TINY, seed=0)
    toks = rng.integers(0, TINY.vocab, size=(2, 9))
    ref = forward(params, TINY, toks)
    worst = {}
    for n in (1, 2, 4, 8):
        comm = make_comm(n)
        out = tp_forward(shard_params_tp(params, TINY, n), TINY, toks, comm)
        worst[n] = float(np.max(np.abs(out - ref)))
        assert worst[n] < 1e-10, (n, worst[n])
        assert len(comm.trace.collectives) == 2 * TINY.n_layers + 1
    print("ok  tensor-parallel logits = single-device logits: "
          + ", ".join(f"n={n} max|Δ|={w:.1e}" for n, w in worst.items()))
    print("simcore selftest passed")
    return 0


def trace_cmd(args) -> int:
    from .calibrate import busbw_summary
    from .scenarios import parse_bytes, run_collective

    try:
        nbytes = parse_bytes(args.bytes)
        run = run_collective(args.op, args.n, nbytes, args.algo, args.link)
    except ValueError as e:
        print(f"simcore: {e}", file=sys.stderr)
        return 2
    tr = run.trace
    if args.out:
        err = _write_trace(tr, args.out, args.format, flows=args.flows)
        if err:
            print(f"simcore: {err}", file=sys.stderr)
            return 2
    if args.summary or not args.out:
        c = tr.collectives[0]
        t = c.t_end - c.t_start
        link = run.link
        want = t_formula(run.algo, run.n, c.nbytes, link.alpha, link.bw, op=run.op)
        print(f"{run.op} ({run.algo}) on {run.n} devices, {link.name}: alpha {link.alpha * 1e6:.2f} us, "
              f"bw {link.bw / 1e9:.0f} GB/s per direction")
        print(f"  size S        {c.nbytes:,.0f} bytes")
        print(f"  messages      {len(tr.messages)} in {c.n_steps} steps")
        print(f"  time          {t * 1e6:.3f} us (closed form {want * 1e6:.3f} us)")
        if t > 0:
            print(f"  algbw         {c.nbytes / t / 1e9:.2f} GB/s")
            print(busbw_summary(run.op, run.algo, run.n, c.nbytes, t, link))  # nccl-tests' busbw, and the port's
    if args.out:
        m = len(tr.messages)
        what = {"chrome": f"{m} messages as {2 * m} slices", "csv": f"{m} message rows", "json": f"{m} messages"}
        print(f"wrote {args.out}: {what[args.format]} ({args.format})")
    return 0


def _write_trace(tr, path: str, fmt: str, flows: bool = True) -> str | None:
    """Write the trace (Trace.write: streamed, gzipped for .gz, atomic). Returns an error or None."""
    try:
        tr.write(path, fmt, flows=flows)
    except OSError as e:
        return f"cannot write {path}: {e.strerror or e}"
    return None


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _Parser(prog="python -m simcore", description="Shard Lab's engine from the command line.")
    sub = parser.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    if argv[:1] == ["record"]:  # record's own start is the script's overhead: no other command is loaded
        from . import record

        record.register(sub)
        argv, script_args = record.split_argv(argv)
        return record.run(parser.parse_args(argv), script_args)
    sub.add_parser("selftest", help="check collectives, matmul cases, closed forms and the TP forward")
    tp = sub.add_parser("trace", help="simulate one collective and write its trace")
    tp.add_argument("--op", choices=OPS, default="all-reduce")
    tp.add_argument("--algo", choices=all_algorithm_names(),
                    help="default: the op's own (" + ", ".join(f"{k}: {op.default}" for k, op in OPS.items()) + ")")
    tp.add_argument("--n", type=int, default=8, help=f"devices, 1 to {MAX_DEVICES}")
    tp.add_argument("--bytes", default="1MiB", help="S, the full array (e.g. 4KiB, 1MiB, 1GB)")
    tp.add_argument("--link", choices=list(LINKS), default="nvlink4")
    tp.add_argument("--format", choices=("json", "chrome", "csv"), default="json",
                    help="json: the trace itself (columns); chrome: for Perfetto / chrome://tracing; "
                         "csv: a row per message")
    tp.add_argument("--out", help="file to write, gzipped if it ends in .gz (omit to print the summary only)")
    tp.add_argument("--flows", action="store_true",
                    help="chrome: draw an arrow from every send to its receive (about 80 bytes more a message)")
    tp.add_argument("--summary", action="store_true", help="print time, algbw and busbw")
    from . import cli_decode, cli_measure, cli_step

    cli_decode.register(sub)
    cli_measure.register(sub)
    cli_step.register(sub)
    from .mesh import cli as mesh_cli

    mesh_cli.register(sub)
    from . import record

    record.register(sub)  # listed in --help; run above
    args = parser.parse_args(argv)
    if args.cmd == "selftest":
        return selftest()
    if args.cmd == "trace":
        return trace_cmd(args)
    if args.cmd in ("measure", "nccl-import"):
        return cli_measure.run(args)
    if args.cmd == "step":
        return cli_step.run(args)
    if args.cmd == "mesh":
        return mesh_cli.run(args)
    return cli_decode.run(args)


if __name__ == "__main__":
    sys.exit(main())
