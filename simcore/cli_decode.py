"""
python -m simcore decode — the decode-step roofline under tensor parallelism, as a table.

    python -m simcore decode --model llama3-70b --chip h100 --n 1,2,4,8,16,32
        [--batch 1 --ctx 4096 --w-bytes 2 --kv-bytes 2 --act-bytes 2 --algo ring --link nvlink4 --prec bf16]
    python -m simcore decode --model llama3-70b --topology dgx-h100 [--n 1,2,4,8,16] [--json]

One row per n: t_math, t_mem, t_comm, t_step (ms), KV bytes per chip per token, memory per
chip, and the term that binds. Rows with n > n_kv_heads are marked: the KV cache is
replicated there and stops shrinking. With --topology (a hardware preset: dgx-h100,
gb200-nvl72, tpu-v5e-16x16, tpu-v4-4x4x4) the all-reduce follows the machine: NVLink inside a
node, the hierarchical all-reduce over the NICs beyond it, bidirectional rings on a torus; the
table says where the node boundary is and which n the machine offers. --json prints the same
as one JSON object for scripts.
"""

from __future__ import annotations

import dataclasses

import json
import math
import sys

from .algorithms import ALGORITHMS, ALLREDUCE_ALGOS
from .links import LINKS
from .topology import MAX_DEVICES
from .cost_model import best_tp_degree, decode_sweep, tp_degree_problem
from .hw_specs import CHIPS, PRECISIONS
from .cost_model import tp_degrees
from .llm_math import MODELS
from .topology_presets import PRESETS


def register(subparsers):
    """Add the `decode` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser("decode", help="decode-step latency vs tensor-parallel degree n (roofline)")
    add_machine_args(p)
    p.add_argument("--n", default=None,
                   help="comma-separated device counts, e.g. 1,2,4,8,16 (default: the model's tensor-parallel "
                        "degrees up to 8, or those the topology offers)")
    p.add_argument("--batch", default="1", help="sequences decoded together (one token each)")
    p.add_argument("--ctx", default="4096", help="tokens already in each sequence's KV cache")
    p.add_argument("--w-bytes", dest="w_bytes", default="2", help="bytes per weight (2 bf16, 1 int8)")
    p.add_argument("--kv-bytes", dest="kv_bytes", default="2", help="bytes per KV element")
    p.add_argument("--act-bytes", dest="act_bytes", default="2", help="bytes per activation (all-reduce payload)")
    add_link_args(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return p


def add_machine_args(p):
    """The options `decode` and `step` share first: which model, on which chips, wired how."""
    p.add_argument("--model", default="llama3-70b", help=f"one of {', '.join(MODELS)}")
    p.add_argument("--chip", default=None, help=f"one of {', '.join(CHIPS)} (default h100, or the topology's chip)")
    p.add_argument("--topology", default=None,
                   help=f"a machine: one of {', '.join(PRESETS)} (default: every chip on one switch of --link)")
    p.add_argument("--launch", default="model", choices=("model", "graph", "eager"),
                   help="what a GPU machine's NCCL calls take: NCCL's tuning model alone (model, the default), or "
                        "no less than the wall time measured with CUDA graphs (graph) or eager launches (eager)")


def add_link_args(p):
    """The options `decode` and `step` share last: the all-reduce, the link and the peak's precision."""
    p.add_argument("--algo", default=None, help=f"all-reduce algorithm: {', '.join(ALGORITHMS['all-reduce'])} "
                                                 f"(default: the machine's choice; on one switch the ring)")
    p.add_argument("--link", default=None, help=f"one of {', '.join(LINKS)} (default: the chip's own)")
    p.add_argument("--prec", default="bf16", help=f"compute precision for the peak: {', '.join(PRECISIONS)}")


class BadValue(ValueError):
    pass


def parse_machine(args):
    """
    (model, topology or None, chip, link or None) from the options of add_machine_args and
    add_link_args, the one rule both commands follow: a named machine (--topology) brings its
    chip and its wiring, so --link with it is refused; otherwise the chips sit on one switch of
    --link (default: the chip's own link); the chip defaults to the machine's, else h100. The
    all-reduce algorithm and the precision are checked too.
    """
    model = pick_key(MODELS, args.model, "model")
    topo = pick_key(PRESETS, args.topology, "topology") if args.topology is not None else None
    if topo is not None and args.link is not None:
        raise BadValue("--link and --topology both say how the chips are connected: give one")
    launch = getattr(args, "launch", "model")
    if launch != "model":
        if topo is None or not topo.tuning:
            raise BadValue(f"--launch {launch} is a floor on NCCL's calls: give a GPU machine timed by NCCL's model "
                           f"(--topology {' or '.join(k for k, p in PRESETS.items() if p.tuning)})")
        topo = dataclasses.replace(topo, launch=launch)
    chip = pick_key(CHIPS, args.chip if args.chip is not None else (topo.chip if topo else "h100"), "chip")
    link = None if topo is not None else pick_key(LINKS, args.link if args.link is not None else chip.link, "link")
    if args.algo is not None:  # one switch: the lecture's algorithms; a machine: every registered one
        pick_key(ALGORITHMS["all-reduce"] if topo is not None else ALLREDUCE_ALGOS, args.algo, "all-reduce algorithm")
    try:
        chip.peak_flops(args.prec)
    except ValueError as e:
        raise BadValue(str(e)) from None
    return model, topo, chip, link


