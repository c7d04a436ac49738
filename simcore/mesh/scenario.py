"""
The mesh scenario the app opens (`shard-lab --scenario mesh --mesh X=2,Y=4 --program …`): a
registered program by name on a mesh written as text, over a machine; and the two programs the app
teaches first, a redistribution and the book's sharded matmul, registered beside the engine's.
"""

from __future__ import annotations

import numpy as np

from .cli import parse_mesh as parse
from .errors import MeshError
from .placement import P
from .programs import PROGRAMS, Program, Result, _row, memory_per_device, register, run_program
from .sharded import ShardedArray, matmul


def parse_mesh(text) -> dict:
    """'X=2,Y=4' -> {'X': 2, 'Y': 4} (the mesh CLI's reader), or a ValueError with one sentence."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a mesh is axes and sizes like X=2,Y=4")
    return parse(text.replace(" ", ""))


def _redistribute_program(mesh, axis=None, I=4096, J=8192, scale=64, seed=0):
    """
    The book's first redistribution: A[I_X, J_Y] → A[I_X, J], an all-gather over `axis` (default
    the mesh's last axis) of the dimension it shards; every other axis keeps its shard. Published:
    the ring's (g−1)(α + S/(gβ)) of one group alone (Mesh.plan's closed form).
    """
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
    res.memory = memory_per_device(mesh, res.tensors)
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
    res.memory = memory_per_device(mesh, res.tensors)
    return res


def mesh_programs() -> dict:
    """The engine's registered mesh programs (simcore.mesh.programs.PROGRAMS), with the two the app
    teaches first — a redistribution and the book's 2-D matmul — registered when the engine has
    none of that name."""
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
    programs = mesh_programs()
    if program not in programs:
        raise ValueError(f"no mesh program {program!r}; choose one of {', '.join(programs)}")
    return run_program(program, parse_mesh(mesh_text), machine or None, **params)
