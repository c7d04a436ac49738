"""python -m simcore: selftest, trace, and one clear line with exit code 2 for bad arguments."""

import json
import subprocess
import sys

import pytest


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "simcore", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_selftest_exits_zero():
    out = _run("selftest")
    assert out.returncode == 0, out.stderr
    assert "selftest passed" in out.stdout
    assert "tensor-parallel" in out.stdout


def test_trace_chrome_ring_allreduce_n8(tmp_path):
    path = tmp_path / "t.json"
    out = _run("trace", "--op", "all-reduce", "--algo", "ring", "--n", "8", "--format", "chrome",
               "--out", str(path), "--summary")
    assert out.returncode == 0, out.stderr
    events = json.loads(path.read_text())["traceEvents"]
    assert sum((e.get("cat"), e.get("tid")) == ("comm", 1) for e in events) == 112
    assert "busbw" in out.stdout and "algbw" in out.stdout


def test_trace_json_round_trips(tmp_path):
    from simcore.trace import Trace

    path = tmp_path / "t.json"
    assert _run("trace", "--op", "reduce-scatter", "--n", "5", "--out", str(path)).returncode == 0
    tr = Trace.from_json(path.read_text())
    assert len(tr.messages) == 5 * 4


@pytest.mark.parametrize("args", [
    ["trace", "--n", "0"],
    ["trace", "--n", "eight"],
    ["trace", "--bytes", "-1"],
    ["trace", "--bytes", "lots"],
    ["trace", "--op", "teleport"],  # no such op (docs/extending.md adds a toy broadcast)
    ["trace", "--op", "all-gather", "--algo", "rd"],
    ["trace", "--n", "100000"],
    ["frobnicate"],
])
def test_bad_arguments_one_line_exit_2(args):
    out = _run(*args)
    assert out.returncode == 2, (args, out.stdout, out.stderr)
    lines = [ln for ln in out.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr


def test_unwritable_output_leaves_nothing(tmp_path):
    target = tmp_path / "no-such-dir" / "t.json"
    out = _run("trace", "--out", str(target))
    assert out.returncode == 2 and "cannot write" in out.stderr
    assert not target.parent.exists()


def test_trace_csv_from_the_shell_holds_plain_numbers(tmp_path):
    import csv

    path = tmp_path / "t.csv"
    out = _run("trace", "--op", "all-reduce", "--algo", "rd", "--n", "6", "--format", "csv", "--out", str(path))
    assert out.returncode == 0, out.stderr
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4 * 2 + 2 * 2  # rd at n = 6: 2 folds, 2 rounds of 4, 2 unfolds
    for row in rows:
        assert [float(row[k]) for k in ("nbytes", "t_start", "t_end", "src", "dst", "step (from 1)")]
        assert int(row["step (from 1)"]) >= 1 and row["nbytes"].isdigit()
        assert float(row["t_end"]) > float(row["t_start"]) >= 0


def test_trace_gzipped_chrome_with_flows(tmp_path):
    import gzip

    path = tmp_path / "t.json.gz"
    out = _run("trace", "--n", "16", "--format", "chrome", "--flows", "--out", str(path))
    assert out.returncode == 0, out.stderr
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    sends = sum((e.get("cat"), e.get("tid")) == ("comm", 1) for e in events)
    assert sum(e["ph"] == "s" for e in events) == sends == 2 * 16 * 15
    assert not list(tmp_path.glob("*.part*"))


def test_trace_accepts_a_thousand_devices_and_says_the_limit():
    out = _run("trace", "--op", "all-reduce", "--algo", "rd", "--n", "1024", "--summary")
    assert out.returncode == 0, out.stderr
    assert f"messages      {1024 * 10} in 10 steps" in out.stdout
    out = _run("trace", "--n", "4097")
    assert out.returncode == 2 and "at most 4096" in out.stderr


# ---------------------------------------------------------------------------------------
# python -m simcore step --topology: the step on a real machine's wiring (called in-process)
# ---------------------------------------------------------------------------------------
def test_step_on_a_machine_runs_its_own_all_reduce(capsys):
    from simcore import __main__ as cli
    from simcore.comm_sim import t_formula_on
    from simcore.llm_math import MODELS
    from simcore.topology_presets import get_preset

    rc = cli.main(["step", "--model", "llama3-8b", "--topology", "dgx-h100", "--n", "16", "--batch", "1",
                   "--ctx", "512"])
    text = capsys.readouterr().out
    assert rc == 0
    assert "16 x H100 SXM, DGX H100: 8 per node" in text  # the chip is the machine's; two nodes of 8
    model, dgx = MODELS["llama3-8b"], get_preset("dgx-h100")
    S = model.d_model * 2.0  # one token's bf16 activation per all-reduce
    flat = 2 * model.n_layers * t_formula_on(dgx.topology(16), "ring", S)  # a flat ring over the same wiring
    hier = 2 * model.n_layers * dgx.allreduce_time(16, S)  # the machine's own: NCCL's tuner for 8 KiB
    assert f"t_comm {hier * 1e3:.3f} ms" in text and hier < flat
    algo, proto, why = dgx.topology(16).choose("all-reduce", S)  # the engine's pick, said as it says it
    assert (algo, proto) == ("tree", "LL")  # NCCL's Tree across the two nodes (issue 32)
    assert f"every all-reduce (8 KiB) is DGX H100's own choice: tree with NCCL LL ({why})" in text
    assert "all-reduce the machine's own (below)" in text and "all-reduce ring," not in text
    # the sum is named the roofline with no overlap; the lower bound is the max, with the engine's value
    roof = cli_step_roof(model, dgx, 16, S)
    assert f"t_step {roof['t_step_no_overlap'] * 1e3:.3f} ms  (no overlap: max(t_math, t_mem) + t_comm)" in text
    assert f"lower bound {roof['t_lower_bound'] * 1e3:.3f} ms  (max(t_math, t_mem, t_comm)" in text
    assert "difference +0.000 ms" in text or "difference -0.000 ms" in text  # memory-bound: sim = roofline


def cli_step_roof(model, preset, n, S):
    from simcore.cost_model import tp_decode_step
    from simcore.hw_specs import CHIPS

    return tp_decode_step(model, CHIPS["h100"], None, n, 1, 512, topology=preset)


def test_decode_on_a_machine_says_what_it_picked_for_each_n(capsys):
    from simcore import __main__ as cli
    from simcore.llm_math import MODELS
    from simcore.topology_presets import get_preset

    assert cli.main(["decode", "--model", "llama3-70b", "--topology", "dgx-h100", "--n", "1,8,16"]) == 0
    text = capsys.readouterr().out
    dgx, S = get_preset("dgx-h100"), MODELS["llama3-70b"].d_model * 2.0
    rows = {int(line.split()[0]): line for line in text.splitlines() if line.split() and line.split()[0].isdigit()}
    for n in (8, 16):
        algo, proto, _ = dgx.topology(n).choose("all-reduce", S)
        assert f"all-reduce {algo} {proto}" in rows[n]  # ring LL in one node, NCCL's channel rings across two
    assert "all-reduce" not in rows[1]  # one chip sends nothing
    assert f"the machine's choice at n = 8 for one all-reduce of 16 KiB: {dgx.topology(8).choose('all-reduce', S)[2]}" \
        in text
    assert "the roofline with no overlap" in text and "max(t_math, t_mem, t_comm)" in text
    assert "hierarchical" not in text  # the machine does not run it by default
    # an algorithm asked for by name is what the rows say
    assert cli.main(["decode", "--model", "llama3-70b", "--topology", "dgx-h100", "--n", "8", "--algo", "rd"]) == 0
    text = capsys.readouterr().out
    assert "all-reduce rd" in text and "the machine's choice" not in text


@pytest.mark.parametrize("argv,msg", [
    (["--topology", "dgx-h100", "--link", "nvlink4"], "give one"),
    (["--topology", "dgx-a100"], "topology"),
    (["--topology", "dgx-h100", "--prefill", "16"], "--prefill with --topology"),
    (["--topology", "dgx-h100", "--n", "9999"], "at most"),
])
def test_step_topology_bad_input_one_line_exit_2(argv, msg, capsys):
    from simcore import __main__ as cli

    assert cli.main(["step", "--model", "llama3-8b", "--n", "2", *argv]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1, err


# ---------------------------------------------------------------------------------------
# decode and step: one rule for which chips, wired how (cli_decode.parse_machine)
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv,msg", [
    (["--topology", "dgx-h100", "--link", "nvlink4"], "--link and --topology both say how the chips are connected"),
    (["--chip", "no-such-chip"], "unknown chip 'no-such-chip'"),
    (["--link", "no-such-link"], "unknown link 'no-such-link'"),
    (["--algo", "tree"], "unknown all-reduce algorithm 'tree'"),
    (["--model", "gpt-9"], "unknown model 'gpt-9'"),
])
def test_decode_and_step_refuse_the_same_machines_with_the_same_words(argv, msg, capsys):
    from simcore import __main__ as cli

    errors = []
    for cmd in ("decode", "step"):
        assert cli.main([cmd, "--n", "2", *argv]) == 2
        errors.append(capsys.readouterr().err)
    assert msg in errors[0] and errors[0].count("\n") == 1, errors
    assert errors[0].replace("simcore decode:", "simcore step:", 1) == errors[1]  # "simcore decode: ..." / "step: ..."


