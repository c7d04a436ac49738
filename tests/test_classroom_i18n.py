"""Chinese and English: switching at run time retranslates the window, the explanation and the plots."""

import importlib.util
import os
import re
import shutil
import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QApplication  # noqa: E402

from app import i18n  # noqa: E402
from classroom_fixtures import make_window  # noqa: E402
from panel_text import shown_text

pytestmark = pytest.mark.usefixtures("app_env")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TS = os.path.join(ROOT, "resources", "i18n", "shard_lab_zh_CN.ts")
HAN = re.compile(r"[\u4e00-\u9fff]")


def _tool():
    spec = importlib.util.spec_from_file_location("update_translations",
                                                  os.path.join(ROOT, "tools", "update_translations.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def visible_texts(w) -> dict:
    """What a student reads: window and dock titles, menus, toolbar, status bar, panels, plot axes."""
    return {
        "title": w.windowTitle(),
        "menus": [a.text() for a in w.menuBar().actions()],
        "docks": [d.windowTitle() for d in (w.controls_dock, w.explain_dock, w.timeline_dock,
                                            w.classroom.formula_dock)],
        "play": w.act_play.text(),
        "status": w.step_label.text(),
        "explain": shown_text(w.explain),
        "formula": shown_text(w.classroom.formula),
        "timeline_axis": w.timeline.plot.getAxis("bottom").labelText,
        "ring_caption": w.ring_view.caption.text,
    }


def test_switching_language_changes_every_visible_text_and_back(qtbot):
    w = make_window(qtbot, "all-gather", 8)
    w.playback.seek_step(3)
    en = visible_texts(w)
    assert "File" in "".join(en["menus"]) and "Step" in en["explain"]
    w.classroom.set_language("zh")
    zh = visible_texts(w)
    for key in en:
        assert zh[key] != en[key], f"{key} stayed {en[key]!r}"
    assert zh["menus"][0].startswith("文件")
    assert "第 3 / 7 步" in zh["explain"]
    assert "模拟时间" in zh["timeline_axis"]
    assert "all-gather" in zh["ring_caption"] and "环形" in zh["ring_caption"]  # lecture terms stay English
    assert i18n.current_language() == "zh"
    assert w.classroom.language_actions["zh"].isChecked()
    w.classroom.set_language("en")
    assert visible_texts(w) == en


def test_the_language_action_toggles(qtbot):
    w = make_window(qtbot, "reduce-scatter", 4)
    w.classroom.act_toggle_language.trigger()
    assert i18n.current_language() == "zh" and w.menuBar().actions()[0].text().startswith("文件")
    w.classroom.act_toggle_language.trigger()
    assert i18n.current_language() == "en" and w.menuBar().actions()[0].text() == "&File"


def test_lang_zh_on_the_command_line_starts_in_chinese(qtbot, tmp_path, monkeypatch):
    from app import __main__ as cli
    from app.main_window import MainWindow

    seen = {}

    def fake_save(self, path):
        seen.update(visible_texts(self))
        return True

    monkeypatch.setattr(MainWindow, "save_screenshot", fake_save)
    assert cli.main(["--scenario", "all-gather", "--n", "8", "--step", "3", "--lang", "zh",
                     "--screenshot", str(tmp_path / "zh.png")]) == 0
    assert seen["menus"][0].startswith("文件")
    assert HAN.search(seen["title"]) and HAN.search(seen["explain"]) and HAN.search(seen["timeline_axis"])


def test_language_names_and_codes():
    assert i18n.normalize("zh_CN") == "zh" and i18n.normalize("en-US") == "en" and i18n.normalize(None) is None
    with pytest.raises(ValueError):
        i18n.normalize("fr")
    assert os.path.exists(i18n.qm_path("zh"))


# -- the translation files -----------------------------------------------------------------
def _messages():
    root = ET.parse(TS).getroot()
    for c in root.findall("context"):
        for m in c.findall("message"):
            yield c.findtext("name"), m.findtext("source"), m.find("translation")


def test_every_string_in_app_has_a_chinese_translation(tmp_path):
    if shutil.which("pyside6-lupdate") is None and not os.path.exists(
            os.path.join(os.path.dirname(os.sys.executable), "pyside6-lupdate")):
        pytest.skip("pyside6-lupdate not installed")
    tool = _tool()
    tmp = tmp_path / "check.ts"
    shutil.copy(TS, tmp)
    root, problems = tool.update(str(tmp), prune=True)
    assert problems == []  # no f-strings inside tr(): they could never be translated
    missing = tool.untranslated(root)
    assert missing == [], f"{len(missing)} strings need a translation (run tools/update_translations.py): " \
                          f"{missing[:5]}"


def test_translations_keep_placeholders_and_lecture_terms():
    ph = re.compile(r"\{[^}]*\}|%\d|%n|%s")
    for ctx, src, tr in _messages():
        if tr.get("type") in ("vanished", "obsolete", "unfinished"):
            continue
        text = "".join(tr.itertext())
        assert sorted(ph.findall(text)) == sorted(ph.findall(src)), (ctx, src, text)
        for term in ("all-gather", "reduce-scatter", "all-reduce", "α", "β"):
            if term in src:
                assert term in text, (ctx, src, text)
        if "&" in src.replace("&&", "") and not src.startswith("&nbsp"):
            assert "&" in text, (ctx, src, text)  # keyboard mnemonics survive


def test_shipped_qm_is_compiled_from_the_ts(tmp_path):
    tool = _tool()
    try:
        tool.release(TS, str(tmp_path / "fresh.qm"))
    except SystemExit:
        pytest.skip("pyside6-lrelease not installed")
    shipped = os.path.join(ROOT, "resources", "i18n", "shard_lab_zh_CN.qm")
    with open(shipped, "rb") as a, open(tmp_path / "fresh.qm", "rb") as b:
        assert a.read() == b.read(), "run tools/update_translations.py to rebuild the .qm"


def test_qt_dialog_buttons_follow_the_language(qtbot):
    from PySide6.QtCore import QCoreApplication

    i18n.set_language(QApplication.instance(), "zh")
    assert QCoreApplication.translate("QPlatformTheme", "Cancel") == "取消"
