"""The α–β fit, the nccl-tests reader and the nccl-import command (no MPI, no Qt)."""

import argparse
import json
import math

import numpy as np
import pytest

from simcore import calibrate, cli_measure, nccl_log
from simcore.calibrate import MEASURED, Point, coefficients, fit
from simcore.nccl_log import fit_nccl_tests, parse_nccl_tests
from simcore.algorithms import ALLREDUCE_ALGOS, busbw, t_formula
from simcore.links import LinkSpec

from closed_forms import reference_time

ALPHA, BW = 4.2e-6, 37e9
SIZES = [2**k for k in range(3, 28)]  # 8 B .. 128 MiB


def synthetic(op, algo, n, alpha=ALPHA, bw=BW, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    a, b = coefficients(op, algo, n)
    return [Point(op, algo, n, float(S), (a * alpha + b * S / bw) * math.exp(noise * rng.standard_normal()))
            for S in SIZES]


# ---------------------------------------------------------------------------------------
# the model's structure
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 8, 16])
@pytest.mark.parametrize("algo", list(ALLREDUCE_ALGOS))
def test_coefficients_are_the_closed_form(algo, n):
    a, b = coefficients("all-reduce", algo, n)
    for S in (0.0, 1e3, 1e8):
        assert a * ALPHA + b * S / BW == pytest.approx(reference_time("all-reduce", algo, n, S, ALPHA, BW), rel=1e-12)


@pytest.mark.parametrize("op", ["all-gather", "reduce-scatter"])
def test_coefficients_of_gather_and_scatter(op):
    assert coefficients(op, "ring", 8) == pytest.approx((7, 7 / 8))
    assert coefficients(op, "rd", 8) == pytest.approx((3, 7 / 8))  # log2 n rounds, same bytes as the ring
    with pytest.raises(ValueError, match="power-of-two"):
        coefficients(op, "rd", 6)


def test_coefficients_of_open_mpi_linear_and_bad_names():
    assert coefficients("all-reduce", "linear", 4) == (6, 6)  # reduce to rank 0, then broadcast
    assert coefficients("all-reduce", "ring", 1) == (0, 0)
    assert coefficients("all-gather", "direct", 4) == pytest.approx((1, 3 / 4))  # one-shot: α + (n−1)S/(nβ)
    with pytest.raises(ValueError, match="no cost model"):
        coefficients("all-gather", "innet", 4)
    with pytest.raises(ValueError, match="unknown collective"):
        coefficients("teleport", "ring", 4)  # no such op (docs/extending.md adds a toy broadcast)


# ---------------------------------------------------------------------------------------
# the fit
# ---------------------------------------------------------------------------------------
def test_fit_recovers_alpha_and_beta_exactly_without_noise():
    pts = synthetic("all-reduce", "ring", 8)
    f = fit(pts)
    assert f.alpha == pytest.approx(ALPHA, rel=1e-9)
    assert f.bw == pytest.approx(BW, rel=1e-9)
    assert f.r2 == pytest.approx(1.0, abs=1e-12)
    assert f.worst_rel < 1e-9
    assert f.n_points == len(SIZES)


def test_one_fit_explains_several_collectives_and_algorithms():
    pts = (synthetic("all-reduce", "ring", 4) + synthetic("all-reduce", "rd", 4) + synthetic("all-gather", "ring", 4)
           + synthetic("reduce-scatter", "rd", 4) + synthetic("all-reduce", "linear", 4)
           + synthetic("all-reduce", "direct", 8))
    f = fit(pts)
    assert (f.alpha, f.bw) == (pytest.approx(ALPHA, rel=1e-9), pytest.approx(BW, rel=1e-9))
    each = calibrate.fit_each(pts)
    assert set(each) == {("all-reduce", "ring"), ("all-reduce", "rd"), ("all-gather", "ring"),
                         ("reduce-scatter", "rd"), ("all-reduce", "linear"), ("all-reduce", "direct")}
    assert all(g.alpha == pytest.approx(ALPHA, rel=1e-9) for g in each.values())


@pytest.mark.parametrize("seed", range(5))
def test_fit_recovers_alpha_and_beta_from_noisy_timings(seed):
    # 5 % multiplicative noise on every point, a different draw per seed
    pts = synthetic("all-reduce", "ring", 8, noise=0.05, seed=seed) + synthetic("all-gather", "ring", 8, noise=0.05,
                                                                                 seed=seed + 100)
    f = fit(pts)
    assert f.alpha == pytest.approx(ALPHA, rel=0.05)
    assert f.bw == pytest.approx(BW, rel=0.05)
    assert 0.95 < f.r2 <= 1.0
    assert 0.05 < f.worst_rel < 0.3  # the noise shows up as the worst error, not hidden


def test_fit_weights_small_messages_like_large_ones():
    # a 1 ns latency under 1 GB/s: an unweighted fit would lose α in the big messages' residuals
    pts = synthetic("all-reduce", "ring", 4, alpha=1e-9, bw=1e9)
    assert fit(pts).alpha == pytest.approx(1e-9, rel=1e-6)


def test_fit_keeps_alpha_non_negative():
    # pure bandwidth with noise that would pull an unconstrained α below zero
    pts = [Point("all-gather", "ring", 4, float(S), 0.75 * S / BW * (1.3 if S == 8 else 1.0)) for S in SIZES]
    f = fit(pts)
    assert f.alpha >= 0
    assert f.bw == pytest.approx(BW, rel=0.05)


def test_fit_refuses_what_it_cannot_determine():
    with pytest.raises(ValueError, match="at least 2"):
        fit(synthetic("all-reduce", "ring", 4)[:1])
    with pytest.raises(ValueError, match="at least 2"):
        fit([Point("all-reduce", "ring", 1, 8.0, 1e-6), Point("all-reduce", "ring", 1, 16.0, 1e-6)])
    same_size = [Point("all-reduce", "ring", 4, 1024.0, t) for t in (1e-5, 1.1e-5, 0.9e-5)]
    with pytest.raises(ValueError, match="two different message sizes"):
        fit(same_size)
    shrinking = [Point("all-reduce", "ring", 4, float(S), 1e-3 / S) for S in (8, 1024, 2**20)]
    with pytest.raises(ValueError, match="do not grow"):
        fit(shrinking)
    with pytest.raises(ValueError, match="positive number of seconds"):
        fit([Point("all-reduce", "ring", 4, 8.0, 0.0), Point("all-reduce", "ring", 4, 16.0, 1e-6)])


