"""
topology — the machines a Comm runs on: Switch, Nodes and Torus with their route(), and the
checked constructors switch(), nodes(), torus(). Re-exported by simcore.comm_sim, the engine's
public face.

Topologies. `switch(n, link)`: one non-blocking switch. `nodes(n_nodes, per_node, intra,
inter)`: device d on node d // per_node, a port into its node's switch (intra) and its own NIC
into a non-blocking fabric (inter: a message between nodes uses the NIC ports and inter's α, β).
`torus(shape, link)`: 1-3 axes with wraparound, a full-duplex link to ±1 on each axis, each link
its own port pair; a message may only go to a neighbour. Every collective runs on every
topology whose links can carry its messages; otherwise it raises ValueError naming the
topology and the Comm is left as it was. `Comm(topology)` asks a topology for four things —
the interface other collectives (simcore.topo_collectives) build on, kept stable:
    n               devices 0 .. n−1
    link            the LinkSpec of a device's main port (the one reports print)
    n_ports         port ids are 0 .. n_ports−1, each with a send and a receive side
    route(src, dst) -> (send_port, recv_port, link): the ports a message from src to dst
                    holds and the LinkSpec (α, β) that times it. src or dst may be SWITCH;
                    the switch's side has no port (None). Raises ValueError, naming the
                    topology, when src cannot send to dst directly.
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass

import numpy as np

from .kind_record import NODES_SPEC, TORUS_SPEC, KindRecord, LinkRole, switch_record
from .links import IB_NDR400, NVLINK4, TPU_V4_ICI, LinkSpec
from .trace import SWITCH

MAX_DEVICES = 4096  # a simulation larger than this is a typo, not a lecture


def _check_count(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ValueError(f"the number of {what} must be a whole number, got {v!r}")
    if v < 1:
        raise ValueError(f"the number of {what} must be at least 1, got {v}")
    return int(v)


def _check_total(n):
    if n > MAX_DEVICES:
        raise ValueError(f"{n} devices is more than this simulator handles (at most {MAX_DEVICES})")




class _Machine:
    """
    What every topology answers about its machine (the registry is simcore.algorithms):
      kinds                  the topology kinds it is (Algorithm.topologies names them)
      algorithms(op)         the registered algorithms of op that can run on it
      plan(op, nbytes, algo=None)   the one decision (simcore.plan.Plan, cached): which algorithm,
                             protocol, chunks, timed links, closed-form terms and why; choose,
                             protocol, timed_as, time and hier_chunks read it. "ring" is the flat
                             ring over all devices on every machine; None the machine's choice.
      choose(op, nbytes)     what it runs by default for that size: (algo, protocol, why) —
                             NCCL's tuner on a GPU machine (tuning set; across nodes it weighs
                             the channel rings "ring-nodes", NCCL's Tree ("tree") and NCCL's
                             NVLS Tree, the registry's "hier"), the lecture's ring on a plain switch,
                             "hier"/"ring-nodes" on nodes, "torus" on a torus
      time(op, algo, nbytes) the closed-form seconds of one collective on it (idle ports)
    tuning: "" (none: the lecture's α–β) or the GPU generation of simcore.nccl_tuning
    ("hopper", "blackwell"): then choose() and time() follow NCCL's model, and the lecture's own
    kernels (direct, two-shot, rd) are timed as the custom all-reduce kernels run (custom_kernel).
    launch (GPU machines): "" — NCCL's model alone, as its tuner prices a call (the default: the
    numbers NCCL's model and the tables compare); "graph" or "eager" — no NCCL call is faster than
    the wall time measured in that launch mode (launch_floor, nccl_tuning.LAUNCH_FLOOR): the launch
    and synchronisation the tuner leaves out.
    """

    fine_per_device = 1  # elements per device every algorithm here can cut into its fine chunks
    base = 0.0  # a kind without a base latency, NCCL tuning or launch mode (the dataclasses' fields override)
    tuning = ""
    launch = ""

    @functools.cached_property
    def record(self) -> KindRecord:
        """What this kind is (simcore.kind_record), which the app draws and words it by; a kind that
        does not say is drawn as devices round one switch over its link (Switch, Nodes and Torus say)."""
        return switch_record(self.n, self.link, self.base, self.tuning, self.launch, kind=min(self.kinds))

    def algorithms(self, op="all-reduce"):
        from .algorithms import algorithms_on
        return algorithms_on(self, op)

    def _nccl_shape(self):
        """(P, N): GPUs per NVLink domain and domains, as nccl_tuning models them."""
        return self.n, 1

    # -- the one decision: plan() (simcore.plan); choose, protocol, timed_as and time read it ----
    def plan(self, op, nbytes, algo=None, group=None):
        """The Plan of op on nbytes with algo (None: this machine's choice), resolved once and cached
        (simcore.plan.plan); group: a sub-machine of some of its devices to plan on instead."""
        from .plan import plan
        return plan(self, op, nbytes, algo, group)

    def choose(self, op, nbytes):
        """(algo, protocol, why): the algorithm this machine runs for op on nbytes by default (its plan)."""
        p = self.plan(op, nbytes)
        return p.algo, p.protocol, p.why_text

    def protocol(self, op, algo, nbytes):
        """(protocol, why) NCCL runs `algo` with for op on nbytes (its plan): the fastest of its
        protocols for that size; ("", reason) where NCCL's model does not time algo on this machine."""
        from .plan import resolve  # the machine's choice's own plan when algo is that choice
        return resolve(self, op, nbytes, algo).protocol_reason

    def timed_as(self, op, algo, nbytes):
        """This topology with the links and base latency that make the simulation of `algo` take
        NCCL's time for its protocol at nbytes (its plan's timed topology); itself where NCCL's
        model does not time algo here."""
        from .plan import resolve
        return resolve(self, op, nbytes, algo).timed

    def time(self, op, algo, nbytes):
        """Closed-form seconds of one `op` of nbytes with `algo` (None: the machine's choice) on this
        machine: its plan's time (NCCL's model where tuning is set and it models algo, else
        algorithms.t_formula_on); ValueError where no closed form exists."""
        from .plan import resolve
        return resolve(self, op, nbytes, algo).seconds()

    # -- what plan() asks (simcore.plan._plan calls these; nothing else does) ----------------
    def _decide_choice(self, op, nbytes):
        """(algo, protocol, why): the algorithm this machine runs for op on nbytes by default."""
        from .algorithms import algorithm_registry
        reg = algorithm_registry(op)
        if self.tuning and op == "all-to-all" and self.n > 1:  # NCCL's grouped send/recv (nccl_p2p)
            m = self._p2p("model_at", nbytes)
            return "direct", m.protocol, self._p2p("why", nbytes)
        if self.tuning:
            from .nccl_tuning import tune
            P, N = self._nccl_shape()
            inter = self.record.widest
            c = tune(op, P, N, float(nbytes), self.tuning, inter.bw, algos=self.algorithms(op),
                     modelled=self.nccl_models(op))
            return c.algo, c.protocol, c.why + self._launch_text()
        algo = self._default_algo(op)
        if algo not in reg:  # all-to-all: the lecture's default for the op ("direct"), on any topology
            from .algorithms import op_record
            algo = op_record(op).default
        return algo, "", f"{algo}: {self.name} runs it by default"

    def timed(self, comm, op, algo, nbytes):
        """timed_as_machine(comm, op, algo, nbytes) reached through the topology, for the modules
        that may not import this one (simcore.all_to_all: the import-linter contract)."""
        return timed_as_machine(comm, op, algo, nbytes)

    def _p2p(self, name, nbytes):
        """nccl_p2p.<name>(P, N, nbytes, gpu, NIC bandwidth) for this machine: NCCL's all-to-all."""
        from . import nccl_p2p
        P, N = self._nccl_shape()
        return getattr(nccl_p2p, name)(P, N, float(nbytes), self.tuning, self.record.widest.bw)

    def _decide_protocol(self, op, algo, nbytes):
        """(protocol, why) NCCL runs `algo` with for op on nbytes: the fastest of its protocols
        for that size ("", reason) where NCCL's model does not time algo on this machine."""
        if not self.tuning or self.n < 2:
            return "", "timed by the lecture's α–β form (no NCCL protocol)"
        if op == "all-to-all":  # NCCL picks p2p's protocol by the bytes a peer gets, not by time
            if algo != "direct":
                return "", f"{algo} is not how NCCL runs all-to-all: timed by the lecture's α–β form"
            m = self._p2p("model_at", nbytes)
            return m.protocol, (f"NCCL sends each peer's block with {m.protocol}: a block of "
                                f"{float(nbytes) / self.n:g} bytes is {'within' if m.protocol == 'LL' else 'over'} "
                                f"NCCL_P2P_LL_THRESHOLD (16 KiB)")
        ms = self._models(op, algo)
        custom = self.custom_kernel(algo, op)
        if not ms and custom:
            from .nccl_tuning import CUSTOM_AR_SOURCE
            return "", (f"{algo} is not one of NCCL's algorithms: timed as the custom all-reduce kernels run, "
                        f"{custom[0] * 1e6:.1f} µs per phase + S/{custom[1] / 1e9:.0f} GB/s ({CUSTOM_AR_SOURCE})")
        if not ms:
            return "", f"{algo} is not one of NCCL's algorithms: timed by the lecture's α–β form"
        from .nccl_tuning import label
        best = min(ms, key=lambda m: m.time(float(nbytes)))
        return best.protocol, (f"NCCL runs {label(best)} with {best.protocol} at this size: "
                               f"{best.latency * 1e6:.1f} µs latency + S/{best.algbw / 1e9:.0f} GB/s is the least of "
                               f"its protocols" + self._launch_text())

    def _launch_text(self):
        """What the machine's NCCL times include (launch): the reasons' last words."""
        mode = self.record.launch
        if not mode:
            return " (NCCL's model: no launch or sync)"
        how = "with CUDA graphs" if mode == "graph" else "with eager launches"
        return f"; at least {self.launch_floor() * 1e6:.1f} µs, as measured {how}"

    def _models(self, op, algo):
        return [m for m in self.nccl_models(op) if m.algo == algo]

    def custom_kernel(self, algo, op="all-reduce"):
        """(α s, β bytes/s) of the custom all-reduce kernel the lecture's `algo` ("direct", "two-shot",
        "rd") is timed as on a GPU machine's NVLink domain (nccl_tuning.custom_kernel), else None (any
        other op: the custom kernels are all-reduces)."""
        if not self.tuning or self.record.layout != "switch" or op != "all-reduce":  # one NVLink domain
            return None
        from .nccl_tuning import custom_kernel
        return custom_kernel(algo, self.n, self.tuning)

    def launch_floor(self):
        """The measured wall time no NCCL call here beats in the machine's launch mode (seconds; 0 for
        NCCL's model alone): nccl_tuning.LAUNCH_FLOOR."""
        from .nccl_tuning import LAUNCH_FLOOR
        return LAUNCH_FLOOR[self.record.launch] if self.tuning else 0.0

    def nccl_models(self, op):
        """NCCL's model (nccl_tuning.Model: algorithm, protocol, latency, bandwidth) of every
        (algorithm, protocol) of op that can run here, in the model's order; [] on a topology NCCL's
        model does not time (no tuning, or one device). The app words choose's and protocol's
        reasons from these numbers in its own language (app/words.py, nccl_reason)."""
        if not self.tuning or self.n < 2:
            return []
        return list(_nccl_models(self, op))

    def _decide_chunks(self, op, algo, nbytes, timed):
        """The chunks the simulation pipelines nbytes in (1: the whole buffer at once)."""
        return 1

    def _decide_timed(self, op, algo, nbytes):
        """This topology with the links and base latency that make the simulation of `algo`
        take NCCL's time for its protocol at nbytes (nccl_tuning.sim_links); itself where
        NCCL's model does not time algo here."""
        import dataclasses

        from .links import LinkSpec
        from .nccl_tuning import sim_links
        if not self.tuning:
            return self
        proto = _Machine._decide_protocol(self, op, algo, nbytes)[0]
        custom = self.custom_kernel(algo, op) if not proto else None
        if custom:  # the lecture's one-switch form on the custom kernel's α and β, no NCCL base
            link = LinkSpec(f"{self.link.name}, custom all-reduce kernel", custom[0], custom[1])
            return dataclasses.replace(self, **{self.record.main_role: link}, base=0.0)
        if not proto:
            return self
        P, N = self._nccl_shape()
        inter = self.record.widest
        if op == "all-to-all":
            base, alpha, b_f, b_i = self._p2p("sim_links", nbytes)
            base += max(0.0, self.launch_floor() - self._p2p("time", nbytes))  # the launch floor delays the start
        else:
            model = next(m for m in self._models(op, algo) if m.protocol == proto)
            late = max(0.0, self.launch_floor() - model.time(float(nbytes)))  # the launch floor delays the start
            if model.nccl == "Tree":  # NCCL's own per-hop latencies, β fitted (tree_allreduce.tree_links)
                from .tree_allreduce import tree_links
                base, a_f, a_i, beta = tree_links(model, P, N, float(nbytes))
                return dataclasses.replace(self, intra=LinkSpec(f"{self.link.name}, NCCL tree {proto}", a_f, beta),
                                           inter=LinkSpec(f"{inter.name}, NCCL tree {proto}", a_i, beta),
                                           base=base + late)
            base, alpha, b_f, b_i = sim_links(op, model, P, N, self.tuning, inter.bw, nbytes=float(nbytes))
            base += late
        f = LinkSpec(f"{self.link.name}, NCCL {algo} {proto}", alpha, b_f)
        if self.record.link("inter") is None:  # one link: the switch's
            return dataclasses.replace(self, **{self.record.main_role: f}, base=base)
        return dataclasses.replace(self, intra=f, inter=LinkSpec(f"{inter.name}, NCCL {algo} {proto}", alpha, b_i),
                                   base=base)

    def _decide_time(self, op, algo, nbytes):
        """Closed-form seconds of one `op` of nbytes with `algo` on this machine: NCCL's model (its
        protocol for the size) where tuning is set and it models algo, else algorithms.t_formula_on."""
        from .algorithms import t_formula_on
        if self.tuning and self.n > 1:
            if op == "all-to-all" and algo == "direct":  # NCCL's grouped p2p, no faster than the launch floor
                return max(self._p2p("time", nbytes), self.launch_floor())
            ms = self._models(op, algo)
            if ms:  # NCCL's model, no faster than the launch mode's measured floor
                return max(min(m.time(float(nbytes)) for m in ms), self.launch_floor())
            custom = self.custom_kernel(algo, op)
            if custom:  # the custom all-reduce kernel's measured launch and bandwidth
                from .algorithms import t_formula
                return t_formula(algo, self.n, float(nbytes), custom[0], custom[1], op=op)
        return t_formula_on(self, algo, nbytes, op)

    def _decide_terms(self, op, algo, nbytes):
        """The closed form on this topology term by term, its base excluded (algorithms.terms_on): what
        plan() asks of the timed topology for the plan's terms."""
        from .algorithms import terms_on
        return terms_on(self, algo, nbytes, op)


@functools.lru_cache(maxsize=1024)
def _nccl_models(topo, op):
    """topology.nccl_models, evaluated once per (machine, op): NCCL's model does not depend on the size."""
    from .nccl_tuning import models
    P, N = topo._nccl_shape()
    inter = topo.record.widest
    mine = set(topo.algorithms(op))
    if op == "all-to-all":
        from .nccl_p2p import models as p2p_models
        return tuple(m for m in p2p_models(P, N, topo.tuning, inter.bw) if m.algo in mine)
    return tuple(m for m in models(op, P, N, topo.tuning, inter.bw) if m.algo in mine)


def nccl_model_evaluations():
    """functools' CacheInfo of NCCL's model per (machine, op): misses = evaluations."""
    return _nccl_models.cache_info()


def proto_tail(why, tail):
    """Whether a reason ends with the launch words (an NCCL protocol's reason does)."""
    return bool(tail) and why.endswith(tail)


@contextlib.contextmanager
def timed_as_machine(comm, op, algo, nbytes):
    """
    Within the block, comm times its messages as comm's machine runs `algo` for op on nbytes
    (the full array's bytes after byte_scale): on a GPU machine the links and base latency of
    NCCL's protocol for that size (topology.timed_as), elsewhere unchanged. Yields the protocol
    ("" when none).
    """
    from .plan import execute
    p = comm.topology.plan(op, nbytes, algo)
    with execute(comm, p):
        yield p.protocol

@dataclass(frozen=True)
class Switch(_Machine):
    """n devices, each on its own full-duplex port (port id = device id) of one non-blocking switch."""

    n: int
    link: LinkSpec
    base: float = 0.0  # seconds every collective call pays before its first message (see BASE_LATENCY)
    tuning: str = ""  # "" or a GPU generation of simcore.nccl_tuning: then timed as NCCL models it
    launch: str = ""  # "" NCCL's model alone, or "graph" / "eager": no NCCL call beats its measured floor

    kinds = frozenset(("switch",))

    @functools.cached_property
    def record(self) -> KindRecord:
        """What this kind is (simcore.kind_record): devices round one switch."""
        return switch_record(self.n, self.link, self.base, self.tuning, self.launch)

    def _default_algo(self, op):
        return "ring"

    @property
    def n_ports(self) -> int:
        return self.n

    @property
    def name(self) -> str:
        return f"switch({self.n}, {self.link.name})"

    def route(self, src, dst):
        """(send port, receive port, link) of a message src -> dst; SWITCH's side has no port."""
        return (None if src == SWITCH else src), (None if dst == SWITCH else dst), self.link

    def routes(self, src, dst):
        """route() of many messages at once: (send ports, receive ports, α, β), -1 for no port."""
        return np.where(src == SWITCH, -1, src), np.where(dst == SWITCH, -1, dst), self.link.alpha, self.link.bw


def _check_base(base):
    if isinstance(base, bool) or not (isinstance(base, (int, float, np.floating)) and math.isfinite(base)
                                      and base >= 0):
        raise ValueError(f"a collective's base latency must be a finite number of seconds >= 0, got {base!r}")
    return float(base)


def _check_tuning(tuning):
    from .nccl_tuning import NVLINK_BW_PER_LINK
    if tuning and tuning not in NVLINK_BW_PER_LINK:
        raise ValueError(f"tuning is '' or a GPU generation ({', '.join(NVLINK_BW_PER_LINK)}), got {tuning!r}")
    return tuning


def _check_launch(launch):
    from .nccl_tuning import LAUNCH_FLOOR
    if launch not in LAUNCH_FLOOR:
        raise ValueError(f"launch is '' (NCCL's model alone), 'graph' or 'eager', got {launch!r}")
    return launch


def switch(n, link=NVLINK4, base=0.0, tuning="", launch="") -> Switch:
    """n devices around a non-blocking switch (NVSwitch-like), every port `link`; base: the
    per-collective base latency (0: the textbook closed forms); tuning, launch: see _Machine."""
    n = _check_count(n, "devices")
    _check_total(n)
    return Switch(n, link, _check_base(base), _check_tuning(tuning), _check_launch(launch))


@dataclass(frozen=True)
class Nodes(_Machine):
    """
    n_nodes nodes of per_node devices; device d sits on node d // per_node. Inside a node every
    device has its own full-duplex port into the node's non-blocking switch (NVSwitch, `intra`);
    every device also has its own NIC port into a non-blocking fabric between the nodes
    (InfiniBand, one NIC per GPU as in a DGX H100, `inter`). A message between two nodes uses
    the NIC ports and is timed by `inter`'s α and β.
    Port ids: d is device d's port into its node switch, n + d its NIC.
    In-network reduction (SWITCH) is the node switch's (NVLS) on one node and the fabric's
    (InfiniBand SHARP, through each device's NIC) on several.
    """

    n_nodes: int
    per_node: int
    intra: LinkSpec
    inter: LinkSpec
    base: float = 0.0  # seconds every collective call pays before its first message (see BASE_LATENCY)
    tuning: str = ""  # "" or a GPU generation of simcore.nccl_tuning: then timed as NCCL models it
    launch: str = ""  # "" NCCL's model alone, or "graph" / "eager": no NCCL call beats its measured floor

    @property
    def kinds(self):
        """"nodes"; one node is also a "switch" (its NVLink domain)."""
        return frozenset(("nodes", "switch")) if self.n_nodes == 1 else frozenset(("nodes",))

    @functools.cached_property
    def record(self) -> KindRecord:
        """What this kind is (simcore.kind_record): clusters of per_node round their node's switch over a
        fabric, NVLink "inside" a node and the NICs "between" nodes; one node is drawn as its switch."""
        links = (LinkRole("inter", "between", self.inter), LinkRole("intra", "inside", self.intra))
        one = self.n_nodes == 1
        return KindRecord("nodes", "switch" if one else "nodes", self.n, links if not one else links[::-1],
                          nodes=self.n_nodes, per_node=self.per_node, terms="one-level" if one else "two-level",
                          nccl=bool(self.tuning), base=self.base, launch=self.launch,
                          notes=() if one else ("between", "inside", "nics"), spec_fields=NODES_SPEC)

    def _default_algo(self, op):
        if self.n_nodes == 1:
            return "ring"
        return "hier" if op == "all-reduce" else "ring-nodes"

    def _nccl_shape(self):
        return self.per_node, self.n_nodes

    def _decide_choice(self, op, nbytes):
        """_Machine's choice; when it picks hier, also how many chunks it pipelines nbytes in."""
        algo, proto, why = super()._decide_choice(op, nbytes)
        if algo == "hier" and op == "all-reduce" and self.n_nodes > 1 and self.tuning:
            why = self._with_chunks(why, nbytes)
        return algo, proto, why

    def _with_chunks(self, why, nbytes):
        """why with hier's chunk count said before the launch words (_launch_text) that end it."""
        C = self._decide_chunks("all-reduce", "hier", nbytes, self._decide_timed("all-reduce", "hier", nbytes))
        tail = self._launch_text() if proto_tail(why, self._launch_text()) else ""
        return why[:len(why) - len(tail)] + f", pipelined in {C} chunk{'s' if C > 1 else ''} at this size" + tail

    def _decide_protocol(self, op, algo, nbytes):
        """_Machine's protocol; for hier also how many chunks it pipelines nbytes in."""
        proto, why = super()._decide_protocol(op, algo, nbytes)
        if algo == "hier" and op == "all-reduce" and self.n_nodes > 1:
            why = self._with_chunks(why, nbytes)
        return proto, why

    def hier_chunks(self, nbytes, op="all-reduce"):
        """The chunks the simulation of hier pipelines nbytes in: its plan's chunks."""
        from .plan import resolve
        return resolve(self, op, nbytes, "hier").chunks

    def _decide_chunks(self, op, algo, nbytes, timed):
        """hier: hier_pipeline_chunks on the links it runs with (timed: NCCL's NVLS Tree on a tuned
        machine, else the machine's); 1 otherwise."""
        if algo != "hier":
            return 1
        from .topo_closed_forms import hier_pipeline_chunks
        return hier_pipeline_chunks(self.per_node, self.n_nodes, float(nbytes), timed.intra, timed.inter)

    @property
    def fine_per_device(self):
        """The channel rings cut every device's piece into per_node parts."""
        return self.per_node

    @property
    def n(self) -> int:
        return self.n_nodes * self.per_node

    @property
    def link(self) -> LinkSpec:
        return self.intra

    @property
    def n_ports(self) -> int:
        return 2 * self.n

    @property
    def name(self) -> str:
        return f"nodes({self.n_nodes} × {self.per_node}, {self.intra.name} inside, {self.inter.name} between)"

    def node(self, d) -> int:
        return d // self.per_node

    def route(self, src, dst):
        """(send port, receive port, link) of a message src -> dst (see the class docstring)."""
        n = self.n
        if src == SWITCH or dst == SWITCH:
            dev = dst if src == SWITCH else src
            port, link = (dev, self.intra) if self.n_nodes == 1 else (n + dev, self.inter)
            return (None, port, link) if src == SWITCH else (port, None, link)
        if src // self.per_node == dst // self.per_node:
            return src, dst, self.intra
        return n + src, n + dst, self.inter

    def routes(self, src, dst):
        """route() of many messages at once (int arrays): (send ports, receive ports, α, β), -1 for no port."""
        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        n, P = self.n, self.per_node
        sw_s, sw_d = src == SWITCH, dst == SWITCH
        inside = (src // P == dst // P) & ~sw_s & ~sw_d
        if self.n_nodes == 1:
            inside = inside | sw_s | sw_d  # the node switch's in-network reduction: intra ports
        sp = np.where(sw_s, -1, np.where(inside, src, n + src))
        rp = np.where(sw_d, -1, np.where(inside, dst, n + dst))
        if inside.all():
            return sp, rp, self.intra.alpha, self.intra.bw
        if not inside.any():
            return sp, rp, self.inter.alpha, self.inter.bw
        return (sp, rp, np.where(inside, self.intra.alpha, self.inter.alpha),
                np.where(inside, self.intra.bw, self.inter.bw))


def nodes(n_nodes, per_node, intra=NVLINK4, inter=IB_NDR400, base=0.0, tuning="", launch="") -> Nodes:
    """n_nodes nodes of per_node devices each (e.g. nodes(2, 8): two DGX H100); base: the
    per-collective base latency; tuning, launch: see _Machine."""
    m = _check_count(n_nodes, "nodes")
    q = _check_count(per_node, "devices per node")
    _check_total(m * q)
    return Nodes(m, q, intra, inter, _check_base(base), _check_tuning(tuning), _check_launch(launch))


@dataclass(frozen=True)
class Torus(_Machine):
    """
    Devices on a 1-, 2- or 3-D torus with wraparound (TPU ICI): device d has coordinates
    np.unravel_index(d, shape) (row-major) and a full-duplex link to its ±1 neighbour on each
    axis, each link its own port pair — a TPU v4 chip's six ICI links, a v5e's four.
    A message may only go to a torus neighbour; anything else raises ValueError.
    Port ids: device d's link in direction dir (0: +1, 1: −1) on axis a is d·2·ndim + 2a + dir.
    On an axis of size 2 both neighbours are the same device; the +1 link is used.
    """

    shape: tuple
    link: LinkSpec
    base: float = 0.0  # seconds every collective call pays before its first message (see BASE_LATENCY)
    tuning = ""  # tori follow XLA's bidirectional rings, not NCCL
    fine_per_device = 12  # two halves × up to three axes

    def wraps(self) -> tuple:
        """One flag per axis: True where the axis has its wraparound link (every axis here)."""
        return (True,) * len(self.shape)

    @property
    def kinds(self):
        """"torus", and "torus-1d" when it is one ring with its wraparound (the plain ring runs)."""
        one_ring = len(self.shape) == 1 and self.wraps()[0]
        return frozenset(("torus", "torus-1d")) if one_ring else frozenset(("torus",))

    @functools.cached_property
    def record(self) -> KindRecord:
        """What this kind is (simcore.kind_record): chips on the grid of its shape, with the wraparound
        links wraps() says ("slice" links where it has none); one chip is drawn alone."""
        wrap = tuple(bool(w) for w in self.wraps())
        words = "torus" if any(wrap) else "slice"
        return KindRecord("torus", "torus" if self.n > 1 else "switch", self.n, (LinkRole("link", words, self.link),),
                          grid=tuple(int(a) for a in self.shape), wrap=wrap, device="chip", base=self.base,
                          notes=(words,), spec_fields=TORUS_SPEC)

    def _default_algo(self, op):
        return "torus"

    @property
    def n(self) -> int:
        return math.prod(self.shape)

    @property
    def n_ports(self) -> int:
        return self.n * 2 * len(self.shape)

    @property
    def name(self) -> str:
        return f"torus({'×'.join(map(str, self.shape))}, {self.link.name})"

    def coords(self, d) -> tuple:
        """Device d's coordinates (row-major, as np.unravel_index); memoised: every message asks."""
        return _coords(self.shape, int(d))

    def device(self, coords) -> int:
        return int(np.ravel_multi_index(tuple(c % s for c, s in zip(coords, self.shape)), self.shape))

    def neighbour(self, d, axis, step=1) -> int:
        """The device `step` (±1) away from d along `axis`, wrapping around."""
        c = list(self.coords(d))
        c[axis] += step
        return self.device(c)

    def route(self, src, dst):
        """(send port, receive port, link) of a message to a neighbour; ValueError otherwise."""
        if src == SWITCH or dst == SWITCH:
            raise ValueError(f"{self.name} has no switch: in-network reduction needs one (use switch or nodes)")
        cs, cd = self.coords(src), self.coords(dst)
        differ = [a for a in range(len(self.shape)) if cs[a] != cd[a]]
        if len(differ) == 1:
            a = differ[0]
            size = self.shape[a]
            direction = 0 if (cs[a] + 1) % size == cd[a] else 1 if (cs[a] - 1) % size == cd[a] else None
            if direction is not None:
                per = 2 * len(self.shape)
                return src * per + 2 * a + direction, dst * per + 2 * a + (1 - direction), self.link
        raise ValueError(f"{self.name}: device {src} {cs} cannot send to device {dst} {cd}, which is not its torus "
                         f"neighbour (±1 on one axis); this algorithm needs a switch — on a torus use rings "
                         f"along one axis")

    def routes(self, src, dst):
        """route() of many messages at once (int arrays): (send ports, receive ports, α, β)."""
        return _torus_routes(self, src, dst)


@functools.lru_cache(maxsize=32)
def _torus_neighbours(shape, wraps):
    """n × 2·ndim: device d's neighbour through its port 2a + dir (dir 0: +1, 1: −1 on axis a),
    −1 where there is none (an axis of one device, a missing wraparound). On an axis of size 2
    both ports reach the same device; route() takes the +1 port, as argmax does here."""
    n, nd = math.prod(shape), len(shape)
    c = np.array(np.unravel_index(np.arange(n), shape))
    out = np.full((n, 2 * nd), -1, dtype=np.int64)
    for a, size in enumerate(shape):
        if size == 1:
            continue
        for direction, step in ((0, 1), (1, -1)):
            moved = c.copy()
            moved[a] = c[a] + step
            inside = (moved[a] >= 0) & (moved[a] < size)
            moved[a] %= size
            nb = np.ravel_multi_index(tuple(moved), shape)
            out[:, 2 * a + direction] = np.where(inside | wraps[a] | (size == 2), nb, -1)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=8)
def _torus_port_table(shape, wraps):
    """n × n: the port through which device s reaches neighbour d (the first, as argmax takes
    it in _torus_routes), −1 where d is not a neighbour: one lookup a message."""
    nb = _torus_neighbours(shape, wraps)
    n = len(nb)
    table = np.full((n, n), -1, dtype=np.int64)
    for port in reversed(range(nb.shape[1])):  # the lowest port last: it wins
        has = nb[:, port] >= 0
        table[np.flatnonzero(has), nb[has, port]] = port
    table.setflags(write=False)
    return table


def _torus_routes(topo, src, dst):
    """Torus.route() of many messages at once: (send ports, receive ports, α, β); raises
    route()'s ValueError for the first message that is not between neighbours."""
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    n = topo.n
    shape, wraps = tuple(topo.shape), tuple(bool(w) for w in topo.wraps())
    nb = _torus_neighbours(shape, wraps)
    ok = (src >= 0) & (src < n) & (dst >= 0) & (dst < n) & (src != dst)
    if n <= 1024:  # a table of n² ports (8 MiB at most)
        port = _torus_port_table(shape, wraps)[np.where(ok, src, 0), np.where(ok, dst, 0)]
        ok &= port >= 0
    else:
        hit = nb[np.where(ok, src, 0)] == dst[:, None]
        port = hit.argmax(axis=1)
        ok &= hit[np.arange(len(src)), port]
    if not ok.all():
        bad = int(np.flatnonzero(~ok)[0])
        topo.route(int(src[bad]), int(dst[bad]))  # raises the one-message error
        raise ValueError(f"{topo.name}: device {int(src[bad])} cannot send to device {int(dst[bad])}")
    per = nb.shape[1]
    return src * per + port, dst * per + (port ^ 1), topo.link.alpha, topo.link.bw


@functools.lru_cache(maxsize=65536)
def _coords(shape, d):
    if not 0 <= d < math.prod(shape):
        raise ValueError(f"device {d} is not on a torus of shape {shape}")
    out = []
    for size in reversed(shape):
        d, c = divmod(d, size)
        out.append(c)
    return tuple(reversed(out))


def torus(shape, link=TPU_V4_ICI, base=0.0) -> Torus:
    """A torus of `shape` (e.g. (4, 4) for TPU v5e 4×4, (4, 4, 4) for TPU v4), every link `link`."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise ValueError(f"a torus shape is a tuple of 1 to 3 sizes, got {shape!r}") from None
    if not 1 <= len(shape) <= 3:
        raise ValueError(f"a torus has 1, 2 or 3 axes, got shape {shape!r}")
    shape = tuple(_check_count(s, "devices along a torus axis") for s in shape)
    _check_total(math.prod(shape))
    return Torus(shape, link, _check_base(base))
