"""docs/extending.md walks adding a toy algorithm and topology as a patch: it must still apply to the tree."""

import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _doc_patch() -> str:
    with open(os.path.join(ROOT, "docs", "extending.md"), encoding="utf-8") as f:
        blocks = re.findall(r"```diff\n(.*?)```", f.read(), flags=re.S)
    assert len(blocks) == 1, "extending.md should hold one diff block"
    return blocks[0]


@pytest.mark.skipif(shutil.which("git") is None or not os.path.exists(os.path.join(ROOT, ".git")),
                    reason="needs git and a git checkout")
def test_the_walks_patch_applies_to_the_current_tree(tmp_path):
    patch = tmp_path / "extending.patch"
    patch.write_text(_doc_patch(), encoding="utf-8")
    proc = subprocess.run(["git", "apply", "--check", str(patch)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_the_patch_touches_the_places_the_doc_names():
    files = set(re.findall(r"^\+\+\+ b/(\S+)", _doc_patch(), flags=re.M))
    assert files == {"simcore/algorithms.py", "simcore/broadcast.py", "simcore/collectives.py", "simcore/topology.py",
                     "tests/test_toy_walk.py"}
