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


def test_demo_values_are_reproducible_uniform_and_short():
    import numpy as np

    from simcore.scenarios import demo_values

    a = demo_values(0, (200, 500))
    assert a.shape == (200, 500)
    assert np.array_equal(a, demo_values(0, (200, 500)))  # same seed, same numbers
    assert not np.array_equal(a, demo_values(1, (200, 500)))
    assert a.min() >= -1 and a.max() <= 1
    assert np.array_equal(a, np.round(a, 3))  # three decimals: readable on a slide
    assert abs(a.mean()) < 0.01 and abs(a.std() - 1 / np.sqrt(3)) < 0.01  # uniform on [-1, 1]
    counts, _ = np.histogram(a, bins=10, range=(-1, 1))
    assert counts.min() > 0.9 * a.size / 10
    assert np.array_equal(demo_values(5, 7, decimals=2), np.round(demo_values(5, 7, decimals=2), 2))


def test_the_default_scenario_needs_no_numpy_random():
    # numpy.random's first use imports ~15 ms of modules; the app's start does not pay for it
    code = ("import sys\n"
            "from simcore.scenarios import run_collective\n"
            "for op in ('all-gather', 'reduce-scatter', 'all-reduce'): run_collective(op, 8)\n"
            "print('numpy.random' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_import_linter_contracts_are_kept():
    """The layering contracts of pyproject.toml ([tool.importlinter]) hold for every import,
    including those inside functions (import-linter reads them all)."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                          "sys.exit(lint_imports_command())", "--no-cache"],
                         capture_output=True, text=True, cwd=root)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "broken" in out.stdout and " 0 broken" in out.stdout



# Imports of another module's private names still allowed: none (the last four became public names).
PRIVATE_IMPORTS_LEFT: set = set()


def private_imports(root, package: str) -> set:
    """Every `from m import _name` in the package's modules under `root` (inside functions too)
    where _name is not a module of its own (`from . import _compat` imports a module):
    {'importer -> m._name'}."""
    import ast

    out = set()
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        pkg = parts[:-1]  # what `from .` means here, for a package's __init__ too
        mod = ".".join(pkg if parts[-1] == "__init__" else parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = list(pkg[:len(pkg) - node.level + 1]) if node.level else []
            src = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                name = alias.name
                if not name.startswith("_") or name.startswith("__"):
                    continue
                sub = root.joinpath(*src.split("."), name)
                if not (sub.with_suffix(".py").exists() or sub.is_dir()):
                    out.add(f"{mod} -> {src}.{name}")
    return out


def test_the_private_import_scan_finds_one_and_passes_a_private_module(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_compat.py").write_text("")
    (pkg / "a.py").write_text("def _helper(): pass\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from .. import _compat\ndef f():\n    from ..a import _helper, f\n")
    assert private_imports(tmp_path, "pkg") == {"pkg.sub.b -> pkg.a._helper"}


def test_no_module_imports_another_modules_private_names():
    """A name with a leading underscore is its module's own: a module that needs another's needs it
    public (or the thing belongs elsewhere)."""
    import pathlib
    import warnings

    found = private_imports(pathlib.Path(__file__).resolve().parents[1], "app")
    assert found - PRIVATE_IMPORTS_LEFT == set(), sorted(found - PRIVATE_IMPORTS_LEFT)
    if PRIVATE_IMPORTS_LEFT - found:
        warnings.warn(f"gone, remove from PRIVATE_IMPORTS_LEFT: {sorted(PRIVATE_IMPORTS_LEFT - found)}")
