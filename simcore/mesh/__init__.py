"""
simcore.mesh — named mesh axes on every machine: sharded arrays in the book's notation, their
redistribution and matmuls by the book's rules, per-device programs in shard_map style, and the
lecture's next programs (DP × TP, FSDP × TP, 2-D weight-stationary) timed against their
published forms. Plain numpy; the app reads the records it leaves (Mesh.log, the Comm's trace).
"""

from .device_mesh import AxisCollective, AxisPlan, Mesh
from .errors import MeshError
from .placement import P, Partial, Replicate, Shard
from .shard_map import all_gather, all_to_all, axis_index, ppermute, psum, psum_scatter
from .sharded import ShardedArray, matmul

__all__ = ["Mesh", "MeshError", "AxisCollective", "AxisPlan", "P", "Shard", "Replicate", "Partial",
           "ShardedArray", "matmul", "psum", "all_gather", "psum_scatter", "all_to_all", "ppermute", "axis_index"]
