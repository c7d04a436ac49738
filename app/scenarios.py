"""
Build the engine run for one `Scenario` and index its trace for drawing.

`build_run(scenario)` runs the simulation once (simcore does all the work) and returns a
`Run`: the trace, the link, the arrays a view may want (collective inputs, the matmul's
matrices, TP's max |TP − single|) and a `TraceIndex`. Views never re-derive an algorithm: they
ask the index what the trace says at time t.

`TraceIndex` answers, for any t, in about constant time:
    stops                the step boundaries (seconds) over all collectives, 0 first
    display_collective   which collective to draw at t
    holdings(c, t)       {device: {chunk: contributors}} — equal to trace.holdings(c, t=t)
    in_flight(t)         indices of messages on the wire at t
    bytes_moved(t)       bytes delivered by time t
It is a cache, not a second model: holdings applies the trace's messages with the engine's
own rule (simcore.trace), memoised so that playing forward costs only the new messages.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field, replace

import numpy as np

from simcore import comm_sim
from simcore.comm_sim import ALLREDUCE_ALGOS, LINKS, LinkSpec
from simcore.scenarios import demo_values
from simcore.trace import Trace
from simcore.trace import _apply as apply_message  # the engine's one rule for "a message arrives"

KINDS = ("all-gather", "reduce-scatter", "all-reduce", "matmul-1", "matmul-2", "matmul-3", "matmul-4",
         "tp-forward", "decode")
COLLECTIVE_KINDS = ("all-gather", "reduce-scatter", "all-reduce")
ALGO_KINDS = ("all-reduce", "matmul-3", "tp-forward", "decode")  # kinds where the all-reduce algorithm is a choice
MAX_N = 64  # the ring view draws at most this many devices
MAX_BYTES = 2.0 ** 40


def takes_algo(kind: str) -> bool:
    return kind in ALGO_KINDS


def validate(sc) -> None:
    """Raise ValueError with one clear sentence if the scenario cannot be run."""
    if sc.kind not in KINDS:
        raise ValueError(f"unknown scenario {sc.kind!r}; choose one of {', '.join(KINDS)}")
    n = sc.n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"the number of devices must be a whole number, got {n!r}")
    if n < 1:
        raise ValueError(f"the number of devices must be at least 1, got {n}")
    if n > MAX_N:
        raise ValueError(f"the ring view draws at most {MAX_N} devices, got {n}")
    if sc.algo not in ALLREDUCE_ALGOS:
        raise ValueError(f"unknown algorithm {sc.algo!r}; choose one of {', '.join(ALLREDUCE_ALGOS)}")
    if not takes_algo(sc.kind) and sc.algo != "ring":
        raise ValueError(f"{sc.kind} uses the ring algorithm only (got {sc.algo!r})")
    if sc.link not in LINKS:
        raise ValueError(f"unknown link {sc.link!r}; choose one of {', '.join(LINKS)}")
    S = sc.nbytes
    if not (isinstance(S, (int, float, np.number)) and math.isfinite(S) and S > 0):
        raise ValueError(f"the message size must be a positive number of bytes, got {S!r}")
    if S > MAX_BYTES:
        raise ValueError(f"the message size must be at most 1 TiB, got {S:.4g} bytes")
    if sc.kind in COLLECTIVE_KINDS:  # one rule for every collective: S splits into n whole-byte chunks
        if S != int(S) or int(S) % n:
            raise ValueError(f"{_fmt_size(S)} cannot be split into {n} equal whole-byte chunks: "
                             f"choose a size divisible by {n}")


def fit_bytes(nbytes: float, n: int, kind: str) -> float:
    """The size to use when only n changed: nbytes, or the nearest smaller size that splits into n chunks."""
    if kind in COLLECTIVE_KINDS and n >= 1 and (nbytes != int(nbytes) or int(nbytes) % n):
        return float(max(n, int(nbytes) // n * n))
    return nbytes


def _fmt_size(b: float) -> str:
    if b == int(b):
        return f"{int(b)} bytes"
    return f"{b:g} bytes"


# ---------------------------------------------------------------------------------------
# What a run carries besides the trace
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class MatmulInfo:
    """A sharded matmul C = A @ B, case 1..4 ("How to Scale Your Model", ch. 3).

    Axis fields say how a matrix is split over the devices before / after the collective:
    0 = rows, 1 = columns, None = replicated (every device has all of it), "partial" = every
    device has a full-size partial sum. `gathered` names the matrix the collective moves.
    """

    case: int
    A: np.ndarray  # (I, J)
    B: np.ndarray  # (J, K)
    C: np.ndarray  # (I, K), the reference A @ B
    a_axis: object
    b_axis: object
    c_axis: object  # sharding of the result each device ends with
    a_after: object  # sharding of A / B after the collective (what the multiply uses)
    b_after: object
    collective: str  # "" | "all-gather" | "all-reduce"
    moves: str  # "" | "A" | "B" | "C" — the matrix the collective moves
    notation: tuple  # ("A[I_X, J]", "B[J, K]", "C[I_X, K]") with X the device axis
    max_err: float  # max |result − A @ B| over every device


@dataclass(frozen=True, eq=False)
class TPInfo:
    """A Megatron tensor-parallel forward of the lecture's TINY Transformer."""

    cfg: object
    n: int
    batch: int
    seq: int
    max_abs_diff: float  # max |TP logits − single-device logits|
    decode: bool = False  # True: the trace is one cached decode step after a prefill
    params: dict | None = None  # the single-device parameters (transformer_lab.init_params)
    dev_params: list | None = None  # shard_params_tp's output: what each device really holds


