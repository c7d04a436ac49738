"""The decode cost model, chips and model shapes against published figures, and `python -m simcore decode`."""

import math

import numpy as np
import pytest

from simcore import __main__ as cli
from simcore.algorithms import ALLREDUCE_ALGOS
from simcore.links import LINKS, NVLINK4, TPU_V5E_ICI
from simcore.cost_model import REFERENCE_POINTS, decode_sweep, pope_ffn_comm, reference_estimate, tp_decode_step
from simcore.hw_specs import CHIPS, H100, TPU_V5E
from simcore.llm_math import LLAMA3_70B, MODELS, PALM_540B

from closed_forms import megatron_degrees

# ---------------------------------------------------------------------------------------
# Models and chips
# ---------------------------------------------------------------------------------------
# Parameter counts the model authors publish (HF model cards / PaLM paper), in billions.
PUBLISHED_PARAMS = {"llama2-7b": 6.74, "llama2-70b": 68.98, "llama3-8b": 8.03, "llama3-70b": 70.55,
                    "llama3.1-405b": 405.85, "palm-540b": 540.35}


@pytest.mark.parametrize("key", MODELS)
def test_model_shapes_reproduce_published_parameter_counts(key):
    assert MODELS[key].total_params() / 1e9 == pytest.approx(PUBLISHED_PARAMS[key], rel=5e-3)


def test_model_counting_conventions():
    m = LLAMA3_70B
    per_layer = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672
    assert m.matmul_params() == 80 * per_layer + 8192 * 128256
    assert m.kv_bytes_per_token(1) == 2 * 80 * 8 * 128  # 160 KiB at int8
    assert m.flops_per_token(1000) - m.flops_per_token(0) == 4 * 80 * 64 * 128 * 1000
    assert PALM_540B.total_params() == PALM_540B.matmul_params()  # tied: the embedding is the lm_head


def test_chip_peaks_and_unsupported_precisions():
    assert H100.peak_flops("bf16") == 989e12 and H100.peak_flops("fp8") == 1979e12
    assert TPU_V5E.peak_flops("int8") == 2 * TPU_V5E.peak_flops("bf16")
    for key in ("a100", "tpu-v4", "tpu-v5e"):
        with pytest.raises(ValueError, match="fp8"):
            CHIPS[key].peak_flops("fp8")
    with pytest.raises(ValueError, match="fp4"):
        H100.peak_flops("fp4")
    assert all(c.link in LINKS for c in CHIPS.values())


# ---------------------------------------------------------------------------------------
# tp_decode_step
# ---------------------------------------------------------------------------------------
def test_llama3_70b_on_tpu_v5e_worked_example_17ms_memory_bound():
    ref = REFERENCE_POINTS[0]
    assert (ref.model, ref.chip, ref.n, ref.batch, ref.ctx) == ("llama3-70b", "tpu-v5e", 8, 32, 8192)
    out = tp_decode_step(LLAMA3_70B, TPU_V5E, TPU_V5E_ICI, 8, 32, 8192, w_bytes=1, kv_bytes=1)
    assert out["t_mem"] == pytest.approx(17e-3, rel=0.03)
    assert out["t_mem"] > out["t_math"] and out["bound"] == "memory"
    ours, _ = reference_estimate(ref)
    assert ours == pytest.approx(ref.seconds, rel=0.03)


def test_palm_roofline_floor_sits_below_the_measurement():
    ref = REFERENCE_POINTS[1]
    assert ref.kind == "measurement" and ref.seconds == 29e-3
    ours, out = reference_estimate(ref)
    assert ours < ref.seconds
    assert out["kv_replicas"] == 64  # multi-query: one KV group, every chip holds it


def test_kv_per_chip_stops_shrinking_beyond_n_kv_heads():
    G = LLAMA3_70B.n_kv_heads
    kv = {n: tp_decode_step(LLAMA3_70B, H100, NVLINK4, n, 1, 4096)["kv_per_chip_per_token"]
          for n in (1, 2, 4, 8, 16, 32, 64)}
    full = LLAMA3_70B.kv_bytes_per_token(2)
    for n, v in kv.items():
        assert v == pytest.approx(full / min(n, G))
    assert kv[16] == kv[8] == kv[64] and kv[4] == 2 * kv[8]


