"""
python -m simcore decode — the decode-step roofline under tensor parallelism, as a table.

    python -m simcore decode --model llama3-70b --chip h100 --n 1,2,4,8,16,32
        [--batch 1 --ctx 4096 --w-bytes 2 --kv-bytes 2 --act-bytes 2 --algo ring --link nvlink4 --prec bf16]

One row per n: t_math, t_mem, t_comm, t_step (ms), KV bytes per chip per token, memory per
chip, and the term that binds. Rows with n > n_kv_heads are marked: the KV cache is
replicated there and stops shrinking.
"""

from __future__ import annotations

import math
import sys

from .comm_sim import ALLREDUCE_ALGOS, LINKS, MAX_DEVICES
from .cost_model import best_tp_degree, decode_sweep, tp_degree_problem
from .hw_specs import CHIPS, PRECISIONS
from .llm_math import MODELS


def register(subparsers):
    """Add the `decode` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser("decode", help="decode-step latency vs tensor-parallel degree n (roofline)")
    p.add_argument("--model", default="llama3-70b", help=f"one of {', '.join(MODELS)}")
    p.add_argument("--chip", default="h100", help=f"one of {', '.join(CHIPS)}")
    p.add_argument("--n", default="1,2,4,8", help="comma-separated device counts, e.g. 1,2,4,8,16")
    p.add_argument("--batch", default="1", help="sequences decoded together (one token each)")
    p.add_argument("--ctx", default="4096", help="tokens already in each sequence's KV cache")
    p.add_argument("--w-bytes", dest="w_bytes", default="2", help="bytes per weight (2 bf16, 1 int8)")
    p.add_argument("--kv-bytes", dest="kv_bytes", default="2", help="bytes per KV element")
    p.add_argument("--act-bytes", dest="act_bytes", default="2", help="bytes per activation (all-reduce payload)")
    p.add_argument("--algo", default="ring", help=f"all-reduce algorithm: {', '.join(ALLREDUCE_ALGOS)}")
    p.add_argument("--link", default=None, help=f"one of {', '.join(LINKS)} (default: the chip's own)")
    p.add_argument("--prec", default="bf16", help=f"compute precision for the peak: {', '.join(PRECISIONS)}")
    return p


class _BadValue(ValueError):
    pass


def _pick(table, key, what):
    if key not in table:
        raise _BadValue(f"unknown {what} {key!r}; choose one of {', '.join(table)}")
    return table[key]


def _whole(text, what, low):
    try:
        v = int(str(text).strip())
    except ValueError:
        raise _BadValue(f"{what} must be a whole number, got {text!r}") from None
    if v < low:
        raise _BadValue(f"{what} must be >= {low}, got {v}")
    return v


def _positive(text, what):
    try:
        v = float(text)
    except ValueError:
        raise _BadValue(f"{what} must be a number, got {text!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise _BadValue(f"{what} must be a finite number > 0, got {text!r}")
    return v


def _parse(args):
    """Validate every argument; returns the keyword arguments of decode_sweep."""
    model = _pick(MODELS, args.model, "model")
    chip = _pick(CHIPS, args.chip, "chip")
    link = _pick(LINKS, args.link if args.link is not None else chip.link, "link")
    _pick(ALLREDUCE_ALGOS, args.algo, "all-reduce algorithm")
    try:
        chip.peak_flops(args.prec)
    except ValueError as e:
        raise _BadValue(str(e)) from None
    ns = [_whole(t, "each --n", 1) for t in str(args.n).split(",") if t.strip()] or [0]
    if max(ns) > MAX_DEVICES or min(ns) < 1:
        raise _BadValue(f"--n values must lie in 1..{MAX_DEVICES}, got {args.n!r}")
    return dict(model=model, chip=chip, link=link, ns=ns, batch=_whole(args.batch, "--batch", 1),
                ctx=_whole(args.ctx, "--ctx", 0), w_bytes=_positive(args.w_bytes, "--w-bytes"),
                kv_bytes=_positive(args.kv_bytes, "--kv-bytes"), act_bytes=_positive(args.act_bytes, "--act-bytes"),
                algo=args.algo, compute_prec=args.prec)


def format_table(kw, sweep) -> str:
    """The decode table as text (header, one row per n, a note on KV replication)."""
    model, chip, link = kw["model"], kw["chip"], kw["link"]
    G = model.n_kv_heads
    lines = [
        f"{model.name} decode on {chip.name}, link {link.name} "
        f"(alpha {link.alpha * 1e6:.2f} us, {link.bw / 1e9:.0f} GB/s per direction)",
        f"batch {kw['batch']}, context {kw['ctx']}, bytes: weights {kw['w_bytes']:g}, KV {kw['kv_bytes']:g}, "
        f"activations {kw['act_bytes']:g}; all-reduce {kw['algo']}, peak {kw['compute_prec']}",
        f"{'n':>5} {'t_math ms':>10} {'t_mem ms':>10} {'t_comm ms':>10} {'t_step ms':>10} "
        f"{'KV B/chip/tok':>14} {'GB/chip':>9}  {'bound':<7} note",
    ]
    for i, n in enumerate(sweep["n"]):
        notes = []
        problem = tp_degree_problem(model, int(n))
        if problem:
            notes.append(f"not a TP degree: {problem}")
        if n > G:
            notes.append(f"KV replicated x{sweep['kv_replicas'][i]:g}")
        if sweep["mem_per_chip"][i] > chip.hbm_bytes:
            notes.append(f"exceeds {chip.hbm_bytes / 1e9:.0f} GB HBM")
        lines.append(
            f"{int(n):>5} {sweep['t_math'][i] * 1e3:>10.3f} {sweep['t_mem'][i] * 1e3:>10.3f} "
            f"{sweep['t_comm'][i] * 1e3:>10.3f} {sweep['t_step'][i] * 1e3:>10.3f} "
            f"{sweep['kv_per_chip_per_token'][i]:>14,.0f} {sweep['mem_per_chip'][i] / 1e9:>9.2f}  "
            f"{sweep['bound'][i]:<7} {'; '.join(notes)}".rstrip())
    heads = "1 KV head" if G == 1 else f"{G} KV heads"
    lines.append(f"{model.name} has {heads}: beyond n = {G} every chip keeps a whole KV group, "
                 f"so KV bytes per chip stop shrinking.")
    valid = [int(n) for n in sweep["n"] if tp_degree_problem(model, int(n)) is None]
    if valid:
        best, fits = best_tp_degree(sweep, chip.hbm_bytes, valid)
        ms = sweep["t_step"][list(sweep["n"]).index(best)] * 1e3
        lines.append(f"best tensor-parallel degree listed: n = {best}, {ms:.3f} ms"
                     + ("" if fits else " (none of the valid n fits in HBM)"))
    lines.append("t_step = max(t_math, t_mem) + t_comm at peak rates, communication not overlapped.")
    return "\n".join(lines)


def run(args) -> int:
    """Print the table for parsed arguments; 2 (and one line on stderr) for a bad value."""
    try:
        kw = _parse(args)
    except _BadValue as e:
        print(f"simcore decode: {e}", file=sys.stderr)
        return 2
    sweep = decode_sweep(**kw)
    print(format_table(kw, sweep))
    return 0
