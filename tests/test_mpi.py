"""
Real MPI ranks give the simulator's answers: every collective and algorithm Open MPI lets us
choose, and the tensor-parallel forward, on 2 and 4 ranks. Open MPI's message monitoring
shows the ring sends what the simulated ring sends.

Needs the `mpi` extra (mpi4py + Open MPI); without it these tests skip and say why. Each
mpiexec launch takes about a second or two.
"""

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from simcore import calibrate, mpi

REASON = mpi.unavailable_reason()
needs_mpi = pytest.mark.skipif(REASON is not None, reason=f"MPI unavailable: {REASON}")
# with pytest-xdist (dev.py test), every real-MPI test runs on one worker, one after another
pytestmark = pytest.mark.xdist_group("mpi")


@pytest.fixture(autouse=True)
def _allow_root(monkeypatch):
    # the harness runs as root in containers; Open MPI refuses that unless told
    for k in mpi.ROOT_VARS:
        monkeypatch.setenv(k, "1")


# ---------------------------------------------------------------------------------------
# without MPI
# ---------------------------------------------------------------------------------------
def test_modules_import_without_starting_mpi():
    code = ("import sys, simcore.mpi, simcore.mpi_worker, simcore.calibrate, simcore.cli_measure\n"
            "print(sorted(k for k in sys.modules if k.startswith('mpi4py')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_missing_mpi4py_is_a_clear_error(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mpi4py" else real(name, *a))
    assert "mpi4py is not installed" in mpi.unavailable_reason()
    with pytest.raises(mpi.MPIUnavailable, match="mpi4py is not installed"):
        mpi.run_mpi("all-reduce", 2)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root is refused")
def test_root_without_permission_is_a_clear_error(monkeypatch):
    for k in mpi.ROOT_VARS:
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(mpi.MPIUnavailable, match="OMPI_ALLOW_RUN_AS_ROOT=1"):
        mpi._env(allow_root=False)
    assert mpi._env(allow_root=True)["OMPI_ALLOW_RUN_AS_ROOT"] == "1"


def test_algorithm_choices_are_checked():
    with pytest.raises(ValueError, match="no 'innet' algorithm"):
        mpi.check_algo("all-reduce", "innet", 4)
    with pytest.raises(ValueError, match="power-of-two"):
        mpi.check_algo("reduce-scatter", "rd", 6)
    mpi.check_algo("all-reduce", "rd", 6)  # Open MPI folds the extra ranks in, as the simulator does
    args = mpi.mca_args([("all-reduce", "ring"), ("all-gather", "rd")])
    assert args[args.index("coll_tuned_allreduce_algorithm") + 1] == "4"
    assert args[args.index("coll_tuned_allgather_algorithm") + 1] == "3"
    with pytest.raises(ValueError, match="one all-reduce algorithm"):
        mpi.mca_args([("all-reduce", "ring"), ("all-reduce", "rd")])


def test_sizes_and_launch_groups():
    assert mpi.parse_sizes("8B..64MiB")[:3] == [8, 16, 32] and mpi.parse_sizes("8B..64MiB")[-1] == 2**26
    assert mpi.parse_sizes("1KiB..1MiB:x4") == [2**10, 2**12, 2**14, 2**16, 2**18, 2**20]
    assert mpi.parse_sizes("4KiB, 1MiB,4KiB") == [4096, 2**20]
    with pytest.raises(ValueError):
        mpi.parse_sizes("64MiB..8B")
    groups = mpi._launch_groups(mpi.DEFAULT_OPS)
    assert sum(len(g) for g in groups) == len(mpi.DEFAULT_OPS)
    assert all(len({op for op, _ in g}) == len(g) for g in groups)  # one algorithm per op per launch


def test_monitoring_files_are_read_per_collective(tmp_path):
    # Open MPI's format: I <rank> <peer> <bytes> bytes <msgs> msgs sent <size histogram>
    (tmp_path / "monitor.0.prof").write_text(
        "# POINT TO POINT\nI\t0\t1\t98304 bytes\t14 msgs sent\t2,0,0,0,0,0,0,0,0,0,0,0,0,0,12,0\n# COLLECTIVES\n"
        "C\t0\t1\t32768 bytes\t2 msgs sent\n")
    (tmp_path / "monitor.1.prof").write_text("I\t1\t0\t98304 bytes\t12 msgs sent\t0,0,0,0,0,0,0,0,0,0,0,0,0,0,12,0\n")
    msgs, nbytes = mpi.read_monitoring(tmp_path, 2, runs=2)
    assert msgs.tolist() == [[0, 6], [6, 0]]  # zero-byte (barrier) messages left out, per run
    assert nbytes.tolist() == [[0, 49152], [49152, 0]]


