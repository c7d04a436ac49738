"""A real model's step, op by op on one clock: against the roofline, with overlap, SP, and as a Chrome trace."""

import json
import math

import numpy as np
import pytest

from simcore import __main__ as cli
from simcore.algorithms import t_formula_on
from simcore.collectives import allreduce_ring
from simcore.comm_sim import Comm
from simcore.links import NVLINK4, TPU_V5E_ICI, LinkSpec
from simcore.topology import switch
from simcore.cost_model import tp_decode_step, tp_prefill_step, tp_step_overlap
from simcore.hw_specs import H100, TPU_V5E, Chip
from simcore.llm_math import LLAMA3_8B, LLAMA3_70B
from simcore.step_sim import (activation_bytes_per_layer, collective_bytes, device_intervals, explain_gap,
                              roofline_gap, simulate_decode_step, simulate_prefill_step, step_shape)
from simcore.trace import Trace
from closed_forms import reference_hier_allreduce, reference_time

# Llama-3 8B (32 layers) keeps most tests quick; the 70B runs where its numbers are the point.
M8 = LLAMA3_8B
H100_SETUP = (H100, NVLINK4, 2.0, 2.0)
V5E_INT8 = (TPU_V5E, TPU_V5E_ICI, 1.0, 1.0)  # the book's Llama-3 70B example: int8 weights and KV


def _rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


# ---------------------------------------------------------------------------------------
# The simulated step against the roofline
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("setup", [H100_SETUP, V5E_INT8], ids=["h100-bf16", "v5e-int8"])
@pytest.mark.parametrize("n,batch,ctx", [(1, 1, 2048), (2, 32, 8192), (4, 1, 0), (8, 32, 8192), (8, 8, 500)])
def test_memory_bound_decode_equals_roofline(setup, n, batch, ctx):
    chip, link, wb, kvb = setup
    comm = simulate_decode_step(M8, chip, link, n, batch, ctx, w_bytes=wb, kv_bytes=kvb)
    roof = tp_decode_step(M8, chip, link, n, batch, ctx, w_bytes=wb, kv_bytes=kvb)
    assert all(c.bound in ("memory", "") for c in comm.trace.computes)  # decode at small batch
    assert _rel(comm.time, roof["t_step"]) < 1e-9


def test_memory_bound_decode_equals_roofline_llama3_70b():
    comm = simulate_decode_step(LLAMA3_70B, *V5E_INT8[:2], 8, 32, 8192, w_bytes=1.0, kv_bytes=1.0)
    roof = tp_decode_step(LLAMA3_70B, *V5E_INT8[:2], 8, 32, 8192, w_bytes=1.0, kv_bytes=1.0)
    assert _rel(comm.time, roof["t_step"]) < 1e-9
    gap = roofline_gap(comm, TPU_V5E, roof)
    assert abs(gap["per_op"]) < 1e-12 and abs(gap["counted"]) < 1e-12 and abs(gap["comm"]) < 1e-12


@pytest.mark.parametrize("batch,prompt", [(512, 1), (1024, 1), (1, 128), (2, 100)])
def test_compute_bound_ops_make_the_sim_longer_than_the_roofline(batch, prompt):
    chip, link = H100, NVLINK4
    comm = simulate_prefill_step(M8, chip, link, 4, batch, prompt, ctx=1024)
    roof = tp_prefill_step(M8, chip, link, 4, batch, prompt, ctx=1024)
    gap = roofline_gap(comm, chip, roof)
    assert gap["compute_bound_ops"] > 0
    assert any(c.bound == "memory" for c in comm.trace.computes)  # a mix: Σ max > max Σ
    assert comm.time > roof["t_step"]
    assert gap["per_op"] > 0
    # the three terms account for the whole difference
    assert gap["per_op"] + gap["counted"] + gap["comm"] == pytest.approx(comm.time - roof["t_step"], rel=1e-9)
    assert "compute-bound" in explain_gap(gap) and "lower bound" in explain_gap(gap)


