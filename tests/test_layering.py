"""The engine never knows the GUI: importing every simcore module pulls in no Qt."""

import pkgutil
import subprocess
import sys

import simcore


def test_simcore_imports_no_qt():
    mods = [f"simcore.{m.name}" for m in pkgutil.iter_modules(simcore.__path__)]
    code = ("import sys, importlib\n"
            f"for m in {mods!r}: importlib.import_module(m)\n"
            "bad = sorted(k for k in sys.modules if k.split('.')[0] in ('PySide6', 'PyQt5', 'PyQt6', 'pyqtgraph', "
            "'shiboken6'))\n"
            "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"simcore pulled in Qt: {out.stdout}"
    assert len(mods) >= 5


def test_simcore_source_has_no_qt_import():
    import pathlib
    import re

    pat = re.compile(r"^\s*(from|import)\s+(PySide6|PyQt5|PyQt6|pyqtgraph|shiboken6)\b", re.M)
    root = pathlib.Path(simcore.__file__).parent
    offenders = [p.name for p in root.rglob("*.py") if pat.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