# ---------------------------------------------------------------------------------------
# with MPI: values, traffic, the TP forward, measuring
# ---------------------------------------------------------------------------------------
@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("op, algo", list(mpi.MPI_ALGOS))
def test_collective_equals_the_simulator(op, algo, n):
    length = 12 * n
    res = mpi.run_mpi(op, n, algo, length=length, seed=n, repeats=1, traffic=True)
    sim, comm = mpi.simulate(op, n, algo, res.inputs)
    assert len(res.outputs) == n
    for r in range(n):
        assert res.outputs[r].shape == sim[r].shape
        np.testing.assert_allclose(res.outputs[r], sim[r], rtol=0, atol=1e-12)
    assert "Open MPI" in res.library
    assert res.seconds is not None and res.times.shape == (1, n)

    # what Open MPI really sent for one collective
    S = length * 8
    a, b = calibrate.coefficients(op, algo, n)
    sent = res.nbytes.sum(axis=1)
    if algo == "linear":  # everything goes through rank 0: n−1 buffers in, then n−1 out
        assert res.nbytes[0].sum() + res.nbytes[:, 0].sum() == pytest.approx(b * S)
        assert res.msgs[0].sum() + res.msgs[:, 0].sum() == a
    else:  # the busiest port carries b·S bytes in `a` messages: the closed form's a and b
        assert sent.max() == pytest.approx(b * S)
        assert res.msgs.sum(axis=1).max() == a
    sim_msgs, sim_bytes = mpi.sim_traffic(comm)
    if algo == "ring" or (op, algo) == ("all-reduce", "rd"):
        # the same messages between the same pairs of ranks as the simulator's schedule
        assert res.msgs.tolist() == sim_msgs.tolist()
        np.testing.assert_allclose(res.nbytes, sim_bytes)
    if algo == "ring":
        ring = np.roll(np.eye(n, dtype=bool), 1, axis=1)  # rank d sends only to d + 1
        assert np.all((res.msgs > 0) == ring)


@needs_mpi
def test_results_gathered_to_rank_0_with_timed_repeats():
    res = mpi.run_mpi("reduce-scatter", 4, "ring", length=64, seed=3, repeats=3)
    sim, _ = mpi.simulate("reduce-scatter", 4, "ring", res.inputs)
    for r in range(4):
        np.testing.assert_allclose(res.outputs[r], sim[r], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.concatenate(res.outputs), res.inputs.sum(axis=0), rtol=0, atol=1e-12)
    assert res.times.shape == (3, 4) and np.all(res.times > 0)
    assert res.seconds == np.median(res.times.max(axis=1))
    assert res.msgs is None and res.nbytes is None


@needs_mpi
def test_recursive_doubling_on_three_ranks_folds_like_the_simulator():
    res = mpi.run_mpi("all-reduce", 3, "rd", length=9, traffic=True, repeats=1)
    sim, comm = mpi.simulate("all-reduce", 3, "rd", res.inputs)
    for r in range(3):
        np.testing.assert_allclose(res.outputs[r], sim[r], rtol=0, atol=1e-12)
    sim_msgs, sim_bytes = mpi.sim_traffic(comm)
    # fold, one exchange, unfold: the same count and bytes (Open MPI picks other partners)
    assert res.msgs.sum() == sim_msgs.sum() == 4
    assert res.nbytes.sum() == pytest.approx(sim_bytes.sum())


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_tp_forward_equals_the_simulator(n):
    tl = pytest.importorskip("simcore.transformer_lab")
    tp = pytest.importorskip("simcore.tensor_parallel")
    from simcore.sharding import make_comm

    cfg = tl.TINY
    tokens = np.random.default_rng(1).integers(0, cfg.vocab, size=(2, 5))
    logits, seconds = mpi.run_tp_forward(n, tokens, cfg, seed=0)
    params = tl.init_params(cfg, seed=0)
    sim = tp.tp_forward(tp.shard_params_tp(params, cfg, n), cfg, tokens, make_comm(n))
    assert logits.shape == (n,) + sim.shape
    for r in range(n):  # every rank ends with the full logits
        np.testing.assert_allclose(logits[r], sim, rtol=0, atol=1e-12)
    np.testing.assert_allclose(logits[0], tl.forward(params, cfg, tokens), rtol=0, atol=1e-10)
    assert seconds > 0


@needs_mpi
def test_measure_command_writes_points_fits_and_a_link(tmp_path, capsys):
    from test_calibrate import run_cli

    out = tmp_path / "m.json"
    # sizes up to 16 MiB: their times grow well above a loaded machine's scheduling noise (with
    # 1 KiB..1 MiB a busy 2-core machine measured no growth and the fit refused, rightly)
    argv = ["measure", "--n", "2", "--sizes", "64KiB..16MiB:x16", "--ops", "all-reduce:ring,all-gather",
            "--repeats", "3", "--warmup", "1", "--out", str(out)]
    assert run_cli(argv) == 0
    printed = capsys.readouterr().out
    assert "all-reduce (ring)" in printed and "the link (ring collectives)" in printed
    data = json.loads(out.read_text())
    assert {(p["op"], p["algo"]) for p in data["points"]} == {("all-reduce", "ring"), ("all-gather", "ring")}
    assert [p["nbytes"] for p in data["points"][:3]] == [2**16, 2**20, 2**24]
    assert set(data["fits"]) == {"all-reduce ring", "all-gather ring"}
    link = calibrate.load_link(out)
    assert link.name == calibrate.MEASURED and link.bw > 0 and link.alpha >= 0


def _worker_processes(tag):
    pids = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if tag.encode() in f.read():
                        pids.append(int(pid))
            except OSError:
                continue
    return pids


@needs_mpi
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="lists processes through /proc")
def test_cancel_stops_mpiexec_and_every_rank(tmp_path):
    cancel = threading.Event()
    seen = []

    def progress(done, total):
        seen.append(done)
        cancel.set()  # cancel after the first size

    work = str(tmp_path / "cancel-me")
    with pytest.raises(mpi.Cancelled):
        mpi.measure(2, [2**20] * 1 + [2**22, 2**24, 2**26], ops=[("all-reduce", "ring")], repeats=50,
                    workdir=work, progress=progress, cancel=cancel)
    assert seen == [1]
    assert _worker_processes(work) == []
