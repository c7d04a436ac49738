"""
Run one collective the way the app and the command line show it: n devices, S bytes, one
algorithm. The arrays are real (a few float64 elements per chunk, so a picture can show
them) and `byte_scale` times them as if they were S bytes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .algorithms import check_algo_on, op_record
from .comm_sim import Comm
from .links import LINKS, NVLINK4, LinkSpec
from .topology import switch
from .trace import Trace

ELEMS_PER_CHUNK = 4  # elements each chunk really holds; timing uses byte_scale


def demo_values(seed: int, shape, decimals: int = 3) -> np.ndarray:
    """
    Reproducible example values, uniform in [-1, 1] and rounded to `decimals` (short enough to
    read on a slide): the splitmix64 hash of (seed, index). Not numpy.random, whose first use
    costs some 15 ms of imports in the app's start for numbers nobody needs to be random.
    """
    size = math.prod(shape) if isinstance(shape, tuple) else int(shape)
    # in place, with one scratch array: the same bits as the plain expression, a third of the time
    # (a machine's demo builds millions of values; temporaries were most of that)
    x = np.arange(size, dtype=np.uint64)
    t = np.empty_like(x)
    with np.errstate(over="ignore"):  # uint64 arithmetic wraps on purpose
        x += np.uint64((seed * 0x9E3779B97F4A7C15) % 2**64)
        x *= np.uint64(0x9E3779B97F4A7C15)
        for shift, mul in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None)):
            np.right_shift(x, np.uint64(shift), out=t)
            x ^= t
            if mul is not None:
                x *= np.uint64(mul)
    np.right_shift(x, np.uint64(11), out=t)
    u = t.astype(np.float64)
    u *= 2.0**-52  # 2·[0, 1): exact, a power of two
    u -= 1.0
    return np.round(u, decimals, out=u).reshape(shape)


@dataclass(frozen=True)
class CollectiveRun:
    """The inputs, outputs and trace of one collective (S = nbytes, the full array)."""

    op: str
    algo: str
    n: int
    nbytes: float
    link: LinkSpec
    comm: Comm
    inputs: np.ndarray  # (n, L): every device's buffer before, in chunk order
    outputs: list  # what the collective returned on every device

    @property
    def trace(self) -> Trace:
        return self.comm.trace


def parse_bytes(text) -> float:
    """'1MiB', '4 KB', '512', '2.5GB' -> bytes (float). Raises ValueError on anything else."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgGtT]?i?[bB]?)\s*", str(text))
        if not m:
            raise ValueError(f"cannot read a size from {text!r} (examples: 512, 64KiB, 1MiB, 2GB)")
        unit = m.group(2).upper().rstrip("B")
        scale = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
                 "KI": 2**10, "MI": 2**20, "GI": 2**30, "TI": 2**40}.get(unit)
        if scale is None:
            raise ValueError(f"unknown unit in {text!r}")
        value = float(m.group(1)) * scale
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"a message size must be a positive number of bytes, got {text!r}")
    return value


def run_collective(op="all-gather", n=8, nbytes=2**20, algo=None, link=NVLINK4, seed=0,
                   elems_per_chunk=ELEMS_PER_CHUNK) -> CollectiveRun:
    """
    Simulate one collective on an idle switch: the op's demo (registry.Op.demo) on n devices with
    elems_per_chunk values per chunk, numbers from demo_values(seed).
    op: a registered collective ("all-gather", "reduce-scatter", "all-reduce", "all-to-all");
    algo: one of its algorithms that runs on a switch (None: the op's default, ring or direct);
    nbytes: S (Op.size: the full array, or one device's buffer for all-to-all);
    link: a LinkSpec or a LINKS key.
    """
    rec = op_record(op)
    algo = rec.default if algo is None else algo
    if isinstance(link, str):
        if link not in LINKS:
            raise ValueError(f"unknown link {link!r}; choose one of {', '.join(LINKS)}")
        link = LINKS[link]
    if not isinstance(link, LinkSpec):
        raise ValueError(f"unknown link {link!r}; choose one of {', '.join(LINKS)}")
    nbytes = parse_bytes(nbytes)
    topo = switch(n, link)
    check_algo_on(topo, op, algo)
    comm = Comm(topo, byte_scale=nbytes / (topo.n * elems_per_chunk * 8))
    inputs, outputs = rec.demo(comm, algo, lambda shape: demo_values(seed, shape), elems_per_chunk)
    return CollectiveRun(op, algo, topo.n, nbytes, link, comm, inputs, outputs)


