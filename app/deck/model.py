"""
A deck: the lecture as an ordered list of scenes (Qt-free; the widgets are in app/deck/ui.py).

A deck file is small JSON, read with json.loads and checked field by field (never pickle or
eval), in the versioned style of a scenario file (app/scenario_io.py):

    {"schema": "shard-lab-deck", "version": 1,
     "title": {"en": "Tensor parallelism", "zh": "张量并行"},
     "scenes": [
        {"id": "all-gather",                                  # optional: a short key (tests, links)
         "title": {"en": "All-gather", "zh": "All-gather（全收集）"},  # optional: "Scene k" if none
         "points": [{"en": "…", "zh": "…"}, …],               # optional: up to 4 talking points
         "scenario": {"kind": "all-gather", "n": 8, …},       # a scenario, as in a scenario file
         #  or "file": "ring8.json"                          # a scenario file beside the deck
         #  or "run": "my_ring.json.gz"                      # a saved run (a trace file) beside the deck
         "tab": "ring",                                       # optional: the view to show
         "step": 3,                                           # optional: open with step 3 in flight
         "at": 0.3,                                           # optional: how far into that step (0-1]
         "walk": true}                                        # optional: PageDown walks the steps first
     ]}

`loads(text)` returns a `Deck` or raises `DeckFileError` with one sentence; a scene's scenario is
checked only when the scene is opened (app/deck/scene_open.py), so one scene that cannot open is named
and skipped while the rest of the deck works.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ..tab_list import TABS  # a scene's "tab" is one of the window's

SCHEMA = "shard-lab-deck"
VERSION = 1
MAX_FILE_BYTES = 1024 * 1024  # a deck of a hundred scenes is under 100 KB
MAX_SCENES = 200
MAX_TEXT = 600  # characters of one title or talking point
MIN_POINTS, MAX_POINTS = 0, 4  # the built-in lecture has 2 to 4 a scene; a deck of one's own need not
LANGS = ("en", "zh")
TOP_KEYS = {"schema", "version", "title", "scenes", "note"}
SCENE_KEYS = {"id", "title", "points", "scenario", "file", "run", "tab", "step", "at", "walk"}
STEP_AT = 0.3  # a scene opens this far into its step (as `--step K`): the step's blocks well on their way
BUILTIN = "lecture"  # `shard-lab --deck lecture`


class DeckFileError(ValueError):
    """A file that is not a valid deck; str(e) is one sentence for the user."""


@dataclass(frozen=True)
class Text:
    """One text in English and Chinese."""

    en: str
    zh: str

    def get(self, lang: str) -> str:
        return self.zh if lang.startswith("zh") and self.zh else self.en

    def to_dict(self) -> dict:
        return {"en": self.en, "zh": self.zh}


@dataclass(frozen=True)
class Scene:
    """What one scene opens: a scenario dict (checked when opened), a scenario file or a saved run
    (a trace file: app/opened_run.py), at a tab and step."""

    title: Text
    points: tuple  # of Text, 0 to 4
    scenario: dict | None = None
    file: str = ""  # a scenario file, relative to the deck's folder
    tab: str = ""  # "" = the tab the scenario opens on
    step: int = 0  # open with this step in flight (0 = the start)
    walk: bool = True  # PageDown goes through the scene's steps before the next scene
    id: str = ""
    run: str = ""  # a saved run (trace file), relative to the deck's folder
    at: float = STEP_AT  # how far into the step (1 = its end, the step boundary PageDown stops at)

    def to_dict(self) -> dict:
        d = {"id": self.id} if self.id else {}
        d["title"] = self.title.to_dict()
        d["points"] = [p.to_dict() for p in self.points]
        if self.scenario is not None:
            d["scenario"] = dict(self.scenario)
        elif self.run:
            d["run"] = self.run
        else:
            d["file"] = self.file
        if self.tab:
            d["tab"] = self.tab
        if self.step:
            d["step"] = self.step
            if self.at != STEP_AT:
                d["at"] = self.at
        if not self.walk:
            d["walk"] = False
        return d


@dataclass(frozen=True)
class Deck:
    title: Text
    scenes: tuple = ()
    folder: str = ""  # where the deck file is: scene files are relative to it
    note: str = ""
    path: str = field(default="", compare=False)

    def to_dict(self) -> dict:
        d = {"schema": SCHEMA, "version": VERSION, "title": self.title.to_dict(),
             "scenes": [s.to_dict() for s in self.scenes]}
        if self.note:
            d["note"] = self.note
        return d

    def with_scene(self, scene: Scene) -> Deck:
        return Deck(self.title, self.scenes + (scene,), self.folder, self.note, self.path)


class _English:
    """Qt-free, the texts stay English; app/deck/scene_open.py puts QCoreApplication here."""

    @staticmethod
    def translate(context: str, text: str) -> str:
        return text


TRANSLATOR = _English


def _tr(text):
    return TRANSLATOR.translate("DeckFile", text)


def deck_error(text: str, *args) -> DeckFileError:
    for k, a in enumerate(args, 1):
        text = text.replace(f"%{k}", str(a))
    return DeckFileError(text)


def _where(i):
    return _tr("the deck") if i is None else _tr("scene %1").replace("%1", str(i + 1))


def _text(v, what: str, i=None) -> Text:
    if isinstance(v, str):  # one language only: shown in both
        v = {"en": v}
    if not isinstance(v, dict) or not v or set(v) - set(LANGS) or "en" not in v:
        raise deck_error(_tr("%1: \"%2\" must be an object with \"en\" (and \"zh\") texts."), _where(i), what)
    out = {}
    for lang in LANGS:
        s = v.get(lang, "")
        if not isinstance(s, str) or len(s) > MAX_TEXT or (lang == "en" and not s.strip()):
            raise deck_error(_tr("%1: \"%2\" must be a text of at most %3 characters."), _where(i), f"{what}.{lang}",
                       MAX_TEXT)
        out[lang] = s.strip()
    return Text(out["en"], out["zh"])


def _scene(v, i: int) -> Scene:
    if not isinstance(v, dict):
        raise deck_error(_tr("Scene %1 must be an object."), i + 1)
    unknown = sorted(set(v) - SCENE_KEYS)
    if unknown:
        raise deck_error(_tr("Scene %1: unknown field %2."), i + 1, json.dumps(unknown[0]))
    # a scene without a title is named by its number, in both languages (README: neither is required)
    title = _text(v["title"], "title", i) if "title" in v else Text(f"Scene {i + 1}", f"第 {i + 1} 页")
    pts = v.get("points", [])
    if not isinstance(pts, list) or not MIN_POINTS <= len(pts) <= MAX_POINTS:
        raise deck_error(_tr("Scene %1: \"points\" must be a list of %2 to %3 talking points."), i + 1, MIN_POINTS, MAX_POINTS)
    points = tuple(_text(p, "points", i) for p in pts)
    if ("scenario" in v) + ("file" in v) + ("run" in v) != 1:
        raise deck_error(_tr("Scene %1 must have one of a \"scenario\", a \"file\" or a \"run\"."), i + 1)
    run = v.get("run", "")
    if "run" in v and (not isinstance(run, str) or not run.strip() or len(run) > 400 or "\0" in run):
        raise deck_error(_tr("Scene %1: \"run\" must name a saved run (a trace file)."), i + 1)
    scenario, file = v.get("scenario"), v.get("file", "")
    if scenario is not None and not isinstance(scenario, dict):
        raise deck_error(_tr("Scene %1: \"scenario\" must be an object."), i + 1)
    if "file" in v and (not isinstance(file, str) or not file.strip() or len(file) > 400 or "\0" in file):
        raise deck_error(_tr("Scene %1: \"file\" must name a scenario file."), i + 1)
    tab = v.get("tab", "")
    if tab not in ("",) + TABS:
        raise deck_error(_tr("Scene %1: \"tab\" must be one of %2, not %3."), i + 1, ", ".join(TABS), json.dumps(tab))
    step = v.get("step", 0)
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= 100000:
        raise deck_error(_tr("Scene %1: \"step\" must be a whole number >= 0."), i + 1)
    at = v.get("at", STEP_AT)
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not 0 < at <= 1:
        raise deck_error(_tr("Scene %1: \"at\" must be a number above 0 and at most 1 (how far into the step)."), i + 1)
    walk = v.get("walk", True)
    if not isinstance(walk, bool):
        raise deck_error(_tr("Scene %1: \"walk\" must be true or false."), i + 1)
    sid = v.get("id", "")
    if not isinstance(sid, str) or len(sid) > 60:
        raise deck_error(_tr("Scene %1: \"id\" must be a short text."), i + 1)
    return Scene(title, points, scenario, file, tab, step, walk, sid, run, float(at))


def loads(text: str, folder: str = "") -> Deck:
    """Parse and check a deck document (see the module docstring)."""
    try:
        doc = json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as e:
        raise deck_error(_tr("This is not a deck file: it is not valid JSON (line %1, column %2)."), e.lineno,
                   e.colno) from None
    except RecursionError:
        raise deck_error(_tr("This is not a deck file: its JSON is nested far too deeply.")) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise deck_error(_tr("This is not a Shard Lab deck file (its \"schema\" is not \"%1\")."), SCHEMA)
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise deck_error(_tr("The deck file has no valid \"version\"."))
    if version != VERSION:
        raise deck_error(_tr("Deck file version %1 is not supported: this Shard Lab reads version %2."), version, VERSION)
    unknown = sorted(set(doc) - TOP_KEYS)
    if unknown:
        raise deck_error(_tr("Unknown field %1 in the deck file."), json.dumps(unknown[0]))
    scenes = doc.get("scenes")
    if not isinstance(scenes, list) or not 1 <= len(scenes) <= MAX_SCENES:
        raise deck_error(_tr("\"scenes\" must be a list of 1 to %1 scenes."), MAX_SCENES)
    title = _text(doc.get("title", {"en": "Shard Lab deck"}), "title")
    note = doc.get("note", "")
    if not isinstance(note, str):
        raise deck_error(_tr("\"note\" must be text."))
    return Deck(title, tuple(_scene(s, i) for i, s in enumerate(scenes)), folder, note)


def dumps(deck: Deck) -> str:
    return json.dumps(deck.to_dict(), indent=2, ensure_ascii=False) + "\n"


def is_deck_text(text: str) -> bool:
    """Whether a JSON text says it is a deck (for dispatching a FILE argument by its schema)."""
    return f'"{SCHEMA}"' in text[:4096]


def builtin_path(name: str = BUILTIN) -> str:
    """The built-in deck `name`: resources/decks/NAME.json (in the source tree resources/ is beside
    app/; installed, shard_lab/resources/ is inside the package, as pyproject's package-dir says)."""
    app_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for root in (os.path.join(app_dir, "resources"), os.path.join(os.path.dirname(app_dir), "resources")):
        p = os.path.join(root, "decks", f"{name}.json")
        if os.path.exists(p):
            return p
    raise deck_error(_tr("There is no built-in deck %1."), json.dumps(name))


def package_folders() -> list[str]:
    """The program's own folders: the app package and its resources (a built-in deck's folder among
    them). A deck is never written there: it would overwrite the shipped lecture, or vanish with an
    update of the program."""
    app_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = [os.path.join(app_dir, "resources"), os.path.join(os.path.dirname(app_dir), "resources")]
    return [app_dir] + [r for r in roots if os.path.isdir(r)]


def in_package(path: str) -> bool:
    """Whether `path` lies in one of the program's own folders (package_folders)."""
    p = os.path.realpath(os.path.abspath(path))
    return any(p == f or p.startswith(f + os.sep) for f in map(os.path.realpath, package_folders()))
