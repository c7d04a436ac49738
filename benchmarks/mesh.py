"""
The mesh at 256 devices: a redistribute on a 16 × 16 mesh, messages simulated and recorded per
second, and its cost per message against the switch path (the lecture's ring all-gather of the
same array on 256 devices, simcore.comm_sim.allgather_ring).

    python benchmarks/mesh.py [--quick] [--json out.json]

Each figure is the median over repeats after one warm-up, the mesh and the switch path timed in
turn (interleaved), so a busy machine slows both. Goals (issue 34): ≥ 1 000 000 messages/s, and
a message on the mesh ≤ 3× the switch path's.

    mesh_redistribute_messages_per_s        A[I_XY, J] → A[I, J]: one all-gather over (X, Y),
                                            a ring of 256 (65 280 messages)
    mesh_redistribute_cost_ratio            its time per message over the switch path's
    mesh_redistribute_axis_messages_per_s   A[I_X, J_Y] → A[I_X, J]: all-gather over Y in its 16
                                            groups at once (3 840 messages)
    mesh_redistribute_axis_cost_ratio       its time per message over the switch path's
    mesh_redistribute_2axis_messages_per_s  A[I_X, J_Y] → A[I, J]: all-gather over X, then over Y
                                            (7 680 messages, each device ends with the whole array:
                                            the switch path's bytes in 8.5× fewer messages, so its
                                            cost a message is higher by nature; reported)
    mesh_reduce_scatter_messages_per_s      A[I_X, J]{U_Y} → A[I_X, J_Y]: reduce-scatter over Y
                                            (16 groups of 16, 3 840 messages, partial sums recorded)
The array: 256 × 16 float64 (32 KiB), as the switch path's: small, so the figures are the engine's cost a message, not numpy copying every device's full array.

    python benchmarks/mesh.py --frames [--program redistribute] [--frames-n 240]

times the Mesh view alone at 256 devices instead (goal: p95 ≤ 16.7 ms, one 60 Hz frame):
    mesh_view_frame_ms_p50/p95      wall milliseconds of one animation frame: the playback advances
                                    1/60 s at the fastest speed (looping, so step and collective
                                    boundaries count), the event loop runs, the view paints into a
                                    QImage (offscreen: each frame painted exactly once)
    mesh_view_frame_cpu_ms_p50/p95  the same frames' CPU time on this thread (a loaded machine
                                    stretches the wall time, not this)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from simcore.comm_sim import Comm, allgather_ring  # noqa: E402
from simcore.mesh import Mesh, P, Partial, Shard, ShardedArray  # noqa: E402
from simcore.topology import switch  # noqa: E402

GOALS = {"mesh_redistribute_messages_per_s": (">=", 1e6), "mesh_redistribute_cost_ratio": ("<=", 3.0),
         "mesh_redistribute_axis_messages_per_s": (">=", 1e6), "mesh_redistribute_axis_cost_ratio": ("<=", 3.0),
         "mesh_redistribute_2axis_messages_per_s": ("report", 0),
         "mesh_reduce_scatter_messages_per_s": (">=", 1e6)}


def array():
    return np.random.default_rng(0).standard_normal((256, 16))


def mesh_case(x, src, tgt, runs=1):
    """(seconds, messages) of `runs` redistributes in a row on a fresh 16 × 16 mesh (building the
    mesh and the sharded array untimed). A run of a few milliseconds is timed `runs` times in a row
    (the machine's 10 ms scheduling quantum would otherwise decide a single run's time)."""
    mesh = Mesh((16, 16), ("X", "Y"))
    A = ShardedArray.from_full(mesh, x, src)

    def go():
        for _ in range(runs):
            A.redistribute(tgt)

    return _timed(go), len(mesh.comm.trace.messages)


CPU = {}  # the same runs' process CPU seconds, by case (a loaded machine stretches wall time, not these)


def _timed(fn):
    """Wall seconds of fn(), the garbage of earlier runs collected first and the collector off
    while it runs (a collection of the last run's traces is not this run's cost); its CPU seconds
    go to CPU[_case]."""
    gc.collect()
    gc.disable()
    try:
        c, t = time.process_time(), time.perf_counter()
        fn()
        wall = time.perf_counter() - t
        CPU.setdefault(_case[0], []).append(time.process_time() - c)
        return wall
    finally:
        gc.enable()


_case = [""]


def switch_case(x):
    chunks = [c.ravel() for c in np.split(x, 256)]
    comm = Comm(switch(256))
    return _timed(lambda: allgather_ring(comm, chunks, list(range(256)))), len(comm.trace.messages)


def measure(repeats):
    x = array()
    cases = {"one": lambda: mesh_case(x, P(("X", "Y"), None), P()),
             "axis": lambda: mesh_case(x, P("X", "Y"), P("X", None), runs=10),
             "two": lambda: mesh_case(x, P("X", "Y"), P(), runs=5),
             "rs": lambda: mesh_case(x, [Shard(0), Partial()], P("X", "Y"), runs=10),
             "switch": lambda: switch_case(x)}
    for k, fn in cases.items():  # warm-up
        _case[0] = "warm-up"
        fn()
    runs = {k: [] for k in cases}
    for _ in range(repeats):
        for k, fn in cases.items():
            _case[0] = k
            runs[k].append(fn())
    med = {k: (statistics.median(t for t, _ in v), v[0][1]) for k, v in runs.items()}
    per = {k: t / m for k, (t, m) in med.items()}
    return {"mesh_redistribute_messages_per_s": 1 / per["one"],
            "mesh_redistribute_cost_ratio": per["one"] / per["switch"],
            "mesh_redistribute_axis_messages_per_s": 1 / per["axis"],
            "mesh_redistribute_axis_cost_ratio": per["axis"] / per["switch"],
            "mesh_redistribute_2axis_messages_per_s": 1 / per["two"],
            "mesh_reduce_scatter_messages_per_s": 1 / per["rs"]}, med


def measure_frames(program="redistribute", frames=240, mesh="X=16,Y=16", size=(1600, 900)):
    """Per frame (wall ms, CPU ms) of the Mesh view on `mesh` running `program` (module docstring)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from app.core.scenarios import Scenario
    from app.state import Playback, ScenarioModel
    from app.views.mesh.mesh_view import MeshView

    model = ScenarioModel(Scenario().with_changes(kind="mesh", mesh=mesh, program=program), sync=True)
    playback = Playback(model)
    view = MeshView(model, playback)
    view.resize(*size)
    view.show()
    app.processEvents()
    view.hide()  # painted by render() alone, once a frame
    app.processEvents()
    playback.pause()
    playback.set_loop(True)
    playback.set_speed(playback.MAX_SPEED)
    playback.seek(0.0)
    img = QImage(view.size(), QImage.Format_ARGB32_Premultiplied)
    wall, cpu = [], []
    for i in range(frames + 20):
        c, t = time.thread_time(), time.perf_counter()
        playback.advance(1 / 60)
        app.processEvents()
        view.render(img)
        if i >= 20:  # after a warm-up
            wall.append((time.perf_counter() - t) * 1e3)
            cpu.append((time.thread_time() - c) * 1e3)
    view.close()
    return wall, cpu


