"""Which n the decode command and the decode-latency view list: only tensor-parallel degrees of the
model (tensor_parallel.tp_layout's rule) that are also groups of the machine (issue 32 item 8)."""

import json

import numpy as np
import pytest

from simcore import __main__ as cli
from simcore.cost_model import tp_degree_problem
from simcore.cost_model import tp_degrees
from simcore.llm_math import LLAMA3_70B, MODELS, PALM_540B
from simcore.topology_presets import PRESETS


def _rows(out):
    return {int(line.split()[0]): line for line in out.splitlines() if line.split() and line.split()[0].isdigit()}


def test_llama3_70b_on_nvl72_lists_only_degrees_that_split_its_64_heads(capsys):
    assert cli.main(["decode", "--model", "llama3-70b", "--topology", "gb200-nvl72"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert sorted(rows) == [1, 2, 4, 8, 16, 32, 64]  # not 3, 6, 9, 12, 18, 24, 36, 72 nor 144 … 576
    assert "not a TP degree" not in out
    assert "tensor-parallel degrees of Llama-3 70B on GB200 NVL72: 1, 2, 4, 8, 16, 32, 64\n" in out
    assert "best tensor-parallel degree listed: n = 64" in out  # the best of the listed, each a TP degree


@pytest.mark.parametrize("key", list(PRESETS))
@pytest.mark.parametrize("model", list(MODELS))
def test_every_listed_degree_is_a_tp_degree_and_a_machine_group(key, model):
    m, preset = MODELS[model], PRESETS[key]
    ns = tp_degrees(m, 1024, preset)
    offered = set(preset.valid_degrees(1024))
    assert ns == sorted(ns) and ns[0] == 1
    assert all(tp_degree_problem(m, n) is None and n in offered for n in ns)
    # and none left out: every machine group that splits the model is listed
    assert [n for n in sorted(offered) if tp_degree_problem(m, n) is None] == ns


def test_the_json_and_the_default_sweep_agree(capsys):
    assert cli.main(["decode", "--model", "palm-540b", "--topology", "dgx-h100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # PaLM 540B: 48 heads, d_ff 73728, one KV head: 3, 6, 12, 24 and 48 split it; DGX H100 groups are
    # 1, 2, 4, 8 in a node and whole nodes beyond
    assert data["valid_degrees"] == [1, 2, 4, 8, 16, 24, 48]
    assert [r["n"] for r in data["rows"]] == [1, 2, 4, 8, 16, 24, 48]
    assert tp_degrees(PALM_540B, 8) == [1, 2, 3, 4, 6, 8]  # no machine: every TP degree up to 8


def test_an_explicit_n_is_still_flagged(capsys):
    assert cli.main(["decode", "--model", "llama3-70b", "--topology", "gb200-nvl72", "--n", "8,72"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert "not a TP degree" in rows[72] and "not a TP degree" not in rows[8]


def test_the_latency_view_reads_the_engines_list():
    from app.core.latency_model import check_params, latency_sweep, machine_degrees

    p = check_params({"model": "llama3-70b", "machine": "gb200-nvl72", "n_max": 1024})
    sweep = latency_sweep(p)
    assert machine_degrees(p, sweep) == tuple(tp_degrees(LLAMA3_70B, 1024, PRESETS["gb200-nvl72"]))
    assert machine_degrees(p, sweep) == (1, 2, 4, 8, 16, 32, 64)
    flat = check_params({"model": "llama3-70b", "n_max": 1024})
    assert machine_degrees(flat, latency_sweep(flat)) == tuple(tp_degrees(LLAMA3_70B, 1024))
    assert np.isfinite(sweep["t_step"][63])
