"""
The program every MPI rank runs: `mpiexec -n 4 python -m simcore.mpi_worker WORKDIR TASK`.

TASK is a JSON object (or, when it is missing, the contents of WORKDIR/task.json):
  {"task": "collective", "op", "algo", "length", "seed", "warmup", "repeats", "gather"}
      -> WORKDIR/rank<r>.npz for every rank r: output, times (seconds of each run), library
         (written by rank 0 after a gather, or by each rank itself when "gather" is false)
  {"task": "tp", "config", "tokens", "seed"}
      -> WORKDIR/rank<r>.npz: output (logits [B, T, vocab]), times, library (rank 0 writes all)
  {"task": "measure", "ops", "sizes", "warmup", "repeats"}
      -> WORKDIR/measure.json (rank 0): every (op, algo, S) with its median time
  {"task": "mesh", "programs": [{"program", "mesh": {axis: size}, "machine", "params"}, …], "repeats"}
      -> WORKDIR/mesh<i>.json and mesh<i>.npz (rank 0): registered mesh programs on the ranks
         (run_mesh)
Which algorithm Open MPI runs is set by mpiexec's --mca arguments, not here.

Importing this module does not start MPI; main() does.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

import numpy as np

from .mpi import PROGRESS, collective_inputs, tp_forward_rank


def _library(MPI):
    """'Open MPI v5.0.11, package: …' without the C string's trailing NUL."""
    return MPI.Get_library_version().strip("\x00 \n")


def _call(MPI, comm, op, send, recv):
    """One collective on the MPI buffers: send -> recv."""
    if op == "all-reduce":
        comm.Allreduce(send, recv, op=MPI.SUM)
    elif op == "all-gather":
        comm.Allgather(send, recv)
    else:  # reduce-scatter: rank r receives block r of the sum
        comm.Reduce_scatter(send, recv, [len(recv)] * comm.size, op=MPI.SUM)


