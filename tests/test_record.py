"""python -m simcore record: any script, the lecture's module names served by simcore, one trace file."""

import os
import shutil

import numpy as np

from simcore import __main__ as cli
from simcore.comm_sim import Comm, allreduce_ring, switch
from simcore.trace import Trace

LECTURE = os.path.join(os.path.dirname(__file__), "lecture", "shard_lab.py.txt")


def test_the_lecture_file_runs_unchanged_and_every_collective_is_recorded(tmp_path, capsys):
    script = tmp_path / "shard_lab.py"
    shutil.copy(LECTURE, script)
    assert cli.main(["record", str(script)]) == 0
    tr = Trace.load(tmp_path / "shard_lab.trace.json")
    ns = sorted({c.n for c in tr.collectives})
    assert ns == [1, 2, 4, 8]  # the self-test's four sharded matmuls, then TP on 1, 2, 4, 8 devices
    starts = [c.t_start for c in tr.collectives]
    assert starts == sorted(starts)  # one Comm after another, in the order the script made them
    assert "自检通过" in capsys.readouterr().out


def test_merge_keeps_each_run_and_shifts_its_clock():
    runs = []
    for n in (2, 4):
        comm = Comm(switch(n))
        allreduce_ring(comm, [np.ones(4 * n)] * n, label=f"n={n}")
        runs.append(comm.trace)
    tr = Trace.merge(runs)
    assert [c.label for c in tr.collectives] == ["n=2", "n=4"]
    second = tr.collectives[1]
    assert second.t_start == runs[0].t_end and second.first_msg == runs[0].n_messages
    off = runs[0].t_end
    got = [(m.coll, m.src, m.dst, m.chunk, m.contributors, m.t_start, m.t_end) for m in tr.messages_of(1)]
    assert got == [(1, m.src, m.dst, m.chunk, m.contributors, m.t_start + off, m.t_end + off) for m in runs[1].messages]


def test_a_script_that_raises_keeps_the_trace_and_its_own_traceback(tmp_path, capsys):
    script = tmp_path / "homework.py"
    script.write_text("import sys\nimport numpy as np\nfrom comm_sim import Comm, switch, allreduce_ring\n"
                      "assert sys.argv[1:] == ['--size', '8'], sys.argv\n"
                      "allreduce_ring(Comm(switch(4)), [np.ones(8)] * 4, label='mine')\n"
                      "def bug():\n    raise KeyError('oops')\nbug()\n")
    out = tmp_path / "run.json.gz"
    assert cli.main(["record", str(script), "--size", "8", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n  File \"" + str(script))
    assert "record.py" not in err and "runpy" not in err and "KeyError: 'oops'" in err
    assert [c.label for c in Trace.load(out).collectives] == ["mine"]


def test_the_bare_names_are_gone_after_the_run(tmp_path):
    import sys

    script = tmp_path / "s.py"
    script.write_text("import hw_specs, llm_math, shard_lab, transformer_lab\n")
    assert cli.main(["record", str(script)]) == 0
    assert "hw_specs" not in sys.modules and "comm_sim" not in sys.modules


def test_record_show_opens_what_it_wrote(tmp_path, monkeypatch):
    from simcore import viewer

    shown = []
    monkeypatch.setattr(viewer, "show", lambda run, **kw: shown.append(run))
    script = tmp_path / "s.py"
    script.write_text("import numpy as np\nfrom comm_sim import Comm, switch, allreduce_ring\n"
                      "allreduce_ring(Comm(switch(2)), [np.ones(4)] * 2)\n")
    assert cli.main(["record", str(script), "--show"]) == 0
    assert shown == [str(tmp_path / "s.trace.json")]


def test_a_missing_script_is_one_line(tmp_path, capsys):
    assert cli.main(["record", str(tmp_path / "nope.py")]) == 2
    assert capsys.readouterr().err.strip() == f"simcore: {tmp_path / 'nope.py'}: no such script"