# ---------------------------------------------------------------------------------------
# The mesh scenario: a registered mesh program on a named mesh over a machine
# ---------------------------------------------------------------------------------------
def parse_mesh(text) -> dict:
    """'X=2,Y=4' -> {'X': 2, 'Y': 4} (the mesh CLI's reader), or a ValueError with one sentence."""
    from .mesh.cli import parse_mesh as parse

    if not isinstance(text, str) or not text.strip():
        raise ValueError("a mesh is axes and sizes like X=2,Y=4")
    return parse(text.replace(" ", ""))


def _redistribute_program(mesh, axis=None, I=4096, J=8192, scale=64, seed=0):
    """
    The book's first redistribution: A[I_X, J_Y] → A[I_X, J], an all-gather over `axis` (default
    the mesh's last axis) of the dimension it shards; every other axis keeps its shard. Published:
    the ring's (g−1)(α + S/(gβ)) of one group alone (Mesh.plan's closed form).
    """
    from .mesh import P, ShardedArray
    from .mesh.errors import MeshError
    from .mesh.programs import Result, _memory, _row

    axis = mesh.axis_names[-1] if axis is None else axis
    names = mesh.axis(axis)
    other = tuple(a for a in mesh.axis_names if a not in names)
    if I % scale or J % scale:
        raise MeshError(f"I = {I} and J = {J} must be divisible by scale {scale}")
    a = np.random.default_rng(seed).standard_normal((I // scale, J // scale))
    A = ShardedArray.from_full(mesh, a, P(other or None, names), "A", "IJ")
    B = A.redistribute(P(other or None, None), label=f"AG_{''.join(names)} A")
    ref = ShardedArray.from_full(mesh, a, P(other or None, None), "A", "IJ")  # each device's block, by numpy slicing
    err = max(float(np.max(np.abs(b - r))) for b, r in zip(B.blocks, ref.blocks))
    rec = mesh.log[-1]
    rows = [_row(f"AG_{rec.axis_name}  {B.steps[-1]}", rec, rec.form, rec.form_text)]
    res = Result("redistribute", mesh, rows, err, rec.form, rec.form_text)
    res.axes = mesh.axis_names
    res.tensors = {"activations": {"A": B}, "weights": {}, "KV cache": {}}
    res.memory = _memory(mesh, res.tensors)
    return res


MATMUL_SPECS = {  # the book's four cases on a two-axis mesh (X, Y): A's spec, B's spec
    1: (("X", None), (None, "Y")),  # A[I_X, J] · B[J, K_Y]: nothing moves
    2: (("X", "Y"), (None, None)),  # A[I_X, J_Y] · B[J, K]: all-gather A over Y first
    3: (("X", "Y"), ("Y", None)),  # A[I_X, J_Y] · B[J_Y, K] → C[I_X, K]{U_Y}, reduce-scattered
    4: (("X", None), (None, "X")),  # A[I_X, J] · B[J, K_X]: all-gather one operand over X first
}


def _matmul_program(mesh, case=3, I=4096, J=4096, K=4096, scale=64, seed=0):
    """
    The book's sharded matmul C = A · B on two mesh axes (X, Y: the mesh's first and last), case
    1 … 4 (MATMUL_SPECS); case 3's pending sum C{U_Y} is reduce-scattered to C[I_X, K_Y].
    Published: each collective's closed form for one group alone (Mesh.plan's).
    """
    from .mesh import P, ShardedArray, matmul
    from .mesh.errors import MeshError
    from .mesh.programs import Result, _memory, _row

    if case not in MATMUL_SPECS:
        raise MeshError(f"the book's matmul cases are 1, 2, 3 and 4, got {case!r}")
    if len(mesh.axis_names) < 2:
        raise MeshError(f"the 2-D matmul needs two mesh axes; the mesh has {', '.join(mesh.axis_names)}")
    x, y = mesh.axis_names[0], mesh.axis_names[-1]
    ren = {"X": x, "Y": y, None: None}
    sa, sb = ([ren[e] for e in s] for s in MATMUL_SPECS[case])
    if any(v % scale for v in (I, J, K)):
        raise MeshError(f"I = {I}, J = {J} and K = {K} must be divisible by scale {scale}")
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((I // scale, J // scale)), rng.standard_normal((J // scale, K // scale))
    n0 = len(mesh.log)
    A = ShardedArray.from_full(mesh, a, P(*sa), "A", "IJ")
    B = ShardedArray.from_full(mesh, b, P(*sb), "B", "JK")
    C = matmul(A, B, "C")
    steps = list(C.how.steps)
    if C.partial:
        C2 = C.redistribute(P(C.layout.dims[0] or None, C.partial), label=f"RS_{''.join(C.partial)} C")
        steps += list(C2.steps)
    else:
        C2 = C
    err = float(np.max(np.abs(C2.full() - a @ b)))
    recs = mesh.log[n0:]
    by = {id(s.collective): s for s in steps if s.collective is not None}
    short = {"all-gather": "AG", "reduce-scatter": "RS", "all-reduce": "AR", "all-to-all": "A2A"}
    rows = [_row(f"{short.get(r.op, r.op)}_{r.axis_name}  {by[id(r)] if id(r) in by else r.label}", r, r.form,
                 r.form_text) for r in recs]
    res = Result("matmul", mesh, rows, err, sum(r.form for r in recs), "each collective's closed form",
                 [C.how.text])
    res.axes = (x, y)
    res.tensors = {"activations": {"A": A, "B": B, "C": C2}, "weights": {}, "KV cache": {}}
    res.memory = _memory(mesh, res.tensors)
    return res


def mesh_programs() -> dict:
    """The engine's registered mesh programs (simcore.mesh.programs.PROGRAMS), with the two the app
    teaches first — a redistribution and the book's 2-D matmul — registered when the engine has
    none of that name."""
    from .mesh.programs import PROGRAMS, Program, register

    if "redistribute" not in PROGRAMS:
        register(Program("redistribute", {"en": "redistribute: A[I_X, J_Y] → A[I_X, J] (all-gather over Y)",
                                          "zh": "重新分布：A[I_X, J_Y] → A[I_X, J]（沿 Y 的 all-gather）"},
                         _redistribute_program, (("X", 2), ("Y", 4)), None,
                         {"axis": None, "I": 4096, "J": 8192, "scale": 64, "seed": 0}))
    if "matmul" not in PROGRAMS:
        register(Program("matmul", {"en": "the book's sharded matmul on two axes (cases 1–4)",
                                    "zh": "两条轴上的分片矩阵乘（四种情形）"},
                         _matmul_program, (("X", 2), ("Y", 4)), None,
                         {"case": 3, "I": 4096, "J": 4096, "K": 4096, "scale": 64, "seed": 0}))
    return PROGRAMS


def run_mesh(mesh_text, program, machine=None, **params):
    """Run a registered mesh program on the mesh 'X=2,Y=4' over `machine` (a preset's key, or
    None/"" for one NVLink 4 switch): its simcore.mesh.programs.Result. ValueError: one sentence."""
    from .mesh.programs import run_program

    programs = mesh_programs()
    if program not in programs:
        raise ValueError(f"no mesh program {program!r}; choose one of {', '.join(programs)}")
    return run_program(program, parse_mesh(mesh_text), machine or None, **params)
