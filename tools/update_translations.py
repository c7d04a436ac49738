#!/usr/bin/env python3
"""
Refresh the Chinese translation: extract every translatable string of app/**/*.py into
resources/i18n/shard_lab_zh_CN.ts (existing translations are kept), then compile it to
shard_lab_zh_CN.qm, which ships in the package.

    python tools/update_translations.py           # lupdate + lrelease
    python tools/update_translations.py --check   # exit 1 if a string has no translation

Translate new strings in Qt Linguist (pyside6-linguist resources/i18n/shard_lab_zh_CN.ts)
or by editing the .ts, then run this again.

pyside6-lupdate finds `self.tr("...")` and `QCoreApplication.translate("Ctx", "...")`. Two
idioms in this code base are invisible to it, so they are extracted here as well:
    def _tr(text): return QCoreApplication.translate("Ctx", text)      ->  _tr("...")
    tr = QCoreApplication.translate                                    ->  tr("Ctx", "...")
(lupdate misreads the second as tr(source, comment); those entries are removed.)
"""

from __future__ import annotations

import argparse
import ast
import glob
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TS = os.path.join(ROOT, "resources", "i18n", "shard_lab_zh_CN.ts")
QM = os.path.join(ROOT, "resources", "i18n", "shard_lab_zh_CN.qm")
LANGUAGE = "zh_CN"


def sources() -> list[str]:
    return sorted(glob.glob(os.path.join(ROOT, "app", "**", "*.py"), recursive=True))


def tool(name: str) -> str:
    """pyside6-lupdate / pyside6-lrelease: beside this Python first, then on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), name)
    for cand in (here, here + ".exe", shutil.which(name)):
        if cand and os.path.exists(cand):
            return cand
    raise SystemExit(f"{name} not found: install PySide6 (it ships {name})")


# ---------------------------------------------------------------------------------------
# What lupdate cannot see
# ---------------------------------------------------------------------------------------
def _is_translate(node) -> bool:
    """QCoreApplication.translate (or QApplication.translate / a bare translate)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "translate"
    return isinstance(node, ast.Name) and node.id == "translate"


