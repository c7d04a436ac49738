"""
Endurance: many frames of looping playback must not grow the app's memory.

    python benchmarks/endurance.py                       # 10 000 frames, ring all-gather, n = 8
    python benchmarks/endurance.py --frames 2000 --n 64 --kind all-reduce

The main window (1600x900, offscreen) plays its scenario in a loop at the fastest speed; each
frame advances the one clock by 1/60 s and lets the event loop repaint the window, exactly as
the playback timer does. Resident memory is first read after a warm-up of one whole pass over
the animation (caches that fill once per run, such as the trace index's holdings checkpoints,
are full by then; they are bounded, not a leak) and then every 1000 frames; the goal is the
last reading within 5 % of the first. The table reports pass / FAIL; the script exits 0 unless it crashes (`--strict`:
exit 1 on FAIL).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

GOAL_GROWTH = 0.05  # at most 5 % above the reading after warm-up


def rss_mib() -> float:
    """Current resident set size in MiB (psutil if installed, else /proc, else the peak)."""
    try:
        import psutil
    except ImportError:
        pass
    else:
        return psutil.Process().memory_info().rss / 2**20
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (2**20 if sys.platform == "darwin" else 2**10)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="benchmarks/endurance.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--frames", type=int, default=10_000)
    p.add_argument("--warmup", type=int, default=None,
                   help="frames before the first reading (default: one pass over the animation + 60)")
    p.add_argument("--kind", default="all-gather")
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--algo", default="ring")
    p.add_argument("--strict", action="store_true", help="exit 1 when memory grew more than 5 %%")
    args = p.parse_args(argv)
    if args.frames < 1 or (args.warmup is not None and args.warmup < 0):
        p.error("--frames must be at least 1 and --warmup at least 0")

    os.environ["SHARD_LAB_SETTINGS"] = os.path.join(tempfile.mkdtemp(prefix="shard-lab-endurance-"), "s.ini")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import run as bench  # benchmarks/run.py: the same window setup as the frame figures

    app = bench.qt_app()
    win, _model, playback = bench.open_window(args.kind, args.n, algo=args.algo)
    if playback.t_end <= 0:
        print(f"{args.kind} with n = {args.n} has nothing to play")
        return 0
    playback.set_loop(True)
    playback.set_speed(playback.MAX_SPEED)
    per_frame = playback.speed * playback.sim_per_wall / 60  # simulated seconds a frame
    warmup = args.warmup if args.warmup is not None else math.ceil(playback.t_end / per_frame) + 60

    def frame():
        playback.advance(1 / 60)
        app.processEvents()

    loops = 0
    for _ in range(warmup):
        frame()
    gc.collect()
    start = rss_mib()
    objects0 = len(gc.get_objects())
    readings = [(0, start)]
    print(f"endurance: {args.kind} ({args.algo}) n = {args.n}, {args.frames} frames at 60 Hz, 4x, looping; "
          f"RSS after {warmup} warm-up frames {start:.1f} MiB")
    t0 = time.perf_counter()
    last_t = playback.t
    for i in range(1, args.frames + 1):
        frame()
        if playback.t < last_t:
            loops += 1
        last_t = playback.t
        if i % 1000 == 0 or i == args.frames:
            gc.collect()
            readings.append((i, rss_mib()))
            print(f"  frame {i:6d}  RSS {readings[-1][1]:7.1f} MiB  ({readings[-1][1] / start - 1:+.1%})", flush=True)
    wall = time.perf_counter() - t0
    end = readings[-1][1]
    growth = end / start - 1
    ok = growth <= GOAL_GROWTH
    objects1 = len(gc.get_objects())
    print(f"\n{args.frames} frames in {wall:.1f} s ({wall / args.frames * 1e3:.2f} ms a frame), "
          f"{loops} loops of the animation")
    print(f"RSS {start:.1f} -> {end:.1f} MiB ({growth:+.1%}), goal <= +{GOAL_GROWTH:.0%}: "
          f"{'pass' if ok else 'FAIL'}; Python objects {objects0} -> {objects1}")
    bench.close_window(win)
    return 1 if (args.strict and not ok) else 0


if __name__ == "__main__":
    sys.exit(main())
