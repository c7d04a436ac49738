"""The wheel: `simcore` and the app under the project's own name, and the app runs from it.

The source tree keeps the design's folders (app/, simcore/, resources/); pyproject.toml maps the
app to `shard_lab` and its resources to `shard_lab.resources` in the wheel, so an environment
holding Shard Lab has no top-level `app` or `resources` to collide with another project's.
"""

import glob
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    # built from a clean copy: setuptools leaves build/ and *.egg-info in the tree it builds, and
    # a stale build/ would carry modules that no longer exist into the wheel
    src = tmp_path_factory.mktemp("src") / "shard-lab"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("app", "simcore", "resources"):
        shutil.copytree(os.path.join(ROOT, name), src / name, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, name), src / name)
    # no build isolation: the test extra installs setuptools, and nothing is fetched
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           str(src), "-w", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (path,) = glob.glob(str(out / "*.whl"))
    return path


def test_the_wheel_installs_only_project_named_packages(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    # exactly the source tree's modules: nothing stale, nothing missing
    assert tops == {"shard_lab", "simcore", next(t for t in tops if t.endswith(".dist-info"))}
    assert "shard_lab/resources/i18n/shard_lab_zh_CN.qm" in names
    # every module of the source tree is in it, under its installed name
    want = set()
    for folder, package in (("app", "shard_lab"), ("simcore", "simcore")):
        for src in glob.glob(os.path.join(ROOT, folder, "**", "*.py"), recursive=True):
            want.add(f"{package}/" + os.path.relpath(src, os.path.join(ROOT, folder)).replace(os.sep, "/"))
    assert {n for n in names if n.endswith(".py")} - {"shard_lab/resources/__init__.py"} == want
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "shard-lab = shard_lab.__main__:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_the_app_runs_from_the_unpacked_wheel_in_chinese(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = dict(os.environ, PYTHONPATH=str(site), QT_QPA_PLATFORM="offscreen")
    where = subprocess.run([sys.executable, "-c", "import shard_lab, simcore; from shard_lab import i18n; "
                            "print(shard_lab.__file__); print(simcore.__file__); print(i18n.qm_path('zh'))"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr
    for line in where.stdout.split():  # the package, the engine and the translations: all the wheel's
        assert line.startswith(str(site)) and os.path.exists(line), line
    shot = tmp_path / "shot.png"
    run = subprocess.run([sys.executable, "-m", "shard_lab", "--lang", "zh", "--scenario", "all-reduce", "--n", "4",
                          "--screenshot", str(shot)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert shot.stat().st_size > 10_000


# ---------------------------------------------------------------------------------------
# The installed package, outside the tree: what README shows, run as a user runs it
# ---------------------------------------------------------------------------------------
def _readme_block(heading: str) -> str:
    """The first ```python block under README's `heading`."""
    import re

    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    part = text[text.index(heading):]
    return re.search(r"```python\n(.*?)```", part, flags=re.S).group(1)


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """A fresh virtual environment holding the wheel, installed by its own pip (--no-deps, --no-index).

    Its dependencies (numpy, PySide6, pyqtgraph: some 300 MB) are not downloaded again: one .pth line
    names the test environment's site-packages, read after the venv's own. (`--system-site-packages`
    would give the base interpreter's packages, not this environment's.) A .pth line adds a folder
    only, never runs that folder's own .pth files, so the test environment's editable install of the
    source tree is not on the path: `shard_lab` and `simcore` can come from the wheel alone."""
    import sysconfig

    venv = tmp_path_factory.mktemp("venv") / "env"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, timeout=60).stdout.strip()
    with open(os.path.join(site, "shared_dependencies.pth"), "w") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    pip = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel],
                         capture_output=True, text=True, timeout=300, env=env)
    assert pip.returncode == 0, pip.stderr[-2000:]
    return venv, py, site, env


def _screen(tmp, W, H) -> str:
    """QT_QPA_PLATFORM for an offscreen screen of W×H (the platform reads it at start-up)."""
    import json

    cfg = tmp / f"screen{W}x{H}.json"
    cfg.write_text(json.dumps({"synchronousWindowSystemEvents": True, "windowFrameMargins": False,
                               "screens": [{"name": "hall", "x": 0, "y": 0, "width": W, "height": H,
                                            "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    return f"offscreen:configfile={cfg}"


def _user(installed, tmp_path, *args, screen=None, extra=None, timeout=300):
    """Run a command as a user would, from a folder outside the tree, in the installed environment."""
    venv, py, site, env = installed
    bin_ = os.path.dirname(py)
    env = dict(env, QT_QPA_PLATFORM=screen or "offscreen", SHARD_LAB_SETTINGS=str(tmp_path / "settings.ini"),
               PATH=bin_ + os.pathsep + env.get("PATH", ""), **(extra or {}))
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return subprocess.run(list(args), cwd=work, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_installed_package_is_the_wheels_own(installed, tmp_path):
    venv, py, site, env = installed
    out = _user(installed, tmp_path, str(py), "-c", "import shard_lab, simcore, simcore.viewer as v; "
                "print(shard_lab.__file__); print(simcore.__file__); print(v.app_package())")
    assert out.returncode == 0, out.stderr
    app_file, engine_file, package = out.stdout.split()
    assert app_file.startswith(site) and engine_file.startswith(site) and package == "shard_lab"
    assert not os.path.exists(os.path.join(site, "app"))  # no top-level `app` to collide with


def test_readme_commands_from_outside_the_tree(installed, tmp_path):
    """`shard-lab --scenario … --screenshot` and `shard-lab --deck lecture --export-pdf` as README shows them."""
    shot = tmp_path / "work" / "zh.png"
    out = _user(installed, tmp_path, "shard-lab", "--scenario", "all-gather", "--n", "8", "--step", "3", "--lang",
                "zh", "--screenshot", "zh.png")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert shot.stat().st_size > 10_000
    out = _user(installed, tmp_path, "shard-lab", "--deck", "lecture", "--export-pdf", "handout.pdf", timeout=900)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    pdf = tmp_path / "work" / "handout.pdf"
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 50_000


def test_your_own_run_from_readme_shows_its_window_on_a_small_screen(installed, tmp_path):
    """README's "Your own run" block, unchanged, run outside the tree: before, simcore.show raised
    ModuleNotFoundError: No module named 'app'. Its window fits a 1280×720 screen (it opened 1600×900)."""
    venv, py, site, env = installed
    script = tmp_path / "work" / "own_run.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(_readme_block("## Your own run") + "\nassert report.ok, str(report)\n", encoding="utf-8")
    probe = tmp_path / "work" / "probe.py"
    probe.write_text("import runpy, simcore, simcore.viewer as v\n"
                     "shown = []\n"
                     "real = v.show\n"
                     "def show(*a, **k):\n"
                     "    w = real(*a, **k); shown.append((w.width(), w.height())); return w\n"
                     "simcore.show = v.show = show\n"
                     "runpy.run_path('own_run.py', run_name='__main__')\n"
                     "print('SHOWN', *shown[0])\n", encoding="utf-8")
    out = _user(installed, tmp_path, str(py), "probe.py", screen=_screen(tmp_path, 1280, 720),
                extra={"SHARD_LAB_SHOW_SCREENSHOT": str(tmp_path / "work" / "own.png")})
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-3000:]
    w, h = map(int, out.stdout.split("SHOWN")[1].split())
    assert w <= 1280 and h <= 720, (w, h)
    assert (tmp_path / "work" / "run.json").stat().st_size > 500
    assert (tmp_path / "work" / "own.png").stat().st_size > 10_000


def test_record_a_lecture_script_and_show_it_from_outside_the_tree(installed, tmp_path):
    venv, py, site, env = installed
    lecture = tmp_path / "work" / "lecture.py"
    lecture.parent.mkdir(exist_ok=True)
    lecture.write_text("import numpy as np\nfrom shard_lab import make_comm, all_reduce\n"  # the lecture's own import
                       "comm = make_comm(4)\nall_reduce(comm, [np.arange(8.0) + d for d in range(4)])\n",
                       encoding="utf-8")
    out = _user(installed, tmp_path, str(py), "-m", "simcore", "record", "lecture.py", "--show", "--screenshot",
                "lecture.png", screen=_screen(tmp_path, 1280, 720))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-3000:]
    assert "recorded 1 collectives" in out.stderr
    assert (tmp_path / "work" / "lecture.trace.json").exists()
    assert (tmp_path / "work" / "lecture.png").stat().st_size > 10_000
