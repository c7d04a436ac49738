"""
The collective matmul told right: with overlap="async" the all-gather in
front of a column-parallel matmul (sequence parallelism: qkv, gate/up, lm head) runs ring step
by ring step under the matmul of the shard that just arrived; every chunk matmul pays
CHUNK_MATMUL_EFFICIENCY; the overlapped step never beats the lower bound max(compute, comm).
"""

import re

import pytest

import simcore.step_sim as step_sim
from simcore.cost_model import overlap_saving, tp_prefill_step, tp_step_overlap
from simcore.hw_specs import H100
from simcore.links import NVLINK4
from simcore.llm_math import LLAMA3_8B, LLAMA3_70B
from simcore.step_sim import simulate_decode_step, simulate_prefill_step

M8 = LLAMA3_8B
CHUNK = re.compile(r" \d+/\d+$")  # "qkv 3/8": chunk 3 of 8


def _sp_prefill(n=4, batch=1, prompt=512, overlap="async", model=M8):
    return simulate_prefill_step(model, H100, NVLINK4, n, batch, prompt, overlap=overlap, sequence_parallel=True)


def _gather(comm, label, d):
    """(chunk, t_start, t_end) of the all-gather messages that land on device d, by arrival."""
    ms = [m for m in comm.trace.messages if m.label == label and m.op == "all-gather" and m.dst == d]
    return sorted(((m.chunk, m.t_start, m.t_end) for m in ms), key=lambda x: x[2])


def _chunks(comm, name, layer, d):
    cs = [c for c in comm.trace.computes if c.device == d and c.layer == layer and c.label.startswith(name + " ")]
    return sorted(cs, key=lambda c: c.t_start)


@pytest.mark.parametrize("n", [2, 4, 8])
@pytest.mark.parametrize("part,name", [("attn", "qkv"), ("mlp", "gate/up")])
def test_each_chunk_matmul_starts_after_its_shard_arrived_and_overlaps_the_ring(n, part, name):
    comm = _sp_prefill(n)
    for d in range(n):
        arrivals = _gather(comm, f"layer 1 {part}", d)
        chunks = _chunks(comm, name, 1, d)
        assert len(arrivals) == n - 1 and len(chunks) == n
        assert [c.label for c in chunks] == [f"{name} {k}/{n}" for k in range(1, n + 1)]
        # chunk 1 is the device's own shard: it starts before any shard from another device lands
        assert chunks[0].t_start < arrivals[0][2]
        for (_, _, t_land), c in zip(arrivals, chunks[1:]):
            assert c.t_start >= t_land - 1e-15  # a chunk's matmul waits for its shard
        # messages and computes overlap in time on this device
        assert any(c.t_start < t1 and t0 < c.t_end for c in chunks for _, t0, t1 in arrivals)
        # the lm head after the final norm is gathered and chunked the same way
        assert len(_chunks(comm, "lm head", -1, d)) == n


def test_without_async_the_matmul_waits_for_the_whole_gather():
    comm = _sp_prefill(4, overlap="none")
    for d in range(4):
        last = _gather(comm, "layer 1 attn", d)[-1][2]
        (qkv,) = [c for c in comm.trace.computes if c.device == d and c.layer == 1 and c.label == "qkv"]
        assert qkv.t_start >= last


def test_without_sequence_parallelism_no_all_gather_is_chunked():
    comm = simulate_prefill_step(M8, H100, NVLINK4, 4, 1, 512, overlap="async")
    labels = {c.label for c in comm.trace.computes}
    assert "qkv" in labels and "gate/up" in labels and "lm head" in labels
    assert not any(lbl.startswith(("qkv ", "gate/up ", "lm head ")) for lbl in labels)


@pytest.mark.parametrize("sp", [False, True])
@pytest.mark.parametrize("n,batch,prompt,ctx", [(2, 32, 1, 8192), (8, 32, 1, 8192), (8, 1, 2048, 0),
                                                (4, 2, 256, 1024), (8, 4, 256, 0)])
def test_async_never_beats_the_lower_bound(sp, n, batch, prompt, ctx):
    comm = simulate_prefill_step(M8, H100, NVLINK4, n, batch, prompt, ctx, overlap="async", sequence_parallel=sp)
    roof = tp_prefill_step(M8, H100, NVLINK4, n, batch, prompt, ctx)
    assert comm.time >= roof["t_lower_bound"] * (1 - 1e-12)


def test_async_all_gather_matmul_beats_no_overlap_when_comm_heavy():
    # a prefill of Llama-3 70B on 8 H100: the ring steps are as long as the chunk matmuls
    none = _sp_prefill(8, 1, 2048, "none", LLAMA3_70B)
    sync = _sp_prefill(8, 1, 2048, "async", LLAMA3_70B)
    rs_only = simulate_prefill_step(LLAMA3_70B, H100, NVLINK4, 8, 1, 2048, overlap="async")
    assert sync.time < none.time
    assert sync.time < rs_only.time  # the all-gather side hides more than the reduce-scatter alone
    roof = tp_prefill_step(LLAMA3_70B, H100, NVLINK4, 8, 1, 2048)
    assert roof["t_lower_bound"] <= sync.time < roof["t_step_no_overlap"]


