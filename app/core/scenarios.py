"""
Build the engine run for one `Scenario` and index its trace for drawing.

`build_run(scenario)` runs the simulation once (simcore does all the work) and returns a
`Run`: the trace, the link, the arrays a view may want (collective inputs, the matmul's
matrices, TP's max |TP − single|) and a `TraceIndex` (app.core.trace_index). Views never re-derive
an algorithm: they ask the index what the trace says at time t (app.core.frame resolves it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from simcore.comm_sim import ALGORITHMS, LINKS, LinkSpec
from simcore.algorithms import BLOCKS, OPS
from simcore.scenarios import demo_values, parse_bytes
from simcore.trace import Trace

from ..words import MATMUL_NOTATION, fmt_bytes
from .prepared import prepare
from .trace_index import TraceIndex

# The collectives are the registry's ops (simcore.registry.OPS), in its order: a new op is a kind here
COLLECTIVE_KINDS = tuple(OPS)
KINDS = COLLECTIVE_KINDS + ("matmul-1", "matmul-2", "matmul-3", "matmul-4", "tp-forward", "decode", "mesh")
# the ops the app draws on a named machine (Op.machines: the chunk-ring ops; blocks draw on one switch)
MACHINE_KINDS = tuple(k for k, op in OPS.items() if op.machines)
BLOCKS_MAX_N = 64  # an op with n² block slots (all-to-all: n(n−1) messages): its views draw n² slots per device
MAX_N = 256  # the ring view, timeline and buffers draw at most this many devices
# on a machine the topology's algorithms time message by message: 32 DGX nodes' all-reduce takes
# seconds to build, so builds run on the app's worker while the window says so (app/state.py)
MACHINE_MAX_N = 256
# NCCL's channel rings record n·(n−1)·2 messages per NIC channel for an all-reduce: at 256 GPUs about
# a million messages, 22 s and 4 GB to build (2.5 s and 0.8 GB at 128), too much for a student's laptop
CHANNEL_ALLREDUCE_MAX_N = 128
MAX_BYTES = 2.0 ** 40


def algo_op(kind: str) -> str:
    """The collective whose algorithm a kind chooses: the kind itself for a collective; the all-reduce
    for the matmul case 3, the TP forward and the decode step (their collective that has a choice)."""
    return kind if kind in COLLECTIVE_KINDS else "all-reduce"


def algos_of(kind: str) -> dict:
    """The algorithms on offer for the kind on the lecture's one switch: the registry's records of its
    collective that run there, in registry order."""
    reg = ALGORITHMS[algo_op(kind)]
    return {k: rec for k, rec in reg.items() if "switch" in rec.topologies}


def takes_algo(kind: str) -> bool:
    """Whether the kind has an algorithm to choose (the matmul cases 1, 2, 4 move nothing or one ring)."""
    return kind in COLLECTIVE_KINDS + ("matmul-3", "tp-forward", "decode") and len(algos_of(kind)) > 1


def default_algo(kind: str) -> str:
    """The algorithm a kind opens with on one switch: its collective's default (ring; all-to-all direct)."""
    return OPS[algo_op(kind)].default if kind in COLLECTIVE_KINDS or takes_algo(kind) else "ring"


def _max_n(kind: str) -> int:
    return BLOCKS_MAX_N if kind in COLLECTIVE_KINDS and OPS[kind].slots == BLOCKS else MAX_N


