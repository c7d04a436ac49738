"""The deck as a web page, without a browser: what export_web writes (every step boundary in both
languages, pictures drawn at 2x by the window's own view, the app's texts as plain-tag trees, a
scene that cannot open named and skipped), the deck's text kept inert (a tag stays text), the bad
folders refused in one sentence (shell and app), and File › Export › Deck as a web page….
The page itself in Chromium: tests/test_web_export_browser.py."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402

from app import i18n  # noqa: E402
from app.classroom.export import image_to_array  # noqa: E402
from app.deck import web_export  # noqa: E402
from app.deck.model import builtin_path  # noqa: E402
from app.deck.scene_open import load_deck, open_scene  # noqa: E402
from app.deck.web_export import WebExportError, check_folder, data_js, export_web, plain, rich_tree  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_env")
HOSTILE_TITLE = "<script>window.__pwned=1</script> All-gather"
HOSTILE_POINT = '<img src=x onerror="window.__pwned=1"> & </script> "quoted"'


def small_deck(tmp_path, bad=True, hostile=False) -> str:
    """Scenes 2 and 4 of the lecture (all-gather n = 8, rd all-reduce at 8 KiB), with a scene between
    them that cannot open (1 MiB does not split into 7 chunks) when `bad`."""
    doc = json.load(open(builtin_path(), encoding="utf-8"))
    scenes = [doc["scenes"][1], dict(doc["scenes"][2]), doc["scenes"][4]]
    scenes[1]["scenario"] = dict(scenes[1]["scenario"], n=7)
    doc["scenes"] = scenes if bad else [scenes[0], scenes[2]]
    if hostile:
        doc["title"] = {"en": HOSTILE_TITLE, "zh": HOSTILE_TITLE}
        doc["scenes"][0] = dict(doc["scenes"][0], title={"en": HOSTILE_TITLE, "zh": "标题 " + HOSTILE_TITLE},
                                points=[{"en": HOSTILE_POINT, "zh": HOSTILE_POINT}, {"en": "plain", "zh": "普通"}])
    path = tmp_path / "deck.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return str(path)


def read_data(folder) -> dict:
    text = open(os.path.join(folder, "data.js"), encoding="utf-8").read()
    head = "window.SHARD_LAB_DECK = "
    assert text.startswith(head) and text.endswith(";\n")
    return json.loads(text[len(head):-2])


# -- the app's rich text, reduced -------------------------------------------------------------------
def test_rich_text_keeps_plain_tags_and_drops_attributes_scripts_and_unknown_tags():
    tree = rich_tree("<p style='font-size:120%; font-weight:bold'>Step <b>1</b> of 7</p>"
                     "<p onclick='x()'>α<sub>f</sub><br>b<script>alert(1)</script>"
                     "<img src=x onerror=alert(1)><a href='javascript:x'>link</a></p>")
    assert tree == [["p", "big bold", ["Step ", ["b", "", ["1"]], " of 7"]],
                    ["p", "", ["α", ["sub", "", ["f"]], ["br", "", []], "blink"]]]  # a dropped tag leaves its text
    assert plain("<p>a &lt;b&gt; <b>c</b></p>") == "a <b> c"  # an escaped tag is text, and stays text


def test_data_js_has_no_character_that_could_end_the_script_or_start_markup():
    data = {"t": "</script><script>alert(1)</script>", "z": "张量 & <img onerror=1>\u2028"}
    js = data_js(data)
    assert "<" not in js and ">" not in js and "&" not in js and "\u2028" not in js and "张量" in js
    assert json.loads(js[len("window.SHARD_LAB_DECK = "):-2]) == data


# -- what the export writes ---------------------------------------------------------------------
def test_a_deck_exports_every_step_in_both_languages_with_the_apps_own_pictures_and_texts(qtbot, tmp_path):
    w = make_window(qtbot, size=(1600, 900))
    deck = load_deck(small_deck(tmp_path))
    out = export_web(w, deck, str(tmp_path / "page"))
    folder = out.folder
    assert sorted(os.listdir(folder)) == ["data.js", "frames", "index.html", "page.css", "page.js"]
    assert out.scenes == 2 and len(out.skipped) == 1 and "Scene 2 (Reduce-scatter on a ring)" in out.skipped[0]
    data = read_data(folder)
    assert [s["number"] for s in data["scenes"]] == [1, 3] and data["skipped"] == out.skipped
    ag, rd = data["scenes"]
    # every step boundary of the run (the stops → walks in the window): ring all-gather n = 8 has 7
    # steps, recursive doubling at n = 8 has log2 8 = 3 (and the start)
    assert [len(ag["steps"]["en"]), len(ag["steps"]["zh"]), len(rd["steps"]["en"])] == [8, 8, 4]
    assert ag["start"] == 1 and ag["title"]["zh"] == "环上的 all-gather" and ag["tab"] == "ring"
    assert ag["numbers"]["rows"][0]["busbw"] and ag["numbers"]["time"] == "15.3 µs"
    # the texts as the app shows them at that boundary, in each language
    open_scene(w, deck, 0)
    w.playback.seek(w.playback.stops[3])
    QApplication.processEvents()
    assert ag["steps"]["en"][3]["live"] == plain(w.explain.live.text())
    assert ag["steps"]["en"][3]["explain"] == rich_tree(w.explain.body.text())
    assert ag["steps"]["en"][3]["status"][1] == plain(w.step_label.text())
    head_en = ag["steps"]["en"][3]["explain"][0][2][0]
    head_zh = ag["steps"]["zh"][3]["explain"][0][2][0]
    assert head_en.startswith("Step 3 of 7") and head_zh.startswith("第 3") and "Closed form" in json.dumps(
        ag["steps"]["en"][3]["explain"])
    formula = data["formulas"]
    assert "T =" in plain_tree(formula[ag["steps"]["en"][3]["formula"]])
    assert ag["steps"]["en"][3]["formula"] == ag["steps"]["en"][4]["formula"]  # one closed form, kept once
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for sc in (ag, rd):  # every frame's texts in its own language: none left over from the other
        for en_, zh_ in zip(sc["steps"]["en"], sc["steps"]["zh"]):
            texts = [(plain_tree(en_["explain"]), plain_tree(zh_["explain"])),
                     (plain_tree(formula[en_["formula"]]), plain_tree(formula[zh_["formula"]]))]
            for en_text, zh_text in texts:
                assert not cjk.search(en_text) and cjk.search(zh_text), (en_text, zh_text)
    # the pictures: 2× the view, the window's own paint of the ring at that step
    name = ag["steps"]["en"][3]["img"]
    img = QImage(os.path.join(folder, name))
    page = w.tabs.currentWidget()
    assert (img.width(), img.height()) == (2 * page.width(), 2 * page.height())
    assert data["sizes"][name] == [page.width(), page.height()]
    shown = image_to_array(page.grab().toImage())
    small = image_to_array(img.scaled(page.width(), page.height()))
    assert np.abs(shown.astype(int) - small.astype(int)).mean() < 12  # the same picture, 2× then scaled back
    en = [s["img"] for s in ag["steps"]["en"]]
    zh = [s["img"] for s in ag["steps"]["zh"]]
    assert len(set(en)) == 8 and not set(en) & set(zh)  # a picture per step, per language (its words differ)
    assert sorted(os.listdir(os.path.join(folder, "frames"))) == sorted({os.path.basename(n) for n in data["sizes"]})
    assert i18n.current_language() == "en"  # the window's language is back


def plain_tree(nodes) -> str:
    return "".join(n if isinstance(n, str) else plain_tree(n[2]) for n in nodes)


def test_identical_pictures_are_written_once(qtbot, tmp_path):
    """matmul case 1 sends nothing: its one frame; the decode scene's plot does not change from
    step to step: one picture for all its steps in a language."""
    doc = json.load(open(builtin_path(), encoding="utf-8"))
    doc["scenes"] = [s for s in doc["scenes"] if s.get("id") in ("matmul-1", "decode")]
    (tmp_path / "d.json").write_text(json.dumps(doc), encoding="utf-8")
    w = make_window(qtbot, size=(1600, 900))
    out = export_web(w, load_deck(str(tmp_path / "d.json")), str(tmp_path / "page"), langs=("en",))
    data = read_data(out.folder)
    mm, decode = data["scenes"]
    assert len(mm["steps"]["en"]) == 1 and len(decode["steps"]["en"]) > 40
    assert len({s["img"] for s in decode["steps"]["en"]}) == 1 and out.pictures == 2
    assert len({json.dumps(s["explain"]) for s in decode["steps"]["en"]}) > 10  # the texts still differ


def test_a_picture_seen_before_gets_the_same_file_and_a_new_one_a_new_file(qapp):
    from PySide6.QtGui import QColor

    from app.deck.web_export import Pictures

    a, b = QImage(40, 20, QImage.Format.Format_RGB32), QImage(40, 20, QImage.Format.Format_RGB32)
    a.fill(QColor("#E69F00"))
    b.fill(QColor("#E69F00"))
    pics = Pictures()
    first = pics.add(a)
    assert pics.add(b) == first  # the same pixels, drawn again: one file
    b.setPixelColor(3, 4, QColor("#000000"))  # one pixel differs: a picture of its own
    second = pics.add(b)
    assert second != first and pics.add(a) == first and len(pics.files) == 2
    assert QImage.fromData(pics.files[second]).pixelColor(3, 4) == QColor("#000000")  # lossless for flat colours


def test_the_deck_text_goes_into_data_js_as_escaped_json_never_into_the_html(qtbot, tmp_path):
    w = make_window(qtbot, size=(1600, 900))
    out = export_web(w, load_deck(small_deck(tmp_path, bad=False, hostile=True)), str(tmp_path / "page"),
                     langs=("en",))
    html = open(out.index, encoding="utf-8").read()
    assert "pwned" not in html and "<script>" not in html.replace('<script src="data.js" defer></script>', "") \
        .replace('<script src="page.js" defer></script>', "")
    assert "script-src 'self'" in html and "default-src 'none'" in html
    data = read_data(out.folder)
    assert data["title"]["en"] == HOSTILE_TITLE and data["scenes"][0]["points"][0]["en"] == HOSTILE_POINT
    assert "<" not in open(os.path.join(out.folder, "data.js"), encoding="utf-8").read()


# -- bad input ---------------------------------------------------------------------------------------
def test_a_folder_that_is_not_empty_a_file_and_a_place_that_cannot_be_written_are_refused(tmp_path):
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    with pytest.raises(WebExportError, match="is not empty") as e:
        check_folder(str(full))
    assert "\n" not in str(e.value)
    check_folder(str(full), force=True)
    assert (full / "notes.txt").read_text() == "mine"
    with pytest.raises(WebExportError, match="it is a file"):
        check_folder(str(full / "notes.txt"))
    with pytest.raises(WebExportError, match="Cannot write .*: Not a directory"):
        check_folder(str(full / "notes.txt" / "page"))  # under a file: no folder can be made there
    with pytest.raises(WebExportError, match="system folder"):
        check_folder("/proc/shard-lab-page")


def _shell(*args, tmp_path):
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen",
                               "SHARD_LAB_SETTINGS": str(tmp_path / "s.ini")})


def test_the_shell_refuses_a_folder_that_is_not_empty_unless_forced_and_names_a_skipped_scene(tmp_path):
    deck = small_deck(tmp_path)
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    out = _shell("--deck", deck, "--export-web", str(full), tmp_path=tmp_path)
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1 and "is not empty" in out.stderr
    assert os.listdir(full) == ["notes.txt"]
    out = _shell(deck, "--export-web", str(full), "--force", tmp_path=tmp_path)  # a deck FILE by its schema
    assert out.returncode == 0, out.stderr
    assert "skipped: Scene 2 (Reduce-scatter on a ring) cannot open" in out.stderr
    assert "2 scenes" in out.stdout and (full / "index.html").exists() and (full / "notes.txt").read_text() == "mine"
    bad = _shell("--deck", deck, "--export-web", str(full / "notes.txt"), tmp_path=tmp_path)
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1 and "it is a file" in bad.stderr
    no_deck = _shell("--export-web", str(tmp_path / "x"), tmp_path=tmp_path)
    assert no_deck.returncode == 2 and "give --deck lecture" in no_deck.stderr


# -- in the app ------------------------------------------------------------------------------------
@pytest.fixture
def answers(monkeypatch):
    """The folder dialog's and the overwrite question's answers, and the message boxes shown."""
    said = {"folder": "", "overwrite": False, "warnings": [], "asked": []}
    monkeypatch.setattr(web_export, "_choose_folder", lambda w: said["folder"])

    def ask(w, folder):
        said["asked"].append(folder)
        return said["overwrite"]

    monkeypatch.setattr(web_export, "_ask_overwrite", ask)
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text, *a: said["warnings"].append(text))
    return said


def test_file_export_web_page_writes_the_open_deck_and_asks_before_a_folder_that_is_not_empty(qtbot, tmp_path,
                                                                                               answers):
    w = make_window(qtbot, size=(1600, 900))
    act = w.act_export_web
    assert act in w.classroom.menu_export.actions() and act.text() == "Deck as a &web page…"
    act.trigger()  # no deck open: one sentence, nothing asked
    assert len(answers["warnings"]) == 1 and "Open a deck first" in answers["warnings"][0]
    assert w.deck.open_deck(small_deck(tmp_path, bad=False))
    w.deck.go(1)
    sc = w.model.scenario
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    answers["folder"] = str(full)
    act.trigger()  # not empty, and the answer is no: nothing written
    assert answers["asked"] == [str(full)] and os.listdir(full) == ["notes.txt"]
    answers["overwrite"] = True
    act.trigger()
    assert (full / "index.html").exists() and len(read_data(str(full))["scenes"]) == 2
    assert str(full / "index.html") in w.statusBar().currentMessage()
    assert w.deck.index == 1 and w.model.scenario == sc  # back on the scene it showed
    answers["folder"] = str(full / "notes.txt")  # a file: one sentence, the window goes on
    act.trigger()
    assert len(answers["warnings"]) == 2 and "it is a file" in answers["warnings"][1]
    assert w.isVisible()


def test_the_action_reads_in_chinese(qtbot):
    w = make_window(qtbot)
    i18n.set_language(QApplication.instance(), "zh")
    assert w.act_export_web.text() == "讲稿导出为网页(&W)…"


def test_the_wheel_carries_the_pages_files():
    """pyproject's setuptools config lists resources/web and a pattern for each of its files
    (tests/test_packaging.py builds the wheel; this says which files it must hold)."""
    import fnmatch

    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11's")

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    conf = tomllib.load(open(os.path.join(root, "pyproject.toml"), "rb"))["tool"]["setuptools"]
    assert "shard_lab.resources.web" in conf["packages"]
    patterns = conf["package-data"]["shard_lab.resources.web"]
    files = os.listdir(os.path.join(root, "resources", "web"))
    assert set(web_export.PAGE_FILES) <= set(files)
    assert all(any(fnmatch.fnmatch(f, p) for p in patterns) for f in files), (files, patterns)


def test_a_machines_formula_stays_through_a_language_switch(qtbot):
    """The export reads each scene in both languages: a machine's closed form (written by the
    formula panel's set_frame, not its _render) said "No collective at this time" after a switch."""
    w = make_window(qtbot, "all-reduce", 16, "hier", topology="dgx-h100")
    label = w.classroom.formula._label
    assert plain(label.text()).startswith("Hierarchical all-reduce")
    i18n.set_language(QApplication.instance(), "zh")
    assert plain(label.text()).startswith("分层 all-reduce") and "T =" in plain(label.text())
    w.playback.seek(w.playback.stops[2])
    assert plain(label.text()).startswith("分层 all-reduce")
    quiet = make_window(qtbot, "matmul-1", 4)  # no collective at all: that sentence, in the new language
    assert plain(quiet.classroom.formula._label.text()) == "此刻没有集合通信。"
    i18n.set_language(QApplication.instance(), "en")
    assert plain(quiet.classroom.formula._label.text()) == "No collective at this time."
    assert plain(label.text()).startswith("Hierarchical all-reduce")