def _buffers(op, n, length, dtype):
    """(send, recv) sizes in elements for a full array of `length` elements."""
    if op == "all-gather":
        return np.zeros(length // n, dtype), np.zeros(length, dtype)
    if op == "reduce-scatter":
        return np.zeros(length, dtype), np.zeros(length // n, dtype)
    return np.zeros(length, dtype), np.zeros(length, dtype)


def run_collective(MPI, comm, task, work):
    n, r = comm.size, comm.rank
    op, length = task["op"], int(task["length"])
    inputs = collective_inputs(op, n, length, int(task["seed"]))
    send, recv = _buffers(op, n, length, np.float64)
    send[:] = inputs[r]
    times = []
    for _ in range(int(task["warmup"]) + int(task["repeats"])):
        comm.Barrier()
        t0 = MPI.Wtime()
        _call(MPI, comm, op, send, recv)
        times.append(MPI.Wtime() - t0)
    return recv, np.array(times)


def run_tp(MPI, comm, task, work):
    from .tensor_parallel import shard_params_tp
    from .transformer_lab import Config, init_params

    n, r = comm.size, comm.rank
    cfg = Config(**task["config"])
    tokens = np.array(task["tokens"], dtype=np.int64)
    # every rank builds the same weights from the seed, then keeps only its own slice
    mine = shard_params_tp(init_params(cfg, seed=int(task["seed"])), cfg, n)[r]

    def allreduce(x):
        x = np.ascontiguousarray(x)
        out = np.empty_like(x)
        comm.Allreduce(x, out, op=MPI.SUM)
        return out

    def allgather_vocab(local):
        local = np.ascontiguousarray(local)
        buf = np.empty((n,) + local.shape, local.dtype)
        comm.Allgather(local, buf)
        return np.concatenate(list(buf), axis=2)  # rank order = vocabulary order

    comm.Barrier()
    t0 = MPI.Wtime()
    logits = tp_forward_rank(mine, cfg, tokens, allreduce, allgather_vocab)
    return logits, np.array([MPI.Wtime() - t0])


def _inner(nbytes):
    """Back-to-back collectives per timed run: enough that a tiny message's run is measurable."""
    return max(1, min(64, (1 << 20) // max(int(nbytes), 1)))


def run_measure(MPI, comm, task, work):
    n, r = comm.size, comm.rank
    ops, sizes = [tuple(o) for o in task["ops"]], [int(s) for s in task["sizes"]]
    warmup, repeats = int(task["warmup"]), int(task["repeats"])
    total, done, points = len(ops) * len(sizes), 0, []
    for op, algo in ops:
        for S in sizes:
            # payloads are bytes: a collective's cost depends on how many, not on their values
            send, recv = _buffers(op, n, S, np.uint8)
            for _ in range(warmup):
                _call(MPI, comm, op, send, recv)
            k = _inner(S)
            runs = np.zeros(repeats)
            for i in range(repeats):
                comm.Barrier()
                t0 = MPI.Wtime()
                for _ in range(k):
                    _call(MPI, comm, op, send, recv)
                runs[i] = (MPI.Wtime() - t0) / k
            slowest = np.zeros_like(runs) if r == 0 else None
            comm.Reduce(runs, slowest, op=MPI.MAX, root=0)  # a run lasts until its slowest rank is done
            done += 1
            if r == 0:
                points.append({"op": op, "algo": algo, "nbytes": S, "seconds": float(np.median(slowest)),
                               "runs": slowest.tolist(), "inner": k})
                print(f"{PROGRESS} {done} {total}", flush=True)
    if r == 0:
        tmp = os.path.join(work, "measure.json.part")
        with open(tmp, "w") as f:
            json.dump({"library": _library(MPI), "n": n, "points": points}, f)
        os.replace(tmp, os.path.join(work, "measure.json"))
    return None, None


def _tensor_blocks(res, pos):
    """{"class/name": this position's block} of every tensor a mesh program's Result names."""
    out = {}
    for cls, tensors in res.tensors.items():
        for name, t in tensors.items():
            blocks = getattr(t, "blocks", t)
            if blocks[pos] is not None:
                out[f"{cls}/{name}"] = np.asarray(blocks[pos])
    return out


def run_mesh(MPI, comm, task, work):
    """
    Registered mesh programs on a mesh over the ranks (simcore.mesh.ranks.RankMesh): rank r is
    mesh position r. task["programs"]: [{"program", "mesh", "machine", "params"}, …], each run
    1 + task["repeats"] times (the first is a warm-up). For program i rank 0 writes
    WORKDIR/mesh<i>.json (every collective of the program: op, axis, MPI call, bytes, label, the
    plan's closed form, and its wall seconds [run][rank]; the max |error| against numpy over
    ranks) and WORKDIR/mesh<i>.npz (every tensor's block at every position from the last run,
    keyed "class/name/position").
    """
    from functools import partial

    from .mesh.programs import run_program
    from .mesh.ranks import MPI_CALLS, RankMesh

    repeats = int(task.get("repeats", 3))
    for i, spec in enumerate(task["programs"]):
        times, res = [], None
        for _ in range(1 + repeats):
            res = run_program(spec["program"], spec["mesh"], spec["machine"], mesh_class=partial(RankMesh, comm=comm),
                              **spec.get("params", {}))
            times.append([r.time for r in res.mesh.log])
            res.mesh.free()
        err = comm.allreduce(float(res.max_err), op=MPI.MAX)
        every_time = comm.gather(times, root=0)
        blocks = comm.gather(_tensor_blocks(res, comm.rank), root=0)
        if comm.rank != 0:
            continue
        log = res.mesh.log
        steps = [r.step for r in res.rows] if len(res.rows) == len(log) else [r.label for r in log]
        info = {"library": _library(MPI), "n": comm.size, "program": res.name, "max_abs_error": err,
                "byte_scale": res.mesh.comm.byte_scale, "notes": list(res.notes),
                "collectives": [{"op": r.op, "axis": list(r.axis), "call": MPI_CALLS[r.op], "label": r.label,
                                 "step": st, "groups": len(r.groups), "group_size": len(r.groups[0]),
                                 "nbytes": r.nbytes, "form": r.form} for r, st in zip(log, steps)],
                # seconds[run][rank][k]: collective k's wall time on that rank in that run
                "seconds": [[every_time[q][j] for q in range(comm.size)] for j in range(1 + repeats)]}
        np.savez(os.path.join(work, f"mesh{i}.npz"),
                 **{f"{k}/{q}": v for q, b in enumerate(blocks) for k, v in b.items()})
        tmp = os.path.join(work, f"mesh{i}.json.part")
        with open(tmp, "w") as f:
            json.dump(info, f)
        os.replace(tmp, os.path.join(work, f"mesh{i}.json"))
    return None, None


TASKS = {"collective": run_collective, "tp": run_tp, "measure": run_measure, "mesh": run_mesh}


def _save(MPI, comm, work, output, times, gather):
    """rank<r>.npz for every rank: all written by rank 0 (gather), or each by its own rank."""
    if not gather:
        np.savez(os.path.join(work, f"rank{comm.rank}.npz"), output=output, times=times, library=_library(MPI))
        return
    everything = comm.gather((output, times), root=0)
    if comm.rank == 0:
        for r, (out, t) in enumerate(everything):
            np.savez(os.path.join(work, f"rank{r}.npz"), output=out, times=t, library=_library(MPI))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (1, 2):
        print("usage: mpiexec -n N python -m simcore.mpi_worker WORKDIR [TASK-JSON]", file=sys.stderr)
        return 2
    work = argv[0]
    if len(argv) == 2:
        task = json.loads(argv[1])
    else:
        with open(os.path.join(work, "task.json")) as f:
            task = json.load(f)
    from mpi4py import MPI  # starts MPI

    comm = MPI.COMM_WORLD
    try:
        output, times = TASKS[task["task"]](MPI, comm, task, work)
        if output is not None:
            _save(MPI, comm, work, output, times, task.get("gather", True))
    except Exception:
        traceback.print_exc()
        sys.stderr.flush()
        comm.Abort(1)  # one failed rank must not leave the others waiting in a collective
    return 0


if __name__ == "__main__":
    sys.exit(main())
