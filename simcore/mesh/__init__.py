"""
simcore.mesh — named mesh axes on every machine: sharded arrays in the book's notation, their
redistribution and matmuls by the book's rules, per-device programs in shard_map style, and the
lecture's next programs (DP × TP, FSDP × TP, 2-D weight-stationary) timed against their
published forms. Plain numpy; the app reads the records it leaves (Mesh.log, the Comm's trace).
"""

from .device_mesh import AxisCollective, AxisPlan, Mesh
from .errors import MeshError

__all__ = ["Mesh", "MeshError", "AxisCollective", "AxisPlan"]
