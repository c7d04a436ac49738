"""
The mesh scenario the app opens (`shard-lab --scenario mesh --mesh X=2,Y=4 --program …`): a
registered program (simcore.mesh.programs.PROGRAMS, the one registry the CLI and MPI read too)
by name on a mesh written as text, over a machine.
"""

from __future__ import annotations

from .errors import MeshError
from .mesh_text import parse_axes as parse
from .mesh_text import parse_params  # noqa: F401  (the app reads it here)
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
