"""
python -m simcore record SCRIPT.py [args …] [--out FILE] [--show [--screenshot PNG]]

Runs any script as `python SCRIPT.py args` would, with the lecture's module names served by
simcore (`from comm_sim import …`, `transformer_lab`, `hw_specs`, `llm_math`, `shard_lab`), so
the lecture's own shard_lab.py runs unchanged. Every Comm the script creates is collected;
at the end their traces become one trace file (Trace.merge: the runs one after another),
by default SCRIPT.trace.json beside the script. If the script raises, its traceback is
printed as the script's own, the trace so far is still written, and the exit code is 1.
`--show` opens the result in the app (simcore.show); with `--screenshot PNG` the window is saved
there and closed (a check that the recorded run opens, or a picture for a slide).
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback

# the lecture's bare module names -> the simcore modules that serve them
LECTURE_MODULES = {"comm_sim": "simcore.comm_sim", "transformer_lab": "simcore.transformer_lab",
                   "hw_specs": "simcore.hw_specs", "llm_math": "simcore.llm_math", "shard_lab": "simcore.shard_lab"}


def default_out(script: str) -> str:
    base = os.path.splitext(os.path.abspath(script))[0]
    return base + ".trace.json"


def record(script: str, args=(), out: str | None = None) -> tuple[int, str, object]:
    """
    Run `script` with `args` (sys.argv[1:]); return (exit code, path written, merged Trace).
    Exit code: the script's own (SystemExit), 1 if it raised, else 0. The trace file is written
    in every case; OSError if it cannot be.
    """
    import importlib

    from . import comm_sim
    from .trace import Trace

    script = os.path.abspath(script)
    out = out or default_out(script)
    comms = []
    saved = {name: sys.modules.get(name) for name in LECTURE_MODULES}
    argv, path0 = sys.argv, list(sys.path)
    for name, target in LECTURE_MODULES.items():
        sys.modules[name] = importlib.import_module(target)
    comm_sim._on_new_comm.append(comms.append)
    code = 0
    try:
        sys.argv = [script, *args]
        sys.path.insert(0, os.path.dirname(script))
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    except BaseException as e:  # noqa: BLE001 — any failure of the script is the script's to report
        _print_script_traceback(e, script)
        code = 1
    finally:
        comm_sim._on_new_comm.remove(comms.append)
        sys.argv, sys.path[:] = argv, path0
        for name, mod in saved.items():
            if mod is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = mod
    trace = Trace.merge(c.trace for c in comms)
    trace.save(out)
    return code, out, trace


def _print_script_traceback(e: BaseException, script: str):
    """The traceback from the script's first frame on: record's and runpy's frames are not the student's."""
    tb = e.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != script:
        tb = tb.tb_next
    print("".join(traceback.format_exception(type(e), e, tb)), end="", file=sys.stderr)


def register(sub):
    p = sub.add_parser("record", help="run a script, collect every Comm it makes into one trace file")
    p.add_argument("script", help="the Python script to run")
    p.add_argument("--out", help="trace file to write (.json or .json.gz; default SCRIPT.trace.json beside it)")
    p.add_argument("--show", action="store_true", help="open the recorded run in the app")
    p.add_argument("--screenshot", metavar="PNG", help="with --show: save the window as PNG and close it")


def split_argv(argv: list) -> tuple[list, list]:
    """(record's own options + the script, the script's arguments): everything after the script
    belongs to the script except record's own --out F, --screenshot F and --show."""
    for i, a in enumerate(argv):
        if a.endswith(".py") and not a.startswith("-"):
            own, rest = argv[:i + 1], argv[i + 1:]
            # `--out F`, `--screenshot F` and `--show` may also follow the script's arguments
            extra, script_args, j = [], [], 0
            while j < len(rest):
                if rest[j] == "--show":
                    extra.append(rest[j])
                elif rest[j] in ("--out", "--screenshot") and j + 1 < len(rest):
                    extra += rest[j:j + 2]
                    j += 1
                elif rest[j].startswith(("--out=", "--screenshot=")):
                    extra.append(rest[j])
                else:
                    script_args.append(rest[j])
                j += 1
            return own + extra, script_args
    return argv, []


def run(args, script_args) -> int:
    if not os.path.isfile(args.script):
        print(f"simcore: {args.script}: no such script", file=sys.stderr)
        return 2
    if args.screenshot and not args.show:
        print("simcore: --screenshot saves the window --show opens: give both", file=sys.stderr)
        return 2
    try:
        code, out, trace = record(args.script, script_args, args.out)
    except OSError as e:
        print(f"simcore: cannot write the trace: {e.strerror or e}", file=sys.stderr)
        return 2
    n_comm = len({c.n for c in trace.collectives})
    print(f"recorded {len(trace.collectives)} collectives, {trace.n_messages} messages and "
          f"{len(trace.computes)} ops into {out}" + (f" (devices: {n_comm} sizes)" if n_comm > 1 else ""),
          file=sys.stderr)
    if args.show:
        from .viewer import show

        try:
            show(out, screenshot=args.screenshot)
        except (ValueError, OSError) as e:  # the app missing, a run it cannot draw, a screenshot unwritten
            print(f"simcore: cannot show {os.path.basename(out)}: {e}", file=sys.stderr)
            return code or 1
    return code
