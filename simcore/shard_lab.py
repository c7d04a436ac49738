"""
shard_lab — the lecture's module (CS349E lecture 4) on simcore: shard matrices over virtual
GPUs, run Megatron tensor parallelism, and account for every message.

A student's copy of the lecture code runs on simcore by pointing its imports here:

    from simcore.comm_sim import ALLREDUCE_ALGOS, NVLINK4, Comm, allgather_ring, ...
    from simcore.transformer_lab import KVCache, apply_rope, attention_core, ...

Everything the lecture defines is importable from this one module.
"""

from .all_to_all import all_to_all
from .cost_model import decode_sweep, pope_ffn_comm, tp_decode_step
from .sharding import (all_gather, all_reduce, make_comm, matmul_case1, matmul_case2, matmul_case3, matmul_case4,
                       reduce_scatter, shard, unshard)
from .tensor_parallel import kv_group_of_device, shard_params_tp, tp_caches, tp_forward

__all__ = [
    "make_comm", "shard", "unshard", "all_gather", "reduce_scatter", "all_reduce", "all_to_all",
    "matmul_case1", "matmul_case2", "matmul_case3", "matmul_case4",
    "kv_group_of_device", "shard_params_tp", "tp_forward", "tp_caches",
    "tp_decode_step", "pope_ffn_comm", "decode_sweep",
]
