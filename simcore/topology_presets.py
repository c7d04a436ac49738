"""
topology_presets — real machines by name: which chip, how the chips are wired, and what a
tensor-parallel group of n of them looks like.

    dgx-h100       8 H100 per node on NVLink 4 (one NVSwitch domain), one ConnectX-7 400 Gb/s
                   InfiniBand NIC per GPU (NVIDIA DGX H100 datasheet: "8x NVIDIA ConnectX-7").
    gb200-nvl72    72 GB200 GPUs in one NVLink 5 domain (NVIDIA GB200 NVL72 datasheet: "72
                   Blackwell GPUs … 130 TB/s" NVLink); racks joined by one 400 Gb/s NIC per GPU.
    tpu-v5e-16x16  256 TPU v5e on a 16×16 2-D torus; only axes of 16 have their wraparound link
                   ("How to Scale Your Model", TPU chapter: "smaller topologies can be requested
                   without wraps on dims < 16"; Google Cloud TPU docs, v5e: slices 1, 2x2, 2x4,
                   4x4, 4x8, 8x8, 8x16, 16x16).
    tpu-v4-4x4x4   64 TPU v4 on a 4×4×4 3-D torus; only a full cube has wraparound links (the
                   book: "Any multiple of a full cube … will have wraparounds … a 2x2x4 won't";
                   Google Cloud TPU docs, v4: slices 2x2x1, 2x2x2, 2x2x4, 2x4x4, 4x4x4).

preset.layout(n) says how n chips are connected (a Layout: one switch, nodes, or a torus slice),
preset.topology(n) builds comm_sim's topology for it, preset.allreduce_time(n, S) is the closed
form of one all-reduce on it (topo_collectives), and preset.valid_degrees() the n it allows.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from dataclasses import dataclass

from .kind_record import NODES_SPEC, TORUS_SPEC
from .links import LINKS, NCCL_RING_LL128_BASE, LinkSpec
from .topology import Torus, nodes, switch, torus


@dataclass(frozen=True)
class TorusSlice(Torus):
    """
    A torus slice whose axes may lack their wraparound link (wrap[a] False: axis a is a line,
    as on a TPU v5e axis shorter than 16 or a TPU v4 slice smaller than a cube). Otherwise
    comm_sim's Torus; a message over a missing wraparound link raises ValueError.
    """

    wrap: tuple = ()

    def wraps(self) -> tuple:
        return tuple(self.wrap) if self.wrap else (True,) * len(self.shape)

    def route(self, src, dst):
        cs, cd = self.coords(src), self.coords(dst)
        for a, (x, y) in enumerate(zip(cs, cd)):
            if x != y and not self.wrap[a] and abs(x - y) != 1:
                raise ValueError(f"{self.name}: axis {a} has no wraparound link, so device {src} {cs} cannot "
                                 f"send to device {dst} {cd}")
        return super().route(src, dst)


def link_of(key) -> LinkSpec:
    if key in LINKS:
        return LINKS[key]
    raise ValueError(f"unknown link {key!r}; choose one of {', '.join(LINKS)}")


@dataclass(frozen=True)
class Layout:
    """
    How n chips of a preset are connected.
    kind "switch": one NVLink domain (intra link); "nodes": `nodes` nodes of `per_node` chips,
    intra inside a node, inter (one NIC per chip) between nodes; "torus": a slice of `shape`
    with wraparound links on the axes where wrap is True (a LAYOUT_KINDS key: another kind's
    own Layout builds its own topology).
    """

    kind: str
    n: int
    intra: LinkSpec
    per_node: int = 0
    nodes: int = 1
    inter: LinkSpec | None = None
    shape: tuple = ()
    wrap: tuple = ()
    base: float = 0.0  # per-collective base latency, seconds (comm_sim.NCCL_RING_LL128_BASE)
    tuning: str = ""  # the GPU generation NCCL's model times it as (simcore.nccl_tuning), "" none
    launch: str = ""  # GPU machines: "" NCCL's model alone, "graph" / "eager" its measured floor (topology._Machine)

    def describe(self) -> str:
        return LAYOUT_KINDS[self.kind].describe(self)


@dataclass(frozen=True)
class HardwarePreset:
    """
    key: the name the CLI and scenario files use; chip: hw_specs.CHIPS key; kind: a PRESET_KINDS key, "nodes" or
    "torus"; per_node: chips in one scale-up (NVLink) domain; intra: LINKS key of that domain;
    inter: LINKS key of each chip's NIC (None: no scale-out modelled); slices: torus presets,
    the slice shape offered for each chip count; full_axis: axes of this length have their
    wraparound link (wrap_whole_slice: only when every axis has that length, as on TPU v4 whose
    wraparound comes from optical switches joining whole cubes); max_devices: the largest n
    the preset builds; base: every collective call's base latency (seconds; NCCL's Ring LL128
    baseLat on the NVIDIA machines, comm_sim.NCCL_RING_LL128_BASE; 0 on the TPUs, where no
    public figure is cited); source: where it is from.
    """

    key: str
    name: str
    chip: str
    kind: str
    per_node: int
    intra: str
    inter: str | None = None
    slices: tuple = ()
    full_axis: int = 0
    wrap_whole_slice: bool = False
    max_devices: int = 4096
    base: float = 0.0
    source: str = ""
    wrap_all: bool = False  # a torus with its wraparound link on every axis (a spec's torus)
    spec: tuple = ()  # a machine made from a spec (preset_from_spec): its (key, value) pairs
    tuning: str = ""  # GPU machines: the generation NCCL's tuning model times (simcore.nccl_tuning)
    launch: str = ""  # GPU machines: "" NCCL's model alone (default), "graph" / "eager" its measured floor

    # -- which n ------------------------------------------------------------------------
    def valid_degrees(self, max_n=None):
        """The tensor-parallel degrees this machine offers, ascending (its kind's PresetKind.degrees):
        for nodes, divisors of per_node and powers of two up to it (one NVLink domain), then whole
        nodes; for a torus, the slice sizes."""
        top = self.max_devices if max_n is None else min(int(max_n), self.max_devices)
        return PRESET_KINDS[self.kind].degrees(self, top)

    def is_valid(self, n) -> bool:
        return int(n) in self.valid_degrees(n)

    def _check_n(self, n):
        if isinstance(n, bool) or int(n) != n or n < 1:
            raise ValueError(f"the number of chips must be a whole number >= 1, got {n!r}")
        n = int(n)
        if n > self.max_devices:
            raise ValueError(f"{self.name} is modelled up to {self.max_devices} chips, got {n}")
        if not self.is_valid(n):
            near = ", ".join(str(d) for d in self.valid_degrees(max(n, 2 * self.per_node))[:12])
            raise ValueError(f"{self.name} has no group of {n} chips; valid: {near}, …")
        return n

    # -- the wiring ---------------------------------------------------------------------
    def layout(self, n) -> Layout:
        """How n chips are connected (n must be one of valid_degrees())."""
        return PRESET_KINDS[self.kind].layout(self, self._check_n(n))

    def topology(self, n, launch=""):
        """comm_sim's topology for n chips: switch(n, intra), nodes(N, per_node, intra, inter)
        or a torus slice (comm_sim's torus, with the wraparound links the slice really has).
        launch (GPU machines): "" — NCCL's model alone (the default), "graph" or "eager" — no NCCL
        call faster than the wall time measured with CUDA graphs or eager launches
        (nccl_tuning.LAUNCH_FLOOR). Built once per (preset, n, launch): the same object after, so
        its plans (topology.plan) are cached with it."""
        return _topology_of(self, int(n), launch)

    def _build_topology(self, n, launch=""):
        """topology() before its cache."""
        import dataclasses

        lay = self.layout(n)
        if launch:
            if not lay.tuning:
                raise ValueError(f"{self.name} is not timed by NCCL's model: a launch floor does not apply")
            lay = dataclasses.replace(lay, launch=launch)
        return layout_topology(lay)

    @functools.cached_property
    def record(self):
        """The kind record (simcore.kind_record) of this machine at its largest group: what kind of
        machine it is (its layout family, links, per_node) for the readers that ask of the whole
        machine, not of one n (the decode sweep, the latency tab). Read once, from a topology built
        for it alone (not one of topology()'s, which topology_builds counts)."""
        return self._build_topology(self.valid_degrees()[-1]).record

    def allreduce_time(self, n, nbytes, algo=None):
        """One all-reduce of S = nbytes over n chips (seconds): its plan's time (algo None: the
        machine's choice; "ring": the flat ring), 0 for one chip."""
        return 0.0 if int(n) == 1 else self.topology(n).time("all-reduce", algo, float(nbytes))


@functools.lru_cache(maxsize=256)
def _topology_of(preset, n, launch):
    """preset._build_topology(n, launch), once per (preset, n, launch): topology_builds() counts the builds."""
    return preset._build_topology(n, launch)


def topology_builds():
    """functools' CacheInfo of the machines' topologies: misses = topologies built."""
    return _topology_of.cache_info()


def layout_topology(layout: Layout):
    """The comm_sim topology of a Layout (see HardwarePreset.topology): its kind's LayoutKind.build."""
    return LAYOUT_KINDS[layout.kind].build(layout)


# ---------------------------------------------------------------------------------------
# The kinds: how a preset of each kind offers n and wires n chips, and how a Layout of each
# kind is built and described. A new kind adds its entries here (and its topology class, whose
# `record` the app draws it by: simcore.kind_record); nothing else branches on the kind.
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PresetKind:
    """A preset kind: degrees(preset, top) the n it offers up to top, ascending; layout(preset, n)
    the Layout of n chips (n already one of its degrees)."""

    degrees: object
    layout: object


@dataclass(frozen=True)
class LayoutKind:
    """A Layout kind: build(layout) its comm_sim topology; describe(layout) one line on its wiring."""

    build: object
    describe: object


def _nodes_degrees(p, top):
    # inside one NVLink domain every GPU reaches every other through the switches, so a group
    # may be any divisor of the domain (the domain splits into equal groups) or a power of two
    # (tensor-parallel degrees divide power-of-two head counts): NVL72 hosts 16, 32 and 64
    # (NVIDIA GB200 NVL72: one NVLink domain of 72 GPUs; n must still split the model's heads,
    # cost_model.tp_degree_problem)
    small = [d for d in range(1, p.per_node + 1) if (p.per_node % d == 0 or d & (d - 1) == 0) and d <= top]
    return small + list(range(2 * p.per_node, top + 1, p.per_node))


def _nodes_layout(p, n):
    intra = link_of(p.intra)
    if n <= p.per_node or p.inter is None:
        return Layout("switch", n, intra, per_node=n, base=p.base, tuning=p.tuning, launch=p.launch)
    return Layout("nodes", n, intra, per_node=p.per_node, nodes=n // p.per_node, inter=link_of(p.inter),
                  base=p.base, tuning=p.tuning, launch=p.launch)


def _torus_degrees(p, top):
    return [1] + [math.prod(s) for s in p.slices if math.prod(s) <= top]


def _torus_layout(p, n):
    intra = link_of(p.intra)
    if n == 1:
        return Layout("torus", 1, intra, shape=(1,), wrap=(False,), base=p.base)
    shape = next(s for s in p.slices if math.prod(s) == n)
    wrap = tuple(a == p.full_axis for a in shape)
    if p.wrap_all:
        wrap = (True,) * len(shape)
    if p.wrap_whole_slice and not all(wrap):
        wrap = (False,) * len(shape)
    return Layout("torus", n, intra, shape=tuple(shape), wrap=wrap, base=p.base)


def _build_torus(lay):
    t = torus(lay.shape, lay.intra, base=lay.base)
    return TorusSlice(t.shape, t.link, t.base, wrap=lay.wrap)


def _describe_torus(lay):
    axes = "x".join(str(a) for a in lay.shape)
    wraps = "wraparound on every axis" if all(lay.wrap) else (
        "no wraparound" if not any(lay.wrap) else
        "wraparound on the axes of " + ", ".join(str(a) for a, w in zip(lay.shape, lay.wrap) if w))
    return f"{axes} torus slice ({wraps}, {lay.intra.name})"


PRESET_KINDS = {"nodes": PresetKind(_nodes_degrees, _nodes_layout), "torus": PresetKind(_torus_degrees, _torus_layout)}
LAYOUT_KINDS = {
    "switch": LayoutKind(lambda lay: switch(lay.n, lay.intra, base=lay.base, tuning=lay.tuning, launch=lay.launch),
                         lambda lay: f"{lay.n} on one switch ({lay.intra.name})"),
    "nodes": LayoutKind(lambda lay: nodes(lay.nodes, lay.per_node, intra=lay.intra, inter=lay.inter, base=lay.base,
                                          tuning=lay.tuning, launch=lay.launch),
                        lambda lay: f"{lay.nodes} nodes x {lay.per_node} ({lay.intra.name} inside, "
                                    f"{lay.inter.name} between)"),
    "torus": LayoutKind(_build_torus, _describe_torus),
}


def allreduce_time(layout: Layout, nbytes, algo=None):
    """
    Closed-form time (seconds) of one all-reduce of S = nbytes on a Layout: its plan's time
    (topology.plan): algo None → what the machine picks for S (NCCL's tuner, with its protocol,
    on the GPU machines; bidirectional rings on a torus); otherwise that registry algorithm
    ("ring": the flat ring over all chips) where it runs.
    """
    return 0.0 if layout.n == 1 else layout_topology(layout).time("all-reduce", algo, float(nbytes))


PRESETS = {p.key: p for p in (
    HardwarePreset("dgx-h100", "DGX H100", "h100", "nodes", 8, "nvlink4", "ib-ndr400",
                   base=NCCL_RING_LL128_BASE, tuning="hopper",
                   source="NVIDIA DGX H100 datasheet: 8 H100 SXM, NVLink 4 through NVSwitch, "
                          "8x ConnectX-7 400 Gb/s (one per GPU)"),
    HardwarePreset("gb200-nvl72", "GB200 NVL72", "gb200", "nodes", 72, "nvlink5", "ib-ndr400",
                   max_devices=4032, base=NCCL_RING_LL128_BASE, tuning="blackwell",
                   source="NVIDIA GB200 NVL72 datasheet: 72 Blackwell GPUs in one NVLink 5 domain; "
                          "one 400 Gb/s ConnectX-7 per GPU between racks"),
    HardwarePreset("tpu-v5e-16x16", "TPU v5e 16x16", "tpu-v5e", "torus", 256, "tpu-v5e-ici",
                   slices=((2, 2), (2, 4), (4, 4), (4, 8), (8, 8), (8, 16), (16, 16)), full_axis=16,
                   max_devices=256,
                   source="Google Cloud TPU docs, v5e (slice shapes); How to Scale Your Model, TPU chapter "
                          "(16x16 2-D torus, wraparound only on axes of 16)"),
    HardwarePreset("tpu-v4-4x4x4", "TPU v4 4x4x4", "tpu-v4", "torus", 64, "tpu-v4-ici",
                   slices=((2, 2, 1), (2, 2, 2), (2, 2, 4), (2, 4, 4), (4, 4, 4)), full_axis=4,
                   wrap_whole_slice=True, max_devices=64,
                   source="Google Cloud TPU docs, v4 (slice shapes); How to Scale Your Model, TPU chapter "
                          "(4x4x4 cubes, wraparound only on a full cube)"),
)}


def get_preset(key) -> HardwarePreset:
    """A preset by key, or ValueError naming the keys there are."""
    if key not in PRESETS:
        raise ValueError(f"unknown hardware preset {key!r}; choose one of {', '.join(PRESETS)}")
    return PRESETS[key]


# ---------------------------------------------------------------------------------------
# Which algorithms a machine offers, and one collective on it (the app's scenarios)
# ---------------------------------------------------------------------------------------
def offered_algos(key, n, op="all-reduce"):
    """
    The algorithms one collective of n chips on preset `key` offers in the app's menus, the
    machine's own first: inside one NVLink domain the lecture's algorithms (all-reduce) or the
    ring; across nodes the registry's machine algorithms (all-reduce: hierarchical and NCCL's
    channel rings; all-gather / reduce-scatter: the channel rings, one per NIC); on a torus the
    bidirectional rings per axis ("torus"). Every name is one the topology can run
    (topology.algorithms); the topology's choice for a size is topology.choose.
    """
    return _offered(get_preset(key), int(n), op)


@functools.lru_cache(maxsize=1024)
def _offered(preset, n, op):
    from .algorithms import ALGORITHMS

    topo = preset.topology(n)
    runs = topo.algorithms(op)
    if "switch" in topo.kinds:
        mine = tuple(a for a in runs if "switch" in ALGORITHMS[op][a].topologies)
        return mine if op == "all-reduce" else ("ring",)
    return tuple(a for a in runs if "switch" not in ALGORITHMS[op][a].topologies)


def run_on_preset(op, key, n, nbytes, algo, elems_per_piece=4, seed=0):
    """
    One collective (op: all-gather, reduce-scatter or all-reduce) of S = nbytes on n chips of
    preset `key` with `algo` (one of offered_algos; None: the machine's choice for S), on real
    arrays, timed as the machine runs it (topology.timed_as_machine: NCCL's protocol on a GPU
    machine). Returns (comm, inputs, outputs): inputs (n, L) every device's buffer before
    (all-gather: its own piece in place).
    """
    from .comm_sim import Comm
    from .plan import execute, resolve
    from .scenarios import demo_values

    if op not in ("all-gather", "reduce-scatter", "all-reduce"):
        raise ValueError(f"unknown collective {op!r}; choose all-gather, reduce-scatter or all-reduce")
    topo = get_preset(key).topology(n)
    offered = offered_algos(key, n, op)
    if algo is not None and algo not in offered:
        raise ValueError(f"{get_preset(key).name} with {n} chips runs {op} as {', '.join(offered)}, not {algo!r}")
    plan = resolve(topo, op, float(nbytes), algo)  # the one decision; the run executes it
    algo, rec = plan.algo, plan.record
    n = topo.n
    # the finer chunks must divide a device's piece: hier's one per pipeline chunk (C·n of the whole,
    # so its chunks are equal, as its closed form has them; C of the links it is timed with,
    # Nodes.hier_chunks), the channel rings' P (P·n of the whole), the torus's 2 halves × up to
    # 3 axes (topology.fine_per_device)
    if algo == "hier":
        fine = plan.chunks
    elif algo == "tree":  # two halves (one per tree) of every pipeline chunk (tree_allreduce)
        from .tree_allreduce import tree_chunks
        fine = 2 * tree_chunks(float(nbytes))
    else:
        fine = topo.fine_per_device if algo in ("ring-nodes", "torus") else 1
    per = elems_per_piece * fine
    L = n * per
    comm = Comm(topo, byte_scale=float(nbytes) / (L * 8))
    with execute(comm, plan):
        if op == "all-gather":
            chunks = list(demo_values(seed, (n, per)))
            inputs = np.zeros((n, L))
            for d in range(n):
                inputs[d, d * per:(d + 1) * per] = chunks[d]
            return comm, inputs, rec.fn(comm, chunks, {d: d for d in range(n)}, label="all-gather")
        inputs = demo_values(seed, (n, L))
        if op == "reduce-scatter":
            return comm, inputs, rec.fn(comm, list(inputs), label="reduce-scatter")[0]
        return comm, inputs, rec.fn(comm, list(inputs), label="all-reduce")


def check_machine(op, key, n, algo, collective_ops=("all-gather", "reduce-scatter", "all-reduce")):
    """A scenario naming machine `key`: ValueError (one sentence) unless op is a collective, n
    one of the machine's groups and algo one it offers for them."""
    preset = get_preset(key)
    if op not in collective_ops:
        raise ValueError(f"a machine ({key}) can be chosen for {', '.join(collective_ops)}; "
                         f"{op} runs on one switch (choose the machine 'switch')")
    if isinstance(n, bool) or int(n) != n or not preset.is_valid(int(n)):
        near = ", ".join(str(d) for d in preset.valid_degrees(256)[:14])
        raise ValueError(f"{preset.name} has no group of {n} chips; choose one of {near}")
    offered = offered_algos(key, int(n), op)
    if algo not in offered:
        raise ValueError(f"{preset.name} with {n} chips runs {op} as {', '.join(offered)}, not {algo!r}")


# ---------------------------------------------------------------------------------------
# A machine from a spec (scenario files): nodes or a torus with links by name
# ---------------------------------------------------------------------------------------
SPEC_FIELDS = {"nodes": NODES_SPEC, "torus": TORUS_SPEC}  # each kind's record says them (KindRecord.spec_fields)


def _whole(v, what, lo=1, hi=4096):
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ValueError(f"a machine spec's {what} must be a whole number from {lo} to {hi}, got {v!r}")
    return v


def preset_from_spec(spec) -> HardwarePreset:
    """
    A machine described by a dict, as a scenario file may carry it:
      {"kind": "nodes", "nodes": 2, "per_node": 8, "intra": "nvlink4", "inter": "ib-ndr400"}
      {"kind": "torus", "shape": [4, 4], "link": "tpu-v5e-ici"}   (wraparound on every axis)
    and optionally "base": the per-collective base latency in seconds (default 0). Links are
    comm_sim.LINKS keys. ValueError names the first thing wrong.
    """
    if not isinstance(spec, dict) or spec.get("kind") not in SPEC_FIELDS:
        raise ValueError("a machine spec is an object whose \"kind\" is \"nodes\" or \"torus\"")
    kind = spec["kind"]
    unknown = sorted(set(spec) - set(SPEC_FIELDS[kind]))
    if unknown:
        raise ValueError(f"a {kind} machine spec has no field {unknown[0]!r} (fields: {', '.join(SPEC_FIELDS[kind])})")
    base = spec.get("base", 0.0)
    if isinstance(base, bool) or not isinstance(base, (int, float)) or not (math.isfinite(base) and 0 <= base <= 1):
        raise ValueError(f"a machine spec's base latency must be seconds from 0 to 1, got {base!r}")
    for f in SPEC_FIELDS[kind][1:-1]:
        if f not in spec:
            raise ValueError(f"a {kind} machine spec needs {f!r}")
    if kind == "nodes":
        N, P = _whole(spec["nodes"], "nodes"), _whole(spec["per_node"], "per_node")
        if N * P > 4096:
            raise ValueError(f"a machine spec of {N} nodes × {P} is more than 4096 devices")
        intra, inter = link_of(spec["intra"]), link_of(spec["inter"])
        key = f"nodes-{N}x{P}-{spec['intra']}-{spec['inter']}" + (f"-base{base:g}" if base else "")
        return HardwarePreset(key, f"{N} nodes × {P} ({intra.name}, {inter.name})", "h100", "nodes", P,
                              spec["intra"], spec["inter"], max_devices=N * P, base=float(base),
                              source="a scenario file's machine spec", spec=tuple(sorted(spec.items())))
    shape = spec["shape"]
    if not isinstance(shape, (list, tuple)) or not 1 <= len(shape) <= 3:
        raise ValueError(f"a torus spec's shape is a list of 1 to 3 sizes, got {shape!r}")
    shape = tuple(_whole(a, "torus axis", 1, 256) for a in shape)
    if math.prod(shape) > 4096:
        raise ValueError(f"a torus of shape {shape} is more than 4096 devices")
    link = link_of(spec["link"])
    axes = "x".join(map(str, shape))
    key = f"torus-{axes}-{spec['link']}" + (f"-base{base:g}" if base else "")
    items = tuple(sorted({**spec, "shape": list(shape)}.items(), key=lambda kv: kv[0]))
    return HardwarePreset(key, f"{axes} torus ({link.name}, wraparound)", "tpu-v5e", "torus", math.prod(shape),
                          spec["link"], slices=(shape,), max_devices=math.prod(shape), base=float(base),
                          wrap_all=True, source="a scenario file's machine spec",
                          spec=tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in items))


def register_spec(spec) -> str:
    """Make the machine of `spec` available by its key (PRESETS) for this session; returns the key."""
    preset = preset_from_spec(spec)
    PRESETS[preset.key] = preset
    return preset.key


def spec_of(key):
    """The spec dict a machine was made from (preset_from_spec), or None for a named preset."""
    preset = PRESETS.get(key)
    if preset is None or not preset.spec:
        return None
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in preset.spec}
