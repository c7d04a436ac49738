"""
plan — one plan per collective, resolved once: `topology.plan(op, nbytes, algo=None)`.

A Plan is the one decision of which algorithm runs a collective and how it is timed: the
registry record, NCCL's protocol, the chunks, the topology it is timed with (its links and
base latency: what topology.timed_as gives), the closed-form terms and their total, and why
(as numbers; the app words them in its language). topology.choose, protocol, timed_as and time
read it, and every run path executes one (`execute(comm, plan)`), so a second place that decides
the same thing cannot drift from this one.

Names. algo=None is the machine's choice (NCCL's tuner on a GPU machine, the lecture's ring on a
plain switch, hier or NCCL's channel rings across nodes, bidirectional rings on a torus).
"ring" is always the lecture's flat ring d → d+1 over all n devices, on every machine: on
several nodes it crosses between them after every per_node-th device. NCCL's channel rings
(one per NIC) keep their own name, "ring-nodes".

Plans are cached per (topology, op, nbytes, algo): asking again is free. cache_info() counts
the misses (each one evaluates NCCL's model once).
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """
    One named term of a closed form, in seconds: the time is the sum of the plan's terms, each as the
    formula panel shows it, decided by the engine where the algorithm's closed form lives
    (algorithms.terms_on and the records' terms_on: topo_closed_forms, tree_allreduce, all_to_all).
      name      the stable key the app words: "form" (the registry's formula, rec.formula(n)),
                "hier-rs-intra", "hier-ar-inter", "hier-ag-intra", "hier-pipeline", "tree", "ring-nodes",
                "ring-across-nodes", "rd-intra", "rd-inter", "innet-fabric", "torus-rings", "a2a-nodes",
                "base" (the machine's base latency B of the call), "launch-floor" (what the launch mode's
                measured floor adds to NCCL's time)
      seconds   its value on the plan's timed links
      formula   the math as on a slide, subscripts written _f, _i ("(P − 1)·(α_f + S/(P·β_f))")
      numbers   ((name, value), …) its words need: link (a LinkSpec's name), P, N, C, K, shape, a and b
                (T = a·α + b·S/β on one switch), op, algo, n; floor and mode (the launch floor's)
    """

    name: str
    seconds: float
    formula: str = ""
    numbers: tuple = ()

    @property
    def key(self) -> str:
        return self.name

    def get(self, number, default=None):
        """The value of one of its numbers ("P", "link", …), else default."""
        return dict(self.numbers).get(number, default)

    def to_json(self) -> list:
        return [self.name, self.seconds, self.formula, {k: list(v) if isinstance(v, tuple) else v
                                                        for k, v in self.numbers}]

    @classmethod
    def from_json(cls, t) -> Term:
        """A term as a trace file keeps it: [name, seconds] (files before the terms' formulas) or
        [name, seconds, formula, numbers]."""
        if len(t) == 2:
            return cls(str(t[0]), float(t[1]))
        nums = tuple((str(k), tuple(v) if isinstance(v, list) else v) for k, v in t[3].items())
        return cls(str(t[0]), float(t[1]), str(t[2]), nums)


@dataclass(frozen=True)
class Why:
    """
    Why the plan runs what it runs, as numbers (the app words them, en/zh):
      kind       "lecture" (no NCCL model here: the lecture's α–β form), "custom" (a custom
                 all-reduce kernel's α and β), "not-nccl" (NCCL's model does not time algo),
                 "fastest" (NCCL's fastest (algorithm, protocol) at this size), "protocol" (the
                 least of NCCL's protocols for algo, which is not NCCL's fastest), "default" (a
                 machine's own default without NCCL: hier, ring-nodes, torus, ring), "p2p"
                 (NCCL's grouped send/recv all-to-all)
      label      the algorithm as NCCL's model names it ("hier (NCCL's NVLS Tree)"); algo the registry's
                 name, nccl NCCL's own ("Ring", "NVLS", "NVLS_TREE"; "" where none)
      protocol   NCCL's protocol ("" where none)
      latency, algbw   NCCL's model of it (s, bytes/s); custom α, β for "custom"
      next_label, next_algo, next_nccl, next_protocol, next_time   the runner-up of NCCL's model ("" / 0
                 where none)
      chunks     hier's pipeline chunks on several nodes (0: not hier across nodes)
      launch     the machine's launch mode ("", "graph", "eager") and its floor (s)
      text       the engine's English sentence (CLIs, errors)
      mesh       a mesh axis plan's own reason (simcore.mesh Mesh.plan; "" for a machine's plan): "pairs"
                 (ppermute), "a2a-direct", "a2a-axes", "a2a-bidi", "a2a-ring" (all-to-all: one-shot; on a
                 torus axis by axis, the shorter way round, round the ring), "multi-axis" (the book's gather
                 over several torus axes), "line" (an axis without wraparound), "bidi", "pair" (a ring of
                 two), "ring" (the lecture's ring over each group), "nccl-group" (NCCL's choice for one
                 group), "nccl-own-differs" (the group runs algo; NCCL's own pick differs), "nccl-cannot"
                 (NCCL's pick for a group the engine runs only over a whole machine: the ring instead),
                 "asked"
      numbers    ((name, value), …) the mesh reason's words need: algo, protocol, g, k, axis, axes, hops,
                 machine and group (a machine as numbers: ("switch", n, link), ("nodes", N, P, intra, inter),
                 ("torus", shape)), label, own_algo, own_nccl, own_protocol
    """

    kind: str
    label: str = ""
    algo: str = ""
    nccl: str = ""
    protocol: str = ""
    latency: float = 0.0
    algbw: float = 0.0
    next_label: str = ""
    next_algo: str = ""
    next_nccl: str = ""
    next_protocol: str = ""
    next_time: float = 0.0
    chunks: int = 0
    launch: str = ""
    launch_floor: float = 0.0
    text: str = ""
    mesh: str = ""
    numbers: tuple = ()

    def __post_init__(self):  # a trace file gives lists: keep numbers hashable
        object.__setattr__(self, "numbers", tuple((str(k), _frozen(v)) for k, v in self.numbers))

    def get(self, number, default=None):
        """The value of one of its numbers ("g", "protocol", …), else default."""
        return dict(self.numbers).get(number, default)


def _frozen(v):
    return tuple(_frozen(x) for x in v) if isinstance(v, (list, tuple)) else v


@dataclass(frozen=True)
class PlanRecord:
    """A plan's essential fields, as a trace's collective record keeps them (and trace files save)."""

    op: str
    algo: str
    protocol: str
    chunks: int
    nbytes: float
    time: float | None
    terms: tuple  # of Term
    why: Why
    choice: bool  # algo was the machine's choice (algo=None)
    machine: str  # the topology's name

    def to_json(self) -> dict:
        return {"op": self.op, "algo": self.algo, "protocol": self.protocol, "chunks": self.chunks,
                "nbytes": self.nbytes, "time": self.time, "terms": [t.to_json() for t in self.terms],
                "why": {k: getattr(self.why, k) for k in Why.__dataclass_fields__}, "choice": self.choice,
                "machine": self.machine}

    @classmethod
    def from_json(cls, d: dict) -> PlanRecord:
        return cls(str(d["op"]), str(d["algo"]), str(d["protocol"]), int(d["chunks"]), float(d["nbytes"]),
                   None if d["time"] is None else float(d["time"]),
                   tuple(Term.from_json(t) for t in d["terms"]), Why(**d["why"]), bool(d["choice"]),
                   str(d["machine"]))


@dataclass(frozen=True)
class Plan:
    """
    How one collective runs on a machine, decided once (see the module docstring):
      topology   the machine asked;   timed   the machine with the links and base latency the
                 simulation runs the plan with (NCCL's protocol for the size on a GPU machine)
      op, nbytes, algo, record (the registry's Algorithm), protocol ("" where none), chunks
      terms      the closed form's named terms (Term: key, seconds, formula, numbers) on the timed links,
                 as the formula panel shows them; time their sum (None where no closed form exists on
                 this machine: the simulation is the only time, and there are no terms)
      links      ((role, LinkSpec), …) of the timed machine the terms' α and β are: role "intra" and
                 "inter" (α_f, β_f and α_i, β_i) across several nodes, else "link"
      why        Why: the reason as numbers;  why_text  the reason in one English sentence
      choice     algo was the machine's choice (asked with algo=None)
    """

    topology: object
    op: str
    nbytes: float
    algo: str
    record: object
    protocol: str
    chunks: int
    timed: object
    terms: tuple
    time: float | None
    why: Why
    why_text: str
    choice: bool
    no_time: str = ""  # the sentence time() raises where no closed form exists
    protocol_reason: tuple = ("", "")  # (protocol, sentence) topology.protocol says for algo at this size
    links: tuple = ()

    def seconds(self) -> float:
        """The closed-form time; ValueError (one sentence) where none exists on this machine."""
        if self.time is None:
            raise ValueError(self.no_time)
        return self.time

    def record_fields(self) -> PlanRecord:
        """The essentials a trace keeps (PlanRecord)."""
        return PlanRecord(self.op, self.algo, self.protocol, self.chunks, float(self.nbytes), self.time,
                          self.terms, self.why, self.choice, self.topology.name)


def plan(topology, op, nbytes, algo=None, group=None) -> Plan:
    """The Plan of `op` on nbytes (S: the full array's bytes) with `algo` (None: the machine's
    choice) on `topology`; group: a sub-machine (a topology of the group's devices) to plan on
    instead, as a mesh axis's groups are. Cached: asking again is free."""
    if group is not None:
        topology = group
    return _plan(topology, str(op), float(nbytes), algo)


def resolve(topology, op, nbytes, algo=None) -> Plan:
    """The plan a run executes: the machine's choice (plan(..., None)) when algo is None or names
    that choice (so a run of the machine's own algorithm and a reader of the choice share one plan),
    else plan(..., algo)."""
    p = plan(topology, op, nbytes)
    return p if algo is None or algo == p.algo else plan(topology, op, nbytes, algo)


def cache_info():
    """functools' CacheInfo of the plans: misses = plans resolved (each evaluates NCCL's model)."""
    return _plan.cache_info()


def cache_clear():
    _plan.cache_clear()


@functools.lru_cache(maxsize=4096)
def _plan(topo, op, S, algo):
    from .registry import check_algo_on
    choice = algo is None
    if choice:
        algo, proto, text = topo._decide_choice(op, S)
    rec = check_algo_on(topo, op, algo)
    pproto, ptext = topo._decide_protocol(op, algo, S)
    if not choice:
        proto, text = pproto, ptext
    timed = topo._decide_timed(op, algo, S)
    chunks = topo._decide_chunks(op, algo, S, timed)
    try:
        time, no_time = topo._decide_time(op, algo, S), ""
    except ValueError as e:
        time, no_time = None, str(e)
    terms = _terms(topo, op, algo, S, time, timed)
    why = _why(topo, op, algo, S, chunks, text)
    return Plan(topo, op, S, algo, rec, proto, chunks, timed, terms, time, why, text, choice, no_time, (pproto, ptext),
                timed_links(timed))


# -- the terms: the closed form as the formula panel shows it ------------------------------------------
def _terms(topo, op, algo, S, time, timed):
    """
    The closed form's terms on the timed links (timed._decide_terms, algorithms.terms_on: the form's own
    decomposition, next to the closed form it sums), then the base latency B of the call and, on a GPU
    machine with a launch mode, what its measured floor adds to NCCL's time. Where NCCL's model times a
    collective its timed links make the α–β form equal NCCL's time (every preset, op and algorithm does:
    an α–β form exists on them wherever a time does); the terms must sum to time within 1e-9 (else
    AssertionError) and the last term of the form takes the rounding, so that they sum to time exactly.
    """
    if time is None:
        return ()
    n = topo.n
    late = _launch_late(topo, op, algo, S, time)
    out = [Term(key, float(sec), formula, tuple(nums.items())) for key, formula, sec, nums in
           timed._decide_terms(op, algo, S)]
    base = float(timed.base) - late if n > 1 else 0.0
    rest = time - late - base  # what the form's terms must sum to
    got = sum(t.seconds for t in out)
    if abs(got - rest) > 1e-9 * max(abs(time), 1e-300) + 1e-18:
        raise AssertionError(f"the terms of {op} {algo} on {topo.name} sum to {got + base + late!r} s, not its "
                             f"time {time!r} s")
    if out:
        last = out[-1]
        out[-1] = Term(last.name, last.seconds + (rest - got), last.formula, last.numbers)
    if base > 0:
        out.append(Term("base", base, "B"))
    if late > 0:
        out.append(Term("launch-floor", late, "max(0, L − T_NCCL)",
                        (("floor", topo.launch_floor()), ("mode", getattr(topo, "launch", "")))))
    return tuple(out)


def _launch_late(topo, op, algo, S, time):
    """What the launch mode's floor adds to NCCL's time (topology._decide_time: max(NCCL's time, floor)); 0
    where NCCL's model does not time algo or no floor applies."""
    if not topo.tuning or topo.n < 2:
        return 0.0
    if op == "all-to-all" and algo == "direct":
        t = topo._p2p("time", S)
    else:
        ms = topo._models(op, algo)
        if not ms:
            return 0.0
        t = min(m.time(S) for m in ms)
    return max(0.0, time - t)


def timed_links(timed):
    """((role, LinkSpec), …) of the timed machine, each link once: "intra" and "inter" across several nodes,
    else "link" (Plan.links)."""
    if "nodes" in timed.kinds and timed.n_nodes > 1:
        pairs = (("intra", timed.intra), ("inter", timed.inter))
    else:
        pairs = (("link", timed.link),)
    out, names = [], set()
    for role, ln in pairs:
        if ln.name not in names:
            names.add(ln.name)
            out.append((role, ln))
    return tuple(out)


def _why(topo, op, algo, S, chunks, text):
    """Why as numbers (the numbers the app's reason words: app/words.py, plan_reason)."""
    mode = getattr(topo, "launch", "")
    across = algo == "hier" and op == "all-reduce" and getattr(topo, "n_nodes", 1) > 1
    launch = dict(launch=mode, launch_floor=topo.launch_floor(), chunks=chunks if across else 0, text=text,
                  algo=algo)
    if not topo.tuning or topo.n < 2:
        return Why("lecture", label=algo, **launch)
    ranked = sorted(topo.nccl_models(op), key=lambda m: m.time(S))
    mine = [m for m in ranked if m.algo == algo]
    custom = topo.custom_kernel(algo, op)
    if not mine and custom:
        return Why("custom", label=algo, latency=custom[0], algbw=custom[1], **launch)
    if not mine:
        return Why("not-nccl", label=algo, **launch)
    from .nccl_tuning import label
    best = mine[0]
    if ranked[0] is best:
        nxt = ranked[1] if len(ranked) > 1 else None
        return Why("fastest", label=label(best), nccl=best.nccl, protocol=best.protocol, latency=best.latency,
                   algbw=best.algbw, next_label=label(nxt) if nxt else "", next_algo=nxt.algo if nxt else "",
                   next_nccl=nxt.nccl if nxt else "", next_protocol=nxt.protocol if nxt else "",
                   next_time=nxt.time(S) if nxt else 0.0, **launch)
    return Why("protocol", label=label(best), nccl=best.nccl, protocol=best.protocol, latency=best.latency,
               algbw=best.algbw, **launch)


@contextlib.contextmanager
def execute(comm, p: Plan):
    """Within the block, comm runs plan p: its messages timed with p.timed (the links and base
    latency NCCL's protocol gives on a GPU machine), and the collective it records carries p's
    essentials (trace.collectives[i].plan). Yields p."""
    prev_topo = comm.topology
    prev_plan = getattr(comm, "_executing", None)
    if p.timed is not prev_topo:
        comm._use_topology(p.timed)
    comm._executing = p.record_fields()
    try:
        yield p
    finally:
        comm._executing = prev_plan
        if p.timed is not prev_topo:
            comm._use_topology(prev_topo)