def test_n1_has_no_communication_and_n2_has_some():
    one = tp_decode_step(LLAMA3_70B, H100, NVLINK4, 1, 8, 4096)
    two = tp_decode_step(LLAMA3_70B, H100, NVLINK4, 2, 8, 4096)
    assert one["t_comm"] == 0.0 and one["t_step"] == max(one["t_math"], one["t_mem"])
    msg = 8 * LLAMA3_70B.d_model * 2
    # two ring all-reduces per layer, each 2(n − 1)·(α + S/(nβ)) (Thakur, Rabenseifner & Gropp 2005), n = 2
    assert two["t_comm"] == pytest.approx(2 * 80 * 2 * (NVLINK4.alpha + msg / (2 * NVLINK4.bw)), rel=1e-12)
    assert two["t_comm"] > 0 and two["t_mem"] == pytest.approx(one["t_mem"] / 2, rel=1e-12)


def test_math_bound_at_large_batch():
    out = tp_decode_step(LLAMA3_70B, H100, NVLINK4, 8, 4096, 16)
    assert out["bound"] == "math" and out["t_math"] > out["t_mem"]


def test_bad_arguments_raise():
    with pytest.raises(ValueError):
        tp_decode_step(LLAMA3_70B, H100, NVLINK4, 0, 1, 10)
    with pytest.raises(ValueError, match="algorithm"):
        tp_decode_step(LLAMA3_70B, H100, NVLINK4, 2, 1, 10, algo="tree")
    with pytest.raises(ValueError):
        decode_sweep(LLAMA3_70B, H100, NVLINK4, [1, 0], 1, 10)


# ---------------------------------------------------------------------------------------
# The vectorized sweep
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("algo", ALLREDUCE_ALGOS)
@pytest.mark.parametrize("model,chip", [("llama3-70b", "h100"), ("palm-540b", "tpu-v4"), ("llama2-7b", "a100")])
def test_sweep_equals_tp_decode_step_at_every_n(algo, model, chip):
    m, c = MODELS[model], CHIPS[chip]
    link = LINKS[c.link]
    ns = np.array([1, 2, 3, 4, 6, 8, 12, 16, 32, 64])
    kw = dict(batch=16, ctx=2048, w_bytes=1.0, kv_bytes=2.0, act_bytes=2.0, algo=algo, compute_prec="int8")
    sweep = decode_sweep(m, c, link, ns, **kw)
    for i, n in enumerate(ns):
        one = tp_decode_step(m, c, link, int(n), **kw)
        for key, val in one.items():
            if key == "bound":
                assert sweep[key][i] == val, (n, key)
            else:
                assert sweep[key][i] == pytest.approx(val, rel=1e-12, abs=0), (n, key)


# ---------------------------------------------------------------------------------------
# Pope et al.'s feed-forward communication
# ---------------------------------------------------------------------------------------
def test_pope_1d_is_independent_of_n_and_2d_falls_as_inverse_sqrt_n():
    E, F, BL, bw = 8192, 32768, 64, 45e9
    one = [pope_ffn_comm("1d", BL, E, F, n, bw) for n in (4, 16, 64, 256)]
    assert one[0] > 0 and all(t == one[0] for t in one)
    two = {n: pope_ffn_comm("2d", BL, E, F, n, bw) for n in (4, 16, 64, 256)}
    for n in (4, 16, 64):
        assert two[4 * n] == pytest.approx(two[n] / 2, rel=1e-12)
    assert two[64] * math.sqrt(64) == pytest.approx(8 * BL * E * 2 / bw)


def test_pope_weight_gathered_N_is_clipped_optimum():
    E, F, bw = 8192, 32768, 45e9
    for BL, n in ((64, 64), (2048, 64), (10 ** 6, 64), (4, 16)):
        t, N = pope_ffn_comm("gathered", BL, E, F, n, bw)
        assert N == min(max(math.sqrt(BL * n / F), 1.0), n)
        assert t == pytest.approx((2 * E * F * N / n + 2 * BL * E / N) * 2 / bw)
    # a case where the optimum lies inside [1, n]: both terms equal, and no other N does better
    BL, n = 2 ** 17, 64
    t, N = pope_ffn_comm("gathered", BL, E, F, n, bw)
    assert 1 < N < n and 2 * E * F * N / n == pytest.approx(2 * BL * E / N)
    assert t == pytest.approx(4 * E * math.sqrt(BL * F) / math.sqrt(n) * 2 / bw)
    others = [(2 * E * F * M / n + 2 * BL * E / M) * 2 / bw for M in np.linspace(1, n, 200)]
    assert t <= min(others) * (1 + 1e-12)
    # clipped: a tiny batch gathers nothing (N = 1), a huge one gathers over all chips
    assert pope_ffn_comm("gathered", 1, E, F, 64, bw)[1] == 1.0
    assert pope_ffn_comm("gathered", 10 ** 9, E, F, 64, bw)[1] == 64.0
    with pytest.raises(ValueError, match="variant"):
        pope_ffn_comm("3d", 1, E, F, 8, bw)


