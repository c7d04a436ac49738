"""
device_mesh — named axes over a machine's devices, and the one function that runs a collective
over an axis: `Mesh.collective`.

    mesh = Mesh((2, 8), ("X", "Y"), machine="dgx-h100")   # as jax.make_mesh / init_device_mesh
    mesh.groups("Y")        # 2 groups of 8 devices (one per node)
    mesh.groups("X")        # 8 groups of 2 (one device on each node)
    mesh.groups(("X", "Y")) # 1 group of 16, X major

Mesh coordinates map to the machine's devices row-major (the last axis varies fastest), so on
DGX nodes the inner axes stay inside a node when they fit in one; on a torus mesh axis k is the
torus's physical dimension k (the mesh's shape is the slice's); `devices=` gives any order.

Every collective the mesh runs goes through `Mesh.collective(op, axis, arrays, …)`, which asks
`Mesh.plan` for its `AxisPlan` — a simcore.plan.Plan (algorithm, protocol, timed links, the
closed form of one group alone as terms, why), decided once and cached — and records an
`AxisCollective` in `mesh.log`: op, axis, groups, bytes, simulated time and the plan it ran.
The mesh does not choose an algorithm itself: it asks the plan of the topology one group spans
(a switch of the group, the group's own GPU machine, the torus slice of its physical axes:
sub.plan(op, S), the machine's one decision) and maps it to the runner it has (_RUNS): on a GPU
machine NCCL's choice for the group's own devices; on a torus the book's bidirectional rings, its
multi-axis gather, all-to-all axis by axis, and a line where an axis has no wraparound link.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from ..comm_sim import Comm
from ..links import NVLINK4
from ..plan import Plan, Term, Why, timed_links
from ..topology import Nodes, Switch, Torus, nodes, switch
from ..trace import SWITCH
from .errors import MeshError
from .rings import (Carry, Lane, bidi_all_to_all, direct_rounds, innet_all_reduce, line_phase, permute,
                    ring_all_to_all, ring_phase)

OPS = ("all-gather", "reduce-scatter", "all-reduce", "all-to-all", "ppermute")


@dataclass(frozen=True)
class AxisPlan(Plan):
    """
    The Plan of one collective over one mesh axis (Mesh.plan), decided once and cached: a
    simcore.plan.Plan — op, algo, record (the registry's, None for the mesh's own rings), protocol,
    chunks, timed (the machine with the links it is timed on), terms summing to time (one group
    alone on idle links), why / why_text — and what only a mesh has: the axis, its groups, the
    closed form written out (form_text), the topology one group spans and the machine's own plan
    for such a group (group_plan, GPU machines; None elsewhere).
    """

    axis: tuple = ()  # mesh axis names, major to minor
    group_size: int = 1
    n_groups: int = 1
    form_text: str = ""  # the closed form written out (its value: time, the sum of terms)
    form_math: str = ""  # form_text's math alone ("2(g−1)·(α + S/(g·β))")
    form_notes: tuple = ()  # the keys of the words around it (_FORM_NOTES; the app words them, en/zh)
    group: object = None  # the topology one group spans (GPU machines), else None
    group_plan: object = None  # topology.plan(op, nbytes, group=group): NCCL's choice for one such group

    @property
    def form(self) -> float:
        """The closed form of one group alone on idle links (seconds): the sum of the terms."""
        return self.time


@dataclass(frozen=True)
class AxisCollective:
    """One collective over a mesh axis, all its groups at once, as it ran (Mesh.log); `plan` is the
    AxisPlan it executed (algo, protocol, why, form and form_text read it)."""

    op: str
    axis: tuple
    groups: tuple  # device ids of every group, ring order
    nbytes: float
    label: str
    t_start: float
    t_end: float
    coll: int  # its Collective's id in mesh.comm.trace
    n_messages: int
    plan: AxisPlan
    # each mesh position's array before and after it (the caller's arrays and the returned ones, not
    # copies: what the app's Buffers tab draws); () when timed by bytes alone
    inputs: tuple = field(default=(), compare=False, repr=False)
    outputs: tuple = field(default=(), compare=False, repr=False)
    dim: int = 0  # the dimension an all-gather concatenates or a reduce-scatter splits

    @property
    def time(self) -> float:
        return self.t_end - self.t_start

    @property
    def axis_name(self) -> str:
        return _name(self.axis)

    @property
    def algo(self) -> str:
        return self.plan.algo

    @property
    def why(self) -> str:
        return self.plan.why_text

    @property
    def protocol(self) -> str:
        return self.plan.protocol

    @property
    def form(self) -> float:
        return self.plan.form

    @property
    def form_text(self) -> str:
        return self.plan.form_text


_PLANS: dict = {}  # (machine, mesh layout, op, axis, S, algo) -> AxisPlan: Mesh.plan's cache
_PLAN_STATS = {"hits": 0, "misses": 0}


def plan_cache_info() -> dict:
    """Mesh.plan's cache: {"hits", "misses", "size"} (misses = axis plans decided)."""
    return dict(_PLAN_STATS, size=len(_PLANS))


def plan_cache_clear():
    _PLANS.clear()
    _PLAN_STATS.update(hits=0, misses=0)


def _machine(machine, n):
    """The topology of n devices that `machine` names (None: the lecture's one NVLink 4 switch)."""
    if machine is None:
        return switch(n, NVLINK4)
    if isinstance(machine, str):
        from ..topology_presets import get_preset
        try:
            preset = get_preset(machine)
        except ValueError as e:
            raise MeshError(str(e)) from None
        try:
            return preset.topology(n)
        except ValueError as e:
            raise MeshError(f"a mesh of {n} devices does not fit {preset.name}: {e}", "machine-size", n=n,
                            machine=preset.name, fits=tuple(preset.valid_degrees(1024))) from None
    if isinstance(machine, (Switch, Nodes, Torus)):
        if machine.n != n:
            raise MeshError(f"the mesh has {n} devices but {machine.name} has {machine.n}", "machine-size", n=n,
                            machine=machine.name, fits=(machine.n,))
        return machine
    raise MeshError(f"machine must be a preset's name, a topology or None, got {type(machine).__name__}")


# the words around a mesh closed form's math (AxisPlan.form_notes), in the engine's English (form_text):
# "rs-ag-each" goes before the math, "one-device" is the whole text, the others follow it in order
_FORM_NOTES = {
    "one-device": "one device: nothing moves",
    "rs-ag-each": "reduce-scatter + all-gather, each ",
    "a2a-axes-load": ", L_a = Σ_d d·w_d the blocks a link carries one way (w = ½ for the opposite device; ≈ a²/8)",
    "a2a-load": ", L = Σ_d d·w_d the blocks a link carries one way (w = ½ for the opposite; ≈ g²/8)",
    "multi-axis-m": (", m the chunks a device owns in the phase (a part that runs ahead onto an axis still in use "
                     "queues there: not in the form)"),
    "nvls": " (NVLS: up to the switch, multicast down)",
    "line": ": a line, one chunk a hop each way, the ends' chunks g−1 hops",
    "slowest-hop": ", slowest hop's α and β (an upper bound: only some hops are slow)",
    "nccl-timed": ", α, β and the call's base NCCL's for {algo} with {protocol} (nccl src/graph/tuning.cc)",
}