@dataclass(frozen=True, eq=False)
class Run:
    """Everything the views read for one scenario. Immutable once built."""

    scenario: object
    trace: Trace
    link: LinkSpec
    comm: object
    inputs: dict = field(default_factory=dict)  # collective id -> (n, L) buffers before it
    matmul: MatmulInfo | None = None
    tp: TPInfo | None = None
    ref_step: float = 1e-6  # seconds of one ring step: the playback's pace (1× ≈ 0.8 s per step)
    index: TraceIndex = None

    @property
    def n(self) -> int:
        return self.scenario.n


# ---------------------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------------------
def build_run(sc) -> Run:
    """Run the simulation for scenario `sc`. Raises ValueError (one sentence) if it cannot."""
    validate(sc)
    link = LINKS[sc.link]
    if sc.kind in COLLECTIVE_KINDS:
        from simcore.scenarios import run_collective

        cr = run_collective(sc.kind, sc.n, float(sc.nbytes), sc.algo, link)
        return _finish(sc, cr.trace, link, cr.comm, inputs={0: cr.inputs})
    if sc.kind.startswith("matmul-"):
        return _build_matmul(sc, link)
    if sc.kind == "tp-forward":
        return _build_tp(sc, link, decode=False)
    if sc.kind == "decode":
        return _build_tp(sc, link, decode=True)
    raise ValueError(f"unknown scenario {sc.kind!r}")


def _finish(sc, trace, link, comm, **extra) -> Run:
    c0 = trace.collectives[0] if trace.collectives else None
    if c0 is not None and c0.n > 1:
        ref = link.alpha + c0.nbytes / (c0.n * link.bw)
    else:
        ref = link.alpha + float(sc.nbytes) / (max(sc.n, 1) * link.bw)
    return Run(sc, trace, link, comm, ref_step=ref, index=TraceIndex(trace), **extra)


def _matmul_dim(n: int) -> int:
    """Smallest multiple of n that is at least 8: every device holds at least one row."""
    return n * max(1, math.ceil(8 / n))


