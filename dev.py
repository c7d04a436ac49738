#!/usr/bin/env python3
"""Set up a local virtual environment and run Shard Lab or its tests.

    python3 dev.py app [shard-lab options]   # launch the app (default: ring all-gather, n = 8)
    python3 dev.py test [pytest options]     # run the whole test suite, offscreen, one worker per core

The first call creates `.venv/` beside this file and installs the project into it
(editable, with the test extra); later calls reinstall only when pyproject.toml changed.
Needs nothing but Python 3.10+ and the package index.
"""

import hashlib
import os
import subprocess
import sys
import venv

ROOT = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(ROOT, ".venv")
STAMP = os.path.join(VENV, ".shard-lab-installed")
EXTRAS = "test,export,mpi,web-test"


def _venv_python():
    sub = "Scripts" if os.name == "nt" else "bin"
    return os.path.join(VENV, sub, "python.exe" if os.name == "nt" else "python")


def _wanted_stamp():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return hashlib.sha256(f.read() + EXTRAS.encode()).hexdigest()


def ensure_env():
    """Create .venv and install the project if it is missing or pyproject.toml changed."""
    py = _venv_python()
    if not os.path.exists(py):
        print("dev.py: creating .venv (first run only) ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    want = _wanted_stamp()
    have = open(STAMP).read().strip() if os.path.exists(STAMP) else ""
    if have != want:
        print("dev.py: installing shard-lab and its dependencies into .venv ...", flush=True)
        subprocess.check_call([py, "-m", "pip", "install", "-q", "--upgrade", "pip"])
        subprocess.check_call([py, "-m", "pip", "install", "-q", "-e", f"{ROOT}[{EXTRAS}]"])
        with open(STAMP, "w") as f:
            f.write(want)
    return py


def _workers(rest):
    """pytest-xdist options: one worker per core (at most 4), unless the caller chose.

    The suite is ~1500 tests, most of them building Qt windows, CPU-bound and independent (each
    worker has its own QApplication and its own settings file), so two cores halve its time.
    Tests that launch real MPI ranks share the group "mpi": they run one after another on one
    worker, so they never compete with each other for the cores whose time they measure.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    chose = any(a.startswith(("-n", "--numprocesses", "--dist")) or a.endswith("no:xdist") for a in rest)
    if cores < 2 or chose:
        return []
    return ["-n", str(min(cores, 4)), "--dist", "loadgroup"]


def main(argv):
    if not argv or argv[0] not in ("app", "test", "python"):
        print(__doc__.strip())
        return 2
    py = ensure_env()
    cmd, rest = argv[0], argv[1:]
    env = dict(os.environ)
    if cmd == "app":
        return subprocess.call([py, "-m", "app", *rest], env=env, cwd=ROOT)
    if cmd == "test":
        env.setdefault("QT_QPA_PLATFORM", "offscreen")
        return subprocess.call([py, "-m", "pytest", *_workers(rest), *rest], env=env, cwd=ROOT)
    return subprocess.call([py, *rest], env=env, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
