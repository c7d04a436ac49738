"""docs/own_collective.md and its Chinese twin: every code block runs, in order, and prints what the
tutorial says it prints (simcore.show is replaced by a recorder: no window in a test)."""

import contextlib
import io
import pathlib
import re

import pytest

import simcore

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


def blocks(text, lang):
    return re.findall(r"```" + lang + r"\n(.*?)```", text, re.S)


@pytest.mark.parametrize("name", ["own_collective.md", "own_collective.zh.md"])
def test_the_tutorial_runs_and_prints_what_it_shows(name, tmp_path, monkeypatch):
    text = (DOCS / name).read_text(encoding="utf-8")
    code = [b for b in blocks(text, "python") if not b.lstrip().startswith("with comm.collective(op")]
    assert len(code) >= 3
    shown = []
    monkeypatch.setattr(simcore, "show", lambda run, **kw: shown.append(run), raising=False)
    monkeypatch.chdir(tmp_path)
    ns, out = {}, io.StringIO()
    with contextlib.redirect_stdout(out):
        for b in code:
            exec(compile(b, f"{name} block", "exec"), ns)
    printed = out.getvalue()
    for expected in blocks(text, "text"):
        assert expected.strip() in printed
    assert len(shown) == 3 and (tmp_path / "my_ring.json").exists()
    # the ring all-gather and all-reduce are each about 25 lines
    for fn in ("def ring_all_gather", "def ring_all_reduce"):
        body = next(b for b in code if fn in b).split(fn)[1].split("\n\n\n")[0]
        assert len(body.strip().splitlines()) <= 26
