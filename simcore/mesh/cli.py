"""
python -m simcore mesh — run a program on a mesh and print its table:

    python -m simcore mesh --list
    python -m simcore mesh --program fsdp-tp-layer
    python -m simcore mesh --program matmul --param case=all
    python -m simcore mesh --program redistribute --param "source=A[I_X, J_Y]" --param "target=A[I_XY, J]"
    python -m simcore mesh --mesh X=2,Y=4 --machine dgx-h100 --program dp-tp-forward --json
    python -m simcore mesh --mesh X=4,Y=4,Z=4 --machine tpu-v4-4x4x4 --program 2d-ws-ffn --param B=4096
    python -m simcore mesh --mesh X=2,Y=2 --program 2d-ws-ffn --mpi 4     (real ranks: the mpi extra)

Each collective per axis with its simulated time, the published form's time and their ratio, the
max |error| against one device's numpy result, and every device's memory by tensor class.
Without --mesh the program's own mesh and machine; with --mesh and no --machine, one NVLink 4
switch (the lecture's). --mpi N runs the same program on N Open MPI ranks, one per mesh device
(simcore.mesh.ranks), and prints each collective's MPI call and measured wall time beside the
simulated time, with the max |difference| of every tensor's blocks from the simulation's.
"""

from __future__ import annotations

import json
import sys

from .errors import MeshError
from .mesh_text import parse_axes as parse_mesh
from .mesh_text import parse_params


def register(subparsers):
    from .programs import PROGRAMS
    p = subparsers.add_parser("mesh", help="run a program on a named mesh and print its collectives per axis")
    p.add_argument("--program", default=None, help="one of: " + ", ".join(PROGRAMS) + " (--list says what each is)")
    p.add_argument("--list", action="store_true", help="list the registered programs, their parameters and "
                                                       "published forms (with --json: as JSON)")
    p.add_argument("--mesh", default=None, help="axes and sizes, major to minor, e.g. X=2,Y=4 (default: the program's)")
    p.add_argument("--machine", default=None,
                   help="a machine preset (dgx-h100, gb200-nvl72, tpu-v4-4x4x4, tpu-v5e-16x16) or 'switch' "
                        "(default: the program's own without --mesh, else one NVLink 4 switch)")
    p.add_argument("--param", action="append", default=[], metavar="K=V",
                   help="a program parameter, e.g. B=4096 (repeatable)")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.add_argument("--mpi", type=int, default=None, metavar="N",
                   help="also run the program on N real MPI ranks (the mpi extra), one per mesh device, and print "
                        "each collective's measured time beside the simulated one")
    p.add_argument("--repeats", type=int, default=3, help="with --mpi: timed runs after one warm-up (default 3)")
    p.add_argument("--allow-run-as-root", action="store_true", help="with --mpi: let Open MPI run as root")
    return p




def _param(text):
    k, eq, v = text.partition("=")
    if not eq or not k:
        raise MeshError(f"--param is K=V, got {text!r}")
    v = v.strip()
    if v.lstrip("-").isdigit():
        return k.strip(), int(v)
    if "," in v:
        return k.strip(), tuple(x.strip() for x in v.split(","))
    return k.strip(), v


def table(res) -> str:
    """The program's table as text."""
    from .device_mesh import _on_torus
    mesh = res.mesh
    lines = [f"{res.name} on {mesh.describe()}"]
    head = f"  {'step':<66} {'algorithm':<14} {'groups':>9} {'bytes/group':>12} {'simulated':>11} {'published':>11} {'ratio':>6}"
    lines.append(head)
    for r in res.rows:
        algo = f"{r.algo} ({r.protocol})" if r.protocol else r.algo
        lines.append(f"  {r.step[:66]:<66} {algo:<14} {f'{r.groups}×{r.group_size}':>9} {_bytes(r.nbytes):>12} "
                     f"{_us(r.simulated):>11} {_us(r.published):>11} {r.ratio:>6.3f}")
    tot = res.simulated_total
    lines.append(f"  {'total':<66} {'':<14} {'':>9} {'':>12} {_us(tot):>11} {_us(res.published_total):>11} "
                 f"{tot / res.published_total if res.published_total else float('nan'):>6.3f}")
    lines.append(f"  published form: {res.published_text}"
                 + ("; W = both directions of a torus link (one direction on an axis without wraparound: "
                    "a line)" if _on_torus(mesh.topology) else "; W = one direction of the axis's slowest link"))
    lines.append("  the book's forms drop the ring's (g−1)/g: a ring of g = 2 moves half of V per link, so its ratio is "
                 "about (g−1)/g")
    if any(r.protocol for r in res.rows):
        lines.append("  a ring with a protocol is timed as NCCL's model times it for such a group (its bandwidth is below "
                     "the line rate W, e.g. NVLink 4's ring with Simple ≈ 371 of 450 GB/s)")
    lines.append(f"  max |error| against one device's numpy result: {res.max_err:.1e}")
    for n in res.notes:
        lines.append(f"  {n}")
    if res.memory:
        classes = list(res.memory[0])
        worst = {c: max(m[c] for m in res.memory) for c in classes}
        lines.append("  memory per device (largest over devices): "
                     + ", ".join(f"{c} {_bytes(v)}" for c, v in worst.items()))
    return "\n".join(lines)


def _us(t):
    return f"{t * 1e6:.2f} µs"


def _t(t):
    """Seconds as µs, or as ms from 1 ms on (measured times on shared cores run to milliseconds)."""
    return f"{t * 1e3:.2f} ms" if t >= 1e-3 else _us(t)


def _bytes(b):
    for unit, k in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if b >= k:
            return f"{b / k:.1f} {unit}"
    return f"{b:.0f} B"


