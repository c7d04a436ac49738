"""
shard-lab — the app's command line (also `python -m app`).

    shard-lab [FILE.json] [--scenario KIND] [--n N] [--algo ALGO] [--bytes S] [--link L]
              [--step K] [--tab ring|weights|buffers|latency] [--lang en|zh]
              [--screenshot PATH [--size WxH]]

FILE.json may also be a saved run (a trace: `trace.save("run.json")`, `python -m simcore record`,
`python -m simcore trace --format json`; .json.gz too): it plays in every trace view.

ALGO is an all-reduce algorithm of the registry (simcore.algorithms.ALLREDUCE_ALGOS; `--help`
lists them). `FILE.json` opens a saved scenario (File → Save scenario…) at its saved step;
with it, the scenario options are not given. A file that is not a scenario prints one line and exits 2.

Without arguments it opens on ring all-gather with n = 8. `--step K` shows step K in flight
(blocks on their way; 0 = the start). `--screenshot PATH` renders the main window at that state
to a PNG (offscreen when there is no display) and exits 0 — for making slides. `--tab` picks
the view in the centre (tp-forward opens on the weight slices, decode on the latency plot). A
bad value prints one line on stderr and exits 2.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys

# The app's arrays are lecture-sized (the TINY model, n <= 64 shards): a BLAS thread pool only
# slows what it computes (the TP forward scenario builds in 9 ms on one thread, 12.5 ms on two;
# decode 12 vs 18 ms, measured on a 2-core machine), and OpenBLAS starts its workers when numpy is
# imported, where they spin on the cores the window is being built on (about 60 ms of CPU).
# One thread unless the user asked for more; set before main() imports numpy (through simcore).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

MIN_W, MIN_H, MAX_SIDE = 1280, 720, 7680


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one clear line, exit 2 (argparse would print the whole usage)
        raise _Usage(message)


def _parser() -> _Parser:
    from simcore.algorithms import OPS, all_algorithm_names  # the registry: no copy of the names here

    from .core.scenarios import KINDS
    from .tab_list import TABS  # the window's tab list (Qt-free): no copy here

    p = _Parser(prog="shard-lab", description="Tensor parallelism you can watch.")
    p.add_argument("file", nargs="?", default=None, metavar="FILE.json", help="a saved scenario or a saved run (trace) to open")
    p.add_argument("--scenario", default="all-gather", choices=KINDS, metavar="KIND",
                   help="one of: " + ", ".join(KINDS) + " (default all-gather)")
    p.add_argument("--n", default=8, type=int, help="devices (default 8)")
    p.add_argument("--algo", default=None, choices=all_algorithm_names(),
                   help="the collective's algorithm (default: the op's own — "
                        + ", ".join(f"{k}: {op.default}" for k, op in OPS.items()) + "; the matmul case 3, tp-forward "
                        "and decode: their all-reduce's, ring)")
    p.add_argument("--bytes", default="1MiB", help="message size S, e.g. 64KiB, 1MiB, 2GB (default 1MiB)")
    p.add_argument("--link", default="nvlink4", help="link preset (default nvlink4)")
    p.add_argument("--machine", default="", metavar="KEY",
                   help="a real machine instead of one switch: dgx-h100, gb200-nvl72, tpu-v5e-16x16, tpu-v4-4x4x4 "
                        "(its own algorithm unless --algo names one it offers)")
    p.add_argument("--mesh", default="X=2,Y=4", help="--scenario mesh: axes and sizes, e.g. X=2,Y=4 (default)")
    p.add_argument("--program", default="redistribute",
                   help="--scenario mesh: a registered mesh program (default redistribute; "
                        "python -m simcore mesh --list lists them)")
    p.add_argument("--param", action="append", default=[], metavar="K=V",
                   help="--scenario mesh: a program parameter, e.g. case=2 (repeatable)")
    p.add_argument("--step", default=None, help="show step K in flight; 0 = the start")
    p.add_argument("--tab", default=None, choices=TABS, help="the view to show: " + ", ".join(TABS))
    p.add_argument("--lang", default=None, choices=("en", "zh"), help="interface language")
    p.add_argument("--screenshot", default=None, metavar="PATH", help="save the window as PNG and exit")
    p.add_argument("--size", default="1600x900", help="window size for --screenshot, WxH (at least 1280x720)")
    # -- classroom exports (app/classroom/export.py) --
    p.add_argument("--export-gif", default=None, metavar="PATH", help="write the whole animation as a GIF and exit")
    p.add_argument("--export-mp4", default=None, metavar="PATH", help="write the whole animation as an MP4 and exit")
    p.add_argument("--fps", default=12.0, type=float, help="frame rate of --export-gif/--export-mp4 (default 12)")
    # -- decks (app/deck): the lecture as scenes, and its handout --
    p.add_argument("--deck", default=None, metavar="DECK",
                   help="open a deck: 'lecture' (built in) or a deck file; F5 presents it")
    p.add_argument("--export-pdf", default=None, metavar="PATH", help="write the deck's handout as a PDF and exit")
    p.add_argument("--export-pngs", default=None, metavar="DIR",
                   help="write the deck's pages as numbered PNGs and exit")
    p.add_argument("--export-web", default=None, metavar="DIR",
                   help="write the deck as an offline web page (index.html, pictures, script) into DIR and exit")
    p.add_argument("--force", action="store_true", help="with --export-web: write into DIR even if it is not empty")
    p.add_argument("--page", default="a4", choices=("a4", "letter"), help="the handout's paper (default a4)")
    p.add_argument("--frames-per-step", default=6, type=int,
                   help="animation frames per ring step (default 6; 1 = one frame per step)")
    return p


def _fail(msg: str) -> int:
    print(f"shard-lab: error: {msg}", file=sys.stderr)
    return 2


def _parse_size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text or "")
    if not m:
        raise ValueError(f"--size {text!r}: write it as WIDTHxHEIGHT, e.g. 1920x1080")
    w, h = int(m.group(1)), int(m.group(2))
    if w < MIN_W or h < MIN_H:
        raise ValueError(f"--size {w}x{h}: a screenshot is at least {MIN_W}x{MIN_H}")
    if w > MAX_SIDE or h > MAX_SIDE:
        raise ValueError(f"--size {w}x{h}: at most {MAX_SIDE} pixels a side")
    return w, h


def _parse_step(text):
    if text is None:
        return None
    try:
        k = int(text)
    except ValueError:
        raise ValueError(f"--step {text!r}: give a whole number of steps (0 = the start)") from None
    if k < 0:
        raise ValueError(f"--step {k}: steps count from 0 (the start)")
    return k


STEP_SHOT_AT = 0.3  # how far into step K `--step K` shows it: blocks well on their way


def step_time(stops: list, k: int) -> float:
    """Simulated time that shows step k in flight (0.3 of the way from boundary k−1 to k)."""
    if k == 0:
        return 0.0
    return stops[k - 1] + STEP_SHOT_AT * (stops[k] - stops[k - 1])


_gc_paused = []  # [True] while main() holds the cyclic collector off


def main(argv=None) -> int:
    # Starting allocates some 50,000 objects that live as long as the app (modules, Qt's enum
    # types, widgets), and the cyclic collector, left on, walks them again and again: about a
    # hundred collections before the first paint. It is off while the window is built, and on
    # again once the first picture is on screen, or when main returns.
    if gc.isenabled():
        gc.disable()
        _gc_paused.append(True)
    try:
        return _main(argv)
    finally:
        _resume_gc()


def _resume_gc():
    from .worker import collects_on_the_gui_thread  # Qt: this module imports none before main()

    if _gc_paused:
        _gc_paused.clear()
        if not collects_on_the_gui_thread():  # a build thread ran meanwhile: its timer collects
            gc.enable()


def _after_first_paint(window, then):
    """Call `then` from the event loop once `window` has painted for the first time (the
    watcher is the window's child, and leaves it when it has seen the paint)."""
    from PySide6.QtCore import QEvent, QObject, QTimer

    class Watch(QObject):
        def eventFilter(self, obj, e):
            if e.type() == QEvent.Paint:
                window.removeEventFilter(self)
                QTimer.singleShot(0, then)
            return False

    watch = Watch(window)
    window.installEventFilter(watch)
    return watch


def _main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = _parser().parse_args(argv)
        size = _parse_size(args.size)
        step = _parse_step(args.step)
        from simcore.scenarios import parse_bytes

        nbytes = parse_bytes(args.bytes)
    except _Usage as e:
        return _fail(str(e))
    except ValueError as e:
        return _fail(str(e))
    given = {a.split("=")[0] for a in argv}
    if args.deck is None and args.file and _is_deck_file(args.file):  # a deck by its schema
        args.deck, args.file = args.file, None
    if (args.export_pdf or args.export_pngs) and not args.deck:
        return _fail("--export-pdf and --export-pngs write a deck's handout: give --deck lecture or a deck file")
    if args.export_web and not args.deck:
        return _fail("--export-web writes a deck as a web page: give --deck lecture or a deck file")
    scenario_flags = given & {"--scenario", "--n", "--algo", "--bytes", "--link"}
    if args.file and scenario_flags:
        return _fail(f"{args.file}: a scenario file sets the scenario; drop {', '.join(sorted(scenario_flags))}")

    exporting = bool(args.export_gif or args.export_mp4)
    if exporting and not (0 < args.fps <= 60 and 1 <= args.frames_per_step <= 120):
        return _fail("--fps must be in (0, 60] and --frames-per-step in 1..120")
    headless = args.screenshot or exporting or args.export_pdf or args.export_pngs or args.export_web
    if headless and not os.environ.get("QT_QPA_PLATFORM") and not _has_display():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"

    missing = _missing_system_library()
    if missing:
        print(f"shard-lab: error: {missing}", file=sys.stderr)
        return 1
    from PySide6.QtWidgets import QApplication

    from .classroom.presentation import STYLE
    from .state import Playback, Scenario, ScenarioModel

    app = QApplication.instance()
    if app is None:  # Fusion from the start: setting it later costs QStyle's enums (presentation.apply_look)
        app = QApplication([sys.argv[0] if sys.argv else "shard-lab", "-style", STYLE])
        app.setProperty("shardLabStyle", STYLE)
    app.setApplicationName("Shard Lab")
    app.setOrganizationName("Shard Lab")
    sf = None
    try:
        if args.file:
            from . import scenario_io

            sf = scenario_io.load_scenario(args.file)  # ScenarioFileError (a ValueError): one sentence
            if sf.link_spec is not None:
                scenario_io.register_link(sf.scenario.link, sf.link_spec)
            sc = sf.scenario
        else:
            from .core.scenarios import default_algo, fit_bytes

            if "--bytes" not in given:  # the default size adapts to n
                nbytes = fit_bytes(nbytes, args.n, args.scenario)
            sc = Scenario(kind=args.scenario, n=args.n, algo=args.algo or default_algo(args.scenario), nbytes=nbytes,
                          link=args.link)
            if args.scenario == "mesh":  # n follows the mesh; the machine is the mesh's (validate says if it fits)
                sc = sc.with_changes(mesh=args.mesh, program=args.program, params=" ".join(args.param),
                                     topology=args.machine).validate()
            elif args.machine:  # the machine's links; its own algorithm for the op and size unless --algo chose one
                from .core.scenarios import machine_choice

                sc = sc.with_changes(topology=args.machine, **({"algo": args.algo} if args.algo else {}))
                choice = None if args.algo else machine_choice(sc)
                if choice is not None:
                    sc = sc.with_changes(algo=choice[0])
                sc.validate()
        model = ScenarioModel(sc)
        if getattr(sf, "run", None) is not None:  # a saved run (scenario_io.RunFile): play its own trace
            model.run = sf.run
    except ValueError as e:
        return _fail(str(e))
    playback = Playback(model)
    if sf is not None and sf.step is not None and step is None:
        if sf.step > playback.n_steps:
            return _fail(f"{args.file}: step {sf.step}, but this scenario has {playback.n_steps} steps")
        playback.seek_step(sf.step)
    if step is not None and step > playback.n_steps:
        return _fail(f"--step {step}: this scenario has {playback.n_steps} steps")
    from .i18n import set_language_or_english

    set_language_or_english(app, args.lang)  # None: the language saved last time, else the system locale

    from .main_window import MainWindow
    from .classroom.presentation import apply_look

    apply_look(app)  # style, palette and stylesheet before the widgets exist: they are polished once
    win = MainWindow(model, playback)
    if step is not None:
        playback.seek(step_time(playback.stops, step))
    if args.tab and not win.select_tab(args.tab):
        return _fail(f"--tab {args.tab}: that view is not available here")
    if args.deck:
        code = _open_deck(win, args, size)
        if code is not None:
            return code
    if args.screenshot:
        win.resize(*size)
        win.show()
        for _ in range(3):
            app.processEvents()
        ok = win.save_screenshot(args.screenshot)
        win.close()
        if not ok:
            print(f"shard-lab: error: could not write {args.screenshot}", file=sys.stderr)
            return 1
        return 0
    if exporting:
        return _export_animations(win, args)
    # classroom: theme, size, geometry and — when no scenario was given — the last scenario
    explicit = scenario_flags or args.file or args.deck or "--step" in given  # (a deck shows its own first scene)
    win.classroom.restore_session(restore_scenario=not explicit)
    win.show()
    _after_first_paint(win, _resume_gc)
    return app.exec()


def _is_deck_file(path) -> bool:
    """Whether FILE says it is a deck (its schema); anything else goes on to the scenario reader."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    from .deck.model import is_deck_text

    return is_deck_text(head)


def _open_deck(win, args, size):
    """--deck NAME|FILE: show its first scene; with --export-pdf / --export-pngs write the handout and
    return the exit code (None: go on to the window)."""
    from .deck.model import DeckFileError, builtin_path
    from .deck.scene_open import load_deck

    try:
        path = args.deck if os.path.sep in args.deck or args.deck.endswith(".json") else builtin_path(args.deck)
        deck = load_deck(path)
    except DeckFileError as e:
        return _fail(str(e))
    if args.export_web:
        return _export_web(win, deck, args, size)
    if not (args.export_pdf or args.export_pngs):
        if not win.deck.set_deck(deck):
            return _fail(win.deck.last_error)
        return None
    from .deck.handout import PICTURE_SIZE, export_handout, export_pngs

    win.resize(*(size if "--size" in sys.argv else PICTURE_SIZE))
    win.show()
    try:
        if args.export_pdf:
            skipped = export_handout(win, deck, args.export_pdf, args.lang or "en", args.page)
            print(f"shard-lab: wrote {args.export_pdf} ({len(deck.scenes) - len(skipped)} pages)")
        if args.export_pngs:
            paths, skipped = export_pngs(win, deck, args.export_pngs, args.lang or "en")
            print(f"shard-lab: wrote {len(paths)} pages to {args.export_pngs}")
    except Exception as e:  # noqa: BLE001 — one sentence, exit 1
        print(f"shard-lab: error: {e}", file=sys.stderr)
        return 1
    for why in skipped:
        print(f"shard-lab: skipped: {why}", file=sys.stderr)
    win.close()
    return 0


def _export_web(win, deck, args, size) -> int:
    """--export-web DIR: the deck as an offline web page (app/deck/web_export.py); exit 0, 1 on an error."""
    from .deck.handout import PICTURE_SIZE
    from .deck.web_export import WebExportError, check_folder, export_web, unmake_folder

    made = not os.path.exists(args.export_web)
    try:
        check_folder(args.export_web, args.force)  # before the window is shown: a refusal is one line
    except WebExportError as e:
        print(f"shard-lab: error: {e}", file=sys.stderr)
        return 1
    win.resize(*(size if "--size" in sys.argv else PICTURE_SIZE))
    win.show()
    try:
        out = export_web(win, deck, args.export_web, force=True)
    except Exception as e:  # noqa: BLE001 — one sentence, exit 1 (as the handout)
        unmake_folder(args.export_web, made)
        print(f"shard-lab: error: {e}", file=sys.stderr)
        return 1
    for why in out.skipped:
        print(f"shard-lab: skipped: {why}", file=sys.stderr)
    print(f"shard-lab: wrote {out.index} ({out.scenes} scenes, {out.frames} steps, {out.pictures} pictures, "
          f"{out.bytes / 1e6:.1f} MB in {out.seconds:.0f} s)")
    win.close()
    return 0


def _export_animations(win, args) -> int:
    """--export-gif / --export-mp4: write the animation headless (app/classroom/export.py), exit 0 or 1."""
    from .classroom.export import ExportError, export_animation

    for path in (args.export_gif, args.export_mp4):
        if not path:
            continue
        try:
            frames = export_animation(win, path, fps=args.fps, frames_per_step=args.frames_per_step)
        except ExportError as e:
            print(f"shard-lab: error: {e}", file=sys.stderr)
            return 1
        print(f"shard-lab: wrote {path} ({frames} frames)")
    win.close()
    return 0


# the shared libraries Qt's X11 plugin loads that minimal Linux installs often lack, with the
# Debian/Ubuntu package that has each (Qt's own error names only the first and aborts)
XCB_LIBS = {"libxcb-cursor.so.0": "libxcb-cursor0", "libxcb-icccm.so.4": "libxcb-icccm4",
            "libxcb-keysyms.so.1": "libxcb-keysyms1", "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
            "libxcb-image.so.0": "libxcb-image0", "libxcb-render-util.so.0": "libxcb-render-util0",
            "libxcb-shape.so.0": "libxcb-shape0", "libxcb-randr.so.0": "libxcb-randr0",
            "libxcb-xkb.so.1": "libxcb-xkb1"}


def _missing_system_library() -> str | None:
    """One sentence naming what to install when Qt could not open an X11 window, else None."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM", "xcb") != "xcb":
        return None
    if os.environ.get("WAYLAND_DISPLAY") or not os.environ.get("DISPLAY"):
        return None
    import ctypes

    missing = []
    for soname, package in XCB_LIBS.items():
        try:
            ctypes.CDLL(soname)
        except OSError:
            missing.append(package)
    if not missing:
        return None
    return (f"Qt needs system libraries to open a window on X11 that are not installed: "
            f"sudo apt-get install {' '.join(missing)} (Debian/Ubuntu; Fedora: xcb-util-cursor "
            f"xcb-util-wm xcb-util-keysyms). Screenshots and exports work without them (--screenshot PATH).")


def _has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


if __name__ == "__main__":
    sys.exit(main())