def validate(sc) -> None:
    """Raise ValueError with one clear sentence if the scenario cannot be run."""
    if sc.kind not in KINDS:
        raise ValueError(f"unknown scenario {sc.kind!r}; choose one of {', '.join(KINDS)}")
    if sc.kind == "mesh":
        return _validate_mesh(sc)
    n = sc.n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"the number of devices must be a whole number, got {n!r}")
    if n < 1:
        raise ValueError(f"the number of devices must be at least 1, got {n}")
    if n > MAX_N:
        raise ValueError(f"the ring view draws at most {MAX_N} devices, got {n}")
    machine = getattr(sc, "topology", "")
    if machine and sc.kind in COLLECTIVE_KINDS and sc.kind not in MACHINE_KINDS:
        raise ValueError(f"{sc.kind} runs on one switch in the app, not on {machine!r}")
    if n > _max_n(sc.kind):
        raise ValueError(f"{sc.kind} moves n² blocks: the app draws it for at most {_max_n(sc.kind)} devices, got {n}")
    if machine:  # a machine by name (simcore.topology_presets): its groups and algorithms
        from simcore.topology_presets import check_machine

        check_machine(sc.kind, machine, n, sc.algo, MACHINE_KINDS)
        if n > MACHINE_MAX_N:
            raise ValueError(f"on a machine the app simulates every message while you watch: at most "
                             f"{MACHINE_MAX_N} devices, got {n}")
        if sc.kind == "all-reduce" and sc.algo == "ring-nodes" and n > CHANNEL_ALLREDUCE_MAX_N:
            from simcore.topology_presets import get_preset

            channels = get_preset(machine).per_node  # one ring per NIC, a NIC per GPU of a node
            raise ValueError(f"NCCL's channel rings across {n} GPUs send {2 * n * (n - 1) * channels:,} messages, "
                             f"too many to build while you watch: the app runs them for at most "
                             f"{CHANNEL_ALLREDUCE_MAX_N} GPUs (choose hier for {n})")
    elif not (takes_algo(sc.kind) or sc.kind in COLLECTIVE_KINDS):
        if sc.algo != "ring":
            raise ValueError(f"{sc.kind} uses the ring algorithm only (got {sc.algo!r})")
    elif sc.algo not in algos_of(sc.kind):
        what = f"{algo_op(sc.kind)} algorithm" if sc.kind in COLLECTIVE_KINDS else "algorithm"
        raise ValueError(f"unknown {what} {sc.algo!r}; choose one of {', '.join(algos_of(sc.kind))}")
    if sc.link not in LINKS:
        raise ValueError(f"unknown link {sc.link!r}; choose one of {', '.join(LINKS)}")
    S = sc.nbytes
    if not (isinstance(S, (int, float, np.number)) and math.isfinite(S) and S > 0):
        raise ValueError(f"the message size must be a positive number of bytes, got {S!r}")
    if S > MAX_BYTES:
        raise ValueError(f"the message size must be at most 1 TiB, got {S:.4g} bytes")
    if sc.kind in COLLECTIVE_KINDS:  # one rule for every collective: S splits into n whole-byte chunks
        if S != int(S) or int(S) % n:
            raise ValueError(not_split(S, n))