def percentile(xs, q):
    return float(np.percentile(np.asarray(xs), q))


def main_frames(args):
    wall, cpu = measure_frames(args.program, args.frames_n)
    figs = {"mesh_view_frame_ms_p50": percentile(wall, 50), "mesh_view_frame_ms_p95": percentile(wall, 95),
            "mesh_view_frame_cpu_ms_p50": percentile(cpu, 50), "mesh_view_frame_cpu_ms_p95": percentile(cpu, 95)}
    for name, v in figs.items():
        goal = "   goal <= 16.7 " + ("pass" if v <= 16.7 else "FAIL") if name.endswith("ms_p95") else ""
        print(f"{name:<32} {v:8.2f} ms{goal}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figs, f, indent=1)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="5 repeats instead of 15")
    ap.add_argument("--repeats", type=int, default=None, help="repeats (overrides --quick)")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--frames", action="store_true", help="time the Mesh view's frames at 16 × 16 instead")
    ap.add_argument("--frames-n", type=int, default=240, help="frames to time (with --frames)")
    ap.add_argument("--program", default="redistribute", help="the mesh program the view plays (with --frames)")
    args = ap.parse_args(argv)
    if args.frames:
        return main_frames(args)
    figs, med = measure(args.repeats or (5 if args.quick else 15))
    for k, (t, m) in med.items():
        cpu = statistics.median(CPU[k])
        print(f"  {k:<7} {m:>6} messages  median {t * 1e3:8.2f} ms wall, {cpu * 1e3:8.2f} ms CPU: "
              f"{t / m * 1e9:7.1f} ns wall, {cpu / m * 1e9:7.1f} ns CPU a message")
    sw = statistics.median(CPU["switch"]) / med["switch"][1]
    for k in ("one", "axis", "two", "rs"):
        cpu = statistics.median(CPU[k]) / med[k][1]
        print(f"  {k:<7} by CPU time: {1 / cpu:12,.0f} messages/s, {cpu / sw:5.2f}× the switch path a message")
    for name, v in figs.items():
        op, goal = GOALS[name]
        if op == "report":
            print(f"{name:<42} {v:>14,.2f}   (reported)")
            continue
        ok = v >= goal if op == ">=" else v <= goal
        print(f"{name:<42} {v:>14,.2f}   goal {op} {goal:,.0f}   {'pass' if ok else 'FAIL'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figs, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
