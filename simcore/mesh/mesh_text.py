"""
mesh_text — a mesh and a program's parameters as a person writes them: 'X=2,Y=4' and 'case=2' or
'source=A[I_X, J_Y] target=A[I_XY, J]' (the mesh CLI's --mesh and --param, the app's fields).
"""

from __future__ import annotations

from .errors import MeshError


def parse_axes(text) -> dict:
    """'X=2,Y=4' -> {'X': 2, 'Y': 4}, or MeshError with the reason."""
    out = {}
    for part in text.split(","):
        name, eq, size = part.partition("=")
        name = name.strip()
        if not eq or not name or not size.strip().isdigit() or int(size) < 1:
            raise MeshError(f"--mesh is axes and sizes like X=2,Y=4; {part!r} is not NAME=SIZE", "mesh-syntax",
                            part=part)
        if name in out:
            raise MeshError(f"--mesh names axis {name} twice", "axis-twice", axis=name)
        out[name] = int(size)
    return out


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