# The rule for S when it does not split into n equal whole-byte chunks, the same on the command
# line and in the app: a size given (--bytes, the S field, a file) is refused in one sentence
# naming the nearest sizes that split (not_split); when only n changes (the n field, a machine's
# group, --n with the default S) the size asked for is kept in mind and the run uses the nearest
# size at or under it that splits (fit_bytes), which the S field shows exactly and says why.
def near_splits(nbytes: float, n: int) -> list[int]:
    """The sizes nearest to nbytes that split into n equal whole-byte chunks: the one under and the one
    over it (only the one over when nothing under it is at least n bytes)."""
    lo, hi = int(nbytes // n) * n, (int(nbytes // n) + 1) * n
    return [s for s in (lo, hi) if s >= n and s <= MAX_BYTES]


def not_split(nbytes: float, n: int) -> str:
    """The sentence for a size that does not split into n equal whole-byte chunks."""
    near = near_splits(nbytes, n)
    sizes = " and ".join(f"{s:,} B" for s in near)
    return (f"{_fmt_size(nbytes)} cannot be split into {n} equal whole-byte chunks: the nearest "
            + ("sizes that do are " if len(near) > 1 else "size that does is ") + sizes)


MESH_DEFAULT = ("X=2,Y=4", "redistribute")  # the mesh scenario's first mesh and program


def _validate_mesh(sc) -> None:
    """A mesh scenario: its mesh reads as NAME=SIZE pairs, n is their product, the program is
    registered and the mesh fits the machine (simcore.mesh.Mesh says why not). A dimension that
    does not split is found when the program runs (build_run: the same one sentence)."""
    from simcore.mesh import Mesh, MeshError
    from simcore.mesh.programs import get_program
    from simcore.mesh.scenario import parse_mesh, parse_params

    shape = parse_mesh(sc.mesh)
    n = math.prod(shape.values())
    if n > MAX_N:
        raise MeshError(f"the mesh view draws at most {MAX_N} devices; {sc.mesh} has {n}", "too-many", n=n, most=MAX_N)
    if sc.n != n:
        raise MeshError(f"the mesh {sc.mesh} has {n} devices, not n = {sc.n}", "mesh-n", mesh=sc.mesh, devices=n,
                        n=sc.n)
    get_program(sc.program).checked(parse_params(sc.params))  # MeshError: unknown program or parameter
    Mesh(tuple(shape.values()), tuple(shape), sc.topology or None)  # MeshError: it does not fit the machine


def mesh_n(text: str):
    """The devices of a mesh 'X=2,Y=4' (8), or None when it does not read."""
    from simcore.mesh.scenario import parse_mesh

    try:
        return math.prod(parse_mesh(text).values())
    except ValueError:
        return None


def fit_bytes(nbytes: float, n: int, kind: str) -> float:
    """The size to use when only n changed: nbytes, or the nearest smaller size that splits into n chunks."""
    if kind in COLLECTIVE_KINDS and n >= 1 and (nbytes != int(nbytes) or int(nbytes) % n):
        return float(max(n, int(nbytes) // n * n))
    return nbytes


def _fmt_size(b: float) -> str:
    """S as typed back to the reader: "1 MiB (1,048,576 B)", "1,001 B", "3.5 B"."""
    if b != int(b):
        return f"{b:g} B"
    exact = f"{int(b):,} B"
    unit = fmt_bytes(b)  # "1 MiB" only when it is exactly b: 1,048,575 B is not "1024 KiB"
    return exact if unit.endswith(" B") or parse_bytes(unit) != b else f"{unit} ({exact})"


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
    mesh: object = None  # app.core.mesh_model.MeshInfo of a mesh run (what the mesh view draws)
    # what the views derive from the whole run, made on the worker (app.core.prepared): key -> value
    prepared: dict = field(default_factory=dict, repr=False)

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
    if sc.kind == "mesh":  # the mesh brings its machine (sc.topology) itself
        return _build_mesh(sc)
    if getattr(sc, "topology", ""):  # a named machine: its topology, its algorithms
        from simcore.topology_presets import run_on_preset

        comm, inputs, _out = run_on_preset(sc.kind, sc.topology, sc.n, float(sc.nbytes), sc.algo)
        return _finish(sc, comm.trace, comm.link, comm, inputs={0: inputs})
    if sc.kind in COLLECTIVE_KINDS:
        from simcore.scenarios import run_collective

        cr = run_collective(sc.kind, sc.n, float(sc.nbytes), sc.algo, link)
        return _finish(sc, cr.trace, link, cr.comm, inputs={0: cr.inputs})
    if sc.kind.startswith("matmul-"):
        return _build_matmul(sc, link)
    if sc.kind == "mesh":
        return _build_mesh(sc)
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
    run = Run(sc, trace, link, comm, ref_step=ref, index=TraceIndex(trace), **extra)
    return prepare(run)  # the views' words, layout and rows for it, here on the worker


def _build_mesh(sc) -> Run:
    """A registered mesh program on the scenario's mesh and machine (simcore.mesh.scenario.run_mesh),
    read into the mesh view's MeshInfo (app.core.mesh_model)."""
    from simcore.mesh.programs import get_program
    from simcore.mesh.scenario import parse_params, run_mesh

    from .mesh_model import mesh_info

    res = run_mesh(sc.mesh, sc.program, sc.topology or None, **parse_params(sc.params))
    comm = res.mesh.comm
    info = mesh_info(res, get_program(sc.program).words)
    run = _finish(sc, comm.trace, comm.link, comm, mesh=info)
    steps = [e for e in info.events if len(e.groups[0]) > 1]
    if steps:  # the pace: one step of the first collective's ring
        e = steps[0]
        run = replace(run, ref_step=e.time / max(1, len(e.groups[0]) - 1))
    return run


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
                          MATMUL_NOTATION[1], err)
    elif case == 2:
        outs = shd.matmul_case2(comm, shd.shard(A, 1, n), B)
        err = max(float(np.max(np.abs(o - C))) for o in outs)
        info = MatmulInfo(2, A, B, C, 1, None, None, None, None, "all-gather", "A",
                          MATMUL_NOTATION[2], err)
    elif case == 3:
        outs = shd.matmul_case3(comm, shd.shard(A, 1, n), shd.shard(B, 0, n), algo=sc.algo)
        err = max(float(np.max(np.abs(o - C))) for o in outs)
        info = MatmulInfo(3, A, B, C, 1, 0, None, 1, 0, "all-reduce", "C",
                          MATMUL_NOTATION[3], err)
    else:
        C_sh = shd.matmul_case4(comm, shd.shard(A, 0, n), shd.shard(B, 1, n))
        err = float(np.max(np.abs(shd.unshard(C_sh, 0) - C)))
        info = MatmulInfo(4, A, B, C, 0, 1, 0, 0, None, "all-gather", "B",
                          MATMUL_NOTATION[4], err)
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
    from simcore import tensor_parallel as tp
    from simcore import transformer_lab as tl
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


@dataclass(frozen=True)
class Scenario:
    """
    What to simulate. kind: one of KINDS; n: devices; algo: the all-reduce algorithm (ring for
    the kinds without a choice); nbytes: S, the collective's full array in bytes (TP and matmul
    time their toy arrays as if they were S bytes); link: a key of simcore.comm_sim.LINKS;
    topology: "" (every device on one switch over `link`) or a simcore.topology_presets key
    (that machine's wiring, links and algorithms; the collectives only).
    """

    kind: str = "all-gather"
    n: int = 8
    algo: str = "ring"
    nbytes: float = float(2**20)
    link: str = "nvlink4"
    topology: str = ""
    mesh: str = ""  # the mesh scenario's axes and sizes, "X=2,Y=4" (n is their product)
    program: str = ""  # the mesh scenario's program (simcore.mesh.programs' registry)
    params: str = ""  # its parameters, "case=2" or "source=A[I_X, J_Y] target=A[I_XY, J]" (its defaults when "")

    def validate(self) -> Scenario:
        validate(self)
        return self

    def with_changes(self, **changes) -> Scenario:
        """A new Scenario; a kind without an algorithm choice falls back to ring unless asked."""
        if "nbytes" in changes and isinstance(changes["nbytes"], str):
            changes["nbytes"] = parse_bytes(changes["nbytes"])
        unknown = set(changes) - set(self.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown scenario field(s): {', '.join(sorted(unknown))}")
        new = replace(self, **changes)
        if new.kind == "mesh":  # n follows the mesh; a mesh scenario opens with MESH_DEFAULT
            if not new.mesh:
                new = replace(new, mesh=MESH_DEFAULT[0])
            if not new.program:
                new = replace(new, program=MESH_DEFAULT[1])
            if new.program != self.program and "params" not in changes:
                new = replace(new, params="")  # parameters belong to their program
            m = mesh_n(new.mesh)
            if m is not None and "n" not in changes:
                new = replace(new, n=m)
            return replace(new, algo="ring")
        if "algo" not in changes and not takes_algo(new.kind):
            new = replace(new, algo=default_algo(new.kind))
        if "algo" not in changes:
            new = replace(new, algo=machine_algo(new))
        return new


def machine_choice(sc):
    """(algo, protocol, why) the scenario's machine runs for its op at its size (topology.choose:
    NCCL's tuner on a GPU machine), None on the lecture's one switch (its ring stays the default)
    or where the machine cannot answer (a group it does not have: validate says why)."""
    if not sc.topology or sc.kind not in MACHINE_KINDS:
        return None
    from simcore.topology_presets import PRESETS, offered_algos

    try:
        preset = PRESETS[sc.topology]
        if not preset.is_valid(sc.n):
            return None
        choice = preset.topology(sc.n).choose(sc.kind, float(sc.nbytes))
        return choice if choice[0] in offered_algos(sc.topology, sc.n, sc.kind) else None
    except (KeyError, ValueError):
        return None


def machine_algo(sc) -> str:
    """The scenario's algorithm if its machine offers it, else the machine's own choice for the size
    (machine_choice; the first offered where it has none); with no machine, the topology algorithms
    fall back to the ring."""
    if not sc.topology:
        return default_algo(sc.kind) if sc.algo not in algos_of(sc.kind) else sc.algo
    from simcore.topology_presets import get_preset, offered_algos

    try:
        if not get_preset(sc.topology).is_valid(sc.n):
            return sc.algo  # validate() names the problem
        offered = offered_algos(sc.topology, sc.n, sc.kind if sc.kind in COLLECTIVE_KINDS else "all-reduce")
    except ValueError:
        return sc.algo
    if sc.algo in offered:
        return sc.algo
    choice = machine_choice(sc)
    return choice[0] if choice is not None else offered[0]
