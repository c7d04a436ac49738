"""MeshError: what the mesh says when it is asked something it cannot do, in one sentence."""


class MeshError(ValueError):
    """A bad mesh, axis, spec or program argument; the message is one sentence a student can act on."""