def _build_matmul(sc, link) -> Run:
    from simcore import sharding as shd

    case = int(sc.kind[-1])
    n = sc.n
    m = _matmul_dim(n)
    A = demo_values(0, (m, m), decimals=2)
    B = demo_values(1, (m, m), decimals=2)
    C = A @ B
    # time the toy float64 collective as if it moved S bytes (the size control)
    scale = float(sc.nbytes) / (m * m * 8)
    comm = shd.make_comm(n, link, byte_scale=scale)
    if case == 1:
        C_sh = shd.matmul_case1(shd.shard(A, 0, n), B)
        err = float(np.max(np.abs(shd.unshard(C_sh, 0) - C)))
        info = MatmulInfo(1, A, B, C, 0, None, 0, 0, None, "", "",
                          ("A[I_X, J]", "B[J, K]", "C[I_X, K]"), err)
    elif case == 2:
        outs = shd.matmul_case2(comm, shd.shard(A, 1, n), B)
        err = max(float(np.max(np.abs(o - C))) for o in outs)
        info = MatmulInfo(2, A, B, C, 1, None, None, None, None, "all-gather", "A",
                          ("A[I, J_X]", "B[J, K]", "C[I, K]"), err)
    elif case == 3:
        outs = shd.matmul_case3(comm, shd.shard(A, 1, n), shd.shard(B, 0, n), algo=sc.algo)
        err = max(float(np.max(np.abs(o - C))) for o in outs)
        info = MatmulInfo(3, A, B, C, 1, 0, None, 1, 0, "all-reduce", "C",
                          ("A[I, J_X]", "B[J_X, K]", "C[I, K]"), err)
    else:
        C_sh = shd.matmul_case4(comm, shd.shard(A, 0, n), shd.shard(B, 1, n))
        err = float(np.max(np.abs(shd.unshard(C_sh, 0) - C)))
        info = MatmulInfo(4, A, B, C, 0, 1, 0, 0, None, "all-gather", "B",
                          ("A[I_X, J]", "B[J, K_X]", "C[I_X, K]"), err)
    return _finish(sc, comm.trace, link, comm, matmul=info)


TP_BATCH, TP_SEQ = 1, 8


def decode_model(cfg, n: int):
    """
    The model the decode scenario steps on n devices: `cfg` (the lecture's TINY) when n can split
    it, else `cfg` widened just enough that it can — query heads, d_ff and vocab rounded up to
    multiples of n, KV groups gcd(G, n) so each device holds whole groups or a replica of one.
    The decode scenario is about n devices (its main view is the latency plot up to 4096), so
    "8 heads" must not limit it; the forward scenario keeps TINY and its rule that n divides 8.
    """
    def up(v):
        return n * math.ceil(v / n)

    if cfg.n_heads % n == 0 and cfg.d_ff % n == 0 and cfg.vocab % n == 0 and (
            cfg.n_kv_heads % n == 0 or n % cfg.n_kv_heads == 0):
        return cfg
    return replace(cfg, n_heads=up(cfg.n_heads), n_kv_heads=math.gcd(cfg.n_kv_heads, n), d_ff=up(cfg.d_ff),
                   vocab=up(cfg.vocab))