def _str(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def extra_messages(path: str) -> tuple[list, list]:
    """
    (messages, problems) for one file. messages: (context, source) of the two idioms above.
    problems: translate/tr calls whose text is not a literal (an f-string can never match).
    """
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    wrappers, aliases = {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and len(node.args.args) == 1 and len(node.body) == 1:
            ret = node.body[0]
            if (isinstance(ret, ast.Return) and isinstance(ret.value, ast.Call) and _is_translate(ret.value.func)
                    and len(ret.value.args) == 2 and _str(ret.value.args[0]) is not None
                    and isinstance(ret.value.args[1], ast.Name) and ret.value.args[1].id == node.args.args[0].arg):
                wrappers[node.name] = _str(ret.value.args[0])
        if isinstance(node, ast.Assign) and _is_translate(node.value):
            aliases.update(t.id for t in node.targets if isinstance(t, ast.Name))
    msgs, problems = [], []
    rel = os.path.relpath(path, ROOT)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else None
        if name in wrappers and node.args:
            text = _str(node.args[0])
            if text is None:
                problems.append(f"{rel}:{node.lineno}: {name}() needs a string literal")
            else:
                msgs.append((wrappers[name], text))
        elif name in aliases and len(node.args) >= 2:
            ctx, text = _str(node.args[0]), _str(node.args[1])
            if ctx is None or text is None:
                problems.append(f"{rel}:{node.lineno}: {name}() needs string literals")
            else:
                msgs.append((ctx, text))
        elif (isinstance(f, ast.Attribute) and f.attr == "tr") or _is_translate(f):
            arg = node.args[1 if _is_translate(f) else 0] if len(node.args) > (1 if _is_translate(f) else 0) else None
            if isinstance(arg, ast.JoinedStr):
                problems.append(f"{rel}:{node.lineno}: an f-string inside tr()/translate() is never translated")
    return msgs, problems


def alias_calls(path: str) -> set:
    """(ctx, text) of tr = QCoreApplication.translate calls: lupdate stores them as (source=ctx, comment=text)."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    aliases = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and _is_translate(node.value)
               for t in node.targets if isinstance(t, ast.Name)}
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in aliases:
            if len(node.args) >= 2 and _str(node.args[0]) is not None and _str(node.args[1]) is not None:
                out.add((_str(node.args[0]), _str(node.args[1])))
    return out


# ---------------------------------------------------------------------------------------
# The .ts file
# ---------------------------------------------------------------------------------------
def read_ts(path: str) -> ET.Element:
    return ET.parse(path).getroot()


def write_ts(root: ET.Element, path: str):
    ET.indent(root, space="    ")
    text = ET.tostring(root, encoding="unicode")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n' + text + "\n")


def _context(root, name):
    for c in root.findall("context"):
        if (c.findtext("name") or "") == name:
            return c
    c = ET.SubElement(root, "context")
    ET.SubElement(c, "name").text = name
    return c


def merge_extra(root: ET.Element, extra: set, wrong: set):
    """Add / re-activate the extra messages; drop lupdate's misreadings of alias calls."""
    for c in root.findall("context"):
        name = c.findtext("name") or ""
        for m in list(c.findall("message")):
            if name == "" and (m.findtext("source"), m.findtext("comment")) in wrong:
                c.remove(m)
        if not c.findall("message"):
            root.remove(c)
    for ctx, text in sorted(extra):
        c = _context(root, ctx)
        for m in c.findall("message"):
            if m.findtext("source") == text:
                tr = m.find("translation")
                if tr.get("type") in ("vanished", "obsolete"):
                    if tr.text:
                        del tr.attrib["type"]
                    else:
                        tr.set("type", "unfinished")
                break
        else:
            m = ET.SubElement(c, "message")
            ET.SubElement(m, "source").text = text
            ET.SubElement(m, "translation", type="unfinished")


def prune_vanished(root: ET.Element):
    for c in root.findall("context"):
        for m in list(c.findall("message")):
            if m.find("translation").get("type") in ("vanished", "obsolete"):
                c.remove(m)
        if not c.findall("message"):
            root.remove(c)


def untranslated(root: ET.Element) -> list[tuple[str, str]]:
    out = []
    for c in root.findall("context"):
        for m in c.findall("message"):
            tr = m.find("translation")
            if tr.get("type") == "unfinished" or not "".join(tr.itertext()).strip():
                out.append((c.findtext("name") or "", m.findtext("source")))
    return out


def update(ts_path: str = TS, prune: bool = True) -> tuple[ET.Element, list]:
    """Run lupdate over app/**/*.py into ts_path and add what it cannot see. Returns (root, problems)."""
    files = sources()
    if not os.path.exists(ts_path):
        with open(ts_path, "w", encoding="utf-8") as f:
            f.write(f'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n<TS version="2.1" language="{LANGUAGE}">'
                    "\n</TS>\n")
    subprocess.run([tool("pyside6-lupdate"), *files, "-locations", "none", "-target-language", LANGUAGE,
                    "-ts", ts_path], check=True, capture_output=True, text=True)
    extra, wrong, problems = set(), set(), []
    for p in files:
        msgs, probs = extra_messages(p)
        extra.update(msgs)
        problems += probs
        wrong |= alias_calls(p)
    root = read_ts(ts_path)
    merge_extra(root, extra, wrong)
    if prune:
        prune_vanished(root)
    write_ts(root, ts_path)
    return root, problems


def release(ts_path: str = TS, qm_path: str = QM):
    subprocess.run([tool("pyside6-lrelease"), ts_path, "-qm", qm_path], check=True, capture_output=True, text=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only report strings without a translation (exit 1)")
    ap.add_argument("--keep-vanished", action="store_true", help="keep translations of strings no longer in app/")
    args = ap.parse_args(argv)
    if args.check:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            tmp = os.path.join(d, "check.ts")
            shutil.copy(TS, tmp)
            root, problems = update(tmp, prune=True)
    else:
        root, problems = update(TS, prune=not args.keep_vanished)
        release()
    missing = untranslated(root)
    for p in problems:
        print("problem:", p)
    for ctx, src in missing:
        print(f"untranslated [{ctx}]: {src!r}")
    n = sum(len(c.findall("message")) for c in root.findall("context"))
    print(f"{n} strings, {len(missing)} without a translation, {len(problems)} problems")
    return 1 if (args.check and (missing or problems)) else 0


if __name__ == "__main__":
    sys.exit(main())
