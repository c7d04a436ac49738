"""
Opening a deck's scene: its scenario checked as a scenario file's is (app/scenario_io.py), then
made the window's scenario at the scene's tab and step. Raises `SceneError` (one sentence naming
the scene) when it cannot, and changes nothing then.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import replace

from PySide6.QtCore import QCoreApplication

from .. import scenario_io
from ..tab_list import scenario_tab
from . import model
from .model import STEP_AT, Deck, DeckFileError, Scene, deck_error

model.TRANSLATOR = QCoreApplication  # the deck file's sentences in the app's language (context DeckFile)


def _tr(text):
    return QCoreApplication.translate("DeckFile", text)

STEP_SHOT_AT = STEP_AT  # as `--step K` (app/__main__.step_time): the step's blocks well on their way


class SceneError(ValueError):
    """A scene that cannot open; str(e) names it and says why."""


def scene_time(stops: list, k: int, at: float = STEP_SHOT_AT) -> float:
    """Simulated time `at` of the way through step k (0 = the start; past the end: the end; at = 1:
    the boundary that ends step k, exactly)."""
    if k <= 0 or not stops:
        return 0.0
    k = min(k, len(stops) - 1)
    if at >= 1:
        return stops[k]
    return stops[k - 1] + at * (stops[k] - stops[k - 1])


def scene_step(stops: list, t: float, eps: float = 0.0) -> tuple[int, float]:
    """(k, at) with scene_time(stops, k, at) == t: the step being shown at time t and how far into
    it (a boundary is the end of the step before it, at = 1; the start is step 0)."""
    k = bisect.bisect_left(stops, t - eps)  # the first boundary at or after t
    if k == 0 or not stops:
        return 0, STEP_SHOT_AT
    if k >= len(stops):
        return len(stops) - 1, 1.0
    if abs(stops[k] - t) <= eps:
        return k, 1.0
    return k, (t - stops[k - 1]) / (stops[k] - stops[k - 1])


def scenario_file(deck: Deck, i: int) -> scenario_io.ScenarioFile:
    """The checked scenario of scene i (SceneError if its scenario or file is refused)."""
    scene = deck.scenes[i]
    try:
        if scene.run:
            return _run_file(deck, scene)
        if scene.scenario is not None:
            sc, spec = scenario_io.scenario_from_dict(scene.scenario)
            return scenario_io.ScenarioFile(sc, None, "", spec)
        path = scene.file if os.path.isabs(scene.file) else os.path.join(deck.folder or ".", scene.file)
        return scenario_io.load_scenario(path)
    except (ValueError, DeckFileError) as e:
        raise SceneError(_tr("Scene %1 (%2) cannot open: %3").replace("%1", str(i + 1))
                         .replace("%2", scene.title.en).replace("%3", str(e))) from None


def _run_file(deck: Deck, scene: Scene) -> scenario_io.RunFile:
    """A run scene's saved run, read and checked (ValueError, one sentence naming the file)."""
    path = scene.run if os.path.isabs(scene.run) else os.path.join(deck.folder or ".", scene.run)
    if not os.path.isfile(path):
        raise ValueError(_tr("there is no saved run %1 beside the deck.").replace("%1", scene.run))
    rf = scenario_io.load_run_file(path)  # ScenarioFileError (a ValueError) for a bad trace
    if rf is None:
        raise ValueError(_tr("%1 is not a saved run (a trace file).").replace("%1", scene.run))
    return rf


def scene_tab(scene: Scene, sf) -> str:
    """The tab scene opens at: its own "tab", else the one its scenario opens on in a new window
    (the weight slices for a TP forward, the decode latency for decode, else the ring). `sf` is
    the scene's scenario file (scenario_file); a saved run's scenario is the run's own."""
    run = getattr(sf, "run", None)
    return scene.tab or scenario_tab((run.scenario if run is not None else sf.scenario).kind)


