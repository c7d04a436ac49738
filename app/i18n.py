"""
Chinese and English at run time, with Qt's translation system.

Every visible string in app/ is written in English inside `self.tr()` (or
`QCoreApplication.translate(context, ...)`); `resources/i18n/shard_lab_zh_CN.ts` holds the
Chinese, compiled to `shard_lab_zh_CN.qm` (shipped in the package, so an install needs no
build step; `python tools/update_translations.py` refreshes both).

`set_language(app, "zh")` installs the translator; Qt then sends every widget a
QEvent.LanguageChange and each widget's `retranslate_ui()` sets its texts again — no restart.
Objects that are not widgets (plots' axis items, models) can listen to `notifier().changed`.

Lecture terms stay as the lecture writes them: all-gather, reduce-scatter, all-reduce, ring,
α, β stay English; 设备 (device), 分片 (shard), 块 (chunk), 部分和 (partial sum), 张量并行.
"""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import QCoreApplication, QEvent, QLibraryInfo, QLocale, QObject, QTranslator, Signal

LANGUAGES = {"en": "English", "zh": "中文"}  # code -> the language's own name (never translated)
_ALIASES = {"en": "en", "en_us": "en", "en_gb": "en", "english": "en",
            "zh": "zh", "zh_cn": "zh", "zh_hans": "zh", "cn": "zh", "chinese": "zh", "中文": "zh"}
QM_BASENAME = "shard_lab_zh_CN"


class _Notifier(QObject):
    changed = Signal(str)  # the new language code


_state = {"lang": "en", "translators": [], "notifier": None}


def notifier() -> _Notifier:
    """A QObject whose `changed(str)` fires after every language switch (for non-widgets)."""
    if _state["notifier"] is None:
        _state["notifier"] = _Notifier()
    return _state["notifier"]


def normalize(lang: str | None) -> str | None:
    """'zh', 'zh_CN', 'zh-Hans', 'en_US' ... -> 'zh' / 'en'; None or 'system' -> None."""
    if lang is None or str(lang).strip().lower() in ("", "system", "auto"):
        return None
    key = str(lang).strip().lower().replace("-", "_")
    if key in _ALIASES:
        return _ALIASES[key]
    if key.split("_")[0] in ("zh", "en"):
        return key.split("_")[0]
    raise ValueError(f"unknown language {lang!r}; choose one of: {', '.join(LANGUAGES)}")


def system_language() -> str:
    """'zh' when the system locale is Chinese, else 'en'."""
    return "zh" if QLocale.system().language() == QLocale.Language.Chinese else "en"


def current_language() -> str:
    return _state["lang"]


def qm_dir() -> str:
    """Directory of the compiled translations (package data: resources/i18n).

    Installed, the resources ship inside the app's package (`shard_lab.resources`); in the source
    tree they are the top-level `resources/` beside `app/`.
    """
    from importlib import resources  # only a non-English start needs it

    try:
        base = resources.files(f"{__package__}.resources")
    except ModuleNotFoundError:
        base = resources.files("resources")
    return str(base.joinpath("i18n"))


def qm_path(lang: str) -> str | None:
    lang = normalize(lang) or system_language()
    if lang == "en":
        return None  # the source strings are English
    return os.path.join(qm_dir(), f"{QM_BASENAME}.qm")


def set_language(app: QCoreApplication | None, lang: str | None) -> str:
    """
    Switch the whole interface to `lang` ('zh' | 'en'; None = the saved choice, else the system
    locale). Every open widget is retranslated before this returns. Returns the language code.
    Raises ValueError for an unknown code and FileNotFoundError if the .qm is missing.
    """
    code = normalize(lang)
    if code is None:
        code = saved_language() or system_language()
    app = app or QCoreApplication.instance()
    new = []
    if code != "en":
        path = qm_path(code)
        tr = QTranslator()
        if not (path and os.path.exists(path) and tr.load(path)):
            raise FileNotFoundError(f"translation file {os.path.basename(path or '')} is missing; "
                                    "run tools/update_translations.py")
        new.append(tr)
        qt_tr = QTranslator()  # Qt's own dialogs' buttons (OK, Cancel...) where Qt ships them
        if qt_tr.load(QLocale(QLocale.Language.Chinese, QLocale.Country.China), "qtbase", "_",
                      QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
            new.append(qt_tr)
    for old in _state["translators"]:
        QCoreApplication.removeTranslator(old)
    for t in new:
        QCoreApplication.installTranslator(t)
    _state["translators"] = new
    _state["lang"] = code
    QLocale.setDefault(QLocale(QLocale.Language.Chinese, QLocale.Country.China) if code == "zh"
                       else QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
    if app is not None:
        # Qt posts LanguageChange to every window; deliver now so the caller sees the new texts
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LanguageChange)
    notifier().changed.emit(code)
    return code


def set_language_or_english(app: QCoreApplication | None, lang: str | None):
    """set_language for a window about to open (the command line, simcore.show): a language that
    cannot be loaded (an unknown code, a missing .qm) leaves English and says why on stderr."""
    try:
        set_language(app, lang)
    except (FileNotFoundError, ValueError) as e:
        print(f"shard-lab: {e}; showing English", file=sys.stderr)


def saved_language() -> str | None:
    """The language chosen in an earlier session (QSettings), if any."""
    from .scenario_io import settings

    try:
        return normalize(settings().value("ui/language", None))
    except ValueError:
        return None


def save_language(code: str):
    from .scenario_io import settings

    settings().setValue("ui/language", code)
