"""simcore — Shard Lab's engine: n virtual devices holding real numpy shards, collectives timed
message by message with the α–β model, and a Megatron tensor-parallel Transformer.

Plain numpy; never imports Qt. Modules follow the lecture's names:
comm_sim, trace, sharding, transformer_lab, tensor_parallel, hw_specs, llm_math,
cost_model, shard_lab (the lecture's facade). comm_sim is the public face of links, topology,
collectives and algorithms (the algorithm registry and closed forms), which it re-exports.

Your own run (docs/own_collective.md):
    with comm.collective(op, algo=..., n_chunks=..., nbytes=...) as c: c.send(...)   (comm_sim)
    simcore.check(comm_or_trace, inputs, outputs, op)   the verdict against numpy (simcore.checker)
    comm.trace.save("run.json")                         a file the app opens (shard-lab run.json)
    simcore.show(comm_or_trace)                         the app's window on the run (simcore.viewer)
    python -m simcore record SCRIPT.py [--show]         every Comm of a script in one trace (simcore.record)
"""

__version__ = "0.1.0"


def __getattr__(name):
    # simcore.check and simcore.show load their modules on first use: `import simcore` stays
    # free, and show (which opens the app) never brings Qt into a plain engine run
    if name == "check":
        from .checker import check

        return check
    if name == "show":
        from .viewer import show

        return show
    raise AttributeError(f"module 'simcore' has no attribute {name!r}")
