"""
programs — the lecture's next programs on a mesh, each a registered record (name, words en/zh,
build function), each equal to one device's numpy result and timed against its published form.

    dp-tp-forward      the TP Transformer forward on a DP × TP mesh (logits = one device's)
    fsdp-tp-layer      mixed FSDP (X) × TP (Y) forward of an MLP layer ("How to Scale Your Model",
                       training chapter): T_FSDP = 4DF/(Y·W·M_X), T_TP = 4BD/(X·W·M_Y), X_opt
    2d-ws-ffn          2-D weight-stationary FFN for inference (the book's inference chapter,
                       appendix B and question 7; Pope et al. 2022): AG_YZ → W_in → AR_X → W_out →
                       RS_YZ, T = 2BD/(X·W) + 4BF/(YZ·W); beats 1-D past N = 32·(F/D)·(3/4)² (72 at F = 4D)
    1d-ws-ffn          its baseline, 1-D weight-stationary (Megatron) over every axis: AG_XYZ → W_in →
                       W_out → RS_XYZ, T = 4BD/(n_axes·W)
    torus-all-gather   the book's AllGather over one, two and three torus axes (sharding chapter):
                       T = V/(W·n_axes)
    redistribute       A[I, J] from a source layout to a target (the book's notation), by the rules;
                       rules=1: every rule in turn
    matmul             the book's sharded matmul, case 1 … 4 (case=all: the four), or A's and B's
                       layouts given as a and b
    shard-map          a per-device function in shard_map style calling every collective by axis name

A program runs on a real numpy model small enough to check (its `scale` s divides the model's
dimensions) and times it as the real model: byte_scale = s²·(real bytes per element)/8, so
every product of two dimensions (BD, BF, DF) moves the real model's bytes. W is the book's link
bandwidth of an axis: both directions of a torus link (2β: the book's bidirectional W_ici), one
direction of the slowest link elsewhere; M the physical axes a mesh axis spans (1 off a torus).

Adding a program (docs/extending.md): write build(mesh, **params) -> Result and
register(Program(name, title, description, build, ...)) here; the CLI (--list, --program), the
app's Mesh scenario and the MPI ranks read this one registry, filled at import.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field

import numpy as np

from .device_mesh import Mesh, _on_torus
from .errors import MeshError
from .placement import P
from .sharded import ShardedArray, matmul

BF16 = 2  # bytes per element of the real model (bf16), as the book counts


@dataclass(frozen=True)
class Row:
    """One collective of a program: what the book calls it, and its simulated and published times."""

    step: str  # the book's line, e.g. "AG_Y  In[B_X, D_Y] → In[B_X, D]"
    op: str
    axis: str
    algo: str
    groups: int
    group_size: int
    nbytes: float  # S of one group
    simulated: float  # seconds
    published: float  # seconds
    form: str  # the published form, written out
    protocol: str = ""  # NCCL's protocol the ring was timed with on a GPU machine

    @property
    def ratio(self) -> float:
        return self.simulated / self.published if self.published > 0 else float("nan")


@dataclass
class Result:
    name: str
    mesh: Mesh
    rows: list
    max_err: float  # max |mesh result − one device's numpy result|
    published_total: float
    published_text: str
    notes: list = field(default_factory=list)
    memory: list = field(default_factory=list)  # per mesh position: {class: bytes}
    tensors: dict = field(default_factory=dict)  # class -> {name: ShardedArray or per-position arrays}
    axes: tuple = ()  # the mesh axes the program shards over (with or without collectives)

    @property
    def simulated_total(self) -> float:
        return sum(r.simulated for r in self.rows)

    def as_dict(self) -> dict:
        return {"program": self.name, "mesh": dict(zip(self.mesh.axis_names, self.mesh.shape)),
                "machine": self.mesh.topology.name,
                "rows": [{"step": r.step, "op": r.op, "axis": r.axis, "algo": r.algo, "protocol": r.protocol,
                          "groups": r.groups,
                          "group_size": r.group_size, "bytes": r.nbytes, "simulated_s": r.simulated,
                          "published_s": r.published, "ratio": r.ratio, "form": r.form} for r in self.rows],
                "simulated_total_s": self.simulated_total, "published_total_s": self.published_total,
                "published_form": self.published_text, "max_abs_error": self.max_err, "notes": list(self.notes),
                "memory_bytes_per_device": self.memory}


@dataclass(frozen=True)
class Param:
    """
    One parameter of a program: its name, its default, and what it may be. choices: the values
    it may take (empty: any value of the default's kind); minimum: the least whole number it may
    be (whole-number parameters only). check(value) returns the value as the program takes it
    (a whole number written as text read as one), or raises MeshError kind "bad-parameter".
    """

    name: str
    default: object
    choices: tuple = ()
    minimum: int | None = None

    def check(self, program: str, value):
        if self.choices:
            for c in self.choices:  # "3" from a command line is the choice 3
                if value == c or str(value) == str(c):
                    return c
            raise MeshError(f"{program}'s {self.name} is one of {', '.join(map(str, self.choices))}, got {value!r}",
                            "bad-parameter", program=program, param=self.name, value=value,
                            expected=("one of", self.choices))
        if isinstance(self.default, int) and not isinstance(self.default, bool):
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or (
                    self.minimum is not None and value < self.minimum):
                raise MeshError(f"{program}'s {self.name} is a whole number >= {self.minimum}, got {value!r}",
                                "bad-parameter", program=program, param=self.name, value=value,
                                expected=("whole number >=", self.minimum))
            return int(value)
        return value


def params_of(build, **choices) -> tuple:
    """A build function's parameters as Params, from its signature (every argument after the mesh,
    with its default); choices: {name: the values it may take}. Whole-number parameters are >= 1,
    a seed >= 0."""
    out = []
    for name, par in list(inspect.signature(build).parameters.items())[1:]:
        d = par.default
        whole = isinstance(d, int) and not isinstance(d, bool)
        out.append(Param(name, d, tuple(choices.get(name, ())),
                         (0 if name == "seed" else 1) if whole and name not in choices else None))
    return tuple(out)


@dataclass(frozen=True)
class Program:
    """
    A registered program on a mesh: everything the CLI, the app and MPI need to offer it by name.
        name         its one name (python -m simcore mesh --program NAME, shard-lab --program NAME)
        title        {"en": …, "zh": …}: a line for a menu
        description  {"en": …, "zh": …}: what it does and what it is checked against
        build        build(mesh, **params) -> Result (equal to one device's numpy result, timed)
        mesh         its own mesh ((axis, size), …), used when none is given
        machine      its own machine (None: one NVLink 4 switch; a preset's key)
        params       Params (params_of(build) when left out): defaults and what each may be
        published    the published form its times are checked against, written out
        example      parameters worth trying, as the app's field and --param take them ("case=2")
    """

    name: str
    title: dict
    description: dict
    build: object
    mesh: tuple = (("X", 2), ("Y", 4))
    machine: object = None
    params: tuple = None
    published: str = "each collective's closed form"
    example: str = ""

    def __post_init__(self):
        if self.params is None:
            object.__setattr__(self, "params", params_of(self.build))
        for lang in ("en", "zh"):
            if not self.title.get(lang) or not self.description.get(lang):
                raise ValueError(f"program {self.name!r} needs a title and a description in en and zh")

    @property
    def words(self) -> dict:
        """The title by language (what a menu shows)."""
        return dict(self.title)

    @property
    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params}

    def checked(self, params: dict) -> dict:
        """Every parameter, the given ones checked (MeshError: unknown or not allowed)."""
        by = {p.name: p for p in self.params}
        for k in params:
            if k not in by:
                raise MeshError(f"{self.name} has no parameter {k!r}; its parameters are {', '.join(by)}",
                                "unknown-parameter", program=self.name, param=k, params=tuple(by))
        return {k: (by[k].check(self.name, params[k]) if k in params else by[k].default) for k in by}


PROGRAMS: dict[str, Program] = {}


def register(program: Program) -> Program:
    """Add a program to the registry (a name registered again is replaced)."""
    PROGRAMS[program.name] = program
    return program


def unregister(name) -> None:
    """Remove a program (a test's own, once it is done)."""
    PROGRAMS.pop(name, None)


def get_program(name) -> Program:
    if name not in PROGRAMS:
        raise MeshError(f"no program {name!r}; the mesh runs {', '.join(PROGRAMS)}", "unknown-program",
                        program=name, programs=tuple(PROGRAMS))
    return PROGRAMS[name]


def run_program(name, mesh_shape=None, machine="default", *, mesh_class=None, **params) -> Result:
    """Build `name` on a mesh {axis: size} (None: the program's own) and machine ("default": its own).
    mesh_class: what builds the mesh, called as Mesh is (default Mesh, the simulation; a
    functools.partial of simcore.mesh.ranks.RankMesh runs the same program on MPI ranks)."""
    prog = get_program(name)
    shape = dict(prog.mesh) if mesh_shape is None else dict(mesh_shape)
    machine = prog.machine if machine == "default" else machine
    kw = prog.checked(params)
    scale = kw.get("scale", 1)
    mesh = (mesh_class or Mesh)(tuple(shape.values()), tuple(shape), machine, byte_scale=scale * scale * BF16 / 8)
    res = prog.build(mesh, **kw)
    used = set(res.axes) | {a for rec in mesh.log for a in rec.axis}
    idle = [a for a, size in zip(mesh.axis_names, mesh.shape) if a not in used and size > 1]
    if idle:
        res.notes.append(f"axis {', '.join(idle)} is not used by this program: each of its slices runs the same "
                         f"program on a copy (name it in a parameter to use it)")
    return res


# ---------------------------------------------------------------------------------------
# The book's link terms and the rows
# ---------------------------------------------------------------------------------------
def book_W(mesh, axis) -> float:
    """The book's W for a mesh axis (bytes/s): both directions of a torus link, else one direction
    of the axis's slowest link. An axis of a slice without wraparound is a line, not a ring: each
    chunk's far end is one direction's (the book's v5e example: "3 hops for data from the edges to
    reach the other edge"), so W is one direction of its link there."""
    topo = mesh.topology
    if _on_torus(topo):
        dims = mesh.torus_dims(axis)
        line = dims is not None and any(topo.shape[d] > 2 and not topo.wraps()[d] for d in dims)
        return topo.link.bw if line else 2 * topo.link.bw
    return mesh._links(mesh.positions(axis))[1]


def book_M(mesh, axis) -> int:
    """Physical axes a mesh axis spans (the book's M): its torus axes, 1 elsewhere."""
    return len(mesh.axis(axis)) if _on_torus(mesh.topology) else 1


def _row(step, rec, published, form) -> Row:
    return Row(step, rec.op, rec.axis_name, rec.algo, len(rec.groups), len(rec.groups[0]), rec.nbytes, rec.time,
               published, form, rec.protocol)


def _check_split(what, n, mesh, axes):
    """MeshError "not-split" unless n (dimension `what`, e.g. "B/scale") splits over the mesh axes."""
    axes = mesh.axis(axes)
    k = mesh.size(axes)
    if n % k:
        raise MeshError(f"{what} = {n} does not split into {k} equal blocks over {', '.join(axes)}", "not-split",
                        dim=what.split("/")[0], length=n, axes=axes, sizes=tuple(mesh.size(a) for a in axes))


def _scaled(scale, **dims):
    """Each dimension divided by scale (MeshError "bad-parameter" unless scale divides it)."""
    for name, v in dims.items():
        if v % scale:
            raise MeshError(f"{name} = {v} is not divisible by scale {scale}", "bad-parameter", program=None,
                            param=name, value=v, expected=("multiple of", scale))
    return tuple(v // scale for v in dims.values())


def _dims(B, D, F, scale):
    return _scaled(scale, B=B, D=D, F=F)


def memory_per_device(mesh, classes) -> list:
    """
    Any program's memory, per mesh position: bytes by tensor class. classes: {class: {name:
    ShardedArray or one array per position}} — e.g. {"weights": {...}, "KV cache": {...},
    "activations": {...}}; bytes are the blocks' × byte_scale (the real model's). Adds "buffers in
    flight": the largest buffer a collective of mesh.log held on that device (S of its group).
    """
    scale = mesh.comm.byte_scale
    out = []
    for p in range(mesh.n):
        if p not in mesh.held:  # a mesh over ranks: each rank counts its own position
            out.append(None)
            continue
        row = {}
        for cls, tensors in classes.items():
            total = 0.0
            for t in tensors.values():
                blocks = t.blocks if isinstance(t, ShardedArray) else t
                total += float(np.asarray(blocks[p]).nbytes) * scale
            row[cls] = total
        d = int(mesh.dev[p])
        row["buffers in flight"] = max((r.nbytes for r in mesh.log if any(d in g for g in r.groups)), default=0.0)
        out.append(row)
    return out


def _two_axes(mesh, a, b):
    """Two distinct mesh axes (None: the mesh's first and second)."""
    if len(mesh.axis_names) < 2 and (a is None or b is None):
        raise MeshError(f"this program needs two mesh axes; the mesh has {', '.join(mesh.axis_names)}",
                        "needs-axes", need=2, axes=mesh.axis_names)
    a = mesh.axis_names[0] if a is None else _axis_value(a)
    b = mesh.axis_names[1] if b is None else _axis_value(b)
    if set(mesh.axis(a)) & set(mesh.axis(b)):
        raise MeshError(f"the program's two axes must differ, got {a} twice", "same-axis",
                        axis=next(x for x in mesh.axis(a) if x in mesh.axis(b)))
    return a, b


def _axis_value(v):
    """An axis parameter as a program takes it: a name, or several (a tuple; 'Y,Z' from a command line)."""
    if isinstance(v, str) and "," in v:
        return tuple(x.strip() for x in v.split(","))
    return v


def _silu(x):
    return x / (1.0 + np.exp(-x))


def _ffn_arrays(b, d, f, seed):
    """The FFN programs' inputs from one seed: x [b, d], W_in [d, f], W_out [f, d] (scaled so the
    activations stay O(1)) and the one-device result silu(x · W_in) · W_out, the reference."""
    rng = np.random.default_rng(seed)
    x, w_in, w_out = rng.standard_normal((b, d)), rng.standard_normal((d, f)) / d ** .5, rng.standard_normal((f, d)) / f ** .5
    return x, w_in, w_out, _silu(x @ w_in) @ w_out


# ---------------------------------------------------------------------------------------
# FSDP (X) × TP (Y): the forward of one MLP layer
# ---------------------------------------------------------------------------------------
def fsdp_tp_layer(mesh, x_axis=None, y_axis=None, B=8192, D=8192, F=32768, scale=64, seed=0):
    """
    The book's mixed FSDP + tensor parallelism, forward: In[B_X, D_Y] · W_in[D_X, F_Y] · W_out[F_Y, D_X]
    → Out[B_X, D_Y]:
        In[B_X, D]         = AllGather_Y  In[B_X, D_Y]        (on the critical path)
        W_in[D, F_Y]       = AllGather_X  W_in[D_X, F_Y]      (can be done ahead of time)
        Tmp[B_X, F_Y]      = In · W_in, then SiLU
        W_out[F_Y, D]      = AllGather_X  W_out[F_Y, D_X]
        Out[B_X, D]{U_Y}   = Tmp · W_out
        Out[B_X, D_Y]      = ReduceScatter_Y Out               (on the critical path)
    Published: T_FSDP = 4DF/(Y·W·M_X), T_TP = 4BD/(X·W·M_Y) (bf16; no overlap), and
    X_opt = √(B/F · M_X/M_Y · N).
    """
    x_axis, y_axis = _two_axes(mesh, x_axis, y_axis)
    b, d, f = _dims(B, D, F, scale)
    X, Y = mesh.size(x_axis), mesh.size(y_axis)
    for what, v, ax in (("B", b, x_axis), ("D", d, mesh.axis(x_axis) + mesh.axis(y_axis)), ("F", f, y_axis)):
        _check_split(f"{what}/scale", v, mesh, ax)
    x, w_in, w_out, ref = _ffn_arrays(b, d, f, seed)
    n0 = len(mesh.log)
    In = ShardedArray.from_full(mesh, x, P(x_axis, y_axis), "In", "BD")
    Win = ShardedArray.from_full(mesh, w_in, P(x_axis, y_axis), "W_in", "DF")
    Wout = ShardedArray.from_full(mesh, w_out, P(y_axis, x_axis), "W_out", "FD")
    In2 = In.redistribute(P(x_axis, None), label="AG_Y In")
    Win2 = Win.redistribute(P(None, y_axis), label="AG_X W_in")
    Tmp = matmul(In2, Win2, "Tmp")
    Tmp.blocks = mesh.each(_silu, Tmp.blocks)
    Wout2 = Wout.redistribute(P(y_axis, None), label="AG_X W_out")
    Out = matmul(Tmp, Wout2, "Out")
    Out2 = Out.redistribute(P(x_axis, y_axis), label="RS_Y Out")
    err = float(np.max(np.abs(Out2.full() - ref)))
    WX, WY, MX, MY = book_W(mesh, x_axis), book_W(mesh, y_axis), book_M(mesh, x_axis), book_M(mesh, y_axis)
    tp_one = 2 * B * D / (X * WY * MY)
    fsdp_one = 2 * D * F / (Y * WX * MX)
    recs = mesh.log[n0:]
    steps = [str(In2.steps[-1]), str(Win2.steps[-1]), str(Wout2.steps[-1]), str(Out2.steps[-1])]
    rows = [_row(f"AG_{recs[0].axis_name}  {steps[0]}", recs[0], tp_one, "2BD/(X·W·M_Y)"),
            _row(f"AG_{recs[1].axis_name}  {steps[1]}", recs[1], fsdp_one, "2DF/(Y·W·M_X)"),
            _row(f"AG_{recs[2].axis_name}  {steps[2]}", recs[2], fsdp_one, "2DF/(Y·W·M_X)"),
            _row(f"RS_{recs[3].axis_name}  {steps[3]}", recs[3], tp_one, "2BD/(X·W·M_Y)")]
    N = X * Y
    x_opt = math.sqrt(B / F * MX / MY * N)
    notes = [f"T_FSDP = 4DF/(Y·W·M_X) = {2 * fsdp_one * 1e6:.1f} µs, T_TP = 4BD/(X·W·M_Y) = {2 * tp_one * 1e6:.1f} µs "
             f"(B {B}, D {D}, F {F}, bf16; W_X {WX / 1e9:.0f} GB/s, W_Y {WY / 1e9:.0f} GB/s)",
             f"X_opt = √(B/F · M_X/M_Y · N) = {x_opt:.2f} for N = {N} (this mesh: X = {X})"]
    if WX != WY:
        x_w = math.sqrt(B / F * (MX * WX) / (MY * WY) * N)
        notes.append(f"with the axes' different W: X_opt = √(B/F · M_X·W_X/(M_Y·W_Y) · N) = {x_w:.2f}")
    res = Result("fsdp-tp-layer", mesh, rows, err, 2 * fsdp_one + 2 * tp_one, "4DF/(Y·W·M_X) + 4BD/(X·W·M_Y)", notes)
    res.axes = mesh.axis(x_axis) + mesh.axis(y_axis)
    res.tensors = {"weights": {"W_in": Win, "W_out": Wout}, "activations": {"In": In, "Tmp": Tmp, "Out": Out2},
                   "KV cache": {}}
    res.memory = memory_per_device(mesh, res.tensors)
    return res


def fsdp_tp_sweep(N, machine=None, B=8192, D=8192, F=32768, scale=64):
    """
    The book's X_opt by simulation: fsdp-tp-layer on every X × Y = N mesh (X a divisor of N, one
    switch by default), each row (X, simulated collectives' seconds, the book's T_FSDP + T_TP).
    The book's X_opt = √(B/F · M_X/M_Y · N) minimises the second; the first follows it.
    """
    rows = []
    for X in [x for x in range(1, N + 1) if N % x == 0]:
        res = run_program("fsdp-tp-layer", {"X": X, "Y": N // X}, machine, B=B, D=D, F=F, scale=scale)
        rows.append((X, res.simulated_total, res.published_total))
    return rows


# ---------------------------------------------------------------------------------------
# 2-D weight-stationary FFN (inference)
# ---------------------------------------------------------------------------------------
def crossover_2d(F_over_D) -> float:
    """N past which 2-D weight-stationary moves less than 1-D (over three axes): 32·(F/D)·(3/4)²
    (the book's inference chapter, question 7: 72 at F = 4D)."""
    return 32 * F_over_D * (3 / 4) ** 2


def ws2d_ffn(mesh, x_axis=None, yz_axes=None, B=2048, D=8192, F=32768, scale=128, seed=0):
    """
    The book's 2-D weight-stationary FFN (inference chapter, question 7 and appendix B; Pope et al.
    2022, "Efficiently Scaling Transformer Inference"):
        In[B, D_X]          = AllGather_YZ  In[B, D_XYZ]
        Tmp[B, F_YZ]{U_X}   = In[B, D_X] · W_in[D_X, F_YZ]
        Tmp[B, F_YZ]        = AllReduce_X Tmp, then SiLU
        Out[B, D_X]{U_YZ}   = Tmp[B, F_YZ] · W_out[F_YZ, D_X]
        Out[B, D_XYZ]       = ReduceScatter_YZ Out
    Published: T = 2BD/(X·W) + 4BF/(YZ·W) (YZ over two axes; in general the AG and RS over
    W·M_YZ, the AR over W·M_X).
    """
    x_axis = mesh.axis_names[0] if x_axis is None else x_axis
    mesh.axis(x_axis)
    if yz_axes is None:  # every other axis, as the book's Y and Z
        yz_axes = tuple(a for a in mesh.axis_names if a != x_axis)
        if not yz_axes:
            raise MeshError(f"2-D weight-stationary needs a second mesh axis for YZ; the mesh has only {x_axis}",
                            "needs-axes", need=2, axes=mesh.axis_names)
    yz = tuple(yz_axes) if not isinstance(yz_axes, str) else tuple(yz_axes.split(","))
    yz = mesh.axis(yz)
    if x_axis in yz:
        raise MeshError(f"the X axis {x_axis} cannot also be one of the YZ axes {','.join(yz)}", "same-axis",
                        axis=x_axis)
    b, d, f = _dims(B, D, F, scale)
    X, YZ = mesh.size(x_axis), mesh.size(yz)
    _check_split("D/scale", d, mesh, (x_axis,) + yz)
    _check_split("F/scale", f, mesh, yz)
    x, w_in, w_out, ref = _ffn_arrays(b, d, f, seed)
    n0 = len(mesh.log)
    all_axes = (x_axis,) + yz
    In = ShardedArray.from_full(mesh, x, P(None, all_axes), "In", "BD")
    Win = ShardedArray.from_full(mesh, w_in, P(x_axis, yz), "W_in", "DF")
    Wout = ShardedArray.from_full(mesh, w_out, P(yz, x_axis), "W_out", "FD")
    In2 = In.redistribute(P(None, x_axis), label="AG_YZ In")
    Tmp = matmul(In2, Win, "Tmp")
    Tmp2 = Tmp.redistribute(P(None, yz), label="AR_X Tmp")
    Tmp2.blocks = mesh.each(_silu, Tmp2.blocks)
    Out = matmul(Tmp2, Wout, "Out")
    Out2 = Out.redistribute(P(None, all_axes), label="RS_YZ Out")
    err = float(np.max(np.abs(Out2.full() - ref)))
    W_x, W_yz = book_W(mesh, x_axis), book_W(mesh, yz)
    M_x, M_yz = book_M(mesh, x_axis), book_M(mesh, yz)
    ag = BF16 * B * D / X / (W_yz * M_yz)
    ar = 2 * BF16 * B * F / YZ / (W_x * M_x)
    recs = mesh.log[n0:]
    rows = [_row(f"AG_{recs[0].axis_name}  {In2.steps[-1]}", recs[0], ag, "2BD/(X·W·M_YZ)"),
            _row(f"AR_{recs[1].axis_name}  {Tmp2.steps[-1]}", recs[1], ar, "4BF/(YZ·W·M_X)"),
            _row(f"RS_{recs[2].axis_name}  {Out2.steps[-1]}", recs[2], ag, "2BD/(X·W·M_YZ)")]
    N = mesh.n
    t_1d = 4 * BF16 / 2 * B * D / (3 * book_W(mesh, x_axis))
    notes = [f"T_2D = 2BD/(X·W) + 4BF/(YZ·W) = {(2 * ag + ar) * 1e6:.1f} µs (B {B}, D {D}, F {F}, bf16, "
             f"W {W_x / 1e9:.0f} GB/s; M_X {M_x}, M_YZ {M_yz})",
             f"1-D weight-stationary over three axes: 4BD/(3W) = {t_1d * 1e6:.1f} µs; 2-D wins past "
             f"N = 32·(F/D)·(3/4)² = {crossover_2d(F / D):.0f} chips (this mesh: N = {N})"]
    res = Result("2d-ws-ffn", mesh, rows, err, 2 * ag + ar, "2BD/(X·W) + 4BF/(YZ·W)", notes)
    res.axes = all_axes
    res.tensors = {"weights": {"W_in": Win, "W_out": Wout}, "activations": {"In": In2, "Tmp": Tmp2, "Out": Out2},
                   "KV cache": {}}
    res.memory = memory_per_device(mesh, res.tensors)
    return res


def ws1d_ffn(mesh, axes=None, B=2048, D=8192, F=32768, scale=128, seed=0):
    """
    1-D weight-stationary (Megatron) FFN for inference over every given axis, the baseline of the
    book's 2-D question: In[B, D_XYZ] → AllGather_XYZ → In[B, D] · W_in[D, F_XYZ] → SiLU →
    · W_out[F_XYZ, D] → Out[B, D]{U_XYZ} → ReduceScatter_XYZ → Out[B, D_XYZ]. Published:
    T = 4BD/(n_axes·W) (the book: 4BD/(3W) on a 3-D torus).
    """
    axes = mesh.axis_names if axes is None else axes
    axes = mesh.axis(tuple(axes.split(",")) if isinstance(axes, str) else axes)
    b, d, f = _dims(B, D, F, scale)
    N = mesh.size(axes)
    _check_split("D/scale", d, mesh, axes)
    _check_split("F/scale", f, mesh, axes)
    x, w_in, w_out, ref = _ffn_arrays(b, d, f, seed)
    n0 = len(mesh.log)
    In = ShardedArray.from_full(mesh, x, P(None, axes), "In", "BD")
    Win = ShardedArray.from_full(mesh, w_in, P(None, axes), "W_in", "DF")
    Wout = ShardedArray.from_full(mesh, w_out, P(axes, None), "W_out", "FD")
    In2 = In.redistribute(P(), label="AG In")
    Tmp = matmul(In2, Win, "Tmp")
    Tmp.blocks = mesh.each(_silu, Tmp.blocks)
    Out = matmul(Tmp, Wout, "Out")
    Out2 = Out.redistribute(P(None, axes), label="RS Out")
    err = float(np.max(np.abs(Out2.full() - ref)))
    W, M = book_W(mesh, axes), book_M(mesh, axes)
    one = BF16 * B * D / (W * M)
    recs = mesh.log[n0:]
    rows = [_row(f"AG_{recs[0].axis_name}  {In2.steps[-1]}", recs[0], one, "2BD/(W·n_axes)"),
            _row(f"RS_{recs[1].axis_name}  {Out2.steps[-1]}", recs[1], one, "2BD/(W·n_axes)")]
    notes = [f"T_1D = 4BD/(n_axes·W) = {2 * one * 1e6:.1f} µs (B {B}, D {D}, bf16, W {W / 1e9:.0f} GB/s, "
             f"n_axes {M}); 2-D weight-stationary wins past N = 32·(F/D)·(3/4)² = {crossover_2d(F / D):.0f} "
             f"(this mesh: N = {N})"]
    res = Result("1d-ws-ffn", mesh, rows, err, 2 * one, "4BD/(n_axes·W)", notes)
    res.axes = axes
    res.tensors = {"weights": {"W_in": Win, "W_out": Wout}, "activations": {"In": In2, "Tmp": Tmp, "Out": Out2},
                   "KV cache": {}}
    res.memory = memory_per_device(mesh, res.tensors)
    return res


# ---------------------------------------------------------------------------------------
# The book's AllGather on a torus, over one and over two axes
# ---------------------------------------------------------------------------------------
def torus_all_gather(mesh, axes=None, I=4096, J=8192, scale=64, seed=0):
    """
    The book's AllGather of one array V over one, two, … of the given axes (sharding chapter):
    A[I_X, J] → A[I, J], A[I_XY, J] → A[I, J], A[I_XYZ, J] → A[I, J]; T = V/W over one axis and
    V/(W·n_axes) over several (the gather uses every axis's links at once), V the array's bytes.
    axes: the axes to gather over, in order (default every mesh axis).
    """
    if axes is None:
        axes = mesh.axis_names
    axes = mesh.axis(tuple(axes.split(",")) if isinstance(axes, str) else axes)
    if len(axes) < 2:
        raise MeshError("the all-gather over several axes needs at least two mesh axes", "needs-axes", need=2,
                        axes=mesh.axis_names)
    i, j = _scaled(scale, I=I, J=J)
    _check_split("I/scale", i, mesh, axes)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((i, j))
    V = BF16 * I * J
    n0 = len(mesh.log)
    rows, err, total, gathered = [], 0.0, 0.0, None
    for k in range(1, len(axes) + 1):
        over = axes[:k]
        A = ShardedArray.from_full(mesh, a, P(over, None), "A", "IJ")
        gathered = A.redistribute(P(), label=f"AG_{''.join(over)} A")
        err = max(err, max(float(np.max(np.abs(blk - a))) for blk in mesh.gathered(gathered.blocks)))
        rec = mesh.log[-1]
        book = V / (book_W(mesh, over) * book_M(mesh, over))
        total += book
        rows.append(_row(f"AG_{rec.axis_name}  {gathered.steps[-1]}", rec, book,
                         "V/(W·M)" if k == 1 else f"V/(W·n_axes), n_axes = {book_M(mesh, over)}"))
    recs = mesh.log[n0:]
    notes = [f"V = {V / 2 ** 20:.0f} MiB (I {I}, J {J}, bf16); over "
             + ", ".join(f"{len(r.axis)} axes it takes {r.time / recs[0].time:.2f}×" for r in recs[1:])
             + " the time over one (the book, on a torus: 1/n_axes)"]
    res = Result("torus-all-gather", mesh, rows, err, total, "V/(W·n_axes)", notes)
    res.axes = axes
    res.tensors = {"activations": {"A": gathered}, "weights": {}, "KV cache": {}}
    res.memory = memory_per_device(mesh, res.tensors)
    return res


# ---------------------------------------------------------------------------------------
# DP × TP: the lecture's tensor-parallel Transformer forward, one TP group per DP replica
# ---------------------------------------------------------------------------------------
def dp_tp_forward(mesh, dp_axis=None, tp_axis=None, batch=4, seq=8, seed=0, scale=1):
    """
    The lecture's Megatron forward (tensor_parallel.tp_layers) on a DP × TP mesh: the batch is
    sharded over dp_axis, the weights over tp_axis (shard_params_tp); every layer's two
    all-reduces run over tp_axis in every DP replica at once, the logits are all-gathered over
    tp_axis. No DP communication in a forward (the book: DP's bytes are the backward's 8DF).
    Published per all-reduce: the ring's 2(g−1)(α + S/(gβ)) (Patarasuk & Yuan 2009), per all-gather
    (g−1)(α + S/(gβ)). Logits equal one device's forward.
    """
    from ..tensor_parallel import _advance, shard_params_tp, tp_caches, tp_layers
    from ..transformer_lab import TINY, forward, init_params, rope_angles

    cfg = TINY
    dp_axis, tp_axis = _two_axes(mesh, dp_axis, tp_axis)
    X, Y = mesh.size(dp_axis), mesh.size(tp_axis)
    _check_split("batch", batch, mesh, dp_axis)
    if cfg.n_heads % Y:
        raise MeshError(f"{cfg.n_heads} heads do not split over {Y} devices of axis {tp_axis}", "not-split",
                        dim="heads", length=cfg.n_heads, axes=(tp_axis,), sizes=(Y,))
    params = init_params(cfg, seed=seed)
    tokens = np.random.default_rng(seed).integers(0, cfg.vocab, size=(batch, seq))
    ref = forward(params, cfg, tokens)
    dev_params = shard_params_tp(params, cfg, Y)
    di, ti = mesh.axis_names.index(dp_axis), mesh.axis_names.index(tp_axis)
    cos, sin = rope_angles(np.arange(seq), cfg.d_head, cfg.rope_theta)
    parts = np.split(tokens, X, axis=0)
    mine = range(mesh.n)
    caches = mesh.each(lambda p: tp_caches(cfg, [dev_params[mesh.coord(p)[ti]]], batch // X)[0], mine)
    gens = mesh.each(lambda p: tp_layers(dev_params[mesh.coord(p)[ti]], cfg, parts[mesh.coord(p)[di]], cos, sin, 0,
                                         caches[p]), mine)
    n0 = len(mesh.log)
    # every device asks for the same all-reduce at once: run it over the TP axis in every replica
    steps = mesh.each(lambda g: _advance(g, None), gens)
    while not mesh.first(steps)[0]:
        label = mesh.first(steps)[1][0]
        summed = mesh.collective("all-reduce", tp_axis, mesh.each(lambda st: st[1][1], steps), label=label)
        steps = mesh.each(_advance, gens, summed)
    hs = mesh.each(lambda st: st[1], steps)
    local = mesh.each(lambda p, h: h @ dev_params[mesh.coord(p)[ti]]["lm_head"], mine, hs)
    logits = mesh.collective("all-gather", tp_axis, local, label="logits", dim=2)
    full = _dp_concat(mesh, mesh.gathered(logits), di, X)
    err = float(np.max(np.abs(full[..., :cfg.vocab] - ref)))
    rows = []
    for r in mesh.log[n0:]:
        rows.append(_row(f"{'AR' if r.op == 'all-reduce' else 'AG'}_{r.axis_name}  {r.label}", r, r.form,
                         r.form_text))
    kv = {"K": mesh.each(lambda c: c.k, caches), "V": mesh.each(lambda c: c.v, caches)}
    weights = {"TP shard": mesh.each(lambda p: np.concatenate([np.ravel(v) for _, v in
                                                               _flat(dev_params[mesh.coord(p)[ti]])]), mine)}
    res = Result("dp-tp-forward", mesh, rows, err, sum(r.published for r in rows), "ring: 2(g−1)(α + S/(gβ)) per AR",
                 [f"{cfg.n_layers} layers × 2 all-reduces over {tp_axis} + 1 all-gather of the logits, in all {X} DP "
                  f"replicas at once; logits max |Δ| vs one device {err:.1e}"])
    res.tensors = {"weights": weights, "KV cache": kv, "activations": {"logits": logits}}
    res.axes = (dp_axis, tp_axis)
    res.memory = memory_per_device(mesh, res.tensors)
    return res


def _flat(p):
    out = []
    for k, v in p.items():
        if k == "layers":
            for lp in v:
                out += [(name, w) for name, w in lp.items()]
        elif isinstance(v, np.ndarray):
            out.append((k, v))
    return out


def _dp_concat(mesh, arrays, di, X):
    """The DP replicas' outputs along the batch: the array at coordinate 0 on every axis but dp."""
    rows = []
    for x in range(X):
        coord = [0] * len(mesh.shape)
        coord[di] = x
        rows.append(arrays[mesh.position(tuple(coord))])
    return np.concatenate(rows, axis=0)


register(Program(
    "dp-tp-forward",
    {"en": "DP × TP Transformer forward (logits equal one device's)",
     "zh": "DP × TP Transformer 前向（logits 与单卡一致）"},
    {"en": "The lecture's Megatron forward with the batch sharded over the DP axis and the weights over the TP "
           "axis: two all-reduces per layer and one all-gather of the logits, in every DP replica at once.",
     "zh": "讲义的 Megatron 前向：批次沿 DP 轴切分、权重沿 TP 轴切分；每层两次 all-reduce，最后一次 logits 的 "
           "all-gather，所有 DP 副本同时进行。"},
    dp_tp_forward, (("X", 2), ("Y", 4)), None, published="ring: 2(g−1)(α + S/(gβ)) per AR"))
register(Program(
    "fsdp-tp-layer",
    {"en": "FSDP (X) × TP (Y) forward of one MLP layer", "zh": "FSDP（X）× TP（Y）：一层 MLP 的前向"},
    {"en": "The book's mixed FSDP and tensor parallelism: the weights are all-gathered over X, the activations "
           "all-gathered and reduce-scattered over Y.",
     "zh": "书中 FSDP 与张量并行的混合：权重沿 X all-gather，激活沿 Y all-gather 与 reduce-scatter。"},
    fsdp_tp_layer, (("X", 2), ("Y", 8)), "dgx-h100", published="4DF/(Y·W·M_X) + 4BD/(X·W·M_Y)"))
register(Program(
    "2d-ws-ffn",
    {"en": "2-D weight-stationary FFN (inference)", "zh": "二维权重驻留 FFN（推理）"},
    {"en": "Pope et al.'s 2-D weight-stationary layout: AG_YZ → W_in → AR_X → W_out → RS_YZ.",
     "zh": "Pope 等人的二维权重驻留布局：AG_YZ → W_in → AR_X → W_out → RS_YZ。"},
    ws2d_ffn, (("X", 4), ("Y", 4), ("Z", 4)), "tpu-v4-4x4x4", published="2BD/(X·W) + 4BF/(YZ·W)"))
register(Program(
    "1d-ws-ffn",
    {"en": "1-D weight-stationary FFN (inference), the baseline of 2-D", "zh": "一维权重驻留 FFN（推理），二维的对照"},
    {"en": "Megatron's 1-D layout over every axis: AG → W_in → W_out → RS.",
     "zh": "Megatron 的一维布局，覆盖所有轴：AG → W_in → W_out → RS。"},
    ws1d_ffn, (("X", 4), ("Y", 4), ("Z", 4)), "tpu-v4-4x4x4", published="4BD/(n_axes·W)"))
register(Program(
    "torus-all-gather",
    {"en": "the book's all-gather on a torus, over one, two and three axes",
     "zh": "环面上的 all-gather：一条、两条与三条轴"},
    {"en": "One array all-gathered over one axis, then two, then three: on a torus more axes take less time.",
     "zh": "同一个数组依次沿一条、两条、三条轴 all-gather：在环面上轴越多越快。"},
    torus_all_gather, (("X", 4), ("Y", 4), ("Z", 4)), "tpu-v4-4x4x4", published="V/(W·n_axes)"))


# ---------------------------------------------------------------------------------------
# The rules themselves: every redistribution, the book's four matmul cases, a shard_map function
# (small programs, each step checked against numpy; they run the same on MPI ranks)
# ---------------------------------------------------------------------------------------
_SHORT = {"all-gather": "AG", "reduce-scatter": "RS", "all-reduce": "AR", "all-to-all": "A2A", "ppermute": "PP"}


def _rows_of(recs, steps=()):
    """One row per collective, published = the plan's closed form of one group alone."""
    by = {id(s.collective): s for s in steps if s.collective is not None}
    return [_row(f"{_SHORT.get(r.op, r.op)}_{r.axis_name}  {by[id(r)] if id(r) in by else r.label}", r, r.form,
                 r.form_text) for r in recs]


def parse_spec(mesh, text, ndim=2):
    """
    A layout written in the book's notation, for an array of rank ndim: "A[I_X, J_Y]", "A[I_XY, J]",
    "U[I, J]{U_Y}", "A[I_{dp,tp}, J]" (the name may be left out: "I_X, J_Y"; a sequence of the
    entries reads as they joined by commas) → (P(...), the axes of a pending sum). MeshError:
    an axis the mesh does not have ("unknown-axis"), more entries than ndim ("spec-too-long").
    """
    from .placement import layout_from_spec

    if not isinstance(text, str):
        text = ",".join(map(str, text))
    t = text.replace(" ", "")
    partial = ()
    if t.endswith("}") and "{U_" in t:
        t, sub = t[:t.rindex("{U_")], t[t.rindex("{U_") + 3:-1]
        partial = _axes_of(mesh, sub)
    if "[" in t and t.endswith("]"):
        t = t[t.index("[") + 1:-1]
    entries = []
    for dim in _top_level_split(t):
        _, us, sub = dim.partition("_")
        entries.append(_axes_of(mesh, sub) if us else None)
    spec = P(*entries)
    try:
        layout_from_spec(mesh, spec, ndim, partial=partial)  # checks: rank, axes used once
    except MeshError as e:
        if e.kind != "spec-too-long":
            raise
        raise MeshError(f"the layout {text} has {len(entries)} entries but the array has only {ndim} dimensions",
                        "spec-too-long", spec=text, entries=len(entries), ndim=ndim) from None
    return spec, partial


def _top_level_split(t):
    """'I_{dp,tp},J' -> ['I_{dp,tp}', 'J'] (commas inside braces stay)."""
    out, depth, cur = [], 0, ""
    for ch in t:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur] if cur or out else []


def _axes_of(mesh, sub):
    """A subscript's mesh axes: "{dp,tp}" by name, else the mesh's names read greedily ("XY" -> X, Y)."""
    if sub.startswith("{") and sub.endswith("}"):
        return mesh.axis(tuple(sub[1:-1].split(",")))
    names, rest = [], sub
    while rest:
        hit = next((a for a in sorted(mesh.axis_names, key=len, reverse=True) if rest.startswith(a)), None)
        if hit is None:
            raise MeshError(f"the mesh has no axis {rest!r}; its axes are {', '.join(mesh.axis_names)}",
                            "unknown-axis", axis=rest, axes=mesh.axis_names)
        names.append(hit)
        rest = rest[len(hit):]
    return mesh.axis(tuple(names))


def redistribute(mesh, source=None, target=None, rules=0, I=4096, J=8192, scale=64, seed=0):
    """
    A[I, J] redistributed from `source` to `target`, both in the book's notation ("A[I_X, J_Y]",
    "A[I_X, J]", "A[I, J]{U_Y}"); ShardedArray.redistribute picks the collectives by the rules
    (Shard → Replicate all-gather, Partial → Replicate all-reduce, Partial → Shard reduce-scatter,
    Shard(i) → Shard(j) all-to-all; Shard → Partial refused). Default: the book's first one,
    A[I_X, J_Y] → A[I_X, J], an all-gather over the mesh's last axis (every other axis keeps its
    shard of I). rules=1: every rule in turn on the mesh's first two axes (_every_rule). Each
    device's block is checked against numpy's slice of A. Published: each collective's closed form
    for one group alone (Mesh.plan's).
    """
    if rules:
        if source is not None or target is not None:
            raise MeshError("rules=1 runs every rule from its own layouts; leave source and target out",
                            "bad-parameter", program="redistribute", param="source", value=source,
                            expected=("absent with", "rules=1"))
        return _every_rule(mesh, I, J, scale, seed)
    from .placement import layout_from_spec

    last = mesh.axis_names[-1]
    other = tuple(a for a in mesh.axis_names if a != last) or None
    src, src_u = parse_spec(mesh, source) if source is not None else (P(other, last), ())
    tgt, tgt_u = parse_spec(mesh, target) if target is not None else (P(other, None), ())
    i, j = _scaled(scale, I=I, J=J)
    a = np.random.default_rng(seed).standard_normal((i, j))
    n0 = len(mesh.log)
    A = ShardedArray.from_full(mesh, a, src, "A", "IJ", partial=src_u)
    B = A.redistribute(layout_from_spec(mesh, tgt, 2, partial=tgt_u), label="A")
    if tgt_u:  # a pending sum: its terms differ from numpy's slices, their sum does not
        err = float(np.max(np.abs(B.full() - a)))
    else:  # each device's block, against numpy's slice of A
        ref = ShardedArray.from_full(mesh, a, tgt, "A", "IJ")
        err = max(float(np.max(np.abs(b - r))) for b, r in zip(B.blocks, ref.blocks)
                  if b is not None)  # on MPI ranks each rank holds its own block only
    recs = mesh.log[n0:]
    res = Result("redistribute", mesh, _rows_of(recs, B.steps), err, sum(r.form for r in recs),
                 "each collective's closed form", [f"{A} → {B}"] + [str(s) for s in B.steps])
    res.axes = mesh.axis_names
    res.tensors = {"activations": {"A": B}, "weights": {}, "KV cache": {}}
    res.memory = memory_per_device(mesh, res.tensors)
    return res


def _every_rule(mesh, I, J, scale, seed):
    """
    Every rule of ShardedArray.redistribute on the mesh's first two axes X, Y, each result against numpy:
        A[I_X, J_Y]   → A[I_X, J]       all-gather over Y
        A[I_X, J]     → A[I, J]         all-gather over X
        A[I, J]       → A[I_XY, J]      each device keeps its block (no message)
        A[I_XY, J]    → A[I, J]         all-gather over the tuple axis XY (X major)
        A[I_X, J_Y]   → A[I_XY, J]      all-to-all over Y
        U[I, J]{U_Y}  → U[I, J]         all-reduce over Y (U's terms differ along Y)
        U[I, J]{U_Y}  → U[I, J_Y]       reduce-scatter over Y
        V[I, J]{U_XY} → V[I_XY, J]      reduce-scatter over XY at once (the book's RS_XY)
        A[I, J]       → A[I, J]{U_X}    the first device along X keeps it (no message)
    """
    from .placement import layout_from_spec

    x_axis, y_axis = _two_axes(mesh, None, None)
    i, j = _scaled(scale, I=I, J=J)
    _check_split("I/scale", i, mesh, (x_axis, y_axis))
    _check_split("J/scale", j, mesh, (x_axis, y_axis))
    XY = mesh.size((x_axis, y_axis))
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((i, j))
    yi = mesh.axis_names.index(y_axis)
    Y = mesh.size(y_axis)

    def term(k):  # the k-th term of a pending sum, the same on every rank
        return np.random.default_rng((seed, 1, k)).standard_normal((i, j))

    n0 = len(mesh.log)
    err, steps, out = 0.0, [], {}

    def check(R, want, key):
        nonlocal err
        err = max(err, float(np.max(np.abs(R.full() - want))))
        steps.extend(R.steps[-1:])
        out[key] = R

    xy = (x_axis, y_axis)
    A = ShardedArray.from_full(mesh, a, P(x_axis, y_axis), "A", "IJ")
    check(A.redistribute(P(x_axis, None), label=f"AG_{y_axis} A"), a, "A[I_X, J]")
    check(out["A[I_X, J]"].redistribute(P(), label=f"AG_{x_axis} A"), a, "A[I, J]")
    check(out["A[I, J]"].redistribute(P(xy, None), label="keep A"), a, "A[I_XY, J]")
    check(out["A[I_XY, J]"].redistribute(P(), label=f"AG_{_name_of(xy)} A"), a, "A[I, J] again")
    check(A.redistribute(P(xy, None), label=f"A2A_{y_axis} A"), a, "A[I_XY, J] by all-to-all")
    u_lay = layout_from_spec(mesh, P(), 2, partial=(y_axis,))
    U = ShardedArray.from_blocks(mesh, mesh.each(lambda p: term(mesh.coord(p)[yi]), range(mesh.n)), u_lay, (i, j),
                                 "U", "IJ")
    u = sum(term(k) for k in range(Y))
    check(U.redistribute(P(), label=f"AR_{y_axis} U"), u, "U[I, J]")
    check(U.redistribute(P(None, y_axis), label=f"RS_{y_axis} U"), u, "U[I, J_Y]")
    v_lay = layout_from_spec(mesh, P(), 2, partial=xy)
    V = ShardedArray.from_blocks(mesh, mesh.each(lambda p: term(1000 + p), range(mesh.n)), v_lay, (i, j), "V", "IJ")
    v = sum(term(1000 + p) for p in range(mesh.n))  # every other axis has size 1 here, or repeats the sum
    if XY == mesh.n:
        check(V.redistribute(P(xy, None), label=f"RS_{_name_of(xy)} V"), v, "V[I_XY, J]")
    R = out["A[I, J]"].redistribute(layout_from_spec(mesh, P(), 2, partial=(x_axis,)), label="A{U_X}")
    check(R, a, "A{U_X}")
    res = Result("redistribute", mesh, _rows_of(mesh.log[n0:], steps), err,
                 sum(r.form for r in mesh.log[n0:]), "each collective's closed form", [str(s) for s in steps])
    res.axes = xy
    res.tensors = {"activations": out, "weights": {}, "KV cache": {}}
    res.memory = memory_per_device(mesh, res.tensors)
    return res


def _name_of(axes):
    return "".join(axes) if all(len(a) == 1 for a in axes) else ",".join(axes)


MATMUL_CASES = {  # the book's four cases on axes (X, Y): A's spec, B's spec, as written with X, Y
    1: (("X", None), (None, "Y")),  # A[I_X, J] · B[J, K_Y]: nothing moves
    2: (("X", "Y"), (None, None)),  # A[I_X, J_Y] · B[J, K]: all-gather A over Y first
    3: (("X", "Y"), ("Y", None)),  # A[I_X, J_Y] · B[J_Y, K] → C[I_X, K]{U_Y}, then reduce-scatter over Y
    4: (("X", None), (None, "X")),  # A[I_X, J] · B[J, K_X]: all-gather one operand over X first
}


def matmul_program(mesh, case=3, a=None, b=None, x_axis=None, y_axis=None, I=4096, J=4096, K=4096, scale=64, seed=0):
    """
    The book's sharded matmul C = A · B (sharded matmuls chapter) on two mesh axes X, Y (default
    the mesh's first two), against numpy: case 1 nothing moves; case 2 all-gathers A's contracting
    J over Y; case 3 leaves C{U_Y}, reduce-scattered to C[I_X, K_Y]; case 4 all-gathers one operand
    over X. case="all": the four in turn. a, b: A's and B's layouts in the book's notation
    ("A[I_X, J_Y]", "B[J_Y, K]"), both or neither, instead of a case (matmul says which case
    applied). A pending sum left in C is reduce-scattered over its axes. Published: each
    collective's closed form for one group alone (Mesh.plan's).
    """
    if (a is None) != (b is None):
        raise MeshError("give both a and b (A's and B's layouts), or neither", "bad-parameter", program="matmul",
                        param="b" if b is None else "a", value=None, expected=("with", "a" if b is None else "b"))
    x_axis, y_axis = _two_axes(mesh, x_axis, y_axis)
    i, j, k = _scaled(scale, I=I, J=J, K=K)
    rng = np.random.default_rng(seed)
    xa, xb = rng.standard_normal((i, j)), rng.standard_normal((j, k))
    ren = {"X": x_axis, "Y": y_axis, None: None}
    if a is not None:
        specs = {"given": (parse_spec(mesh, a)[0], parse_spec(mesh, b)[0])}
    else:
        specs = {c: (P(*(ren[e] for e in sa)), P(*(ren[e] for e in sb)))
                 for c, (sa, sb) in MATMUL_CASES.items() if case in ("all", c)}
    n0 = len(mesh.log)
    err, steps, tensors, notes = 0.0, [], {}, []
    for c, (sa, sb) in specs.items():
        A = ShardedArray.from_full(mesh, xa, sa, "A", "IJ")
        B = ShardedArray.from_full(mesh, xb, sb, "B", "JK")
        C = matmul(A, B, "C", label=f"case {c}" if len(specs) > 1 else None)
        steps += list(C.how.steps)
        notes.append(C.how.text)
        if C.partial:
            rs = f"case {c}: RS C" if len(specs) > 1 else f"RS_{_name_of(C.partial)} C"
            C = C.redistribute(P(C.layout.dims[0] or None, C.partial), label=rs)
            steps += list(C.steps[-1:])
        err = max(err, float(np.max(np.abs(C.full() - xa @ xb))))
        tensors.update({f"C (case {c})": C} if len(specs) > 1 else {"A": A, "B": B, "C": C})
    recs = mesh.log[n0:]
    res = Result("matmul", mesh, _rows_of(recs, steps), err, sum(r.form for r in recs),
                 "each collective's closed form", notes)
    res.axes = (x_axis, y_axis)
    res.tensors = {"activations": tensors, "weights": {}, "KV cache": {}}
    res.memory = memory_per_device(mesh, res.tensors)
    return res


def shard_map_program(mesh, x_axis=None, y_axis=None, B=1024, D=1024, F=1024, scale=32, seed=0):
    """
    A per-device function in shard_map style calling every collective by axis name, run by
    mesh.run (x: X[B_X, D_Y], w: W[D_Y, F]):
        y = psum(x @ w, Y)                       → (x·w)[B_X, F]
        s = psum_scatter(y, Y, dim=1) / |Y|       → (x·w)[B_X, F_Y]
        t = all_to_all(s, Y, split_dim=0, concat_dim=1)   → (x·w)[B_XY, F]
        u = all_gather(t, Y, dim=0)               → (x·w)[B_X, F]
        v = ppermute(u, X, i → i+1)               → roll(x·w, B/X rows)[B_X, F]
    and axis_index over (X, Y) as a second output: its gathered value is 0 … |XY|−1.
    Published: each collective's closed form for one group alone (Mesh.plan's).
    """
    from .shard_map import all_gather, all_to_all, axis_index, ppermute, psum, psum_scatter

    x_axis, y_axis = _two_axes(mesh, x_axis, y_axis)
    b, d, f = _dims(B, D, F, scale)
    X, Y = mesh.size(x_axis), mesh.size(y_axis)
    _check_split("B/scale", b, mesh, (x_axis, y_axis))
    _check_split("D/scale", d, mesh, y_axis)
    _check_split("F/scale", f, mesh, y_axis)
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((b, d)), rng.standard_normal((d, f)) / d ** .5

    def per_device(xb, wb):
        y = psum(xb @ wb, y_axis)
        s = psum_scatter(y, y_axis, dim=1) / Y
        t = all_to_all(s, y_axis, split_dim=0, concat_dim=1)
        u = all_gather(t, y_axis, dim=0)
        v = ppermute(u, x_axis, [(q, (q + 1) % X) for q in range(X)])
        return v, np.full((1, 1), float(axis_index((x_axis, y_axis))))

    n0 = len(mesh.log)
    V, idx = mesh.run(per_device, (P(x_axis, y_axis), P(y_axis, None)),
                      (P(x_axis, None), P((x_axis, y_axis), None)), label="shard_map")(x, w)
    want = np.roll(x @ w, b // X, axis=0)
    err = max(float(np.max(np.abs(V.full() - want))),
              float(np.max(np.abs(idx.full().ravel() - np.arange(X * Y)))))
    recs = mesh.log[n0:]
    fn = {"all-reduce": "psum", "reduce-scatter": "psum_scatter", "all-gather": "all_gather",
          "all-to-all": "all_to_all", "ppermute": "ppermute"}
    rows = [_row(f"{_SHORT[r.op]}_{r.axis_name}  {fn[r.op]}(…, {r.axis_name!r}) in {r.label}", r, r.form, r.form_text)
            for r in recs]
    res = Result("shard-map", mesh, rows, err, sum(r.form for r in recs), "each collective's closed form",
                 ["psum → psum_scatter → all_to_all → all_gather over " + y_axis + ", ppermute over " + x_axis])
    res.axes = (x_axis, y_axis)
    res.tensors = {"activations": {"v": V, "axis_index": idx}, "weights": {}, "KV cache": {}}
    res.memory = memory_per_device(mesh, res.tensors)
    return res


register(Program(
    "redistribute",
    {"en": "redistribute A: from one layout to another (the book's rules)",
     "zh": "重新分布 A：从一种布局到另一种（书中的规则）"},
    {"en": "A[I, J] moved from the source layout to the target, e.g. A[I_X, J_Y] → A[I_X, J] (an all-gather over "
           "Y); rules=1 runs every rule: all-gather, all-reduce, reduce-scatter, all-to-all and the local ones.",
     "zh": "把 A[I, J] 从源布局变为目标布局，例如 A[I_X, J_Y] → A[I_X, J]（沿 Y 的 all-gather）；rules=1 依次运行"
           "全部规则：all-gather、all-reduce、reduce-scatter、all-to-all 与本地变换。"},
    redistribute, params=params_of(redistribute, rules=(0, 1)), example="source=A[I_X, J_Y] target=A[I_XY, J]"))
register(Program(
    "matmul",
    {"en": "the book's sharded matmul on two axes (cases 1–4)", "zh": "两条轴上的分片矩阵乘（四种情形）"},
    {"en": "C = A · B with A and B sharded as one of the book's four cases (case=all: all four), or as the "
           "layouts a and b say; C equals numpy's A @ B.",
     "zh": "C = A · B，A 与 B 按书中四种情形之一分片（case=all：四种全部），或按参数 a、b 给出的布局；"
           "C 与 numpy 的 A @ B 相等。"},
    matmul_program, params=params_of(matmul_program, case=(1, 2, 3, 4, "all")), example="case=2"))
register(Program(
    "shard-map",
    {"en": "a per-device function in shard_map style: every collective by axis name",
     "zh": "shard_map 风格的逐设备函数：按轴名调用每种集合通信"},
    {"en": "One function run on every device by mesh.run: psum, psum_scatter, all_to_all and all_gather over Y, "
           "ppermute over X.",
     "zh": "mesh.run 在每个设备上运行同一个函数：沿 Y 的 psum、psum_scatter、all_to_all、all_gather，"
           "沿 X 的 ppermute。"},
    shard_map_program))