def test_a_cancelled_export_writes_nothing_and_leaves_no_folder_behind(qtbot, tmp_path, answers, monkeypatch):
    w = make_window(qtbot, size=(1600, 900))
    deck = load_deck(small_deck(tmp_path, bad=False))
    calls = []

    def stop_check():
        calls.append(1)
        if len(calls) > 3:
            raise WebExportError("cancelled")

    with pytest.raises(WebExportError, match="cancelled"):
        export_web(w, deck, str(tmp_path / "new"), stop_check=stop_check)
    assert not (tmp_path / "new").exists()
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    calls.clear()
    with pytest.raises(WebExportError):
        export_web(w, deck, str(full), force=True, stop_check=stop_check)
    assert os.listdir(full) == ["notes.txt"]

    class Cancelled:  # the app's progress dialog, its Cancel pressed
        def __init__(self):
            self.values = []

        def setValue(self, v):
            self.values.append(v)

        def setLabelText(self, text):
            pass

        def wasCanceled(self):
            return True

        def close(self):
            pass

    monkeypatch.setattr(web_export, "_progress", lambda window, n: Cancelled())
    assert w.deck.set_deck(deck)
    answers["folder"] = str(tmp_path / "app")
    assert w.act_export_web.isEnabled()
    w.act_export_web.trigger()
    assert not (tmp_path / "app").exists() and answers["warnings"] == []  # a cancel is no error
    assert "cancelled" in w.statusBar().currentMessage()
