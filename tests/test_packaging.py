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
