"""
A saved run opened in the app: a trace file (simcore `trace.save`, `python -m simcore record`,
`python -m simcore trace --format json`) becomes a `Run` every trace view plays.

    is_trace_file(path)   does the file say it is a Shard Lab trace (its first bytes, gzip or not)
    load_run(path)        the checked Trace as an app Run (ValueError: one sentence)
    run_from_trace(trace) the same for a Trace in memory (simcore.show)

The run's scenario is only what the controls show (the op of its first collective, its largest
n); the views read the trace itself. `run.opened` (an `Opened`) names the file, keeps the
checker's verdict per collective for the formula panel (app/views/text/generic_text.py) and,
for a file too large to show whole, `note`: one sentence saying the limit and what was read.
A trace holds no arrays, so the buffers view shows example values (the same for every run of
the same shape): what a chunk sums follows from its contributors alone.
"""

from __future__ import annotations

import os
import re

import numpy as np

from simcore.trace import Trace

_SCHEMA = re.compile(rb'"schema"\s*:\s*"shard-lab-trace"')
MAX_DEVICES_SHOWN = 256  # the ring view, timeline and buffers draw at most this many devices
# simcore.check replays a collective message by message in Python (about 10 µs a message): the
# app checks collectives up to this size while you watch; a larger one says how to check it
MAX_CHECKED_MESSAGES = 20_000


def _head(path, size: int = 512) -> bytes:
    with open(path, "rb") as f:
        head = f.read(size)
    if head[:2] == b"\x1f\x8b":  # gzip
        import gzip
        import zlib

        try:
            with gzip.open(path, "rb") as f:
                head = f.read(size)
        except (OSError, EOFError, zlib.error):
            return b""
    return head


def is_trace_file(path) -> bool:
    """True when the file's first bytes name the trace schema (a saved run or a Chrome export)."""
    try:
        return bool(_SCHEMA.search(_head(path)))
    except OSError:
        return False


class Opened:
    """Where an opened run came from, and the checker's verdict on each collective (cached)."""

    def __init__(self, path: str, trace: Trace, link):
        self.path, self.trace, self.link = path, trace, link
        self.note = getattr(trace, "note", "")  # "" unless Trace.load read only the first collectives
        self._reports = {}

    @property
    def name(self) -> str:
        return os.path.basename(self.path) if self.path else ""

    def report(self, coll: int):
        """simcore.check on collective `coll`'s messages (a saved run has no arrays to compare);
        None for a collective of more than MAX_CHECKED_MESSAGES messages."""
        if coll not in self._reports:
            from simcore.checker import check

            c = self.trace.collectives[coll]
            big = c.last_msg - c.first_msg > MAX_CHECKED_MESSAGES
            self._reports[coll] = None if big else check(self.trace, coll=coll, link=self.link)
        return self._reports[coll]


class _ExampleInputs(dict):
    """Collective id -> (n, L) example buffers, made when a view first asks (one per collective)."""

    def __init__(self, trace):
        super().__init__()
        self.trace = trace
        if trace.collectives:
            self[0] = self.__missing__(0)

    def __missing__(self, coll):
        from simcore.scenarios import demo_values

        c = self.trace.collectives[coll]
        nc = max(c.n_chunks, 1)
        per = max(1, min(4, 64 // nc))
        v = demo_values(coll, (c.n, nc * per), decimals=2)
        self[coll] = v
        return v


def load_run(path):
    """Read, check and wrap a trace file (ValueError with one sentence naming the file)."""
    name = os.path.basename(os.fspath(path))
    try:
        head = _head(path, 64)
    except OSError as e:
        raise ValueError(f"Cannot read {name}: {e.strerror or e}.") from None
    if head.lstrip().startswith(b'{"displayTimeUnit"'):
        raise ValueError(f"{name} is a Chrome trace (for Perfetto): save the run with trace.save(\"run.json\") "
                         f"or `python -m simcore trace --format json` to open it here.")
    trace = Trace.load(path)  # ValueError, one sentence starting with the name
    try:
        return run_from_trace(trace, os.fspath(path))
    except ArithmeticError as e:  # numbers the file's checks let through and the arithmetic did not
        raise ValueError(f"{name}: a number in it is out of range ({e}).") from None


def run_from_trace(trace: Trace, path: str = ""):
    """An app Run that plays `trace` (ValueError if it has nothing the views can draw)."""
    from simcore.algorithms import ALLREDUCE_ALGOS
    from simcore.links import LINKS, LinkSpec

    from .core.scenarios import COLLECTIVE_KINDS, Run, Scenario
    from .core.trace_index import TraceIndex

    name = os.path.basename(path) if path else "the run"
    if not trace.collectives and not trace.computes:
        raise ValueError(f"{name} has no collective and no op to show.")
    n = max([c.n for c in trace.collectives] + [int(op.device) + 1 for op in trace.computes] + [1])
    if n > MAX_DEVICES_SHOWN:
        raise ValueError(f"{name} has {n} devices; the app draws at most {MAX_DEVICES_SHOWN}.")
    meta = trace.meta.get("link") if isinstance(trace.meta.get("link"), dict) else {}
    key = meta.get("name") if meta.get("name") in LINKS else "nvlink4"
    try:
        link = LinkSpec(str(meta.get("name") or key), float(meta["alpha"]), float(meta["bw"])) if meta else LINKS[key]
    except (KeyError, TypeError, ValueError):
        link = LINKS[key]
    c0 = next((c for c in trace.collectives if c.n > 1 and c.last_msg > c.first_msg), None)
    kind = c0.op if c0 is not None and c0.op in COLLECTIVE_KINDS else "all-reduce"
    algo = c0.algo if c0 is not None and kind == "all-reduce" and c0.algo in ALLREDUCE_ALGOS else "ring"
    S = float(c0.nbytes) if c0 is not None and c0.nbytes > 0 else float(n)
    S = float(n * max(1, round(S / n)))
    sc = Scenario(kind=kind, n=n, algo=algo, nbytes=S, link=key)
    if c0 is not None:
        ref = link.alpha + c0.nbytes / (c0.n * link.bw)
    elif trace.computes:
        ref = float(np.median([op.t_end - op.t_start for op in trace.computes]))
    else:
        ref = 1e-6
    run = Run(sc, trace, link, None, inputs=_ExampleInputs(trace), ref_step=max(ref, 1e-12), index=TraceIndex(trace))
    object.__setattr__(run, "opened", Opened(path, trace, link))  # Run is frozen: set once, here
    return run