def test_all_compute_bound_prefill_equals_roofline():
    comm = simulate_prefill_step(M8, H100, NVLINK4, 4, 2, 1024, ctx=512)
    roof = tp_prefill_step(M8, H100, NVLINK4, 4, 2, 1024, ctx=512)
    assert all(c.bound in ("math", "") for c in comm.trace.computes)
    assert _rel(comm.time, roof["t_step"]) < 1e-9


def test_prefill_roofline_of_one_token_is_the_decode_roofline():
    for n, batch, ctx in ((1, 1, 0), (8, 32, 8192), (4, 3, 77)):
        a = tp_prefill_step(LLAMA3_70B, H100, NVLINK4, n, batch, 1, ctx)
        b = tp_decode_step(LLAMA3_70B, H100, NVLINK4, n, batch, ctx)
        for key in ("t_math", "t_mem", "t_comm", "t_step"):
            assert _rel(a[key], b[key]) < 1e-12


def test_replicated_kv_projections_counted_by_both_when_n_exceeds_kv_heads():
    # n = 16 > G = 8: each device holds one whole K/V group, so its Wk / Wv are not 1/16 of the total;
    # the roofline counts them replicated too, so simulation and roofline agree
    comm = simulate_decode_step(M8, H100, NVLINK4, 16, 1, 1024)
    roof = tp_decode_step(M8, H100, NVLINK4, 16, 1, 1024)
    gap = roofline_gap(comm, H100, roof)
    assert abs(gap["counted"]) < 1e-12 and _rel(comm.time, roof["t_step"]) < 1e-9
    D, dh, L, G = M8.d_model, M8.d_head, M8.n_layers, M8.n_kv_heads
    # per chip: 1/16 of every weight except Wk, Wv, of which it holds one whole group (2·D·dh per layer)
    w_chip = (M8.matmul_params() - L * 2 * D * G * dh) / 16 + L * 2 * D * dh
    assert roof["w_per_chip"] == pytest.approx(w_chip * 2.0, rel=1e-12)
    at_8 = tp_decode_step(M8, H100, NVLINK4, 8, 1, 1024)  # n = G: nothing replicated
    assert at_8["w_per_chip"] == pytest.approx(M8.matmul_params() * 2.0 / 8, rel=1e-12)


@pytest.mark.parametrize("how", ["key", "preset", "wired"])
def test_topology_means_the_same_to_the_step_and_the_roofline(how):
    from simcore.cost_model import decode_sweep
    from simcore.topology_presets import get_preset

    preset = get_preset("dgx-h100")
    topo = {"key": "dgx-h100", "preset": preset, "wired": preset.topology(16)}[how]
    comm = simulate_decode_step(M8, H100, None, 16, 1, 1024, topology=topo)
    wired = preset.topology(16)  # two nodes of 8 joined by their NICs
    assert comm.n == 16 and comm.trace.collectives[0].n == 16
    # the step's all-reduces are the machine's own whichever way it is named: for a decode token (8 KiB)
    # NCCL's Tree with the LL protocol (issue 32), timed as NCCL's model times it (src/graph/tuning.cc: base
    # Tree LL 6.8 µs + 2(7 NVLink hops at 0.6 µs + log2(2) network hops at 5.0 µs); LL bandwidth 39 GB/s on two
    # x86 nodes × 0.85 (tree pattern) × 0.5 (bus → algorithm) × treeCorrectionFactor 0.7 at 8 KiB)
    S = M8.d_model * 2.0
    hier = 6.8e-6 + 2 * (7 * 0.6e-6 + 5.0e-6) + S / (39e9 * 0.85 * 0.5 * 0.7)
    assert wired.choose("all-reduce", S)[:2] == ("tree", "LL")
    ar = comm.trace.collectives[0]
    assert ar.algo == "tree" and ar.t_end - ar.t_start == pytest.approx(hier, rel=1e-9)
    roof = decode_sweep(M8, H100, None, np.array([8, 16]), 1, 1024, topology=topo)
    assert roof["valid"][1] and roof["n_nodes"][1] == 2 and roof["node_size"][1] == 8
    assert roof["t_comm"][1] == pytest.approx(2 * M8.n_layers * hier, rel=1e-9)
    if how == "wired":  # a wired machine has its own n only; then the roofline is the simulated ring's
        assert not roof["valid"][0] and np.isnan(roof["t_step"][0])
        assert _rel(comm.time, roof["t_step"][1]) < 1e-9
    with pytest.raises(ValueError, match="unknown hardware preset"):
        simulate_decode_step(M8, H100, None, 16, 1, 1024, topology="dgx-a100")
    with pytest.raises(ValueError, match="topology must be"):
        simulate_decode_step(M8, H100, None, 16, 1, 1024, topology=42)