def test_fit_becomes_a_link_and_predicts():
    f = fit(synthetic("reduce-scatter", "ring", 8))
    link = f.link()
    assert isinstance(link, LinkSpec) and link.name == MEASURED
    assert (link.alpha, link.bw) == (pytest.approx(ALPHA), pytest.approx(BW))
    S = np.array([1e3, 1e6])
    ring = 2 * 7 * (link.alpha + S / (8 * link.bw))  # 2(n − 1)·(α + S/(nβ)), n = 8
    assert np.allclose(f.predict("all-reduce", "ring", 8, S), ring)
    back = calibrate.link_from_dict(json.loads(json.dumps(calibrate.link_to_dict(link, f, source="x"))))
    assert back == link


def test_the_link_is_fitted_to_the_ring_points():
    ring = synthetic("all-reduce", "ring", 4) + synthetic("all-gather", "ring", 4)
    other = synthetic("all-reduce", "linear", 4, alpha=1e-6, bw=100e9)  # a faster, different machine
    link, f = calibrate.fit_link(ring + other)
    assert (link.alpha, link.bw) == (pytest.approx(ALPHA), pytest.approx(BW))
    assert f.n_points == len(ring) and link.name == MEASURED
    link, f = calibrate.fit_link(other, name="x")  # no ring points: all of them
    assert (link.name, link.bw) == ("x", pytest.approx(100e9))


def test_point_bandwidths_follow_nccl_tests():
    p = Point("all-reduce", "ring", 8, 1e9, 0.5)
    assert p.algbw == 2e9  # S / t
    assert p.busbw == pytest.approx(2e9 * 2 * 7 / 8)  # × 2(n−1)/n
    q = Point("all-gather", "ring", 8, 1e9, 0.5)
    assert q.busbw == pytest.approx(2e9 * 7 / 8)  # × (n−1)/n
    r = Point("reduce-scatter", "ring", 4, 1e9, 0.5)
    assert r.busbw == pytest.approx(2e9 * 3 / 4)
    # a ring at full speed moves busbw = β: what makes busbw comparable with the link's bandwidth
    t = t_formula("ring", 8, 1e12, 0.0, BW)
    assert Point("all-reduce", "ring", 8, 1e12, t).busbw == pytest.approx(BW)


# ---------------------------------------------------------------------------------------
# nccl-tests output, written here in the format nccl-tests prints
# ---------------------------------------------------------------------------------------
NCCL_FACTOR = {"all-reduce": lambda n: 2 * (n - 1) / n, "all-gather": lambda n: (n - 1) / n,
               "reduce-scatter": lambda n: (n - 1) / n}


def _time_str(us):
    # nccl-tests: %7.0f from 10 ms, %7.1f from 100 µs, else %7.2f
    return f"{us:7.0f}" if us >= 1e4 else f"{us:7.1f}" if us >= 100 else f"{us:7.2f}"


def nccl_text(op, n, alpha=ALPHA, bw=BW, sizes=SIZES, program=True, style="new", ranks=True, dtype="float",
              hosts=None, times=None, interleave=None, prefix=""):
    """
    What `<op>_perf -b 8 -e 128M -f 2 -g n` prints (nccl-tests src/util.cu: the rank lines
    "#  Rank %2d Group %2d Pid %6d on %10s device %2d …", the header, rows "%12li  %12li  %8s
    %6s  %6s" + time/algbw/busbw/#wrong twice, the footer), with times from the ring's closed
    form, or from times(S) in seconds. hosts: one host name per rank (default all "node01");
    interleave: {S: line} prints `line` right after the row of size S; prefix: put before
    every line (mpirun --tag-output's "[1,0]<stdout>:").
    """
    prog = {"all-reduce": "all_reduce_perf", "all-gather": "all_gather_perf",
            "reduce-scatter": "reduce_scatter_perf"}[op]
    out = []
    if program:
        out.append(f"$ ./build/{prog} -b 8 -e 128M -f 2 -g {n}")
    out.append(f"# nThread 1 nGpus {n} minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 "
               f"iters: 20 agg iters: 1 validation: 1 graph: 0")
    out.append("#")
    out.append("# Using devices")
    if ranks:
        for r in range(n):
            host = hosts[r] if hosts else "node01"
            out.append(f"#  Rank {r:2d} Group  0 Pid {12345 + r:6d} on {host:>10s} device {r % 8:2d} "
                       f"[0x{r % 8 + 7:02x}] NVIDIA H100 80GB HBM3")
    out.append("#")
    if style == "new":  # nccl-tests' Reporter: "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  ..."
        group = "{:>7s}  {:>6s}  {:>6s} {:>6s}"
        fmt = "# {:>10s}  {:>12s}  {:>8s}  {:>6s}  {:>6s}  " + group + "  " + group
        out.append("# " + " " * 54 + "out-of-place                       in-place")
        out.append(fmt.format("size", "count", "type", "redop", "root", *(["time", "algbw", "busbw", "#wrong"] * 2)))
        out.append(fmt.format("(B)", "(elements)", "", "", "", *(["(us)", "(GB/s)", "(GB/s)", ""] * 2)))
    else:  # nccl-tests before redop/root columns: all_gather had no redop, errors as 0e+00
        names = ["size", "count", "type"] + ([] if op == "all-gather" else ["redop"])
        out.append("#" + "".join(f"  {c:>10s}" for c in names) + "     time   algbw   busbw  error" * 2)
    a, b = coefficients(op, "ring", n)
    for S in sizes:
        t_us = (a * alpha + b * S / bw) * 1e6 if times is None else times(S) * 1e6
        alg = S / (t_us * 1e-6) / 1e9
        bus = alg * NCCL_FACTOR[op](n)
        count = S // 4
        redop = "none" if op == "all-gather" else "sum"
        res = f"  {_time_str(t_us)}  {alg:6.2f}  {bus:6.2f}  {0:5d}"
        res_ip = f"  {_time_str(t_us * 0.99)}  {alg / 0.99:6.2f}  {bus / 0.99:6.2f}  {0:5d}"
        if style == "new":
            out.append(f"{S:12d}  {count:12d}  {dtype:>8s}  {redop:>6s}  {-1:6d}" + res + res_ip)
        else:
            mid = "" if op == "all-gather" else f"  {redop:>6s}"
            out.append(f"{S:12d}  {count:12d}  {dtype:>6s}{mid}  {_time_str(t_us)}  {alg:6.2f}  {bus:6.2f}  0e+00"
                       f"  {_time_str(t_us)}  {alg:6.2f}  {bus:6.2f}  0e+00")
        if interleave and S in interleave:
            out.append(interleave[S])
    out.append("# Out of bounds values : 0 OK")
    out.append("# Avg bus bandwidth    : 12.345 ")
    out.append("#")
    return "".join(prefix + line + "\n" for line in out)