def _build_tp(sc, link, decode: bool) -> Run:
    try:
        from simcore import tensor_parallel as tp
        from simcore import transformer_lab as tl
    except ImportError:
        what = "decode" if decode else "tp-forward"
        raise ValueError(f"{what}: not available yet (simcore's tensor-parallel model is still being built)") from None
    from simcore.sharding import make_comm

    cfg, n = (decode_model(tl.TINY, sc.n) if decode else tl.TINY), sc.n
    params = tl.init_params(cfg, seed=0)
    tokens = np.random.default_rng(0).integers(0, cfg.vocab, size=(TP_BATCH, TP_SEQ))
    dev = tp.shard_params_tp(params, cfg, n)  # raises ValueError when n does not divide the heads
    # every all-reduce carries a [B, T, d_model] activation; time it as if it were S bytes
    act_bytes = TP_BATCH * (1 if decode else TP_SEQ) * cfg.d_model * 8
    scale = float(sc.nbytes) / act_bytes
    if not decode:
        comm = make_comm(n, link, byte_scale=scale)
        out = tp.tp_forward(dev, cfg, tokens, comm, algo=sc.algo)
        ref = tl.forward(params, cfg, tokens)
    else:
        caches = tp.tp_caches(cfg, dev, TP_BATCH)
        tp.tp_forward(dev, cfg, tokens, make_comm(n, link, byte_scale=scale), caches=caches, algo=sc.algo)
        nxt = np.random.default_rng(1).integers(0, cfg.vocab, size=(TP_BATCH, 1))
        comm = make_comm(n, link, byte_scale=scale)  # the trace shows the decode step alone
        out = tp.tp_forward(dev, cfg, nxt, comm, caches=caches, algo=sc.algo)
        ref = tl.forward(params, cfg, np.concatenate([tokens, nxt], axis=1))[:, -1:]
    diff = float(np.max(np.abs(np.asarray(out) - ref)))
    info = TPInfo(cfg, n, TP_BATCH, TP_SEQ, diff, decode, params=params, dev_params=dev)
    return _finish(sc, comm.trace, link, comm, tp=info)