# ---------------------------------------------------------------------------------------
# python -m simcore decode
# ---------------------------------------------------------------------------------------
def _rows(text):
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0].isdigit():
            rows[int(parts[0])] = parts
    return rows


def test_decode_cli_table(capsys):
    rc = cli.main(["decode", "--model", "llama3-70b", "--chip", "h100", "--n", "1,2,4,8,16,32"])
    out = capsys.readouterr().out
    assert rc == 0
    rows = _rows(out)
    assert sorted(rows) == [1, 2, 4, 8, 16, 32]
    t_comm = {n: float(r[3]) for n, r in rows.items()}
    assert t_comm[1] == 0 and all(t_comm[n] > 0 for n in (2, 4, 8, 16, 32))
    kv = {n: int(r[5].replace(",", "")) for n, r in rows.items()}
    assert kv[16] == kv[8] == kv[32] < kv[4]
    assert "replicated" in " ".join(rows[16]) and "replicated" not in " ".join(rows[8])
    sweep = decode_sweep(LLAMA3_70B, H100, NVLINK4, [4], 1, 4096)
    assert float(rows[4][4]) == pytest.approx(sweep["t_step"][0] * 1e3, abs=1e-3)


@pytest.mark.parametrize("argv,needle", [
    (["--model", "gpt-9"], "unknown model"),
    (["--chip", "tpu-v9"], "unknown chip"),
    (["--n", "1,two"], "--n"),
    (["--n", "0,2"], ">= 1"),
    (["--batch", "0"], "--batch"),
    (["--w-bytes", "-1"], "--w-bytes"),
    (["--kv-bytes", "nan"], "--kv-bytes"),
    (["--algo", "tree"], "all-reduce algorithm"),
    (["--link", "carrier-pigeon"], "unknown link"),
    (["--chip", "a100", "--prec", "fp8"], "fp8"),
])
def test_decode_cli_bad_values_give_one_line_and_code_2(capsys, argv, needle):
    rc = cli.main(["decode"] + argv)
    err = capsys.readouterr().err
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and needle in err


# ---------------------------------------------------------------------------------------
# Which n tensor parallelism can use
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", MODELS)
def test_valid_tp_degrees_follow_megatrons_rule(key):
    from simcore.cost_model import valid_tp_degrees

    got = valid_tp_degrees(MODELS[key], 4096)
    assert got.tolist() == megatron_degrees(MODELS[key], 4096)
    assert valid_tp_degrees(MODELS[key], 5).tolist() == megatron_degrees(MODELS[key], 5)


def test_llama3_70b_degrees_are_the_divisors_of_64_and_405b_stops_at_128():
    from simcore.cost_model import tp_degree_problem, valid_tp_degrees

    # Llama-3 70B: 64 query heads, 8 KV heads, d_ff 28672 = 2^12 · 7 (Meta's model card / config.json)
    assert valid_tp_degrees(LLAMA3_70B, 64).tolist() == [1, 2, 4, 8, 16, 32, 64]
    assert valid_tp_degrees(LLAMA3_70B, 1024).tolist() == [1, 2, 4, 8, 16, 32, 64]
    assert valid_tp_degrees(MODELS["llama3.1-405b"], 1024).tolist() == [1, 2, 4, 8, 16, 32, 64, 128]
    # PaLM 540B: 48 heads and multi-query attention (G = 1): every divisor of 48
    assert valid_tp_degrees(PALM_540B, 64).tolist() == [1, 2, 3, 4, 6, 8, 12, 16, 24, 48]
    assert "not divisible by 53" in tp_degree_problem(MODELS["llama3.1-405b"], 53)
    assert tp_degree_problem(MODELS["llama3.1-405b"], 16) is None
    with pytest.raises(ValueError, match="n_max"):
        valid_tp_degrees(LLAMA3_70B, 0)


def test_a_kv_split_that_straddles_groups_is_not_a_degree():
    # H = 12 heads in G = 4 groups of 3: n = 6 gives 2 heads per device, across two groups;
    # n divides neither G nor is a multiple of it. n = 2 (2 groups each) and n = 12 (KV x3) work.
    from dataclasses import replace

    from simcore.cost_model import valid_tp_degrees

    toy = replace(LLAMA3_70B, name="toy", n_heads=12, n_kv_heads=4, d_ff=48)
    assert valid_tp_degrees(toy, 12).tolist() == megatron_degrees(toy, 12) == [1, 2, 4, 12]


