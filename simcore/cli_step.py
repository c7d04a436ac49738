"""
python -m simcore step — one decode (or prefill) step of a real model, op by op, as a timeline.

    python -m simcore step --model llama3-70b --chip h100 --n 8 --batch 32 --ctx 8192
        [--overlap async] [--prefill L] [--sequence-parallel] [--w-bytes 1 --kv-bytes 1]
        [--elementwise] [--gather-logits] [--topology dgx-h100] --out step.json

Simulates the step (step_sim), prints it beside the roofline's t_math, t_mem, t_comm and t_step
(cost_model) with the overlapped closed form and why the two differ, and writes a Chrome trace:
per GPU a compute track (every op, category "compute") beside its send / receive ports
(category "comm") — open it in Perfetto (ui.perfetto.dev) or chrome://tracing.
With --topology (a topology_presets machine: dgx-h100, gb200-nvl72, tpu-v5e-16x16, tpu-v4-4x4x4)
the chips are wired as that machine wires n of them — the node boundary, the torus slice — and
the chip defaults to the machine's; the roofline's t_comm is then that machine's all-reduce.
"""

from __future__ import annotations

import sys

from .cli_decode import BadValue, pick_key, positive_number, whole_number, add_link_args, add_machine_args, parse_machine
from .comm_sim import MAX_DEVICES
from .cost_model import tp_decode_step, tp_prefill_step, tp_step_overlap
from .step_sim import CHUNK_MATMUL_EFFICIENCY, OVERLAPS, explain_gap, roofline_gap, simulate_step


def register(subparsers):
    """Add the `step` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser("step", help="simulate one decode / prefill step op by op and write its timeline")
    add_machine_args(p)
    p.add_argument("--n", default="8", help="tensor-parallel degree (devices)")
    p.add_argument("--batch", default="1", help="sequences in the step")
    p.add_argument("--ctx", default="4096", help="tokens already in each sequence's KV cache")
    p.add_argument("--prefill", default=None, help="simulate a prefill of this many tokens per sequence instead")
    p.add_argument("--overlap", default="none", help=f"{' or '.join(OVERLAPS)} (async: collective matmul)")
    p.add_argument("--sequence-parallel", dest="sequence_parallel", action="store_true",
                   help="reduce-scatter + all-gather around the norms instead of all-reduces")
    p.add_argument("--w-bytes", dest="w_bytes", default="2", help="bytes per weight (2 bf16, 1 int8)")
    p.add_argument("--kv-bytes", dest="kv_bytes", default="2", help="bytes per KV element")
    p.add_argument("--act-bytes", dest="act_bytes", default="2", help="bytes per activation")
    add_link_args(p)
    p.add_argument("--elementwise", action="store_true",
                   help="also count norms, RoPE, softmax, SwiGLU and activation traffic (the roofline does not)")
    p.add_argument("--gather-logits", dest="gather_logits", action="store_true",
                   help="end with tp_forward's all-gather of the logits")
    p.add_argument("--format", choices=("chrome", "json"), default="chrome",
                   help="chrome: trace-event file for Perfetto; json: simcore's trace schema")
    p.add_argument("--out", help="file to write (omit to print the comparison only)")
    return p


def _parse(args):
    model, topo, chip, link = parse_machine(args)
    pick_key(dict.fromkeys(OVERLAPS), args.overlap, "overlap")
    n = whole_number(args.n, "--n", 1)
    top = topo.max_devices if topo is not None else MAX_DEVICES
    if n > top:
        raise BadValue(f"--n must be at most {top}{' on ' + topo.name if topo else ''}, got {n}")
    tokens = 1 if args.prefill is None else whole_number(args.prefill, "--prefill", 1)
    if topo is not None and tokens > 1:
        raise BadValue("--prefill with --topology: the prefill roofline is written for one switch only; "
                        "drop --topology (or simulate a decode step)")
    return dict(model=model, chip=chip, link=link, n=n, batch=whole_number(args.batch, "--batch", 1),
                ctx=whole_number(args.ctx, "--ctx", 0), tokens=tokens, w_bytes=positive_number(args.w_bytes, "--w-bytes"),
                kv_bytes=positive_number(args.kv_bytes, "--kv-bytes"), act_bytes=positive_number(args.act_bytes, "--act-bytes"),
                algo=args.algo, compute_prec=args.prec, overlap=args.overlap,
                sequence_parallel=args.sequence_parallel, elementwise=args.elementwise,
                gather_logits=args.gather_logits, topology=topo)


def roofline_of(kw):
    """The roofline for a step's keyword arguments: tp_decode_step or tp_prefill_step (+ overlap when ring)."""
    common = (kw["model"], kw["chip"], kw["link"], kw["n"], kw["batch"])
    tail = dict(w_bytes=kw["w_bytes"], kv_bytes=kw["kv_bytes"], act_bytes=kw["act_bytes"], algo=kw["algo"],
                compute_prec=kw["compute_prec"])
    topo = kw.get("topology")
    if topo is not None:
        # the machine's own all-reduce for the size (topology.choose: NCCL's tuner on GPU machines,
        # rings per torus axis), which the step simulation runs too (its plan)
        return tp_decode_step(*common, kw["ctx"], topology=topo, **tail)
    if kw["algo"] in ("ring", None):
        return tp_step_overlap(*common, kw["ctx"], prompt=kw["tokens"], **tail)
    if kw["tokens"] == 1:
        return tp_decode_step(*common, kw["ctx"], **tail)
    return tp_prefill_step(*common, kw["tokens"], kw["ctx"], **tail)


