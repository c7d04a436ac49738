"""docs/extending.md walks adding a toy algorithm, topology kind and op as one patch. The patch is
applied to a copy of the current tree, its translations rebuilt there, and the tests it touches run
there: the toy's own and every test that holds each registered algorithm or op to something (closed
forms from the literature, plain references, words in both languages). The real tree is untouched."""

import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the toy's own tests and every test that reads the whole registry (they failed before the walk
# wrote a closed form, a plain reference, sentences and their Chinese for each new algorithm)
TOUCHED_TESTS = ["tests/test_toy_walk.py", "tests/test_comm_sim.py", "tests/test_trace_reference.py",
                 "tests/test_explain_algorithms.py", "tests/test_classroom_formula.py", "tests/test_topology.py",
                 "tests/test_all_to_all.py", "tests/test_properties.py", "tests/test_calibrate.py", "tests/test_cli.py",
                 "tests/test_classroom_i18n.py"]


def _doc() -> str:
    with open(os.path.join(ROOT, "docs", "extending.md"), encoding="utf-8") as f:
        return f.read()


def _doc_patch() -> str:
    blocks = re.findall(r"```diff\n(.*?)```", _doc(), flags=re.S)
    assert len(blocks) == 1, "extending.md should hold one diff block"
    return blocks[0]


def _copy_tree(dest):
    """The tree as committed and edited (git's files; without git, the project's folders)."""
    try:
        names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True,
                               timeout=60).stdout.decode().split("\0")
    except (OSError, subprocess.SubprocessError):
        names = [os.path.relpath(os.path.join(d, f), ROOT) for top in ("app", "simcore", "resources", "tests", "tools")
                 for d, _, fs in os.walk(os.path.join(ROOT, top)) for f in fs if "__pycache__" not in d]
        names += ["pyproject.toml", "README.md", "docs/extending.md"]
    for name in filter(None, names):
        if os.path.isfile(os.path.join(ROOT, name)):
            os.makedirs(os.path.dirname(os.path.join(dest, name)) or dest, exist_ok=True)
            shutil.copy2(os.path.join(ROOT, name), os.path.join(dest, name))


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git (git apply)")
def test_the_walks_patch_applies_and_the_tests_it_touches_pass(tmp_path):
    tree = tmp_path / "tree"
    _copy_tree(tree)
    patch = tmp_path / "extending.patch"
    patch.write_text(_doc_patch(), encoding="utf-8")
    applied = subprocess.run(["git", "apply", str(patch)], cwd=tree, capture_output=True, text=True, timeout=60)
    assert applied.returncode == 0, applied.stderr
    env = dict(os.environ, PYTHONPATH=str(tree), QT_QPA_PLATFORM="offscreen",
               SHARD_LAB_SETTINGS=str(tmp_path / "settings.ini"))
    # the .ts gains the Chinese in the patch; the .qm the app loads is compiled from it, as the doc says
    qm = subprocess.run([sys.executable, "tools/update_translations.py"], cwd=tree, env=env, capture_output=True,
                        text=True, timeout=600)
    assert qm.returncode == 0 and "0 without a translation" in qm.stdout + qm.stderr, qm.stdout + qm.stderr
    run = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=-q", "-n", "0", "-p", "no:cacheprovider",
                          *TOUCHED_TESTS], cwd=tree, env=env, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "failed" not in run.stdout


def test_the_doc_names_every_file_its_patch_touches():
    files = set(re.findall(r"^\+\+\+ b/(\S+)", _doc_patch(), flags=re.M))
    assert files == {"simcore/algorithms.py", "simcore/broadcast.py", "simcore/collectives.py", "simcore/topology.py",
                     "tests/closed_forms.py", "tests/test_trace_reference.py", "app/words.py",
                     "resources/i18n/shard_lab_zh_CN.ts", "tests/test_toy_walk.py"}
    prose = _doc().split("```diff")[0]
    for name in files - {"tests/test_toy_walk.py"}:
        assert f"`{name}`" in prose, f"the walk's text does not name {name}"
    assert "phase=" in prose  # every send names its phase: the sends of the toy once had none