def test_decode_and_step_take_the_machines_chip(capsys):
    from simcore import __main__ as cli

    assert cli.main(["decode", "--model", "llama3-8b", "--topology", "dgx-h100", "--n", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["chip"], out["topology"], out["link"]) == ("H100 SXM", "dgx-h100", None)  # no --chip: the machine's
    assert cli.main(["step", "--model", "llama3-8b", "--topology", "dgx-h100", "--n", "8", "--ctx", "64"]) == 0
    assert "8 x H100 SXM, DGX H100" in capsys.readouterr().out


def test_decode_offers_nccls_model_or_the_measured_launch_floors(capsys):
    """--launch model (the default) prices NCCL's calls by its tuning model alone; graph / eager by no
    less than the wall time measured with CUDA graphs / eager launches (nccl_tuning.LAUNCH_FLOOR), and
    the machine's-choice line says which the numbers use. Only a machine NCCL's model times takes it."""
    from simcore import __main__ as cli
    from simcore.nccl_tuning import LAUNCH_FLOOR

    comm = {}
    for launch in ("model", "graph", "eager"):
        assert cli.main(["decode", "--model", "llama3-70b", "--topology", "dgx-h100", "--n", "8",
                         "--launch", launch, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["launch"] == launch
        comm[launch] = out["rows"][0]["t_comm"]
    assert comm["model"] < comm["graph"] < comm["eager"]
    # Llama-3 70B decode: 2 all-reduces a layer × 80 layers, each at least the floor
    assert comm["graph"] >= 160 * LAUNCH_FLOOR["graph"] * 0.999
    assert cli.main(["decode", "--model", "llama3-70b", "--topology", "dgx-h100", "--n", "8", "--launch", "graph"]) == 0
    assert "as measured with CUDA graphs" in capsys.readouterr().out
    assert cli.main(["decode", "--model", "llama3-70b", "--n", "8", "--launch", "eager"]) == 2
    assert "give a GPU machine timed by NCCL's model" in capsys.readouterr().err