@pytest.mark.parametrize("sp", [False, True])
def test_one_device_is_the_sum_form_with_no_overlap(sp):
    comm = simulate_decode_step(M8, H100, NVLINK4, 1, 8, 2048, overlap="async", sequence_parallel=sp)
    none = simulate_decode_step(M8, H100, NVLINK4, 1, 8, 2048, sequence_parallel=sp)
    roof = tp_step_overlap(M8, H100, NVLINK4, 1, 8, 2048)
    assert comm.time == pytest.approx(none.time, rel=1e-12)
    assert comm.time == pytest.approx(roof["t_step_no_overlap"], rel=1e-9)  # every op memory-bound
    assert roof["t_saved"] == 0 and not any(CHUNK.search(c.label) for c in comm.trace.computes)


def test_the_decomposition_constant_slows_each_chunk_as_stated(monkeypatch):
    assert 0 < step_sim.CHUNK_MATMUL_EFFICIENCY < 1  # async is not free
    peak, bw = H100.peak_flops("bf16"), H100.mem_bw
    times = {}
    for eff in (1.0, 0.5):
        monkeypatch.setattr(step_sim, "CHUNK_MATMUL_EFFICIENCY", eff)
        comm = _sp_prefill(4, 1, 2048)
        chunks = [c for c in comm.trace.computes if CHUNK.search(c.label)]
        assert chunks and any(c.bound == "math" for c in chunks)
        for c in chunks:  # each chunk: max(FLOPs / (peak · efficiency), bytes / HBM bandwidth)
            assert c.t_end - c.t_start == pytest.approx(max(c.flops / (peak * eff), c.nbytes / bw), rel=1e-9)
        times[eff] = comm.time
        # the closed form pays it too: t_saved drops by exactly (t_c' − t_c) per compute-bound matmul
        saved = overlap_saving(M8, H100, NVLINK4, 4, 2048)
        times[eff, "saved"] = float(saved)
    assert times[0.5] > times[1.0]
    assert times[0.5, "saved"] < times[1.0, "saved"]


def test_the_decomposition_costs_nothing_when_memory_bound(monkeypatch):
    got = []
    for eff in (1.0, 0.5):
        monkeypatch.setattr(step_sim, "CHUNK_MATMUL_EFFICIENCY", eff)
        got.append(simulate_decode_step(M8, H100, NVLINK4, 8, 1, 1024, overlap="async").time)
    assert got[0] == pytest.approx(got[1], rel=1e-12)


def test_closed_form_saving_by_hand_with_the_decomposition_cost():
    n, rows = 4, 4096
    D, F, H, dh = M8.d_model, M8.d_ff, M8.n_heads, M8.d_head
    peak, bw, eff = H100.peak_flops("bf16"), H100.mem_bw, step_sim.CHUNK_MATMUL_EFFICIENCY
    t_rs = (n - 1) * (NVLINK4.alpha + rows * D * 2.0 / n / NVLINK4.bw)
    want = 0.0
    for k in (H * dh / n, F / n):
        t_c = max(2 * rows * k * D / peak, k * D * 2.0 / bw)
        t_cut = max(2 * rows * k * D / (peak * eff), k * D * 2.0 / bw)
        want += M8.n_layers * (min(t_cut * (1 - 1 / n), t_rs) - (t_cut - t_c))
    assert float(overlap_saving(M8, H100, NVLINK4, n, rows)) == pytest.approx(want, rel=1e-12)


def test_the_cli_reports_the_async_step_beside_no_overlap_and_the_lower_bound(capsys):
    from simcore import __main__ as cli

    assert cli.main(["step", "--model", "llama3-8b", "--chip", "h100", "--n", "4", "--batch", "1", "--ctx", "0",
                     "--prefill", "512", "--overlap", "async", "--sequence-parallel"]) == 0
    text = capsys.readouterr().out
    comm = _sp_prefill(4, 1, 512)
    roof = tp_prefill_step(M8, H100, NVLINK4, 4, 1, 512)
    assert (f"simulated {comm.time * 1e3:.3f} ms  vs  no overlap {roof['t_step_no_overlap'] * 1e3:.3f} ms  vs  "
            f"lower bound {roof['t_lower_bound'] * 1e3:.3f} ms") in text
    assert f"{step_sim.CHUNK_MATMUL_EFFICIENCY:.0%} of peak" in text and "all-gather matmul" in text


def test_the_app_reads_the_all_gather_matmul_chunks_as_their_ops():
    from app.core.step_timeline_model import compute_table

    table = compute_table(_sp_prefill(4, 1, 256).trace)
    for op, kind in (("qkv", "qkv"), ("gate/up", "gate_up"), ("lm head", "lm_head")):
        mine = table["op"] == op
        assert mine.any() and table["chunked"][mine].all() and set(table["kind"][mine]) == {kind}
