"""The calibration dialog: nccl-tests file -> link; measuring off the GUI thread; cancel."""

import threading
import time

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QColor  # noqa: E402

from app import theme  # noqa: E402
from app.classroom.calibration import CalibrationDialog  # noqa: E402
from simcore import mpi  # noqa: E402
from simcore.calibrate import MEASURED, Point, coefficients  # noqa: E402
from simcore.links import LinkSpec  # noqa: E402
from test_calibrate import ALPHA, BW, nccl_text  # noqa: E402


def fake_points(n=4, alpha=ALPHA, bw=BW):
    out = []
    for op, algo in (("all-reduce", "ring"), ("all-gather", "ring")):
        a, b = coefficients(op, algo, n)
        out += [Point(op, algo, n, float(S), a * alpha + b * S / bw) for S in (8, 1024, 2**20, 2**26)]
    return out


class FakeMeasure:
    """simcore.mpi.measure's signature; reports progress, then waits for cancel or `release`."""

    def __init__(self, block=True):
        self.block = block
        self.release = threading.Event()
        self.calls = []
        self.threads = []

    def __call__(self, n, sizes, ops=None, repeats=5, allow_root=False, progress=None, cancel=None):
        self.calls.append((n, list(sizes), ops, repeats))
        self.threads.append(threading.current_thread())
        progress(1, 10)
        deadline = time.monotonic() + 20
        while self.block and not self.release.is_set():
            if cancel.is_set():
                raise mpi.Cancelled("cancelled")
            if time.monotonic() > deadline:
                raise RuntimeError("the test never cancelled or released the fake measurement")
            time.sleep(0.01)
        progress(10, 10)
        return fake_points(n), {"library": "Fake MPI 1.0, test"}


@pytest.fixture
def dialog(qtbot):
    def make(**kw):
        dlg = CalibrationDialog(**kw)
        qtbot.addWidget(dlg)
        return dlg
    return make


def test_nccl_file_becomes_a_link(dialog, qtbot, tmp_path):
    path = tmp_path / "all_reduce_perf.txt"
    path.write_text(nccl_text("all-reduce", 8))
    dlg = dialog(measure_fn=FakeMeasure())
    assert dlg.link() is None and not dlg.use_button.isEnabled()
    assert dlg.open_nccl_file(str(path))
    link = dlg.link()
    assert isinstance(link, LinkSpec) and link.name == "all_reduce_perf"  # the file it came from
    assert link.alpha == pytest.approx(ALPHA, rel=0.01) and link.bw == pytest.approx(BW, rel=0.01)
    assert "all-reduce n=8" in dlg.status.text()
    assert "α = 4.2 µs" in dlg.result.text()
    dlg.name_edit.setText("our DGX")
    with qtbot.waitSignal(dlg.link_ready, timeout=2000) as sig:
        dlg.use_button.click()
    assert sig.args[0] == LinkSpec("our DGX", link.alpha, link.bw)


def test_bad_nccl_file_leaves_no_link(dialog, tmp_path):
    path = tmp_path / "junk.txt"
    path.write_text("not a table\n")
    dlg = dialog(measure_fn=FakeMeasure())
    assert not dlg.open_nccl_file(str(path))
    assert dlg.link() is None and not dlg.use_button.isEnabled()
    assert "no nccl-tests table" in dlg.status.text()
    assert not dlg.open_nccl_file(str(tmp_path / "missing.txt"))


def test_measurement_runs_off_the_gui_thread_and_gives_a_link(dialog, qtbot):
    fake = FakeMeasure(block=True)
    dlg = dialog(measure_fn=fake, sync=False)
    dlg.n_spin.setValue(4)
    dlg.sizes_edit.setText("1KiB..1MiB:x32")
    dlg.start_measurement()
    assert dlg.is_running() and dlg.worker.job("measure").running()
    assert not dlg.measure_button.isEnabled() and dlg.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: dlg.progress.value() == 1 and dlg.progress.maximum() == 10, timeout=5000)
    fake.release.set()
    qtbot.waitUntil(lambda: not dlg.is_running(), timeout=5000)
    assert fake.threads[0] is not threading.main_thread()
    assert fake.calls[0][:2] == (4, [1024, 32768, 2**20])
    link = dlg.link()
    assert link.name == MEASURED
    assert (link.alpha, link.bw) == (pytest.approx(ALPHA), pytest.approx(BW))
    assert dlg.progress.value() == dlg.progress.maximum()
    assert len(dlg._curves) == 2  # one dot series and one model curve per collective
    assert dlg.measure_button.isEnabled() and not dlg.cancel_button.isEnabled()


