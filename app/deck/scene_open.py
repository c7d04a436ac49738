"""
Opening a deck's scene: its scenario checked as a scenario file's is (app/scenario_io.py), then
made the window's scenario at the scene's tab and step. Raises `SceneError` (one sentence naming
the scene) when it cannot, and changes nothing then.
"""

from __future__ import annotations

import os

from .. import scenario_io
from .model import Deck, DeckFileError, Scene

STEP_SHOT_AT = 0.3  # as `--step K` (app/__main__.step_time): the step's blocks well on their way


class SceneError(ValueError):
    """A scene that cannot open; str(e) names it and says why."""


def scene_time(stops: list, k: int) -> float:
    """Simulated time that shows step k in flight (0 = the start; past the end: the end)."""
    if k <= 0 or not stops:
        return 0.0
    k = min(k, len(stops) - 1)
    return stops[k - 1] + STEP_SHOT_AT * (stops[k] - stops[k - 1])


def scenario_file(deck: Deck, i: int) -> scenario_io.ScenarioFile:
    """The checked scenario of scene i (SceneError if its scenario or file is refused)."""
    scene = deck.scenes[i]
    name = f"Scene {i + 1} ({scene.title.en})"
    try:
        if scene.scenario is not None:
            sc, spec = scenario_io.scenario_from_dict(scene.scenario)
            return scenario_io.ScenarioFile(sc, None, "", spec)
        path = scene.file if os.path.isabs(scene.file) else os.path.join(deck.folder or ".", scene.file)
        return scenario_io.load_scenario(path)
    except (ValueError, DeckFileError) as e:
        raise SceneError(f"{name} cannot open: {e}") from None


def open_scene(window, deck: Deck, i: int) -> Scene:
    """Make scene i the window's picture: its scenario, its tab, its step in flight."""
    scene = deck.scenes[i]
    sf = scenario_file(deck, i)
    refused = []
    window.model.error.connect(refused.append)
    try:
        ok = scenario_io.apply(window.model, None, sf)
    finally:
        window.model.error.disconnect(refused.append)
    if not ok:
        raise SceneError(f"Scene {i + 1} ({scene.title.en}) cannot open: {refused[0] if refused else '?'}")
    pb = window.playback
    pb.pause()
    if scene.tab and not window.select_tab(scene.tab):
        raise SceneError(f"Scene {i + 1} ({scene.title.en}): the {scene.tab} view is not available here.")
    pb.seek(scene_time(pb.stops, scene.step))
    return scene