def test_best_tp_degree_is_the_fastest_valid_n_that_fits():
    from simcore.cost_model import best_tp_degree, valid_tp_degrees

    m, chip = MODELS["llama3.1-405b"], H100
    ns = np.arange(1, 1025)
    sweep = decode_sweep(m, chip, NVLINK4, ns, 32, 1_000_000)
    valid = valid_tp_degrees(m, 1024)
    best, fits = best_tp_degree(sweep, chip.hbm_bytes, valid)
    assert best in megatron_degrees(m, 1024)
    assert not fits  # 1e6 tokens of KV for 32 sequences fit on no 128 H100s
    # the fastest among the valid degrees, found by a plain loop
    want = min(megatron_degrees(m, 1024), key=lambda n: sweep["t_step"][n - 1])
    assert best == want
    # a setting that fits: among the fitting valid n only
    sweep = decode_sweep(LLAMA3_70B, chip, NVLINK4, ns, 32, 8192)
    best, fits = best_tp_degree(sweep, chip.hbm_bytes, valid_tp_degrees(LLAMA3_70B, 1024))
    ok = [n for n in megatron_degrees(LLAMA3_70B, 1024) if sweep["mem_per_chip"][n - 1] <= chip.hbm_bytes]
    assert fits and best == min(ok, key=lambda n: sweep["t_step"][n - 1])
    with pytest.raises(ValueError, match="no tensor-parallel degree"):
        best_tp_degree(decode_sweep(LLAMA3_70B, chip, NVLINK4, np.array([3, 5]), 1, 0), chip.hbm_bytes, [1, 2])


def test_decode_cli_marks_invalid_degrees_and_names_the_best_valid_n(capsys):
    assert cli.main(["decode", "--model", "llama3.1-405b", "--n", "1,16,53,128", "--batch", "32",
                     "--ctx", "1000000"]) == 0
    out = capsys.readouterr().out
    row = {line.split()[0]: line for line in out.splitlines() if line.split() and line.split()[0].isdigit()}
    assert "not a TP degree" in row["53"] and "not divisible by 53" in row["53"]
    assert all("not a TP degree" not in row[n] for n in ("1", "16", "128"))
    assert "best tensor-parallel degree listed: n = 16" in out


# The communication term on a real machine
# ---------------------------------------------------------------------------------------
def test_decode_t_comm_follows_the_topology():
    from simcore.cost_model import comm_time, node_boundary

    ns = np.array([1, 2, 4, 8, 12, 16, 32])
    s = decode_sweep(LLAMA3_70B, H100, None, ns, 1, 4096, topology="dgx-h100")
    S = 1 * LLAMA3_70B.d_model * 2.0  # one token's activations in bf16
    assert s["msg_bytes"][0] == S
    L2 = 2 * LLAMA3_70B.n_layers
    # a decode token's all-reduce (16 KiB) is timed as NCCL's tuner runs it: Ring with the LL protocol
    # (NVIDIA/nccl src/graph/tuning.cc: baseLatencies Ring LL 6.6 µs; hwLatencies NVLINK Ring LL 0.6 µs and
    # NET Ring LL 2.7 µs per step; LL bus bandwidth min(llMaxBw, busBw/2): 141 GB/s on one Hopper node,
    # 39 GB/s on two x86 nodes; getNetOverhead 1 µs per step on a node's steps when the ring leaves it)
    one = 6.6e-6 + 14 * 0.6e-6 + S * 14 / 8 / 141e9
    assert s["t_comm"][3] == pytest.approx(L2 * one, rel=1e-12)
    # across two nodes NCCL runs Tree LL (issue 32): 6.8 + 2(7 · 0.6 + 5.0) µs, bandwidth 39 · 0.85 · 0.5 GB/s ×
    # treeCorrectionFactor LL 0.7 at 16 KiB (tuning.cc), not the rings' 40 µs
    two = 6.8e-6 + 2 * (7 * 0.6e-6 + 5.0e-6) + S / (39e9 * 0.85 * 0.5 * 0.7)
    assert s["t_comm"][5] == pytest.approx(L2 * two, rel=1e-12)
    assert comm_time("dgx-h100", 16, S) == pytest.approx(two, rel=1e-12)
    assert list(s["valid"]) == [True, True, True, True, False, True, True]
    assert math.isnan(s["t_comm"][4]) and s["bound"][4] == "invalid"
    assert list(s["n_nodes"]) == [1, 1, 1, 1, 2, 2, 4] and node_boundary("dgx-h100") == 8
    with pytest.raises(ValueError, match="or a topology"):
        decode_sweep(LLAMA3_70B, H100, None, ns, 1, 4096)
    with pytest.raises(ValueError, match="unknown hardware preset"):
        decode_sweep(LLAMA3_70B, H100, None, ns, 1, 4096, topology="dgx-b300")
    one = tp_decode_step(LLAMA3_70B, H100, None, 16, 1, 4096, topology="dgx-h100")
    assert one["t_comm"] == pytest.approx(s["t_comm"][5], rel=1e-12)
    # the machine does not change the roofline terms, only communication
    flat = decode_sweep(LLAMA3_70B, H100, NVLINK4, ns, 1, 4096)
    assert np.allclose(flat["t_mem"], s["t_mem"])
    k = 2 * (ns[1:4] - 1)  # ring steps of an all-reduce on n = 2, 4, 8: NCCL Ring LL inside the node, as above
    assert np.allclose(L2 * (6.6e-6 + k * 0.6e-6 + S * k / ns[1:4] / 141e9), s["t_comm"][1:4], rtol=1e-12)
    assert flat["t_comm"][0] == s["t_comm"][0] == 0


