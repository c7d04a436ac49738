"""
The mesh scenario the app opens (`shard-lab --scenario mesh --mesh X=2,Y=4 --program …`): a
registered program (simcore.mesh.programs.PROGRAMS, the one registry the CLI and MPI read too)
by name on a mesh written as text, over a machine.
"""

from __future__ import annotations

from .cli import parse_mesh as parse
from .errors import MeshError
from .programs import get_program, run_program


def parse_mesh(text) -> dict:
    """'X=2,Y=4' -> {'X': 2, 'Y': 4} (the mesh CLI's reader), or MeshError with one sentence."""
    if not isinstance(text, str) or not text.strip():
        raise MeshError("a mesh is axes and sizes like X=2,Y=4", "mesh-syntax", part="")
    return parse(text.replace(" ", ""))


def run_mesh(mesh_text, program, machine=None, **params):
    """Run a registered mesh program on the mesh 'X=2,Y=4' over `machine` (a preset's key, or
    None/"" for one NVLink 4 switch): its simcore.mesh.programs.Result. MeshError: one sentence."""
    get_program(program)  # an unknown program is named before the mesh is read
    return run_program(program, parse_mesh(mesh_text), machine or None, **params)


def parse_params(text) -> dict:
    """'case=2' or 'source=A[I_X, J_Y] target=A[I_XY, J]' -> {name: text}: K=V pairs apart by spaces
    (a space inside [] or {} belongs to the value). Each program checks its values (Program.checked).
    MeshError "mesh-syntax" for a pair without '='."""
    out, depth, cur = {}, 0, ""
    for ch in (text or "").strip() + " ":
        depth += (ch in "[{") - (ch in "]}")
        if ch.isspace() and depth == 0:
            if cur:
                k, eq, v = cur.partition("=")
                if not eq or not k:
                    raise MeshError(f"a program parameter is NAME=VALUE, got {cur!r}", "mesh-syntax", part=cur)
                out[k] = v
            cur = ""
        else:
            cur += ch
    return out