@pytest.mark.parametrize("n", [2, 8])
@pytest.mark.parametrize("op", ["all-reduce", "all-gather", "reduce-scatter"])
def test_nccl_parser_reads_the_table(op, n):
    (table,) = parse_nccl_tests(nccl_text(op, n))
    assert (table.op, table.n, len(table.rows)) == (op, n, len(SIZES))
    r = table.rows[-1]
    assert (r.nbytes, r.count, r.dtype) == (SIZES[-1], SIZES[-1] // 4, "float")
    assert r.redop == ("none" if op == "all-gather" else "sum")
    assert r.inplace_time_us == pytest.approx(r.time_us * 0.99, rel=1e-3)


@pytest.mark.parametrize("op", ["all-reduce", "all-gather", "reduce-scatter"])
def test_nccl_columns_are_algbw_and_busbw_as_nccl_tests_defines_them(op):
    n = 8
    (table,) = parse_nccl_tests(nccl_text(op, n))
    pts = table.points()
    for row, p in zip(table.rows, pts):
        assert p.seconds == pytest.approx(row.time_us * 1e-6)
        # algbw = S / t and busbw = algbw × factor, in GB/s, to the file's 2 decimals
        assert p.algbw / 1e9 == pytest.approx(row.algbw, abs=0.006, rel=1e-3)
        assert p.busbw / 1e9 == pytest.approx(row.busbw, abs=0.006, rel=1e-3)
        assert busbw(op, n, p.nbytes, p.seconds) == p.busbw
    assert table.busbw_factor() == pytest.approx(NCCL_FACTOR[op](n), rel=1e-3)


@pytest.mark.parametrize("op", ["all-reduce", "all-gather", "reduce-scatter"])
def test_nccl_fit_recovers_the_link(op):
    link, f, tables = fit_nccl_tests(nccl_text(op, 8))
    assert link.alpha == pytest.approx(ALPHA, rel=0.01)  # times are printed with 3–5 digits
    assert link.bw == pytest.approx(BW, rel=0.01)
    assert f.r2 > 0.999 and f.worst_rel < 0.01
    assert link.name == "nccl-tests, 8 GPUs"
    inplace, _, _ = fit_nccl_tests(nccl_text(op, 8), inplace=True)
    assert inplace.bw > link.bw  # the test wrote in-place times 1 % faster


def test_nccl_op_comes_from_the_busbw_factor_without_a_program_name():
    for op in ("all-reduce", "all-gather", "reduce-scatter"):
        (table,) = parse_nccl_tests(nccl_text(op, 4, program=False))
        assert table.op == op


def test_nccl_rank_count_comes_from_busbw_when_rank_lines_are_missing():
    for op, n in (("all-reduce", 8), ("all-gather", 4), ("reduce-scatter", 16)):
        sizes = [2**k for k in range(20, 34)]  # big messages: busbw printed with enough digits
        (table,) = parse_nccl_tests(nccl_text(op, n, program=False, ranks=False, sizes=sizes))
        assert (table.op, table.n) == (op, n)


def test_nccl_old_format_without_redop_and_root():
    for op in ("all-reduce", "all-gather"):
        (table,) = parse_nccl_tests(nccl_text(op, 2, style="old", program=False))
        assert (table.op, table.n, len(table.rows)) == (op, 2, len(SIZES))
        assert table.rows[0].inplace_time_us == table.rows[0].time_us


def test_nccl_several_runs_in_one_log():
    text = nccl_text("all-reduce", 8) + "\n===begin next test===\n" + nccl_text("all-gather", 8)
    tables = parse_nccl_tests(text)
    assert [t.op for t in tables] == ["all-reduce", "all-gather"]
    link, f, _ = fit_nccl_tests(text)
    assert f.n_points == 2 * len(SIZES)
    assert link.bw == pytest.approx(BW, rel=0.01)


def test_nccl_overrides_and_refusals():
    (t,) = parse_nccl_tests(nccl_text("all-gather", 4), op="reduce-scatter", n=6)
    assert (t.op, t.n) == ("reduce-scatter", 6)
    with pytest.raises(ValueError, match="no nccl-tests table"):
        parse_nccl_tests("hello\nworld\n")
    with pytest.raises(ValueError, match="broadcast_perf"):
        parse_nccl_tests(nccl_text("all-reduce", 4).replace("all_reduce_perf", "broadcast_perf"))
    with pytest.raises(ValueError, match="unknown collective"):
        parse_nccl_tests(nccl_text("all-reduce", 4), op="alltoall")


# ---------------------------------------------------------------------------------------
# python -m simcore nccl-import
# ---------------------------------------------------------------------------------------
def run_cli(argv):
    from simcore.__main__ import _Parser

    parser = _Parser(prog="python -m simcore")
    sub = parser.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    cli_measure.register(sub)
    return cli_measure.run(parser.parse_args(argv))


def test_nccl_import_writes_a_link(tmp_path, capsys):
    src = tmp_path / "ar.txt"
    src.write_text(nccl_text("all-reduce", 8))
    out = tmp_path / "link.json"
    assert run_cli(["nccl-import", str(src), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "all-reduce on 8 ranks" in printed and "LinkSpec(" in printed
    link = calibrate.load_link(out)
    assert link.bw == pytest.approx(BW, rel=0.01) and link.alpha == pytest.approx(ALPHA, rel=0.01)
    assert json.loads(out.read_text())["fit"]["r2"] > 0.999


@pytest.mark.parametrize("argv, needle", [
    (["nccl-import", "MISSING"], "cannot read"),
    (["nccl-import", "EMPTY"], "no nccl-tests table"),
    (["nccl-import", "GOOD", "--n", "1"], "--n must be at least 2"),
])
def test_nccl_import_bad_input_is_one_line_and_code_2(tmp_path, capsys, argv, needle):
    (tmp_path / "EMPTY").write_text("nothing here\n")
    (tmp_path / "GOOD").write_text(nccl_text("all-reduce", 4))
    argv = [str(tmp_path / a) if a in ("MISSING", "EMPTY", "GOOD") else a for a in argv]
    assert run_cli(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_measure_bad_arguments_are_refused_before_mpi(capsys):
    for argv, needle in ((["measure", "--n", "1"], "at least 2"), (["measure", "--sizes", "8Q"], "cannot read a size"),
                         (["measure", "--ops", "all-gather:rd", "--n", "3"], "power-of-two"),
                         (["measure", "--ops", "all-reduce:innet"], "no 'innet' algorithm"),
                         (["measure", "--repeats", "0"], "--repeats")):
        assert run_cli(argv) == 2, argv
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, (argv, err)


def test_register_adds_both_commands():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd")
    cli_measure.register(sub)
    assert set(cli_measure.COMMANDS) <= set(sub.choices)
    assert parser.parse_args(["measure"]).sizes == "8B..64MiB"


# ---------------------------------------------------------------------------------------
# Lines between rows, mpirun prefixes
# ---------------------------------------------------------------------------------------
# Open MPI's help aggregation prints this between other output when several ranks warn alike;
# NCCL_DEBUG=INFO adds "host:pid:tid [dev] NCCL INFO …" lines anywhere.
MPI_HELP = "[node01:12345] 1 more process has sent help message help-mpi-btl-openib.txt / no device params found"
NCCL_INFO = "node01:12345:12400 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/CUMEM/read"


def test_rows_after_an_interleaved_log_line_are_kept_and_the_line_reported():
    text = nccl_text("all-reduce", 8, interleave={2**10: MPI_HELP, 2**20: NCCL_INFO})
    (table,) = parse_nccl_tests(text)
    assert [r.nbytes for r in table.rows] == SIZES  # nothing after 1 KiB was dropped
    assert [line for _, line in table.skipped] == [MPI_HELP, NCCL_INFO]
    lines = text.splitlines()
    for lineno, line in table.skipped:
        assert lines[lineno - 1] == line  # line numbers are the file's, counted from 1
    link, f, _ = fit_nccl_tests(text)
    assert f.n_points == len(SIZES) and link.bw == pytest.approx(BW, rel=0.01)


def test_mpirun_tag_output_prefixes_are_removed():
    (table,) = parse_nccl_tests(nccl_text("all-gather", 4, prefix="[1,0]<stdout>:"))
    assert (table.op, table.n, len(table.rows)) == ("all-gather", 4, len(SIZES))


def test_nccl_import_lists_every_skipped_line(tmp_path, capsys):
    src = tmp_path / "ar.txt"
    src.write_text(nccl_text("all-reduce", 8, interleave={2**10: MPI_HELP, 2**20: NCCL_INFO}))
    assert run_cli(["nccl-import", str(src)]) == 0
    out = capsys.readouterr().out
    assert "skipped 2 line(s)" in out and MPI_HELP[:60] in out and NCCL_INFO[:60] in out


# ---------------------------------------------------------------------------------------
# Multi-node runs
# ---------------------------------------------------------------------------------------
NVL = LinkSpec("nvl", 1.9e-6, 450e9)
IB = LinkSpec("ib", 4.0e-6, 48e9)  # NDR 400: "46-48 GB/s per NIC" (NVIDIA/nccl-tests#290)
BIG = [2**k for k in range(3, 34)]  # 8 B .. 8 GiB, as `-b 8 -e 8G -f 2`


def two_node_ring_time(op, S, P=8, N=2, inter=IB):
    """NCCL's ring over N nodes with one channel per NIC, NICs the bottleneck, written out
    here: K steps, each one chunk of S/(P·n) through a NIC."""
    n = P * N
    K = 2 * (n - 1) if op == "all-reduce" else n - 1
    return K * (inter.alpha + S / (P * n * inter.bw))


def one_node_ring_time(op, S, n=8, link=NVL):
    K = 2 * (n - 1) if op == "all-reduce" else n - 1
    return K * (link.alpha + S / (n * link.bw))


NCCL_FUNC = {"all-reduce": "AllReduce", "all-gather": "AllGather", "reduce-scatter": "ReduceScatter"}


def algo_lines(op, n, sizes, algo="RING", proto="SIMPLE", host="gpu-a"):
    """NCCL's algorithm line for every size (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING, src/enqueue.cc:
    "%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}"), as {S: line} for nccl_text's
    interleave; its bytes are S (all-reduce) or one rank's S/n (the others)."""
    return {S: f"{host}:1234:1234 [0] NCCL INFO {NCCL_FUNC[op]}: {S if op == 'all-reduce' else S // n} Bytes -> "
               f"Algo {algo} proto {proto} channel{{Lo..Hi}}={{0..15}}" for S in sizes}


def two_node_text(op="all-reduce", hosts=("gpu-a", "gpu-b"), P=8):
    """A run NCCL did with Ring (its algorithm lines say so), NICs the bottleneck."""
    ranks = [h for h in hosts for _ in range(P)]
    return nccl_text(op, len(ranks), sizes=BIG, hosts=ranks, times=lambda S: two_node_ring_time(op, S, P, len(hosts)),
                     interleave=algo_lines(op, len(ranks), BIG))


def test_rank_lines_on_two_hosts_make_a_two_node_table():
    (t,) = parse_nccl_tests(two_node_text(), allow_multi_node=True)
    assert (t.n, t.nodes, t.per_node) == (16, 2, 8)
    assert t.hosts == ("gpu-a",) * 8 + ("gpu-b",) * 8
    assert all(p.nodes == 2 for p in t.points())


@pytest.mark.parametrize("call", [lambda x: parse_nccl_tests(x), lambda x: fit_nccl_tests(x)])
def test_a_two_node_run_is_never_fitted_as_one_switch(call):
    with pytest.raises(ValueError, match=r"16 GPUs over 2 nodes \(hosts gpu-a, gpu-b\), 8 per node.*inter-node"):
        call(two_node_text())


def test_uneven_hosts_and_contradicting_flags_are_refused():
    ranks = ["a"] * 8 + ["b"] * 4
    with pytest.raises(ValueError, match="unevenly over 2 hosts"):
        parse_nccl_tests(nccl_text("all-reduce", 12, hosts=ranks), allow_multi_node=True)
    with pytest.raises(ValueError, match="= 12 ranks, but the table ran on 16"):
        parse_nccl_tests(two_node_text(), nodes=3, per_node=4, allow_multi_node=True)


def test_nodes_flag_marks_a_run_without_rank_lines():
    text = nccl_text("all-reduce", 16, sizes=BIG, ranks=False, times=lambda S: two_node_ring_time("all-reduce", S))
    (t,) = parse_nccl_tests(text, n=16, nodes=2, allow_multi_node=True)
    assert (t.nodes, t.per_node) == (2, 8)
    (t,) = parse_nccl_tests(text, n=16, per_node=8, allow_multi_node=True)
    assert t.nodes == 2


def test_a_two_node_ring_run_gives_the_inter_node_link():
    one = nccl_text("all-reduce", 8, sizes=BIG, hosts=["gpu-a"] * 8,
                    times=lambda S: one_node_ring_time("all-reduce", S))
    cal = nccl_log.calibrate_nccl_tests(one + two_node_text() + two_node_text("all-gather"))
    assert cal.intra.alpha == pytest.approx(NVL.alpha, rel=0.02) and cal.intra.bw == pytest.approx(NVL.bw, rel=0.01)
    assert cal.inter.alpha == pytest.approx(IB.alpha, rel=0.02) and cal.inter.bw == pytest.approx(IB.bw, rel=0.01)
    assert cal.inter_fit.n_points == 2 * len(BIG) and cal.notes == ()
    # busbw of the plateau = the 8 NICs together, as NVIDIA says a two-node ring run should show
    big = [r for t in cal.tables if t.nodes == 2 and t.op == "all-reduce" for r in t.rows][-1]
    assert big.busbw == pytest.approx(8 * IB.bw / 1e9, rel=0.01)


def test_the_hierarchical_model_needs_the_intra_node_link():
    text = two_node_text()
    with pytest.raises(ValueError, match="needs the intra-node link: pass --intra"):
        nccl_log.calibrate_nccl_tests(text, inter_algo="hier")
    cal = nccl_log.calibrate_nccl_tests(text)  # the ring's NIC-bound form does not need it
    assert cal.intra is None and cal.inter.bw == pytest.approx(IB.bw, rel=0.01)
    assert any("assumed the NICs" in note for note in cal.notes)


def test_a_hierarchical_run_fits_with_the_given_intra_link():
    """A run timed as the registry's hier (pipelined by chunks) gives back its inter-node link;
    the three phases' additive form (Horovod's three calls) would not fit it."""
    from simcore.topo_closed_forms import t_hier, t_hier_pipelined

    ranks = ["h1"] * 4 + ["h2"] * 4 + ["h3"] * 4
    text = nccl_text("all-reduce", 12, sizes=BIG, hosts=ranks, times=lambda S: t_hier_pipelined(4, 3, S, NVL, IB))
    assert t_hier("all-reduce", 4, 3, 2.0**8, NVL, IB) == pytest.approx(  # one chunk: the three phases
        2 * 3 * (NVL.alpha + 2**8 / (4 * NVL.bw)) + 2 * 2 * (IB.alpha + 2**8 / (12 * IB.bw)), rel=1e-12)
    assert t_hier_pipelined(4, 3, 2.0**33, NVL, IB) < 0.8 * t_hier("all-reduce", 4, 3, 2.0**33, NVL, IB)
    cal = nccl_log.calibrate_nccl_tests(text, intra=NVL, inter_algo="hier")
    assert cal.inter.bw == pytest.approx(IB.bw, rel=0.02) and cal.inter.alpha == pytest.approx(IB.alpha, rel=0.05)
    assert cal.inter_fit.worst_rel < 0.02  # the fitted line is the pipelined form through the points


def test_a_ring_limited_by_nvlink_says_the_network_was_not_measured():
    slow_nvl = LinkSpec("slow", 1.9e-6, 200e9)  # (P−1)/P per step on NVLink beats one NIC chunk
    one = nccl_text("all-reduce", 8, sizes=BIG, hosts=["a"] * 8,
                    times=lambda S: one_node_ring_time("all-reduce", S, link=slow_nvl))
    from simcore.topo_closed_forms import t_ring_nodes

    two = nccl_text("all-reduce", 16, sizes=BIG, hosts=["a"] * 8 + ["b"] * 8,
                    times=lambda S: t_ring_nodes("all-reduce", 8, 2, S, slow_nvl, IB))
    cal = nccl_log.calibrate_nccl_tests(one + two, inter_algo="ring-nodes")  # run with NCCL_ALGO=Ring, as said
    assert any("waits for NVLink" in note for note in cal.notes)


def test_nccl_import_two_nodes(tmp_path, capsys):
    src = tmp_path / "2n.txt"
    src.write_text(two_node_text())
    out = tmp_path / "link.json"
    assert run_cli(["nccl-import", str(src), "--intra", "nvlink4", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "on 2 nodes x 8" in printed and "inter-node fit (ring-nodes closed form, per GPU NIC)" in printed
    d = json.loads(out.read_text())
    assert d["role"] == "inter-node" and d["bw"] == pytest.approx(IB.bw, rel=0.01)
    assert run_cli(["nccl-import", str(src), "--inter-algo", "hier"]) == 2
    assert "--intra" in capsys.readouterr().err
    assert run_cli(["nccl-import", str(src), "--intra", "nope"]) == 2
    assert "neither a link name" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------
# The bandwidth comes from the plateau
# ---------------------------------------------------------------------------------------
def nccl_shaped_time(S, n=8, busbw=370e9):
    """
    An 8-GPU ring all-reduce the way NCCL's own tuning model prices it (src/graph/tuning.cc):
    per protocol a latency baseLat + 2(n−1)·hwLat(NVLink) — LL 6.6 + 0.6/step, LL128 14.0 +
    1.9/step, Simple 8.4 + 3.4/step µs — and a bandwidth of busbw × 0.5 (LL), × 0.92 (LL128),
    × 1 (Simple); NCCL runs the fastest. busbw 370 GB/s: NCCL's ring on H100 NVLink
    (NVIDIA/nccl-tests#212). Between 1 and 64 MiB the table ramps up, as real ones do.
    """
    K = 2 * (n - 1)
    return min(lat * 1e-6 + K / n * S / (frac * busbw)
               for lat, frac in ((6.6 + K * 0.6, 0.5), (14.0 + K * 1.9, 0.92), (8.4 + K * 3.4, 1.0)))


def test_the_ramp_no_longer_pulls_beta_below_the_plateau_busbw():
    (table,) = parse_nccl_tests(nccl_text("all-reduce", 8, sizes=BIG, times=nccl_shaped_time))
    plateau_busbw = max(r.busbw for r in table.rows) * 1e9
    pts = table.points()
    new = fit(pts)
    assert new.bw == pytest.approx(plateau_busbw, rel=0.03)
    old = fit(pts, min_bytes=0)  # every point in the β equation: the former 1/t²-weighted fit
    assert old.bw < 0.92 * plateau_busbw
    big = fit(pts, min_bytes=2**30)
    assert big.bw == pytest.approx(plateau_busbw, rel=0.01) and big.n_plateau == 4
    with pytest.raises(ValueError, match="no measurement of 16 GiB or more"):
        fit(pts, min_bytes=2**34)


def test_nccl_import_min_bytes(tmp_path, capsys):
    src = tmp_path / "ar.txt"
    src.write_text(nccl_text("all-reduce", 8, sizes=BIG, times=nccl_shaped_time))
    out = tmp_path / "l.json"
    assert run_cli(["nccl-import", str(src), "--min-bytes", "1GiB", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["fit"]["min_bytes"] == 2**30
    assert run_cli(["nccl-import", str(src), "--min-bytes", "lots"]) == 2
    assert "cannot read a size" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------
# busbw as nccl-tests reports it, for every algorithm
# ---------------------------------------------------------------------------------------
def test_busbw_summary_is_nccl_tests_busbw_and_explains_in_network_reduction():
    from simcore.links import NVLINK4

    S, n = 2.0**30, 8
    t = t_formula("innet", n, S, NVLINK4.alpha, NVLINK4.bw)
    text = calibrate.busbw_summary("all-reduce", "innet", n, S, t, NVLINK4)
    want = S / t * 2 * (n - 1) / n  # nccl-tests src/all_reduce.cu AllReduceGetBw, whatever the algorithm
    assert f"busbw         {want / 1e9:.2f} GB/s" in text
    assert want > NVLINK4.bw and "above the link's bandwidth" in text and "nccl-tests#212" in text
    port = calibrate.port_bw("all-reduce", "innet", n, S, t)
    assert port <= NVLINK4.bw and f"{port / 1e9:.2f}" in text
    ring = t_formula("ring", n, S, NVLINK4.alpha, NVLINK4.bw)
    assert "above the link" not in calibrate.busbw_summary("all-reduce", "ring", n, S, ring, NVLINK4)


def test_newer_nccl_tests_banner_and_a_run_without_footer():
    # nccl-tests 2.19 (src/common.cu, util.cu): a version line, "# Collective test starting: …"
    # before and "# Collective test concluded: …" after each run
    first = nccl_text("all-reduce", 8, program=False).split("# Out of bounds")[0]  # cut off: no footer
    second = ("# nccl-tests version 2.19.6 nccl-headers=22703 nccl-library=22703\n"
              "# Collective test starting: all_gather_perf\n" + nccl_text("all-gather", 8, program=False)
              + "# Collective test concluded: all_gather_perf\n")
    tables = parse_nccl_tests(first + second)
    assert [(t.op, t.n, len(t.rows)) for t in tables] == [("all-reduce", 8, len(SIZES)), ("all-gather", 8, len(SIZES))]
    assert all(not t.skipped for t in tables)


# ---------------------------------------------------------------------------------------
# A two-node log, each link fitted and checked
# ---------------------------------------------------------------------------------------
TRUE_NVL = LinkSpec("true nvlink", 2.5e-6, 360e9)
TRUE_IB = LinkSpec("true ib", 6.0e-6, 46e9)
LOG_SIZES = [2**k for k in range(3, 34, 2)]  # 8 B .. 8 GiB, x4: 16 rows a table


def two_node_log(noise=0.03, seed=1, inter_times=None):
    """What `all_reduce_perf` prints on one DGX (8 GPUs, node gpu-a) and then on two (16 GPUs,
    gpu-a and gpu-b), with times from the truth (one-node ring on TRUE_NVL; NCCL's channel
    rings NIC-bound on TRUE_IB) times exp(noise·N(0, 1)). inter_times(S) replaces the two-node
    truth (seconds)."""
    rng = np.random.default_rng(seed)
    jitter = lambda: math.exp(noise * rng.standard_normal())  # noqa: E731
    one = {S: one_node_ring_time("all-reduce", S, link=TRUE_NVL) * jitter() for S in LOG_SIZES}
    two_t = inter_times or (lambda S: two_node_ring_time("all-reduce", S, inter=TRUE_IB))
    two = {S: two_t(S) * jitter() for S in LOG_SIZES}
    return (nccl_text("all-reduce", 8, sizes=LOG_SIZES, hosts=["gpu-a"] * 8, times=one.get)
            + nccl_text("all-reduce", 16, sizes=LOG_SIZES, hosts=["gpu-a"] * 8 + ["gpu-b"] * 8, times=two.get,
                        interleave=algo_lines("all-reduce", 16, LOG_SIZES)))


def bad_two_node_log():
    """NCCL ran something else from 64 KiB to 16 MiB (Tree-like: 2.5× the ring's time there)."""
    ring = lambda S: two_node_ring_time("all-reduce", S, inter=TRUE_IB)  # noqa: E731
    return two_node_log(noise=0.0, inter_times=lambda S: ring(S) * (2.5 if 2**16 <= S <= 2**24 else 1.0))


def test_a_two_node_log_gives_each_link_near_its_truth():
    cal = nccl_log.calibrate_nccl_tests(two_node_log(), source="dgx2")
    assert cal.intra.alpha == pytest.approx(TRUE_NVL.alpha, rel=0.08)
    assert cal.intra.bw == pytest.approx(TRUE_NVL.bw, rel=0.04)
    assert cal.inter.alpha == pytest.approx(TRUE_IB.alpha, rel=0.08)
    assert cal.inter.bw == pytest.approx(TRUE_IB.bw, rel=0.04)
    assert cal.inter_algo == "ring-nodes" and cal.inter_fit.inter_algo == "ring-nodes"
    assert (cal.intra.name, cal.inter.name) == ("dgx2", "dgx2, between nodes")
    assert not cal.intra_fit.bad and not cal.inter_fit.bad  # 3 % noise: well under BAD_FIT
    # the worst error is the max over the points of the same predict() the rows print
    one, many = cal.points()
    assert cal.inter_fit.worst_rel == pytest.approx(np.max(np.abs(cal.inter_fit.errors(many))), rel=1e-12)
    assert cal.intra_fit.worst_rel == pytest.approx(np.max(np.abs(cal.intra_fit.errors(one))), rel=1e-12)


def test_multi_node_algorithms_come_from_the_registry():
    from simcore.algorithms import ALGORITHMS

    across = {a for op in ALGORITHMS for a, r in ALGORITHMS[op].items()
              if "nodes" in r.topologies and "switch" not in r.topologies}
    assert set(calibrate.MULTI_NODE_ALGOS) == across == {"hier", "ring-nodes", "tree"}  # tree: NCCL's Tree (issue 32)
    assert calibrate.inter_algo_name("all-reduce", "ring") == "ring-nodes"
    with pytest.raises(ValueError, match="all-gather can be fitted to ring-nodes, not 'hier'"):
        calibrate.inter_algo_name("all-gather", "hier")


def test_the_measured_machine_runs_what_was_fitted():
    from simcore.topology_presets import allreduce_time

    cal = nccl_log.calibrate_nccl_tests(two_node_log(noise=0.0))
    assert cal.machine_algos() == {op: "ring-nodes" for op in ("all-reduce", "all-gather", "reduce-scatter")}
    m = calibrate.MeasuredPreset("m", "Measured", "h100", "nodes", 8, "nvlink4", "ib-ndr400", max_devices=256,
                                 algos=tuple(sorted(cal.machine_algos().items())))
    import dataclasses as dc
    from simcore import links
    links.LINKS["_t_intra"], links.LINKS["_t_inter"] = cal.intra, cal.inter
    try:
        m = dc.replace(m, intra="_t_intra", inter="_t_inter")
        topo = m.topology(16)
        assert topo.choose("all-reduce", 2**16)[0] == "ring-nodes"
        measured = two_node_ring_time("all-reduce", 2**16, inter=TRUE_IB)
        assert m.allreduce_time(16, 2**16) == pytest.approx(measured, rel=0.02)
        # the textbook default (hierarchical) with the same links predicts far less than measured
        assert allreduce_time(m.layout(16), 2**16) < 0.5 * measured
    finally:
        del links.LINKS["_t_intra"], links.LINKS["_t_inter"]


def _cli_rows_and_summary(printed, header):
    """The error column of the rows under `header` and the worst error of the summary after them."""
    import re

    part = printed.split(header, 1)[1]
    rows = [float(m) for m in re.findall(r"^\s+\d+ \w+?B?\s.*?([+-]\d+\.\d)%", part.split("\n\n")[0], re.M)]
    summary = float(re.search(r"inter-node fit .*?worst error\s+(\d+\.\d)%", part).group(1))
    return rows, summary


def test_nccl_import_summary_is_the_max_of_its_rows(tmp_path, capsys):
    src = tmp_path / "dgx_pair.txt"
    src.write_text(two_node_log())
    out = tmp_path / "link.json"
    assert run_cli(["nccl-import", str(src), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    rows, summary = _cli_rows_and_summary(printed, "all-reduce on 2 nodes x 8 (ring-nodes model):")
    assert len(rows) == len(LOG_SIZES)
    assert summary == max(abs(r) for r in rows) > 0
    cal = nccl_log.calibrate_nccl_tests(two_node_log())
    assert f"worst error {cal.inter_fit.worst_rel * 100:5.1f}%" in printed
    assert "warning" not in printed
    d = json.loads(out.read_text())
    assert d["name"] == "dgx_pair" and d["inter"]["name"] == "dgx_pair, between nodes"


def test_a_bad_fit_warns(tmp_path, capsys):
    cal = nccl_log.calibrate_nccl_tests(bad_two_node_log())
    assert cal.inter_fit.bad and cal.inter_fit.worst_rel > calibrate.BAD_FIT and not cal.intra_fit.bad
    src = tmp_path / "tree.txt"
    src.write_text(bad_two_node_log())
    assert run_cli(["nccl-import", str(src)]) == 0
    printed = capsys.readouterr().out
    rows, summary = _cli_rows_and_summary(printed, "all-reduce on 2 nodes x 8 (ring-nodes model):")
    assert summary == max(abs(r) for r in rows)
    assert f"warning: the inter-node fit explains the data badly: worst error {summary:.1f}% is above 25%" in printed


# ---------------------------------------------------------------------------------------
# Across nodes: the model NCCL ran, and never a link faster than its NIC (issue 32 item 7)
# ---------------------------------------------------------------------------------------
HDR = LinkSpec("IB HDR 200", 4.0e-6, 25e9)  # a 200 Gb/s NIC: 25 GB/s


def nvls_tree_time(S, P=8, N=2, bw_inter=24.0):
    """NCCL's NVLS Tree all-reduce, network-bound, as tuning.cc times it: bus = ch · bwInter · 2 (two
    nodes), ch = P channels, algbw = bus · n/(2(n−1)); latency hwLat NVLINK 25 µs + 2·log2(N)·20.9 µs.
    bwInter 24 GB/s: the fastest of search.cc's sm90SpeedArrayInter a 25 GB/s NIC carries."""
    n = P * N
    algbw = P * bw_inter * 1e9 * 2 * n / (2 * (n - 1))
    return (25.0 + 2 * 20.9) * 1e-6 + S / algbw


def tree_log(lines=False):
    """Two DGX-like nodes on 25 GB/s NICs: NCCL's Ring LL below 1 MiB, NVLS Tree from there
    (what NCCL's tuner picks there; its algorithm lines when `lines`)."""
    ranks = ["gpu-a"] * 8 + ["gpu-b"] * 8
    ring = lambda S: 6.6e-6 + 28 * 1.0e-6 + 2 * 2.7e-6 + S * 30 / 16 / 19.5e9  # noqa: E731 (Ring LL, tuning.cc)
    times = lambda S: ring(S) if S < 2**20 else nvls_tree_time(S)  # noqa: E731
    inter = None
    if lines:
        inter = {S: algo_lines("all-reduce", 16, [S], *(("RING", "LL") if S < 2**20 else ("NVLS_TREE", "SIMPLE")))[S]
                 for S in BIG}
    return nccl_text("all-reduce", 16, sizes=BIG, hosts=ranks, times=times, interleave=inter)


def test_the_algorithm_lines_are_read_in_both_forms():
    text = tree_log(lines=True) + "h:1:1 [0] NCCL INFO 8589934592 Bytes -> Algo 5 proto 2 time 4.2\n"
    (t,) = parse_nccl_tests(text, allow_multi_node=True)
    assert t.ran(2**10) == ("RING", "LL") and t.ran(2**30) == ("NVLS_TREE", "SIMPLE")
    assert t.devices == ("NVIDIA H100 80GB HBM3",) * 16
    (t,) = parse_nccl_tests(two_node_text("all-gather"), allow_multi_node=True)
    assert t.ran(2**20) == ("RING", "SIMPLE")  # NCCL prints one rank's part: S/n bytes for all-gather
    assert parse_nccl_tests(tree_log(), allow_multi_node=True)[0].ran(2**20) is None


@pytest.mark.parametrize("lines", [True, False])
def test_a_tree_run_is_fitted_as_what_nccl_ran_and_stays_under_its_nic(lines):
    """Fitted with NCCL's rings (the old default) it wrote a NIC far faster than 25 GB/s; with the model
    NCCL ran — its algorithm lines, or else the machine's choice at each size — the NIC is what NVLS
    Tree's bwInter carried, 24 GB/s."""
    cal = nccl_log.calibrate_nccl_tests(tree_log(lines), nic=HDR)
    assert cal.inter_algo == "nvls-tree" and cal.machine_algos()["all-reduce"] == "hier"
    assert cal.inter.bw == pytest.approx(24e9, rel=0.01) and cal.inter.bw <= HDR.bw
    assert all(p.algo == "nvls-tree" and p.nbytes >= 2**20 for p in cal.inter_points)
    assert not cal.inter_fit.bad
    (note,) = cal.notes
    assert note.startswith("left out 17 multi-node point(s) of 8 B–512 KiB where NCCL ran ")
    assert ("RING LL (NCCL's log)" if lines else "ring-nodes LL (the machine's choice)") in note
    # the ring's closed form on the same points: 47.6 GB/s through a 25 GB/s NIC (what nccl-import wrote)
    ring = nccl_log.calibrate_nccl_tests(tree_log(lines), nic=LinkSpec("any", 0.0, 1e15), inter_algo="ring-nodes")
    assert ring.inter.bw > 1.8 * HDR.bw


def test_a_link_faster_than_its_hardware_is_refused():
    with pytest.raises(ValueError, match=r"^the fit would write the inter-node link at \d+\.\d GB/s per NIC, "
                                         r"faster than its hardware \(IB HDR 200, 25\.0 GB/s\), so NCCL did not run the model "
                                         r"fitted: .*NCCL_ALGO=Ring$"):
        nccl_log.calibrate_nccl_tests(tree_log(lines=True), nic=HDR, inter_algo="ring-nodes")
    # and a ring run on 46 GB/s NICs checked against a 25 GB/s NIC cannot be
    with pytest.raises(ValueError, match="faster than its hardware"):
        nccl_log.calibrate_nccl_tests(two_node_log(), nic=HDR)


def test_nccl_import_writes_the_tree_runs_nic_and_refuses_the_ring_one(tmp_path, capsys):
    src = tmp_path / "tree.txt"
    src.write_text(tree_log(lines=True))
    nic = tmp_path / "hdr.json"
    nic.write_text(json.dumps(calibrate.link_to_dict(HDR)))
    out = tmp_path / "link.json"
    assert run_cli(["nccl-import", str(src), "--nic", str(nic), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "inter-node fit (nvls-tree closed form, per GPU NIC)" in printed and "IB HDR 200, 25.0 GB/s" in printed
    assert json.loads(out.read_text())["bw"] == pytest.approx(24e9, rel=0.01)
    assert run_cli(["nccl-import", str(src), "--nic", str(nic), "--inter-algo", "ring"]) == 2
    assert "faster than its hardware (IB HDR 200, 25.0 GB/s)" in capsys.readouterr().err