def test_cancel_leaves_no_thread_running(dialog, qtbot):
    fake = FakeMeasure(block=True)
    dlg = dialog(measure_fn=fake, sync=False)
    dlg.start_measurement()
    job = dlg.worker.job("measure")
    qtbot.waitUntil(lambda: dlg.progress.maximum() == 10, timeout=5000)
    dlg.cancel_button.click()
    qtbot.waitUntil(lambda: not dlg.is_running(), timeout=5000)
    assert job.finished and job.cancelled and not job.ok  # the measurement has returned
    assert dlg.link() is None
    assert "cancelled" in dlg.status.text()
    # and the dialog can measure again
    fake.release.set()
    dlg.start_measurement()
    qtbot.waitUntil(lambda: dlg.link() is not None, timeout=5000)
    assert not dlg.is_running() and dlg.worker.job("measure").ok


def test_closing_while_measuring_stops_the_thread(dialog, qtbot):
    fake = FakeMeasure(block=True)
    dlg = dialog(measure_fn=fake, sync=False)
    dlg.show()
    dlg.start_measurement()
    qtbot.waitUntil(lambda: dlg.progress.maximum() == 10, timeout=5000)
    job = dlg.worker.job("measure")
    dlg.reject()  # waits for the cancelled measurement to return
    assert job.finished and job.cancelled


def test_failure_is_shown(dialog, qtbot):
    def broken(**kw):
        raise mpi.MPIError("mpiexec exited with code 1")

    dlg = dialog(measure_fn=broken, sync=True)
    dlg.start_measurement()
    assert "Measurement failed: mpiexec exited with code 1" in dlg.status.text()
    assert dlg.link() is None and not dlg.is_running()
    dlg.sizes_edit.setText("lots")
    dlg.start_measurement()
    assert "cannot read a size" in dlg.status.text()


def test_plot_shows_points_and_model(dialog, qtbot):
    dlg = dialog(measure_fn=FakeMeasure(block=False), sync=True)
    dlg.resize(1100, 700)
    dlg.show()
    dlg.start_measurement()
    assert dlg.link() is not None
    qtbot.waitExposed(dlg)
    img = dlg.plot.grab().toImage()
    want = QColor(theme.palette().device_colors[0])
    hits = 0
    for y in range(0, img.height(), 2):
        for x in range(0, img.width(), 2):
            c = img.pixelColor(x, y)
            hits += abs(c.red() - want.red()) + abs(c.green() - want.green()) + abs(c.blue() - want.blue()) < 40
    assert hits > 50  # the first collective's dots and line are on screen, in its colour
    dlg.retranslate_ui()  # a language switch re-sets every text without losing the fit
    assert "α =" in dlg.result.text()


@pytest.mark.xdist_group("mpi")  # one MPI launch at a time (dev.py test runs pytest-xdist)
@pytest.mark.skipif(mpi.unavailable_reason() is not None, reason=f"MPI unavailable: {mpi.unavailable_reason()}")
def test_real_measurement(dialog, qtbot, monkeypatch):
    for k in mpi.ROOT_VARS:
        monkeypatch.setenv(k, "1")
    dlg = dialog(sync=False)
    assert dlg.measure_button.isEnabled()
    dlg.n_spin.setValue(2)
    dlg.sizes_edit.setText("64KiB..16MiB:x16")  # times grow above a loaded machine's noise (see test_mpi)
    dlg.repeats_spin.setValue(3)
    dlg.ops_combo.setCurrentIndex(dlg.ops_combo.findData("ring"))
    dlg.start_measurement()
    qtbot.waitUntil(lambda: not dlg.is_running(), timeout=60000)
    assert dlg.link() is not None, dlg.status.text()
    assert {(p.op, p.algo) for p in dlg.points()} == {("all-reduce", "ring"), ("all-gather", "ring"),
                                                    ("reduce-scatter", "ring")}
    assert np.all([p.seconds > 0 for p in dlg.points()])


# ---------------------------------------------------------------------------------------
# A two-node log: each link's line, its worst error, a warning, the file's name
# ---------------------------------------------------------------------------------------
from test_calibrate import (LOG_SIZES, TRUE_IB, TRUE_NVL, _cli_rows_and_summary,  # noqa: E402
                            bad_two_node_log, run_cli, two_node_log)


def _line_of(dlg, nodes):
    (key,) = [k for k in dlg._curves if k[3] == nodes]
    return key, dlg._curves[key][1]