def get_ib():
    from simcore.topology_presets import PRESETS

    return PRESETS["dgx-h100"].layout(16).inter


def test_nvl72_keeps_72_gpus_on_nvlink_and_a_torus_uses_both_directions():
    from simcore.hw_specs import CHIPS

    s = decode_sweep(LLAMA3_70B, CHIPS["gb200"], None, [8, 24, 72, 16, 48], 1, 4096, topology="gb200-nvl72")
    # one NVLink domain of 72 hosts a group of 16 (TP 16, 32, 64 inside one rack); 48 is neither a
    # divisor of 72 nor a power of two
    assert list(s["n_nodes"]) == [1] * 5 and list(s["valid"]) == [True, True, True, True, False]
    dgx = decode_sweep(LLAMA3_70B, H100, None, [16], 1, 4096, topology="dgx-h100")
    assert dgx["n_nodes"][0] == 2
    v5e = decode_sweep(LLAMA3_70B, TPU_V5E, None, [256], 32, 8192, w_bytes=1, kv_bytes=1, topology="tpu-v5e-16x16")
    flat = decode_sweep(LLAMA3_70B, TPU_V5E, TPU_V5E_ICI, [256], 32, 8192, w_bytes=1, kv_bytes=1)
    assert v5e["t_comm"][0] < flat["t_comm"][0] / 2  # bidirectional rings on two axes beat one ring one way
    assert v5e["node_size"][0] == 0


def test_decode_cli_with_a_topology(capsys):
    rc = cli.main(["decode", "--model", "llama3-70b", "--topology", "dgx-h100", "--n", "4,8,12,16"])
    out = capsys.readouterr().out
    assert rc == 0 and "DGX H100" in out and "node boundary: beyond n = 8" in out
    assert "tensor-parallel degrees of Llama-3 70B on DGX H100: 1, 2, 4, 8, 16, 32\n" in out  # not 24: 64 heads
    rows = _rows(out)
    assert "no such group" in " ".join(rows[12]) and "2 nodes" in " ".join(rows[16])
    sweep = decode_sweep(LLAMA3_70B, H100, None, [16], 1, 4096, topology="dgx-h100")
    assert float(rows[16][3]) == pytest.approx(sweep["t_comm"][0] * 1e3, abs=1e-3)


def test_decode_cli_json(capsys):
    import json

    rc = cli.main(["decode", "--topology", "tpu-v4-4x4x4", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["topology"] == "tpu-v4-4x4x4" and data["chip"] == "TPU v4"
    assert [r["n"] for r in data["rows"]] == data["valid_degrees"] == [1, 4, 8, 16, 32, 64]
    assert data["node_size"] is None and data["link"] is None
    rc = cli.main(["decode", "--n", "8,12", "--topology", "dgx-h100", "--json"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows[1]["valid"] is False and rows[1]["t_comm"] is None and rows[0]["t_comm"] > 0
    rc = cli.main(["decode", "--n", "2", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["topology"] is None and data["link"]["bw"] == 450e9


@pytest.mark.parametrize("argv,needle", [
    (["--topology", "dgx-a100"], "unknown topology"),
    (["--topology", "dgx-h100", "--link", "nvlink4"], "give one"),
    (["--topology", "tpu-v5e-16x16", "--n", "512"], "1..256"),
])
def test_decode_cli_bad_topology_arguments(capsys, argv, needle):
    assert cli.main(["decode"] + argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and needle in err