def format_report(kw, comm, roof) -> str:
    """The simulated step beside the roofline, and why they differ (text)."""
    from .cli_decode import topology_note

    model, chip, link, topo, ms = kw["model"], kw["chip"], kw["link"], kw.get("topology"), 1e3
    what = "decode step" if kw["tokens"] == 1 else f"prefill of {kw['tokens']} tokens"
    chosen = "the machine's own (below)"
    if topo is None:
        where = f"{link.name} (alpha {link.alpha * 1e6:.2f} us, {link.bw / 1e9:.0f} GB/s per direction)"
    else:
        where = f"{topo.name}: {topology_note(topo)}"
    lines = [
        f"{model.name} {what} on {kw['n']} x {chip.name}, {where}",
        f"batch {kw['batch']}, context {kw['ctx']}, bytes: weights {kw['w_bytes']:g}, KV {kw['kv_bytes']:g}, "
        f"activations {kw['act_bytes']:g}; all-reduce "
        f"{(kw['algo'] or 'ring') if topo is None or kw['algo'] is not None else chosen}, "
        f"peak {kw['compute_prec']}; overlap "
        f"{kw['overlap']}; sequence parallel {'on' if kw['sequence_parallel'] else 'off'}",
        f"  roofline  t_math {roof['t_math'] * ms:.3f} ms   t_mem {roof['t_mem'] * ms:.3f} ms   "
        f"t_comm {roof['t_comm'] * ms:.3f} ms   t_step {roof['t_step'] * ms:.3f} ms  (no overlap: "
        f"max(t_math, t_mem) + t_comm)",
        f"  lower bound {roof['t_lower_bound'] * ms:.3f} ms  (max(t_math, t_mem, t_comm): communication fully "
        f"hidden; no schedule beats it)",
    ]
    if topo is not None:
        S = kw["batch"] * kw["tokens"] * kw["model"].d_model * kw["act_bytes"]
        wired = topo.topology(kw["n"])
        if kw["algo"] is None:  # the default: the machine's own choice for the size (its plan)
            algo, proto, why = wired.choose("all-reduce", S)
            lines.append(f"  every all-reduce ({S / 1024:g} KiB) is {topo.name}'s own choice: {algo}"
                         f"{' with NCCL ' + proto if proto else ''} ({why}), in the roofline and in the simulation")
        else:
            proto, why = wired.protocol("all-reduce", kw["algo"], S)
            lines.append(f"  every all-reduce ({S / 1024:g} KiB) runs {kw['algo']}"
                         f"{' with NCCL ' + proto if proto else ''} ({why}), as asked")
    if "t_step_overlap" in roof:
        lines.append(f"  roofline with the all-reduces overlapped (collective matmul): "
                     f"{roof['t_step_overlap'] * ms:.3f} ms")
    if kw["overlap"] == "async" and kw["n"] > 1:
        gathered = ("; the all-gathers in front of qkv, gate/up and the lm head are overlapped too (all-gather "
                    "matmul)") if kw["sequence_parallel"] else "; no all-gather precedes a matmul without SP"
        lines.append(f"  async: every chunk matmul runs at {CHUNK_MATMUL_EFFICIENCY:.0%} of peak FLOP/s "
                     f"(decomposition cost, CHUNK_MATMUL_EFFICIENCY){gathered}")
    cs, msgs = comm.trace.computes, comm.trace.messages
    lines.append(f"  simulated step {comm.time * ms:.3f} ms: {len(cs)} ops on {kw['n']} devices, "
                 f"{len(comm.trace.collectives)} collectives, {len(msgs)} messages")
    lines.append(f"  simulated {comm.time * ms:.3f} ms  vs  no overlap {roof['t_step_no_overlap'] * ms:.3f} ms  vs  "
                 f"lower bound {roof['t_lower_bound'] * ms:.3f} ms")
    lines.append(explain_gap(roofline_gap(comm, chip, roof, kw["compute_prec"])))
    return "\n".join(lines)


def _write(path, trace, fmt):
    """Stream the trace (Chrome or simcore's JSON; gzipped for .gz) through Trace.write (atomic)."""
    try:
        trace.write(path, fmt)
    except OSError as e:
        raise BadValue(f"cannot write {path}: {e.strerror}") from None


def run(args) -> int:
    """Simulate, print the comparison, write the trace; 2 (and one line on stderr) for a bad value."""
    try:
        kw = _parse(args)
        comm = simulate_step(**kw)
        roof = roofline_of(kw)
        print(format_report(kw, comm, roof))
        if args.out:
            _write(args.out, comm.trace, args.format)
            print(f"wrote {args.out}: {len(comm.trace.computes)} compute slices, {len(comm.trace.messages)} messages "
                  f"({args.format}{'; open it in Perfetto' if args.format == 'chrome' else ''})")
    except (BadValue, ValueError) as e:
        print(f"simcore step: {e}", file=sys.stderr)
        return 2
    return 0