def test_two_node_log_draws_each_links_fit(dialog, tmp_path, capsys):
    path = tmp_path / "dgx_pair.txt"
    path.write_text(two_node_log())
    dlg = dialog(measure_fn=FakeMeasure())
    dlg.name_edit.setText("an earlier import")
    assert dlg.open_nccl_file(str(path))
    cal = dlg._calibration
    assert cal.intra.alpha == pytest.approx(TRUE_NVL.alpha, rel=0.08) and cal.intra.bw == pytest.approx(TRUE_NVL.bw, rel=0.04)
    assert cal.inter.alpha == pytest.approx(TRUE_IB.alpha, rel=0.08) and cal.inter.bw == pytest.approx(TRUE_IB.bw, rel=0.04)
    # both lines carry the model's points over the measured range (read from the plot items)
    for nodes, f in ((1, cal.intra_fit), (2, cal.inter_fit)):
        (op, algo, n, k), line = _line_of(dlg, nodes)
        assert line.isVisible()
        xs, ys = line.getOriginalDataset()  # S and µs as set (getData is log10 in log mode)
        assert len(xs) == 64 and xs[0] == pytest.approx(LOG_SIZES[0]) and xs[-1] == pytest.approx(LOG_SIZES[-1])
        np.testing.assert_allclose(ys, f.predict(op, algo, n, xs, k) * 1e6, rtol=1e-12)
    # the label's worst error between nodes = the CLI's summary = the max over the CLI's rows
    assert run_cli(["nccl-import", str(path)]) == 0
    rows, summary = _cli_rows_and_summary(capsys.readouterr().out, "all-reduce on 2 nodes x 8 (ring-nodes model):")
    assert summary == max(abs(r) for r in rows)
    between = dlg.result.text().split("\n")[1]
    assert between.startswith("Between nodes (ring-nodes)") and f"worst error {summary:.1f}%" in between
    assert not dlg.warning.isVisibleTo(dlg) and dlg.warning.text() == ""
    # named after the file, not the earlier import
    intra, inter = dlg.links()
    assert dlg.name_edit.text() == "dgx_pair" and intra.name == "dgx_pair" and inter.name == "dgx_pair, between nodes"


def test_a_bad_two_node_fit_warns_and_the_next_file_renames(dialog, tmp_path):
    bad = tmp_path / "tree_run.txt"
    bad.write_text(bad_two_node_log())
    dlg = dialog(measure_fn=FakeMeasure())
    assert dlg.open_nccl_file(str(bad))
    f = dlg._calibration.inter_fit
    assert f.bad and dlg.warning.isVisibleTo(dlg)
    assert (f"the fit between nodes explains the data badly: its worst error {f.worst_rel * 100:.1f}% is above 25%"
            in dlg.warning.text())
    assert dlg.name_edit.text() == "tree_run"
    good = tmp_path / "all_reduce_perf.txt"
    good.write_text(nccl_text("all-reduce", 8))
    assert dlg.open_nccl_file(str(good))
    assert dlg.name_edit.text() == "all_reduce_perf" and dlg.links() == (dlg.link(), None)
    assert not dlg.warning.isVisibleTo(dlg) and len(dlg._curves) == 1


def test_only_two_node_runs_still_draw_the_inter_node_line(dialog, tmp_path):
    text = two_node_log()
    two_only = text[text.index("$ ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 16"):]
    path = tmp_path / "net_only.txt"
    path.write_text(two_only)
    dlg = dialog(measure_fn=FakeMeasure())
    assert dlg.open_nccl_file(str(path))
    (key,) = dlg._curves
    xs, ys = dlg._curves[key][1].getOriginalDataset()
    assert key[3] == 2 and len(xs) == 64 and np.all(np.isfinite(ys))
    assert "NVLink 4 assumed" in dlg.result.text() and "worst error" in dlg.result.text()
    assert dlg.use_button.isEnabled() and dlg.links()[1].name == "net_only, between nodes"


def test_use_gives_a_machine_that_runs_what_was_measured(dialog, qtbot, tmp_path, monkeypatch):
    from app import scenario_io
    from simcore.topology_presets import PRESETS

    monkeypatch.setattr(scenario_io, "remember_measured_machine", lambda *a, **k: None)
    monkeypatch.delitem(PRESETS, scenario_io.MEASURED_MACHINE, raising=False)
    path = tmp_path / "dgx_pair.txt"
    path.write_text(two_node_log(noise=0.0))
    dlg = dialog(measure_fn=FakeMeasure())
    assert dlg.open_nccl_file(str(path))
    with qtbot.waitSignal(dlg.machine_ready, timeout=2000) as sig:
        dlg.use_button.click()
    key, n = sig.args
    topo = PRESETS[key].topology(n)
    assert topo.choose("all-reduce", 2**16)[0] == "ring-nodes"  # not hierarchical
    from test_calibrate import two_node_ring_time
    assert PRESETS[key].allreduce_time(n, 2**16) == pytest.approx(two_node_ring_time("all-reduce", 2**16,
                                                                                      inter=TRUE_IB), rel=0.02)