def pick_key(table, key, what):
    if key not in table:
        raise BadValue(f"unknown {what} {key!r}; choose one of {', '.join(table)}")
    return table[key]


def whole_number(text, what, low):
    try:
        v = int(str(text).strip())
    except ValueError:
        raise BadValue(f"{what} must be a whole number, got {text!r}") from None
    if v < low:
        raise BadValue(f"{what} must be >= {low}, got {v}")
    return v


def positive_number(text, what):
    try:
        v = float(text)
    except ValueError:
        raise BadValue(f"{what} must be a number, got {text!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise BadValue(f"{what} must be a finite number > 0, got {text!r}")
    return v


def _parse(args):
    """Validate every argument; returns the keyword arguments of decode_sweep."""
    model, topo, chip, link = parse_machine(args)
    if args.n is None:  # only the n that split the model (Megatron's rule), on the machine: its groups too
        top = (8 * topo.per_node if topo.record.layout == "nodes" else topo.max_devices) if topo else 8
        ns = tp_degrees(model, top, topo)
    else:
        ns = [whole_number(t, "each --n", 1) for t in str(args.n).split(",") if t.strip()] or [0]
    top = topo.max_devices if topo is not None else MAX_DEVICES
    if max(ns) > top or min(ns) < 1:
        raise BadValue(f"--n values must lie in 1..{top}, got {args.n!r}")
    return dict(model=model, chip=chip, link=link, ns=ns, batch=whole_number(args.batch, "--batch", 1),
                ctx=whole_number(args.ctx, "--ctx", 0), w_bytes=positive_number(args.w_bytes, "--w-bytes"),
                kv_bytes=positive_number(args.kv_bytes, "--kv-bytes"), act_bytes=positive_number(args.act_bytes, "--act-bytes"),
                algo=args.algo, compute_prec=args.prec, topology=topo)


def format_table(kw, sweep) -> str:
    """The decode table as text (header, one row per n, a note on KV replication)."""
    model, chip, link, topo = kw["model"], kw["chip"], kw["link"], kw.get("topology")
    G = model.n_kv_heads
    if topo is None:
        where = f"link {link.name} (alpha {link.alpha * 1e6:.2f} us, {link.bw / 1e9:.0f} GB/s per direction)"
    else:
        where = f"{topo.name}: {topology_note(topo)}"
    lines = [
        f"{model.name} decode on {chip.name}, {where}",
        f"batch {kw['batch']}, context {kw['ctx']}, bytes: weights {kw['w_bytes']:g}, KV {kw['kv_bytes']:g}, "
        f"activations {kw['act_bytes']:g}; all-reduce {_algo_note(kw['algo'], topo)}, peak {kw['compute_prec']}",
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
        if topo is not None:
            if sweep["valid"][i] and n > 1:
                notes.append(f"all-reduce {machine_pick(topo, int(n), float(sweep['msg_bytes'][i]), kw['algo'])}")
            if not sweep["valid"][i]:
                notes.append(f"no such group on {topo.name}")
            elif topo.record.layout == "nodes" and sweep["n_nodes"][i] > 1:
                notes.append(f"{int(sweep['n_nodes'][i])} nodes: crosses the network")
            elif topo.record.layout == "torus" and n > 1:
                notes.append(topo.layout(int(n)).describe().split(" (")[0])
        lines.append(
            f"{int(n):>5} {sweep['t_math'][i] * 1e3:>10.3f} {sweep['t_mem'][i] * 1e3:>10.3f} "
            f"{sweep['t_comm'][i] * 1e3:>10.3f} {sweep['t_step'][i] * 1e3:>10.3f} "
            f"{sweep['kv_per_chip_per_token'][i]:>14,.0f} {sweep['mem_per_chip'][i] / 1e9:>9.2f}  "
            f"{sweep['bound'][i]:<7} {'; '.join(notes)}".rstrip())
    heads = "1 KV head" if G == 1 else f"{G} KV heads"
    lines.append(f"{model.name} has {heads}: beyond n = {G} every chip keeps a whole KV group, "
                 f"so KV bytes per chip stop shrinking.")
    if topo is not None:
        valid = machine_tp_degrees(model, topo, sweep)
        lines.append(f"tensor-parallel degrees of {model.name} on {topo.name}: {', '.join(map(str, valid))}")
        if topo.record.layout == "nodes":
            lines.append(f"node boundary: beyond n = {topo.per_node} the all-reduce leaves NVLink for the network "
                         f"(each GPU's own NIC)")
        if kw["algo"] is None:  # the default: the machine's own pick, said for one n
            n0 = next((int(n) for n, v in zip(sweep["n"], sweep["valid"]) if v and n > 1), None)
            if n0 is not None:
                S = float(sweep["msg_bytes"][0])
                why = topo.topology(n0).choose("all-reduce", S)[2]
                lines.append(f"the machine's choice at n = {n0} for one all-reduce of {S / 1024:g} KiB: {why}")
    # a degree must split the model (Megatron's rule) and exist on the machine (finite t_step)
    valid = [int(n) for n, t in zip(sweep["n"], sweep["t_step"])
             if math.isfinite(t) and tp_degree_problem(model, int(n)) is None]
    if valid:
        best, fits = best_tp_degree(sweep, chip.hbm_bytes, valid)
        ms = sweep["t_step"][list(sweep["n"]).index(best)] * 1e3
        lines.append(f"best tensor-parallel degree listed: n = {best}, {ms:.3f} ms"
                     + ("" if fits else " (none of the valid n fits in HBM)"))
    lines.append("t_step = max(t_math, t_mem) + t_comm at peak rates: the roofline with no overlap; the lower "
                 "bound, communication fully hidden, is max(t_math, t_mem, t_comm) (--json: t_lower_bound).")
    return "\n".join(lines)


def machine_tp_degrees(model, topo, sweep):
    """The tensor-parallel degrees of `model` that machine `topo` offers (cost_model.tp_degrees), up to
    the sweep's largest n or four nodes, whichever is more."""
    return tp_degrees(model, max(int(max(sweep["n"])), 4 * topo.per_node), topo)


def machine_pick(topo, n, nbytes, algo=None) -> str:
    """What the machine runs one all-reduce of nbytes on n chips with: "ring LL", "innet Simple",
    "torus" (its plan: algo None is the machine's own choice), or the algorithm named with its NCCL
    protocol."""
    p = topo.topology(n).plan("all-reduce", nbytes, algo)
    return f"{p.algo} {p.protocol}" if p.protocol else p.algo


def _algo_note(algo, topo):
    if topo is None:
        return algo or "ring"
    if algo is not None:
        return algo
    rec = topo.record
    if rec.layout == "torus":
        return "bidirectional rings per torus axis"
    if rec.nccl:
        return "the machine's own for each n and size (NCCL's tuner: algorithm and protocol, in the notes)"
    return "the machine's own for each n and size (in the notes)"


def topology_note(topo):
    """One line on how a preset's chips are connected (its kind's record: simcore.kind_record)."""
    rec = topo.record
    intra = rec.main
    if rec.layout == "nodes":
        inter = rec.words_link("between")
        return (f"{topo.per_node} per node on {intra.name} ({intra.bw / 1e9:.0f} GB/s, "
                f"alpha {intra.alpha * 1e6:.2f} us), "
                f"{inter.name} between nodes ({inter.bw / 1e9:.0f} GB/s, alpha {inter.alpha * 1e6:.2f} us)")
    return (f"{'x'.join(map(str, rec.grid))} torus of {intra.name} ({intra.bw / 1e9:.0f} GB/s one way, "
            f"alpha {intra.alpha * 1e6:.2f} us), bidirectional rings per axis")


def to_json(kw, sweep) -> dict:
    """The sweep as plain JSON-able data (NaN -> None): settings, then one dict per n."""
    topo = kw.get("topology")
    link = kw["link"]
    out = {"model": kw["model"].name, "chip": kw["chip"].name, "batch": kw["batch"], "ctx": kw["ctx"],
           "w_bytes": kw["w_bytes"], "kv_bytes": kw["kv_bytes"], "act_bytes": kw["act_bytes"], "algo": kw["algo"],
           "prec": kw["compute_prec"], "topology": topo.key if topo else None,
           "launch": (topo.launch or "model") if topo is not None and topo.record.nccl else None,
           "link": None if link is None else {"name": link.name, "alpha": link.alpha, "bw": link.bw},
           "node_size": (topo.record.per_node if topo.record.layout == "nodes" else None) if topo else None,
           "valid_degrees": machine_tp_degrees(kw["model"], topo, sweep) if topo else None,
           "rows": []}
    for i in range(len(sweep["n"])):
        row = {}
        for k, v in sweep.items():
            x = v[i].item() if hasattr(v[i], "item") else v[i]
            row[k] = None if isinstance(x, float) and not math.isfinite(x) else x
        out["rows"].append(row)
    return out


def run(args) -> int:
    """Print the table for parsed arguments; 2 (and one line on stderr) for a bad value."""
    try:
        kw = _parse(args)
    except BadValue as e:
        print(f"simcore decode: {e}", file=sys.stderr)
        return 2
    sweep = decode_sweep(**kw)
    if args.json:
        print(json.dumps(to_json(kw, sweep), indent=1))
    else:
        print(format_table(kw, sweep))
    return 0