def _form_text(math, notes, algo, protocol) -> str:
    """A mesh closed form written out in English: the math and its notes' words (_FORM_NOTES)."""
    before = "".join(_FORM_NOTES[k] for k in notes if k in ("rs-ag-each", "one-device"))
    after = "".join(_FORM_NOTES[k].format(algo=algo, protocol=protocol) for k in notes
                    if k not in ("rs-ag-each", "one-device"))
    return before + math + after


def _machine_numbers(topo) -> tuple:
    """A machine as a mesh reason's numbers name it (Why.numbers "machine" and "group"), for the app to word:
    ("nodes", nodes, per node, the link inside, the link between), ("torus", shape), ("switch", n, link),
    else ("other", its name)."""
    if "nodes" in topo.kinds:
        return ("nodes", topo.n_nodes, topo.per_node, topo.intra.name, topo.inter.name)
    if "torus" in topo.kinds:
        return ("torus", tuple(int(a) for a in topo.shape))
    if "switch" in topo.kinds:
        return ("switch", topo.n, topo.link.name)
    return ("other", topo.name)


def _on_torus(topo) -> bool:
    """Is the machine a torus (its kind record says so)?"""
    return "torus" in topo.kinds


def _multi_axis_phase(sizes, kind, part, t):
    """
    Phase t of part `part` of the book's gather over k axes of `sizes` (a tuple group, major to
    minor; chunk c is group position c, coordinates np.unravel_index(c, sizes)). The part goes
    along axis (part + t) mod k. Returns (lines, sets): lines[L, |axis|] the group positions of each
    ring along that axis; sets[r, m] the chunks group position r owns in this phase — for a gather
    those agreeing with r on the axes still to come (this one included), for a reduce-scatter
    those agreeing with r on the axes done so far (this one included).
    """
    k = len(sizes)
    order = [(part + s) % k for s in range(k)]
    a = order[t]
    ids = np.arange(math.prod(sizes)).reshape(sizes)
    lines = np.moveaxis(ids, a, -1).reshape(-1, sizes[a])
    fixed = order[t:] if kind == "ag" else order[:t + 1]
    coords = np.stack(np.unravel_index(ids.ravel(), sizes), axis=1)[:, fixed]  # g × |fixed|
    same = (coords[:, None, :] == coords[None, :, :]).all(axis=2)  # r, c: c agrees with r there
    m = math.prod(sizes) // math.prod(sizes[f] for f in fixed)
    sets = np.nonzero(same)[1].reshape(-1, m)
    return lines, sets


def _a2a_hops(g) -> int:
    """The steps of a bidirectional ring all-to-all over g devices: ⌊g/2⌋ (g = 2: one exchange)."""
    return 1 if g <= 2 else g // 2