def open_scene(window, deck: Deck, i: int) -> Scene:
    """Make scene i the window's picture: its scenario, its tab (scene_tab), its step in flight."""
    scene = deck.scenes[i]
    sf = scenario_file(deck, i)
    tab = scene_tab(scene, sf)
    if not window.has_tab(tab):
        raise SceneError(_tr("Scene %1 (%2): the %3 view is not available here.").replace("%1", str(i + 1))
                         .replace("%2", scene.title.en).replace("%3", tab))
    refused = []
    window.model.error.connect(refused.append)
    try:
        ok = scenario_io.apply(window.model, None, sf)
    finally:
        window.model.error.disconnect(refused.append)
    if not ok:
        raise SceneError(_tr("Scene %1 (%2) cannot open: %3").replace("%1", str(i + 1))
                         .replace("%2", scene.title.en).replace("%3", refused[0] if refused else "?"))
    pb = window.playback
    pb.pause()
    window.select_tab(tab)  # at once (a view built for it now starts from the scenario being built)

    def at_its_step():
        # the app builds a scenario on the worker thread: its stops are known, and the window's
        # own choice of tab for it made, only once its run is on screen (at once if it already is)
        window.select_tab(tab)
        reset_view_settings(window)
        pb.pause()
        pb.seek(scene_time(pb.stops, scene.step, scene.at))

    window.model.after_build(at_its_step)
    return scene


def reset_view_settings(window):
    """Every view built so far back to the settings a new view of the scene's scenario starts with
    (`reset_settings()`: the decode plot's model, chip, algorithm…, the weight slices' matrix and layer):
    a scene names only its scenario, tab and step, so nothing else may come from the scene before
    (the decode scene after the recursive-doubling one kept rd, "best n = 64, 6.9 ms")."""
    for i in range(window.tabs.count()):
        page = window.tabs.widget(i)
        if not getattr(page, "built", False):
            continue  # built later, from the scenario then on screen
        reset = getattr(page.view(), "reset_settings", None)
        if reset is not None:
            reset()


def wait_for_scene(window, timeout_s: float = 60.0):
    """Let the event loop run until the scene last opened is built and at its step (the handout
    photographs it then); returns at once when nothing is being built."""
    import time

    from PySide6.QtCore import QElapsedTimer

    clock = QElapsedTimer()
    clock.start()
    while window.model.busy and clock.elapsed() < timeout_s * 1000:
        QCoreApplication.processEvents()
        time.sleep(0.005)  # the build holds the GIL in turns: give it the time, not a spinning loop


def load_deck(path: str) -> Deck:
    """Read and check a deck file (DeckFileError, one sentence naming the file, on any problem).
    Never touches the app's state: a refused file changes nothing."""
    from .. import files
    from .model import MAX_FILE_BYTES, loads

    name = os.path.basename(os.fspath(path))
    try:
        files.check_readable(path)  # stat only: a FIFO or /proc file would block the reading thread
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            raise deck_error(_tr("%1 is not a deck file: it is %2 bytes, a deck is under %3."), name, size, MAX_FILE_BYTES)
        raw = files.read_bytes(path, MAX_FILE_BYTES)
    except files.UnsafeFile as e:
        raise DeckFileError(str(e)) from None
    except OSError as e:
        raise deck_error(_tr("Cannot read %1: %2."), name, e.strerror or e) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise deck_error(_tr("%1 is not a deck file: it is not UTF-8 text."), name) from None
    try:
        deck = loads(text, folder=os.path.dirname(os.path.abspath(path)))
    except DeckFileError as e:
        raise DeckFileError(f"{name}: {e}") from None
    return Deck(deck.title, deck.scenes, deck.folder, deck.note, os.path.abspath(path))


def save_deck(path: str, deck: Deck):
    """Write a deck file atomically (ExportError with one sentence if it cannot)."""
    from ..files import atomic_write
    from .model import dumps

    folder = os.path.dirname(os.path.abspath(path))
    scenes = []
    for s in deck.scenes:
        # a run added from the window is named by its full path, and a file or run of the deck's own
        # folder by a path relative to it: in the saved deck both are relative to where it is written
        for field_name in ("run", "file"):
            name = getattr(s, field_name)
            if not name:
                continue
            full = name if os.path.isabs(name) else os.path.join(deck.folder or folder, name)
            try:
                s = replace(s, **{field_name: os.path.relpath(full, folder).replace(os.sep, "/")})
            except ValueError:  # another drive (Windows): the full path stays
                s = replace(s, **{field_name: os.path.abspath(full)})
        scenes.append(s)
    text = dumps(Deck(deck.title, tuple(scenes), folder, deck.note, deck.path))

    def write(tmp):
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)

    atomic_write(path, write)


def bad_scenes(deck: Deck) -> dict:
    """{scene index: one sentence} for every scene whose scenario is refused (checked, not run)."""
    out = {}
    for i in range(len(deck.scenes)):
        try:
            scenario_file(deck, i)
        except SceneError as e:
            out[i] = str(e)
    return out
