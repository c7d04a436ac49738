"""
Byte-identity check of the machine collectives between two source trees (not a pytest test: it
needs the other tree). For every case it hashes the outputs, comm.time and the whole recorded
trace (every column, the explicit contributor lists, the key table and the saved file) and
prints the cases whose hash differs.

    python tests/compare_torus_traces.py OLD_ROOT NEW_ROOT     # e.g. a `git archive 3161d52` under /tmp

Cases: tori of 1, 2 and 3 axes (sizes 2 to 16, with and without wraparound), all-gather,
reduce-scatter, all-reduce and the three in a row on one Comm, four sizes and two dtypes; the
TPU presets as run_on_preset builds them; and the other users of topo_collectives._Run on
dgx-h100 (channel rings, pipelined and unpipelined hierarchical all-reduce).
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile


def cases(root):
    """{case: (sha256, messages)} of the tree at root (run in its own process)."""
    sys.path.insert(0, root)
    import numpy as np

    from simcore.comm_sim import Comm
    from simcore.scenarios import demo_values
    from simcore.topo_collectives import allreduce_hier, allreduce_torus, torus_all_gather, torus_reduce_scatter
    from simcore.topology import torus
    from simcore.topology_presets import TorusSlice, get_preset, run_on_preset

    def add_trace(h, comm):
        tr = comm.trace
        (getattr(tr, "flush", None) or tr._flush)()  # _flush in trees before Trace.flush was public
        for name in sorted(tr._cols):
            h.update(name.encode())
            h.update(np.ascontiguousarray(tr._cols[name][:tr._len]).tobytes())
        h.update(bytes(memoryview(tr._explicit)))
        h.update(repr(tr._keys).encode())
        h.update(repr(float(comm.time)).encode())
        with tempfile.TemporaryDirectory() as d:
            tr.save(os.path.join(d, "t.json"))
            with open(os.path.join(d, "t.json"), "rb") as f:
                h.update(f.read())

    def add_out(h, outs):
        for o in (outs[0] if isinstance(outs, tuple) else outs):
            o = np.asarray(o)
            h.update(f"{o.dtype}{o.shape}".encode())
            h.update(o.tobytes())

    res = {}
    shapes = [((2,), None), ((3,), None), ((8,), None), ((5,), (False,)), ((6,), (False,)), ((4, 4), None),
              ((3, 5), None), ((2, 4), None), ((4, 4), (False, True)), ((4, 6), (False, False)), ((1, 8), None),
              ((4, 4, 4), None), ((2, 3, 4), None), ((4, 4, 4), (True, False, False)),
              ((3, 4, 5), (False, True, False)), ((4, 1, 4), None), ((8, 8, 4), None), ((16, 16), None)]
    opsets = [("all-gather",), ("reduce-scatter",), ("all-reduce",), ("all-reduce", "reduce-scatter", "all-gather")]
    for shape, wrap in shapes:
        base = torus(shape)
        topo = base if wrap is None else TorusSlice(shape=base.shape, link=base.link, base=base.base, wrap=wrap)
        n, k = topo.n, max(1, sum(1 for s in shape if s > 1))
        for ops in opsets:
            for mult, scale, dtype in ((1, 1.0, "f8"), (2, 1e3, "f8"), (3, 7.5, "f4"), (24, 1e4, "f8")):
                if n >= 256 and mult > 2:
                    continue
                comm, h = Comm(topo, byte_scale=scale), hashlib.sha256()
                for i, op in enumerate(ops):
                    if op == "all-gather":
                        outs = torus_all_gather(comm, list(demo_values(i + 1, (n, k * mult)).astype(dtype)), f"c{i}")
                    else:
                        fn = torus_reduce_scatter if op == "reduce-scatter" else allreduce_torus
                        outs = fn(comm, list(demo_values(i + 1, (n, n * k * mult)).astype(dtype)), f"c{i}")
                    add_out(h, outs)
                add_trace(h, comm)
                res[f"{shape} wrap={wrap} {'+'.join(ops)} x{mult} scale={scale} {dtype}"] = \
                    (h.hexdigest(), comm.trace.n_messages)
    runs = [(key, n, op, "torus", 2.0**20) for key, n in (("tpu-v4-4x4x4", 64), ("tpu-v4-4x4x4", 16),
                                                          ("tpu-v4-4x4x4", 8), ("tpu-v5e-16x16", 256),
                                                          ("tpu-v5e-16x16", 32))
            for op in ("all-gather", "reduce-scatter", "all-reduce")]
    runs += [("dgx-h100", n, op, algo, 2.0**20 * (n // 16)) for n in (16, 64, 256)
             for op, algo in (("all-gather", "ring-nodes"), ("reduce-scatter", "ring-nodes"),
                              ("all-reduce", "ring-nodes"), ("all-reduce", "hier"))]
    for key, n, op, algo, S in runs:
        comm, inputs, outs = run_on_preset(op, key, n, S, algo)
        h = hashlib.sha256()
        add_out(h, outs)
        h.update(inputs.tobytes())
        add_trace(h, comm)
        res[f"preset {key} n={n} {op} {algo}"] = (h.hexdigest(), comm.trace.n_messages)
    for n in (16, 64, 256):  # the unpipelined hierarchical all-reduce, twice on one Comm
        comm, h = Comm(get_preset("dgx-h100").topology(n), byte_scale=3.0), hashlib.sha256()
        add_out(h, allreduce_hier(comm, list(demo_values(5, (n, n * 3))), label="h"))
        add_out(h, allreduce_hier(comm, list(demo_values(6, (n, n * 2))), label="h2"))
        add_trace(h, comm)
        res[f"allreduce_hier dgx-h100 n={n}"] = (h.hexdigest(), comm.trace.n_messages)
    return res


def main(old, new):
    got = {}
    for root in (old, new):
        out = subprocess.run([sys.executable, __file__, "--one", os.path.abspath(root)], capture_output=True,
                             text=True, check=True, cwd=tempfile.gettempdir()).stdout
        got[root] = json.loads(out)
    a, b = got[old], got[new]
    differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    for k in differ:
        print("DIFFERS:", k, a.get(k), b.get(k))
    print(f"{len(a)} cases, {sum(v[1] for v in a.values())} messages; {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        print(json.dumps(cases(sys.argv[2])))
    else:
        sys.exit(main(sys.argv[1], sys.argv[2]))
