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
    held(c, t)           the same as arrays (held, bitsets, counts, lowest contributor): what
                         the views read, so a frame at n = 256 never builds n² sets
    in_flight(t)         indices of messages on the wire at t
    bytes_moved(t)       bytes delivered by time t
It is a cache, not a second model: held applies the trace's messages with the engine's own
rule (simcore.trace._apply_to: a reduce unites the sets, else the message's set replaces the
slot's) on bitsets, a step's messages at once, memoised (the last answer and 16 checkpoints per
collective) so that playing forward costs only the new messages.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from simcore import comm_sim
from simcore.comm_sim import ALLREDUCE_ALGOS, LINKS, LinkSpec
from simcore.scenarios import demo_values
from simcore.trace import ALL, SWITCH, Initial, Trace
from simcore.trace import _apply as apply_message  # the engine's one rule for "a message arrives"

KINDS = ("all-gather", "reduce-scatter", "all-reduce", "matmul-1", "matmul-2", "matmul-3", "matmul-4",
         "tp-forward", "decode")
COLLECTIVE_KINDS = ("all-gather", "reduce-scatter", "all-reduce")
ALGO_KINDS = ("all-reduce", "matmul-3", "tp-forward", "decode")  # kinds where the all-reduce algorithm is a choice
MAX_N = 256  # the ring view, timeline and buffers draw at most this many devices
# on a machine (issue 15) the topology's algorithms time message by message: a whole NVL72 rack
# or 8 DGX nodes build in well under a second, 32 nodes would take 15 s
MACHINE_MAX_N, MACHINE_MAX_N_CHANNELS = 72, 32
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
    machine = getattr(sc, "topology", "")
    if machine:  # a machine by name (simcore.topology_presets): its groups and algorithms
        from simcore.topology_presets import check_machine

        check_machine(sc.kind, machine, n, sc.algo, COLLECTIVE_KINDS)
        if n > MACHINE_MAX_N or (sc.algo == "ring-nodes" and n > MACHINE_MAX_N_CHANNELS):
            raise ValueError(f"on a machine the app simulates every message while you watch: at most "
                             f"{MACHINE_MAX_N} devices ({MACHINE_MAX_N_CHANNELS} with NCCL's channel rings), got {n}")
    elif sc.algo not in ALLREDUCE_ALGOS:
        raise ValueError(f"unknown algorithm {sc.algo!r}; choose one of {', '.join(ALLREDUCE_ALGOS)}")
    elif not takes_algo(sc.kind) and sc.algo != "ring":
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
    chip: object = None  # hw_specs.Chip whose roofline times the forward's ops (None: no compute recorded)
    prec: str = "bf16"  # the precision the ops are timed at (the chip's peak; 2-byte weights and activations)


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
    if getattr(sc, "topology", ""):  # a named machine (issue 15): its topology, its algorithms
        from simcore.topology_presets import run_on_preset

        comm, inputs, _out = run_on_preset(sc.kind, sc.topology, sc.n, float(sc.nbytes), sc.algo)
        return _finish(sc, comm.trace, comm.link, comm, inputs={0: inputs})
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
    elif trace.computes:  # nothing sent (n = 1), only ops: play one op per pace step
        ref = float(np.median([c.t_end - c.t_start for c in trace.computes]))
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


FORWARD_BYTES = 2.0  # the forward is timed in bf16: 2 bytes per weight, activation and K/V element
FORWARD_PREC = "bf16"  # ... at the chip's bf16 peak (hw_specs)
FALLBACK_CHIP = "h100"  # links no chip of hw_specs names as its own (PCIe, InfiniBand) join H100s


def scenario_chip(link_key: str):
    """The chip whose ops a scenario on `link_key` times: the first of hw_specs.CHIPS with that
    scale-up link (nvlink4 -> H100, tpu-v5e-ici -> TPU v5e), else H100."""
    from simcore.hw_specs import CHIPS

    return next((c for c in CHIPS.values() if c.link == link_key), CHIPS[FALLBACK_CHIP])


def _forward_comm(cfg, n, link, chip, algo, ctx=0, tokens=TP_SEQ):
    """
    The lecture model's forward on the clock: step_sim runs tp_forward's layer schedule on its
    shapes (B = TP_BATCH sequences of `tokens` new tokens after `ctx` cached ones), every op timed
    by its roofline on `chip` (elementwise: the norms, RoPE, softmax and SwiGLU count too) and every
    collective with its real bytes — [B, T, d_model] activations, [B, T, vocab] logits,
    FORWARD_BYTES each. The forward: ctx 0, T = TP_SEQ; a decode step: ctx TP_SEQ, T = 1.
    """
    from simcore.step_sim import simulate_step

    return simulate_step(cfg, chip, link, n, TP_BATCH, ctx, tokens=tokens, w_bytes=FORWARD_BYTES,
                         kv_bytes=FORWARD_BYTES, act_bytes=FORWARD_BYTES, algo=algo, compute_prec=FORWARD_PREC,
                         elementwise=True, gather_logits=True)


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
    # the numbers: the sharded model on real arrays (its own Comm), checked against the single device
    if not decode:
        out = tp.tp_forward(dev, cfg, tokens, make_comm(n, link), algo=sc.algo)
        ref = tl.forward(params, cfg, tokens)
    else:  # prefill TP_SEQ tokens into the sharded KV caches, then one decode step of a new token
        caches = tp.tp_caches(cfg, dev, TP_BATCH)
        tp.tp_forward(dev, cfg, tokens, make_comm(n, link), caches=caches, algo=sc.algo)
        nxt = np.random.default_rng(1).integers(0, cfg.vocab, size=(TP_BATCH, 1))
        out = tp.tp_forward(dev, cfg, nxt, make_comm(n, link), caches=caches, algo=sc.algo)
        ref = tl.forward(params, cfg, np.concatenate([tokens, nxt], axis=1))[:, -1:]
    # the clock: the same schedule with every op and every collective's real bytes (the decode step
    # alone: one new token per sequence attending to the TP_SEQ cached ones)
    chip = scenario_chip(sc.link)
    comm = (_forward_comm(cfg, n, link, chip, sc.algo, ctx=TP_SEQ, tokens=1) if decode
            else _forward_comm(cfg, n, link, chip, sc.algo))
    diff = float(np.max(np.abs(np.asarray(out) - ref)))
    info = TPInfo(cfg, n, TP_BATCH, TP_SEQ, diff, decode, params=params, dev_params=dev, chip=chip,
                  prec=FORWARD_PREC)
    return _finish(sc, comm.trace, link, comm, tp=info)


# ---------------------------------------------------------------------------------------
# The index: the trace, asked by time
# ---------------------------------------------------------------------------------------
class Held:
    """
    What every device holds in one collective at one time, as arrays (one snapshot, never
    modified once returned): row d < n is device d, row n the switch (in-network reduction).
        present[r, ch]  the chunk is held (it was there at the start or a message brought it)
        bits[r, ch]     its contributors as a bitset (np.packbits order, device 0 the top bit)
        count[r, ch]    how many contributors (len of the set)
        low[r, ch]      the lowest contributor (−1 if none): the owner when count is 1
    `who(d, ch)` gives the frozenset; `as_dict()` the {device: {chunk: frozenset}} of trace.holdings.
    """

    __slots__ = ("n", "n_chunks", "present", "bits", "count", "low", "switch_seen", "_mapping")

    def __init__(self, n, n_chunks, present, bits, count, low, switch_seen):
        self.n, self.n_chunks = n, n_chunks
        self.present, self.bits, self.count, self.low, self.switch_seen = present, bits, count, low, switch_seen
        self._mapping = None

    def copy(self) -> Held:
        return Held(self.n, self.n_chunks, self.present.copy(), self.bits.copy(), self.count.copy(),
                    self.low.copy(), self.switch_seen)

    def row(self, d: int) -> int:
        return self.n if d == SWITCH else d

    def who(self, d: int, ch: int):
        """Device d's (SWITCH: the switch's) contributors in chunk ch, or None if not held."""
        r = self.row(d)
        if not self.present[r, ch]:
            return None
        return frozenset(np.flatnonzero(np.unpackbits(self.bits[r, ch])[: self.n]).tolist())

    def device(self, d: int) -> dict:
        """{chunk: frozenset} device d holds (trace.holdings' entry for d)."""
        return {int(ch): self.who(d, int(ch)) for ch in np.flatnonzero(self.present[self.row(d)])}

    def get(self, d: int, default=None):
        if d == SWITCH and not self.switch_seen:
            return default
        if not (d == SWITCH or 0 <= d < self.n):
            return default
        return self.device(d)

    def as_dict(self) -> dict:
        return {d: self.device(d) for d in self.devices()}

    def devices(self) -> list[int]:
        return list(range(self.n)) + ([SWITCH] if self.switch_seen else [])

    def mapping(self) -> HeldMapping:
        """The read-only {device: {chunk: frozenset}} view of this snapshot (one per snapshot)."""
        if self._mapping is None:
            self._mapping = HeldMapping(self)
        return self._mapping


class HeldMapping(Mapping):
    """trace.holdings' dict, decoded per device only when a device is asked for."""

    def __init__(self, held: Held):
        self.held = held
        self._rows = {}

    def __getitem__(self, d):
        if d not in self._rows:
            if not (d == SWITCH and self.held.switch_seen or isinstance(d, (int, np.integer)) and 0 <= d < self.held.n):
                raise KeyError(d)
            self._rows[d] = self.held.device(int(d))
        return self._rows[d]

    def __iter__(self):
        return iter(self.held.devices())

    def __len__(self):
        return self.held.n + (1 if self.held.switch_seen else 0)


def _members(r, n: int, explicit) -> np.ndarray:
    """(M, n) bool: row i says which devices are contributors of message i (columns w0..w3 of r)."""
    first, count, period, limit = (np.asarray(r[f], dtype=np.int64)[:, None] for f in ("w0", "w1", "w2", "w3"))
    x = np.arange(n, dtype=np.int64)[None, :]
    per = np.where(period > 0, period, 1)
    out = (x < limit) & ((x - first) % per < count)
    for i in np.flatnonzero(period[:, 0] == 0):  # an explicit list the trace keeps
        out[i] = False
        out[i, list(explicit[first[i, 0]: first[i, 0] + count[i, 0]])] = True
    return out


class TraceIndex:
    """Read-only answers about a Trace at time t (see module docstring)."""

    CHECKPOINTS = 16  # states kept per collective (scrubbing back replays at most 1/16 of it)

    def __init__(self, trace: Trace):
        self.trace = trace
        r = trace.rows()
        self.t_start = np.array(r["t_start"], dtype=float)
        self.t_end = np.array(r["t_end"], dtype=float)
        self.nbytes = np.array(r["nbytes"], dtype=float)
        self.t_total = trace.t_end
        self.eps = 1e-9 * max(self.t_total, 1e-12)
        # bytes delivered by time t: prefix sums over arrival times
        order = np.argsort(self.t_end, kind="stable")
        self._arrivals = self.t_end[order]
        self._cum_bytes = np.concatenate([[0.0], np.cumsum(self.nbytes[order])])
        # messages on the wire: sorted by start; none lasts longer than the longest
        self._by_start = np.argsort(self.t_start, kind="stable")
        self._starts_sorted = self.t_start[self._by_start]
        self._longest = float(np.max(self.t_end - self.t_start)) if len(self.t_start) else 0.0
        # steps: per collective, the end time of every step and the messages of every step
        self.step_ends: list[list[float]] = []
        self.step_msgs: list[list[np.ndarray]] = []
        steps = np.asarray(r["step"], dtype=np.int64)
        stops = {0.0}
        self._events = []
        for c in trace.collectives:
            ends = [b for _a, b in trace.step_times(c.id)] if c.n_steps else []
            ends = np.maximum.accumulate(ends).tolist() if ends else []  # a step ends once all before it have
            self.step_ends.append(ends)
            s = steps[c.first_msg:c.last_msg]
            by_step = np.argsort(s, kind="stable")
            cuts = np.searchsorted(s[by_step], np.arange(c.n_steps + 1))
            ids = by_step + c.first_msg
            self.step_msgs.append([ids[cuts[k]:cuts[k + 1]] for k in range(c.n_steps)])
            stops.update(ends)
            stops.add(c.t_end)
            # holdings: the collective's messages in arrival order (ties keep trace order)
            te = self.t_end[c.first_msg:c.last_msg]
            arr = np.lexsort((np.arange(len(te)), te))
            self._events.append((te[arr], arr + c.first_msg))
        self._index_computes(trace, stops)
        self.stops = sorted(stops)
        self.coll_starts = [c.t_start for c in trace.collectives]
        self.max_in_flight = _max_overlap(self.t_start, self.t_end)
        self.max_step_msgs = max((len(s) for per in self.step_msgs for s in per), default=0)
        self._checkpoints: dict[int, dict[int, Held]] = {}  # coll -> {count: state}
        self._cursor = None  # (coll, count, state): the last answer, extended forward cheaply

    def _index_computes(self, trace, stops: set):
        """Per device its ops by start time; every op's end is a stop, so stepping visits each op."""
        cs = trace.computes
        self.computes = cs
        self._ops = {}  # device -> (starts, ends, record indices), by start
        if not cs:
            return
        dev = np.array([c.device for c in cs])
        t0 = np.array([c.t_start for c in cs])
        t1 = np.array([c.t_end for c in cs])
        for d in np.unique(dev).tolist():
            sel = np.flatnonzero(dev == d)
            o = sel[np.argsort(t0[sel], kind="stable")]
            self._ops[d] = (t0[o], t1[o], o)
        stops.update(t1[t1 > t0].tolist())

    def computing(self, d: int, t: float):
        """The op device d is computing at t — under way, or the one that just ended at t — as its
        trace.Compute record, or None (idle, or in a collective)."""
        ops = self._ops.get(d)
        if ops is None:
            return None
        starts, ends, ids = ops
        i = int(np.searchsorted(starts, t - self.eps, side="left")) - 1  # the last op started before t
        if i < 0 or t > ends[i] + self.eps or ends[i] <= starts[i]:
            return None
        return self.computes[int(ids[i])]

    def op_number(self, d: int, rec) -> tuple[int, int]:
        """(j, J): rec (a record of device d) is d's j-th op, counted from 1, of its J, in start order."""
        starts, _ends, ids = self._ops[d]
        i = int(np.searchsorted(starts, rec.t_start - self.eps, side="left"))
        while i < len(ids) - 1 and self.computes[int(ids[i])] is not rec:  # ops that start together
            i += 1
        return i + 1, len(ids)

    def first_op(self, d: int):
        """Device d's first op (trace.Compute), or None."""
        ops = self._ops.get(d)
        return self.computes[int(ops[2][0])] if ops is not None else None

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
    def _started_by(self, t: float, strict: bool) -> np.ndarray:
        """Indices of messages that may be on the wire at t (started by t, not before t − longest)."""
        lo = np.searchsorted(self._starts_sorted, t - self._longest, side="left")
        hi = np.searchsorted(self._starts_sorted, t, side="left" if strict else "right")
        return self._by_start[lo:hi]

    def in_flight(self, t: float) -> np.ndarray:
        """Indices of messages with t_start <= t < t_end (ascending)."""
        cand = self._started_by(t, strict=False)
        return np.sort(cand[self.t_end[cand] > t])

    def moving(self, t: float) -> np.ndarray:
        """Indices of messages strictly under way at t (t_start < t < t_end): what the view draws.
        At a step boundary the next step's blocks have not left yet, so the picture is clean."""
        cand = self._started_by(t, strict=True)
        return np.sort(cand[self.t_end[cand] > t])

    def bytes_moved(self, t: float) -> float:
        return float(self._cum_bytes[np.searchsorted(self._arrivals, t, side="right")])

    def holdings(self, coll: int, t: float) -> Mapping:
        """trace.holdings(coll, t=t): {device: {chunk: frozenset}}, each device decoded when first
        read (the same object while no message arrives). Views at large n read `held(coll, t)`."""
        return self.held(coll, t).mapping()

    def held(self, coll: int, t: float) -> Held:
        """What every device holds in `coll` at t (messages with t_end <= t have arrived), as arrays.
        The same object is returned while no message arrives, so `is` tells a view nothing changed."""
        times, order = self._events[coll]
        count = int(np.searchsorted(times, t, side="right"))
        cur = self._cursor
        if cur is not None and cur[0] == coll and cur[1] == count:
            return cur[2]
        every = max(256, -(-len(order) // self.CHECKPOINTS))
        cps = self._checkpoints.setdefault(coll, {})
        if cur is not None and cur[0] == coll and cur[1] < count and count - cur[1] <= every:
            start, state = cur[1], cur[2].copy()
        else:
            best = max((k for k in cps if k <= count), default=0)
            start, state = (best, cps[best].copy()) if best else (0, self._initial(coll))
        j = start
        while j < count:  # apply in blocks that end on checkpoints
            stop = min(count, (j // every + 1) * every)
            self._apply(coll, state, order[j:stop])
            j = stop
            if j % every == 0 and j not in cps:
                cps[j] = state.copy()
        self._cursor = (coll, count, state)
        return state

    def _initial(self, coll: int) -> Held:
        c = self.trace.collectives[coll]
        n, nc = c.n, max(c.n_chunks, 1)
        nb = -(-n // 8)
        present = np.zeros((n + 1, nc), bool)
        bits = np.zeros((n + 1, nc, nb), np.uint8)
        count = np.zeros((n + 1, nc), np.int32)
        low = np.full((n + 1, nc), -1, np.int32)
        init = c.initial
        if isinstance(init, Initial):
            d = np.arange(n)
            mask = np.packbits(np.eye(n, dtype=bool), axis=1)  # row d: {d}
            chunks = (np.arange(c.n_chunks)[None, :].repeat(n, 0) if init.owned is None
                      else np.asarray(init.owned, np.int64)[:, None])
            rows = np.broadcast_to(d[:, None], chunks.shape)
            present[rows, chunks] = True
            bits[rows, chunks] = mask[rows]
            count[rows, chunks] = 1
            low[rows, chunks] = rows
        else:
            for dev, h in enumerate(init):
                for ch, who in h:
                    present[dev, ch] = True
                    m = np.zeros(n, bool)
                    m[sorted(who)] = True
                    bits[dev, ch] = np.packbits(m)
                    count[dev, ch] = len(who)
                    low[dev, ch] = min(who) if who else -1
        return Held(n, c.n_chunks, present, bits, count, low, False)

    def _apply(self, coll: int, state: Held, ids: np.ndarray):
        """Messages `ids` arrive, in this order: the engine's rule (simcore.trace._apply_to) on arrays."""
        if not len(ids):
            return
        c = self.trace.collectives[coll]
        n, nc = c.n, max(c.n_chunks, 1)
        lo, hi = int(ids.min()), int(ids.max()) + 1
        r = self.trace.rows(lo, hi)
        sel = ids - lo
        dst = np.asarray(r["dst"])[sel].astype(np.int64)
        rows = np.where(dst == SWITCH, n, dst)
        chunk = np.asarray(r["chunk"])[sel].astype(np.int64)
        red = np.asarray(r["reduce"])[sel]
        sub = {f: np.asarray(r[f])[sel] for f in ("w0", "w1", "w2", "w3")}
        mem = _members(sub, n, self.trace._explicit)
        packed = np.packbits(mem, axis=1)
        k = mem.sum(axis=1).astype(np.int32)
        low = np.where(k > 0, np.argmax(mem, axis=1), -1).astype(np.int32)
        if np.any(dst == SWITCH):
            state.switch_seen = True
        whole = chunk == ALL
        key = rows * nc + np.where(whole, 0, chunk)
        if not whole.any() and len(np.unique(key)) == len(key):  # each slot written once: no order
            s, rd = ~red, red
            state.bits[rows[s], chunk[s]] = packed[s]
            state.count[rows[s], chunk[s]] = k[s]
            state.low[rows[s], chunk[s]] = low[s]
            rr, cc = rows[rd], chunk[rd]
            had = state.present[rr, cc]
            state.bits[rr, cc] |= packed[rd]
            state.count[rr, cc] = _POPCOUNT[state.bits[rr, cc]].sum(axis=-1)
            old = np.where(had & (state.low[rr, cc] >= 0), state.low[rr, cc], n)
            new = np.where(low[rd] >= 0, low[rd], n)
            state.low[rr, cc] = np.where(np.minimum(old, new) < n, np.minimum(old, new), -1)
            state.present[rows, chunk] = True
            return
        for i in range(len(ids)):  # the general case, message by message (whole buffers, repeats)
            row = rows[i]
            chs = slice(None) if whole[i] else chunk[i]
            if red[i]:
                b = state.bits[row, chs] | packed[i]
                state.bits[row, chs] = b
                state.count[row, chs] = _POPCOUNT[b].sum(axis=-1)
                old = np.where(state.present[row, chs] & (state.low[row, chs] >= 0), state.low[row, chs], n)
                m = np.minimum(old, low[i] if low[i] >= 0 else n)
                state.low[row, chs] = np.where(m < n, m, -1)
            else:
                state.bits[row, chs] = packed[i]
                state.count[row, chs] = k[i]
                state.low[row, chs] = low[i]
            state.present[row, chs] = True

    def last_arrivals(self, coll: int, t: float) -> list[int]:
        """Messages of the last step of `coll` finished by t (what the view outlines as new)."""
        k = self.steps_done(coll, t)
        if k == 0:
            return []
        return self.step_msgs[coll][k - 1]


_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], np.int32)


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