def _a2a_load(g) -> float:
    """Blocks (S/g each) one link carries one way in a bidirectional ring all-to-all over g devices:
    Σ_d d·w_d over the distances d ≤ g/2 a block goes one way, w_d = ½ for the opposite device (its
    block half each way), else 1 — g²/8 for even g, (g²−1)/8 for odd (the book's N²/8 a direction:
    "How to Scale Your Model", sharding chapter, AllToAll footnote). g = 2: the one block, one way."""
    if g <= 2:
        return float(g - 1)
    return float(sum(d * (0.5 if 2 * d == g else 1.0) for d in range(1, g // 2 + 1)))


@dataclass(frozen=True)
class _NodeSwitches(Nodes):
    """nodes() whose in-network reduction (SWITCH) is each node's own NVSwitch (NVLS) rather than the
    fabric's SHARP: how a mesh times NVLS over groups that each sit inside one node."""

    def route(self, src, dst):
        if src == SWITCH or dst == SWITCH:
            dev = dst if src == SWITCH else src
            return (None, dev, self.intra) if src == SWITCH else (dev, None, self.intra)
        return super().route(src, dst)

    def routes(self, src, dst):
        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        sw_s, sw_d = src == SWITCH, dst == SWITCH
        if not (sw_s | sw_d).any():
            return super().routes(src, dst)
        if not (sw_s | sw_d).all():
            raise ValueError("a batch mixes messages to the node switches with others")
        return np.where(sw_s, -1, src), np.where(sw_d, -1, dst), self.intra.alpha, self.intra.bw


# The one small table from a group's plan to the mesh's runner: (the group's form (Mesh._group_topology),
# op or "reduce" for all-gather / reduce-scatter / all-reduce, the algorithm the group's sub-topology's plan
# chose) -> the runner the mesh runs on every group. A torus's "torus" (XLA's bidirectional rings) is the
# book's bidirectional ring on one axis that wraps, the pair's exchange on two devices, a line where the
# axis has no wraparound, the multi-axis gather over several axes; its all-to-all ("direct": the registry's
# default) goes the shorter way round (axis by axis over several). NCCL's ring over a group inside one
# NVLink domain or through one GPU a node is the lecture's ring, and so is hier through one device a node
# (its steps inside a node have nothing to do: the ring across the nodes is all that runs); NVLS is the
# group's in-switch reduction.
_RUNS = {
    ("switch", "reduce", "ring"): "ring", ("switch", "reduce", "ring-nodes"): "ring",
    ("switch", "all-reduce", "innet"): "innet", ("switch", "all-to-all", "direct"): "direct",
    ("one-a-node", "reduce", "ring"): "ring", ("one-a-node", "reduce", "ring-nodes"): "ring",
    ("one-a-node", "all-to-all", "direct"): "direct", ("one-a-node", "all-reduce", "hier"): "ring",
    ("torus-ring", "reduce", "torus"): "bidi", ("torus-ring", "reduce", "ring"): "ring",
    ("torus-ring", "all-to-all", "direct"): "bidi",
    ("torus-pair", "reduce", "torus"): "ring", ("torus-pair", "reduce", "ring"): "ring",
    ("torus-pair", "all-to-all", "direct"): "ring",
    ("torus-line", "reduce", "torus"): "line",
    ("torus-axes", "reduce", "torus"): "multi-axis", ("torus-axes", "all-to-all", "direct"): "multi-axis",
}
# The runners the mesh has for a group's form (what `algo=` may ask; the first is its own where no
# sub-topology speaks: Mesh._decide). NVLS ("innet") is added for an all-reduce inside one NVLink domain.
_OFFERED = {
    ("switch", "reduce"): ("ring", "bidi"), ("one-a-node", "reduce"): ("ring", "bidi"),
    ("switch", "all-to-all"): ("direct", "ring"), ("one-a-node", "all-to-all"): ("direct", "ring"),
    ("torus-ring", "reduce"): ("bidi", "ring"), ("torus-pair", "reduce"): ("ring",),
    ("torus-line", "reduce"): ("line",), ("torus-axes", "reduce"): ("multi-axis",),
    ("torus-ring", "all-to-all"): ("bidi", "ring"), ("torus-pair", "all-to-all"): ("ring",),
    ("torus-axes", "all-to-all"): ("multi-axis",),
}


def _n_chunks(op, plan, g) -> int:
    """The chunks a collective's trace names: g (one a position), ×2 for a bidirectional ring's halves,
    ×2k for the multi-axis gather's parts (all-to-all, ppermute, a line and NVLS: g)."""
    if op in ("all-to-all", "ppermute") or plan.algo in ("line", "innet"):
        return g
    return g * (2 * len(plan.axis) if plan.algo == "multi-axis" else 2 if plan.algo == "bidi" else 1)


def _name(names) -> str:
    """Axis names as the book writes them: "YZ", or "dp,tp" when a name is longer than a letter."""
    return "".join(names) if all(len(a) == 1 for a in names) else ",".join(names)


class Mesh:
    """
    shape: devices along each axis; axis_names: one unique name per axis; machine: None (one
    NVLink 4 switch, the lecture's), a preset's name ("dgx-h100", "gb200-nvl72", "tpu-v4-4x4x4",
    "tpu-v5e-16x16") or a topology of prod(shape) devices; devices: optional device id of every
    mesh position (row-major), a permutation of 0 … n−1. byte_scale: as Comm's.
    """

    def __init__(self, shape, axis_names, machine=None, devices=None, byte_scale=1.0):
        if isinstance(shape, (int, np.integer)):
            shape = (shape,)
        shape = tuple(shape)
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if not shape or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in shape):
            raise MeshError(f"a mesh shape is one or more whole numbers >= 1, got {shape!r}")
        if len(names) != len(shape):
            raise MeshError(f"the mesh has {len(shape)} axes {shape} but {len(names)} names {names}")
        if len(set(names)) != len(names) or not all(isinstance(a, str) and a for a in names):
            raise MeshError(f"mesh axis names must be distinct non-empty strings, got {names}")
        self.shape = tuple(int(s) for s in shape)
        self.axis_names = names
        self.n = math.prod(self.shape)
        self.topology = _machine(machine, self.n)
        self.machine = machine
        self.dev = self._map_devices(devices)
        self.comm = Comm(self.topology, byte_scale=byte_scale)
        self.log: list[AxisCollective] = []

    # -- where each coordinate lives ------------------------------------------------------
    def _map_devices(self, devices):
        n = self.n
        if devices is not None:
            dev = np.asarray(devices, dtype=np.int64).ravel()
            if len(dev) != n or sorted(dev.tolist()) != list(range(n)):
                raise MeshError(f"devices must list each of the {n} devices 0 … {n - 1} once, got {list(devices)}")
            return dev
        topo = self.topology
        if _on_torus(topo) and topo.n > 1:
            if tuple(topo.shape) != self.shape:
                from ..topology_presets import PRESETS as _PRESETS
                raise MeshError(f"on {topo.name} each mesh axis is one physical dimension: the mesh's shape must "
                                f"be {tuple(topo.shape)}, not {self.shape} (or give devices=)", "torus-shape",
                                shape=self.shape, need=tuple(topo.shape),
                                machine=getattr(_PRESETS.get(self.machine) if isinstance(self.machine, str) else None,
                                                "name", topo.name))
        return np.arange(n, dtype=np.int64)

    def axis(self, axis) -> tuple:
        """An axis name or a tuple of them (major to minor), checked: a tuple of names."""
        names = (axis,) if isinstance(axis, str) else tuple(axis)
        if not names:
            raise MeshError(f"name at least one mesh axis; the mesh's axes are {', '.join(self.axis_names)}")
        for a in names:
            if a not in self.axis_names:
                raise MeshError(f"the mesh has no axis {a!r}; its axes are {', '.join(self.axis_names)}",
                                "unknown-axis", axis=a, axes=self.axis_names)
        if len(set(names)) != len(names):
            raise MeshError(f"an axis tuple names each mesh axis at most once, got {names}", "axis-twice",
                            axis=next(a for a in names if names.count(a) > 1))
        return names

    def size(self, axis) -> int:
        return math.prod(self.shape[self.axis_names.index(a)] for a in self.axis(axis))

    def coord(self, pos) -> tuple:
        """The mesh coordinate of position pos (row-major)."""
        return tuple(int(c) for c in np.unravel_index(int(pos), self.shape))

    def position(self, coord) -> int:
        if isinstance(coord, dict):
            coord = tuple(coord[a] for a in self.axis_names)
        try:
            return int(np.ravel_multi_index(tuple(coord), self.shape))
        except ValueError:
            raise MeshError(f"{tuple(coord)} is not a coordinate of a {self.shape} mesh") from None

    def device(self, coord) -> int:
        """The machine's device id at a mesh coordinate."""
        return int(self.dev[self.position(coord)])

    def positions(self, axis) -> np.ndarray:
        """(G, g): the mesh positions of every group of `axis`, each group in axis order."""
        names = self.axis(axis)
        idx = [self.axis_names.index(a) for a in names]
        grid = np.arange(self.n).reshape(self.shape)
        moved = np.moveaxis(grid, idx, list(range(len(self.shape) - len(idx), len(self.shape))))
        return moved.reshape(-1, math.prod(self.shape[i] for i in idx))

    def groups(self, axis) -> list:
        """The ∏_{i≠k} d_i disjoint groups of `axis` as tuples of device ids, each in axis order
        (a tuple axis: major to minor)."""
        return [tuple(int(d) for d in self.dev[row]) for row in self.positions(axis)]

    # -- which positions this process holds: every one in the simulation ------------------------
    # The seam a mesh over real ranks (simcore.mesh.ranks.RankMesh) overrides: there each process
    # holds one position's blocks, the others' are None. Code that works block by block goes
    # through these four, so the same program runs on both.
    @property
    def held(self) -> tuple:
        """The mesh positions whose blocks this process computes (the simulation: all of them)."""
        return tuple(range(self.n))

    def each(self, f, *lists) -> list:
        """[f(*items at p) for every position p]: computed at the held positions, None elsewhere.
        A list may be range(mesh.n) to pass the position itself."""
        held = set(self.held)
        return [f(*(lst[p] for lst in lists)) if p in held else None for p in range(self.n)]

    def first(self, blocks):
        """The first block this process holds (shapes are the same at every position)."""
        return blocks[self.held[0]]

    def gathered(self, blocks) -> list:
        """Every position's block (for checking, as full() does: no device holds them all)."""
        return list(blocks)

    def describe(self) -> str:
        axes = " × ".join(f"{a}={s}" for a, s in zip(self.axis_names, self.shape))
        return f"mesh {axes} on {self.topology.name}"

    # -- deciding: the machine's plan for one group (simcore.plan), mapped to the mesh's runner ---------
    def torus_dims(self, axis):
        """The torus's physical dimensions under a mesh axis (a name or a tuple), or None where the mesh
        is not laid on a torus's dimensions one for one."""
        return self._torus_dims(self.axis(axis))

    def _torus_dims(self, names):
        """The torus's physical dimensions under these mesh axes (identity mapping, the mesh's shape the
        torus's), or None."""
        if not _on_torus(self.topology) or not np.array_equal(self.dev, np.arange(self.n)) \
                or tuple(self.topology.shape) != tuple(self.shape):
            return None
        return [self.axis_names.index(a) for a in names]

    def plan(self, op, axis, nbytes, algo=None) -> AxisPlan:
        """
        The AxisPlan (a simcore.plan.Plan) `op` runs over `axis` for S = nbytes (one group's, after
        byte_scale): the algorithm, its protocol, the links it is timed on, the closed form of one
        group alone as terms, and why — resolved once per (machine, mesh, op, axis, S, algo) and cached
        (plan_cache_info). algo None: the machine's choice, which the mesh does not make itself: it asks
        the plan of the topology one group spans (_group_topology: sub.plan(op, S), simcore.plan's one
        decision and cache) and runs what _RUNS maps that to — on a torus XLA's rings are the book's
        bidirectional ring along the physical axis (several axes: its multi-axis gather; an axis without
        wraparound: a line; all-to-all the shorter way round, axis by axis), on a GPU machine NCCL's
        choice for one group's devices where the engine runs it on a mesh's groups, on a switch the
        lecture's ring, all-to-all one-shot. ppermute has one way (pairs); a group no sub-topology
        describes (several GPUs on each of several nodes, a torus in another device order) runs the
        mesh's ring (all-to-all: one-shot).
        """
        if op not in OPS:
            raise MeshError(f"unknown collective {op!r}; the mesh runs {', '.join(OPS)}")
        names = self.axis(axis)
        key = (self.topology, self.shape, self.axis_names, self.dev.tobytes(), op, names, float(nbytes), algo)
        p = _PLANS.get(key)
        if p is not None:
            _PLAN_STATS["hits"] += 1
            return p
        p = self._decide(op, names, float(nbytes), algo)
        _PLAN_STATS["misses"] += 1
        if len(_PLANS) >= 4096:
            _PLANS.clear()
        _PLANS[key] = p
        return p

    def _refuse_open(self, topo, dims, names, what):
        for a, d in zip(names, dims):
            if topo.shape[d] > 2 and not topo.wraps()[d]:
                raise MeshError(f"axis {a} of {topo.name} has no wraparound link, so {what} over "
                                f"{self._axis_text(names)} is not built there; use a slice whose axis {a} wraps")

    def _group_topology(self, op, pos, dims):
        """
        The topology one group of pos spans, whose plan (sub.plan(op, S): the machine's decision, cached in
        simcore.plan) chooses what the group runs, with the group's form (_RUNS's first key): on a torus
        the slice of the group's physical dimensions with their wraparound links ("torus-ring": one axis
        that wraps, "torus-pair": one of two devices or fewer, "torus-line": one axis without its
        wraparound, "torus-axes": several); on a switch or nodes the group's own machine (_group_machine,
        with the machine's NCCL model where it has one: "switch" for a switch of the group or one node's
        NVLink domain, "one-a-node" for one device on each of several nodes; an all-to-all also the nodes an
        even share spans, _group_nodes); a one-device group a switch of one ("switch": nothing moves; NCCL's
        model has no one-GPU collective). (None, "") for ppermute (no registered algorithm) and where no
        sub-topology describes a group: the mesh's ring then (Mesh.plan).
        """
        topo = self.topology
        g = pos.shape[1]
        if op == "ppermute":  # no registered algorithm: the mesh's one way, pairs
            return None, ""
        if dims is not None:
            from ..topology_presets import TorusSlice
            shape = tuple(int(topo.shape[d]) for d in dims)
            wrap = tuple(bool(topo.wraps()[d]) for d in dims)
            form = ("torus-axes" if len(dims) > 1 else "torus-pair" if shape[0] <= 2
                    else "torus-ring" if wrap[0] else "torus-line")
            return TorusSlice(shape, topo.link, topo.base, wrap=wrap), form
        if _on_torus(topo):  # a torus in another device order: the mesh's own ring (its hops need neighbours)
            return None, ""
        if g < 2:
            return switch(1, topo.link, base=topo.base), "switch"
        sub = self._group_machine(pos)
        if sub is None and op == "all-to-all":  # any even share of several nodes: NCCL's grouped sends
            sub = self._group_nodes(pos)
        return sub, "" if sub is None else "switch" if "switch" in sub.kinds else "one-a-node"

    def _group_nodes(self, pos):
        """The nodes one group spans when it holds the same number of GPUs on each of several nodes (NCCL's
        grouped sends for its all-to-all), else None."""
        topo = self.topology
        if "nodes" not in topo.kinds:
            return None
        node = (self.dev[pos] // topo.per_node).tolist()
        counts = {tuple(sorted(np.unique(row, return_counts=True)[1].tolist())) for row in node}
        if len(counts) != 1:
            return None
        c = next(iter(counts))
        if len(set(c)) != 1:
            return None
        return nodes(len(c), c[0], topo.intra, topo.inter, base=topo.base, tuning=topo.tuning, launch=topo.launch)

    def _decide(self, op, names, S, algo):
        """The AxisPlan: the group's sub-topology's plan chooses (sub.plan(op, S)) and _RUNS maps its algorithm
        to the mesh's runner (no sub-topology: see plan); then the words and the closed form."""
        pos = self.positions(names)
        G, g = pos.shape
        dims = self._torus_dims(names)
        topo = self.topology
        if dims is not None and op == "all-to-all":
            self._refuse_open(topo, dims, names, "an all-to-all")
        elif dims is not None and len(dims) > 1 and op != "ppermute":
            self._refuse_open(topo, dims, names, "the multi-axis gather")
        sub, form = self._group_topology(op, pos, dims)
        gpu = None  # (the group's machine, NCCL's plan for it) where the group's plan is NCCL's
        if sub is not None:
            own = sub.plan(op, S)  # the machine's choice for one such group, resolved once (simcore.plan)
            kind = "reduce" if op in ("all-gather", "reduce-scatter", "all-reduce") else op
            offered = _OFFERED[(form, kind)]
            if topo.tuning and kind == "reduce" and g > 1:
                gpu = (sub, own)
                if op == "all-reduce" and form == "switch":  # NVLS in each group's NVSwitch
                    offered += ("innet",)
            choice = _RUNS.get((form, op, own.algo)) or _RUNS.get((form, kind, own.algo))
            if choice not in offered:
                choice = None
            if choice is None and gpu is None:
                raise MeshError(f"{op} over {self._axis_text(names)}: {sub.name} chooses {own.algo} for one group, "
                                f"which the mesh does not run on its groups; it runs {', '.join(offered)}")
        else:  # ppermute's one way (pairs); a group no sub-topology describes: the mesh's ring (all-to-all: one-shot)
            offered = ("pairs",) if op == "ppermute" else ("direct", "ring") if op == "all-to-all" else ("ring", "bidi")
            choice = offered[0]
        why, mesh_why, nums = self._reason(op, names, choice, topo, dims)
        if gpu is not None and choice is None:  # NCCL's pick is one the engine runs only over a whole machine
            choice = "ring"
            mesh_why = "nccl-cannot"
            why = (f"NCCL's choice for one group of {g} on {sub.name} is {own.why.label or own.algo} with "
                   f"{own.protocol or 'no protocol'}, which the engine runs only over a whole machine's devices, so "
                   f"every group runs NCCL's ring")
            nums = {"g": g, "group": _machine_numbers(sub), "label": own.why.label or own.algo,
                    "own_algo": own.algo, "own_nccl": own.why.nccl, "own_protocol": own.protocol}
        elif gpu is not None and choice in ("ring", "innet"):
            why = ""  # NCCL's choice for the group, in _nccl_group's words
        if algo is not None and algo not in offered:
            raise MeshError(f"{op} over {self._axis_text(names)} cannot run {algo!r} on {topo.name}; it runs "
                            f"{', '.join(offered)}")
        asked = algo is not None and algo != choice
        algo = choice if algo is None else algo
        if asked:
            why = f"{algo}, as asked"
            mesh_why, nums = "asked", {"algo": algo}
        protocol, timed, gp, said = "", None, None, ""
        if gpu is not None and algo in ("ring", "innet"):
            protocol, timed, gp, said = self._nccl_group(op, pos, S, algo, *gpu)
            if not asked and not why:
                why, (mesh_why, nums) = said[0], said[1]
            elif not asked:
                why = f"{why}, with {protocol}"
                nums["protocol"] = protocol
        terms, math, notes = self._form(op, algo, pos, names, S, timed or self.topology)
        if protocol:
            notes += ("nccl-timed",)
        text = _form_text(math, notes, algo, protocol)
        from ..algorithms import algorithm_registry
        record = algorithm_registry(op).get(algo) if op in ("all-gather", "reduce-scatter", "all-reduce",
                                                            "all-to-all") else None
        more = dict(mesh=mesh_why, numbers=tuple(nums.items()))
        why_rec = (dataclasses.replace(gp.why, text=why, **more) if gp is not None
                   else Why("lecture", label=algo, algo=algo, text=why, **more))
        time = float(sum(t.seconds for t in terms))
        return AxisPlan(topo, op, S, algo, record, protocol, 1, timed or topo, terms, time, why_rec, why,
                        not asked, "", (protocol, gp.protocol_reason[1] if gp is not None else ""),
                        links=timed_links(timed or topo), axis=names, group_size=g, n_groups=G, form_text=text,
                        form_math=math, form_notes=notes,
                        group=gpu[0] if gpu else None, group_plan=gpu[1] if gpu else None)

    def _reason(self, op, names, runner, topo, dims):
        """(the reason in English, its kind (Why.mesh), its numbers) for the runner chosen for a group."""
        if op == "ppermute":
            return "ppermute sends each pair's array straight to its partner", "pairs", {}
        if op == "all-to-all":
            if runner == "multi-axis":
                return (f"on {topo.name} only neighbours talk: the blocks go axis by axis, "
                        f"{' then '.join(reversed(names))}, each axis a bidirectional all-to-all "
                        f"(the shorter way round)",
                        "a2a-axes", {"machine": _machine_numbers(topo), "axes": tuple(reversed(names))})
            if runner == "bidi":
                return (f"on {topo.name} only neighbours talk: each block goes the shorter way round the axis's "
                        f"ring, the opposite one half each way (the book's bidirectional all-to-all)", "a2a-bidi",
                        {"machine": _machine_numbers(topo)})
            if dims is not None:  # round the ring (a torus axis of two)
                return (f"on {topo.name} only neighbours talk: each block travels round the axis's ring", "a2a-ring",
                        {"machine": _machine_numbers(topo)})
            return "every block goes straight to its device (one-shot), as NCCL's grouped sends do", "a2a-direct", {}
        if runner == "multi-axis":
            k = len(names)
            return (f"over {k} torus axes the book's gather uses every axis's links at once: the data in {k} parts, "
                    f"each going along the axes in its own turn, each both ways round", "multi-axis", {"k": k})
        if runner == "line":
            size = topo.shape[dims[0]]
            return (f"axis {names[0]} of {topo.name} has no wraparound link: a line, not a ring, so every chunk goes "
                    f"both ways along it and the ends' chunks travel {size - 1} hops (the book's no-wraparound "
                    f"gather)", "line", {"axis": names[0], "machine": _machine_numbers(topo), "hops": size - 1})
        if runner == "bidi":
            return "the book's bidirectional ring: half of every chunk goes each way round the torus axis", "bidi", {}
        if runner == "ring" and dims is not None and topo.shape[dims[0]] <= 2:
            return "a ring of two: the pair exchanges its chunks", "pair", {}
        return (f"the lecture's ring over each group, every group at once on {topo.name}'s ports", "ring",
                {"machine": _machine_numbers(topo)})

    def _group_machine(self, pos):
        """The machine one group of pos spans, as a topology of its own kind (with the machine's NCCL model
        where it has one): a switch of the group's devices, one node's NVLink domain, or one device on each
        of several nodes; None otherwise (a torus, a group of one)."""
        topo = self.topology
        if _on_torus(topo) or pos.shape[1] < 2:
            return None
        g = pos.shape[1]
        if "nodes" not in topo.kinds:
            return switch(g, topo.link, base=topo.base, tuning=topo.tuning, launch=topo.launch)
        node = self.dev[pos] // topo.per_node
        per_group = [len(set(row)) for row in node.tolist()]
        if all(k == 1 for k in per_group):
            return switch(g, topo.intra, base=topo.base, tuning=topo.tuning, launch=topo.launch)
        if all(k == g for k in per_group):  # one GPU on each node: NCCL's ring through the nodes
            return nodes(g, 1, topo.intra, topo.inter, base=topo.base, tuning=topo.tuning, launch=topo.launch)
        return None  # several GPUs on several nodes: NCCL would run channel rings (or hier), not this ring

    def _nccl_group(self, op, pos, S, algo, sub, own):
        """On a GPU machine, for a group's `algo` ("ring" or "innet"): (protocol, the machine timed as
        NCCL's model times algo on the group's machine `sub` at S, the group's Plan of algo, (the reason
        in words, (its kind, its numbers): Why.mesh and Why.numbers)); own: NCCL's choice for such a group."""
        name = "innet" if algo == "innet" else ("ring" if "switch" in sub.kinds else "ring-nodes")
        plan = self.topology.plan(op, S, name, group=sub)  # the group's own plan, resolved once
        proto = plan.protocol
        if not proto:
            return "", None, None, ("", ("", {}))
        t = plan.timed
        topo = self.topology
        if "nodes" in topo.kinds:
            kind = _NodeSwitches if algo == "innet" and topo.n_nodes > 1 else type(topo)
            fields = {f.name: getattr(topo, f.name) for f in dataclasses.fields(topo)}
            fields.update(intra=t.link if "switch" in sub.kinds else topo.intra,
                          inter=topo.inter if "switch" in sub.kinds else t.inter, base=t.base)
            timed = kind(**fields)
        else:
            timed = dataclasses.replace(topo, link=t.link, base=t.base)
        g = pos.shape[1]
        what = "NVLS (each group reduced in its NVSwitch)" if algo == "innet" else "NCCL's ring"
        why = (f"NCCL's choice for one group of {g} on {sub.name}: {what} with {proto}, every group at once, timed "
               f"as NCCL's model times it at this size")
        kind = ("nccl-group", {"g": g, "group": _machine_numbers(sub), "algo": algo, "protocol": proto})
        if own.algo != name:
            why = (f"{what} with {proto} over each group of {g}, every group at once; NCCL's own pick for such a "
                   f"group: {own.algo} {own.protocol}")
            kind = ("nccl-own-differs", {"g": g, "algo": algo, "protocol": proto, "own_algo": own.algo,
                                         "own_nccl": own.why.nccl, "own_protocol": own.protocol})
        return proto, timed, plan, (why, kind)

    def _axis_text(self, names):
        return "axis " + "".join(names) if all(len(a) == 1 for a in names) else "axes " + ",".join(names)

    def _links(self, pos, step=1, topo=None, line=False):
        """(α, β) of the slowest hop of any group's ring (position j to j + step) on topo (default
        the machine)."""
        topo = topo or self.topology
        if line:  # a line: no hop from the last position back to the first
            src, dst = self.dev[pos[:, :-1]].ravel(), self.dev[pos[:, 1:]].ravel()
        else:
            src = self.dev[pos].ravel()
            dst = self.dev[np.roll(pos, -step, axis=1)].ravel()
        keep = src != dst
        if not keep.any():
            return topo.link.alpha, topo.link.bw
        try:
            _, _, alpha, bw = topo.routes(src[keep], dst[keep])
        except ValueError as e:
            raise MeshError(str(e)) from None
        return float(np.max(alpha)), float(np.min(bw))

    def _mixed(self, pos):
        """Do a group's ring hops use links of different speeds (a ring across nodes)?"""
        src, dst = self.dev[pos].ravel(), self.dev[np.roll(pos, -1, axis=1)].ravel()
        keep = src != dst
        if not keep.any() or _on_torus(self.topology):
            return False
        _, _, alpha, bw = self.topology.routes(src[keep], dst[keep])
        return np.ndim(bw) > 0 and float(np.min(bw)) != float(np.max(bw))

    def _form(self, op, algo, pos, names, S, topo):
        """Closed form of one group alone on idle links of topo: (terms, math, notes), the terms (base, α,
        S/β, …) summing to its seconds, the math as on a slide and the keys of the words around it
        (_FORM_NOTES; _form_text writes them out)."""
        G, g = pos.shape
        base = float(getattr(topo, "base", 0.0))
        if g == 1:
            return (Term("total", 0.0),), "", ("one-device",)

        def ab(n_alpha, alpha, n_bytes, beta):
            return Term("base", base), Term("α", n_alpha * alpha), Term("S/β", n_bytes / beta)

        if algo == "multi-axis" and op == "all-to-all":
            # axis by axis, minor first: each a bidirectional all-to-all of the whole buffer
            alpha, beta = topo.link.alpha, topo.link.bw
            hops = sum(_a2a_hops(a) for a in self.shape_of(names))
            load = sum(_a2a_load(a) * S / a for a in self.shape_of(names))
            return ab(hops, alpha, load, beta), "Σ_axes (⌊a/2⌋·α + L_a·S/(a·β))", ("a2a-axes-load",)
        if algo == "multi-axis":
            # phase t: part i along axis (i + t) mod k, messages of m chunks' 1/(2k) each way
            k = len(names)
            sizes = self.shape_of(names)
            alpha, beta = topo.link.alpha, topo.link.bw

            def phases(kind):
                return sum(max((sizes[(i + t) % k] - 1)
                               * (alpha + _multi_axis_phase(sizes, kind, i, t)[1].shape[1] * S / (2 * k * g * beta))
                               for i in range(k)) for t in range(k))

            text = "Σ_phases max_parts (|axis|−1)·(α + m·S/(2k·g·β))"
            if op == "all-reduce":
                return (Term("base", base), Term("phases", phases("rs") + phases("ag"))), text, \
                    ("rs-ag-each", "multi-axis-m")
            return (Term("base", base), Term("phases", phases("ag" if op == "all-gather" else "rs"))), text, \
                ("multi-axis-m",)
        alpha, beta = self._links(pos, topo=topo, line=algo == "line")
        if op == "ppermute":
            return ab(1, alpha, S, beta), "α + S/β", ()
        if op == "all-to-all":
            if algo == "direct":
                return ab(1, alpha, (g - 1) * S / g, beta), "α + (g−1)·S/(g·β)", ()
            if algo == "bidi":
                return ab(_a2a_hops(g), alpha, _a2a_load(g) * S / g, beta), \
                    "⌊g/2⌋·α + L·S/(g·β)", ("a2a-load",)
            return ab(g - 1, alpha, (g - 1) * S / 2, beta), "(g−1)·α + (g−1)·S/(2β)", ()
        if algo == "innet":
            return ab(2, alpha, (g + 1) * S / g, beta), "2α + (g+1)·S/(g·β)", ("nvls",)
        k = 2 if op == "all-reduce" else 1
        per = S / g / (2 if algo == "bidi" else 1)
        terms = ab(k * (g - 1), alpha, k * (g - 1) * per, beta)
        text = f"(g−1)·(α + S/({'2' if algo == 'bidi' else ''}g·β))"
        notes = ("line",) if algo == "line" else ()
        if self._mixed(pos):  # some hops on the slow link: the slowest hop's α, β bound it from above
            notes += ("slowest-hop",)
        return terms, ("2" + text if k == 2 else text), notes

    # -- running: one function ------------------------------------------------------------
    def collective(self, op, axis, arrays=None, algo=None, label="", dim=0, split_dim=0, concat_dim=0, perm=None,
                   only_groups=None, nbytes=None):
        """
        Run `op` over `axis` on every group at once; arrays[p] is mesh position p's array (all
        the same shape). Returns the arrays after it, per position:
          all-gather      position j of a group gets the group's arrays concatenated along `dim`
          reduce-scatter  block j (along `dim`, g equal blocks) of the group's sum
          all-reduce      the group's sum
          all-to-all      its array cut into g blocks along split_dim, block i sent to position i,
                          the received blocks concatenated along concat_dim
          ppermute        perm: (source, destination) pairs of axis indices; a position nobody
                          sends to gets zeros (jax.lax.ppermute)
        algo: None (Mesh.plan's choice) or one it offers; only_groups: indices of the groups that run
        (the others keep their arrays; default all). Records an AxisCollective in self.log.
        Timing only: arrays=None and nbytes = S of one group (the all-gather's output, the
        reduce-scatter's and all-reduce's input, bytes after byte_scale) times and records the
        messages of a real model's size without holding its data; returns None.
        """
        names = self.axis(axis)
        if arrays is None:
            return self._timing_only(op, names, nbytes, algo, label, only_groups)
        arrays = [np.asarray(a) for a in arrays]
        if len(arrays) != self.n:
            raise MeshError(f"{op} needs one array per mesh position ({self.n}), got {len(arrays)}")
        shapes = {a.shape for a in arrays}
        if len(shapes) != 1:
            raise MeshError(f"{op}: every position must hold the same shape, got {sorted(shapes)}")
        pos = self.positions(names)
        if only_groups is not None:  # some groups alone (to compare one group with all at once)
            pos = pos[list(only_groups)]
        G, g = pos.shape
        a0 = arrays[0]
        shape = a0.shape
        dims_used = {"all-gather": {"dim": dim}, "reduce-scatter": {"dim": dim},
                     "all-to-all": {"split_dim": split_dim, "concat_dim": concat_dim}}.get(op, {})
        for what, d in dims_used.items():
            if not -a0.ndim <= d < a0.ndim:
                raise MeshError(f"{op}: {what} {d} does not exist in arrays of shape {shape}")
        S = float(a0.nbytes) * self.comm.byte_scale * (g if op == "all-gather" else 1)
        plan = self.plan(op, names, S, algo)
        n_chunks = _n_chunks(op, plan, g)

        def body(ready, who):
            if g < 2:
                return list(arrays)
            return self._run(op, plan, pos, arrays, self.dev, ready, who, label, dim, split_dim, concat_dim, perm)

        return self._record(op, plan, pos, n_chunks, S, label, body, (tuple(arrays), dim))

    def _timing_only(self, op, names, nbytes, algo, label, only_groups):
        """collective() without data: the same messages on the same clock, for S = nbytes."""
        if op not in ("all-gather", "reduce-scatter", "all-reduce"):
            raise MeshError(f"{op} needs arrays (timing by nbytes alone is built for all-gather, reduce-scatter "
                            f"and all-reduce)")
        if nbytes is None or not (isinstance(nbytes, (int, float, np.integer, np.floating)) and nbytes > 0
                                  and math.isfinite(nbytes)):
            raise MeshError(f"give arrays, or nbytes: a finite number of bytes > 0 (got {nbytes!r})")
        pos = self.positions(names)
        if only_groups is not None:
            pos = pos[list(only_groups)]
        g = pos.shape[1]
        comm = self.comm
        q = max(1, int(round(float(nbytes) / comm.byte_scale / g)))  # one-byte elements per chunk
        S = float(q * g) * comm.byte_scale
        plan = self.plan(op, names, S, algo)
        # a read-only view of one byte: the ring phases time it, and _finish leaves it alone
        data = np.broadcast_to(np.zeros((), dtype=np.uint8), (self.n, g, q))
        n_chunks = _n_chunks(op, plan, g)
        self._record(op, plan, pos, n_chunks, S, label, lambda ready, who: self._virtual(op, plan, pos, data,
                                                                                         ready, who))
        return None

    def _virtual(self, op, plan, pos, data, ready, who):
        g = pos.shape[1]
        if g < 2:
            return
        if op == "all-reduce":
            self._all_reduce(plan, pos, data, self.dev, ready, who)
        else:
            self._phases("ag" if op == "all-gather" else "rs", plan, pos, data, self.dev, ready, who, 0)

    def _record(self, op, plan, pos, n_chunks, S, label, body, kept=((), 0)):
        """Run body(ready, who) as one recorded collective and log its AxisCollective (with kept:
        the position's input arrays and the dimension, for the record)."""
        comm, dev = self.comm, self.dev
        ready = np.asarray(comm.ready, dtype=float)[dev]
        n_before = len(comm.trace.messages)
        before = comm._use_topology(plan.timed) if plan.timed is not comm.topology else None
        # the trace's collective record carries the plan's essentials, under the name it records
        prev_plan = getattr(comm, "_executing", None)
        comm._executing = dataclasses.replace(plan.record_fields(), algo=f"{plan.algo} over {_name(plan.axis)}")
        try:
            return self._recorded(op, plan, pos, n_chunks, S, label, body, ready, n_before, kept)
        finally:
            comm._executing = prev_plan
            if before is not None:
                comm._use_topology(before)

    def _recorded(self, op, plan, pos, n_chunks, S, label, body, ready, n_before, kept=((), 0)):
        comm, dev = self.comm, self.dev
        comm._begin(op, f"{plan.algo} over {_name(plan.axis)}", label, n_chunks, S / comm.byte_scale,
                    self._initial(op, pos, n_chunks))
        try:
            out = body(ready, Carry(dev))
        except BaseException:
            if comm._coll is not None:
                comm._abort()
            raise
        cid = len(comm.trace.collectives)
        comm._end()
        c = comm.trace.collectives[cid]
        self.log.append(AxisCollective(op, plan.axis, tuple(map(tuple, dev[pos].tolist())), S, label, c.t_start,
                                       c.t_end, cid, len(comm.trace.messages) - n_before, plan, kept[0],
                                       tuple(out) if kept[0] and out is not None else (), kept[1]))
        return out

    def _initial(self, op, pos, n_chunks):
        """What every device holds before: its own data (all-gather: its own chunk)."""
        from ..trace import Initial
        if op != "all-gather":
            return Initial.own_all(self.n, n_chunks)
        G, g = pos.shape
        if n_chunks == g and pos.size == self.n:  # one chunk each: device d holds its group index
            owned = np.empty(self.n, dtype=np.int64)
            owned[self.dev[pos]] = np.arange(g)[None, :]
            return Initial.own_one(owned.tolist())
        held = [dict() for _ in range(self.n)]
        for row in pos:
            for j, p in enumerate(row.tolist()):
                d = int(self.dev[p])
                held[d] = {j + t * g: frozenset((d,)) for t in range(n_chunks // g)}
        return held

    def _run(self, op, plan, pos, arrays, dev, ready, who, label, dim, split_dim, concat_dim, perm):
        comm, n = self.comm, self.n
        G, g = pos.shape
        if op == "ppermute":
            pairs = self._pairs(perm, g)
            moves = [(int(row[i]), int(row[j])) for row in pos for i, j in pairs]
            got, _ = permute(comm, arrays, dev, moves, ready, who, phase=label or "ppermute")
            for row in pos:  # a (j, j) pair: position j keeps its own array, as jax.lax.ppermute does
                for j in {int(i) for i, k in perm if int(i) == int(k)}:
                    got[int(row[j])] = arrays[int(row[j])]
            zero = np.zeros_like(arrays[0])
            inside = set(pos.ravel().tolist())
            return [got.get(p, zero if p in inside else arrays[p]) for p in range(n)]
        if op == "all-to-all":
            a0 = arrays[0]
            if a0.shape[split_dim] % g:
                raise MeshError(f"all-to-all: dimension {split_dim} of length {a0.shape[split_dim]} does not split "
                                f"into {g} equal blocks")
            blocks = np.stack([np.stack(np.split(np.asarray(a), g, axis=split_dim)) for a in arrays])  # (n, g, …)
            flat = blocks.reshape(n, g, -1)
            if plan.algo in ("direct", "ring"):
                run = direct_rounds if plan.algo == "direct" else ring_all_to_all
                got, _ = run(comm, flat, dev, pos, ready, who, phase=label or "all-to-all")
            else:
                got = self._torus_all_to_all(plan, pos, flat, ready, who, label or "all-to-all")
            bshape = blocks.shape[2:]
            res = list(arrays)
            for p in pos.ravel().tolist():
                res[p] = np.concatenate([got[p, i].reshape(bshape) for i in range(g)], axis=concat_dim)
            return res
        stacked = np.stack(arrays)  # (n, …): position p's array
        if op == "all-gather":
            moved = np.moveaxis(stacked, dim + 1 if dim >= 0 else dim, 1)  # (n, d0, …)
            q = moved[0].size
            data = np.zeros((n, g, q), dtype=stacked.dtype)
            data[pos, np.arange(g)[None, :]] = moved.reshape(n, q)[pos]
            self._phases("ag", plan, pos, data, dev, ready, who, 0)
            full = np.moveaxis(data.reshape((n, moved.shape[1] * g) + moved.shape[2:]), 1, dim + 1 if dim >= 0 else dim)
            return self._only(arrays, pos, full)
        if op == "reduce-scatter":
            a0 = arrays[0]
            if a0.shape[dim] % g:
                raise MeshError(f"reduce-scatter: dimension {dim} of length {a0.shape[dim]} does not split into "
                                f"{g} equal blocks over {self._axis_text(plan.axis)}")
            moved = np.moveaxis(stacked, dim + 1 if dim >= 0 else dim, 1)
            data = np.ascontiguousarray(moved).reshape(n, g, -1).copy()
            self._phases("rs", plan, pos, data, dev, ready, who, 0)
            bshape = (moved.shape[1] // g,) + moved.shape[2:]
            mine = np.empty((n,) + bshape, dtype=data.dtype)
            mine[pos] = data[pos, np.arange(g)[None, :]].reshape(pos.shape + bshape)
            return self._only(arrays, pos, np.moveaxis(mine, 1, dim + 1 if dim >= 0 else dim))
        # all-reduce: reduce-scatter, then all-gather of the summed chunks
        a0 = arrays[0]
        L = a0.size
        q = -(-L // g)
        data = np.zeros((n, g * q), dtype=stacked.dtype)
        data[:, :L] = stacked.reshape(n, L)
        data = data.reshape(n, g, q)
        self._all_reduce(plan, pos, data, dev, ready, who)
        return self._only(arrays, pos, data.reshape(n, -1)[:, :L].reshape((n,) + a0.shape))

    def _all_reduce(self, plan, pos, data, dev, ready, who):
        """An all-reduce's messages on data (position, chunk, element): NVLS, or a reduce-scatter then an
        all-gather of the summed chunks."""
        g = pos.shape[1]
        if plan.algo == "innet":
            return innet_all_reduce(self.comm, data, dev, pos, ready, who)
        done = self._phases("rs", plan, pos, data, dev, ready, who, 0)
        return self._phases("ag", plan, pos, data, dev, done, who, self._after_rs(plan, g))

    def _torus_all_to_all(self, plan, pos, flat, ready, who, phase):
        """All-to-all on a torus (flat[position, block, element], block t for group position t): one
        axis, the bidirectional ring; several ("multi-axis"), axis by axis from the minor one — along
        axis a every position sends each device of its line the bundle of blocks whose destination
        lies on that device's coordinate of a, so after the last axis every block is home. Returns
        got[position, i] = the block group position i sent it (the data moved at once, as numpy's)."""
        comm, dev = self.comm, self.dev
        G, g = pos.shape
        j = np.arange(g)
        got = np.empty_like(flat)
        got[pos[:, :, None], j[None, None, :]] = flat[pos[:, None, :], j[None, :, None]]
        block = flat.shape[2] * flat.itemsize
        if plan.algo == "bidi":
            bidi_all_to_all(comm, block, dev, pos, ready, who, 0, phase)
            return got
        sizes = self.shape_of(plan.axis)
        ids = np.arange(g).reshape(sizes)
        t = np.asarray(ready, dtype=float)
        step = 0
        for a in reversed(range(len(sizes))):
            lines = np.moveaxis(ids, a, -1).reshape(-1, sizes[a])
            line_pos = pos[:, lines].reshape(-1, sizes[a])
            # a bundle: the g / |a| blocks bound for one coordinate of the line
            t = bidi_all_to_all(comm, block * g // sizes[a], dev, line_pos, t, who, step, f"{phase} {_name(plan.axis[a:a + 1])}")
            who.merge(line_pos)
            step += _a2a_hops(sizes[a])
        return got

    @staticmethod
    def _after_rs(plan, g):
        """The step an all-reduce's gather starts at: after the reduce-scatter's steps (a multi-axis
        one numbers its k phases from 0, g, 2g, …)."""
        return len(plan.axis) * g if plan.algo == "multi-axis" else g - 1

    def _only(self, arrays, pos, result):
        """result[p] for the positions that took part, the input elsewhere (a group run alone)."""
        if pos.size == self.n:
            return list(result)
        out = list(arrays)
        for p in pos.ravel().tolist():
            out[p] = result[p]
        return out

    def _pairs(self, perm, g):
        if perm is None:
            raise MeshError("ppermute needs perm: (source, destination) pairs of axis indices")
        pairs = [(int(i), int(j)) for i, j in perm]
        if any(not (0 <= i < g and 0 <= j < g) for i, j in pairs):
            raise MeshError(f"ppermute: every index must be in 0 … {g - 1}, got {pairs}")
        if len({i for i, _ in pairs}) != len(pairs) or len({j for _, j in pairs}) != len(pairs):
            raise MeshError(f"ppermute: each index may send once and receive once, got {pairs}")
        return [(i, j) for i, j in pairs if i != j]

    def _phases(self, kind, plan, pos, data, dev, ready, who, step0):
        """The ring phases of one all-gather ("ag") or reduce-scatter ("rs") with plan's algorithm."""
        comm = self.comm
        G, g, q = data.shape[0], pos.shape[1], data.shape[2]
        own = np.broadcast_to(np.arange(g)[None, :, None], (pos.shape[0], g, 1))
        if plan.algo == "ring":
            return ring_phase(comm, kind, data, dev, [Lane(pos, own, +1, 0, q, 0)], ready, who, step0, kind)
        if plan.algo == "line":
            return line_phase(comm, kind, data, dev, pos, ready, who, step0, kind)
        if plan.algo == "bidi":
            h = (q + 1) // 2
            lanes = [Lane(pos, own, +1, 0, h, 0)] + ([Lane(pos, own, -1, h, q, 1)] if h < q else [])
            return ring_phase(comm, kind, data, dev, lanes, ready, who, step0, kind)
        # multi-axis over k torus axes (the book's): k parts of the data, part i gathering along the
        # axes in the order i, i+1, …, so at every phase the k parts use k different axes' links
        k = len(plan.axis)
        Gn = pos.shape[0]
        cuts = [(i * q) // (2 * k) for i in range(2 * k + 1)]
        parts = [(who.copy(), np.asarray(ready, dtype=float)) for _ in range(k)]
        for t in range(k):
            for i in range(k):
                lines, sets = _multi_axis_phase(self.shape_of(plan.axis), kind, i, t)
                L, a = lines.shape
                lane_pos = pos[:, lines].reshape(Gn * L, a)
                lane_chunks = np.broadcast_to(sets[lines][None], (Gn,) + sets[lines].shape).reshape(Gn * L, a, -1)
                lo, mid, hi = cuts[2 * i], cuts[2 * i + 1], cuts[2 * i + 2]
                lanes = [Lane(lane_pos, lane_chunks, +1, lo, mid, 2 * i), Lane(lane_pos, lane_chunks, -1, mid, hi, 2 * i + 1)]
                carry, r = parts[i]
                parts[i] = (carry, ring_phase(comm, kind, data, dev, lanes, r, carry, step0 + t * g, f"{kind} {t + 1}"))
        who.group_of, who.group_sets = parts[0][0].group_of, parts[0][0].group_sets
        for carry, _ in parts[1:]:
            who.union(carry)
        return np.max([r for _, r in parts], axis=0)

    def shape_of(self, names) -> tuple:
        return tuple(self.size(a) for a in names)

    def run(self, f, in_specs, out_specs, label="shard_map"):
        """shard_map: g(*args) running f once per device on its blocks (simcore.mesh.shard_map)."""
        from .shard_map import run
        return run(self, f, in_specs, out_specs, label)

    @property
    def time(self) -> float:
        return self.comm.time
