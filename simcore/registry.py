"""
registry — what a collective op and its algorithms are, and where they are kept: one `Op`
record per collective (all-reduce, all-gather, reduce-scatter, all-to-all, …) holding its
`Algorithm` records. Every reader — the closed forms (simcore.algorithms), a topology's menu and
choice (simcore.topology), run_collective, the CLIs, the MPI mapping, calibration and the app —
asks here, so an op is added by writing its module and registering its record once
(simcore.algorithms does it for the four built-in ops; docs/extending.md walks it).

Plain Python; imports nothing of the engine, so an op's module may import it to build its
records. Readers import the registry through simcore.algorithms (or comm_sim), which registers
the built-in ops when it is first imported: OPS and ALGORITHMS here are empty until then.
"""

from __future__ import annotations

from typing import Callable, NamedTuple


class Algorithm(NamedTuple):
    """
    One collective algorithm. Field [1] is the function (the lecture calls
    `ALLREDUCE_ALGOS[algo][1](comm, arrays)`).

    description    one line in English (CLI help, error messages)
    fn             the function: all-reduce fn(comm, arrays, label=""); all-gather
                   fn(comm, chunks, owner, label=""); reduce-scatter fn(comm, arrays, label="")
    closed_form    closed_form(n) -> (a, b): on one idle switch T = a·α + b·S/β (n may be a
                   numpy array; n = 1 costs nothing whatever a, b say)
    message_count  message_count(n) -> messages one call sends (n >= 2)
    phases         the phase names its messages carry, in order
    explain_key    key of its sentences (name, title, hint) in app/words.py (algo_text)
    formula        formula(n) -> the closed form as written on a slide (plain text; α β S n)
    queues         a device issues several sends at once and they wait for its port in turn
                   (the ring view counts them beside each device)
    topologies     the topology kinds it runs on (topology.kinds: "switch", "nodes", "torus",
                   "torus-1d" a ring with its wraparound)
    owner          owner(n) -> the chunk device d holds after a reduce-scatter (None: chunk d)
    time_on        time_on(topology, S, op) -> closed-form seconds on that topology, base
                   included (None: algorithms.t_formula_on's forms)
    terms_on       terms_on(topology, S, op) -> [(key, formula, seconds, numbers)]: time_on's form
                   term by term, base excluded, their seconds summing to time_on − base; None (the
                   field, or what it returns on a topology): one term, "form" (algorithms.terms_on)
    """

    description: str
    fn: Callable
    closed_form: Callable
    message_count: Callable
    phases: tuple
    explain_key: str
    formula: Callable
    queues: bool = False
    topologies: tuple = ("switch", "nodes")
    owner: Callable | None = None
    time_on: Callable | None = None
    terms_on: Callable | None = None


CHUNKS = "chunks"  # n chunks of S/n; a device's chunk holds a partial sum (its contributors)
BLOCKS = "blocks"  # n² slots: chunk s·n + d is device s's block for device d (it moves, never adds)


class Op(NamedTuple):
    """
    One collective op, as every reader needs it.

    name          "all-reduce", "all-to-all", … (the trace's op, the CLIs' --op)
    algorithms    {name: Algorithm}, every algorithm of the op on every topology
    default       the algorithm the lecture runs on one switch when none is named
    slots         how its trace names what a device holds: CHUNKS (n chunks, partial sums with
                  their contributors) or BLOCKS (n² slots, block s → d as chunk s·n + d); the
                  app's buffers, step words and questions follow it
    size          what S is: "array" (the full array, nccl-tests' all-reduce/gather/scatter
                  size) or "buffer" (one device's buffer, nccl-tests' alltoall size)
    bus_factor    bus_factor(n): nccl-tests' busbw = algbw × bus_factor(n)
    demo          demo(comm, algo, values, e) -> (inputs, outputs): one run of the op on comm
                  with e values per chunk, values(shape) giving its numbers; inputs laid out
                  in the trace's chunk order, one row per device (simcore.scenarios.run_collective)
    machines      whether the app draws it on a named machine (nodes, torus)
    selftest      selftest(rng, make_comm) -> one line: checks the op against numpy and its closed
                  forms on comms from the lecture's make_comm (python -m simcore selftest runs
                  every op's); None: checked elsewhere
    """

    name: str
    algorithms: dict
    default: str
    slots: str = CHUNKS
    size: str = "array"
    bus_factor: Callable = lambda n: (n - 1) / n
    demo: Callable | None = None
    machines: bool = True
    selftest: Callable | None = None


# OPS[name]: every registered op, in the order registered (argparse choices, menus, messages);
# ALGORITHMS[name]: its algorithms (the same dict as OPS[name].algorithms).
OPS: dict[str, Op] = {}
ALGORITHMS: dict[str, dict] = {}


def register(op: Op) -> Op:
    """Add `op` (once) and return it."""
    if op.name in OPS:
        raise ValueError(f"collective {op.name!r} is registered twice")
    if op.default not in op.algorithms:
        raise ValueError(f"{op.name}: its default {op.default!r} is not one of its algorithms")
    OPS[op.name] = op
    ALGORITHMS[op.name] = op.algorithms
    return op


def op_record(op) -> Op:
    """The record of collective `op`; ValueError naming those there are."""
    if op not in OPS:
        raise ValueError(f"unknown collective {op!r}; choose one of {', '.join(OPS)}")
    return OPS[op]


def slots_of(op) -> str:
    """CHUNKS or BLOCKS for a trace's op; an op no record names (a student's own run) has chunks."""
    rec = OPS.get(op)
    return CHUNKS if rec is None else rec.slots


def algorithm_registry(op):
    """ALGORITHMS[op], or a ValueError naming the collectives there are."""
    return op_record(op).algorithms


def algorithm(op, algo) -> Algorithm:
    """The registry record of `algo` for collective `op`; a clear ValueError for unknown ones."""
    reg = algorithm_registry(op)
    if algo not in reg:
        raise ValueError(f"unknown {op} algorithm {algo!r}; choose one of {', '.join(reg)}")
    return reg[algo]


def all_algorithm_names() -> list:
    """Every algorithm name of every op, once, in registry order (a CLI's --algo choices)."""
    return list(dict.fromkeys(a for reg in ALGORITHMS.values() for a in reg))


def runs_on(rec, topology) -> bool:
    """Whether registry record `rec` can run on `topology` (its kinds meet rec.topologies)."""
    return bool(set(rec.topologies) & topology.kinds)


def algorithms_on(topology, op="all-reduce"):
    """The names of the algorithms of `op` that can run on `topology`, in registry order."""
    return tuple(k for k, rec in algorithm_registry(op).items() if runs_on(rec, topology))


def check_algo_on(topology, op, algo):
    """The record of `algo` for `op` if it can run on `topology`; else ValueError, one sentence
    naming those that can."""
    rec = algorithm(op, algo)
    if not runs_on(rec, topology):
        raise ValueError(f"{op} algorithm {algo!r} cannot run on {topology.name}; there choose one of "
                         f"{', '.join(algorithms_on(topology, op))}")
    return rec