# ---------------------------------------------------------------------------------------
# The index: the trace, asked by time
# ---------------------------------------------------------------------------------------
class TraceIndex:
    """Read-only answers about a Trace at time t (see module docstring)."""

    CHECKPOINT_EVERY = 256

    def __init__(self, trace: Trace):
        self.trace = trace
        msgs = trace.messages
        self.t_start = np.array([m.t_start for m in msgs], dtype=float)
        self.t_end = np.array([m.t_end for m in msgs], dtype=float)
        self.nbytes = np.array([m.nbytes for m in msgs], dtype=float)
        self.t_total = trace.t_end
        self.eps = 1e-9 * max(self.t_total, 1e-12)
        # bytes delivered by time t: prefix sums over arrival times
        order = np.argsort(self.t_end, kind="stable")
        self._arrivals = self.t_end[order]
        self._cum_bytes = np.concatenate([[0.0], np.cumsum(self.nbytes[order])])
        # steps: per collective, the end time of every step and the messages of every step
        self.step_ends: list[list[float]] = []
        self.step_msgs: list[list[list[int]]] = []
        stops = {0.0}
        for c in trace.collectives:
            ends = [b for _a, b in trace.step_times(c.id)] if c.n_steps else []
            ends = [max(ends[: i + 1]) for i in range(len(ends))]  # a step ends once all before it have
            self.step_ends.append(ends)
            per = [[] for _ in range(c.n_steps)]
            for i in range(c.first_msg, c.last_msg):
                per[msgs[i].step].append(i)
            self.step_msgs.append(per)
            stops.update(ends)
            stops.add(c.t_end)
        self.stops = sorted(stops)
        self.coll_starts = [c.t_start for c in trace.collectives]
        self.max_in_flight = _max_overlap(self.t_start, self.t_end)
        self.max_step_msgs = max((len(s) for per in self.step_msgs for s in per), default=0)
        # holdings: per collective, its messages in arrival order
        self._events = []
        for c in trace.collectives:
            idx = sorted(range(c.first_msg, c.last_msg), key=lambda i: (msgs[i].t_end, i))
            self._events.append((np.array([msgs[i].t_end for i in idx], dtype=float), idx))
        self._checkpoints: dict[int, dict[int, dict]] = {}  # coll -> {count: state}
        self._cursor = None  # (coll, count, state): the last answer, extended forward cheaply

    # -- time -> collective and step ------------------------------------------------------
    def display_collective(self, t: float) -> int | None:
        """The collective to draw at t: the last one started before t (the first at its start)."""
        if not self.coll_starts:
            return None
        k = bisect.bisect_left(self.coll_starts, t - self.eps)
        return max(0, k - 1)

    def steps_done(self, coll: int, t: float) -> int:
        """How many steps of `coll` have finished by t (0 … n_steps)."""
        return bisect.bisect_right(self.step_ends[coll], t + self.eps)

    def step_shown(self, coll: int, t: float) -> int:
        """The step to describe at t: the one in progress, or the one that just ended at t."""
        ends = self.step_ends[coll]
        if not ends:
            return -1
        return min(bisect.bisect_left(ends, t - self.eps), len(ends) - 1)

    def stop_index(self, t: float) -> int:
        """How many step boundaries (after 0) lie at or before t."""
        return bisect.bisect_right(self.stops, t + self.eps) - 1

    # -- what is where ----------------------------------------------------------------------
    def in_flight(self, t: float) -> np.ndarray:
        """Indices of messages with t_start <= t < t_end."""
        if not len(self.t_start):
            return np.empty(0, dtype=int)
        return np.flatnonzero((self.t_start <= t) & (self.t_end > t))

    def moving(self, t: float) -> np.ndarray:
        """Indices of messages strictly under way at t (t_start < t < t_end): what the view draws.
        At a step boundary the next step's blocks have not left yet, so the picture is clean."""
        if not len(self.t_start):
            return np.empty(0, dtype=int)
        return np.flatnonzero((self.t_start < t) & (self.t_end > t))

    def bytes_moved(self, t: float) -> float:
        return float(self._cum_bytes[np.searchsorted(self._arrivals, t, side="right")])

    def holdings(self, coll: int, t: float) -> dict:
        """trace.holdings(coll, t=t), memoised. The returned dict must not be modified."""
        times, idx = self._events[coll]
        count = int(np.searchsorted(times, t, side="right"))
        cur = self._cursor
        if cur is not None and cur[0] == coll and cur[1] == count:
            return cur[2]
        if cur is not None and cur[0] == coll and cur[1] < count and count - cur[1] <= self.CHECKPOINT_EVERY:
            start, state = cur[1], _copy(cur[2])
        else:
            start, state = self._nearest_checkpoint(coll, count)
        c = self.trace.collectives[coll]
        msgs = self.trace.messages
        every = self.CHECKPOINT_EVERY
        cps = self._checkpoints.setdefault(coll, {})
        for j in range(start, count):
            apply_message(state, msgs[idx[j]], c.n_chunks)
            if (j + 1) % every == 0 and (j + 1) not in cps:
                cps[j + 1] = _copy(state)
        self._cursor = (coll, count, state)
        return state

    def _nearest_checkpoint(self, coll, count):
        cps = self._checkpoints.get(coll, {})
        best = max((k for k in cps if k <= count), default=0)
        if best:
            return best, _copy(cps[best])
        c = self.trace.collectives[coll]
        return 0, {d: dict(h) for d, h in enumerate(c.initial)}

    def last_arrivals(self, coll: int, t: float) -> list[int]:
        """Messages of the last step of `coll` finished by t (what the view outlines as new)."""
        k = self.steps_done(coll, t)
        if k == 0:
            return []
        return self.step_msgs[coll][k - 1]


def _copy(state: dict) -> dict:
    return {d: dict(h) for d, h in state.items()}


def _max_overlap(starts: np.ndarray, ends: np.ndarray) -> int:
    """Most intervals [start, end) open at one time."""
    if not len(starts):
        return 0
    ev = np.concatenate([np.stack([starts, np.ones_like(starts)], 1), np.stack([ends, -np.ones_like(ends)], 1)])
    ev = ev[np.lexsort((ev[:, 1], ev[:, 0]))]  # ends (-1) before starts (+1) at equal times
    return int(np.max(np.cumsum(ev[:, 1])))


# -- formulas shown beside the simulation (display text; the value is comm_sim.t_formula) --
def closed_form_seconds(c, link) -> float:
    """The closed-form time of collective record `c` on an idle switch (engine's t_formula)."""
    return comm_sim.t_formula(c.algo, c.n, c.nbytes, link.alpha, link.bw, op=c.op)
