"""
MeshError: what the mesh says when it is asked something it cannot do, in one sentence.

The sentence (str(e)) is the engine's English, for the command line and a notebook. Beside it an
error carries what a caller needs to say it in its own words and language without reading the
English: `kind` (one of KINDS) and `facts`, the numbers and names of the case
(e.g. kind "not-split", facts {"dim": "I", "length": 64, "axes": ("Y",), "sizes": (3,)}).
"""

KINDS = {  # kind -> the facts it carries
    "mesh-syntax": ("part",),  # a mesh text part that is not NAME=SIZE
    "axis-twice": ("axis",),  # a mesh text or axis tuple naming one axis twice
    "axis-used-twice": ("axis",),  # a layout using one mesh axis for two dimensions (or a dimension and a sum)
    "unknown-axis": ("axis", "axes"),  # an axis name the mesh does not have
    "needs-axes": ("need", "axes"),  # a program needs more mesh axes than the mesh has
    "same-axis": ("axis",),  # a program's two axes are one axis
    "machine-size": ("n", "machine", "fits"),  # n devices do not make this machine (fits: the n that do)
    "mesh-n": ("mesh", "devices", "n"),  # a mesh of `devices` devices where n devices were asked for
    "too-many": ("n", "most"),  # more devices than a caller draws (the app's mesh view)
    "torus-shape": ("shape", "need", "machine"),  # a torus mesh must have the torus's shape
    "not-split": ("dim", "length", "axes", "sizes"),  # a dimension of `length` over axes of `sizes`
    "mixed-partial": ("ops",),  # a pending sum of one op to another
    "shard-to-partial": ("axis",),  # Shard → Partial, refused
    "spec-too-long": ("spec", "entries", "ndim"),  # a spec with more entries than the array's rank
    "unknown-program": ("program", "programs"),
    "unknown-parameter": ("program", "param", "params"),
    "bad-parameter": ("program", "param", "value", "expected"),
}


class MeshError(ValueError):
    """
    A bad mesh, axis, spec or program argument; the message is one sentence a student can act on.
    kind: one of KINDS (None for the rarer refusals, which the English alone says); facts: the
    case's numbers and names, as KINDS lists them.
    """

    def __init__(self, message, kind=None, **facts):
        super().__init__(message)
        if kind is not None and kind not in KINDS:
            raise ValueError(f"unknown MeshError kind {kind!r}")
        self.kind = kind
        self.facts = facts