def ranks_table(r) -> str:
    """A mesh program on MPI ranks: each collective's MPI call and measured time beside the simulated one."""
    sim = r.sim
    lines = [f"{r.program} on {r.n} MPI ranks, as {sim.mesh.describe()} (rank r = mesh position r)",
             f"  {'step':<58} {'MPI call':<25} {'groups':>7} {'S ranks':>10} {'S simulated':>12} {'simulated':>11} "
             f"{'measured':>11}"]
    for w in r.rows:
        lines.append(f"  {w.step[:58]:<58} {w.call:<25} {f'{w.groups}×{w.group_size}':>7} {_bytes(w.rank_bytes):>10} "
                     f"{_bytes(w.sim_bytes):>12} {_t(w.simulated):>11} {_t(w.measured):>11}")
    lines.append("  per axis:")
    for axis, (k, s, m) in r.per_axis().items():
        word = "collectives" if k != 1 else "collective "
        lines.append(f"    {axis:<8} {k} {word}   simulated {_t(s):>11}   measured {_t(m):>11}")
    lines.append(f"  max |rank's block − simulated block| over every tensor: {r.max_vs_sim:.1e}; "
                 f"max |result − numpy| on the ranks: {r.max_vs_numpy:.1e}")
    lines.append(f"  measured: wall time (MPI_Wtime) after a barrier, slowest rank, median of {r.runs} run"
                 f"{'s' if r.runs != 1 else ''}, on this machine's processes with the ranks' float64 bytes "
                 f"(S ranks); simulated: {sim.mesh.topology.name} with the real model's bytes (S simulated)")
    lines.append(f"  {r.library.splitlines()[0] if r.library else ''}")
    return "\n".join(lines)


def _run_mpi(args, shape, machine, params) -> int:
    from .. import mpi
    from .on_ranks import run_mesh
    from .programs import get_program
    try:
        if args.mpi < 1:
            raise MeshError(f"--mpi is a number of ranks >= 1, got {args.mpi}")
        if args.repeats < 1:
            raise MeshError(f"--repeats is a number of timed runs >= 1, got {args.repeats}")
        get_program(args.program)
        if shape is None:
            shape = dict(get_program(args.program).mesh)
        res = run_mesh(args.program, args.mpi, shape, machine, params, args.repeats,
                       allow_root=args.allow_run_as_root)
    except (ValueError, mpi.MPIUnavailable, mpi.MPIError) as e:
        print(f"simcore: {e}", file=sys.stderr)
        return 2
    if args.json:
        d = res.sim.as_dict()
        d["mpi"] = {"ranks": res.n, "library": res.library, "runs": res.runs, "max_abs_vs_simulation": res.max_vs_sim,
                    "max_abs_vs_numpy": res.max_vs_numpy, "per_tensor_vs_simulation": res.per_tensor,
                    "collectives": [{"step": w.step, "op": w.op, "axis": w.axis, "call": w.call,
                                     "bytes_ranks": w.rank_bytes, "bytes_simulated": w.sim_bytes,
                                     "simulated_s": w.simulated, "measured_s": w.measured} for w in res.rows]}
        print(json.dumps(d, indent=1, ensure_ascii=False))
    else:
        print(ranks_table(res))
    return 0


def program_list(as_json=False) -> str:
    """Every registered program: name, title, its own mesh and machine, parameters with defaults
    (and the values each may take), the published form."""
    from .programs import PROGRAMS
    if as_json:
        return json.dumps([{"program": p.name, "title": p.title, "description": p.description,
                            "mesh": dict(p.mesh), "machine": p.machine, "published": p.published, "example": p.example,
                            "params": [{"name": q.name, "default": q.default, "choices": list(q.choices),
                                        "minimum": q.minimum} for q in p.params]}
                           for p in PROGRAMS.values()], indent=1, ensure_ascii=False)
    lines = []
    for p in PROGRAMS.values():
        mesh = ",".join(f"{a}={s}" for a, s in p.mesh)
        lines.append(f"{p.name:<18} {p.title['en']}")
        lines.append(f"{'':<18} mesh {mesh} on {p.machine or 'one NVLink 4 switch'}; published: {p.published}")
        lines.append(f"{'':<18} --param " + " ".join(
            f"{q.name}={q.default}" + (f" ({'|'.join(map(str, q.choices))})" if q.choices else "") for q in p.params))
        if p.example:
            lines.append(f"{'':<18} e.g. " + " ".join(f'--param "{k}={v}"' for k, v in parse_params(p.example).items()))
    return "\n".join(lines)


def run(args) -> int:
    from .programs import run_program
    if getattr(args, "list", False):
        print(program_list(args.json))
        return 0
    if args.program is None:
        print("simcore: give --program NAME (python -m simcore mesh --list lists the programs)", file=sys.stderr)
        return 2
    if getattr(args, "mpi", None) is not None:
        try:
            shape = parse_mesh(args.mesh) if args.mesh else None
            params = dict(_param(p) for p in args.param)
        except ValueError as e:
            print(f"simcore: {e}", file=sys.stderr)
            return 2
        machine = ("default" if shape is None else None) if args.machine is None else (
            None if args.machine == "switch" else args.machine)
        return _run_mpi(args, shape, machine, params)
    try:
        shape = parse_mesh(args.mesh) if args.mesh else None
        if args.machine is None:
            machine = "default" if shape is None else None
        else:
            machine = None if args.machine == "switch" else args.machine
        params = dict(_param(p) for p in args.param)
        res = run_program(args.program, shape, machine, **params)
    except ValueError as e:  # MeshError and the engine's own checks: one sentence
        print(f"simcore: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(res.as_dict(), indent=1, ensure_ascii=False))
    else:
        print(table(res))
    return 0