# ---------------------------------------------------------------------------------------
# The ops and collectives of a step, counted independently
# ---------------------------------------------------------------------------------------
def test_matmul_flops_and_bytes_per_op():
    B, n = 32, 8
    comm = simulate_decode_step(LLAMA3_70B, H100, NVLINK4, n, B, 4096)
    ops = {c.label: c for c in comm.trace.computes if c.device == 3 and c.layer == 5}
    D, F, dh = 8192, 28672, 128
    heads, groups = 64 // n, 8 // n
    # 2·m·k·n per matmul [m, k] @ [k, n]
    assert ops["qkv"].flops == 2 * B * D * (heads + 2 * groups) * dh
    assert ops["attn out"].flops == 2 * B * (heads * dh) * D
    assert ops["gate/up"].flops == 2 * B * D * (2 * F // n)
    assert ops["down"].flops == 2 * B * (F // n) * D
    assert ops["down"].nbytes == (F // n) * D * 2.0  # its weights, read once
    # attention: q·Kᵀ and p·V over 4096 keys, reading this device's K/V groups of the cache
    assert ops["attention"].flops == 4 * B * heads * dh * 4096
    assert ops["attention"].nbytes == B * 4096 * 2 * groups * dh * 2.0
    head = {c.label: c for c in comm.trace.computes if c.device == 3 and c.layer == -1}
    assert head["lm head"].flops == 2 * B * D * (128256 // n)


def test_op_count_per_layer_and_order():
    n, L = 4, M8.n_layers
    comm = simulate_decode_step(M8, H100, NVLINK4, n, 8, 100)
    labels = [c.label for c in comm.trace.computes if c.device == 1 and c.layer == 0]
    assert labels == ["attn norm", "qkv", "attention", "attn out", "mlp norm", "gate/up", "down"]
    assert len(comm.trace.computes) == n * (7 * L + 2)
    # async: the two row-parallel matmuls are cut into n chunks each
    comm = simulate_decode_step(M8, H100, NVLINK4, n, 8, 100, overlap="async")
    assert len(comm.trace.computes) == n * ((7 + 2 * (n - 1)) * L + 2)
    chunks = [c for c in comm.trace.computes if c.device == 1 and c.layer == 0 and c.label.startswith("down")]
    assert [c.label for c in chunks] == [f"down {k}/{n}" for k in range(1, n + 1)]


@pytest.mark.parametrize("n", [2, 8])
def test_collective_byte_counts(n):
    B, act = 16, 2.0
    comm = simulate_decode_step(M8, H100, NVLINK4, n, B, 256, act_bytes=act, gather_logits=True)
    colls = comm.trace.collectives
    assert len(colls) == 2 * M8.n_layers + 1
    S = B * M8.d_model * act
    for c in colls[:-1]:
        assert c.op == "all-reduce" and c.nbytes == pytest.approx(S, rel=1e-12)
    assert colls[-1].label == "logits" and colls[-1].nbytes == pytest.approx(B * M8.vocab * act, rel=1e-12)
    # ring all-reduce: 2(n−1) messages of S/n per device, to the ring neighbour
    msgs = comm.trace.messages_of(colls[7].id)
    assert len(msgs) == 2 * n * (n - 1)
    assert all(m.nbytes == pytest.approx(S / n, rel=1e-12) and m.dst == (m.src + 1) % n for m in msgs)
    assert collective_bytes(comm.trace, "layer 3 ") == pytest.approx(2 * 2 * (n - 1) * S, rel=1e-12)


def test_collectives_start_after_the_compute_that_feeds_them():
    comm = simulate_decode_step(M8, H100, NVLINK4, 4, 8, 100)
    tr = comm.trace
    for c in tr.collectives:
        layer, part = int(c.label.split()[1]), c.label.split()[2]
        feeder = "attn out" if part == "attn" else "down"
        done = {x.device: x.t_end for x in tr.computes if x.layer == layer and x.label == feeder}
        nxt = {x.device: x.t_start for x in tr.computes if x.layer == layer + (part == "mlp")
               and x.label == ("mlp norm" if part == "attn" else "attn norm")}
        for m in tr.messages_of(c.id):
            assert m.t_start >= done[m.src]
        for d, t in nxt.items():  # and the next op waits for the collective's last delivery
            assert t >= max(m.t_end for m in tr.messages_of(c.id) if m.dst == d)


def test_elementwise_and_logits_gather_only_add_time():
    base = simulate_decode_step(M8, H100, NVLINK4, 4, 8, 512)
    more = simulate_decode_step(M8, H100, NVLINK4, 4, 8, 512, elementwise=True, gather_logits=True)
    assert more.time > base.time
    norms = [c for c in more.trace.computes if c.kind == "norm"]
    assert norms and all(c.flops > 0 and c.nbytes > 0 for c in norms)


# ---------------------------------------------------------------------------------------
# Overlap (collective matmul)
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 4, 8])
@pytest.mark.parametrize("batch,prompt", [(1, 1), (32, 1), (2, 128)])
def test_async_never_slower_and_matches_its_closed_form(n, batch, prompt):
    kw = dict(w_bytes=2.0, kv_bytes=2.0)
    none = simulate_prefill_step(M8, H100, NVLINK4, n, batch, prompt, 2048, **kw)
    sync = simulate_prefill_step(M8, H100, NVLINK4, n, batch, prompt, 2048, overlap="async", **kw)
    assert sync.time <= none.time * (1 + 1e-12)
    roof = tp_step_overlap(M8, H100, NVLINK4, n, batch, 2048, prompt=prompt, **kw)
    if all(c.bound in ("memory", "") for c in none.trace.computes):
        assert _rel(sync.time, roof["t_step_overlap"]) < 1e-9
    if n == 1:  # nothing to communicate: nothing to hide
        assert sync.time == pytest.approx(none.time, rel=1e-12) and roof["t_saved"] == 0


def test_async_saves_what_the_closed_form_says_by_hand():
    n, B = 8, 1
    none = simulate_decode_step(M8, H100, NVLINK4, n, B, 1024)
    sync = simulate_decode_step(M8, H100, NVLINK4, n, B, 1024, overlap="async")
    # per sub-layer: min(t_c (1 − 1/n), t_rs), with t_c the row-parallel matmul's time (memory-bound here)
    D, F, H, dh = M8.d_model, M8.d_ff, M8.n_heads, M8.d_head
    t_rs = (n - 1) * (NVLINK4.alpha + B * D * 2.0 / n / NVLINK4.bw)
    t_wo, t_down = (H * dh // n) * D * 2.0 / H100.mem_bw, (F // n) * D * 2.0 / H100.mem_bw
    saved = M8.n_layers * (min(t_wo * (1 - 1 / n), t_rs) + min(t_down * (1 - 1 / n), t_rs))
    assert none.time - sync.time == pytest.approx(saved, rel=1e-9)


def test_async_equals_none_when_compute_is_free():
    fast = Chip("free compute", {"bf16": 1e40}, mem_bw=1e40, hbm_bytes=1e12, link="nvlink4")
    none = simulate_decode_step(M8, fast, NVLINK4, 8, 4, 100)
    sync = simulate_decode_step(M8, fast, NVLINK4, 8, 4, 100, overlap="async")
    assert sync.time == pytest.approx(none.time, rel=1e-12)
    S = 4 * M8.d_model * 2.0  # batch 4, one bf16 token each
    assert none.time == pytest.approx(2 * M8.n_layers * reference_time("all-reduce", "ring", 8, S, NVLINK4.alpha,
                                                                        NVLINK4.bw), rel=1e-9)


def test_async_ring_steps_wait_for_their_chunk():
    n = 4
    comm = simulate_decode_step(M8, H100, NVLINK4, n, 8, 100, overlap="async")
    tr = comm.trace
    c = tr.collectives[0]  # layer 0 attn: the reduce-scatter half carries the Wo chunks
    ends = {(x.device, x.label): x.t_end for x in tr.computes if x.layer == 0 and x.label.startswith("attn out")}
    for m in tr.messages_of(c.id):
        if m.step < n - 1:  # reduce-scatter step k sends the k-th chunk computed
            assert m.t_start >= ends[(m.src, f"attn out {m.step + 1}/{n}")]
    # the collective begins as the first chunk is done, while the last is still being computed
    assert c.t_start == pytest.approx(min(ends[(d, f"attn out 1/{n}")] for d in range(n)), rel=1e-12)
    last_chunk_end = min(ends[(d, f"attn out {n}/{n}")] for d in range(n))
    assert sum(m.t_start < last_chunk_end for m in tr.messages_of(c.id)) >= n


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="overlap"):
        simulate_decode_step(M8, H100, NVLINK4, 2, 1, 10, overlap="maybe")
    with pytest.raises(ValueError, match="algo='ring'"):
        simulate_decode_step(M8, H100, NVLINK4, 2, 1, 10, algo="rd", overlap="async")
    with pytest.raises(ValueError, match="not divisible by 8"):
        simulate_decode_step(M8, H100, NVLINK4, 8, 3, 10, sequence_parallel=True)
    with pytest.raises(ValueError, match="fp8"):
        simulate_decode_step(M8, TPU_V5E, TPU_V5E_ICI, 2, 1, 10, compute_prec="fp8")
    with pytest.raises(ValueError, match="divisible by 3"):
        simulate_decode_step(M8, H100, NVLINK4, 3, 1, 10)


# ---------------------------------------------------------------------------------------
# Sequence parallelism in the step, and activation memory
# ---------------------------------------------------------------------------------------
def test_sp_step_moves_the_same_bytes_per_layer():
    n, B = 8, 16
    plain = simulate_decode_step(M8, H100, NVLINK4, n, B, 512)
    sp = simulate_decode_step(M8, H100, NVLINK4, n, B, 512, sequence_parallel=True)
    for li in (0, 17):
        assert collective_bytes(sp.trace, f"layer {li} ") == pytest.approx(
            collective_bytes(plain.trace, f"layer {li} "), rel=1e-12)
    ops = [c.op for c in sp.trace.collectives if c.label == "layer 0 mlp"]
    assert ops == ["all-gather", "reduce-scatter"]
    # the only extra: the all-gather after the final norm (the embedding stream starts split)
    S = B * M8.d_model * 2.0
    extra = reference_time("all-gather", "ring", n, S, NVLINK4.alpha, NVLINK4.bw)
    assert sp.time - plain.time == pytest.approx(extra, rel=1e-6)


def test_sp_norms_run_on_a_slice_of_the_tokens():
    plain = step_shape(M8, 4, 8, 100, elementwise=True)
    sp = step_shape(M8, 4, 8, 100, elementwise=True, sequence_parallel=True)
    assert sp.layer[0]["attn"][0].flops == pytest.approx(plain.layer[0]["attn"][0].flops / 4)
    assert sp.layer[0]["attn"][1] == plain.layer[0]["attn"][1]  # the matmuls see every token


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_activation_memory_with_and_without_sp(n):
    s, b, a, D = 4096, 1, 2.0, LLAMA3_70B.d_model
    one = activation_bytes_per_layer(LLAMA3_70B, 1, b, s, a)["total"]
    plain = activation_bytes_per_layer(LLAMA3_70B, n, b, s, a)["total"]
    sp = activation_bytes_per_layer(LLAMA3_70B, n, b, s, a, sequence_parallel=True)["total"]
    # Korthikanti et al. 2022: with SP every activation is split t ways (n ≤ G here)...
    assert sp == pytest.approx(one / n, rel=1e-12)
    # ...while plain TP keeps its four [s, b, D] norm inputs / outputs whole on every device
    assert plain - sp == pytest.approx(4 * s * b * D * a * (1 - 1 / n), rel=1e-12)


# ---------------------------------------------------------------------------------------
# Compute in the trace: Comm.compute, JSON, Chrome
# ---------------------------------------------------------------------------------------
def test_comm_compute_is_its_own_roofline_and_gates_the_next_collective():
    comm = Comm(switch(2, LinkSpec("test", 1e-6, 1e9)))
    t = comm.compute(0, "big matmul", flops=989e12 * 2e-3, nbytes=3.35e12 * 1e-3, chip=H100)  # 2 ms math, 1 ms mem
    assert t == pytest.approx(2e-3) and comm.trace.computes[0].bound == "math"
    comm.compute(1, "read", flops=0, nbytes=3.35e12 * 1e-3, chip=H100)
    assert comm.trace.computes[1].t_end == pytest.approx(1e-3) and comm.trace.computes[1].bound == "memory"
    allreduce_ring(comm, [np.ones(2), np.ones(2)])
    sends = {m.src: m.t_start for m in comm.trace.messages if m.step == 0}
    assert sends[0] >= 2e-3 and sends[1] >= 1e-3
    after = comm.compute(1, "next", 0, 0, H100)
    assert after >= max(m.t_end for m in comm.trace.messages if m.dst == 1)
    with pytest.raises(ValueError, match="device 5"):
        comm.compute(5, "x", 1, 1, H100)
    with pytest.raises(ValueError, match="FLOPs"):
        comm.compute(0, "x", -1, 1, H100)


def test_trace_with_computes_round_trips_json():
    comm = simulate_decode_step(M8, H100, NVLINK4, 2, 2, 64, overlap="async")
    back = Trace.from_json(comm.trace.to_json())
    assert back == comm.trace and back.computes == comm.trace.computes
    assert back.t_end == pytest.approx(comm.time)
    old = json.loads(comm.trace.to_json())
    del old["computes"]  # a trace written before computes existed still loads
    assert Trace.from_dict(old).computes == []


def test_chrome_trace_has_compute_send_and_recv_tracks_per_gpu(tmp_path):
    n = 4
    comm = simulate_decode_step(M8, H100, NVLINK4, n, 4, 64)
    events = comm.trace.to_chrome()["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    for d in range(n):
        assert {names[(d, t)] for t in range(4)} == {"collective", "send port", "recv port", "compute"}
    slices = [e for e in events if e["ph"] == "X"]
    compute = [e for e in slices if e["cat"] == "compute"]
    comm_slices = [e for e in slices if e["cat"] == "comm"]
    assert len(compute) == len(comm.trace.computes) and len(comm_slices) == 2 * len(comm.trace.messages)
    assert {e["tid"] for e in compute} == {3} and {e["tid"] for e in comm_slices} == {1, 2}
    # on each GPU's compute track the ops follow one another without overlapping
    for d in range(n):
        spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in compute if e["pid"] == d)
        assert all(a[1] <= b[0] + 2e-4 for a, b in zip(spans, spans[1:]))  # ts and dur written to 0.1 ns
    assert max(e["ts"] + e["dur"] for e in slices) == pytest.approx(comm.time * 1e6, abs=2e-4)


def test_device_intervals_for_a_timeline_view():
    comm = simulate_decode_step(M8, H100, NVLINK4, 2, 4, 64, overlap="async")
    iv = device_intervals(comm.trace, 1)
    assert len(iv["compute"]) == len([c for c in comm.trace.computes if c.device == 1])
    assert iv["send"] and iv["recv"] and all(t0 <= t1 for t0, t1, _ in iv["compute"])
    # overlap is visible: some message of device 1 runs while device 1 computes
    assert any(c0 < s1 and s0 < c1 for c0, c1, _ in iv["compute"] for s0, s1, _ in iv["send"])


# ---------------------------------------------------------------------------------------
# python -m simcore step
# ---------------------------------------------------------------------------------------
def test_cli_step_writes_a_chrome_trace_and_prints_the_roofline(tmp_path, capsys):
    out = tmp_path / "step.json"
    rc = cli.main(["step", "--model", "llama3-8b", "--chip", "h100", "--n", "4", "--batch", "8", "--ctx", "512",
                   "--overlap", "async", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    for word in ("t_math", "t_mem", "t_comm", "t_step", "simulated step", "overlapped"):
        assert word in text
    roof = tp_step_overlap(M8, H100, NVLINK4, 4, 8, 512)
    assert f"{roof['t_step_overlap'] * 1e3:.3f} ms" in text
    events = json.loads(out.read_text())["traceEvents"]
    assert any(e.get("cat") == "compute" for e in events)


def test_cli_step_prefill_sp_and_json(tmp_path, capsys):
    out = tmp_path / "step.json"
    rc = cli.main(["step", "--model", "llama3-8b", "--n", "2", "--prefill", "64", "--ctx", "0", "--sequence-parallel",
                   "--w-bytes", "1", "--kv-bytes", "1", "--format", "json", "--out", str(out)])
    assert rc == 0 and "prefill of 64 tokens" in capsys.readouterr().out
    assert Trace.from_json(out.read_text()).computes


@pytest.mark.parametrize("argv,msg", [
    (["--n", "0"], "--n"), (["--overlap", "later"], "overlap"), (["--prefill", "x"], "--prefill"),
    (["--model", "gpt5"], "model"), (["--chip", "tpu-v5e", "--prec", "fp8"], "fp8"),
])
def test_cli_step_bad_input_one_line(argv, msg, capsys):
    assert cli.main(["step", "--model", "llama3-8b", *argv] if "--model" not in argv else ["step", *argv]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_times_are_finite_everywhere():
    comm = simulate_decode_step(M8, *V5E_INT8[:2], 8, 32, 8192, w_bytes=1.0, kv_bytes=1.0, overlap="async",
                                sequence_parallel=True, elementwise=True, gather_logits=True)
    assert all(math.isfinite(c.t_end) for c in comm.trace.computes) and math.isfinite(comm.time)


def test_overlap_sweep_is_the_closed_form_at_every_n():
    from simcore.cost_model import decode_sweep_overlap

    ns = [1, 2, 4, 8, 16]
    sweep = decode_sweep_overlap(LLAMA3_70B, H100, NVLINK4, ns, 32, 8192)
    for i, n in enumerate(ns):
        one = tp_step_overlap(LLAMA3_70B, H100, NVLINK4, n, 32, 8192)
        assert sweep["t_step_overlap"][i] == pytest.approx(one["t_step_overlap"], rel=1e-12)
        assert 0 <= sweep["t_saved"][i] <= sweep["t_comm"][i]
    assert sweep["t_saved"][0] == 0


def test_topology_must_match_n():
    with pytest.raises(ValueError, match="topology has 4 devices"):
        simulate_decode_step(M8, H100, NVLINK4, 2, 1, 10, topology=switch(4, NVLINK4))


@pytest.mark.parametrize("sp", [False, True])
@pytest.mark.parametrize("n", [2, 4, 8])
def test_same_schedule_as_tp_forward_on_arrays(n, sp):
    # the shape simulation and the real float64 forward send the same collectives, labels and bytes
    from simcore.sharding import make_comm
    from simcore.tensor_parallel import shard_params_tp, tp_forward
    from simcore.transformer_lab import TINY, init_params

    B, T = 2, 8
    tokens = np.random.default_rng(0).integers(0, TINY.vocab, size=(B, T))
    real = make_comm(n)
    tp_forward(shard_params_tp(init_params(TINY), TINY, n), TINY, tokens, real, sequence_parallel=sp)
    shape = simulate_prefill_step(TINY, H100, NVLINK4, n, B, T, act_bytes=8.0, gather_logits=True,
                                  sequence_parallel=sp)
    key = [(c.op, c.algo, c.label, c.n_steps) for c in real.trace.collectives]
    assert [(c.op, c.algo, c.label, c.n_steps) for c in shape.trace.collectives] == key
    assert [(m.src, m.dst, m.step, m.chunk) for m in shape.trace.messages] == \
        [(m.src, m.dst, m.step, m.chunk) for m in real.trace.messages]
    for a, b in ((shape.trace.collectives, real.trace.collectives), (shape.trace.messages, real.trace.messages)):
        assert np.allclose([x.nbytes for x in a], [x.nbytes for x in b], rtol=1e-12, atol=0)
